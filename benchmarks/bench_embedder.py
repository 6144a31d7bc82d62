"""What the built-in hashing embedder loses, measured on real alias -> concept data (a
measurement, not a test): nearest concept by cosine similarity of the query's embedding to each
concept's, top-1 / top-5, for settings of the embedder (dimension, character n-gram range, word
and n-gram weights) and for what a concept is embedded from (title, title + body).

Run::

    python benchmarks/bench_embedder.py [--datasets cwe,edam,umls,geonames] [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402
from bench_resolve import split  # noqa: E402

#: name -> HashingEmbedder keyword arguments
VARIANTS: dict[str, dict[str, Any]] = {
    "d256 n3-5 w1 c0.5 (v1 default)": {},
    "d256 n2-4": {"ngram_range": (2, 4)},
    "d256 n2-5": {"ngram_range": (2, 5)},
    "d256 n3-6": {"ngram_range": (3, 6)},
    "d256 n4-6": {"ngram_range": (4, 6)},
    "d256 c1.0": {"char_weight": 1.0},
    "d256 c0.25": {"char_weight": 0.25},
    "d256 words only": {"char_weight": 0.0},
    "d256 n-grams only": {"word_weight": 0.0},
    "d512": {"dim": 512},
    "d1024": {"dim": 1024},
    "d1024 n2-5": {"dim": 1024, "ngram_range": (2, 5)},
    "d1024 n3-6": {"dim": 1024, "ngram_range": (3, 6)},
    "d512 n2-4": {"dim": 512, "ngram_range": (2, 4)},
    "d512 n2-5": {"dim": 512, "ngram_range": (2, 5)},
    "d1024 n2-4": {"dim": 1024, "ngram_range": (2, 4)},
    "d512 n2-4 c1.0": {"dim": 512, "ngram_range": (2, 4), "char_weight": 1.0},
}


def measure(name: str, max_queries: int, seed: int = 0) -> dict[str, Any]:
    from conceptwalk.wrap.embed import HashingEmbedder

    ds = realdata.load(name)
    queries, _ = split(ds, max_queries, seed)
    ctype = set(ds.concept_types)
    concepts = [n for n in ds.nodes if n["type"] in ctype]
    cids = [n["id"] for n in concepts]
    pos = {c: i for i, c in enumerate(cids)}
    want = np.array([pos[c] for _, c in queries])
    texts = {"title": [n.get("title") or n["id"] for n in concepts],
             "title+body": ["\n".join(p for p in (n.get("title"), n.get("body")) if p) or n["id"] for n in concepts]}
    rows = []
    for vname, kw in VARIANTS.items():
        emb = HashingEmbedder(**kw)
        qm = emb.embed([q for q, _ in queries])
        for tname, tx in texts.items():
            if tname == "title+body" and kw and vname not in ("d1024", "d512 n2-4"):
                continue
            sims = qm @ emb.embed(tx).T
            right = sims[np.arange(len(want)), want]
            rank = 1 + (sims > right[:, None]).sum(axis=1)  # ties count in the query's favour
            rows.append({"variant": vname, "text": tname, "top1": float((rank == 1).mean()),
                         "top5": float((rank <= 5).mean()), "mrr": float((1.0 / rank).mean())})
    return {"dataset": name, "queries": len(queries), "concepts": len(cids), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="cwe,edam,umls,geonames")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--json", metavar="PATH")
    a = p.parse_args(argv)
    avail = realdata.available()
    out = []
    for name in a.datasets.split(","):
        if not avail.get(name):
            continue
        res = measure(name, a.queries)
        out.append(res)
        print(f"{name}: {res['queries']} queries, {res['concepts']} concepts")
        for r in res["rows"]:
            print(f"  {r['variant']:<32}{r['text']:<12}top1 {r['top1']:.3f}  top5 {r['top5']:.3f}  mrr {r['mrr']:.3f}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
