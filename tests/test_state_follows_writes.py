"""What a read derives from the store is brought forward across writes, not derived again (issue
18, item 3: "followed on writes like the text index"), and is exactly what deriving it afresh
gives.

- The concepts' built-in title vectors: after a write, only the concepts whose node changed are
  embedded again (none when only other nodes and edges changed: an agent writing memories); the
  vectors brought forward equal, entry for entry, those of a fresh build of the same rows, over
  random sequences of writes (hypothesis), in a writable and in a read-only process.
- The edge annotation counts are the store's tallies (schema 4), kept by triggers in each write's
  transaction: equal to counting the edges after random writes, after a bulk load, and after the
  upgrade of a schema-3 store.
- The alias index is rebuilt only when the aliases changed.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller
from conceptwalk.graph.vectors import SparseVectors
from conceptwalk.kb.store import ANNOTATION_AXES, SCHEMA_VERSION, KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, _reader, builtin_flat_search
from conceptwalk.wrap.embed import HashingEmbedder

ALL = Caller.all_access()
WORDS = ["graph", "walk", "push", "rank", "memory", "vector", "index", "token", "alpha", "omega"]


def _fill(kb: KnowledgeBase, n: int = 30) -> None:
    kb.add_nodes(
        [
            {"id": f"c{i:02d}", "type": "CONCEPT", "title": f"{WORDS[i % 10]} {WORDS[(3 * i) % 10]} {i}"}
            for i in range(n)
        ]
        + [{"id": f"m{i:02d}", "type": "MEMORY", "title": f"memory {i}"} for i in range(n)]
    )
    kb.add_edges(
        [
            {"src": f"m{i:02d}", "dst": f"c{i:02d}", "type": "MENTIONS", "authority": "a" if i % 3 else None}
            for i in range(n)
        ]
        + [{"src": f"c{i:02d}", "dst": f"c{(i + 1) % n:02d}", "type": "RELATED_TO"} for i in range(n)]
    )


def _columns(kb: KnowledgeBase) -> tuple[np.ndarray, ...]:
    """The concept vectors the wrap reads for the store's current state, as arrays."""
    snap = _reader.StoreReader(kb).read_cache()
    vec = snap.concept_columns(HashingEmbedder(), WalkConfig())
    assert isinstance(vec, SparseVectors)
    return (np.array([vec.n, vec.dim]), *(np.array(a) for a in vec.columns()))


def _fresh_columns(kb: KnowledgeBase, tmp_path, tag: str) -> tuple[np.ndarray, ...]:
    """The same from a fresh store holding the same rows (never brought forward)."""
    fresh = KnowledgeBase.create(tmp_path / f"fresh-{tag}.db")
    g = kb.graph()
    fresh.add_nodes(
        [{"id": i, "type": g.node_type_names[g.node_type_codes[k]], "title": g.titles[k]} for k, i in enumerate(g.ids)]
    )
    try:
        return _columns(fresh)
    finally:
        fresh.close()


class _Counting:
    """Counts the titles HashingEmbedder.embed_csr is asked to embed."""

    def __init__(self, monkeypatch) -> None:
        self.texts: list[str] = []
        real = HashingEmbedder.embed_csr

        def embed_csr(emb, texts):
            self.texts.extend(texts)
            return real(emb, texts)

        monkeypatch.setattr(HashingEmbedder, "embed_csr", embed_csr)


WRITE = st.one_of(
    st.tuples(st.just("retitle"), st.integers(0, 39), st.sampled_from(WORDS)),
    st.tuples(st.just("add_concept"), st.integers(0, 99), st.sampled_from(WORDS)),
    st.tuples(st.just("delete"), st.integers(0, 39), st.just("")),
    st.tuples(st.just("memory"), st.integers(0, 99), st.sampled_from(WORDS)),
    st.tuples(st.just("retype"), st.integers(0, 39), st.just("")),
    st.tuples(st.just("edge"), st.integers(0, 39), st.just("")),
)


