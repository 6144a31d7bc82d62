"""Concept-anchored retrieval: default-off byte identity, merge order, visibility, budgets,
hop cap, gates and provenance."""

from __future__ import annotations

import json
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, InputError, LinkGraph
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import (
    ABSENT_IN_PROJECTION,
    ABSENT_IN_STORAGE,
    ConceptAnchoredRetriever,
    WalkConfig,
    WalkTypesWarning,
    builtin_flat_search,
)

EVERYONE = Caller.all_access()
PUBLIC = Caller.public()
T1 = Caller.with_scopes("t1")
NOEMB = WalkConfig(embedder=None)

NODES = [
    {"id": "c:auth", "type": "CONCEPT", "title": "Authentication", "body": "login and token checks"},
    {"id": "c:tokens", "type": "CONCEPT", "title": "Session tokens", "body": "issuing and expiring tokens"},
    {"id": "c:secret", "type": "CONCEPT", "title": "Secret sauce", "body": "the hidden recipe", "scopes": ["t1"]},
    {"id": "c:billing", "type": "CONCEPT", "title": "Billing ledger", "body": "invoices and payments"},
    {"id": "c:auth-old", "type": "CONCEPT", "title": "Auth (old page)"},
    {"id": "f:login", "type": "FILE", "title": "login.py"},
    {"id": "f:jwt", "type": "FILE", "title": "jwt.py"},
    {"id": "f:hidden", "type": "FILE", "title": "hidden.py", "scopes": ["t1"]},
    {"id": "f:ledger", "type": "FILE", "title": "ledger.py"},
    {"id": "d:adr1", "type": "DECISION", "title": "Use JWT for sessions"},
    {"id": "m:note", "type": "MEMORY", "title": "Note on token expiry"},
]
EDGES = [
    {"src": "c:auth", "dst": "c:tokens", "type": "RELATED_TO", "authority": "canonical"},
    {
        "src": "c:auth",
        "dst": "f:login",
        "type": "IMPLEMENTED_BY",
        "authority": "reviewed",
        "extraction_method": "MANUAL",
        "extraction_confidence": 0.9,
    },
    {
        "src": "c:tokens",
        "dst": "f:jwt",
        "type": "IMPLEMENTED_BY",
        "fidelity": "verbatim",
        "extraction_method": "TAGGED_CONCEPT",
        "extraction_confidence": 1.0,
        "lifecycle": "active",
    },
    {
        "src": "c:tokens",
        "dst": "d:adr1",
        "type": "EXPLAINED_BY",
        "extraction_method": "TAGGED_CONCEPT",
        "extraction_confidence": 0.8,
    },
    {"src": "m:note", "dst": "c:tokens", "type": "ATTACHED_TO"},
    {"src": "c:auth", "dst": "c:secret", "type": "RELATED_TO"},
    {"src": "c:secret", "dst": "f:hidden", "type": "IMPLEMENTED_BY"},
    {"src": "c:auth", "dst": "f:hidden", "type": "IMPLEMENTED_BY"},
    {"src": "c:billing", "dst": "f:ledger", "type": "IMPLEMENTED_BY"},
    {"src": "c:auth-old", "dst": "f:login", "type": "MENTIONS"},
]
ALIASES = [("authn", "c:auth"), ("c:auth-old", "c:auth"), ("secret sauce", "c:secret")]


def make_kb(path: str = ":memory:", *, drop: tuple[str, ...] = ()) -> KnowledgeBase:
    kb = KnowledgeBase.create(path)
    kb.add_nodes([n for n in NODES if n["id"] not in drop])
    kb.add_edges([e for e in EDGES if e["src"] not in drop and e["dst"] not in drop])
    kb.add_aliases([a for a in ALIASES if a[1] not in drop and a[0] not in drop])
    return kb


@pytest.fixture()
def kb():
    k = make_kb()
    yield k
    k.close()


def fixed(results):
    return lambda text, k: [dict(r) for r in results]


def strip_times(event):
    return {k: v for k, v in event.items() if k not in ("timestamp", "flatMs", "resolveMs", "walkMs")}


