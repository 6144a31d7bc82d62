"""The wrap's stop rule (issue 36), its missing-type warning and ``WalkConfig.for_kb`` (issue 32
item 2), and a caller-supplied query vector (issue 32 item 8)."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest

from conceptwalk import Caller, InputError, LinkGraph
from conceptwalk.cli import main
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import (
    ConceptAnchoredRetriever,
    ConceptResolver,
    WalkConfig,
    WalkTypesWarning,
    builtin_flat_search,
    load_event_schema,
    suggest_settings,
)
from conceptwalk.wrap.embed import get_embedder
from conceptwalk.wrap.probe import walk_types

EVERYONE = Caller.all_access()
PUBLIC = Caller.public()


def fixed(hits):
    return lambda text, k: list(hits)[:k]


# ---------------------------------------------------------------------------------- stop rule
def _stop_kb() -> LinkGraph:
    """c:a (alias 'alpha', the query) and c:b (named in the query, weaker): c:a's files are 1 hop,
    c:b's file 1 hop with a weak concept, and 2-hop files through RELATED_TO."""
    edges = [
        {"src": "c:a", "dst": "f:a1", "type": "IMPLEMENTED_BY"},
        {"src": "c:a", "dst": "f:a2", "type": "IMPLEMENTED_BY", "extraction_confidence": 0.9},
        {"src": "c:a", "dst": "c:r", "type": "RELATED_TO"},
        {"src": "c:r", "dst": "f:r1", "type": "IMPLEMENTED_BY"},
        {"src": "c:r", "dst": "f:r2", "type": "EXPLAINED_BY", "extraction_confidence": 0.3},
        {"src": "c:b", "dst": "f:b1", "type": "IMPLEMENTED_BY", "extraction_confidence": 0.2},
    ]
    nodes = [
        {"id": "c:a", "type": "CONCEPT", "title": "Alpha"},
        {"id": "c:b", "type": "CONCEPT", "title": "Beta"},
        {"id": "c:r", "type": "CONCEPT", "title": "Rho"},
    ] + [{"id": f, "type": "FILE", "title": f} for f in ("f:a1", "f:a2", "f:r1", "f:r2", "f:b1")]
    return LinkGraph.from_edges(edges, nodes=nodes)


def test_stop_rule_off_gives_the_output_before_the_rule():
    """Pinned: with ``stop_rule=False`` every candidate up to max_candidates is appended, as
    before the rule (the order and scores of main at 7e266d4)."""
    g = _stop_kb()
    r = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None, stop_rule=False))
    res = r.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    assert [(o["id"], round(o["walkScore"], 4), o["hops"]) for o in res.results] == [
        ("f:a1", 0.6, 1),
        ("f:a2", 0.54, 1),
        ("f:r1", 0.3, 2),
        ("f:b1", 0.12, 1),
        ("f:r2", 0.09, 2),
    ]  # what main at 7e266d4 returns for this query (checked with that checkout's install)
    assert res.cut == 0 and res.cut_by == {} and res.event["cut"] == 0 and res.event["cutBy"] == {}


def test_stop_rule_cuts_weak_evidence_and_says_why():
    g = _stop_kb()
    off = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None, stop_rule=False))
    on = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None))
    a = off.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    b = on.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    # below 0.25 x the best score (0.6): f:b1 (0.12) and f:r2 (0.09); f:r1 is 2 hops from a concept
    # resolved at 0.6 < 0.95
    assert [o["id"] for o in b.results] == ["f:a1", "f:a2"]
    assert b.cut == 3 and b.cut_by == {"score": 2, "hops": 1}
    assert b.event["cut"] == 3 and b.event["cutBy"] == {"score": 2, "hops": 1}
    assert b.event["candidatesAdded"] == 2 and a.event["candidatesAdded"] == 5
    assert all(x == y for x, y in zip(b.results, [o for o in a.results if o["id"] in ("f:a1", "f:a2")]))
    # the two tests are each configurable; 0 turns one off
    only_hops = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None, stop_score_ratio=0.0))
    got = only_hops.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    assert got.cut_by == {"hops": 2} and [o["id"] for o in got.results] == ["f:a1", "f:a2", "f:b1"]
    only_score = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None, stop_hop_confidence=0.0))
    got = only_score.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    assert got.cut_by == {"score": 2} and [o["id"] for o in got.results] == ["f:a1", "f:a2", "f:r1"]


