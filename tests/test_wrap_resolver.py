"""The resolver: alias hits, flat hits, semantic hits, the normalize-only fallback, visibility,
embedding caching in the store."""

from __future__ import annotations

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
    r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    assert got(r.resolve("How does AUTHN work?", caller=EVERYONE)) == [("c:auth", 1.0, "alias")]
    assert got(r.resolve("Secret-Sauce!", caller=T1)) == [("c:secret", 1.0, "alias")]
    # whole words only: "authnx" is not the alias "authn"
    assert [c.method for c in r.resolve("authnx", caller=EVERYONE)] != ["alias"]


def test_alias_to_several_canonicals_splits_confidence_over_visible_ones():
    kb = make_kb()
    kb.add_aliases([("sessions", "c:tokens"), ("sessions", "c:auth"), ("sessions", "c:secret")])
    r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    assert got(r.resolve("sessions", caller=PUBLIC)) == [("c:auth", 0.5, "alias"), ("c:tokens", 0.5, "alias")]
    assert got(r.resolve("sessions", caller=T1)) == [
        ("c:auth", 0.3333, "alias"),
        ("c:secret", 0.3333, "alias"),
        ("c:tokens", 0.3333, "alias"),
    ]


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
        ("c:tokens", 0.45, "flat-hit"),
        ("c:auth", 0.3, "flat-hit"),
    ]


def test_semantic_hits_embeddings_held_in_memory_never_written(tmp_path):
    path = tmp_path / "kb.db"
    kb = make_kb(str(path))
    emb = HashingEmbedder(dim=128)
    assert kb.get_embeddings(emb.name)[0] == []
    version = kb.version
    kb.close()
    before = path.read_bytes()
    kb = KnowledgeBase.open(str(path))
    r = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_k=2, semantic_threshold=0.3, lexical_k=0))
    res = r.resolve("billing ledgers", caller=EVERYONE)
    assert res[0].id == "c:billing" and res[0].method == "semantic"
    assert 0.3 <= res[0].confidence <= 1.0 and len(res) <= 2
    # the concept's vector is the embedding of its title (concept_text="title"), held in memory
    want = emb.embed(["Billing ledger"])[0]
    assert res[0].confidence == pytest.approx(float(emb.embed(["billing ledgers"])[0] @ want), abs=1e-6)
    r2 = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_k=2, semantic_threshold=0.3, lexical_k=0))
    assert got(r2.resolve("billing ledgers", caller=EVERYONE)) == got(res)
    assert kb.version == version and kb.get_embeddings(emb.name)[0] == []  # nothing written
    kb.close()
    assert path.read_bytes() == before


def test_stored_vectors_are_used_when_the_store_has_them():
    kb = make_kb()
    emb = HashingEmbedder(dim=128)
    ids = ["c:auth", "c:auth-old", "c:billing", "c:secret", "c:tokens"]
    vecs = emb.embed(["zebra crossing" if i == "c:billing" else i for i in ids])
    kb.set_embeddings(emb.name, ids, vecs)
    r = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_threshold=0.3, lexical_k=0, flat_hit_k=0))
    assert got(r.resolve("zebra crossing", caller=EVERYONE))[0][::2] == ("c:billing", "semantic")


def test_alias_evidence_scored_by_coverage_and_specificity():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    whole = r.resolve("authn", caller=EVERYONE)[0].confidence
    part = r.resolve("authn token rotation for the mobile clients", caller=EVERYONE)[0].confidence
    assert whole == 1.0 and part < 0.5  # one word of a long query is weak evidence
    # a longer alias covering more of the same query is stronger evidence
    kb.add_aliases([("authn token rotation", "c:tokens")])
    r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    res = r.resolve("authn token rotation for the mobile clients", caller=EVERYONE)
    assert [c.id for c in res] == ["c:tokens", "c:auth"] and res[0].method == "alias"


