"""Shortest chains for one pair or many (across C++ threads), as node-index arrays for the tools
layer; :meth:`LinkGraph.shortest_path` is the id-level call."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["shortest_path_indices", "shortest_path_batch_indices"]


def shortest_path_indices(graph: LinkGraph, source: int, target: int,
                          visible: _core.VisibilityMask | None) -> npt.NDArray[np.int32]:
    """The lexicographically smallest shortest path (node indices, empty when none)."""
    path, _ = _core.shortest_path(graph.core, source, target, visible)
    return path


def shortest_path_batch_indices(graph: LinkGraph, sources: npt.NDArray[np.int32],
                                targets: npt.NDArray[np.int32], *, threads: int,
                                visible: _core.VisibilityMask | None) -> tuple[Any, ...]:
    """``(out_ptr, paths)``: pair ``i``'s path is ``paths[out_ptr[i]:out_ptr[i+1]]``."""
    return tuple(_core.path_batch(graph.core, sources, targets, threads, visible))
