"""Issue 31, the concept vectors: a stored concept vector write is followed as the dense index's
base plus a delta (``ReadCache._dense_delta``, ``DenseDelta``), never by copying or re-coding the
concept matrix, and every answer equals a fresh process's on the same store, bit for bit.

Random sequences of writes -- concept vectors rewritten, concepts added (with and without a
stored vector), deleted or re-typed, memory nodes written between them (shifting node indices) --
are applied to a store whose reader follows them; after each batch the reader's concept index
(its top-k called directly), the resolver's semantic concepts and the wrapped query are compared
with a fresh store object over a copy of the same committed rows (nothing carried), and the core
top-k with ``vector_topk`` over the fresh full matrix. With a small delta limit the delta is
folded into a new base as it grows, and the answers stay the same.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller
from conceptwalk.graph.vectors import DenseDelta, DenseVectors, vector_topk_arrays
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, ConceptResolver, WalkConfig, _reader, builtin_flat_search
from test_hostile_follow_writes import _fresh

ALL = Caller.all_access()
WORDS = ["graph", "walk", "push", "rank", "memory", "vector", "index", "token", "alpha", "omega"]
DIM = 12
COUNTS = {"delta": 0, "folded": 0, "checked": 0}


class Model:
    """A dense stand-in for a sentence model (rows seeded by the text's CRC-32, quantised to
    halves); the same for both stores. Equal texts give equal rows: equal scores."""

    name, dim = "delta-model", DIM

    def embed(self, texts: Any) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for r, t in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM)
            out[r] = np.round(v * 2) / 2
        return out


def _fill(kb: KnowledgeBase, n: int = 30) -> None:
    concepts = [f"c{i:02d}" for i in range(n)]
    kb.add_nodes(
        [
            {"id": c, "type": "CONCEPT", "title": f"{WORDS[i % 10]} {WORDS[(3 * i) % 10]}"}
            for i, c in enumerate(concepts)
        ]
        + [{"id": f"m{i:02d}", "type": "MEMORY", "title": f"memory {WORDS[i % 10]}"} for i in range(n)]
    )
    kb.add_edges([{"src": f"m{i:02d}", "dst": c, "type": "TAGGED_CONCEPT"} for i, c in enumerate(concepts)])
    kb.set_embeddings(Model.name, concepts, Model().embed([f"v {c}" for c in concepts]))


WRITE = st.tuples(
    st.sampled_from(["rewrite", "rewrite", "rewrite", "add", "add_bare", "delete", "retype", "memory", "body"]),
    st.integers(0, 40),
    st.integers(0, 20),
)


def _apply(kb: KnowledgeBase, write: tuple[str, int, int]) -> None:
    kind, a, b = write
    x = f"c{a:02d}"
    present = any(r is not None and r["id"] == x for r in kb.nodes([x]))
    if kind == "rewrite" and present:
        kb.set_embeddings(Model.name, [x], Model().embed([f"r {b}"]))  # shared by several: ties
    elif kind == "add":  # a concept (new or existing) with a stored vector
        kb.add_nodes([{"id": f"{x}a", "type": "CONCEPT", "title": f"{WORDS[b % 10]} added"}])
        kb.set_embeddings(Model.name, [f"{x}a"], Model().embed([f"a {b} {x}"]))
    elif kind == "add_bare":  # a concept with no stored vector: the model embeds its text
        kb.add_nodes([{"id": f"{x}b", "type": "CONCEPT", "title": f"{WORDS[b % 10]} bare {b}"}])
    elif kind == "delete":
        kb.delete_nodes([x])
    elif kind == "retype" and present:
        kb.add_nodes([{"id": x, "type": "MEMORY" if b % 2 else "CONCEPT"}])
    elif kind == "body":  # a bare concept's body (embedded with concept_text="title+body")
        kb.add_nodes([{"id": f"{x}b", "type": "CONCEPT", "title": f"{WORDS[a % 10]} bare", "body": f"body {b}"}])
    elif kind == "memory":  # a node write between concepts (shifts the node indices after it)
        kb.add_nodes([{"id": f"{x}m{b}", "type": "MEMORY", "title": f"note {WORDS[b % 10]}"}])


def _bits(xs: Any) -> list[int]:
    return np.asarray(xs, dtype=np.float64).view(np.uint64).tolist()


def _compare(kb: KnowledgeBase, tmp_path: Any, tag: str, text: str = "title") -> None:
    model, cfg = Model(), WalkConfig(lexical_k=0, concept_text=text)
    cache = _reader.StoreReader(kb).read_cache()
    cols = cache.concept_columns(model, cfg)
    if isinstance(cols, DenseDelta):
        COUNTS["delta"] += 1
    fresh = _fresh(kb, tmp_path, tag)
    try:
        fcache = _reader.StoreReader(fresh).read_cache()
        idx = cache.concept_indices(cfg)
        assert [cache.graph.ids[i] for i in idx] == [fcache.graph.ids[i] for i in fcache.concept_indices(cfg)]
        fmat = fcache.concept_embeddings(model, cfg)
        fcols = fcache.concept_columns(model, cfg)
        rng = np.random.default_rng(len(idx))
        for t in range(4):
            q = rng.standard_normal(DIM).astype(np.float32)
            k = [1, 3, 10, max(1, len(idx))][t]
            vis = rng.random(len(idx)) < 0.7 if t % 2 else None
            want = vector_topk_arrays(fmat, q, k, visible=vis)
            if cols is None:
                assert fcols is None
                continue
            for method in ("auto", "pruned", "scan"):
                got = cols.topk(q, k, visible=vis, method=method)
                assert got[0].tolist() == want[0].tolist(), (tag, method)
                assert _bits(got[1]) == _bits(want[1]), (tag, method)
            assert fcols is not None
            assert fcols.topk(q, k, visible=vis)[0].tolist() == want[0].tolist()
        for q in ("graph walk", "memory vector added", "bare alpha"):
            got_r = [c.to_dict() for c in ConceptResolver(kb, cfg, embedder=model).resolve(q, caller=ALL)]
            want_r = [c.to_dict() for c in ConceptResolver(fresh, cfg, embedder=model).resolve(q, caller=ALL)]
            assert json.dumps(got_r) == json.dumps(want_r), (tag, q)
            ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=cfg, embedder=model)
            fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=cfg, embedder=model)
            got_q = ret.query(q, 5, concept_walk=True, caller=ALL)
            want_q = fret.query(q, 5, concept_walk=True, caller=ALL)
            assert json.dumps(got_q, sort_keys=True, default=repr) == json.dumps(want_q, sort_keys=True, default=repr)
        COUNTS["checked"] += 1
    finally:
        fresh.close()


@pytest.mark.parametrize(
    ("limit", "text"),
    [(None, "title"), (3, "title"), (None, "title+body")],
    ids=["delta", "folded-often", "title+body"],
)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(WRITE, min_size=1, max_size=3), min_size=1, max_size=6))
def test_answers_after_vector_writes_equal_a_fresh_process(tmp_path_factory, monkeypatch, limit, text, batches):
    if limit is not None:
        monkeypatch.setattr(_reader, "_delta_limit", lambda n: limit)
    tmp = tmp_path_factory.mktemp("delta")
    kb = KnowledgeBase.create(tmp / "kb.db")
    try:
        _fill(kb)
        _compare(kb, tmp, "start", text)  # the reader holds a dense index before the writes
        for b, writes in enumerate(batches):
            with kb.transaction():
                for w in writes:
                    _apply(kb, w)
            _compare(kb, tmp, f"b{b}", text)
    finally:
        kb.close()


def test_a_vector_rewrite_reads_the_changed_row_only_and_keeps_the_base(tmp_path, monkeypatch):
    """The agent's turn: a concept's vector rewritten, then a query. The index is the last one's
    base plus the changed row: no concept matrix read back from the store, nothing coded again
    (no DenseVectors made or updated), the base object itself kept; a memory write between two
    turns keeps the index as it is."""
    made = {"fresh": 0, "updated": 0}
    real_init, real_updated = DenseVectors.__init__, DenseVectors.updated

    def init(self: Any, matrix: Any) -> None:
        made["fresh"] += 1
        real_init(self, matrix)

    def updated(self: Any, matrix: Any, base_rows: Any) -> Any:
        made["updated"] += 1
        return real_updated(self, matrix, base_rows)

    monkeypatch.setattr(DenseVectors, "__init__", init)
    monkeypatch.setattr(DenseVectors, "updated", updated)
    reads: list[Any] = []
    real_read = KnowledgeBase.read_embeddings

    def counting(self: Any, name: str, ids: Any = None, **kw: Any) -> Any:
        reads.append(name if ids is None else (name, len(ids)))
        return real_read(self, name, ids, **kw)

    monkeypatch.setattr(KnowledgeBase, "read_embeddings", counting)
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    model, cfg = Model(), WalkConfig(lexical_k=0)
    first = _reader.StoreReader(kb).read_cache().concept_columns(model, cfg)
    assert isinstance(first, DenseVectors) and made == {"fresh": 1, "updated": 0}
    for turn, x in enumerate(["c03", "c17", "c03", "c29"]):
        reads.clear()
        kb.set_embeddings(Model.name, [x], Model().embed([f"turn {turn}"]))
        cols = _reader.StoreReader(kb).read_cache().concept_columns(model, cfg)
        assert isinstance(cols, DenseDelta) and cols.base is first, turn
        assert made == {"fresh": 1, "updated": 0}, turn
        assert reads == [(Model.name, 1)], turn  # the changed concept's vector, by id
        assert cols.delta_rows == [1, 2, 2, 3][turn], turn  # c03 rewritten twice holds one row
        kb.add_nodes([{"id": f"c03m{turn}", "type": "MEMORY", "title": "a memory"}])  # between concepts
        assert _reader.StoreReader(kb).read_cache().concept_columns(model, cfg) is cols, turn
    _compare(kb, tmp_path, "end")
    kb.close()


def test_the_delta_is_folded_into_a_new_base_past_its_limit(tmp_path, monkeypatch):
    """Past the limit the delta's rows are folded into a new base (DenseVectors.updated over the
    base's rows: the unchanged rows' codes copied), and the next writes start a new delta on it."""
    monkeypatch.setattr(_reader, "_delta_limit", lambda n: 2)
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb)
    model, cfg = Model(), WalkConfig(lexical_k=0)
    first = _reader.StoreReader(kb).read_cache().concept_columns(model, cfg)
    kinds = []
    for turn, x in enumerate(["c01", "c02", "c03", "c04"]):
        kb.set_embeddings(Model.name, [x], Model().embed([f"fold {turn}"]))
        cols = _reader.StoreReader(kb).read_cache().concept_columns(model, cfg)
        kinds.append(type(cols).__name__)
        _compare(kb, tmp_path, f"f{turn}")
    assert kinds == ["DenseDelta", "DenseDelta", "DenseVectors", "DenseDelta"]
    assert isinstance(cols, DenseDelta) and cols.base is not first and cols.delta_rows == 1
    kb.close()


def test_the_random_sequences_took_the_delta_path() -> None:
    """(Run after the sequences above: they checked answers while a delta was in use.)"""
    if COUNTS["checked"] == 0:
        pytest.skip("the sequences did not run in this session")
    assert COUNTS["delta"] > 0
