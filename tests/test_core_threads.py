"""Concurrent calls on one graph (GIL released) give exactly the serial results."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import reference as ref
from conceptwalk import LinkGraph

THREADS = 8


@pytest.fixture(scope="module")
def big():
    """A 3,000-node graph: long enough queries that threads really overlap."""
    rng = np.random.default_rng(7)
    n, m = 3000, 12000
    ids = [f"c{i:05d}" for i in range(n)]
    return LinkGraph.from_arrays(ids, rng.integers(0, n, m), rng.integers(0, n, m), rng.choice(["LINK", "RELATED"], m))


def _tasks(g: LinkGraph, count: int, seed: int):
    rng = random.Random(seed)
    ids = g.ids
    mask = np.array([rng.random() < 0.8 for _ in ids])
    vm = g.visibility(mask)
    visible_ids = [v for v, m in zip(ids, mask.tolist()) if m]
    tasks = []
    for i in range(count):
        vis, pool = (vm, visible_ids) if i % 3 == 0 else (None, ids)
        kind = i % 4
        if kind == 0:
            seeds = {v: 1.0 + j for j, v in enumerate(rng.sample(pool, min(3, len(pool))))}
            tasks.append(lambda s=seeds, v=vis: list(g.personalized_pagerank(s, eps=1e-6, visible=v).items()))
        elif kind == 1:
            a = rng.choice(pool)
            tasks.append(lambda a=a, v=vis: [x.to_dict() for x in g.resource_allocation(a, min_shared=1, visible=v)])
        elif kind == 2:
            s, t = rng.choice(pool), rng.choice(pool)
            tasks.append(lambda s=s, t=t, v=vis: g.shortest_path(s, t, visible=v))
        else:
            seeds = rng.sample(pool, min(4, len(pool)))
            targets = rng.sample(pool, min(50, len(pool)))
            tasks.append(lambda s=seeds, t=targets, v=vis: g.hops(s, t, visible=v))
    return tasks


def test_threads_equal_serial(big):
    tasks = _tasks(big, 240, 1)
    serial = [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        for _ in range(2):
            parallel = list(pool.map(lambda t: t(), tasks))
            assert parallel == serial


def test_threads_over_several_graphs(big):
    """Per-thread workspaces are sized by the largest graph seen; small and big graphs interleave."""
    small = [ref.random_graph(s, n_range=(20, 60)).build_linkgraph() for s in range(6)]
    tasks = _tasks(big, 60, 2)
    for g in small:
        tasks += _tasks(g, 20, 3)
    random.Random(4).shuffle(tasks)
    serial = [t() for t in tasks]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        assert list(pool.map(lambda t: t(), tasks)) == serial


def test_certified_in_threads(big):
    seeds = [{big.ids[i]: 1.0} for i in range(0, 3000, 150)]
    serial = [list(big.personalized_pagerank_certified(s, 5).items()) for s in seeds]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        got = list(pool.map(lambda s: list(big.personalized_pagerank_certified(s, 5).items()), seeds))
    assert got == serial