def _apply(kb: KnowledgeBase, write: tuple[str, int, str]) -> None:
    kind, i, word = write
    ids = kb.graph().ids
    if kind == "retitle" and ids:
        kb.add_nodes([{"id": ids[i % len(ids)], "title": f"{word} renamed {i}"}])
    elif kind == "add_concept":
        kb.add_nodes([{"id": f"n{i:02d}", "type": "CONCEPT", "title": f"{word} new {i}"}])
    elif kind == "delete" and len(ids) > 2:
        kb.delete_nodes([ids[i % len(ids)]])
    elif kind == "memory":
        kb.add_nodes([{"id": f"turn{i:02d}", "type": "MEMORY", "title": f"turn {i} {word}"}])
        kb.add_edges([{"src": f"turn{i:02d}", "dst": ids[i % len(ids)], "type": "MENTIONS"}])
    elif kind == "retype" and ids:
        node = kb.node(ids[i % len(ids)])
        kb.add_nodes([{"id": node["id"], "type": "MEMORY" if node["type"] == "CONCEPT" else "CONCEPT"}])
    elif kind == "edge" and len(ids) > 1:
        kb.add_edges(
            [{"src": ids[i % len(ids)], "dst": ids[(i + 7) % len(ids)], "type": "RELATED_TO", "fidelity": "x"}]
        )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=st.lists(st.lists(WRITE, min_size=1, max_size=3), min_size=1, max_size=5))
def test_title_vectors_brought_forward_equal_a_fresh_build(tmp_path_factory, writes):
    tmp_path = tmp_path_factory.mktemp("follow")
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    _columns(kb)  # the first position's vectors, built
    for step, batch in enumerate(writes):
        with kb.transaction():
            for w in batch:
                _apply(kb, w)
        got = _columns(kb)
        want = _fresh_columns(kb, tmp_path, str(step))
        assert all(np.array_equal(a, b) for a, b in zip(got, want)), batch
    kb.close()


def test_only_the_changed_concepts_are_embedded_again(tmp_path, monkeypatch):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    ret.query("graph walk", 5, concept_walk=True, caller=ALL)
    counted = _Counting(monkeypatch)
    # an agent's turn: a memory and its edges, no concept touched -> nothing embedded
    kb.add_nodes([{"id": "turn1", "type": "MEMORY", "title": "what the agent saw"}])
    kb.add_edges([{"src": "turn1", "dst": "c03", "type": "MENTIONS"}])
    ret.query("graph walk", 5, concept_walk=True, caller=ALL)
    assert counted.texts == []
    # one concept retitled, one added: those two titles, and only those
    kb.add_nodes([{"id": "c05", "title": "omega renamed"}, {"id": "c99", "type": "CONCEPT", "title": "brand new"}])
    after = ret.query("omega renamed", 5, concept_walk=True, caller=ALL)
    assert sorted(counted.texts) == ["brand new", "omega renamed"]
    assert after == ConceptAnchoredRetriever(builtin_flat_search(kb), kb).query(
        "omega renamed", 5, concept_walk=True, caller=ALL
    )
    kb.close()


def test_a_read_only_reader_brings_them_forward_while_another_connection_writes(tmp_path, monkeypatch):
    path = tmp_path / "kb.db"
    writer = KnowledgeBase.create(path)
    _fill(writer)
    reader = KnowledgeBase.open(path, read_only=True)
    ret = ConceptAnchoredRetriever(builtin_flat_search(reader), reader)
    ret.query("graph walk", 5, concept_walk=True, caller=ALL)
    counted = _Counting(monkeypatch)
    writer.add_nodes([{"id": "c07", "title": "rank renamed"}, {"id": "turn", "type": "MEMORY", "title": "a turn"}])
    got = ret.query("rank renamed", 5, concept_walk=True, caller=ALL)
    assert counted.texts == ["rank renamed"]
    assert all(np.array_equal(a, b) for a, b in zip(_columns(reader), _fresh_columns(reader, tmp_path, "ro")))
    assert got == ConceptAnchoredRetriever(builtin_flat_search(writer), writer).query(
        "rank renamed", 5, concept_walk=True, caller=ALL
    )
    reader.close()
    writer.close()


