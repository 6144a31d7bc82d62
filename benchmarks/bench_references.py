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


# The floors under the id-level calls (issue 18): what a call into the core costs before it does
# any work, measured beside the references so a ratio's ceiling can be read off the same run.
@pytest.mark.benchmark(group="floor")
def bench_floor_property_read(benchmark, workload_1k):
    core = workload_1k.graph.core
    assert benchmark(lambda: core.num_nodes) == workload_1k.graph.num_nodes


@pytest.mark.benchmark(group="floor")
def bench_floor_path_to_itself(benchmark, workload_1k, rotor):
    """``shortest_path_ids`` from a node to itself: both ids resolved, the GIL released, the
    one-id list built -- every cost of ``LinkGraph.shortest_path`` but the search."""
    from conceptwalk import _core

    w = workload_1k
    g = w.graph
    nxt = rotor(len(w.concepts))
    p = benchmark(
        lambda: _core.shortest_path_ids(g.core, g.id_index, w.concepts[nxt()], w.concepts[nxt.last], None, g.ids)
    )
    assert p == [w.concepts[nxt.last]]
