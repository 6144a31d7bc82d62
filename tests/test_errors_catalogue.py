"""Every row of docs/errors.md is triggered here and its message checked against the row's
pattern; every trigger here has a row there (the two lists must stay equal)."""

from __future__ import annotations

import gzip
import math
import os
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conceptwalk import Caller, ConceptwalkError, InputError, LinkGraph, NotFoundError, _core
from conceptwalk import graph_context, link_suggest
from conceptwalk.kb.formats import export_file
from conceptwalk.kb.importers import import_edge_list, import_jsonl
from conceptwalk.errors import UnknownScopeWarning
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
from conceptwalk.wrap.embed import get_embedder
from hot_journal import hot_journal_copy
from conceptwalk.graph.vectors import DenseVectors, SparseVectors
from conceptwalk.serve.explore import Explorer, require_explore
from conceptwalk.bench.report import require_matplotlib
from conceptwalk.cli import build_parser
from conceptwalk.cli.bench import cmd_bench
from conceptwalk.cli.explore import explorer_callers

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
ALL = Caller.all_access()
ROW = re.compile(r"^\|\s*(E\d+)\s*\|\s*`?(\w+)`?\s*\|\s*`(.+?)`\s*\|")


def _rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"duplicate row {m.group(1)}"
            rows[m.group(1)] = (m.group(2), m.group(3).replace("\\|", "|"))
    return rows


def _resolver(embedder: str | None = "hashing:64"):
    from conceptwalk.wrap import ConceptResolver

    return ConceptResolver(
        LinkGraph.from_edges([("c:a", "c:b")]), WalkConfig(embedder=embedder, concept_node_types=None)
    )


def _g() -> LinkGraph:
    return LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "a")], nodes=[{"id": "h", "scopes": ["secret"]}])


_E32 = np.empty(0, np.int32)
_LIVE: list[_core.LiveGraph] = []


def _live() -> _core.LiveGraph:
    """One LiveGraph over one base (made once: E442 and E444 need the same base object)."""
    if not _LIVE:
        _LIVE.append(
            _core.LiveGraph.grow(_g().core, None, np.array([(1 << 32) | 5, (2 << 32) | 5], np.uint64), _E32, _E32)
        )
    return _LIVE[0]


def _kb(tmp: Path) -> KnowledgeBase:
    kb = KnowledgeBase.create(tmp / "kb.db")
    kb.add_nodes([{"id": "a"}, {"id": "b"}])
    return kb


def _file(tmp: Path, name: str, data: bytes) -> str:
    p = tmp / name
    p.write_bytes(data)
    return str(p)


def _foreign(p: Path, user_version: int) -> Path:
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE nodes(id TEXT)")
    c.execute(f"PRAGMA user_version = {user_version}")
    c.commit()
    c.close()
    return p


def _hot(t: Path, name: str) -> Path:
    hot_journal_copy(t / "source.db", t / name)
    return t / name


def _mkdir(p: Path) -> Path:
    p.mkdir()
    return p


def _edited(p: Path, sql: str) -> Path:
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": "a", "scopes": ["s"]}, {"id": "b"}])
    c = sqlite3.connect(p)
    c.execute(sql)
    c.commit()
    c.close()
    return p


def _corrupt(p: Path) -> Path:
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes([{"id": f"n{i}", "title": "t" * 200, "body": "b" * 2000} for i in range(40)])
        kb.add_edges([(f"n{i}", f"n{(i + 1) % 40}") for i in range(40)])
    data = bytearray(p.read_bytes())
    rng = random.Random(7)
    for off in range(3 * 4096, len(data), 4096):
        data[off : off + 4096] = bytes(rng.randrange(256) for _ in range(4096))
    p.write_bytes(bytes(data))
    return p


def _read_all(p: Path) -> None:
    with KnowledgeBase.open(p) as kb:
        kb.stats()
        kb.graph()
        kb.search("t")


def _session_token(t: Path) -> None:
    from conceptwalk.serve.mcp import TokenFile, ToolServer

    (t / "tokens.json").write_text('{"tok": ["a"]}')
    ToolServer(_g(), tokens=TokenFile(str(t / "tokens.json")), session_token="nope")


