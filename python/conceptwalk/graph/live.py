"""A live store's graph: an immutable base :class:`~conceptwalk.graph.LinkGraph` plus a small
delta of what was written since, read together by the core in one call (issue 31; the design in
``docs/live_store.md``).

A :class:`LiveGraph` is what a knowledge base's :meth:`live_graph
<conceptwalk.kb.store.KnowledgeBase.live_graph>` returns: the base (a snapshot at an earlier
change-log position, mapped or built as always) and, for the nodes and edges added since, a delta
made at the cost of the change: a new node takes the next *slot* after the base's (nothing is
renumbered) and gets an *order key* whose order is the id order, every row the write touched is
rebuilt in key order (``_core.LiveGraph``), and the new nodes' columns are kept beside it. A
query over it visits nodes, breaks ties and sums in exactly the order a fresh build of the same
store does, so its answer is the fresh build's bit for bit.

What a delta expresses today: inserted nodes, rewritten node rows (title, type, scopes, lifecycle:
kept per node) and inserted edges. A deletion, a bulk load or a replaced history is not
expressed: :meth:`LiveGraph.grown` returns None and the store builds a new base instead. What reads
it today: ``graph_context`` from concepts for the all-access caller; every other read uses the
full snapshot (:meth:`KnowledgeBase.graph <conceptwalk.kb.store.KnowledgeBase.graph>`).

Examples
--------
>>> base = LinkGraph.from_edges([("a", "c"), ("c", "e")])
>>> g = LiveGraph.over(base, version=0)
>>> g2 = g.grown({"b": ("NODE", "Bee", None, None)}, [("b", "c")], version=1)
>>> g2.num_nodes, g2.slot("b"), [g2.node_at(s)[0] for s in g2.neighbors("c")]
(4, 3, ['a', 'b', 'e'])
>>> g.num_nodes   # the earlier graph is unchanged
3
"""

from __future__ import annotations

import bisect
import itertools
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from ..errors import InputError
from .linkgraph import DEFAULT_EDGE_TYPE, DEFAULT_NODE_TYPE, LinkGraph

__all__ = ["LiveGraph", "LiveView", "NodeRow"]

#: A node's columns as the store holds them: ``(type, title, scopes JSON text, lifecycle)``.
NodeRow = tuple[Any, Any, Any, Any]

_SERIALS = itertools.count()  # one per LiveGraph (its chain's head names the newest by it)
_RANK_TOP = 0xFFFFFFFF  # the low word of a base node's key; a new node's rank is below it
_FIRST = 1 << 31  # the rank a gap's first new node gets (room on both sides)


def _scopes(text: Any) -> list[str]:
    """A stored ``scopes`` value (JSON list text or None) as a list (the store checked it)."""
    if text is None:
        return []
    v = json.loads(text)
    return [str(x) for x in v] if isinstance(v, list) else []


class LiveView:
    """A caller's visibility of one :class:`LiveGraph` (see :meth:`LiveGraph.view`).

    Parameters
    ----------
    core : conceptwalk._core.LiveVisibility
        What the core reads (the base's mask and the delta's part).
    base_mask : numpy.ndarray of bool
        The base's mask.
    slot_mask : numpy.ndarray of bool
        The new slots' mask.
    base_nodes : int
        The base's node count.
    """

    __slots__ = ("core", "_base_mask", "_slot_mask", "_b")

    def __init__(
        self,
        core: _core.LiveVisibility,
        base_mask: npt.NDArray[np.bool_],
        slot_mask: npt.NDArray[np.bool_],
        base_nodes: int,
    ) -> None:
        self.core = core
        self._base_mask = base_mask
        self._slot_mask = slot_mask
        self._b = base_nodes

    def visible(self, slot: int) -> bool:
        """Whether the caller sees the node at ``slot``.

        Parameters
        ----------
        slot : int

        Returns
        -------
        bool
        """
        b = self._b
        return bool(self._base_mask[slot] if slot < b else self._slot_mask[slot - b])


