"""Batch throughput: the same PPR / context batch on 1 and 2 threads (the target is 2 threads
>= 1.8x the throughput of 1 on an otherwise idle 2-core machine), results equal to one-by-one."""

from __future__ import annotations

import pytest

from conceptwalk import Caller
from conceptwalk import graph_context_batch, personalized_pagerank_batch


@pytest.mark.benchmark(group="batch ppr 1k x 800")
@pytest.mark.parametrize("threads", [1, 2])
def bench_ppr_batch(benchmark, workload_1k, threads):
    w = workload_1k
    sets = [w.seed_map(i) for i in range(len(w.seed_sets))] * 4
    out = benchmark(personalized_pagerank_batch, w.graph, sets, k=20, threads=threads)
    assert len(out) == len(sets)
    for i in (0, 1, len(sets) - 1):
        assert out[i].ids == w.graph.personalized_pagerank(sets[i], k=20).ids
    benchmark.extra_info["queries"] = len(sets)


@pytest.mark.benchmark(group="batch context 1k x 200")
@pytest.mark.parametrize("threads", [1, 2])
def bench_context_batch(benchmark, workload_1k, threads):
    from conceptwalk import graph_context

    w = workload_1k
    qs = [{"concepts": s} for s in w.seed_sets]
    caller = Caller.all_access()
    out = benchmark(graph_context_batch, w.graph, qs, k=20, caller=caller, threads=threads)
    for i in (0, len(qs) - 1):
        assert out[i].to_dict() == graph_context(w.graph, concepts=w.seed_sets[i], k=20, caller=caller).to_dict()
    benchmark.extra_info["queries"] = len(qs)
