"""``graph_context``: the nodes around a question, ranked by personalized PageRank, one query or
many (:func:`graph_context_batch`, across C++ threads, results identical to one-by-one calls).

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> g = LinkGraph.from_edges(
...     [("auth", "tokens", "RELATED_TO"), ("tokens", "jwt.py", "IMPLEMENTED_BY"),
...      ("auth", "login", "RELATED_TO"), ("login", "jwt.py", "RELATED_TO")],
...     nodes=[{"id": "auth", "type": "CONCEPT", "title": "Authentication"}])
>>> ctx = graph_context(g, concepts=["auth"], k=3, caller=Caller.all_access())
>>> [(r.id, r.hops, r.via) for r in ctx.results]
[('login', 1, 'auth'), ('tokens', 1, 'auth'), ('jwt.py', 2, 'auth')]
>>> batch = graph_context_batch(g, [{"concepts": ["auth"]}, {"concepts": ["jwt.py"]}], k=2,
...                             caller=Caller.all_access())
>>> [[r.id for r in c.results] for c in batch]
[['login', 'tokens'], ['login', 'tokens']]
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..graph import Caller, LinkGraph, VisibilityMask
from ..graph.context import context_batch, context_core
from ..graph.checks import check_count, check_ppr_params, check_threads, query_list
from .common import GraphSource, SearchFn, check_caller, offsets, source_graph, source_search

__all__ = ["ContextItem", "ContextResult", "ContextSeed", "graph_context", "graph_context_batch",
           "parse_context_query"]


@dataclass(slots=True)
class ContextSeed:
    """A seed of the walk: a full-text hit (weight 1/rank) or a given concept (weight 1)."""

    id: str
    type: str
    title: str | None
    weight: float
    source: str  # "search" or "concept"
    rank: int | None = None  # 1-based rank among the visible search hits

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "type": self.type, "title": self.title,
                             "weight": self.weight, "source": self.source}
        if self.rank is not None:
            d["rank"] = self.rank
        return d


@dataclass(slots=True)
class ContextItem:
    """A node of the context: PPR score, hop count from the nearest seed and that seed."""

    id: str
    type: str
    title: str | None
    score: float
    hops: int
    via: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title, "score": self.score,
                "hops": self.hops, "via": self.via}


@dataclass
class ContextResult:
    """What :func:`graph_context` returns. ``reason`` explains an empty result."""

    question: str | None
    seeds: list[ContextSeed]
    results: list[ContextItem]
    restart: float
    eps: float
    k: int
    residual: float = 0.0
    pushes: int = 0
    reason: str | None = None
    elapsed_ms: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "question": self.question,
            "seeds": [s.to_dict() for s in self.seeds],
            "results": [r.to_dict() for r in self.results],
            "params": {"restart": self.restart, "eps": self.eps, "k": self.k},
            "residual": self.residual,
            "pushes": self.pushes,
        }
        if self.reason is not None:
            d["reason"] = self.reason
        return d

    def __str__(self) -> str:
        lines = [f"context for {self.question!r}" if self.question else "context"]
        if self.reason:
            lines.append(f"  (empty: {self.reason})")
        if self.seeds:
            lines.append("  seeds: " + ", ".join(
                f"{s.id} ({s.source}{'' if s.rank is None else ' #' + str(s.rank)}, w={s.weight:.3g})"
                for s in self.seeds))
        for i, r in enumerate(self.results, 1):
            title = f"  {r.title}" if r.title else ""
            lines.append(f"  {i:>3}. {r.score:.5f}  {r.id} [{r.type}]{title}  "
                         f"({r.hops} hop{'s' if r.hops != 1 else ''} via {r.via})")
        return "\n".join(lines)


def _search_hits(kb: Any, search: SearchFn | None, question: str, n_hits: int,
                 g: LinkGraph, vm: VisibilityMask | None) -> list[int]:
    """Indices of the top ``n_hits`` visible hits, in the backend's rank order."""
    fn: SearchFn | None = search if search is not None else source_search(kb)
    if fn is None:
        raise InputError("question: searching text needs a knowledge base or search=callable; "
                         "pass concepts= to seed a LinkGraph directly")
    mask = None if vm is None else vm.mask
    want = n_hits
    for _ in range(4):  # ask for more when hidden or unknown hits were dropped
        raw = list(fn(question, want))
        hits: list[int] = []
        seen: set[int] = set()
        for h in raw:
            hid = h[0] if isinstance(h, (tuple, list)) else (h["id"] if isinstance(h, dict) else h)
            idx = g.id_index.get(hid) if isinstance(hid, str) else None
            if idx is None or idx in seen or (mask is not None and not mask[idx]):
                continue
            seen.add(idx)
            hits.append(idx)
            if len(hits) == n_hits:
                return hits
        if len(raw) < want:
            return hits
        want *= 4
    return hits


