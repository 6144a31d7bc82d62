"""A model's stored concept vectors belong to the store's state (issue 18, item 3): kept with the
snapshot file and mapped by the next process instead of read back from the vector tables, brought
to a later position while no concept row changed, and always equal to what reading them afresh
gives (the fresh oracle: the same committed rows copied to a new file, nothing carried or mapped).
"""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptResolver, WalkConfig, _reader
from test_hostile_follow_writes import _fresh

ALL = Caller.all_access()
WORDS = ["graph", "walk", "push", "rank", "memory", "vector", "index", "token", "alpha", "omega"]


class Model:
    """A dense stand-in for a sentence model: 16-d unit rows from the text's bytes."""

    name = "toy-dense-16"
    dim = 16

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, t in enumerate(texts):
            for j, ch in enumerate(t.encode()):
                out[r, (ch * 7 + j) % self.dim] += 1.0 + (j % 3)
            out[r] /= max(float(np.linalg.norm(out[r])), 1.0)
        return out


def _fill(kb: KnowledgeBase, n: int = 24) -> list[str]:
    concepts = [f"c{i:02d}" for i in range(n)]
    kb.add_nodes(
        [
            {"id": c, "type": "CONCEPT", "title": f"{WORDS[i % 10]} {WORDS[(3 * i) % 10]} {i}"}
            for i, c in enumerate(concepts)
        ]
        + [{"id": f"m{i:02d}", "type": "MEMORY", "title": f"memory {i}"} for i in range(n)]
    )
    kb.add_edges([{"src": f"m{i:02d}", "dst": c, "type": "MENTIONS"} for i, c in enumerate(concepts)])
    g = kb.graph()
    kb.set_embeddings(Model.name, concepts, Model().embed([g.titles[g.index(c)] for c in concepts]))
    return concepts


def _semantic(kb: KnowledgeBase, q: str) -> list:
    r = ConceptResolver(kb, WalkConfig(lexical_k=0), embedder=Model())
    return [(c.id, c.method, round(c.confidence, 6)) for c in r.resolve(q, caller=ALL)]


@pytest.fixture
def reads(monkeypatch):
    """The model names whose vectors are read back from the store's vector tables (every vector
    of the model; ``(name, n)`` for ``n`` given ids)."""
    got: list = []
    real = KnowledgeBase.read_embeddings  # (get_embeddings reads through it too)

    def counting(self, name, ids=None, **kw):
        got.append(name if ids is None else (name, len(ids)))
        return real(self, name, ids, **kw)

    monkeypatch.setattr(KnowledgeBase, "read_embeddings", counting)
    return got


def _stored_names(kb: KnowledgeBase) -> list[str]:
    return [n for n in kb._keeper.derived_names if n.startswith("wrap.stored.")]


def test_a_fresh_process_maps_them_from_the_snapshot_file(tmp_path, reads):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    first = _semantic(w, "graph walk 0")
    assert reads == [Model.name] and len(_stored_names(w)) == 1  # read once, kept with the state
    w.close()
    reads.clear()
    r = KnowledgeBase.open_read_only(path)
    r.graph()  # (the snapshot file is read on the first read)
    assert len(_stored_names(r)) == 1  # read from the snapshot file
    assert _semantic(r, "graph walk 0") == first
    assert reads == []  # nothing read back from the vector tables
    m = _reader.StoreReader(r).read_cache().concept_embeddings(Model(), WalkConfig())
    assert not m.flags.writeable
    oracle = _fresh(r, tmp_path, "a")
    assert _semantic(oracle, "graph walk 0") == first
    r.close()
    oracle.close()


