"""Attacks on the derived arrays kept with the snapshot, the per-caller View and the one-call
graph context, written by a hostile review (rolled-back transactions, colliding names, forged
files with valid checksums, killed writers, concurrent writers and readers, threads, per-request
retrievers). Seven of them found bugs, fixed in the same change; the rest held from the start."""

from __future__ import annotations

import sqlite3

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

from conceptwalk import Caller
from conceptwalk.kb.snapshot import read_arrays, write_arrays
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search
from conceptwalk.wrap.config import WalkConfig

WHO = Caller.with_scopes("t1")
QUERIES = ("concept 3 token", "rotation 7", "doc 9", "zebra stripes", "quantum tunnel")


def _rows(n: int = 25, title: str = "concept {i} token rotation") -> tuple[list, list]:
    nodes = [{"id": f"c{i}", "type": "CONCEPT", "title": title.format(i=i)} for i in range(n)] + [
        {"id": f"d{i}", "type": "DOC", "title": f"doc {i}", "scopes": ["t1"] if i % 2 else []} for i in range(n)
    ]
    edges = [{"src": f"c{i}", "dst": f"d{i}", "type": "IMPLEMENTED_BY", "authority": "a"} for i in range(n)]
    edges += [{"src": f"c{i}", "dst": f"c{(i + 1) % n}", "type": "RELATED_TO"} for i in range(n)]
    return nodes, edges


def _fill(kb: KnowledgeBase, nodes: list, edges: list) -> None:
    kb.add_nodes(nodes)
    kb.add_edges(edges)


def _answers(kb: KnowledgeBase, who: Caller = WHO, **kw) -> list:
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=who), kb, **kw)
    return [ret.query(q, 5, concept_walk=True, caller=who) for q in QUERIES]


def _fresh_answers(tmp_path, nodes, edges, who: Caller = WHO, **kw) -> list:
    p = tmp_path / f"fresh-{time.monotonic_ns()}.db"
    with KnowledgeBase.create(p) as kb:
        _fill(kb, nodes, edges)
        return _answers(kb, who, **kw)


# --------------------------------------------------------------------------- transactions


def test_vectors_kept_inside_a_rolled_back_transaction_are_not_reused(tmp_path):
    """A wrapped query inside a write transaction keeps the concept vectors of the uncommitted
    position; after a rollback a different write reaches the same position (AUTOINCREMENT
    is rolled back too): the vectors of the rolled-back titles must not be used, in this
    process or (through the snapshot file) in a fresh one."""
    from conceptwalk.wrap import ConceptResolver

    nodes, edges = _rows()
    extra_edge = [{"src": "cx", "dst": "d0", "type": "IMPLEMENTED_BY"}]
    path = tmp_path / "kb.db"

    def semantic(kb, q):
        r = ConceptResolver(kb, WalkConfig(lexical_k=0))
        return [(c.id, c.method) for c in r.resolve(q, caller=WHO)]

    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb)
        with pytest.raises(RuntimeError):
            with kb.transaction():
                kb.add_nodes([{"id": "cx", "type": "CONCEPT", "title": "zebra stripes"}])
                kb.add_edges(extra_edge)
                _answers(kb)
                raise RuntimeError("roll back")
        kb.add_nodes([{"id": "cx", "type": "CONCEPT", "title": "quantum tunnel"}])
        kb.add_edges(extra_edge)
        got = _answers(kb), semantic(kb, "zebra stripes"), semantic(kb, "quantum tunnel")
    fresh = KnowledgeBase.open(":memory:")
    _fill(fresh, nodes + [{"id": "cx", "type": "CONCEPT", "title": "quantum tunnel"}], edges + extra_edge)
    want = _answers(fresh), semantic(fresh, "zebra stripes"), semantic(fresh, "quantum tunnel")
    assert got[1:] == want[1:]  # on main: "zebra stripes" resolves to cx (semantic, 1.0)
    assert got == want
    with KnowledgeBase.open(path, read_only=True) as ro:  # the file holds the stale vectors too
        assert (_answers(ro), semantic(ro, "zebra stripes"), semantic(ro, "quantum tunnel")) == want


