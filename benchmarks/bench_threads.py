"""GIL release, measured: do two Python threads run two queries in about the time of one?

Runs the same PPR queries (LinkGraph.personalized_pagerank, the core releases the GIL while it
pushes) from 1 thread and from 2 threads, after a warm-up, and prints the throughput of each and
the ratio. Also times one query alone against two queries started together on two threads.
Nothing is asserted (a shared machine's numbers are noisy); run it on an idle machine:

    python benchmarks/bench_threads.py [--concepts 20000] [--queries 400] [--eps 1e-6]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def main(argv: list[str] | None = None) -> dict[str, float]:
    from conceptwalk.kb.synthetic import generate

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--concepts", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    g = generate(args.concepts, seed=1).to_linkgraph()
    ids = g.ids
    seeds = [{ids[(i * 7919) % len(ids)]: 1.0} for i in range(args.queries)]

    def run(chunk: list[dict[str, float]]) -> int:
        for s in chunk:
            g.personalized_pagerank(s, eps=args.eps, k=20)
        return len(chunk)

    run(seeds[:20])  # warm-up: thread-local workspaces, caches

    def throughput(threads: int) -> float:
        best = []
        for _ in range(args.repeats):
            chunks = [seeds[t::threads] for t in range(threads)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(threads) as ex:
                n = sum(ex.map(run, chunks))
            best.append(n / (time.perf_counter() - t0))
        return max(best)

    q1 = throughput(1)
    q2 = throughput(2)

    # One heavy query alone vs two started together.
    heavy = [{ids[i]: 1.0} for i in (11, 4242 % len(ids))]
    eps_heavy = args.eps / 10

    def one(s: dict[str, float]) -> None:
        g.personalized_pagerank(s, eps=eps_heavy, k=20)

    alone, pair = [], []
    for _ in range(args.repeats + 2):
        t0 = time.perf_counter()
        one(heavy[0])
        alone.append(time.perf_counter() - t0)
        start = threading.Barrier(2)

        def go(s: dict[str, float]) -> None:
            start.wait()
            one(s)

        ts = [threading.Thread(target=go, args=(s,)) for s in heavy]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        pair.append(time.perf_counter() - t0)
    res = {
        "graph_nodes": g.num_nodes,
        "graph_pairs": g.num_neighbour_pairs,
        "qps_1_thread": q1,
        "qps_2_threads": q2,
        "speedup": q2 / q1,
        "one_query_ms": statistics.median(alone) * 1e3,
        "two_queries_2_threads_ms": statistics.median(pair) * 1e3,
    }
    print(
        f"graph: {res['graph_nodes']} nodes, {res['graph_pairs']} neighbour pairs; "
        f"{args.queries} PPR queries at eps={args.eps:g}"
    )
    print(f"1 thread : {q1:8.1f} queries/s")
    print(f"2 threads: {q2:8.1f} queries/s   ({q2 / q1:.2f}x)")
    print(
        f"one heavy query alone: {res['one_query_ms']:.1f} ms; two on two threads: "
        f"{res['two_queries_2_threads_ms']:.1f} ms ({res['two_queries_2_threads_ms'] / res['one_query_ms']:.2f}x the time of one)"
    )
    return res


if __name__ == "__main__":
    main()
