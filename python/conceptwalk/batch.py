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
    ContextItem,
    ContextResult,
    ContextSeed,
    PathResult,
    PathStep,
    SearchFn,
    SuggestionItem,
    SuggestResult,
    _check_caller,
    _check_k,
    _node_info,
    _search_hits,
    _source_graph,
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
    node_type_arr = keep_arr = None
    if node_types is not None:
        if isinstance(node_types, str):
            raise InputError("node_types must be a list of type names, not a single string")
        wanted = set(node_types)
        keep_arr = np.array([t in wanted for t in g.node_type_names] + [False], dtype=bool)
        codes = g.node_type_codes
        node_type_arr = np.where(codes < 0, len(g.node_type_names), codes).astype(np.int32)
    results: list[ContextResult] = []
    run: list[int] = []  # positions that need the core
    seed_parts: list[np.ndarray[Any, Any]] = []
    w_parts: list[np.ndarray[Any, Any]] = []
    concept_lists = []
    for i, (question, concepts) in enumerate(qs):  # resolve every id before any search or work
        concept_lists.append([g.index(c, visible=vm, argument="concept") for c in concepts])
    for i, (question, _) in enumerate(qs):
        weights: dict[int, float] = {}
        seeds: list[ContextSeed] = []
        if question is not None and question.strip():
            for rank, idx in enumerate(_search_hits(kb, search, question, n_hits, g, vm), 1):
                weights[idx] = weights.get(idx, 0.0) + 1.0 / rank
                nid, ntype, title = _node_info(g, idx)
                seeds.append(ContextSeed(nid, ntype, title, 1.0 / rank, "search", rank))
        for idx in dict.fromkeys(concept_lists[i]):
            weights[idx] = weights.get(idx, 0.0) + 1.0
            nid, ntype, title = _node_info(g, idx)
            seeds.append(ContextSeed(nid, ntype, title, 1.0, "concept"))
        result = ContextResult(question, seeds, [], float(restart), float(eps), k)
        results.append(result)
        if not weights:
            if question is None or not question.strip():
                result.reason = "no question and no concepts were given"
            else:
                result.reason = "the question matched no visible node and no concepts were given"
            continue
        seed_nodes = np.fromiter(sorted(weights), dtype=np.int32, count=len(weights))
        seed_parts.append(seed_nodes)
        w_parts.append(np.array([weights[j] for j in seed_nodes.tolist()], dtype=np.float64))
        run.append(i)
    if run:
        ptr = _ptr([a.shape[0] for a in seed_parts])
        out_ptr, nodes, scores, hops, via, residual, pushes = _core.context_batch(
            g.core, ptr, np.concatenate(seed_parts), np.concatenate(w_parts), float(restart),
            float(eps), k, node_type_arr, keep_arr, nt, vm)
        ids, names, titles = g.ids, g.node_type_names, g.titles
        op = out_ptr.tolist()
        nl, sl, hl, vl = nodes.tolist(), scores.tolist(), hops.tolist(), via.tolist()
        cl = g.node_type_codes[nodes].tolist()
        res_l, pu_l = residual.tolist(), pushes.tolist()
        for j, i in enumerate(run):
            result = results[i]
            result.residual = float(res_l[j])
            result.pushes = int(pu_l[j])
            a, b = op[j], op[j + 1]
            if b > a:
                result.results = [ContextItem(ids[v], names[c], titles[v], s, h, ids[w])
                                  for v, c, s, h, w in zip(nl[a:b], cl[a:b], sl[a:b], hl[a:b], vl[a:b])]
            else:
                result.reason = "the seeds have no visible neighbours" if node_types is None else \
                    "no visible node of the requested types is reached from the seeds"
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
    ids, titles, names = g.ids, g.titles, g.node_type_names
    op, tl, sl, sp, sh = out_ptr.tolist(), targets.tolist(), scores.tolist(), sptr.tolist(), shared.tolist()
    cl = g.node_type_codes[targets].tolist()
    ca = cand.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(names_in)
    out = []
    for i, concept in enumerate(names_in):
        items = [SuggestionItem(ids[tl[j]], names[cl[j]], titles[tl[j]], sl[j],
                                tuple((ids[z], titles[z]) for z in sh[sp[j]:sp[j + 1]]))
                 for j in range(op[i], op[i + 1])]
        out.append(SuggestResult(concept, items, int(ca[i]), min_shared, per))
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
    tn = g.edge_type_names
    per = (time.perf_counter() - t0) * 1e3 / len(plist)
    out = []
    for i, (a, b) in enumerate(plist):
        p = pl[op[i]:op[i + 1]]
        nodes = [_node_info(g, j) for j in p]
        steps = []
        for x, y in zip(p, p[1:]):
            edges = []
            for e in g.edges_between(x, y):
                fwd = int(g.edge_src[e]) == x
                edges.append((tn[int(g.edge_type_codes[e])], "forward" if fwd else "backward"))
            steps.append(PathStep(g.ids[x], g.ids[y], tuple(sorted(edges))))
        out.append(PathResult(a, b, nodes, steps, per))
    return out

