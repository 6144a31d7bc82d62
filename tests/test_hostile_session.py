"""Hostile checks of this session's changes: the compiled path rendering (``render_paths``) under
callbacks that mutate its inputs, the page release on mappings that are not the snapshot file's
read-only one, and the CRC-32 implementation against zlib's."""

from __future__ import annotations

import gc
import mmap
import os
import subprocess
import sys
import threading
import tracemalloc
import zlib

import numpy as np
import pytest

from conceptwalk.kb import snapshot as snap
from conceptwalk.kb.snapshot import read_arrays, release_pages, write_arrays
from conceptwalk.wrap.walk import Provenance

sys.path.insert(0, os.path.dirname(__file__))
from test_walk_render import _case, _core_walk, reference_paths  # noqa: E402


def _walk_with_paths(min_paths: int = 1):
    for seed in range(200):
        g, vm, cfg, starts = _case(seed, False, 2)
        if not starts:
            continue
        r = _core_walk(g, vm, cfg, starts)
        n = len(r.candidates)
        if n and sum(len(h) for h in [r.path_hops.tolist()]) and int(r.path_hops.max()) >= 1:
            if len(r.path_hops) >= min_paths:
                return g, r
    raise AssertionError("no walk with hops found")


# ------------------------------------------------------------------ render_paths


def test_a_miss_callback_that_empties_ids_is_refused_not_read_out_of_bounds():
    # provenance_miss runs Python code in the middle of the rendering: it can shrink the ids list
    # whose size was checked once up front; the rendering must not read past the list's items.
    g, r = _walk_with_paths()
    ids = list(g.ids)
    prov = Provenance(g, None)

    def miss(e):
        ids.clear()
        return prov.edge(e)

    with pytest.raises((ValueError, RuntimeError, IndexError)):
        r.render_paths(g.core, list(range(len(r.candidates))), ids, g.edge_type_names, {}, miss)


def test_a_miss_callback_that_empties_ids_does_not_crash_the_process():
    # the same in a child process: no segfault, whatever the outcome
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from test_hostile_session import _walk_with_paths\n"
        "from conceptwalk.wrap.walk import Provenance\n"
        "g, r = _walk_with_paths()\n"
        "prov = Provenance(g, None)\n"
        "for _ in range(200):\n"
        "    ids = [str(i) * 50 for i in g.ids]\n"
        "    def miss(e, ids=ids):\n"
        "        ids.clear(); [bytearray(4096) for _ in range(50)]\n"
        "        return prov.edge(e)\n"
        "    try:\n"
        "        r.render_paths(g.core, list(range(len(r.candidates))), ids, g.edge_type_names, {}, miss)\n"
        "    except Exception:\n"
        "        pass\n"
    )
    p = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, timeout=300)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])


def test_a_miss_callback_that_mutates_the_cache_or_raises():
    g, r = _walk_with_paths()
    n = len(r.candidates)
    prov = Provenance(g, None)
    want = [reference_paths(g, r, i, Provenance(g, None)) for i in range(n)]
    cache: dict = {}

    def miss(e):  # fills then clears the cache it is read from, adds junk keys
        got = prov.edge(e)
        cache.clear()
        cache["junk"] = 1
        cache[10**30] = got
        return got

    assert r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, cache, miss) == want

    class Boom(Exception):
        pass

    def raiser(e):
        raise Boom

    with pytest.raises(Boom):
        r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, {}, raiser)

    # odd but valid objects: dict subclasses, non-str keys
    class D(dict):
        pass

    def odd(e):
        return (D({1: "x", "k": D(a=1)}), D())

    out = r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, {}, odd)
    hops = [h for ps in out for p in ps for h in p["hops"]]
    assert hops and all(h[1] == "x" and h["k"] == {"a": 1} and type(h["k"]) is dict for h in hops)


def test_a_rendered_answer_mutated_by_the_user_does_not_change_the_next_one():
    g, r = _walk_with_paths()
    n = len(r.candidates)
    prov = Provenance(g, None)
    first = r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, prov.cache, prov.edge)
    want = [reference_paths(g, r, i, Provenance(g, None)) for i in range(n)]
    for ps in first:
        for p in ps:
            p["nodes"].append("x")
            for h in p["hops"]:
                for k, v in list(h.items()):
                    if isinstance(v, dict):
                        v["junk"] = 1
                    h[k] = "junk"
    again = r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, prov.cache, prov.edge)
    assert again == want


def test_render_paths_does_not_leak():
    g, r = _walk_with_paths()
    n = len(r.candidates)
    prov = Provenance(g, None)
    slots = list(range(n))

    def go(k):
        for _ in range(k):
            r.render_paths(g.core, slots, g.ids, g.edge_type_names, prov.cache, prov.edge)
            try:
                r.render_paths(g.core, slots, g.ids, g.edge_type_names, {}, lambda e: 1 / 0)
            except ZeroDivisionError:
                pass

    go(200)
    gc.collect()
    tracemalloc.start()
    go(2000)
    gc.collect()
    a = tracemalloc.take_snapshot()
    go(20000)
    gc.collect()
    b = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in b.compare_to(a, "filename"))
    assert grown < 200_000, grown


def test_two_threads_rendering_with_one_provenance():
    g, r = _walk_with_paths()
    n = len(r.candidates)
    prov = Provenance(g, None)
    want = [reference_paths(g, r, i, Provenance(g, None)) for i in range(n)]
    errors: list = []

    def work():
        try:
            for _ in range(300):
                local = prov
                got = r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, local.cache, local.edge)
                if got != want:
                    errors.append("differs")
                local.cache.clear()
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]


