"""``graph_context``: the nodes around a question, ranked by personalized PageRank, one query or
many (:func:`graph_context_batch`, across C++ threads, results identical to one-by-one calls).

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> g = LinkGraph.from_edges(
...     [("auth", "tokens", "RELATED_TO"), ("tokens", "jwt.py", "IMPLEMENTED_BY"),
...      ("auth", "login", "RELATED_TO"), ("login", "jwt.py", "RELATED_TO")],
...     nodes=[{"id": "auth", "type": "CONCEPT", "title": "Authentication"}])
>>> ctx = graph_context(g, concepts=["auth"], k=3, caller=Caller.all_access())
>>> [(r.id, r.hops, r.via) for r in ctx.results]
[('login', 1, 'auth'), ('tokens', 1, 'auth'), ('jwt.py', 2, 'auth')]
>>> batch = graph_context_batch(g, [{"concepts": ["auth"]}, {"concepts": ["jwt.py"]}], k=2,
...                             caller=Caller.all_access())
>>> [[r.id for r in c.results] for c in batch]
[['login', 'tokens'], ['login', 'tokens']]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..graph import Caller, LinkGraph, VisibilityMask
from ..graph.context import context, context_batch, context_live, context_text
from ..graph.live import LiveGraph
from ..graph.result import Later, Record, lazy
from ..graph.text import TextIndex
from ..graph.checks import check_count, check_ppr_params, check_threads, query_list
from ..graph.names import STOPWORDS, content_text, named_nodes, source_name_indexes
from ..graph.scopes import warn_unknown_scopes
from ..graph.text import words
from .common import GraphSource, SearchFn, check_caller, live_slots, offsets, source_graph, source_search

__all__ = [
    "MAX_COVERAGE_HOPS",
    "ContextItem",
    "ContextResult",
    "ContextSeed",
    "check_question",
    "check_rank",
    "graph_context",
    "graph_context_batch",
    "parse_context_query",
]


@dataclass(slots=True)
class ContextSeed:
    """A seed of the walk: a full-text hit (weight 1/rank), a given concept (weight 1) or a node
    the question names by id or alias (weight 1; :mod:`conceptwalk.graph.names`).

    Parameters
    ----------
    id, type : str
        The seed node and its type.
    title : str or None
    weight : float
        Its seed weight (a concept that is also a hit gets both weights, in one seed each).
    source : str
        ``"search"``, ``"concept"`` or ``"name"``.
    rank : int, optional
        1-based rank among the visible search hits (search seeds only).

    Examples
    --------
    >>> ContextSeed("a", "CONCEPT", None, 1.0, "concept").to_dict()
    {'id': 'a', 'type': 'CONCEPT', 'title': None, 'weight': 1.0, 'source': 'concept'}
    """

    id: str
    type: str
    title: str | None
    weight: float
    source: str  # "search", "concept" or "name"
    rank: int | None = None  # 1-based rank among the visible search hits

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``rank`` only for search seeds).

        Returns
        -------
        dict
        """
        d: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "weight": self.weight,
            "source": self.source,
        }
        if self.rank is not None:
            d["rank"] = self.rank
        return d