def test_evidence_is_fused_and_semantic_candidates_not_cut_at_three_when_close():
    kb = make_kb()
    alone = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0)).resolve(
        "session tokens", caller=EVERYONE, flat_results=[{"id": "c:tokens"}]
    )
    fused = ConceptResolver(kb, WalkConfig(embedder=None)).resolve(
        "session tokens", caller=EVERYONE, flat_results=[{"id": "c:tokens"}]
    )
    assert alone[0].id == fused[0].id == "c:tokens"
    assert fused[0].confidence == pytest.approx(1 - (1 - 0.9) * (1 - 0.6))  # flat-hit and lexical agree
    words = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
    g = LinkGraph.from_edges([], nodes=[{"id": f"c:{w}", "type": "CONCEPT", "title": f"graph walk {w}"} for w in words])
    cfg = WalkConfig(semantic_threshold=0.0, semantic_k=3, semantic_max_k=6, semantic_margin=0.2)
    res = resolve(g, "graph walk", caller=EVERYONE, config=cfg)
    assert len(res) == 6 and all(c.method == "semantic" for c in res)
    assert (
        len(
            resolve(
                g,
                "graph walk",
                caller=EVERYONE,
                config=WalkConfig(semantic_threshold=0.0, semantic_max_k=6, semantic_margin=0.0),
            )
        )
        == 3
    )


def test_semantic_threshold_and_k():
    kb = make_kb()
    none = ConceptResolver(kb, WalkConfig(embedder="hashing:128", semantic_threshold=1.0, flat_hit_k=0, lexical_k=0))
    # nothing reaches similarity 1.0, so only the fallback can resolve (and this text names no concept)
    assert none.resolve("invoices payments money", caller=EVERYONE) == []
    one = ConceptResolver(
        kb,
        WalkConfig(
            embedder="hashing:128",
            semantic_threshold=0.0,
            semantic_k=1,
            lexical_k=0,
            semantic_max_k=1,
            concept_text="title+body",
        ),
    )
    assert got(one.resolve("invoices payments money", caller=EVERYONE))[0][::2] == ("c:billing", "semantic")
    many = ConceptResolver(
        kb,
        WalkConfig(
            embedder="hashing:128", semantic_threshold=0.0, semantic_k=5, lexical_k=0, concept_text="title+body"
        ),
    )
    res = many.resolve("invoices payments money", caller=PUBLIC)
    assert all(c.method == "semantic" and c.confidence >= 0.0 for c in res)
    assert [c.confidence for c in res] == sorted((c.confidence for c in res), reverse=True)
    # the fragment c:auth-old folds into c:auth; the hidden c:secret never appears
    assert {c.id for c in res} <= {"c:auth", "c:billing", "c:tokens"}


def test_normalize_only_fallback_without_aliases_or_embeddings():
    g = LinkGraph.from_edges(
        [("concept/vector_index", "f:ann.py", "IMPLEMENTED_BY")],
        nodes=[
            {"id": "concept/vector_index", "type": "CONCEPT", "title": "Vector-Index"},
            {"id": "concept/other", "type": "CONCEPT", "title": "Totally different"},
        ],
    )
    cfg = WalkConfig(embedder=None)
    for text in ("where is the VECTOR INDEX?", "vector_index", "Vector  index…"):
        assert got(resolve(g, text, caller=EVERYONE, config=cfg)) == [("concept/vector_index", 0.6, "normalized")]
    assert resolve(g, "vectorindex", caller=EVERYONE, config=cfg) == []


def test_fallback_only_when_nothing_else_resolved():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    # "authn" is an alias of c:auth covering 5 of the 18 letters; "Billing ledger" would match by
    # name, but the alias hit wins alone
    assert got(r.resolve("authn billing ledger", caller=EVERYONE)) == [("c:auth", 0.527, "alias")]
    assert got(r.resolve("billing ledger", caller=EVERYONE)) == [("c:billing", 0.6, "normalized")]


