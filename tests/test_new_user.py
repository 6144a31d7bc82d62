"""What a new user hit (issue 32 items 1, 3, 5 and 6): a question finds the nodes it names by id
or alias; opening a store never creates one; one behaviour for an empty or stopword-only
question and for a path with no chain; an unknown scope is warned about from Python too."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from conceptwalk import Caller, graph_context
from conceptwalk.errors import InputError, StoreNotFoundError, UnknownScopeWarning
from conceptwalk.graph.names import STOPWORDS, content_text
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context_batch

from deletion_oracle import deleted_store, open_store

ALL = Caller.all_access()
PUBLIC = Caller.public()

NODES = [
    {"id": "tls", "type": "CONCEPT", "title": "Transport Layer Security"},
    {"id": "x509", "type": "CONCEPT", "title": "Certificates"},
    {"id": "doc:hs", "type": "DOC", "title": "Handshake and resumption"},
    {"id": "doc:sar", "type": "DOC", "title": "Search and rescue"},
    {"id": "a", "type": "CONCEPT", "title": "The letter"},
]
EDGES = [("tls", "x509"), ("doc:hs", "tls"), ("doc:sar", "x509"), ("a", "x509")]


def _kb() -> KnowledgeBase:
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(NODES)
    kb.add_edges(EDGES)
    kb.add_aliases([("ssl", "tls"), ("SSL/TLS", "tls")])
    return kb


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conceptwalk", *argv], capture_output=True, text=True, timeout=120)


@pytest.fixture
def kb_file(tmp_path: Path) -> Path:
    p = tmp_path / "net.db"
    with KnowledgeBase.create(p) as kb:
        kb.add_nodes(NODES + [{"id": "island", "type": "CONCEPT", "title": "Alone"}])
        kb.add_edges(EDGES)
        kb.add_aliases([("ssl", "tls")])
    return p


# --------------------------------------------------------------------------- item 1: ids and aliases
@pytest.mark.parametrize("question", ["tls", "TLS", "ssl", "ssl/tls", "how does SSL work?", "the tls handshake"])
def test_a_question_seeds_from_the_id_or_alias_it_names(question: str) -> None:
    kb = _kb()
    res = graph_context(kb, question, caller=PUBLIC)
    named = [s.id for s in res.seeds if s.source == "name"]
    assert named == ["tls"], res.to_dict()
    assert {r.id for r in res.results} | {s.id for s in res.seeds} >= {"x509", "doc:hs"}
    assert kb.search(question, caller=PUBLIC)[0][0] == "tls"


def test_names_are_whole_words_and_never_stopwords_only() -> None:
    kb = _kb()
    assert not [s for s in graph_context(kb, "tlsv1 ssl3", caller=PUBLIC).seeds if s.source == "name"]
    # node "a" is a stopword: "what is a certificate" does not name it
    res = graph_context(kb, "what is a certificate", caller=PUBLIC)
    assert "a" not in {s.id for s in res.seeds}
    assert [i for i, _ in kb.search("a", caller=PUBLIC)] == []


def test_search_ranks_named_nodes_first_then_text_hits() -> None:
    kb = _kb()
    kb.add_nodes([{"id": "doc:tls13", "type": "DOC", "title": "TLS 1.3 notes"}])
    got = kb.search("tls", caller=PUBLIC)
    assert [i for i, _ in got] == ["tls", "doc:tls13"]
    assert got[0][1] == 0.0 < got[1][1]  # named, not a text hit: 0.0; the hit keeps its BM25 score
    assert [i for i, _ in kb.search("tls", node_types=["DOC"], caller=PUBLIC)] == ["doc:tls13"]
    assert len(kb.search("tls", k=1, caller=PUBLIC)) == 1


def test_batch_equals_single_for_named_questions() -> None:
    kb = _kb()
    qs = ["tls", "ssl handshake", {"question": "x509 and ssl", "concepts": ["tls"]}, "the of and"]
    got = graph_context_batch(kb, qs, caller=PUBLIC, threads=2)
    want = [
        graph_context(kb, q, caller=PUBLIC)
        if isinstance(q, str)
        else graph_context(kb, q["question"], concepts=q["concepts"], caller=PUBLIC)
        for q in qs
    ]
    assert [r.to_dict() for r in got] == [r.to_dict() for r in want]
    # a named node that is also a given concept seeds once, as the concept
    assert [(s.id, s.source) for s in got[2].seeds if s.id == "tls"] == [("tls", "concept")]


def test_cli_context_finds_an_id(kb_file: Path) -> None:
    p = _cli("context", str(kb_file), "tls", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [s["id"] for s in out["seeds"]] == ["tls"] and out["results"]


def test_mcp_graph_context_and_query_find_an_alias() -> None:
    pytest.importorskip("mcp")
    from conceptwalk.serve.mcp import ToolServer

    ts = ToolServer(_kb(), caller=PUBLIC)
    out = ts.call("graph_context", {"question": "ssl"})
    assert not out.is_error, out.text
    assert [s["id"] for s in out.structured["seeds"]] == ["tls"]
    out = ts.call("graph_context", {"question": "   ", "concepts": ["tls"]})
    assert out.is_error and "question is empty" in out.text


def test_langchain_and_llama_index_retrievers_find_an_id() -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from conceptwalk.integrations.langchain import ConceptwalkRetriever
    from conceptwalk.integrations.llama_index import ConceptwalkRetriever as LlamaRetriever

    kb = _kb()
    docs = ConceptwalkRetriever(kb=kb, caller=PUBLIC).invoke("tls")
    assert [d.metadata["id"] for d in docs][:1] == ["tls"]
    nodes = LlamaRetriever(kb, caller=PUBLIC).retrieve("ssl")
    assert [n.node.metadata["id"] for n in nodes][:1] == ["tls"]


def _random_store(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str]]]:
    words = ["tls", "ssl", "dns", "bgp", "ospf", "vpn", "nat", "arp"]
    nodes = []
    for i in range(rng.randint(3, 12)):
        nid = rng.choice([f"{rng.choice(words)}", f"n{i}", f"{rng.choice(words)}-{rng.choice(words)}"])
        if any(n["id"] == nid for n in nodes):
            nid = f"n{i}"
        nodes.append(
            {
                "id": nid,
                "type": rng.choice(["CONCEPT", "DOC"]),
                "title": " ".join(rng.sample(words + ["and", "the"], 3)),
                "scopes": rng.choice([[], [], ["t1"], ["t2"], ["t1", "t2"]]),
            }
        )
    ids = [n["id"] for n in nodes]
    edges = [{"src": rng.choice(ids), "dst": rng.choice(ids), "type": "RELATED_TO"} for _ in range(rng.randint(2, 20))]
    edges = [e for e in edges if e["src"] != e["dst"]]
    aliases = [(rng.choice(words + ["virtual private network"]), rng.choice(ids)) for _ in range(rng.randint(0, 6))]
    return nodes, edges, sorted(set(aliases))


@pytest.mark.filterwarnings("ignore::conceptwalk.errors.UnknownScopeWarning")  # random scopes, on purpose
@pytest.mark.parametrize("seed", range(25))
def test_names_are_exact_to_deletion(seed: int) -> None:
    """A hidden node's id or alias names nothing and counts nothing: every answer equals the
    answer on the store with the caller's hidden nodes (and their aliases) deleted."""
    rng = random.Random(seed)
    nodes, edges, aliases = _random_store(rng)
    full = open_store(nodes, edges, aliases)
    questions = [n["id"] for n in nodes] + [a for a, _ in aliases]
    questions += ["how does " + " and ".join(rng.sample(questions, min(3, len(questions)))) + " work", "the of and"]
    for caller in (PUBLIC, Caller.with_scopes("t1"), Caller.with_scopes(["t1", "t2"]), ALL):
        sub = deleted_store(nodes, edges, aliases, caller)
        for q in questions:
            if sub is None:
                assert full.search(q, caller=caller) == []
                continue
            assert full.search(q, caller=caller) == sub.search(q, caller=ALL), (q, str(caller))
            a = graph_context(full, q, caller=caller, k=5).to_dict()
            b = graph_context(sub, q, caller=ALL, k=5).to_dict()
            assert a == b, (q, str(caller))