def _dup_tokens(t: Path) -> None:
    from conceptwalk.serve.mcp import TokenFile

    (t / "tokens.json").write_text('{"s3cret": [], "other": ["a"], "s3cret": "*"}')
    TokenFile(str(t / "tokens.json"))


def _public_tokens(t: Path) -> None:
    (t / "tokens.json").write_text('{"s3cret": []}')
    (t / "tokens.json").chmod(0o644)
    _cli_main(["serve", str(_kb(t).path), "--http", "127.0.0.1:0", "--token-file", str(t / "tokens.json")])


def _foreign_owner_tokens(t: Path) -> None:
    import os
    from unittest import mock

    from conceptwalk.serve.mcp import TokenFile

    p = t / "tokens.json"
    p.write_text('{"s3cret": []}')
    p.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(p, 65534, 65534)
        TokenFile(str(p), private=True)
    else:  # another user cannot be made the owner: the server runs as another user instead
        with mock.patch.object(os, "geteuid", lambda: p.stat().st_uid + 1):
            TokenFile(str(p), private=True)


def _port_in_use(t: Path) -> None:
    import socket

    pytest.importorskip("mcp")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        _cli_main(["serve", str(_kb(t).path), "--http", f"127.0.0.1:{busy.getsockname()[1]}"])


def _serve(t: Path, *extra: str) -> None:
    pytest.importorskip("mcp")
    _cli_main(["serve", str(_kb(t).path), *extra])


def _postprocessor(tmp: Path) -> object:
    pytest.importorskip("llama_index.core")
    from conceptwalk.integrations.llama_index import ConceptWalkPostprocessor

    return ConceptWalkPostprocessor(kb=_kb(tmp), caller=ALL)


def _postprocessor_class() -> type:
    pytest.importorskip("llama_index.core")
    from conceptwalk.integrations.llama_index import ConceptWalkPostprocessor

    return ConceptWalkPostprocessor


def _llama_retriever() -> type:
    pytest.importorskip("llama_index.core")
    from conceptwalk.integrations.llama_index import ConceptwalkRetriever

    return ConceptwalkRetriever


def _cli_main(argv: list[str]) -> None:
    from conceptwalk.cli import build_parser

    args = build_parser().parse_args(argv)
    args.func(args)


