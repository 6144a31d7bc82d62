"""Hub seeds answer: a seed with more visible neighbours than (1 - restart) / eps gets k results,
ordered as exact PPR orders them within the per-node bound at the eps the query ended at."""

from __future__ import annotations

import pytest

from conceptwalk import Caller, LinkGraph, graph_context

ALL = Caller.all_access()


def _star(n: int) -> LinkGraph:
    # hub h with n leaves; leaf i is also linked to "c{i % 7}" so exact PPR is not all ties
    edges = [("h", f"l{i:06d}") for i in range(n)] + [(f"l{i:06d}", f"c{i % 7}") for i in range(0, n, 3)]
    return LinkGraph.from_edges(edges)


def _exact_star(n: int, restart: float) -> dict[str, float]:
    import networkx as nx

    g = nx.Graph()
    g.add_edges_from([("h", f"l{i:06d}") for i in range(n)] + [(f"l{i:06d}", f"c{i % 7}") for i in range(0, n, 3)])
    return nx.pagerank(g, alpha=1 - restart, personalization={"h": 1.0}, tol=1e-13, max_iter=500)


@pytest.mark.parametrize("n", [8_000, 100_000])
def test_hub_seed_returns_k_in_exact_order_within_bound(n: int) -> None:
    g = _star(n)
    k = 20
    res = graph_context(g, concepts=["h"], k=k, caller=ALL)
    assert len(res.results) == k and res.reason is None
    assert res.eps_reached < res.eps and res.to_dict()["epsReached"] == res.eps_reached
    exact = _exact_star(n, 0.25) if n <= 8_000 else None
    eps = res.eps_reached
    for a, b in zip(res.results, res.results[1:]):  # ranked by score, ties by id
        assert a.score > b.score or (a.score == b.score and a.id < b.id)
    if exact is not None:
        for r in res.results:  # per-node bound 0 <= p* - p < eps * deg (deg <= 8 here)
            assert -1e-9 <= exact[r.id] - r.score < eps * 8 + 1e-9
        # any pair the push orders against the exact order is within the bound
        for a in res.results:
            for b in res.results:
                if exact[a.id] > exact[b.id] + 2 * eps * 8 + 1e-9:
                    assert a.score >= b.score


def test_hub_with_type_filter_and_no_false_reason() -> None:
    g = LinkGraph.from_edges([("h", f"l{i}") for i in range(9000)] + [("l1", "x")], nodes=[{"id": "x", "type": "DOC"}])
    res = graph_context(g, concepts=["h"], k=5, caller=ALL, node_types=["DOC"])
    assert [r.id for r in res.results] == ["x"]
    pair = graph_context(LinkGraph.from_edges([("a", "b")]), concepts=["a", "b"], caller=ALL)
    assert pair.results == [] and "no visible node other than the seeds" in pair.reason
    assert "no visible neighbours" not in pair.reason


def test_default_unchanged_when_not_a_hub() -> None:
    g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d")])
    res = graph_context(g, concepts=["a"], k=2, caller=ALL)
    assert res.eps_reached == res.eps and "epsReached" not in res.to_dict()
