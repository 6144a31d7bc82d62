"""Nothing lost, nothing partial: SIGKILL a writer process mid-import many times; after reopening,
every committed batch is there whole and no batch is there in part. The events JSONL sink never
leaves a torn line, whenever its writers are killed."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conceptwalk.kb.store import KnowledgeBase

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")

ITERATIONS = 15
NODES_PER_BATCH = 800
EDGES_PER_BATCH = 1600

_WRITER = textwrap.dedent("""
    import json, os, sys
    from conceptwalk.kb.importers import import_jsonl
    from conceptwalk.kb.store import KnowledgeBase
    db, workdir, it, n_nodes, n_edges = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    kb = KnowledgeBase.create(db)  # the first run makes the file
    b = 0
    while True:
        tag = f"i{it}b{b:03d}"
        path = os.path.join(workdir, f"{tag}.jsonl")
        with open(path, "w") as fh:
            for j in range(n_nodes):
                fh.write(json.dumps({"id": f"{tag}_{j}", "type": "CONCEPT", "title": f"node {j} of {tag}"}) + "\\n")
            for j in range(n_edges):
                fh.write(json.dumps({"src": f"{tag}_{j % n_nodes}", "dst": f"{tag}_{(j * 7 + 1 + j // n_nodes) % n_nodes}",
                                     "type": "REL", "extraction_confidence": 0.5}) + "\\n")
        if b == 0:
            print("ready", flush=True)
        import_jsonl(kb, path)
        sys.stdout.write(f"committed {tag}\\n")  # one write; a kill may still cut it short
        sys.stdout.flush()
        b += 1
""")


def _batch_counts(db: str) -> tuple[dict[str, int], dict[str, int], str]:
    kb = KnowledgeBase.open(db)
    try:
        c = kb.conn
        ok = c.execute("PRAGMA integrity_check").fetchone()[0]
        nodes = dict(c.execute("SELECT substr(id, 1, instr(id, '_') - 1), count(*) FROM nodes GROUP BY 1"))
        edges = dict(c.execute("SELECT substr(src, 1, instr(src, '_') - 1), count(*) FROM edges GROUP BY 1"))
        if nodes:
            kb.graph()  # the snapshot builds from whatever is there
    finally:
        kb.close()
    return nodes, edges, ok


def test_sigkill_mid_import_keeps_whole_batches_only(tmp_path):
    db = str(tmp_path / "kb.db")
    rng = random.Random(1234)
    committed: set[str] = set()
    killed_mid_batch = 0
    for it in range(ITERATIONS):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, db, str(tmp_path), str(it), str(NODES_PER_BATCH), str(EDGES_PER_BATCH)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            pytest.fail(f"writer did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(rng.uniform(0.0, 0.7))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        # Only whole report lines count: a SIGKILL can cut the last one short (that batch then
        # committed unreported, which the check below allows for one batch).
        done = {
            parts[1]
            for parts in (ln.split() for ln in out.split("\n")[:-1])
            if len(parts) == 2 and parts[0] == "committed"
        }
        committed |= done
        nodes, edges, ok = _batch_counts(db)
        assert ok == "ok"
        for tag, n in nodes.items():
            # Whole or absent: a partial batch would show a count between 0 and the full size.
            assert n == NODES_PER_BATCH, f"batch {tag} is partial: {n} of {NODES_PER_BATCH} nodes"
            assert edges.get(tag, 0) == EDGES_PER_BATCH, f"batch {tag} has {edges.get(tag, 0)} edges"
        assert set(edges) <= set(nodes)
        # Every batch the writer saw committed is there (one more may have committed unreported).
        assert committed <= set(nodes), sorted(committed - set(nodes))
        extra = set(nodes) - committed
        assert len([t for t in extra if t.startswith(f"i{it}b")]) <= 1
        killed_mid_batch += 1
    assert killed_mid_batch == ITERATIONS
    assert committed, "no batch ever committed: the kills came too early to test anything"


_EMITTER = textwrap.dedent("""
    import sys
    from conceptwalk.wrap.events import JsonlSink
    sink = JsonlSink(sys.argv[1])
    who = sys.argv[2]
    print("ready", flush=True)
    i = 0
    while True:
        sink.emit({"query": "q" * (i % 5000), "who": who, "i": i, "resolvedConcepts": [{"id": "c", "confidence": 1.0}] * (i % 40),
                   "walkContributed": bool(i % 2), "candidatesAdded": i % 7, "walkMs": 0.5})
        i += 1
