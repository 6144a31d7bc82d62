"""Query -> concepts: evidence from the alias map (scored by how much of the query an alias
covers and how specific it is), the flat search's own concept hits, a lexical search and a
semantic top-k over the concept nodes, fused into one confidence per concept (noisy-OR), and a
normalize-only fallback.

Every method returns only concepts the caller may see; a hidden concept is never returned,
never used and never counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import math

import numpy as np
import numpy.typing as npt

from .embed import NEUTRAL, FusionWeights, fusion_weights, get_embedder, normalize_text
from ..errors import InputError, shown
from ..graph import Caller
from ..graph.vectors import vector_topk_arrays
from ._reader import ReadCache, StoreReader, phrases_in
from .config import WalkConfig

__all__ = ["ConceptResolver", "ResolvedConcept", "resolve", "topk_scores", "METHODS"]

#: Resolution methods, in the order they win a tie of evidence for one concept.
METHODS: tuple[str, ...] = ("alias", "flat-hit", "lexical", "semantic", "normalized")
_PRIORITY = {m: i for i, m in enumerate(METHODS)}

#: Words left out when measuring how much of a query an alias covers.
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or that the this to "
    "was what when where which who why with work works".split()
)


def coverage(alias: str, text: str) -> float:
    """The share of ``text``'s characters (normalised, stopwords left out, spaces not counted)
    that the normalised ``alias`` covers, in (0, 1].

    Examples
    --------
    >>> coverage("authn", "How does AUTHN work?")
    1.0
    >>> round(coverage("seizures", "localised seizures of the temporal lobe"), 3)
    0.276
    """
    words = [w for w in normalize_text(text).split() if w not in STOPWORDS]
    a = [w for w in normalize_text(alias).split() if w not in STOPWORDS] or normalize_text(alias).split()
    total = sum(len(w) for w in words)
    if total == 0:
        return 1.0
    return min(1.0, sum(len(w) for w in a) / total)


@dataclass(frozen=True)
class ResolvedConcept:
    """A concept the query was resolved to.

    Attributes
    ----------
    id : str
        The concept's (canonical) node id.
    confidence : float
        In (0, 1]; see :class:`ConceptResolver` for how each method sets it.
    method : str
        One of :data:`METHODS`.
    matched : str
        What matched: the normalised alias or name phrase, the flat hit's id, or the query.
    """

    id: str
    confidence: float
    method: str
    matched: str

    def to_dict(self) -> dict[str, Any]:
        """The concept as the retrieval event records it.

        Returns
        -------
        dict
            ``{"id", "confidence", "method"}``.
        """
        return {"id": self.id, "confidence": self.confidence, "method": self.method}


class ConceptResolver:
    """Resolve query text to concept nodes, each with a confidence and a method.

    Evidence (all methods run; per concept the evidence ``p`` of each method is fused by
    noisy-OR, ``confidence = 1 - prod(1 - p)``, so agreeing methods reinforce each other; the
    method giving the largest ``p`` names the result, ties by :data:`METHODS` order):

    ``alias``
        Every alias of the store's alias map whose normalised form occurs in the normalised query
        as whole words: ``alias_confidence * sqrt(coverage)`` (:func:`coverage`: the alias's share
        of the query, so an alias that is the whole query gives ``alias_confidence`` and one word
        of a long query much less), divided by the number of *visible* canonical concepts of that
        alias (an ambiguous alias is weaker evidence).
    ``flat-hit``
        Concept nodes among the flat search's first ``flat_hit_k`` results: rank ``r`` (1-based
        position in the flat list) gives ``flat_hit_confidence / r``.
    ``lexical``
        BM25 over the documents the caller sees (the store's text index of the snapshot,
        :mod:`conceptwalk.graph.text`; statistics over the visible nodes only), concept nodes
        returned: rank ``r`` gives ``lexical_confidence / r``, for the first ``lexical_k``. A
        store object without a text index falls back to its own ``search`` (see
        ``ReadCache.lexical``); a bare graph has no lexical evidence.
    ``semantic``
        Cosine similarity (dot product of unit vectors) between the query's embedding and the
        concept nodes' embeddings (the store's vectors under the embedder's name, else embedded
        from ``concept_text`` and held in memory with the snapshot; a query never writes),
        computed only over the visible concept rows by
        :class:`conceptwalk.graph.vectors.SparseVectors` (sparse vectors, as the hashing
        embedder's: an inverted index of dimensions, compiled) or
        :func:`conceptwalk.graph.vectors.vector_topk_arrays` (dense), both exact, no BLAS, no
        threads, the same bits: the
        top ``semantic_k`` concepts with similarity ``>= semantic_threshold`` (and ``> 0``), and
        up to ``semantic_max_k`` while within ``semantic_margin`` of the best; evidence =
        similarity; ties by node order.

        Per embedder kind (:func:`conceptwalk.wrap.embed.fusion_weights`): with a model
        embedder (sentence-transformers, model2vec) the similarity is a weighted mean of the
        query's similarity to the concept's title and to its title and body, averaged in turn
        with (the built-in ``hashing:512:2-4``) its title's character n-grams, and the lexical and flat-hit
        evidence above is scaled down (:class:`~conceptwalk.wrap.embed.FusionWeights`; chosen
        on a tuning split in ``benchmarks/bench_embedder.py --fusion``). The built-in embedder's
        weights are neutral: the title similarity, the evidence as configured. Every part is
        an exact per-row number, so the weighted mean is too.

    So every confidence equals, bit for bit, the confidence on the store with the caller's
    hidden nodes deleted.
    ``normalized``
        The fallback, used only when the methods above resolved nothing: a concept whose
        normalised title, id or id tail (after the last ``:``, ``/`` or ``#``) occurs in the
        normalised query as whole words, confidence ``normalized_confidence``.

    An id that is itself an alias (a fragmented id of one concept) stands for its canonical
    ids, so the fragments of one concept resolve to one canonical concept. Results are
    ordered by confidence descending, then id.

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
        Where aliases, nodes and embeddings come from.
    config : WalkConfig, optional
        Thresholds, k and the embedder spec.
    embedder : Embedder, optional
        Overrides ``config.embedder``.

    Examples
    --------
    >>> from conceptwalk import Caller
    >>> from conceptwalk.kb.store import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "c:ppr", "type": "CONCEPT", "title": "Personalized PageRank"},
    ...                   {"id": "c:ppr-old", "type": "CONCEPT", "title": "PPR (old page)"}])
    >>> _ = kb.add_aliases([("ppr", "c:ppr"), ("c:ppr-old", "c:ppr")])
    >>> r = ConceptResolver(kb, WalkConfig(embedder=None, lexical_k=0))
    >>> [(c.id, c.confidence, c.method) for c in r.resolve("what is PPR?", caller=Caller.all_access())]
    [('c:ppr', 1.0, 'alias')]
    >>> [(c.id, round(c.confidence, 3)) for c in r.resolve("PPR for ranking the pages of a large graph",
    ...                                                    caller=Caller.all_access())]
    [('c:ppr', 0.346)]
    >>> [(c.id, c.method) for c in r.resolve("x", caller=Caller.all_access(),
    ...                                        flat_results=[{"id": "c:ppr-old"}])]
    [('c:ppr', 'flat-hit')]
    """

    def __init__(
        self, kb: Any, config: WalkConfig | None = None, *, embedder: Any = None, _reader: StoreReader | None = None
    ) -> None:
        self.config = config if config is not None else WalkConfig()
        if not isinstance(self.config, WalkConfig):
            raise InputError(f"config must be a WalkConfig, got {type(self.config).__name__}")
        self.source = _reader if _reader is not None else StoreReader(kb, annotations=self.config.annotations)
        if embedder is not None:
            self.embedder: Any = get_embedder(embedder)
        elif self.config.embedder is not None and self.config.semantic_k > 0:
            self.embedder = get_embedder(self.config.embedder)
        else:
            self.embedder = None
        #: How the evidence is weighed for this embedder (:func:`conceptwalk.wrap.embed.fusion_weights`).
        self.fusion: FusionWeights = fusion_weights(self.embedder) if self.embedder is not None else NEUTRAL
        self._char: Any = (
            get_embedder(self.fusion.ngrams) if self.embedder is not None and self.fusion.char > 0 else None
        )
        self._body_cfg = replace(self.config, concept_text="title+body")
        self._title_cfg = replace(self.config, concept_text="title")
        self.warm()

    def warm(self) -> None:
        """Build what a query reads (the snapshot's alias index, concept indices, text index and
        vectors),
        so that the first query costs what the next one does. Called on construction; the caches
        are shared by every resolver over the same snapshot and rebuilt when the store changes.
        On a live store written since its last full state, those of its live graph's base: the
        query reads that base plus the writes since (or, when it cannot, builds the full state
        itself), so a retriever made after a write costs the change, not the store."""
        snap = self.warm_cache()
        snap.alias_index()
        snap.concept_indices(self.config)
        if self.config.lexical_k > 0:
            ix = snap.text_index()
            if ix is not None:
                ix.stats_for(None)  # the all-access statistics (a caller's are cached per mask)
            snap.concept_flags(self.config)
        if self.embedder is not None and self.config.semantic_k > 0:
            for emb, cfg in self.semantic_parts():
                if snap.concept_columns(emb, cfg) is None:  # dense: the matrix
                    snap.concept_embeddings(emb, cfg)

    def warm_cache(self) -> ReadCache:
        """The caches :meth:`warm` builds: the store's current state's, or, when the store was
        written since the state it holds and its live graph reads the writes, the live graph's
        base's (what a live read of the wrapped query reads; nothing of the store is rebuilt).

        Returns
        -------
        ReadCache
        """
        kb = self.source.kb
        kept, live = getattr(kb, "kept_state", None), getattr(kb, "live_search", None)
        if self.source.annotations and callable(kept) and callable(live):
            if kept(annotations=True) is None:
                search = live(Caller.all_access(), changed_only=True)
                if search is not None:
                    return self.source.read_cache_of(search.base_state)
        return self.source.read_cache()

    def semantic_parts(self) -> list[tuple[Any, WalkConfig]]:
        """(embedder, config) of each similarity the semantic score reads: the embedder over
        ``concept_text``, then (per :attr:`fusion`) over ``title+body`` and the character
        n-gram embedder over the titles.

        Returns
        -------
        list of (Embedder, WalkConfig)
        """
        cfg = self.config
        parts = [(self.embedder, cfg)]
        if self.fusion.body > 0 and cfg.concept_text == "title":
            parts.append((self.embedder, self._body_cfg))
        if self._char is not None:
            parts.append((self._char, self._title_cfg))
        return parts

    def resolve(
        self,
        text: str,
        *,
        caller: Caller,
        flat_results: Sequence[Mapping[str, Any]] | None = None,
        read_cache: ReadCache | None = None,
        query_vector: Any = None,
        query_model: str | None = None,
        _live: Any = None,
    ) -> list[ResolvedConcept]:
        """All concepts ``text`` resolves to for ``caller`` (uncut; the walk takes the first
        ``max_concepts``).

        Parameters
        ----------
        text : str
            The query.
        caller : Caller
            Only concepts this caller may see resolve.
        flat_results : sequence of dict, optional
            The flat search's results (for the ``flat-hit`` method).
        read_cache : ReadCache, optional
            The caches of the store state to resolve against (the retriever passes the one its walk uses,
            so both read one version of the store); None = the source's current one.
        query_vector : array-like, optional
            The query's embedding by this resolver's embedder, already computed (by the caller's
            flat search): used instead of embedding ``text`` again. Must have the embedder's
            dimension (``embedder.dim``) and be finite; see :meth:`check_query_vector`.
        query_model : str, optional
            The name of the model that made ``query_vector``; when given it must equal the
            embedder's ``name`` (two models of one dimension are not interchangeable).

        Returns
        -------
        list of ResolvedConcept
            By confidence descending, then id.

        Raises
        ------
        InputError
            A ``query_vector`` the embedder does not match (see :meth:`check_query_vector`).
        """
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if not isinstance(caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        # (_live: the retriever's read of a live store whose base read_cache is: the flat hits,
        # the lexical evidence and the aliases are then read over base plus delta, wrap/_live.py)
        qvec = self.check_query_vector(query_vector, query_model)
        snap = read_cache if read_cache is not None else self.source.read_cache()
        g = snap.graph
        cfg = self.config
        vm = caller.visibility(g)
        visible = None if vm is None else vm.mask
        evidence: dict[str, dict[str, tuple[float, str]]] = {}  # id -> method -> (p, matched)

        id_index = g.id_index
        flags = snap.concept_flags(cfg)  # None: every node type is a concept type
        aliases = snap.aliases() if _live is None else _live.aliases()

        def usable(nid: str) -> int | None:
            i = id_index.get(nid)
            if i is None:  # (a concept added since the base, on a live read)
                return -1 if _live is not None and _live.usable_new(nid, cfg) else None
            if (visible is not None and not visible[i]) or (flags is not None and not flags[i]):
                return None
            return i

        def offer(nid: str, p: float, method: str, matched: str) -> None:
            per = evidence.setdefault(nid, {})
            cur = per.get(method)
            if cur is None or p > cur[0]:
                per[method] = (float(p), matched)

        def canonical_concepts(nid: str) -> list[str]:
            out = [c for c in aliases.get(nid) or (nid,) if usable(c) is not None]
            if not out and usable(nid) is not None:  # its canonical is hidden or no concept
                out = [nid]
            return out

        # alias: by coverage of the query and specificity
        index, longest = snap.alias_index() if _live is None else _live.alias_index()
        for phrase, canon in phrases_in(text, index, longest):
            vis = [c for c in canon if usable(c) is not None]
            if vis:
                p = cfg.alias_confidence * math.sqrt(coverage(phrase, text)) / len(vis)
                for c in vis:
                    offer(c, p, "alias", phrase)
        fw = self.fusion
        # flat-hit
        if flat_results and cfg.flat_hit_k:
            for rank, hit in enumerate(list(flat_results)[: cfg.flat_hit_k], start=1):
                nid = hit.get("id") if isinstance(hit, Mapping) else None
                if not isinstance(nid, str):
                    continue
                i = g.id_index.get(nid)
                if i is None:
                    if _live is None or not _live.visible_id(nid):  # (a node added since the base)
                        continue
                elif visible is not None and not visible[i]:
                    continue
                for c in canonical_concepts(nid):
                    offer(c, cfg.flat_hit_confidence * fw.flat_hit / rank, "flat-hit", nid)
        # lexical
        if cfg.lexical_k:
            lexical = snap.lexical if _live is None else _live.lexical
            for rank, nid in enumerate(lexical(text, cfg.lexical_k, cfg, caller), start=1):
                for c in canonical_concepts(nid):
                    offer(c, cfg.lexical_confidence * fw.lexical / rank, "lexical", nid)
        # semantic
        if self.embedder is not None and cfg.semantic_k > 0:
            for c, sim in self._semantic(text, snap, vm, qvec, _live):
                for cc in canonical_concepts(c):
                    offer(cc, sim, "semantic", text)
        best: dict[str, ResolvedConcept] = {}
        for nid, per in evidence.items():
            rest = 1.0
            for p, _m in per.values():
                rest *= 1.0 - min(1.0, p)
            method, (p, matched) = min(per.items(), key=lambda kv: (-kv[1][0], _PRIORITY[kv[0]]))
            best[nid] = ResolvedConcept(nid, min(1.0, max(p, 1.0 - rest)), method, matched)
        # normalize-only fallback
        if not best:
            nindex, nlongest = snap.name_index(cfg) if _live is None else _live.name_index(cfg)
            id_index = g.id_index
            for phrase, ids in phrases_in(text, nindex, nlongest):
                for nid in ids:
                    i = id_index.get(nid)
                    if i is None:  # (a concept added since the base, on a live read)
                        if not _live.visible_id(nid):
                            continue
                    elif visible is not None and not visible[i]:
                        continue
                    for c in canonical_concepts(nid):
                        if c not in best:
                            best[c] = ResolvedConcept(c, cfg.normalized_confidence, "normalized", phrase)
        return sorted(best.values(), key=lambda r: (-r.confidence, r.id))

    def check_query_vector(self, query_vector: Any, query_model: str | None = None) -> Any:
        """A caller-supplied query embedding, checked against this resolver's embedder.

        Parameters
        ----------
        query_vector : array-like or None
            The query's embedding (None: the resolver embeds the text itself).
        query_model : str, optional
            The model that made it; must equal ``embedder.name`` when given.

        Returns
        -------
        numpy.ndarray or None
            The vector as a float32 array of shape ``(embedder.dim,)``, or None.

        Raises
        ------
        InputError
            A vector without an embedder to match (no semantic resolution), from another model,
            of another dimension, or not finite.

        Examples
        --------
        >>> from conceptwalk import LinkGraph
        >>> g = LinkGraph.from_edges([("c:a", "c:b")], nodes=[{"id": "c:a", "type": "CONCEPT"}])
        >>> r = ConceptResolver(g, WalkConfig(embedder="hashing:64"))
        >>> r.check_query_vector([0.0] * 64).shape
        (64,)
        >>> r.check_query_vector([0.0] * 3)
        Traceback (most recent call last):
        ...
        conceptwalk.errors.InputError: query_vector must have shape (64,) for the embedder 'hashing-v1-d64', got (3,)
        """
        if query_vector is None:
            if query_model is not None:
                raise InputError("query_model names the model of a query_vector, but no query_vector was given")
            return None
        emb = self.embedder
        if emb is None:
            raise InputError(
                "query_vector was given, but the resolver has no embedder to match it "
                "(config.embedder is None or semantic_k is 0): nothing would use it"
            )
        name = str(emb.name)
        if query_model is not None and query_model != name:
            raise InputError(
                f"query_vector was made by {shown(query_model)}, but the resolver's embedder is {name!r}: "
                f"pass the vector of the same model, or leave query_vector out"
            )
        try:
            q = np.asarray(query_vector, dtype=np.float32)
        except (TypeError, ValueError):
            raise InputError(f"query_vector must be an array of numbers, got {type(query_vector).__name__}") from None
        dim = int(emb.dim)
        if q.shape != (dim,):
            raise InputError(f"query_vector must have shape ({dim},) for the embedder {name!r}, got {q.shape}")
        if not np.all(np.isfinite(q)):
            raise InputError("query_vector must be finite (no NaN or infinity)")
        return q

    def _semantic(
        self, text: str, snap: ReadCache, vm: Any, qvec: Any = None, live: Any = None
    ) -> list[tuple[str, float]]:
        """The semantic top-k over the visible concept rows: exact dot products in the core,
        each in an order that depends only on its row and the query (no BLAS, no threads), so
        the similarities equal those on the store with the hidden concepts deleted. ``live``: a
        live read, whose concepts added since the base are scored too (and merged by score,
        then id: the full index's order)."""
        cfg = self.config
        idx = snap.concept_indices(cfg)
        new = live is not None and bool(live.written_concepts(cfg)[0])
        if idx.size == 0 and not new:
            return []
        q = qvec if qvec is not None else np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        qn = float(np.linalg.norm(q))
        if not qn > 0:
            return []
        keep = max(cfg.semantic_k, cfg.semantic_max_k)
        qu = np.ascontiguousarray(q / qn, dtype=np.float32)
        vis = snap.concept_visible(cfg, vm)
        if new:  # (the base rows of the concepts rewritten since are scored with the written ones)
            vis = live.base_visible(cfg, vis)
        rows: npt.NDArray[np.integer[Any]]
        plain = self.fusion.body == 0 and self._char is None and self.fusion.temperature == 0
        written: list[tuple[str, float]] = []
        if plain:
            cols = snap.concept_columns(self.embedder, cfg)
            if cols is not None:  # sparse vectors: the same numbers, from the query's dimensions only
                rows, sims = cols.topk(qu, keep, visible=vis, min_score=cfg.semantic_threshold)
            else:
                rows, sims = vector_topk_arrays(
                    snap.concept_embeddings(self.embedder, cfg), qu, keep, visible=vis, min_score=cfg.semantic_threshold
                )
        else:  # the fused similarity (FusionWeights) of the base's rows (and the written ones)
            n = int(idx.size)
            sides: list[_Side] = [(lambda emb, c, q: self._row_scores(emb, q, snap, c, vis, n), vis, n)]
            if new:
                ids_w = live.written_concepts(cfg)[0]
                sides.append((live.written_similarities, live.written_visible(cfg), len(ids_w)))
            got = self._fused(text, qu, cfg, keep, sides)
            rows, sims = got[0]
            if new:
                written = [(ids_w[r], s) for r, s in zip(got[1][0].tolist(), got[1][1].tolist())]
        # by similarity descending, then row = node order (= id order in a store)
        g = snap.graph
        scored = [(g.ids[int(idx[j])], s) for j, s in zip(rows.tolist(), sims.tolist())]
        if new:  # the concepts added since the base, merged: the full index's top keep
            if plain:
                written = live.semantic_written(self.embedder, cfg, qu, keep)
            scored = sorted(scored + written, key=lambda x: (-x[1], x[0]))
            scored = scored[:keep]
        if not scored or not scored[0][1] > 0:  # evidence must be > 0
            return []
        top = scored[0][1]
        out = []
        for n, (nid, s) in enumerate(scored):
            if not s > 0:
                break
            if n < cfg.semantic_k or s >= top - cfg.semantic_margin:
                out.append((nid, min(1.0, s)))
            else:
                break
        return out

    def _fused(
        self, text: str, qu: npt.NDArray[np.float32], cfg: WalkConfig, keep: int, sides: list[_Side]
    ) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        """The top ``keep`` of each side's visible rows by the fused semantic score
        (:class:`~conceptwalk.wrap.embed.FusionWeights`): the weighted mean of the title,
        title+body and character n-gram similarities, row by row (``temperature == 0``), or of
        their posteriors among the rows one of whose similarities reaches
        ``semantic_threshold``. A side is ``(scores, visible, n)``: ``scores(embedder, config,
        query)`` gives each of its ``n`` rows' similarity as the full index gives it (the base's
        rows, :meth:`_row_scores`; a live read's concepts written since the base,
        :meth:`LiveRead.written_similarities
        <conceptwalk.wrap._live.LiveRead.written_similarities>`). Every number is made row by
        row by the same element-wise arithmetic, and each posterior's maximum and normaliser
        (``math.fsum``, correctly rounded in any order) over every side's rows: so each side's
        numbers are those of one index holding all of them."""
        fw = self.fusion
        qc = np.asarray(self._char.embed([text]), dtype=np.float32)[0] if self._char is not None else None
        thr = cfg.semantic_threshold
        got: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = []
        if fw.temperature > 0:
            tau = fw.temperature
            oks = [np.ones(m, dtype=bool) if v is None else np.asarray(v, dtype=bool).copy() for _, v, m in sides]
            wheres = [np.flatnonzero(ok) for ok in oks]
            sims = [fn(self.embedder, cfg, qu) for fn, _, _ in sides]
            best = [x.copy() for x in sims]
            post = _posteriors(sims, wheres, tau)
            totals = [p.copy() for p in post]
            if fw.body > 0:
                if cfg.concept_text == "title":
                    bodies = [fn(self.embedder, self._body_cfg, qu) for fn, _, _ in sides]
                    for b, x in zip(best, bodies):
                        np.maximum(b, x, out=b)
                    for t, p in zip(totals, _posteriors(bodies, wheres, tau)):
                        t += fw.body * p
                else:  # concept_text="title+body": the one matrix counts for both
                    for t, p in zip(totals, post):
                        t += fw.body * p
            wsum = 1.0 + fw.body
            if self._char is not None:
                wsum += fw.char
                chars = [
                    np.maximum(fn(self._char, self._title_cfg, qc), 0.0)
                    if np.any(qc)
                    else np.zeros(m, dtype=np.float64)
                    for fn, _, m in sides
                ]
                for b, x in zip(best, chars):
                    np.maximum(b, x, out=b)
                for t, p in zip(totals, _posteriors(chars, wheres, tau)):
                    t += fw.char * p
            for ok, b, t in zip(oks, best, totals):
                ok &= b >= thr
                got.append(topk_scores(t / wsum, keep, visible=ok, min_score=0.0))
            return got
        for fn, v, _ in sides:  # the weighted mean of the similarities, row by row
            total = fn(self.embedder, cfg, qu)
            if fw.body > 0 and cfg.concept_text == "title":  # the mean of title and title+body
                body = fn(self.embedder, self._body_cfg, qu)
                total = (total + fw.body * body) / (1.0 + fw.body)
            # (with concept_text="title+body" the one matrix counts for both: the mean is itself)
            wsum = 1.0
            if self._char is not None:
                wsum += fw.char
                if np.any(qc):
                    total += fw.char * np.maximum(fn(self._char, self._title_cfg, qc), 0.0)
            got.append(topk_scores(total / wsum, keep, visible=v, min_score=thr))
        return got

    @staticmethod
    def _row_scores(
        embedder: Any, query: npt.NDArray[np.float32], snap: ReadCache, cfg: WalkConfig, vis: Any, n: int
    ) -> npt.NDArray[np.float64]:
        """The similarity of every visible concept row to ``query`` (0 for the hidden rows and
        for the rows a sparse query shares no dimension with), exact in the core as in
        :meth:`_semantic`: each row's number depends only on that row and the query."""
        out = np.zeros(n, dtype=np.float64)
        cols = snap.concept_columns(embedder, cfg)
        if cols is not None:
            rows, sims = cols.topk(query, n, visible=vis)
        else:
            rows, sims = vector_topk_arrays(snap.concept_embeddings(embedder, cfg), query, n, visible=vis)
        out[rows] = sims
        return out


#: One side of :meth:`ConceptResolver._fused`: its rows' similarity (embedder, config, query),
#: their visibility (None: all) and count.
_Side = tuple[Callable[[Any, WalkConfig, Any], npt.NDArray[np.float64]], Any, int]


def _posteriors(
    scores: Sequence[npt.NDArray[np.float64]], rows: Sequence[npt.NDArray[np.int64]], tau: float
) -> list[npt.NDArray[np.float64]]:
    """The softmax of ``scores / tau`` over the union of several score arrays' ``rows`` (the
    base's concept rows, and a live read's concepts written since), 0 elsewhere, exact to
    deletion: the maximum and every exponent depend only on the rows' own scores, and the one
    normaliser is the correctly rounded sum (``math.fsum``) of all of them, whatever the order
    or the other rows."""
    parts = [sc[r] for sc, r in zip(scores, rows)]
    out = [np.zeros(sc.shape[0], dtype=np.float64) for sc in scores]
    x = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float64)
    if x.size == 0:
        return out
    e = np.exp((x - float(x.max())) / tau)
    total = math.fsum(e.tolist())
    at = 0
    for o, r in zip(out, rows):
        o[r] = e[at : at + r.size] / total
        at += r.size
    return out


