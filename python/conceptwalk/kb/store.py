"""The embedded knowledge-base store: one SQLite file (WAL) holding nodes, annotated edges,
aliases, embeddings and an FTS5 index, with a cached :class:`~conceptwalk.graph.LinkGraph`
snapshot revalidated in O(1) by a version counter.

Schema (``PRAGMA user_version`` and ``meta.schema_version`` = :data:`SCHEMA_VERSION`)::

    meta(key TEXT PRIMARY KEY, value)             -- 'schema_version', 'version' (write counter)
    nodes(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type, title, body,
          scopes /* JSON list text */, lifecycle)
    edges(src, dst, type NOT NULL, authority, fidelity, extraction_method,
          extraction_confidence REAL, lifecycle, UNIQUE(src, dst, type))
    aliases(alias, canonical REFERENCES nodes(id), PRIMARY KEY(alias, canonical))
    embeddings(node_id REFERENCES nodes(id), model, dim, vector BLOB /* float32 LE */,
               PRIMARY KEY(node_id, model))
    nodes_fts  -- FTS5 external-content index over nodes(title, body), kept in sync by triggers

``nodes.rid`` is an explicit ``INTEGER PRIMARY KEY`` so the FTS5 external-content rowids stay
stable across ``VACUUM``; ``id`` is the node's key everywhere else. A provenance value that is a
JSON number or boolean (``fidelity: 0.75``) is stored in its TEXT column as a NUL followed by its
JSON text -- the name the graph gives it -- so it reads back with its type.

:meth:`KnowledgeBase.open` only creates the schema in a new or empty file; any other file must
already be a conceptwalk store (checked through a read-only connection before anything is
written), so another program's database is refused unchanged.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from numbers import Real
from typing import Any

import numpy as np
import numpy.typing as npt

from ..graph import intern_strings
from ..errors import ConceptwalkError, InputError, NotFoundError, StoreNotFoundError, shown
from ..graph import DEFAULT_EDGE_TYPE, EDGE_ANNOTATION_KEYS, Caller, LinkGraph
from ..graph.linkgraph import JSON_VALUE_MARK, annotation_name
from ..graph.text import TextIndex, text_search

__all__ = ["KnowledgeBase", "SCHEMA_VERSION", "NODE_KEYS", "EDGE_KEYS", "ANNOTATION_AXES"]

#: Version of the on-disk schema written by this module.
SCHEMA_VERSION = 1
#: Keys a node row may have.
NODE_KEYS: tuple[str, ...] = ("id", "type", "title", "body", "scopes", "lifecycle")
#: Keys an edge row may have.
EDGE_KEYS: tuple[str, ...] = ("src", "dst", "type") + tuple(EDGE_ANNOTATION_KEYS)
#: The edge annotation axes (nullable columns of ``edges``).
ANNOTATION_AXES: tuple[str, ...] = tuple(EDGE_ANNOTATION_KEYS)

_CHUNK = 4096
_IN_BATCH = 500  # ids per "IN (...)" lookup, well under SQLite's variable limit
_NODE_OPTIONAL = NODE_KEYS[1:]
_EDGE_OPTIONAL = ("type",) + ANNOTATION_AXES
_FTS_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_FTS_MAX_TOKENS = 64

_SCHEMA = f"""
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
CREATE VIRTUAL TABLE IF NOT EXISTS nodes_fts USING fts5(
    title, body, content='nodes', content_rowid='rid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS nodes_fts_ai AFTER INSERT ON nodes BEGIN
    INSERT INTO nodes_fts(rowid, title, body) VALUES (new.rid, new.title, new.body);
END;
CREATE TRIGGER IF NOT EXISTS nodes_fts_ad AFTER DELETE ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, title, body) VALUES ('delete', old.rid, old.title, old.body);
END;
CREATE TRIGGER IF NOT EXISTS nodes_fts_au AFTER UPDATE OF title, body ON nodes BEGIN
    INSERT INTO nodes_fts(nodes_fts, rowid, title, body) VALUES ('delete', old.rid, old.title, old.body);
    INSERT INTO nodes_fts(rowid, title, body) VALUES (new.rid, new.title, new.body);
