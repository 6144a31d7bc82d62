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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..graph import Caller, LinkGraph
from ..graph.checks import check_threads, query_list
from ..graph.live import LiveGraph
from ..graph.path import path_edges, shortest_path, shortest_path_batch, shortest_path_live
from ..graph.result import Later, Record, lazy
from ..graph.scopes import warn_unknown_scopes
from .common import GraphSource, check_caller, live_slots, source_graph

__all__ = ["PathResult", "PathStep", "graph_path", "graph_path_batch"]


@dataclass(slots=True)
class PathStep:
    """One hop of a chain: the edges (type and direction) that join ``source`` to ``target``.

    Parameters
    ----------
    source, target : str
        The hop's endpoints (ids), in chain order.
    edges : tuple of (type, direction)
        Sorted; ``direction`` is ``"forward"`` for an edge source -> target and ``"backward"``
        for target -> source.

    Examples
    --------
    >>> PathStep("a", "b", (("USES", "forward"),)).to_dict()
    {'source': 'a', 'target': 'b', 'edges': [{'type': 'USES', 'direction': 'forward'}]}
    """

    source: str
    target: str
    edges: tuple[tuple[str, str], ...]  # (type, direction), sorted

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form.

        Returns
        -------
        dict
        """
        return {
            "source": self.source,
            "target": self.target,
            "edges": [{"type": t, "direction": d} for t, d in self.edges],
        }


class PathResult(Record):
    """What :func:`graph_path` returns: the chain's nodes and steps, empty when no visible chain
    exists. The node and step objects are built on first access; equality compares ``to_dict()``.

    Parameters
    ----------
    source, target : str
        The ids asked for.
    nodes : list of (id, type, title), or a callable returning ``(nodes, steps)``
        The chain from source to target inclusive; empty when not found. A callable is called
        once, on first access of ``nodes`` or ``steps``.
    steps : list of PathStep, optional
        One per hop (omitted with a callable ``nodes``).
    elapsed_ms : float
        Wall time of the call (not part of ``to_dict()`` or of equality).

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> r = graph_path(LinkGraph.from_edges([("a", "b")]), "a", "b", caller=Caller.all_access())
    >>> r.found, r.length, r.ids
    (True, 1, ['a', 'b'])

    It is sized and iterable like a path in a graph library: its node ids, source to target
    (nothing when no path was found):

    >>> len(r), list(r)
    (2, ['a', 'b'])
    """

    __slots__ = ("source", "target", "elapsed_ms", "_parts")
    _fields = ("source", "target", "nodes", "steps", "elapsed_ms")
    _sequence = "_chain"

    _built = lazy("``(nodes, steps)``, built from the path's node indices on first read.", slot="_parts")

    def __init__(
        self,
        source: str,
        target: str,
        nodes: list[tuple[str, str, str | None]] | Callable[[], tuple[list[Any], list[PathStep]]],
        steps: list[PathStep] | None = None,
        elapsed_ms: float = 0.0,
    ) -> None:
        self.source = source
        self.target = target
        self.elapsed_ms = elapsed_ms
        self._parts = Later(nodes) if callable(nodes) else (list(nodes), list(steps or []))

    @property
    def nodes(self) -> list[tuple[str, str, str | None]]:
        """``(id, type, title)`` per chain node, source to target; empty when not found."""
        nodes: list[tuple[str, str, str | None]] = self._built[0]
        return nodes

    @property
    def steps(self) -> list[PathStep]:
        """One :class:`PathStep` per hop."""
        steps: list[PathStep] = self._built[1]
        return steps

    @property
    def _chain(self) -> list[str]:
        """The chain's ids, source to target (empty when not found): what ``len`` and ``iter``
        count."""
        return [n[0] for n in self.nodes]

    @property
    def found(self) -> bool:
        """Whether a visible chain exists."""
        return bool(self.nodes)

    @property
    def ids(self) -> list[str] | None:
        """The chain's ids, or None when not found."""
        return [n[0] for n in self.nodes] if self.nodes else None

    @property
    def length(self) -> int | None:
        """Number of hops, or None when not found."""
        return len(self.nodes) - 1 if self.nodes else None

    def __repr__(self) -> str:
        return f"PathResult(source={self.source!r}, target={self.target!r}, length={self.length})"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``source``, ``target``, ``found``, ``length``, ``nodes``, ``steps``.

        Returns
        -------
        dict
        """
        return {
            "source": self.source,
            "target": self.target,
            "found": self.found,
            "length": self.length,
            "nodes": [{"id": i, "type": t, "title": ti} for i, t, ti in self.nodes],
            "steps": [s.to_dict() for s in self.steps],
        }

    def __str__(self) -> str:
        if not self.found:
            return f"no visible path from {self.source} to {self.target}"
        parts = [self.steps[0].source] if self.steps else [self.source]
        for s in self.steps:
            label = "|".join(f"{t}{'>' if d == 'forward' else '<'}" for t, d in s.edges)
            parts.append(f" -[{label}]- {s.target}")
        return f"path of length {self.length}: " + "".join(parts)


def graph_path(source: LinkGraph | GraphSource, a: str, b: str, *, caller: Caller) -> PathResult:
    """The shortest chain from ``a`` to ``b`` over what ``caller`` sees (bidirectional BFS on the
    undirected projection; the lexicographically smallest id sequence among shortest chains),
    each step with the edge types and directions that join it to the next.

    Parameters
    ----------
    source : LinkGraph or GraphSource
    a, b : str
        Node ids. Unknown and hidden ids raise the same :class:`~conceptwalk.errors.NotFoundError`.
    caller : Caller
        Whose visibility applies (required).

    Returns
    -------
    PathResult
        ``found`` is False when no visible chain exists.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "b", "USES"), ("c", "b", "PART_OF")])
    >>> str(graph_path(g, "a", "c", caller=Caller.all_access()))
    'path of length 2: a -[USES>]- b -[PART_OF<]- c'
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    live = _live_path(source, a, b, caller)
    if live is not None:
        return PathResult(a, b, live, None, (time.perf_counter() - t0) * 1e3)
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    p = shortest_path(g, a, b, caller.visibility(g))
    return PathResult(a, b, partial(_path_parts, g, p), None, (time.perf_counter() - t0) * 1e3)


