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
    """CSR offsets (int64) of consecutive parts.

    Parameters
    ----------
    lengths : list of int

    Returns
    -------
    int64 array of ``len(lengths) + 1`` offsets

    Examples
    --------
    >>> offsets([2, 0, 3]).tolist()
    [0, 2, 2, 5]
    """
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=ptr[1:])
    return ptr


def personalized_pagerank_batch(
    graph: LinkGraph,
    seeds: Iterable[Mapping[str, float]],
    *,
    restart: float = 0.25,
    eps: float = 1e-4,
    k: int | None = None,
    visible: Visible = None,
    max_pushes: int | None = None,
    threads: int | None = None,
) -> list[Ranking]:
    """:meth:`LinkGraph.personalized_pagerank` for each seed mapping, in input order.

    Parameters
    ----------
    graph : LinkGraph
    seeds : iterable of mappings id -> weight
        One seed mapping per query.
    restart, eps, k, visible, max_pushes
        As for the single call, shared by every query.
    threads : int, optional
        C++ threads (default: ``os.cpu_count()``).

    Returns
    -------
    list of Ranking
        Each identical to the single call's for that seed mapping.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> [r.ids[:2] for r in personalized_pagerank_batch(g, [{"a": 1.0}, {"c": 1.0}], threads=1)]
    [['b', 'a'], ['b', 'c']]
    """
    if not isinstance(graph, LinkGraph):
        raise InputError(f"graph must be a LinkGraph, got {type(graph).__name__}")
    nt = check_threads(threads)
    restart, eps = check_ppr_params(restart, eps, capped=max_pushes is not None)
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
    b = _core.ppr_batch(
        graph.core, ptr, np.concatenate(idx_parts), np.concatenate(w_parts), restart, eps, k_, max_pushes_, nt, vm
    )
    degrees = graph.degrees if vm is None else vm.visible_degrees
    op = b.ptr.tolist()
    nodes, scores = b.nodes, b.scores
    res, eps_l, pu, vi, tr = (
        b.residual.tolist(),
        b.eps.tolist(),
        b.pushes.tolist(),
        b.edge_visits.tolist(),
        b.truncated.tolist(),
    )
    return [
        Ranking(
            graph,
            nodes[op[i] : op[i + 1]],
            scores[op[i] : op[i + 1]],
            res[i],
            eps_l[i],
            pu[i],
            vi[i],
            tr[i],
            False,
            degrees,
        )
        for i in range(len(queries))
    ]
