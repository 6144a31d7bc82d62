"""conceptwalk.serve.distributed on a LocalCluster: results equal the in-process ones, in input order;
the graph goes to each worker once, as numpy arrays, and is rebuilt once per worker."""

from __future__ import annotations

import json

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from conceptwalk import Caller, LinkGraph, graph_context, link_suggest  # noqa: E402
from conceptwalk.serve import distributed as cwd  # noqa: E402
from conceptwalk.errors import InputError  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402
from conceptwalk.kb.synthetic import generate  # noqa: E402
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search  # noqa: E402

ALL = Caller.all_access()
_SYN = generate(150, seed=11)
SYN_ROWS = (list(_SYN.node_rows()), list(_SYN.edge_rows()))


def _ctx(r):
    d = r.to_dict()
    d.pop("elapsed_ms", None)
    d.pop("elapsedMs", None)
    return json.dumps(d, sort_keys=True, default=str)


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    syn = generate(150, seed=11)
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("dist") / "kb.db")
    kb.add_nodes(syn.node_rows())
    kb.add_edges(syn.edge_rows())
    kb.add_aliases(syn.alias_rows())
    kb.queries = syn.queries()  # type: ignore[attr-defined]
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_graph_round_trips_through_arrays(kb):
    g = kb.graph()
    arrays = cwd.graph_to_arrays(g)
    assert all(isinstance(v, np.ndarray) and v.dtype != object for v in arrays.values())
    h = cwd.graph_from_arrays(arrays)
    assert h.ids == g.ids
    assert np.array_equal(h.core.indptr, g.core.indptr) and np.array_equal(h.core.indices, g.core.indices)
    assert np.array_equal(h.edge_src, g.edge_src) and np.array_equal(h.edge_dst, g.edge_dst)
    assert [h.edge_type_names[c] for c in h.edge_type_codes] == [g.edge_type_names[c] for c in g.edge_type_codes]
    assert h.titles == g.titles
    assert [h.node_scopes(x) for x in h.ids] == [g.node_scopes(x) for x in g.ids]
    assert set(h.edge_annotations) == set(g.edge_annotations)
    for key in g.edge_annotations:
        assert [h.edge_annotation(e, key) for e in range(h.num_edges)] == [
            g.edge_annotation(e, key) for e in range(g.num_edges)
        ]


def test_graph_context_batch_equals_in_process_in_order(client, kb):
    g = kb.graph()
    texts = [q["text"] for q in kb.queries[:24]]
    concept_ids = [i for i in g.ids if i.startswith("concept/") and not g.node_scopes(i)][:6]
    questions = texts + [{"question": None, "concepts": [c]} for c in concept_ids]
    questions += [{"question": texts[0], "concepts": concept_ids[:2]}]
    caller = Caller.public()
    got = cwd.graph_context_batch(client, kb, questions, caller=caller, k=8, partitions=5)
    want = [
        graph_context(
            kb,
            q if isinstance(q, str) else q["question"],
            concepts=[] if isinstance(q, str) else q["concepts"],
            caller=caller,
            k=8,
        )
        for q in questions
    ]
    assert len(got) == len(questions)
    assert [_ctx(r) for r in got] == [_ctx(r) for r in want]
    assert any(r.results for r in got)


def test_link_suggest_batch_every_concept(client, kb):
    got = cwd.link_suggest_batch(client, kb, caller=ALL, k=5)
    g = kb.graph()
    concepts = [i for i in g.ids if g.node_type(i) == "CONCEPT"]
    assert [r.concept for r in got] == concepts and len(concepts) > 10
    for c, r in zip(concepts, got):
        assert r.to_dict() == link_suggest(kb, c, k=5, caller=ALL).to_dict()
    assert any(r.suggestions for r in got)


