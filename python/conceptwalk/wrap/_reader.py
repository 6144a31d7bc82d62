"""What the wrap reads, and what it derives from it.

:class:`StoreReader` is what the wrap reads from: a knowledge base (any
:class:`~conceptwalk.tools.GraphSource`) or a bare LinkGraph. :meth:`StoreReader.read_cache`
gives the :class:`ReadCache` of the store's current state (:class:`~conceptwalk.kb.state.StoreState`:
one committed version): the caches the resolver, the walk and the probe share over it (alias
index, concept indices, title index, annotation presence, concept vectors). What depends on a
caller lives in the caller's :class:`~conceptwalk.graph.view.View`, not here. What a later state
can reuse -- the concept vectors, the alias index -- is brought forward to it through the change
log and the store's tallies (:data:`_CARRY`) rather than derived again.

Words: a *snapshot* is only the graph's arrays at one change-log position and the file they are
saved in (``kb/snapshot.py``); a *source* is only a :class:`~conceptwalk.tools.GraphSource`."""

from __future__ import annotations

import inspect
import hashlib
import json
import logging
import re
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from .embed import HashingEmbedder, normalize_text, normalize_texts
from ..errors import ConceptwalkError, InputError, NotFoundError
from ..graph import CORE_VERSION, EDGE_ANNOTATION_KEYS, LinkGraph, VisibilityMask
from ..graph.vectors import DenseDelta, DenseVectors, SparseVectors
from ..graph.view import View
from ..tools.common import source_kind
from .config import WalkConfig

_log = logging.getLogger("conceptwalk.wrap")

#: Longest phrase (in words) looked up in the alias and title indexes.
MAX_PHRASE_WORDS = 12


def phrase_index(pairs: list[tuple[str, Any]]) -> tuple[dict[str, list[Any]], int]:
    """normalised phrase -> values (first-seen order, no repeats), and the longest phrase's words."""
    index: dict[str, list[Any]] = {}
    longest = 0
    norms = normalize_texts([phrase for phrase, _value in pairs])  # (ASCII ones compiled)
    for norm, (_phrase, value) in zip(norms, pairs):
        if not norm:
            continue
        words = norm.count(" ") + 1
        if words > MAX_PHRASE_WORDS:
            continue
        lst = index.get(norm)
        if lst is None:
            index[norm] = [value]
        elif value not in lst:
            lst.append(value)
        if words > longest:
            longest = words
    return index, longest


def name_phrases(nid: str, title: str | None) -> list[tuple[str, str]]:
    """A concept's names for the fallback's index: its title, its id and its id's tail after each
    of ``:``, ``/`` and ``#``; each with the id."""
    out = [(title, nid)] if title else []
    out.append((nid, nid))
    for sep in (":", "/", "#"):
        if sep in nid:
            out.append((nid.rsplit(sep, 1)[1], nid))
    return out


def phrases_in(text: str, index: dict[str, list[Any]], longest: int) -> list[tuple[str, list[Any]]]:
    """The indexed phrases occurring in ``text`` as whole words (after normalisation), in order of
    first occurrence, each once."""
    if not index:
        return []
    words = normalize_text(text).split()
    found: dict[str, list[Any]] = {}
    for i in range(len(words)):
        for n in range(1, min(longest, len(words) - i) + 1):
            key = " ".join(words[i : i + n])
            hit = index.get(key)
            if hit is not None and key not in found:
                found[key] = hit
    return list(found.items())


#: Largest share of nonzero entries for which the semantic top-k reads the concept vectors by
#: column (only the query's nonzero dimensions); denser matrices are read row by row.
SPARSE_DENSITY = 0.3


class ColumnMatrix:
    """The reference numpy scoring of the semantic step (the compiled path is
    :class:`conceptwalk.graph.vectors.SparseVectors`; benchmarks and the differential tests
    compare the two). The nonzero entries of an (n, dim) float32 matrix grouped by column, for dot products with
    a sparse query that give, bit for bit, what :func:`conceptwalk.graph.vectors.vector_topk`
    computes: the core sums each row's float64 products in four lanes (dimension ``j`` in lane
    ``j % 4``, the ``dim % 4`` trailing dimensions in lane 0), each lane in ascending ``j``, and
    returns ``(lane0 + lane1) + (lane2 + lane3)``. A zero product never changes a lane (a lane
    is never ``-0.0``), so summing only the nonzero products, in the same lanes and order, gives
    the same bits; and a row's score depends on that row and the query only."""

    __slots__ = ("n", "dim", "ptr", "data", "bins")

    def __init__(
        self, n: int, dim: int, ptr: list[int], data: npt.NDArray[np.float64], bins: npt.NDArray[np.int64]
    ) -> None:
        self.n = n
        self.dim = dim
        self.ptr = ptr  # column j's entries are [ptr[j], ptr[j + 1])
        self.data = data  # the entries as float64, by column, then row ascending
        self.bins = bins  # 4 * row + the core's lane of the entry's column

    @classmethod
    def build(cls, mat: npt.NDArray[np.float32], max_density: float = SPARSE_DENSITY) -> ColumnMatrix | None:
        """The columns of ``mat``, or None when more than ``max_density`` of its entries are
        nonzero (or it is empty or not finite)."""
        n, dim = mat.shape
        if n == 0 or dim == 0 or not np.all(np.isfinite(mat)):
            return None
        nnz = int(np.count_nonzero(mat))
        if nnz > max_density * n * dim:
            return None
        cols, rows = np.nonzero(mat.T)  # by column, then row ascending
        data = mat.T[cols, rows].astype(np.float64)
        main = dim - dim % 4
        lanes = np.where(cols < main, cols & 3, 0)
        ptr = np.zeros(dim + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=dim), out=ptr[1:])
        return cls(n, dim, ptr.tolist(), data, rows.astype(np.int64) * 4 + lanes)

    def scores(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Every row's dot product with ``query`` (finite, shape (dim,)), as the core computes it."""
        n = self.n
        ptr = self.ptr
        qnz = [j for j in np.flatnonzero(query).tolist() if ptr[j + 1] > ptr[j]]
        if not qnz:
            return np.zeros(n, dtype=np.float64)
        # the entries of the query's columns, columns ascending (so each lane ascends in j)
        data = np.concatenate([self.data[ptr[j] : ptr[j + 1]] for j in qnz])
        bins = np.concatenate([self.bins[ptr[j] : ptr[j + 1]] for j in qnz])
        weights = data * np.repeat(query[qnz].astype(np.float64), [ptr[j + 1] - ptr[j] for j in qnz])
        acc = np.bincount(bins, weights=weights, minlength=4 * n).reshape(n, 4)
        return (acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])


#: Per store object, the last concept title vectors built or brought forward for each
#: (embedder, concept types) key: ``(graph, graph_version, concept indices, vectors)``; the next
#: position's vectors are brought forward from them through the change log (only the changed
#: titles embedded again). A read-only open keeps nothing in the store, so this is what carries
#: them there; the entry holds the graph it belongs to (the newest, which the store holds too).
#: Also, per store object, what is derived from its aliases alone (:meth:`ReadCache._by_aliases`).
_CARRY: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


#: The key of a :data:`_CARRY` entry's history (:attr:`StoreState.history
#: <conceptwalk.kb.state.StoreState.history>` of what it holds).
_HISTORY = ("history",)


def _carry_slot(kb: Any, history: int = 0) -> dict[Any, Any] | None:
    """The store object's entry of :data:`_CARRY` (made on first use) for a state of ``history``:
    emptied when the store object has found its change log replaced since the entry was filled
    (what it holds belongs to positions of the other log); None for a state of an older history
    than the entry's (read before the replacement: nothing of it is carried), or for a KB-like
    object that cannot be weakly referenced. Call under :data:`_SHARED_LOCK`."""
    try:
        slot = _CARRY.setdefault(kb, {})
    except TypeError:
        return None
    have = slot.get(_HISTORY, 0)
    if have == history:
        return slot
    if history < have:
        return None
    slot.clear()
    slot[_HISTORY] = history
    return slot


