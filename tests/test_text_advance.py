"""The text index follows writes at the cost of the change (issue 11 item 3 for issue 12's index).

- ``TextIndex.with_changes`` (the core's merge) equals a fresh ``TextIndex.build`` of the new
  documents array for array -- postings, vocabulary and the derived bounds -- on random edits.
- The store's maintained index equals a fresh build after random sequences of inserts, deletes,
  title and body edits, several writes between reads, writes from a second connection, writes
  inside the store's own transaction, reopens from the snapshot file, and through the
  ``annotations=False`` graph; its search results equal a fresh build's under random masks.
- A reopened store advances the index saved in its snapshot file: the first write after a
  reopen tokenises the changed documents only (counted, not timed).
- The BM25 statistics' bounds (unmasked from the index's per-term distinct-tf pairs, masked from
  a pair per distinct visible tf) are the largest contribution of any visible posting, bit for
  bit.
- The core's merge refuses every inconsistent argument with an error (it never crashes).
"""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import tempfile
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, _core
from conceptwalk.errors import InputError
from conceptwalk.graph.text import TextIndex, text_search
from conceptwalk.kb.store import KnowledgeBase

WORDS = ["graph", "walks", "walk", "cut", "cuts", "merger", "plans", "éclair", "Rôle", "2", "x", "the", "of"]
IDS = ["a", "b", "c", "d", "e", "é", "m/1", "m/2", "ω", "zz"]
QUERIES = ["graph walks", "the merger of plans", "x", "cut éclair rôle 2", "nothing here"]

# a title or body: None, a few words, or one word repeated past the core's small-tf table (64)
text = st.one_of(
    st.none(),
    st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join),
    st.tuples(st.sampled_from(WORDS), st.integers(30, 80)).map(lambda p: " ".join([p[0]] * p[1])),
)


def assert_same_index(got: TextIndex, want: TextIndex) -> None:
    """Array for array, the vocabulary, and everything derived from the arrays."""
    a, b = got.to_arrays(), want.to_arrays()
    assert a.keys() == b.keys()
    for key in b:
        assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
    assert got.vocabulary == want.vocabulary
    assert np.array_equal(got.core.max_tf, want.core.max_tf)
    assert np.array_equal(got.core.min_len, want.core.min_len)
    assert got.core.total_len == want.core.total_len
    assert got.core.memory_bytes == want.core.memory_bytes
    sa, sb = got.core.stats(None), want.core.stats(None)
    assert np.array_equal(sa.df, sb.df) and np.array_equal(sa.max_contrib, sb.max_contrib)


# --------------------------------------------------------------------------- the core's merge
def merged_and_fresh(
    old_docs: dict[str, tuple[str | None, str | None]],
    new_docs: dict[str, tuple[str | None, str | None]],
    touched: set[str],
) -> tuple[TextIndex, TextIndex]:
    """The index of ``old_docs`` brought to ``new_docs`` by ``with_changes`` (the ``touched`` ids
    dropped from the old order and re-tokenised in the new one), and a fresh build of ``new_docs``."""
    old_ids, new_ids = sorted(old_docs), sorted(new_docs)
    old = TextIndex.build([old_docs[i][0] for i in old_ids], [old_docs[i][1] for i in old_ids])
    dropped = [p for p, x in enumerate(old_ids) if x in touched]
    changed = [p for p, x in enumerate(new_ids) if x in touched]
    got = old.with_changes(
        len(new_ids),
        dropped,
        changed,
        [new_docs[new_ids[p]][0] for p in changed],
        [new_docs[new_ids[p]][1] for p in changed],
    )
    return got, TextIndex.build([new_docs[i][0] for i in new_ids], [new_docs[i][1] for i in new_ids])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_with_changes_equals_a_fresh_build(data):
    old_docs = data.draw(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.tuples(text, text), max_size=14))
    new_docs = dict(old_docs)
    touched = set()
    for did in data.draw(st.lists(st.sampled_from(sorted(old_docs)), max_size=5, unique=True)) if old_docs else []:
        touched.add(did)
        if data.draw(st.booleans()):
            del new_docs[did]
        else:
            new_docs[did] = data.draw(st.tuples(text, text))
    added = data.draw(st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), st.tuples(text, text), max_size=5))
    new_docs.update(added)
    touched |= set(added)
    # a changed document may also be re-read with the same text (a type or scope change)
    touched |= set(data.draw(st.lists(st.sampled_from(sorted(new_docs)), max_size=2))) if new_docs else set()
    got, want = merged_and_fresh(old_docs, new_docs, touched)
    assert_same_index(got, want)
    # searching the merged index is searching a fresh build, under any visibility
    mask = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(new_docs), max_size=len(new_docs))), dtype=bool)
    for q in QUERIES:
        for vis in (None, mask):
            assert got.search(q, 4, visible=vis) == want.search(q, 4, visible=vis)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(40, 400), n_changes=st.sampled_from([0, 1, 2, 5, 40, 150]))
