"""``graph_path``: the shortest chain between two concepts with the edge types along it, one pair
or many (:func:`graph_path_batch`).

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> g = LinkGraph.from_edges([("a", "b", "USES"), ("c", "b", "PART_OF")])
>>> str(graph_path(g, "a", "c", caller=Caller.all_access()))
'path of length 2: a -[USES>]- b -[PART_OF<]- c'
>>> [r.length for r in graph_path_batch(g, [("a", "b"), ("a", "c")], caller=Caller.all_access())]
[1, 2]
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import Caller, LinkGraph
from ..graph.paths import shortest_path_batch_indices, shortest_path_indices
from ..graph.checks import check_threads, query_list
from .common import check_caller, source_graph

__all__ = ["PathResult", "PathStep", "graph_path", "graph_path_batch"]


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
    caller = check_caller(caller)
    g, _ = source_graph(source)
    vm = caller.visibility(g)
    s = g.index(a, visible=vm, argument="source")
    t = g.index(b, visible=vm, argument="target")
    path = shortest_path_indices(g, s, t, vm)
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


def graph_path_batch(source: LinkGraph | Any, pairs: Iterable[Sequence[str]], *, caller: Caller,
                     threads: int | None = None) -> list[PathResult]:
    """:func:`conceptwalk.graph_path` for many ``(a, b)`` pairs, in input order."""
    t0 = time.perf_counter()
    caller = check_caller(caller)
    nt = check_threads(threads)
    plist = query_list(pairs, "pairs")
    g, _ = source_graph(source)
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
    out_ptr, paths = shortest_path_batch_indices(g, src, dst, threads=nt, visible=vm)
    op, pl = out_ptr.tolist(), paths.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(plist)
    out = [_path_result(g, a, b, pl[op[i]:op[i + 1]], per) for i, (a, b) in enumerate(plist)]
    return out