def test_stop_rule_best_score_counts_candidates_the_flat_results_hold():
    """The reference is the walk's best candidate, also when the flat results already hold it."""
    g = _stop_kb()
    cfg = WalkConfig(embedder=None, stop_score_ratio=0.95, stop_hop_confidence=0.0)
    r = ConceptAnchoredRetriever(fixed([{"id": "f:a1"}]), g, config=cfg)
    res = r.run("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    assert [o["id"] for o in res.results] == ["f:a1"]  # f:a2 0.54 < 0.95 x 0.6
    assert res.event["filteredOut"] == 1 and res.cut >= 1


@pytest.mark.parametrize("seed", range(12))
def test_stop_rule_is_the_documented_filter_of_the_rule_off_output(seed):
    """On random graphs: rule on == rule off filtered by the documented tests, in order."""
    rng = random.Random(seed)
    n = 14
    ids = [f"c{i}" for i in range(5)] + [f"f{i}" for i in range(n - 5)]
    nodes = [{"id": i, "type": "CONCEPT" if i[0] == "c" else "FILE", "title": f"word{i}"} for i in ids]
    edges = []
    for _ in range(30):
        a, b = rng.sample(ids, 2)
        t = rng.choice(["RELATED_TO", "IMPLEMENTED_BY", "EXPLAINED_BY"])
        e = {"src": a, "dst": b, "type": t}
        if rng.random() < 0.5:
            e["extraction_confidence"] = round(rng.random(), 2)
        edges.append(e)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    ratio, hc = rng.choice([0.0, 0.25, 0.5, 0.8]), rng.choice([0.0, 0.5, 0.95, 1.0])
    support = rng.choice([0, 1, 2])
    text = " ".join(f"word{c}" for c in rng.sample(ids[:5], 2))
    flat_ids = rng.sample(ids, 3)
    flat = fixed([{"id": i} for i in flat_ids])
    kw = dict(embedder=None, max_candidates=8)
    off = ConceptAnchoredRetriever(flat, g, config=WalkConfig(stop_rule=False, **kw))
    on = ConceptAnchoredRetriever(
        flat,
        g,
        config=WalkConfig(stop_score_ratio=ratio, stop_hop_confidence=hc, stop_flat_support=support, **kw),
    )
    a = off.run(text, 3, concept_walk=True, caller=EVERYONE)
    b = on.run(text, 3, concept_walk=True, caller=EVERYONE)
    conf = {c.id: c.confidence for c in a.concepts}
    added = a.results[a.event["flatCount"] :]
    # the best over every candidate of the walk: the appended ones and those the flat results hold
    pool = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(stop_rule=False, **kw))
    every = pool.run(text, 3, concept_walk=True, caller=EVERYONE)
    held = set(flat_ids)
    best = max((o["walkScore"] for o in every.results), default=0.0) if every.concepts == a.concepts else None
    if best is None:  # the flat hit changed the resolution: compare the shape only
        assert len(b.results) <= len(a.results)
        return
    want, why = [], {"score": 0, "hops": 0}
    for o in added:
        if o["walkScore"] < ratio * best:
            why["score"] += 1
        elif (
            o["hops"] > 1
            and conf[o["concept"]] < hc
            and not (support and len(held & set(g.neighbors(o["id"]))) >= support)
        ):
            why["hops"] += 1
        else:
            want.append(o)
    assert b.results[b.event["flatCount"] :] == want
    assert b.cut_by == {k: v for k, v in why.items() if v} and b.cut == len(added) - len(want)


