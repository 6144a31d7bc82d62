"""What a store-defined node order would cost the input-order contract (issue 31, item 3: "say
what it costs the input-order contract and measure it before changing the contract").

Today a node's index is the rank of its id, so two stores with the same content give the same
answers whatever order they were written in. A live store could instead number nodes in the
order the store wrote them (a new node appended, nothing renumbered), with a fresh build
reproducing that order from the store. This script measures what that would change, on real and
synthetic graphs: the same graph built over nodes numbered by id rank and by several random
write orders, PPR from the same seeds (the package's push: restart 0.25, eps 1e-4), and, per
query, whether the top-k ids come back in the same order, whether every score is bit-identical,
and the largest score difference against the per-node error bound ``eps * deg``.

    python scripts/node_order_study.py [--graphs cwe umls synth] [--queries 300] [--orders 3] [--k 20]

Measurements only.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from conceptwalk import _core  # the study reads the core directly (as scripts/gate.py does)


def _edges(name: str) -> tuple[list[str], list[tuple[str, str]]]:
    if name == "synth":
        from conceptwalk.kb import synthetic

        s = synthetic.generate(5000, seed=0)
        return list(s.ids), [(s.ids[a], s.ids[b]) for a, b in zip(s.src, s.dst)]
    from conceptwalk.kb import datasets

    ds = datasets.load_cwe() if name == "cwe" else datasets.load_umls()
    ids = sorted({r["id"] for r in ds.nodes} | {r["src"] for r in ds.edges} | {r["dst"] for r in ds.edges})
    return ids, [(r["src"], r["dst"]) for r in ds.edges]


def _ppr(order: list[str], edges: list[tuple[str, str]], seeds: list[list[str]], k: int) -> list[Any]:
    index = {x: i for i, x in enumerate(order)}
    src = np.array([index[a] for a, _ in edges], dtype=np.int32)
    dst = np.array([index[b] for _, b in edges], dtype=np.int32)
    g, _ = _core.CSRGraph.from_edges(len(order), src, dst, np.zeros(len(edges), dtype=np.int32))
    out = []
    for s in seeds:
        ix = np.array(sorted(index[x] for x in s), dtype=np.int32)
        r = _core.personalized_pagerank(g, ix, np.ones(ix.shape[0]), 0.25, 1e-4)
        nodes = [order[i] for i in np.asarray(r.nodes)]
        scores = dict(zip(nodes, np.asarray(r.scores).tolist()))
        # ranked by score, ties by id (the contract's tie rule, independent of the numbering)
        top = sorted((x for x in nodes if x not in s), key=lambda x: (-scores[x], x))[:k]
        out.append((top, scores))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", nargs="+", default=["cwe", "umls", "synth"])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--orders", type=int, default=3)
    ap.add_argument("--k", type=int, default=20)
    args = ap.parse_args(argv)
    print(
        "| graph | nodes | write orders x queries | same top-k order | same top-k set | all scores bit-identical "
        "| max abs score diff | max diff / (eps * deg) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in args.graphs:
        ids, edges = _edges(name)
        deg: dict[str, int] = {}
        for a, b in set(tuple(sorted(e)) for e in edges if e[0] != e[1]):
            deg[a] = deg.get(a, 0) + 1
            deg[b] = deg.get(b, 0) + 1
        rng = np.random.default_rng(0)
        linked = [x for x in ids if deg.get(x)]
        seeds = [list(rng.choice(linked, size=int(rng.integers(1, 4)), replace=False)) for _ in range(args.queries)]
        base = _ppr(sorted(ids), edges, seeds, args.k)
        same_order = same_set = same_bits = total = 0
        worst = worst_rel = 0.0
        for o in range(args.orders):
            perm = list(np.random.default_rng(100 + o).permutation(len(ids)))
            other = _ppr([ids[i] for i in perm], edges, seeds, args.k)
            for (ta, sa), (tb, sb) in zip(base, other):
                total += 1
                same_order += ta == tb
                same_set += set(ta) == set(tb)
                same_bits += sa == sb
                for x in set(sa) | set(sb):
                    d = abs(sa.get(x, 0.0) - sb.get(x, 0.0))
                    worst = max(worst, d)
                    worst_rel = max(worst_rel, d / (1e-4 * max(1, deg.get(x, 1))))
        print(
            f"| {name} | {len(ids):,} | {total:,} | {same_order / total:.3f} | {same_set / total:.3f} | "
            f"{same_bits / total:.3f} | {worst:.2e} | {worst_rel:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
