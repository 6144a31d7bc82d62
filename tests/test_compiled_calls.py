"""The shape of an answer: how many compiled calls one question makes (issue 18), and the
question-seeded ``graph_context``'s one compiled call against the multi-call path it replaced.

Counting: ``sys.setprofile`` sees a ``c_call`` event for every call from Python into a builtin;
the compiled calls are those whose function belongs to ``conceptwalk._core`` (a module function or
a method of a ``_core`` object). Property reads of core results are not calls and are not counted.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from conceptwalk import Caller, graph_context
from conceptwalk import _core
from conceptwalk.kb.store import KnowledgeBase

from deletion_oracle import open_store

_CORE_TYPES = tuple(v for v in vars(_core).values() if isinstance(v, type))


def _is_core(fn: Any) -> str | None:
    """The name of a compiled call (``name`` or ``CoreType.name``), or None for any other builtin."""
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", "?")
    if isinstance(owner, _CORE_TYPES):
        return f"{type(owner).__name__}.{name}"
    if getattr(fn, "__module__", None) == "conceptwalk._core":
        return name
    return None


def compiled_calls(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, Counter[str]]:
    """``fn(*args, **kwargs)`` and the compiled calls it made, by name."""
    calls: Counter[str] = Counter()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            name = _is_core(arg)
            if name is not None:
                calls[name] += 1

    sys.setprofile(prof)
    try:
        out = fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return out, calls


def _kb() -> KnowledgeBase:
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(
        [{"id": f"c{i}", "type": "CONCEPT", "title": f"concept {i} graph walk"} for i in range(30)]
        + [
            {"id": f"d{i}", "type": "DOC", "title": f"doc {i} about walks", "scopes": ["t1"] if i % 3 else []}
            for i in range(40)
        ]
    )
    kb.add_edges([{"src": f"d{i}", "dst": f"c{(i * 7) % 30}", "type": "TAGGED_CONCEPT"} for i in range(40)])
    kb.add_edges([{"src": f"c{i}", "dst": f"c{(i + 1) % 30}", "type": "RELATED_TO"} for i in range(30)])
    return kb


@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.public(), Caller.with_scopes("t1")], ids=str)
@pytest.mark.parametrize("rank", ["ppr", "coverage"])
def test_question_seeded_graph_context_is_one_compiled_call(caller: Caller, rank: str) -> None:
    kb = _kb()
    kwargs = {"k": 5, "caller": caller, "rank": rank, "concepts": ["c3"], "node_types": ["DOC"]}
    warm = graph_context(kb, "graph walk", **kwargs)  # the state, the caller's mask, its BM25 statistics
    res, calls = compiled_calls(graph_context, kb, "graph walk", **kwargs)
    assert res == warm and len(res) > 0
    assert sum(calls.values()) == 1, calls
    assert calls == Counter({"graph_context_text": 1})


@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.public(), Caller.with_scopes("t1")], ids=str)
def test_a_question_naming_ids_and_aliases_is_still_one_compiled_call(caller: Caller) -> None:
    """Issue 32 item 1: the nodes a question names by id or alias are seeds of the same one call
    (matched in Python against name indexes kept per graph and per alias count); a question of
    stopwords only with concepts is one call too (no text search)."""
    kb = _kb()
    kb.add_aliases([("walker", "c5")])
    kb.state()  # the full state is current: the snapshot path answers (after a write, see below)
    kwargs = {"k": 5, "caller": caller, "concepts": ["c3"]}
    q = "how do c7 and the walker graph walk"
    warm = graph_context(kb, q, **kwargs)
    res, calls = compiled_calls(graph_context, kb, q, **kwargs)
    assert res == warm and {s.id for s in res.seeds if s.source == "name"} == {"c7", "c5"}
    assert calls == Counter({"graph_context_text": 1}), calls
    graph_context(kb, "the of and", **kwargs)
    res, calls = compiled_calls(graph_context, kb, "the of and", **kwargs)
    assert [s.id for s in res.seeds] == ["c3"] and calls == Counter({"graph_context": 1}), calls


@pytest.mark.parametrize("caller", [Caller.all_access(), Caller.public(), Caller.with_scopes("t1")], ids=str)
def test_a_question_after_a_write_is_two_compiled_calls_over_the_live_graph(caller: Caller) -> None:
    """Issue 31: after a write a question's graph_context reads the live graph (base plus delta)
    and its text: the BM25 over base and segment, then the walk (two calls, neither over the
    whole store)."""
    kb = _kb()
    kb.state()
    kb.add_nodes([{"id": "m1", "title": "a graph walk memory"}])
    kb.add_edges([("m1", "c3")])
    kwargs = {"k": 5, "caller": caller, "concepts": ["c3"]}
    warm = graph_context(kb, "graph walk memory", **kwargs)  # grows the live graph, its text and views
    res, calls = compiled_calls(graph_context, kb, "graph walk memory", **kwargs)
    assert res == warm and calls == Counter({"bm25_topk_live": 1, "graph_context": 1}), calls
    assert "m1" in {s.id for s in res.seeds if s.source == "search"}  # unscoped: every caller sees it


def test_concept_seeded_graph_context_is_one_compiled_call() -> None:
    kb = _kb()
    graph_context(kb, concepts=["c3", "c4"], caller=Caller.public())
    _, calls = compiled_calls(graph_context, kb, concepts=["c3", "c4"], caller=Caller.public())
    assert calls == Counter({"graph_context": 1})


def test_the_counter_sees_each_compiled_call() -> None:
    """The counter is not blind: the path with a user's ``search=`` makes two compiled calls (the
    BM25 behind that search, then the walk), and both are counted."""
    kb = _kb()
    st_ = kb.state()
    vm = Caller.public().visibility(st_.graph)

    def search(text: str, want: int) -> list[str]:
        return [st_.graph.ids[d] for d in st_.text_index.search(text, want, visible=vm)[0]]

    graph_context(kb, "graph walk", caller=Caller.public(), search=search)
    _, calls = compiled_calls(graph_context, kb, "graph walk", caller=Caller.public(), search=search)
    assert calls == Counter({"bm25_topk": 1, "graph_context": 1})


# ----------------------------------------------------------------- one call == the many it replaced

_WORDS = ["graph", "walk", "push", "rank", "seed", "token", "login", "alpha"]


@st.composite
def _store_rows(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    n = draw(st.integers(2, 25))
    nodes = []
    for i in range(n):
        words = draw(st.lists(st.sampled_from(_WORDS), max_size=4))
        body = draw(st.lists(st.sampled_from(_WORDS), max_size=6))
        nodes.append(
            {
                "id": f"n{i}",
                "type": draw(st.sampled_from(["CONCEPT", "DOC"])),
                "title": " ".join(words) or None,
                "body": " ".join(body) or None,
                "scopes": draw(st.sampled_from([[], [], ["t1"], ["t2"], ["t1", "t2"]])),
            }
        )
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    edges = [{"src": f"n{a}", "dst": f"n{b}", "type": "REL"} for a, b in pairs if a != b]
    return nodes, edges


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=_store_rows(),
    question=st.lists(st.sampled_from(_WORDS + ["zzz"]), min_size=1, max_size=4).map(" ".join),
    caller=st.sampled_from([Caller.all_access(), Caller.public(), Caller.with_scopes("t1"), Caller.with_scopes("t2")]),
    n_hits=st.integers(1, 6),
    rank=st.sampled_from(["ppr", "coverage"]),
    typed=st.booleans(),
    n_concepts=st.integers(0, 3),
)
def test_one_call_equals_search_then_walk(
    rows: Any, question: str, caller: Caller, n_hits: int, rank: str, typed: bool, n_concepts: int
) -> None:
    """The one compiled call (BM25 -> 1/rank seeds -> walk) gives what the multi-call path gives:
    the same BM25 hits through ``search=`` (Python between the calls), the same seeds, weights,
    results, scores and reasons, bit for bit."""
    nodes, edges = rows
    kb = open_store(nodes, edges, [])
    st_ = kb.state()
    g, ix = st_.graph, st_.text_index
    vm = caller.visibility(g)
    visible = [nd["id"] for nd in nodes if vm is None or vm.mask[g.id_index[nd["id"]]]]
    concepts = visible[:n_concepts] + visible[:1]  # a repeat, too
    if n_concepts == 0:
        concepts = []

    def search(text: str, want: int) -> list[str]:
        docs, _ = ix.search(text, want, visible=vm)
        return [g.ids[d] for d in docs]

    kwargs: dict[str, Any] = {
        "concepts": concepts,
        "k": 7,
        "caller": caller,
        "n_hits": n_hits,
        "rank": rank,
        "node_types": ["DOC"] if typed else None,
    }
    one = graph_context(kb, question, **kwargs)
    many = graph_context(kb, question, search=search, **kwargs)
    assert one.to_dict() == many.to_dict()
    assert str(one) == str(many)


def test_graph_context_text_refuses_bad_input_without_crashing() -> None:
    """The binding and the core check everything Python can pass: out-of-range terms and concepts,
    a hidden concept, statistics of another index or another visible set, an index of another
    graph, n_hits < 1 -- each a clear error, never a crash or a read out of bounds."""
    import numpy as np

    kb = _kb()
    st_ = kb.state()
    g, ix = st_.graph, st_.text_index
    vm = Caller.public().visibility(g)
    hidden = next(i for i in range(g.num_nodes) if not vm.mask[i])
    terms = ix.query_terms("graph walk")
    good = dict(visible=vm, stats=ix.stats_for(vm))
    ok = _core.graph_context_text(g.core, ix.core, terms, 5, None, **good)
    assert ok.seeded and len(ok.hits) > 0
    other = KnowledgeBase.open(":memory:")
    other.add_nodes([{"id": "x", "title": "graph"}])
    ost = other.state()
    bad_calls = [
        lambda: _core.graph_context_text(g.core, ix.core, np.array([ix.num_terms], np.int32), 5, None, **good),
        lambda: _core.graph_context_text(g.core, ix.core, np.array([-1], np.int32), 5, None, **good),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 0, None, **good),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, np.array([g.num_nodes], np.int64), **good),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, np.array([-3], np.int32), **good),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, np.array([hidden], np.int32), **good),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, None, visible=vm, stats=ix.stats_for(None)),
        lambda: _core.graph_context_text(
            g.core, ix.core, terms, 5, None, visible=vm, stats=ost.text_index.stats_for(None)
        ),
        lambda: _core.graph_context_text(g.core, ost.text_index.core, terms[:0], 5, None),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, None, k=0),
        lambda: _core.graph_context_text(g.core, ix.core, terms, 5, None, rank=7),
        lambda: _core.graph_context_text(g.core, ix.core, np.zeros((2, 2), np.int32), 5, None),
    ]
    for i, call in enumerate(bad_calls):
        with pytest.raises((ValueError, TypeError, IndexError)):
            call()


def test_wrapped_query_makes_at_most_three_compiled_calls_of_its_own() -> None:
    """The wrap's own work on one query -- the resolver's lexical step (BM25 over the concepts),
    its semantic step (the compiled sparse top-k) and the typed walk -- is three compiled calls; a
    flat search that is itself compiled (the built-in one: BM25) adds its own one."""
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    kb = _kb()
    who = Caller.with_scopes("t1")

    def user_flat(text: str, k: int) -> list[dict[str, Any]]:  # a backend of the user's: no compiled call
        return [{"id": "d1", "score": 1.0}]

    for flat, extra in ((user_flat, 0), (builtin_flat_search(kb, caller=who), 1)):
        ret = ConceptAnchoredRetriever(flat, kb)
        warm = ret.query("concept graph walk", 5, concept_walk=True, caller=who)
        out, calls = compiled_calls(ret.query, "concept graph walk", 5, concept_walk=True, caller=who)
        assert out == warm and any(r.get("via") == "concept-walk" for r in out)
        assert sum(calls.values()) <= 3 + extra, calls
        assert calls["typed_walk"] == 1, calls


def test_a_wrapped_querys_text_is_tokenised_once_for_the_flat_search_and_the_lexical_step(monkeypatch) -> None:
    """The built-in flat search and the resolver's lexical step both run BM25 over the store's text
    index for the same text: its terms are found once (the index keeps the last texts' terms)."""
    from conceptwalk.graph import text as text_module
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    kb = _kb()
    who = Caller.with_scopes("t1")
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=who), kb)
    ret.query("warm up with another text", 5, concept_walk=True, caller=who)
    seen: list[str] = []
    real = text_module.tokenize

    def counting(text: str) -> list[str]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(text_module, "tokenize", counting)
    out = ret.query("concept graph walk", 5, concept_walk=True, caller=who)
    assert any(r.get("via") == "concept-walk" for r in out)
    assert seen == ["concept graph walk"], seen


def test_a_wrapped_query_over_the_built_in_search_reads_the_stores_position_once() -> None:
    """One answer, one state: the built-in flat search is given the state the resolution and the
    walk read (its hits and the walk's candidates come from one committed state of the store), so
    the store's position is read once per wrapped query."""
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    kb = _kb()
    who = Caller.with_scopes("t1")
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=who), kb)
    warm = ret.query("concept graph walk", 5, concept_walk=True, caller=who)
    seen: list[str] = []
    kb.conn.set_trace_callback(seen.append)
    try:
        out = ret.query("concept graph walk", 5, concept_walk=True, caller=who)
    finally:
        kb.conn.set_trace_callback(None)
    assert out == warm and any(r.get("via") == "concept-walk" for r in out)
    positions = [s for s in seen if "sqlite_sequence" in s]
    assert len(positions) == 1, seen
    # and without the walk, the flat search alone reads it once too
    seen.clear()
    kb.conn.set_trace_callback(seen.append)
    try:
        ret.query("concept graph walk", 5, caller=who)
    finally:
        kb.conn.set_trace_callback(None)
    assert len([s for s in seen if "sqlite_sequence" in s]) == 1, seen