@dataclass(slots=True)
class ContextItem:
    """A node of the context: PPR score, hop count from the nearest seed and that seed.

    Parameters
    ----------
    id, type : str
    title : str or None
    score : float
        Its PPR score (a probability mass; an underestimate by less than ``eps * deg``).
    hops : int
        Distance to the nearest seed.
    via : str
        That seed (smallest id on ties).
    coverage : int, optional
        ``rank="coverage"`` only: how many distinct seeds are within ``max_hops`` of it.
    covered_by : tuple of str, optional
        ``rank="coverage"`` only: those seeds (ascending id).

    Examples
    --------
    >>> ContextItem("b", "NODE", None, 0.2, 1, "a").to_dict()["via"]
    'a'
    >>> ContextItem("b", "NODE", None, 0.2, 1, "a", 2, ("a", "c")).to_dict()["coveredBy"]
    ['a', 'c']
    """

    id: str
    type: str
    title: str | None
    score: float
    hops: int
    via: str
    coverage: int | None = None
    covered_by: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form.

        Returns
        -------
        dict
        """
        d: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "score": self.score,
            "hops": self.hops,
            "via": self.via,
        }
        if self.coverage is not None:
            d["coverage"] = self.coverage
            d["coveredBy"] = list(self.covered_by or ())
        return d


class ContextResult(Record):
    """What :func:`graph_context` returns. ``reason`` explains an empty result; equality
    compares ``to_dict()``.

    Parameters
    ----------
    question : str or None
    seeds : list of ContextSeed, or a callable returning it
    results : list of ContextItem, or a callable returning it
        Ranked by score descending, then id; no seed among them. A callable is called once, on
        first access (the tools build the item objects from the core's arrays only when read).
    restart, eps : float
        The PPR parameters used.
    k : int
        Results asked for.
    residual : float
        The PPR's unpushed mass.
    pushes : int
        Pushes done.
    reason : str, optional
        Why ``results`` is empty.
    elapsed_ms : float
        Wall time (not part of ``to_dict()`` or of equality).

    Attributes
    ----------
    rank : str
        ``"ppr"`` or ``"coverage"`` (with ``max_hops``).
    eps_reached : float
        The eps the PPR's scores satisfy (each is below its exact PPR by less than
        ``eps_reached`` times its visible degree): below ``eps`` when a hub seed made the query
        lower it, above it when the push's work budget cut it (``push_truncated``);
        ``to_dict()`` has ``epsReached`` when it differs from ``eps``.
    truncated : bool
        A work budget cut the answer: the push's (``push_truncated``) or, for
        ``rank="coverage"``, the coverage pass's (then ``hops_completed < max_hops``).
        ``to_dict()`` has ``truncated`` then.
    push_truncated : bool
        The push's work budget (``_core.PUSH_VISITS`` adjacency entries read, every round
        together) stopped it before ``eps`` held; the scores satisfy ``eps_reached`` instead.
        Only a vanishing ``restart`` or a tiny ``eps`` gets there: every round with
        ``restart * eps >= 2**-26`` fits. ``to_dict()`` has ``pushTruncated`` then, and
        ``str()`` a line.
    edge_visits : int
        Adjacency entries the push read (at most ``_core.PUSH_VISITS``).
    hops_completed : int or None
        ``rank="coverage"``: the radius the coverage pass completed. The budget is spent level by
        level across all seeds (every seed's first hop before any seed's second), so the
        coverage shown is exact for this radius: ``max_hops`` unless ``truncated``, then the
        largest radius whose search from every seed fits in the budget (``0``: not even one hop
        fits, and there are no results). ``to_dict()`` has it as ``hopsCompleted``. ``None``
        for ``rank="ppr"``.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> r = graph_context(LinkGraph.from_edges([("a", "b")]), concepts=["a"], caller=Caller.all_access())
    >>> [x.id for x in r.results], sorted(r.to_dict())
    (['b'], ['params', 'pushes', 'question', 'residual', 'results', 'seeds'])

    It is sized and iterable like its ``results`` (the ranked items):

    >>> len(r), [x.id for x in r], list(r) == r.results
    (1, ['b'], True)
    """

    __slots__ = (
        "question",
        "restart",
        "eps",
        "k",
        "residual",
        "pushes",
        "reason",
        "elapsed_ms",
        "rank",
        "max_hops",
        "eps_reached",
        "truncated",
        "push_truncated",
        "edge_visits",
        "hops_completed",
        "_seeds",
        "_results",
    )
    _fields = ("question", "seeds", "results", "restart", "eps", "k", "residual", "pushes", "reason", "elapsed_ms")
    _state = ("rank", "max_hops", "eps_reached", "truncated", "push_truncated", "edge_visits", "hops_completed")
    _sequence = "results"

    seeds = lazy("What the walk started from.")
    results = lazy("The ranked nodes (no seed among them).")

    def __init__(
        self,
        question: str | None,
        seeds: list[ContextSeed] | Callable[[], list[ContextSeed]],
        results: list[ContextItem] | Callable[[], list[ContextItem]],
        restart: float,
        eps: float,
        k: int,
        residual: float = 0.0,
        pushes: int = 0,
        reason: str | None = None,
        elapsed_ms: float = 0.0,
    ) -> None:
        self.question = question
        self.restart = restart
        self.eps = eps
        self.k = k
        self.residual = residual
        self.pushes = pushes
        self.reason = reason
        self.elapsed_ms = elapsed_ms
        self.rank = "ppr"
        self.max_hops = 2
        self.eps_reached = eps
        self.truncated = False
        self.push_truncated = False
        self.edge_visits = 0
        self.hops_completed: int | None = None
        self._seeds = Later(seeds) if callable(seeds) else list(seeds)
        self._results = Later(results) if callable(results) else list(results)

    @classmethod
    def from_core(
        cls,
        question: str | None,
        seeds: Callable[[], list[ContextSeed]],
        results: Callable[[], list[ContextItem]],
        restart: float,
        eps: float,
        k: int,
        core: Any,
        elapsed_ms: float,
    ) -> ContextResult:
        """The result of a core result (its ``residual``, ``pushes``, ``eps`` reached, work and
        budgets read from it).

        Parameters
        ----------
        question, seeds, results, restart, eps, k, elapsed_ms
            As for the constructor.
        core : conceptwalk._core.ContextResult or None
            The core result (with ``residual``, ``pushes``, ``eps``, ``edge_visits``,
            ``truncated``, ``push_truncated`` and ``radius``).

        Returns
        -------
        ContextResult

        Examples
        --------
        >>> ContextResult.from_core(None, list, list, 0.25, 1e-4, 5, None, 0.0).results
        []
        """
        if core is None:
            return cls(question, seeds, results, restart, eps, k, 0.0, 0, None, elapsed_ms)
        self = cls(question, seeds, results, restart, eps, k, core.residual, core.pushes, None, elapsed_ms)
        self.set_work(core.eps, core.edge_visits, bool(core.push_truncated), bool(core.truncated), core.radius)
        return self

    def set_work(
        self, eps_reached: float, edge_visits: int, push_truncated: bool, cover_truncated: bool, radius: int
    ) -> None:
        """Record what the core reported about the push and the coverage pass.

        Parameters
        ----------
        eps_reached : float
            The eps the scores satisfy.
        edge_visits : int
            Adjacency entries the push read.
        push_truncated, cover_truncated : bool
            The push's, the coverage pass's work budget cut it.
        radius : int
            The radius the coverage pass completed.

        Examples
        --------
        >>> r = ContextResult(None, [], [], 1e-9, 1e-3, 5)
        >>> r.set_work(0.03, 2**26, True, False, 2)
        >>> r.truncated, r.to_dict()["pushTruncated"], r.to_dict()["epsReached"]
        (True, True, 0.03)
        """
        self.eps_reached, self.edge_visits = eps_reached, edge_visits
        self.push_truncated = push_truncated
        self.truncated = push_truncated or cover_truncated
        self.hops_completed = radius

    def __repr__(self) -> str:
        return (
            f"ContextResult(question={self.question!r}, seeds={len(self.seeds)}, "
            f"results={len(self.results)}, k={self.k})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``question``, ``seeds``, ``results``, ``params``, ``residual``,
        ``pushes`` and ``reason`` when empty (no timings: deterministic).

        Returns
        -------
        dict
        """
        d: dict[str, Any] = {
            "question": self.question,
            "seeds": [s.to_dict() for s in self.seeds],
            "results": [r.to_dict() for r in self.results],
            "params": {"restart": self.restart, "eps": self.eps, "k": self.k},
            "residual": self.residual,
            "pushes": self.pushes,
        }
        if self.rank != "ppr":
            d["params"]["rank"] = self.rank
            d["params"]["maxHops"] = self.max_hops
            d["hopsCompleted"] = self.hops_completed
        if self.eps_reached != self.eps:
            d["epsReached"] = self.eps_reached
        if self.truncated:
            d["truncated"] = True
        if self.push_truncated:
            d["pushTruncated"] = True
        if self.reason is not None:
            d["reason"] = self.reason
        return d

    def __str__(self) -> str:
        lines = [f"context for {self.question!r}" if self.question else "context"]
        if self.reason:
            lines.append(f"  (empty: {self.reason})")
        if self.rank == "coverage" and self.hops_completed != self.max_hops:
            lines.append(
                f"  (coverage within {self.hops_completed} of {self.max_hops} hops: the work budget "
                "ran out; the counts are exact for that radius)"
            )
        if self.push_truncated:
            lines.append(
                f"  (the push's work budget ran out after {self.edge_visits:,} edge visits: each score is "
                f"within {self.eps_reached:.3g} x its degree of exact PPR, not eps={self.eps:g})"
            )
        if self.seeds:
            lines.append(
                "  seeds: "
                + ", ".join(
                    f"{s.id} ({s.source}{'' if s.rank is None else ' #' + str(s.rank)}, w={s.weight:.3g})"
                    for s in self.seeds
                )
            )
        for i, r in enumerate(self.results, 1):
            title = f"  {r.title}" if r.title else ""
            cov = (
                ""
                if r.coverage is None
                else f", reached from {r.coverage} of {len(self.seeds)} seeds: {', '.join(r.covered_by or ())}"
            )
            lines.append(
                f"  {i:>3}. {r.score:.5f}  {r.id} [{r.type}]{title}  "
                f"({r.hops} hop{'s' if r.hops != 1 else ''} via {r.via}{cov})"
            )
        return "\n".join(lines)


