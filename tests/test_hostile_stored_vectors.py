"""Hostile review of the stored concept vectors kept with the snapshot file (f04f3c2, 9aea69c) and
of DenseVectors' branch-free int8 coding (5f563f6): every answer must equal the fresh oracle's
(the same committed rows copied to a new file, no snapshot file, nothing carried).

Found, and fixed with the tests below: the carried matrix paired an older state's position with
the embeddings counter read later, so the next position skipped the vector changes and the stale
matrix was kept with the snapshot file (every later process served it); the writer held the
matrix twice (a writable one is copied when kept) and copied it every turn; the cache key left out
the model's dim (a same-named model of another dim got the cached matrix)."""

from __future__ import annotations

import os
import sys
import shutil
import sqlite3

import numpy as np
import pytest

from conceptwalk import Caller
from conceptwalk.errors import ConceptwalkError
from conceptwalk.graph.vectors import DenseVectors
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptResolver, WalkConfig, _reader
from test_hostile_follow_writes import _fresh
from test_stored_vectors_snapshot import Model, _fill, _stored_names
from test_vector_topk import _bits, reference

ALL = Caller.all_access()


class Model8:
    """Another model: 8-d rows (a different name)."""

    name = "toy-dense-8"
    dim = 8

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, t in enumerate(texts):
            for j, ch in enumerate(t.encode()):
                out[r, (ch * 5 + 3 * j) % self.dim] += 1.0 + (j % 2)
            out[r] /= max(float(np.linalg.norm(out[r])), 1.0)
        return out


class SameNameDim8(Model8):
    """The 16-d model's name at dim 8 (its vectors rewritten at another dim)."""

    name = Model.name


def _answer(kb, q, model, cfg=None, annotations=True):
    """What a resolver answers (or the error it raises), and the matrix the reader uses."""
    cfg = cfg or WalkConfig(lexical_k=0)
    try:
        r = ConceptResolver(kb, cfg, embedder=model)
        got = [(c.id, c.method, round(c.confidence, 6)) for c in r.resolve(q, caller=ALL)]
    except ConceptwalkError as exc:
        got = type(exc).__name__
    try:
        m = _reader.StoreReader(kb, annotations=annotations).read_cache().concept_embeddings(model, cfg)
        m = np.array(m)
    except ConceptwalkError as exc:
        m = type(exc).__name__
    return got, m


def _same(a, b):
    assert a[0] == b[0]
    if isinstance(a[1], str) or isinstance(b[1], str):
        assert a[1] == b[1]
    else:
        assert a[1].shape == b[1].shape and a[1].tobytes() == b[1].tobytes()


def _check(kbs, tmp_path, tag, q, model, cfg=None):
    oracle = _fresh(kbs[0], tmp_path, tag)
    want = _answer(oracle, q, model, cfg)
    for kb in kbs:
        _same(_answer(kb, q, model, cfg), want)
    oracle.close()
    return want


