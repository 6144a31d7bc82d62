"""The bounded typed walk (:func:`conceptwalk.graph.walk.typed_walk`) and the decoding of its paths into
JSON-ready hops with provenance."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..graph import LinkGraph, VisibilityMask
from ..graph.linkgraph import EDGE_ANNOTATION_KEYS, annotation_value
from ..graph.live import LiveGraph, LiveView, WalkEdges
from ..graph.walk import typed_walk, typed_walk_live
from .config import WalkConfig

__all__ = ["WalkOutcome", "run_walk", "LiveWalk", "AXES", "ABSENT_IN_STORAGE", "ABSENT_IN_PROJECTION"]

ABSENT_IN_STORAGE = "absent-in-storage"
ABSENT_IN_PROJECTION = "absent-in-projection"
#: The four provenance axes of a hop and the stored annotation columns behind each.
AXES: dict[str, tuple[str, ...]] = {
    "authority": ("authority",),
    "fidelity": ("fidelity",),
    "extractionProvenance": ("extraction_method", "extraction_confidence"),
    "lifecycle": ("lifecycle",),
}
_SUBKEY = {"extraction_method": "method", "extraction_confidence": "confidence"}


@dataclass
class WalkPath:
    """One path: concept (start) -> ... -> candidate, with its score and rendered hops."""

    candidate: int
    concept: str
    score: float
    nodes: list[str]
    hops: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"concept": self.concept, "score": self.score, "nodes": self.nodes, "hops": self.hops}


@dataclass
class WalkOutcome:
    """What one walk found, before merging: the kept candidates in rank order and, per
    candidate, its score, how many resolved concepts reach it and its paths (decoded on demand).

    Attributes
    ----------
    candidates : list of int
        Node indices of the kept candidates, best first.
    scores : dict of int to float
        Per candidate its best path score.
    reach : dict of int to int
        Per candidate how many resolved concepts reach it.
    path_count : dict of int to int
        Per candidate how many paths the core returned.
    edges_visited : int
        Adjacency entries the core walk examined.
    truncated : bool
        Whether a budget cut the walk.
    truncated_by : list of str
        Which budgets did: ``"edges"``, ``"candidates"``.
    core_ms : float
        Time spent in the compiled walk, in milliseconds.
    render : callable or None
        ``render(candidates) -> list of list of dict``: the JSON-ready paths of each candidate
        (one compiled call for them all), used by :meth:`rendered` and :meth:`paths`.
    prerendered : dict of int to list of dict
        Paths the walk's own compiled call rendered (``run_walk(..., render_except=...)``), per
        candidate, handed out once by :meth:`rendered`.
    """

    candidates: list[int] = field(default_factory=list)  # rank order (best first)
    scores: dict[int, float] = field(default_factory=dict)
    reach: dict[int, int] = field(default_factory=dict)
    path_count: dict[int, int] = field(default_factory=dict)
    edges_visited: int = 0
    truncated: bool = False
    truncated_by: list[str] = field(default_factory=list)
    core_ms: float = 0.0
    render: Any = None  # candidates -> per candidate, its paths as dicts
    prerendered: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # handed out once

    def score(self, candidate: int) -> float:
        """The best path score of one candidate.

        Parameters
        ----------
        candidate : int
            A node index from :attr:`candidates`.

        Returns
        -------
        float
            Its best path score.
        """
        return self.scores[candidate]

    def paths(self, candidate: int) -> list[WalkPath]:
        """The candidate's returned paths (at most ``max_paths_per_candidate``), best first.

        Parameters
        ----------
        candidate : int
            A node index from :attr:`candidates`.

        Returns
        -------
        list of WalkPath
            Decoded anew on each call (:meth:`rendered` decodes many candidates at once).
        """
        return [
            WalkPath(candidate, d["concept"], d["score"], d["nodes"], d["hops"]) for d in self.rendered([candidate])[0]
        ]

    def rendered(self, candidates: Sequence[int]) -> list[list[dict[str, Any]]]:
        """The returned paths of several candidates, JSON-ready, in one compiled call.

        Parameters
        ----------
        candidates : sequence of int
            Node indices from :attr:`candidates`.

        Returns
        -------
        list of list of dict
            Per candidate, its paths best first, each ``{"concept", "score", "nodes", "hops"}``
            (what :meth:`WalkPath.to_dict` gives); new objects on every call.
        """
        if self.render is None or not candidates:
            return [[] for _ in candidates]
        pre = self.prerendered
        if pre and all(c in pre for c in candidates) and len(set(candidates)) == len(candidates):
            # rendered by the walk's own call (each handed out once: a repeated candidate renders anew)
            return [pre.pop(c) for c in candidates]
        got: list[list[dict[str, Any]]] = self.render(candidates)
        return got


def type_flags(names: Sequence[str], all_names: Sequence[str]) -> npt.NDArray[np.bool_]:
    wanted = set(names)
    return np.array([n in wanted for n in all_names], dtype=bool)


class Provenance:
    """Renders the four provenance axes of canonical edges, saying for each omitted axis whether
    the store has no value for it or the loaded projection left it out.

    ``presence`` is, per annotation column, how many stored edges hold a value -- counted over
    the edges the caller sees (:meth:`~conceptwalk.wrap._reader.ReadCache.presence` with the
    caller's mask), so an absence reason never depends on hidden edges; a column missing from it
    is unknown. None for a bare :class:`LinkGraph` (its own storage)."""

    def __init__(self, graph: LinkGraph, presence: Mapping[str, int] | None) -> None:
        self.graph = graph
        self.presence = presence
        #: Canonical edge id -> its rendered ``(present, absent)`` axes, filled by :meth:`edge`
        #: (read by the compiled path rendering, which calls :meth:`edge` on a miss).
        self.cache: dict[int, tuple[dict[str, Any], dict[str, str]]] = {}

    def absence(self, column: str) -> str:
        """Why a column has no value on an edge whose value in this projection is missing."""
        if self.presence is None or column in self.graph.edge_annotations:
            # A bare LinkGraph is its own storage; a loaded column without a value on this edge
            # means the store has none for it.
            return ABSENT_IN_STORAGE
        # The projection did not load the column: does the store (as far as the caller sees it)
        # hold values for it? Unknown counts as left out by the projection.
        count = self.presence.get(column)
        return ABSENT_IN_STORAGE if count == 0 else ABSENT_IN_PROJECTION

    def edge(self, e: int) -> tuple[dict[str, Any], dict[str, str]]:
        got = self.cache.get(e)
        if got is not None:
            return got
        g = self.graph
        got = self.axes(lambda col: g.edge_annotation(e, col))
        self.cache[e] = got
        return got

    def axes(self, value: Callable[[str], Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The rendered ``(present, absent)`` axes of an edge whose annotation values
        ``value(column)`` gives (None: absent)."""
        present: dict[str, Any] = {}
        absent: dict[str, str] = {}
        for axis, cols in AXES.items():
            if len(cols) == 1:
                v = value(cols[0])
                if v is None:
                    absent[axis] = self.absence(cols[0])
                else:
                    present[axis] = v
                continue
            sub: dict[str, Any] = {}
            missing: dict[str, str] = {}
            for col in cols:
                v = value(col)
                if v is None:
                    missing[_SUBKEY[col]] = self.absence(col)
                else:
                    sub[_SUBKEY[col]] = v
            if sub:
                present[axis] = sub
                for k, kind in missing.items():
                    absent[f"{axis}.{k}"] = kind
            elif len(set(missing.values())) == 1:
                absent[axis] = next(iter(missing.values()))
            else:
                for k, kind in missing.items():
                    absent[f"{axis}.{k}"] = kind
        return present, absent


class LiveProvenance:
    """:class:`Provenance` of the edges a walk over a live graph reports: a base canonical edge
    through the base's renderer, an edge the delta lists (:class:`~conceptwalk.graph.live.WalkEdges`)
    from the base edge it is or the annotations its batch wrote. Kept per (live graph, caller).

    Parameters
    ----------
    base : Provenance
        The caller's renderer of the base's edges.
    walk : WalkEdges
        The live graph's walk edges.
    """

    def __init__(self, base: Provenance, walk: WalkEdges) -> None:
        self.base = base
        self.walk = walk
        self._m = base.graph.num_edges
        #: Edge id -> its rendered ``(present, absent)`` axes (as :attr:`Provenance.cache`).
        self.cache: dict[int, tuple[dict[str, Any], dict[str, str]]] = {}

    def edge(self, e: int) -> tuple[dict[str, Any], dict[str, str]]:
        got = self.cache.get(e)
        if got is not None:
            return got
        if e < self._m:
            got = self.base.edge(e)
        else:
            src = int(self.walk.source[e - self._m])
            if src >= 0:
                got = self.base.edge(src)
            else:
                row = self.walk.anns[-1 - src]
                got = self.base.axes(lambda col: _stored_value(col, row[_COLUMN[col]]))
        self.cache[e] = got
        return got


_COLUMN = {k: i for i, k in enumerate(EDGE_ANNOTATION_KEYS)}


def _stored_value(column: str, raw: Any) -> Any:
    """An annotation as :meth:`LinkGraph.edge_annotation` gives it, from the store's value."""
    if raw is None:
        return None
    if column == "extraction_confidence":
        return float(raw)
    return annotation_value(raw)


class _Prepared:
    """The per-(graph, config) arrays of a walk: type gates, node-type filters, edge weights."""

    __slots__ = ("expand", "admit", "node_types", "exp_nodes", "adm_nodes", "edge_weights", "_typed", "_graph")

    def __init__(self, g: LinkGraph, config: WalkConfig) -> None:
        self.expand = type_flags(config.expand_edge_types, g.edge_type_names)
        self.admit = type_flags(config.admit_edge_types, g.edge_type_names)
        self.node_types = self.exp_nodes = self.adm_nodes = None
        if config.expand_node_types is not None or config.admit_node_types is not None:
            self.node_types = np.ascontiguousarray(g.node_type_codes, dtype=np.int32)
            ones = np.ones(len(g.node_type_names), dtype=bool)
            self.exp_nodes = (
                ones if config.expand_node_types is None else type_flags(config.expand_node_types, g.node_type_names)
            )
            self.adm_nodes = (
                ones if config.admit_node_types is None else type_flags(config.admit_node_types, g.node_type_names)
            )
        col = g.edge_annotations.get("extraction_confidence")
        self.edge_weights = None if col is None else np.ascontiguousarray(col[0], dtype=np.float64)
        self._typed: LinkGraph | None = None
        self._graph = weakref.ref(g)

    def typed_graph(self) -> LinkGraph:
        """The graph restricted to the walk's edge types (expansion and admission), same nodes
        and indices (built once; for the local PPR reranking)."""
        got = self._typed
        if got is None:
            g = self._graph()
            assert g is not None
            keep = (self.expand | self.admit)[g.edge_type_codes] if g.num_edges else np.zeros(0, dtype=bool)
            sel = np.flatnonzero(keep)
            got = LinkGraph.from_arrays(
                g.ids, g.edge_src[sel], g.edge_dst[sel], [g.edge_type_names[int(t)] for t in g.edge_type_codes[sel]]
            )
            self._typed = got
        return got


_PREPARED: weakref.WeakKeyDictionary[LinkGraph, dict[WalkConfig, _Prepared]] = weakref.WeakKeyDictionary()
_PREPARED_LOCK = threading.Lock()


def prepared(g: LinkGraph, config: WalkConfig) -> _Prepared:
    """The walk's arrays for ``g`` and ``config``, built once per graph snapshot and config."""
    per = _PREPARED.get(g)
    if per is not None:
        got = per.get(config)
        if got is not None:
            return got
    got = _Prepared(g, config)
    with _PREPARED_LOCK:
        _PREPARED.setdefault(g, {})[config] = got
    return got


class LiveWalk(NamedTuple):
    """What :func:`run_walk` walks over a live graph: the graph, its walk edges
    (:meth:`LiveGraph.walk_edges <conceptwalk.graph.live.LiveGraph.walk_edges>`) and the
    caller's view of it (None: all access).

    Attributes
    ----------
    graph : LiveGraph
    edges : WalkEdges
    view : LiveView or None
    """

    graph: LiveGraph
    edges: WalkEdges
    view: LiveView | None


def run_walk(
    graph: LinkGraph,
    starts: Sequence[tuple[int, str, float]],
    config: WalkConfig,
    visible: VisibilityMask | None,
    provenance: Provenance | LiveProvenance,
    *,
    render_except: Sequence[int] | None = None,
    live: LiveWalk | None = None,
) -> WalkOutcome:
    """Walk from ``starts`` (``(index, id, confidence)`` of visible concepts); the core keeps the
    best ``max_candidates`` (best-first, the budget shared across the concepts) and this decodes
    their paths on demand.

    Path score = concept confidence x ``hop_decay ** (hops - 1)`` x the product of the
    extraction confidences of the path's edges that have one (an edge without one counts 1).
    Per hop, among the edges joining the two nodes whose type passes that hop's gate (expansion
    for inner hops, admission for the last), the one with the highest extraction confidence
    (absent lowest), then the lowest edge id, represents the hop. Each concept is guaranteed
    ``walk_min_share`` of an equal part of the candidate budget, the rest is shared in
    proportion to the confidences; candidates are ranked by score, then by how many concepts
    reach them, then by edge confidence, then fewer hops, then id.

    Parameters
    ----------
    graph : LinkGraph
        The snapshot walked.
    starts : sequence of (int, str, float)
        ``(node index, id, confidence)`` of each resolved, visible concept.
    config : WalkConfig
        Hops, gates, node-type filters, budgets and ``hop_decay``.
    visible : VisibilityMask or None
        The caller's prepared mask (None = everything visible).
    provenance : Provenance
        Renders the provenance axes of each hop.
    render_except : sequence of int, optional
        Render, in the walk's own compiled call, the paths of every kept candidate except these
        node indices (what :meth:`WalkOutcome.rendered` then hands out once); without it paths
        are rendered on demand.
    live : LiveWalk, optional
        Walk this live graph (``graph`` is its base; ``visible`` is ignored: the live view
        applies; node indices are its slots) instead of ``graph``: the same outcome as over a
        fresh build of it.

    Returns
    -------
    WalkOutcome
        The candidates with their paths, and what the walk cost.
    """
    out = WalkOutcome()
    if not starts:
        return out
    g = graph
    prep = prepared(g, config)
    start_idx = np.array([s[0] for s in starts], dtype=np.int32)
    weights = np.array([s[2] for s in starts], dtype=np.float64)
    t0 = time.perf_counter()
    skip = None if render_except is None else np.asarray(render_except, dtype=np.int32)
    if live is None:
        ids: Any = g.ids
        tail: list[str] | None = None
        tnames: Sequence[str] = g.edge_type_names
        core: Any = g.core
        r = typed_walk(
            g,
            start_idx,
            config.max_hops,
            prep.expand,
            prep.admit,
            prep.node_types,
            prep.exp_nodes,
            prep.adm_nodes,
            max_edges=config.max_edges,
            max_candidates=config.max_candidates,
            visible=visible,
            start_weights=weights,
            edge_weights=prep.edge_weights,
            hop_decay=config.hop_decay,
            min_share=config.walk_min_share,
            max_paths=config.max_paths_per_candidate,
            render=None if skip is None else (ids, tnames, provenance.cache, provenance.edge, skip),
        )
    else:
        w = live.edges
        ids, tail, tnames, core = g.ids, live.graph.tail_ids(), w.type_names, live.graph.core
        ntypes = ntail = exp_nodes = adm_nodes = None
        if prep.node_types is not None:
            names, ntail = live.graph.node_types()
            assert names is not None  # (a live read needs the node types: LiveRead checked)
            ntypes = prep.node_types
            exp_nodes = (
                np.ones(len(names), dtype=bool)
                if config.expand_node_types is None
                else type_flags(config.expand_node_types, names)
            )
            adm_nodes = (
                np.ones(len(names), dtype=bool)
                if config.admit_node_types is None
                else type_flags(config.admit_node_types, names)
            )
        r = typed_walk_live(
            live.graph,
            w,
            start_idx,
            config.max_hops,
            type_flags(config.expand_edge_types, tnames),
            type_flags(config.admit_edge_types, tnames),
            ntypes,
            ntail,
            exp_nodes,
            adm_nodes,
            max_edges=config.max_edges,
            max_candidates=config.max_candidates,
            visible=live.view,
            start_weights=weights,
            edge_weights=prep.edge_weights,
            hop_decay=config.hop_decay,
            min_share=config.walk_min_share,
            max_paths=config.max_paths_per_candidate,
            render=None if skip is None else (ids, tail, tnames, provenance.cache, provenance.edge, skip),
        )
    out.core_ms = (time.perf_counter() - t0) * 1e3
    out.edges_visited = int(r.edges_visited)
    out.truncated = bool(r.truncated)
    if r.cut_by_edges:
        out.truncated_by.append("edges")
    if r.cut_by_candidates:
        out.truncated_by.append("candidates")
    cands = r.candidates.tolist()
    out.candidates = cands
    if not cands:
        return out
    out.scores = dict(zip(cands, r.scores.tolist()))
    out.reach = dict(zip(cands, r.reach.tolist()))
    out.path_count = dict(zip(cands, r.path_count.tolist()))
    slot = {c: i for i, c in enumerate(cands)}

    def render(chosen: Sequence[int]) -> list[list[dict[str, Any]]]:
        # One compiled call renders every chosen candidate's paths: nodes, hops (type, direction)
        # and each hop's provenance from the caller's renderer (its cache, filled on a miss).
        return r.render_paths(core, [slot[c] for c in chosen], ids, tnames, provenance.cache, provenance.edge, tail)

    out.render = render
    if r.rendered is not None:
        out.prerendered = {c: got for c, got in zip(cands, r.rendered) if got is not None}
    return out
