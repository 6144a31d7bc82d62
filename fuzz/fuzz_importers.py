"""Fuzz the importers: ``import_jsonl`` and ``import_edge_list`` on arbitrary bytes written to a
temporary file (``.jsonl``, ``.csv``, ``.tsv``, optionally gzip-compressed), into one store.

Only ValueError / IndexError / InputError / NotFoundError may escape. On an error the store must be
unchanged (same version, same node/edge/alias counts): an import is one transaction. After a
successful import the store's graph must build (the snapshot the readers use).

Run: ``python fuzz/fuzz_importers.py fuzz/corpus/fuzz_importers -max_total_time=60``
Replay: ``python fuzz/fuzz_importers.py --replay fuzz/corpus/fuzz_importers``
"""

from __future__ import annotations

import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import StoreCycle, check_accepted_import, check_failed_import, documented, instrumented, run, store_counts  # noqa: E402

with instrumented():
    from conceptwalk.errors import InputError
    from conceptwalk.kb.importers import import_edge_list, import_jsonl

ALLOWED = documented()
store = StoreCycle("cw-fuzz-importers-")
_TMP = store.tmp
counts = store_counts
SUFFIXES = [".jsonl", ".csv", ".tsv", ".txt", ".jsonl.gz", ".csv.gz", ".tsv.gz", ".tab"]


def target(data: bytes) -> None:
    if not data:
        return
    head, body = data[0], data[1:]
    suffix = SUFFIXES[head % len(SUFFIXES)]
    jsonl = suffix.startswith(".jsonl") or (suffix == ".txt" and head & 0x10)
    path = os.path.join(_TMP, "input" + suffix)
    if suffix.endswith(".gz"):
        # Half the time valid gzip of the bytes, half the time the raw bytes (a corrupt .gz).
        payload = gzip.compress(body, mtime=0) if head & 0x20 else body
    else:
        payload = body
    with open(path, "wb") as fh:
        fh.write(payload)
    kb = store()
    before = counts(kb)
    try:
        if jsonl:
            import_jsonl(kb, path)
        else:
            delimiter = [None, ",", "\t", ";", "|"][(head >> 4) % 5] if not suffix == ".txt" else None
            has_header = ["auto", True, False][(head >> 6) % 3]
            import_edge_list(kb, path, delimiter=delimiter, has_header=has_header)
    except ALLOWED as exc:
        # A bad file must give InputError naming the file ("<path>:<line>: ..."), and change
        # nothing in the store.
        assert isinstance(exc, InputError), (type(exc), exc)
        check_failed_import(kb, path, exc, before)
        return
    check_accepted_import(kb)


if __name__ == "__main__":
    run(target)