TRIGGERS = {
    # graph construction
    "E01": lambda t: LinkGraph.from_edges([]),
    "E02": lambda t: LinkGraph.from_edges([("a",)]),
    "E03": lambda t: LinkGraph.from_edges([{"src": "a"}]),
    "E04": lambda t: LinkGraph.from_edges([("a", "b", ["x"])]),
    "E05": lambda t: LinkGraph.from_edges([("a", "b")], nodes=["a", "a"]),
    "E06": lambda t: LinkGraph.from_arrays(["a", "a"], [0], [1]),
    "E07": lambda t: LinkGraph.from_arrays(["a", "b"], [5], [1]),
    "E08": lambda t: LinkGraph.from_arrays(["a", "b"], np.array([0.0]), [1]),
    "E09": lambda t: LinkGraph.from_edges(np.array([["a", "b", "c", "d"]])),
    "E10": lambda t: LinkGraph.from_edges([{"src": "a", "dst": "b", "extraction_confidence": 1.5}]),
    "E11": lambda t: LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "scopes": "team"}]),
    # algorithms
    "E20": lambda t: _g().personalized_pagerank({"zzz": 1.0}),
    "E21": lambda t: _g().personalized_pagerank({"h": 1.0}, visible=_g().scope_mask([])),
    "E22": lambda t: _g().personalized_pagerank({}),
    "E23": lambda t: _g().personalized_pagerank({"a": math.nan}),
    "E24": lambda t: _g().personalized_pagerank({"a": 0.0}),
    "E25": lambda t: _g().personalized_pagerank({"a": 1.0}, restart=1.5),
    "E26": lambda t: _g().personalized_pagerank({"a": 1.0}, eps=0),
    "E27": lambda t: _g().personalized_pagerank({"a": 1.0}, restart=1e-300),
    "E28": lambda t: _g().personalized_pagerank({"a": 1.0}, k=0),
    "E29": lambda t: _g().resource_allocation("a", min_shared=0),
    "E30": lambda t: _g().personalized_pagerank({"a": 1.0}, visible=np.ones(2, dtype=bool)),
    "E31": lambda t: _g().shortest_path("a", "nope"),
    # tools
    "E40": lambda t: graph_context(_g(), concepts=["a"], caller=None),
    "E41": lambda t: graph_context(_g(), "what is a?", caller=ALL),
    "E42": lambda t: graph_context(_g(), concepts="a", caller=ALL),
    "E43": lambda t: Caller(scopes="team"),
    "E44": lambda t: link_suggest(_g(), "a", k=0, caller=ALL),
    # store
    "E50": lambda t: KnowledgeBase.open(t / "missing.db"),
    "E51": lambda t: KnowledgeBase.open(_file(t, "junk.db", b"not a database at all" * 100)),
    "E52": lambda t: (lambda kb: (kb.close(), kb.add_nodes([{"id": "x"}])))(_kb(t)),
    "E53": lambda t: _kb(t).add_nodes([{"title": "no id"}]),
    "E54": lambda t: _kb(t).add_edges([{"src": "a", "dst": "b", "extraction_confidence": 2}]),
    "E55": lambda t: _kb(t).add_aliases([("alias", "not-a-node")]),
    "E56": lambda t: KnowledgeBase.open(":memory:").graph(),
    "E57": lambda t: _kb(t).search("a", k=0),
    "E58": lambda t: _kb(t).add_nodes([{"id": "a", "colour": "red"}]),
    # importers
    "E60": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b'{"id": "a"}\n{"id": \n')),
    "E61": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b'{"id": "a", "bogus": 1}\n')),
    "E62": lambda t: import_edge_list(_kb(t), _file(t, "x.csv", b"a,b\nc\n")),
    "E63": lambda t: import_edge_list(_kb(t), _file(t, "x.csv", b"a,b\n\xff\xfe,c\n")),
    "E182": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b'{"id": "q", "title": "\\ud800"}\n')),
    "E64": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl.gz", gzip.compress(b'{"id": "a"}\n')[:-9])),
    "E65": lambda t: import_edge_list(_kb(t), _file(t, "x.csv", b"src,dst,weight\na,b,1\n")),
    "E66": lambda t: import_edge_list(_kb(t), _file(t, "x.tsv", b"src\tdst\tconfidence\na\tb\thigh\n")),
    "E67": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b'{"alias": "x", "canonical": "nope"}\n')),
    # provenance values, long values, embedder bound (issue 14)
    "E12": lambda t: LinkGraph.from_edges([{"src": "a", "dst": "b", "fidelity": [1]}]),
    "E32": lambda t: _g().shortest_path("a", "x" * 5_000_000),
    "E45": lambda t: get_embedder("hashing:99999999999"),
    "E59": lambda t: _kb(t).add_edges([{"src": "a", "dst": "b", "fidelity": math.nan}]),
    "E183": lambda t: _kb(t).add_nodes([{"id": "q", "title": "\ud800"}]),
    "E184": lambda t: KnowledgeBase.open(os.path.join(str(t), "x\udc80.db")),
    "E185": lambda t: _kb(t).node(["a"]),
    "E186": lambda t: _kb(t).set_embeddings("\ud800", [], np.zeros((0, 2))),
    "E187": lambda t: export_file(_kb(t), os.path.join(str(t), "x\ud800.jsonl")),
    "E188": lambda t: _kb(t).import_file(
        _file(
            t,
            "b.ttl",
            b"@prefix ex: <http://ex.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
            b'ex:a rdfs:label "al\\uD800pha" .\n',
        )
    ),
    "E68": lambda t: import_edge_list(_kb(t), _file(t, "x.csv", b"src,dst,confidence\na,b,0_5\n")),
    "E69": lambda t: import_jsonl(
        _kb(t), _file(t, "x.jsonl", b'{"src": "a", "dst": "b", "extraction_confidence": 1' + b"0" * 400 + b"}\n")
    ),
    # foreign, damaged and unreadable files
    "E80": lambda t: KnowledgeBase.open(_foreign(t / "other.db", 0)),
    "E81": lambda t: KnowledgeBase.open(_foreign(t / "uv1.db", 1)),
    "E82": lambda t: KnowledgeBase.open(_mkdir(t / "kbdir")),
    "E83": lambda t: KnowledgeBase.open(_foreign(t / "new.db", 99)),
    "E84": lambda t: _read_all(_corrupt(t / "corrupt.db")),
    "E85": lambda t: KnowledgeBase.open(_edited(t / "nometa.db", "DELETE FROM meta WHERE key = 'version'")),
    "E86": lambda t: KnowledgeBase.open(
        _edited(t / "badscopes.db", "UPDATE nodes SET scopes = '{not json' WHERE id = 'a'")
    ).graph(),
    "E87": lambda t: import_jsonl(_kb(t), t / "missing.jsonl"),
    "E88": lambda t: import_edge_list(_kb(t), _mkdir(t / "adir")),
    "E89": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b"[" * 100_000 + b"\n")),
    "E180": lambda t: KnowledgeBase.open(_hot(t, "hot.db"), read_only=True),
    "E181": lambda t: (
        KnowledgeBase.create(t / "ro.db").close(),
        KnowledgeBase.open_read_only(t / "ro.db").fts_search("a"),
    ),
    # MCP
    "E90": lambda t: _session_token(t),
    "E200": _dup_tokens,
    "E201": lambda t: (pytest.importorskip("mcp"), _public_tokens(t)),
    "E202": lambda t: _serve(t, "--http", "127.0.0.1:99999"),
    "E203": lambda t: _serve(t, "--http", "0.0.0.0:0"),
    "E204": lambda t: _serve(t, "--http", ":0", "--scopes", "*"),
    "E205": lambda t: _serve(t, "--http", ":0", "--allow-origin", "*"),
    "E206": lambda t: _serve(t, "--allow-origin", "https://app.example.com"),
    "E207": _port_in_use,
    "E208": _foreign_owner_tokens,
    # what to do instead
    "E160": lambda t: Caller.with_scopes(["t1", 3]),
    "E161": lambda t: _g().edges_between("a", 1),
    "E162": lambda t: _g().edges_between(0, 99),
    "E163": lambda t: WalkConfig(embedder=42),
    "E320": lambda t: WalkConfig(stop_score_ratio=1.5),
    "E321": lambda t: WalkConfig(stop_rule="yes"),
    "E328": lambda t: WalkConfig(stop_flat_support=-1),
    "E322": lambda t: _resolver().resolve("x", caller=ALL, query_vector=np.zeros(3)),
    "E323": lambda t: _resolver().resolve("x", caller=ALL, query_vector=np.zeros(64), query_model="st:other"),
    "E324": lambda t: _resolver(None).resolve("x", caller=ALL, query_vector=np.zeros(64)),
    "E325": lambda t: _resolver().resolve("x", caller=ALL, query_vector=np.full(64, np.nan)),
    "E326": lambda t: _resolver().resolve("x", caller=ALL, query_model="hashing-v1-d64"),
    "E327": lambda t: _resolver().resolve("x", caller=ALL, query_vector={"a": 1}),
    "E164": lambda t: KnowledgeBase("x.db"),
    "E165": lambda t: _kb(t).add_edges([{"src": "a", "dst": "b", "weight": 0.5}]),
    "E166": lambda t: import_jsonl(
        _kb(t), _file(t, "e.jsonl", b'{"src": "a", "dst": "svc:autth"}\n'), missing_endpoints="refuse"
    ),
    "E167": lambda t: import_jsonl(_kb(t), _file(t, "e.jsonl", b"\n"), missing_endpoints="maybe"),
    "E168": lambda t: _cli_main(["context", str(_kb(t).path)]),
    "E169": lambda t: _cli_main(["synth", str(_kb(t).path), "--quiet"]),
    "E170": lambda t: _postprocessor(t).postprocess_nodes([]),
    "E190": lambda t: _llama_retriever()(_kb(t), caller=ALL, concept_walk="yes"),
    "E191": lambda t: _postprocessor_class()(kb=_kb(t), caller=ALL, id_key=3),
    "E210": lambda t: graph_context(_kb(t), "   ", caller=ALL),
    "E211": lambda t: _kb(t).search(""),
    "E212": lambda t: _unknown_scope_as_error(),
    "E213": lambda t: ConceptAnchoredRetriever(builtin_flat_search(_kb(t)), _kb(t)).query("   ", 5, caller=ALL),
    "E91": lambda t: SparseVectors(1, 4, np.array([0, 1]), np.array([7], np.int32), np.ones(1, np.float32)),
    "E92": lambda t: SparseVectors(-1, 4, np.zeros(0), np.zeros(0), np.zeros(0)),
    "E430": lambda t: DenseVectors(np.eye(4, dtype=np.float32)).with_delta(
        4, [[0, 3, 0]], np.ones((1, 4), np.float32), [2]
    ),
    # graph_context's ranking
    "E120": lambda t: graph_context(_g(), concepts=[_g().ids[0]], caller=Caller.all_access(), rank="bm25"),
    "E121": lambda t: graph_context(
        _g(), concepts=[_g().ids[0]], caller=Caller.all_access(), rank="coverage", max_hops=4
    ),
    "E122": lambda t: _core.graph_context(
        _g().core, np.array([0], np.int32), np.ones(1), 0.25, 1e-4, 5, None, None, None, 1, 0
    ),
    "E123": lambda t: _core.graph_context(
        _g().core, np.array([0], np.int32), np.ones(1), 0.25, 1e-4, 5, None, None, None, 1, 2, 0
    ),
    # link_suggest's methods
    "E370": lambda t: link_suggest(_g(), "a", caller=ALL, method="katz"),
    "E371": lambda t: link_suggest(_g(), "a", caller=ALL, method="ppr", min_shared=2),
    "E372": lambda t: link_suggest(_g(), "a", caller=ALL, restart=0.3),
    # raw core
    "E70": lambda t: _core.personalized_pagerank(
        _g().core, np.zeros((1, 1), np.int32), np.ones(1), 0.25, 1e-4, 0, 0, None
    ),
    "E71": lambda t: _core.resource_allocation(_g().core, 9, 2, 0, None),
    "E72": lambda t: _core.personalized_pagerank(
        _g().core,
        np.array([0], np.int32),
        np.ones(1),
        0.25,
        1e-4,
        0,
        0,
        _core.VisibilityMask(_g().core, np.ones(4, bool)),
    ),
    "E73": lambda t: _core.CSRGraph.from_edges(
        3, np.array([0], np.int32), np.array([7], np.int32), np.array([0], np.int32)
    ),
    "E74": lambda t: _core.typed_walk(_g().core, np.array([0], np.int32), 9, np.ones(1, bool), np.ones(1, bool)),
    "E75": lambda t: _core.personalized_pagerank(_g().core, np.array([2.7]), np.ones(1)),
    "E76": lambda t: _core.personalized_pagerank(_g().core, np.array([2**32 + 2], np.int64), np.ones(1)),
    # a live store's graph (base plus delta) in the core
    "E440": lambda t: _core.LiveGraph.grow(_g().core, None, np.array([5 << 32], np.uint64), _E32, _E32),
    "E441": lambda t: _core.LiveGraph.grow(_g().core, None, np.array([1 << 32, 1 << 32], np.uint64), _E32, _E32),
    "E442": lambda t: _core.LiveGraph.grow(
        _live().base, _live(), np.array([(2 << 32) | 5, (1 << 32) | 5], np.uint64), _E32, _E32
    ),
    "E443": lambda t: _core.LiveGraph.grow(
        _g().core, None, np.empty(0, np.uint64), np.array([0], np.int32), np.array([4], np.int32)
    ),
    "E444": lambda t: _core.graph_context(
        _live(), np.array([0], np.int32), np.ones(1), visible=_core.VisibilityMask(_live().base, np.ones(4, bool))
    ),
    "E445": lambda t: _core.LiveGraph.grow(
        _g().core, _live(), np.array([(1 << 32) | 5, (2 << 32) | 5], np.uint64), _E32, _E32
    ),
    "E446": lambda t: _core.graph_context(_live(), np.array([1, 4], np.int32), np.ones(2)),
    "E447": lambda t: _core.graph_context(
        _live(),
        np.array([0], np.int32),
        np.ones(1),
        visible=_core.LiveVisibility.make(
            _core.LiveGraph.grow(_live().base, None, np.array([(1 << 32) | 5], np.uint64), _E32, _E32),
            _core.VisibilityMask(_live().base, np.ones(4, bool)),
            np.ones(1, bool),
        ),
    ),
    "E448": lambda t: _core.LiveVisibility.make(
        _live(), _core.VisibilityMask(_g().core, np.ones(4, bool)), np.ones(2, bool)
    ),
    "E300": lambda t: _explorer(t).answer("search", {"q": ["x"], "k": ["zero"]}),
    "E301": lambda t: _explorer(t).answer("search", {"q": ["x"], "kk": ["1"]}),
    "E302": lambda t: _explorer(t).answer("search", {}),
    "E303": lambda t: _explorer(t).answer("search", {"q": ["x"], "k": ["1", "2"]}),
    "E304": lambda t: _explorer(t).answer("context", {"question": [" "]}),
    "E305": lambda t: _explorer(t).answer("context", {"question": ["x"], "rank": ["bm25"]}),
    "E306": lambda t: _explorer(t).answer("query", {"text": [""]}),
    "E307": lambda t: _explorer(t).answer("nope", {}),
    "E308": lambda t: Explorer(_kb(t), []),
    "E309": lambda t: explorer_callers(["team-a"], str(t / "tokens.json")),
    "E310": lambda t: _without("starlette", require_explore),
    "E311": lambda t: _without("matplotlib", require_matplotlib),
    "E312": lambda t: cmd_bench(build_parser().parse_args(["bench", "--sizes", "30"])),
}


