"""The operator's FTS5 index is optional (``enable_fts``): a new store has none, the first
``fts_search`` builds it, it then follows every write (any process's: its triggers are in the
file), and an index built late is the index its triggers would have kept."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing

import pytest

from conceptwalk.errors import ConceptwalkError
from conceptwalk.kb import KnowledgeBase

WORDS = ["graph", "walks", "walking", "memory", "retry", "storms", "cache", "bridge", "ünïcode", "it's"]
QUERIES = ("graph", "walk", "memory storms", "ünïcode cache", "it's", "bridge retry walking")


def _fts_tables(path) -> set[str]:
    with closing(sqlite3.connect(path)) as c:
        return {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE name LIKE 'nodes_fts%'")}


def _write_some(kb: KnowledgeBase, rng: random.Random, n: int) -> None:
    """Adds, retitles, body rewrites and deletes, each its own transaction."""
    for _ in range(n):
        i = rng.randrange(60)
        r = rng.random()
        if r < 0.75:
            row = {"id": f"n{i}", "title": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 4)))}
            if rng.random() < 0.5:
                row["body"] = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 9)))
            kb.add_nodes([row])
        else:
            kb.delete_nodes([f"n{i}"])


def test_a_new_store_has_none_and_the_first_fts_search_builds_it(tmp_path):
    p = tmp_path / "kb.sqlite"
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": "a", "title": "Graph walks"}, {"id": "b", "title": "walking", "body": "memory"}])
        assert not kb.fts_enabled and _fts_tables(p) == set()
        v = kb.version
        assert sorted(i for i, _ in kb.fts_search("walk")) == ["a", "b"]
        assert kb.fts_enabled and "nodes_fts" in _fts_tables(p)
        assert kb.version == v  # no node, edge or alias changed: no reader's state either
        kb.add_nodes([{"id": "c", "title": "walked"}])  # the triggers keep it
        assert sorted(i for i, _ in kb.fts_search("walk")) == ["a", "b", "c"]
        assert kb.enable_fts() is False  # already there
        assert kb.disable_fts() is True and not kb.fts_enabled and _fts_tables(p) == set()
        assert kb.disable_fts() is False
        kb.add_nodes([{"id": "d", "title": "walking again"}])  # writes without the index
        assert sorted(i for i, _ in kb.fts_search("walk")) == ["a", "b", "c", "d"]  # built again


@pytest.mark.parametrize("seed", range(3))
def test_an_index_built_late_is_the_index_its_triggers_keep(tmp_path, seed):
    """The same writes into a store that kept the index from the start and into one that builds
    it afterwards (or drops it midway and builds it again): the same answers and an index that
    passes FTS5's integrity check."""
    rng_a, rng_b = random.Random(seed), random.Random(seed)
    with KnowledgeBase.create(tmp_path / "a.sqlite") as a, KnowledgeBase.create(tmp_path / "b.sqlite") as b:
        a.enable_fts()
        _write_some(a, rng_a, 150)
        _write_some(b, rng_b, 70)
        if seed % 2:
            b.enable_fts()
            _write_some(b, rng_b, 40)
            b.disable_fts()
            _write_some(b, rng_b, 40)
        else:
            _write_some(b, rng_b, 80)
        for kb in (a, b):
            for q in QUERIES:
                kb.fts_search(q, k=100)
            kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")
        for q in QUERIES:
            assert a.fts_search(q, k=100) == b.fts_search(q, k=100), q


def test_another_process_s_index_is_kept_by_this_one_s_writes(tmp_path):
    """The triggers live in the file: a store opened before another connection built the index
    keeps it current with its own writes, and its bulk loads rebuild it."""
    p = tmp_path / "kb.sqlite"
    with KnowledgeBase.create(p) as one, KnowledgeBase.open(p) as two:
        one.add_nodes([{"id": "a", "title": "graph"}])
        assert two.enable_fts()
        one.add_nodes([{"id": "b", "title": "graph walks"}])
        with one.bulk():  # a load into a non-empty store: its rows go through the triggers
            one.add_nodes([{"id": f"x{i}", "title": f"graph {i}"} for i in range(50)])
        assert len(two.fts_search("graph", k=100)) == 52
        assert one.fts_enabled
        one.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")


