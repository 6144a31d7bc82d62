"""The three graph tools: ``graph_context``, ``link_suggest`` and ``graph_path``.

Each works over a :class:`~conceptwalk.LinkGraph` or a knowledge base (anything with ``graph()``
and ``search(text, k)``, such as :class:`conceptwalk.store.KnowledgeBase`), on behalf of a
:class:`~conceptwalk.Caller`, and returns a typed result with ``to_dict()`` (JSON-ready,
deterministic: no timings inside) and a readable ``str()``.

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
>>> [s.id for s in link_suggest(g, "auth", caller=Caller.all_access()).suggestions]
['jwt.py']
>>> graph_path(g, "auth", "jwt.py", caller=Caller.all_access()).ids
['auth', 'login', 'jwt.py']
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from . import _core
from .errors import InputError, NotFoundError
from .graph import LinkGraph
from .visibility import Caller

__all__ = [
    "ContextItem",
    "ContextResult",
    "ContextSeed",
    "PathResult",
    "PathStep",
    "SuggestResult",
    "SuggestionItem",
    "graph_context",
    "graph_path",
    "link_suggest",
]

SearchFn = Callable[[str, int], Sequence[Any]]


@runtime_checkable
class _KnowledgeBaseLike(Protocol):
    def graph(self) -> LinkGraph: ...

    def search(self, text: str, k: int = 10) -> Sequence[Any]: ...


def _source_graph(source: Any) -> tuple[LinkGraph, Any]:
    if isinstance(source, LinkGraph):
        return source, None
    if isinstance(source, _KnowledgeBaseLike):
        return source.graph(), source
    raise InputError(f"source must be a LinkGraph or a knowledge base, got {type(source).__name__}")


def _check_caller(caller: Any) -> Caller:
    if not isinstance(caller, Caller):
        raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
    return caller


def _check_k(k: Any, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"{name} must be a positive integer, got {k!r}")
    return k


def _node_info(g: LinkGraph, idx: int) -> tuple[str, str, str | None]:
    return g.ids[idx], g.node_type_names[int(g.node_type_codes[idx])], g.titles[idx]


# --------------------------------------------------------------------------- graph_context
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
                 g: LinkGraph, vm: _core.VisibilityMask | None) -> list[int]:
    """Indices of the top ``n_hits`` visible hits, in the backend's rank order."""
    fn: SearchFn | None = search if search is not None else (kb.search if kb is not None else None)
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
            idx = g._index.get(hid) if isinstance(hid, str) else None
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


def graph_context(source: LinkGraph | Any, question: str | None = None, *,
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
    caller = _check_caller(caller)
    _check_k(k)
    _check_k(n_hits, "n_hits")
    LinkGraph._check_ppr_params(restart, eps)
    if question is not None and not isinstance(question, str):
        raise InputError(f"question must be a string or None, got {type(question).__name__}")
    if isinstance(concepts, str):
        raise InputError("concepts must be a list of ids, not a single string")
    g, kb = _source_graph(source)
    vm = caller.visibility(g)
    concept_idx = [g.index(c, visible=vm, argument="concept") for c in concepts]
    type_filter = _type_filter(g, node_types)
    result, seed_nodes, seed_w = _context_seeds(g, kb, search, question, concept_idx, n_hits, vm,
                                                restart, eps, k)
    if seed_nodes is not None and seed_w is not None:
        # One call does the whole query in C++ with the GIL released: PPR, drop the seeds, the
        # type filter, top k, then hop counts and reached-through seeds of those k.
        _, top, top_scores, hops, via, residual, pushes = _core.context_batch(
            g.core, np.array([0, seed_nodes.shape[0]], dtype=np.int64), seed_nodes, seed_w,
            float(restart), float(eps), k,
            None if type_filter is None else g.node_type_codes, type_filter, 1, vm)
        _fill_context(g, result, top.tolist(), top_scores.tolist(), hops.tolist(), via.tolist(),
                      float(residual[0]), int(pushes[0]), type_filter is not None)
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
                   concept_idx: list[int], n_hits: int, vm: _core.VisibilityMask | None,
                   restart: float, eps: float, k: int
                   ) -> tuple[ContextResult, np.ndarray[Any, Any] | None, np.ndarray[Any, Any] | None]:
    """The seeds of one context query (hits weighted 1/rank, concepts 1) and its result shell;
    the seed arrays are None when there is nothing to seed (the result then says why)."""
    weights: dict[int, float] = {}
    seeds: list[ContextSeed] = []
    if question is not None and question.strip():
        for rank, idx in enumerate(_search_hits(kb, search, question, n_hits, g, vm), 1):
            weights[idx] = weights.get(idx, 0.0) + 1.0 / rank
            nid, ntype, title = _node_info(g, idx)
            seeds.append(ContextSeed(nid, ntype, title, 1.0 / rank, "search", rank))
    for idx in dict.fromkeys(concept_idx):
        weights[idx] = weights.get(idx, 0.0) + 1.0
        nid, ntype, title = _node_info(g, idx)
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
        ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes
        result.results = [ContextItem(ids[v], names[int(codes[v])], titles[v], s, h, ids[w])
                          for v, s, h, w in zip(top, scores, hops, via)]
    else:
        result.reason = "no visible node of the requested types is reached from the seeds" if typed \
            else "the seeds have no visible neighbours"


