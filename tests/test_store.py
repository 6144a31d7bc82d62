"""The embedded SQLite store: schema, round trips, transactions, the cached graph, search, and a
second process reading while one writes."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from conceptwalk import Caller
from conceptwalk.errors import ConceptwalkError, InputError, NotFoundError
from conceptwalk.kb.store import ANNOTATION_AXES, SCHEMA_VERSION, KnowledgeBase

NODES = [
    {
        "id": "c:ppr",
        "type": "CONCEPT",
        "title": "Personalized PageRank",
        "body": "random walk with restart",
        "scopes": ["team-a", "team-b"],
        "lifecycle": "ACTIVE",
    },
    {"id": "c:push", "type": "CONCEPT", "title": "Forward push", "body": "local push", "scopes": [], "lifecycle": None},
    {
        "id": "m:1",
        "type": "MEMORY",
        "title": "Décision « push »",
        "body": None,
        "scopes": ["team-a"],
        "lifecycle": "ARCHIVED",
    },
    {"id": "f:1", "type": None, "title": None, "body": "int main() {}", "scopes": None, "lifecycle": None},
]
EDGES = [
    {
        "src": "c:push",
        "dst": "c:ppr",
        "type": "IMPLEMENTS",
        "authority": "CANONICAL",
        "fidelity": "VERBATIM",
        "extraction_method": "TAGGED_CONCEPT",
        "extraction_confidence": 1.0,
        "lifecycle": "ACTIVE",
    },
    {
        "src": "m:1",
        "dst": "c:push",
        "type": "TAGGED_CONCEPT",
        "authority": None,
        "fidelity": "SUMMARY",
        "extraction_method": "LLM_EXTRACTED",
        "extraction_confidence": 0.8,
        "lifecycle": None,
    },
    {
        "src": "m:1",
        "dst": "f:1",
        "type": "ATTACHED_TO",
        "authority": None,
        "fidelity": None,
        "extraction_method": None,
        "extraction_confidence": None,
        "lifecycle": None,
    },
    {
        "src": "c:ppr",
        "dst": "c:push",
        "type": "RELATED_TO",
        "authority": "COMMUNITY",
        "fidelity": None,
        "extraction_method": None,
        "extraction_confidence": 0.0,
        "lifecycle": "DEPRECATED",
    },
]


def dump(path) -> dict:
    """Everything stored, read through an independent connection (the oracle for 'unchanged')."""
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
            con.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES('integrity-check', 1)")
    finally:
        con.close()
    return out


@pytest.fixture
def kb(tmp_path):
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as k:
        k.enable_fts()  # the optional FTS5 index and its triggers too: kept through every write here
        yield k


@pytest.fixture
def full(kb):
    kb.add_nodes(NODES)
    kb.add_edges(EDGES)
    kb.add_aliases([("pagerank", "c:ppr"), {"alias": "PPR", "canonical": "c:ppr"}, ("push", "c:push"), ("push", "m:1")])
    return kb


# ---------------------------------------------------------------------- schema and opening
def test_open_creates_wal_file_with_schema_version(tmp_path):
    p = tmp_path / "new.sqlite"
    with KnowledgeBase.create(p) as kb:
        assert kb.version == 0
        assert kb.schema_version == SCHEMA_VERSION
    con = sqlite3.connect(str(p))
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    assert {"meta", "nodes", "edges", "aliases", "embeddings"} <= names
    assert not {n for n in names if "fts" in n}  # the FTS5 index is made on demand (enable_fts)
    con.close()
    with KnowledgeBase.open(p, create=False) as kb:  # reopening keeps everything
        assert kb.version == 0


def test_open_missing_without_create(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.sqlite"):
        KnowledgeBase.open(tmp_path / "nope.sqlite", create=False)
    assert not (tmp_path / "nope.sqlite").exists()


def test_open_rejects_newer_schema_and_garbage(tmp_path):
    p = tmp_path / "future.sqlite"
    con = sqlite3.connect(str(p))
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(ConceptwalkError, match="newer"):
        KnowledgeBase.open(p)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConceptwalkError, match="cannot open"):
        KnowledgeBase.open(junk)


def test_a_second_open_keeps_the_first_ones_locks(tmp_path):
    """Opening a store this process already has open must not release the first connection's
    POSIX locks (closing any descriptor of a file releases them all): another process that then
    closed its connection took the file for unused and deleted its -wal and -shm under ours, and
    the writes committed after that were lost to every other process."""
    p = str(tmp_path / "kb.sqlite")
    kb = KnowledgeBase.create(p)
    other = KnowledgeBase.open(p)  # the file check of a second open
    writer = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "c.execute(\"INSERT INTO aliases VALUES ('rhino', 'doc')\"); c.close()"
    )
    try:
        kb.add_nodes([{"id": "doc", "title": "notes"}])
        subprocess.run([sys.executable, "-c", writer, p], check=True)
        assert (tmp_path / "kb.sqlite-wal").exists() and (tmp_path / "kb.sqlite-shm").exists()
        kb.add_nodes([{"id": "m2", "title": "another"}])
        other.add_nodes([{"id": "m3", "title": "a third"}])
        reader = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM nodes').fetchone()[0])"
        got = subprocess.run([sys.executable, "-c", reader, p], capture_output=True, text=True, check=True)
        assert got.stdout.strip() == "3"
    finally:
        kb.close()
        other.close()


def test_closed_store_raises(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb.sqlite")
    kb.close()
    kb.close()  # idempotent
    with pytest.raises(ConceptwalkError, match="closed"):
        kb.add_nodes([{"id": "a"}])


# ---------------------------------------------------------------------- round trips
def test_round_trip_every_node_field(full):
    for row in NODES:
        assert full.node(row["id"]) == row
    assert full.node("missing") is None
    got = full.nodes(["m:1", "missing", "c:ppr", "m:1"])
    assert [r["id"] for r in got] == ["m:1", "c:ppr", "m:1"]
    assert got[0] == NODES[2]


def test_round_trip_every_edge_field(full, tmp_path):
    con = sqlite3.connect(str(tmp_path / "kb.sqlite"))
    cols = ["src", "dst", "type", *ANNOTATION_AXES]
    stored = [dict(zip(cols, r)) for r in con.execute(f"SELECT {', '.join(cols)} FROM edges")]
    con.close()
    key = lambda e: (e["src"], e["dst"], e["type"])  # noqa: E731
    assert sorted(stored, key=key) == sorted(EDGES, key=key)
    # ... and through the graph snapshot, annotation by annotation.
    g = full.graph()
    seen = 0
    for e in EDGES:
        a, b = g.index(e["src"]), g.index(e["dst"])
        for eid in g.edges_between(a, b):
            if (g.ids[g.edge_src[eid]], g.ids[g.edge_dst[eid]]) != (e["src"], e["dst"]):
                continue
            if g.edge_type_names[g.edge_type_codes[eid]] != e["type"]:
                continue
            seen += 1
            for axis in ANNOTATION_AXES:
                assert g.edge_annotation(eid, axis) == e[axis], (e, axis)
    assert seen == len(EDGES)


def test_graph_carries_node_attributes(full):
    g = full.graph()
    assert g.ids == sorted(r["id"] for r in NODES)
    assert g.node_type("c:ppr") == "CONCEPT"
    assert g.node_type("f:1") == "NODE"  # untyped nodes get the graph's default type
    assert g.title("m:1") == "Décision « push »"
    assert g.node_scopes("c:ppr") == ("team-a", "team-b")
    assert g.node_scopes("c:push") == ()
    mask = g.scope_mask(["team-b"])
    assert {g.ids[i] for i in np.flatnonzero(mask)} == {"c:ppr", "c:push", "f:1"}
    life = {
        g.ids[i]: (None if c < 0 else g.node_lifecycle_names[c]) for i, c in enumerate(g.node_lifecycle_codes.tolist())
    }
    assert life == {r["id"]: r["lifecycle"] for r in NODES}


def test_round_trip_aliases(full):
    assert full.aliases() == {"PPR": ["c:ppr"], "pagerank": ["c:ppr"], "push": ["c:push", "m:1"]}
    full.add_aliases([("push", "m:1")])  # re-adding a pair is a no-op
    assert full.stats()["aliases"] == 4


def test_round_trip_embeddings(full):
    rng = np.random.default_rng(7)
    ids = ["m:1", "c:ppr", "c:push"]
    mat = rng.standard_normal((3, 16)).astype(np.float32)
    assert full.set_embeddings("toy", ids, mat) == 3
    got_ids, got = full.get_embeddings("toy")
    assert got_ids == sorted(ids)
    assert got.dtype == np.float32 and got.shape == (3, 16)
    order = [ids.index(i) for i in got_ids]
    assert np.array_equal(got, mat[order])  # bit-exact
    sub_ids, sub = full.get_embeddings("toy", ["c:push", "m:1"])
    assert sub_ids == ["c:push", "m:1"] and np.array_equal(sub, mat[[2, 0]])
    # Overwrite one vector; a second model is independent.
    full.set_embeddings("toy", ["c:ppr"], np.ones((1, 16)))
    assert np.array_equal(full.get_embeddings("toy", ["c:ppr"])[1], np.ones((1, 16), np.float32))
    full.set_embeddings("other", ["f:1"], np.zeros((1, 3), np.float64))
    assert full.stats()["embeddings"] == {"other": 1, "toy": 3}
    with pytest.raises(NotFoundError, match="embedding not found: 'f:1'"):
        full.get_embeddings("toy", ["c:ppr", "f:1"])
    ids0, m0 = full.get_embeddings("no-such-model")
    assert ids0 == [] and m0.shape == (0, 0)


@pytest.mark.parametrize(
    "ids, matrix, match",
    [
        (["c:ppr"], np.zeros((1, 8)), "dim 16, got dim 8"),
        (["c:ppr", "nope"], np.zeros((2, 16)), r"ids\[1\] 'nope' is not a node"),
        (["c:ppr", "c:ppr"], np.zeros((2, 16)), r"ids\[1\] repeats"),
        (["c:ppr"], np.full((1, 16), np.nan), r"rows\[0\].*non-finite"),
        (["c:ppr"], np.zeros((2, 16)), "shape"),
        (["c:ppr"], np.zeros(16), "shape"),
        (["c:ppr"], np.array([["x"] * 16]), "real numbers"),
    ],
)
def test_bad_embeddings_change_nothing(full, tmp_path, ids, matrix, match):
    full.set_embeddings("toy", ["m:1"], np.zeros((1, 16)))
    before = dump(tmp_path / "kb.sqlite")
    with pytest.raises(InputError, match=match):
        full.set_embeddings("toy", ids, matrix)
    assert dump(tmp_path / "kb.sqlite") == before


def test_embeddings_replace_changes_dim(full):
    full.set_embeddings("toy", ["m:1", "c:ppr"], np.zeros((2, 4)))
    full.set_embeddings("toy", ["c:push"], np.ones((1, 2)), replace=True)
    ids, m = full.get_embeddings("toy")
    assert ids == ["c:push"] and m.shape == (1, 2)


# ---------------------------------------------------------------------- updates and bare nodes
def test_readding_an_edge_updates_given_annotations_only(full):
    full.add_edges(
        [
            {
                "src": "c:push",
                "dst": "c:ppr",
                "type": "IMPLEMENTS",
                "authority": "COMMUNITY",
                "extraction_confidence": None,
            }
        ]
    )
    con = full.conn
    row = con.execute(
        "SELECT authority, fidelity, extraction_method, extraction_confidence, lifecycle "
        "FROM edges WHERE src='c:push' AND dst='c:ppr' AND type='IMPLEMENTS'"
    ).fetchall()
    assert row == [("COMMUNITY", "VERBATIM", "TAGGED_CONCEPT", None, "ACTIVE")]
    assert full.stats()["edges"] == len(EDGES)  # no duplicate
    # A different type is a different edge.
    full.add_edges([("c:push", "c:ppr", "RELATED_TO")])
    assert full.stats()["edges"] == len(EDGES) + 1


def test_readding_a_node_updates_given_keys_only(full):
    full.add_nodes([{"id": "c:ppr", "title": "PPR", "scopes": None}])
    assert full.node("c:ppr") == {**NODES[0], "title": "PPR", "scopes": None}
    assert [i for i, _ in full.search("personalized")] == []  # the FTS index followed
    assert [i for i, _ in full.search("ppr")] == ["c:ppr"]


def test_edges_create_bare_nodes_that_nodes_fill_in(kb):
    kb.add_edges([{"src": "a", "dst": "b"}])
    assert kb.node("b") == {"id": "b", "type": None, "title": None, "body": None, "scopes": None, "lifecycle": None}
    st = kb.stats()
    assert st["nodes"] == 2 and st["untyped_nodes"] == 2 and st["nodes_by_type"] == {}
    kb.add_nodes([{"id": "b", "type": "CONCEPT", "title": "Bee"}])
    kb.add_edges([{"src": "b", "dst": "a"}])  # must not overwrite b's fields
    assert kb.node("b")["title"] == "Bee"
    assert kb.stats()["nodes_by_type"] == {"CONCEPT": 1}
    assert kb.stats()["edges_by_type"] == {"LINK": 2}


# ---------------------------------------------------------------------- bad rows
GOOD = [{"id": f"n{i}", "type": "CONCEPT", "title": f"node {i}"} for i in range(6000)]


@pytest.mark.parametrize(
    "method, bad, match",
    [
        ("add_nodes", {"type": "CONCEPT"}, "missing 'id'"),
        ("add_nodes", {"id": ""}, "'id' must not be empty"),
        ("add_nodes", {"id": 5}, "'id' must be a string"),
        ("add_nodes", {"id": "x", "scopes": "team-a"}, "'scopes' must be a list of strings"),
        ("add_nodes", {"id": "x", "scopes": ["a", 3]}, "'scopes' must hold non-empty strings"),
        ("add_nodes", {"id": "x", "title": 3.5}, "'title' must be a string or null"),
        ("add_nodes", {"id": "x", "colour": "red"}, "unknown key 'colour'"),
        ("add_nodes", ["x"], "expected a node dict"),
        ("add_edges", {"src": "a"}, "missing 'dst'"),
        ("add_edges", {"src": "a", "dst": "b", "extraction_confidence": 1.5}, r"must be in \[0, 1\], got 1.5"),
        ("add_edges", {"src": "a", "dst": "b", "extraction_confidence": -0.1}, r"must be in \[0, 1\]"),
        ("add_edges", {"src": "a", "dst": "b", "extraction_confidence": math.nan}, r"must be in \[0, 1\]"),
        ("add_edges", {"src": "a", "dst": "b", "extraction_confidence": "0.5"}, "must be a number"),
        ("add_edges", {"src": "a", "dst": "b", "extraction_confidence": True}, "must be a number"),
        ("add_edges", {"src": "a", "dst": "b", "type": ""}, "'type' must not be empty"),
        ("add_edges", {"src": "a", "dst": "b", "weight": 1}, "unknown key 'weight'"),
        ("add_aliases", {"alias": "x"}, "missing 'canonical'"),
        ("add_aliases", ("x", "no-such-node"), "canonical 'no-such-node' of alias 'x' is not a node"),
        ("add_aliases", ("x", "y", "z"), "pair"),
    ],
)
def test_bad_row_names_row_and_changes_nothing(kb, tmp_path, method, bad, match):
    kb.add_nodes([{"id": "seed", "title": "seed"}])
    kb.add_edges([("seed", "n1")])
    before = dump(tmp_path / "kb.sqlite")
    v0 = kb.version
    if method == "add_nodes":
        rows = GOOD[:5000] + [bad] + GOOD[5000:]
    elif method == "add_edges":
        rows = [{"src": r["id"], "dst": "seed"} for r in GOOD[:5000]] + [bad]
    else:
        rows = [("alias", "seed")] * 5000 + [bad]
    # A generator: rows before the bad one were already flushed in earlier chunks.
    with pytest.raises(InputError, match=rf"{method}: rows\[5000\]: .*{match}"):
        getattr(kb, method)(r for r in rows)
    assert dump(tmp_path / "kb.sqlite") == before
    assert kb.version == v0


def test_rows_must_be_an_iterable_of_rows(kb):
    with pytest.raises(InputError, match="iterable of rows"):
        kb.add_nodes({"id": "a"})
    with pytest.raises(InputError, match="iterable of rows"):
        kb.add_edges("ab")


# ---------------------------------------------------------------------- version and transactions
def test_every_write_bumps_the_version_once(kb):
    assert kb.version == 0
    kb.add_nodes([{"id": "a"}])
    assert kb.version == 1
    kb.add_edges([("a", "b")])
    kb.add_aliases([("A", "a")])
    kb.set_embeddings("m", ["a"], np.zeros((1, 2)))
    assert kb.version == 4
    with kb.transaction():
        kb.add_nodes([{"id": "c"}])
        kb.add_edges([("c", "a")])
    assert kb.version == 5
    with pytest.raises(RuntimeError), kb.transaction():
        kb.add_nodes([{"id": "d"}])
        raise RuntimeError("abort")
    assert kb.version == 5 and kb.node("d") is None


def test_cached_graph_rebuilt_after_write_and_not_before(kb, tmp_path, monkeypatch):
    # A build is a full read of the store or an advance along the change log.
    from conceptwalk.kb.snapshot import GraphSnapshot

    builds = []
    real_build, real_advance = GraphSnapshot.build.__func__, GraphSnapshot.advance

    def counting_build(cls, conn, version):
        builds.append("full")
        return real_build(cls, conn, version)

    def counting_advance(self, conn, changes, version):
        builds.append("advance")
        return real_advance(self, conn, changes, version)

    monkeypatch.setattr(GraphSnapshot, "build", classmethod(counting_build))
    monkeypatch.setattr(GraphSnapshot, "advance", counting_advance)
    with pytest.raises(InputError, match="no nodes"):
        kb.graph()
    kb.add_edges([("a", "b"), ("b", "c")])
    g1 = kb.graph()
    v1 = kb.version
    assert kb.graph() is g1 and kb.graph() is g1
    assert len(builds) == 2  # the failed empty build, then one
    # Reads do not invalidate.
    kb.search("anything"), kb.stats(), kb.node("a"), kb.aliases()
    assert kb.graph() is g1 and kb.version == v1
    # A failed write does not either.
    with pytest.raises(InputError):
        kb.add_edges([{"src": "a"}])
    assert kb.graph() is g1
    # A write does.
    kb.add_edges([("c", "d")])
    assert kb.version == v1 + 1
    g2 = kb.graph()
    assert g2 is not g1 and g2.num_nodes == 4 and g1.num_nodes == 3
    assert kb.graph() is g2 and len(builds) == 3
    # The two projections are cached separately.
    light = kb.graph(annotations=False)
    assert light is not g2 and kb.graph(annotations=False) is light
    assert light.edge_annotations == {} and set(g2.edge_annotations) == set(ANNOTATION_AXES)
    # A write through another connection (another process would be the same) is seen.
    with KnowledgeBase.open(tmp_path / "kb.sqlite") as other:
        other.add_nodes([{"id": "e"}])
    g3 = kb.graph()
    assert g3 is not g2 and "e" in g3


def test_graph_inside_a_rolled_back_transaction_is_not_cached(kb):
    kb.add_edges([("a", "b")])
    g1 = kb.graph()
    with pytest.raises(RuntimeError), kb.transaction():
        kb.add_edges([("b", "c")])
        assert kb.graph().num_nodes == 3  # sees its own write
        raise RuntimeError
    assert kb.graph() is g1
    kb.add_edges([("x", "y")])  # the same version number the rolled-back write had
    assert kb.graph().num_nodes == 4 and "c" not in kb.graph()


def test_stats_and_annotation_presence(full):
    st = full.stats()
    assert st["nodes"] == 4 and st["untyped_nodes"] == 1
    assert st["nodes_by_type"] == {"CONCEPT": 2, "MEMORY": 1}
    assert st["edges"] == 4
    assert st["edges_by_type"] == {"ATTACHED_TO": 1, "IMPLEMENTS": 1, "RELATED_TO": 1, "TAGGED_CONCEPT": 1}
    expected = {axis: sum(e[axis] is not None for e in EDGES) for axis in ANNOTATION_AXES}
    assert expected == {
        "authority": 2,
        "fidelity": 2,
        "extraction_method": 2,
        "extraction_confidence": 3,
        "lifecycle": 2,
    }
    assert full.annotation_presence() == expected == st["annotations"]
    assert st["aliases"] == 4 and st["embeddings"] == {}
    json.dumps(st)  # JSON-serialisable


# ---------------------------------------------------------------------- search
ALL = Caller.all_access()  # search defaults to public; these tests read every node
HOSTILE = [
    '"',
    '""',
    "'",
    "-",
    "--",
    ":",
    "title:",
    "AND",
    "OR",
    "NOT",
    "a AND",
    "AND OR NOT",
    "NEAR(",
    "NEAR(a b, 2)",
    "*",
    "push*",
    "^push",
    "(",
    ")",
    "((push",
    "push)",
    "{title}",
    "title:push",
    "c:ppr",
    "-push",
    "push -walk",
    "+",
    "\\",
    "\x00",
    "🙂",
    'push"walk',
    'say "hi',
    "rank",
    "bm25(nodes_fts)",
    "'; DROP TABLE nodes; --",
    "%",
    "_",
    "a" * 5000,
    " ".join(["w"] * 500),
    "ünïcödé",
    "ΑΒΓ",
    "中文",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_search_never_raises_on_hostile_text(full, text):
    hits = full.search(text)
    assert isinstance(hits, list)
    assert all(isinstance(i, str) and isinstance(s, float) for i, s in hits)


def test_search_empty_and_punctuation_only(full):
    for text in ['-:*"()', "!!!", "___", "the of and"]:  # no words, or stopwords only: nothing
        assert full.search(text) == []
    for text in ["", "   ", "\t\n"]:  # issue 32 item 5: an empty question is an error everywhere
        with pytest.raises(InputError, match="search: text is empty"):
            full.search(text)


def test_search_hits_ranks_and_filters(full):
    assert {i for i, _ in full.search("push", caller=ALL)} == {"c:push", "m:1"}
    # With a corpus large enough for a positive idf: a title hit in a short node beats one body
    # hit in a long one (titles weigh double, bm25 normalises by length).
    full.add_nodes([{"id": f"filler{i}", "title": f"unrelated text {i}", "body": "nothing here"} for i in range(20)])
    full.add_nodes([{"id": "body-only", "body": "push once in a much longer body of words"}])
    ranked = [i for i, _ in full.search("push", caller=ALL)]
    assert set(ranked[:2]) == {"c:push", "m:1"} and ranked[2:] == ["body-only"]
    assert [i for i, _ in full.search("PUSH", node_types=["MEMORY"], caller=ALL)] == ["m:1"]
    assert full.search("push", node_types=[], caller=ALL) == []
    assert [i for i, _ in full.search("decision", caller=ALL)] == ["m:1"]  # diacritics folded
    assert [i for i, _ in full.search("walking restarts", caller=ALL)] == ["c:ppr"]  # stemmed
    assert [i for i, _ in full.search("main", caller=ALL)] == ["f:1"]  # untyped node, body only
    # an id is a name (issue 32 item 1): the node comes first; no syntax error
    assert [i for i, _ in full.search("c:ppr", caller=ALL)] == ["c:ppr"]
    scores = [s for _, s in full.search("push", caller=ALL)]
    assert scores == sorted(scores, reverse=True)
    assert len(full.search("push", k=1, caller=ALL)) == 1
    with pytest.raises(InputError, match="k must be"):
        full.search("push", k=0)
    with pytest.raises(InputError, match="text must be a string"):
        full.search(None)  # type: ignore[arg-type]


def test_search_ties_break_by_id(kb):
    kb.add_nodes([{"id": i, "title": "same words here"} for i in ["z", "b", "m", "a"]])
    hits = kb.search("words")
    assert [i for i, _ in hits] == ["a", "b", "m", "z"]
    assert len({s for _, s in hits}) == 1


# ---------------------------------------------------------------------- concurrency
WRITER = textwrap.dedent("""
    import sys, time
    from conceptwalk.kb.store import KnowledgeBase
    kb = KnowledgeBase.open(sys.argv[1])
    for t in range(int(sys.argv[2])):
        with kb.transaction():
            kb.add_nodes([{"id": f"mark{t:04d}", "type": "MARK"}])
            time.sleep(0.002)  # widen the window in which a torn read would show
            kb.add_edges([{"src": f"mark{t:04d}", "dst": f"x{t}-{j}", "type": "E"} for j in range(10)])
    kb.close()
