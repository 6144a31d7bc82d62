"""Hostile review of "an open store object follows its change log by nonce" (084d7bf) and "a
wrapped query over the built-in flat search reads one state" (f6575f7).

The contract: every answer a store object gives equals what a fresh build over the same committed
rows gives (the *fresh* oracle: the store copied through SQLite's backup API to a new file and
opened fresh), whatever happens under it -- here, backups restored under open readers.

Found, and fixed with the tests below:

- changed_nodes: its floor was the position found plus one, so after a restore short of the
  reader's position it answered the old log's positions from the new log; and it did not check
  the history itself, so before another read had seen a restore it did the same.
- keep_derived_arrays / derived_arrays had no history: a read cache of the state before a
  restore kept its title vectors for the new log's position (served, and saved in the snapshot
  file), or read the new log's for its own graph.
- Position 0 of an upgraded schema-1 store holds rows but has no nonce: a restore there was not
  seen (the uuid tells them apart now). Whether the store has nonces was asked once: a schema-2
  backup restored under a schema-4 reader raised; a schema-2 reader upgraded under it followed by
  position alone for ever (the schema cookie is read with the position now).
- _follow_history recorded the position before checking it: an interrupted check was not made
  again.
- f6575f7 called BuiltinFlatSearch.search_state for any subclass, skipping its own __call__.

- Alias writes were not in the change log, so a restore at the reader's very position, written
  back to the same write and alias counts with another alias, was not seen (the wrap's alias
  index): an alias write logs a change-log row (kind 5) now, with its nonce.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import (
    ConceptAnchoredRetriever,
    ConceptResolver,
    WalkConfig,
    _reader,
    builtin_flat_search,
)
from test_hostile_follow_writes import _copy, _fill, _fresh, _semantic

ALL = Caller.all_access()


def _titles(kb: KnowledgeBase) -> dict[str, str | None]:
    g = kb.graph()
    return dict(zip(g.ids, g.titles))


def _resolved(kb: KnowledgeBase, q: str, cfg: WalkConfig | None = None) -> list:
    r = ConceptResolver(kb, cfg if cfg is not None else WalkConfig())
    return [(c.id, c.method, round(c.confidence, 6)) for c in r.resolve(q, caller=ALL)]


def _rows_differ(a, b) -> list[str]:
    """The ids whose node row (presence or title) differs between two graphs."""
    ia, ib = a.id_index, b.id_index
    out = []
    for x in sorted(set(a.ids) | set(b.ids)):
        if (x in ia) != (x in ib) or (x in ia and a.titles[ia[x]] != b.titles[ib[x]]):
            out.append(x)
    return out


# --------------------------------------------------------------------------- aliases


def test_an_alias_written_after_a_restore_at_the_same_position_is_read(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)  # the backup holds the position the reader will read
    r = KnowledgeBase.open_read_only(path)
    w.add_aliases([("zz", "c02")])
    assert _reader.StoreReader(r).read_cache().aliases().get("zz") == ["c02"]
    before = r.state()
    _copy(backup, path)
    w.add_aliases([("yy", "c04")])  # the same position, write count and alias count (another nonce)
    assert sorted(r.aliases()) == ["gw", "yy"]  # the store's own SQL read is right
    fresh = _fresh(w, tmp_path, "a")
    got = _reader.StoreReader(r).read_cache().aliases()
    assert (got.get("zz"), got.get("yy")) == (None, ["c04"]), (before, r.state())
    for q in ("zz", "yy"):
        assert _resolved(r, q) == _resolved(fresh, q)
    w.close()
    r.close()
    fresh.close()


def test_aliases_written_past_a_restore_follow_the_new_history(tmp_path):
    # the same, but the restored log is written past the position: the nonce check sees it
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w.add_aliases([("zz", "c02")])
    w.add_nodes([{"id": "c05", "title": "five"}])
    assert _resolved(r, "zz")[0][:2] == ("c02", "alias")
    _copy(backup, path)
    w.add_aliases([("yy", "c04")])
    w.add_nodes([{"id": "c06", "title": "six"}])
    fresh = _fresh(w, tmp_path, "b")
    assert r.state().history == 1
    for q in ("zz", "yy", "five", "six"):
        assert _resolved(r, q) == _resolved(fresh, q)
    w.close()
    r.close()
    fresh.close()


# --------------------------------------------------------------------------- changed_nodes


def test_changed_nodes_from_a_position_of_the_replaced_log_restored_short_of_it(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    for i in range(4):
        w.add_nodes([{"id": f"c{i:02d}", "title": f"renamed {i}"}])
    old = r.state()
    _copy(backup, path)  # short of the position r read
    assert r.state().history == 1
    for i in range(8):  # and written past it
        w.add_nodes([{"id": f"x{i}", "title": "x"}])
    new = r.state()
    got = r.changed_nodes(old.graph_version, new.graph_version)
    assert got is None or set(_rows_differ(old.graph, new.graph)) <= set(got), got


def test_changed_nodes_checks_the_history_itself(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    old = r.state()
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])
    w.add_nodes([{"id": "x0", "title": "x"}])
    until = w.state().graph_version  # another object's position: r has not read since
    got = r.changed_nodes(old.graph_version, until)
    new = r.state()
    assert new.graph_version == until
    assert got is None or set(_rows_differ(old.graph, new.graph)) <= set(got), got


def test_changed_nodes_after_a_restore_answers_within_the_new_log(tmp_path):
    # what the commit pins, from the other side: past the floor the new log answers, and it
    # agrees with a fresh object's answer and with the two states' rows
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    r.state()
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])
    s1 = r.state()
    assert s1.history == 1
    w.add_nodes([{"id": "c04", "title": "four"}])
    s_floor = r.state()
    assert s_floor.graph_version == s1.graph_version + 1  # the first position changed_nodes may start from
    w.add_nodes([{"id": "c05", "title": "five"}, {"id": "y0"}])
    s2 = r.state()
    got = r.changed_nodes(s_floor.graph_version, s2.graph_version)
    fresh = _fresh(w, tmp_path, "c")
    assert got == fresh.changed_nodes(s_floor.graph_version, s2.graph_version) == ["c05", "y0"]
    assert _rows_differ(s_floor.graph, s2.graph) == got
    assert r.changed_nodes(s1.graph_version, s2.graph_version) is None  # (at the position found: not answered)
    w.close()
    r.close()
    fresh.close()


# --------------------------------------------------------------------------- derived arrays


def test_vectors_of_a_state_read_before_a_restore_are_not_kept_for_the_new_log(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    a = KnowledgeBase.open(path)  # a writable object reading (read-only ones keep nothing)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    cache = _reader.StoreReader(a).read_cache()  # a query in flight: its state read, nothing built
    _copy(backup, path)
    w2 = KnowledgeBase.open(path)
    w2.add_nodes([{"id": "c03", "title": "other rename"}])  # the same position, another row
    st = a.state()
    assert st.history == 1 and st.graph_version == cache.graph_version
    cfg = WalkConfig()
    cache.concept_columns(_emb(cfg), cfg)  # the query in flight finishes
    fresh = _fresh(w2, tmp_path, "d")
    for q in ("omega renamed", "other rename"):
        assert _resolved(a, q) == _resolved(fresh, q)
    a.close()
    w.close()
    w2.close()
    later = KnowledgeBase.open_read_only(path)  # what the snapshot file makes every later open answer
    for q in ("omega renamed", "other rename"):
        assert _resolved(later, q) == _resolved(fresh, q)
    later.close()
    fresh.close()


def test_a_query_in_flight_across_a_restore_reads_its_own_states_vectors(tmp_path):
    path, backup, then = tmp_path / "kb.db", tmp_path / "backup.db", tmp_path / "then.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    a = KnowledgeBase.open(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    cache = _reader.StoreReader(a).read_cache()  # the query's state read, nothing built yet
    _copy(path, then)  # (what that state is, for the oracle)
    _copy(backup, path)
    w2 = KnowledgeBase.open(path)
    w2.add_nodes([{"id": "c03", "title": "other rename"}])  # the same position, another row
    assert _resolved(a, "other rename")[0][:2] == ("c03", "semantic")  # the new log's vectors kept
    res = ConceptResolver(a, WalkConfig())
    got = [(c.id, c.method, round(c.confidence, 6)) for c in res.resolve("omega renamed", caller=ALL, read_cache=cache)]
    with KnowledgeBase.open(then) as oracle:
        assert got == _resolved(oracle, "omega renamed")
    for kb in (a, w, w2):
        kb.close()


def test_derived_arrays_do_not_cross_a_restore(tmp_path):
    # the store's own API: arrays kept at a position of the old log are not offered for the new one
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    a = KnowledgeBase.open(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    gv = a.state().graph_version
    a.keep_derived_arrays("t.n", gv, {"n": [1]})
    assert a.derived_arrays("t.n", gv)["n"].tolist() == [1]
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])
    st = a.state()
    assert st.history == 1 and st.graph_version == gv
    assert a.derived_arrays("t.n", gv) is None
    assert a.derived_arrays_before("t.n", gv) is None
    a.keep_derived_arrays("t.n", gv, {"n": [2]})  # kept again for the new log's position
    g, v, parts = a.derived_arrays_before("t.n", gv + 5)
    assert g is st.graph and v == gv and parts["n"].tolist() == [2]
    assert a.derived_arrays("t.n", gv)["n"].tolist() == [2]
    a.close()
    w.close()
    again = KnowledgeBase.open(path)  # the file holds the new log's arrays, or none
    got = again.derived_arrays("t.n", again.state().graph_version)
    assert got is None or got["n"].tolist() == [2]
    again.close()


def _emb(cfg: WalkConfig):
    from conceptwalk.wrap.embed import get_embedder

    return get_embedder(cfg.embedder)


# --------------------------------------------------------------------------- older schemas


def _schema_1(path, ids, version: int) -> None:
    from test_snapshot import _V1_TABLES

    c = sqlite3.connect(path)
    c.executescript(
        _V1_TABLES
        + f"INSERT INTO meta VALUES ('schema_version', 1), ('version', {version});"
        + "".join(f"INSERT INTO nodes(id, title) VALUES ('{i}', 'title {i}');" for i in ids)
        + "PRAGMA user_version = 1;"
    )
    c.close()


def _to_schema_2(path) -> None:
    """A schema-4 store made what schema 2 is: no tallies, no vector log, no nonces."""
    c = sqlite3.connect(path)
    for kind, name in c.execute(
        "SELECT type, name FROM sqlite_master WHERE (type = 'trigger' AND (name LIKE 'tallies_%' "
        "OR name LIKE 'changes_vector_%')) OR (type = 'index' AND name = 'vector_slots_slot')"
    ).fetchall():
        c.execute(f"DROP {kind.upper()} {name}")
    c.executescript(
        "DROP TABLE tallies; DROP TRIGGER changes_nonce; DROP TABLE change_nonces; PRAGMA user_version = 2; "
        "UPDATE meta SET value = 2 WHERE key = 'schema_version';"
    )
    c.close()


def test_a_restored_upgraded_schema_1_backup_under_a_reader_at_position_0(tmp_path):
    path, old = tmp_path / "kb.db", tmp_path / "old.db"
    _schema_1(old, ["a", "b"], 3)  # the store as it was, kept as a backup
    _schema_1(path, ["a", "b", "c"], 4)  # the store later
    KnowledgeBase.open(path).close()  # upgraded in place: three rows at position 0
    r = KnowledgeBase.open_read_only(path)
    assert r.graph().ids == ["a", "b", "c"] and r.state().graph_version == 0
    _copy(old, path)
    w = KnowledgeBase.open(path)  # upgraded in place: two rows at position 0
    w.add_nodes([{"id": "d", "title": "title d"}])
    fresh = _fresh(w, tmp_path, "e")
    assert r.graph().ids == fresh.graph().ids == ["a", "b", "d"]
    w.close()
    r.close()
    fresh.close()


def test_a_schema_2_backup_restored_under_a_schema_4_reader(tmp_path):
    path, old = tmp_path / "kb.db", tmp_path / "old.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    _copy(path, old)
    _to_schema_2(old)
    r = KnowledgeBase.open_read_only(path)
    assert r.graph().num_nodes == 24
    _copy(old, path)
    fresh = KnowledgeBase.open_read_only(old)
    assert r.graph().ids == fresh.graph().ids
    assert _titles(r) == _titles(fresh)
    r.close()
    fresh.close()


def test_a_schema_2_reader_after_the_store_is_upgraded_under_it_and_restored(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    _to_schema_2(path)
    r = KnowledgeBase.open_read_only(path)
    assert r.schema_version == 2 and r.graph().num_nodes == 24
    w = KnowledgeBase.open(path)  # upgraded in place under the reader: every row gets a nonce
    _copy(path, backup)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    assert _titles(r)["c01"] == "omega renamed"
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])  # the same position, another row
    fresh = _fresh(w, tmp_path, "f")
    assert _titles(r) == _titles(fresh)
    w.close()
    r.close()
    fresh.close()


def test_a_schema_2_reader_follows_plain_writes_by_position(tmp_path):
    # without nonces the position alone is followed: a write past it is read (what still works)
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    _to_schema_2(path)
    r = KnowledgeBase.open_read_only(path)
    assert r.graph().num_nodes == 24
    c = sqlite3.connect(path)  # a schema-2 writer's SQL (the triggers log it)
    c.execute("UPDATE nodes SET title = 'hand renamed' WHERE id = 'c05'")
    c.commit()
    c.close()
    copy = tmp_path / "copy.db"
    _copy(path, copy)
    fresh = KnowledgeBase.open_read_only(copy)
    assert _titles(r) == _titles(fresh) and _titles(r)["c05"] == "hand renamed"
    assert r.state().history == 0
    r.close()
    fresh.close()


# --------------------------------------------------------------------------- restores, every way


def _answers(kb: KnowledgeBase) -> tuple:
    """What the checks below compare: the graph's rows, the aliases the wrap reads, a wrapped query,
    a semantic resolution over stored vectors, the default resolution and a graph context."""
    from conceptwalk.tools.context import graph_context

    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    hits = ret.query("rename", 10, concept_walk=True, caller=ALL)
    wrapped = [sorted((k, repr(v)) for k, v in h.items()) for h in hits]
    return (
        _titles(kb),
        _reader.StoreReader(kb).read_cache().aliases(),
        wrapped,
        _semantic(kb, "s4"),
        _resolved(kb, "omega renamed"),
        str(graph_context(kb, "other rename", caller=ALL)),
    )


@pytest.mark.parametrize("where", ["past", "back-to", "short-of"])
@pytest.mark.parametrize("file", ["none", "its-own", "the-other-historys"])
def test_a_restore_under_a_reader_every_way(tmp_path, where, file):
    import numpy as np

    from test_state_follows_writes import ToyModel

    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    snap = tmp_path / "kb.db.snapshot"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    with KnowledgeBase.open(backup) as b:  # the backup's own snapshot file
        b.graph()
    own = tmp_path / "backup.db.snapshot"
    assert own.exists()
    r = KnowledgeBase.open_read_only(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}, {"id": "c02", "title": "two renamed"}])
    w.add_aliases([("zz", "c02")])
    w.set_embeddings(ToyModel.name, ["c04"], np.full((1, 8), 0.25, dtype=np.float32))
    w.graph()  # w saves this history's snapshot file
    assert snap.exists()
    before = _answers(r)
    read = r.state().graph_version
    _copy(backup, path)
    if file == "none":
        snap.unlink()
    elif file == "its-own":
        os.replace(own, snap)
    w2 = KnowledgeBase.open(path)
    base = w2.state().graph_version
    extra = {"past": read - base + 3, "back-to": read - base, "short-of": read - base - 2}[where]
    assert extra >= 1
    rows = [{"id": "c03", "title": "other rename"}] + [{"id": f"x{i}", "title": f"x {i}"} for i in range(extra - 1)]
    w2.add_nodes(rows[:extra])
    w2.add_aliases([("yy", "c04")])
    fresh = _fresh(w2, tmp_path, f"{where}-{file}")
    want = _answers(fresh)
    assert want != before
    assert _answers(r) == want
    assert r.state().history == 1
    assert _answers(w2) == want
    with KnowledgeBase.open_read_only(path) as later:  # whatever file is beside it
        assert _answers(later) == want
    with KnowledgeBase.open(path) as later:
        assert _answers(later) == want
    for kb in (w, w2, r, fresh):
        kb.close()


# --------------------------------------------------------------------------- another process


_WRITER = textwrap.dedent(
    """
    import sqlite3, sys
    from conceptwalk.kb.store import KnowledgeBase
    path, backup, step = sys.argv[1], sys.argv[2], sys.argv[3]
    if step == "restore":  # through SQLite's backup API, as a restore under open readers is made
        src, dst = sqlite3.connect(backup), sqlite3.connect(path)
        src.backup(dst)
        src.close()
        dst.close()
    kb = KnowledgeBase.open(path)
    assert kb.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    if step == "write":
        kb.add_nodes([{"id": "c01", "title": "omega renamed"}])
        kb.add_aliases([("zz", "c02")])
    else:
        kb.add_nodes([{"id": "c03", "title": "other rename"}])
        kb.add_aliases([("yy", "c04")])
    kb.close()
    """
)


def _writer(path, backup, step: str) -> None:
    subprocess.run(
        [sys.executable, "-c", _WRITER, str(path), str(backup), step], check=True, timeout=60, capture_output=True
    )


def test_a_writer_process_restores_a_backup_under_a_read_only_reader(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    _writer(path, backup, "write")
    before = _answers(r)
    assert before[0]["c01"] == "omega renamed" and before[1].get("zz") == ["c02"]
    _writer(path, backup, "restore")  # back to the same position, another row
    fresh = _fresh(r, tmp_path, "proc")
    want = _answers(fresh)
    assert want[0]["c01"] == "concept 1 token" and want[1].get("zz") is None
    assert _answers(r) == want and r.state().history == 1
    r.close()
    fresh.close()


# --------------------------------------------------------------------------- a plain file copy


def _read_past_a_backup(tmp_path, plain: bool):
    """A store filled and backed up (through SQLite's backup API, or ``plain``: a file copy of
    the closed store), then written once more and checkpointed, with a read-only reader that read
    that write: ``(path, backup, reader)``."""
    import shutil

    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    if plain:
        shutil.copyfile(path, backup)
    else:
        _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w = KnowledgeBase.open(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    w.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    w.close()
    assert _titles(r)["c01"] == "omega renamed"
    return path, backup, r


def test_a_plain_copy_over_a_checkpointed_store_is_followed_from_the_next_commit(tmp_path):
    # SQLite's "How To Corrupt An SQLite Database File" warns against overwriting a database file
    # that connections have open; a reader that read after the last checkpoint keeps its page
    # cache (the WAL index did not change), so until the next commit it may serve the replaced
    # file's pages -- nothing a store object can see without a stat of the file per read. From
    # the next commit by any connection on, it must agree with a fresh copy.
    import shutil

    path, backup, r = _read_past_a_backup(tmp_path, plain=False)
    shutil.copyfile(backup, path)  # in place, no connection in a transaction
    w = KnowledgeBase.open(path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])  # back to r's position, another row
    fresh = _fresh(w, tmp_path, "cp")
    assert _titles(r) == _titles(fresh) and _titles(r)["c01"] == "concept 1 token"
    assert r.state().history == 1
    for kb in (w, r, fresh):
        kb.close()


def test_a_plain_copy_written_past_the_readers_position_is_another_history(tmp_path):
    # as above, written two commits past r's position, and the backup a plain copy too (SQLite's
    # backup API moves the schema cookie, which sends the check the long way): the version check
    # reads the nonce at the position r followed last in its own statement
    import shutil

    path, backup, r = _read_past_a_backup(tmp_path, plain=True)
    assert r.live_graph().version == r.state().graph_version
    shutil.copyfile(backup, path)  # in place, no connection in a transaction
    w = KnowledgeBase.open(path)
    for i in range(3):  # past r's position, other rows at it and before it
        w.add_nodes([{"id": f"c0{i + 3}", "title": f"other rename {i}"}])
    fresh = _fresh(w, tmp_path, "cp-past")
    assert _titles(r) == _titles(fresh) and _titles(r)["c01"] == "concept 1 token"
    assert r.state().history == 1
    assert r.live_graph().version == fresh.state().graph_version
    for kb in (w, r, fresh):
        kb.close()


# --------------------------------------------------------------------------- bulk loads, rollbacks


def test_a_bulk_load_into_a_restored_empty_backup_at_the_readers_position(tmp_path):
    # both histories are an empty store and one bulk load: the same position (one reset row)
    path, empty = tmp_path / "kb.db", tmp_path / "empty.db"
    KnowledgeBase.create(path).close()
    _copy(path, empty)
    w = KnowledgeBase.open(path)
    # (kept in WAL mode with its page size: SQLite's backup API refuses a WAL-mode destination of
    # another page size, and a rollback-journal bulk load gives the file 16 KiB pages)
    w.BULK_ROLLBACK_JOURNAL = False
    with w.bulk():
        _fill(w)
    r = KnowledgeBase.open_read_only(path)
    before = _answers(r)
    before_gv = r.state().graph_version
    w.close()
    _copy(empty, path)
    w = KnowledgeBase.open(path)
    w.BULK_ROLLBACK_JOURNAL = False
    with w.bulk():
        _fill(w)
        w.add_nodes([{"id": "c03", "title": "other rename"}])  # (its node triggers are off)
    assert w.state().graph_version == before_gv and r.state().history == 1
    fresh = _fresh(w, tmp_path, "bulk")
    want = _answers(fresh)
    assert want != before and _answers(r) == want
    assert r.changed_nodes(0, r.state().graph_version) is None
    for kb in (w, r, fresh):
        kb.close()


def test_a_rolled_back_write_then_a_restore_under_the_writers_own_object(tmp_path):
    # the writer reads inside its own transaction (nothing of it is kept, the position it saw
    # there is not followed), rolls back, and a backup is restored under it and written back
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    seen = w.state()
    with pytest.raises(RuntimeError):
        with w.transaction():
            w.add_nodes([{"id": "c02", "title": "never committed"}, {"id": "c05", "title": "nor this"}])
            assert _titles(w)["c02"] == "never committed" and w.changed_nodes(0, 1) is None
            raise RuntimeError("rolled back")
    assert w.state() is seen and w.state().history == 0
    _copy(backup, path)
    other = KnowledgeBase.open(path)
    other.add_nodes([{"id": "c03", "title": "other rename"}])
    other.close()
    fresh = _fresh(w, tmp_path, "rb")
    assert _answers(w) == _answers(fresh) and w.state().history == 1
    w.add_nodes([{"id": "c06", "title": "six"}])  # and its own writes past it
    fresh2 = _fresh(w, tmp_path, "rb2")
    assert _answers(w) == _answers(fresh2)
    gv = w.state().graph_version
    assert w.changed_nodes(gv - 1, gv) is None  # gv - 1 was read in both logs: it cannot tell which
    w.add_nodes([{"id": "c07", "title": "seven"}])
    assert w.changed_nodes(gv, gv + 1) == ["c07"]
    for kb in (w, fresh, fresh2):
        kb.close()


# --------------------------------------------------------------------------- an interrupted check


class _Interrupting:
    """A store connection whose next statement reading one change-log row's nonce raises (a
    Ctrl-C, or a watchdog's ``conn.interrupt()``, landing there); everything else passes through."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.armed = True

    def execute(self, sql, *args):
        if self.armed and "FROM change_nonces WHERE seq = ?" in sql:
            self.armed = False
            raise KeyboardInterrupt
        return self._conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_an_interrupted_history_check_is_made_again(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    assert _titles(r)["c01"] == "omega renamed"
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}, {"id": "x0"}, {"id": "x1"}])  # past r's position
    real = r._conn
    r._conn = _Interrupting(real)
    with pytest.raises(KeyboardInterrupt):
        r.graph()
    r._conn = real
    fresh = _fresh(w, tmp_path, "int")
    assert _titles(r) == _titles(fresh)
    for kb in (w, r, fresh):
        kb.close()


