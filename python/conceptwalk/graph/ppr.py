"""Personalized PageRank over many seed sets in one call, across C++ threads.

Each ranking is identical (same nodes, same scores to the bit, same order) to what
:meth:`LinkGraph.personalized_pagerank` returns for that seed set: the core runs the single-query
code for each query on ``threads`` threads with the GIL released, each with its own workspace.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")])
>>> rs = personalized_pagerank_batch(g, [{"a": 1.0}, {"d": 1.0, "b": 0.5}], threads=2)
>>> rs[0].ids == g.personalized_pagerank({"a": 1.0}).ids
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .. import _core
from ..errors import InputError
from .checks import check_optional_count, check_ppr_params, check_threads, query_list
from .linkgraph import LinkGraph, Ranking, Visible

__all__ = ["offsets", "personalized_pagerank_batch"]


def offsets(lengths: list[int]) -> np.ndarray[Any, Any]:
    """CSR offsets (int64) of consecutive parts."""
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=ptr[1:])
    return ptr


def personalized_pagerank_batch(graph: LinkGraph, seeds: Iterable[Mapping[str, float]], *,
                                restart: float = 0.25, eps: float = 1e-4, k: int | None = None,
                                visible: Visible = None, max_pushes: int | None = None,
                                threads: int | None = None) -> list[Ranking]:
    """:meth:`LinkGraph.personalized_pagerank` for each seed mapping, in input order.

    Parameters are those of the single call (shared by every query) plus ``threads``.
    """
    if not isinstance(graph, LinkGraph):
        raise InputError(f"graph must be a LinkGraph, got {type(graph).__name__}")
    nt = check_threads(threads)
    restart, eps = check_ppr_params(restart, eps)
    k_ = check_optional_count(k, "k")
    max_pushes_ = check_optional_count(max_pushes, "max_pushes")
    queries = query_list(seeds, "seeds")
    vm = graph.visibility(visible)
    idx_parts, w_parts = [], []
    for i, s in enumerate(queries):
        try:
            idx, w = graph.seed_arrays(s, vm)
        except InputError as exc:
            raise type(exc)(f"seeds[{i}]: {exc}") from None
        idx_parts.append(idx)
        w_parts.append(w)
    if not queries:
        return []
    ptr = offsets([a.shape[0] for a in idx_parts])
    out_ptr, nodes, scores, residual, pushes, visits, truncated, used_eps = _core.ppr_batch(
        graph.core, ptr, np.concatenate(idx_parts), np.concatenate(w_parts), restart,
        eps, k_, max_pushes_, nt, vm)
    degrees = graph.degrees if vm is None else vm.visible_degrees
    op = out_ptr.tolist()
    res, eps_l, pu, vi, tr = residual.tolist(), used_eps.tolist(), pushes.tolist(), visits.tolist(), truncated.tolist()
    return [Ranking(graph, nodes[op[i]:op[i + 1]], scores[op[i]:op[i + 1]], res[i], eps_l[i], pu[i], vi[i],
                    bool(tr[i]), False, degrees) for i in range(len(queries))]
