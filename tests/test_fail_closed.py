"""Fail closed (issue 21 item 1): no entry point that searches or answers for a caller defaults to
all access. Each one either requires a caller (a call without one is a TypeError) or treats a
missing caller as :meth:`Caller.public`; a user's flat search that accepts a ``caller`` keyword is
given the query's caller."""

from __future__ import annotations

import inspect
import json

import pytest

import conceptwalk as cw
from conceptwalk import Caller, KnowledgeBase
from conceptwalk.wrap import BuiltinFlatSearch, ConceptAnchoredRetriever, WalkConfig, builtin_flat_search, probe

T1 = Caller.with_scopes("t1")
ALL = Caller.all_access()


@pytest.fixture
def kb():
    with KnowledgeBase.open(":memory:") as k:
        k.add_nodes(
            [
                {"id": "c:beta", "type": "CONCEPT", "title": "beta"},
                {"id": "d:pub", "type": "DOC", "title": "beta public notes"},
                {"id": "d:t1", "type": "DOC", "title": "beta secret notes", "scopes": ["t1"]},
                {"id": "c:t1", "type": "CONCEPT", "title": "beta tenant", "scopes": ["t1"]},
            ]
        )
        k.add_edges(
            [("c:beta", "d:pub", "EXPLAINED_BY"), ("c:beta", "d:t1", "EXPLAINED_BY"), ("c:t1", "d:t1", "EXPLAINED_BY")]
        )
        yield k


def ids(hits):
    return {h[0] if isinstance(h, tuple) else h["id"] for h in hits}


def test_kb_search_without_a_caller_is_public(kb):
    assert ids(kb.search("beta")) == ids(kb.search("beta", caller=Caller.public())) == {"c:beta", "d:pub"}
    assert ids(kb.search("beta", caller=ALL)) == {"c:beta", "d:pub", "d:t1", "c:t1"}
    assert ids(kb.search("beta", caller=T1)) == ids(kb.search("beta", caller=ALL))


@pytest.mark.parametrize("make", [builtin_flat_search, BuiltinFlatSearch])
def test_builtin_flat_search_without_a_caller_is_public(kb, make):
    flat = make(kb)
    assert flat.caller == Caller.public()
    assert ids(flat("beta", 10)) == {"c:beta", "d:pub"}
    assert ids(flat("beta", 10, caller=T1)) == {"c:beta", "d:pub", "d:t1", "c:t1"}
    assert ids(make(kb, caller=T1)("beta", 10)) == {"c:beta", "d:pub", "d:t1", "c:t1"}
    emb = make(kb, mode="embedding")
    assert ids(emb("beta notes", 10)) <= {"c:beta", "d:pub"}


def test_probe_without_a_caller_is_public(kb):
    assert probe(kb) == probe(kb, caller=Caller.public()) != probe(kb, caller=ALL)
    assert probe(kb)["concepts"] == 1 and probe(kb, caller=ALL)["concepts"] == 2


class Recorder:
    """A user's flat search over a vector database: applies the caller as a metadata filter."""

    def __init__(self, kb):
        self.kb, self.seen = kb, []

    def __call__(self, text, k, *, caller=None):
        self.seen.append(caller)
        return [{"id": i} for i, _ in self.kb.search(text, k, caller=caller)]


def test_a_user_flat_search_with_a_caller_keyword_is_given_the_query_caller(kb):
    flat = Recorder(kb)
    r = ConceptAnchoredRetriever(flat, kb, config=WalkConfig(embedder=None))
    assert ids(r.query("beta", 10, caller=Caller.public())) == {"c:beta", "d:pub"}
    assert ids(r.query("beta", 10, concept_walk=True, caller=T1)) == {"c:beta", "d:pub", "d:t1", "c:t1"}
    assert flat.seen == [Caller.public(), T1]


@pytest.mark.parametrize(
    "fn, given",
    [
        (lambda text, k, caller: [{"id": "d:pub", "who": str(caller)}], True),
        (lambda text, k, **kw: [{"id": "d:pub", "who": str(kw.get("caller"))}], True),
        (lambda text, k: [{"id": "d:pub", "who": "none"}], False),
    ],
)
def test_which_flat_searches_are_given_the_caller(kb, fn, given):
    r = ConceptAnchoredRetriever(fn, kb, config=WalkConfig(embedder=None))
    out = r.query("beta", 3, caller=T1)
    assert out[0]["who"] == ("scopes:t1" if given else "none")