# --------------------------------------------------------------------------- byte identity
FLAT = [{"id": "f:ledger", "score": 2.5, "extra": {"nested": [1, "é", None]}}, {"id": "zz-not-in-kb", "score": 1.0}]


def test_flag_absent_and_false_are_byte_identical(kb):
    r = ConceptAnchoredRetriever(fixed(FLAT), kb)
    want = json.dumps(FLAT)
    assert json.dumps(r.query("authn", 5, caller=EVERYONE)) == want
    assert json.dumps(r.query("authn", 5, concept_walk=False, caller=EVERYONE)) == want
    # the walk would add here, so the two differ only by the flag
    assert json.dumps(r.query("authn", 5, concept_walk=True, caller=EVERYONE)) != want


def test_builtin_flat_byte_identical_with_flag_off(kb):
    flat = builtin_flat_search(kb)
    r = ConceptAnchoredRetriever(flat, kb)
    for text in ("tokens", "billing ledger", "nothing matches this"):
        for who in (EVERYONE, PUBLIC, T1):
            assert json.dumps(r.query(text, 3, caller=who)) == json.dumps(flat(text, 3, caller=who))


def test_walk_that_adds_nothing_is_byte_identical(kb):
    events = []
    # c:billing resolves (alias-free normalized match) but its only candidate is already in the flat results
    r = ConceptAnchoredRetriever(fixed(FLAT), kb, config=NOEMB, event_sink=events.append)
    out = r.query("billing ledger", 5, concept_walk=True, caller=EVERYONE)
    assert json.dumps(out) == json.dumps(FLAT)
    ev = events[-1]
    assert [c["id"] for c in ev["resolvedConcepts"]] == ["c:billing"]
    assert ev["walkContributed"] is False and ev["candidatesAdded"] == 0 and ev["filteredOut"] == 1
    # nothing resolves at all
    out = r.query("zzz qqq", 5, concept_walk=True, caller=EVERYONE)
    assert json.dumps(out) == json.dumps(FLAT)
    assert events[-1]["resolvedConcepts"] == [] and events[-1]["candidatesAdded"] == 0


# --------------------------------------------------------------------------- merge
def test_merge_appends_ranked_candidates_with_paths(kb):
    r = ConceptAnchoredRetriever(fixed([{"id": "f:jwt", "score": 9}]), kb, config=NOEMB)
    out = r.query("how does authn work", 5, concept_walk=True, caller=PUBLIC)
    assert out[0] == {"id": "f:jwt", "score": 9}
    added = out[1:]
    assert all(a["via"] == "concept-walk" for a in added)
    ids = [a["id"] for a in added]
    # f:login: 1 hop, 1.0 * 0.9; d:adr1: 2 hops 0.5 * 0.8; m:note: 2 hops 0.5 * 1 (no confidence)
    assert ids == ["f:login", "m:note", "d:adr1"]
    assert [a["walkScore"] for a in added] == pytest.approx([0.9, 0.5, 0.4])
    login = added[0]
    assert login["concept"] == "c:auth" and login["hops"] == 1 and login["type"] == "FILE"
    assert login["paths"][0]["nodes"] == ["c:auth", "f:login"]
    note = added[1]["paths"][0]
    assert note["nodes"] == ["c:auth", "c:tokens", "m:note"]
    assert [h["type"] for h in note["hops"]] == ["RELATED_TO", "ATTACHED_TO"]
    assert [h["direction"] for h in note["hops"]] == ["forward", "backward"]
    json.dumps(out)  # JSON-ready


def test_fragmented_alias_id_resolves_to_canonical(kb):
    events = []
    r = ConceptAnchoredRetriever(fixed([{"id": "c:auth-old"}]), kb, config=NOEMB, event_sink=events.append)
    r.query("zzz", 5, concept_walk=True, caller=EVERYONE)
    assert events[-1]["resolvedConcepts"] == [{"id": "c:auth", "confidence": 0.9, "method": "flat-hit"}]