def test_same_vocabulary_as_the_in_process_batch(client, kb):
    """The Dask batch takes the tools' query forms and names and returns the tools' batch results."""
    from conceptwalk.tools import graph_context_batch, graph_path_batch, link_suggest_batch

    g = kb.graph()
    cs = [i for i in g.ids if g.node_type(i) == "CONCEPT"][:8]
    queries = [{"concepts": cs[:2]}, (None, cs[2:3]), kb.queries[0]["text"], (kb.queries[1]["text"], cs[3:4])]
    got = cwd.graph_context_batch(client, kb, queries, caller=ALL, k=4, partitions=3)
    want = graph_context_batch(kb, queries, caller=ALL, k=4, threads=1)
    assert [_ctx(r) for r in got] == [_ctx(r) for r in want]
    got_s = cwd.link_suggest_batch(client, kb, cs, caller=ALL, k=3, partitions=2)
    assert [r.to_dict() for r in got_s] == [r.to_dict() for r in link_suggest_batch(kb, cs, caller=ALL, k=3)]
    pairs = list(zip(cs, cs[1:]))
    got_p = cwd.graph_path_batch(client, kb, pairs, caller=ALL, partitions=2)
    assert [r.to_dict() for r in got_p] == [r.to_dict() for r in graph_path_batch(kb, pairs, caller=ALL)]
    with pytest.raises(InputError, match=r"queries\[0\]: unknown keys"):
        cwd.graph_context_batch(client, kb, [{"concept": cs[:1]}], caller=ALL)
    with pytest.raises(InputError, match="k must be a positive integer"):
        cwd.graph_context_batch(client, kb, [{"concepts": cs[:1]}], caller=ALL, k=True)


def test_query_batch_wrap_equals_in_process(client, kb):
    texts = [q["text"] for q in kb.queries[:16]]
    got = cwd.query_batch(client, kb, texts, 5, caller=ALL, concept_walk=True, partitions=3)
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    want = [r.query(t, 5, concept_walk=True, caller=ALL) for t in texts]
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert any(h.get("via") == "concept-walk" for res in got for h in res)


def test_graph_shipped_once_and_rebuilt_once_per_worker(client, kb):
    shipped = cwd.ship(client, kb.graph())
    concepts = [i for i in kb.graph().ids][:40]
    qs = [{"concepts": [c]} for c in concepts]
    first = cwd.graph_context_batch(client, shipped, qs, caller=ALL, k=3, partitions=8)
    again = cwd.graph_context_batch(client, shipped, qs, caller=ALL, k=3, partitions=8)
    assert [_ctx(r) for r in first] == [_ctx(r) for r in again]
    # Every worker holds the scattered arrays (broadcast) and built the graph for this token at
    # most once, whatever the number of tasks it ran.
    who_has = client.who_has([shipped.graph])
    assert len(next(iter(who_has.values()))) == len(client.scheduler_info()["workers"])
    infos = client.run(_tokens_built, shipped.token)
    assert all(n <= 1 for n in infos.values()), infos
    assert sum(infos.values()) >= 1


def _tokens_built(token, dask_worker=None):
    return cwd.worker_cache_info(dask_worker)["tokens"].count(token)


def test_bare_graph_needs_concepts_for_questions(client):
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    with pytest.raises(InputError, match="free-text questions need a knowledge base"):
        cwd.graph_context_batch(client, g, ["what is a?"], caller=ALL)
    out = cwd.graph_context_batch(client, g, [{"concepts": ["a"]}], caller=ALL, k=2)
    assert [r.id for r in out[0].results] == [r.id for r in graph_context(g, concepts=["a"], caller=ALL, k=2).results]
    with pytest.raises(InputError, match="not a single string"):
        cwd.graph_context_batch(client, g, "abc", caller=ALL)


# --------------------------------------------------------------------------- pickling, process workers
SCOPED = Caller.with_scopes("tenant-d")


def _batches(kb):
    """The three batches' inputs for this KB: free-text and concept queries, concepts, pairs."""
    g = kb.graph()
    concepts = [
        i for i in g.ids if g.node_type(i) == "CONCEPT" and not g.node_scopes(i)
    ]  # public: both callers see them
    queries = [q["text"] for q in kb.queries[:6]] + [{"concepts": concepts[:2]}, (kb.queries[6]["text"], concepts[2:3])]
    pairs = list(zip(concepts[:8], concepts[8:16]))
    return queries, concepts[:12], pairs


def _dicts(results):
    return [json.dumps(r.to_dict(), sort_keys=True, default=str) for r in results]


