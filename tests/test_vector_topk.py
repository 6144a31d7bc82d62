"""The exact vector top-k searches (``graph.vectors``: the blocked sparse index and the int8-coded
dense index) against a plain numpy scorer and against each other.

The numpy reference computes every row's score in the core's fixed order (four float64 lanes,
dimension ``j`` in lane ``j % 4``, the ``dim % 4`` trailing dimensions in lane 0, each lane in
ascending ``j``; then ``(l0 + l1) + (l2 + l3)``), keeps the visible rows scoring at least
``min_score`` and sorts by score descending then row ascending. Every search must give exactly
that: the same rows in the same order and the same score bits, under random masks, many ties,
``k`` larger than the visible rows, empty and zero queries and thresholds that cut everything.
Deletion: a visible row's score and rank equal those on the matrix with the hidden rows deleted.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk.errors import InputError
from conceptwalk.graph.vectors import DenseVectors, SparseVectors, vector_topk_arrays


def reference(m: np.ndarray, q: np.ndarray, k: int, vis: np.ndarray | None, lo: float | None) -> tuple[list, list]:
    """Plain numpy: the fixed-order dot products of every row, filtered and sorted."""
    n, d = m.shape
    prod = m.astype(np.float64) * q.astype(np.float64)[None, :]
    main = d - d % 4
    lanes = np.zeros((n, 4))
    for j in range(d):  # ascending j per lane, as the core sums
        lanes[:, (j & 3) if j < main else 0] += prod[:, j]
    scores = (lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])
    rows = [r for r in range(n) if (vis is None or vis[r]) and (lo is None or scores[r] >= lo)]
    rows.sort(key=lambda r: (-scores[r], r))
    rows = rows[:k]
    return rows, [float(scores[r]) for r in rows]


def _bits(xs: list[float] | np.ndarray) -> list[int]:
    return np.asarray(xs, dtype=np.float64).view(np.uint64).tolist()


def _case(seed: int, dense: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int, float | None]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000 if seed % 4 == 0 else 300))
    d = int(rng.integers(1, 70))
    m = rng.standard_normal((n, d)).astype(np.float32)
    if not dense:
        m[rng.random((n, d)) < rng.uniform(0.3, 0.97)] = 0
    kind = seed % 5
    if kind == 0:
        m = (np.round(m * 2) / 2).astype(np.float32)  # many exact ties
    elif kind == 1 and n > 4:
        m[rng.integers(0, n, n // 3)] = m[0]  # duplicate rows: equal scores
    q = rng.standard_normal(d).astype(np.float32)
    if seed % 7 == 0:
        q[:] = 0  # empty query: every row scores 0.0
    elif not dense:
        q[rng.random(d) < 0.5] = 0
    if kind == 0:
        q = np.round(q).astype(np.float32)
    vis = None if seed % 6 == 0 else rng.random(n) < rng.uniform(0.05, 1.0)
    k = int(rng.integers(1, 40)) if seed % 3 else int(rng.integers(1, n + 20))  # k beyond the visible rows too
    lo = [None, 0.0, 0.5, -0.5, 1e9, -1e9][seed % 6]
    return m, q, vis, k, lo


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 2**31))
def test_sparse_equals_numpy_reference(seed: int) -> None:
    m, q, vis, k, lo = _case(seed, dense=False)
    want_rows, want_scores = reference(m, q, k, vis, lo)
    sv = SparseVectors.from_dense(m)
    for method in ("auto", "pruned", "scan"):
        rows, scores = sv.topk(q, k, visible=vis, min_score=lo, method=method)
        assert rows.tolist() == want_rows, method
        assert _bits(scores) == _bits(want_scores), method


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 2**31))
def test_dense_equals_numpy_reference(seed: int) -> None:
    m, q, vis, k, lo = _case(seed, dense=True)
    want_rows, want_scores = reference(m, q, k, vis, lo)
    dv = DenseVectors(m)
    for method in ("auto", "pruned", "scan"):
        rows, scores = dv.topk(q, k, visible=vis, min_score=lo, method=method)
        assert rows.tolist() == want_rows, method
        assert _bits(scores) == _bits(want_scores), method
    rows, scores = vector_topk_arrays(m, q, k, visible=vis, min_score=lo)
    assert rows.tolist() == want_rows and _bits(scores) == _bits(want_scores)


@pytest.mark.parametrize("seed", range(8))
def test_dense_rows_of_extreme_magnitude_are_coded_soundly(seed: int) -> None:
    """Rows whose largest entry is subnormal (the int8 scale underflows: 1 / scale would
    overflow), near FLT_MAX, or exactly a tie for rounding still give the exact top-k."""
    rng = np.random.default_rng(seed)
    n, d = 400, 24
    m = rng.standard_normal((n, d)).astype(np.float32)
    scales = np.array([1e-45, 1e-42, 1e-39, 1.2e-38, 1.0, 1e30, 3e38], dtype=np.float64)
    unit = m / np.abs(m).max(axis=1, keepdims=True)
    m = (unit * rng.choice(scales, n)[:, None]).astype(np.float32)
    m[: n // 8] = np.round(unit[: n // 8] * 254) / 254  # k / 254 of the row's max: rounding ties once coded
    m[n // 8 : n // 4, :] = 0.0
    assert np.all(np.isfinite(m))
    q = rng.standard_normal(d).astype(np.float32) * np.float32([1e-40, 1.0, 1e-20][seed % 3])
    vis = None if seed % 2 else rng.random(n) < 0.7
    k = [1, 5, 40][seed % 3]
    want_rows, want_scores = reference(m, q, k, vis, None)
    dv = DenseVectors(m)
    for method in ("auto", "pruned", "scan"):
        rows, scores = dv.topk(q, k, visible=vis, method=method)
        assert rows.tolist() == want_rows, method
        assert _bits(scores) == _bits(want_scores), method


def _close_rows(seed: int, dense: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rows that differ from each other (and from the query's best) by a few ulps: the bounds
    must never drop a row that the exact order keeps."""
    rng = np.random.default_rng(seed)
    n, d = 2000, 48
    base = rng.standard_normal(d).astype(np.float32)
    m = np.repeat(base[None, :], n, axis=0)
    cols = rng.integers(0, d, n)
    m[np.arange(n), cols] = np.nextafter(m[np.arange(n), cols], np.float32(np.inf) * rng.choice([-1, 1], n))
    if not dense:
        m[:, rng.random(d) < 0.6] = 0
    return m.astype(np.float32), base


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dense", [False, True])
def test_near_ties_are_ranked_exactly(seed: int, dense: bool) -> None:
    m, q = _close_rows(seed, dense)
    vis = np.random.default_rng(seed + 1).random(m.shape[0]) < 0.7
    index = DenseVectors(m) if dense else SparseVectors.from_dense(m)
    for k in (1, 7, 50):
        want_rows, want_scores = reference(m, q, k, vis, None)
        rows, scores = index.topk(q, k, visible=vis, method="pruned")
        assert rows.tolist() == want_rows and _bits(scores) == _bits(want_scores)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**31), st.booleans())