# --------------------------------------------------------------------------- link_suggest
@dataclass(slots=True)
class SuggestionItem:
    """A suggested link from the concept to ``id``, with the shared neighbours that support it."""

    id: str
    type: str
    title: str | None
    score: float
    shared: tuple[tuple[str, str | None], ...]  # (id, title), ids ascending

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title, "score": self.score,
                "shared": [{"id": i, "title": t} for i, t in self.shared]}


@dataclass
class SuggestResult:
    concept: str
    suggestions: list[SuggestionItem]
    candidates: int
    min_shared: int
    elapsed_ms: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"concept": self.concept, "suggestions": [s.to_dict() for s in self.suggestions],
                "candidates": self.candidates, "minShared": self.min_shared}

    def __str__(self) -> str:
        lines = [f"link suggestions for {self.concept} ({self.candidates} candidates with "
                 f">= {self.min_shared} shared neighbours)"]
        if not self.suggestions:
            lines.append("  (none)")
        for i, s in enumerate(self.suggestions, 1):
            shared = ", ".join(sid for sid, _ in s.shared[:6]) + (" ..." if len(s.shared) > 6 else "")
            lines.append(f"  {i:>3}. {s.score:.4f}  {s.id} [{s.type}]  shared: {shared}")
        return "\n".join(lines)


def link_suggest(source: LinkGraph | Any, concept: str, *, k: int = 10, caller: Caller,
                 min_shared: int = 2) -> SuggestResult:
    """Missing links for ``concept`` by resource allocation over what ``caller`` sees.

    ``score = sum over shared neighbours z of 1/deg(z)`` (visible degrees); candidates need at
    least ``min_shared`` shared neighbours and are not already linked. Ordered by score
    descending, then id; each with its shared neighbours (ids and titles, ids ascending).
    """
    t0 = time.perf_counter()
    caller = _check_caller(caller)
    _check_k(k)
    if isinstance(min_shared, bool) or not isinstance(min_shared, int) or min_shared < 1:
        raise InputError(f"min_shared must be an integer >= 1, got {min_shared!r}")
    g, _ = _source_graph(source)
    vm = caller.visibility(g)
    a = g.index(concept, visible=vm, argument="concept")
    targets, scores, sptr, shared, ncand = _core.resource_allocation(g.core, a, min_shared, k, vm)
    items = _suggestion_items(g, targets.tolist(), scores.tolist(), sptr.tolist(), shared.tolist(),
                              0, targets.shape[0])
    return SuggestResult(concept, items, int(ncand), min_shared, (time.perf_counter() - t0) * 1e3)