def test_with_changes_on_long_posting_lists(seed, n, n_changes):
    # Long lists (the core copies them run by run between changed documents) and many changes
    # (one lookup per posting): both equal a fresh build.
    rng = np.random.default_rng(seed)
    vocab = WORDS[:6]

    def doc() -> tuple[str | None, str | None]:
        t = " ".join(rng.choice(vocab, size=int(rng.integers(0, 4))))
        b = " ".join(rng.choice(vocab, size=int(rng.integers(0, 6))))
        return (t or None, b or None)

    old_docs = {f"d{i:05d}": doc() for i in rng.choice(10 * n, size=n, replace=False).tolist()}
    new_docs = dict(old_docs)
    touched: set[str] = set()
    for did in rng.choice(sorted(old_docs), size=min(n_changes, n), replace=False).tolist():
        touched.add(did)
        if rng.random() < 0.5:
            del new_docs[did]
        else:
            new_docs[did] = doc()
    for i in rng.integers(0, 10 * n, size=n_changes).tolist():
        did = f"d{i:05d}"
        touched.add(did)
        new_docs[did] = doc()
    got, want = merged_and_fresh(old_docs, new_docs, touched)
    assert_same_index(got, want)


def reference_max_contrib(ix: TextIndex, mask: np.ndarray, k1: float, b: float) -> list[float]:
    """Per term, its largest BM25 contribution over the visible postings, one posting at a time."""
    c = ix.core
    off, docs, tfs, dl = (np.asarray(c.offsets), np.asarray(c.docs), np.asarray(c.tfs), np.asarray(c.doc_len))
    n = int(mask.sum())
    total = int(dl[mask].sum())
    out = []
    for t in range(ix.num_terms):
        vis = [(int(tfs[i]), int(dl[docs[i]])) for i in range(off[t], off[t + 1]) if mask[docs[i]]]
        if not vis or total == 0:
            out.append(0.0)
            continue
        idf = math.log(1.0 + (n - len(vis) + 0.5) / (len(vis) + 0.5))
        avgdl = total / n
        out.append(max(idf * ((tf * (k1 + 1.0)) / (tf + k1 * (1.0 - b + b * (d / avgdl)))) for tf, d in vis))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(text, text), min_size=1, max_size=20), st.data())
def test_the_statistics_bounds_equal_the_largest_contribution_of_any_visible_posting(docs, data):
    # Both the unmasked bound (from the index's distinct-tf pairs) and the masked one (a pair per
    # distinct visible tf) must be the largest contribution of a visible posting, bit for bit:
    # a one-term top-1 score is exactly that contribution.
    ix = TextIndex.build([t for t, _ in docs], [b for _, b in docs])
    n = ix.num_docs
    k1, b = data.draw(st.sampled_from([(1.2, 0.75), (0.0, 0.0), (2.0, 1.0), (0.5, 0.3)]))
    bits = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    for mask in (np.ones(n, dtype=bool), np.asarray(bits, dtype=bool)):
        m8 = mask.view(np.uint8)
        stats = ix.core.stats(None if mask.all() and data.draw(st.booleans()) else m8, k1, b)
        got = np.asarray(stats.max_contrib)
        assert got.tolist() == pytest.approx(reference_max_contrib(ix, mask, k1, b), rel=1e-12, abs=0.0)
        for t in range(ix.num_terms):
            _, scores, _, _ = _core.bm25_topk(ix.core, np.array([t], np.int32), 1, m8, None, None, k1, b)
            assert got[t] == (scores[0] if scores.size else 0.0), t
    assert np.array_equal(
        ix.core.stats(None, k1, b).max_contrib, ix.core.stats(np.ones(n, dtype=np.uint8), k1, b).max_contrib
    )


def _sub(titles: list[str]) -> TextIndex:
    return TextIndex.build(titles)


def _core_args(old: TextIndex, sub: TextIndex) -> tuple[np.ndarray, np.ndarray]:
    import bisect

    at = [bisect.bisect_left(old.vocabulary, w) for w in sub.vocabulary]
    known = [p < len(old.vocabulary) and old.vocabulary[p] == w for p, w in zip(at, sub.vocabulary)]
    return np.asarray(at, dtype=np.int32), np.asarray(known, dtype=np.uint8)