FORMATS = Path(__file__).parent / "data" / "formats"


def _formats(name: str, *a, **k):
    from conceptwalk.kb.formats import import_file

    return import_file(KnowledgeBase.open(":memory:"), FORMATS / name, *a, **k)


def _without(module: str, fn):
    """Call ``fn`` as if ``module`` were not installed."""
    import sys

    saved = sys.modules.get(module)
    sys.modules[module] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        return fn()
    finally:
        if saved is None:
            del sys.modules[module]
        else:
            sys.modules[module] = saved


def _nx(kind: str, **kw):
    import networkx as nx

    from conceptwalk.kb.importers import import_networkx

    G = nx.Graph()
    if kind == "edge":
        G.add_edge("a", "b", **kw)
    else:
        G.add_node("a", **kw)
    return import_networkx(KnowledgeBase.open(":memory:"), G, **({"unknown": "error"} if kind == "edge" else {}))


def _neo(t: Path, text: str, name: str = "late.csv", **kw):
    from conceptwalk.kb.formats import import_neo4j_csv

    p = t / name
    p.write_text(text)
    return import_neo4j_csv(KnowledgeBase.open(":memory:"), p, **kw)


def _graph_file(t: Path, scopes: str):
    import networkx as nx

    G = nx.Graph()
    G.add_node("a", scopes=scopes)
    nx.write_graphml(G, t / "s.graphml")
    return _formats_at(t / "s.graphml")


