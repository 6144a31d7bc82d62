"""Properties (hypothesis): masks equal deletion, input order changes no output bit, repeated
calls are identical, hidden and missing ids are indistinguishable."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk import LinkGraph, NotFoundError

EDGE_TYPES = ("LINK", "RELATED", "PART_OF")

_ID = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=4)


@st.composite
def graphs(draw, max_nodes=24, max_edges=70):
    """(ids, edges): unicode ids (the empty string included), typed edges with duplicates,
    reciprocal pairs and self-loops arising naturally; some ids only as isolated nodes."""
    ids = draw(st.lists(_ID, unique=True, min_size=1, max_size=max_nodes))
    n = len(ids)
    raw = draw(
        st.lists(
            st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(EDGE_TYPES)), max_size=max_edges
        )
    )
    edges = [(ids[a], ids[b], t) for a, b, t in raw]
    if raw and draw(st.booleans()):  # explicit duplicates and reciprocal copies
        a, b, t = raw[0]
        edges += [(ids[a], ids[b], t), (ids[b], ids[a], t)]
    return ids, edges


@st.composite
def graph_and_mask(draw):
    ids, edges = draw(graphs())
    mask = draw(st.lists(st.booleans(), min_size=len(ids), max_size=len(ids)))
    if not any(mask):
        mask[draw(st.integers(0, len(ids) - 1))] = True
    return ids, edges, mask


def _outputs(g: LinkGraph, rng: random.Random, nodes: list[str], visible=None):
    """A fixed battery of queries (chosen by ``rng`` among ``nodes``) and their full outputs."""
    nodes = sorted(nodes)
    out = []
    for _ in range(3):
        k = rng.randint(1, min(3, len(nodes)))
        seeds = {v: rng.choice([1.0, 2.0, 0.5]) for v in rng.sample(nodes, k)}
        eps = rng.choice([1e-3, 1e-5])
        r = g.personalized_pagerank(seeds, eps=eps, visible=visible)
        out.append(("ppr", list(r.items()), r.residual, r.pushes))
    for _ in range(3):
        a = rng.choice(nodes)
        ms = rng.randint(1, 3)
        out.append(("ra", [s.to_dict() for s in g.resource_allocation(a, min_shared=ms, visible=visible)]))
    for _ in range(4):
        s, t = rng.choice(nodes), rng.choice(nodes)
        out.append(("path", g.shortest_path(s, t, visible=visible)))
    seeds = rng.sample(nodes, rng.randint(1, min(3, len(nodes))))
    out.append(("hops", sorted(g.hops(seeds, nodes, visible=visible).items())))
    return out


@settings(max_examples=200)
@given(graph_and_mask(), st.integers(0, 2**32))
def test_masked_equals_deleted(data, qseed):
    ids, edges, mask = data
    visible = [v for v, m in zip(ids, mask) if m]
    vset = set(visible)
    g = LinkGraph.from_edges(edges, nodes=ids)
    sub = LinkGraph.from_edges([e for e in edges if e[0] in vset and e[1] in vset], nodes=visible)
    masked = _outputs(g, random.Random(qseed), visible, visible=visible)
    deleted = _outputs(sub, random.Random(qseed), visible)
    assert len(masked) == len(deleted)
    for m, d in zip(masked, deleted):
        if m[0] == "ppr":
            assert [v for v, _ in m[1]] == [v for v, _ in d[1]]
            assert np.allclose([p for _, p in m[1]], [p for _, p in d[1]], rtol=0, atol=1e-12)
            assert abs(m[2] - d[2]) <= 1e-12
        else:
            assert m == d
    # The three spellings of the same visible set agree bit for bit.
    bool_mask = np.array([v in vset for v in g.ids])
    assert _outputs(g, random.Random(qseed), visible, visible=bool_mask) == masked
    assert _outputs(g, random.Random(qseed), visible, visible=g.visibility(bool_mask)) == masked


@settings(max_examples=200)
@given(graphs(), st.integers(0, 2**32), st.integers(0, 2**32))
def test_input_order_changes_no_output_bit(data, shuffle_seed, qseed):
    ids, edges = data
    a = LinkGraph.from_edges(edges, nodes=ids)
    rng = random.Random(shuffle_seed)
    edges2, ids2 = list(edges), list(ids)
    rng.shuffle(edges2)
    rng.shuffle(ids2)
    b = LinkGraph.from_edges(edges2, nodes=ids2)
    assert a.ids == b.ids
    for name in ("indptr", "indices", "entry_pair", "pair_ptr", "edge_typedir"):
        assert np.array_equal(getattr(a.core, name), getattr(b.core, name))
    assert _outputs(a, random.Random(qseed), ids) == _outputs(b, random.Random(qseed), ids)


@given(graphs(), graphs(max_nodes=40, max_edges=150), st.integers(0, 2**32))
def test_repeated_calls_are_identical(first, other, qseed):
    g = LinkGraph.from_edges(first[1], nodes=first[0])
    h = LinkGraph.from_edges(other[1], nodes=other[0])
    once = _outputs(g, random.Random(qseed), first[0])
    _outputs(h, random.Random(qseed + 1), other[0])  # dirty the thread's workspace elsewhere
    again = _outputs(g, random.Random(qseed), first[0])
    assert once == again


@settings(max_examples=200)
@given(graph_and_mask(), _ID)
def test_hidden_and_missing_ids_are_indistinguishable(data, missing):
    ids, edges, mask = data
    if missing in ids or all(mask):
        return
    visible = [v for v, m in zip(ids, mask) if m]
    hidden = next(v for v, m in zip(ids, mask) if not m)
    g = LinkGraph.from_edges(edges, nodes=ids)
    anchor = visible[0]
    calls = [
        lambda x: g.personalized_pagerank({x: 1.0}, visible=visible),
        lambda x: g.personalized_pagerank({anchor: 1.0, x: 2.0}, visible=visible),
        lambda x: g.personalized_pagerank_certified({x: 1.0}, 2, visible=visible),
        lambda x: g.resource_allocation(x, visible=visible),
        lambda x: g.shortest_path(x, anchor, visible=visible),
        lambda x: g.shortest_path(anchor, x, visible=visible),
        lambda x: g.hops([x], [anchor], visible=visible),
        lambda x: g.hops([anchor], [x], visible=visible),
    ]
    for call in calls:
        seen = []
        for x in (hidden, missing):
            with pytest.raises(NotFoundError) as info:
                call(x)
            assert info.value.node_id == x
            seen.append((type(info.value), str(info.value).replace(repr(x), "<id>"), info.value.argument))
        assert seen[0] == seen[1]


@given(graphs())
def test_ppr_mass_and_ra_symmetry(data):
    ids, edges = data
    g = LinkGraph.from_edges(edges, nodes=ids)
    for v in sorted(ids)[:5]:
        r = g.personalized_pagerank({v: 1.0}, eps=1e-4)
        assert all(p > 0 for p in r.scores.tolist())
        assert abs(float(r.scores.sum()) + r.residual - 1.0) < 1e-12
        for s in g.resource_allocation(v, min_shared=1):
            back = {x.id: x for x in g.resource_allocation(s.id, min_shared=1)}
            assert back[v].shared == s.shared and abs(back[v].score - s.score) < 1e-12
