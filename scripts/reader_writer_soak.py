"""Readers under a writer, for longer than the test suite does: one writer process loops writes
(add nodes and edges, delete them, change scopes, titles and bodies, add aliases) for
``--seconds`` while this process loops every read kind over one long-lived store object --
question- and concept-seeded ``graph_context``, ``kb.search``, ``link_suggest``, the wrapped query
(``ConceptAnchoredRetriever`` over ``builtin_flat_search``, ``concept_walk=True``) and the
``graph_context`` and ``query`` tools through the MCP server's dispatch (``ToolServer.call``, what
``conceptwalk serve`` runs for each tool call). Then the reader's answers are compared with those
of a fresh process that opens the store with its snapshot file deleted.

Prints the reads, the failed reads (with their distinct messages) per kind, the writes per
kind and whether the final answers are equal; exits 1 when a read failed or they differ.

    python scripts/reader_writer_soak.py --seconds 20 [--read-only] [--runs 3]

The machinery is the test suite's (``tests/test_reader_isolation.py``), run from a checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import test_reader_isolation as soak_test  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the writer writes (default 20)")
    ap.add_argument("--runs", type=int, default=1, help="independent runs, each on a new store (default 1)")
    ap.add_argument("--read-only", action="store_true", help="the reader opens the store read_only=True")
    ap.add_argument("--seed", type=int, default=1, help="the writer's random seed (run i uses seed + i)")
    args = ap.parse_args(argv)
    bad = 0
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.monotonic()
            reads, failures, writes, equal = soak_test.soak(
                os.path.join(d, "kb.db"), args.seconds, args.seed + run, read_only=args.read_only
            )
            took = time.monotonic() - t0
        failed = sum(len(v) for v in failures.values())
        print(
            f"run {run + 1}: {took:.1f} s, writer {args.seconds:g} s, reader "
            f"{'read-only' if args.read_only else 'read-write'}"
        )
        print(f"  writes: {sum(writes.values())} {json.dumps(writes)}")
        print(f"  reads: {sum(reads.values())}, failed: {failed}")
        for kind in soak_test.KINDS:
            msgs = sorted(set(failures.get(kind, [])))
            print(
                f"    {kind:<17} reads {reads.get(kind, 0):>6}  failed {len(failures.get(kind, [])):>5}"
                + (f"  e.g. {msgs[0][:140]!r}" if msgs else "")
            )
        print(f"  final answers equal to a fresh rebuild's: {equal}")
        bad += failed + (not equal)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
