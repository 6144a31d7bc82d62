"""The input and the table dump of ``tests/test_bulk_golden.py``: a few hundred rows with every
column kind, and every table of a store (row values with their SQLite types, the FTS5 shadow
tables byte for byte, the change log, the tallies, meta) as one digest per table.

Run as a script to (re)write ``tests/data/bulk_golden.json`` from the code as it is::

    python tests/bulk_golden.py

The file committed was written by the code *before* the bulk-load speed work (issue 31 item 5),
so the test pins that a bulk load still stores exactly what that code stored.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "data" / "bulk_golden.json"

#: Tables dumped, each with the order its rows are read in (rowids included where the table has
#: them, so a changed insertion order shows).
TABLES = {
    "meta": "SELECT key, value, typeof(value) FROM meta WHERE key != 'uuid' ORDER BY key",
    "nodes": "SELECT rid, id, type, typeof(type), title, body, scopes, lifecycle FROM nodes ORDER BY rid",
    "edges": "SELECT rowid, src, dst, type, authority, typeof(authority), fidelity, typeof(fidelity), "
    "extraction_method, typeof(extraction_method), extraction_confidence, typeof(extraction_confidence), "
    "lifecycle, typeof(lifecycle) FROM edges ORDER BY rowid",
    "aliases": "SELECT alias, canonical FROM aliases ORDER BY alias, canonical",
    "tallies": "SELECT name, n FROM tallies ORDER BY name",
    "changes": "SELECT seq, kind, a, b, c FROM changes ORDER BY seq",
    "change_nonces": "SELECT seq, length(nonce) FROM change_nonces ORDER BY seq",
    "sqlite_sequence": "SELECT name, seq FROM sqlite_sequence ORDER BY name",
    "nodes_fts_data": "SELECT id, block FROM nodes_fts_data ORDER BY id",
    "nodes_fts_idx": "SELECT segid, term, pgno FROM nodes_fts_idx ORDER BY segid, term",
    "nodes_fts_docsize": "SELECT id, sz FROM nodes_fts_docsize ORDER BY id",
    "nodes_fts_config": "SELECT k, v FROM nodes_fts_config ORDER BY k",
    "schema": "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name",
    "page_size": "PRAGMA page_size",
}


def rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes, edges and aliases: titles and bodies (words that stem, non-ASCII, quotes, empty),
    types, scopes, lifecycle, every edge annotation (strings, numbers, booleans, None, absent),
    repeated ids and keys (a later row updates the given keys), bare endpoints."""
    rng = random.Random(31)
    words = ["graph", "walks", "walking", "memory", "retry", "storms", "cache", "bridge", "ünïcode", "it's", "ADR"]
    nodes: list[dict[str, Any]] = []
    for i in range(240):
        r: dict[str, Any] = {"id": f"n{i:03d}" if i % 17 else f"q'ü{i}"}
        if i % 5:
            r["type"] = rng.choice(["CONCEPT", "FILE", "PERSON", None])
        if i % 3:
            r["title"] = " ".join(rng.choice(words) for _ in range(rng.randrange(0, 5)))
        if i % 4:
            r["body"] = " ".join(rng.choice(words) for _ in range(rng.randrange(0, 30)))
        if i % 7:
            r["scopes"] = rng.choice([None, [], ["t1"], ["t2", "t1"], ["tenant-é"]])
        if i % 2:
            r["lifecycle"] = rng.choice(["active", "deprecated", None])
        nodes.append(r)
    for i in range(0, 240, 11):  # repeated ids: the given keys change, the others stay
        nodes.append({"id": nodes[i]["id"], "title": f"renamed {i} memory", "lifecycle": None})
    ids = [n["id"] for n in nodes[:240]] + [f"bare{i}" for i in range(25)]
    values = [None, "CURATED", "it's", "a\x00b", "é", 0.75, 1, True, False, -3]
    edges: list[dict[str, Any]] = []
    for i in range(420):
        e: dict[str, Any] = {"src": rng.choice(ids), "dst": rng.choice(ids)}
        if i % 3:
            e["type"] = rng.choice(["LINK", "CITES", "IS_A", "PART_OF"])
        for k in ("authority", "fidelity", "extraction_method", "lifecycle"):
            if rng.random() < 0.6:
                e[k] = rng.choice(values)
        if rng.random() < 0.6:
            e["extraction_confidence"] = rng.choice([None, 0.0, 0.5, 1.0, 1, 0.125])
        edges.append(e)
    for i in range(0, 420, 13):  # repeated keys: the given annotations change
        e = {k: edges[i][k] for k in ("src", "dst", "type") if k in edges[i]}
        e["authority"] = "UPDATED"
        edges.append(e)
    aliases = [{"alias": f"alias {i % 30}", "canonical": ids[(i * 7) % 240]} for i in range(60)]
    return nodes, edges, aliases


