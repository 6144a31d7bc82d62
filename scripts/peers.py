#!/usr/bin/env python
"""Peers side by side: personalized PageRank per query on the synthetic KB, same graphs, same
seed sets, round-robin, for conceptwalk and every peer that is installed.

    python scripts/peers.py                      # 1k, 10k, 100k; prints the markdown table
    python scripts/peers.py --sizes 1k,10k,100k,1M --plot docs/perf_scaling.png --out docs/peers.md

Implementations (each on the undirected projection, restart 0.25 = damping 0.75, 5 seeds of
weight 1 per query, rotating through the same seed sets):

- conceptwalk ``LinkGraph.personalized_pagerank`` (forward push, eps 1e-4) and ``graph_context``
  (top 20 with hops and via, end to end);
- pure-Python forward push, eps 1e-4 (``conceptwalk.bench.harness.py_push``);
- networkit ``scd.ApproximatePageRank`` (C++ push, eps 1e-4);
- igraph ``personalized_pagerank`` (exact, PRPACK);
- scikit-network ``PageRank(solver="push")`` with the seeds as personalization (skipped past 10k);
- networkx ``pagerank(personalization=...)`` (power iteration; skipped past 10k: seconds per query).

Each peer's top-20 is compared with exact PPR (power iteration) on the first query and reported
as an overlap, so a fast but different answer shows up in the table. Optional dependencies:
``pip install conceptwalk[bench]`` (networkx, igraph, scikit-network, networkit, matplotlib).
Nothing is downloaded: every graph is generated.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from conceptwalk.bench import harness as _perf
from conceptwalk import Caller, graph_context

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}
RESTART = 0.25
EPS = 1e-4


def _top(scores: dict[int, float] | np.ndarray[Any, Any], k: int = 20) -> list[int]:
    if isinstance(scores, dict):
        return [u for u, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]]
    order = np.lexsort((np.arange(scores.shape[0]), -scores))
    return order[:k].tolist()


def build_peers(
    w: _perf.Workload, only: set[str] | None
) -> dict[str, tuple[Callable[[int], Any], Callable[[Any], list[int]]]]:
    """name -> (query i -> result, result -> top-20 node indices)."""
    g = w.graph
    core = g.core
    n = g.num_nodes
    indptr = np.asarray(core.indptr)
    indices = np.asarray(core.indices)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    up = rows < indices
    eu, ev = rows[up], indices[up]
    seeds = [sorted(w.seed_idx(i)) for i in range(len(w.seed_sets))]
    everyone = Caller.all_access()
    peers: dict[str, tuple[Callable[[int], Any], Callable[[Any], list[int]]]] = {}

    def want(name: str) -> bool:
        return only is None or name in only

    if want("conceptwalk"):
        maps = [w.seed_map(i) for i in range(len(w.seed_sets))]
        peers["conceptwalk"] = (lambda i: g.personalized_pagerank(maps[i], eps=EPS), lambda r: r.indices[:20].tolist())
    if want("conceptwalk graph_context"):
        idx = g.id_index
        peers["conceptwalk graph_context"] = (
            lambda i: graph_context(g, concepts=w.seed_sets[i], k=20, caller=everyone, eps=EPS),
            lambda r: [idx[x.id] for x in r.results],
        )
    if want("pure-Python push"):
        adj = w.adj
        peers["pure-Python push"] = (
            lambda i: _perf.py_push(adj, dict.fromkeys(seeds[i], 1.0), RESTART, EPS),
            lambda r: _top(r),
        )
    if want("networkit"):
        try:
            import networkit as nk

            nk.engineering.setNumberOfThreads(1)
            G = nk.Graph(n, weighted=False, directed=False)
            G.addEdges((eu.astype(np.uint64), ev.astype(np.uint64)))
            apr = nk.scd.ApproximatePageRank(G, RESTART, EPS)
            peers["networkit"] = (lambda i: apr.run(set(seeds[i])), lambda r: _top(dict(r)))
        except ImportError:
            pass
    if want("igraph"):
        try:
            import igraph as ig

            G2 = ig.Graph(n=n, edges=np.column_stack([eu, ev]).tolist(), directed=False)
            peers["igraph"] = (
                lambda i: np.asarray(
                    G2.personalized_pagerank(reset_vertices=seeds[i], damping=1 - RESTART, directed=False)
                ),
                _top,
            )
        except ImportError:
            pass
    if want("scikit-network") and n <= 30_000:  # its push takes seconds per query past that
        try:
            import scipy.sparse as sp
            from sknetwork.ranking import PageRank

            A = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
            pr = PageRank(damping_factor=1 - RESTART, solver="push", tol=EPS)
            peers["scikit-network"] = (lambda i: pr.fit_predict(A, weights=dict.fromkeys(seeds[i], 1.0)), _top)
        except ImportError:
            pass
    if want("networkx") and n <= 30_000:
        try:
            import networkx as nx

            G3 = nx.Graph()
            G3.add_nodes_from(range(n))
            G3.add_edges_from(zip(eu.tolist(), ev.tolist()))
            peers["networkx"] = (
                lambda i: nx.pagerank(G3, alpha=1 - RESTART, personalization=dict.fromkeys(seeds[i], 1.0)),
                lambda r: _top(r),
            )
        except ImportError:
            pass
    return peers


def measure(size: str, *, rounds: int, budget_s: float, only: set[str] | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    w = _perf.load_workload(SIZES[size], seed=0, n_queries=100)
    print(
        f"[{size}] {w.graph.num_nodes} nodes, {w.graph.core.num_entries} adjacency entries "
        f"(generated in {time.perf_counter() - t0:.1f} s)",
        file=sys.stderr,
    )
    peers = build_peers(w, only)
    exact = _perf.exact_ppr(np.asarray(w.graph.core.indptr), np.asarray(w.graph.core.indices), w.seed_idx(0), RESTART)
    exact_top = set(_top(exact))
    overlap, nq = {}, {}
    for name, (run, top) in peers.items():
        t1 = time.perf_counter()
        res = run(0)
        one = time.perf_counter() - t1
        overlap[name] = len(exact_top & set(top(res))) / 20
        # as many rotating queries as the time budget allows (at least 2, at most 100)
        nq[name] = int(min(100, max(2, budget_s / rounds / max(one, 1e-6))))
    q = min(nq.values()) if nq else 0
    # round-robin: every implementation runs the same q queries per round, rounds interleaved
    med = _perf.round_robin(
        {name: (lambda run: lambda i: run(i))(run) for name, (run, _) in peers.items()}, q, rounds=rounds
    )
    return {
        "size": size,
        "nodes": w.graph.num_nodes,
        "entries": int(w.graph.core.num_entries),
        "queries": q,
        "median_s": med,
        "top20_overlap": overlap,
    }


#: The page title and preamble --out writes above the table (docs/peers.md).
PEERS_HEADING = (
    "# Peers table\n\n"
    "Median per-query times of conceptwalk and its peers on the same graphs, written by "
    "`python scripts/peers.py --out docs/peers.md` (see docs/performance.md).\n\n"
)


def table(results: list[dict[str, Any]]) -> str:
    names: list[str] = []
    for r in results:
        for n in r["median_s"]:
            if n not in names:
                names.append(n)
    out = ["| KB | nodes | " + " | ".join(names) + " |", "| --- | ---: | " + " | ".join("---:" for _ in names) + " |"]
    for r in results:
        ours = r["median_s"].get("conceptwalk")
        cells = []
        for n in names:
            s = r["median_s"].get(n)
            if s is None:
                cells.append("-")
                continue
            ratio = "" if ours is None or n == "conceptwalk" else f" ({s / ours:.0f}x)"
            cells.append(f"{_perf._fmt_s(s)}{ratio}")
        out.append(f"| {r['size']} | {r['nodes']:,} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(
        "Median per-query time, rotating 5-seed sets; in parentheses the time relative to "
        "conceptwalk's `personalized_pagerank` (higher = conceptwalk faster)."
    )
    out.append("")
    out.append("| KB | " + " | ".join(names) + " |")
    out.append("| --- | " + " | ".join("---:" for _ in names) + " |")
    for r in results:
        out.append(
            f"| {r['size']} top-20 overlap with exact PPR | "
            + " | ".join(f"{r['top20_overlap'][n]:.2f}" if n in r["top20_overlap"] else "-" for n in names)
            + " |"
        )
    return "\n".join(out)


def plot(results: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names: list[str] = []
    for r in results:
        names += [n for n in r["median_s"] if n not in names]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for n in names:
        xs = [r["nodes"] for r in results if n in r["median_s"]]
        ys = [r["median_s"][n] * 1e3 for r in results if n in r["median_s"]]
        ax.plot(xs, ys, marker="o", label=n, linewidth=2.5 if n.startswith("conceptwalk") else 1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("graph size (nodes)")
    ax.set_ylabel("median time per query (ms)")
    ax.set_title("Personalized PageRank per query (5 seeds, restart 0.25, eps 1e-4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1k,10k,100k", help="comma-separated: 1k,10k,100k,1M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--budget", type=float, default=20.0, help="seconds per implementation per size (sizes the query count)"
    )
    ap.add_argument("--only", help="comma-separated implementation names")
    ap.add_argument("--plot", help="write the PNG plot here (matplotlib)")
    ap.add_argument("--out", help="also write the markdown table here")
    ap.add_argument("--json", help="write raw results as JSON here")
    args = ap.parse_args(argv)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    bad = [s for s in sizes if s not in SIZES]
    if bad:
        ap.error(f"unknown sizes {bad}; use {list(SIZES)}")
    only = set(x.strip() for x in args.only.split(",")) if args.only else None
    results = [measure(s, rounds=args.rounds, budget_s=args.budget, only=only) for s in sizes]
    md = table(results)
    print(md)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(PEERS_HEADING + md + "\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
