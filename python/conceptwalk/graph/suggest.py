"""Link suggestion by resource allocation (``method="ra"``) or rooted PageRank
(``method="ppr"``, :func:`ppr_suggest`): the one implementation behind both faces,
:meth:`LinkGraph.resource_allocation <conceptwalk.graph.LinkGraph.resource_allocation>` (a list
of :class:`Suggestion`) and the tool :func:`conceptwalk.link_suggest` (a lazy ``SuggestResult``):
the query node resolved under the caller's mask, the compiled call (``csrc/src/suggest.cpp``), and
the suggestions decoded from its arrays.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
>>> r = suggest(g, "a", 2, 0, None)
>>> [(s.id, s.shared) for s in suggestions(g, r)], r.candidates
([('b', ('x', 'y'))], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core

if TYPE_CHECKING:  # the graph module imports this one
    from .linkgraph import LinkGraph
    from .live import LiveGraph, LiveView

__all__ = [
    "Suggestion",
    "live_suggestions",
    "ppr_suggest",
    "ppr_suggest_batch",
    "suggest",
    "suggest_batch",
    "suggest_live",
    "suggestions",
]

_resource_allocation = _core.resource_allocation
_resource_allocation_id = _core.resource_allocation_id
_ppr_suggest = _core.ppr_suggest
_ppr_suggest_id = _core.ppr_suggest_id
_decode = _core.decode_suggestions


@dataclass(slots=True, repr=False)
class Suggestion:
    """One suggested missing link, to the node ``id``, scored by resource allocation (or by rooted
    PageRank), with the visible neighbours it shares with the query node. The one suggestion type
    of the package: :meth:`LinkGraph.resource_allocation` and :func:`conceptwalk.link_suggest`
    both return it.

    Parameters
    ----------
    id : str
        The suggested node.
    type : str
        Its node type.
    title : str or None
        Its title.
    score : float
        Resource allocation: ``sum over shared neighbours z of 1 / deg(z)`` (visible degrees).
        Rooted PageRank: the node's PPR score from the query node (the push's estimate).
    shared : tuple of str
        The shared neighbours' ids, ascending (rooted PageRank: empty beyond two hops).
    shared_titles : tuple of (str or None)
        Their titles, aligned with ``shared``.
    hops : int or None
        Rooted PageRank only: the node's hop distance from the query node (>= 2). ``None`` for
        resource allocation (always two hops there).
    path : tuple of str or None
        Rooted PageRank only: the shortest chain from the query node to this one (the
        lexicographically smallest, as ``graph_path`` gives it), ends included.

    Examples
    --------
    >>> s = Suggestion("b", "NODE", None, 0.5, ("x",), ("Ex",))
    >>> s.to_dict()
    {'id': 'b', 'type': 'NODE', 'title': None, 'score': 0.5, 'shared': [{'id': 'x', 'title': 'Ex'}]}
    """

    id: str
    type: str
    title: str | None
    score: float
    shared: tuple[str, ...]
    shared_titles: tuple[str | None, ...]
    hops: int | None = None
    path: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        extra = "" if self.hops is None else f", hops={self.hops!r}, path={self.path!r}"
        return (
            f"Suggestion(id={self.id!r}, type={self.type!r}, title={self.title!r}, score={self.score!r}, "
            f"shared={self.shared!r}, shared_titles={self.shared_titles!r}{extra})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``id``, ``type``, ``title``, ``score`` and ``shared`` as
        ``[{id, title}]``; rooted PageRank suggestions also ``hops`` and ``path``.

        Returns
        -------
        dict

        Examples
        --------
        >>> Suggestion("b", "NODE", "B", 1.0, (), ()).to_dict()["title"]
        'B'
        """
        d: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "score": self.score,
            "shared": [{"id": i, "title": t} for i, t in zip(self.shared, self.shared_titles)],
        }
        if self.hops is not None:
            d["hops"] = self.hops
            d["path"] = list(self.path or ())
        return d


