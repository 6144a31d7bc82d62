"""Link suggestion by resource allocation: the one implementation behind both faces,
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

__all__ = ["Suggestion", "suggest", "suggest_batch", "suggestions", "suggestions_from"]

_resource_allocation = _core.resource_allocation


@dataclass(slots=True)
class Suggestion:
    """One suggested missing link, to the node ``id``, scored by resource allocation, with the
    visible neighbours it shares with the query node. The one suggestion type of the package:
    :meth:`LinkGraph.resource_allocation` and :func:`conceptwalk.link_suggest` both return it.

    Parameters
    ----------
    id : str
        The suggested node.
    type : str
        Its node type.
    title : str or None
        Its title.
    score : float
        ``sum over shared neighbours z of 1 / deg(z)`` (visible degrees).
    shared : tuple of str
        The shared neighbours' ids, ascending.
    shared_titles : tuple of (str or None)
        Their titles, aligned with ``shared``.

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``id``, ``type``, ``title``, ``score`` and ``shared`` as
        ``[{id, title}]``.

        Returns
        -------
        dict

        Examples
        --------
        >>> Suggestion("b", "NODE", "B", 1.0, (), ()).to_dict()["title"]
        'B'
        """
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "score": self.score,
            "shared": [{"id": i, "title": t} for i, t in zip(self.shared, self.shared_titles)],
        }


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
    return _resource_allocation(graph.core, graph.index(node, visible=vm, argument=argument), min_shared, k, vm)


def suggestions(graph: LinkGraph, r: _core.RAResult) -> list[Suggestion]:
    """The :class:`Suggestion` objects of one :func:`suggest` result.

    Parameters
    ----------
    graph : LinkGraph
    r : conceptwalk._core.RAResult

    Returns
    -------
    list of Suggestion

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> suggestions(g, suggest(g, "a", 1, 0, None))[0].id
    'b'
    """
    t = r.targets.tolist()
    return suggestions_from(graph, t, r.scores.tolist(), r.shared_ptr.tolist(), r.shared.tolist(), 0, len(t))


def suggestions_from(
    graph: LinkGraph,
    targets: Sequence[int],
    scores: Sequence[float],
    shared_ptr: Sequence[int],
    shared: Sequence[int],
    lo: int,
    hi: int,
) -> list[Suggestion]:
    """The suggestions ``lo:hi`` of core result lists (targets, scores, the shared-neighbour CSR):
    the one place a core result becomes :class:`Suggestion` objects.

    Parameters
    ----------
    graph : LinkGraph
    targets, scores : lists
        Suggested node indices and their scores.
    shared_ptr, shared : lists
        The shared neighbours of suggestion ``j`` at ``shared[shared_ptr[j]:shared_ptr[j+1]]``.
    lo, hi : int
        The range of suggestions to build (one query's slice of a batch).

    Returns
    -------
    list of Suggestion

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> suggestions_from(g, [1], [1.0], [0, 1], [2], 0, 1)[0].shared
    ('x',)
    """
    if hi <= lo:
        return []
    ids, titles, names, codes = graph.ids, graph.titles, graph.node_type_names, graph.node_type_codes_list
    base = shared_ptr[lo]
    seg = shared[base : shared_ptr[hi]]
    sh_ids = tuple(map(ids.__getitem__, seg))  # every shared neighbour once, then sliced per suggestion
    sh_titles = tuple(map(titles.__getitem__, seg))
    sp = shared_ptr[lo : hi + 1]
    return [
        Suggestion(ids[t], names[codes[t]], titles[t], s, sh_ids[a - base : b - base], sh_titles[a - base : b - base])
        for t, s, a, b in zip(targets[lo:hi], scores[lo:hi], sp, sp[1:])
    ]


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
