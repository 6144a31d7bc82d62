"""The bulk write paths (``KnowledgeBase.bulk``, ``SyntheticKB.write_to``, the JSONL and CSV
importers) store exactly what plain row-by-row writes store.

Differential: the same input goes through the bulk path into one store and through
``add_nodes``/``add_edges``/``add_aliases`` in small batches (each its own transaction, triggers
on) into another; the two are compared table row by table row (values and their SQLite types),
as graph snapshot arrays (``GraphSnapshot.build(...).to_arrays()``), as the columns read back
(``read_columns``) and through the text search (``search``, ``fts_search``).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from contextlib import closing
from pathlib import Path
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk.errors import ConceptwalkError, InputError
from conceptwalk.kb import synthetic
from conceptwalk.kb.importers import import_edge_list, import_jsonl
from conceptwalk.kb.snapshot import GraphSnapshot, read_columns
from conceptwalk.kb.store import EDGE_KEYS, KnowledgeBase

NODE_SQL = "SELECT id, type, typeof(type), title, body, scopes, lifecycle FROM nodes ORDER BY id"
EDGE_SQL = (
    "SELECT src, dst, type, authority, typeof(authority), fidelity, typeof(fidelity), "
    "extraction_method, extraction_confidence, typeof(extraction_confidence), lifecycle, "
    "typeof(lifecycle) FROM edges ORDER BY src, dst, type"
)
SCHEMA_SQL = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
QUERIES = ("graph", "memory walk", "retry storms", "cache bridge settlement", "ADR", "nothing-like-this")


def _create(path: object) -> KnowledgeBase:
    """A new store that keeps the optional FTS5 index (``enable_fts``): the bulk paths must
    build it as the triggers of row-by-row writes do. (The FTS5 tables aside, a store without
    it stores the same rows: ``test_bulk_golden.py``.)"""
    kb = KnowledgeBase.create(path)  # type: ignore[arg-type]
    kb.enable_fts()
    return kb


def row_by_row(kb: KnowledgeBase, nodes: list, edges: list, aliases: list, batch: int = 97) -> None:
    """The reference: plain writes in small batches, each its own transaction."""
    for i in range(0, len(nodes), batch):
        kb.add_nodes(nodes[i : i + batch])
    for i in range(0, len(edges), batch):
        kb.add_edges(edges[i : i + batch])
    for i in range(0, len(aliases), batch):
        kb.add_aliases(aliases[i : i + batch])


def snapshot_arrays(kb: KnowledgeBase) -> dict[str, np.ndarray]:
    conn = kb.conn
    conn.execute("BEGIN")
    try:
        return GraphSnapshot.build(conn, 0).to_arrays()
    finally:
        conn.execute("COMMIT")


def columns(kb: KnowledgeBase, *, edge_order_free: bool) -> dict[str, object]:
    """``read_columns`` as comparable values (edges sorted by key when the two stores wrote
    them in different orders: the rowid order is the only thing a bulk load may change)."""
    c = read_columns(kb.conn)
    out: dict[str, object] = {
        "ids": c.ids,
        "titles": c.titles,
        "node_types": (c.node_types[0].tolist(), c.node_types[1]),
        "lifecycle": (c.lifecycle[0].tolist(), c.lifecycle[1]),
        "scopes": tuple(x.tolist() if isinstance(x, np.ndarray) else x for x in c.scopes),
    }

    def names(col: object) -> list:
        codes, nm = col  # type: ignore[misc]
        return [nm[i] if i >= 0 else None for i in codes.tolist()]

    edge_cols = [c.src.tolist(), c.dst.tolist(), names(c.etype)]
    for k, v in sorted(c.ann.items()):
        if isinstance(v, tuple):
            edge_cols.append(names(v))
        else:
            edge_cols.append(["nan" if np.isnan(x) else float(x) for x in np.asarray(v).tolist()])
    rows = list(zip(*edge_cols))
    out["edges"] = sorted(rows, key=repr) if edge_order_free else rows
    return out


def assert_same_store(a: KnowledgeBase, b: KnowledgeBase, *, edge_order_free: bool) -> None:
    assert a.conn.execute(NODE_SQL).fetchall() == b.conn.execute(NODE_SQL).fetchall()
    assert a.conn.execute(EDGE_SQL).fetchall() == b.conn.execute(EDGE_SQL).fetchall()
    assert a.aliases() == b.aliases()
    assert a.conn.execute(SCHEMA_SQL).fetchall() == b.conn.execute(SCHEMA_SQL).fetchall()
    # the FTS5 configuration a bulk load changes for its rebuild is back as it was
    cfg = "SELECT k, v FROM nodes_fts_config ORDER BY k"
    assert a.conn.execute(cfg).fetchall() == b.conn.execute(cfg).fetchall()
    assert a.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')") is not None
    assert b.conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('integrity-check')") is not None
    sa, sb = snapshot_arrays(a), snapshot_arrays(b)
    assert sorted(sa) == sorted(sb)
    for name in sa:
        assert sa[name].dtype == sb[name].dtype, name
        np.testing.assert_array_equal(sa[name], sb[name], err_msg=name)
    assert columns(a, edge_order_free=edge_order_free) == columns(b, edge_order_free=edge_order_free)
    ga, gb = a.graph(), b.graph()
    assert ga.ids == gb.ids and ga.num_edges == gb.num_edges
    for q in QUERIES + tuple(ga.ids[:: max(1, len(ga.ids) // 7)]):
        assert a.search(q, k=25) == b.search(q, k=25), q
        assert a.fts_search(q, k=25) == b.fts_search(q, k=25), q


def is_wal(kb: KnowledgeBase) -> bool:
    return str(kb.conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"


# ---------------------------------------------------------------------- synth
def test_synthetic_write_to_equals_row_by_row_writes(tmp_path):
    syn = synthetic.generate(400, seed=7)
    # values the coded (integer -> CASE) path must store exactly: a quote, a NUL inside
    au = syn.edge_annotations["authority"]
    au[0], au[1], au[5] = "it's", "a\x00b", "it's"
    syn.lifecycle[2] = "o'clock"
    with _create(tmp_path / "rows.sqlite") as a, _create(tmp_path / "bulk.sqlite") as b:
        row_by_row(a, list(syn.node_rows()), list(syn.edge_rows()), list(syn.alias_rows()))
        syn.write_to(b, chunk=333)
        assert is_wal(b)
        # SQLite's default page size is kept: larger pages would make every later small write dearer
        assert b.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert b.conn.execute("SELECT kind FROM changes").fetchall() == [(0,)]  # one reset
        assert_same_store(a, b, edge_order_free=True)
        got = b.conn.execute(
            "SELECT authority, length(CAST(authority AS BLOB)) FROM edges WHERE authority = ?", ("a\x00b",)
        ).fetchall()
        assert got == [("a\x00b", 3)]


def test_synthetic_write_to_with_many_distinct_values_and_typed_annotations(tmp_path):
    """Columns with more distinct values than are coded, and numbers among the annotations,
    go to the store as values (the numbers as their typed names, as add_edges stores them)."""
    syn = synthetic.generate(150, seed=3)
    fi = syn.edge_annotations["fidelity"]
    for i in range(len(fi)):
        fi[i] = f"f{i % 200}"
    with _create(tmp_path / "rows.sqlite") as a, _create(tmp_path / "bulk.sqlite") as b:
        row_by_row(a, list(syn.node_rows()), list(syn.edge_rows()), list(syn.alias_rows()))
        syn.write_to(b)
        assert_same_store(a, b, edge_order_free=True)


# ---------------------------------------------------------------------- JSONL / CSV
_VALUES = st.one_of(
    st.none(),
    st.sampled_from(["x", "it's", "CURATED", "a\x00b", "é"]),
    st.sampled_from([0.75, 1, True, False, -3, 2.5e-7]),
)
_IDS = st.sampled_from([f"n{i}" for i in range(12)] + ["ünï", "q'uote"])


@st.composite
def jsonl_rows(draw: st.DrawFn) -> list[dict]:
    out = []
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["node", "edge", "edge", "alias"]))
        if kind == "node":
            row: dict = {"id": draw(_IDS)}
            for k in ("type", "title", "body", "lifecycle"):
                if draw(st.booleans()):
                    row[k] = draw(st.one_of(st.none(), st.sampled_from(["CONCEPT", "graph walks", "memory", "x"])))
            if draw(st.booleans()):
                row["scopes"] = draw(st.one_of(st.none(), st.lists(st.sampled_from(["t1", "t2"]), max_size=2)))
        elif kind == "edge":
            row = {"src": draw(_IDS), "dst": draw(_IDS)}
            if draw(st.booleans()):
                row["type"] = draw(st.sampled_from(["LINK", "CITES", "REL"]))
            for k in ("authority", "fidelity", "extraction_method", "lifecycle"):
                if draw(st.booleans()):
                    row[k] = draw(_VALUES)
            if draw(st.booleans()):
                row["extraction_confidence"] = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 1, 0.1])))
        else:
            continue
        out.append(row)
    # an alias to a node the rows define (or create as an endpoint)
    ids = [r.get("id") or r.get("src") for r in out]
    if ids and draw(st.booleans()):
        out.append({"alias": "nick", "canonical": ids[-1]})
    return out


def _split(rows: list[dict]) -> tuple[list, list, list]:
    nodes = [r for r in rows if "id" in r]
    edges = [r for r in rows if "src" in r]
    aliases = [r for r in rows if "alias" in r]
    return nodes, edges, aliases


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=jsonl_rows())
def test_jsonl_import_equals_row_by_row_writes(tmp_path, rows):
    """Repeated ids and keys with different given keys (the last given value wins per key),
    typed annotations, quotes and NULs inside values, bare endpoint nodes, aliases."""
    # a fresh directory per example: hypothesis may run the same rows twice (a replayed or
    # shrunk example), so a name derived from the rows could already exist
    d = Path(tempfile.mkdtemp(dir=tmp_path, prefix="case"))
    path = d / "kb.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=bool(len(rows) % 2)) + ("\r\n" if len(rows) % 3 == 0 else "\n"))
    nodes, edges, aliases = _split(rows)
    with _create(d / "rows.sqlite") as a, _create(d / "bulk.sqlite") as b:
        # row by row in the file's order: nodes and edges interleave as the file has them
        kb_rows = [r for r in rows if "alias" not in r]
        for i in range(0, len(kb_rows), 7):
            part = kb_rows[i : i + 7]
            # one call per run of one kind keeps the file's order
            j = 0
            while j < len(part):
                kind = "id" in part[j]
                k = j
                while k < len(part) and ("id" in part[k]) == kind:
                    k += 1
                (a.add_nodes if kind else a.add_edges)(part[j:k])
                j = k
        if aliases:
            a.add_aliases(aliases)
        if not nodes and not edges:
            with pytest.raises(InputError):
                import_jsonl(b, path)
            return
        s = import_jsonl(b, path)
        assert (s.nodes, s.edges, s.aliases) == (len(nodes), len(edges), len(aliases))
        assert is_wal(b)
        assert_same_store(a, b, edge_order_free=False)


def test_jsonl_import_of_a_synthetic_kb_equals_row_by_row_writes(tmp_path):
    syn = synthetic.generate(300, seed=11)
    path = tmp_path / "kb.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for r in syn.node_rows():
            fh.write(json.dumps(r) + "\n")
        for r in syn.edge_rows():
            fh.write(json.dumps(r) + "\n")
        for r in syn.alias_rows():
            fh.write(json.dumps(r) + "\n")
    with _create(tmp_path / "rows.sqlite") as a, _create(tmp_path / "bulk.sqlite") as b:
        row_by_row(a, list(syn.node_rows()), list(syn.edge_rows()), list(syn.alias_rows()))
        import_jsonl(b, path)
        assert_same_store(a, b, edge_order_free=False)


def test_edge_list_import_equals_row_by_row_writes(tmp_path):
    syn = synthetic.generate(200, seed=2)
    path = tmp_path / "edges.csv"
    a_ = syn.edge_annotations
    edges = []
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(EDGE_KEYS)
        for r in syn.edge_rows():
            w.writerow(["" if r[k] is None else r[k] for k in EDGE_KEYS])
            edges.append({k: v for k, v in r.items() if v is not None or k in a_})
    with _create(tmp_path / "rows.sqlite") as a, _create(tmp_path / "bulk.sqlite") as b:
        row_by_row(a, [], edges, [])
        import_edge_list(b, path)
        assert_same_store(a, b, edge_order_free=False)


@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"id": "a"} {"id": "b"}\n', None),
        ('{"id": "a"}\x0c\n', None),
        ('{"id": "a"\n', None),
        ('{"id": "a", "title": "x\\ud800"}  x\n', None),
        ('{"id": "a", "title": "tab\there"}\n', None),
        ('{"id": NaN}\n', "'id' must be a string, got float nan"),
        ('{"src": "a", "dst": "b", "fidelity": 1e400}\n', "'fidelity' must be a string, a finite number"),
        ('\ufeff{"id": "a"}\n', None),
        ('[{"id": "a"}]\n', "expected a JSON object, got list"),
        ('{"id": "a", "scopes": ["t", ""]}\n', "'scopes' must hold non-empty strings, got ''"),
        ('{"id": "a", "scopes": ["t", 3]}\n', "'scopes' must hold non-empty strings, got 3"),
        ('{"src": "a", "dst": "b", "authority": "\\u0000x"}\n', "'authority' must not start with a NUL character"),
        ('{"id": ' + "[" * 100000 + "\n", "invalid JSON (nested too deeply)"),
    ],
)
def test_jsonl_errors_name_the_line_as_json_loads_would(tmp_path, line, expected):
    """The fast decoding path gives the result or the error that json.loads gives."""
    if expected is None:
        with pytest.raises(json.JSONDecodeError) as exc:
            json.loads(line)
        expected = f"invalid JSON ({exc.value.msg} at column {exc.value.colno})"
    path = tmp_path / "bad.jsonl"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write('{"id": "ok", "scopes": ["t"]}\n\n' + line)
    with _create(tmp_path / "kb.sqlite") as kb:
        with pytest.raises(InputError) as err:
            import_jsonl(kb, path)
        assert str(err.value).startswith(f"{path}:3: ")
        assert expected in str(err.value)
        assert kb.stats()["nodes"] == 0 and is_wal(kb)
        schema = kb.conn.execute(SCHEMA_SQL).fetchall()
    with _create(tmp_path / "empty.sqlite") as ref:
        assert ref.conn.execute(SCHEMA_SQL).fetchall() == schema


def test_jsonl_whitespace_and_big_numbers_decode_as_json_loads(tmp_path):
    lines = [
        '  {"id": "a", "title": "spaced"}  \t\r\n',
        '{"src": "a", "dst": "b", "fidelity": 12345678901234567890}\n',
        '{"src": "a", "dst": "c", "authority": -0.0, "lifecycle": 1E2}\n',
    ]
    path = tmp_path / "kb.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    with _create(tmp_path / "rows.sqlite") as a, _create(tmp_path / "bulk.sqlite") as b:
        objs = [json.loads(ln) for ln in lines]
        a.add_nodes(objs[:1])
        with pytest.raises(InputError) as e1:
            a.add_edges(objs[1:2])
        with pytest.raises(InputError) as e2:
            import_jsonl(b, path)
        assert str(e2.value) == f"{path}:2: " + str(e1.value).split(": ", 2)[2]
        path.write_text(lines[0] + lines[2], encoding="utf-8")
        a.add_edges(objs[2:])
        import_jsonl(b, path)
        assert_same_store(a, b, edge_order_free=False)


# ---------------------------------------------------------------------- the transaction
def test_bulk_into_a_non_empty_store_is_a_plain_transaction(tmp_path):
    with _create(tmp_path / "kb.sqlite") as kb:
        kb.add_nodes([{"id": "a", "title": "Alpha"}])
        with kb.bulk():
            assert is_wal(kb)
            kb.add_edges([("a", "b")])
        kinds = [k for (k,) in kb.conn.execute("SELECT kind FROM changes ORDER BY seq")]
        assert 0 not in kinds and len(kinds) >= 3


def _wordy_nodes(n: int, prefix: str = "n") -> list[dict]:
    """Nodes whose bodies hold many distinct terms (each fills FTS5's pending-terms buffer)."""
    return [
        {"id": f"{prefix}{i}", "title": f"node {i} walk", "body": " ".join(f"w{prefix}{i}x{j}" for j in range(40))}
        for i in range(n)
    ]


@pytest.mark.parametrize("into", ["empty", "non-empty"])
def test_bulk_load_leaves_one_full_text_segment(tmp_path, monkeypatch, into):
    """A bulk load that leaves more than one large FTS5 segment merges them into one: left as
    they are, a later one-row write merges all of them inside itself (FTS5's crisis merge:
    seconds on a store of millions of nodes). Small segments stand for large ones here (a
    small pending-terms buffer and a 1-page floor)."""
    import conceptwalk.kb.store as store_mod

    monkeypatch.setattr(store_mod, "_BULK_FTS_HASH", 4096)
    monkeypatch.setattr(store_mod, "_FTS_MERGE_PAGES", 1)
    with _create(tmp_path / "kb.sqlite") as kb:
        if into == "non-empty":
            kb.add_nodes([{"id": "seed", "title": "seed walk"}])
            kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('hashsize', 4096)")
        unmerged: list[list[int]] = []
        orig = store_mod._merge_fts_segments

        def spy(conn, before=0):
            unmerged.append(store_mod._fts_segment_pages(conn))
            return orig(conn, before)

        monkeypatch.setattr(store_mod, "_merge_fts_segments", spy)
        with kb.bulk():
            kb.add_nodes(_wordy_nodes(400))
        assert len(unmerged) == 1 and len(unmerged[0]) > 1  # the load wrote several segments
        assert len(store_mod._fts_segment_pages(kb.conn)) == 1
        # the index answers as the store written row by row does
        with _create(tmp_path / "ref.sqlite") as ref:
            if into == "non-empty":
                ref.add_nodes([{"id": "seed", "title": "seed walk"}])
            row_by_row(ref, _wordy_nodes(400), [], [])
            for q in ("walk", "node 17", "wn3x5 wn250x39", "seed"):
                assert kb.fts_search(q, k=500) == ref.fts_search(q, k=500)


def test_small_bulk_load_into_a_large_index_leaves_its_segments(tmp_path, monkeypatch):
    """A load whose segments are small beside the index's largest one (below an eighth of it)
    is left to FTS5's own merging: a full merge would cost a pass over the whole index."""
    import conceptwalk.kb.store as store_mod

    monkeypatch.setattr(store_mod, "_FTS_MERGE_PAGES", 1)
    with _create(tmp_path / "kb.sqlite") as kb:
        with kb.bulk():
            kb.add_nodes(_wordy_nodes(3000))
        big = store_mod._fts_segment_pages(kb.conn)
        assert len(big) == 1 and big[0] > 16
        with kb.bulk():
            kb.add_nodes(_wordy_nodes(2, prefix="m"))
        pages = store_mod._fts_segment_pages(kb.conn)
        assert len(pages) > 1 and pages[0] == big[0]  # not merged


def test_small_bulk_load_into_an_index_grown_row_by_row_leaves_its_segments(tmp_path, monkeypatch):
    """Row-by-row writes leave a few large segments of the index's own (FTS5 merges them as
    usual): a one-row load into that store merges nothing (a full merge there cost 0.62 s on a
    60k-node store, for one row; at millions of nodes, seconds holding the write lock)."""
    import conceptwalk.kb.store as store_mod

    monkeypatch.setattr(store_mod, "_FTS_MERGE_PAGES", 1)
    with _create(tmp_path / "kb.sqlite") as kb:
        for b in range(40):
            kb.add_nodes(_wordy_nodes(100, prefix=f"r{b}x"))
        before = store_mod._fts_segment_pages(kb.conn)
        assert len(before) > 1 and before[1] >= before[0] * store_mod._FTS_MERGE_SHARE  # the shape
        with kb.bulk():
            kb.add_nodes([{"id": "one", "title": "one more walk"}])
        after = store_mod._fts_segment_pages(kb.conn)
        assert len(after) > 1 and after[0] == before[0]  # not merged
        assert [i for i, _ in kb.fts_search("one more", k=5)][0] == "one"


def _crisis_merge(path) -> list:
    with closing(sqlite3.connect(path)) as c:
        return c.execute("SELECT v FROM nodes_fts_config WHERE k = 'crisismerge'").fetchall()


def test_the_store_sets_fts5_crisismerge_once_and_keeps_an_operators_value(tmp_path):
    """A store's FTS5 index holds 64 segments on a level before a write merges the whole level
    (FTS5's default 16 made one one-row write rewrite the index's largest segment: 0.95 s at
    500k nodes, ``bench_bulk_load.py --writes-after``): a new store has the setting, a store
    written before it gets it when opened for writing, once; an operator's own value is kept;
    a read-only open writes nothing."""
    import conceptwalk.kb.store as store_mod

    p = tmp_path / "kb.sqlite"
    with _create(p) as kb:
        kb.add_nodes([{"id": "a", "title": "a walk"}])
    assert _crisis_merge(p) == [(store_mod._FTS_CRISIS_MERGE,)] and store_mod._FTS_CRISIS_MERGE > 16
    with KnowledgeBase.open(p) as kb:  # as a store written before the setting: none
        kb.conn.execute("DELETE FROM nodes_fts_config WHERE k = 'crisismerge'")
    with KnowledgeBase.open_read_only(p) as ro:
        assert [i for i, _ in ro.fts_search("walk")] == ["a"]
    assert _crisis_merge(p) == []
    with KnowledgeBase.open(p) as kb:
        assert [i for i, _ in kb.fts_search("walk")] == ["a"]
    assert _crisis_merge(p) == [(store_mod._FTS_CRISIS_MERGE,)]
    with KnowledgeBase.open(p) as kb:
        kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('crisismerge', 200)")
    with KnowledgeBase.open(p) as kb:
        kb.add_nodes([{"id": "b", "title": "b walk"}])
        assert sorted(i for i, _ in kb.fts_search("walk")) == ["a", "b"]
    assert _crisis_merge(p) == [(200,)]
    with KnowledgeBase.open(p) as kb:  # FTS5 reads its keys in any case
        kb.conn.execute("DELETE FROM nodes_fts_config WHERE k = 'crisismerge'")
        kb.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('CrisisMerge', 100)")
    with KnowledgeBase.open(p):
        pass
    assert _crisis_merge(p) == []


def test_bulk_stays_in_wal_mode_while_another_connection_reads(tmp_path):
    path = str(tmp_path / "kb.sqlite")
    syn = synthetic.generate(100, seed=1)
    with _create(path) as kb, KnowledgeBase.open(path) as reader:
        assert reader.stats()["nodes"] == 0
        seen = []
        orig = kb.put_nodes

        def spy(params, **kw):
            seen.append((str(kb.conn.execute("PRAGMA journal_mode").fetchone()[0]), reader.stats()["nodes"]))
            orig(params, **kw)

        kb.put_nodes = spy  # type: ignore[method-assign]
        syn.write_to(kb)
        assert seen and all(mode == "wal" and n == 0 for mode, n in seen)  # the reader saw the empty store
        assert kb.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert reader.stats()["nodes"] == syn.num_nodes


def test_failed_bulk_load_leaves_the_store_as_it_was(tmp_path):
    path = str(tmp_path / "kb.sqlite")
    syn = synthetic.generate(200, seed=4)
    with _create(path) as kb:
        before = kb.conn.execute(SCHEMA_SQL).fetchall()
        config = kb.conn.execute("SELECT * FROM nodes_fts_config").fetchall()
        assert ("version", 4) in config

        def boom(params, **kw):
            raise RuntimeError("disk on fire")

        kb.add_aliases = boom  # type: ignore[method-assign]  # fails after every node and edge
        with pytest.raises(RuntimeError):
            syn.write_to(kb)
        assert is_wal(kb) and kb.stats()["nodes"] == 0 and kb.stats()["edges"] == 0
        assert kb.conn.execute(SCHEMA_SQL).fetchall() == before
        assert kb.conn.execute("SELECT count(*) FROM changes").fetchone()[0] == 0
        assert kb.conn.execute("SELECT * FROM nodes_fts_config").fetchall() == config  # no bulk hashsize
    assert not os.path.exists(path + "-journal")


_SYNTH_WRITER = textwrap.dedent("""
    import sys
    from conceptwalk.kb import synthetic
    from conceptwalk.kb.store import KnowledgeBase
    syn = synthetic.generate(int(sys.argv[2]), seed=0)
    kb = KnowledgeBase.open(sys.argv[1])
    orig = kb.put_edges
    def put_edges(params, **kw):
        print("writing", flush=True)
        orig(params, **kw)
    kb.put_edges = put_edges
    syn.write_to(kb, chunk=2000)
    print("committed", flush=True)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
@pytest.mark.parametrize("delay", [0.0, 0.15, 0.6])
def test_sigkill_during_a_bulk_load_leaves_the_empty_store(tmp_path, delay):
    path = str(tmp_path / "kb.sqlite")
    _create(path).close()
    proc = subprocess.Popen(
        [sys.executable, "-c", _SYNTH_WRITER, path, "3000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "writing", proc.stderr.read() if proc.stderr else ""
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    committed = "committed" in out
    with KnowledgeBase.open(path) as kb:
        assert kb.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert is_wal(kb)
        n = kb.stats()["nodes"]
        if committed:
            assert n > 0
        if n == 0:  # rolled back whole, triggers and index included
            with _create(tmp_path / "ref.sqlite") as ref:
                assert kb.conn.execute(SCHEMA_SQL).fetchall() == ref.conn.execute(SCHEMA_SQL).fetchall()
            assert kb.stats()["edges"] == 0
            synthetic.generate(50, seed=1).write_to(kb)
            assert kb.graph().num_nodes == kb.stats()["nodes"] > 0
        else:  # committed whole
            syn = synthetic.generate(3000, seed=0)
            assert (n, kb.stats()["edges"]) == (syn.num_nodes, syn.num_edges)
    assert not os.path.exists(path + "-journal")


def test_put_edges_codes_are_checked(tmp_path):
    with KnowledgeBase.open(":memory:") as kb, kb.transaction():
        with pytest.raises(InputError, match="cannot be coded"):
            kb.put_edges([("a", "b", 0, None, None, None, None, None, 31)], codes={"src": ["a"]})
        with pytest.raises(InputError, match="strings or None"):
            kb.put_edges([("a", "b", 0, None, None, None, None, None, 31)], codes={"type": [1]})
        with pytest.raises(InputError, match="1 to 64 values"):
            kb.put_nodes([("a", 0, None, None, None, None, 31)], codes={"type": []})
    assert sqlite3.sqlite_version


def test_an_open_during_a_rollback_journal_bulk_load_waits_for_it(tmp_path):
    """Another process's open while a bulk load holds the new store file in rollback-journal
    mode waits for the load (SQLite's busy handler does not run for the switch to WAL, which
    failed at once with 'database is locked'), then sees every row."""
    path = str(tmp_path / "kb.sqlite")
    KnowledgeBase.create(path).close()
    code = textwrap.dedent("""
        import sys, time
        from conceptwalk.kb.store import KnowledgeBase
        kb = KnowledgeBase.open(sys.argv[1])
        with kb.bulk():
            kb.add_nodes([{"id": f"n{i}", "title": "walk"} for i in range(300)])
            print(kb.conn.execute("PRAGMA journal_mode").fetchone()[0], flush=True)
            time.sleep(1.0)
        kb.close()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code, path], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "delete"
        with KnowledgeBase.open(path) as kb:
            assert kb.stats()["nodes"] == 300 and is_wal(kb)
    finally:
        assert proc.wait(timeout=60) == 0


def test_an_open_from_the_thread_bulk_loading_the_file_fails_at_once(tmp_path):
    """The load holds the file locked (rollback journal): an open from its own thread would wait
    the busy timeout for itself; it is refused at once. Another thread waits for the load."""
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        with kb.bulk():
            kb.add_nodes([{"id": "a"}])
            assert kb.conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
            t = time.perf_counter()
            with pytest.raises(ConceptwalkError, match="this thread is bulk-loading it"):
                KnowledgeBase.open(path)
            with pytest.raises(ConceptwalkError, match="this thread is bulk-loading it"):
                KnowledgeBase.open_read_only(path)
            assert time.perf_counter() - t < 5
        with KnowledgeBase.open(path) as again:  # after the load
            assert again.stats()["nodes"] == 1