def test_deleting_hidden_rows_changes_no_visible_result(seed: int, dense: bool) -> None:
    m, q, vis, k, lo = _case(seed, dense)
    if vis is None or not vis.any():
        return
    kept = np.flatnonzero(vis)
    full = DenseVectors(m) if dense else SparseVectors.from_dense(m)
    part = DenseVectors(m[kept]) if dense else SparseVectors.from_dense(m[kept])
    rows, scores = full.topk(q, k, visible=vis, min_score=lo, method="pruned")
    p_rows, p_scores = part.topk(q, k, min_score=lo, method="pruned")
    assert rows.tolist() == kept[p_rows].tolist()
    assert _bits(scores) == _bits(p_scores)


def test_large_sparse_index_over_many_blocks() -> None:
    """Rows spread over many row blocks, most of them missed by a narrow query (the blocks the
    query's columns miss score 0.0 and enter only while a 0.0 can)."""
    rng = np.random.default_rng(5)
    n, d = 90000, 64  # six row blocks of 16,384, the last one partial
    m = np.zeros((n, d), dtype=np.float32)
    m[rng.integers(0, n, 300), rng.integers(0, d, 300)] = rng.standard_normal(300).astype(np.float32)
    sv = SparseVectors.from_dense(m)
    vis = rng.random(n) < 0.9
    for q_dims, lo in (([3], None), ([3, 9], 0.0), ([], None), ([5], -1.0)):
        q = np.zeros(d, dtype=np.float32)
        q[q_dims] = 1.0
        for k in (1, 10, 400):
            want = reference(m, q, k, vis, lo)
            for method in ("auto", "pruned"):
                rows, scores = sv.topk(q, k, visible=vis, min_score=lo, method=method)
                assert rows.tolist() == want[0] and _bits(scores) == _bits(want[1])


def test_dense_index_reads_a_read_only_matrix_in_place_and_copies_a_writable_one() -> None:
    m = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    own = DenseVectors(m)
    assert not np.shares_memory(own.matrix, m) and not own.matrix.flags.writeable
    ro = m.copy()
    ro.setflags(write=False)
    assert np.shares_memory(DenseVectors(ro).matrix, ro)


