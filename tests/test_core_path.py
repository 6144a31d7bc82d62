"""Shortest paths (length vs networkx, validity, lexicographic rule) and multi-source hops."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from conftest import GRAPH_SEEDS

import reference as ref
from conceptwalk import LinkGraph, _core


def _pairs(spec: ref.GraphSpec, seed: int, count: int = 15) -> list[tuple[str, str]]:
    rng = random.Random(seed + 5)
    nodes = list(spec.nodes)
    pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(count)]
    pairs.append((nodes[0], nodes[0]))
    return pairs


def _visible(spec: ref.GraphSpec, seed: int) -> list[str] | None:
    if seed % 3 != 1:
        return None
    rng = random.Random(seed + 6)
    return [v for v in spec.nodes if rng.random() < 0.8]


@pytest.mark.parametrize("seed", GRAPH_SEEDS)
def test_shortest_path_against_networkx_and_reference(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    visible = _visible(spec, seed)
    gx = spec.nx_graph(visible)
    small = gx.number_of_nodes() <= 30
    for s, t in _pairs(spec, seed):
        if s not in gx or t not in gx:
            continue
        path = g.shortest_path(s, t, visible=visible)
        try:
            length = nx.shortest_path_length(gx, s, t)
        except nx.NetworkXNoPath:
            assert path is None
            assert ref.lex_shortest_path(gx, s, t) is None
            continue
        assert path is not None
        assert len(path) == length + 1
        assert path[0] == s and path[-1] == t
        assert len(set(path)) == len(path)
        for a, b in zip(path, path[1:]):
            assert gx.has_edge(a, b), (a, b)
        assert path == ref.lex_shortest_path(gx, s, t)
        if small:
            try:
                assert path == ref.lex_shortest_path_enumerated(gx, s, t)
            except RuntimeError:  # too many shortest paths to enumerate; greedy reference above
                pass


def test_lexicographic_rule_on_grid():
    # Every monotone lattice path from the corner is shortest; the smallest id sequence wins.
    g = nx.grid_2d_graph(4, 4)
    name = {v: f"{v[0]}{v[1]}" for v in g.nodes}
    edges = [(name[a], name[b]) for a, b in g.edges]
    lg = LinkGraph.from_edges(edges[::-1])
    assert lg.shortest_path("00", "33") == ["00", "01", "02", "03", "13", "23", "33"]
    assert lg.shortest_path("33", "00") == ["33", "23", "13", "03", "02", "01", "00"]
    assert lg.shortest_path("03", "30") == ["03", "02", "01", "00", "10", "20", "30"]
    # Hiding part of the lexicographically smallest path picks the next one.
    visible = [v for v in name.values() if v != "02"]
    assert lg.shortest_path("00", "33", visible=visible) == ["00", "01", "11", "12", "13", "23", "33"]


def test_lexicographic_rule_prefers_smaller_ids_not_first_seen():
    # Both middles give length 2; "m" < "z" although z's edges come first.
    g = LinkGraph.from_edges([("s", "z"), ("z", "t"), ("s", "m"), ("m", "t")])
    assert g.shortest_path("s", "t") == ["s", "m", "t"]
    # Unicode order is code-point order: "Z" < "a" < "é" < "日".
    g = LinkGraph.from_edges([("s", "日"), ("日", "t"), ("s", "é"), ("é", "t"), ("s", "Z"), ("Z", "t")])
    assert g.shortest_path("s", "t") == ["s", "Z", "t"]


def test_path_edge_cases(small_graph):
    g = small_graph
    assert g.shortest_path("a", "a") == ["a"]
    assert g.shortest_path("a", "zz-isolated") is None
    assert g.shortest_path("zz-isolated", "zz-isolated") == ["zz-isolated"]
    assert g.shortest_path("e", "e") == ["e"]
    # Hidden cut vertex: no path.
    assert g.shortest_path("a", "e", visible=["a", "b", "c", "e", "f"]) is None


def test_path_is_symmetric_in_length():
    spec = ref.random_graph(40, "gnp", (40, 50))
    g = spec.build_linkgraph()
    rng = random.Random(1)
    for _ in range(40):
        s, t = rng.choice(spec.nodes), rng.choice(spec.nodes)
        p, q = g.shortest_path(s, t), g.shortest_path(t, s)
        assert (p is None) == (q is None)
        if p is not None:
            assert len(p) == len(q)


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::2])
def test_hops_against_reference(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    visible = _visible(spec, seed)
    gx = spec.nx_graph(visible)
    rng = random.Random(seed + 7)
    nodes = sorted(gx.nodes)
    seeds = rng.sample(nodes, min(len(nodes), rng.randint(1, 4)))
    for max_hops in (None, 0, 1, 2):
        got = g.hops(seeds, nodes, max_hops=max_hops, visible=visible)
        assert got == ref.multi_source_hops(gx, seeds, nodes, max_hops)


def test_hops_ties_use_smallest_seed():
    # x is at distance 2 from both "b" and "a": via is "a".
    g = LinkGraph.from_edges([("b", "m1"), ("m1", "x"), ("a", "m2"), ("m2", "x"), ("c", "x")])
    got = g.hops(["b", "a"], ["x", "m1", "m2", "b", "c"])
    assert got == {"x": (2, "a"), "m1": (1, "b"), "m2": (1, "a"), "b": (0, "b"), "c": (3, "a")}


def test_hops_raw_core_duplicates_and_order():
    spec = ref.random_graph(50, "tree", (30, 40))
    g = spec.build_linkgraph()
    seeds = np.array([5, 3, 5, 3], dtype=np.int32)
    targets = np.array([0, 1, 1, 2, 0], dtype=np.int32)
    r, r2 = (
        _core.multi_source_hops(g.core, seeds, targets),
        _core.multi_source_hops(g.core, np.array([3, 5], dtype=np.int32), targets),
    )
    hops, via, hops2, via2 = r.hops, r.via, r2.hops, r2.via
    assert np.array_equal(hops, hops2) and np.array_equal(via, via2)
    assert hops[1] == hops[2] and via[1] == via[2]
    gx = spec.nx_graph()
    ids = g.ids
    expect = ref.multi_source_hops(gx, [ids[3], ids[5]], [ids[t] for t in targets.tolist()])
    for t, h, v in zip(targets.tolist(), hops.tolist(), via.tolist()):
        e = expect[ids[t]]
        assert (h, v) == ((-1, -1) if e is None else (e[0], ids.index(e[1])))


def test_hops_no_seeds_reaches_nothing():
    g = LinkGraph.from_edges([("a", "b")])
    r = _core.multi_source_hops(g.core, np.zeros(0, np.int32), np.array([0, 1], np.int32))
    hops, via = r.hops, r.via
    assert hops.tolist() == [-1, -1] and via.tolist() == [-1, -1]


@pytest.mark.parametrize("seed", GRAPH_SEEDS)
def test_shortest_paths_from_is_shortest_path_for_every_target(seed):
    """One BFS from the source gives, for every target, the chain the bidirectional BFS gives
    (shortest_path's rule); under a budget, a chain found is still that chain, one not found is
    empty, and the BFS never reads more row entries than the budget."""
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    visible = _visible(spec, seed)
    vm = None if visible is None else g.visibility(visible)
    shown = [v for v in g.ids if visible is None or v in set(visible)]
    if not shown:
        return
    rng = random.Random(seed + 9)
    source = g.index(rng.choice(shown))
    targets = [g.index(v) for v in shown]
    rng.shuffle(targets)
    targets += targets[:3]  # repeats allowed
    tarr = np.array(targets, dtype=np.int32)
    for budget in (-1, 0, 1, 5, 40):
        r = _core.shortest_paths_from(g.core, source, tarr, budget, vm)
        assert len(r.ptr) == len(targets) + 1 and r.ptr[0] == 0 and r.ptr[-1] == len(r.path)
        assert budget < 0 or r.visits <= budget
        for i, t in enumerate(targets):
            chain = r.path[r.ptr[i] : r.ptr[i + 1]].tolist()
            want = _core.shortest_path(g.core, source, t, vm).path.tolist()
            if budget < 0:
                assert chain == want
            else:
                assert chain in (want, [])
    # the budget is what keeps it local: with none, every reachable target is found
    r = _core.shortest_paths_from(g.core, source, tarr, -1, vm)
    assert all(
        r.ptr[i + 1] > r.ptr[i] for i, t in enumerate(targets) if _core.shortest_path(g.core, source, t, vm).path.size
    )


def test_shortest_paths_from_bad_input():
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    vm = g.visibility(["a", "b"])
    with pytest.raises(IndexError):
        _core.shortest_paths_from(g.core, -1, np.array([0], np.int32))
    with pytest.raises(IndexError):
        _core.shortest_paths_from(g.core, 0, np.array([3], np.int32))
    with pytest.raises(IndexError, match="not visible"):
        _core.shortest_paths_from(g.core, 0, np.array([2], np.int32), -1, vm)
    with pytest.raises(ValueError):
        _core.shortest_paths_from(g.core, 0, np.zeros((1, 1), np.int32))
    with pytest.raises(TypeError):
        _core.shortest_paths_from(g.core, 0, np.array([1.5]))
    r = _core.shortest_paths_from(g.core, 0, np.zeros(0, np.int32))
    assert r.ptr.tolist() == [0] and r.path.size == 0
