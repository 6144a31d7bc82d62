"""The tools layer: ``graph_context``, ``link_suggest`` and ``graph_path``, each over a
:class:`~conceptwalk.graph.LinkGraph` or a knowledge base, on behalf of a
:class:`~conceptwalk.graph.Caller`, returning a typed result with ``to_dict()`` (JSON-ready,
deterministic: no timings inside) and a readable ``str()``. Each has a batch form beside it
(``*_batch``: many queries across C++ threads, results identical to one-by-one calls, in input
order). May import the graph layer.

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> g = LinkGraph.from_edges(
...     [("auth", "tokens", "RELATED_TO"), ("tokens", "jwt.py", "IMPLEMENTED_BY"),
...      ("auth", "login", "RELATED_TO"), ("login", "jwt.py", "RELATED_TO")],
...     nodes=[{"id": "auth", "type": "CONCEPT", "title": "Authentication"}])
>>> ctx = graph_context(g, concepts=["auth"], k=3, caller=Caller.all_access())
>>> [(r.id, r.hops, r.via) for r in ctx.results]
[('login', 1, 'auth'), ('tokens', 1, 'auth'), ('jwt.py', 2, 'auth')]
>>> [s.id for s in link_suggest(g, "auth", caller=Caller.all_access()).suggestions]
['jwt.py']
>>> graph_path(g, "auth", "jwt.py", caller=Caller.all_access()).ids
['auth', 'login', 'jwt.py']
"""

from __future__ import annotations

from .common import GraphSource, SearchFn
from .context import ContextItem, ContextResult, ContextSeed, graph_context, graph_context_batch, parse_context_query
from .path import PathResult, PathStep, graph_path, graph_path_batch
from .suggest import SuggestResult, link_suggest, link_suggest_batch

__all__ = [
    "ContextItem",
    "ContextResult",
    "ContextSeed",
    "GraphSource",
    "PathResult",
    "PathStep",
    "SearchFn",
    "SuggestResult",
    "graph_context",
    "graph_context_batch",
    "graph_path",
    "graph_path_batch",
    "link_suggest",
    "link_suggest_batch",
    "parse_context_query",
]
