"""The MCP tool server: the pinned tool list, in-process dispatch, tokens, and end to end over stdio
with the SDK's own client against ``conceptwalk serve`` running as a subprocess.

Regenerate the pinned tool list deliberately (after changing a tool's name, arguments or
descriptions on purpose) with either of::

    CONCEPTWALK_UPDATE_FIXTURES=1 python -m pytest tests/test_mcp.py -k fixture
    python scripts/mcp_roundtrip.py --write-fixture
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conceptwalk import Caller, LinkGraph, graph_context, graph_path, link_suggest
from conceptwalk.serve.mcp import (
    TOKEN_ENV,
    TOKEN_META_KEY,
    TokenFile,
    ToolServer,
    tool_specs,
)
from conceptwalk.errors import ConceptwalkError
from conceptwalk.kb.store import KnowledgeBase

FIXTURE = Path(__file__).parent / "fixtures" / "mcp_tools.json"
TENANT = Caller.with_scopes("tenant-a")
N_CONCEPTS = 300
SEED = 7


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def syn() -> Any:
    from conceptwalk.kb import synthetic

    return synthetic.generate(N_CONCEPTS, seed=SEED)


@pytest.fixture(scope="module")
def kb_path(syn: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("mcp") / "kb.db")
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes(syn.node_rows())
        kb.add_edges(syn.edge_rows())
        kb.add_aliases(syn.alias_rows())
    return path


@pytest.fixture(scope="module")
def kb(kb_path: str) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(kb_path, create=False) as k:
        yield k


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("tokens") / "tokens.json"
    path.write_text(
        json.dumps({"tok-a": ["tenant-a"], "tok-bc": ["tenant-b", "tenant-c"], "tok-public": [], "tok-root": "*"})
    )
    return str(path)


def visible_set(g: LinkGraph, caller: Caller) -> set[str]:
    vm = caller.visibility(g)
    if vm is None:
        return set(g.ids)
    return {i for i, m in zip(g.ids, vm.mask.tolist()) if m}


@pytest.fixture(scope="module")
def p(kb: KnowledgeBase, syn: Any) -> dict[str, Any]:
    return picks(kb, syn)


def picks(kb: KnowledgeBase, syn: Any, caller: Caller = TENANT) -> dict[str, Any]:
    """Deterministic ids for the calls: visible concepts (some with suggestions), a hidden one,
    and a connected visible pair."""
    g = kb.graph()
    vis = visible_set(g, caller)
    concepts = sorted(i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT")
    visible = [c for c in concepts if c in vis]
    hidden = [c for c in concepts if c not in vis]
    assert visible and hidden, "the synthetic KB must have visible and hidden concepts for tenant-a"
    suggest = next(c for c in visible if link_suggest(kb, c, k=5, caller=caller).suggestions)
    # A visible concept whose all-access neighbourhood includes hidden nodes: the interesting case.
    busy = next(
        c
        for c in visible
        if any(
            n["id"] not in vis
            for n in graph_context(kb, concepts=[c], k=30, caller=Caller.all_access()).to_dict()["results"]
        )
    )
    far = next(
        c
        for c in reversed(visible)
        if c != busy
        and graph_path(kb, busy, c, caller=caller).found
        and graph_path(kb, busy, c, caller=caller).length >= 2
    )
    queries = [q for q in syn.queries(20, seed=SEED)]
    return {
        "visible": visible,
        "hidden": hidden,
        "suggest": suggest,
        "busy": busy,
        "far": far,
        "question": queries[0]["text"],
        "questions": [q["text"] for q in queries[:5]],
    }


def ids_in(obj: Any, universe: set[str]) -> set[str]:
    """Every string anywhere in a JSON value that is a node id of the graph."""
    out: set[str] = set()
    if isinstance(obj, str):
        if obj in universe:
            out.add(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out |= ids_in(k, universe) | ids_in(v, universe)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            out |= ids_in(v, universe)
    return out


def ids_in_text(text: str, universe: set[str]) -> set[str]:
    tokens = re.split(r"[\s,()\[\]]+", text)
    return {t.strip("'\"") for t in tokens if t.strip("'\"") in universe}


def assert_no_hidden(structured: Any, text: str, g: LinkGraph, caller: Caller) -> None:
    universe = set(g.ids)
    vis = visible_set(g, caller)
    leaked = (ids_in(structured, universe) | ids_in_text(text, universe)) - vis
    assert not leaked, f"hidden nodes in a tool output: {sorted(leaked)[:5]}"


def jsonable(d: Any) -> Any:
    return json.loads(json.dumps(d))


# --------------------------------------------------------------------------- the pinned tool list
def _fixture_payload() -> dict[str, Any]:
    return {
        "comment": "The MCP tool list served by conceptwalk (names, arguments, descriptions) - a "
        "public contract. Regenerate deliberately: CONCEPTWALK_UPDATE_FIXTURES=1 "
        "python -m pytest tests/test_mcp.py -k fixture, or python "
        "scripts/mcp_roundtrip.py --write-fixture.",
        "tools": tool_specs(with_query=True),
    }


def test_fixture_pins_the_tool_list() -> None:
    payload = _fixture_payload()
    if os.environ.get("CONCEPTWALK_UPDATE_FIXTURES") == "1":
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))
    if pinned["tools"] != payload["tools"]:
        diff = "\n".join(
            difflib.unified_diff(
                json.dumps(pinned["tools"], indent=2).splitlines(),
                json.dumps(payload["tools"], indent=2).splitlines(),
                "pinned",
                "served",
                lineterm="",
            )
        )
        pytest.fail(
            "the MCP tool list changed without tests/fixtures/mcp_tools.json; if on purpose, "
            "regenerate it (CONCEPTWALK_UPDATE_FIXTURES=1 python -m pytest tests/test_mcp.py "
            "-k fixture) and review the diff:\n" + diff
        )


def test_fixture_holds_the_public_contract() -> None:
    """The names in the issue's contract, independent of the fixture file's content."""
    tools = {t["name"]: t for t in json.loads(FIXTURE.read_text(encoding="utf-8"))["tools"]}
    assert list(tools) == ["graph_context", "link_suggest", "graph_path", "query", "read_node"]
    props = {n: t["inputSchema"]["properties"] for n, t in tools.items()}
    assert {"question", "concepts", "k", "nodeTypes", "nHits", "maxHops"} <= set(props["graph_context"])
    assert "hits" not in props["graph_context"]  # renamed to nHits (one name per concept)
    assert props["graph_context"]["concepts"]["type"] == "array"
    assert {"concept", "k"} <= set(props["link_suggest"])
    assert tools["link_suggest"]["inputSchema"]["required"] == ["concept"]
    assert tools["graph_path"]["inputSchema"]["required"] == ["source", "target"]
    assert "advanced" in tools["graph_path"]["description"].lower()
    assert props["query"]["conceptWalk"] == {**props["query"]["conceptWalk"], "type": "boolean", "default": False}
    assert tools["query"]["inputSchema"]["required"] == ["text"]
    for t in tools.values():
        assert len(t["description"]) > 80
        assert all(p.get("description") for p in t["inputSchema"]["properties"].values())


def test_a_changed_description_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison the fixture test makes does notice a one-word change."""
    from conceptwalk.serve import mcp as mcp_server

    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))["tools"]
    changed = dict(mcp_server.TOOL_SPECS[1], description=mcp_server.TOOL_SPECS[1]["description"] + " x")
    monkeypatch.setattr(mcp_server, "TOOL_SPECS", (mcp_server.TOOL_SPECS[0], changed) + mcp_server.TOOL_SPECS[2:])
    assert tool_specs() != pinned
    renamed = json.loads(json.dumps(pinned))
    renamed[3]["inputSchema"]["properties"]["concept_walk"] = renamed[3]["inputSchema"]["properties"].pop("conceptWalk")
    assert renamed != pinned


