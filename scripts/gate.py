#!/usr/bin/env python
"""Performance regression gate that survives a noisy machine.

    python scripts/gate.py                 # check against benchmarks/gate_baseline.json
    python scripts/gate.py --update        # re-measure and rewrite the baseline (reference machine)
    python scripts/gate.py --slowdown 3    # demo: run every core call 3 times; the gate must fail

What it measures: on the 1k-concept synthetic KB, the median per-query time of each of our
operations *and* of a fixed reference implementation running the same queries in the same
process, round-robin (``conceptwalk.bench.harness.round_robin``): the pure-Python forward push for PPR
and graph_context, the numpy-vectorised resource allocation for link_suggest, the pure-Python
bidirectional BFS for graph_path. The gate compares the **ratio** reference/ours with the
committed baseline ratio. A busy machine slows both sides alike, so the ratio moves far less
than wall times do (STYLE P11: wall-time baselines flap by ~26% between VMs and go stale).

A metric fails when its ratio falls below ``fail_below`` (by default 60% of the baseline ratio:
a clear regression, not noise). A failing metric is re-measured up to ``--retries`` times and
its best ratio counts: noise only ever makes us look slower, never faster, so a real regression
stays failed while a noise spike passes on the retry.

Exit code 0: pass; 1: regression; 2: usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

import numpy as np

from conceptwalk.bench import harness as _perf
from conceptwalk import Caller, _core, graph_context, graph_path, link_suggest

BASELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks", "gate_baseline.json")


def _slow_down(factor: int) -> None:
    """The deliberately slowed build of the demo: every core entry point the tools use runs its
    work ``factor`` times (a real, size-proportional slowdown of the compiled calls only)."""
    for name in (
        "personalized_pagerank",
        "resource_allocation",
        "shortest_path",
        "multi_source_hops",
        "context_batch",
        "graph_context",
    ):
        orig = getattr(_core, name)

        def slowed(*a: Any, __orig: Any = orig, **k: Any) -> Any:
            for _ in range(factor - 1):
                __orig(*a, **k)
            return __orig(*a, **k)

        setattr(_core, name, slowed)


def metrics(w: _perf.Workload, rounds: int) -> dict[str, Any]:
    """name -> callable() returning the measured ratio reference/ours (correctness checked)."""
    g = w.graph
    adj = w.adj
    indptr = np.asarray(g.core.indptr)
    indices = np.asarray(g.core.indices)
    everyone = Caller.all_access()
    nq = min(100, len(w.seed_sets))
    s0, s0i = w.seed_map(0), w.seed_idx(0)
    for i in range(5):  # correctness first: a fast wrong answer fails the gate
        _perf._check_ppr(g.personalized_pagerank(w.seed_map(i)), _perf.py_push(adj, w.seed_idx(i)), adj, 1e-4)
        t, _ = _perf.numpy_ra(indptr, indices, g.id_index[w.concepts[i]], 10)
        if [x.id for x in link_suggest(g, w.concepts[i], caller=everyone).suggestions] != [
            g.ids[j] for j in t.tolist()
        ]:
            raise AssertionError("link_suggest disagrees with the numpy reference")

    def ratio(ours: Any, ref: Any, n: int, repeat: int = 1) -> float:
        t = _perf.interleaved({"ours": ours, "ref": ref}, n, rounds=rounds, repeat=repeat)
        return t["ref"] / t["ours"]

    return {
        "ppr_repeated": lambda: ratio(lambda i: g.personalized_pagerank(s0), lambda i: _perf.py_push(adj, s0i), 20),
        "ppr_rotating": lambda: ratio(
            lambda i: g.personalized_pagerank(w.seed_map(i)), lambda i: _perf.py_push(adj, w.seed_idx(i)), nq
        ),
        "graph_context": lambda: ratio(
            lambda i: graph_context(g, concepts=w.seed_sets[i], k=20, caller=everyone),
            lambda i: _perf.py_push(adj, w.seed_idx(i)),
            nq,
        ),
        "link_suggest": lambda: ratio(
            lambda i: link_suggest(g, w.concepts[i], k=10, caller=everyone),
            lambda i: _perf.numpy_ra(indptr, indices, g.id_index[w.concepts[i]], 10),
            nq,
        ),
        "graph_path": lambda: ratio(
            lambda i: graph_path(g, *w.pairs[i], caller=everyone),
            lambda i: _perf.py_bibfs(adj, g.id_index[w.pairs[i][0]], g.id_index[w.pairs[i][1]]),
            nq,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from this run")
    ap.add_argument(
        "--tolerance",
        type=float,
        default=0.6,
        help="with --update: fail_below = tolerance * measured ratio (default 0.6)",
    )
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument(
        "--slowdown",
        type=int,
        default=int(os.environ.get("CONCEPTWALK_GATE_SLOWDOWN", "1")),
        help="demo: run each core call N times (env CONCEPTWALK_GATE_SLOWDOWN)",
    )
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)
    if args.slowdown < 1:
        ap.error("--slowdown must be >= 1")
    if args.slowdown > 1:
        _slow_down(args.slowdown)
        print(f"gate: DEMO slowed build: every core call runs {args.slowdown}x", file=sys.stderr)
    w = _perf.load_workload(1000, seed=0, n_queries=200)
    ms = metrics(w, args.rounds)
    measured = {name: fn() for name, fn in ms.items()}

    if args.update:
        base = {
            "kb": "synthetic 1k concepts, seed 0",
            "machine": platform.machine(),
            "python": platform.python_version(),
            "measured": time.strftime("%Y-%m-%d"),
            "metrics": {
                n: {"baseline_ratio": round(r, 2), "fail_below": round(args.tolerance * r, 2)}
                for n, r in measured.items()
            },
        }
        with open(args.baseline, "w", encoding="utf-8") as f:
            json.dump(base, f, indent=2)
            f.write("\n")
        print(f"gate: baseline written to {args.baseline}")
        for n, m in base["metrics"].items():
            print(f"  {n:14s} ratio {m['baseline_ratio']:7.1f}x  fail below {m['fail_below']:.1f}x")
        return 0

    try:
        with open(args.baseline, encoding="utf-8") as f:
            base = json.load(f)["metrics"]
    except (OSError, KeyError, ValueError) as exc:
        print(f"gate: cannot read baseline {args.baseline}: {exc}", file=sys.stderr)
        return 2
    report, failed = [], []
    for name, fn in ms.items():
        if name not in base:
            continue
        r = measured[name]
        tries = 0
        while r < base[name]["fail_below"] and tries < args.retries:  # best of: noise only slows
            r = max(r, fn())
            tries += 1
        ok = r >= base[name]["fail_below"]
        report.append(
            {
                "metric": name,
                "ratio": round(r, 2),
                "baseline_ratio": base[name]["baseline_ratio"],
                "fail_below": base[name]["fail_below"],
                "retries": tries,
                "ok": ok,
            }
        )
        if not ok:
            failed.append(name)
    if args.json:
        print(json.dumps({"ok": not failed, "metrics": report}, indent=1))
    else:
        print("| metric | ratio (reference / ours) | baseline | fail below | retries | result |")
        print("| --- | ---: | ---: | ---: | ---: | --- |")
        for m in report:
            print(
                f"| {m['metric']} | {m['ratio']:.1f}x | {m['baseline_ratio']:.1f}x | {m['fail_below']:.1f}x | "
                f"{m['retries']} | {'ok' if m['ok'] else 'REGRESSION'} |"
            )
        print("gate: " + ("PASS" if not failed else f"FAIL ({', '.join(failed)})"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
