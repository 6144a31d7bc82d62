"""Text and vector search over what a caller sees (issue 12).

- BM25 of the core index against an independent reference (a few lines of Python over the same
  tokens), on random corpora, masks, node-type filters and k (so MaxScore pruning is exercised).
- The deletion oracle: every text-seeded output (KnowledgeBase.search, the flat search in both
  modes, graph_context(question), the wrapped query, the MCP query tool) serialises identically
  to the output on the store with the caller's hidden nodes deleted.
- The starvation case, the leak of the issue, persistence round trips and bad input.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller, graph_context, graph_context_batch
from conceptwalk.errors import InputError
from conceptwalk.graph import LinkGraph
from conceptwalk.graph.text import TITLE_WEIGHT, TextIndex, tokenize
from conceptwalk.graph.vectors import vector_topk
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.serve.mcp import ToolServer
from conceptwalk.wrap import ConceptAnchoredRetriever, builtin_flat_search
from deletion_oracle import deleted_store, open_store

# A skewed vocabulary: a few very common words and many rare ones (stemming leaves them alone).
WORDS = [
    "the",
    "of",
    "and",
    "graph",
    "walk",
    "vector",
    "index",
    "merger",
    "plan",
    "delete",
    "compaction",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "zeta",
    "kappa",
    "sigma",
]
COMMON = WORDS[:3]


def reference_bm25(titles, bodies, visible, query, k1=1.2, b=0.75):
    """BM25 over the visible documents, straight from the definition."""
    docs = {}
    for d, (t, bo) in enumerate(zip(titles, bodies)):
        if visible[d]:
            tf = Counter()
            for w in tokenize(t or ""):
                tf[w] += TITLE_WEIGHT
            for w in tokenize(bo or ""):
                tf[w] += 1
            docs[d] = tf
    n = len(docs)
    if n == 0:
        return {}
    lengths = {d: sum(tf.values()) for d, tf in docs.items()}
    avgdl = sum(lengths.values()) / n
    terms = sorted(set(tokenize(query)))
    scores = {}
    for d, tf in docs.items():
        s, hit = 0.0, False
        for t in terms:
            if t in tf:
                df = sum(1 for x in docs.values() if t in x)
                idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                norm = k1 * (1.0 - b + b * (lengths[d] / avgdl))
                s += idf * ((tf[t] * (k1 + 1.0)) / (tf[t] + norm))
                hit = True
        if hit:
            scores[d] = s
    return scores


text_st = st.lists(st.sampled_from(WORDS + COMMON * 4), min_size=0, max_size=12).map(" ".join)


@st.composite
def corpora(draw):
    n = draw(st.integers(1, 40))
    titles = [draw(st.one_of(st.none(), text_st)) for _ in range(n)]
    bodies = [draw(st.one_of(st.none(), text_st)) for _ in range(n)]
    visible = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    query = draw(st.lists(st.sampled_from(WORDS + ["absent"]), min_size=1, max_size=9).map(" ".join))
    k = draw(st.integers(1, 12))
    return titles, bodies, visible, query, k


@settings(max_examples=300, deadline=None)
@given(corpora())
def test_bm25_equals_the_reference_and_the_deleted_index(case):
    titles, bodies, visible, query, k = case
    ix = TextIndex.build(titles, bodies)
    ref = reference_bm25(titles, bodies, visible, query)
    expected = sorted(ref.items(), key=lambda x: (-x[1], x[0]))[:k]
    docs, scores = ix.search(query, k, visible=visible)
    assert list(zip(docs, scores)) == expected  # exactly: same operations, same order
    # The deletion oracle: an index built without the hidden documents, ids remapped.
    keep = np.flatnonzero(visible).tolist()
    if keep:
        small = TextIndex.build([titles[i] for i in keep], [bodies[i] for i in keep])
        d2, s2 = small.search(query, k)
        assert [keep[d] for d in d2] == docs and s2 == scores
    # unmasked = the reference over everything
    allv = np.ones(len(titles), dtype=bool)
    ref_all = sorted(reference_bm25(titles, bodies, allv, query).items(), key=lambda x: (-x[1], x[0]))[:k]
    assert list(zip(*ix.search(query, k))) == ref_all


@settings(max_examples=100, deadline=None)
@given(corpora(), st.data())
def test_eligible_filters_results_but_not_statistics(case, data):
    titles, bodies, visible, query, k = case
    eligible = np.array(data.draw(st.lists(st.booleans(), min_size=len(titles), max_size=len(titles))), dtype=bool)
    ix = TextIndex.build(titles, bodies)
    ref = reference_bm25(titles, bodies, visible, query)
    expected = sorted(((d, s) for d, s in ref.items() if eligible[d]), key=lambda x: (-x[1], x[0]))[:k]
    assert list(zip(*ix.search(query, k, visible=visible, eligible=eligible))) == expected


@settings(max_examples=60, deadline=None)
@given(corpora(), st.data())
def test_eligible_through_a_callers_view_equals_the_reference_and_keeps_nothing_in_the_view(case, data):
    # With a caller's view and an eligibility mask the core reads both masks (no O(documents) AND
    # per query, nothing kept in the view): the hits are the reference's, query after query, and
    # follow a change of the caller's own eligibility array.
    titles, bodies, visible, query, k = case
    n = len(titles)
    eligible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    nodes = [{"id": f"n{i:03d}", "scopes": [] if visible[i] else ["hidden"]} for i in range(n)]
    g = LinkGraph.from_edges([], nodes=nodes)
    view = g.view(Caller.public())
    ix = TextIndex.build(titles, bodies)
    ref = reference_bm25(titles, bodies, visible, query)
    expected = sorted(((d, s) for d, s in ref.items() if eligible[d]), key=lambda x: (-x[1], x[0]))[:k]
    for _ in range(2):
        docs, scores = ix.search_indices(query, k, visible=view, eligible=eligible)
        assert list(zip(docs.tolist(), scores.tolist())) == expected
    assert not view._memo  # nothing per query or per eligibility array is kept
    eligible[:] = ~eligible  # the caller's array changed in place: read again
    expected = sorted(((d, s) for d, s in ref.items() if eligible[d]), key=lambda x: (-x[1], x[0]))[:k]
    docs, scores = ix.search_indices(query, k, visible=view, eligible=eligible)
    assert list(zip(docs.tolist(), scores.tolist())) == expected


def test_pruning_on_a_large_corpus_with_common_words():
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(300)]
    p = 1.0 / np.arange(1, 301) ** 1.1
    p /= p.sum()
    n = 3000
    titles = [" ".join(rng.choice(vocab, 4, p=p)) for _ in range(n)]
    bodies = [" ".join(rng.choice(vocab, int(rng.integers(0, 40)), p=p)) for _ in range(n)]
    visible = rng.random(n) < 0.6
    ix = TextIndex.build(titles, bodies)
    g = LinkGraph.from_edges([], nodes=[f"n{i:05d}" for i in range(n)])
    vm = g.visibility(visible)
    for q in ["w0 w1 w2 w3 w150", "w0 w1 w299", "w5 w6 w7 w8 w9 w10 w11 w12", "w0"]:
        ref = sorted(reference_bm25(titles, bodies, visible, q).items(), key=lambda x: (-x[1], x[0]))
        for k in (1, 10, 100):
            assert list(zip(*ix.search(q, k, visible=visible))) == ref[:k]
            assert list(zip(*ix.search(q, k, visible=vm))) == ref[:k]  # cached statistics
        docs, scores, scored, read = __import__("conceptwalk")._core.bm25_topk(
            ix.core, ix.query_terms(q), 10, np.ascontiguousarray(visible).view(np.uint8)
        )
        if q.startswith("w0 w1 w2"):  # MaxScore skipped most documents of the common words
            assert scored < len(ref) / 2


def test_tokenizer_folds_case_diacritics_and_stems():
    assert tokenize("Décision DÉCISIONS decisions") == ["decis"] * 3
    assert tokenize("ÅNGSTRÖM ﬁle straße") == tokenize("angstrom file STRASSE")
    assert tokenize('-:*"()  __ !!!') == []
    assert tokenize("walking Walks walked") == ["walk"] * 3
    with pytest.raises(InputError, match="text must be a string"):
        tokenize(None)  # type: ignore[arg-type]


def test_round_trip_through_arrays_and_damaged_arrays():
    ix = TextIndex.build(["Graph walks", "Déjà vu", None], ["random walk", None, "graph graph"])
    arrs = ix.to_arrays()
    back = TextIndex.from_arrays({k: np.array(v) for k, v in arrs.items()})
    assert back.vocabulary == ix.vocabulary
    for q in ["graph", "walk deja", "vu graph walk"]:
        assert back.search(q, 5) == ix.search(q, 5)
    for name, bad in [
        ("text_docs", np.array([0, 9, 1, 0, 2, 0, 1], dtype=np.int32)),
        ("text_tfs", np.zeros_like(arrs["text_tfs"])),
        ("text_doc_len", arrs["text_doc_len"] + 1),
        ("text_offsets", arrs["text_offsets"][::-1].copy()),
        ("text_meta", np.array([1, 99, 2, 3], dtype=np.int64)),
        ("text_vocab_bytes", np.frombuffer(b"\xff" * arrs["text_vocab_bytes"].size, dtype=np.uint8)),
        ("text_docs", arrs["text_docs"].astype(np.int64)),
    ]:
        with pytest.raises(InputError, match="text index arrays"):
            TextIndex.from_arrays({**arrs, name: bad})
    with pytest.raises(InputError, match="missing"):
        TextIndex.from_arrays({k: v for k, v in arrs.items() if k != "text_tfs"})


def test_core_refuses_bad_input_without_crashing():
    from conceptwalk import _core

    ix = TextIndex.build(["a b"], ["c"])
    with pytest.raises(ValueError, match="terms"):
        _core.bm25_topk(ix.core, np.array([5], dtype=np.int32), 3)
    with pytest.raises(ValueError, match="k must be"):
        _core.bm25_topk(ix.core, np.array([0], dtype=np.int32), 0)
    with pytest.raises(ValueError, match="visible"):
        _core.bm25_topk(ix.core, np.array([0], dtype=np.int32), 1, np.zeros(3, dtype=np.uint8))
    other = TextIndex.build(["a b"], ["c"])
    with pytest.raises(ValueError, match="different TextIndex"):
        _core.bm25_topk(ix.core, np.array([0], dtype=np.int32), 1, None, None, other.core.stats())
    with pytest.raises(ValueError, match="title_tokens"):
        _core.TextIndex.build(
            1, 2, np.array([0, 1]), np.array([7], dtype=np.int32), np.array([0, 0]), np.zeros(0, dtype=np.int32)
        )
    with pytest.raises(ValueError, match="title_ptr"):
        _core.TextIndex.build(
            1, 2, np.array([0, 5]), np.array([1], dtype=np.int32), np.array([0, 0]), np.zeros(0, dtype=np.int32)
        )
    with pytest.raises(InputError, match="k must be"):
        ix.search("a", 0)
    with pytest.raises(InputError, match="visible"):
        ix.search("a", 1, visible=np.ones(4, dtype=bool))


# ---------------------------------------------------------------------- vectors
@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.integers(1, 17), st.integers(1, 8), st.data())
def test_vector_topk_is_exact_and_independent_of_other_rows(n, dim, k, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mat = rng.standard_normal((n, dim)).astype(np.float32)
    mat[rng.integers(0, n)] = mat[0]  # exact ties
    q = rng.standard_normal(dim).astype(np.float32)
    visible = rng.random(n) < 0.7
    rows, scores = vector_topk(mat, q, k, visible=visible)
    exact = mat.astype(np.float64) @ q.astype(np.float64)
    order = sorted(np.flatnonzero(visible).tolist(), key=lambda r: (-exact[r], r))[:k]
    assert rows == order or np.allclose([exact[r] for r in rows], [exact[r] for r in order], rtol=1e-12)
    assert np.allclose(scores, [exact[r] for r in rows], rtol=1e-12, atol=1e-12)
    keep = np.flatnonzero(visible)
    if keep.size:  # the deleted store: only the visible rows exist
        r2, s2 = vector_topk(mat[keep], q, k)
        assert [int(keep[r]) for r in r2] == rows and s2 == scores
    r3, s3 = vector_topk(mat, q, k, visible=visible, min_score=0.0)
    assert all(s >= 0 for s in s3) and r3 == [r for r, s in zip(*vector_topk(mat, q, n, visible=visible)) if s >= 0][:k]


def test_vector_topk_threads_give_identical_bits():
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((20000, 64)).astype(np.float32)
    q = rng.standard_normal(64).astype(np.float32)
    ref = vector_topk(mat, q, 50)
    out: list[Any] = []

    def run() -> None:
        out.append(vector_topk(mat, q, 50))

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(o == ref for o in out)
    with pytest.raises(InputError, match="query"):
        vector_topk(mat, q[:3], 5)
    with pytest.raises(InputError, match="finite"):
        vector_topk(mat, np.full(64, np.nan, dtype=np.float32), 5)
    with pytest.raises(InputError, match="visible"):
        vector_topk(mat, q, 5, visible=np.ones(3, dtype=bool))


# ---------------------------------------------------------------------- the store
def test_search_does_not_leak_hidden_documents_through_the_scores():
    """The issue's measurement: a public document's score must not move as hidden documents
    holding the query's words are added."""
    scores = []
    for hidden in (0, 1, 3, 8):
        kb = KnowledgeBase.open(":memory:")
        kb.add_nodes(
            [{"id": "pub", "title": "merger plans"}, {"id": "other", "title": "quarterly report"}]
            + [{"id": f"h{i}", "title": "merger", "scopes": ["board"]} for i in range(hidden)]
        )
        scores.append(kb.search("merger plans", 5, caller=Caller.public()))
        out = ToolServer(kb, caller=Caller.public()).call("query", {"text": "merger plans", "k": 5})
        assert [r["id"] for r in out.structured["results"]] == ["pub"]
        assert out.structured["results"][0]["score"] == scores[-1][0][1]
    assert all(s == scores[0] for s in scores) and [i for i, _ in scores[0]] == ["pub"]