def test_the_core_merge_refuses_inconsistent_arguments():
    old = TextIndex.build(["graph walks", "cuts", "merger"], [None, "min cut", "plans"])
    sub = _sub(["alpha graph"])  # terms: alpha (new, before "cut"), graph (known)
    at, known = _core_args(old, sub)
    c = old.core
    ok, _ = c.with_changes(4, np.zeros(0, np.int32), np.array([1], np.int32), sub.core, at, known)
    assert ok.num_docs == 4
    i32 = lambda *v: np.array(v, dtype=np.int32)  # noqa: E731
    bad = [
        ((-1, i32(), i32(1), sub.core, at, known), "num_docs"),
        ((4, i32(3), i32(1), sub.core, at, known), "dropped"),  # out of range
        ((4, i32(-1), i32(1), sub.core, at, known), "dropped"),
        ((3, i32(1, 1), i32(1), sub.core, at, known), "dropped"),  # not ascending
        ((4, i32(), i32(4), sub.core, at, known), "changed"),  # out of range
        ((4, i32(), i32(1, 2), sub.core, at, known), "changed"),  # not one per sub document
        ((5, i32(), i32(1), sub.core, at, known), "fit"),  # kept documents do not fit
        ((4, i32(), i32(1), sub.core, at[:1], known[:1]), "sub_term_at"),  # wrong length
        ((4, i32(), i32(1), sub.core, i32(0, 99), known), "sub_term_at"),  # out of range
        ((4, i32(), i32(1), sub.core, i32(0, 6), np.array([0, 1], np.uint8)), "sub_term_at"),  # known past the end
        ((4, i32(), i32(1), sub.core, i32(2, 1), known), "sorted"),  # not in vocabulary order
        ((4, i32(), i32(1), sub.core, i32(1, 1), np.array([1, 1], np.uint8)), "sorted"),  # one old term twice
        ((4, i32(), i32(1), sub.core, at, np.array([0, 2], np.uint8)), "0 or 1"),
        ((4, i32(), i32(1), TextIndex.build(["alpha graph"], title_weight=3).core, at, known), "title_weight"),
    ]
    for args, words in bad:
        with pytest.raises(ValueError, match=words):
            c.with_changes(*args)
    with pytest.raises(ValueError, match="sub_term_known"):  # a mask of the wrong length
        c.with_changes(4, i32(), i32(1), sub.core, at, np.array([0], np.uint8))
    with pytest.raises(ValueError, match="1-dimensional"):
        c.with_changes(4, np.zeros((1, 1), np.int32), i32(1), sub.core, at, known)
    with pytest.raises(TypeError):
        c.with_changes(4, i32(), i32(1), None, at, known)
    # a sub index holding a term without postings (only from_arrays can make one) is refused
    empty_term = _core.TextIndex.from_arrays(1, 2, np.array([0, 0, 1], np.int64), i32(0), i32(2), i32(2))
    with pytest.raises(ValueError, match="no postings"):
        c.with_changes(4, i32(), i32(1), empty_term, i32(0, 0), np.array([0, 0], np.uint8))


def test_with_changes_names_bad_python_arguments():
    old = TextIndex.build(["graph walks", "cuts"])
    for bad in (-1, 2**31, True, 2.0):
        with pytest.raises(InputError, match="num_docs"):
            old.with_changes(bad, [], [], [])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="dropped"):
        old.with_changes(2, [0.5], [0], ["x"])
    with pytest.raises(InputError, match="changed"):
        old.with_changes(2, [0], [2**40], ["x"])
    with pytest.raises(InputError, match="one entry per changed"):
        old.with_changes(2, [0], [0], ["x", "y"])
    with pytest.raises(InputError, match="strictly ascending"):
        old.with_changes(2, [1, 0], [0, 1], ["x", "y"])
    with pytest.raises(InputError, match="fit"):
        old.with_changes(4, [], [0], ["x"])
    # advanced() with kept documents out of their old order builds afresh (and still equals a build)
    got = old.advanced([1, 0], ["cuts", "graph walks"])
    assert_same_index(got, TextIndex.build(["cuts", "graph walks"]))


