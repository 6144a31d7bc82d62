"""The semantic step's vector top-k (issue 18, item 3), before and after in one run.

    python benchmarks/bench_vectors.py KB20K.db [KB200K.db ...] [--dense 20000 200000] [--queries 60] [--rounds 7]

A script, not a pytest-benchmark suite (one process, the cases interleaved per query with
``conceptwalk.bench.harness.interleaved`` so that load from other processes hits them alike).

* sparse (the built-in ``hashing:512:2-4`` vectors of each KB's concepts, as the resolver reads
  them): ``SparseVectors.topk(method="scan")``, the algorithm main ran (every row's four float64
  lanes summed at once, then ranked and cleared), against the default, row block by row block;
  top-10, ``min_score=0.2``, a random 80% of the rows visible, as the resolver asks;
* dense (384-d float32 unit rows, ``--dense`` sizes): ``vector_topk_arrays`` (the full float64
  scan main ran) against ``DenseVectors.topk`` (int8 bounds, exact re-rank), on Gaussian rows (no
  structure: the hardest case for the bounds) and on clustered rows with queries near a row (how
  a sentence model's vectors look).

* wrapped query (``ConceptAnchoredRetriever`` over ``builtin_flat_search``, ``concept_walk=True``)
  against the flat search alone, with the semantic step's sparse top-k run the old way
  (``method="scan"``) and the new one, the three cases interleaved, each on its own query.

Every case is checked equal (rows and score bits) before it is timed. Medians in ms; nothing
is asserted on wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_wrap_cost as b  # noqa: E402

from conceptwalk.bench import harness  # noqa: E402
from conceptwalk.graph.vectors import DenseVectors, SparseVectors, vector_topk_arrays  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search  # noqa: E402
from conceptwalk.wrap import _reader  # noqa: E402
from conceptwalk.wrap.config import WalkConfig  # noqa: E402
from conceptwalk.wrap.embed import get_embedder  # noqa: E402


def _same(a: Any, c: Any) -> None:
    assert a[0].tolist() == c[0].tolist(), "rows differ"
    assert a[1].view(np.uint64).tolist() == c[1].view(np.uint64).tolist(), "score bits differ"


def sparse_rows(path: str, nq: int, rounds: int) -> dict[str, float]:
    """Medians (ms) of the sparse top-k, old (scan) and new (blocked), on a KB's concept vectors."""
    kb = KnowledgeBase.open(path, read_only=True)
    cfg = WalkConfig()
    emb = get_embedder(cfg.embedder)
    snap = _reader.StoreReader(kb).read_cache()
    sv = snap.concept_columns(emb, cfg)
    assert sv is not None
    vecs = emb.embed(b.queries(kb, nq))
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-30)
    vecs = vecs.astype(np.float32)
    vis = np.random.default_rng(1).random(sv.n) < 0.8
    keep = max(cfg.semantic_k, cfg.semantic_max_k)
    lo = cfg.semantic_threshold
    for i in range(nq):
        _same(
            sv.topk(vecs[i], keep, visible=vis, min_score=lo, method="scan"),
            sv.topk(vecs[i], keep, visible=vis, min_score=lo),
        )
    t = harness.interleaved(
        {
            "scan": lambda i: sv.topk(vecs[i], keep, visible=vis, min_score=lo, method="scan"),
            "blocked": lambda i: sv.topk(vecs[(i + 1) % nq], keep, visible=vis, min_score=lo),
        },
        nq,
        rounds=rounds,
    )
    return {"concepts": sv.n, "nnz": sv.nnz, "old_ms": t["scan"] * 1e3, "new_ms": t["blocked"] * 1e3}


_MODE = ["auto"]  # the sparse top-k method the wrapped query's semantic step uses


def _patch_sparse_method() -> None:
    """Route every SparseVectors.topk through _MODE (the same wrapper for the old and new case)."""
    orig = SparseVectors.topk
    if getattr(orig, "_bench_patched", False):
        return

    def topk(self: SparseVectors, *args: Any, **kw: Any) -> Any:
        kw.setdefault("method", _MODE[0])
        return orig(self, *args, **kw)

    topk._bench_patched = True  # type: ignore[attr-defined]
    SparseVectors.topk = topk  # type: ignore[method-assign]


