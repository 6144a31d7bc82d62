"""The store's graph snapshot: the columnar reader equals a per-row reference build, the snapshot
maintained along the change log equals a fresh build bit for bit (every array, every algorithm's
output, the scope masks) after any sequence of writes from one connection or two, writes that
cannot change the graph leave it alone, and the saved snapshot file is used only when it matches
the store (a damaged, foreign or stale file costs a rebuild, never a wrong answer)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import _core
from conceptwalk.errors import InputError
from conceptwalk.graph import LinkGraph
from conceptwalk.kb.snapshot import FILE_FORMAT, GraphSnapshot, SnapshotError, read_arrays, read_columns, write_arrays
from conceptwalk.kb.store import ANNOTATION_AXES, SCHEMA_VERSION, KnowledgeBase

IDS = ["a", "b", "c", "d", "e", "é", "z\x00z", "m/1", "m/2", "ω"]
TYPES = [None, "CONCEPT", "MEMORY", "NODE"]
SCOPES = [None, [], ["s1"], ["s2"], ["s1", "s2"], ["s2", "s1", "s2"]]
LABELS = [None, "A", "B", "z\x00"]
ETYPES = ["LINK", "CITES", "USES"]


# ---------------------------------------------------------------------- helpers
def reference_graph(conn: sqlite3.Connection) -> LinkGraph:
    """The graph built the simple way (one Python tuple per row), as the store did before the
    columnar reader: the reference the reader and every maintained snapshot must equal."""
    nodes = conn.execute("SELECT id, type, title, scopes, lifecycle FROM nodes ORDER BY id").fetchall()
    edges = conn.execute("SELECT src, dst, type, " + ", ".join(ANNOTATION_AXES) + " FROM edges").fetchall()
    ids = [r[0] for r in nodes]
    pos = {x: i for i, x in enumerate(ids)}
    cols = list(zip(*edges)) if edges else [()] * 8
    return LinkGraph.from_arrays(
        ids,
        [pos[x] for x in cols[0]],
        [pos[x] for x in cols[1]],
        list(cols[2]),
        node_types=[r[1] for r in nodes],
        titles=[r[2] for r in nodes],
        scopes=[None if r[3] is None else json.loads(r[3]) for r in nodes],
        lifecycle=[r[4] for r in nodes],
        edge_annotations={k: list(cols[3 + i]) for i, k in enumerate(ANNOTATION_AXES)},
    )


def array_diff(g: LinkGraph, h: LinkGraph) -> list[str]:
    a, b = g.to_arrays(), h.to_arrays()
    out = [
        k
        for k in sorted(a.keys() | b.keys())
        if k not in a
        or k not in b
        or a[k].dtype != b[k].dtype
        or a[k].shape != b[k].shape
        or a[k].tobytes() != b[k].tobytes()
    ]
    if g.ids != h.ids:
        out.append("ids list")
    if g.titles != h.titles:
        out.append("titles list")
    if g.id_index != h.id_index:
        out.append("id_index")
    if g.id_index != {x: i for i, x in enumerate(g.ids)}:
        out.append("id_index of the ids")
    for name in ("edge_src", "edge_dst", "edge_type_codes"):  # carried, patched or computed when read
        if not np.array_equal(getattr(g, name), getattr(h, name)) or getattr(g, name).dtype != np.int32:
            out.append(name)
    return out


def outputs(g: LinkGraph) -> list[object]:
    """Every algorithm's output on a few queries, unmasked and for two scope sets."""
    out: list[object] = []
    first, last = g.ids[0], g.ids[-1]
    for scopes in (None, [], ["s1"]):
        vm = g.visibility_for_scopes(scopes)
        mask = g.scope_mask(scopes)
        out.append(mask.tolist())
        vis = [x for x, m in zip(g.ids, mask.tolist()) if m]
        if not vis:
            continue
        s = vis[0]
        out.append(list(g.personalized_pagerank({s: 1.0}, eps=1e-6, visible=vm).items()))
        out.append([x.to_dict() for x in g.resource_allocation(s, min_shared=1, visible=vm)])
        out.append(g.shortest_path(s, vis[-1], visible=vm))
    out.append((first, last, g.self_loops, g.duplicate_edges, g.num_neighbour_pairs))
    return out


def fresh(path: str) -> LinkGraph:
    conn = sqlite3.connect(path)
    try:
        conn.execute("BEGIN")
        return reference_graph(conn)
    finally:
        conn.close()