@pytest.mark.parametrize(
    "fn",
    [
        cw.graph_context,
        cw.link_suggest,
        cw.graph_path,
        cw.graph_context_batch,
        cw.link_suggest_batch,
        cw.graph_path_batch,
    ],
)
def test_the_tools_require_a_caller(fn):
    p = inspect.signature(fn).parameters["caller"]
    assert p.default is inspect.Parameter.empty and p.kind is p.KEYWORD_ONLY


def test_the_retriever_requires_a_caller(kb):
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=WalkConfig(embedder=None))
    with pytest.raises(TypeError):
        r.query("beta", 3)  # type: ignore[call-arg]
    for name in ("query", "run"):
        assert inspect.signature(getattr(r, name)).parameters["caller"].default is inspect.Parameter.empty


def test_the_mcp_server_defaults_to_public(kb):
    mcp = pytest.importorskip("conceptwalk.serve.mcp")
    server_cls = next(
        v
        for k, v in vars(mcp).items()
        if inspect.isclass(v)
        and "caller" in getattr(inspect.signature(v.__init__), "parameters", {})
        and v.__module__ == mcp.__name__
    )
    assert server_cls(kb).caller == Caller.public()


def test_the_dask_batches_require_a_caller():
    dist = pytest.importorskip("conceptwalk.serve.distributed")
    for name in ("graph_context_batch", "link_suggest_batch", "graph_path_batch", "query_batch"):
        p = inspect.signature(getattr(dist, name)).parameters["caller"]
        assert p.default is inspect.Parameter.empty, name


# --------------------------------------------------------------------------- the command line
# Every CLI subcommand that answers for a caller defaults to public nodes only; all access is only
# ever the explicit `--scopes '*'`.
SCOPED_COMMANDS = {
    "context": ["context", "{kb}", "beta", "-k", "10"],
    "suggest": ["suggest", "{kb}", "c:beta", "--min-shared", "1"],
    "path": ["path", "{kb}", "c:beta", "c:t1"],
    "query": ["query", "{kb}", "beta", "-k", "10", "--concept-walk"],
    "probe": ["probe", "{kb}"],
    "export": ["export", "{kb}"],  # the JSONL export on standard output
}


@pytest.fixture
def kb_file(tmp_path):
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as k:
        k.add_nodes(
            [
                {"id": "c:beta", "type": "CONCEPT", "title": "beta"},
                {"id": "d:pub", "type": "DOC", "title": "beta public notes"},
                {"id": "d:t1", "type": "DOC", "title": "beta secret notes", "scopes": ["t1"]},
                {"id": "c:t1", "type": "CONCEPT", "title": "beta tenant", "scopes": ["t1"]},
                {"id": "c:gamma", "type": "CONCEPT", "title": "gamma"},
            ]
        )
        k.add_edges(
            [
                ("c:beta", "d:pub", "EXPLAINED_BY"),
                ("c:beta", "d:t1", "EXPLAINED_BY"),
                ("c:t1", "d:t1", "EXPLAINED_BY"),
                ("c:beta", "c:gamma", "RELATED_TO"),
                ("c:gamma", "d:t1", "RELATED_TO"),
            ]
        )
    return str(path)


def _cli(capsys, argv):
    from conceptwalk.cli import main

    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_every_cli_command_with_scopes_is_listed_here():
    """A new answering command must join the tests below: the commands with ``--scopes`` are
    exactly these, and each one's default is public (``''``; ``serve``: None = public)."""
    import argparse

    from conceptwalk.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    with_scopes = {}
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if "--scopes" in action.option_strings:
                with_scopes[name] = action
    assert set(with_scopes) == set(SCOPED_COMMANDS) | {"serve", "explore"}
    for name, action in with_scopes.items():
        assert action.default in ("", None), (name, action.default)
        assert "public nodes only" in action.help and "'*' all access" in action.help, name


def test_explore_defaults_to_public():
    """``conceptwalk explore KB`` without --scopes or --token-file: the page's only caller is
    public (its switch lists no other)."""
    from conceptwalk.cli import build_parser
    from conceptwalk.cli.explore import explorer_callers

    args = build_parser().parse_args(["explore", "kb.db"])
    assert explorer_callers(args.scopes, args.token_file) == [("public", Caller.public())]
    args = build_parser().parse_args(["explore", "kb.db", "--scopes", "t1", "--scopes", ""])
    assert [c for _, c in explorer_callers(args.scopes, args.token_file)] == [Caller.with_scopes("t1"), Caller.public()]


