"""LangChain retrievers over a conceptwalk knowledge base (``pip install "conceptwalk[langchain]"``).

- :class:`ConceptwalkRetriever`: the knowledge base's own search for a caller, optionally wrapped
  by the concept walk; ``Document`` text is the node's title and body, metadata carry ``id``,
  ``type``, ``score``, ``via``, ``paths`` and ``provenance``.
- :class:`ConceptWalkWrapRetriever`: the wrap over any LangChain retriever: its documents first,
  unchanged and in order, then the concept walk's additions.

The caller per call: LangChain's run-time configuration, ``config={"configurable": {"caller":
c}}`` (on ``invoke``, ``ainvoke``, ``batch``, a chain's ``invoke``, or ``with_config``), answers
for ``c``; a call that names none answers for the retriever's own ``caller``; a named caller
that is not a :class:`~conceptwalk.Caller` is refused (error E40). So one retriever serves every
tenant: build it with ``caller=Caller.public()`` and name the tenant's caller in each request.

Examples
--------
>>> from conceptwalk import Caller
>>> from conceptwalk.kb.store import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "c:auth", "type": "CONCEPT", "title": "authentication"},
...                   {"id": "f:login", "type": "FILE", "title": "login.py", "body": "def login(): ..."},
...                   {"id": "f:sso", "type": "FILE", "title": "sso authentication", "scopes": ["t1"]}])
>>> _ = kb.add_edges([("c:auth", "f:login", "IMPLEMENTED_BY")])
>>> r = ConceptwalkRetriever(kb=kb, caller=Caller.public(), k=1, concept_walk=True)
>>> [(d.metadata["id"], d.metadata["via"]) for d in r.invoke("authentication")]
[('c:auth', 'flat'), ('f:login', 'concept-walk')]
>>> r.invoke("authentication", k=2)[1].page_content
'login.py\\n\\ndef login(): ...'
>>> t1 = {"configurable": {"caller": Caller.with_scopes("t1")}}
>>> [d.metadata["id"] for d in r.invoke("sso authentication", config=t1, k=2)]
['f:sso', 'c:auth', 'f:login']
>>> [d.metadata["id"] for d in r.invoke("sso authentication", k=2)]
['c:auth', 'f:login']
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any, ClassVar

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableConfig, ensure_config
    from pydantic import ConfigDict, PrivateAttr, ValidationError
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        'conceptwalk.integrations.langchain needs langchain-core: pip install "conceptwalk[langchain]"'
    ) from exc

from ..graph.checks import check_count
from ..tools.common import check_caller
from . import bodies, check_fields, framework_error, result_metadata, result_text

__all__ = ["ConceptwalkRetriever", "ConceptWalkWrapRetriever"]

_HITS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("conceptwalk_wrap_hits")
#: This call's caller (from ``config["configurable"]["caller"]``; None: the retriever's own).
_CALLER: contextvars.ContextVar[Any] = contextvars.ContextVar("conceptwalk_langchain_caller", default=None)


def _configured_caller(config: RunnableConfig | None) -> Any:
    """The caller a call's run-time configuration names (checked), or None when it names none."""
    conf = ensure_config(config).get("configurable") or {}
    return check_caller(conf["caller"]) if "caller" in conf else None


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
    """Whose visibility applies when a call names no caller (:class:`conceptwalk.Caller`;
    required: no default access). A call names one with ``config={"configurable": {"caller": c}}``."""
    concept_walk: bool = False
    """Append the concept walk's additions after the search results."""
    config: Any = None
    """The walk's :class:`conceptwalk.wrap.WalkConfig` (None: the defaults)."""
    _retriever: Any = PrivateAttr(default=None)
    _takes_k: ClassVar[bool] = False

    def _checked_init(self, data: dict[str, Any]) -> None:
        # The library's checks and errors first (pydantic would coerce k=True to 1 and wrap
        # our InputError in its ValidationError); what is left to pydantic is re-raised as ours.
        check_fields(type(self).__name__, data, k=self._takes_k)
        try:
            BaseRetriever.__init__(self, **data)
        except ValidationError as exc:
            raise framework_error(type(self).__name__, exc) from None
        from ..wrap import ConceptAnchoredRetriever

        # Built now: a bad kb or config fails here, and the first query costs what the next does.
        self._retriever = ConceptAnchoredRetriever(self._flat(), self.kb, config=self.config)

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """LangChain's ``invoke``; ``config={"configurable": {"caller": c}}`` answers for ``c``.

        Parameters
        ----------
        input : str
            The query.
        config : RunnableConfig, optional
            LangChain's run-time configuration; its ``configurable["caller"]`` (a
            :class:`conceptwalk.Caller`) is this call's caller (absent: the retriever's ``caller``).
        **kwargs
            Passed on (``k=`` for :class:`ConceptwalkRetriever`).

        Returns
        -------
        list of Document
        """
        token = _CALLER.set(_configured_caller(config))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            _CALLER.reset(token)

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """LangChain's ``ainvoke``, with the caller per call as for :meth:`invoke`.

        Parameters
        ----------
        input : str
            The query.
        config : RunnableConfig, optional
            As for :meth:`invoke`.
        **kwargs
            Passed on.

        Returns
        -------
        list of Document
        """
        token = _CALLER.set(_configured_caller(config))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            _CALLER.reset(token)

    def _caller(self) -> Any:
        """This call's caller: the configured one, else the retriever's."""
        c = _CALLER.get()
        return self.caller if c is None else c

    def _flat(self) -> Any:  # pragma: no cover - every retriever below defines it
        raise NotImplementedError


