"""LlamaIndex adapters over a conceptwalk knowledge base (``pip install "conceptwalk[llamaindex]"``).

- :class:`ConceptwalkRetriever`: the knowledge base's own search for a caller, optionally wrapped
  by the concept walk, as ``NodeWithScore``s whose text is the node's title and body and whose
  metadata carry ``id``, ``type``, ``score``, ``via``, ``paths`` and ``provenance``.
- :class:`ConceptWalkPostprocessor`: the wrap as a node postprocessor: the incoming nodes first,
  never reordered or dropped (the very list when the walk adds nothing), then the concept walk's
  additions.

The caller per call: LlamaIndex has no run-time configuration (a ``QueryBundle`` holds the query
and its embedding only; the framework's own answer to a per-request filter is a retriever per
request). Here one retriever serves every tenant: ``retrieve(q, caller=c)`` /
``postprocess_nodes(nodes, query_str=q, caller=c)`` for a direct call, and the
:func:`caller_context` block for the calls a query engine makes for you
(``with caller_context(c): engine.query(q)``). A call given neither answers for the adapter's
own ``caller`` (required at construction: make it ``Caller.public()`` on a multi-tenant server);
a caller that is not a :class:`~conceptwalk.Caller` is refused (error E40).

Examples
--------
>>> from conceptwalk import Caller
>>> from conceptwalk.kb.store import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "c:auth", "type": "CONCEPT", "title": "authentication"},
...                   {"id": "f:login", "type": "FILE", "title": "login.py", "body": "def login(): ..."}])
>>> _ = kb.add_edges([("c:auth", "f:login", "IMPLEMENTED_BY")])
>>> r = ConceptwalkRetriever(kb, caller=Caller.all_access(), k=1, concept_walk=True)
>>> [(n.node.metadata["id"], n.node.metadata["via"]) for n in r.retrieve("authentication")]
[('c:auth', 'flat'), ('f:login', 'concept-walk')]
>>> r.retrieve("authentication", k=2)[1].node.get_content()
'login.py\\n\\ndef login(): ...'
>>> [n.node.metadata["id"] for n in r.retrieve("authentication", caller=Caller.public())]
['c:auth', 'f:login']
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

try:
    from llama_index.core.bridge.pydantic import ConfigDict, PrivateAttr, ValidationError
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError(
        'conceptwalk.integrations.llama_index needs llama-index-core: pip install "conceptwalk[llamaindex]"'
    ) from exc

from ..errors import InputError
from ..graph.checks import check_count
from ..tools.common import check_caller
from . import bodies, check_fields, framework_error, result_metadata, result_text

__all__ = ["ConceptwalkRetriever", "ConceptWalkPostprocessor", "caller_context"]

_K: contextvars.ContextVar[int | None] = contextvars.ContextVar("conceptwalk_llama_k", default=None)
_HITS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("conceptwalk_llama_hits")
#: The caller of the calls made in this context (:func:`caller_context`; None: the adapter's own).
_CALLER: contextvars.ContextVar[Any] = contextvars.ContextVar("conceptwalk_llama_caller", default=None)


@contextmanager
def caller_context(caller: Any) -> Iterator[Any]:
    """Answer the conceptwalk retrievals and postprocessing made inside the block for ``caller``
    (a context variable: the calls a query engine makes for you, sync or async, in this thread
    or in the tasks it starts).

    Parameters
    ----------
    caller : Caller
        Whose visibility applies inside the block (required: ``None`` is refused).

    Yields
    ------
    Caller
        ``caller``.

    Raises
    ------
    InputError
        ``caller`` is not a :class:`~conceptwalk.Caller`.

    Examples
    --------
    >>> from conceptwalk import Caller
    >>> from conceptwalk.kb.store import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "a", "title": "walks"}, {"id": "b", "title": "walks", "scopes": ["t1"]}])
    >>> r = ConceptwalkRetriever(kb, caller=Caller.public())
    >>> with caller_context(Caller.with_scopes("t1")):
    ...     [n.node.node_id for n in r.retrieve("walks")]
    ['a', 'b']
    >>> [n.node.node_id for n in r.retrieve("walks")]
    ['a']
    """
    token = _CALLER.set(check_caller(caller))
    try:
        yield caller
    finally:
        _CALLER.reset(token)


def _call_caller(own: Any, given: Any) -> Any:
    """A call's caller: ``given`` (checked) when named, else the block's, else the adapter's."""
    if given is not None:
        return check_caller(given)
    c = _CALLER.get()
    return own if c is None else c


