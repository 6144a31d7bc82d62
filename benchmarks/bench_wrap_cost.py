"""The wrapped query's cost and the semantic step, old numpy path next to the compiled one, in one run
(issue 18, item 3). Measurements, not tests: nothing is asserted on wall time.

    python benchmarks/bench_wrap_cost.py KB.db [--queries 100] [--rounds 5] [--fresh] [--dense]

On a store (``conceptwalk synth --concepts N KB.db``), all-access caller, queries = concept titles
with a word of another title (seeded):

* ``semantic``: the resolver's semantic step scoring, the old reference
  (``wrap._reader.ColumnMatrix.scores`` + ``resolver.topk_scores``, numpy) vs the compiled
  inverted index (``graph.vectors.SparseVectors.topk``), on the same query vectors and mask;
  results checked equal.
* ``wrapped / flat``: ``ConceptAnchoredRetriever(builtin_flat_search(kb), kb).query(text, 10,
  concept_walk=True)`` with the old semantic step patched back in, with the new one, and the flat
  search alone (interleaved per query: ``conceptwalk.bench.harness.interleaved``).
* ``--dense``: a dense 384-d unit matrix over the same number of concepts: the compiled exact
  scan (``vector_topk_arrays``) vs numpy (``mat @ q`` in float64 + ``topk_scores``).
* ``--fresh``: a fresh read-only process per path: construct the retriever + the first wrapped
  query; seconds and peak RSS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from conceptwalk import Caller
from conceptwalk.bench import harness
from conceptwalk.graph.vectors import vector_topk_arrays
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
from conceptwalk.wrap import _reader
from conceptwalk.wrap.embed import get_embedder
from conceptwalk.wrap.resolver import topk_scores

ALL = Caller.all_access()


class NumpyColumns:
    """The semantic step before the compiled index: ColumnMatrix.scores (numpy bincount) and
    topk_scores, behind the SparseVectors.topk signature."""

    def __init__(self, mat: np.ndarray | None, csr: Any = None, dim: int = 0) -> None:
        if mat is not None:
            self.cols = _reader.ColumnMatrix.build(mat)
            return
        # the same ColumnMatrix from CSR rows (no dense matrix: what a 1M-concept run can hold)
        indptr, indices, values = csr
        n = len(indptr) - 1
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        order = np.argsort(indices, kind="stable")  # by column, then row ascending
        cols = indices[order].astype(np.int64)
        main = dim - dim % 4
        ptr = np.zeros(dim + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols, minlength=dim), out=ptr[1:])
        self.cols = _reader.ColumnMatrix(
            n, dim, ptr.tolist(), values[order].astype(np.float64), rows[order] * 4 + np.where(cols < main, cols & 3, 0)
        )

    def topk(self, q: np.ndarray, k: int, *, visible: Any = None, min_score: float | None = None) -> Any:
        lo = -np.inf if min_score is None else min_score
        return topk_scores(self.cols.scores(q), k, visible=visible, min_score=lo)


def use_old_semantic_step() -> None:
    """Patch the old path back in: dense concept matrix (embedded in memory), numpy scoring."""

    def concept_columns(self: Any, embedder: Any, config: Any) -> Any:
        def build() -> Any:
            got = NumpyColumns(self.concept_embeddings(embedder, config))
            return False if got.cols is None else got

        got = self._get(("embcols-old", embedder.name, config.concept_node_types, config.concept_text), build)
        return None if got is False else got

    _reader.ReadCache.concept_columns = concept_columns  # type: ignore[method-assign]


def queries(kb: KnowledgeBase, n: int, seed: int = 0) -> list[str]:
    g = kb.graph()
    codes = g.node_type_codes
    names = list(g.node_type_names) if hasattr(g, "node_type_names") else None
    rng = np.random.default_rng(seed)
    titles = [t for t in g.titles if t]
    if names is not None and "CONCEPT" in names:
        c = names.index("CONCEPT")
        titles = [g.titles[i] for i in np.flatnonzero(np.asarray(codes) == c).tolist() if g.titles[i]]
    out = []
    for _ in range(n):
        a = titles[int(rng.integers(len(titles)))]
        b = titles[int(rng.integers(len(titles)))].split()
        out.append(f"{a} {b[int(rng.integers(len(b)))]}" if b else a)
    return out


def semantic_rows(path: str, nq: int, rounds: int, old_from_csr: bool = False) -> dict[str, float]:
    kb = KnowledgeBase.open(path, read_only=True)
    cfg = WalkConfig()
    emb = get_embedder(cfg.embedder)
    src = _reader.StoreReader(kb)
    snap = src.read_cache()
    t0 = time.perf_counter()
    new = snap.concept_columns(emb, cfg)
    t_new = time.perf_counter() - t0
    t0 = time.perf_counter()
    if old_from_csr:
        ids = [snap.graph.ids[i] for i in snap.concept_indices(cfg).tolist()]
        old = NumpyColumns(None, emb.embed_csr(src.node_texts(ids, snap.graph, cfg.concept_text)), emb.dim)
    else:
        old = NumpyColumns(snap.concept_embeddings(emb, cfg))
    t_old = time.perf_counter() - t0
    qs = queries(kb, nq)
    vecs = emb.embed(qs)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-30)
    n = new.n
    vis = np.random.default_rng(1).random(n) < 0.8
    for i in range(nq):  # same answers
        a = old.topk(vecs[i], 10, visible=vis, min_score=0.2)
        b = new.topk(vecs[i], 10, visible=vis, min_score=0.2)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    t = harness.interleaved(
        {
            "old": lambda i: old.topk(vecs[i], 10, visible=vis, min_score=0.2),
            "new": lambda i: new.topk(vecs[i], 10, visible=vis, min_score=0.2),
        },
        nq,
        rounds=rounds,
    )
    return {
        "concepts": n,
        "old_ms": t["old"] * 1e3,
        "new_ms": t["new"] * 1e3,
        "build_old_s": t_old,
        "build_new_s": t_new,
    }


def dense_rows(n: int, nq: int, rounds: int, dim: int = 384) -> dict[str, float]:
    rng = np.random.default_rng(2)
    mat = rng.standard_normal((n, dim)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    qs = rng.standard_normal((nq, dim)).astype(np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    vis = rng.random(n) < 0.8
    m64 = mat.astype(np.float64)
    t = harness.interleaved(
        {
            "numpy": lambda i: topk_scores(m64 @ qs[i].astype(np.float64), 10, visible=vis, min_score=0.0),
            "compiled": lambda i: vector_topk_arrays(mat, qs[i], 10, visible=vis, min_score=0.0),
        },
        nq,
        rounds=rounds,
    )
    return {"concepts": n, "dim": dim, "numpy_ms": t["numpy"] * 1e3, "compiled_ms": t["compiled"] * 1e3}


def wrapped_rows(path: str, nq: int, rounds: int) -> dict[str, float]:
    kb = KnowledgeBase.open(path, read_only=True)
    qs = queries(kb, nq)
    flat = builtin_flat_search(kb)
    new = ConceptAnchoredRetriever(flat, kb)
    saved = _reader.ReadCache.concept_columns
    use_old_semantic_step()
    old = ConceptAnchoredRetriever(flat, kb)
    for q in qs[:20]:  # same answers
        assert repr(old.query(q, 10, concept_walk=True, caller=ALL)) == repr(
            new.query(q, 10, concept_walk=True, caller=ALL)
        ), q
    t_old = harness.interleaved(
        {
            "flat": lambda i: flat(qs[i], 10, caller=ALL),
            "wrapped-old": lambda i: old.query(qs[i], 10, concept_walk=True, caller=ALL),
        },
        nq,
        rounds=rounds,
    )
    _reader.ReadCache.concept_columns = saved  # type: ignore[method-assign]
    t_new = harness.interleaved(
        {
            "flat": lambda i: flat(qs[i], 10, caller=ALL),
            "wrapped-new": lambda i: new.query(qs[i], 10, concept_walk=True, caller=ALL),
        },
        nq,
        rounds=rounds,
    )
    return {
        "flat_ms": t_old["flat"] * 1e3,
        "old_ms": t_old["wrapped-old"] * 1e3,
        "flat2_ms": t_new["flat"] * 1e3,
        "new_ms": t_new["wrapped-new"] * 1e3,
    }


FRESH = r"""
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench!r})
import bench_wrap_cost as b
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search
if {old!r}:
    b.use_old_semantic_step()
