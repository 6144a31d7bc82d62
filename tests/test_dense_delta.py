"""The dense index's base plus delta (``graph.vectors.DenseDelta``: issue 31's concept vectors)
against the full matrix.

A random sequence of edits (rows rewritten, inserted, deleted) turns a base matrix into a new
one; the delta index reads the base's rows through runs and holds the changed rows. Its top-k
(every method, random masks, thresholds, many ties) must equal :func:`vector_topk_arrays` over
the new matrix and a fresh :class:`DenseVectors` of it: the same rows in the same order and the
same score bits. The core entry point's argument checks raise a clear InputError, never crash.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk.errors import InputError
from conceptwalk.graph.vectors import DenseDelta, DenseVectors, vector_topk_arrays


def _bits(xs: np.ndarray) -> list[int]:
    return np.asarray(xs, dtype=np.float64).view(np.uint64).tolist()


def _runs(src: list[tuple[str, int]]) -> np.ndarray:
    """The runs (base begin, base end, new begin) of a per-new-row source list, row by row."""
    runs: list[list[int]] = []
    for r, (kind, b) in enumerate(src):
        if kind != "base":
            continue
        if runs and runs[-1][1] == b and runs[-1][2] + (runs[-1][1] - runs[-1][0]) == r:
            runs[-1][1] += 1
        else:
            runs.append([b, b + 1, r])
    return np.array(runs, dtype=np.int64).reshape(-1, 3)


def _edited(seed: int, n_edits: int) -> tuple[np.ndarray, np.ndarray, DenseDelta, np.random.Generator]:
    """A base matrix, the new matrix after random edits, and the delta index of the new one."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400 if seed % 3 else 3000))
    d = int(rng.integers(1, 50))
    base = rng.standard_normal((n, d)).astype(np.float32)
    if seed % 4 == 0:
        base = (np.round(base * 2) / 2).astype(np.float32)  # many exact ties
    src: list[tuple[str, int]] = [("base", r) for r in range(n)]
    rows: list[np.ndarray] = [base[r] for r in range(n)]
    for _ in range(n_edits):
        op = rng.integers(0, 3)
        if op == 0 and src:  # rewrite
            r = int(rng.integers(0, len(src)))
            v = rng.standard_normal(d).astype(np.float32)
            if seed % 4 == 0:
                v = (np.round(v * 2) / 2).astype(np.float32)
            if rng.random() < 0.2:
                v = rows[int(rng.integers(0, len(rows)))].copy()  # a duplicate: equal scores
            src[r], rows[r] = ("delta", -1), v
        elif op == 1:  # insert
            r = int(rng.integers(0, len(src) + 1))
            v = (np.round(rng.standard_normal(d) * 2) / 2).astype(np.float32)
            src.insert(r, ("delta", -1))
            rows.insert(r, v)
        elif src:  # delete
            r = int(rng.integers(0, len(src)))
            del src[r], rows[r]
    new = np.array(rows, dtype=np.float32).reshape(len(rows), d)
    delta_at = [r for r, (kind, _b) in enumerate(src) if kind == "delta"]
    dd = DenseVectors(base).with_delta(len(src), _runs(src), new[delta_at].reshape(-1, d), delta_at)
    return base, new, dd, rng


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 40))
def test_delta_topk_equals_the_full_matrix(seed: int, n_edits: int) -> None:
    _base, new, dd, rng = _edited(seed, n_edits)
    n, d = new.shape
    assert dd.n == n and dd.dim == d
    fresh = DenseVectors(new) if n else None
    for _ in range(3):
        q = rng.standard_normal(d).astype(np.float32)
        if rng.random() < 0.1:
            q[:] = 0  # every row scores 0.0
        k = int(rng.integers(1, max(2, n + 3)))
        if rng.random() < 0.6:
            k = min(k, 10)
        vis = rng.random(n) < rng.uniform(0.2, 1.0) if rng.random() < 0.5 else None
        lo = float(rng.uniform(-1, 1)) if rng.random() < 0.3 else None
        want_rows, want_scores = vector_topk_arrays(new, q, k, visible=vis, min_score=lo)
        for method in ("auto", "pruned", "scan"):
            rows, scores = dd.topk(q, k, visible=vis, min_score=lo, method=method)
            assert rows.tolist() == want_rows.tolist(), method
            assert _bits(scores) == _bits(want_scores), method
        if fresh is not None:
            rows, scores = fresh.topk(q, k, visible=vis, min_score=lo)
            assert rows.tolist() == want_rows.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9))
def test_delta_hidden_rows_never_change_a_visible_result(seed: int) -> None:
    """Deletion: the delta index's top-k over a mask equals the full scan of the matrix with
    the hidden rows deleted (rows renumbered back)."""
    _base, new, dd, rng = _edited(seed, 20)
    n, d = new.shape
    if n == 0:
        return
    vis = rng.random(n) < 0.5
    q = rng.standard_normal(d).astype(np.float32)
    kept = np.flatnonzero(vis)
    rows, scores = dd.topk(q, 5, visible=vis, method="pruned")
    if not len(kept):
        assert rows.tolist() == []
        return
    want_rows, want_scores = vector_topk_arrays(new[kept], q, 5)
    assert rows.tolist() == kept[want_rows].tolist()
    assert _bits(scores) == _bits(want_scores)


def test_delta_views_and_fold() -> None:
    """base_rows, matrix and the fold (DenseVectors.updated over them) give the new matrix."""
    _base, new, dd, rng = _edited(12345, 30)
    assert np.array_equal(dd.matrix(), new)
    b = dd.base_rows()
    nums, drows = dd.delta
    assert np.array_equal(np.flatnonzero(b < 0), nums)
    assert np.array_equal(drows, new[nums])
    assert np.array_equal(dd.base.matrix[b[b >= 0]], new[b >= 0])
    folded = dd.base.updated(dd.matrix(), b)
    q = rng.standard_normal(new.shape[1]).astype(np.float32)
    assert [a.tolist() for a in folded.topk(q, 7)] == [a.tolist() for a in dd.topk(q, 7)]


