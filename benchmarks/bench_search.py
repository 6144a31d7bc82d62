"""Text search at scale (issue 12): the visible-BM25 index against the FTS5 OR-query it replaces
and against bm25s, and graph_context(question) against graph_context(concepts), in one run.

A script, not a pytest-benchmark suite (one process, round-robin over the methods so that load
from other processes hits them alike)::

    python benchmarks/bench_search.py --concepts 20000            # ~50k nodes
    python benchmarks/bench_search.py --concepts 200000 --rounds 2  # ~500k nodes (one-off)

It builds (or reuses) a synthetic KB with ``conceptwalk synth``, then reports per method the
median and 90th percentile latency of a top-10 over natural-language questions, the ratios, the
index's build time and memory per posting, and checks on the way that the visible search of a
narrowed caller equals the search on the store with that caller's hidden nodes deleted (on a
sample of questions, by rebuilding the index over the visible rows only).

bm25s (``pip install bm25s``, in the ``bench`` extra) is timed with its query already tokenised
(``retrieve`` only) and its global statistics (it has no notion of visibility); ours is timed end
to end (tokenising the question included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

from conceptwalk import Caller, graph_context
from conceptwalk.graph.text import TextIndex, tokenize
from conceptwalk.kb.store import KnowledgeBase

FIXED = [
    "how do we handle vector index compaction after deletes",
    "why does the storage worker recovery cause retry storms and how do we avoid them",
    "what is the decision about lock contention in the scheduler",
    "where is the code that implements token signing for the auth service",
    "how should we roll out the new cache eviction policy without slow startup",
    "what did we decide about permission denials during offboarding",
    "which files explain the fencing of the replication leader",
    "is there a memory about compression of the ingest pipeline",
]


def questions(kb: KnowledgeBase, n: int, seed: int = 0) -> list[str]:
    """The fixed questions plus questions built around random titles with common filler words."""
    rng = np.random.default_rng(seed)
    titles = [r[0] for r in kb.conn.execute("SELECT title FROM nodes WHERE title IS NOT NULL ORDER BY id")]
    fill = ["how do we", "what is the best way to", "why does the", "can you explain how the"]
    tail = ["work after deletes", "behave under load", "relate to the other parts", "fail in production"]
    out = list(FIXED)
    while len(out) < n:
        t = titles[int(rng.integers(len(titles)))]
        out.append(f"{fill[int(rng.integers(len(fill)))]} {t} {tail[int(rng.integers(len(tail)))]}")
    return out[:n]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1e3, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concepts", type=int, default=20000)
    ap.add_argument("--db", default=None, help="KB path (default /tmp/cw-bench-search-<concepts>.db)")
    ap.add_argument("--questions", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fts-rounds", type=int, default=None, help="rounds for FTS5 (slow at 500k)")
    ap.add_argument("--no-bm25s", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    db = args.db or f"/tmp/cw-bench-search-{args.concepts}.db"
    if not os.path.exists(db):
        subprocess.run(
            [sys.executable, "-m", "conceptwalk", "synth", db, "--concepts", str(args.concepts), "--quiet"], check=True
        )
    kb = KnowledgeBase.open(db, create=False)
    t, g = timed(kb.graph)
    graph_ms = t
    t, ix = timed(lambda: kb.text_index(g))
    build_ms = t
    assert ix is not None
    qs = questions(kb, args.questions)
    scopes = sorted({s for s in g.scope_names})
    narrowed = Caller.with_scopes(*scopes[:1]) if scopes else Caller.public()
    vm = narrowed.visibility(g)
    t, _ = timed(lambda: ix.stats_for(vm)) if vm is not None else (0.0, None)
    stats_ms = t

    methods: dict[str, Callable[[str], Any]] = {
        "visible_bm25_all": lambda q: kb.search(q, 10),
        "visible_bm25_narrowed": lambda q: kb.search(q, 10, caller=narrowed),
        "fts5_or": lambda q: kb.fts_search(q, 10),
        "context_question": lambda q: graph_context(kb, q, caller=narrowed, k=20),
    }
    seeds = {q: [i for i, _ in kb.search(q, 10, caller=narrowed)] for q in qs}
    methods["context_concepts"] = lambda q: graph_context(kb, concepts=seeds[q], caller=narrowed, k=20)
    methods["context_one_concept"] = lambda q: graph_context(kb, concepts=seeds[q][:1], caller=narrowed, k=20)
    bm25s_info: dict[str, Any] = {}
    if not args.no_bm25s:
        try:
            import bm25s
            import Stemmer
        except ImportError:
            print("bm25s not installed: pip install bm25s (skipping)", file=sys.stderr)
        else:
            rows = kb.conn.execute("SELECT title, body FROM nodes ORDER BY id").fetchall()
            corpus = [f"{t or ''} {t or ''} {b or ''}" for t, b in rows]  # title twice, like ours
            stemmer = Stemmer.Stemmer("english")
            t0 = time.perf_counter()
            toks = bm25s.tokenize(corpus, stemmer=stemmer, stopwords=None, show_progress=False)
            retr = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
            retr.index(toks, show_progress=False)
            bm25s_info["build_ms"] = (time.perf_counter() - t0) * 1e3
            qtok = {
                q: bm25s.tokenize([q], stemmer=stemmer, stopwords=None, show_progress=False, return_ids=False)
                for q in qs
            }
            methods["bm25s"] = lambda q: retr.retrieve(qtok[q], k=10, show_progress=False, n_threads=1)
    times: dict[str, list[float]] = {m: [] for m in methods}
    for q in qs:  # warm every path once (masks, statistics, FTS pages)
        for fn in methods.values():
            fn(q)
    fts_rounds = args.fts_rounds if args.fts_rounds is not None else args.rounds
    rng = np.random.default_rng(1)
    names = list(methods)
    for r in range(args.rounds):
        for q in qs:  # every method once per question, in a shuffled order (none always runs
            for name in rng.permutation(names).tolist():  # right after the cache-thrashing FTS5)
                if name == "fts5_or" and r >= fts_rounds:
                    continue
                fn = methods[name]
                ms, _ = timed(lambda: fn(q))
                times[name].append(ms)
    # exactness spot check: the narrowed search equals the search on an index of the visible rows
    mask = narrowed.visibility(g)
    keep = np.flatnonzero(mask.mask) if mask is not None else np.arange(g.num_nodes)
    rows = kb.conn.execute("SELECT title, body FROM nodes ORDER BY id").fetchall()
    small = TextIndex.build([rows[i][0] for i in keep], [rows[i][1] for i in keep])
    exact = 0
    for q in qs[:6]:
        got = kb.search(q, 10, caller=narrowed)
        d, s = small.search(q, 10)
        exact += got == [(g.ids[int(keep[i])], x) for i, x in zip(d, s)]
    med = {m: statistics.median(v) for m, v in times.items() if v}
    p90 = {m: float(np.percentile(v, 90)) for m, v in times.items() if v}
    avg_terms = statistics.mean(len(set(tokenize(q))) for q in qs)
    report = {
        "nodes": g.num_nodes,
        "edges": g.num_edges,
        "questions": len(qs),
        "rounds": args.rounds,
        "avg_distinct_terms": round(avg_terms, 1),
        "narrowed_caller": str(narrowed),
        "narrowed_visible": int(mask.visible_count) if mask is not None else g.num_nodes,
        "graph_build_ms": round(graph_ms, 1),
        "index_build_ms": round(build_ms, 1),
        "mask_stats_ms": round(stats_ms, 2),
        "index": {
            "docs": ix.num_docs,
            "terms": ix.num_terms,
            "postings": ix.num_postings,
            "bytes": ix.memory_bytes,
            "bytes_per_posting": round(ix.memory_bytes / max(ix.num_postings, 1), 2),
        },
        "median_ms": {m: round(v, 4) for m, v in med.items()},
        "p90_ms": {m: round(v, 4) for m, v in p90.items()},
        "ratios": {
            "fts5_over_visible_all": round(med["fts5_or"] / med["visible_bm25_all"], 1),
            "fts5_over_visible_narrowed": round(med["fts5_or"] / med["visible_bm25_narrowed"], 1),
            "context_question_over_concepts": round(med["context_question"] / med["context_concepts"], 2),
            "context_question_over_one_concept": round(med["context_question"] / med["context_one_concept"], 2),
        },
        "exact_vs_deleted_index": f"{exact}/6",
    }
    if "bm25s" in med:
        report["ratios"]["visible_all_over_bm25s"] = round(med["visible_bm25_all"] / med["bm25s"], 2)
        report["ratios"]["visible_narrowed_over_bm25s"] = round(med["visible_bm25_narrowed"] / med["bm25s"], 2)
        report["bm25s_build_ms"] = round(bm25s_info["build_ms"], 1)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for k, v in report.items():
            print(f"{k:>24}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
