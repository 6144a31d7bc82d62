# Hand-written stub for the compiled module conceptwalk._core (csrc/bindings/*.cpp).
# Checked against the built extension by tests/test_core_graph.py::test_stubtest, which runs
# `python -m mypy.stubtest conceptwalk._core --allowlist <list>`; the allowlist holds only what a
# stub cannot express: the pybind11 metaclass of the bound classes, and their __init__ (pybind11's
# "no constructor defined" placeholder; build graphs with CSRGraph.from_edges).
# Keep argument names, defaults and result classes in sync with the bindings.

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat, SupportsIndex, SupportsInt

import numpy as np
import numpy.typing as npt

__version__: str
WALK_MAX_HOPS_LIMIT: int
#: The work budget of every push: adjacency entries read (edge_visits), all rounds together.
PUSH_VISITS: int

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
    @staticmethod
    def patched(
        old: CSRGraph,
        num_nodes: _Int,
        remap: npt.ArrayLike,
        type_lut: npt.ArrayLike,
        drop: npt.ArrayLike,
        add_src: npt.ArrayLike,
        add_dst: npt.ArrayLike,
        add_type: npt.ArrayLike,
        min_num_types: _Int = 0,
    ) -> tuple[
        CSRGraph,
        npt.NDArray[np.int64],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
        npt.NDArray[np.int32],
    ]: ...
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
    def borrowed(self) -> bool: ...
    @property
    def indptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def indices(self) -> npt.NDArray[np.int32]: ...
    def edge_columns(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]: ...
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

class LiveGraph:
    """A live store's graph: an immutable base CSRGraph (shared) plus a small delta of new nodes
    and grown rows, every row in order-key order (docs/live_store.md)."""

    @staticmethod
    def grow(
        base: CSRGraph, prev: LiveGraph | None, keys: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike
    ) -> LiveGraph: ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def base_nodes(self) -> int: ...
    @property
    def base(self) -> CSRGraph: ...
    @property
    def delta_rows(self) -> int: ...
    @property
    def delta_entries(self) -> int: ...
    @property
    def arena_entries(self) -> int: ...
    @property
    def max_degree(self) -> int: ...
    def degree(self, u: _Int) -> int: ...
    def neighbors(self, u: _Int) -> npt.NDArray[np.int32]: ...

class LiveVisibility:
    """A caller's visibility of a LiveGraph: the base's VisibilityMask and the delta's part."""

    @staticmethod
    def make(live: LiveGraph, base: VisibilityMask, slot_mask: npt.ArrayLike) -> LiveVisibility: ...
    @property
    def visible_count(self) -> int: ...
    def degree(self, u: _Int) -> int: ...

class VisibilityMask:
    """A caller's node mask over one graph, with visible degrees precomputed once."""

    def __init__(self, graph: CSRGraph, mask: npt.ArrayLike) -> None: ...
    @property
    def visible_count(self) -> int: ...
    @property
    def visible_degrees(self) -> npt.NDArray[np.int32]: ...
    @property
    def mask(self) -> npt.NDArray[np.bool_]: ...