def test_stop_rule_keeps_a_two_hop_candidate_the_flat_results_support():
    """A candidate two hops from a concept resolved below stop_hop_confidence is appended when
    at least stop_flat_support flat results are its neighbours, counted over what the caller
    sees (a hidden neighbour supports nothing, whatever the flat search returned)."""
    base = [
        {"src": "c:a", "dst": "f:a1", "type": "IMPLEMENTED_BY"},
        {"src": "c:a", "dst": "f:a2", "type": "IMPLEMENTED_BY", "extraction_confidence": 0.9},
        {"src": "c:a", "dst": "c:r", "type": "RELATED_TO"},
        {"src": "c:r", "dst": "f:r1", "type": "IMPLEMENTED_BY"},
        {"src": "d:x", "dst": "f:r1", "type": "CITES"},  # no walk gate: the walk is unchanged
        {"src": "d:y", "dst": "f:r1", "type": "CITES"},
    ]
    nodes = [
        {"id": "c:a", "type": "CONCEPT", "title": "Alpha"},
        {"id": "c:r", "type": "CONCEPT", "title": "Rho"},
        {"id": "d:x", "type": "DOC", "title": "x"},
        {"id": "d:y", "type": "DOC", "title": "y", "scopes": ["secret"]},
    ] + [{"id": f, "type": "FILE", "title": f} for f in ("f:a1", "f:a2", "f:r1")]
    g = LinkGraph.from_edges(base, nodes=nodes)

    def added(flat, caller=EVERYONE, **kw):
        r = ConceptAnchoredRetriever(fixed(flat), g, config=WalkConfig(embedder=None, stop_score_ratio=0.0, **kw))
        res = r.run("alpha", 10, concept_walk=True, caller=caller)
        return [o["id"] for o in res.results[res.event["flatCount"] :]], res.cut_by

    # f:r1 is two hops from c:a, resolved below 1.0 (the default stop_hop_confidence)
    assert added([]) == (["f:a1", "f:a2"], {"hops": 1})
    assert added([{"id": "d:x"}]) == (["f:a1", "f:a2", "f:r1"], {})
    assert added([{"id": "d:x"}], stop_flat_support=0) == (["f:a1", "f:a2"], {"hops": 1})
    assert added([{"id": "d:x"}], stop_flat_support=2) == (["f:a1", "f:a2"], {"hops": 1})
    assert added([{"id": "d:x"}, {"id": "d:y"}], stop_flat_support=2) == (["f:a1", "f:a2", "f:r1"], {})
    # d:y is hidden from the public caller: it supports nothing even when the flat search names it
    assert added([{"id": "d:x"}, {"id": "d:y"}], PUBLIC, stop_flat_support=2) == (["f:a1", "f:a2"], {"hops": 1})
    with pytest.raises(InputError, match="stop_flat_support must be an integer >= 0"):
        WalkConfig(stop_flat_support=-1)
    with pytest.raises(InputError, match="stop_flat_support"):
        WalkConfig(stop_flat_support=True)


def test_events_with_cuts_and_missing_types_match_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(load_event_schema())
    g = _stop_kb()
    events = []
    r = ConceptAnchoredRetriever(fixed([]), g, config=WalkConfig(embedder=None), event_sink=events.append)
    r.query("alpha and beta", 10, concept_walk=True, caller=EVERYONE)
    r2 = ConceptAnchoredRetriever(
        fixed([]), g, config=WalkConfig(embedder=None, admit_edge_types=["nope"]), event_sink=events.append
    )
    with pytest.warns(WalkTypesWarning):
        r2.query("alpha", 10, concept_walk=True, caller=EVERYONE)
    assert events[0]["cut"] == 3
    assert events[1]["missingTypes"] == {"expandEdgeTypes": ["PARENT_CONCEPT"], "admitEdgeTypes": ["nope"]}
    for ev in events:
        validator.validate(ev)
    bad = dict(events[0], cutBy={"vibes": 1})
    assert not validator.is_valid(bad)


