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


def _ctx(r):
    d = r.to_dict()
    d.pop("elapsed_ms", None)
    d.pop("elapsedMs", None)
    return json.dumps(d, sort_keys=True, default=str)


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    syn = generate(150, seed=11)
    kb = KnowledgeBase.open(tmp_path_factory.mktemp("dist") / "kb.db")
    kb.add_nodes(syn.node_rows())
    kb.add_edges(syn.edge_rows())
    kb.add_aliases(syn.alias_rows())
    kb.queries = syn.queries()  # type: ignore[attr-defined]
    yield kb
    kb.close()


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
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
    assert [h.node_scopes(i) for i in range(h.num_nodes)] == [g.node_scopes(i) for i in range(g.num_nodes)]
    assert set(h.edge_annotations) == set(g.edge_annotations)
    for key in g.edge_annotations:
        assert [h.edge_annotation(e, key) for e in range(h.num_edges)] == \
               [g.edge_annotation(e, key) for e in range(g.num_edges)]


def test_run_context_equals_in_process_in_order(client, kb):
    g = kb.graph()
    texts = [q["text"] for q in kb.queries[:24]]
    concept_ids = [i for i in g.ids if i.startswith("concept/") and not g.node_scopes(g.index(i))][:6]
    questions = texts + [{"question": None, "concepts": [c]} for c in concept_ids]
    questions += [{"question": texts[0], "concepts": concept_ids[:2]}]
    caller = Caller.public()
    got = cwd.run_context(client, kb, questions, caller=caller, k=8, partitions=5)
    want = [graph_context(kb, q if isinstance(q, str) else q["question"],
                          concepts=[] if isinstance(q, str) else q["concepts"], caller=caller, k=8)
            for q in questions]
    assert len(got) == len(questions)
    assert [_ctx(r) for r in got] == [_ctx(r) for r in want]
    assert any(r.results for r in got)


def test_suggest_all_every_concept(client, kb):
    got = cwd.suggest_all(client, kb, caller=ALL, k=5)
    g = kb.graph()
    concepts = [i for i in g.ids if g.node_type(i) == "CONCEPT"]
    assert list(got) == concepts and len(concepts) > 10
    for c in concepts:
        assert got[c].to_dict() == link_suggest(kb, c, k=5, caller=ALL).to_dict()
    assert any(r.suggestions for r in got.values())


def test_run_queries_wrap_equals_in_process(client, kb):
    texts = [q["text"] for q in kb.queries[:16]]
    got = cwd.run_queries(client, kb, texts, 5, caller=ALL, concept_walk=True, partitions=3)
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    want = [r.query(t, 5, concept_walk=True, caller=ALL) for t in texts]
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert any(h.get("via") == "concept-walk" for res in got for h in res)


def test_graph_shipped_once_and_rebuilt_once_per_worker(client, kb):
    shipped = cwd.ship(client, kb.graph())
    concepts = [i for i in kb.graph().ids][:40]
    qs = [{"concepts": [c]} for c in concepts]
    first = cwd.run_context(client, shipped, qs, caller=ALL, k=3, partitions=8)
    again = cwd.run_context(client, shipped, qs, caller=ALL, k=3, partitions=8)
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
        cwd.run_context(client, g, ["what is a?"], caller=ALL)
    out = cwd.run_context(client, g, [{"concepts": ["a"]}], caller=ALL, k=2)
    assert [r.id for r in out[0].results] == [r.id for r in graph_context(g, concepts=["a"], caller=ALL, k=2).results]
    with pytest.raises(InputError, match="not a single string"):
        cwd.run_context(client, g, "abc", caller=ALL)