def graph_context(source: LinkGraph | GraphSource, question: str | None = None, *,
                  concepts: Iterable[str] = (), k: int = 20, caller: Caller,
                  restart: float = 0.25, eps: float = 1e-4,
                  node_types: Iterable[str] | None = None, n_hits: int = 10,
                  search: SearchFn | None = None) -> ContextResult:
    """The nodes around a question, ranked by personalized PageRank over what ``caller`` sees.

    Seeds are the question's top ``n_hits`` full-text hits among visible nodes, weighted by
    reciprocal rank (1/rank; the backend's own scores are never mixed in), plus the given
    ``concepts`` (weight 1 each; a concept that is also a hit gets both weights). Seeds are
    reported separately and excluded from ``results``; each result carries its score, its hop
    count from the nearest seed and the seed it is reached through (smallest id on ties).

    Parameters
    ----------
    source : LinkGraph or knowledge base
        A knowledge base supplies ``search``; a bare graph needs ``concepts`` or ``search=``.
    question : str, optional
    concepts : iterable of str
        Concept ids. Unknown and hidden ids raise the same :class:`NotFoundError`.
    k : int
        How many results.
    caller : Caller
        Whose visibility applies (required: there is no implicit all-access).
    restart, eps : float
        PPR restart probability and push threshold.
    node_types : iterable of str, optional
        Keep only results of these node types.
    n_hits : int
        Full-text hits used as seeds.

    Notes
    -----
    Deterministic: same inputs, same output on every run and thread (ties by id). A question with
    no visible hit and no concepts gives an empty result whose ``reason`` says why.
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    n_hits = check_count(n_hits, "n_hits")
    restart, eps = check_ppr_params(restart, eps)
    if question is not None and not isinstance(question, str):
        raise InputError(f"question must be a string or None, got {type(question).__name__}")
    if isinstance(concepts, str):
        raise InputError("concepts must be a list of ids, not a single string")
    g, kb = source_graph(source)
    vm = caller.visibility(g)
    concept_idx = [g.index(c, visible=vm, argument="concept") for c in concepts]
    type_filter = _type_filter(g, node_types)
    result, seed_nodes, seed_w = _context_seeds(g, kb, search, question, concept_idx, n_hits, vm,
                                                restart, eps, k)
    if seed_nodes is not None and seed_w is not None:
        # One call does the whole query in C++ with the GIL released: PPR, drop the seeds, the
        # type filter, top k, then hop counts and reached-through seeds of those k.
        r = context_core(g, seed_nodes, seed_w, restart=restart, eps=eps, k=k, keep_types=type_filter,
                         visible=vm)
        _fill_context(g, result, r.nodes.tolist(), r.scores.tolist(), r.hops.tolist(), r.via.tolist(),
                      r.residual, r.pushes, type_filter is not None)
    result.elapsed_ms = (time.perf_counter() - t0) * 1e3
    return result


def _type_filter(g: LinkGraph, node_types: Iterable[str] | None) -> npt.NDArray[np.bool_] | None:
    """Per node-type code, whether results of that type are kept (None: no filter)."""
    if node_types is None:
        return None
    if isinstance(node_types, str):
        raise InputError("node_types must be a list of type names, not a single string")
    wanted = set(node_types)
    return np.array([t in wanted for t in g.node_type_names], dtype=bool)


def _context_seeds(g: LinkGraph, kb: Any, search: SearchFn | None, question: str | None,
                   concept_idx: list[int], n_hits: int, vm: VisibilityMask | None,
                   restart: float, eps: float, k: int
                   ) -> tuple[ContextResult, np.ndarray[Any, Any] | None, np.ndarray[Any, Any] | None]:
    """The seeds of one context query (hits weighted 1/rank, concepts 1) and its result shell;
    the seed arrays are None when there is nothing to seed (the result then says why)."""
    weights: dict[int, float] = {}
    seeds: list[ContextSeed] = []
    if question is not None and question.strip():
        for rank, idx in enumerate(_search_hits(kb, search, question, n_hits, g, vm), 1):
            weights[idx] = weights.get(idx, 0.0) + 1.0 / rank
            nid, ntype, title = g.node_at(idx)
            seeds.append(ContextSeed(nid, ntype, title, 1.0 / rank, "search", rank))
    for idx in dict.fromkeys(concept_idx):
        weights[idx] = weights.get(idx, 0.0) + 1.0
        nid, ntype, title = g.node_at(idx)
        seeds.append(ContextSeed(nid, ntype, title, 1.0, "concept"))
    result = ContextResult(question, seeds, [], float(restart), float(eps), k)
    if not weights:
        if question is None or not question.strip():
            result.reason = "no question and no concepts were given"
        else:
            result.reason = "the question matched no visible node and no concepts were given"
        return result, None, None
    seed_nodes = np.fromiter(sorted(weights), dtype=np.int32, count=len(weights))
    seed_w = np.array([weights[i] for i in seed_nodes.tolist()], dtype=np.float64)
    return result, seed_nodes, seed_w


def _fill_context(g: LinkGraph, result: ContextResult, top: list[int], scores: list[float],
                  hops: list[int], via: list[int], residual: float, pushes: int, typed: bool) -> None:
    """Put one query's core output (node indices, scores, hops, via seeds) into ``result``."""
    result.residual = residual
    result.pushes = pushes
    if top:
        ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes_list
        result.results = [ContextItem(ids[v], names[codes[v]], titles[v], s, h, ids[w])
                          for v, s, h, w in zip(top, scores, hops, via)]
    else:
        result.reason = "no visible node of the requested types is reached from the seeds" if typed \
            else "the seeds have no visible neighbours"


