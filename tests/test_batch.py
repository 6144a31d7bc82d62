"""Batch queries equal one-by-one calls, in input order, for every thread count."""

from __future__ import annotations

import doctest
import random

import numpy as np
import pytest

import conceptwalk.graph.ppr as batch_mod
from conceptwalk import Caller, InputError, LinkGraph, NotFoundError, graph_context, graph_path, link_suggest
from conceptwalk.graph import personalized_pagerank_batch
from conceptwalk.graph.checks import default_threads
from conceptwalk.tools import graph_context_batch, graph_path_batch, link_suggest_batch

THREADS = (1, 2, 3, 8)


def _graph(seed: int, n: int = 300, m: int = 900) -> LinkGraph:
    rng = random.Random(seed)
    ids = [f"n{i:03d}" for i in range(n)]
    edges = []
    for _ in range(m):
        a = rng.randrange(n)
        b = rng.randrange(n) if rng.random() < 0.7 else rng.randrange(min(n, 15))  # a few hubs
        edges.append((ids[a], ids[b], rng.choice(("LINK", "RELATED", "PART_OF"))))
    nodes = [
        {
            "id": x,
            "type": rng.choice(("CONCEPT", "DOC", "NOTE")),
            "scopes": None if rng.random() < 0.7 else [rng.choice(("t1", "t2"))],
        }
        for x in ids
    ]
    nodes.append({"id": "zz-isolated", "type": "CONCEPT"})
    return LinkGraph.from_edges(edges, nodes=nodes)


class _KB:
    """A tiny knowledge base: search = ids containing the question's digits, in id order."""

    def __init__(self, g: LinkGraph) -> None:
        self._g = g

    def graph(self) -> LinkGraph:
        return self._g

    def search(self, text: str, k: int = 10):
        return [i for i in self._g.ids if text in i][:k]


@pytest.fixture(scope="module", params=[0, 1])
def graph(request):
    return _graph(request.param)


def _ranking_key(r):
    return (r.indices.tolist(), r.scores.tolist(), r.residual, r.eps, r.pushes, r.edge_visits, r.truncated, r.certified)


def _seed_sets(g: LinkGraph, count: int, seed: int):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ks = rng.sample(g.ids[:-1], rng.randint(1, 6))
        out.append({x: 1.0 / (j + 1) for j, x in enumerate(ks)})
    return out


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.with_scopes("t1")])
def test_ppr_batch_equals_single(graph, threads, caller):
    vm = caller.visibility(graph)
    sets = _seed_sets(graph, 60, 7)
    if vm is not None:
        mask = vm.mask
        sets = [s for s in ({k: v for k, v in d.items() if mask[graph.index(k)]} for d in sets) if s]
    for kw in ({}, {"k": 5}, {"eps": 1e-6}, {"max_pushes": 7}):
        got = personalized_pagerank_batch(graph, sets, visible=vm, threads=threads, **kw)
        want = [graph.personalized_pagerank(s, visible=vm, **kw) for s in sets]
        assert [_ranking_key(r) for r in got] == [_ranking_key(r) for r in want]
        assert [r.ids for r in got] == [r.ids for r in want]
        np.testing.assert_array_equal(got[0].error_bounds(), want[0].error_bounds())


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.with_scopes("t2"), Caller.public()])
def test_context_batch_equals_single(graph, threads, caller):
    kb = _KB(graph)
    vm = caller.visibility(graph)
    visible_ids = [x for x in graph.ids if vm is None or vm.mask[graph.index(x)]]
    rng = random.Random(3)
    queries = []
    for j in range(50):
        kind = j % 5
        concepts = rng.sample(visible_ids, rng.randint(1, 4))
        if kind == 0:
            queries.append(str(rng.randint(0, 40)))  # a question only
        elif kind == 1:
            queries.append({"concepts": concepts})
        elif kind == 2:
            queries.append({"question": str(rng.randint(0, 40)), "concepts": concepts})
        elif kind == 3:
            queries.append((None, concepts[:1] + concepts[:1]))  # duplicate concept
        else:
            queries.append({"question": "no-such-text"} if j % 2 else "?!")  # empty: no hit, no words
    queries.append({"concepts": ["zz-isolated"]})  # no visible neighbours
    for kw in ({}, {"k": 3}, {"node_types": ["DOC"]}, {"node_types": []}, {"eps": 1e-6, "n_hits": 3}):
        got = graph_context_batch(kb, queries, caller=caller, threads=threads, **kw)
        want = []
        for q in queries:
            if isinstance(q, str):
                want.append(graph_context(kb, q, caller=caller, **kw))
            elif isinstance(q, tuple):
                want.append(graph_context(kb, q[0], concepts=q[1], caller=caller, **kw))
            else:
                want.append(graph_context(kb, q.get("question"), concepts=q.get("concepts", ()), caller=caller, **kw))
        assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
        assert [r.reason for r in got] == [r.reason for r in want]
        assert [str(r) for r in got] == [str(r) for r in want]


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.with_scopes("t1")])
def test_suggest_and_path_batch_equal_single(graph, threads, caller):
    vm = caller.visibility(graph)
    vis = [x for x in graph.ids if vm is None or vm.mask[graph.index(x)]]
    hubs = sorted(vis, key=lambda x: -int(graph.degrees[graph.index(x)]))[:3]
    concepts = hubs + random.Random(5).sample(vis, 40) + ["zz-isolated"]
    for kw in ({}, {"k": 1}, {"k": 50, "min_shared": 1}):
        got = link_suggest_batch(graph, concepts, caller=caller, threads=threads, **kw)
        want = [link_suggest(graph, c, caller=caller, **kw) for c in concepts]
        assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
    rng = random.Random(9)
    pairs = [(rng.choice(vis), rng.choice(vis)) for _ in range(40)] + [(vis[0], vis[0]), (vis[1], "zz-isolated")]
    got = graph_path_batch(graph, pairs, caller=caller, threads=threads)
    want = [graph_path(graph, a, b, caller=caller) for a, b in pairs]
    assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
    assert any(r.found for r in got) and not got[-1].found