kb = KnowledgeBase.open({path!r}, read_only=True)
t1 = time.perf_counter()
r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
t2 = time.perf_counter()
r.query({q!r}, 10, concept_walk=True, caller=b.ALL)
t3 = time.perf_counter()
print(json.dumps({{"open_s": t1 - t0, "construct_s": t2 - t1, "first_query_s": t3 - t2,
                  "construct_plus_first_s": t3 - t1,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def fresh_rows(path: str, old: bool) -> dict[str, float]:
    code = FRESH.format(
        bench=os.path.dirname(os.path.abspath(__file__)), old=old, path=path, q="personalized pagerank over the graph"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kb")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--fresh-old", action="store_true", help="also the old path in a fresh process (slow at 1M)")
    ap.add_argument("--no-wrapped", action="store_true")
    ap.add_argument(
        "--old-from-csr",
        action="store_true",
        help="build the old numpy reference from CSR rows (no dense matrix; for 1M concepts)",
    )
    ap.add_argument("--dense", type=int, default=0, help="rows of the dense 384-d scan (0: skip)")
    args = ap.parse_args(argv)
    res: dict[str, Any] = {"kb": args.kb}
    if args.fresh:
        res["fresh_new"] = fresh_rows(args.kb, False)
        if args.fresh_old:
            res["fresh_old"] = fresh_rows(args.kb, True)
    res["semantic"] = semantic_rows(args.kb, args.queries, args.rounds, args.old_from_csr)
    if not args.no_wrapped:
        res["wrapped"] = wrapped_rows(args.kb, args.queries, args.rounds)
    if args.dense:
        res["dense"] = dense_rows(args.dense, args.queries, args.rounds)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
