"""The compiled semantic step (``graph.vectors.SparseVectors``) against its references.

Differential: on random sparse matrices, queries, masks and thresholds the inverted-index top-k
equals, bit for bit, the dense compiled scan (``vector_topk_arrays``) and the old numpy scoring
(``wrap._reader.ColumnMatrix.scores`` + ``resolver.topk_scores``): scores to 1e-6 (in fact
exactly) and ranks exactly with the row tie-break. Deletion: a row's score and rank among the
visible rows equal those on the matrix with the hidden rows deleted. And the hashing embedder's
CSR rows equal its dense rows bit for bit. (The wrapped query's own deletion oracle is
tests/test_wrap_deletion.py, unchanged.)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk.errors import InputError
from conceptwalk.graph.vectors import SparseVectors, vector_topk_arrays
from conceptwalk.wrap._reader import ColumnMatrix
from conceptwalk.wrap.embed import HashingEmbedder
from conceptwalk.wrap.resolver import topk_scores


def _case(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float | None]:
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 200)), int(rng.integers(1, 37))
    m = rng.standard_normal((n, d)).astype(np.float32)
    m[rng.random((n, d)) < rng.uniform(0.5, 0.95)] = 0
    if seed % 3 == 0:
        m = np.round(m * 2) / 2  # many exact ties
    q = rng.standard_normal(d).astype(np.float32)
    q[rng.random(d) < 0.5] = 0
    if seed % 3 == 0:
        q = np.round(q)
    vis = rng.random(n) < rng.uniform(0.2, 1.0)
    k = int(rng.integers(1, 25))
    lo = [None, 0.0, 0.2, -0.5, 1e9][seed % 5]
    return m.astype(np.float32), q.astype(np.float32), vis, k, lo


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**31))
def test_equals_dense_scan_and_numpy_reference(seed: int) -> None:
    m, q, vis, k, lo = _case(seed)
    sv = SparseVectors.from_dense(m)
    rows, scores = sv.topk(q, k, visible=vis, min_score=lo)
    d_rows, d_scores = vector_topk_arrays(m, q, k, visible=vis, min_score=lo)
    assert rows.tolist() == d_rows.tolist()
    assert scores.view(np.uint64).tolist() == d_scores.view(np.uint64).tolist()
    cols = ColumnMatrix.build(m, max_density=1.0)
    if cols is not None:
        r_rows, r_scores = topk_scores(cols.scores(q), k, visible=vis, min_score=-np.inf if lo is None else lo)
        assert rows.tolist() == r_rows.tolist()
        np.testing.assert_allclose(scores, r_scores, rtol=0, atol=1e-6)
        assert scores.view(np.uint64).tolist() == r_scores.view(np.uint64).tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**31))
def test_hidden_rows_never_change_visible_ones(seed: int) -> None:
    m, q, vis, k, lo = _case(seed)
    rows, scores = SparseVectors.from_dense(m).topk(q, k, visible=vis, min_score=lo)
    kept = np.flatnonzero(vis)
    if kept.size == 0:
        assert rows.size == 0
        return
    d_rows, d_scores = SparseVectors.from_dense(m[kept]).topk(q, k, min_score=lo)
    assert rows.tolist() == kept[d_rows].tolist()
    assert scores.view(np.uint64).tolist() == d_scores.view(np.uint64).tolist()


def test_hashing_csr_equals_dense_rows() -> None:
    texts = ["Personalized PageRank", "", "héllo wörld über", "a b c " * 40, "   ", "x"]
    for emb in (HashingEmbedder(dim=512, ngram_range=(2, 4)), HashingEmbedder(dim=7), HashingEmbedder(dim=1)):
        indptr, indices, values = emb.embed_csr(texts)
        dense = emb.embed(texts)
        rebuilt = np.zeros_like(dense)
        for i in range(len(texts)):
            rebuilt[i, indices[indptr[i] : indptr[i + 1]]] = values[indptr[i] : indptr[i + 1]]
        assert rebuilt.view(np.uint32).tolist() == dense.view(np.uint32).tolist()
        assert int(indptr[-1]) == int(np.count_nonzero(dense))


def test_bad_rows_are_refused() -> None:
    ones = np.ones(1, np.float32)
    with pytest.raises(InputError, match="indptr must start at 0"):
        SparseVectors(1, 4, np.array([0, 2]), np.array([1], np.int32), ones)
    with pytest.raises(InputError, match="strictly ascending"):
        SparseVectors(1, 4, np.array([0, 2]), np.array([1, 1], np.int32), np.ones(2, np.float32))
    with pytest.raises(InputError, match="finite"):
        SparseVectors(1, 4, np.array([0, 1]), np.array([1], np.int32), np.array([np.nan], np.float32))
    with pytest.raises(InputError, match="indptr must have length 3"):
        SparseVectors(2, 4, np.array([0, 1]), np.array([1], np.int32), ones)
    sv = SparseVectors(1, 4, np.array([0, 1]), np.array([1], np.int32), ones)
    with pytest.raises(InputError, match="query must have shape"):
        sv.topk(np.ones(3, np.float32), 1)
    with pytest.raises(InputError, match="k must be a positive integer"):
        sv.topk(np.ones(4, np.float32), 0)
    with pytest.raises(InputError, match="visible"):
        sv.topk(np.ones(4, np.float32), 1, visible=np.ones(2, bool))


def test_from_columns_round_trips_and_refuses_malformed_arrays():
    """The saved form (a snapshot's derived arrays) scores bit for bit as the index it came from,
    and every malformed array is a clear error, never a read out of bounds."""
    rng = np.random.default_rng(7)
    m = (rng.random((40, 16)) < 0.3) * rng.standard_normal((40, 16))
    sv = SparseVectors.from_dense(m.astype(np.float32))
    colptr, rows, values = sv.columns()
    again = SparseVectors.from_columns(sv.n, sv.dim, colptr, rows, values)
    for _ in range(5):
        q = rng.standard_normal(16).astype(np.float32)
        a, b = sv.topk(q, 7), again.topk(q, 7)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    bad_rows = rows.copy()
    bad_rows[0] = 40
    unsorted = rows.copy()
    j = int(np.argmax(np.diff(colptr) >= 2))
    unsorted[colptr[j]], unsorted[colptr[j] + 1] = unsorted[colptr[j] + 1], unsorted[colptr[j]]
    zero, nan = values.copy(), values.copy()
    zero[0], nan[0] = 0.0, np.nan
    back = colptr.copy()
    back[3], back[4] = back[4], back[3] - 1
    cases = [
        (sv.n, sv.dim, colptr[:-1], rows, values),
        (sv.n, sv.dim, back, rows, values),
        (sv.n, sv.dim, colptr, bad_rows, values),
        (sv.n, sv.dim, colptr, unsorted, values),
        (sv.n, sv.dim, colptr, rows, zero),
        (sv.n, sv.dim, colptr, rows, nan),
        (sv.n, sv.dim, colptr, rows, values[:-1]),
        (-1, sv.dim, colptr, rows, values),
        (sv.n, sv.dim, colptr + 1, rows, values),
    ]
    for case in cases:
        with pytest.raises(InputError):
            SparseVectors.from_columns(*case)


def test_from_columns_keeps_read_only_arrays_without_a_copy_and_scores_the_same():
    import gc

    rng = np.random.default_rng(3)
    dense = (rng.random((300, 40)) < 0.2) * rng.standard_normal((300, 40))
    sv = SparseVectors.from_dense(dense.astype(np.float32))
    colptr, rows, values = (np.array(a) for a in sv.columns())  # writable copies
    copied = SparseVectors.from_columns(sv.n, sv.dim, colptr, rows, values)
    for a in (rows, values):
        a.setflags(write=False)
    # read-only by flag over memory they own (the flag can be set back, the memory changed): copied
    assert not SparseVectors.from_columns(sv.n, sv.dim, colptr, rows, values)._core.borrowed
    # over memory no Python code can change (bytes here; a read-only mapped file in a store): kept
    rows, values = (np.frombuffer(a.tobytes(), dtype=a.dtype) for a in (rows, values))
    kept = SparseVectors.from_columns(sv.n, sv.dim, colptr, rows, values)
    assert not copied._core.borrowed and kept._core.borrowed
    assert np.shares_memory(kept._core.col_rows, rows) and not np.shares_memory(copied._core.col_rows, rows)
    del rows, values, colptr
    gc.collect()  # the index keeps what it borrowed alive
    for _ in range(20):
        q = rng.standard_normal(40).astype(np.float32)
        want = sv.topk(q, 7)
        for got in (kept.topk(q, 7), copied.topk(q, 7)):
            assert got[0].tolist() == want[0].tolist() and got[1].tobytes() == want[1].tobytes()
