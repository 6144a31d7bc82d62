"""Print the issue-18 table rows this branch can measure, old and new paths side by side in one run.

    python scripts/wrap_cost.py KB20K.db [KB200K.db ...] [--fresh KB1M.db] [--queries 60] [--rounds 5]

Rows (all-access caller; medians of interleaved rounds, ``conceptwalk.bench.harness.interleaved``):

* ``graph_context(kb, question)`` / ``graph_context(kb, concepts=<its own search seeds>)``
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import bench_wrap_cost as b  # noqa: E402

from conceptwalk import graph_context  # noqa: E402
from conceptwalk.bench import harness  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402


def context_row(path: str, nq: int, rounds: int) -> tuple[float, float]:
    kb = KnowledgeBase.open(path, read_only=True)
    qs = b.queries(kb, nq)
    seeds = [[s.id for s in graph_context(kb, q, caller=b.ALL).seeds] for q in qs]
    t = harness.interleaved(
        {
            "question": lambda i: graph_context(kb, qs[i], caller=b.ALL),
            "concepts": lambda i: graph_context(kb, concepts=seeds[i], caller=b.ALL),
        },
        nq,
        rounds=rounds,
    )
    return t["question"] * 1e3, t["concepts"] * 1e3


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
        q, c = context_row(path, args.queries, args.rounds)
        print(f"| graph_context question / concepts | {name} | - | {q / c:.2f}x ({q:.3f} ms vs {c:.3f} ms) |")
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
