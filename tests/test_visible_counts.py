"""Counts shown to a caller are over what it sees (issue 14, items 1 and 2).

The deletion oracle: the probe of a store for a caller, and the absence reason of every
provenance axis on the hops it can walk, equal those of the same store with the caller's hidden
nodes deleted (their edges and the aliases naming them go with them).
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, LinkGraph
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import (
    ABSENT_IN_PROJECTION,
    ABSENT_IN_STORAGE,
    ConceptAnchoredRetriever,
    WalkConfig,
    builtin_flat_search,
    probe,
)
from conceptwalk.wrap._reader import StoreReader
from conceptwalk.wrap.walk import Provenance

EDGE_TYPES = ["RELATED_TO", "PARENT_CONCEPT", "IMPLEMENTED_BY", "EXPLAINED_BY", "TAGGED_CONCEPT", "MENTIONS"]
NODE_TYPES = ["CONCEPT", "CONCEPT", "FILE", "DOC"]
SCOPES = [None, [], ["a"], ["b"], ["a", "b"]]
CALLERS = [Caller.public(), Caller.with_scopes("a"), Caller.with_scopes("b"), Caller.with_scopes("a", "b")]
AXIS_VALUES = {
    "authority": st.sampled_from([None, "CANONICAL", "DERIVED"]),
    "fidelity": st.sampled_from([None, "verbatim", 0.75, True]),
    "extraction_method": st.sampled_from([None, "TAGGED_CONCEPT", "MANUAL"]),
    "extraction_confidence": st.sampled_from([None, 0.5, 1.0]),
    "lifecycle": st.sampled_from([None, "active"]),
}


@st.composite
def scoped_store(draw):
    n = draw(st.integers(2, 8))
    nodes = [
        {
            "id": f"n{i}",
            "type": draw(st.sampled_from(NODE_TYPES)),
            "title": f"node {i}",
            "scopes": draw(st.sampled_from(SCOPES)),
        }
        for i in range(n)
    ]
    edges = {}
    for _ in range(draw(st.integers(0, 14))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))  # self-loops too
        typ = draw(st.sampled_from(EDGE_TYPES))
        row = {"src": f"n{i}", "dst": f"n{j}", "type": typ}
        for axis, values in AXIS_VALUES.items():
            v = draw(values)
            if v is not None:
                row[axis] = v
        edges[(i, j, typ)] = row
    aliases = sorted(
        {
            (draw(st.sampled_from([f"n{k}" for k in range(n)] + ["al0", "al1"])), f"n{draw(st.integers(0, n - 1))}")
            for _ in range(draw(st.integers(0, 5)))
        }
    )
    return nodes, list(edges.values()), aliases, draw(st.sampled_from(CALLERS))


def _visible(node, caller):
    return not node["scopes"] or bool(set(node["scopes"]) & caller.scopes)


def _store(nodes, edges, aliases):
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(nodes)
    kb.add_edges(edges)
    kb.add_aliases(aliases)
    return kb


def _deleted(nodes, edges, aliases, caller):
    keep = {x["id"] for x in nodes if _visible(x, caller)}
    return (
        [x for x in nodes if x["id"] in keep],
        [e for e in edges if e["src"] in keep and e["dst"] in keep],
        [a for a in aliases if a[1] in keep],
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scoped_store(), st.booleans())
def test_probe_equals_probe_of_the_store_without_hidden_nodes(case, annotations):
    nodes, edges, aliases, caller = case
    kept = _deleted(nodes, edges, aliases, caller)
    assume(kept[0])
    cfg = WalkConfig(annotations=annotations)
    got = probe(_store(nodes, edges, aliases), cfg, caller=caller)
    oracle = _store(*kept)
    assert got == probe(oracle, cfg, caller=Caller.all_access())
    assert got == probe(oracle, cfg, caller=caller)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scoped_store())
def test_probe_of_a_bare_graph_equals_probe_of_the_graph_without_hidden_nodes(case):
    nodes, edges, aliases, caller = case
    kept_nodes, kept_edges, _ = _deleted(nodes, edges, aliases, caller)
    assume(kept_nodes)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    assert probe(g, caller=caller) == probe(
        LinkGraph.from_edges(kept_edges, nodes=kept_nodes), caller=Caller.all_access()
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scoped_store(), st.booleans())
def test_absence_reasons_equal_those_of_the_store_without_hidden_nodes(case, annotations):
    nodes, edges, aliases, caller = case
    kept = _deleted(nodes, edges, aliases, caller)
    assume(kept[0])
    snap = StoreReader(_store(nodes, edges, aliases), annotations=annotations).read_cache()
    g = snap.graph
    vm = caller.visibility(g)
    prov = Provenance(g, snap.presence(vm))
    snap2 = StoreReader(_store(*kept), annotations=annotations).read_cache()
    g2 = snap2.graph
    prov2 = Provenance(g2, snap2.presence())
    for e in range(g.num_edges):
        u, v = int(g.edge_src[e]), int(g.edge_dst[e])
        if not (vm.mask[u] and vm.mask[v]):
            continue
        key = (g.ids[u], g.ids[v], g.edge_type_names[int(g.edge_type_codes[e])])
        (e2,) = [
            x
            for x in g2.edges_between(g2.index(key[0]), g2.index(key[1]))
            if g2.ids[int(g2.edge_src[x])] == key[0] and g2.edge_type_names[int(g2.edge_type_codes[x])] == key[2]
        ]
        assert prov.edge(e) == prov2.edge(e2), key


# ----------------------------------------------------------------- the reported examples
NODES3 = [
    {"id": "c1", "type": "CONCEPT"},
    {"id": "f1", "type": "FILE"},
    {"id": "h", "type": "CONCEPT", "scopes": ["secret"]},
]
EDGES3 = [
    {"src": "c1", "dst": "f1", "type": "IMPLEMENTED_BY"},
    {"src": "c1", "dst": "h", "type": "RELATED_TO", "authority": "CANONICAL", "fidelity": "verbatim"},
    {
        "src": "h",
        "dst": "f1",
        "type": "EXPLAINED_BY",
        "extraction_method": "MANUAL",
        "extraction_confidence": 0.9,
        "lifecycle": "active",
    },
]


def test_public_probe_does_not_count_hidden_edges_types_or_annotations():
    kb = _store(NODES3, EDGES3, [])
    rep = probe(kb, caller=Caller.public())
    assert rep["edges"] == 1
    assert rep["gates"]["expand"]["RELATED_TO"] == 0
    assert rep["gates"]["admit"]["EXPLAINED_BY"] == 0
    assert "RELATED_TO" in rep["gates"]["missing"] and "EXPLAINED_BY" in rep["gates"]["missing"]
    assert rep["provenance"]["authority"]["storage"] == 0
    assert rep["provenance"]["lifecycle"]["storage"] == 0
    assert rep["provenance"]["extractionProvenance"]["confidence"]["projectionCount"] == 0
    assert rep == probe(_store(NODES3[:2], EDGES3[:1], []), caller=Caller.all_access())


def test_absence_reason_with_an_unloaded_projection_counts_visible_edges_only():
    kb = _store(NODES3, EDGES3, [])
    cfg = WalkConfig(annotations=False, embedder=None)
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=cfg)
    out = r.query("c1", 5, concept_walk=True, caller=Caller.public())
    hop = next(x for x in out if x.get("via") == "concept-walk")["paths"][0]["hops"][0]
    # Only hidden edges hold authority, lifecycle and extraction provenance: for the public
    # caller the store has none of them (the deletion oracle's answer).
    assert hop["absent"]["authority"] == ABSENT_IN_STORAGE
    assert hop["absent"]["lifecycle"] == ABSENT_IN_STORAGE
    assert hop["absent"]["extractionProvenance"] == ABSENT_IN_STORAGE
    # Operator's view: those values exist in storage, the projection did not load them.
    out_all = r.query("c1", 5, concept_walk=True, caller=Caller.all_access())
    hop_all = next(x for x in out_all if x.get("via") == "concept-walk" and x["id"] == "f1")
    assert hop_all["paths"][0]["hops"][0]["absent"]["authority"] == ABSENT_IN_PROJECTION