def _formats_at(path: Path, *a, **k):
    from conceptwalk.kb.formats import import_file

    return import_file(KnowledgeBase.open(":memory:"), path, *a, **k)


def _export(t: Path, name: str, fmt=None, caller=None):
    from conceptwalk.kb.formats import export_file

    return export_file(KnowledgeBase.open(":memory:"), t / name, fmt, caller=caller)


def _cli_import(t: Path):
    from conceptwalk.cli import build_parser

    args = build_parser().parse_args(["import", str(t / "kb.db"), str(FORMATS / "tiny.obo"), "--languages", "en"])
    return args.func(args)


def _from_nx():
    import networkx as nx

    G = nx.Graph()
    G.add_edge("tls", "tcp", weight=2.0)
    return LinkGraph.from_networkx(G)


TRIGGERS.update(
    {
        "E400": lambda t: _formats_at(t / "x.dat"),
        "E401": lambda t: _formats("tiny.obo", "owl2"),
        "E402": lambda t: _formats("tiny.obo", languages=["en"]),
        "E403": lambda t: _without("fastobo", lambda: _formats("tiny.obo")),
        "E404": lambda t: _formats("bad.obo"),
        "E405": lambda t: _formats("bad.ttl"),
        "E406": lambda t: _formats("bad.graphml"),
        "E407": lambda t: _neo(t, "a,b\n1,2\n"),
        "E408": lambda t: _formats("neo4j_bad.csv", "neo4j-csv"),
        "E409": lambda t: _neo(t, '"_id","_labels","_start","_end","_type"\n,,"0",,\n'),
        "E410": lambda t: _neo(t, "id:ID,n:int\na,x\n", "ints.csv"),
        "E411": lambda t: _neo(t, "id:ID,name,colour\ntls,TLS,red\n", unknown="error"),
        "E412": lambda t: _nx("edge", weight=2.0),
        "E413": lambda t: _from_nx(),
        "E414": lambda t: _nx("node", tags={"x"}),
        "E415": lambda t: _nx("node", w=math.nan),
        "E416": lambda t: (t / "a.jsonl").write_text('{"id": "a", "attributes": [1]}\n') and _formats_at(t / "a.jsonl"),
        "E417": lambda t: (
            (t / "a.jsonl").write_text('{"alias": "x", "canonical": "a", "attributes": {}}\n')
            and _formats_at(t / "a.jsonl")
        ),
        "E418": lambda t: _graph_file(t, "[not json"),
        "E419": lambda t: _graph_file_number(t),
        "E420": lambda t: _formats("tiny.obo", scopes=[""]),
        "E421": lambda t: _formats("tiny.obo", obsolete="drop"),
        "E422": lambda t: _formats("tiny.obo", synonym_scopes=["EXACTLY"]),
        "E423": lambda t: _formats("tiny.gml", gml_label="name"),
        "E424": lambda t: _export(t, "x.obo"),
        "E425": lambda t: _export(t, "x.obo", "obo"),
        "E426": lambda t: _export(t, "x.jsonl", caller="t1"),
        "E427": lambda t: _cli_import(t),
        "E428": lambda t: _laughs(t),
        "E429": lambda t: (
            (t / "ctx.jsonld").write_text('{"@context": "file:///etc/passwd", "@id": "http://ex.org/a"}')
            and _formats_at(t / "ctx.jsonld")
        ),
    }
)


