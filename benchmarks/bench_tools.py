"""The three tools end to end through the Python API, warm, with visibility off and on (a caller
that sees about 70% of the nodes), and the wrapped query."""

from __future__ import annotations

import pytest

from conceptwalk.bench import harness as _perf
from conceptwalk import Caller, graph_context, graph_path, link_suggest

CALLERS = ["all-access", "masked70"]


def _caller(w, which):
    if which == "all-access":
        return Caller.all_access()
    return Caller.with_scopes(*w.masked_scopes)


def _visible_queries(w, caller, lists):
    vm = caller.visibility(w.graph)
    if vm is None:
        return lists
    return [q for q in lists if all(vm.mask[w.graph.id_index[c]] for c in q)]


@pytest.mark.benchmark(group="tool graph_context")
@pytest.mark.parametrize("who", CALLERS)
def bench_graph_context(benchmark, workload, rotor, who):
    w = workload
    caller = _caller(w, who)
    qs = _visible_queries(w, caller, w.seed_sets)
    nxt = rotor(len(qs))
    graph_context(w.graph, concepts=qs[0], k=20, caller=caller)  # warm the caller's mask
    res = benchmark(lambda: graph_context(w.graph, concepts=qs[nxt()], k=20, caller=caller))
    q = qs[nxt.last]
    assert len(res.results) == 20 and not {r.id for r in res.results} & set(q)
    assert all(r.hops >= 1 and r.via in q for r in res.results)
    ref = graph_context(w.graph, concepts=q, k=20, caller=caller)
    assert res.to_dict() == ref.to_dict()
    if who == "all-access":  # the ranking agrees with the pure-Python push (same algorithm)
        p = _perf.py_push(w.adj, {w.graph.id_index[c]: 1.0 for c in q})
        for item in res.results:
            assert abs(p.get(w.graph.id_index[item.id], 0.0) - item.score) < 1e-9


@pytest.mark.benchmark(group="tool link_suggest")
@pytest.mark.parametrize("who", CALLERS)
def bench_link_suggest(benchmark, workload, rotor, who):
    w = workload
    caller = _caller(w, who)
    qs = [c[0] for c in _visible_queries(w, caller, [[c] for c in w.concepts])]
    nxt = rotor(len(qs))
    link_suggest(w.graph, qs[0], caller=caller)
    res = benchmark(lambda: link_suggest(w.graph, qs[nxt()], k=10, caller=caller))
    if who == "all-access":
        g = w.graph
        t, _ = _perf.numpy_ra(g.core.indptr, g.core.indices, g.id_index[res.concept], 10)
        assert [s.id for s in res.suggestions] == [g.ids[x] for x in t.tolist()]


@pytest.mark.benchmark(group="tool graph_path")
@pytest.mark.parametrize("who", CALLERS)
def bench_graph_path(benchmark, workload, rotor, who):
    w = workload
    caller = _caller(w, who)
    pairs = [tuple(p) for p in _visible_queries(w, caller, [list(p) for p in w.pairs])]
    nxt = rotor(len(pairs))
    graph_path(w.graph, *pairs[0], caller=caller)
    res = benchmark(lambda: graph_path(w.graph, *pairs[nxt()], caller=caller))
    if who == "all-access":
        g = w.graph
        a, b = pairs[nxt.last]
        ref = _perf.py_bibfs(w.adj, g.id_index[a], g.id_index[b])
        assert res.length == (None if ref is None else len(ref) - 1)


@pytest.mark.benchmark(group="wrapped query")
def bench_wrapped_query(benchmark, workload_1k, tmp_path_factory):
    wrap = pytest.importorskip("conceptwalk.wrap")
    from conceptwalk.kb.store import KnowledgeBase

    kb_syn = workload_1k.kb
    kb = KnowledgeBase.create(str(tmp_path_factory.mktemp("wrap") / "kb.sqlite"))
    kb.add_nodes(kb_syn.node_rows())
    kb.add_edges(kb_syn.edge_rows())
    kb.add_aliases(kb_syn.alias_rows())
    retriever = wrap.ConceptAnchoredRetriever(wrap.builtin_flat_search(kb), kb)
    queries = kb_syn.queries(50)
    it = iter(range(10**9))
    caller = Caller.all_access()
    retriever.query(queries[0]["text"], 10, concept_walk=True, caller=caller)
    out = benchmark(
        lambda: retriever.query(queries[next(it) % len(queries)]["text"], 10, concept_walk=True, caller=caller)
    )
    flat = retriever.query(queries[0]["text"], 10, concept_walk=False, caller=caller)
    assert isinstance(out, list) and isinstance(flat, list)
    kb.close()
