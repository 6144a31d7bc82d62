"""conceptwalk.integrations.langchain: LangChain's own standard retriever tests
(langchain-tests' RetrieversIntegrationTests), metadata and text, per-call k, async, the wrap over
another retriever (its documents first, unchanged), and the deletion oracle for a scoped caller."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain_core")
langchain_tests = pytest.importorskip("langchain_tests.integration_tests")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402

from conceptwalk import Caller  # noqa: E402
from conceptwalk.errors import InputError  # noqa: E402
from conceptwalk.integrations.langchain import ConceptWalkWrapRetriever, ConceptwalkRetriever  # noqa: E402
from conceptwalk.kb.store import KnowledgeBase  # noqa: E402
from conceptwalk.kb.synthetic import generate  # noqa: E402
from deletion_oracle import deleted_store  # noqa: E402

SYN = generate(150, seed=11)
NODES, EDGES, ALIASES = list(SYN.node_rows()), list(SYN.edge_rows()), list(SYN.alias_rows())
QUERIES = [q["text"] for q in SYN.queries()]


def _kb() -> KnowledgeBase:
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(NODES)
    kb.add_edges(EDGES)
    kb.add_aliases(ALIASES)
    return kb


KB = _kb()


@pytest.mark.asyncio  # the standard suite's async test runs under pytest-asyncio (strict mode)
class TestConceptwalkRetrieverStandard(langchain_tests.RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[ConceptwalkRetriever]:
        return ConceptwalkRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"kb": KB, "caller": Caller.all_access(), "k": 3}

    @property
    def retriever_query_example(self) -> str:
        return "auth controller indexing"


class _ListRetriever(BaseRetriever):
    """A stand-in for any retriever: fixed documents."""

    docs: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return list(self.docs)


def _dump(docs: list[Document]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(d.id or "", d.page_content, d.metadata) for d in docs]


def test_documents_carry_text_and_metadata_and_k_per_call() -> None:
    r = ConceptwalkRetriever(kb=KB, caller=Caller.all_access(), k=2, concept_walk=True)
    q = next(t for t in QUERIES if len(r.invoke(t)) > 2)
    docs = r.invoke(q)
    flat = [d for d in docs if d.metadata["via"] == "flat"]
    walked = [d for d in docs if d.metadata["via"] == "concept-walk"]
    assert len(flat) == 2 and walked and docs[:2] == flat
    for d in docs:
        row = KB.node(d.metadata["id"])
        assert d.page_content == "\n\n".join(p for p in (row["title"], row["body"]) if p)
        assert set(d.metadata) == {"id", "type", "score", "via", "paths", "provenance"}
        assert d.metadata["type"] == row["type"] and isinstance(d.metadata["score"], float)
    assert all(d.metadata["paths"] and len(d.metadata["provenance"]) == len(d.metadata["paths"]) for d in walked)
    assert len([d for d in r.invoke(q, k=1) if d.metadata["via"] == "flat"]) == 1
    assert _dump(asyncio.run(r.ainvoke(q))) == _dump(docs)
    with pytest.raises(InputError, match="k must be a positive integer"):
        r.invoke(q, k=0)
    with pytest.raises(Exception, match="caller"):
        ConceptwalkRetriever(kb=KB, caller=None)


def test_wrap_over_another_retriever_appends_and_never_reorders() -> None:
    base = ConceptwalkRetriever(kb=KB, caller=Caller.all_access(), k=3)
    for q in QUERIES[:12]:
        incoming = base.invoke(q)
        wrapped = ConceptWalkWrapRetriever(
            retriever=_ListRetriever(docs=incoming), kb=KB, caller=Caller.all_access(), concept_walk=True
        ).invoke(q)
        assert _dump(wrapped[: len(incoming)]) == _dump(incoming)
        assert all(d.metadata["via"] == "concept-walk" for d in wrapped[len(incoming) :])
        ids = [d.metadata["id"] for d in wrapped]
        assert len(ids) == len(set(ids))
    # off: the incoming list, untouched
    off = ConceptWalkWrapRetriever(retriever=_ListRetriever(docs=incoming), kb=KB, caller=Caller.all_access())
    assert _dump(off.invoke(QUERIES[0])) == _dump(incoming)
    # documents without ids are kept in place
    plain = [Document(page_content="no id here")]
    out = ConceptWalkWrapRetriever(
        retriever=_ListRetriever(docs=plain), kb=KB, caller=Caller.all_access(), concept_walk=True
    ).invoke(QUERIES[0])
    assert out[0] is plain[0] or _dump(out[:1]) == _dump(plain)
    assert asyncio.run(
        ConceptWalkWrapRetriever(
            retriever=_ListRetriever(docs=incoming), kb=KB, caller=Caller.all_access(), concept_walk=True
        ).ainvoke(QUERIES[0])
    )


def test_scoped_caller_equals_the_store_with_hidden_nodes_deleted() -> None:
    caller = Caller.with_scopes("tenant-a")
    small = deleted_store(NODES, EDGES, ALIASES, caller)
    assert small is not None
    try:
        for walk in (False, True):
            got = ConceptwalkRetriever(kb=KB, caller=caller, k=4, concept_walk=walk)
            want = ConceptwalkRetriever(kb=small, caller=Caller.all_access(), k=4, concept_walk=walk)
            for q in QUERIES[:15]:
                assert _dump(got.invoke(q)) == _dump(want.invoke(q))
    finally:
        small.close()