def suggest(
    graph: LinkGraph, node: str, min_shared: int, k: int, vm: _core.VisibilityMask | None, argument: str = "node"
) -> _core.RAResult:
    """The suggestions for node id ``node`` as the core's arrays (``min_shared`` and ``k`` already
    checked; ``k=0`` = all).

    Parameters
    ----------
    graph : LinkGraph
    node : str
        A node id; unknown and hidden ids raise the same NotFoundError (naming ``argument``).
    min_shared : int
        Shared neighbours a candidate needs (>= 1).
    k : int
        Top ``k`` (0 = all).
    vm : VisibilityMask or None
        The caller's mask.
    argument : str
        The argument name an error names.

    Returns
    -------
    conceptwalk._core.RAResult
        ``targets`` by score descending then index, ``scores``, the shared neighbours of target
        ``j`` at ``shared[shared_ptr[j]:shared_ptr[j+1]]`` (ascending), and ``candidates``.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> suggest(g, "a", 1, 1, None).shared.tolist()
    [2]
    """
    r = _resource_allocation_id(graph.core, graph.id_index, node, min_shared, k, vm)
    if r is None:  # not an exact str id of a visible node: the checked path (raises, or a str subclass)
        r = _resource_allocation(graph.core, graph.index(node, visible=vm, argument=argument), min_shared, k, vm)
    return r


def suggest_live(graph: LiveGraph, slot: int, min_shared: int, k: int, view: LiveView | None = None) -> _core.RAResult:
    """:func:`suggest` over a live graph (base plus delta), for the node at ``slot`` (visible to
    ``view``'s caller; None: all access): the same targets, scores and shared neighbours as on a
    fresh build of the same graph, with slots for node indices.

    Parameters
    ----------
    graph : LiveGraph
    slot : int
    min_shared, k : int
        As for :func:`suggest` (checked by the caller).
    view : LiveView, optional

    Returns
    -------
    conceptwalk._core.RAResult

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> from conceptwalk.graph.live import LiveGraph
    >>> g = LiveGraph.over(LinkGraph.from_edges([("a", "x")]), version=0).grown(
    ...     {"b": ("NODE", None, None, None)}, [("b", "x")], version=1)
    >>> [s.id for s in live_suggestions(g, suggest_live(g, g.slot("a"), 1, 0))]
    ['b']
    """
    return _resource_allocation(graph.core, slot, min_shared, k, None if view is None else view.core)


def live_suggestions(graph: LiveGraph, r: _core.RAResult) -> list[Suggestion]:
    """The :class:`Suggestion` objects of a :func:`suggest_live` result.

    Parameters
    ----------
    graph : LiveGraph
    r : conceptwalk._core.RAResult

    Returns
    -------
    list of Suggestion
    """
    at = graph.node_at
    ptr = r.shared_ptr.tolist()
    shared = r.shared.tolist()
    out = []
    for j, (b, score) in enumerate(zip(r.targets.tolist(), r.scores.tolist())):
        nodes = [at(x) for x in shared[ptr[j] : ptr[j + 1]]]
        out.append(Suggestion(*at(b), score, tuple(x[0] for x in nodes), tuple(x[2] for x in nodes)))
    return out


def ppr_suggest(
    graph: LinkGraph,
    node: str,
    restart: float,
    eps: float,
    k: int,
    vm: _core.VisibilityMask | None,
    argument: str = "node",
) -> _core.RAResult:
    """Rooted PageRank suggestions for node id ``node`` as the core's arrays (arguments already
    checked; ``k=0`` = all): the visible nodes other than ``node`` and its neighbours with a PPR
    score from ``node`` alone, by score descending then index, each with its hops, shared
    neighbours (two hops) and shortest chain.

    Parameters
    ----------
    graph : LinkGraph
    node : str
        A node id; unknown and hidden ids raise the same NotFoundError (naming ``argument``).
    restart, eps : float
        The push's parameters, as for ``graph_context`` (a hub lowers eps for itself the same way).
    k : int
        Top ``k`` (0 = all).
    vm : VisibilityMask or None
    argument : str

    Returns
    -------
    conceptwalk._core.RAResult
        As for :func:`suggest`, plus ``hops``, the chains at ``path[path_ptr[j]:path_ptr[j+1]]``,
        ``eps`` (the eps reached) and ``fill_spent``.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("x", "b"), ("b", "c")])
    >>> r = ppr_suggest(g, "a", 0.25, 1e-4, 0, None)
    >>> [s.id for s in suggestions(g, r)], r.hops.tolist()
    (['b', 'c'], [2, 3])
    >>> suggestions(g, r)[1].path
    ('a', 'x', 'b', 'c')
    """
    r = _ppr_suggest_id(graph.core, graph.id_index, node, restart, eps, k, vm)
    if r is None:  # not an exact str id of a visible node: the checked path (raises, or a str subclass)
        r = _ppr_suggest(graph.core, graph.index(node, visible=vm, argument=argument), restart, eps, k, vm)
    return r