class ConceptwalkRetriever(_Base):
    """The knowledge base's own search for the caller (BM25 over what it sees), top ``k``;
    with ``concept_walk=True`` the walk's additions follow. ``k`` can be given per call
    (``retriever.invoke(query, k=3)``), and so can the caller
    (``config={"configurable": {"caller": c}}``; absent: ``caller``). Sync and async
    (``ainvoke``). A LangChain ``BaseRetriever``.

    Parameters
    ----------
    kb : KnowledgeBase
        The knowledge base searched.
    caller : Caller
        Whose visibility applies when a call names no caller (required: no default access).
    k : int, default 4
        Search results per call (a positive integer: ``True`` and ``"3"`` are refused).
    concept_walk : bool, default False
        Append the concept walk's additions.
    config : WalkConfig, optional
        The walk's configuration.
    **kwargs
        LangChain's own retriever fields (``tags``, ``metadata``).

    Raises
    ------
    InputError
        A bad argument (never pydantic's ``ValidationError``).
    """

    k: int = 4
    """Search results returned (the walk may append more)."""
    _takes_k: ClassVar[bool] = True

    def __init__(
        self,
        *,
        kb: Any = None,
        caller: Any = None,
        k: int = 4,
        concept_walk: bool = False,
        config: Any = None,
        **kwargs: Any,
    ) -> None:
        self._checked_init(dict(kwargs, kb=kb, caller=caller, k=k, concept_walk=concept_walk, config=config))

    def _flat(self) -> Any:
        from ..wrap import builtin_flat_search

        return builtin_flat_search(self.kb)  # one search for every caller: each query names its own

    def _results(self, query: str, k: int | None) -> list[Document]:
        kk = check_count(self.k if k is None else k)
        results = self._retriever.query(query, kk, concept_walk=self.concept_walk, caller=self._caller())
        return _documents(self.kb, list(results))

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
    returned as it is. The caller per call as for :class:`ConceptwalkRetriever`; the call's
    ``configurable`` is passed on to ``retriever``, so a conceptwalk base retriever answers for
    the same caller. A LangChain ``BaseRetriever``.

    Parameters
    ----------
    retriever : BaseRetriever
        The retriever whose documents come first.
    kb : KnowledgeBase
        The knowledge base the walk reads.
    caller : Caller
        Whose visibility applies when a call names no caller (required: no default access).
    concept_walk : bool, default False
        Run the walk (``False``: the retriever's documents as they are).
    config : WalkConfig, optional
        The walk's configuration.
    id_key : str, default "id"
        The metadata key holding a document's node id.
    **kwargs
        LangChain's own retriever fields (``tags``, ``metadata``).

    Raises
    ------
    InputError
        A bad argument (never pydantic's ``ValidationError``).
    """

    retriever: BaseRetriever
    """The retriever whose results are wrapped."""
    id_key: str = "id"

    def __init__(
        self,
        *,
        retriever: Any = None,
        kb: Any = None,
        caller: Any = None,
        concept_walk: bool = False,
        config: Any = None,
        id_key: str = "id",
        **kwargs: Any,
    ) -> None:
        data = dict(kwargs, retriever=retriever, kb=kb, caller=caller, concept_walk=concept_walk, config=config)
        self._checked_init(dict(data, id_key=id_key))

    def _flat(self) -> Any:
        return lambda text, k: _HITS.get()[:k]  # this call's hits (a context variable)

    def _child(self, run_manager: Any) -> RunnableConfig:
        """The base retriever's configuration: this run's child callbacks and this call's caller."""
        c = _CALLER.get()
        return {"callbacks": run_manager.get_child(), **({"configurable": {"caller": c}} if c is not None else {})}

    def _merge(self, query: str, docs: list[Document]) -> list[Document]:
        hits = [
            {"id": d.metadata[self.id_key], "score": d.metadata.get("score")}
            for d in docs
            if isinstance(d.metadata.get(self.id_key), str)
        ]
        token = _HITS.set(hits)
        try:
            results = list(
                self._retriever.query(query, max(len(hits), 1), concept_walk=self.concept_walk, caller=self._caller())
            )
        finally:
            _HITS.reset(token)
        added = [x for x in results if x.get("via") == "concept-walk"]
        if not added:
            return docs
        return docs + _documents(self.kb, added)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = self.retriever.invoke(query, config=self._child(run_manager), **kwargs)
        return self._merge(query, docs)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = await self.retriever.ainvoke(query, config=self._child(run_manager), **kwargs)
        return await asyncio.to_thread(self._merge, query, docs)