def test_an_agents_turn_brings_them_forward_and_a_concept_vector_write_reads_them_again(tmp_path, reads):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    concepts = _fill(w)
    _semantic(w, "graph walk 0")
    w.close()  # (saves the snapshot file, the matrix with it)
    w = KnowledgeBase.open(path)
    w.graph()
    file_at = w._keeper.file_version
    assert len(_stored_names(w)) == 1
    # an agent's turns: a memory, its edge and its embedding (no concept row changes)
    for t in range(3):
        w.add_nodes([{"id": f"turn{t}", "type": "MEMORY", "title": f"turn {t}"}])
        w.add_edges([{"src": f"turn{t}", "dst": concepts[t], "type": "MENTIONS"}])
        w.set_embeddings(Model.name, [f"turn{t}"], Model().embed([f"turn {t}"]))
    reads.clear()
    r = KnowledgeBase.open_read_only(path)  # the file is behind the store: brought forward
    assert r.graph() is not None and r._keeper.file_version == file_at < r.state().graph_version
    got = _semantic(r, "push rank 2")
    assert reads == []
    oracle = _fresh(w, tmp_path, "b")
    assert got == _semantic(oracle, "push rank 2")
    # a concept's stored vector rewritten: only its row is read again, and the answer follows
    w.set_embeddings(Model.name, ["c02"], Model().embed(["alpha omega moved"]))
    reads.clear()
    got = _semantic(r, "alpha omega moved")
    assert reads == [(Model.name, 1)] and got[0][0] == "c02"
    oracle2 = _fresh(w, tmp_path, "c")
    assert got == _semantic(oracle2, "alpha omega moved")
    for kb in (w, r, oracle, oracle2):
        kb.close()


def test_a_concept_without_a_stored_vector_is_never_kept(tmp_path, reads):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.add_nodes([{"id": "c99", "type": "CONCEPT", "title": "made by the model"}])  # no stored vector
    got = _semantic(w, "made by the model")
    assert _stored_names(w) == []  # a vector the model made in this process is not the store's
    oracle = _fresh(w, tmp_path, "d")
    assert got == _semantic(oracle, "made by the model")
    w.close()
    oracle.close()


@pytest.mark.parametrize(
    "bad",
    [
        {"shape": np.array([3, 16])},
        {"concepts": np.arange(24, dtype=np.int32)},
        {"concepts": np.arange(1, 25, dtype=np.int64)},
        {"matrix": np.zeros(24 * 16, dtype=np.float64)},
        {"matrix": np.zeros(24 * 15, dtype=np.float32)},
        {"extra": np.zeros(1)},
    ],
    ids=["shape", "concepts-dtype", "concepts-other", "matrix-dtype", "matrix-size", "extra-part"],
)
def test_kept_parts_that_do_not_fit_are_not_used(tmp_path, reads, bad):
    w = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(w)
    first = _semantic(w, "graph walk 0")
    cache = _reader.StoreReader(w).read_cache()
    cfg, model = WalkConfig(), Model()
    name = cache._matrix_name(model, cfg)
    parts = dict(w.derived_arrays(name, cache.graph_version))
    parts.update(bad)
    w._keeper._derived[name] = parts  # what a forged file's consistent arrays would hold
    assert _reader._matrix_from_parts(parts, cache.concept_indices(cfg), model.dim) is None
    reads.clear()
    w.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])  # a new state reads them again
    _reader._CARRY.pop(w, None)  # (and nothing carried in memory)
    assert _semantic(w, "graph walk 0") == first
    assert reads == [Model.name]  # every vector: the kept parts are not used
    w.close()


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 23)),
        st.tuples(st.just("vector"), st.integers(0, 23)),
        st.tuples(st.just("rename"), st.integers(0, 23)),
        st.tuples(st.just("new"), st.integers(0, 5)),
        st.tuples(st.just("delete"), st.integers(0, 23)),
        st.tuples(st.just("reopen"), st.just(0)),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_what_is_kept_equals_reading_afresh_after_any_writes(tmp_path_factory, ops):
    tmp = tmp_path_factory.mktemp("ops")
    path = tmp / "kb.db"
    w = KnowledgeBase.create(path)
    w.SNAPSHOT_SAVE_EVERY = 2  # saves often: files at many positions
    _fill(w)
    r = KnowledgeBase.open_read_only(path)
    model = Model()
    for n, (op, i) in enumerate(ops):
        c = f"c{i:02d}"
        if op == "turn":
            w.add_nodes([{"id": f"t{n}", "type": "MEMORY", "title": f"turn {n}"}])
            w.set_embeddings(model.name, [f"t{n}"], model.embed([f"turn {n}"]))
        elif op == "vector" and w.node(c) is not None:
            w.set_embeddings(model.name, [c], model.embed([f"moved {n}"]))
        elif op == "rename" and w.node(c) is not None:
            w.add_nodes([{"id": c, "title": f"renamed {n}"}])  # the stored vector stays
        elif op == "new":
            w.add_nodes([{"id": f"n{i}", "type": "CONCEPT", "title": f"new {i}"}])
            w.set_embeddings(model.name, [f"n{i}"], model.embed([f"new {i}"]))
        elif op == "delete" and w.node(c) is not None:
            w.delete_nodes([c])
        elif op == "reopen":
            r.close()
            r = KnowledgeBase.open_read_only(path)
        q = f"moved {n}" if op == "vector" else "graph walk 0"
        oracle = _fresh(w, tmp, f"{n}")
        want = _semantic(oracle, q)
        assert _semantic(w, q) == want
        assert _semantic(r, q) == want
        oracle.close()
    w.close()
    r.close()