def _source_state(
    source: Any, questions: Iterable[str | None], search: SearchFn | None
) -> tuple[LinkGraph, Any, TextIndex | None, Any]:
    """``(graph, source or None, text index or None, state or None)`` of one query (or batch).
    Questions answered by a store's own search take the graph and its text index from one
    ``state()`` of the store (one committed state, read together: a write committed meanwhile by
    another process cannot make the two disagree); everything else reads only ``graph()``."""
    if search is None and not isinstance(source, LinkGraph) and any(q is not None and q.strip() for q in questions):
        state = getattr(source, "state", None)
        if callable(state):
            st = state()
            return st.graph, source, st.text_index, st
    g, kb = source_graph(source)
    return g, kb, None, None


def check_question(question: Any, argument: str = "question") -> str | None:
    """``question`` checked: None, or a string with a non-space character (an empty or blank
    question is an :class:`InputError`: pass None to seed from concepts only).

    Parameters
    ----------
    question : str or None
    argument : str
        Its name in the message.

    Returns
    -------
    str or None

    Examples
    --------
    >>> check_question("tls"), check_question(None)
    ('tls', None)
    >>> check_question("   ")
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: question is empty: give words to search for, or question=None to seed from concepts only
    """
    if question is None:
        return None
    if not isinstance(question, str):
        raise InputError(f"{argument} must be a string or None, got {type(question).__name__}")
    if not question.strip():
        raise InputError(
            f"{argument} is empty: give words to search for, or {argument}=None to seed from concepts only"
        )
    return question


def _nothing_left(question: str) -> str:
    """Why a question whose text search is empty seeded nothing."""
    ws = words(question)
    if not ws:
        return "the question has no words to search for and names no visible node"
    shown = ", ".join(dict.fromkeys(w for w in ws if w in STOPWORDS))
    return f"the question has only stopwords ({shown}): nothing is left to search, and it names no visible node"


def _named(g: LinkGraph, kb: Any, st: Any, question: str | None, vm: VisibilityMask | None) -> list[int]:
    """Indices of the visible nodes ``question`` names by id or alias, ranked
    (:func:`conceptwalk.graph.names.named_nodes`)."""
    if question is None:
        return []
    mask = None if vm is None else vm.mask
    return [v for v, _ in named_nodes(question, g, mask, source_name_indexes(g, kb, st))]


def _search_hits(
    kb: Any,
    search: SearchFn | None,
    question: str,
    n_hits: int,
    g: LinkGraph,
    vm: VisibilityMask | None,
    ix: TextIndex | None = None,
) -> list[int]:
    """Indices of the top ``n_hits`` visible hits, in rank order.

    With the knowledge base's own search (no ``search=``) the hits are BM25 over the caller's
    visible nodes from ``ix``, the text index of the same state as ``g``
    (:func:`_source_state`): one exact call, scores as on the store with the hidden nodes
    deleted. A ``search=`` callable (or a graph source without ``state()``) is a backend of the
    caller's own: it is asked for four times more hits each round, with no cap on the rounds,
    until ``n_hits`` visible hits are found or it stops returning more (exhausted)."""
    if search is None and ix is not None:
        docs: list[int] = ix.search(question, n_hits, visible=vm)[0]
        return docs
    fn: SearchFn | None = search if search is not None else source_search(kb)
    if fn is None:
        raise InputError(
            "question: searching text needs a knowledge base or search=callable; "
            "pass concepts= to seed a LinkGraph directly"
        )
    mask = None if vm is None else vm.mask
    want = n_hits
    got = -1
    while True:  # ask for more when hidden or unknown hits were dropped
        raw = list(fn(question, want))
        hits: list[int] = []
        seen: set[int] = set()
        for h in raw:
            hid = h[0] if isinstance(h, (tuple, list)) else (h["id"] if isinstance(h, dict) else h)
            idx = g.id_index.get(hid) if isinstance(hid, str) else None
            if idx is None or idx in seen or (mask is not None and not mask[idx]):
                continue
            seen.add(idx)
            hits.append(idx)
            if len(hits) == n_hits:
                return hits
        if len(raw) < want or len(raw) <= got:  # exhausted (or a backend that ignores k)
            return hits
        got = len(raw)
        want *= 4


