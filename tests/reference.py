"""Independent pure-Python/numpy references and seeded random graphs for the core tests.

No reference imports conceptwalk (only ``build_linkgraph`` does, lazily): every reference works on
string ids over a networkx graph, so a bug in the core's index mapping cannot hide in both sides of
a comparison.
Pinned here (not only networkx) so a networkx release cannot move the oracle (STYLE 2.8).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import networkx as nx
import numpy as np

EDGE_TYPES = ("LINK", "RELATED", "PART_OF")

# Id shapes: ASCII, Latin-1, CJK, astral plane (surrogate pairs in UTF-16), spaces and
# punctuation, an uppercase prefix that sorts before lowercase, and digits that sort as text.
_ID_FORMATS = (
    "n{}",
    "é{}",
    "日本{}",
    "Ω-{}",
    "\U0001d518{}",
    "Z{}",
    "a b {}",
    "{}",
    "ß{}x",
    "ü/{}",
)

SHAPES = ("gnp", "tree", "hubs", "components", "dense", "grid", "cycle")


@dataclass(frozen=True)
class GraphSpec:
    """A seeded random graph: ``edges`` as (src, dst, type) id tuples (with duplicates, reciprocal
    pairs and self-loops), ``nodes`` every id (isolated ones included), ``shape`` its family."""

    seed: int
    shape: str
    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str, str], ...]
    extra: dict[str, int] = field(default_factory=dict, compare=False)

    def build_linkgraph(self, rng: random.Random | None = None):  # -> conceptwalk.LinkGraph
        """The conceptwalk LinkGraph of this spec; with ``rng``, edges and nodes are shuffled."""
        from conceptwalk import LinkGraph

        edges, nodes = list(self.edges), list(self.nodes)
        if rng is not None:
            rng.shuffle(edges)
            rng.shuffle(nodes)
        return LinkGraph.from_edges(edges, nodes=nodes)

    def nx_graph(self, visible: Iterable[str] | None = None) -> nx.Graph:
        """Undirected simple projection (self-loops dropped), restricted to ``visible``."""
        g = nx.Graph()
        keep = set(self.nodes) if visible is None else set(visible)
        g.add_nodes_from(v for v in self.nodes if v in keep)
        g.add_edges_from((a, b) for a, b, _ in self.edges if a != b and a in keep and b in keep)
        return g


def make_ids(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct ids of mixed scripts, in random order."""
    ids = [rng.choice(_ID_FORMATS).format(i) for i in range(n)]
    assert len(set(ids)) == n
    rng.shuffle(ids)
    return ids