def test_an_empty_store_s_bulk_load_builds_the_index_it_keeps(tmp_path):
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as kb:
        kb.enable_fts()
        with kb.bulk():
            kb.add_nodes([{"id": f"n{i}", "title": f"walk {i}", "body": "memory"} for i in range(300)])
        assert len(kb.fts_search("walking", k=1000)) == 300
        kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")
        trig = {r[0] for r in kb.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {"nodes_fts_ai", "nodes_fts_ad", "nodes_fts_au"} <= trig  # put back after the load


def test_read_only_and_inside_a_transaction_are_refused(tmp_path):
    p = tmp_path / "kb.sqlite"
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": "a", "title": "graph"}])
        with kb.transaction():
            with pytest.raises(ConceptwalkError, match="inside a transaction"):
                kb.enable_fts()
            with pytest.raises(ConceptwalkError, match="inside a transaction"):
                kb.disable_fts()
            with pytest.raises(ConceptwalkError, match="no FTS5 index and is inside a transaction: call enable_fts"):
                kb.fts_search("graph")
        assert not kb.fts_enabled
    with KnowledgeBase.open_read_only(p) as ro:
        assert not ro.fts_enabled
        with pytest.raises(
            ConceptwalkError, match="no FTS5 index and is open read-only: open it writable once and call enable_fts"
        ):
            ro.fts_search("graph")
        with pytest.raises(ConceptwalkError, match="read-only"):
            ro.enable_fts()
        assert [i for i, _ in ro.search("graph")] == ["a"]  # the package's own search needs none
    assert _fts_tables(p) == set()
    with KnowledgeBase.open(p) as kb:
        kb.enable_fts()
    with KnowledgeBase.open_read_only(p) as ro:
        assert [i for i, _ in ro.fts_search("graph")] == ["a"]


def test_an_index_without_its_triggers_is_rebuilt_by_enable_fts(tmp_path):
    """A hand edit that dropped a trigger leaves a stale index: enable_fts rebuilds it and puts
    the triggers back (a whole index is left as it is)."""
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as kb:
        kb.add_nodes([{"id": "a", "title": "graph"}])
        kb.enable_fts()
        kb.conn.execute("DROP TRIGGER nodes_fts_ai")
        kb.add_nodes([{"id": "b", "title": "graph walks"}])  # not indexed: no trigger
        assert [i for i, _ in kb.fts_search("graph")] == ["a"]
        assert kb.enable_fts() is True
        assert sorted(i for i, _ in kb.fts_search("graph")) == ["a", "b"]
        kb.add_nodes([{"id": "c", "title": "graph"}])
        assert sorted(i for i, _ in kb.fts_search("graph")) == ["a", "b", "c"]
        kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")
        assert kb.enable_fts() is False


def test_triggers_left_without_their_table_are_dropped_by_disable_fts(tmp_path):
    """A hand edit that dropped the table but not its triggers fails every node write:
    disable_fts drops them (and enable_fts would build the table again)."""
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as kb:
        kb.add_nodes([{"id": "a", "title": "graph"}])
        kb.enable_fts()
        kb.conn.execute("DROP TABLE nodes_fts")
        assert not kb.fts_enabled
        with pytest.raises(ConceptwalkError, match="no such table"):
            kb.add_nodes([{"id": "b", "title": "graph"}])
        assert kb.disable_fts() is True
        kb.add_nodes([{"id": "b", "title": "graph walks"}])
        assert kb.disable_fts() is False
        assert sorted(i for i, _ in kb.fts_search("graph")) == ["a", "b"]


def test_a_version_4_store_keeps_its_index_and_is_upgraded_to_5(tmp_path):
    """Schema 5 made the index optional (a version-4 reader refuses a store without it, so a
    version-5 store says it is newer); a version-4 file, which has it, keeps it."""
    from conceptwalk.kb.store import SCHEMA_VERSION

    assert SCHEMA_VERSION == 5
    p = tmp_path / "kb.sqlite"
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": "a", "title": "graph"}])
        kb.enable_fts()
    with closing(sqlite3.connect(p)) as c:  # as the previous version left it
        c.execute("PRAGMA user_version = 4")
        c.execute("UPDATE meta SET value = 4 WHERE key = 'schema_version'")
        c.execute("DELETE FROM nodes_fts_config WHERE k = 'crisismerge'")
        c.commit()
    with KnowledgeBase.open_read_only(p) as ro:  # read as it is
        assert ro.schema_version == 4 and [i for i, _ in ro.fts_search("graph")] == ["a"]
    with KnowledgeBase.open(p) as kb:
        assert kb.schema_version == 5 and kb.fts_enabled
        kb.add_nodes([{"id": "b", "title": "graph"}])
        assert sorted(i for i, _ in kb.fts_search("graph")) == ["a", "b"]
        assert kb.conn.execute("SELECT v FROM nodes_fts_config WHERE k = 'crisismerge'").fetchone() == (64,)