""")


def test_second_process_reader_sees_consistent_snapshots(tmp_path):
    path = tmp_path / "shared.sqlite"
    rounds = 80
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes([{"id": "root", "type": "ROOT"}])
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(rounds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        versions: set[int] = set()
        checks = 0
        try:
            while True:
                done = proc.poll() is not None
                g = kb.graph()
                marks = int(
                    (
                        np.asarray(g.node_type_codes)
                        == (g.node_type_names.index("MARK") if "MARK" in g.node_type_names else -2)
                    ).sum()
                )
                assert g.num_edges == 10 * marks
                assert g.num_nodes == 1 + 11 * marks
                st = kb.stats()
                assert st["edges"] == 10 * st["nodes_by_type"].get("MARK", 0)
                assert st["version"] == 1 + st["nodes_by_type"].get("MARK", 0)
                versions.add(st["version"])
                checks += 1
                if done:
                    break
                time.sleep(0.001)
        finally:
            out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert kb.version == 1 + rounds
        assert kb.graph().num_edges == 10 * rounds
        assert len(versions) >= 2, (versions, checks)  # the reads really overlapped the writes


def test_edge_fast_path_agrees_with_checked_path():
    from conceptwalk.kb.store import _edge_tuple_checked, edge_tuple

    rows = [
        {"src": "a", "dst": "b"},
        {"src": "a", "dst": "b", "type": None},
        {"src": "a", "dst": "b", "type": "T", "authority": None, "lifecycle": "L"},
        {"src": "a", "dst": "b", "extraction_confidence": 0.0},
        {"src": "a", "dst": "b", "extraction_confidence": 1},  # int: checked path only
        dict(EDGES[0]),
        dict(EDGES[1]),
        dict(EDGES[2]),
        dict(EDGES[3]),
    ]
    for row in rows:
        assert edge_tuple(row, "DEF") == _edge_tuple_checked(row, "DEF"), row
    assert edge_tuple(("a", "b")) == _edge_tuple_checked({"src": "a", "dst": "b"}, "LINK")


def test_node_fast_path_agrees_with_checked_path():
    from conceptwalk.kb.store import RowError, _node_tuple_checked, node_tuple

    class Str(str):
        pass

    rows = [
        {"id": "a"},
        {"id": "a", "type": None, "title": "", "body": "b", "lifecycle": None},
        {"id": "a", "type": "T", "title": "t", "body": None, "scopes": None, "lifecycle": "L"},
        {"id": "a", "scopes": []},
        {"id": "a", "scopes": ["t1", "t2"]},
        {"id": "a", "scopes": ["t1", "t2"]},  # the second time from the cache
        {"id": "a", "scopes": ("t1",)},  # a tuple: checked path only
        {"id": "a", "scopes": [Str("t1")]},
        {"id": Str("a"), "title": Str("x")},
        {"id": "ü'", "title": "0", "body": "-1"},
    ]
    for row in rows:
        assert node_tuple(row) == _node_tuple_checked(row), row
    # what the fast path cannot take goes to the checked path and fails there, with its message
    for bad in (
        {"id": ""},
        {"id": None},
        {"title": "t"},
        {"id": "a", "title": 3},
        {"id": "a", "scopes": "t1"},
        {"id": "a", "scopes": [["t1"]]},
        {"id": "a", "scopes": [""]},
        {"id": "a", "weight": 1},
        ["a"],
    ):
        with pytest.raises(RowError) as fast:
            node_tuple(bad)
        with pytest.raises(RowError) as checked:
            _node_tuple_checked(bad)
        assert str(fast.value) == str(checked.value), bad
