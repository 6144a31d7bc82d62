"""The CSR projection, the typed edges behind it, construction paths, masks, version and stub."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import site
import subprocess
import sys

import numpy as np
import pytest
from conftest import GRAPH_SEEDS

import conceptwalk
import reference as ref
from conceptwalk import LinkGraph, _core


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::3])
def test_csr_is_the_undirected_projection(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    gx = spec.nx_graph()
    assert g.ids == sorted(spec.nodes)  # node index = rank of the id in sorted order
    indptr, indices = g.core.indptr, g.core.indices
    assert indptr.dtype == np.int64 and indices.dtype == np.int32
    assert indptr[0] == 0 and indptr[-1] == indices.shape[0] == g.core.num_entries
    for i, v in enumerate(g.ids):
        row = indices[indptr[i] : indptr[i + 1]].tolist()
        assert row == sorted(g.ids.index(u) for u in gx.adj[v])  # ascending, no dups, no self
    assert g.num_neighbour_pairs == gx.number_of_edges()
    assert g.core.max_degree == max((d for _, d in gx.degree()), default=0)
    assert g.degrees.tolist() == [gx.degree(v) for v in g.ids]


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::3])
def test_typed_edges_are_recoverable(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    distinct = {(a, b, t) for a, b, t in spec.edges if a != b}
    got = [
        (g.ids[s], g.ids[d], g.edge_type_names[t])
        for s, d, t in zip(g.edge_src.tolist(), g.edge_dst.tolist(), g.edge_type_codes.tolist())
    ]
    assert len(got) == len(set(got)) == g.num_edges
    assert set(got) == distinct
    assert g.self_loops == sum(a == b for a, b, _ in spec.edges)
    assert g.duplicate_edges == len(spec.edges) - g.self_loops - len(distinct)
    # Each canonical edge hangs off the adjacency entry of its pair, in both rows.
    for e, (s, d) in enumerate(zip(g.edge_src.tolist(), g.edge_dst.tolist())):
        assert e in g.edges_between(s, d) and e in g.edges_between(d, s)
    typedir = g.core.edge_typedir
    assert np.array_equal(typedir >> 1, g.edge_type_codes)
    assert np.array_equal(typedir & 1, (g.edge_src > g.edge_dst).astype(np.int32))


def test_construction_paths_agree():
    spec = ref.random_graph(12, "gnp", (20, 30))
    a = spec.build_linkgraph()
    ids = sorted(spec.nodes)
    pos = {v: i for i, v in enumerate(ids)}
    b = LinkGraph.from_arrays(
        ids[::-1],
        [len(ids) - 1 - pos[s] for s, _, _ in spec.edges],
        [len(ids) - 1 - pos[d] for _, d, _ in spec.edges],
        [t for _, _, t in spec.edges],
    )
    c = LinkGraph.from_edges(np.array(spec.edges, dtype=object), nodes=list(spec.nodes))
    d = LinkGraph.from_edges(
        [{"src": s, "dst": t, "type": ty} for s, t, ty in spec.edges], nodes=[{"id": v} for v in spec.nodes]
    )
    for other in (b, c, d):
        assert other.ids == a.ids
        for name in ("indptr", "indices", "entry_pair", "pair_ptr", "edge_typedir"):
            assert np.array_equal(getattr(other.core, name), getattr(a.core, name)), name
        assert other.edge_type_names == a.edge_type_names


def test_views_are_read_only_and_keep_the_graph_alive():
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    indices = g.core.indices
    with pytest.raises(ValueError):
        indices[0] = 5
    for name in ("indptr", "entry_pair", "pair_ptr", "edge_typedir"):
        assert not getattr(g.core, name).flags.writeable
    core = g.core
    del g
    import gc

    gc.collect()
    view = core.indices
    del core
    gc.collect()
    assert view.tolist() == [1, 0, 2, 1]  # the base keeps the CSR alive


def test_find_entry():
    g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    assert g.core.find_entry(0, 1) == 0 and g.core.find_entry(1, 2) == 2
    assert g.core.find_entry(0, 2) == -1
    assert g.edges_between(0, 2) == []


@pytest.mark.parametrize("seed", GRAPH_SEEDS[::7])
def test_visibility_mask_degrees(seed):
    spec = ref.random_graph(seed)
    g = spec.build_linkgraph()
    rng = np.random.default_rng(seed)
    mask = rng.random(g.num_nodes) < 0.6
    vm = g.visibility(mask)
    gx = spec.nx_graph([v for v, m in zip(g.ids, mask.tolist()) if m])
    assert vm.visible_count == int(mask.sum())
    assert np.array_equal(vm.mask, mask)
    assert vm.visible_degrees.tolist() == [gx.degree(v) if m else 0 for v, m in zip(g.ids, mask.tolist())]
    # The three spellings of a visible set give the same mask.
    by_ids = g.visibility([v for v, m in zip(g.ids, mask.tolist()) if m])
    assert np.array_equal(by_ids.mask, mask)
    assert g.visibility(vm) is vm
    assert g.visibility(None) is None


def test_scope_mask():
    g = LinkGraph.from_edges(
        [("a", "b")], nodes=[{"id": "a", "scopes": ["s1"]}, {"id": "b"}, {"id": "c", "scopes": ["s1", "s2"]}]
    )
    assert g.scope_mask(None).tolist() == [True, True, True]
    assert g.scope_mask([]).tolist() == [False, True, False]
    assert g.scope_mask(["s2"]).tolist() == [False, True, True]
    assert g.visibility_for_scopes(["s1"]) is g.visibility_for_scopes(["s1"])


def test_unicode_ids_sort_by_code_point():
    ids = ["日本", "é", "Z", "a", "\U0001d518", "ß", "a b", ""]
    g = LinkGraph.from_edges([(ids[i], ids[(i + 1) % len(ids)]) for i in range(len(ids))])
    assert g.ids == sorted(ids)
    assert g.shortest_path("", "日本") is not None


def test_version_matches_metadata():
    assert _core.__version__ == importlib.metadata.version("conceptwalk")
    assert conceptwalk.__version__ == _core.__version__


def test_walk_limit_constant():
    assert isinstance(_core.WALK_MAX_HOPS_LIMIT, int) and _core.WALK_MAX_HOPS_LIMIT >= 2


# What a stub cannot express (see the header of _core.pyi).
STUBTEST_ALLOWLIST = """
conceptwalk._core.CSRGraph
conceptwalk._core.VisibilityMask
conceptwalk._core.WalkResult
conceptwalk._core.WalkResult.__init__
conceptwalk._core.CSRGraph.__init__
conceptwalk._core.LiveGraph
conceptwalk._core.LiveGraph.__init__
conceptwalk._core.LiveVisibility
conceptwalk._core.LiveVisibility.__init__
conceptwalk._core.TextIndex
conceptwalk._core.TextIndex.__init__
conceptwalk._core.TextStats
conceptwalk._core.TextStats.__init__
conceptwalk._core.PPRResult
conceptwalk._core.PPRResult.__init__
conceptwalk._core.PPRBatch
conceptwalk._core.PPRBatch.__init__
conceptwalk._core.RAResult
conceptwalk._core.RAResult.__init__
conceptwalk._core.RABatch
conceptwalk._core.RABatch.__init__
conceptwalk._core.PathResult
conceptwalk._core.PathResult.__init__
conceptwalk._core.PathBatch
conceptwalk._core.PathBatch.__init__
conceptwalk._core.HopsResult
conceptwalk._core.HopsResult.__init__
conceptwalk._core.ChainsResult
conceptwalk._core.ChainsResult.__init__
conceptwalk._core.ContextResult
conceptwalk._core.ContextResult.__init__
conceptwalk._core.ContextBatch
conceptwalk._core.ContextBatch.__init__
conceptwalk._core.SparseVectors
conceptwalk._core.DenseVectors
conceptwalk._core.DenseDelta
conceptwalk._core.DenseDelta.__init__
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed")
def test_stubtest(tmp_path):
    """The hand-written _core.pyi matches the compiled module (mypy.stubtest)."""
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(conceptwalk.__file__)))
    allow = tmp_path / "allowlist.txt"
    allow.write_text(STUBTEST_ALLOWLIST)
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    site_dirs = {os.path.abspath(p) for p in site.getsitepackages() + [site.getusersitepackages()]}
    if pkg_parent not in site_dirs:  # an editable/source layout: point mypy at it (never at site-packages)
        env["MYPYPATH"] = pkg_parent
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy.stubtest",
            "conceptwalk._core",
            "--allowlist",
            str(allow),
            "--mypy-config-file",
            str(tmp_path / "none.ini"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _pybind_params(func) -> list[tuple[str, str | None]]:
    """(name, default text) of each parameter in a pybind11 signature line (no self)."""
    lines = func.__doc__.strip().splitlines()
    line = lines[0]
    if "Overloaded function." in lines[:2]:  # the first overload (a CSRGraph's; a LiveGraph's follows)
        line = next(x for x in lines if x.startswith("1. "))[3:]
    body = line[line.index("(") + 1 : line.rindex(") -> ")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    out = []
    for p in parts:
        name = p.split(":")[0].strip()
        default = p.split(" = ")[1].strip() if " = " in p else None
        if name != "self":
            out.append((name, default))
    return out


def _stub_params(fn) -> list[tuple[str, str | None]]:
    import ast

    args = [a for a in fn.args.args if a.arg != "self"]
    defaults = [None] * (len(args) - len(fn.args.defaults)) + [ast.unparse(d) for d in fn.args.defaults]
    return [(a.arg, d) for a, d in zip(args, defaults)]


def test_stub_signatures_match_pybind_docstrings():
    """stubtest cannot introspect pybind11 functions; compare names and defaults via __doc__."""
    import ast

    stub = os.path.join(os.path.dirname(conceptwalk.__file__), "_core.pyi")
    tree = ast.parse(open(stub, encoding="utf-8").read())
    checked = 0

    def same_default(a, b):
        if a is None or b is None:
            return a == b
        return (a == b) or (a not in ("None",) and b not in ("None",) and float(a) == float(b))

    def check(fn, runtime):
        nonlocal checked
        if any(isinstance(d, ast.Name) and d.id == "property" for d in fn.decorator_list):
            return
        want = _pybind_params(runtime)
        got = _stub_params(fn)
        assert [n for n, _ in got] == [n for n, _ in want], fn.name
        for (n, a), (_, b) in zip(got, want):
            assert same_default(a, b), (fn.name, n, a, b)
        checked += 1

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            check(node, getattr(_core, node.name))
        elif isinstance(node, ast.ClassDef):
            cls = getattr(_core, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    check(item, getattr(cls, item.name))
    public = [
        n
        for n in dir(_core)
        if not n.startswith("_") and callable(getattr(_core, n)) and not isinstance(getattr(_core, n), type)
    ]
    assert checked >= len(public) + 2
