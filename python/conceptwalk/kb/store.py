"""The embedded knowledge-base store: one SQLite file (WAL) holding nodes, annotated edges,
aliases, embeddings, the change log and, on demand, an FTS5 index; writes, transactions and bulk
loads.

What a read sees -- the store's committed state, its graph snapshot, text index and derived
arrays, and the snapshot file beside the store -- is built, loaded, saved and advanced by the
store's :class:`~conceptwalk.kb.state.StateKeeper` (``kb/state.py``), to which
:meth:`KnowledgeBase.state`, :meth:`~KnowledgeBase.graph`, :meth:`~KnowledgeBase.text_index`,
:meth:`~KnowledgeBase.derived_arrays` and :meth:`~KnowledgeBase.keep_derived_arrays` delegate;
while the store is unchanged a read costs one check of the version counters.

Schema (``PRAGMA user_version`` and ``meta.schema_version`` = :data:`SCHEMA_VERSION`)::

    meta(key TEXT PRIMARY KEY, value)             -- 'schema_version', 'version' (write counter)
    nodes(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type, title, body,
          scopes /* JSON list text */, lifecycle)
    edges(src, dst, type NOT NULL, authority, fidelity, extraction_method,
          extraction_confidence REAL, lifecycle, UNIQUE(src, dst, type))
    aliases(alias, canonical REFERENCES nodes(id), PRIMARY KEY(alias, canonical))
    vector_models(model PRIMARY KEY, dim, per_chunk, next_slot)
    vector_slots(model, node_id REFERENCES nodes(id), slot, PRIMARY KEY(model, node_id))
    vector_chunks(model, chunk, data BLOB /* per_chunk vectors, float32 LE */,
                  PRIMARY KEY(model, chunk))
    embeddings  -- schema 1's one-blob-per-vector table, emptied into the above on upgrade
    changes     -- the change log (see conceptwalk.kb.snapshot)
    nodes_fts  -- FTS5 external-content index over nodes(title, body), kept in sync by triggers;
                  only in a store that asked for it (KnowledgeBase.enable_fts; every store
                  written before 2026-12-07 has it)

``nodes.rid`` is an explicit ``INTEGER PRIMARY KEY`` so the FTS5 external-content rowids stay
stable across ``VACUUM``; ``id`` is the node's key everywhere else. A provenance value that is a
JSON number or boolean (``fidelity: 0.75``) is stored in its TEXT column as a NUL followed by its
JSON text -- the name the graph gives it -- so it reads back with its type.

:meth:`KnowledgeBase.open` only creates the schema in a new or empty file; any other file must
already be a conceptwalk store (checked through a read-only connection before anything is
written), so another program's database is refused unchanged -- except that a hot journal (a write
killed before it committed) is rolled back first, as any SQLite opener does.
"""

from __future__ import annotations

import difflib
import errno
import itertools
import json
import math
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from types import MethodType
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..graph import intern_strings
from ..errors import ConceptwalkError, InputError, NotFoundError, StoreNotFoundError, shown
from ..graph import DEFAULT_EDGE_TYPE, EDGE_ANNOTATION_KEYS, Caller, LinkGraph
from ..graph.linkgraph import JSON_VALUE_MARK, annotation_name
from ..graph.live import LiveGraph
from ..graph.names import LiveSearch, live_name_indexes, named_search, source_name_indexes
from ..graph.scopes import warn_unknown_scopes
from ..graph.text import TextIndex
from .snapshot import CHANGE_ALIAS, CHANGELOG_SCHEMA, CHANGE_RESET, CHANGE_VECTOR
from .state import StateKeeper, StoreDamaged, StoreState, meta_int, parse_scopes

__all__ = ["KnowledgeBase", "EmbeddingsRead", "SCHEMA_VERSION", "NODE_KEYS", "EDGE_KEYS", "ANNOTATION_AXES"]

#: Version of the on-disk schema written by this module. 2 added the change log (``changes``,
#: filled by triggers), ``meta.uuid`` and the ``edges(dst)`` index; a version-1 file is
#: upgraded in place when opened for writing. 3 added ``change_nonces`` (a random nonce per
#: change-log row, which a saved snapshot must match). 4 added ``tallies``: counts kept by
#: triggers in the transaction of every write (per annotation axis, the stored edges with a value;
#: the writes to ``aliases``), so a read after a write counts nothing again, and change-log rows
#: for stored vectors (kind 4) and alias writes (kind 5; a version-4 file without those triggers
#: gets them on its next writable open). 5 made the operator's FTS5 index (``nodes_fts``) optional
#: (:meth:`KnowledgeBase.enable_fts`): a store may lack it, which a version-4 reader took for a
#: file that is not a store; a version-4 file keeps its index.
SCHEMA_VERSION = 5
#: The schema versions whose saved snapshot files a store reads: 5 changed nothing a snapshot
#: holds, so a version-4 snapshot serves a version-5 store (after an upgrade) and a version-4
#: store opened read-only (which is never upgraded, nor saves one).
_SNAPSHOT_SCHEMAS = (4, 5)
#: Keys a node row may have.
NODE_KEYS: tuple[str, ...] = ("id", "type", "title", "body", "scopes", "lifecycle")
#: Keys an edge row may have.
EDGE_KEYS: tuple[str, ...] = ("src", "dst", "type") + tuple(EDGE_ANNOTATION_KEYS)
#: The edge annotation axes (nullable columns of ``edges``).
ANNOTATION_AXES: tuple[str, ...] = tuple(EDGE_ANNOTATION_KEYS)

#: The tallies (schema 4) and the triggers that keep them, in the transaction of each write:
#: ``edges.<axis>`` = the stored edges whose ``<axis>`` is not null; ``aliases`` = a count of the
#: alias rows written (inserted, deleted or changed), which only grows, so an unchanged count
#: means unchanged aliases; ``embeddings`` likewise for the rows of the three vector tables. A bulk load into an empty store drops the edge triggers with the
#: others and counts afresh at its end (:meth:`KnowledgeBase.bulk`). Created (and counted once)
#: by the upgrade of an older store, in the upgrade's one transaction.
_TALLY_EDGE_COUNTS = (
    " UNION ALL ".join(f"SELECT 'edges.{k}', count({k}) FROM edges" for k in ANNOTATION_AXES)
    + " UNION ALL SELECT 'edges.pending', 0"
)
#: The same counts in one pass over the table (a bulk load's end): SQLite (3.35+) materializes a
#: CTE read more than once, so the table is scanned once instead of five times.
_TALLY_EDGE_COUNTS_ONE_PASS = (
    "WITH c AS (SELECT "
    + ", ".join(f"count({k}) AS {k}" for k in ANNOTATION_AXES)
    + " FROM edges) "
    + " UNION ALL ".join(f"SELECT 'edges.{k}', {k} FROM c" for k in ANNOTATION_AXES)
    + " UNION ALL SELECT 'edges.pending', 0"
)
#: ``edges.pending``: the annotation bits (bit i = axis i has a value) of the row an INSERT is
#: about to replace, set by a BEFORE INSERT trigger and taken off by the AFTER INSERT one: an
#: ``INSERT OR REPLACE`` deletes the row it replaces without firing a delete trigger (unless the
#: writing connection turned recursive triggers on, when the delete trigger takes it off instead).
_PENDING = "(SELECT n FROM tallies WHERE name = 'edges.pending')"
_BITS = " | ".join(f"(({k} IS NOT NULL) << {i})" for i, k in enumerate(ANNOTATION_AXES))
_SAME_EDGE = "FROM edges WHERE src = new.src AND dst = new.dst AND type = new.type"


def _tally_statements(op: str) -> str:
    """The trigger body keeping the edge tallies for one written row (``op``: INSERT, DELETE or
    UPDATE): one primary-key UPDATE per axis whose nullness the write changed."""
    out = []
    for i, k in enumerate(ANNOTATION_AXES):
        if op == "INSERT":  # less the replaced row's value, if any
            was = f"(({_PENDING} >> {i}) & 1)"
            out.append(
                f"UPDATE tallies SET n = n + (new.{k} IS NOT NULL) - {was} "
                f"WHERE (new.{k} IS NOT NULL) != {was} AND name = 'edges.{k}';"
            )
        elif op == "DELETE":
            out.append(f"UPDATE tallies SET n = n - 1 WHERE old.{k} IS NOT NULL AND name = 'edges.{k}';")
        else:
            out.append(
                f"UPDATE tallies SET n = n + (new.{k} IS NOT NULL) - (old.{k} IS NOT NULL) "
                f"WHERE (new.{k} IS NULL) != (old.{k} IS NULL) AND name = 'edges.{k}';"
            )
    if op != "UPDATE":  # taken off (INSERT), or deleted by a REPLACE with recursive triggers on
        out.append("UPDATE tallies SET n = 0 WHERE name = 'edges.pending' AND n != 0;")
    return "\n    ".join(out)


_ANY_NEW = " OR ".join(f"new.{k} IS NOT NULL" for k in ANNOTATION_AXES)
_ANY_OLD = " OR ".join(f"old.{k} IS NOT NULL" for k in ANNOTATION_AXES)
_ANY_FLIP = " OR ".join(f"(new.{k} IS NULL) != (old.{k} IS NULL)" for k in ANNOTATION_AXES)

#: The change-log rows of a vector chunk written: one per node whose slot lies in the chunk, in
#: the write's transaction (so a reader knows exactly whose vector changed; the slots of new
#: ids are inserted before their chunk is written, a deleted node's slot row logs itself).
_CHUNK_NODES = (
    f"INSERT INTO changes(kind, a, b) SELECT {CHANGE_VECTOR}, s.node_id, s.model FROM vector_slots s "
    "JOIN vector_models m ON m.model = s.model WHERE s.model = {row}.model "
    "AND s.slot >= {row}.chunk * m.per_chunk AND s.slot < ({row}.chunk + 1) * m.per_chunk;"
)

#: ... and of a chunk rewritten in place (``UPDATE``, as :meth:`KnowledgeBase.set_embeddings`
#: does): only the nodes whose vector's bytes differ.
_SLOT_DIFFERS = (
    "substr(old.data, (s.slot - new.chunk * m.per_chunk) * m.dim * 4 + 1, m.dim * 4) IS NOT "
    "substr(new.data, (s.slot - new.chunk * m.per_chunk) * m.dim * 4 + 1, m.dim * 4);"
)

#: An alias write logs one change-log row (kind 5) per write transaction, not one per row (an
#: import of many aliases would write as many log rows): the first alias row a transaction
#: writes logs it and records the write counter the transaction bumped; the rest see it logged.
_ALIAS_UNLOGGED = (
    "(SELECT n FROM tallies WHERE name = 'aliases.logged') IS NOT (SELECT value FROM meta WHERE key = 'version')"
)

TALLIES_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS tallies(name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO tallies(name, n) {_TALLY_EDGE_COUNTS};
INSERT OR IGNORE INTO tallies(name, n) VALUES ('aliases', 0);
CREATE TRIGGER IF NOT EXISTS tallies_edges_bi BEFORE INSERT ON edges
    WHEN {_PENDING} != 0 OR EXISTS (SELECT 1 {_SAME_EDGE}) BEGIN
    UPDATE tallies SET n = coalesce((SELECT {_BITS} {_SAME_EDGE}), 0) WHERE name = 'edges.pending';
END;
CREATE TRIGGER IF NOT EXISTS tallies_edges_ai AFTER INSERT ON edges WHEN {_ANY_NEW} OR {_PENDING} != 0 BEGIN
    {_tally_statements("INSERT")}
END;
CREATE TRIGGER IF NOT EXISTS tallies_edges_ad AFTER DELETE ON edges WHEN {_ANY_OLD} BEGIN
    {_tally_statements("DELETE")}
END;
CREATE TRIGGER IF NOT EXISTS tallies_edges_au AFTER UPDATE ON edges WHEN {_ANY_FLIP} BEGIN
    {_tally_statements("UPDATE")}
END;
CREATE TRIGGER IF NOT EXISTS tallies_aliases_ai AFTER INSERT ON aliases BEGIN
    UPDATE tallies SET n = n + 1 WHERE name = 'aliases';
END;
CREATE TRIGGER IF NOT EXISTS tallies_aliases_ad AFTER DELETE ON aliases BEGIN
    UPDATE tallies SET n = n + 1 WHERE name = 'aliases';
END;
CREATE TRIGGER IF NOT EXISTS tallies_aliases_au AFTER UPDATE ON aliases BEGIN
    UPDATE tallies SET n = n + 1 WHERE name = 'aliases';
END;
INSERT OR IGNORE INTO tallies(name, n) VALUES ('aliases.logged', -1);
CREATE TRIGGER IF NOT EXISTS changes_aliases_ai AFTER INSERT ON aliases
    WHEN {_ALIAS_UNLOGGED} BEGIN
    INSERT INTO changes(kind) VALUES ({CHANGE_ALIAS});
    UPDATE tallies SET n = (SELECT value FROM meta WHERE key = 'version') WHERE name = 'aliases.logged';
END;
CREATE TRIGGER IF NOT EXISTS changes_aliases_ad AFTER DELETE ON aliases
    WHEN {_ALIAS_UNLOGGED} BEGIN
    INSERT INTO changes(kind) VALUES ({CHANGE_ALIAS});
    UPDATE tallies SET n = (SELECT value FROM meta WHERE key = 'version') WHERE name = 'aliases.logged';
END;
CREATE TRIGGER IF NOT EXISTS changes_aliases_au AFTER UPDATE ON aliases
    WHEN {_ALIAS_UNLOGGED} BEGIN
    INSERT INTO changes(kind) VALUES ({CHANGE_ALIAS});
    UPDATE tallies SET n = (SELECT value FROM meta WHERE key = 'version') WHERE name = 'aliases.logged';
END;
INSERT OR IGNORE INTO tallies(name, n) VALUES ('embeddings', 0);
CREATE INDEX IF NOT EXISTS vector_slots_slot ON vector_slots(model, slot);
CREATE TRIGGER IF NOT EXISTS changes_vector_slots_ai AFTER INSERT ON vector_slots BEGIN
    INSERT INTO changes(kind, a, b) VALUES ({CHANGE_VECTOR}, new.node_id, new.model);
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_slots_ad AFTER DELETE ON vector_slots BEGIN
    INSERT INTO changes(kind, a, b) VALUES ({CHANGE_VECTOR}, old.node_id, old.model);
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_slots_au AFTER UPDATE ON vector_slots BEGIN
    INSERT INTO changes(kind, a, b) VALUES ({CHANGE_VECTOR}, old.node_id, old.model);
    INSERT INTO changes(kind, a, b) VALUES ({CHANGE_VECTOR}, new.node_id, new.model);
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_chunks_ai AFTER INSERT ON vector_chunks BEGIN
    {_CHUNK_NODES.format(row="new")}
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_chunks_au AFTER UPDATE ON vector_chunks
    WHEN old.model IS new.model AND old.chunk IS new.chunk BEGIN
    {_CHUNK_NODES.format(row="new")[:-1]} AND {_SLOT_DIFFERS}
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_chunks_am AFTER UPDATE ON vector_chunks
    WHEN old.model IS NOT new.model OR old.chunk IS NOT new.chunk BEGIN
    {_CHUNK_NODES.format(row="old")}
    {_CHUNK_NODES.format(row="new")}
END;
CREATE TRIGGER IF NOT EXISTS changes_vector_chunks_ad AFTER DELETE ON vector_chunks BEGIN
    {_CHUNK_NODES.format(row="old")}
END;
""" + "".join(
    f"""CREATE TRIGGER IF NOT EXISTS tallies_{t}_{op[0].lower()} AFTER {op} ON {t} BEGIN
    UPDATE tallies SET n = n + 1 WHERE name = 'embeddings';
END;
"""
    for t in ("vector_models", "vector_slots", "vector_chunks")
    for op in ("INSERT", "DELETE", "UPDATE")
)

_CHUNK = 4096


class EmbeddingsRead(NamedTuple):
    """Stored vectors and when they were read (:meth:`KnowledgeBase.read_embeddings`).

    Attributes
    ----------
    ids : list of str
        The nodes, one per row of ``matrix``.
    matrix : numpy.ndarray of float32, shape (len(ids), dim)
        The vectors (shape ``(0, 0)`` when there is none).
    graph_version : int or None
        The committed change-log position read in the same transaction; None inside the store
        object's own write transaction and in a file without a change log.
    history : int
        The :attr:`StoreState.history <conceptwalk.kb.state.StoreState.history>` that position
        is of.
    """

    ids: list[str]
    matrix: npt.NDArray[np.float32]
    graph_version: int | None
    history: int


_IN_BATCH = 500  # ids per "IN (...)" lookup, well under SQLite's variable limit
#: A stored embedding model holding more floats than this is taken as damaged (32 GiB of float32).
_MAX_STORED_FLOATS = 1 << 33
_NODE_OPTIONAL = NODE_KEYS[1:]
_EDGE_OPTIONAL = ("type",) + ANNOTATION_AXES
_FTS_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_FTS_MAX_TOKENS = 64
#: FTS5's pending-terms buffer: its default, and the size a bulk load's rebuild uses.
_FTS_HASH = 1 << 20
_BULK_FTS_HASH = 16 << 20
#: A bulk load ends with the full-text index merged into one segment (FTS5's 'optimize') when
#: it leaves more than one segment of at least this many leaf pages (4 KiB each) that is at
#: least :data:`_FTS_MERGE_SHARE` of the largest (see :func:`_merge_fts_segments`).
_FTS_MERGE_PAGES = 256
_FTS_MERGE_SHARE = 1 / 8
#: FTS5's 'crisismerge' for the store's full-text index: the segments one level may hold before a
#: write merges that whole level at once (FTS5's default is 16). Merging one level holding the
#: index's largest segment inside a one-row write took 0.95 s on a 500k-node store; with 64 the
#: largest segment is rewritten by FTS5's bounded incremental merges instead (the slowest of
#: 20,000 one-row writes after ``conceptwalk synth --concepts 200000``: 954.6 ms -> 61.0 ms,
#: ``benchmarks/bench_bulk_load.py --writes-after``; docs/storage.md). The store sets it once,
#: where the index has no value of its own (see :data:`_FTS_CONFIG`).
_FTS_CRISIS_MERGE = 64
#: Sets :data:`_FTS_CRISIS_MERGE` where the index has no 'crisismerge' of its own (an operator's
#: own value is kept); part of the schema script, run for a new store and once for an older one.
_FTS_CONFIG = f"""
INSERT INTO nodes_fts(nodes_fts, rank) SELECT 'crisismerge', {_FTS_CRISIS_MERGE}
    WHERE NOT EXISTS (SELECT 1 FROM nodes_fts_config WHERE lower(k) = 'crisismerge');
"""

#: The operator's full-text index (:meth:`KnowledgeBase.fts_search`), made on demand
#: (:meth:`KnowledgeBase.enable_fts`): the table, then its triggers, which keep it in step with
#: every later write to ``nodes`` (in any process: they live in the file). A store made before
#: the index became optional has both.
_FTS_TABLE = """
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    title, body, content='nodes', content_rowid='rid',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""
_FTS_TRIGGERS = {
    "nodes_fts_ai": """CREATE TRIGGER IF NOT EXISTS nodes_fts_ai AFTER INSERT ON nodes BEGIN
    INSERT INTO nodes_fts(rowid, title, body) VALUES (new.rid, new.title, new.body);
END""",
    "nodes_fts_ad": """CREATE TRIGGER IF NOT EXISTS nodes_fts_ad AFTER DELETE ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, title, body) VALUES ('delete', old.rid, old.title, old.body);
END""",
    "nodes_fts_au": """CREATE TRIGGER IF NOT EXISTS nodes_fts_au AFTER UPDATE OF title, body ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, title, body) VALUES ('delete', old.rid, old.title, old.body);
    INSERT INTO nodes_fts(rowid, title, body) VALUES (new.rid, new.title, new.body);
END""",
}


def _fts_triggers(conn: sqlite3.Connection) -> set[str]:
    """The full-text index's triggers the store holds."""
    rows = conn.execute(
        f"SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN ({','.join('?' * len(_FTS_TRIGGERS))})",
        tuple(_FTS_TRIGGERS),
    )
    return {r[0] for r in rows}


def _wal_mode(conn: sqlite3.Connection, wait: float = 30.0) -> Any:
    """``PRAGMA journal_mode = WAL``, waiting up to ``wait`` seconds for a lock as the busy
    timeout waits for others: SQLite's busy handler does not run for this pragma, which fails
    at once with 'database is locked' while another process's bulk load holds the file in
    rollback-journal mode (:meth:`KnowledgeBase.bulk`); the load switches it back to WAL when
    it ends."""
    deadline = time.monotonic() + wait
    try:
        while True:
            # each try's own lock waits at most what is left (the busy timeout would give it 30 s)
            left = max(1, int((deadline - time.monotonic()) * 1000))
            conn.execute(f"PRAGMA busy_timeout = {left}")
            try:
                return conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)
    finally:
        conn.execute("PRAGMA busy_timeout = 30000")