def test_starvation_700_hidden_matches_ahead_of_one_visible():
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes(
        [{"id": f"h{i:03d}", "title": "merger merger", "body": "merger", "scopes": ["board"]} for i in range(700)]
        + [{"id": "z-public", "title": "other words", "body": "a merger"}]
    )
    kb.add_edges([("z-public", "neighbour")])
    ctx = graph_context(kb, "merger", caller=Caller.public(), k=5)
    assert [s.id for s in ctx.seeds] == ["z-public"] and [r.id for r in ctx.results] == ["neighbour"]
    # a search= backend of the caller's own that returns the hidden hits first: paged until found
    ranked = [f"h{i:03d}" for i in range(700)] + ["z-public"]
    calls = []

    def backend(text: str, k: int) -> list[str]:
        calls.append(k)
        return ranked[:k]

    ctx2 = graph_context(kb, "merger", caller=Caller.public(), k=5, search=backend)
    assert [s.id for s in ctx2.seeds] == ["z-public"] and calls == [10, 40, 160, 640, 2560]
    assert builtin_flat_search(kb)("merger", 3, caller=Caller.public())[0]["id"] == "z-public"


def test_index_follows_writes():
    kb = KnowledgeBase.open(":memory:")
    kb.add_nodes([{"id": "a", "title": "graph walks"}])
    ix = kb.text_index()
    assert [i for i, _ in kb.search("walk")] == ["a"] and kb.text_index() is ix
    kb.add_nodes([{"id": "a", "title": "vector search"}, {"id": "b", "body": "walk"}])
    assert kb.text_index() is not ix
    assert [i for i, _ in kb.search("walk")] == ["b"] and [i for i, _ in kb.search("vector")] == ["a"]
    with kb.transaction():  # inside a write transaction the search sees its writes (uncached)
        kb.add_nodes([{"id": "c", "title": "walk walk"}])
        assert [i for i, _ in kb.search("walk")] == ["c", "b"]
    assert [i for i, _ in kb.search("walk")] == ["c", "b"]
    assert kb.text_index(LinkGraph.from_edges([("x", "y")])) is None  # not this store's snapshot
    assert KnowledgeBase.open(":memory:").search("anything") == []


