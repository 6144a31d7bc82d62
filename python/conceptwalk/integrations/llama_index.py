"""LlamaIndex adapters over a conceptwalk knowledge base (``pip install "conceptwalk[llamaindex]"``).

- :class:`ConceptwalkRetriever`: the knowledge base's own search for a caller, optionally wrapped
  by the concept walk, as ``NodeWithScore``s whose text is the node's title and body and whose
  metadata carry ``id``, ``type``, ``score``, ``via``, ``paths`` and ``provenance``.
- :class:`ConceptWalkPostprocessor`: the wrap as a node postprocessor: the incoming nodes first,
  never reordered or dropped (the very list when the walk adds nothing), then the concept walk's
  additions.

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
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

try:
    from llama_index.core.bridge.pydantic import ConfigDict, PrivateAttr
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
from . import bodies, result_metadata, result_text

__all__ = ["ConceptwalkRetriever", "ConceptWalkPostprocessor"]

_K: contextvars.ContextVar[int | None] = contextvars.ContextVar("conceptwalk_llama_k", default=None)
_HITS: contextvars.ContextVar[list[dict[str, Any]]] = contextvars.ContextVar("conceptwalk_llama_hits")


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
    """The knowledge base's own search for ``caller`` (BM25 over what it sees), top ``k``; with
    ``concept_walk=True`` the walk's additions follow. ``retrieve(query, k=3)`` sets ``k`` for
    one call. Sync and async (``aretrieve``).

    Parameters
    ----------
    kb : KnowledgeBase
    caller : Caller
        Whose visibility applies (required: no default access).
    k : int, default 4
    concept_walk : bool, default False
    config : WalkConfig, optional
    **kwargs
        Passed to LlamaIndex's ``BaseRetriever`` (``callback_manager``, ``verbose``, ...).
    """

    def __init__(
        self, kb: Any, *, caller: Any, k: int = 4, concept_walk: bool = False, config: Any = None, **kwargs: Any
    ) -> None:
        from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

        self.kb, self.caller, self.k, self.concept_walk = kb, check_caller(caller), check_count(k), bool(concept_walk)
        self._wrap = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=self.caller), kb, config=config)
        super().__init__(**kwargs)

    def retrieve(self, str_or_query_bundle: Any, k: int | None = None) -> list[NodeWithScore]:
        """LlamaIndex's ``retrieve``, with ``k`` for this call.

        Parameters
        ----------
        str_or_query_bundle : str or QueryBundle
            The query.
        k : int, optional
            Search results for this call (None: the retriever's ``k``).

        Returns
        -------
        list of NodeWithScore
        """
        token = _K.set(None if k is None else check_count(k))
        try:
            return super().retrieve(str_or_query_bundle)
        finally:
            _K.reset(token)

    async def aretrieve(self, str_or_query_bundle: Any, k: int | None = None) -> list[NodeWithScore]:
        """LlamaIndex's ``aretrieve``, with ``k`` for this call.

        Parameters
        ----------
        str_or_query_bundle : str or QueryBundle
            The query.
        k : int, optional
            Search results for this call (None: the retriever's ``k``).

        Returns
        -------
        list of NodeWithScore
        """
        token = _K.set(None if k is None else check_count(k))
        try:
            return await super().aretrieve(str_or_query_bundle)
        finally:
            _K.reset(token)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        k = _K.get() or self.k
        results = list(self._wrap.query(query_bundle.query_str, k, concept_walk=self.concept_walk, caller=self.caller))
        return _nodes(self.kb, results)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)


class ConceptWalkPostprocessor(BaseNodePostprocessor):
    """The wrap as a node postprocessor: the incoming nodes first, in their order and unchanged,
    then the concept walk's additions (not already among them). The incoming nodes anchor the
    walk by ``metadata[id_key]`` (default ``"id"``), else by their node id; with nothing to add
    the incoming list itself is returned."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    kb: Any
    caller: Any
    config: Any = None
    id_key: str = "id"
    _wrap: Any = PrivateAttr(default=None)

    def model_post_init(self, __context: Any) -> None:
        """Check the caller and make the wrap (pydantic's post-init hook)."""
        from ..wrap import ConceptAnchoredRetriever

        check_caller(self.caller)
        self._wrap = ConceptAnchoredRetriever(lambda text, k: _HITS.get()[:k], self.kb, config=self.config)

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
                self._wrap.query(query_bundle.query_str, max(len(hits), 1), concept_walk=True, caller=self.caller)
            )
        finally:
            _HITS.reset(token)
        added = [r for r in results if r.get("via") == "concept-walk"]
        if not added:
            return nodes
        return nodes + _nodes(self.kb, added)
