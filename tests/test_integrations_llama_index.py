"""conceptwalk.integrations.llama_index: the retriever's nodes (text, metadata, per-call k, async),
the postprocessor (incoming nodes first, never reordered or dropped; the very list when the walk
adds nothing), and the deletion oracle for a scoped caller."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

from conceptwalk import Caller  # noqa: E402
from conceptwalk.errors import InputError  # noqa: E402
from conceptwalk.integrations.llama_index import ConceptWalkPostprocessor, ConceptwalkRetriever  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402
from conceptwalk.kb.synthetic import generate  # noqa: E402
from deletion_oracle import deleted_store  # noqa: E402

SYN = generate(150, seed=11)
NODES, EDGES, ALIASES = list(SYN.node_rows()), list(SYN.edge_rows()), list(SYN.alias_rows())
QUERIES = [q["text"] for q in SYN.queries()]
ALL = Caller.all_access()


@pytest.fixture(scope="module")
def kb() -> Any:
    k = KnowledgeBase.open(":memory:")
    k.add_nodes(NODES)
    k.add_edges(EDGES)
    k.add_aliases(ALIASES)
    yield k
    k.close()


def _dump(nodes: list[NodeWithScore]) -> list[tuple[str, str, float | None, dict[str, Any]]]:
    return [(n.node.node_id, n.node.get_content(), n.score, n.node.metadata) for n in nodes]


def test_retriever_nodes_text_metadata_k_and_async(kb: Any) -> None:
    r = ConceptwalkRetriever(kb, caller=ALL, k=2, concept_walk=True)
    q = next(t for t in QUERIES if len(r.retrieve(t)) > 2)
    nodes = r.retrieve(q)
    assert [n.node.metadata["via"] for n in nodes[:2]] == ["flat", "flat"]
    assert all(n.node.metadata["via"] == "concept-walk" for n in nodes[2:])
    for n in nodes:
        row = kb.node(n.node.node_id)
        assert n.node.get_content() == "\n\n".join(p for p in (row["title"], row["body"]) if p)
        assert set(n.node.metadata) == {"id", "type", "score", "via", "paths", "provenance"}
        assert n.score == n.node.metadata["score"]
    assert len(ConceptwalkRetriever(kb, caller=ALL, k=3).retrieve(q)) == 3
    assert len([n for n in r.retrieve(q, k=1) if n.node.metadata["via"] == "flat"]) == 1
    assert _dump(asyncio.run(r.aretrieve(q))) == _dump(nodes)
    with pytest.raises(InputError, match="k must be a positive integer"):
        ConceptwalkRetriever(kb, caller=ALL, k=0)
    with pytest.raises(InputError, match="caller"):
        ConceptwalkRetriever(kb, caller=None)


def test_postprocessor_appends_and_never_reorders_or_drops(kb: Any) -> None:
    base = ConceptwalkRetriever(kb, caller=ALL, k=3)
    post = ConceptWalkPostprocessor(kb=kb, caller=ALL)
    grew = 0
    for q in QUERIES[:12]:
        incoming = base.retrieve(q)
        snapshot = _dump(incoming)
        out = post.postprocess_nodes(incoming, query_bundle=QueryBundle(q))
        assert _dump(incoming) == snapshot  # the incoming list is not changed
        assert _dump(out[: len(incoming)]) == snapshot and all(a is b for a, b in zip(out, incoming))
        assert all(n.node.metadata["via"] == "concept-walk" for n in out[len(incoming) :])
        grew += len(out) > len(incoming)
    assert grew
    # nothing to add: the very list comes back
    foreign = [NodeWithScore(node=TextNode(text="unrelated", id_="zz/none"), score=1.0)]
    assert post.postprocess_nodes(foreign, query_bundle=QueryBundle("qqqq zzzz")) is foreign
    with pytest.raises(InputError, match="needs the query"):
        post.postprocess_nodes(foreign)


def test_scoped_caller_equals_the_store_with_hidden_nodes_deleted(kb: Any) -> None:
    caller = Caller.with_scopes("tenant-a")
    small = deleted_store(NODES, EDGES, ALIASES, caller)
    assert small is not None
    try:
        got = ConceptwalkRetriever(kb, caller=caller, k=4, concept_walk=True)
        want = ConceptwalkRetriever(small, caller=ALL, k=4, concept_walk=True)
        gp, wp = ConceptWalkPostprocessor(kb=kb, caller=caller), ConceptWalkPostprocessor(kb=small, caller=ALL)
        flat = ConceptwalkRetriever(small, caller=ALL, k=3)
        for q in QUERIES[:15]:
            assert _dump(got.retrieve(q)) == _dump(want.retrieve(q))
            inc = flat.retrieve(q)
            assert _dump(gp.postprocess_nodes(list(inc), query_bundle=QueryBundle(q))) == _dump(
                wp.postprocess_nodes(list(inc), query_bundle=QueryBundle(q))
            )
    finally:
        small.close()


# --------------------------------------------------------------------------- constructor errors (issue 37)
P = Caller.public()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda kb: ConceptWalkPostprocessor(kb=kb, caller=None), "caller must be a conceptwalk.Caller, got NoneType"),
        (lambda kb: ConceptWalkPostprocessor(kb=kb), "caller must be a conceptwalk.Caller, got NoneType"),
        (lambda kb: ConceptWalkPostprocessor(caller=P), "kb must be a KnowledgeBase or a LinkGraph, got NoneType"),
        (lambda kb: ConceptWalkPostprocessor(kb=kb, caller=P, id_key=3), "ConceptWalkPostprocessor: id_key: "),
        (lambda kb: ConceptWalkPostprocessor(kb=kb, caller=P, config=3), "config must be a WalkConfig, got int"),
        (lambda kb: ConceptwalkRetriever(kb, caller=None), "caller must be a conceptwalk.Caller, got NoneType"),
        (lambda kb: ConceptwalkRetriever(kb), "caller must be a conceptwalk.Caller, got NoneType"),
        (lambda kb: ConceptwalkRetriever(kb, caller=P, k=True), "k must be a positive integer, got True"),
        (lambda kb: ConceptwalkRetriever(kb, caller=P, k="3"), "k must be a positive integer, got '3'"),
        (lambda kb: ConceptwalkRetriever(kb, caller=P, k=0), "k must be a positive integer, got 0"),
        (
            lambda kb: ConceptwalkRetriever(kb, caller=P, concept_walk="yes"),
            "ConceptwalkRetriever: concept_walk must be True or False, got str",
        ),
        (lambda kb: ConceptwalkRetriever(3, caller=P), "kb must be a KnowledgeBase or a LinkGraph, got int"),
    ],
)
def test_constructors_raise_the_library_s_errors(kb: Any, make: Any, message: str) -> None:
    """Issue 37: ConceptWalkPostprocessor(caller=None) raised pydantic's ValidationError."""
    with pytest.raises(InputError) as got:
        make(kb)
    assert str(got.value).startswith(message) and type(got.value) is InputError


