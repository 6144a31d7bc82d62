"""Compaction off the read path (issue 31, item 2): once a live graph's delta holds
``StateKeeper.LIVE_COMPACT_NODES`` written nodes, a background thread makes the new base (the
snapshot and text index at the position it reads, and the snapshot file when due) while reads go
on over the old base plus the delta; the first read after it is ready starts from it.

What is checked: the read that takes the new base builds nothing itself; the answers before,
during and after equal a fresh process's; a base made for another history (a backup restored
while the thread ran) is dropped; a failing thread leaves the reads as they were; at the hard
limit the read waits for the thread instead of building a second base; the file it writes is
loaded by a new process; ``close()`` waits for it. Also: an unknown or hidden id is refused from
the live graph with the snapshot path's error, without making the full state.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

import pytest

from conceptwalk import Caller
from conceptwalk.kb.state import StateKeeper
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context, graph_path, link_suggest
from test_hostile_live_graph import _backup  # (one copy through SQLite's backup API)

CALLERS = [Caller.public(), Caller.with_scopes("a"), Caller.all_access()]


def _answers(kb: KnowledgeBase) -> str:
    out: dict[str, Any] = {}
    for ci, who in enumerate(CALLERS):
        for x in ("c1", "c4", "c6"):  # visible to every caller (an error takes the snapshot path)
            out[f"{ci}:ctx:{x}"] = _call(lambda x=x: graph_context(kb, concepts=[x], k=6, caller=who).to_dict())
            out[f"{ci}:sug:{x}"] = _call(lambda x=x: link_suggest(kb, x, k=5, caller=who, min_shared=1).to_dict())
            out[f"{ci}:path:{x}"] = _call(lambda x=x: graph_path(kb, x, "c7", caller=who).to_dict())
        out[f"{ci}:search"] = _call(lambda: kb.search("river stone", 6, caller=who))
        out[f"{ci}:question"] = _call(lambda: graph_context(kb, "river stone memory", k=6, caller=who).to_dict())
    return json.dumps(out, sort_keys=True, default=repr)


def _call(fn: Any) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - an error's type and text stand for the answer
        return f"{type(e).__name__}: {e}"


def _fresh(path: str) -> str:
    target = path + ".fresh.db"
    for suffix in ("", ".snapshot", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
    _backup(path, target)
    kb = KnowledgeBase.open(target)
    try:
        return _answers(kb)
    finally:
        kb.close()


def _store(path: str) -> KnowledgeBase:
    kb = KnowledgeBase.create(path)
    kb.add_nodes(
        [{"id": f"c{i}", "type": "CONCEPT", "title": f"river {i} stone" if i % 2 else f"memory {i}"} for i in range(10)]
        + [{"id": "s1", "type": "CONCEPT", "title": "river scoped", "scopes": ["a"]}]
    )
    kb.add_edges([(f"c{i}", f"c{(i * 3 + 1) % 10}") for i in range(10)] + [("s1", "c1"), ("c2", "c5")])
    kb.search("river", 3, caller=Caller.all_access())  # the state has a text index: the thread advances it
    return kb


def _turn(kb: KnowledgeBase, t: int) -> None:
    with kb.transaction():
        kb.add_nodes([{"id": f"m{t}", "type": "MEMORY", "title": f"turn {t} river", "scopes": ["a"] if t % 3 else []}])
        kb.add_edges([(f"m{t}", f"c{t % 10}", "ABOUT"), (f"m{t}", f"c{(7 * t + 2) % 10}", "ABOUT")])


def hold_thread(monkeypatch: pytest.MonkeyPatch, keeper: Any, *, after: bool = False) -> threading.Event:
    """Hold the compaction thread at a gate, before it advances the snapshot (or ``after``);
    returns the gate: set it to let the thread go on (it gives up waiting after 10 s)."""
    gate = threading.Event()
    orig = keeper._advance_or_build

    def held(conn: Any, snap: Any, version: int, *, distrust: bool = True) -> Any:
        mine = threading.current_thread().name == "conceptwalk-compaction"
        if mine and not after:
            gate.wait(10)
        out = orig(conn, snap, version, distrust=distrust)
        if mine and after:
            gate.wait(10)
        return out

    monkeypatch.setattr(keeper, "_advance_or_build", held)
    return gate


def turns_then_compacted(kb: KnowledgeBase, turns: int) -> Any:
    """``turns`` turns, each read once (the read past the mark starts the thread), then the
    thread's base once it is done (None: it made none, or a read took it)."""
    for t in range(turns):
        _turn(kb, t)
        kb.live_graph()
    kb._keeper._wait_compaction()
    return kb._keeper._compacted


