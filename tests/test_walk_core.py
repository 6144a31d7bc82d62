"""The best-first, budget-fair typed walk: against a brute-force Python reference, budget
fairness, determinism, and masked = deleted (the deletion oracle)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from conceptwalk import LinkGraph
from conceptwalk.graph.walk import typed_walk

TYPES = ("A", "B", "C")


def _graph(seed: int, n: int | None = None, drop: set[str] | None = None) -> LinkGraph:
    rng = random.Random(seed)
    n = n or rng.randint(3, 40)
    ids = [f"n{i:02d}" for i in range(n)]
    edges = []
    for _ in range(rng.randint(n, 4 * n)):
        a, b = rng.sample(ids, 2)
        e = {"src": a, "dst": b, "type": rng.choice(TYPES)}
        if rng.random() < 0.6:
            e["extraction_confidence"] = rng.choice([0.25, 0.5, 0.8, 1.0])
        edges.append(e)
    drop = drop or set()
    nodes = [{"id": i, "type": "X"} for i in ids if i not in drop]
    return LinkGraph.from_edges([e for e in edges if e["src"] not in drop and e["dst"] not in drop], nodes=nodes)


def _weights(g: LinkGraph) -> np.ndarray | None:
    col = g.edge_annotations.get("extraction_confidence")
    return None if col is None else np.ascontiguousarray(col[0], dtype=np.float64)


def reference(
    g: LinkGraph,
    starts: list[tuple[int, float]],
    max_hops: int,
    expand: set[str],
    admit: set[str],
    decay: float,
    budget: int,
    min_share: float,
    mask: np.ndarray | None,
):
    """Every simple path, scored; the same selection rule, written plainly."""
    vis = (lambda i: True) if mask is None else (lambda i: bool(mask[i]))
    w = _weights(g)
    tn = g.edge_type_names
    nbrs: dict[int, list[int]] = {}
    for q in range(g.num_edges):
        a, b = int(g.edge_src[q]), int(g.edge_dst[q])
        if a != b:
            nbrs.setdefault(a, []).append(b)
            nbrs.setdefault(b, []).append(a)
    nbrs = {u: sorted(set(vs)) for u, vs in nbrs.items()}

    def hop(u: int, v: int, gate: set[str]) -> tuple[int, float] | None:
        best = None
        for q in g.edges_between(u, v):
            if tn[int(g.edge_type_codes[q])] not in gate:
                continue
            x = None if w is None or math.isnan(w[q]) else float(w[q])
            key = (x is not None, x if x is not None else 0.0, -q)
            if best is None or key > best[0]:
                best = (key, q, 1.0 if x is None else x)
        return None if best is None else (best[1], best[2])

    order: dict[int, float] = {}
    for s, wt in starts:
        order[s] = max(order.get(s, 0.0), wt)
    order_l = sorted(order.items(), key=lambda t: (-t[1], t[0]))
    start_set = set(order)
    cand: dict[int, dict] = {}
    per_start: list[dict[int, float]] = []
    for si, (s, wt) in enumerate(order_l):
        mine: dict[int, float] = {}
        stack = [([s], [])]
        while stack:
            nodes, factors = stack.pop()
            h = len(nodes)
            u = nodes[-1]
            for v in nbrs.get(u, []):
                if not vis(v) or v in nodes:
                    continue
                if v not in start_set:
                    got = hop(u, v, admit)
                    if got is not None:
                        score = wt * decay ** (h - 1)
                        conf = 1.0
                        for f in factors + [got[1]]:
                            score *= f
                            conf *= f
                        c = cand.setdefault(v, {"score": -1.0, "conf": -1.0, "reach": set(), "hops": 99})
                        c["score"] = max(c["score"], score)
                        c["conf"] = max(c["conf"], conf)
                        c["reach"].add(si)
                        c["hops"] = min(c["hops"], h)
                        mine[v] = max(mine.get(v, -1.0), score)
                if h < max_hops:
                    got = hop(u, v, expand)
                    if got is not None:
                        stack.append((nodes + [v], factors + [got[1]]))
        per_start.append(mine)

    def gkey(v: int):
        c = cand[v]
        return (-c["score"], -len(c["reach"]), -c["conf"], c["hops"], v)

    if len(cand) <= budget:
        kept = list(cand)
    else:
        active = [si for si in range(len(order_l)) if per_start[si]]
        n = len(active)
        guaranteed = math.floor(min_share * budget / n)
        rest = budget - guaranteed * n
        wsum = sum(order_l[si][1] for si in active)
        quota, fracs, given = [], [], 0
        for a, si in enumerate(active):
            exact = rest * order_l[si][1] / wsum
            fl = min(rest, math.floor(exact))
            quota.append(guaranteed + fl)
            given += fl
            fracs.append((exact - fl, a))
        fracs.sort(key=lambda t: -t[0])
        for i in range(rest - given):
            quota[fracs[i][1]] += 1
        kept, taken = [], set()
        for a, si in enumerate(active):
            mine = sorted(per_start[si], key=lambda v: (-per_start[si][v],) + gkey(v))
            got = 0
            for v in mine:
                if got >= quota[a]:
                    break
                if v in taken:
                    continue
                taken.add(v)
                kept.append(v)
                got += 1
        for v in sorted(cand, key=gkey):
            if len(kept) >= budget:
                break
            if v not in taken:
                taken.add(v)
                kept.append(v)
    kept.sort(key=gkey)
    return [(v, cand[v]["score"], len(cand[v]["reach"]), cand[v]["hops"]) for v in kept]


def _walk(g, starts, max_hops, expand, admit, decay, budget, min_share, vm=None, max_edges=10**9, max_paths=0):
    flags_e = np.array([t in expand for t in g.edge_type_names], dtype=bool)
    flags_a = np.array([t in admit for t in g.edge_type_names], dtype=bool)
    return typed_walk(
        g,
        np.array([s for s, _ in starts], np.int32),
        max_hops,
        flags_e,
        flags_a,
        None,
        None,
        None,
        max_edges=max_edges,
        max_candidates=budget,
        visible=vm,
        start_weights=np.array([w for _, w in starts], np.float64),
        edge_weights=_weights(g),
        hop_decay=decay,
        min_share=min_share,
        max_paths=max_paths,
    )


@pytest.mark.parametrize("seed", range(60))
def test_kept_candidates_match_the_brute_force_reference(seed):
    rng = random.Random(1000 + seed)
    g = _graph(seed)
    n = g.num_nodes
    starts = [(rng.randrange(n), rng.choice([1.0, 0.9, 0.6, 0.3, 0.3])) for _ in range(rng.randint(1, 4))]
    hops = rng.randint(1, 3)
    expand = set(rng.sample(TYPES, rng.randint(0, 3)))
    admit = set(rng.sample(TYPES, rng.randint(1, 3)))
    decay = rng.choice([1.0, 0.5, 0.7])
    budget = rng.randint(0, 12)
    share = rng.choice([0.0, 0.5, 1.0])
    mask = None
    vm = None
    if seed % 3 == 0:
        mask = np.array([rng.random() < 0.75 for _ in range(n)])
        for s, _ in starts:
            mask[s] = True
        vm = g.visibility(mask)
    r = _walk(g, starts, hops, expand, admit, decay, budget, share, vm)
    want = reference(g, starts, hops, expand, admit, decay, budget, share, mask)
    assert r.candidates.tolist() == [v for v, *_ in want]
    assert r.scores.tolist() == pytest.approx([s for _, s, *_ in want], rel=1e-12)
    assert r.reach.tolist() == [x for _, _, x, _ in want]
    assert r.min_hops.tolist() == [x for *_, x in want]
    # one start: exactly the top `budget` by score
    if len({s for s, _ in starts}) == 1:
        full = reference(g, starts, hops, expand, admit, decay, 10**6, share, mask)
        assert r.candidates.tolist() == [v for v, *_ in full][:budget]
    # paths: grouped per candidate, best first, each ending at its candidate, scores matching
    ptr = r.path_ptr.tolist()
    for i, c in enumerate(r.candidates.tolist()):
        ps = r.path_scores[ptr[i] : ptr[i + 1]].tolist()
        assert ps and ps[0] == pytest.approx(float(r.scores[i])) and ps == sorted(ps, reverse=True)
        assert r.path_count[i] == ptr[i + 1] - ptr[i]
        for p in range(ptr[i], ptr[i + 1]):
            h = int(r.path_hops[p])
            assert r.path_nodes[p, h] == c and (r.path_nodes[p, h + 1 :] == -1).all()
            for j in range(h):
                e = int(r.path_edges[p, j])
                assert {int(g.edge_src[e]), int(g.edge_dst[e])} == {
                    int(r.path_nodes[p, j]),
                    int(r.path_nodes[p, j + 1]),
                }
    assert r.truncated == r.cut_by_candidates == (r.candidates_found > budget)


#: The arrays of a walk's result (read-only, named).
WALK_FIELDS = (
    "candidates",
    "scores",
    "reach",
    "min_hops",
    "path_count",
    "path_ptr",
    "path_nodes",
    "path_edges",
    "path_hops",
    "path_scores",
)


def test_result_is_read_only_and_named():
    g = _graph(1)
    r = _walk(g, [(0, 1.0)], 2, {"A"}, {"B", "C"}, 0.5, 5, 0.5)
    for name in WALK_FIELDS:
        arr = getattr(r, name)
        assert not arr.flags.writeable
    with pytest.raises(AttributeError):
        r.candidates = None  # type: ignore[misc]
    assert "WalkResult(" in repr(r)


def _two_concepts(n_first: int, n_second: int) -> LinkGraph:
    edges = [("c:first", f"f:a{i:03d}", "IMPLEMENTED_BY") for i in range(n_first)]
    edges += [("c:second", f"f:b{i:03d}", "IMPLEMENTED_BY") for i in range(n_second)]
    return LinkGraph.from_edges(edges)


@pytest.mark.parametrize("weak", [1.0, 0.5, 0.2, 0.05])
def test_a_first_concept_with_many_neighbours_cannot_starve_the_second(weak):
    g = _two_concepts(100, 6)
    starts = [(g.index("c:first"), 1.0), (g.index("c:second"), weak)]
    r = _walk(g, starts, 1, set(), {"IMPLEMENTED_BY"}, 0.5, 20, 0.5)
    got = [g.ids[i] for i in r.candidates]
    from_second = [x for x in got if x.startswith("f:b")]
    # guaranteed floor(0.5 * 20 / 2) = 5 whatever the confidence
    assert len(from_second) >= 5 and len(got) == 20 and r.truncated
    # and nothing is lost: without the guarantee the share is proportional (floor + remainder)
    r0 = _walk(g, starts, 1, set(), {"IMPLEMENTED_BY"}, 0.5, 20, 0.0)
    n0 = sum(g.ids[i].startswith("f:b") for i in r0.candidates)
    assert n0 >= min(6, math.floor(20 * weak / (1 + weak)))


def test_edge_budget_is_shared_and_unused_shares_roll_over():
    g = _two_concepts(100, 6)
    starts = [(g.index("c:first"), 1.0), (g.index("c:second"), 0.3)]
    r = _walk(g, starts, 1, set(), {"IMPLEMENTED_BY"}, 0.5, 200, 0.5, max_edges=40)
    got = [g.ids[i] for i in r.candidates]
    assert sum(x.startswith("f:b") for x in got) == 6  # the second's 6 fit in its half
    assert sum(x.startswith("f:a") for x in got) == 34  # the first gets what the second left
    assert r.edges_visited == 40 and r.cut_by_edges
    # a budget that covers the whole walk cuts nothing
    assert not _walk(g, starts, 1, set(), {"IMPLEMENTED_BY"}, 0.5, 200, 0.5, max_edges=106).truncated
    assert _walk(g, starts, 1, set(), {"IMPLEMENTED_BY"}, 0.5, 200, 0.5, max_edges=105).cut_by_edges


def test_ties_broken_by_evidence_before_the_id():
    # f:z is reached from both concepts, f:a only from the first: same best score
    g = LinkGraph.from_edges([("c:1", "f:a", "T"), ("c:1", "f:z", "T"), ("c:2", "f:z", "T")])
    r = _walk(g, [(g.index("c:1"), 1.0), (g.index("c:2"), 1.0)], 1, set(), {"T"}, 0.5, 5, 0.5)
    assert [g.ids[i] for i in r.candidates] == ["f:z", "f:a"] and r.reach.tolist() == [2, 1]
    # edge confidence breaks a tie of score and reach
    g = LinkGraph.from_edges(
        [
            {"src": "c:1", "dst": "f:a", "type": "T", "extraction_confidence": 0.5},
            {"src": "c:2", "dst": "f:z", "type": "T", "extraction_confidence": 1.0},
        ]
    )
    r = _walk(g, [(g.index("c:1"), 1.0), (g.index("c:2"), 0.5)], 1, set(), {"T"}, 0.5, 5, 0.5)
    assert [g.ids[i] for i in r.candidates] == ["f:z", "f:a"] and r.scores.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("seed", range(25))
def test_deterministic_and_independent_of_start_order(seed):
    rng = random.Random(seed)
    g = _graph(seed + 500)
    starts = [(rng.randrange(g.num_nodes), rng.choice([1.0, 0.5, 0.25])) for _ in range(3)]
    args = (2, {"A", "B"}, {"B", "C"}, 0.5, rng.randint(1, 8), 0.5)
    max_edges = rng.choice([0, 3, 10, 60, 10**9])
    a = _walk(g, starts, *args, max_edges=max_edges)
    for other in (starts, list(reversed(starts)), starts[1:] + starts[:1]):
        b = _walk(g, other, *args, max_edges=max_edges)
        for name in ("candidates", "scores", "reach", "path_count", "path_nodes", "path_edges", "path_scores"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert (a.edges_visited, a.cut_by_edges, a.cut_by_candidates) == (
            b.edges_visited,
            b.cut_by_edges,
            b.cut_by_candidates,
        )


@pytest.mark.parametrize("seed", range(40))
def test_masked_walk_equals_the_walk_on_the_graph_with_hidden_nodes_deleted(seed):
    rng = random.Random(seed)
    g = _graph(seed + 2000, n=rng.randint(4, 30))
    n = g.num_nodes
    starts = [(rng.randrange(n), rng.choice([1.0, 0.5])) for _ in range(rng.randint(1, 3))]
    mask = np.array([rng.random() < 0.7 for _ in range(n)])
    for s, _ in starts:
        mask[s] = True
    hidden = {g.ids[i] for i in range(n) if not mask[i]}
    cut = _graph(seed + 2000, n=n, drop=hidden)
    budget, max_edges = rng.randint(0, 10), rng.choice([5, 20, 10**6])
    args = (2, {"A", "C"}, {"B", "C"}, 0.5, budget, 0.5)
    a = _walk(g, starts, *args, vm=g.visibility(mask), max_edges=max_edges)
    b = _walk(cut, [(cut.index(g.ids[s]), w) for s, w in starts], *args, max_edges=max_edges)
    assert [g.ids[i] for i in a.candidates] == [cut.ids[i] for i in b.candidates]
    assert a.scores.tolist() == b.scores.tolist() and a.reach.tolist() == b.reach.tolist()
    assert a.edges_visited == b.edges_visited and a.truncated == b.truncated
    assert a.path_count.tolist() == b.path_count.tolist()
    to_ids = lambda gr, arr: [[gr.ids[x] if x >= 0 else None for x in row] for row in arr.tolist()]
    assert to_ids(g, a.path_nodes) == to_ids(cut, b.path_nodes)
    edge_key = lambda gr, arr: [
        [
            (gr.ids[int(gr.edge_src[e])], gr.ids[int(gr.edge_dst[e])], gr.edge_type_names[int(gr.edge_type_codes[e])])
            if e >= 0
            else None
            for e in row
        ]
        for row in arr.tolist()
    ]
    assert edge_key(g, a.path_edges) == edge_key(cut, b.path_edges)


def test_max_paths_keeps_the_best_and_counts_all():
    g = LinkGraph.from_edges([("s", "m1", "E"), ("s", "m2", "E"), ("m1", "t", "A"), ("m2", "t", "A"), ("s", "t", "A")])
    flags_e = np.array([t == "E" for t in g.edge_type_names])
    flags_a = np.array([t == "A" for t in g.edge_type_names])
    r = typed_walk(
        g,
        np.array([g.index("s")], np.int32),
        2,
        flags_e,
        flags_a,
        None,
        None,
        None,
        max_edges=100,
        max_candidates=5,
        visible=None,
        hop_decay=0.5,
        max_paths=2,
    )
    assert [g.ids[i] for i in r.candidates] == ["t"] and r.path_count.tolist() == [3]
    assert r.path_hops.tolist() == [1, 2] and r.path_scores.tolist() == [1.0, 0.5]
    assert [g.ids[x] for x in r.path_nodes[1, :3]] == ["s", "m1", "t"]