# --------------------------------------------------------------------------- f6575f7: one state per answer


def test_a_subclass_of_the_builtin_flat_search_is_called(tmp_path):
    from conceptwalk.wrap import BuiltinFlatSearch

    class NoMemories(BuiltinFlatSearch):
        def __call__(self, text, k, *, caller=None):
            return [h for h in super().__call__(text, k, caller=caller) if h["type"] != "MEMORY"]

    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    ret = ConceptAnchoredRetriever(NoMemories(kb), kb)
    plain = ret.query("memory 3", 5, concept_walk=False, caller=ALL)
    assert plain and all(h["type"] != "MEMORY" for h in plain)
    walked = ret.run("memory 3", 5, concept_walk=True, caller=ALL)
    flat = walked.results[: len(plain)]
    assert [h["id"] for h in flat] == [h["id"] for h in plain]
    kb.close()


def test_a_wrapped_query_over_a_restore_reads_one_history(tmp_path):
    # a retriever held across a restore written back to its position: the flat hits, the
    # resolution and the walk are all of the new log (what a fresh retriever answers)
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    ret = ConceptAnchoredRetriever(builtin_flat_search(r), r)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    first = ret.run("omega renamed", 10, concept_walk=True, caller=ALL)
    assert first.results[0]["id"] == "c01"
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "omega rename"}])
    fresh = _fresh(w, tmp_path, "wq")
    fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh)
    for q in ("omega renamed", "concept 1", "memory 3"):
        got, want = ret.run(q, 10, concept_walk=True, caller=ALL), fret.run(q, 10, concept_walk=True, caller=ALL)
        assert got.results == want.results
        assert [(c.id, c.method) for c in got.concepts] == [(c.id, c.method) for c in want.concepts]
    for kb in (w, r, fresh):
        kb.close()


