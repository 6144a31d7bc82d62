"""The wrapped query over a live store (issue 31, ``wrap/_live.py``): after writes it reads the
live graph (base plus delta) instead of a full snapshot brought to the last write, and answers
as a fresh build of the same store does, bit for bit.

- The typed walk over base plus delta (``_core.typed_walk_live``) against the walk over a fresh
  :class:`LinkGraph` of the same nodes and edges: candidates, scores, reach, path counts and
  every rendered path (its nodes, each hop's edge type, direction and provenance), for random
  graphs, deltas (new nodes, edges of new and old types, annotations, an edge rewritten) and
  callers (hypothesis).
- The store: random agent turns (memories, edges of the walk's types and others, annotations,
  retitles, aliases, scoped nodes) through the long-lived store and through another
  connection, every caller's wrapped query compared with a fresh store's after every turn, for
  the built-in search and a caller's own; the live path must be the one that answered.
- The writes it does not read live (a concept, a rerank, a model's vectors) answer from the full
  snapshot, equal too; the core refuses a malformed delta without reading out of bounds.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_live_graph import _backup  # (one copy through SQLite's backup API)

import conceptwalk.wrap.retriever as retriever_module
from conceptwalk import Caller, LinkGraph, _core
from conceptwalk.errors import ConceptwalkError, InputError
from conceptwalk.graph.linkgraph import EDGE_ANNOTATION_KEYS
from conceptwalk.graph.live import LiveGraph
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.graph.vectors import DenseVectors
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, _reader, builtin_flat_search
from conceptwalk.wrap._live import LiveRead
from conceptwalk.wrap.walk import LiveProvenance, LiveWalk, Provenance, run_walk

COUNTS = {"walks": 0, "store reads": 0, "live reads": 0, "walk candidates": 0, "brought forward": 0, "mismatches": 0}
TYPES = ["TAGGED_CONCEPT", "RELATED_TO", "PARENT_CONCEPT", "MENTIONS"]
NODE_TYPES = ["CONCEPT", "MEMORY", "FILE"]
SCOPES = [None, None, ["a"], ["b"]]
CALLERS = [Caller.all_access(), Caller.public(), Caller.with_scopes("a")]
CONFIG = WalkConfig(
    expand_edge_types=("RELATED_TO", "PARENT_CONCEPT", "MENTIONS"),
    admit_edge_types=("TAGGED_CONCEPT", "MENTIONS", "ATTACHED_TO"),
    max_hops=2,
    max_candidates=12,
)


def _ann(draw: Any) -> tuple[Any, ...]:
    conf = draw(st.sampled_from([None, 0.25, 0.5, 0.9, 1.0]))
    return (
        draw(st.sampled_from([None, "agent", "human"])),
        draw(st.sampled_from([None, "high"])),
        draw(st.sampled_from([None, "TAGGED"])),
        conf,
        draw(st.sampled_from([None, "current"])),
    )


def _edge_dict(src: str, dst: str, t: str, ann: tuple[Any, ...]) -> dict[str, Any]:
    d: dict[str, Any] = {"src": src, "dst": dst, "type": t}
    for k, v in zip(EDGE_ANNOTATION_KEYS, ann):
        if v is not None:
            d[k] = v
    return d


# ---------------------------------------------------------------------------- the core walk
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_walk_over_a_delta_equals_a_fresh_build(data: st.DataObject) -> None:
    base_ids = sorted(
        data.draw(st.lists(st.text("abcdefg", min_size=1, max_size=3), min_size=2, max_size=18, unique=True))
    )
    nodes = {x: (data.draw(st.sampled_from(NODE_TYPES)), data.draw(st.sampled_from(SCOPES))) for x in base_ids}
    pick = st.sampled_from(base_ids)
    edges: dict[tuple[str, str, str], tuple[Any, ...]] = {}
    for _ in range(data.draw(st.integers(1, 40))):
        a, b = data.draw(pick), data.draw(pick)
        if a != b:
            edges[(a, b, data.draw(st.sampled_from(TYPES[:3])))] = _ann(data.draw)
    base = _graph(nodes, edges)
    live = LiveGraph.over(base, version=0)
    new_ids: list[str] = []
    for v in range(1, data.draw(st.integers(1, 4)) + 1):
        added = [
            x + "~" for x in data.draw(st.lists(st.text("abcdefg", min_size=1, max_size=3), max_size=3, unique=True))
        ]
        added = [x for x in added if x not in new_ids]
        rows = {}
        for x in added:
            nodes[x] = (data.draw(st.sampled_from(NODE_TYPES)), data.draw(st.sampled_from(SCOPES)))
            t, sc = nodes[x]
            rows[x] = (t, f"title {x}", None if sc is None else json.dumps(sc), None)
        new_ids += added
        every = base_ids + new_ids
        batch = []
        for _ in range(data.draw(st.integers(0, 6))):
            a, b = data.draw(st.sampled_from(every)), data.draw(st.sampled_from(every))
            if a == b:
                continue
            # old and new types (MENTIONS is only the delta's), and rewrites of existing edges
            key = (a, b, data.draw(st.sampled_from(TYPES)))
            ann = _ann(data.draw)
            edges[key] = ann
            batch.append((*key, ann))
        grown = live.grown(rows, batch, version=v)
        assert grown is not None
        live = grown
        fresh = _graph(nodes, edges)
        _same_walks(live, fresh, nodes, data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_walk_edges_inserted_equal_the_general_merge(data: st.DataObject) -> None:
    """A batch's pairs new to the delta are inserted where they sort (an agent's turn); the
    arrays equal those of the general merge (argsort of every pair) at every version."""
    import conceptwalk.graph.live as live_module

    base_ids = sorted(
        data.draw(st.lists(st.text("abcdefg", min_size=1, max_size=3), min_size=2, max_size=12, unique=True))
    )
    nodes = {x: ("CONCEPT", None) for x in base_ids}
    edges = {(a, b, "RELATED_TO"): (None, None, None, 0.5, None) for a, b in zip(base_ids, base_ids[1:])}
    base = _graph(nodes, edges)
    batches = []
    every = list(base_ids)
    for v in range(1, data.draw(st.integers(1, 6)) + 1):
        x = f"n{v}~"
        every.append(x)
        batch = [(x, data.draw(st.sampled_from(every[:-1])), "ABOUT", _ann(data.draw))]
        for _ in range(data.draw(st.integers(0, 4))):
            a, b = data.draw(st.sampled_from(every)), data.draw(st.sampled_from(every))
            if a != b:
                batch.append((a, b, data.draw(st.sampled_from(TYPES)), _ann(data.draw)))
        batches.append(({x: ("MEMORY", f"title {x}", None, None)}, batch))
    got = []
    for insert in (True, False):
        live_module._WALK_INSERT = insert
        try:
            live = LiveGraph.over(base, version=0)
            walks = []
            for v, (rows, batch) in enumerate(batches, 1):
                grown = live.grown(rows, batch, version=v)
                assert grown is not None
                live = grown
                w = live.walk_edges()
                assert w is not None
                walks.append(w)
            got.append(walks)
        finally:
            live_module._WALK_INSERT = True
    for w, want in zip(*got):
        for a, b in zip(w, want):
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), (w, want)
            else:
                assert a == b


def _graph(nodes: dict[str, tuple[str, Any]], edges: dict[tuple[str, str, str], tuple[Any, ...]]) -> LinkGraph:
    return LinkGraph.from_edges(
        [_edge_dict(a, b, t, ann) for (a, b, t), ann in edges.items()],
        nodes=[
            {"id": x, "type": t, "title": f"title {x}", **({} if sc is None else {"scopes": sc})}
            for x, (t, sc) in nodes.items()
        ],
    )


def _same_walks(live: LiveGraph, fresh: LinkGraph, nodes: dict[str, tuple[str, Any]], data: st.DataObject) -> None:
    walk = live.walk_edges()
    assert walk is not None
    every = sorted(nodes)
    cfg = CONFIG
    if data.draw(st.booleans()):
        cfg = WalkConfig(
            expand_edge_types=cfg.expand_edge_types,
            admit_edge_types=cfg.admit_edge_types,
            admit_node_types=("MEMORY", "FILE"),
            expand_node_types=("CONCEPT", "MEMORY"),
            max_hops=2,
            max_candidates=data.draw(st.integers(1, 6)),
            max_edges=data.draw(st.sampled_from([3, 20, 10000])),
        )
    scopes = data.draw(st.sampled_from([None, [], ["a"]]))
    view = None if scopes is None else live.view(scopes)
    fview = fresh.view(Caller.all_access() if scopes is None else Caller.with_scopes(*scopes))
    visible = [x for x in every if fview.mask is None or fview.mask.mask[fresh.id_index[x]]]
    if not visible:
        return
    starts_ids = data.draw(st.lists(st.sampled_from(visible), min_size=1, max_size=3, unique=True))
    conf = [data.draw(st.sampled_from([1.0, 0.7, 0.4])) for _ in starts_ids]
    fprov = Provenance(fresh, None)
    want = run_walk(
        fresh, [(fresh.id_index[x], x, c) for x, c in zip(starts_ids, conf)], cfg, fview.mask, fprov, render_except=[]
    )
    lprov = LiveProvenance(Provenance(live.base, None), walk)
    got = run_walk(
        live.base,
        [(live.slot(x), x, c) for x, c in zip(starts_ids, conf)],
        cfg,
        None,
        lprov,
        render_except=[],
        live=LiveWalk(live, walk, view),
    )
    COUNTS["walks"] += 1
    fid = fresh.ids
    lid = [live.node_at(s)[0] for s in got.candidates]
    assert lid == [fid[c] for c in want.candidates]
    for gc, wc in zip(got.candidates, want.candidates):
        assert got.scores[gc] == want.scores[wc]
        assert got.reach[gc] == want.reach[wc]
        assert got.path_count[gc] == want.path_count[wc]
    assert got.edges_visited == want.edges_visited and got.truncated_by == want.truncated_by
    assert got.rendered(got.candidates) == want.rendered(want.candidates)


def test_the_core_refuses_a_malformed_delta() -> None:
    base = LinkGraph.from_edges([("a", "b", "T"), ("b", "c", "T")])
    live = LiveGraph.over(base, version=0).grown(
        {"d": ("NODE", None, None, None)}, [("d", "a", "T", (None,) * 5)], version=1
    )
    assert live is not None
    w = live.walk_edges()
    flags = np.ones(2, dtype=bool)
    starts = np.array([0], dtype=np.int32)

    def walk(keys: Any, ptr: Any, td: Any, weights: Any = None) -> Any:
        return _core.typed_walk_live(live.core, keys, ptr, td, weights, starts, 2, flags, flags)

    assert len(walk(w.keys, w.ptr, w.typedir).candidates) == 3  # b, d (1 hop), c (2 hops)
    bad = [
        (np.array([3, 1], np.uint64), np.array([0, 1, 2], np.int32), np.array([0, 0], np.int32)),  # unordered
        (
            np.array([(0 << 32) | 9], np.uint64),
            np.array([0, 1], np.int32),
            np.array([0], np.int32),
        ),  # slot out of range
        (np.array([(2 << 32) | 1], np.uint64), np.array([0, 1], np.int32), np.array([0], np.int32)),  # lo > hi
        (w.keys, np.array([0, 5], np.int32), w.typedir),  # offsets past the edges
        (w.keys, np.array([1, 1], np.int32), w.typedir),  # not from 0
        (w.keys, w.ptr, np.array([-2], np.int32)),  # a negative type code
        (np.zeros(0, np.uint64), np.zeros(1, np.int32), np.zeros(0, np.int32)),  # the delta's pair not listed
    ]
    for keys, ptr, td in bad:
        with pytest.raises((ValueError, InputError)):
            walk(keys, ptr, td)
    with pytest.raises(ValueError):
        walk(w.keys, w.ptr, w.typedir, np.zeros(3))  # weights of another length
    # and the walk is sound after a refused one (the workspace was left clean)
    assert len(walk(w.keys, w.ptr, w.typedir).candidates) == 3


# ---------------------------------------------------------------------------- the store
def _fill_title(i: int) -> str:
    return f"{WORDS[i % 8]} {WORDS[(3 * i + 1) % 8]}"


def _fill(kb: KnowledgeBase) -> None:
    kb.add_nodes(
        [{"id": f"c{i:02d}", "type": "CONCEPT", "title": _fill_title(i)} for i in range(14)]
        + [
            {"id": f"m{i:02d}", "type": "MEMORY", "title": f"note {WORDS[(5 * i) % 8]}", "scopes": SCOPES[i % 4] or []}
            for i in range(10)
        ]
    )
    kb.add_edges(
        [{"src": f"c{i:02d}", "dst": f"c{(i * 3 + 1) % 14:02d}", "type": "RELATED_TO"} for i in range(14)]
        + [
            {"src": f"m{i:02d}", "dst": f"c{(2 * i) % 14:02d}", "type": "TAGGED_CONCEPT", "extraction_confidence": 0.8}
            for i in range(10)
        ]
    )


WORDS = ["graph", "walk", "memory", "river", "stone", "token", "index", "omega"]

TURN = st.tuples(
    st.sampled_from(
        [
            "memory",
            "memory",
            "memory",
            "edge",
            "retitle",
            "alias",
            "scoped",
            "file",
            "concept",
            "new-concept",
            "new-concept",
            "delete",
            "body",
        ]
    ),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 7),
)


def _turn(kb: KnowledgeBase, turn: tuple[str, int, int, int], t: int) -> None:
    kind, a, b, c = turn
    concepts = [f"c{i:02d}" for i in range(14)]
    x = f"t{t:03d}"
    if kind in ("memory", "scoped", "file"):
        kb.add_nodes(
            [
                {
                    "id": x,
                    "type": "FILE" if kind == "file" else "MEMORY",
                    "title": f"turn {WORDS[c]} {WORDS[a % 8]}",
                    "scopes": ["b"] if kind == "scoped" else [],
                }
            ]
        )
        kb.add_edges(
            [
                {"src": x, "dst": concepts[a % 14], "type": "TAGGED_CONCEPT", "extraction_confidence": (c + 1) / 8},
                {
                    "src": x,
                    "dst": concepts[b % 14],
                    "type": "ATTACHED_TO" if c % 2 else "MENTIONS",
                    "authority": "agent",
                },
            ]
        )
    elif kind == "edge":
        kb.add_edges(
            [
                {
                    "src": concepts[a % 14],
                    "dst": concepts[b % 14],
                    "type": ["RELATED_TO", "PARENT_CONCEPT", "MENTIONS"][c % 3],
                    "fidelity": "high" if c % 2 else None,
                }
            ]
        )
    elif kind == "retitle":
        kb.add_nodes([{"id": f"m{a % 10:02d}", "title": f"retitled {WORDS[c]}"}])
    elif kind == "alias":
        kb.add_aliases([(f"{WORDS[c]} nick", concepts[a % 14])])
    elif kind == "concept":  # a base concept retitled: read live (its base row skipped, scored anew)
        kb.add_nodes([{"id": f"c{a % 14:02d}", "title": f"{WORDS[c]} concept"}])
    elif kind == "new-concept":  # a concept added (its id sorts among the base's), read live
        y = f"c{a % 14:02d}-{t}"
        kb.add_nodes(
            [
                {
                    "id": y,
                    "type": "CONCEPT",
                    "title": None if c == 7 else f"{WORDS[c]} {WORDS[b % 8]}",
                    "body": f"{WORDS[(a + c) % 8]} notes" if c % 3 == 0 else None,
                    "scopes": [[], ["a"], ["b"], []][b % 4],
                }
            ]
        )
        kb.add_edges(
            [
                {"src": f"m{b % 10:02d}", "dst": y, "type": "TAGGED_CONCEPT", "extraction_confidence": (c + 1) / 8},
                {"src": y, "dst": concepts[a % 14], "type": "RELATED_TO"},
            ]
        )
    elif kind == "body":  # a text change alone, of a memory or a concept
        kb.add_nodes([{"id": f"m{a % 10:02d}" if c % 2 else concepts[a % 14], "body": f"{WORDS[c]} body"}])
    elif kind == "delete":  # a new base
        kb.delete_edges([{"src": f"m{a % 10:02d}", "dst": f"c{(2 * (a % 10)) % 14:02d}", "type": "TAGGED_CONCEPT"}])


def _result(r: Any) -> str:
    ev = dict(r.event)
    for key in ("timestamp", "flatMs", "resolveMs", "walkMs"):
        ev.pop(key, None)
    return json.dumps(
        [r.results, [c.to_dict() for c in r.concepts], ev, r.cut, r.cut_by, r.missing_types, r.best_score],
        sort_keys=True,
        default=repr,
    )


def _retrievers(kb: KnowledgeBase) -> list[ConceptAnchoredRetriever]:
    def own(text: str, k: int) -> list[dict[str, Any]]:  # a caller's own flat search (no caller)
        return [{"id": i, "score": s} for i, s in kb.search(text, k, caller=Caller.all_access())]

    return [
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG),
        ConceptAnchoredRetriever(own, kb, config=CONFIG),
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=_with(CONFIG, concept_text="title+body")),
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG, embedder=_Model()),
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG, embedder=_fused_model(0.05)),
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG, embedder=_fused_model(0.0)),
    ]


def _fused_model(temperature: float) -> Any:
    """The stand-in model with its title and title+body similarities and character n-grams
    fused: by their posteriors (``temperature > 0``, as the sentence-transformers embedder's
    tuned weights fuse them) or by their weighted mean (as model2vec's)."""
    from conceptwalk.wrap.embed import FusionWeights

    model = _Model()
    model.fusion = FusionWeights(body=1.0, char=0.5, temperature=temperature)
    return model


def _answers(kb: KnowledgeBase, retrievers: list[ConceptAnchoredRetriever] | None = None) -> dict[str, str]:
    """Every caller's wrapped query by each retriever (made over ``kb`` when not given: a new
    retriever reads the store's full state on construction, a long-lived one does not)."""
    out = {}
    for ri, ret in enumerate(retrievers or _retrievers(kb)):
        for ci, who in enumerate(CALLERS):
            for q in ("graph walk", "turn river memory", "omega nick"):
                try:
                    out[f"{ri}:{ci}:{q}"] = _result(ret.run(q, 4, concept_walk=True, caller=who))
                except ConceptwalkError as e:
                    out[f"{ri}:{ci}:{q}"] = f"{type(e).__name__}: {e}"
    return out


def _fresh(path: str, tmp: str, n: int) -> KnowledgeBase:
    """A fresh process's store: the bytes copied through SQLite's backup, no snapshot file."""
    target = os.path.join(tmp, f"fresh-{n}.db")
    _backup(path, target)
    return KnowledgeBase.open(target)


@pytest.fixture
def count_live(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    seen = {"live": 0}
    orig = retriever_module.live_read

    def counted(*a: Any, **kw: Any) -> Any:
        got = orig(*a, **kw)
        if isinstance(got, LiveRead):
            seen["live"] += 1
        return got

    monkeypatch.setattr(retriever_module, "live_read", counted)
    return seen


def _plain(value: Any) -> Any:
    """A memo_grown value with its arrays as lists (comparable with ==)."""
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value.tolist() if isinstance(value, np.ndarray) else value


@pytest.fixture
def check_grown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every value a live graph brings forward from its parent (LiveGraph.memo_grown's grow)
    is checked against the one made from the graph alone (its build)."""
    orig = LiveGraph.memo_grown

    def checked(self: LiveGraph, key: Any, build: Any, grow: Any) -> Any:
        inherit = self._inherit
        forward = inherit is not None and key in inherit.grown_memo and key not in self._grown_memo
        got = orig(self, key, build, grow)
        if forward:
            want = build()
            assert _plain(got) == _plain(want), (key, got, want)
            COUNTS["brought forward"] += 1
        return got

    monkeypatch.setattr(LiveGraph, "memo_grown", checked)


@pytest.mark.parametrize("index", ["sparse", "dense"])
@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.tuples(st.booleans(), st.lists(TURN, min_size=1, max_size=2)), min_size=1, max_size=6))
def test_agent_turns_answer_as_a_fresh_build(
    tmp_path_factory: Any,
    monkeypatch: pytest.MonkeyPatch,
    count_live: dict[str, int],
    check_grown: None,
    index: str,
    turns: Any,
) -> None:
    """Random agent turns (memories, edges, retitles, aliases, scoped rows, new and renamed
    concepts, bodies, deletions) by this store object or another: every wrapped query by each
    retriever for every caller equals a fresh build's, with the concept indexes sparse (the
    hashing vectors of short titles) or dense (long bodies; forced here); and what each live
    graph brought forward from the one it grew from equals what it makes alone."""
    if index == "dense":
        monkeypatch.setattr(_reader, "SPARSE_DENSITY", 0.0)
    tmp = str(tmp_path_factory.mktemp("wrap"))
    path = os.path.join(tmp, "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    other = KnowledgeBase.open(path)
    try:
        _fill(kb)
        rets = _retrievers(kb)  # long-lived, as an agent's are
        _answers(kb, rets)  # the reader holds a state: the turns are followed from it
        t = 0
        for by_other, batch in turns:
            writer = other if by_other else kb
            with writer.transaction():
                for turn in batch:
                    _turn(writer, turn, t)
                    t += 1
            before = count_live["live"]
            got = _answers(kb, rets)
            COUNTS["live reads"] += count_live["live"] - before
            fresh = _fresh(path, tmp, t)
            try:
                want = _answers(fresh)
            finally:
                fresh.close()
            COUNTS["store reads"] += len(want)
            COUNTS["walk candidates"] += sum(v.count('"via": "concept-walk"') for v in got.values())
            bad = [k for k in want if got[k] != want[k]]
            COUNTS["mismatches"] += len(bad)
            assert not bad, (bad[:2], got[bad[0]][:600], want[bad[0]][:600])
    finally:
        kb.close()
        other.close()


def test_an_agents_turn_is_read_live(tmp_path: Any, count_live: dict[str, int]) -> None:
    """A memory written with its edges: the next wrapped query reads base plus delta (no full
    snapshot is made), appends the new memory and says why, as a fresh build does."""
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG)
    who = Caller.all_access()
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    snap = kb._keeper._snap
    kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "fresh thought"}])
    kb.add_edges(
        [{"src": "z-new", "dst": "c00", "type": "TAGGED_CONCEPT", "extraction_confidence": 0.95, "authority": "agent"}]
    )
    got = ret.run("graph walk", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 1 and kb._keeper._snap is snap  # live: no snapshot brought forward
    added = {r["id"]: r for r in got.results if r.get("via") == "concept-walk"}
    assert "z-new" in added
    hop = added["z-new"]["paths"][0]["hops"][-1]
    assert (hop["to"], hop["type"], hop["authority"], hop["extractionProvenance"]) == (
        "z-new",
        "TAGGED_CONCEPT",
        "agent",
        {"confidence": 0.95},
    )
    fresh = _fresh(path, str(tmp_path), 0)
    want = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG).run(
        "graph walk", 4, concept_walk=True, caller=who
    )
    assert _result(got) == _result(want)
    fresh.close()
    # a base node retyped into a concept: that query reads the full state, which the next
    # turn's live graph is over, so the turn after is read live again
    kb.add_nodes([{"id": "m01", "type": "CONCEPT"}])
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 1
    kb.add_nodes([{"id": "z-next", "type": "MEMORY", "title": "next thought"}])
    kb.add_edges([{"src": "z-next", "dst": "c00", "type": "TAGGED_CONCEPT"}])
    got = ret.run("graph walk", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 2
    fresh = _fresh(path, str(tmp_path), 1)
    want = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG).run(
        "graph walk", 4, concept_walk=True, caller=who
    )
    assert _result(got) == _result(want)
    fresh.close()
    kb.close()


@pytest.mark.parametrize("fusion", ["neutral", "mean", "posterior"])
def test_a_models_wrapped_query_after_a_memory_write_is_read_live(
    tmp_path: Any, count_live: dict[str, int], fusion: str
) -> None:
    """With a model's similarity (its concept vectors made from the concepts' texts in memory,
    none stored under its name), alone or fused with the title+body and character n-gram
    similarities (as the model embedders' tuned weights fuse them), a turn that writes a memory
    and its edges is read live as the hashing embedder's is (it used to build the full state on
    every turn), and so is a turn that writes a concept, each as a fresh build answers."""
    from conceptwalk.wrap.embed import FusionWeights

    model = _Model()
    if fusion != "neutral":
        model.fusion = FusionWeights(body=1.0, char=0.5, temperature=0.05 if fusion == "posterior" else 0.0)
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG, embedder=model)
    who = Caller.with_scopes("a")
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    snap = kb._keeper._snap
    kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "walk memory", "scopes": ["a"]}])
    kb.add_edges([{"src": "z-new", "dst": "c00", "type": "TAGGED_CONCEPT", "extraction_confidence": 0.7}])
    queries = ("graph walk", "walk memory", "river stone")
    got = [ret.run(q, 4, concept_walk=True, caller=who) for q in queries]
    assert count_live["live"] == len(queries) and kb._keeper._snap is snap
    fresh = _fresh(path, str(tmp_path), 0)
    fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG, embedder=model)
    assert [_result(x) for x in got] == [_result(fret.run(q, 4, concept_walk=True, caller=who)) for q in queries]
    assert any(c.method == "semantic" for x in got for c in x.concepts)  # the model's evidence is read
    fresh.close()
    # a turn that adds a concept and renames one: read live too (the written concepts embedded
    # by the model, each similarity scored as its index scores a row, fused with the base's rows
    # by the same arithmetic, each posterior over both)
    kb.add_nodes(
        [
            {"id": "c-new", "type": "CONCEPT", "title": "graph walk theory", "body": "on walks", "scopes": ["a"]},
            {"id": "c04", "title": "walk graph", "body": "a renamed concept with a longer body"},
        ]
    )
    kb.add_edges([{"src": "z-new", "dst": "c-new", "type": "TAGGED_CONCEPT"}])
    before = count_live["live"]
    got = [ret.run(q, 4, concept_walk=True, caller=who) for q in queries]
    assert count_live["live"] - before == len(queries)
    fresh = _fresh(path, str(tmp_path), 1)
    fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG, embedder=model)
    assert [_result(x) for x in got] == [_result(fret.run(q, 4, concept_walk=True, caller=who)) for q in queries]
    if fusion == "neutral":  # the written concepts' rows are scored (the model's evidence for them)
        assert any(c.id in ("c-new", "c04") and c.method == "semantic" for x in got for c in x.concepts)
    fresh.close()
    kb.close()


def test_a_retriever_made_after_a_write_builds_no_full_state(tmp_path: Any, count_live: dict[str, int]) -> None:
    """A retriever made on a live store written since its last full state (a server that makes
    one per request or per configuration) warms the live graph's base, not a new full state, and
    its first query is read live, as a fresh build answers."""
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    who = Caller.all_access()
    ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG).run(
        "graph walk", 4, concept_walk=True, caller=who
    )
    snap = kb._keeper._snap
    kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "fresh thought"}])
    kb.add_edges([{"src": "z-new", "dst": "c00", "type": "TAGGED_CONCEPT"}])
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG)
    assert kb._keeper._snap is snap  # the constructor brought no snapshot forward
    got = ret.run("graph walk", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 1 and kb._keeper._snap is snap
    fresh = _fresh(path, str(tmp_path), 0)
    want = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG).run(
        "graph walk", 4, concept_walk=True, caller=who
    )
    assert _result(got) == _result(want)
    fresh.close()
    kb.close()


@pytest.mark.parametrize("text", ["title", "title+body", "title+body-dense"])
@pytest.mark.parametrize("caller", ["all", "public", "scoped"])
def test_a_new_concept_is_read_live(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, count_live: dict[str, int], caller: str, text: str
) -> None:
    """A turn that names a new concept (an agent's memory about an idea it has not met) and
    renames an old one: the next wrapped query is read live -- the new concept resolves (the
    semantic, lexical and name evidence over base plus delta), the renamed one by its new name
    only, and the walk starts from them -- and equals a fresh build, for every caller (a new
    concept a caller cannot see resolves for nobody who cannot see it), with the concepts
    embedded from their titles or from their titles and bodies (a body alone written too), the
    base's concept index sparse or dense (as long bodies make it)."""
    if text.endswith("-dense"):
        monkeypatch.setattr(_reader, "SPARSE_DENSITY", 0.0)  # every concept index dense
        text = text[: -len("-dense")]
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    who = {"all": Caller.all_access(), "public": Caller.public(), "scoped": Caller.with_scopes("a")}[caller]
    cfg = _with(CONFIG, concept_text=text)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=cfg)
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    snap = kb._keeper._snap
    kb.add_nodes(
        [
            {"id": "c-new", "type": "CONCEPT", "title": "quantum lattice", "body": "entangled photons"},
            {"id": "c-hidden", "type": "CONCEPT", "title": "quantum lattice secret", "scopes": ["a"]},
            {"id": "c-untitled", "type": "CONCEPT", "body": "photons without a title"},
            {"id": "z-new", "type": "MEMORY", "title": "a note on the lattice"},
            {"id": "c03", "title": "lattice theory"},  # a base concept renamed
            {"id": "c05", "body": "entangled research"},  # a base concept's body alone
        ]
    )
    kb.add_edges(
        [
            {"src": "z-new", "dst": "c-new", "type": "TAGGED_CONCEPT", "extraction_confidence": 0.9},
            {"src": "z-new", "dst": "c-hidden", "type": "TAGGED_CONCEPT"},
            {"src": "c-new", "dst": "c00", "type": "RELATED_TO"},
        ]
    )
    old_name = " ".join(_fill_title(3).split())  # c03's name in the base
    queries = ("quantum lattice", "c-new", "lattice", "graph walk", "lattice theory", old_name, "entangled photons")
    got = [ret.run(q, 4, concept_walk=True, caller=who) for q in queries]
    assert count_live["live"] == len(queries) and kb._keeper._snap is snap  # live: no snapshot brought forward
    resolved = {c.id for c in got[0].concepts}
    assert "c-new" in resolved and ("c-hidden" in resolved) == (caller != "public")
    if text == "title+body":  # the bodies' words are semantic evidence (c05's base row skipped)
        assert {"c-new", "c05"} & {c.id for c in got[-1].concepts if c.method == "semantic"}
    fresh = _fresh(path, str(tmp_path), 0)
    fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=cfg)
    want = [fret.run(q, 4, concept_walk=True, caller=who) for q in queries]
    assert [_result(x) for x in got] == [_result(x) for x in want]
    dense = _reader.SPARSE_DENSITY == 0.0
    assert isinstance(fret.source.read_cache().concept_columns(fret.resolver.embedder, cfg), DenseVectors) == dense
    fresh.close()
    kb.close()


