"""`max_residual`: a hard cap on the total (L1) error of the push, checked against exact PPR.

At eps = 1e-6 the plain push guarantees ||p* - p||_1 <= eps * sum(deg), which on a 1,000-node
graph of mean degree 7 is 7e-3, not 1e-3; `max_residual=1e-3` closes that gap by lowering eps
until the unpushed mass (= the exact L1 error) is below the target."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from conceptwalk import InputError, LinkGraph


def exact(G: nx.Graph, order: list[str], seeds: dict[str, float], restart: float) -> np.ndarray:
    A = nx.to_scipy_sparse_array(G, nodelist=order, format="csr")
    deg = np.asarray(A.sum(axis=1)).ravel()
    idx = {v: i for i, v in enumerate(order)}
    s = np.zeros(len(order))
    for k, w in seeds.items():
        s[idx[k]] = w
    s /= s.sum()
    inv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0)
    p = s.copy()
    for _ in range(5000):
        nxt = restart * s + (1 - restart) * (A @ (p * inv) + np.where(deg == 0, p, 0.0))
        if np.abs(nxt - p).sum() < 1e-16:
            return nxt
        p = nxt
    return p


@pytest.mark.parametrize("seed", range(6))
def test_l1_error_below_target_on_kb_sized_graphs(seed: int) -> None:
    G = nx.gnm_random_graph(1000, 3500, seed=seed)
    G.add_edges_from((0, v) for v in range(1, 120, 3))  # a hub
    order = [str(i) for i in range(1000)]
    G = nx.relabel_nodes(G, {i: str(i) for i in range(1000)})
    order.sort()
    g = LinkGraph.from_edges(list(G.edges()), nodes=order)
    seeds = {str(seed * 17 % 1000): 1.0, "0": 0.5}
    p_star = exact(G, g.ids, seeds, 0.25)
    plain = g.personalized_pagerank(seeds, eps=1e-6)
    capped = g.personalized_pagerank(seeds, eps=1e-6, max_residual=1e-3)
    for r in (plain, capped):
        p = np.zeros(g.num_nodes)
        p[r.indices] = r.scores
        l1 = float(np.abs(p_star - p).sum())
        assert l1 == pytest.approx(r.residual, abs=1e-9)  # the residual is the exact L1 error
        assert (p_star - p >= -1e-12).all()
    assert capped.residual <= 1e-3 and not capped.truncated
    assert capped.eps <= plain.eps
    if plain.residual <= 1e-3:
        assert capped.eps == plain.eps  # nothing more to do


def test_max_residual_respects_the_push_budget_and_validates() -> None:
    g = LinkGraph.from_edges([(str(i), str(i + 1)) for i in range(200)])
    r = g.personalized_pagerank({"0": 1.0}, eps=1e-3, max_residual=1e-9, max_pushes=50)
    assert r.truncated and r.pushes <= 50
    for bad in (0, -1.0, float("nan"), float("inf"), "x"):
        with pytest.raises(InputError, match="max_residual"):
            g.personalized_pagerank({"0": 1.0}, max_residual=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("eps", [1e-3, 1e-4])
def test_error_bounds_bound_the_exact_error(eps: float) -> None:
    """Ranking.error_bounds() = min(eps*deg, residual) really bounds p*(v) - p(v)."""
    G = nx.relabel_nodes(nx.barabasi_albert_graph(300, 3, seed=7), str)
    g = LinkGraph.from_edges(list(G.edges()), nodes=sorted(G))
    seeds = {"0": 1.0, "17": 0.5}
    r = g.personalized_pagerank(seeds, eps=eps)
    p_star = exact(G, g.ids, seeds, 0.25)
    gap = p_star[r.indices] - r.scores
    bounds = r.error_bounds()
    assert (gap >= -1e-12).all() and (gap <= bounds + 1e-12).all()
    deg = np.array([G.degree(g.ids[i]) for i in r.indices.tolist()], dtype=float)
    np.testing.assert_allclose(bounds, np.minimum(eps * deg, r.residual))