@pytest.mark.parametrize("command", sorted(SCOPED_COMMANDS))
def test_each_cli_command_defaults_to_public(command, kb_file, capsys):
    argv = [a.replace("{kb}", kb_file) for a in SCOPED_COMMANDS[command]] + ["--json"]
    default = _cli(capsys, argv)
    public = _cli(capsys, argv + ["--scopes", ""])
    everything = _cli(capsys, argv + ["--scopes", "*"])
    tenant = _cli(capsys, argv + ["--scopes", "t1"])
    assert default == public  # status, stdout and stderr
    assert everything != default and tenant != default  # the KB's scoped nodes change every answer
    for status, out, _ in (everything, tenant):
        assert status == 0
        assert "d:t1" in out or "c:t1" in out or (command == "probe" and json.loads(out)["nodes"] == 5)
    assert "d:t1" not in default[1] and "c:t1" not in default[1]
    if command == "probe":
        assert json.loads(default[1])["nodes"] == 3  # the public view: 3 of the 5 nodes


def test_path_to_a_scoped_node_is_not_found_by_default(kb_file, capsys):
    status, _, err = _cli(capsys, ["path", kb_file, "c:beta", "c:t1"])
    assert status == 2 and err == "conceptwalk: error: target not found: 'c:t1'\n"
    assert _cli(capsys, ["path", kb_file, "c:beta", "c:t1", "--scopes", "*"])[0] == 0


def test_the_cli_caller_of_a_missing_scopes_value_is_public():
    from conceptwalk.cli._common import caller_from_spec

    assert caller_from_spec(None) == caller_from_spec("") == caller_from_spec("  ") == Caller.public()
    assert caller_from_spec("*") == ALL and caller_from_spec("t1") == T1


def test_serve_defaults_to_public(kb_file, monkeypatch, capsys):
    """``conceptwalk serve KB`` (no --scopes, no --token-file) answers for public nodes only; the
    SDK and the stdio loop are replaced so the ToolServer it built can be inspected."""
    from conceptwalk.cli import main
    from conceptwalk.cli import serve as serve_cli

    served = []
    monkeypatch.setattr(serve_cli, "require_mcp", lambda: None)
    monkeypatch.setattr(
        serve_cli, "serve_stdio", lambda tools: served.append((tools.caller, tools.call("read_node", {"id": "c:t1"})))
    )
    for extra, want in (([], Caller.public()), (["--scopes", ""], Caller.public()), (["--scopes", "*"], ALL)):
        assert main(["serve", kb_file, *extra]) == 0
        assert served[-1][0] == want
    assert "calls without a token: public nodes only" in capsys.readouterr().err
    assert [out.is_error for _, out in served] == [True, True, False]
    assert served[0][1].text == "read_node: node not found: 'c:t1'"


def test_probe_suggestions_without_a_caller_are_public(kb):
    from conceptwalk.wrap import suggest_settings

    cfg = WalkConfig(concept_node_types=("NO_SUCH_TYPE",))
    assert suggest_settings(kb, cfg) == suggest_settings(kb, cfg, caller=Caller.public())
    assert suggest_settings(kb, cfg) != suggest_settings(kb, cfg, caller=ALL)


@pytest.mark.parametrize(
    "module, name",
    [
        ("conceptwalk.integrations.langchain", "ConceptwalkRetriever"),
        ("conceptwalk.integrations.langchain", "ConceptWalkWrapRetriever"),
        ("conceptwalk.integrations.llama_index", "ConceptwalkRetriever"),
        ("conceptwalk.integrations.llama_index", "ConceptWalkPostprocessor"),
    ],
)
def test_the_framework_adapters_require_a_caller(kb, module, name):
    """The LangChain and LlamaIndex adapters: no caller (omitted or None) is an error, never all
    access."""
    pytest.importorskip("langchain_core" if "langchain" in module else "llama_index.core")
    import importlib

    cls = getattr(importlib.import_module(module), name)
    extra = {}
    if name == "ConceptWalkWrapRetriever":  # wraps a real retriever (the package's own, public)
        extra["retriever"] = importlib.import_module(module).ConceptwalkRetriever(kb=kb, caller=Caller.public())
    for kwargs in ({}, {"caller": None}):
        with pytest.raises(Exception, match="caller"):
            cls(kb=kb, **extra, **kwargs)
