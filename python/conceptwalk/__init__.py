"""conceptwalk: graph retrieval over a knowledge base's link graph.

Personalized-PageRank context, link suggestions, shortest chains and a concept-anchored walk
that wraps an embedding search, computed only over what the caller may see, with a C++ core.
"""

from __future__ import annotations

try:
    from . import _core
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "conceptwalk's compiled core (conceptwalk._core) is missing. Install the package with "
        "`pip install .` (or `pip install --no-build-isolation -e .` with scikit-build-core, "
        "pybind11, cython and cython-cmake installed) instead of importing the source tree."
    ) from exc

from .errors import ConceptwalkError, InputError, NotFoundError
from .graph import LinkGraph, Ranking, Suggestion
from .store import KnowledgeBase
from .tools import ContextResult, PathResult, SuggestResult, graph_context, graph_path, link_suggest
from .visibility import Caller

__version__: str = _core.__version__

__all__ = [
    "Caller",
    "ContextResult",
    "PathResult",
    "SuggestResult",
    "graph_context",
    "graph_path",
    "link_suggest",
    "ConceptwalkError",
    "InputError",
    "KnowledgeBase",
    "LinkGraph",
    "NotFoundError",
    "Ranking",
    "Suggestion",
    "__version__",
]


def __dir__() -> list[str]:
    return list(__all__)
