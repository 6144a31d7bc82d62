"""Per-call medians of the three tools on the synthetic KB (warm), next to the same work done
with networkx in the same run, round-robin. Prints a markdown table.

    python scripts/tools_vs_networkx.py [--concepts 1000] [--queries 200] [--rounds 5]

The networkx side does the equivalent work: graph_context = nx.pagerank with the same
personalization (restart = 1 - alpha) + the top 20 non-seed nodes + multi-source BFS hop counts;
link_suggest = nx.resource_allocation_index over the 2-hop candidates with >= 2 shared
neighbours + the top 10; graph_path = nx.bidirectional_shortest_path (any shortest path — ours
also guarantees the lexicographically smallest one and reports edge types).
"""

from __future__ import annotations

import argparse
import statistics
import time

import networkx as nx
import numpy as np

from conceptwalk import Caller, graph_context, graph_path, link_suggest, synthetic


def nx_context(G: nx.Graph, seeds: list[str], k: int = 20) -> list[tuple[str, float, int]]:
    pr = nx.pagerank(G, alpha=0.75, personalization={s: 1.0 for s in seeds}, tol=1e-6)
    top = [v for v in sorted(pr, key=lambda v: (-pr[v], v)) if v not in set(seeds)][:k]
    dist = nx.multi_source_dijkstra_path_length(G, set(seeds))
    return [(v, pr[v], int(dist[v])) for v in top]


def nx_suggest(G: nx.Graph, a: str, k: int = 10) -> list[tuple[str, float]]:
    nbrs = set(G[a])
    cand = {c for z in nbrs for c in G[z]} - nbrs - {a}
    cand = [c for c in cand if len(nbrs & set(G[c])) >= 2]
    scored = sorted(
        ((v, s) for _, v, s in nx.resource_allocation_index(G, [(a, c) for c in cand])), key=lambda x: (-x[1], x[0])
    )
    return scored[:k]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concepts", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    syn = synthetic.generate(args.concepts, seed=0)
    g = syn.to_linkgraph()
    G = nx.Graph()
    G.add_nodes_from(g.ids)
    G.add_edges_from((g.ids[a], g.ids[b]) for a, b in zip(g.edge_src.tolist(), g.edge_dst.tolist()))
    concepts = [i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT"]
    rng = np.random.default_rng(1)
    seeds = [list(rng.choice(concepts, 5, replace=False)) for _ in range(args.queries)]
    pairs = [tuple(rng.choice(concepts, 2, replace=False)) for _ in range(args.queries)]
    who = Caller.all_access()
    work = {
        "graph_context (5 seeds, top 20, hops)": (
            lambda i: graph_context(g, concepts=seeds[i], k=20, caller=who),
            lambda i: nx_context(G, seeds[i]),
        ),
        "link_suggest (k=10)": (
            lambda i: link_suggest(g, seeds[i][0], k=10, caller=who),
            lambda i: nx_suggest(G, seeds[i][0]),
        ),
        "graph_path": (
            lambda i: graph_path(g, pairs[i][0], pairs[i][1], caller=who),
            lambda i: (
                nx.bidirectional_shortest_path(G, pairs[i][0], pairs[i][1]) if nx.has_path(G, *pairs[i]) else None
            ),
        ),
    }
    # correctness first: same suggestions, same path lengths, same top-20 up to push error
    for i in range(20):
        ours = link_suggest(g, seeds[i][0], k=10, caller=who)
        assert [s.id for s in ours.suggestions] == [v for v, _ in nx_suggest(G, seeds[i][0])]
        p = graph_path(g, pairs[i][0], pairs[i][1], caller=who)
        ref = work["graph_path"][1](i)
        assert (p.length if p.found else None) == (None if ref is None else len(ref) - 1)
    results: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in work}
    n_nx = {"graph_context (5 seeds, top 20, hops)": 20}
    for _ in range(args.rounds):
        for name, (ours, theirs) in work.items():
            nq = min(args.queries, n_nx.get(name, args.queries))
            for i in range(args.queries):
                t = time.perf_counter()
                ours(i)
                results[name][0].append(time.perf_counter() - t)
            for i in range(nq):
                t = time.perf_counter()
                theirs(i)
                results[name][1].append(time.perf_counter() - t)
    print(
        f"synthetic KB, {args.concepts} concepts: {g.num_nodes:,} nodes, {g.num_edges:,} edges; "
        f"{args.queries} rotating queries x {args.rounds} rounds, medians"
    )
    print()
    print("| tool | conceptwalk | networkx | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, (a, b) in results.items():
        ma, mb = statistics.median(a) * 1e6, statistics.median(b) * 1e6
        print(f"| {name} | {ma:,.1f} µs | {mb:,.1f} µs | {mb / ma:,.0f}x |")


if __name__ == "__main__":
    main()
