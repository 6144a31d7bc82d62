"""Fuzz every core algorithm on arbitrary graphs, masks, seeds and parameters, through the raw
``conceptwalk._core`` functions and through the ``LinkGraph`` API.

Only ValueError / IndexError / InputError / NotFoundError may escape; anything else, a crash, a
hang (libFuzzer ``-timeout``) or a sanitizer report is a finding. Results that come back are
checked against cheap invariants (scores finite and non-negative, indices in range and visible,
paths made of visible adjacent nodes, hidden nodes never returned), so a wrong answer is a
finding too.

Forward push does O(1/(restart*eps)) work, and every push stops at the core's work budget
(``_core.PUSH_VISITS`` edge visits, ~0.2 s): no valid parameter runs longer, and the calls
without a push cap (``graph_context_text``, the batches) get any restart and eps. Where a raw
call takes ``max_pushes``, the fuzzer passes one when the bound passes 10^7, only so that one
execution stays short (throughput, not correctness).

Run: ``python fuzz/fuzz_algorithms.py fuzz/corpus/fuzz_algorithms -max_total_time=60``
Replay: ``python fuzz/fuzz_algorithms.py --replay fuzz/corpus/fuzz_algorithms``
"""

from __future__ import annotations

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import documented, instrumented, run  # noqa: E402

with instrumented():
    import numpy as np

    from conceptwalk import Caller, LinkGraph, _core, graph_context, graph_path, link_suggest

ALLOWED = documented()
WORK_LIMIT = 1e7
FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.25,
    0.5,
    0.999999,
    1e-4,
    1e-9,
    1e-300,
    5e-324,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
    2.0,
    1e-12,
]


def f64(fdp) -> float:
    if fdp.ConsumeBool():
        return FLOATS[fdp.ConsumeIntInRange(0, len(FLOATS) - 1)]
    return fdp.ConsumeRegularFloat()


def i32_array(fdp, n: int, lo: int, hi: int, max_len: int = 8) -> np.ndarray:
    k = fdp.ConsumeIntInRange(0, max_len)
    a = np.array([fdp.ConsumeIntInRange(lo, hi) for _ in range(k)], dtype=np.int32)
    if fdp.ConsumeIntInRange(0, 15) == 0 and k % 2 == 0:
        a = a.reshape(2, -1) if k else a.reshape(2, 0)  # wrong dimensionality
    return a


def too_much_work(restart: float, eps: float) -> bool:
    """Valid parameters whose push work bound 1/(restart*eps) exceeds WORK_LIMIT."""
    return 0 < restart < 1 and math.isfinite(eps) and eps > 0 and restart * eps < 1.0 / WORK_LIMIT


def push_budget(restart: float, eps: float, max_pushes: int) -> int:
    """Keep uncapped pushes within the documented O(1/(restart*eps)) work bound."""
    if max_pushes == 0 and too_much_work(restart, eps) and restart * eps >= 1e-12:
        return 200_000  # below 1e-12 the uncapped call must refuse: leave it uncapped
    if max_pushes > 10_000_000:
        return 10_000_000
    return max_pushes


def make_graph(fdp):
    n = fdp.ConsumeIntInRange(1, 24)
    m = fdp.ConsumeIntInRange(0, 60)
    ntypes = fdp.ConsumeIntInRange(1, 4)
    src = np.array([fdp.ConsumeIntInRange(0, n - 1) for _ in range(m)], dtype=np.int32)
    dst = np.array([fdp.ConsumeIntInRange(0, n - 1) for _ in range(m)], dtype=np.int32)
    typ = np.array([fdp.ConsumeIntInRange(0, ntypes - 1) for _ in range(m)], dtype=np.int32)
    ids = [f"n{i:02d}" for i in range(n)]
    ntype_names = ["CONCEPT", "DOC", "NOTE"]
    node_types = [ntype_names[fdp.ConsumeIntInRange(0, 2)] for _ in range(n)]
    scopes = [None if fdp.ConsumeIntInRange(0, 2) else ["s%d" % fdp.ConsumeIntInRange(0, 2)] for _ in range(n)]
    g = LinkGraph.from_arrays(ids, src, dst, [f"T{t}" for t in typ.tolist()], node_types=node_types, scopes=scopes)
    mask = np.array([fdp.ConsumeIntInRange(0, 3) != 0 for _ in range(n)], dtype=bool)
    return g, mask