# --------------------------------------------------------------------------- in-process dispatch
@pytest.mark.parametrize("caller", [Caller.public(), TENANT, Caller.all_access()], ids=str)
def test_tools_match_the_python_api(kb: KnowledgeBase, syn: Any, p: dict[str, Any], caller: Caller) -> None:
    ts = ToolServer(kb, caller=caller)
    g = kb.graph()
    vis = visible_set(g, caller)
    c = next(x for x in p["visible"] if x in vis)
    for q in p["questions"]:
        out = ts.call("graph_context", {"question": q, "k": 15})
        ref = graph_context(kb, q, k=15, caller=caller)
        assert not out.is_error and out.structured == jsonable(ref.to_dict()) and out.text == str(ref)
        assert_no_hidden(out.structured, out.text, g, caller)
    q = p["questions"][0]
    out = ts.call(
        "graph_context", {"question": q, "concepts": [c], "k": 10, "nodeTypes": ["CONCEPT", "FILE"], "nHits": 3}
    )
    ref = graph_context(kb, q, concepts=[c], k=10, caller=caller, node_types=["CONCEPT", "FILE"], n_hits=3)
    assert out.structured == jsonable(ref.to_dict())
    assert {r["type"] for r in out.structured["results"]} <= {"CONCEPT", "FILE"}
    out = ts.call("link_suggest", {"concept": c, "k": 7, "minShared": 2})
    ref_s = link_suggest(kb, c, k=7, caller=caller)
    assert out.structured == jsonable(ref_s.to_dict()) and out.text == str(ref_s)
    assert_no_hidden(out.structured, out.text, g, caller)
    out = ts.call("graph_path", {"source": p["busy"], "target": p["far"]})
    ref_p = graph_path(kb, p["busy"], p["far"], caller=caller)
    assert out.structured == jsonable(ref_p.to_dict()) and out.text == str(ref_p)
    assert_no_hidden(out.structured, out.text, g, caller)


def test_default_caller_is_public_only(kb: KnowledgeBase, syn: Any) -> None:
    ts = ToolServer(kb)
    assert ts.caller == Caller.public()
    tenant_only = next(i for i, s in zip(syn.ids, syn.scopes) if s == ["tenant-a"])
    out = ts.call("link_suggest", {"concept": tenant_only})
    assert out.is_error and out.text == f"link_suggest: concept not found: {tenant_only!r}"


def test_restricted_output_equals_the_graph_without_hidden_nodes(
    kb: KnowledgeBase, syn: Any, p: dict[str, Any]
) -> None:
    """Scores, counts and paths over MCP for tenant-a equal those on the graph where the hidden
    nodes were deleted: nothing hidden shapes an output."""
    g = kb.graph()
    vis = visible_set(g, TENANT)
    keep = [i in vis for i in syn.ids]
    pos = {i: n for n, i in enumerate(x for x, k in zip(syn.ids, keep) if k)}
    import numpy as np

    ids = [i for i, k in zip(syn.ids, keep) if k]
    e_keep = [keep[s] and keep[d] for s, d in zip(syn.src.tolist(), syn.dst.tolist())]
    src = np.array([pos[syn.ids[s]] for s, k in zip(syn.src.tolist(), e_keep) if k], dtype=np.int64)
    dst = np.array([pos[syn.ids[d]] for d, k in zip(syn.dst.tolist(), e_keep) if k], dtype=np.int64)
    types = [t for t, k in zip(syn.edge_types.tolist(), e_keep) if k]
    sub = LinkGraph.from_arrays(
        ids,
        src,
        dst,
        types,
        node_types=[t for t, k in zip(syn.node_types, keep) if k],
        titles=[t for t, k in zip(syn.titles, keep) if k],
    )
    ts = ToolServer(kb, caller=TENANT)
    ts_sub = ToolServer(sub, caller=Caller.all_access())
    checked = 0
    for c in p["visible"][:40]:
        a = ts.call("link_suggest", {"concept": c, "k": 20})
        b = ts_sub.call("link_suggest", {"concept": c, "k": 20})
        assert a.structured == b.structured
        checked += bool(a.structured["candidates"])
        a = ts.call("graph_path", {"source": p["busy"], "target": c})
        b = ts_sub.call("graph_path", {"source": p["busy"], "target": c})
        assert a.structured == b.structured
    assert checked >= 5
    a = ts.call("graph_context", {"concepts": [p["busy"]], "k": 20})
    b = ts_sub.call("graph_context", {"concepts": [p["busy"]], "k": 20})
    ra, rb = a.structured["results"], b.structured["results"]
    assert [(r["id"], r["hops"], r["via"]) for r in ra] == [(r["id"], r["hops"], r["via"]) for r in rb]
    assert [r["score"] for r in ra] == pytest.approx([r["score"] for r in rb], abs=1e-9)
    assert (a.structured["pushes"], a.structured["residual"]) == (
        b.structured["pushes"],
        pytest.approx(b.structured["residual"], abs=1e-12),
    )


