"""``link_suggest``: missing links for a concept by resource allocation, one concept or many
(:func:`link_suggest_batch`). Each suggestion is a :class:`~conceptwalk.graph.Suggestion`, the
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
from ..graph.checks import check_count, check_min_shared, check_threads, query_list
from ..graph.result import Later, Record, lazy
from ..graph.suggest import suggest, suggest_batch, suggestions
from ..graph.scopes import warn_unknown_scopes
from .common import GraphSource, check_caller, default_concepts, source_graph

__all__ = ["SuggestResult", "link_suggest", "link_suggest_batch"]


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
        Nodes that met ``min_shared`` (before the top-``k`` cut).
    min_shared : int
        The least number of shared neighbours a suggestion needed.
    elapsed_ms : float
        Wall time of the call (not part of ``to_dict()`` or of equality).

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

    __slots__ = ("concept", "candidates", "min_shared", "elapsed_ms", "_suggestions")
    _fields = ("concept", "suggestions", "candidates", "min_shared", "elapsed_ms")
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
        min_shared: int,
        elapsed_ms: float = 0.0,
    ) -> None:
        self.concept = concept
        self._suggestions = Later(suggestions) if callable(suggestions) else list(suggestions)
        self.candidates = candidates
        self.min_shared = min_shared
        self.elapsed_ms = elapsed_ms

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
        return (
            f"SuggestResult(concept={self.concept!r}, suggestions={len(self.suggestions)}, "
            f"candidates={self.candidates}, min_shared={self.min_shared})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (keys ``concept``, ``suggestions``, ``candidates``, ``minShared``;
        multi-word keys are camelCase in every tool output, as in the MCP arguments).

        Returns
        -------
        dict
        """
        return {
            "concept": self.concept,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "candidates": self.candidates,
            "minShared": self.min_shared,
        }

    def __str__(self) -> str:
        c = self.candidates
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


def link_suggest(
    source: LinkGraph | GraphSource, concept: str, *, k: int = 10, caller: Caller, min_shared: int = 2
) -> SuggestResult:
    """Missing links for ``concept`` by resource allocation over what ``caller`` sees.

    ``score = sum over shared neighbours z of 1/deg(z)`` (visible degrees); candidates need at
    least ``min_shared`` shared neighbours and are not already linked. Ordered by score
    descending, then id; each with its shared neighbours (ids and titles, ids ascending).

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
    min_shared : int
        Least number of shared neighbours (clamped to 2**31 - 1).

    Returns
    -------
    SuggestResult

    Examples
    --------
    >>> from conceptwalk import LinkGraph, Caller
    >>> g = LinkGraph.from_edges([("a", "x"), ("b", "x")])
    >>> [(s.id, s.score, s.shared) for s in link_suggest(g, "a", min_shared=1, caller=Caller.all_access()).suggestions]
    [('b', 0.5, ('x',))]
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    min_shared = check_min_shared(min_shared)
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    r = suggest(g, concept, min_shared, k, caller.visibility(g), "concept")
    return SuggestResult(
        concept, partial(suggestions, g, r), r.candidates, min_shared, (time.perf_counter() - t0) * 1e3
    )


def link_suggest_batch(
    source: LinkGraph | GraphSource,
    concepts: Iterable[str] | None = None,
    *,
    caller: Caller,
    node_types: Iterable[str] | None = ("CONCEPT",),
    k: int = 10,
    min_shared: int = 2,
    threads: int | None = None,
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
    k, min_shared : int
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
    min_shared = check_min_shared(min_shared)
    nt = check_threads(threads)
    g, kb = source_graph(source)
    warn_unknown_scopes(kb, g, caller)  # once per (store, scope): a typo grants nothing
    names_in = default_concepts(g, caller, node_types) if concepts is None else query_list(concepts, "concepts")
    b = suggest_batch(
        g, names_in, min_shared=min_shared, k=k, threads=nt, visible=caller.visibility(g), argument="concept"
    )
    if not names_in:
        return []
    op = b.ptr.tolist()
    ca = b.candidates.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(names_in)
    return [
        SuggestResult(concept, partial(suggestions, g, b, op[i], op[i + 1]), ca[i], min_shared, per)
        for i, concept in enumerate(names_in)
    ]