""")


def test_events_sink_never_leaves_a_torn_line(tmp_path):
    from conceptwalk.wrap.events import JsonlSink, read_events

    path = str(tmp_path / "events.jsonl")
    rng = random.Random(99)
    for _ in range(6):
        procs = [
            subprocess.Popen([sys.executable, "-c", _EMITTER, path, f"w{k}"], stdout=subprocess.PIPE, text=True)
            for k in range(2)
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.4))
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.communicate(timeout=30)
        events, bad = read_events(path)
        assert bad == 0, f"{bad} torn or invalid lines"
        # A writer killed inside a large write may leave an unfinished last line (readers skip
        # it); the next write removes it, so no torn line ever stands in the middle of the file.
        JsonlSink(path).emit({"query": "after", "who": "parent", "i": -1})
        with open(path, "rb") as fh:
            data = fh.read()
        assert data.endswith(b"\n"), "the file ends in the middle of a line"
        for line in data.splitlines():
            json.loads(line)  # every line parses on its own
    assert len(events) > 100
    assert {e["who"] for e in events} >= {"w0", "w1"}


_SNAPSHOT_WRITER = textwrap.dedent("""
    import sys
    from conceptwalk.kb.store import KnowledgeBase
    db, it = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    b = 0
    while True:
        # every round: one transaction of changes (logged by the triggers), a read that brings
        # the snapshot forward, and a close that saves it (temporary file, fsync, rename)
        kb = KnowledgeBase.open(db)
        kb.SNAPSHOT_SAVE_EVERY = 1
        tag = f"s{it}r{b:04d}"
        with kb.transaction():
            kb.add_nodes([{"id": f"{tag}_{j}", "scopes": ["t"] if j % 2 else None} for j in range(200)])
            kb.add_edges([(f"{tag}_{j}", f"{tag}_{(j * 7 + 1) % 200}") for j in range(400)])
            kb.delete_nodes([f"{tag}_0"])
        kb.graph()
        kb.close()
        print("committed", tag, flush=True)
        b += 1
