"""``link_suggest``: missing links for a concept by resource allocation, one concept or many
(:func:`link_suggest_batch`).

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..graph import Caller, LinkGraph
from ..graph.linkpred import resource_allocation_arrays, resource_allocation_batch_arrays
from ..graph.checks import check_count, check_min_shared, check_threads, query_list
from .common import check_caller, source_graph

__all__ = ["SuggestResult", "SuggestionItem", "link_suggest", "link_suggest_batch"]


@dataclass(slots=True)
class SuggestionItem:
    """A suggested link from the concept to ``id``, with the shared neighbours that support it."""

    id: str
    type: str
    title: str | None
    score: float
    shared: tuple[tuple[str, str | None], ...]  # (id, title), ids ascending

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title, "score": self.score,
                "shared": [{"id": i, "title": t} for i, t in self.shared]}


@dataclass
class SuggestResult:
    concept: str
    suggestions: list[SuggestionItem]
    candidates: int
    min_shared: int
    elapsed_ms: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"concept": self.concept, "suggestions": [s.to_dict() for s in self.suggestions],
                "candidates": self.candidates, "minShared": self.min_shared}

    def __str__(self) -> str:
        lines = [f"link suggestions for {self.concept} ({self.candidates} candidates with "
                 f">= {self.min_shared} shared neighbours)"]
        if not self.suggestions:
            lines.append("  (none)")
        for i, s in enumerate(self.suggestions, 1):
            shared = ", ".join(sid for sid, _ in s.shared[:6]) + (" ..." if len(s.shared) > 6 else "")
            lines.append(f"  {i:>3}. {s.score:.4f}  {s.id} [{s.type}]  shared: {shared}")
        return "\n".join(lines)


def link_suggest(source: LinkGraph | Any, concept: str, *, k: int = 10, caller: Caller,
                 min_shared: int = 2) -> SuggestResult:
    """Missing links for ``concept`` by resource allocation over what ``caller`` sees.

    ``score = sum over shared neighbours z of 1/deg(z)`` (visible degrees); candidates need at
    least ``min_shared`` shared neighbours and are not already linked. Ordered by score
    descending, then id; each with its shared neighbours (ids and titles, ids ascending).
    """
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    min_shared = check_min_shared(min_shared)
    g, _ = source_graph(source)
    vm = caller.visibility(g)
    a = g.index(concept, visible=vm, argument="concept")
    targets, scores, sptr, shared, ncand = resource_allocation_arrays(g, a, min_shared=min_shared, k=k, visible=vm)
    items = _suggestion_items(g, targets.tolist(), scores.tolist(), sptr.tolist(), shared.tolist(),
                              0, targets.shape[0])
    return SuggestResult(concept, items, int(ncand), min_shared, (time.perf_counter() - t0) * 1e3)


def _suggestion_items(g: LinkGraph, targets: list[int], scores: list[float], sptr: list[int],
                      shared: list[int], lo: int, hi: int) -> list[SuggestionItem]:
    """Suggestions ``lo..hi`` of a core result (targets, scores, shared-neighbour CSR)."""
    ids, titles, names, codes = g.ids, g.titles, g.node_type_names, g.node_type_codes
    get_id, get_title = ids.__getitem__, titles.__getitem__
    items = []
    for j in range(lo, hi):
        t = targets[j]
        seg = shared[sptr[j]:sptr[j + 1]]
        items.append(SuggestionItem(ids[t], names[int(codes[t])], titles[t], scores[j],
                                    tuple(zip(map(get_id, seg), map(get_title, seg)))))
    return items


def link_suggest_batch(source: LinkGraph | Any, concepts: Iterable[str], *, caller: Caller,
                       k: int = 10, min_shared: int = 2, threads: int | None = None) -> list[SuggestResult]:
    """:func:`conceptwalk.link_suggest` for many concepts, in input order."""
    t0 = time.perf_counter()
    caller = check_caller(caller)
    k = check_count(k)
    min_shared = check_min_shared(min_shared)
    nt = check_threads(threads)
    names_in = query_list(concepts, "concepts")
    g, _ = source_graph(source)
    vm = caller.visibility(g)
    idx = np.array([g.index(c, visible=vm, argument="concept") for c in names_in], dtype=np.int32)
    if not names_in:
        return []
    out_ptr, targets, scores, sptr, shared, cand = resource_allocation_batch_arrays(
        g, idx, min_shared=min_shared, k=k, threads=nt, visible=vm)
    op, tl, sl, sp, sh = out_ptr.tolist(), targets.tolist(), scores.tolist(), sptr.tolist(), shared.tolist()
    ca = cand.tolist()
    per = (time.perf_counter() - t0) * 1e3 / len(names_in)
    out = [SuggestResult(concept, _suggestion_items(g, tl, sl, sp, sh, op[i], op[i + 1]), int(ca[i]),
                         min_shared, per)
           for i, concept in enumerate(names_in)]
    return out