def bad_calls(p: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """(tool, arguments, expected message fragment) for calls that must come back as tool errors."""
    hidden, missing = p["hidden"][0], "concept/does_not_exist"
    return [
        ("graph_context", {}, "give a non-empty 'question', 'concepts', or both"),
        ("graph_context", {"question": "  "}, "give a non-empty"),
        ("graph_context", {"question": "x", "k": 0}, "k: 0 is less than the minimum of 1"),
        ("graph_context", {"question": "x", "k": "5"}, "k: '5' is not of type 'integer'"),
        ("graph_context", {"question": "x", "k": True}, "is not of type 'integer'"),
        ("graph_context", {"question": "x", "bogus": 1}, "Additional properties are not allowed"),
        (
            "graph_context",
            {"question": "x", "hits": 3},
            "graph_context: invalid arguments: 'hits' was renamed to 'nHits' (send 'nHits' instead)",
        ),
        ("graph_context", {"question": "x", "hits": 3, "nHits": 3}, "'hits' was renamed to 'nHits'"),
        ("graph_context", {"concepts": p["visible"][0]}, "is not of type 'array'"),
        ("graph_context", {"concepts": [hidden]}, f"concept not found: {hidden!r}"),
        ("graph_context", {"concepts": [missing]}, f"concept not found: {missing!r}"),
        ("link_suggest", {}, "'concept' is a required property"),
        ("link_suggest", {"concept": hidden}, f"link_suggest: concept not found: {hidden!r}"),
        ("link_suggest", {"concept": missing}, f"link_suggest: concept not found: {missing!r}"),
        ("link_suggest", {"concept": p["visible"][0], "k": 10_000}, "k: 10000 is greater than the maximum"),
        ("graph_path", {"source": p["visible"][0]}, "'target' is a required property"),
        ("graph_path", {"source": p["visible"][0], "target": hidden}, f"target not found: {hidden!r}"),
        ("graph_path", {"source": hidden, "target": p["visible"][0]}, f"source not found: {hidden!r}"),
        ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
    ]


def test_bad_calls_are_tool_errors_and_do_not_break_the_server(kb: KnowledgeBase, syn: Any, p: dict[str, Any]) -> None:
    ts = ToolServer(kb, caller=TENANT)
    good = ts.call("link_suggest", {"concept": p["suggest"]})
    for name, args, fragment in bad_calls(p):
        out = ts.call(name, args)
        assert out.is_error and out.structured is None, (name, args)
        assert fragment in out.text, (name, args, out.text)
        assert "\n" not in out.text
        assert ts.call("link_suggest", {"concept": p["suggest"]}) == good


def test_n_hits_sets_the_search_seeds(kb: KnowledgeBase, p: dict[str, Any]) -> None:
    """``nHits`` (formerly ``hits``) is the API's ``n_hits``: it changes the seeds it should."""
    ts = ToolServer(kb, caller=TENANT)
    q = p["questions"][0]
    seeds = {
        n: [x["id"] for x in ts.call("graph_context", {"question": q, "nHits": n}).structured["seeds"]] for n in (1, 5)
    }
    assert len(seeds[1]) == 1 and len(seeds[5]) > 1 and seeds[5][:1] == seeds[1]
    assert ts.call("graph_context", {"question": q}) == ts.call("graph_context", {"question": q, "nHits": 10})


def test_hidden_and_missing_give_the_same_text(kb: KnowledgeBase, syn: Any, p: dict[str, Any]) -> None:
    ts = ToolServer(kb, caller=TENANT)
    missing = "concept/" + p["hidden"][0].split("/", 1)[1] + "_x"
    for args_of in (
        lambda i: ("link_suggest", {"concept": i}),
        lambda i: ("graph_context", {"concepts": [i]}),
        lambda i: ("graph_path", {"source": p["busy"], "target": i}),
    ):
        texts = []
        for node in (p["hidden"][0], missing):
            name, args = args_of(node)
            texts.append(ts.call(name, args).text.replace(repr(node), "<id>"))
        assert texts[0] == texts[1]


def test_integral_float_k_is_accepted(kb: KnowledgeBase, syn: Any, p: dict[str, Any]) -> None:
    ts = ToolServer(kb, caller=TENANT)
    assert ts.call("link_suggest", {"concept": p["suggest"], "k": 3.0}) == ts.call(
        "link_suggest", {"concept": p["suggest"], "k": 3}
    )
    assert ts.call("link_suggest", {"concept": p["suggest"], "k": 2.5}).is_error


def test_an_internal_error_is_a_tool_error(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> None:
    ts = ToolServer(kb, caller=TENANT)

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr("conceptwalk.tools.graph_path", boom)
    out = ts.call("graph_path", {"source": "a", "target": "b"})
    assert out.is_error and "internal error" in out.text and "secret" not in out.text


# --------------------------------------------------------------------------- the query tool
def _wrap() -> Any:
    try:
        from conceptwalk import wrap
    except ImportError:
        return None
    return wrap if hasattr(wrap, "ConceptAnchoredRetriever") else None


def test_query_is_listed_exactly_when_the_wrap_is_installed(kb: KnowledgeBase) -> None:
    names = [t["name"] for t in ToolServer(kb).list_tools()]
    assert ("query" in names) == (_wrap() is not None)
    assert names[:3] == ["graph_context", "link_suggest", "graph_path"]


def flat_json(kb: KnowledgeBase, text: str, k: int, caller: Caller) -> str:
    wrap = _wrap()
    return json.dumps(wrap.builtin_flat_search(kb)(text, k, caller=caller), ensure_ascii=False)


@pytest.mark.parametrize("caller", [Caller.public(), TENANT, Caller.all_access()], ids=str)
def test_query_flat_is_byte_identical_to_the_flat_search(kb: KnowledgeBase, p: dict[str, Any], caller: Caller) -> None:
    if _wrap() is None:
        pytest.skip("conceptwalk.wrap is not installed")
    ts = ToolServer(kb, caller=caller)
    g = kb.graph()
    for q in p["questions"]:
        for args in ({"text": q, "k": 7}, {"text": q, "k": 7, "conceptWalk": False}):
            out = ts.call("query", args)
            assert not out.is_error, out.text
            assert json.dumps(out.structured["results"], ensure_ascii=False) == flat_json(kb, q, 7, caller)
            assert out.structured["conceptWalk"] is False
            assert_no_hidden(out.structured, out.text, g, caller)


def test_query_with_the_walk_matches_the_retriever(kb: KnowledgeBase, p: dict[str, Any]) -> None:
    wrap = _wrap()
    if wrap is None:
        pytest.skip("conceptwalk.wrap is not installed")
    ts = ToolServer(kb, caller=TENANT)
    retriever = wrap.ConceptAnchoredRetriever(wrap.builtin_flat_search(kb), kb)
    g = kb.graph()
    walked = 0
    for q in p["questions"]:
        out = ts.call("query", {"text": q, "k": 5, "conceptWalk": True})
        assert not out.is_error, out.text
        ref = retriever.query(q, 5, concept_walk=True, caller=TENANT)
        assert out.structured["results"] == jsonable(ref)
        flat = json.loads(flat_json(kb, q, 5, TENANT))
        assert out.structured["results"][: len(flat)] == flat  # the flat results stay first, unchanged
        walked += sum(r.get("via") == "concept-walk" for r in out.structured["results"])
        assert_no_hidden(out.structured, out.text, g, TENANT)
    assert walked > 0, "the walk added nothing for any question: the check above proved little"


def test_query_walk_events_go_to_the_configured_sink(kb: KnowledgeBase, p: dict[str, Any], tmp_path: Path) -> None:
    if _wrap() is None:
        pytest.skip("conceptwalk.wrap is not installed")
    events = tmp_path / "events.jsonl"
    ts = ToolServer(kb, caller=TENANT, event_sink=f"jsonl:{events}")
    assert not ts.call("query", {"text": p["question"], "k": 5}).is_error  # no walk, no event
    assert not events.exists() or events.read_text() == ""
    assert not ts.call("query", {"text": p["question"], "k": 5, "conceptWalk": True}).is_error
    lines = events.read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["query"] == p["question"]


# --------------------------------------------------------------------------- tokens
def test_token_file_callers(kb: KnowledgeBase, syn: Any, p: dict[str, Any], token_file: str) -> None:
    tf = TokenFile(token_file)
    assert tf.caller("tok-a") == TENANT
    assert tf.caller("tok-bc") == Caller.with_scopes("tenant-b", "tenant-c")
    assert tf.caller("tok-public") == Caller.public()
    assert tf.caller("tok-root").sees_everything
    for bad in ("tok", "tok-a ", "", "TOK-A"):
        with pytest.raises(ConceptwalkError, match="^unknown token$"):
            tf.caller(bad)
    ts = ToolServer(kb, tokens=tf)
    args = {"concept": p["suggest"]}
    assert ts.call("link_suggest", args, token="tok-a") == ToolServer(kb, caller=TENANT).call("link_suggest", args)
    out = ts.call("link_suggest", args, token="tok-nope")
    assert out.is_error and out.text == "link_suggest: unknown token"
    # no token: public only
    hidden_to_public = next(i for i, s in zip(syn.ids, syn.scopes) if s == ["tenant-a"])
    assert ts.call("link_suggest", {"concept": hidden_to_public}).is_error
    assert not ts.call("link_suggest", {"concept": hidden_to_public}, token="tok-a").is_error
    # a session token (the env variable) applies when the call presents none; a per-call one wins
    ts_s = ToolServer(kb, tokens=tf, session_token="tok-a")
    assert not ts_s.call("link_suggest", {"concept": hidden_to_public}).is_error
    assert ts_s.call("link_suggest", {"concept": hidden_to_public}, token="tok-public").is_error
    with pytest.raises(ConceptwalkError, match="unknown token"):
        ToolServer(kb, tokens=tf, session_token="tok-nope")
    with pytest.raises(ConceptwalkError, match="no --token-file"):
        ToolServer(kb, session_token="tok-a")
    strict = ToolServer(kb, tokens=tf, require_token=True)
    assert "requires a token" in strict.call("link_suggest", args).text
    no_tokens = ToolServer(kb, caller=TENANT)
    assert "accepts no tokens" in no_tokens.call("link_suggest", args, token="tok-a").text


def test_token_file_reload_and_fail_closed(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"one": ["s1"]}))
    tf = TokenFile(str(path))
    assert tf.caller("one") == Caller.with_scopes("s1")
    path.write_text(json.dumps({"two": ["s2", "s3"]}))  # size changes: reloaded
    with pytest.raises(ConceptwalkError, match="unknown token"):
        tf.caller("one")
    assert tf.caller("two") == Caller.with_scopes("s2", "s3")
    path.write_text("{not json")
    with pytest.raises(ConceptwalkError, match="cannot be read"):
        tf.caller("two")
    for content, msg in (
        ("[1]", "JSON object"),
        ('{"t": "all"}', "list of scope names"),
        ('{"t": [1]}', "list of scope names"),
        ('{"": []}', "empty token"),
    ):
        path.write_text(content)
        with pytest.raises(ConceptwalkError, match=msg):
            TokenFile(str(path))
    with pytest.raises(ConceptwalkError, match="not found"):
        TokenFile(str(tmp_path / "absent.json"))


