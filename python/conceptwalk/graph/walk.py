"""The bounded typed walk (for the concept-anchored wrap and its probe): best-first, with the
candidate budget shared across the start nodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from .linkgraph import LinkGraph
from .live import LiveGraph, LiveView, WalkEdges

__all__ = ["typed_walk", "typed_walk_live", "WalkResult"]

#: The core's result class: read-only arrays with named fields (see :func:`typed_walk`).
WalkResult = _core.WalkResult


def typed_walk(
    graph: LinkGraph,
    starts: npt.NDArray[np.int32],
    max_hops: int,
    expand_types: npt.NDArray[np.bool_],
    admit_types: npt.NDArray[np.bool_],
    node_type: npt.NDArray[np.int32] | None,
    expand_node_types: npt.NDArray[np.bool_] | None,
    admit_node_types: npt.NDArray[np.bool_] | None,
    *,
    max_edges: int,
    max_candidates: int,
    visible: _core.VisibilityMask | None,
    start_weights: npt.NDArray[np.float64] | None = None,
    edge_weights: npt.NDArray[np.float64] | None = None,
    hop_decay: float = 1.0,
    min_share: float = 0.5,
    max_paths: int = 0,
    render: tuple[list[str], Sequence[str], dict[int, Any], Callable[[int], Any], npt.NDArray[np.int32]] | None = None,
) -> _core.WalkResult:
    """Walk 1..``max_hops`` hops from ``starts`` over edges of the flagged types; keep the best
    ``max_candidates`` candidates, the budget shared across the starts.

    A path's score is its start's weight x ``hop_decay ** (hops - 1)`` x the weight of the edge
    representing each hop (among the pair's edges whose type passes that hop's gate -- expansion
    for inner hops, admission for the last -- the one with the highest weight, an edge without
    one ranking lowest and counting 1, then the lowest edge id). A candidate's score is its best
    path's. Each start is guaranteed ``floor(min_share * max_candidates / n)`` of the budget and
    the rest is shared in proportion to the weights; what a start cannot use goes to the best
    remaining candidates. Candidates come out by score, then the number of starts reaching
    them, then the best edge-weight product, then fewer hops, then index.

    Parameters
    ----------
    graph : LinkGraph
    starts : int32 array
        Visible node indices (duplicates collapse, keeping the largest weight).
    max_hops : int
        1 .. :data:`conceptwalk._core.WALK_MAX_HOPS_LIMIT`.
    expand_types, admit_types : bool arrays
        Per edge type code: may an inner hop / the last hop use it.
    node_type, expand_node_types, admit_node_types : arrays or None
        Optional node-type filters for the nodes walked through and the candidates.
    max_edges : int
        Visible adjacency entries the walk may examine (shared over the starts, strongest first).
    max_candidates : int
        Candidates kept.
    visible : VisibilityMask or None
        The caller's mask: the walk runs as on the graph with the hidden nodes deleted.
    start_weights : float64 array, optional
        Per start, finite and > 0 (default 1).
    edge_weights : float64 array, optional
        Per canonical edge (NaN = none), e.g. the extraction confidences.
    hop_decay : float
        In (0, 1].
    min_share : float
        In [0, 1].
    max_paths : int
        Paths returned per candidate, best first (0 = all); ``path_count`` counts all of them.
    render : tuple, optional
        ``(ids, type_names, provenance_cache, provenance_miss, except_nodes)``: also render, in
        this call, the paths of every kept candidate not in ``except_nodes`` (int32 node
        indices) as :meth:`WalkResult.render_paths` does; read them from ``result.rendered``.

    Returns
    -------
    WalkResult
        ``candidates``, ``scores``, ``reach``, ``min_hops``, ``path_count``, ``path_ptr`` (per
        candidate), ``path_nodes``, ``path_edges``, ``path_hops``, ``path_scores`` (per returned
        path), ``edges_visited``, ``candidates_found``, ``cut_by_edges``, ``cut_by_candidates``,
        ``truncated``.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("c", "a", "T"), ("c", "b", "T"), ("d", "b", "T")])
    >>> flags = np.ones(1, dtype=bool)
    >>> r = typed_walk(g, np.array([g.index("c"), g.index("d")], np.int32), 1, flags, flags, None, None, None,
    ...                max_edges=100, max_candidates=5, visible=None, start_weights=np.array([1.0, 0.5]))
    >>> [g.ids[i] for i in r.candidates], r.scores.tolist(), r.reach.tolist()  # b: tied, reached twice
    (['b', 'a'], [1.0, 1.0], [2, 1])
    """
    return _core.typed_walk(
        graph.core,
        starts,
        max_hops,
        expand_types,
        admit_types,
        node_type,
        expand_node_types,
        admit_node_types,
        max_edges,
        max_candidates,
        visible,
        start_weights,
        edge_weights,
        hop_decay,
        min_share,
        max_paths,
        render,
    )


def typed_walk_live(
    graph: LiveGraph,
    edges: WalkEdges,
    starts: npt.NDArray[np.int32],
    max_hops: int,
    expand_types: npt.NDArray[np.bool_],
    admit_types: npt.NDArray[np.bool_],
    node_type: npt.NDArray[np.int32] | None,
    delta_node_type: npt.NDArray[np.int32] | None,
    expand_node_types: npt.NDArray[np.bool_] | None,
    admit_node_types: npt.NDArray[np.bool_] | None,
    *,
    max_edges: int,
    max_candidates: int,
    visible: LiveView | None,
    start_weights: npt.NDArray[np.float64] | None = None,
    edge_weights: npt.NDArray[np.float64] | None = None,
    hop_decay: float = 1.0,
    min_share: float = 0.5,
    max_paths: int = 0,
    render: tuple[Any, ...] | None = None,
) -> _core.WalkResult:
    """:func:`typed_walk` over a live graph (its base plus the delta written since): the walk,
    paths and order a fresh build of the same graph gives, nodes as slots.

    Parameters
    ----------
    graph : LiveGraph
    edges : WalkEdges
        ``graph.walk_edges()``: the edges of every pair the delta wrote one to. The edge of its
        entry ``i`` is reported as edge id ``graph.base.num_edges + i``.
    starts : int32 array
        Visible slots.
    max_hops : int
    expand_types, admit_types : bool arrays
        Per edge type code of ``edges.type_names``.
    node_type : int32 array or None
        The base's node type codes (one per base node) ...
    delta_node_type : int32 array or None
        ... and the new slots' (codes of the names :meth:`LiveGraph.type_filter` extends).
    expand_node_types, admit_node_types : bool arrays or None
        Per node type code.
    max_edges, max_candidates : int
    visible : LiveView or None
        The caller's view of ``graph`` (None: all access).
    start_weights : float64 array, optional
    edge_weights : float64 array, optional
        Per base canonical edge (the listed edges carry their own).
    hop_decay, min_share : float
    max_paths : int
    render : tuple, optional
        ``(base ids, new slots' ids, edge type names, provenance_cache, provenance_miss,
        except_nodes)``: also render the kept candidates' paths in this call.

    Returns
    -------
    WalkResult

    Examples
    --------
    >>> from conceptwalk.graph.live import LiveGraph
    >>> base = LinkGraph.from_edges([("c", "a", "T")])
    >>> g = LiveGraph.over(base, version=0).grown({"b": ("NODE", None, None, None)}, [("c", "b", "T", (None,) * 5)], version=1)
    >>> flags = np.ones(1, dtype=bool)
    >>> r = typed_walk_live(g, g.walk_edges(), np.array([g.slot("c")], np.int32), 1, flags, flags, None, None, None, None,
    ...                     max_edges=100, max_candidates=5, visible=None)
    >>> [g.node_at(s)[0] for s in r.candidates]  # a and b tied: in id order
    ['a', 'b']
    """
    return _core.typed_walk_live(
        graph.core,
        edges.keys,
        edges.ptr,
        edges.typedir,
        edges.weights,
        starts,
        max_hops,
        expand_types,
        admit_types,
        node_type,
        delta_node_type,
        expand_node_types,
        admit_node_types,
        max_edges,
        max_candidates,
        None if visible is None else visible.core,
        start_weights,
        edge_weights,
        hop_decay,
        min_share,
        max_paths,
        render,
    )