def test_concurrent_searches_give_identical_results():
    kb = KnowledgeBase.open(":memory:")
    rng = np.random.default_rng(5)
    kb.add_nodes(
        [
            {
                "id": f"n{i:04d}",
                "title": " ".join(rng.choice(WORDS, 3)),
                "body": " ".join(rng.choice(WORDS, 12)),
                "scopes": None if i % 3 else ["a"],
            }
            for i in range(1500)
        ]
    )
    callers = [Caller.public(), Caller.with_scopes("a"), Caller.all_access()]
    ref = [[kb.search(q, 10, caller=c) for q in QUESTIONS] for c in callers]
    out: list[Any] = []

    def run() -> None:
        out.append([[kb.search(q, 10, caller=c) for q in QUESTIONS] for c in callers])

    ts = [threading.Thread(target=run) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(out) == 4 and all(o == ref for o in out)


# ---------------------------------------------------------------------- the deletion oracle
SCOPES = ["a", "b", "c"]
CALLERS = [Caller.public(), Caller.with_scopes("a"), Caller.with_scopes("b", "c"), Caller.all_access()]
QUESTIONS = [
    "how do we handle vector index compaction after deletes",
    "the merger plan of the graph",
    "walk",
    "alpha beta gamma",
    "sigma and the kappa index",
]


@st.composite
def stores(draw):
    n = draw(st.integers(2, 18))
    nodes = []
    for i in range(n):
        scopes = draw(st.one_of(st.none(), st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True)))
        nodes.append(
            {
                "id": f"n{i:02d}",
                "type": draw(st.sampled_from(["CONCEPT", "DOC", "MEMORY"])),
                "title": draw(st.one_of(st.none(), text_st)),
                "body": draw(st.one_of(st.none(), text_st)),
                "scopes": scopes,
            }
        )
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    edges = [
        {"src": f"n{a:02d}", "dst": f"n{b:02d}", "type": draw(st.sampled_from(["RELATED_TO", "MENTIONS"]))}
        for a, b in pairs
        if a != b
    ]
    aliases = [
        (w, f"n{draw(st.integers(0, n - 1)):02d}")
        for w in draw(st.lists(st.sampled_from(WORDS), max_size=4, unique=True))
    ]
    return nodes, edges, aliases


