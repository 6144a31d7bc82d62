"""A bulk load stores exactly what it stored before the bulk-load speed work (issue 31 item 5),
and what row-by-row writes store.

``tests/data/bulk_golden.json`` holds, per bulk path (``kb.bulk()`` + ``add_*``, the JSONL
import, the OBO import, ``SyntheticKB.write_to``) of the rows in ``tests/bulk_golden.py``, one
digest per table -- rowids, values and their SQLite types, the FTS5 shadow tables byte for
byte, the change log, the tallies, meta, the schema and the page size -- written by the code
before that work (but the page size: 4 KiB again since a bulk-loaded file no longer takes 16 KiB
pages, which made every later small write dearer; docs/storage.md; and the two FTS5 tables the
store's 'crisismerge' setting changes: its config row and the structure record's config cookie,
all other bytes checked equal; and meta's digest since schema 5, whose rows differ from that
code's by the schema version alone, 5 for 4, checked when it was rewritten). Each path must
reproduce every digest. And the same rows written by
``add_nodes``/``add_edges``/``add_aliases`` in small transactions (triggers on) give the same
nodes, edges, aliases, tallies and full-text content (every indexed term instance).
"""

from __future__ import annotations

import json
import sqlite3

import pytest

import bulk_golden
from conceptwalk.kb import KnowledgeBase


@pytest.fixture(scope="module")
def loads(tmp_path_factory):
    return bulk_golden.loads(tmp_path_factory.mktemp("golden"))


@pytest.mark.parametrize("path", ["bulk_api", "jsonl", "obo", "synth", "synth_default_chunk"])
def test_bulk_load_stores_what_the_previous_code_stored(loads, path):
    want = json.loads(bulk_golden.GOLDEN.read_text())[path]
    got = loads[path]
    differ = sorted(t for t in set(want) | set(got) if want.get(t) != got.get(t))
    assert not differ, f"{path}: tables that differ from the golden dump: {differ}"


def test_a_store_without_the_fts5_index_stores_the_same_rows(loads, tmp_path):
    """Without the FTS5 index (a new store's default), every bulk path stores every other table
    as it does with it; the schema differs by the index's table and triggers alone; the index
    built afterwards (enable_fts) is byte for byte the one the load would have built."""
    bare = bulk_golden.loads(tmp_path, fts=False)
    for path, tables in loads.items():
        fts = {t for t in tables if t.startswith("nodes_fts")}
        assert len(fts) == 4
        assert set(bare[path]) == set(tables) - fts, path
        differ = sorted(t for t in bare[path] if t != "schema" and bare[path][t] != tables[t])
        assert not differ, f"{path}: {differ}"
    with KnowledgeBase.open(tmp_path / "jsonl.sqlite") as kb:
        names = {r[0] for r in kb.conn.execute("SELECT name FROM sqlite_master")}
        assert not {n for n in names if "fts" in n}
        assert kb.enable_fts()
        got = bulk_golden.dump(kb.conn)
    want = loads["jsonl"]
    differ = sorted(t for t in want if want[t] != got.get(t))
    assert not differ, differ  # byte for byte, meta too (enable_fts bumps no version)


