"""Print the issue-18 table rows this branch can measure, old and new paths side by side in one run.

    python scripts/wrap_cost.py KB20K.db [KB200K.db ...] [--fresh KB1M.db] [--queries 60] [--rounds 5]

Rows (all-access caller; medians of interleaved rounds, ``conceptwalk.bench.harness.interleaved``):

* ``graph_context(kb, question)`` / ``graph_context(kb, concepts=<its own search seeds>)``, the
  one-call path (new) and the old two-call path (BM25 from Python, then the walk), checked equal
* wrapped query (``ConceptAnchoredRetriever`` over ``builtin_flat_search``, ``concept_walk=True``)
  / the flat search alone, with the old numpy semantic step patched back in and with the
  compiled one (``benchmarks/bench_wrap_cost.py``)
* the semantic step alone (old numpy ``ColumnMatrix`` scoring vs ``graph.vectors.SparseVectors``)
* with ``--fresh``: a fresh read-only process, constructing the retriever + its first wrapped
  query (seconds, peak RSS), the compiled path (and ``--fresh-old``: the old one)

Measurements only: nothing is asserted on wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import bench_wrap_cost as b  # noqa: E402

from typing import Any  # noqa: E402

from conceptwalk import Caller, graph_context  # noqa: E402
from conceptwalk.bench import harness  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402


def old_question_context(kb: KnowledgeBase, question: str, caller: Caller) -> Any:
    """``graph_context(kb, question, caller=caller)`` as main at cf62986 ran it, step for step
    with the same internals: the argument checks, the state, the caller's mask, BM25 from Python
    (``TextIndex.search``; the caller's statistics kept, as its per-mask cache kept them), the
    1/rank weights built in Python, then the compiled walk (two compiled calls)."""
    from conceptwalk.tools import context as c

    t0 = time.perf_counter()
    caller = c.check_caller(caller)
    rank_code, max_hops = c.check_rank("ppr", 2)
    k = c.check_count(20)
    n_hits = c.check_count(10, "n_hits")
    restart, eps = c.check_ppr_params(0.25, 1e-4)
    g, kb_, ix = c._source_state(kb, (question,), None)
    view = g.view(caller)
    vm = view.mask
    concept_idx = c._concept_indices(g, [], vm)
    type_filter = c._type_filter(g, None)
    spec, nodes, w, reason = c._context_seeds(g, kb_, None, question, concept_idx, n_hits, view, ix)
    if nodes is None:
        return reason
    r = c.context(g, nodes, w, restart, eps, k, type_filter, vm)
    return c._ranked(c._from_core(g, question, spec, r, rank_code, restart, eps, k, type_filter, t0), "ppr", max_hops)


def context_row(path: str, nq: int, rounds: int, caller: Caller = b.ALL) -> dict[str, float]:
    """Medians (ms) of the question-seeded call (new: one compiled call; old: two, Python between),
    and of the concept-seeded call on the same query's own search seeds; results checked equal."""
    kb = KnowledgeBase.open(path, read_only=True)
    qs = b.queries(kb, nq)
    seeds = [[s.id for s in graph_context(kb, q, caller=caller).seeds] for q in qs]
    for q in qs:
        assert graph_context(kb, q, caller=caller).to_dict() == old_question_context(kb, q, caller).to_dict()
    # Each case is shifted to its own query: back-to-back calls never answer the same query, so
    # none runs on caches the one before it warmed for that query (a case that ran second on the
    # same postings and the same PPR workspace rows measured up to 1.6x faster than the first).
    t = harness.interleaved(
        {
            "question": lambda i: graph_context(kb, qs[i], caller=caller),
            "question_old": lambda i: old_question_context(kb, qs[(i + 1) % nq], caller),
            "concepts": lambda i: graph_context(kb, concepts=seeds[(i + 2) % nq], caller=caller),
        },
        nq,
        rounds=rounds,
    )
    return {k: v * 1e3 for k, v in t.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kbs", nargs="+")
    ap.add_argument("--fresh", action="append", default=[])
    ap.add_argument("--fresh-old", action="store_true")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    print("| row | store | old | new |")
    print("| --- | --- | ---: | ---: |")
    for path in args.kbs:
        name = os.path.basename(path)
        for who, caller in (("all-access", b.ALL), ("public", Caller.public())):
            t = context_row(path, args.queries, args.rounds, caller)
            q, o, c = t["question"], t["question_old"], t["concepts"]
            print(
                f"| graph_context question / concepts ({who}) | {name} | {o / c:.2f}x ({o:.3f} ms vs {c:.3f} ms) "
                f"| {q / c:.2f}x ({q:.3f} ms vs {c:.3f} ms) |"
            )
        w = b.wrapped_rows(path, args.queries, args.rounds)
        print(
            f"| wrapped / flat | {name} | {w['old_ms'] / w['flat_ms']:.1f}x ({w['old_ms']:.2f} ms vs "
            f"{w['flat_ms']:.3f} ms) | {w['new_ms'] / w['flat2_ms']:.1f}x ({w['new_ms']:.2f} ms vs {w['flat2_ms']:.3f} ms) |"
        )
        s = b.semantic_rows(path, args.queries, args.rounds)
        print(
            f"| semantic step ({s['concepts']} concepts) | {name} | {s['old_ms']:.3f} ms (build {s['build_old_s']:.2f} s) "
            f"| {s['new_ms']:.3f} ms (build {s['build_new_s']:.2f} s) |"
        )
    for path in args.fresh:
        name = os.path.basename(path)
        new = b.fresh_rows(path, False)
        old = b.fresh_rows(path, True) if args.fresh_old else None
        fmt = lambda r: f"{r['construct_plus_first_s']:.1f} s, {r['peak_rss_mb']:.0f} MB peak RSS"  # noqa: E731
        print(
            f"| fresh read-only process: retriever + first wrapped query | {name} | {fmt(old) if old else '-'} | {fmt(new)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
