"""Time what one read costs on an unchanged store: ``kb.state()`` and ``graph_context(kb,
question)``, for two source trees of the package in one process (e.g. main before a refactor of
the knowledge base, and the branch after it).

Each tree's ``conceptwalk`` package is copied and imported under a name of its own
(``cw_<label>``), its compiled modules aliased to the installed package's (both trees run the
same core, loaded once). Each opens its own copy of the same store file (its snapshot file
mapped, read-only); the trees then take turns, round after round, each timing ``--calls`` calls
of each read (median per round). The figures printed are the medians and the best of the
rounds' medians. Same process, same store, interleaved: the machine's load moves both alike.
Nothing is asserted.

Usage::

    python scripts/bench_state_read.py --tree before=/path/to/old/python --tree after=python
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

QUESTION = "how do we handle vector index compaction after deletes"
_COMPILED = ("_core", "graph._intern", "wrap._hashembed")


def _load(tree: str, work: str, label: str) -> Any:
    """The ``conceptwalk`` package of ``tree`` imported as ``cw_<label>``, its compiled modules
    those of the installed package."""
    name = f"cw_{label}"
    dst = os.path.join(work, "trees")
    shutil.copytree(os.path.join(tree, "conceptwalk"), os.path.join(dst, name), ignore=shutil.ignore_patterns("*.so"))
    if dst not in sys.path:
        sys.path.insert(0, dst)
    for sub in _COMPILED:
        sys.modules[f"{name}.{sub}"] = importlib.import_module(f"conceptwalk.{sub}")
    return importlib.import_module(name)


def _median_call(fn: Any, calls: int) -> float:
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--tree", action="append", required=True, metavar="LABEL=DIR")
    args = ap.parse_args(argv)

    from conceptwalk.kb import synthetic
    from conceptwalk.kb.store import KnowledgeBase

    work = tempfile.mkdtemp(prefix="bench_state_read.")
    try:
        db = os.path.join(work, "kb.sqlite")
        syn = synthetic.generate(args.concepts, seed=0)
        with KnowledgeBase.create(db) as kb:
            syn.write_to(kb)
        with KnowledgeBase.open(db) as kb:
            kb.state()  # the snapshot file, text index included
        runs = []
        for spec in args.tree:
            label, _, d = spec.partition("=")
            pkg = _load(os.path.abspath(d), work, label)
            mine = os.path.join(work, f"{label}.sqlite")
            shutil.copy(db, mine)
            shutil.copy(db + ".snapshot", mine + ".snapshot")
            kb = importlib.import_module(f"{pkg.__name__}.kb").KnowledgeBase.open(mine, read_only=True)
            gc_fn = importlib.import_module(f"{pkg.__name__}.tools").graph_context
            who = pkg.Caller.public()
            st = kb.state()
            for _ in range(100):  # warm
                kb.state()
                gc_fn(kb, QUESTION, caller=who)
            assert kb.state() is st
            runs.append(
                (
                    label,
                    kb,
                    {"state": kb.state, "graph_context": lambda kb=kb, f=gc_fn, w=who: f(kb, QUESTION, caller=w)},
                )
            )
        got: dict[str, dict[str, list[float]]] = {label: {"state": [], "graph_context": []} for label, _, _ in runs}
        for _ in range(args.rounds):
            for label, _, fns in runs:
                for what, fn in fns.items():
                    got[label][what].append(_median_call(fn, args.calls))
        print(f"{args.concepts} concepts, one process, {args.rounds} interleaved rounds of {args.calls} calls each")
        for label, kb, _ in runs:
            st, gc = got[label]["state"], got[label]["graph_context"]
            print(
                f"  {label:>10}: kb.state() median {statistics.median(st) * 1e6:6.2f} us, best {min(st) * 1e6:6.2f} us;"
                f" graph_context(kb, question) median {statistics.median(gc) * 1e3:6.3f} ms, best {min(gc) * 1e3:6.3f} ms"
            )
            kb.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
