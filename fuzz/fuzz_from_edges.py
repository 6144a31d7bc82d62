"""Fuzz graph construction: ``LinkGraph.from_edges`` (tuples, dicts, numpy arrays of any dtype and
shape), ``LinkGraph.from_arrays`` (arbitrary columns) and the raw ``_core.CSRGraph.from_edges``.

Only ValueError / IndexError / InputError / NotFoundError may escape. Every graph that is built
is checked against the CSR invariants of DESIGN.md (sorted symmetric rows, no self-loops, indices
in range, node index = rank of the id), so a silently wrong graph is a finding too.

Run: ``python fuzz/fuzz_from_edges.py fuzz/corpus/fuzz_from_edges -max_total_time=60``
Replay: ``python fuzz/fuzz_from_edges.py --replay fuzz/corpus/fuzz_from_edges``
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import documented, instrumented, run  # noqa: E402

with instrumented():
    import numpy as np

    from conceptwalk import LinkGraph, _core

ALLOWED = documented()
NAMES = ["a", "b", "c", "d", "e", "", " ", "a\x00b", "é", "🙂", "10", "2", "LINK", "x" * 40]
DTYPES = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
    np.bool_,
    np.complex64,
    object,
    "U3",
]
#: What the raw core's ``array_t<int32, forcecast>`` parameters accept (anything else is a
#: pybind11 overload TypeError, i.e. a wrong call rather than a bad value).
NUMERIC = DTYPES[:-2]


def name(fdp) -> str:
    if fdp.ConsumeBool():
        return NAMES[fdp.ConsumeIntInRange(0, len(NAMES) - 1)]
    return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 6))


def scalar(fdp):
    kind = fdp.ConsumeIntInRange(0, 6)
    if kind == 0:
        return None
    if kind == 1:
        return fdp.ConsumeIntInRange(-3, 300)
    if kind == 2:
        return fdp.ConsumeRegularFloat() if fdp.ConsumeBool() else fdp.ConsumeFloat()
    if kind == 3:
        return [name(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    if kind == 4:
        return fdp.ConsumeBool()
    return name(fdp)


def array(fdp, length: int, lo: int, hi: int, dtypes=DTYPES):
    """A column: mostly integers in [lo, hi], sometimes of another dtype, shape or length."""
    shape_kind = fdp.ConsumeIntInRange(0, 9)
    if shape_kind == 0:
        length = fdp.ConsumeIntInRange(0, length + 2)
    vals = [fdp.ConsumeIntInRange(lo, hi) for _ in range(length)]
    dt = dtypes[fdp.ConsumeIntInRange(0, len(dtypes) - 1)] if fdp.ConsumeIntInRange(0, 3) == 0 else np.int64
    try:
        a = np.array(vals, dtype=np.int64).astype(dt)
    except (OverflowError, ValueError):
        a = np.array(vals, dtype=np.int64)
    if shape_kind == 1 and a.size % 2 == 0:
        a = a.reshape(-1, 2) if a.size else a.reshape(0, 2)
    if shape_kind == 2:
        a = a[::2]  # non-contiguous view
    if shape_kind == 3 and length:
        a = np.asfortranarray(np.stack([a, a]))[0]
    return a


def check_core(core, n: int) -> None:
    indptr = np.asarray(core.indptr)
    indices = np.asarray(core.indices)
    assert core.num_nodes == n, (core.num_nodes, n)
    assert indptr.shape == (n + 1,) and indptr[0] == 0 and indptr[-1] == indices.shape[0]
    assert np.all(np.diff(indptr) >= 0)
    for u in range(n):
        row = indices[indptr[u] : indptr[u + 1]]
        assert np.all((row >= 0) & (row < n)), row
        assert np.all(np.diff(row) > 0), ("row not strictly ascending", u, row)
        assert not np.any(row == u), ("self-loop kept", u)
        for v in row.tolist():
            assert core.find_entry(v, u) >= 0, ("asymmetric", u, v)
    assert core.num_pairs * 2 == indices.shape[0]
    pair_ptr = np.asarray(core.pair_ptr)
    assert pair_ptr[-1] == core.num_edges


def check_graph(g: LinkGraph) -> None:
    assert g.ids == sorted(g.ids) and len(set(g.ids)) == len(g.ids)
    check_core(g.core, len(g.ids))
    assert g.edge_src.shape == g.edge_dst.shape == (g.num_edges,)
    assert np.all(g.edge_src != g.edge_dst)
    for s, d in zip(g.edge_src.tolist()[:50], g.edge_dst.tolist()[:50]):
        assert g.edges_between(s, d), (s, d)


def patch(fdp, core, n: int, src, dst, typ, canon) -> None:
    """``CSRGraph.patched`` of a built core: mostly a consistent change (then the result must equal a
    fresh build of the edges it should hold), sometimes hostile arrays (then only ValueError)."""
    n_old = n
    if core.num_edge_types > 4096:  # type codes up to 2^29 are valid; a lut that long is not the point
        return
    keep = [fdp.ConsumeIntInRange(0, 4) != 0 for _ in range(n_old)]
    kept = [u for u in range(n_old) if keep[u]]
    n_new = len(kept) + fdp.ConsumeIntInRange(0, 3)
    slots = sorted(fdp.ConsumeIntInRange(0, n_new - 1) for _ in range(len(kept))) if n_new else []
    remap = np.full(n_old, -1, dtype=np.int64)
    for u, sl in zip(kept, sorted(set(slots)) + [None] * len(kept)):
        remap[u] = -1 if sl is None else sl
    ntypes = core.num_edge_types
    type_lut = np.arange(ntypes, dtype=np.int64) + (np.arange(ntypes) >= fdp.ConsumeIntInRange(0, max(ntypes, 1)))
    drop = (
        np.unique(
            np.array(
                [fdp.ConsumeIntInRange(0, max(core.num_edges - 1, 0)) for _ in range(fdp.ConsumeIntInRange(0, 3))],
                dtype=np.int64,
            )
        )
        if core.num_edges
        else np.zeros(0, dtype=np.int64)
    )
    k = fdp.ConsumeIntInRange(0, 4)
    hi_n = max(n_new - 1, 0)
    add = [
        (fdp.ConsumeIntInRange(0, hi_n), fdp.ConsumeIntInRange(0, hi_n), fdp.ConsumeIntInRange(0, ntypes + 1))
        for _ in range(k if n_new else 0)
    ]
    hostile = fdp.ConsumeIntInRange(0, 5) == 0
    args = [
        remap,
        type_lut,
        drop,
        np.array([a[0] for a in add], dtype=np.int64),
        np.array([a[1] for a in add], dtype=np.int64),
        np.array([a[2] for a in add], dtype=np.int64),
    ]
    if hostile:  # one argument replaced by something out of range, unordered or of another shape
        j = fdp.ConsumeIntInRange(0, len(args) - 1)
        args[j] = array(fdp, fdp.ConsumeIntInRange(0, n_old + 3), -(2**31), 2**31 - 1, NUMERIC)
    try:
        got, add_canon, e_src, e_dst, e_typ, new_to_old = _core.CSRGraph.patched(core, n_new, *args, 0)
    except ValueError:
        return
    check_core(got, n_new)
    if hostile:
        return
    # the reference: a fresh build of the kept edges (as given) and the added ones
    src_a, dst_a, typ_a = (np.asarray(x).astype(np.int64) for x in (src, dst, typ))
    dropped = set(drop.tolist())
    f = [
        (int(remap[src_a[i]]), int(remap[dst_a[i]]), int(type_lut[typ_a[i]]))
        for i in range(len(canon))
        if canon[i] >= 0 and canon[i] not in dropped and remap[src_a[i]] >= 0 and remap[dst_a[i]] >= 0
    ]
    f += add
    ref, _ = _core.CSRGraph.from_edges(
        n_new,
        np.array([x[0] for x in f], dtype=np.int32),
        np.array([x[1] for x in f], dtype=np.int32),
        np.array([x[2] for x in f], dtype=np.int32),
    )
    for name_ in ("indptr", "indices", "pair_base", "pair_ptr", "edge_typedir"):
        assert np.array_equal(getattr(got, name_), getattr(ref, name_)), name_
    # min_num_types was 0: the types of the edges it holds (build() also counts self-loops')
    assert got.num_edge_types == max((x[2] for x in f if x[0] != x[1]), default=-1) + 1


def target(data: bytes) -> None:
    import atheris  # noqa: F401  (only for FuzzedDataProvider; replay imports it too)

    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 4)
    try:
        if mode == 0:  # tuples / dicts through the Cython interner
            edges = []
            for _ in range(fdp.ConsumeIntInRange(0, 40)):
                k = fdp.ConsumeIntInRange(0, 5)
                if k == 0:
                    edges.append((name(fdp), name(fdp)))
                elif k == 1:
                    edges.append((name(fdp), name(fdp), name(fdp)))
                elif k == 2:
                    row = {"src": name(fdp), "dst": name(fdp)}
                    for key in (
                        "type",
                        "authority",
                        "fidelity",
                        "extraction_method",
                        "extraction_confidence",
                        "lifecycle",
                        "bogus",
                    ):
                        if fdp.ConsumeIntInRange(0, 3) == 0:
                            row[key] = scalar(fdp)
                    edges.append(row)
                elif k == 3:
                    edges.append(tuple(scalar(fdp) for _ in range(fdp.ConsumeIntInRange(0, 4))))
                elif k == 4:
                    edges.append(scalar(fdp))
                else:
                    edges.append([name(fdp), name(fdp)])
            nodes = None
            if fdp.ConsumeBool():
                nodes = []
                for _ in range(fdp.ConsumeIntInRange(0, 10)):
                    if fdp.ConsumeBool():
                        nodes.append(name(fdp))
                    else:
                        row = {"id": scalar(fdp) if fdp.ConsumeIntInRange(0, 5) == 0 else name(fdp)}
                        for key in ("type", "title", "scopes", "lifecycle"):
                            if fdp.ConsumeBool():
                                row[key] = scalar(fdp)
                        nodes.append(row)
            g = LinkGraph.from_edges(edges, nodes=nodes)
            check_graph(g)
        elif mode == 1:  # numpy edge arrays of any dtype / shape
            m = fdp.ConsumeIntInRange(0, 30)
            cols = fdp.ConsumeIntInRange(1, 4)
            vals = [
                [name(fdp) if fdp.ConsumeBool() else fdp.ConsumeIntInRange(-5, 5) for _ in range(cols)]
                for _ in range(m)
            ]
            dt = [object, "U4", np.int64, np.float64][fdp.ConsumeIntInRange(0, 3)]
            try:
                arr = np.array(vals, dtype=dt)
            except (ValueError, TypeError):
                arr = np.array(vals, dtype=object)
            if fdp.ConsumeIntInRange(0, 4) == 0:
                arr = arr.reshape(-1)
            g = LinkGraph.from_edges(arr)
            check_graph(g)
        elif mode == 2:  # columns through from_arrays
            n = fdp.ConsumeIntInRange(0, 20)
            ids = [name(fdp) if fdp.ConsumeIntInRange(0, 7) == 0 else f"n{i}" for i in range(n)]
            m = fdp.ConsumeIntInRange(0, 40)
            src = array(fdp, m, -2, n + 1)
            dst = array(fdp, m, -2, n + 1)
            kwargs = {}
            if fdp.ConsumeBool():
                kwargs["edge_types"] = [name(fdp) for _ in range(m if fdp.ConsumeIntInRange(0, 5) else m + 1)]
            for key in ("node_types", "titles", "scopes", "lifecycle"):
                if fdp.ConsumeIntInRange(0, 2) == 0:
                    ln = n if fdp.ConsumeIntInRange(0, 5) else max(0, n - 1)
                    kwargs[key] = [scalar(fdp) for _ in range(ln)]
            if fdp.ConsumeBool():
                ann = {}
                for key in ("authority", "extraction_confidence", "lifecycle", "bogus"):
                    if fdp.ConsumeBool():
                        ln = m if fdp.ConsumeIntInRange(0, 5) else m + 1
                        ann[key] = [scalar(fdp) for _ in range(ln)]
                kwargs["edge_annotations"] = ann
            g = LinkGraph.from_arrays(ids, src, dst, **kwargs)
            check_graph(g)
        else:  # the raw core constructor
            n = (
                fdp.PickValueInList([0, 1, 2, 3, 5, 17, 64, -1, -(2**40), 2**31, 2**31 - 1])
                if fdp.ConsumeIntInRange(0, 3) == 0
                else fdp.ConsumeIntInRange(0, 50)
            )
            m = fdp.ConsumeIntInRange(0, 80)
            hi = max(n, 1) if n < 2**20 else 60
            src = array(fdp, m, -3, hi + 2, NUMERIC)
            dst = array(fdp, m, -3, hi + 2, NUMERIC)
            typ = array(fdp, m, -2, 1 << fdp.ConsumeIntInRange(0, 31), NUMERIC)
            if n >= 2**20 and n < 2**31:
                # A valid huge node count would allocate gigabytes: only the rejections are
                # interesting here, so make sure one edge is invalid.
                src = np.array([-1], dtype=np.int32)
                dst = np.array([0], dtype=np.int32)
                typ = np.array([0], dtype=np.int32)
            core, canon = _core.CSRGraph.from_edges(n, src, dst, typ)
            canon = np.asarray(canon)
            assert canon.shape == (np.asarray(src).shape[0],)
            assert np.all((canon >= -1) & (canon < max(core.num_edges, 1)))
            check_core(core, n)
            if n < 2**20 and fdp.remaining_bytes() and fdp.ConsumeBool():
                patch(fdp, core, n, src, dst, typ, canon)
    except ALLOWED:
        pass


if __name__ == "__main__":
    run(target)