def test_every_result_graph_caller_and_config_pickles_equal(kb, tmp_path):
    import pickle

    from conceptwalk.tools import graph_context_batch, graph_path_batch, link_suggest_batch
    from conceptwalk.wrap import WalkConfig

    queries, concepts, pairs = _batches(kb)
    for caller in (ALL, SCOPED):
        for results in (
            graph_context_batch(kb, queries, caller=caller, k=5),
            link_suggest_batch(kb, concepts, caller=caller, k=4),
            graph_path_batch(kb, pairs, caller=caller),
        ):
            back = pickle.loads(pickle.dumps(results))  # lazy fields realised on the way
            assert [type(r) for r in back] == [type(r) for r in results]
            assert _dicts(back) == _dicts(results) and back == results
    for obj in (ALL, SCOPED, Caller.public(), WalkConfig(), WalkConfig(max_hops=1, concept_node_types=("TOPIC",))):
        assert pickle.loads(pickle.dumps(obj)) == obj
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    wr = r.run(kb.queries[0]["text"], 5, concept_walk=True, caller=ALL)
    back = pickle.loads(pickle.dumps(wr))
    assert json.dumps(back.results, sort_keys=True) == json.dumps(wr.results, sort_keys=True)
    assert back.concepts == wr.concepts and back.event == wr.event
    # the graph: built in memory, and mapped from the snapshot file (pickled by value, the file not needed)
    g = kb.graph()
    for graph in (g, LinkGraph.from_edges([("a", "b", "CITES"), ("b", "c")])):
        h = pickle.loads(pickle.dumps(graph))
        assert h.ids == graph.ids and h.titles == graph.titles and h.edge_type_names == graph.edge_type_names
        assert np.array_equal(h.edge_src, graph.edge_src) and np.array_equal(h.edge_dst, graph.edge_dst)
        assert np.array_equal(h.core.indptr, graph.core.indptr)
        seed = graph.ids[0]
        assert h.personalized_pagerank({seed: 1.0}).to_dict() == graph.personalized_pagerank({seed: 1.0}).to_dict()
        rk = pickle.loads(pickle.dumps(graph.personalized_pagerank({seed: 1.0})))
        assert rk.to_dict() == graph.personalized_pagerank({seed: 1.0}).to_dict()
    h = pickle.loads(pickle.dumps(g))
    assert [graph_context(h, concepts=[c], caller=SCOPED, k=5).to_dict() for c in concepts[:4]] == [
        graph_context(g, concepts=[c], caller=SCOPED, k=5).to_dict() for c in concepts[:4]
    ]


def _equal_on(client, kb):
    """Each distributed batch equals the in-process batch, for a scoped and an all-access caller."""
    from conceptwalk.tools import graph_context_batch, graph_path_batch, link_suggest_batch

    queries, concepts, pairs = _batches(kb)
    shipped = cwd.ship(client, kb)
    for caller in (ALL, SCOPED):
        got = cwd.graph_context_batch(client, shipped, queries, caller=caller, k=5, partitions=3)
        assert [_ctx(r) for r in got] == [_ctx(r) for r in graph_context_batch(kb, queries, caller=caller, k=5)]
        got_s = cwd.link_suggest_batch(client, shipped, concepts, caller=caller, k=4, partitions=3)
        assert _dicts(got_s) == _dicts(link_suggest_batch(kb, concepts, caller=caller, k=4))
        got_p = cwd.graph_path_batch(client, shipped, pairs, caller=caller, partitions=3)
        assert _dicts(got_p) == _dicts(graph_path_batch(kb, pairs, caller=caller))
        assert any(r.results for r in got) and any(r.found for r in got_p)
    assert any(r.suggestions for r in got_s)


