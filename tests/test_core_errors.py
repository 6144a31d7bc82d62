"""Bad input: one test per row, a clear exception naming the argument and value, no state change;
and hostile values straight into the compiled core, which must raise and never crash."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conceptwalk import InputError, LinkGraph, NotFoundError, _core

NAN, INF = float("nan"), float("inf")


@pytest.fixture(scope="module")
def g():
    return LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("d", "e"), ("b", "d")], nodes=["iso"])


def fingerprint(g):
    """Everything observable about the graph, via good calls."""
    return (
        list(g.personalized_pagerank({"a": 1.0, "d": 2.0}).items()),
        list(g.personalized_pagerank({"b": 1.0}, visible=["a", "b", "c"]).items()),
        [s.to_dict() for s in g.resource_allocation("a", min_shared=1)],
        g.shortest_path("a", "e"),
        g.hops(["a"], ["e", "iso"]),
        g.core.indptr.tobytes(),
        g.core.indices.tobytes(),
        g.ids[:],
    )


# (row id, call, exception type, substrings the message must contain)
BAD_INPUT = [
    ("seed-weight-nan", lambda g: g.personalized_pagerank({"a": NAN}), InputError, ["seeds", "'a'", "nan"]),
    ("seed-weight-inf", lambda g: g.personalized_pagerank({"a": INF}), InputError, ["seeds", "inf"]),
    (
        "seed-weight-negative",
        lambda g: g.personalized_pagerank({"a": 1.0, "b": -0.5}),
        InputError,
        ["seeds", "'b'", "-0.5"],
    ),
    ("seed-weights-all-zero", lambda g: g.personalized_pagerank({"a": 0.0, "b": 0}), InputError, ["seeds", "zero"]),
    ("seed-weight-not-a-number", lambda g: g.personalized_pagerank({"a": "x"}), InputError, ["seeds", "'x'"]),
    ("seeds-empty", lambda g: g.personalized_pagerank({}), InputError, ["seeds", "empty"]),
    ("seeds-not-a-mapping", lambda g: g.personalized_pagerank(["a"]), InputError, ["seeds", "list"]),
    ("eps-zero", lambda g: g.personalized_pagerank({"a": 1}, eps=0.0), InputError, ["eps", "0"]),
    ("eps-negative", lambda g: g.personalized_pagerank({"a": 1}, eps=-1e-4), InputError, ["eps", "-0.0001"]),
    ("eps-nan", lambda g: g.personalized_pagerank({"a": 1}, eps=NAN), InputError, ["eps", "nan"]),
    ("eps-inf", lambda g: g.personalized_pagerank({"a": 1}, eps=INF), InputError, ["eps", "inf"]),
    ("restart-zero", lambda g: g.personalized_pagerank({"a": 1}, restart=0.0), InputError, ["restart", "0"]),
    ("restart-one", lambda g: g.personalized_pagerank({"a": 1}, restart=1.0), InputError, ["restart", "1"]),
    ("restart-negative", lambda g: g.personalized_pagerank({"a": 1}, restart=-0.25), InputError, ["restart", "-0.25"]),
    ("restart-above-one", lambda g: g.personalized_pagerank({"a": 1}, restart=1.5), InputError, ["restart", "1.5"]),
    ("restart-nan", lambda g: g.personalized_pagerank({"a": 1}, restart=NAN), InputError, ["restart", "nan"]),
    ("certified-eps-zero", lambda g: g.personalized_pagerank_certified({"a": 1}, 2, eps=0.0), InputError, ["eps"]),
    ("certified-k-zero", lambda g: g.personalized_pagerank_certified({"a": 1}, 0), InputError, ["k", "0"]),
    ("ppr-k-zero", lambda g: g.personalized_pagerank({"a": 1}, k=0), InputError, ["k", "0"]),
    ("min-shared-zero", lambda g: g.resource_allocation("a", min_shared=0), InputError, ["min_shared", "0"]),
    ("min-shared-negative", lambda g: g.resource_allocation("a", min_shared=-2), InputError, ["min_shared", "-2"]),
    ("min-shared-float", lambda g: g.resource_allocation("a", min_shared=1.5), InputError, ["min_shared", "1.5"]),
    ("ra-k-zero", lambda g: g.resource_allocation("a", k=0), InputError, ["k", "0"]),
    ("unknown-seed", lambda g: g.personalized_pagerank({"nope": 1.0}), NotFoundError, ["seed", "'nope'"]),
    ("unknown-ra-node", lambda g: g.resource_allocation("nope"), NotFoundError, ["node", "'nope'"]),
    ("unknown-path-source", lambda g: g.shortest_path("nope", "a"), NotFoundError, ["source", "'nope'"]),
    ("unknown-path-target", lambda g: g.shortest_path("a", "nope"), NotFoundError, ["target", "'nope'"]),
    ("unknown-hops-seed", lambda g: g.hops(["nope"], ["a"]), NotFoundError, ["seed", "'nope'"]),
    ("unknown-hops-target", lambda g: g.hops(["a"], ["nope"]), NotFoundError, ["target", "'nope'"]),
    ("non-string-id", lambda g: g.shortest_path(3, "a"), NotFoundError, ["source", "3"]),
    (
        "mask-wrong-length",
        lambda g: g.personalized_pagerank({"a": 1}, visible=np.ones(3, bool)),
        InputError,
        ["visible", "(3,)"],
    ),
    ("mask-2d", lambda g: g.shortest_path("a", "b", visible=np.ones((6, 1), bool)), InputError, ["visible", "(6, 1)"]),
    (
        "mask-not-boolean",
        lambda g: g.resource_allocation("a", visible=np.ones(6, np.int64)),
        InputError,
        ["visible", "int64"],
    ),
    ("visible-single-string", lambda g: g.shortest_path("a", "b", visible="ab"), InputError, ["visible"]),
    (
        "mask-of-another-graph",
        lambda g: g.personalized_pagerank({"a": 1}, visible=LinkGraph.from_edges([("x", "y")]).visibility(["x"])),
        ValueError,
        ["visible", "different graph"],
    ),
]

BAD_CONSTRUCTION = [
    (
        "from-arrays-float-src",
        lambda: LinkGraph.from_arrays(["a", "b"], np.array([0.0]), np.array([1])),
        ["src", "float64"],
    ),
    ("from-arrays-float-dst", lambda: LinkGraph.from_arrays(["a", "b"], [0], [1.5]), ["dst", "float"]),
    (
        "from-arrays-2d",
        lambda: LinkGraph.from_arrays(["a", "b"], np.zeros((1, 1), int), np.ones((1, 1), int)),
        ["src", "(1, 1)"],
    ),
    ("from-arrays-mismatched", lambda: LinkGraph.from_arrays(["a", "b"], [0, 1], [1]), ["src", "dst", "2", "1"]),
    ("from-arrays-out-of-range", lambda: LinkGraph.from_arrays(["a", "b"], [0], [2]), ["dst", "2"]),
    ("from-arrays-negative", lambda: LinkGraph.from_arrays(["a", "b"], [-1], [1]), ["src", "-1"]),
    ("from-arrays-duplicate-ids", lambda: LinkGraph.from_arrays(["a", "a"], [0], [1]), ["ids", "unique"]),
    (
        "from-arrays-edge-types-length",
        lambda: LinkGraph.from_arrays(["a", "b"], [0], [1], ["T", "U"]),
        ["edge_types", "1"],
    ),
    ("edges-array-1d", lambda: LinkGraph.from_edges(np.array(["a", "b", "c"])), ["edges", "(3,)"]),
    ("edges-array-4-columns", lambda: LinkGraph.from_edges(np.array([["a", "b", "c", "d"]])), ["edges", "(1, 4)"]),
    ("edge-row-too-short", lambda: LinkGraph.from_edges([("a", "b"), ("a",)]), ["edges[1]", "1"]),
    ("edge-row-not-a-tuple", lambda: LinkGraph.from_edges([("a", "b"), 5]), ["edges[1]", "int"]),
    ("edge-dict-missing-dst", lambda: LinkGraph.from_edges([{"src": "a"}]), ["edges[0]", "dst"]),
    ("edge-id-none", lambda: LinkGraph.from_edges([(None, "a")]), ["edges[0]", "None"]),
    ("node-duplicate", lambda: LinkGraph.from_edges([("a", "b")], nodes=["c", "c"]), ["nodes[1]", "'c'"]),
    ("node-dict-without-id", lambda: LinkGraph.from_edges([("a", "b")], nodes=[{"type": "X"}]), ["nodes[0]", "id"]),
    ("empty-graph-edges", lambda: LinkGraph.from_edges([]), ["empty"]),
    ("empty-graph-arrays", lambda: LinkGraph.from_arrays([], [], []), ["empty"]),
    ("empty-graph-nodes", lambda: LinkGraph.from_edges([], nodes=[]), ["empty"]),
]


@pytest.mark.parametrize("call,exc,needles", [pytest.param(*row[1:], id=row[0]) for row in BAD_INPUT])
def test_bad_input_raises_and_changes_nothing(g, call, exc, needles):
    before = fingerprint(g)
    with pytest.raises(exc) as info:
        call(g)
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert fingerprint(g) == before


@pytest.mark.parametrize("call,needles", [pytest.param(*row[1:], id=row[0]) for row in BAD_CONSTRUCTION])
def test_bad_construction_raises_input_error(g, call, needles):
    before = fingerprint(g)
    with pytest.raises(InputError) as info:
        call()
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, (needle, msg)
    assert fingerprint(g) == before  # other graphs are untouched too


def test_input_error_is_a_value_error_and_not_found_a_lookup_error():
    assert issubclass(InputError, ValueError) and issubclass(NotFoundError, LookupError)


def test_hidden_and_missing_ids_raise_identical_errors(g):
    visible = ["a", "b", "c", "iso"]  # "d", "e" hidden
    calls = [
        lambda x: g.personalized_pagerank({x: 1.0}, visible=visible),
        lambda x: g.personalized_pagerank({"a": 1.0, x: 1.0}, visible=visible),
        lambda x: g.personalized_pagerank_certified({x: 1.0}, 2, visible=visible),
        lambda x: g.resource_allocation(x, visible=visible),
        lambda x: g.shortest_path(x, "a", visible=visible),
        lambda x: g.shortest_path("a", x, visible=visible),
        lambda x: g.hops([x], ["a"], visible=visible),
        lambda x: g.hops(["a"], [x], visible=visible),
        lambda x: g.index(x, visible=visible),
    ]
    for call in calls:
        errors = []
        for x in ("d", "zz-missing"):
            with pytest.raises(Exception) as info:
                call(x)
            errors.append(
                (
                    type(info.value),
                    str(info.value).replace(repr(x), "<id>"),
                    info.value.args[0].replace(repr(x), "<id>"),
                )
            )
        assert errors[0] == errors[1]
        assert errors[0][0] is NotFoundError


# ----------------------------------------------------------------------------- raw core, hostile
def _i32(*a):
    return np.array(a, dtype=np.int32)


@pytest.fixture(scope="module")
def core():
    c, _ = _core.CSRGraph.from_edges(5, _i32(0, 1, 2, 0), _i32(1, 2, 3, 2), _i32(0, 0, 1, 0))
    other, _ = _core.CSRGraph.from_edges(5, _i32(0), _i32(1), _i32(0))
    return c, _core.VisibilityMask(other, np.ones(5, bool))


T2 = np.ones(2, bool)
ONE = np.ones(1)

HOSTILE = [
    ("ppr-negative-seed", lambda c, vm: _core.personalized_pagerank(c, _i32(-1), ONE), IndexError),
    ("ppr-seed-out-of-range", lambda c, vm: _core.personalized_pagerank(c, _i32(5), ONE), IndexError),
    ("ppr-seed-int32-max", lambda c, vm: _core.personalized_pagerank(c, _i32(2**31 - 1), ONE), IndexError),
    ("ppr-weights-length", lambda c, vm: _core.personalized_pagerank(c, _i32(0, 1), ONE), ValueError),
    (
        "ppr-2d-seeds",
        lambda c, vm: _core.personalized_pagerank(c, np.zeros((1, 1), np.int32), np.ones((1, 1))),
        ValueError,
    ),
    ("ppr-empty-seeds", lambda c, vm: _core.personalized_pagerank(c, _i32(), np.ones(0)), ValueError),
    ("ppr-nan-weight", lambda c, vm: _core.personalized_pagerank(c, _i32(0), np.array([NAN])), ValueError),
    (
        "ppr-negative-weight",
        lambda c, vm: _core.personalized_pagerank(c, _i32(0, 1), np.array([1.0, -1.0])),
        ValueError,
    ),
    (
        "ppr-overflowing-weights",
        lambda c, vm: _core.personalized_pagerank(c, _i32(0, 1), np.array([1e308, 1e308])),
        ValueError,
    ),
    ("ppr-restart-nan", lambda c, vm: _core.personalized_pagerank(c, _i32(0), ONE, NAN), ValueError),
    ("ppr-eps-negative", lambda c, vm: _core.personalized_pagerank(c, _i32(0), ONE, 0.25, -1.0), ValueError),
    ("ppr-max-pushes-negative", lambda c, vm: _core.personalized_pagerank(c, _i32(0), ONE, max_pushes=-1), ValueError),
    ("ppr-mask-of-other-graph", lambda c, vm: _core.personalized_pagerank(c, _i32(0), ONE, visible=vm), ValueError),
    ("ppr-graph-none", lambda c, vm: _core.personalized_pagerank(None, _i32(0), ONE), TypeError),
    (
        "certified-k-negative",
        lambda c, vm: _core.personalized_pagerank_certified(c, _i32(0), ONE, 0.25, 1e-4, -3, 4.0, 1e-9, 100),
        ValueError,
    ),
    (
        "certified-shrink-one",
        lambda c, vm: _core.personalized_pagerank_certified(c, _i32(0), ONE, 0.25, 1e-4, 2, 1.0, 1e-9, 100),
        ValueError,
    ),
    (
        "certified-no-budget",
        lambda c, vm: _core.personalized_pagerank_certified(c, _i32(0), ONE, 0.25, 1e-4, 2, 4.0, 1e-9, 0),
        ValueError,
    ),
    (
        "certified-min-eps-nan",
        lambda c, vm: _core.personalized_pagerank_certified(c, _i32(0), ONE, 0.25, 1e-4, 2, 4.0, NAN, 100),
        ValueError,
    ),
    ("batch-ptr-past-end", lambda c, vm: _core.ppr_batch(c, np.array([0, 5], np.int64), _i32(0), ONE), ValueError),
    (
        "batch-ptr-decreasing",
        lambda c, vm: _core.ppr_batch(c, np.array([0, 1, 0, 1], np.int64), _i32(0), ONE),
        ValueError,
    ),
    ("batch-ptr-empty", lambda c, vm: _core.ppr_batch(c, np.zeros(0, np.int64), _i32(), np.ones(0)), ValueError),
    (
        "batch-seed-out-of-range",
        lambda c, vm: _core.ppr_batch(c, np.array([0, 1, 2], np.int64), _i32(0, 77), np.ones(2), threads=2),
        IndexError,
    ),
    ("ra-negative", lambda c, vm: _core.resource_allocation(c, -1), IndexError),
    ("ra-out-of-range", lambda c, vm: _core.resource_allocation(c, 5), IndexError),
    ("ra-huge-index", lambda c, vm: _core.resource_allocation(c, 2**40), IndexError),
    ("ra-min-shared-zero", lambda c, vm: _core.resource_allocation(c, 0, 0), ValueError),
    ("ra-mask-of-other-graph", lambda c, vm: _core.resource_allocation(c, 0, visible=vm), ValueError),
    ("ra-batch-out-of-range", lambda c, vm: _core.suggest_batch(c, _i32(0, 9), threads=2), IndexError),
    ("ra-batch-min-shared-zero", lambda c, vm: _core.suggest_batch(c, _i32(0), 0), ValueError),
    ("path-negative", lambda c, vm: _core.shortest_path(c, -1, 0), IndexError),
    ("path-out-of-range", lambda c, vm: _core.shortest_path(c, 0, 5), IndexError),
    ("path-huge", lambda c, vm: _core.shortest_path(c, 0, 2**40), IndexError),
    ("path-mask-of-other-graph", lambda c, vm: _core.shortest_path(c, 0, 1, vm), ValueError),
    ("hops-negative-seed", lambda c, vm: _core.multi_source_hops(c, _i32(-1), _i32(0)), IndexError),
    ("hops-negative-target", lambda c, vm: _core.multi_source_hops(c, _i32(0), _i32(-1)), IndexError),
    ("hops-target-out-of-range", lambda c, vm: _core.multi_source_hops(c, _i32(0), _i32(5)), IndexError),
    ("hops-2d", lambda c, vm: _core.multi_source_hops(c, np.zeros((1, 1), np.int32), _i32(0)), ValueError),
    # No silent force-cast at the boundary (issue 14 item 6): a float array is not node 2, and
    # 2**32 + 2 does not wrap to node 2; the range is checked before any narrowing.
    ("ppr-float-seeds", lambda c, vm: _core.personalized_pagerank(c, np.array([2.7]), ONE), TypeError),
    ("ppr-bool-seeds", lambda c, vm: _core.personalized_pagerank(c, np.array([True]), ONE), TypeError),
    (
        "ppr-int64-past-int32",
        lambda c, vm: _core.personalized_pagerank(c, np.array([2**32 + 2], np.int64), ONE),
        IndexError,
    ),
    (
        "ppr-uint64-past-int32",
        lambda c, vm: _core.personalized_pagerank(c, np.array([2**63], np.uint64), ONE),
        IndexError,
    ),
    ("ppr-string-seeds", lambda c, vm: _core.personalized_pagerank(c, np.array(["0"]), ONE), TypeError),
    (
        "certified-float-seeds",
        lambda c, vm: _core.personalized_pagerank_certified(c, np.array([0.0]), ONE, 0.25, 1e-4, 1, 4.0, 1e-9, 100),
        TypeError,
    ),
    (
        "batch-float-seeds",
        lambda c, vm: _core.ppr_batch(c, np.array([0, 1], np.int64), np.array([2.7]), ONE),
        TypeError,
    ),
    ("context-float-seeds", lambda c, vm: _core.graph_context(c, np.array([2.7]), ONE), TypeError),
    ("context-int64-past-int32", lambda c, vm: _core.graph_context(c, np.array([2**32 + 2]), ONE), IndexError),
    ("context-k-zero", lambda c, vm: _core.graph_context(c, _i32(0), ONE, k=0), ValueError),
    ("context-unsorted-seeds", lambda c, vm: _core.graph_context(c, _i32(1, 0), np.ones(2)), ValueError),
    (
        "context-types-alone",
        lambda c, vm: _core.graph_context(c, _i32(0), ONE, node_type=_i32(0, 0, 0, 0, 0)),
        ValueError,
    ),
    (
        "context-node-type-length",
        lambda c, vm: _core.graph_context(c, _i32(0), ONE, node_type=_i32(0), keep_types=np.ones(1, bool)),
        ValueError,
    ),
    (
        "context-batch-float-seeds",
        lambda c, vm: _core.context_batch(c, np.array([0, 1], np.int64), np.array([0.5]), ONE),
        TypeError,
    ),
    ("context-mask-of-other-graph", lambda c, vm: _core.graph_context(c, _i32(0), ONE, visible=vm), ValueError),
    ("ra-batch-float-nodes", lambda c, vm: _core.suggest_batch(c, np.array([1.5])), TypeError),
    ("ra-batch-int64-past-int32", lambda c, vm: _core.suggest_batch(c, np.array([2**32 + 1])), IndexError),
    ("path-batch-float", lambda c, vm: _core.path_batch(c, np.array([0.0]), _i32(1)), TypeError),
    ("path-batch-past-int32", lambda c, vm: _core.path_batch(c, _i32(0), np.array([2**40])), IndexError),
    ("hops-float-targets", lambda c, vm: _core.multi_source_hops(c, _i32(0), np.array([1.0])), TypeError),
    ("hops-past-int32-seeds", lambda c, vm: _core.multi_source_hops(c, np.array([-(2**40)]), _i32(0)), IndexError),
    ("walk-max-hops-huge", lambda c, vm: _core.typed_walk(c, _i32(0), 10**6, T2, T2), ValueError),
    ("walk-max-hops-past-int32", lambda c, vm: _core.typed_walk(c, _i32(0), 2**40, T2, T2), TypeError),
    ("walk-max-hops-zero", lambda c, vm: _core.typed_walk(c, _i32(0), 0, T2, T2), ValueError),
    ("walk-max-hops-negative", lambda c, vm: _core.typed_walk(c, _i32(0), -1, T2, T2), ValueError),
    (
        "walk-max-hops-past-limit",
        lambda c, vm: _core.typed_walk(c, _i32(0), _core.WALK_MAX_HOPS_LIMIT + 1, T2, T2),
        ValueError,
    ),
    ("walk-start-out-of-range", lambda c, vm: _core.typed_walk(c, _i32(9), 2, T2, T2), IndexError),
    ("walk-start-negative", lambda c, vm: _core.typed_walk(c, _i32(-9), 2, T2, T2), IndexError),
    ("walk-flag-lengths", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, np.ones(3, bool)), ValueError),
    (
        "walk-node-type-length",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, node_type=_i32(0), expand_node_types=T2),
        ValueError,
    ),
    (
        "walk-node-filter-without-types",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, expand_node_types=T2),
        ValueError,
    ),
    ("walk-max-edges-negative", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, max_edges=-1), ValueError),
    (
        "walk-max-candidates-negative",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, max_candidates=-1),
        ValueError,
    ),
    (
        "walk-start-weights-length",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, start_weights=np.ones(2)),
        ValueError,
    ),
    (
        "walk-start-weight-zero",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, start_weights=np.zeros(1)),
        ValueError,
    ),
    (
        "walk-start-weight-nan",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, start_weights=np.full(1, np.nan)),
        ValueError,
    ),
    (
        "walk-edge-weights-length",
        lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, edge_weights=np.ones(1)),
        ValueError,
    ),
    ("walk-hop-decay-zero", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, hop_decay=0.0), ValueError),
    ("walk-hop-decay-nan", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, hop_decay=np.nan), ValueError),
    ("walk-min-share-above-one", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, min_share=1.5), ValueError),
    ("walk-max-paths-negative", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, max_paths=-1), ValueError),
    ("walk-mask-of-other-graph", lambda c, vm: _core.typed_walk(c, _i32(0), 2, T2, T2, visible=vm), ValueError),
    ("mask-graph-none", lambda c, vm: _core.VisibilityMask(None, np.ones(5, bool)), TypeError),
    ("mask-wrong-length", lambda c, vm: _core.VisibilityMask(c, np.ones(4, bool)), ValueError),
    ("mask-2d", lambda c, vm: _core.VisibilityMask(c, np.ones((5, 1), bool)), ValueError),
    ("build-negative-n", lambda c, vm: _core.CSRGraph.from_edges(-1, _i32(), _i32(), _i32()), ValueError),
    ("build-n-past-int32", lambda c, vm: _core.CSRGraph.from_edges(2**31, _i32(), _i32(), _i32()), ValueError),
    ("build-dst-out-of-range", lambda c, vm: _core.CSRGraph.from_edges(2, _i32(0), _i32(5), _i32(0)), ValueError),
    ("build-src-negative", lambda c, vm: _core.CSRGraph.from_edges(2, _i32(-1), _i32(1), _i32(0)), ValueError),
    ("build-lengths", lambda c, vm: _core.CSRGraph.from_edges(2, _i32(0, 1), _i32(1), _i32(0)), ValueError),
    ("build-negative-type", lambda c, vm: _core.CSRGraph.from_edges(2, _i32(0), _i32(1), _i32(-1)), ValueError),
    ("build-huge-type", lambda c, vm: _core.CSRGraph.from_edges(2, _i32(0), _i32(1), _i32(2**30)), ValueError),
    ("find-entry-negative", lambda c, vm: c.find_entry(-1, 0), IndexError),
    ("no-default-constructor", lambda c, vm: _core.CSRGraph(), TypeError),
]


@pytest.mark.parametrize("call,exc", [pytest.param(*row[1:], id=row[0]) for row in HOSTILE])
def test_raw_core_rejects_hostile_values(core, call, exc):
    c, vm = core
    before = (c.indptr.tobytes(), c.indices.tobytes())
    with pytest.raises(exc):
        call(c, vm)
    assert (c.indptr.tobytes(), c.indices.tobytes()) == before
    # The thread's workspace is clean: a later good call gives the usual answer.
    assert _core.shortest_path(c, 0, 3).path.tolist() == [0, 2, 3]
    assert _core.personalized_pagerank(c, _i32(0), ONE).nodes.tolist()[:1] == [0]


def test_raw_core_tolerates_odd_but_valid_values(core):
    c, _ = core
    full = _core.personalized_pagerank(c, _i32(0), ONE)
    assert np.array_equal(_core.personalized_pagerank(c, _i32(0), ONE, k=-5).nodes, full.nodes)  # k <= 0: all
    assert np.array_equal(_core.resource_allocation(c, 1, 1, -1).targets, _core.resource_allocation(c, 1, 1, 0).targets)
    # Duplicate seeds add up; a zero-weight seed gets nothing unless reached.
    dup = _core.personalized_pagerank(c, _i32(0, 0), np.array([0.5, 0.5]))
    assert np.array_equal(dup.nodes, full.nodes) and np.allclose(dup.scores, full.scores, rtol=0, atol=1e-15)
    # Node-type codes outside the flag arrays are simply not admitted.
    out = _core.typed_walk(
        c, _i32(0), 2, T2, T2, node_type=_i32(-5, 99, 0, 1, 0), expand_node_types=T2, admit_node_types=T2
    )
    assert set(out.candidates.tolist()) <= {2, 3}
    # Empty flag arrays: nothing is admitted or expanded.
    out = _core.typed_walk(c, _i32(0), 2, np.ones(0, bool), np.ones(0, bool))
    assert out.candidates.shape == (0,)
    # An empty core graph builds; any index is out of range.
    empty, canon = _core.CSRGraph.from_edges(0, _i32(), _i32(), _i32())
    assert empty.num_nodes == 0 and canon.shape == (0,)
    with pytest.raises(IndexError):
        _core.personalized_pagerank(empty, _i32(0), ONE)
    with pytest.raises(IndexError):
        _core.shortest_path(empty, 0, 0)
    # More threads than work, or a nonsense thread count, run serially or on fewer threads.
    a = _core.suggest_batch(c, _i32(0, 1, 2), 1, 0, 2**31 - 1)
    b = _core.suggest_batch(c, _i32(0, 1, 2), 1, 0, -7)
    assert all(np.array_equal(x, y) for x, y in zip(_ra_fields(a), _ra_fields(b)))


def _ra_fields(x):
    return (x.ptr, x.targets, x.scores, x.shared_ptr, x.shared, x.candidates)


def test_batch_survives_threads_that_cannot_start():
    """When the OS refuses threads (address-space limit), the batch still completes (it used to
    std::terminate: joinable threads destroyed during unwinding)."""
    code = textwrap.dedent("""
        import resource
        import numpy as np
        from conceptwalk import _core
        i32 = lambda *a: np.array(a, dtype=np.int32)
        g, _ = _core.CSRGraph.from_edges(4, i32(0, 1, 2), i32(1, 2, 3), i32(0, 0, 0))
        q = 2000
        serial = _core.suggest_batch(g, np.zeros(q, np.int32), 1, 0, 1)
        rss = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (rss + 256 * 2**20, hard))  # ~30 thread stacks
        par = _core.suggest_batch(g, np.zeros(q, np.int32), 1, 0, q)
        f = lambda x: (x.ptr, x.targets, x.scores, x.shared_ptr, x.shared, x.candidates)
        assert all(np.array_equal(a, b) for a, b in zip(f(serial), f(par)))
        print("ok")
    """)
    if not sys.platform.startswith("linux"):
        pytest.skip("uses /proc and RLIMIT_AS")
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("AddressSanitizer reserves terabytes of address space; RLIMIT_AS breaks it")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
