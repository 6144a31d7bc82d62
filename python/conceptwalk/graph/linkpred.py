"""Resource allocation for one node or many (across C++ threads), as index arrays for the tools
layer; :meth:`LinkGraph.resource_allocation` is the id-level call."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["resource_allocation_arrays", "resource_allocation_batch_arrays"]


def resource_allocation_arrays(graph: LinkGraph, node: int, *, min_shared: int, k: int,
                               visible: _core.VisibilityMask | None) -> tuple[Any, ...]:
    """Suggestions for node index ``node`` (checked arguments; ``k=0`` = all).

    Returns
    -------
    tuple
        ``(targets, scores, shared_ptr, shared, candidates)``: targets by score descending then
        index, each with shared neighbours ``shared[shared_ptr[j]:shared_ptr[j+1]]`` (ascending),
        and how many candidates had at least ``min_shared`` shared neighbours.
    """
    return tuple(_core.resource_allocation(graph.core, node, min_shared, k, visible))


def resource_allocation_batch_arrays(graph: LinkGraph, nodes: npt.NDArray[np.int32], *, min_shared: int,
                                     k: int, threads: int,
                                     visible: _core.VisibilityMask | None) -> tuple[Any, ...]:
    """:func:`resource_allocation_arrays` for many nodes: ``(out_ptr, targets, scores, shared_ptr,
    shared, candidates)`` with query ``i``'s suggestions at ``out_ptr[i]:out_ptr[i+1]``."""
    return tuple(_core.suggest_batch(graph.core, nodes, min_shared, k, threads, visible))
