"""Every row of docs/errors.md is triggered here and its message checked against the row's
pattern; every trigger here has a row there (the two lists must stay equal)."""

from __future__ import annotations

import gzip
import math
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from conceptwalk import Caller, ConceptwalkError, InputError, LinkGraph, NotFoundError, _core
from conceptwalk import graph_context, link_suggest
from conceptwalk.kb.importers import import_edge_list, import_jsonl
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import WalkConfig
from conceptwalk.wrap.embed import get_embedder
from hot_journal import hot_journal_copy
from conceptwalk.graph.vectors import SparseVectors

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


def _g() -> LinkGraph:
    return LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "a")], nodes=[{"id": "h", "scopes": ["secret"]}])


def _kb(tmp: Path) -> KnowledgeBase:
    kb = KnowledgeBase.open(tmp / "kb.db")
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
    with KnowledgeBase.open(p) as kb:
        kb.add_nodes([{"id": "a", "scopes": ["s"]}, {"id": "b"}])
    c = sqlite3.connect(p)
    c.execute(sql)
    c.commit()
    c.close()
    return p


def _corrupt(p: Path) -> Path:
    with KnowledgeBase.open(p) as kb:
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


def _postprocessor(tmp: Path) -> object:
    pytest.importorskip("llama_index.core")
    from conceptwalk.integrations.llama_index import ConceptWalkPostprocessor

    return ConceptWalkPostprocessor(kb=_kb(tmp), caller=ALL)


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
    "E50": lambda t: KnowledgeBase.open(t / "missing.db", create=False),
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
    "E64": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl.gz", gzip.compress(b'{"id": "a"}\n')[:-9])),
    "E65": lambda t: import_edge_list(_kb(t), _file(t, "x.csv", b"src,dst,weight\na,b,1\n")),
    "E66": lambda t: import_edge_list(_kb(t), _file(t, "x.tsv", b"src\tdst\tconfidence\na\tb\thigh\n")),
    "E67": lambda t: import_jsonl(_kb(t), _file(t, "x.jsonl", b'{"alias": "x", "canonical": "nope"}\n')),
    # provenance values, long values, embedder bound (issue 14)
    "E12": lambda t: LinkGraph.from_edges([{"src": "a", "dst": "b", "fidelity": [1]}]),
    "E32": lambda t: _g().shortest_path("a", "x" * 5_000_000),
    "E45": lambda t: get_embedder("hashing:99999999999"),
    "E59": lambda t: _kb(t).add_edges([{"src": "a", "dst": "b", "fidelity": math.nan}]),
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
    # MCP
    "E90": lambda t: _session_token(t),
    # what to do instead
    "E160": lambda t: Caller.with_scopes(["t1", 3]),
    "E161": lambda t: _g().edges_between("a", 1),
    "E162": lambda t: _g().edges_between(0, 99),
    "E163": lambda t: WalkConfig(embedder=42),
    "E164": lambda t: KnowledgeBase("x.db"),
    "E165": lambda t: _kb(t).add_edges([{"src": "a", "dst": "b", "weight": 0.5}]),
    "E166": lambda t: import_jsonl(
        _kb(t), _file(t, "e.jsonl", b'{"src": "a", "dst": "svc:autth"}\n'), missing_endpoints="refuse"
    ),
    "E167": lambda t: import_jsonl(_kb(t), _file(t, "e.jsonl", b"\n"), missing_endpoints="maybe"),
    "E168": lambda t: _cli_main(["context", str(_kb(t).path)]),
    "E169": lambda t: _cli_main(["synth", str(_kb(t).path), "--quiet"]),
    "E170": lambda t: _postprocessor(t).postprocess_nodes([]),
    "E91": lambda t: SparseVectors(1, 4, np.array([0, 1]), np.array([7], np.int32), np.ones(1, np.float32)),
    "E92": lambda t: SparseVectors(-1, 4, np.zeros(0), np.zeros(0), np.zeros(0)),
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
}


FORMATS = Path(__file__).parent / "data" / "formats"


def _formats(name: str, *a, **k):
    from conceptwalk.kb.formats import import_file

    return import_file(KnowledgeBase.open(":memory:"), FORMATS / name, *a, **k)


def _without(module: str, fn):
    import sys

    saved = sys.modules.get(module)
    sys.modules[module] = None  # type: ignore[assignment]  # import_module raises ImportError
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
        "E300": lambda t: _formats_at(t / "x.dat"),
        "E301": lambda t: _formats("tiny.obo", "owl2"),
        "E302": lambda t: _formats("tiny.obo", languages=["en"]),
        "E303": lambda t: _without("fastobo", lambda: _formats("tiny.obo")),
        "E304": lambda t: _formats("bad.obo"),
        "E305": lambda t: _formats("bad.ttl"),
        "E306": lambda t: _formats("bad.graphml"),
        "E307": lambda t: _neo(t, "a,b\n1,2\n"),
        "E308": lambda t: _formats("neo4j_bad.csv", "neo4j-csv"),
        "E309": lambda t: _neo(t, '"_id","_labels","_start","_end","_type"\n,,"0",,\n'),
        "E310": lambda t: _neo(t, "id:ID,n:int\na,x\n", "ints.csv"),
        "E311": lambda t: _neo(t, "id:ID,name,colour\ntls,TLS,red\n", unknown="error"),
        "E312": lambda t: _nx("edge", weight=2.0),
        "E313": lambda t: _from_nx(),
        "E314": lambda t: _nx("node", tags={"x"}),
        "E315": lambda t: _nx("node", w=math.nan),
        "E316": lambda t: (t / "a.jsonl").write_text('{"id": "a", "attributes": [1]}\n') and _formats_at(t / "a.jsonl"),
        "E317": lambda t: (
            (t / "a.jsonl").write_text('{"alias": "x", "canonical": "a", "attributes": {}}\n')
            and _formats_at(t / "a.jsonl")
        ),
        "E318": lambda t: _graph_file(t, "[not json"),
        "E319": lambda t: _graph_file_number(t),
        "E320": lambda t: _formats("tiny.obo", scopes=[""]),
        "E321": lambda t: _formats("tiny.obo", obsolete="drop"),
        "E322": lambda t: _formats("tiny.obo", synonym_scopes=["EXACTLY"]),
        "E323": lambda t: _formats("tiny.gml", gml_label="name"),
        "E324": lambda t: _export(t, "x.obo"),
        "E325": lambda t: _export(t, "x.obo", "obo"),
        "E326": lambda t: _export(t, "x.jsonl", caller="t1"),
        "E327": lambda t: _cli_import(t),
    }
)


def _graph_file_number(t: Path):
    import networkx as nx

    G = nx.Graph()
    G.add_node("a", scopes=3)
    nx.write_graphml(G, t / "n.graphml")
    return _formats_at(t / "n.graphml")


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
