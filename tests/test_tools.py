"""The three tools: hand-checked graphs, a pure-Python reference, visibility = deletion,
determinism across runs and input orders, and their error behaviour."""

from __future__ import annotations

import json
import random
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, InputError, LinkGraph, NotFoundError, graph_context, graph_path, link_suggest

ALL = Caller.all_access()


# --------------------------------------------------------------------------- references
def exact_ppr(
    nodes: list[str], edges: list[tuple[str, str]], seeds: dict[str, float], restart: float
) -> dict[str, float]:
    """Exact PPR on the undirected projection by power iteration (isolated nodes keep mass)."""
    idx = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    adj = [set() for _ in range(n)]
    for a, b in edges:
        if a != b:
            adj[idx[a]].add(idx[b])
            adj[idx[b]].add(idx[a])
    s = np.zeros(n)
    for k, w in seeds.items():
        s[idx[k]] += w
    s /= s.sum()
    p = s.copy()
    for _ in range(2000):
        nxt = restart * s
        for u in range(n):
            if adj[u]:
                share = (1 - restart) * p[u] / len(adj[u])
                for v in adj[u]:
                    nxt[v] += share
            else:
                nxt[u] += (1 - restart) * p[u]
        if np.abs(nxt - p).sum() < 1e-15:
            p = nxt
            break
        p = nxt
    return {nodes[i]: float(p[i]) for i in range(n)}


def bfs_hops(nodes: list[str], edges: list[tuple[str, str]], seeds: list[str]) -> dict[str, tuple[int, str]]:
    adj: dict[str, set[str]] = {v: set() for v in nodes}
    for a, b in edges:
        if a != b:
            adj[a].add(b)
            adj[b].add(a)
    best: dict[str, tuple[int, str]] = {}
    for s in seeds:
        dist = {s: 0}
        q = deque([s])
        while q:
            u = q.popleft()
            for v in adj[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        for v, d in dist.items():
            if v not in best or (d, s) < best[v]:
                best[v] = (d, s)
    return best


def random_kb(seed: int, n: int = 40, m: int = 90) -> tuple[list[dict], list[tuple[str, str, str]]]:
    rng = random.Random(seed)
    types = ["CONCEPT", "FILE", "MEMORY"]
    nodes = []
    for i in range(n):
        scopes = rng.choice([None, None, ["t1"], ["t2"], ["t1", "t2"]])
        nodes.append(
            {"id": f"n{i:02d}", "type": rng.choice(types), "title": f"topic {i % 7} item {i}", "scopes": scopes}
        )
    edges = []
    for _ in range(m):
        a, b = rng.randrange(n), rng.randrange(n)
        edges.append((f"n{a:02d}", f"n{b:02d}", rng.choice(["RELATED_TO", "IMPLEMENTED_BY", "PARENT_CONCEPT"])))
    return nodes, edges


def title_search(nodes: list[dict]):
    """A deterministic full-text stand-in: nodes whose title contains every query word, by id."""

    def search(text: str, k: int) -> list[tuple[str, float]]:
        words = text.lower().split()
        hits = [nd["id"] for nd in nodes if all(w in nd["title"] for w in words)]
        return [(h, 1.0) for h in sorted(hits)[:k]]

    return search


def induced(nodes: list[dict], edges: list[tuple[str, str, str]], caller: Caller):
    keep = [nd for nd in nodes if not nd["scopes"] or (caller.scopes is not None and set(nd["scopes"]) & caller.scopes)]
    ids = {nd["id"] for nd in keep}
    return keep, [e for e in edges if e[0] in ids and e[1] in ids]


# --------------------------------------------------------------------------- hand-checked
def test_context_hand_checked() -> None:
    g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("a", "e")])
    ctx = graph_context(g, concepts=["a"], k=10, caller=ALL, eps=1e-10)
    assert [s.id for s in ctx.seeds] == ["a"]
    assert [r.id for r in ctx.results][:2] in (["b", "e"], ["e", "b"])
    hops = {r.id: (r.hops, r.via) for r in ctx.results}
    assert hops == {"b": (1, "a"), "e": (1, "a"), "c": (2, "a"), "d": (3, "a")}
    ref = exact_ppr(list("abcde"), [("a", "b"), ("b", "c"), ("c", "d"), ("a", "e")], {"a": 1.0}, 0.25)
    for r in ctx.results:
        assert r.score == pytest.approx(ref[r.id], abs=1e-8)