def test_token_file_unknown_scopes(kb: KnowledgeBase, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each token-file entry granting a scope no node carries is reported by entry number (never
    by token), as ``--scopes`` names are; known scopes, ``[]`` and ``"*"`` are not."""
    from conceptwalk.cli._common import warn_unknown_token_scopes

    path = tmp_path / "tokens.json"
    entries = {"s3cret-a": ["tenant-a"], "s3cret-z": ["tenant-zzz", "tenant-b", "tenant-yy"], "p": [], "r": "*"}
    path.write_text(json.dumps(entries))
    tf = TokenFile(str(path))
    assert tf.unknown_scopes(kb.graph()) == [(2, ["tenant-yy", "tenant-zzz"])]
    assert warn_unknown_token_scopes(kb, tf) == [(2, ["tenant-yy", "tenant-zzz"])]
    err = capsys.readouterr().err
    assert err == (
        f"conceptwalk: warning: token file {path}, entry 2: no node carries scopes 'tenant-yy', 'tenant-zzz' "
        "(a typo?); it grants nothing: see `conceptwalk stats` for the scopes\n"
    )
    assert "s3cret" not in err
    path.write_text(json.dumps({"s3cret-a": ["tenant-a"], "r": "*"}))  # a reload sees the new entries
    tf.caller("r")
    assert tf.unknown_scopes(kb.graph()) == [] and warn_unknown_token_scopes(kb, tf) == []
    assert capsys.readouterr().err == ""


def test_a_repeated_token_makes_the_token_file_refused(
    kb: KnowledgeBase, kb_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37: ``{"t": [], "t": "*", ...}`` gave ``t`` all access without a word (JSON's last
    key wins) and the unknown-scope warning numbered entries after the collapse. A repeated token
    now refuses the whole file, naming the entries by their place in the file and never the
    token; the same at start-up, on a reload while serving, over stdio and over HTTP."""
    path = tmp_path / "tokens.json"
    path.write_text('{"s3cret-dup": [], "s3cret-dup": "*", "u": ["tenant-zz"]}')
    with pytest.raises(ConceptwalkError) as exc:
        TokenFile(str(path))
    assert str(exc.value) == f"token file {path}: entry 2 repeats the token of entry 1; each token may appear once"
    assert "s3cret" not in str(exc.value)
    # entries keep their place in the file: the third entry is "entry 3"
    path.write_text('{"a1": [], "b2": ["tenant-a"], "u3": ["tenant-zz"]}')
    tf = TokenFile(str(path))
    assert tf.unknown_scopes(kb.graph()) == [(3, ["tenant-zz"])]
    # a reload that brings a repeated token: every token refused (fail closed), not the last one
    path.write_text('{"a1": [], "b2": ["tenant-a"], "u3": ["tenant-zz"], "a1": "*"}')
    with pytest.raises(ConceptwalkError, match="cannot be read"):
        tf.caller("a1")
    assert ToolServer(kb, tokens=tf).call("graph_path", {"source": "x", "target": "x"}, token="a1").is_error
    # a repeat in a nested object is not a token (scopes must be a list)
    path.write_text('{"a1": {"x": 1, "x": 2}}')
    with pytest.raises(ConceptwalkError, match='entry 1 must map to a list of scope names or "\\*", got an object'):
        TokenFile(str(path))
    # the command line, stdio and HTTP alike: status 2, one line, no token
    path.write_text('{"s3cret-dup": ["tenant-a"], "other": [], "s3cret-dup": ["tenant-b"]}')
    path.chmod(0o600)
    for extra in ([], ["--http", "127.0.0.1:0"]):
        proc = subprocess.run(
            [sys.executable, *_serve_args(kb_path, "--token-file", str(path), *extra)],
            input="",
            capture_output=True,
            text=True,
            timeout=120,
        )
        if "conceptwalk[mcp]" in proc.stderr:
            pytest.skip("the MCP SDK is not installed")
        assert proc.returncode == 2, proc.stderr
        assert "entry 3 repeats the token of entry 1" in proc.stderr and "s3cret" not in proc.stderr


def test_token_lookup_compares_every_entry(tmp_path: Path) -> None:
    """The lookup compares the presented token's digest with every entry's (constant time,
    no early exit) and gives each token its own opaque identity."""
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({f"tok-{i}": [f"s{i}"] for i in range(5)}))
    tf = TokenFile(str(path))
    seen = []
    import hmac as hmac_module

    real = hmac_module.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        seen.append(1)
        return real(a, b)

    import conceptwalk.serve.mcp as mcp_module

    original = mcp_module.hmac.compare_digest
    mcp_module.hmac.compare_digest = counting  # type: ignore[assignment]
    try:
        found = tf.lookup("tok-0")
        assert found is not None and found[1] == Caller.with_scopes("s0") and len(seen) == 5
        assert tf.lookup("tok-nope") is None and len(seen) == 10
    finally:
        mcp_module.hmac.compare_digest = original  # type: ignore[assignment]
    ids = {tf.lookup(f"tok-{i}")[0] for i in range(5)}  # type: ignore[index]
    assert len(ids) == 5 and not any("tok-" in i for i in ids)


