"""LinkGraph construction details owned by the Python layer: duplicate edges, encoded columns."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from conceptwalk import InputError, LinkGraph


DUPS = [
    {"src": "a", "dst": "b", "type": "R"},
    {"src": "a", "dst": "b", "type": "R", "authority": "x", "fidelity": "f"},
    {"src": "a", "dst": "b", "type": "R", "authority": "a"},
    {"src": "a", "dst": "b", "type": "R", "authority": "z", "extraction_confidence": 0.5},
]


def test_duplicate_edges_keep_the_most_annotated_in_any_order() -> None:
    seen = set()
    for perm in itertools.permutations(DUPS):
        g = LinkGraph.from_edges(list(perm))
        assert g.num_edges == 1 and g.duplicate_edges == 3
        seen.add(tuple(g.edge_annotation(0, k) for k in ("authority", "fidelity", "extraction_confidence")))
    # two rows carry two annotations each; of those, the smaller values in sorted column order win
    assert seen == {("x", "f", None)}


def test_encoded_columns_equal_plain_ones() -> None:
    ids = ["n3", "n1", "n2", "n0"]
    src, dst = np.array([0, 1, 2, 3]), np.array([1, 2, 3, 0])
    plain = LinkGraph.from_arrays(
        ids,
        src,
        dst,
        ["B", "A", "B", "C"],
        node_types=["X", None, "Y", "X"],
        edge_annotations={"authority": ["p", None, "q", "p"], "extraction_confidence": [0.5, None, 1.0, 0.25]},
    )
    enc = LinkGraph.from_arrays(
        ids,
        src,
        dst,
        ["B", "A", "B", "C"],
        node_types=(np.array([1, -1, 0, 1]), ["Y", "X"]),
        edge_annotations={
            "authority": (np.array([1, -1, 0, 1]), ["q", "p"]),
            "extraction_confidence": np.array([0.5, np.nan, 1.0, 0.25]),
        },
    )
    for k in ("authority", "extraction_confidence"):
        a, b = plain.edge_annotations[k], enc.edge_annotations[k]
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]
    np.testing.assert_array_equal(plain.node_type_codes, enc.node_type_codes)
    assert plain.node_type_names == enc.node_type_names == ("NODE", "X", "Y")
    with pytest.raises(InputError, match="encoded codes"):
        LinkGraph.from_arrays(ids, src, dst, node_types=(np.array([0, 5, 0, 0]), ["X"]))
    with pytest.raises(InputError, match="unique"):
        LinkGraph.from_arrays(ids, src, dst, node_types=(np.array([0, 1, 0, 0]), ["X", "X"]))
    with pytest.raises(InputError, match="extraction_confidence must be in"):
        LinkGraph.from_arrays(ids, src, dst, edge_annotations={"extraction_confidence": np.array([2.0, 0, 0, 0])})


def test_scopes_are_permuted_with_their_nodes() -> None:
    ids = ["d", "c", "b", "a"]
    scopes = [["s1"], None, ["s2", "s1", "s2"], ["s3"]]
    g = LinkGraph.from_arrays(ids, np.array([0, 1]), np.array([1, 2]), scopes=scopes)
    assert [g.node_scopes(x) for x in "abcd"] == [("s3",), ("s1", "s2"), (), ("s1",)]
    assert g.scope_mask(["s2"]).tolist() == [False, True, True, False]
    with pytest.raises(InputError, match="scopes"):
        LinkGraph.from_arrays(ids, np.array([0]), np.array([1]), scopes=["s1", None, None, None])


def test_hops_rejects_negative_max_hops() -> None:
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    assert g.hops(["a"], ["c"]) == {"c": (2, "a")}
    assert g.hops(["a"], ["c"], max_hops=1) == {"c": None}
    with pytest.raises(InputError, match="max_hops"):
        g.hops(["a"], ["c"], max_hops=-3)


def test_mask_cache_is_a_bounded_lru(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [{"id": f"n{i}", "scopes": [f"s{i % 5}"]} for i in range(20)]
    g = LinkGraph.from_edges([(f"n{i}", f"n{i + 1}") for i in range(19)], nodes=nodes)
    monkeypatch.setattr(LinkGraph, "MASK_CACHE_ENTRIES", 3)
    masks = [g.visibility_for_scopes([f"s{i}"]) for i in range(5)]
    assert len(g._views) == 3
    assert g.visibility_for_scopes(["s4"]) is masks[4]  # recent ones are kept
    assert g.visibility_for_scopes(["s0"]) is not masks[0]  # the oldest was dropped, rebuilt equal
    assert np.array_equal(g.visibility_for_scopes(["s0"]).mask, masks[0].mask)
    monkeypatch.setattr(LinkGraph, "MASK_CACHE_BYTES", 1)
    g.visibility_for_scopes(["s1"])
    assert len(g._views) == 1
