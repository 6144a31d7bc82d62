"""The resolver and the wrapped query under the deletion oracle (issue 12's contract, issue 13).

On random scoped stores, callers, queries and configurations: the resolver's output (concept,
confidence, method, matched) and the wrapped query's output (``ConceptAnchoredRetriever.query``
with ``concept_walk=True``, serialised) equal, bit for bit, those on the same store with the
caller's hidden nodes deleted. The stores are built so that every evidence kind fires: concept
titles share words with the queries (lexical, semantic, the flat hits), aliases name concepts,
and admission edges join concepts to documents (the walk adds candidates).

Also: the lexical evidence uses the text index over what the caller sees (a hidden concept
holding the query's words cannot reorder the visible ones), and a store object without a text
index falls back to its own ``search``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.wrap import ConceptAnchoredRetriever, ConceptResolver, WalkConfig, builtin_flat_search
from deletion_oracle import deleted_store, open_store

WORDS = [
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
    "token",
    "auth",
    "session",
    "cache",
]
SCOPES = ["a", "b", "c"]
CALLERS = [Caller.public(), Caller.with_scopes("a"), Caller.with_scopes("b", "c"), Caller.all_access()]
EDGE_TYPES = ["IMPLEMENTED_BY", "IMPLEMENTED_BY", "EXPLAINED_BY", "RELATED_TO", "PARENT_CONCEPT", "MENTIONS"]
CONFIGS = {
    "default": WalkConfig(),
    "min_share=0": WalkConfig(walk_min_share=0.0),
    "similarity": WalkConfig(rank_by="similarity"),
    "path*similarity": WalkConfig(rank_by="path*similarity", max_candidates=4),
    "tight": WalkConfig(max_candidates=3, max_concepts=2, semantic_threshold=0.05, lexical_k=2),
    "no-embedder": WalkConfig(embedder=None),
    # 16 dimensions: dense vectors, so the semantic step reads rows (vector_topk_arrays), not columns
    "dense-embedder": WalkConfig(embedder="hashing:16", semantic_threshold=0.1),
}

text_st = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
query_st = st.lists(st.sampled_from(WORDS + ["the", "of", "how"]), min_size=1, max_size=7).map(" ".join)


@st.composite
def stores(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str]]]:
    n = draw(st.integers(3, 16))
    nodes = []
    for i in range(n):
        scopes = draw(st.one_of(st.none(), st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True)))
        nodes.append(
            {
                "id": f"n{i:02d}",
                "type": draw(st.sampled_from(["CONCEPT", "CONCEPT", "DOC", "FILE"])),
                "title": draw(text_st),
                "body": draw(st.one_of(st.none(), text_st)),
                "scopes": scopes,
            }
        )
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    edges = [
        {
            "src": f"n{a:02d}",
            "dst": f"n{b:02d}",
            "type": draw(st.sampled_from(EDGE_TYPES)),
            "extraction_confidence": draw(st.sampled_from([None, 0.9, 0.5])),
            "authority": draw(st.sampled_from([None, "code", "doc"])),
        }
        for a, b in pairs
        if a != b
    ]
    aliases = [
        (w, f"n{draw(st.integers(0, n - 1)):02d}")
        for w in draw(
            st.lists(st.sampled_from(WORDS + ["graph walk", "auth token"]), min_size=1, max_size=6, unique=True)
        )
    ]
    return nodes, edges, aliases


def outputs(kb: KnowledgeBase, caller: Caller, q: str, cfg: WalkConfig) -> dict[str, Any]:
    flat = builtin_flat_search(kb)
    hits = flat(q, 5, caller=caller)
    resolver = ConceptResolver(kb, cfg)
    resolved = [
        (c.id, c.confidence, c.method, c.matched) for c in resolver.resolve(q, caller=caller, flat_results=hits)
    ]
    rtr = ConceptAnchoredRetriever(flat, kb, config=cfg)
    run = rtr.run(q, 5, concept_walk=True, caller=caller)
    return {
        "resolved": resolved,
        "wrapped": json.dumps(run.results, sort_keys=True),
        "concepts": [(c.id, c.confidence, c.method) for c in run.concepts],
    }


# (a random store may hide every admission edge from a caller: the walk then warns, as it should)
@pytest.mark.filterwarnings("ignore::conceptwalk.wrap.WalkTypesWarning")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stores(), st.sampled_from(CALLERS), query_st, st.sampled_from(sorted(CONFIGS)))
def test_resolver_and_wrapped_query_equal_the_deleted_store(store, caller, q, cfg_name):
    nodes, edges, aliases = store
    small = deleted_store(nodes, edges, aliases, caller)
    if small is None:
        return
    cfg = CONFIGS[cfg_name]
    got = outputs(open_store(nodes, edges, aliases), caller, q, cfg)
    want = outputs(small, caller, q, cfg)
    assert got["resolved"] == want["resolved"]
    assert got["concepts"] == want["concepts"]
    assert got["wrapped"] == want["wrapped"]


def _lexical_store(hidden: int) -> KnowledgeBase:
    """One public concept 'merger plan', one public 'plan review', and ``hidden`` hidden concepts
    titled 'merger': with global statistics the hidden ones make 'merger' common and lift
    'plan review' over 'merger plan'."""
    kb = KnowledgeBase.open(":memory:")
    nodes = [
        {"id": "c:a", "type": "CONCEPT", "title": "merger plan"},
        {"id": "c:b", "type": "CONCEPT", "title": "plan review plan"},
    ]
    nodes += [{"id": f"c:h{i:02d}", "type": "CONCEPT", "title": "merger", "scopes": ["secret"]} for i in range(hidden)]
    kb.add_nodes(nodes)
    return kb


def test_lexical_ranks_do_not_depend_on_hidden_concepts():
    cfg = WalkConfig(embedder=None, flat_hit_k=0)
    want = None
    for hidden in (0, 1, 4, 12):
        r = ConceptResolver(_lexical_store(hidden), cfg)
        got = [(c.id, c.confidence, c.method) for c in r.resolve("merger plan", caller=Caller.public())]
        assert all(c[2] == "lexical" for c in got) and got
        if want is None:
            want = got
        assert got == want, hidden
    # the caller who sees them gets them (and they are concepts, so they rank)
    r = ConceptResolver(_lexical_store(4), cfg)
    assert any(c.id.startswith("c:h") for c in r.resolve("merger plan", caller=Caller.with_scopes("secret")))


class _PlainStore:
    """A user's own store object: a graph, aliases and a search, no text index."""

    def __init__(self, kb: KnowledgeBase, *, with_caller: bool) -> None:
        self.kb = kb
        self.calls: list[dict[str, Any]] = []
        self.with_caller = with_caller

    def graph(self) -> Any:
        return self.kb.graph()

    def aliases(self) -> dict[str, list[str]]:
        return self.kb.aliases()

    def search(self, text: str, k: int, **kw: Any) -> list[tuple[str, float]]:
        self.calls.append(dict(kw))
        if "caller" in kw and not self.with_caller:
            raise TypeError("unexpected keyword caller")
        return self.kb.search(text, k, **kw)


