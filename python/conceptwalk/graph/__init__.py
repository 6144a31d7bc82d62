"""The graph layer: the immutable :class:`LinkGraph` snapshot, callers and their prepared
visibility masks, and the algorithms over them. The only importer of the compiled core.

Examples
--------
>>> from conceptwalk.graph import LinkGraph, Caller
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
>>> g.shortest_path("a", "c", visible=Caller.all_access().visibility(g))
['a', 'b', 'c']
"""

from __future__ import annotations

try:
    from .. import _core
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError(
        "conceptwalk's compiled core (conceptwalk._core) is missing. Install the package with "
        "`pip install .` (or `pip install --no-build-isolation -e .` with scikit-build-core, "
        "pybind11, cython and cython-cmake installed) instead of importing the source tree."
    ) from exc

from ._intern import intern_strings
from .linkgraph import (
    DEFAULT_EDGE_TYPE,
    DEFAULT_NODE_TYPE,
    EDGE_ANNOTATION_KEYS,
    LinkGraph,
    Ranking,
    Visible,
)
from .ppr import personalized_pagerank_batch
from .suggest import Suggestion
from .visibility import Caller

#: A caller's prepared node mask over one graph (what ``Caller.visibility`` returns).
VisibilityMask = _core.VisibilityMask

#: Version of the compiled core (equals the package version).
CORE_VERSION: str = _core.__version__

__all__ = [
    "CORE_VERSION",
    "Caller",
    "DEFAULT_EDGE_TYPE",
    "DEFAULT_NODE_TYPE",
    "EDGE_ANNOTATION_KEYS",
    "LinkGraph",
    "Ranking",
    "Suggestion",
    "Visible",
    "VisibilityMask",
    "intern_strings",
    "personalized_pagerank_batch",
]
