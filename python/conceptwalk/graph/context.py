"""The graph_context pipeline in the core: PPR from each query's seeds, the seeds dropped, an
optional node-type filter, the top ``k``, then hop counts and the reached-through seed of those
``k`` — for many queries in one call across C++ threads (one query is a batch of one).

Used by :mod:`conceptwalk.tools.context`, which builds the seeds and the result objects.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["context_batch"]


def context_batch(graph: LinkGraph, seed_ptr: npt.NDArray[np.int64], seeds: npt.NDArray[np.int32],
                  weights: npt.NDArray[np.float64], *, restart: float, eps: float, k: int,
                  keep_types: npt.NDArray[np.bool_] | None, threads: int,
                  visible: _core.VisibilityMask | None) -> tuple[Any, ...]:
    """Run the pipeline for queries ``i`` with seeds ``seeds[seed_ptr[i]:seed_ptr[i+1]]``.

    Parameters
    ----------
    graph : LinkGraph
    seed_ptr, seeds, weights : numpy arrays
        Per query, its seed node indices (ascending, visible) and positive weights.
    restart, eps : float
        Checked PPR parameters.
    k : int
        Results per query.
    keep_types : bool array over node-type codes, optional
        Keep only results whose node type is flagged.
    threads : int
    visible : VisibilityMask, optional

    Returns
    -------
    tuple
        ``(out_ptr, nodes, scores, hops, via, residual, pushes)``: per query ``i`` its results
        ``nodes[out_ptr[i]:out_ptr[i+1]]`` with scores, hop counts and reached-through seeds,
        and its residual and push count.
    """
    return tuple(_core.context_batch(
        graph.core, seed_ptr, seeds, weights, restart, eps, k,
        None if keep_types is None else graph.node_type_codes, keep_types, threads, visible))