@settings(max_examples=40)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"id": st.sampled_from([n["id"] for n in NODES] + ["ghost", "c:AUTH"])},
            optional={"score": st.floats(allow_nan=False, allow_infinity=False), "x": st.text(max_size=3)},
        ),
        max_size=8,
    ),
    st.sampled_from(["authn", "session tokens", "billing", "secret sauce", "", "jwt"]),
    st.sampled_from([EVERYONE, PUBLIC, T1]),
    st.integers(1, 4),
)
def test_flat_results_never_displaced(flat, text, who, k):
    kb = _SHARED_KB
    before = json.dumps(flat)
    r = ConceptAnchoredRetriever(lambda t, kk: flat, kb, config=WalkConfig(max_candidates=k))
    out = r.query(text, 5, concept_walk=True, caller=who)
    assert out[: len(flat)] == flat and all(a is b for a, b in zip(out, flat))
    assert json.dumps(flat) == before  # the flat dicts were not touched
    extra = out[len(flat) :]
    flat_ids = {f["id"] for f in flat}
    g = kb.graph()
    vis = who.visibility(g)
    for item in extra:
        assert item["via"] == "concept-walk" and item["id"] not in flat_ids
        for p in item["paths"]:
            for nid in p["nodes"]:
                assert vis is None or vis.mask[g.index(nid)]
    assert len({i["id"] for i in extra}) == len(extra) <= k
    # best-first: by score, ties by how many resolved concepts reach the candidate
    scores = [(-i["walkScore"], -i["conceptsReaching"]) for i in extra]
    assert scores == sorted(scores)
    if not extra:
        assert json.dumps(out) == before


_SHARED_KB = make_kb()


# --------------------------------------------------------------------------- visibility
def test_hidden_nodes_never_reached_counted_or_in_a_path(tmp_path):
    full = make_kb()
    cut = make_kb(drop=("c:secret", "f:hidden"))
    flat = [{"id": "d:adr1", "score": 1.0}]
    for text in ("authn", "secret sauce", "Authentication and the secret sauce", "hidden.py"):
        ev_full, ev_cut = [], []
        a = ConceptAnchoredRetriever(fixed(flat), full, event_sink=ev_full.append)
        b = ConceptAnchoredRetriever(fixed(flat), cut, event_sink=ev_cut.append)
        out_a = a.query(text, 5, concept_walk=True, caller=PUBLIC)
        out_b = b.query(text, 5, concept_walk=True, caller=EVERYONE)
        assert json.dumps(out_a) == json.dumps(out_b)
        assert strip_times(ev_full[-1]) == strip_times(ev_cut[-1])
        for hidden_id in ("c:secret", "f:hidden"):
            assert hidden_id not in json.dumps(out_a) and hidden_id not in json.dumps(ev_full[-1])
    # with the scope the hidden nodes are reachable
    r = ConceptAnchoredRetriever(fixed(flat), full, config=NOEMB)
    ids = {x["id"] for x in r.query("secret sauce", 5, concept_walk=True, caller=T1)}
    assert "f:hidden" in ids


def test_builtin_flat_search_is_caller_aware(kb):
    flat = builtin_flat_search(kb)
    assert "f:hidden" not in {h["id"] for h in flat("hidden", 5)}  # no caller anywhere: public only
    assert "f:hidden" in {h["id"] for h in flat("hidden", 5, caller=EVERYONE)}
    assert "f:hidden" not in {h["id"] for h in flat("hidden", 5, caller=PUBLIC)}
    r = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=PUBLIC), kb)
    assert r.query("hidden", 5, caller=PUBLIC) == []
    assert [h["id"] for h in r.query("hidden", 5, caller=T1)] == ["f:hidden", "c:secret"]
    emb = builtin_flat_search(kb, mode="embedding", embedder="hashing:64")
    hits = emb("session tokens", 3, caller=PUBLIC)
    assert hits[0]["id"] == "c:tokens" and set(hits[0]) == {"id", "type", "title", "score"}
    assert all(h["id"] not in ("f:hidden", "c:secret") for h in emb("secret hidden", 20, caller=PUBLIC))


