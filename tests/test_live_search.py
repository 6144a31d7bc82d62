"""Search over a live store's text: the base's index less the documents written since, plus a
delta index of their texts, read by the core as one collection (issue 31: the text index as a
base plus a segment). Every answer must equal a fresh index's bit for bit.

- The core (``_core.bm25_topk_live``) against ``_core.bm25_topk`` on a fresh index of the same
  documents, with random texts, rewritten and added documents, visibility and eligibility masks
  (hypothesis).
- The store: random writes (adds, retitles, body-only rewrites, rescoped new nodes, aliases) then
  ``KnowledgeBase.search`` (with and without a node-type filter) and a question's
  ``graph_context`` (with and without concepts) for three callers, against a fresh store opened
  on the same file; the live path must be the one that answered.
- The boundary: what the binding refuses.
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, _core
from conceptwalk.graph import LinkGraph
from conceptwalk.graph.live import LiveGraph
from conceptwalk.graph.text import B, K1, TextIndex
from conceptwalk.errors import ConceptwalkError
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import context as context_tool
from conceptwalk.tools import graph_context

WORDS = ["graph", "walk", "memory", "agent", "river", "bank", "stream", "flow", "token", "omega", "alpha"]
COUNTS = {"reads": 0, "live": 0, "mismatches": 0}


def _text(r: random.Random, n: int) -> str | None:
    return " ".join(r.choice(WORDS) for _ in range(n)) if n else None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_core_live_equals_fresh(seed: int) -> None:
    r = random.Random(seed)
    nb = r.randint(1, 30)
    base_ids = sorted({f"n{r.randrange(1000):04d}" for _ in range(nb)})
    nb = len(base_ids)
    titles = {x: _text(r, r.randint(0, 3)) for x in base_ids}
    bodies = {x: _text(r, r.randint(0, 6)) for x in base_ids}
    base = LinkGraph.from_edges([], nodes=[{"id": x, "title": titles[x]} for x in base_ids])
    base_ix = TextIndex.build([titles[x] for x in base_ids], [bodies[x] for x in base_ids])
    live = LiveGraph.over(base, version=0)
    version = 0
    for _batch in range(r.randint(1, 4)):
        texts: dict[str, tuple[str | None, str | None]] = {}
        nodes = {}
        for _ in range(r.randint(1, 4)):
            if r.random() < 0.4:
                x = r.choice(base_ids)
            else:
                x = f"n{r.randrange(1000):04d}x"
            t, b = _text(r, r.randint(0, 3)), _text(r, r.randint(0, 5))
            titles[x], bodies[x] = t, b
            texts[x] = (t, b)
            nodes[x] = ("NODE", t, None, None)
        version += 1
        grown = live.grown(nodes, [], version=version, texts=texts)
        assert grown is not None
        live = grown
    lt = live.text(base_ix)
    assert lt is not None
    ids = sorted(titles)
    fresh = TextIndex.build([titles[x] for x in ids], [bodies[x] for x in ids])
    slot_of = {x: live.slot(x) for x in ids}
    # masks: per id visible / eligible, the same on both sides
    vis = {x: r.random() < 0.8 for x in ids}
    elig = {x: r.random() < 0.8 for x in ids}
    use_vis, use_elig = r.random() < 0.6, r.random() < 0.4
    b = base.num_nodes
    bvis = np.array([vis[x] for x in base_ids], dtype=np.uint8) if use_vis else None
    belig = np.array([elig[x] for x in base_ids], dtype=np.uint8) if use_elig else None
    dids = [live.node_at(int(s))[0] for s in lt.slots]
    dvis = np.array([vis[x] for x in dids], dtype=np.uint8) if use_vis else None
    delig = np.array([elig[x] for x in dids], dtype=np.uint8) if use_elig else None
    fvis = np.array([vis[x] for x in ids], dtype=np.uint8) if use_vis else None
    felig = np.array([elig[x] for x in ids], dtype=np.uint8) if use_elig else None
    stats = base_ix.core.stats(bvis, K1, B)
    for _q in range(4):
        q = _text(r, r.randint(1, 4))
        assert q is not None
        k = r.randint(1, 8)
        slots, scores = lt.search(
            q, k, stats=stats, base_visible=bvis, base_eligible=belig, delta_visible=dvis, delta_eligible=delig
        )
        terms = fresh.query_terms(q)
        if terms.size:
            fdocs, fscores, _, _ = _core.bm25_topk(fresh.core, terms, k, fvis, felig, None, K1, B)
            want = [(ids[d], s) for d, s in zip(fdocs.tolist(), fscores.tolist())]
        else:
            want = []
        by_slot = {v: x for x, v in slot_of.items()}
        got = [(by_slot[s], sc) for s, sc in zip(slots, scores)]
        assert got == want, (q, k)
        assert all(s < b + live.delta_nodes for s in slots)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_text_made_after_every_batch_equals_fresh(seed: int) -> None:
    """The delta's documents appended batch by batch to the buffer the texts share (an agent's
    turns), taken as a prefix copy by a second maker of the same graph's text (two threads), and
    keyed again when a full gap spreads its new nodes: after every batch, the text equals a fresh
    index of the graph's documents, its keys are the graph's and its dropped documents the base
    documents rewritten."""
    r = random.Random(seed)
    base_ids = sorted({f"n{r.randrange(100):02d}" for _ in range(r.randint(1, 8))})
    titles = {x: _text(r, r.randint(0, 3)) for x in base_ids}
    bodies = {x: _text(r, r.randint(0, 4)) for x in base_ids}
    base = LinkGraph.from_edges([], nodes=[{"id": x, "title": titles[x]} for x in base_ids])
    base_ix = TextIndex.build([titles[x] for x in base_ids], [bodies[x] for x in base_ids])
    live = LiveGraph.over(base, version=0)
    down = 10**6  # ids that sort before the last one in one gap: its ranks halve until it spreads
    written: set[str] = set()  # every node whose text a batch wrote: the delta's documents
    for version in range(1, r.randint(2, 90)):
        texts: dict[str, tuple[str | None, str | None]] = {}
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            u = r.random()
            if u < 0.15:
                x = r.choice(base_ids)  # a base document rewritten (dropped from the base)
            elif u < 0.3 and len(titles) > len(base_ids):
                x = r.choice(sorted(set(titles) - set(base_ids)))  # a delta document rewritten
            elif u < 0.75:
                down -= 1
                x = f"{base_ids[0]}~{down:07d}"  # the same gap, in descending order
            else:
                x = f"n{r.randrange(100):02d}x{r.randrange(10**6)}"
            titles[x], bodies[x] = _text(r, r.randint(0, 3)), _text(r, r.randint(0, 3))
            texts[x] = (titles[x], bodies[x])
            written.add(x)
        grown = live.grown(
            {x: ("NODE", t, None, None) for x, (t, _) in texts.items()}, [], version=version, texts=texts
        )
        assert grown is not None
        live = grown
        if r.random() < 0.25:
            continue  # no text made for this graph: the next one's comes from the nearest made before
        inherit = live._inherit
        lt = live.text(base_ix)
        assert lt is not None
        if r.random() < 0.3 and inherit.text is not None:
            # a second thread making the same graph's text from the same parent: the buffer
            # has the first one's documents past the parent's, so it takes a copy
            live._text, live._inherit = None, inherit
            lt2 = live.text(base_ix)
            assert lt2 is not None and lt2 is not lt and lt2.buf is not lt.buf
            lt = lt2
        ids = sorted(titles)
        fresh = TextIndex.build([titles[x] for x in ids], [bodies[x] for x in ids])
        assert lt.keys.tolist() == live.order_keys(lt.slots).tolist()
        b = base.num_nodes
        assert lt.dropped.tolist() == sorted(int(s) for s in lt.slots if s < b)
        assert sorted(live.node_at(int(s))[0] for s in lt.slots) == sorted(written)
        for _q in range(3):
            q = _text(r, r.randint(1, 3))
            assert q is not None
            k = r.randint(1, 6)
            slots, scores = lt.search(q, k)
            fd, fs = fresh.search(q, k)
            assert [live.node_at(s)[0] for s in slots] == [ids[d] for d in fd] and scores == fs, (q, k)


def _open_count(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the answers the live path gave over a delta (search, and a question's graph_context)."""
    seen = {"live": 0, "question": 0, "typed": 0}
    orig = KnowledgeBase._live_search
    orig_q = context_tool._live_question

    def counted(self: KnowledgeBase, *a: object, **kw: object) -> object:
        got = orig(self, *a, **kw)  # type: ignore[arg-type]
        if got is not None and self.live_graph().rewritten > 0:
            seen["live"] += 1
        return got

    def counted_q(source: object, *a: object, **kw: object) -> object:
        got = orig_q(source, *a, **kw)  # type: ignore[arg-type]
        if got is not None and source.live_graph().rewritten > 0:  # type: ignore[attr-defined]
            seen["question"] += 1
            seen["typed"] += a[-2] is not None  # node_types
        return got

    monkeypatch.setattr(KnowledgeBase, "_live_search", counted)
    monkeypatch.setattr(context_tool, "_live_question", counted_q)
    return seen


