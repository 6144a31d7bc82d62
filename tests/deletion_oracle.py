"""The deletion oracle for stores: the same rows with a caller's hidden nodes deleted (their
edges and aliases with them), to compare every caller-facing output against."""

from __future__ import annotations

from typing import Any

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase


def open_store(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], aliases: list[tuple[str, str]]
) -> KnowledgeBase:
    """An in-memory store holding these rows."""
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(nodes)
    if edges:
        kb.add_edges(edges)
    if aliases:
        kb.add_aliases(aliases)
    return kb


def deleted_store(
    nodes: list[dict[str, Any]], edges: list[dict[str, Any]], aliases: list[Any], caller: Caller
) -> KnowledgeBase | None:
    """The store of these rows with the nodes ``caller`` may not see deleted (None when it sees
    none: a store needs a node)."""

    def sees(nd: dict[str, Any]) -> bool:
        return caller.scopes is None or not nd["scopes"] or bool(set(nd["scopes"]) & caller.scopes)

    keep = {nd["id"] for nd in nodes if sees(nd)}
    if not keep:
        return None
    return open_store(
        [nd for nd in nodes if nd["id"] in keep],
        [e for e in edges if e["src"] in keep and e["dst"] in keep],
        [(a, c) for a, c in map(_alias_pair, aliases) if c in keep],
    )


def _alias_pair(row: Any) -> tuple[str, str]:
    """``(alias, canonical)`` of an alias row: a pair, or a mapping with ``alias`` and
    ``canonical`` (what ``synthetic.alias_rows()`` gives; unpacking such a mapping as a pair
    would give its keys, and every alias would be dropped from the deleted store)."""
    if isinstance(row, dict):
        return row["alias"], row["canonical"]
    a, c = row
    return a, c
