"""``conceptwalk bench [KB] [--concepts N] [--json] [--report DIR]``: what to expect on your data.

Runs the package's measurements (``conceptwalk.bench.harness``) on the synthetic KB of ``--concepts``
concepts (default 1000), or on a user's KB file, and prints a table of median per-query times
next to in-run references (a pure-Python forward push, a numpy-vectorised resource allocation, a
pure-Python bidirectional BFS) with their ratios. Imports stay inside the command so that
``conceptwalk --help`` does not pay for them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ._common import MAX_COUNT, int_in

__all__ = ["register", "cmd_bench"]


def cmd_bench(args: argparse.Namespace) -> int:
    """``conceptwalk bench [KB]``: time the tools against the in-repo references, round-robin.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the ``bench`` sub-command.

    Returns
    -------
    int
        The exit status (0; a bad option raises :class:`~conceptwalk.errors.ConceptwalkError`).
    """
    from ..bench import harness as _perf
    from ..errors import ConceptwalkError

    if args.concepts is not None and args.concepts < 10:
        raise ConceptwalkError(f"--concepts must be >= 10, got {args.concepts}")
    if args.queries < 2:
        raise ConceptwalkError(f"--queries must be >= 2, got {args.queries}")
    if args.sizes is not None and args.report is None:
        raise ConceptwalkError("--sizes draws the report's scaling curve: give --report DIR too")
    if args.report is not None:
        from ..bench.report import require_matplotlib

        require_matplotlib()  # before measuring: say what to install first
    t0 = time.perf_counter()
    if args.kb:
        from ..kb import KnowledgeBase

        if not os.path.exists(args.kb):
            raise ConceptwalkError(f"knowledge base file not found: {args.kb}")
        with KnowledgeBase.open(args.kb, create=False) as kb:
            g = kb.graph()
        w = _perf.workload_from_graph(g, os.path.basename(args.kb), n_queries=args.queries)
        w.build_seconds = time.perf_counter() - t0
        source = f"knowledge base {args.kb}"
    else:
        n = args.concepts or 1000
        w = _perf.load_workload(n, n_queries=args.queries)
        source = f"synthetic KB, {n} concepts"
    g = w.graph
    if not w.seed_sets or not w.concepts:
        raise ConceptwalkError("the graph has no node with a neighbour: nothing to measure")
    rows = _perf.run_suite(w, rounds=args.rounds, n_queries=args.queries, threads_check=not args.no_threads)
    info: dict[str, Any] = {
        "source": source,
        "nodes": g.num_nodes,
        "edges": g.num_edges,
        "adjacency_entries": int(g.core.num_entries),
        "core_bytes_per_entry": round(g.core.memory_bytes / max(g.core.num_entries, 1), 2),
        "graph_load_s": round(w.build_seconds, 4),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }
    if args.report is not None:
        from ..bench import report as _report

        latencies = _report.tool_latencies(w, n_calls=max(args.queries, 20) * 4)
        curve = _report.scaling_curve(args.sizes if args.sizes is not None else [200, 1000, 5000])
        page = _report.write_report(args.report, info=info, rows=rows, latencies=latencies, curve=curve)
        print(f"conceptwalk bench: report written to {page}", file=sys.stderr)
    if args.json:
        payload = {
            **info,
            "rows": [r.to_dict() for r in rows],
        }
        sys.stdout.write(json.dumps(payload) + "\n")
    else:
        print(
            f"{source}: {g.num_nodes:,} nodes, {g.num_edges:,} edges, {info['adjacency_entries']:,} "
            f"adjacency entries ({info['core_bytes_per_entry']} B each in the core), "
            f"loaded in {w.build_seconds:.3f} s"
        )
        print(_perf.format_table(rows))
        print(
            "\nratio = reference time / our time, both measured in this run, round-robin; medians. "
            "met: whether this run reached the target (n/a: no target here, or one for another size)."
        )
    return 0


def register(subparsers: Any) -> None:
    """Add the ``bench`` sub-command to the ``conceptwalk`` parser.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = subparsers.add_parser("bench", help="measure query times on the synthetic KB or your KB file")
    p.add_argument("kb", nargs="?", help="a KB file (default: the synthetic KB)")
    p.add_argument(
        "--concepts", type=int_in(1, MAX_COUNT), default=None, help="synthetic KB size in concepts (default 1000)"
    )
    p.add_argument("--queries", type=int_in(1, 1_000_000), default=50, help="queries per measurement")
    p.add_argument("--rounds", type=int_in(1, 10_000), default=5, help="round-robin rounds (the median is taken)")
    p.add_argument("--no-threads", action="store_true", help="skip the 1- vs 2-thread batch measurement")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument(
        "--report",
        default=None,
        metavar="DIR",
        help="also write an HTML report with plots into DIR: latency distributions per tool beside the "
        "references, the scaling curve over synthetic KB sizes, the figures' table (needs the report extra)",
    )
    p.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        metavar="N1,N2",
        help="with --report: the synthetic KB sizes (concepts) of the scaling curve (default 200,1000,5000)",
    )
    p.set_defaults(func=cmd_bench)


def _sizes(text: str) -> list[int]:
    """Comma-separated KB sizes in concepts (an argparse ``type=``), each in [10, 10^7]."""
    parse = int_in(10, MAX_COUNT)
    out = [parse(x) for x in text.split(",") if x.strip()]
    if not out:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes, got {text[:40]!r}")
    return out