def topk_scores(
    scores: npt.NDArray[np.float64], k: int, *, visible: npt.NDArray[np.bool_] | None = None, min_score: float = 0.0
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The top ``k`` rows of ``scores`` among the ``visible`` ones scoring at least
    ``min_score``, by score descending then row ascending (the order and the filter of
    :func:`conceptwalk.graph.vectors.vector_topk_arrays`).

    Parameters
    ----------
    scores : (n,) float64 array
    k : int
        The most rows (>= 1).
    visible : (n,) bool array, optional
        Only these rows.
    min_score : float
        Least score kept (NaN scores are never kept).

    Returns
    -------
    (rows, scores) : (int64 array, float64 array)

    Examples
    --------
    >>> rows, s = topk_scores(np.array([0.5, 0.9, 0.5, 0.1]), 2, min_score=0.2)
    >>> rows.tolist(), s.tolist()
    ([1, 0], [0.9, 0.5])
    """
    ok = scores >= min_score
    if visible is not None:
        ok &= visible
    cand = np.flatnonzero(ok)
    sc = scores[cand]
    if cand.size > k:  # the best k (ties at the cut kept), then the exact order
        kth = np.partition(sc, cand.size - k)[cand.size - k]
        sel = sc >= kth
        cand, sc = cand[sel], sc[sel]
    order = np.lexsort((cand, -sc))[:k]
    return cand[order], sc[order]


def resolve(
    kb: Any,
    text: str,
    *,
    caller: Caller,
    flat_results: Sequence[Mapping[str, Any]] | None = None,
    config: WalkConfig | None = None,
    embedder: Any = None,
    query_vector: Any = None,
    query_model: str | None = None,
) -> list[ResolvedConcept]:
    """Resolve ``text`` to concepts in one call (see :class:`ConceptResolver`; reuse a resolver
    object to keep its caches across queries).

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
        Where aliases, nodes and embeddings come from.
    text : str
        The query.
    caller : Caller
        Only concepts this caller may see resolve.
    flat_results : sequence of dict, optional
        The flat search's results (for the ``flat-hit`` method).
    config : WalkConfig, optional
        Thresholds, k and the embedder spec (default ``WalkConfig()``).
    embedder : Embedder, optional
        Overrides ``config.embedder``.
    query_vector, query_model : optional
        The query's embedding, already computed (see :meth:`ConceptResolver.resolve`).

    Returns
    -------
    list of ResolvedConcept
        By confidence descending, then id.

    Examples
    --------
    >>> from conceptwalk import Caller, LinkGraph
    >>> g = LinkGraph.from_edges([("c:vector-index", "f:ann.py", "IMPLEMENTED_BY")],
    ...                          nodes=[{"id": "c:vector-index", "type": "CONCEPT", "title": "Vector index"}])
    >>> [(c.id, c.method) for c in resolve(g, "How does the vector-index work?",
    ...                                    caller=Caller.all_access(), config=WalkConfig(embedder=None))]
    [('c:vector-index', 'normalized')]
    """
    return ConceptResolver(kb, config, embedder=embedder).resolve(
        text, caller=caller, flat_results=flat_results, query_vector=query_vector, query_model=query_model
    )
