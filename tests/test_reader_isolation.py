"""Readers are isolated from writers: one writer process loops writes (adds nodes and edges,
deletes them, changes scopes, titles and bodies, adds aliases) while a reader in this process
loops every read kind -- question-seeded and concept-seeded ``graph_context``, ``kb.search``,
``link_suggest``, the wrapped query (``ConceptAnchoredRetriever`` over ``builtin_flat_search`` with
``concept_walk=True``) and the same tools through the MCP dispatch (``ToolServer.call``). No read
may fail, and once the writer has stopped, the reader's answers (its long-lived store object and
caches) equal those of a fresh process that opens the store with its snapshot file deleted.

``scripts/reader_writer_soak.py`` runs the same machinery for longer and prints the counts.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from conceptwalk import Caller, graph_context, link_suggest
from conceptwalk.errors import NotFoundError
from conceptwalk.kb.store import KnowledgeBase

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX processes")

WORDS = (
    "graph walk rank page push residual seed concept alias cache snapshot store index search "
    "token scope tenant query answer budget edge node path hop degree vector text"
).split()
STABLE_CONCEPTS = 60  # never deleted nor hidden: concept-seeded reads of them must always answer
STABLE_DOCS = 150
CALLERS = {"all": Caller.all_access(), "public": Caller.public(), "team": Caller.with_scopes("team-a")}
KINDS = ("context_question", "context_concept", "search", "suggest", "wrap", "mcp_context", "mcp_query")


def _title(rng: random.Random, n: int = 3) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def seed_store(path: str, seed: int = 0) -> None:
    """The store the writer churns: stable concepts and documents, typed edges, aliases."""
    rng = random.Random(seed)
    concepts = [f"c:{i:03d}" for i in range(STABLE_CONCEPTS)]
    docs = [f"d:{i:03d}" for i in range(STABLE_DOCS)]
    with KnowledgeBase.create(path) as kb, kb.transaction():
        kb.add_nodes([{"id": c, "type": "CONCEPT", "title": _title(rng, 2)} for c in concepts])
        kb.add_nodes(
            [
                {
                    "id": d,
                    "type": "DOC",
                    "title": _title(rng),
                    "body": _title(rng, 12),
                    "scopes": ["team-a"] if i % 4 == 0 else None,
                }
                for i, d in enumerate(docs)
            ]
        )
        edges = []
        for i, c in enumerate(concepts):
            for j in rng.sample(range(STABLE_CONCEPTS), 3):
                if j != i:
                    edges.append({"src": c, "dst": concepts[j], "type": "RELATED_TO"})
        for d in docs:
            for c in rng.sample(concepts, 3):
                edges.append(
                    {
                        "src": c,
                        "dst": d,
                        "type": "EXPLAINED_BY",
                        "authority": "CANONICAL",
                        "extraction_method": "TAGGED_CONCEPT",
                        "extraction_confidence": 0.8,
                    }
                )
        kb.add_edges(edges)
        kb.add_aliases([(c.replace("c:", "alias"), c) for c in concepts[:20]])


def writer_main(path: str, seconds: float, seed: int) -> None:
    """Loop writes for ``seconds``; print one JSON line with the number of each kind written."""
    rng = random.Random(seed)
    concepts = [f"c:{i:03d}" for i in range(STABLE_CONCEPTS)]
    docs = [f"d:{i:03d}" for i in range(STABLE_DOCS)]
    mine: list[str] = []
    done = {"add": 0, "delete_nodes": 0, "delete_edges": 0, "scopes": 0, "text": 0, "alias": 0}
    kb = KnowledgeBase.open(path)
    print("ready", flush=True)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        op = rng.random()
        if op < 0.3 or len(mine) < 5:
            new = [f"w:{seed}:{n}:{j}" for j in range(3)]
            with kb.transaction():
                kb.add_nodes(
                    [
                        {
                            "id": x,
                            "type": rng.choice(["DOC", "CONCEPT"]),
                            "title": _title(rng),
                            "body": _title(rng, 8),
                            "scopes": rng.choice([None, ["team-a"], ["other"]]),
                        }
                        for x in new
                    ]
                )
                kb.add_edges(
                    [
                        {"src": rng.choice(concepts), "dst": x, "type": rng.choice(["EXPLAINED_BY", "RELATED_TO"])}
                        for x in new
                        for _ in range(2)
                    ]
                )
            mine += new
            done["add"] += 1
        elif op < 0.45:
            gone = [mine.pop(rng.randrange(len(mine))) for _ in range(2)]
            kb.delete_nodes(gone)
            done["delete_nodes"] += 1
        elif op < 0.55:
            c = rng.choice(concepts)
            kb.delete_edges([{"src": c, "dst": rng.choice(docs), "type": "EXPLAINED_BY"}])
            kb.add_edges([{"src": c, "dst": rng.choice(docs), "type": "EXPLAINED_BY"}])
            done["delete_edges"] += 1
        elif op < 0.75:
            kb.add_nodes([{"id": rng.choice(docs + mine), "scopes": rng.choice([None, ["team-a"], ["other"]])}])
            done["scopes"] += 1
        elif op < 0.95:
            kb.add_nodes([{"id": rng.choice(docs + mine), "title": _title(rng), "body": _title(rng, 10)}])
            done["text"] += 1
        else:
            kb.add_aliases([(rng.choice(WORDS) + str(n), rng.choice(concepts))])
            done["alias"] += 1
        n += 1
        time.sleep(0.002)  # let the reader in between writes (not a timing assertion)
    kb.close()
    print(json.dumps(done), flush=True)


class Reader:
    """Every read kind over one long-lived store object (its snapshot, text index and the wrap's
    caches follow the writer)."""

    def __init__(self, path: str, *, read_only: bool = False) -> None:
        from conceptwalk.serve.mcp import ToolServer
        from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

        self.kb = KnowledgeBase.open(path, read_only=read_only)
        self.retriever = ConceptAnchoredRetriever(builtin_flat_search(self.kb), self.kb)
        self.tools = ToolServer(self.kb, caller=Caller.all_access())

    def close(self) -> None:
        self.kb.close()

    def read(self, kind: str, i: int) -> Any:
        """Read number ``i`` of ``kind``: a JSON-ready answer (no timings)."""
        rng = random.Random(i)
        who = list(CALLERS)[i % len(CALLERS)]
        caller = CALLERS[who]
        question = _title(rng, 2)
        concept = f"c:{rng.randrange(STABLE_CONCEPTS):03d}"
        if kind == "context_question":
            return graph_context(self.kb, question, k=8, caller=caller).to_dict()
        if kind == "context_concept":
            return graph_context(self.kb, concepts=[concept], k=8, caller=caller).to_dict()
        if kind == "search":
            return self.kb.search(question, 8, caller=caller)
        if kind == "suggest":
            d = link_suggest(self.kb, concept, k=5, min_shared=1, caller=caller).to_dict()
            d.pop("elapsed_ms", None)
            return d
        if kind == "wrap":
            return self.retriever.query(question, 5, concept_walk=True, caller=caller)
        if kind == "mcp_context":
            out = self.tools.call("graph_context", {"question": question, "concepts": [concept], "k": 8})
        elif kind == "mcp_query":
            out = self.tools.call("query", {"text": question, "k": 5, "conceptWalk": True})
        else:
            raise AssertionError(kind)
        if out.is_error:
            raise RuntimeError(out.text)
        return out.structured

    def loop(self, stop: Any, reads: dict[str, int], failures: dict[str, list[str]]) -> None:
        """Read every kind in turn until ``stop()``; count reads, keep each failure's text."""
        i = 0
        while not stop():
            for kind in KINDS:
                try:
                    self.read(kind, i)
                except Exception as exc:  # any exception is a failed read
                    failures.setdefault(kind, []).append(f"{type(exc).__name__}: {exc}")
                reads[kind] = reads.get(kind, 0) + 1
            i += 1


