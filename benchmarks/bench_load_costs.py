"""What a fresh reader pays before and on its first answer, for one or more builds in one run, and
two lookups a store's indexes are built from (issue 18). Measurements, not tests: nothing is
asserted on wall time.

    python benchmarks/bench_load_costs.py --kb KB.db [--python OLD/bin/python --python NEW/bin/python]
        [--repeats 3] [--json OUT.json]

``KB.db`` is a store with its snapshot file beside it (``conceptwalk synth --concepts N KB.db``,
then one writable open that reads the graph). Per build (each ``--python``, default this
interpreter), ``--repeats`` fresh processes alternating with the other builds (A B A B ...); the
table gives medians:

* ``open + retriever``: ``KnowledgeBase.open(KB, read_only=True)`` and
  ``ConceptAnchoredRetriever(builtin_flat_search(kb), kb)`` (the state mapped from the snapshot
  file, the alias index, the concept vectors);
* ``first query`` / ``second query``: the first and the next wrapped query of that process (the
  first walk grows the thread's workspace to the graph's size);
* ``peak RSS`` after them (``ru_maxrss``).

Then, in this interpreter only, two lookups with the code they replaced (both sides in this run,
medians of ``--repeats``): ``normalize_texts`` against ``normalize_text`` per text over the
store's titles, and a ``PackedStrings`` title lookup against the lookup it replaced (the same
checks, then ``data[off[i]:off[i+1]].tobytes().decode()``).
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import statistics
import subprocess
import sys
import time
from typing import Any


def child(path: str) -> dict[str, Any]:
    """One fresh process: open, retriever, two wrapped queries; seconds and peak RSS (MB)."""
    import resource

    t0 = time.perf_counter()
    from conceptwalk import Caller, KnowledgeBase
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    who = Caller.all_access()
    t1 = time.perf_counter()
    kb = KnowledgeBase.open(path, read_only=True)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    t2 = time.perf_counter()
    ret.query("text dispatcher replication encoder", 10, concept_walk=True, caller=who)
    t3 = time.perf_counter()
    ret.query("embedding allocator autoscaling experiment", 10, concept_walk=True, caller=who)
    t4 = time.perf_counter()
    return {
        "import_s": t1 - t0,
        "open_retriever_s": t2 - t1,
        "first_query_s": t3 - t2,
        "second_query_s": t4 - t3,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def lookups(path: str, repeats: int) -> dict[str, float]:
    """normalize_texts vs normalize_text per text; a PackedStrings lookup vs the one it replaced."""
    from conceptwalk import KnowledgeBase
    from conceptwalk.graph.linkgraph import PackedStrings
    from conceptwalk.wrap.embed import normalize_text, normalize_texts

    kb = KnowledgeBase.open(path, read_only=True)
    g = kb.graph()
    titles = g.titles
    texts = [t for t in titles if t]
    assert normalize_texts(texts) == [normalize_text(t) for t in texts]
    batch, each = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        normalize_texts(texts)
        batch.append(time.perf_counter() - t)
        t = time.perf_counter()
        [normalize_text(x) for x in texts]
        each.append(time.perf_counter() - t)
    out = {
        "texts": float(len(texts)),
        "normalize_texts_s": statistics.median(batch),
        "normalize_text_each_s": statistics.median(each),
    }
    if isinstance(titles, PackedStrings):
        data, off, present = titles.arrays()
        n = len(titles)

        def former(i: int) -> str | None:  # PackedStrings.__getitem__ as it was at 3e90db6
            j = operator.index(i)
            if j < 0:
                j += n
            if not 0 <= j < n:
                raise IndexError("PackedStrings index out of range")
            if present is not None and not present[j]:
                return None
            return data[int(off[j]) : int(off[j + 1])].tobytes().decode("utf-8")

        rows = list(range(0, n, max(1, n // 20000)))
        assert [titles[i] for i in rows] == [former(i) for i in rows]
        new, old = [], []
        for _ in range(repeats):
            t = time.perf_counter()
            for i in rows:
                titles[i]
            new.append((time.perf_counter() - t) / len(rows))
            t = time.perf_counter()
            for i in rows:
                former(i)
            old.append((time.perf_counter() - t) / len(rows))
        out["packed_lookup_us"] = statistics.median(new) * 1e6
        out["former_lookup_us"] = statistics.median(old) * 1e6
    kb.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", required=True, help="a store with its snapshot file (conceptwalk synth)")
    ap.add_argument("--python", action="append", help="an interpreter with a build installed (repeatable)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(a.kb)))
        return 0
    pythons = a.python or [sys.executable]
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in pythons}
    for r in range(a.repeats):
        for p in pythons:
            done = subprocess.run(
                [p, os.path.abspath(__file__), "--child", "--kb", os.path.abspath(a.kb)],
                capture_output=True,
                text=True,
                cwd="/",
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            runs[p].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"repeat {r + 1}/{a.repeats}: {p} done", file=sys.stderr)
    keys = ("open_retriever_s", "first_query_s", "second_query_s", "rss_mb")
    table = {p: {k: statistics.median(x[k] for x in runs[p]) for k in keys} for p in pythons}
    print(f"{a.kb}: {a.repeats} fresh processes per build, medians")
    print(f"{'build':<44}{'open + retriever s':>20}{'first query s':>15}{'second query s':>16}{'peak RSS MB':>13}")
    for p in pythons:
        t = table[p]
        print(
            f"{p:<44}{t['open_retriever_s']:>20.3f}{t['first_query_s']:>15.3f}"
            f"{t['second_query_s']:>16.4f}{t['rss_mb']:>13.0f}"
        )
    lk = lookups(a.kb, a.repeats)
    print(
        f"normalize {int(lk['texts'])} titles: normalize_texts {lk['normalize_texts_s'] * 1e3:.1f} ms, "
        f"normalize_text each {lk['normalize_text_each_s'] * 1e3:.1f} ms "
        f"({lk['normalize_text_each_s'] / lk['normalize_texts_s']:.1f}x)"
    )
    if "packed_lookup_us" in lk:
        print(
            f"title lookup: PackedStrings {lk['packed_lookup_us']:.2f} us, the former lookup "
            f"{lk['former_lookup_us']:.2f} us ({lk['former_lookup_us'] / lk['packed_lookup_us']:.2f}x)"
        )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump({"builds": table, "runs": runs, "lookups": lk}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
