"""``link_suggest``: missing links for a concept by resource allocation (``method="ra"``, the
default) or rooted PageRank (``method="ppr"``), one concept or many (:func:`link_suggest_batch`). Each suggestion is a :class:`~conceptwalk.graph.Suggestion`, the
same type :meth:`LinkGraph.resource_allocation <conceptwalk.graph.LinkGraph.resource_allocation>`
returns.

Examples
--------
>>> from conceptwalk import LinkGraph, Caller
>>> g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("c", "x")])
>>> [s.id for s in link_suggest(g, "a", caller=Caller.all_access()).suggestions]
['b']
>>> [len(r.suggestions) for r in link_suggest_batch(g, ["a", "c"], caller=Caller.all_access())]
[1, 0]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ..graph import Caller, LinkGraph, Suggestion
from ..errors import InputError
from ..graph.checks import check_count, check_min_shared, check_ppr_params, check_threads, query_list
from ..graph.result import Later, Record, lazy
from ..graph.scopes import warn_unknown_scopes
from ..graph.suggest import (
    live_suggestions,
    ppr_suggest,
    ppr_suggest_batch,
    suggest,
    suggest_batch,
    suggest_live,
    suggestions,
)
from .common import GraphSource, check_caller, default_concepts, live_slots, source_graph

__all__ = ["METHODS", "SuggestResult", "check_method", "link_suggest", "link_suggest_batch"]

#: The ranking methods of :func:`link_suggest`: resource allocation, rooted PageRank.
METHODS = ("ra", "ppr")
#: ``min_shared`` of ``method="ra"`` when not given.
DEFAULT_MIN_SHARED = 2


def check_method(
    method: Any, min_shared: Any, restart: Any, eps: Any
) -> tuple[str, int | None, float | None, float | None]:
    """``method`` checked with the arguments that belong to it: ``min_shared`` to ``"ra"``
    (default 2), ``restart`` and ``eps`` to ``"ppr"`` (defaults 0.25 and 1e-4, graph_context's).
    An argument given to the other method is refused, never silently ignored.

    Parameters
    ----------
    method : {"ra", "ppr"}
    min_shared : int or None
    restart, eps : float or None

    Returns
    -------
    tuple
        ``(method, min_shared, restart, eps)``: ``min_shared`` is None for ``"ppr"``,
        ``restart`` and ``eps`` are None for ``"ra"``.

    Examples
    --------
    >>> check_method("ppr", None, None, None)
    ('ppr', None, 0.25, 0.0001)
    >>> check_method("ppr", 2, None, None)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: min_shared applies to method='ra' only (rooted PageRank needs no shared neighbour), got min_shared=2 with method='ppr'
    """
    if not isinstance(method, str) or method not in METHODS:
        raise InputError(f"method must be 'ra' or 'ppr', got {method!r}")
    if method == "ra":
        for name, value in (("restart", restart), ("eps", eps)):
            if value is not None:
                raise InputError(
                    f"{name} applies to method='ppr' only (resource allocation has no push), "
                    f"got {name}={value!r} with method='ra'"
                )
        return method, check_min_shared(DEFAULT_MIN_SHARED if min_shared is None else min_shared), None, None
    if min_shared is not None:
        raise InputError(
            "min_shared applies to method='ra' only (rooted PageRank needs no shared neighbour), "
            f"got min_shared={min_shared!r} with method='ppr'"
        )
    r, e = check_ppr_params(0.25 if restart is None else restart, 1e-4 if eps is None else eps)
    return method, None, r, e


class SuggestResult(Record):
    """What :func:`link_suggest` returns for one concept.

    The suggestions are built from the core's arrays on first access (a call that only needs
    ``candidates`` or one suggestion does not pay for the rest); equality compares ``to_dict()``.

    Parameters
    ----------
    concept : str
        The concept the links are suggested for.
    suggestions : list of Suggestion, or a callable returning it
        By score descending, then id ascending. A callable is called once, on first access.
    candidates : int
        ``"ra"``: nodes that met ``min_shared``; ``"ppr"``: visible non-neighbours the push gave a
        score (both before the top-``k`` cut).
    min_shared : int or None
        ``"ra"``: the least number of shared neighbours a suggestion needed (None for ``"ppr"``).
    elapsed_ms : float
        Wall time of the call (not part of ``to_dict()`` or of equality).

    Attributes
    ----------
    method : str
        ``"ra"`` or ``"ppr"``.
    restart, eps, eps_reached : float or None
        ``"ppr"`` only: the push's parameters and the eps it ended at (below ``eps`` when a hub
        lowered it, as graph_context does; above it when a work budget cut the push); None for
        ``"ra"``.
    truncated : bool
        ``"ppr"`` only: the push's work budget (``_core.PUSH_VISITS`` entries read) stopped it
        before ``eps`` held; the scores satisfy ``eps_reached`` instead. False for ``"ra"``.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")])
    >>> r = link_suggest(g, "a", caller=Caller.all_access())
    >>> r.to_dict()["suggestions"][0]["shared"]
    [{'id': 'x', 'title': None}, {'id': 'y', 'title': None}]
    >>> print(r)
    link suggestions for a (1 candidate with >= 2 shared neighbours)
        1. 1.0000  b [NODE]  shared: x, y

    It is sized and iterable like its ``suggestions``:

    >>> len(r), [s.id for s in r]
    (1, ['b'])
    """

    __slots__ = (
        "concept",
        "candidates",
        "min_shared",
        "elapsed_ms",
        "method",
        "restart",
        "eps",
        "eps_reached",
        "truncated",
        "_suggestions",
    )
    _fields = ("concept", "suggestions", "candidates", "min_shared", "elapsed_ms")
    _state = ("method", "restart", "eps", "eps_reached", "truncated")
    _sequence = "suggestions"

    suggestions = lazy(
        "The suggestions, by score descending, then id ascending (built on first access when the "
        "result was made with a builder)."
    )

    def __init__(
        self,
        concept: str,
        suggestions: list[Suggestion] | Callable[[], list[Suggestion]],
        candidates: int,
        min_shared: int | None,
        elapsed_ms: float = 0.0,
    ) -> None:
        self.concept = concept
        self._suggestions = Later(suggestions) if callable(suggestions) else list(suggestions)
        self.candidates = candidates
        self.min_shared = min_shared
        self.elapsed_ms = elapsed_ms
        self.method = "ra"
        self.restart: float | None = None
        self.eps: float | None = None
        self.eps_reached: float | None = None
        self.truncated = False

    @classmethod
    def from_core(
        cls, concept: str, suggestions: Callable[[], list[Suggestion]], core: Any, min_shared: int, elapsed_ms: float
    ) -> SuggestResult:
        """The result of a core result (its ``candidates`` read from it).

        Parameters
        ----------
        concept : str
        suggestions : callable returning the list of Suggestion
        core : conceptwalk._core.RAResult
        min_shared : int
        elapsed_ms : float

        Returns
        -------
        SuggestResult

        Examples
        --------
        >>> from conceptwalk.graph import LinkGraph
        >>> from conceptwalk.graph.suggest import suggest
        >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
        >>> SuggestResult.from_core("a", list, suggest(g, "a", 1, 5, None), 1, 0.0).candidates
        1
        """
        return cls(concept, suggestions, core.candidates, min_shared, elapsed_ms)

    def __repr__(self) -> str:
        how = f"min_shared={self.min_shared}" if self.method == "ra" else "method='ppr'"
        return (
            f"SuggestResult(concept={self.concept!r}, suggestions={len(self.suggestions)}, "
            f"candidates={self.candidates}, {how})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (keys ``concept``, ``suggestions``, ``candidates``, ``minShared``;
        multi-word keys are camelCase in every tool output, as in the MCP arguments). A
        ``method="ppr"`` result has ``method``, ``params`` (``restart``, ``eps``) and, when a
        hub lowered it, ``epsReached`` instead of ``minShared`` (and ``truncated: true`` when a work
        budget cut the push); its suggestions carry ``hops`` and ``path``.

        Returns
        -------
        dict
        """
        d: dict[str, Any] = {
            "concept": self.concept,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "candidates": self.candidates,
        }
        if self.method == "ra":
            d["minShared"] = self.min_shared
            return d
        d["method"] = self.method
        d["params"] = {"restart": self.restart, "eps": self.eps}
        if self.eps_reached != self.eps:
            d["epsReached"] = self.eps_reached
        if self.truncated:
            d["truncated"] = True
        return d

    def __str__(self) -> str:
        c = self.candidates
        if self.method == "ppr":
            return self._str_ppr()
        lines = [
            f"link suggestions for {self.concept} ({c} candidate{'' if c == 1 else 's'} with "
            f">= {self.min_shared} shared neighbours)"
        ]
        if not self.suggestions:
            lines.append("  (none)")
        for i, s in enumerate(self.suggestions, 1):
            shared = ", ".join(s.shared[:6]) + (" ..." if len(s.shared) > 6 else "")
            lines.append(f"  {i:>3}. {s.score:.4f}  {s.id} [{s.type}]  shared: {shared}")
        return "\n".join(lines)

    def _str_ppr(self) -> str:
        c = self.candidates
        lines = [f"link suggestions for {self.concept} by rooted PageRank ({c} candidate{'' if c == 1 else 's'})"]
        if self.truncated:
            lines.append(f"  (the push's work budget cut it: scores within eps {self.eps_reached:.3g} x degree)")
        if not self.suggestions:
            lines.append("  (none)")
        for i, s in enumerate(self.suggestions, 1):
            if s.hops == 2:
                why = "2 hops, shared: " + ", ".join(s.shared[:6]) + (" ..." if len(s.shared) > 6 else "")
            else:
                why = f"{s.hops} hops: " + " -> ".join(s.path or ())
            lines.append(f"  {i:>3}. {s.score:.5f}  {s.id} [{s.type}]  {why}")
        return "\n".join(lines)


