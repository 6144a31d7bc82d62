"""``IdIndex`` (a graph's id -> node index) against a plain dict, through chains of advances
(inserts, deletes, re-inserts), with every earlier index left as it was."""

from __future__ import annotations

import bisect
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conceptwalk.graph.linkgraph import IdIndex

IDS = [f"n{i:02d}" for i in range(30)]


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.sampled_from(IDS), min_size=1),
    st.lists(
        st.tuples(st.sets(st.sampled_from(IDS), max_size=4), st.sets(st.sampled_from(IDS), max_size=4)), max_size=8
    ),
)
def test_advanced_equals_a_dict_of_the_new_ids(start, steps):
    ids = sorted(start)
    ix = IdIndex(ids)
    history = [(ix, {x: i for i, x in enumerate(ids)})]
    for add, remove in steps:
        new_ids = sorted((set(ids) - remove) | add)
        if not new_ids:
            continue
        remap = np.array([bisect.bisect_left(new_ids, x) if x in set(new_ids) else -1 for x in ids], dtype=np.int32)
        inserted = [(x, new_ids.index(x)) for x in new_ids if x not in set(ids)]
        ix = ix.advanced(remap, new_ids, inserted)
        ids = new_ids
        history.append((ix, {x: i for i, x in enumerate(ids)}))
        for old, ref in history:  # every index, the earlier ones included, still as it was
            assert old == ref and len(old) == len(ref) and dict(old.items()) == ref
            assert all(old[x] == i and old.get(x) == i and x in old for x, i in ref.items())
            assert all(old.get(x) is None and x not in old for x in IDS if x not in ref)
    assert pickle.loads(pickle.dumps(ix)) == history[-1][1]


def test_lookups_of_other_values_find_nothing():
    ix = IdIndex(["a", "b"])
    assert ix.get(["a"]) is None and 0 not in ix and ix.get(None, -1) == -1 and sorted(ix) == ["a", "b"]
    assert ix != {"a": 0} and ix == {"a": 0, "b": 1} and repr(ix) == "IdIndex(2 ids)"


def test_the_shared_key_table_is_compacted_when_mostly_stale():
    ids = ["root"]
    ix = IdIndex(ids)
    for i in range(1500):  # each step deletes the previous id and inserts a new one
        new_ids = sorted({"root", f"m{i:04d}"})
        remap = np.array([new_ids.index(x) if x in new_ids else -1 for x in ids], dtype=np.int32)
        ix = ix.advanced(remap, new_ids, [(x, new_ids.index(x)) for x in new_ids if x not in ids])
        ids = new_ids
    assert ix == {x: i for i, x in enumerate(ids)} and len(ix.keys()) == 2


def test_lookups_before_and_after_the_dict_is_built():
    """The first 256 lookups binary-search the sorted ids, later ones use the dict: the same
    answers for hits and misses (before the first id, between ids, after the last)."""
    ids = [f"k{i:03d}" for i in range(0, 400, 2)]
    ix = IdIndex(ids)
    ref = {x: i for i, x in enumerate(ids)}
    probes = [f"k{i:03d}" for i in range(-1, 402)] + ["", "a", "z", "k00", "k0000"]
    for round_ in range(2):  # 406 probes per round: the switch happens inside the first one
        for x in probes:
            assert ix.get(x) == ref.get(x) and (x in ix) == (x in ref), (round_, x)
    with pytest.raises(ValueError, match="strictly ascending"):
        IdIndex(["b", "a"])
