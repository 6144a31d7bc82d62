"""An agent's turn: a write, then a read. What the read right after a write costs, against the same
read on an unchanged store, for one or more builds in one run (issue 18, item 3: what a read
derives is followed on writes).

    python benchmarks/bench_write_read.py --kb KB.db [--python OLD/bin/python --python NEW/bin/python]
        [--turns 40] [--repeats 3] [--concept-every 0] [--json OUT.json]

Each turn, on a copy of ``KB.db`` (``conceptwalk synth --concepts N KB.db``) opened for writing:
one memory node (type ``MEMORY``) and two edges to concepts (type ``CONCEPT``) are written in one transaction (``--concept-every K``:
every K-th turn also retitles one concept and adds one), then
``ConceptAnchoredRetriever(builtin_flat_search(kb), kb).query(q, 10, concept_walk=True)`` is
timed once right after the write (``after write``) and once more on the unchanged store
(``warm``). ``--model-dim D``: the store holds a D-dimensional vector for every concept under a
dense stand-in model (``_HashedModel``), the retriever resolves with it, and each turn also
stores the memory's vector (what a real embedder's user does). ``--fallback``: the resolver's
lexical and semantic steps are off (``WalkConfig(lexical_k=0, semantic_k=0)``) and the flat search
returns no concepts (only the built-in search's other hits), so every query is resolved by the
normalize-only fallback (its index of every concept's title and id). Each ``--python`` (default: this interpreter) runs in its own fresh process, the builds
alternating ``--repeats`` times (A B A B ...); the table gives per build the medians over all
turns, and the ratio after-write / warm. Measurements only: nothing is asserted on wall time.
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


class _HashedModel:
    """A dense stand-in for a sentence model (``dim``-d unit rows seeded by the text's CRC-32):
    what the store and the resolver see of a real model, without the model's cost."""

    def __init__(self, dim: int) -> None:
        self.name, self.dim = f"bench-model-{dim}", dim

    def embed(self, texts: Any) -> Any:
        import zlib

        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for r, t in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim)
            out[r] = v / np.linalg.norm(v)
        return out


def _child(kb_path: str, turns: int, concept_every: int, model_dim: int = 0, fallback: bool = False) -> dict[str, Any]:
    from conceptwalk import Caller
    from conceptwalk.kb.store import KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search

    who = Caller.all_access()
    tmp = tempfile.mkdtemp(prefix="cw-write-read-")
    path = os.path.join(tmp, "kb.db")
    shutil.copy(kb_path, path)
    if os.path.exists(kb_path + ".snapshot"):
        shutil.copy(kb_path + ".snapshot", path + ".snapshot")
    kb = KnowledgeBase.open(path)
    try:
        g = kb.graph()
        types = list(g.node_type_names)
        kinds = [types[c] for c in g.node_type_codes]
        concepts = [i for k, i in enumerate(g.ids) if kinds[k] == "CONCEPT"][:5000]
        memory = "MEMORY" if "MEMORY" in types else "memory"
        model = _HashedModel(model_dim) if model_dim else None
        if model is not None:  # the store holds every concept's vector, as a real embedder's user does
            every = [i for k, i in enumerate(g.ids) if kinds[k] == "CONCEPT"]
            kb.set_embeddings(model.name, every, model.embed([g.titles[g.id_index[c]] or c for c in every]))
        cfg = WalkConfig(lexical_k=0, semantic_k=0) if fallback else None
        flat: Any = builtin_flat_search(kb)
        if fallback:
            inner = flat

            def flat(text: str, k: int, *, caller: Any) -> list[dict[str, Any]]:
                return [h for h in inner(text, k, caller=caller) if h["type"] != "CONCEPT"]

        ret = ConceptAnchoredRetriever(flat, kb, embedder=model, config=cfg)
        queries = [g.titles[g.id_index[c]] or c for c in concepts[:: max(1, len(concepts) // 64)]]
        for q in queries[:10]:  # warm every cache once
            ret.query(q, 10, concept_walk=True, caller=who)
        after, warm, write = [], [], []
        for t in range(turns):
            q = queries[t % len(queries)]
            a, b = concepts[(7 * t) % len(concepts)], concepts[(13 * t + 1) % len(concepts)]
            t0 = time.perf_counter()
            with kb.transaction():
                kb.add_nodes([{"id": f"turn-{t}", "type": memory, "title": f"turn {t}: {q}"}])
                kb.add_edges([{"src": f"turn-{t}", "dst": a}, {"src": f"turn-{t}", "dst": b}])
                if model is not None:  # and the memory's own embedding
                    kb.set_embeddings(model.name, [f"turn-{t}"], model.embed([q]))
                if concept_every and t % concept_every == concept_every - 1:
                    kb.add_nodes(
                        [
                            {"id": a, "title": f"renamed {t}"},
                            {"id": f"new-{t}", "type": "CONCEPT", "title": f"new concept {t}"},
                        ]
                    )
            t1 = time.perf_counter()
            ret.query(q, 10, concept_walk=True, caller=who)
            t2 = time.perf_counter()
            ret.query(q, 10, concept_walk=True, caller=who)
            t3 = time.perf_counter()
            write.append(t1 - t0)
            after.append(t2 - t1)
            warm.append(t3 - t2)
        return {
            "nodes": g.num_nodes,
            "after_ms": [x * 1e3 for x in after],
            "warm_ms": [x * 1e3 for x in warm],
            "write_ms": [x * 1e3 for x in write],
        }
    finally:
        kb.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", required=True, help="a store made by `conceptwalk synth`")
    ap.add_argument("--python", action="append", help="an interpreter with a build installed (repeatable)")
    ap.add_argument("--turns", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concept-every", type=int, default=0, help="every K-th turn also changes concepts (0: never)")
    ap.add_argument(
        "--model-dim",
        type=int,
        default=0,
        help="a dense model of this dim: concept vectors stored, one per memory a turn",
    )
    ap.add_argument("--fallback", action="store_true", help="resolve by the normalize-only fallback alone")
    ap.add_argument("--json", help="write the raw measurements here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.kb, args.turns, args.concept_every, args.model_dim, args.fallback)))
        return 0
    pythons = args.python or [sys.executable]
    got: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
    for _ in range(args.repeats):
        for py in pythons:
            cmd = [py, os.path.abspath(__file__), "--child", "--kb", args.kb, "--turns", str(args.turns)]
            cmd += ["--concept-every", str(args.concept_every), "--model-dim", str(args.model_dim)]
            cmd += ["--fallback"] if args.fallback else []
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            got[py].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        f"{args.kb}: {args.turns} turns x {args.repeats} repeats per build, "
        f"concept-every={args.concept_every}, model-dim={args.model_dim}, fallback={args.fallback}"
    )
    print(f"{'build':<40} {'write ms':>9} {'read after write ms':>20} {'warm read ms':>13} {'after/warm':>11}")
    for py, runs in got.items():
        after = statistics.median(x for r in runs for x in r["after_ms"])
        warm = statistics.median(x for r in runs for x in r["warm_ms"])
        write = statistics.median(x for r in runs for x in r["write_ms"])
        print(f"{py[-40:]:<40} {write:>9.2f} {after:>20.2f} {warm:>13.2f} {after / warm:>10.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(got, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
