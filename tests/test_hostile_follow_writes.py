"""Hostile review of "the state follows writes" (schema 4 tallies, kind-4 change-log rows, the
wrap's carried vectors and alias index): every answer must equal what a fresh build of the same
committed rows gives, whatever wrote the rows and however a transaction ended.

- A rolled-back write must leave nothing a later read reuses: a committed ReadCache read inside
  the store's own write transaction saw the uncommitted alias and vector counts and carried what
  it built under them; after the rollback and one more write the counts matched again, and the
  rolled-back alias resolved while the committed one did not (and a rolled-back vector was served).
- The edge tallies must equal counting the edges after any SQL a client writes: an
  ``INSERT OR REPLACE`` (SQLite fires no delete trigger for the row it replaces) counted the old
  row's annotations twice.
- A stored vector written by hand-written SQL (it logs kind-4 rows but does not bump the write
  counter) must be read: the read cache was keyed by the write counter alone.
- A backup restored under an open store object (SQLite's backup API: its readers stay
  consistent) and written past, or back to, the position it read: the object brought its graph
  forward by positions alone, so it served the replaced log's rows, and the wrap's carried alias
  index and vectors followed it; and a snapshot saved then was labelled with the new log's nonce.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from conceptwalk import Caller
from conceptwalk.kb.store import ANNOTATION_AXES, KnowledgeBase
from conceptwalk.wrap import ConceptResolver, WalkConfig, _reader
from test_state_follows_writes import ToyModel

ALL = Caller.all_access()


def _fill(kb: KnowledgeBase, n: int = 12) -> None:
    kb.add_nodes(
        [{"id": f"c{i:02d}", "type": "CONCEPT", "title": f"concept {i} token"} for i in range(n)]
        + [{"id": f"m{i:02d}", "type": "MEMORY", "title": f"memory {i}"} for i in range(n)]
    )
    kb.add_edges(
        [
            {"src": f"m{i:02d}", "dst": f"c{i:02d}", "type": "MENTIONS", "authority": "a" if i % 3 else None}
            for i in range(n)
        ]
    )
    kb.add_aliases([("gw", "c00")])
    kb.set_embeddings(
        ToyModel.name, [f"c{i:02d}" for i in range(0, n, 2)], ToyModel().embed([f"s{i}" for i in range(0, n, 2)])
    )


def _counted(kb: KnowledgeBase) -> dict[str, int]:
    with kb._read() as conn:
        return {k: conn.execute(f"SELECT count({k}) FROM edges").fetchone()[0] for k in ANNOTATION_AXES}


def _semantic(kb: KnowledgeBase, q: str) -> list:
    r = ConceptResolver(kb, WalkConfig(lexical_k=0), embedder=ToyModel())
    return [(c.id, c.method, round(c.confidence, 6)) for c in r.resolve(q, caller=ALL)]


def _fresh(kb: KnowledgeBase, tmp_path, tag: str) -> KnowledgeBase:
    """A new store object over a copy of ``kb``'s committed rows (nothing carried)."""
    dst = sqlite3.connect(tmp_path / f"fresh-{tag}.db")
    with kb._read() as conn:
        conn.backup(dst)
    dst.close()
    return KnowledgeBase.open(tmp_path / f"fresh-{tag}.db")


# --------------------------------------------------------------------------- rollbacks


