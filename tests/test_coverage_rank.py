"""rank="coverage" of graph_context: differential against a plain networkx reference on random
graphs and masks, the deletion oracle, determinism, the batch, and bad input."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from conceptwalk import Caller, InputError, LinkGraph, graph_context, graph_context_batch

ALL = Caller.all_access()


def _random(seed: int) -> tuple[list[dict], list[tuple[str, str, str]]]:
    rng = random.Random(seed)
    n = rng.randint(5, 60)
    ids = [f"n{i:02d}" for i in range(n)]
    nodes = [
        {"id": i, "type": rng.choice(["CONCEPT", "DOC", "FILE"]), "scopes": rng.choice([[], [], ["team"], ["other"]])}
        for i in ids
    ]
    edges = [(rng.choice(ids), rng.choice(ids), "R") for _ in range(rng.randint(n, 3 * n))]
    return nodes, edges


def _reference(nodes, edges, visible, seeds, max_hops, node_types, k, ppr_scores):
    """Coverage ranking by plain BFS on the induced visible subgraph (networkx)."""
    h = nx.Graph()
    h.add_nodes_from(n["id"] for n in nodes if n["id"] in visible)
    h.add_edges_from((a, b) for a, b, _ in edges if a in visible and b in visible and a != b)
    types = {n["id"]: n["type"] for n in nodes}
    cover: dict[str, list[str]] = {}
    near: dict[str, list[int]] = {}  # seeds at 1 hop, at 2 hops
    for s in sorted(set(seeds)):
        for v, d in nx.single_source_shortest_path_length(h, s, cutoff=max_hops).items():
            if v not in seeds:
                cover.setdefault(v, []).append(s)
                near.setdefault(v, [0, 0])
                if d <= 2:
                    near[v][d - 1] += 1
    cand = [v for v in cover if node_types is None or types[v] in node_types]
    # ties of coverage: closer seeds first, then PPR score per visible degree (the specific node
    # before the hub), then id
    cand.sort(key=lambda v: (-len(cover[v]), [-c for c in near[v]], -(ppr_scores.get(v, 0.0) / h.degree(v)), v))
    return [(v, len(cover[v]), tuple(cover[v])) for v in cand[:k]]


def _sees(caller: Caller, nd: dict) -> bool:
    if caller is ALL:
        return True
    return not nd["scopes"] or (caller.scopes is not None and bool(set(nd["scopes"]) & caller.scopes))


CALLERS = [ALL, Caller(scopes={"team"}), Caller(scopes=set())]


@pytest.mark.parametrize("seed", range(30))
def test_coverage_matches_networkx_reference(seed: int) -> None:
    nodes, edges = _random(seed)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    rng = random.Random(seed + 1000)
    caller = CALLERS[seed % len(CALLERS)]
    visible = {n["id"] for n in nodes if _sees(caller, n)}
    vis_ids = sorted(visible)
    if not vis_ids:
        return
    seeds = sorted(set(rng.sample(vis_ids, min(len(vis_ids), rng.randint(1, 5)))))
    max_hops = rng.randint(1, 3)
    node_types = None if seed % 3 else ["DOC", "FILE"]
    k = rng.randint(1, 40)
    full = graph_context(
        g, concepts=seeds, k=len(nodes), caller=caller, rank="coverage", max_hops=max_hops, node_types=node_types
    )
    # the reference breaks coverage ties by the PPR scores the core reports (checked elsewhere)
    scores = {r.id: r.score for r in full.results}
    got = [(r.id, r.coverage, r.covered_by) for r in full.results]
    assert got == _reference(nodes, edges, visible, set(seeds), max_hops, node_types, len(nodes), scores)
    res = graph_context(
        g, concepts=seeds, k=k, caller=caller, rank="coverage", max_hops=max_hops, node_types=node_types
    )
    if res.eps_reached == full.eps_reached:  # same PPR: the top k is the prefix
        assert [(r.id, r.coverage, r.covered_by) for r in res.results] == got[:k]
    else:
        assert [r.coverage for r in res.results] == [c for _, c, _ in got[:k]]
    assert not res.truncated
    d = res.to_dict()
    assert d["params"]["rank"] == "coverage" and d["params"]["maxHops"] == max_hops
    for r in res.results:
        assert r.id not in seeds and r.hops <= max_hops and r.via in r.covered_by


@pytest.mark.parametrize("seed", range(12))
def test_coverage_deletion_oracle(seed: int) -> None:
    nodes, edges = _random(seed + 50)
    caller = CALLERS[1 + seed % 2]
    keep = [n for n in nodes if _sees(caller, n)]
    ids = {n["id"] for n in keep}
    if not ids:
        return
    g = LinkGraph.from_edges(edges, nodes=nodes)
    h = LinkGraph.from_edges([e for e in edges if e[0] in ids and e[1] in ids], nodes=keep)
    seeds = sorted(ids)[:: max(1, len(ids) // 3)][:4]
    for kw in ({}, {"max_hops": 1}, {"max_hops": 3, "node_types": ["DOC"]}):
        masked = graph_context(g, concepts=seeds, k=25, caller=caller, rank="coverage", **kw).to_dict()
        deleted = graph_context(h, concepts=seeds, k=25, caller=ALL, rank="coverage", **kw).to_dict()
        assert masked == deleted


def test_coverage_hand_checked_and_explained() -> None:
    # target t is linked to three of the seeds; hub h to one seed and many leaves
    edges = [("s1", "t"), ("s2", "t"), ("s3", "x"), ("x", "t"), ("s1", "h")]
    edges += [("h", f"leaf{i}") for i in range(30)]
    g = LinkGraph.from_edges(edges)
    res = graph_context(g, concepts=["s1", "s2", "s3"], k=3, caller=ALL, rank="coverage", max_hops=2)
    top = res.results[0]
    assert (top.id, top.coverage, top.covered_by) == ("t", 3, ("s1", "s2", "s3"))
    assert "reached from 3 of 3 seeds: s1, s2, s3" in str(res)
    ppr = graph_context(g, concepts=["s1", "s2", "s3"], k=3, caller=ALL)
    assert all(r.coverage is None for r in ppr.results) and "coverage" not in ppr.to_dict()["results"][0]
    # leaves at 3 hops from s1 are not candidates at max_hops=2
    many = graph_context(g, concepts=["s1"], k=100, caller=ALL, rank="coverage", max_hops=1)
    assert sorted(r.id for r in many.results) == ["h", "t"]


def test_coverage_ties_go_to_closer_seeds_then_the_specific_node() -> None:
    # "small" and "big" are both linked to the three seeds; big also to 20 other nodes. PPR
    # scores big higher (mass grows with degree), yet small is what the seeds have in common:
    # a tie of coverage goes to the higher PPR score per visible degree.
    edges = [(s, c) for s in ("s1", "s2", "s3") for c in ("small", "big")]
    edges += [("big", f"o{i:02d}") for i in range(20)]
    g = LinkGraph.from_edges(edges)
    seeds = ["s1", "s2", "s3"]
    ppr = {r.id: r.score for r in graph_context(g, concepts=seeds, k=30, caller=ALL).results}
    assert ppr["big"] > ppr["small"]
    for hops in (1, 2):
        res = graph_context(g, concepts=seeds, k=2, caller=ALL, rank="coverage", max_hops=hops)
        assert [(r.id, r.coverage) for r in res.results] == [("small", 3), ("big", 3)]
    # closer seeds first: "a" has s1, s2 at 1 hop and s3 at 2; "b" has s3 at 1 hop and s1, s2 at 2.
    # a also has 20 leaves, so b has the higher PPR per degree: the hop profile decides
    e2 = [("s1", "a"), ("s2", "a"), ("s3", "b"), ("a", "b")] + [("a", f"o{i:02d}") for i in range(20)]
    g2 = LinkGraph.from_edges(e2)
    deg = dict(zip(g2.ids, g2.degrees.tolist()))
    p2 = {r.id: r.score for r in graph_context(g2, concepts=seeds, k=30, caller=ALL).results}
    assert p2["b"] / deg["b"] > p2["a"] / deg["a"]
    res = graph_context(g2, concepts=seeds, k=2, caller=ALL, rank="coverage", max_hops=2)
    assert [(r.id, r.coverage) for r in res.results] == [("a", 3), ("b", 3)]


def test_coverage_deterministic_and_batch_equal() -> None:
    nodes, edges = _random(7)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    ids = [n["id"] for n in nodes]
    queries = [{"concepts": ids[i : i + 3]} for i in range(0, 15, 3)]
    one = [graph_context(g, concepts=q["concepts"], k=8, caller=ALL, rank="coverage").to_dict() for q in queries]
    again = [graph_context(g, concepts=q["concepts"], k=8, caller=ALL, rank="coverage").to_dict() for q in queries]
    batch = [r.to_dict() for r in graph_context_batch(g, queries, k=8, caller=ALL, rank="coverage", threads=2)]
    assert one == again == batch


def test_coverage_work_budget_truncates() -> None:
    from conceptwalk.graph import context as gctx  # the budget is a core argument
    import numpy as np

    g = LinkGraph.from_edges([("s", f"m{i}") for i in range(50)] + [(f"m{i}", "t") for i in range(50)])
    r = gctx.context(g, np.array([g.index("s")], np.int32), np.ones(1), 0.25, 1e-4, 5, None, None, 1, 2, 10)
    # not even the first hop fits: radius 0, and no node is reported as covered
    assert r.truncated and r.visits == 10 and r.radius == 0 and len(r) == 0
    one = gctx.context(g, np.array([g.index("s")], np.int32), np.ones(1), 0.25, 1e-4, 60, None, None, 1, 2, 60)
    # the first hop (50 entries) fits, the second (100 more) does not: t is not counted at all
    # (before: the m's row reads that fitted counted t as covered, with a partial second hop)
    assert one.truncated and one.radius == 1 and one.visits == 60
    assert sorted(g.ids[v] for v in one.nodes.tolist()) == sorted(f"m{i}" for i in range(50))
    full = gctx.context(g, np.array([g.index("s")], np.int32), np.ones(1), 0.25, 1e-4, 5, None, None, 1, 2)
    assert not full.truncated and full.visits == 150 and full.radius == 2


def test_rank_bad_input() -> None:
    g = LinkGraph.from_edges([("a", "b")])
    with pytest.raises(InputError, match="rank must be"):
        graph_context(g, concepts=["a"], caller=ALL, rank="bm25")
    for bad in (0, 4, 2.0, True):
        with pytest.raises(InputError, match="max_hops must be"):
            graph_context(g, concepts=["a"], caller=ALL, rank="coverage", max_hops=bad)
    with pytest.raises(InputError, match="rank must be"):
        graph_context_batch(g, ["x"], caller=ALL, rank="")


# --------------------------------------------------------------------------- surfaces
_SURF_EDGES = [("s1", "t", "R"), ("s2", "t", "R"), ("s3", "x", "R"), ("x", "t", "R"), ("s1", "h", "R")] + [
    ("h", f"leaf{i}", "R") for i in range(30)
]


def test_mcp_rank_argument() -> None:
    from conceptwalk.serve.mcp import ToolServer

    ts = ToolServer(LinkGraph.from_edges(_SURF_EDGES), caller=ALL)
    out = ts.call("graph_context", {"concepts": ["s1", "s2", "s3"], "k": 3, "rank": "coverage"})
    assert not out.is_error
    top = out.structured["results"][0]
    assert (top["id"], top["coverage"], top["coveredBy"]) == ("t", 3, ["s1", "s2", "s3"])
    assert out.structured["params"]["rank"] == "coverage"
    assert (
        out.structured["hopsCompleted"] == 2
        and "hopsCompleted" not in ts.call("graph_context", {"concepts": ["s1"], "k": 3}).structured
    )
    assert ts.call("graph_context", {"concepts": ["s1"], "rank": "bm25"}).is_error
    assert ts.call("graph_context", {"concepts": ["s1"], "rank": "coverage", "maxHops": 4}).is_error
    plain = ts.call("graph_context", {"concepts": ["s1", "s2", "s3"], "k": 3})
    assert "coverage" not in plain.structured["results"][0]


def test_cli_rank_option(tmp_path) -> None:
    import json
    import subprocess
    import sys

    edges = tmp_path / "kb.jsonl"
    edges.write_text("".join(json.dumps({"src": a, "dst": b, "type": t}) + "\n" for a, b, t in _SURF_EDGES))
    kb = tmp_path / "kb.db"
    run = [sys.executable, "-m", "conceptwalk"]
    subprocess.run(run + ["import", str(kb), str(edges), "--quiet"], check=True, capture_output=True, text=True)
    out = subprocess.run(
        run
        + [
            "context",
            str(kb),
            "--concept",
            "s1",
            "--concept",
            "s2",
            "--concept",
            "s3",
            "-k",
            "2",
            "--rank",
            "coverage",
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    d = json.loads(out)
    assert d["results"][0]["id"] == "t" and d["results"][0]["coverage"] == 3 and d["hopsCompleted"] == 2


def test_dask_batch_rank_passthrough() -> None:
    distributed = pytest.importorskip("distributed")
    from conceptwalk.serve import distributed as cwd

    g = LinkGraph.from_edges(_SURF_EDGES)
    queries = [{"concepts": ["s1", "s2", "s3"]}, {"concepts": ["s1"]}]
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        got = cwd.graph_context_batch(client, g, queries, caller=ALL, k=4, rank="coverage", max_hops=2)
        with pytest.raises(InputError, match="rank must be"):
            cwd.graph_context_batch(client, g, queries, caller=ALL, rank="x")
    finally:
        client.close()
        cluster.close()
    assert [r.to_dict() for r in got] == [
        r.to_dict() for r in graph_context_batch(g, queries, caller=ALL, k=4, rank="coverage")
    ]


# --- the budget spent level by level (issue 37, item 1) ---------------------------------------


def _core_coverage(g, seeds, max_hops, max_visits, caller=ALL):
    """The core's coverage ranking of every candidate (k = all nodes) under a budget."""
    import numpy as np

    from conceptwalk.graph import context as gctx

    idx = np.array(sorted(g.index(s) for s in seeds), np.int32)
    vm = caller.visibility(g)
    r = gctx.context(g, idx, np.ones(len(idx)), 0.25, 1e-4, g.num_nodes, None, vm, 1, max_hops, max_visits)
    ids = g.ids
    cov = {ids[v]: c for v, c in zip(r.nodes.tolist(), r.coverage.tolist())}
    return r, cov


