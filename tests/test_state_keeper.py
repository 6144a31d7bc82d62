"""The state keeper (kb/state.py: StateKeeper) through its own interface, and the one thing the
split of KnowledgeBase must not change: one lock for the store and its read side.

- A keeper built over a store through nothing but its explicit interface (the store's public
  ``conn``, ``read_only`` and ``SNAPSHOT_SAVE_EVERY``; a read transaction; a write flag) follows
  random writes, each state equal array for array to a fresh build of a copy of the store (the
  graph and its text index), saves the snapshot file, and a second keeper maps that file and
  answers the same.
- Inside a write transaction (the flag) nothing is kept or returned from a cache.
- The store and its keeper share one lock: a read in another thread waits for the store's own
  write transaction, and never sees its uncommitted rows.
- The keeper holds its store weakly: a store dropped without ``close()`` is freed at once by its
  reference count, with the graphs, text indexes and mapped snapshot file its keeper holds (no
  reference cycle waiting for the garbage collector), as before the split.
"""

from __future__ import annotations

import gc
import os
import random
import sqlite3
import threading
import time
import weakref
from contextlib import contextmanager

import numpy as np
import pytest

from conceptwalk.errors import ConceptwalkError
from conceptwalk.kb import SCHEMA_VERSION, KnowledgeBase
from conceptwalk.kb.state import StateKeeper, StoreState


def _keeper(kb: KnowledgeBase, path: str, *, writing=lambda: False) -> StateKeeper:
    lock = threading.RLock()

    @contextmanager
    def read():
        with lock:
            conn = kb.conn
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    uuid = kb.conn.execute("SELECT value FROM meta WHERE key = 'uuid'").fetchone()[0]
    return StateKeeper(
        kb, path=path, lock=lock, read=read, writing=writing, changelog=True, uuid=uuid, schema_version=SCHEMA_VERSION
    )


