"""The wrap's path rendering in one compiled call (``WalkResult.render_paths``): equal to a plain
Python decoding of the walk's arrays (the decoding the wrap ran before), over random annotated
graphs, masks, provenance projections and path limits; new objects on every call; bad input
refused, never read out of bounds."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, LinkGraph
from conceptwalk.graph.walk import typed_walk
from conceptwalk.wrap.config import WalkConfig
from conceptwalk.wrap.walk import Provenance, prepared, run_walk

TYPES = ("A", "B", "C")
AXES_VALUES = {
    "authority": ["canonical", "derived"],
    "fidelity": ["exact", "approximate"],
    "extraction_method": ["manual", "llm"],
    "extraction_confidence": [0.25, 0.5, 0.9],
    "lifecycle": ["active", "deprecated"],
}


def _graph(seed: int) -> tuple[LinkGraph, list[str]]:
    rng = random.Random(seed)
    n = rng.randint(3, 30)
    ids = [f"n{i:02d}" for i in range(n)]
    nodes = [{"id": i, "type": "X", "scopes": ["s"] if rng.random() < 0.2 else None} for i in ids]
    edges = []
    for _ in range(rng.randint(n, 4 * n)):
        a, b = rng.sample(ids, 2)
        e: dict[str, Any] = {"src": a, "dst": b, "type": rng.choice(TYPES)}
        for key, values in AXES_VALUES.items():
            if rng.random() < 0.4:
                e[key] = rng.choice(values)
        edges.append(e)
    return LinkGraph.from_edges(edges, nodes=[{k: v for k, v in x.items() if v is not None} for x in nodes]), ids


def reference_paths(g: LinkGraph, r: Any, c_slot: int, provenance: Provenance) -> list[dict[str, Any]]:
    """The walk's paths of one candidate decoded in plain Python, hop by hop (the wrap's former
    decoding): the edge's own source decides the direction, its type code names the type."""
    ids, tnames = g.ids, g.edge_type_names
    ptr = r.path_ptr.tolist()
    out = []
    for p in range(ptr[c_slot], ptr[c_slot + 1]):
        h = int(r.path_hops[p])
        row = [int(x) for x in r.path_nodes[p][: h + 1]]
        hops = []
        for j in range(h):
            e = int(r.path_edges[p][j])
            u = row[j]
            hop: dict[str, Any] = {
                "from": ids[u],
                "to": ids[row[j + 1]],
                "type": tnames[int(g.edge_type_codes[e])],
                "direction": "forward" if int(g.edge_src[e]) == u else "backward",
            }
            present, absent = provenance.edge(e)
            hop.update({k: dict(x) if isinstance(x, dict) else x for k, x in present.items()})
            if absent:
                hop["absent"] = dict(absent)
            hops.append(hop)
        out.append(
            {"concept": ids[row[0]], "score": float(r.path_scores[p]), "nodes": [ids[x] for x in row], "hops": hops}
        )
    return out


def _case(seed: int, scoped: bool, max_paths: int) -> tuple[LinkGraph, Any, WalkConfig, list[tuple[int, str, float]]]:
    g, _ = _graph(seed)
    caller = Caller.with_scopes("s") if scoped else Caller.public()
    vm = caller.visibility(g)
    rng = random.Random(seed + 1)
    visible = [i for i in range(g.num_nodes) if vm.mask[i]]
    starts = [(i, g.ids[i], rng.choice([1.0, 0.5, 0.25])) for i in rng.sample(visible, min(len(visible), 3))]
    cfg = WalkConfig(
        max_hops=rng.randint(1, 2),
        max_candidates=rng.randint(1, 12),
        max_paths_per_candidate=max_paths,
        expand_edge_types=TYPES,
        admit_edge_types=rng.choice([TYPES, TYPES[:2]]),
    )
    return g, vm, cfg, starts


