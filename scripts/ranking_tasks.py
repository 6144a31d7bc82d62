"""Ranking on real tasks (issue 19): "several concepts -> the item they describe", with the
baselines count-of-direct-links, PPR and coverage in one table; the hub test; the cost of
rank="coverage" against rank="ppr".

    python scripts/ranking_tasks.py [--queries 300] [--cost]

Tasks (nothing downloaded; datasets from conceptwalk.kb.datasets, skipped when absent):

- cwe: a CWE category with >= 4 weakness members; the query is 3-5 of its members plus one
  weakness that is not a member; rank the CATEGORY nodes; hit if the category is in the top 1 / 10.
- umls: a (relation, target) pair of pykeen's UMLS with >= 4 heads; the query is 3-5 of those heads
  plus one semantic type that is not a head; rank every other node; hit if the target is top 1 / 10.

Baselines: count = how many of the query's concepts the item is directly linked to (ties by id);
ppr = graph_context's default; coverage@h = rank="coverage", max_hops=h.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from typing import Any

from conceptwalk import Caller, LinkGraph, graph_context
from conceptwalk.kb import datasets

ALL = Caller.all_access()


def cwe_queries(ds: datasets.Dataset, n: int, rng: random.Random) -> tuple[list[tuple[list[str], str]], list[str]]:
    types = {nd["id"]: nd["type"] for nd in ds.nodes}
    members: dict[str, set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["type"] == "HasMember" and types.get(e["src"]) == "CATEGORY" and types.get(e["dst"]) == "WEAKNESS":
            members[e["src"]].add(e["dst"])
    weak = sorted(i for i, t in types.items() if t == "WEAKNESS")
    cats = sorted(c for c, m in members.items() if len(m) >= 4)
    out = []
    for _ in range(n):
        c = rng.choice(cats)
        q = rng.sample(sorted(members[c]), rng.randint(3, min(5, len(members[c]))))
        other = rng.choice(weak)
        while other in members[c]:
            other = rng.choice(weak)
        out.append((sorted(set(q + [other])), c))
    return out, ["CATEGORY"]


def umls_queries(ds: datasets.Dataset, n: int, rng: random.Random) -> tuple[list[tuple[list[str], str]], None]:
    heads: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["src"] != e["dst"]:
            heads[(e["type"], e["dst"])].add(e["src"])
    ids = sorted(nd["id"] for nd in ds.nodes)
    keys = sorted(k for k, v in heads.items() if len(v) >= 4)
    out = []
    for _ in range(n):
        r, t = rng.choice(keys)
        q = rng.sample(sorted(heads[(r, t)] - {t}), rng.randint(3, min(5, len(heads[(r, t)] - {t}))))
        other = rng.choice(ids)
        while other in heads[(r, t)] or other == t:
            other = rng.choice(ids)
        out.append((sorted(set(q + [other])), t))
    return out, None


def count_rank(
    g: LinkGraph, adj: dict[str, set[str]], q: list[str], types: set[str] | None, type_of: dict[str, str]
) -> list[str]:
    cnt: dict[str, int] = defaultdict(int)
    for c in q:
        for v in adj[c]:
            if v not in q and (types is None or type_of[v] in types):
                cnt[v] += 1
    return sorted(cnt, key=lambda v: (-cnt[v], v))


def evaluate(name: str, ds: datasets.Dataset, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    qs, types = (cwe_queries if name == "cwe" else umls_queries)(ds, n, rng)
    g = ds.to_linkgraph()
    adj: dict[str, set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["src"] != e["dst"]:
            adj[e["src"]].add(e["dst"])
            adj[e["dst"]].add(e["src"])
    type_of = {nd["id"]: nd["type"] for nd in ds.nodes}
    tset = set(types) if types else None
    methods: dict[str, Any] = {
        "count": lambda q: count_rank(g, adj, q, tset, type_of)[:10],
        "ppr": lambda q: [r.id for r in graph_context(g, concepts=q, k=10, caller=ALL, node_types=types).results],
        "coverage@1": lambda q: [
            r.id
            for r in graph_context(
                g, concepts=q, k=10, caller=ALL, node_types=types, rank="coverage", max_hops=1
            ).results
        ],
        "coverage@2": lambda q: [
            r.id
            for r in graph_context(
                g, concepts=q, k=10, caller=ALL, node_types=types, rank="coverage", max_hops=2
            ).results
        ],
    }
    rows = []
    for m, fn in methods.items():
        h1 = h10 = 0
        for q, target in qs:
            top = fn(q)
            h1 += bool(top) and top[0] == target
            h10 += target in top
        rows.append({"dataset": name, "method": m, "queries": len(qs), "hit@1": h1 / len(qs), "hit@10": h10 / len(qs)})
    return rows


def _time(fn: Any, reps: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps * 1e3


def cost(reps: int = 20) -> list[dict[str, Any]]:
    from conceptwalk.kb.synthetic import generate

    syn = generate(20_000, seed=0)  # ~50k nodes (1.5 other nodes per concept)
    g = syn.to_linkgraph()
    rng = random.Random(1)
    ids = g.ids
    qsets = [sorted(set(rng.sample(list(ids), 4))) for _ in range(reps)]
    rows = []
    for label, graph, queries in [(f"synthetic {g.num_nodes} nodes, 4 seeds", g, qsets)]:
        it = iter(range(10**9))
        ppr = _time(lambda: graph_context(graph, concepts=queries[next(it) % len(queries)], k=10, caller=ALL), reps)
        it = iter(range(10**9))
        cov = _time(
            lambda: graph_context(graph, concepts=queries[next(it) % len(queries)], k=10, caller=ALL, rank="coverage"),
            reps,
        )
        rows.append({"case": label, "ppr_ms": ppr, "coverage_ms": cov, "ratio": cov / ppr})
    for n in (8_000, 100_000):
        hub = LinkGraph.from_edges(
            [("h", f"l{i:06d}") for i in range(n)] + [(f"l{i:06d}", f"c{i % 7}") for i in range(0, n, 3)]
        )
        ppr = _time(lambda: graph_context(hub, concepts=["h"], k=10, caller=ALL), 3)
        cov = _time(lambda: graph_context(hub, concepts=["h"], k=10, caller=ALL, rank="coverage"), 3)
        r = graph_context(hub, concepts=["h"], k=10, caller=ALL)
        c = graph_context(hub, concepts=["h"], k=10, caller=ALL, rank="coverage")
        rows.append(
            {
                "case": f"hub seed, {n} neighbours",
                "ppr_ms": ppr,
                "coverage_ms": cov,
                "ratio": cov / ppr,
                "ppr_results": len(r.results),
                "eps_reached": r.eps_reached,
                "pushes": r.pushes,
                "coverage_truncated": c.truncated,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cost", action="store_true", help="also time coverage against ppr")
    a = ap.parse_args()
    avail = datasets.available()
    print(f"{'dataset':8} {'method':11} {'queries':>7} {'hit@1':>6} {'hit@10':>6}")
    for name in ("cwe", "umls"):
        if not avail.get(name):
            print(f"{name:8} (not installed: skipped)")
            continue
        for r in evaluate(name, datasets.DATASETS[name](), a.queries, a.seed):
            print(f"{r['dataset']:8} {r['method']:11} {r['queries']:>7} {r['hit@1']:>6.3f} {r['hit@10']:>6.3f}")
    if a.cost:
        for r in cost():
            extra = {k: v for k, v in r.items() if k not in ("case", "ppr_ms", "coverage_ms", "ratio")}
            print(
                f"{r['case']:40} ppr {r['ppr_ms']:8.2f} ms  coverage {r['coverage_ms']:8.2f} ms  "
                f"ratio {r['ratio']:5.2f}  {extra}"
            )


if __name__ == "__main__":
    main()