def wrapped_rows(path: str, nq: int, rounds: int) -> dict[str, float]:
    """Medians (ms): the flat search, and the wrapped query with the old and new sparse top-k."""
    _patch_sparse_method()
    kb = KnowledgeBase.open(path, read_only=True)
    qs = b.queries(kb, nq)
    flat = builtin_flat_search(kb)
    wrapped = ConceptAnchoredRetriever(flat, kb)

    def run(mode: str, q: str) -> Any:
        _MODE[0] = mode
        return wrapped.query(q, 10, concept_walk=True, caller=b.ALL)

    for q in qs[:20]:  # same answers
        assert repr(run("scan", q)) == repr(run("auto", q)), q
    t = harness.interleaved(
        {
            "flat": lambda i: flat(qs[i], 10, caller=b.ALL),
            "old": lambda i: run("scan", qs[(i + 1) % nq]),
            "new": lambda i: run("auto", qs[(i + 2) % nq]),
        },
        nq,
        rounds=rounds,
    )
    return {k: v * 1e3 for k, v in t.items()}


def dense_data(n: int, nq: int, dim: int, clustered: bool, seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Unit rows and queries: Gaussian, or clustered (rows around 200 topic centres, each query
    a perturbed row)."""
    rng = np.random.default_rng(seed)
    if clustered:
        centres = rng.standard_normal((200, dim)).astype(np.float32)
        mat = centres[rng.integers(0, 200, n)] + 0.8 * rng.standard_normal((n, dim)).astype(np.float32)
    else:
        mat = rng.standard_normal((n, dim)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    if clustered:
        qs = mat[rng.integers(0, n, nq)] + 0.05 * rng.standard_normal((nq, dim)).astype(np.float32)
    else:
        qs = rng.standard_normal((nq, dim)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return np.ascontiguousarray(mat, dtype=np.float32), np.ascontiguousarray(qs, dtype=np.float32)


def dense_rows(n: int, nq: int, rounds: int, clustered: bool, dim: int = 384) -> dict[str, float]:
    """Medians (ms) of the dense top-10, old (the float64 scan) and new (int8 bounds + re-rank)."""
    mat, qs = dense_data(n, nq, dim, clustered)
    vis = np.random.default_rng(3).random(n) < 0.8
    t0 = time.perf_counter()
    dv = DenseVectors(mat)
    build = time.perf_counter() - t0
    mat = dv.matrix
    for i in range(nq):
        _same(
            vector_topk_arrays(mat, qs[i], 10, visible=vis, min_score=0.0),
            dv.topk(qs[i], 10, visible=vis, min_score=0.0),
        )
    t = harness.interleaved(
        {
            "scan": lambda i: vector_topk_arrays(mat, qs[i], 10, visible=vis, min_score=0.0),
            "pruned": lambda i: dv.topk(qs[(i + 1) % nq], 10, visible=vis, min_score=0.0),
        },
        nq,
        rounds=rounds,
    )
    return {"rows": n, "old_ms": t["scan"] * 1e3, "new_ms": t["pruned"] * 1e3, "build_s": build}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kbs", nargs="*")
    ap.add_argument("--dense", type=int, nargs="*", default=[])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    print("| top-k | size | old | new | old / new |")
    print("| --- | --- | ---: | ---: | ---: |")
    for path in args.kbs:
        s = sparse_rows(path, args.queries, args.rounds)
        print(
            f"| sparse hashing:512:2-4, top-10 | {s['concepts']} concepts, {s['nnz']} entries "
            f"| {s['old_ms']:.3f} ms | {s['new_ms']:.3f} ms | {s['old_ms'] / s['new_ms']:.2f}x |"
        )
    for path in args.kbs:
        w = wrapped_rows(path, args.queries, args.rounds)
        f = w["flat"]
        print(
            f"| wrapped / flat ({os.path.basename(path)}) | flat {f:.3f} ms "
            f"| {w['old'] / f:.1f}x ({w['old']:.3f} ms) | {w['new'] / f:.1f}x ({w['new']:.3f} ms) "
            f"| {w['old'] / w['new']:.2f}x |"
        )
    for n in args.dense:
        for clustered in (False, True):
            d = dense_rows(n, args.queries, args.rounds, clustered)
            kind = "clustered" if clustered else "gaussian"
            print(
                f"| dense 384-d {kind}, top-10 | {n} rows (codes built in {d['build_s']:.2f} s) "
                f"| {d['old_ms']:.3f} ms | {d['new_ms']:.3f} ms | {d['old_ms'] / d['new_ms']:.2f}x |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
