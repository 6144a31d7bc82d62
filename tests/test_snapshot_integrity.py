"""A saved graph snapshot is used only when it is provably the store's (issue 17): its identity
covers the history (a nonce per change-log row), every array is checksummed, only a regular file
is opened, a failing file is set aside and rebuilt from SQLite, a failed advance falls back to a
fresh build, and the file takes the store's permission bits."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from conceptwalk.graph import Caller
from conceptwalk.kb import SCHEMA_VERSION, KnowledgeBase
from conceptwalk.kb.snapshot import GraphSnapshot, read_arrays, read_graph, write_arrays


def _same_as_rebuild(kb: KnowledgeBase) -> None:
    got = kb.graph().to_arrays()
    with kb._read() as conn:  # noqa: SLF001 - the oracle reads the store directly
        fresh = read_graph(conn).to_arrays()
    assert sorted(got) == sorted(fresh)
    for k in got:
        assert np.array_equal(got[k], fresh[k], equal_nan=got[k].dtype.kind == "f"), k
    g = kb.graph()
    assert [g.title(x) for x in g.ids] == [read_graph(kb.conn).title(x) for x in g.ids]


def _scoped_store(p: str) -> None:
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes(
            [
                {"id": f"n{i}", "title": f"note {i}", "scopes": [["tenant-a"], ["tenant-c"], None][i % 3]}
                for i in range(30)
            ]
        )
        kb.add_edges(
            [
                {
                    "src": f"n{i}",
                    "dst": f"n{(i * 7) % 30}",
                    "type": ["CITES", "LINKS"][i % 2],
                    "authority": ["primary", None][i % 2],
                    "extraction_confidence": 0.5 if i % 3 else None,
                }
                for i in range(30)
            ]
        )
        kb.add_edges([("n1", "n1", "SELF")])
        kb.graph()
        kb.search("note")


def test_a_restored_backup_never_answers_from_the_newer_snapshot(tmp_path):
    # finding 2 of the issue, exactly: a public caller must not find the hr-scoped node
    p, backup = str(tmp_path / "kb.db"), str(tmp_path / "backup.db")
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": "x", "title": "salary table", "scopes": ["hr"]}, {"id": "y", "title": "lunch"}])
        kb.graph()
    shutil.copy(p, backup)
    with KnowledgeBase.open(p) as kb:
        kb.add_nodes([{"id": "x", "title": "salary table", "scopes": None}])
        assert [h[0] for h in kb.search("salary", caller=Caller.public())] == ["x"]
        kb.graph()
    assert os.path.exists(p + ".snapshot")
    shutil.copy(backup, p)  # the snapshot stays
    with KnowledgeBase.open(p) as kb:
        kb.add_nodes([{"id": "x", "title": "salary review", "scopes": ["hr"]}])
        assert kb.search("salary", caller=Caller.public()) == []
        assert kb.search("salary", caller=Caller.with_scopes("hr"))[0][0] == "x"
        assert kb.graph().title("x") == "salary review"
        _same_as_rebuild(kb)
    with KnowledgeBase.open(p) as kb:  # a fresh process too
        assert kb.search("salary", caller=Caller.public()) == [] and kb.graph().title("x") == "salary review"


def test_a_diverged_copy_with_the_same_uuid_never_matches(tmp_path):
    p, q = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    _scoped_store(p)
    shutil.copy(p, q)
    with KnowledgeBase.open(p) as kb:  # same number of changes on both copies, different rows
        kb.add_nodes([{"id": "n5", "title": "written in a", "scopes": ["tenant-a"]}])
        kb.graph()
        kb.close()
    with KnowledgeBase.open(q) as kb:
        kb.add_nodes([{"id": "n5", "title": "written in b", "scopes": None}])
    shutil.copy(p + ".snapshot", q + ".snapshot")  # a's snapshot beside b, at b's position
    with KnowledgeBase.open(q) as kb:
        assert kb.graph().title("n5") == "written in b"
        assert kb.search("written")[0][0] == "n5"
        _same_as_rebuild(kb)
    with KnowledgeBase.open(p) as kb:  # the position both agree on still serves a
        assert kb.graph().title("n5") == "written in a"


def test_a_matching_snapshot_is_still_used(tmp_path):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    with KnowledgeBase.open(p) as kb:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kb.graph()
        assert kb._keeper.file_version is not None  # noqa: SLF001 - mapped from the file, not rebuilt
        _same_as_rebuild(kb)


def _run(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("how", ["fifo", "symlink-to-fifo", "symlink-to-file", "directory"])
def test_a_non_regular_file_at_the_snapshot_path_never_hangs(tmp_path, how):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    sp = p + ".snapshot"
    good = str(tmp_path / "elsewhere.snapshot")
    os.replace(sp, good)
    if how == "fifo":
        os.mkfifo(sp)
    elif how == "symlink-to-fifo":
        os.mkfifo(str(tmp_path / "pipe"))
        os.symlink(str(tmp_path / "pipe"), sp)
    elif how == "symlink-to-file":
        os.symlink(good, sp)
    else:
        os.mkdir(sp)
    proc = _run(f"""
        import warnings
        from conceptwalk.kb import KnowledgeBase
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with KnowledgeBase.open({p!r}) as kb:
                print(kb.graph().num_nodes, any("failed verification" in str(x.message) for x in w))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["30", "True"]
    with KnowledgeBase.open(p) as kb:
        _same_as_rebuild(kb)


