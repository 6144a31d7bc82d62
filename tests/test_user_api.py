"""Issue 21 items 2-4: the Python API behaves like its neighbours (networkx, a LangChain
retriever), warnings where data is probably wrong, and the CLI's output and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from conceptwalk import Caller, InputError, KnowledgeBase, LinkGraph, NotFoundError
from conceptwalk import graph_context, graph_path, link_suggest
from conceptwalk.bench.harness import Row, format_table, run_suite, workload_from_graph
from conceptwalk.kb.importers import import_edge_list, import_jsonl
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig
from conceptwalk.wrap.embed import HashingEmbedder

ALL = Caller.all_access()


# ---------------------------------------------------------------------- Caller.with_scopes
def test_with_scopes_takes_any_iterable():
    want = Caller.with_scopes("t1", "t2")
    for got in (
        Caller.with_scopes(["t1", "t2"]),
        Caller.with_scopes(("t1", "t2")),
        Caller.with_scopes({"t1"}, "t2"),
        Caller.with_scopes(s for s in ["t2", "t1"]),
        Caller.with_scopes(frozenset({"t1", "t2"})),
    ):
        assert got == want
    assert Caller.with_scopes() == Caller.public()
    with pytest.raises(TypeError, match="strings or iterables of strings"):
        Caller.with_scopes(["t1", 3])
    with pytest.raises(TypeError, match="strings or iterables of strings"):
        Caller.with_scopes(7)


# ---------------------------------------------------------------------- LinkGraph accessors
EDGES = [("a", "b", "X"), ("b", "a", "Y"), ("a", "c"), ("c", "d"), ("d", "d"), ("e", "a")]


def test_linkgraph_neighbors_degree_contains_match_networkx():
    g = LinkGraph.from_edges(EDGES, nodes=[{"id": "h", "scopes": ["s"]}, {"id": "lone"}])
    ref = nx.Graph([(s, d) for s, d, *_ in EDGES if s != d])
    ref.add_nodes_from(["h", "lone", "d"])
    for n in ref.nodes:
        assert n in g
        assert g.neighbors(n) == sorted(ref.neighbors(n)), n
        assert g.degree(n) == ref.degree(n), n
    assert "zz" not in g and 3 not in g
    with pytest.raises(NotFoundError, match="node_id not found: 'zz'"):
        g.neighbors("zz")
    with pytest.raises(NotFoundError):
        g.degree("zz")


def test_linkgraph_accessors_respect_visibility():
    g = LinkGraph.from_edges([("a", "h"), ("a", "b")], nodes=[{"id": "h", "scopes": ["s"]}])
    public = Caller.public().visibility(g)
    assert g.neighbors("a", visible=public) == ["b"] and g.degree("a", visible=public) == 1
    assert g.neighbors("a") == ["b", "h"] and g.degree("a") == 2
    with pytest.raises(NotFoundError) as hidden:
        g.neighbors("h", visible=public)
    with pytest.raises(NotFoundError) as missing:
        g.neighbors("q", visible=public)
    assert str(hidden.value).replace("'h'", "<id>") == str(missing.value).replace("'q'", "<id>")


def test_edges_between_takes_ids_or_indices():
    g = LinkGraph.from_edges(EDGES)
    assert g.edges_between("a", "b") == g.edges_between(g.index("a"), g.index("b")) == [0, 1]
    assert g.edges_between("b", "a") == [0, 1]
    assert g.edges_between("a", "d") == []
    with pytest.raises(NotFoundError, match="b not found: 'zz'"):
        g.edges_between("a", "zz")
    with pytest.raises(InputError, match="two node ids .* or two node indices"):
        g.edges_between("a", 1)
    with pytest.raises(InputError, match=r"node index 99 outside \[0, 5\)"):
        g.edges_between(0, 99)


# ---------------------------------------------------------------------- results sized, iterable
def test_results_are_sized_and_iterable():
    g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("x", "z")])
    ctx = graph_context(g, concepts=["a"], k=3, caller=ALL)
    assert len(ctx) == len(ctx.results) == 3 and list(ctx) == ctx.results
    sug = link_suggest(g, "a", caller=ALL)
    assert len(sug) == 1 and [s.id for s in sug] == ["b"]
    path = graph_path(g, "a", "z", caller=ALL)
    assert len(path) == 3 and list(path) == ["a", "x", "z"] == path.ids
    none = graph_path(LinkGraph.from_edges([("a", "b")], nodes=["c"]), "a", "c", caller=ALL)
    assert len(none) == 0 and list(none) == [] and not none.found
    # result objects stay true when empty (code that tests `if result:` keeps working)
    empty = link_suggest(g, "z", caller=ALL)
    assert len(empty) == 0 and bool(empty) and bool(none)
    assert "1 candidate with" in str(sug) and "1 candidates" not in str(sug)


# ---------------------------------------------------------------------- WalkConfig embedder
def test_walkconfig_takes_an_embedder_object_as_the_retriever_does():
    emb = HashingEmbedder(dim=64)
    cfg = WalkConfig(embedder=emb)
    assert cfg.embedder is emb and cfg.to_dict()["embedder"] == emb.name
    g = LinkGraph.from_edges(
        [("c:auth", "f:jwt", "IMPLEMENTED_BY")], nodes=[{"id": "c:auth", "type": "CONCEPT", "title": "authentication"}]
    )
    via_config = ConceptAnchoredRetriever(lambda t, k: [], g, config=cfg)
    via_kw = ConceptAnchoredRetriever(lambda t, k: [], g, embedder=emb)
    assert via_config.resolver.embedder is emb and via_kw.resolver.embedder is emb
    q = "authentication"
    assert via_config.query(q, 3, concept_walk=True, caller=ALL) == via_kw.query(q, 3, concept_walk=True, caller=ALL)
    with pytest.raises(InputError, match="embedder must be an embedder spec string, an Embedder"):
        WalkConfig(embedder=42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- what-to-do errors
def test_unknown_keys_say_what_to_do():
    with KnowledgeBase.open(":memory:") as kb:
        with pytest.raises(InputError, match=r"unknown key 'weight' \(an edge has .*\); edges carry no weight"):
            kb.add_edges([{"src": "a", "dst": "b", "weight": 0.5}])
        with pytest.raises(InputError, match="did you mean 'authority'"):
            kb.add_edges([{"src": "a", "dst": "b", "autority": "x"}])
        with pytest.raises(InputError, match=r"\(a node has id, .*\); did you mean 'title'"):
            kb.add_nodes([{"id": "a", "titel": "x"}])
        assert kb.stats()["nodes"] == 0


def test_knowledgebase_constructor_points_at_open(tmp_path):
    path = str(tmp_path / "x.db")
    with pytest.raises(InputError, match=r"use KnowledgeBase.open\('.*x.db'\)"):
        KnowledgeBase(path)  # type: ignore[arg-type]
    assert not os.path.exists(path)


# ---------------------------------------------------------------------- endpoint-only nodes
def test_import_counts_and_names_endpoint_only_nodes(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"src": "svc:auth", "dst": "svc:autth"}\n{"id": "svc:auth"}\n{"src": "svc:auth", "dst": "doc:x"}\n')
    with KnowledgeBase.create(tmp_path / "kb.db") as kb:
        s = import_jsonl(kb, f)
        assert s.endpoint_only_nodes == 2 and s.endpoint_only_examples == ["doc:x", "svc:autth"]
        assert "2 nodes created only as edge endpoints" in str(s) and "svc:autth" in str(s)
        again = import_jsonl(kb, f)  # now stored: not new, not counted
        assert again.endpoint_only_nodes == 0 and "warning" not in str(again)
    with KnowledgeBase.create(tmp_path / "kb2.db") as kb:
        with pytest.raises(InputError, match=r"2 edge endpoints not defined as a node .*doc:x, svc:autth"):
            import_jsonl(kb, f, missing_endpoints="refuse")
        assert kb.stats()["nodes"] == 0  # nothing written
        csv = tmp_path / "e.csv"
        csv.write_text("src,dst\n" + "".join(f"n{i},m{i}\n" for i in range(8)))
        s = import_edge_list(kb, csv)
        assert s.endpoint_only_nodes == 16 and len(s.endpoint_only_examples) == 5 and ", ..." in str(s)
        with pytest.raises(InputError, match="missing_endpoints must be 'create' or 'refuse'"):
            import_edge_list(kb, csv, missing_endpoints="maybe")


def test_stats_lists_scopes_and_unknown_scopes():
    with KnowledgeBase.open(":memory:") as kb:
        kb.add_nodes([{"id": "a", "scopes": ["t1", "t2"]}, {"id": "b", "scopes": ["t1"]}, {"id": "c"}])
        s = kb.stats()
        assert s["scopes"] == {"t1": 2, "t2": 1} and s["public_nodes"] == 1
        g = kb.graph()
    assert Caller.with_scopes("t1", "tenant-zzz").unknown_scopes(g) == ["tenant-zzz"]
    assert Caller.all_access().unknown_scopes(g) == [] == Caller.public().unknown_scopes(g)


# ---------------------------------------------------------------------- bench
@pytest.mark.parametrize("n", [2, 5, 20, 33])
def test_bench_suite_runs_on_small_graphs(n):
    g = LinkGraph.from_edges([(f"n{i}", f"n{(i * 7 + 1) % n}") for i in range(n)])
    w = workload_from_graph(g, "small", n_queries=50)
    rows = run_suite(w, rounds=1, n_queries=50, threads_check=False)
    groups = [r.group for r in rows]
    assert {"ppr rotating", "link_suggest", "graph_path", "small graph", "masked context"} <= set(groups)
    assert all(r.met in ("met", "not met", "n/a") for r in rows)
    table = format_table(rows)
    assert "| met |" in table and "nan" not in table


def test_row_met():
    assert Row("x", "o", 1.0, "r", 61.0, ">= 60x").met == "met"
    assert Row("x", "o", 1.0, "r", 59.0, ">= 60x").met == "not met"
    assert Row("m", "o", 1.4, "r", 1.0, "masked <= 1.3x unmasked").met == "not met"
    assert Row("x", "o", float("nan")).met == "n/a"


# ---------------------------------------------------------------------- CLI
def run(*args, ok=True, env=None):
    p = subprocess.run(
        [sys.executable, "-m", "conceptwalk", *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    if ok:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def small_db(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    f = d / "a.jsonl"
    f.write_text(
        '{"id": "c:a", "type": "CONCEPT", "title": "alpha", "scopes": ["t1"]}\n'
        '{"id": "c:b", "type": "CONCEPT", "title": "beta"}\n'
        '{"src": "c:a", "dst": "c:b"}\n{"src": "c:b", "dst": "svc:autth"}\n'
    )
    db = str(d / "kb.db")
    run("import", db, str(f), "--quiet")
    return db, str(f)


def test_cli_import_summary_json_and_no_bar_off_a_terminal(small_db, tmp_path):
    db, f = small_db
    p = run("import", str(tmp_path / "k.db"), f)
    assert "{" not in p.stdout and "'nodes'" not in p.stdout
    assert "2 nodes, 2 edges and 0 aliases read from 4 lines" in p.stdout
    assert "1 node created only as edge endpoints" in p.stdout and "svc:autth" in p.stdout
    assert p.stderr == ""  # no progress bar fragments when stderr is not a terminal
    j = json.loads(run("import", str(tmp_path / "k3.db"), f, "--json").stdout)
    assert j["ignored_attributes"] == [] and j["endpoint_only_nodes"] == 1
    assert j["endpoint_only_examples"] == ["svc:autth"] and j["files"][0]["file"] == f
    p = run("import", str(tmp_path / "k2.db"), f, "--missing-endpoints", "refuse", ok=False)
    assert p.returncode == 2 and "svc:autth" in p.stderr


def test_cli_empty_context_is_a_usage_error(small_db):
    db, _ = small_db
    p = run("context", db, ok=False)
    assert p.returncode == 2 and "needs a question or at least one --concept" in p.stderr
    assert run("context", db, "--concept", "c:b", "--n-hits", "3").returncode == 0
    assert run("context", db, "beta", "--hits", "3").returncode == 0  # the old name still works


def test_cli_warns_about_an_unknown_scope_and_stats_lists_scopes(small_db):
    db, _ = small_db
    p = run("context", db, "beta", "--scopes", "tenant-zzz")
    assert "no node carries scope 'tenant-zzz'" in p.stderr
    assert "warning" not in run("context", db, "beta", "--scopes", "t1").stderr
    assert "tenant-zzz" in run("probe", db, "--scopes", "tenant-zzz").stderr
    s = json.loads(run("stats", db, "--json").stdout)
    assert s["scopes"] == {"t1": 1} and s["public_nodes"] == 2
    assert "t1: 1" in run("stats", db).stdout


def test_cli_synth_force_replaces(tmp_path):
    db = str(tmp_path / "s.db")
    run("synth", db, "--concepts", "10", "--quiet")
    n = json.loads(run("stats", db, "--json").stdout)["nodes"]
    p = run("synth", db, "--concepts", "10", "--quiet", ok=False)
    assert p.returncode == 2 and "--force to replace it" in p.stderr
    run("synth", db, "--concepts", "10", "--quiet", "--force")
    assert json.loads(run("stats", db, "--json").stdout)["nodes"] == n


def test_cli_bench_on_a_small_kb(tmp_path):
    f = tmp_path / "e.csv"
    f.write_text("".join(f"n{i},n{(i + 1) % 5}\n" for i in range(5)))
    db = str(tmp_path / "k.db")
    run("import", db, str(f), "--quiet")
    p = run("bench", db, "--queries", "3", "--rounds", "1", "--no-threads")
    assert "| met |" in p.stdout and "not measured" in p.stdout
    j = json.loads(run("bench", db, "--queries", "3", "--rounds", "1", "--no-threads", "--json").stdout)
    assert {r["met"] for r in j["rows"]} <= {"met", "not met", "n/a"}


def test_cli_every_flag_has_help():
    from conceptwalk.cli import build_parser

    parser = build_parser()
    missing = []

    def walk(p, where):
        for a in p._actions:
            if a.__class__.__name__ == "_SubParsersAction":
                for name, sp in a.choices.items():
                    walk(sp, f"{where} {name}")
            elif a.__class__.__name__ != "_HelpAction" and not a.help:
                missing.append(f"{where} {'/'.join(a.option_strings) or a.dest}")

    walk(parser, "conceptwalk")
    assert not missing, missing


def test_no_none_or_bad_plurals_in_outputs(small_db):
    db, _ = small_db
    outs = [run("probe", db).stdout, run("suggest", db, "c:b").stdout, run("stats", db).stdout]
    for out in outs:
        assert "None" not in out and "1 candidates" not in out and " a edge" not in out, out


# ---------------------------------------------------------------------- the project's habits (item 6)
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.repository
def test_license_is_mit_as_the_package_declares():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Permission is hereby granted, free of charge" in text
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.repository
def test_contributing_covers_every_topic_and_names_real_files():
    """CONTRIBUTING.md: where a capability goes on each layer, build, test, benchmark, fuzz, the
    sanitizers; every repository path it names in backticks exists (so it cannot go stale)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    for topic in ("layer", "Build", "Test", "Benchmark", "Fuzz", "sanitizers"):
        assert any(topic in h for h in headings), (topic, headings)
    for layer in ("csrc/", "graph/", "tools/", "kb/", "wrap/", "serve/", "cli/"):
        assert layer in text, layer
    named = set(re.findall(r"(?<![\w/.-])((?:\.ci|scripts|fuzz|tests|benchmarks|docs)/[\w./<>*-]+)", text))
    placeholders = {"tests/test_x.py"}  # "one file while working"
    named = {n.rstrip(".") for n in named if "<" not in n and "*" not in n} - placeholders
    assert len(named) >= 8, named
    missing = sorted(n for n in named if not (ROOT / n).exists())
    assert not missing, missing