def _base() -> DenseVectors:
    return DenseVectors(np.eye(4, dtype=np.float32))


@pytest.mark.parametrize(
    ("n", "runs", "rows", "nums", "match"),
    [
        (4, [[0, 3, 0]], np.ones((1, 3), np.float32), [3], "rows must have shape"),
        (4, [[0, 3, 0]], np.ones((2, 4), np.float32), [3], "rows must have shape"),
        (4, [[0, 3]], np.ones((1, 4), np.float32), [3], r"runs must have shape \(m, 3\)"),
        (4, [0, 3, 0], np.ones((1, 4), np.float32), [3], "runs must be a 2-dimensional"),
        (4, [[0, 3, 0]], np.ones((1, 4), np.float32), [4], "outside"),
        (4, [[0, 3, 0]], np.ones((1, 4), np.float32), [-1], "row_numbers must be in"),
        (4, [[0, 5, 0]], np.ones((1, 4), np.float32), [3], "within"),
        (4, [[2, 1, 0]], np.ones((1, 4), np.float32), [3], "ascending"),
        (4, [[0, 3, 2]], np.ones((1, 4), np.float32), [3], "outside"),
        (4, [[0, 3, 0]], np.ones((1, 4), np.float32), [2], "cover"),
        (5, [[0, 3, 0]], np.ones((1, 4), np.float32), [3], "cover"),
        (4, [[0, 2, 0], [1, 3, 2]], np.ones((0, 4), np.float32), [], "ascending"),
        (4, [[0, 2, 2], [2, 4, 0]], np.ones((0, 4), np.float32), [], "cover"),
        (4, [[0, 2, 0]], np.ones((2, 4), np.float32), [3, 2], "strictly ascending"),
        (4, [[0, 3, 0]], np.full((1, 4), np.nan, np.float32), [3], "finite"),
        (4, [[0, 3, 0]], np.full((1, 4), np.inf, np.float32), [3], "finite"),
        (-1, [[0, 3, 0]], np.ones((1, 4), np.float32), [3], "n must be"),
        (4, [[0, 3, 0]], np.ones((1, 4), np.float32), [2.5], "integer array"),
        (4, [[0, 3, 0]], np.ones((1, 4), np.float32), [2**40], "row_numbers must be in"),
    ],
)
def test_delta_argument_checks(n: int, runs: object, rows: np.ndarray, nums: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        _base().with_delta(n, runs, rows, nums)


def test_delta_query_checks() -> None:
    dd = _base().with_delta(4, [[0, 3, 0]], np.ones((1, 4), np.float32), [3])
    with pytest.raises(InputError, match="query must have shape"):
        dd.topk(np.ones(3, np.float32), 2)
    with pytest.raises(InputError, match="query must be finite"):
        dd.topk(np.array([np.nan, 0, 0, 0], np.float32), 2)
    with pytest.raises(InputError, match="k must be"):
        dd.topk(np.ones(4, np.float32), 0)
    with pytest.raises(InputError, match="visible"):
        dd.topk(np.ones(4, np.float32), 2, visible=np.ones(3, bool))
    with pytest.raises(InputError, match="method"):
        dd.topk(np.ones(4, np.float32), 2, method="fast")
    with pytest.raises(InputError, match="base must be"):
        DenseDelta(np.eye(2), None, np.zeros((0, 3), np.int64), np.zeros((0, 2), np.float32), np.zeros(0, np.int32))  # type: ignore[arg-type]


def test_core_delta_rejects_bad_input_without_crashing() -> None:
    """The binding itself (what Python code could pass it directly): ValueError, never a crash."""
    from conceptwalk import _core

    core = _core.DenseVectors(np.eye(4, dtype=np.float32))
    ok_rows = np.ones((1, 4), np.float32)
    bad = [
        (4, np.array([[0, 3, 0]], np.int64), ok_rows, np.array([7], np.int32)),
        (4, np.array([[0, 9, 0]], np.int64), ok_rows, np.array([3], np.int32)),
        (4, np.array([[-5, 3, 0]], np.int64), ok_rows, np.array([3], np.int32)),
        (4, np.array([[0, 3, -1]], np.int64), ok_rows, np.array([3], np.int32)),
        (2**40, np.array([[0, 3, 0]], np.int64), ok_rows, np.array([3], np.int32)),
        (4, np.zeros((1, 2), np.int64), ok_rows, np.array([3], np.int32)),
        (4, np.array([[0, 3, 0]], np.int64), np.ones((1, 5), np.float32), np.array([3], np.int32)),
        (4, np.array([[0, 3, 0]], np.int64), ok_rows, np.array([3, 3], np.int32)),
    ]
    for n, runs, rows, nums in bad:
        with pytest.raises(ValueError):
            core.with_delta(n, runs, rows, nums)
    dd = core.with_delta(4, np.array([[0, 3, 0]], np.int64), ok_rows, np.array([3], np.int32))
    with pytest.raises(ValueError):
        dd.topk(np.ones(4, np.float32), 2, np.ones(2, np.uint8))
    with pytest.raises(ValueError):
        dd.topk(np.array([np.inf, 0, 0, 0], np.float32), 2)
    rows, scores = dd.topk(np.ones(4, np.float32), 2)
    assert rows.tolist() == [3, 0] and scores.tolist() == [4.0, 1.0]
