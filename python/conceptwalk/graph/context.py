"""The graph_context pipeline in the core (``csrc/src/context.cpp``): PPR from each query's seeds,
the seeds dropped, an optional node-type filter, the top ``k``, then hop counts and the
reached-through seed of those ``k`` -- for one query or many (across C++ threads).

Used by :mod:`conceptwalk.tools.context`, which builds the seeds and the result objects.

Examples
--------
>>> import numpy as np
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
>>> r = context_core(g, np.array([0], np.int32), np.ones(1), restart=0.25, eps=1e-4, k=5,
...                  keep_types=None, visible=None)
>>> [g.ids[i] for i in r.nodes.tolist()], r.hops.tolist()
(['b', 'c'], [1, 2])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph

__all__ = ["context_batch", "context_compiled", "context_core", "context_text_compiled"]

#: The compiled call itself, ``(graph.core, seeds, weights, restart, eps, k, node_type,
#: keep_types, visible) -> ContextResult`` (arguments checked by the caller): what
#: :func:`context_core` runs, without its Python frame.
context_compiled = _core.graph_context

#: The question-seeded compiled call, ``(graph.core, index.core, terms, n_hits, concepts, restart,
#: eps, k, node_type, keep_types, visible, stats, rank, max_hops) -> ContextResult``: BM25 over the
#: visible documents, 1/rank seeds plus the concepts, then the walk, in one call (arguments
#: checked by the caller; ``stats`` are the BM25 statistics of the same visible set).
context_text_compiled = _core.graph_context_text


def context_core(
    graph: LinkGraph,
    seeds: npt.NDArray[np.int32],
    weights: npt.NDArray[np.float64],
    restart: float,
    eps: float,
    k: int,
    keep_types: npt.NDArray[np.bool_] | None,
    visible: _core.VisibilityMask | None,
) -> _core.ContextResult:
    """Run the pipeline for one query.

    Parameters
    ----------
    graph : LinkGraph
    seeds : int32 array
        Seed node indices, strictly ascending and visible.
    weights : float64 array
        Their positive weights.
    restart, eps : float
        Checked PPR parameters.
    k : int
        Results wanted (>= 1).
    keep_types : bool array over node-type codes, optional
        Keep only results whose node type is flagged.
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.ContextResult
        ``nodes``, ``scores``, ``hops``, ``via`` (arrays), ``residual``, ``pushes``.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> context_core(g, np.array([1], np.int32), np.ones(1), restart=0.25, eps=1e-4, k=1,
    ...              keep_types=None, visible=None).via.tolist()
    [1]
    """
    if keep_types is None:
        return _core.graph_context(graph.core, seeds, weights, restart, eps, k, None, None, visible)
    return _core.graph_context(graph.core, seeds, weights, restart, eps, k, graph.node_type_codes, keep_types, visible)


def context_batch(
    graph: LinkGraph,
    seed_ptr: npt.NDArray[np.int64],
    seeds: npt.NDArray[np.int32],
    weights: npt.NDArray[np.float64],
    *,
    restart: float,
    eps: float,
    k: int,
    keep_types: npt.NDArray[np.bool_] | None,
    threads: int,
    visible: _core.VisibilityMask | None,
    rank: int = 0,
    max_hops: int = 2,
) -> _core.ContextBatch:
    """Run the pipeline for queries ``i`` with seeds ``seeds[seed_ptr[i]:seed_ptr[i+1]]``.

    Parameters
    ----------
    graph : LinkGraph
    seed_ptr, seeds, weights : numpy arrays
        Per query, its seed node indices (strictly ascending, visible) and positive weights.
    restart, eps : float
        Checked PPR parameters.
    k : int
        Results per query.
    keep_types : bool array over node-type codes, optional
        Keep only results whose node type is flagged.
    threads : int
    visible : VisibilityMask, optional
    rank : int
        0: by PPR; 1: by coverage within ``max_hops``, then PPR (checked by the caller).
    max_hops : int

    Returns
    -------
    conceptwalk._core.ContextBatch
        Query ``i``'s results at ``ptr[i]:ptr[i+1]`` of ``nodes``, ``scores``, ``hops`` and
        ``via``, and its ``residual[i]`` and ``pushes[i]``; each query's slice equals
        :func:`context_core`'s result.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> b = context_batch(g, np.array([0, 1, 2]), np.array([0, 2], np.int32), np.ones(2), restart=0.25,
    ...                   eps=1e-4, k=1, keep_types=None, threads=1, visible=None)
    >>> b.ptr.tolist(), b.nodes.tolist()
    ([0, 1, 2], [1, 1])
    """
    return _core.context_batch(
        graph.core,
        seed_ptr,
        seeds,
        weights,
        restart,
        eps,
        k,
        None if keep_types is None else graph.node_type_codes,
        keep_types,
        threads,
        visible,
        rank,
        max_hops,
    )
