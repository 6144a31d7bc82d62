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


# --------------------------------------------------------------------------- constructor errors (issue 37)
P = Caller.public()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kb": KB, "caller": None}, "caller must be a conceptwalk.Caller, got NoneType"),
        ({"kb": KB}, "caller must be a conceptwalk.Caller, got NoneType"),
        ({"kb": KB, "caller": "tenant-a"}, "caller must be a conceptwalk.Caller, got str"),
        ({"kb": KB, "caller": P, "k": 0}, "k must be a positive integer, got 0"),
        ({"kb": KB, "caller": P, "k": True}, "k must be a positive integer, got True"),
        ({"kb": KB, "caller": P, "k": "3"}, "k must be a positive integer, got '3'"),
        ({"kb": KB, "caller": P, "k": 2.0}, "k must be a positive integer, got 2.0"),
        (
            {"kb": KB, "caller": P, "concept_walk": "yes"},
            "ConceptwalkRetriever: concept_walk must be True or False, got str",
        ),
        ({"kb": KB, "caller": P, "config": 3}, "config must be a WalkConfig, got int"),
        ({"kb": 3, "caller": P}, "kb must be a KnowledgeBase or a LinkGraph, got int"),
        ({"caller": P}, "kb must be a KnowledgeBase or a LinkGraph, got NoneType"),
        ({"kb": KB, "caller": P, "tags": 3}, "ConceptwalkRetriever: tags: "),
    ],
)
def test_constructor_raises_the_library_s_errors_and_one_rule_for_k(kwargs: dict[str, Any], message: str) -> None:
    """Issue 37: pydantic's ValidationError (and its coercion of k=True to 1, k="3" to 3) was
    what a bad argument met; now the library's InputError, with the same rule for k as invoke."""
    with pytest.raises(InputError) as got:
        ConceptwalkRetriever(**kwargs)
    assert str(got.value).startswith(message) and type(got.value) is InputError


def test_k_refused_alike_at_construction_and_per_call() -> None:
    r = ConceptwalkRetriever(kb=KB, caller=P, k=2)
    for bad in (True, "3", 0, -1):
        with pytest.raises(InputError) as per_call:
            r.invoke(QUERIES[0], k=bad)
        with pytest.raises(InputError) as built:
            ConceptwalkRetriever(kb=KB, caller=P, k=bad)
        assert str(per_call.value) == str(built.value)


def test_wrap_retriever_constructor_raises_the_library_s_errors() -> None:
    base = _ListRetriever(docs=[])
    for kwargs, message in [
        ({"retriever": base, "kb": KB, "caller": None}, "caller must be a conceptwalk.Caller, got NoneType"),
        ({"retriever": 3, "kb": KB, "caller": P}, "ConceptWalkWrapRetriever: retriever: "),
        ({"retriever": base, "kb": KB, "caller": P, "id_key": 3}, "ConceptWalkWrapRetriever: id_key: "),
    ]:
        with pytest.raises(InputError) as got:
            ConceptWalkWrapRetriever(**kwargs)
        assert str(got.value).startswith(message)


# --------------------------------------------------------------------------- the caller per call (issue 32)
def _as(caller: Caller) -> dict[str, Any]:
    return {"configurable": {"caller": caller}}


def test_one_retriever_two_callers_per_call_equal_the_deleted_stores() -> None:
    """One retriever instance serves two tenants through LangChain's run-time configuration;
    each answer equals the store with that tenant's hidden nodes deleted; a call naming no caller
    answers for the retriever's own (public here), never for the last tenant's."""
    a, b = Caller.with_scopes("tenant-a"), Caller.with_scopes("tenant-c")
    small = {name: deleted_store(NODES, EDGES, ALIASES, c) for name, c in (("a", a), ("b", b), ("p", P))}
    try:
        for walk in (False, True):
            shared = ConceptwalkRetriever(kb=KB, caller=P, k=4, concept_walk=walk)
            want = {
                n: ConceptwalkRetriever(kb=s, caller=Caller.all_access(), k=4, concept_walk=walk)
                for n, s in small.items()
            }
            differ = 0
            for q in QUERIES[:12]:
                got_a = shared.invoke(q, config=_as(a))
                got_b = shared.invoke(q, config=_as(b))
                got_p = shared.invoke(q)
                assert _dump(got_a) == _dump(want["a"].invoke(q))
                assert _dump(got_b) == _dump(want["b"].invoke(q))
                assert _dump(got_p) == _dump(want["p"].invoke(q))
                differ += _dump(got_a) != _dump(got_b)
            assert differ  # the two tenants do see different things on these queries
            # the same through batch (one config per input, run concurrently), ainvoke and with_config
            qs = QUERIES[:6]
            got = shared.batch(qs + qs, config=[_as(a)] * len(qs) + [_as(b)] * len(qs))
            assert [_dump(d) for d in got] == [_dump(want["a"].invoke(q)) for q in qs] + [
                _dump(want["b"].invoke(q)) for q in qs
            ]
            assert _dump(asyncio.run(shared.ainvoke(qs[0], config=_as(b)))) == _dump(want["b"].invoke(qs[0]))
            assert _dump(shared.with_config(_as(a)).invoke(qs[1])) == _dump(want["a"].invoke(qs[1]))
    finally:
        for s in small.values():
            s.close()


def test_wrap_retriever_passes_the_call_s_caller_to_its_base() -> None:
    a = Caller.with_scopes("tenant-c")
    small = deleted_store(NODES, EDGES, ALIASES, a)
    try:
        base = ConceptwalkRetriever(kb=KB, caller=P, k=3)
        wrap = ConceptWalkWrapRetriever(retriever=base, kb=KB, caller=P, concept_walk=True)
        ref = ConceptWalkWrapRetriever(
            retriever=ConceptwalkRetriever(kb=small, caller=Caller.all_access(), k=3),
            kb=small,
            caller=Caller.all_access(),
            concept_walk=True,
        )
        for q in QUERIES[:10]:
            assert _dump(wrap.invoke(q, config=_as(a))) == _dump(ref.invoke(q))
    finally:
        small.close()


@pytest.mark.parametrize("bad", [None, "tenant-a", {"scopes": ["tenant-a"]}])
def test_a_configured_caller_that_is_not_a_caller_is_refused(bad: Any) -> None:
    r = ConceptwalkRetriever(kb=KB, caller=P)
    with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
        r.invoke(QUERIES[0], config=_as(bad))
    with pytest.raises(InputError, match="caller must be a conceptwalk.Caller"):
        asyncio.run(r.ainvoke(QUERIES[0], config=_as(bad)))


def test_the_configured_caller_stays_out_of_the_callbacks_metadata() -> None:
    from langchain_core.callbacks import BaseCallbackHandler

    seen: list[Any] = []

    class Spy(BaseCallbackHandler):
        def on_retriever_start(self, serialized: Any, query: str, **kwargs: Any) -> None:
            seen.append(kwargs)

    secret = Caller.with_scopes("tenant-a")
    r = ConceptwalkRetriever(kb=KB, caller=P, k=2)
    r.invoke(QUERIES[0], config={"configurable": {"caller": secret}, "callbacks": [Spy()]})
    assert seen and all(secret not in (kw.get("metadata") or {}).values() for kw in seen)
    assert "tenant-a" not in repr(seen)