def test_serve_warns_at_start_up_about_an_unknown_scopes_name(
    kb_path: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``serve --scopes`` names no node carries are warned about before serving (the SDK and the
    stdio loop are replaced: the start-up is what is tested)."""
    from conceptwalk.cli import main
    from conceptwalk.cli import serve as serve_cli

    monkeypatch.setattr(serve_cli, "require_mcp", lambda: None)
    monkeypatch.setattr(serve_cli, "serve_stdio", lambda tools: None)
    assert main(["serve", kb_path, "--scopes", "tenant-a,tenant-zzz"]) == 0
    err = capsys.readouterr().err
    assert "conceptwalk: warning: no node carries scope 'tenant-zzz' (a typo?)" in err
    assert "tenant-a'" not in err.split("calls without a token")[0]
    assert main(["serve", kb_path, "--scopes", "tenant-a"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_serve_start_up_line_says_who_calls_without_a_token_are(
    kb_path: str, token_file: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32: the line said "caller without token: scopes:(public only)" under
    --require-token and with CONCEPTWALK_TOKEN too; it says what the server does with them."""
    from conceptwalk.cli import main
    from conceptwalk.cli import serve as serve_cli

    monkeypatch.setattr(serve_cli, "require_mcp", lambda: None)
    served: list[ToolServer] = []
    monkeypatch.setattr(serve_cli, "serve_stdio", served.append)
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    cases = [
        ([], "calls without a token: public nodes only"),
        (["--scopes", "tenant-a,tenant-b"], "calls without a token: public nodes and scopes tenant-a, tenant-b"),
        (["--scopes", "*"], "calls without a token: all access"),
        (["--token-file", token_file, "--require-token"], "calls without a token: refused (--require-token)"),
    ]
    for extra, said in cases:
        assert main(["serve", kb_path, *extra]) == 0
        assert said in capsys.readouterr().err, extra
    monkeypatch.setenv(TOKEN_ENV, "tok-a")
    assert main(["serve", kb_path, "--token-file", token_file]) == 0
    err = capsys.readouterr().err
    assert (
        "calls without a per-call token: the CONCEPTWALK_TOKEN token's caller (public nodes and scopes tenant-a)" in err
    )
    assert "tok-a" not in err
    # and the servers do what the lines say
    assert (
        served[3]
        .call("graph_path", {"source": "x", "target": "x"})
        .text.startswith("graph_path: this server requires a token")
    )
    assert served[4].resolve_caller(None) == TENANT


def test_serve_warns_at_start_up_about_unknown_token_scopes(kb_path: str, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"tok-a": ["tenant-a"], "tok-typo": ["tenant-aa"]}))
    proc = subprocess.run(
        [sys.executable, *_serve_args(kb_path, "--token-file", str(path))],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"conceptwalk: warning: token file {path}, entry 2: no node carries scope 'tenant-aa' (a typo?); "
        "it grants nothing: see `conceptwalk stats` for the scopes"
    ]
    assert "tok-typo" not in proc.stderr


