"""Regression tests of issue 14 (a hostile review): foreign and damaged store files, raw
exceptions and tracebacks, provenance values of other JSON types, and the small ones (strict CSV
numbers, long values in error texts, the session-token message, start-up errors printed once).

Items 1 and 2 (counts over what the caller sees) are in tests/test_visible_counts.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conceptwalk import Caller, ConceptwalkError, InputError, LinkGraph, NotFoundError
from conceptwalk.cli import main
from conceptwalk.kb.importers import import_edge_list, import_jsonl, import_networkx
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
from conceptwalk.wrap.embed import HashingEmbedder, get_embedder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name) and p != path)


def _foreign(path: Path, *, user_version: int = 0, nodes_table: bool = True) -> Path:
    c = sqlite3.connect(path)
    if nodes_table:
        c.execute("CREATE TABLE nodes(id TEXT PRIMARY KEY, name TEXT)")
        c.execute("INSERT INTO nodes VALUES ('a', 'alpha')")
    else:
        c.execute("CREATE TABLE t(x)")
    c.execute(f"PRAGMA user_version = {user_version}")
    c.commit()
    c.close()
    return path


def _real_store(path: Path, n: int = 60) -> Path:
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes(
            [
                {
                    "id": f"c{i}",
                    "type": "CONCEPT",
                    "title": f"concept number {i} " * 3,
                    "body": "lorem ipsum " * 40,
                    "scopes": ["t1"] if i % 3 == 0 else None,
                }
                for i in range(n)
            ]
        )
        kb.add_edges(
            [
                {"src": f"c{i}", "dst": f"c{(i * 7 + 1) % n}", "type": "RELATED_TO", "authority": "CANONICAL"}
                for i in range(n)
            ]
        )
        kb.add_aliases([(f"alias {i}", f"c{i}") for i in range(0, n, 5)])
    assert _siblings(path) == []  # closed: one file (in WAL mode), as a copied store would be
    return path


def _edited(path: Path, *sql: str) -> Path:
    """``path`` after another program ran ``sql`` on it (a hand edit)."""
    c = sqlite3.connect(path)
    for q in sql:
        c.execute(q)
    c.commit()
    c.close()
    return path


def _use(path: Path) -> None:
    """Open a store and read everything a command reads."""
    with KnowledgeBase.open(path, create=False) as kb:
        kb.stats()
        kb.graph()
        kb.search("concept")
        kb.aliases()
        kb.nodes(["c1", "c2"])


EMBEDDING_DAMAGE = {
    "model row deleted": ("DELETE FROM vector_models", "has (2 )?slots but no model row"),
    "slot beyond next_slot": ("UPDATE vector_slots SET slot = 99 WHERE node_id = 'c1'", "slot 99 .*outside \\[0, 2\\)"),
    "slot not a number": ("UPDATE vector_slots SET slot = 'x' WHERE node_id = 'c1'", "slot 'x'"),
    "dim zero": ("UPDATE vector_models SET dim = 0", "\\(dim, per_chunk, next_slot\\) = \\(0, "),
    "next_slot past the chunks": ("UPDATE vector_models SET next_slot = 1000000000000", "next_slot\\) = "),
    "chunk not a blob": ("UPDATE vector_chunks SET data = 'abc'", "a chunk \\(0, str of 3 bytes\\)"),
}


@pytest.mark.parametrize("case", sorted(EMBEDDING_DAMAGE))
def test_damaged_embedding_rows_raise_a_conceptwalk_error(tmp_path, case):
    """A hand-edited or damaged embedding table is named, never an assertion, an IndexError or a
    MemoryError (a fuzz finding: slots left without their model row)."""
    sql, what = EMBEDDING_DAMAGE[case]
    p = _real_store(tmp_path / "emb.db")
    with KnowledgeBase.open(p) as kb:
        kb.set_embeddings("m", ["c1", "c2"], [[1.0, 0.0], [0.0, 1.0]])
    _edited(p, sql)
    with KnowledgeBase.open(p, create=False) as kb:
        for ids in (None, ["c1", "c2"]):
            with pytest.raises(ConceptwalkError, match=what) as info:
                kb.get_embeddings("m", ids)
            assert p.name in str(info.value)


# ----------------------------------------------------------------- item 3: foreign files
def test_a_foreign_database_is_refused_and_left_byte_identical(tmp_path):
    p = _foreign(tmp_path / "other.db")
    before = _digest(p)
    with pytest.raises(ConceptwalkError, match=r"other\.db.* is not a conceptwalk knowledge base"):
        KnowledgeBase.open(p)
    assert _digest(p) == before
    assert _siblings(p) == []  # no -wal, -shm or -journal
    # The other program's own writes still work (no triggers were installed).
    c = sqlite3.connect(p)
    c.execute("INSERT INTO nodes VALUES ('b', 'beta')")
    c.commit()
    assert c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 2  # table + its index
    c.close()


def test_the_cli_refuses_a_foreign_database_without_touching_it(tmp_path, capsys):
    p = _foreign(tmp_path / "other.db")
    before = _digest(p)
    assert main(["stats", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("conceptwalk: error: ")
    assert "not a conceptwalk knowledge base" in err
    assert _digest(p) == before and _siblings(p) == []


def test_the_schema_is_created_only_in_a_new_or_empty_file(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.db"
    c = sqlite3.connect(blank)
    c.execute("CREATE TABLE t(x)")
    c.execute("DROP TABLE t")  # a valid SQLite file with no schema objects
    c.commit()
    c.close()
    for p in (empty, blank, tmp_path / "new.db"):
        with KnowledgeBase.create(p) as kb:
            kb.add_edges([("a", "b")])
        with KnowledgeBase.open(p, create=False) as kb:
            assert kb.stats()["edges"] == 1


# ----------------------------------------------------------------- item 4: no raw exceptions
def _corrupt(tmp_path: Path) -> Path:
    p = _real_store(tmp_path / "corrupt.db")
    data = bytearray(p.read_bytes())
    rng = random.Random(7)
    for off in range(3 * 4096, len(data), 4096):
        data[off + 100 : off + 300] = bytes(rng.randrange(256) for _ in range(200))
    p.write_bytes(bytes(data))
    return p


def _meta_deleted(tmp_path: Path) -> Path:
    return _edited(_real_store(tmp_path / "nometa.db"), "DELETE FROM meta WHERE key = 'version'")


def _scopes_not_json(tmp_path: Path) -> Path:
    return _edited(_real_store(tmp_path / "badscopes.db"), "UPDATE nodes SET scopes = '{not json' WHERE id = 'c3'")


def _directory(tmp_path: Path) -> Path:
    d = tmp_path / "kbdir.db"
    d.mkdir()
    return d


BROKEN = {
    # (which of the two depends on which pages the noise lands on)
    "corrupted pages": (_corrupt, "database disk image is malformed|codec can't decode"),
    "foreign, user_version 1": (
        lambda t: _foreign(t / "uv1.db", user_version=1, nodes_table=False),
        "not a conceptwalk knowledge base .*user_version 1 but no 'meta' table",
    ),
    "a directory": (_directory, "is a directory"),
    "meta row deleted": (_meta_deleted, "meta row 'version' is missing"),
    "scopes not JSON": (_scopes_not_json, "node 'c3' has scopes '\\{not json', not a JSON list"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_store_raises_a_conceptwalk_error_naming_the_file(tmp_path, case):
    make, what = BROKEN[case]
    p = make(tmp_path)
    before = None if p.is_dir() else _digest(p)
    with pytest.raises(ConceptwalkError, match=what) as info:
        _use(p)
    assert p.name in str(info.value)
    if before is not None:
        assert _digest(p) == before


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_cli_prints_one_line_for_a_broken_store(tmp_path, capsys, case):
    p = BROKEN[case][0](tmp_path)
    for argv in (["stats", str(p)], ["context", str(p), "concept", "-k", "3"], ["probe", str(p)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("conceptwalk: error: "), (argv, err)


def test_importing_a_missing_file_or_a_directory_names_it(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    for fn in (import_jsonl, import_edge_list):
        with pytest.raises(InputError, match=r"missing\.jsonl: cannot read the file: no such file"):
            fn(kb, tmp_path / "missing.jsonl")
        with pytest.raises(InputError, match=r"adir: cannot read the file: is a directory"):
            fn(kb, tmp_path / "adir")
    kb.close()
    for target in ("missing.jsonl", "adir"):
        assert main(["import", str(tmp_path / "kb.db"), str(tmp_path / target), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("conceptwalk: error: ") and target in err


@pytest.mark.parametrize(
    "argv_tail, what",
    [
        (["context", "{kb}", "--concept", "c1", "--eps", "1e-300"], "restart \\* eps must be >= 1e-12"),
        (["context", "{kb}", "--concept", "c1", "-k", "99999999999999999999"], "argument -k: must be an integer in"),
        (["suggest", "{kb}", "c1", "--min-shared", "99999999999"], "argument --min-shared: must be an integer in"),
        (["suggest", "{kb}", "c1", "-k", "0"], "argument -k: must be an integer in"),
        (["context", "{kb}", "--concept", "c1", "--restart", "nan"], "argument --restart: must be a number in"),
        (
            ["query", "{kb}", "concept", "--mode", "embedding", "--embedder", "hashing:99999999999"],
            "dim must be an integer in \\[1, 65536\\], got 99999999999",
        ),
        (["synth", "{kb}x", "--concepts", "99999999999999"], "argument --concepts: must be an integer in"),
    ],
)
def test_out_of_range_cli_arguments_give_one_clear_line(tmp_path, capsys, argv_tail, what):
    kb = str(_real_store(tmp_path / "kb.db"))
    argv = [a.replace("{kb}", kb) for a in argv_tail]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse: usage line + one error line, status 2
        rc = exc.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(what, err), err
    assert err.strip().splitlines()[-1].startswith(("conceptwalk: error: ", "conceptwalk ")), err


def test_the_hashing_dimension_has_an_upper_bound():
    assert HashingEmbedder(dim=65536).dim == 65536
    with pytest.raises(InputError, match="dim must be an integer in \\[1, 65536\\]"):
        get_embedder("hashing:99999999999")


# ----------------------------------------------------------------- item 7: JSON scalars
VALUES = {"authority": True, "fidelity": 0.75, "extraction_method": 3, "lifecycle": "0.75"}


def _walk_hop(kb: KnowledgeBase) -> dict:
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=WalkConfig(embedder=None))
    out = r.query("alpha", 3, concept_walk=True, caller=Caller.all_access())
    return next(x for x in out if x.get("via") == "concept-walk")["paths"][0]["hops"][0]


def _check_round_trip(kb: KnowledgeBase) -> None:
    g = kb.graph()
    e = g.edges_between(g.index("c:a"), g.index("f:b"))[0]
    got = {k: g.edge_annotation(e, k) for k in VALUES}
    assert got == VALUES and [type(v) for v in got.values()] == [bool, float, int, str]
    hop = _walk_hop(kb)
    assert hop["authority"] is True and hop["fidelity"] == 0.75 and hop["lifecycle"] == "0.75"
    assert hop["extractionProvenance"] == {"method": 3, "confidence": 0.5}
    text = json.dumps(hop)
    assert '"authority": true' in text and '"fidelity": 0.75' in text and '"lifecycle": "0.75"' in text
    assert '"method": 3' in text


NODES7 = [{"id": "c:a", "type": "CONCEPT", "title": "alpha"}, {"id": "f:b", "type": "FILE", "title": "b"}]


def test_provenance_numbers_and_booleans_round_trip_store_graph_wrap(tmp_path):
    with KnowledgeBase.create(tmp_path / "kb.db") as kb:
        kb.add_nodes(NODES7)
        kb.add_edges([{"src": "c:a", "dst": "f:b", "type": "IMPLEMENTED_BY", "extraction_confidence": 0.5, **VALUES}])
    with KnowledgeBase.open(tmp_path / "kb.db", create=False) as kb:  # as stored on disk
        _check_round_trip(kb)
        assert kb.annotation_presence()["fidelity"] == 1


def test_provenance_numbers_and_booleans_through_the_importers(tmp_path):
    p = tmp_path / "kb.jsonl"
    rows = NODES7 + [{"src": "c:a", "dst": "f:b", "type": "IMPLEMENTED_BY", "extraction_confidence": 0.5, **VALUES}]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kb = KnowledgeBase.open(":memory:")
    import_jsonl(kb, p)
    _check_round_trip(kb)
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    for n in NODES7:
        G.add_node(n["id"], **{k: v for k, v in n.items() if k != "id"})
    G.add_edge("c:a", "f:b", type="IMPLEMENTED_BY", extraction_confidence=0.5, **VALUES)
    kb2 = KnowledgeBase.open(":memory:")
    import_networkx(kb2, G)
    _check_round_trip(kb2)


def test_a_number_and_its_string_stay_distinct_in_the_graph():
    g = LinkGraph.from_edges(
        [
            {"src": "a", "dst": "b", "fidelity": 1},
            {"src": "b", "dst": "c", "fidelity": "1"},
            {"src": "c", "dst": "d", "fidelity": True},
            {"src": "d", "dst": "e", "fidelity": 1.0},
        ]
    )
    vals = [g.edge_annotation(e, "fidelity") for e in range(g.num_edges)]
    assert sorted(map(repr, vals)) == sorted(["1", "'1'", "True", "1.0"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1], {"a": 1}, 2**64, "\x00true"])
def test_other_provenance_values_are_refused(value):
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match="add_edges: rows\\[0\\]: 'fidelity' must"):
        kb.add_edges([{"src": "a", "dst": "b", "fidelity": value}])
    if not isinstance(value, str):  # a NUL-marked string is the graph's own name of a JSON value
        with pytest.raises(InputError, match="fidelity"):
            LinkGraph.from_edges([{"src": "a", "dst": "b", "fidelity": value}])


# ----------------------------------------------------------------- item 8 (small ones)
@pytest.mark.parametrize("cell", ["0_1", "0_5", "inf", "nan", "0x1", "1e", "1_0"])
def test_a_csv_confidence_is_parsed_strictly(tmp_path, cell):
    p = tmp_path / "x.csv"
    p.write_text(f"src,dst,confidence\na,b,{cell}\n")
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match=r"x\.csv:2: 'extraction_confidence' must be a number in \[0, 1\], got '"):
        import_edge_list(kb, p)
    assert kb.stats()["edges"] == 0


def test_a_csv_confidence_in_plain_decimal_forms_is_accepted(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("src,dst,confidence\na,b,.5\nb,c,1\nc,d,5e-1\nd,e,+0.25\n")
    kb = KnowledgeBase.open(":memory:")
    import_edge_list(kb, p)
    g = kb.graph()
    assert sorted(g.edge_annotation(e, "extraction_confidence") for e in range(g.num_edges)) == [0.25, 0.5, 0.5, 1.0]


def test_huge_and_deeply_nested_values_are_input_errors(tmp_path):
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError, match="add_edges: rows\\[0\\]: 'extraction_confidence' must be in \\[0, 1\\]"):
        kb.add_edges([{"src": "a", "dst": "b", "extraction_confidence": 10**400}])
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(InputError, match="add_edges: rows\\[0\\]: 'fidelity' must be"):
        kb.add_edges([{"src": "a", "dst": "b", "fidelity": nested}])
    p = tmp_path / "x.jsonl"
    p.write_text('{"src": "a", "dst": "b", "extraction_confidence": 1' + "0" * 400 + "}\n" + "[" * 100_000 + "\n")
    with pytest.raises(InputError, match=r"x\.jsonl:1: 'extraction_confidence' must be in \[0, 1\]"):
        import_jsonl(kb, p)
    p.write_text('{"id": "a"}\n' + "[" * 100_000 + "\n")
    with pytest.raises(InputError, match=r"x\.jsonl:2: invalid JSON"):
        import_jsonl(kb, p)
    p.write_text('{"src": "a", "dst": "b", "extraction_confidence": 1' + "0" * 5000 + "}\n")
    with pytest.raises(InputError, match=r"x\.jsonl:1: invalid JSON"):
        import_jsonl(kb, p)
    assert kb.stats()["nodes"] == 0


def test_a_long_value_is_cut_in_error_messages():
    big = "x" * 5_000_000
    g = LinkGraph.from_edges([("a", "b")])
    with pytest.raises(NotFoundError) as info:
        g.shortest_path("a", big)
    msg = str(info.value)
    assert len(msg) < 300 and msg.startswith("target not found: 'xxx") and "… (5000002 chars)" in msg
    kb = KnowledgeBase.open(":memory:")
    with pytest.raises(InputError) as info2:
        kb.add_edges([{"src": "a", "dst": "b", big: 1}])
    assert len(str(info2.value)) < 500


def test_mcp_error_texts_do_not_echo_a_long_value():
    from conceptwalk.serve.mcp import ToolServer

    pytest.importorskip("jsonschema")
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    ts = ToolServer(g, caller=Caller.all_access())
    big = "q" * 5_000_000
    for name, args in (
        ("graph_path", {"source": "a", "target": big}),
        ("link_suggest", {"concept": big}),
        ("graph_context", {"question": big}),
        (big, {}),
        ("graph_context", {"concepts": [big]}),
        ("graph_path", {"source": "a", "target": "b", big: 1}),
    ):
        out = ts.call(name, args)
        assert out.is_error and len(out.text) < 1200, (name[:20], len(out.text))


def test_an_unknown_session_token_names_the_variable(tmp_path):
    from conceptwalk.serve.mcp import TOKEN_ENV, TokenFile, ToolServer

    tf = tmp_path / "tokens.json"
    tf.write_text(json.dumps({"tok-a": ["a"]}))
    g = LinkGraph.from_edges([("a", "b")])
    with pytest.raises(ConceptwalkError, match=f"^{TOKEN_ENV}: unknown token"):
        ToolServer(g, tokens=TokenFile(str(tf)), session_token="nope")
    ts = ToolServer(g, tokens=TokenFile(str(tf)), session_token="tok-a")
    tf.write_text(json.dumps({"tok-b": ["b"]}))  # the session token is revoked while serving
    os.utime(tf, ns=(1, 1))
    out = ts.call("graph_path", {"source": "a", "target": "b"})
    assert out.is_error and f"{TOKEN_ENV}: unknown token" in out.text
    # A per-call token is not the variable's: its message does not name it.
    out = ts.call("graph_path", {"source": "a", "target": "b"}, token="zzz")
    assert out.is_error and TOKEN_ENV not in out.text


def test_serve_prints_a_start_up_error_once(tmp_path):
    pytest.importorskip("mcp")
    kb = _real_store(tmp_path / "kb.db", n=6)
    bad = tmp_path / "tokens.json"
    bad.write_text("not json")
    proc = subprocess.run(
        [sys.executable, "-m", "conceptwalk", "serve", str(kb), "--token-file", str(bad)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("is not valid JSON") == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]


def test_an_input_file_that_is_not_utf8_is_still_named_by_the_importer(tmp_path):
    # The store turns a stored text that is not UTF-8 into a ConceptwalkError about the store;
    # an importer's own input decoding error inside its transaction must stay its InputError.
    p = tmp_path / "x.txt"
    p.write_bytes(b"\x9c\n")
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    with pytest.raises(InputError, match=r"x\.txt:1: not valid UTF-8"):
        import_edge_list(kb, p)
    assert kb.version == 0


def test_an_argument_error_is_one_line_even_for_an_argument_with_a_newline(capsys):
    with pytest.raises(SystemExit) as info:
        main(["stats", "kb.db", "x\ny"])
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().split("\n")
    assert lines[-1] == "conceptwalk: error: unrecognized arguments: x y" and len(lines) == 2