def test_an_alias_index_built_inside_a_rolled_back_transaction_is_not_carried(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    cache = _reader.StoreReader(kb).read_cache()  # a committed state; its alias index not built yet
    with pytest.raises(RuntimeError):
        with kb.transaction():
            kb.add_aliases([("zebra", "c03")])
            assert cache.alias_index()[0].get("zebra") == ["c03"]  # the caller's own rows, inside
            raise RuntimeError("rolled back")
    kb.add_aliases([("lion", "c04")])  # the alias count is again what it was inside
    index = _reader.StoreReader(kb).read_cache().alias_index()[0]
    assert sorted(kb.aliases()) == ["gw", "lion"]
    assert index.get("zebra") is None and index.get("lion") == ["c04"]
    kb.close()


def test_concept_vectors_read_inside_a_rolled_back_transaction_are_not_carried(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    cfg = WalkConfig(lexical_k=0)
    cache = _reader.StoreReader(kb).read_cache()
    with pytest.raises(RuntimeError):
        with kb.transaction():
            kb.set_embeddings(ToyModel.name, ["c00"], np.ones((1, 8), dtype=np.float32))
            cache.concept_embeddings(ToyModel(), cfg)
            raise RuntimeError("rolled back")
    kb.set_embeddings(ToyModel.name, ["c00"], np.full((1, 8), 0.5, dtype=np.float32))  # the same count again
    got = _reader.StoreReader(kb).read_cache().concept_embeddings(ToyModel(), cfg)
    assert got[0].tolist() == [0.5] * 8
    assert _semantic(kb, "concept 3") == _semantic(_fresh(kb, tmp_path, "a"), "concept 3")
    kb.close()


def test_the_counts_are_none_inside_the_stores_own_write_transaction(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    assert isinstance(kb.aliases_version(), int) and isinstance(kb.embeddings_version(), int)
    with kb.transaction():
        kb.add_aliases([("x", "c01")])
        assert kb.aliases_version() is None and kb.embeddings_version() is None
    assert isinstance(kb.aliases_version(), int)
    kb.close()


# --------------------------------------------------------------------------- hand-written SQL


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT OR REPLACE INTO edges(src, dst, type, authority) VALUES ('m01', 'c01', 'MENTIONS', NULL)",
        "INSERT OR REPLACE INTO edges(src, dst, type, authority, fidelity) VALUES ('m01', 'c01', 'MENTIONS', 'b', 'f')",
        "INSERT OR REPLACE INTO edges(src, dst, type) VALUES ('m05', 'c09', 'NEW')",
        "INSERT OR IGNORE INTO edges(src, dst, type, fidelity) VALUES ('m02', 'c02', 'MENTIONS', 'f')",
        "INSERT OR REPLACE INTO edges(src, dst, type, lifecycle) "
        "SELECT src, dst, type, 'live' FROM edges WHERE authority IS NOT NULL",
    ],
    ids=["replace-drops", "replace-adds", "replace-new", "ignore", "replace-many"],
)
@pytest.mark.parametrize("recursive", [False, True], ids=["plain", "recursive-triggers"])
def test_edge_tallies_equal_counting_after_replace_by_any_client(tmp_path, sql, recursive):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    assert kb.annotation_presence() == _counted(kb)
    c = sqlite3.connect(tmp_path / "kb.db")
    if recursive:  # a client with recursive triggers on: SQLite then fires the delete trigger too
        c.execute("PRAGMA recursive_triggers = ON")
    c.execute(sql)
    c.commit()
    c.close()
    assert kb.annotation_presence() == _counted(kb)
    # and the store's own writes keep counting right after it
    kb.add_edges([{"src": "m01", "dst": "c01", "type": "MENTIONS", "extraction_method": "x"}])
    kb.add_edges([{"src": "m07", "dst": "c08", "type": "MENTIONS", "authority": "z"}])
    assert kb.annotation_presence() == _counted(kb)
    kb.close()


def test_a_stored_vector_written_by_hand_is_read(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    before = _semantic(kb, "s4")
    c = sqlite3.connect(tmp_path / "kb.db")
    c.execute(f"UPDATE vector_chunks SET data = zeroblob(length(data)) WHERE model = '{ToyModel.name}'")
    c.commit()
    c.close()
    got = _semantic(kb, "s4")
    assert before[0][0] == "c04" and got != before
    assert got == _semantic(_fresh(kb, tmp_path, "b"), "s4")
    kb.close()


# --------------------------------------------------------------------------- a restored backup


def test_an_open_reader_after_a_backup_is_restored_and_written_past(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.close()
    backup = tmp_path / "backup.db"
    src = sqlite3.connect(path)
    dst = sqlite3.connect(backup)
    src.backup(dst)
    src.close()
    dst.close()
    w = KnowledgeBase.open(path)
    r = KnowledgeBase.open_read_only(path)
    _semantic(r, "concept 1")
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    _semantic(r, "concept 1")  # r has read the renamed title
    src = sqlite3.connect(backup)  # the backup restored through SQLite (readers stay consistent)
    dst = sqlite3.connect(path)
    src.backup(dst)
    src.close()
    dst.close()
    for i in range(3):  # written past the position r read
        w.add_nodes([{"id": f"x{i}"}])
    assert r.graph().titles[r.graph().index("c01")] == "concept 1 token"
    assert _semantic(r, "concept 1") == _semantic(_fresh(w, tmp_path, "c"), "concept 1")
    w.close()
    r.close()


def _copy(src_path, dst_path) -> None:
    """Copy a store file through SQLite's backup API (what a restore under open readers does)."""
    src, dst = sqlite3.connect(src_path), sqlite3.connect(dst_path)
    src.backup(dst)
    src.close()
    dst.close()


def test_a_restored_backup_written_back_to_the_position_read_is_another_history(tmp_path):
    # the restored log reaches the very position the reader read, with another row behind it
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    r = KnowledgeBase.open_read_only(path)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    w.add_aliases([("zz", "c02")])
    st = r.state()
    assert w.state().history == 0
    assert st.history == 0 and st.graph.titles[st.graph.index("c01")] == "omega renamed"
    assert _reader.StoreReader(r).read_cache().aliases().get("zz") == ["c02"]
    _semantic(r, "omega")  # the carried vectors and alias index, at that position
    _copy(backup, path)
    w.add_nodes([{"id": "c03", "title": "other rename"}])
    w.add_aliases([("yy", "c04")])  # the same position and the same alias count as r read
    st2 = r.state()
    assert st2.graph_version == st.graph_version and st2.history == 1
    assert st2.graph.titles[st2.graph.index("c01")] == "concept 1 token"
    assert st2.graph.titles[st2.graph.index("c03")] == "other rename"
    aliases = _reader.StoreReader(r).read_cache().aliases()
    assert aliases.get("zz") is None and aliases.get("yy") == ["c04"]
    fresh = _fresh(w, tmp_path, "d")
    for q in ("omega", "other rename", "concept 1", "yy"):
        assert _semantic(r, q) == _semantic(fresh, q)
    # and the log cannot say what changed since a position of the replaced one
    assert r.changed_nodes(0, st2.graph_version) is None
    w.add_nodes([{"id": "c05", "title": "later"}])
    assert r.changed_nodes(st2.graph_version + 1, st2.graph_version + 1) == []
    assert w.state().history == 1  # the writer's own object found it too
    w.close()
    r.close()
    fresh.close()


def test_a_snapshot_read_before_a_restore_is_not_saved_under_the_new_logs_nonce(tmp_path):
    path, backup = tmp_path / "kb.db", tmp_path / "backup.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _copy(path, backup)
    w.add_nodes([{"id": "c01", "title": "omega renamed"}])
    g = w.graph()  # w now holds the graph of this position
    _copy(backup, path)
    w2 = KnowledgeBase.open(path)  # another writer brings the restored log to the same position
    w2.add_nodes([{"id": "c03", "title": "other rename"}])
    w2.close()
    snap = tmp_path / "kb.db.snapshot"
    if snap.exists():
        snap.unlink()
    w._keeper.save_snapshot(force=True)  # a save racing the restore: no read in between
    assert not snap.exists()
    assert w.graph() is not g and w.graph().titles[w.graph().index("c01")] == "concept 1 token"
    w.close()
    r = KnowledgeBase.open_read_only(path)  # what every later open believes
    got = r.graph()
    assert got.titles[got.index("c01")] == "concept 1 token" and got.titles[got.index("c03")] == "other rename"
    r.close()
