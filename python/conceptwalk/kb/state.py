"""One committed state of a knowledge base, and the keeper that builds, loads, saves and
advances it.

Two words, one meaning each across the package: a *snapshot* is the graph's arrays at one
change-log position (:class:`~conceptwalk.kb.snapshot.GraphSnapshot`) and the file they are
persisted in beside the store (``<store>.snapshot``); a *state* is the committed version of the
store that one read sees (:class:`StoreState`: the graph, its text index and the two counters).

:meth:`KnowledgeBase.state() <conceptwalk.kb.store.KnowledgeBase.state>` returns a
:class:`StoreState`: the graph snapshot, the text index of that graph's documents and the two
version counters, all taken inside one SQLite read transaction, so they describe the same
committed state of the store whatever another process writes meanwhile. A read that takes one
state and answers from it alone sees one state from start to end, and never fails because the
store moved under it (``graph()`` followed by ``text_index(graph)`` could see two).

It is immutable and shared: the same object is returned while the store is unchanged, and a
new one after any committed write (from any process).

:class:`StateKeeper` is what makes them: one per :class:`~conceptwalk.kb.store.KnowledgeBase`,
holding the last state read, the graph snapshot and text index it is brought forward from, the
arrays derived from them (:meth:`StateKeeper.derived_arrays`), and the snapshot file's bookkeeping
(which position it holds, whether it is trusted, when it is saved again). The store owns it and
delegates its read side to it (``state``, ``graph``, ``text_index``, ``derived_arrays``,
``keep_derived_arrays``, ``snapshot_path``); the store keeps the writes, transactions, the change
log and bulk loads.

Examples
--------
>>> from conceptwalk.kb import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}])
>>> st = kb.state()
>>> st.graph.ids, st.text_index.num_docs, st.version, kb.state() is st
(['a'], 1, 1, True)
>>> _ = kb.add_nodes([{"id": "b", "title": "Forward push"}])
>>> kb.state() is st, st.graph.ids   # the old state is unchanged
(False, ['a'])
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sqlite3
import sys
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import ConceptwalkError, InputError, shown
from ..graph import Caller, LinkGraph
from ..graph.linkgraph import EDGE_ANNOTATION_KEYS, PackedStrings, pack_strings
from ..graph.live import LiveGraph
from ..graph.text import TextIndex
from ..graph.view import View
from .snapshot import (
    CHANGE_ALIAS,
    CHANGE_EDGE,
    CHANGE_NODE,
    CHANGE_RESET,
    CHANGE_TEXT,
    CHANGE_VECTOR,
    GraphSnapshot,
    SnapshotError,
    read_arrays,
    release_pages,
    write_arrays,
)

__all__ = ["StoreState", "StateKeeper"]


def _heap_trimmer() -> Callable[[], Any] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none (not Linux, musl, no libc)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return lambda: fn(0)


#: Gives the pages of freed heap memory back to the system (None: not available here). A store
#: written on every turn replaces its snapshot's arrays on every read after a write; the arrays
#: freed are of slightly different sizes each time, and glibc keeps most of the freed heap
#: mapped: 3,000 turns at 50k nodes left the process at 171 MB without trimming and at 154 MB
#: trimming every 64th replacement (``benchmarks/bench_live.py --memory-turns 3000``; a fresh
#: process on the same store: 95 MB).
_trim_heap = _heap_trimmer()


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _heap_free_reader() -> Callable[[], int] | None:
    """The bytes of free memory glibc holds in its heap (``mallinfo2().fordblks``), or None where
    there is no ``mallinfo2`` (not glibc 2.33 or later)."""
    if _trim_heap is None:
        return None
    try:
        fn = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    fn.argtypes = []
    fn.restype = _MallInfo2
    return lambda: int(fn().fordblks)


#: The free heap bytes (None: not available here): a store checks it every
#: ``StateKeeper.TRIM_CHECK_EVERY`` reads of its live graph and when its state is replaced, and
#: trims past ``StateKeeper.TRIM_FREE_BYTES``.
_heap_free = _heap_free_reader()


@dataclass(frozen=True, eq=False)
class StoreState:
    """The store at one committed state.

    Attributes
    ----------
    version : int
        The store's write counter at this state (:attr:`KnowledgeBase.version
        <conceptwalk.kb.store.KnowledgeBase.version>`; bumped by every committed write, those
        that cannot change the graph included: aliases, embeddings).
    graph_version : int
        The change-log position of ``graph`` (the snapshot's own version).
    graph : LinkGraph
        The graph snapshot at this state.
    text_index : TextIndex
        The text index of ``graph``'s nodes (titles and bodies at this state), documents in
        ``graph``'s node order.
    committed : bool
        False for the state read inside the store's own write transaction: its rows are not
        committed (a rollback and another write reach the same positions with other rows), so
        nothing derived from it may be kept for a later read.
    history : int
        How many times the store object that read this state has found the change log replaced
        under it (a backup restored into the file, a copy of another history put in its place):
        positions of different ``history`` values are positions of different logs, so nothing
        kept at one may be brought forward to the other. 0 until that happens.
    """

    version: int
    graph_version: int
    graph: LinkGraph
    text_index: TextIndex
    committed: bool = True
    history: int = 0

    def view(self, caller: Caller) -> View:
        """The caller's view of this state: its prepared mask, its BM25 statistics of
        :attr:`text_index` and whatever the layers above keep per caller
        (:class:`~conceptwalk.graph.view.View`), made once per caller and shared.

        Parameters
        ----------
        caller : Caller

        Returns
        -------
        View

        Examples
        --------
        >>> from conceptwalk import Caller
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "walks"}, {"id": "b", "title": "walks", "scopes": ["t"]}])
        >>> st = kb.state()
        >>> v = st.view(Caller.public())
        >>> v.mask.visible_count, st.text_index.search("walks", 5, visible=v)[0], st.view(Caller.public()) is v
        (1, [0], True)
        """
        return self.graph.view(caller)

    def __repr__(self) -> str:
        return (
            f"StoreState(version={self.version}, graph_version={self.graph_version}, "
            f"nodes={self.graph.num_nodes}, edges={self.graph.num_edges})"
        )


def _release(objs: list[Any]) -> None:
    """Drop ``objs`` (the references to a replaced base) once the read that replaced it is over,
    and give the freed heap back when glibc holds more than the keeper's trim mark of it (the
    release thread of :meth:`StateKeeper._adopt_compacted`). Freeing is one long step that holds
    the interpreter: done while the reader still holds its own references, it would be the
    reader's (the last reference dropped frees), and done during its next step, it would delay
    it; so it waits :data:`RELEASE_AFTER` seconds, past the end of an agent's read."""
    time.sleep(RELEASE_AFTER)
    objs.clear()
    _trim_past(StateKeeper.TRIM_FREE_BYTES)


class _CatchUp:
    """The process's catch-up thread: after a store's own commit it brings the store's live graph
    to the committed position (:meth:`StateKeeper.catch_up`), off the read path, so that a read
    made a moment after the write (an agent's next turn) finds it grown.

    One daemon thread serves every store of the process, started on the first request; a store
    is queued once however many commits it makes before the thread reaches it (the thread grows
    it through all of them at once), and is held by a weak reference only (a set of them: the
    order the stores are served in is none a reader can tell).

    Fork: a fork waits until the thread is between two stores (it holds no store's lock and is
    not inside SQLite), and the child starts with an empty queue and no thread (one of its own on
    its first request), so neither the parent's stores nor the child's own are left locked."""

    #: Seconds the thread waits after a request before it brings anything forward: a read that
    #: follows the write at once brings the graph forward itself (as without the thread), and the
    #: thread then finds nothing to do without contending with it for the interpreter; an agent's
    #: next turn, which comes later, finds the graph grown.
    DELAY = 0.002
    #: How many times the thread tries a store whose lock another thread holds (a read or a
    #: write of its own), :attr:`DELAY` apart, before it leaves it to the next read.
    TRIES = 5

    def __init__(self) -> None:
        self._fresh()
        os.register_at_fork(before=self._before_fork, after_in_parent=self._after_fork, after_in_child=self._fresh)

    def _fresh(self) -> None:
        """The state of a process with no thread yet (also a forked child's)."""
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)  # a request, or the thread idle again
        self._busy = threading.Lock()  # held while the thread works on a store (a fork waits)
        self._queued: weakref.WeakSet[StateKeeper] = weakref.WeakSet()
        self._working = False
        self._thread: threading.Thread | None = None

    def _before_fork(self) -> None:
        self._busy.acquire()  # (the thread never waits for a store's lock while it holds this)
        self._lock.acquire()

    def _after_fork(self) -> None:
        self._lock.release()
        self._busy.release()

    def request(self, keeper: StateKeeper) -> None:
        """Queue ``keeper`` (unless queued already), starting the thread when none runs."""
        with self._lock:
            if keeper in self._queued:
                return
            self._queued.add(keeper)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="conceptwalk-catch-up", daemon=True)
                self._thread.start()
            self._wake.notify_all()

    def queued(self, keeper: StateKeeper) -> bool:
        """Whether ``keeper`` waits for the thread."""
        with self._lock:
            return keeper in self._queued

    def wait_idle(self, timeout: float) -> bool:
        """Wait until nothing is queued and the thread brings nothing forward; whether it is so
        (False: ``timeout`` seconds passed first). For tests and benchmarks."""
        with self._lock:
            return self._wake.wait_for(lambda: not self._queued and not self._working, timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                self._working = False
                self._wake.notify_all()
                while not self._queued:
                    self._wake.wait()
                self._working = True
            time.sleep(self.DELAY)
            while True:
                with self._lock:
                    try:
                        keeper = self._queued.pop()  # a commit from now on queues it again
                    except KeyError:  # (none left, or the last one freed meanwhile)
                        break
                for attempt in range(self.TRIES):
                    if attempt:
                        time.sleep(self.DELAY)
                    try:
                        with self._busy:
                            done = keeper.catch_up()
                    except Exception:  # noqa: BLE001 - the next read meets (and reports) whatever this met
                        done = True
                    if done:
                        break
                del keeper


_CATCH_UP = _CatchUp()


def _trim_past(free_bytes: int) -> bool:
    """Give the freed heap back when glibc holds more than ``free_bytes`` of it; whether it did."""
    if _heap_free is not None and _trim_heap is not None and _heap_free() > free_bytes:
        _trim_heap()
        return True
    return False


def _pack_titles(graph: LinkGraph) -> None:
    """Hold ``graph``'s titles as one UTF-8 buffer (:class:`PackedStrings`, as a graph mapped from a
    snapshot file holds them) instead of one Python string per node: the compaction thread's new
    base, before any reader sees it (a long-lived writer's bases are made this way turn after
    turn)."""
    if not isinstance(graph.titles, PackedStrings):
        graph.titles = PackedStrings(*pack_strings(graph.titles))


def _nonce_at(conn: sqlite3.Connection, seq: int) -> str | None:
    """The nonce (hex) of the change-log row at ``seq`` read through ``conn``, or None (no row)."""
    r = conn.execute("SELECT hex(nonce) FROM change_nonces WHERE seq = ?", (seq,)).fetchone()
    return None if r is None else str(r[0])


#: How long the release thread waits before it frees a replaced base (see :func:`_release`).
RELEASE_AFTER = 0.05


@dataclass(frozen=True)
class _Compacted:
    """A new base made by the compaction thread (:meth:`StateKeeper.live_graph`): the snapshot and
    text index at change-log position ``version`` of history ``history`` (the keeper's count when
    it started), the row there's ``nonce``, the write counter ``write_version`` read in the same
    transaction, and whether the snapshot file was written from it (``saved``)."""

    history: int
    version: int
    write_version: int
    nonce: str | None
    snap: GraphSnapshot
    text: TextIndex | None
    saved: bool


class StoreDamaged(Exception):
    """A stored value this version cannot read (a damaged file, or rows written around the API);
    the store's lock-holding reads turn it into a :class:`ConceptwalkError` naming the file."""


def meta_int(conn: sqlite3.Connection, key: str) -> int:
    """The integer ``meta`` row ``key`` (the write counter, the schema version), read through
    ``conn``; :class:`StoreDamaged` when it is missing or not an integer."""
    r = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if r is None:
        raise StoreDamaged(f"the meta row {key!r} is missing (the store is damaged)")
    if isinstance(r[0], bool) or not isinstance(r[0], int):
        raise StoreDamaged(f"the meta row {key!r} holds {shown(r[0])}, not a count (the store is damaged)")
    return r[0]


def parse_scopes(s: Any, node_id: Any) -> list[str] | None:
    """A stored ``scopes`` value (JSON list text) as a list; :class:`StoreDamaged` when it is not."""
    if s is None:
        return None
    try:
        v = json.loads(s)
    except (TypeError, ValueError, RecursionError):
        v = s
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise StoreDamaged(
            f"node {shown(node_id)} has scopes {shown(s)}, not a JSON list of strings (the store is damaged)"
        )
    return v


#: The change-log position and the write counter, read together, with what tells one history
#: from another: the nonce of the change-log row at that position (schema 3 and later; a restored
#: backup reuses positions), the schema cookie (a schema changed under the object: an upgrade, or
#: a backup of another schema restored) and the store's uuid (another store put in its place).
_VERSIONS = (
    "SELECT p.seq, (SELECT value FROM meta WHERE key = 'version'), NULL, "
    "(SELECT schema_version FROM pragma_schema_version()), (SELECT value FROM meta WHERE key = 'uuid') "
    "FROM (SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'changes') AS seq) AS p"
)
_VERSIONS_NONCE = _VERSIONS.replace("NULL", "(SELECT hex(nonce) FROM change_nonces WHERE seq = p.seq)", 1)
#: ... and the nonce of the row at the position the keeper followed last (``?``): the history
#: check after a write, in the same statement (see ``StateKeeper._follow_history``).
_VERSIONS_NONCE_SEEN = _VERSIONS_NONCE.replace(
    " FROM (SELECT", ", (SELECT hex(nonce) FROM change_nonces WHERE seq = ?) FROM (SELECT", 1
)
_HAS_NONCES = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'change_nonces'"
_HAS_TALLIES = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tallies'"
_DERIVED_NAME = re.compile(r"[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+)*")
_DERIVED_PART = re.compile(r"[A-Za-z0-9_]+")


def _remove_stale_temporaries(path: str, age: float = 600.0) -> None:
    """Remove temporary snapshot files a killed writer left (older than ``age`` seconds, so a
    save in progress in another process is never touched)."""
    import glob
    import time

    now = time.time()
    for tmp in glob.glob(glob.escape(path) + ".*.tmp"):
        try:
            if now - os.stat(tmp).st_mtime > age:
                os.unlink(tmp)
        except OSError:
            pass


class Store(Protocol):
    """What a :class:`StateKeeper` reads of its store: public attributes only (the
    :class:`~conceptwalk.kb.store.KnowledgeBase` that owns it)."""

    read_only: bool
    SNAPSHOT_SAVE_EVERY: int

    @property
    def conn(self) -> sqlite3.Connection: ...


class StateKeeper:
    """The read side of one store: builds, loads, saves and advances its :class:`StoreState`.

    It keeps the last committed state read (and its ``annotations=False`` form), the graph
    snapshot and text index the next one is brought forward from along the change log, the
    arrays derived from the graph at one position, and the bookkeeping of the snapshot file
    beside the store: which position it holds, whether it holds the text index and which derived
    arrays, when it is saved again, and setting aside a file that fails verification. Nothing
    read inside the store's own write transaction is kept.

    A :class:`~conceptwalk.kb.store.KnowledgeBase` makes one when it is opened and delegates
    :meth:`~conceptwalk.kb.store.KnowledgeBase.state`, ``graph``, ``text_index``,
    ``derived_arrays``, ``keep_derived_arrays`` and ``snapshot_path`` to it. Every method takes
    the store's lock (one lock for both: a read takes it once and checks the version once).

    Parameters
    ----------
    store : Store
        The store, held weakly by the caller's choice (the knowledge base passes a
        ``weakref.proxy`` of itself, so the two make no reference cycle): its ``conn`` (raises
        once closed), ``read_only`` and ``SNAPSHOT_SAVE_EVERY`` are read when needed.
    path : str
        The store's file (``":memory:"`` or a ``file::memory:`` URI: no snapshot file).
    lock : threading.RLock
        The store's lock.
    read : callable
        ``read()`` is a context manager holding the lock and a read transaction of the store
        (inside the store's own write transaction: that transaction), yielding the connection;
        SQLite errors and :class:`StoreDamaged` raised inside become errors naming the store.
    writing : callable
        ``writing()`` is True inside the store's own write transaction.
    changelog : bool
        The store has a change log (not a version-1 file opened read-only).
    uuid : str or None
        The store's ``meta.uuid`` (None: a snapshot file is never trusted nor written).
    schema_version : int
        The store's schema version, recorded in the snapshot file it saves.
    snapshot_schemas : tuple of int, optional
        The schema versions whose snapshot files it reads (default: ``schema_version`` alone):
        those whose graph and text a snapshot holds are the same.

    Examples
    --------
    >>> import threading
    >>> from contextlib import contextmanager
    >>> from conceptwalk.kb import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_edges([("a", "b")])
    >>> lock = threading.RLock()
    >>> @contextmanager
    ... def read():
    ...     with lock:
    ...         kb.conn.execute("BEGIN")
    ...         try:
    ...             yield kb.conn
    ...         finally:
    ...             kb.conn.execute("COMMIT")
    >>> keeper = StateKeeper(kb, path=":memory:", lock=lock, read=read, writing=lambda: False,
    ...                      changelog=True, uuid=None, schema_version=3)
    >>> st = keeper.state()
    >>> st.graph.ids, keeper.state() is st, keeper.graph() is st.graph
    (['a', 'b'], True, True)
    """

    #: After how many replaced snapshots the freed heap is given back (``malloc_trim``) ...
    TRIM_EVERY = 64
    #: ... or sooner, once the snapshots replaced since the last trim held, together, this many
    #: times the current graph's nodes plus edges (and at least :attr:`TRIM_MIN_ENTRIES`): glibc
    #: keeps a freed graph's pages, so without it a long-lived writer's resident memory grew by
    #: what it had replaced (bench_live --memory-turns, 50k nodes: 128 -> 246 MB over 100,000
    #: turns, against 158 MB for a fresh process on the final store; a collection freed nothing).
    TRIM_GRAPHS = 2
    TRIM_MIN_ENTRIES = 100_000
    #: Every this many reads of the live graph, the free heap is read (``mallinfo2``: microseconds) and
    #: given back past :attr:`TRIM_FREE_BYTES` (as when a state is replaced): what the reads that
    #: replaced the full state freed after its last trim (their old text index, views and caches)
    #: is otherwise kept.
    TRIM_CHECK_EVERY = 8
    TRIM_FREE_BYTES = 16 << 20

    def __init__(
        self,
        store: Store,
        *,
        path: str,
        lock: threading.RLock,
        read: Callable[[], AbstractContextManager[sqlite3.Connection]],
        writing: Callable[[], bool],
        changelog: bool,
        uuid: str | None,
        schema_version: int,
        snapshot_schemas: tuple[int, ...] = (),
    ) -> None:
        self._store = store
        self._path = path
        self._lock = lock
        self._read = read
        self._writing = writing
        self._changelog = changelog
        self._uuid = uuid
        self._schema_version = schema_version
        self._snapshot_schemas = frozenset(snapshot_schemas or (schema_version,))
        self._persist = not (path == ":memory:" or path.startswith("file::memory:"))
        self._snap: GraphSnapshot | None = None  # the graph at a change-log position
        self._live: LiveGraph | None = None  # the last live graph (live_graph): a base plus a delta
        # the compaction thread running (a new base for the live graph), and what it made, not yet
        # taken: both set and read under _compact_lock, never under the store's lock by the thread
        self._compact_lock = threading.Lock()
        self._compacting: threading.Thread | None = None
        self._compacted: _Compacted | None = None
        self._compactions = [0, 0]  # bases the thread made, and those a read took
        self._replaced = 0  # snapshots replaced by a newer one (for TRIM_EVERY)
        self._replaced_entries = 0  # their nodes plus edges since the last trim (for TRIM_GRAPHS)
        self._live_reads = 0  # live_graph() calls (for TRIM_CHECK_EVERY)
        # the connection's total_changes (rows this connection wrote; no statement) at the last
        # own commit, and at the start of the last read that brought the live graph to the
        # position it read: a catch-up after a read that came after the commit has nothing to do
        self._commit_mark = 0
        self._caught_mark = -1
        self._read_since_catch_up = False  # a read used the live graph since the last catch-up
        self._light: tuple[LinkGraph, LinkGraph] | None = None  # a graph and its annotations=False projection
        self._file_version: int | None = None  # the change-log position of the snapshot file on disk
        self._file_text = False  # whether that file holds the text index too
        # Arrays derived from the graph at one change-log position (by the store or a layer
        # above: derived_arrays / keep_derived_arrays), by name: those read from the snapshot
        # file and those kept since, with the position they belong to, and the names the file
        # on disk holds.
        self._derived: dict[str, dict[str, Any]] = {}
        self._derived_version: int | None = None
        self._derived_graph: LinkGraph | None = None  # the graph at _derived_version, when known
        self._derived_serial: dict[str, int] = {}  # name -> the serial of its parts (one per keep)
        self._file_derived: dict[str, int] = {}  # name -> the serial of the parts the file holds
        self._serials = 0
        #: The text index of a snapshot (graph, change-log position, index): the last committed
        #: one, built, advanced or loaded from the snapshot file; the next one is advanced from it.
        self._text: tuple[LinkGraph, int, TextIndex] | None = None
        #: The last committed state read (:meth:`state`), and its annotations=False form.
        self._state: StoreState | None = None
        self._state_light: tuple[StoreState, StoreState] | None = None
        #: The history followed (:meth:`_follow_history`): the last position read with the nonce
        #: of its change-log row, how many times the log was found replaced, and the first
        #: position changed_nodes may start from since the last time.
        self._nonces: bool | None = None  # whether the store has change_nonces (None: not asked yet)
        #: whether the store keeps tallies (schema 4; asked with _nonces): a batch's change-log
        #: read then also reads the alias count (LiveGraph.aliases_count)
        self._tallied = False
        self._seen: tuple[int, str | None] | None = None
        self._highest = 0  # the highest position read in this history
        self._cookie: int | None = None  # the schema cookie when _nonces was asked
        self._history = 0
        self._floor = 0

    @property
    def snapshot_path(self) -> str | None:
        """Where the graph snapshot is saved (``<store>.snapshot``), or None: an in-memory store,
        or a directory a save could not write (saving is then off for this object)."""
        return None if not self._persist else self._path + ".snapshot"

    @property
    def file_version(self) -> int | None:
        """The change-log position of the snapshot file this object read or wrote (None: no
        trusted file: none, rebuilt, set aside, or never saved)."""
        return self._file_version

    @property
    def history(self) -> int:
        """How many times this object has found the change log replaced under it (see
        :attr:`StoreState.history`)."""
        return self._history

    def position(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """The change-log position read through ``conn`` and the history it is of, with the
        history checked (:meth:`_follow_history`).

        Parameters
        ----------
        conn : sqlite3.Connection
            The store's connection, inside the read transaction whose other reads it dates.

        Returns
        -------
        tuple of (int, int)
            ``(graph_version, history)``.
        """
        with self._lock:
            return self._versions(conn)[0], self._history

    @property
    def derived_names(self) -> list[str]:
        """The names of the derived arrays kept (read from the file or kept since), ascending."""
        with self._lock:
            return sorted(self._derived)

    # ------------------------------------------------------------------ the state
    def graph_version(self, conn: sqlite3.Connection) -> int:
        """The change-log position read through ``conn`` (or, in a version-1 file opened read-only,
        which has no change log, ``-1 - version``: every write then rebuilds).

        Parameters
        ----------
        conn : sqlite3.Connection
            The store's connection (inside a read transaction for a position that the reads
            after it share).

        Returns
        -------
        int
        """
        if not self._changelog:
            return -1 - int(conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])
        r = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()
        return 0 if r is None else int(r[0])

    def _versions(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """``(graph_version(conn), meta_int(conn, "version"))`` in one statement (the check a read
        of an unchanged store makes; an unusual value is read again the long way, which names it),
        with the history checked (:meth:`_follow_history`)."""
        if not self._changelog:
            return self.graph_version(conn), meta_int(conn, "version")
        seen = self._seen
        at_seen: tuple[int, Any] | None = None  # (the position followed last, its row's nonce now)
        try:  # (on the first read _nonces is None: the cookie check below asks)
            if self._nonces and seen is not None:
                seq, wv, nonce, cookie, uuid, was = conn.execute(_VERSIONS_NONCE_SEEN, (seen[0],)).fetchone()
                at_seen = (seen[0], was)
            else:
                seq, wv, nonce, cookie, uuid = conn.execute(_VERSIONS_NONCE if self._nonces else _VERSIONS).fetchone()
        except sqlite3.OperationalError:  # the nonce table went with a schema change: ask again below
            seq = wv = nonce = cookie = uuid = None
            at_seen = None
        replaced = False
        if cookie is None or cookie != self._cookie:  # the schema changed (or first read): ask again
            had = self._nonces
            self._nonces = conn.execute(_HAS_NONCES).fetchone() is not None
            self._tallied = conn.execute(_HAS_TALLIES).fetchone() is not None
            seq, wv, nonce, cookie, uuid = conn.execute(_VERSIONS_NONCE if self._nonces else _VERSIONS).fetchone()
            at_seen = None
            replaced = self._cookie is not None and had != self._nonces  # another schema's log
            self._cookie = cookie if isinstance(cookie, int) else None
        if isinstance(uuid, str) and self._uuid is not None and uuid != self._uuid:
            replaced = True  # another store (an upgraded schema-1 backup gets a uuid of its own)
            self._uuid = uuid
        gv = self.graph_version(conn) if seq is None else int(seq)
        if isinstance(wv, bool) or not isinstance(wv, int):
            wv = meta_int(conn, "version")  # raises: missing, or not a count
        self._follow_history(conn, gv, nonce if isinstance(nonce, str) else None, replaced, at_seen)
        return gv, wv

    def _follow_history(
        self,
        conn: sqlite3.Connection,
        gv: int,
        nonce: str | None,
        replaced: bool = False,
        at_seen: tuple[int, Any] | None = None,
    ) -> None:
        """Check that the change log read through ``conn`` at position ``gv`` (its row's nonce
        ``nonce``) is the one this object read before: the row at the last position read still
        carries the nonce it had. A restored backup, or another copy put in the file's place,
        replaces the log (``replaced``: the caller found it by the schema or the uuid): its
        positions may equal those read before with other rows behind them, so everything kept at
        a position (the snapshot, text index, derived arrays, the last state) is dropped,
        :attr:`history` counts one more, and :meth:`changed_nodes` answers nothing from a
        position this object read before. A store without nonces (schema 2 read-only) is
        followed by position alone. The position is recorded as followed only once checked (an
        interrupted check is made again by the next read). ``at_seen``: ``(position, nonce)`` of
        the row at the position followed last, read in the statement that read ``gv`` (else read
        here)."""
        seen = self._seen
        same = True
        if replaced:
            same = False
        elif seen is not None and seen != (gv, nonce) and self._nonces:
            pos, was = seen
            same = False
            if 0 < pos < gv:
                if at_seen is not None and at_seen[0] == pos:
                    at = at_seen[1] if isinstance(at_seen[1], str) else None
                else:
                    at = _nonce_at(conn, pos)
                same = at is not None and at == was  # the same log, written past the position read
            elif pos == 0 < gv:
                same = True  # before any change: every log starts there (the uuid tells stores apart)
            # else: the same position with another row, or the log went back: another history
        if not same:
            self._snap = self._light = None
            self._live = None
            self._state = self._state_light = None
            self._forget_kept()
            self._history += 1
            self._floor = max(gv, self._highest) + 1
        self._seen = (gv, nonce)
        self._highest = max(self._highest, gv)

    def state(self, *, annotations: bool = True) -> StoreState:
        """The store's current committed state (see :meth:`KnowledgeBase.state
        <conceptwalk.kb.store.KnowledgeBase.state>`).

        Parameters
        ----------
        annotations : bool
            ``False`` gives the state whose graph is the projection without the edge annotations.

        Returns
        -------
        StoreState
        """
        with self._lock:
            if self._writing():  # inside the store's own write transaction: its rows, never cached
                with self._read() as conn:
                    gv = self.graph_version(conn)
                    snap = self._snapshot_at(conn, gv, keep=False)
                    ix = self._text_from_rows(conn, snap.graph)
                    wv = meta_int(conn, "version")
                assert ix is not None  # strict: raised otherwise
                g = snap.graph if annotations else snap.graph.without_annotations()
                return StoreState(wv, gv, g, ix, committed=False, history=self._history)
            gv, wv = self._checked_versions()  # (a current state is answered without a read transaction)
            st = self._state  # (after the check: a replaced log drops it)
            if st is not None and st.graph_version == gv and st.version == wv:
                return self._finish_state(st, annotations)
            with self._read() as conn:
                gv, wv = self._versions(conn)
                st = self._state
                if (st is None or st.graph_version != gv or st.version != wv) and self._compacted is not None:
                    self._adopt_compacted(gv)  # the compaction thread's base: nearer than the kept one
                    st = self._state
                if st is None or st.graph_version != gv or st.version != wv:
                    snap = self._snapshot_at(conn, gv)
                    st = StoreState(wv, gv, snap.graph, self._text_at(conn, snap.graph, gv), history=self._history)
                    replaced, self._state = self._state, st
                    if replaced is not None:
                        del replaced
                        self._trim_if_free()  # what the replaced state alone held is freed now
            return self._finish_state(st, annotations)

    def kept_state(self, *, annotations: bool = True) -> StoreState | None:
        """The current state when this keeper holds it, else None (see
        :meth:`KnowledgeBase.kept_state <conceptwalk.kb.store.KnowledgeBase.kept_state>`).

        Parameters
        ----------
        annotations : bool

        Returns
        -------
        StoreState or None
        """
        with self._lock:
            if self._writing() or self._compacted is not None:
                return None
            gv, wv = self._checked_versions()
            st = self._state  # (after the check: a replaced log drops it)
            if st is None or st.graph_version != gv or st.version != wv:
                return None
            return self._finish_state(st, annotations)

    def _finish_state(self, st: StoreState, annotations: bool) -> StoreState:
        """:meth:`state`'s answer from the current state ``st``: the snapshot file saved when
        due, and the light state (``annotations=False``) made once."""
        with self._lock:
            gv = st.graph_version
            # as graph() and text_index() do: a full build is saved, and the saved file of this
            # version gets the text index added once
            self.save_snapshot(force=self._file_version is None or self._file_version == gv)
            if annotations:
                return st
            light = self._state_light
            if light is None or light[0] is not st:
                if self._light is None or self._light[0] is not st.graph:
                    self._light = (st.graph, st.graph.without_annotations())
                light = (
                    st,
                    StoreState(st.version, st.graph_version, self._light[1], st.text_index, history=st.history),
                )
                self._state_light = light
            return light[1]

    def _checked_version(self) -> int:
        """The change-log position, with the history checked (:meth:`_checked_versions`)."""
        return self._checked_versions()[0]

    def _checked_versions(self) -> tuple[int, int]:
        """:meth:`_versions` in one statement on the store's connection (one statement sees one
        committed state: no read transaction is opened for it); on a damaged file or value read
        again inside a read, whose error names the store."""
        try:
            return self._versions(self._store.conn)
        except (sqlite3.DatabaseError, UnicodeDecodeError, StoreDamaged):
            with self._read() as conn:
                return self._versions(conn)

    def graph(self, *, annotations: bool = True) -> LinkGraph:
        """The store's graph snapshot (see :meth:`KnowledgeBase.graph
        <conceptwalk.kb.store.KnowledgeBase.graph>`): one read of the change-log position while
        it is unchanged.

        Parameters
        ----------
        annotations : bool
            ``False`` gives the projection without the edge annotations.

        Returns
        -------
        LinkGraph
        """
        key = bool(annotations)
        with self._lock:
            conn = self._store.conn
            if self._writing():  # inside the store's own transaction: uncommitted state is never cached
                snap = self._snapshot_at(conn, self.graph_version(conn), keep=False)
                return snap.graph if key else snap.graph.without_annotations()
            gv = self._checked_version()  # with the history checked: a replaced log drops _snap
            cur = self._snap
            if cur is not None and cur.version == gv:
                snap = cur
            else:
                with self._read() as conn:
                    gv = self._versions(conn)[0]
                    if self._compacted is not None:
                        self._adopt_compacted(gv)  # the compaction thread's base: nearer than the kept one
                    snap = self._snapshot_at(conn, gv)
                self.save_snapshot(force=self._file_version is None)
            if key:
                return snap.graph
            if self._light is None or self._light[0] is not snap.graph:
                self._light = (snap.graph, snap.graph.without_annotations())
            return self._light[1]

    #: A live graph's delta is folded into a new base (the full snapshot, :meth:`graph`) once it
    #: holds this many added or rewritten nodes ...
    LIVE_DELTA_NODES = 1000
    #: ... or one read would grow it by more change-log rows than this (the writes made while a
    #: compaction ran are grown over its base in one read: an agent's turn writes ~3 rows, so this
    #: is more than LIVE_DELTA_NODES).
    LIVE_GROW_ROWS = 4000
    #: ... or once the rows its delta wrote (every version of a grown row is kept while a graph of
    #: the chain may read it) pass this many entries (4 bytes each).
    LIVE_ARENA_ENTRIES = 1 << 23
    #: Compaction off the read path: once a live graph's delta holds this many added or rewritten
    #: nodes, a background thread makes the new base (the snapshot and text index at the position
    #: it reads, through a connection of its own, and the snapshot file when it is due) while the
    #: reads go on growing the delta over the old base; the first read after it is ready starts
    #: from it. A read waits for it only when the delta reaches :attr:`LIVE_DELTA_NODES` first
    #: (the writer outpaced the thread). 0: off (the read past LIVE_DELTA_NODES makes the base).
    #: Only for a store in a file with a change log and nonces (an in-memory store has no second
    #: connection).
    LIVE_COMPACT_NODES = 500
    #: :attr:`LIVE_DELTA_NODES` and :attr:`LIVE_GROW_ROWS` hold for a base of up to
    #: ``LIVE_DELTA_NODES * LIVE_DELTA_SHARE`` nodes (500k); past it they grow with the base, a
    #: delta then holding up to 1/LIVE_DELTA_SHARE of its nodes (5,000 at 2.5M). The compaction
    #: thread's advance takes time in proportion to the base (4-5 s at 2.5M nodes): a writer at a
    #: few hundred turns a second wrote 1,000 nodes before it was done, and its reads waited for
    #: the thread, up to 3 s each (:meth:`_delta_limits`).
    LIVE_DELTA_SHARE = 500

    def _delta_limits(self, live: LiveGraph) -> tuple[int, int]:
        """The most written nodes ``live``'s delta holds and the most change-log rows one read
        grows it by (:attr:`LIVE_DELTA_SHARE`)."""
        scale = max(1.0, live.base.num_nodes / max(1, self.LIVE_DELTA_NODES * self.LIVE_DELTA_SHARE))
        return int(self.LIVE_DELTA_NODES * scale), int(self.LIVE_GROW_ROWS * scale)

    def _trim_if_free(self) -> None:
        """Give the freed heap back when glibc holds more than :attr:`TRIM_FREE_BYTES` of it."""
        if _trim_past(self.TRIM_FREE_BYTES):
            self._replaced_entries = 0

    #: Whether a commit of the store's own (:meth:`committed`) asks the process's catch-up thread
    #: to grow the live graph a read made before (:meth:`catch_up`).
    CATCH_UP = True

    def committed(self) -> None:
        """The store's own transaction committed: when a read of this process made a live graph,
        the catch-up thread brings it forward (:meth:`catch_up`), so that the next read, if it
        comes a moment later, finds it at the new position."""
        if self.CATCH_UP and self._live is not None and self._changelog:
            self._commit_mark = self._store.conn.total_changes
            _CATCH_UP.request(self)

    def catch_up(self) -> bool:
        """Bring the live graph a read made to the store's position when that costs the change
        (it grows from the change log, or takes the compaction thread's base), as the next read
        would; do nothing where that read would wait for the compaction thread or make a new base
        from the full snapshot (a deletion, a bulk load, a full delta): the read does that as
        before. Only a graph a read has used since the last catch-up is grown (a writer that
        stopped reading pays nothing).

        Returns
        -------
        bool
            False when another thread held the store's lock (a read, a write or a transaction
            of its own): the lock is never waited for, the caller may try again.
        """
        if not self._read_since_catch_up:
            return True  # (no read since the last one)
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self._caught_mark < self._commit_mark:  # (else a read since the commit did it)
                # one try per read: where it cannot grow the graph (a deletion since, a full
                # delta), the next commits do not try again, each reading the changes since
                self._read_since_catch_up = False
                self._live_graph(cheap=True)
        finally:
            self._lock.release()
        return True

    def live_graph(self) -> LiveGraph:
        """The store's graph as a base plus a delta (see :meth:`KnowledgeBase.live_graph
        <conceptwalk.kb.store.KnowledgeBase.live_graph>`): the last one brought forward by the
        change log at the cost of the change, or a new one over the full snapshot when the changes
        since hold one a delta does not express (a deletion, a bulk load), or the delta is full.

        Returns
        -------
        LiveGraph
        """
        got = self._live_graph(cheap=False)
        assert got is not None  # (only a cheap call gives up)
        self._read_since_catch_up = True
        return got

    def _live_graph(self, *, cheap: bool) -> LiveGraph | None:
        """:meth:`live_graph`; ``cheap``: only what costs the change (:meth:`catch_up`), None
        where a read would wait for the compaction thread or make a new base, or where no read
        made a live graph."""
        with self._lock:
            if self._writing():  # inside the store's own transaction: uncommitted, never kept
                return None if cheap else LiveGraph.over(self.graph(), version=-1, history=self._history)
            if cheap and self._live is None:
                return None
            mark = self._store.conn.total_changes  # (every own commit it counts is read below)
            got = self._live_at_position(cheap)
            if got is not None and got.version >= 0:
                self._caught_mark = mark
            return got

    def _live_at_position(self, cheap: bool) -> LiveGraph | None:
        """:meth:`_live_graph` with the store's lock held, outside a transaction."""
        if not cheap:
            self._live_reads += 1
            if self._live_reads % self.TRIM_CHECK_EVERY == 0:
                self._trim_if_free()
        gv = self._checked_version()  # the history checked: a replaced log drops _live
        live = self._live
        if self._compacted is None and live is not None and live.version == gv:
            if not cheap:
                self._start_compaction(live)  # (grown by the catch-up thread: no read's grow started it)
            return live
        if live is not None and live.version != gv and live.rewritten >= self._delta_limits(live)[0]:
            if cheap:
                return None  # (the read waits for the thread)
            self._wait_compaction()  # the writer outpaced the thread: its base is nearer than a new one
        self._adopt_compacted(gv)  # (a base the thread made is taken by the first read after it)
        live, snap = self._live, self._snap
        if live is not None and live.version == gv:
            return live
        if snap is not None and snap.version <= gv and (live is None or snap.version > live.base_version):
            live = LiveGraph.over(snap.graph, version=snap.version, history=self._history)
        if live is not None and live.version == gv:
            self._live = live
            return live
        if (
            live is not None
            and self._changelog
            and live.version < gv
            and live.rewritten < self._delta_limits(live)[0]
            and live.core.arena_entries < self.LIVE_ARENA_ENTRIES
        ):
            # one statement (one committed state) reads the changes and the rows they name
            # now, with the position: a store moved past gv since the check above takes the
            # long way below, which checks the history again
            seen = self._seen
            try:
                if self._nonces and seen is not None and seen[0] == gv:
                    # with the nonce of the change-log row at gv: a backup of another history
                    # restored since the check above (the same position, other rows) is seen
                    grown = self._grow_live(self._store.conn, live, gv, seen[1])
                else:  # no nonces to tell histories apart: in a read transaction, checked again
                    with self._read() as conn:
                        grown = self._grow_live(conn, live, gv) if self._versions(conn)[0] == gv else None
            except (sqlite3.DatabaseError, StoreDamaged):
                grown = None  # the long way names the store in its error
            except (TypeError, ValueError, KeyError, OverflowError, UnicodeDecodeError, RecursionError):
                grown = None  # rows written around the API (a damaged store): the long way says so
            if grown is not None:
                self._live = grown
                self._start_compaction(grown)
                return grown
        if cheap:
            return None  # (the read makes the new base)
        g = self.graph()  # a new base: the full snapshot at the current position
        snap = self._snap
        if snap is None or snap.graph is not g:  # not kept (a history replaced meanwhile): not kept either
            return LiveGraph.over(g, version=-1, history=self._history)
        self._live = LiveGraph.over(g, version=snap.version, history=self._history)
        return self._live

    @property
    def compactions(self) -> tuple[int, int]:
        """``(made, taken)``: the new bases the compaction thread made, and those a read took
        (the others were overtaken by a newer snapshot, another history or the store's close)."""
        with self._compact_lock:
            return self._compactions[0], self._compactions[1]

    def _start_compaction(self, live: LiveGraph) -> None:
        """Start the compaction thread for ``live`` (over the kept snapshot) when its delta has
        rewritten :attr:`LIVE_COMPACT_NODES` nodes (0: never), unless one runs, one's base waits
        to be taken, or this store cannot have one (in memory, no nonces, read-only and
        immutable)."""
        snap = self._snap
        if (
            not self.LIVE_COMPACT_NODES
            or live.rewritten < self.LIVE_COMPACT_NODES
            or self._path == ":memory:"
            or self._path.startswith("file::memory:")
            or not self._changelog
            or not self._nonces
            or getattr(self._store, "immutable", False)
            or snap is None
            or snap.graph is not live.base
            or snap.version != live.base_version
        ):
            return
        with self._compact_lock:
            if self._compacting is not None or self._compacted is not None:
                return
        # the nonce of the change-log row at the snapshot's position, in the history just checked
        # (the caller's read): the thread advances the snapshot only along a log holding that row
        try:
            base_nonce = _nonce_at(self._store.conn, snap.version)
        except sqlite3.Error:  # (a busy or damaged store: the read it is part of goes on; no thread)
            return
        if snap.version > 0 and base_nonce is None:
            return
        with self._compact_lock:
            if self._compacting is not None or self._compacted is not None:
                return
            text = self._text
            if text is not None and (text[0] is not snap.graph or text[1] != snap.version):
                text = None
            t = threading.Thread(
                target=self._compact,
                args=(snap, base_nonce, text, self._history, self._file_version),
                name="conceptwalk-compaction",
                daemon=True,
            )
            self._compacting = t
        t.start()

    def _compact(
        self,
        snap: GraphSnapshot,
        base_nonce: str | None,
        text: tuple[LinkGraph, int, TextIndex] | None,
        history: int,
        file_version: int | None,
    ) -> None:
        """The compaction thread: ``snap`` (and its text index) brought to the store's position
        through a read-only connection of its own, the snapshot file written from it when due,
        kept for the next read to take (:meth:`_adopt_compacted`). The log it reads must hold
        ``base_nonce`` at the snapshot's position (None: position 0, every log's start): a
        backup of another history restored since the keeper checked it would otherwise have its
        rows applied to this history's graph, and the file labelled with its last row. It never
        takes the store's lock and changes nothing but what it hands over; any failure leaves
        nothing (the read path then makes the base itself, and names the error)."""
        made = None
        try:
            uri = "file:" + urllib.parse.quote(os.path.abspath(self._path)) + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0)
            try:
                conn.execute("PRAGMA busy_timeout = 30000")
                conn.execute("BEGIN")
                seq, wv, nonce, _cookie, uuid = conn.execute(_VERSIONS_NONCE).fetchone()
                gv = 0 if seq is None else int(seq)
                if (
                    uuid == self._uuid
                    and isinstance(wv, int)
                    and not isinstance(wv, bool)
                    and gv > snap.version
                    and _nonce_at(conn, snap.version) == base_nonce
                ):
                    out = self._advance_or_build(conn, snap, gv, distrust=False)
                    # the text index only when the base had one (a store never searched has none: a
                    # build here would tokenise every document, holding the interpreter for long)
                    ix = None if text is None else self._advance_text_index(conn, out.graph, gv, text)
                    saved = False
                    path = self.snapshot_path
                    every = max(self._store.SNAPSHOT_SAVE_EVERY, (out.graph.num_nodes + out.graph.num_edges) // 100)
                    if (
                        path is not None
                        and not self._store.read_only
                        and self._uuid is not None
                        and (file_version is None or gv - file_version >= every)
                    ):
                        last = self._change_at(conn, gv)
                        if last is not None and (gv == 0 or last[-1] == nonce):
                            saved = self._write_file(path, out, ix, {}, last)
                    _pack_titles(out.graph)
                    made = _Compacted(history, gv, wv, nonce, out, ix, saved)
                conn.execute("COMMIT")
            finally:
                conn.close()
        except Exception:  # noqa: BLE001 - a cache made early: the read path makes it and names the error
            made = None
        with self._compact_lock:
            self._compacting = None
            self._compacted = made
            self._compactions[0] += made is not None

    def _wait_compaction(self) -> None:
        """Wait for the compaction thread, if one runs (it never takes the store's lock)."""
        with self._compact_lock:
            t = self._compacting
        if t is not None:
            t.join()

    def stop_compaction(self) -> None:
        """Wait for the compaction thread, if one runs, and drop what it made (the store closes)."""
        self._wait_compaction()
        with self._compact_lock:
            self._compacted = None

    def _adopt_compacted(self, gv: int) -> None:
        """Take the compaction thread's base, if it made one that is of this history (the nonce of
        the change-log row at its position is the store's now), not ahead of position ``gv`` and
        newer than the kept snapshot: it becomes the kept snapshot, text index and state, and the
        live graph starts from it (under the store's lock, inside a read of ``gv``)."""
        with self._compact_lock:
            made, self._compacted = self._compacted, None
        if made is None or made.history != self._history or made.version > gv:
            return
        snap = self._snap
        if snap is not None and snap.version >= made.version:
            return
        if made.version > 0 and _nonce_at(self._store.conn, made.version) != made.nonce:
            return  # another history (restored since the thread read it)
        # what the old base held is freed by a thread of its own (below): dropping a large
        # graph's lists and arrays would cost the read that takes the new base tens of ms at
        # millions of nodes; the reader gives the interpreter up when its read ends
        retired: list[Any] = [snap, self._live, self._state, self._state_light, self._text, self._light]
        self._replace_snap(snap, made.snap)
        self._compactions[1] += 1
        st = self._state
        if made.text is not None:
            self._text = (made.snap.graph, made.version, made.text)
            if st is None or st.graph_version < made.version:
                self._state = StoreState(
                    made.write_version, made.version, made.snap.graph, made.text, history=self._history
                )
                self._state_light = None
        if made.saved and (self._file_version is None or self._file_version < made.version):
            self._file_version = made.version
            self._file_text = made.text is not None
            self._file_derived = {}
        del st, made, snap
        threading.Thread(target=_release, args=(retired,), name="conceptwalk-release", daemon=True).start()

    def live_base_state(self, live: LiveGraph) -> StoreState | None:
        """The state whose graph is ``live``'s base (its text index, its version, its callers'
        views), when it is the last state this keeper made; None otherwise (the caller takes the
        snapshot path, which makes the current state: the next live graph is over it).

        Parameters
        ----------
        live : LiveGraph

        Returns
        -------
        StoreState or None
        """
        with self._lock:
            st = self._state
            if st is not None and st.graph is live.base and st.graph_version == live.base_version:
                return st
            return None

    #: The changes after a position with, for a node change, the node's row now (NULL: deleted)
    #: and, for an edge change, whether the edge exists now: one statement for a delta's batch.
    _LIVE_CHANGES = (
        "SELECT c.kind, c.a, c.b, c.c, n.id IS NOT NULL, n.type, n.title, n.scopes, n.lifecycle, n.body, "
        "e.rowid IS NOT NULL, " + ", ".join(f"e.{k}" for k in EDGE_ANNOTATION_KEYS) + ", "
        "(SELECT seq FROM sqlite_sequence WHERE name = 'changes'), NULL FROM changes AS c "
        f"LEFT JOIN nodes AS n ON c.kind IN ({CHANGE_NODE}, {CHANGE_TEXT}) AND n.id = c.a "
        f"LEFT JOIN edges AS e ON c.kind = {CHANGE_EDGE} AND e.src = c.a AND e.dst = c.b AND e.type = c.c "
        "WHERE c.seq > ? AND c.seq <= ? ORDER BY c.seq LIMIT ?"
    )
    #: ... with, per row, the nonce of the change-log row at the position (schema 3 and later).
    _LIVE_CHANGES_NONCE = (
        _LIVE_CHANGES.replace("NULL FROM", "(SELECT hex(nonce) FROM change_nonces WHERE seq = ?2) FROM", 1)
        .replace("c.seq > ? AND c.seq <= ?", "c.seq > ?1 AND c.seq <= ?2", 1)
        .replace("LIMIT ?", "LIMIT ?3", 1)
    )
    #: ... and the store's alias count (schema 4's tally, kept by triggers on every alias row
    #: whoever writes it), so that a live graph grown by a batch that wrote no alias keeps what
    #: a reader made of the aliases (LiveGraph.aliases_count).
    _LIVE_CHANGES_TALLY = _LIVE_CHANGES_NONCE.replace(
        " FROM changes AS c", ", (SELECT n FROM tallies WHERE name = 'aliases') FROM changes AS c", 1
    )

    def _grow_live(
        self, conn: sqlite3.Connection, live: LiveGraph, version: int, nonce: Any = False
    ) -> LiveGraph | None:
        """``live`` brought to ``version`` from the change log, read in one statement (one
        committed state), or None when that state is not at ``version`` (a write committed since),
        its change-log row there has not the ``nonce`` read with the position (another history
        restored since; ``False``: not checked, the caller's read transaction dates the position)
        or the changes since hold one its delta does not express."""
        if not 0 <= live.version <= version:
            return None
        if live.version == version:
            return live
        most_nodes, most_rows = self._delta_limits(live)
        tallied = nonce is not False and self._tallied
        if nonce is False:
            rows = conn.execute(self._LIVE_CHANGES, (live.version, version, most_rows + 1)).fetchall()
        else:
            sql = self._LIVE_CHANGES_TALLY if tallied else self._LIVE_CHANGES_NONCE
            rows = conn.execute(sql, (live.version, version, most_rows + 1)).fetchall()
        if len(rows) != version - live.version:
            return None  # a gap in the log, or too many changes
        nodes: dict[str, tuple[Any, ...] | None] = {}
        edges: list[tuple[str, str, str, tuple[Any, ...]]] = []
        texts: dict[str, tuple[Any, Any]] = {}  # every node whose title or body was written: both now
        nann = len(EDGE_ANNOTATION_KEYS)
        for row in rows:
            kind, a, b, c, node_now, ntype, title, scopes, life, body, edge_now = row[:11]
            ann, now, row_nonce = row[11 : 11 + nann], row[11 + nann], row[12 + nann]
            if now != version or (nonce is not False and row_nonce != nonce):
                return None  # the rows are of a later state, or of another history
            if kind == CHANGE_TEXT:
                if not node_now:
                    return None  # its node deleted since (the deletion's row says so too)
                texts[a] = (title, body)
            elif kind == CHANGE_NODE:
                if node_now:
                    parse_scopes(scopes, a)  # StoreDamaged for scopes the store did not write
                    texts[a] = (title, body)
                nodes[a] = (ntype, title, scopes, life) if node_now else None
            elif kind == CHANGE_EDGE:
                if not edge_now:
                    return None  # a deleted edge
                edges.append((a, b, c, ann))
            elif kind == CHANGE_RESET:
                return None  # a bulk load
        if len(nodes.keys() | texts.keys()) + live.rewritten > most_nodes:
            return None  # more written nodes than a delta holds: a new base (a bulk-sized batch)
        count = rows[-1][13 + nann] if tallied and rows else None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            count = None  # not a count (a damaged row): read the long way
        return live.grown(nodes, edges, version=version, texts=texts, aliases_count=count)

    def text_index(self, graph: LinkGraph | None = None) -> TextIndex | None:
        """The text index of ``graph`` (default: the current state's; see
        :meth:`KnowledgeBase.text_index <conceptwalk.kb.store.KnowledgeBase.text_index>`).

        Parameters
        ----------
        graph : LinkGraph, optional
            A graph this keeper returned.

        Returns
        -------
        TextIndex or None
            None when ``graph`` is not (any more) the store's.
        """
        with self._lock:
            if graph is None:
                return self.state().text_index
            if self._writing():  # inside the store's own write transaction: the current rows, never cached
                with self._read() as conn:
                    ix = self._text_from_rows(conn, graph, strict=False)
                return ix
            full = self._full_graph(graph)
            if full is None:
                return None  # not this store's snapshot (any more)
            cached, snap = self._text, self._snap
            if (
                cached is not None
                and cached[0] is full
                and snap is not None
                and snap.graph is full
                and cached[1] == snap.version
            ):
                return cached[2]  # the index of the newest state read for this graph
            st = self.state()
            return st.text_index if st.graph is full else None

    # ------------------------------------------------------------------ arrays derived from the graph
    def derived_arrays(
        self, name: str, graph_version: int, *, history: int | None = None
    ) -> dict[str, npt.NDArray[Any]] | None:
        """The arrays kept under ``name`` for the graph at ``graph_version`` (see
        :meth:`KnowledgeBase.derived_arrays <conceptwalk.kb.store.KnowledgeBase.derived_arrays>`).

        Parameters
        ----------
        name : str
            The name they were kept under.
        graph_version : int
            The change-log position they must belong to.
        history : int, optional
            The state's :attr:`StoreState.history`: None when it is not this keeper's now.

        Returns
        -------
        dict of str to numpy.ndarray, or None
        """
        with self._lock:
            if self._writing() or self._derived_version != graph_version:
                return None  # inside a write transaction: its uncommitted position has none
            if history is not None and history != self._history:
                return None  # a position of a log found replaced since
            got = self._derived.get(name)
            return None if got is None else dict(got)

    def derived_arrays_before(
        self, name: str, graph_version: int, *, history: int | None = None
    ) -> tuple[LinkGraph, int, dict[str, npt.NDArray[Any]]] | None:
        """The arrays kept under ``name`` for the latest position at or before ``graph_version``
        that this keeper still holds, with the graph of that position (see
        :meth:`KnowledgeBase.derived_arrays_before
        <conceptwalk.kb.store.KnowledgeBase.derived_arrays_before>`).

        Parameters
        ----------
        name : str
            The name they were kept under.
        graph_version : int
            The position a reader wants to bring them to.
        history : int, optional
            The state's :attr:`StoreState.history`: None when it is not this keeper's now.

        Returns
        -------
        (LinkGraph, int, dict of str to numpy.ndarray) or None
        """
        with self._lock:
            v, g = self._derived_version, self._derived_graph
            if self._writing() or v is None or g is None or not 0 <= v <= graph_version:
                return None
            if history is not None and history != self._history:
                return None  # a position of a log found replaced since
            got = self._derived.get(name)
            return None if got is None else (g, v, dict(got))

    def changed_nodes(
        self, since: int, until: int, *, text: bool = False, vectors: str | None = None, limit: int | None = None
    ) -> list[str] | None:
        """The ids of the nodes whose row changed (inserted, deleted, or any column the graph
        reads; with ``text`` also a body) between two committed change-log positions (see
        :meth:`KnowledgeBase.changed_nodes <conceptwalk.kb.store.KnowledgeBase.changed_nodes>`).

        Parameters
        ----------
        since, until : int
            Positions with ``0 <= since <= until``.
        text : bool
            Also the nodes whose body alone changed.
        vectors : str, optional
            Also the nodes whose stored vector of this embedding model changed.
        limit : int, optional
            None when more than this many changes lie between them.

        Returns
        -------
        list of str or None
            Ascending; None when the log cannot tell: no change log, a ``reset`` (a bulk load)
            or a gap between them, more than ``limit`` changes, or positions out of order.
        """
        if (
            isinstance(since, bool)
            or isinstance(until, bool)
            or not isinstance(since, int)
            or not isinstance(until, int)
            or not 0 <= since <= until
        ):
            return None
        if not self._changelog:
            return None
        if limit is not None and until - since > limit:
            return None
        kinds = (CHANGE_NODE, CHANGE_TEXT) if text else (CHANGE_NODE,)
        with self._lock:
            if self._writing():  # uncommitted positions are not a history to follow
                return None
            with self._read() as conn:
                self._versions(conn)  # the history checked in this read
                if since < self._floor:
                    return None  # a position read in a log found replaced since
                rows = conn.execute(
                    "SELECT kind, a, b FROM changes WHERE seq > ? AND seq <= ?", (since, until)
                ).fetchall()
        if len(rows) != until - since or any(k == CHANGE_RESET for k, _, _ in rows):
            return None
        return sorted(
            {
                a
                for k, a, b in rows
                if isinstance(a, str) and (k in kinds or (k == CHANGE_VECTOR and vectors is not None and b == vectors))
            }
        )

    def keep_derived_arrays(
        self, name: str, graph_version: int, arrays: Mapping[str, npt.ArrayLike], *, history: int | None = None
    ) -> None:
        """Keep arrays derived from the graph at ``graph_version`` (see
        :meth:`KnowledgeBase.keep_derived_arrays
        <conceptwalk.kb.store.KnowledgeBase.keep_derived_arrays>`).

        Parameters
        ----------
        name : str
            Dot-separated ``[A-Za-z0-9_:-]`` parts.
        graph_version : int
            The position they were derived at.
        arrays : mapping of str to array
            Part name (``[A-Za-z0-9_]+``) -> a numeric array.
        history : int, optional
            The :attr:`StoreState.history` of the state they were derived from: nothing is kept
            when it is not this keeper's now.

        Raises
        ------
        InputError
            A malformed name or part, or an array that is not numeric.
        """
        if not isinstance(name, str) or not _DERIVED_NAME.fullmatch(name):
            raise InputError(f"keep_derived_arrays: name must be dot-separated [A-Za-z0-9_:-] parts, got {name!r}")
        parts: dict[str, npt.NDArray[Any]] = {}
        for k, a in arrays.items():
            if not isinstance(k, str) or not _DERIVED_PART.fullmatch(k):
                raise InputError(f"keep_derived_arrays: part names must be [A-Za-z0-9_]+, got {k!r}")
            arr = np.ascontiguousarray(a)
            if arr.dtype.kind not in "biuf":
                raise InputError(f"keep_derived_arrays: part {k!r} must be numeric, got dtype {arr.dtype}")
            if arr.flags.writeable:  # our own read-only copy: the caller's array stays as it was
                arr = arr.copy()
                arr.setflags(write=False)
            parts[k] = arr
        if self._store.read_only:
            return
        with self._lock:
            snap = self._snap
            # Only a committed position this object has read: inside its own write transaction
            # the position is not committed (a rollback and another write reach it again with
            # other rows), and a position it has not read as committed is not known to be one.
            if self._writing() or snap is None or snap.version != graph_version:
                return
            if history is not None and history != self._history:
                return  # derived from a position of a log found replaced since
            if self._derived_version != graph_version:
                self._derived, self._derived_version = {}, graph_version
                self._derived_graph = snap.graph
            self._derived[name] = parts
            self._serials += 1
            self._derived_serial[name] = self._serials
            # saved as the snapshot is: the file of this position is rewritten once to add them,
            # a file of an older position waits for the usual save (every SNAPSHOT_SAVE_EVERY)
            self.save_snapshot(force=self._file_version is None)

    # ------------------------------------------------------------------ building and advancing
    def _full_graph(self, graph: LinkGraph) -> LinkGraph | None:
        """The full graph of this store's snapshot ``graph`` (itself, or the graph whose
        annotations=False projection it is); None when it is not the last snapshot read."""
        for full in (
            None if self._snap is None else self._snap.graph,
            None if self._state is None else self._state.graph,
        ):
            if full is None:
                continue
            if graph is full or (self._light is not None and self._light[0] is full and self._light[1] is graph):
                return full
        return None

    def _text_at(self, conn: sqlite3.Connection, g: LinkGraph, version: int) -> TextIndex:
        """The text index of ``g``, the graph at change-log position ``version``, inside the read
        transaction at ``version``: the cached one, else advanced from it
        (:meth:`_advance_text_index`), else built from every row; kept as the cached one."""
        cached = self._text
        if cached is not None and cached[0] is g and cached[1] == version:
            return cached[2]
        ix = self._advance_text_index(conn, g, version, cached)
        if ix is None:
            ix = self._text_from_rows(conn, g)
        assert ix is not None  # strict: raised otherwise
        self._text = (g, version, ix)
        return ix

    def _text_from_rows(self, conn: sqlite3.Connection, g: LinkGraph, *, strict: bool = True) -> TextIndex | None:
        """The text index of ``g`` built from every node row read through ``conn`` (in the same
        read transaction as ``g``). The rows must be ``g``'s nodes: otherwise the store is
        damaged (``strict``) or ``g`` is not its graph (None)."""
        rows = conn.execute("SELECT id, title, body FROM nodes ORDER BY id").fetchall()
        if len(rows) != g.num_nodes or any(r[0] != i for r, i in zip(rows, g.ids)):
            if not strict:
                return None
            raise StoreDamaged(
                f"its graph snapshot ({g.num_nodes} nodes) does not hold the stored nodes "
                f"({len(rows)} rows) read in the same transaction (the store is damaged)"
            )
        return TextIndex.build([r[1] for r in rows], [r[2] for r in rows])

    def _advance_text_index(
        self, conn: sqlite3.Connection, g: LinkGraph, version: int, base: tuple[LinkGraph, int, TextIndex] | None
    ) -> TextIndex | None:
        """The text index ``base`` (graph, position, index: the cached one, built, advanced or
        loaded from the snapshot file) brought to ``version`` by the change log (inside the read
        transaction at ``version``), or None when it cannot be (no index, a ``reset``, a gap in
        the log, more changes than a rebuild costs): the documents of the node and text changes
        since its position are the only ones read back and tokenised; every other document keeps
        its postings, renumbered from the old node order to ``g``'s."""
        if base is None or not self._changelog:
            return None
        old_g, old_v, old_ix = base
        if not 0 <= old_v <= version or old_ix.num_docs != old_g.num_nodes:
            return None
        limit = max(1000, (g.num_nodes + g.num_edges) // 8)  # as the graph's: past it, a build is cheaper
        rows = conn.execute(
            f"SELECT kind, a FROM changes WHERE seq > ? AND seq <= ? AND kind NOT IN ({CHANGE_VECTOR}, {CHANGE_ALIAS}) "
            "LIMIT ?",
            (old_v, version, limit + 1),
        ).fetchall()
        if len(rows) > limit or any(k == CHANGE_RESET for k, _ in rows):
            return None
        whole = conn.execute("SELECT count(*) FROM changes WHERE seq > ? AND seq <= ?", (old_v, version)).fetchone()[0]
        if whole != version - old_v:
            return None  # a gap in the log
        ids = sorted({a for k, a in rows if (k == CHANGE_NODE or k == CHANGE_TEXT) and a is not None})
        old_index, new_index = old_g.id_index, g.id_index
        dropped = sorted(old_index[x] for x in ids if x in old_index)
        changed = sorted((new_index[x], x) for x in ids if x in new_index)
        if old_g.num_nodes - len(dropped) != g.num_nodes - len(changed):
            return None  # the graphs do not differ by these changes only: rebuild
        if not dropped and not changed:
            return old_ix  # only edges (or nothing the text reads) changed: the same documents
        text: dict[str, tuple[Any, Any]] = {}
        want = [x for _, x in changed]
        for i in range(0, len(want), 500):
            part = want[i : i + 500]
            for nid, title, body in conn.execute(
                f"SELECT id, title, body FROM nodes WHERE id IN ({','.join('?' * len(part))})", part
            ):
                text[nid] = (title, body)
        if len(text) != len(want):
            return None  # pragma: no cover - the graph at this version holds these ids
        return old_ix.with_changes(
            g.num_nodes, dropped, [p for p, _ in changed], [text[x][0] for x in want], [text[x][1] for x in want]
        )

    def _snapshot_at(self, conn: sqlite3.Connection, version: int, *, keep: bool = True) -> GraphSnapshot:
        """The snapshot at ``version`` (inside a read transaction): the cached or saved one
        brought forward by the change log, or a fresh build."""
        snap = self._snap
        if snap is None and keep and self._changelog:
            snap = self._load_snapshot(conn, version)
            if snap is not None:
                self._snap = snap  # mapped from the file: keep it (and bring it forward below)
        if snap is not None and snap.version == version:
            return snap
        try:
            out = self._advance_or_build(conn, snap, version)
        except (ConceptwalkError, sqlite3.DatabaseError):
            raise
        except (TypeError, ValueError, KeyError, OverflowError, UnicodeDecodeError, RecursionError) as exc:
            # Only values read from the file reach here: a damaged or hand-edited store. Name
            # the row when it is a node's scopes (the usual hand edit), else say what failed.
            for nid, sc in conn.execute("SELECT id, scopes FROM nodes WHERE scopes IS NOT NULL"):
                parse_scopes(sc, nid)
            raise StoreDamaged(
                f"its graph cannot be built from the stored rows ({type(exc).__name__}: {exc}; the store is damaged)"
            ) from None
        if keep:
            self._replace_snap(snap, out)
        return out

    def _replace_snap(self, snap: GraphSnapshot | None, out: GraphSnapshot) -> None:
        """Keep ``out`` as the snapshot the next one is brought forward from, in place of
        ``snap``, releasing what the replaced one held."""
        if snap is not None and snap.graph is not out.graph:
            # the replaced graph and its light projection: their views hold them (a cycle
            # only the collector frees), so without this every graph a write replaced
            # stays in memory until a collection, which then frees them all at once
            snap.graph.release_views()
            if self._light is not None and self._light[0] is snap.graph:
                self._light[1].release_views()
            if self._live is not None and self._live.base is snap.graph:
                self._live = None  # the next live graph is over the new snapshot: the old one is freed
            self._replaced += 1
            self._replaced_entries += snap.graph.num_nodes + snap.graph.num_edges
            now = out.graph.num_nodes + out.graph.num_edges
            if _trim_heap is not None and (
                self._replaced % self.TRIM_EVERY == 0
                or self._replaced_entries >= max(self.TRIM_MIN_ENTRIES, self.TRIM_GRAPHS * now)
            ):
                _trim_heap()  # ~3 ms at 50k nodes
                self._replaced_entries = 0
        self._snap = out

    def _advance_or_build(
        self, conn: sqlite3.Connection, snap: GraphSnapshot | None, version: int, *, distrust: bool = True
    ) -> GraphSnapshot:
        """``snap`` brought to ``version`` by the change log (inside the read transaction at
        ``version``), or a fresh build when it cannot be; a failed advance distrusts the snapshot
        file (``distrust``: the compaction thread, which must not touch the keeper, only builds)."""
        out = None
        if snap is not None and self._changelog and 0 <= snap.version < version:
            limit = max(1000, (snap.graph.num_nodes + snap.graph.num_edges) // 8)
            # the rows the graph reads (a stored vector or a body changes nothing in it), at most
            # limit + 1 of them; and the log must have no gap
            rows = conn.execute(
                f"SELECT kind, a, b, c FROM changes WHERE seq > ? AND seq <= ? "
                f"AND kind NOT IN ({CHANGE_TEXT}, {CHANGE_VECTOR}, {CHANGE_ALIAS}) ORDER BY seq LIMIT ?",
                (snap.version, version, limit + 1),
            ).fetchall()
            whole = conn.execute(
                "SELECT count(*) FROM changes WHERE seq > ? AND seq <= ?", (snap.version, version)
            ).fetchone()[0]
            if whole == version - snap.version and len(rows) <= limit and all(r[0] != CHANGE_RESET for r in rows):
                graph_rows = rows
                if graph_rows:
                    try:
                        out = snap.advance(conn, graph_rows, version)
                    except sqlite3.DatabaseError:
                        raise
                    except Exception as exc:  # noqa: BLE001 - any failure of an advance: build afresh
                        if isinstance(exc, InputError) and "has no nodes" in str(exc):
                            raise
                        out = None
                        if distrust:
                            self._distrust_file(f"advancing it failed ({type(exc).__name__}: {exc})")
                else:  # only bodies changed: the same graph, at the new position
                    out = GraphSnapshot(snap.graph, version, snap.loops)
        if out is None:
            out = GraphSnapshot.build(conn, version)
        return out

    def _load_snapshot(self, conn: sqlite3.Connection, version: int) -> GraphSnapshot | None:
        """The saved snapshot when it is provably this store's at a position it has passed: the
        file is a regular file whose every array matches its checksum and passes the loaders'
        structural checks, and its uuid, schema, position and the nonce of the change-log row
        at that position are the store's. None otherwise: a file that is damaged or not a
        snapshot is set aside (:meth:`_set_aside`); one of another history or store is left to
        be replaced by the next save. Never raises for the file's contents."""
        path = self.snapshot_path
        if path is None or self._uuid is None:
            return None
        try:
            meta, arrays = read_arrays(path)
        except FileNotFoundError:
            return None
        except SnapshotError as exc:
            self._set_aside(path, str(exc))
            return None
        except (OSError, ValueError, MemoryError, OverflowError) as exc:  # unreadable: not ours to judge
            self._set_aside(path, f"{type(exc).__name__}: {exc}")
            return None
        v = meta.get("graph_version")
        if (
            meta.get("kind") != "conceptwalk.graph"
            or meta.get("store_uuid") != self._uuid
            or meta.get("schema_version") not in self._snapshot_schemas
            or isinstance(v, bool)
            or not isinstance(v, int)
            or not 0 <= v <= version
        ):
            return None
        last = self._change_at(conn, v)
        if last is None or meta.get("last_change") != last:
            return None  # another history (a restored backup, a diverged copy) or no nonce
        try:
            snap = GraphSnapshot.from_arrays(arrays, v)
            text_arrays = {k[5:]: a for k, a in arrays.items() if k.startswith("text.")}
            ix = TextIndex.from_arrays(text_arrays) if text_arrays else None
            # validated through by the core: the pages need not stay resident in this process
            release_pages(text_arrays.values())
        except Exception as exc:  # noqa: BLE001 - whatever the contents make a loader raise
            self._set_aside(path, f"{type(exc).__name__}: {exc}")
            return None
        derived: dict[str, dict[str, Any]] = {}
        for key, a in arrays.items():
            if key.startswith("derived."):
                name, _, part = key[8:].rpartition(".")
                if name and part:
                    derived.setdefault(name, {})[part] = a
        self._derived, self._derived_version, self._derived_graph = derived, v, snap.graph
        self._derived_serial = {name: 0 for name in derived}  # serial 0: as read from the file
        self._file_derived = dict(self._derived_serial)
        self._file_version = v
        self._file_text = False
        if ix is not None and ix.num_docs == snap.graph.num_nodes:  # searches need no rebuild
            self._text = (snap.graph, v, ix)
            self._file_text = True
        return snap

    def _set_aside(self, path: str, why: str) -> None:
        """Rename a snapshot file that failed a check to ``<path>.bad-<time>`` (kept for
        inspection; the next save writes a fresh one) and warn, naming both."""
        import time
        import warnings

        bad = f"{path}.bad-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        try:
            if self._store.read_only:
                raise OSError("read-only open")
            os.replace(path, bad)
            where = f"set aside as {bad!r}"
        except OSError:
            where = "left in place (it could not be renamed)"
        warnings.warn(
            f"conceptwalk: the graph snapshot {path!r} failed verification ({why}); "
            f"it was {where} and the graph is rebuilt from the store",
            RuntimeWarning,
            stacklevel=2,
        )

    def _distrust_file(self, why: str) -> None:
        """A snapshot brought forward failed: rebuild, and if it came from the file, set the
        file aside."""
        path = self.snapshot_path
        if path is not None and self._file_version is not None and os.path.lexists(path):
            self._set_aside(path, why)
        self._forget_kept()

    def _forget_kept(self) -> None:
        """Drop the text index and the derived arrays kept, and what is known of the file."""
        self._file_version = None
        self._file_text = False
        self._text = None
        self._derived, self._derived_version, self._file_derived = {}, None, {}
        self._derived_graph = None
        self._derived_serial = {}

    @staticmethod
    def _change_at(conn: sqlite3.Connection, seq: int) -> list[Any] | None:
        """The change-log row at ``seq`` with its nonce (hex), or None (no such row, or a store
        without nonces: an older schema opened read-only, whose snapshots are never trusted).
        Position 0 (before any change) has no row: ``[]``."""
        if seq == 0:
            return []
        try:
            r = conn.execute(
                "SELECT c.kind, c.a, c.b, c.c, hex(n.nonce) FROM changes c "
                "JOIN change_nonces n ON n.seq = c.seq WHERE c.seq = ?",
                (seq,),
            ).fetchone()
        except sqlite3.OperationalError:  # no change_nonces table (schema 2, read-only)
            return None
        return None if r is None else list(r)

    def save_snapshot(self, *, force: bool = False) -> None:
        """Save the snapshot beside the store when it is newer than the saved one (by at least
        the store's ``SNAPSHOT_SAVE_EVERY`` changes unless ``force``), with the text index when
        one is built for it and the derived arrays kept for its position (the file of the same
        version is rewritten once to add them). A cache: a directory that cannot be written turns
        saving off for this object. Never saves for a read-only store.

        Parameters
        ----------
        force : bool
            Save whenever the file is not at the snapshot's position (or lacks its text index or
            derived arrays), however few changes it is behind.
        """
        snap, path = self._snap, self.snapshot_path
        if (
            snap is None
            or path is None
            or self._store.read_only
            or not self._changelog
            or self._uuid is None
            or snap.version < 0
        ):
            return
        text = self._text
        with_text = text is not None and text[0] is snap.graph and text[1] == snap.version
        derived = self._derived if self._derived_version == snap.version else {}
        if (
            self._file_version == snap.version
            and (self._file_text or not with_text)
            and all(self._file_derived.get(name) == self._derived_serial.get(name) for name in derived)
        ):
            return
        every = max(self._store.SNAPSHOT_SAVE_EVERY, (snap.graph.num_nodes + snap.graph.num_edges) // 100)
        if (
            not force
            and self._file_version is not None
            and self._file_version != snap.version
            and snap.version - self._file_version < every
        ):
            return
        with self._read() as conn:  # a damaged page here is named like any other read's
            last = self._change_at(conn, snap.version)
        seen = self._seen
        if last is None or (
            self._nonces and snap.version > 0 and (seen is None or seen[0] != snap.version or seen[1] != last[-1])
        ):
            # not the log the snapshot was read from (replaced since): a file labelled with this
            # log's nonce would be believed by every later open. The next read rebuilds.
            return
        if not self._write_file(path, snap, text[2] if with_text and text is not None else None, derived, last):
            self._persist = False
            return
        self._file_version = snap.version
        self._file_text = with_text
        self._file_derived = {name: self._derived_serial.get(name, -1) for name in derived}

    def _write_file(
        self,
        path: str,
        snap: GraphSnapshot,
        text: TextIndex | None,
        derived: Mapping[str, Mapping[str, Any]],
        last: list[Any],
    ) -> bool:
        """Write the snapshot file (atomically) of ``snap``, with its text index and derived
        arrays when given; ``last`` is the change-log row at its position. False: it could not
        be written (nothing is left behind)."""
        meta = {
            "kind": "conceptwalk.graph",
            "store_uuid": self._uuid,
            "schema_version": self._schema_version,
            "graph_version": snap.version,
            "last_change": last,
        }
        arrays = snap.to_arrays()
        if text is not None:
            arrays.update({"text." + k: v for k, v in text.to_arrays().items()})
        for name, parts in derived.items():
            arrays.update({f"derived.{name}.{k}": v for k, v in parts.items()})
        try:
            mode = os.stat(self._path).st_mode & 0o666  # the store's permission bits
        except OSError:
            mode = None
        try:
            write_arrays(path, arrays, meta, mode=mode)
        except OSError:
            return False
        _remove_stale_temporaries(path)
        return True
