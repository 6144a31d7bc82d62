"""A str that is not text (a lone UTF-16 surrogate, ``"\\ud800"``) given to the store's API.

SQLite cannot bind such a str. A write names the row and key that hold it and writes nothing; a
read or delete takes it as an id no store holds; a path holding bytes that are not UTF-8
(Python's ``surrogateescape``) is refused by name. Before, each of these raised a bare
``UnicodeEncodeError`` naming nothing (errors.md E183-E185).
"""

from __future__ import annotations

import os

import pytest

from conceptwalk.errors import InputError
from conceptwalk.kb.store import _CHUNK, KnowledgeBase

LONE = "\ud800"


@pytest.fixture
def kb(tmp_path):
    kb = KnowledgeBase.open(str(tmp_path / "kb.db"), create=True)
    kb.add_nodes([{"id": "a", "title": "alpha"}, {"id": "b"}])
    kb.add_edges([("a", "b")])
    kb.set_embeddings("toy", ["a"], [[1.0, 0.0]])
    yield kb
    kb.close()


def _dump(kb):
    conn = kb.conn
    return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in ("nodes", "edges", "aliases")]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda kb: kb.add_nodes([{"id": "n"}, {"id": "m", "title": "x" + LONE}]), "add_nodes: rows[1]: 'title'"),
        (lambda kb: kb.add_nodes([{"id": "m" + LONE}]), "add_nodes: rows[0]: 'id'"),
        (lambda kb: kb.add_nodes([{"id": "m", "body": LONE}]), "add_nodes: rows[0]: 'body'"),
        (lambda kb: kb.add_nodes([{"id": "m", "scopes": ["t", LONE]}]), "add_nodes: rows[0]: 'scopes'"),
        (lambda kb: kb.add_edges([("a", "b", "R" + LONE)]), "add_edges: rows[0]: item 2"),
        (lambda kb: kb.add_edges([{"src": LONE, "dst": "b"}]), "add_edges: rows[0]: 'src'"),
        (lambda kb: kb.add_edges([{"src": "a", "dst": "b", "authority": LONE}]), "add_edges: rows[0]: 'authority'"),
        (lambda kb: kb.add_aliases([("x" + LONE, "a")]), "add_aliases: rows[0]: item 0"),
        (lambda kb: kb.add_aliases([{"alias": "x", "canonical": LONE}]), "add_aliases: rows[0]: 'canonical'"),
    ],
)
def test_a_write_names_the_row_and_writes_nothing(kb, call, message):
    before = _dump(kb)
    with pytest.raises(InputError) as err:
        call(kb)
    assert str(err.value).startswith(message + " holds a lone surrogate (\\ud800), which is not text")
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert _dump(kb) == before


def test_a_later_chunk_is_named_by_its_index_and_the_earlier_chunks_are_rolled_back(kb):
    before = _dump(kb)
    bad = _CHUNK + 7
    rows = ({"id": f"g{i}", "title": LONE if i == bad else "t"} for i in range(_CHUNK * 2))
    with pytest.raises(InputError, match=rf"^add_nodes: rows\[{bad}\]: 'title' holds"):
        kb.add_nodes(rows)
    assert _dump(kb) == before


def test_inside_a_transaction_the_error_propagates_and_the_transaction_is_rolled_back(kb):
    before = _dump(kb)
    with pytest.raises(InputError, match=r"rows\[0\]: 'title'"):
        with kb.transaction():
            kb.add_nodes([{"id": "c", "title": "fine"}])
            kb.add_nodes([{"id": "d", "title": LONE}])
    assert _dump(kb) == before
    assert kb.add_nodes([{"id": "c"}]) == 1  # the store writes again


def test_reads_and_deletes_take_it_as_an_unknown_id(kb):
    assert kb.node(LONE) is None
    assert kb.nodes(["a", LONE]) == [kb.node("a")]
    assert kb.delete_nodes([LONE]) == 0
    assert kb.delete_edges([("a", LONE), (LONE, "b", "LINK")]) == 0
    assert kb.has_embeddings(LONE) is False
    ids, matrix = kb.get_embeddings(LONE)
    assert ids == [] and matrix.shape == (0, 0)
    assert kb.read_embeddings("toy", ["a", LONE], skip_missing=True).ids == ["a"]
    assert kb.read_embeddings(LONE, ["a"], skip_missing=True).ids == []
    with pytest.raises(Exception, match="not found") as err:
        kb.get_embeddings("toy", [LONE])
    assert not isinstance(err.value, UnicodeError)
    assert kb.stats()["nodes"] == 2 and kb.stats()["edges"] == 1


def test_node_refuses_what_is_not_a_string(kb):
    with pytest.raises(InputError, match=r"^node: node_id must be a string, got list$"):
        kb.node(["a"])


@pytest.mark.parametrize("opener", [KnowledgeBase.open, KnowledgeBase.create, KnowledgeBase.open_read_only])
def test_a_path_that_is_not_utf8_is_refused_by_name(tmp_path, opener):
    p = os.path.join(str(tmp_path), "x\udc80.db")  # the name b"x\x80.db" as Python gives it
    with pytest.raises(InputError, match=r"x\\udc80\.db': the path holds bytes that are not UTF-8"):
        opener(p)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"id": "late", "title": LONE}, r"rows\[\d+\]: 'title' holds a lone surrogate"),
        ({"title": "no id"}, r"missing 'id'"),
    ],
)
def test_a_failed_call_inside_a_transaction_leaves_none_of_its_rows(kb, bad, message):
    """A write call that fails inside a caller's transaction, its error caught there, leaves
    nothing of its rows (not the earlier chunks, not the failing chunk's first rows) in the
    transaction the caller then commits; the calls before it stay."""
    rows = [{"id": f"g{i}", "title": "t"} for i in range(_CHUNK + 3)] + [bad]
    with kb.transaction():
        kb.add_nodes([{"id": "kept"}])
        with pytest.raises(InputError, match=message):
            kb.add_nodes(rows)
        kb.add_edges([("kept", "a")])  # the transaction goes on
    assert kb.node("kept") is not None and kb.node("g0") is None and kb.node(f"g{_CHUNK + 2}") is None
    assert kb.stats()["nodes"] == 3 and kb.stats()["edges"] == 2