def check_visible(idx: np.ndarray, n: int, mask: np.ndarray | None) -> None:
    idx = np.asarray(idx)
    assert np.all((idx >= 0) & (idx < n)), idx
    if mask is not None:
        assert np.all(mask[idx]), ("hidden node returned", idx, mask)


def check_ppr(res, n: int, mask: np.ndarray | None, k: int) -> None:
    nodes, scores, residual = res.nodes, res.scores, res.residual
    nodes, scores = np.asarray(nodes), np.asarray(scores)
    check_visible(nodes, n, mask)
    assert nodes.shape == scores.shape
    assert len(set(nodes.tolist())) == nodes.shape[0]
    assert np.all(np.isfinite(scores)) and np.all(scores >= 0), scores
    assert scores.sum() <= 1.0 + 1e-9, scores.sum()
    assert math.isfinite(residual) and residual >= -1e-12
    if k > 0:
        assert nodes.shape[0] <= k
    assert np.all(np.diff(scores) <= 0), "scores not descending"


def check_path(g: LinkGraph, path: np.ndarray, s: int, t: int, mask: np.ndarray | None) -> None:
    path = np.asarray(path)
    if path.shape[0] == 0:
        return
    check_visible(path, g.num_nodes, mask)
    assert path[0] == s and path[-1] == t, (path, s, t)
    for a, b in zip(path[:-1].tolist(), path[1:].tolist()):
        assert g.core.find_entry(a, b) >= 0, ("path step is not an edge", a, b)


