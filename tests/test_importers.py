"""Importers: JSONL, CSV/TSV edge lists and networkx graphs into the store; one transaction each,
malformed lines named by file and line."""

from __future__ import annotations

import gzip
import json
import sqlite3
import sys
from pathlib import Path

import networkx as nx
import pytest

from conceptwalk.errors import InputError
from conceptwalk.kb.importers import import_edge_list, import_jsonl, import_networkx
from conceptwalk.kb.store import ANNOTATION_AXES, KnowledgeBase

DATA = Path(__file__).parent / "data"
EDGE_COLS = ["src", "dst", "type", *ANNOTATION_AXES]


def dump(path) -> dict:
    """Everything stored, through an independent connection."""
    con = sqlite3.connect(str(path))
    try:
        out = {
            t: sorted(map(tuple, con.execute(f"SELECT * FROM {t}")), key=repr)
            for t in (
                "meta",
                "nodes",
                "edges",
                "aliases",
                "embeddings",
                "vector_models",
                "vector_slots",
                "vector_chunks",
                "changes",
            )
        }
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'nodes_fts'").fetchone():
            out["fts"] = sorted(con.execute("SELECT rowid, title, body FROM nodes_fts"), key=repr)
    finally:
        con.close()
    return out


def stored_edges(kb) -> list[dict]:
    rows = kb.conn.execute(f"SELECT {', '.join(EDGE_COLS)} FROM edges ORDER BY src, dst, type")
    return [dict(zip(EDGE_COLS, r)) for r in rows]


@pytest.fixture
def kb_path(tmp_path):
    return tmp_path / "kb.sqlite"


@pytest.fixture
def kb(kb_path):
    with KnowledgeBase.create(kb_path) as k:
        yield k


def seed(kb):
    kb.add_nodes([{"id": "pre", "type": "CONCEPT", "title": "already here", "scopes": ["t"]}])
    kb.add_edges([{"src": "pre", "dst": "x:1", "authority": "A"}])
    kb.add_aliases([("p", "pre")])


# ---------------------------------------------------------------------- JSONL
def test_jsonl_round_trip_of_every_field(kb):
    path = DATA / "kb_small.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    s = import_jsonl(kb, path)
    nodes = [x for x in lines if "id" in x]
    edges = [x for x in lines if "src" in x]
    aliases = [x for x in lines if "alias" in x]
    assert (s.nodes, s.edges, s.aliases, s.lines) == (len(nodes), len(edges), len(aliases), 12)
    assert s.new_nodes == 4 and s.new_edges == 4  # f:ppr.cpp is a bare node
    for row in nodes:
        full = {k: row.get(k) for k in ("id", "type", "title", "body", "scopes", "lifecycle")}
        assert kb.node(row["id"]) == full
    assert kb.node("f:ppr.cpp")["type"] is None
    want = sorted(
        ({k: e.get(k, None if k != "type" else "LINK") for k in EDGE_COLS} for e in edges),
        key=lambda e: (e["src"], e["dst"], e["type"]),
    )
    assert stored_edges(kb) == want
    # The alias on line 1 names a node defined on line 2.
    assert kb.aliases() == {"PPR": ["c:ppr"], "pagerank": ["c:ppr"], "push": ["c:push", "m:1"]}
    assert kb.version == 1  # one transaction
    assert [i for i, _ in kb.search("push")][:1] in (["c:push"], ["m:1"])
    g = kb.graph()
    assert g.num_nodes == 4 and g.num_edges == 4


def test_jsonl_bad_line_in_the_middle_changes_nothing(kb, kb_path):
    seed(kb)
    before = dump(kb_path)
    v0 = kb.version
    path = DATA / "kb_bad_line.jsonl"
    with pytest.raises(InputError) as info:
        import_jsonl(kb, path)
    msg = str(info.value)
    assert "kb_bad_line.jsonl:6:" in msg
    assert "'extraction_confidence' must be in [0, 1], got 1.5" in msg
    assert dump(kb_path) == before
    assert kb.version == v0
    assert kb.node("x:2") is None and kb.node("x:5") is None