# --------------------------------------------------------------------------- forged files


def _forge(path, edit) -> None:
    """Rewrite the snapshot file beside ``path`` with ``edit(arrays)`` applied and every
    checksum recomputed (a consistent file, as far as CRCs go)."""
    snap = str(path) + ".snapshot"
    meta, arrays = read_arrays(snap)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    edit(arrays)
    write_arrays(snap, arrays, meta)


def _kept(path) -> list[str]:
    _, arrays = read_arrays(str(path) + ".snapshot")
    return sorted(k for k in arrays if k.startswith("derived."))


def _built(tmp_path, who=WHO):
    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        want = _answers(kb, who), kb.annotation_presence()
    assert any(".vectors." in k for k in _kept(path))
    return path, want


ALL = Caller.all_access()


def _forge_tallies(path, value) -> None:
    """Hand-edit the store's edge tallies (schema 4) to ``value``, triggers and all left alone."""
    c = sqlite3.connect(path)
    c.execute("UPDATE tallies SET n = ? WHERE name LIKE 'edges.%'", (value,))
    c.commit()
    c.close()


@pytest.mark.parametrize("value", [float("inf"), 1.5, "many", None, -5], ids=repr)
def test_forged_edge_tallies_are_not_used(tmp_path, value):
    """Tallies that are not counts (a float, text, NULL, below zero) are detectably wrong: the
    edges are counted the long way instead, read-only and writable alike."""
    path, (want, presence) = _built(tmp_path, ALL)
    if value is None:  # NOT NULL: a NULL cannot be written, so drop the rows instead
        c = sqlite3.connect(path)
        c.execute("DELETE FROM tallies WHERE name = 'edges.authority'")
        c.commit()
        c.close()
    else:
        _forge_tallies(path, value)
    with KnowledgeBase.open(path, read_only=True) as ro:
        ro.state()
        assert ro.annotation_presence() == presence
        assert _answers(ro, ALL) == want
    with KnowledgeBase.open(path) as kb:
        assert kb.annotation_presence() == presence


@pytest.mark.parametrize(
    "how", ["row_out_of_range", "row_negative", "colptr_past_end", "nan_value", "zero_value", "short_colptr", "rows_2d"]
)
def test_forged_concept_vectors_out_of_range_are_refused_and_rehashed(tmp_path, how):
    path, (want, _) = _built(tmp_path)

    def edit(a):
        base = next(k.rsplit(".", 1)[0] for k in a if ".vectors." in k)
        c, r, v = a[base + ".colptr"], a[base + ".rows"], a[base + ".values"]
        if how == "row_out_of_range":
            r[-1] = 10**6
        elif how == "row_negative":
            r[0] = -1
        elif how == "colptr_past_end":
            c[-1] = len(r) + 100
        elif how == "nan_value":
            v[3] = np.nan
        elif how == "zero_value":
            v[3] = 0
        elif how == "short_colptr":
            a[base + ".colptr"] = c[:-5].copy()
        elif how == "rows_2d":
            a[base + ".rows"] = r.reshape(-1, 1).copy()

    _forge(path, edit)
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == want


def test_forged_concept_vector_rows_of_a_wider_dtype_are_not_wrapped_into_range(tmp_path):
    """Rows stored as int64 past 2**31 are out of range; the load casts them to int32
    (np.ascontiguousarray(dtype=int32) wraps) and then finds them in range. Here the forgery
    moves every entry of row 0 to row 1 (+2**32 hides it): a detectably wrong file that changes
    the answers."""
    path, (want, _) = _built(tmp_path)

    def edit(a):
        base = next(k.rsplit(".", 1)[0] for k in a if ".vectors." in k)
        r = a[base + ".rows"].astype(np.int64)
        c = a[base + ".colptr"]
        for j in range(len(c) - 1):  # row 0 -> row 2**32 + 1 where row 1 is not already there
            seg = r[c[j] : c[j + 1]]
            if len(seg) and seg[0] == 0 and (len(seg) == 1 or seg[1] != 1):
                seg[0] = 2**32 + 1
        a[base + ".rows"] = r

    _forge(path, edit)
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == want