def write_jsonl(path: Path) -> None:
    """The rows as one JSONL file: nodes and edges interleaved, aliases last."""
    nodes, edges, aliases = rows()
    out: list[dict[str, Any]] = []
    for i in range(max(len(nodes), len(edges))):
        if i < len(nodes):
            out.append(nodes[i])
        if i < len(edges):
            out.append(edges[i])
    out += aliases
    with open(path, "w", encoding="utf-8") as fh:
        for r in out:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_obo(path: Path) -> None:
    """An OBO file of 200 terms: names, definitions, synonyms of each scope, is_a and
    part_of links (some to terms no stanza defines), obsolete terms, alt_ids."""
    rng = random.Random(35)
    words = ["cell", "neuron", "walks", "membrane", "ünï", "it's", "system"]
    lines = ["format-version: 1.2", "ontology: golden", ""]
    for i in range(200):
        lines += ["[Term]", f"id: G:{i:07d}", f"name: {' '.join(rng.choice(words) for _ in range(3))} {i}"]
        if i % 3:
            lines.append(f'def: "{" ".join(rng.choice(words) for _ in range(12))}." [PMID:{i}]')
        for scope in ("EXACT", "RELATED", "BROAD", "NARROW")[: i % 5]:
            lines.append(f'synonym: "{rng.choice(words)} {i} {scope.lower()}" {scope} []')
        for j in sorted({rng.randrange(i) for _ in range(3)} if i else set()):
            lines.append(f"is_a: G:{j:07d}")
        if i % 4 == 1:
            lines.append(f"relationship: part_of G:{rng.randrange(300):07d}")
        if i % 23 == 7:
            lines.append("is_obsolete: true")
        if i % 19 == 3:
            lines.append(f"alt_id: G:9{i:06d}")
        lines.append("")
    lines += ["[Typedef]", "id: part_of", "name: part of", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def dump(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Per table: its row count and the SHA-256 of its rows' ``repr``."""
    out = {}
    fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'nodes_fts'").fetchone() is not None
    for name, sql in TABLES.items():
        if name.startswith("nodes_fts") and not fts:
            continue
        got = conn.execute(sql).fetchall()
        out[name] = {"rows": len(got), "sha256": hashlib.sha256(repr(got).encode()).hexdigest()}
    others = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
    ).fetchall()
    for (name,) in others:  # any other table (the attribute tables an import may create): all its rows
        if name not in TABLES and name not in ("nodes_fts_content",):
            got = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            out[name] = {"rows": len(got), "sha256": hashlib.sha256(repr(got).encode()).hexdigest()}
    return out


def loads(tmp: Path, fts: bool = True) -> dict[str, dict[str, dict[str, Any]]]:
    """Each bulk path of the same rows into a fresh store file, dumped. ``fts``: each store
    keeps the FTS5 index (``enable_fts`` before the load), as every store did when the golden
    file was written; without it the FTS5 tables are not dumped."""
    from conceptwalk.kb import KnowledgeBase, synthetic
    from conceptwalk.kb.importers import import_jsonl

    def new(path: Path) -> KnowledgeBase:
        kb = KnowledgeBase.create(path)
        if fts:
            kb.enable_fts()
        return kb

    nodes, edges, aliases = rows()
    out = {}
    with new(tmp / "bulk_api.sqlite") as kb:
        with kb.bulk():
            kb.add_nodes(nodes)
            kb.add_edges(edges)
            kb.add_aliases(aliases)
        out["bulk_api"] = dump(kb.conn)
    write_jsonl(tmp / "kb.jsonl")
    with new(tmp / "jsonl.sqlite") as kb:
        import_jsonl(kb, tmp / "kb.jsonl")
        out["jsonl"] = dump(kb.conn)
    write_obo(tmp / "golden.obo")
    with new(tmp / "obo.sqlite") as kb:
        kb.import_file(tmp / "golden.obo")
        out["obo"] = dump(kb.conn)
    with new(tmp / "synth.sqlite") as kb:
        syn = synthetic.generate(300, seed=5)
        syn.edge_annotations["authority"][0] = "it's"
        syn.write_to(kb, chunk=97)
        out["synth"] = dump(kb.conn)
    with new(tmp / "synth_chunk.sqlite") as kb:  # write_to's own chunk: one call per table
        syn = synthetic.generate(300, seed=5)
        syn.edge_annotations["authority"][0] = "it's"
        syn.write_to(kb)
        out["synth_default_chunk"] = dump(kb.conn)
    return out


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        got = loads(Path(d))
    GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