@pytest.mark.parametrize("case", ["concept", "rerank", "model-vectors", "rescope", "hashing-vectors"])
def test_what_is_not_read_live_answers_from_the_full_snapshot(
    tmp_path: Any, count_live: dict[str, int], case: str
) -> None:
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    cfg = CONFIG
    kw: dict[str, Any] = {}
    if case == "rerank":
        cfg = _with(CONFIG, rank_by="similarity")
    if case.startswith("model"):
        kw["embedder"] = _Model()
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=cfg, **kw)
    who = Caller.with_scopes("a")
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    if case == "concept":  # a base node retyped into a concept (the base's concept rows do not hold)
        kb.add_nodes([{"id": "m01", "type": "CONCEPT", "title": "graph walk again"}])
        kb.add_edges([{"src": "m01", "dst": "c00", "type": "RELATED_TO"}])
    elif case == "rescope":
        kb.add_nodes([{"id": "m01", "scopes": ["a"]}])
    elif case == "model-vectors":  # a vector stored under the model's name since (a fresh build reads it)
        kb.set_embeddings(_Model.name, ["c00"], _Model().embed(["stored"]))
        kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "graph walk note"}])
    elif case == "hashing-vectors":  # vectors stored under the built-in embedder's own name
        emb = ret.resolver.embedder
        q = np.asarray(emb.embed(["graph walk"]), dtype=np.float32)[0]
        kb.set_embeddings(emb.name, ["c00", "c01"], [-q, q])
        kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "graph walk note"}])
    else:
        kb.add_nodes([{"id": "z-new", "type": "MEMORY", "title": "graph walk note"}])
        kb.add_edges([{"src": "z-new", "dst": "c00", "type": "TAGGED_CONCEPT"}])
    got = ret.run("graph walk", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 0
    fresh = _fresh(path, str(tmp_path), 0)
    want = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=cfg, **kw).run(
        "graph walk", 4, concept_walk=True, caller=who
    )
    assert _result(got) == _result(want)
    fresh.close()
    kb.close()


