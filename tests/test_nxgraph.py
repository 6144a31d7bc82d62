"""Issue 32 item 7: ``LinkGraph.from_networkx`` / ``to_networkx`` (for a caller: only what it sees,
exact to deletion; public by default), and a networkx ``weight`` never dropped silently: refused by
``from_networkx``, kept as an attribute by ``import_networkx``."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from conceptwalk import Caller, LinkGraph
from conceptwalk.errors import InputError
from conceptwalk.kb.attributes import edge_attributes
from conceptwalk.kb.importers import import_networkx
from conceptwalk.kb.store import KnowledgeBase

ALL = Caller.all_access()


def random_graph(seed: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    n = rng.randint(3, 25)
    nodes = []
    for i in range(n):
        row = {"id": f"n{i}", "type": rng.choice(["CONCEPT", "DOC"]), "title": f"title {i}"}
        if rng.random() < 0.4:
            row["scopes"] = rng.sample(["t1", "t2", "t3"], rng.randint(1, 2))
        if rng.random() < 0.3:
            row["lifecycle"] = "draft"
        nodes.append(row)
    edges = []
    for _ in range(rng.randint(1, 3 * n)):
        e = {"src": f"n{rng.randrange(n)}", "dst": f"n{rng.randrange(n)}", "type": rng.choice(["A", "B"])}
        if rng.random() < 0.5:
            e["authority"] = "CURATED"
        if rng.random() < 0.5:
            e["extraction_confidence"] = 0.5
        edges.append(e)
    return nodes, edges


def as_sets(G):
    return (
        sorted((n, tuple(sorted((k, str(v)) for k, v in a.items()))) for n, a in G.nodes(data=True)),
        sorted((u, v, k, tuple(sorted(a.items()))) for u, v, k, a in G.edges(keys=True, data=True)),
    )


@pytest.mark.parametrize("seed", range(30))
def test_to_networkx_equals_the_graph_with_hidden_nodes_deleted(seed):
    nodes, edges = random_graph(seed)
    g = LinkGraph.from_edges(edges, nodes=nodes)
    for caller in (Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t2", "t3"), ALL):
        seen = {
            n["id"] for n in nodes if caller.scopes is None or not n.get("scopes") or set(n["scopes"]) & caller.scopes
        }
        kept_nodes = [n for n in nodes if n["id"] in seen]
        kept_edges = [e for e in edges if e["src"] in seen and e["dst"] in seen]
        got = g.to_networkx(caller=caller)
        if not kept_nodes:
            assert got.number_of_nodes() == 0
            continue
        oracle = LinkGraph.from_edges(kept_edges, nodes=kept_nodes).to_networkx(caller=ALL)
        assert as_sets(got) == as_sets(oracle), (seed, caller)


def test_to_networkx_is_public_by_default_and_round_trips():
    g = LinkGraph.from_edges(
        [{"src": "a", "dst": "b", "type": "USES", "fidelity": 0.75}, ("b", "s")],
        nodes=[{"id": "s", "scopes": ["t1"], "title": "secret"}, {"id": "a", "title": "A", "lifecycle": "draft"}],
    )
    assert sorted(g.to_networkx().nodes) == ["a", "b"]
    G = g.to_networkx(caller=ALL)
    assert G.nodes["s"] == {"type": g.node_type("s"), "title": "secret", "scopes": ["t1"]}
    assert G.edges["a", "b", "USES"] == {"type": "USES", "fidelity": 0.75}
    h = LinkGraph.from_networkx(G)
    assert h.ids == g.ids and as_sets(h.to_networkx(caller=ALL)) == as_sets(G)
    with pytest.raises(InputError, match="caller must be a Caller"):
        g.to_networkx(caller="t1")


def test_from_networkx_refuses_a_weight_it_cannot_hold():
    G = nx.Graph()
    G.add_edge("tls", "tcp", weight=2.0)
    with pytest.raises(InputError, match=r"edge \('tls', 'tcp'\): attribute 'weight' has no place in a LinkGraph"):
        LinkGraph.from_networkx(G)
    G.add_node("tls", colour="red")
    with pytest.raises(InputError, match=r"node 'tls': attribute 'colour'"):
        LinkGraph.from_networkx(G)
    g = LinkGraph.from_networkx(G, unknown="ignore")
    assert g.num_edges == 1 and g.shortest_path("tls", "tcp") == ["tls", "tcp"]
    D = nx.MultiDiGraph()
    D.add_edge(1, 2, kind="A")
    D.add_edge(1, 2, kind="B")
    assert sorted(LinkGraph.from_networkx(D, type_attr="kind").edge_type_names) == ["A", "B"]
    with pytest.raises(InputError, match="G must be a networkx graph"):
        LinkGraph.from_networkx([("a", "b")])


def test_import_networkx_keeps_the_weight_as_an_attribute():
    # before issue 32 item 7 the weight was dropped without a word (ignored_attributes only)
    G = nx.Graph()
    G.add_edge("tls", "tcp", type="RUNS_OVER", weight=2.5)
    kb = KnowledgeBase.open(":memory:")
    s = import_networkx(kb, G)
    assert s.kept_attributes == ["weight"] and s.ignored_attributes == []
    assert edge_attributes(kb.conn) == {("tls", "tcp", "RUNS_OVER"): {"weight": 2.5}}
    # and it changes no answer: the algorithms are unweighted, as published
    H = nx.Graph()
    H.add_edge("tls", "tcp", type="RUNS_OVER", weight=1000.0)
    other = KnowledgeBase.open(":memory:")
    import_networkx(other, H)
    assert (
        kb.graph().personalized_pagerank({"tls": 1.0}).to_dict()
        == other.graph().personalized_pagerank({"tls": 1.0}).to_dict()
    )
