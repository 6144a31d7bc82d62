"""Core algorithms through the Python API: PPR (repeated and rotating 5-seed sets, masked),
resource allocation (a typical concept and the top hub), shortest path, certified top-k."""

from __future__ import annotations

import pytest

from conceptwalk.bench import harness as _perf
from conceptwalk import Caller


def _assert_ppr(w, i, ranking, eps=1e-4):
    ref = _perf.py_push(w.adj, w.seed_idx(i), eps=eps)
    _perf._check_ppr(ranking, ref, w.adj, eps)


@pytest.mark.benchmark(group="ppr repeated")
def bench_ppr_repeated(benchmark, workload):
    w = workload
    seeds = w.seed_map(0)
    r = benchmark(w.graph.personalized_pagerank, seeds)
    _assert_ppr(w, 0, r)
    benchmark.extra_info.update(edge_visits=r.edge_visits, pushes=r.pushes, nodes=w.graph.num_nodes)


@pytest.mark.benchmark(group="ppr rotating")
def bench_ppr_rotating(benchmark, workload, rotor):
    w = workload
    nxt = rotor(len(w.seed_sets))
    maps = [w.seed_map(i) for i in range(len(w.seed_sets))]
    r = benchmark(lambda: w.graph.personalized_pagerank(maps[nxt()]))
    _assert_ppr(w, nxt.last, r)


@pytest.mark.benchmark(group="ppr masked")
@pytest.mark.parametrize("masked", [False, True], ids=["unmasked", "masked70"])
def bench_ppr_masked(benchmark, workload, rotor, masked):
    w = workload
    g = w.graph
    vm = Caller.with_scopes(*w.masked_scopes).visibility(g) if masked else None
    ok = [i for i in range(len(w.seed_sets)) if vm is None or all(vm.mask[g.id_index[c]] for c in w.seed_sets[i])]
    maps = [w.seed_map(i) for i in ok]
    nxt = rotor(len(maps))
    r = benchmark(lambda: g.personalized_pagerank(maps[nxt()], visible=vm))
    assert all(vm is None or vm.mask[v] for v in r.indices.tolist())
    assert abs(r.scores.sum() + r.residual - 1.0) < 1e-9
    benchmark.extra_info["visible_fraction"] = float(w.masked_fraction) if masked else 1.0


@pytest.mark.benchmark(group="ppr certified")
@pytest.mark.parametrize("mode", ["plain", "certified"])
def bench_ppr_certified(benchmark, workload_1k, mode):
    w = workload_1k
    g = w.graph
    seeds = w.seed_map(0)
    cert = g.personalized_pagerank_certified(seeds, 20)
    if mode == "certified":
        r = benchmark(g.personalized_pagerank_certified, seeds, 20)
        assert r.certified and r.ids[:20] == cert.ids[:20]
    else:  # a plain run at the eps the certified run ended at
        r = benchmark(g.personalized_pagerank, seeds, eps=cert.eps, k=20)
        assert r.ids == cert.ids[:20]
    benchmark.extra_info["final_eps"] = cert.eps


@pytest.mark.benchmark(group="resource allocation")
def bench_ra_typical(benchmark, workload, rotor):
    w = workload
    g = w.graph
    nxt = rotor(len(w.concepts))
    res = benchmark(lambda: g.resource_allocation(w.concepts[nxt()], k=10))
    c = w.concepts[nxt.last]
    t, _ = _perf.numpy_ra(g.core.indptr, g.core.indices, g.id_index[c], 10)
    assert [s.id for s in res] == [g.ids[x] for x in t.tolist()]


@pytest.mark.benchmark(group="resource allocation hub")
def bench_ra_hub(benchmark, workload):
    w = workload
    g = w.graph
    res = benchmark(g.resource_allocation, w.hub, k=10)
    t, s = _perf.numpy_ra(g.core.indptr, g.core.indices, g.id_index[w.hub], 10)
    assert [x.id for x in res] == [g.ids[i] for i in t.tolist()]
    benchmark.extra_info["hub_degree"] = int(g.degrees[g.id_index[w.hub]])


@pytest.mark.benchmark(group="shortest path")
def bench_shortest_path(benchmark, workload, rotor):
    w = workload
    g = w.graph
    nxt = rotor(len(w.pairs))
    p = benchmark(lambda: g.shortest_path(*w.pairs[nxt()]))
    a, b = w.pairs[nxt.last]
    ref = _perf.py_bibfs(w.adj, g.id_index[a], g.id_index[b])
    assert (None if p is None else len(p)) == (None if ref is None else len(ref))