def ppr_suggest_batch(
    graph: LinkGraph,
    nodes: Sequence[str],
    *,
    restart: float,
    eps: float,
    k: int,
    threads: int,
    visible: _core.VisibilityMask | None,
    argument: str = "node",
) -> _core.RABatch:
    """:func:`ppr_suggest` for many node ids, across C++ threads (arguments checked); every id is
    resolved before any work.

    Parameters
    ----------
    graph : LinkGraph
    nodes : list of str
    restart, eps, k, argument
        As for :func:`ppr_suggest`.
    threads : int
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.RABatch
        Query ``i``'s suggestions at ``ptr[i]:ptr[i+1]``, with ``hops``, ``path_ptr``/``path``
        per suggestion and ``eps``, ``fill_spent`` per query.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> ppr_suggest_batch(g, ["a", "b"], restart=0.25, eps=1e-4, k=0, threads=1, visible=None).targets.tolist()
    [1, 0]
    """
    idx = np.array([graph.index(c, visible=visible, argument=argument) for c in nodes], dtype=np.int32)
    return _core.ppr_suggest_batch(graph.core, idx, restart, eps, k, threads, visible)


def suggestions(
    graph: LinkGraph, r: _core.RAResult | _core.RABatch, lo: int = 0, hi: int | None = None
) -> list[Suggestion]:
    """The :class:`Suggestion` objects ``lo:hi`` (default: all) of a :func:`suggest` or
    :func:`suggest_batch` result: the one place a core result becomes suggestions (one compiled
    call, ``_core.decode_suggestions``, reads the graph's ids, titles and node types).

    Parameters
    ----------
    graph : LinkGraph
    r : conceptwalk._core.RAResult or conceptwalk._core.RABatch
    lo, hi : int
        The range of suggestions (one query's slice ``ptr[i]:ptr[i+1]`` of a batch).

    Returns
    -------
    list of Suggestion

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> suggestions(g, suggest(g, "a", 1, 0, None))[0]
    Suggestion(id='b', type='NODE', title=None, score=0.5, shared=('x',), shared_titles=(None,))
    >>> b = suggest_batch(g, ["a", "b"], min_shared=1, k=0, threads=1, visible=None)
    >>> [s.id for s in suggestions(g, b, 1, 2)]
    ['a']
    """
    return _decode(
        Suggestion,
        graph.ids,
        graph.titles,
        graph.node_type_names,
        graph.node_type_codes_list,
        r,
        lo,
        len(r.targets) if hi is None else hi,
    )


def suggest_batch(
    graph: LinkGraph,
    nodes: Sequence[str],
    *,
    min_shared: int,
    k: int,
    threads: int,
    visible: _core.VisibilityMask | None,
    argument: str = "node",
) -> _core.RABatch:
    """:func:`suggest` for many node ids, across C++ threads (``min_shared``, ``k`` and
    ``threads`` checked); every id is resolved before any work.

    Parameters
    ----------
    graph : LinkGraph
    nodes : list of str
        Node ids, one per query (unknown and hidden ids raise NotFoundError naming ``argument``).
    min_shared, k, argument
        As for :func:`suggest`.
    threads : int
    visible : VisibilityMask, optional

    Returns
    -------
    conceptwalk._core.RABatch
        Query ``i``'s suggestions at ``ptr[i]:ptr[i+1]`` of ``targets`` and ``scores``, the
        shared-neighbour CSR over all targets, and per-query ``candidates``.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> suggest_batch(g, ["a", "b"], min_shared=1, k=0, threads=1, visible=None).targets.tolist()
    [1, 0]
    """
    idx = np.array([graph.index(c, visible=visible, argument=argument) for c in nodes], dtype=np.int32)
    return _core.suggest_batch(graph.core, idx, min_shared, k, threads, visible)
