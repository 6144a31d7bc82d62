"""Resource allocation for one node or many (across C++ threads), as core results for the tools
layer; :meth:`LinkGraph.resource_allocation` is the id-level call.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
>>> r = resource_allocation_core(g, g.index("a"), min_shared=2, k=0, visible=None)
>>> [g.ids[t] for t in r.targets.tolist()], r.candidates
(['b'], 1)
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["resource_allocation_batch_core", "resource_allocation_compiled", "resource_allocation_core"]

#: The compiled call itself, ``(graph.core, node, min_shared, k, visible) -> RAResult`` (arguments
#: checked by the caller): what :func:`resource_allocation_core` runs, without its Python frame,
#: for the tools' per-call path.
resource_allocation_compiled = _core.resource_allocation


def resource_allocation_core(
    graph: LinkGraph, node: int, min_shared: int, k: int, visible: _core.VisibilityMask | None
) -> _core.RAResult:
    """Suggestions for node index ``node`` (checked arguments; ``k=0`` = all).

    Parameters
    ----------
    graph : LinkGraph
    node : int
        A visible node index.
    min_shared : int
        Shared neighbours a candidate needs (>= 1).
    k : int
        Top ``k`` (0 = all).
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.RAResult
        ``targets`` by score descending then index, ``scores``, the shared neighbours of target
        ``j`` at ``shared[shared_ptr[j]:shared_ptr[j+1]]`` (ascending), and ``candidates``.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> resource_allocation_core(g, 0, min_shared=1, k=1, visible=None).shared.tolist()
    [2]
    """
    return _core.resource_allocation(graph.core, node, min_shared, k, visible)


def resource_allocation_batch_core(
    graph: LinkGraph,
    nodes: npt.NDArray[np.int32],
    *,
    min_shared: int,
    k: int,
    threads: int,
    visible: _core.VisibilityMask | None,
) -> _core.RABatch:
    """:func:`resource_allocation_core` for many nodes, across C++ threads.

    Parameters
    ----------
    graph : LinkGraph
    nodes : int32 array
        Visible node indices, one per query.
    min_shared, k, visible
        As for :func:`resource_allocation_core`.
    threads : int

    Returns
    -------
    conceptwalk._core.RABatch
        Query ``i``'s suggestions at ``ptr[i]:ptr[i+1]`` of ``targets`` and ``scores``, the
        shared-neighbour CSR over all targets, and per-query ``candidates``.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> resource_allocation_batch_core(g, np.array([0, 1], np.int32), min_shared=1, k=0, threads=1,
    ...                                visible=None).targets.tolist()
    [1, 0]
    """
    return _core.suggest_batch(graph.core, nodes, min_shared, k, threads, visible)