""")


def _reference_arrays(db: str) -> dict[str, bytes]:
    import json as _json
    import sqlite3

    from conceptwalk.graph import LinkGraph

    conn = sqlite3.connect(db)
    nodes = conn.execute("SELECT id, type, title, scopes, lifecycle FROM nodes ORDER BY id").fetchall()
    edges = conn.execute("SELECT src, dst, type FROM edges").fetchall()
    conn.close()
    pos = {r[0]: i for i, r in enumerate(nodes)}
    g = LinkGraph.from_arrays(
        [r[0] for r in nodes],
        [pos[e[0]] for e in edges],
        [pos[e[1]] for e in edges],
        [e[2] for e in edges],
        node_types=[r[1] for r in nodes],
        titles=[r[2] for r in nodes],
        scopes=[None if r[3] is None else _json.loads(r[3]) for r in nodes],
        lifecycle=[r[4] for r in nodes],
    )
    return {k: v.tobytes() for k, v in g.to_arrays().items()}


def test_sigkill_while_logging_changes_and_saving_the_snapshot(tmp_path):
    """Kill a writer anywhere in (transaction with its change-log rows, advance, snapshot save):
    the change log has no gap, the snapshot file is either whole and valid or ignored, and the
    next reader's graph equals a fresh build of what was committed."""
    from conceptwalk.kb.snapshot import SnapshotError, read_arrays

    db = str(tmp_path / "kb.db")
    with KnowledgeBase.create(db) as kb:
        kb.add_edges([("root", "x")])
        kb.graph()
    rng = random.Random(99)
    saw_file = 0
    for it in range(10):
        proc = subprocess.Popen(
            [sys.executable, "-c", _SNAPSHOT_WRITER, db, str(it)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            proc.kill()
            pytest.fail(f"writer did not start: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(rng.uniform(0.3, 1.2))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        snap = db + ".snapshot"
        if os.path.exists(snap):
            try:
                meta, arrays = read_arrays(snap)  # never torn: the rename is atomic
            except SnapshotError as exc:  # pragma: no cover - would be a bug
                pytest.fail(f"torn snapshot file: {exc}")
            assert "graph.core.indices" in arrays
            saw_file += 1
        with KnowledgeBase.open(db) as kb:
            c = kb.conn
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            seq = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()[0]
            assert c.execute("SELECT count(*), min(seq), max(seq) FROM changes").fetchone() == (seq, 1, seq)
            got = {k: v.tobytes() for k, v in kb.graph().to_arrays().items() if not k.startswith("ann.")}
            assert got == _reference_arrays(db)
        for ln in out.split("\n")[:-1]:  # whole lines only: the kill can cut the last one short
            parts = ln.split()
            if len(parts) == 2 and parts[0] == "committed":
                tag = parts[1]
                with KnowledgeBase.open(db) as kb:
                    assert kb.node(f"{tag}_1") is not None and kb.node(f"{tag}_0") is None
    assert saw_file


# --------------------------------------------------------------------------- bulk loads, killed
BULK_NODES = 12_000
BULK_EDGES = 40_000

_BULK_LOADER = textwrap.dedent("""
    import sys
    from conceptwalk.kb.importers import import_jsonl
    from conceptwalk.kb.store import KnowledgeBase
    kb = KnowledgeBase.create(sys.argv[1])  # a new file: the load runs with the rollback journal
    print("ready", flush=True)
    import_jsonl(kb, sys.argv[2])
    print("committed", flush=True)
    kb.close()
""")

# One fresh process, after the kill: a read-only open first (before anything rolls the journal
# back), then a normal open, then a read-only open again. Each reports what it saw.
_BULK_PROBE = textwrap.dedent("""
    import json, sys
    from conceptwalk.errors import ConceptwalkError
    from conceptwalk.kb.store import KnowledgeBase
    out = []
    for ro in (True, False, True):
        try:
            kb = KnowledgeBase.open(sys.argv[1], read_only=ro)
        except ConceptwalkError as exc:
            out.append(["refused", str(exc)])
            continue
        try:
            st = kb.stats()
            ok = kb.conn.execute("PRAGMA quick_check").fetchone()[0]
            hits = len(kb.search("word7", 5)) if st["nodes"] else 0
            g = kb.graph() if st["nodes"] else None
            out.append(["rows", st["nodes"], st["edges"], ok, hits, None if g is None else g.num_nodes])
        except ConceptwalkError as exc:
            out.append(["failed", str(exc)])
        finally:
            kb.close()
    print(json.dumps(out))
""")


def _bulk_source(path: str) -> None:
    with open(path, "w") as fh:
        for i in range(BULK_NODES):
            fh.write(json.dumps({"id": f"n{i}", "type": "CONCEPT", "title": f"node {i} word{i % 97}"}) + "\n")
        for j in range(BULK_EDGES):
            fh.write(
                json.dumps(
                    {
                        "src": f"n{j % BULK_NODES}",
                        "dst": f"n{(j * 7919 + 1 + j // BULK_NODES) % BULK_NODES}",
                        "type": "REL",
                    }
                )
                + "\n"
            )


def _kill_bulk_load(db: str, src: str, point: str | float, final_size: int) -> tuple[bool, bool]:
    """Start a bulk load into the new file ``db`` and SIGKILL it at ``point``: a delay in seconds
    after it opened the store, or ``"final"``: as soon as the file has reached its final size while
    the ``-journal`` still exists (inside the commit). Returns (journal existed, load committed)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _BULK_LOADER, db, src], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        pytest.fail(f"loader did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    if point == "final":
        deadline = time.monotonic() + 60
        while not (os.path.exists(db + "-journal") and os.path.getsize(db) >= final_size):
            assert proc.poll() is None, "the load ended before the kill point was seen"
            assert time.monotonic() < deadline
            time.sleep(0.001)
    else:
        time.sleep(float(point))
    journal = os.path.exists(db + "-journal")
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode in (-signal.SIGKILL, 0)  # 0: it had already finished (a late point)
    assert proc.returncode == -signal.SIGKILL or "committed" in out
    return journal, "committed" in out


def test_sigkill_during_a_bulk_load_then_reopen(tmp_path):
    """SIGKILL a bulk load into a new file at points across it (the commit included: the file at
    its final size while the rollback journal still exists), then open it from a fresh process,
    read-only first: every open that succeeds sees none of the load or all of it, a normal open
    always succeeds (it rolls the hot journal back), and a read-only open either sees the same or
    is refused with the hot-journal message -- never the uncommitted pages."""
    src = str(tmp_path / "src.jsonl")
    _bulk_source(src)
    ref = str(tmp_path / "ref.db")
    proc = subprocess.Popen([sys.executable, "-c", _BULK_LOADER, ref, src], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    assert proc.stdout.readline().strip() == "committed"
    took = time.monotonic() - t0  # the load itself, from the open store to its commit
    proc.communicate(timeout=60)
    final_size = os.path.getsize(ref)
    points: list[str | float] = ["final", 0.0, "final"] + [round(took * f, 3) for f in (0.15, 0.4, 0.7, 0.9, 1.2)]
    outcomes = []
    refused = 0
    for i, point in enumerate(points):
        db = str(tmp_path / f"kill{i}.db")
        journal, committed = _kill_bulk_load(db, src, point, final_size)
        r = subprocess.run([sys.executable, "-c", _BULK_PROBE, db], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        seen = json.loads(r.stdout)
        outcomes.append((point, journal, committed, seen))
        first_ro, normal, second_ro = seen
        # The normal open always opens, rolled back (nothing) or committed (everything).
        assert normal[0] == "rows", (point, normal)
        n, m, ok = normal[1:4]
        assert ok == "ok"
        assert (n, m) in ((0, 0), (BULK_NODES, BULK_EDGES)), f"kill at {point}: a partial load {n}, {m}"
        if committed:
            assert n == BULK_NODES
        if n:
            assert normal[4] == 5 and normal[5] == BULK_NODES  # searchable and its graph builds
        # Read-only: the same as the normal open, or (before any writer opened it, a hot journal
        # beside it) refused with the message saying so.
        if first_ro[0] == "refused":
            refused += 1
            assert "has a hot journal" in first_ro[1] and journal, (point, first_ro)
            # What was refused was an uncommitted transaction: the load (none of it is seen) or,
            # after the load committed, the switch back to WAL mode, which writes the file's header
            # through the rollback journal too (all of it is seen; seen once under load). Either
            # way the normal open above saw none or all of the load.
        else:
            assert first_ro[:4] == normal[:4], (point, first_ro, normal)
        assert second_ro[:4] == normal[:4], (point, second_ro, normal)
        assert not os.path.exists(db + "-journal")
    # the commit window was hit (the file at full size, the journal hot) at least once
    assert refused >= 1, outcomes


def test_hot_journal_read_only_refused_normal_open_rolls_back(tmp_path):
    """The commit window, made deterministically (tests/hot_journal.py): a file holding spilled
    uncommitted pages and a hot journal. A read-only open refuses (it can neither roll back nor
    read past the journal; immutable=1 would serve the uncommitted pages) and changes nothing; a
    normal open rolls it back and sees the committed rows only; read-only opens then work."""
    from conceptwalk.errors import ConceptwalkError
    from hot_journal import hot_journal_copy

    hot = str(tmp_path / "hot.db")
    committed = hot_journal_copy(tmp_path / "kb.db", hot)
    before = (open(hot, "rb").read(), open(hot + "-journal", "rb").read())
    for _ in range(2):
        with pytest.raises(ConceptwalkError, match="has a hot journal"):
            KnowledgeBase.open(hot, read_only=True)
    assert (open(hot, "rb").read(), open(hot + "-journal", "rb").read()) == before  # nothing written
    with KnowledgeBase.open(hot) as kb:
        assert kb.stats()["nodes"] == committed == 1
        assert kb.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [i for i, _ in kb.search("committed")] == ["committed"]
    assert not os.path.exists(hot + "-journal")
    with KnowledgeBase.open(hot, read_only=True) as ro:
        assert ro.stats()["nodes"] == 1 and not ro.immutable