def test_two_models_in_one_store_each_follow_their_own_vectors(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    concepts = _fill(w)
    g = w.graph()
    w.set_embeddings(Model8.name, concepts, Model8().embed([g.titles[g.index(c)] for c in concepts]))
    a, b = Model(), Model8()
    _check([w], tmp_path, "a0", "graph walk 0", a)
    _check([w], tmp_path, "b0", "graph walk 0", b)
    w.close()
    w = KnowledgeBase.open(path)
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a1", "graph walk 0", a)
    _check([w, r], tmp_path, "b1", "graph walk 0", b)
    # one model's vector of c04 written: the other's must not move, this one's must
    w.set_embeddings(b.name, ["c04"], b.embed(["omega omega"]))
    _check([w, r], tmp_path, "a2", "omega omega", a)
    _check([w, r], tmp_path, "b2", "omega omega", b)
    w.set_embeddings(a.name, ["c05"], a.embed(["alpha alpha"]))
    _check([w, r], tmp_path, "a3", "alpha alpha", a)
    _check([w, r], tmp_path, "b3", "alpha alpha", b)
    w.close()
    r.close()


def test_a_models_vectors_rewritten_at_another_dim(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    concepts = _fill(w)
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a", "graph walk 0", Model())
    w.close()
    w = KnowledgeBase.open(path)
    g = w.graph()
    m8 = SameNameDim8()
    w.set_embeddings(m8.name, concepts, m8.embed([g.titles[g.index(c)] for c in concepts]), replace=True)
    _check([w, r], tmp_path, "b", "graph walk 0", m8)
    w.close()
    r.close()
    r = KnowledgeBase.open_read_only(path)
    _check([r], tmp_path, "d", "graph walk 0", m8)
    r.close()


def test_a_same_named_model_of_the_old_dim_asked_after_the_new_one(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    concepts = _fill(w)
    g = w.graph()
    m8 = SameNameDim8()
    w.set_embeddings(m8.name, concepts, m8.embed([g.titles[g.index(c)] for c in concepts]), replace=True)
    _check([w], tmp_path, "a", "graph walk 0", m8)
    _check([w], tmp_path, "b", "graph walk 0", Model())  # the old dim: an error, as fresh
    w.close()


def test_vectors_deleted_by_hand_written_sql(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a", "graph walk 3", Model())
    w.close()
    w = KnowledgeBase.open(path)
    _check([w, r], tmp_path, "b", "graph walk 3", Model())
    con = sqlite3.connect(path)
    with con:
        con.execute("DELETE FROM vector_slots WHERE model = ? AND node_id = 'c03'", (Model.name,))
    con.close()
    _check([w, r], tmp_path, "c", "graph walk 3", Model())
    w.delete_nodes(["c07"])
    _check([w, r], tmp_path, "d", "graph walk 3", Model())
    w.close()
    r.close()


@pytest.mark.parametrize(
    "sql",
    [
        # two concepts' slots swapped (each now reads the other's vector)
        "UPDATE vector_slots SET slot = CASE node_id WHEN 'c03' THEN (SELECT slot FROM vector_slots "
        "WHERE model = 'toy-dense-16' AND node_id = 'c04') ELSE (SELECT slot FROM vector_slots WHERE "
        "model = 'toy-dense-16' AND node_id = 'c03') END WHERE model = 'toy-dense-16' AND node_id IN ('c03', 'c04')",
        # a concept's slot moved to a memory's vector
        "UPDATE vector_slots SET slot = (SELECT slot FROM vector_slots WHERE model = 'toy-dense-16' AND "
        "node_id = 'turn') WHERE model = 'toy-dense-16' AND node_id = 'c05'",
        # a memory's slot given to a concept without one (c06's row deleted first)
        "DELETE FROM vector_slots WHERE model = 'toy-dense-16' AND node_id = 'c06'; "
        "UPDATE vector_slots SET node_id = 'c06' WHERE model = 'toy-dense-16' AND node_id = 'turn'",
        # the model's chunk rows deleted (damaged: whatever fresh says)
        "DELETE FROM vector_chunks WHERE model = 'toy-dense-16'",
    ],
    ids=["swap", "alias-memory", "reassign", "chunks-gone"],
)
def test_slots_rewritten_by_hand_written_sql(tmp_path, sql):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])
    w.set_embeddings(Model.name, ["turn"], Model().embed(["omega omega omega"]))
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a", "omega omega omega", Model())
    w.close()
    w = KnowledgeBase.open(path)
    _check([w, r], tmp_path, "b", "omega omega omega", Model())
    con = sqlite3.connect(path)
    with con:
        con.executescript("BEGIN; " + sql + "; COMMIT;")
    con.close()
    _check([w, r], tmp_path, "c", "omega omega omega", Model())
    w.close()
    r.close()
    r = KnowledgeBase.open_read_only(path)
    _check([r], tmp_path, "d", "omega omega omega", Model())
    r.close()


def _chunk_write(path, node, values):
    """Overwrite ``node``'s stored vector of Model in its chunk by hand-written SQL."""
    con = sqlite3.connect(path)
    with con:
        dim, per = con.execute("SELECT dim, per_chunk FROM vector_models WHERE model = ?", (Model.name,)).fetchone()
        (slot,) = con.execute(
            "SELECT slot FROM vector_slots WHERE model = ? AND node_id = ?", (Model.name, node)
        ).fetchone()
        c = slot // per
        (data,) = con.execute(
            "SELECT data FROM vector_chunks WHERE model = ? AND chunk = ?", (Model.name, c)
        ).fetchone()
        buf = np.frombuffer(data, dtype="<f4").copy().reshape(-1, dim)
        buf[slot - c * per] = values
        con.execute("UPDATE vector_chunks SET data = ? WHERE model = ? AND chunk = ?", (buf.tobytes(), Model.name, c))
    con.close()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 3e38, -0.0], ids=["nan", "inf", "-inf", "huge", "negzero"])
