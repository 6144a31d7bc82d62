"""Issue 18's table for one or more builds of conceptwalk, measured in one run (before -> after).

    python benchmarks/bench_versions.py --kb KB20K.db [--kb KB200K.db] --python OLD/bin/python \\
        --python NEW/bin/python [--repeats 3] [--queries 60] [--rounds 5] [--json OUT.json]

Each ``--python`` is an interpreter with a build of conceptwalk installed (a venv of an older
commit, and this tree's). The builds are measured in turn, ``--repeats`` times over (A B A B ...),
each time in a fresh process, so a busy machine slows every build alike; the table gives, per row
and build, the median over the repeats of each repeat's ratio (a ratio is taken inside one
process, between two cases interleaved query by query: ``conceptwalk.bench.harness.interleaved``).

Rows (all public API, so any build since the knowledge base's read path can be measured):

* ``question / concepts``: ``graph_context(kb, question)`` against ``graph_context(kb,
  concepts=<the seeds that question's search gave>)``, all-access and public callers; each case
  is shifted to its own query, so no case runs on caches the one before warmed for its query;
* ``wrapped / flat``: ``ConceptAnchoredRetriever(builtin_flat_search(kb), kb).query(q, 10,
  concept_walk=True)`` against the flat search alone (all-access);
* ``--kb real:NAME``: the same two rows on a real knowledge graph of ``realdata.py`` (CWE, EDAM,
  UMLS, GeoNames), which each build writes to a store file of its own; the queries are the
  graph's held-out alternate names and the walk's gates are the graph's;
* ``--kb fresh:KB.db``: a fresh read-only process of the build opens the store, builds
  ``ConceptAnchoredRetriever(builtin_flat_search(kb), kb)`` and answers the first wrapped query
  (seconds from importing conceptwalk to the answer, peak RSS ``ru_maxrss``); then 20 wrapped queries
  against the flat search alone on the same texts (medians);
* on the synthetic 1k KB (``conceptwalk.bench.harness.load_workload``): ``LinkGraph.resource_allocation``
  against the numpy RA, ``LinkGraph.shortest_path`` against the pure-Python bidirectional BFS,
  ``link_suggest`` / ``graph_path`` against the same references, and
  ``LinkGraph.personalized_pagerank`` on repeated seeds against the pure-Python push.

Measurements only: nothing is asserted on wall time. The results of the two sides of every ratio
are checked against each other or against the reference before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np


def _queries(kb: Any, n: int, seed: int = 0) -> list[str]:
    g = kb.graph()
    names = list(g.node_type_names)
    codes = np.asarray(g.node_type_codes)
    titles = [t for t in g.titles if t]
    if "CONCEPT" in names:
        c = names.index("CONCEPT")
        titles = [g.titles[i] for i in np.flatnonzero(codes == c).tolist() if g.titles[i]]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        a = titles[int(rng.integers(len(titles)))]
        b = titles[int(rng.integers(len(titles)))].split()
        out.append(f"{a} {b[int(rng.integers(len(b)))]}" if b else a)
    return out


def _real_kb(which: str, tmp: str, nq: int) -> tuple[Any, str, list[str], Any]:
    """A real knowledge graph (``benchmarks/realdata.py``: ``cwe``, ``edam``, ``umls``,
    ``geonames``) written to a store file by the build measuring it, opened read-only; its
    queries (the held-out alternate names, seeded order) and the walk's gates for it."""
    import random

    import realdata

    from conceptwalk import KnowledgeBase
    from conceptwalk.wrap import WalkConfig

    ds = realdata.load(which)
    path = os.path.join(tmp, f"{ds.name}.db")
    w = KnowledgeBase.create(path)
    w.add_nodes(ds.nodes)
    w.add_edges(ds.edges)
    w.close()
    pairs = sorted(set(ds.pairs))
    random.Random(0).shuffle(pairs)
    qs = [a for a, _c in pairs[:nq]]
    concepts = sum(n.get("type") in set(ds.concept_types) for n in ds.nodes)
    config = WalkConfig(concept_node_types=ds.concept_types, expand_edge_types=ds.expand, admit_edge_types=ds.admit)
    return KnowledgeBase.open(path, read_only=True), f"{ds.name} ({concepts} concepts, real)", qs, config