END;
"""

# Upserts: bit i of the last parameter says whether optional key i was given. A given key
# (even None) overwrites the stored value; an absent key keeps it.
_NODE_UPSERT = (
    "INSERT INTO nodes(id, type, title, body, scopes, lifecycle) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
    "ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{k} = CASE WHEN ?7 & {1 << i} THEN excluded.{k} ELSE {k} END"
                for i, k in enumerate(_NODE_OPTIONAL))
)
_EDGE_UPSERT = (
    "INSERT INTO edges(src, dst, type, authority, fidelity, extraction_method, "
    "extraction_confidence, lifecycle) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
    "ON CONFLICT(src, dst, type) DO UPDATE SET "
    + ", ".join(f"{k} = CASE WHEN ?9 & {1 << i} THEN excluded.{k} ELSE {k} END"
                for i, k in enumerate(ANNOTATION_AXES))
)


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
        raise RowError(f"{key!r} must be a string, a finite number (integers within 64 bits), a "
                       f"boolean or null, got {type(v).__name__} {shown(v)}") from None


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
            raise RowError(f"unknown key {shown(k)} (a {what} has {', '.join(allowed)})")
    return row


def node_tuple(row: Any) -> tuple[Any, ...]:
    """Validate one node row; return the parameters of the node upsert. Raises RowError."""
    row = _check_keys(row, NODE_KEYS, "node")
    nid = _req_str(row, "id")
    scopes = row.get("scopes")
    if scopes is not None:
        if isinstance(scopes, (str, bytes)) or not isinstance(scopes, (list, tuple)):
            raise RowError(f"'scopes' must be a list of strings or null, got {type(scopes).__name__} {shown(scopes)}")
        for s in scopes:
            if not isinstance(s, str) or not s:
                raise RowError(f"'scopes' must hold non-empty strings, got {shown(s)}")
        scopes = json.dumps(list(scopes), ensure_ascii=False)
    mask = 0
    for i, k in enumerate(_NODE_OPTIONAL):
        if k in row:
            mask |= 1 << i
    return (nid, _opt_str(row, "type"), _opt_str(row, "title"), _opt_str(row, "body"), scopes,
            _opt_str(row, "lifecycle"), mask)


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
    """Validate one edge row; return the parameters of the edge upsert. Raises RowError."""
    # Fast path for the common well-formed dict; anything unusual takes the checked path below
    # (which accepts a superset of this and produces the error messages).
    if type(row) is dict and not (row.keys() - _EDGE_KEYSET):
        g = row.get
        src, dst, typ = g("src"), g("dst"), g("type")
        au, fi, me, co, li = (g("authority"), g("fidelity"), g("extraction_method"),
                              g("extraction_confidence"), g("lifecycle"))
        if (type(src) is str and src and type(dst) is str and dst
                and (typ is None or (type(typ) is str and typ))
                and (au is None or (type(au) is str and au[:1] != "\x00"))
                and (fi is None or (type(fi) is str and fi[:1] != "\x00"))
                and (me is None or (type(me) is str and me[:1] != "\x00"))
                and (li is None or (type(li) is str and li[:1] != "\x00"))
                and (co is None or (type(co) is float and 0.0 <= co <= 1.0))):
            mask = (("authority" in row) | (("fidelity" in row) << 1)
                    | (("extraction_method" in row) << 2) | (("extraction_confidence" in row) << 3)
                    | (("lifecycle" in row) << 4))
            return (src, dst, default_type if typ is None else typ, au, fi, me, co, li, mask)
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
    return (src, dst, typ, _opt_axis(row, "authority"), _opt_axis(row, "fidelity"),
            _opt_axis(row, "extraction_method"), _confidence(row.get("extraction_confidence")),
            _opt_axis(row, "lifecycle"), mask)


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


class _Damaged(Exception):
    """A stored value this version cannot read (a damaged file, or rows written around the API);
    :meth:`KnowledgeBase._locked` turns it into a :class:`ConceptwalkError` naming the file."""


def _parse_scopes(s: Any, node_id: Any) -> list[str] | None:
    """A stored ``scopes`` value (JSON list text) as a list; :class:`_Damaged` when it is not."""
    if s is None:
        return None
    try:
        v = json.loads(s)
    except (TypeError, ValueError, RecursionError):
        v = s
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _Damaged(f"node {shown(node_id)} has scopes {shown(s)}, not a JSON list of strings "
                       "(the store is damaged)")
    return v


def _meta_int(conn: sqlite3.Connection, key: str) -> int:
    r = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if r is None:
        raise _Damaged(f"the meta row {key!r} is missing (the store is damaged)")
    if isinstance(r[0], bool) or not isinstance(r[0], int):
        raise _Damaged(f"the meta row {key!r} holds {shown(r[0])}, not a count (the store is damaged)")
    return r[0]


def _node_dict(r: Sequence[Any]) -> dict[str, Any]:
    return {"id": r[0], "type": r[1], "title": r[2], "body": r[3],
            "scopes": _parse_scopes(r[4], r[0]), "lifecycle": r[5]}


# ---------------------------------------------------------------------- opening a file
#: Tables (and their columns) every conceptwalk store has; a file without them is not ours.
_STORE_COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "nodes": ("rid", "id", "type", "title", "body", "scopes", "lifecycle"),
    "edges": ("src", "dst", "type") + ANNOTATION_AXES,
    "aliases": ("alias", "canonical"),
    "embeddings": ("node_id", "model", "dim", "vector"),
    "nodes_fts": ("title", "body"),
}


def _not_ours(p: str, why: str) -> ConceptwalkError:
    return ConceptwalkError(f"{p!r} is not a conceptwalk knowledge base ({why}); it was not changed")


def _schema_objects(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])


def _inspect_file(p: str) -> bool:
    """Whether the existing file ``p`` is empty (the schema may be created in it). Raises
    :class:`ConceptwalkError` for a file that is not a conceptwalk store; writes nothing (the
    file is read through a read-only connection)."""
    try:
        if os.path.getsize(p) == 0:
            return True
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc.strerror or exc}") from None
    if head != b"SQLite format 3\x00":
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: file is not a database")
    uri = Path(os.path.abspath(p)).as_uri() + "?mode=ro"
    try:
        ro = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
    except sqlite3.Error as exc:
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
    try:
        ro.execute("PRAGMA busy_timeout = 30000")
        have = int(ro.execute("PRAGMA user_version").fetchone()[0])
        if have == 0 and not _schema_objects(ro):
            return True  # an empty SQLite database
        _check_store(ro, p)
        return False
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise ConceptwalkError(f"cannot open {p!r} as a knowledge base: {exc}") from None
    finally:
        ro.close()


def _check_store(conn: sqlite3.Connection, p: str) -> None:
    """Raise unless ``conn`` holds a conceptwalk store this version can read."""
    have = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if have > SCHEMA_VERSION:
        raise ConceptwalkError(
            f"{p!r} has schema version {have}, newer than this conceptwalk supports "
            f"({SCHEMA_VERSION}); upgrade conceptwalk")
    objects = dict(conn.execute("SELECT name, type FROM sqlite_master").fetchall())
    if have < 1:
        raise _not_ours(p, f"a SQLite database of another program: user_version {have}, "
                           f"{len(objects)} schema objects")
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
            raise ConceptwalkError(f"{p!r}: the meta row {key!r} holds {shown(v)}, not a count "
                                   "(the store is damaged)")
    if meta["schema_version"] != have:
        raise ConceptwalkError(f"{p!r}: meta schema_version {meta['schema_version']} differs from "
                               f"user_version {have} (the store is damaged)")


# ---------------------------------------------------------------------- the store
class KnowledgeBase:
    """A knowledge base in one SQLite file: nodes, typed directed edges with provenance
    annotations, aliases, embeddings and a full-text index.

    Open with :meth:`open`; use as a context manager or call :meth:`close`. Every write method
    is one transaction (all or nothing) and bumps the version counter; :meth:`transaction`
    groups several writes into one. Readers in other processes see committed snapshots (WAL).
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

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        self._conn = conn
        self.path = path
        self._lock = threading.RLock()
        self._depth = 0  # nesting of transaction()
        self._graphs: dict[bool, tuple[int, LinkGraph]] = {}
        self._text: tuple[LinkGraph, TextIndex] | None = None  # the text index of a cached graph

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = True) -> KnowledgeBase:
        """Open (and by default create) the knowledge base stored at ``path``.

        Parameters
        ----------
        path : str or path-like
            The SQLite file; ``":memory:"`` gives a private in-memory store (no WAL).
        create : bool
            Create the file when absent; with ``False`` a missing file raises
            :class:`~conceptwalk.errors.StoreNotFoundError` (a ``FileNotFoundError``). The schema
            is only ever created in a new or empty file.

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
        p = str(os.fspath(path))
        memory = p == ":memory:" or p.startswith("file::memory:")
        fresh = memory
        if not memory:
            if os.path.isdir(p):
                raise ConceptwalkError(f"{p!r} is a directory, not a knowledge base file")
            if not os.path.exists(p):
                if not create:
                    raise StoreNotFoundError(f"knowledge base not found: {p!r}")
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
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only medium
                    raise ConceptwalkError(f"could not switch {p!r} to WAL mode (got {mode!r})")
                conn.execute("PRAGMA synchronous = NORMAL")
            if fresh:
                # One script, one transaction; every statement is idempotent, so two processes
                # creating the same file at once are safe.
                try:
                    conn.executescript("BEGIN IMMEDIATE;" + _SCHEMA
                                       + f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
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

    def close(self) -> None:
        """Close the connection (idempotent). The cached graph snapshots stay usable."""
        with self._lock:
            if self._conn is not None:
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
        """Copy a consistent snapshot of the store into the SQLite connection ``target`` (the
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

        Nested calls (and the write methods called inside) join the outer transaction. The
        version counter is bumped once per outermost transaction.

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
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
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

    @contextmanager
    def _locked(self, *, reading: bool = True) -> Iterator[sqlite3.Connection]:
        """The lock held and the connection. A SQLite error (a damaged page, a locked file, a
        disk error) or an unreadable stored value raised inside becomes a
        :class:`ConceptwalkError` naming the file; so does a stored text that is not UTF-8 when
        ``reading`` (a write transaction's caller, e.g. an importer, decodes its own input and
        reports that error itself)."""
        errors: tuple[type[BaseException], ...] = (sqlite3.DatabaseError, _Damaged)
        if reading:
            errors += (UnicodeDecodeError,)
        with self._lock:
            try:
                yield self.conn
            except errors as exc:
                raise ConceptwalkError(f"knowledge base {self.path!r}: {exc}") from None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every SELECT inside sees one committed snapshot."""
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

    def _write_rows(self, rows: Iterable[Any], check: Callable[[Any], Any],
                    put: Callable[..., None], name: str, *, with_start: bool = False) -> int:
        if isinstance(rows, (str, bytes, Mapping)):
            raise InputError(f"{name}: rows must be an iterable of rows, got {type(rows).__name__}")
        n = 0
        with self.transaction():
            for chunk in _chunks(rows):
                params = []
                for j, row in enumerate(chunk):
                    try:
                        params.append(check(row))
                    except RowError as exc:
                        raise InputError(f"{name}: rows[{n + j}]: {exc}") from None
                if with_start:
                    put(params, n)
                else:
                    put(params)
                n += len(chunk)
        return n

    def put_nodes(self, params: list[tuple[Any, ...]]) -> None:
        """Upsert validated node tuples (:func:`node_tuple`), inside :meth:`transaction`; the bulk
        path of the importers.

        Parameters
        ----------
        params : list of tuple
            Rows already validated by :func:`node_tuple`.
        """
        self.conn.executemany(_NODE_UPSERT, params)

    def put_edges(self, params: list[tuple[Any, ...]]) -> None:
        """Upsert validated edge tuples, creating bare endpoint nodes (inside a transaction).

        Parameters
        ----------
        params : list of tuple
            Rows already validated by :func:`edge_tuple`.
        """
        conn = self.conn
        ends = {p[0] for p in params}
        ends.update(p[1] for p in params)
        conn.executemany("INSERT OR IGNORE INTO nodes(id) VALUES (?)", ((e,) for e in sorted(ends)))
        conn.executemany(_EDGE_UPSERT, params)

    def _missing_nodes(self, ids: Iterable[str]) -> set[str]:
        wanted = sorted(set(ids))
        found: set[str] = set()
        conn = self.conn
        for i in range(0, len(wanted), _IN_BATCH):
            part = wanted[i:i + _IN_BATCH]
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

    def set_embeddings(self, model: str, ids: Sequence[str], matrix: npt.ArrayLike, *,
                       replace: bool = False) -> int:
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
        if isinstance(ids, (str, bytes)):
            raise InputError("set_embeddings: ids must be a sequence of ids, not a single string")
        ids = list(ids)
        arr = np.asarray(matrix)
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating)
                                       or np.issubdtype(arr.dtype, np.integer)):
            raise InputError(f"set_embeddings: matrix must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim != 2 or arr.shape[0] != len(ids) or arr.shape[1] < 1:
            raise InputError(f"set_embeddings: matrix must have shape ({len(ids)}, dim >= 1), got {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype="<f4")
        bad = ~np.isfinite(arr).all(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"set_embeddings: rows[{i}] ({ids[i]!r}) holds a non-finite value")
        seen: set[str] = set()
        for i, x in enumerate(ids):
            if not isinstance(x, str) or not x:
                raise InputError(f"set_embeddings: ids[{i}] must be a non-empty string, got {x!r}")
            if x in seen:
                raise InputError(f"set_embeddings: ids[{i}] repeats {x!r}")
            seen.add(x)
        dim = int(arr.shape[1])
        with self.transaction():
            missing = self._missing_nodes(ids)
            if missing:
                i = next(i for i, x in enumerate(ids) if x in missing)
                raise InputError(f"set_embeddings: ids[{i}] {ids[i]!r} is not a node")
            conn = self.conn
            if replace:
                conn.execute("DELETE FROM embeddings WHERE model = ?", (model,))
            else:
                r = conn.execute("SELECT dim FROM embeddings WHERE model = ? AND dim != ? LIMIT 1",
                                 (model, dim)).fetchone()
                if r is not None:
                    raise InputError(f"set_embeddings: model {model!r} stores dim {r[0]}, got dim {dim} "
                                     "(pass replace=True to replace its vectors)")
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings(node_id, model, dim, vector) VALUES (?, ?, ?, ?)",
                ((x, model, dim, arr[i].tobytes()) for i, x in enumerate(ids)))
        return len(ids)

    # ------------------------------------------------------------------ reads
    @property
    def version(self) -> int:
        """The write counter: bumped by every committed write transaction (any process)."""
        with self._locked() as conn:
            return _meta_int(conn, "version")

    @property
    def schema_version(self) -> int:
        """The on-disk schema version of this file (:data:`SCHEMA_VERSION` once opened)."""
        with self._locked() as conn:
            return _meta_int(conn, "schema_version")

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
        with self._read() as conn:
            if ids is None:
                rows = conn.execute("SELECT node_id, dim, vector FROM embeddings WHERE model = ? "
                                    "ORDER BY node_id", (model,)).fetchall()
                out_ids = [r[0] for r in rows]
            else:
                if isinstance(ids, (str, bytes)):
                    raise InputError("get_embeddings: ids must be a sequence of ids, not a single string")
                out_ids = list(ids)
                got: dict[str, tuple[Any, ...]] = {}
                uniq = sorted({x for x in out_ids if isinstance(x, str)})
                for i in range(0, len(uniq), _IN_BATCH):
                    part = uniq[i:i + _IN_BATCH]
                    q = (f"SELECT node_id, dim, vector FROM embeddings WHERE model = ? "
                         f"AND node_id IN ({','.join('?' * len(part))})")
                    got.update((r[0], r) for r in conn.execute(q, [model, *part]))
                for x in out_ids:
                    if x not in got:
                        raise NotFoundError(x, "embedding")
                rows = [got[x] for x in out_ids]
        if not rows:
            return out_ids, np.zeros((0, 0), dtype=np.float32)
        dim = rows[0][1]
        for r in rows:
            if (isinstance(r[1], bool) or not isinstance(r[1], int) or r[1] != dim or dim < 1
                    or not isinstance(r[2], bytes) or len(r[2]) != 4 * dim):
                raise ConceptwalkError(
                    f"knowledge base {self.path!r}: the stored vector of {shown(r[0])} under model "
                    f"{shown(model)} is not {shown(dim)} float32 values (the store is damaged)")
        mat = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").astype(np.float32)
        return out_ids, mat.reshape(len(rows), dim)

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
        with self._locked() as conn:
            r = conn.execute("SELECT id, type, title, body, scopes, lifecycle FROM nodes WHERE id = ?",
                             (node_id,)).fetchone()
            return None if r is None else _node_dict(r)

    def nodes(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        """The stored fields of several nodes, read in one snapshot.

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
        uniq = sorted({x for x in want if isinstance(x, str)})
        got: dict[str, dict[str, Any]] = {}
        with self._read() as conn:
            for i in range(0, len(uniq), _IN_BATCH):
                part = uniq[i:i + _IN_BATCH]
                q = (f"SELECT id, type, title, body, scopes, lifecycle FROM nodes "
                     f"WHERE id IN ({','.join('?' * len(part))})")
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

    def annotation_presence(self) -> dict[str, int]:
        """Per annotation axis, how many stored edges have a value.

        Returns
        -------
        dict of str to int
            :data:`ANNOTATION_AXES` -> the number of edges where that column is not null.
        """
        with self._locked():
            r = self.conn.execute("SELECT " + ", ".join(f"count({k})" for k in ANNOTATION_AXES)
                                  + " FROM edges").fetchone()
        return {k: int(v) for k, v in zip(ANNOTATION_AXES, r)}

    def edge_presence(self) -> tuple[list[str], npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
        """Every stored edge's endpoints and which annotation axes it has a value for, read in one
        snapshot: ``(ids, src, dst, bits)`` with ``ids`` the node ids ascending, ``src``/``dst``
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
            raise ConceptwalkError(f"knowledge base {self.path!r}: an edge endpoint is not a string "
                                   "(the store is damaged)") from None
        if len(names) != len(ids):
            raise ConceptwalkError(f"knowledge base {self.path!r}: an edge endpoint is not a node "
                                   "(the store is damaged)")
        return (ids, np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32),
                np.asarray(cols[2], dtype=np.uint8).reshape(-1))

    def stats(self) -> dict[str, Any]:
        """Counts, read in one snapshot: ``nodes``, ``nodes_by_type`` (typed nodes only),
        ``untyped_nodes`` (bare nodes), ``edges``, ``edges_by_type``, ``aliases`` (pairs),
        ``embeddings`` (per model), ``annotations`` (per axis, edges with a value), plus
        ``version`` and ``schema_version``.

        Returns
        -------
        dict
            The counts above (JSON-serialisable).
        """
        with self._read() as conn:
            by_type = dict(conn.execute("SELECT type, count(*) FROM nodes GROUP BY type ORDER BY type").fetchall())
            untyped = int(by_type.pop(None, 0))
            edges_by_type = dict(conn.execute("SELECT type, count(*) FROM edges GROUP BY type ORDER BY type").fetchall())
            r = conn.execute("SELECT " + ", ".join(f"count({k})" for k in ANNOTATION_AXES)
                             + ", count(*) FROM edges").fetchone()
            out = {
                "version": _meta_int(conn, "version"),
                "schema_version": SCHEMA_VERSION,
                "nodes": untyped + sum(by_type.values()),
                "nodes_by_type": {str(k): int(v) for k, v in by_type.items()},
                "untyped_nodes": untyped,
                "edges": int(r[-1]),
                "edges_by_type": {str(k): int(v) for k, v in edges_by_type.items()},
                "aliases": int(conn.execute("SELECT count(*) FROM aliases").fetchone()[0]),
                "embeddings": {str(m): int(c) for m, c in conn.execute(
                    "SELECT model, count(*) FROM embeddings GROUP BY model ORDER BY model")},
                "annotations": {k: int(v) for k, v in zip(ANNOTATION_AXES, r[:-1])},
            }
        return out

    def search(self, text: str, k: int = 10, *, node_types: Iterable[str] | None = None,
               caller: Caller | None = None) -> list[tuple[str, float]]:
        """Full-text search over node titles and bodies, as ``caller`` sees the store: BM25 over
        the caller's visible nodes only (see :mod:`conceptwalk.graph.text`).

        Every statistic (the number of nodes, each word's document frequency, the average
        length) is counted over the visible nodes, so each score equals the score on this store
        with the caller's hidden nodes deleted, and hidden nodes are never returned.

        Parameters
        ----------
        text : str
            Arbitrary user text. Every word (letters and digits) is a search term; there is no
            query syntax, so punctuation, quotes and operators (``AND``, ``NEAR``, ``-``, ``:``,
            ``*``) are plain words or separators and never an error; a text without word
            characters gives ``[]``. Matching is case-insensitive, diacritic-insensitive and
            stemmed (Snowball English); title words count double.
        k : int
            The most hits to return.
        node_types : iterable of str, optional
            Only nodes of these types (the statistics stay those of everything visible).
        caller : Caller, optional
            Whose visibility applies; omitted = all access (the operator's own view).

        Returns
        -------
        list of (id, score)
            BM25 score (higher is better), ordered by score descending, then id ascending.

        Examples
        --------
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "type": "DOC", "title": "Graph walks", "body": "random walk"},
        ...                   {"id": "b", "type": "CONCEPT", "title": "Walking", "body": None},
        ...                   {"id": "s", "type": "DOC", "title": "Walks", "scopes": ["t1"]}])
        >>> [i for i, _ in kb.search('walk AND "graph')]
        ['a', 'b', 's']
        >>> [i for i, _ in kb.search("walk", node_types=["CONCEPT"])], kb.search("-:*")
        (['b'], [])
        >>> from conceptwalk import Caller
        >>> [i for i, _ in kb.search("walk", caller=Caller.public())]
        ['b', 'a']
        """
        if not isinstance(text, str):
            raise InputError(f"search: text must be a string, got {type(text).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"search: k must be a positive integer, got {k!r}")
        if caller is not None and not isinstance(caller, Caller):
            raise InputError(f"search: caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        with self._lock:
            try:
                g = self.graph()
            except InputError:  # no nodes: nothing to find
                return []
            ix = self.text_index(g)
            if ix is None:  # another process wrote between the two reads: use the new snapshot
                g = self.graph()
                ix = self.text_index(g)
            if ix is None:  # pragma: no cover - a writer faster than two reads, twice
                raise ConceptwalkError("the knowledge base kept changing during the search; retry")
        vm = None if caller is None else caller.visibility(g)
        return text_search(ix, g, text, k, visible=vm, node_types=node_types)

    def text_index(self, graph: LinkGraph | None = None) -> TextIndex | None:
        """The text index of the graph snapshot ``graph`` (default: :meth:`graph`), documents in
        its node order; built from the store's rows on first use and cached beside the graph, so
        a write that replaces the snapshot replaces the index too. ``None`` when ``graph`` is no
        longer the store's snapshot (the store changed since it was read).

        Parameters
        ----------
        graph : LinkGraph, optional
            A snapshot this store returned from :meth:`graph`.

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
        with self._lock:
            g = self.graph() if graph is None else graph
            cached = self._text
            if cached is not None and cached[0] is g:
                return cached[1]
            version = None
            if not self._depth:
                version = next((v for v, h in self._graphs.values() if h is g), None)
                if version is None:
                    return None
            ix = self._build_text_index(g, version)
            if ix is not None and not self._depth:
                self._text = (g, ix)
            return ix

    def _build_text_index(self, g: LinkGraph, version: int | None) -> TextIndex | None:
        """The hook that builds the text index from the store's rows (one read), or None when the
        store is no longer at ``version`` (None: inside our own write transaction)."""
        with self._read() as conn:
            if version is not None:
                now = int(conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0])
                if now != version:
                    return None
            rows = conn.execute("SELECT id, title, body FROM nodes ORDER BY id").fetchall()
        if len(rows) != g.num_nodes or any(r[0] != i for r, i in zip(rows, g.ids)):
            return None
        return TextIndex.build([r[1] for r in rows], [r[2] for r in rows])

    def fts_search(self, text: str, k: int = 10, *, node_types: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """The operator's FTS5 search (bm25 over *every* node, titles weigh double; the query's
        word tokens OR-ed). Its statistics count all nodes, so it is never shown to a caller
        with a narrower view: callers use :meth:`search`.

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
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"search: k must be a positive integer, got {k!r}")
        q = _fts_query(text)
        if q is None:
            return []
        sql = ("SELECT n.id, bm25(nodes_fts, 2.0, 1.0) AS s FROM nodes_fts "
               "JOIN nodes n ON n.rid = nodes_fts.rowid WHERE nodes_fts MATCH ?")
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
        with self._locked():
            rows = self.conn.execute(sql, args).fetchall()
        return [(i, -float(s)) for i, s in rows]

    # ------------------------------------------------------------------ the graph snapshot
    def graph(self, *, annotations: bool = True) -> LinkGraph:
        """The :class:`LinkGraph` snapshot of the store (one consistent read).

        Cached: each call reads the version counter (one ``SELECT``) and rebuilds only when it
        changed since the cached build, including writes by other processes.

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
        key = bool(annotations)
        with self._lock:
            cached = self._graphs.get(key)
            if cached is not None and not self._depth and cached[0] == self.version:
                return cached[1]  # the O(1) revalidation: one SELECT of the counter
            return self._graph_build(key)

    def _graph_build(self, key: bool) -> LinkGraph:
        with self._read() as conn:
            # Re-read the counter inside the snapshot the graph is built from.
            version = _meta_int(conn, "version")
            cached = self._graphs.get(key)
            if cached is not None and cached[0] == version and not self._depth:
                return cached[1]
            g = self._build_graph(conn, key)
            if not self._depth:  # never cache uncommitted state (a rollback reuses the number)
                self._graphs[key] = (version, g)
            return g

    @staticmethod
    def _build_graph(conn: sqlite3.Connection, annotations: bool) -> LinkGraph:
        try:
            return _graph_from_rows(conn, annotations)
        except ConceptwalkError:
            raise
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            # Only values read from the file reach here: a damaged or hand-edited store.
            raise _Damaged(f"its graph cannot be built from the stored rows "
                           f"({type(exc).__name__}: {exc}; the store is damaged)") from None


def _graph_from_rows(conn: sqlite3.Connection, annotations: bool) -> LinkGraph:
    """The graph snapshot from the rows read through ``conn`` (inside one read transaction)."""
    nodes = conn.execute("SELECT id, type, title, scopes, lifecycle FROM nodes ORDER BY id").fetchall()
    if not nodes:
        raise InputError("the knowledge base has no nodes: nothing to build a graph from")
    ids = [r[0] for r in nodes]
    parsed: dict[str, list[str] | None] = {}

    def scopes_of(s: str | None, nid: str) -> list[str] | None:
        if s is None:
            return None
        if s not in parsed:
            parsed[s] = _parse_scopes(s, nid)
        return parsed[s]

    cols = "src, dst, type" + (", " + ", ".join(ANNOTATION_AXES) if annotations else "")
    edges = conn.execute(f"SELECT {cols} FROM edges ORDER BY rowid").fetchall()
    table = {x: i for i, x in enumerate(ids)}
    names = list(ids)
    ecols = list(zip(*edges)) if edges else [()] * (8 if annotations else 3)
    src = intern_strings(list(ecols[0]), table, names)
    dst = intern_strings(list(ecols[1]), table, names)
    if len(names) != len(ids):
        raise _Damaged("an edge endpoint is not a node (the store is damaged)")
    ann = {k: ecols[3 + i] for i, k in enumerate(ANNOTATION_AXES)} if annotations else None
    return LinkGraph.from_arrays(
        ids, src, dst, list(ecols[2]),
        node_types=[r[1] for r in nodes], titles=[r[2] for r in nodes],
        scopes=[scopes_of(r[3], r[0]) for r in nodes], lifecycle=[r[4] for r in nodes],
        edge_annotations=ann)