def test_values_written_into_vector_chunks_by_hand(tmp_path, bad):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a", "graph walk 5", Model())
    w.close()
    w = KnowledgeBase.open(path)
    _check([w, r], tmp_path, "b", "graph walk 5", Model())
    v = np.zeros(Model.dim, dtype=np.float32)
    v[3] = bad
    _chunk_write(path, "c05", v)
    _check([w, r], tmp_path, "c", "graph walk 5", Model())
    w.close()
    r.close()
    r = KnowledgeBase.open_read_only(path)
    _check([r], tmp_path, "d", "graph walk 5", Model())
    r.close()


def test_a_concept_retyped_away_and_back(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    r = KnowledgeBase.open_read_only(path)
    _check([w, r], tmp_path, "a", "push rank 6", Model())
    w.add_nodes([{"id": "c06", "type": "MEMORY"}])
    _check([w, r], tmp_path, "b", "push rank 6", Model())
    w.add_nodes([{"id": "c06", "type": "CONCEPT"}])
    _check([w, r], tmp_path, "c", "push rank 6", Model())
    # away and back between two reads: the same rows again
    w.add_nodes([{"id": "c09", "type": "MEMORY"}])
    w.add_nodes([{"id": "c09", "type": "CONCEPT"}])
    _check([w, r], tmp_path, "d", "push rank 6", Model())
    w.close()
    r.close()


def test_two_concept_type_configs_on_one_store(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    w.add_nodes([{"id": f"e{i}", "type": "ENTITY", "title": f"entity {WORDS[i]}"} for i in range(5)])
    w.set_embeddings(Model.name, [f"e{i}" for i in range(5)], Model().embed([f"entity {WORDS[i]}" for i in range(5)]))
    cfgs = [
        WalkConfig(lexical_k=0),
        WalkConfig(lexical_k=0, concept_node_types=("CONCEPT",)),
        WalkConfig(lexical_k=0, concept_node_types=("ENTITY", "CONCEPT")),
        WalkConfig(lexical_k=0, concept_node_types=("ENTITY",)),
    ]
    for n, cfg in enumerate(cfgs):
        _check([w], tmp_path, f"a{n}", "entity graph", Model(), cfg)
    w.close()
    w = KnowledgeBase.open(path)
    r = KnowledgeBase.open_read_only(path)
    for n, cfg in enumerate(reversed(cfgs)):
        _check([w, r], tmp_path, f"b{n}", "entity graph", Model(), cfg)
    w.set_embeddings(Model.name, ["e1"], Model().embed(["moved entity"]))
    for n, cfg in enumerate(cfgs):
        _check([w, r], tmp_path, f"c{n}", "moved entity", Model(), cfg)
    w.close()
    r.close()


WORDS = ["graph", "walk", "push", "rank", "memory", "vector", "index", "token", "alpha", "omega"]


def test_annotations_false_readers_agree(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    cfg = WalkConfig(lexical_k=0)
    want = np.array(_reader.StoreReader(_fresh(w, tmp_path, "o")).read_cache().concept_embeddings(Model(), cfg))
    for ann in (False, True, False):
        got = _reader.StoreReader(w, annotations=ann).read_cache().concept_embeddings(Model(), cfg)
        assert got.tobytes() == want.tobytes()
    w.set_embeddings(Model.name, ["c01"], Model().embed(["x y z"]))
    oracle = _fresh(w, tmp_path, "o2")
    want = np.array(_reader.StoreReader(oracle).read_cache().concept_embeddings(Model(), cfg))
    for ann in (False, True):
        got = _reader.StoreReader(w, annotations=ann).read_cache().concept_embeddings(Model(), cfg)
        assert got.tobytes() == want.tobytes()
    oracle.close()
    w.close()


def test_a_snapshot_file_of_a_diverged_copy_left_in_place(tmp_path):
    """A copy taken at one position, both written to the same position with other vectors; the
    copy's snapshot file (its matrix with it) put beside the original."""
    a_path, b_path = tmp_path / "a.db", tmp_path / "b.db"
    a = KnowledgeBase.create(a_path)
    _fill(a)
    a.close()
    shutil.copy(a_path, b_path)
    for p, text in ((a_path, "alpha first"), (b_path, "omega second")):
        kb = KnowledgeBase.open(p)
        kb.set_embeddings(Model.name, ["c02"], Model().embed([text]))
        _answer(kb, "graph walk 0", Model())  # kept at that position
        kb.close()
    assert os.path.exists(f"{b_path}.snapshot")
    shutil.copy(f"{b_path}.snapshot", f"{a_path}.snapshot")
    r = KnowledgeBase.open_read_only(a_path)
    _check([r], tmp_path, "x", "alpha first", Model())
    r.close()


def test_a_backup_restored_under_an_open_store(tmp_path):
    """The change log replaced under the open objects (a backup restored into the file) at the
    same position with other vectors."""
    a_path, b_path = tmp_path / "a.db", tmp_path / "b.db"
    w = KnowledgeBase.create(a_path)
    _fill(w)
    src = sqlite3.connect(a_path)
    dst = sqlite3.connect(b_path)
    src.backup(dst)
    src.close()
    dst.close()
    r = KnowledgeBase.open_read_only(a_path)
    w.set_embeddings(Model.name, ["c02"], Model().embed(["alpha first"]))
    _check([w, r], tmp_path, "a", "alpha first", Model())
    b = KnowledgeBase.open(b_path)
    b.set_embeddings(Model.name, ["c02"], Model().embed(["omega second"]))
    b.close()
    src = sqlite3.connect(b_path)
    dst = sqlite3.connect(a_path)
    src.backup(dst)
    src.close()
    dst.close()
    _check([w, r], tmp_path, "b", "alpha first", Model())
    _check([w, r], tmp_path, "c", "omega second", Model())
    w.close()
    r.close()


def test_a_save_killed_midway_leaves_a_file_that_is_not_used(tmp_path):
    """A truncated snapshot file (a save killed after writing part of it, without its rename)
    and a half-written temporary beside it."""
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    want = _answer(w, "graph walk 0", Model())
    w.close()
    snap = f"{path}.snapshot"
    data = open(snap, "rb").read()
    with open(f"{snap}.123.tmp", "wb") as f:
        f.write(data[: len(data) // 2])
    with open(snap, "wb") as f:
        f.write(data[: len(data) - 100])
    with pytest.warns(RuntimeWarning, match="failed verification"):
        w = KnowledgeBase.open(path)
        w.graph()
    _same(_answer(w, "graph walk 0", Model()), want)
    w.close()


def test_a_fresh_process_maps_it_read_only_and_once(tmp_path):
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    _answer(w, "graph walk 0", Model())
    w.close()
    r = KnowledgeBase.open_read_only(path)
    m = _reader.StoreReader(r).read_cache().concept_embeddings(Model(), WalkConfig())
    (name,) = _stored_names(r)
    kept = r._keeper._derived[name]["matrix"]
    assert not m.flags.writeable and np.shares_memory(m, kept)
    r.close()


@pytest.mark.parametrize("how", ["read", "patched", "turn"])
def test_the_writers_matrix_is_held_once_and_read_only(tmp_path, how):
    w = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(w)
    m = _reader.StoreReader(w).read_cache().concept_embeddings(Model(), WalkConfig())
    if how == "turn":  # an agent's turn: the same matrix carried, kept again at the new position
        (name,) = _stored_names(w)
        before = w._keeper._derived[name]["matrix"]
        w.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])
        m = _reader.StoreReader(w).read_cache().concept_embeddings(Model(), WalkConfig())
        assert np.shares_memory(before, w._keeper._derived[name]["matrix"])  # not copied per turn
    if how == "patched":
        w.set_embeddings(Model.name, ["c03"], Model().embed(["moved"]))
        m = _reader.StoreReader(w).read_cache().concept_embeddings(Model(), WalkConfig())
    (name,) = _stored_names(w)
    kept = w._keeper._derived[name]["matrix"]
    assert np.array_equal(m, kept)
    assert not m.flags.writeable
    assert np.shares_memory(m, kept)
    w.close()


def test_a_reader_of_an_older_state_asked_after_a_vector_write(tmp_path):
    """A read cache of one state asked after a write (another thread's query in flight while the
    agent writes a concept's vector), then the current state, in this process and in the next."""
    path = tmp_path / "kb.db"
    w = KnowledgeBase.create(path)
    _fill(w)
    cfg = WalkConfig()
    _reader.StoreReader(w).read_cache().concept_embeddings(Model(), cfg)
    w.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])
    in_flight = _reader.StoreReader(w).read_cache()  # this state, nothing asked of it yet
    w.set_embeddings(Model.name, ["c03"], Model().embed(["moved far"]))
    in_flight.concept_embeddings(Model(), cfg)
    oracle = _fresh(w, tmp_path, "o")
    want = np.array(_reader.StoreReader(oracle).read_cache().concept_embeddings(Model(), cfg))
    got_here = np.array(_reader.StoreReader(w).read_cache().concept_embeddings(Model(), cfg))
    w.close()
    r = KnowledgeBase.open_read_only(path)
    got_next = np.array(_reader.StoreReader(r).read_cache().concept_embeddings(Model(), cfg))
    _same(_answer(r, "moved far", Model()), _answer(oracle, "moved far", Model()))
    assert got_next.tobytes() == want.tobytes()  # the next process
    assert got_here.tobytes() == want.tobytes()  # this one
    r.close()
    oracle.close()


def test_a_vector_commit_between_a_querys_state_and_its_counter(tmp_path):
    """Deterministic stand-in for a thread race on one store object: the agent's thread commits a
    concept's vector right after a query's thread read its state (b's embeddings_version, called
    from ReadCache._by_embeddings, does the write first)."""
    path = tmp_path / "kb.db"
    a = KnowledgeBase.create(path)
    _fill(a)
    a.close()
    a = KnowledgeBase.open(path)  # the agent
    b = KnowledgeBase.open(path)  # a second writer object on the file that also answers queries
    _answer(b, "moved far", Model())
    b.add_nodes([{"id": "turn", "type": "MEMORY", "title": "a turn"}])
    real = b.embeddings_version
    fired = []

    def interleaved():
        if not fired and sys._getframe(1).f_code.co_name == "_by_embeddings":
            # the agent (another thread on this object) commits right after b's state was read
            fired.append(1)
            b.set_embeddings(Model.name, ["c03"], Model().embed(["moved far"]))
        return real()

    b.embeddings_version = interleaved
    _answer(b, "moved far", Model())
    assert fired
    oracle = _fresh(a, tmp_path, "o")
    want = _answer(oracle, "moved far", Model())
    _same(_answer(b, "moved far", Model()), want)  # the next state, this object
    b.close()
    a.close()
    r = KnowledgeBase.open_read_only(path)
    _same(_answer(r, "moved far", Model()), want)  # the next process
    r.close()
    oracle.close()


# --------------------------------------------------------------------------- DenseVectors


def _dense_exact(m, q, k, vis=None):
    want_rows, want_scores = reference(m, q, k, vis, None)
    dv = DenseVectors(m)
    for method in ("auto", "pruned", "scan"):
        rows, scores = dv.topk(q, k, visible=vis, method=method)
        assert rows.tolist() == want_rows, method
        assert _bits(scores) == _bits(want_scores), method


@pytest.mark.parametrize("n", [0, 1, 7])
def test_dense_dim_one_and_no_rows(n):
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, 1)).astype(np.float32)
    _dense_exact(m, np.array([1.0], dtype=np.float32), 3)
    _dense_exact(m, np.array([-2.5], dtype=np.float32), 10)
    _dense_exact(np.zeros((0, 5), dtype=np.float32), np.ones(5, dtype=np.float32), 3)