def _core_edges(shape: str, n: int, rng: random.Random) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    if shape == "gnp":
        p = rng.uniform(0.03, 0.25)
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    elif shape == "tree":
        pairs = [(rng.randrange(v), v) for v in range(1, n)]
    elif shape == "hubs":
        hubs = max(1, min(3, n // 8))
        for v in range(hubs, n):
            for h in rng.sample(range(hubs), rng.randint(1, hubs)):
                pairs.append((h, v))
        for _ in range(n // 4):
            a, b = rng.randrange(hubs, n), rng.randrange(hubs, n)
            pairs.append((a, b))
    elif shape == "components":
        cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(1, 4))))
        bounds = [0, *cuts, n]
        for lo, hi in zip(bounds, bounds[1:]):
            for v in range(lo + 1, hi):
                pairs.append((rng.randrange(lo, v), v))
            for _ in range((hi - lo) // 2):
                pairs.append((rng.randrange(lo, hi), rng.randrange(lo, hi)))
    elif shape == "dense":
        p = rng.uniform(0.4, 0.8)
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    elif shape == "grid":  # many equal-length shortest paths: exercises the lexicographic rule
        w = max(2, int(n**0.5))
        for v in range(n):
            if (v + 1) % w and v + 1 < n:
                pairs.append((v, v + 1))
            if v + w < n:
                pairs.append((v, v + w))
    elif shape == "cycle":
        pairs = [(v, (v + 1) % n) for v in range(n)]
        for _ in range(rng.randint(0, 3)):
            pairs.append((rng.randrange(n), rng.randrange(n)))
    else:  # pragma: no cover
        raise ValueError(shape)
    return [(a, b) for a, b in pairs]


@lru_cache(maxsize=None)
def random_graph(seed: int, shape: str | None = None, n_range: tuple[int, int] = (2, 70)) -> GraphSpec:
    """A reproducible random graph of family ``shape`` (default: chosen by the seed), with isolated
    nodes, duplicate edges, reciprocal pairs, self-loops, mixed edge types and unicode ids."""
    rng = random.Random(seed * 7919 + 17)
    shape = shape or SHAPES[seed % len(SHAPES)]
    n = rng.randint(*n_range)
    if shape in ("components", "cycle", "grid"):
        n = max(n, 3)
    ids = make_ids(n + 4, rng)
    isolated_count = rng.randint(0, 3) if seed % 5 else 0
    core_ids, isolated = ids[:n], ids[n : n + isolated_count]
    pairs = _core_edges(shape, n, rng)
    edges: list[tuple[str, str, str]] = []
    for a, b in pairs:
        if rng.random() < 0.5:
            a, b = b, a
        edges.append((core_ids[a], core_ids[b], rng.choice(EDGE_TYPES)))
    extra = {"duplicates": 0, "reciprocal": 0, "self_loops": 0}
    for e in list(edges):
        r = rng.random()
        if r < 0.08:
            edges.append(e)
            extra["duplicates"] += 1
        elif r < 0.16:
            edges.append((e[1], e[0], e[2]))
            extra["reciprocal"] += 1
        elif r < 0.20:
            edges.append((e[0], e[1], rng.choice(EDGE_TYPES)))  # same pair, maybe another type
    for _ in range(rng.randint(0, 2)):
        v = rng.choice(core_ids)
        edges.append((v, v, "LINK"))
        extra["self_loops"] += 1
    rng.shuffle(edges)
    return GraphSpec(seed, shape, tuple(core_ids + isolated), tuple(edges), extra)


# --------------------------------------------------------------------------------------------- PPR
def exact_ppr(g: nx.Graph, seeds: Mapping[str, float], restart: float) -> dict[str, float]:
    """Exact personalized PageRank by power iteration on the undirected graph ``g``.

    ``x <- restart * s + (1 - restart) * x W`` with ``W`` the random-walk matrix (each node passes
    its mass evenly to its neighbours; a node without neighbours keeps it, as with a self-loop).
    The L1 error after ``t`` iterations is at most ``2 (1 - restart)^t``; iterates until that is
    below 1e-17 (or the iterate stops changing). Returns every node's score.
    """
    max_iter = int(math.ceil(math.log(1e-17 / 2) / math.log(1.0 - restart))) + 1
    nodes = list(g.nodes)
    idx = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    w = np.zeros((n, n))
    for v in nodes:
        nb = list(g.adj[v])
        if nb:
            for u in nb:
                w[idx[v], idx[u]] = 1.0 / len(nb)
        else:
            w[idx[v], idx[v]] = 1.0
    s = np.zeros(n)
    total = float(sum(seeds.values()))
    for v, wt in seeds.items():
        s[idx[v]] += wt / total
    x = s.copy()
    for _ in range(max_iter):
        nxt = restart * s + (1.0 - restart) * (x @ w)
        if np.array_equal(nxt, x):
            break
        x = nxt
    return {v: float(x[idx[v]]) for v in nodes}


def networkx_ppr(g: nx.Graph, seeds: Mapping[str, float], restart: float) -> dict[str, float]:
    """networkx's PageRank with ``alpha = 1 - restart`` and the seeds as personalization."""
    pers = {v: 0.0 for v in g.nodes}
    pers.update({v: float(w) for v, w in seeds.items()})
    return nx.pagerank(g, alpha=1.0 - restart, personalization=pers, tol=1e-14, max_iter=5000)


# ------------------------------------------------------------------------------ resource allocation
def resource_allocation(g: nx.Graph, a: str, min_shared: int) -> list[tuple[str, float, tuple[str, ...]]]:
    """(target, score, shared) for every b not a and not adjacent to a with >= min_shared common
    neighbours; score = sum over shared z (ascending) of 1/deg(z). Ordered by score desc, id asc."""
    na = set(g.adj[a])
    out = []
    for b in g.nodes:
        if b == a or b in na:
            continue
        shared = sorted(na & set(g.adj[b]))
        if len(shared) >= min_shared:
            score = 0.0
            for z in shared:
                score += 1.0 / g.degree(z)
            out.append((b, score, tuple(shared)))
    out.sort(key=lambda t: (-t[1], t[0]))
    return out


def networkx_ra(g: nx.Graph, a: str, min_shared: int) -> dict[str, float]:
    """networkx's resource_allocation_index for a, filtered like the core's candidates."""
    na = set(g.adj[a])
    pairs = [(a, b) for b in g.nodes if b != a and b not in na and len(na & set(g.adj[b])) >= min_shared]
    return {b: s for _, b, s in nx.resource_allocation_index(g, pairs)}


# --------------------------------------------------------------------------------------------- paths
def bfs_dist(g: nx.Graph, source: str) -> dict[str, int]:
    """Hop distances from source (reachable nodes only), by plain BFS."""
    dist = {source: 0}
    q = deque([source])
    while q:
        u = q.popleft()
        for v in g.adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                q.append(v)
    return dist


def lex_shortest_path(g: nx.Graph, s: str, t: str) -> list[str] | None:
    """The lexicographically smallest shortest path (by id sequence), greedily along distances
    to t: from the current node, step to the smallest neighbour one hop closer to t."""
    dt = bfs_dist(g, t)
    if s not in dt:
        return None
    path = [s]
    while path[-1] != t:
        here = dt[path[-1]]
        path.append(min(v for v in g.adj[path[-1]] if dt.get(v) == here - 1))
    return path


def lex_shortest_path_enumerated(g: nx.Graph, s: str, t: str, cap: int = 20000) -> list[str] | None:
    """min() over all shortest paths from networkx (small graphs); None when no path.
    Raises RuntimeError when there are more than ``cap`` shortest paths."""
    try:
        best = None
        for count, p in enumerate(nx.all_shortest_paths(g, s, t)):
            if count >= cap:
                raise RuntimeError("too many shortest paths")
            if best is None or p < best:
                best = p
        return best
    except nx.NetworkXNoPath:
        return None


def multi_source_hops(
    g: nx.Graph, seeds: Iterable[str], targets: Iterable[str], max_hops: int | None = None
) -> dict[str, tuple[int, str] | None]:
    """Per target: (distance to the nearest seed, smallest seed id at that distance), or None
    when unreached (or farther than max_hops). One BFS per seed."""
    per_seed = {s: bfs_dist(g, s) for s in seeds}
    out: dict[str, tuple[int, str] | None] = {}
    for t in targets:
        best = None
        for s, d in per_seed.items():
            if t in d and (max_hops is None or d[t] <= max_hops):
                cand = (d[t], s)
                if best is None or cand < best:
                    best = cand
        out[t] = best
    return out


def ranked_ids(scores: Mapping[str, float]) -> list[str]:
    """Ids with a positive score by score desc, id asc."""
    return sorted((v for v, s in scores.items() if s > 0), key=lambda v: (-scores[v], v))
