"""The bounded typed walk (:func:`conceptwalk.graph.walk.typed_walk`) and the decoding of its paths into
JSON-ready hops with provenance."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..graph import LinkGraph, VisibilityMask
from ..graph.walk import typed_walk
from .config import WalkConfig

__all__ = ["WalkOutcome", "run_walk", "AXES", "ABSENT_IN_STORAGE", "ABSENT_IN_PROJECTION"]

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
    """What one walk found, before merging."""

    candidates: list[int] = field(default_factory=list)   # discovery order
    paths: dict[int, list[WalkPath]] = field(default_factory=dict)  # per candidate, best first
    edges_visited: int = 0
    truncated: bool = False
    truncated_by: list[str] = field(default_factory=list)
    core_ms: float = 0.0

    def score(self, candidate: int) -> float:
        return self.paths[candidate][0].score


def type_flags(names: Sequence[str], all_names: Sequence[str]) -> npt.NDArray[np.bool_]:
    wanted = set(names)
    return np.array([n in wanted for n in all_names], dtype=bool)


class Provenance:
    """Renders the four provenance axes of canonical edges, saying for each omitted axis whether
    the store has no value for it or the loaded projection left it out.

    ``presence`` is, per annotation column, how many stored edges hold a value -- counted over
    the edges the caller sees (:meth:`~conceptwalk.wrap._source.Snapshot.presence` with the
    caller's mask), so an absence reason never depends on hidden edges; a column missing from it
    is unknown. None for a bare :class:`LinkGraph` (its own storage)."""

    def __init__(self, graph: LinkGraph, presence: Mapping[str, int] | None) -> None:
        self.graph = graph
        self.presence = presence
        self._cache: dict[int, tuple[dict[str, Any], dict[str, str]]] = {}

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
        got = self._cache.get(e)
        if got is not None:
            return got
        present: dict[str, Any] = {}
        absent: dict[str, str] = {}
        g = self.graph
        for axis, cols in AXES.items():
            if len(cols) == 1:
                v = g.edge_annotation(e, cols[0])
                if v is None:
                    absent[axis] = self.absence(cols[0])
                else:
                    present[axis] = v
                continue
            sub: dict[str, Any] = {}
            missing: dict[str, str] = {}
            for col in cols:
                v = g.edge_annotation(e, col)
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
        got = (present, absent)
        self._cache[e] = got
        return got


def run_walk(graph: LinkGraph, starts: Sequence[tuple[int, str, float]], config: WalkConfig,
             visible: VisibilityMask | None, provenance: Provenance) -> WalkOutcome:
    """Walk from ``starts`` (``(index, id, confidence)`` of visible concepts) and decode the paths.

    Path score = concept confidence x ``hop_decay ** (hops - 1)`` x the product of the
    extraction confidences of the path's edges that have one (an edge without one counts 1).
    Per hop, among the edges joining the two nodes whose type passes that hop's gate (expansion
    for inner hops, admission for the last), the one with the highest extraction confidence
    (absent lowest), then the lowest edge id, represents the hop.
    """
    out = WalkOutcome()
    if not starts:
        return out
    g = graph
    expand = type_flags(config.expand_edge_types, g.edge_type_names)
    admit = type_flags(config.admit_edge_types, g.edge_type_names)
    node_types = None
    exp_nodes = None
    adm_nodes = None
    if config.expand_node_types is not None or config.admit_node_types is not None:
        node_types = np.ascontiguousarray(g.node_type_codes, dtype=np.int32)
        if config.expand_node_types is not None:
            exp_nodes = type_flags(config.expand_node_types, g.node_type_names)
        if config.admit_node_types is not None:
            adm_nodes = type_flags(config.admit_node_types, g.node_type_names)
        if exp_nodes is None:
            exp_nodes = np.ones(len(g.node_type_names), dtype=bool)
        if adm_nodes is None:
            adm_nodes = np.ones(len(g.node_type_names), dtype=bool)
    start_idx = np.array([s[0] for s in starts], dtype=np.int32)
    t0 = time.perf_counter()
    nodes, entries, hops, cands, visited, truncated = typed_walk(
        g, start_idx, config.max_hops, expand, admit, node_types, exp_nodes, adm_nodes,
        max_edges=config.max_edges, max_candidates=config.max_candidates, visible=visible)
    out.core_ms = (time.perf_counter() - t0) * 1e3
    out.edges_visited = int(visited)
    out.truncated = bool(truncated)
    if out.truncated:
        if out.edges_visited >= config.max_edges:
            out.truncated_by.append("edges")
        if len(cands) >= config.max_candidates:
            out.truncated_by.append("candidates")
    out.candidates = cands.tolist()
    if not out.candidates:
        return out
    conf = {s[0]: (s[1], s[2]) for s in starts}
    ids = g.ids
    core = g.core
    pair_ptr = core.pair_ptr
    etype = g.edge_type_codes
    esrc = g.edge_src
    tnames = g.edge_type_names
    ecol = g.edge_annotations.get("extraction_confidence")
    econf = ecol[0] if ecol is not None else None

    def pick(u: int, v: int, flags: npt.NDArray[np.bool_]) -> int:
        p = core.pair_of(u, v)
        best, best_key = -1, None
        for q in range(int(pair_ptr[p]), int(pair_ptr[p + 1])):
            if not flags[int(etype[q])]:
                continue
            c = -1.0 if econf is None or math.isnan(float(econf[q])) else float(econf[q])
            key = (-c, q)
            if best_key is None or key < best_key:
                best, best_key = q, key
        return best

    paths: dict[int, list[WalkPath]] = {}
    for row_nodes, _row_entries, h in zip(nodes.tolist(), entries.tolist(), hops.tolist()):
        start = row_nodes[0]
        concept, cconf = conf[start]
        score = cconf * config.hop_decay ** (h - 1)
        rendered = []
        for j in range(h):
            u, v = row_nodes[j], row_nodes[j + 1]
            e = pick(u, v, admit if j == h - 1 else expand)
            hop: dict[str, Any] = {"from": ids[u], "to": ids[v], "type": tnames[int(etype[e])],
                                   "direction": "forward" if int(esrc[e]) == u else "backward"}
            present, absent = provenance.edge(e)
            hop.update({k: dict(v) if isinstance(v, dict) else v for k, v in present.items()})
            if absent:
                hop["absent"] = dict(absent)
            x = present.get("extractionProvenance", {}).get("confidence")
            if x is not None:
                score *= float(x)
            rendered.append(hop)
        cand = row_nodes[h]
        paths.setdefault(cand, []).append(
            WalkPath(cand, concept, score, [ids[x] for x in row_nodes[:h + 1]], rendered))
    for lst in paths.values():
        lst.sort(key=lambda p: (-p.score, len(p.hops), p.nodes))
    out.paths = paths
    return out
