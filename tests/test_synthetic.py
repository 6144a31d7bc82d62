"""Tests of conceptwalk.kb.synthetic: determinism, shape, annotations, scopes, aliases, rows, queries."""

from __future__ import annotations

import doctest
import hashlib
import itertools
import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import conceptwalk.kb.synthetic as synthetic
from conceptwalk import InputError, LinkGraph
from conceptwalk.kb.synthetic import EDGE_TYPES, TENANTS, SyntheticKB, generate

AXES = ("authority", "fidelity", "extraction_method", "lifecycle")
NODE_KEYS = ["id", "type", "title", "body", "scopes", "lifecycle"]
EDGE_KEYS = ["src", "dst", "type", "authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle"]


@pytest.fixture(scope="module")
def kb() -> SyntheticKB:
    return generate(1000, seed=0)


@pytest.fixture(scope="module")
def graph(kb: SyntheticKB) -> LinkGraph:
    return kb.to_linkgraph()


def digest(kb: SyntheticKB) -> str:
    h = hashlib.sha256()
    for col in (
        kb.ids,
        kb.node_types,
        kb.titles,
        kb.bodies,
        kb.scopes,
        kb.lifecycle,
        kb.edge_types.tolist(),
        kb.aliases,
    ):
        h.update(repr(col).encode())
    for key in sorted(kb.edge_annotations):
        h.update(repr(kb.edge_annotations[key]).encode())
    h.update(kb.src.tobytes())
    h.update(kb.dst.tobytes())
    return h.hexdigest()


def columns_equal(a: SyntheticKB, b: SyntheticKB) -> bool:
    return (
        a.ids == b.ids
        and a.node_types == b.node_types
        and a.titles == b.titles
        and a.bodies == b.bodies
        and a.scopes == b.scopes
        and a.lifecycle == b.lifecycle
        and np.array_equal(a.src, b.src)
        and np.array_equal(a.dst, b.dst)
        and a.edge_types.tolist() == b.edge_types.tolist()
        and a.edge_annotations == b.edge_annotations
        and a.aliases == b.aliases
    )


def topic(title: str) -> str:
    words = title.split(" ")
    return " ".join(words[:3] if words[0] in synthetic.QUALIFIERS else words[:2])


def type_of(kb: SyntheticKB) -> np.ndarray:
    return np.array(kb.node_types, dtype=object)


# --------------------------------------------------------------------------- determinism
def test_same_seed_gives_identical_columns(kb: SyntheticKB) -> None:
    again = generate(1000, seed=0)
    assert columns_equal(kb, again)
    assert digest(kb) == digest(again)
    assert kb.src.dtype == np.int64 and kb.dst.dtype == np.int64


def test_different_seed_or_size_differs(kb: SyntheticKB) -> None:
    other = generate(1000, seed=1)
    assert kb.titles != other.titles
    assert not (kb.src.shape == other.src.shape and np.array_equal(kb.src, other.src))
    assert digest(kb) != digest(other)
    assert digest(generate(999, seed=0)) != digest(kb)


