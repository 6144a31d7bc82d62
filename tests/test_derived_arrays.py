"""Arrays derived from the graph at one change-log position, kept with the snapshot (issue 18
item 3): the built-in concept vectors and the edge annotation counts. A fresh process reads them
instead of deriving them again; they are used only at the position they were derived at, and
give exactly what deriving them again gives."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conceptwalk import Caller, InputError
from conceptwalk.kb.snapshot import read_arrays
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search
from conceptwalk.wrap.embed import HashingEmbedder

WHO = Caller.with_scopes("t1")


def _fill(kb: KnowledgeBase) -> None:
    kb.add_nodes(
        [{"id": f"c{i}", "type": "CONCEPT", "title": f"concept {i} token rotation"} for i in range(25)]
        + [{"id": f"d{i}", "type": "DOC", "title": f"doc {i}", "scopes": ["t1"] if i % 2 else []} for i in range(25)]
    )
    kb.add_edges([{"src": f"c{i}", "dst": f"d{i}", "type": "IMPLEMENTED_BY", "authority": "a"} for i in range(25)])
    kb.add_edges([{"src": f"c{i}", "dst": f"c{(i + 1) % 25}", "type": "RELATED_TO"} for i in range(25)])


def _answers(kb: KnowledgeBase) -> list:
    ret = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=WHO), kb)
    return [ret.query(q, 5, concept_walk=True, caller=WHO) for q in ("concept 3 token", "rotation 7", "doc 9")]


def test_vectors_and_counts_are_kept_with_the_snapshot_and_read_by_a_fresh_process(tmp_path, monkeypatch):
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb)
        want = _answers(kb)
        presence = kb.annotation_presence()
        gv = kb.state().graph_version
    meta, arrays = read_arrays(str(path) + ".snapshot")
    assert meta["graph_version"] == gv
    kept = sorted({k.rsplit(".", 1)[0] for k in arrays if k.startswith("derived.")})
    # the edge counts are the store's tallies (schema 4), not derived arrays any more
    assert len(kept) == 1 and kept[0].startswith("derived.wrap.vectors.hashing")
    # a fresh read-only open: nothing is hashed or counted again, and the answers are the same
    with KnowledgeBase.open(path, read_only=True) as ro:

        def refuse(*a, **k):
            raise AssertionError("the concept vectors were hashed again")

        monkeypatch.setattr(HashingEmbedder, "embed_csr", refuse)
        assert _answers(ro) == want
        assert ro.annotation_presence() == presence
    # and in another process, as a real reader starts
    code = textwrap.dedent(
        f"""
        import json
        from conceptwalk import Caller
        from conceptwalk.kb.store import KnowledgeBase
        from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search
        from conceptwalk.wrap.embed import HashingEmbedder
        HashingEmbedder.embed_csr = None  # calling it would fail
        kb = KnowledgeBase.open({str(path)!r}, read_only=True)
        who = Caller.with_scopes("t1")
        ret = ConceptAnchoredRetriever(builtin_flat_search(kb, caller=who), kb)
        print(json.dumps(ret.query("concept 3 token", 5, concept_walk=True, caller=who)))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    import json

    assert json.loads(out.stdout) == json.loads(json.dumps(want[0]))


def test_kept_arrays_belong_to_their_position_only(tmp_path):
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb)
        _answers(kb)
        gv = kb.state().graph_version
        (name,) = [n for n in kb._keeper.derived_names if n.startswith("wrap.vectors.hashing")]
        assert kb.derived_arrays(name, gv) is not None
        kb.add_nodes([{"id": "c99", "type": "CONCEPT", "title": "concept 99 token"}])
        kb.add_edges([{"src": "c99", "dst": "d1", "type": "IMPLEMENTED_BY", "authority": "b"}])
        gv2 = kb.state().graph_version
        assert gv2 > gv and kb.derived_arrays(name, gv2) is None
        after = _answers(kb)
        assert kb.derived_arrays(name, gv) is None  # one position at a time
        assert kb.derived_arrays(name, gv2) is not None
        presence = kb.annotation_presence()
    # the same answers as a store built fresh with the same rows, which never had kept arrays
    with KnowledgeBase.create(tmp_path / "fresh.db") as fresh:
        _fill(fresh)
        fresh.add_nodes([{"id": "c99", "type": "CONCEPT", "title": "concept 99 token"}])
        fresh.add_edges([{"src": "c99", "dst": "d1", "type": "IMPLEMENTED_BY", "authority": "b"}])
        assert _answers(fresh) == after
        assert fresh.annotation_presence() == presence == {**presence, "authority": 26}


def test_keep_derived_arrays_checks_its_input_and_a_read_only_open_keeps_nothing(tmp_path):
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb)
        gv = kb.state().graph_version
        for bad in ("", "a..b", "has space", "x/y"):
            with pytest.raises(InputError, match="name"):
                kb.keep_derived_arrays(bad, gv, {"v": np.zeros(2)})
        with pytest.raises(InputError, match="part"):
            kb.keep_derived_arrays("t.x", gv, {"a.b": np.zeros(2)})
        with pytest.raises(InputError, match="numeric"):
            kb.keep_derived_arrays("t.x", gv, {"v": np.array(["s"])})
        kb.keep_derived_arrays("t.x", gv, {"v": np.arange(4)})
        got = kb.derived_arrays("t.x", gv)
        assert got["v"].tolist() == [0, 1, 2, 3] and not got["v"].flags.writeable
    with KnowledgeBase.open(path, read_only=True) as ro:
        assert ro.state().graph_version == gv  # the state read: the snapshot file loaded with it
        assert ro.derived_arrays("t.x", gv)["v"].tolist() == [0, 1, 2, 3]  # from the file
        ro.keep_derived_arrays("t.y", gv, {"v": np.arange(2)})
        assert ro.derived_arrays("t.y", gv) is None


def test_arrays_kept_again_under_a_name_the_file_holds_are_saved_again(tmp_path):
    """Keeping new arrays under a name the snapshot file already holds (for the same position)
    rewrites the file: the next process reads the new ones, not the file's old ones."""
    path = tmp_path / "kb.db"
    with KnowledgeBase.create(path) as kb:
        _fill(kb)
        gv = kb.state().graph_version
        kb.keep_derived_arrays("t.x", gv, {"v": np.arange(3)})
    with KnowledgeBase.open(path) as kb:
        assert kb.state().graph_version == gv
        assert kb.derived_arrays("t.x", gv)["v"].tolist() == [0, 1, 2]  # read from the file
        kb.keep_derived_arrays("t.x", gv, {"v": np.arange(5)})
    with KnowledgeBase.open(path, read_only=True) as ro:
        ro.state()
        assert ro.derived_arrays("t.x", gv)["v"].tolist() == [0, 1, 2, 3, 4]


def test_keeping_arrays_leaves_the_callers_arrays_writable():
    kb = KnowledgeBase.open(":memory:")
    _fill(kb)
    gv = kb.state().graph_version
    mine = np.arange(4)
    kb.keep_derived_arrays("t.mine", gv, {"v": mine})
    mine[0] = 99  # still the caller's, writable; what was kept is a copy
    assert kb.derived_arrays("t.mine", gv)["v"].tolist() == [0, 1, 2, 3]