def _core_walk(g: LinkGraph, vm: Any, cfg: WalkConfig, starts: list[tuple[int, str, float]]) -> Any:
    """The compiled walk with the arguments run_walk passes (its arrays from ``prepared``)."""
    prep = prepared(g, cfg)
    return typed_walk(
        g,
        np.array([s[0] for s in starts], dtype=np.int32),
        cfg.max_hops,
        prep.expand,
        prep.admit,
        prep.node_types,
        prep.exp_nodes,
        prep.adm_nodes,
        max_edges=cfg.max_edges,
        max_candidates=cfg.max_candidates,
        visible=vm,
        start_weights=np.array([s[2] for s in starts], dtype=np.float64),
        edge_weights=prep.edge_weights,
        hop_decay=cfg.hop_decay,
        min_share=cfg.walk_min_share,
        max_paths=cfg.max_paths_per_candidate,
    )


def _render(r: Any, g: LinkGraph, slots: list[int], prov: Provenance) -> Any:
    return r.render_paths(g.core, slots, g.ids, g.edge_type_names, prov.cache, prov.edge)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 10**6),
    st.booleans(),
    st.sampled_from([None, {}, {"authority": 0, "lifecycle": 3}]),
    st.integers(1, 4),
)
def test_rendered_paths_equal_the_python_decoding(seed, scoped, presence, max_paths):
    _check(seed, scoped, presence, max_paths)


def test_the_comparison_sees_many_paths_of_both_lengths():
    # not vacuous: the cases above render candidates, two-hop paths and absent axes
    found = [_check(seed, seed % 2 == 0, None, 2) for seed in range(40)]
    assert sum(n for n, _, _ in found) > 100
    assert sum(two for _, two, _ in found) > 20
    assert sum(absent for _, _, absent in found) > 20


def _check(seed: int, scoped: bool, presence: dict[str, int] | None, max_paths: int) -> tuple[int, int, int]:
    g, vm, cfg, starts = _case(seed, scoped, max_paths)
    if not starts:
        return 0, 0, 0
    r = _core_walk(g, vm, cfg, starts)
    n = len(r.candidates)
    got = _render(r, g, list(range(n)), Provenance(g, presence))
    assert got == [reference_paths(g, r, i, Provenance(g, presence)) for i in range(n)]
    # run_walk's outcome renders the same, for all candidates, a subset in any order, and as WalkPaths
    out = run_walk(g, starts, cfg, vm, Provenance(g, presence))
    assert out.candidates == r.candidates.tolist()
    assert out.rendered(out.candidates) == got
    subset = random.Random(seed).sample(out.candidates, n // 2)
    slot = {c: i for i, c in enumerate(out.candidates)}
    assert out.rendered(subset) == [got[slot[c]] for c in subset]
    for c in out.candidates:
        assert [p.to_dict() for p in out.paths(c)] == got[slot[c]]
    paths = [p for ps in got for p in ps]
    return n, sum(len(p["hops"]) == 2 for p in paths), sum("absent" in h for p in paths for h in p["hops"])


def test_rendered_objects_are_new_on_every_call_and_the_cache_is_not_shared_out():
    g = LinkGraph.from_edges(
        [
            {"src": "c", "dst": "a", "type": "T", "authority": "canonical", "extraction_method": "manual"},
            {"src": "b", "dst": "c", "type": "T", "fidelity": "exact"},
        ]
    )
    prov = Provenance(g, None)
    cfg = WalkConfig(max_hops=1, expand_edge_types=("T",), admit_edge_types=("T",))
    out = run_walk(g, [(g.index("c"), "c", 1.0)], cfg, None, prov)
    first = out.rendered(out.candidates)
    snapshot = repr(first)
    for paths in first:
        for p in paths:
            p["nodes"].append("x")
            for hop in p["hops"]:
                hop["from"] = "mutated"
                for v in hop.values():
                    if isinstance(v, dict):
                        v["mutated"] = True
    assert repr(out.rendered(out.candidates)) == snapshot
    directions = {
        (h["from"], h["to"]): h["direction"] for ps in out.rendered(out.candidates) for p in ps for h in p["hops"]
    }
    assert directions == {("c", "a"): "forward", ("c", "b"): "backward"}
    assert len(prov.cache) == 2  # one rendered entry per edge, filled through the miss callback


def test_bad_input_is_refused():
    g, vm, cfg, starts = _case(3, False, 3)
    r = _core_walk(g, vm, cfg, starts)
    prov = Provenance(g, None)
    n = len(r.candidates)
    assert n > 0
    with pytest.raises(ValueError, match="not a candidate position"):
        _render(r, g, [n], prov)
    with pytest.raises(ValueError, match="not a candidate position"):
        _render(r, g, [-1], prov)
    with pytest.raises(ValueError, match="one id per node"):
        r.render_paths(g.core, [0], g.ids[:-1], g.edge_type_names, prov.cache, prov.edge)
    other = LinkGraph.from_edges([("x", "y")])
    with pytest.raises(ValueError, match="not the one this walk ran on"):
        r.render_paths(other.core, [0], other.ids, other.edge_type_names, {}, prov.edge)
    with pytest.raises(ValueError, match="edge type code out of range"):
        r.render_paths(g.core, list(range(n)), g.ids, (), {}, prov.edge)
    with pytest.raises(TypeError, match="provenance entry"):
        r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, {}, lambda e: ({}, None))
    with pytest.raises(ZeroDivisionError):  # the miss callback's own error propagates
        r.render_paths(g.core, list(range(n)), g.ids, g.edge_type_names, {}, lambda e: 1 / 0)
    assert r.render_paths(g.core, [], g.ids, g.edge_type_names, {}, prov.edge) == []