def test_snapshot_file_of_another_store_is_not_used(tmp_path):
    nodes, edges = _rows()
    other = tmp_path / "other.db"
    with KnowledgeBase.create(other) as kb:
        _fill(kb, *_rows(title="zebra {i} stripes"))
        _answers(kb)
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
    shutil.copy(str(other) + ".snapshot", str(path) + ".snapshot")
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == _fresh_answers(tmp_path, nodes, edges)


# --------------------------------------------------------------------------- restored backups


def test_restored_backup_with_a_newer_or_older_snapshot_beside_it(tmp_path):
    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    bak = tmp_path / "bak"
    bak.mkdir()
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb)
    for f in ("kb.db", "kb.db.snapshot"):
        shutil.copy(tmp_path / f, bak / f)
    # the live store goes on: titles rewritten, vectors kept at the later position
    new_a = [dict(n, title=f"zebra {i} stripes") for i, n in enumerate(nodes[:5])]
    with KnowledgeBase.open(path) as kb:
        kb.add_nodes(new_a)
        _answers(kb)
    newer_snap = tmp_path / "newer.snapshot"
    shutil.copy(str(path) + ".snapshot", newer_snap)
    # restore the backup store, keep the newer snapshot file beside it; then a different
    # history reaches the same position
    shutil.copy(bak / "kb.db", path)
    for s in ("-wal", "-shm"):
        if os.path.exists(str(path) + s):
            os.remove(str(path) + s)
    shutil.copy(newer_snap, str(path) + ".snapshot")
    new_b = [dict(n, title=f"quantum {i} tunnel") for i, n in enumerate(nodes[:5])]
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == _fresh_answers(tmp_path, nodes, edges)
    with KnowledgeBase.open(path) as kb:
        kb.add_nodes(new_b)
    shutil.copy(newer_snap, str(path) + ".snapshot")  # the other history's file at this position
    rows_b = new_b + nodes[5:]
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == _fresh_answers(tmp_path, rows_b, edges)
    # an older snapshot (the backup's) beside the later store
    shutil.copy(bak / "kb.db.snapshot", str(path) + ".snapshot")
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == _fresh_answers(tmp_path, rows_b, edges)


def test_title_and_body_edits_between_keep_and_read(tmp_path):
    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb)
    with KnowledgeBase.open(path) as kb:  # edits made by a process that never queries
        kb.add_nodes([dict(nodes[3], title="zebra stripes")])
        kb.add_nodes([dict(nodes[4], body="quantum tunnel body text")])
    rows = [dict(nodes[3], title="zebra stripes") if n["id"] == "c3" else n for n in nodes]
    rows = [dict(n, body="quantum tunnel body text") if n["id"] == "c4" else n for n in rows]
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == _fresh_answers(tmp_path, rows, edges)


# --------------------------------------------------------------------------- name collisions