def _nodes(kb: Any, results: list[dict[str, Any]]) -> list[NodeWithScore]:
    body = bodies(kb, [r["id"] for r in results])
    out = []
    for r in results:
        meta = result_metadata(r)
        node = TextNode(
            text=result_text(r, body.get(r["id"])),
            id_=r["id"],
            metadata=meta,
            excluded_embed_metadata_keys=["paths", "provenance"],
            excluded_llm_metadata_keys=["paths", "provenance"],
        )
        out.append(NodeWithScore(node=node, score=meta["score"]))
    return out


class ConceptwalkRetriever(BaseRetriever):
    """The knowledge base's own search for the caller (BM25 over what it sees), top ``k``; with
    ``concept_walk=True`` the walk's additions follow. ``retrieve(query, k=3, caller=c)`` sets
    ``k`` and the caller for one call (see :func:`caller_context` for calls made by a query
    engine). Sync and async (``aretrieve``). A bad argument raises
    :class:`conceptwalk.errors.InputError`.

    Parameters
    ----------
    kb : KnowledgeBase
    caller : Caller
        Whose visibility applies when a call names no other (required: no default access).
    k : int, default 4
    concept_walk : bool, default False
    config : WalkConfig, optional
    **kwargs
        Passed to LlamaIndex's ``BaseRetriever`` (``callback_manager``, ``verbose``, ...).
    """

    def __init__(
        self, kb: Any, *, caller: Any = None, k: int = 4, concept_walk: bool = False, config: Any = None, **kwargs: Any
    ) -> None:
        from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

        check_fields(type(self).__name__, {"caller": caller, "k": k, "concept_walk": concept_walk}, k=True)
        self.kb, self.caller, self.k, self.concept_walk = kb, caller, k, concept_walk
        # one flat search for every caller: each query names its own
        self._wrap = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=config)
        super().__init__(**kwargs)

    def retrieve(self, str_or_query_bundle: Any, k: int | None = None, *, caller: Any = None) -> list[NodeWithScore]:
        """LlamaIndex's ``retrieve``, with ``k`` and the caller for this call.

        Parameters
        ----------
        str_or_query_bundle : str or QueryBundle
            The query.
        k : int, optional
            Search results for this call (None: the retriever's ``k``).
        caller : Caller, optional
            Whose visibility applies to this call (None: the :func:`caller_context` block's,
            else the retriever's ``caller``).

        Returns
        -------
        list of NodeWithScore
        """
        tk = _K.set(None if k is None else check_count(k))
        tc = _CALLER.set(_CALLER.get() if caller is None else check_caller(caller))
        try:
            return super().retrieve(str_or_query_bundle)
        finally:
            _CALLER.reset(tc)
            _K.reset(tk)

    async def aretrieve(
        self, str_or_query_bundle: Any, k: int | None = None, *, caller: Any = None
    ) -> list[NodeWithScore]:
        """LlamaIndex's ``aretrieve``, with ``k`` and the caller for this call.

        Parameters
        ----------
        str_or_query_bundle : str or QueryBundle
            The query.
        k : int, optional
            Search results for this call (None: the retriever's ``k``).
        caller : Caller, optional
            Whose visibility applies to this call (None: the :func:`caller_context` block's,
            else the retriever's ``caller``).

        Returns
        -------
        list of NodeWithScore
        """
        tk = _K.set(None if k is None else check_count(k))
        tc = _CALLER.set(_CALLER.get() if caller is None else check_caller(caller))
        try:
            return await super().aretrieve(str_or_query_bundle)
        finally:
            _CALLER.reset(tc)
            _K.reset(tk)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        k = _K.get() or self.k
        who = _call_caller(self.caller, None)
        results = list(self._wrap.query(query_bundle.query_str, k, concept_walk=self.concept_walk, caller=who))
        return _nodes(self.kb, results)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