#: The store files this process is bulk-loading in rollback-journal mode (their real paths), and
#: the thread loading each: an open of one from that thread would wait for a lock it holds itself.
_BULK_FILES: dict[str, int] = {}
_BULK_FILES_LOCK = threading.Lock()


def _refuse_own_bulk(p: str) -> None:
    """Refuse to open a store file this thread is bulk-loading in rollback-journal mode: the open
    would wait for the lock the thread holds (for the busy timeout, then fail)."""
    if _BULK_FILES.get(os.path.realpath(p)) == threading.get_ident():
        raise ConceptwalkError(
            f"cannot open {p!r}: this thread is bulk-loading it (KnowledgeBase.bulk), which "
            f"holds it locked; open it after the load, or use the loading store"
        )


def _lacks_fts_config(conn: sqlite3.Connection) -> bool:
    """A store with the full-text index but without the store's 'crisismerge' setting (written
    before :data:`_FTS_CRISIS_MERGE`)."""
    return (
        _has_fts(conn)
        and conn.execute("SELECT 1 FROM nodes_fts_config WHERE lower(k) = 'crisismerge'").fetchone() is None
    )


def _has_fts(conn: sqlite3.Connection) -> bool:
    """Whether the store holds the full-text index's table (:meth:`KnowledgeBase.enable_fts`
    makes its triggers with it; a hand edit may have dropped one: :func:`_fts_triggers`)."""
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts'").fetchone() is not None
    )