def fresh_measure(path: str, nq: int = 20) -> dict[str, Any]:
    """In a fresh process: open ``path`` read-only, build the retriever over the built-in flat
    search and answer a first wrapped query (seconds, peak RSS); then ``nq`` wrapped queries and
    the flat search alone on the same texts, interleaved (medians)."""
    import resource
    import time

    t0 = time.perf_counter()
    from conceptwalk import Caller, KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    every = Caller.all_access()
    kb = KnowledgeBase.open(path, read_only=True)
    flat = builtin_flat_search(kb)
    wrap = ConceptAnchoredRetriever(flat, kb)
    qs = _queries(kb, nq + 1)
    wrap.query(qs[0], 10, concept_walk=True, caller=every)
    first = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    w, f = [], []
    for q in qs[1:]:
        t = time.perf_counter()
        wrap.query(q, 10, concept_walk=True, caller=every)
        w.append(time.perf_counter() - t)
        t = time.perf_counter()
        flat(q, 10, caller=every)
        f.append(time.perf_counter() - t)
    g = kb.graph()
    names = list(g.node_type_names)
    concepts = int(np.count_nonzero(np.asarray(g.node_type_codes) == names.index("CONCEPT")))
    return {
        "concepts": concepts,
        "seconds": first,
        "rss_mb": rss,
        "wrapped_ms": statistics.median(w) * 1e3,
        "flat_ms": statistics.median(f) * 1e3,
    }


def _fresh_rows(path: str) -> dict[str, Any]:
    """:func:`fresh_measure` in a new process of this interpreter, as two rows of the table."""
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--fresh-measure", path],
        capture_output=True,
        text=True,
        cwd="/",
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    name = f"{got['concepts'] // 1000}k concepts"
    return {
        f"fresh read-only process: retriever + first wrapped query, {name}": {
            "seconds": got["seconds"],
            "rss_mb": got["rss_mb"],
        },
        f"wrapped / flat after that (median of 20), {name}": {
            "ratio": got["wrapped_ms"] / got["flat_ms"],
            "a_ms": got["wrapped_ms"],
            "b_ms": got["flat_ms"],
        },
    }