def test_non_str_type_names_are_rendered_as_given_or_refused():
    g, r = _walk_with_paths()
    n = len(r.candidates)
    prov = Provenance(g, None)
    names = [object() for _ in g.edge_type_names]
    out = r.render_paths(g.core, list(range(n)), g.ids, names, prov.cache, prov.edge)
    assert all(h["type"] in names for ps in out for p in ps for h in p["hops"])


# ------------------------------------------------------------------ release_pages


def test_release_pages_keeps_a_private_mappings_contents():
    # an array on a private writable mapping (np.memmap mode "c", an anonymous MAP_PRIVATE map):
    # MADV_DONTNEED would throw its written pages away (zeros, or the file's old bytes)
    mm = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE)
    a = np.frombuffer(mm, dtype=np.int64)
    a[:] = 7
    release_pages([a])
    assert int(a.sum()) == 7 * a.size


def test_release_pages_keeps_a_copy_on_write_memmaps_contents(tmp_path):
    p = tmp_path / "x.bin"
    np.arange(1 << 17, dtype=np.int64).tofile(p)
    a = np.memmap(p, dtype=np.int64, mode="c")
    a[:] = -1
    release_pages([a])
    assert int(a.min()) == -1 and int(a.max()) == -1


def test_a_snapshot_read_released_and_read_again_is_unchanged(tmp_path):
    p = str(tmp_path / "x.snap")
    rng = np.random.default_rng(0)
    want = {"a": rng.integers(0, 1 << 40, 3 << 20), "b": rng.random(1000)}
    write_arrays(p, want, {})
    for _ in range(3):
        _, arrs = read_arrays(p)
        release_pages(arrs.values())
        errs = []

        def q(arrs=arrs):
            for _ in range(20):
                if not np.array_equal(arrs["a"], want["a"]):
                    errs.append(1)

        ts = [threading.Thread(target=q) for _ in range(2)]
        for t in ts:
            t.start()
        for _ in range(20):
            release_pages(arrs.values())
        for t in ts:
            t.join()
        assert not errs and np.array_equal(arrs["b"], want["b"])


# ------------------------------------------------------------------ CRC-32


@pytest.mark.parametrize("n", [0, 1, 3, 15, 16, 17, 63, 64, 65, 4095, 4096, 1 << 20, (1 << 20) + 7])
def test_the_crc_is_zlibs(n):
    buf = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    assert snap._crc32(buf) == zlib.crc32(buf)
    assert snap._crc(buf) == zlib.crc32(buf)
    mv = memoryview(buf)
    for lo, hi in ((1, n - 1), (n // 3, n), (0, n // 2)):
        if 0 <= lo <= hi:
            assert snap._crc32(mv[lo:hi], 12345) == zlib.crc32(mv[lo:hi], 12345)
    # a non-contiguous buffer: both refuse it the same way (or agree)
    arr = np.frombuffer(buf, np.uint8)[::2]
    try:
        z = zlib.crc32(arr)
    except (BufferError, TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            snap._crc32(arr)
    else:
        assert snap._crc32(arr) == z


def test_without_isal_the_zlib_fallback_reads_and_writes_the_same_files(tmp_path):
    p = str(tmp_path / "x.snap")
    write_arrays(p, {"a": np.arange(100_000)}, {"m": 1})
    code = (
        "import sys, numpy as np\n"
        "sys.modules['isal'] = None; sys.modules['isal.isal_zlib'] = None\n"
        "import zlib\n"
        "from conceptwalk.kb import snapshot as s\n"
        "assert s._crc32 is zlib.crc32, s._crc32\n"
        "meta, a = s.read_arrays(sys.argv[1])\n"
        "assert int(a['a'].sum()) == 4999950000\n"
        "s.write_arrays(sys.argv[1] + '.2', {'a': np.arange(7)}, {})\n"
    )
    r = subprocess.run([sys.executable, "-c", code, p], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    _, a = read_arrays(p + ".2")
    assert a["a"].tolist() == list(range(7))


def test_rendered_with_a_repeated_candidate_after_the_walk_rendered_it():
    # the walk's own rendering is handed out once (popped): a repeated candidate must still get
    # its paths (as it does without the walk's rendering), each a new object
    from test_walk_render import _render

    from conceptwalk.wrap.walk import run_walk

    for seed in range(60):
        g, vm, cfg, starts = _case(seed, False, 2)
        if not starts:
            continue
        out = run_walk(g, starts, cfg, vm, Provenance(g, None), render_except=[])
        if not out.candidates:
            continue
        c = out.candidates[0]
        plain = _core_walk(g, vm, cfg, starts)
        want = _render(plain, g, [0], Provenance(g, None))[0]
        got = out.rendered([c, c])
        assert got == [want, want]
        assert got[0] is not got[1]
        return
    raise AssertionError("no case with candidates")


def test_released_arrays_keep_the_old_contents_when_the_file_is_replaced(tmp_path):
    # the store replaces a snapshot file by rename: a reader that released its pages faults them
    # back in from its own (old) inode, never the new file's bytes
    p = str(tmp_path / "x.snap")
    write_arrays(p, {"a": np.arange(1 << 20, dtype=np.int64)}, {})
    _, arrs = read_arrays(p)
    assert release_pages(arrs.values()) >= 8 << 20
    write_arrays(p, {"a": np.zeros(1 << 20, dtype=np.int64)}, {})
    assert np.array_equal(arrs["a"], np.arange(1 << 20))
    _, new = read_arrays(p)
    assert not new["a"].any()