def op_raw(fdp, g: LinkGraph, vm, mask) -> None:
    core = g.core
    n = g.num_nodes
    which = fdp.ConsumeIntInRange(0, 7)
    if which == 0:
        seeds = i32_array(fdp, n, -2, n + 1)
        w = np.array([f64(fdp) for _ in range(seeds.size if fdp.ConsumeIntInRange(0, 7) else seeds.size + 1)])
        restart, eps = f64(fdp), f64(fdp)
        k = fdp.ConsumeIntInRange(-2, n + 2)
        mp = push_budget(restart, eps, fdp.ConsumeIntInRange(-1, 1000) if fdp.ConsumeBool() else 0)
        res = _core.personalized_pagerank(core, seeds, w, restart, eps, k, mp, vm)
        check_ppr(res, n, mask, k)
    elif which == 1:
        seeds = i32_array(fdp, n, -2, n + 1)
        w = np.array([f64(fdp) for _ in range(seeds.size)])
        restart, eps, shrink, min_eps = f64(fdp), f64(fdp), f64(fdp), f64(fdp)
        k = fdp.ConsumeIntInRange(-2, n + 2)
        mp = fdp.ConsumeIntInRange(-1, 50_000)
        res = _core.personalized_pagerank_certified(core, seeds, w, restart, eps, k, shrink, min_eps, mp, vm)
        check_ppr(res, n, mask, k)
    elif which == 2:
        q = fdp.ConsumeIntInRange(0, 4)
        lens = [fdp.ConsumeIntInRange(0, 3) for _ in range(q)]
        ptr = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
        if fdp.ConsumeIntInRange(0, 7) == 0 and ptr.size:
            ptr[fdp.ConsumeIntInRange(0, ptr.size - 1)] = fdp.ConsumeIntInRange(-3, 12)
        total = int(sum(lens))
        seeds = np.array([fdp.ConsumeIntInRange(-1, n) for _ in range(total)], dtype=np.int32)
        w = np.array([f64(fdp) if fdp.ConsumeIntInRange(0, 5) == 0 else 1.0 for _ in range(total)])
        restart = f64(fdp) if fdp.ConsumeBool() else 0.25
        eps = f64(fdp) if fdp.ConsumeBool() else 1e-4
        if too_much_work(restart, eps) and restart * eps >= 1e-12:
            restart, eps = 0.25, 1e-3  # the batch API has no push cap (below 1e-12 it must refuse)
        _core.ppr_batch(
            core, ptr, seeds, w, restart, eps, fdp.ConsumeIntInRange(-1, n), 0, fdp.ConsumeIntInRange(-1, 4), vm
        )
    elif which == 3:
        node = fdp.ConsumeIntInRange(-2, n + 1)
        ms = fdp.ConsumeIntInRange(-1, 4)
        k = fdp.ConsumeIntInRange(-1, n + 1)
        ra = _core.resource_allocation(core, node, ms, k, vm)
        targets, scores, shared = ra.targets, ra.scores, ra.shared
        check_visible(targets, n, mask)
        check_visible(shared, n, mask)
        assert np.all(np.asarray(scores) > 0)
        assert node not in np.asarray(targets).tolist()
    elif which == 4:
        nodes = i32_array(fdp, n, -1, n)
        _core.suggest_batch(
            core, nodes, fdp.ConsumeIntInRange(-1, 3), fdp.ConsumeIntInRange(-1, n), fdp.ConsumeIntInRange(-1, 4), vm
        )
    elif which == 5:
        s, t = fdp.ConsumeIntInRange(-2, n + 1), fdp.ConsumeIntInRange(-2, n + 1)
        path = _core.shortest_path(core, s, t, vm).path
        check_path(g, path, s, t, mask)
    elif which == 6:
        seeds = i32_array(fdp, n, -2, n + 1)
        targets = i32_array(fdp, n, -2, n + 1)
        hr = _core.multi_source_hops(core, seeds, targets, fdp.ConsumeIntInRange(-3, 5), vm)
        hops, via = hr.hops, hr.via
        hops, via = np.asarray(hops), np.asarray(via)
        assert hops.shape == via.shape == (targets.size,)
        reached = hops >= 0
        if reached.any():
            check_visible(via[reached], n, mask)
            assert set(via[reached].tolist()) <= set(seeds.reshape(-1).tolist())
    else:
        starts = i32_array(fdp, n, -2, n + 1)
        nt = fdp.ConsumeIntInRange(0, 6)
        expand = np.array([fdp.ConsumeBool() for _ in range(nt)], dtype=bool)
        admit = np.array([fdp.ConsumeBool() for _ in range(nt if fdp.ConsumeIntInRange(0, 9) else nt + 1)], dtype=bool)
        kwargs = {}
        if fdp.ConsumeBool():
            kwargs["node_type"] = np.array(
                [fdp.ConsumeIntInRange(-2, 4) for _ in range(n if fdp.ConsumeIntInRange(0, 9) else n + 1)],
                dtype=np.int32,
            )
        nn = fdp.ConsumeIntInRange(0, 5)
        if fdp.ConsumeBool():
            kwargs["expand_node_types"] = np.array([fdp.ConsumeBool() for _ in range(nn)], dtype=bool)
        if fdp.ConsumeBool():
            kwargs["admit_node_types"] = np.array(
                [fdp.ConsumeBool() for _ in range(nn if fdp.ConsumeIntInRange(0, 9) else nn + 1)], dtype=bool
            )
        res = _core.typed_walk(
            core,
            starts,
            fdp.ConsumeIntInRange(-1, 5),
            expand,
            admit,
            max_edges=fdp.ConsumeIntInRange(-1, 5000),
            max_candidates=fdp.ConsumeIntInRange(-1, 100),
            visible=vm,
            **kwargs,
        )
        check_visible(np.asarray(res.candidates), n, mask)
        pnodes = np.asarray(res.path_nodes)
        valid = pnodes[pnodes >= 0]
        check_visible(valid, n, mask)
        # the compiled path rendering: slots, ids, type names, provenance entries and the graph
        # itself fuzzed (a wrong one must be refused, never read out of bounds)
        nc = len(res.candidates)
        slots = [fdp.ConsumeIntInRange(-1, nc) for _ in range(fdp.ConsumeIntInRange(0, 4))]
        ids = list(g.ids) if fdp.ConsumeIntInRange(0, 9) else list(g.ids)[:-1]
        names = list(g.edge_type_names)[: fdp.ConsumeIntInRange(0, len(g.edge_type_names))]
        entry = ({"authority": "x", "sub": {"a": 1}}, {"lifecycle": "absent"}) if fdp.ConsumeBool() else ({}, None)
        other = g if fdp.ConsumeIntInRange(0, 9) else LinkGraph.from_edges([("x", "y")])
        try:
            got = res.render_paths(other.core, slots, ids, names, {}, lambda e: entry)
        except (ValueError, TypeError):
            pass
        else:
            assert len(got) == len(slots)