def graph_context(
    source: LinkGraph | GraphSource,
    question: str | None = None,
    *,
    concepts: Iterable[str] = (),
    k: int = 20,
    caller: Caller,
    restart: float = 0.25,
    eps: float = 1e-4,
    node_types: Iterable[str] | None = None,
    n_hits: int = 10,
    search: SearchFn | None = None,
    rank: str = "ppr",
    max_hops: int = 2,
) -> ContextResult:
    """The nodes around a question, ranked by personalized PageRank over what ``caller`` sees.

    Seeds are the question's top ``n_hits`` full-text hits among visible nodes, weighted by
    reciprocal rank (1/rank; the backend's own scores are never mixed in), plus the given
    ``concepts`` (weight 1 each; a concept that is also a hit gets both weights), plus the
    visible nodes the question names by id or alias (weight 1 each, as a given concept, source
    ``"name"``; the rule is :mod:`conceptwalk.graph.names`'s: whole words of the question equal
    to a normalised id or alias; a named node that is also a given concept seeds once). The
    store's own search drops the analyzer's stopwords from the question first. Seeds are
    reported separately and excluded from ``results``; each result carries its score, its hop
    count from the nearest seed and the seed it is reached through (smallest id on ties).

    Parameters
    ----------
    source : LinkGraph or knowledge base
        A knowledge base supplies ``search``; a bare graph needs ``concepts`` or ``search=``.
    question : str, optional
        Free text; an empty or blank string is an :class:`InputError` (None: concepts only).
    concepts : iterable of str
        Concept ids. Unknown and hidden ids raise the same :class:`NotFoundError`.
    k : int
        How many results.
    caller : Caller
        Whose visibility applies (required: there is no implicit all-access).
    restart, eps : float
        PPR restart probability and push threshold.
    node_types : iterable of str, optional
        Keep only results of these node types.
    n_hits : int
        Full-text hits used as seeds.
    search : callable, optional
        ``search(text, k)`` to use instead of the source's own search.
    rank : {"ppr", "coverage"}
        ``"ppr"`` (default): by PPR score. ``"coverage"``: every visible node within
        ``max_hops`` of a seed, by how many distinct seeds reach it within ``max_hops`` (over the
        visible graph), then closer seeds (more of them at 1 hop, then at 2), then PPR score
        per visible degree, then id; each result carries ``coverage`` and
        ``covered_by``. Best when several seeds describe one target.
    max_hops : int
        ``rank="coverage"`` only: 1 to :data:`MAX_COVERAGE_HOPS`.

    Returns
    -------
    ContextResult

    Notes
    -----
    Deterministic: same inputs, same output on every run and thread (ties by id). A question with
    no visible hit, no visible node it names and no concepts gives an empty result whose
    ``reason`` says why (a question of stopwords only, ``"the of and"``, says so). A seed too
    well connected for the push threshold still answers: while fewer than ``k`` results have a
    score and some reached node holds mass it never pushed, the query halves eps for itself
    (reusing the residuals) within a stated push budget; ``eps_reached`` says where it ended.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> [(r.id, r.hops, r.via) for r in graph_context(g, concepts=["a"], caller=Caller.all_access()).results]
    [('b', 1, 'a'), ('c', 2, 'a')]
    >>> r = graph_context(g, concepts=["a", "c"], rank="coverage", caller=Caller.all_access()).results
    >>> [(x.id, x.coverage, x.covered_by) for x in r]
    [('b', 2, ('a', 'c'))]
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    rank_code, max_hops = check_rank(rank, max_hops)
    k = check_count(k)
    n_hits = check_count(n_hits, "n_hits")
    restart, eps = check_ppr_params(restart, eps)
    question = check_question(question)
    if isinstance(concepts, str):
        raise InputError("concepts must be a list of ids, not a single string")
    _check_node_types(node_types)
    if node_types is not None:
        node_types = list(node_types)  # read twice when the live graph cannot answer
    if search is None:
        # a store's live graph (base plus delta, brought forward at the cost of the change) and
        # its text answer exactly as its full snapshot would
        if question is None:
            live = _live_context(source, concepts, caller, k, restart, eps, rank_code, max_hops, node_types, t0)
        else:
            live = _live_question(
                source, question, concepts, caller, k, restart, eps, rank_code, max_hops, n_hits, node_types, t0
            )
        if live is not None:
            return _ranked(live, rank, max_hops)
    g, kb, ix, st = _source_state(source, (question,), search)
    view = g.view(caller)  # the caller's mask and statistics, made once per (graph, caller)
    vm = view.mask
    warn_unknown_scopes(kb, g, caller)
    concept_idx = _concept_indices(g, concepts, vm)
    type_filter = _type_filter(g, node_types)
    if ix is not None and question is not None:
        # The store's own search: BM25 over the visible documents (the question without its
        # stopwords), the 1/rank seeds, the named nodes and the concepts (1 each), the walk, the
        # top k and their hops in one compiled call (the question tokenised once, here).
        given = list(dict.fromkeys(concept_idx))
        given_set = set(given)
        named = [v for v in _named(g, kb, st, question, vm) if v not in given_set]
        content = content_text(question)
        if not content:
            if not given and not named:
                return _ranked(
                    _no_result(g, question, [], restart, eps, k, _nothing_left(question), t0),
                    rank,
                    max_hops,
                )
            # nothing to search: the seeds are the concepts and the named nodes (weight 1 each)
            seeds = given + named
            spec0: list[tuple[int, float, str, int | None]] = [(c, 1.0, "concept", None) for c in given]
            spec0.extend((v, 1.0, "name", None) for v in named)
            order = sorted(seeds)
            r = context(
                g, np.array(order, dtype=np.int32), np.ones(len(order)), restart, eps, k, type_filter, vm,
                rank_code, max_hops,
            )  # fmt: skip
            return _ranked(
                _from_core(g, question, spec0, r, rank_code, restart, eps, k, type_filter, t0), rank, max_hops
            )
        r = context_text(view, ix, content, n_hits, given + named, restart, eps, k, type_filter, rank_code, max_hops)
        text_spec = partial(_text_seed_spec, r, given, named)
        if not r.seeded:
            return _ranked(
                _no_result(
                    g,
                    question,
                    text_spec,
                    restart,
                    eps,
                    k,
                    "the question matched no visible node, names none and no concepts were given",
                    t0,
                ),
                rank,
                max_hops,
            )
        return _ranked(
            _from_core(g, question, text_spec, r, rank_code, restart, eps, k, type_filter, t0), rank, max_hops
        )
    spec, seed_nodes, seed_w, reason = _context_seeds(
        g, kb, search, question, concept_idx, n_hits, vm, ix, _named(g, kb, st, question, vm)
    )
    if seed_nodes is None or seed_w is None:
        return _ranked(
            _no_result(g, question, spec, restart, eps, k, reason, t0),
            rank,
            max_hops,
        )
    # One call does the whole query in C++ with the GIL released: PPR, drop the seeds, the type
    # filter, top k, then hop counts and reached-through seeds of those k.
    r = context(g, seed_nodes, seed_w, restart, eps, k, type_filter, vm, rank_code, max_hops)
    return _ranked(_from_core(g, question, spec, r, rank_code, restart, eps, k, type_filter, t0), rank, max_hops)


def _live_context(
    source: Any,
    concepts: Iterable[str],
    caller: Caller,
    k: int,
    restart: float,
    eps: float,
    rank_code: int,
    max_hops: int,
    node_types: Iterable[str] | None,
    t0: float,
) -> ContextResult | None:
    """A concepts-only query over the source's live graph, or None to take the snapshot path
    (:func:`~conceptwalk.tools.common.live_slots` says when, or a node-type filter the delta does
    not express: :meth:`~conceptwalk.graph.live.LiveGraph.type_filter`)."""
    if not isinstance(concepts, (list, tuple)):
        return None
    got = live_slots(source, caller, concepts, ("concept",) * len(concepts))  # (the snapshot path's checks)
    if got is None:
        return None
    live, view, slots = got
    types = None if node_types is None else live.type_filter(node_types)
    if node_types is not None and types is None:
        return None
    order = live.sorted_slots(slots)
    n = len(order)
    r = context_live(
        live, np.array(order, dtype=np.int32), _ONES[n] if n < len(_ONES) else np.ones(n), restart, eps, k,
        rank_code, max_hops, view, types,
    )  # fmt: skip
    return _from_core(live, None, slots, r, rank_code, restart, eps, k, None if types is None else types[0], t0)


def _live_question(
    source: Any,
    question: str,
    concepts: Iterable[str],
    caller: Caller,
    k: int,
    restart: float,
    eps: float,
    rank_code: int,
    max_hops: int,
    n_hits: int,
    node_types: Iterable[str] | None,
    t0: float,
) -> ContextResult | None:
    """A question's query over the source's live graph and text (``source.live_search``): the
    seeds the snapshot path's compiled call makes (the visible BM25 hits of the question without
    its stopwords by 1/rank, the concepts and the named nodes 1 each, a hit that is also one
    summed 1/rank + 1), then the walk; or None to take the snapshot path (no live search, an id
    it does not know or the caller does not see, a question with nothing to search or nothing
    seeded: that path says why)."""
    fn = getattr(source, "live_search", None)
    if isinstance(source, LinkGraph) or not callable(fn) or not isinstance(concepts, (list, tuple)):
        return None
    content = content_text(question)
    if not content:
        return None
    ls = fn(caller, changed_only=True)  # (nothing written since the full state: its one compiled call answers)
    if ls is None:
        return None
    live, view = ls.live, ls.view
    warn_unknown_scopes(source, live, caller)  # (what the snapshot path warns about first)
    types = None if node_types is None else live.type_filter(node_types)
    if node_types is not None and types is None:
        return None
    given: list[int] = []
    for x in concepts:
        s = live.slot(x) if isinstance(x, str) else None
        if s is None or (view is not None and not view.visible(s)):
            return None
        given.append(s)
    given = list(dict.fromkeys(given))
    seen = set(given)
    named = [v for v in ls.named(question) if v not in seen]
    hits, _ = ls.hits(content, n_hits)
    if not hits and not given and not named:
        return None
    weights: dict[int, float] = {h: 1.0 / r for r, h in enumerate(hits, 1)}
    for c in given + named:
        w = weights.get(c)
        weights[c] = 1.0 if w is None else w + 1.0
    order = live.sorted_slots(weights)
    r = context_live(
        live, np.array(order, dtype=np.int32), np.array([weights[x] for x in order], dtype=np.float64), restart, eps,
        k, rank_code, max_hops, view, types,
    )  # fmt: skip
    spec: list[tuple[int, float, str, int | None]] = [(h, 1.0 / rank, "search", rank) for rank, h in enumerate(hits, 1)]
    spec.extend((c, 1.0, "concept", None) for c in given)
    spec.extend((v, 1.0, "name", None) for v in named)
    return _from_core(live, question, spec, r, rank_code, restart, eps, k, None if types is None else types[0], t0)


def _from_core(
    g: LinkGraph | LiveGraph,
    question: str | None,
    spec: Any,
    r: Any,
    rank_code: int,
    restart: float,
    eps: float,
    k: int,
    type_filter: Any,
    t0: float,
) -> ContextResult:
    """The result of one compiled query ``r`` (items built from its arrays on first access)."""
    if len(r):
        build = (
            partial(_items, g, r, None, None, None)
            if not rank_code
            else partial(
                _cover_items,
                g,
                r.nodes.tolist(),
                r.scores.tolist(),
                r.hops.tolist(),
                r.via.tolist(),
                r.coverage.tolist(),
                r.cover_ptr.tolist(),
                r.cover_seeds.tolist(),
            )
        )
        return ContextResult.from_core(
            question, partial(_seed_objects, g, spec), build, restart, eps, k, r, (time.perf_counter() - t0) * 1e3
        )
    out = _context_result(
        g,
        question,
        spec,
        restart,
        eps,
        k,
        None,
        0,
        None,
        r.residual,
        r.pushes,
        type_filter is not None,
        (time.perf_counter() - t0) * 1e3,
        r.fill_spent,
    )
    out.set_work(r.eps, r.edge_visits, bool(r.push_truncated), bool(r.truncated), r.radius)
    return out


def _text_seed_spec(
    r: Any, concept_idx: list[int], named: Sequence[int] = ()
) -> list[tuple[int, float, str, int | None]]:
    """The seed spec of a question-seeded compiled query: its search hits by rank (1/rank), then
    the distinct concepts (1 each), then the named nodes that are not concepts (1 each)."""
    spec: list[tuple[int, float, str, int | None]] = [
        (h, 1.0 / rank, "search", rank) for rank, h in enumerate(r.hits.tolist(), 1)
    ]
    spec.extend((c, 1.0, "concept", None) for c in dict.fromkeys(concept_idx))
    spec.extend((v, 1.0, "name", None) for v in named)
    return spec


#: The hard cap on ``max_hops`` of ``rank="coverage"`` (the core's kMaxCoverageHops).
MAX_COVERAGE_HOPS = 3


def check_rank(rank: Any, max_hops: Any) -> tuple[int, int]:
    """The core's code for ``rank`` (0 ppr, 1 coverage) and the checked ``max_hops``.

    Parameters
    ----------
    rank : str
        ``"ppr"`` or ``"coverage"``.
    max_hops : int
        1 to :data:`MAX_COVERAGE_HOPS`.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> check_rank("coverage", 2)
    (1, 2)
    >>> check_rank("bm25", 2)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: rank must be 'ppr' or 'coverage', got 'bm25'
    """
    if rank not in ("ppr", "coverage"):
        raise InputError(f"rank must be 'ppr' or 'coverage', got {rank!r}")
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) or not 1 <= max_hops <= MAX_COVERAGE_HOPS:
        raise InputError(f"max_hops must be an integer from 1 to {MAX_COVERAGE_HOPS}, got {max_hops!r}")
    return (1 if rank == "coverage" else 0), max_hops


def _ranked(res: ContextResult, rank: str, max_hops: int) -> ContextResult:
    """``res`` with its ranking recorded (and, for coverage, the radius completed: the core's,
    or ``max_hops`` when the core did not run)."""
    res.rank, res.max_hops = rank, max_hops
    if rank != "coverage":
        res.hops_completed = None
    elif res.hops_completed is None:
        res.hops_completed = max_hops
    return res


def _cover_items(
    g: LinkGraph | LiveGraph,
    top: list[int],
    scores: list[float],
    hops: list[int],
    via: list[int],
    cov: list[int],
    ptr: list[int],
    seeds: list[int],
) -> list[ContextItem]:
    """Context items of a coverage ranking (``ptr`` indexes ``seeds`` per item; ``ptr[0]`` may be
    a batch offset)."""
    if isinstance(g, LiveGraph):
        at = g.node_at
        return [
            ContextItem(*at(v), s, h, at(w)[0], c, tuple(at(x)[0] for x in seeds[ptr[j] : ptr[j + 1]]))
            for j, (v, s, h, w, c) in enumerate(zip(top, scores, hops, via, cov))
        ]
    ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes_list
    return [
        ContextItem(
            ids[v], names[codes[v]], titles[v], s, h, ids[w], c, tuple(ids[x] for x in seeds[ptr[j] : ptr[j + 1]])
        )
        for j, (v, s, h, w, c) in enumerate(zip(top, scores, hops, via, cov))
    ]


def _concept_indices(g: LinkGraph, concepts: Iterable[str], vm: VisibilityMask | None) -> list[int]:
    """Indices of the concept ids (unknown and hidden ids raise the same NotFoundError)."""
    if vm is None and type(concepts) is list:
        get = g.id_index.get
        try:
            idx = [get(c) for c in concepts]  # ids are str keys: a non-str is not found
        except TypeError:  # an unhashable item: the full check below names it
            idx = [None]
        if None not in idx:
            return idx  # type: ignore[return-value]
    return [g.index(c, visible=vm, argument="concept") for c in concepts]


def _check_node_types(node_types: Any) -> None:
    """A single string for ``node_types`` is an :class:`InputError` (a list of names is meant)."""
    if isinstance(node_types, str):
        raise InputError("node_types must be a list of type names, not a single string")


def _type_filter(g: LinkGraph, node_types: Iterable[str] | None) -> npt.NDArray[np.bool_] | None:
    """Per node-type code, whether results of that type are kept (None: no filter)."""
    if node_types is None:
        return None
    _check_node_types(node_types)
    wanted = set(node_types)
    return np.array([t in wanted for t in g.node_type_names], dtype=bool)


def _context_seeds(
    g: LinkGraph,
    kb: Any,
    search: SearchFn | None,
    question: str | None,
    concept_idx: list[int],
    n_hits: int,
    vm: VisibilityMask | None,
    ix: TextIndex | None = None,
    named: Sequence[int] = (),
) -> tuple[Any, np.ndarray[Any, Any] | None, np.ndarray[Any, Any] | None, str | None]:
    """The seeds of one context query (hits weighted 1/rank, concepts 1, the named nodes that
    are not concepts 1): ``(seed spec, seed indices, weights, reason)``; the arrays are None
    when there is nothing to seed, and ``reason`` then says why. With the store's own text
    index ``ix`` the question is searched without its stopwords; a ``search=`` backend is
    given the question as it is."""
    if question is None:  # concepts only: every weight is 1
        if not concept_idx:
            return [], None, None, "no question and no concepts were given"
        order = sorted(set(concept_idx))
        n = len(order)
        # The seed spec is the concept list itself (repeats dropped when the seeds are read).
        return (concept_idx, np.array(order, dtype=np.int32), _ONES[n] if n < len(_ONES) else np.ones(n), None)
    weights: dict[int, float] = {}
    spec: list[tuple[int, float, str, int | None]] = []  # (node, weight, source, rank)
    own = search is None and ix is not None
    text = content_text(question) if own else question
    if text:
        for rank, idx in enumerate(_search_hits(kb, search, text, n_hits, g, vm, ix), 1):
            weights[idx] = weights.get(idx, 0.0) + 1.0 / rank
            spec.append((idx, 1.0 / rank, "search", rank))
    given = dict.fromkeys(concept_idx)
    for idx in given:
        weights[idx] = weights.get(idx, 0.0) + 1.0
        spec.append((idx, 1.0, "concept", None))
    for idx in named:
        if idx not in given:
            weights[idx] = weights.get(idx, 0.0) + 1.0
            spec.append((idx, 1.0, "name", None))
    if not weights:
        if not text:
            return spec, None, None, _nothing_left(question)
        return spec, None, None, "the question matched no visible node, names none and no concepts were given"
    order = sorted(weights)
    return spec, np.array(order, dtype=np.int32), np.array([weights[i] for i in order], dtype=np.float64), None


#: Seed weights of concept-only queries, one read-only view per count (the core only reads them).
_ONES_BASE = np.ones(256)
_ONES_BASE.setflags(write=False)
_ONES = [_ONES_BASE[:n] for n in range(257)]


def _seed_objects(g: LinkGraph | LiveGraph, spec: list[Any] | Callable[[], list[Any]]) -> list[ContextSeed]:
    """Seed objects of a seed spec: ``(node, weight, source, rank)`` tuples, or bare node indices
    for concepts (weight 1), or a callable returning one."""
    if callable(spec):
        spec = spec()
    node_at = g.node_at
    if spec and isinstance(spec[0], int):
        return [ContextSeed(*node_at(x), 1.0, "concept") for x in dict.fromkeys(spec)]
    return [ContextSeed(*node_at(x[0]), *x[1:]) for x in spec]


def _items(g: LinkGraph | LiveGraph, top: Any, scores: Any, hops: Any, via: Any) -> list[ContextItem]:
    """Context items of core output (node indices, scores, hops, via seeds: lists, or a core
    ``ContextResult`` passed as ``top`` with the rest None)."""
    if scores is None:
        top, scores, hops, via = top.nodes.tolist(), top.scores.tolist(), top.hops.tolist(), top.via.tolist()
    if isinstance(g, LiveGraph):
        at = g.node_at
        return [ContextItem(*at(v), s, h, at(w)[0]) for v, s, h, w in zip(top, scores, hops, via)]
    ids, names, titles, codes = g.ids, g.node_type_names, g.titles, g.node_type_codes_list
    return [ContextItem(ids[v], names[codes[v]], titles[v], s, h, ids[w]) for v, s, h, w in zip(top, scores, hops, via)]


def _no_result(
    g: LinkGraph,
    question: str | None,
    spec: Any,
    restart: float,
    eps: float,
    k: int,
    reason: str | None,
    t0: float | None = None,
) -> ContextResult:
    """A query answered without a push (nothing to seed it), timed from ``t0`` (None: 0 ms)."""
    elapsed = 0.0 if t0 is None else (time.perf_counter() - t0) * 1e3
    return _context_result(g, question, spec, restart, eps, k, reason, 0, None, 0.0, 0, False, elapsed)


def _context_result(
    g: LinkGraph | LiveGraph,
    question: str | None,
    spec: Any,
    restart: float,
    eps: float,
    k: int,
    reason: str | None,
    found: int,
    build: Callable[[], list[ContextItem]] | None,
    residual: float,
    pushes: int,
    typed: bool,
    elapsed_ms: float,
    spent: bool = False,
) -> ContextResult:
    """One query's result: its seeds and (``found`` results, built by ``build`` on access)."""
    if reason is None and not found:
        if spent:
            reason = "the push budget was spent before a node other than the seeds was scored"
        else:
            reason = (
                "no visible node of the requested types is reached from the seeds"
                if typed
                else "no visible node other than the seeds is reached from them"
            )
    return ContextResult(
        question,
        partial(_seed_objects, g, spec),
        build if found and build is not None else [],
        restart,
        eps,
        k,
        residual,
        pushes,
        reason,
        elapsed_ms,
    )


