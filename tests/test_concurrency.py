"""Queries from many threads give exactly the single-threaded answers: on one shared graph, and on
one knowledge base while a writer thread (and a writer process) adds nodes and edges -- each
reader's answer equals a single-threaded run on the snapshot version it read."""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conceptwalk import Caller, LinkGraph, graph_context, graph_path, link_suggest
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.kb.synthetic import generate

THREADS = 8
ALL = Caller.all_access()


def _random_graph(n: int = 400, m: int = 2400, seed: int = 5) -> LinkGraph:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    ids = [f"v{i:04d}" for i in range(n)]
    scopes = [None if rng.random() < 0.7 else [f"t{rng.integers(0, 3)}"] for _ in range(n)]
    return LinkGraph.from_arrays(ids, src, dst, scopes=scopes)


def _answer(g: LinkGraph, i: int) -> tuple:
    """One mixed query, fully materialised (ids, scores, paths)."""
    ids = g.ids
    a, b = ids[(i * 37) % len(ids)], ids[(i * 101 + 7) % len(ids)]
    mask = g.scope_mask([f"t{i % 3}"])
    r = g.personalized_pagerank({a: 1.0, b: 0.5}, eps=1e-6, k=25)
    rm = g.personalized_pagerank({a: 1.0}, eps=1e-5, visible=mask) if mask[g.index(a)] else None
    ra = g.resource_allocation(a, min_shared=1, k=10)
    sp = g.shortest_path(a, b)
    h = g.hops([a], [b, ids[0]])
    return (list(r.items()), None if rm is None else list(rm.items()), [s.to_dict() for s in ra], sp, h)


def test_threads_on_one_graph_equal_single_threaded():
    g = _random_graph()
    queries = list(range(96))
    single = [_answer(g, i) for i in queries]
    start = threading.Barrier(THREADS)

    def worker(t: int) -> list[tuple[int, tuple]]:
        start.wait()  # all threads hammer the graph at once
        return [(i, _answer(g, i)) for i in queries[t::THREADS] + queries[:12]]

    with ThreadPoolExecutor(THREADS) as ex:
        results = [x for chunk in ex.map(worker, range(THREADS)) for x in chunk]
    assert len(results) == len(queries) + THREADS * 12
    for i, got in results:
        assert got == single[i], f"query {i} differs under {THREADS} threads"


def test_threads_on_tools_equal_single_threaded():
    syn = generate(120, seed=2)
    g = syn.to_linkgraph()
    concepts = [i for i in g.ids if i.startswith("concept/")][:32]
    callers = [ALL, Caller.public(), Caller.with_scopes("team-a")]

    def run(i: int) -> tuple:
        c = concepts[i % len(concepts)]
        caller = callers[i % len(callers)]
        try:
            ctx = graph_context(g, concepts=[c], caller=caller, k=10).to_dict()
            ctx.pop("elapsed_ms", None)
            sug = link_suggest(g, c, caller=caller, k=5).to_dict()
            sug.pop("elapsed_ms", None)
            path = graph_path(g, c, concepts[(i * 7) % len(concepts)], caller=caller).to_dict()
            path.pop("elapsed_ms", None)
            return ("ok", ctx, sug, path)
        except LookupError as exc:  # hidden concept for this caller: same error every time
            return ("err", type(exc).__name__, str(exc))

    single = [run(i) for i in range(64)]
    with ThreadPoolExecutor(THREADS) as ex:
        multi = list(ex.map(run, list(range(64)) * 3))
    assert multi == single * 3


# --------------------------------------------------------------------------- with a writer
def _kb_answers(g: LinkGraph, probes: list[str]) -> tuple:
    out = []
    for p in probes:
        if p not in g:
            out.append(None)
            continue
        ctx = graph_context(g, concepts=[p], caller=ALL, k=8).to_dict()
        ctx.pop("elapsed_ms", None)
        out.append((ctx, [s.to_dict() for s in g.resource_allocation(p, min_shared=1, k=5)]))
    return tuple(out)


def _seed_kb(path) -> tuple[KnowledgeBase, list[str]]:
    kb = KnowledgeBase.create(path)
    rng = np.random.default_rng(0)
    kb.add_nodes([{"id": f"n{i:04d}", "type": "CONCEPT"} for i in range(200)])
    kb.add_edges(
        [{"src": f"n{a:04d}", "dst": f"n{b:04d}"} for a, b in rng.integers(0, 200, (800, 2)).tolist() if a != b]
    )
    return kb, [f"n{i:04d}" for i in range(0, 200, 13)]