def op_api(fdp, g: LinkGraph, mask) -> None:
    ids = g.ids
    n = g.num_nodes

    def some_id() -> str:
        j = fdp.ConsumeIntInRange(-1, n)
        return ids[j] if 0 <= j < n else ("missing" if j < 0 else "")

    vis_kind = fdp.ConsumeIntInRange(0, 3)
    visible = [None, mask, [i for i, v in zip(ids, mask.tolist()) if v], np.zeros(n + 1, dtype=bool)][vis_kind]
    vmask = None if vis_kind in (0, 3) else mask
    which = fdp.ConsumeIntInRange(0, 7)
    if which == 0:
        seeds = {some_id(): f64(fdp) for _ in range(fdp.ConsumeIntInRange(0, 4))}
        restart, eps = (f64(fdp), f64(fdp)) if fdp.ConsumeBool() else (0.25, 1e-4)
        mp = fdp.ConsumeIntInRange(0, 1000) or None
        if mp is None and push_budget(restart, eps, 0) and restart * eps >= 1e-12:
            mp = 200_000  # (below 1e-12 an uncapped call must refuse: keep None to check that)
        r = g.personalized_pagerank(
            seeds, restart=restart, eps=eps, k=fdp.ConsumeIntInRange(0, 5) or None, visible=visible, max_pushes=mp
        )
        check_visible(r.indices, n, vmask)
        assert np.all(r.error_bounds() >= 0)
    elif which == 1:
        seeds = {some_id(): 1.0 for _ in range(fdp.ConsumeIntInRange(1, 3))}
        r = g.personalized_pagerank_certified(
            seeds,
            fdp.ConsumeIntInRange(0, 5),
            eps=f64(fdp) if fdp.ConsumeBool() else 1e-3,
            max_pushes=fdp.ConsumeIntInRange(1, 20_000),
            visible=visible,
        )
        check_visible(r.indices, n, vmask)
    elif which == 2:
        out = g.resource_allocation(
            some_id(), min_shared=fdp.ConsumeIntInRange(0, 3), k=fdp.ConsumeIntInRange(0, 4) or None, visible=visible
        )
        if vmask is not None:
            allowed = {i for i, v in zip(ids, vmask.tolist()) if v}
            for s in out:
                assert s.id in allowed and set(s.shared) <= allowed
    elif which == 3:
        p = g.shortest_path(some_id(), some_id(), visible=visible)
        if p is not None and vmask is not None:
            allowed = {i for i, v in zip(ids, vmask.tolist()) if v}
            assert set(p) <= allowed
    elif which == 4:
        h = fdp.ConsumeIntInRange(-1, 4)
        g.hops(
            [some_id() for _ in range(fdp.ConsumeIntInRange(0, 3))],
            [some_id() for _ in range(3)],
            max_hops=None if h < 0 else h,
            visible=visible,
        )
    else:
        caller = (
            Caller.all_access()
            if fdp.ConsumeBool()
            else Caller.with_scopes(*["s%d" % fdp.ConsumeIntInRange(0, 3) for _ in range(fdp.ConsumeIntInRange(0, 2))])
        )
        if which == 5:
            graph_context(
                g,
                concepts=[some_id() for _ in range(fdp.ConsumeIntInRange(0, 3))],
                caller=caller,
                k=fdp.ConsumeIntInRange(0, 6),
            )
        elif which == 6:
            link_suggest(
                g, some_id(), k=fdp.ConsumeIntInRange(0, 6), caller=caller, min_shared=fdp.ConsumeIntInRange(0, 3)
            )
        else:
            graph_path(g, some_id(), some_id(), caller=caller)


WORDS = ["graph", "walk", "push", "rank", "token", "alpha", "beta", ""]