# --------------------------------------------------------------------------- budgets and cap
def test_hop_cap():
    with pytest.raises(InputError, match="max_hops"):
        WalkConfig(max_hops=3)
    with pytest.raises(InputError, match="max_hops"):
        WalkConfig(max_hops=0)


def test_one_hop_walk_only_direct_neighbours(kb):
    r = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(max_hops=1, embedder=None))
    out = r.query("authn", 5, concept_walk=True, caller=PUBLIC)
    assert [o["id"] for o in out] == ["f:login"]
    assert all(len(p["hops"]) == 1 for o in out for p in o["paths"])


@pytest.fixture(scope="module")
def synth_kb():
    from conceptwalk.kb import synthetic

    syn = synthetic.generate(80, seed=3)
    k = KnowledgeBase.open(":memory:")
    k.add_nodes(syn.node_rows())
    k.add_edges(syn.edge_rows())
    k.add_aliases(syn.alias_rows())
    return k, syn.queries(12, seed=1)


def _unbudgeted(kb, text, who, cfg):
    big = WalkConfig(
        max_hops=cfg.max_hops,
        max_edges=10**9,
        max_candidates=10**9,
        max_concepts=cfg.max_concepts,
        embedder=cfg.embedder,
    )
    ev = []
    ConceptAnchoredRetriever(fixed([]), kb, config=big, event_sink=ev.append).query(
        text, 1, concept_walk=True, caller=who
    )
    return ev[-1]


@settings(max_examples=30)
@given(
    st.integers(0, 12),
    st.integers(0, 60),
    st.integers(0, 25),
    st.integers(1, 3),
    st.integers(1, 2),
    st.sampled_from([EVERYONE, PUBLIC, Caller.with_scopes("tenant-a")]),
)
def test_truncated_exactly_when_a_budget_cut(synth_kb, qi, max_edges, max_cands, max_concepts, hops, who):
    kb, queries = synth_kb
    text = queries[qi % len(queries)]["text"]
    cfg = WalkConfig(
        max_hops=hops, max_edges=max_edges, max_candidates=max_cands, max_concepts=max_concepts, embedder="hashing:64"
    )
    ev = []
    out = ConceptAnchoredRetriever(fixed([]), kb, config=cfg, event_sink=ev.append).query(
        text, 1, concept_walk=True, caller=who
    )
    e = ev[-1]
    free = _unbudgeted(kb, text, who, cfg)
    resolved_all = len(ConceptAnchoredRetriever(fixed([]), kb, config=cfg).resolver.resolve(text, caller=who))
    cut_edges = free["edgesVisited"] > max_edges
    cut_cands = free["candidatesAdded"] > max_cands
    cut_concepts = resolved_all > max_concepts
    assert e["truncated"] == (cut_edges or cut_cands or cut_concepts)
    assert ("concepts" in e["truncatedBy"]) == cut_concepts
    assert e["edgesVisited"] <= max_edges and e["candidatesAdded"] <= max_cands
    assert len(e["resolvedConcepts"]) <= max_concepts
    assert len(out) == e["candidatesAdded"]
    assert all(len(p["hops"]) <= hops for o in out for p in o["paths"])
    if not e["truncated"]:
        assert strip_times(e) == strip_times(free)