# ---------------------------------------------------------------------- write sequences
node_row = st.builds(
    lambda i, t, ti, sc, lc, keys: {
        k: v
        for k, v in {"id": i, "type": t, "title": ti, "scopes": sc, "lifecycle": lc}.items()
        if k == "id" or k in keys
    },
    st.sampled_from(IDS),
    st.sampled_from(TYPES),
    st.sampled_from(LABELS),
    st.sampled_from(SCOPES),
    st.sampled_from(LABELS),
    st.sets(st.sampled_from(["type", "title", "scopes", "lifecycle"])),
)
edge_row = st.builds(
    lambda s, d, t, au, fi, me, co, lc: {
        "src": s,
        "dst": d,
        "type": t,
        "authority": au,
        "fidelity": fi,
        "extraction_method": me,
        "extraction_confidence": co,
        "lifecycle": lc,
    },
    st.sampled_from(IDS),
    st.sampled_from(IDS),
    st.sampled_from(ETYPES),
    st.sampled_from(LABELS),
    st.sampled_from(LABELS),
    st.sampled_from(LABELS),
    st.one_of(st.none(), st.sampled_from([0.0, 0.1, 1 / 3, 1.0])),
    st.sampled_from(LABELS),
)
op = st.one_of(
    st.tuples(st.just("nodes"), st.lists(node_row, min_size=1, max_size=3)),
    st.tuples(st.just("edges"), st.lists(edge_row, min_size=1, max_size=4)),
    st.tuples(st.just("del_nodes"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
    st.tuples(
        st.just("del_edges"),
        st.lists(
            st.tuples(st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from(ETYPES)), min_size=1, max_size=3
        ),
    ),
    st.tuples(st.just("noop"), st.sampled_from(IDS)),
)


def apply(kb: KnowledgeBase, o: tuple[str, object]) -> None:
    kind, arg = o
    if kind == "nodes":
        kb.add_nodes(arg)  # type: ignore[arg-type]
    elif kind == "edges":
        kb.add_edges(arg)  # type: ignore[arg-type]
    elif kind == "del_nodes":
        kb.delete_nodes(arg)  # type: ignore[arg-type]
    elif kind == "del_edges":
        kb.delete_edges(arg)  # type: ignore[arg-type]
    else:  # writes that cannot change the graph
        x = str(arg)
        if kb.node(x) is not None:
            kb.set_embeddings("m", [x], [[1.0, 2.0]])
            kb.add_aliases([(x + "-alias", x)])
            kb.add_nodes([{"id": x, "body": "a body only the text index reads"}])


def check(kb: KnowledgeBase, path: str) -> None:
    ref = fresh(path)
    g = kb.graph()
    assert array_diff(g, ref) == []
    assert outputs(g) == outputs(ref)
    light = kb.graph(annotations=False)
    assert light.edge_annotations == {} and light.ids == ref.ids


def follow(kb: KnowledgeBase, other: KnowledgeBase, path: str, ops: list[tuple[bool, tuple[str, object]]]) -> None:
    """Apply ``ops`` (through ``other``, standing for a second process, when the flag says so) and
    check ``kb``'s maintained snapshot against a fresh build after each."""
    for by_other, o in ops:
        apply(other if by_other else kb, o)
        if kb.stats()["nodes"] == 0:
            with pytest.raises(InputError, match="no nodes"):
                kb.graph()
            continue
        check(kb, path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.tuples(st.booleans(), op), min_size=1, max_size=14))
def test_maintained_snapshot_equals_a_fresh_build(ops):
    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "kb.sqlite")
        with KnowledgeBase.create(path) as kb, KnowledgeBase.open(path) as other:
            kb.add_edges([("a", "b")])
            kb.graph()
            follow(kb, other, path, ops)
        # A fresh process maps the saved snapshot (saved on close) and equals a fresh build.
        if fresh_nodes(path):
            with KnowledgeBase.open(path) as kb3:
                assert kb3.graph() is not None
                assert array_diff(kb3.graph(), fresh(path)) == []
    finally:
        shutil.rmtree(d)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(st.tuples(st.booleans(), op), min_size=1, max_size=10))
def test_a_snapshot_mapped_from_its_file_advances_to_a_fresh_build(ops):
    """As above from a snapshot mapped from its file (its titles packed, decoded when read)."""
    from conceptwalk.graph.linkgraph import PackedStrings

    d = tempfile.mkdtemp()
    try:
        path = os.path.join(d, "kb.sqlite")
        with KnowledgeBase.create(path) as kb:
            kb.add_nodes([{"id": x, "title": None if i % 3 == 0 else f"{x} títle {i}"} for i, x in enumerate(IDS)])
            kb.add_edges([("a", "b"), ("c", "ω")])
            kb.graph()
        with KnowledgeBase.open(path) as kb, KnowledgeBase.open(path) as other:
            assert isinstance(kb.graph().titles, PackedStrings)  # mapped from the file
            follow(kb, other, path, ops)
            if kb.stats()["nodes"]:
                # advanced with its titles packed (byte ranges carried, never decoded per node)
                assert isinstance(kb.graph().titles, PackedStrings)
    finally:
        shutil.rmtree(d)


