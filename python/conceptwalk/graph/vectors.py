"""Exact vector top-k over the rows a caller sees.

Each score is the dot product of a stored row with the query, accumulated in float64 by the core
in a fixed order that depends only on that row and the query: never on the other rows (hidden
ones are not read), on how many rows there are, or on threads (no BLAS, no threads on the query
path). So an embedding score, and everything derived from it, equals the score on the store with
the hidden rows deleted, bit for bit. Ties break by row ascending (rows aligned with the graph's
node order, or with any ascending subset of it, break ties by id).

Size: the search is brute force, O(visible rows x dim) per query with no per-query allocation
beyond the top-k heap: measured about 2 ms per 100k rows x 64 dims and 9 ms per 100k x 384 on
one (shared) core of the reference machine. It is the documented path up to
:data:`EXACT_MAX_ROWS` rows (about 20 ms at 64 dims, 90 ms at 384); past that an approximate index
(HNSW, IVF) with *filtered* search is the way to plug in: the ANN library must take the
caller's mask as a filter during the graph/list traversal (hnswlib's ``filter`` callable, FAISS's
``IDSelector`` in ``SearchParameters``, usearch's predicate), never post-filter a global top-k,
and the candidates it returns must be rescored here with :func:`vector_topk` over those rows so
the scores stay exact — only *which* rows are found becomes approximate (recall < 1), and the
result must be labelled approximate.

Examples
--------
>>> m = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
>>> vector_topk(m, np.array([1, 0], dtype=np.float32), 2)
([0, 1], [1.0, 0.6000000238418579])
>>> vector_topk(m, np.array([1, 0], dtype=np.float32), 2, visible=np.array([False, True, True]))
([1, 2], [0.6000000238418579, 0.0])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from ..errors import InputError

__all__ = ["EXACT_MAX_ROWS", "vector_topk", "vector_topk_arrays"]

#: The documented size up to which brute force is the search (rows; beyond it plug in an ANN
#: index with filtered search as described above). Not enforced: brute force stays exact.
EXACT_MAX_ROWS = 1_000_000


def vector_topk_arrays(matrix: npt.ArrayLike, query: npt.ArrayLike, k: int, *,
                       visible: npt.NDArray[np.bool_] | Any = None,
                       min_score: float | None = None) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
    """Top ``k`` rows of ``matrix`` by dot product with ``query`` over the visible rows, as
    arrays ``(rows, scores)``; by score descending, then row ascending.

    Parameters
    ----------
    matrix : (n, dim) array
        float32 rows (converted when another dtype).
    query : (dim,) array
        The query vector (finite).
    k : int
        The most rows.
    visible : boolean mask of shape (n,), or a prepared VisibilityMask over n nodes, optional
        Only these rows are read and ranked.
    min_score : float, optional
        Keep only rows scoring at least this.

    Returns
    -------
    (rows int32, scores float64)
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    mat = np.ascontiguousarray(matrix, dtype=np.float32)
    if mat.ndim != 2:
        raise InputError(f"matrix must be 2-dimensional, got shape {mat.shape}")
    q = np.ascontiguousarray(query, dtype=np.float32)
    if q.shape != (mat.shape[1],):
        raise InputError(f"query must have shape ({mat.shape[1]},), got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise InputError("query must be finite")
    lo = None
    if min_score is not None:
        lo = float(min_score)
        if math.isnan(lo):
            raise InputError("min_score must be a number, got nan")
    vis = None
    if visible is not None:
        m = visible.mask if isinstance(visible, _core.VisibilityMask) else np.asarray(visible)
        if m.dtype != np.bool_ or m.shape != (mat.shape[0],):
            raise InputError(f"visible: expected a boolean mask of shape ({mat.shape[0]},), got dtype {m.dtype} and shape {m.shape}")
        vis = np.ascontiguousarray(m).view(np.uint8)
    rows, scores = _core.vector_topk(mat, q, int(k), vis, lo)
    return rows, scores


def vector_topk(matrix: npt.ArrayLike, query: npt.ArrayLike, k: int, *,
                visible: npt.NDArray[np.bool_] | Any = None,
                min_score: float | None = None) -> tuple[list[int], list[float]]:
    """Like :func:`vector_topk_arrays`, as lists.

    Parameters
    ----------
    matrix : (n, dim) array
        float32 rows.
    query : (dim,) array
        The query vector (finite).
    k : int
        The most rows.
    visible : boolean mask of shape (n,), or a prepared VisibilityMask, optional
        Only these rows are read and ranked.
    min_score : float, optional
        Keep only rows scoring at least this.

    Returns
    -------
    (rows, scores) : (list of int, list of float)
        By score descending, then row ascending.
    """
    rows, scores = vector_topk_arrays(matrix, query, k, visible=visible, min_score=min_score)
    return rows.tolist(), scores.tolist()