def test_the_read_takes_the_new_base_without_building_it(tmp_path, compact_at_4, monkeypatch) -> None:
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    gate = hold_thread(monkeypatch, keeper)
    try:
        base0 = kb.live_graph().base_version
        for t in range(4):
            _turn(kb, t)
            kb.live_graph()
        assert keeper._compacting is not None  # held at the gate
        _turn(kb, 4)
        assert _answers(kb) == _fresh(path)  # while the thread runs
        gate.set()
        keeper._wait_compaction()
        monkeypatch.undo()
        made = keeper._compacted
        assert made is not None and made.version > base0 and made.text is not None
        _turn(kb, 5)
        # the read that takes it builds no snapshot, advances no text index and saves no file
        built: list[str] = []
        for name in ("_snapshot_at", "_advance_or_build", "_advance_text_index", "save_snapshot"):
            orig = getattr(keeper, name)
            monkeypatch.setattr(keeper, name, lambda *a, _n=name, _o=orig, **k: (built.append(_n), _o(*a, **k))[1])
        live = kb.live_graph()
        assert built == []
        assert live.base_version == made.version and live.base is made.snap.graph
        assert keeper.live_base_state(live) is not None  # search and questions read it live too
        monkeypatch.undo()
        assert _answers(kb) == _fresh(path)
    finally:
        gate.set()
        kb.close()


def test_the_file_it_writes_is_what_a_new_process_loads(tmp_path, compact_at_4, monkeypatch) -> None:
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    monkeypatch.setattr(KnowledgeBase, "SNAPSHOT_SAVE_EVERY", 1)
    try:
        made = turns_then_compacted(kb, 5)
        assert made is not None and made.saved
        _turn(kb, 5)
        kb.live_graph()  # taken by the read after the next write
        assert kb._keeper.file_version == made.version
        other = KnowledgeBase.open_read_only(path)
        try:
            assert other._keeper._load_snapshot(other.conn, made.version) is not None
        finally:
            other.close()
    finally:
        kb.close()


def test_a_base_of_another_history_is_dropped(tmp_path, compact_at_4, monkeypatch) -> None:
    """A backup of another history (the same positions, other rows) restored after the thread read
    the store: what it made is of the old log and never taken."""
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    gate = hold_thread(monkeypatch, keeper, after=True)
    bak = path + ".bak"
    _backup(path, bak)
    w = KnowledgeBase.open(bak)  # another history from the same start: other rows at the same positions
    for t in range(5):
        with w.transaction():
            w.add_nodes([{"id": f"z{t}", "type": "MEMORY", "title": f"other {t} stone"}])
            w.add_edges([(f"z{t}", "c3", "ABOUT"), (f"z{t}", "c8", "ABOUT")])
    w.close()
    try:
        for t in range(5):
            _turn(kb, t)
            kb.live_graph()
        assert keeper._compacting is not None  # read the store, held at the gate
        _backup(bak, path)  # restored after the thread read the old history
        gate.set()
        keeper._wait_compaction()
        made = keeper._compacted
        assert made is not None
        got = _answers(kb)
        assert kb.live_graph().base is not made.snap.graph
        assert got == _fresh(path)
    finally:
        gate.set()
        kb.close()


def test_a_failing_thread_leaves_the_reads_as_they_were(tmp_path, compact_at_4, monkeypatch) -> None:
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    calls = []

    def broken(conn: Any, snap: Any, version: int, *, distrust: bool = True) -> Any:
        calls.append(threading.current_thread().name)
        raise OSError("disk gone")

    try:
        for t in range(3):
            _turn(kb, t)
            kb.live_graph()
        monkeypatch.setattr(keeper, "_advance_or_build", broken)
        _turn(kb, 3)
        kb.live_graph()
        keeper._wait_compaction()
        assert calls == ["conceptwalk-compaction"] and keeper._compacted is None
        monkeypatch.undo()
        assert _answers(kb) == _fresh(path)
        before = kb.live_graph().base_version
        for t in range(4, 9):  # a later delta past the mark starts the thread again
            _turn(kb, t)
            kb.live_graph()
        keeper._wait_compaction()
        _turn(kb, 9)
        assert kb.live_graph().base_version > before  # its base taken (the reads build none: 1000 is the limit)
        assert _answers(kb) == _fresh(path)
    finally:
        kb.close()


