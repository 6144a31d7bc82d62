"""The live store's graph: a base plus a delta (issue 31, docs/live_store.md).

- the core's ``LiveGraph`` (base CSR plus delta rows in order-key order) answers ``graph_context``
  exactly as ``CSRGraph.from_edges`` over the whole graph (index = rank of the id) does: the same
  ids in the same order, scores bit for bit, hops, reached-through seeds, coverage, pushes and
  residual, and every row the same neighbours in the same (id) order (hypothesis);
- the Python ``LiveGraph`` keeps its order keys right when a gap of the base fills up (its new
  nodes are spread again), and an older graph of a chain answers as it did after the chain grew;
- a knowledge base's ``live_graph()`` follows writes (its own and another connection's) at the
  cost of the change, answers ``graph_context`` from concepts for the all-access caller exactly as
  the full snapshot does, and starts over a new base for what a delta does not express.
"""

from __future__ import annotations

import bisect
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, LinkGraph, _core
from conceptwalk.graph.live import LiveGraph
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context, graph_path, link_suggest

ALL = Caller.all_access()
CALLERS = [ALL, Caller.public(), Caller.with_scopes("t"), Caller.with_scopes("u", "t")]
LIVE_COUNTS = {"graphs": 0, "queries": 0, "mismatches": 0}


def _fresh(ids: list[str], edges: list[tuple[str, str]]) -> _core.CSRGraph:
    index = {x: i for i, x in enumerate(ids)}
    src = np.array([index[a] for a, _ in edges], dtype=np.int32)
    dst = np.array([index[b] for _, b in edges], dtype=np.int32)
    g, _ = _core.CSRGraph.from_edges(len(ids), src, dst, np.zeros(len(edges), dtype=np.int32))
    return g


def _keys(base_ids: list[str], new_ids: list[str]) -> np.ndarray:
    rank = {x: i for i, x in enumerate(sorted(new_ids))}
    return np.array([(bisect.bisect_left(base_ids, x) << 32) | rank[x] for x in new_ids], dtype=np.uint64)


def _answer(r: _core.ContextResult, name: list[str]) -> tuple:
    return (
        [name[i] for i in r.nodes.tolist()],
        [repr(x) for x in r.scores.tolist()],
        r.hops.tolist(),
        [name[i] for i in r.via.tolist()],
        r.coverage.tolist(),
        [name[i] for i in r.cover_seeds.tolist()],
        r.pushes,
        repr(r.residual),
        repr(r.eps),
        r.edge_visits,
    )


def _ids(nodes: np.ndarray, name: list[str]) -> list[str]:
    return [name[i] for i in nodes.tolist()]