def parse_context_query(q: Any, i: int) -> tuple[str | None, list[str]]:
    """A context query in any of the batch forms (shared by :func:`graph_context_batch` and the
    Dask layer): a question string (or None), a mapping with ``question`` and/or ``concepts``, or a
    ``(question, concepts)`` tuple.

    Parameters
    ----------
    q : str, mapping, tuple or None
    i : int
        The query's position (for error messages: ``queries[i]``).

    Returns
    -------
    tuple
        ``(question or None, list of concept ids)``.

    Examples
    --------
    >>> parse_context_query({"concepts": ["a"]}, 0), parse_context_query(("why?", ("b",)), 1)
    ((None, ['a']), ('why?', ['b']))
    """
    if q is None or isinstance(q, str):
        return check_question(q, f"queries[{i}]"), []
    if isinstance(q, Mapping):
        unknown = set(q) - {"question", "concepts"}
        if unknown:
            raise InputError(f"queries[{i}]: unknown keys {sorted(unknown)}; expected 'question', 'concepts'")
        question = q.get("question")
        concepts = q.get("concepts", ())
    elif isinstance(q, tuple) and len(q) == 2:
        question, concepts = q
    else:
        raise InputError(
            f"queries[{i}]: expected a question string, a dict with 'question'/'concepts' "
            f"or a (question, concepts) tuple, got {type(q).__name__}"
        )
    question = check_question(question, f"queries[{i}]: question")
    if isinstance(concepts, str):
        raise InputError(f"queries[{i}]: concepts must be a list of ids, not a single string")
    return question, list(concepts or ())