def outputs(kb: KnowledgeBase, caller: Caller, q: str) -> dict[str, str]:
    out = {
        "search": kb.search(q, 5, caller=caller),
        "search_typed": kb.search(q, 5, caller=caller, node_types=["DOC"]),
        "flat_fts": builtin_flat_search(kb)(q, 5, caller=caller),
        "flat_embedding": builtin_flat_search(kb, mode="embedding", embedder="hashing:64")(q, 5, caller=caller),
        "context": graph_context(kb, q, caller=caller, k=8).to_dict(),
        "context_batch": [r.to_dict() for r in graph_context_batch(kb, [q, {"question": q}], caller=caller, k=8)],
        "wrapped": ConceptAnchoredRetriever(builtin_flat_search(kb), kb).query(q, 5, concept_walk=True, caller=caller),
    }
    mcp = ToolServer(kb, caller=caller).call("query", {"text": q, "k": 5, "conceptWalk": True})
    out["mcp"] = mcp.structured if not mcp.is_error else mcp.text
    return {k: json.dumps(v, sort_keys=True) for k, v in out.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stores(), st.sampled_from(CALLERS), st.sampled_from(QUESTIONS))
def test_every_text_seeded_output_equals_the_deleted_store(store, caller, q):
    nodes, edges, aliases = store
    small = deleted_store(nodes, edges, aliases, caller)
    if small is None:
        return
    kb = open_store(nodes, edges, aliases)
    got = outputs(kb, caller, q)
    want = outputs(small, caller, q)
    for key in got:
        assert got[key] == want[key], key