def test_resolver_rejects_bad_input():
    kb = make_kb()
    r = ConceptResolver(kb, WalkConfig(embedder=None))
    with pytest.raises(ValueError, match="caller"):
        r.resolve("x", caller="everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="text"):
        r.resolve(None, caller=EVERYONE)  # type: ignore[arg-type]


# ---- per-embedder fusion weights (issue 19) ---------------------------------------------------

from conceptwalk.wrap.embed import NEUTRAL, FusionWeights, fusion_weights  # noqa: E402
from deletion_oracle import deleted_store, open_store  # noqa: E402


class DenseToy:
    """A dense embedder of its own (word-level hashing made dense by a constant offset column),
    carrying FusionWeights as a model embedder does."""

    def __init__(self, fusion: FusionWeights) -> None:
        self._h = HashingEmbedder(dim=64, char_weight=0.0)
        self.name = "toy-dense-d65"
        self.dim = 65
        self.fusion = fusion

    def embed(self, texts):
        import numpy as np

        x = np.concatenate([self._h.embed(texts), np.full((len(texts), 1), 0.5, np.float32)], axis=1)
        return np.ascontiguousarray(x / np.linalg.norm(x, axis=1, keepdims=True), dtype=np.float32)


FUSED_NODES = [
    {"id": "c:mi", "type": "CONCEPT", "title": "Myocardial infarction", "body": "a heart attack", "scopes": []},
    {"id": "c:htn", "type": "CONCEPT", "title": "Hypertension", "body": "high blood pressure", "scopes": ["t1"]},
    {"id": "c:moscow", "type": "CONCEPT", "title": "Moscow", "body": None, "scopes": []},
    {"id": "c:moskva", "type": "CONCEPT", "title": "Moskva river", "body": "a river", "scopes": ["t2"]},
    {"id": "c:heart", "type": "CONCEPT", "title": "Heart", "body": "the organ", "scopes": ["t1"]},
    {"id": "d:note", "type": "DOC", "title": "A note on heart attack and pressure", "scopes": []},
]
FUSED_QUERIES = ["heart attack", "high blood pressure", "Moskva", "moscow river", "heart", "pressure"]


def test_fusion_weights_by_embedder_kind():
    assert fusion_weights(None) is NEUTRAL and fusion_weights(HashingEmbedder()).neutral
    w = FusionWeights(body=1.0, char=0.4, lexical=0.5, flat_hit=0.25)
    assert fusion_weights(DenseToy(w)) == w and not w.neutral
    with pytest.raises(ValueError, match="lexical must be a finite number >= 0"):
        FusionWeights(lexical=float("nan"))
    r = ConceptResolver(make_kb(), WalkConfig(embedder="hashing:128"))
    assert r.fusion.neutral and r._char is None  # the built-in embedder: the resolver as it was


def test_fused_semantic_score_is_the_weighted_mean_of_title_body_and_ngram_similarities():
    import numpy as np

    w = FusionWeights(body=1.0, char=0.4, lexical=0.0, flat_hit=0.0)
    emb = DenseToy(w)
    kb = open_store(FUSED_NODES, [], [])
    cfg = WalkConfig(concept_node_types=("CONCEPT",), semantic_threshold=0.0, semantic_k=10, lexical_k=0)
    r = ConceptResolver(kb, cfg, embedder=emb)
    char = HashingEmbedder(dim=512, ngram_range=(2, 4))
    concepts = [n for n in FUSED_NODES if n["type"] == "CONCEPT"]
    titles = [n["title"] for n in concepts]
    bodies = ["\n".join(p for p in (n["title"], n["body"]) if p) for n in concepts]
    for q in FUSED_QUERIES:
        qv, qc = emb.embed([q])[0], char.embed([q])[0]
        mean = (emb.embed(titles) @ qv + emb.embed(bodies) @ qv) / 2
        want = (mean + 0.4 * np.maximum(char.embed(titles) @ qc, 0)) / 1.4
        res = r.resolve(q, caller=EVERYONE)
        assert res and all(c.method == "semantic" for c in res)
        byid = {c.id: c.confidence for c in res}
        for n, s in zip(concepts, want.tolist()):
            if n["id"] in byid:
                assert byid[n["id"]] == pytest.approx(s, abs=1e-5), (q, n["id"])
        assert res[0].id == concepts[int(np.argmax(want))]["id"]
    # the same embedder with the neutral weights: the title similarity alone
    emb.fusion = NEUTRAL
    plain = ConceptResolver(kb, cfg, embedder=emb).resolve("heart attack", caller=EVERYONE)
    qv = emb.embed(["heart attack"])[0]
    assert plain[0].confidence == pytest.approx(float(np.max(emb.embed(titles) @ qv)), abs=1e-5)


def test_fusion_weights_scale_lexical_and_flat_hit_evidence():
    kb = open_store(FUSED_NODES, [], [])
    cfg = WalkConfig(concept_node_types=("CONCEPT",), semantic_k=0, flat_hit_k=3)  # no semantic evidence
    flat = [{"id": "d:note"}, {"id": "c:heart"}]
    base = got(
        ConceptResolver(kb, cfg, embedder=DenseToy(NEUTRAL)).resolve("heart", caller=EVERYONE, flat_results=flat)
    )
    scaled = got(
        ConceptResolver(kb, cfg, embedder=DenseToy(FusionWeights(lexical=0.5, flat_hit=0.25))).resolve(
            "heart", caller=EVERYONE, flat_results=flat
        )
    )
    # c:heart: flat hit at rank 2 (0.9/2 -> 0.25 * 0.45) and lexical rank 1 (0.6 -> 0.5 * 0.6)
    assert dict((i, c) for i, c, _ in base)["c:heart"] == round(1 - (1 - 0.45) * (1 - 0.6), 4)
    assert dict((i, c) for i, c, _ in scaled)["c:heart"] == round(1 - (1 - 0.1125) * (1 - 0.3), 4)


#: the posterior fusion (temperature > 0), as SENTENCE_TRANSFORMER_FUSION has it
POSTERIOR = FusionWeights(body=1.0, char=1.0, lexical=0.0, flat_hit=1 / 9, temperature=0.05, ngrams="hashing:4096:1-3")


def _softmax(x, tau):
    import numpy as np

    e = np.exp((x - x.max()) / tau)
    return e / e.sum()


@pytest.mark.parametrize("concept_text", ["title", "title+body"])
def test_posterior_fusion_is_the_weighted_mean_of_softmax_posteriors(concept_text):
    """An independent reference: per query, the softmax of each similarity / temperature over
    the concepts, weighted 1 : body : char; a hit needs one similarity >= the threshold."""
    import numpy as np

    w = FusionWeights(body=0.5, char=2.0, temperature=0.1, ngrams="hashing:1024:1-3")
    emb = DenseToy(w)
    kb = open_store(FUSED_NODES, [], [])
    thr = 0.3
    cfg = WalkConfig(
        concept_node_types=("CONCEPT",), semantic_threshold=thr, semantic_k=10, lexical_k=0, concept_text=concept_text
    )
    r = ConceptResolver(kb, cfg, embedder=emb)
    char = HashingEmbedder(dim=1024, ngram_range=(1, 3))
    concepts = [n for n in FUSED_NODES if n["type"] == "CONCEPT"]
    titles = [n["title"] for n in concepts]
    bodies = ["\n".join(p for p in (n["title"], n["body"]) if p) for n in concepts]
    main = titles if concept_text == "title" else bodies
    seen_cut = False
    for q in FUSED_QUERIES + ["river pressure", "zzz qqq"]:
        qv, qc = emb.embed([q])[0], char.embed([q])[0]
        t = (emb.embed(main) @ qv).astype(np.float64)
        b = (emb.embed(bodies) @ qv).astype(np.float64) if concept_text == "title" else t
        n = np.maximum(char.embed(titles) @ qc, 0).astype(np.float64)
        want = (_softmax(t, 0.1) + 0.5 * _softmax(b, 0.1) + 2.0 * _softmax(n, 0.1)) / 3.5
        hit = np.maximum(np.maximum(t, b), n) >= thr
        res = r.resolve(q, caller=EVERYONE)
        byid = {c.id: c.confidence for c in res}
        assert all(c.method == "semantic" for c in res)
        assert set(byid) == {c["id"] for c, h in zip(concepts, hit) if h}, q
        seen_cut |= 0 < hit.sum() < len(concepts)
        for c, s in zip(concepts, want.tolist()):
            if c["id"] in byid:
                assert byid[c["id"]] == pytest.approx(s, rel=1e-4, abs=1e-7), (q, c["id"])
        if res:
            assert res[0].id == concepts[int(np.argmax(np.where(hit, want, -1)))]["id"]
    assert seen_cut  # the threshold was exercised both ways


def test_posterior_fusion_exact_to_the_deletion_oracle_on_a_larger_store():
    """Many concepts and random scopes: the posteriors' maxima and normalisers are over the
    visible rows only, so every confidence equals the one on the store with the hidden
    concepts deleted, bit for bit."""
    import random

    rng = random.Random(19)
    words = "heart attack blood pressure river city graph walk page rank vector index moscow kyiv".split()
    nodes = [
        {
            "id": f"c:{i:03d}",
            "type": "CONCEPT",
            "title": " ".join(rng.sample(words, rng.randint(1, 3))) + f" {i}",
            "body": " ".join(rng.sample(words, 3)) if i % 3 else None,
            "scopes": rng.choice([[], [], ["t1"], ["t2"], ["t1", "t2"]]),
        }
        for i in range(240)
    ]
    kb = open_store(nodes, [], [])
    queries = ["heart attack", "moskva", "page rank of a graph", "vector", "blood river 17"]
    for scopes in [(), ("t1",), ("t2",)]:
        caller = Caller.with_scopes(*scopes) if scopes else Caller.public()
        oracle = deleted_store(nodes, [], [], caller)
        for w in (POSTERIOR, FusionWeights(body=1.0, char=0.5, temperature=0.02)):
            cfg = WalkConfig(concept_node_types=("CONCEPT",), semantic_k=5, semantic_max_k=20, lexical_k=3)
            r = ConceptResolver(kb, cfg, embedder=DenseToy(w))
            ro = ConceptResolver(oracle, cfg, embedder=DenseToy(w))
            for q in queries:
                mine = [(c.id, c.confidence, c.method) for c in r.resolve(q, caller=caller)]
                want = [(c.id, c.confidence, c.method) for c in ro.resolve(q, caller=EVERYONE)]
                assert mine == want, (scopes, q)
                assert mine  # the store has visible concepts for every query


def test_fusion_weights_temperature_and_ngrams_are_checked():
    assert POSTERIOR != FusionWeights(body=1.0, char=1.0, lexical=0.0, flat_hit=1 / 9)
    assert not FusionWeights(temperature=0.1).neutral and FusionWeights(ngrams="hashing:64").neutral
    assert "temperature=0.05" in repr(POSTERIOR) and "ngrams='hashing:4096:1-3'" in repr(POSTERIOR)
    for bad in ("st:/x", "hashing:", "hashing:512:4", 7):
        with pytest.raises(ValueError, match="ngrams must be a built-in embedder spec"):
            FusionWeights(ngrams=bad)
    with pytest.raises(ValueError, match="temperature must be a finite number >= 0"):
        FusionWeights(temperature=-0.1)
    r = ConceptResolver(make_kb(), WalkConfig(embedder=None), embedder=DenseToy(POSTERIOR))
    assert r._char.name == "hashing-v1-d4096-n1-3"  # the n-gram term reads the weights' spec


@pytest.mark.parametrize("scopes", [(), ("t1",), ("t2",), ("t1", "t2")])
def test_fused_semantic_score_exact_to_the_deletion_oracle(scopes):
    caller = Caller.with_scopes(*scopes) if scopes else Caller.public()
    oracle = deleted_store(FUSED_NODES, [], [], caller)
    kb = open_store(FUSED_NODES, [], [])
    hidden = {n["id"] for n in FUSED_NODES if n["scopes"] and not set(n["scopes"]) & set(scopes)}
    for w in (
        FusionWeights(body=1.0, char=0.4, lexical=1 / 12, flat_hit=1 / 18),
        FusionWeights(char=1.0),
        POSTERIOR,
        FusionWeights(body=0.5, char=2.0, temperature=0.3),
    ):
        cfg = WalkConfig(concept_node_types=("CONCEPT",), semantic_threshold=0.0, semantic_k=3)
        r = ConceptResolver(kb, cfg, embedder=DenseToy(w))
        ro = ConceptResolver(oracle, cfg, embedder=DenseToy(w))
        for q in FUSED_QUERIES:
            # the caller's flat search ranks what it sees (a hidden hit would be dropped anyway)
            flat = [{"id": n["id"]} for n in FUSED_NODES[::-1] if n["id"] not in hidden]
            mine = [(c.id, c.confidence, c.method) for c in r.resolve(q, caller=caller, flat_results=flat)]
            want = [(c.id, c.confidence, c.method) for c in ro.resolve(q, caller=EVERYONE, flat_results=flat)]
            assert mine == want, (q, w)
            assert not {i for i, _, _ in mine} & hidden
