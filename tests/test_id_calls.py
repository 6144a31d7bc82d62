"""The id-level calls of issue 18: ``LinkGraph.resource_allocation``, ``shortest_path`` and
``personalized_pagerank`` resolve their ids inside one compiled call (``_core.resource_allocation_id``,
``shortest_path_ids``, ``personalized_pagerank_ids``) and suggestions are decoded in C++
(``_core.decode_suggestions``).

Each fast call is checked against the index-level call it stands for (bit for bit), against the
pure-Python references on the graph with the hidden nodes deleted, and on the inputs it must hand
back to the checked path (``None``): missing, hidden, non-str and str-subclass ids, other
mappings and weights the checked path converts. Hostile arguments raise, never crash.
"""

from __future__ import annotations

import math
import random
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from conftest import GRAPH_SEEDS

import reference as ref
from conceptwalk import Caller, LinkGraph, NotFoundError, _core, graph_path, link_suggest
from conceptwalk.graph import Suggestion

SEEDS = GRAPH_SEEDS[::2]


def _case(seed: int) -> tuple[Any, LinkGraph, list[str] | None, Any]:
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    rng = random.Random(seed)
    visible = None
    if seed % 2 == 0 and len(spec.nodes) > 2:
        visible = sorted(v for v in spec.nodes if rng.random() < 0.7) or list(spec.nodes[:1])
    return spec, g, visible, g.visibility(visible)


def _decode_in_python(g: LinkGraph, r: Any) -> list[Suggestion]:
    """The decoder this change replaced (graph/suggest.py before issue 18), kept as the reference."""
    ids, titles, names, codes = g.ids, g.titles, g.node_type_names, g.node_type_codes_list
    t, s, sp, sh = r.targets.tolist(), r.scores.tolist(), r.shared_ptr.tolist(), r.shared.tolist()
    return [
        Suggestion(
            ids[x], names[codes[x]], titles[x], sc, tuple(ids[z] for z in sh[a:b]), tuple(titles[z] for z in sh[a:b])
        )
        for x, sc, a, b in zip(t, s, sp, sp[1:])
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_resource_allocation_by_id_is_the_index_call_and_the_deleted_graph_answer(seed):
    spec, g, visible, vm = _case(seed)
    gx = spec.nx_graph(visible)
    shown = set(gx.nodes)
    for a in spec.nodes[:12]:
        for min_shared in (1, 2):
            r = _core.resource_allocation_id(g.core, g.id_index, a, min_shared, 0, vm)
            if a not in shown:
                assert r is None
                with pytest.raises(NotFoundError) as hidden:
                    g.resource_allocation(a, min_shared=min_shared, visible=visible)
                with pytest.raises(NotFoundError) as missing:
                    g.resource_allocation("\x00no such id", min_shared=min_shared, visible=visible)
                assert str(hidden.value).replace(repr(a), "X") == str(missing.value).replace(
                    repr("\x00no such id"), "X"
                )
                continue
            old = _core.resource_allocation(g.core, g.index(a), min_shared, 0, vm)
            for f in ("targets", "scores", "shared_ptr", "shared"):
                assert getattr(r, f).tolist() == getattr(old, f).tolist()
            assert r.candidates == old.candidates
            got = g.resource_allocation(a, min_shared=min_shared, visible=visible)
            assert got == _decode_in_python(g, old)
            want = ref.resource_allocation(gx, a, min_shared)
            assert [(s.id, s.shared) for s in got] == [(b, sh) for b, _, sh in want]
            for s, (_, score, _) in zip(got, want):
                assert math.isclose(s.score, score, rel_tol=1e-12)
            for k in (1, 3):
                assert g.resource_allocation(a, min_shared=min_shared, k=k, visible=visible) == got[:k]


@pytest.mark.parametrize("seed", SEEDS)
def test_shortest_path_by_id_is_the_lexicographic_path_of_the_deleted_graph(seed):
    spec, g, visible, vm = _case(seed)
    gx = spec.nx_graph(visible)
    shown = set(gx.nodes)
    rng = random.Random(seed + 1)
    for _ in range(15):
        s, t = rng.choice(spec.nodes), rng.choice(spec.nodes)
        fast = _core.shortest_path_ids(g.core, g.id_index, s, t, vm, g.ids)
        if s not in shown or t not in shown:
            assert fast is None
            with pytest.raises(NotFoundError):
                g.shortest_path(s, t, visible=visible)
            continue
        want = ref.lex_shortest_path(gx, s, t)
        assert fast == (want or [])
        assert g.shortest_path(s, t, visible=visible) == want
        idx = _core.shortest_path_ids(g.core, g.id_index, s, t, vm)
        assert idx == _core.shortest_path(g.core, g.index(s), g.index(t), vm).path.tolist()
        assert [g.ids[i] for i in idx] == fast


def _bits(x: float) -> int:
    return int(np.float64(x).view(np.int64))


@pytest.mark.parametrize("seed", SEEDS)
def test_ppr_by_ids_is_bit_identical_to_the_index_call(seed):
    spec, g, visible, vm = _case(seed)
    shown = [v for v in spec.nodes if visible is None or v in set(visible)]
    rng = random.Random(seed + 2)
    seeds = {v: rng.choice([1.0, 0.5, 2, 3.0]) for v in rng.sample(shown, min(3, len(shown)))}
    for eps, k, max_residual in ((1e-4, 0, 0.0), (1e-6, 3, 0.0), (1e-3, 0, 1e-4)):
        got = _core.personalized_pagerank_ids(g.core, g.id_index, seeds, 0.25, eps, k, 0, vm, max_residual)
        assert got is not None
        idx, w = g.seed_arrays(seeds, vm)
        r = _core.personalized_pagerank(g.core, idx, w, 0.25, eps, k, 0, vm, max_residual)
        nodes, scores, residual, eps_out, pushes, visits, truncated, certified = got
        assert nodes.tolist() == r.nodes.tolist()
        assert [_bits(x) for x in scores.tolist()] == [_bits(x) for x in r.scores.tolist()]
        assert (_bits(residual), _bits(eps_out), pushes, visits, truncated, certified) == (
            _bits(r.residual),
            _bits(r.eps),
            r.pushes,
            r.edge_visits,
            r.truncated,
            r.certified,
        )
        assert not nodes.flags.writeable and not scores.flags.writeable
        ranking = g.personalized_pagerank(
            seeds, eps=eps, k=k or None, visible=visible, max_residual=max_residual or None
        )
        assert ranking.indices.tolist() == r.nodes.tolist() and ranking.scores.tolist() == r.scores.tolist()


class _StrSub(str):
    pass


class _Map(Mapping):
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


@pytest.fixture
def small():
    nodes = [{"id": "h", "scopes": ["secret"]}]
    g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("a", "h"), ("h", "c"), ("c", "d")], nodes=nodes)
    return g, g.visibility_for_scopes([])