def _as_ppr(
    res: SuggestResult, restart: float, eps: float, eps_reached: float, truncated: bool = False
) -> SuggestResult:
    """``res`` marked as a rooted PageRank result with its push's parameters."""
    res.method, res.restart, res.eps, res.eps_reached = "ppr", restart, eps, eps_reached
    res.truncated = bool(truncated)
    return res


def link_suggest(
    source: LinkGraph | GraphSource,
    concept: str,
    *,
    k: int = 10,
    caller: Caller,
    min_shared: int | None = None,
    method: str = "ra",
    restart: float | None = None,
    eps: float | None = None,
) -> SuggestResult:
    """Missing links for ``concept`` over what ``caller`` sees, by resource allocation
    (``method="ra"``, the default) or rooted PageRank (``method="ppr"``).

    ``"ra"``: ``score = sum over shared neighbours z of 1/deg(z)`` (visible degrees); candidates
    need at least ``min_shared`` shared neighbours and are not already linked. Ordered by score
    descending, then id; each with its shared neighbours (ids and titles, ids ascending).

    ``"ppr"``: the personalized PageRank from ``concept`` alone (graph_context's forward push,
    ``restart`` and ``eps``; a hub lowers eps for itself the same way), over the visible graph;
    candidates are the visible nodes other than ``concept`` and its neighbours that the push
    reaches, by score descending, then id. Each suggestion says why it is near: its ``hops``,
    the neighbours it shares with ``concept`` (two hops) and its shortest ``path`` from
    ``concept``. It finds links a shared-neighbour rule cannot: on a sparse hierarchy most
    held-out links are not closed by two shared neighbours (docs/link_suggest.md has the numbers).

    Parameters
    ----------
    source : LinkGraph or GraphSource
        The graph, or a knowledge base (anything with ``graph()``).
    concept : str
        The node id to suggest links for. Unknown and hidden ids raise the same
        :class:`~conceptwalk.errors.NotFoundError`.
    k : int
        How many suggestions (clamped to 2**31 - 1).
    caller : Caller
        Whose visibility applies (required).
    min_shared : int, optional
        ``"ra"`` only: least number of shared neighbours (default 2; clamped to 2**31 - 1).
        Refused with ``method="ppr"``.
    method : {"ra", "ppr"}
        The ranking.
    restart, eps : float, optional
        ``"ppr"`` only: the push's restart probability (default 0.25) and threshold (default
        1e-4), as for graph_context. Refused with ``method="ra"``.

    Returns
    -------
    SuggestResult

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> [(s.id, s.score, s.shared) for s in link_suggest(g, "a", min_shared=1, caller=Caller.all_access()).suggestions]
    [('b', 0.5, ('x',))]

    Rooted PageRank reaches past two hops, and says how:

    >>> g = LinkGraph.from_edges([("a", "x"), ("x", "b"), ("b", "c")])
    >>> [(s.id, s.hops, s.path) for s in link_suggest(g, "a", method="ppr", caller=Caller.all_access())]
    [('b', 2, ('a', 'x', 'b')), ('c', 3, ('a', 'x', 'b', 'c'))]
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    method, min_shared, restart, eps = check_method(method, min_shared, restart, eps)
    if method == "ra":
        assert min_shared is not None
        live = _live_suggest(source, concept, caller, min_shared, k, t0)
        if live is not None:
            return live
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    if method == "ppr":
        assert restart is not None and eps is not None
        r = ppr_suggest(g, concept, restart, eps, k, caller.visibility(g), "concept")
        res = SuggestResult(concept, partial(suggestions, g, r), r.candidates, None, (time.perf_counter() - t0) * 1e3)
        return _as_ppr(res, restart, eps, r.eps, r.truncated)
    assert min_shared is not None
    r = suggest(g, concept, min_shared, k, caller.visibility(g), "concept")
    return SuggestResult(
        concept, partial(suggestions, g, r), r.candidates, min_shared, (time.perf_counter() - t0) * 1e3
    )


def _live_suggest(
    source: Any, concept: Any, caller: Caller, min_shared: int, k: int, t0: float
) -> SuggestResult | None:
    """Resource allocation over the source's live graph, or None to take the snapshot path
    (:func:`~conceptwalk.tools.common.live_slots` says when)."""
    got = live_slots(source, caller, [concept], ("concept",))  # (the snapshot path's check)
    if got is None:
        return None
    live, view, (s,) = got
    r = suggest_live(live, s, min_shared, k, view)
    return SuggestResult(
        concept, partial(live_suggestions, live, r), r.candidates, min_shared, (time.perf_counter() - t0) * 1e3
    )


def link_suggest_batch(
    source: LinkGraph | GraphSource,
    concepts: Iterable[str] | None = None,
    *,
    caller: Caller,
    node_types: Iterable[str] | None = ("CONCEPT",),
    k: int = 10,
    min_shared: int | None = None,
    threads: int | None = None,
    method: str = "ra",
    restart: float | None = None,
    eps: float | None = None,
) -> list[SuggestResult]:
    """:func:`conceptwalk.link_suggest` for many concepts, in input order, across C++ threads.

    Parameters
    ----------
    source : LinkGraph or GraphSource
    concepts : iterable of str, optional
        Concept ids (a single string is refused). Every id is resolved before any work.
        Default: every node ``caller`` sees whose type is in ``node_types``, ascending
        (:func:`~conceptwalk.tools.common.default_concepts`).
    caller : Caller
    node_types : iterable of str or None
        The node types of the default ``concepts`` (``None``: every type; unused when
        ``concepts`` is given).
    k, min_shared, method, restart, eps
        As for :func:`link_suggest`, shared by every query.
    threads : int, optional
        C++ threads (default: ``os.cpu_count()``).

    Returns
    -------
    list of SuggestResult
        Each ``to_dict()`` equal to the one-by-one call's; ``elapsed_ms`` is the batch's wall
        time divided by the number of queries.

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> [r.suggestions[0].id for r in link_suggest_batch(g, ["a", "b"], min_shared=1, caller=Caller.all_access())]
    ['b', 'a']
    >>> [r.concept for r in link_suggest_batch(g, node_types=None, min_shared=1, caller=Caller.all_access())]
    ['a', 'b', 'x']
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    method, min_shared, restart, eps = check_method(method, min_shared, restart, eps)
    nt = check_threads(threads)
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    names_in = default_concepts(g, caller, node_types) if concepts is None else query_list(concepts, "concepts")
    vm = caller.visibility(g)
    if method == "ppr":
        assert restart is not None and eps is not None
        b = ppr_suggest_batch(g, names_in, restart=restart, eps=eps, k=k, threads=nt, visible=vm, argument="concept")
    else:
        assert min_shared is not None
        b = suggest_batch(g, names_in, min_shared=min_shared, k=k, threads=nt, visible=vm, argument="concept")
    if not names_in:
        return []
    op = b.ptr.tolist()
    ca = b.candidates.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(names_in)
    out = [
        SuggestResult(concept, partial(suggestions, g, b, op[i], op[i + 1]), ca[i], min_shared, per)
        for i, concept in enumerate(names_in)
    ]
    if method == "ppr":
        assert restart is not None and eps is not None
        er, tr = b.eps.tolist(), b.truncated.tolist()
        for i, res in enumerate(out):
            _as_ppr(res, restart, eps, er[i], tr[i])
    return out