def _fts_terms(conn: sqlite3.Connection) -> list[tuple]:
    """Every (term, node id, column, offset) the FTS5 index holds."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, nodes_fts, 'instance')")
    return conn.execute(
        "SELECT term, n.id, col, offset FROM temp.fts_terms JOIN nodes n ON n.rid = doc ORDER BY term, n.id, col, offset"
    ).fetchall()


def _content(kb: KnowledgeBase) -> dict[str, list[tuple]]:
    kb.enable_fts()  # (built from the rows now where the store had none: the terms they hold)
    c = kb.conn
    return {
        "nodes": c.execute(
            "SELECT id, type, typeof(type), title, body, scopes, lifecycle FROM nodes ORDER BY id"
        ).fetchall(),
        "edges": c.execute(
            "SELECT src, dst, type, authority, typeof(authority), fidelity, typeof(fidelity), extraction_method, "
            "extraction_confidence, typeof(extraction_confidence), lifecycle, typeof(lifecycle) "
            "FROM edges ORDER BY src, dst, type"
        ).fetchall(),
        "aliases": c.execute("SELECT alias, canonical FROM aliases ORDER BY alias, canonical").fetchall(),
        # the counts ('edges.pending' is a trigger's scratch value, recomputed before each use)
        "tallies": c.execute(
            "SELECT name, n FROM tallies WHERE name LIKE 'edges.%' AND name != 'edges.pending' ORDER BY name"
        ).fetchall(),
        "fts": _fts_terms(c),
        "fts_docsize": c.execute(
            "SELECT n.id, sz FROM nodes_fts_docsize JOIN nodes n ON n.rid = nodes_fts_docsize.id ORDER BY n.id"
        ).fetchall(),
    }


def test_bulk_load_equals_row_by_row_writes(tmp_path):
    nodes, edges, aliases = bulk_golden.rows()
    with KnowledgeBase.create(tmp_path / "rows.sqlite") as a, KnowledgeBase.create(tmp_path / "bulk.sqlite") as b:
        a.enable_fts()
        b.enable_fts()
        # row by row, in small transactions (the rowids may differ: compared by key)
        for i in range(0, len(nodes), 41):
            a.add_nodes(nodes[i : i + 41])
        for i in range(0, len(edges), 41):
            a.add_edges(edges[i : i + 41])
        a.add_aliases(aliases)
        with b.bulk():
            b.add_nodes(nodes)
            b.add_edges(edges)
            b.add_aliases(aliases)
        ca, cb = _content(a), _content(b)
        assert len(ca["fts"]) > 1000 and len(ca["edges"]) > 400  # the rows hold what they should
        for name in ca:
            assert ca[name] == cb[name], name
        assert b.conn.execute("SELECT kind FROM changes").fetchall() == [(0,)]  # one reset
        assert a.version > 1 and b.version == 1
        for kb in (a, b):
            kb.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')")


def test_null_sentinels_store_what_none_stores(tmp_path):
    """put_nodes / put_edges take a NULL as None or as NULL_TEXT / NULL_CONFIDENCE (what
    node_tuple and edge_tuple return); values that look like the sentinels stay values."""
    from conceptwalk.kb.store import NULL_CONFIDENCE, NULL_TEXT, edge_tuple, node_tuple

    nodes = [{"id": "a", "title": "0", "body": "", "type": "-1"}, {"id": "b", "title": None, "lifecycle": "0"}]
    edges = [
        {"src": "a", "dst": "b", "authority": "0", "extraction_confidence": 0.0},
        {"src": "b", "dst": "a", "fidelity": "", "extraction_confidence": None, "lifecycle": None},
        {"src": "a", "dst": "a", "fidelity": 0, "extraction_method": -1, "extraction_confidence": 1},
    ]
    nt, et = [node_tuple(r) for r in nodes], [edge_tuple(r) for r in edges]
    assert nt[1][2] == NULL_TEXT and et[1][6] == NULL_CONFIDENCE and et[1][7] == NULL_TEXT

    def with_none(row: tuple, nullable: range, conf: int = -1) -> tuple:
        """The tuple with its sentinels as None (the int sentinels only: a text "0" stays)."""
        return tuple(
            None
            if type(v) is int and ((j in nullable and v == NULL_TEXT) or (j == conf and v == NULL_CONFIDENCE))
            else v
            for j, v in enumerate(row)
        )

    out = []
    for name, n_rows, e_rows in (
        ("sentinel", nt, et),
        ("none", [with_none(r, range(1, 6)) for r in nt], [with_none(r, range(3, 8), conf=6) for r in et]),
    ):
        with KnowledgeBase.create(tmp_path / f"{name}.sqlite") as kb:
            with kb.bulk():
                kb.put_nodes(n_rows)
                kb.put_edges(e_rows)
            out.append(_content(kb))
    assert out[0] == out[1]
    c = out[0]
    assert ("a", "-1", "text", "0", "", None, None) in c["nodes"]
    assert ("b", None, "null", None, None, None, "0") in c["nodes"]
    got = {(e[0], e[1]): e[3:] for e in c["edges"]}
    assert got[("a", "b")] == ("0", "text", None, "null", None, 0.0, "real", None, "null")
    assert got[("b", "a")] == (None, "null", "", "text", None, None, "null", None, "null")
    assert got[("a", "a")][2:6] == ("\x000", "text", "\x00-1", 1.0)  # numbers as their typed names


@pytest.mark.parametrize("seed", range(4))
def test_multi_row_inserts_with_repeated_keys_equal_row_by_row_writes(tmp_path, seed):
    """A bulk load into an empty store writes whole hundreds of rows per statement and writes
    a hundred again row by row when one of its keys was met before: keys repeated inside one
    hundred, across hundreds, between the hundreds and the rest of a call, and across calls,
    with different given keys, end as row-by-row writes leave them."""
    import random

    rng = random.Random(seed)
    ids = [f"k{i}" for i in range(rng.choice([40, 400, 4000]))]
    nodes, edges = [], []
    for _ in range(rng.choice([250, 1234])):
        row = {"id": rng.choice(ids)}
        for k in ("type", "title", "body", "lifecycle"):
            if rng.random() < 0.5:
                row[k] = rng.choice([None, "x", "graph walk", "0"])
        if rng.random() < 0.3:
            row["scopes"] = rng.choice([None, ["t1"], []])
        nodes.append(row)
    for _ in range(rng.choice([250, 2345])):
        e = {"src": rng.choice(ids), "dst": rng.choice(ids), "type": rng.choice(["A", "B"])}
        for k in ("authority", "lifecycle"):
            if rng.random() < 0.5:
                e[k] = rng.choice([None, "x", 1.5])
        if rng.random() < 0.5:
            e["extraction_confidence"] = rng.choice([None, 0.0, 0.5])
        edges.append(e)
    calls = rng.choice([1, 3])
    with KnowledgeBase.create(tmp_path / "rows.sqlite") as a, KnowledgeBase.create(tmp_path / "bulk.sqlite") as b:
        for i in range(0, len(nodes), 37):
            a.add_nodes(nodes[i : i + 37])
        for i in range(0, len(edges), 37):
            a.add_edges(edges[i : i + 37])
        with b.bulk():
            for part in range(calls):
                b.add_nodes(nodes[len(nodes) * part // calls : len(nodes) * (part + 1) // calls])
            for part in range(calls):
                b.add_edges(edges[len(edges) * part // calls : len(edges) * (part + 1) // calls])
        ca, cb = _content(a), _content(b)
        for name in ca:
            assert ca[name] == cb[name], name
