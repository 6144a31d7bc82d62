"""The built-in flat search the CLI and the MCP server wrap: BM25 or embedding top-k over the
nodes the caller may see, every score computed as on the store with the caller's hidden nodes
deleted."""

from __future__ import annotations

from typing import Any

import numpy as np

from .embed import get_embedder
from ..errors import InputError
from ..graph.names import named_search, source_name_indexes
from ..graph import Caller
from ..graph.vectors import vector_topk
from ._reader import StoreReader

__all__ = ["BuiltinFlatSearch", "builtin_flat_search"]

_MODES = ("fts", "embedding")


class BuiltinFlatSearch:
    """A caller-aware flat search: ``search(text, k, *, caller=None)`` returns up to ``k`` dicts
    ``{"id", "type", "title", "score"}`` of nodes visible to ``caller`` (default: the caller
    given at construction; public only when neither is given), best first.

    ``mode="fts"``: BM25 over the caller's visible nodes from the store's text index (see
    :mod:`conceptwalk.graph.text`), taken with the graph from one ``state()`` of the store (one
    committed state: a concurrent write never makes a search fail); a store without ``state()``
    is asked for more hits until ``k`` visible ones are found or it is exhausted.
    ``mode="embedding"``: the dot product (cosine for the unit vectors the embedders make) of the
    query's embedding with every visible node's stored embedding under the embedder's name (nodes
    without one are embedded from title and body once and held in memory, never written to the
    store), exact and in a fixed summation order (:func:`conceptwalk.graph.vectors.vector_topk`);
    ties by id.

    :class:`~conceptwalk.wrap.ConceptAnchoredRetriever` passes its query's caller to this search,
    and to a user-supplied flat search that accepts a ``caller`` keyword (see
    :class:`~conceptwalk.wrap.ConceptAnchoredRetriever`); a flat search without one is called as
    ``flat_search(text, k)`` and its results are the caller's own, passed through untouched.

    Parameters
    ----------
    kb : KnowledgeBase
        The store searched (``mode="fts"`` needs its ``search``).
    mode : {"fts", "embedding"}
        Full-text (bm25) or embedding (cosine) search.
    embedder : str, Embedder or None
        The embedder of ``mode="embedding"`` (see :func:`~conceptwalk.wrap.embed.get_embedder`;
        None = the default one); ignored by ``"fts"``.
    caller : Caller, optional
        The caller used when a call gives none (default: :meth:`Caller.public`, never all
        access; pass :meth:`Caller.all_access` explicitly for the operator's view).

    Examples
    --------
    >>> from conceptwalk import Caller, KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "a", "title": "graph walks"},
    ...                   {"id": "b", "title": "graph cuts", "scopes": ["team"]}])
    >>> search = BuiltinFlatSearch(kb)  # no caller: public only
    >>> [h["id"] for h in search("graph", 5)], [h["id"] for h in search("graph", 5, caller=Caller.all_access())]
    (['a'], ['a', 'b'])
    """

    def __init__(self, kb: Any, *, mode: str = "fts", embedder: Any = None, caller: Caller | None = None) -> None:
        if mode not in _MODES:
            raise InputError(f"mode must be one of {_MODES}, got {mode!r}")
        if caller is not None and not isinstance(caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        self.source = StoreReader(kb, annotations=True)  # share the KB's cached projection
        if mode == "fts" and not callable(getattr(kb, "search", None)):
            raise InputError("mode='fts' needs a knowledge base with search(); use mode='embedding'")
        self.kb = kb
        self.mode = mode
        self.embedder = get_embedder(embedder) if mode == "embedding" else None
        self.caller = caller if caller is not None else Caller.public()  # fail closed
        self._emb: tuple[Any, np.ndarray, int | None] | None = None

    def __repr__(self) -> str:
        return f"BuiltinFlatSearch(mode={self.mode!r}, caller={self.caller})"

    def __call__(self, text: str, k: int, *, caller: Caller | None = None) -> list[dict[str, Any]]:
        """Search: the ``k`` best nodes the caller may see.

        Parameters
        ----------
        text : str
            The query.
        k : int
            The most hits to return (>= 1).
        caller : Caller, optional
            Whose visibility applies (default: the caller given at construction).

        Returns
        -------
        list of dict
            ``{"id", "type", "title", "score"}`` per hit, best first.

        Raises
        ------
        InputError
            ``text`` is not a string, ``k`` not a positive integer or ``caller`` not a Caller.
        """
        return self.search_state(None, text, k, caller=self.caller if caller is None else caller)

    def search_state(
        self, state: Any, text: str, k: int, *, caller: Caller, query_vector: Any = None
    ) -> list[dict[str, Any]]:
        """:meth:`__call__` over one given state of the store: what the wrap calls, with the state
        its resolution and walk read, so that one answer reads one state (and the store's
        position once).

        Parameters
        ----------
        state : StoreState or None
            A state of :attr:`kb` (:meth:`KnowledgeBase.state
            <conceptwalk.kb.store.KnowledgeBase.state>`); None: the current one.
        text : str
            The query.
        k : int
            The most hits to return (>= 1).
        caller : Caller
            Whose visibility applies.
        query_vector : numpy.ndarray, optional
            ``mode="embedding"``: the query's embedding by :attr:`embedder`, already computed (the
            wrap embeds the query once for this search and its resolver); ignored for ``"fts"``.

        Returns
        -------
        list of dict
            ``{"id", "type", "title", "score"}`` per hit, best first.

        Raises
        ------
        InputError
            ``text`` is not a string, ``k`` not a positive integer, ``caller`` not a Caller, or
            ``state`` not a state (no graph and text index).

        Examples
        --------
        >>> from conceptwalk import Caller
        >>> from conceptwalk.kb.store import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_nodes([{"id": "a", "type": "DOC", "title": "Graph walks"}])
        >>> st = kb.state()
        >>> _ = kb.add_nodes([{"id": "b", "type": "DOC", "title": "More graph walks"}])
        >>> search = BuiltinFlatSearch(kb)
        >>> [h["id"] for h in search.search_state(st, "walks", 5, caller=Caller.public())], len(search("walks", 5))
        (['a'], 2)
        """
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        if not isinstance(caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        if state is not None and not (hasattr(state, "graph") and hasattr(state, "text_index")):
            raise InputError(f"state must be a store state (KnowledgeBase.state()), got {type(state).__name__}")
        who = caller
        ix = None
        st = state
        if st is None and self.mode == "fts":
            fn = getattr(self.kb, "state", None)
            st = fn() if callable(fn) else None  # the graph and its text index of one committed state
        if st is not None:
            g = st.graph
            ix = st.text_index if self.mode == "fts" else None
        else:
            g = self.source.graph()
        view = g.view(who)
        vm = view.mask
        mask = None if vm is None else vm.mask
        hits = (
            self._fts(text, k, g, mask, view, ix, st)
            if self.mode == "fts"
            else self._embedding(text, k, g, mask, query_vector)
        )
        out = []
        for nid, score in hits:
            i = g.id_index[nid]
            out.append(
                {"id": nid, "type": g.node_type_names[int(g.node_type_codes[i])], "title": g.titles[i], "score": score}
            )
        return out

    def _fts(self, text: str, k: int, g: Any, mask: Any, view: Any, ix: Any, st: Any = None) -> list[tuple[str, float]]:
        if ix is not None:  # the text index of g's state, with the caller's statistics from its view
            # the store's search (KnowledgeBase.search's rule): the nodes the text names by id or
            # alias first, then BM25 over the text without its stopwords
            names = source_name_indexes(g, self.kb, st)
            return named_search(ix, g, text, k, view=view, node_types=None, names=names)
        fetch = k if mask is None else max(2 * k, 16)
        got = -1
        while True:  # a store of another kind: drop what the caller may not see, ask for more
            raw = self.kb.search(text, fetch)
            hits = [(nid, float(s)) for nid, s in raw if nid in g.id_index and (mask is None or mask[g.id_index[nid]])]
            if len(hits) >= k or len(raw) < fetch or len(raw) <= got:
                return hits[:k]
            got = len(raw)
            fetch *= 4

    def _embedding(self, text: str, k: int, g: Any, mask: Any, qvec: Any = None) -> list[tuple[str, float]]:
        emb = self.embedder
        version = self.source.store_version()  # set_embeddings keeps the graph object
        if self._emb is None or self._emb[0] is not g or self._emb[2] != version:
            self._emb = (g, self.source.embeddings_for(emb, list(g.ids), g), version)
        mat = self._emb[1]
        q = qvec if qvec is not None else np.asarray(emb.embed([text]), dtype=np.float32)[0]  # type: ignore[union-attr]
        if not float(np.linalg.norm(q)) > 0:
            return []
        rows, scores = vector_topk(mat, q, k, visible=mask)
        ids = g.ids
        return [(ids[i], s) for i, s in zip(rows, scores)]


def builtin_flat_search(
    kb: Any, *, mode: str = "fts", embedder: Any = None, caller: Caller | None = None
) -> BuiltinFlatSearch:
    """The built-in flat path: a callable ``(text, k, *, caller=None) -> list[dict]``.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to search.
    mode : {"fts", "embedding"}
        Full-text (BM25 over the visible nodes) or embedding top-k.
    embedder : str or Embedder, optional
        For ``mode="embedding"`` (default: the hashing embedder).
    caller : Caller, optional
        The default caller (public only when omitted, never all access); a call's ``caller=``
        overrides it.

    Returns
    -------
    BuiltinFlatSearch

    Examples
    --------
    >>> from conceptwalk import Caller
    >>> from conceptwalk.kb.store import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "a", "type": "DOC", "title": "Graph walks"},
    ...                   {"id": "b", "type": "DOC", "title": "Secret walks", "scopes": ["t1"]}])
    >>> search = builtin_flat_search(kb)
    >>> [h["id"] for h in search("walks", 5)], [h["id"] for h in search("walks", 5, caller=Caller.all_access())]
    (['a'], ['a', 'b'])
    """
    return BuiltinFlatSearch(kb, mode=mode, embedder=embedder, caller=caller)