def fresh_nodes(path: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM nodes").fetchone()[0])
    finally:
        conn.close()


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=10))
def test_columnar_reader_equals_the_per_row_reference(ops):
    with KnowledgeBase.open(":memory:") as kb:
        kb.add_edges([("a", "a"), ("a", "b")])
        for o in ops:
            apply(kb, o)
        if kb.stats()["nodes"] == 0:
            return
        with kb.transaction():
            g = read_columns(kb.conn).build()
            ref = reference_graph(kb.conn)
        assert array_diff(g, ref) == []


def test_writes_that_cannot_change_the_graph_keep_it(tmp_path):
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as kb:
        kb.add_nodes([{"id": "a", "title": "A", "body": "x"}, {"id": "b"}])
        kb.add_edges([("a", "b")])
        g = kb.graph()
        v = kb.version
        kb.set_embeddings("m", ["a", "b"], [[1.0], [2.0]])
        kb.add_aliases([("alpha", "a")])
        kb.add_nodes([{"id": "a", "body": "another body"}, {"id": "b", "title": None}])  # no graph change
        kb.add_edges([("a", "b")])  # the same edge again
        assert kb.version > v and kb.graph() is g
        # a body change is logged for a text index (kind 3), and the graph stays the same object
        assert kb.conn.execute("SELECT kind, a FROM changes ORDER BY seq DESC LIMIT 1").fetchone() == (3, "a")
        kb.add_nodes([{"id": "a", "title": "A2"}])  # titles are in the graph
        assert kb.graph() is not g and kb.graph().title("a") == "A2"


def test_scope_change_reaches_the_masks(tmp_path):
    with KnowledgeBase.create(tmp_path / "kb.sqlite") as kb:
        kb.add_nodes([{"id": "a"}, {"id": "b"}, {"id": "c", "scopes": ["team"]}])
        kb.add_edges([("a", "b"), ("b", "c")])
        g = kb.graph()
        vm = g.visibility_for_scopes([])
        assert vm is not None and vm.mask.tolist() == [True, True, False]
        kb.add_nodes([{"id": "b", "scopes": ["team"]}])  # b becomes private
        g2 = kb.graph()
        assert g2 is not g
        vm2 = g2.visibility_for_scopes([])
        assert vm2 is not None and vm2.mask.tolist() == [True, False, False]
        with pytest.raises(Exception, match="not found|unknown"):
            g2.personalized_pagerank({"b": 1.0}, visible=vm2)
        assert g2.visibility_for_scopes(["team"]).mask.tolist() == [True, True, True]


def _count_builds(monkeypatch) -> list[int]:
    """The versions GraphSnapshot.build is called for from now on (a graph read from the rows,
    not from a saved snapshot file)."""
    calls: list[int] = []
    real = GraphSnapshot.build.__func__

    def counting(cls, conn, version):
        calls.append(version)
        return real(cls, conn, version)

    monkeypatch.setattr(GraphSnapshot, "build", classmethod(counting))
    return calls


def test_fresh_process_maps_the_saved_snapshot_instead_of_reading_rows(tmp_path, monkeypatch):
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([("a", "b"), ("b", "c", "CITES")])
        g = kb.graph()
    assert os.path.exists(path + ".snapshot")
    meta, _ = read_arrays(path + ".snapshot")
    assert meta["schema_version"] == SCHEMA_VERSION and meta["kind"] == "conceptwalk.graph"
    calls = _count_builds(monkeypatch)
    with KnowledgeBase.open(path) as kb:
        assert array_diff(kb.graph(), g) == [] and calls == []
        # Another process wrote since: the file is brought forward by the change log.
        with KnowledgeBase.open(path) as other:
            other.add_edges([("c", "d")])
    with KnowledgeBase.open(path) as kb:
        h = kb.graph()
        assert "d" in h and calls == [] and array_diff(h, fresh(path)) == []