# ---------------------------------------------------------------------------------- KB's own types
NET_NODES = [
    {"id": "tls", "type": "CONCEPT", "title": "Transport Layer Security"},
    {"id": "tcp", "type": "CONCEPT", "title": "Transmission Control Protocol"},
    {"id": "ip", "type": "CONCEPT", "title": "Internet Protocol"},
    {"id": "bgp", "type": "CONCEPT", "title": "Border Gateway Protocol", "scopes": ["netops"]},
    {"id": "rfc8446", "type": "RFC", "title": "RFC 8446 TLS 1.3"},
    {"id": "rfc793", "type": "RFC", "title": "RFC 793 TCP"},
    {"id": "rfc4271", "type": "RFC", "title": "RFC 4271 BGP-4", "scopes": ["netops"]},
    {"id": "nginx", "type": "SERVICE", "title": "nginx edge proxy"},
    {"id": "router1", "type": "DEVICE", "title": "core router 1", "scopes": ["netops"]},
]
NET_EDGES = [
    {"src": "tls", "dst": "tcp", "type": "runs_over"},
    {"src": "tcp", "dst": "ip", "type": "runs_over"},
    {"src": "bgp", "dst": "tcp", "type": "runs_over"},
    {"src": "tls", "dst": "rfc8446", "type": "specified_in"},
    {"src": "tcp", "dst": "rfc793", "type": "specified_in"},
    {"src": "bgp", "dst": "rfc4271", "type": "specified_in"},
    {"src": "nginx", "dst": "tls", "type": "terminates"},
    {"src": "router1", "dst": "bgp", "type": "speaks"},
]


@pytest.fixture()
def net_kb(tmp_path):
    kb = KnowledgeBase.create(str(tmp_path / "net.db"))
    kb.add_nodes(NET_NODES)
    kb.add_edges(NET_EDGES)
    kb.add_aliases([("ssl", "tls")])
    yield kb
    kb.close()


def test_a_kb_with_its_own_edge_types_warns_and_names_them(net_kb):
    r = ConceptAnchoredRetriever(builtin_flat_search(net_kb), net_kb, config=WalkConfig(embedder=None))
    with pytest.warns(WalkTypesWarning, match="admission edge types IMPLEMENTED_BY, EXPLAINED_BY") as got:
        res = r.run("ssl", 5, concept_walk=True, caller=PUBLIC)
    assert len(got) == 1 and "WalkConfig.for_kb" in str(got[0].message)
    assert res.event["candidatesAdded"] == 0 and res.concepts  # resolved, and silent before: now it says why
    want = {
        "expandEdgeTypes": ["PARENT_CONCEPT", "RELATED_TO"],
        "admitEdgeTypes": ["IMPLEMENTED_BY", "EXPLAINED_BY", "ATTACHED_TO", "TAGGED_CONCEPT"],
    }
    assert res.missing_types == want and res.event["missingTypes"] == want
    with warnings.catch_warnings():  # once per retriever, state and caller
        warnings.simplefilter("error")
        r.run("ssl", 5, concept_walk=True, caller=PUBLIC)