def test_a_write_of_concept_vectors_reads_those_rows_only(tmp_path, reads):
    w = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(w)
    _semantic(w, "graph walk 0")
    model = Model()
    steps = [
        (lambda: w.set_embeddings(model.name, ["c03", "c07"], model.embed(["x one", "x two"])), [(model.name, 2)]),
        (lambda: w.add_nodes([{"id": "c05", "title": "retitled"}]), [(model.name, 1)]),  # its stored vector stays
        # a concept replaced by another at the same row: c08 deleted, c08a added after it
        (
            lambda: (
                w.delete_nodes(["c08"]),
                w.add_nodes([{"id": "c08a", "type": "CONCEPT", "title": "replacement"}]),
                w.set_embeddings(model.name, ["c08a"], model.embed(["replacement"])),
            ),
            [(model.name, 1)],
        ),
        # one concept removed and another added elsewhere: the rows between move, the new one is read
        (
            lambda: (
                w.delete_nodes(["c02"]),
                w.add_nodes([{"id": "c15a", "type": "CONCEPT", "title": "elsewhere"}]),
                w.set_embeddings(model.name, ["c15a"], model.embed(["elsewhere"])),
            ),
            [(model.name, 1)],
        ),
        # a concept added without a replacement: the rows after it move, the new one is read
        (
            lambda: (
                w.add_nodes([{"id": "c00a", "type": "CONCEPT", "title": "added"}]),
                w.set_embeddings(model.name, ["c00a"], model.embed(["added"])),
            ),
            [(model.name, 1)],
        ),
        # a concept added with no stored vector: looked up, then embedded by the model
        (lambda: w.add_nodes([{"id": "c00b", "type": "CONCEPT", "title": "made here"}]), [(model.name, 1)]),
        # a concept removed: nothing to read
        (lambda: w.delete_nodes(["c04"]), []),
        # the made concept gets a stored vector, and a memory is written: its row is read
        (
            lambda: (
                w.set_embeddings(model.name, ["c00b"], model.embed(["made here, now stored"])),
                w.add_nodes([{"id": "m1", "type": "MEMORY", "title": "a memory"}]),
            ),
            [(model.name, 1)],
        ),
    ]
    for n, (write, want_reads) in enumerate(steps):
        write()
        reads.clear()
        got = _semantic(w, "x one")
        assert reads == want_reads, n
        oracle = _fresh(w, tmp_path, f"p{n}")
        assert got == _semantic(oracle, "x one")
        assert np.array_equal(
            _reader.StoreReader(w).read_cache().concept_embeddings(model, WalkConfig()),
            _reader.StoreReader(oracle).read_cache().concept_embeddings(model, WalkConfig()),
        )
        oracle.close()
    w.close()


