"""What the three tools share: the one graph-source protocol (a
:class:`~conceptwalk.graph.LinkGraph`, or anything with ``graph()`` such as a knowledge base), the
caller check, and the query offsets of batch calls.

:class:`GraphSource` is the single "knowledge base or graph" protocol of the package: the tools,
the wrap (:mod:`conceptwalk.wrap`) and the MCP server all classify their source with
:func:`source_graph` / :func:`source_kind`, by attribute (a runtime ``Protocol`` ``isinstance``
check costs more than a core call).

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b")])
>>> source_graph(g) == (g, None), source_kind(g)
(True, 'graph')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from ..errors import InputError, NotFoundError
from ..graph import Caller, LinkGraph
from ..graph.live import LiveGraph, LiveView
from ..graph.ppr import offsets
from ..graph.scopes import warn_unknown_scopes

__all__ = [
    "live_slots",
    "GraphSource",
    "SearchFn",
    "check_caller",
    "default_concepts",
    "offsets",
    "source_graph",
    "source_kind",
    "source_search",
]

#: A flat search: ``fn(text, k)`` returns hits (ids, ``(id, score)`` pairs or dicts with ``id``).
SearchFn = Callable[[str, int], Sequence[Any]]


class GraphSource(Protocol):
    """Anything the tools, the wrap and the MCP server read a graph from, besides a bare
    :class:`LinkGraph`: ``graph()`` returns the current snapshot; a source that can search
    (such as :class:`conceptwalk.kb.KnowledgeBase`) also has ``search(text, k)``, which seeds
    free-text questions.

    Examples
    --------
    >>> class Static:
    ...     def __init__(self, g): self.g = g
    ...     def graph(self): return self.g
    ...     def search(self, text, k=10): return []
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> source_graph(Static(g))[0] is g
    True
    """

    def graph(self) -> LinkGraph:
        """The current graph snapshot.

        Returns
        -------
        LinkGraph
        """
        ...

    def search(self, text: str, k: int = 10) -> Sequence[Any]:
        """Full-text hits for ``text``, best first.

        Parameters
        ----------
        text : str
        k : int

        Returns
        -------
        sequence of hits (ids, ``(id, score)`` pairs or dicts with ``id``)
        """
        ...


def source_kind(source: Any) -> str:
    """``"graph"`` for a :class:`LinkGraph`, ``"store"`` for a :class:`GraphSource` (anything with
    a callable ``graph``); anything else is refused.

    Parameters
    ----------
    source : LinkGraph or GraphSource

    Returns
    -------
    str

    Raises
    ------
    InputError
        Neither a LinkGraph nor a graph source.

    Examples
    --------
    >>> source_kind(LinkGraph.from_edges([("a", "b")]))
    'graph'
    """
    if isinstance(source, LinkGraph):
        return "graph"
    if callable(getattr(source, "graph", None)):
        return "store"
    raise InputError(f"source must be a LinkGraph or a knowledge base, got {type(source).__name__}")


def source_graph(source: Any) -> tuple[LinkGraph, Any]:
    """``(graph, source or None)`` of a tool's ``source``.

    Parameters
    ----------
    source : LinkGraph or GraphSource
        A :class:`LinkGraph` is used as is; anything else must have ``graph()``.

    Returns
    -------
    tuple
        The graph snapshot, and the source itself when it is not a bare graph (else None).

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> source_graph(g)[1] is None
    True
    """
    if type(source) is LinkGraph:
        return source, None
    if source_kind(source) == "graph":
        return source, None
    return source.graph(), source


def source_search(source: Any) -> SearchFn | None:
    """The source's ``search`` when it has one (a knowledge base), else None.

    Parameters
    ----------
    source : LinkGraph or GraphSource

    Returns
    -------
    callable or None

    Examples
    --------
    >>> source_search(LinkGraph.from_edges([("a", "b")])) is None
    True
    """
    if isinstance(source, LinkGraph):
        return None
    fn = getattr(source, "search", None)
    return fn if callable(fn) else None


def check_caller(caller: Any) -> Caller:
    """``caller`` must be a :class:`~conceptwalk.graph.Caller` (there is no implicit all-access).

    Parameters
    ----------
    caller : Caller

    Returns
    -------
    Caller

    Raises
    ------
    InputError
        Anything else, None included.

    Examples
    --------
    >>> check_caller(Caller.public()).scopes
    frozenset()
    """
    if type(caller) is Caller or isinstance(caller, Caller):
        return caller
    raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")


def default_concepts(g: LinkGraph, caller: Caller, node_types: Iterable[str] | None = ("CONCEPT",)) -> list[str]:
    """The concepts a batch runs over when it is given none: every node ``caller`` sees whose
    type is in ``node_types`` (``None``: every type), ascending by id. The in-process and the
    Dask ``link_suggest_batch`` share it.

    Parameters
    ----------
    g : LinkGraph
    caller : Caller
    node_types : iterable of str or None
        A list of type names (a single string is refused).

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        ``node_types`` is a single string.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "type": "CONCEPT"},
    ...                                               {"id": "c", "type": "CONCEPT", "scopes": ["t"]}])
    >>> default_concepts(g, Caller.public()), default_concepts(g, Caller.all_access(), None)
    (['a'], ['a', 'b', 'c'])
    """
    vm = caller.visibility(g)
    keep = np.ones(g.num_nodes, dtype=bool) if vm is None else np.asarray(vm.mask, dtype=bool).copy()
    if node_types is not None:
        if isinstance(node_types, str):
            raise InputError("node_types must be a list of type names, not a single string")
        wanted = set(node_types)
        tmask = np.array([t in wanted for t in g.node_type_names], dtype=bool)
        keep &= tmask[np.asarray(g.node_type_codes)] if tmask.size else False
    ids = g.ids
    return [ids[i] for i in np.flatnonzero(keep).tolist()]


def live_slots(
    source: Any, caller: Caller, ids: Sequence[Any], arguments: Sequence[str]
) -> tuple[LiveGraph, LiveView | None, list[int]] | None:
    """The source's live graph (``source.live_graph()``, a knowledge base's: its base plus the
    delta written since, brought forward at the cost of the change), the caller's view of it
    (None: all access) and the slots of ``ids``; or None, and the tool takes the snapshot path: a
    bare graph or a source without one, no ids or a visibility the delta does not express
    (:meth:`~conceptwalk.graph.live.LiveGraph.view`). A scope the caller names that no node
    carries is warned about as the snapshot path warns.

    Parameters
    ----------
    source : LinkGraph or GraphSource
    caller : Caller
    ids : sequence
        Node ids.
    arguments : sequence of str
        Per id, the argument name the tool's snapshot path names it by when it is unknown or
        hidden: the first such id raises that :class:`~conceptwalk.errors.NotFoundError` here
        (the same type and text, for a tool whose snapshot path checks the ids in this order
        before anything else that can fail), without the snapshot path's full state.

    Raises
    ------
    NotFoundError
        The first id unknown or hidden from the caller.

    Returns
    -------
    tuple of (LiveGraph, LiveView or None, list of int), or None

    Examples
    --------
    >>> from conceptwalk.kb import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_edges([("a", "b")])
    >>> live, view, slots = live_slots(kb, Caller.all_access(), ["b"], ["node"])
    >>> view, slots, live_slots(LinkGraph.from_edges([("a", "b")]), Caller.all_access(), ["b"], ["node"])
    (None, [1], None)
    """
    if isinstance(source, LinkGraph) or not ids:
        return None
    fn = getattr(source, "live_graph", None)
    if not callable(fn):
        return None
    live = fn()
    if not isinstance(live, LiveGraph):
        return None
    view = None
    if caller.scopes is not None:
        view = live.view(caller.scopes)
        if view is None:
            return None
        warn_unknown_scopes(source, live, caller)  # (what the snapshot path warns about first)
    slots = []
    for i, x in enumerate(ids):
        s = live.slot(x) if isinstance(x, str) else None
        if s is None or (view is not None and not view.visible(s)):
            raise NotFoundError(x, arguments[i])
        slots.append(s)
    return live, view, slots