def _write_batches(kb: KnowledgeBase, batches: int, tag: str) -> None:
    rng = np.random.default_rng(sum(map(ord, tag)))
    for b in range(batches):
        time.sleep(0.03)  # let the readers see several versions (not a timing assertion)
        with kb.transaction():
            new = [f"{tag}{b:03d}_{j}" for j in range(5)]
            kb.add_nodes([{"id": x, "type": "CONCEPT"} for x in new])
            kb.add_edges([{"src": x, "dst": f"n{int(rng.integers(0, 200)):04d}"} for x in new for _ in range(3)])


def _reader_loop(kb: KnowledgeBase, probes: list[str], stop: threading.Event, seen: dict) -> None:
    while not stop.is_set():
        g = kb.graph()  # one immutable snapshot; answers must match a fresh single-threaded run on it
        ver = kb.version
        got = _kb_answers(g, probes)
        seen.setdefault(g.num_nodes, []).append((ver, got))


def test_readers_while_writer_thread_adds(tmp_path):
    kb, probes = _seed_kb(tmp_path / "kb.db")
    stop = threading.Event()
    seen: dict[int, list] = {}
    readers = [threading.Thread(target=_reader_loop, args=(kb, probes, stop, seen)) for _ in range(THREADS)]
    for t in readers:
        t.start()
    try:
        _write_batches(kb, 12, "w")
    finally:
        stop.set()
        for t in readers:
            t.join()
    _check_snapshots(tmp_path / "kb.db", probes, seen)
    assert len(seen) >= 2, "readers never observed the writer's progress"


def _writer_process(path: str, batches: int) -> None:
    kb = KnowledgeBase.open(path)
    _write_batches(kb, batches, "p")
    kb.close()


def test_readers_while_writer_process_adds(tmp_path):
    kb, probes = _seed_kb(tmp_path / "kb.db")
    stop = threading.Event()
    seen: dict[int, list] = {}
    readers = [threading.Thread(target=_reader_loop, args=(kb, probes, stop, seen)) for _ in range(THREADS)]
    for t in readers:
        t.start()
    proc = mp.get_context("spawn").Process(target=_writer_process, args=(str(tmp_path / "kb.db"), 12))
    proc.start()
    proc.join(120)
    stop.set()
    for t in readers:
        t.join()
    assert proc.exitcode == 0
    _check_snapshots(tmp_path / "kb.db", probes, seen)


def _check_snapshots(path, probes: list[str], seen: dict) -> None:
    """Every reader answer equals a single-threaded run on a graph of the same snapshot.

    Batches only add nodes, so a snapshot is identified by its node count; rebuild each one from
    a fresh connection by replaying the writer's batches up to that count."""
    kb = KnowledgeBase.open(path)
    final = kb.graph()
    kb.close()
    assert seen
    for n_nodes, answers in seen.items():
        # The snapshot with n_nodes nodes = the base 200 plus the first (n_nodes - 200) // 5 batches.
        nb = (n_nodes - 200) // 5
        assert (n_nodes - 200) % 5 == 0, "a partial batch was visible to a reader"
        visible = {i for i in final.ids if not (i[0] in "wp" and int(i[1:4]) >= nb)}
        edges = [
            (final.ids[s], final.ids[d])
            for s, d in zip(final.edge_src.tolist(), final.edge_dst.tolist())
            if final.ids[s] in visible and final.ids[d] in visible
        ]
        snap = LinkGraph.from_edges(edges, nodes=[{"id": i, "type": "CONCEPT"} for i in sorted(visible)])
        want = _kb_answers(snap, probes)
        for _, got in answers:
            assert got == want, f"reader answer on the {n_nodes}-node snapshot differs"


@pytest.mark.parametrize("threads", [THREADS])
def test_batch_threads_equal_serial(threads):
    # the C++-thread batch path against one-by-one calls
    from conceptwalk.graph import personalized_pagerank_batch

    g = _random_graph(300, 1500, seed=9)
    seeds = [{g.ids[i]: 1.0} for i in range(0, 300, 7)]
    out = personalized_pagerank_batch(g, seeds, eps=1e-5, threads=threads)
    for s, r in zip(seeds, out):
        one = g.personalized_pagerank(s, eps=1e-5)
        assert list(r.items()) == list(one.items())