def parse_context_query(q: Any, i: int) -> tuple[str | None, list[str]]:
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


def graph_context_batch(source: LinkGraph | GraphSource, queries: Iterable[Any], *, caller: Caller,
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
    caller = check_caller(caller)
    k = check_count(k)
    n_hits = check_count(n_hits, "n_hits")
    restart, eps = check_ppr_params(restart, eps)
    nt = check_threads(threads)
    qs = [parse_context_query(q, i) for i, q in enumerate(query_list(queries, "queries"))]
    g, kb = source_graph(source)
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
        ptr = offsets([a.shape[0] for a in seed_parts])
        b = context_batch(g, ptr, np.concatenate(seed_parts), np.concatenate(w_parts), restart=restart,
                          eps=eps, k=k, keep_types=keep_arr, threads=nt, visible=vm)
        op = b.ptr.tolist()
        nl, sl, hl, vl = b.nodes.tolist(), b.scores.tolist(), b.hops.tolist(), b.via.tolist()
        res_l, pu_l = b.residual.tolist(), b.pushes.tolist()
        for j, i in enumerate(run):
            lo, hi = op[j], op[j + 1]
            _fill_context(g, results[i], nl[lo:hi], sl[lo:hi], hl[lo:hi], vl[lo:hi], res_l[j],
                          pu_l[j], keep_arr is not None)
    per = (time.perf_counter() - t0) * 1e3 / max(len(results), 1)
    for r in results:
        r.elapsed_ms = per
    return results