def test_gate_overrides_use_a_kbs_own_vocabulary():
    g = LinkGraph.from_edges(
        [
            ("t:phishing", "m:training", "mitigates"),
            ("t:phishing", "d:mailscan", "detects"),
            ("t:phishing", "t:spearphish", "subtechnique"),
            ("t:spearphish", "m:dmarc", "mitigates"),
        ],
        nodes=[
            {"id": "t:phishing", "type": "technique", "title": "Phishing"},
            {"id": "t:spearphish", "type": "technique", "title": "Spearphishing"},
        ],
    )
    # (the stop rule off: this pins what the gates reach, 2 hops included)
    cfg = WalkConfig(concept_node_types=("technique",), embedder=None, stop_rule=False)
    default = ConceptAnchoredRetriever(fixed([]), g, config=cfg)
    with pytest.warns(WalkTypesWarning, match="admission edge types IMPLEMENTED_BY"):
        assert default.query("phishing", 3, concept_walk=True, caller=EVERYONE) == []
    r = ConceptAnchoredRetriever(
        fixed([]),
        g,
        config=cfg,
        expand_edge_types=["subtechnique", "no-such-type"],
        admit_edge_types=("mitigates", "detects"),
    )
    out = r.query("phishing", 3, concept_walk=True, caller=EVERYONE)
    assert [o["id"] for o in out] == ["d:mailscan", "m:training", "m:dmarc"]


def test_bad_arguments(kb):
    r = ConceptAnchoredRetriever(fixed([]), kb)
    with pytest.raises(InputError, match="caller"):
        r.query("x", 3, caller=None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="k must"):
        r.query("x", 0, caller=EVERYONE)
    with pytest.raises(InputError, match="concept_walk"):
        r.query("x", 1, concept_walk="yes", caller=EVERYONE)  # type: ignore[arg-type]
    bad = ConceptAnchoredRetriever(lambda t, k: [{"no_id": 1}], kb)
    assert bad.query("x", 1, caller=EVERYONE) == [{"no_id": 1}]  # off: passed through untouched
    with pytest.raises(InputError, match=r"result \[0\]"):
        bad.query("x", 1, concept_walk=True, caller=EVERYONE)
    with pytest.raises(InputError, match="flat_search"):
        ConceptAnchoredRetriever("not callable", kb)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="admit_edge_types"):
        ConceptAnchoredRetriever(fixed([]), kb, admit_edge_types="IMPLEMENTED_BY")


# --------------------------------------------------------------------------- provenance
COLUMNS = ("authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle")
VALUES = {
    "authority": "canonical",
    "fidelity": "summary",
    "extraction_method": "LLM_EXTRACTED",
    "extraction_confidence": 0.5,
    "lifecycle": "draft",
}


def _provenance_kb(columns_with_data=COLUMNS):
    """c0 -IMPLEMENTED_BY-> f<bits> for every subset of the five columns (bit i = column i)."""
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes([{"id": "c0", "type": "CONCEPT", "title": "Zero concept"}])
    rows = []
    for bits in product((0, 1), repeat=5):
        row = {"src": "c0", "dst": "f" + "".join(map(str, bits)), "type": "IMPLEMENTED_BY"}
        for col, on in zip(COLUMNS, bits):
            if on and col in columns_with_data:
                row[col] = VALUES[col]
        rows.append(row)
    kb.add_edges(rows)
    return kb


def _expected_hop(bits, kind_of):
    hop, absent = {}, {}
    val = dict(zip(COLUMNS, bits))
    for axis in ("authority", "fidelity", "lifecycle"):
        if val[axis] and kind_of(axis) is None:
            hop[axis] = VALUES[axis]
        else:
            absent[axis] = kind_of(axis) or ABSENT_IN_STORAGE
    sub, miss = {}, {}
    for col, key in (("extraction_method", "method"), ("extraction_confidence", "confidence")):
        if val[col] and kind_of(col) is None:
            sub[key] = VALUES[col]
        else:
            miss[key] = kind_of(col) or ABSENT_IN_STORAGE
    if sub:
        hop["extractionProvenance"] = sub
        absent.update({f"extractionProvenance.{k}": v for k, v in miss.items()})
    elif len(set(miss.values())) == 1:
        absent["extractionProvenance"] = next(iter(miss.values()))
    else:
        absent.update({f"extractionProvenance.{k}": v for k, v in miss.items()})
    return hop, absent