def test_kept_vectors_of_different_concept_types_do_not_collide(tmp_path):
    """The kept name replaces every character outside [A-Za-z0-9_:-] by "_", so the concept
    types ("A", "B") and ("A_B",) get the same name; with as many concepts of each, the vectors
    of one are read for the other."""
    nodes = [
        {"id": "a1", "type": "A", "title": "zebra stripes"},
        {"id": "b1", "type": "B", "title": "quantum tunnel"},
        {"id": "x1", "type": "A_B", "title": "rotation token"},
        {"id": "x2", "type": "A_B", "title": "doc nine"},
        {"id": "d1", "type": "DOC", "title": "doc one"},
    ]
    edges = [{"src": s, "dst": "d1", "type": "IMPLEMENTED_BY"} for s in ("a1", "b1", "x1", "x2")]
    path = tmp_path / "kb.db"
    ab = WalkConfig(concept_node_types=("A", "B"), lexical_k=0)
    x = WalkConfig(concept_node_types=("A_B",), lexical_k=0)
    from conceptwalk.wrap import ConceptResolver

    def res(kb, cfg, q):
        return [(c.id, c.method) for c in ConceptResolver(kb, cfg).resolve(q, caller=ALL)]

    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        res(kb, ab, "zebra stripes")
    with KnowledgeBase.open(path, read_only=True) as ro:
        got = res(ro, x, "zebra stripes"), res(ro, x, "rotation token")
    fresh = KnowledgeBase.open(":memory:")
    _fill(fresh, nodes, edges)
    assert got == (res(fresh, x, "zebra stripes"), res(fresh, x, "rotation token"))


# --------------------------------------------------------------------------- killed writers, concurrency


def test_writer_killed_during_keep_derived_arrays_rewrite_leaves_a_usable_file(tmp_path):
    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        want = _answers(kb)
    code = textwrap.dedent(
        f"""
        import numpy as np, sys
        from conceptwalk.kb.store import KnowledgeBase
        kb = KnowledgeBase.open({str(path)!r})
        gv = kb.state().graph_version
        print("ready", flush=True)
        k = 0
        while True:
            k += 1
            kb.keep_derived_arrays("t.big", gv, {{"v": np.full(3_000_000, k, dtype=np.int64)}})
        """
    )
    rng = np.random.default_rng(7)
    seen = 0
    for _ in range(4):
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(0.05, 0.6)))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a set-aside file would warn
            with KnowledgeBase.open(path, read_only=True) as ro:
                gv = ro.state().graph_version
                got = ro.derived_arrays("t.big", gv)
                if got is not None:
                    v = got["v"]
                    assert v.shape == (3_000_000,) and v[0] == v[-1]
                    seen += 1
                assert _answers(ro) == want
    assert seen


