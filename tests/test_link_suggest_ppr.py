"""link_suggest(method="ppr"): rooted PageRank over the caller's visible non-neighbours, against an
independent power-iteration reference, the deletion oracle, determinism, the batch and every
interface (CLI, MCP, Dask), and bad input."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from conceptwalk import (
    Caller,
    _core,
    InputError,
    LinkGraph,
    NotFoundError,
    graph_path,
    link_suggest,
    link_suggest_batch,
)

ALL = Caller.all_access()
CALLERS = [ALL, Caller(scopes={"team"}), Caller(scopes=set())]


def _random(seed: int) -> tuple[list[dict], list[tuple[str, str, str]]]:
    rng = random.Random(seed)
    n = rng.randint(4, 50)
    ids = [f"n{i:02d}" for i in range(n)]
    nodes = [{"id": i, "scopes": rng.choice([[], [], ["team"], ["other"]])} for i in ids]
    edges = [(rng.choice(ids), rng.choice(ids), "R") for _ in range(rng.randint(n, 3 * n))]
    return nodes, edges


def _sees(caller: Caller, nd: dict) -> bool:
    return caller.scopes is None or not nd["scopes"] or bool(set(nd["scopes"]) & caller.scopes)


def _visible_graph(nodes, edges, caller) -> nx.Graph:
    vis = {n["id"] for n in nodes if _sees(caller, n)}
    h = nx.Graph()
    h.add_nodes_from(vis)
    h.add_edges_from((a, b) for a, b, _ in edges if a in vis and b in vis and a != b)
    return h


def _exact_ppr(h: nx.Graph, a: str, restart: float = 0.25, iters: int = 3000) -> dict[str, float]:
    """Rooted PageRank by power iteration, written independently of the core:
    p = restart * e_a + (1 - restart) * p D^-1 A on the undirected visible graph (a node without
    neighbours keeps its mass, as the push does: it never pushes)."""
    order = sorted(h.nodes)
    pos = {v: i for i, v in enumerate(order)}
    n = len(order)
    p = np.zeros(n)
    e = np.zeros(n)
    e[pos[a]] = 1.0
    p[:] = e
    nbrs = [[pos[u] for u in h.neighbors(v)] for v in order]
    for _ in range(iters):
        q = restart * e.copy()
        for i, ns in enumerate(nbrs):
            if ns:
                share = (1 - restart) * p[i] / len(ns)
                for j in ns:
                    q[j] += share
            else:
                q[i] += (1 - restart) * p[i]
        if np.abs(q - p).sum() < 1e-15:
            p = q
            break
        p = q
    return {v: float(p[pos[v]]) for v in order}


@pytest.mark.parametrize("seed", range(40))
def test_ppr_suggest_matches_power_iteration_ranking(seed: int) -> None:
    nodes, edges = _random(seed)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    caller = CALLERS[seed % 3]
    h = _visible_graph(nodes, edges, caller)
    if not h.number_of_nodes():
        return
    a = sorted(h.nodes)[seed % h.number_of_nodes()]
    eps = 1e-9
    res = link_suggest(g, a, k=1000, caller=caller, method="ppr", eps=eps)
    exact = _exact_ppr(h, a)
    excluded = {a, *h.neighbors(a)}
    reach = nx.single_source_shortest_path_length(h, a)
    # candidates: every visible non-neighbour in a's component (all have exact p > 0); the push
    # at eps 1e-9 reaches all of them on graphs this small
    want = {v for v in reach if v not in excluded}
    got = [s.id for s in res.suggestions]
    assert set(got) == want and len(got) == len(want) == res.candidates
    deg = dict(h.degree)
    for s in res.suggestions:
        # the push underestimates by less than eps * deg (the per-node bound)
        assert 0 <= exact[s.id] - s.score < eps * max(deg[s.id], 1) + 1e-12
    # the order is the exact ranking, up to the bound (ties by id)
    for x, y in zip(res.suggestions, res.suggestions[1:]):
        assert x.score > y.score or (x.score == y.score and x.id < y.id)
        assert exact[x.id] >= exact[y.id] - eps * (deg[x.id] + deg[y.id]) - 1e-12
    ranked = sorted(want, key=lambda v: (-exact[v], v))
    assert [round(exact[v], 7) for v in got] == [round(exact[v], 7) for v in ranked]
    # explained: hop distance, shared neighbours at two hops, the shortest chain
    for s in res.suggestions:
        assert s.hops == reach[s.id] >= 2
        assert s.path[0] == a and s.path[-1] == s.id and len(s.path) == s.hops + 1
        assert all(h.has_edge(u, v) for u, v in zip(s.path, s.path[1:]))
        assert list(s.path) == [x[0] for x in graph_path(g, a, s.id, caller=caller).nodes]
        common = sorted(set(h.neighbors(a)) & set(h.neighbors(s.id)))
        assert list(s.shared) == (common if s.hops == 2 else [])
        if s.hops == 2:
            assert s.path[1] == common[0]


@pytest.mark.parametrize("seed", range(12))
def test_ppr_suggest_top_k_is_the_prefix(seed: int) -> None:
    nodes, edges = _random(seed + 100)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    a = g.ids[0]
    full = link_suggest(g, a, k=1000, caller=ALL, method="ppr")
    for k in (1, 3, 10):
        top = link_suggest(g, a, k=k, caller=ALL, method="ppr")
        if top.eps_reached == full.eps_reached:
            assert top.to_dict()["suggestions"] == full.to_dict()["suggestions"][:k]
        assert top.candidates >= len(top.suggestions)


@pytest.mark.parametrize("seed", range(16))
def test_ppr_suggest_deletion_oracle(seed: int) -> None:
    nodes, edges = _random(seed + 200)
    caller = CALLERS[1 + seed % 2]
    keep = [n for n in nodes if _sees(caller, n)]
    ids = {n["id"] for n in keep}
    if not ids:
        return
    g = LinkGraph.from_edges(edges, nodes=nodes)
    h = LinkGraph.from_edges([e for e in edges if e[0] in ids and e[1] in ids], nodes=keep)
    for a in sorted(ids)[:4]:
        for kw in ({}, {"eps": 1e-6}, {"k": 2, "restart": 0.5}):
            masked = link_suggest(g, a, caller=caller, method="ppr", **kw).to_dict()
            deleted = link_suggest(h, a, caller=ALL, method="ppr", **kw).to_dict()
            assert masked == deleted
    hidden = sorted({n["id"] for n in nodes} - ids)
    for x in hidden[:2]:
        with pytest.raises(NotFoundError) as e1:
            link_suggest(g, x, caller=caller, method="ppr")
        with pytest.raises(NotFoundError) as e2:
            link_suggest(g, "no-such-id", caller=caller, method="ppr")
        assert str(e1.value).replace(repr(x), "ID") == str(e2.value).replace("'no-such-id'", "ID")


def test_ppr_suggest_deterministic_and_batch_equal() -> None:
    nodes, edges = _random(7)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    qs = g.ids[:12]
    one = [link_suggest(g, c, k=5, caller=ALL, method="ppr").to_dict() for c in qs]
    again = [link_suggest(g, c, k=5, caller=ALL, method="ppr").to_dict() for c in qs]
    for threads in (1, 2):
        batch = [r.to_dict() for r in link_suggest_batch(g, qs, k=5, caller=ALL, method="ppr", threads=threads)]
        assert one == again == batch
    assert link_suggest_batch(g, [], caller=ALL, method="ppr") == []
    # a batch of the default method is unchanged by the new one
    ra = [r.to_dict() for r in link_suggest_batch(g, qs, k=5, caller=ALL)]
    assert ra == [link_suggest(g, c, k=5, caller=ALL).to_dict() for c in qs]
    assert all("method" not in d and d["minShared"] == 2 for d in ra)


def test_ppr_suggest_hand_checked_on_a_tree() -> None:
    # a pure hierarchy: no two nodes share two neighbours, so resource allocation with its
    # default finds nothing; rooted PageRank ranks the two-hop nodes first (the grandparent, of
    # degree 2, before the sibling, of degree 1: PPR mass grows with degree), then the cousins
    edges = [("root", "A"), ("root", "B"), ("A", "a1"), ("A", "a2"), ("B", "b1"), ("B", "b2")]
    g = LinkGraph.from_edges(edges)
    assert link_suggest(g, "a1", caller=ALL).suggestions == []
    r = link_suggest(g, "a1", caller=ALL, method="ppr")
    assert [(s.id, s.hops) for s in r.suggestions] == [("root", 2), ("a2", 2), ("B", 3), ("b1", 4), ("b2", 4)]
    assert r.suggestions[1].shared == ("A",) and r.suggestions[3].path == ("a1", "A", "root", "B", "b1")
    d = r.to_dict()
    assert d["method"] == "ppr" and d["params"] == {"restart": 0.25, "eps": 1e-4} and "minShared" not in d
    assert d["suggestions"][2]["hops"] == 3 and d["suggestions"][2]["path"] == ["a1", "A", "root", "B"]
    text = str(r)
    assert "by rooted PageRank (5 candidates)" in text and "4 hops: a1 -> A -> root -> B -> b1" in text
    assert "2 hops, shared: A" in text
    # an isolated node and a node whose component is its neighbours: no candidate
    g2 = LinkGraph.from_edges([("x", "y")], nodes=[{"id": "lone"}])
    assert link_suggest(g2, "lone", caller=ALL, method="ppr").suggestions == []
    assert link_suggest(g2, "x", caller=ALL, method="ppr").candidates == 0


def test_ppr_suggest_hub_lowers_eps_like_graph_context() -> None:
    # a hub with 30,000 leaves: at eps 1e-4 its push reaches the leaves but no leaf pushes on,
    # so nothing beyond its neighbours has mass; the fill lowers eps until k candidates appear
    edges = [("hub", f"l{i:05d}") for i in range(30_000)] + [("l00000", "far"), ("l00001", "far")]
    g = LinkGraph.from_edges(edges)
    r = link_suggest(g, "hub", k=1, caller=ALL, method="ppr")
    assert [s.id for s in r.suggestions] == ["far"] and r.eps_reached < 1e-4
    assert r.to_dict()["epsReached"] == r.eps_reached


def test_ppr_suggest_chains_past_a_hub_the_bfs_cannot_afford() -> None:
    # The chains of suggestions beyond two hops come from one BFS from the query node, within the
    # push's own work; here the BFS meets a hub (5,000 leaves, which the push never pushes: its
    # residual stays below eps * deg) before the chain's far end, so those targets take the
    # bidirectional BFS instead. Either way each chain is graph_path's, for every caller.
    edges = [("a", "b-hub"), ("a", "x"), ("x", "y"), ("y", "z"), ("z", "w"), ("y", "v"), ("v", "w")]
    edges += [("b-hub", f"leaf{i:04d}") for i in range(5000)]
    nodes = [{"id": i} for i in ("a", "b-hub", "x", "y", "z", "w")] + [{"id": "v", "scopes": ["team"]}]
    g = LinkGraph.from_edges(edges, nodes=nodes)
    far = np.array([g.index("z"), g.index("w")], dtype=np.int32)
    assert _core.shortest_paths_from(g.core, g.index("a"), far, 200).path.size == 0  # the construction
    for caller in CALLERS:
        r = link_suggest(g, "a", k=20, caller=caller, method="ppr")
        got = {s.id: (s.hops, s.path) for s in r.suggestions}
        assert {"y", "z", "w"} <= set(got)
        for s in r.suggestions:
            want = [x[0] for x in graph_path(g, "a", s.id, caller=caller).nodes]
            assert list(s.path) == want and s.hops == len(want) - 1
        assert got["w"][1] == (("a", "x", "y", "v", "w") if caller is not CALLERS[2] else ("a", "x", "y", "z", "w"))


def test_ppr_suggest_pickles_equal() -> None:
    import pickle

    g = LinkGraph.from_edges([("a", "x"), ("x", "b"), ("b", "c")])
    r = link_suggest(g, "a", caller=ALL, method="ppr")
    back = pickle.loads(pickle.dumps(r))
    assert back.to_dict() == r.to_dict() and back.method == "ppr" and back.suggestions == r.suggestions


def test_method_bad_input() -> None:
    g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    with pytest.raises(InputError, match="method must be 'ra' or 'ppr', got 'katz'"):
        link_suggest(g, "a", caller=ALL, method="katz")
    with pytest.raises(InputError, match="method must be 'ra' or 'ppr', got None"):
        link_suggest_batch(g, ["a"], caller=ALL, method=None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="min_shared applies to method='ra' only"):
        link_suggest(g, "a", caller=ALL, method="ppr", min_shared=1)
    with pytest.raises(InputError, match="min_shared applies to method='ra' only"):
        link_suggest_batch(g, ["a"], caller=ALL, method="ppr", min_shared=2)
    with pytest.raises(InputError, match="restart applies to method='ppr' only"):
        link_suggest(g, "a", caller=ALL, restart=0.3)
    with pytest.raises(InputError, match="eps applies to method='ppr' only"):
        link_suggest(g, "a", caller=ALL, method="ra", eps=1e-5)
    with pytest.raises(InputError, match="eps must be"):
        link_suggest(g, "a", caller=ALL, method="ppr", eps=0)
    with pytest.raises(InputError, match="restart must be"):
        link_suggest(g, "a", caller=ALL, method="ppr", restart=1.0)
    with pytest.raises(InputError, match="k must be"):
        link_suggest(g, "a", caller=ALL, method="ppr", k=0)
    with pytest.raises(InputError, match="caller"):
        link_suggest(g, "a", caller=None, method="ppr")  # type: ignore[arg-type]
    with pytest.raises(NotFoundError, match="concept not found: 'zz'"):
        link_suggest_batch(g, ["a", "zz"], caller=ALL, method="ppr")
    # min_shared still works as before with the default method
    assert [s.id for s in link_suggest(g, "a", caller=ALL, min_shared=1)] == ["b"]


def test_core_ppr_suggest_bad_input() -> None:
    from conceptwalk import _core

    g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    with pytest.raises(IndexError):
        _core.ppr_suggest(g.core, 9, 0.25, 1e-4, 0, None)
    with pytest.raises(ValueError, match="restart must be in"):
        _core.ppr_suggest(g.core, 0, 0.0, 1e-4, 0, None)
    with pytest.raises(ValueError, match="eps must be positive"):
        _core.ppr_suggest_batch(g.core, np.array([0, 1], np.int32), 0.25, float("nan"), 0, 1, None)
    with pytest.raises(IndexError):
        _core.ppr_suggest_batch(g.core, np.array([0, 7], np.int32), 0.25, 1e-4, 0, 1, None)
    assert _core.ppr_suggest_id(g.core, g.id_index, "nope", 0.25, 1e-4, 0, None) is None


def test_cli_method_option(tmp_path) -> None:
    edges = tmp_path / "e.csv"
    edges.write_text("src,dst\nroot,A\nroot,B\nA,a1\nA,a2\nB,b1\n")
    kb = tmp_path / "kb.db"
    run = [sys.executable, "-m", "conceptwalk"]
    subprocess.run(run + ["import", str(kb), str(edges), "--quiet"], check=True, capture_output=True, text=True)
    out = subprocess.run(
        run + ["suggest", str(kb), "a1", "--method", "ppr", "--json", "--scopes", "*"],
        check=True,
        capture_output=True,
        text=True,
    )
    d = json.loads(out.stdout)
    assert d["method"] == "ppr" and [s["id"] for s in d["suggestions"]][:2] == ["root", "a2"]
    ra = subprocess.run(
        run + ["suggest", str(kb), "a1", "--json", "--scopes", "*"], check=True, capture_output=True, text=True
    )
    assert json.loads(ra.stdout)["suggestions"] == []
    bad = subprocess.run(
        run + ["suggest", str(kb), "a1", "--method", "ppr", "--min-shared", "2", "--scopes", "*"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "min_shared applies to method='ra' only" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_mcp_method_argument() -> None:
    from conceptwalk.serve.mcp import ToolServer

    g = LinkGraph.from_edges([("root", "A"), ("A", "a1"), ("A", "a2"), ("root", "B")])
    ts = ToolServer(g, caller=ALL)
    r = ts.call("link_suggest", {"concept": "a1", "method": "ppr", "k": 2})
    assert not r.is_error, r.text
    assert r.structured == link_suggest(g, "a1", k=2, caller=ALL, method="ppr").to_dict()
    bad = ts.call("link_suggest", {"concept": "a1", "method": "ppr", "minShared": 2})
    assert bad.is_error and "min_shared applies to method='ra' only" in bad.text
    unknown = ts.call("link_suggest", {"concept": "a1", "method": "katz"})
    assert unknown.is_error
    ra = ts.call("link_suggest", {"concept": "a1"})
    assert ra.structured == link_suggest(g, "a1", caller=ALL).to_dict()


def test_dask_batch_method_passthrough() -> None:
    distributed = pytest.importorskip("distributed")
    from conceptwalk.serve import distributed as cwd

    nodes, edges = _random(11)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    caller = Caller(scopes={"team"})
    qs = [n["id"] for n in nodes if _sees(caller, n)][:6]
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        got = cwd.link_suggest_batch(client, g, qs, caller=caller, k=4, method="ppr", eps=1e-5)
        with pytest.raises(InputError, match="min_shared applies"):
            cwd.link_suggest_batch(client, g, qs, caller=caller, method="ppr", min_shared=3)
    want = [link_suggest(g, c, k=4, caller=caller, method="ppr", eps=1e-5).to_dict() for c in qs]
    assert [r.to_dict() for r in got] == want