def _with(cfg: WalkConfig, **kw: Any) -> WalkConfig:
    from dataclasses import replace

    return replace(cfg, **kw)


class _Model:
    """A stand-in dense model (not the built-in hashing embedder)."""

    name, dim = "toy-model", 8

    def embed(self, texts: Any) -> np.ndarray:
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for r, t in enumerate(texts):
            out[r, len(t) % 8] = 1.0
        return out


def test_the_counts_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    """Prints what this module compared (run after the tests above in file order), and fails
    when the store test ran without the live path answering."""
    if COUNTS["store reads"] == 0:
        pytest.skip("the store test did not run in this session")
    with capsys.disabled():
        print(f"\nlive wrap: {COUNTS}")
    assert COUNTS["mismatches"] == 0 and COUNTS["live reads"] > 0 and COUNTS["walk candidates"] > 0
    assert COUNTS["brought forward"] > 0


@pytest.mark.parametrize("index", ["sparse", "dense"])
def test_title_and_body_vectors_are_brought_forward_not_rebuilt(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, index: str
) -> None:
    """With ``concept_text="title+body"``, each new state's concept index is the last one's
    brought forward through the change log: only the concepts whose row or text changed are
    embedded again (with their bodies read from the store), sparse or dense, and every query
    equals a fresh build's. (``rank_by="similarity"`` is never read live: every query here makes
    the state at its position.)"""
    from conceptwalk.wrap.embed import HashingEmbedder

    if index == "dense":
        monkeypatch.setattr(_reader, "SPARSE_DENSITY", 0.0)
    embedded: list[int] = []  # the texts of each call that hashes concept rows
    orig = HashingEmbedder.embed_csr

    def counted(self: Any, texts: Any) -> Any:
        embedded.append(len(texts))
        return orig(self, texts)

    monkeypatch.setattr(HashingEmbedder, "embed_csr", counted)
    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    cfg = _with(CONFIG, concept_text="title+body", rank_by="similarity")
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=cfg)
    who = Caller.with_scopes("a")
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    writes: list[Any] = [
        lambda: kb.add_nodes([{"id": "c05", "body": "entangled photons"}]),  # a body alone
        lambda: kb.add_nodes([{"id": "c-new", "type": "CONCEPT", "title": "quantum", "body": "entangled lattice"}]),
        lambda: kb.add_nodes([{"id": "c03", "title": "lattice theory"}]),  # a title alone
        lambda: kb.add_nodes([{"id": "m01", "body": "entangled memory"}]),  # not a concept
        lambda: kb.delete_nodes(["c07"]),
    ]
    for n, write in enumerate(writes):
        write()
        embedded.clear()
        got = [ret.run(q, 4, concept_walk=True, caller=who) for q in ("entangled photons", "lattice", "graph walk")]
        assert max(embedded, default=0) <= 1, (n, embedded)  # the changed concept, never all 15
        fresh = _fresh(path, str(tmp_path), n)
        fret = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=cfg)
        want = [fret.run(q, 4, concept_walk=True, caller=who) for q in ("entangled photons", "lattice", "graph walk")]
        assert [_result(x) for x in got] == [_result(x) for x in want]
        assert isinstance(fret.source.read_cache().concept_columns(fret.resolver.embedder, cfg), DenseVectors) == (
            index == "dense"
        )
        fresh.close()
    kb.close()


