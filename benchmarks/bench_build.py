"""Graph build from numpy arrays (the core's counting-sort CSR, and the full LinkGraph with
names, types and annotations) and from the SQLite store; core memory per adjacency entry and
peak memory of a build."""

from __future__ import annotations

import gc
import resource
import tracemalloc

import numpy as np
import pytest

from conceptwalk import _core


def _arrays(w):
    kb = w.kb
    types = {t: i for i, t in enumerate(sorted(set(kb.edge_types.tolist())))}
    et = np.fromiter((types[t] for t in kb.edge_types.tolist()), dtype=np.int32, count=kb.num_edges)
    return (
        kb.num_nodes,
        np.ascontiguousarray(kb.src, dtype=np.int32),
        np.ascontiguousarray(kb.dst, dtype=np.int32),
        et,
    )


def _check_core(core, w):
    assert core.num_nodes == w.graph.num_nodes
    assert core.num_entries == w.graph.core.num_entries
    indptr = np.asarray(core.indptr)
    assert indptr[-1] == core.num_entries and np.all(np.diff(indptr) >= 0)


@pytest.mark.benchmark(group="build core from numpy")
def bench_build_core_from_numpy(benchmark, workload):
    n, src, dst, et = _arrays(workload)
    core, canon = benchmark.pedantic(_core.CSRGraph.from_edges, args=(n, src, dst, et), rounds=5, warmup_rounds=1)
    _check_core(core, workload)
    assert canon.shape == (src.shape[0],)
    benchmark.extra_info.update(
        nodes=int(core.num_nodes),
        adjacency_entries=int(core.num_entries),
        edges=int(core.num_edges),
        core_bytes=int(core.memory_bytes),
        bytes_per_entry=round(core.memory_bytes / max(core.num_entries, 1), 3),
    )


@pytest.mark.benchmark(group="build LinkGraph from arrays")
def bench_build_linkgraph_from_arrays(benchmark, workload):
    kb = workload.kb
    g = benchmark.pedantic(kb.to_linkgraph, rounds=3, warmup_rounds=0)
    _check_core(g.core, workload)
    assert g.ids == workload.graph.ids


def bench_peak_memory(workload, record_property):
    """Peak traced Python/numpy memory of a LinkGraph build, the core's bytes per adjacency entry,
    and the process's max RSS (reported, not asserted: a report of what was measured)."""
    kb = workload.kb
    gc.collect()
    tracemalloc.start()
    g = kb.to_linkgraph()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    core = g.core
    per_entry = core.memory_bytes / max(core.num_entries, 1)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _check_core(core, workload)
    for k, v in (
        ("traced_peak_mb", peak / 2**20),
        ("core_mb", core.memory_bytes / 2**20),
        ("core_bytes_per_entry", per_entry),
        ("max_rss_mb", rss_mb),
    ):
        record_property(k, round(v, 3))
    print(
        f"\n[{workload.name}] build peak traced {peak / 2**20:.1f} MB; core {core.memory_bytes / 2**20:.1f} MB "
        f"= {per_entry:.2f} B/adjacency entry; max RSS {rss_mb:.0f} MB"
    )


@pytest.fixture(scope="module")
def store_path(workload, tmp_path_factory):
    if workload.graph.num_nodes > 30_000:
        pytest.skip(
            "store benchmarks run at 1k and 10k (filling SQLite is the slow part; "
            "scripts/bench_snapshot.py measures 200k)"
        )
    from conceptwalk.kb.store import KnowledgeBase

    path = str(tmp_path_factory.mktemp("store") / "kb.sqlite")
    kb = KnowledgeBase.create(path)
    workload.kb.write_to(kb)  # the bulk path (`conceptwalk synth`)
    kb.close()
    return path


@pytest.mark.benchmark(group="build from SQLite store")
def bench_build_from_store(benchmark, workload, store_path):
    """A full read of the store (the columnar reader), no snapshot file involved."""
    from conceptwalk.kb.snapshot import read_graph
    from conceptwalk.kb.store import KnowledgeBase

    def cold():
        kb = KnowledgeBase.open(store_path, create=False)
        try:
            with kb.transaction():  # one read snapshot (nothing is written)
                return read_graph(kb.conn)
        finally:
            kb.close()

    g = benchmark.pedantic(cold, rounds=3, warmup_rounds=1)
    assert g.ids == workload.graph.ids
    assert np.array_equal(g.core.indices, workload.graph.core.indices)


@pytest.mark.benchmark(group="open from the snapshot file")
def bench_open_from_snapshot(benchmark, workload, store_path):
    """A fresh KnowledgeBase's first graph when the saved snapshot matches the store."""
    from conceptwalk.kb.store import KnowledgeBase

    with KnowledgeBase.open(store_path, create=False) as kb:
        kb.graph()  # builds and saves the snapshot file

    def cold():
        kb = KnowledgeBase.open(store_path, create=False)
        try:
            return kb.graph()
        finally:
            kb.close()

    g = benchmark.pedantic(cold, rounds=5, warmup_rounds=1)
    assert g.ids == workload.graph.ids
    assert np.array_equal(g.core.indices, workload.graph.core.indices)


@pytest.mark.benchmark(group="read after a write")
def bench_read_after_write(benchmark, workload, store_path):
    """kb.graph() after a write of one node and two edges (the snapshot follows the change log);
    checked against a fresh build at the end."""
    import itertools

    from conceptwalk.kb.snapshot import read_graph
    from conceptwalk.kb.store import KnowledgeBase

    kb = KnowledgeBase.open(store_path, create=False)
    kb.SNAPSHOT_SAVE_EVERY = 1 << 60
    g0 = kb.graph()
    ids = g0.ids
    counter = itertools.count()

    def write():
        i = next(counter)
        nid = f"memory/bench-{i:06d}"
        with kb.transaction():
            kb.add_nodes([{"id": nid, "type": "MEMORY", "title": f"turn {i}"}])
            kb.add_edges([(nid, ids[(i * 7919) % len(ids)], "MENTIONS"), (ids[i % len(ids)], nid, "ABOUT")])
        return (), {}

    g = benchmark.pedantic(kb.graph, setup=write, rounds=20, warmup_rounds=1)
    with kb.transaction():
        ref = read_graph(kb.conn)
    assert g.ids == ref.ids and np.array_equal(g.core.indices, ref.core.indices)
    kb.close()
