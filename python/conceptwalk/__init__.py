"""conceptwalk: graph retrieval over a knowledge base's link graph.

Personalized-PageRank context, link suggestions, shortest chains and a concept-anchored walk
that wraps an embedding search, computed only over what the caller may see, with a C++ core.

The package is layered (see ``docs/architecture.md``): :mod:`conceptwalk.graph` (the snapshot,
callers, the algorithms; the only importer of the compiled core), :mod:`conceptwalk.tools` (the
three tools), :mod:`conceptwalk.kb` (the store, importers, datasets), :mod:`conceptwalk.wrap` (the
concept-anchored walk around a flat search), and the interfaces :mod:`conceptwalk.serve` (MCP,
Dask), :mod:`conceptwalk.cli` and :mod:`conceptwalk.bench`.

Examples
--------
>>> import conceptwalk as cw
>>> g = cw.LinkGraph.from_edges([("a", "b"), ("b", "c")])
>>> cw.graph_path(g, "a", "c", caller=cw.Caller.all_access()).ids
['a', 'b', 'c']
"""

from __future__ import annotations

from . import graph, kb, tools, wrap
from .errors import ConceptwalkError, InputError, NotFoundError
from .graph import CORE_VERSION, Caller, LinkGraph, Ranking, Suggestion, personalized_pagerank_batch
from .kb import KnowledgeBase
from .tools import (
    ContextResult,
    PathResult,
    SuggestResult,
    graph_context,
    graph_context_batch,
    graph_path,
    graph_path_batch,
    link_suggest,
    link_suggest_batch,
)
from .wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search

__version__: str = CORE_VERSION

#: The subpackages, shown by ``dir(conceptwalk)`` (the interfaces ``serve``, ``cli`` and
#: ``bench`` are imported on use).
SUBPACKAGES = ("bench", "cli", "graph", "kb", "serve", "tools", "wrap")

__all__ = [
    "Caller",
    "ConceptAnchoredRetriever",
    "ConceptwalkError",
    "ContextResult",
    "InputError",
    "KnowledgeBase",
    "LinkGraph",
    "NotFoundError",
    "PathResult",
    "Ranking",
    "SuggestResult",
    "Suggestion",
    "WalkConfig",
    "__version__",
    "builtin_flat_search",
    "graph_context",
    "graph_context_batch",
    "graph_path",
    "graph_path_batch",
    "link_suggest",
    "link_suggest_batch",
    "personalized_pagerank_batch",
]


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(SUBPACKAGES))