def graph_context_batch(
    source: LinkGraph | GraphSource,
    queries: Iterable[Any],
    *,
    caller: Caller,
    k: int = 20,
    restart: float = 0.25,
    eps: float = 1e-4,
    node_types: Iterable[str] | None = None,
    n_hits: int = 10,
    search: SearchFn | None = None,
    threads: int | None = None,
    rank: str = "ppr",
    max_hops: int = 2,
) -> list[ContextResult]:
    """:func:`conceptwalk.graph_context` for many queries, in input order.

    Each query is a question string, a ``{"question": ..., "concepts": [...]}`` mapping or a
    ``(question, concepts)`` tuple. Full-text search (for questions) runs in the calling thread;
    PPR, the top-k selection and the hop counts of every query run in C++ across ``threads``.
    Each result's ``to_dict()`` equals the one-by-one call's; ``elapsed_ms`` is the batch's wall
    time divided by the number of queries.

    Parameters
    ----------
    source : LinkGraph or GraphSource
    queries : iterable
        Query forms of :func:`parse_context_query`; every concept id is resolved before any work.
    caller : Caller
    k, restart, eps, node_types, n_hits, search, rank, max_hops
        As for :func:`graph_context`, shared by every query.
    threads : int, optional
        C++ threads (default: ``os.cpu_count()``).

    Returns
    -------
    list of ContextResult
        In input order.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> [[x.id for x in r.results] for r in graph_context_batch(g, [(None, ["a"]), {"concepts": ["c"]}],
    ...                                                          k=1, caller=Caller.all_access())]
    [['b'], ['b']]
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    rank_code, max_hops = check_rank(rank, max_hops)
    k = check_count(k)
    n_hits = check_count(n_hits, "n_hits")
    restart, eps = check_ppr_params(restart, eps)
    nt = check_threads(threads)
    qs = [parse_context_query(q, i) for i, q in enumerate(query_list(queries, "queries"))]
    g, kb, ix, st = _source_state(source, (q for q, _ in qs), search)
    vm = caller.visibility(g)
    warn_unknown_scopes(kb, g, caller)
    keep_arr = _type_filter(g, node_types)
    run: list[int] = []  # positions that need the core
    seed_parts: list[np.ndarray[Any, Any]] = []
    w_parts: list[np.ndarray[Any, Any]] = []
    # resolve every id before any search or work
    concept_lists = [[g.index(c, visible=vm, argument="concept") for c in concepts] for _, concepts in qs]
    prepared = []
    for i, (question, _) in enumerate(qs):
        spec, seed_nodes, seed_w, reason = _context_seeds(
            g, kb, search, question, concept_lists[i], n_hits, vm, ix, _named(g, kb, st, question, vm)
        )
        prepared.append((question, spec, reason))
        if seed_nodes is not None and seed_w is not None:
            seed_parts.append(seed_nodes)
            w_parts.append(seed_w)
            run.append(i)
    done: dict[int, ContextResult] = {}
    if run:
        ptr = offsets([a.shape[0] for a in seed_parts])
        b = context_batch(
            g,
            ptr,
            np.concatenate(seed_parts),
            np.concatenate(w_parts),
            restart=restart,
            eps=eps,
            k=k,
            keep_types=keep_arr,
            threads=nt,
            visible=vm,
            rank=rank_code,
            max_hops=max_hops,
        )
        op = b.ptr.tolist()
        nl, sl, hl, vl = b.nodes.tolist(), b.scores.tolist(), b.hops.tolist(), b.via.tolist()
        res_l, pu_l, ev_l, pt_l = (
            b.residual.tolist(),
            b.pushes.tolist(),
            b.edge_visits.tolist(),
            b.push_truncated.tolist(),
        )
        eps_l, sp_l, tr_l, rad_l = b.eps.tolist(), b.fill_spent.tolist(), b.truncated.tolist(), b.radius.tolist()
        cl, cp, cs = b.coverage.tolist(), b.cover_ptr.tolist(), b.cover_seeds.tolist()
        for j, i in enumerate(run):
            lo, hi = op[j], op[j + 1]
            question, spec, _ = prepared[i]
            build = (
                partial(_items, g, nl[lo:hi], sl[lo:hi], hl[lo:hi], vl[lo:hi])
                if not rank_code
                else partial(
                    _cover_items, g, nl[lo:hi], sl[lo:hi], hl[lo:hi], vl[lo:hi], cl[lo:hi], cp[lo : hi + 1], cs
                )
            )
            done[i] = _context_result(
                g,
                question,
                spec,
                restart,
                eps,
                k,
                None,
                hi - lo,
                build,
                res_l[j],
                pu_l[j],
                keep_arr is not None,
                0.0,
                bool(sp_l[j]),
            )
            done[i].set_work(eps_l[j], ev_l[j], bool(pt_l[j]), bool(tr_l[j]), rad_l[j])
    results = [
        done[i] if i in done else _no_result(g, q, spec, restart, eps, k, reason)
        for i, (q, spec, reason) in enumerate(prepared)
    ]
    per = (time.perf_counter() - t0) * 1e3 / max(len(results), 1)
    for r in results:
        r.elapsed_ms = per
        _ranked(r, rank, max_hops)
    return results