@pytest.mark.parametrize(
    "seeds",
    [
        {"zz": 1.0},  # missing
        {"a": 1.0, "h": 1.0},  # hidden (under the public mask)
        {_StrSub("a"): 1.0},  # a str subclass: the checked path decides
        {1: 1.0},
        {"a": True},  # a bool is not taken as a number here
        {"a": np.float64(1.0)},  # numpy weights: the checked path converts them
        {"a": "1.0"},
        {"a": -1.0},
        {"a": float("nan")},
        {"a": float("inf")},
        {"a": 0.0, "b": 0},
        {"a": 10**400},
        {},
    ],
)
def test_ppr_fast_path_hands_back_what_it_does_not_decide(small, seeds):
    g, public = small
    assert _core.personalized_pagerank_ids(g.core, g.id_index, seeds, visible=public) is None
    assert _core.personalized_pagerank_ids(g.core, g.id_index, _Map({"a": 1.0})) is None


def test_errors_and_answers_are_the_checked_paths(small):
    g, public = small
    pub = Caller.public()
    for call in (
        lambda x: g.resource_allocation(x, visible=public),
        lambda x: g.shortest_path(x, "a", visible=public),
        lambda x: g.shortest_path("a", x, visible=public),
        lambda x: g.personalized_pagerank({x: 1.0}, visible=public),
        lambda x: link_suggest(g, x, caller=pub),
        lambda x: graph_path(g, x, "a", caller=pub),
    ):
        with pytest.raises(NotFoundError) as hidden:
            call("h")
        with pytest.raises(NotFoundError) as missing:
            call("zz")
        assert str(hidden.value).replace("'h'", "X") == str(missing.value).replace("'zz'", "X")
    # A weight the checked path converts still answers, the same as the plain float.
    assert g.personalized_pagerank({"a": np.float64(2.0)}).to_dict() == g.personalized_pagerank({"a": 2.0}).to_dict()
    assert g.personalized_pagerank(_Map({"a": 1.0})).to_dict() == g.personalized_pagerank({"a": 1.0}).to_dict()
    # The path around the hidden node, as if it were deleted.
    assert g.shortest_path("a", "c", visible=public) == ["a", "b", "c"]
    assert g.shortest_path("a", "c") == ["a", "b", "c"]