def _bfs_coverage(edges, visible, seeds, radius):
    """Per visible non-seed node: how many seeds are within ``radius`` hops (networkx BFS)."""
    h = nx.Graph()
    h.add_nodes_from(visible)
    h.add_edges_from((a, b) for a, b, _ in edges if a in visible and b in visible and a != b)
    cov: dict[str, int] = {}
    for s in seeds:
        if radius == 0:
            break
        for v in nx.single_source_shortest_path_length(h, s, cutoff=radius):
            if v not in seeds:
                cov[v] = cov.get(v, 0) + 1
    return cov


def _visits_to(edges, visible, seeds, radius):
    """The visible adjacency entries a per-seed BFS to depth ``radius`` reads, all seeds."""
    h = nx.Graph()
    h.add_nodes_from(visible)
    h.add_edges_from((a, b) for a, b, _ in edges if a in visible and b in visible and a != b)
    total = 0
    for s in seeds:
        for v, d in nx.single_source_shortest_path_length(h, s, cutoff=radius - 1).items():
            total += h.degree(v)
    return total


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10_000),
    budget=st.integers(1, 400),
    caller_i=st.integers(0, len(CALLERS) - 1),
)
def test_truncated_coverage_is_exact_for_the_radius_it_completed_and_monotone(
    seed: int, budget: int, caller_i: int
) -> None:
    nodes, edges = _random(seed)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    caller = CALLERS[caller_i]
    visible = {n["id"] for n in nodes if _sees(caller, n)}
    if not visible:
        return
    rng = random.Random(seed)
    seeds = sorted(rng.sample(sorted(visible), min(len(visible), rng.randint(1, 8))))
    prev: dict[str, int] = {}
    for mh in (1, 2, 3):
        r, cov = _core_coverage(g, seeds, mh, budget, caller)
        radius = r.radius
        assert 0 <= radius <= mh and r.truncated == (radius < mh)
        # exact for the radius it says it completed ...
        assert cov == _bfs_coverage(edges, visible, set(seeds), radius)
        # ... which is the largest radius whose BFS from every seed fits in the budget
        assert radius == 0 or _visits_to(edges, visible, seeds, radius) <= budget
        if radius < mh:
            assert _visits_to(edges, visible, seeds, radius + 1) > budget
        assert r.visits <= (mh + 1) * budget
        if 1 <= radius < mh:
            # the whole truncated answer (order, coverage, seeds, hops) is the answer at that radius
            exact, _ = _core_coverage(g, seeds, radius, 10**9, caller)
            for f in ("nodes", "coverage", "cover_ptr", "cover_seeds", "hops", "via", "scores"):
                assert getattr(r, f).tolist() == getattr(exact, f).tolist(), f
        # monotone in max_hops: a node covered within fewer hops is covered at least as often
        for v, c in prev.items():
            assert cov.get(v, 0) >= c, (mh, v)
        prev = cov