# --------------------------------------------------------------------------- the store
node_row = st.builds(
    lambda i, t, b, sc: {"id": i, "title": t, "body": b, "scopes": sc},
    st.sampled_from(IDS),
    text,
    text,
    st.sampled_from([None, ["s1"], ["s2"]]),
)
op = st.one_of(
    st.tuples(st.just("nodes"), st.lists(node_row, min_size=1, max_size=3)),
    st.tuples(st.just("title"), st.tuples(st.sampled_from(IDS), text)),
    st.tuples(st.just("body"), st.tuples(st.sampled_from(IDS), text)),  # a body-only write: CHANGE_TEXT
    st.tuples(st.just("scope"), st.tuples(st.sampled_from(IDS), st.sampled_from([None, ["s1"]]))),
    st.tuples(
        st.just("edges"), st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS)), min_size=1, max_size=3)
    ),
    st.tuples(st.just("del"), st.lists(st.sampled_from(IDS), min_size=1, max_size=2)),
    st.tuples(st.just("txn"), st.lists(node_row, min_size=1, max_size=2)),
)


def fresh_index(path: str) -> tuple[list[str], TextIndex] | None:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT id, title, body FROM nodes ORDER BY id").fetchall()
    finally:
        conn.close()
    if not rows:
        return None
    return [r[0] for r in rows], TextIndex.build([r[1] for r in rows], [r[2] for r in rows])


def apply(kb: KnowledgeBase, o: tuple[str, Any]) -> None:
    kind, arg = o
    if kind == "nodes":
        kb.add_nodes(arg)
    elif kind == "title":
        if kb.node(arg[0]) is not None:
            kb.add_nodes([{"id": arg[0], "title": arg[1]}])
    elif kind == "body":
        if kb.node(arg[0]) is not None:
            kb.add_nodes([{"id": arg[0], "body": arg[1]}])
    elif kind == "scope":
        if kb.node(arg[0]) is not None:
            kb.add_nodes([{"id": arg[0], "scopes": arg[1]}])
    elif kind == "edges":
        kb.add_edges([{"src": s, "dst": d} for s, d in arg])
    elif kind == "del":
        kb.delete_nodes(arg)
    else:  # inside the store's own transaction: the index of the uncommitted rows, never kept
        with kb.transaction():
            kb.add_nodes(arg)
            rows = kb.conn.execute("SELECT id, title, body FROM nodes ORDER BY id").fetchall()
            ix = kb.text_index()
            assert ix is not None
            assert_same_index(ix, TextIndex.build([r[1] for r in rows], [r[2] for r in rows]))


def check(kb: KnowledgeBase, path: str, mask_bits: list[bool]) -> None:
    ref = fresh_index(path)
    if ref is None:
        return
    ids, want = ref
    g = kb.graph()
    assert g.ids == ids
    ix = kb.text_index(g)
    assert ix is not None
    assert_same_index(ix, want)
    light = kb.graph(annotations=False)
    assert kb.text_index(light) is ix  # the same snapshot: the same index
    mask = np.resize(np.asarray(mask_bits or [True], dtype=bool), g.num_nodes)
    for q in QUERIES:
        for vis in (None, mask):
            assert text_search(ix, g, q, 5, visible=vis) == text_search(want, g, q, 5, visible=vis)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["kb", "other"]), op, st.sampled_from(["none", "kb", "other", "reopen"])),
        min_size=1,
        max_size=14,
    ),
    save_every=st.sampled_from([1, 1000]),
    mask_bits=st.lists(st.booleans(), min_size=1, max_size=12),
)
def test_the_maintained_text_index_equals_a_fresh_build(ops, save_every, mask_bits):
    d = tempfile.mkdtemp()
    path = os.path.join(d, "kb.sqlite")
    kb = KnowledgeBase.create(path)
    other = KnowledgeBase.open(path)  # stands for a second process
    try:
        for s in (kb, other):
            s.SNAPSHOT_SAVE_EVERY = save_every  # 1: the file (with its text index) follows every read
        kb.add_nodes([{"id": "a", "title": "graph walks", "body": "the merger"}, {"id": "b", "title": "cuts"}])
        check(kb, path, mask_bits)
        for who, o, read in ops:
            apply(kb if who == "kb" else other, o)
            if read == "reopen":  # a fresh process: maps the snapshot file, then follows the log
                kb.close()
                kb = KnowledgeBase.open(path)
                kb.SNAPSHOT_SAVE_EVERY = save_every
                check(kb, path, mask_bits)
            elif read != "none":
                check(kb if read == "kb" else other, path, mask_bits)
        check(kb, path, mask_bits)
        check(other, path, mask_bits)
    finally:
        kb.close()
        other.close()
        shutil.rmtree(d)