_SCHEMA = (
    f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', {SCHEMA_VERSION}), ('version', 0);
CREATE TABLE IF NOT EXISTS nodes(
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    type TEXT,
    title TEXT,
    body TEXT,
    scopes TEXT,
    lifecycle TEXT
);
CREATE TABLE IF NOT EXISTS edges(
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL,
    authority TEXT,
    fidelity TEXT,
    extraction_method TEXT,
    extraction_confidence REAL,
    lifecycle TEXT,
    UNIQUE(src, dst, type)
);
CREATE TABLE IF NOT EXISTS aliases(
    alias TEXT NOT NULL,
    canonical TEXT NOT NULL REFERENCES nodes(id),
    PRIMARY KEY(alias, canonical)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embeddings(
    node_id TEXT NOT NULL REFERENCES nodes(id),
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY(node_id, model)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embeddings_model ON embeddings(model, node_id);
CREATE TABLE IF NOT EXISTS vector_models(
    model TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    per_chunk INTEGER NOT NULL,
    next_slot INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS vector_slots(
    model TEXT NOT NULL,
    node_id TEXT NOT NULL REFERENCES nodes(id),
    slot INTEGER NOT NULL,
    PRIMARY KEY(model, node_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vector_slots_node ON vector_slots(node_id);
CREATE TABLE IF NOT EXISTS vector_chunks(
    model TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY(model, chunk)
);
-- Schema 1 -> 2: each stored vector becomes a one-vector chunk (per_chunk = 1) of its model
-- (a later set_embeddings(..., replace=True) packs the model densely); idempotent.
INSERT OR IGNORE INTO vector_models(model, dim, per_chunk, next_slot)
    SELECT model, max(dim), 1, 0 FROM embeddings GROUP BY model;
INSERT OR IGNORE INTO vector_slots(model, node_id, slot)
    SELECT e.model, e.node_id, m.next_slot + row_number() OVER (PARTITION BY e.model ORDER BY e.node_id) - 1
    FROM embeddings e JOIN vector_models m ON m.model = e.model;
INSERT OR REPLACE INTO vector_chunks(model, chunk, data)
    SELECT e.model, s.slot, e.vector FROM embeddings e
    JOIN vector_slots s ON s.model = e.model AND s.node_id = e.node_id;
UPDATE vector_models SET next_slot = (SELECT coalesce(max(slot), -1) + 1 FROM vector_slots s
                                      WHERE s.model = vector_models.model);
DELETE FROM embeddings;
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst);
UPDATE meta SET value = {SCHEMA_VERSION} WHERE key = 'schema_version';
INSERT OR IGNORE INTO meta(key, value) VALUES ('uuid', lower(hex(randomblob(16))));
"""
    + CHANGELOG_SCHEMA
    + TALLIES_SCHEMA
)

# Upserts: bit i of the last parameter says whether optional key i was given. A given key
# (even None) overwrites the stored value; an absent key keeps it.
#
# A NULL value may be bound as None or as a sentinel that binds faster: 0 (an int) for the
# nullable text columns, -1 for extraction_confidence (``nullif`` turns either back into NULL;
# a validated value is never one: text columns hold strings, a confidence is a float in
# [0, 1]). Python's sqlite3 binds None through its adapter lookup (two failed attribute lookups
# per value), an int directly: at five NULL annotations per edge that is most of an edge's
# binding time. node_tuple and edge_tuple return the sentinels.
#: A NULL text value as put_nodes / put_edges take it (binds faster than None).
NULL_TEXT = 0
#: A NULL extraction_confidence as put_edges takes it.
NULL_CONFIDENCE = -1
_Coded = tuple[tuple[int, tuple[str | None, ...]], ...]


def _values(table: str, coded: _Coded = (), base: int = 0) -> list[str]:
    """The upsert's value expressions for one row whose parameters are ``?base+1`` on (7 per
    node row, 9 per edge row, the last being the given-keys mask): a nullable text column as
    ``nullif(?i, 0)``, the confidence as ``nullif(?i, -1)``, a coded parameter as a CASE over
    its values (see :func:`_coded_upsert`)."""
    if table == "nodes":
        parts = [f"?{base + 1}"] + [f"nullif(?{base + i}, {NULL_TEXT})" for i in range(2, 7)]
    else:
        parts = [f"?{base + 1}", f"?{base + 2}", f"?{base + 3}"] + [
            f"nullif(?{base + i}, {NULL_CONFIDENCE if i == 7 else NULL_TEXT})" for i in range(4, 9)
        ]
    for pos, vals in coded:
        whens = " ".join(f"WHEN {i} THEN {_sql_text(v)}" for i, v in enumerate(vals))
        parts[pos - 1] = f"CASE ?{base + pos} {whens} END"
    return parts


_NODE_COLUMNS = "id, type, title, body, scopes, lifecycle"
_EDGE_COLUMNS = "src, dst, type, authority, fidelity, extraction_method, extraction_confidence, lifecycle"


def _upsert(table: str, values: Sequence[str]) -> str:
    if table == "nodes":
        cols, key, optional, mask = _NODE_COLUMNS, "id", _NODE_OPTIONAL, 7
    else:
        cols, key, optional, mask = _EDGE_COLUMNS, "src, dst, type", ANNOTATION_AXES, 9
    return f"INSERT INTO {table}({cols}) VALUES ({', '.join(values)}) ON CONFLICT({key}) DO UPDATE SET " + ", ".join(
        f"{k} = CASE WHEN ?{mask} & {1 << i} THEN excluded.{k} ELSE {k} END" for i, k in enumerate(optional)
    )


_NODE_UPSERT = _upsert("nodes", _values("nodes"))
_EDGE_UPSERT = _upsert("edges", _values("edges"))


#: Upsert parameters that may be given as integer codes (put_nodes / put_edges ``codes=``):
#: key -> position of the parameter (1-based, as in the statements above).
_NODE_CODED = {"type": 2, "scopes": 5, "lifecycle": 6}
_EDGE_CODED = {"type": 3, "authority": 4, "fidelity": 5, "extraction_method": 6, "lifecycle": 8}
#: The most values one coded parameter may stand for (a longer CASE costs more than a string).
_MAX_CODES = 64


def _sql_text(v: Any) -> str:
    """``v`` (a string or None) as an SQL literal: quoted text, or a hex blob cast to text when
    it holds a NUL (which SQL text cannot)."""
    if v is None:
        return "NULL"
    if not isinstance(v, str):
        raise InputError(f"coded values must be strings or None, got {type(v).__name__} {shown(v)}")
    if "\x00" in v:
        return f"CAST(X'{v.encode('utf-8').hex()}' AS TEXT)"
    return "'" + v.replace("'", "''") + "'"


def _coded_key(
    codes: Mapping[str, Sequence[str | None]], allowed: Mapping[str, int]
) -> tuple[tuple[int, tuple[str | None, ...]], ...]:
    out = []
    for key, values in codes.items():
        if key not in allowed:
            raise InputError(f"codes: {key!r} cannot be coded (only {', '.join(allowed)})")
        vals = tuple(values)
        if not 0 < len(vals) <= _MAX_CODES:
            raise InputError(f"codes: {key!r} must stand for 1 to {_MAX_CODES} values, got {len(vals)}")
        out.append((allowed[key], vals))
    return tuple(sorted(out))


_CODED_SQL: dict[tuple[str, _Coded], str] = {}


def _coded_upsert(table: str, key: _Coded) -> str:
    """The node or edge upsert with the coded parameters replaced by a CASE over their values
    (the same stored values; each coded row binds an integer instead of a string)."""
    sql = _CODED_SQL.get((table, key))
    if sql is None:
        sql = _upsert(table, _values(table, key))
        if len(_CODED_SQL) > 256:
            _CODED_SQL.clear()
        _CODED_SQL[(table, key)] = sql
    return sql


#: Rows per multi-row INSERT of a bulk load into an empty store (at 9 parameters a row, under
#: the 999 bound parameters an old SQLite allows).
_MULTI_ROWS = 100
_MULTI_SQL: dict[tuple[str, _Coded], str] = {}


def _multi_insert(table: str, key: _Coded) -> str:
    """``INSERT ... VALUES (row 1), ..., (row _MULTI_ROWS) ON CONFLICT DO NOTHING`` with each
    row's value expressions as the upsert's (the same stored values): one statement per
    hundred rows saves most of the per-row cost of a statement. The rows' masks are bound but
    unused (the last one is referenced, so that the statement takes every parameter)."""
    sql = _MULTI_SQL.get((table, key))
    if sql is None:
        n = 7 if table == "nodes" else 9
        rows = [_values(table, key, j * n) for j in range(_MULTI_ROWS)]
        rows[0][0] = f"coalesce(?1, ?{n * _MULTI_ROWS})"  # ?1 (the id, the src) is never NULL
        cols = _NODE_COLUMNS if table == "nodes" else _EDGE_COLUMNS
        sql = (
            f"INSERT INTO {table}({cols}) VALUES "
            + ", ".join(f"({', '.join(r)})" for r in rows)
            + " ON CONFLICT DO NOTHING"
        )
        if len(_MULTI_SQL) > 64:
            _MULTI_SQL.clear()
        _MULTI_SQL[(table, key)] = sql
    return sql


class RowError(ValueError):
    """A malformed row; the caller adds where it came from (row number, file and line)."""


# ---------------------------------------------------------------------- row validation
def _opt_str(row: Mapping[str, Any], key: str) -> Any:
    v = row.get(key)
    if v is not None and not isinstance(v, str):
        raise RowError(f"{key!r} must be a string or null, got {type(v).__name__} {shown(v)}")
    return v


def _opt_axis(row: Mapping[str, Any], key: str) -> Any:
    """A categorical provenance axis (authority, fidelity, extraction_method, lifecycle): a
    string is stored as it is; a JSON number or boolean as the graph's name for it
    (:data:`~conceptwalk.graph.linkgraph.JSON_VALUE_MARK`, a NUL, followed by its JSON text), so
    it reads back with its type. A string may therefore not start with NUL."""
    v = row.get(key)
    if v is None:
        return None
    if isinstance(v, str):
        if v.startswith(JSON_VALUE_MARK):
            raise RowError(f"{key!r} must not start with a NUL character, got {shown(v)}")
        return str(v)
    try:
        return annotation_name(v, key)
    except InputError:
        raise RowError(
            f"{key!r} must be a string, a finite number (integers within 64 bits), a "
            f"boolean or null, got {type(v).__name__} {shown(v)}"
        ) from None


def _req_str(row: Mapping[str, Any], key: str) -> str:
    if key not in row or row[key] is None:
        raise RowError(f"missing {key!r}")
    v = row[key]
    if not isinstance(v, str):
        raise RowError(f"{key!r} must be a string, got {type(v).__name__} {shown(v)}")
    if not v:
        raise RowError(f"{key!r} must not be empty")
    return v


def _check_keys(row: Any, allowed: tuple[str, ...], what: str) -> Mapping[str, Any]:
    if not isinstance(row, Mapping):
        raise RowError(f"expected a {what} dict, got {type(row).__name__}")
    for k in row:
        if k not in allowed:
            raise RowError(
                f"unknown key {shown(k)} ({'an' if what[0] in 'aeiou' else 'a'} {what} has "
                f"{', '.join(allowed)}){_key_hint(k, allowed, what)}"
            )
    return row


def _key_hint(key: Any, allowed: tuple[str, ...], what: str) -> str:
    """What to do instead of an unknown row key: the allowed key it is probably a typo of, or
    where a weight goes (the link graph is unweighted)."""
    if not isinstance(key, str):
        return ""
    if what == "edge" and key.lower() in ("weight", "weights", "score", "strength", "w"):
        return (
            "; edges carry no weight (the link graph is unweighted): drop the key, or keep "
            "a confidence in 'extraction_confidence' (a number in [0, 1])"
        )
    close = difflib.get_close_matches(key.lower(), allowed, n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


#: Stored JSON text of scope lists already seen (a few distinct lists cover most rows).
_SCOPES_TEXT: dict[tuple[str, ...], str] = {}


_NODE_KEYSET = frozenset(NODE_KEYS)


def node_tuple(row: Any) -> tuple[Any, ...]:
    """Validate one node row; return the parameters of the node upsert (a NULL as
    :data:`NULL_TEXT`). Raises RowError."""
    # Fast path for the common well-formed dict (string values, scopes absent, null or a list
    # already seen); anything else takes the checked path below, which accepts a superset of
    # this, returns the same tuple and produces the error messages.
    if type(row) is dict and _NODE_KEYSET.issuperset(row):
        g = row.get
        nid, typ, title, body, scopes, life = g("id"), g("type"), g("title"), g("body"), g("scopes"), g("lifecycle")
        if (
            type(nid) is str
            and nid
            and (typ is None or type(typ) is str)
            and (title is None or type(title) is str)
            and (body is None or type(body) is str)
            and (life is None or type(life) is str)
        ):
            z = NULL_TEXT
            if scopes is None:
                text: Any = z
            elif type(scopes) is list:
                try:
                    text = _SCOPES_TEXT.get(tuple(scopes))  # a list seen before: checked then
                except TypeError:  # an unhashable element
                    text = None
            else:
                text = None
            if text is not None:
                mask = (
                    ("type" in row)
                    | (("title" in row) << 1)
                    | (("body" in row) << 2)
                    | (("scopes" in row) << 3)
                    | (("lifecycle" in row) << 4)
                )
                return (
                    nid,
                    z if typ is None else typ,
                    z if title is None else title,
                    z if body is None else body,
                    text,
                    z if life is None else life,
                    mask,
                )
    return _node_tuple_checked(row)


def _node_tuple_checked(row: Any) -> tuple[Any, ...]:
    row = _check_keys(row, NODE_KEYS, "node")
    nid = _req_str(row, "id")
    scopes = row.get("scopes")
    if scopes is not None:
        if isinstance(scopes, (str, bytes)) or not isinstance(scopes, (list, tuple)):
            raise RowError(f"'scopes' must be a list of strings or null, got {type(scopes).__name__} {shown(scopes)}")
        key = tuple(scopes)
        text = _SCOPES_TEXT.get(key) if all(type(s) is str for s in key) else None
        if text is None:
            for s in scopes:
                if not isinstance(s, str) or not s:
                    raise RowError(f"'scopes' must hold non-empty strings, got {shown(s)}")
            text = json.dumps(list(scopes), ensure_ascii=False)
            if len(_SCOPES_TEXT) >= 4096:
                _SCOPES_TEXT.clear()
            if all(type(s) is str for s in key):
                _SCOPES_TEXT[key] = text
        scopes = text
    mask = 0
    for i, k in enumerate(_NODE_OPTIONAL):
        if k in row:
            mask |= 1 << i
    typ, title, body, life = (
        _opt_str(row, "type"),
        _opt_str(row, "title"),
        _opt_str(row, "body"),
        _opt_str(row, "lifecycle"),
    )
    z = NULL_TEXT  # NULL as the sentinel that binds faster than None (see _NODE_UPSERT)
    return (
        nid,
        z if typ is None else typ,
        z if title is None else title,
        z if body is None else body,
        z if scopes is None else scopes,
        z if life is None else life,
        mask,
    )


def _confidence(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, Real):
        raise RowError(f"'extraction_confidence' must be a number in [0, 1] or null, got {type(v).__name__} {shown(v)}")
    try:
        f = float(v)
    except OverflowError:  # an integer past the float range, e.g. 10**400
        f = math.inf
    if not (0.0 <= f <= 1.0):  # also rejects NaN
        raise RowError(f"'extraction_confidence' must be in [0, 1], got {shown(v)}")
    return f


_EDGE_KEYSET = frozenset(EDGE_KEYS)


def edge_tuple(row: Any, default_type: str = DEFAULT_EDGE_TYPE) -> tuple[Any, ...]:
    """Validate one edge row; return the parameters of the edge upsert (a NULL as
    :data:`NULL_TEXT`, a NULL confidence as :data:`NULL_CONFIDENCE`). Raises RowError."""
    # Fast path for the common well-formed dict; anything unusual takes the checked path below
    # (which accepts a superset of this and produces the error messages).
    if type(row) is dict and _EDGE_KEYSET.issuperset(row):
        g = row.get
        src, dst, typ = g("src"), g("dst"), g("type")
        au, fi, me, co, li = (
            g("authority"),
            g("fidelity"),
            g("extraction_method"),
            g("extraction_confidence"),
            g("lifecycle"),
        )
        if (
            type(src) is str
            and src
            and type(dst) is str
            and dst
            and (typ is None or (type(typ) is str and typ))
            and (au is None or (type(au) is str and au[:1] != "\x00"))
            and (fi is None or (type(fi) is str and fi[:1] != "\x00"))
            and (me is None or (type(me) is str and me[:1] != "\x00"))
            and (li is None or (type(li) is str and li[:1] != "\x00"))
            and (co is None or (type(co) is float and 0.0 <= co <= 1.0))
        ):
            mask = (
                ("authority" in row)
                | (("fidelity" in row) << 1)
                | (("extraction_method" in row) << 2)
                | (("extraction_confidence" in row) << 3)
                | (("lifecycle" in row) << 4)
            )
            z = NULL_TEXT  # NULL as the sentinels that bind faster than None (see _EDGE_UPSERT)
            return (
                src,
                dst,
                default_type if typ is None else typ,
                z if au is None else au,
                z if fi is None else fi,
                z if me is None else me,
                NULL_CONFIDENCE if co is None else co,
                z if li is None else li,
                mask,
            )
    return _edge_tuple_checked(row, default_type)


def _edge_tuple_checked(row: Any, default_type: str) -> tuple[Any, ...]:
    if isinstance(row, tuple) and len(row) in (2, 3):
        row = dict(zip(("src", "dst", "type"), row))
    row = _check_keys(row, EDGE_KEYS, "edge")
    src = _req_str(row, "src")
    dst = _req_str(row, "dst")
    typ = _opt_str(row, "type")
    if typ is None:
        typ = default_type
    elif not typ:
        raise RowError("'type' must not be empty")
    mask = 0
    for i, k in enumerate(ANNOTATION_AXES):
        if k in row:
            mask |= 1 << i
    vals = [_opt_axis(row, k) for k in ("authority", "fidelity", "extraction_method")]
    co, li = _confidence(row.get("extraction_confidence")), _opt_axis(row, "lifecycle")
    z = NULL_TEXT
    return (
        src,
        dst,
        typ,
        *(z if v is None else v for v in vals),
        NULL_CONFIDENCE if co is None else co,
        z if li is None else li,
        mask,
    )


def alias_pair(row: Any) -> tuple[str, str]:
    """Validate one alias row (a dict with ``alias`` and ``canonical`` or a 2-tuple)."""
    if isinstance(row, Mapping):
        row = _check_keys(row, ("alias", "canonical"), "alias")
        return _req_str(row, "alias"), _req_str(row, "canonical")
    if isinstance(row, (tuple, list)) and len(row) == 2:
        return _req_str({"alias": row[0]}, "alias"), _req_str({"canonical": row[1]}, "canonical")
    raise RowError(f"expected {{'alias': ..., 'canonical': ...}} or an (alias, canonical) pair, got {shown(row)}")


def _chunks(it: Iterable[Any], size: int = _CHUNK) -> Iterator[list[Any]]:
    buf: list[Any] = []
    for x in it:
        buf.append(x)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def _sqlite_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a str SQLite can open: a name holding bytes that are not UTF-8 (Python's
    ``surrogateescape``) cannot be given to it, and is refused by name."""
    p = str(os.fspath(path))
    if not _is_text(p):
        raise InputError(
            f"{ascii(p)}: the path holds bytes that are not UTF-8, which SQLite cannot open; rename the file"
        )
    return p


def check_text(value: Any, what: str) -> None:
    """Raise :class:`InputError` when ``value`` is a str holding a lone surrogate (``what``
    names it in the message); any other value passes."""
    bad = lone_surrogate(value) if isinstance(value, str) else None
    if bad is not None:
        raise InputError(f"{what} holds a lone surrogate ({ascii(bad)[1:-1]}), which is not text and cannot be stored")


def _all_text(values: Sequence[Any]) -> bool:
    """Whether ``values`` are strs that are all text, in one encode (in C) of them joined: a
    Python str holding any surrogate code point, paired or not, does not encode."""
    try:
        "".join(values).encode("utf-8")
    except (TypeError, UnicodeEncodeError):
        return False
    return True


def _is_text(value: Any) -> bool:
    """False for a str holding a lone surrogate (``"\\ud800"``), which no store holds (SQLite
    cannot bind it): an id or name given as one is unknown."""
    return not isinstance(value, str) or lone_surrogate(value) is None


def lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in ``value`` (a str, or the strs of a list, tuple or dict: a
    row's scopes), or None when every str in it is text."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return value[exc.start]
        return None
    if isinstance(value, Mapping):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple)):
        for v in value:
            got = lone_surrogate(v)
            if got is not None:
                return got
    return None


def first_not_text(rows: Sequence[Any]) -> tuple[int, Any, str] | None:
    """The first row of ``rows`` (mappings, or tuples and lists) holding a lone surrogate:
    ``(its index, the key or position that holds it, the surrogate)``, or None."""
    for j, row in enumerate(rows):
        for key, value in row.items() if isinstance(row, Mapping) else enumerate(row):
            bad = lone_surrogate([key, value])
            if bad is not None:
                return j, key, bad
    return None


def _not_text(name: str, rows: Sequence[Any], start: int) -> InputError:
    """The error for a write of ``rows`` (``rows[0]`` is the call's ``rows[start]``) that SQLite
    could not encode: the first row holding a lone surrogate, and its key."""
    got = first_not_text(rows)
    if got is None:
        return InputError(f"{name}: a string holds a lone surrogate, which is not text and cannot be stored")
    j, key, bad = got
    if not isinstance(rows[j], Mapping):
        where = f"item {key}"
    elif lone_surrogate(key) is None:
        where = repr(key)
    else:
        where = "a key"
    return InputError(
        f"{name}: rows[{start + j}]: {where} holds a lone surrogate ({ascii(bad)[1:-1]}), "
        "which is not text and cannot be stored; write the whole character (a surrogate pair) or drop it"
    )


def _insert_bare_nodes(conn: sqlite3.Connection, ids: list[str]) -> None:
    """``INSERT OR IGNORE`` a bare node per id, in the order given: the ids as one JSON array
    read by ``json_each`` (one statement; about a third of the time of a bound row per id),
    or row by row when the JSON text holds an escape (a control character in an id) that
    SQLite's JSON reader might not give back byte for byte."""
    text = json.dumps(ids, ensure_ascii=False)
    if "\\u" not in text:
        try:
            conn.execute("INSERT OR IGNORE INTO nodes(id) SELECT value FROM json_each(?)", (text,))
            return
        except UnicodeEncodeError:  # a lone surrogate: not bound (nothing written), as row by row
            pass
    conn.executemany("INSERT OR IGNORE INTO nodes(id) VALUES (?)", ((e,) for e in ids))


def _fts_segment_pages(conn: sqlite3.Connection) -> list[int]:
    """The full-text index's segments' sizes in leaf pages, largest first, read from FTS5's
    ``_idx`` table (one row per segment and term boundary, its ``pgno`` the leaf page's number
    shifted left by one: FTS5's stable file format): the last page each segment indexes, in a
    few ms at millions of nodes, where counting the pages would read them all (it misses the
    pages of a segment's last term past the first: about 1% on a synthetic store)."""
    rows = conn.execute("SELECT max(pgno) >> 1 FROM nodes_fts_idx GROUP BY segid").fetchall()
    return sorted((int(r[0]) for r in rows), reverse=True)


def _merge_fts_segments(conn: sqlite3.Connection, before: int = 0) -> bool:
    """Merge the full-text index into one segment (FTS5's 'optimize') when a load left more
    than one large segment and wrote a good part of the index; whether it did. ``before``: the
    index's pages (:func:`_fts_segment_pages`, summed) before the load.

    FTS5 merges its segments as rows are written: every row written adds a small segment, and
    every 64 pages written it merges a bounded amount, but when too many segments pile up on one
    level it merges that whole level inside the write (its "crisis merge"). A bulk load leaves a
    few large segments on one level (four of 13-17k pages on a 2.5M-node store); at FTS5's
    default limit of 16 segments, a few hundred one-row writes later one write merged all of
    them: 6.6-8.5 s for one agent turn's insert, where the others take 0.3 ms. The store's limit
    is now :data:`_FTS_CRISIS_MERGE`, which leaves those merges to FTS5's incremental steps;
    one segment after the load also spares the writes after it that work and gives the index
    its fastest shape for :meth:`KnowledgeBase.fts_search`. It costs about a pass over the index
    (4.6-6.4 s on that store, beside the load's two minutes), so it is done only when the load
    left several large segments (a second one of at least :data:`_FTS_MERGE_PAGES` pages and
    :data:`_FTS_MERGE_SHARE` of the largest) and the load wrote at least as much of the index
    (an index grown by row-by-row writes keeps a few large segments of its own, which FTS5
    merges as usual: a small load into it merges nothing)."""
    pages = _fts_segment_pages(conn)
    if len(pages) < 2 or pages[1] < _FTS_MERGE_PAGES or pages[1] < pages[0] * _FTS_MERGE_SHARE:
        return False
    wrote = sum(pages) - before
    if wrote < _FTS_MERGE_PAGES or wrote < sum(pages) * _FTS_MERGE_SHARE:
        return False
    conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('optimize')")
    return True


def _rebuild_fts(conn: sqlite3.Connection) -> None:
    """Build the full-text index from every node row in one pass (inside a write transaction).

    FTS5 buffers pending terms up to its 'hashsize' (1 MiB by default) before writing a
    segment, and then merges the segments: a larger buffer for the rebuild writes far fewer of
    them (the same index content; the setting is put back and its config row removed, so the
    store's FTS5 config is the one row-by-row writes leave)."""
    conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('hashsize', ?)", (_BULK_FTS_HASH,))
    conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('rebuild')")
    _merge_fts_segments(conn)  # the rebuild leaves a few large segments: see there
    conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('hashsize', ?)", (_FTS_HASH,))
    conn.execute("DELETE FROM nodes_fts_config WHERE k = 'hashsize'")


def _fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression that can never be a syntax error: every word token quoted,
    joined with OR (bm25 ranks documents matching more of them higher)."""
    seen: dict[str, None] = {}
    for tok in _FTS_TOKEN.findall(text):
        seen.setdefault(tok.lower(), None)
        if len(seen) >= _FTS_MAX_TOKENS:
            break
    if not seen:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in seen)


def _max_chunk(conn: sqlite3.Connection, model: str) -> int:
    """The highest stored chunk number of an embedding model (-1 without chunks); every slot
    below ``next_slot`` lies in a chunk at or below it, as each write stores its slot's chunk."""
    r = conn.execute("SELECT max(chunk) FROM vector_chunks WHERE model = ?", (model,)).fetchone()
    return r[0] if r is not None and isinstance(r[0], int) and not isinstance(r[0], bool) else -1


def _node_dict(r: Sequence[Any]) -> dict[str, Any]:
    return {
        "id": r[0],
        "type": r[1],
        "title": r[2],
        "body": r[3],
        "scopes": parse_scopes(r[4], r[0]),
        "lifecycle": r[5],
    }


# ---------------------------------------------------------------------- opening a file
#: Tables (and their columns) every conceptwalk store has; a file without them is not ours.
_STORE_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "nodes": ("rid", "id", "type", "title", "body", "scopes", "lifecycle"),
    "edges": ("src", "dst", "type") + ANNOTATION_AXES,
    "aliases": ("alias", "canonical"),
    "embeddings": ("node_id", "model", "dim", "vector"),
}


def _not_ours(p: str, why: str) -> ConceptwalkError:
    return ConceptwalkError(f"{p!r} is not a conceptwalk knowledge base ({why}); it was not changed")


def _schema_objects(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])


def _hot_journal(exc: sqlite3.Error, p: str) -> bool:
    """Whether ``exc``, raised by a read-only connection to ``p``, is SQLite refusing to read
    past a hot rollback journal (a write transaction killed before it committed: only a
    read-write connection may roll it back; until then the file holds uncommitted pages)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if code is not None:
        return bool(code == getattr(sqlite3, "SQLITE_READONLY_ROLLBACK", 776))
    return _nonempty(p + "-journal") and "readonly" in str(exc).replace("-", "").replace(" ", "")


def _hot_journal_error(p: str) -> ConceptwalkError:
    return ConceptwalkError(
        f"{p!r} has a hot journal: a write to it was interrupted before it committed; open it once "
        "for writing (KnowledgeBase.open, or any SQLite client) so that it is rolled back: a "
        "read-only open never reads the uncommitted pages"
    )


def _nonempty(path: str) -> bool:
    try:
        return os.path.getsize(path) > 0
    except OSError:
        return False


def _inspect_file(p: str) -> bool:
    """Whether the existing file ``p`` is empty (the schema may be created in it). Raises
    :class:`ConceptwalkError` for a file that is not a conceptwalk store; writes nothing (the
    file is read through a read-only connection), except that a hot journal -- a write killed
    before it committed, e.g. a bulk load -- is first rolled back by a read-write connection,
    as any SQLite opener does (the file then holds its last committed state, nothing else)."""
    # The file is read through SQLite alone, never opened by Python: closing any descriptor of
    # a file releases every POSIX lock this process holds on it, so a store this process already
    # has open would lose its locks, and another process could then take the file for unused:
    # delete its -wal and -shm under the open connections, and writes committed to them are lost.
    try:
        if os.path.getsize(p) == 0:
            return True
    except OSError as exc:
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc.strerror or exc}") from None
    if not os.access(p, os.R_OK):
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {os.strerror(errno.EACCES)}")
    uri = Path(os.path.abspath(p)).as_uri() + "?mode=ro"
    for read_write in (False, True):
        try:
            ro = sqlite3.connect(p if read_write else uri, uri=not read_write, isolation_level=None, timeout=30.0)
        except sqlite3.Error as exc:
            raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
        try:
            ro.execute("PRAGMA busy_timeout = 30000")
            have = int(ro.execute("PRAGMA user_version").fetchone()[0])  # rolls a hot journal back (read-write)
            if have == 0 and not _schema_objects(ro):
                return True  # an empty SQLite database
            _check_store(ro, p)
            return False
        except sqlite3.OperationalError as exc:
            if read_write or not _hot_journal(exc, p):
                raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
        finally:
            ro.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _check_store(conn: sqlite3.Connection, p: str) -> None:
    """Raise unless ``conn`` holds a conceptwalk store this version can read."""
    have = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if have > SCHEMA_VERSION:
        raise ConceptwalkError(
            f"{p!r} has schema version {have}, newer than this conceptwalk supports "
            f"({SCHEMA_VERSION}); upgrade conceptwalk"
        )
    objects = dict(conn.execute("SELECT name, type FROM sqlite_master").fetchall())
    if have < 1:
        raise _not_ours(p, f"a SQLite database of another program: user_version {have}, {len(objects)} schema objects")
    for table, cols in _STORE_COLUMNS.items():
        if objects.get(table) != "table":
            raise _not_ours(p, f"user_version {have} but no {table!r} table")
        got = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        missing = [c for c in cols if c not in got]
        if missing:
            raise _not_ours(p, f"table {table!r} has no column {missing[0]!r}")
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'version')"))
    for key in ("schema_version", "version"):
        v = meta.get(key)
        if key not in meta:
            raise ConceptwalkError(f"{p!r}: the meta row {key!r} is missing (the store is damaged)")
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ConceptwalkError(f"{p!r}: the meta row {key!r} holds {shown(v)}, not a count (the store is damaged)")
    if meta["schema_version"] != have:
        raise ConceptwalkError(
            f"{p!r}: meta schema_version {meta['schema_version']} differs from "
            f"user_version {have} (the store is damaged)"
        )


def _presence_from(kept: Mapping[str, Any] | None) -> dict[str, int] | None:
    """Annotation counts kept with the snapshot, when they are well formed: one non-negative
    integer per axis, the axes exactly :data:`ANNOTATION_AXES` (None otherwise: counted again)."""
    if kept is None or set(kept) != set(ANNOTATION_AXES):
        return None
    out: dict[str, int] = {}
    for k in ANNOTATION_AXES:
        a = kept[k]
        if a.shape != (1,) or a.dtype.kind not in "iu" or int(a[0]) < 0:
            return None
        out[k] = int(a[0])
    return out


def _weakly(method: Callable[[], Any]) -> Callable[[], Any]:
    """The bound, argument-less ``method`` called through a weak reference to its object: the
    state keeper's calls back into the store that owns it, which would otherwise keep each other
    alive (a ``weakref.WeakMethod`` costs a microsecond per call; this a plain call)."""
    assert isinstance(method, MethodType)
    ref, func = weakref.ref(method.__self__), method.__func__
    return lambda: func(ref())


# ---------------------------------------------------------------------- the store
class KnowledgeBase:
    """A knowledge base in one SQLite file: nodes, typed directed edges with provenance
    annotations, aliases, embeddings and a full-text index.

    Open an existing store with :meth:`open`, make a new one with :meth:`create`; use as a context manager or call :meth:`close`. Every write method
    is one transaction (all or nothing) and bumps the version counter; :meth:`transaction`
    groups several writes into one. Readers in other processes see committed states (WAL).
    One object may be shared by threads (calls are serialised by a lock).

    Parameters
    ----------
    conn : sqlite3.Connection
        An open connection to a store created by :meth:`open` (use :meth:`open`, which checks
        the file and its schema, rather than this constructor).
    path : str
        The file it was opened from (``":memory:"`` for a private in-memory store).

    Examples
    --------
    >>> with KnowledgeBase.open(":memory:") as kb:
    ...     kb.add_nodes([{"id": "ppr", "type": "CONCEPT", "title": "Personalized PageRank"},
    ...                   {"id": "push", "type": "CONCEPT", "title": "Forward push"}])
    ...     kb.add_edges([{"src": "push", "dst": "ppr", "type": "IMPLEMENTS",
    ...                    "extraction_method": "TAGGED_CONCEPT", "extraction_confidence": 1.0}])
    ...     kb.add_aliases([("pagerank", "ppr")])
    ...     g = kb.graph()
    ...     (g.num_nodes, g.num_edges, kb.graph() is g, kb.search("pagerank?"))  # doctest: +ELLIPSIS
    2
    1
    1
    (2, 1, True, [('ppr', ...)])
    """

    def __init__(self, conn: sqlite3.Connection, path: str | None = None) -> None:
        if not isinstance(conn, sqlite3.Connection) or not isinstance(path, str):
            shown_arg = repr(os.fspath(conn)) if isinstance(conn, (str, os.PathLike)) else "path"
            raise InputError(
                f"KnowledgeBase(...) takes an open connection; to open a store file use "
                f"KnowledgeBase.open({shown_arg}) (KnowledgeBase.create to make a new one, "
                f"KnowledgeBase.open_read_only to only read it)"
            )
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0  # nesting of transaction()
        self._fresh_bulk = False  # inside bulk() into an empty store: no trigger on nodes or edges
        #: Opened with ``read_only=True``; ``immutable``: with SQLite's ``immutable=1``.
        self.read_only = False
        self.immutable = False
        try:
            self._changelog = (
                conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'changes'").fetchone()
                is not None
            )
            r = conn.execute("SELECT value FROM meta WHERE key = 'uuid'").fetchone()
            uuid = None if r is None else str(r[0])
        except sqlite3.DatabaseError:  # pragma: no cover - open() checked the file
            self._changelog, uuid = False, None
        # The read side (kb/state.py): the state, graph snapshot, text index and derived arrays,
        # their caches and the snapshot file. It holds this store weakly (no reference cycle: a
        # store dropped unclosed is freed at once, with what its keeper holds) and shares its lock.
        self._keeper = StateKeeper(
            weakref.proxy(self),
            path=path,
            lock=self._lock,
            read=_weakly(self._read),
            writing=_weakly(self._writing),
            changelog=self._changelog,
            uuid=uuid,
            schema_version=SCHEMA_VERSION,
            snapshot_schemas=_SNAPSHOT_SCHEMAS,
        )

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = False, read_only: bool = False) -> KnowledgeBase:
        """Open the knowledge base stored at ``path`` (an existing file: a mistyped path is an
        error naming it, never a new empty store; :meth:`create` or ``create=True`` makes one).

        Parameters
        ----------
        path : str or path-like
            The SQLite file; ``":memory:"`` gives a private in-memory store (no WAL, always new).
        create : bool
            Create the file when absent (as :meth:`create` does). By default a missing file
            raises :class:`~conceptwalk.errors.StoreNotFoundError` (a ``FileNotFoundError``)
            naming the path, and nothing is created. The schema is only ever created in a new
            or empty file.
        read_only : bool
            Open an existing file for reading only (see :meth:`open_read_only`): every write
            raises :class:`ConceptwalkError`, nothing next to the file is created or changed.

        Returns
        -------
        KnowledgeBase

        Raises
        ------
        ConceptwalkError
            The path is a directory; the file is not a SQLite database, is damaged, is another
            program's database (``"not a conceptwalk knowledge base"``: refused before anything
            is written to it) or was written by a newer schema.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.version, kb.stats()["nodes"]
        (0, 0)
        >>> kb.close()
        """
        if read_only:
            return cls.open_read_only(path)
        p = _sqlite_path(path)
        memory = p == ":memory:" or p.startswith("file::memory:")
        fresh = memory
        if not memory:
            _refuse_own_bulk(p)
        if not memory:
            if os.path.isdir(p):
                raise ConceptwalkError(f"{p!r} is a directory, not a knowledge base file")
            if not os.path.exists(p):
                if not create:
                    raise StoreNotFoundError(
                        f"knowledge base not found: {p!r} (KnowledgeBase.create({p!r}) makes a new one)"
                    )
                fresh = True
            else:
                # Look before touching: a file that is not ours is refused before anything is
                # written to it (no schema, no WAL switch, no -wal file).
                fresh = _inspect_file(p)
        try:
            conn = sqlite3.connect(p, isolation_level=None, check_same_thread=False, timeout=30.0)
        except sqlite3.Error as exc:
            raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            have = conn.execute("PRAGMA user_version").fetchone()[0]
            if not fresh:
                _check_store(conn, p)
            elif have != 0 or _schema_objects(conn):  # created by someone else since we looked
                _check_store(conn, p)
                fresh = False
            if not memory:
                mode = _wal_mode(conn)
                if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only medium
                    raise ConceptwalkError(f"could not switch {p!r} to WAL mode (got {mode!r})")
                conn.execute("PRAGMA synchronous = NORMAL")
            # (a version-4 file written before alias writes were logged lacks their triggers; one
            # with the full-text index written before _FTS_CRISIS_MERGE lacks its setting: the
            # same idempotent script adds them)
            lacks = (
                conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'changes_aliases_ai'"
                ).fetchone()
                is None
            )
            if fresh or have < SCHEMA_VERSION or lacks or (not fresh and _lacks_fts_config(conn)):
                # One script, one transaction; every statement is idempotent, so two processes
                # creating (or upgrading: a checked version-1 store) the same file at once are safe.
                try:
                    conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA)
                    if _lacks_fts_config(conn):  # asked again under the write lock (a racing disable_fts)
                        conn.execute(_FTS_CONFIG)
                    # (not executescript: it commits a transaction in progress first)
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            conn.close()
            raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
        except BaseException:
            conn.close()
            raise
        return cls(conn, p)

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> KnowledgeBase:
        """Open the knowledge base at ``path``, creating the file (and its schema) when it is
        absent: ``open(path, create=True)``, as SQLite's ``mode=rwc``. An existing store is opened
        as it is; a file that is not a knowledge base is refused as :meth:`open` refuses it.

        Parameters
        ----------
        path : str or path-like
            The SQLite file (``":memory:"``: a private in-memory store).

        Returns
        -------
        KnowledgeBase

        Examples
        --------
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "new.db")
        >>> with KnowledgeBase.create(p) as kb:
        ...     kb.version, os.path.exists(p)
        (0, True)
        >>> KnowledgeBase.open(p + ".typo")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        conceptwalk.errors.StoreNotFoundError: knowledge base not found: '...new.db.typo' (KnowledgeBase.create(...) makes a new one)
        """
        return cls.open(path, create=True)

    @classmethod
    def open_read_only(cls, path: str | os.PathLike[str]) -> KnowledgeBase:
        """Open an existing knowledge base for reading only, e.g. on read-only media.

        The file is opened with SQLite's ``mode=ro``, which still shares the WAL with writers in
        other processes (their commits are seen) but needs the ``-shm``/``-wal`` files to exist
        or the directory to be writable. When that fails, no ``-wal`` file holds data and no
        ``-journal`` file exists, it is opened ``immutable=1``: SQLite then takes no locks and
        assumes the file never changes, so this must not be used while another process writes
        to it (it would read torn pages). A file with a hot journal (a write killed before it
        committed) is refused: only a read-write open may roll it back, and its uncommitted
        pages are never read. A saved snapshot beside the store is used when it matches; none is written.
        A version-1 file (no change log) is read as it is: each change to it then costs a
        full rebuild of the graph.

        Parameters
        ----------
        path : str or path-like
            An existing knowledge-base file (not ``":memory:"`` nor a ``file:`` URI).

        Returns
        -------
        KnowledgeBase
            A store whose ``read_only`` is True (every write raises
            :class:`~conceptwalk.errors.ConceptwalkError`) and whose ``immutable`` says whether it
            was opened ``immutable=1``.

        Raises
        ------
        FileNotFoundError
            No file at ``path``.
        ConceptwalkError
            The file cannot be read as a knowledge base, or was written by a newer schema;
            ``path`` is ``":memory:"`` or a ``file:`` URI; it has a hot journal (``"has a hot
            journal"``: open it once with :meth:`open` to roll the interrupted write back).

        Examples
        --------
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "kb.sqlite")
        >>> with KnowledgeBase.create(p) as kb:
        ...     _ = kb.add_edges([("a", "b")])
        >>> with KnowledgeBase.open(p, read_only=True) as ro:
        ...     ro.graph().num_edges
        ...     ro.add_edges([("b", "c")])
        Traceback (most recent call last):
        ...
        conceptwalk.errors.ConceptwalkError: ... is open read-only: writes are refused
        """
        import urllib.parse

        p = _sqlite_path(path)
        if p == ":memory:" or p.startswith("file:"):
            raise ConceptwalkError(f"read_only needs a file path, got {p!r}")
        if not os.path.exists(p):
            raise FileNotFoundError(f"knowledge base not found: {p!r}")
        _refuse_own_bulk(p)
        uri = "file:" + urllib.parse.quote(os.path.abspath(p))
        attempts = ["?mode=ro"]
        if not (_nonempty(p + "-wal") or _nonempty(p + "-journal")):
            # immutable=1 reads neither a WAL nor a rollback journal: never with either beside
            # the file (it would miss commits, or serve the pages of an uncommitted write)
            attempts.append("?mode=ro&immutable=1")
        last: Exception | None = None
        for query in attempts:
            try:
                conn = sqlite3.connect(
                    uri + query, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0
                )
            except sqlite3.DatabaseError as exc:
                last = exc
                continue
            try:
                conn.execute("PRAGMA busy_timeout = 30000")
                have = conn.execute("PRAGMA user_version").fetchone()[0]
                conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            except sqlite3.DatabaseError as exc:
                conn.close()
                if _hot_journal(exc, p):
                    raise _hot_journal_error(p) from None
                last = exc
                continue
            if have > SCHEMA_VERSION:
                conn.close()
                raise ConceptwalkError(
                    f"{p!r} has schema version {have}, newer than this conceptwalk supports "
                    f"({SCHEMA_VERSION}); upgrade conceptwalk"
                )
            kb = cls(conn, p)
            kb.read_only = True
            kb.immutable = "immutable" in query
            return kb
        raise ConceptwalkError(f"cannot open {p!r} read-only as a knowledge base: {last}")

    def close(self) -> None:
        """Close the connection (idempotent), first saving the graph snapshot beside the store
        when it is newer than the saved one. The cached graph snapshots stay usable."""
        with self._lock:
            if self._conn is not None:
                self._keeper.stop_compaction()
                try:
                    self._keeper.save_snapshot(force=True)
                except Exception:  # pragma: no cover - a cache: never fail close() for it
                    pass
                self._conn.close()
                self._conn = None  # type: ignore[assignment]

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._conn is None else f"version={self.version}"
        return f"KnowledgeBase({self.path!r}, {state})"

    @property
    def conn(self) -> sqlite3.Connection:
        """The underlying connection (for read-only SQL; writes must go through the API)."""
        if self._conn is None:
            raise ConceptwalkError("the knowledge base is closed")
        return self._conn

    # ------------------------------------------------------------------ transactions
    def backup(self, target: sqlite3.Connection) -> None:
        """Copy one committed state of the store into the SQLite connection ``target`` (the
        online backup API; one reader of this store's connection at a time).

        Parameters
        ----------
        target : sqlite3.Connection
            The destination database (its content is replaced).
        """
        with self._locked():
            self.conn.backup(target)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes into one transaction: all of them are kept or none.

        Nested calls (and the write methods called inside) join the outer transaction, each
        under a savepoint: one that raises leaves none of its writes, also when the caller
        catches the error inside the outer transaction and commits it. The version counter is
        bumped once per outermost transaction.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> with kb.transaction():
        ...     _ = kb.add_nodes([{"id": "a"}])
        ...     _ = kb.add_edges([{"src": "a", "dst": "b"}])
        >>> kb.version
        1
        """
        with self._locked(reading=False) as conn:
            if self.read_only:
                raise ConceptwalkError(f"{self.path!r} is open read-only: writes are refused")
            if self._depth:
                conn.execute("SAVEPOINT conceptwalk_nested")
                self._depth += 1
                try:
                    yield
                except BaseException:
                    self._depth -= 1
                    if conn.in_transaction:
                        conn.execute("ROLLBACK TO conceptwalk_nested")
                        conn.execute("RELEASE conceptwalk_nested")
                    raise
                self._depth -= 1
                conn.execute("RELEASE conceptwalk_nested")
                return
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
                yield
            except BaseException:
                self._depth = 0
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                self._depth = 0
                try:
                    conn.execute("COMMIT")
                except BaseException:  # pragma: no cover - disk full and the like
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                self._keeper.committed()  # the catch-up thread grows the live graph a read made

    @contextmanager
    def _locked(self, *, reading: bool = True) -> Iterator[sqlite3.Connection]:
        """The lock held and the connection. A SQLite error (a damaged page, a locked file, a
        disk error) or an unreadable stored value raised inside becomes a
        :class:`ConceptwalkError` naming the file; so does a stored text that is not UTF-8 when
        ``reading`` (a write transaction's caller, e.g. an importer, decodes its own input and
        reports that error itself)."""
        errors: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, StoreDamaged)
        if reading:
            errors += (UnicodeDecodeError,)
        with self._lock:
            try:
                yield self.conn
            except errors as exc:
                raise ConceptwalkError(f"knowledge base {self.path!r}: {exc}") from None

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """A transaction for a large load (importers and ``conceptwalk synth`` use it).

        Into an **empty** store, the per-row work that an index built once does better is
        deferred to the end of the transaction: the change-log and full-text triggers and the
        ``edges(dst)`` index are dropped, and at the end the full-text index is rebuilt in one
        pass, the index and triggers are recreated, and one ``reset`` change is logged (so
        every snapshot rebuilds). All of it is one transaction: a failure or a crash leaves the
        store as it was, triggers included. Into a non-empty store (or nested in another
        transaction) it is a plain :meth:`transaction`.

        Into an empty store **file** that no other connection has open, the load also runs
        with SQLite's rollback journal instead of the WAL (when :attr:`BULK_ROLLBACK_JOURNAL`
        is true, the default): a new page is then written once, straight into the file, where
        the WAL writes it twice (into the WAL, then again when checkpointing it into the file).
        The journal holds the few pages the empty store had, so a failure or a SIGKILL still
        leaves the store as it was (the next opener rolls the journal back). The store is
        switched back to WAL when the load ends. While it runs, another process that opens
        the store waits for it (up to the 30 s busy timeout) rather than reading the empty
        store alongside; a connection already open keeps the load in WAL mode.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> with kb.bulk():
        ...     _ = kb.add_nodes([{"id": "a", "title": "Alpha"}])
        ...     _ = kb.add_edges([("a", "b")])
        >>> kb.search("alpha")[0][0], kb.graph().num_edges
        ('a', 1)
        """
        with self._lock:
            journal = self._depth == 0 and self._rollback_journal_on()
            try:
                with self._bulk_transaction():
                    yield
            finally:
                if journal:
                    self._rollback_journal_off()

    #: Whether :meth:`bulk` into an empty store file that no other connection has open uses
    #: the rollback journal (each new page written once) rather than the WAL.
    BULK_ROLLBACK_JOURNAL = True

    def _rollback_journal_on(self) -> bool:
        """Switch an empty, unshared store file to the rollback journal for a bulk load (True
        when switched; False leaves it in WAL mode: not a file, not empty, shared, refused)."""
        persists = self._keeper.snapshot_path is not None  # a file store whose directory took a save
        if not (self.BULK_ROLLBACK_JOURNAL and persists and self._changelog and not self.read_only):
            return False
        with self._locked(reading=False) as conn:
            if conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None:
                return False
            conn.execute("PRAGMA busy_timeout = 0")  # another connection open: do not wait
            try:
                mode = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
            except sqlite3.OperationalError:  # locked by another connection
                mode = "wal"
            finally:
                conn.execute("PRAGMA busy_timeout = 30000")
            if str(mode).lower() != "delete":
                return False
            with _BULK_FILES_LOCK:
                _BULK_FILES[os.path.realpath(self.path)] = threading.get_ident()
            # FULL: the journal is synced before the file is written (power-loss safe too).
            conn.execute("PRAGMA synchronous = FULL")
            # The page size stays SQLite's default (4 KiB). 16 KiB pages filled a large load no
            # faster within the noise of 2026-12's runs, and made every later small write
            # carry 16 KiB per page it dirties into the WAL: 2.2x the write of an agent's turn.
            return True

    def _rollback_journal_off(self) -> None:
        with _BULK_FILES_LOCK:
            _BULK_FILES.pop(os.path.realpath(self.path), None)
        with self._locked(reading=False) as conn:
            conn.execute("PRAGMA synchronous = NORMAL")
            mode = _wal_mode(conn)  # (another process's open may be trying the same switch)
            if str(mode).lower() != "wal":  # pragma: no cover - another process holds a lock for 30 s
                raise ConceptwalkError(
                    f"{self.path!r}: could not switch back to WAL mode after a bulk "
                    f"load (got {mode!r}); the next open switches it"
                )

    @contextmanager
    def _bulk_transaction(self) -> Iterator[None]:
        with self.transaction():
            conn = self.conn
            empty = (
                self._depth == 1 and self._changelog and conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is None
            )
            fts = _has_fts(conn)
            if not empty:
                own = self._depth == 1 and fts  # the load's own transaction (not one it is nested in)
                before = sum(_fts_segment_pages(conn)) if own else 0
                yield
                if own and _has_fts(conn):
                    _merge_fts_segments(conn, before)
                return
            ddl = {
                name: sql
                for name, sql in conn.execute(
                    "SELECT name, sql FROM sqlite_master WHERE (type = 'trigger' AND (tbl_name IN ('nodes', 'edges') "
                    "OR name LIKE 'changes\\_aliases\\_%' ESCAPE '\\')) OR (type = 'index' AND name = 'edges_dst')"
                )
            }
            for name in ddl:
                kind = "INDEX" if name == "edges_dst" else "TRIGGER"
                conn.execute(f'DROP {kind} "{name}"')
            cache = conn.execute("PRAGMA cache_size").fetchone()[0]
            conn.execute("PRAGMA cache_size = -262144")  # 256 MiB of pages for the index builds
            try:
                self._fresh_bulk = True
                try:
                    yield
                finally:
                    self._fresh_bulk = False
                if fts:  # the store keeps a full-text index (enable_fts): built in one pass
                    _rebuild_fts(conn)
                for sql in ddl.values():
                    conn.execute(sql)
                # the edge tallies' triggers were dropped with the others: counted in one pass
                conn.execute("DELETE FROM tallies WHERE name LIKE 'edges.%'")
                conn.execute(f"INSERT INTO tallies(name, n) {_TALLY_EDGE_COUNTS_ONE_PASS}")
            finally:
                conn.execute(f"PRAGMA cache_size = {int(cache)}")
            conn.execute("INSERT INTO changes(kind) VALUES (?)", (CHANGE_RESET,))

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every SELECT inside sees one committed state."""
        with self._locked() as conn:
            if self._depth:  # inside our own write transaction: see our writes
                yield conn
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    def _writing(self) -> bool:
        """Inside this object's own write transaction (:meth:`transaction`)."""
        return self._depth > 0

    # ------------------------------------------------------------------ writes
    def add_nodes(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add or update nodes, in one transaction.

        Parameters
        ----------
        rows : iterable of dict
            Keys ``id`` (required, non-empty string), ``type``, ``title``, ``body``,
            ``lifecycle`` (strings or None) and ``scopes`` (list of strings or None; none or
            empty = public). Generators are streamed in chunks. Re-adding an id updates the keys
            the row gives (``None`` clears a value) and keeps the others.

        Returns
        -------
        int
            The number of rows written.

        Raises
        ------
        InputError
            A malformed row (``rows[i]: ...``, 0-based); nothing is written.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.add_nodes([{"id": "a", "type": "CONCEPT", "scopes": ["team-1"]}])
        1
        >>> kb.add_nodes([{"id": "a", "title": "Alpha"}])
        1
        >>> kb.node("a")
        {'id': 'a', 'type': 'CONCEPT', 'title': 'Alpha', 'body': None, 'scopes': ['team-1'], 'lifecycle': None}
        """
        return self._write_rows(rows, node_tuple, self.put_nodes, "add_nodes")

    def add_edges(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add or update typed directed edges, in one transaction.

        Parameters
        ----------
        rows : iterable of dict or tuple
            ``(src, dst[, type])`` tuples or dicts with the keys ``src``, ``dst`` (required), ``type`` (default ``"LINK"``) and the annotation
            axes ``authority``, ``fidelity``, ``extraction_method``, ``lifecycle`` (strings or
            None) and ``extraction_confidence`` (a number in [0, 1] or None). ``(src, dst, type)``
            is the edge's key: re-adding it updates the annotations the row gives (``None``
            clears one) and keeps the others.

        Returns
        -------
        int
            The number of rows written.

        Notes
        -----
        An endpoint that is not a node yet becomes a **bare node** (only its id; type, title,
        scopes and lifecycle NULL, so it is public), which a later :meth:`add_nodes` fills in.

        Raises
        ------
        InputError
            A malformed row (``rows[i]: ...``, 0-based); nothing is written.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.add_edges([{"src": "a", "dst": "b", "authority": "CANONICAL"}])
        1
        >>> kb.node("b")["type"] is None
        True
        >>> kb.add_edges([{"src": "a", "dst": "b", "extraction_confidence": 2}])
        Traceback (most recent call last):
        ...
        conceptwalk.errors.InputError: add_edges: rows[0]: 'extraction_confidence' must be in [0, 1], got 2
        """
        return self._write_rows(rows, edge_tuple, self.put_edges, "add_edges")

    def add_aliases(self, rows: Iterable[Mapping[str, str] | tuple[str, str]]) -> int:
        """Add aliases (alias -> canonical node id), in one transaction.

        Parameters
        ----------
        rows : iterable
            Dicts with ``alias`` and ``canonical``, or ``(alias, canonical)`` pairs. One alias
            may name several canonical ids (fragmented concepts); re-adding a pair is a no-op.
            The canonical id must be a node (possibly added earlier in the same transaction).

        Returns
        -------
        int
            The number of rows given.

        Raises
        ------
        InputError
            A malformed row or an unknown canonical id (``rows[i]: ...``); nothing is written.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "ppr"}, {"id": "pagerank"}])
        >>> kb.add_aliases([("PageRank", "ppr"), {"alias": "PageRank", "canonical": "pagerank"}])
        2
        >>> kb.aliases()
        {'PageRank': ['pagerank', 'ppr']}
        """

        def put(pairs: list[tuple[str, str]], start: int) -> None:
            self.put_aliases(pairs, [f"add_aliases: rows[{start + j}]" for j in range(len(pairs))])

        return self._write_rows(rows, alias_pair, put, "add_aliases", with_start=True)

    def _write_rows(
        self,
        rows: Iterable[Any],
        check: Callable[[Any], Any],
        put: Callable[..., None],
        name: str,
        *,
        with_start: bool = False,
    ) -> int:
        if isinstance(rows, (str, bytes, Mapping)):
            raise InputError(f"{name}: rows must be an iterable of rows, got {type(rows).__name__}")
        n = 0
        with self.transaction():  # (inside a caller's transaction, a savepoint: all rows or none)
            for chunk in _chunks(rows):
                params = []
                for j, row in enumerate(chunk):
                    try:
                        params.append(check(row))
                    except RowError as exc:
                        raise InputError(f"{name}: rows[{n + j}]: {exc}") from None
                try:
                    if with_start:
                        put(params, n)
                    else:
                        put(params)
                except UnicodeEncodeError:
                    # a str that is not text (a lone surrogate, "\ud800"): found only now, so
                    # that the rows' fast path checks nothing more; the row is named here
                    raise _not_text(name, chunk, n) from None
                except UnicodeDecodeError as exc:
                    # The rows were checked as str above: this is SQLite's own message (e.g. a
                    # trigger naming a column of a damaged schema) that is not UTF-8.
                    raise StoreDamaged(
                        f"SQLite reported an error in bytes that are not UTF-8 ({exc.object[:60]!r}; "
                        "the store is damaged)"
                    ) from None
                n += len(chunk)
        return n

    def delete_nodes(self, ids: Iterable[str]) -> int:
        """Delete nodes with their edges (either direction), aliases and embeddings, in one
        transaction. Unknown ids are ignored.

        Parameters
        ----------
        ids : iterable of str
            Node ids (non-empty strings; repeats count once). A single string is refused, not
            iterated.

        Returns
        -------
        int
            The number of nodes deleted.

        Raises
        ------
        InputError
            ``ids`` is a single string, or an item is not a non-empty string (nothing is deleted).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b"), ("b", "c")])
        >>> kb.delete_nodes(["b", "zz"]), kb.stats()["nodes"], kb.stats()["edges"]
        (1, 2, 0)
        """
        if isinstance(ids, (str, bytes)):
            raise InputError("delete_nodes: ids must be an iterable of ids, not a single string")
        want = list(ids)
        for i, x in enumerate(want):
            if not isinstance(x, str) or not x:
                raise InputError(f"delete_nodes: ids[{i}] must be a non-empty string, got {x!r}")
        uniq = sorted(x for x in set(want) if _is_text(x))  # (one that is not text is no stored id)
        n = 0
        with self.transaction():
            conn = self.conn
            for i in range(0, len(uniq), _IN_BATCH):
                part = uniq[i : i + _IN_BATCH]
                marks = ",".join("?" * len(part))
                conn.execute(f"DELETE FROM edges WHERE src IN ({marks})", part)
                conn.execute(f"DELETE FROM edges WHERE dst IN ({marks})", part)
                conn.execute(f"DELETE FROM aliases WHERE canonical IN ({marks})", part)
                conn.execute(f"DELETE FROM vector_slots WHERE node_id IN ({marks})", part)
                n += conn.execute(f"DELETE FROM nodes WHERE id IN ({marks})", part).rowcount
        return n

    def delete_edges(self, rows: Iterable[Any]) -> int:
        """Delete edges by key, ``(src, dst)`` (type ``"LINK"``) or ``(src, dst, type)`` tuples
        or dicts with those keys, in one transaction; their endpoints stay. Absent keys are
        ignored.

        Parameters
        ----------
        rows : iterable of tuple or dict
            Edge keys: ``(src, dst)`` (type ``"LINK"``), ``(src, dst, type)`` (a None type is
            ``"LINK"``) or a mapping with keys ``src``, ``dst`` and optionally ``type``; every part
            a non-empty string. Keys are directed: ``(b, a)`` does not delete ``(a, b)``.

        Returns
        -------
        int
            The number of edges deleted.

        Raises
        ------
        InputError
            ``rows`` is a string or a mapping (one row, not rows), or a row is malformed
            (nothing is deleted).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b"), ("a", "b", "CITES")])
        >>> kb.delete_edges([("a", "b", "CITES"), ("b", "a")]), kb.stats()["edges"]
        (1, 1)
        """
        if isinstance(rows, (str, bytes, Mapping)):
            raise InputError(f"delete_edges: rows must be an iterable of rows, got {type(rows).__name__}")
        keys = []
        for i, row in enumerate(rows):
            if isinstance(row, Mapping):
                row = (row.get("src"), row.get("dst"), row.get("type"))
            if not isinstance(row, (tuple, list)) or len(row) not in (2, 3):
                raise InputError(f"delete_edges: rows[{i}]: expected (src, dst[, type]), got {row!r}")
            key = (row[0], row[1], DEFAULT_EDGE_TYPE if len(row) == 2 or row[2] is None else row[2])
            for part in key:
                if not isinstance(part, str) or not part:
                    raise InputError(f"delete_edges: rows[{i}]: expected non-empty strings, got {row!r}")
            if all(_is_text(part) for part in key):  # (one that is not text is no stored key)
                keys.append(key)
        n = 0
        with self.transaction():
            for key in keys:
                n += self.conn.execute("DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?", key).rowcount
        return n

    def import_file(self, path: str | os.PathLike[str], format: str | None = None, **options: Any) -> Any:
        """Import one file -- JSONL, CSV/TSV, OBO, OWL, RDF/SKOS, GraphML, GEXF, GML, Neo4j CSV -- in
        one transaction: :func:`conceptwalk.kb.formats.import_file` on this store.

        Parameters
        ----------
        path : str or path-like
            The file.
        format : str, optional
            Default from the extension (:func:`conceptwalk.kb.formats.format_of`).
        **options
            The importer's options (``scopes=``, ``progress=``, the format's own).

        Returns
        -------
        ImportSummary

        Examples
        --------
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "links.csv")
        >>> with open(p, "w") as f:
        ...     _ = f.write("src,dst,type\\ntls,tcp,RUNS_OVER\\n")
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.import_file(p, scopes="netops").edges, kb.node("tls")["scopes"]
        (1, ['netops'])
        """
        from .formats import import_file

        return import_file(self, path, format, **options)

    def export_file(
        self, path: str | os.PathLike[str], format: str | None = None, *, caller: Caller | None = None
    ) -> Any:
        """Write what ``caller`` sees (default: public nodes only) to JSONL, GraphML or GEXF:
        :func:`conceptwalk.kb.formats.export_file` on this store.

        Parameters
        ----------
        path : str or path-like
            The file to write.
        format : str, optional
            ``"jsonl"``, ``"graphml"`` or ``"gexf"``; by default from the extension.
        caller : Caller, optional
            Whose view; default :meth:`Caller.public`.

        Returns
        -------
        ExportSummary

        Examples
        --------
        >>> import os, tempfile
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}, {"id": "s", "scopes": ["t1"]}])
        >>> kb.export_file(os.path.join(tempfile.mkdtemp(), "kb.jsonl")).nodes
        1
        """
        from .formats import export_file

        return export_file(self, path, format, caller=caller)

    def put_nodes(
        self, params: list[tuple[Any, ...]], *, codes: Mapping[str, Sequence[str | None]] | None = None
    ) -> None:
        """Upsert validated node tuples (:func:`node_tuple`), inside :meth:`transaction`; the bulk
        path of the importers and the synthetic generator.

        Parameters
        ----------
        params : list of tuple
            Rows already validated by :func:`node_tuple`. A NULL value may be None or
            :data:`NULL_TEXT` (0, which binds faster; what :func:`node_tuple` returns).
        codes : mapping of str to sequence of (str or None), optional
            For the keys ``type``, ``scopes`` (its stored JSON text) and ``lifecycle``: the values
            that the tuples hold as integer codes at that key (code ``i`` stands for
            ``codes[key][i]``), which saves binding one string per row. The values are stored
            exactly as if the tuples held them.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> with kb.transaction():
        ...     kb.put_nodes([("a", 1, "Alpha", None, None, 0, 31)],
        ...                  codes={"type": ["FILE", "CONCEPT"], "lifecycle": [None]})
        >>> kb.node("a")["type"], kb.node("a")["lifecycle"]
        ('CONCEPT', None)
        """
        key = _coded_key(codes, _NODE_CODED) if codes else ()
        self._put_rows(params, "nodes", key, 7)

    def put_edges(
        self,
        params: list[tuple[Any, ...]],
        *,
        endpoints_exist: bool = False,
        codes: Mapping[str, Sequence[str | None]] | None = None,
    ) -> None:
        """Upsert validated edge tuples, creating bare endpoint nodes (inside a transaction).

        Parameters
        ----------
        params : list of tuple
            Rows already validated by :func:`edge_tuple`. A NULL value may be None or the
            sentinel that binds faster (what :func:`edge_tuple` returns): :data:`NULL_TEXT`
            (0) for an annotation, :data:`NULL_CONFIDENCE` (-1) for the confidence.
        endpoints_exist : bool
            Skip creating the endpoint nodes: the caller wrote every endpoint as a node first
            (the synthetic generator, or an importer that tracks the ids it wrote).
        codes : mapping of str to sequence of (str or None), optional
            For the keys ``type``, ``authority``, ``fidelity``, ``extraction_method`` and
            ``lifecycle``: the values that the tuples hold as integer codes at that key (code
            ``i`` stands for ``codes[key][i]``; a ``type`` value must not be None). Stored
            exactly as if the tuples held the values.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> with kb.transaction():
        ...     kb.put_edges([("a", "b", 0, None, None, None, 0.5, 1, 31)],
        ...                  codes={"type": ["CITES"], "lifecycle": [None, "active"]})
        >>> kb.conn.execute("SELECT type, lifecycle FROM edges").fetchall()
        [('CITES', 'active')]
        """
        conn = self.conn
        if not endpoints_exist:
            ends = set(map(itemgetter(0), params))
            ends.update(map(itemgetter(1), params))
            _insert_bare_nodes(conn, sorted(ends))
        key = _coded_key(codes, _EDGE_CODED) if codes else ()
        self._put_rows(params, "edges", key, 9)

    def _put_rows(self, params: list[tuple[Any, ...]], table: str, key: _Coded, n: int) -> None:
        """Upsert the rows in their order. Inside a bulk load into an empty store (no trigger
        on the table), whole hundreds of rows go as multi-row ``INSERT ... ON CONFLICT DO
        NOTHING`` statements; when one of those rows met a stored key (counted by
        ``total_changes``), the hundreds are written again row by row with the upsert, in
        order, so every key ends as the upserts alone leave it (a row written twice sets its
        own values again), before the rest of the rows."""
        conn = self.conn
        if not isinstance(params, list):  # any iterable of tuples, as executemany takes
            params = list(params)
        sql = _coded_upsert(table, key) if key else (_NODE_UPSERT if table == "nodes" else _EDGE_UPSERT)
        m = len(params) // _MULTI_ROWS * _MULTI_ROWS if self._fresh_bulk else 0
        if m:
            flat = list(itertools.chain.from_iterable(itertools.islice(params, m)))
            if len(flat) == m * n:  # every row has its n parameters (else the upsert reports it)
                step = n * _MULTI_ROWS
                before = conn.total_changes
                conn.executemany(_multi_insert(table, key), (flat[i : i + step] for i in range(0, len(flat), step)))
                del flat
                if conn.total_changes - before != m:
                    conn.executemany(sql, itertools.islice(params, m))
                params = params[m:]
        conn.executemany(sql, params)

    def _missing_nodes(self, ids: Iterable[str]) -> set[str]:
        wanted = sorted(set(ids))
        found: set[str] = set()
        conn = self.conn
        for i in range(0, len(wanted), _IN_BATCH):
            part = wanted[i : i + _IN_BATCH]
            q = f"SELECT id FROM nodes WHERE id IN ({','.join('?' * len(part))})"
            found.update(r[0] for r in conn.execute(q, part))
        return set(wanted) - found

    def put_aliases(self, pairs: list[tuple[str, str]], where: Sequence[str]) -> None:
        """Insert validated alias pairs (inside a transaction).

        Parameters
        ----------
        pairs : list of (str, str)
            ``(alias, canonical)`` pairs already validated by :func:`alias_pair`.
        where : sequence of str
            ``where[j]`` locates pair j in error messages (``"file:line"``, ``"rows[j]"``).

        Raises
        ------
        InputError
            A canonical id is not a node.
        """
        missing = self._missing_nodes(c for _, c in pairs)
        if missing:
            for j, (a, c) in enumerate(pairs):
                if c in missing:
                    raise InputError(f"{where[j]}: canonical {c!r} of alias {a!r} is not a node")
        self.conn.executemany("INSERT OR IGNORE INTO aliases(alias, canonical) VALUES (?, ?)", pairs)

    def set_embeddings(self, model: str, ids: Sequence[str], matrix: npt.ArrayLike, *, replace: bool = False) -> int:
        """Store one embedding per node for ``model``, in one transaction.

        Parameters
        ----------
        model : str
            The embedding model's name (e.g. ``"bge-small"``).
        ids : sequence of str
            Existing node ids, no repeats, aligned with the rows of ``matrix``.
        matrix : array_like, shape (len(ids), dim)
            Finite real numbers, stored as float32. Every vector of one model has one ``dim``.
        replace : bool
            Delete the model's other embeddings first (e.g. to change ``dim``).

        Returns
        -------
        int
            The number of vectors written (an existing ``(id, model)`` is overwritten).

        Raises
        ------
        InputError
            Bad shape, dtype or values, an unknown or repeated id, or a ``dim`` different from
            the model's stored vectors; nothing is written.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}, {"id": "b"}])
        >>> kb.set_embeddings("toy", ["b", "a"], [[0, 1], [1, 0]])
        2
        >>> ids, m = kb.get_embeddings("toy")
        >>> ids, m.dtype, m.tolist()
        (['a', 'b'], dtype('float32'), [[1.0, 0.0], [0.0, 1.0]])
        """
        if not isinstance(model, str) or not model:
            raise InputError(f"set_embeddings: model must be a non-empty string, got {model!r}")
        check_text(model, "set_embeddings: model")
        if isinstance(ids, (str, bytes)):
            raise InputError("set_embeddings: ids must be a sequence of ids, not a single string")
        ids = list(ids)
        arr = np.asarray(matrix)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
            raise InputError(f"set_embeddings: matrix must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim != 2 or arr.shape[0] != len(ids) or arr.shape[1] < 1:
            raise InputError(f"set_embeddings: matrix must have shape ({len(ids)}, dim >= 1), got {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype="<f4")
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"set_embeddings: rows[{i}] ({ids[i]!r}) holds a non-finite value")
        texts = _all_text(ids)  # (one encode in C: else the loop names the first id that is not text)
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if not isinstance(x, str) or not x:
                raise InputError(f"set_embeddings: ids[{i}] must be a non-empty string, got {x!r}")
            if x in seen:
                raise InputError(f"set_embeddings: ids[{i}] repeats {x!r}")
            if not texts:
                check_text(x, f"set_embeddings: ids[{i}]")
            seen.add(x)
        with self.transaction():
            missing = self._missing_nodes(ids)
            if missing:
                i = next(i for i, x in enumerate(ids) if x in missing)
                raise InputError(f"set_embeddings: ids[{i}] {ids[i]!r} is not a node")
            self._put_vectors(model, ids, arr, replace)
        return len(ids)

    #: Bytes of vectors per stored chunk (one row of ``vector_chunks``): large enough that SQLite
    #: packs the blob into full overflow pages (the file grows by about 1.03x the vectors'
    #: bytes), small enough that rewriting one vector's chunk is cheap.
    VECTOR_CHUNK_BYTES = 1 << 16

    def _put_vectors(self, model: str, ids: list[str], arr: npt.NDArray[np.float32], replace: bool) -> None:
        """Write checked vectors into their model's chunks (inside a transaction): an id keeps
        its slot, a new id takes the next one; each touched chunk is rewritten once."""
        conn = self.conn
        dim = int(arr.shape[1])
        if replace:
            for t in ("vector_slots", "vector_chunks", "vector_models"):
                conn.execute(f"DELETE FROM {t} WHERE model = ?", (model,))
        r = self._vector_model(conn, model)
        if r is None:
            per_chunk, nxt = max(1, self.VECTOR_CHUNK_BYTES // (4 * dim)), 0
            conn.execute(
                "INSERT INTO vector_models(model, dim, per_chunk, next_slot) VALUES (?, ?, ?, 0)",
                (model, dim, per_chunk),
            )
        else:
            if int(r[0]) != dim:
                raise InputError(
                    f"set_embeddings: model {model!r} stores dim {r[0]}, got dim {dim} "
                    "(pass replace=True to replace its vectors)"
                )
            per_chunk, nxt = int(r[1]), int(r[2])
        have: dict[str, int] = {}
        for i in range(0, len(ids), _IN_BATCH):
            part = ids[i : i + _IN_BATCH]
            have.update(
                conn.execute(
                    f"SELECT node_id, slot FROM vector_slots WHERE model = ? "
                    f"AND node_id IN ({','.join('?' * len(part))})",
                    [model, *part],
                )
            )
        slots = np.empty(len(ids), dtype=np.int64)
        new: list[tuple[str, str, int]] = []
        for i, x in enumerate(ids):
            s_ = have.get(x)
            if s_ is None:
                s_ = nxt
                nxt += 1
                new.append((model, x, s_))
            slots[i] = s_
        conn.executemany("INSERT INTO vector_slots(model, node_id, slot) VALUES (?, ?, ?)", new)
        conn.execute("UPDATE vector_models SET next_slot = ? WHERE model = ?", (nxt, model))
        order = np.argsort(slots, kind="stable")
        chunks = slots[order] // per_chunk
        bounds = np.flatnonzero(np.diff(chunks)) + 1
        for grp in np.split(order, bounds) if order.size else []:
            c = int(slots[grp[0]] // per_chunk)
            old = conn.execute("SELECT data FROM vector_chunks WHERE model = ? AND chunk = ?", (model, c)).fetchone()
            buf = np.zeros((per_chunk, dim), dtype="<f4")
            if old is not None:
                prev = np.frombuffer(old[0], dtype="<f4")
                buf.reshape(-1)[: prev.shape[0]] = prev[: buf.size]
            buf[slots[grp] - c * per_chunk] = arr[grp]
            used = int(min(per_chunk, nxt - c * per_chunk))  # the last chunk holds only used slots
            # rewritten in place, so the change-log trigger names only the vectors that differ
            if old is not None:
                conn.execute(
                    "UPDATE vector_chunks SET data = ? WHERE model = ? AND chunk = ?", (buf[:used].tobytes(), model, c)
                )
            else:
                conn.execute(
                    "INSERT INTO vector_chunks(model, chunk, data) VALUES (?, ?, ?)", (model, c, buf[:used].tobytes())
                )

    @staticmethod
    def _vector_model(conn: sqlite3.Connection, model: str) -> tuple[int, int, int] | None:
        """``(dim, per_chunk, next_slot)`` of a stored model, or None for an unknown one;
        :class:`StoreDamaged` when the row holds values no write of this version leaves."""
        r = conn.execute("SELECT dim, per_chunk, next_slot FROM vector_models WHERE model = ?", (model,)).fetchone()
        if r is None:
            return None
        if (
            not all(isinstance(v, int) and not isinstance(v, bool) for v in r)
            or r[0] < 1
            or r[1] < 1
            or r[2] < 0
            or r[0] * r[2] > _MAX_STORED_FLOATS
            or r[2] > r[1] * (1 + _max_chunk(conn, model))
        ):
            raise StoreDamaged(
                f"embedding model {shown(model)} has (dim, per_chunk, next_slot) = "
                f"({shown(r[0])}, {shown(r[1])}, {shown(r[2])}) (the store is damaged)"
            )
        return int(r[0]), int(r[1]), int(r[2])

    @staticmethod
    def _slot(model: str, node_id: Any, slot: Any, nxt: int) -> int:
        """A stored slot, checked against the model's ``next_slot``."""
        if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < nxt:
            raise StoreDamaged(
                f"node {shown(node_id)} has slot {shown(slot)} of embedding model {shown(model)}, "
                f"outside [0, {nxt}) (the store is damaged)"
            )
        return slot

    def _vector_matrix(
        self, conn: sqlite3.Connection, model: str, chunks: Iterable[int] | None
    ) -> tuple[npt.NDArray[np.float32], int] | None:
        """The model's vectors as one matrix indexed by slot (only ``chunks`` filled when given),
        or None for an unknown model."""
        m = self._vector_model(conn, model)
        if m is None:
            return None
        dim, per_chunk, nxt = m
        mat = np.zeros((nxt, dim), dtype=np.float32)
        rows: Iterable[tuple[Any, ...]]
        if chunks is None:
            rows = conn.execute("SELECT chunk, data FROM vector_chunks WHERE model = ?", (model,))
        else:
            want = sorted(set(chunks))
            rows = (
                x
                for i in range(0, len(want), _IN_BATCH)
                for x in conn.execute(
                    f"SELECT chunk, data FROM vector_chunks WHERE model = ? AND chunk IN "
                    f"({','.join('?' * len(want[i : i + _IN_BATCH]))})",
                    [model, *want[i : i + _IN_BATCH]],
                )
            )
        flat = mat.reshape(-1)
        for c, data in rows:
            if isinstance(c, bool) or not isinstance(c, int) or c < 0 or not isinstance(data, bytes) or len(data) % 4:
                raise StoreDamaged(
                    f"embedding model {shown(model)} has a chunk ({shown(c)}, "
                    f"{type(data).__name__} of {len(data) if isinstance(data, (bytes, str)) else '?'} "
                    "bytes) no write leaves (the store is damaged)"
                )
            v = np.frombuffer(data, dtype="<f4")
            start = min(int(c) * per_chunk * dim, flat.shape[0])
            n = max(0, min(v.shape[0], flat.shape[0] - start))
            flat[start : start + n] = v[:n]
        return mat, per_chunk

    # ------------------------------------------------------------------ reads
    @property
    def version(self) -> int:
        """The write counter: bumped by every committed write transaction (any process)."""
        with self._locked() as conn:
            return meta_int(conn, "version")

    @property
    def schema_version(self) -> int:
        """The on-disk schema version of this file (:data:`SCHEMA_VERSION` once opened)."""
        with self._locked() as conn:
            return meta_int(conn, "schema_version")

    def get_embeddings(self, model: str, ids: Sequence[str] | None = None) -> tuple[list[str], npt.NDArray[np.float32]]:
        """The stored vectors of ``model``.

        Parameters
        ----------
        model : str
            The embedding model's name.
        ids : sequence of str, optional
            The nodes wanted, in the order wanted; ``None`` = every vector of the model.

        Returns
        -------
        ids : list of str
            With ``ids=None`` every node with a vector of the model, ascending (an unknown
            model gives ``[]``); otherwise the given ids.
        matrix : numpy.ndarray of float32, shape (len(ids), dim)
            One row per id (shape ``(0, 0)`` when there is none).

        Raises
        ------
        NotFoundError
            A given id has no vector of ``model``.
        """
        got = self.read_embeddings(model, ids)
        return got.ids, got.matrix

    def read_embeddings(
        self, model: str, ids: Sequence[str] | None = None, *, skip_missing: bool = False
    ) -> EmbeddingsRead:
        """:meth:`get_embeddings`, and the change-log position the vectors were read at: a
        reader that holds an older state (:meth:`state`) learns which of them another client
        may have written since (:meth:`changed_nodes` between the two positions), so what it
        keeps for its own position is that position's.

        Parameters
        ----------
        model : str
            The embedding model's name.
        ids : sequence of str, optional
            The nodes wanted, in the order wanted; ``None`` = every vector of the model.
        skip_missing : bool
            With ``ids``: leave out the ids without a vector of ``model`` instead of raising.

        Returns
        -------
        EmbeddingsRead
            ``ids`` and ``matrix`` as :meth:`get_embeddings` gives them (with ``skip_missing``,
            only the ids found, in the order given); ``graph_version``, the committed position
            read in the same transaction (None inside this object's own write transaction, and
            in a file without a change log); ``history``, the :attr:`StoreState.history
            <conceptwalk.kb.state.StoreState.history>` it is a position of.

        Raises
        ------
        NotFoundError
            A given id has no vector of ``model`` (without ``skip_missing``).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}, {"id": "b"}])
        >>> _ = kb.set_embeddings("toy", ["a"], [[1.0, 0.0]])
        >>> got = kb.read_embeddings("toy", ["b", "a"], skip_missing=True)
        >>> got.ids, got.matrix.tolist(), got.graph_version == kb.state().graph_version
        (['a'], [[1.0, 0.0]], True)
        """
        with self._read() as conn:
            position: int | None = None
            history = self._keeper.history
            if not self._writing() and self._changelog:
                position, history = self._keeper.position(conn)
            known = _is_text(model)  # (no stored model's name holds a lone surrogate)
            m = self._vector_model(conn, model) if known else None
            if ids is None:
                pairs = (
                    conn.execute(
                        "SELECT node_id, slot FROM vector_slots WHERE model = ? ORDER BY node_id", (model,)
                    ).fetchall()
                    if known
                    else []
                )
                out_ids = [p[0] for p in pairs]
                if not pairs:
                    return EmbeddingsRead(out_ids, np.zeros((0, 0), dtype=np.float32), position, history)
                if m is None:
                    raise StoreDamaged(
                        f"embedding model {shown(model)} has {len(pairs)} slots but no model row (the store is damaged)"
                    )
                slots = [self._slot(model, x, s_, m[2]) for x, s_ in pairs]
                got = self._vector_matrix(conn, model, None)
            else:
                if isinstance(ids, (str, bytes)):
                    raise InputError("get_embeddings: ids must be a sequence of ids, not a single string")
                out_ids = list(ids)
                slot_of: dict[str, int] = {}
                uniq = sorted({x for x in out_ids if isinstance(x, str) and _is_text(x)}) if known else []
                for i in range(0, len(uniq), _IN_BATCH):
                    part = uniq[i : i + _IN_BATCH]
                    slot_of.update(
                        conn.execute(
                            f"SELECT node_id, slot FROM vector_slots WHERE model = ? "
                            f"AND node_id IN ({','.join('?' * len(part))})",
                            [model, *part],
                        )
                    )
                if skip_missing:
                    out_ids = [x for x in out_ids if x in slot_of]
                for x in out_ids:
                    if x not in slot_of:
                        raise NotFoundError(x, "embedding")
                if not out_ids:
                    return EmbeddingsRead(out_ids, np.zeros((0, 0), dtype=np.float32), position, history)
                if m is None:
                    raise StoreDamaged(
                        f"embedding model {shown(model)} has slots but no model row (the store is damaged)"
                    )
                slots = [self._slot(model, x, slot_of[x], m[2]) for x in out_ids]
                got = self._vector_matrix(conn, model, (s_ // m[1] for s_ in slots))
            assert got is not None  # the model row was read in this transaction
            mat, _ = got
        return EmbeddingsRead(out_ids, np.ascontiguousarray(mat[np.array(slots, dtype=np.int64)]), position, history)

    def node(self, node_id: str) -> dict[str, Any] | None:
        """One node's stored fields.

        Parameters
        ----------
        node_id : str
            The node's id.

        Returns
        -------
        dict or None
            ``{"id", "type", "title", "body", "scopes", "lifecycle"}``, or None when there is
            no such node.
        """
        if not isinstance(node_id, str):
            raise InputError(f"node: node_id must be a string, got {type(node_id).__name__}")
        if not _is_text(node_id):
            return None  # (no stored id holds a lone surrogate)
        with self._locked() as conn:
            r = conn.execute(
                "SELECT id, type, title, body, scopes, lifecycle FROM nodes WHERE id = ?", (node_id,)
            ).fetchone()
            return None if r is None else _node_dict(r)

    def nodes(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        """The stored fields of several nodes, read in one read transaction.

        Parameters
        ----------
        ids : iterable of str
            The ids wanted (not a single string).

        Returns
        -------
        list of dict
            The rows of the ids that exist, in the order given (missing ids are left out;
            repeats are repeated), with the keys of :meth:`node`.
        """
        if isinstance(ids, (str, bytes)):
            raise InputError("nodes: ids must be an iterable of ids, not a single string")
        want = list(ids)
        uniq = sorted({x for x in want if isinstance(x, str) and _is_text(x)})
        got: dict[str, dict[str, Any]] = {}
        with self._read() as conn:
            for i in range(0, len(uniq), _IN_BATCH):
                part = uniq[i : i + _IN_BATCH]
                q = (
                    f"SELECT id, type, title, body, scopes, lifecycle FROM nodes "
                    f"WHERE id IN ({','.join('?' * len(part))})"
                )
                for r in conn.execute(q, part):
                    got[r[0]] = _node_dict(r)
        return [dict(got[x]) for x in want if x in got]

    def aliases(self) -> dict[str, list[str]]:
        """Every alias with its canonical ids.

        Returns
        -------
        dict of str to list of str
            Alias -> its canonical ids, both ascending.
        """
        out: dict[str, list[str]] = {}
        with self._locked():
            for a, c in self.conn.execute("SELECT alias, canonical FROM aliases ORDER BY alias, canonical"):
                out.setdefault(a, []).append(c)
        return out

    def _tallies(self, conn: sqlite3.Connection) -> dict[str, int] | None:
        """The ``tallies`` rows (schema 4), or None for an older store opened read-only (which
        has none) or rows that are not counts (a damaged store: counted the long way)."""
        try:
            rows = conn.execute("SELECT name, n FROM tallies").fetchall()
        except sqlite3.OperationalError:
            return None
        out = {str(k): v for k, v in rows}
        want = [f"edges.{k}" for k in ANNOTATION_AXES] + ["aliases", "embeddings"]
        if any(isinstance(out.get(k), bool) or not isinstance(out.get(k), int) or out[k] < 0 for k in want):
            return None
        return out

    def aliases_version(self) -> int | None:
        """A count of the alias rows ever written to this store (inserted, deleted or changed,
        kept by a trigger in each write's transaction): while it is unchanged the aliases are,
        so a reader keeps what it derived from them across writes of anything else.

        Returns
        -------
        int or None
            None for a store older than schema 4 opened read-only (it keeps no count), and
            inside this object's own write transaction (its count is not committed: a rollback
            and another write reach it again with other rows).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}])
        >>> v = kb.aliases_version()
        >>> _ = kb.add_aliases([("alpha", "a")])
        >>> _ = kb.add_nodes([{"id": "b"}])
        >>> kb.aliases_version() - v
        1
        """
        with self._read() as conn:
            got = None if self._writing() else self._tallies(conn)
        return None if got is None else got["aliases"]

    def embeddings_version(self) -> int | None:
        """A count of the rows ever written to the stored embeddings (any model; kept by
        triggers in each write's transaction): while it is unchanged every stored vector is, so
        a reader keeps the vectors it read across writes of anything else (see
        :meth:`aliases_version`).

        Returns
        -------
        int or None
            None for a store older than schema 4 opened read-only, and inside this object's
            own write transaction.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}, {"id": "b"}])
        >>> v = kb.embeddings_version()
        >>> _ = kb.add_nodes([{"id": "c"}])
        >>> kb.embeddings_version() == v
        True
        >>> _ = kb.set_embeddings("toy", ["a", "b"], [[1, 0], [0, 1]])
        >>> kb.embeddings_version() > v
        True
        """
        with self._read() as conn:
            got = None if self._writing() else self._tallies(conn)
        return None if got is None else got["embeddings"]

    def has_embeddings(self, model: str) -> bool:
        """Whether any node has a stored vector of ``model`` (one indexed lookup; no vector is read).

        Parameters
        ----------
        model : str

        Returns
        -------
        bool

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}])
        >>> _ = kb.set_embeddings("toy", ["a"], [[1.0, 0.0]])
        >>> kb.has_embeddings("toy"), kb.has_embeddings("other")
        (True, False)
        """
        if not _is_text(str(model)):
            return False  # (no stored model's name holds a lone surrogate)
        with self._read() as conn:
            return (
                conn.execute("SELECT 1 FROM vector_slots WHERE model = ? LIMIT 1", (str(model),)).fetchone() is not None
            )

    def annotation_presence(self) -> dict[str, int]:
        """Per annotation axis, how many stored edges have a value.

        Read from the store's tallies, which triggers keep in the transaction of every write
        (schema 4), so a read after a write counts nothing. A store older than that opened
        read-only has no tallies: there the edges are counted in the read transaction that reads
        the graph's change-log position, and the counts kept with the snapshot
        (:meth:`keep_derived_arrays`).

        Returns
        -------
        dict of str to int
            :data:`ANNOTATION_AXES` -> the number of edges where that column is not null.
        """
        with self._lock:
            with self._read() as conn:
                tallied = self._tallies(conn)
                if tallied is not None:
                    return {k: tallied[f"edges.{k}"] for k in ANNOTATION_AXES}
                gv = self._keeper.graph_version(conn)
                kept = None if self._depth else self.derived_arrays("kb.presence", gv)
                got = _presence_from(kept)
                if got is not None:
                    return got
                r = conn.execute(
                    "SELECT " + ", ".join(f"count({k})" for k in ANNOTATION_AXES) + " FROM edges"
                ).fetchone()
            out = {k: int(v) for k, v in zip(ANNOTATION_AXES, r)}
            if not self._depth:  # one part per axis, named by it: a changed axis set reads nothing
                self.keep_derived_arrays("kb.presence", gv, {k: np.array([v], dtype=np.int64) for k, v in out.items()})
        return out

    def derived_arrays(
        self, name: str, graph_version: int, *, history: int | None = None
    ) -> dict[str, npt.NDArray[Any]] | None:
        """Arrays derived from the graph at change-log position ``graph_version`` and kept under
        ``name`` (:meth:`keep_derived_arrays`), read from the verified snapshot file (with the
        state: call :meth:`state` first) or kept in this object; None when there are none for
        that position.

        Parameters
        ----------
        name : str
            The name they were kept under.
        graph_version : int
            The position they must belong to (:attr:`StoreState.graph_version
            <conceptwalk.kb.state.StoreState.graph_version>`).
        history : int, optional
            The :attr:`StoreState.history <conceptwalk.kb.state.StoreState.history>` of the state
            the position was read in: None when this object has found its change log replaced
            since (a position of the other log).

        Returns
        -------
        dict of str to numpy.ndarray, or None
            Read-only (mapped from the file when they came from it).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}])
        >>> gv = kb.state().graph_version
        >>> kb.keep_derived_arrays("demo.squares", gv, {"v": np.arange(3) ** 2})
        >>> kb.derived_arrays("demo.squares", gv)["v"].tolist(), kb.derived_arrays("demo.squares", gv + 1)
        ([0, 1, 4], None)
        """
        return self._keeper.derived_arrays(name, graph_version, history=history)

    def derived_arrays_before(
        self, name: str, graph_version: int, *, history: int | None = None
    ) -> tuple[LinkGraph, int, dict[str, npt.NDArray[Any]]] | None:
        """The arrays kept under ``name`` for an earlier position (or this one), with the graph
        of that position, so a reader can bring them forward to ``graph_version`` through
        :meth:`changed_nodes` instead of deriving them again (the concepts' title vectors after
        a write re-embed only the changed titles).

        Parameters
        ----------
        name : str
            The name they were kept under (:meth:`keep_derived_arrays`).
        graph_version : int
            The position wanted.
        history : int, optional
            The :attr:`StoreState.history <conceptwalk.kb.state.StoreState.history>` of the state
            the position was read in: None when this object has found its change log replaced
            since (a position of the other log).

        Returns
        -------
        (LinkGraph, int, dict of str to numpy.ndarray) or None
            The graph and position they belong to (``<= graph_version``) and the arrays
            (read-only); None when none are held (a position this object no longer holds, or
            inside its own write transaction).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a"}])
        >>> gv = kb.state().graph_version
        >>> kb.keep_derived_arrays("demo.count", gv, {"n": np.array([1])})
        >>> _ = kb.add_nodes([{"id": "b"}])
        >>> g, v, arrays = kb.derived_arrays_before("demo.count", kb.state().graph_version)
        >>> g.ids, v == gv, arrays["n"].tolist(), kb.changed_nodes(v, kb.state().graph_version)
        (['a'], True, [1], ['b'])
        """
        return self._keeper.derived_arrays_before(name, graph_version, history=history)

    def changed_nodes(
        self, since: int, until: int, *, text: bool = False, vectors: str | None = None, limit: int | None = None
    ) -> list[str] | None:
        """The ids of the nodes inserted, deleted or changed in a column the graph reads (id,
        type, title, scopes, lifecycle) between two committed change-log positions, read from
        the change log (what brings the graph, the text index and derived arrays forward).

        Parameters
        ----------
        since, until : int
            Positions (:attr:`StoreState.graph_version
            <conceptwalk.kb.state.StoreState.graph_version>`) with ``0 <= since <= until``.
        text : bool
            Also the nodes whose body alone changed.
        vectors : str, optional
            Also the nodes whose stored vector of this embedding model was written or deleted
            (schema 4 logs them; every node of a rewritten chunk is named).
        limit : int, optional
            Give None when more than this many changes lie between them.

        Returns
        -------
        list of str or None
            Ascending (an id deleted since is included). None when the log cannot tell: a
            store without a change log, a bulk load's ``reset`` or a gap between them, more
            than ``limit`` changes, positions out of order, inside this object's own write
            transaction, or ``since`` before the change log was found replaced under this
            object (a restored backup: :attr:`StoreState.history
            <conceptwalk.kb.state.StoreState.history>`).
        """
        return self._keeper.changed_nodes(since, until, text=text, vectors=vectors, limit=limit)

    def keep_derived_arrays(
        self, name: str, graph_version: int, arrays: Mapping[str, npt.ArrayLike], *, history: int | None = None
    ) -> None:
        """Keep arrays a reader derived from the graph at change-log position ``graph_version``
        and nothing else of the store (the vectors of the concepts' titles, counts over the
        edges), so that the next reader -- in this process or, through the snapshot file, in a
        fresh one -- reads them instead of deriving them again. They belong to that position
        only, and one position is kept at a time: keeping arrays for a later position drops
        those of the earlier one, and the snapshot saved for a later position does not hold
        them. Only a committed position this object has read is kept: inside its own write
        transaction nothing is (a rollback and another write reach the same position with other
        rows). A writable open whose snapshot file is at that position rewrites it once to add
        them (as it does to add the text index); otherwise they go with the next regular save. A
        read-only open cannot save and keeps nothing (the reader keeps what it derived for
        itself).

        Parameters
        ----------
        name : str
            ``[A-Za-z0-9_:-]`` parts joined by dots, named after the layer that derives them
            (``"wrap.vectors.hashing"``).
        graph_version : int
            The position they were derived at.
        arrays : mapping of str to array
            Part name (``[A-Za-z0-9_]+``) -> a numeric array.
        history : int, optional
            The :attr:`StoreState.history <conceptwalk.kb.state.StoreState.history>` of the state
            they were derived from: nothing is kept when this object has found its change log
            replaced since (they belong to a position of the other log).

        Raises
        ------
        InputError
            A malformed name or part, or an array that is not numeric.
        """
        self._keeper.keep_derived_arrays(name, graph_version, arrays, history=history)

    def edge_presence(self) -> tuple[list[str], npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
        """Every stored edge's endpoints and which annotation axes it has a value for, read in one
        read transaction: ``(ids, src, dst, bits)`` with ``ids`` the node ids ascending, ``src``/``dst``
        positions into ``ids`` and bit ``i`` of ``bits`` set when axis ``ANNOTATION_AXES[i]`` holds
        a value. What counts over the edges a caller sees are computed from (self-loops
        included, as in :meth:`annotation_presence`).

        Returns
        -------
        ids : list of str
            Every node id, ascending.
        src, dst : numpy.ndarray of int32
            Per stored edge, its endpoints as positions into ``ids``.
        bits : numpy.ndarray of uint8
            Per stored edge, bit ``i`` set when axis ``ANNOTATION_AXES[i]`` has a value.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([{"src": "a", "dst": "b", "fidelity": "HIGH"}, ("b", "c")])
        >>> ids, src, dst, bits = kb.edge_presence()
        >>> ids, src.tolist(), dst.tolist(), bits.tolist()
        (['a', 'b', 'c'], [0, 1], [1, 2], [2, 0])
        """
        expr = " | ".join(f"(({k} IS NOT NULL) << {i})" for i, k in enumerate(ANNOTATION_AXES))
        with self._read() as conn:
            ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]
            rows = conn.execute(f"SELECT src, dst, {expr} FROM edges").fetchall()
        table = {x: i for i, x in enumerate(ids)}
        names = list(ids)
        cols = list(zip(*rows)) if rows else [(), (), ()]
        try:
            src = intern_strings(list(cols[0]), table, names)
            dst = intern_strings(list(cols[1]), table, names)
        except (TypeError, ValueError):
            raise ConceptwalkError(
                f"knowledge base {self.path!r}: an edge endpoint is not a string (the store is damaged)"
            ) from None
        if len(names) != len(ids):
            raise ConceptwalkError(
                f"knowledge base {self.path!r}: an edge endpoint is not a node (the store is damaged)"
            )
        return (
            ids,
            np.asarray(src, dtype=np.int32),
            np.asarray(dst, dtype=np.int32),
            np.asarray(cols[2], dtype=np.uint8).reshape(-1),
        )

    def stats(self) -> dict[str, Any]:
        """Counts, read in one read transaction: ``nodes``, ``nodes_by_type`` (typed nodes only),
        ``untyped_nodes`` (bare nodes), ``edges``, ``edges_by_type``, ``aliases`` (pairs),
        ``embeddings`` (per model), ``annotations`` (per axis, edges with a value),
        ``public_nodes`` (nodes without scopes), ``scopes`` (each scope with the number of nodes
        carrying it: what ``--scopes`` can name), plus ``version`` and ``schema_version``. This is
        the operator's (all-access) view of the whole store.

        Returns
        -------
        dict
            The counts above (JSON-serialisable).
        """
        with self._read() as conn:
            by_type = dict(conn.execute("SELECT type, count(*) FROM nodes GROUP BY type ORDER BY type").fetchall())
            untyped = int(by_type.pop(None, 0))
            edges_by_type = dict(
                conn.execute("SELECT type, count(*) FROM edges GROUP BY type ORDER BY type").fetchall()
            )
            r = conn.execute(
                "SELECT " + ", ".join(f"count({k})" for k in ANNOTATION_AXES) + ", count(*) FROM edges"
            ).fetchone()
            out = {
                "version": meta_int(conn, "version"),
                "schema_version": meta_int(conn, "schema_version"),
                "nodes": untyped + sum(by_type.values()),
                "nodes_by_type": {str(k): int(v) for k, v in by_type.items()},
                "untyped_nodes": untyped,
                "edges": int(r[-1]),
                "edges_by_type": {str(k): int(v) for k, v in edges_by_type.items()},
                "aliases": int(conn.execute("SELECT count(*) FROM aliases").fetchone()[0]),
                "embeddings": {
                    str(m): int(c)
                    for m, c in conn.execute("SELECT model, count(*) FROM vector_slots GROUP BY model ORDER BY model")
                },
                "annotations": {k: int(v) for k, v in zip(ANNOTATION_AXES, r[:-1])},
                "public_nodes": int(
                    conn.execute("SELECT count(*) FROM nodes WHERE scopes IS NULL OR scopes = '[]'").fetchone()[0]
                ),
                # json_valid first: a damaged scopes value is reported by graph(), naming the node
                "scopes": {
                    str(sc): int(c)
                    for sc, c in conn.execute(
                        "SELECT j.value, count(DISTINCT n.id) FROM (SELECT id, scopes FROM nodes WHERE "
                        "scopes IS NOT NULL AND json_valid(scopes) AND json_type(scopes) = 'array') AS n, "
                        "json_each(n.scopes) AS j GROUP BY j.value ORDER BY j.value"
                    )
                },
            }
        return out

    def search(
        self, text: str, k: int = 10, *, node_types: Iterable[str] | None = None, caller: Caller | None = None
    ) -> list[tuple[str, float]]:
        """Full-text search over node titles and bodies, as ``caller`` sees the store: BM25 over
        the caller's visible nodes only (see :mod:`conceptwalk.graph.text`).

        Every statistic (the number of nodes, each word's document frequency, the average
        length) is counted over the visible nodes, so each score equals the score on this store
        with the caller's hidden nodes deleted, and hidden nodes are never returned.

        Parameters
        ----------
        text : str
            Arbitrary user text (empty or blank: :class:`InputError`). Every word (letters and
            digits) but the analyzer's stopwords (the Snowball English stop list) is a search
            term; there is no query syntax, so punctuation, quotes and operators (``AND``,
            ``NEAR``, ``-``, ``:``, ``*``) are plain words or separators and never an error; a
            text without word characters, or of stopwords only, gives ``[]``. Matching is
            case-insensitive, diacritic-insensitive and stemmed (Snowball English); title words
            count double. The visible nodes the text names by id or alias (whole words of the
            text equal to a normalised id or alias: :mod:`conceptwalk.graph.names`) come first.
        k : int
            The most hits to return.
        node_types : iterable of str, optional
            Only nodes of these types (the statistics stay those of everything visible).
        caller : Caller, optional
            Whose visibility applies. Omitted = :meth:`Caller.public` (public nodes only: an
            entry point never defaults to all access); pass :meth:`Caller.all_access` for the
            operator's own view.

        Returns
        -------
        list of (id, score)
            The named nodes first (the longer name first, then id), each with its BM25 score
            when the text search scores it among the top ``k``, else 0.0; then the other hits by
            BM25 score (higher is better) descending, then id ascending.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "type": "DOC", "title": "Graph walks", "body": "random walk"},
        ...                   {"id": "b", "type": "CONCEPT", "title": "Walking", "body": None},
        ...                   {"id": "s", "type": "DOC", "title": "Walks", "scopes": ["t1"]}])
        >>> from conceptwalk import Caller
        >>> [i for i, _ in kb.search('walk AND "graph', caller=Caller.all_access())]
        ['a', 'b', 's']
        >>> [i for i, _ in kb.search("walk", node_types=["CONCEPT"])], kb.search("-:*")
        (['b'], [])
        >>> [i for i, _ in kb.search("walk")]  # no caller: public nodes only
        ['b', 'a']
        """
        if not isinstance(text, str):
            raise InputError(f"search: text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise InputError("search: text is empty: give words to search for")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"search: k must be a positive integer, got {k!r}")
        if caller is not None and not isinstance(caller, Caller):
            raise InputError(f"search: caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        live = self._live_search(text, k, node_types, Caller.public() if caller is None else caller)
        if live is not None:
            return live
        try:
            st = self.state()  # the graph and its text index of one committed state
        except InputError:  # no nodes: nothing to find
            return []
        caller = Caller.public() if caller is None else caller  # fail closed
        view = st.view(caller)
        warn_unknown_scopes(self, st.graph, caller)
        names = source_name_indexes(st.graph, self, st)
        return named_search(st.text_index, st.graph, text, k, view=view, node_types=node_types, names=names)

    def _live_search(
        self, text: str, k: int, node_types: Iterable[str] | None, caller: Caller
    ) -> list[tuple[str, float]] | None:
        """:meth:`search` over the live graph, or None: the snapshot path answers."""
        ls = self.live_search(caller)
        if ls is None:
            return None
        warn_unknown_scopes(self, ls.live, caller)  # (as the snapshot path warns: a typo grants nothing)
        return ls.search(text, k, node_types)

    def live_search(self, caller: Caller, *, changed_only: bool = False) -> LiveSearch | None:
        """The caller's search over the live graph (:meth:`live_graph` and its text: the base's
        text index plus the texts written since), which answers as :meth:`search` over a fresh
        snapshot would, at the cost of the change; or None, and the snapshot path answers: a
        store with no nodes, inside its own write transaction, a visibility or a batch the delta
        does not express, or a base whose state this store no longer holds. (A scope the caller
        names that no node carries is not warned about here: :meth:`search` warns as its
        snapshot path does.)

        Parameters
        ----------
        caller : Caller
        changed_only : bool
            None also when nothing was written since the live graph's base (the full state is
            current then, and its one compiled call answers a question).

        Returns
        -------
        LiveSearch or None

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "graph walks"}])
        >>> _ = kb.search("walks", 3)  # the base's state
        >>> _ = kb.add_nodes([{"id": "b", "title": "walks"}])
        >>> ls = kb.live_search(Caller.all_access())
        >>> [ls.id_at(s) for s in ls.hits("walks", 3)[0]], ls.search("b walks", 3)[0][0]
        (['b', 'a'], 'b')
        """
        try:
            live = self.live_graph()
        except InputError:  # no nodes: the snapshot path says what it says of that
            return None
        if live.version < 0 or live.num_nodes == 0 or (changed_only and live.version == live.base_version):
            return None
        base_state = self._keeper.live_base_state(live)
        if base_state is None:
            return None
        view = base_view = None
        if caller.scopes is not None:
            view = live.view(caller.scopes)
            if view is None:
                return None
            base_view = base_state.view(caller)
        text = live.text(base_state.text_index)
        if text is None:
            return None
        stats = base_state.text_index.stats_for(base_view)
        return LiveSearch(live, text, view, stats, live_name_indexes(self, live, base_state), base_state)

    def state(self, *, annotations: bool = True) -> StoreState:
        """The store's current committed state: its graph snapshot, the text index of that graph
        and the version counters, read together in one SQLite read transaction (see
        :class:`~conceptwalk.kb.state.StoreState`).

        A reader that answers from one state sees one committed state of the store from start to
        end: a write committed meanwhile (by any process) is seen by the next call, never half
        by this one. The state is cached: while the store is unchanged the same object is
        returned (one read of the two counters); after writes its graph and text index are
        brought forward from the previous ones at the cost of the change (as :meth:`graph` and
        :meth:`text_index` do).

        Parameters
        ----------
        annotations : bool
            ``False`` gives the state whose graph is the lighter projection without the edge
            annotation columns (``graph(annotations=False)``); the text index is the same.

        Returns
        -------
        StoreState

        Raises
        ------
        InputError
            The store holds no nodes (a graph cannot be empty).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}, {"id": "b", "title": "Push"}])
        >>> st = kb.state()
        >>> st.graph.num_nodes, st.text_index.search("walk", 5)[0], kb.state() is st
        (2, [0], True)
        >>> kb.state(annotations=False).graph is kb.graph(annotations=False)
        True
        """
        return self._keeper.state(annotations=annotations)

    def kept_state(self, *, annotations: bool = True) -> StoreState | None:
        """:meth:`state` when this object holds the current state already (nothing written since
        it was made; one read of the position), else None: nothing is built (a reader that can
        answer from :meth:`live_graph` then does, and :meth:`state` builds the state otherwise).

        Parameters
        ----------
        annotations : bool
            As in :meth:`state`.

        Returns
        -------
        StoreState or None

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}])
        >>> st = kb.state()
        >>> kb.kept_state() is st
        True
        >>> _ = kb.add_nodes([{"id": "b", "title": "Push"}])
        >>> kb.kept_state() is None
        True
        """
        return self._keeper.kept_state(annotations=annotations)

    def text_index(self, graph: LinkGraph | None = None) -> TextIndex | None:
        """The text index of the graph snapshot ``graph`` (default: the current one), documents
        in its node order, cached beside the graph. After writes (from any process) it is
        brought forward from the previous one (or the one saved in the snapshot file) along the
        change log: only the documents of the changed nodes are read back and tokenised, the
        others keep their postings (equal to a fresh build); a bulk load, a gap in the log or
        more changes than a rebuild costs builds it from every row.

        A reader that needs a graph *and* its text index takes both from one :meth:`state`:
        ``text_index(g)`` for a ``g`` read earlier can only be answered while the store still
        holds ``g``'s state (or ``g`` is the graph of the last state read), so it is ``None``
        when the store's graph changed since ``g`` was read, and for a graph that is not this
        store's.

        Parameters
        ----------
        graph : LinkGraph, optional
            A snapshot this store returned from :meth:`graph` or :meth:`state`.

        Returns
        -------
        TextIndex or None

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}])
        >>> ix = kb.text_index()
        >>> ix.num_docs, ix.vocabulary, kb.text_index() is ix
        (1, ['graph', 'walk'], True)
        """
        return self._keeper.text_index(graph)

    @property
    def fts_enabled(self) -> bool:
        """Whether the store keeps the operator's FTS5 index (:meth:`enable_fts`).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.fts_enabled
        False
        >>> kb.enable_fts(), kb.fts_enabled
        (True, True)
        """
        with self._locked():
            return _has_fts(self.conn)

    def enable_fts(self) -> bool:
        """Build SQLite's FTS5 index over every node's title and body, and keep it from then on.

        The index serves only :meth:`fts_search`. The package's own search (:meth:`search`,
        the wrap, the tools) reads its caller-exact text index and never needs it, so a store
        does not keep it until asked: without it, a node write skips FTS5's work (part of every
        agent turn's write) and a bulk load skips its one pass (a JSONL load of 1M nodes with
        titles and bodies and 2M edges took 1.45-1.65x as long with it; docs/storage.md). Once built, triggers in the file keep it in
        step with every later write, by any process. :meth:`fts_search` builds it on first use.

        Returns
        -------
        bool
            True when it was built now; False when the store already had it. A table that
            lacks one of its triggers (a hand edit) is rebuilt and given them (True).

        Raises
        ------
        ConceptwalkError
            The store is read-only, or this is called inside a :meth:`transaction` (build it
            before or after).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}])
        >>> kb.enable_fts(), kb.enable_fts()
        (True, False)
        >>> kb.fts_search("walking")
        [('a', ...)]
        """
        return self._set_fts(True)

    def disable_fts(self) -> bool:
        """Drop the FTS5 index and its triggers (the reverse of :meth:`enable_fts`).

        A store written by a version before the index became optional has it; dropping it
        makes every later node write cheaper. Nothing else reads it.

        Returns
        -------
        bool
            True when it was dropped now (or triggers left without their table were); False
            when the store had none.

        Raises
        ------
        ConceptwalkError
            As :meth:`enable_fts`.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> kb.enable_fts(), kb.disable_fts(), kb.fts_enabled
        (True, True, False)
        """
        return self._set_fts(False)

    def _set_fts(self, on: bool) -> bool:
        what = "enable_fts" if on else "disable_fts"
        with self._locked(reading=False) as conn:
            if self.read_only:
                raise ConceptwalkError(f"{self.path!r} is open read-only: {what}() writes to it")
            if self._depth:
                raise ConceptwalkError(f"{what}() inside a transaction: call it before or after the transaction")
            # Its own transaction, without the version counter: no node, edge or alias changes,
            # so no reader's graph, text index or snapshot does.
            conn.execute("BEGIN IMMEDIATE")
            try:
                have, triggers = _has_fts(conn), _fts_triggers(conn)
                whole = have and len(triggers) == len(_FTS_TRIGGERS)
                if whole if on else not (have or triggers):
                    conn.execute("ROLLBACK")
                    return False
                if on:  # (a table without all its triggers, edited by hand, may be stale: rebuilt)
                    conn.execute(_FTS_TABLE)
                    conn.execute(_FTS_CONFIG)  # before the rebuild: its config cookie is in the index
                    if have or conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None:
                        _rebuild_fts(conn)  # (an empty index is what the new table holds)
                    for sql in _FTS_TRIGGERS.values():
                        conn.execute(sql)
                else:  # (triggers left without their table, a hand edit, fail every node write)
                    for name in _FTS_TRIGGERS:
                        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
                    conn.execute("DROP TABLE IF EXISTS nodes_fts")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return True

    def fts_search(self, text: str, k: int = 10, *, node_types: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """The operator's FTS5 search (bm25 over *every* node, titles weigh double; the query's
        word tokens OR-ed). Its statistics count all nodes, so it is never shown to a caller
        with a narrower view: callers use :meth:`search`.

        The first call on a store without the FTS5 index builds it (:meth:`enable_fts`: one
        pass over the nodes, about 10-12 s per million nodes with 30-word bodies, holding the
        write lock); a read-only store without it raises.

        Parameters
        ----------
        text : str
            Arbitrary text; its word tokens are quoted and OR-ed (never a syntax error).
        k : int
            The most hits.
        node_types : iterable of str, optional
            Only nodes of these types.

        Returns
        -------
        list of (id, score)
            ``score = -bm25`` (higher is better), ordered by bm25 then id.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "title": "Graph walks"}, {"id": "b", "title": "Walking"}])
        >>> sorted(i for i, _ in kb.fts_search("walk"))
        ['a', 'b']
        """
        if not isinstance(text, str):
            raise InputError(f"search: text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise InputError("search: text is empty: give words to search for")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"search: k must be a positive integer, got {k!r}")
        q = _fts_query(text)
        if q is None:
            return []
        sql = (
            "SELECT n.id, bm25(nodes_fts, 2.0, 1.0) AS s FROM nodes_fts "
            "JOIN nodes n ON n.rid = nodes_fts.rowid WHERE nodes_fts MATCH ?"
        )
        args: list[Any] = [q]
        if node_types is not None:
            if isinstance(node_types, str):
                node_types = [node_types]
            types = sorted({str(t) for t in node_types})
            if not types:
                return []
            sql += f" AND n.type IN ({','.join('?' * len(types))})"
            args.extend(types)
        sql += " ORDER BY s, n.id LIMIT ?"
        args.append(k)
        for _ in range(3):
            with self._read() as conn:  # one read transaction: the check and the query see one schema
                if _has_fts(conn):
                    return [(i, -float(s)) for i, s in conn.execute(sql, args).fetchall()]
            if self.read_only or self._depth:
                why = "is open read-only: open it writable once and" if self.read_only else "is inside a transaction:"
                raise ConceptwalkError(
                    f"{self.path!r} has no FTS5 index and {why} call enable_fts() first "
                    f"(or use search(), which needs none)"
                )
            self.enable_fts()
        raise ConceptwalkError(f"{self.path!r}: another connection keeps dropping the FTS5 index (disable_fts)")

    # ------------------------------------------------------------------ the graph snapshot
    #: Changes after which an open store re-saves its snapshot file (so a fresh process has
    #: little of the change log to apply), or 1% of the graph's nodes plus edges when that is
    #: more (saving costs a write of the whole file); a full build always saves it.
    SNAPSHOT_SAVE_EVERY = 1000

    @property
    def snapshot_path(self) -> str | None:
        """Where the graph snapshot of a file store is saved (``<store>.snapshot``), or None for
        an in-memory store."""
        return self._keeper.snapshot_path

    def graph(self, *, annotations: bool = True) -> LinkGraph:
        """The :class:`LinkGraph` snapshot of the store (one consistent read).

        Cached and kept current at the cost of the change: each call reads the change-log
        position (one ``SELECT``); when writes (from any process) moved it, only the nodes and
        edges they changed are read back and the arrays are rebuilt from the previous ones
        (identical to a fresh build). Writes that cannot change the graph (bodies, aliases,
        embeddings) leave the snapshot as it is. A fresh process maps the snapshot saved beside
        the store (``<store>.snapshot``) instead of reading every row, when it matches the store.

        Parameters
        ----------
        annotations : bool
            Load the five edge annotation columns (``False`` loads the structure, node
            attributes and edge types only: a lighter projection).

        Returns
        -------
        LinkGraph
            The immutable snapshot (the same object while the store is unchanged).

        Raises
        ------
        InputError
            The store holds no nodes (a graph cannot be empty).

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b")])
        >>> g = kb.graph()
        >>> kb.graph() is g
        True
        >>> _ = kb.add_edges([{"src": "b", "dst": "c"}])
        >>> kb.graph() is g, kb.graph().num_nodes
        (False, 3)
        """
        return self._keeper.graph(annotations=annotations)

    def live_graph(self) -> LiveGraph:
        """The store's graph as an immutable base plus a small delta of the nodes and edges
        added since (:class:`~conceptwalk.graph.live.LiveGraph`; issue 31, ``docs/live_store.md``).

        Where :meth:`graph` brings the whole snapshot forward after every write (at memory speed,
        but over the whole store), this brings a delta forward at the cost of the change: the
        nodes and edges a write added take new slots, and only the rows they touch are rebuilt.
        A query over it equals the same query over :meth:`graph` bit for bit. A change a delta
        does not express (a deleted node or edge, a bulk load) or a full delta
        (:attr:`StateKeeper.LIVE_DELTA_NODES <conceptwalk.kb.state.StateKeeper.LIVE_DELTA_NODES>`)
        starts a new one over :meth:`graph`; before that, past
        :attr:`StateKeeper.LIVE_COMPACT_NODES <conceptwalk.kb.state.StateKeeper.LIVE_COMPACT_NODES>`
        written nodes, a background thread makes the new base and a later read takes it, so the
        reads do not make it unless the writer outpaces the thread (a store in a file). ``graph_context`` (from concepts or a question, with
        or without a node-type filter), ``link_suggest`` (resource allocation), ``graph_path`` and
        :meth:`search` (through its text, :meth:`LiveGraph.text
        <conceptwalk.graph.live.LiveGraph.text>`) read it for every caller; everything else reads
        :meth:`graph`.

        Once a read made one, each commit of this object's own writes asks the process's
        catch-up thread to grow it 2 ms later (:attr:`StateKeeper.CATCH_UP
        <conceptwalk.kb.state.StateKeeper.CATCH_UP>`), so that a read a moment after a write
        (an agent's next turn) finds it grown; a read at once grows it itself.

        Returns
        -------
        LiveGraph
            The same object while the store is unchanged.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "c")])
        >>> base = kb.graph()
        >>> _ = kb.add_edges([("b", "c")])
        >>> live = kb.live_graph()
        >>> live.base is base, live.num_nodes, live.delta_nodes, kb.live_graph() is live
        (True, 3, 1, True)
        """
        return self._keeper.live_graph()
