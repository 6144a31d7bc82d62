"""The concept walk's configuration: one frozen dataclass with small, stated defaults."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from ..errors import InputError
from .embed import Embedder

__all__ = ["WalkConfig", "MAX_HOPS_CAP", "WalkTypesWarning"]

#: The hard cap on ``WalkConfig.max_hops``: a concept's structural neighbourhood, not a crawl.
MAX_HOPS_CAP = 2


def _names(value: Any, name: str, *, allow_none: bool = False) -> tuple[str, ...] | None:
    if value is None:
        if allow_none:
            return None
        raise InputError(f"{name} must be an iterable of type names, got None")
    if isinstance(value, (str, bytes)):
        raise InputError(f"{name} must be an iterable of type names, not the single string {value!r}")
    try:
        items = tuple(value)
    except TypeError:
        raise InputError(f"{name} must be an iterable of type names, got {type(value).__name__}") from None
    for x in items:
        if not isinstance(x, str) or not x:
            raise InputError(f"{name} must hold non-empty strings, got {x!r}")
    return tuple(dict.fromkeys(items))  # de-duplicated, order kept


def _int(value: Any, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise InputError(f"{name} must be an integer >= {lo}, got {value!r}")
    return value


def _unit(value: Any, name: str, *, open_low: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{name} must be a number in [0, 1], got {value!r}")
    v = float(value)
    if not (0.0 < v <= 1.0 if open_low else 0.0 <= v <= 1.0):
        raise InputError(f"{name} must be in {'(0, 1]' if open_low else '[0, 1]'}, got {value!r}")
    return v


class WalkTypesWarning(UserWarning):
    """A walk's configured edge or node types are absent from what the caller sees, so a gate of
    the walk matches nothing (see ``missing_types`` of :class:`~conceptwalk.wrap.WrapResult`
    and :meth:`WalkConfig.for_kb`)."""


@dataclass(frozen=True)
class WalkConfig:
    """Settings of the concept-anchored walk (resolver, walk gates, budgets, scoring, sink).

    Every field is validated on construction; a bad value raises :class:`~conceptwalk.InputError`
    naming the field.

    Parameters
    ----------
    max_hops : int, default 2
        Hops from a resolved concept, 1 or 2 (hard cap :data:`MAX_HOPS_CAP`; larger raises).
    expand_edge_types : tuple of str, default ``("PARENT_CONCEPT", "RELATED_TO")``
        Edge types the walk goes *through* (every hop but the last).
    admit_edge_types : tuple of str, default ``("IMPLEMENTED_BY", "EXPLAINED_BY", "ATTACHED_TO", "TAGGED_CONCEPT")``
        Edge types whose far end may become a candidate (the last hop). Edge types are matched in
        either direction; a name the graph does not have matches nothing.
    concept_node_types : tuple of str or None, default ``("CONCEPT",)``
        Node types the resolver may return (None: any type).
    admit_node_types : tuple of str or None, default None
        Node types a candidate may have (None: any).
    expand_node_types : tuple of str or None, default None
        Node types the walk may pass through on a 2-hop path (None: any).
    max_concepts : int, default 5
        Resolved concepts the walk starts from (the most confident; the rest are cut and the
        walk reports ``truncated``).
    max_edges : int, default 2000
        Adjacency entries the walk may examine.
    max_candidates : int, default 20
        Distinct candidates the walk may collect (before removing those already in the flat
        results).
    hop_decay : float, default 0.5
        Score factor per hop beyond the first, in (0, 1].
    walk_min_share : float, default 0.0
        Share of the candidate budget guaranteed to every resolved concept the walk starts from,
        as a fraction of an equal split, in [0, 1]: with 0.5, 5 concepts and 20 candidates each
        is guaranteed 2, and the other 10 go in proportion to the concepts' confidences (a share
        a concept cannot use goes to the best remaining candidates). 0: the whole budget in
        proportion to the confidences (each concept still gets its proportional share, so a
        first concept with many neighbours cannot starve the others). 0.0 is the default from
        benchmarks/bench_resolve.py (CWE, EDAM, UMLS, GeoNames) and the synthetic KB of
        bench_wrap_recall.py: it was at least as good as 0.5 (the previous default) and 1.0 on
        every dataset in wrapped recall and in precision and recall of the additions (UMLS
        wrapped recall 0.893 vs 0.884 at 0.5, CWE 0.571 vs 0.565, EDAM 0.693 vs 0.689, GeoNames
        tied), and as good as 0.25 everywhere but the synthetic KB's precision of additions
        with FTS (0.102 vs 0.103).
    rank_by : {"path", "similarity", "path*similarity", "ppr"}, default "path"
        Order of the walk's candidates: by path score (best-first, as the walk keeps them); by
        the cosine similarity of the candidate's title to the query (the resolver's embedder);
        by path score x ``(1 + similarity) / 2``; or by a personalized PageRank from the walk's
        concepts (weighted by confidence) on the graph restricted to the walk's edge types.
        Measured in benchmarks/bench_resolve.py: none beat ``"path"`` on every dataset. With a ranking other than ``"path"`` the walk
        keeps ``rerank_pool`` times ``max_candidates`` candidates, which are reranked and cut.
    rerank_pool : int, default 2
        See ``rank_by``.
    max_paths_per_candidate : int, default 3
        Paths rendered per candidate (the best-scoring ones; ``pathCount`` gives the total).
    alias_confidence : float, default 1.0
        Evidence of an alias that is the whole query; an alias covering part of the query gets
        ``alias_confidence * sqrt(coverage)`` (coverage: the alias's share of the query's
        characters, stopwords left out), divided among the visible canonical ids of the alias.
    flat_hit_k : int, default 5
        How many of the flat search's top hits the resolver examines for concept nodes (0: none).
    flat_hit_confidence : float, default 0.9
        Confidence of a concept that is the flat search's hit at rank 1; rank ``r`` gets
        ``flat_hit_confidence / r``.
    lexical_k : int, default 5
        Concepts taken from the lexical (full-text) search over the concept nodes (0: none); rank
        ``r`` is evidence ``lexical_confidence / r``.
    lexical_confidence : float, default 0.6
        Evidence of the lexical search's first concept.
    semantic_k : int, default 3
        Concepts always taken from the semantic (embedding) top-k when they pass the threshold
        (0 disables semantic resolution).
    semantic_max_k : int, default 10
        More semantic concepts are taken, up to this many, while they are within
        ``semantic_margin`` of the best similarity (close candidates are not cut at 3).
    semantic_margin : float, default 0.05
        See ``semantic_max_k``.
    semantic_threshold : float, default 0.2
        Least cosine similarity for a semantic hit; its evidence is the similarity (chosen from
        ``benchmarks/bench_resolve.py --sweep``: 0.2 resolved at least as well as 0.3 and 0.45
        on all four real datasets, top-1 0.236 -> 0.270 on CWE, 0.313 -> 0.410 on GeoNames).
    concept_text : {"title", "title+body"}, default "title"
        What a concept's vector is embedded from when the store holds none for the embedder
        (measured: the title alone resolves better, see benchmarks/bench_resolve.py).
    normalized_confidence : float, default 0.6
        Confidence of a concept whose normalised title or id occurs in the normalised query (the
        fallback, used only when the alias map, the flat hits and the embeddings resolved nothing).
    embedder : str, Embedder or None, default ``"hashing:512:2-4"``
        Embedder spec for :func:`conceptwalk.wrap.embed.get_embedder`, or an embedder object
        (anything with ``name``, ``dim`` and ``embed(texts)``, as the retriever's own
        ``embedder=`` takes); None disables semantic resolution. The default is
        :data:`conceptwalk.wrap.embed.WRAP_DEFAULT`, measured. ``to_dict()`` shows an object by
        its ``name``.
    annotations : bool, default True
        Load the edge annotation columns with the graph (False: a lighter projection; the
        provenance axes are then reported ``absent-in-projection``).
    event_sink : str or None, default None
        Sink spec used when the retriever is given no ``event_sink``: ``"jsonl:PATH"``,
        ``"logging"`` or ``"logging:LOGGER"``.
    stop_rule : bool, default True
        The wrap stops when the evidence does: of the walk's candidates the flat results do not
        hold, those failing ``stop_score_ratio`` or the hop test (``stop_hop_confidence``,
        ``stop_flat_support``) are not appended (counted in the result's ``cut`` and the event's
        ``cut``/``cutBy``). ``max_candidates`` stays the hard cap. False appends every candidate
        up to ``max_candidates`` (the output before the rule, exactly).
    stop_score_ratio : float, default 0.25
        A candidate whose path score is below this fraction of the best path score of the
        query's walk (over all its candidates, also those the flat results hold) is cut
        (``cutBy.score``), in [0, 1].
    stop_hop_confidence : float, default 1.0
        A candidate whose best path has more than one hop is cut (``cutBy.hops``) unless the
        concept that path starts from was resolved with at least this confidence, in [0, 1],
        or the flat results support it (``stop_flat_support``); 0 keeps every 2-hop candidate.
    stop_flat_support : int, default 1
        A candidate more than one hop from a concept resolved below ``stop_hop_confidence`` is
        still appended when at least this many of the flat results are its neighbours (in what
        the caller sees): the flat search and the walk agree on it. 0 turns the support off (the
        confidence alone decides). The three defaults were chosen on the tuning half of four
        real datasets (CWE, EDAM, UMLS, GeoNames, two flat searches each) as the setting with
        the best mean precision of the appended items whose recall@20 stayed within 0.02 of the
        rule-off output on every one; the held-out figures are in docs/performance.md
        (``benchmarks/bench_wrap_precision.py``).

    Examples
    --------
    >>> cfg = WalkConfig()
    >>> cfg.max_hops, cfg.max_candidates, cfg.expand_edge_types
    (2, 20, ('PARENT_CONCEPT', 'RELATED_TO'))
    >>> cfg.with_gates(admit_edge_types=["mitigates", "detects"]).admit_edge_types
    ('mitigates', 'detects')
    >>> WalkConfig(max_hops=3)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: max_hops must be 1 or 2 (hard cap 2), got 3
    """

    max_hops: int = 2
    expand_edge_types: tuple[str, ...] = ("PARENT_CONCEPT", "RELATED_TO")
    admit_edge_types: tuple[str, ...] = ("IMPLEMENTED_BY", "EXPLAINED_BY", "ATTACHED_TO", "TAGGED_CONCEPT")
    concept_node_types: tuple[str, ...] | None = ("CONCEPT",)
    admit_node_types: tuple[str, ...] | None = None
    expand_node_types: tuple[str, ...] | None = None
    max_concepts: int = 5
    max_edges: int = 2000
    max_candidates: int = 20
    hop_decay: float = 0.5
    walk_min_share: float = 0.0
    rank_by: str = "path"
    rerank_pool: int = 2
    max_paths_per_candidate: int = 3
    alias_confidence: float = 1.0
    flat_hit_k: int = 5
    flat_hit_confidence: float = 0.9
    lexical_k: int = 5
    lexical_confidence: float = 0.6
    semantic_k: int = 3
    semantic_max_k: int = 10
    semantic_margin: float = 0.05
    semantic_threshold: float = 0.2
    concept_text: str = "title"
    normalized_confidence: float = 0.6
    embedder: str | Embedder | None = "hashing:512:2-4"
    annotations: bool = True
    event_sink: str | None = None
    stop_rule: bool = True
    stop_score_ratio: float = 0.25
    stop_hop_confidence: float = 1.0
    stop_flat_support: int = 1

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_hops, bool)
            or not isinstance(self.max_hops, int)
            or not 1 <= self.max_hops <= MAX_HOPS_CAP
        ):
            raise InputError(f"max_hops must be 1 or 2 (hard cap {MAX_HOPS_CAP}), got {self.max_hops!r}")
        set_ = object.__setattr__
        set_(self, "expand_edge_types", _names(self.expand_edge_types, "expand_edge_types"))
        set_(self, "admit_edge_types", _names(self.admit_edge_types, "admit_edge_types"))
        for name in ("concept_node_types", "admit_node_types", "expand_node_types"):
            set_(self, name, _names(getattr(self, name), name, allow_none=True))
        _int(self.max_concepts, "max_concepts", 1)
        _int(self.max_edges, "max_edges", 0)
        _int(self.max_candidates, "max_candidates", 0)
        _int(self.max_paths_per_candidate, "max_paths_per_candidate", 1)
        _int(self.rerank_pool, "rerank_pool", 1)
        if self.rank_by not in ("path", "similarity", "path*similarity", "ppr"):
            raise InputError(f"rank_by must be 'path', 'similarity', 'path*similarity' or 'ppr', got {self.rank_by!r}")
        _int(self.flat_hit_k, "flat_hit_k", 0)
        _int(self.semantic_k, "semantic_k", 0)
        _int(self.semantic_max_k, "semantic_max_k", 0)
        _int(self.lexical_k, "lexical_k", 0)
        set_(self, "semantic_margin", _unit(self.semantic_margin, "semantic_margin"))
        if self.concept_text not in ("title", "title+body"):
            raise InputError(f"concept_text must be 'title' or 'title+body', got {self.concept_text!r}")
        set_(self, "hop_decay", _unit(self.hop_decay, "hop_decay", open_low=True))
        set_(self, "walk_min_share", _unit(self.walk_min_share, "walk_min_share"))
        for name in ("alias_confidence", "flat_hit_confidence", "normalized_confidence", "lexical_confidence"):
            set_(self, name, _unit(getattr(self, name), name, open_low=True))
        set_(self, "semantic_threshold", _unit(self.semantic_threshold, "semantic_threshold"))
        if self.embedder is not None and not isinstance(self.embedder, (str, Embedder)):
            raise InputError(
                f"embedder must be an embedder spec string, an Embedder (name, dim, embed(texts)) "
                f"or None, got {type(self.embedder).__name__}"
            )
        if not isinstance(self.annotations, bool):
            raise InputError(f"annotations must be a bool, got {self.annotations!r}")
        if self.event_sink is not None and not isinstance(self.event_sink, str):
            raise InputError(f"event_sink must be a sink spec string or None, got {self.event_sink!r}")
        if not isinstance(self.stop_rule, bool):
            raise InputError(f"stop_rule must be a bool, got {self.stop_rule!r}")
        set_(self, "stop_score_ratio", _unit(self.stop_score_ratio, "stop_score_ratio"))
        set_(self, "stop_hop_confidence", _unit(self.stop_hop_confidence, "stop_hop_confidence"))
        _int(self.stop_flat_support, "stop_flat_support", 0)

    @classmethod
    def for_kb(cls, kb: Any, *, caller: Any, **fields: Any) -> WalkConfig:
        """A config whose walk types are taken from the graph as ``caller`` sees it.

        The rule (:func:`conceptwalk.wrap.probe.walk_types`, also behind probe's suggestion
        and ``conceptwalk query --walk-types auto``), over the edges whose two ends the caller
        sees:

        1. **Concept types**: the configured ``concept_node_types`` when some visible node has
           one of them; else the visible node type with the most nodes that have an edge (ties
           by name).
        2. **Admission**: the edge types that mostly join a concept to a node of another type
           (at least as many such edges as concept-to-concept ones): what is attached to a
           concept. When no edge type does (a KB of concepts only, as most ontologies), the
           edge types with a concept-to-concept edge: the related concepts are what the walk
           can add.
        3. **Expansion**: the edge types that mostly join two concepts (more concept-to-concept
           edges than concept-to-other ones), never an admission type; in a KB of concepts only,
           the most frequent concept-to-concept type (usually its hierarchy: ``ChildOf``,
           ``subClassOf``, ``isa``).

        Types are listed by edge count, descending, then name.

        Parameters
        ----------
        kb : KnowledgeBase or LinkGraph
            The graph the walk will run on.
        caller : Caller
            Whose view the types are counted over (required: a type only hidden nodes carry is
            never chosen, nor revealed).
        **fields
            Other :class:`WalkConfig` fields (``concept_node_types`` given here is step 1's
            configured type).

        Returns
        -------
        WalkConfig
            ``WalkConfig(**fields)`` with ``concept_node_types``, ``expand_edge_types`` and
            ``admit_edge_types`` from the rule (a gate the rule leaves empty keeps nothing:
            an empty expansion gate makes a 1-hop walk).

        Examples
        --------
        >>> from conceptwalk import Caller, LinkGraph
        >>> g = LinkGraph.from_edges(
        ...     [("c:tls", "c:tcp", "runs_over"), ("c:tls", "doc:rfc8446", "specified_in"),
        ...      ("c:tcp", "doc:rfc793", "specified_in")],
        ...     nodes=[{"id": "c:tls", "type": "CONCEPT"}, {"id": "c:tcp", "type": "CONCEPT"},
        ...            {"id": "doc:rfc8446", "type": "RFC"}, {"id": "doc:rfc793", "type": "RFC"}])
        >>> cfg = WalkConfig.for_kb(g, caller=Caller.all_access())
        >>> cfg.concept_node_types, cfg.expand_edge_types, cfg.admit_edge_types
        (('CONCEPT',), ('runs_over',), ('specified_in',))
        """
        from .probe import walk_types  # (probe imports this module)

        base = cls(**fields)
        concept, expand, admit = walk_types(kb, base, caller=caller)
        return replace(base, concept_node_types=concept, expand_edge_types=expand, admit_edge_types=admit)

    def with_gates(
        self, *, expand_edge_types: Iterable[str] | None = None, admit_edge_types: Iterable[str] | None = None
    ) -> WalkConfig:
        """A copy with the given edge-type gates replaced.

        Parameters
        ----------
        expand_edge_types : iterable of str, optional
            The new expansion gate (None keeps it as it is).
        admit_edge_types : iterable of str, optional
            The new admission gate (None keeps it as it is).

        Returns
        -------
        WalkConfig
            The copy (``self`` when nothing changes).
        """
        changes: dict[str, Any] = {}
        if expand_edge_types is not None:
            changes["expand_edge_types"] = _names(expand_edge_types, "expand_edge_types")
        if admit_edge_types is not None:
            changes["admit_edge_types"] = _names(admit_edge_types, "admit_edge_types")
        return replace(self, **changes) if changes else self

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict.

        Returns
        -------
        dict
            One key per field (tuples become lists).
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "embedder" and v is not None and not isinstance(v, str):
                v = str(v.name)  # an embedder object: its name (what its vectors are stored under)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out
