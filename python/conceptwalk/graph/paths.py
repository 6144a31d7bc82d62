"""Shortest chains for one pair or many (across C++ threads), as node indices for the tools layer;
:meth:`LinkGraph.shortest_path` is the id-level call.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
>>> shortest_path_core(g, 0, 2, None).path.tolist()
[0, 1, 2]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["shortest_path_batch_core", "shortest_path_compiled", "shortest_path_core"]

#: The compiled call itself, ``(graph.core, source, target, visible) -> PathResult`` (arguments
#: checked by the caller): what :func:`shortest_path_core` runs, without its Python frame.
shortest_path_compiled = _core.shortest_path


def shortest_path_core(
    graph: LinkGraph, source: int, target: int, visible: _core.VisibilityMask | None
) -> _core.PathResult:
    """The lexicographically smallest shortest path between two visible node indices.

    Parameters
    ----------
    graph : LinkGraph
    source, target : int
        Visible node indices.
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.PathResult
        ``path`` (node indices, empty when none) and ``visited``.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("c", "d")])
    >>> shortest_path_core(g, 0, 3, None).path.tolist()
    []
    """
    return _core.shortest_path(graph.core, source, target, visible)


def shortest_path_batch_core(
    graph: LinkGraph,
    sources: npt.NDArray[np.int32],
    targets: npt.NDArray[np.int32],
    *,
    threads: int,
    visible: _core.VisibilityMask | None,
) -> _core.PathBatch:
    """:func:`shortest_path_core` for many pairs, across C++ threads.

    Parameters
    ----------
    graph : LinkGraph
    sources, targets : int32 arrays
        Visible node indices, pair ``i`` = ``(sources[i], targets[i])``.
    threads : int
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.PathBatch
        Pair ``i``'s path at ``nodes[ptr[i]:ptr[i+1]]`` (empty: none).

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> b = shortest_path_batch_core(g, np.array([0, 2], np.int32), np.array([2, 2], np.int32),
    ...                              threads=1, visible=None)
    >>> b.ptr.tolist(), b.nodes.tolist()
    ([0, 3, 4], [0, 1, 2, 2])
    """
    return _core.path_batch(graph.core, sources, targets, threads, visible)