class _PlainStoreNoCaller(_PlainStore):
    def search(self, text: str, k: int, node_types: Any = None) -> list[tuple[str, float]]:  # type: ignore[override]
        self.calls.append({"node_types": node_types})
        return self.kb.search(text, k, node_types=node_types)


@pytest.mark.parametrize("cls", [_PlainStore, _PlainStoreNoCaller])
def test_lexical_fallback_without_a_text_index(cls):
    kb = _lexical_store(3)
    store = cls(kb, with_caller=True)
    r = ConceptResolver(store, WalkConfig(embedder=None, flat_hit_k=0))
    got = r.resolve("merger plan", caller=Caller.public())
    assert {c.id for c in got} == {"c:a", "c:b"}  # hidden concepts never come back
    assert all(c.method == "lexical" for c in got)
    assert store.calls and all(c.get("node_types") == ("CONCEPT",) for c in store.calls)
    if cls is _PlainStore:  # its search takes the caller: it is asked with it
        assert all(c.get("caller") == Caller.public() for c in store.calls)


# ---------------------------------------------------------------------- the sparse semantic path
@st.composite
def sparse_cases(draw: Any) -> tuple[Any, Any, Any, int, float]:
    import numpy as np

    n = draw(st.integers(1, 60))
    dim = draw(st.integers(1, 37))  # dims that are and are not multiples of the core's 4 lanes
    # arbitrary float32 values (so the lanes' rounding matters), zeros in some proportion
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    zeros = draw(st.sampled_from([0.0, 0.5, 0.8, 0.95]))
    mat = (rng.standard_normal((n, dim)) * (rng.random((n, dim)) >= zeros)).astype(np.float32)
    q = (rng.standard_normal(dim) * (rng.random(dim) >= zeros / 2)).astype(np.float32)
    visible = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return mat, q, visible, draw(st.integers(1, 12)), draw(st.sampled_from([-1.0, 0.0, 0.2]))


@settings(max_examples=200, deadline=None)
@given(sparse_cases())
def test_column_scores_equal_the_core_vector_topk_bit_for_bit(case):
    """The resolver's sparse path (ColumnMatrix + topk_scores) returns exactly what
    vector_topk_arrays returns, rows and scores, on sparse matrices of any width."""
    import numpy as np

    from conceptwalk.graph.vectors import vector_topk_arrays
    from conceptwalk.wrap._reader import SPARSE_DENSITY, ColumnMatrix
    from conceptwalk.wrap.resolver import topk_scores

    mat, q, visible, k, lo = case
    assert (ColumnMatrix.build(mat) is None) == (np.count_nonzero(mat) > SPARSE_DENSITY * mat.size)
    cm = ColumnMatrix.build(mat, max_density=1.0)  # any density: the numbers do not depend on it
    assert cm is not None
    for vis in (None, visible):
        want_rows, want_scores = vector_topk_arrays(mat, q, k, visible=vis, min_score=lo)
        rows, scores = topk_scores(cm.scores(q), k, visible=vis, min_score=lo)
        assert rows.tolist() == want_rows.tolist()
        assert scores.tobytes() == want_scores.tobytes()
    # every row's score, not only the top k
    all_rows, all_scores = vector_topk_arrays(mat, q, mat.shape[0])
    assert cm.scores(q)[all_rows].tobytes() == all_scores.tobytes()
