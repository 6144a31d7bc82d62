"""ConceptAnchoredRetriever: a flat search, wrapped with a bounded concept walk."""

from __future__ import annotations

import datetime as _dt
import inspect
import json
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import Caller
from ._live import live_read
from ._reader import ReadCache, StoreReader
from .config import WalkConfig, WalkTypesWarning
from .events import EVENT_SCHEMA_VERSION, emit_safely, make_sink
from .flat import BuiltinFlatSearch
from .probe import missing_types
from .resolver import ConceptResolver, ResolvedConcept
from .walk import LiveWalk, Provenance, WalkOutcome, prepared, run_walk

__all__ = ["ConceptAnchoredRetriever", "WrapResult", "VIA"]

#: The ``via`` value of every appended walk candidate.
VIA = "concept-walk"

FlatSearch = Callable[[str, int], Sequence[Mapping[str, Any]]]


def takes_caller(fn: Any) -> bool:
    """Whether the flat search ``fn`` accepts a ``caller`` keyword (a parameter named
    ``caller`` that can be passed by keyword, or ``**kwargs``): then it is given the query's
    caller.

    Examples
    --------
    >>> takes_caller(lambda text, k: []), takes_caller(lambda text, k, *, caller=None: [])
    (False, True)
    >>> takes_caller(lambda text, k, **kw: [])
    True
    """
    if isinstance(fn, BuiltinFlatSearch):
        return True
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: called as (text, k)
        return False
    return any(
        p.kind is p.VAR_KEYWORD or (p.name == "caller" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in params
    )


@dataclass
class WrapResult:
    """One wrapped query: the results (what :meth:`ConceptAnchoredRetriever.query` returns),
    the resolved concepts, and the retrieval event (None when the walk was off).

    Attributes
    ----------
    results : list of dict
        The flat results, then the walk's candidates.
    concepts : list of ResolvedConcept
        What the query resolved to (empty when the walk was off).
    event : dict or None
        The retrieval event emitted for this query (None when the walk was off).
    cut : int
        Walk candidates the stop rule did not append (``WalkConfig.stop_rule``; 0 when off).
    cut_by : dict of str to int
        Why: ``{"score": n, "hops": m}`` (each cut candidate counted once, under the first
        test it failed: its path score below ``stop_score_ratio`` of the best, or more than one
        hop from a concept resolved below ``stop_hop_confidence`` with fewer than
        ``stop_flat_support`` flat results among its neighbours).
    best_score : float or None
        The best path score of the walk's candidates (also those the flat results hold): the
        reference of ``stop_score_ratio``; None when the walk found nothing or was off.
    missing_types : dict of str to list of str
        The configured walk types absent from the caller's view, per gate
        (``expandEdgeTypes``, ``admitEdgeTypes``, ``conceptNodeTypes``, ``admitNodeTypes``,
        ``expandNodeTypes``); empty when every type is present. When a gate the walk cannot
        add anything without (admission edge types, concept node types, admission node types)
        has none of its types, a :class:`~conceptwalk.wrap.WalkTypesWarning` says so, once per
        retriever, store state and caller (see :meth:`WalkConfig.for_kb`).
    """

    results: list[Any]
    concepts: list[ResolvedConcept]
    event: dict[str, Any] | None
    cut: int = 0
    cut_by: dict[str, int] = field(default_factory=dict)
    missing_types: dict[str, list[str]] = field(default_factory=dict)
    best_score: float | None = None


class ConceptAnchoredRetriever:
    """Wrap any flat search with a bounded typed walk from the concepts a query names.

    ``query(text, k, concept_walk=True, caller=...)`` runs the flat search, resolves the query to
    concepts (:class:`~conceptwalk.wrap.ConceptResolver`), walks up to ``max_hops`` hops from them
    through expansion edge types and admits nodes reached over admission edge types, and
    appends the candidates the flat results do not already hold, best first. The flat results
    stay first, all of them, in their order and unchanged.

    Parameters
    ----------
    flat_search : callable
        ``flat_search(text, k) -> list[dict]``, each dict with at least ``"id"``. Its results are
        passed through untouched (they are the caller's own results: the retriever does not
        filter them by visibility). A flat search that accepts a ``caller`` keyword
        (``flat_search(text, k, *, caller)``, or ``**kwargs``) is called with the query's
        :class:`~conceptwalk.Caller`, so it can apply the caller's filter itself: in a vector
        database, turn ``caller.scopes`` into its metadata filter (``None`` = all access; else
        documents with no scopes or sharing one with ``caller.scopes``, e.g. a filter
        ``scopes == [] OR scopes IN caller.scopes``) so other tenants' documents never reach
        the wrapped list. A :class:`~conceptwalk.wrap.BuiltinFlatSearch` does this already.
    kb : KnowledgeBase or LinkGraph
        The graph to walk and the store of aliases and embeddings.
    config : WalkConfig, optional
        Defaults: :class:`WalkConfig` ``()``.
    event_sink : sink spec, optional
        Where each walk's retrieval event goes (see :func:`~conceptwalk.wrap.events.make_sink`);
        default ``config.event_sink``; None: no events.
    expand_edge_types, admit_edge_types : iterable of str, optional
        Override the config's edge-type gates (e.g. a KB's own ``mitigates`` / ``detects``).
    embedder : str or Embedder, optional
        Overrides ``config.embedder`` for semantic resolution.

    Examples
    --------
    >>> from conceptwalk import Caller, LinkGraph
    >>> g = LinkGraph.from_edges(
    ...     [{"src": "c:auth", "dst": "f:jwt.py", "type": "IMPLEMENTED_BY", "authority": "code",
    ...       "extraction_method": "TAGGED_CONCEPT", "extraction_confidence": 0.8}],
    ...     nodes=[{"id": "c:auth", "type": "CONCEPT", "title": "Authentication"},
    ...            {"id": "f:jwt.py", "type": "FILE", "title": "jwt.py"}])
    >>> flat = lambda text, k: [{"id": "doc:login", "score": 3.5}]
    >>> r = ConceptAnchoredRetriever(flat, g, config=WalkConfig(embedder=None))
    >>> r.query("authentication", 5, caller=Caller.all_access())
    [{'id': 'doc:login', 'score': 3.5}]
    >>> out = r.query("authentication", 5, concept_walk=True, caller=Caller.all_access())
    >>> out[1]["id"], out[1]["via"], out[1]["walkScore"]
    ('f:jwt.py', 'concept-walk', 0.48)
    >>> hop = out[1]["paths"][0]["hops"][0]
    >>> hop["type"], hop["authority"], hop["extractionProvenance"], hop["absent"]
    ('IMPLEMENTED_BY', 'code', {'method': 'TAGGED_CONCEPT', 'confidence': 0.8}, {'fidelity': 'absent-in-storage', 'lifecycle': 'absent-in-storage'})
    """

    def __init__(
        self,
        flat_search: FlatSearch,
        kb: Any,
        *,
        config: WalkConfig | None = None,
        event_sink: Any = None,
        expand_edge_types: Iterable[str] | None = None,
        admit_edge_types: Iterable[str] | None = None,
        embedder: Any = None,
    ) -> None:
        if not callable(flat_search):
            raise InputError(
                f"flat_search must be a callable (text, k) -> list[dict], got {type(flat_search).__name__}"
            )
        cfg = config if config is not None else WalkConfig()
        if not isinstance(cfg, WalkConfig):
            raise InputError(f"config must be a WalkConfig, got {type(cfg).__name__}")
        self.config = cfg.with_gates(expand_edge_types=expand_edge_types, admit_edge_types=admit_edge_types)
        self.flat_search = flat_search
        self._flat_takes_caller = takes_caller(flat_search)
        self.source = StoreReader(kb, annotations=self.config.annotations)
        self.resolver = ConceptResolver(kb, self.config, embedder=embedder, _reader=self.source)
        self.sink = make_sink(event_sink if event_sink is not None else self.config.event_sink)
        self._pool: WalkConfig | None = None
        self._warned: set[tuple[Any, ...]] = set()
        self.warm()

    def warm(self) -> None:
        """Build what a walk reads on the current snapshot (the resolver's caches, the store's
        annotation presence, the walk's gate arrays), so the first query costs what the next
        one does. Called on construction; rebuilt lazily when the store changes. On a live
        store written since its last full state, over its live graph's base
        (:meth:`ConceptResolver.warm_cache`)."""
        snap = self.resolver.warm_cache()
        snap.presence()
        prepared(snap.graph, self.config)
        if self.config.rank_by != "path":
            prepared(snap.graph, self._pool_config())

    def __repr__(self) -> str:
        return f"ConceptAnchoredRetriever(flat_search={self.flat_search!r}, config={self.config!r})"

    # ------------------------------------------------------------------ public
    def query(
        self,
        text: str,
        k: int,
        *,
        concept_walk: bool = False,
        caller: Caller,
        query_vector: Any = None,
        query_model: str | None = None,
    ) -> list[Any]:
        """Answer ``text`` with the flat search's top ``k``, plus (with ``concept_walk=True``) the
        walk's candidates appended after them.

        Parameters
        ----------
        text : str
            The query (empty or blank: :class:`~conceptwalk.errors.InputError`, as in ``graph_context``).
        k : int
            Passed to the flat search. The walk appends at most ``config.max_candidates`` more.
        concept_walk : bool, default False
            Off: the flat search's results are returned as they are (byte-identical once
            serialised). On: one walk, one retrieval event.
        caller : Caller
            Whose visibility the walk (and the built-in flat search) respects.
        query_vector : array-like, optional
            The query's embedding by the resolver's embedder, when the caller already has it
            (its flat search embedded the query): the resolver uses it instead of embedding the
            text again. Checked: the embedder's dimension, finite, and ``query_model`` (see
            :meth:`ConceptResolver.check_query_vector`); a mismatch raises ``InputError``.
        query_model : str, optional
            The name of the model that made ``query_vector`` (must equal the embedder's name).

        Returns
        -------
        list of dict
            JSON-ready. Flat results first, unchanged; then walk candidates
            ``{"id", "type", "title", "via": "concept-walk", "walkScore", "concept", "hops",
            "pathCount", "paths": [...]}`` (see docs/wrap.md for the full shape). When the walk
            adds nothing, exactly the flat results.
        """
        return self.run(
            text, k, concept_walk=concept_walk, caller=caller, query_vector=query_vector, query_model=query_model
        ).results

    def run(
        self,
        text: str,
        k: int,
        *,
        concept_walk: bool = False,
        caller: Caller,
        query_vector: Any = None,
        query_model: str | None = None,
    ) -> WrapResult:
        """Like :meth:`query`, also returning the resolved concepts and the retrieval event.

        Parameters
        ----------
        text : str
            The query.
        k : int
            Passed to the flat search.
        concept_walk : bool, default False
            Run the walk (see :meth:`query`).
        caller : Caller
            Whose visibility the walk (and the built-in flat search) respects.
        query_vector, query_model : optional
            The query's embedding, already computed (see :meth:`query`).

        Returns
        -------
        WrapResult
            The results of :meth:`query`, the resolved concepts, the event, what the stop rule
            cut and the configured types the caller's view lacks.
        """
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():  # one behaviour for one input: as graph_context and search (E210, E211)
            raise InputError("query: text is empty: give words to search for")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        if not isinstance(caller, Caller):
            raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
        if concept_walk is None:
            concept_walk = False
        if not isinstance(concept_walk, bool):
            raise InputError(f"concept_walk must be a bool, got {concept_walk!r}")
        qvec = self.resolver.check_query_vector(query_vector, query_model) if concept_walk else None
        t0 = time.perf_counter()
        flat: Any
        fs = self.flat_search
        snap = None
        # (the built-in search itself: a subclass's own __call__, a filter or a rerank, is called)
        builtin = (
            fs
            if isinstance(fs, BuiltinFlatSearch)
            and type(fs).__call__ is BuiltinFlatSearch.__call__
            and fs.kb is not None
            and fs.kb is self.source.kb
            else None
        )
        # over a live store, the read after a write costs the change (_live.py; None: the
        # full snapshot, brought to the last write, answers)
        live = live_read(self, caller, builtin) if concept_walk else None
        if isinstance(live, ReadCache):  # the store's current state, held: it answers
            snap, live = live, None
        if live is not None and builtin is not None:
            flat = live.flat(text, k)
        else:
            if concept_walk and builtin is not None and snap is None:
                snap = self.source.read_cache()  # the built-in search over this store: one state for all
            if builtin is not None and snap is not None and snap.state is not None:
                share = None
                if builtin.mode == "embedding" and self._same_embedder(builtin.embedder):
                    # the built-in embedding search and the resolver embed with one model: embed once
                    if qvec is None:
                        qvec = np.asarray(self.resolver.embedder.embed([text]), dtype=np.float32)[0]
                    share = qvec
                flat = builtin.search_state(snap.state, text, k, caller=caller, query_vector=share)
            elif self._flat_takes_caller:  # fail closed: the flat search applies the query's caller
                flat = fs(text, k, caller=caller)  # type: ignore[call-arg]
            else:
                flat = fs(text, k)
        flat_list = list(flat)
        if not concept_walk:
            return WrapResult(flat_list, [], None)
        t1 = time.perf_counter()
        present: set[str] = set()
        for i, hit in enumerate(flat_list):
            if not isinstance(hit, Mapping) or "id" not in hit:
                raise InputError(f"flat_search result [{i}] must be a dict with an 'id', got {hit!r:.80}")
            present.add(hit["id"])
        cfg = self.config
        if live is not None:
            snap = live.base
        elif snap is None:
            snap = self.source.read_cache()
        # one state for the resolution and the walk (and the built-in flat search's hits; nothing
        # here writes to the store)
        resolved = self.resolver.resolve(
            text, caller=caller, flat_results=flat_list, read_cache=snap, query_vector=qvec, _live=live
        )
        t2 = time.perf_counter()
        concepts = resolved[: cfg.max_concepts]
        truncated_by = ["concepts"] if len(resolved) > cfg.max_concepts else []
        rerank = cfg.rank_by == "ppr" or (cfg.rank_by != "path" and self.resolver.embedder is not None)
        walk_cfg = cfg if not rerank else self._pool_config()
        g = snap.graph
        if live is None:
            view: Any = g.view(caller)
            vm = view.mask
            # the configured types this caller's view lacks (counted over what it sees; kept per view)
            kept_missing, empty = view.memo(
                ("wrap.missing-types", snap.identity, cfg),
                lambda: missing_types(g, None if vm is None else vm.mask, cfg),
            )
            identity: Any = snap.identity
            # the caller's provenance renderer, kept in its view (its per-edge cache outlives a query)
            # (keyed by the snapshot's identity: retrievers made per request over one store share it)
            prov: Any = view.memo(("wrap.provenance", snap.identity), lambda: Provenance(g, snap.presence(view)))
            slot_of: Callable[[str], int | None] = g.id_index.get
            ids, tnames, tcodes, titles = g.ids, g.node_type_names, g.node_type_codes, g.titles
            node: Callable[[int], tuple[str, str, str | None]] = lambda c: (  # noqa: E731
                ids[c],
                tnames[int(tcodes[c])],
                titles[c],
            )
            neighbors: Callable[[str], Iterable[str]] = lambda x: g.neighbors(x, visible=vm)  # noqa: E731
            target: LiveWalk | None = None
        else:
            view, vm = live.view, None
            kept_missing, empty = live.missing_types(cfg)
            identity = live.identity
            prov = live.provenance()
            slot_of, node, neighbors, target = live.slot, live.node, live.neighbor_ids, live.walk_target()
        missing = {gate: list(names) for gate, names in kept_missing.items()}  # (the kept one stays intact)
        if empty:
            self._warn_types(missing, empty, identity, view)
        starts: list[tuple[int, str, float]] = []
        for c in concepts:
            at = slot_of(c.id)
            assert at is not None  # (a resolved concept is a node the caller sees)
            starts.append((at, c.id, c.confidence))
        # without a rerank the walk's order is final: its own call renders the candidates the
        # flat results do not hold (one compiled call for the walk and its paths)
        skip = None if rerank else [i for i in (slot_of(x) for x in present) if i is not None]
        outcome: WalkOutcome = run_walk(g, starts, walk_cfg, vm, prov, render_except=skip, live=target)
        ranked = outcome.candidates
        if rerank and ranked:
            ranked = self._rerank(text, snap, outcome, g, vm, concepts, qvec)
            if len(ranked) > cfg.max_candidates:
                ranked = ranked[: cfg.max_candidates]
                if "candidates" not in outcome.truncated_by:
                    outcome.truncated_by.append("candidates")
        truncated_by += outcome.truncated_by
        rows = {c: node(c) for c in ranked}
        new = [c for c in ranked if rows[c][0] not in present]  # ranked by the walk (or reranked)
        filtered = len(ranked) - len(new)
        added = [self._render(rows[c], c, outcome, paths) for c, paths in zip(new, outcome.rendered(new))]
        cut_by: dict[str, int] = {}
        if cfg.stop_rule and added:
            added, cut_by = self._stop(added, outcome, ranked, concepts, neighbors, present)
        cut = sum(cut_by.values())
        t3 = time.perf_counter()
        event = {
            "schemaVersion": EVENT_SCHEMA_VERSION,
            "event": "conceptwalk.retrieval",
            "timestamp": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "query": text,
            "k": k,
            "resolvedConcepts": [c.to_dict() for c in concepts],
            "walkContributed": bool(added),
            "candidatesAdded": len(added),
            "filteredOut": filtered,
            "cut": cut,
            "cutBy": cut_by,
            "missingTypes": missing,
            "truncated": bool(truncated_by),
            "truncatedBy": truncated_by,
            "edgesVisited": outcome.edges_visited,
            "pathCount": sum(outcome.path_count.values()),
            "flatCount": len(flat_list),
            "flatMs": round((t1 - t0) * 1e3, 4),
            "resolveMs": round((t2 - t1) * 1e3, 4),
            "walkMs": round((t3 - t1) * 1e3, 4),
        }
        emit_safely(self.sink, event)
        results = flat_list + added if added else flat_list
        best = max((outcome.scores[c] for c in ranked), default=None)
        return WrapResult(results, concepts, event, cut, cut_by, missing, best)

    def _stop(
        self,
        added: list[dict[str, Any]],
        outcome: WalkOutcome,
        ranked: list[int],
        concepts: list[ResolvedConcept],
        neighbors: Callable[[str], Iterable[str]],
        present: set[str],
    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The stop rule (``WalkConfig.stop_rule``): the appended candidates whose evidence holds,
        in their order, and how many were cut for what. The flat support of a candidate is the
        number of flat results among its neighbours the caller sees (``neighbors(id)``: their
        ids; ``present``: the flat ids)."""
        cfg = self.config
        best = max(outcome.scores[c] for c in ranked)  # the walk's strongest evidence for this query
        floor = cfg.stop_score_ratio * best
        conf = {c.id: c.confidence for c in concepts}
        support = cfg.stop_flat_support
        keep: list[dict[str, Any]] = []
        by_score = by_hops = 0
        for item in added:
            if item["walkScore"] < floor:
                by_score += 1
            elif (
                item["hops"] > 1
                and conf.get(item["concept"], 0.0) < cfg.stop_hop_confidence
                and not (support and _flat_support(neighbors(item["id"]), present, support))
            ):
                by_hops += 1
            else:
                keep.append(item)
        cut_by = {}
        if by_score:
            cut_by["score"] = by_score
        if by_hops:
            cut_by["hops"] = by_hops
        return keep, cut_by

    def _warn_types(self, missing: dict[str, list[str]], empty: list[str], identity: Any, view: Any) -> None:
        """One :class:`WalkTypesWarning` per (retriever, store state, caller view, gates)."""
        key = (identity, id(view), tuple(empty))
        if key in self._warned:
            return
        if len(self._warned) >= 1024:  # a long-lived retriever over many states and callers: bounded
            self._warned.clear()
        self._warned.add(key)
        warnings.warn(types_message(missing, empty), WalkTypesWarning, stacklevel=4)

    def _same_embedder(self, other: Any) -> bool:
        """Whether ``other`` is the resolver's embedder's model (same name and dimension)."""
        mine = self.resolver.embedder
        if mine is None or other is None or self.config.semantic_k == 0:
            return False
        return bool(str(mine.name) == str(other.name) and int(mine.dim) == int(other.dim))

    def _pool_config(self) -> WalkConfig:
        got = self._pool
        if got is None:
            got = replace(self.config, max_candidates=self.config.max_candidates * self.config.rerank_pool)
            self._pool = got
        return got

    def _rerank(
        self,
        text: str,
        snap: Any,
        outcome: WalkOutcome,
        g: Any,
        vm: Any,
        concepts: list[ResolvedConcept],
        qvec: Any = None,
    ) -> list[int]:
        """The walk's candidates by ``config.rank_by`` (ties: the walk's order)."""
        cands = outcome.candidates
        if self.config.rank_by == "ppr":
            sub = prepared(g, self._pool_config()).typed_graph()
            seeds = {c.id: c.confidence for c in concepts}
            ppr = sub.personalized_pagerank(seeds, visible=None if vm is None else vm.mask).to_dict()
            ids = g.ids
            pk = [-ppr.get(ids[c], 0.0) for c in cands]
            return [cands[i] for i in sorted(range(len(cands)), key=lambda i: (pk[i], i))]
        emb = self.resolver.embedder
        q = qvec if qvec is not None else np.asarray(emb.embed([text]), dtype=np.float32)[0]
        sims = np.einsum("ij,j->i", snap.node_vectors(emb, cands), q).astype(np.float64).tolist()
        if self.config.rank_by == "similarity":
            keys = [-s for s in sims]
        else:
            keys = [-outcome.score(c) * (1.0 + s) / 2.0 for c, s in zip(cands, sims)]
        order = sorted(range(len(cands)), key=lambda i: (keys[i], i))
        return [cands[i] for i in order]

    # ------------------------------------------------------------------ rendering
    def _render(
        self, row: tuple[str, str, str | None], c: int, outcome: WalkOutcome, paths: list[dict[str, Any]]
    ) -> dict[str, Any]:
        best = paths[0]
        return {
            "id": row[0],
            "type": row[1],
            "title": row[2],
            "via": VIA,
            "walkScore": best["score"],
            "concept": best["concept"],
            "conceptsReaching": outcome.reach[c],
            "hops": len(best["hops"]),
            "pathCount": outcome.path_count[c],
            "paths": paths,
        }


def _flat_support(neighbors: Iterable[str], present: set[str], need: int) -> bool:
    """Whether at least ``need`` of the ids in ``present`` are among ``neighbors`` (a node's
    visible neighbours).

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("c", "x"), ("c", "y"), ("z", "x")])
    >>> _flat_support(g.neighbors("c"), {"x", "y"}, 2), _flat_support(g.neighbors("z"), {"x", "y"}, 2)
    (True, False)
    """
    n = 0
    for x in neighbors:
        if x in present:
            n += 1
            if n >= need:
                return True
    return False


_GATE_WORDS = {
    "expandEdgeTypes": "expansion edge types",
    "admitEdgeTypes": "admission edge types",
    "conceptNodeTypes": "concept node types",
    "admitNodeTypes": "admission node types",
    "expandNodeTypes": "expansion node types",
}


def types_message(missing: dict[str, list[str]], empty: list[str]) -> str:
    """The text of the :class:`WalkTypesWarning` (also the CLI's warning line).

    Examples
    --------
    >>> print(types_message({"admitEdgeTypes": ["IMPLEMENTED_BY"]}, ["admitEdgeTypes"]))
    the walk's admission edge types IMPLEMENTED_BY are absent from what this caller sees, so the walk can add nothing; take the KB's own types with WalkConfig.for_kb(kb, caller=...) (CLI: --walk-types auto), or see `conceptwalk probe`
    """
    parts = [f"{_GATE_WORDS[k]} {', '.join(missing[k])}" for k in empty]
    return (
        f"the walk's {'; '.join(parts)} are absent "
        f"from what this caller sees, so the walk can add nothing; take the KB's own types with "
        f"WalkConfig.for_kb(kb, caller=...) (CLI: --walk-types auto), or see `conceptwalk probe`"
    )


def dumps(results: Any) -> str:
    """The canonical serialisation used by the CLI's ``--json`` (``json.dumps``, UTF-8 kept)."""
    return json.dumps(results, ensure_ascii=False)