def _context(
    kb: KnowledgeBase, q: str | None, concepts: list[str], who: Caller, node_types: list[str] | None = None
) -> object:
    """graph_context, serialised (its timing left out), or its error."""
    try:
        if concepts or q is None:
            d = graph_context(kb, q, concepts=concepts, k=6, caller=who, node_types=node_types).to_dict()
        else:  # the default concepts (a tuple)
            d = graph_context(kb, q, k=6, caller=who, node_types=node_types).to_dict()
    except ConceptwalkError as e:
        return (type(e).__name__, str(e))
    d.pop("elapsed_ms", None)
    return json.dumps(d, sort_keys=True, default=repr)


@pytest.mark.parametrize("seed", range(8))
def test_store_search_live_equals_fresh(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    r = random.Random(seed)
    seen = _open_count(monkeypatch)
    path = os.path.join(tmp_path, "kb.db")
    kb = KnowledgeBase.create(path)
    rows = {
        f"n{i:03d}": {
            "id": f"n{i:03d}",
            "type": r.choice(["DOC", "CONCEPT"]),
            "title": _text(r, 3),
            "body": _text(r, r.choice([0, 6])),
            "scopes": ["t"] if r.random() < 0.3 else [],
        }
        for i in range(40)
    }
    kb.add_nodes(list(rows.values()))
    kb.add_edges([(f"n{r.randrange(40):03d}", f"n{r.randrange(40):03d}") for _ in range(60)])
    callers = [Caller.all_access(), Caller.public(), Caller.with_scopes("t")]
    kb.search("graph", 5)  # the base
    for _step in range(20):
        op = r.random()
        if op < 0.45:  # a new node (sometimes rewritten again: a new node's scopes change)
            i = r.randrange(60)
            kb.add_nodes(
                [
                    {
                        "id": f"m{i:03d}",
                        "type": r.choice(["DOC", "MEMORY"]),
                        "title": _text(r, 3),
                        "body": _text(r, r.choice([0, 5])),
                        "scopes": ["t"] if r.random() < 0.3 else [],
                    }
                ]
            )
            kb.add_edges([(f"m{i:03d}", f"n{r.randrange(40):03d}")])
        elif op < 0.75:  # a base node's title and body, or its body alone
            x = f"n{r.randrange(40):03d}"
            row = dict(rows[x])
            if r.random() < 0.5:
                row["title"] = _text(r, 2)
            row["body"] = _text(r, 4)
            rows[x] = row
            kb.add_nodes([row])
        elif op < 0.85:
            kb.add_aliases([(f"{r.choice(WORDS)} nick", f"n{r.randrange(40):03d}")])
        for c in callers:
            q = _text(r, r.randint(1, 3)) or "graph"
            if r.random() < 0.3:
                q += f" n{r.randrange(40):03d}"  # an id named in the text
            nt = None if r.random() < 0.7 else ["DOC"]
            concepts = [f"n{r.randrange(40):03d}"] if r.random() < 0.3 else []
            seed = [f"n{r.randrange(40):03d}"]
            got = (
                kb.search(q, 6, caller=c, node_types=nt),
                _context(kb, q, concepts, c, nt),
                _context(kb, None, seed, c, nt),
            )
            fresh = KnowledgeBase.open(path)
            try:
                want = (
                    fresh.search(q, 6, caller=c, node_types=nt),
                    _context(fresh, q, concepts, c, nt),
                    _context(fresh, None, seed, c, nt),
                )
            finally:
                fresh.close()
            COUNTS["reads"] += 3
            if got != want:
                COUNTS["mismatches"] += 1
            assert got == want, (q, c, nt)
    kb.close()
    COUNTS["live"] += seen["live"] + seen["question"]
    # the live path answered (not the snapshot path), a node-type filter too
    assert seen["live"] > 20 and seen["question"] > 10 and seen["typed"] > 0, seen


def test_store_search_sees_a_new_alias_and_a_body(tmp_path: os.PathLike[str]) -> None:
    kb = KnowledgeBase.create(os.path.join(tmp_path, "kb.db"))
    kb.add_nodes([{"id": "tls", "title": "Transport Layer Security"}, {"id": "doc", "title": "notes"}])
    who = Caller.all_access()
    assert [x for x, _ in kb.search("handshake", 5, caller=who)] == []
    kb.add_nodes([{"id": "doc", "title": "notes", "body": "the handshake"}])  # body alone
    assert [x for x, _ in kb.search("handshake", 5, caller=who)] == ["doc"]
    kb.add_aliases([("secure sockets", "tls")])
    assert [x for x, _ in kb.search("secure sockets", 5, caller=who)] == ["tls"]
    kb.add_nodes([{"id": "mem-1", "title": "a memory of the handshake"}])
    got = [x for x, _ in kb.search("mem-1 handshake", 5, caller=who)]
    assert got[0] == "mem-1" and set(got) == {"mem-1", "doc"}
    assert kb.live_graph().delta_nodes == 1
    assert kb._live_search("handshake", 5, None, who) is not None  # answered by the live path


def test_live_search_keeps_the_aliases_across_batches_that_wrote_none(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A live graph grown from the change log carries the store's alias count, read in the same
    statement (``aliases_count``): a batch that wrote no alias costs no read of the count; an
    alias written through the API, by another store object, or with the client's own SQL (no
    API removes one; such a write may leave no change-log row, but the count's triggers see
    every row) is seen by the next search, as a fresh store object sees it; and a backup of
    another history with the same count restored in the file's place is not answered with the
    aliases of the history read before."""
    import sqlite3

    path = os.path.join(tmp_path, "kb.db")
    kb = KnowledgeBase.create(path)
    other = KnowledgeBase.open(path)
    reads = {"n": 0}
    orig = KnowledgeBase.aliases_version

    def counted(self: KnowledgeBase) -> int | None:
        reads["n"] += 1
        return orig(self)

    def same_as_fresh(text: str) -> list[str]:
        got = [x for x, _ in kb.search(text, 5, caller=who)]
        with KnowledgeBase.open(path) as fresh:
            assert got == [x for x, _ in fresh.search(text, 5, caller=who)], text
        return got

    monkeypatch.setattr(KnowledgeBase, "aliases_version", counted)
    who = Caller.all_access()
    try:
        kb.add_nodes([{"id": "tls", "title": "Transport Layer Security"}, {"id": "doc", "title": "notes"}])
        kb.add_aliases([("secure sockets", "tls")])
        kb.search("warm", 3, caller=who)
        kb.add_nodes([{"id": "m0", "title": "memory zero"}])
        assert same_as_fresh("secure sockets") == ["tls"]
        before = reads["n"]
        for t in range(1, 6):  # memories only: the count comes with the batch
            kb.add_nodes([{"id": f"m{t}", "title": f"memory {t}"}])
            assert [x for x, _ in kb.search("secure sockets", 5, caller=who)] == ["tls"]
            assert kb.live_graph().aliases_count is not None and kb.live_graph().delta_nodes > t
        assert reads["n"] == before
        for writer, alias in ((kb, "penguin"), (other, "walrus")):
            with writer.transaction():
                writer.add_nodes([{"id": f"m-{alias}", "title": "another memory"}])
                writer.add_aliases([(alias, "doc")])
            assert same_as_fresh(alias) == ["doc"]
        # the client's own SQL, right after an API write (no change-log row of its own)
        kb.add_aliases([("zebra crossing", "tls")])
        kb.conn.execute("DELETE FROM aliases WHERE alias = 'zebra crossing'")
        kb.conn.execute("INSERT INTO aliases(alias, canonical) VALUES ('hippo', 'doc')")
        kb.add_nodes([{"id": "m-next", "title": "the next turn"}])
        assert same_as_fresh("zebra crossing") == [] and same_as_fresh("hippo") == ["doc"]
        assert kb.live_graph().delta_nodes > 6  # (answered by the live graph)
        # a backup of another history, the same alias count, restored in the file's place
        bak = os.path.join(tmp_path, "fork.db")
        with sqlite3.connect(path) as src, sqlite3.connect(bak) as dst:
            src.backup(dst)
        with KnowledgeBase.open(bak) as fork:
            fork.add_aliases([("rhino", "doc")])
        kb.add_aliases([("rhino", "tls")])
        assert same_as_fresh("rhino") == ["tls"]
        with sqlite3.connect(bak) as src, sqlite3.connect(path) as dst:
            src.backup(dst)
        assert same_as_fresh("rhino") == ["doc"]
    finally:
        kb.close()
        other.close()


def test_bm25_topk_live_refuses_bad_input() -> None:
    base = TextIndex.build(["graph walk", "river bank"])
    delta = TextIndex.build(["graph"])
    stats = base.core.stats(None, K1, B)
    good = {
        "base": base.core,
        "base_stats": stats,
        "base_visible": None,
        "base_eligible": None,
        "dropped": np.array([1], dtype=np.int32),
        "delta": delta.core,
        "delta_keys": np.array([7], dtype=np.uint64),
        "delta_visible": None,
        "delta_eligible": None,
        "base_terms": np.array([1], dtype=np.int32),  # "graph" (the vocabulary: bank, graph, river, walk)
        "delta_terms": np.array([0], dtype=np.int32),
        "k": 3,
    }
    docs, scores, _, _ = _core.bm25_topk_live(**good)
    assert docs.tolist() == [2, 0] and scores[0] > scores[1]
    bad = [
        {"dropped": np.array([1, 0], dtype=np.int32)},  # not ascending
        {"dropped": np.array([5], dtype=np.int32)},  # outside the base
        {"base_terms": np.array([9], dtype=np.int32)},
        {"delta_terms": np.array([3], dtype=np.int32)},
        {"base_terms": np.array([0, 0], dtype=np.int32), "delta_terms": np.array([-1, -1], dtype=np.int32)},
        {"base_terms": np.array([-1, -1], dtype=np.int32), "delta_terms": np.array([0, 0], dtype=np.int32)},
        {"base_terms": np.array([1, -1], dtype=np.int32)},  # lengths differ
        {"delta_keys": np.array([1, 2], dtype=np.uint64)},
        {"base_visible": np.ones(5, dtype=np.uint8)},
        {"delta_eligible": np.ones(3, dtype=np.uint8)},
        {"base_stats": delta.core.stats(None, K1, B)},
        {"delta": TextIndex.build(["graph"], title_weight=3).core},
        {"k": 0},
        {"k1": -1.0},
        {"b": 2.0},
    ]
    for change in bad:
        with pytest.raises((ValueError, TypeError)):
            _core.bm25_topk_live(**{**good, **change})


def test_counts_are_reported() -> None:
    print(f"live search: {COUNTS}")  # noqa: T201
    assert COUNTS["mismatches"] == 0


def test_live_graph_context_type_filter_refuses_bad_input() -> None:
    base = LinkGraph.from_edges([("a", "b"), ("b", "c")], nodes=[{"id": "a", "type": "DOC"}])
    g = LiveGraph.over(base, version=0).grown({"d": ("MEMORY", None, None, None)}, [("d", "a")], version=1)
    assert g is not None
    keep, codes = g.type_filter(["MEMORY", "DOC"])
    seeds, w = np.array([1], dtype=np.int32), np.ones(1)
    r = _core.graph_context(
        g.core, seeds, w, node_type=base.node_type_codes, keep_types=keep, delta_node_type=codes, k=5
    )
    assert sorted(g.node_at(s)[0] for s in r.nodes.tolist()) == ["a", "d"]
    bad = [
        {"node_type": base.node_type_codes, "keep_types": keep, "delta_node_type": np.zeros(3, dtype=np.int32)},
        {"node_type": np.zeros(4, dtype=np.int32), "keep_types": keep, "delta_node_type": codes},
        {"delta_node_type": codes},
    ]
    for kw in bad:
        with pytest.raises(ValueError):
            _core.graph_context(g.core, seeds, w, k=5, **kw)


def test_a_base_node_whose_type_changed_takes_the_snapshot_path(tmp_path: os.PathLike[str]) -> None:
    kb = KnowledgeBase.create(os.path.join(tmp_path, "kb.db"))
    kb.add_nodes([{"id": "a", "type": "DOC", "title": "alpha"}, {"id": "b", "type": "DOC", "title": "beta"}])
    kb.add_edges([("a", "b")])
    who = Caller.all_access()
    graph_context(kb, concepts=["a"], caller=who)
    kb.add_nodes([{"id": "b", "type": "CONCEPT", "title": "beta"}])  # a base node's type changed
    assert kb.live_graph().type_filter(["CONCEPT"]) is None
    r = graph_context(kb, concepts=["a"], caller=who, node_types=["CONCEPT"])
    assert [x.id for x in r.results] == ["b"]
    assert graph_context(kb, concepts=["a"], caller=who, node_types=["DOC"]).results == []


def test_a_graph_grown_from_an_older_one_gets_its_own_text() -> None:
    """Two graphs grown from one parent: the second grows from a copy of the chain (its own
    vocabulary), so it must not reuse the parent's term ids."""
    base_titles = {"a": "graph walk", "c": "river bank"}
    base = LinkGraph.from_edges([], nodes=[{"id": x, "title": t} for x, t in base_titles.items()])
    ix = TextIndex.build(list(base_titles.values()))
    g1 = LiveGraph.over(base, version=0).grown(
        {"b": ("N", "omega stream", None, None)}, [], version=1, texts={"b": ("omega stream", None)}
    )
    assert g1 is not None and g1.text(ix) is not None
    g2a = g1.grown({"d": ("N", "alpha token", None, None)}, [], version=2, texts={"d": ("alpha token", None)})
    g2b = g1.grown({"e": ("N", "flow memory", None, None)}, [], version=2, texts={"e": ("flow memory", None)})
    assert g2a is not None and g2b is not None
    for g, extra in ((g2a, {"d": "alpha token"}), (g2b, {"e": "flow memory"})):
        titles = {**base_titles, "b": "omega stream", **extra}
        ids = sorted(titles)
        fresh = TextIndex.build([titles[x] for x in ids])
        lt = g.text(ix)
        assert lt is not None
        for q in ("omega flow", "alpha memory graph", "stream token bank"):
            slots, scores = lt.search(q, 5)
            fd, fs = fresh.search(q, 5)
            assert [g.node_at(s)[0] for s in slots] == [ids[d] for d in fd] and scores == fs, q


def test_a_new_tenants_scope_is_read_live_and_a_typo_warned_once(
    tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller naming a scope only nodes written since the base carry (a new tenant's first
    memories) is answered from the live graph, not a full state per read; a scope no node carries
    is warned about once, as the snapshot path does; every answer is a fresh store's."""
    import warnings

    from conceptwalk.errors import UnknownScopeWarning
    from conceptwalk.kb.state import StateKeeper
    from conceptwalk.tools import graph_path, link_suggest

    path = os.path.join(tmp_path, "kb.db")
    kb = KnowledgeBase.create(path)
    kb.add_nodes(
        [
            {"id": "c1", "type": "CONCEPT", "title": "river walk"},
            {"id": "c2", "type": "CONCEPT", "title": "graph memory"},
            {"id": "m0", "type": "MEMORY", "title": "river bank", "scopes": ["tenant-a"]},
        ]
    )
    kb.add_edges([("m0", "c1"), ("c1", "c2")])
    kb.state()  # the base
    who = Caller.with_scopes("tenant-new", "tenant-typo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph_context(kb, concepts=["c1"], caller=Caller.all_access())  # the live graph over the base
    kb.add_nodes([{"id": "m1", "type": "MEMORY", "title": "river walk memory", "scopes": ["tenant-new"]}])
    kb.add_edges([("m1", "c1"), ("m1", "c2")])
    full = []
    monkeypatch.setattr(StateKeeper, "state", lambda self, **kw: full.append(1) or pytest.fail("a full state"))

    def reads(store: KnowledgeBase) -> list[object]:
        return [
            store.search("river walk", 5, caller=who),
            graph_context(store, "river memory", k=5, caller=who).to_dict()["results"],
            graph_context(store, concepts=["m1"], k=5, caller=who).to_dict()["results"],
            link_suggest(store, "m1", k=5, caller=who, min_shared=1).to_dict()["suggestions"],
            graph_path(store, "m1", "c2", caller=who).to_dict(),
        ]

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = reads(kb)
    typo = [w for w in seen if issubclass(w.category, UnknownScopeWarning)]
    assert len(typo) == 1 and "tenant-typo" in str(typo[0].message) and "tenant-new" not in str(typo[0].message)
    assert not full
    assert any(r for r in got)  # the tenant sees its memory
    monkeypatch.undo()
    fresh = KnowledgeBase.open(path)
    try:
        with warnings.catch_warnings(record=True) as seen_fresh:
            warnings.simplefilter("always")
            want = reads(fresh)
        assert [str(w.message) for w in seen_fresh if issubclass(w.category, UnknownScopeWarning)] == [
            str(typo[0].message)
        ]
    finally:
        fresh.close()
        kb.close()
    assert json.dumps(got, sort_keys=True, default=repr) == json.dumps(want, sort_keys=True, default=repr)
