"""Fuzz the store's open path: arbitrary bytes, and real stores mutated, written as a database
file, then opened and read the way the commands read a store.

The file is one of:

- the fuzzer's raw bytes (mostly "file is not a database", or SQLite images of other programs
  when the corpus holds them);
- a real conceptwalk store (built once per process: nodes with scopes, annotated edges, aliases,
  embeddings, the FTS index) with byte patches, or truncated;
- a real store with one stored cell replaced by a value of another type or shape (what a
  hand-edit or another program's write leaves: a number where a string belongs, a blob, a
  scopes text that is not JSON, a deleted meta row, a dropped table).

Only :class:`conceptwalk.ConceptwalkError` (``InputError`` and ``NotFoundError`` are ones) may
escape -- never a bare ``sqlite3`` error, a ``TypeError``, a ``JSONDecodeError``, a crash or a
hang. A file that ``KnowledgeBase.open`` refuses must be left byte-identical.

Run: ``python fuzz/fuzz_store_open.py fuzz/corpus/fuzz_store_open -max_total_time=60``
Replay: ``python fuzz/fuzz_store_open.py --replay fuzz/corpus/fuzz_store_open``
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import instrumented, run  # noqa: E402

with instrumented():
    from conceptwalk import Caller
    from conceptwalk.errors import ConceptwalkError
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.wrap import probe

_TMP = tempfile.mkdtemp(prefix="cw-fuzz-store-")
_TEMPLATE: dict[str, bytes] = {}

#: Cells a hand-edit may change: (table, column, row filter).
CELLS = [
    ("nodes", "id", "id = 'c1'"),
    ("nodes", "type", "id = 'c1'"),
    ("nodes", "title", "id = 'c2'"),
    ("nodes", "body", "id = 'c2'"),
    ("nodes", "scopes", "id = 'c3'"),
    ("nodes", "lifecycle", "id = 'c1'"),
    ("nodes", "rid", "id = 'c4'"),
    ("edges", "src", "rowid = 1"),
    ("edges", "dst", "rowid = 2"),
    ("edges", "type", "rowid = 1"),
    ("edges", "authority", "rowid = 1"),
    ("edges", "fidelity", "rowid = 2"),
    ("edges", "extraction_method", "rowid = 1"),
    ("edges", "extraction_confidence", "rowid = 1"),
    ("edges", "lifecycle", "rowid = 3"),
    ("aliases", "alias", "alias = 'one'"),
    ("aliases", "canonical", "alias = 'one'"),
    ("embeddings", "dim", "node_id = 'c1'"),
    ("embeddings", "vector", "node_id = 'c1'"),
    ("embeddings", "model", "node_id = 'c2'"),
    ("meta", "value", "key = 'version'"),
    ("meta", "value", "key = 'schema_version'"),
]
STATEMENTS = [
    "DELETE FROM meta WHERE key = 'version'",
    "DELETE FROM meta WHERE key = 'schema_version'",
    "DROP TABLE aliases",
    "DROP TABLE nodes_fts",
    "DROP TRIGGER nodes_fts_ai",
    "PRAGMA user_version = 0",
    "PRAGMA user_version = 7",
    "PRAGMA user_version = -1",
    "DELETE FROM nodes WHERE id = 'c1'",
    "INSERT INTO edges(src, dst, type) VALUES ('c1', 'ghost', 'LINK')",
    "INSERT INTO nodes_fts(nodes_fts) VALUES ('delete-all')",
    "ALTER TABLE edges DROP COLUMN lifecycle",
    "UPDATE nodes SET scopes = '[1, 2]'",
    "UPDATE nodes SET scopes = '\"a\"'",
    "UPDATE edges SET extraction_confidence = 7",
    "UPDATE edges SET authority = x'00'",
]


def template(page_size: int) -> bytes:
    """A small real store as one file (WAL checkpointed), built once per page size."""
    key = str(page_size)
    if key not in _TEMPLATE:
        path = os.path.join(_TMP, f"template-{page_size}.db")
        c = sqlite3.connect(path)
        c.execute(f"PRAGMA page_size = {page_size}")
        c.execute("CREATE TABLE t(x)")
        c.execute("DROP TABLE t")  # an empty database with this page size
        c.commit()
        c.close()
        with KnowledgeBase.open(path) as kb:
            kb.add_nodes(
                [
                    {
                        "id": f"c{i}",
                        "type": "CONCEPT" if i % 2 else "DOC",
                        "title": f"concept {i}",
                        "body": "words " * (i + 1),
                        "scopes": ["t1"] if i % 3 == 0 else None,
                        "lifecycle": "active",
                    }
                    for i in range(8)
                ]
            )
            kb.add_edges(
                [
                    {
                        "src": f"c{i}",
                        "dst": f"c{(i + 3) % 8}",
                        "type": "RELATED_TO" if i % 2 else "IMPLEMENTED_BY",
                        "authority": "CANONICAL",
                        "fidelity": 0.5 if i % 2 else "high",
                        "extraction_method": "TAGGED_CONCEPT",
                        "extraction_confidence": 0.8,
                        "lifecycle": "active",
                    }
                    for i in range(8)
                ]
            )
            kb.add_aliases([("one", "c1"), ("uno", "c1"), ("two", "c2")])
            kb.set_embeddings("m", ["c1", "c2"], [[1.0, 0.0], [0.0, 1.0]])
            if page_size != 1024:  # a store with the optional FTS5 index (as every older store)
                kb.enable_fts()
        with open(path, "rb") as fh:
            _TEMPLATE[key] = fh.read()
    return _TEMPLATE[key]


def value(fdp):
    kind = fdp.ConsumeIntInRange(0, 7)
    if kind == 0:
        return None
    if kind == 1:
        return fdp.ConsumeIntInRange(-(2**63), 2**63 - 1)
    if kind == 2:
        return fdp.ConsumeFloat()
    if kind == 3:
        return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 12))
    if kind == 4:
        return ["[", "{", '["a", 1]', "[]", '"x"', "null", "1e999", "\x00true", "\x00[1]"][fdp.ConsumeIntInRange(0, 8)]
    return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 12))


def build_file(path: str, fdp) -> None:
    mode = fdp.ConsumeIntInRange(0, 3)
    if mode == 0:
        data = fdp.ConsumeBytes(fdp.remaining_bytes())
    else:
        base = bytearray(template([512, 1024, 4096][fdp.ConsumeIntInRange(0, 2)]))
        if mode == 1:  # byte patches
            for _ in range(fdp.ConsumeIntInRange(0, 64)):
                if fdp.remaining_bytes() < 3:
                    break
                base[fdp.ConsumeIntInRange(0, len(base) - 1)] = fdp.ConsumeIntInRange(0, 255)
            data = bytes(base)
        elif mode == 2:  # truncated, or with bytes appended
            cut = fdp.ConsumeIntInRange(0, len(base))
            data = bytes(base[:cut]) + fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
        else:
            data = bytes(base)
    with open(path, "wb") as fh:
        fh.write(data)
    if mode == 3:  # edited cells and statements, through another program's connection
        c = sqlite3.connect(path, isolation_level=None)
        try:
            for _ in range(fdp.ConsumeIntInRange(1, 3)):
                if fdp.ConsumeBool():
                    table, col, where = CELLS[fdp.ConsumeIntInRange(0, len(CELLS) - 1)]
                    c.execute(f"UPDATE {table} SET {col} = ? WHERE {where}", (value(fdp),))
                else:
                    c.execute(STATEMENTS[fdp.ConsumeIntInRange(0, len(STATEMENTS) - 1)])
        except sqlite3.Error:
            pass  # the edit itself was refused (a constraint): the file is as far as it got
        finally:
            c.close()


def use(kb: KnowledgeBase, fdp) -> None:
    kb.stats()
    kb.version
    kb.aliases()
    kb.annotation_presence()
    kb.edge_presence()
    kb.nodes(["c1", "c2", "zz"])
    kb.node("c3")
    kb.search(["concept", "words c1", "AND OR -"][fdp.ConsumeIntInRange(0, 2)])
    kb.get_embeddings("m")
    g = kb.graph(annotations=fdp.ConsumeBool())
    if g.num_nodes:
        probe(kb, caller=[Caller.all_access(), Caller.public(), Caller.with_scopes("t1")][fdp.ConsumeIntInRange(0, 2)])
    if fdp.ConsumeBool():
        kb.add_edges([{"src": "c1", "dst": "new", "fidelity": 0.25}])
        kb.graph()
    if fdp.ConsumeBool():
        kb.fts_search("concept words")  # builds the FTS5 index where the store has none


def target(data: bytes) -> None:
    import atheris  # noqa: F401  (only for FuzzedDataProvider; replay imports it too)

    fdp = atheris.FuzzedDataProvider(data)
    path = os.path.join(_TMP, "kb.db")
    for ext in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + ext):
            os.unlink(path + ext)
    build_file(path, fdp)
    with open(path, "rb") as fh:
        before = fh.read()
    try:
        kb = KnowledgeBase.open(path, create=False)
    except ConceptwalkError:
        with open(path, "rb") as fh:
            assert fh.read() == before, "a refused file was modified"
        return
    try:
        use(kb, fdp)
    except ConceptwalkError:
        pass
    finally:
        kb.close()


if __name__ == "__main__":
    run(target)