class _Chain:
    """What the live graphs over one base share, append-only, so that growing one costs the
    change: the new nodes' ids in slot order, their slots, every added or rewritten node's rows by
    version, and the new ids of each gap, sorted. A graph reads only the first ``n_new`` ids and
    the rows of versions up to its own; only the newest graph (``head``) grows it in place."""

    __slots__ = ("ids", "slot", "rows", "gaps", "edges", "head", "lock")

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.slot: dict[str, int] = {}
        self.rows: dict[str, list[tuple[int, NodeRow]]] = {}
        self.gaps: dict[int, list[str]] = {}
        #: per pair of slots (lo, hi), the edges written since the base: (version, type, source slot)
        self.edges: dict[tuple[int, int], list[tuple[int, str, int]]] = {}
        #: the serial of the newest graph (an int, not the graph: no reference cycle between a
        #: chain and its graphs, so a chain a new base replaced is freed without the collector)
        self.head = -1
        self.lock = threading.Lock()  # one grower at a time

    def copy(self, n_new: int, version: int) -> _Chain:
        """The chain as a graph with ``n_new`` new nodes at ``version`` sees it (a graph that is
        not the newest grows from a copy)."""
        c = _Chain()
        c.ids = self.ids[:n_new]
        c.slot = {x: self.slot[x] for x in c.ids}
        c.rows = {x: [e for e in v if e[0] <= version] for x, v in self.rows.items()}
        c.rows = {x: v for x, v in c.rows.items() if v}
        new = set(c.ids)
        c.gaps = {g: [x for x in m if x in new] for g, m in self.gaps.items()}
        c.edges = {p: [e for e in v if e[0] <= version] for p, v in self.edges.items()}
        c.edges = {p: v for p, v in c.edges.items() if v}
        return c