def test_a_bulk_load_is_not_followed_it_is_built_afresh(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    before = kb.state().graph_version
    _columns(kb)
    kb.delete_nodes(kb.graph().ids)
    with kb.bulk():  # an empty store: a reset in the change log
        kb.add_nodes([{"id": "z", "type": "CONCEPT", "title": "zebra"}])
    assert kb.changed_nodes(before, kb.state().graph_version) is None
    assert all(np.array_equal(a, b) for a, b in zip(_columns(kb), _fresh_columns(kb, tmp_path, "bulk")))
    kb.close()


def test_changed_nodes_reads_the_log_and_refuses_what_it_cannot_tell(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    kb.add_nodes([{"id": "a"}, {"id": "b"}])
    v0 = kb.state().graph_version
    kb.add_nodes([{"id": "a", "title": "retitled"}])
    kb.add_edges([("a", "b")])
    kb.add_nodes([{"id": "b", "body": "only a body"}])
    v1 = kb.state().graph_version
    assert kb.changed_nodes(v0, v1) == ["a"]
    assert kb.changed_nodes(v0, v1, text=True) == ["a", "b"]
    assert kb.changed_nodes(v1, v1) == []
    assert kb.changed_nodes(v1, v0) is None
    assert kb.changed_nodes(-1, v1) is None
    assert kb.changed_nodes(v0, v1 + 5) is None  # positions not in the log
    assert kb.changed_nodes(v0, v1, limit=1) is None
    with kb.transaction():
        kb.add_nodes([{"id": "c"}])
        assert kb.changed_nodes(v0, v1) is None  # inside the store's own write transaction
    kb.close()


# --------------------------------------------------------------------------- tallies


def _counted(path) -> dict[str, int]:
    c = sqlite3.connect(path)
    try:
        return {k: c.execute(f"SELECT count({k}) FROM edges").fetchone()[0] for k in ANNOTATION_AXES}
    finally:
        c.close()


EDGE_WRITE = st.tuples(
    st.sampled_from(["put", "delete", "delete_node", "clear"]),
    st.integers(0, 9),
    st.integers(0, 9),
    st.sampled_from(list(ANNOTATION_AXES)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=st.lists(EDGE_WRITE, min_size=1, max_size=25))
def test_edge_tallies_equal_counting_the_edges(tmp_path_factory, writes):
    path = tmp_path_factory.mktemp("tallies") / "kb.db"
    kb = KnowledgeBase.create(path)
    kb.add_nodes([{"id": f"n{i}"} for i in range(10)])
    for kind, a, b, axis in writes:
        value = 0.5 if axis == "extraction_confidence" else "v"
        if kind == "put":
            kb.add_edges([{"src": f"n{a}", "dst": f"n{b}", "type": "T", axis: value}])
        elif kind == "clear":  # an upsert that sets an axis back to null
            kb.add_edges([{"src": f"n{a}", "dst": f"n{b}", "type": "T", axis: None}])
        elif kind == "delete":
            kb.delete_edges([(f"n{a}", f"n{b}", "T")])
        else:
            kb.delete_nodes([f"n{a}"])
            kb.add_nodes([{"id": f"n{a}"}])
        assert kb.annotation_presence() == _counted(path)
    kb.close()


def test_a_bulk_load_counts_its_edges_at_its_end(tmp_path):
    path = tmp_path / "kb.db"
    kb = KnowledgeBase.create(path)
    with kb.bulk():
        kb.add_edges([{"src": f"a{i}", "dst": f"b{i}", "fidelity": "HIGH" if i % 2 else None} for i in range(50)])
    assert kb.annotation_presence() == _counted(path) == {**{k: 0 for k in ANNOTATION_AXES}, "fidelity": 25}
    kb.add_edges([{"src": "a0", "dst": "b0", "fidelity": "LOW", "lifecycle": "live"}])  # the triggers are back
    assert kb.annotation_presence() == _counted(path)
    kb.close()


def test_a_schema_3_store_is_upgraded_with_its_edges_counted(tmp_path):
    path = tmp_path / "kb.db"
    kb = KnowledgeBase.create(path)
    _fill(kb)
    want = _counted(path)
    kb.close()
    c = sqlite3.connect(path)  # what a schema-3 store is: no tallies table, no triggers
    schema4 = c.execute(
        "SELECT type, name FROM sqlite_master WHERE (type = 'trigger' AND (name LIKE 'tallies_%' "
        "OR name LIKE 'changes_vector_%')) OR (type = 'index' AND name = 'vector_slots_slot')"
    ).fetchall()
    assert len(schema4) > 10
    for kind, name in schema4:
        c.execute(f"DROP {kind.upper()} {name}")
    c.execute("DROP TABLE tallies")
    c.execute("UPDATE meta SET value = 3 WHERE key = 'schema_version'")
    c.execute("PRAGMA user_version = 3")
    c.commit()
    c.close()
    with KnowledgeBase.open(path, read_only=True) as ro:  # cannot upgrade: counts the edges
        assert ro.schema_version == 3 and ro.aliases_version() is None
        assert ro.annotation_presence() == want
        ret = ConceptAnchoredRetriever(builtin_flat_search(ro), ro)
        assert ret.query("graph walk", 5, concept_walk=True, caller=ALL)
    with KnowledgeBase.open(path) as kb:  # upgraded in place, counted once
        assert kb.schema_version == SCHEMA_VERSION
        assert kb.annotation_presence() == want
        kb.add_edges([{"src": "c00", "dst": "c05", "type": "X", "authority": "b"}])
        assert kb.annotation_presence() == _counted(path)


# --------------------------------------------------------------------------- aliases


def test_the_alias_index_is_rebuilt_only_when_the_aliases_change(tmp_path, monkeypatch):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    kb.add_aliases([("pagerank", "c02"), ("the walker", "c01")])
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    ret.query("pagerank", 5, concept_walk=True, caller=ALL)
    built = []
    real = _reader.phrase_index

    def counting(pairs):
        built.append(len(pairs))
        return real(pairs)

    monkeypatch.setattr(_reader, "phrase_index", counting)
    kb.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])  # not an alias write
    ret.query("pagerank", 5, concept_walk=True, caller=ALL)
    assert built == []
    kb.add_aliases([("ranker", "c02")])
    got = ret.query("ranker", 5, concept_walk=True, caller=ALL)
    assert built == [3]
    copy = sqlite3.connect(tmp_path / "copy.db")  # a store object of its own: nothing carried
    kb.backup(copy)
    copy.close()
    with KnowledgeBase.open(tmp_path / "copy.db") as other:
        assert got == ConceptAnchoredRetriever(builtin_flat_search(other), other).query(
            "ranker", 5, concept_walk=True, caller=ALL
        )
    del built[1:]  # the copy built its own index; count only this store's builds from here
    # the carried index is the one built afresh from the store's aliases (and holds the new one)
    carried = _reader.StoreReader(kb).read_cache().alias_index()
    assert carried == real([(a, c) for a, cs in kb.aliases().items() for c in cs])
    assert carried[0]["ranker"] == ["c02"] and built == [3]
    kb.delete_nodes(["c01"])  # deletes its alias too: rebuilt
    ret.query("the walker", 5, concept_walk=True, caller=ALL)
    assert built == [3, 2]
    kb.close()


@pytest.mark.parametrize("inside", [True, False])
def test_nothing_read_inside_a_write_transaction_is_carried(tmp_path, inside):
    """Aliases read inside the store's own write transaction (uncommitted) are not kept for a
    later read: after a rollback the alias is gone."""
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    try:
        with kb.transaction():
            kb.add_aliases([("zebra", "c04")])
            if inside:
                assert _reader.StoreReader(kb).read_cache().aliases() == {"zebra": ["c04"]}
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert _reader.StoreReader(kb).read_cache().aliases() == {}
    kb.close()


# --------------------------------------------------------------------------- stored and model vectors


class ToyModel:
    """A deterministic 'model' embedder (8-d, dense) that counts the texts it is asked to embed
    (tests/test_hostile_follow_writes.py uses it too)."""

    name = "toy-model"
    dim = 8

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, t in enumerate(texts):
            for j, ch in enumerate(t.encode()):
                out[r, (ch + j) % self.dim] += 1.0
            out[r] /= max(float(np.linalg.norm(out[r])), 1.0)
        return out


def _semantic(kb, model, q):
    from conceptwalk.wrap import ConceptResolver

    r = ConceptResolver(kb, WalkConfig(lexical_k=0), embedder=model)
    return [(c.id, c.method, round(c.confidence, 6)) for c in r.resolve(q, caller=ALL)]


@pytest.mark.parametrize("stored", [True, False], ids=["stored vectors", "model-made vectors"])
def test_concept_vectors_of_a_model_follow_writes(tmp_path, monkeypatch, stored):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    model = ToyModel()
    concepts = [i for i in kb.graph().ids if i.startswith("c")]
    if stored:  # the store's own vectors for half the concepts; the model makes the rest
        kb.set_embeddings(model.name, concepts[::2], model.embed([f"stored {c}" for c in concepts[::2]]))
    reads = []
    real_get = KnowledgeBase.get_embeddings
    real_read = KnowledgeBase.read_embeddings  # (get_embeddings reads through it too)

    def counting_read(self, name, ids=None, **kw):
        reads.append(name)
        return real_read(self, name, ids, **kw)

    monkeypatch.setattr(KnowledgeBase, "read_embeddings", counting_read)
    first = _semantic(kb, model, "graph walk")
    model.texts.clear()
    reads.clear()
    # an agent's turn: a memory, its edge and (stored) its embedding; no concept touched
    kb.add_nodes([{"id": "turn1", "type": "MEMORY", "title": "a turn"}])
    kb.add_edges([{"src": "turn1", "dst": "c02", "type": "MENTIONS"}])
    if stored:
        kb.set_embeddings(model.name, ["turn1"], model.embed(["a turn"]))
        model.texts.clear()
    assert _semantic(kb, model, "graph walk") == first
    assert model.texts == ["graph walk"] and reads == []  # the query only; nothing read back
    # one concept retitled: only it is embedded again (when the model made its vector)
    kb.add_nodes([{"id": "c03", "title": "omega vector renamed"}])
    model.texts.clear()
    got = _semantic(kb, model, "omega vector renamed")
    assert sorted(model.texts) == ["omega vector renamed"] * 2  # the query and c03 (not stored)
    fresh_model = ToyModel()
    fresh = KnowledgeBase.create(tmp_path / "fresh.db")
    g = kb.graph()
    fresh.add_nodes(
        [{"id": i, "type": g.node_type_names[g.node_type_codes[k]], "title": g.titles[k]} for k, i in enumerate(g.ids)]
    )
    if stored:
        ids, mat = real_get(kb, model.name)
        fresh.set_embeddings(model.name, ids, mat)
    assert got == _semantic(fresh, fresh_model, "omega vector renamed")
    # a stored vector written: read again
    if stored:
        reads.clear()
        kb.set_embeddings(model.name, ["c00"], model.embed(["moved"]))
        after = _semantic(kb, model, "moved")
        assert reads and after == _semantic(
            _copy_with(fresh, model.name, ["c00"], model.embed(["moved"])), ToyModel(), "moved"
        )
    fresh.close()
    kb.close()


def _copy_with(kb, name, ids, mat):
    kb.set_embeddings(name, ids, mat)
    return kb


def test_the_change_log_names_exactly_the_vectors_written(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    kb.add_nodes([{"id": f"n{i:02d}"} for i in range(30)])
    kb.VECTOR_CHUNK_BYTES = 4 * 2 * 8  # 8 two-dimensional vectors per chunk: many share one
    rng = np.random.default_rng(0)
    mat = rng.standard_normal((30, 2)).astype(np.float32)
    kb.set_embeddings("m", [f"n{i:02d}" for i in range(30)], mat)
    g, ix = kb.graph(), kb.text_index()

    def written(fn):
        v0 = kb.state().graph_version
        fn()
        v1 = kb.state().graph_version
        return kb.changed_nodes(v0, v1, vectors="m"), kb.changed_nodes(v0, v1)

    # the same values again: nothing changed; a new id in a shared chunk: only it
    assert written(lambda: kb.set_embeddings("m", ["n03"], mat[3:4])) == ([], [])
    kb.add_nodes([{"id": "x"}])
    assert written(lambda: kb.set_embeddings("m", ["x"], [[1.0, 2.0]])) == (["x"], [])
    assert written(lambda: kb.set_embeddings("m", ["n09", "n01"], [[5.0, 5.0], mat[1]])) == (["n09"], [])
    assert written(lambda: kb.set_embeddings("other", ["n09"], [[1.0]])) == ([], [])  # another model
    assert written(lambda: kb.delete_nodes(["n04"]))[0] == ["n04"]
    replaced = written(lambda: kb.set_embeddings("m", ["n00"], [[1.0, 1.0, 1.0]], replace=True))[0]
    assert len(replaced) == 30  # every vector of the model was deleted, n00 written
    assert kb.graph().num_nodes == 30  # 30 + x - n04
    kb.close()
    # an embedding-only write leaves the graph and the text index as they are
    kb = KnowledgeBase.create(tmp_path / "kb2.db")
    kb.add_nodes([{"id": "a", "title": "alpha"}, {"id": "b"}])
    g, ix = kb.graph(), kb.text_index()
    kb.set_embeddings("m", ["a"], [[1.0, 0.0]])
    assert kb.graph() is g and kb.text_index() is ix
    kb.close()


# --------------------------------------------------------------------------- the fallback's name index


def _names_afresh(kb: KnowledgeBase, cfg: WalkConfig, build) -> dict[str, list[str]]:
    g = kb.graph()
    idx = _reader._concept_rows(g, cfg.concept_node_types)
    index, _ = build([p for i in idx.tolist() for p in _reader.name_phrases(g.ids[i], g.titles[i])])
    return {k: sorted(v) for k, v in index.items()}


_NAME_OPS = st.lists(
    st.tuples(
        st.sampled_from(["rename", "new", "delete", "retype", "memory", "tail"]),
        st.integers(0, 29),
        st.sampled_from(WORDS),
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_NAME_OPS)
def test_the_fallbacks_name_index_brought_forward_equals_a_fresh_build(tmp_path_factory, ops):
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("names") / "kb.db")
    _fill(kb)
    cfg = WalkConfig(concept_node_types=("CONCEPT",))
    _reader.StoreReader(kb).read_cache().name_index(cfg)  # built once; brought forward from here
    built = []
    real = _reader.phrase_index

    def counting(pairs):
        built.append(len(pairs))
        return real(pairs)

    _reader.phrase_index = counting
    try:
        for n, (op, i, word) in enumerate(ops):
            c = f"c{i:02d}"
            if op == "rename" and kb.node(c) is not None:
                kb.add_nodes([{"id": c, "title": f"{word} {n}"}])
            elif op == "new":
                kb.add_nodes([{"id": f"x{n}", "type": "CONCEPT", "title": f"{word} shared"}])
            elif op == "delete" and kb.node(c) is not None:
                kb.delete_nodes([c])
            elif op == "retype" and kb.node(c) is not None:
                kb.add_nodes([{"id": c, "type": "MEMORY"}])
            elif op == "memory":
                kb.add_nodes([{"id": f"m{n}x", "type": "MEMORY", "title": f"{word} memory"}])
            elif op == "tail":
                kb.add_nodes([{"id": f"ns:{word}/{n}", "type": "CONCEPT", "title": None}])
            index, longest = _reader.StoreReader(kb).read_cache().name_index(cfg)
            want = _names_afresh(kb, cfg, real)
            assert {k: sorted(v) for k, v in index.items()} == want
            assert longest >= max([k.count(" ") + 1 for k in want] or [0])
        # only the changed concept's phrases were normalised again (one node per write: its title,
        # id and two id tails at most), never every title (60 pairs)
        assert all(b <= 4 for b in built), built
    finally:
        _reader.phrase_index = real
    kb.close()


def test_a_fallback_resolution_after_writes_equals_a_fresh_store(tmp_path):
    from conceptwalk.wrap import ConceptResolver

    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    cfg = WalkConfig(lexical_k=0, semantic_k=0)  # only the normalize-only fallback resolves
    r = ConceptResolver(kb, cfg)
    first = r.resolve("about walk rank 1 and more", caller=ALL)
    assert first and all(c.method == "normalized" for c in first)
    kb.add_nodes([{"id": "c01", "title": "brand new name"}, {"id": "c05", "type": "MEMORY"}])
    kb.add_nodes([{"id": "z:zeta", "type": "CONCEPT"}])
    q = "brand new name walk rank 1 zeta c05"
    got = [(c.id, c.method, c.matched) for c in r.resolve(q, caller=ALL)]
    dst = sqlite3.connect(tmp_path / "copy.db")
    kb.backup(dst)
    dst.close()
    with KnowledgeBase.open(tmp_path / "copy.db") as other:
        want = [(c.id, c.method, c.matched) for c in ConceptResolver(other, cfg).resolve(q, caller=ALL)]
    assert got == want and ("c01", "normalized", "brand new name") in got and any(x[0] == "z:zeta" for x in got)
    assert not any(x[0] == "c05" for x in got)  # no longer a concept
    kb.close()


def test_an_alias_write_is_logged_and_changes_no_graph_text_or_node(tmp_path):
    """Kind 5: an alias write has a change-log position (and so a nonce) of its own, and the graph,
    the text index and changed_nodes read through it as through nothing."""
    from conceptwalk.kb.snapshot import CHANGE_ALIAS

    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    st = kb.state()
    kb.add_aliases([("pagerank", "c02"), ("walker", "c01")])
    kb.add_aliases([("pagerank", "c02")])  # already there: nothing written, nothing logged
    kb.delete_nodes(["c01"])  # its alias goes with it (logged too)
    st2 = kb.state()
    with kb._read() as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM changes WHERE seq > ?", (st.graph_version,))]
    # one row per write transaction that changed aliases (the second wrote none)
    assert kinds.count(CHANGE_ALIAS) == 2 and st2.graph_version == st.graph_version + len(kinds)
    assert kb.changed_nodes(st.graph_version, st2.graph_version) == ["c01"]
    kb.add_aliases([(f"many {i}", "c03") for i in range(50)])  # one log row for all of them
    with kb._read() as conn:
        assert conn.execute("SELECT count(*) FROM changes WHERE seq > ?", (st2.graph_version,)).fetchone()[0] == 1
    st3 = kb.state()
    assert st3.graph is st2.graph and st3.text_index is st2.text_index  # brought through it unchanged
    assert kb.changed_nodes(st2.graph_version, st3.graph_version) == []
    # a bulk load logs one reset for everything, aliases included
    other = KnowledgeBase.create(tmp_path / "bulk.db")
    with other.bulk():
        other.add_nodes([{"id": f"n{i}"} for i in range(5)])
        other.add_aliases([(f"a{i}", f"n{i}") for i in range(5)])
    with other._read() as conn:
        assert [k for (k,) in conn.execute("SELECT kind FROM changes")] == [0]
    assert sorted(other.aliases()) == [f"a{i}" for i in range(5)]
    other.add_aliases([("late", "n0")])
    with other._read() as conn:
        assert [k for (k,) in conn.execute("SELECT kind FROM changes")] == [0, CHANGE_ALIAS]  # triggers back
    other.close()
    kb.close()