class ConceptWalkPostprocessor(BaseNodePostprocessor):
    """The wrap as a node postprocessor: the incoming nodes first, in their order and unchanged,
    then the concept walk's additions (not already among them). The incoming nodes anchor the
    walk by ``metadata[id_key]`` (default ``"id"``), else by their node id; with nothing to add
    the incoming list itself is returned. ``postprocess_nodes(..., caller=c)`` (or a
    :func:`caller_context` block) names the caller of one call; else ``caller`` applies.

    Parameters
    ----------
    kb : KnowledgeBase
        The knowledge base the walk reads.
    caller : Caller
        Whose visibility applies when a call names no caller (required: no default access).
    config : WalkConfig, optional
        The walk's configuration.
    id_key : str, default "id"
        The metadata key holding a node's id (else its node id).
    **kwargs
        LlamaIndex's own postprocessor fields (``callback_manager``).

    Raises
    ------
    InputError
        A bad argument (never pydantic's ``ValidationError``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    kb: Any
    caller: Any
    config: Any = None
    id_key: str = "id"
    _wrap: Any = PrivateAttr(default=None)

    def __init__(
        self, *, kb: Any = None, caller: Any = None, config: Any = None, id_key: str = "id", **kwargs: Any
    ) -> None:
        # The library's checks and errors first (pydantic would wrap our InputError in its
        # ValidationError); what is left to pydantic is re-raised as ours.
        from ..wrap import ConceptAnchoredRetriever

        data = dict(kwargs, kb=kb, caller=caller, config=config, id_key=id_key)
        check_fields(type(self).__name__, data)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise framework_error(type(self).__name__, exc) from None
        self._wrap = ConceptAnchoredRetriever(lambda text, k: _HITS.get()[:k], self.kb, config=self.config)

    def postprocess_nodes(
        self,
        nodes: list[NodeWithScore],
        query_bundle: QueryBundle | None = None,
        query_str: str | None = None,
        *,
        caller: Any = None,
    ) -> list[NodeWithScore]:
        """LlamaIndex's ``postprocess_nodes``, with the caller for this call.

        Parameters
        ----------
        nodes : list of NodeWithScore
            The incoming nodes (kept first, in order).
        query_bundle : QueryBundle, optional
            The query (or ``query_str``).
        query_str : str, optional
            The query.
        caller : Caller, optional
            Whose visibility applies to this call (None: the :func:`caller_context` block's,
            else the postprocessor's ``caller``).

        Returns
        -------
        list of NodeWithScore
        """
        token = _CALLER.set(_CALLER.get() if caller is None else check_caller(caller))
        try:
            return super().postprocess_nodes(nodes, query_bundle=query_bundle, query_str=query_str)
        finally:
            _CALLER.reset(token)

    @classmethod
    def class_name(cls) -> str:
        """LlamaIndex's serialisation name.

        Returns
        -------
        str
        """
        return "ConceptWalkPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise InputError("ConceptWalkPostprocessor needs the query (query_bundle or query_str)")
        hits = []
        for n in nodes:
            nid = n.node.metadata.get(self.id_key, n.node.node_id)
            if isinstance(nid, str):
                hits.append({"id": nid, "score": n.score})
        token = _HITS.set(hits)
        try:
            results = list(
                self._wrap.query(
                    query_bundle.query_str, max(len(hits), 1), concept_walk=True, caller=_call_caller(self.caller, None)
                )
            )
        finally:
            _HITS.reset(token)
        added = [r for r in results if r.get("via") == "concept-walk"]
        if not added:
            return nodes
        return nodes + _nodes(self.kb, added)
