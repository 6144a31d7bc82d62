"""The bounded typed walk (for the concept-anchored wrap and its probe)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["typed_walk"]


def typed_walk(graph: LinkGraph, starts: npt.NDArray[np.int32], max_hops: int,
               expand_types: npt.NDArray[np.bool_], admit_types: npt.NDArray[np.bool_],
               node_type: npt.NDArray[np.int32] | None, expand_node_types: npt.NDArray[np.bool_] | None,
               admit_node_types: npt.NDArray[np.bool_] | None, *, max_edges: int, max_candidates: int,
               visible: _core.VisibilityMask | None) -> tuple[Any, ...]:
    """Walk 1..``max_hops`` hops from ``starts`` over edges of the flagged types.

    Returns
    -------
    tuple
        ``(nodes, entries, hops, candidates, edges_visited, truncated)`` as the core gives them:
        one row per recorded path (its nodes and adjacency entries, its hop count), the candidate
        nodes, the edges visited and whether a budget cut the walk.
    """
    return tuple(_core.typed_walk(graph.core, starts, max_hops, expand_types, admit_types, node_type,
                                  expand_node_types, admit_node_types, max_edges, max_candidates, visible))
