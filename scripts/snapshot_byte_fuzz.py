"""Byte fuzzing of a saved graph snapshot: N trials of damage to the snapshot file of a small
scoped knowledge base, each answered by a fresh KnowledgeBase in a worker subprocess (so a crash
or a hang is counted, not fatal), and compared with the answers of a store with no snapshot.

    python scripts/snapshot_byte_fuzz.py [--trials 1000] [--seed 0] [--timeout 30]

Damage kinds: a bit flip anywhere in the file or inside one array (every array is chosen in
turn), a truncation, an overwrite of a run of bytes, and a *resealed* edit (one element of an
array set to a boundary or random value, the file rewritten with valid checksums: a forgery,
which only the structural checks can stop). Outcomes per trial:

- rebuilt: the file was refused (set aside with a warning) and the answers equal a rebuild's;
- accepted: the damage touched no byte an answer reads (e.g. padding) and the answers are equal;
- refused: a ConceptwalkError was raised;
- wrong: answers differ from a rebuild's (must be 0 for unsealed damage; for resealed edits a
  consistent forged file cannot be told from a real one and is reported separately);
- error: another exception type escaped; crash: the worker died; hang: no answer in time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_store(d: str) -> str:
    from conceptwalk.kb import KnowledgeBase

    p = os.path.join(d, "kb.db")
    rng = random.Random(7)
    with KnowledgeBase.create(p) as kb:
        nodes = []
        for i in range(60):
            sc = [["tenant-a"], ["tenant-c"], ["tenant-a", "tenant-c"], None][i % 4]
            nodes.append(
                {
                    "id": f"n{i:03d}",
                    "type": ["Doc", "Person", "Topic"][i % 3],
                    "title": f"title {i} salary é{i}" if i % 5 else None,
                    "body": f"body words salary {i % 7}",
                    "scopes": sc,
                    "lifecycle": ["active", "retired", None][i % 3],
                }
            )
        kb.add_nodes(nodes)
        edges = []
        for _ in range(150):
            a, b = rng.randrange(60), rng.randrange(60)
            edges.append(
                {
                    "src": f"n{a:03d}",
                    "dst": f"n{b:03d}",
                    "type": rng.choice(["CITES", "LINKS", "PART_OF"]),
                    "authority": rng.choice(["primary", "secondary", None]),
                    "extraction_confidence": rng.choice([0.5, 0.9, None]),
                }
            )
        kb.add_edges(edges)
        kb.graph()
        kb.search("salary")
    return p


def answers(p: str) -> str:
    """Everything the tests compare, as one JSON text."""
    from conceptwalk.errors import NotFoundError
    from conceptwalk.graph import Caller
    from conceptwalk.kb import KnowledgeBase

    with KnowledgeBase.open(p) as kb:
        g = kb.graph()
        arrs = g.to_arrays()
        out = {
            "arrays": {
                k: [str(v.dtype), v.shape[0] if v.ndim else 0, v.tobytes().hex()] for k, v in sorted(arrs.items())
            },
            "titles": [g.title(x) for x in g.ids],
        }
        for name, c, sc in (
            ("public", Caller.public(), []),
            ("a", Caller.with_scopes("tenant-a"), ["tenant-a"]),
            ("c", Caller.with_scopes("tenant-c"), ["tenant-c"]),
        ):
            out["search_" + name] = [[x, round(s, 9)] for x, s in kb.search("salary words", k=20, caller=c)]
            for a, b in (("n002", "n050"), ("n003", "n041")):
                try:
                    out[f"path_{name}_{a}"] = g.shortest_path(a, b, visible=g.visibility_for_scopes(sc))
                except NotFoundError:
                    out[f"path_{name}_{a}"] = "not found"
    return json.dumps(out, sort_keys=True, default=str)


def worker() -> None:
    """Read trial directories from stdin; print one JSON outcome per line."""
    from conceptwalk.errors import ConceptwalkError

    for line in sys.stdin:
        d = line.strip()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = answers(os.path.join(d, "kb.db"))
                kind = "ok"
            except ConceptwalkError as exc:
                got, kind = str(exc), "refused"
            except BaseException as exc:  # noqa: BLE001 - counted, not hidden
                got, kind = f"{type(exc).__name__}: {exc}", "error"
        set_aside = any("failed verification" in str(w.message) for w in caught)
        print(json.dumps({"kind": kind, "set_aside": set_aside, "answer": got}), flush=True)


def mutate(
    snap: bytes, rng: random.Random, trial: int, names: list[str], spans: dict[str, tuple[int, int]], reseal_path: str
) -> tuple[str, bytes | None]:
    """(description, new bytes); None bytes means: written by the resealing helper into reseal_path."""
    kind = trial % 5
    if kind == 0:  # a bit flip anywhere
        b = bytearray(snap)
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        return f"flip@{i}", bytes(b)
    if kind == 1:  # a bit flip inside one array, every array in turn
        name = names[(trial // 5) % len(names)]
        lo, hi = spans[name]
        b = bytearray(snap)
        i = rng.randrange(lo, hi)
        b[i] ^= 1 << rng.randrange(8)
        return f"flip:{name}@{i}", bytes(b)
    if kind == 2:
        n = rng.randrange(len(snap))
        return f"truncate@{n}", snap[:n]
    if kind == 3:  # overwrite a run of bytes
        b = bytearray(snap)
        i = rng.randrange(len(b))
        ln = rng.randrange(1, 64)
        val = rng.choice([0, 0xFF, None])
        for j in range(i, min(len(b), i + ln)):
            b[j] = rng.randrange(256) if val is None else val
        return f"overwrite@{i}+{ln}", bytes(b)
    return reseal(rng, trial, names, reseal_path), None


def reseal(rng: random.Random, trial: int, names: list[str], path: str) -> str:
    import numpy as np

    from conceptwalk.kb.snapshot import read_arrays, write_arrays

    meta, arrs = read_arrays(path)
    arrays = {k: np.array(v) for k, v in arrs.items()}
    name = names[(trial // 5) % len(names)]
    a = arrays[name].reshape(-1)
    if a.size == 0:
        arrays[name] = np.zeros(1, dtype=arrays[name].dtype)
        desc = f"reseal:{name}:grow"
    else:
        i = rng.randrange(a.size)
        if a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            v = rng.choice([info.min, info.max, -1, 0, 1, int(a[i]) + 1, int(a[i]) - 1, rng.randrange(-1000, 1000)])
            v = max(info.min, min(info.max, v))
        elif a.dtype.kind == "b":
            v = not bool(a[i])
        else:
            v = rng.choice([float("nan"), float("inf"), -1.0, 2.0])
        a[i] = v
        desc = f"reseal:{name}[{i}]={v}"
    write_arrays(path, arrays, meta)
    return desc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a trial may take before it counts as a hang")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (printed)")
    args = ap.parse_args(argv)
    import numpy as np  # noqa: F401

    from conceptwalk.kb.snapshot import read_arrays

    work = tempfile.mkdtemp(prefix="cw-snapfuzz-")
    base = os.path.join(work, "base")
    os.makedirs(base)
    p = make_store(base)
    snap_path = p + ".snapshot"
    with open(snap_path, "rb") as fh:
        snap = fh.read()
    ref_dir = os.path.join(work, "ref")
    os.makedirs(ref_dir)
    shutil.copy(p, os.path.join(ref_dir, "kb.db"))  # no snapshot: a rebuild
    reference = answers(os.path.join(ref_dir, "kb.db"))
    if answers(p) != reference:
        print("the undamaged snapshot does not answer like a rebuild", file=sys.stderr)
        return 1
    meta, arrs = read_arrays(snap_path)
    # each array's byte span in the file (offsets are relative to the data start)
    import struct

    dlen = struct.unpack_from("<8sIIQQ", snap)[3]
    data_start = -(-(32 + dlen) // 64) * 64
    with open(snap_path, "rb") as fh:
        fh.seek(32)
        entries = json.loads(fh.read(dlen))["arrays"]
    names = [k for k, v in arrs.items() if v.nbytes]
    spans = {k: (data_start + entries[k]["offset"], data_start + entries[k]["offset"] + arrs[k].nbytes) for k in names}
    names_all = list(arrs)
    rng = random.Random(args.seed)
    counts = {k: 0 for k in ("trials", "rebuilt", "accepted", "refused", "wrong", "error", "crash", "hang")}
    resealed = {
        k: 0 for k in ("trials", "rebuilt", "accepted_equal", "accepted_different", "refused", "error", "crash", "hang")
    }
    findings: list[str] = []
    forged: list[str] = []  # resealed edits accepted with other answers (consistent forgeries)
    env = dict(os.environ, PYTHONWARNINGS="default")
    proc: subprocess.Popen[str] | None = None

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    import selectors

    for t in range(args.trials):
        d = os.path.join(work, f"t{t % 8}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(p, os.path.join(d, "kb.db"))
        sp = os.path.join(d, "kb.db.snapshot")
        shutil.copy(snap_path, sp)
        desc, data = mutate(snap, rng, t, names if t % 5 != 4 else names_all, spans, sp)
        if data is not None:
            with open(sp, "wb") as fh:
                fh.write(data)
        sealed = data is None
        tally = resealed if sealed else counts
        tally["trials"] += 1
        if sealed:
            counts["trials"] += 0
        if proc is None or proc.poll() is not None:
            proc = start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(d + "\n")
        proc.stdin.flush()
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        ready = sel.select(args.timeout)
        sel.close()
        if not ready:
            proc.kill()
            proc.wait()
            proc = None
            tally["hang"] += 1
            findings.append(f"hang: {desc}")
            continue
        line = proc.stdout.readline()
        if not line:
            proc.wait()
            proc = None
            tally["crash"] += 1
            findings.append(f"crash: {desc}")
            continue
        r = json.loads(line)
        if r["kind"] == "refused":
            tally["refused"] += 1
        elif r["kind"] == "error":
            tally["error"] += 1
            findings.append(f"error: {desc}: {r['answer'][:200]}")
        elif r["answer"] == reference:
            tally["rebuilt" if r["set_aside"] else ("accepted_equal" if sealed else "accepted")] += 1
        elif sealed:
            tally["accepted_different"] += 1
            forged.append(desc)
        else:
            tally["wrong"] += 1
            findings.append(f"wrong: {desc}")
    if proc is not None and proc.stdin is not None:
        proc.stdin.close()
        proc.wait()
    print("unsealed damage (flips, truncations, overwrites):")
    print("  " + "  ".join(f"{k}={v}" for k, v in counts.items()))
    print("resealed edits (valid checksums, structural checks only):")
    print("  " + "  ".join(f"{k}={v}" for k, v in resealed.items()))
    for f in findings[:40]:
        print("  " + f)
    if forged:
        print("resealed edits accepted with different answers (first 15):")
        for f in forged[:15]:
            print("  " + f)
    if args.keep:
        print("work directory:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    bad = (
        counts["wrong"]
        + counts["error"]
        + counts["crash"]
        + counts["hang"]
        + resealed["error"]
        + resealed["crash"]
        + resealed["hang"]
    )
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker()
    else:
        sys.exit(main())