def test_at_the_hard_limit_the_read_waits_for_the_thread(tmp_path, compact_at_4, monkeypatch) -> None:
    """The writer outpaces the thread: the read that finds the delta full takes the thread's base
    (and grows from it) instead of building one more."""
    monkeypatch.setattr(StateKeeper, "LIVE_DELTA_NODES", 8)
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    gate = hold_thread(monkeypatch, keeper)
    graphs: list[str] = []
    orig_graph = keeper.graph
    monkeypatch.setattr(keeper, "graph", lambda **k: (graphs.append("graph"), orig_graph(**k))[1])
    try:
        for t in range(8):
            _turn(kb, t)
            kb.live_graph()
        held = keeper._compacting
        assert held is not None  # still held at the gate
        assert kb.live_graph().rewritten == 8  # the delta is full
        _turn(kb, 8)
        threading.Timer(0.2, gate.set).start()
        live = kb.live_graph()
        # (the writes grown over its base may start the next thread at once)
        assert graphs == [] and not held.is_alive() and keeper.compactions[1] == 1
        assert live.base_version > 0 and live.rewritten < 8
        assert _answers(kb) == _fresh(path)
    finally:
        gate.set()
        kb.close()


def test_close_waits_for_the_thread(tmp_path, compact_at_4, monkeypatch) -> None:
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    gate = hold_thread(monkeypatch, keeper)
    for t in range(5):
        _turn(kb, t)
        kb.live_graph()
    t = keeper._compacting
    assert t is not None and t.is_alive()
    threading.Timer(0.2, gate.set).start()
    kb.close()
    assert not t.is_alive() and keeper._compacting is None and keeper._compacted is None


def test_no_thread_for_a_store_in_memory(compact_at_4) -> None:
    kb = KnowledgeBase.open(":memory:")
    kb.add_edges([("c1", "c2")])
    for t in range(6):
        _turn(kb, t)
        kb.live_graph()
    assert kb._keeper._compacting is None and kb._keeper._compacted is None
    kb.close()


def test_an_unknown_or_hidden_id_is_refused_from_the_live_graph(tmp_path, monkeypatch) -> None:
    """The same NotFoundError as the snapshot path (a bare graph's: its argument names, in its
    order), without making the full state to raise it."""
    from conceptwalk.errors import NotFoundError

    calls = [
        lambda src, who: graph_context(src, concepts=["c1", "nope"], caller=who),
        lambda src, who: graph_context(src, concepts=("m1", "nope"), caller=who),
        lambda src, who: link_suggest(src, "m1", caller=who),
        lambda src, who: graph_path(src, "m1", "nope", caller=who),
        lambda src, who: graph_path(src, "c1", "nope", caller=who),
        lambda src, who: graph_path(src, "c1", 7, caller=who),
    ]
    path = str(tmp_path / "kb.db")
    kb = _store(path)
    keeper = kb._keeper
    try:
        _turn(kb, 1)  # m1 is scoped "a": hidden from the public caller
        kb.live_graph()
        built: list[str] = []
        orig = keeper._snapshot_at
        monkeypatch.setattr(keeper, "_snapshot_at", lambda *a, **k: (built.append("snap"), orig(*a, **k))[1])
        got = []
        for fn in calls:
            with pytest.raises(NotFoundError) as err:
                fn(kb, Caller.public())
            got.append(str(err.value))
        assert built == []
        monkeypatch.undo()
        g = kb.graph()  # a bare graph: the snapshot path
        for fn, text in zip(calls, got):
            with pytest.raises(NotFoundError) as err:
                fn(g, Caller.public())
            assert str(err.value) == text
        assert got[:3] == ["concept not found: 'nope'", "concept not found: 'm1'", "concept not found: 'm1'"]
    finally:
        kb.close()