def test_a_mapped_snapshot_borrows_the_file_pages_and_outlives_its_replacement(tmp_path):
    """A fresh process's graph keeps the compiled arrays of the mapped file (no copy, so processes
    share its pages); replacing the file (the next save renames a new one over it) or deleting it
    leaves that graph answering as before, and its advance after a write equals a fresh build."""
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([(f"n{i}", f"n{(i * 7 + 3) % 40}", "LINK" if i % 3 else "CITES") for i in range(40)])
        kb.graph()
    with KnowledgeBase.open(path) as kb:
        g = kb.graph()
        assert g.core.borrowed
        before = outputs(g)
        inode = os.stat(path + ".snapshot").st_ino
        with KnowledgeBase.open(path) as other:  # another process writes and saves a new file
            other.SNAPSHOT_SAVE_EVERY = 1
            other.add_edges([("n1", "zz"), ("zz", "zz", "SELF")])
            other.graph()
        assert os.stat(path + ".snapshot").st_ino != inode  # replaced by a rename
        assert outputs(g) == before
        os.unlink(path + ".snapshot")
        assert outputs(g) == before
        h = kb.graph()  # brought forward from the mapped one
        assert not h.core.borrowed and array_diff(h, fresh(path)) == [] and outputs(h) == outputs(fresh(path))
    # arrays the caller can still write are copied, never borrowed
    arrays = {k: (np.array(v) if k.startswith("core.") else v) for k, v in g.to_arrays().items()}
    assert not LinkGraph.from_saved_arrays(arrays).core.borrowed
    assert LinkGraph.from_saved_arrays(g.to_arrays()).core.borrowed
    # read-only by flag over memory the caller owns (the flag can be set back): copied; over
    # memory no Python code can change (bytes, as a read-only mapped file's pages): kept
    for v in arrays.values():
        v.setflags(write=False)
    assert not LinkGraph.from_saved_arrays(arrays).core.borrowed
    frozen = {k: (np.frombuffer(v.tobytes(), dtype=v.dtype) if k.startswith("core.") else v) for k, v in arrays.items()}
    kept = LinkGraph.from_saved_arrays(frozen)
    assert kept.core.borrowed and array_diff(kept, g) == []


def test_saved_titles_stay_packed_and_damaged_ones_are_refused():
    """A graph from saved arrays keeps its titles packed (decoded when read, equal to the list);
    title bytes that are not UTF-8, or a title starting inside a character, are refused at load."""
    from conceptwalk.graph.linkgraph import PackedStrings

    g = LinkGraph.from_edges([("a", "b"), ("b", "c")], nodes=[{"id": "a", "title": "Été"}, {"id": "c", "title": "x"}])
    arrays = g.to_arrays()
    h = LinkGraph.from_saved_arrays(arrays)
    assert isinstance(h.titles, PackedStrings) and h.titles == g.titles == ["Été", None, "x"]
    assert h.title("a") == "Été" and h.titles[-1] == "x" and h.titles[0:2] == ["Été", None]
    import pickle

    back = pickle.loads(pickle.dumps(h.titles))  # (it reads through buffer views, which do not pickle)
    assert isinstance(back, PackedStrings) and back == ["Été", None, "x"] and back[0] == "Été"
    assert array_diff(LinkGraph.from_saved_arrays(h.to_arrays()), g) == []
    bad = dict(arrays)
    data = np.array(arrays["titles.data"])
    data[0] = 0xFF
    bad["titles.data"] = data
    with pytest.raises(InputError, match="titles"):
        LinkGraph.from_saved_arrays(bad)
    inside = dict(arrays)
    off = np.array(arrays["titles.offsets"])
    off[1] = 1  # "É" is two bytes: the second title would start inside it
    inside["titles.offsets"] = off
    with pytest.raises(InputError, match="inside a UTF-8 character"):
        LinkGraph.from_saved_arrays(inside)