def _fresh(kb: KnowledgeBase) -> StoreState:
    """The state of a copy of the store read by a new object: a build from every row."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    kb.backup(conn)
    return KnowledgeBase(conn, ":memory:").state()


def _same_arrays(a: dict, b: dict) -> None:
    assert sorted(a) == sorted(b)
    for k in a:
        nan = a[k].dtype.kind == "f"  # no confidence: NaN, in both
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k], equal_nan=nan), k


def _same_state(got: StoreState, want: StoreState) -> None:
    assert (got.version, got.graph_version) == (want.version, want.graph_version)
    _same_arrays(got.graph.to_arrays(), want.graph.to_arrays())
    _same_arrays(got.text_index.to_arrays(), want.text_index.to_arrays())


def _write(kb: KnowledgeBase, rng: random.Random, n: int) -> None:
    ids = [f"n{i:03d}" for i in range(n)]
    what = rng.random()
    if what < 0.35:
        kb.add_nodes(
            [
                {"id": rng.choice(ids), "title": rng.choice(["graph walk", "push", "index", None]), "body": "b"}
                for _ in range(rng.randint(1, 3))
            ]
        )
    elif what < 0.7:
        kb.add_edges([(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(1, 4))])
    elif what < 0.8:
        kb.delete_nodes([rng.choice(ids)])
    elif what < 0.9:
        kb.add_nodes([{"id": rng.choice(ids), "body": rng.choice(["alpha", "beta gamma", None])}])
    else:
        with kb.transaction():  # several changes between two reads
            kb.add_edges([(rng.choice(ids), rng.choice(ids))])
            kb.add_nodes([{"id": rng.choice(ids), "scopes": rng.choice([["t"], None])}])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_keeper_built_from_its_interface_follows_writes_and_its_file(tmp_path, seed):
    rng = random.Random(seed)
    p = str(tmp_path / "kb.db")
    kb = KnowledgeBase.create(p)
    kb.SNAPSHOT_SAVE_EVERY = 7  # the keeper reads the store's setting: saves on the way too
    kb.add_edges([("n000", "n001")])
    keeper = _keeper(kb, p)
    last = keeper.state()
    for _ in range(40):
        _write(kb, rng, 30)
        st = keeper.state()
        assert keeper.state() is st  # unchanged store: the same state
        assert keeper.graph() is st.graph and keeper.text_index(st.graph) is st.text_index
        assert keeper.text_index(last.graph) is None or last.graph is st.graph  # an older graph: not answered
        _same_state(st, _fresh(kb))
        last = st
    keeper.save_snapshot(force=True)
    assert keeper.file_version == st.graph_version and os.path.isfile(keeper.snapshot_path)
    again = _keeper(kb, p)  # as a fresh process: maps the file
    mapped = again.state()
    assert again.file_version == st.graph_version
    _same_state(mapped, st)
    _write(kb, rng, 30)  # and advances from it
    _same_state(again.state(), _fresh(kb))
    kb.close()


def test_inside_a_write_transaction_nothing_is_kept(tmp_path):
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes([{"id": "a", "title": "walks"}])
    flag = {"on": False}
    keeper = _keeper(kb, ":memory:", writing=lambda: flag["on"])
    st = keeper.state()
    keeper.keep_derived_arrays("t.x", st.graph_version, {"v": np.arange(3)})
    assert keeper.derived_arrays("t.x", st.graph_version)["v"].tolist() == [0, 1, 2]
    flag["on"] = True
    a, b = keeper.state(), keeper.state()
    assert a is not b and a is not st  # built from the rows each time, never cached
    assert keeper.derived_arrays("t.x", st.graph_version) is None  # not answered inside
    keeper.keep_derived_arrays("t.y", st.graph_version, {"v": np.arange(2)})
    flag["on"] = False
    assert keeper.state() is st  # the cache is the committed state's
    assert keeper.derived_arrays("t.y", st.graph_version) is None  # nothing was kept inside
    assert keeper.derived_names == ["t.x"]


def test_a_read_waits_for_the_stores_write_transaction_and_never_sees_it(tmp_path):
    kb = KnowledgeBase.create(str(tmp_path / "kb.db"))
    kb.add_edges([("a", "b")])
    g0, st0 = kb.graph(), kb.state()
    written, started, done = threading.Event(), threading.Event(), threading.Event()
    got: dict[str, object] = {}

    def writer():
        try:
            with kb.transaction():
                kb.add_edges([("b", "c")])
                written.set()
                started.wait(10)
                time.sleep(0.2)  # a reader with a lock of its own would read the uncommitted edge now
                raise KeyError("roll back")
        except KeyError:
            pass

    def reader():
        written.wait(10)
        started.set()
        got["graph"], got["state"] = kb.graph(), kb.state()
        done.set()

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert done.is_set()
    assert got["graph"] is g0 and got["state"] is st0  # the rolled-back edge was never read
    kb.close()


def test_a_store_dropped_unclosed_is_freed_at_once(tmp_path):
    p = str(tmp_path / "kb.db")
    kb = KnowledgeBase.create(p)
    kb.add_nodes([{"id": "a", "title": "walks"}, {"id": "b", "title": "push"}])
    kb.add_edges([("a", "b")])
    st = kb.state()
    kb.graph(annotations=False)
    kb.text_index(st.graph)
    kb.search("walks")
    kb.keep_derived_arrays("t.x", st.graph_version, {"v": np.arange(3)})
    light = weakref.ref(kb.graph(annotations=False))
    gc.collect()
    gc.disable()
    try:
        ref = weakref.ref(kb)
        del kb
        assert ref() is None  # no reference cycle: freed by its reference count
        assert light() is None  # and what its keeper held with it
    finally:
        gc.enable()
    assert st.graph.ids == ["a", "b"]  # a state read stays usable


def test_reads_after_close_say_it_is_closed():
    kb = KnowledgeBase.open(":memory:")
    kb.add_edges([("a", "b")])
    g = kb.graph()
    kb.close()
    for read in (kb.state, kb.graph, kb.text_index):
        with pytest.raises(ConceptwalkError, match="closed"):
            read()
    assert g.num_nodes == 2


def test_a_read_of_an_unchanged_store_is_one_statement_and_no_read_transaction(tmp_path):
    """state(), kept_state() and graph() of an unchanged store read the position in one statement,
    outside a read transaction (one statement sees one committed state); a write by another
    connection is still seen by the next call, through the full path."""
    p = str(tmp_path / "kb.db")
    with KnowledgeBase.create(p) as kb:
        kb.add_edges([("a", "b")])
        st, g = kb.state(), kb.graph()
        for read, want in ((kb.state, st), (kb.kept_state, st), (kb.graph, g)):
            seen: list[str] = []
            kb.conn.set_trace_callback(seen.append)
            try:
                got = read()
            finally:
                kb.conn.set_trace_callback(None)
            assert got is want
            ours = [x for x in seen if not x.startswith("--")]  # ("-- ..." : SQLite's own, inside ours)
            assert len(ours) == 1 and "sqlite_sequence" in ours[0], (read.__name__, seen)
        c = sqlite3.connect(p)
        c.execute("UPDATE nodes SET title = 'B' WHERE id = 'b'")
        c.commit()
        c.close()
        assert kb.kept_state() is None
        st2 = kb.state()
        assert st2 is not st and st2.graph.titles[st2.graph.id_index["b"]] == "B"
        assert kb.kept_state() is st2


@pytest.mark.parametrize(
    "edit, message",
    [
        ("DELETE FROM meta WHERE key = 'version'", "meta row 'version' is missing"),
        ("UPDATE meta SET value = 'x' WHERE key = 'version'", "meta row 'version' holds 'x', not a count"),
        ("UPDATE meta SET value = NULL WHERE key = 'version'", "meta row 'version' holds None, not a count"),
        ("UPDATE meta SET value = 2.5 WHERE key = 'version'", "meta row 'version' holds 2.5, not a count"),
    ],
)
def test_the_version_check_of_a_read_names_a_damaged_counter(tmp_path, edit, message):
    """A read of an unchanged store checks both counters in one statement; a counter that is not
    a count is read again the long way, which names it (as before the check was one statement)."""
    p = str(tmp_path / "kb.db")
    with KnowledgeBase.create(p) as kb:
        kb.add_edges([("a", "b")])
        st = kb.state()
        assert kb.state() is st
        c = sqlite3.connect(p)
        c.execute(edit)
        c.commit()
        c.close()
        with pytest.raises(ConceptwalkError, match=message.replace("(", r"\(")):
            kb.state()