def test_star_hub_covered_by_every_seed_at_every_max_hops() -> None:
    # the hostile review's case: a hub one hop from each of 64 seed leaves of a 200,000-leaf
    # star; before, the 4M-visit budget was spent seed by seed: 64, 20, 10 seeds at 1, 2, 3 hops
    ids = [f"l{i:06d}" for i in range(200_000)]
    g = LinkGraph.from_edges([("hub", x) for x in ids])
    for mh in (1, 2, 3):
        r = graph_context(g, concepts=ids[:64], k=5, caller=ALL, rank="coverage", max_hops=mh)
        assert (r.results[0].id, r.results[0].coverage) == ("hub", 64), mh
        assert r.hops_completed == 1 and r.truncated == (mh > 1)
        d = r.to_dict()
        assert d["hopsCompleted"] == 1 and d["params"]["maxHops"] == mh
        if mh > 1:
            assert f"coverage within 1 of {mh} hops" in str(r)
    b = graph_context_batch(g, [{"concepts": ids[:64]}], k=5, caller=ALL, rank="coverage", max_hops=3, threads=1)
    assert b[0].to_dict() == r.to_dict()


def test_hops_completed_reported_only_for_coverage() -> None:
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    cov = graph_context(g, concepts=["a"], k=5, caller=ALL, rank="coverage", max_hops=3)
    assert cov.hops_completed == 3 and not cov.truncated and cov.to_dict()["hopsCompleted"] == 3
    assert "coverage within" not in str(cov)
    ppr = graph_context(g, concepts=["a"], k=5, caller=ALL)
    assert ppr.hops_completed is None and "hopsCompleted" not in ppr.to_dict()
    q = graph_context(g, "nothing matches", k=5, caller=ALL, rank="coverage", search=lambda text, k: [])
    assert q.hops_completed == 2 and not q.results


@pytest.mark.parametrize("seed", range(8))
def test_truncated_coverage_deletion_oracle(seed: int) -> None:
    # the budget counts visible entries only: a masked pass truncates exactly where the pass on
    # the store with the hidden nodes deleted does
    nodes, edges = _random(seed + 300)
    caller = CALLERS[1 + seed % 2]
    keep = [n for n in nodes if _sees(caller, n)]
    ids = {n["id"] for n in keep}
    if not ids:
        return
    g = LinkGraph.from_edges(edges, nodes=nodes)
    h = LinkGraph.from_edges([e for e in edges if e[0] in ids and e[1] in ids], nodes=keep)
    seeds = sorted(ids)[:: max(1, len(ids) // 4)][:5]
    for mh in (1, 2, 3):
        for budget in (3, 20, 60):
            rm, cm = _core_coverage(g, seeds, mh, budget, caller)
            rd, cd = _core_coverage(h, seeds, mh, budget, ALL)
            assert (cm, rm.radius, rm.truncated, rm.visits) == (cd, rd.radius, rd.truncated, rd.visits)
