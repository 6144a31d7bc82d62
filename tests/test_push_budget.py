"""The push's work budget: no valid parameters make a push run unbounded, on any path that
reaches it (plain, max_residual, certified, the batch, graph_context by concepts and by question,
coverage, the hub fill, link_suggest method="ppr", the batches across threads, Dask).

CI's fuzzer found graph_context_text at restart 1e-9, eps 1e-3, rank="coverage" on a 19-node
graph running ~117 s: the push moves restart * r(u) per push, ~1/(restart * eps) pushes. Every
push now reads at most ``_core.PUSH_VISITS`` adjacency entries. These tests assert the *work*
(``edge_visits``, ``pushes``), never wall time, and that a cut result says so and claims no bound
it does not have: its scores satisfy the per-node bound at the eps it reports (checked against
the exact PPR of a linear solve), and certification never claims exactness after a cut.
"""

from __future__ import annotations

import numpy as np
import pytest

from conceptwalk import Caller, LinkGraph, _core, graph_context, graph_context_batch, link_suggest
from conceptwalk.tools import link_suggest_batch

ALL = Caller.all_access()
BUDGET = _core.PUSH_VISITS


def _fuzz19() -> LinkGraph:
    # a ring of 19 plus chords: the size of the fuzzer's graph
    rng = np.random.default_rng(0)
    edges = [(f"n{i:02d}", f"n{(i + 1) % 19:02d}") for i in range(19)]
    edges += [(f"n{a:02d}", f"n{b:02d}") for a, b in rng.integers(0, 19, size=(20, 2)).tolist()]
    titles = [{"id": f"n{i:02d}", "title": "graph walk" if i % 3 else "token push"} for i in range(19)]
    return LinkGraph.from_edges(edges, nodes=titles)


def _dense() -> LinkGraph:
    return LinkGraph.from_edges([(f"d{a:02d}", f"d{b:02d}") for a in range(40) for b in range(a + 1, 40)])


def _star() -> LinkGraph:
    # a hub of 3,000 leaves, some leaves linked in pairs
    return LinkGraph.from_edges(
        [("hub", f"l{i:04d}") for i in range(3000)] + [(f"l{i:04d}", f"l{i + 1:04d}") for i in range(0, 3000, 7)]
    )


def _path() -> LinkGraph:
    return LinkGraph.from_edges([(f"p{i:03d}", f"p{i + 1:03d}") for i in range(200)])


GRAPHS = {"fuzz19": _fuzz19, "dense": _dense, "star": _star, "path": _path}


def _exact(g: LinkGraph, seeds: dict[str, float], restart: float) -> np.ndarray:
    """Exact PPR by a linear solve: p = restart * s + (1 - restart) * A D^-1 p (a node without
    neighbours keeps its mass)."""
    n = g.num_nodes
    indptr, indices = np.asarray(g.core.indptr), np.asarray(g.core.indices)
    walk = np.zeros((n, n))
    for u in range(n):
        row = indices[indptr[u] : indptr[u + 1]]
        if row.size:
            walk[row, u] = 1.0 / row.size
        else:
            walk[u, u] = 1.0
    s = np.zeros(n)
    for k, w in seeds.items():
        s[g.index(k)] = w
    s /= s.sum()
    return np.linalg.solve(np.eye(n) - (1.0 - restart) * walk, restart * s)


def _check_bound(g: LinkGraph, r, seeds: dict[str, float], restart: float) -> None:
    """Every node (returned or not) is below its exact PPR by less than r.eps * deg."""
    exact = _exact(g, seeds, restart)
    p = np.zeros(g.num_nodes)
    p[np.asarray(r.indices)] = r.scores
    gap = exact - p
    deg = np.asarray(g.degrees, dtype=np.float64)
    assert (gap >= -1e-6).all()
    assert (gap < r.eps * deg + 1e-6).all(), (r.eps, float((gap - r.eps * deg).max()))
    assert (r.error_bounds() >= gap[np.asarray(r.indices)] - 1e-6).all()


def _first(g: LinkGraph) -> str:
    return "hub" if "hub" in g.id_index else g.ids[0]


