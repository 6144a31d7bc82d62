"""Fuzz the saved graph snapshot: the snapshot file of a small scoped store replaced by bytes
derived from the input, then the store opened and read as a fresh process would.

The file is one of (the first input byte chooses):

- the fuzzer's raw bytes;
- the real snapshot with bit flips at positions the input gives;
- the real snapshot truncated (possibly with bytes appended);
- the real snapshot with one element of one array set to a value the input gives, rewritten
  with valid checksums (a forgery, which only the structural checks can refuse).

For the first three the only allowed outcomes are answers equal to a rebuild's (graph arrays,
titles, searches for three callers) or a :class:`conceptwalk.ConceptwalkError`; for a resealed
edit any answer is allowed (a consistent forged file cannot be told from a real one) but still
only a ``ConceptwalkError`` may escape. A crash or a hang is always a finding.

Needs no atheris to replay (the input is decoded by hand).

Run: ``python fuzz/fuzz_snapshot.py fuzz/corpus/fuzz_snapshot -max_total_time=60``
Replay: ``python fuzz/fuzz_snapshot.py --replay fuzz/corpus/fuzz_snapshot``
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import instrumented, run  # noqa: E402

with instrumented():
    import numpy as np

    from conceptwalk import Caller
    from conceptwalk.errors import ConceptwalkError
    from conceptwalk.kb.snapshot import read_arrays, write_arrays
    from conceptwalk.kb.store import KnowledgeBase

_TMP = tempfile.mkdtemp(prefix="cw-fuzz-snapshot-")
_STATE: dict[str, object] = {}


def _answers(path: str) -> tuple[object, ...]:
    with KnowledgeBase.open(path) as kb:
        g = kb.graph()
        arrs = g.to_arrays()
        return (
            tuple((k, str(v.dtype), v.tobytes()) for k, v in sorted(arrs.items())),
            tuple(g.title(x) for x in g.ids),
            tuple(
                tuple(kb.search("note words", k=20, caller=c))
                for c in (Caller.public(), Caller.with_scopes("tenant-a"), Caller.with_scopes("tenant-c"))
            ),
        )


def state() -> dict[str, object]:
    """The template store, its snapshot's bytes and arrays, and a rebuild's answers (once)."""
    if not _STATE:
        base = os.path.join(_TMP, "base.db")
        with KnowledgeBase.create(base) as kb:
            kb.add_nodes(
                [
                    {
                        "id": f"n{i}",
                        "title": f"note {i}" if i % 4 else None,
                        "body": f"words {i % 3}",
                        "scopes": [["tenant-a"], ["tenant-c"], None][i % 3],
                        "type": ["A", "B"][i % 2],
                        "lifecycle": ["active", None][i % 2],
                    }
                    for i in range(12)
                ]
            )
            kb.add_edges(
                [
                    {
                        "src": f"n{i}",
                        "dst": f"n{(i * 5 + 1) % 12}",
                        "type": ["CITES", "LINKS"][i % 2],
                        "authority": ["primary", None][i % 2],
                        "extraction_confidence": 0.5 if i % 3 else None,
                    }
                    for i in range(12)
                ]
                + [("n2", "n2", "SELF")]
            )
            kb.graph()
            kb.search("note")
        with open(base + ".snapshot", "rb") as fh:
            _STATE["snapshot"] = fh.read()
        meta, arrs = read_arrays(base + ".snapshot")
        _STATE["meta"], _STATE["arrays"] = meta, {k: np.array(v) for k, v in arrs.items()}
        os.replace(base + ".snapshot", os.path.join(_TMP, "kept.snapshot"))
        _STATE["store"] = base
        _STATE["reference"] = _answers(base)  # rebuilt (no snapshot), which saves one again
        os.unlink(base + ".snapshot")
    return _STATE


def _int(data: bytes, at: int, size: int) -> int:
    chunk = data[at : at + size].ljust(size, b"\0")
    return int.from_bytes(chunk, "little")


def build_snapshot(path: str, data: bytes) -> bool:
    """Write the snapshot for ``data``; True when it was resealed (valid checksums)."""
    st = state()
    snap: bytes = st["snapshot"]  # type: ignore[assignment]
    mode = data[0] % 4 if data else 1
    body = data[1:]
    if mode == 0:
        out = body
    elif mode == 1:
        b = bytearray(snap)
        for j in range(0, max(len(body) - 3, 1), 4):
            pos = _int(body, j, 3) % len(b)
            b[pos] ^= (body[j + 3] if j + 3 < len(body) else 1) or 1
        out = bytes(b)
    elif mode == 2:
        out = snap[: _int(body, 0, 3) % (len(snap) + 1)] + body[3:]
    else:
        arrays = {k: v.copy() for k, v in st["arrays"].items()}  # type: ignore[union-attr]
        names = sorted(arrays)
        name = names[_int(body, 0, 1) % len(names)]
        a = arrays[name].reshape(-1)
        if a.size == 0:
            arrays[name] = np.zeros(1 + _int(body, 1, 1) % 3, dtype=a.dtype)
        else:
            i = _int(body, 1, 4) % a.size
            raw = body[5 : 5 + a.dtype.itemsize].ljust(a.dtype.itemsize, b"\0")
            a[i] = np.frombuffer(raw, dtype=a.dtype)[0]
        write_arrays(path, arrays, st["meta"])  # type: ignore[arg-type]
        return True
    with open(path, "wb") as fh:
        fh.write(out)
    return False


def target(data: bytes) -> None:
    st = state()
    d = os.path.join(_TMP, "case")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = os.path.join(d, "kb.db")
    shutil.copy(st["store"], path)  # type: ignore[arg-type]
    resealed = build_snapshot(path + ".snapshot", data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "failed verification ... set aside"
        try:
            got = _answers(path)
        except ConceptwalkError:
            return
    if not resealed:
        assert got == st["reference"], "a damaged snapshot gave answers that differ from a rebuild's"


if __name__ == "__main__":
    run(target)