# --------------------------------------------------------------------------- following writes
_WORDS = ["graph", "walks", "walk", "cut", "cuts", "merger", "plans", "éclair", "Rôle", "2", "x"]


@settings(max_examples=150)
@given(st.data())
def test_an_advanced_index_equals_a_fresh_build_array_for_array(data):
    # TextIndex.advanced reuses the postings of unchanged documents: after any edit (documents
    # added, removed, retitled, re-bodied, reordered by new ids) it must equal a fresh build.
    text = st.one_of(st.none(), st.lists(st.sampled_from(_WORDS), max_size=5).map(" ".join))
    old_docs = data.draw(st.dictionaries(st.text("abcdef", min_size=1, max_size=3), st.tuples(text, text), max_size=12))
    new_docs = dict(old_docs)
    for did in data.draw(st.lists(st.sampled_from(sorted(old_docs)), max_size=4, unique=True)) if old_docs else []:
        if data.draw(st.booleans()):
            del new_docs[did]
        else:
            new_docs[did] = data.draw(st.tuples(text, text))
    new_docs.update(
        data.draw(st.dictionaries(st.text("abcdefgh", min_size=1, max_size=3), st.tuples(text, text), max_size=4))
    )
    old_ids, new_ids = sorted(old_docs), sorted(new_docs)
    old = TextIndex.build([old_docs[i][0] for i in old_ids], [old_docs[i][1] for i in old_ids])
    pos = {x: j for j, x in enumerate(old_ids)}
    keep = [pos[x] if x in old_docs and old_docs[x] == new_docs[x] else -1 for x in new_ids]
    titles, bodies = [new_docs[i][0] for i in new_ids], [new_docs[i][1] for i in new_ids]
    got = old.advanced(keep, titles, bodies).to_arrays()
    want = TextIndex.build(titles, bodies).to_arrays()
    assert got.keys() == want.keys()
    for key in want:
        assert np.array_equal(got[key], want[key]), key


