"""The fixed references every ratio is taken against, measured in the same run on the 1k KB:
pure-Python forward push, pure-Python bidirectional BFS, numpy-vectorised resource allocation."""

from __future__ import annotations

import pytest

from conceptwalk.bench import harness as _perf


@pytest.mark.benchmark(group="ppr repeated")
def bench_ref_py_push_repeated(benchmark, workload_1k):
    w = workload_1k
    p = benchmark(_perf.py_push, w.adj, w.seed_idx(0))
    _perf._check_ppr(w.graph.personalized_pagerank(w.seed_map(0)), p, w.adj, 1e-4)


@pytest.mark.benchmark(group="ppr rotating")
def bench_ref_py_push_rotating(benchmark, workload_1k, rotor):
    w = workload_1k
    nxt = rotor(len(w.seed_sets))
    p = benchmark(lambda: _perf.py_push(w.adj, w.seed_idx(nxt())))
    _perf._check_ppr(w.graph.personalized_pagerank(w.seed_map(nxt.last)), p, w.adj, 1e-4)


@pytest.mark.benchmark(group="resource allocation")
def bench_ref_numpy_ra(benchmark, workload_1k, rotor):
    w = workload_1k
    g = w.graph
    nxt = rotor(len(w.concepts))
    t, s = benchmark(lambda: _perf.numpy_ra(g.core.indptr, g.core.indices, g.id_index[w.concepts[nxt()]], 10))
    assert list(s) == sorted(s, reverse=True)


@pytest.mark.benchmark(group="shortest path")
def bench_ref_py_bibfs(benchmark, workload_1k, rotor):
    w = workload_1k
    g = w.graph
    nxt = rotor(len(w.pairs))
    p = benchmark(lambda: _perf.py_bibfs(w.adj, *(g.id_index[x] for x in w.pairs[nxt()])))
    assert p is None or len(set(p)) == len(p)