def test_a_concept_write_recodes_the_changed_rows_of_the_dense_index_only(tmp_path, monkeypatch):
    """The dense index of the concept vectors is brought forward, not coded again whole, across
    concept writes of every kind: as its base plus the changed rows (``DenseDelta``, issue 31),
    or, with the delta's limit at 0, folded at once (``DenseVectors.updated``: only the changed
    rows coded); the answers are the fresh oracle's."""
    from conceptwalk.graph.vectors import DenseDelta, DenseVectors

    for limit in (None, 0):
        _recode_case(tmp_path / f"limit-{limit}", monkeypatch, limit, DenseVectors, DenseDelta)


def _recode_case(tmp_path, monkeypatch, limit, DenseVectors, DenseDelta):
    tmp_path.mkdir()
    if limit is not None:
        monkeypatch.setattr(_reader, "_delta_limit", lambda n: limit)

    made = {"fresh": 0, "updated": 0}
    real_init, real_updated = DenseVectors.__init__, DenseVectors.updated

    def init(self, matrix):
        made["fresh"] += 1
        real_init(self, matrix)

    def updated(self, matrix, base_rows):
        made["updated"] += 1
        return real_updated(self, matrix, base_rows)

    monkeypatch.setattr(DenseVectors, "__init__", init)
    monkeypatch.setattr(DenseVectors, "updated", updated)
    w = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(w)
    _semantic(w, "graph walk 0")
    assert made == {"fresh": 1, "updated": 0}
    model = Model()
    writes = [
        lambda: w.set_embeddings(model.name, ["c03"], model.embed(["x one"])),
        lambda: w.add_nodes([{"id": "c00a", "type": "CONCEPT", "title": "x one added"}]),  # no stored vector
        lambda: w.delete_nodes(["c05"]),
        lambda: w.add_nodes([{"id": "c07", "title": "x one renamed"}]),
        lambda: w.add_nodes([{"id": "m99", "type": "MEMORY", "title": "a memory"}]),  # no concept row changes
    ]
    for n, write in enumerate(writes):
        write()
        before = dict(made)
        got = _semantic(w, "x one")
        assert made["fresh"] == before["fresh"], n
        # (the last write changes no concept row); with a delta nothing is coded or copied
        assert made["updated"] == before["updated"] + (n < 4 and limit == 0), n
        cols = _reader.StoreReader(w).read_cache().concept_columns(model, WalkConfig(lexical_k=0))
        assert isinstance(cols, DenseDelta if limit is None else DenseVectors), n
        oracle = _fresh(w, tmp_path, f"u{n}")
        assert got == _semantic(oracle, "x one"), n
        oracle.close()
    w.close()
    monkeypatch.undo()


@pytest.mark.parametrize("n", [0, 1, 5, 300])
def test_rows_are_copied_run_by_run_as_a_gather_would(n):
    """``_copy_rows`` (the patch's slice copies) against the plain gather, for pairings in
    order with gaps (what a write gives) and for any pairing at all."""
    rng = np.random.default_rng(n)
    src = rng.standard_normal((n, 3)).astype(np.float32)
    for trial in range(150):
        m = int(rng.integers(0, n + 6))
        if trial % 3 == 0 or n == 0:
            src_rows = rng.integers(-1, n, m) if n else np.full(m, -1)
        else:
            src_rows = np.full(m, -1, dtype=np.int64)
            k = min(m, n)
            src_rows[np.sort(rng.choice(m, size=k, replace=False))] = np.sort(rng.choice(n, size=k, replace=False))
        out = np.full((m, 3), 7.0, dtype=np.float32)
        _reader._copy_rows(out, src, np.asarray(src_rows, dtype=np.int64))
        want = np.full((m, 3), 7.0, dtype=np.float32)
        ok = src_rows >= 0
        want[ok] = src[src_rows[ok]]
        assert np.array_equal(out, want), trial