def test_independent_of_hash_seed_and_process(kb: SyntheticKB) -> None:
    code = (
        "import sys; sys.path.insert(0, %r); from test_synthetic import digest; "
        "from conceptwalk.kb.synthetic import generate; print(digest(generate(1000, seed=0)))"
        % os.path.dirname(__file__)
    )
    for hashseed in ("1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == digest(kb)


def test_progress_flag_does_not_change_output(kb: SyntheticKB) -> None:
    assert columns_equal(generate(1000, seed=0, progress=True), kb)


# --------------------------------------------------------------------------- shape
def test_counts_and_types(kb: SyntheticKB) -> None:
    counts = kb.counts()
    assert counts["nodes"] == {"CONCEPT": 1000, "MEMORY": 800, "DECISION": 300, "FILE": 400}
    assert kb.num_nodes == 2500 == len(kb.titles) == len(kb.bodies) == len(kb.scopes) == len(kb.lifecycle)
    assert set(counts["edges"]) == set(EDGE_TYPES)
    assert all(c > 0 for c in counts["edges"].values())
    assert sum(counts["edges"].values()) == kb.num_edges
    # About 9 edges per concept (the 1M-concept KB has about 9M edges).
    assert 8.0 <= kb.num_edges / kb.n_concepts <= 10.5
    assert kb.node_types[:1000] == ["CONCEPT"] * 1000
    assert len(set(kb.ids)) == kb.num_nodes
    assert all(isinstance(t, str) and t for t in kb.titles + kb.bodies)


def test_edge_endpoint_types(kb: SyntheticKB) -> None:
    types = type_of(kb)
    expected = {
        "RELATED_TO": ({"CONCEPT"}, {"CONCEPT"}),
        "PARENT_CONCEPT": ({"CONCEPT"}, {"CONCEPT"}),
        "IMPLEMENTED_BY": ({"CONCEPT"}, {"FILE"}),
        "EXPLAINED_BY": ({"CONCEPT"}, {"DECISION"}),
        "ATTACHED_TO": ({"MEMORY"}, {"CONCEPT"}),
        "TAGGED_CONCEPT": ({"MEMORY", "DECISION"}, {"CONCEPT"}),
        "MENTIONS": ({"MEMORY", "DECISION"}, {"FILE"}),
    }
    for et, (srcs, dsts) in expected.items():
        sel = kb.edge_types == et
        assert set(types[kb.src[sel]]) == srcs, et
        assert set(types[kb.dst[sel]]) == dsts, et
    # Every memory is attached to exactly one concept.
    att = kb.edge_types == "ATTACHED_TO"
    assert sorted(kb.src[att].tolist()) == list(range(1000, 1800))


def test_no_self_loops_or_duplicate_typed_edges(kb: SyntheticKB) -> None:
    assert not np.any(kb.src == kb.dst)
    triples = set(zip(kb.src.tolist(), kb.dst.tolist(), kb.edge_types.tolist()))
    assert len(triples) == kb.num_edges


def test_parent_concept_is_a_forest(kb: SyntheticKB) -> None:
    sel = kb.edge_types == "PARENT_CONCEPT"
    child, parent = kb.src[sel], kb.dst[sel]
    assert len(set(child.tolist())) == child.shape[0]  # at most one parent each
    assert np.all(parent < child)  # parents come earlier: no cycles
    titles = kb.titles
    assert all(topic(titles[c]) == topic(titles[p]) for c, p in zip(child.tolist(), parent.tolist()))


@pytest.mark.parametrize("n, seed", [(1000, 0), (1000, 1), (1000, 2), (1000, 3), (5000, 0), (5000, 7)])
def test_mean_undirected_degree_in_range(n: int, seed: int) -> None:
    g = generate(n, seed=seed).to_linkgraph()
    mean = 2 * g.num_neighbour_pairs / g.num_nodes
    assert 6.0 <= mean <= 9.0, mean


def test_heavy_tailed_degrees(graph: LinkGraph) -> None:
    deg = np.sort(graph.degrees)[::-1]
    mean = deg.mean()
    assert deg[0] >= 10 * mean
    # The top 1% of nodes hold a disproportionate share of the adjacency.
    top = deg[: len(deg) // 100].sum() / deg.sum()
    assert top >= 0.08
    assert np.median(deg) < mean


def test_community_structure(kb: SyntheticKB) -> None:
    titles = kb.titles
    concept_topics = Counter(topic(t) for t in titles[:1000])
    assert 10 <= len(concept_topics) <= 40  # about n / 50 communities
    assert max(concept_topics.values()) > 2 * min(concept_topics.values())  # uneven sizes
    sel = kb.edge_types == "RELATED_TO"
    same = [topic(titles[a]) == topic(titles[b]) for a, b in zip(kb.src[sel].tolist(), kb.dst[sel].tolist())]
    inside = sum(same) / len(same)
    assert 0.75 <= inside <= 0.92  # mostly within communities, some across
    # Concept ids and titles follow the community topic.
    for cid, title in zip(kb.ids[:1000], titles[:1000]):
        assert cid == "concept/" + title.replace(" ", "_")


def test_vocabulary_lists_are_disjoint() -> None:
    lists = [synthetic.QUALIFIERS, synthetic.DOMAINS, synthetic.OBJECTS, synthetic.FACETS]
    for lst in lists:
        assert len(set(lst)) == len(lst)
        assert all(w.isalpha() and w.islower() for w in lst)
    for a, b in itertools.combinations(lists, 2):
        assert not set(a) & set(b)
    assert sum(len(x) for x in lists) >= 300


# --------------------------------------------------------------------------- text
def test_titles_and_bodies_are_searchable(kb: SyntheticKB) -> None:
    titles, bodies = kb.titles, kb.bodies
    alias_by_concept: dict[str, list[str]] = {}
    for alias, canonical in kb.aliases:
        alias_by_concept.setdefault(canonical, []).append(alias)
    ids = kb.ids
    for et in ("ATTACHED_TO",):
        sel = kb.edge_types == et
        for m, c in zip(kb.src[sel].tolist(), kb.dst[sel].tolist()):
            names = [titles[c]] + alias_by_concept.get(ids[c], [])
            assert any(x in titles[m] and x in bodies[m] for x in names), (titles[m], names)
    # Every decision names one of the concepts it explains; every file path one of its concepts.
    for et, prefix in (("EXPLAINED_BY", "decision/"), ("IMPLEMENTED_BY", "file/")):
        sel = kb.edge_types == et
        by_item: dict[int, list[int]] = {}
        for c, item in zip(kb.src[sel].tolist(), kb.dst[sel].tolist()):
            by_item.setdefault(item, []).append(c)
        assert all(ids[i].startswith(prefix) for i in by_item)
        for item, concepts in by_item.items():
            if prefix == "file/":
                assert any(f"src/{topic(titles[c]).replace(' ', '_')}/" in titles[item] for c in concepts)
                assert any(titles[c] in bodies[item] for c in concepts)
            else:
                assert any(titles[c] in bodies[item] and titles[c] in titles[item] for c in concepts)
    # A file named like the spec's example exists for a faceted concept.
    files = [t for t in titles if t.startswith("src/")]
    assert len(set(files)) == len(files) == 400
    assert all(f.rsplit(".", 1)[1] in {"py", "ts", "go", "rs", "md"} for f in files)


def test_mentions_are_named_in_bodies(kb: SyntheticKB) -> None:
    sel = kb.edge_types == "MENTIONS"
    for s, f in zip(kb.src[sel].tolist(), kb.dst[sel].tolist()):
        assert kb.titles[f] in kb.bodies[s]


# --------------------------------------------------------------------------- scopes and lifecycle
def test_scopes(kb: SyntheticKB, graph: LinkGraph) -> None:
    public = sum(s is None for s in kb.scopes) / kb.num_nodes
    assert 0.5 <= public <= 0.7
    used = Counter(t for s in kb.scopes if s is not None for t in s)
    assert set(used) == set(TENANTS)
    sizes = Counter(len(s) for s in kb.scopes if s is not None)
    assert set(sizes) == {1, 2} and sizes[2] < 0.2 * sizes[1]
    assert all(s is None or (s == sorted(set(s)) and s) for s in kb.scopes)
    # Attached items tend to share their concept's scopes.
    sel = kb.edge_types == "ATTACHED_TO"
    shared = np.mean([kb.scopes[m] == kb.scopes[c] for m, c in zip(kb.src[sel].tolist(), kb.dst[sel].tolist())])
    assert shared >= 0.7
    # The graph sees the same scopes.
    mask = graph.scope_mask(["tenant-a"])
    expect = sum(s is None or "tenant-a" in s for s in kb.scopes)
    assert int(mask.sum()) == expect


def test_node_lifecycle_partly_present(kb: SyntheticKB) -> None:
    values = Counter(kb.lifecycle)
    assert set(values) == {None, "active", "deprecated", "draft"}
    assert 0.2 <= values[None] / kb.num_nodes <= 0.4


# --------------------------------------------------------------------------- annotations
def test_every_axis_partly_present(kb: SyntheticKB) -> None:
    m = kb.num_edges
    assert set(kb.edge_annotations) == {
        "authority",
        "fidelity",
        "extraction_method",
        "extraction_confidence",
        "lifecycle",
    }
    allowed = {
        "authority": set(synthetic.AUTHORITY_VALUES),
        "fidelity": set(synthetic.FIDELITY_VALUES),
        "extraction_method": set(synthetic.EXTRACTION_METHODS),
        "lifecycle": set(synthetic.LIFECYCLE_VALUES),
    }
    for axis in AXES:
        col = kb.edge_annotations[axis]
        assert len(col) == m
        frac = sum(v is not None for v in col) / m
        assert abs(frac - synthetic.ANNOTATION_PRESENCE[axis]) < 0.05, (axis, frac)
        assert {v for v in col if v is not None} == allowed[axis]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_all_presence_combinations_occur(seed: int) -> None:
    kb = generate(1000, seed=seed)
    a = kb.edge_annotations
    combos = Counter(zip(*[[v is not None for v in a[axis]] for axis in AXES]))
    assert set(combos) == set(itertools.product([False, True], repeat=4))


def test_extraction_confidence(kb: SyntheticKB) -> None:
    a = kb.edge_annotations
    for method, conf in zip(a["extraction_method"], a["extraction_confidence"]):
        if method is None:
            assert conf is None
        elif method == "LLM_EXTRACTED":
            assert isinstance(conf, float) and 0.5 <= conf <= 0.95
        else:
            assert conf == 1.0
    tagged = kb.edge_types == "TAGGED_CONCEPT"
    methods = Counter(m for m, t in zip(a["extraction_method"], tagged.tolist()) if t and m)
    assert methods.most_common(1)[0][0] == "TAGGED_CONCEPT"


def test_edges_touching_deprecated_nodes_are_deprecated(kb: SyntheticKB) -> None:
    life = kb.edge_annotations["lifecycle"]
    for s, d, lc in zip(kb.src.tolist(), kb.dst.tolist(), life):
        if lc is not None and "deprecated" in (kb.lifecycle[s], kb.lifecycle[d]):
            assert lc == "deprecated"


# --------------------------------------------------------------------------- aliases
def test_aliases(kb: SyntheticKB) -> None:
    ids = set(kb.ids)
    concept_ids = set(kb.ids[:1000])
    aliases = [a for a, _ in kb.aliases]
    assert len(aliases) == len(set(aliases))  # each alias names one concept
    assert all(c in concept_ids for _, c in kb.aliases)
    assert not ids & set(aliases)
    per = Counter(c for _, c in kb.aliases)
    assert 0.03 <= len(per) / 1000 <= 0.07
    assert max(per.values()) >= 2  # fragmented: several names for one concept
    assert all(a != kb.titles[kb.ids.index(c)] for a, c in kb.aliases[:50])
    kinds = {
        "hyphen": any("-" in a and " " in a for a in aliases),
        "legacy": any(a.startswith("concept/") and a.endswith("_v1") for a in aliases),
        "snake": any("_" in a and "/" not in a for a in aliases),
        "camel": any(a[:1].isupper() and a.isalpha() and not a.isupper() for a in aliases),
    }
    assert all(kinds.values()), kinds
    assert list(kb.alias_rows()) == [{"alias": a, "canonical": c} for a, c in kb.aliases]


# --------------------------------------------------------------------------- rows and graph
def test_row_generators(kb: SyntheticKB) -> None:
    nodes = list(kb.node_rows())
    assert len(nodes) == kb.num_nodes
    assert all(list(r) == NODE_KEYS for r in nodes)
    assert nodes[0]["id"] == kb.ids[0] and nodes[-1]["type"] == "FILE"
    nodes[0]["scopes"] = ["mutated"]  # rows are copies: the KB does not change
    assert next(kb.node_rows())["scopes"] != ["mutated"]
    edges = list(kb.edge_rows())
    assert len(edges) == kb.num_edges
    assert all(list(r) == EDGE_KEYS for r in edges)
    ids = set(kb.ids)
    assert all(r["src"] in ids and r["dst"] in ids for r in edges)
    i = 123
    r = edges[i]
    assert (r["src"], r["dst"], r["type"]) == (kb.ids[kb.src[i]], kb.ids[kb.dst[i]], kb.edge_types[i])
    for axis in ("authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle"):
        assert r[axis] == kb.edge_annotations[axis][i]
    assert all(list(a) == ["alias", "canonical"] for a in kb.alias_rows())


def test_rows_build_the_same_graph(kb: SyntheticKB, graph: LinkGraph) -> None:
    nodes = list(kb.node_rows())
    g2 = LinkGraph.from_edges(list(kb.edge_rows()), nodes=nodes)
    assert g2.ids == graph.ids
    assert g2.num_edges == graph.num_edges
    assert np.array_equal(g2.core.indices, graph.core.indices)


def test_to_linkgraph(kb: SyntheticKB, graph: LinkGraph) -> None:
    assert graph.num_nodes == kb.num_nodes
    assert graph.num_edges == kb.num_edges  # nothing collapsed: no self-loops, no duplicates
    assert graph.self_loops == 0 and graph.duplicate_edges == 0
    assert set(graph.edge_type_names) == set(EDGE_TYPES)
    cid = kb.ids[5]
    assert graph.node_type(cid) == "CONCEPT" and graph.title(cid) == kb.titles[5]
    # Annotations survive: compare one edge per type.
    for et in EDGE_TYPES:
        i = int(np.flatnonzero(kb.edge_types == et)[0])
        a, b = graph.index(kb.ids[kb.src[i]]), graph.index(kb.ids[kb.dst[i]])
        edges = [
            e
            for e in graph.edges_between(a, b)
            if graph.edge_type_names[graph.edge_type_codes[e]] == et and graph.edge_src[e] == a
        ]
        assert len(edges) == 1
        for axis in ("authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle"):
            assert graph.edge_annotation(edges[0], axis) == kb.edge_annotations[axis][i]
    # The algorithms run on it.
    assert graph.shortest_path(kb.ids[1000], kb.ids[1001]) is not None
    ranking = graph.personalized_pagerank({kb.ids[0]: 1.0}, k=5)
    assert len(ranking) == 5


@pytest.mark.parametrize("n", [1, 2, 3, 10, 51, 120])
def test_tiny_sizes(n: int) -> None:
    kb = generate(n, seed=n)
    assert kb.counts()["nodes"]["CONCEPT"] == n
    g = kb.to_linkgraph()
    assert g.num_nodes == kb.num_nodes and g.num_edges == kb.num_edges
    assert all(c in set(kb.ids[:n]) for _, c in kb.aliases)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10", None])
def test_bad_sizes_raise(bad: object) -> None:
    with pytest.raises(InputError, match="n_concepts"):
        generate(bad)  # type: ignore[arg-type]


def test_bad_seed_raises() -> None:
    with pytest.raises(InputError, match="seed"):
        generate(10, seed=-1)
    with pytest.raises(InputError, match="n must"):
        generate(10).queries(-1)


# --------------------------------------------------------------------------- queries
def test_queries_are_neighbours_of_their_concept(kb: SyntheticKB, graph: LinkGraph) -> None:
    queries = kb.queries(50)
    assert len(queries) == 50
    assert len({q["concept"] for q in queries}) == 50
    ids = graph.ids
    indptr, indices = graph.core.indptr, graph.core.indices
    for q in queries:
        assert list(q) == ["text", "concept", "variant", "relevant"]
        c = graph.index(q["concept"])
        assert graph.node_type(q["concept"]) == "CONCEPT"
        neighbours = {ids[j] for j in indices[indptr[c] : indptr[c + 1]].tolist()}
        items = {x for x in neighbours if graph.node_type(x) != "CONCEPT"}
        assert q["relevant"] and set(q["relevant"]) == items
        assert q["relevant"] == sorted(q["relevant"])
        assert all(graph.node_type(x) in {"FILE", "DECISION", "MEMORY"} for x in q["relevant"])


def test_query_text_variants(kb: SyntheticKB) -> None:
    queries = kb.queries(200, seed=3)
    title = dict(zip(kb.ids, kb.titles))
    aliases = {a: c for a, c in kb.aliases}
    variants = Counter(q["variant"] for q in queries)
    assert set(variants) == {"title", "paraphrase", "typo", "alias"}
    for q in queries:
        t = title[q["concept"]]
        if q["variant"] == "title":
            assert q["text"] == t
        elif q["variant"] == "paraphrase":
            assert t in q["text"] and q["text"] != t
        elif q["variant"] == "typo":
            assert q["text"] != t and abs(len(q["text"]) - len(t)) <= 1
            assert sum(a != b for a, b in zip(q["text"].split(), t.split())) == 1
        else:
            assert aliases[q["text"]] == q["concept"]


def test_queries_deterministic(kb: SyntheticKB) -> None:
    assert kb.queries(20, seed=5) == kb.queries(20, seed=5)
    assert kb.queries(20, seed=5) != kb.queries(20, seed=6)
    assert kb.queries(0) == []
    assert len(generate(3, seed=0).queries(50)) <= 3


# --------------------------------------------------------------------------- docs
def test_docstring_examples_run() -> None:
    result = doctest.testmod(synthetic, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8
    assert result.failed == 0
