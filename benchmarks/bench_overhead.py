"""The Python layer's cost over each core call, and the two in-repo reference ratios, in one run.

    python benchmarks/bench_overhead.py [--concepts 1000] [--rounds 9] [--queries 50]

On the synthetic KB (``conceptwalk.kb.synthetic``, a LinkGraph; all-access caller), per tool:
the API call (``graph_path``, ``link_suggest``, ``graph_context(concepts=...)``), the same call
with its result serialised (``.to_dict()``), and the bare core call it makes (``_core.*`` on
precomputed indices) -- medians over interleaved rounds (``conceptwalk.bench.harness.interleaved``:
the cases alternate per query, so machine load hits all alike) -- and the difference. Then, in
the same run, ``LinkGraph.shortest_path`` and ``graph_path`` against the pure-Python bidirectional
BFS and ``LinkGraph.resource_allocation`` and ``link_suggest`` against the numpy reference
(``harness.py_bibfs``, ``harness.numpy_ra``). Targets (issue 10 item 8): API - core <= 3 us per
tool; both ratios >= 10x. The table says which were reached; nothing is asserted on wall time.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from conceptwalk import Caller, _core, graph_context, graph_path, link_suggest
from conceptwalk.bench import harness


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args(argv)

    w = harness.load_workload(args.concepts)
    g = w.graph
    everyone = Caller.all_access()
    nq = min(args.queries, len(w.pairs), len(w.concepts), len(w.seed_sets))
    pairs = w.pairs[:nq]
    pair_idx = [(g.id_index[a], g.id_index[b]) for a, b in pairs]
    concepts = w.concepts[:nq]
    concept_idx = [g.id_index[c] for c in concepts]
    seed_sets = w.seed_sets[:nq]
    seed_arrays = []
    for q in seed_sets:
        idx = np.array(sorted({g.id_index[c] for c in q}), dtype=np.int32)
        seed_arrays.append((idx, np.ones(idx.shape[0])))
    core = g.core
    adj = w.adj
    indptr, indices = np.asarray(core.indptr), np.asarray(core.indices)

    # Same answers first: the API and the core call agree, and both agree with the references.
    for (a, b), (s, t) in zip(pairs, pair_idx):
        p = graph_path(g, a, b, caller=everyone)
        ref = harness.py_bibfs(adj, s, t)
        assert (p.length if p.found else None) == (None if ref is None else len(ref) - 1)
        assert [g.id_index[x] for x in (p.ids or [])] == _core.shortest_path(core, s, t).path.tolist()
    for c, a in zip(concepts, concept_idx):
        ls = link_suggest(g, c, k=10, caller=everyone)
        rt, _ = harness.numpy_ra(indptr, indices, a, 10)
        assert [s.id for s in ls.suggestions] == [g.ids[x] for x in rt.tolist()]
    for q, (idx, wts) in zip(seed_sets, seed_arrays):
        ctx = graph_context(g, concepts=q, k=20, caller=everyone)
        r = _core.graph_context(core, idx, wts, 0.25, 1e-4, 20)
        assert [x.id for x in ctx.results] == [g.ids[v] for v in r.nodes.tolist()]

    t = harness.interleaved(
        {
            "path api": lambda i: graph_path(g, *pairs[i], caller=everyone),
            "path api+dict": lambda i: graph_path(g, *pairs[i], caller=everyone).to_dict(),
            "path core": lambda i: _core.shortest_path(core, *pair_idx[i]),
            "path LinkGraph": lambda i: g.shortest_path(*pairs[i]),
            "path ref": lambda i: harness.py_bibfs(adj, *pair_idx[i]),
        },
        nq,
        rounds=args.rounds,
        repeat=5,
    )
    t.update(
        harness.interleaved(
            {
                "suggest api": lambda i: link_suggest(g, concepts[i], k=10, caller=everyone),
                "suggest api+dict": lambda i: link_suggest(g, concepts[i], k=10, caller=everyone).to_dict(),
                "suggest core": lambda i: _core.resource_allocation(core, concept_idx[i], 2, 10),
                "suggest LinkGraph": lambda i: g.resource_allocation(concepts[i], k=10),
                "suggest ref": lambda i: harness.numpy_ra(indptr, indices, concept_idx[i], 10),
            },
            nq,
            rounds=args.rounds,
            repeat=5,
        )
    )
    t.update(
        harness.interleaved(
            {
                "context api": lambda i: graph_context(g, concepts=seed_sets[i], k=20, caller=everyone),
                "context api+dict": lambda i: graph_context(g, concepts=seed_sets[i], k=20, caller=everyone).to_dict(),
                "context core": lambda i: _core.graph_context(core, *seed_arrays[i], 0.25, 1e-4, 20),
            },
            nq,
            rounds=args.rounds,
            repeat=3,
        )
    )

    us = {k: v * 1e6 for k, v in t.items()}
    print(
        f"# Python-layer overhead, {w.name} synthetic KB ({g.num_nodes} nodes), medians of "
        f"{args.rounds} interleaved rounds over {nq} queries"
    )
    print()
    print("| tool | API (us) | API + to_dict (us) | core (us) | API - core (us) | target <= 3 us |")
    print("| --- | --- | --- | --- | --- | --- |")
    ok = True
    for tool, key in (
        ("graph_path", "path"),
        ("link_suggest k=10", "suggest"),
        ("graph_context(concepts=) k=20", "context"),
    ):
        api, full, c = us[f"{key} api"], us[f"{key} api+dict"], us[f"{key} core"]
        reached = api - c <= 3.0
        ok &= reached
        print(
            f"| {tool} | {api:.2f} | {full:.2f} | {c:.2f} | {api - c:.2f} | {'reached' if reached else 'NOT reached'} |"
        )
    print()
    print("| ours | reference | ours (us) | reference (us) | ratio | target >= 10x |")
    print("| --- | --- | --- | --- | --- | --- |")
    for ours, ref, label in (
        ("path LinkGraph", "path ref", "LinkGraph.shortest_path"),
        ("path api", "path ref", "graph_path"),
        ("suggest LinkGraph", "suggest ref", "LinkGraph.resource_allocation k=10"),
        ("suggest api", "suggest ref", "link_suggest k=10"),
    ):
        ratio = us[ref] / us[ours]
        refname = "pure-Python bidirectional BFS" if ref == "path ref" else "numpy RA"
        print(
            f"| {label} | {refname} | {us[ours]:.2f} | {us[ref]:.2f} | {ratio:.1f}x | "
            f"{'reached' if ratio >= 10 else 'NOT reached'} |"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
