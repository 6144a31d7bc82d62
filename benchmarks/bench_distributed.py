"""Dask throughput, measured: conceptwalk.serve.distributed.graph_context_batch on a LocalCluster with 1 and
with 2 worker processes (one thread each), same queries, after shipping the graph and a warm-up.
Prints queries/s for each and the ratio; nothing is asserted (a shared machine is noisy).

    python benchmarks/bench_distributed.py [--concepts 5000] [--queries 3000] [--eps 1e-5]
"""

from __future__ import annotations

import argparse
import time


def main(argv: list[str] | None = None) -> dict[str, float]:
    from dask.distributed import Client, LocalCluster

    from conceptwalk import Caller, graph_context
    from conceptwalk.serve import distributed as cwd
    from conceptwalk.kb.synthetic import generate

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--concepts", type=int, default=5_000)
    ap.add_argument("--queries", type=int, default=3_000)
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)

    g = generate(args.concepts, seed=4).to_linkgraph()
    ids = g.ids
    qs = [{"concepts": [ids[(i * 7919) % len(ids)]]} for i in range(args.queries)]
    caller = Caller.all_access()
    t0 = time.perf_counter()
    local = [graph_context(g, concepts=q["concepts"], caller=caller, k=20, eps=args.eps) for q in qs]
    in_process = args.queries / (time.perf_counter() - t0)
    res: dict[str, float] = {"in_process_qps": in_process}
    print(f"graph: {g.num_nodes} nodes; {args.queries} graph_context queries at eps={args.eps:g}")
    print(f"in-process, 1 thread: {in_process:8.1f} queries/s")
    for workers in (1, 2):
        with (
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
            Client(cluster) as client,
        ):
            shipped = cwd.ship(client, g)
            cwd.graph_context_batch(client, shipped, qs[:50], caller=caller, k=20, eps=args.eps)  # warm-up
            best = 0.0
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                out = cwd.graph_context_batch(
                    client, shipped, qs, caller=caller, k=20, eps=args.eps, partitions=8 * workers
                )
                best = max(best, args.queries / (time.perf_counter() - t0))
            assert [r.results for r in out] == [r.results for r in local]
            res[f"dask_{workers}_workers_qps"] = best
            print(f"dask, {workers} worker{'s' if workers > 1 else ' '}: {best:8.1f} queries/s")
    res["speedup_2_vs_1"] = res["dask_2_workers_qps"] / res["dask_1_workers_qps"]
    print(f"2 workers vs 1: {res['speedup_2_vs_1']:.2f}x")
    return res


if __name__ == "__main__":
    main()
