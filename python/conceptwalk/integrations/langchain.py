"""LangChain retrievers over a conceptwalk knowledge base (``pip install "conceptwalk[langchain]"``).

- :class:`ConceptwalkRetriever`: the knowledge base's own search for a caller, optionally wrapped
  by the concept walk; ``Document`` text is the node's title and body, metadata carry ``id``,
  ``type``, ``score``, ``via``, ``paths`` and ``provenance``.
- :class:`ConceptWalkWrapRetriever`: the wrap over any LangChain retriever: its documents first,
  unchanged and in order, then the concept walk's additions.

Examples
--------
>>> from conceptwalk import Caller
>>> from conceptwalk.kb.store import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "c:auth", "type": "CONCEPT", "title": "authentication"},
...                   {"id": "f:login", "type": "FILE", "title": "login.py", "body": "def login(): ..."}])
>>> _ = kb.add_edges([("c:auth", "f:login", "IMPLEMENTED_BY")])
>>> r = ConceptwalkRetriever(kb=kb, caller=Caller.all_access(), k=1, concept_walk=True)
>>> [(d.metadata["id"], d.metadata["via"]) for d in r.invoke("authentication")]
[('c:auth', 'flat'), ('f:login', 'concept-walk')]
>>> r.invoke("authentication", k=2)[1].page_content
'login.py\\n\\ndef login(): ...'
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, PrivateAttr
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        'conceptwalk.integrations.langchain needs langchain-core: pip install "conceptwalk[langchain]"'
    ) from exc

from ..graph.checks import check_count
from ..tools.common import check_caller
from . import bodies, result_metadata, result_text

__all__ = ["ConceptwalkRetriever", "ConceptWalkWrapRetriever"]

_HITS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("conceptwalk_wrap_hits")


def _documents(kb: Any, results: list[dict[str, Any]]) -> list[Document]:
    body = bodies(kb, [r["id"] for r in results])
    return [
        Document(page_content=result_text(r, body.get(r["id"])), metadata=result_metadata(r), id=r["id"])
        for r in results
    ]


class _Base(BaseRetriever):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    kb: Any
    """The knowledge base (:class:`conceptwalk.kb.KnowledgeBase`)."""
    caller: Any
    """Whose visibility applies (:class:`conceptwalk.Caller`; required: no default access)."""
    concept_walk: bool = False
    """Append the concept walk's additions after the search results."""
    config: Any = None
    """The walk's :class:`conceptwalk.wrap.WalkConfig` (None: the defaults)."""
    _retrievers: dict[Any, Any] = PrivateAttr(default_factory=dict)

    def model_post_init(self, __context: Any) -> None:
        """Check the caller (pydantic's post-init hook)."""
        check_caller(self.caller)

    def _wrap(self, flat: Any, key: Any) -> Any:
        from ..wrap import ConceptAnchoredRetriever

        r = self._retrievers.get(key)
        if r is None:
            r = self._retrievers[key] = ConceptAnchoredRetriever(flat, self.kb, config=self.config)
        return r


class ConceptwalkRetriever(_Base):
    """The knowledge base's own search for ``caller`` (BM25 over what it sees), top ``k``;
    with ``concept_walk=True`` the walk's additions follow. ``k`` can be given per call
    (``retriever.invoke(query, k=3)``). Sync and async (``ainvoke``)."""

    k: int = 4
    """Search results returned (the walk may append more)."""

    def model_post_init(self, __context: Any) -> None:
        """Check the caller and ``k`` (pydantic's post-init hook)."""
        super().model_post_init(__context)
        check_count(self.k)

    def _results(self, query: str, k: int | None) -> list[Document]:
        from ..wrap import builtin_flat_search

        kk = check_count(self.k if k is None else k)
        r = self._wrap(builtin_flat_search(self.kb, caller=self.caller), "own")
        return _documents(self.kb, list(r.query(query, kk, concept_walk=self.concept_walk, caller=self.caller)))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return self._results(query, k)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        return await asyncio.to_thread(self._results, query, k)


class ConceptWalkWrapRetriever(_Base):
    """The wrap over any LangChain retriever: ``retriever``'s documents first, unchanged and in
    their order, then the concept walk's additions (not already among them) as new documents.

    ``id_key`` names the metadata key holding a document's node id (a document without it is
    kept, but does not anchor the walk). With nothing to add, the base retriever's list is
    returned as it is."""

    retriever: BaseRetriever
    """The retriever whose results are wrapped."""
    id_key: str = "id"

    def _merge(self, query: str, docs: list[Document]) -> list[Document]:
        hits = [
            {"id": d.metadata[self.id_key], "score": d.metadata.get("score")}
            for d in docs
            if isinstance(d.metadata.get(self.id_key), str)
        ]
        r = self._wrap(lambda text, k: _HITS.get()[:k], "wrap")  # this call's hits (a context variable)
        token = _HITS.set(hits)
        try:
            results = list(r.query(query, max(len(hits), 1), concept_walk=self.concept_walk, caller=self.caller))
        finally:
            _HITS.reset(token)
        added = [x for x in results if x.get("via") == "concept-walk"]
        if not added:
            return docs
        return docs + _documents(self.kb, added)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = self.retriever.invoke(query, config={"callbacks": run_manager.get_child()}, **kwargs)
        return self._merge(query, docs)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = await self.retriever.ainvoke(query, config={"callbacks": run_manager.get_child()}, **kwargs)
        return await asyncio.to_thread(self._merge, query, docs)