def _live_path(
    source: Any, a: Any, b: Any, caller: Caller
) -> Callable[[], tuple[list[tuple[str, str, str | None]], list[PathStep]]] | None:
    """The path's parts over the source's live graph, or None to take the snapshot path
    (:func:`~conceptwalk.tools.common.live_slots` says when)."""
    got = live_slots(source, caller, [a, b], ("source", "target"))  # (the snapshot path's checks, in order)
    if got is None:
        return None
    live, view, (s, t) = got
    p = shortest_path_live(live, s, t, view)
    return partial(_live_path_parts, live, p)


def _live_path_parts(g: LiveGraph, p: list[int]) -> tuple[list[tuple[str, str, str | None]], list[PathStep]]:
    """:func:`_path_parts` over a live graph."""
    nodes = [g.node_at(i) for i in p]
    steps = [PathStep(nodes[j][0], nodes[j + 1][0], e) for j, e in enumerate(g.path_edges(p))]
    return nodes, steps


def _path_parts(g: LinkGraph, p: list[int]) -> tuple[list[tuple[str, str, str | None]], list[PathStep]]:
    """The nodes and steps (each with its typed edges) of a path of node indices."""
    ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes_list
    nodes = [(ids[i], names[codes[i]], titles[i]) for i in p]
    steps = [PathStep(ids[x], ids[y], e) for x, y, e in zip(p, p[1:], path_edges(g, p))]
    return nodes, steps


def graph_path_batch(
    source: LinkGraph | GraphSource, pairs: Iterable[Sequence[str]], *, caller: Caller, threads: int | None = None
) -> list[PathResult]:
    """:func:`conceptwalk.graph_path` for many ``(a, b)`` pairs, in input order, across C++
    threads.

    Parameters
    ----------
    source : LinkGraph or GraphSource
    pairs : iterable of (a, b)
        Id pairs; every id is resolved before any work.
    caller : Caller
    threads : int, optional
        C++ threads (default: ``os.cpu_count()``).

    Returns
    -------
    list of PathResult
        Each ``to_dict()`` equal to the one-by-one call's.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "b", "USES"), ("c", "b", "PART_OF")])
    >>> [r.length for r in graph_path_batch(g, [("a", "b"), ("a", "c")], caller=Caller.all_access())]
    [1, 2]
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    nt = check_threads(threads)
    plist = query_list(pairs, "pairs")
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    bt = shortest_path_batch(g, plist, threads=nt, visible=caller.visibility(g))
    if not plist:
        return []
    op, pl = bt.ptr.tolist(), bt.nodes.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(plist)
    return [
        PathResult(a, b, partial(_path_parts, g, pl[op[i] : op[i + 1]]), None, per) for i, (a, b) in enumerate(plist)
    ]
