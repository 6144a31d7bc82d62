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