_ID = st.text("abcdefgh", min_size=1, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base_ids=st.lists(_ID, min_size=1, max_size=25, unique=True),
    data=st.data(),
)
def test_core_live_graph_equals_a_fresh_build(base_ids: list[str], data: st.DataObject) -> None:
    base_ids = sorted(base_ids)
    pick = st.sampled_from(base_ids)
    base_edges = data.draw(st.lists(st.tuples(pick, pick), max_size=60))
    base = _fresh(base_ids, base_edges)
    live = None
    new_ids: list[str] = []
    edges = list(base_edges)
    for _ in range(data.draw(st.integers(1, 4))):
        added = data.draw(st.lists(_ID.map(lambda s: s + "~"), max_size=4, unique=True))
        added = [x for x in added if x not in new_ids]
        new_ids += added
        every = base_ids + new_ids
        slot = {x: i for i, x in enumerate(every)}
        pairs = data.draw(st.lists(st.tuples(st.sampled_from(every), st.sampled_from(every)), max_size=8))
        edges += pairs
        live = _core.LiveGraph.grow(
            base,
            live,
            _keys(base_ids, new_ids),
            np.array([slot[a] for a, _ in pairs], dtype=np.int32),
            np.array([slot[b] for _, b in pairs], dtype=np.int32),
        )
        fresh_ids = sorted(every)
        fresh = _fresh(fresh_ids, edges)
        fslot = {x: i for i, x in enumerate(fresh_ids)}
        LIVE_COUNTS["graphs"] += 1
        assert live.num_nodes == len(every) and live.max_degree == fresh.max_degree
        for x in every:
            got = [every[i] for i in live.neighbors(slot[x]).tolist()]
            want = [fresh_ids[i] for i in fresh.indices[fresh.indptr[fslot[x]] : fresh.indptr[fslot[x] + 1]].tolist()]
            assert got == want, x
            assert live.degree(slot[x]) == len(want)
        # a caller's visibility: all access, or a random mask (the base's as a VisibilityMask of
        # the base, the new slots' as the delta's part) against the fresh graph's VisibilityMask
        hidden = set(data.draw(st.lists(st.sampled_from(every), max_size=len(every) // 2)))
        lv = _core.LiveVisibility.make(
            live,
            _core.VisibilityMask(base, np.array([x not in hidden for x in base_ids], bool)),
            np.array([x not in hidden for x in new_ids], bool),
        )
        fv = _core.VisibilityMask(fresh, np.array([x not in hidden for x in fresh_ids], bool))
        for x in every:
            assert lv.degree(slot[x]) == fv.visible_degrees[fslot[x]], x
        for drawn in data.draw(st.lists(st.lists(st.sampled_from(every), min_size=1, max_size=3), max_size=4)):
            for rank, masked in itertools.product((0, 1), (False, True)):
                # id order: the order both graphs want
                seeds = sorted({x for x in drawn if not masked or x not in hidden})
                if not seeds:
                    continue
                r1 = _core.graph_context(
                    live, np.array([slot[s] for s in seeds], np.int32), np.ones(len(seeds)), 0.25, 1e-4, 8,
                    visible=lv if masked else None, rank=rank,
                )  # fmt: skip
                r2 = _core.graph_context(
                    fresh, np.array([fslot[s] for s in seeds], np.int32), np.ones(len(seeds)), 0.25, 1e-4, 8,
                    visible=fv if masked else None, rank=rank,
                )  # fmt: skip
                LIVE_COUNTS["queries"] += 1
                same = _answer(r1, every) == _answer(r2, fresh_ids)
                LIVE_COUNTS["mismatches"] += not same
                assert same, (seeds, rank, masked)
        # the shortest path between visible nodes (lexicographically smallest by id), both ways
        for x, y in data.draw(st.lists(st.tuples(st.sampled_from(every), st.sampled_from(every)), max_size=6)):
            for masked in (False, True):
                if masked and (x in hidden or y in hidden):
                    continue
                p1 = _core.shortest_path(live, slot[x], slot[y], lv if masked else None).path
                p2 = _core.shortest_path(fresh, fslot[x], fslot[y], fv if masked else None).path
                LIVE_COUNTS["queries"] += 1
                LIVE_COUNTS["mismatches"] += _ids(p1, every) != _ids(p2, fresh_ids)
                assert _ids(p1, every) == _ids(p2, fresh_ids), (x, y, masked)
        # resource allocation from every visible node, both ways (min_shared 1 and 2)
        for x, masked, ms in itertools.product(every, (False, True), (1, 2)):
            if masked and x in hidden:
                continue
            a1 = _core.resource_allocation(live, slot[x], ms, 0, lv if masked else None)
            a2 = _core.resource_allocation(fresh, fslot[x], ms, 0, fv if masked else None)
            got = (_ids(a1.targets, every), [repr(v) for v in a1.scores.tolist()], _ids(a1.shared, every))
            want = (_ids(a2.targets, fresh_ids), [repr(v) for v in a2.scores.tolist()], _ids(a2.shared, fresh_ids))
            LIVE_COUNTS["queries"] += 1
            LIVE_COUNTS["mismatches"] += got != want
            assert got == want and a1.shared_ptr.tolist() == a2.shared_ptr.tolist(), (x, masked, ms)


def test_core_live_graph_with_a_hub_and_a_fill() -> None:
    """A hub seed (the push lowers eps for itself) and many new nodes on one concept: still the
    fresh build's answer."""
    base_ids = ["hub"] + [f"leaf{i:03d}" for i in range(300)]
    base_ids.sort()
    edges = [("hub", f"leaf{i:03d}") for i in range(300)]
    base = _fresh(base_ids, edges)
    new_ids = [f"mem{i:03d}" for i in range(200)]
    every = base_ids + new_ids
    slot = {x: i for i, x in enumerate(every)}
    pairs = [(m, "hub") for m in new_ids] + [(m, f"leaf{(7 * i) % 300:03d}") for i, m in enumerate(new_ids)]
    live = _core.LiveGraph.grow(
        base,
        None,
        _keys(base_ids, new_ids),
        np.array([slot[a] for a, _ in pairs], np.int32),
        np.array([slot[b] for _, b in pairs], np.int32),
    )
    fresh_ids = sorted(every)
    fresh = _fresh(fresh_ids, edges + pairs)
    fslot = {x: i for i, x in enumerate(fresh_ids)}
    for seeds in (["hub"], ["leaf007"], ["mem010", "leaf007"], ["hub", "mem199"]):
        seeds = sorted(seeds)
        for rank in (0, 1):
            r1 = _core.graph_context(live, np.array([slot[s] for s in seeds], np.int32), np.ones(len(seeds)), rank=rank)
            r2 = _core.graph_context(
                fresh, np.array([fslot[s] for s in seeds], np.int32), np.ones(len(seeds)), rank=rank
            )
            assert _answer(r1, every) == _answer(r2, fresh_ids)


@pytest.mark.parametrize("order", ["ascending", "descending", "shuffled"])
def test_a_full_gap_spreads_its_new_nodes(order: str) -> None:
    """Two hundred new ids between the same two base ids (more than the 31 halvings a gap's
    rank word allows in a row): their keys are spread again when a gap fills, and every answer
    stays the fresh build's."""
    base = LinkGraph.from_edges([("a", "z"), ("z", "zz")])
    ids = [f"m{i:04d}" for i in range(200)]
    if order == "descending":
        ids.reverse()
    elif order == "shuffled":
        ids = [ids[(i * 37) % 200] for i in range(200)]
    live = LiveGraph.over(base, version=0)
    edges = [("a", "z"), ("z", "zz")]
    for v, x in enumerate(ids, 1):
        live = live.grown({x: ("MEMORY", x, None, None)}, [(x, "a")], version=v)
        assert live is not None
        edges.append((x, "a"))
    keys = [live.order_key(live.slot(x)) for x in sorted(ids)]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    fresh = LinkGraph.from_edges(edges)
    got = graph_context(live.base, concepts=["z"], caller=ALL)  # the base is unchanged
    assert [r.id for r in got.results] == ["a", "zz"]
    seeds = live.sorted_slots([live.slot("a")])
    r = _core.graph_context(live.core, np.array(seeds, np.int32), np.ones(1), k=300)
    want = graph_context(fresh, concepts=["a"], caller=ALL, k=300)
    assert [live.node_at(s)[0] for s in r.nodes.tolist()] == [x.id for x in want.results]
    assert [repr(s) for s in r.scores.tolist()] == [repr(x.score) for x in want.results]


def test_an_older_graph_of_a_chain_answers_as_before() -> None:
    base = LinkGraph.from_edges([("a", "c"), ("c", "e")])
    g1 = LiveGraph.over(base, version=0).grown({"b": ("NODE", "Bee", None, None)}, [("b", "c")], version=1)
    assert g1 is not None
    before = (g1.num_nodes, g1.slot("d"), [g1.node_at(s) for s in g1.neighbors("c")], g1.node_at(g1.slot("b")))
    g2 = g1.grown({"d": ("NODE", None, None, None), "b": ("MEMORY", "Bee 2", None, None)}, [("d", "c")], version=2)
    assert g2 is not None and g2.slot("d") == 4 and g2.node_at(g2.slot("b")) == ("b", "MEMORY", "Bee 2")
    after = (g1.num_nodes, g1.slot("d"), [g1.node_at(s) for s in g1.neighbors("c")], g1.node_at(g1.slot("b")))
    assert after == before and before[1] is None
    # growing the older graph again (not the newest of its chain) gives an independent chain
    g2b = g1.grown({"bb": ("NODE", None, None, None)}, [("bb", "e")], version=2)
    assert g2b is not None and g2b.slot("d") is None and g2b.slot("bb") == 4
    assert [g2b.node_at(s)[0] for s in g2b.neighbors("e")] == ["bb", "c"]
    assert [g2.node_at(s)[0] for s in g2.neighbors("c")] == ["a", "b", "d", "e"]
    # a deletion is not a delta
    assert g2.grown({"a": None}, [], version=3) is None


def test_a_graph_grown_during_a_view_does_not_take_a_half_made_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph grown (another thread's read) while its parent's first view checks whether a base
    node's scopes changed takes no verdict from that unfinished check: it and the graphs grown
    from it find the rescoped node themselves, and a scoped caller's view is refused (the full
    snapshot answers) instead of being made over the base's stale scopes."""
    base = LinkGraph.from_edges([], nodes=[{"id": f"b{i:02d}"} for i in range(20)])
    rows = {f"b{i:02d}": ("NODE", None, None, None) for i in range(19)}
    rows["b19"] = ("NODE", None, '["t"]', None)  # a public base node made private
    g = LiveGraph.over(base, version=0).grown(rows, [], version=1)
    assert g is not None
    child: list[LiveGraph] = []
    orig = LiveGraph._row_at

    def row_at(self: LiveGraph, x: str) -> object:
        if self is g and not child:  # inside g's check: a read in another thread grows g
            grown = g.grown({"new": ("NODE", None, None, None)}, [], version=2)
            assert grown is not None
            child.append(grown)
        return orig(self, x)

    monkeypatch.setattr(LiveGraph, "_row_at", row_at)
    assert g.view(["u"]) is None
    monkeypatch.setattr(LiveGraph, "_row_at", orig)
    grandchild = child[0].grown({"new2": ("NODE", None, None, None)}, [], version=3)
    assert grandchild is not None
    assert grandchild.view(["u"]) is None and child[0].view(["u"]) is None


def test_a_chain_grown_during_a_scan_of_its_rows_is_read_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope names and the written ids scan the chain a read in another thread may grow:
    each scans the rows as they were (no "dictionary changed size during iteration")."""
    base = LinkGraph.from_edges([("a", "b")])
    g = LiveGraph.over(base, version=0).grown(
        {f"m{i}": ("NODE", None, '["s"]', None) for i in range(5)}, [], version=1, texts={}
    )
    assert g is not None
    orig = LiveGraph._row_at
    grown: list[LiveGraph] = []

    def row_at(self: LiveGraph, x: str) -> object:
        if self is g:
            head = grown[-1] if grown else g
            more = head.grown({f"x{len(grown)}": ("NODE", None, '["z"]', None)}, [], version=2 + len(grown))
            assert more is not None
            grown.append(more)
        return orig(self, x)

    monkeypatch.setattr(LiveGraph, "_row_at", row_at)
    assert sorted(g.scope_names()) == ["s"]
    assert g.view(["s"]) is not None


def test_an_older_graph_lists_only_its_own_walk_edges() -> None:
    """An older graph of a chain whose first walk comes after the chain grew lists the pairs it
    has, not those of the later graph (whose slots it does not have)."""
    ann = (None, None, None, 0.5, None)
    base = LinkGraph.from_edges([("a", "b", "T")])
    g1 = LiveGraph.over(base, version=0).grown({"c": ("NODE", None, None, None)}, [("c", "a", "U", ann)], version=1)
    assert g1 is not None
    g2 = g1.grown({"d": ("NODE", None, None, None)}, [("d", "a", "U", ann)], version=2)
    assert g2 is not None
    w1 = g1.walk_edges()
    assert w1 is not None
    assert [(k >> 32, k & 0xFFFFFFFF) for k in w1.keys.tolist()] == [(0, 2)]
    w2 = g2.walk_edges()
    assert w2 is not None and [(k >> 32, k & 0xFFFFFFFF) for k in w2.keys.tolist()] == [(0, 2), (0, 3)]


def test_a_body_only_write_counts_toward_the_delta() -> None:
    """A batch that rewrites a node's text alone (a body) is held by the delta as a written node
    is, so that its limits and the compaction mark bound a store written only that way."""
    base = LinkGraph.from_edges([("a", "b")])
    g = LiveGraph.over(base, version=0)
    for v in range(1, 4):
        grown = g.grown({}, [], version=v, texts={"a": ("a", f"body {v}")})
        assert grown is not None
        g = grown
    assert g.rewritten == 3


def _path(kb: KnowledgeBase | LinkGraph, x: str, y: str, caller: Caller) -> dict:
    try:
        return graph_path(kb, x, y, caller=caller).to_dict()
    except Exception as exc:  # noqa: BLE001 - the same error text on both sides
        return {"error": f"{type(exc).__name__}: {exc}"}


def _suggest(kb: KnowledgeBase | LinkGraph, x: str, caller: Caller) -> dict:
    try:
        return link_suggest(kb, x, caller=caller, min_shared=1).to_dict()
    except Exception as exc:  # noqa: BLE001 - the same error text on both sides
        return {"error": f"{type(exc).__name__}: {exc}"}


def _context(kb: KnowledgeBase | LinkGraph, x: str, rank: str = "ppr", caller: Caller = ALL) -> dict:
    try:
        return graph_context(kb, concepts=[x], k=10, caller=caller, rank=rank).to_dict()
    except Exception as exc:  # noqa: BLE001 - the same error text on both sides
        return {"error": f"{type(exc).__name__}: {exc}"}


def test_a_store_follows_its_writes_with_a_delta(tmp_path) -> None:
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.create(path)
    kb.add_nodes(
        [
            {"id": f"c{i:02d}", "type": "CONCEPT", "title": f"concept {i}", "scopes": [["t"], ["u"], None][i % 3]}
            for i in range(30)
        ]
    )
    kb.add_edges([(f"c{i:02d}", f"c{(i * 7 + 3) % 30:02d}") for i in range(30)])
    other = KnowledgeBase.open(path)  # another writer: followed through the change log
    compared = 0
    for t in range(40):
        writer = other if t % 3 == 0 else kb
        with writer.transaction():
            writer.add_nodes(
                [
                    {
                        "id": f"m{(t * 17) % 97:02d}-{t}",
                        "type": "MEMORY",
                        "title": f"turn {t}",
                        "scopes": [["t"], None, ["u", "t"], ["u"]][t % 4],
                    }
                ]
            )
            writer.add_edges([(f"m{(t * 17) % 97:02d}-{t}", f"c{(t * 11) % 30:02d}", "ABOUT")])
            if t % 5 == 0:
                writer.add_edges([(f"c{t % 30:02d}", f"c{(t + 13) % 30:02d}", "RELATED_TO")])
                writer.add_edges([(f"c{(t + 13) % 30:02d}", f"c{t % 30:02d}", ["BROADER", "LINK"][t % 2])])
        if t % 7 == 3:
            writer.add_nodes([{"id": f"c{t % 30:02d}", "type": "CONCEPT", "title": f"retitled {t}"}])
        live = kb.live_graph()
        # a read the delta does not answer (a seed hidden from its caller: the snapshot path names
        # it) brings the full snapshot forward, and the next live graph is over it
        assert live.base is kb.graph() or live.delta_nodes > 0
        fresh = KnowledgeBase.open(path, read_only=True)
        try:
            # seeds every caller sees (a hidden seed takes the snapshot path for its error, which
            # brings the full snapshot forward: the next live graph is over it)
            public_memory = [f"m{(t * 17) % 97:02d}-{t}"] if t % 4 == 1 else []
            for x in [f"c{(t * 3 + 2) % 30:02d}", *public_memory]:
                for rank, who in itertools.product(("ppr", "coverage"), CALLERS):
                    assert _context(kb, x, rank, who) == _context(fresh.graph(), x, rank, who), (x, rank, who)
                    compared += 1
                for who in CALLERS:
                    assert _suggest(kb, x, who) == _suggest(fresh.graph(), x, who), (x, who)
                    y = f"c{(t * 7 + 5) % 30:02d}"
                    assert _path(kb, x, y, who) == _path(fresh.graph(), x, y, who), (x, y, who)
        finally:
            fresh.close()
    assert compared == (40 + 10) * 2 * len(CALLERS)
    assert live.view(["t"]) is not None  # retitles (same scopes) keep the delta's visibility
    # a base node's scopes changed: the delta's visibility cannot say it (the snapshot answers)
    kb.add_nodes([{"id": "c05", "scopes": ["u"]}])  # public before
    assert kb.live_graph().view(["t"]) is None
    for who in CALLERS:
        assert _context(kb, "c06", "ppr", who) == _context(kb.graph(), "c06", "ppr", who)
    # a deletion is not a delta: a new base (the full snapshot at the new position)
    kb.delete_nodes(["c08"])
    live = kb.live_graph()
    assert live.base is kb.graph() and live.delta_nodes == 0
    assert _context(kb, "c06") == _context(kb.graph(), "c06")
    other.close()
    kb.close()


def test_an_agents_turns_are_answered_from_one_base(tmp_path) -> None:
    """Writes and the reads a delta answers (every tool it serves, every caller, seeds they see):
    one base throughout, the delta growing by a node a turn, every answer a fresh store's."""
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.create(path)
    kb.add_nodes([{"id": f"c{i:02d}", "type": "CONCEPT", "scopes": [["t"], None][i % 2]} for i in range(20)])
    kb.add_edges([(f"c{i:02d}", f"c{(i * 3 + 1) % 20:02d}") for i in range(20)])
    base = kb.graph()
    for t in range(30):
        with kb.transaction():
            kb.add_nodes([{"id": f"mem-{t:03d}", "type": "MEMORY", "scopes": [None, ["t"]][t % 2]}])
            kb.add_edges(
                [(f"mem-{t:03d}", f"c{(t * 7) % 20:02d}", "ABOUT"), (f"mem-{t:03d}", f"c{t % 20:02d}", "ABOUT")]
            )
        x, y = f"c{(2 * t + 1) % 20:02d}", f"c{(2 * t + 5) % 20:02d}"  # public
        got = [
            (_context(kb, x, "ppr", who), _suggest(kb, x, who), _path(kb, x, y, who))
            for who in (ALL, Caller.public(), Caller.with_scopes("t"))
        ]
        live = kb.live_graph()
        assert live.base is base and live.delta_nodes == t + 1
        fresh = KnowledgeBase.open(path, read_only=True)
        try:
            g = fresh.graph()
            want = [
                (_context(g, x, "ppr", who), _suggest(g, x, who), _path(g, x, y, who))
                for who in (ALL, Caller.public(), Caller.with_scopes("t"))
            ]
        finally:
            fresh.close()
        assert got == want
    kb.close()


def test_the_live_path_refuses_what_it_does_not_answer(tmp_path) -> None:
    """Hidden or unknown concepts, other callers, node types and questions take the snapshot
    path, with its errors."""
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes([{"id": "a"}, {"id": "s", "scopes": ["t"]}])
    kb.add_edges([("a", "b"), ("b", "s")])
    _ = kb.graph()
    kb.add_edges([("b", "n")])
    assert kb.live_graph().delta_nodes == 1
    from conceptwalk.errors import NotFoundError

    with pytest.raises(NotFoundError):
        graph_context(kb, concepts=["missing"], caller=ALL)
    with pytest.raises(NotFoundError):
        graph_context(kb, concepts=["s"], caller=Caller.public())
    pub = graph_context(kb, concepts=["b"], caller=Caller.public()).to_dict()
    assert "s" not in {r["id"] for r in pub["results"]} and "n" in {r["id"] for r in pub["results"]}
    assert _context(kb, "b") == _context(kb.graph(), "b")


def test_live_graph_grow_checks_its_arguments() -> None:
    base = LinkGraph.from_edges([("a", "b"), ("b", "c")]).core
    e32 = np.empty(0, np.int32)
    with pytest.raises(ValueError, match="not a new node's order key"):
        _core.LiveGraph.grow(base, None, np.array([(9 << 32)], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="not a new node's order key"):
        _core.LiveGraph.grow(base, None, np.array([(1 << 32) | 0xFFFFFFFF], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="distinct"):
        _core.LiveGraph.grow(base, None, np.array([(1 << 32) | 5, (1 << 32) | 5], np.uint64), e32, e32)
    one = _core.LiveGraph.grow(base, None, np.array([(1 << 32) | 5, (2 << 32) | 5], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="keep the order"):
        _core.LiveGraph.grow(base, one, np.array([(2 << 32) | 5, (1 << 32) | 5], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="slots already"):
        _core.LiveGraph.grow(base, one, np.array([(1 << 32) | 5], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="outside"):
        _core.LiveGraph.grow(base, None, np.empty(0, np.uint64), np.array([0], np.int32), np.array([3], np.int32))
    other = LinkGraph.from_edges([("a", "b")]).core
    with pytest.raises(ValueError, match="another base"):
        _core.LiveGraph.grow(other, one, np.array([(1 << 32) | 5, (2 << 32) | 5], np.uint64), e32, e32)
    with pytest.raises(ValueError, match="takes a LiveVisibility"):
        _core.graph_context(
            one, np.array([0], np.int32), np.ones(1), visible=_core.VisibilityMask(base, np.ones(3, bool))
        )
    two = _core.LiveGraph.grow(base, None, np.array([(1 << 32) | 5, (2 << 32) | 5], np.uint64), e32, e32)
    lv = _core.LiveVisibility.make(two, _core.VisibilityMask(base, np.ones(3, bool)), np.ones(2, bool))
    with pytest.raises(ValueError, match="another LiveGraph"):
        _core.graph_context(one, np.array([0], np.int32), np.ones(1), visible=lv)
    with pytest.raises(ValueError, match="another graph than"):
        _core.LiveVisibility.make(two, _core.VisibilityMask(other, np.ones(2, bool)), np.ones(2, bool))
    with pytest.raises(ValueError, match="slot_mask must have length 2"):
        _core.LiveVisibility.make(two, _core.VisibilityMask(base, np.ones(3, bool)), np.ones(3, bool))
    with pytest.raises(ValueError, match="ascending in the graph's order"):
        _core.graph_context(one, np.array([1, 3], np.int32), np.ones(2))  # slot 3 sorts before node 1
    with pytest.raises(IndexError, match="outside"):
        _core.graph_context(one, np.array([5], np.int32), np.ones(1))
    # random garbage never crashes: a clear error or a graph
    rng = np.random.default_rng(0)
    for _ in range(300):
        keys = rng.integers(0, 2**63, size=int(rng.integers(0, 4)), dtype=np.uint64)
        a = rng.integers(-2, 8, size=int(rng.integers(0, 4))).astype(np.int32)
        try:
            g = _core.LiveGraph.grow(base, None, keys, a, a[::-1].copy())
        except ValueError:
            continue
        assert g.num_nodes == 3 + len(keys)


def test_the_counts_are_reported() -> None:
    print(f"live graph differential: {LIVE_COUNTS}")
    assert LIVE_COUNTS["mismatches"] == 0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_keys_order_like_ids(n: int) -> None:
    """The key rule (docs/live_store.md): a base node's key is above every new key of its own gap
    and below every key of the next."""
    base = LinkGraph.from_edges([("b", "d"), ("d", "f")])
    live = LiveGraph.over(base, version=0)
    new = ["a", "c", "e", "g", "ca", "cb", "dd"][: 2 + n * 2]
    live = live.grown({x: ("NODE", None, None, None) for x in new}, [], version=1)
    assert live is not None
    every = base.ids + new
    by_key = sorted(every, key=lambda x: live.order_key(live.slot(x)))
    assert by_key == sorted(every)


def test_a_damaged_row_in_the_delta_is_the_stores_error(tmp_path) -> None:
    """A row written around the API (scopes that are not a JSON list, an id that is not text)
    after the live graph was made: the read says the store is damaged, as the snapshot path does,
    never a TypeError from the delta."""
    import sqlite3

    from conceptwalk.errors import ConceptwalkError

    for bad in ("INSERT INTO nodes(id, scopes) VALUES ('x', 'not json')", "INSERT INTO nodes(id) VALUES (x'00ff')"):
        path = str(tmp_path / f"kb{len(bad)}.db")
        kb = KnowledgeBase.create(path)
        kb.add_edges([("a", "b"), ("b", "c")])
        kb.live_graph()
        con = sqlite3.connect(path)
        con.execute(bad)
        con.commit()
        con.close()
        with pytest.warns(RuntimeWarning), pytest.raises(ConceptwalkError, match="damaged"):
            graph_context(kb, concepts=["a"], caller=ALL)
        kb.close()


def test_a_grown_graph_carries_at_most_the_newest_slot_masks() -> None:
    """Callers bringing a new scope set every turn: a grown graph carries the slot masks of at
    most the newest 64 scope sets (not one more per turn until the next base), and a view of a
    scope set it no longer carries is made from the rows, the same."""
    base = LinkGraph.from_edges([("a", "b")])
    g = LiveGraph.over(base, version=0)
    for v in range(1, 80):
        grown = g.grown({f"m{v:02d}": ("NODE", None, f'["s{v}"]', None)}, [(f"m{v:02d}", "a")], version=v)
        assert grown is not None
        g = grown
        assert g.view([f"s{v}"]) is not None
    assert g._inherit is not None and len(g._inherit.slot_masks) == 64
    first = g.view(["s1"])
    assert first is not None
    assert [first.visible(s) for s in range(g.num_nodes)] == [True, True, True] + [False] * 78
