"""``_core.CSRGraph.patched`` (what a snapshot's advance uses to follow a write) against the
reference: a fresh ``CSRGraph.from_edges`` over the edges it should hold, array for array, and
its canonical-id maps against the fresh build's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk import _core

ARRAYS = ("indptr", "indices", "pair_base", "pair_ptr", "edge_typedir")


def _same_core(a: _core.CSRGraph, b: _core.CSRGraph) -> None:
    assert (a.num_nodes, a.num_edges, a.num_pairs, a.num_entries, a.num_edge_types, a.max_degree) == (
        b.num_nodes,
        b.num_edges,
        b.num_pairs,
        b.num_entries,
        b.num_edge_types,
        b.max_degree,
    )
    for name in ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@st.composite
def cases(draw):
    n_old = draw(st.integers(1, 40))
    ntypes = draw(st.integers(1, 4))
    raw = draw(
        st.lists(
            st.tuples(st.integers(0, n_old - 1), st.integers(0, n_old - 1), st.integers(0, ntypes - 1)), max_size=120
        )
    )
    edges = sorted(set(raw))  # a store holds each (src, dst, type) once
    # node set change: delete some, insert some (the new order keeps the old relative order)
    deleted = set(draw(st.lists(st.integers(0, n_old - 1), max_size=4)))
    n_ins = draw(st.integers(0, 5))
    kept = [u for u in range(n_old) if u not in deleted]
    slots = sorted(draw(st.lists(st.integers(0, len(kept)), min_size=n_ins, max_size=n_ins)))
    order: list[object] = list(kept)
    for j, at in enumerate(reversed(slots)):
        order.insert(at, ("new", j))
    n_new = len(order)
    remap = np.full(n_old, -1, dtype=np.int32)
    for i, x in enumerate(order):
        if isinstance(x, int):
            remap[x] = i
    # type recode: maybe a new code slots in before some old ones
    shift_at = draw(st.integers(0, ntypes))
    type_lut = np.array([t if t < shift_at else t + 1 for t in range(ntypes)], dtype=np.int32)
    drop_edges = sorted(set(draw(st.lists(st.integers(0, max(0, len(edges) - 1)), max_size=6)))) if edges else []
    n_add = draw(st.integers(0, 8))
    adds = (
        draw(
            st.lists(
                st.tuples(st.integers(0, max(0, n_new - 1)), st.integers(0, max(0, n_new - 1)), st.integers(0, ntypes)),
                max_size=n_add,
            )
        )
        if n_new
        else []
    )
    return n_old, edges, remap, n_new, type_lut, drop_edges, adds


@settings(max_examples=300, deadline=None)
@given(cases())
def test_patched_equals_a_fresh_build(case):
    n_old, edges, remap, n_new, type_lut, drop_inputs, adds = case
    src = np.array([e[0] for e in edges], dtype=np.int32)
    dst = np.array([e[1] for e in edges], dtype=np.int32)
    typ = np.array([e[2] for e in edges], dtype=np.int32)
    old, canon_old = _core.CSRGraph.from_edges(n_old, src, dst, typ)
    drop = np.unique(np.array([canon_old[i] for i in drop_inputs if canon_old[i] >= 0], dtype=np.int64))
    dropped = set(drop.tolist())
    # what a fresh build is given: the kept edges as they were, then the added ones
    kept_in = [
        i
        for i in range(len(edges))
        if canon_old[i] >= 0 and canon_old[i] not in dropped and remap[edges[i][0]] >= 0 and remap[edges[i][1]] >= 0
    ]
    keys = {(int(remap[edges[i][0]]), int(remap[edges[i][1]]), int(type_lut[edges[i][2]])) for i in kept_in}
    adds = [a for a in dict.fromkeys(adds) if a[0] == a[1] or a not in keys]  # no duplicates (the contract)
    f_src = [int(remap[edges[i][0]]) for i in kept_in] + [a[0] for a in adds]
    f_dst = [int(remap[edges[i][1]]) for i in kept_in] + [a[1] for a in adds]
    f_typ = [int(type_lut[edges[i][2]]) for i in kept_in] + [a[2] for a in adds]
    loop_types = [a[2] for a in adds if a[0] == a[1]]
    fresh, canon_fresh = _core.CSRGraph.from_edges(
        n_new, np.array(f_src, dtype=np.int32), np.array(f_dst, dtype=np.int32), np.array(f_typ, dtype=np.int32)
    )
    got, add_canon, e_src, e_dst, e_typ, new_to_old = _core.CSRGraph.patched(
        old,
        n_new,
        remap,
        type_lut,
        drop,
        np.array([a[0] for a in adds], dtype=np.int32),
        np.array([a[1] for a in adds], dtype=np.int32),
        np.array([a[2] for a in adds], dtype=np.int32),
        max(loop_types, default=-1) + 1,
    )
    _same_core(got, fresh)
    # every kept old edge is exactly once among the new ones, where the fresh build puts it
    assert sorted(x for x in new_to_old.tolist() if x >= 0) == sorted(int(canon_old[i]) for i in kept_in)
    assert add_canon.tolist() == canon_fresh[len(kept_in) :].tolist()
    # the per-edge columns: each canonical edge as it was given, and which old edge it is
    assert e_src.shape == e_dst.shape == e_typ.shape == new_to_old.shape == (fresh.num_edges,)
    # the core's own per-edge columns of the fresh build say the same
    c_src, c_dst, c_typ = fresh.edge_columns()
    assert np.array_equal(c_src, e_src) and np.array_equal(c_dst, e_dst) and np.array_equal(c_typ, e_typ)
    for j, c in enumerate(canon_fresh.tolist()):
        if c >= 0:
            assert (e_src[c], e_dst[c], e_typ[c]) == (f_src[j], f_dst[j], f_typ[j])
            assert new_to_old[c] == (canon_old[kept_in[j]] if j < len(kept_in) else -1)


def _small():
    g, _ = _core.CSRGraph.from_edges(
        3, np.array([0, 1], dtype=np.int32), np.array([1, 2], dtype=np.int32), np.array([0, 1], dtype=np.int32)
    )
    return g


I32 = np.int32


@pytest.mark.parametrize(
    "kwargs, what",
    [
        ({"remap": np.array([0, 0, 1], dtype=I32)}, "strictly increasing"),
        ({"remap": np.array([0, 1, 5], dtype=I32)}, "outside \\[-1, 3\\)"),
        ({"remap": np.array([0, 1], dtype=I32)}, "remap"),
        ({"type_lut": np.array([1, 0], dtype=I32)}, "strictly increasing"),
        ({"type_lut": np.array([0], dtype=I32)}, "cover the old graph's 2"),
        ({"type_lut": np.array([0, -1], dtype=I32)}, "maps the type of kept edge 1 to -1"),
        ({"drop": np.array([1, 0], dtype=np.int64)}, "ascending"),
        ({"drop": np.array([2], dtype=np.int64)}, "ascending canonical edge ids in \\[0, 2\\)"),
        (
            {
                "add_src": np.array([3], dtype=I32),
                "add_dst": np.array([0], dtype=I32),
                "add_type": np.array([0], dtype=I32),
            },
            "outside \\[0, 3\\)",
        ),
        (
            {
                "add_src": np.array([0], dtype=I32),
                "add_dst": np.array([1], dtype=I32),
                "add_type": np.array([0], dtype=I32),
            },
            "equals kept edge 0",
        ),
        (
            {
                "add_src": np.array([0, 0], dtype=I32),
                "add_dst": np.array([2, 2], dtype=I32),
                "add_type": np.array([0, 0], dtype=I32),
            },
            "are the same edge",
        ),
        (
            {
                "add_src": np.array([0], dtype=I32),
                "add_dst": np.array([2], dtype=I32),
                "add_type": np.array([-1], dtype=I32),
            },
            "edge type code -1",
        ),
        ({"min_num_types": -1}, "min_num_types"),
    ],
)
def test_patched_refuses_inconsistent_input(kwargs, what):
    args = {
        "remap": np.arange(3, dtype=I32),
        "type_lut": np.arange(2, dtype=I32),
        "drop": np.zeros(0, dtype=np.int64),
        "add_src": np.zeros(0, dtype=I32),
        "add_dst": np.zeros(0, dtype=I32),
        "add_type": np.zeros(0, dtype=I32),
        "min_num_types": 0,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=what):
        _core.CSRGraph.patched(_small(), 3, **args)
