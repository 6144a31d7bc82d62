"""Measure the store's graph snapshot (issue 11) and print a table: build from the store, open in
a fresh process, read after a write, sustained write+read turns, import rows per second, peak RSS.

Usage::

    python scripts/bench_snapshot.py                     # 1k and 20k concepts (about 1 minute)
    python scripts/bench_snapshot.py --concepts 1000 20000 200000   # the manual run (minutes)
    python scripts/bench_snapshot.py --json out.json

Every figure is measured in this run (one process at a time; medians of repeats). Nothing is
asserted: the targets are printed beside the figures with "met"/"NOT met".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

# The child's peak RSS is its VmHWM (ru_maxrss would carry the parent's peak across exec).
FIRST_ANSWER = r"""
import sys, time
t0 = time.perf_counter()
from conceptwalk.kb.store import KnowledgeBase
kb = KnowledgeBase.open(sys.argv[1], create=False)
g = kb.graph()
r = g.personalized_pagerank({sys.argv[2]: 1.0}, k=10)
assert len(r) > 0
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(time.perf_counter() - t0, hwm)
"""


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def fresh_process(db: str, seed: str, repeat: int, with_snapshot: bool) -> dict[str, float]:
    """Wall time from spawn to the first answer (interpreter start included) and peak RSS."""
    walls, rss = [], []
    for _ in range(repeat):
        if not with_snapshot and os.path.exists(db + ".snapshot"):
            os.unlink(db + ".snapshot")
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", FIRST_ANSWER, db, seed], capture_output=True, text=True, check=True
        ).stdout.split()
        walls.append(time.perf_counter() - t)
        rss.append(int(out[1]) / 1024)
    return {"seconds": _median(walls), "peak_rss_mb": max(rss)}


def measure(n_concepts: int, workdir: str, turns: int) -> dict[str, Any]:
    from conceptwalk.kb import synthetic
    from conceptwalk.kb.importers import import_jsonl
    from conceptwalk.kb.snapshot import read_columns
    from conceptwalk.kb.store import KnowledgeBase

    res: dict[str, Any] = {"concepts": n_concepts}
    db = os.path.join(workdir, f"kb{n_concepts}.sqlite")
    for p in (db, db + "-wal", db + "-shm", db + ".snapshot"):
        if os.path.exists(p):
            os.unlink(p)
    # ---- write: synth (the store path of `conceptwalk synth`) and JSONL import
    syn = synthetic.generate(n_concepts, seed=0)
    t = time.perf_counter()
    with KnowledgeBase.create(db) as kb:
        kb.SNAPSHOT_SAVE_EVERY = 1 << 60
        syn.write_to(kb)  # what `conceptwalk synth` does after generating
        t_store = time.perf_counter() - t
        nodes, edges = kb.stats()["nodes"], kb.stats()["edges"]
    if os.path.exists(db + ".snapshot"):
        os.unlink(db + ".snapshot")
    res.update(
        nodes=nodes,
        edges=edges,
        file_mb=os.path.getsize(db) / 2**20,
        synth_store_s=t_store,
        synth_edges_per_s=edges / t_store,
    )
    jl = os.path.join(workdir, f"kb{n_concepts}.jsonl")
    with open(jl, "w") as fh:
        for row in syn.node_rows():
            fh.write(json.dumps(row) + "\n")
        for row in syn.edge_rows():
            fh.write(json.dumps(row) + "\n")
    imp = os.path.join(workdir, f"imp{n_concepts}.sqlite")
    t = time.perf_counter()
    with KnowledgeBase.create(imp) as kb:
        summary = import_jsonl(kb, jl)
    t_imp = time.perf_counter() - t
    res.update(
        import_s=t_imp,
        import_rows_per_s=(summary.nodes + summary.edges) / t_imp,
        import_edges_per_s=summary.edges / t_imp,
    )
    for p in (imp, imp + "-wal", imp + "-shm", imp + ".snapshot", jl):
        if os.path.exists(p):
            os.unlink(p)
    # ---- build from the store vs from_arrays on the same arrays
    with KnowledgeBase.open(db) as kb:
        kb.SNAPSHOT_SAVE_EVERY = 1 << 60
        builds, reads, arrays_times = [], [], []
        for _ in range(3):
            with kb.transaction():  # a read of one snapshot (no write happens)
                t = time.perf_counter()
                cols = read_columns(kb.conn)
                reads.append(time.perf_counter() - t)
                t = time.perf_counter()
                cols.build()
                arrays_times.append(time.perf_counter() - t)
            builds.append(reads[-1] + arrays_times[-1])
        t = time.perf_counter()
        syn.to_linkgraph()
        t_lists = time.perf_counter() - t
        res.update(
            graph_from_store_s=_median(builds),
            read_columns_s=_median(reads),
            from_arrays_encoded_s=_median(arrays_times),
            from_arrays_lists_s=t_lists,
        )
        # kb.graph() itself: full build + save of the snapshot file
        t = time.perf_counter()
        g = kb.graph()
        res["kb_graph_first_s"] = time.perf_counter() - t
        res["snapshot_mb"] = os.path.getsize(db + ".snapshot") / 2**20
        res["core_mb"] = g.core.memory_bytes / 2**20
        seed = next(x for x in g.ids if x.startswith("concept/"))
        # ---- read after a write, sustained turns
        anchors = g.ids[:: max(1, len(g.ids) // (turns + 1))]
        lat_w, lat_r, lat_q = [], [], []
        t_all = time.perf_counter()
        for i in range(turns):
            t0 = time.perf_counter()
            nid = f"memory/bench-{os.getpid()}-{i:05d}"
            with kb.transaction():
                kb.add_nodes([{"id": nid, "type": "MEMORY", "title": f"turn {i}", "scopes": ["team-1"]}])
                kb.add_edges(
                    [
                        {"src": nid, "dst": anchors[i % len(anchors)], "type": "MENTIONS"},
                        {"src": nid, "dst": seed, "type": "ABOUT"},
                    ]
                )
            t1 = time.perf_counter()
            g = kb.graph()
            t2 = time.perf_counter()
            g.personalized_pagerank({nid: 1.0}, k=10)
            t3 = time.perf_counter()
            lat_w.append(t1 - t0)
            lat_r.append(t2 - t1)
            lat_q.append(t3 - t2)
        wall = time.perf_counter() - t_all
        res.update(
            write_ms=_median(lat_w) * 1e3,
            read_after_write_ms=_median(lat_r) * 1e3,
            query_ms=_median(lat_q) * 1e3,
            turns_per_s=turns / wall,
            read_after_write_vs_build=_median(lat_r) / res["graph_from_store_s"],
        )
        # the embeddings write that cannot change the graph
        t = time.perf_counter()
        kb.set_embeddings("bench", [seed], np.ones((1, 8)))
        g2 = kb.graph()
        res["read_after_embeddings_ms"] = (time.perf_counter() - t) * 1e3
        res["graph_kept_after_embeddings"] = g2 is g
    # ---- fresh process: first answer with the snapshot file and without
    res["fresh_with_snapshot"] = fresh_process(db, seed, 3, True)
    res["fresh_without_snapshot"] = fresh_process(db, seed, 1, False)
    res["peak_rss_mb_this_process"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return res


def fresh_only(paths: list[str], repeat: int) -> int:
    """Fresh-process first answers on existing KB files (with their snapshot files)."""
    from conceptwalk.kb.store import KnowledgeBase

    for db in paths:
        with KnowledgeBase.open(db) as kb:
            g = kb.graph()
            seed = next(x for x in g.ids if x.startswith("concept/"))
            n, m = g.num_nodes, g.num_edges
        w = fresh_process(db, seed, repeat, True)
        print(
            f"{db}: {n:,} nodes {m:,} edges: first answer {w['seconds']:.2f} s, peak RSS {w['peak_rss_mb']:.0f} MB "
            "(with the snapshot file)",
            flush=True,
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--concepts", type=int, nargs="+", default=[1000, 20000])
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--workdir", help="where the KB files go (default: a temporary directory)")
    ap.add_argument(
        "--fresh-only", nargs="+", metavar="KB", help="only time fresh-process first answers on these existing KB files"
    )
    args = ap.parse_args()
    if args.fresh_only:
        return fresh_only(args.fresh_only, 5)
    workdir = args.workdir or tempfile.mkdtemp(prefix="cw-bench-snapshot-")
    rows = []
    try:
        for n in args.concepts:
            r = measure(n, workdir, args.turns)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(
        "\n| concepts (nodes, edges) | KB file | kb.graph() from store | from_arrays (encoded / lists) "
        "| fresh process first answer (snapshot / none) | its peak RSS (snapshot / none) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        fw, fn = r["fresh_with_snapshot"], r["fresh_without_snapshot"]
        print(
            f"| {r['concepts'] // 1000}k ({r['nodes']:,}, {r['edges']:,}) | {r['file_mb']:.1f} MB "
            f"| {r['graph_from_store_s']:.3f} s | {r['from_arrays_encoded_s']:.3f} / {r['from_arrays_lists_s']:.3f} s "
            f"| {fw['seconds']:.2f} / {fn['seconds']:.2f} s | {fw['peak_rss_mb']:.0f} / {fn['peak_rss_mb']:.0f} MB |"
        )
    print(
        "\n| concepts | read after write (1 node + 2 edges) | as share of a full build | write | "
        "query | turns/s (write+read+query) | import rows/s | synth store edges/s | snapshot file |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['concepts'] // 1000}k | {r['read_after_write_ms']:.1f} ms | {100 * r['read_after_write_vs_build']:.1f}% "
            f"| {r['write_ms']:.2f} ms | {r['query_ms']:.2f} ms | {r['turns_per_s']:.0f} | "
            f"{r['import_rows_per_s']:,.0f} | {r['synth_edges_per_s']:,.0f} | {r['snapshot_mb']:.1f} MB |"
        )
    print()
    for r in rows:
        ratio = r["graph_from_store_s"] / r["from_arrays_encoded_s"]
        ratio_l = r["graph_from_store_s"] / r["from_arrays_lists_s"]
        print(
            f"{r['concepts']}: kb.graph() from store = {ratio:.1f}x from_arrays(encoded), "
            f"{ratio_l:.1f}x from_arrays(lists) (target <= 5x: {'met' if ratio <= 5 else 'NOT met'} / "
            f"{'met' if ratio_l <= 5 else 'NOT met'}); read after write {100 * r['read_after_write_vs_build']:.1f}% "
            f"of a build (target <= 2%: {'met' if r['read_after_write_vs_build'] <= 0.02 else 'NOT met'}); "
            f"{r['turns_per_s']:.0f} turns/s (target >= 100: {'met' if r['turns_per_s'] >= 100 else 'NOT met'}); "
            f"graph kept after set_embeddings: {r['graph_kept_after_embeddings']}"
        )
    if len(rows) >= 2:
        small, big = rows[0], rows[-1]
        tr = big["fresh_with_snapshot"]["seconds"] / small["fresh_with_snapshot"]["seconds"]
        mr = big["fresh_with_snapshot"]["peak_rss_mb"] / small["fresh_with_snapshot"]["peak_rss_mb"]
        print(
            f"fresh first answer {big['concepts']} vs {small['concepts']} concepts: {tr:.1f}x time "
            f"(target <= 3x: {'met' if tr <= 3 else 'NOT met'}), {mr:.1f}x peak RSS "
            f"(target <= 6x: {'met' if mr <= 6 else 'NOT met'})"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