def op_text(fdp, g: LinkGraph, vm, mask) -> None:
    """The question-seeded graph_context in one call (``_core.graph_context_text``) and the
    saved form of the sparse vectors (``SparseVectors.from_columns``), its blocked top-k against
    its scan and the int8-coded ``DenseVectors`` top-k against ``vector_topk``, on arbitrary
    arguments.
    Run with the bytes the loop left over, so the corpus's earlier inputs decode as before."""
    from conceptwalk.graph.text import TextIndex
    from conceptwalk.graph.vectors import SparseVectors

    n = g.num_nodes
    if fdp.ConsumeBool():
        titles = [
            " ".join(WORDS[fdp.ConsumeIntInRange(0, 7)] for _ in range(fdp.ConsumeIntInRange(0, 3))) for _ in range(n)
        ]
        ix = TextIndex.build(titles if fdp.ConsumeIntInRange(0, 9) else titles + ["extra"])
        terms = i32_array(fdp, n, -2, ix.num_terms + 1)
        concepts = i32_array(fdp, n, -2, n + 1) if fdp.ConsumeBool() else None
        stats = None
        if fdp.ConsumeBool():
            stats = ix.core.stats(None if vm is None or fdp.ConsumeIntInRange(0, 5) == 0 else vm.mask.view(np.uint8))
        kwargs = {}
        if fdp.ConsumeBool():
            kwargs["node_type"] = np.array([fdp.ConsumeIntInRange(-2, 4) for _ in range(n)], dtype=np.int32)
            kwargs["keep_types"] = np.array([fdp.ConsumeBool() for _ in range(fdp.ConsumeIntInRange(0, 4))], dtype=bool)
        res = _core.graph_context_text(
            g.core,
            ix.core,
            terms,
            fdp.ConsumeIntInRange(-1, n + 2),
            concepts,
            f64(fdp) if fdp.ConsumeIntInRange(0, 3) == 0 else 0.25,
            f64(fdp) if fdp.ConsumeIntInRange(0, 3) == 0 else 1e-3,
            fdp.ConsumeIntInRange(-1, n + 2),
            visible=vm,
            stats=stats,
            rank=fdp.ConsumeIntInRange(-1, 2),
            max_hops=fdp.ConsumeIntInRange(0, 4),
            **kwargs,
        )
        check_visible(np.asarray(res.nodes), n, mask)
        check_visible(np.asarray(res.hits), n, mask)
        assert res.seeded or len(res) == 0
    else:
        rows_n, dim = fdp.ConsumeIntInRange(-1, 6), fdp.ConsumeIntInRange(-1, 6)
        colptr = np.array([fdp.ConsumeIntInRange(-1, 8) for _ in range(fdp.ConsumeIntInRange(0, 8))], dtype=np.int64)
        rows = np.array([fdp.ConsumeIntInRange(-1, 7) for _ in range(fdp.ConsumeIntInRange(0, 8))], dtype=np.int32)
        values = np.array([f64(fdp) for _ in range(rows.size if fdp.ConsumeIntInRange(0, 5) else rows.size + 1)])
        sv = SparseVectors.from_columns(rows_n, dim, colptr, rows, values)
        q = np.array([f64(fdp) for _ in range(max(dim, 0))], dtype=np.float32)
        got, scores = sv.topk(q, fdp.ConsumeIntInRange(1, 8))
        assert np.all((got >= 0) & (got < sv.n)) and np.all(np.isfinite(scores))
        # the same arrays over memory no Python code can change (as a read-only mapped snapshot
        # file's): kept without a copy (no bytes consumed: older inputs decode alike). A read-only
        # array that owns its memory is copied since 633e3e9 (its flag can be set back): over
        # bytes, not a flag, or this assertion fails on the first input that reaches it
        r_ro = np.frombuffer(rows.astype(np.int32).tobytes(), dtype=np.int32)
        v_ro = np.frombuffer(values.astype(np.float32).tobytes(), dtype=np.float32)
        kept = SparseVectors.from_columns(rows_n, dim, colptr, r_ro, v_ro)
        assert kept._core.borrowed
        kg, ks = kept.topk(q, 3)
        sg, ss = sv.topk(q, 3)
        assert kg.tolist() == sg.tolist() and ks.tobytes() == ss.tobytes()
        # the blocked and the scan top-k agree (rows and score bits), over a mask and a threshold
        vis = np.array([fdp.ConsumeBool() for _ in range(sv.n)], dtype=bool)
        lo = f64(fdp) if fdp.ConsumeBool() else None
        k = fdp.ConsumeIntInRange(1, 9)
        a = sv.topk(q, k, visible=vis, min_score=lo, method=("auto", "pruned")[fdp.ConsumeIntInRange(0, 1)])
        b = sv.topk(q, k, visible=vis, min_score=lo, method="scan")
        assert a[0].tolist() == b[0].tolist() and a[1].view(np.uint64).tolist() == b[1].view(np.uint64).tolist()
        # the int8-coded dense top-k against the full scan, on rows made of the same numbers
        from conceptwalk.graph.vectors import DenseVectors, vector_topk_arrays

        mat = np.array([f64(fdp) for _ in range(sv.n * sv.dim)], dtype=np.float32).reshape(sv.n, sv.dim)
        dv = DenseVectors(mat)
        a = dv.topk(q, k, visible=vis, min_score=lo, method=("auto", "pruned")[fdp.ConsumeIntInRange(0, 1)])
        b = vector_topk_arrays(mat, q, k, visible=vis, min_score=lo)
        assert a[0].tolist() == b[0].tolist() and a[1].view(np.uint64).tolist() == b[1].view(np.uint64).tolist()