@pytest.mark.parametrize("restart, eps", [(1e-9, 1e-3), (1e-8, 1e-4)])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_a_vanishing_restart_stops_at_the_budget_and_says_so(name: str, restart: float, eps: float) -> None:
    # restart * eps = 1e-12: the smallest product an uncapped push accepts (~1e12 pushes before)
    g = GRAPHS[name]()
    seeds = {_first(g): 1.0}
    r = g.personalized_pagerank(seeds, restart=restart, eps=eps)
    maxdeg = int(np.asarray(g.degrees).max())
    assert r.edge_visits <= BUDGET and r.pushes <= r.edge_visits + 1
    if r.truncated:  # the budget stopped it, and it says which eps its scores satisfy
        assert BUDGET - maxdeg < r.edge_visits and r.eps > eps
    else:  # K_40 and the star at eps 1e-3: at most one push (K_40's seed's; the hub is below) is due
        assert name in ("dense", "star") and eps == 1e-3 and r.pushes <= 1 and r.eps == eps
    if eps == 1e-4:
        assert r.truncated
    _check_bound(g, r, seeds, restart)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_a_tiny_eps_is_bounded_and_exact_within_its_bound(name: str) -> None:
    g = GRAPHS[name]()
    seeds = {_first(g): 1.0}
    for restart in (0.25, 0.999999):
        eps = 1e-12 / restart
        r = g.personalized_pagerank(seeds, restart=restart, eps=eps)
        assert r.edge_visits <= BUDGET
        assert r.eps == eps if not r.truncated else r.eps > eps
        _check_bound(g, r, seeds, restart)


def test_the_smallest_restart_with_a_push_cap_is_bounded_by_the_budget() -> None:
    g = _fuzz19()
    r = g.personalized_pagerank({"n00": 1.0}, restart=5e-324, eps=1e-300, max_pushes=2**40)
    assert r.truncated and r.edge_visits <= BUDGET and r.pushes <= BUDGET
    masked = g.personalized_pagerank(
        {"n00": 1.0}, restart=1e-9, eps=1e-3, visible=[i for i in g.ids if i not in ("n05", "n11")]
    )
    assert masked.truncated and masked.edge_visits <= BUDGET


def test_max_residual_and_certified_are_bounded_and_never_claim_exactness() -> None:
    # K_40 at eps 1e-3 is done after one push; the lowered eps rounds run into the budget
    g = _dense()
    r = g.personalized_pagerank({"d00": 1.0}, restart=1e-8, eps=1e-3, max_residual=1e-12)
    assert r.truncated and BUDGET - 39 < r.edge_visits <= BUDGET and r.eps > 5e-4
    _check_bound(g, r, {"d00": 1.0}, 1e-8)
    c = g.personalized_pagerank_certified({"d00": 1.0}, 5, restart=1e-8, eps=1e-3, min_eps=1e-300, max_pushes=2**31 - 1)
    assert c.truncated and not c.certified and BUDGET - 39 < c.edge_visits <= BUDGET
    _check_bound(g, c, {"d00": 1.0}, 1e-8)


def test_a_push_cap_reports_the_eps_its_scores_satisfy() -> None:
    # max_pushes cut it before eps held: the eps asked for (1e-7) is not what the scores satisfy
    g = _path()
    r = g.personalized_pagerank({"p100": 1.0}, eps=1e-7, max_pushes=5)
    assert r.truncated and r.pushes == 5 and r.eps > 1e-7
    _check_bound(g, r, {"p100": 1.0}, 0.25)


def test_the_batches_across_threads_are_bounded_and_equal_the_single_calls() -> None:
    g = _fuzz19()
    seeds = np.array([0, 3, 5], np.int32)
    b = _core.ppr_batch(g.core, np.array([0, 1, 3]), seeds, np.ones(3), 1e-9, 1e-3, 0, 0, 2)
    assert b.truncated.tolist() == [True, True] and (b.edge_visits <= BUDGET).all()
    one = _core.personalized_pagerank(g.core, seeds[1:], np.ones(2), 1e-9, 1e-3)
    assert b.edge_visits[1] == one.edge_visits and b.eps[1] == one.eps
    cb = _core.context_batch(g.core, np.array([0, 1, 3]), seeds, np.ones(3), 1e-9, 1e-3, 5, threads=2, rank=1)
    assert cb.push_truncated.tolist() == [1, 1] and (cb.edge_visits <= BUDGET).all()
    single = _core.graph_context(g.core, seeds[1:], np.ones(2), 1e-9, 1e-3, 5, rank=1)
    assert cb.edge_visits[1] == single.edge_visits and cb.eps[1] == single.eps