@pytest.mark.parametrize("seed", range(30))
def test_the_walk_renders_in_its_own_call_what_render_paths_renders(seed):
    g, vm, cfg, starts = _case(seed, seed % 3 == 0, 2)
    if not starts:
        return
    plain = _core_walk(g, vm, cfg, starts)
    assert plain.rendered is None
    cands = plain.candidates.tolist()
    skip = random.Random(seed).sample(cands, len(cands) // 3) + [0, g.num_nodes - 1]
    prov = Provenance(g, None)
    prep = prepared(g, cfg)
    r = typed_walk(
        g,
        np.array([s[0] for s in starts], dtype=np.int32),
        cfg.max_hops,
        prep.expand,
        prep.admit,
        None,
        None,
        None,
        max_edges=cfg.max_edges,
        max_candidates=cfg.max_candidates,
        visible=vm,
        start_weights=np.array([s[2] for s in starts], dtype=np.float64),
        edge_weights=prep.edge_weights,
        hop_decay=cfg.hop_decay,
        min_share=cfg.walk_min_share,
        max_paths=cfg.max_paths_per_candidate,
        render=(g.ids, g.edge_type_names, prov.cache, prov.edge, np.array(skip, dtype=np.int32)),
    )
    assert r.candidates.tolist() == cands
    want = _render(plain, g, list(range(len(cands))), Provenance(g, None))
    assert r.rendered == [None if c in skip else w for c, w in zip(cands, want)]
    # through run_walk: the walk's own rendering is handed out once, then rendered anew, equal
    out = run_walk(g, starts, cfg, vm, Provenance(g, None), render_except=skip)
    kept = [c for c in cands if c not in skip]
    assert out.rendered(kept) == [w for c, w in zip(cands, want) if c not in skip]
    assert not out.prerendered
    assert out.rendered(kept) == [w for c, w in zip(cands, want) if c not in skip]


def test_a_bad_render_argument_is_refused():
    g, vm, cfg, starts = _case(3, False, 3)
    prep = prepared(g, cfg)
    args = (g, np.array([starts[0][0]], dtype=np.int32), 1, prep.expand, prep.admit, None, None, None)
    with pytest.raises(TypeError, match="render must be"):
        typed_walk(*args, max_edges=100, max_candidates=5, visible=None, render=(g.ids,))
    with pytest.raises(ValueError, match="one id per node"):
        typed_walk(
            *args,
            max_edges=100,
            max_candidates=5,
            visible=None,
            render=([], g.edge_type_names, {}, Provenance(g, None).edge, np.zeros(0, np.int32)),
        )
