"""The one result pattern (``conceptwalk.graph.result``): every answer object is sized and
iterable over its main field and pickles by value; the tools' answers are records besides
(truthy, equal by ``to_dict()``, unhashable) whose lazy fields equal eagerly built ones."""

from __future__ import annotations

import pickle

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from conceptwalk import Caller, LinkGraph, graph_context, graph_path, link_suggest
from conceptwalk.graph.result import Later, Record, Result
from conceptwalk.tools import ContextResult, PathResult, SuggestResult, graph_context_batch

ALL = Caller.all_access()


def _graph(edges: list[tuple[int, int]]) -> LinkGraph:
    return LinkGraph.from_edges([(f"n{a}", f"n{b}", "T" if (a + b) % 2 else "U") for a, b in edges])


edge_lists = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=30)


def _answers(g: LinkGraph) -> list[Result]:
    a, b = g.ids[0], g.ids[-1]
    return [
        graph_context(g, concepts=[a], k=5, caller=ALL),
        graph_context(g, concepts=[a, b], k=5, caller=ALL, rank="coverage"),
        link_suggest(g, a, k=5, min_shared=1, caller=ALL),
        graph_path(g, a, b, caller=ALL),
        g.personalized_pagerank({a: 1.0}),
    ]


@settings(max_examples=40, deadline=None)
@given(edge_lists)
def test_sized_iterable_and_pickled_by_value(edges: list[tuple[int, int]]) -> None:
    g = _graph(edges)
    for r in _answers(g):
        assert isinstance(r, Result)
        assert len(r) == len(list(r))
        back = pickle.loads(pickle.dumps(r))
        assert type(back) is type(r) and back.to_dict() == r.to_dict() and str(back) == str(r)
        assert repr(back) == repr(r) and list(back) == list(r)


@settings(max_examples=40, deadline=None)
@given(edge_lists)
def test_records_equal_by_dict_truthy_unhashable(edges: list[tuple[int, int]]) -> None:
    g = _graph(edges)
    for r, again in zip(_answers(g)[:4], _answers(g)[:4]):
        assert isinstance(r, Record) and r is not again
        assert r == again and not (r != again) and bool(r)
        with pytest.raises(TypeError):
            hash(r)
        assert r != object() and (r == 1) is False


def test_ranking_keeps_identity_equality_and_falsy_when_empty() -> None:
    g = LinkGraph.from_edges([("a", "b")])
    r, s = g.personalized_pagerank({"a": 1.0}), g.personalized_pagerank({"a": 1.0})
    assert r.to_dict() == s.to_dict() and r != s and hash(r) != hash(s)
    assert not isinstance(r, Record) and len(r) == 2 and list(r) == list(r.items())


def test_lazy_fields_equal_eager_ones_and_build_once() -> None:
    g = LinkGraph.from_edges([("a", "x"), ("b", "x"), ("a", "y"), ("b", "y")])
    lazy = link_suggest(g, "a", caller=ALL)
    eager = SuggestResult("a", list(lazy.suggestions), lazy.candidates, 2)
    assert lazy == eager and lazy.suggestions is lazy.suggestions
    calls: list[int] = []

    def build() -> list:
        calls.append(1)
        return []

    p = PathResult("a", "b", lambda: (build(), []))
    assert p.nodes == [] and p.steps == [] and len(p) == 0 and calls == [1]
    c = ContextResult(None, build, build, 0.25, 1e-4, 5)
    assert c.seeds == [] and c.results == [] and c.seeds == [] and calls == [1, 1, 1]
    assert Later(lambda: 3).fn() == 3


def test_a_coverage_context_pickles_with_its_ranking() -> None:
    # rank, max_hops, eps_reached and truncated are set after construction: they travel too
    # (a coverage result unpickled as a PPR one before: its to_dict() lost params.rank)
    g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d")])
    for r in (
        graph_context(g, concepts=["a", "c"], caller=ALL, rank="coverage", max_hops=3),
        *graph_context_batch(g, [{"concepts": ["a", "d"]}], caller=ALL, rank="coverage"),
    ):
        back = pickle.loads(pickle.dumps(r))
        assert back.to_dict() == r.to_dict() and back.to_dict()["params"]["rank"] == "coverage"
        assert (back.rank, back.max_hops, back.eps_reached, back.truncated) == (
            r.rank,
            r.max_hops,
            r.eps_reached,
            r.truncated,
        )