def op_live_text(fdp) -> None:
    """The live store's text search (``_core.bm25_topk_live``: a base index less dropped
    documents plus a delta index) and graph_context over a LiveGraph with a split node-type
    filter, on arbitrary arguments. Run with the bytes op_text left over (older inputs decode as
    before)."""
    from conceptwalk.graph import LinkGraph
    from conceptwalk.graph.live import LiveGraph
    from conceptwalk.graph.text import TextIndex

    def titles(n: int) -> list[str]:
        return [
            " ".join(WORDS[fdp.ConsumeIntInRange(0, 7)] for _ in range(fdp.ConsumeIntInRange(0, 3))) for _ in range(n)
        ]

    nb, nd = fdp.ConsumeIntInRange(0, 6), fdp.ConsumeIntInRange(0, 4)
    base = TextIndex.build(titles(nb), title_weight=fdp.ConsumeIntInRange(1, 3))
    delta = TextIndex.build(titles(nd), title_weight=fdp.ConsumeIntInRange(1, 3))
    nq = fdp.ConsumeIntInRange(0, 4)
    bt = np.array([fdp.ConsumeIntInRange(-2, base.num_terms + 1) for _ in range(nq)], dtype=np.int32)
    dt = np.array(
        [fdp.ConsumeIntInRange(-2, delta.num_terms + 1) for _ in range(nq + fdp.ConsumeIntInRange(0, 1))],
        dtype=np.int32,
    )
    bvis = np.array([fdp.ConsumeBool() for _ in range(nb)], dtype=np.uint8) if fdp.ConsumeBool() else None
    res = _core.bm25_topk_live(
        base.core,
        base.core.stats(bvis if fdp.ConsumeIntInRange(0, 5) else None),
        bvis,
        np.array([fdp.ConsumeBool() for _ in range(nb)], dtype=np.uint8) if fdp.ConsumeBool() else None,
        np.array([fdp.ConsumeIntInRange(-1, nb) for _ in range(fdp.ConsumeIntInRange(0, 3))], dtype=np.int32),
        delta.core,
        np.array([fdp.ConsumeIntInRange(0, 2**40) for _ in range(nd)], dtype=np.uint64),
        np.array([fdp.ConsumeBool() for _ in range(nd)], dtype=np.uint8) if fdp.ConsumeBool() else None,
        np.array([fdp.ConsumeBool() for _ in range(nd + fdp.ConsumeIntInRange(0, 1))], dtype=np.uint8)
        if fdp.ConsumeBool()
        else None,
        bt,
        dt,
        fdp.ConsumeIntInRange(-1, 8),
    )
    docs, scores = np.asarray(res[0]), np.asarray(res[1])
    assert np.all((docs >= 0) & (docs < nb + nd)) and np.all(np.isfinite(scores)) and docs.size == scores.size
    n = fdp.ConsumeIntInRange(1, 5)
    g = LinkGraph.from_edges([(f"n{i}", f"n{(i + 1) % n}") for i in range(n)])
    live = LiveGraph.over(g, version=0).grown({"x": ("T", None, None, None)}, [("x", "n0")], version=1)
    assert live is not None
    r = _core.graph_context(
        live.core,
        np.array([fdp.ConsumeIntInRange(-1, n + 1)], dtype=np.int32),
        np.ones(1),
        k=fdp.ConsumeIntInRange(-1, 4),
        node_type=np.array(
            [fdp.ConsumeIntInRange(-2, 3) for _ in range(n + fdp.ConsumeIntInRange(-1, 1))], dtype=np.int32
        ),
        keep_types=np.array([fdp.ConsumeBool() for _ in range(fdp.ConsumeIntInRange(0, 3))], dtype=bool),
        delta_node_type=np.array(
            [fdp.ConsumeIntInRange(-2, 3) for _ in range(fdp.ConsumeIntInRange(0, 2))], dtype=np.int32
        ),
    )
    assert all(0 <= v < n + 1 for v in r.nodes.tolist())


