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
expressed: :meth:`LiveGraph.grown` returns None and the store builds a new base instead. The
text of the nodes written since is a small segment beside the base's text index
(:meth:`LiveGraph.text`, :class:`LiveText`). What reads it today: ``graph_context`` (from
concepts or a question, with or without a node-type filter), ``link_suggest`` (resource
allocation), ``graph_path`` and ``KnowledgeBase.search``, for every caller; every other read
uses the full snapshot (:meth:`KnowledgeBase.graph <conceptwalk.kb.store.KnowledgeBase.graph>`).

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .. import _core
from ..errors import InputError
from .linkgraph import DEFAULT_EDGE_TYPE, DEFAULT_NODE_TYPE, EDGE_ANNOTATION_KEYS, LinkGraph, insert_sorted
from .text import B, K1, MAX_QUERY_TERMS, TextIndex, tokenize

__all__ = ["LiveGraph", "LiveText", "LiveView", "NodeRow", "WalkEdges"]

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

    @property
    def base_mask(self) -> npt.NDArray[np.bool_]:
        """Per base node, whether the caller sees it."""
        return self._base_mask

    @property
    def slot_mask(self) -> npt.NDArray[np.bool_]:
        """Per new slot (from the base's node count on), whether the caller sees it."""
        return self._slot_mask

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


class _Inherit(NamedTuple):
    """What the graphs a :class:`LiveGraph` grew from made (its views, text, node types, walk
    edges, written types and :meth:`LiveGraph.memo_grown` values), each with the version of the
    graph that made it: the nearest such graph's, whichever tools read the graphs in between. A
    value is brought forward by the batches written since that version (the chain's log,
    :meth:`LiveGraph._since`), so that it costs those batches, not the delta."""

    rescoped: tuple[bool, int] | None  #: the visibility check (whether a base node's scopes changed)
    slot_masks: dict[frozenset[str], tuple[npt.NDArray[np.bool_], int]]  #: per scope set, the slot mask
    text: tuple[Any, int] | None  #: the LiveText (dropped once this graph's own is made)
    types: tuple[tuple[list[str] | None, npt.NDArray[np.int32] | None], int] | None  #: the node types
    walk: tuple[WalkEdges, int] | None  #: the walk edges
    written: tuple[frozenset[str], int] | None  #: the written node types
    grown_memo: dict[Any, tuple[Any, int]]  #: the :meth:`LiveGraph.memo_grown` values


class _Batches(NamedTuple):
    """The batches a chain's log holds between two versions (:meth:`LiveGraph._since`)."""

    rows: list[str]  #: the nodes they wrote a row of
    texts: list[str]  #: the nodes they wrote a text of
    pairs: list[tuple[int, int]]  #: the pairs of slots they wrote an edge of, sorted
    spread: bool  #: whether one moved order keys of earlier new nodes (a full gap spread again)

    @property
    def written(self) -> list[str]:
        """The nodes they wrote a row or a text of."""
        return list(dict.fromkeys([*self.rows, *self.texts]))


#: What a graph over a base inherits: nothing made yet.
_NOTHING = _Inherit(None, {}, None, None, None, None, {})


def _log_version(entry: tuple[int, _Batches]) -> int:
    return entry[0]


#: The most values of one kind (slot masks per scope set, memo_grown values) a grown graph
#: carries: the newest (a store whose callers bring a new scope set every turn would otherwise
#: copy one more on every grow until the next base).
_CARRIED = 64


def _carried(old: dict[Any, tuple[Any, int]], made: dict[Any, tuple[Any, int]]) -> dict[Any, tuple[Any, int]]:
    """``old`` with ``made``'s values in their place: at most :data:`_CARRIED`, the newest."""
    out = {**old, **made}
    if len(out) > _CARRIED:
        out = dict(sorted(out.items(), key=lambda kv: kv[1][1])[-_CARRIED:])
    return out


class _Chain:
    """What the live graphs over one base share, append-only, so that growing one costs the
    change: the new nodes' ids in slot order, their slots, every added or rewritten node's rows by
    version, and the new ids of each gap, sorted. A graph reads only the first ``n_new`` ids and
    the rows of versions up to its own; only the newest graph (``head``) grows it in place."""

    __slots__ = (
        "ids",
        "slot",
        "rows",
        "gaps",
        "edges",
        "anns",
        "texts",
        "no_text",
        "vocab",
        "tokens",
        "names",
        "shared",
        "log",
        "head",
        "lock",
    )

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.slot: dict[str, int] = {}
        self.rows: dict[str, list[tuple[int, NodeRow]]] = {}
        self.gaps: dict[int, list[str]] = {}
        #: per pair of slots (lo, hi), the edges written since the base: (version, type, source
        #: slot, the row of its annotations in ``anns`` or -1 when the batch did not give them)
        self.edges: dict[tuple[int, int], list[tuple[int, str, int, int]]] = {}
        #: the written edges' annotations, as the store holds them (EDGE_ANNOTATION_KEYS' order)
        self.anns: list[tuple[Any, ...]] = []
        #: per node whose text (title or body) a batch wrote: (version, title, body)
        self.texts: dict[str, list[tuple[int, Any, Any]]] = {}
        #: whether a batch came without its texts (the live text then is not known)
        self.no_text = False
        #: the delta text's vocabulary (append-only, in first-seen order: the summation order is
        #: the query terms' string order, never these ids) and, per (node, version), its title's
        #: and body's term ids
        self.vocab: dict[str, int] = {}
        self.tokens: dict[tuple[str, int], tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]] = {}
        #: the new ids as names (:class:`~conceptwalk.graph.names.NameIndex`), and how many it holds
        self.names: tuple[Any, int] | None = None
        #: what readers keep for every graph over this base (:meth:`LiveGraph.shared`)
        self.shared: dict[Any, Any] = {}
        #: per batch, in version order: the version after it and what it wrote (what a value made
        #: by an earlier graph is brought forward by, :meth:`LiveGraph._since`)
        self.log: list[tuple[int, _Batches]] = []
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
        c.anns = list(self.anns)  # (rows of later versions too: unread, as the ids past n_new)
        c.texts = {x: [e for e in v if e[0] <= version] for x, v in self.texts.items()}
        c.texts = {x: v for x, v in c.texts.items() if v}
        c.no_text = self.no_text
        c.log = [e for e in self.log if e[0] <= version]
        return c


_UNKNOWN = False  # LiveGraph._walk when a batch gave no annotations
_CONF = "extraction_confidence"
_MISSING = object()
_MEMO_LOCK = threading.Lock()  # LiveGraph.memo's insertions
#: :meth:`WalkEdges.with_pairs` inserts pairs new to the delta where they sort (False: always the
#: general merge, which a test compares it with)
_WALK_INSERT = True