class LiveGraph:
    """A base :class:`LinkGraph` plus the nodes and edges added since (immutable).

    Made by :meth:`over` (no delta) and :meth:`grown` (one more batch of changes); do not
    construct it directly.

    Parameters
    ----------
    base : LinkGraph
    base_version, version, history : int
    core : conceptwalk._core.LiveGraph
    chain : _Chain
        What the graphs over ``base`` share (append-only).
    n_new : int
        The new nodes this graph has (the chain's first ``n_new``).
    keys : numpy.ndarray of uint64
        Their order keys, in slot order.
    rewritten : int
        Nodes added or rewritten since the base.

    Attributes
    ----------
    base : LinkGraph
        The snapshot the delta is over.
    base_version : int
        The change-log position of ``base``.
    version : int
        The change-log position this graph is at.
    history : int
        The store's history count (``StoreState.history``) it belongs to.
    core : conceptwalk._core.LiveGraph
        Base plus delta in the core (what ``_core.graph_context`` reads).
    """

    __slots__ = (
        "_serial",
        "base",
        "base_version",
        "version",
        "history",
        "core",
        "_chain",
        "_n_new",
        "_keys",
        "_rewritten",
        "_views",
        "_rescoped",
    )

    def __init__(
        self,
        base: LinkGraph,
        base_version: int,
        version: int,
        history: int,
        core: _core.LiveGraph,
        chain: _Chain,
        n_new: int,
        keys: npt.NDArray[np.uint64],
        rewritten: int,
    ) -> None:
        self.base = base
        self.base_version = base_version
        self.version = version
        self.history = history
        self.core = core
        self._chain = chain
        self._n_new = n_new  # the new nodes this graph has: the chain's first n_new ids
        self._keys = keys  # their order keys, in slot order
        self._rewritten = rewritten  # nodes added or rewritten since the base
        self._views: dict[frozenset[str], LiveView] = {}  # per scope set (made once)
        self._rescoped: bool | None = None  # whether a base node's scopes changed since the base
        self._serial = next(_SERIALS)
        chain.head = self._serial

    @classmethod
    def over(cls, base: LinkGraph, *, version: int, history: int = 0) -> LiveGraph:
        """The live graph of ``base`` with nothing added.

        Parameters
        ----------
        base : LinkGraph
        version : int
            The change-log position ``base`` is at.
        history : int
            The store's history count (``StoreState.history``) it belongs to.

        Returns
        -------
        LiveGraph
        """
        empty32 = np.empty(0, dtype=np.int32)
        core = _core.LiveGraph.grow(base.core, None, np.empty(0, dtype=np.uint64), empty32, empty32)
        return cls(base, version, version, history, core, _Chain(), 0, np.empty(0, dtype=np.uint64), 0)

    # ------------------------------------------------------------------ reading
    @property
    def num_nodes(self) -> int:
        """Nodes of base plus delta (slots)."""
        return self.base.num_nodes + self._n_new

    @property
    def delta_nodes(self) -> int:
        """Nodes added since the base."""
        return self._n_new

    @property
    def rewritten(self) -> int:
        """Nodes added or rewritten since the base (a node counted once per batch)."""
        return self._rewritten

    def slot(self, node_id: str) -> int | None:
        """The slot (node index in this graph) of ``node_id``, or None when it has none.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        int or None
        """
        s = self._chain.slot.get(node_id)
        if s is not None:
            return s if s < self.base.num_nodes + self._n_new else None
        return self.base.id_index.get(node_id)

    def order_key(self, slot: int) -> int:
        """The order key of ``slot``: keys order as the ids do.

        Parameters
        ----------
        slot : int

        Returns
        -------
        int
        """
        b = self.base.num_nodes
        return int(self._keys[slot - b]) if slot >= b else (slot << 32) | _RANK_TOP

    def sorted_slots(self, slots: Iterable[int]) -> list[int]:
        """``slots`` without repeats, in id order (the order the core wants seeds in).

        Parameters
        ----------
        slots : iterable of int

        Returns
        -------
        list of int
        """
        return sorted(set(slots), key=self.order_key)

    def node_at(self, slot: int) -> tuple[str, str, str | None]:
        """``(id, type, title)`` of the node at ``slot``.

        Parameters
        ----------
        slot : int

        Returns
        -------
        tuple
        """
        b = self.base.num_nodes
        nid = self._chain.ids[slot - b] if slot >= b else self.base.ids[slot]
        row = None
        for v, r in reversed(self._chain.rows.get(nid, ())):
            if v <= self.version:
                row = r
                break
        if row is None:  # the base's columns, read at one index (node_at's list of type codes is O(n) once)
            base = self.base
            return nid, base.node_type_names[int(base.node_type_codes[slot])], base.titles[slot]
        t = row[0]
        return nid, DEFAULT_NODE_TYPE if t is None else str(t), row[1]

    def neighbors(self, node: str | int) -> list[int]:
        """The slots of a node's neighbours, in id order.

        Parameters
        ----------
        node : str or int
            An id or a slot.

        Returns
        -------
        list of int
        """
        s = self.slot(node) if isinstance(node, str) else node
        if s is None:
            raise InputError(f"unknown node {node!r}")
        return list(self.core.neighbors(s).tolist())

    def _row_at(self, node_id: str) -> NodeRow | None:
        """The row of a node added or rewritten since the base, as of this graph's version."""
        for v, r in reversed(self._chain.rows.get(node_id, ())):
            if v <= self.version:
                return r
        return None

    def view(self, scopes: Iterable[str]) -> LiveView | None:
        """The visibility of a caller holding ``scopes`` (not all access: it needs none), made once
        per scope set; None when this delta cannot express it (a base node's scopes changed since
        the base: the full snapshot answers then).

        Parameters
        ----------
        scopes : iterable of str

        Returns
        -------
        LiveView or None

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "b", "scopes": ["t"]}])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("NODE", None, '["t"]', None)}, [("c", "a")], version=1)
        >>> v = g.view([])
        >>> [v.visible(s) for s in range(3)], v.core.visible_count, v.core.degree(0)
        ([True, False, False], 1, 0)
        """
        key = frozenset(scopes)
        got = self._views.get(key)
        if got is not None:
            return got
        if self._rescoped is None:
            self._rescoped = False
            bindex = self.base.id_index
            for x in self._chain.rows:
                i = bindex.get(x)
                if i is None:
                    continue
                r = self._row_at(x)
                if r is not None and tuple(sorted(set(_scopes(r[2])))) != self.base.node_scopes_at(i):
                    self._rescoped = True
                    break
        if self._rescoped:
            return None
        b = self.base.num_nodes
        base_mask = self.base.view_for_scopes(key).mask
        assert base_mask is not None  # a scope set always has a mask
        slot_mask = np.zeros(self._n_new, dtype=bool)
        for j, x in enumerate(self._chain.ids[: self._n_new]):
            r = self._row_at(x)
            own = _scopes(None if r is None else r[2])
            slot_mask[j] = not own or not key.isdisjoint(own)
        got = LiveView(_core.LiveVisibility.make(self.core, base_mask, slot_mask), base_mask.mask, slot_mask, b)
        self._views[key] = got
        return got

    def path_edges(self, path: Sequence[int]) -> list[tuple[tuple[str, str], ...]]:
        """Per hop of a path of slots, the edges joining it, as
        :func:`~conceptwalk.graph.path.path_edges` gives them for a fresh build: sorted
        ``(type, direction)`` pairs (the base's edges of the pair and those written since).

        Parameters
        ----------
        path : sequence of int
            Slots, consecutive ones adjacent.

        Returns
        -------
        list of tuple
        """
        base = self.base
        b = base.num_nodes
        core = base.core
        out = []
        for x, y in zip(path, path[1:]):
            got: set[tuple[str, str]] = set()
            if x < b and y < b:
                pair = core.pair_of(x, y)
                if pair >= 0:
                    lo, hi = int(base.pair_ptr[pair]), int(base.pair_ptr[pair + 1])
                    tn = base.edge_type_names
                    for c, sx in zip(base.edge_type_codes[lo:hi].tolist(), base.edge_src[lo:hi].tolist()):
                        got.add((tn[c], "forward" if sx == x else "backward"))
            for v, t, sa in self._chain.edges.get((min(x, y), max(x, y)), ()):
                if v <= self.version:
                    got.add((t, "forward" if sa == x else "backward"))
            out.append(tuple(sorted(got)))
        return out

    # ------------------------------------------------------------------ growing
    def _grow(
        self,
        chain: _Chain,
        new: list[str],
        nodes: Mapping[str, NodeRow | None],
        typed: list[tuple[int, int, str]],
        a: list[int],
        bb: list[int],
        version: int,
    ) -> tuple[npt.NDArray[np.uint64], int, _core.LiveGraph]:
        """The chain appended to (its lock held) and the new keys, count and core."""
        base = self.base
        b = base.num_nodes
        n_new = self._n_new
        keys = self._keys
        if new:
            keys = np.concatenate([keys, np.zeros(len(new), dtype=np.uint64)])
            for x in new:
                g = bisect.bisect_left(base.ids, x)
                members = chain.gaps.setdefault(g, [])
                pos = bisect.bisect_left(members, x)
                lo = (int(keys[chain.slot[members[pos - 1]] - b]) & _RANK_TOP) if pos else -1
                hi = (int(keys[chain.slot[members[pos]] - b]) & _RANK_TOP) if pos < len(members) else _RANK_TOP
                members.insert(pos, x)
                s = chain.slot[x] = b + n_new
                chain.ids.append(x)
                n_new += 1
                if hi - lo > 1:
                    keys[s - b] = (g << 32) | (_FIRST if lo < 0 and hi == _RANK_TOP else (lo + hi) // 2)
                else:  # no room left in the gap: spread its new nodes evenly (their order kept)
                    step = _RANK_TOP // (len(members) + 1)
                    for j, y in enumerate(members, 1):
                        keys[chain.slot[y] - b] = (g << 32) | (j * step)
        for x, r in nodes.items():
            if r is not None:
                chain.rows.setdefault(x, []).append((version, r))
        for sa, sd, t in typed:
            chain.edges.setdefault((min(sa, sd), max(sa, sd)), []).append((version, t, sa))
        core = self.core
        if new or a:
            core = _core.LiveGraph.grow(
                base.core, self.core, keys, np.array(a, dtype=np.int32), np.array(bb, dtype=np.int32)
            )
        return keys, n_new, core

    def grown(
        self,
        nodes: Mapping[str, NodeRow | None],
        edges: Sequence[tuple[str, ...]],
        *,
        version: int,
    ) -> LiveGraph | None:
        """This graph plus one batch of changes, or None when the batch holds a change a delta
        does not express (a deleted node, or an edge whose endpoint is neither known nor added:
        the caller builds a new base). Costs the change: the chain of the graphs over this base is
        shared and appended to (a graph that is not the newest grows from a copy of it).

        Parameters
        ----------
        nodes : mapping of str to row or None
            Every node the batch changed, with its row now (None: deleted).
        edges : sequence of (str, str, str) or (str, str)
            The source, target and type of every edge the batch inserted or rewrote (existing
            now; the caller returns None itself for a deleted edge). A pair without a type is of
            :data:`~conceptwalk.graph.DEFAULT_EDGE_TYPE`.
        version : int
            The change-log position after the batch (above this graph's).

        Returns
        -------
        LiveGraph or None
        """
        if version <= self.version:
            raise InputError(f"version must be above {self.version}, got {version}")
        base = self.base
        bindex = base.id_index
        b = base.num_nodes
        n_new = self._n_new
        n_all = b + n_new
        cslot = self._chain.slot

        def known(x: str) -> int | None:
            s = cslot.get(x)
            return bindex.get(x) if s is None else (s if s < n_all else None)

        new: list[str] = []
        for x, r in nodes.items():
            if known(x) is None:
                if r is not None:
                    new.append(x)
            elif r is None:
                return None  # a deletion
        new.sort()
        # every endpoint: known, or one of the new nodes (their slots follow in id order)
        at = {x: n_all + i for i, x in enumerate(new)}
        a: list[int] = []
        bb: list[int] = []
        typed: list[tuple[int, int, str]] = []
        for e in edges:
            src, dst = e[0], e[1]
            sa = known(src)
            sd = known(dst)
            sa = at.get(src) if sa is None else sa
            sd = at.get(dst) if sd is None else sd
            if sa is None or sd is None:
                return None  # an endpoint neither known nor added (rows read out of order)
            if sa != sd:
                a.append(sa)
                bb.append(sd)
                typed.append((sa, sd, str(e[2]) if len(e) > 2 else DEFAULT_EDGE_TYPE))
        with self._chain.lock:  # one grower of a chain at a time (another thread's copy waits too)
            chain = self._chain
            if chain.head != self._serial:  # not the newest graph of its chain: grow a copy
                chain = chain.copy(self._n_new, self.version)
            chain.head = -1  # until the new graph is made: a failure below leaves a chain no graph grows in place
            keys, n_new, core = self._grow(chain, new, nodes, typed, a, bb, version)
        rewritten = self._rewritten + sum(1 for r in nodes.values() if r is not None)
        return LiveGraph(base, self.base_version, version, self.history, core, chain, n_new, keys, rewritten)
