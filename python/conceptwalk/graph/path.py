"""Shortest chains: the one implementation behind both faces,
:meth:`LinkGraph.shortest_path <conceptwalk.graph.LinkGraph.shortest_path>` (a list of ids) and
the tool :func:`conceptwalk.graph_path` (a lazy ``PathResult`` with typed steps): the endpoints
resolved under the caller's mask, the compiled bidirectional BFS (``csrc/src/path.cpp``), and
the path's nodes and typed edges decoded from its node indices.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b", "USES"), ("c", "b", "PART_OF")])
>>> p = shortest_path(g, "a", "c", None)
>>> p, [g.ids[i] for i in p], path_edges(g, p)
([0, 1, 2], ['a', 'b', 'c'], [(('USES', 'forward'),), (('PART_OF', 'backward'),)])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core
from ..errors import InputError

if TYPE_CHECKING:  # the graph module imports this one
    from .linkgraph import LinkGraph
    from .live import LiveGraph, LiveView

__all__ = ["path_edges", "shortest_path", "shortest_path_batch", "shortest_path_live"]

_shortest_path = _core.shortest_path
_shortest_path_ids = _core.shortest_path_ids


def shortest_path(
    graph: LinkGraph, source: str, target: str, vm: _core.VisibilityMask | None, ids: Sequence[Any] | None = None
) -> list[Any]:
    """The lexicographically smallest shortest path between two node ids: its node indices, or
    (with ``ids``) the items of ``ids`` at them; empty when no visible path exists.

    One compiled call resolves both ids (through the graph's id index), runs the search and
    builds the list; an id that is not a visible node takes the checked path, which raises the
    one NotFoundError text.

    Parameters
    ----------
    graph : LinkGraph
    source, target : str
        Node ids; unknown and hidden ids raise the same NotFoundError (naming ``source`` or
        ``target``).
    vm : VisibilityMask or None
        The caller's mask.
    ids : sequence, optional
        Per node index what to return (``graph.ids`` for the path's ids).

    Returns
    -------
    list
        Node indices (or items of ``ids``) from source to target inclusive.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "b"), ("c", "d")])
    >>> shortest_path(g, "a", "b", None), shortest_path(g, "a", "d", None), shortest_path(g, "b", "a", None, g.ids)
    ([0, 1], [], ['b', 'a'])
    """
    p: list[Any] | None = _shortest_path_ids(graph.core, graph.id_index, source, target, vm, ids)
    if p is None:  # not both exact str ids of visible nodes: the checked path (raises, or a str subclass)
        s = graph.index(source, visible=vm, argument="source")
        t = graph.index(target, visible=vm, argument="target")
        p = _shortest_path(graph.core, s, t, vm).path.tolist()
        if ids is not None:
            p = [ids[i] for i in p]
    return p


def shortest_path_live(graph: LiveGraph, source: int, target: int, view: LiveView | None = None) -> list[int]:
    """The shortest path between two slots of a live graph (base plus delta), visible to ``view``'s
    caller (None: all access): the same path as on a fresh build of the same graph (the
    lexicographically smallest by id), as slots; empty when there is none.

    Parameters
    ----------
    graph : LiveGraph
    source, target : int
        Slots (visible).
    view : LiveView, optional

    Returns
    -------
    list of int

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> from conceptwalk.graph.live import LiveGraph
    >>> g = LiveGraph.over(LinkGraph.from_edges([("a", "c"), ("c", "d")]), version=0).grown(
    ...     {"b": ("NODE", None, None, None)}, [("a", "b", "X"), ("b", "d", "Y")], version=1)
    >>> p = shortest_path_live(g, g.slot("a"), g.slot("d"))
    >>> [g.node_at(s)[0] for s in p], g.path_edges(p)
    (['a', 'b', 'd'], [(('X', 'forward'),), (('Y', 'forward'),)])
    """
    return list(_shortest_path(graph.core, source, target, None if view is None else view.core).path.tolist())


def path_edges(graph: LinkGraph, path: Sequence[int]) -> list[tuple[tuple[str, str], ...]]:
    """Per hop of a path of node indices, the edges joining it: sorted ``(type, direction)``
    pairs, ``direction`` ``"forward"`` for an edge from the hop's first node to its second and
    ``"backward"`` for the reverse.

    Parameters
    ----------
    graph : LinkGraph
    path : list of int
        Node indices, consecutive ones adjacent.

    Returns
    -------
    list of tuple

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "b", "X"), ("b", "a", "Y")])
    >>> path_edges(g, [0, 1])
    [(('X', 'forward'), ('Y', 'backward'))]
    """
    if len(path) < 2:
        return []
    core = graph.core
    pair_ptr = graph.pair_ptr
    pairs = np.array([core.pair_of(x, y) for x, y in zip(path, path[1:])], dtype=np.int64)
    lo = pair_ptr[pairs].tolist()
    hi = pair_ptr[pairs + 1].tolist()
    tn, codes, src = graph.edge_type_names, graph.edge_type_codes, graph.edge_src
    return [
        tuple(
            sorted(
                (tn[c], "forward" if sx == x else "backward")
                for c, sx in zip(codes[a0:b0].tolist(), src[a0:b0].tolist())
            )
        )
        for x, a0, b0 in zip(path, lo, hi)
    ]


def shortest_path_batch(
    graph: LinkGraph, pairs: Sequence[Any], *, threads: int, visible: _core.VisibilityMask | None
) -> _core.PathBatch:
    """:func:`shortest_path` for many ``(source, target)`` id pairs, across C++ threads
    (``threads`` checked); every id is resolved before any work.

    Parameters
    ----------
    graph : LinkGraph
    pairs : list of (str, str)
        Id pairs (anything else raises InputError naming ``pairs[i]``).
    threads : int
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.PathBatch
        Pair ``i``'s path at ``nodes[ptr[i]:ptr[i+1]]`` (empty: none).

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> b = shortest_path_batch(g, [("a", "c"), ("c", "c")], threads=1, visible=None)
    >>> b.ptr.tolist(), b.nodes.tolist()
    ([0, 3, 4], [0, 1, 2, 2])
    """
    src = np.empty(len(pairs), dtype=np.int32)
    dst = np.empty(len(pairs), dtype=np.int32)
    for i, p in enumerate(pairs):
        if isinstance(p, str) or not isinstance(p, Sequence) or len(p) != 2:
            raise InputError(f"pairs[{i}]: expected an (a, b) pair of ids, got {p!r}")
        src[i] = graph.index(p[0], visible=visible, argument="source")
        dst[i] = graph.index(p[1], visible=visible, argument="target")
    return _core.path_batch(graph.core, src, dst, threads, visible)