def final_answers(reader: Reader, n: int = 12) -> str:
    """The answers of ``n`` reads of every kind, as one JSON text."""
    out = {}
    for kind in KINDS:
        got = []
        for i in range(n):
            try:
                got.append(reader.read(kind, i))
            except NotFoundError as exc:  # the same text on a rebuild
                got.append(["not found", str(exc)])
        out[kind] = got
    return json.dumps(out, sort_keys=True, default=str)


_FRESH = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, sys.argv[2])
    import test_reader_isolation as m
    path = sys.argv[1]
    if os.path.exists(path + ".snapshot"):
        os.unlink(path + ".snapshot")  # a rebuild from the rows, not the saved arrays
    r = m.Reader(path)
    sys.stdout.write(m.final_answers(r))
    r.close()
""")

_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[2])
    import test_reader_isolation as m
    m.writer_main(sys.argv[1], float(sys.argv[3]), int(sys.argv[4]))
""")


def fresh_answers(path: str) -> str:
    """``final_answers`` of a new process on the store with its snapshot file deleted."""
    r = subprocess.run(
        [sys.executable, "-c", _FRESH, path, os.path.dirname(os.path.abspath(__file__))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def soak(
    path: str, seconds: float, seed: int = 1, *, read_only: bool = False
) -> tuple[dict[str, int], dict[str, list[str]], dict[str, int], bool]:
    """Seed the store, run the writer process for ``seconds`` with the reader looping, then
    compare the reader's final answers with a fresh rebuild's. Returns (reads per kind, failures
    per kind, writes per kind, final answers equal)."""
    seed_store(path)
    reader = Reader(path, read_only=read_only)
    try:
        reader.read("wrap", 0)  # warm: the first reads build what later reads advance
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, path, os.path.dirname(os.path.abspath(__file__)), str(seconds), str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            raise AssertionError(f"writer did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        reads: dict[str, int] = {}
        failures: dict[str, list[str]] = {}
        reader.loop(lambda: proc.poll() is not None, reads, failures)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        writes = json.loads(out.strip().splitlines()[-1])
        mine = final_answers(reader)
    finally:
        reader.close()
    return reads, failures, writes, mine == fresh_answers(path)


def test_no_read_fails_while_another_process_writes(tmp_path):
    reads, failures, writes, equal = soak(str(tmp_path / "kb.db"), 6.0)
    assert sum(writes.values()) > 100, writes  # the writer really wrote while the reader read
    assert all(reads.get(k, 0) > 5 for k in KINDS), reads
    assert not failures, {k: (len(v), sorted(set(v))[:3]) for k, v in failures.items()}
    assert equal, "the reader's final answers differ from a fresh rebuild's"
