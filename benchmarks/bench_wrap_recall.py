"""Recall@k of the flat search vs the same search wrapped by the concept walk, on the synthetic
KB with its evaluation queries, and the walk's time next to the flat search's.

Run as a script (prints the table; ``--json`` for machine output)::

    python benchmarks/bench_wrap_recall.py [--concepts 1000] [--queries 50] [-k 10] [--mode fts]

or under pytest (``pytest benchmarks/bench_wrap_recall.py``), which runs the same measurement on
the 1k KB and checks the invariants (flat prefix unchanged; the walk never lowers recall).

Each query targets one concept; its relevant items are the FILE/DECISION/MEMORY nodes joined to
that concept by an edge (``SyntheticKB.queries``). Reported per setting: mean recall of

* ``flat@k``: the flat search's top k;
* ``wrapped``: the flat top k plus the walk's appended candidates (at most ``max_candidates``);
* ``flat@n``: the flat search's top n, n = the wrapped list's length for that query: the fair
  baseline with the same number of results.

Times are medians over the queries of warm calls (the resolver's concept embeddings are computed
and stored once before timing): flat search alone, and the walk's added time (``walkMs`` of the
retrieval event: resolution, walk, decoding, merge).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any


def measure(
    n_concepts: int = 1000,
    n_queries: int = 50,
    k: int = 10,
    *,
    mode: str = "fts",
    seed: int = 0,
    configs: dict[str, Any] | None = None,
    caller_scopes: str = "*",
) -> dict[str, Any]:
    from conceptwalk import Caller
    from conceptwalk.kb import synthetic
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search

    syn = synthetic.generate(n_concepts, seed=seed)
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(syn.node_rows())
    kb.add_edges(syn.edge_rows())
    kb.add_aliases(syn.alias_rows())
    queries = syn.queries(n_queries, seed=seed)
    caller = Caller.from_spec(caller_scopes)
    flat = builtin_flat_search(kb, mode=mode)
    configs = configs or {"default (2 hops, 20 candidates)": WalkConfig(), "1 hop": WalkConfig(max_hops=1)}
    rows = []
    for name, cfg in configs.items():
        events: list[dict[str, Any]] = []
        r = ConceptAnchoredRetriever(flat, kb, config=cfg, event_sink=events.append)
        r.query("warm up", k, concept_walk=True, caller=caller)
        vm = caller.visibility(kb.graph())
        rec_flat, rec_wrap, rec_same, resolved, flat_ms, walk_ms, added, contributed = [], [], [], 0, [], [], [], 0
        p_num = p_den = 0
        for q in queries:
            rel = {x for x in q["relevant"] if vm is None or vm.mask[kb.graph().index(x)]}
            t0 = time.perf_counter()
            base = flat(q["text"], k, caller=caller)
            flat_ms.append((time.perf_counter() - t0) * 1e3)
            out = r.query(q["text"], k, concept_walk=True, caller=caller)
            ev = events[-1]
            assert out[: len(base)] == base, "flat results displaced"
            walk_ms.append(ev["walkMs"])
            added.append(ev["candidatesAdded"])
            contributed += ev["walkContributed"]
            resolved += q["concept"] in {c["id"] for c in ev["resolvedConcepts"]}
            if not rel:
                continue
            same = flat(q["text"], len(out), caller=caller)
            ids_wrap = {o["id"] for o in out}
            rec_flat.append(len(rel & {o["id"] for o in base}) / len(rel))
            rec_wrap.append(len(rel & ids_wrap) / len(rel))
            rec_same.append(len(rel & {o["id"] for o in same}) / len(rel))
            extra = {o["id"] for o in out[len(base) :]}
            p_num += len(rel & extra)
            p_den += len(extra)
        n = len(queries)
        rows.append(
            {
                "config": name,
                "queries": n,
                "k": k,
                "recallFlat": statistics.fmean(rec_flat),
                "recallWrapped": statistics.fmean(rec_wrap),
                "recallFlatSameLength": statistics.fmean(rec_same),
                "conceptResolved": resolved / n,
                "contributionRate": contributed / n,
                "meanAdded": statistics.fmean(added),
                "precisionAdded": p_num / p_den if p_den else 0.0,
                "flatMsMedian": statistics.median(flat_ms),
                "walkMsMedian": statistics.median(walk_ms),
                "walkMsP90": sorted(walk_ms)[int(0.9 * (n - 1))],
            }
        )
    kb.close()
    return {
        "concepts": n_concepts,
        "nodes": len(syn.ids),
        "edges": len(syn.src),
        "mode": mode,
        "caller": caller_scopes,
        "rows": rows,
    }


def table(res: dict[str, Any]) -> str:
    head = (
        f"synthetic KB: {res['concepts']:,} concepts, {res['nodes']:,} nodes, {res['edges']:,} edges; "
        f"flat search = {res['mode']}; caller {res['caller']!r}\n"
    )
    cols = (
        "config",
        "flat@k",
        "wrapped",
        "flat@n",
        "resolved",
        "contrib",
        "added",
        "P added",
        "flat ms",
        "walk ms",
        "walk p90",
    )
    lines = [head + "  ".join(f"{c:>10}" if i else f"{c:<32}" for i, c in enumerate(cols))]
    for r in res["rows"]:
        vals = (
            r["config"],
            f"{r['recallFlat']:.3f}",
            f"{r['recallWrapped']:.3f}",
            f"{r['recallFlatSameLength']:.3f}",
            f"{r['conceptResolved']:.0%}",
            f"{r['contributionRate']:.0%}",
            f"{r['meanAdded']:.1f}",
            f"{r['precisionAdded']:.3f}",
            f"{r['flatMsMedian']:.3f}",
            f"{r['walkMsMedian']:.3f}",
            f"{r['walkMsP90']:.3f}",
        )
        lines.append("  ".join(f"{v:>10}" if i else f"{v:<32}" for i, v in enumerate(vals)))
    return "\n".join(lines)


def test_wrap_recall_1k():
    """The measurement on the 1k KB: the walk never lowers recall and adds what it finds."""
    res = measure(1000, 50, 10)
    print("\n" + table(res))
    for r in res["rows"]:
        assert r["recallWrapped"] >= r["recallFlat"]
        assert 0 <= r["meanAdded"] <= 20


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--concepts", type=int, default=1000)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--mode", choices=["fts", "embedding"], default="fts")
    p.add_argument("--scopes", default="*", help="caller scopes ('*' all access)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    res = measure(a.concepts, a.queries, a.k, mode=a.mode, seed=a.seed, caller_scopes=a.scopes)
    print(json.dumps(res, indent=2) if a.json else table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