def test_for_kb_takes_the_kbs_own_types_and_the_walk_adds(net_kb):
    cfg = WalkConfig.for_kb(net_kb, caller=PUBLIC, embedder=None)
    assert cfg.concept_node_types == ("CONCEPT",)
    assert cfg.admit_edge_types == ("specified_in", "terminates")
    assert cfg.expand_edge_types == ("runs_over",)
    r = ConceptAnchoredRetriever(builtin_flat_search(net_kb), net_kb, config=cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = r.run("ssl", 5, concept_walk=True, caller=PUBLIC)
    added = [o["id"] for o in res.results if o.get("via") == "concept-walk"]
    assert "rfc8446" in added and res.missing_types == {}
    assert not any(x in json.dumps(res.results) for x in ("bgp", "rfc4271", "router1"))


def test_missing_types_are_counted_over_what_the_caller_sees(net_kb):
    """'speaks' exists only on a netops edge: missing for a public caller, present for netops,
    exactly as on the store with the hidden nodes deleted."""
    cfg = WalkConfig(embedder=None, admit_edge_types=["speaks", "specified_in"])
    for who, want in ((PUBLIC, {"admitEdgeTypes": ["speaks"]}), (Caller.with_scopes("netops"), {})):
        r = ConceptAnchoredRetriever(builtin_flat_search(net_kb), net_kb, config=cfg)
        res = r.run("tls", 5, concept_walk=True, caller=who)
        assert {k: v for k, v in res.missing_types.items() if k != "expandEdgeTypes"} == want
    deleted = LinkGraph.from_edges(
        [e for e in NET_EDGES if not {e["src"], e["dst"]} & {"bgp", "rfc4271", "router1"}],
        nodes=[n for n in NET_NODES if not n.get("scopes")],
    )
    r = ConceptAnchoredRetriever(fixed([]), deleted, config=cfg)
    assert r.run("tls", 5, concept_walk=True, caller=EVERYONE).missing_types["admitEdgeTypes"] == ["speaks"]
    # for_kb for the public caller never picks a type only hidden edges carry
    assert "speaks" not in WalkConfig.for_kb(net_kb, caller=PUBLIC).admit_edge_types
    assert WalkConfig.for_kb(net_kb, caller=PUBLIC) == WalkConfig.for_kb(deleted, caller=EVERYONE)


def test_for_kb_rule_on_a_kb_of_concepts_only_and_a_missing_concept_type():
    g = LinkGraph.from_edges(
        [("w1", "w2", "ChildOf"), ("w2", "w3", "ChildOf"), ("w1", "w3", "PeerOf"), ("w3", "w3", "ChildOf")],
        nodes=[{"id": i, "type": "WEAKNESS", "title": i} for i in ("w1", "w2", "w3")],
    )
    cfg = WalkConfig.for_kb(g, caller=EVERYONE)
    assert (cfg.concept_node_types, cfg.expand_edge_types, cfg.admit_edge_types) == (
        ("WEAKNESS",),
        ("ChildOf",),
        ("ChildOf", "PeerOf"),
    )
    with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
        WalkConfig.for_kb(g, caller=None)
    # probe's suggestion uses the same rule
    s = suggest_settings(g, caller=EVERYONE)
    assert (s["expandEdgeTypes"], s["admitEdgeTypes"]) == (["ChildOf"], ["ChildOf", "PeerOf"])
    assert walk_types(g, WalkConfig(concept_node_types=("WEAKNESS",)), caller=EVERYONE)[1:] == (
        ("ChildOf",),
        ("ChildOf", "PeerOf"),
    )


def test_probe_suggestion_is_not_every_type_in_both_gates(net_kb):
    s = suggest_settings(net_kb, caller=PUBLIC, kb_path="net.db")
    assert s is not None and s["conceptNodeTypes"] == ["CONCEPT"]
    assert s["expandEdgeTypes"] == ["runs_over"] and s["admitEdgeTypes"] == ["specified_in", "terminates"]
    assert "--expand-edge-types runs_over --admit-edge-types specified_in,terminates" in s["command"]


def test_cli_query_warns_then_walk_types_auto_adds(net_kb, capsys):
    path = net_kb.path
    assert main(["query", path, "ssl", "--concept-walk"]) == 0
    out = capsys.readouterr()
    assert "walk added 0" in out.out
    assert "conceptwalk: warning: the walk's admission edge types IMPLEMENTED_BY" in out.err
    assert main(["query", path, "ssl", "--concept-walk", "--walk-types", "auto"]) == 0
    out = capsys.readouterr()
    assert "walk added 0" not in out.out and "+ rfc8446" in out.out and "warning" not in out.err
    assert main(["query", path, "ssl", "--concept-walk", "--walk-types", "auto", "--json", "--no-stop-rule"]) == 0
    assert any(o.get("id") == "rfc8446" for o in json.loads(capsys.readouterr().out))


# ---------------------------------------------------------------------------------- query vector
class CountingEmbedder:
    def __init__(self, spec="hashing:256"):
        self.inner = get_embedder(spec)
        self.name, self.dim, self.calls, self.texts = self.inner.name, self.inner.dim, 0, []

    def embed(self, texts):
        self.calls += 1
        self.texts += list(texts)
        return self.inner.embed(texts)


def _vec_kb(tmp_path):
    kb = KnowledgeBase.create(str(tmp_path / "v.db"))
    kb.add_nodes(
        [
            {"id": "c:ppr", "type": "CONCEPT", "title": "Personalized PageRank"},
            {"id": "c:bm25", "type": "CONCEPT", "title": "BM25 ranking"},
            {"id": "f:push", "type": "FILE", "title": "push.cpp"},
        ]
    )
    kb.add_edges([{"src": "c:ppr", "dst": "f:push", "type": "IMPLEMENTED_BY"}])
    return kb


def test_query_vector_is_used_and_the_embedder_not_called_again(tmp_path):
    kb = _vec_kb(tmp_path)
    emb = CountingEmbedder()
    r = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(lexical_k=0), embedder=emb)
    text = "personalised pagerank"
    want = r.run(text, 3, concept_walk=True, caller=EVERYONE)
    before = emb.calls
    r.run(text, 3, concept_walk=True, caller=EVERYONE)
    assert emb.calls == before + 1  # without a vector the query is embedded
    vec = emb.inner.embed([text])[0]
    got = r.run(text, 3, concept_walk=True, caller=EVERYONE, query_vector=vec, query_model=emb.name)
    assert emb.calls == before + 1  # with it, not again
    assert got.results == want.results and got.concepts == want.concepts and got.concepts
    res = ConceptResolver(kb, WalkConfig(lexical_k=0), embedder=emb)
    n = emb.calls
    assert res.resolve(text, caller=EVERYONE, query_vector=vec) == want.concepts[: len(want.concepts)]
    assert emb.calls == n
    # the similarity rerank reads the same vector
    rr = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(lexical_k=0, rank_by="similarity"), embedder=emb)
    n = len(emb.texts)
    rr.run(text, 3, concept_walk=True, caller=EVERYONE, query_vector=vec)
    assert text not in emb.texts[n:]  # (the candidates' own vectors are embedded once, the query never)
    kb.close()