def test_dense_rows_all_zero_and_half_ties():
    m = np.zeros((50, 9), dtype=np.float32)
    _dense_exact(m, np.ones(9, dtype=np.float32), 5)
    # entries just below and at half a code step (x / scale = k + 0.5 -/+ an ulp): float rounding
    # of x + 0.5 picks another code than nearbyint did; the bound must still hold
    rng = np.random.default_rng(3)
    base = rng.integers(-126, 126, size=(200, 9)).astype(np.float64)
    frac = rng.choice([0.5, np.nextafter(0.5, 0), np.nextafter(0.5, 1), 0.49999997], size=(200, 9))
    m = ((base + np.sign(base + 0.1) * frac) / 127.0).astype(np.float32)
    m[:, 0] = 1.0  # the row's max: scale 1/127
    for s in range(6):
        q = rng.standard_normal(9).astype(np.float32)
        _dense_exact(m, q, [1, 4, 30][s % 3])


def test_dense_huge_values_and_non_finite_rejected():
    rng = np.random.default_rng(5)
    m = (rng.standard_normal((120, 16)) * 1e37).astype(np.float32)
    m[:10] = np.float32(3.4e38) * np.sign(rng.standard_normal((10, 16))).astype(np.float32)
    q = (rng.standard_normal(16) * 1e-38).astype(np.float32)
    _dense_exact(m, q, 7)
    for bad in (np.nan, np.inf, -np.inf):
        x = m.copy()
        x[77, 13] = bad
        with pytest.raises(ConceptwalkError):
            DenseVectors(x)