def test_the_id_index_follows_writes_at_the_cost_of_the_change() -> None:
    from conceptwalk.graph.names import NameIndex, named_nodes

    kb = _kb()
    graph_context(kb, "tls", caller=PUBLIC)
    ix = NameIndex.of_state(kb, kb.state())
    kb.add_nodes([{"id": "DNS", "type": "CONCEPT", "title": "Domain names"}])
    kb.add_edges([("DNS", "tls")])
    st = kb.state()
    assert NameIndex.of_state(kb, st) is ix  # brought forward along the change log, not rebuilt
    res = graph_context(kb, "how does dns resolve", caller=PUBLIC)
    assert [s.id for s in res.seeds if s.source == "name"] == ["DNS"]
    kb.delete_nodes(["DNS"])
    res = graph_context(kb, "how does dns resolve", caller=PUBLIC)
    assert not [s for s in res.seeds if s.source == "name"]  # a deleted id names nothing
    st = kb.state()
    fresh = NameIndex.of_ids(st.graph.ids)
    for q in ("dns tls", "x509 and ssl", "doc hs"):
        assert named_nodes(q, st.graph, None, [NameIndex.of_state(kb, st)]) == named_nodes(q, st.graph, None, [fresh])


# --------------------------------------------------------------------------- item 3: open never creates
def test_open_does_not_create_a_missing_file(tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    with pytest.raises(StoreNotFoundError, match="typo.db") as info:
        KnowledgeBase.open(typo)
    assert str(typo) in str(info.value) and "KnowledgeBase.create" in str(info.value)
    assert not typo.exists() and list(tmp_path.iterdir()) == []
    with KnowledgeBase.create(typo) as kb:
        kb.add_nodes([{"id": "a"}])
    with KnowledgeBase.open(typo) as kb:  # an existing store opens as before
        assert kb.stats()["nodes"] == 1
    with KnowledgeBase.create(typo) as kb:  # create opens an existing store as it is
        assert kb.stats()["nodes"] == 1
    with KnowledgeBase.open(tmp_path / "other.db", create=True) as kb:
        assert kb.version == 0


# --------------------------------------------------------------------------- item 5: one behaviour
@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_an_empty_question_is_an_input_error_everywhere(blank: str) -> None:
    kb = _kb()
    with pytest.raises(InputError, match="question is empty"):
        graph_context(kb, blank, caller=PUBLIC)
    with pytest.raises(InputError, match="question is empty"):
        graph_context(kb, blank, concepts=["tls"], caller=PUBLIC)
    with pytest.raises(InputError, match=r"queries\[1\] is empty"):
        graph_context_batch(kb, ["tls", blank], caller=PUBLIC)
    with pytest.raises(InputError, match=r"queries\[0\]: question is empty"):
        graph_context_batch(kb, [{"question": blank}], caller=PUBLIC)
    with pytest.raises(InputError, match="text is empty"):
        kb.search(blank, caller=PUBLIC)
    assert graph_context(kb, None, concepts=["tls"], caller=PUBLIC).results  # None: concepts only


@pytest.mark.parametrize("blank", ["", "   "])
def test_cli_empty_question_exits_2(kb_file: Path, blank: str) -> None:
    p = _cli("context", str(kb_file), blank)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("conceptwalk: error: ") and "Traceback" not in p.stderr


def test_mcp_empty_question_is_a_tool_error() -> None:
    pytest.importorskip("mcp")
    from conceptwalk.serve.mcp import ToolServer

    ts = ToolServer(_kb(), caller=PUBLIC)
    for args in ({"question": ""}, {"question": "   "}, {"question": "  ", "concepts": ["tls"]}):
        assert ts.call("graph_context", args).is_error, args


def test_a_stopword_question_seeds_nothing_and_says_so() -> None:
    kb = _kb()
    assert {"the", "of", "and"} <= STOPWORDS and content_text("the of and") == ""
    res = graph_context(kb, "the of and", caller=PUBLIC)
    assert res.seeds == [] and res.results == []
    assert res.reason is not None and "only stopwords (the, of, and)" in res.reason
    assert kb.search("the of and", caller=PUBLIC) == []  # not "Search and rescue", not "Handshake and ..."
    # with concepts it seeds from them alone; stopwords in a longer question are dropped
    assert [s.id for s in graph_context(kb, "the of and", concepts=["x509"], caller=PUBLIC).seeds] == ["x509"]
    hits = [i for i, _ in kb.search("rescue and the", caller=PUBLIC)]
    assert hits == ["doc:sar"]
    assert graph_context(kb, "?!", caller=PUBLIC).reason == (
        "the question has no words to search for and names no visible node"
    )


def test_cli_path_exits_1_without_a_visible_chain(kb_file: Path) -> None:
    ok = _cli("path", str(kb_file), "tls", "x509")
    assert ok.returncode == 0, ok.stderr
    none = _cli("path", str(kb_file), "tls", "island", "--json")
    assert none.returncode == 1, (none.stdout, none.stderr)
    assert json.loads(none.stdout)["found"] is False and none.stderr == ""


# --------------------------------------------------------------------------- item 6: unknown scopes
def test_an_unknown_scope_warns_once_per_store_and_scope() -> None:
    kb = _kb()
    kb.add_nodes([{"id": "ops", "title": "runbooks", "scopes": ["netops"]}])
    typo = Caller.with_scopes("netopz")
    with pytest.warns(UnknownScopeWarning, match=r"no node of ':memory:' carries scope 'netopz' \(a typo\?\)") as got:
        kb.search("tls", caller=typo)
    assert len(got) == 1 and got[0].filename == __file__  # points at the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kb.search("tls", caller=typo)  # once per (store, scope)
        graph_context(kb, "tls", caller=typo)
        graph_context(kb, "tls", caller=Caller.with_scopes("netops"))  # a known scope: silent
        graph_context(kb, "tls", caller=PUBLIC)
    with pytest.warns(UnknownScopeWarning, match="'zz'"):  # a new unknown scope of the same store
        graph_context(kb, "tls", caller=Caller.with_scopes("netopz", "zz"))
    other = _kb()
    for call in (
        lambda: graph_context(other, None, concepts=["tls"], caller=typo),
        lambda: graph_context_batch(_kb(), ["tls"], caller=typo),
    ):
        with pytest.warns(UnknownScopeWarning, match="netopz"):  # another store warns again
            call()


def test_link_suggest_and_graph_path_warn_too() -> None:
    from conceptwalk.tools import graph_path, link_suggest

    for call in (
        lambda kb: link_suggest(kb, "tls", caller=Caller.with_scopes("nope")),
        lambda kb: graph_path(kb, "tls", "x509", caller=Caller.with_scopes("nope")),
    ):
        with pytest.warns(UnknownScopeWarning, match="'nope'"):
            call(_kb())


def test_cli_warns_once_not_twice(kb_file: Path) -> None:
    p = _cli("context", str(kb_file), "tls", "--scopes", "netopz")
    assert p.returncode == 0
    assert p.stderr.count("netopz") == 1 and "UnknownScopeWarning" not in p.stderr