# Results cross the binding as read-only classes; their arrays are read-only views of the result
# (no copy), valid as long as any view or the result object lives.
class PPRResult:
    """One PPR result (csrc/include/conceptwalk/ppr.hpp)."""

    @property
    def nodes(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def residual(self) -> float: ...
    @property
    def pushes(self) -> int: ...
    @property
    def edge_visits(self) -> int: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def eps(self) -> float: ...
    @property
    def certified(self) -> bool: ...

class PPRBatch:
    """Many PPR results: query i at ptr[i]:ptr[i + 1]."""

    @property
    def ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def nodes(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def residual(self) -> npt.NDArray[np.float64]: ...
    @property
    def eps(self) -> npt.NDArray[np.float64]: ...
    @property
    def pushes(self) -> npt.NDArray[np.int64]: ...
    @property
    def edge_visits(self) -> npt.NDArray[np.int64]: ...
    @property
    def truncated(self) -> npt.NDArray[np.bool_]: ...

class RAResult:
    """Resource allocation or rooted PageRank suggestions for one node
    (csrc/include/conceptwalk/suggest.hpp); hops, path_ptr, path are empty for RA."""

    @property
    def targets(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def shared_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def shared(self) -> npt.NDArray[np.int32]: ...
    @property
    def candidates(self) -> int: ...
    @property
    def hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def path_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def path(self) -> npt.NDArray[np.int32]: ...
    @property
    def eps(self) -> float: ...
    @property
    def fill_spent(self) -> bool: ...
    @property
    def truncated(self) -> bool: ...
    def __len__(self) -> int: ...

class RABatch:
    """Resource allocation for many nodes: query i's targets at ptr[i]:ptr[i + 1]."""

    @property
    def ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def targets(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def shared_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def shared(self) -> npt.NDArray[np.int32]: ...
    @property
    def candidates(self) -> npt.NDArray[np.int64]: ...
    @property
    def hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def path_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def path(self) -> npt.NDArray[np.int32]: ...
    @property
    def eps(self) -> npt.NDArray[np.float64]: ...
    @property
    def fill_spent(self) -> npt.NDArray[np.uint8]: ...
    @property
    def truncated(self) -> npt.NDArray[np.uint8]: ...

class PathResult:
    """A shortest path (csrc/include/conceptwalk/path.hpp); empty path: none."""

    @property
    def path(self) -> npt.NDArray[np.int32]: ...
    @property
    def visited(self) -> int: ...
    def __len__(self) -> int: ...

class PathBatch:
    """Shortest paths for many pairs: pair i at nodes[ptr[i]:ptr[i + 1]]."""

    @property
    def ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def nodes(self) -> npt.NDArray[np.int32]: ...

class ChainsResult:
    """Shortest chains from one source: target i's at path[ptr[i]:ptr[i + 1]] (empty: not reached)."""

    @property
    def ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def path(self) -> npt.NDArray[np.int32]: ...
    @property
    def visits(self) -> int: ...

class HopsResult:
    """Per target: hops to the nearest seed and that seed (-1: not reached)."""

    @property
    def hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def via(self) -> npt.NDArray[np.int32]: ...

class ContextResult:
    """graph_context's core result for one query (csrc/include/conceptwalk/context.hpp)."""

    @property
    def nodes(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def via(self) -> npt.NDArray[np.int32]: ...
    @property
    def residual(self) -> float: ...
    @property
    def pushes(self) -> int: ...
    @property
    def edge_visits(self) -> int: ...
    @property
    def eps(self) -> float: ...
    @property
    def fill_spent(self) -> bool: ...
    @property
    def push_truncated(self) -> bool: ...
    @property
    def coverage(self) -> npt.NDArray[np.int32]: ...
    @property
    def cover_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def cover_seeds(self) -> npt.NDArray[np.int32]: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def radius(self) -> int: ...
    @property
    def visits(self) -> int: ...
    @property
    def hits(self) -> npt.NDArray[np.int32]: ...
    @property
    def seeded(self) -> bool: ...
    def __len__(self) -> int: ...

class ContextBatch:
    """graph_context's core results for many queries: query i at ptr[i]:ptr[i + 1]."""

    @property
    def ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def nodes(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def via(self) -> npt.NDArray[np.int32]: ...
    @property
    def residual(self) -> npt.NDArray[np.float64]: ...
    @property
    def pushes(self) -> npt.NDArray[np.int64]: ...
    @property
    def edge_visits(self) -> npt.NDArray[np.int64]: ...
    @property
    def eps(self) -> npt.NDArray[np.float64]: ...
    @property
    def fill_spent(self) -> npt.NDArray[np.uint8]: ...
    @property
    def truncated(self) -> npt.NDArray[np.uint8]: ...
    @property
    def push_truncated(self) -> npt.NDArray[np.uint8]: ...
    @property
    def radius(self) -> npt.NDArray[np.int32]: ...
    @property
    def visits(self) -> npt.NDArray[np.int64]: ...
    @property
    def coverage(self) -> npt.NDArray[np.int32]: ...
    @property
    def cover_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def cover_seeds(self) -> npt.NDArray[np.int32]: ...

# Node-index array arguments (seeds, nodes, sources, targets) must hold integers: a float, bool or
# string dtype is a TypeError, and an integer int32 cannot hold an IndexError (no silent cast).

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
) -> PPRResult: ...
def personalized_pagerank_ids(
    graph: CSRGraph,
    index: Any,
    seeds: Any,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 0,
    max_pushes: _Int = 0,
    visible: VisibilityMask | None = None,
    max_residual: _Float = 0.0,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], float, float, int, int, bool, bool] | None: ...
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
) -> PPRResult: ...
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
) -> PPRBatch: ...
def resource_allocation(
    graph: CSRGraph | LiveGraph,
    node: _Int,
    min_shared: _Int = 2,
    k: _Int = 0,
    visible: VisibilityMask | LiveVisibility | None = None,
) -> RAResult: ...
def resource_allocation_id(
    graph: CSRGraph,
    index: Any,
    node: Any,
    min_shared: _Int = 2,
    k: _Int = 0,
    visible: VisibilityMask | None = None,
) -> RAResult | None: ...
def ppr_suggest(
    graph: CSRGraph,
    node: _Int,
    restart: float = 0.25,
    eps: float = 1e-4,
    k: _Int = 0,
    visible: VisibilityMask | None = None,
) -> RAResult: ...
def ppr_suggest_id(
    graph: CSRGraph,
    index: Any,
    node: Any,
    restart: float = 0.25,
    eps: float = 1e-4,
    k: _Int = 0,
    visible: VisibilityMask | None = None,
) -> RAResult | None: ...
def ppr_suggest_batch(
    graph: CSRGraph,
    nodes: npt.ArrayLike,
    restart: float = 0.25,
    eps: float = 1e-4,
    k: _Int = 0,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> RABatch: ...
def decode_suggestions(
    cls: type,
    ids: Sequence[Any],
    titles: Sequence[Any],
    names: Sequence[Any],
    codes: Sequence[Any],
    result: RAResult | RABatch,
    lo: _Int,
    hi: _Int,
) -> list[Any]: ...
def suggest_batch(
    graph: CSRGraph,
    nodes: npt.ArrayLike,
    min_shared: _Int = 2,
    k: _Int = 0,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> RABatch: ...
def shortest_path(
    graph: CSRGraph | LiveGraph,
    source: _Int,
    target: _Int,
    visible: VisibilityMask | LiveVisibility | None = None,
) -> PathResult: ...
def shortest_path_ids(
    graph: CSRGraph,
    index: Any,
    source: Any,
    target: Any,
    visible: VisibilityMask | None = None,
    ids: Sequence[Any] | None = None,
) -> list[Any] | None: ...
def path_batch(
    graph: CSRGraph,
    sources: npt.ArrayLike,
    targets: npt.ArrayLike,
    threads: _Int = 1,
    visible: VisibilityMask | None = None,
) -> PathBatch: ...
def shortest_paths_from(
    graph: CSRGraph,
    source: _Int,
    targets: npt.ArrayLike,
    max_visits: _Int = -1,
    visible: VisibilityMask | None = None,
) -> ChainsResult: ...
def multi_source_hops(
    graph: CSRGraph,
    seeds: npt.ArrayLike,
    targets: npt.ArrayLike,
    max_hops: _Int = -1,
    visible: VisibilityMask | None = None,
) -> HopsResult: ...

class WalkResult:
    """Outcome of typed_walk (read-only views into memory it owns)."""

    @property
    def rendered(self) -> list[list[dict[str, Any]] | None] | None: ...
    def render_paths(
        self,
        graph: CSRGraph | LiveGraph,
        slots: Sequence[_Int],
        ids: list[str],
        type_names: Sequence[str],
        provenance_cache: dict[int, Any],
        provenance_miss: Callable[[int], Any],
        tail_ids: list[str] | None = None,
    ) -> list[list[dict[str, Any]]]: ...
    @property
    def candidates(self) -> npt.NDArray[np.int32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def reach(self) -> npt.NDArray[np.int32]: ...
    @property
    def min_hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def path_count(self) -> npt.NDArray[np.int64]: ...
    @property
    def path_ptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def path_nodes(self) -> npt.NDArray[np.int32]: ...
    @property
    def path_edges(self) -> npt.NDArray[np.int64]: ...
    @property
    def path_hops(self) -> npt.NDArray[np.int32]: ...
    @property
    def path_scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def edges_visited(self) -> int: ...
    @property
    def candidates_found(self) -> int: ...
    @property
    def cut_by_edges(self) -> bool: ...
    @property
    def cut_by_candidates(self) -> bool: ...
    @property
    def truncated(self) -> bool: ...

def graph_context(
    graph: CSRGraph | LiveGraph,
    seeds: npt.ArrayLike,
    weights: npt.ArrayLike,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 20,
    node_type: npt.ArrayLike | None = None,
    keep_types: npt.ArrayLike | None = None,
    visible: VisibilityMask | LiveVisibility | None = None,
    rank: _Int = 0,
    max_hops: _Int = 2,
    max_visits: _Int = 4000000,
    delta_node_type: npt.ArrayLike | None = None,
) -> ContextResult: ...
def graph_context_text(
    graph: CSRGraph,
    index: TextIndex,
    terms: npt.ArrayLike,
    n_hits: _Int = 10,
    concepts: npt.ArrayLike | None = None,
    restart: _Float = 0.25,
    eps: _Float = 0.0001,
    k: _Int = 20,
    node_type: npt.ArrayLike | None = None,
    keep_types: npt.ArrayLike | None = None,
    visible: VisibilityMask | None = None,
    stats: TextStats | None = None,
    rank: _Int = 0,
    max_hops: _Int = 2,
    max_visits: _Int = 4000000,
    k1: _Float = 1.2,
    b: _Float = 0.75,
) -> ContextResult: ...
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
    rank: _Int = 0,
    max_hops: _Int = 2,
    max_visits: _Int = 4000000,
) -> ContextBatch: ...
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
    start_weights: npt.ArrayLike | None = None,
    edge_weights: npt.ArrayLike | None = None,
    hop_decay: _Float = 1.0,
    min_share: _Float = 0.5,
    max_paths: _Int = 0,
    render: tuple[Any, ...] | None = None,
) -> WalkResult: ...
def typed_walk_live(
    graph: LiveGraph,
    pair_keys: npt.ArrayLike,
    pair_ptr: npt.ArrayLike,
    typedir: npt.ArrayLike,
    weights: npt.ArrayLike | None,
    starts: npt.ArrayLike,
    max_hops: _Int,
    expand_types: npt.ArrayLike,
    admit_types: npt.ArrayLike,
    node_type: npt.ArrayLike | None = None,
    delta_node_type: npt.ArrayLike | None = None,
    expand_node_types: npt.ArrayLike | None = None,
    admit_node_types: npt.ArrayLike | None = None,
    max_edges: _Int = 10000,
    max_candidates: _Int = 50,
    visible: LiveVisibility | None = None,
    start_weights: npt.ArrayLike | None = None,
    edge_weights: npt.ArrayLike | None = None,
    hop_decay: _Float = 1.0,
    min_share: _Float = 0.5,
    max_paths: _Int = 0,
    render: tuple[Any, ...] | None = None,
) -> WalkResult: ...

# ---------------------------------------------------------------- text index (register_text.cpp)
class TextIndex:
    """Inverted index: term -> (document, weighted tf) postings and document lengths. Build with TextIndex.build or TextIndex.from_arrays."""

    @staticmethod
    def build(
        num_docs: _Int,
        num_terms: _Int,
        title_ptr: npt.ArrayLike,
        title_tokens: npt.ArrayLike,
        body_ptr: npt.ArrayLike,
        body_tokens: npt.ArrayLike,
        title_weight: _Int = 2,
    ) -> TextIndex: ...
    @staticmethod
    def from_arrays(
        num_docs: _Int,
        title_weight: _Int,
        offsets: npt.ArrayLike,
        docs: npt.ArrayLike,
        tfs: npt.ArrayLike,
        doc_len: npt.ArrayLike,
        borrow: tuple[Any, ...] = (),
    ) -> TextIndex: ...
    def with_changes(
        self,
        num_docs: _Int,
        dropped: npt.ArrayLike,
        changed: npt.ArrayLike,
        sub: TextIndex,
        sub_term_at: npt.ArrayLike,
        sub_term_known: npt.ArrayLike,
    ) -> tuple[TextIndex, npt.NDArray[np.int32]]: ...
    @property
    def num_docs(self) -> int: ...
    @property
    def num_terms(self) -> int: ...
    @property
    def title_weight(self) -> int: ...
    @property
    def num_postings(self) -> int: ...
    @property
    def borrowed(self) -> bool: ...
    @property
    def total_len(self) -> int: ...
    @property
    def offsets(self) -> npt.NDArray[np.int64]: ...
    @property
    def docs(self) -> npt.NDArray[np.int32]: ...
    @property
    def tfs(self) -> npt.NDArray[np.int32]: ...
    @property
    def doc_len(self) -> npt.NDArray[np.int32]: ...
    @property
    def max_tf(self) -> npt.NDArray[np.int32]: ...
    @property
    def min_len(self) -> npt.NDArray[np.int32]: ...
    @property
    def memory_bytes(self) -> int: ...
    def stats(self, visible: npt.ArrayLike | None = None, k1: _Float = 1.2, b: _Float = 0.75) -> TextStats: ...

class TextStats:
    """BM25 statistics over one visible set of documents."""

    @property
    def num_docs(self) -> int: ...
    @property
    def total_len(self) -> int: ...
    @property
    def df(self) -> npt.NDArray[np.int32]: ...
    @property
    def max_contrib(self) -> npt.NDArray[np.float64]: ...

class SparseVectors:
    """Sparse rows indexed by dimension, for exact dot-product top-k."""

    def __init__(
        self,
        n: _Int,
        dim: _Int,
        indptr: npt.ArrayLike,
        indices: npt.ArrayLike,
        values: npt.ArrayLike,
    ) -> None: ...
    @staticmethod
    def from_columns(
        n: _Int,
        dim: _Int,
        colptr: npt.ArrayLike,
        rows: npt.ArrayLike,
        values: npt.ArrayLike,
        borrow: tuple[Any, ...] = (),
    ) -> SparseVectors: ...
    @property
    def colptr(self) -> npt.NDArray[np.int64]: ...
    @property
    def col_rows(self) -> npt.NDArray[np.int32]: ...
    @property
    def col_values(self) -> npt.NDArray[np.float32]: ...
    @property
    def borrowed(self) -> bool: ...
    @property
    def rows(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def nnz(self) -> int: ...
    def topk(
        self,
        query: npt.ArrayLike,
        k: _Int,
        visible: npt.ArrayLike | None = None,
        min_score: _Float | None = None,
        method: str = "auto",
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...

class DenseVectors:
    """Dense rows with per-row int8 codes, for a pruned exact dot-product top-k."""

    def __init__(self, matrix: npt.ArrayLike) -> None: ...
    def updated(self, matrix: npt.ArrayLike, base_rows: npt.ArrayLike) -> DenseVectors: ...
    def with_delta(
        self, n: _Int, runs: npt.ArrayLike, rows: npt.ArrayLike, row_numbers: npt.ArrayLike
    ) -> DenseDelta: ...
    @property
    def rows(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def matrix(self) -> npt.NDArray[np.float32]: ...
    def topk(
        self,
        query: npt.ArrayLike,
        k: _Int,
        visible: npt.ArrayLike | None = None,
        min_score: _Float | None = None,
        method: str = "auto",
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...

class DenseDelta:
    """A DenseVectors base read through runs plus a few delta rows (DenseVectors.with_delta)."""

    @property
    def rows(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def delta_rows(self) -> int: ...
    @property
    def runs(self) -> int: ...
    @property
    def base(self) -> DenseVectors: ...
    def topk(
        self,
        query: npt.ArrayLike,
        k: _Int,
        visible: npt.ArrayLike | None = None,
        min_score: _Float | None = None,
        method: str = "auto",
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...

# (docs, scores, scored, postings_read)
def bm25_topk(
    index: TextIndex,
    terms: npt.ArrayLike,
    k: _Int,
    visible: npt.ArrayLike | None = None,
    eligible: npt.ArrayLike | None = None,
    stats: TextStats | None = None,
    k1: _Float = 1.2,
    b: _Float = 0.75,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], int, int]: ...

# (docs, scores, scored, postings_read); delta document j as base.num_docs + j
def bm25_topk_live(
    base: TextIndex,
    base_stats: TextStats,
    base_visible: npt.ArrayLike | None,
    base_eligible: npt.ArrayLike | None,
    dropped: npt.ArrayLike,
    delta: TextIndex,
    delta_keys: npt.ArrayLike,
    delta_visible: npt.ArrayLike | None,
    delta_eligible: npt.ArrayLike | None,
    base_terms: npt.ArrayLike,
    delta_terms: npt.ArrayLike,
    k: _Int,
    k1: _Float = 1.2,
    b: _Float = 0.75,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], int, int]: ...
def vector_topk(
    matrix: npt.ArrayLike,
    query: npt.ArrayLike,
    k: _Int,
    visible: npt.ArrayLike | None = None,
    min_score: _Float | None = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]: ...
def csr_graph_from_arrays(
    num_nodes: _Int,
    num_edge_types: _Int,
    indptr: npt.ArrayLike,
    indices: npt.ArrayLike,
    pair_base: npt.ArrayLike,
    pair_ptr: npt.ArrayLike,
    edge_typedir: npt.ArrayLike,
    borrow: tuple[object, ...] = (),
) -> CSRGraph: ...