def op_live_walk(fdp) -> None:
    """The typed walk over a LiveGraph (``_core.typed_walk_live``) on arbitrary delta edge lists
    (keys, offsets, type codes, weights), starts, gates and node types, and its path rendering
    with the new slots' ids. Run with the bytes op_live_text left over."""
    from conceptwalk.graph import LinkGraph
    from conceptwalk.graph.live import LiveGraph

    n = fdp.ConsumeIntInRange(1, 5)
    g = LinkGraph.from_edges([(f"n{i}", f"n{(i + 1) % n}", "T") for i in range(n)])
    ann = (None, None, None, fdp.ConsumeIntInRange(0, 4) / 4 or None, None)
    live = LiveGraph.over(g, version=0).grown(
        {"x": ("T", None, None, None)}, [("x", f"n{fdp.ConsumeIntInRange(0, n - 1)}", "U", ann)], version=1
    )
    assert live is not None
    w = live.walk_edges()
    if fdp.ConsumeBool():
        keys, ptr, td = w.keys, w.ptr, w.typedir
    else:
        np_ = fdp.ConsumeIntInRange(0, 3)
        keys = np.array([fdp.ConsumeIntInRange(0, 2**34) for _ in range(np_)], dtype=np.uint64)
        ptr = np.array([fdp.ConsumeIntInRange(-1, 4) for _ in range(np_ + fdp.ConsumeIntInRange(0, 2))], dtype=np.int32)
        td = np.array([fdp.ConsumeIntInRange(-2, 6) for _ in range(fdp.ConsumeIntInRange(0, 4))], dtype=np.int32)
    weights = np.array([f64(fdp) for _ in range(td.size)]) if fdp.ConsumeBool() else None
    nt = fdp.ConsumeIntInRange(0, 3)
    flags = np.array([fdp.ConsumeBool() for _ in range(nt)], dtype=bool)
    kwargs = {}
    if fdp.ConsumeBool():
        kwargs["node_type"] = np.array([fdp.ConsumeIntInRange(-2, 2) for _ in range(n)], dtype=np.int32)
        kwargs["delta_node_type"] = np.array(
            [fdp.ConsumeIntInRange(-2, 2) for _ in range(fdp.ConsumeIntInRange(0, 2))], dtype=np.int32
        )
        kwargs["admit_node_types"] = np.array([fdp.ConsumeBool() for _ in range(2)], dtype=bool)
    res = _core.typed_walk_live(
        live.core,
        keys,
        ptr,
        td,
        weights,
        np.array([fdp.ConsumeIntInRange(-1, n + 1) for _ in range(fdp.ConsumeIntInRange(0, 2))], dtype=np.int32),
        fdp.ConsumeIntInRange(0, 3),
        flags,
        flags,
        max_edges=fdp.ConsumeIntInRange(-1, 50),
        max_candidates=fdp.ConsumeIntInRange(-1, 5),
        visible=live.view([]).core if fdp.ConsumeBool() else None,
        **kwargs,
    )
    assert all(0 <= v < n + 1 for v in np.asarray(res.candidates).tolist())
    tail = live.tail_ids() if fdp.ConsumeIntInRange(0, 5) else []
    names = list(w.type_names)[: fdp.ConsumeIntInRange(0, 2)]
    try:
        res.render_paths(live.core, list(range(len(res.candidates))), list(g.ids), names, {}, lambda e: ({}, {}), tail)
    except (ValueError, TypeError):
        pass


def target(data: bytes) -> None:
    import atheris

    fdp = atheris.FuzzedDataProvider(data)
    try:
        g, mask = make_graph(fdp)
    except ALLOWED:
        return
    vm = _core.VisibilityMask(g.core, mask) if fdp.ConsumeBool() else None
    vmask = mask if vm is not None else None
    for _ in range(fdp.ConsumeIntInRange(1, 6)):
        try:
            if fdp.ConsumeBool():
                op_raw(fdp, g, vm, vmask)
            else:
                op_api(fdp, g, mask)
        except ALLOWED:
            pass
    if fdp.remaining_bytes():
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # huge floats cast to float32
                op_text(fdp, g, vm, vmask)
        except ALLOWED:
            pass
    if fdp.remaining_bytes():
        try:
            op_live_text(fdp)
        except ALLOWED:
            pass
    if fdp.remaining_bytes():
        try:
            op_live_walk(fdp)
        except ALLOWED:
            pass


if __name__ == "__main__":
    run(target)