# --------------------------------------------------------------------------- what a write costs
class Tokenised:
    """Counts the documents TextIndex.build tokenises (one entry per call)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        real = TextIndex.build.__func__  # type: ignore[attr-defined]

        def counting(cls: type, titles: Any, *a: Any, **kw: Any) -> TextIndex:
            self.calls.append(len(titles))
            return real(cls, titles, *a, **kw)

        monkeypatch.setattr(TextIndex, "build", classmethod(counting))


def _fill(kb: KnowledgeBase, n: int = 300) -> None:
    kb.add_nodes(
        [
            {
                "id": f"n{i:04d}",
                "title": f"merger plans {i % 17}",
                "body": "graph walks" if i % 2 else None,
                "scopes": ["t"] if i % 3 == 0 else None,
            }
            for i in range(n)
        ]
    )
    kb.add_edges([(f"n{i:04d}", f"n{(i * 7) % n:04d}") for i in range(n)])


def _same_as_fresh(kb: KnowledgeBase, path: str) -> None:
    ref = fresh_index(path)
    assert ref is not None
    ix = kb.text_index()
    assert ix is not None
    assert_same_index(ix, ref[1])


def test_a_reopened_store_advances_the_saved_index_on_its_first_write(tmp_path, monkeypatch):
    path = str(tmp_path / "kb.db")
    with KnowledgeBase.create(path) as kb:
        _fill(kb)
        kb.search("merger walks")  # builds the index; the snapshot file now holds it
    count = Tokenised(monkeypatch)
    with KnowledgeBase.open(path) as kb:  # a fresh process: maps the file
        # one node and two edges, then a search: only the new node is tokenised
        kb.add_nodes([{"id": "n0150x", "title": "merger walks", "body": "new"}])
        kb.add_edges([("n0150x", "n0001"), ("n0150x", "n0002")])
        hits = kb.search("merger walks", 3)
        assert count.calls == [1]
        assert hits[0][0] == "n0150x"
        _same_as_fresh(kb, path)
        # several writes between two reads, one of them from another connection: their documents only
        with KnowledgeBase.open(path) as other:
            kb.add_nodes([{"id": "n0007", "title": "retitled"}])
            other.add_nodes([{"id": "n0008", "body": "a new body"}])  # body only: CHANGE_TEXT
            kb.delete_nodes(["n0009"])
            other.add_edges([("n0010", "brand-new")])  # creates a bare node
            count.calls.clear()
            kb.search("retitled")
            assert count.calls == [3]  # n0007, n0008, brand-new (n0009 is only dropped)
            _same_as_fresh(kb, path)
        # a write the text cannot see (edges between existing nodes) keeps the index itself
        ix = kb.text_index()
        kb.add_edges([("n0011", "n0012")])
        count.calls.clear()
        assert kb.text_index() is ix and count.calls == []


def test_a_reset_or_a_long_log_rebuilds_in_full(tmp_path, monkeypatch):
    path = str(tmp_path / "kb.db")
    with KnowledgeBase.create(path) as kb:
        _fill(kb, 50)
        kb.search("merger")
        count = Tokenised(monkeypatch)
        with kb.transaction():  # more changes than the limit (1000 here): a build is cheaper
            kb.add_nodes([{"id": f"m{i:04d}", "title": "bulk"} for i in range(1100)])
        kb.search("merger")
        assert count.calls == [1150]
        _same_as_fresh(kb, path)
        count.calls.clear()
        kb.add_nodes([{"id": "m9999", "title": "one more"}])
        kb.text_index()  # the snapshot path (search reads the live graph's text segment instead)
        assert count.calls == [1]
    fresh_path = str(tmp_path / "bulk.db")
    with KnowledgeBase.create(fresh_path) as kb:
        with kb.bulk():  # a bulk load logs one reset
            kb.add_nodes([{"id": f"b{i}", "title": "bulk loaded"} for i in range(20)])
        count.calls.clear()
        kb.search("bulk")
        assert count.calls == [20]
        _same_as_fresh(kb, fresh_path)


def test_an_in_memory_store_follows_writes_too(monkeypatch):
    with KnowledgeBase.open(":memory:") as kb:
        _fill(kb, 40)
        kb.search("merger")
        count = Tokenised(monkeypatch)
        kb.add_nodes([{"id": "n0000", "title": "changed title"}, {"id": "n9999", "title": "new"}])
        kb.delete_nodes(["n0003"])
        got = kb.search("changed", 2, caller=Caller.all_access())
        assert count.calls == [2] and got[0][0] == "n0000"
        rows = kb.conn.execute("SELECT title, body FROM nodes ORDER BY id").fetchall()
        ix = kb.text_index()
        assert ix is not None
        assert_same_index(ix, TextIndex.build([r[0] for r in rows], [r[1] for r in rows]))