@pytest.mark.slow
def test_process_local_cluster_equals_in_process(kb, capfd):
    cluster = distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None, host="127.0.0.1"
    )
    try:
        with distributed.Client(cluster) as c:
            _equal_on(c, kb)
    finally:
        cluster.close()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "CommClosedError" not in err, err


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_command_line_scheduler_and_two_workers(kb, tmp_path):
    import shutil
    import subprocess
    import sys

    dask = shutil.which("dask", path=str(__import__("pathlib").Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the dask command line is not installed")
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    logs = {name: open(tmp_path / f"{name}.log", "w+") for name in ("scheduler", "w1", "w2")}
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0", "--no-show"],
            stdout=logs["scheduler"],
            stderr=subprocess.STDOUT,
        )
    ]
    try:
        for name in ("w1", "w2"):
            procs.append(
                subprocess.Popen(
                    [
                        dask,
                        "worker",
                        addr,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "1",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--name",
                        name,
                    ],
                    stdout=logs[name],
                    stderr=subprocess.STDOUT,
                )
            )
        with distributed.Client(addr, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
            _equal_on(c, kb)
            # the tasks ran in the worker processes, not here
            pids = c.run(__import__("os").getpid)
            assert len(set(pids.values())) == 2 and __import__("os").getpid() not in pids.values()
        # what the processes logged while the work ran (the shutdown below may log a heartbeat
        # that raced the scheduler's close, with its traceback: distributed's own, not ours)
        ran = {name: (tmp_path / f"{name}.log").stat().st_size for name in logs}
    finally:
        # workers first (each closes gracefully on SIGTERM and says so to the scheduler), then the
        # scheduler: the order a clean shutdown needs
        for group in (procs[1:], procs[:1]):
            for p in group:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    for name, fh in logs.items():
        fh.seek(0)
        text = fh.read()
        fh.close()
        during = text[: ran[name]]
        assert "Traceback" not in during and "CommClosedError" not in during, (name, during)


# --------------------------------------------------------------------------- reuse, bound, cleanup (issue 32)
def test_ship_reuses_an_unchanged_store_and_ships_again_after_a_write(client, tmp_path):
    kb = KnowledgeBase.create(tmp_path / "r.db")
    kb.add_nodes([{"id": "a", "title": "alpha"}, {"id": "b", "title": "beta"}])
    kb.add_edges([("a", "b")])
    try:
        first = cwd.ship(client, kb)
        assert cwd.ship(client, kb) is first  # nothing shipped again
        assert cwd.ship(client, kb, with_kb=False) is first  # the store copy is a superset
        kb.add_nodes([{"id": "c", "title": "gamma"}])
        second = cwd.ship(client, kb)
        assert second is not first and second.token != first.token and second.num_nodes == 3
        g = LinkGraph.from_edges([("x", "y")])
        assert cwd.ship(client, g) is cwd.ship(client, g)
        # the same content has the same token (a worker holding it rebuilds nothing)
        assert cwd.ship(client, LinkGraph.from_edges([("x", "y")])).token == cwd.ship(client, g).token
    finally:
        kb.close()


def _worker_dirs(dask_worker=None):
    return cwd.worker_cache_info(dask_worker)["kb_dirs"]


@pytest.mark.slow
def test_process_workers_keep_a_bounded_number_of_store_copies_and_remove_them_on_close(
    kb, tmp_path, monkeypatch, capfd
):
    """Issue 32: every batch shipped the store again and each worker kept every copy
    (cw-worker-kb-* grew with each batch and stayed after the cluster closed)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the spawned worker processes' temporary directory
    store = KnowledgeBase.create(tmp_path / "grow.db")
    store.add_nodes(list(SYN_ROWS[0]))
    store.add_edges(list(SYN_ROWS[1]))

    def copies():
        return sorted(p.name for p in tmp.iterdir() if p.name.startswith("cw-worker-kb-"))

    texts = [q["text"] for q in kb.queries[:4]]
    cluster = distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=2, dashboard_address=None, host="127.0.0.1"
    )
    try:
        with distributed.Client(cluster) as c:
            want = [ConceptAnchoredRetriever(builtin_flat_search(store), store).query(t, 3, caller=ALL) for t in texts]
            for _ in range(4):  # an unchanged store: shipped once, one copy per worker
                assert cwd.query_batch(c, store, texts, 3, caller=ALL, concept_walk=False, partitions=4) == want
            assert 1 <= len(copies()) <= 2, copies()
            builds = c.run(lambda dask_worker: cwd.worker_cache_info(dask_worker)["kb_builds"])
            assert all(n <= 1 for n in builds.values()), builds
            seen = []
            for i in range(6):  # a new state each time: bounded per worker
                store.add_nodes([{"id": f"extra/{i}", "title": f"extra node {i}"}])
                cwd.graph_context_batch(c, store, texts, caller=ALL, k=3, partitions=4)
                seen.append(len(copies()))
                held = c.run(_worker_dirs)
                assert all(len(d) <= cwd.KEEP_SHIPMENTS for d in held.values()), held
            assert max(seen) <= 2 * cwd.KEEP_SHIPMENTS, seen
            assert copies()  # the workers do hold copies while they run
    finally:
        cluster.close()
        store.close()
    assert copies() == []  # removed when the workers closed (the plugin's teardown)
    err = capfd.readouterr().err
    assert "Traceback" not in err, err


def test_suggest_batch_same_default_concepts_in_process_and_on_the_cluster(client, kb):
    """Issue 32: one vocabulary: concepts= optional in both, the same default, a Shipped too."""
    from conceptwalk.tools import link_suggest_batch

    caller = Caller.with_scopes("tenant-a")
    want = [r.to_dict() for r in link_suggest_batch(kb, caller=caller, k=3)]
    assert want and [r.to_dict() for r in cwd.link_suggest_batch(client, kb, caller=caller, k=3)] == want
    shipped = cwd.ship(client, kb)
    assert [r.to_dict() for r in cwd.link_suggest_batch(client, shipped, caller=caller, k=3)] == want
    g = kb.graph()
    assert [r.concept for r in cwd.link_suggest_batch(client, g, caller=caller, node_types=["FILE"], k=3)] == [
        r.concept for r in link_suggest_batch(g, caller=caller, node_types=["FILE"], k=3)
    ]