# --------------------------------------------------------------------------- no false alarms


def test_a_vacuum_or_a_restore_of_the_same_state_is_not_another_history(tmp_path):
    # a copy of the very state the reader read (same rows, same nonces) put back, and a VACUUM
    # by another connection: nothing to drop, the same state object keeps being returned
    path, same = tmp_path / "kb.db", tmp_path / "same.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    r = KnowledgeBase.open_read_only(path)
    st = r.state()
    with sqlite3.connect(same) as dst:
        w.backup(dst)
    c = sqlite3.connect(path)
    c.execute("VACUUM")
    c.close()
    assert r.state() is st
    _copy(same, path)
    assert r.state() is st and st.history == 0
    w.add_nodes([{"id": "c05", "title": "five"}])  # and written past: the same log
    st2 = r.state()
    assert st2.history == 0 and r.changed_nodes(st.graph_version, st2.graph_version) == ["c05"]
    for kb in (w, r):
        kb.close()


def test_a_wrapped_query_over_the_embedding_flat_search_across_a_restore(tmp_path):
    # f6575f7 hands the embedding-mode flat search the wrap's state too: its hits over stored
    # vectors follow a restore written back to the reader's position
    import numpy as np

    from test_state_follows_writes import ToyModel

    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    ret = ConceptAnchoredRetriever(builtin_flat_search(r, mode="embedding", embedder=ToyModel()), r)
    w.set_embeddings(ToyModel.name, ["m03"], np.full((1, 8), 0.3, dtype=np.float32))
    ret.run("memory 3", 5, concept_walk=True, caller=ALL)
    _copy(backup, path)
    w.set_embeddings(ToyModel.name, ["m05"], np.full((1, 8), 0.3, dtype=np.float32))  # same position
    fresh = _fresh(w, tmp_path, "emb")
    fret = ConceptAnchoredRetriever(builtin_flat_search(fresh, mode="embedding", embedder=ToyModel()), fresh)
    for q in ("memory 3", "concept 5 token", "s4"):
        got, want = ret.run(q, 5, concept_walk=True, caller=ALL), fret.run(q, 5, concept_walk=True, caller=ALL)
        assert got.results == want.results
    assert r.state().history == 1
    for kb in (w, r, fresh):
        kb.close()