def measure(kbs: list[str], nq: int, rounds: int) -> dict[str, Any]:
    """Every row for the conceptwalk this interpreter imports: name -> figures."""
    import conceptwalk
    from conceptwalk import Caller, KnowledgeBase, graph_context, graph_path, link_suggest
    from conceptwalk.bench import harness
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    out: dict[str, Any] = {"version": conceptwalk.__file__}
    every = Caller.all_access()
    tmp = tempfile.mkdtemp(prefix="bench-versions-")
    for path in kbs:
        if path.startswith("fresh:"):
            out.update(_fresh_rows(path[len("fresh:") :]))
            continue
        config = None
        if path.startswith("real:"):
            kb, name, qs, config = _real_kb(path[len("real:") :], tmp, nq)
        else:
            kb = KnowledgeBase.open(path, read_only=True)
            g = kb.graph()
            names = list(g.node_type_names)
            concepts = (
                int(np.count_nonzero(np.asarray(g.node_type_codes) == names.index("CONCEPT")))
                if "CONCEPT" in names
                else 0
            )
            name = f"{concepts // 1000}k concepts" if concepts else os.path.basename(path)  # the same across builds
            qs = _queries(kb, nq)
        n = len(qs)
        for who, caller in (("all-access", every), ("public", Caller.public())):
            seeds = [[s.id for s in graph_context(kb, q, caller=caller).seeds] for q in qs]
            t = harness.interleaved(
                {
                    "question": lambda i, c=caller: graph_context(kb, qs[i], caller=c),
                    "concepts": lambda i, c=caller, s=seeds: graph_context(kb, concepts=s[(i + 1) % n], caller=c),
                },
                n,
                rounds=rounds,
            )
            out[f"question / concepts, {who}, {name}"] = {
                "ratio": t["question"] / t["concepts"],
                "a_ms": t["question"] * 1e3,
                "b_ms": t["concepts"] * 1e3,
            }
        flat = builtin_flat_search(kb)
        wrap = ConceptAnchoredRetriever(flat, kb, config=config)
        for q in qs[:5]:
            got = wrap.query(q, 10, concept_walk=True, caller=every)
            assert got[: len(flat(q, 10, caller=every))] == flat(q, 10, caller=every)
        t = harness.interleaved(
            {
                "wrapped": lambda i: wrap.query(qs[i], 10, concept_walk=True, caller=every),
                "flat": lambda i: flat(qs[(i + 1) % n], 10, caller=every),
            },
            n,
            rounds=rounds,
        )
        out[f"wrapped / flat, {name}"] = {
            "ratio": t["wrapped"] / t["flat"],
            "a_ms": t["wrapped"] * 1e3,
            "b_ms": t["flat"] * 1e3,
        }
        kb.close()
    shutil.rmtree(tmp, ignore_errors=True)

    w = harness.load_workload(1000, seed=0, n_queries=200)
    g, adj = w.graph, w.adj
    indptr, indices = np.asarray(g.core.indptr), np.asarray(g.core.indices)
    n = min(100, len(w.concepts), len(w.pairs))
    for i in range(5):  # the sides agree before they are timed
        ref, _ = harness.numpy_ra(indptr, indices, g.id_index[w.concepts[i]], 10)
        assert [s.id for s in g.resource_allocation(w.concepts[i], k=10)] == [g.ids[j] for j in ref.tolist()]
        harness._check_ppr(g.personalized_pagerank(w.seed_map(i)), harness.py_push(adj, w.seed_idx(i)), adj, 1e-4)

    def ratio(key: str, ours: Any, ref: Any, count: int) -> None:
        t = harness.interleaved({"ours": ours, "ref": ref}, count, rounds=rounds)
        out[key] = {"ratio": t["ref"] / t["ours"], "a_ms": t["ours"] * 1e3, "b_ms": t["ref"] * 1e3}

    ra_ref = lambda i: harness.numpy_ra(indptr, indices, g.id_index[w.concepts[i]], 10)  # noqa: E731
    bfs_ref = lambda i: harness.py_bibfs(adj, g.id_index[w.pairs[i][0]], g.id_index[w.pairs[i][1]])  # noqa: E731
    ratio(
        "reference / LinkGraph.resource_allocation, 1k", lambda i: g.resource_allocation(w.concepts[i], k=10), ra_ref, n
    )
    ratio("reference / link_suggest, 1k", lambda i: link_suggest(g, w.concepts[i], k=10, caller=every), ra_ref, n)
    ratio("reference / LinkGraph.shortest_path, 1k", lambda i: g.shortest_path(*w.pairs[i]), bfs_ref, n)
    ratio("reference / graph_path, 1k", lambda i: graph_path(g, *w.pairs[i], caller=every), bfs_ref, n)
    s0, s0i = w.seed_map(0), w.seed_idx(0)
    ratio(
        "pure-Python push / personalized_pagerank repeated, 1k",
        lambda i: g.personalized_pagerank(s0),
        lambda i: harness.py_push(adj, s0i),
        20,
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--kb",
        action="append",
        default=[],
        help="a store to measure on, or real:NAME (cwe, edam, umls, geonames: realdata.py's graph, written to a "
        "store by each build, queried by its held-out alternate names) (repeatable)",
    )
    ap.add_argument(
        "--python",
        action="append",
        default=[],
        help="an interpreter with a build (repeatable); PY::KB1,KB2 gives that build its own stores "
        "(an older build cannot open a newer schema: make them with its own `conceptwalk synth`)",
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one child process
    ap.add_argument("--fresh-measure", help=argparse.SUPPRESS)  # a fresh process of the child
    args = ap.parse_args(argv)
    if args.fresh_measure:
        print(json.dumps(fresh_measure(args.fresh_measure)))
        return 0
    if args.measure:
        print(json.dumps(measure(args.kb, args.queries, args.rounds)))
        return 0
    pythons, stores = [], {}
    for spec in args.python or [sys.executable]:
        py, _, kbs = spec.partition("::")
        pythons.append(py)
        stores[py] = kbs.split(",") if kbs else args.kb
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
    for r in range(args.repeats):
        for p in pythons:
            cmd = [
                p,
                os.path.abspath(__file__),
                "--measure",
                "--queries",
                str(args.queries),
                "--rounds",
                str(args.rounds),
            ]
            for kb in stores[p]:
                cmd += ["--kb", kb]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd="/", check=False)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                return 1
            runs[p].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"repeat {r + 1}/{args.repeats}: {p} done", file=sys.stderr)
    rows = [k for k in runs[pythons[-1]][0] if k != "version"]
    table: dict[str, dict[str, Any]] = {}
    label = {p: os.path.basename(p.split("/bin/")[0]) or p for p in pythons}
    print("| row | " + " | ".join(label[p] for p in pythons) + " |")
    print("| --- |" + " ---: |" * len(pythons))
    for row in rows:
        cells = []
        for p in pythons:
            got = [x[row] for x in runs[p] if row in x]
            if not got:
                cells.append("-")
                continue
            if "seconds" in got[0]:  # a fresh process: time and peak RSS
                med = {k: statistics.median(g[k] for g in got) for k in ("seconds", "rss_mb")}
                table.setdefault(row, {})[p] = med | {"all": got}
                cells.append(f"{med['seconds']:.2f} s, {med['rss_mb']:.0f} MB peak RSS")
                continue
            med = {k: statistics.median(g[k] for g in got) for k in ("ratio", "a_ms", "b_ms")}
            table.setdefault(row, {})[p] = med | {"ratios": [g["ratio"] for g in got]}
            cells.append(f"{med['ratio']:.2f}x ({med['a_ms']:.3f} vs {med['b_ms']:.3f} ms)")
        print(f"| {row} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"pythons": pythons, "versions": {p: runs[p][0]["version"] for p in pythons}, "rows": table},
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
