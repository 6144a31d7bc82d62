# Hand-written stub for the compiled module conceptwalk._core (csrc/bindings/*.cpp).
# Checked against the built extension by tests/test_core_graph.py::test_stubtest, which runs
# `python -m mypy.stubtest conceptwalk._core --allowlist <list>`; the allowlist holds only what a
# stub cannot express: the pybind11 metaclass of the two classes, and CSRGraph.__init__ (pybind11's
# "no constructor defined" placeholder; build graphs with CSRGraph.from_edges).
# Keep argument names, defaults and result tuples in sync with the bindings.

from typing import SupportsFloat, SupportsIndex, SupportsInt

import numpy as np
import numpy.typing as npt

__version__: str
WALK_MAX_HOPS_LIMIT: int

_Int = SupportsInt | SupportsIndex
_Float = SupportsFloat | SupportsIndex

class CSRGraph:
    """Immutable CSR of the undirected projection of a typed directed edge list."""

    @staticmethod
    def from_edges(
        num_nodes: _Int,
        src: npt.ArrayLike,
        dst: npt.ArrayLike,
        etype: npt.ArrayLike,
    ) -> tuple[CSRGraph, npt.NDArray[np.int64]]: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def num_entries(self) -> int: ...
    @property
    def num_pairs(self) -> int: ...
    @property
    def num_edges(self) -> int: ...
    @property
    def num_edge_types(self) -> int: ...
    @property
    def max_degree(self) -> int: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def indptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def indices(self) -> npt.NDArray[np.int32]: ...
    @property
    def entry_pair(self) -> npt.NDArray[np.int32]: ...
    @property
    def pair_base(self) -> npt.NDArray[np.int32]: ...
    @property
    def pair_ptr(self) -> npt.NDArray[np.int32]: ...
    @property
    def edge_typedir(self) -> npt.NDArray[np.int32]: ...
    def find_entry(self, u: _Int, v: _Int) -> int: ...
    def pair_of(self, u: _Int, v: _Int) -> int: ...

class VisibilityMask:
    """A caller's node mask over one graph, with visible degrees precomputed once."""

    def __init__(self, graph: CSRGraph, mask: npt.ArrayLike) -> None: ...
    @property
    def visible_count(self) -> int: ...
    @property
    def visible_degrees(self) -> npt.NDArray[np.int32]: ...
    @property
    def mask(self) -> npt.NDArray[np.bool_]: ...

# (nodes, scores, residual, pushes, edge_visits, truncated, eps, certified)
_PPRResult = tuple[
    npt.NDArray[np.int32], npt.NDArray[np.float64], float, int, int, bool, float, bool
]

def personalized_pagerank(
    graph: CSRGraph,
    seeds: npt.ArrayLike,
    weights: npt.ArrayLike,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 0,
    max_pushes: _Int = 0,
    visible: VisibilityMask | None = None,
    max_residual: _Float = 0.0,
) -> _PPRResult: ...
def personalized_pagerank_certified(
    graph: CSRGraph,
    seeds: npt.ArrayLike,
    weights: npt.ArrayLike,
    restart: _Float,
    eps: _Float,
    k: _Int,
    shrink: _Float,
    min_eps: _Float,
    max_pushes: _Int,
    visible: VisibilityMask | None = None,
) -> _PPRResult: ...
def resource_allocation(
    graph: CSRGraph,
    node: _Int,
    min_shared: _Int = 2,
    k: _Int = 0,
    visible: VisibilityMask | None = None,
) -> tuple[
    npt.NDArray[np.int32], npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int32], int
]: ...
def shortest_path(
    graph: CSRGraph,
    source: _Int,
    target: _Int,
    visible: VisibilityMask | None = None,
) -> tuple[npt.NDArray[np.int32], int]: ...
def multi_source_hops(
    graph: CSRGraph,
    seeds: npt.ArrayLike,
    targets: npt.ArrayLike,
    max_hops: _Int = -1,
    visible: VisibilityMask | None = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...
def typed_walk(
    graph: CSRGraph,
    starts: npt.ArrayLike,
    max_hops: _Int,
    expand_types: npt.ArrayLike,
    admit_types: npt.ArrayLike,
    node_type: npt.ArrayLike | None = None,
    expand_node_types: npt.ArrayLike | None = None,
    admit_node_types: npt.ArrayLike | None = None,
    max_edges: _Int = 10000,
    max_candidates: _Int = 50,
    visible: VisibilityMask | None = None,
) -> tuple[
    npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32], int, bool
]: ...

# csrc/bindings/register_batch.cpp: many queries across C++ threads, each slice identical to the
# one-query function.
def ppr_batch(
    graph: CSRGraph,
    seed_ptr: npt.ArrayLike,
    seeds: npt.ArrayLike,
    weights: npt.ArrayLike,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 0,
    max_pushes: _Int = 0,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint8],
    npt.NDArray[np.float64],
]: ...
def context_batch(
    graph: CSRGraph,
    seed_ptr: npt.ArrayLike,
    seeds: npt.ArrayLike,
    weights: npt.ArrayLike,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 20,
    node_type: npt.ArrayLike | None = None,
    keep_types: npt.ArrayLike | None = None,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.float64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int32],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
]: ...
def suggest_batch(
    graph: CSRGraph,
    nodes: npt.ArrayLike,
    min_shared: _Int = 2,
    k: _Int = 0,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int64],
]: ...
def path_batch(
    graph: CSRGraph,
    sources: npt.ArrayLike,
    targets: npt.ArrayLike,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]: ...
def csr_graph_from_arrays(
    num_nodes: _Int,
    num_edge_types: _Int,
    indptr: npt.ArrayLike,
    indices: npt.ArrayLike,
    pair_base: npt.ArrayLike,
    pair_ptr: npt.ArrayLike,
    edge_typedir: npt.ArrayLike,
) -> CSRGraph: ...