def _memoized(memo: dict[Any, Any], key: Any, build: Any, limit: int | None = None) -> Any:
    """``memo[key]``, made by ``build()`` when missing (outside the lock: two threads may both
    make it, one is kept); past ``limit`` entries the oldest goes."""
    got = memo.get(key, _MISSING)
    if got is _MISSING:
        made = build()
        with _MEMO_LOCK:
            got = memo.get(key, _MISSING)
            if got is _MISSING:
                if limit is not None and len(memo) >= limit:  # many callers over one graph: the oldest go
                    memo.pop(next(iter(memo)))
                got = memo[key] = made
    return got


class WalkEdges(NamedTuple):
    """The edges of the pairs a :class:`LiveGraph`'s delta wrote an edge to (every edge of each
    such pair, the base's included), as the typed walk over it reads them
    (``_core.typed_walk_live``): pairs by key ``(lo << 32) | hi`` (slots, lo < hi) ascending,
    each pair's edges in a fresh build's order (type name, then direction), so that the walk
    picks the edge a fresh build picks. Edge ``i`` is reported as edge id ``base.num_edges + i``.

    Attributes
    ----------
    keys : numpy.ndarray of uint64
    ptr : numpy.ndarray of int32
        ``len(keys) + 1`` offsets into the per-edge arrays.
    typedir : numpy.ndarray of int32
        ``(type code << 1) | direction`` (0: from the pair's node first in id order); codes
        index :attr:`type_names`.
    weights : numpy.ndarray of float64
        The extraction confidence (NaN: none).
    source : numpy.ndarray of int64
        A base canonical edge id (>= 0), or ``-1 - j``: the chain's annotation row j.
    type_names : tuple of str
        The base's edge type names, then the names only the delta has.
    anns : list of tuple
        The chain's annotation rows (read through ``source``).
    """

    keys: npt.NDArray[np.uint64]
    ptr: npt.NDArray[np.int32]
    typedir: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float64]
    source: npt.NDArray[np.int64]
    type_names: tuple[str, ...]
    anns: list[tuple[Any, ...]]

    @classmethod
    def empty(cls, base: LinkGraph) -> WalkEdges:
        """No pair listed (a graph without a delta).

        Parameters
        ----------
        base : LinkGraph

        Returns
        -------
        WalkEdges
        """
        return cls(
            np.zeros(0, dtype=np.uint64),
            np.zeros(1, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.float64),
            np.zeros(0, dtype=np.int64),
            tuple(base.edge_type_names),
            [],
        )

    def with_pairs(
        self,
        base: LinkGraph,
        pairs: Sequence[tuple[int, int, list[tuple[str, int, int]]]],
        anns: list[tuple[Any, ...]],
    ) -> WalkEdges:
        """These edges with ``pairs`` made again.

        Parameters
        ----------
        base : LinkGraph
            The live graph's base.
        pairs : sequence of (int, int, list)
            Per pair of slots ``(lo, hi)`` (lo < hi), its edges now: ``(type, direction,
            source)`` in a fresh build's order (see :attr:`source`).
        anns : list of tuple
            The chain's annotation rows (the sources below 0 name).

        Returns
        -------
        WalkEdges
        """
        names = {t: i for i, t in enumerate(self.type_names)}
        new_keys: list[int] = []
        new_lens: list[int] = []
        td: list[int] = []
        src: list[int] = []
        for x, y, got in pairs:
            new_keys.append((x << 32) | y)
            new_lens.append(len(got))
            for t, d, sq in got:
                code = names.setdefault(t, len(names))
                td.append((code << 1) | d)
                src.append(sq)
        type_names = self.type_names if len(names) == len(self.type_names) else tuple(names)
        if not new_keys:
            return WalkEdges(self.keys, self.ptr, self.typedir, self.weights, self.source, type_names, anns)
        nk = np.array(new_keys, dtype=np.uint64)
        col = base.edge_annotations.get(_CONF)
        bw = None if col is None else col[0]
        src_new = np.array(src, dtype=np.int64)
        w_new = np.full(src_new.size, np.nan)
        for i, sq in enumerate(src):
            if sq >= 0:
                if bw is not None:
                    w_new[i] = bw[sq]
            else:
                c = anns[-1 - sq][EDGE_ANNOTATION_KEYS.index(_CONF)]
                if c is not None:
                    w_new[i] = float(c)
        td_new = np.array(td, dtype=np.int32)
        at = np.searchsorted(self.keys, nk)
        ordered = nk.size < 2 or bool(np.all(nk[1:] > nk[:-1]))
        absent = not self.keys.size or not bool(np.any(self.keys[np.minimum(at, self.keys.size - 1)] == nk))
        if ordered and absent and _WALK_INSERT:
            # pairs new to the delta, in key order (an agent's turn): inserted where they sort,
            # each one's edges before the edges of the pair that follows it (O(delta) copies)
            new_lens_a = np.array(new_lens, dtype=np.int32)
            ptr = np.zeros(self.keys.size + nk.size + 1, dtype=np.int32)
            np.cumsum(insert_sorted(np.diff(self.ptr), at, new_lens_a), out=ptr[1:])
            e_at = np.repeat(self.ptr[at], new_lens_a)
            return WalkEdges(
                insert_sorted(self.keys, at, nk),
                ptr,
                insert_sorted(self.typedir, e_at, td_new),
                insert_sorted(self.weights, e_at, w_new),
                insert_sorted(self.source, e_at, src_new),
                type_names,
                anns,
            )
        old_lens = np.diff(self.ptr)
        keep = ~np.isin(self.keys, nk)
        keys = np.concatenate([self.keys[keep], nk])
        lens = np.concatenate([old_lens[keep], np.array(new_lens, dtype=np.int32)])
        order = np.argsort(keys, kind="stable")
        # every edge with its pair's rank in the new order; a stable sort by it keeps each
        # pair's edges in their order
        rank = np.empty(keys.size, dtype=np.int64)
        rank[order] = np.arange(keys.size)
        kept = int(keep.sum())
        edge_keep = np.repeat(keep, old_lens)
        e_rank = np.concatenate([np.repeat(rank[:kept], old_lens[keep]), np.repeat(rank[kept:], new_lens)])
        e_order = np.argsort(e_rank, kind="stable")
        ptr = np.zeros(keys.size + 1, dtype=np.int32)
        np.cumsum(lens[order], out=ptr[1:])
        return WalkEdges(
            keys[order],
            ptr,
            np.concatenate([self.typedir[edge_keep], td_new])[e_order],
            np.concatenate([self.weights[edge_keep], w_new])[e_order],
            np.concatenate([self.source[edge_keep], src_new])[e_order],
            type_names,
            anns,
        )


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
        Nodes added, or whose row or text was written, since the base.
    inherit : _Inherit, optional
        What the graph this one grew from knew (:meth:`grown`).
    aliases_count : int, optional
        See the attribute.

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
    aliases_count : int or None
        The store's alias count (:meth:`KnowledgeBase.aliases_version
        <conceptwalk.kb.store.KnowledgeBase.aliases_version>`) at ``version``, when the read that
        grew this graph read it too (None: not read), so that a reader keeps what it made of the
        aliases across batches that wrote none without asking the store again.
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
        "_text",
        "_inherit",
        "_types",
        "_walk",
        "_written",
        "_tail",
        "_memo",
        "_grown_memo",
        "aliases_count",
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
        inherit: _Inherit = _NOTHING,
        aliases_count: int | None = None,
    ) -> None:
        self.base = base
        self.base_version = base_version
        self.version = version
        self.history = history
        self.core = core
        self._chain = chain
        self._n_new = n_new  # the new nodes this graph has: the chain's first n_new ids
        self._keys = keys  # their order keys, in slot order
        self._rewritten = rewritten  # nodes added, or whose row or text was written, since the base
        self._views: dict[frozenset[str], LiveView] = {}  # per scope set (made once)
        self._rescoped: bool | None = None  # whether a base node's scopes changed since the base
        self._text: Any = None  # the LiveText made for this graph (on the first search)
        self._inherit = inherit  # what the graphs this one grew from made (_NOTHING over a base)
        # the node types of the new slots (see type_filter): (names, codes) or (None, None) when
        # a base node's type changed since the base; made on the first filter
        self._types: tuple[list[str] | None, npt.NDArray[np.int32] | None] | None = None
        self._walk: WalkEdges | bool | None = None  # walk_edges(), made on the first walk (False: unknown)
        self._written: frozenset[str] | None = None  # written_types(), made on the first ask
        self._tail: list[str] | None = None  # tail_ids()
        self._memo: dict[Any, Any] = {}  # memo()
        self._grown_memo: dict[Any, Any] = {}  # memo_grown()
        self.aliases_count = aliases_count
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
        """Nodes added, or whose row or text was written, since the base (a node counted once per
        batch): what the delta holds, against its limits and the compaction mark."""
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

    def order_keys(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
        """:meth:`order_key` of every slot of ``slots``.

        Parameters
        ----------
        slots : numpy.ndarray of int64

        Returns
        -------
        numpy.ndarray of uint64
        """
        new = slots >= self.base.num_nodes
        keys = (slots.astype(np.uint64) << np.uint64(32)) | np.uint64(_RANK_TOP)
        keys[new] = self._keys[slots[new] - self.base.num_nodes]
        return keys  # type: ignore[no-any-return]

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

    def scope_names(self) -> frozenset[str]:
        """Every scope a node of this graph carries: the base's (:attr:`LinkGraph.scope_names`)
        and those of the nodes written since, as they are now (while no base node's scopes
        changed, :meth:`view` is not None and this is a fresh build's ``scope_names``). Made
        once per graph.

        Returns
        -------
        frozenset of str

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "b", "scopes": ["t"]}])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("NODE", None, '["u"]', None)}, [("c", "a")], version=1)
        >>> sorted(g.scope_names())
        ['t', 'u']
        """

        def build() -> frozenset[str]:
            out = set(self.base.scope_names)
            for x in list(self._chain.rows):  # (a snapshot: another thread's read grows the chain)
                r = self._row_at(x)
                if r is not None:
                    out.update(_scopes(r[2]))
            return frozenset(out)

        return self.memo(("live.scope-names",), build)  # type: ignore[no-any-return]

    def unknown_scopes(self, scopes: Iterable[str]) -> tuple[str, ...]:
        """The scopes of ``scopes`` that no node of this graph carries (sorted; see
        :meth:`scope_names`, which is read only when the base does not carry one of them).

        Parameters
        ----------
        scopes : iterable of str

        Returns
        -------
        tuple of str
        """
        names = self.base.scope_names
        missing = [x for x in scopes if x not in names]
        if not missing:
            return ()
        known = self.scope_names()
        return tuple(sorted(x for x in missing if x not in known))

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
        inherit = self._inherit
        if self._rescoped is None:
            # made whole before it is kept: another thread's view, or a graph grown from this one,
            # reads it unlocked
            rescoped = False
            bindex = self.base.id_index
            if inherit.rescoped is not None:
                rescoped, made_at = inherit.rescoped
                # the rows written before were checked
                check: Iterable[str] = () if rescoped else self._since(made_at).rows
            else:
                check = list(self._chain.rows)  # (a snapshot: another thread's read grows the chain)
            for x in check:
                i = bindex.get(x)
                if i is None:
                    continue
                r = self._row_at(x)
                if r is not None and tuple(sorted(set(_scopes(r[2])))) != self.base.node_scopes_at(i):
                    rescoped = True
                    break
            self._rescoped = rescoped
        if self._rescoped:
            return None
        b = self.base.num_nodes
        base_mask = self.base.view_for_scopes(key).mask
        assert base_mask is not None  # a scope set always has a mask
        slot_mask = np.zeros(self._n_new, dtype=bool)
        made = inherit.slot_masks.get(key)
        if made is None:
            todo: Iterable[int] = range(self._n_new)
        else:  # an earlier graph knew the earlier slots: only those the batches since wrote are read
            prev, made_at = made
            slot_mask[: prev.size] = prev
            cslot = self._chain.slot
            rows = self._since(made_at).rows
            todo = sorted({cslot[x] - b for x in rows if x in cslot} | set(range(prev.size, self._n_new)))
        ids = self._chain.ids
        for j in todo:
            r = self._row_at(ids[j])
            own = _scopes(None if r is None else r[2])
            slot_mask[j] = not own or not key.isdisjoint(own)
        got = LiveView(_core.LiveVisibility.make(self.core, base_mask, slot_mask), base_mask.mask, slot_mask, b)
        self._views[key] = got
        return got

    def new_id_names(self) -> Any:
        """The ids of the nodes added since the base as names
        (:class:`~conceptwalk.graph.names.NameIndex`), kept by the chain and brought forward by
        the ids added since (it may hold ids of a later graph of the chain: :meth:`slot` tells).

        Returns
        -------
        NameIndex
        """
        from .names import NameIndex  # names imports text, which this module's readers need first

        chain = self._chain
        with chain.lock:
            got = chain.names
            n = len(chain.ids)
            if got is None:
                got = chain.names = (NameIndex.of_ids(chain.ids), n)
            elif got[1] < n:
                got[0].add((x, x) for x in chain.ids[got[1] : n])
                got = chain.names = (got[0], n)
        return got[0]

    def type_filter(self, node_types: Iterable[str]) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int32]] | None:
        """A node-type filter over this graph as the core reads it: per type code whether it is
        wanted (the base's type names, then the names only new nodes have) and the new slots'
        codes (the base's nodes keep the base's codes); None when a base node's type changed
        since the base (the full snapshot answers then). The codes are made once per graph, from
        its parent's and the batch.

        Parameters
        ----------
        node_types : iterable of str

        Returns
        -------
        (keep, delta codes) or None

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "type": "DOC"}])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("MEMORY", None, None, None)}, [("c", "a")], version=1)
        >>> keep, codes = g.type_filter(["MEMORY"])
        >>> keep.tolist(), codes.tolist()
        ([False, False, True], [2])
        """
        names, codes = self.node_types()
        if names is None or codes is None:
            return None
        wanted = set(node_types)
        return np.array([t in wanted for t in names], dtype=bool), codes

    def node_types(self) -> tuple[list[str] | None, npt.NDArray[np.int32] | None]:
        """The node types of the new slots as the core reads them: the type names (the base's,
        then the names only new nodes have) and each new slot's code; ``(None, None)`` when a
        base node's type changed since the base.

        Returns
        -------
        (list of str, numpy.ndarray of int32) or (None, None)

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "type": "DOC"}])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("MEMORY", None, None, None)}, [("c", "a")], version=1)
        >>> names, codes = g.node_types()
        >>> names, codes.tolist()
        (['DOC', 'NODE', 'MEMORY'], [2])
        """
        got = self._types
        if got is not None:
            return got
        base = self.base
        b = base.num_nodes
        codes = np.zeros(self._n_new, dtype=np.int32)
        inherit = self._inherit
        made = inherit.types
        parent = None if made is None else made[0]
        todo: Iterable[str]
        if made is not None and parent is not None and parent[0] is not None and parent[1] is not None:
            names = list(parent[0])
            codes[: parent[1].size] = parent[1]
            todo = self._since(made[1]).rows
        elif parent is not None:
            self._types = (None, None)  # a base node's type had changed already
            return self._types
        else:
            names = list(base.node_type_names)
            todo = list(self._chain.rows)
        index = {t: i for i, t in enumerate(names)}
        base_names, base_codes = base.node_type_names, base.node_type_codes
        for x in todo:
            r = self._row_at(x)
            s = self.slot(x)
            if r is None or s is None:
                continue
            t = DEFAULT_NODE_TYPE if r[0] is None else str(r[0])
            if s < b:
                if t != base_names[int(base_codes[s])]:
                    self._types = (None, None)
                    return self._types
                continue
            c = index.get(t)
            if c is None:
                c = index[t] = len(names)
                names.append(t)
            codes[s - b] = c
        self._types = (names, codes)
        return self._types

    #: The most entries :meth:`memo` keeps.
    MEMO_ENTRIES = 64

    def memo(self, key: Any, build: Any) -> Any:
        """What a reader derives from this graph, made once per ``key`` (``build()``) and kept
        with it (as :meth:`View.memo <conceptwalk.graph.view.View.memo>` keeps it per view).

        Parameters
        ----------
        key : hashable
        build : callable

        Returns
        -------
        object
        """
        return _memoized(self._memo, key, build, self.MEMO_ENTRIES)

    def memo_grown(self, key: Any, build: Any, grow: Any) -> Any:
        """As :meth:`memo`, for what can be brought forward from the graph this one grew from:
        when that graph made its value for ``key`` (through this method), this graph's is
        ``grow(value, written)``, ``written`` the ids of the nodes the batch wrote a row or a
        text of (the batch's cost); else ``build()`` (the delta's cost). ``grow`` must give what
        ``build`` gives for this graph and must not change ``value`` (the parent keeps it).

        Parameters
        ----------
        key : hashable
        build : callable
            ``build()``: the value made from this graph alone.
        grow : callable
            ``grow(value, written)``: the value made from the parent's and the batch's ids.

        Returns
        -------
        object

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")])
        >>> g = LiveGraph.over(base, version=0)
        >>> def count(live):
        ...     return live.memo_grown("n", lambda: len(live.written_ids()), lambda n, ids: n + len(ids))
        >>> count(g)
        0
        >>> g = g.grown({"c": ("NODE", None, None, None)}, [("c", "a")], version=1)
        >>> count(g)
        1
        """

        def make() -> Any:
            made = self._inherit.grown_memo.get(key)
            if made is not None:
                return grow(made[0], self._since(made[1]).written)
            return build()

        return _memoized(self._grown_memo, key, make)

    def shared(self, key: Any, build: Any) -> Any:
        """What a reader keeps for every graph over this base (the graphs grown in place from one
        another share it; a graph grown from an older one starts anew), made once per ``key``
        (``build()``): for what depends on the written rows' values alone, such as a model's
        vectors of the texts written since the base, so that a turn does not make again what
        the turns before it made.

        Parameters
        ----------
        key : hashable
        build : callable

        Returns
        -------
        object
        """
        return _memoized(self._chain.shared, key, build)

    def tail_ids(self) -> list[str]:
        """The ids of the nodes added since the base, in slot order (slot ``base.num_nodes + j``
        holds ``tail_ids()[j]``; made once per graph).

        Returns
        -------
        list of str
        """
        got = self._tail
        if got is None:
            got = self._tail = self._chain.ids[: self._n_new]
        return got

    def written_ids(self) -> frozenset[str]:
        """The ids of the nodes written since the base, as of this graph's version: added, a base
        node's row rewritten, or its text alone (a body). Made once per graph: from the set of
        the graph this one grew from and the batch's ids when that graph made it (a copy of the
        set in C), else from the delta (:meth:`memo_grown`).

        Returns
        -------
        frozenset of str

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("NODE", None, None, None)}, [("c", "a")], version=1)
        >>> sorted(g.written_ids()), LiveGraph.over(base, version=0).written_ids()
        (['c'], frozenset())
        """

        def build() -> frozenset[str]:
            chain, v = self._chain, self.version
            # (snapshots: another thread's read grows the chain)
            out = {x for x, rows in list(chain.rows.items()) if rows[0][0] <= v}
            out.update(x for x, t in list(chain.texts.items()) if t[0][0] <= v)
            return frozenset(out)

        def grow(prev: frozenset[str], written: list[str]) -> frozenset[str]:
            return prev.union(written) if not prev.issuperset(written) else prev

        return self.memo_grown(("live.written-ids",), build, grow)  # type: ignore[no-any-return]

    def written_text(self, node_id: str) -> tuple[Any, Any] | None:
        """The title and body of ``node_id`` as of this graph's version, as the store holds them,
        when a batch since the base wrote its row or its text; None when none did, or when a
        batch over this base came without its texts (:meth:`grown` without ``texts``: not known).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        (title, body) or None

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")])
        >>> g = LiveGraph.over(base, version=0).grown(
        ...     {"c": ("NODE", "C", None, None)}, [("c", "a")], version=1, texts={"c": ("C", "about a")})
        >>> g.written_text("c"), g.written_text("a")
        (('C', 'about a'), None)
        """
        chain = self._chain
        if chain.no_text:
            return None
        for v, title, body in reversed(chain.texts.get(node_id, ())):
            if v <= self.version:
                return title, body
        return None

    def written_types(self) -> frozenset[str] | None:
        """The node types of the nodes written since the base (added, a base node's row
        rewritten, or its text alone: a body): at least every type one of them has now (brought
        forward from the graph this one grew from, it also keeps a type a node written since had
        in an earlier batch); None when a base node's type changed since the base.

        Returns
        -------
        frozenset of str or None

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "type": "DOC"}])
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("MEMORY", None, None, None)}, [("c", "a")], version=1)
        >>> sorted(g.written_types()), LiveGraph.over(base, version=0).written_types()
        (['MEMORY'], frozenset())
        """
        got = self._written
        if got is not None:
            return got
        if self.node_types()[0] is None:
            return None
        inherit = self._inherit
        made = inherit.written
        parent = None if made is None else made[0]
        todo: Iterable[str]
        if made is None:
            chain, v = self._chain, self.version
            todo = set(chain.rows) | {x for x, t in list(chain.texts.items()) if t[0][0] <= v}
        else:
            todo = self._since(made[1]).written
        types = set(() if parent is None else parent)
        base = self.base
        for x in todo:
            r = self._row_at(x)
            if r is not None:
                types.add(DEFAULT_NODE_TYPE if r[0] is None else str(r[0]))
                continue
            i = base.id_index.get(x)  # a base node whose text alone was written (a body)
            if i is not None:
                types.add(base.node_type_names[int(base.node_type_codes[i])])
        got = self._written = frozenset(types)
        return got

    def walk_edges(self) -> WalkEdges | None:
        """The edges of every pair the delta added an edge to, for the typed walk over this graph
        (:class:`WalkEdges`); None when a batch did not give its edges' annotations (then the
        full snapshot's walk answers). Brought forward from the graph this one grew from: only
        the batch's pairs are made again (O(delta edges) in numpy, O(batch) in Python).

        Returns
        -------
        WalkEdges or None

        Examples
        --------
        >>> base = LinkGraph.from_edges([("a", "b", "T")])
        >>> ann = (None, None, None, 0.5, None)
        >>> g = LiveGraph.over(base, version=0).grown({"c": ("NODE", None, None, None)}, [("c", "a", "U", ann)], version=1)
        >>> w = g.walk_edges()
        >>> [(k >> 32, k & 0xFFFFFFFF) for k in w.keys.tolist()], w.type_names, w.typedir.tolist(), w.weights.tolist()
        ([(0, 2)], ('T', 'U'), [3], [0.5])
        """
        got = self._walk
        if got is not None:
            return got if isinstance(got, WalkEdges) else None
        inherit = self._inherit
        made = inherit.walk
        chain = self._chain
        if made is not None:
            pairs: Iterable[tuple[int, int]] = self._since(made[1]).pairs
            start = made[0]
        else:  # every pair this graph has an edge of (a later graph's are not its)
            v = self.version
            pairs = sorted(p for p, es in list(chain.edges.items()) if es[0][0] <= v)
            start = WalkEdges.empty(self.base)
        listed: list[tuple[int, int, list[tuple[str, int, int]]]] = []
        for x, y in pairs:
            edges = self._pair_edges(x, y)
            if edges is None:
                self._walk = _UNKNOWN
                return None
            listed.append((x, y, edges))
        walk = start.with_pairs(self.base, listed, chain.anns)
        self._walk = walk
        return walk

    def _pair_edges(self, x: int, y: int) -> list[tuple[str, int, int]] | None:
        """The edges of the pair of slots ``x < y`` now: ``(type, direction, source)`` sorted by
        type name, then direction (a fresh build's order); source >= 0 a base canonical edge,
        else ``-1 - j`` for the chain's annotation row j. None: an edge without annotations."""
        base = self.base
        b = base.num_nodes
        got: dict[tuple[str, int], int] = {}
        if y < b:
            p = base.core.pair_of(x, y)
            if p >= 0:
                lo, hi = int(base.pair_ptr[p]), int(base.pair_ptr[p + 1])
                tn = base.edge_type_names
                for q, (c, sx) in enumerate(
                    zip(base.edge_type_codes[lo:hi].tolist(), base.edge_src[lo:hi].tolist()), lo
                ):
                    got[(tn[c], 0 if sx == x else 1)] = q
        first = x if self.order_key(x) < self.order_key(y) else y
        for v, t, sa, j in self._chain.edges.get((x, y), ()):
            if v <= self.version:
                if j < 0:
                    return None
                got[(t, 0 if sa == first else 1)] = -1 - j
        return [(t, d, src) for (t, d), src in sorted(got.items())]

    def text(self, base_index: TextIndex) -> LiveText | None:
        """The text of this graph's nodes as a base index plus a delta: ``base_index`` (the base's
        text index) less the documents written since, and an index of those documents' texts
        now; made on the first call for ``base_index`` (tokenising each written text once per
        chain) and kept. None when a batch came without its texts (:meth:`grown`), a text is not
        a string, or ``base_index`` is not of the base's node count.

        Parameters
        ----------
        base_index : TextIndex
            The text index of :attr:`base`.

        Returns
        -------
        LiveText or None

        Examples
        --------
        >>> from conceptwalk.graph.text import TextIndex
        >>> base = LinkGraph.from_edges([], nodes=[{"id": "a", "title": "graph walks"}, {"id": "c", "title": "walks"}])
        >>> g = LiveGraph.over(base, version=0).grown(
        ...     {"b": ("NODE", "graph", None, None)}, [], version=1, texts={"b": ("graph", None)})
        >>> t = g.text(TextIndex.build(base.titles))
        >>> t.search("graph", 5)
        ([2, 0], [0.695..., 0.566...])
        """
        got = self._text
        if got is not None and got.base is base_index:
            return got  # type: ignore[no-any-return]
        chain = self._chain
        b = self.base.num_nodes
        if chain.no_text or base_index.num_docs != b:
            return None
        inherit = self._inherit
        made = inherit.text
        parent: LiveText | None = None if made is None else made[0]
        with chain.lock:  # the texts, the vocabulary and the documents' buffer are appended to under it
            if (
                parent is not None
                and parent.buf is not None
                and parent.base is base_index
                and parent.vocab is chain.vocab
            ):
                # the nearest earlier text's documents (term ids of this chain's vocabulary) and
                # those the batches since wrote
                assert made is not None
                since = self._since(made[1])
                got_docs = self._docs(chain, since.texts)
                if got_docs is None:
                    return None  # a damaged row: the snapshot path names it
                n = parent.slots.size
                earlier = parent.buf.pos
                if not any(earlier.get(row[1], n) < n for row, _ in got_docs):
                    # documents appended only (an agent's turn): the batches' work
                    buf = parent.buf
                    if buf.n_docs != n or since.spread:  # another graph appended to it, or keys moved
                        buf = buf.prefix(n, self.order_keys if since.spread else None)
                    for row, terms in got_docs:
                        buf.append(row, terms, self.order_key(row[0]))
                    dropped: npt.NDArray[np.int32] | None = parent.dropped
                    if any(row[0] < b for row, _ in got_docs):
                        dropped = np.union1d(parent.dropped, [row[0] for row, _ in got_docs if row[0] < b]).astype(
                            np.int32
                        )
                else:  # a document of the earlier text rewritten: the arrays made again
                    buf = _DocBuffer.of([*zip(parent.buf.rows[:n], parent.buf.terms[:n]), *got_docs], self.order_keys)
                    dropped = None
            else:
                got_docs = self._docs(chain, list(chain.texts))
                if got_docs is None:
                    return None
                buf = _DocBuffer.of(got_docs, self.order_keys)
                dropped = None
            if dropped is None:  # (made again with the arrays)
                slots = buf.slots[: buf.n_docs]
                dropped = np.sort(slots[slots < b]).astype(np.int32)
            n_terms = len(chain.vocab)
            n = buf.n_docs
            tptr, tterms, bptr, bterms, slots, keys = buf.views(n)
        if made is not None:  # the earlier text is not needed again
            i = inherit
            self._inherit = _Inherit(i.rescoped, i.slot_masks, None, i.types, i.walk, i.written, i.grown_memo)
        core = _core.TextIndex.build(n, n_terms, tptr, tterms, bptr, bterms, base_index.title_weight)
        got = LiveText(base_index, core, chain.vocab, n_terms, slots, keys, dropped, b, buf)
        self._text = got
        return got

    def _docs(self, chain: _Chain, ids: Iterable[str]) -> list[_Doc] | None:
        """:meth:`_doc_tokens` of every node of ``ids`` that has a text here (the chain's lock
        held), or None when one is not a string."""
        out = []
        for x in ids:
            got = self._doc_tokens(chain, x)
            if isinstance(got, bool):
                return None
            if got is not None:
                out.append(got)
        return out

    def _doc_tokens(
        self, chain: _Chain, x: str
    ) -> tuple[tuple[int, str, int], tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]] | None | bool:
        """``((slot, id, version), (title terms, body terms))`` of node ``x``'s text as of this
        graph (tokenised once per chain; the chain's lock held), None when it has none here,
        False for a text that is not a string."""
        entries = chain.texts.get(x, ())
        v = -1
        for ev, _t, _b in reversed(entries):
            if ev <= self.version:
                v = ev
                break
        slot = self.slot(x) if v >= 0 else None
        if slot is None:
            return None
        got = chain.tokens.get((x, v))
        if got is None:
            title, body = next((t, bd) for ev, t, bd in entries if ev == v)
            if (title is not None and not isinstance(title, str)) or (body is not None and not isinstance(body, str)):
                return False
            voc = chain.vocab
            got = chain.tokens[(x, v)] = (
                np.fromiter((voc.setdefault(w, len(voc)) for w in tokenize(title or "")), dtype=np.int32),
                np.fromiter((voc.setdefault(w, len(voc)) for w in tokenize(body or "")), dtype=np.int32),
            )
        return (slot, x, v), got

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
            for v, t, sa, _ in self._chain.edges.get((min(x, y), max(x, y)), ()):
                if v <= self.version:
                    got.add((t, "forward" if sa == x else "backward"))
            out.append(tuple(sorted(got)))
        return out

    def _since(self, version: int) -> _Batches:
        """What the batches after ``version`` up to this graph's wrote (the chain's log): what a
        value made by the graph at ``version`` is brought forward by."""
        log = self._chain.log
        lo = bisect.bisect_right(log, version, key=_log_version)
        hi = bisect.bisect_right(log, self.version, key=_log_version)
        if hi - lo == 1:
            return log[lo][1]
        got = [e for _, e in log[lo:hi]]
        return _Batches(
            list(dict.fromkeys(x for e in got for x in e.rows)),
            list(dict.fromkeys(x for e in got for x in e.texts)),
            sorted({p for e in got for p in e.pairs}),
            any(e.spread for e in got),
        )

    # ------------------------------------------------------------------ growing
    def _grow(
        self,
        chain: _Chain,
        new: list[str],
        nodes: Mapping[str, NodeRow | None],
        typed: list[tuple[int, int, str, tuple[Any, ...] | None]],
        a: list[int],
        bb: list[int],
        version: int,
        texts: Mapping[str, tuple[Any, Any]] | None,
    ) -> tuple[npt.NDArray[np.uint64], int, _core.LiveGraph]:
        """The chain appended to (its lock held, the batch logged) and the new keys, count and core."""
        base = self.base
        b = base.num_nodes
        n_new = self._n_new
        keys = self._keys
        spread = False
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
                    spread = True
                    for j, y in enumerate(members, 1):
                        keys[chain.slot[y] - b] = (g << 32) | (j * step)
        for x, r in nodes.items():
            if r is not None:
                chain.rows.setdefault(x, []).append((version, r))
        for sa, sd, t, ann in typed:
            j = -1
            if ann is not None:
                j = len(chain.anns)
                chain.anns.append(ann)
            chain.edges.setdefault((min(sa, sd), max(sa, sd)), []).append((version, t, sa, j))
        if texts is None:
            chain.no_text = chain.no_text or any(r is not None for r in nodes.values())
        else:
            for x, (title, body) in texts.items():
                chain.texts.setdefault(x, []).append((version, title, body))
        core = self.core
        if new or a:
            core = _core.LiveGraph.grow(
                base.core, self.core, keys, np.array(a, dtype=np.int32), np.array(bb, dtype=np.int32)
            )
        batch = [x for x, r in nodes.items() if r is not None]
        text_ids = [] if texts is None else list(texts)
        pairs = sorted({(min(sa, sd), max(sa, sd)) for sa, sd, _, _ in typed})
        chain.log.append((version, _Batches(batch, text_ids, pairs, spread)))
        return keys, n_new, core

    def grown(
        self,
        nodes: Mapping[str, NodeRow | None],
        edges: Sequence[tuple[Any, ...]],
        *,
        version: int,
        texts: Mapping[str, tuple[Any, Any]] | None = None,
        aliases_count: int | None = None,
    ) -> LiveGraph | None:
        """This graph plus one batch of changes, or None when the batch holds a change a delta
        does not express (a deleted node, or an edge whose endpoint is neither known nor added:
        the caller builds a new base). Costs the change: the chain of the graphs over this base is
        shared and appended to (a graph that is not the newest grows from a copy of it).

        Parameters
        ----------
        nodes : mapping of str to row or None
            Every node the batch changed, with its row now (None: deleted).
        edges : sequence of (str, str, str, annotations), (str, str, str) or (str, str)
            The source, target and type of every edge the batch inserted or rewrote (existing
            now; the caller returns None itself for a deleted edge), and its annotations now:
            the values of :data:`~conceptwalk.graph.EDGE_ANNOTATION_KEYS` in that order, as the
            store holds them (None: absent). A pair without a type is of
            :data:`~conceptwalk.graph.DEFAULT_EDGE_TYPE`; an edge without annotations leaves
            them unknown (:meth:`walk_edges` is then None for this graph and those grown from it).
        version : int
            The change-log position after the batch (above this graph's).
        texts : mapping of str to (title, body), optional
            Every node whose text the batch wrote (every node of ``nodes`` but the deleted, and
            those whose body alone changed), with its title and body now. Omitted: the batch's
            texts are not known, and this graph and those grown from it have no live text
            (:meth:`text` returns None).
        aliases_count : int, optional
            The store's alias count after the batch, read with it (:attr:`aliases_count`).

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
        typed: list[tuple[int, int, str, tuple[Any, ...] | None]] = []
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
                ann = None
                if len(e) > 3:
                    ann = tuple(e[3])
                    if len(ann) != len(EDGE_ANNOTATION_KEYS):
                        raise InputError(
                            f"edges: annotations must be {len(EDGE_ANNOTATION_KEYS)} values "
                            f"({', '.join(EDGE_ANNOTATION_KEYS)}), got {len(ann)}"
                        )
                    if not all(
                        v is None
                        or (
                            isinstance(v, (int, float)) and not isinstance(v, bool)
                            if k == _CONF
                            else isinstance(v, str)
                        )
                        for k, v in zip(EDGE_ANNOTATION_KEYS, ann)
                    ):
                        ann = None  # a value the store's API does not write: not read live
                typed.append((sa, sd, str(e[2]) if len(e) > 2 else DEFAULT_EDGE_TYPE, ann))
        with self._chain.lock:  # one grower of a chain at a time (another thread's copy waits too)
            chain = self._chain
            if chain.head != self._serial:  # not the newest graph of its chain: grow a copy
                chain = chain.copy(self._n_new, self.version)
            chain.head = -1  # until the new graph is made: a failure below leaves a chain no graph grows in place
            keys, n_new, core = self._grow(chain, new, nodes, typed, a, bb, version, texts)
        # what this graph made, else what it inherited: a graph grown from it brings forward the
        # nearest graph's (whichever tools read this one)
        pi = self._inherit
        v = self.version
        inherit = _Inherit(
            pi.rescoped if self._rescoped is None else (self._rescoped, v),
            _carried(pi.slot_masks, {k: (w.slot_mask, v) for k, w in list(self._views.items())}),
            pi.text if self._text is None else (self._text, v),
            pi.types if self._types is None else (self._types, v),
            (self._walk, v) if isinstance(self._walk, WalkEdges) else pi.walk,
            pi.written if self._written is None else (self._written, v),
            _carried(pi.grown_memo, {k: (m, v) for k, m in list(self._grown_memo.items())}),
        )
        return LiveGraph(
            base,
            self.base_version,
            version,
            self.history,
            core,
            chain,
            n_new,
            keys,
            len(nodes.keys() | (texts or {}).keys()) + self._rewritten,
            inherit,
            aliases_count,
        )


#: A delta text document: ``(slot, id, version)`` and its (title, body) term ids.
_Doc = tuple[tuple[int, str, int], tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]]
#: A delta text index's documents as arrays: title offsets, title term ids, body offsets, body
#: term ids (what ``_core.TextIndex.build`` reads) and each document's slot.
_DocArrays = tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64]
]


def _doc_arrays(toks: Sequence[tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]], docs: Sequence[Any]) -> _DocArrays:
    """The arrays of documents ``toks`` (title and body term ids) at ``docs``' slots."""
    tptr = np.zeros(len(toks) + 1, dtype=np.int64)
    bptr = np.zeros(len(toks) + 1, dtype=np.int64)
    empty = np.empty(0, dtype=np.int32)
    if toks:
        np.cumsum([t.size for t, _ in toks], out=tptr[1:])
        np.cumsum([bd.size for _, bd in toks], out=bptr[1:])
    tterms = np.concatenate([t for t, _ in toks]).astype(np.int32, copy=False) if toks else empty
    bterms = np.concatenate([bd for _, bd in toks]).astype(np.int32, copy=False) if toks else empty
    slots = np.fromiter((d[0] for d in docs), dtype=np.int64, count=len(docs))
    return tptr, tterms, bptr, bterms, slots


def _room(a: npt.NDArray[Any], used: int, need: int) -> npt.NDArray[Any]:
    """``a``, or when it holds fewer than ``need`` values a new array of at least twice its size
    with its first ``used`` copied (the old one unchanged: a reader's view of it stays valid)."""
    if need <= a.size:
        return a
    out = np.empty(max(2 * a.size, need, 16), dtype=a.dtype)
    out[:used] = a[:used]
    return out


class _DocBuffer:
    """The documents of a chain's delta text index as append-only arrays (what
    ``_core.TextIndex.build`` reads), shared by the :class:`LiveText` s that are prefixes of it.

    A text of ``n`` documents reads the first ``n`` (and ``n + 1`` offsets); a graph grown by
    appended documents only writes past them, the way a slice shares its array with a longer
    one, so an agent's turn costs its own documents, not the delta's. A graph whose earlier
    text's documents another graph appended to since, or whose order keys moved, takes a copy
    (:meth:`prefix`). Appended to under the chain's lock.
    """

    __slots__ = ("tptr", "tterms", "bptr", "bterms", "slots", "keys", "rows", "terms", "pos", "n_docs")

    def __init__(
        self,
        arrays: _DocArrays,
        keys: npt.NDArray[np.uint64],
        rows: list[tuple[int, str, int]],
        terms: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]],
        pos: dict[str, int],
    ) -> None:
        self.tptr, self.tterms, self.bptr, self.bterms, self.slots = arrays
        self.keys = keys
        #: per document (slot, id, version) and its (title, body) term ids; each id's document
        self.rows, self.terms, self.pos = rows, terms, pos
        #: the documents written (a text of fewer reads a prefix)
        self.n_docs = len(rows)

    @classmethod
    def of(
        cls, docs: Sequence[_Doc], order_keys: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.uint64]]
    ) -> _DocBuffer:
        """A buffer of documents ``docs`` (a later one of the same id in place of an earlier),
        keyed by ``order_keys`` of their slots."""
        last = list({row[1]: (row, terms) for row, terms in docs}.values())
        rows = [row for row, _ in last]
        terms = [t for _, t in last]
        arrays = _doc_arrays(terms, rows)
        return cls(arrays, order_keys(arrays[4]), rows, terms, {row[1]: i for i, row in enumerate(rows)})

    def prefix(
        self, n: int, order_keys: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.uint64]] | None = None
    ) -> _DocBuffer:
        """A new buffer of the first ``n`` documents (``order_keys``: their keys made again)."""
        tn, bn = int(self.tptr[n]), int(self.bptr[n])
        slots = self.slots[:n].copy()
        arrays = (
            self.tptr[: n + 1].copy(),
            self.tterms[:tn].copy(),
            self.bptr[: n + 1].copy(),
            self.bterms[:bn].copy(),
            slots,
        )
        keys = self.keys[:n].copy() if order_keys is None else order_keys(slots)
        return _DocBuffer(arrays, keys, self.rows[:n], self.terms[:n], {x: i for x, i in self.pos.items() if i < n})

    def append(
        self, row: tuple[int, str, int], terms: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]], key: int
    ) -> None:
        """Append one document (``row``: slot, id, version) with its terms and order key."""
        n = self.n_docs
        t, bd = terms
        t0, b0 = int(self.tptr[n]), int(self.bptr[n])
        t1, b1 = t0 + t.size, b0 + bd.size
        self.tptr = _room(self.tptr, n + 1, n + 2)
        self.bptr = _room(self.bptr, n + 1, n + 2)
        self.slots = _room(self.slots, n, n + 1)
        self.keys = _room(self.keys, n, n + 1)
        self.tterms = _room(self.tterms, t0, t1)
        self.bterms = _room(self.bterms, b0, b1)
        self.tterms[t0:t1] = t
        self.bterms[b0:b1] = bd
        self.tptr[n + 1] = t1
        self.bptr[n + 1] = b1
        self.slots[n] = row[0]
        self.keys[n] = key
        self.rows.append(row)
        self.terms.append(terms)
        self.pos[row[1]] = n
        self.n_docs = n + 1

    def views(
        self, n: int
    ) -> tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int64],
        npt.NDArray[np.uint64],
    ]:
        """The arrays of the first ``n`` documents: title offsets and terms, body offsets and
        terms, slots and order keys."""
        tn, bn = int(self.tptr[n]), int(self.bptr[n])
        return self.tptr[: n + 1], self.tterms[:tn], self.bptr[: n + 1], self.bterms[:bn], self.slots[:n], self.keys[:n]


class LiveText:
    """The text of a :class:`LiveGraph` (see :meth:`LiveGraph.text`): the base's index less the
    documents rewritten since (``dropped``), plus a delta index of the written documents' texts,
    searched by the core as one collection: every BM25 statistic is counted over the visible
    documents of both, so each score and the order are a fresh index's, bit for bit.

    Parameters
    ----------
    base : TextIndex
        The base's text index.
    delta : conceptwalk._core.TextIndex
        The written documents' index (document j at ``slots[j]``).
    vocab : dict of str to int
        The delta's term ids (the chain's, append-only: ids from ``n_terms`` on are of later
        graphs).
    n_terms : int
        The delta index's term count.
    slots, keys : numpy.ndarray
        Per delta document its slot and order key.
    dropped : numpy.ndarray of int32
        The base documents the delta replaces, ascending.
    base_nodes : int
        The base's node count.
    buf : _DocBuffer, optional
        The documents' buffer the delta was built from (its first ``slots.size``).
    """

    __slots__ = (
        "base",
        "delta",
        "vocab",
        "n_terms",
        "slots",
        "keys",
        "dropped",
        "_b",
        "buf",
    )

    def __init__(
        self,
        base: TextIndex,
        delta: _core.TextIndex,
        vocab: dict[str, int],
        n_terms: int,
        slots: npt.NDArray[np.int64],
        keys: npt.NDArray[np.uint64],
        dropped: npt.NDArray[np.int32],
        base_nodes: int,
        buf: _DocBuffer | None = None,
    ) -> None:
        self.base = base
        self.delta = delta
        self.vocab = vocab
        self.n_terms = n_terms
        #: what the texts of the graphs grown after this one start from: the documents' buffer
        #: (its first ``slots.size`` are this text's)
        self.buf = buf
        self.slots = slots
        self.keys = keys
        self.dropped = dropped
        self._b = base_nodes

    def visible(self, view: LiveView | None) -> npt.NDArray[np.uint8] | None:
        """Per delta document, whether ``view``'s caller sees it (None: all access).

        Parameters
        ----------
        view : LiveView or None

        Returns
        -------
        numpy.ndarray of uint8 or None
        """
        if view is None:
            return None
        s = self.slots
        lo = s < self._b
        out = np.empty(s.size, dtype=np.uint8)
        out[lo] = view.base_mask[s[lo]]
        out[~lo] = view.slot_mask[s[~lo] - self._b]
        return out

    def search(
        self,
        text: str,
        k: int,
        *,
        stats: _core.TextStats | None = None,
        base_visible: npt.NDArray[np.uint8] | None = None,
        base_eligible: npt.NDArray[np.uint8] | None = None,
        delta_visible: npt.NDArray[np.uint8] | None = None,
        delta_eligible: npt.NDArray[np.uint8] | None = None,
    ) -> tuple[list[int], list[float]]:
        """Top ``k`` slots for ``text`` by BM25 over the visible documents of base and delta, by
        score descending, then id ascending (what :meth:`TextIndex.search` gives on a fresh
        index of the same documents).

        Parameters
        ----------
        text : str
        k : int
        stats : conceptwalk._core.TextStats, optional
            The base index's statistics over ``base_visible`` (default: all documents').
        base_visible, base_eligible : numpy.ndarray of uint8, optional
            Per base document, visible to the caller and admitted by a filter.
        delta_visible, delta_eligible : numpy.ndarray of uint8, optional
            The same per delta document (:meth:`visible`).

        Returns
        -------
        (slots, scores) : (list of int, list of float)
        """
        distinct = list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TERMS]
        bt: list[int] = []
        dt: list[int] = []
        for w in sorted(distinct):  # the summation order: the terms' string order
            i, j = self.base.term_id(w), self.vocab.get(w, -1)
            j = j if j < self.n_terms else -1
            if i >= 0 or j >= 0:
                bt.append(i)
                dt.append(j)
        if not bt:
            return [], []
        st = self.base.stats_for(None) if stats is None else stats
        docs, scores, _, _ = _core.bm25_topk_live(
            self.base.core,
            st,
            base_visible,
            base_eligible,
            self.dropped,
            self.delta,
            self.keys,
            delta_visible,
            delta_eligible,
            np.array(bt, dtype=np.int32),
            np.array(dt, dtype=np.int32),
            k,
            K1,
            B,
        )
        b = self._b
        slots = self.slots
        return [d if d < b else int(slots[d - b]) for d in docs.tolist()], scores.tolist()