def write_lines(tmp_path, lines, name="f.jsonl"):
    p = tmp_path / name
    p.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return p


GOOD_LINE = '{"src": "a", "dst": "b"}'


@pytest.mark.parametrize(
    "bad, what",
    [
        ('{"src": "a", "dst": ', "invalid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('"text"', "expected a JSON object, got str"),
        ('{"id": "n", "src": "a"}', "ambiguous"),
        ('{"title": "no id"}', "expected a node (with 'id')"),
        ('{"id": "n", "tags": []}', "unknown key 'tags'"),
        ('{"id": "n", "scopes": "team"}', "'scopes' must be a list of strings"),
        ('{"id": 7}', "'id' must be a string"),
        ('{"src": "a"}', "missing 'dst'"),
        ('{"src": "a", "dst": "b", "extraction_confidence": NaN}', "must be in [0, 1]"),
        ('{"src": "a", "dst": "b", "extraction_confidence": true}', "must be a number"),
        # A JSON number or boolean is a valid provenance value (issue 14 item 7); a list is not.
        ('{"src": "a", "dst": "b", "authority": [3]}', "'authority' must be a string, a finite number"),
        ('{"alias": "x", "canonical": "nowhere"}', "canonical 'nowhere' of alias 'x' is not a node"),
        ('{"canonical": "a"}', "missing 'alias'"),
    ],
)
def test_jsonl_malformed_line_is_named(kb, kb_path, tmp_path, bad, what):
    seed(kb)
    before = dump(kb_path)
    p = write_lines(tmp_path, [GOOD_LINE, "", '{"id": "a", "title": "A"}', bad, GOOD_LINE])
    with pytest.raises(InputError) as info:
        import_jsonl(kb, p)
    assert f"{p}:4: " in str(info.value)
    assert what in str(info.value)
    assert dump(kb_path) == before


def test_jsonl_bad_line_after_flushed_chunks_rolls_everything_back(kb, kb_path, tmp_path):
    seed(kb)
    before = dump(kb_path)
    lines = [json.dumps({"id": f"n{i}", "title": f"node {i}"}) for i in range(5000)]
    lines += [json.dumps({"src": f"n{i}", "dst": f"n{i + 1}"}) for i in range(5000)]
    lines.append('{"src": "n1"}')
    p = write_lines(tmp_path, lines, "big.jsonl")
    with pytest.raises(InputError, match=r"big\.jsonl:10001: missing 'dst'"):
        import_jsonl(kb, p)
    assert dump(kb_path) == before


def test_jsonl_gzip_and_progress_callback(kb, tmp_path):
    lines = [json.dumps({"src": f"n{i}", "dst": f"n{i + 1}", "type": "NEXT"}) for i in range(9000)]
    p = tmp_path / "chain.jsonl.gz"
    with gzip.open(p, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    seen: list[int] = []
    s = import_jsonl(kb, p, progress=seen.append)
    assert s.edges == 9000 and s.new_nodes == 9001
    assert seen == sorted(seen) and seen[-1] == 9000 and len(seen) >= 3
    assert kb.graph().shortest_path("n0", "n5") == ["n0", "n1", "n2", "n3", "n4", "n5"]


def test_progress_true_without_tqdm_is_silent(kb, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm -> ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    p = write_lines(tmp_path, [GOOD_LINE])
    assert import_jsonl(kb, p, progress=True).edges == 1
    assert capsys.readouterr() == ("", "")
    with pytest.raises(InputError, match="progress must be"):
        import_jsonl(kb, p, progress="yes")


def test_jsonl_invalid_utf8_is_named(kb, tmp_path):
    p = tmp_path / "latin1.jsonl"
    p.write_bytes(b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(InputError, match="not valid UTF-8"):
        import_jsonl(kb, p)
    assert kb.node("a") is None


# ---------------------------------------------------------------------- CSV / TSV
def test_csv_with_header_synonyms_comments_and_annotations(kb):
    s = import_edge_list(kb, DATA / "edges_annotated.csv")
    assert (s.edges, s.new_nodes, s.new_edges) == (3, 4, 3)
    assert stored_edges(kb) == [
        {
            "src": "a",
            "dst": "b",
            "type": "RELATED_TO",
            "authority": "CANONICAL",
            "fidelity": "VERBATIM",
            "extraction_method": "TAGGED_CONCEPT",
            "extraction_confidence": 1.0,
            "lifecycle": "ACTIVE",
        },
        {
            "src": "b",
            "dst": "c",
            "type": "LINK",
            "authority": None,
            "fidelity": None,
            "extraction_method": None,
            "extraction_confidence": None,
            "lifecycle": None,
        },
        {
            "src": "c,with comma",
            "dst": "a",
            "type": "PARENT_CONCEPT",
            "authority": "COMMUNITY",
            "fidelity": None,
            "extraction_method": "LLM_EXTRACTED",
            "extraction_confidence": 0.25,
            "lifecycle": None,
        },
    ]
    assert kb.annotation_presence() == {
        "authority": 2,
        "fidelity": 1,
        "extraction_method": 2,
        "extraction_confidence": 2,
        "lifecycle": 1,
    }


def test_tsv_without_header_and_default_type(kb):
    s = import_edge_list(kb, DATA / "edges_plain.tsv", default_type="RELATED_TO")
    assert s.edges == 3
    assert [(e["src"], e["dst"], e["type"]) for e in stored_edges(kb)] == [
        ("a", "b", "RELATED_TO"),
        ("b", "c", "RELATED_TO"),
        ("c", "d", "PARENT_CONCEPT"),
    ]
    assert kb.annotation_presence() == dict.fromkeys(ANNOTATION_AXES, 0)


def test_edge_list_delimiter_detection_and_overrides(kb, tmp_path):
    p = tmp_path / "edges.txt"
    p.write_text("x\ty\nsrc\tdst\n", encoding="utf-8")  # no extension: tab sniffed
    s = import_edge_list(kb, p, has_header=False)
    assert s.edges == 2 and kb.node("src") is not None  # not a header when told so
    q = tmp_path / "semi.dat"
    q.write_text("src;dst;type\nu;v;T\n", encoding="utf-8")
    import_edge_list(kb, q, delimiter=";")
    assert kb.stats()["edges_by_type"]["T"] == 1
    gz = tmp_path / "e.csv.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write("src,dst\nm,n\n")
    assert import_edge_list(kb, gz).edges == 1


def test_edge_list_bad_line_changes_nothing(kb, kb_path):
    seed(kb)
    before = dump(kb_path)
    with pytest.raises(InputError) as info:
        import_edge_list(kb, DATA / "edges_bad.csv")
    assert "edges_bad.csv:4:" in str(info.value)
    assert "'extraction_confidence' must be a number in [0, 1], got 'high'" in str(info.value)
    assert dump(kb_path) == before


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("src,dst,colour\na,b,red\n", 1, "unknown column 'colour'"),
        ("src,dst,dst\na,b,c\n", 1, "appears twice"),
        ("src,dst,type\na,b,T\na,b\n", 3, "expected 3 fields"),
        ("a,b\nc\n", 2, "expected 2 or 3 fields"),
        ("a,b,T,extra\n", 1, "expected 2 or 3 fields"),
        ("src,dst\na,b\n,c\n", 3, "empty 'src'"),
        ("src,dst,confidence\na,b,2\n", 2, "must be in [0, 1]"),
        ("src,dst,confidence\na,b,nan\n", 2, "must be a number in [0, 1]"),
        ('src,dst\n"a,b\n', 2, "malformed CSV"),
    ],
)
def test_edge_list_malformed_line_is_named(kb, tmp_path, text, line, what):
    p = tmp_path / "e.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_edge_list(kb, p)
    assert f"e.csv:{line}: " in str(info.value)
    assert what in str(info.value)
    assert kb.stats()["edges"] == 0 and kb.version == 0


def test_edge_list_header_true_requires_src_and_dst(kb, tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("type,src\nT,a\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"e\.csv:1: the header has no 'dst' column"):
        import_edge_list(kb, p, has_header=True)


def test_edge_list_argument_checks(kb, tmp_path):
    p = tmp_path / "e.csv"
    p.write_text("a,b\n", encoding="utf-8")
    with pytest.raises(InputError, match="delimiter"):
        import_edge_list(kb, p, delimiter=",,")
    with pytest.raises(InputError, match="has_header"):
        import_edge_list(kb, p, has_header="yes")
    with pytest.raises(InputError, match="default_type"):
        import_edge_list(kb, p, default_type="")


# ---------------------------------------------------------------------- networkx
def attributed_digraph() -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_node("c:ppr", type="CONCEPT", title="PageRank", body="walks", scopes=["a", "b"], lifecycle="ACTIVE")
    G.add_node("m:1", type="MEMORY", title="a memory", scopes=[])
    G.add_node("lonely")  # isolated, no attributes
    G.add_edge(
        "m:1",
        "c:ppr",
        type="TAGGED_CONCEPT",
        authority="CURATED",
        fidelity="SUMMARY",
        extraction_method="TAGGED_CONCEPT",
        extraction_confidence=0.8,
        lifecycle="ACTIVE",
    )
    G.add_edge("c:ppr", "m:1", type="RELATED_TO")
    G.add_edge("m:1", "f:x")  # f:x only exists through this edge; no type -> LINK
    return G


def test_networkx_round_trip(kb):
    G = attributed_digraph()
    s = import_networkx(kb, G)
    assert (s.nodes, s.edges, s.new_nodes, s.new_edges) == (4, 3, 4, 3)
    for n, attrs in G.nodes(data=True):
        got = kb.node(n)
        assert got == {"id": n, **{k: attrs.get(k) for k in ("type", "title", "body", "scopes", "lifecycle")}}
    want = sorted(
        ({"src": u, "dst": v, **{k: d.get(k) for k in EDGE_COLS[2:]}} for u, v, d in G.edges(data=True)),
        key=lambda e: (e["src"], e["dst"]),
    )
    for e in want:
        e["type"] = e["type"] or "LINK"
    assert stored_edges(kb) == want
    # The graph snapshot is the undirected projection of G.
    g = kb.graph()
    assert sorted(g.ids) == sorted(G.nodes)
    U = G.to_undirected()
    for n in G.nodes:
        i = g.index(n)
        nbrs = {g.ids[j] for j in g.core.indices[g.core.indptr[i] : g.core.indptr[i + 1]].tolist()}
        assert nbrs == set(U[n]), n


def test_networkx_multigraph_int_ids_and_unknown_attributes(kb):
    G = nx.MultiGraph()
    G.add_node(1, kind="CONCEPT", weight=2.0)
    G.add_edge(1, 2, kind="A", weight=1)
    G.add_edge(1, 2, kind="A", authority="LATER")  # same (src, dst, type): the last one wins
    G.add_edge(1, 2, kind="B")
    s = import_networkx(kb, G, type_attr="kind", unknown="ignore")
    assert s.ignored_attributes == ["weight"] and s.attributes == 0
    assert kb.node("1")["type"] == "CONCEPT"
    assert [(e["type"], e["authority"]) for e in stored_edges(kb)] == [("A", "LATER"), ("B", None)]
    with KnowledgeBase.open(":memory:") as other, pytest.raises(InputError, match="unknown attribute 'weight'"):
        import_networkx(other, G, type_attr="kind", unknown="error")


def test_networkx_bad_value_and_id_collision_change_nothing(kb, kb_path):
    seed(kb)
    before = dump(kb_path)
    G = attributed_digraph()
    G.add_edge("lonely", "m:1", extraction_confidence=3)
    with pytest.raises(InputError, match=r"edge \('lonely', 'm:1'\): 'extraction_confidence' must be in \[0, 1\]"):
        import_networkx(kb, G)
    H = nx.Graph()
    H.add_edge(1, "1")
    with pytest.raises(InputError, match="both become id '1'"):
        import_networkx(kb, H)
    H2 = nx.Graph()
    H2.add_node("n", scopes="team")
    with pytest.raises(InputError, match=r"node 'n': 'scopes' must be a list"):
        import_networkx(kb, H2)
    assert dump(kb_path) == before
    with pytest.raises(InputError, match="networkx graph"):
        import_networkx(kb, [("a", "b")])


@pytest.mark.parametrize(
    "tail",
    ["", "\n", "\r\n", " \t\n", "\n\n", " x\n", "x", "}\n", "\x0c\n", " {}\n", "\u2028\n"],
)
def test_jsonl_text_after_an_object_is_what_json_loads_says(tmp_path, tail):
    """Whatever follows a line's object (the scanner's fast path checks only that) is accepted
    or refused exactly as ``json.loads`` of the line accepts or refuses it."""
    line = '{"id": "n", "title": "walk"}' + tail
    (tmp_path / "x.jsonl").write_text(line, encoding="utf-8", newline="")
    try:
        json.loads(line.split("\n", 1)[0] if tail.startswith("\n") else line)
        ok = True
    except json.JSONDecodeError:
        ok = False
    kb = KnowledgeBase.open(":memory:")
    if ok:
        assert import_jsonl(kb, tmp_path / "x.jsonl").nodes == 1
        assert kb.node("n")["title"] == "walk"
    else:
        with pytest.raises(InputError, match=r"x\.jsonl:1: invalid JSON \(Extra data"):
            import_jsonl(kb, tmp_path / "x.jsonl")
        assert kb.stats()["nodes"] == 0


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("bad_line", [1, 11, 4096, 8192, 9000])
def test_bytes_that_are_not_utf8_name_their_own_line(tmp_path, gz, bad_line):
    """The text reader decodes a buffer at a time, so the line it was reading when decoding
    failed may be lines before the bad byte: the error names the line that holds it."""
    lines = [b'{"id": "n%d", "title": "t"}' % i for i in range(10000)]
    lines[bad_line - 1] = lines[bad_line - 1].replace(b'"t"', b'"\xe9t"')
    data = b"\r\n".join(lines[:5]) + b"\r\n" + b"\n".join(lines[5:]) + b"\n"
    p = tmp_path / ("x.jsonl.gz" if gz else "x.jsonl")
    if gz:
        with gzip.open(p, "wb") as fh:
            fh.write(data)
    else:
        p.write_bytes(data)
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match=rf"x\.jsonl(\.gz)?:{bad_line}: not valid UTF-8 \(invalid continuation byte\)"):
        import_jsonl(kb, p)
    assert kb.stats()["nodes"] == 0
    csv_lines = [b"src,dst"] + [b"a%d,b%d" % (i, i) for i in range(9999)]
    csv_lines[bad_line - 1] += b"\xff"
    (tmp_path / "x.csv").write_bytes(b"\n".join(csv_lines) + b"\n")
    with pytest.raises(InputError, match=rf"x\.csv:{bad_line}: not valid UTF-8"):
        import_edge_list(kb, tmp_path / "x.csv")


def test_a_progress_callback_s_own_error_is_left_as_it_is(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text("".join(f'{{"id": "n{i}"}}\n' for i in range(5000)), encoding="utf-8")

    def progress(done: int) -> None:
        b"\xff".decode("utf-8")  # the caller's bug, not the file's

    with pytest.raises(UnicodeDecodeError):
        import_jsonl(KnowledgeBase.open(":memory:"), p, progress=progress)


def test_a_lone_surrogate_escape_names_its_line(tmp_path):
    """\\ud800 alone is valid JSON but not text (SQLite cannot store it): refused with its line,
    not as a UnicodeEncodeError when the rows are written; a surrogate pair is a character."""
    p = tmp_path / "x.jsonl"
    p.write_text(
        '{"id": "a", "title": "ok \\ud83d\\ude00", "attributes": {"k": "\\u00e9"}}\n'
        '{"src": "a", "dst": "b", "authority": "\\uDC00"}\n',
        encoding="utf-8",
    )
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match=r"x\.jsonl:2: a string holds a lone surrogate \(\\udc00\)"):
        import_jsonl(kb, p)
    p.write_text(p.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert import_jsonl(kb, p).nodes == 1 and kb.node("a")["title"] == "ok \U0001f600"