def _changed_positions(
    old_graph: LinkGraph, graph: LinkGraph, changed: list[str]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The node indices of the ``changed`` ids in the old graph (dropped from it) and in the new
    one (added to it)."""
    old_index, new_index = old_graph.id_index, graph.id_index
    dropped = np.fromiter((old_index[x] for x in changed if x in old_index), dtype=np.int64)
    added = np.fromiter((new_index[x] for x in changed if x in new_index), dtype=np.int64)
    return dropped, added


def _rows_untouched(
    old_rows: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    moved: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> bool:
    """Whether no changed node (``moved``: :func:`_changed_positions`) is a row on either side
    and the row counts agree: the same nodes in the same order (nodes keep their relative
    order), so whatever is derived per row holds."""
    dropped, added = moved
    return len(rows) == len(old_rows) and not _meets(old_rows, dropped) and not _meets(rows, added)


def advance_vectors(
    old_graph: LinkGraph,
    old_rows: npt.NDArray[np.int64],
    old: SparseVectors,
    graph: LinkGraph,
    rows: npt.NDArray[np.int64],
    changed: list[str],
    embed_csr: Callable[[list[int]], tuple[Any, Any, Any]],
) -> SparseVectors | None:
    """Row vectors of ``graph``'s nodes ``rows`` brought forward from ``old`` (the vectors of
    ``old_graph``'s nodes ``old_rows``), given the ids of every node that changed between the two
    graphs (``changed``): an unchanged node's row is moved, a changed or new one's is made by
    ``embed_csr(row numbers)`` (CSR arrays of those rows, in the order asked). Entry for entry
    what building every row afresh gives, when each row's vector depends on its node alone (the
    hashing embedder's do) and the two graphs differ by ``changed`` only; None when they do not
    (the node counts disagree), so the caller builds afresh. Nodes keep their relative order in
    both graphs (ascending id), so the unchanged nodes correspond in order."""
    n_old, n_new = old_graph.num_nodes, graph.num_nodes
    dropped, added = _changed_positions(old_graph, graph, changed)
    if n_old - len(dropped) != n_new - len(added) or old.n != len(old_rows) or old.dim <= 0:
        return None
    if _rows_untouched(old_rows, rows, (dropped, added)):
        return old  # an agent's memories written, its concepts untouched: the same vectors
    old_to_new = _old_to_new(n_old, old_rows, n_new, rows, (dropped, added))
    filled = np.zeros(len(rows), dtype=bool)
    filled[old_to_new[old_to_new >= 0]] = True
    missing = np.flatnonzero(~filled)
    dim = old.dim
    colptr, col_rows, col_values = old.columns()
    cols = np.repeat(np.arange(dim, dtype=np.int64), np.diff(colptr))
    new_row = old_to_new[col_rows] if len(col_rows) else np.zeros(0, dtype=np.int64)
    keep = new_row >= 0
    n = len(rows)
    key = cols[keep] * max(n, 1) + new_row[keep]  # ascending: columns ascend, rows map in order
    vals = col_values[keep]
    if len(missing):
        indptr, indices, values = embed_csr(missing.tolist())
        fresh = SparseVectors(len(missing), dim, indptr, indices, values)  # the core's own entries
        f_ptr, f_rows, f_vals = fresh.columns()
        f_cols = np.repeat(np.arange(dim, dtype=np.int64), np.diff(f_ptr))
        f_key = f_cols * max(n, 1) + missing[f_rows]  # ascending: missing ascends
        at = np.searchsorted(key, f_key)
        key = np.insert(key, at, f_key)
        vals = np.insert(vals, at, f_vals)
    if len(key) > 1 and not bool(np.all(key[1:] > key[:-1])):
        return None  # pragma: no cover - two entries for one (row, dimension): not the same nodes
    out_cols, out_rows = np.divmod(key, max(n, 1))
    ptr = np.zeros(dim + 1, dtype=np.int64)
    np.cumsum(np.bincount(out_cols, minlength=dim), out=ptr[1:])
    return SparseVectors.from_columns(n, dim, ptr, out_rows.astype(np.int32), vals.astype(np.float32))


def _old_to_new(
    n_old: int,
    old_rows: npt.NDArray[np.int64],
    n_new: int,
    rows: npt.NDArray[np.int64],
    moved: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> npt.NDArray[np.int64]:
    """Per row of ``old_rows`` (node indices of a graph of ``n_old`` nodes), the row of ``rows``
    (of a graph of ``n_new`` nodes) holding the same unchanged node, or -1 (its node changed, or
    is not a row any more). ``moved`` is :func:`_changed_positions` of the two graphs, which
    differ by those nodes only (``n_old - len(dropped) == n_new - len(added)``): the unchanged
    nodes keep their relative order, so they pair up in order."""
    dropped, added = moved
    keep_old = np.ones(n_old, dtype=bool)
    keep_old[dropped] = False
    keep_new = np.ones(n_new, dtype=bool)
    keep_new[added] = False
    node_map = np.full(n_old, -1, dtype=np.int64)
    node_map[keep_old] = np.flatnonzero(keep_new)
    row_of = np.full(n_new, -1, dtype=np.int64)
    row_of[rows] = np.arange(len(rows), dtype=np.int64)
    to = node_map[old_rows]
    return np.where(to >= 0, row_of[np.maximum(to, 0)], -1)


def _paired_rows(
    old_graph: LinkGraph,
    old_rows: npt.NDArray[np.int64],
    graph: LinkGraph,
    rows: npt.NDArray[np.int64],
    changed: list[str],
) -> npt.NDArray[np.int64] | None:
    """Per row of ``rows`` (``graph``'s node indices), the row of ``old_rows`` (``old_graph``'s)
    holding the same unchanged node, or -1 (changed or new), given the ids of every node that
    changed between the two graphs; None when the node counts say they differ by more."""
    moved = _changed_positions(old_graph, graph, changed)
    if old_graph.num_nodes - len(moved[0]) != graph.num_nodes - len(moved[1]):
        return None
    old_to_new = _old_to_new(old_graph.num_nodes, old_rows, graph.num_nodes, rows, moved)
    out = np.full(len(rows), -1, dtype=np.int64)
    had = np.flatnonzero(old_to_new >= 0)
    out[old_to_new[had]] = had
    return out


def _copy_rows(out: npt.NDArray[Any], src: npt.NDArray[Any], src_rows: npt.NDArray[np.int64]) -> None:
    """``out[r] = src[src_rows[r]]`` for every row with ``src_rows[r] >= 0``, run by run: the rows
    of an unchanged stretch are consecutive on both sides, so each stretch is one slice copy
    (a write changes few rows; a gather of a large matrix row by row costs several times more)."""
    at = np.flatnonzero(src_rows >= 0)
    if not len(at):
        return
    from_rows = src_rows[at]
    cut = np.flatnonzero((np.diff(at) != 1) | (np.diff(from_rows) != 1)) + 1
    firsts = np.concatenate([[0], cut]).astype(np.int64)
    lasts = np.concatenate([cut, [len(at)]]).astype(np.int64) - 1
    for o, f, n in zip(at[firsts].tolist(), from_rows[firsts].tolist(), (lasts - firsts + 1).tolist()):
        out[o : o + n] = src[f : f + n]


def _row_positions(sorted_rows: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The positions in ``sorted_rows`` (ascending) of those of ``nodes`` that are rows, ascending."""
    if not len(nodes) or not len(sorted_rows):
        return np.zeros(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(sorted_rows, nodes), len(sorted_rows) - 1)
    return np.unique(at[sorted_rows[at] == nodes]).astype(np.int64)


def _meets(sorted_rows: npt.NDArray[np.int64], nodes: npt.NDArray[np.int64]) -> bool:
    """Whether any of ``nodes`` is among ``sorted_rows`` (ascending)."""
    return len(_row_positions(sorted_rows, nodes)) > 0


def _concept_rows(graph: LinkGraph, names: tuple[str, ...] | None) -> npt.NDArray[np.int64]:
    """The node indices of ``graph``'s concepts (nodes of the types ``names``; None = all)."""
    if names is None:
        return np.arange(graph.num_nodes, dtype=np.int64)
    flags = np.array([t in names for t in graph.node_type_names], dtype=bool)
    if flags.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(flags[graph.node_type_codes]).astype(np.int64)


def _vectors_from_parts(parts: Mapping[str, Any], rows: int, dim: int) -> SparseVectors | None:
    """Kept title vectors (``colptr``, ``rows``, ``values``, ``shape``) as an index of ``rows``
    rows of ``dim`` dimensions, every entry checked by the core again (the file is verified, not
    trusted blindly); None when they are not that."""
    if set(parts) != {"colptr", "rows", "values", "shape"}:
        return None
    shape = parts["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.tolist() != [rows, dim]:
        return None
    try:
        return SparseVectors.from_columns(rows, dim, parts["colptr"], parts["rows"], parts["values"])
    except InputError:
        return None


#: At most this many changed concepts have their stored vectors looked up by id
#: (:meth:`ReadCache._patched_matrix`); more read every vector of the model at once.
_FEW_IDS = 256


def _stored_vectors_of(get: Callable[..., Any], name: str, ids: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """The stored vectors of those of ``ids`` that have one under the model ``name``
    (``get``: :meth:`KnowledgeBase.get_embeddings`), by id: in one read when every id has one,
    else one read per id."""
    try:
        got_ids, mat = get(name, ids)
        return {x: mat[i] for i, x in enumerate(got_ids)}
    except NotFoundError:
        pass
    out: dict[str, npt.NDArray[np.float32]] = {}
    wanted = list(dict.fromkeys(ids))
    if len(wanted) == 1:
        return out  # (that one has none)
    for x in wanted:
        try:
            _one, mat = get(name, [x])
        except NotFoundError:
            continue
        out[x] = mat[0]
    return out


def _matrix_from_parts(
    parts: Mapping[str, Any], rows: npt.NDArray[np.int64], dim: int
) -> npt.NDArray[np.float32] | None:
    """Kept stored vectors (``matrix``, ``concepts``, ``shape``) as the read-only ``(len(rows),
    dim)`` matrix of the concept rows ``rows``, in place (the snapshot file's pages when read from
    it); None when they are not that. Whether they are finite is checked where they are used
    (:meth:`ReadCache.concept_columns`, the core)."""
    if set(parts) != {"matrix", "concepts", "shape"}:
        return None
    shape, concepts, flat = parts["shape"], parts["concepts"], parts["matrix"]
    n = len(rows)
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.tolist() != [n, dim]:
        return None
    if concepts.dtype != np.int64 or concepts.shape != (n,) or not np.array_equal(concepts, rows):
        return None
    if flat.dtype != np.float32 or flat.size != n * dim:
        return None
    mat: npt.NDArray[np.float32] = np.ascontiguousarray(flat).reshape(n, dim).view()
    mat.setflags(write=False)
    return mat


def _delta_limit(n: int) -> int:
    """The most rows a dense concept index of ``n`` rows keeps as a delta over its base
    (:class:`DenseDelta`: its delta rows, or the base rows it excludes) before they are folded into
    a new base: 1% of the rows, at least 256, at most 4,096 (a query then scores at most that
    many rows exactly, about a millisecond at 384 dimensions)."""
    return min(4096, max(256, n // 100))


def _concept_row_of(graph: LinkGraph, idx: npt.NDArray[np.int64], ids: list[str]) -> npt.NDArray[np.int64]:
    """Per id, its concept row in ``graph`` (its position in ``idx``, the concepts' node
    indices ascending), or -1 (not a node, or not a concept)."""
    index = graph.id_index
    nodes = np.fromiter((index.get(x, -1) for x in ids), dtype=np.int64, count=len(ids))
    if not len(idx):
        return np.full(len(ids), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(idx, nodes), len(idx) - 1)
    return np.where((nodes >= 0) & (idx[at] == nodes), at, -1).astype(np.int64)


def _cut_runs(runs: npt.NDArray[np.int64], cuts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``runs`` (base begin, base end, new begin; non-empty, ascending, disjoint) without the new
    rows ``cuts`` (ascending, distinct, each inside a run): each run split around its cuts."""
    if not len(cuts):
        return runs
    o = runs[:, 2]
    starts = np.sort(np.concatenate([o, cuts + 1]))
    ends = np.sort(np.concatenate([o + (runs[:, 1] - runs[:, 0]), cuts]))
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    j = np.searchsorted(o, starts, side="right") - 1
    b0 = runs[j, 0] + (starts - o[j])
    return np.stack([b0, b0 + (ends - starts), starts], axis=1).astype(np.int64)


def _runs_of(base_of: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The runs (base begin, base end, new begin) of a per-row base row array (-1: not a base
    row): the stretches where consecutive rows read consecutive base rows."""
    at = np.flatnonzero(base_of >= 0)
    if not len(at):
        return np.zeros((0, 3), dtype=np.int64)
    b = base_of[at]
    cut = np.flatnonzero((np.diff(at) != 1) | (np.diff(b) != 1)) + 1
    firsts = np.concatenate([[0], cut]).astype(np.int64)
    lasts = np.concatenate([cut, [len(at)]]).astype(np.int64)
    return np.stack([b[firsts], b[firsts] + (lasts - firsts), at[firsts]], axis=1).astype(np.int64)


#: Per graph, the caches every StoreReader over it shares (alias index, concept indices and
#: vectors, ...): plain data that never refers back to the graph, so the entry goes with the graph.
#: A store's graph object is rebuilt on every write, so a graph's caches never go stale.
_SHARED: weakref.WeakKeyDictionary[LinkGraph, dict[Any, Any]] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.RLock()  # builders nest (alias_index -> aliases)


def _built() -> None:  # pragma: no cover - never called: _LazyCounts' spent builder
    return None


class _LazyCounts(Mapping[str, int]):
    """A read-only mapping computed on its first lookup (None from the builder = unknown: every
    lookup gives the default)."""

    def __init__(self, build: Callable[[], dict[str, int] | None]) -> None:
        self._build = build
        self._data: dict[str, int] | None = None
        self._done = False

    def _get_data(self) -> dict[str, int]:
        if not self._done:
            self._data = self._build()
            self._done = True
            self._build = _built  # what the builder held is released
        return self._data or {}

    @property
    def known(self) -> bool:
        self._get_data()
        return self._data is not None

    def __getitem__(self, key: str) -> int:
        return self._get_data()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get_data())

    def __len__(self) -> int:
        return len(self._get_data())


def _columns_key(kind: str, embedder: Any, config: WalkConfig) -> tuple[Any, ...]:
    """The cache key of what :meth:`ReadCache.concept_columns` keeps for ``embedder`` and
    ``config`` (``kind`` names which entry)."""
    return (kind, embedder.name, int(embedder.dim), config.concept_node_types, config.concept_text)


def _takes_caller(fn: Any) -> bool:
    """Whether the callable accepts a ``caller`` keyword."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "caller" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


class ReadCache:
    """The caches over one store state (its graph and version); built lazily, thread-safe,
    shared by every resolver, retriever and probe reading the same state (so a one-call
    ``resolve`` costs what a reused resolver costs). Nothing here writes to the store."""

    def __init__(self, source: StoreReader, graph: LinkGraph, state: Any = None) -> None:
        self.source = source
        self.graph = graph
        self._state = state  # the store's StoreState this graph was read in (None: graph() only)
        with _SHARED_LOCK:
            cache = _SHARED.get(graph)
            if cache is None:
                cache = {}
                _SHARED[graph] = cache
        self._cache: dict[Any, Any] = cache
        # A store's writes that cannot change the graph (aliases, embeddings, bodies) keep the
        # graph object, so what is read from the store is keyed by its write counter too; the
        # entries of an older counter for the same source are dropped.
        self.store_version = source.store_version() if state is None else state.version
        #: The graph's change-log position (None without a store state): what derived arrays
        #: kept by the store are keyed by.
        self.graph_version: int | None = None if state is None else state.graph_version
        # whether the state is committed (not read inside the store's own write transaction):
        # only then is what is derived from it carried to a later position
        self._committed = (
            state is not None and self.graph_version is not None and bool(getattr(state, "committed", True))
        )
        # which of the store object's change logs the position belongs to (a restored backup
        # replaces the log under it): what is carried is carried within one
        history = getattr(state, "history", 0)
        self._history = history if isinstance(history, int) and not isinstance(history, bool) else 0
        owner = (source.is_store, id(source.kb) if source.kb is not None else 0)
        # and by the change-log position: a write by another client's SQL (a stored vector
        # rewritten by hand) logs its rows without bumping the write counter
        self._kind = owner + (self.store_version, self.graph_version)
        with _SHARED_LOCK:
            for key in [
                k
                for k in cache
                if isinstance(k, tuple) and isinstance(k[0], tuple) and k[0][:2] == owner and k[0] != self._kind
            ]:
                del cache[key]

    @property
    def state(self) -> Any:
        """The store's :class:`~conceptwalk.kb.state.StoreState` this cache reads (None over a
        bare graph, or a store that keeps no states)."""
        return self._state

    @property
    def identity(self) -> tuple[Any, ...]:
        """What this cache's reads are keyed by: the source (a store or a bare graph)
        and the store's write counter. Two caches over the same graph and the same store
        state have the same identity (a per-caller memo keyed by it is shared by them)."""
        return self._kind

    def _get(self, key: Any, build: Any) -> Any:
        full = (self._kind, key)
        got = self._cache.get(full)
        if got is None:
            with _SHARED_LOCK:
                got = self._cache.get(full)
                if got is None:
                    got = build()
                    self._cache[full] = got
        return got

    # -------------------------------------------------------------- aliases
    def _by_aliases(self, key: str, build: Callable[[], Any], *, now: bool = False) -> Any:
        """What is derived from the store's aliases alone, kept per store object across writes of
        anything else while its alias count (:meth:`KnowledgeBase.aliases_version`) is unchanged
        (an agent writing memories every turn does not rebuild the alias index every turn);
        per state when the store keeps no count, or inside its own write transaction. ``now``:
        the count read on this call (a live read over this state as its base, which the alias
        writes since do not replace), never kept per state."""
        kb = self.source.kb

        def carried() -> Any:
            fn = getattr(kb, "aliases_version", None)
            version = fn() if (self._committed or now) and callable(fn) else None
            if not isinstance(version, int) or isinstance(version, bool):
                return build()
            with _SHARED_LOCK:
                slot = _carry_slot(kb, self._history)
                if slot is None:
                    return build()
                got = slot.get(("aliases", key))
                if got is not None and got[0] == version:
                    return got[1]
                # read after the count, so what is built is at least as new as the count says:
                # an alias write in between raises the count, and the next read builds again
                value = build()
                slot[("aliases", key)] = (version, value)
                return value

        if now:
            return carried()
        return self._get(key, carried)  # the count is read once per state

    def aliases(self, *, now: bool = False) -> dict[str, list[str]]:
        """alias -> canonical ids (the store's alias map; {} for a bare graph); ``now``: as the
        store holds them on this call, not as this state read them (see :meth:`_by_aliases`)."""
        return self._by_aliases("aliases", self.source.read_aliases, now=now)  # type: ignore[no-any-return]

    def alias_index(self, *, now: bool = False) -> tuple[dict[str, list[str]], int]:
        def build() -> tuple[dict[str, list[str]], int]:
            pairs = [(a, c) for a, cs in self.aliases(now=now).items() for c in cs]
            return phrase_index(pairs)

        return self._by_aliases("alias_index", build, now=now)  # type: ignore[no-any-return]

    def canonical(self, node_id: str) -> list[str]:
        """The canonical ids of ``node_id`` when it is an alias (a fragmented id), else itself."""
        return self.aliases().get(node_id) or [node_id]

    # -------------------------------------------------------------- node types
    def type_mask(self, names: tuple[str, ...] | None) -> npt.NDArray[np.bool_] | None:
        """Boolean mask over the node types' codes (None = any type)."""
        if names is None:
            return None
        g = self.graph
        return np.array([t in names for t in g.node_type_names], dtype=bool)

    def concept_indices(self, config: WalkConfig) -> npt.NDArray[np.int64]:
        def build() -> npt.NDArray[np.int64]:
            return _concept_rows(self.graph, config.concept_node_types)

        return self._get(("concepts", config.concept_node_types), build)  # type: ignore[no-any-return]

    def is_concept(self, idx: int, config: WalkConfig) -> bool:
        names = config.concept_node_types
        if names is None:
            return True
        g = self.graph
        return g.node_type_names[int(g.node_type_codes[idx])] in names

    def name_index(self, config: WalkConfig) -> tuple[dict[str, list[str]], int]:
        """normalised concept title / id / id tail -> concept ids (the fallback's index), and the
        longest phrase's words (an upper bound once brought forward). Kept per store object and
        brought to the next position through the change log (:data:`_CARRY`): only the changed
        concepts' phrases are normalised again, so a write does not cost every title again."""

        def build() -> tuple[dict[str, list[str]], int]:
            got = self._carried_names(config)
            if got is None:
                g = self.graph
                got = phrase_index(
                    [p for i in self.concept_indices(config).tolist() for p in name_phrases(g.ids[i], g.titles[i])]
                )
            kb = self.source.kb
            if kb is not None and self._committed:
                with _SHARED_LOCK:
                    slot = _carry_slot(kb, self._history)
                    if slot is not None:
                        slot[("names", config.concept_node_types)] = (self.graph, self.graph_version, got)
            return got

        return self._get(("names", config.concept_node_types), build)  # type: ignore[no-any-return]

    def _carried_names(self, config: WalkConfig) -> tuple[dict[str, list[str]], int] | None:
        """:meth:`name_index` of the last position this store object built it at, brought to this
        one: the changed concepts' old phrases dropped and their new ones added (None: nothing to
        start from, or the log cannot tell what changed, or more than a rebuild costs)."""
        changed_fn, got = self._carried(("names", config.concept_node_types))
        gv = self.graph_version
        if got is None or changed_fn is None or gv is None:
            return None
        old_g, old_v, (old_index, longest) = got
        if old_v == gv:
            return (old_index, longest) if old_g is self.graph else None
        if not 0 <= old_v < gv:
            return None
        g = self.graph
        changed = changed_fn(old_v, gv, limit=max(1000, len(old_index) // 8))
        if changed is None:
            return None
        if not changed:
            return old_index, longest
        names = config.concept_node_types

        def phrases(graph: LinkGraph, nid: str) -> list[tuple[str, str]]:
            i = graph.id_index.get(nid)
            if i is None or (names is not None and graph.node_type_names[int(graph.node_type_codes[i])] not in names):
                return []
            return name_phrases(nid, graph.titles[i])

        gone = phrase_index([p for nid in changed for p in phrases(old_g, nid)])[0]
        came, came_longest = phrase_index([p for nid in changed for p in phrases(g, nid)])
        index = dict(old_index)
        for key, ids in gone.items():
            left = [x for x in index.get(key, ()) if x not in ids]
            if left:
                index[key] = left
            else:
                index.pop(key, None)
        for key, ids in came.items():
            have = index.get(key, [])
            index[key] = sorted(set(have).union(ids))
        return index, max(longest, came_longest)

    # -------------------------------------------------------------- provenance presence
    def presence(self, visible: View | VisibilityMask | None = None) -> Mapping[str, int] | None:
        """Per annotation column, stored edges with a value (None for a bare graph).

        With ``visible`` (a caller's :class:`~conceptwalk.graph.view.View` of this state's
        graph, or its bare mask), only the stored edges whose two endpoints the caller sees are
        counted -- what the store with the hidden nodes deleted would count. That needs one
        pass over the store's edges (kept in the caller's view; with a bare mask, made for this
        mapping), so the mapping is lazy: it is computed on the first lookup."""
        whole = self._get("presence", self.source.read_presence)
        if whole is None or visible is None or (isinstance(visible, View) and visible.mask is None):
            return whole  # type: ignore[no-any-return]
        # The counts are kept in the view's memo (with whatever holds this mapping, e.g. the
        # provenance there): the view is held weakly, or the memo would hold the view that holds
        # it, a cycle that keeps this state's graph alive until a collection.
        vm = visible.mask if isinstance(visible, View) else visible
        vref = weakref.ref(visible) if isinstance(visible, View) else None

        def counts() -> dict[str, int] | None:
            v = None if vref is None else vref()
            return self.visible_counts(vm if v is None else v)

        return _LazyCounts(counts)

    def visible_counts(self, visible: View | VisibilityMask | None) -> dict[str, int] | None:
        """Stored edges between nodes the caller sees (``"edges"``) and, per annotation column,
        how many of them hold a value; None for a bare graph or a KB-like object that cannot
        list its edges. ``visible`` is the caller's view of this state's graph (None or an
        all-access view: every stored edge; the counts are kept in the view) or its bare mask
        (counted for this call)."""
        if visible is None or (isinstance(visible, View) and visible.mask is None):
            whole = self.presence()
            if whole is None:
                return None
            stats_fn = getattr(self.source.kb, "stats", None)
            edges = int(stats_fn().get("edges", 0)) if stats_fn is not None else None
            return None if edges is None else {"edges": edges, **whole}
        rows = self._get("edge_presence", self._edge_presence_rows)
        if rows is False:
            return None
        vm = visible.mask if isinstance(visible, View) else visible
        assert vm is not None  # an all-access view returned above

        def count() -> dict[str, int]:
            src, dst, bits = rows
            mask = np.asarray(vm.mask, dtype=bool)
            ok = (src >= 0) & (dst >= 0)
            ok[ok] = mask[src[ok]] & mask[dst[ok]]
            seen = bits[ok]
            counts = {"edges": int(ok.sum())}
            for i, key in enumerate(EDGE_ANNOTATION_KEYS):
                counts[key] = int(np.count_nonzero(seen & (1 << i)))
            return counts

        if isinstance(visible, View):
            return visible.memo(("wrap.visible_counts", self._kind), count)
        return count()

    def _edge_presence_rows(self) -> Any:
        """The store's edges as graph positions (-1 for an endpoint this graph lacks) and
        their presence bits; False when the source cannot list them."""
        got = self.source.read_edge_presence()
        if got is None:
            return False
        ids, src, dst, bits = got
        lut = np.fromiter((self.graph.id_index.get(x, -1) for x in ids), dtype=np.int64, count=len(ids))
        return (
            lut[src] if len(src) else np.zeros(0, np.int64),
            lut[dst] if len(dst) else np.zeros(0, np.int64),
            np.asarray(bits, dtype=np.uint8),
        )

    # -------------------------------------------------------------- embeddings
    def concept_embeddings(self, embedder: Any, config: WalkConfig) -> npt.NDArray[np.float32]:
        """Rows aligned with :meth:`concept_indices`: the stored vectors under ``embedder.name``
        (the store's own, written when it was written); concepts without one are embedded from
        ``config.concept_text`` once and held in memory (never written). Kept across writes that
        change neither a stored vector nor a concept (:meth:`_by_embeddings`), and brought
        forward across writes that do (:meth:`_patched_matrix`: only the rows of the concepts
        the change log names are read or embedded again). When every concept's row is a stored
        vector the matrix is kept with the store's snapshot too
        (:meth:`KnowledgeBase.keep_derived_arrays`: mapped by the next process instead of read
        back from the vector tables)."""

        def build() -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
            idx_arr = self.concept_indices(config)
            kept = self._kept_matrix(embedder, config, idx_arr)
            if kept is not None:
                return kept, np.zeros(len(idx_arr), dtype=bool)
            patched = self._patched_matrix(embedder, config, idx_arr, key)
            if patched is not None:
                return patched
            ids = [self.graph.ids[i] for i in idx_arr.tolist()]
            at = self.graph_version if self._committed else None
            made: list[npt.NDArray[np.bool_]] = []
            mat = self.source.embeddings_for(
                embedder, ids, self.graph, text=config.concept_text, graph_version=at, history=self._history, made=made
            )
            mat.setflags(write=False)  # shared and kept as it is (keep_derived_arrays copies a writable one)
            return mat, made[0]

        def with_store() -> npt.NDArray[np.float32]:
            mat, made = self._by_embeddings(key, config, build)
            if not made.any():  # every row the store's own: kept at this position (cheap when it is already)
                self._keep_matrix(embedder, config, mat)
            return mat  # type: ignore[no-any-return]

        key = ("emb", embedder.name, int(embedder.dim), config.concept_node_types, config.concept_text)
        return self._get(key, with_store)  # type: ignore[no-any-return]

    def _matrix_name(self, embedder: Any, config: WalkConfig) -> str:
        """The name the concepts' stored vectors of ``embedder`` are kept under in the store."""
        key = json.dumps(["stored", str(embedder.name), int(embedder.dim), config.concept_node_types])
        readable = re.sub(r"[^A-Za-z0-9_:-]", "_", str(embedder.name))
        return f"wrap.stored.{readable}.{hashlib.sha256(key.encode()).hexdigest()[:24]}"

    def _kept_matrix(
        self, embedder: Any, config: WalkConfig, idx: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32] | None:
        """The concepts' stored vectors as the store keeps them at this position
        (:meth:`_keep_matrix`), or None (an earlier position's are :meth:`_patched_matrix`'s)."""
        kb = self.source.kb
        gv = self.graph_version
        if kb is None or gv is None or not self._committed:
            return None
        fn = getattr(kb, "derived_arrays", None)
        got = fn(self._matrix_name(embedder, config), gv, history=self._history) if callable(fn) else None
        return None if got is None else _matrix_from_parts(got, idx, int(embedder.dim))

    def _patched_matrix(
        self, embedder: Any, config: WalkConfig, idx: npt.NDArray[np.int64], key: Any
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None:
        """The concepts' vectors brought forward from an earlier position through the change
        log, and which rows the model made (True) rather than the store holds: the rows of the
        concepts the log names since (added, removed, renamed, re-typed, text changed when it is
        embedded, a stored vector of the model written) are read from the store, or embedded
        when the store has none; every other row is the earlier matrix's. The earlier position
        is this store object's last (:meth:`_by_embeddings`' entry) or, failing that, the one
        the store keeps (:meth:`KnowledgeBase.derived_arrays_before`, e.g. mapped from the
        snapshot file). The earlier matrix itself when no row changed. None when there is no
        earlier position, or the log cannot tell (too many changes, a bulk load): read whole."""
        kb = self.source.kb
        gv = self.graph_version
        changed_fn = getattr(kb, "changed_nodes", None)
        if kb is None or gv is None or not self._committed or not callable(changed_fn):
            return None
        dim = int(embedder.dim)
        start: tuple[LinkGraph, int, npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.bool_]] | None
        start = None
        with _SHARED_LOCK:
            slot = _carry_slot(kb, self._history)
            got = None if slot is None else slot.get(("embeddings", key))
        if got is not None:
            _ev, old_g, old_v, old_idx, (old_mat, old_made) = got
            start = (old_g, old_v, old_idx, old_mat, old_made)
        else:
            before_fn = getattr(kb, "derived_arrays_before", None)
            before = (
                before_fn(self._matrix_name(embedder, config), gv, history=self._history)
                if callable(before_fn)
                else None
            )
            if before is not None:
                old_g, old_v, parts = before
                old_idx = _concept_rows(old_g, config.concept_node_types)
                old_mat = _matrix_from_parts(parts, old_idx, dim)
                if old_mat is not None:
                    start = (old_g, old_v, old_idx, old_mat, np.zeros(len(old_idx), dtype=bool))
        if start is None:
            return None
        old_g, old_v, old_idx, old_mat, old_made = start
        if not 0 <= old_v < gv or old_mat.shape != (len(old_idx), dim) or len(old_made) != len(old_idx):
            return None  # (the same position is derived_arrays's or the entry's own; another graph there is not ours)
        changed = changed_fn(
            old_v, gv, text=config.concept_text != "title", vectors=str(embedder.name), limit=max(1000, len(idx) // 8)
        )
        if changed is None:
            return None
        g = self.graph
        new_from = _paired_rows(old_g, old_idx, g, idx, changed)
        if new_from is None:
            return None  # pragma: no cover - the two graphs differ by more than the log says
        if len(idx) == len(old_idx) and np.array_equal(new_from, np.arange(len(idx))):
            return old_mat, old_made  # an agent's memories written, its concepts untouched
        fresh = np.flatnonzero(new_from < 0)
        made: list[npt.NDArray[np.bool_]] = []
        vecs = self.source.embeddings_for(
            embedder,
            [g.ids[int(i)] for i in idx[fresh]],
            g,
            text=config.concept_text,
            graph_version=gv,
            history=self._history,
            made=made,
            by_id=len(fresh) <= _FEW_IDS,
        )
        out = np.empty((len(idx), dim), dtype=np.float32)
        out_made = np.empty(len(idx), dtype=bool)
        take = new_from >= 0
        _copy_rows(out, old_mat, new_from)
        out_made[take] = old_made[new_from[take]]
        out[fresh] = vecs
        out_made[fresh] = made[0]
        out.setflags(write=False)
        return out, out_made

    def _keep_matrix(self, embedder: Any, config: WalkConfig, mat: npt.NDArray[np.float32]) -> None:
        fn = getattr(self.source.kb, "keep_derived_arrays", None)
        if self.graph_version is None or not self._committed or not callable(fn):
            return
        idx = self.concept_indices(config)
        if mat.shape != (len(idx), int(embedder.dim)) or mat.dtype != np.float32:
            return
        shape = np.array(mat.shape, dtype=np.int64)
        fn(
            self._matrix_name(embedder, config),
            self.graph_version,
            {"matrix": mat, "concepts": idx, "shape": shape},
            history=self._history,
        )

    def _by_embeddings(self, key: Any, config: WalkConfig, build: Callable[[], Any]) -> Any:
        """What is derived from the concepts' stored (or model-made) vectors, kept per store
        object across writes that change no concept's node, text (when embedded) or stored vector
        (the change log names each; :meth:`KnowledgeBase.embeddings_version` says whether any
        vector was written): an agent writing a memory and its embedding every turn does not read
        every concept vector back from the store, or re-code it, every turn. Built afresh
        otherwise, and when the store keeps no count (older than schema 4) or the state is not
        committed."""
        model = key[1]  # ("emb" | "embcols", embedder name, dim, ...)
        kb = self.source.kb
        ev_fn, changed_fn = getattr(kb, "embeddings_version", None), getattr(kb, "changed_nodes", None)
        gv = self.graph_version
        if not (self._committed and callable(ev_fn) and callable(changed_fn)):
            return build()
        ev = ev_fn()
        if gv is None or not isinstance(ev, int) or isinstance(ev, bool):
            return build()
        idx = self.concept_indices(config)
        with _SHARED_LOCK:
            slot = _carry_slot(kb, self._history)
            if slot is None:
                return build()
            got = slot.get(("embeddings", key))
        if got is not None:
            old_ev, old_g, old_v, old_idx, value = got
            if 0 <= old_v <= gv:
                if old_v == gv:
                    if old_g is self.graph and old_ev == ev:
                        return value
                else:
                    # the nodes whose row, text (when it is embedded) or stored vector changed
                    # (the vectors always: the counter is read now, not at the state's position,
                    # so a write between the two can leave the entry's counter newer than it)
                    changed = changed_fn(
                        old_v,
                        gv,
                        text=config.concept_text != "title",
                        vectors=str(model),
                        limit=max(1000, len(idx) // 8),
                    )
                    if changed is not None and _rows_untouched(
                        old_idx, idx, _changed_positions(old_g, self.graph, changed)
                    ):
                        with _SHARED_LOCK:
                            slot[("embeddings", key)] = (ev, self.graph, gv, idx, value)
                        return value
        value = build()
        with _SHARED_LOCK:
            slot[("embeddings", key)] = (ev, self.graph, gv, idx, value)
        return value

    def _vectors_name(self, embedder: Any, config: WalkConfig) -> str:
        """The name the built-in vectors of the concepts' titles are kept under in the store."""
        # Everything the vectors depend on, digested so the name is injective (a readable name with
        # characters replaced could give two concept-type sets one name), the package version
        # too: a later release may hash differently under the same embedder name.
        key = json.dumps([str(embedder.name), config.concept_node_types, config.concept_text, CORE_VERSION])
        readable = re.sub(r"[^A-Za-z0-9_:-]", "_", str(embedder.name))
        return f"wrap.vectors.{readable}.{hashlib.sha256(key.encode()).hexdigest()[:24]}"

    def _kept_vectors(self, embedder: Any, config: WalkConfig, rows: int) -> SparseVectors | None:
        """The hashed title vectors of this state's concepts as the store keeps them with its
        snapshot file (:meth:`KnowledgeBase.derived_arrays`), or None. Only the title text is kept:
        titles are part of the graph, so the vectors depend on the graph's position alone."""
        fn = getattr(self.source.kb, "derived_arrays", None)
        if config.concept_text != "title" or self.graph_version is None or not callable(fn):
            return None
        got = fn(self._vectors_name(embedder, config), self.graph_version, history=self._history)
        return None if got is None else _vectors_from_parts(got, rows, int(embedder.dim))

    def _carry_key(self, embedder: Any, config: WalkConfig) -> Any:
        return (self._vectors_name(embedder, config), self.source.annotations)

    def _carry_put(self, embedder: Any, config: WalkConfig, idx: Any, vectors: SparseVectors) -> None:
        """Remember this position's hashed concept vectors for the next one (:data:`_CARRY`)."""
        kb = self.source.kb
        if kb is None or not self._committed:
            return
        with _SHARED_LOCK:
            slot = _carry_slot(kb, self._history)
            if slot is not None:
                slot[self._carry_key(embedder, config)] = (self.graph, self.graph_version, idx, vectors)

    def _carried_vectors(self, embedder: Any, config: WalkConfig, idx: npt.NDArray[np.int64]) -> SparseVectors | None:
        """The hashed vectors of this position's concepts brought forward from an earlier one --
        this process's last (:data:`_CARRY`) or, for titles, the store's
        (:meth:`KnowledgeBase.derived_arrays_before`, e.g. read from the snapshot file) -- through
        the change log: only the concepts whose node (or, with ``concept_text="title+body"``,
        whose text) changed are embedded again. None when there is no earlier position to start
        from or the log cannot tell what changed (a bulk load, more changes than a rebuild
        costs)."""
        kb = self.source.kb
        gv = self.graph_version
        changed_fn = getattr(kb, "changed_nodes", None)
        if kb is None or gv is None or not self._committed or not callable(changed_fn):
            return None
        bodies = config.concept_text != "title"
        start: tuple[LinkGraph, int, Any, SparseVectors] | None = None
        with _SHARED_LOCK:
            slot = _carry_slot(kb, self._history)
            mine = None if slot is None else slot.get(self._carry_key(embedder, config))
        if mine is not None and 0 <= mine[1] <= gv:
            start = mine
        if start is None and not bodies:
            fn = getattr(kb, "derived_arrays_before", None)
            got = fn(self._vectors_name(embedder, config), gv, history=self._history) if callable(fn) else None
            if got is not None:
                old_g, old_v, arrays = got
                old_idx = _concept_rows(old_g, config.concept_node_types)
                old_vec = _vectors_from_parts(arrays, len(old_idx), int(embedder.dim))
                if old_vec is not None:
                    start = (old_g, old_v, old_idx, old_vec)
        if start is None:
            return None
        old_g, old_v, old_idx, old_vec = start
        if old_v == gv:  # the same position: the same graph, or one this object cannot vouch for
            return old_vec if old_g is self.graph else None
        g = self.graph
        limit = max(1000, len(idx) // 8)  # past it, embedding every title is about as cheap
        changed = changed_fn(old_v, gv, limit=limit, text=bodies)
        if changed is None:
            return None
        titles, gids = g.titles, g.ids

        def embed(rows: list[int]) -> tuple[Any, Any, Any]:
            picked = [int(idx[r]) for r in rows]
            if bodies:  # (their bodies read from the store, as a fresh build reads them)
                return embedder.embed_csr(self.source.node_texts([gids[i] for i in picked], g, config.concept_text))  # type: ignore[no-any-return]
            return embedder.embed_csr([titles[i] or gids[i] for i in picked])  # type: ignore[no-any-return]

        try:
            return advance_vectors(old_g, np.asarray(old_idx, dtype=np.int64), old_vec, g, idx, changed, embed)
        except InputError:  # pragma: no cover - entries the core refuses: build afresh
            return None

    def _keep_vectors(self, embedder: Any, config: WalkConfig, vectors: SparseVectors) -> None:
        fn = getattr(self.source.kb, "keep_derived_arrays", None)
        if self.graph_version is None or not callable(fn):
            return
        colptr, rows, values = vectors.columns()
        shape = np.array([vectors.n, vectors.dim], dtype=np.int64)
        fn(
            self._vectors_name(embedder, config),
            self.graph_version,
            {"colptr": colptr, "rows": rows, "values": values, "shape": shape},
            history=self._history,
        )

    def concept_columns(self, embedder: Any, config: WalkConfig) -> SparseVectors | DenseVectors | DenseDelta | None:
        """:meth:`concept_embeddings` as a compiled exact top-k index (bit for bit the dense
        scan's scores and order): indexed by dimension (:class:`SparseVectors`) when the
        vectors are sparse (at most :data:`SPARSE_DENSITY` of the entries nonzero, as the
        hashing embedder's are), else int8-coded rows (:class:`DenseVectors`, e.g. a sentence
        model's); None when the matrix is empty or not finite (the plain scan then reads it).
        With the built-in hashing embedder and no stored vectors under its name, the rows are
        hashed straight into the index (:meth:`HashingEmbedder.embed_csr`): the dense matrix is
        never made. A dense index is brought across concept writes as its base plus the
        changed rows (:meth:`_dense_delta`: :class:`DenseDelta`, the same results), so the
        read after a concept vector write costs the change, not the matrix."""

        def build() -> Any:
            from_text = not self.source.stores_embeddings(embedder)  # every row made from the texts
            if from_text:  # (columns_from_text)
                self._cache[(self._kind, _columns_key("embcols-text", embedder, config))] = True
            if isinstance(embedder, HashingEmbedder) and from_text:
                if config.concept_text != "title" and self._dense_before(key):
                    # the last position's index was dense (the hashing vectors of long bodies):
                    # brought forward as one (_dense_delta), not decided again by embedding every
                    # concept's text (the same results either way: every index scores exactly)
                    return self._by_embeddings(key, config, from_matrix)
                idx_arr = self.concept_indices(config)
                idx = idx_arr.tolist()
                g = self.graph
                kept = self._kept_vectors(embedder, config, len(idx))
                if kept is not None:
                    self._carry_put(embedder, config, idx_arr, kept)
                    return kept
                carried = self._carried_vectors(embedder, config, idx_arr)
                if carried is not None:
                    self._keep_vectors(embedder, config, carried)
                    self._carry_put(embedder, config, idx_arr, carried)
                    return carried
                if config.concept_text == "title":  # what node_texts gives, by index
                    # all titles decoded in one pass (a mapped snapshot's strings cost ~1.5 us
                    # each when read one by one)
                    titles, gids = list(g.titles), g.ids
                    texts = [titles[i] or gids[i] for i in idx]
                else:
                    texts = self.source.node_texts([g.ids[i] for i in idx], g, config.concept_text)
                indptr, indices, values = embedder.embed_csr(texts)
                if len(values) <= SPARSE_DENSITY * len(idx) * embedder.dim:
                    vectors = SparseVectors(len(idx), embedder.dim, indptr, indices, values)
                    if config.concept_text == "title":  # derived from the graph alone: kept
                        self._keep_vectors(embedder, config, vectors)
                    self._carry_put(embedder, config, idx_arr, vectors)
                    return vectors
            return self._by_embeddings(key, config, from_matrix)

        def from_matrix() -> Any:
            delta = self._dense_delta(key, embedder, config)
            if delta is not None:  # the last position's index plus the changed rows (or folded)
                return delta
            mat = self.concept_embeddings(embedder, config)
            n, dim = mat.shape
            if n == 0 or dim == 0:
                return False
            # read in place: a read-only view of the snapshot's matrix (never written)
            rows = np.ascontiguousarray(mat, dtype=np.float32).view()
            rows.setflags(write=False)
            base = self._dense_base(key, config)
            if base is not None:  # the last position's index: only the rows that changed are coded
                try:
                    return base[0].updated(rows, base[1])
                except InputError:  # a changed row not finite (the plain scan then reads it)
                    return False
            if not np.all(np.isfinite(mat)):
                return False
            if np.count_nonzero(mat) > SPARSE_DENSITY * n * dim:
                return DenseVectors(rows)
            return SparseVectors.from_dense(mat)

        key = _columns_key("embcols", embedder, config)
        got = self._get(key, build)
        return None if got is False else got

    def columns_from_text(self, embedder: Any, config: WalkConfig) -> bool:
        """Whether this state's :meth:`concept_columns` for ``embedder`` and ``config`` were
        made from the concept texts alone (by the built-in hashing embedder or a model, no vector
        stored under its name when they were made; made now when not yet made): then they hold
        while the concepts' rows and texts do and no vector is stored under that name (a fresh
        build would read it).

        Parameters
        ----------
        embedder : Embedder
        config : WalkConfig

        Returns
        -------
        bool
        """
        self.concept_columns(embedder, config)
        return bool(self._cache.get((self._kind, _columns_key("embcols-text", embedder, config))))

    def _carried(self, entry: Any) -> tuple[Callable[..., Any] | None, Any]:
        """``(kb.changed_nodes, this store object's carried entry)`` for a committed state of a
        store with a change log; ``(None, None)`` otherwise, or ``(changed_nodes, None)`` when
        nothing is carried under ``entry`` (in this state's history)."""
        kb = self.source.kb
        changed_fn = getattr(kb, "changed_nodes", None)
        if kb is None or self.graph_version is None or not self._committed or not callable(changed_fn):
            return None, None
        with _SHARED_LOCK:
            slot = _carry_slot(kb, self._history)
            return changed_fn, None if slot is None else slot.get(entry)

    def _dense_before(self, key: Any) -> bool:
        """Whether the index this store object made at its last position under ``key`` (in this
        state's history, at or before it) was dense."""
        _changed_fn, got = self._carried(("embeddings", key))
        gv = self.graph_version
        return (
            got is not None and gv is not None and 0 <= got[2] <= gv and isinstance(got[4], (DenseVectors, DenseDelta))
        )

    def _dense_base(self, key: Any, config: WalkConfig) -> tuple[DenseVectors, npt.NDArray[np.int64]] | None:
        """The dense index this store object made at its last position (:meth:`_by_embeddings`'
        entry under ``key``) and, per concept row of this state, the row of it holding the same
        unchanged concept (-1: none), for :meth:`DenseVectors.updated`; None when the last
        index was not dense or the change log cannot pair the rows. The pairing is a hint only:
        a row that is not equal bit for bit to the one named is coded again."""
        changed_fn, got = self._carried(("embeddings", key))
        gv = self.graph_version
        if got is None or changed_fn is None or gv is None:
            return None
        _ev, old_g, old_v, old_idx, old = got
        if not isinstance(old, (DenseVectors, DenseDelta)) or not 0 <= old_v <= gv or old.n != len(old_idx):
            return None
        idx = self.concept_indices(config)
        g = self.graph
        if old_v == gv:
            if old_g is not g or len(old_idx) != len(idx):
                return None
            new_from = np.arange(len(idx), dtype=np.int64)
        else:
            changed = changed_fn(old_v, gv, limit=max(1000, len(idx) // 8))
            got_from = None if changed is None else _paired_rows(old_g, old_idx, g, idx, changed)
            if got_from is None:
                return None
            new_from = got_from
        if isinstance(old, DenseDelta):  # its base's rows (a delta row: none)
            base_of = old.base_rows()
            return old.base, np.where(new_from >= 0, base_of[np.maximum(new_from, 0)], -1)
        return old, new_from

    def _dense_delta(self, key: Any, embedder: Any, config: WalkConfig) -> DenseVectors | DenseDelta | None:
        """The dense index of this position made from the one this store object made at its last
        position (:meth:`_by_embeddings`' entry under ``key``) without copying or re-coding its
        rows: the base stays, the rows of the concepts the change log names since (a stored
        vector written or deleted, a concept added, re-typed, or its embedded text changed) are
        read from the store (or embedded) into a delta, the base rows they replace are excluded,
        and deleted concepts' rows dropped (:class:`DenseDelta`, read in one call into the
        core, bit for bit the fresh index's top-k). A rewrite of existing concepts' vectors (the
        concepts in the same rows) costs the changed rows; a concept added or deleted also
        costs a pass over the row numbers (no rows copied). When the delta would hold more than
        :func:`_delta_limit` rows it is folded into a new base here, on the query that finds it
        (:meth:`DenseVectors.updated`: unchanged rows' codes are copied, not made again). None
        when there is no last dense index, the log cannot tell what changed, or more than
        :data:`_FEW_IDS` concepts changed at once (the full path then builds it)."""
        changed_fn, got = self._carried(("embeddings", key))
        gv = self.graph_version
        if got is None or changed_fn is None or gv is None:
            return None
        _ev, old_g, old_v, old_idx, old = got
        if not isinstance(old, (DenseVectors, DenseDelta)) or not 0 <= old_v < gv or old.n != len(old_idx):
            return None
        idx = self.concept_indices(config)
        if not len(idx) or old.dim != int(embedder.dim):
            return None
        changed = changed_fn(
            old_v,
            gv,
            text=config.concept_text != "title",
            vectors=str(embedder.name),
            limit=max(1000, len(idx) // 8),
        )
        if changed is None:
            return None
        g = self.graph
        base: DenseVectors
        if isinstance(old, DenseDelta):
            base, runs = old.base, old.runs
            nums, drows = old.delta
        else:
            base = old
            runs = np.array([[0, old.n, 0]], dtype=np.int64)
            nums, drows = np.zeros(0, dtype=np.int32), np.zeros((0, old.dim), dtype=np.float32)
        new_rows = _concept_row_of(g, idx, changed)
        if len(idx) == len(old_idx) and np.array_equal(_concept_row_of(old_g, old_idx, changed), new_rows):
            # the same concepts in the same rows (vectors rewritten): only the changed rows move
            fresh = np.unique(new_rows[new_rows >= 0])
            runs = _cut_runs(runs, fresh[~np.isin(fresh, nums)])
            keep = ~np.isin(nums, fresh)
            kept_nums, kept_rows = nums[keep].astype(np.int64), drows[keep]
        else:  # concepts added or deleted: the rows renumbered (one pass over the row numbers)
            new_from = _paired_rows(old_g, old_idx, g, idx, changed)
            if new_from is None:
                return None  # pragma: no cover - the two graphs differ by more than the log says
            old_base = old.base_rows() if isinstance(old, DenseDelta) else np.arange(old.n, dtype=np.int64)
            in_delta = np.full(len(old_idx), -1, dtype=np.int64)
            in_delta[nums] = np.arange(len(nums), dtype=np.int64)
            had = new_from >= 0
            from_old = np.maximum(new_from, 0)
            base_of = np.where(had, old_base[from_old], -1)
            runs = _runs_of(base_of)
            need = np.flatnonzero(base_of < 0)
            at = np.where(had[need], in_delta[from_old[need]], -1)
            fresh = need[at < 0]
            kept_nums, kept_rows = need[at >= 0], drows[at[at >= 0]]
        if len(fresh) > _FEW_IDS:
            return None
        vecs = (
            self.source.embeddings_for(
                embedder,
                [g.ids[int(i)] for i in idx[fresh]],
                g,
                text=config.concept_text,
                graph_version=gv,
                history=self._history,
                by_id=True,
            )
            if len(fresh)
            else np.zeros((0, base.dim), dtype=np.float32)
        )
        all_nums = np.concatenate([kept_nums, fresh]).astype(np.int64)
        order = np.argsort(all_nums, kind="stable")
        all_rows = np.concatenate([kept_rows, np.asarray(vecs, dtype=np.float32).reshape(len(fresh), base.dim)])[order]
        try:
            out = base.with_delta(len(idx), runs, all_rows, all_nums[order])
            excluded = base.n - (len(idx) - out.delta_rows)  # base rows no longer read
            if max(out.delta_rows, excluded) > _delta_limit(len(idx)):
                return base.updated(out.matrix(), out.base_rows())  # folded into a new base
        except InputError:  # a changed row not finite: the full path decides
            return None
        return out

    def node_vectors(self, embedder: Any, indices: list[int]) -> npt.NDArray[np.float32]:
        """Title vectors of the nodes at ``indices`` (any type), embedded on first use and held
        in memory with this state (for reranking walk candidates); never written."""
        cache: dict[int, npt.NDArray[np.float32]] = self._get(("nodevec", embedder.name), dict)
        missing = [i for i in indices if i not in cache]
        if missing:
            g = self.graph
            vecs = np.ascontiguousarray(embedder.embed([g.titles[i] or g.ids[i] for i in missing]), dtype=np.float32)
            with _SHARED_LOCK:
                for i, v in zip(missing, vecs):
                    cache[i] = v
        out = np.zeros((len(indices), int(embedder.dim)), dtype=np.float32)
        for r, i in enumerate(indices):
            out[r] = cache[i]
        return out

    def concept_flags(self, config: WalkConfig) -> npt.NDArray[np.bool_] | None:
        """Boolean mask over the nodes: True for the concept node types (None: every node)."""

        def build() -> Any:
            flags = self.type_mask(config.concept_node_types)
            if flags is None:
                return False
            g = self.graph
            return flags[g.node_type_codes] if flags.size else np.zeros(g.num_nodes, dtype=bool)

        got = self._get(("concept_flags", config.concept_node_types), build)
        return None if got is False else got

    def concept_visible(self, config: WalkConfig, visibility: Any) -> npt.NDArray[np.bool_] | None:
        """The prepared mask ``visibility`` restricted to the concept rows of
        :meth:`concept_indices` (None: every concept visible); kept per mask for this state."""
        if visibility is None:
            return None
        cache: dict[Any, Any] = self._get(("concept_visible", config.concept_node_types), dict)
        got = cache.get(id(visibility))
        if got is not None and got[0] is visibility:
            return got[1]  # type: ignore[no-any-return]
        rows = np.ascontiguousarray(visibility.mask[self.concept_indices(config)])
        with _SHARED_LOCK:
            if len(cache) >= 64:  # a mask per caller scope set; keep the recent ones
                cache.pop(next(iter(cache)))
            cache[id(visibility)] = (visibility, rows)
        return rows

    def text_index(self) -> Any:
        """The store's text index of this state (:meth:`KnowledgeBase.text_index`), or None
        for a bare graph, a store object without one, or a state the store has left."""

        def build() -> Any:
            if self._state is not None:  # read with the graph, in one transaction
                return self._state.text_index
            fn = getattr(self.source.kb, "text_index", None)
            if not callable(fn):
                return False
            ix = fn(self.graph)
            if ix is None or getattr(ix, "num_docs", -1) != self.graph.num_nodes:
                return False
            return ix

        got = self._get("text_index", build)
        return None if got is False else got

    def lexical(self, text: str, k: int, config: WalkConfig, caller: Any) -> list[str]:
        """Lexical evidence: up to ``k`` visible concept ids best matching ``text``, best first.

        The one place the resolver's lexical evidence comes from. With the store's text index
        (a :class:`~conceptwalk.kb.store.KnowledgeBase`): BM25 over the documents ``caller`` sees
        (its prepared mask; the statistics are cached with the mask),
        only concept nodes returned; so every rank equals the rank on the store with the caller's
        hidden nodes deleted. Fallback for a store object without a text index: its own
        ``search(text, k, node_types=..., caller=...)`` (its visibility contract is its own);
        when its ``search`` takes no ``caller``, an all-access search with hidden concepts
        dropped after ranking (not exact to deletion: global statistics can reorder what the
        caller sees). A bare graph has no lexical evidence."""
        if k <= 0:
            return []
        g = self.graph
        view = g.view(caller)
        visibility = view.mask
        ix = self.text_index()
        if ix is not None:
            docs, _scores = ix.search_indices(text, k, visible=view, eligible=self.concept_flags(config))
            ids = g.ids
            return [ids[d] for d in docs.tolist()]
        search = getattr(self.source.kb, "search", None)
        if search is None:
            return []
        types = config.concept_node_types
        kw: dict[str, Any] = {} if types is None else {"node_types": types}
        if _takes_caller(search):
            vis = None if visibility is None else visibility.mask
            return [
                nid
                for nid, _s in search(text, k, caller=caller, **kw)
                if nid in g.id_index and (vis is None or vis[g.id_index[nid]])
            ][:k]
        visible = None if visibility is None else visibility.mask
        fetch = k if visible is None else max(2 * k, 16)
        while True:
            raw = search(text, fetch, **kw)
            out = []
            for nid, _score in raw:
                i = g.id_index.get(nid)
                if i is not None and (visible is None or visible[i]):
                    out.append(nid)
            if len(out) >= k or len(raw) < fetch:
                return out[:k]
            fetch *= 4


class StoreReader:
    """What the wrap reads from: a :class:`~conceptwalk.tools.GraphSource` (a
    :class:`~conceptwalk.kb.store.KnowledgeBase`-like object with ``graph()``, and optionally ``aliases()``, ``annotation_presence()``, ``nodes()``,
    ``get_embeddings()``, ``set_embeddings()``, ``search()``) or a bare :class:`LinkGraph`."""

    def __init__(self, kb: Any, *, annotations: bool = True) -> None:
        try:  # the one graph-source protocol (conceptwalk.tools.GraphSource)
            kind = source_kind(kb)
        except InputError:
            raise InputError(f"kb must be a KnowledgeBase or a LinkGraph, got {type(kb).__name__}") from None
        self.kb = None if kind == "graph" else kb
        self._static: LinkGraph | None = kb if kind == "graph" else None
        self.annotations = annotations
        # The latest cache, held weakly (the cache holds its reader: a strong reference back
        # would be a cycle keeping the state's graph alive after the reader is dropped, until
        # some collection). What a cache derives lives in _SHARED, per graph, so a cache made
        # again for the same state finds it all.
        self._snap: weakref.ref[ReadCache] | None = None
        self._lock = threading.Lock()
        self._mem_embeddings: dict[tuple[str, str, str], npt.NDArray[np.float32]] = {}
        self._mem_version: tuple[int, int | None] | None = None

    @property
    def is_store(self) -> bool:
        return self.kb is not None

    def graph(self) -> LinkGraph:
        if self._static is not None:
            return self._static
        kb: Any = self.kb
        try:
            g: LinkGraph = kb.graph(annotations=self.annotations)
        except TypeError:  # a KB-like object without the annotations keyword
            g = kb.graph()
        return g

    def store_version(self) -> int | None:
        """The store's write counter (None for a bare graph or a store without one)."""
        v = getattr(self.kb, "version", None) if self.kb is not None else None
        return v if isinstance(v, int) else None

    def read_cache(self) -> ReadCache:
        fn = getattr(self.kb, "state", None) if self.kb is not None else None
        if callable(fn):  # a store's graph, text index and write counter of one committed state
            return self.read_cache_of(fn(annotations=self.annotations))
        return self._cache_of(None, self.graph(), self.store_version())

    def read_cache_of(self, state: Any) -> ReadCache:
        """The caches of one state of the store (:meth:`KnowledgeBase.state
        <conceptwalk.kb.store.KnowledgeBase.state>`, or a live graph's base state).

        Parameters
        ----------
        state : StoreState

        Returns
        -------
        ReadCache
        """
        return self._cache_of(state, state.graph, state.version)

    def _cache_of(self, st: Any, g: LinkGraph, version: int | None) -> ReadCache:
        gv = None if st is None else st.graph_version
        ref = self._snap
        snap = None if ref is None else ref()
        if snap is None or snap.graph is not g or snap.store_version != version or snap.graph_version != gv:
            with self._lock:
                ref = self._snap
                snap = None if ref is None else ref()
                if snap is None or snap.graph is not g or snap.store_version != version or snap.graph_version != gv:
                    snap = ReadCache(self, g, st)
                    self._snap = weakref.ref(snap)
        return snap

    # -------------------------------------------------------------- reads
    def read_aliases(self) -> dict[str, list[str]]:
        fn = getattr(self.kb, "aliases", None)
        if fn is None:
            return {}
        return {str(a): [str(c) for c in cs] for a, cs in fn().items()}

    def read_presence(self) -> dict[str, int] | None:
        fn = getattr(self.kb, "annotation_presence", None)
        if fn is None:
            return None
        got = fn()
        return {k: int(got.get(k, 0)) for k in EDGE_ANNOTATION_KEYS}

    def read_edge_presence(self) -> Any:
        """``kb.edge_presence()`` (ids, src, dst, presence bits per stored edge), or None."""
        fn = getattr(self.kb, "edge_presence", None)
        if fn is None:
            return None
        return fn()

    def bodies(self, ids: list[str]) -> dict[str, str | None]:
        fn = getattr(self.kb, "nodes", None)
        if fn is None:
            return {}
        return {r["id"]: r.get("body") for r in fn(ids)}

    def node_texts(self, ids: list[str], graph: LinkGraph, text: str = "title+body") -> list[str]:
        bodies = self.bodies(ids) if text == "title+body" else {}
        out = []
        for nid in ids:
            title = graph.titles[graph.index(nid)]
            parts = [p for p in (title, bodies.get(nid)) if p]
            out.append("\n".join(parts) if parts else nid)
        return out

    def _follow_model_vectors(self, graph: LinkGraph, graph_version: int | None, history: int = 0) -> None:
        """Point :attr:`_mem_embeddings` at the vectors embedded for ``graph``: the store
        object's own, brought forward to ``graph_version`` of the change log ``history``
        (entries of changed nodes dropped), or this source's for one graph and store version."""
        kb = self.kb
        changed_fn = getattr(kb, "changed_nodes", None)
        if graph_version is not None and kb is not None and callable(changed_fn):
            with _SHARED_LOCK:
                slot = _carry_slot(kb, history)
                if slot is not None:
                    got = slot.get(("model_vectors",))
                    if got is not None and got[0] == graph_version:
                        self._mem_embeddings, self._mem_version = got[1], None
                        return
                    mem: dict[tuple[str, str, str], npt.NDArray[np.float32]] = {}
                    if got is not None and 0 <= got[0] < graph_version:
                        changed = changed_fn(got[0], graph_version, text=True)
                        if changed is not None:
                            gone = set(changed)
                            mem = {k: v for k, v in got[1].items() if k[2] not in gone}
                    slot[("model_vectors",)] = (graph_version, mem)
                    self._mem_embeddings, self._mem_version = mem, None
                    return
        version = (id(graph), self.store_version())
        if self._mem_version != version:  # a body edit keeps the graph but changes the text
            self._mem_embeddings = {}
            self._mem_version = version

    def _written_since(
        self,
        name: str,
        graph_version: int | None,
        history: int,
        read_at: tuple[int | None, int] | None,
        stored: set[str],
    ) -> set[str]:
        """Those of ``stored`` (ids whose vector of the model ``name`` was read at ``read_at``:
        :meth:`KnowledgeBase.read_embeddings`' position and history) whose vector may have been
        written after ``graph_version`` of ``history`` (the state's position, read earlier in
        another transaction): the ones the change log names in between, every one when it
        cannot tell (another history, an earlier position, a store that does not say when it
        read, too many changes). None of them with no ``graph_version`` (nothing is kept)."""
        if graph_version is None or not stored:
            return set()
        pos, read_history = (None, history) if read_at is None else read_at
        if pos == graph_version and read_history == history:
            return set()  # (the usual case: nothing written between the state and this read)
        changed_fn = getattr(self.kb, "changed_nodes", None)
        if pos is None or read_history != history or pos < graph_version or not callable(changed_fn):
            return stored
        changed = changed_fn(graph_version, pos, vectors=name, limit=max(1000, len(stored) // 8))
        return stored if changed is None else stored.intersection(changed)

    def stores_embeddings(self, embedder: Any) -> bool:
        """Whether the store holds any vector under ``embedder.name``."""
        has = getattr(self.kb, "has_embeddings", None)
        if callable(has):  # one indexed lookup, no vector read
            return bool(has(str(embedder.name)))
        get = getattr(self.kb, "get_embeddings", None)
        if get is None:
            return False
        stored_ids, _mat = get(str(embedder.name))
        return len(stored_ids) > 0

    def embeddings_for(
        self,
        embedder: Any,
        ids: list[str],
        graph: LinkGraph,
        text: str = "title+body",
        *,
        graph_version: int | None = None,
        history: int = 0,
        made: list[npt.NDArray[np.bool_]] | None = None,
        by_id: bool = False,
    ) -> npt.NDArray[np.float32]:
        """Vectors of ``ids`` under ``embedder.name``: read from the store, the missing ones
        embedded (from ``text``: ``"title"`` or ``"title+body"``) and cached in memory. Never
        written to the store: a query changes nothing there. With ``graph_version`` (the
        committed change-log position of ``graph``) the vectors embedded here are kept per store
        object and brought to the next position by the change log: only the nodes whose row or
        body changed are embedded again (a model is slow; an agent's store changes every turn);
        ``history`` is the state's :attr:`~conceptwalk.kb.state.StoreState.history` (which of
        the store object's change logs the position is of). Without ``graph_version`` they live
        as long as this source reads the same graph and store version. ``made``, when given, gets
        a boolean array appended: per id, True when its row is not the stored vector of the
        position ``graph_version`` (the model made it, or another client may have written the
        node's vector after that position and before this read: :meth:`_written_since`), so it
        is never kept as that position's. ``by_id``: look the ids' stored vectors up (a few of
        many), instead of reading every vector of the model at once."""
        name = str(embedder.name)
        dim = int(embedder.dim)
        self._follow_model_vectors(graph, graph_version, history)
        have: dict[str, npt.NDArray[np.float32]] = {}
        read = getattr(self.kb, "read_embeddings", None)
        get = getattr(self.kb, "get_embeddings", None)
        read_at: tuple[int | None, int] | None = None  # (position, history) the vectors were read at
        if callable(read) and ids:
            got = read(name, ids, skip_missing=True) if by_id else read(name)
            have = {x: got.matrix[i] for i, x in enumerate(got.ids)}
            read_at = (got.graph_version, got.history)
        elif get is not None and ids:
            if by_id:
                have = _stored_vectors_of(get, name, ids)
            else:
                stored_ids, mat = get(name)
                have = {x: mat[i] for i, x in enumerate(stored_ids)}
        first = next(iter(have.values()), None)
        if first is not None and first.shape != (dim,):
            raise ConceptwalkError(
                f"the store holds {name!r} vectors of dim {first.shape[-1]}, the embedder makes dim {dim}"
            )
        stored = set(have)
        for nid in ids:
            v = self._mem_embeddings.get((name, text, nid))
            if v is not None and nid not in have:
                have[nid] = v
        missing = [x for x in ids if x not in have]
        if made is not None:
            newer = self._written_since(name, graph_version, history, read_at, stored)
            made.append(np.fromiter((x not in stored or x in newer for x in ids), dtype=bool, count=len(ids)))
        if missing:
            vecs = np.ascontiguousarray(embedder.embed(self.node_texts(missing, graph, text)), dtype=np.float32)
            for i, x in enumerate(missing):
                have[x] = vecs[i]
                self._mem_embeddings[(name, text, x)] = vecs[i]
        out = np.zeros((len(ids), dim), dtype=np.float32)
        for i, x in enumerate(ids):
            out[i] = have[x]
        return out