def test_context_seeds_weighted_by_reciprocal_rank() -> None:
    nodes = [{"id": f"x{i}", "title": "alpha beta" if i < 3 else "gamma"} for i in range(6)]
    g = LinkGraph.from_edges([(f"x{i}", f"x{i + 1}") for i in range(5)], nodes=nodes)

    def search(text: str, k: int):
        return [{"id": "x2", "score": 99.0}, {"id": "x0", "score": 50.0}, {"id": "x1", "score": 1.0}][:k]

    ctx = graph_context(g, "alpha", k=5, caller=ALL, search=search, eps=1e-10)
    assert [(s.id, s.rank, s.weight) for s in ctx.seeds] == [("x2", 1, 1.0), ("x0", 2, 0.5), ("x1", 3, 1 / 3)]
    edges = [(f"x{i}", f"x{i + 1}") for i in range(5)]
    ref = exact_ppr([f"x{i}" for i in range(6)], edges, {"x2": 1.0, "x0": 0.5, "x1": 1 / 3}, 0.25)
    for r in ctx.results:
        assert r.score == pytest.approx(ref[r.id], abs=1e-8)
    assert {r.id for r in ctx.results} == {"x3", "x4", "x5"}


def test_context_empty_results_say_why() -> None:
    g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "title": "alpha"}, {"id": "b", "title": "beta"}])
    res = graph_context(g, "zeta", caller=ALL, search=lambda t, k: [])
    assert res.results == [] and res.seeds == [] and "matched no visible node" in res.reason
    res = graph_context(g, caller=ALL)
    assert res.results == [] and "no question and no concepts" in res.reason
    lonely = LinkGraph.from_edges([("a", "b")], nodes=["c"])
    res = graph_context(lonely, concepts=["c"], caller=ALL)
    assert res.results == [] and res.reason


def test_context_node_type_filter() -> None:
    nodes, edges = random_kb(3)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    full = graph_context(g, concepts=["n00"], k=100, caller=ALL)
    files = graph_context(g, concepts=["n00"], k=100, caller=ALL, node_types=["FILE"])
    assert [r.id for r in files.results] == [r.id for r in full.results if r.type == "FILE"]


def test_suggest_and_path_hand_checked() -> None:
    g = LinkGraph.from_edges(
        [("a", "x", "R"), ("a", "y", "R"), ("b", "x", "R"), ("y", "b", "T"), ("c", "x", "R")],
        nodes=[{"id": "x", "title": "Ex"}],
    )
    res = link_suggest(g, "a", caller=ALL)
    assert [(s.id, round(s.score, 6)) for s in res.suggestions] == [("b", round(1 / 3 + 1 / 2, 6))]
    assert tuple(zip(res.suggestions[0].shared, res.suggestions[0].shared_titles)) == (("x", "Ex"), ("y", None))
    p = graph_path(g, "a", "b", caller=ALL)
    assert p.ids == ["a", "x", "b"]
    assert [s.edges for s in p.steps] == [(("R", "forward"),), (("R", "backward"),)]
    assert p.to_dict()["length"] == 2
    none = graph_path(LinkGraph.from_edges([("a", "b")], nodes=["c"]), "a", "c", caller=ALL)
    assert not none.found and none.to_dict()["nodes"] == [] and "no visible path" in str(none)


# --------------------------------------------------------------------------- references, many graphs
@pytest.mark.parametrize("seed", range(25))
def test_context_matches_reference(seed: int) -> None:
    nodes, edges = random_kb(seed)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    concepts = [nodes[seed % len(nodes)]["id"], nodes[(seed * 7 + 3) % len(nodes)]["id"]]
    eps = 1e-7
    res = graph_context(g, concepts=concepts, k=15, caller=ALL, eps=eps)
    ids = [nd["id"] for nd in nodes]
    plain = [(a, b) for a, b, _ in edges]
    weights = {c: 1.0 for c in concepts}
    ref = exact_ppr(ids, plain, weights, 0.25)
    hops = bfs_hops(ids, plain, sorted(set(concepts)))
    for r in res.results:
        deg = len({b for a, b, _ in edges if a == r.id and b != a} | {a for a, b, _ in edges if b == r.id and b != a})
        assert 0 <= ref[r.id] - r.score < eps * deg + 1e-12
        assert (r.hops, r.via) == hops[r.id]
    # the ranking is the reference's up to the push error: any pair ordered the other way is within bounds
    scores = [r.score for r in res.results]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("seed", range(20))
def test_suggest_and_path_match_networkx(seed: int) -> None:
    nx = pytest.importorskip("networkx")
    nodes, edges = random_kb(seed, n=30, m=70)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    G = nx.Graph()
    G.add_nodes_from(nd["id"] for nd in nodes)
    G.add_edges_from((a, b) for a, b, _ in edges if a != b)
    a = nodes[seed]["id"]
    res = link_suggest(g, a, k=100, caller=ALL)
    cand = [v for v in G if v != a and not G.has_edge(a, v) and len(set(G[a]) & set(G[v])) >= 2]
    ref = {v: s for _, v, s in nx.resource_allocation_index(G, [(a, v) for v in cand])}
    assert {s.id for s in res.suggestions} == set(ref)
    for s in res.suggestions:
        assert s.score == pytest.approx(ref[s.id], rel=1e-12)
        assert list(s.shared) == sorted(set(G[a]) & set(G[s.id]))
    b = nodes[(seed * 11 + 5) % len(nodes)]["id"]
    p = graph_path(g, a, b, caller=ALL)
    if nx.has_path(G, a, b):
        assert p.length == nx.shortest_path_length(G, a, b)
        assert p.ids == min(nx.all_shortest_paths(G, a, b))
    else:
        assert not p.found


