"""Attributes: what an imported file says about a node or an edge that no store column holds
(an ontology term's xrefs and synonym scopes, a GraphML attribute, a networkx edge's ``weight``).

They live in two side tables that no algorithm reads (the graph, its snapshot and the text index
never see them, so writing them changes no answer), made the first time an import writes one::

    node_attributes(id, key, value /* JSON text */, PRIMARY KEY(id, key))
    edge_attributes(src, dst, type, key, value /* JSON text */, PRIMARY KEY(src, dst, type, key))

Deleting a node or an edge deletes its attributes (triggers). They are exported with their node
or edge (:mod:`conceptwalk.kb.formats`), so a file round-trips through the store.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import InputError, shown

__all__ = ["ensure_tables", "has_tables", "node_attributes", "edge_attributes", "attribute_value"]

_DDL = (
    """CREATE TABLE IF NOT EXISTS node_attributes(
    id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY(id, key)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS edge_attributes(
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    type TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY(src, dst, type, key)
) WITHOUT ROWID""",
    "CREATE TRIGGER IF NOT EXISTS node_attributes_ad AFTER DELETE ON nodes BEGIN "
    "DELETE FROM node_attributes WHERE id = old.id; END",
    "CREATE TRIGGER IF NOT EXISTS edge_attributes_ad AFTER DELETE ON edges BEGIN "
    "DELETE FROM edge_attributes WHERE src = old.src AND dst = old.dst AND type = old.type; END",
)


def has_tables(conn: sqlite3.Connection) -> bool:
    """Whether the store holds the attribute tables (a store no import wrote one into has none).

    Parameters
    ----------
    conn : sqlite3.Connection
        The store's connection.

    Returns
    -------
    bool
    """
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'node_attributes'").fetchone()
        is not None
    )


def ensure_tables(conn: sqlite3.Connection) -> None:
    """Create the attribute tables and their triggers (inside the caller's write transaction).

    Parameters
    ----------
    conn : sqlite3.Connection
        The store's connection, in a write transaction.
    """
    if not has_tables(conn):
        for stmt in _DDL:
            conn.execute(stmt)


def attribute_value(value: Any, where: str, key: str) -> str:
    """``value`` as the JSON text stored (a string, number, boolean or a list/dict of them).

    Parameters
    ----------
    value : any
        The attribute's value.
    where : str
        Locates it in an error message (``"file: node 'x'"``).
    key : str
        The attribute's name.

    Returns
    -------
    str
        JSON text, keys sorted.

    Raises
    ------
    InputError
        A value JSON cannot hold (NaN, infinity, bytes, an object).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: attribute {shown(key)} is {value!r}, which is not a number JSON can hold")
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError):
        raise InputError(
            f"{where}: attribute {shown(key)} holds {type(value).__name__} {shown(value)}, "
            f"not a string, number, boolean or list of them"
        ) from None


def node_attributes(conn: sqlite3.Connection, ids: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """The attributes of nodes (all nodes with any, or those of ``ids``): id -> key -> value.

    Parameters
    ----------
    conn : sqlite3.Connection
        The store's connection (``kb.conn``).
    ids : iterable of str, optional
        Only these nodes.

    Returns
    -------
    dict
        Nodes without attributes are absent.

    Examples
    --------
    >>> import networkx as nx
    >>> from conceptwalk.kb import KnowledgeBase
    >>> from conceptwalk.kb.importers import import_networkx
    >>> kb = KnowledgeBase.open(":memory:")
    >>> G = nx.Graph(); G.add_node("a", colour="red"); G.add_edge("a", "b", weight=2.5)
    >>> _ = import_networkx(kb, G)
    >>> node_attributes(kb.conn), edge_attributes(kb.conn)
    ({'a': {'colour': 'red'}}, {('a', 'b', 'LINK'): {'weight': 2.5}})
    """
    out: dict[str, dict[str, Any]] = {}
    if not has_tables(conn):
        return out
    for nid, key, value in _rows(conn, "SELECT id, key, value FROM node_attributes", "id", ids):
        out.setdefault(nid, {})[key] = json.loads(value)
    return out


def edge_attributes(conn: sqlite3.Connection) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The attributes of every edge that has any: ``(src, dst, type)`` -> key -> value.

    Parameters
    ----------
    conn : sqlite3.Connection
        The store's connection (``kb.conn``).

    Returns
    -------
    dict
        Edges without attributes are absent (see :func:`node_attributes` for an example).
    """
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    if not has_tables(conn):
        return out
    for src, dst, typ, key, value in conn.execute("SELECT src, dst, type, key, value FROM edge_attributes"):
        out.setdefault((src, dst, typ), {})[key] = json.loads(value)
    return out


def _rows(conn: sqlite3.Connection, sql: str, col: str, ids: Iterable[str] | None) -> Iterator[tuple[Any, ...]]:
    if ids is None:
        yield from conn.execute(sql)
        return
    wanted = sorted(set(ids))
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        yield from conn.execute(f"{sql} WHERE {col} IN ({','.join('?' * len(part))})", part)
