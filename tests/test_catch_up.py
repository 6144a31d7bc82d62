"""The catch-up thread (issue 31): after a store's own commit, the live graph a read made is
brought to the committed position off the read path, so that a read a moment later finds it
grown; it never waits for the compaction thread, never builds a new base, never holds a store
alive, and its graph answers as a fresh build does.
"""

from __future__ import annotations

import gc
import os
import signal
import sqlite3
import threading
import time
import weakref
from typing import Any

import pytest

from conceptwalk import Caller
from conceptwalk.kb import state as state_module
from conceptwalk.kb.state import StateKeeper
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context, link_suggest

CATCH_UP = state_module._CATCH_UP
WHO = Caller.all_access()


def _store(path: str, n: int = 40) -> KnowledgeBase:
    kb = KnowledgeBase.open(path, create=True)
    kb.add_nodes([{"id": f"c{i:03d}", "type": "CONCEPT", "title": f"concept {i}"} for i in range(n)])
    kb.add_edges([(f"c{i:03d}", f"c{(i * 7 + 1) % n:03d}", "RELATED_TO") for i in range(n)])
    return kb


def _position(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()[0])
    finally:
        conn.close()


def _turn(kb: KnowledgeBase, t: int) -> None:
    with kb.transaction():
        kb.add_nodes([{"id": f"m{t}", "type": "MEMORY", "title": f"turn {t} concept"}])
        kb.add_edges([(f"m{t}", f"c{t % 40:03d}", "ABOUT"), (f"m{t}", f"c{(t * 3) % 40:03d}", "ABOUT")])


def _answers(kb: KnowledgeBase) -> list[str]:
    out = []
    for c in ("c001", "c017", "c033"):
        out.append(repr(graph_context(kb, concepts=[c], k=10, caller=WHO)))
        out.append(repr(link_suggest(kb, c, k=5, caller=WHO)))
    out.append(repr(graph_context(kb, "turn concept", k=10, caller=WHO)))
    return out


def _fresh(path: str, tmp: str) -> KnowledgeBase:
    """A fresh store of the same bytes (SQLite's backup; no snapshot file): a new process's build."""
    target = os.path.join(tmp, f"fresh-{len(os.listdir(tmp))}.db")
    src, dst = sqlite3.connect(path), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return KnowledgeBase.open(target)