def test_query_vector_that_does_not_match_is_refused(tmp_path):
    kb = _vec_kb(tmp_path)
    emb = CountingEmbedder()
    r = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(), embedder=emb)
    with pytest.raises(InputError, match=r"query_vector must have shape \(256,\)"):
        r.query("x", 3, concept_walk=True, caller=EVERYONE, query_vector=np.zeros(3))
    with pytest.raises(InputError, match="query_vector was made by 'st:other', but the resolver's embedder is"):
        r.query("x", 3, concept_walk=True, caller=EVERYONE, query_vector=np.zeros(256), query_model="st:other")
    with pytest.raises(InputError, match="query_vector must be finite"):
        r.query("x", 3, concept_walk=True, caller=EVERYONE, query_vector=np.full(256, np.nan))
    none = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(embedder=None))
    with pytest.raises(InputError, match="the resolver has no embedder to match it"):
        none.query("x", 3, concept_walk=True, caller=EVERYONE, query_vector=np.zeros(256))
    with pytest.raises(InputError, match="no query_vector was given"):
        r.query("x", 3, concept_walk=True, caller=EVERYONE, query_model=emb.name)
    kb.close()


def test_builtin_embedding_search_and_the_resolver_embed_the_query_once(tmp_path):
    """The built-in embedding flat search and the resolver share one model: one embedding of the
    query per wrapped call, the same results as two embeddings."""
    kb = _vec_kb(tmp_path)
    emb = CountingEmbedder()
    flat = builtin_flat_search(kb, mode="embedding", embedder=emb)
    r = ConceptAnchoredRetriever(flat, kb, config=WalkConfig(lexical_k=0), embedder=emb)
    text = "personalised pagerank"
    r.run(text, 3, concept_walk=True, caller=EVERYONE)  # (first call: node vectors embedded once)
    n = len(emb.texts)
    got = r.run(text, 3, concept_walk=True, caller=EVERYONE)
    assert emb.texts[n:].count(text) == 1
    mine, theirs = CountingEmbedder("hashing:256"), CountingEmbedder("hashing:128")  # two models
    apart = ConceptAnchoredRetriever(
        builtin_flat_search(kb, mode="embedding", embedder=theirs), kb, config=WalkConfig(lexical_k=0), embedder=mine
    )
    apart.run(text, 3, concept_walk=True, caller=EVERYONE)
    m, t = len(mine.texts), len(theirs.texts)
    apart.run(text, 3, concept_walk=True, caller=EVERYONE)
    assert mine.texts[m:].count(text) == 1 and theirs.texts[t:].count(text) == 1  # each its own model
    flat_only = builtin_flat_search(kb, mode="embedding", embedder=get_embedder("hashing:256"))
    assert got.results[: got.event["flatCount"]] == flat_only(text, 3, caller=EVERYONE)
    vec = emb.inner.embed([text])[0]
    n = len(emb.texts)
    assert r.run(text, 3, concept_walk=True, caller=EVERYONE, query_vector=vec).results == got.results
    assert text not in emb.texts[n:]  # the caller's vector serves both
    kb.close()