@pytest.mark.repository
def test_changelog_lists_this_round_first_with_its_renames():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## (.+)$", text, flags=re.M)
    assert releases and releases[0].startswith("Unreleased (") and "21" in releases[0]
    this_round = text.split("\n## ", 2)[1]
    assert "### Renamed" in this_round and "### Safety (fail closed)" in this_round
    assert "`--n-hits`" in this_round and "`nHits`" in this_round


@pytest.mark.repository
def test_formatters_are_configured_and_pinned_alike_in_ci_and_pre_commit():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "[tool.ruff]" in pyproject and "[tool.ruff.lint]" in pyproject and "[tool.ruff.format]" in pyproject
    assert "BasedOnStyle:" in (ROOT / ".clang-format").read_text(encoding="utf-8")
    extra = (ROOT / ".ci" / "extra").read_text(encoding="utf-8")
    pre = (ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    ruff = re.search(r'"ruff==([\d.]+)"', extra)
    clang = re.search(r'"clang-format==([\d.]+)"', extra)
    assert ruff and clang, "ruff and clang-format are pinned in .ci/extra"
    for cmd in ("ruff check python tests", "ruff format --check python tests", "clang-format --dry-run -Werror"):
        assert cmd in extra, cmd
    assert f"ruff-pre-commit\n    rev: v{ruff.group(1)}" in pre and f"rev: v{clang.group(1)}" in pre
    for hook in ("id: ruff\n", "id: ruff-format", "id: clang-format"):
        assert hook in pre, hook


@pytest.mark.repository
def test_ci_workflow_runs_ci_run_on_every_push_and_pull_request():
    wf = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    trigger = wf[wf.index("\non:") : wf.index("\njobs:")]
    assert re.search(r"^  push:\s*$", trigger, flags=re.M) and re.search(r"^  pull_request:\s*$", trigger, flags=re.M)
    assert "paths" not in trigger and "branches" not in trigger  # every push and pull request
    assert re.search(r"run: bash \.ci/run\s*$", wf, flags=re.M)
    assert (ROOT / ".github" / "workflows" / "wheels.yml").exists()


@pytest.mark.repository
def test_the_tree_is_ruff_clean():
    """The lint and format check of .ci/extra, here when the pinned ruff is installed (with the
    docs extra or the pre-commit set-up; .ci/extra installs it and runs the same check)."""
    extra = (ROOT / ".ci" / "extra").read_text(encoding="utf-8")
    pinned = re.search(r'"ruff==([\d.]+)"', extra).group(1)  # type: ignore[union-attr]
    p = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True)
    if p.returncode != 0 or p.stdout.split()[-1] != pinned:
        pytest.skip(f"ruff {pinned} is not installed")
    dirs = ["python", "tests", "benchmarks", "scripts", "fuzz"]
    for args in (["check", *dirs], ["format", "--check", *dirs]):
        p = subprocess.run([sys.executable, "-m", "ruff", *args], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stdout + p.stderr
