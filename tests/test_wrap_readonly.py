"""Reads never write: no query (resolver, wrapped query with either built-in flat search, probe)
changes the store's version or its file bytes; concept vectors are held in memory with the
snapshot and shared, so the one-call resolve does not redo what a reused resolver did."""

from __future__ import annotations

import numpy as np

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, ConceptResolver, WalkConfig, builtin_flat_search, probe, resolve
from conceptwalk.wrap.embed import HashingEmbedder
from test_wrap_retriever import make_kb

EVERYONE = Caller.all_access()
PUBLIC = Caller.public()


def test_no_query_writes_to_the_store(tmp_path):
    path = tmp_path / "kb.db"
    kb = make_kb(str(path))
    kb.close()
    before = path.read_bytes()
    kb = KnowledgeBase.open(str(path))
    version = kb.version
    for mode in ("fts", "embedding"):
        r = ConceptAnchoredRetriever(builtin_flat_search(kb, mode=mode), kb, config=WalkConfig(embedder="hashing:64"))
        for text in ("authn", "session tokens", "billing ledger", "secret sauce", "nothing at all"):
            for who in (EVERYONE, PUBLIC):
                r.query(text, 5, concept_walk=True, caller=who)
                resolve(kb, text, caller=who)
    probe(kb, caller=EVERYONE)
    assert kb.version == version
    assert kb.stats()["embeddings"] == {}
    kb.close()
    assert path.read_bytes() == before


class CountingEmbedder:
    name = "counting-d32"
    dim = 32

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=32)
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_one_call_resolve_shares_the_snapshot_caches_with_a_reused_resolver():
    kb = make_kb()
    emb = CountingEmbedder()
    cfg = WalkConfig()
    reused = ConceptResolver(kb, cfg, embedder=emb)
    first = reused.resolve("session tokens", caller=EVERYONE)
    n_concepts = emb.texts - 1  # the concepts once, plus the query
    assert n_concepts == 5
    for _ in range(3):
        assert resolve(kb, "session tokens", caller=EVERYONE, embedder=emb) == first
    assert emb.texts == n_concepts + 1 + 3  # only the queries were embedded again
    kb.add_nodes([{"id": "c:new", "type": "CONCEPT", "title": "New concept"}])
    # a new snapshot: the new concept is embedded, the others are brought forward (and the query)
    resolve(kb, "session tokens", caller=EVERYONE, embedder=emb)
    assert emb.texts == n_concepts + 1 + 3 + 1 + 1
    assert np.isfinite(first[0].confidence)
