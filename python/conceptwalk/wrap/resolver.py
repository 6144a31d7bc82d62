"""Query -> concepts: alias map, the flat search's own concept hits, semantic top-k over the
concept nodes' embeddings, and a normalize-only fallback.

Every method returns only concepts the caller may see; a hidden concept is never returned,
never used and never counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .embed import get_embedder
from ..errors import InputError
from ..graph import Caller
from ._source import Snapshot, Source, phrases_in
from .config import WalkConfig

__all__ = ["ConceptResolver", "ResolvedConcept", "resolve", "METHODS"]

#: Resolution methods, in the order they win a tie of confidence for one concept.
METHODS: tuple[str, ...] = ("alias", "flat-hit", "semantic", "normalized")
_PRIORITY = {m: i for i, m in enumerate(METHODS)}


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

    Methods (all run; per concept the highest confidence wins, ties by :data:`METHODS` order):

    ``alias``
        Every alias of the store's alias map whose normalised form occurs in the normalised query
        as whole words gives its canonical ids, confidence ``alias_confidence`` divided by the
        number of *visible* canonical concepts of that alias.
    ``flat-hit``
        Concept nodes among the flat search's first ``flat_hit_k`` results: rank ``r`` (1-based
        position in the flat list) gives ``flat_hit_confidence / r``.
    ``semantic``
        Cosine similarity (dot product of unit vectors) between the query's embedding and the
        concept nodes' embeddings under the embedder's name; the top ``semantic_k`` visible
        concepts with similarity ``>= semantic_threshold`` resolve with confidence = similarity.
        Concepts without a stored vector are embedded (title and body) once and the vectors are
        written to the store.
    ``normalized``
        The fallback, used only when the three above resolved nothing (no alias map, no
        embeddings, no match): a concept whose normalised title, id or id tail (after the last
        ``:``, ``/`` or ``#``) occurs in the normalised query as whole words, confidence
        ``normalized_confidence``.

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
    >>> r = ConceptResolver(kb, WalkConfig(embedder=None))
    >>> [(c.id, c.confidence, c.method) for c in r.resolve("what is PPR?", caller=Caller.all_access())]
    [('c:ppr', 1.0, 'alias')]
    >>> [(c.id, c.method) for c in r.resolve("x", caller=Caller.all_access(),
    ...                                        flat_results=[{"id": "c:ppr-old"}])]
    [('c:ppr', 'flat-hit')]
    """

    def __init__(self, kb: Any, config: WalkConfig | None = None, *, embedder: Any = None,
                 _source: Source | None = None) -> None:
        self.config = config if config is not None else WalkConfig()
        if not isinstance(self.config, WalkConfig):
            raise InputError(f"config must be a WalkConfig, got {type(self.config).__name__}")
        self.source = _source if _source is not None else Source(kb, annotations=self.config.annotations)
        if embedder is not None:
            self.embedder: Any = get_embedder(embedder)
        elif self.config.embedder is not None and self.config.semantic_k > 0:
            self.embedder = get_embedder(self.config.embedder)
        else:
            self.embedder = None

    def resolve(self, text: str, *, caller: Caller, flat_results: Sequence[Mapping[str, Any]] | None = None,
                snapshot: Snapshot | None = None) -> list[ResolvedConcept]:
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
        snapshot : Snapshot, optional
            The graph snapshot to resolve against (the retriever passes the one its walk uses,
            so both read one version of the store); None = the source's current one.

        Returns
        -------
        list of ResolvedConcept
            By confidence descending, then id.
        """
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if not isinstance(caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        snap = snapshot if snapshot is not None else self.source.snapshot()
        g = snap.graph
        cfg = self.config
        vm = caller.visibility(g)
        visible = None if vm is None else vm.mask
        best: dict[str, ResolvedConcept] = {}

        def usable(nid: str) -> int | None:
            i = g.id_index.get(nid)
            if i is None or (visible is not None and not visible[i]) or not snap.is_concept(i, cfg):
                return None
            return i

        def offer(nid: str, conf: float, method: str, matched: str) -> None:
            cur = best.get(nid)
            if cur is None or conf > cur.confidence or (
                    conf == cur.confidence and _PRIORITY[method] < _PRIORITY[cur.method]):
                best[nid] = ResolvedConcept(nid, float(conf), method, matched)

        def canonical_concepts(nid: str) -> list[str]:
            out = [c for c in snap.canonical(nid) if usable(c) is not None]
            if not out and usable(nid) is not None:  # its canonical is hidden or no concept
                out = [nid]
            return out

        # alias
        index, longest = snap.alias_index()
        for phrase, canon in phrases_in(text, index, longest):
            vis = [c for c in canon if usable(c) is not None]
            for c in vis:
                offer(c, cfg.alias_confidence / len(vis), "alias", phrase)
        # flat-hit
        if flat_results and cfg.flat_hit_k:
            for rank, hit in enumerate(list(flat_results)[:cfg.flat_hit_k], start=1):
                nid = hit.get("id") if isinstance(hit, Mapping) else None
                if not isinstance(nid, str):
                    continue
                i = g.id_index.get(nid)
                if i is None or (visible is not None and not visible[i]):
                    continue
                for c in canonical_concepts(nid):
                    offer(c, cfg.flat_hit_confidence / rank, "flat-hit", nid)
        # semantic
        if self.embedder is not None and cfg.semantic_k > 0:
            for c, sim in self._semantic(text, snap, visible):
                for cc in canonical_concepts(c):
                    offer(cc, sim, "semantic", text)
        # normalize-only fallback
        if not best:
            nindex, nlongest = snap.name_index(cfg)
            for phrase, idxs in phrases_in(text, nindex, nlongest):
                for i in idxs:
                    if visible is not None and not visible[i]:
                        continue
                    for c in canonical_concepts(g.ids[i]):
                        offer(c, cfg.normalized_confidence, "normalized", phrase)
        return sorted(best.values(), key=lambda r: (-r.confidence, r.id))

    def _semantic(self, text: str, snap: Snapshot, visible: Any) -> list[tuple[str, float]]:
        cfg = self.config
        idx = snap.concept_indices(cfg)
        if idx.size == 0:
            return []
        q = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        qn = float(np.linalg.norm(q))
        if not qn > 0:
            return []
        mat = snap.concept_embeddings(self.embedder, cfg)
        sims = (mat @ (q / qn)).astype(np.float64)
        if visible is not None:
            sims = np.where(visible[idx], sims, -np.inf)
        ok = np.flatnonzero((sims >= cfg.semantic_threshold) & (sims > 0))  # confidence must be > 0
        if ok.size == 0:
            return []
        g = snap.graph
        ranked = sorted(ok.tolist(), key=lambda j: (-sims[j], g.ids[int(idx[j])]))[:cfg.semantic_k]
        return [(g.ids[int(idx[j])], min(1.0, float(sims[j]))) for j in ranked]


def resolve(kb: Any, text: str, *, caller: Caller, flat_results: Sequence[Mapping[str, Any]] | None = None,
            config: WalkConfig | None = None, embedder: Any = None) -> list[ResolvedConcept]:
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
    return ConceptResolver(kb, config, embedder=embedder).resolve(text, caller=caller, flat_results=flat_results)
