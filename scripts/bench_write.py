"""Write throughput into a fresh store: ``conceptwalk synth``'s store path and the JSONL import.

One process, one run of each case, in turn: the synthetic KB at 20,000 and 200,000 concepts
(``synthetic.generate(n, seed=0)``) written by ``SyntheticKB.write_to`` (what ``conceptwalk
synth`` does), and the same KB as a JSONL file (nodes, edges, aliases; written beforehand, not
timed) through ``import_jsonl``. Each run is measured end to end: open a new store file, write
every node and edge with their annotations (and the aliases), commit, indexes and triggers back
in place, close. Reported: seconds, edges per second, rows per second (nodes + edges + aliases),
peak RSS of the run (Linux: the process's high-water mark, reset before each run), and whether
the target (>= 200,000 edges per second) is met.

Usage::

    python scripts/bench_write.py [--sizes 20000 200000] [--dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from typing import Any

from conceptwalk.kb import synthetic
from conceptwalk.kb.importers import import_jsonl
from conceptwalk.kb.store import KnowledgeBase

TARGET_EDGES_PER_S = 200_000


def _reset_peak() -> bool:
    """Reset the process's peak RSS (Linux >= 4.0); False when it cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fresh(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal", ".snapshot"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def _write_jsonl(syn: Any, path: str) -> None:
    dumps = json.dumps
    with open(path, "w", encoding="utf-8") as fh:
        for rows in (syn.node_rows(), syn.edge_rows(), syn.alias_rows()):
            fh.writelines(dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _run(case: str, n: int, work: str, syn: Any) -> dict[str, Any]:
    db = os.path.join(work, f"{case}-{n}.sqlite")
    _fresh(db)
    jsonl = os.path.join(work, f"kb-{n}.jsonl")
    if case == "jsonl":
        _write_jsonl(syn, jsonl)
    exact_peak = _reset_peak()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    kb = KnowledgeBase.create(db)
    try:
        if case == "synth":
            syn.write_to(kb)
        else:
            import_jsonl(kb, jsonl)
    finally:
        kb.close()
    secs = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    peak = _peak_mb()
    with KnowledgeBase.open(db) as kb:  # the store holds what was written
        st = kb.stats()
        assert (st["nodes"], st["edges"]) == (syn.num_nodes, syn.num_edges), st
    size = os.path.getsize(db)
    _fresh(db)
    if case == "jsonl":
        os.remove(jsonl)
    rows = syn.num_nodes + syn.num_edges + len(syn.aliases)
    return {
        "case": case,
        "concepts": n,
        "nodes": syn.num_nodes,
        "edges": syn.num_edges,
        "rows": rows,
        "seconds": round(secs, 3),
        "cpu_seconds": round(cpu, 3),
        "edges_per_s": round(syn.num_edges / secs),
        "rows_per_s": round(rows / secs),
        "peak_rss_mb": round(peak, 1),
        "peak_rss_exact": exact_peak,
        "store_mb": round(size / 2**20, 1),
        "target_met": syn.num_edges / secs >= TARGET_EDGES_PER_S,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    ap.add_argument("--cases", nargs="+", choices=["synth", "jsonl"], default=["synth", "jsonl"])
    ap.add_argument("--dir", help="where the stores are written (default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args(argv)
    work = args.dir or tempfile.mkdtemp(prefix="bench_write.")
    os.makedirs(work, exist_ok=True)
    results = []
    try:
        for n in args.sizes:
            syn = synthetic.generate(n, seed=0)
            for case in args.cases:
                r = _run(case, n, work, syn)
                results.append(r)
                if not args.json:
                    print(
                        f"{case:5s} {n:>8,} concepts ({r['nodes']:,} nodes, {r['edges']:,} edges): "
                        f"{r['seconds']:7.2f} s (cpu {r['cpu_seconds']:.2f} s)  {r['edges_per_s']:>9,} edges/s  "
                        f"{r['rows_per_s']:>9,} rows/s  peak RSS {r['peak_rss_mb']:,.0f} MB  "
                        f"store {r['store_mb']:,.0f} MB  target {'met' if r['target_met'] else 'NOT met'}",
                        flush=True,
                    )
            del syn
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    met = all(r["target_met"] for r in results)
    if args.json:
        print(json.dumps({"target_edges_per_s": TARGET_EDGES_PER_S, "results": results, "target_met": met}, indent=2))
    else:
        print(
            f"target >= {TARGET_EDGES_PER_S:,} edges/s: {'met' if met else 'NOT met'} "
            f"({sum(r['target_met'] for r in results)} of {len(results)} runs)"
            f" [load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}]"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
