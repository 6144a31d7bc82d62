"""The shape of the public API (issue 10): one suggestion type, one graph-source protocol, node
accessors that take ids (the ``*_at`` forms take indices), camelCase JSON keys in every tool
output, and core results that cross the binding as read-only classes whose arrays are views."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from conceptwalk import Caller, InputError, LinkGraph, _core
from conceptwalk.graph import Suggestion
from conceptwalk.tools import graph_context, graph_path, link_suggest, link_suggest_batch

ALL = Caller.all_access()


@pytest.fixture(scope="module")
def g():
    return LinkGraph.from_edges(
        [("a", "x", "USES"), ("a", "y", "USES"), ("b", "x", "PART_OF"), ("b", "y", "USES"), ("c", "x", "USES")],
        nodes=[{"id": "x", "title": "Ex", "type": "CONCEPT", "scopes": ["t"]}, {"id": "a", "type": "CONCEPT"}],
    )


def test_one_suggestion_type(g):
    via_graph = g.resource_allocation("a", k=5)
    via_tool = link_suggest(g, "a", k=5, caller=ALL).suggestions
    via_batch = link_suggest_batch(g, ["a"], k=5, caller=ALL)[0].suggestions
    assert all(type(s) is Suggestion for s in via_graph + via_tool + via_batch)
    assert via_graph == via_tool == via_batch
    assert via_tool[0].shared == ("x", "y") and via_tool[0].shared_titles == ("Ex", None)


def _keys(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v)


def test_tool_outputs_use_camel_case_keys(g):
    outs = [
        graph_context(g, concepts=["a"], caller=ALL).to_dict(),
        graph_context(g, concepts=["a"], node_types=["NOPE"], caller=ALL).to_dict(),
        link_suggest(g, "a", caller=ALL).to_dict(),
        graph_path(g, "a", "c", caller=ALL).to_dict(),
    ]
    keys = {k for o in outs for k in _keys(o)}
    assert "minShared" in keys
    assert not [k for k in keys if "_" in k], sorted(keys)


class _Store:
    """A minimal GraphSource: graph() and search()."""

    def __init__(self, graph):
        self._g = graph

    def graph(self):
        return self._g

    def search(self, text, k=10):
        return [h for h in ("a", "b") if h in text][:k]


def test_one_graph_source_protocol_for_tools_wrap_and_mcp(g):
    from conceptwalk.serve.mcp import ToolServer
    from conceptwalk.wrap.retriever import ConceptAnchoredRetriever

    src = _Store(g)
    by_search = graph_context(src, "a", caller=ALL)  # the source's search seeds the question
    assert [s.id for s in by_search.seeds] == ["a"]
    assert by_search.to_dict()["results"] == graph_context(g, concepts=["a"], caller=ALL).to_dict()["results"]
    if importlib.util.find_spec("jsonschema") is not None:  # the MCP argument validation needs it
        out = ToolServer(src, caller=ALL).call("graph_path", {"source": "a", "target": "c"})
        assert not out.is_error and out.structured["found"], out.text
    for bad in (object(), "kb.db", None):
        with pytest.raises(InputError):
            graph_path(bad, "a", "c", caller=ALL)
        with pytest.raises(InputError):
            ToolServer(bad)
        with pytest.raises(InputError):
            ConceptAnchoredRetriever(lambda text, k: [], bad)


def test_node_accessors_take_ids_and_the_at_forms_take_indices(g):
    i = g.index("x")
    assert g.node_scopes("x") == g.node_scopes_at(i) == ("t",)
    assert g.node_at(i) == ("x", g.node_type("x"), g.title("x")) == ("x", "CONCEPT", "Ex")
    from conceptwalk import NotFoundError

    with pytest.raises(NotFoundError):
        g.node_scopes(i)  # an index is not an id


def test_core_results_are_read_only_views(g):
    r = _core.personalized_pagerank(g.core, np.array([0], np.int32), np.ones(1))
    a, b = r.nodes, r.nodes
    assert np.shares_memory(a, b) and not a.flags.writeable and a.base is not None
    with pytest.raises(ValueError):
        a[0] = 1
    with pytest.raises(AttributeError):
        r.residual = 0.0  # type: ignore[misc]
    ctx = _core.graph_context(g.core, np.array([0], np.int32), np.ones(1), k=3)
    assert len(ctx) == ctx.nodes.shape[0] == ctx.hops.shape[0] == ctx.via.shape[0]
    del r, ctx
    assert a.tolist() == b.tolist()  # the views keep the result alive