def _threads_calling(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """The names of the threads that call ``StateKeeper.<method>``, in call order (a spy)."""
    names: list[str] = []
    orig = getattr(StateKeeper, method)

    def spy(self: StateKeeper, *a: Any, **kw: Any) -> Any:
        names.append(threading.current_thread().name)
        return orig(self, *a, **kw)

    monkeypatch.setattr(StateKeeper, method, spy)
    return names


def _assert_as_fresh(kb: KnowledgeBase, path: str, tmp_path: Any) -> None:
    """Every answer of ``kb`` equals a fresh store's of the same bytes."""
    d = tmp_path / "fresh"
    d.mkdir(exist_ok=True)
    fresh = _fresh(path, str(d))
    try:
        assert _answers(kb) == _answers(fresh)
    finally:
        fresh.close()


def test_a_commit_is_caught_up_off_the_read_path(tmp_path):
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        kb.live_graph()  # a read made a live graph
        for t in range(5):
            _turn(kb, t)
            assert CATCH_UP.wait_idle(10)
            kept = kb._keeper._live
            assert kept is not None and kept.version == _position(path)  # grown without a read
            assert kb.live_graph() is kept  # the read finds it: nothing left to do
        _assert_as_fresh(kb, path, tmp_path)
    finally:
        kb.close()


def test_a_read_at_once_does_it_itself_and_the_thread_then_does_nothing(tmp_path, monkeypatch):
    kb = _store(str(tmp_path / "kb.db"))
    calls = _threads_calling(monkeypatch, "_live_at_position")
    try:
        kb.live_graph()
        calls.clear()
        _turn(kb, 0)
        kb.live_graph()  # at once: this thread grows it
        assert CATCH_UP.wait_idle(10)
        assert calls == [threading.current_thread().name]  # the catch-up thread read nothing
    finally:
        kb.close()


def test_no_live_read_no_request(tmp_path):
    kb = _store(str(tmp_path / "kb.db"))
    try:
        kb.graph()  # a full snapshot read: not a live graph
        _turn(kb, 0)
        assert not CATCH_UP.queued(kb._keeper)
        assert kb._keeper._live is None
    finally:
        kb.close()


def test_it_never_builds_a_base(tmp_path):
    """A deletion is no delta: the thread leaves the graph as it is, the next read builds."""
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        before = kb.live_graph()
        kb.delete_nodes(["c005"])
        assert CATCH_UP.wait_idle(10)
        assert kb._keeper._live is before and before.version < _position(path)
        after = kb.live_graph()
        assert after is not before and after.slot("c005") is None and after.version == _position(path)
    finally:
        kb.close()


def test_it_never_waits_for_the_compaction_thread(tmp_path, monkeypatch):
    """With the delta full, a read waits for the compaction thread's base; the catch-up thread
    does not (a write would wait for the lock it holds)."""
    monkeypatch.setattr(StateKeeper, "LIVE_DELTA_NODES", 2)
    monkeypatch.setattr(StateKeeper, "LIVE_COMPACT_NODES", 0)
    waited = _threads_calling(monkeypatch, "_wait_compaction")
    kb = _store(str(tmp_path / "kb.db"))
    try:
        kb.live_graph()
        for t in range(4):
            _turn(kb, t)
            assert CATCH_UP.wait_idle(10)
        assert "conceptwalk-catch-up" not in waited
        assert kb.live_graph().version == _position(str(tmp_path / "kb.db"))
    finally:
        kb.close()


def test_a_store_closed_or_dropped_with_a_request_pending(tmp_path):
    kb = _store(str(tmp_path / "a.db"))
    kb.live_graph()
    _turn(kb, 0)
    kb.close()  # before the thread reached it
    assert CATCH_UP.wait_idle(10)
    dropped = _store(str(tmp_path / "b.db"))
    dropped.live_graph()
    _turn(dropped, 0)
    ref = weakref.ref(dropped)
    keeper = weakref.ref(dropped._keeper)
    dropped.close()
    del dropped
    gc.collect()
    assert ref() is None and keeper() is None  # the queue holds weak references only
    assert CATCH_UP.wait_idle(10)
    # the thread still serves the next store
    kb2 = _store(str(tmp_path / "c.db"))
    try:
        kb2.live_graph()
        _turn(kb2, 1)
        assert CATCH_UP.wait_idle(10)
        assert kb2._keeper._live.version == _position(str(tmp_path / "c.db"))
    finally:
        kb2.close()


def test_writes_from_another_thread_meanwhile_are_followed_exactly(tmp_path):
    """A writer thread commits while the reader pauses between reads (the catch-up thread and
    the reads interleave at random); after the writer stops, every answer equals a fresh build's."""
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    errors: list[BaseException] = []

    def writer():
        try:
            for t in range(60):
                _turn(kb, 100 + t)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        kb.live_graph()
        th = threading.Thread(target=writer)
        th.start()
        while th.is_alive():
            kb.live_graph()
            CATCH_UP.wait_idle(0.003)
        th.join()
        assert not errors
        assert CATCH_UP.wait_idle(10)
        assert kb._keeper._live.version == _position(path)
        _assert_as_fresh(kb, path, tmp_path)
    finally:
        kb.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_a_thread_of_its_own(tmp_path):
    kb = _store(str(tmp_path / "parent.db"))
    kb.live_graph()
    _turn(kb, 0)
    assert CATCH_UP.wait_idle(10)  # the parent's thread runs
    kb.close()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            child = _store(str(tmp_path / "child.db"))
            child.live_graph()
            _turn(child, 0)
            ok = CATCH_UP.wait_idle(10) and child._keeper._live.version == _position(str(tmp_path / "child.db"))
            child.close()
            code = 0 if ok else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_switched_off(tmp_path, monkeypatch):
    monkeypatch.setattr(StateKeeper, "CATCH_UP", False)
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        before = kb.live_graph()
        _turn(kb, 0)
        assert CATCH_UP.wait_idle(10)
        assert kb._keeper._live is before  # only a read brings it forward
        assert kb.live_graph().version == _position(path)
    finally:
        kb.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_during_a_catch_up_waits_for_it(tmp_path, monkeypatch):
    """The thread holds the store's lock while it grows the graph: a fork meanwhile waits until
    it is done, so the child finds neither that lock nor the thread's own held (the child, with
    no thread, would wait for them for ever)."""
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    started = threading.Event()
    orig = StateKeeper._live_at_position

    def slow(self, cheap):
        if cheap:
            started.set()
            time.sleep(0.3)  # the fork comes while this holds the store's lock
        return orig(self, cheap)

    monkeypatch.setattr(StateKeeper, "_live_at_position", slow)
    kb.live_graph()
    _turn(kb, 0)
    assert started.wait(10)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            signal.alarm(5)  # a hung child dies of SIGALRM (exit status: signalled)
            kb.version  # the inherited store's lock
            child = _store(str(tmp_path / "child.db"))  # the child's own store, and its first request
            child.live_graph()
            _turn(child, 0)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    try:
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    finally:
        kb.close()


def test_a_writer_that_stopped_reading_pays_nothing(tmp_path, monkeypatch):
    """Only a graph a read used since the last catch-up is grown: a write-only stream after one
    read grows it once and starts no compaction (before, every batch grew it and every 500 nodes
    made a base nobody read)."""
    monkeypatch.setattr(StateKeeper, "LIVE_COMPACT_NODES", 4)
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        kb.live_graph()
        _turn(kb, 0)
        assert CATCH_UP.wait_idle(10)
        first = kb._keeper._live
        assert first.version == _position(path)  # the read's graph, grown once
        for t in range(1, 12):
            _turn(kb, t)
            assert CATCH_UP.wait_idle(10)
        assert kb._keeper._live is first and kb._keeper.compactions == (0, 0)
        got = kb.live_graph()  # the read brings it forward (and may start the compaction thread)
        assert got.version == _position(path)
        _assert_as_fresh(kb, path, tmp_path)
    finally:
        kb.close()


def test_past_the_compaction_mark_the_compaction_thread_makes_a_base(tmp_path, monkeypatch):
    """The catch-up thread grows the graph past the compaction mark (one batch per read); the
    compaction thread is started (by that grow, or by a read that finds the graph current past
    the mark), so the delta does not grow to its limit, where a read would build the base itself."""
    monkeypatch.setattr(StateKeeper, "LIVE_COMPACT_NODES", 3)
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        base = kb.live_graph().base_version
        for t in range(3):
            _turn(kb, t)
            assert CATCH_UP.wait_idle(10)
            assert kb._keeper._live.version == _position(path)  # grown by the thread
            kb.live_graph()  # finds it current
        kb._keeper._wait_compaction()
        assert kb._keeper.compactions[0] == 1
        _turn(kb, 3)
        assert kb.live_graph().base_version > base  # the compacted base taken
        _assert_as_fresh(kb, path, tmp_path)
    finally:
        kb.close()


def test_after_a_change_no_delta_holds_the_thread_tries_once(tmp_path, monkeypatch):
    """A deletion cannot be grown: the thread tries once after the read that used the graph, and
    the commits after it (no read between) do not make it read the growing change log again."""
    calls = _threads_calling(monkeypatch, "_grow_live")
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    try:
        kb.live_graph()
        kb.delete_nodes(["c005"])
        assert CATCH_UP.wait_idle(10)
        for t in range(8):
            _turn(kb, t)
            assert CATCH_UP.wait_idle(10)
        assert calls.count("conceptwalk-catch-up") == 1, calls
        assert kb.live_graph().version == _position(path)  # the read makes the new base
        _assert_as_fresh(kb, path, tmp_path)
    finally:
        kb.close()