def test_read_only_postings_are_borrowed_and_kept_alive_writable_ones_copied():
    """TextIndex.from_arrays keeps postings over immutable memory (a read-only mapped file's)
    instead of copying them, holding them for its own lifetime; any other arrays are copied (a
    later change to the caller's memory cannot reach what was validated). Either way the index
    answers as the one it was saved from."""
    import gc

    titles = [f"merger plans {i}" for i in range(30)] + ["graph walks merger"] * 5
    ix = TextIndex.build(titles, [None] * len(titles))
    want = ix.search("merger walks", 10)
    arrays = {k: np.array(v) for k, v in ix.to_arrays().items()}
    copied = TextIndex.from_arrays(arrays)
    assert not copied.core.borrowed
    arrays["text_docs"][:] = 0  # the caller's array changes: the copy does not see it
    assert copied.search("merger walks", 10) == want
    flagged = {k: np.array(v) for k, v in ix.to_arrays().items()}
    for v in flagged.values():
        v.setflags(write=False)
    # read-only by flag over memory the caller owns (the flag can be set back): copied
    assert not TextIndex.from_arrays(flagged).core.borrowed
    # over memory no Python code can change (bytes here; a read-only mapped file in a store): kept
    ro = {k: np.frombuffer(np.ascontiguousarray(v).tobytes(), dtype=v.dtype) for k, v in ix.to_arrays().items()}
    kept = TextIndex.from_arrays(ro)
    assert kept.core.borrowed
    del ro
    gc.collect()  # the index holds the postings it borrowed
    assert kept.search("merger walks", 10) == want
    assert [np.array_equal(a, b) for a, b in zip(kept.to_arrays().values(), ix.to_arrays().values())] == [True] * 7


def test_the_text_index_is_saved_with_the_snapshot_and_reopened_without_a_rebuild(tmp_path, monkeypatch):
    path = str(tmp_path / "kb.db")
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes(
            [
                {
                    "id": f"n{i}",
                    "title": f"merger plans {i}",
                    "body": "graph walks" if i % 2 else None,
                    "scopes": ["t"] if i % 3 == 0 else None,
                }
                for i in range(40)
            ]
        )
        want = kb.search("merger walks", 10, caller=Caller.public())
    builds = []
    real_build = TextIndex.build.__func__

    def counting_build(cls, *a, **kw):
        builds.append(1)
        return real_build(cls, *a, **kw)

    monkeypatch.setattr(TextIndex, "build", classmethod(counting_build))
    with KnowledgeBase.open(path) as kb:  # a fresh process would do the same: map the file
        assert kb.search("merger walks", 10, caller=Caller.public()) == want
        assert builds == []  # the index came from the snapshot file
        assert kb.text_index().core.borrowed  # its postings are the file's pages, not a copy
        kb.add_nodes([{"id": "n99", "title": "merger walks"}])  # the next write is followed
        kb.text_index()  # the snapshot path (search reads the live graph's text segment instead)
        assert builds == [1]  # from the mapped index: only the written document is tokenised
        got = kb.search("merger walks", 10, caller=Caller.public())
    with KnowledgeBase.open(path) as kb:
        fresh = TextIndex.build(
            [kb.node(i)["title"] for i in kb.graph().ids], [kb.node(i)["body"] for i in kb.graph().ids]
        )
        ix = kb.text_index()
        assert all(np.array_equal(a, b) for a, b in zip(ix.to_arrays().values(), fresh.to_arrays().values()))
    assert got[0][0] == "n99"
