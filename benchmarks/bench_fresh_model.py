"""A fresh process over a store whose concepts carry a real model's vectors: what the first wrapped
query costs, for one or more builds in one run (issue 18, item 3: the stored concept vectors belong
to the state, kept with the snapshot file and mapped by the next process).

    python benchmarks/bench_fresh_model.py --kb KB.db [--python OLD/bin/python --python NEW/bin/python]
        [--dim 384] [--repeats 3] [--json OUT.json]

Per build, on its own copy of ``KB.db`` (``conceptwalk synth --concepts N KB.db``), by that
build: every concept (type ``CONCEPT``) gets a ``--dim``-dimensional vector of a dense stand-in
model (``_HashedModel`` of ``bench_write_read``: unit rows seeded by the title; what the store
sees of a sentence model), a wrapped query runs, and the store is closed (its snapshot file saved
with whatever that build keeps in it). Then, the builds alternating ``--repeats`` times (A B A B
...), a fresh read-only process opens its build's copy and times
``ConceptAnchoredRetriever(builtin_flat_search(kb), kb, embedder=model)`` plus its first
``query(..., concept_walk=True)``, then a second query; peak RSS is ``ru_maxrss``. Measurements
only: nothing is asserted on wall time.
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
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_write_read import _HashedModel  # noqa: E402

QUERIES = ["concept graph", "another concept"]


def _prepare(path: str, dim: int) -> dict[str, Any]:
    from conceptwalk import Caller
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    kb = KnowledgeBase.create(path)
    g = kb.graph()
    types = list(g.node_type_names)
    every = [i for k, i in enumerate(g.ids) if types[g.node_type_codes[k]] == "CONCEPT"]
    model = _HashedModel(dim)
    for i in range(0, len(every), 50_000):
        part = every[i : i + 50_000]
        kb.set_embeddings(model.name, part, model.embed([g.titles[g.id_index[c]] or c for c in part]))
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, embedder=model)
    ret.query(QUERIES[0], 10, concept_walk=True, caller=Caller.all_access())
    kb.close()
    return {"concepts": len(every), "nodes": g.num_nodes}


def _child(path: str, dim: int) -> dict[str, Any]:
    import resource

    t0 = time.perf_counter()
    from conceptwalk import Caller
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    who = Caller.all_access()
    kb = KnowledgeBase.open_read_only(path)
    t1 = time.perf_counter()
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, embedder=_HashedModel(dim))
    first = ret.query(QUERIES[0], 10, concept_walk=True, caller=who)
    t2 = time.perf_counter()
    ret.query(QUERIES[1], 10, concept_walk=True, caller=who)
    t3 = time.perf_counter()
    return {
        "open_s": t1 - t0,
        "first_s": t2 - t1,
        "second_ms": (t3 - t2) * 1e3,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "first": [r["id"] for r in first],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", required=True, help="a store made by `conceptwalk synth`")
    ap.add_argument("--python", action="append", help="an interpreter with a build installed (repeatable)")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the raw measurements here")
    ap.add_argument("--child", choices=["prepare", "run"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child == "prepare":
        print(json.dumps(_prepare(args.kb, args.dim)))
        return 0
    if args.child == "run":
        print(json.dumps(_child(args.kb, args.dim)))
        return 0
    pythons = args.python or [sys.executable]
    tmp = tempfile.mkdtemp(prefix="cw-fresh-model-")
    try:
        me = os.path.abspath(__file__)
        paths: dict[str, str] = {}
        for b, py in enumerate(pythons):
            path = paths[py] = os.path.join(tmp, f"kb{b}.db")
            shutil.copy(args.kb, path)
            cmd = [py, me, "--child", "prepare", "--kb", path, "--dim", str(args.dim)]
            t = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            prep = json.loads(out.stdout.splitlines()[-1])
            print(
                f"{py}: {prep['concepts']} concepts x {args.dim}-d stored vectors, {prep['nodes']} nodes; prepared "
                f"in {time.perf_counter() - t:.1f} s; snapshot file {os.path.getsize(path + '.snapshot') / 2**20:.0f} MiB"
            )
        print(f"{args.kb}: {args.repeats} repeats per build")
        got: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
        for _ in range(args.repeats):
            for py in pythons:
                cmd = [py, me, "--child", "run", "--kb", paths[py], "--dim", str(args.dim)]
                out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                got[py].append(json.loads(out.stdout.strip().splitlines()[-1]))
        answers = {json.dumps(r["first"]) for runs in got.values() for r in runs}
        print(f"{'build':<40} {'open s':>7} {'retriever + first query s':>26} {'second ms':>10} {'peak RSS MB':>12}")
        for py, runs in got.items():
            row = [statistics.median(r[key] for r in runs) for key in ("open_s", "first_s", "second_ms", "rss_mb")]
            print(f"{py[-40:]:<40} {row[0]:>7.2f} {row[1]:>26.2f} {row[2]:>10.1f} {row[3]:>12.0f}")
        print("every build and repeat gave the same first answer" if len(answers) == 1 else "ANSWERS DIFFER")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(got, f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