def test_a_dict_id_index_and_str_subclass_ids():
    base = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
    g = LinkGraph.from_saved_arrays(base.to_arrays())
    g.id_index = dict(zip(g.ids, range(len(g.ids))))  # a plain dict index works the same
    assert [s.id for s in g.resource_allocation("a")] == ["b"]
    assert [s.id for s in g.resource_allocation(_StrSub("a"))] == ["b"]  # found by the checked path
    assert g.shortest_path(_StrSub("a"), "b") == ["a", "x", "b"]
    assert g.personalized_pagerank({_StrSub("a"): 1.0}).to_dict() == g.personalized_pagerank({"a": 1.0}).to_dict()


def test_hostile_arguments_raise_and_never_crash(small):
    g, _ = small
    r = _core.resource_allocation(g.core, 0, 1, 0, None)
    n = len(r.targets)
    args = (Suggestion, g.ids, g.titles, g.node_type_names, g.node_type_codes_list)
    assert len(_core.decode_suggestions(*args, r, 0, n)) == n
    for lo, hi in ((-1, n), (0, n + 1), (1, 0)):
        with pytest.raises(ValueError):
            _core.decode_suggestions(*args, r, lo, hi)
    with pytest.raises(IndexError):
        _core.decode_suggestions(Suggestion, [], g.titles, g.node_type_names, g.node_type_codes_list, r, 0, n)
    with pytest.raises(AttributeError):  # no such fields
        _core.decode_suggestions(dict, *args[1:], r, 0, n)

    class Plain:  # fields that are not slots
        id = type = title = score = shared = shared_titles = None

    with pytest.raises(TypeError, match="data descriptor"):
        _core.decode_suggestions(Plain, *args[1:], r, 0, n)
    assert _core.decode_suggestions(*args, r, 0, n) == g.resource_allocation("a", min_shared=1)  # cache intact
    with pytest.raises(TypeError):
        _core.decode_suggestions(Suggestion, *args[1:], object(), 0, 0)
    with pytest.raises(IndexError):
        _core.shortest_path_ids(g.core, g.id_index, "a", "d", None, ["a"])

    class Odd(dict):
        def __getitem__(self, k):
            return {"a": "zero", "b": 2**70, "c": -3, "d": 10**6}[k]

    for x in "abcd":  # a value that is no node index hands the call back
        assert _core.resource_allocation_id(g.core, Odd(), x) is None
        assert _core.shortest_path_ids(g.core, Odd(), x, x) is None

    class Boom(dict):
        def __getitem__(self, k):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        _core.shortest_path_ids(g.core, Boom(), "a", "b")
    with pytest.raises(RuntimeError, match="boom"):
        _core.personalized_pagerank_ids(g.core, Boom(), {"a": 1.0})


def _compiled_calls(fn: Any) -> Counter[str]:
    calls: Counter[str] = Counter()

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call" and getattr(arg, "__module__", None) == "conceptwalk._core":
            calls[arg.__name__] += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_one_compiled_call_per_id_level_answer(small):
    g, public = small
    assert _compiled_calls(lambda: g.shortest_path("a", "d", visible=public)) == Counter(shortest_path_ids=1)
    assert _compiled_calls(lambda: g.personalized_pagerank({"a": 1.0}, visible=public)) == Counter(
        personalized_pagerank_ids=1
    )
    assert _compiled_calls(lambda: g.resource_allocation("a", min_shared=1, visible=public)) == Counter(
        resource_allocation_id=1, decode_suggestions=1
    )
    # The tools: one call, the suggestions or steps decoded only when read.
    assert _compiled_calls(lambda: link_suggest(g, "a", caller=Caller.public())) == Counter(resource_allocation_id=1)
    assert _compiled_calls(lambda: graph_path(g, "a", "d", caller=Caller.public())) == Counter(shortest_path_ids=1)