def test_bad_arguments_are_refused() -> None:
    m = np.eye(3, dtype=np.float32)
    for index in (DenseVectors(m), SparseVectors.from_dense(m)):
        with pytest.raises(InputError, match="method"):
            index.topk(np.ones(3, dtype=np.float32), 1, method="fast")
        with pytest.raises(InputError, match="k must"):
            index.topk(np.ones(3, dtype=np.float32), 0)
        with pytest.raises(InputError, match="finite"):
            index.topk(np.array([1, np.nan, 0], dtype=np.float32), 1)
        with pytest.raises(InputError, match="shape"):
            index.topk(np.ones(4, dtype=np.float32), 1)
    with pytest.raises(InputError, match="finite"):
        DenseVectors(np.array([[1.0, np.inf]], dtype=np.float32))
    with pytest.raises(InputError, match="2-dimensional"):
        DenseVectors(np.ones(3, dtype=np.float32))
    assert DenseVectors(np.zeros((0, 4), dtype=np.float32)).topk(np.ones(4, dtype=np.float32), 3)[0].tolist() == []


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**31))
def test_an_updated_dense_index_is_the_fresh_build_whatever_rows_it_is_told(seed: int) -> None:
    """``DenseVectors.updated``: rows equal bit for bit to the base row named keep its codes,
    every other row is coded; the top-k is the reference's for any ``base_rows`` -- the true
    pairing, a shuffled one, one naming rows that changed (scaled by 1000, sign flipped, -0.0
    for 0.0), or none."""
    rng = np.random.default_rng(seed)
    m, _q, vis, k, lo = _case(seed, dense=True)
    n, d = m.shape
    old = DenseVectors(m)
    new = m.copy()
    changed = rng.random(n) < rng.uniform(0.0, 0.5)
    new[changed] *= np.float32([1000.0, -1.0, 1e-3][seed % 3])
    if seed % 4 == 1:
        new[new == 0] = -0.0  # equal in value, not in bits
    # rows inserted and removed: the new matrix's rows are a subsequence of old and fresh rows
    keep = rng.random(n) < 0.9
    fresh = rng.standard_normal((int(rng.integers(0, 5)), d)).astype(np.float32)
    new = np.concatenate([new[keep], fresh])
    true_rows = np.concatenate([np.flatnonzero(keep), np.full(len(fresh), -1)]).astype(np.int64)
    mode = seed % 4
    if mode == 0:
        base_rows = true_rows
    elif mode == 1:
        base_rows = rng.permutation(true_rows)
    elif mode == 2:
        base_rows = rng.integers(-1, n, len(new))
    else:
        base_rows = np.full(len(new), -1)
    upd = old.updated(new, base_rows)
    assert (upd.n, upd.dim) == new.shape
    vis2 = None if vis is None else rng.random(len(new)) < 0.8
    for _ in range(4):
        q = rng.standard_normal(d).astype(np.float32)
        want_rows, want_scores = reference(new, q, k, vis2, lo)
        for method in ("auto", "pruned"):
            rows, scores = upd.topk(q, k, visible=vis2, min_score=lo, method=method)
            assert rows.tolist() == want_rows, method
            assert _bits(scores) == _bits(want_scores), method


def test_an_update_recodes_a_row_that_changed_under_its_old_row_number() -> None:
    """The rows told to be unchanged but grown a thousandfold: reusing their codes would bound
    them a thousand times too low and prune them; they are coded again and win."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((4000, 32)).astype(np.float32)
    old = DenseVectors(m)
    new = m.copy()
    new[[17, 2900]] *= 1000.0
    upd = old.updated(new, np.arange(4000))
    q = new[2900] / np.linalg.norm(new[2900])
    rows, _scores = upd.topk(q.astype(np.float32), 3, method="pruned")
    assert rows.tolist() == reference(new, q.astype(np.float32), 3, None, None)[0]
    assert 2900 in rows.tolist()


def test_bad_updates_are_refused() -> None:
    m = np.eye(4, dtype=np.float32)
    old = DenseVectors(m)
    with pytest.raises(InputError, match="base_rows must be 4 integers"):
        old.updated(m, [0, 1, 2])
    with pytest.raises(InputError, match="base_rows must be 4 integers"):
        old.updated(m, [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(InputError, match=r"base_rows must be in \[-1, 4\)"):
        old.updated(m, [0, 1, 2, 4])
    with pytest.raises(InputError, match=r"base_rows must be in \[-1, 4\)"):
        old.updated(m, [0, 1, 2, -2])
    with pytest.raises(InputError, match=r"base_rows must be in \[-1, 4\)"):
        old.updated(m, np.array([0, 1, 2, 2**40]))  # (not wrapped to an int32 in range)
    with pytest.raises(InputError, match="dim"):
        old.updated(np.eye(4, 5, dtype=np.float32), [0, 1, 2, 3])
    with pytest.raises(InputError, match="2-dimensional"):
        old.updated(np.zeros(4, dtype=np.float32), [0, 1, 2, 3])
    bad = m.copy()
    bad[2, 1] = np.nan
    with pytest.raises(InputError, match="finite"):
        old.updated(bad, [0, 1, 2, 3])  # a changed row: checked as it is coded
    empty = old.updated(np.zeros((0, 4), dtype=np.float32), np.zeros(0, dtype=np.int64))
    assert empty.n == 0 and empty.topk(np.ones(4, dtype=np.float32), 3)[0].tolist() == []