def _laughs(t: Path):
    """Billion laughs in RDF/XML: refused at its DOCTYPE."""
    p = t / "laughs.owl"
    levels = "".join(f'<!ENTITY l{i} "{(f"&l{i - 1};" * 10) if i else "lol"}">' for i in range(10))
    p.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [{levels}]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
        'rdf:about="http://ex.org/a"><rdf:value>&l9;</rdf:value></rdf:Description></rdf:RDF>\n'
    )
    return _formats_at(p)


def _graph_file_number(t: Path):
    import networkx as nx

    G = nx.Graph()
    G.add_node("a", scopes=3)
    nx.write_graphml(G, t / "n.graphml")
    return _formats_at(t / "n.graphml")


def _explorer(t: Path) -> Explorer:
    return Explorer(_kb(t), [("public", Caller.public())])


def _unknown_scope_as_error() -> None:
    """E212 is a warning: raised here as an error to be caught like the others."""
    import warnings

    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes([{"id": "a", "scopes": ["netops"]}])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownScopeWarning)
        kb.search("a", caller=Caller.with_scopes("netopz"))


def test_catalogue_and_triggers_match():
    assert set(_rows()) == set(TRIGGERS)


@pytest.mark.parametrize("row", sorted(TRIGGERS))
def test_catalogue_row(row, tmp_path):
    exc_name, pattern = _rows()[row]
    types = {
        "InputError": InputError,
        "NotFoundError": NotFoundError,
        "ValueError": ValueError,
        "IndexError": IndexError,
        "TypeError": TypeError,
        "ConceptwalkError": ConceptwalkError,
        "FileNotFoundError": FileNotFoundError,
        "UnknownScopeWarning": UnknownScopeWarning,
    }
    with pytest.raises(types[exc_name]) as info:
        TRIGGERS[row](tmp_path)
    msg = str(info.value)
    assert re.search(pattern, msg), f"{row}: {msg!r} does not match {pattern!r}"
    if exc_name in ("ValueError", "IndexError", "TypeError"):
        # The row names the exact type: not a conceptwalk subclass raised from Python.
        assert type(info.value).__name__ == exc_name, type(info.value)


def test_hidden_and_missing_ids_give_the_same_text():
    g = _g()
    public = g.scope_mask([])
    msgs = []
    for node in ("h", "zzz"):
        with pytest.raises(NotFoundError) as info:
            g.personalized_pagerank({node: 1.0}, visible=public)
        msgs.append(str(info.value).replace(node, "<id>"))
    assert msgs[0] == msgs[1]