# --------------------------------------------------------------------------- visibility = deletion
CALLERS = [Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t2"), Caller.with_scopes("t1", "t2")]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), which=st.integers(0, 3), pick=st.integers(0, 10_000))
def test_visibility_equals_deletion(seed: int, which: int, pick: int) -> None:
    nodes, edges = random_kb(seed)
    caller = CALLERS[which]
    g = LinkGraph.from_edges(edges, nodes=nodes)
    keep_nodes, keep_edges = induced(nodes, edges, caller)
    if len(keep_nodes) < 2:
        return
    h = LinkGraph.from_edges(keep_edges, nodes=keep_nodes)
    search = title_search(nodes)  # returns hidden ids too: the tools must drop them
    a = keep_nodes[pick % len(keep_nodes)]["id"]
    b = keep_nodes[(pick // 7) % len(keep_nodes)]["id"]
    question = f"topic {pick % 7}"
    for kwargs in ({"concepts": [a]}, {"question": question}, {"question": question, "concepts": [b]}):
        masked = graph_context(g, k=10, caller=caller, search=search, **kwargs).to_dict()
        deleted = graph_context(h, k=10, caller=ALL, search=search, **kwargs).to_dict()
        assert masked == deleted
    assert link_suggest(g, a, caller=caller).to_dict() == link_suggest(h, a, caller=ALL).to_dict()
    assert graph_path(g, a, b, caller=caller).to_dict() == graph_path(h, a, b, caller=ALL).to_dict()


def test_hidden_and_missing_give_identical_errors() -> None:
    nodes, edges = random_kb(1)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    hidden = next(nd["id"] for nd in nodes if nd["scopes"] == ["t1"])
    caller = Caller.with_scopes("t2")
    for fn in (
        lambda x: graph_context(g, concepts=[x], caller=caller),
        lambda x: link_suggest(g, x, caller=caller),
        lambda x: graph_path(g, x, "n00", caller=caller),
    ):
        with pytest.raises(NotFoundError) as e1:
            fn(hidden)
        with pytest.raises(NotFoundError) as e2:
            fn("no-such-node")
        assert type(e1.value) is type(e2.value)
        assert str(e1.value).replace(repr(hidden), "ID") == str(e2.value).replace(repr("no-such-node"), "ID")


# --------------------------------------------------------------------------- determinism
def test_identical_across_runs_and_input_orders() -> None:
    nodes, edges = random_kb(7, n=60, m=150)
    search = title_search(nodes)
    outs = []
    for shuffle_seed in range(4):
        rng = random.Random(shuffle_seed)
        ns, es = nodes[:], edges[:]
        rng.shuffle(ns)
        rng.shuffle(es)
        g = LinkGraph.from_edges(es, nodes=ns)
        out = [
            graph_context(g, "topic 3", concepts=["n05"], caller=c, search=search).to_dict() for c in CALLERS + [ALL]
        ]
        out += [link_suggest(g, "n05", caller=c).to_dict() for c in CALLERS + [ALL]]
        out += [graph_path(g, "n05", "n40", caller=c).to_dict() for c in (ALL, CALLERS[3])]
        outs.append(json.dumps(out, sort_keys=True))
        outs.append(json.dumps(out, sort_keys=True))  # a second call on the same graph
    assert len(set(outs)) == 1


# --------------------------------------------------------------------------- errors
def test_bad_arguments() -> None:
    g = LinkGraph.from_edges([("a", "b")])
    with pytest.raises(InputError, match="caller"):
        graph_context(g, concepts=["a"], caller="everyone")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="k must"):
        graph_context(g, concepts=["a"], k=0, caller=ALL)
    with pytest.raises(InputError, match="restart"):
        graph_context(g, concepts=["a"], restart=1.5, caller=ALL)
    with pytest.raises(InputError, match="eps"):
        graph_context(g, concepts=["a"], eps=0, caller=ALL)
    with pytest.raises(InputError, match="concepts must be a list"):
        graph_context(g, concepts="a", caller=ALL)
    with pytest.raises(InputError, match="search"):
        graph_context(g, "some question", caller=ALL)
    with pytest.raises(InputError, match="min_shared"):
        link_suggest(g, "a", min_shared=0, caller=ALL)
    with pytest.raises(InputError, match="source must be"):
        graph_path(object(), "a", "b", caller=ALL)
    assert graph_path(g, "a", "b", caller=ALL).ids == ["a", "b"]  # nothing changed