@pytest.mark.parametrize("rank", ["ppr", "coverage"])
@pytest.mark.parametrize("name, restart, eps", [("fuzz19", 1e-9, 1e-3), ("dense", 1e-8, 1e-4), ("star", 1e-8, 1e-4)])
def test_graph_context_at_a_vanishing_restart_is_bounded_and_says_truncated(
    name: str, restart: float, eps: float, rank: str
) -> None:
    # (K_40 and the star at 1e-9, 1e-3 do at most one push: the fill may not halve eps below
    # restart * eps = 1e-12, so they answer uncut)
    g = GRAPHS[name]()
    seed = _first(g)
    res = graph_context(g, concepts=[seed], caller=ALL, restart=restart, eps=eps, k=5, rank=rank)
    assert len(res.results) == 5 and res.edge_visits <= BUDGET
    assert res.truncated and res.push_truncated and res.eps_reached > eps
    d = res.to_dict()
    assert d["truncated"] and d["pushTruncated"] and d["epsReached"] == res.eps_reached
    assert "the push's work budget ran out" in str(res)
    if rank == "coverage":
        assert d["hopsCompleted"] == 2  # the coverage pass itself was not cut
    # each score is within eps_reached * deg of exact
    exact = _exact(g, {seed: 1.0}, restart)
    for x in res.results:
        gap = exact[g.index(x.id)] - x.score
        assert -1e-6 <= gap < res.eps_reached * g.degree(x.id) + 1e-6
    # the batch across threads: the same answers
    batch = graph_context_batch(
        g, [(None, [seed])] * 2, caller=ALL, restart=restart, eps=eps, k=5, rank=rank, threads=2
    )
    assert [b.to_dict() for b in batch] == [d, d] and all(b.push_truncated for b in batch)


def test_a_normal_query_never_meets_the_budget() -> None:
    # the sizing: a round at eps reads at most 1/(restart * eps) entries (unmasked)
    for name in sorted(GRAPHS):
        g = GRAPHS[name]()
        for restart in (0.05, 0.25):
            for eps in (1e-4, 1e-6):
                r = g.personalized_pagerank({_first(g): 1.0}, restart=restart, eps=eps)
                assert not r.truncated and r.edge_visits <= 1 / (restart * eps)
                res = graph_context(g, concepts=[_first(g)], caller=ALL, restart=restart, eps=eps, k=20)
                assert not res.truncated and not res.push_truncated and "pushTruncated" not in res.to_dict()


def test_a_hub_fill_at_restart_005_fits_in_the_budget() -> None:
    hub = LinkGraph.from_edges([("h", f"l{i:06d}") for i in range(200_000)])
    res = graph_context(hub, concepts=["h"], caller=ALL, restart=0.05, k=20)
    assert len(res.results) == 20 and not res.push_truncated and res.edge_visits < BUDGET // 10
    assert res.eps_reached < res.eps  # the fill lowered it, within its own budget


def test_link_suggest_ppr_stops_where_the_context_push_stops() -> None:
    # ppr_suggest's push is graph_context's fill; cut in its first round, both end in one state
    g = _fuzz19()
    core = _core.graph_context(g.core, np.array([0], np.int32), np.ones(1), 1e-9, 1e-3, 5)
    assert core.push_truncated and core.edge_visits <= BUDGET
    s = link_suggest(g, "n00", caller=ALL, method="ppr", restart=1e-9, eps=1e-3)
    assert s.eps_reached == core.eps and s.to_dict()["epsReached"] == core.eps
    assert s.truncated and s.to_dict()["truncated"] is True and "work budget cut it" in str(s)
    b = link_suggest_batch(g, ["n00", "n00"], caller=ALL, method="ppr", restart=1e-9, eps=1e-3, threads=2)
    assert [x.eps_reached for x in b] == [core.eps, core.eps]
    assert [x.truncated for x in b] == [True, True]
    import pickle

    assert pickle.loads(pickle.dumps(s)).truncated  # pickled with it (Dask ships results)
    # a normal query is not cut and says nothing about it
    ok = link_suggest(g, "n00", caller=ALL, method="ppr")
    assert not ok.truncated and "truncated" not in ok.to_dict()


def test_a_question_through_the_store_is_bounded(tmp_path) -> None:
    from conceptwalk.kb.store import KnowledgeBase

    g = _fuzz19()
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    kb.add_nodes([{"id": i, "title": g.title(i)} for i in g.ids])
    kb.add_edges([(g.ids[a], g.ids[b]) for a, b in zip(g.edge_src.tolist(), g.edge_dst.tolist())])
    try:
        res = graph_context(kb, "token push", caller=ALL, restart=1e-9, eps=1e-3, k=5, rank="coverage")
        assert res.seeds and res.results and res.push_truncated and res.edge_visits <= BUDGET
        assert res.eps_reached > 1e-3
    finally:
        kb.close()


def test_the_dask_batch_is_bounded() -> None:
    distributed = pytest.importorskip("distributed")
    from conceptwalk.serve import distributed as cwd

    g = _fuzz19()
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        got = cwd.graph_context_batch(client, g, [{"concepts": ["n00"]}], caller=ALL, restart=1e-9, eps=1e-3, k=5)
    finally:
        client.close()
        cluster.close()
    want = graph_context(g, concepts=["n00"], caller=ALL, restart=1e-9, eps=1e-3, k=5)
    assert got[0].to_dict() == want.to_dict() and got[0].push_truncated and got[0].edge_visits <= BUDGET