def test_embeddings_import_options_and_export_paths(kb, tmp_path):
    with pytest.raises(InputError, match=r"^set_embeddings: model holds a lone surrogate \(\\ud800\)"):
        kb.set_embeddings("m" + LONE, ["a"], [[1.0, 0.0]])
    with pytest.raises(InputError, match=r"^set_embeddings: ids\[1\] holds a lone surrogate"):
        kb.set_embeddings("toy", ["a", LONE], [[1.0, 0.0], [0.0, 1.0]])
    # two surrogates that would pair in UTF-16 are still two code points no store holds (the ids
    # are checked in one encode of them all: it must refuse these too, and the loop name them)
    with pytest.raises(InputError, match=r"^set_embeddings: ids\[2\] holds a lone surrogate \(\\ud83d\)"):
        kb.set_embeddings("toy", ["a", "b", "\ud83d\ude00"], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    jsonl = tmp_path / "n.jsonl"
    jsonl.write_text('{"id": "zz"}\n')
    tsv = tmp_path / "e.tsv"
    tsv.write_text("p\tq\n")
    before = _dump(kb)
    with pytest.raises(InputError, match=r"^scopes\[1\] holds a lone surrogate"):
        kb.import_file(str(jsonl), scopes=["ok", LONE])
    with pytest.raises(InputError, match=r"^default_type holds a lone surrogate"):
        kb.import_file(str(tsv), format="edges", default_type=LONE)
    assert _dump(kb) == before
    from conceptwalk.kb.formats import export_file

    with pytest.raises(InputError, match=r"the path holds a lone surrogate"):
        export_file(kb, str(tmp_path / f"x{LONE}.jsonl"))
    assert export_file(kb, str(tmp_path / "x\udc80.jsonl")).nodes == 2  # an undecodable byte of a real name


@pytest.mark.parametrize(
    ("name", "text", "options", "message"),
    [
        (
            "b.ttl",
            "@prefix ex: <http://ex.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
            'ex:b rdfs:label "beta" .\nex:a rdfs:label "al\\uD800pha" ; rdfs:subClassOf ex:b .\n',
            {},
            r"^the row of 'ex:a' holds a lone surrogate \(\\ud800\)",
        ),
        (
            "d.nt",
            '<http://ex.org/b> <http://www.w3.org/2000/01/rdf-schema#label> "beta" .\n'
            '<http://ex.org/a> <http://www.w3.org/2000/01/rdf-schema#label> "x\\uD800" .\n',
            {},
            r"^the row of 'http://ex.org/a' holds a lone surrogate",
        ),
        (
            "b.gml",
            'graph [\n directed 1\n node [ id 0 label "zero" ]\n node [ id 1 label "one" type "T&#55296;" ]\n'
            ' edge [ source 0 target 1 label "R&#55296;" ]\n]\n',
            {},
            r"holds a lone surrogate \(\\ud800\)",
        ),
        (
            "a.obo",
            "format-version: 1.2\n\n[Term]\nid: X:1\nname: one\n\n[Term]\nid: X:2\nname: two\nis_a: X:1\n",
            {"node_type": "T" + LONE},
            r"^node_type holds a lone surrogate \(\\ud800\)",
        ),
    ],
)
def test_an_importer_names_the_row_or_option_and_writes_nothing(kb, tmp_path, name, text, options, message):
    """A file whose escape decodes to a lone surrogate (Turtle's ``\\uD800``, GML's ``&#55296;``)
    or a str option holding one: an InputError naming the row's id or the option, not a bare
    UnicodeEncodeError at the write; the import (one transaction) leaves the store as it was."""
    pytest.importorskip("rdflib")
    pytest.importorskip("networkx")
    pytest.importorskip("fastobo")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    before = _dump(kb)
    with pytest.raises(InputError, match=message):
        kb.import_file(str(path), **options)
    assert _dump(kb) == before


def test_an_import_or_a_nested_block_that_fails_inside_a_transaction_leaves_none_of_its_rows(kb, tmp_path):
    """The savepoint is the nested transaction's, not one write method's: an import of more rows
    than one chunk that fails at its last line (it had written two chunks), and a caller's own
    nested block that raises, leave nothing in the transaction the caller commits."""
    path = tmp_path / "n.jsonl"
    path.write_text("".join(f'{{"id": "n{i}"}}\n' for i in range(2 * _CHUNK + 5)) + '{"title": "no id"}\n')
    with kb.transaction():
        kb.add_nodes([{"id": "kept"}])
        with pytest.raises(InputError, match=r"n\.jsonl:\d+: expected a node"):
            kb.import_file(str(path))
        with pytest.raises(RuntimeError):
            with kb.transaction():
                kb.add_nodes([{"id": "inner"}])
                raise RuntimeError("the caller's own error")
        kb.add_edges([("kept", "a")])
    assert kb.node("kept") is not None and kb.node("n0") is None and kb.node("inner") is None
    assert kb.stats()["nodes"] == 3 and kb.stats()["edges"] == 2
