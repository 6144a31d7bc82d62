"""Time what one read costs on an unchanged store: ``kb.state()`` and ``graph_context(kb,
question)``, for two source trees of the package in the same run (e.g. main before a refactor
of the knowledge base and the branch after it).

Each round runs one worker process per tree, alternating (A, B, A, B, ...), on the same store
file; a worker opens the store (its snapshot file mapped), warms up, and reports the median of
``--calls`` calls of each read. The figures printed are the medians over the rounds. Nothing is
asserted.

Usage::

    python scripts/bench_state_read.py                       # the installed package alone
    python scripts/bench_state_read.py --tree before=/path/to/old/python --tree after=python

A ``--tree`` is a directory holding a ``conceptwalk`` package; the compiled modules of the
installed package are copied beside its Python files (so both trees run the same core), and it
is put first on ``PYTHONPATH`` with scikit-build-core's editable hook off.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

QUESTION = "how do we handle vector index compaction after deletes"

_WORKER = r"""
import json, statistics, sys, time
from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context

db, calls = sys.argv[1], int(sys.argv[2])
who = Caller.public()
with KnowledgeBase.open(db, read_only=True) as kb:
    st = kb.state()
    for _ in range(50):
        kb.state()
        graph_context(kb, QUESTION, caller=who)
    out = {}
    for name, fn in (("state", lambda: kb.state()), ("graph_context", lambda: graph_context(kb, QUESTION, caller=who))):
        ts = []
        for _ in range(calls):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        out[name] = statistics.median(ts)
    assert kb.state() is st
print(json.dumps(out))
"""


def _prepare(tree: str, work: str, label: str) -> str:
    """A copy of ``tree``'s package with the installed compiled modules beside it."""
    import conceptwalk

    installed = [p for p in conceptwalk.__path__]
    dst = os.path.join(work, label)
    shutil.copytree(os.path.join(tree, "conceptwalk"), os.path.join(dst, "conceptwalk"))
    for d in installed:
        for so in glob.glob(os.path.join(d, "**", "*.so"), recursive=True) + glob.glob(
            os.path.join(d, "**", "*.pyd"), recursive=True
        ):
            rel = os.path.relpath(so, d)
            shutil.copy2(so, os.path.join(dst, "conceptwalk", rel))
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concepts", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--tree", action="append", default=[], metavar="LABEL=DIR")
    args = ap.parse_args(argv)

    from conceptwalk.kb import synthetic
    from conceptwalk.kb.store import KnowledgeBase

    work = tempfile.mkdtemp(prefix="bench_state_read.")
    try:
        db = os.path.join(work, "kb.sqlite")
        syn = synthetic.generate(args.concepts, seed=0)
        with KnowledgeBase.open(db) as kb:
            syn.write_to(kb)
        with KnowledgeBase.open(db) as kb:
            kb.state()  # the snapshot file, text index included
        trees: list[tuple[str, dict[str, str]]] = []
        for spec in args.tree or ["installed="]:
            label, _, d = spec.partition("=")
            env = dict(os.environ)
            if d:
                env["PYTHONPATH"] = _prepare(os.path.abspath(d), work, label)
                env["SKBUILD_EDITABLE_SKIP"] = "1"
            trees.append((label, env))
        got: dict[str, dict[str, list[float]]] = {label: {"state": [], "graph_context": []} for label, _ in trees}
        code = "QUESTION = " + repr(QUESTION) + "\n" + _WORKER
        for _ in range(args.rounds):
            for label, env in trees:
                out = subprocess.run(
                    [sys.executable, "-c", code, db, str(args.calls)],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                    cwd=work,
                )
                for k, v in json.loads(out.stdout).items():
                    got[label][k].append(v)
        print(f"{args.concepts} concepts, {args.rounds} alternating rounds, median of {args.calls} calls each")
        for label, _ in trees:
            st = got[label]["state"]
            gc = got[label]["graph_context"]
            print(
                f"  {label:>10}: kb.state() {statistics.median(st) * 1e6:7.2f} us "
                f"(rounds {min(st) * 1e6:.2f}-{max(st) * 1e6:.2f}); graph_context(kb, question) "
                f"{statistics.median(gc) * 1e3:7.3f} ms (rounds {min(gc) * 1e3:.3f}-{max(gc) * 1e3:.3f})"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