def _array_spans(sp: str) -> dict[str, tuple[int, int]]:
    import json
    import struct

    with open(sp, "rb") as fh:
        raw = fh.read()
    dlen = struct.unpack_from("<8sIIQQ", raw)[3]
    start = -(-(32 + dlen) // 64) * 64
    entries = json.loads(raw[32 : 32 + dlen])["arrays"]
    _, arrs = read_arrays(sp)
    return {
        k: (start + e["offset"], start + e["offset"] + arrs[k].nbytes) for k, e in entries.items() if arrs[k].nbytes
    }


def test_damage_to_any_array_is_set_aside_and_rebuilt(tmp_path):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    sp = p + ".snapshot"
    pristine = open(sp, "rb").read()
    spans = _array_spans(sp)
    families = {k.split(".")[0] + "." + k.split(".")[1] for k in spans}
    assert {
        "graph.core",
        "graph.ids",
        "graph.titles",
        "graph.scope_codes",
        "graph.ann",
        "loops.src",
        "text.vocab"
        if any(k.startswith("text.vocab") for k in spans)
        else next(k for k in spans if k.startswith("text.")),
    }.issubset(families | set(spans))
    for name, (lo, hi) in spans.items():
        b = bytearray(pristine)
        b[(lo + hi) // 2] ^= 0x10
        with open(sp, "wb") as fh:
            fh.write(b)
        with pytest.warns(RuntimeWarning, match="failed verification.*does not match its checksum"):
            kb = KnowledgeBase.open(p)
            g = kb.graph()
        try:
            assert not os.path.exists(sp) or open(sp, "rb").read() != bytes(b), name
            assert any(f.startswith("kb.db.snapshot.bad-") for f in os.listdir(tmp_path)), name
            _same_as_rebuild(kb)
            assert g.num_nodes == 30
        finally:
            kb.close()
        for f in os.listdir(tmp_path):
            if ".bad-" in f:
                os.unlink(tmp_path / f)


def _resealed(sp: str, name: str, edit) -> None:
    meta, arrs = read_arrays(sp)
    arrays = {k: np.array(v) for k, v in arrs.items()}
    edit(arrays[name])
    write_arrays(sp, arrays, meta)


@pytest.mark.parametrize(
    "name, edit",
    [
        ("graph.ids.offsets", lambda a: a.__setitem__(3, 1 << 40)),
        ("graph.titles.offsets", lambda a: a.__setitem__(2, a[-1] + 5)),
        ("graph.titles.data", lambda a: a.__setitem__(0, 0xFF)),  # not UTF-8
        ("graph.scope_codes", lambda a: a.__setitem__(0, 99)),
        ("graph.core.indices", lambda a: a.__setitem__(0, -5)),
        ("loops.type", lambda a: a.__setitem__(0, 77)),
        ("graph.edge_type_names.data", lambda a: a.__setitem__(0, ord("Z"))),  # names out of order
        ("graph.scope_names.data", lambda a: a.__setitem__(0, ord("z"))),  # "zenant-a" after "tenant-c"
    ],
)
def test_a_forged_file_with_valid_checksums_is_refused_by_the_structural_checks(tmp_path, name, edit):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    _resealed(p + ".snapshot", name, edit)
    with pytest.warns(RuntimeWarning, match="failed verification"):
        with KnowledgeBase.open(p) as kb:
            kb.graph()
            _same_as_rebuild(kb)


def test_a_failed_advance_falls_back_to_a_fresh_build(tmp_path, monkeypatch):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)

    def broken(self, conn, changes, version):
        raise ValueError("graph patch: type_lut must be strictly increasing over kept codes")

    monkeypatch.setattr(GraphSnapshot, "advance", broken)
    with KnowledgeBase.open(p) as kb:
        kb.graph()
        kb.delete_nodes(["n4"])
        with pytest.warns(RuntimeWarning, match="advancing it failed"):
            g = kb.graph()
        assert "n4" not in g.id_index
        _same_as_rebuild(kb)
        kb.delete_nodes(["n5"])  # in this process the cached snapshot advances (and fails) again
        assert "n5" not in kb.graph().id_index


def test_the_snapshot_takes_the_store_permissions(tmp_path):
    p = str(tmp_path / "kb.db")
    KnowledgeBase.create(p).close()
    os.chmod(p, 0o644)
    with KnowledgeBase.open(p) as kb:
        kb.add_edges([("a", "b")])
        kb.graph()
    assert stat.S_IMODE(os.stat(p + ".snapshot").st_mode) == 0o644


def test_a_zeroed_snapshot_is_the_snapshot_s_problem_not_the_store_s(tmp_path):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    size = os.path.getsize(p + ".snapshot")
    with open(p + ".snapshot", "r+b") as fh:
        fh.write(b"\0" * size)
    with pytest.warns(RuntimeWarning, match="graph snapshot .* failed verification"):
        with KnowledgeBase.open(p) as kb:
            _same_as_rebuild(kb)


def test_an_old_schema_store_opens_and_never_trusts_a_snapshot_without_a_nonce(tmp_path):
    p = str(tmp_path / "kb.db")
    _scoped_store(p)
    c = sqlite3.connect(p)  # make it a schema-2 store: no nonces
    c.executescript(
        "DROP TRIGGER changes_nonce; DROP TABLE change_nonces; PRAGMA user_version = 2; "
        "UPDATE meta SET value = 2 WHERE key = 'schema_version';"
    )
    c.close()
    kb = KnowledgeBase.open_read_only(p)
    try:
        assert kb.graph().num_nodes == 30
        assert kb._keeper.file_version is None  # noqa: SLF001 - rebuilt, not mapped
        _same_as_rebuild(kb)
    finally:
        kb.close()
    with KnowledgeBase.open(p) as kb:  # the writable open migrates: every old row gets a nonce
        assert kb.schema_version == SCHEMA_VERSION
        assert (
            kb.conn.execute(
                "SELECT count(*) FROM changes c LEFT JOIN change_nonces n ON n.seq = c.seq WHERE n.nonce IS NULL"
            ).fetchone()[0]
            == 0
        )
        _same_as_rebuild(kb)


def _rss_file_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("RssFile:"):
                return int(line.split()[1])
    raise LookupError("no RssFile")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc/self/status (Linux)")
def test_checking_a_file_does_not_leave_its_pages_resident(tmp_path):
    # Every array's checksum is read before it is used; the pages that read faulted in are handed
    # back (a 1M-concept snapshot is ~1.8 GB: kept resident, they made a fresh reader's RSS 3.5 GB).
    p = str(tmp_path / "big.snap")
    rng = np.random.default_rng(0)
    arrays = {f"a{i}": rng.integers(0, 2**31, size=8 << 20, dtype=np.int32) for i in range(3)}  # 3 x 32 MiB
    write_arrays(p, arrays, {})
    before = _rss_file_kib()
    _, got = read_arrays(p)
    grown = _rss_file_kib() - before
    assert grown < 16 * 1024, f"{grown} KiB of the 96 MiB file stayed resident after the check"
    for name, a in arrays.items():  # the arrays still read what was written (faulted in again)
        assert np.array_equal(got[name], a)
    assert _rss_file_kib() - before > 64 * 1024  # reading them does map them: the probe sees pages


_FRESH_READER = textwrap.dedent("""
    import json, sys
    def rss_file():
        for line in open("/proc/self/status"):
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024
    from conceptwalk.kb import KnowledgeBase
    kb = KnowledgeBase.open(sys.argv[1], read_only=True)
    before = rss_file()
    st = kb.state()
    assert st.graph.num_nodes > 0 and st.text_index is not None
    print(json.dumps({"grown": rss_file() - before, "nodes": st.graph.num_nodes}))
""")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc/self/status (Linux)")
def test_a_fresh_reader_does_not_keep_the_snapshot_file_resident(tmp_path):
    # Loading a state checks every array's checksum and validates the graph and the text index
    # through; none of that leaves the file's pages held by the reader (only what queries touch).
    from conceptwalk.kb.synthetic import generate

    db = str(tmp_path / "kb.db")
    with KnowledgeBase.create(db) as kb:
        generate(8000, seed=1).write_to(kb)
        kb.state()
    size = os.path.getsize(db + ".snapshot")
    assert size > 4 << 20
    r = subprocess.run([sys.executable, "-c", _FRESH_READER, db], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["grown"] < size // 4, (got, size)


def test_the_checksums_are_zlibs_whichever_crc_implementation_runs(tmp_path, monkeypatch):
    # The file's CRC-32s are zlib's values (ISA-L's crc32, used where installed, gives the same):
    # a file written with one implementation is read by the other.
    import zlib

    from conceptwalk.kb import snapshot

    p = str(tmp_path / "x.snap")
    a = np.arange(100_000, dtype=np.int64)
    write_arrays(p, {"a": a}, {"m": 1})
    raw = open(p, "rb").read()
    assert zlib.crc32(a.tobytes()) == snapshot._crc32(a.tobytes())
    head = snapshot._HEAD.unpack(raw[: snapshot._HEAD.size])
    assert head[2] == zlib.crc32(raw[snapshot._HEAD.size : snapshot._HEAD.size + head[3]])
    monkeypatch.setattr(snapshot, "_crc32", zlib.crc32)
    meta, got = read_arrays(p)
    assert meta == {"m": 1} and np.array_equal(got["a"], a)