def _damage(path: str, how: str) -> None:
    data = bytearray(open(path, "rb").read())
    if how == "truncate":
        data = data[: len(data) // 2]
    elif how == "magic":
        data[0] ^= 0xFF
    elif how == "directory":
        data[40] ^= 0x01
    elif how == "payload":
        # flip bytes inside the core's indices: the core's validation refuses them
        meta_len = int.from_bytes(data[16:24], "little")
        start = -(-(32 + meta_len) // 64) * 64
        for i in range(start, len(data), 97):
            data[i] ^= 0x5A
    open(path, "wb").write(bytes(data))


@pytest.mark.parametrize("how", ["truncate", "magic", "directory", "payload", "foreign", "stale-future"])
def test_a_bad_snapshot_file_costs_a_rebuild_never_a_wrong_answer(tmp_path, how):
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes([{"id": f"n{i}", "title": f"t{i}", "scopes": ["s"] if i % 3 else None} for i in range(60)])
        kb.add_edges([(f"n{i}", f"n{(i * 7 + 1) % 60}") for i in range(60)])
        kb.graph()
    snap = path + ".snapshot"
    if how == "foreign":
        other = str(tmp_path / "other.sqlite")
        with KnowledgeBase.create(other) as kb2:
            kb2.add_nodes([{"id": f"n{i}"} for i in range(60)])
            kb2.add_edges([("n1", "n2")])
            kb2.graph()
        shutil.copy(other + ".snapshot", snap)
    elif how == "stale-future":
        # a snapshot from a later state of a copy of this store (same uuid, further along)
        shutil.copy(path, str(tmp_path / "copy.sqlite"))
        with KnowledgeBase.open(str(tmp_path / "copy.sqlite")) as kb2:
            kb2.add_edges([("n1", "x"), ("x", "y")])
            kb2.graph()
            kb2.add_nodes([{"id": "zz"}])
        shutil.copy(str(tmp_path / "copy.sqlite") + ".snapshot", snap)
    else:
        _damage(snap, how)
    with KnowledgeBase.open(path) as kb:
        assert array_diff(kb.graph(), fresh(path)) == []
    meta, arrays = read_arrays(snap)  # rebuilt and saved again, whole
    assert meta["graph_version"] >= 0 and "graph.core.indices" in arrays


def test_named_array_file_round_trip_and_refusals(tmp_path):
    p = str(tmp_path / "x.snap")
    arrays = {
        "a": np.arange(5, dtype=np.int64),
        "b": np.zeros((2, 3), dtype=np.float32),
        "empty": np.zeros(0, dtype=np.int32),
        "text.data": np.frombuffer(b"hi", dtype=np.uint8),
    }
    write_arrays(p, arrays, {"x": [1, "y"]})
    meta, got = read_arrays(p)
    assert meta == {"x": [1, "y"]}
    for k, v in arrays.items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape and got[k].tobytes() == v.tobytes()
        assert not got[k].flags.writeable
    with pytest.raises(InputError, match="Python objects"):
        write_arrays(p, {"o": np.array([object()])}, {})
    assert read_arrays(p)[0] == {"x": [1, "y"]}  # the failed write left the old file
    assert [f for f in os.listdir(tmp_path) if f.endswith(".tmp")] == []
    data = open(p, "rb").read()
    open(p, "wb").write(data[:10])
    with pytest.raises(SnapshotError, match="too short"):
        read_arrays(p)
    open(p, "wb").write(data[:8] + (FILE_FORMAT + 1).to_bytes(4, "little") + data[12:])
    with pytest.raises(SnapshotError, match="format"):
        read_arrays(p)
    with pytest.raises(FileNotFoundError):
        read_arrays(str(tmp_path / "missing"))


def test_core_from_saved_arrays_validates_every_invariant():
    rng = np.random.default_rng(7)
    g = LinkGraph.from_edges(
        [(f"n{rng.integers(40)}", f"n{rng.integers(40)}", f"T{rng.integers(3)}") for _ in range(150)]
    )
    c = g.core
    parts = [
        np.array(c.indptr),
        np.array(c.indices),
        np.array(c.pair_base),
        np.array(c.pair_ptr),
        np.array(c.edge_typedir),
    ]
    h = _core.csr_graph_from_arrays(c.num_nodes, c.num_edge_types, *parts)
    for name in ("indptr", "indices", "pair_base", "pair_ptr", "edge_typedir"):
        assert np.array_equal(getattr(h, name), getattr(c, name))
    assert h.max_degree == c.max_degree and h.memory_bytes == c.memory_bytes
    refused = 0
    for trial in range(400):
        bad = [p.copy() for p in parts]
        k = trial % 5
        if bad[k].size == 0:
            continue
        i = int(rng.integers(bad[k].size))
        bad[k][i] += int(rng.choice([-2, -1, 1, 2, 1 << 20]))
        try:
            h = _core.csr_graph_from_arrays(c.num_nodes, c.num_edge_types, *bad)
        except ValueError as exc:
            assert "saved graph arrays" in str(exc)
            refused += 1
            continue
        # Accepted: only a change that leaves a valid graph (an edge's type or pair boundary),
        # never one to the rows; and the core runs on it.
        assert k in (3, 4), (k, i)
        _core.personalized_pagerank(h, np.array([0], dtype=np.int32), np.array([1.0]), 0.25, 1e-4, 0, 0, None, 0.0)
        _core.shortest_path(h, 0, c.num_nodes - 1, None)
    assert refused >= 300
    with pytest.raises(ValueError, match="indptr must have length"):
        _core.csr_graph_from_arrays(c.num_nodes + 1, c.num_edge_types, *parts)


def test_saved_graph_arrays_round_trip_every_column():
    g = LinkGraph.from_edges(
        [
            {"src": "a", "dst": "b", "type": "CITES", "authority": "X", "extraction_confidence": 0.25},
            {"src": "b", "dst": "c", "lifecycle": "old"},
            ("c", "c"),
        ],
        nodes=[{"id": "a", "type": "DOC", "title": "Á", "scopes": ["s2", "s1"], "lifecycle": "new"}, {"id": "d"}],
    )
    h = LinkGraph.from_saved_arrays(g.to_arrays())
    assert array_diff(g, h) == [] and outputs(g) == outputs(h)
    arrays = g.to_arrays()
    arrays["node_type_codes"] = np.full_like(arrays["node_type_codes"], 99)
    with pytest.raises(InputError, match="node_type_codes"):
        LinkGraph.from_saved_arrays(arrays)
    arrays = g.to_arrays()
    del arrays["ids.offsets"]
    with pytest.raises(InputError, match="missing"):
        LinkGraph.from_saved_arrays(arrays)


# The schema of a version-1 store as conceptwalk 0.1.0 wrote it (the tables every v1 file has).
_V1_TABLES = """
    CREATE TABLE meta(key TEXT PRIMARY KEY, value);
    CREATE TABLE nodes(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT, title TEXT,
                       body TEXT, scopes TEXT, lifecycle TEXT);
    CREATE TABLE edges(src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL, authority TEXT,
                       fidelity TEXT, extraction_method TEXT, extraction_confidence REAL,
                       lifecycle TEXT, UNIQUE(src, dst, type));
    CREATE TABLE aliases(alias TEXT NOT NULL, canonical TEXT NOT NULL REFERENCES nodes(id),
                         PRIMARY KEY(alias, canonical)) WITHOUT ROWID;
    CREATE TABLE embeddings(node_id TEXT NOT NULL, model TEXT NOT NULL, dim INTEGER NOT NULL,
                            vector BLOB NOT NULL, PRIMARY KEY(node_id, model)) WITHOUT ROWID;
    CREATE VIRTUAL TABLE nodes_fts USING fts5(title, body, content='nodes', content_rowid='rid',
                                              tokenize='porter unicode61 remove_diacritics 2');
    CREATE TRIGGER nodes_fts_ai AFTER INSERT ON nodes BEGIN
        INSERT INTO nodes_fts(rowid, title, body) VALUES (new.rid, new.title, new.body);
    END;
"""


def test_schema_1_file_is_upgraded_in_place(tmp_path):
    path = str(tmp_path / "v1.sqlite")
    conn = sqlite3.connect(path)
    conn.executescript(
        _V1_TABLES
        + """
        INSERT INTO meta VALUES ('schema_version', 1), ('version', 3);
        INSERT INTO nodes(id) VALUES ('a'), ('b');
        INSERT INTO edges(src, dst, type) VALUES ('a', 'b', 'LINK');
        PRAGMA user_version = 1;
    """
    )
    conn.close()
    with KnowledgeBase.open(path) as kb:
        assert kb.schema_version == SCHEMA_VERSION and kb.version == 3
        assert kb.graph().num_edges == 1
        kb.add_edges([("b", "c")])
        assert kb.graph().num_nodes == 3
        assert array_diff(kb.graph(), fresh(path)) == []


def test_bulk_load_equals_row_by_row_writes_and_rolls_back_whole(tmp_path):
    from conceptwalk.kb import synthetic

    syn = synthetic.generate(300, seed=5)
    with KnowledgeBase.create(tmp_path / "rows.sqlite") as a, KnowledgeBase.create(tmp_path / "bulk.sqlite") as b:
        a.add_nodes(syn.node_rows())
        a.add_edges(syn.edge_rows())
        a.add_aliases(syn.alias_rows())
        syn.write_to(b)
        assert array_diff(a.graph(), b.graph()) == []
        assert a.aliases() == b.aliases()
        for q in ("graph", "memory walk", syn.titles[3]):
            assert a.search(q, k=20) == b.search(q, k=20)
        schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
        assert a.conn.execute(schema).fetchall() == b.conn.execute(schema).fetchall()
        assert b.conn.execute("SELECT kind FROM changes").fetchall() == [(0,)]  # one reset
        # after the bulk load, writes are logged again and followed
        b.add_edges([(syn.ids[0], "new-node")])
        assert array_diff(b.graph(), fresh(str(tmp_path / "bulk.sqlite"))) == []
    # a failed bulk load leaves nothing, triggers included
    with KnowledgeBase.create(tmp_path / "fail.sqlite") as c:
        before = c.conn.execute(schema).fetchall()
        with pytest.raises(RuntimeError), c.bulk():
            c.add_nodes([{"id": "x"}])
            raise RuntimeError("abort")
        assert c.conn.execute(schema).fetchall() == before and c.node("x") is None
        c.add_nodes([{"id": "x", "title": "searchable"}])
        assert c.search("searchable")[0][0] == "x" and c.graph().num_nodes == 1


def test_read_only_open_reads_and_refuses_writes(tmp_path):
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes([{"id": "a", "title": "Alpha"}])
        kb.add_edges([("a", "b")])
        g = kb.graph()
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert ro.read_only and array_diff(ro.graph(), g) == [] and ro.search("alpha")[0][0] == "a"
        with pytest.raises(Exception, match="read-only"):
            ro.add_nodes([{"id": "c"}])
        with pytest.raises(Exception, match="read-only"):
            ro.set_embeddings("m", ["a"], [[1.0]])
        # a writer elsewhere is seen (mode=ro shares the WAL)
        with KnowledgeBase.open(path) as w:
            w.add_edges([("b", "c")])
        assert "c" in ro.graph() and not ro.immutable


def test_read_only_without_wal_files_uses_immutable(tmp_path):
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([("a", "b")])
        kb.graph()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")  # checkpoint and drop -wal/-shm, as on a copied file
    conn.close()
    assert not os.path.exists(path + "-wal")
    before = sorted(os.listdir(tmp_path))
    os.chmod(path, 0o444)
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert ro.graph().num_edges == 1
    assert sorted(os.listdir(tmp_path)) == before  # nothing created or changed beside it
    with pytest.raises(FileNotFoundError):
        KnowledgeBase.open(str(tmp_path / "missing.sqlite"), read_only=True)


def test_read_only_falls_back_to_immutable_when_mode_ro_cannot_open(tmp_path, monkeypatch):
    """On read-only media a WAL file without its -shm cannot be opened mode=ro (SQLite must
    create the -shm); simulated here (root ignores permissions) by refusing mode=ro alone."""
    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([("a", "b"), ("b", "c")])
        g = kb.graph()
    for f in (path + "-wal", path + "-shm"):
        assert not os.path.exists(f) or os.path.getsize(f) == 0 or f.endswith("-shm")
    real = sqlite3.connect

    def connect(target, *a, **kw):
        if isinstance(target, str) and target.startswith("file:") and "immutable=1" not in target:
            raise sqlite3.OperationalError("unable to open database file")
        return real(target, *a, **kw)

    monkeypatch.setattr(sqlite3, "connect", connect)
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert ro.immutable and array_diff(ro.graph(), g) == []
    # with committed data still in a -wal file, immutable would miss it: refused instead
    monkeypatch.setattr(sqlite3, "connect", real)
    w = KnowledgeBase.open(path)
    w.conn.execute("PRAGMA wal_autocheckpoint = 0")
    w.add_edges([("c", "d")])
    assert os.path.getsize(path + "-wal") > 0
    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.raises(Exception, match="cannot open .* read-only"):
        KnowledgeBase.open(path, read_only=True)
    monkeypatch.setattr(sqlite3, "connect", real)
    w.close()


def test_cli_read_only_flag(tmp_path, capsys):
    from conceptwalk.cli import main

    path = str(tmp_path / "kb.sqlite")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([("a", "b"), ("b", "c")])
    assert main(["path", path, "a", "c", "--read-only", "--json"]) == 0
    assert [x["id"] for x in json.loads(capsys.readouterr().out)["nodes"]] == ["a", "b", "c"]


# ---------------------------------------------------------------------- compact vectors
@settings(max_examples=30, deadline=None)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(
                st.just("set"),
                st.lists(st.integers(0, 11), min_size=1, max_size=8, unique=True),
                st.integers(0, 1000),
                st.booleans(),
            ),
            st.tuples(
                st.just("delete"),
                st.lists(st.integers(0, 11), min_size=1, max_size=2, unique=True),
                st.just(0),
                st.just(False),
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_vectors_follow_writes_like_a_dict(steps):
    """Chunked vector storage (several vectors per blob) against a dict oracle: overwrites keep
    their slot, new ids take new ones, replace starts over, deleted nodes lose their vectors."""
    with KnowledgeBase.open(":memory:") as kb:
        kb.VECTOR_CHUNK_BYTES = 3 * 4 * 2  # three 2-d vectors per chunk: many chunk boundaries
        oracle: dict[str, list[float]] = {}
        for kind, which, salt, replace in steps:
            ids = [f"n{i:02d}" for i in which]
            if kind == "set":
                kb.add_nodes([{"id": x} for x in ids])
                mat = [[float(salt + i), float(-i)] for i in which]
                kb.set_embeddings("m", ids, mat, replace=replace)
                if replace:
                    oracle.clear()
                oracle.update(zip(ids, mat))
            else:
                kb.delete_nodes(ids)
                for x in ids:
                    oracle.pop(x, None)
            got_ids, got = kb.get_embeddings("m")
            assert got_ids == sorted(oracle)
            assert got.tolist() == [oracle[x] for x in got_ids] or (not oracle and got.shape == (0, 0))
            if oracle:
                some = sorted(oracle)[::2]
                assert kb.get_embeddings("m", some)[1].tolist() == [oracle[x] for x in some]
            assert kb.stats()["embeddings"] == ({"m": len(oracle)} if oracle else {})


def test_vectors_grow_the_file_by_about_their_bytes(tmp_path):
    path = str(tmp_path / "kb.sqlite")
    ids = [f"n{i:05d}" for i in range(6000)]
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes([{"id": x} for x in ids])
    before = os.path.getsize(path)
    mat = np.random.default_rng(1).standard_normal((len(ids), 256)).astype(np.float32)
    with KnowledgeBase.open(path) as kb:
        kb.set_embeddings("m", ids, mat)
        kb.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        got_ids, got = kb.get_embeddings("m")
        assert got_ids == ids and np.array_equal(got, mat)
    grown = os.path.getsize(path) - before
    assert grown <= 1.2 * mat.nbytes, grown / mat.nbytes


def test_schema_1_vectors_are_moved_into_chunks(tmp_path):
    path = str(tmp_path / "v1.sqlite")
    conn = sqlite3.connect(path)
    conn.executescript(
        _V1_TABLES
        + """
        INSERT INTO meta VALUES ('schema_version', 1), ('version', 1);
        INSERT INTO nodes(id) VALUES ('a'), ('b'), ('c');
        PRAGMA user_version = 1;
    """
    )
    vec = {("a", "m"): [1.0, 2.0], ("c", "m"): [3.0, 4.0], ("b", "k"): [5.0, 6.0, 7.0]}
    conn.executemany(
        "INSERT INTO embeddings VALUES (?, ?, ?, ?)",
        [(x, m, len(v), np.array(v, dtype="<f4").tobytes()) for (x, m), v in vec.items()],
    )
    conn.commit()
    conn.close()
    with KnowledgeBase.open(path) as kb:
        assert kb.get_embeddings("m")[0] == ["a", "c"]
        assert kb.get_embeddings("m")[1].tolist() == [[1.0, 2.0], [3.0, 4.0]]
        assert kb.get_embeddings("k", ["b"])[1].tolist() == [[5.0, 6.0, 7.0]]
        assert kb.conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
        kb.set_embeddings("m", ["b"], [[9.0, 9.0]])  # the migrated model keeps working
        assert kb.get_embeddings("m")[1].tolist() == [[1.0, 2.0], [9.0, 9.0], [3.0, 4.0]]


@pytest.mark.parametrize("middle", [4, 10**15, 2**62])
def test_unpack_strings_refuses_a_middle_offset_past_the_buffer(middle: int) -> None:
    """A string array whose middle offset lies past the buffer (but whose first and last are
    right) is refused before any byte is read (a fuzz_snapshot finding: it was read out of bounds
    and crashed the process); the saved-arrays loader turns it into an InputError."""
    from conceptwalk.graph.linkgraph import unpack_strings

    data = np.frombuffer(b"abc", dtype=np.uint8)
    with pytest.raises(ValueError, match="within the buffer at 0"):
        unpack_strings(data, np.array([0, middle, 3], dtype=np.int64))
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    arrays = {k: np.array(v) for k, v in g.to_arrays().items()}
    arrays["ids.offsets"] = np.array([0, middle, 2, 3], dtype=np.int64)
    with pytest.raises(InputError, match="ids"):
        LinkGraph.from_saved_arrays(arrays)


def test_a_version_4_snapshot_serves_a_version_4_store_read_only_and_after_its_upgrade(tmp_path, monkeypatch):
    """Schema 5 changed nothing a snapshot holds: a snapshot saved by a version-4 store is read
    by a read-only open of that store (never upgraded, never saving one) and after the store's
    upgrade, instead of rebuilding the graph from the rows on every open."""
    import conceptwalk.kb.store as store_mod

    path = str(tmp_path / "kb.sqlite")
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", 4)  # the store and its snapshot as version 4 made them
    with KnowledgeBase.create(path) as kb:
        kb.enable_fts()
        kb.add_edges([("a", "b"), ("b", "c", "CITES")])
        g = kb.graph()
    monkeypatch.undo()
    assert read_arrays(path + ".snapshot")[0]["schema_version"] == 4
    c = sqlite3.connect(path)  # (the schema script was made with 5 at import: the file as 4 left it)
    c.execute("PRAGMA user_version = 4")
    c.execute("UPDATE meta SET value = 4 WHERE key = 'schema_version'")
    c.commit()
    c.close()
    calls = _count_builds(monkeypatch)
    for _ in range(2):
        with KnowledgeBase.open_read_only(path) as ro:
            assert ro.schema_version == 4 and ro.stats()["schema_version"] == 4
            assert array_diff(ro.graph(), g) == []
    with KnowledgeBase.open(path) as kb:  # upgraded
        assert kb.schema_version == 5 and kb.stats()["schema_version"] == 5
        assert array_diff(kb.graph(), g) == []
    assert calls == []
