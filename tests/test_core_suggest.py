"""Resource allocation against networkx's index and a pure-Python reference."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from conftest import GRAPH_SEEDS

import reference as ref
from conceptwalk import LinkGraph, _core


def _query_nodes(spec: ref.GraphSpec, seed: int) -> list[str]:
    rng = random.Random(seed + 3)
    nodes = list(spec.nodes)
    return nodes if len(nodes) <= 12 else rng.sample(nodes, 12)


def _visible(spec: ref.GraphSpec, seed: int) -> list[str] | None:
    if seed % 4:
        return None
    rng = random.Random(seed + 4)
    return [v for v in spec.nodes if rng.random() < 0.8]


@pytest.mark.parametrize("seed", GRAPH_SEEDS)
def test_ra_against_reference_and_networkx(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    visible = _visible(spec, seed)
    gx = spec.nx_graph(visible)
    for a in _query_nodes(spec, seed):
        if a not in gx:
            continue
        for min_shared in (1, 2, 3):
            got = [(s.id, s.score, s.shared) for s in g.resource_allocation(a, min_shared=min_shared, visible=visible)]
            # The reference sums the same terms in the same (ascending) order: bit-identical.
            assert got == ref.resource_allocation(gx, a, min_shared)
            nxs = ref.networkx_ra(gx, a, min_shared)
            assert {t for t, _, _ in got} == set(nxs)
            for t, score, _ in got:
                assert math.isclose(score, nxs[t], rel_tol=1e-12)


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::5])
def test_ra_top_k_is_prefix(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    for a in _query_nodes(spec, seed)[:4]:
        full = g.resource_allocation(a, min_shared=1)
        for k in (1, 2, 3, len(full) + 1):
            assert g.resource_allocation(a, min_shared=1, k=k) == full[:k]


def test_ra_hand_made():
    g = LinkGraph.from_edges(
        [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("c", "x"), ("y", "b"), ("x", "x"), ("a", "d"), ("d", "b")]
    )
    got = g.resource_allocation("a")
    # b shares x (deg 3), y (deg 2), d (deg 2); c shares only x; d is already linked... to a.
    assert [(s.id, s.shared) for s in got] == [("b", ("d", "x", "y"))]
    assert got[0].score == pytest.approx(1 / 3 + 1 / 2 + 1 / 2)
    assert got[0].to_dict() == {
        "id": "b",
        "type": "NODE",
        "title": None,
        "score": got[0].score,
        "shared": [{"id": z, "title": None} for z in ("d", "x", "y")],
    }
    assert [s.id for s in g.resource_allocation("a", min_shared=1)] == ["b", "c"]
    assert g.resource_allocation("a", min_shared=4) == []
    # Hiding a shared neighbour lowers the count and the degrees of the others.
    hidden = g.resource_allocation("a", visible=["a", "b", "x", "y", "c"])
    assert [(s.id, s.shared) for s in hidden] == [("b", ("x", "y"))]
    assert hidden[0].score == pytest.approx(1 / 3 + 1 / 2)


def test_ra_isolated_and_leaf_nodes():
    g = LinkGraph.from_edges([("a", "b")], nodes=["iso"])
    assert g.resource_allocation("iso", min_shared=1) == []
    assert g.resource_allocation("a", min_shared=1) == []


def test_ra_is_symmetric():
    spec = ref.random_graph(9, "gnp", (30, 40))
    g = spec.build_linkgraph()
    table = {a: {s.id: s for s in g.resource_allocation(a, min_shared=1)} for a in spec.nodes}
    for a, row in table.items():
        for b, s in row.items():
            assert table[b][a].score == pytest.approx(s.score, rel=1e-12)
            assert table[b][a].shared == s.shared


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_ra_batch_equals_single(threads):
    spec = ref.random_graph(30, "hubs", (40, 60))
    g = spec.build_linkgraph()
    nodes = np.arange(g.num_nodes, dtype=np.int32)
    b = _core.suggest_batch(g.core, nodes, 1, 0, threads)
    ptr, targets, scores, sptr, shared = b.ptr, b.targets, b.scores, b.shared_ptr, b.shared
    for i in nodes.tolist():
        one = _core.resource_allocation(g.core, i, 1, 0)
        t1, s1, p1, sh1 = one.targets, one.scores, one.shared_ptr, one.shared
        a, b = ptr[i], ptr[i + 1]
        assert np.array_equal(targets[a:b], t1)
        assert np.array_equal(scores[a:b], s1)
        for j in range(b - a):
            assert np.array_equal(shared[sptr[a + j] : sptr[a + j + 1]], sh1[p1[j] : p1[j + 1]])


def test_ra_candidates_count_ignores_k():
    spec = ref.random_graph(31, "dense", (20, 25))
    g = spec.build_linkgraph()
    a = g.ids.index(spec.nodes[0])
    full = _core.resource_allocation(g.core, a, 1, 0)
    top = _core.resource_allocation(g.core, a, 1, 2)
    assert top.candidates == full.candidates == len(full.targets)
    assert np.array_equal(top.targets, full.targets[:2])
