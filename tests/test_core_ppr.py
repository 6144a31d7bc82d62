"""Forward-push PPR against exact PPR (power iteration) and networkx on seeded random graphs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from conftest import GRAPH_SEEDS

import reference as ref
from conceptwalk import LinkGraph, _core

FLOAT_TOL = 1e-12


def _query(seed: int):
    """Seeds, restart and visible set for graph ``seed`` (a mask on every third graph)."""
    spec = ref.random_graph(seed)
    rng = random.Random(seed)
    visible = None
    nodes = list(spec.nodes)
    if seed % 3 == 0 and len(nodes) > 3:
        visible = sorted(v for v in nodes if rng.random() < 0.75)
        if not visible:
            visible = nodes[:1]
        nodes = visible
    k = min(len(nodes), rng.choice([1, 1, 2, 3]))
    seeds = {v: rng.choice([1.0, 0.5, 2.0, 3.0]) for v in rng.sample(nodes, k)}
    restart = rng.choice([0.25, 0.25, 0.15, 0.5])
    return spec, seeds, restart, visible


def _check_ranking_order(items):
    for (a, pa), (b, pb) in zip(items, items[1:]):
        assert pa > pb or (pa == pb and a < b), (a, pa, b, pb)


@pytest.mark.parametrize("seed", GRAPH_SEEDS)
def test_ppr_error_bounds_against_exact(seed):
    spec, seeds, restart, visible = _query(seed)
    g = spec.build_linkgraph()
    gx = spec.nx_graph(visible)
    exact = ref.exact_ppr(gx, seeds, restart)
    deg = dict(gx.degree())
    sum_deg = sum(deg.values())
    for eps in (1e-4, 1e-5, 1e-6):
        r = g.personalized_pagerank(seeds, restart=restart, eps=eps, visible=visible)
        items = list(r.items())
        _check_ranking_order(items)
        got = dict(items)
        assert all(p > 0 for p in got.values())
        assert set(got) <= set(gx.nodes)
        l1 = 0.0
        for v, pstar in exact.items():
            diff = pstar - got.get(v, 0.0)
            assert diff >= -FLOAT_TOL, (v, pstar, got.get(v))
            assert diff < eps * deg[v] + FLOAT_TOL, (v, diff, eps * deg[v])
            l1 += abs(diff)
        # The unpushed mass is exactly what is missing: sum p + residual = 1.
        assert math.isclose(sum(got.values()) + r.residual, 1.0, abs_tol=1e-12)
        assert math.isclose(l1, r.residual, abs_tol=1e-10)
        if eps == 1e-5:
            assert l1 <= eps * sum_deg + FLOAT_TOL
        # error_bounds() really bounds the error of every returned node.
        bounds = r.error_bounds()
        for (v, p), b in zip(items, bounds.tolist()):
            assert exact[v] - p <= b + FLOAT_TOL


# DESIGN claims ||p - p*||_1 <= 1e-3 at eps = 1e-6. Plain push guarantees only l1 = residual <
# eps * sum(deg), so the claim can fail once sum(deg) > 1000; on these graphs it does (graph 95:
# sum(deg) = 2996, l1 = 1.35e-3). Strict xfail documents the default behaviour; the
# `max_residual` option (tests below) is what closes the gap.
_L1_1E6_KNOWN_VIOLATIONS = {95: "dense graph, sum(deg)=2996: l1 = 1.35e-3 > 1e-3"}


@pytest.mark.parametrize(
    "seed",
    [
        pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=_L1_1E6_KNOWN_VIOLATIONS[s]))
        if s in _L1_1E6_KNOWN_VIOLATIONS
        else s
        for s in GRAPH_SEEDS
    ],
)
def test_ppr_total_error_at_eps_1e6_below_1e3(seed):
    spec, seeds, restart, visible = _query(seed)
    g = spec.build_linkgraph()
    exact = ref.exact_ppr(spec.nx_graph(visible), seeds, restart)
    got = g.personalized_pagerank(seeds, restart=restart, eps=1e-6, visible=visible).to_dict()
    assert sum(abs(p - got.get(v, 0.0)) for v, p in exact.items()) <= 1e-3


@pytest.mark.xfail(
    strict=True,
    reason="contract gap: at eps=1e-6 the l1 error on a 1,000-node "
    "graph of mean degree 7 is ~3e-3 (push bounds it by eps*sum(deg) = 7e-3 only)",
)
def test_ppr_total_error_at_eps_1e6_on_kb_sized_graph():
    rng = np.random.default_rng(0)
    n, m = 1000, 3500
    ids = [f"c{i:04d}" for i in range(n)]
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = LinkGraph.from_arrays(ids, src, dst)
    r = g.personalized_pagerank({ids[0]: 1.0}, eps=1e-6)
    assert r.residual <= 1e-3  # residual == l1 error, checked against power iteration above


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::3] + [95])
def test_ppr_max_residual_caps_total_error(seed):
    spec, seeds, restart, visible = _query(seed)
    g = spec.build_linkgraph()
    gx = spec.nx_graph(visible)
    exact = ref.exact_ppr(gx, seeds, restart)
    for cap in (1e-3, 1e-5):
        r = g.personalized_pagerank(seeds, restart=restart, eps=1e-4, visible=visible, max_residual=cap)
        got = r.to_dict()
        assert not r.truncated
        assert r.residual <= cap and r.eps <= 1e-4
        l1 = 0.0
        for v, pstar in exact.items():
            diff = pstar - got.get(v, 0.0)
            assert -FLOAT_TOL <= diff < r.eps * gx.degree(v) + FLOAT_TOL
            l1 += diff
        assert l1 <= cap + FLOAT_TOL and math.isclose(l1, r.residual, abs_tol=1e-10)


def test_ppr_max_residual_on_kb_sized_graph():
    rng = np.random.default_rng(0)
    n, m = 1000, 3500
    ids = [f"c{i:04d}" for i in range(n)]
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = LinkGraph.from_arrays(ids, src, dst)
    r = g.personalized_pagerank({ids[0]: 1.0}, eps=1e-6, max_residual=1e-3)
    spec = ref.GraphSpec(0, "kb", tuple(ids), tuple((ids[a], ids[b], "LINK") for a, b in zip(src, dst)))
    exact = ref.exact_ppr(spec.nx_graph(), {ids[0]: 1.0}, 0.25)
    got = r.to_dict()
    assert sum(abs(p - got.get(v, 0.0)) for v, p in exact.items()) <= 1e-3


def _no_isolated(spec: ref.GraphSpec):
    gx = spec.nx_graph()
    keep = sorted(v for v in gx.nodes if gx.degree(v) > 0)
    if len(keep) < 2:
        return None, None
    kept = set(keep)
    edges = [e for e in spec.edges if e[0] in kept and e[1] in kept]
    return LinkGraph.from_edges(edges, nodes=keep), gx.subgraph(keep).copy()


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::2])
def test_ppr_against_networkx_pagerank(seed):
    spec = ref.random_graph(seed)
    g, gx = _no_isolated(spec)
    if g is None:
        pytest.skip("graph has fewer than two connected nodes")
    rng = random.Random(seed + 1)
    seeds = {v: rng.choice([1.0, 2.0]) for v in rng.sample(sorted(gx.nodes), min(2, gx.number_of_nodes()))}
    restart = rng.choice([0.25, 0.15, 0.5])
    nxp = ref.networkx_ppr(gx, seeds, restart)
    exact = ref.exact_ppr(gx, seeds, restart)
    for v in gx.nodes:  # the two oracles agree (pins the pure reference)
        assert abs(nxp[v] - exact[v]) < 1e-10
    eps = 1e-5
    got = g.personalized_pagerank(seeds, restart=restart, eps=eps).to_dict()
    for v in gx.nodes:
        diff = nxp[v] - got.get(v, 0.0)
        assert -1e-10 <= diff < eps * gx.degree(v) + 1e-10, (v, diff)


@pytest.mark.parametrize("seed", GRAPH_SEEDS[1::2])
def test_certified_topk_equals_exact(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    gx = spec.nx_graph()
    rng = random.Random(seed + 2)
    seeds = {v: 1.0 for v in rng.sample(list(spec.nodes), min(2, len(spec.nodes)))}
    exact = ref.exact_ppr(gx, seeds, 0.25)
    order = ref.ranked_ids(exact)
    for k in (1, 3, 5):
        r = g.personalized_pagerank_certified(seeds, k, eps=1e-2, min_eps=1e-12)
        assert len(r) <= k
        _check_ranking_order(list(r.items()))
        if not r.certified:
            continue
        assert r.ids == order[:k], (k, r.ids, order[:k])
        # Not a lucky tie: the certified order is strict in the exact scores too.
        for a, b in zip(r.ids, order[len(r.ids) : len(r.ids) + 1]):
            assert exact[a] >= exact[b]


def test_certified_mode_certifies_most_queries():
    """The certified path is not vacuous: most random queries reach a certificate."""
    certified = total = 0
    for seed in GRAPH_SEEDS[:120]:
        spec = ref.random_graph(seed)
        gx = spec.nx_graph()
        if gx.number_of_edges() == 0:
            continue
        g = spec.build_linkgraph()
        v = max(gx.nodes, key=lambda x: (gx.degree(x), x))
        r = g.personalized_pagerank_certified({v: 1.0}, 3, eps=1e-2, min_eps=1e-12)
        total += 1
        certified += r.certified
        if r.certified:
            order = ref.ranked_ids(ref.exact_ppr(gx, {v: 1.0}, 0.25))
            assert r.ids == order[:3]
    assert certified >= 0.5 * total, (certified, total)


def test_certified_small_component_cannot_certify_missing_nodes():
    # Only two nodes can ever get mass; k = 5 cannot be certified unless the residual is 0.
    g = LinkGraph.from_edges([("a", "b"), ("c", "d"), ("d", "e"), ("e", "f"), ("f", "g")])
    r = g.personalized_pagerank_certified({"a": 1.0}, 5, eps=1e-2, min_eps=1e-6)
    assert not r.certified
    assert r.ids == ["a", "b"]
    assert r.eps == pytest.approx(1e-6)


def test_single_node_graph_keeps_all_mass():
    g = LinkGraph.from_edges([], nodes=["only"])
    r = g.personalized_pagerank({"only": 3.0})
    assert list(r.items()) == [("only", 1.0)]
    assert r.residual == 0.0


def test_isolated_seed_keeps_mass_like_a_self_loop():
    g = LinkGraph.from_edges([("a", "b"), ("x", "x")], nodes=["iso"])
    r = g.personalized_pagerank({"iso": 1.0, "a": 1.0}, eps=1e-9)
    got = r.to_dict()
    assert got["iso"] == 0.5
    assert "x" not in got  # x has only a self-loop: never reached
    exact = ref.exact_ppr(
        ref.GraphSpec(0, "hand", ("a", "b", "iso", "x"), (("a", "b", "LINK"), ("x", "x", "LINK"))).nx_graph(),
        {"iso": 1.0, "a": 1.0},
        0.25,
    )
    for v, p in got.items():
        assert abs(exact[v] - p) < 1e-8


def test_docstring_example_values_match_reference():
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    got = g.personalized_pagerank({"a": 1.0}, eps=1e-10).to_dict()
    exact = ref.exact_ppr(
        ref.GraphSpec(0, "hand", ("a", "b", "c"), (("a", "b", "L"), ("b", "c", "L"))).nx_graph(), {"a": 1.0}, 0.25
    )
    for v in "abc":
        assert abs(exact[v] - got[v]) < 1e-9


def test_weights_are_normalised():
    spec = ref.random_graph(11)
    g = spec.build_linkgraph()
    a, b = spec.nodes[0], spec.nodes[1]
    r1 = g.personalized_pagerank({a: 1.0, b: 3.0})
    r2 = g.personalized_pagerank({a: 4.0, b: 12.0})  # scaled by a power of two: same bits
    assert list(r1.items()) == list(r2.items())
    r3 = g.personalized_pagerank({a: 1.0, b: 0.0})
    r4 = g.personalized_pagerank({a: 1.0})
    assert list(r3.items()) == list(r4.items())


def test_top_k_is_prefix_of_full_ranking():
    spec = ref.random_graph(4, "gnp", (40, 60))
    g = spec.build_linkgraph()
    seeds = {spec.nodes[0]: 1.0}
    full = list(g.personalized_pagerank(seeds).items())
    for k in (1, 2, 5, 10, len(full) + 5):
        assert list(g.personalized_pagerank(seeds, k=k).items()) == full[:k]


def test_max_pushes_truncates_and_reports_it():
    spec = ref.random_graph(2, "gnp", (50, 60))
    g = spec.build_linkgraph()
    seeds = {spec.nodes[0]: 1.0}
    r = g.personalized_pagerank(seeds, eps=1e-7, max_pushes=3)
    assert r.truncated and r.pushes == 3
    full = g.personalized_pagerank(seeds, eps=1e-7)
    assert not full.truncated and full.pushes > 3
    assert r.residual > full.residual


def test_masked_degrees_in_error_bounds():
    g = LinkGraph.from_edges([("a", "b"), ("a", "c"), ("a", "d"), ("b", "c")])
    r = g.personalized_pagerank({"a": 1.0}, eps=1e-3, visible=["a", "b"])
    assert set(r.ids) == {"a", "b"}
    assert r.error_bounds().tolist() == [min(1e-3, r.residual)] * 2  # visible degree 1 each


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_batch_equals_single_queries(threads):
    spec = ref.random_graph(21, "gnp", (40, 60))
    g = spec.build_linkgraph()
    rng = np.random.default_rng(5)
    queries = [rng.choice(g.num_nodes, size=int(rng.integers(1, 4)), replace=False) for _ in range(12)]
    seeds = np.concatenate([np.sort(q) for q in queries]).astype(np.int32)
    weights = rng.uniform(0.5, 2.0, size=seeds.shape[0])
    ptr = np.concatenate(([0], np.cumsum([len(q) for q in queries]))).astype(np.int64)
    vm = _core.VisibilityMask(g.core, rng.random(g.num_nodes) < 2)  # all visible, masked path
    for visible in (None, vm):
        b = _core.ppr_batch(g.core, ptr, seeds, weights, 0.25, 1e-5, 0, 0, threads, visible)
        out_ptr, nodes, scores, residual = b.ptr, b.nodes, b.scores, b.residual
        for i in range(len(queries)):
            one = _core.personalized_pagerank(
                g.core, seeds[ptr[i] : ptr[i + 1]], weights[ptr[i] : ptr[i + 1]], 0.25, 1e-5, 0, 0, visible
            )
            assert np.array_equal(nodes[out_ptr[i] : out_ptr[i + 1]], one.nodes)
            assert np.array_equal(scores[out_ptr[i] : out_ptr[i + 1]], one.scores)
            assert residual[i] == one.residual


def test_result_arrays_types():
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    r = g.personalized_pagerank({"a": 1.0})
    assert r.indices.dtype == np.int32 and r.scores.dtype == np.float64
    assert r.indices.flags.c_contiguous and r.scores.flags.c_contiguous