def test_input_order_with_repeats_and_many_threads(graph):
    sets = _seed_sets(graph, 10, 1)
    queries = [sets[i % 10] for i in range(203)][::-1]
    got = personalized_pagerank_batch(graph, queries, threads=16, k=10)
    want = personalized_pagerank_batch(graph, queries, threads=1, k=10)
    assert [_ranking_key(r) for r in got] == [_ranking_key(r) for r in want]
    assert [r.ids for r in got[:10]] == [graph.personalized_pagerank(s, k=10).ids for s in queries[:10]]


def test_empty_batches(graph):
    caller = Caller.all_access()
    assert personalized_pagerank_batch(graph, []) == []
    assert graph_context_batch(graph, [], caller=caller) == []
    assert link_suggest_batch(graph, [], caller=caller) == []
    assert graph_path_batch(graph, [], caller=caller) == []


def test_errors_name_the_query_and_change_nothing(graph):
    caller = Caller.all_access()
    good = {graph.ids[0]: 1.0}
    with pytest.raises(NotFoundError):
        personalized_pagerank_batch(graph, [good, {"nope": 1.0}])
    with pytest.raises(InputError, match=r"seeds\[1\]"):
        personalized_pagerank_batch(graph, [good, {graph.ids[1]: -1.0}])
    with pytest.raises(InputError, match="threads"):
        personalized_pagerank_batch(graph, [good], threads=0)
    with pytest.raises(InputError, match="single query"):
        personalized_pagerank_batch(graph, good)
    with pytest.raises(InputError, match=r"queries\[0\]"):
        graph_context_batch(graph, [42], caller=caller)
    with pytest.raises(InputError, match="unknown keys"):
        graph_context_batch(graph, [{"concept": ["a"]}], caller=caller)
    with pytest.raises(NotFoundError):
        graph_context_batch(graph, [{"concepts": ["nope"]}], caller=caller)
    with pytest.raises(InputError, match="knowledge base"):  # a question needs a search backend
        graph_context_batch(graph, ["text"], caller=caller)
    with pytest.raises(NotFoundError):
        link_suggest_batch(graph, [graph.ids[0], "nope"], caller=caller)
    with pytest.raises(InputError, match=r"pairs\[0\]"):
        graph_path_batch(graph, ["ab"], caller=caller)
    with pytest.raises(InputError, match="caller"):
        link_suggest_batch(graph, [graph.ids[0]], caller=None)  # type: ignore[arg-type]
    hidden = [x for x in graph.ids if not Caller.public().visibility(graph).mask[graph.index(x)]][0]
    with pytest.raises(NotFoundError) as e_hidden:
        link_suggest_batch(graph, [hidden], caller=Caller.public())
    with pytest.raises(NotFoundError) as e_missing:
        link_suggest_batch(graph, ["nope"], caller=Caller.public())
    assert str(e_hidden.value).replace(repr(hidden), "X") == str(e_missing.value).replace("'nope'", "X")


def test_default_threads_is_cpu_count():
    import os

    assert default_threads() == (os.cpu_count() or 1)


def test_core_batch_rejects_bad_pointers(graph):
    from conceptwalk import _core

    s = np.array([0, 1], dtype=np.int32)
    w = np.ones(2)
    with pytest.raises(ValueError, match="seed_ptr"):
        _core.ppr_batch(graph.core, np.array([0, 3], dtype=np.int64), s, w)
    with pytest.raises(ValueError, match="seed_ptr"):
        _core.context_batch(graph.core, np.array([0, 2, 1, 2], dtype=np.int64), s, w)
    with pytest.raises(ValueError, match="ascending"):
        _core.context_batch(graph.core, np.array([0, 2], dtype=np.int64), s[::-1].copy(), w)
    with pytest.raises(IndexError):
        _core.path_batch(graph.core, np.array([0], dtype=np.int32), np.array([10**6], dtype=np.int32))


def test_doctests():
    assert doctest.testmod(batch_mod, optionflags=doctest.ELLIPSIS).failed == 0


def test_suggest_batch_concepts_default_to_the_visible_concepts():
    """Issue 32: the in-process link_suggest_batch needed concepts= while the Dask one made it
    optional; both default to every node of node_types the caller sees, ascending."""
    g = LinkGraph.from_edges(
        [("a", "x"), ("b", "x"), ("a", "y"), ("b", "y"), ("h", "x"), ("h", "y")],
        nodes=[
            {"id": "a", "type": "CONCEPT"},
            {"id": "b", "type": "CONCEPT"},
            {"id": "h", "type": "CONCEPT", "scopes": ["secret"]},
            {"id": "x", "type": "FILE"},
        ],
    )
    for caller, want in ((Caller.public(), ["a", "b"]), (Caller.all_access(), ["a", "b", "h"])):
        got = link_suggest_batch(g, caller=caller, k=3)
        assert [r.concept for r in got] == want
        assert [r.to_dict() for r in got] == [link_suggest(g, c, caller=caller, k=3).to_dict() for c in want]
    every = link_suggest_batch(g, caller=Caller.public(), node_types=None)
    assert [r.concept for r in every] == ["a", "b", "x", "y"]
    assert link_suggest_batch(g, caller=Caller.public(), node_types=["NOPE"]) == []
    with pytest.raises(InputError, match="node_types must be a list of type names, not a single string"):
        link_suggest_batch(g, caller=Caller.public(), node_types="CONCEPT")
