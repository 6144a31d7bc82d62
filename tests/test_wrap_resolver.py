"""The resolver: alias hits, flat hits, semantic hits, the normalize-only fallback, visibility,
embedding caching in the store."""

from __future__ import annotations

import numpy as np
import pytest

from conceptwalk import Caller, LinkGraph
from conceptwalk.wrap.embed import HashingEmbedder
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptResolver, WalkConfig, resolve
from test_wrap_retriever import make_kb

EVERYONE = Caller.all_access()
PUBLIC = Caller.public()
T1 = Caller.with_scopes("t1")


def got(resolved):
    return [(c.id, round(c.confidence, 4), c.method) for c in resolved]


def test_alias_hit_whole_words_normalised():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None))
    assert got(r.resolve("How does AUTHN work?", caller=EVERYONE)) == [("c:auth", 1.0, "alias")]
    assert got(r.resolve("Secret-Sauce!", caller=T1)) == [("c:secret", 1.0, "alias")]
    # whole words only: "authnx" is not the alias "authn"
    assert [c.method for c in r.resolve("authnx", caller=EVERYONE)] != ["alias"]


def test_alias_to_several_canonicals_splits_confidence_over_visible_ones():
    kb = make_kb()
    kb.add_aliases([("sessions", "c:tokens"), ("sessions", "c:auth"), ("sessions", "c:secret")])
    r = ConceptResolver(kb, WalkConfig(embedder=None))
    assert got(r.resolve("sessions", caller=PUBLIC)) == [("c:auth", 0.5, "alias"), ("c:tokens", 0.5, "alias")]
    assert got(r.resolve("sessions", caller=T1)) == [
        ("c:auth", 0.3333, "alias"), ("c:secret", 0.3333, "alias"), ("c:tokens", 0.3333, "alias")]


def test_hidden_concepts_never_resolve():
    kb = make_kb()
    for cfg in (WalkConfig(embedder=None), WalkConfig(embedder="hashing:128", semantic_threshold=0.0)):
        r = ConceptResolver(kb, cfg)
        for text in ("secret sauce", "the hidden recipe", "Secret sauce"):
            ids = [c.id for c in r.resolve(text, caller=PUBLIC, flat_results=[{"id": "c:secret"}])]
            assert "c:secret" not in ids
            assert "c:secret" in [c.id for c in r.resolve(text, caller=T1, flat_results=[{"id": "c:secret"}])]


def test_flat_hits_rank_confidence_and_fragments():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None, flat_hit_k=3))
    flat = [{"id": "f:jwt"}, {"id": "c:tokens"}, {"id": "c:auth-old"}, {"id": "c:billing"}]
    # rank 2 -> 0.45, rank 3 (a fragment of c:auth) -> 0.3, rank 4 is past flat_hit_k
    assert got(r.resolve("zzz", caller=EVERYONE, flat_results=flat)) == [
        ("c:tokens", 0.45, "flat-hit"), ("c:auth", 0.3, "flat-hit")]


def test_semantic_hits_and_embeddings_cached_in_store(tmp_path):
    kb = make_kb(str(tmp_path / "kb.db"))
    emb = HashingEmbedder(dim=128)
    assert kb.get_embeddings(emb.name)[0] == []
    r = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_k=2, semantic_threshold=0.3))
    res = r.resolve("billing ledgers for invoices", caller=EVERYONE)
    assert res[0].id == "c:billing" and res[0].method == "semantic"
    assert 0.3 <= res[0].confidence <= 1.0 and len(res) <= 2
    ids, mat = kb.get_embeddings(emb.name)
    assert ids == sorted(["c:auth", "c:auth-old", "c:billing", "c:secret", "c:tokens"])  # concepts only
    # the stored vector is the embedding of title + body
    want = emb.embed(["Billing ledger\ninvoices and payments"])[0]
    np.testing.assert_allclose(mat[ids.index("c:billing")], want, rtol=1e-6)
    version = kb.version
    r2 = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_k=2, semantic_threshold=0.3))
    assert got(r2.resolve("billing ledgers for invoices", caller=EVERYONE)) == got(res)
    assert kb.version == version  # nothing re-embedded or written
    kb.close()


def test_semantic_threshold_and_k():
    kb = make_kb()
    none = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_threshold=1.0, flat_hit_k=0))
    # nothing reaches similarity 1.0, so only the fallback can resolve (and this text names no concept)
    assert none.resolve("invoices payments money", caller=EVERYONE) == []
    one = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_threshold=0.0, semantic_k=1))
    assert got(one.resolve("invoices payments money", caller=EVERYONE))[0][::2] == ("c:billing", "semantic")
    many = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_threshold=0.0, semantic_k=5))
    res = many.resolve("invoices payments money", caller=PUBLIC)
    assert all(c.method == "semantic" and c.confidence >= 0.0 for c in res)
    assert [c.confidence for c in res] == sorted((c.confidence for c in res), reverse=True)
    # the fragment c:auth-old folds into c:auth; the hidden c:secret never appears
    assert {c.id for c in res} <= {"c:auth", "c:billing", "c:tokens"}


def test_normalize_only_fallback_without_aliases_or_embeddings():
    g = LinkGraph.from_edges(
        [("concept/vector_index", "f:ann.py", "IMPLEMENTED_BY")],
        nodes=[{"id": "concept/vector_index", "type": "CONCEPT", "title": "Vector-Index"},
               {"id": "concept/other", "type": "CONCEPT", "title": "Totally different"}])
    cfg = WalkConfig(embedder=None)
    for text in ("where is the VECTOR INDEX?", "vector_index", "Vector  index…"):
        assert got(resolve(g, text, caller=EVERYONE, config=cfg)) == [("concept/vector_index", 0.6, "normalized")]
    assert resolve(g, "vectorindex", caller=EVERYONE, config=cfg) == []


def test_fallback_only_when_nothing_else_resolved():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None))
    # "authn" is an alias of c:auth; "Billing ledger" would match by name, but the alias hit wins alone
    assert got(r.resolve("authn billing ledger", caller=EVERYONE)) == [("c:auth", 1.0, "alias")]
    assert got(r.resolve("billing ledger", caller=EVERYONE)) == [("c:billing", 0.6, "normalized")]


def test_resolver_rejects_bad_input():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None))
    with pytest.raises(ValueError, match="caller"):
        r.resolve("x", caller="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text"):
        r.resolve(None, caller=EVERYONE)  # type: ignore[arg-type]
