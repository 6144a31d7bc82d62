"""Batch queries: many PPR / context / suggestion / path queries in one call, across C++ threads.

Every function here takes a list of queries and returns a list of results **in input order**,
each identical (same nodes, same scores to the bit, same order and tie-breaking) to what the
one-by-one call returns: the C++ core runs exactly the single-query code for each query, on
``threads`` threads with the GIL released, one query at a time per thread, each thread with its
own workspace. The Python work around each query (resolving ids, full-text search for questions,
building the result objects) stays in the calling thread.

``threads`` defaults to ``os.cpu_count()``. Inputs are validated before any work starts, so a bad
query raises (naming its position) and nothing is computed.

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> from conceptwalk.batch import graph_context_batch, personalized_pagerank_batch
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")])
>>> rs = personalized_pagerank_batch(g, [{"a": 1.0}, {"d": 1.0, "b": 0.5}], threads=2)
>>> rs[0].ids == g.personalized_pagerank({"a": 1.0}).ids
True
>>> ctx = graph_context_batch(g, [{"concepts": ["a"]}, {"concepts": ["b"]}], k=2,
...                           caller=Caller.all_access())
>>> [[r.id for r in c.results] for c in ctx]
[['c', 'b'], ['c', 'a']]
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from . import _core
from .errors import InputError
from .graph import LinkGraph, Ranking, Visible
from .tools import (
    ContextResult,
    PathResult,
    SearchFn,
    SuggestResult,
    _check_caller,
    _check_k,
    _context_seeds,
    _fill_context,
    _path_result,
    _source_graph,
    _suggestion_items,
    _type_filter,
)
from .visibility import Caller

__all__ = [
    "default_threads",
    "graph_context_batch",
    "graph_path_batch",
    "link_suggest_batch",
    "personalized_pagerank_batch",
]


def default_threads() -> int:
    """The default thread count: ``os.cpu_count()`` (1 when unknown)."""
    return os.cpu_count() or 1


def _threads(threads: int | None) -> int:
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive integer or None, got {threads!r}")
    return threads


def _list(queries: Any, name: str) -> list[Any]:
    if isinstance(queries, (str, bytes, Mapping)):
        raise InputError(f"{name} must be a list of queries, not a single query")
    try:
        return list(queries)
    except TypeError:
        raise InputError(f"{name} must be an iterable of queries, got {type(queries).__name__}") from None


def _ptr(lengths: list[int]) -> np.ndarray[Any, Any]:
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=ptr[1:])
    return ptr


# --------------------------------------------------------------------------- PPR
def personalized_pagerank_batch(graph: LinkGraph, seeds: Iterable[Mapping[str, float]], *,
                                restart: float = 0.25, eps: float = 1e-4, k: int | None = None,
                                visible: Visible = None, max_pushes: int | None = None,
                                threads: int | None = None) -> list[Ranking]:
    """:meth:`LinkGraph.personalized_pagerank` for each seed mapping, in input order.

    Parameters are those of the single call (shared by every query) plus ``threads``.
    """
    if not isinstance(graph, LinkGraph):
        raise InputError(f"graph must be a LinkGraph, got {type(graph).__name__}")
    nt = _threads(threads)
    LinkGraph._check_ppr_params(restart, eps)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InputError(f"k must be a positive integer or None, got {k!r}")
    if max_pushes is not None and (isinstance(max_pushes, bool) or not isinstance(max_pushes, int) or max_pushes < 1):
        raise InputError(f"max_pushes must be a positive integer or None, got {max_pushes!r}")
    queries = _list(seeds, "seeds")
    vm = graph.visibility(visible)
    idx_parts, w_parts = [], []
    for i, s in enumerate(queries):
        try:
            idx, w = graph._seed_arrays(s, vm)
        except InputError as exc:
            raise type(exc)(f"seeds[{i}]: {exc}") from None
        idx_parts.append(idx)
        w_parts.append(w)
    if not queries:
        return []
    ptr = _ptr([a.shape[0] for a in idx_parts])
    out_ptr, nodes, scores, residual, pushes, visits, truncated, used_eps = _core.ppr_batch(
        graph.core, ptr, np.concatenate(idx_parts), np.concatenate(w_parts), float(restart),
        float(eps), k or 0, max_pushes or 0, nt, vm)
    degrees = graph.degrees if vm is None else vm.visible_degrees
    op = out_ptr.tolist()
    res, eps_l, pu, vi, tr = residual.tolist(), used_eps.tolist(), pushes.tolist(), visits.tolist(), truncated.tolist()
    return [Ranking(graph, nodes[op[i]:op[i + 1]], scores[op[i]:op[i + 1]], res[i], eps_l[i], pu[i], vi[i],
                    bool(tr[i]), False, degrees) for i in range(len(queries))]


# --------------------------------------------------------------------------- graph_context
def _context_query(q: Any, i: int) -> tuple[str | None, list[str]]:
    """A context query: a question string, or a mapping with ``question`` and/or ``concepts``."""
    if q is None or isinstance(q, str):
        return q, []
    if isinstance(q, Mapping):
        unknown = set(q) - {"question", "concepts"}
        if unknown:
            raise InputError(f"queries[{i}]: unknown keys {sorted(unknown)}; expected 'question', 'concepts'")
        question = q.get("question")
        concepts = q.get("concepts", ())
    elif isinstance(q, tuple) and len(q) == 2:
        question, concepts = q
    else:
        raise InputError(f"queries[{i}]: expected a question string, a dict with 'question'/'concepts' "
                         f"or a (question, concepts) tuple, got {type(q).__name__}")
    if question is not None and not isinstance(question, str):
        raise InputError(f"queries[{i}]: question must be a string or None, got {type(question).__name__}")
    if isinstance(concepts, str):
        raise InputError(f"queries[{i}]: concepts must be a list of ids, not a single string")
    return question, list(concepts or ())


def graph_context_batch(source: LinkGraph | Any, queries: Iterable[Any], *, caller: Caller,
                        k: int = 20, restart: float = 0.25, eps: float = 1e-4,
                        node_types: Iterable[str] | None = None, n_hits: int = 10,
                        search: SearchFn | None = None, threads: int | None = None) -> list[ContextResult]:
    """:func:`conceptwalk.graph_context` for many queries, in input order.

    Each query is a question string, a ``{"question": ..., "concepts": [...]}`` mapping or a
    ``(question, concepts)`` tuple. Full-text search (for questions) runs in the calling thread;
    PPR, the top-k selection and the hop counts of every query run in C++ across ``threads``.
    Each result's ``to_dict()`` equals the one-by-one call's; ``elapsed_ms`` is the batch's wall
    time divided by the number of queries.
    """
    t0 = time.perf_counter()
    caller = _check_caller(caller)
    _check_k(k)
    _check_k(n_hits, "n_hits")
    LinkGraph._check_ppr_params(restart, eps)
    nt = _threads(threads)
    qs = [_context_query(q, i) for i, q in enumerate(_list(queries, "queries"))]
    g, kb = _source_graph(source)
    vm = caller.visibility(g)
    keep_arr = _type_filter(g, node_types)
    results: list[ContextResult] = []
    run: list[int] = []  # positions that need the core
    seed_parts: list[np.ndarray[Any, Any]] = []
    w_parts: list[np.ndarray[Any, Any]] = []
    # resolve every id before any search or work
    concept_lists = [[g.index(c, visible=vm, argument="concept") for c in concepts] for _, concepts in qs]
    for i, (question, _) in enumerate(qs):
        result, seed_nodes, seed_w = _context_seeds(g, kb, search, question, concept_lists[i], n_hits,
                                                    vm, restart, eps, k)
        results.append(result)
        if seed_nodes is not None and seed_w is not None:
            seed_parts.append(seed_nodes)
            w_parts.append(seed_w)
            run.append(i)
    if run:
        ptr = _ptr([a.shape[0] for a in seed_parts])
        out_ptr, nodes, scores, hops, via, residual, pushes = _core.context_batch(
            g.core, ptr, np.concatenate(seed_parts), np.concatenate(w_parts), float(restart),
            float(eps), k, None if keep_arr is None else g.node_type_codes, keep_arr, nt, vm)
        op = out_ptr.tolist()
        nl, sl, hl, vl = nodes.tolist(), scores.tolist(), hops.tolist(), via.tolist()
        res_l, pu_l = residual.tolist(), pushes.tolist()
        for j, i in enumerate(run):
            a, b = op[j], op[j + 1]
            _fill_context(g, results[i], nl[a:b], sl[a:b], hl[a:b], vl[a:b], float(res_l[j]),
                          int(pu_l[j]), keep_arr is not None)
    per = (time.perf_counter() - t0) * 1e3 / max(len(results), 1)
    for r in results:
        r.elapsed_ms = per
    return results


# --------------------------------------------------------------------------- link_suggest
def link_suggest_batch(source: LinkGraph | Any, concepts: Iterable[str], *, caller: Caller,
                       k: int = 10, min_shared: int = 2, threads: int | None = None) -> list[SuggestResult]:
    """:func:`conceptwalk.link_suggest` for many concepts, in input order."""
    t0 = time.perf_counter()
    caller = _check_caller(caller)
    _check_k(k)
    if isinstance(min_shared, bool) or not isinstance(min_shared, int) or min_shared < 1:
        raise InputError(f"min_shared must be an integer >= 1, got {min_shared!r}")
    nt = _threads(threads)
    names_in = _list(concepts, "concepts")
    g, _ = _source_graph(source)
    vm = caller.visibility(g)
    idx = np.array([g.index(c, visible=vm, argument="concept") for c in names_in], dtype=np.int32)
    if not names_in:
        return []
    out_ptr, targets, scores, sptr, shared, cand = _core.suggest_batch(g.core, idx, min_shared, k, nt, vm)
    op, tl, sl, sp, sh = out_ptr.tolist(), targets.tolist(), scores.tolist(), sptr.tolist(), shared.tolist()
    ca = cand.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(names_in)
    out = [SuggestResult(concept, _suggestion_items(g, tl, sl, sp, sh, op[i], op[i + 1]), int(ca[i]),
                         min_shared, per)
           for i, concept in enumerate(names_in)]
    return out


# --------------------------------------------------------------------------- graph_path
def graph_path_batch(source: LinkGraph | Any, pairs: Iterable[Sequence[str]], *, caller: Caller,
                     threads: int | None = None) -> list[PathResult]:
    """:func:`conceptwalk.graph_path` for many ``(a, b)`` pairs, in input order."""
    t0 = time.perf_counter()
    caller = _check_caller(caller)
    nt = _threads(threads)
    plist = _list(pairs, "pairs")
    g, _ = _source_graph(source)
    vm = caller.visibility(g)
    src = np.empty(len(plist), dtype=np.int32)
    dst = np.empty(len(plist), dtype=np.int32)
    for i, p in enumerate(plist):
        if isinstance(p, str) or not isinstance(p, Sequence) or len(p) != 2:
            raise InputError(f"pairs[{i}]: expected an (a, b) pair of ids, got {p!r}")
        src[i] = g.index(p[0], visible=vm, argument="source")
        dst[i] = g.index(p[1], visible=vm, argument="target")
    if not plist:
        return []
    out_ptr, paths = _core.path_batch(g.core, src, dst, nt, vm)
    op, pl = out_ptr.tolist(), paths.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(plist)
    out = [_path_result(g, a, b, pl[op[i]:op[i + 1]], per) for i, (a, b) in enumerate(plist)]
    return out

