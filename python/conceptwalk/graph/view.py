"""A caller's view of one graph: everything a query reads that depends on who asks.

:meth:`LinkGraph.view(caller) <conceptwalk.graph.LinkGraph.view>` returns a :class:`View`: the
caller's prepared visibility mask (with the visible degrees and rows the core reads), the BM25
statistics of a text index over the documents the caller sees, and a memo in which the layers
above keep what they derive per caller (the wrap's provenance presence counts, for example). It
is made once per (graph, caller) and kept in the graph's bounded LRU; every per-caller cache of
the package lives in a view and dies with it, so there is no second cache keyed by caller that
could disagree with it or outlive it. A :class:`~conceptwalk.kb.state.StoreState` (one committed
state of a store) gives the same view through :meth:`StoreState.view
<conceptwalk.kb.state.StoreState.view>`.

A view is immutable to its readers: the mask never changes, and a memo entry, once made, is the
one every later reader gets (made under the view's lock, so two threads asking at once make it
once).

Examples
--------
>>> from conceptwalk.graph import LinkGraph, Caller
>>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "b", "scopes": ["t1"]}])
>>> v = g.view(Caller.public())
>>> v.mask.mask.tolist(), v.caller, g.view(Caller.public()) is v
([True, False], Caller(scopes=frozenset()), True)
>>> g.view(Caller.all_access()).mask is None     # all access: no mask to apply
True
>>> v.memo("squares", lambda: [i * i for i in range(3)])
[0, 1, 4]
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .visibility import Caller

if TYPE_CHECKING:
    from .. import _core
    from .linkgraph import LinkGraph
    from .text import TextIndex

__all__ = ["View"]

T = TypeVar("T")


class View:
    """One caller's view of one graph.

    Made by :meth:`LinkGraph.view <conceptwalk.graph.LinkGraph.view>` (do not construct it
    directly: the graph's LRU is what makes it one per caller).

    Parameters
    ----------
    graph : LinkGraph
    scopes : frozenset of str, or None
        The caller's scopes (None: all access).
    mask : VisibilityMask or None
        The caller's prepared mask over ``graph`` (None: everything is visible).

    Attributes
    ----------
    graph : LinkGraph
    scopes : frozenset of str or None
    mask : VisibilityMask or None
    """

    #: Most memo entries a view keeps (the least recently used is dropped first).
    MEMO_ENTRIES = 256

    __slots__ = ("graph", "scopes", "mask", "_lock", "_memo", "_text", "__weakref__")

    def __init__(self, graph: LinkGraph, scopes: frozenset[str] | None, mask: _core.VisibilityMask | None) -> None:
        self.graph = graph
        self.scopes = scopes
        self.mask = mask
        self._lock = threading.RLock()  # memo builders may nest (text stats inside a search memo)
        self._memo: OrderedDict[Any, Any] = OrderedDict()
        self._text: tuple[TextIndex, _core.TextStats] | None = None

    @property
    def caller(self) -> Caller:
        """The caller this view is for."""
        return Caller(self.scopes)

    @property
    def sees_everything(self) -> bool:
        """True for an all-access view (no mask applies)."""
        return self.mask is None

    def memo(self, key: Any, make: Callable[[], T]) -> T:
        """The value kept under ``key`` in this view, made by ``make()`` the first time.

        Parameters
        ----------
        key : hashable
            Name it after the layer that owns it (``("wrap.provenance", kind)``), so layers do
            not collide.
        make : callable
            Called once (under the view's lock) when ``key`` is not kept yet.

        Returns
        -------
        object
            What ``make()`` returned, the same object on every later call.
        """
        with self._lock:
            got = self._memo.get(key, _MISSING)
            if got is _MISSING:
                got = make()
                self._memo[key] = got
                while len(self._memo) > self.MEMO_ENTRIES:  # least recently used first
                    self._memo.popitem(last=False)
            else:
                self._memo.move_to_end(key)
        return got  # type: ignore[no-any-return]

    def text_stats(self, index: TextIndex) -> _core.TextStats:
        """BM25 statistics of ``index`` over the documents this caller sees (its documents are
        this graph's nodes, in node order): computed once per (view, index), one pass over the
        postings.

        Parameters
        ----------
        index : TextIndex
            A text index of this graph's nodes.

        Returns
        -------
        conceptwalk._core.TextStats
        """
        if self.mask is None:
            return index.stats_for(None)  # the index's own all-documents statistics
        got = self._text
        if got is not None and got[0] is index:
            return got[1]
        with self._lock:
            got = self._text
            if got is None or got[0] is not index:
                # one slot: a graph's text index is one per store state, so a second index of
                # the same graph (a caller's own build) replaces the first
                got = self._text = (index, index.stats_over(self.mask))
        return got[1]

    def __repr__(self) -> str:
        who = "all-access" if self.scopes is None else ("public" if not self.scopes else ",".join(sorted(self.scopes)))
        visible = self.graph.num_nodes if self.mask is None else self.mask.visible_count
        return f"View({who}: {visible} of {self.graph.num_nodes} nodes visible)"


_MISSING = object()