def test_concurrent_writer_never_gives_a_reader_vectors_of_another_position(tmp_path):
    """A writer process renames titles and keeps the vectors at each position; fresh read-only
    readers must find kept vectors only equal to hashing the titles of the graph they read."""
    from conceptwalk.graph.vectors import SparseVectors

    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb)
    code = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_hostile_derived_arrays import _answers
        from conceptwalk.kb.store import KnowledgeBase
        kb = KnowledgeBase.open({str(path)!r})
        end = time.monotonic() + 6
        k = 0
        while time.monotonic() < end:
            k += 1
            kb.add_nodes([{{"id": f"c{{k % 25}}", "type": "CONCEPT", "title": f"zebra {{k}} stripes"}}])
            _answers(kb)
            if k % 10 == 0:  # a short quiet spell now and then: a reader's whole round can see
                time.sleep(0.05)  # one position (writes are ~3 ms apart otherwise)
        print(k)
        """
    )
    w = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    checked = 0
    compared: list[int] = []
    try:
        while w.poll() is None:
            with KnowledgeBase.open(path, read_only=True) as ro:
                st = ro.state()
                ret = ConceptAnchoredRetriever(builtin_flat_search(ro, caller=WHO), ro)
                emb = ret.resolver.embedder
                names = [n for n in ro._keeper.derived_names if n.startswith("wrap.vectors.")]  # noqa: SLF001
                for name in names:
                    got = ro.derived_arrays(name, st.graph_version)
                    if got is None:
                        continue
                    g = st.graph
                    idx = [i for i in range(g.num_nodes) if g.node_type_names[int(g.node_type_codes[i])] == "CONCEPT"]
                    titles = list(g.titles)
                    indptr, ind, val = emb.embed_csr([titles[i] or g.ids[i] for i in idx])
                    want = SparseVectors(len(idx), emb.dim, indptr, ind, val).columns()
                    assert all(np.array_equal(a, b) for a, b in zip(want, (got["colptr"], got["rows"], got["values"])))
                    checked += 1
                # the wrapped answers, when the position did not move while they were asked
                ans = [ret.query(q, 5, concept_walk=True, caller=WHO) for q in QUERIES[:2] + QUERIES[3:4]]
                if (
                    ro.state().graph_version == st.graph_version
                    and st.graph_version not in compared
                    and len(compared) < 15
                ):
                    rows = [dict(n, title=st.graph.titles[st.graph.id_index[n["id"]]]) for n in nodes]
                    fresh = KnowledgeBase.open(":memory:")
                    _fill(fresh, rows, edges)
                    f = ConceptAnchoredRetriever(builtin_flat_search(fresh, caller=WHO), fresh)
                    assert ans == [f.query(q, 5, concept_walk=True, caller=WHO) for q in QUERIES[:2] + QUERIES[3:4]]
                    compared.append(st.graph_version)
    finally:
        w.wait(timeout=60)
    assert w.returncode == 0
    assert checked > 0 and len(set(compared)) > 3


def test_view_memo_and_linkgraph_view_are_made_once_under_threads():
    from conceptwalk.graph import LinkGraph

    g = LinkGraph.from_edges(
        [(f"n{i}", f"n{i + 1}") for i in range(200)],
        nodes=[{"id": f"n{i}", "scopes": [f"s{i % 3}"]} for i in range(201)],
    )
    calls: list[int] = []
    start = threading.Barrier(16)
    views, memos, errors = [], [], []

    def make():
        calls.append(1)
        time.sleep(0.02)
        return object()

    def run(i):
        try:
            start.wait()
            v = g.view(Caller.with_scopes("s1"))
            views.append(v)
            memos.append(v.memo(("t", 1), make))
            for j in range(30):  # churn the LRU with other callers at the same time
                g.view(Caller.with_scopes(f"s{j}", f"x{i}")).memo("k", lambda: j)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert len({id(v) for v in views}) == 1 and len({id(m) for m in memos}) == 1 and len(calls) == 1


# --------------------------------------------------------------------------- deletion oracle


def test_deletion_oracle_holds_for_a_fresh_process_reading_kept_vectors(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    from deletion_oracle import deleted_store

    nodes = [
        {
            "id": f"c{i}",
            "type": "CONCEPT",
            "title": f"concept {i} token rotation",
            "scopes": [["t1"], ["t2"], []][i % 3],
        }
        for i in range(18)
    ] + [
        {"id": f"d{i}", "type": "DOC", "title": f"doc {i} rotation", "scopes": [["t2"], [], ["t1"]][i % 3]}
        for i in range(18)
    ]
    edges = [{"src": f"c{i}", "dst": f"d{i}", "type": "IMPLEMENTED_BY", "authority": "a"} for i in range(18)]
    edges += [{"src": f"c{i}", "dst": f"c{(i + 1) % 18}", "type": "RELATED_TO"} for i in range(18)]
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb, ALL)
    assert any(".vectors." in k for k in _kept(path))
    for who in (Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t2"), Caller.with_scopes("t1", "t2")):
        oracle = deleted_store(nodes, edges, [], who)
        with KnowledgeBase.open(path, read_only=True) as ro:
            assert _answers(ro, who) == _answers(oracle, who), who


# --------------------------------------------------------------------------- write amplification


def test_queries_after_each_write_do_not_rewrite_the_whole_snapshot_every_time(tmp_path, monkeypatch):
    """An open store saves its snapshot every SNAPSHOT_SAVE_EVERY (1000) changes; keeping the
    wrap's vectors and the presence counts forces a save (force=True) at every new position, so
    a writer that answers a query after each write rewrites (and fsyncs) the whole file twice per
    write: 20 one-node writes on a 40k-node store wrote ~700 MB here."""
    import conceptwalk.kb.state as state_mod  # the snapshot file is saved by the state keeper

    nodes, edges = _rows(300)
    kb = KnowledgeBase.create(tmp_path / "kb.db")
    _fill(kb, nodes, edges)
    _answers(kb, ALL)
    saves: list[int] = []
    real = state_mod.write_arrays
    monkeypatch.setattr(state_mod, "write_arrays", lambda *a, **k: (saves.append(1), real(*a, **k))[1])
    for k in range(20):
        kb.add_nodes([{"id": f"c{k}", "type": "CONCEPT", "title": f"zebra {k} stripes"}])
        _answers(kb, ALL)
    kb.close()
    assert len(saves) <= 2, f"{len(saves)} full snapshot rewrites for 20 one-row writes"  # main: 40


# --------------------------------------------------------------------------- one-call graph context


def test_graph_context_text_refuses_mismatched_or_out_of_range_inputs():
    from conceptwalk import _core

    def mk(n):
        kb = KnowledgeBase.open(":memory:")
        kb.add_nodes(
            [{"id": f"n{i}", "title": f"tok{i % 5} word", "scopes": ["s"] if i % 3 == 0 else []} for i in range(n)]
        )
        kb.add_edges([{"src": f"n{i}", "dst": f"n{(i + 1) % n}", "type": "R"} for i in range(n)])
        return kb.state()

    s1, s2 = mk(30), mk(7)
    g1, ix1, ix2 = s1.graph, s1.text_index, s2.text_index
    t1 = ix1.query_terms("tok1 word")
    pub1, pub2 = g1.view(Caller.public()), s2.graph.view(Caller.public())
    bad = [
        dict(index=ix2.core, terms=ix2.query_terms("tok1")),
        dict(terms=np.array([10**6], dtype=np.int32)),
        dict(stats=pub2.text_stats(ix2), visible=pub1.mask),
        dict(visible=pub2.mask),
        dict(concepts=np.array([999], dtype=np.int32)),
        dict(node_type=np.zeros(3, np.int32), keep_types=np.array([1], np.uint8)),
        dict(k1=float("nan")),
        dict(n_hits=-1),
    ]
    for kw in bad:
        args = dict(graph=g1.core, index=ix1.core, terms=t1) | kw
        with pytest.raises(ValueError):
            _core.graph_context_text(**args)
    r = _core.graph_context_text(
        g1.core, ix1.core, t1, node_type=np.full(30, 5, np.int32), keep_types=np.array([1], np.uint8)
    )
    assert r.seeded  # codes past keep_types are simply not kept (bounded read)


def test_graph_context_on_a_store_obeys_the_deletion_oracle():
    sys.path.insert(0, os.path.dirname(__file__))
    from deletion_oracle import deleted_store, open_store

    from conceptwalk import graph_context

    nodes = [
        {
            "id": f"n{i}",
            "type": "A" if i % 2 else "B",
            "title": f"tok{i % 4} word {i}",
            "scopes": [["t1"], [], ["t2"]][i % 3],
        }
        for i in range(40)
    ]
    edges = [{"src": f"n{i}", "dst": f"n{(i * 7 + 3) % 40}", "type": "R"} for i in range(40)]
    full = open_store(nodes, edges, [])

    def out(kb, who, q):
        r = graph_context(kb, q, caller=who, k=8)
        return [(s.id, s.weight) for s in r.seeds], [(x.id, round(x.score, 12), x.hops) for x in r.results]

    for who in (Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t1", "t2")):
        oracle = deleted_store(nodes, edges, [], who)
        for q in ("tok1 word", "word 7", "tok3"):
            assert out(full, who, q) == out(oracle, who, q), (who, q)


def test_vectors_of_a_rolled_back_transaction_are_not_written_to_the_snapshot_file(tmp_path):
    """The same rollback, but the writer never queries again: it reads the graph and closes.
    The file saved at the position holds the rolled-back title's vectors; a fresh reader uses
    them (the write is persisted, unlike an in-memory cache)."""
    from conceptwalk.wrap import ConceptResolver

    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb, nodes, edges)
        _answers(kb)
        with pytest.raises(RuntimeError):
            with kb.transaction():
                kb.add_nodes([{"id": "cx", "type": "CONCEPT", "title": "zebra stripes"}])
                _answers(kb)
                raise RuntimeError("roll back")
        kb.add_nodes([{"id": "cx", "type": "CONCEPT", "title": "quantum tunnel"}])
        kb.graph()
    with KnowledgeBase.open(path, read_only=True) as ro:
        got = [
            (c.id, c.method) for c in ConceptResolver(ro, WalkConfig(lexical_k=0)).resolve("zebra stripes", caller=WHO)
        ]
    assert got == []  # main: [("cx", "semantic")] -- the rolled-back title, read from the file


def test_threads_writing_and_querying_one_writable_store(tmp_path):
    """Threads sharing one writable store: each renames titles and queries (keeping vectors and
    saving the file under its lock); no exception, and at the end the answers (in-process and
    from the file) equal a fresh build of the final rows."""
    nodes, edges = _rows()
    path = tmp_path / "kb.db"
    kb = KnowledgeBase.create(path)
    _fill(kb, nodes, edges)
    errors: list[BaseException] = []
    titles = {n["id"]: n["title"] for n in nodes}
    lock = threading.Lock()

    def run(t):
        try:
            for k in range(15):
                nid = f"c{(t * 5 + k) % 25}"
                with lock:  # the record of the last title written, in write order
                    kb.add_nodes([{"id": nid, "type": "CONCEPT", "title": f"zebra {t} {k} stripes"}])
                    titles[nid] = f"zebra {t} {k} stripes"
                _answers(kb, Caller.with_scopes(f"t{t % 2}"))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    got = _answers(kb)
    kb.close()
    rows = [dict(n, title=titles[n["id"]]) for n in nodes]
    want = _fresh_answers(tmp_path, rows, edges)
    assert got == want
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert _answers(ro) == want


def test_per_request_retrievers_do_not_fill_the_callers_view_memo():
    """The brief's per-request pattern (a new retriever per query) leaves one
    ("wrap.provenance", id(snap)) entry per retriever in the caller's view: after 256 the memo is
    full and nothing else is kept in it (each entry also holds its ReadCache and Provenance)."""
    kb = KnowledgeBase.open(":memory:")
    _fill(kb, *_rows())
    for _ in range(300):
        ConceptAnchoredRetriever(builtin_flat_search(kb, caller=WHO), kb).query(
            "concept 3", 5, concept_walk=True, caller=WHO
        )
    memo = kb.state().graph.view(WHO)._memo
    assert len(memo) < 16, f"{len(memo)} memo entries for one caller, one graph"  # main: 256


def test_graph_context_from_threads_equals_sequential():
    from concurrent.futures import ThreadPoolExecutor

    from conceptwalk import graph_context

    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(
        [{"id": f"n{i}", "title": f"tok{i % 7} word {i}", "scopes": [["t1"], [], ["t2"]][i % 3]} for i in range(400)]
    )
    kb.add_edges([{"src": f"n{i}", "dst": f"n{(i * 13 + 5) % 400}", "type": "R"} for i in range(400)])
    jobs = [
        (f"tok{i % 7} word", [Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t2", "t1")][i % 3])
        for i in range(60)
    ]

    def one(j):
        r = graph_context(kb, j[0], caller=j[1], k=10)
        return [s.id for s in r.seeds], [(x.id, x.score) for x in r.results]

    want = [one(j) for j in jobs]
    kb2 = KnowledgeBase.open(":memory:")  # fresh views and stats, built concurrently
    kb2.add_nodes(
        [{"id": f"n{i}", "title": f"tok{i % 7} word {i}", "scopes": [["t1"], [], ["t2"]][i % 3]} for i in range(400)]
    )
    kb2.add_edges([{"src": f"n{i}", "dst": f"n{(i * 13 + 5) % 400}", "type": "R"} for i in range(400)])
    kb = kb2
    with ThreadPoolExecutor(8) as ex:
        assert list(ex.map(one, jobs)) == want