# --------------------------------------------------------------------------- the caller per call (issue 32)
def test_one_retriever_and_postprocessor_two_callers_equal_the_deleted_stores(kb: Any) -> None:
    """One retriever and one postprocessor serve two tenants: retrieve(q, caller=c),
    postprocess_nodes(..., caller=c) and a caller_context block each answer exactly as the store
    with that tenant's hidden nodes deleted; a call naming none answers for the adapter's own."""
    from conceptwalk.integrations.llama_index import caller_context

    a, b = Caller.with_scopes("tenant-a"), Caller.with_scopes("tenant-c")
    small = {n: deleted_store(NODES, EDGES, ALIASES, c) for n, c in (("a", a), ("b", b), ("p", P))}
    try:
        shared = ConceptwalkRetriever(kb, caller=P, k=4, concept_walk=True)
        post = ConceptWalkPostprocessor(kb=kb, caller=P)
        want = {n: ConceptwalkRetriever(s, caller=ALL, k=4, concept_walk=True) for n, s in small.items()}
        wpost = {n: ConceptWalkPostprocessor(kb=s, caller=ALL) for n, s in small.items()}
        flat = ConceptwalkRetriever(small["p"], caller=ALL, k=3)  # public nodes: every tenant sees them
        differ = 0
        for q in QUERIES[:12]:
            got_a, got_b = shared.retrieve(q, caller=a), shared.retrieve(q, caller=b)
            assert _dump(got_a) == _dump(want["a"].retrieve(q))
            assert _dump(got_b) == _dump(want["b"].retrieve(q))
            assert _dump(shared.retrieve(q)) == _dump(want["p"].retrieve(q))
            wa, wb = _dump(want["a"].retrieve(q)), _dump(want["b"].retrieve(q))  # outside the block: it applies to all
            with caller_context(b):
                assert _dump(shared.retrieve(q)) == wb
                assert _dump(shared.retrieve(q, caller=a)) == wa  # the call's own wins
            differ += _dump(got_a) != _dump(got_b)
            inc = flat.retrieve(q)
            for n, c in (("a", a), ("b", b)):
                want_nodes = _dump(wpost[n].postprocess_nodes(list(inc), query_str=q))
                assert _dump(post.postprocess_nodes(list(inc), query_str=q, caller=c)) == want_nodes
                with caller_context(c):
                    assert _dump(post.postprocess_nodes(list(inc), query_bundle=QueryBundle(q))) == want_nodes
        assert differ

        async def both(q: str) -> tuple[Any, Any]:
            async def one(c: Caller) -> Any:
                with caller_context(c):
                    return await shared.aretrieve(q)

            return await asyncio.gather(one(a), one(b))

        ga, gb = asyncio.run(both(QUERIES[0]))
        assert _dump(ga) == _dump(want["a"].retrieve(QUERIES[0]))
        assert _dump(gb) == _dump(want["b"].retrieve(QUERIES[0]))
        assert _dump(asyncio.run(shared.aretrieve(QUERIES[1], caller=b))) == _dump(want["b"].retrieve(QUERIES[1]))
    finally:
        for s in small.values():
            s.close()


@pytest.mark.parametrize("bad", [None, "tenant-a"])
def test_a_caller_block_or_argument_that_is_not_a_caller_is_refused(kb: Any, bad: Any) -> None:
    from conceptwalk.integrations.llama_index import caller_context

    r = ConceptwalkRetriever(kb, caller=P)
    with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
        with caller_context(bad):
            pass
    if bad is not None:  # None as the argument means "not given": the block's or the retriever's
        with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
            r.retrieve(QUERIES[0], caller=bad)
        with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
            ConceptWalkPostprocessor(kb=kb, caller=P).postprocess_nodes([], query_str="q", caller=bad)