def _suggestion_items(g: LinkGraph, targets: list[int], scores: list[float], sptr: list[int],
                      shared: list[int], lo: int, hi: int) -> list[SuggestionItem]:
    """Suggestions ``lo..hi`` of a core result (targets, scores, shared-neighbour CSR)."""
    ids, titles, names, codes = g.ids, g.titles, g.node_type_names, g.node_type_codes
    get_id, get_title = ids.__getitem__, titles.__getitem__
    items = []
    for j in range(lo, hi):
        t = targets[j]
        seg = shared[sptr[j]:sptr[j + 1]]
        items.append(SuggestionItem(ids[t], names[int(codes[t])], titles[t], scores[j],
                                    tuple(zip(map(get_id, seg), map(get_title, seg)))))
    return items


# --------------------------------------------------------------------------- graph_path
@dataclass(slots=True)
class PathStep:
    """One hop of a chain: the edges (type and direction) that join ``source`` to ``target``.

    ``direction`` is ``"forward"`` for an edge source -> target and ``"backward"`` for
    target -> source."""

    source: str
    target: str
    edges: tuple[tuple[str, str], ...]  # (type, direction), sorted

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target,
                "edges": [{"type": t, "direction": d} for t, d in self.edges]}


@dataclass
class PathResult:
    source: str
    target: str
    nodes: list[tuple[str, str, str | None]]  # (id, type, title)
    steps: list[PathStep]
    elapsed_ms: float = field(default=0.0, compare=False)

    @property
    def found(self) -> bool:
        return bool(self.nodes)

    @property
    def ids(self) -> list[str] | None:
        return [n[0] for n in self.nodes] if self.nodes else None

    @property
    def length(self) -> int | None:
        return len(self.nodes) - 1 if self.nodes else None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "found": self.found,
                "length": self.length,
                "nodes": [{"id": i, "type": t, "title": ti} for i, t, ti in self.nodes],
                "steps": [s.to_dict() for s in self.steps]}

    def __str__(self) -> str:
        if not self.found:
            return f"no visible path from {self.source} to {self.target}"
        parts = [self.steps[0].source] if self.steps else [self.source]
        for s in self.steps:
            label = "|".join(f"{t}{'>' if d == 'forward' else '<'}" for t, d in s.edges)
            parts.append(f" -[{label}]- {s.target}")
        return f"path of length {self.length}: " + "".join(parts)


def graph_path(source: LinkGraph | Any, a: str, b: str, *, caller: Caller) -> PathResult:
    """The shortest chain from ``a`` to ``b`` over what ``caller`` sees (bidirectional BFS on the
    undirected projection; the lexicographically smallest id sequence among shortest chains),
    each step with the edge types and directions that join it to the next. ``found`` is False
    when no visible chain exists."""
    t0 = time.perf_counter()
    caller = _check_caller(caller)
    g, _ = _source_graph(source)
    vm = caller.visibility(g)
    s = g.index(a, visible=vm, argument="source")
    t = g.index(b, visible=vm, argument="target")
    path, _ = _core.shortest_path(g.core, s, t, vm)
    return _path_result(g, a, b, path.tolist(), (time.perf_counter() - t0) * 1e3)


def _path_result(g: LinkGraph, a: str, b: str, p: list[int], elapsed_ms: float) -> PathResult:
    """A path of node indices as a :class:`PathResult`, each step with its typed edges."""
    ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes
    nodes = [(ids[i], names[int(codes[i])], titles[i]) for i in p]
    steps = []
    if len(p) > 1:
        core = g.core
        pair_ptr = g.pair_ptr
        pairs = np.array([core.pair_of(x, y) for x, y in zip(p, p[1:])], dtype=np.int64)
        lo = pair_ptr[pairs].tolist()
        hi = pair_ptr[pairs + 1].tolist()
        tn = g.edge_type_names
        for x, y, a0, b0 in zip(p, p[1:], lo, hi):
            edges = sorted((tn[c], "forward" if sx == x else "backward")
                           for c, sx in zip(g.edge_type_codes[a0:b0].tolist(), g.edge_src[a0:b0].tolist()))
            steps.append(PathStep(ids[x], ids[y], tuple(edges)))
    return PathResult(a, b, nodes, steps, elapsed_ms)
