"""The graph_context pipeline in the core (``csrc/src/context.cpp``): PPR from each query's seeds,
the seeds dropped, an optional node-type filter, the top ``k``, then hop counts and the
reached-through seed of those ``k`` -- from seeds (:func:`context`), from a question's terms with
BM25 over the caller's visible documents first (:func:`context_text`), or for many queries across
C++ threads (:func:`context_batch`). The one implementation of the pipeline's Python side: the
type filter turned into the core's arguments, the question tokenised, the caller's view's BM25
statistics passed on. :mod:`conceptwalk.tools.context` builds the seeds and the result objects.

Examples
--------
>>> import numpy as np
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
>>> r = context(g, np.array([0], np.int32), np.ones(1), 0.25, 1e-4, 5, None, None)
>>> [g.ids[i] for i in r.nodes.tolist()], r.hops.tolist()
(['b', 'c'], [1, 2])
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from typing import TYPE_CHECKING

from .. import _core
from .linkgraph import LinkGraph
from .live import LiveGraph, LiveView

if TYPE_CHECKING:
    from .text import TextIndex
    from .view import View

__all__ = ["context", "context_batch", "context_live", "context_text"]

_graph_context = _core.graph_context
_graph_context_text = _core.graph_context_text


def context(
    graph: LinkGraph,
    seeds: npt.NDArray[np.int32],
    weights: npt.NDArray[np.float64],
    restart: float,
    eps: float,
    k: int,
    keep_types: npt.NDArray[np.bool_] | None,
    visible: _core.VisibilityMask | None,
    rank: int = 0,
    max_hops: int = 2,
    max_visits: int | None = None,
) -> _core.ContextResult:
    """Run the pipeline for one query from its seeds (arguments checked by the caller).

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
    rank : int
        0: by PPR; 1: by coverage within ``max_hops``, then PPR.
    max_hops : int
    max_visits : int, optional
        The coverage pass's work budget (default: the core's).

    Returns
    -------
    conceptwalk._core.ContextResult
        ``nodes``, ``scores``, ``hops``, ``via`` (arrays), ``residual``, ``pushes``, ...

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> context(g, np.array([1], np.int32), np.ones(1), 0.25, 1e-4, 1, None, None).via.tolist()
    [1]
    """
    codes = None if keep_types is None else graph.node_type_codes
    if max_visits is not None:
        return _graph_context(
            graph.core, seeds, weights, restart, eps, k, codes, keep_types, visible, rank, max_hops, max_visits
        )
    if rank:
        return _graph_context(graph.core, seeds, weights, restart, eps, k, codes, keep_types, visible, rank, max_hops)
    return _graph_context(graph.core, seeds, weights, restart, eps, k, codes, keep_types, visible)


def context_live(
    graph: LiveGraph,
    seeds: npt.NDArray[np.int32],
    weights: npt.NDArray[np.float64],
    restart: float,
    eps: float,
    k: int,
    rank: int = 0,
    max_hops: int = 2,
    visible: LiveView | None = None,
    types: tuple[npt.NDArray[np.bool_], npt.NDArray[np.int32]] | None = None,
) -> _core.ContextResult:
    """:func:`context` over a live graph (base plus delta): the seeds are slots in id order
    (:meth:`LiveGraph.sorted_slots`), visible to the caller of ``visible``
    (:meth:`LiveGraph.view`; None: all access); the result equals :func:`context`'s over a fresh
    build of the same graph, bit for bit, with slots for node indices.

    Parameters
    ----------
    graph : LiveGraph
    seeds : int32 array
        Seed slots, strictly ascending in id order.
    weights : float64 array
    restart, eps, k, rank, max_hops
        As for :func:`context` (checked by the caller).
    visible : LiveView, optional
    types : (keep, delta codes), optional
        A node-type filter (:meth:`LiveGraph.type_filter`).

    Returns
    -------
    conceptwalk._core.ContextResult

    Examples
    --------
    >>> g = LiveGraph.over(LinkGraph.from_edges([("a", "c")]), version=0).grown({"b": ("NODE", None, None, None)}, [("b", "c")], version=1)
    >>> r = context_live(g, np.array([0], np.int32), np.ones(1), 0.25, 1e-4, 5)
    >>> [g.node_at(s)[0] for s in r.nodes.tolist()], r.hops.tolist()
    (['c', 'b'], [1, 2])
    """
    vis = None if visible is None else visible.core
    if types is not None:
        keep, delta_codes = types
        return _graph_context(
            graph.core, seeds, weights, restart, eps, k, graph.base.node_type_codes, keep, vis, rank, max_hops,
            delta_node_type=delta_codes,
        )  # fmt: skip
    if rank or vis is not None:
        return _graph_context(graph.core, seeds, weights, restart, eps, k, None, None, vis, rank, max_hops)
    return _graph_context(graph.core, seeds, weights, restart, eps, k)


def context_text(
    view: View,
    index: TextIndex,
    question: str,
    n_hits: int,
    concepts: list[int],
    restart: float,
    eps: float,
    k: int,
    keep_types: npt.NDArray[np.bool_] | None,
    rank: int,
    max_hops: int,
) -> _core.ContextResult:
    """Run the pipeline for one question in one compiled call: BM25 over the documents the view's
    caller sees (the question tokenised once, here; the view's statistics of ``index``), the
    top ``n_hits`` hits as seeds weighted 1/rank plus the ``concepts`` (weight 1), then the walk.

    Parameters
    ----------
    view : View
        The caller's view of the graph ``index`` belongs to.
    index : TextIndex
        The text index of the same state as the graph.
    question : str
    n_hits : int
    concepts : list of int
        Concept node indices (visible).
    restart, eps, k, keep_types, rank, max_hops
        As for :func:`context` (checked).

    Returns
    -------
    conceptwalk._core.ContextResult
        Also ``hits`` (the seeds from the search, by rank) and ``seeded``.

    Examples
    --------
    >>> from conceptwalk.graph.text import TextIndex
    >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "title": "graph walks"}])
    >>> r = context_text(g.view_for_scopes(None), TextIndex.build(g.titles), "walks", 5, [], 0.25, 1e-4, 5, None, 0, 2)
    >>> r.hits.tolist(), [g.ids[i] for i in r.nodes.tolist()]
    ([0], ['b'])
    """
    graph = view.graph
    return _graph_context_text(
        graph.core,
        index.core,
        index.query_terms(question),
        n_hits,
        np.asarray(concepts, dtype=np.int32) if concepts else None,
        restart,
        eps,
        k,
        None if keep_types is None else graph.node_type_codes,
        keep_types,
        view.mask,
        view.text_stats(index),
        rank,
        max_hops,
    )


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
        :func:`context`'s result.

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