# --------------------------------------------------------------------------- CLI without the SDK
def test_serve_without_the_sdk_names_the_extra(
    kb_path: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conceptwalk import cli

    for mod in ("mcp", "mcp.server", "mcp.server.lowlevel", "mcp_types"):
        monkeypatch.setitem(sys.modules, mod, None)
    assert cli.main(["serve", kb_path]) == 2
    err = capsys.readouterr().err
    assert 'pip install "conceptwalk[mcp]"' in err


def test_serve_help_states_the_safe_default() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "conceptwalk", "serve", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    assert "public nodes only" in " ".join(proc.stdout.split()).lower()


# --------------------------------------------------------------------------- end to end over stdio
def _serve_args(kb_path: str, *extra: str) -> list[str]:
    return ["-m", "conceptwalk", "serve", kb_path, *extra]


def run_session(kb_path: str, extra: list[str], body: Any, tmp_path: Path, env: dict[str, str] | None = None) -> Any:
    """Start ``conceptwalk serve`` over stdio, connect with the SDK client, run ``body(session)``."""
    mcp = pytest.importorskip("mcp", reason='the MCP SDK is not installed (pip install "conceptwalk[mcp]")')
    import anyio

    params = mcp.StdioServerParameters(
        command=sys.executable, args=_serve_args(kb_path, *extra), env=env, cwd=str(tmp_path)
    )
    errlog_path = tmp_path / "server-stderr.txt"

    async def main() -> Any:
        with open(errlog_path, "w") as errlog:
            async with mcp.stdio_client(params, errlog=errlog) as (read, write):
                async with mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    try:
        return anyio.run(main)
    except BaseException:
        sys.stderr.write(errlog_path.read_text() if errlog_path.exists() else "")
        raise


def _text(result: Any) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def test_e2e_stdio_restricted_caller(
    kb_path: str, kb: KnowledgeBase, syn: Any, p: dict[str, Any], tmp_path: Path
) -> None:
    g = kb.graph()

    async def body(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await s.list_tools()
        out["tools"] = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
        calls = [
            ("graph_context", {"question": p["question"], "k": 12}),
            ("graph_context", {"concepts": [p["busy"]], "k": 25, "nodeTypes": ["CONCEPT", "MEMORY"]}),
            ("link_suggest", {"concept": p["suggest"], "k": 8}),
            ("graph_path", {"source": p["busy"], "target": p["far"]}),
        ]
        out["good"] = [(n, a, await s.call_tool(n, a)) for n, a in calls]
        # the same calls again, concurrently (the server runs each in a worker thread)
        import anyio

        concurrent: dict[int, Any] = {}

        async def one(i: int) -> None:
            concurrent[i] = await s.call_tool(*calls[i % len(calls)])

        async with anyio.create_task_group() as tg:
            for i in range(3 * len(calls)):
                tg.start_soon(one, i)
        out["concurrent"] = [concurrent[i] for i in range(3 * len(calls))]
        out["bad"] = []
        for name, args, fragment in bad_calls(p):
            bad = await s.call_tool(name, args)
            after = await s.call_tool("link_suggest", {"concept": p["suggest"], "k": 8})
            out["bad"].append((name, args, fragment, bad, after))
        out["token"] = await s.call_tool("link_suggest", {"concept": p["suggest"]}, meta={TOKEN_META_KEY: "anything"})
        if "query" in [t.name for t in listed.tools]:
            out["query"] = [
                await s.call_tool("query", {"text": p["question"], "k": 6, "conceptWalk": w}) for w in (False, True)
            ]
            out["query_bad"] = await s.call_tool("query", {"text": "", "conceptWalk": "yes"})
        return out

    out = run_session(kb_path, ["--scopes", "tenant-a"], body, tmp_path)
    pinned = json.loads(FIXTURE.read_text(encoding="utf-8"))["tools"]
    served_names = [t["name"] for t in out["tools"]]
    assert served_names[:3] == ["graph_context", "link_suggest", "graph_path"]
    assert out["tools"] == [t for t in pinned if t["name"] in served_names]

    refs = {
        0: graph_context(kb, p["question"], k=12, caller=TENANT),
        1: graph_context(kb, concepts=[p["busy"]], k=25, node_types=["CONCEPT", "MEMORY"], caller=TENANT),
        2: link_suggest(kb, p["suggest"], k=8, caller=TENANT),
        3: graph_path(kb, p["busy"], p["far"], caller=TENANT),
    }
    for i, (name, args, res) in enumerate(out["good"]):
        assert not res.is_error, (name, _text(res))
        assert res.structured_content == jsonable(refs[i].to_dict()), name
        assert _text(res) == str(refs[i])
        assert_no_hidden(res.structured_content, _text(res), g, TENANT)
    for i, res in enumerate(out["concurrent"]):
        assert res.structured_content == out["good"][i % len(out["good"])][2].structured_content
    assert out["good"][1][2].structured_content["results"], "the busy concept has visible context"
    assert out["good"][3][2].structured_content["found"]
    good_suggest = out["good"][2][2].structured_content
    for name, args, fragment, bad, after in out["bad"]:
        assert bad.is_error, (name, args)
        assert fragment in _text(bad), (name, args, _text(bad))
        assert not bad.structured_content
        assert not after.is_error and after.structured_content == good_suggest
    assert out["token"].is_error and "accepts no tokens" in _text(out["token"])
    assert ("query" in served_names) == (_wrap() is not None)
    if "query" in served_names:
        flat, walked = out["query"]
        assert not flat.is_error and not walked.is_error
        assert json.dumps(flat.structured_content["results"], ensure_ascii=False) == flat_json(
            kb, p["question"], 6, TENANT
        )
        wrap = _wrap()
        ref = wrap.ConceptAnchoredRetriever(wrap.builtin_flat_search(kb), kb).query(
            p["question"], 6, concept_walk=True, caller=TENANT
        )
        assert walked.structured_content["results"] == jsonable(ref)
        for r in (flat, walked):
            assert_no_hidden(r.structured_content, _text(r), g, TENANT)
        bad = _text(out["query_bad"])
        assert out["query_bad"].is_error and "text: ''" in bad and "conceptWalk: 'yes'" in bad


def test_e2e_stdio_tokens(
    kb_path: str, kb: KnowledgeBase, syn: Any, p: dict[str, Any], token_file: str, tmp_path: Path
) -> None:
    g = kb.graph()
    tenant_a_only = next(i for i, s in zip(syn.ids, syn.scopes) if s == ["tenant-a"])
    tenant_b_only = next(i for i, s in zip(syn.ids, syn.scopes) if s == ["tenant-b"])

    async def body(s: Any) -> list[Any]:
        res = []
        for tok in (None, "tok-a", "tok-bc", "tok-root", "tok-unknown"):
            meta = None if tok is None else {TOKEN_META_KEY: tok}
            for node in (tenant_a_only, tenant_b_only):
                res.append((tok, node, await s.call_tool("graph_path", {"source": node, "target": node}, meta=meta)))
            res.append((tok, "ctx", await s.call_tool("graph_context", {"concepts": [p["busy"]], "k": 30}, meta=meta)))
        return res

    results = run_session(kb_path, ["--token-file", token_file], body, tmp_path)
    expect_visible = {
        None: set(),
        "tok-a": {tenant_a_only},
        "tok-bc": {tenant_b_only},
        "tok-root": {tenant_a_only, tenant_b_only},
        "tok-unknown": set(),
    }
    callers = {
        None: Caller.public(),
        "tok-a": TENANT,
        "tok-bc": Caller.with_scopes("tenant-b", "tenant-c"),
        "tok-root": Caller.all_access(),
    }
    for tok, node, r in results:
        if tok == "tok-unknown":
            assert r.is_error and _text(r).endswith("unknown token")
            continue
        if node == "ctx":
            if p["busy"] not in visible_set(g, callers[tok]):
                assert r.is_error and "not found" in _text(r)
                continue
            ref = graph_context(kb, concepts=[p["busy"]], k=30, caller=callers[tok])
            assert r.structured_content == jsonable(ref.to_dict())
            assert_no_hidden(r.structured_content, _text(r), g, callers[tok])
        elif node in expect_visible[tok]:
            assert not r.is_error and r.structured_content["found"], (tok, node)
        else:
            assert r.is_error and _text(r) == f"graph_path: source not found: {node!r}", (tok, node)

    # A session token from the environment of the server process.
    async def env_body(s: Any) -> Any:
        return await s.call_tool("graph_path", {"source": tenant_a_only, "target": tenant_a_only})

    r = run_session(kb_path, ["--token-file", token_file], env_body, tmp_path, env={TOKEN_ENV: "tok-a"})
    assert not r.is_error and r.structured_content["found"]


def test_e2e_unknown_session_token_stops_the_server(kb_path: str, token_file: str) -> None:
    env = dict(os.environ, **{TOKEN_ENV: "tok-unknown"})
    proc = subprocess.run(
        [sys.executable, *_serve_args(kb_path, "--token-file", token_file)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    if "conceptwalk[mcp]" in proc.stderr:
        pytest.skip("the MCP SDK is not installed")
    assert proc.returncode == 2 and "unknown token" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["--scopes", "a", "--token-file", "x.json"], "not both"),
        (["--require-token"], "--require-token needs --token-file"),
    ],
)
def test_serve_rejects_bad_options(kb_path: str, args: list[str], message: str) -> None:
    pytest.importorskip("mcp")
    proc = subprocess.run(
        [sys.executable, *_serve_args(kb_path, *args)], input="", capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and message in proc.stderr


def test_serve_missing_kb(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    proc = subprocess.run(
        [sys.executable, *_serve_args(str(tmp_path / "nope.db"))], input="", capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and "not found" in proc.stderr
    assert not (tmp_path / "nope.db").exists()


# --------------------------------------------------------------------------- read_node, snippets, walk settings
def test_read_node_returns_content_and_visible_neighbours(kb: KnowledgeBase, syn: Any) -> None:
    from conceptwalk.serve.mcp import READ_NODE_NEIGHBOURS, SNIPPET_CHARS, ToolServer

    g = kb.graph()
    scoped = Caller.with_scopes("tenant-a")
    seen = visible_set(g, scoped)
    hidden = sorted(set(g.ids) - seen)
    # a visible node with a hidden neighbour: the listing leaves it out
    ip, ind = g.core.indptr, g.core.indices
    node = next(
        i
        for n, i in enumerate(g.ids)
        if i in seen and kb.node(i)["body"] and any(g.ids[j] not in seen for j in ind[ip[n] : ip[n + 1]])
    )
    ts = ToolServer(kb, caller=scoped)
    out = ts.call("read_node", {"id": node})
    assert not out.is_error, out.text
    d = out.structured
    row = kb.node(node)
    assert (d["id"], d["type"], d["title"], d["body"]) == (row["id"], row["type"], row["title"], row["body"])
    n = g.ids.index(node)
    want = sorted(g.ids[j] for j in ind[ip[n] : ip[n + 1]] if g.ids[j] in seen)
    assert [x["id"] for x in d["neighbours"]] == want[:READ_NODE_NEIGHBOURS] and d["neighbourCount"] == len(want)
    assert all(x["edges"] and all(e["direction"] in ("in", "out") for e in x["edges"]) for x in d["neighbours"])
    # the deletion oracle: the same answer on the store with the hidden nodes deleted
    from deletion_oracle import deleted_store

    small = deleted_store(list(syn.node_rows()), list(syn.edge_rows()), list(syn.alias_rows()), scoped)
    try:
        assert ToolServer(small, caller=Caller.all_access()).call("read_node", {"id": node}).structured == d
    finally:
        small.close()
    # caps
    capped = ts.call("read_node", {"id": node, "maxNeighbours": 1, "maxBodyChars": 5}).structured
    assert len(capped["neighbours"]) == min(1, len(want)) and capped["body"] == row["body"][:5]
    assert capped["bodyTruncated"] == (len(row["body"]) > 5)
    # hidden and missing: exactly the same error
    h = ts.call("read_node", {"id": hidden[0]})
    m = ts.call("read_node", {"id": "no/such/node"})
    assert h.is_error and m.is_error
    assert h.text == m.text.replace("no/such/node", hidden[0])
    # snippets on graph_context and query, cut to SNIPPET_CHARS
    c = ts.call("graph_context", {"concepts": [node], "k": 5, "snippets": True}).structured
    assert c["results"] and all("snippet" in r for r in c["results"])
    for r in c["results"]:
        body = kb.node(r["id"])["body"]
        assert r["snippet"] == (None if body is None else body[:SNIPPET_CHARS])
    plain = ts.call("graph_context", {"concepts": [node], "k": 5}).structured
    assert all("snippet" not in r for r in plain["results"])
    q = ts.call("query", {"text": row["title"], "k": 3, "snippets": True}).structured
    assert q["results"] and all(
        r["snippet"] == (kb.node(r["id"])["body"] or "")[:SNIPPET_CHARS]
        or (r["snippet"] is None and kb.node(r["id"])["body"] is None)
        for r in q["results"]
    )


def test_query_walk_settings_per_call_and_as_server_flags(kb: KnowledgeBase, syn: Any) -> None:
    from conceptwalk.serve.mcp import ToolServer
    from conceptwalk.wrap import WalkConfig

    ts = ToolServer(kb, caller=Caller.all_access())
    texts = [q["text"] for q in syn.queries()][:10]
    args = {"k": 3, "conceptWalk": True}
    walked = {t: ts.call("query", dict(args, text=t)).structured["results"] for t in texts}
    t = next(t for t, r in walked.items() if sum(x.get("via") == "concept-walk" for x in r) >= 2)
    one = ts.call("query", dict(args, text=t, maxAdded=1)).structured["results"]
    flat = [x for x in walked[t] if x.get("via") != "concept-walk"]
    assert one[: len(flat)] == flat and sum(x.get("via") == "concept-walk" for x in one) == 1
    none = ts.call("query", dict(args, text=t, admitEdgeTypes=["NO_SUCH_TYPE"])).structured["results"]
    assert none == flat
    # a cap above the server's is the server's
    small = ToolServer(kb, caller=Caller.all_access(), walk_config=WalkConfig(max_candidates=1))
    assert small.call("query", dict(args, text=t)).structured["results"] == one
    assert small.call("query", dict(args, text=t, maxAdded=50)).structured["results"] == one
    # visibility comes from the token: settings never widen it
    scoped = ToolServer(kb, caller=Caller.with_scopes("tenant-a"))
    g = kb.graph()
    seen = visible_set(g, Caller.with_scopes("tenant-a"))
    for tt in texts:
        res = scoped.call(
            "query", dict(args, text=tt, conceptTypes=["CONCEPT", "FILE", "DOC"], maxAdded=100)
        ).structured["results"]
        assert all(r["id"] in seen for r in res)


def test_serve_flags_set_the_query_tools_walk(kb_path: str) -> None:
    from conceptwalk.cli import build_parser
    from conceptwalk.cli.serve import _serve_walk_config
    from conceptwalk.wrap import WalkConfig

    args = build_parser().parse_args(
        ["serve", kb_path, "--concept-types", "CONCEPT,DOC", "--admit-edge-types", "ATTACHED_TO", "--max-added", "3"]
    )
    assert _serve_walk_config(args) == WalkConfig(
        concept_node_types=("CONCEPT", "DOC"), admit_edge_types=("ATTACHED_TO",), max_candidates=3
    )
    assert _serve_walk_config(build_parser().parse_args(["serve", kb_path])) is None