def test_a_models_written_concepts_are_embedded_once(tmp_path: Any, count_live: dict[str, int]) -> None:
    """Turn after turn that each adds a concept, read live under a model: each written concept's
    text is embedded once (the rows are kept for every graph over the base), not again on every
    later turn, and every answer equals a fresh build's."""
    embedded: list[str] = []

    class Counting(_Model):
        def embed(self, texts: Any) -> np.ndarray:
            embedded.extend(texts)
            return super().embed(texts)

    path = str(tmp_path / "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    _fill(kb)
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=CONFIG, embedder=Counting())
    who = Caller.all_access()
    ret.run("graph walk", 4, concept_walk=True, caller=who)
    for t in range(6):
        kb.add_nodes([{"id": f"c-idea-{t}", "type": "CONCEPT", "title": f"idea number {t}"}])
        kb.add_edges([{"src": f"c-idea-{t}", "dst": "c00", "type": "RELATED_TO"}])
        got = ret.run(f"number {t}", 4, concept_walk=True, caller=who)
    assert count_live["live"] == 6
    ideas = [x for x in embedded if x.startswith("idea number")]
    assert sorted(ideas) == sorted(set(ideas)) and len(ideas) == 6, ideas
    fresh = _fresh(path, str(tmp_path), 0)
    want = ConceptAnchoredRetriever(builtin_flat_search(fresh), fresh, config=CONFIG, embedder=_Model()).run(
        "number 5", 4, concept_walk=True, caller=who
    )
    assert _result(got) == _result(want)
    fresh.close()
    kb.close()