@pytest.mark.parametrize("case", ["all-loaded", "fidelity-never-stored", "projection-without-annotations"])
def test_every_combination_of_present_and_absent_axes(case):
    stored = COLUMNS if case != "fidelity-never-stored" else tuple(c for c in COLUMNS if c != "fidelity")
    kb = _provenance_kb(stored)
    cfg = WalkConfig(max_candidates=64, embedder=None, annotations=(case != "projection-without-annotations"))

    def kind_of(col):
        if col not in stored:
            return ABSENT_IN_STORAGE
        if case == "projection-without-annotations":
            return ABSENT_IN_PROJECTION
        return None

    out = ConceptAnchoredRetriever(fixed([]), kb, config=cfg).query(
        "zero concept", 40, concept_walk=True, caller=EVERYONE
    )
    assert len(out) == 32
    seen = set()
    for item in out:
        bits = tuple(int(b) for b in item["id"][1:])
        hop = item["paths"][0]["hops"][0]
        want, want_absent = _expected_hop(bits, kind_of)
        got = {k: v for k, v in hop.items() if k not in ("from", "to", "type", "direction", "absent")}
        assert got == want, item["id"]
        assert hop.get("absent", {}) == want_absent, item["id"]
        for v in got.values():
            assert v is not None
        seen.add(bits)
    assert len(seen) == 32
    kb.close()


def test_bare_linkgraph_source_is_its_own_storage():
    g = LinkGraph.from_edges([("c", "f", "IMPLEMENTED_BY")], nodes=[{"id": "c", "type": "CONCEPT", "title": "Cee"}])
    out = ConceptAnchoredRetriever(fixed([]), g, config=NOEMB).query("cee", 3, concept_walk=True, caller=EVERYONE)
    hop = out[0]["paths"][0]["hops"][0]
    assert hop["absent"] == {
        a: ABSENT_IN_STORAGE for a in ("authority", "fidelity", "extractionProvenance", "lifecycle")
    }


@pytest.mark.parametrize("rank_by", ["similarity", "path*similarity", "ppr"])
def test_reranking_orders_the_walks_pool_and_cuts_to_the_budget(kb, rank_by):
    from conceptwalk.wrap.embed import get_embedder

    cfg = WalkConfig(rank_by=rank_by, rerank_pool=3, max_candidates=2)
    events = []
    r = ConceptAnchoredRetriever(fixed([]), kb, config=cfg, event_sink=events.append)
    out = r.query("authn tokens", 5, concept_walk=True, caller=PUBLIC)
    pool = ConceptAnchoredRetriever(fixed([]), kb, config=WalkConfig(max_candidates=6)).query(
        "authn tokens", 5, concept_walk=True, caller=PUBLIC
    )
    assert len(out) <= 2 and {o["id"] for o in out} <= {p["id"] for p in pool}
    g = kb.graph()
    if rank_by == "ppr":
        concepts = {c["id"]: c["confidence"] for c in events[-1]["resolvedConcepts"]}
        keep = {"PARENT_CONCEPT", "RELATED_TO", "IMPLEMENTED_BY", "EXPLAINED_BY", "ATTACHED_TO", "TAGGED_CONCEPT"}
        sub = LinkGraph.from_edges(
            [
                e
                for e in EDGES
                if e["type"] in keep
                and "c:secret" not in (e["src"], e["dst"])
                and "f:hidden" not in (e["src"], e["dst"])
            ],
            nodes=[n for n in NODES if n["id"] not in ("c:secret", "f:hidden")],
        )
        ppr = sub.personalized_pagerank(concepts).to_dict()
        want = sorted((p["id"] for p in pool), key=lambda i: -ppr.get(i, 0.0))[:2]
    else:
        emb = get_embedder(cfg.embedder)
        q = emb.embed(["authn tokens"])[0]
        sim = {p["id"]: float(emb.embed([g.title(p["id"]) or p["id"]])[0] @ q) for p in pool}
        key = (
            (lambda p: -sim[p["id"]])
            if rank_by == "similarity"
            else (lambda p: -p["walkScore"] * (1 + sim[p["id"]]) / 2)
        )
        want = [p["id"] for p in sorted(pool, key=key)][:2]
    assert [o["id"] for o in out] == want
    assert events[-1]["truncated"] == (len(pool) > 2)
