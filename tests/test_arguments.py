"""Argument checks at every entry point (issue 14 items 5, 6 and 8; issue 10 item 3).

One check per argument lives in conceptwalk.graph.checks and is used by the single, batch and
distributed calls alike. Each test below failed before the fix it holds.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from conceptwalk import Caller, InputError, LinkGraph, _core
from conceptwalk import graph as graph_pkg
from conceptwalk import tools
from conceptwalk.graph import personalized_pagerank_batch
from conceptwalk.serve import distributed as cwd
from conceptwalk.tools import (
    graph_context,
    graph_context_batch,
    graph_path,
    graph_path_batch,
    link_suggest,
    link_suggest_batch,
)

ALL = Caller.all_access()


@pytest.fixture(scope="module")
def g():
    return LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("c", "x"), ("c", "d")])


# ------------------------------------------------------------------ item 5: beyond the binding's range
def test_huge_k_is_clamped_not_a_pybind_error(g):
    big = 2**63
    assert g.personalized_pagerank({"a": 1.0}, k=big).ids == g.personalized_pagerank({"a": 1.0}).ids
    assert (
        graph_context(g, concepts=["a"], k=big, caller=ALL).to_dict()["results"]
        == graph_context(g, concepts=["a"], k=g.num_nodes, caller=ALL).to_dict()["results"]
    )
    assert link_suggest(g, "a", k=big, caller=ALL).to_dict() == link_suggest(g, "a", k=50, caller=ALL).to_dict()
    assert [r.ids for r in personalized_pagerank_batch(g, [{"a": 1.0}], k=big)] == [
        g.personalized_pagerank({"a": 1.0}).ids
    ]
    assert graph_context_batch(g, [{"concepts": ["a"]}], k=big, caller=ALL)[0].results
    assert link_suggest_batch(g, ["a"], k=big, caller=ALL)[0].suggestions


def test_huge_max_pushes_min_shared_and_max_hops_are_clamped(g):
    assert g.personalized_pagerank({"a": 1.0}, max_pushes=2**63).ids == g.personalized_pagerank({"a": 1.0}).ids
    assert (
        personalized_pagerank_batch(g, [{"a": 1.0}], max_pushes=2**63)[0].ids == g.personalized_pagerank({"a": 1.0}).ids
    )
    assert link_suggest(g, "a", min_shared=2**31, caller=ALL).suggestions == []
    assert g.resource_allocation("a", min_shared=2**63) == []
    assert link_suggest_batch(g, ["a"], min_shared=2**31, caller=ALL)[0].suggestions == []
    assert g.hops(["a"], ["d"], max_hops=2**31) == {"d": (3, "a")}
    assert g.hops(["a"], ["d"], max_hops=2**70) == {"d": (3, "a")}
    with pytest.raises(InputError, match="max_hops"):
        g.hops(["a"], ["d"], max_hops=-1)
    with pytest.raises(InputError, match="max_hops"):
        g.hops(["a"], ["d"], max_hops=1.5)


@pytest.mark.parametrize("build", ["from_edges", "from_arrays"])
def test_extraction_confidence_past_float_range_names_the_row(build):
    with pytest.raises(InputError, match=r"rows\[1\]: extraction_confidence must be a number in \[0, 1\]") as info:
        if build == "from_edges":
            LinkGraph.from_edges([{"src": "a", "dst": "b"}, {"src": "b", "dst": "c", "extraction_confidence": 10**400}])
        else:
            LinkGraph.from_arrays(
                ["a", "b", "c"], [0, 1], [1, 2], edge_annotations={"extraction_confidence": [0.5, 10**400]}
            )
    assert len(str(info.value)) < 200  # the 401-digit number is not echoed whole


# ------------------------------------------------------------------ item 6: no silent force-cast
def test_core_refuses_what_a_cast_would_change(g):
    one = np.ones(1)
    with pytest.raises(IndexError, match="4294967298"):
        _core.personalized_pagerank(g.core, np.array([2**32 + 2], np.int64), one)
    with pytest.raises(TypeError, match="float64"):
        _core.personalized_pagerank(g.core, np.array([2.7]), one)
    # Integer dtypes that hold valid indices are still taken (int64, uint8, lists).
    want = _core.personalized_pagerank(g.core, np.array([2], np.int32), one).nodes.tolist()
    for seeds in (np.array([2], np.int64), np.array([2], np.uint8), [2]):
        assert _core.personalized_pagerank(g.core, seeds, one).nodes.tolist() == want


# ------------------------------------------------------------------ item 8: the small ones
def test_numpy_scalars_are_numbers(g):
    base = g.personalized_pagerank({"a": 1.0}, restart=0.30000001192092896).to_dict()
    assert g.personalized_pagerank({"a": 1.0}, restart=np.float32(0.3)).to_dict() == base
    assert graph_context(g, concepts=["a"], restart=np.float32(0.3), eps=np.float64(1e-4), caller=ALL).results
    assert personalized_pagerank_batch(g, [{"a": 1.0}], restart=np.float32(0.3))[0].to_dict() == base
    assert graph_context_batch(g, [{"concepts": ["a"]}], restart=np.float32(0.3), caller=ALL)[0].results
    assert len(g.personalized_pagerank({"a": 1.0}, k=np.int64(2))) == 2
    assert link_suggest(g, "a", k=np.int32(1), min_shared=np.int64(1), caller=ALL).suggestions
    with pytest.raises(InputError, match="restart"):
        g.personalized_pagerank({"a": 1.0}, restart=np.bool_(True))
    with pytest.raises(InputError, match="restart"):
        g.personalized_pagerank({"a": 1.0}, restart=True)


def test_hops_does_not_iterate_a_string(g):
    with pytest.raises(InputError, match="seeds must be a collection of ids, not a single string"):
        g.hops("ab", ["d"])
    with pytest.raises(InputError, match="targets must be a collection of ids, not a single string"):
        g.hops(["a"], "d")


def test_personalized_pagerank_refuses_k_true(g):
    with pytest.raises(InputError, match="k must be a positive integer or None, got True"):
        g.personalized_pagerank({"a": 1.0}, k=True)


# ------------------------------------------------------------------ k=True everywhere
def _kb(tmp_path_factory=None):
    from conceptwalk.kb.store import KnowledgeBase

    kb = KnowledgeBase.open(":memory:")
    kb.add_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
    return kb


#: Every public entry point that takes ``k``, with a call that passes ``k=True``. The test below
#: checks this list is complete by scanning the public API.
K_ENTRY_POINTS = {
    "LinkGraph.personalized_pagerank": lambda g, kb: g.personalized_pagerank({"a": 1.0}, k=True),
    "LinkGraph.personalized_pagerank_certified": lambda g, kb: g.personalized_pagerank_certified({"a": 1.0}, True),
    "LinkGraph.resource_allocation": lambda g, kb: g.resource_allocation("a", k=True),
    "graph.personalized_pagerank_batch": lambda g, kb: personalized_pagerank_batch(g, [{"a": 1.0}], k=True),
    "tools.graph_context": lambda g, kb: graph_context(g, concepts=["a"], k=True, caller=ALL),
    "tools.graph_context_batch": lambda g, kb: graph_context_batch(g, [{"concepts": ["a"]}], k=True, caller=ALL),
    "tools.link_suggest": lambda g, kb: link_suggest(g, "a", k=True, caller=ALL),
    "tools.link_suggest_batch": lambda g, kb: link_suggest_batch(g, ["a"], k=True, caller=ALL),
    # The Dask entry points check their arguments before anything is shipped (no client needed).
    "serve.distributed.graph_context_batch": lambda g, kb: cwd.graph_context_batch(
        None, g, [{"concepts": ["a"]}], k=True, caller=ALL
    ),
    "serve.distributed.link_suggest_batch": lambda g, kb: cwd.link_suggest_batch(None, g, ["a"], k=True, caller=ALL),
    "serve.distributed.query_batch": lambda g, kb: cwd.query_batch(None, kb, ["a"], True, caller=ALL),
    "wrap.ConceptAnchoredRetriever.query": lambda g, kb: _retriever(kb).query("a", True, caller=ALL),
    "wrap.ConceptAnchoredRetriever.run": lambda g, kb: _retriever(kb).run("a", True, caller=ALL),
    "wrap.BuiltinFlatSearch.search_state": lambda g, kb: _flat(kb).search_state(kb.state(), "a", True, caller=ALL),
}

#: Public functions taking ``k`` that are not entry points: the graph layer's building blocks
#: for the tools, documented as taking already-checked arguments (the tools check ``k`` first).
K_BUILDING_BLOCKS = {
    "graph.context.context",
    "graph.context.context_batch",
    "graph.context.context_text",
    "graph.context.context_live",
    "graph.suggest.suggest",
    "graph.suggest.suggest_live",
    "graph.suggest.suggest_batch",
    "graph.suggest.ppr_suggest",
    "graph.suggest.ppr_suggest_batch",
    "tools.GraphSource.search",
}  # a protocol's method, implemented by the source


def _flat(kb):
    from conceptwalk.wrap import builtin_flat_search

    return builtin_flat_search(kb)


def _retriever(kb):
    from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search

    return ConceptAnchoredRetriever(builtin_flat_search(kb), kb)


@pytest.mark.parametrize("name", sorted(K_ENTRY_POINTS))
def test_k_true_is_refused_by_every_entry_point(g, name):
    kb = _kb()
    with pytest.raises(InputError, match=r"\bk\b.*True"):
        K_ENTRY_POINTS[name](g, kb)
    kb.close()


def test_k_entry_point_list_is_complete():
    import importlib

    found = set()

    def scan(prefix, obj):
        for attr in getattr(obj, "__all__", [n for n in dir(obj) if not n.startswith("_")]):
            f = getattr(obj, attr, None)
            if inspect.isclass(f):
                for m, meth in vars(f).items():
                    if not m.startswith("_") and callable(meth) and "k" in inspect.signature(meth).parameters:
                        found.add(
                            f"{prefix}{attr}.{m}" if prefix != "graph." or attr != "LinkGraph" else f"LinkGraph.{m}"
                        )
            elif callable(f) and not inspect.isclass(f):
                try:
                    params = inspect.signature(f).parameters
                except (TypeError, ValueError):
                    continue
                if "k" in params and getattr(f, "__module__", "").startswith("conceptwalk"):
                    found.add(f"{prefix}{attr}")

    scan("graph.", graph_pkg)
    for mod in ("ppr", "context", "suggest", "path"):
        scan(f"graph.{mod}.", importlib.import_module(f"conceptwalk.graph.{mod}"))
    scan("tools.", tools)
    scan("serve.distributed.", cwd)
    scan("wrap.", importlib.import_module("conceptwalk.wrap"))
    found = {n.replace("graph.ppr.", "graph.") for n in found}
    missing = found - set(K_ENTRY_POINTS) - K_BUILDING_BLOCKS
    assert not missing, f"entry points taking k without a k=True test: {sorted(missing)}"


def test_path_and_batch_entry_points_share_the_caller_check(g):
    for call in (
        lambda: graph_path(g, "a", "b", caller=None),
        lambda: graph_path_batch(g, [("a", "b")], caller="all"),
        lambda: cwd.graph_path_batch(None, g, [("a", "b")], caller=None),
    ):
        with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
            call()


def test_an_uncapped_push_too_small_to_finish_is_an_input_error_everywhere():
    # issue 14 item 4: `context --eps 1e-300` ended in the core's plain ValueError
    import conceptwalk as cw
    from conceptwalk.errors import InputError

    g = cw.LinkGraph.from_edges([("a", "b"), ("b", "c")])
    everyone = cw.Caller.all_access()
    calls = [
        lambda: cw.graph_context(g, concepts=["a"], caller=everyone, eps=1e-300),
        lambda: cw.graph_context_batch(g, [{"concepts": ["a"]}], caller=everyone, restart=1e-300),
        lambda: g.personalized_pagerank({"a": 1.0}, restart=1e-300),
        lambda: cw.personalized_pagerank_batch(g, [{"a": 1.0}], eps=1e-300),
    ]
    for call in calls:
        with pytest.raises(InputError, match=r"restart \* eps must be >= 1e-12 without a push cap"):
            call()
    # with a push cap the product is left to the cap
    assert g.personalized_pagerank({"a": 1.0}, eps=1e-300, max_pushes=10).truncated
