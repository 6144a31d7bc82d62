"""A live store's memory (issue 31): a graph that a write replaced is freed when no reader holds
it, without waiting for the cycle collector, and the per-node lists of a snapshot are never
scanned by the collector."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context, graph_path, link_suggest
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search


@pytest.fixture
def no_collector() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _reads(kb: KnowledgeBase, ret: ConceptAnchoredRetriever) -> None:
    for who in (Caller.all_access(), Caller.public(), Caller.with_scopes("t")):
        graph_context(kb, concepts=["c1"], k=5, caller=who)
        graph_context(kb, "concept 3", k=5, caller=who)
        link_suggest(kb, "c2", caller=who)
        graph_path(kb, "c1", "c9", caller=who)
        kb.search("concept 4", 5, caller=who)
        ret.query("concept 5", 5, concept_walk=True, caller=who)


@pytest.mark.parametrize("on_file", [False, True])
def test_replaced_graphs_are_freed_without_the_collector(tmp_path, no_collector, on_file):
    path = str(tmp_path / "kb.db") if on_file else ":memory:"
    kb = KnowledgeBase.create(path) if on_file else KnowledgeBase.open(path)
    try:
        kb.add_nodes([{"id": f"c{i}", "type": "CONCEPT", "title": f"concept {i}"} for i in range(60)])
        kb.add_nodes([{"id": "h", "title": "hidden concept 3", "scopes": ["t"]}])
        kb.add_edges([(f"c{i}", f"c{(7 * i + 1) % 60}") for i in range(60)] + [("h", "c3")])
        ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
        _reads(kb, ret)
        replaced = []
        for t in range(6):
            replaced.append(weakref.ref(kb.graph()))
            with kb.transaction():  # an agent's turn: a memory about two concepts
                kb.add_nodes([{"id": f"m{t}", "type": "MEMORY", "title": f"memory {t} of concept 2"}])
                kb.add_edges([(f"m{t}", "c1", "ABOUT"), (f"m{t}", f"c{t + 2}", "ABOUT")])
            _reads(kb, ret)
        current = kb.graph()
        alive = [r() for r in replaced]
        # Every replaced graph is gone (the first may be the one the store keeps as the base of
        # its saved file, which it holds on purpose); none is waiting for a collection.
        assert all(g is None for g in alive[1:]), [g is not None for g in alive]
        assert alive[0] is None or alive[0] is not current
        assert current.num_nodes == 67
    finally:
        kb.close()


def test_snapshot_id_and_title_lists_are_not_tracked(tmp_path):
    path = str(tmp_path / "kb.db")
    with KnowledgeBase.create(path) as kb:
        kb.add_edges([("a", "b"), ("b", "c")])
        built = kb.graph()
        assert not gc.is_tracked(built.ids) and not gc.is_tracked(built.titles)
        kb.add_edges([("a", "d")])
        advanced = kb.graph()
        assert advanced is not built and advanced.ids == ["a", "b", "c", "d"]
        assert not gc.is_tracked(advanced.ids) and not gc.is_tracked(advanced.titles)
        saved = kb.snapshot_path
    with KnowledgeBase.open(path) as kb:
        mapped = kb.graph()  # from the saved file when there is one
        assert saved is None or mapped.num_nodes == 4
        assert mapped.ids == ["a", "b", "c", "d"] and not gc.is_tracked(mapped.ids)


def test_a_retriever_per_request_and_unknown_scopes_leave_no_garbage(no_collector):
    """A server that makes a retriever per request, and callers naming scopes no node carries
    (a warning is issued once), must not leave reference cycles holding a store state."""
    import warnings

    kb = KnowledgeBase.open(":memory:")
    try:
        kb.add_nodes([{"id": f"c{i}", "type": "CONCEPT", "title": f"concept {i}"} for i in range(40)])
        kb.add_edges([(f"c{i}", f"c{(3 * i + 1) % 40}") for i in range(40)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for t in range(4):
                kb.add_edges([(f"m{t}", "c1", "ABOUT")])
                ret = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
                for who in (Caller.with_scopes(f"unknown-{t}"), Caller.public()):
                    ret.query("concept 5", 5, concept_walk=True, caller=who)
                    graph_context(kb, "concept 3", k=5, caller=who)
                del ret
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            kinds = sorted({type(x).__name__ for x in gc.garbage})
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
        assert not {"LinkGraph", "StoreState", "ReadCache", "StoreReader", "frame"} & set(kinds), kinds
    finally:
        kb.close()


def test_the_freed_heap_is_given_back_every_so_many_replaced_snapshots(monkeypatch):
    from conceptwalk.kb import state as state_mod

    calls = []
    monkeypatch.setattr(state_mod, "_trim_heap", lambda: calls.append(1))
    monkeypatch.setattr(state_mod.StateKeeper, "TRIM_EVERY", 4)
    kb = KnowledgeBase.open(":memory:")
    try:
        kb.add_edges([("a", "b")])
        kb.graph()
        for t in range(9):
            kb.add_edges([(f"m{t}", "a")])
            kb.graph()  # the read after the write replaces the snapshot
        assert len(calls) == 2  # after the 4th and the 8th replacement
        kb.add_nodes([{"id": "a", "title": "same graph"}])  # a title change: a new snapshot too
        kb.graph()
        kb.graph()  # an unchanged store replaces nothing
        assert len(calls) == 2
    finally:
        kb.close()


def test_the_freed_heap_is_given_back_once_replaced_graphs_add_up(monkeypatch):
    """Sooner than TRIM_EVERY: once the snapshots replaced since the last trim held TRIM_GRAPHS
    times the current graph's nodes plus edges (and at least TRIM_MIN_ENTRIES)."""
    from conceptwalk.kb import state as state_mod

    calls = []
    monkeypatch.setattr(state_mod, "_trim_heap", lambda: calls.append(1))
    monkeypatch.setattr(state_mod.StateKeeper, "TRIM_MIN_ENTRIES", 30)
    kb = KnowledgeBase.open(":memory:")
    try:
        kb.add_edges([(f"n{i}", f"n{i + 1}") for i in range(9)])  # 10 nodes, 9 edges
        kb.graph()
        for t in range(4):
            kb.add_edges([(f"m{t}", "n0")])
            kb.graph()  # each replaces about 20 entries: the third brings them past 2 x the current graph
        assert len(calls) == 1
        monkeypatch.setattr(state_mod.StateKeeper, "TRIM_MIN_ENTRIES", 10_000)
        for t in range(4, 8):
            kb.add_edges([(f"m{t}", "n0")])
            kb.graph()
        assert len(calls) == 1  # small graphs stay under the floor (TRIM_EVERY still applies)
    finally:
        kb.close()