@pytest.mark.parametrize("whole", [True, False], ids=["every-vector", "by-id"])
def test_vectors_another_client_writes_after_the_state_are_never_kept_as_its_own(tmp_path, whole):
    """The state's position is read in one transaction, its stored vectors later in another: a
    vector another client writes in between is not the state's, so the matrix holding it is not
    kept for the state's position (a backup of that position restored later would otherwise map
    the newer vector from the snapshot file)."""
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    concepts = _fill(w)
    model, cfg = Model(), WalkConfig(lexical_k=0)
    r = KnowledgeBase.open(path)  # another client of the same file
    if not whole:  # r's last matrix is an earlier position's: the patch looks the new rows up by id
        _semantic(r, "graph walk 0")
        w.add_nodes([{"id": "c03", "title": "renamed at the state"}])
    state_cache = _reader.StoreReader(r).read_cache()  # the state: its position read now
    gv = state_cache.graph_version
    backup = tmp_path / "backup.db"
    with w._read() as conn:  # a backup of the store at the state's position
        dst = __import__("sqlite3").connect(backup)
        conn.backup(dst)
        dst.close()
    w.set_embeddings(model.name, ["c03"], model.embed(["written after the state"]))  # in between
    mat = state_cache.concept_embeddings(model, cfg)  # read at the later position
    row = list(state_cache.concept_indices(cfg)).index(r.graph().index("c03"))
    assert np.array_equal(mat[row], model.embed(["written after the state"])[0])  # what there was to read
    name = state_cache._matrix_name(model, cfg)
    kept = r.derived_arrays(name, gv, history=state_cache.state.history)
    if kept is not None:  # (kept only when it is the position's own)
        at_gv = KnowledgeBase.open(backup)
        ids, vecs = at_gv.get_embeddings(model.name, concepts)
        assert np.array_equal(_reader._matrix_from_parts(kept, state_cache.concept_indices(cfg), model.dim), vecs)
        at_gv.close()
    # the next state (at the write) reads that row again and keeps the matrix as its own
    assert _semantic(r, "written after the state")[0][0] == "c03"
    later = _reader.StoreReader(r).read_cache()
    assert later.graph_version > gv
    # (the query's dense index may be the last one plus a delta, which makes no matrix: the
    # matrix, when read, is kept as the position's own)
    later.concept_embeddings(model, cfg)
    assert r.derived_arrays(name, later.graph_version, history=later.state.history) is not None
    oracle = _fresh(w, tmp_path, "race")
    assert _semantic(r, "written after the state") == _semantic(oracle, "written after the state")
    for kb in (w, r, oracle):
        kb.close()


def test_read_embeddings_dates_the_read(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    concepts = _fill(kb)
    got = kb.read_embeddings(Model.name)
    assert got.ids == concepts and got.graph_version == kb.state().graph_version
    assert got.history == kb.state().history
    some = kb.read_embeddings(Model.name, ["m01", "c05", "nope", "c01"], skip_missing=True)
    assert some.ids == ["c05", "c01"]
    assert np.array_equal(some.matrix, kb.get_embeddings(Model.name, ["c05", "c01"])[1])
    with pytest.raises(Exception, match="nope"):
        kb.read_embeddings(Model.name, ["c01", "nope"])
    assert kb.read_embeddings(Model.name, ["nope"], skip_missing=True).matrix.shape == (0, 0)
    with kb.transaction():  # its own uncommitted rows: no committed position to date them by
        kb.set_embeddings(Model.name, ["c01"], Model().embed(["inside"]))
        assert kb.read_embeddings(Model.name, ["c01"]).graph_version is None
    kb.close()
