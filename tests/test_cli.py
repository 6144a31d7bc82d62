"""The `conceptwalk` command line, each command run as a subprocess with its JSON parsed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conceptwalk import Caller, graph_context, link_suggest
from conceptwalk.kb.store import KnowledgeBase


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "conceptwalk", *args], capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"conceptwalk {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def kb_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    lines = [
        {"id": "auth", "type": "CONCEPT", "title": "Authentication", "body": "login tokens sessions"},
        {"id": "tokens", "type": "CONCEPT", "title": "Access tokens", "body": "jwt signing"},
        {"id": "jwt.py", "type": "FILE", "title": "jwt.py", "body": "sign and verify tokens", "scopes": ["team-a"]},
        {"id": "login", "type": "CONCEPT", "title": "Login flow", "body": "password login"},
        {"id": "audit", "type": "MEMORY", "title": "Audit note", "body": "login audit trail", "scopes": ["team-b"]},
        {"src": "auth", "dst": "tokens", "type": "RELATED_TO", "authority": "canonical"},
        {
            "src": "tokens",
            "dst": "jwt.py",
            "type": "IMPLEMENTED_BY",
            "extraction_method": "MANUAL",
            "extraction_confidence": 1.0,
        },
        {"src": "auth", "dst": "login", "type": "RELATED_TO"},
        {"src": "login", "dst": "jwt.py", "type": "RELATED_TO"},
        {"src": "audit", "dst": "login", "type": "ATTACHED_TO"},
        {"src": "audit", "dst": "auth", "type": "TAGGED_CONCEPT"},
    ]
    src = d / "kb.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    path = d / "kb.db"
    out = json.loads(run("import", str(path), str(src), "--json", "--quiet").stdout)
    assert out["nodes"] == 5 and out["edges"] == 6
    return path


def test_stats(kb_file: Path) -> None:
    stats = json.loads(run("stats", str(kb_file), "--json").stdout)
    assert stats["nodes"] == 5 and stats["edges"] == 6
    assert stats["projection"]["neighbour_pairs"] == 6
    assert "nodes" in run("stats", str(kb_file)).stdout


def test_context_matches_api(kb_file: Path) -> None:
    argv = ("context", str(kb_file), "login", "--concept", "auth", "-k", "5", "--json")
    everything = json.loads(run(*argv, "--scopes", "*").stdout)
    public = json.loads(run(*argv).stdout)  # no --scopes: public nodes only
    with KnowledgeBase.open(str(kb_file)) as kb:
        api = graph_context(kb, "login", concepts=["auth"], k=5, caller=Caller.all_access()).to_dict()
        api_public = graph_context(kb, "login", concepts=["auth"], k=5, caller=Caller.public()).to_dict()
    assert everything == json.loads(json.dumps(api))
    assert public == json.loads(json.dumps(api_public)) != everything
    text = run("context", str(kb_file), "login", "--concept", "auth").stdout
    assert "seeds:" in text and "hop" in text


def test_scopes_hide_nodes(kb_file: Path) -> None:
    for scopes, hidden in (("", {"jwt.py", "audit"}), ("team-a", {"audit"}), ("team-b", {"jwt.py"})):
        out = run("context", str(kb_file), "--concept", "auth", "-k", "10", "--scopes", scopes, "--json").stdout
        ids = {r["id"] for r in json.loads(out)["results"]}
        assert ids and not ids & hidden
    # a hidden concept and a missing one give the same error text
    hidden = run("suggest", str(kb_file), "audit", "--scopes", "team-a", check=False)
    missing = run("suggest", str(kb_file), "nothing", "--scopes", "team-a", check=False)
    assert hidden.returncode == missing.returncode == 2
    assert hidden.stderr.replace("'audit'", "X") == missing.stderr.replace("'nothing'", "X")


def test_suggest_and_path(kb_file: Path) -> None:
    out = json.loads(run("suggest", str(kb_file), "auth", "--min-shared", "1", "--json", "--scopes", "*").stdout)
    with KnowledgeBase.open(str(kb_file)) as kb:
        api = link_suggest(kb, "auth", min_shared=1, caller=Caller.all_access()).to_dict()
    assert out == json.loads(json.dumps(api))
    path = json.loads(run("path", str(kb_file), "auth", "jwt.py", "--json", "--scopes", "team-a").stdout)
    assert path["found"] and path["length"] == 2
    assert [n["id"] for n in path["nodes"]] == ["auth", "login", "jwt.py"]
    assert path["steps"][0]["edges"] == [{"type": "RELATED_TO", "direction": "forward"}]
    assert "path of length 2" in run("path", str(kb_file), "auth", "jwt.py", "--scopes", "team-a").stdout


def test_bad_input_exits_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n{"src": "a"\n')
    proc = run("import", str(tmp_path / "x.db"), str(bad), "--quiet", check=False)
    assert proc.returncode == 2 and "bad.jsonl" in proc.stderr
    assert ":2" in proc.stderr or "line 2" in proc.stderr
    proc = run("stats", str(tmp_path / "missing.db"), check=False)
    assert proc.returncode == 2 and "not found" in proc.stderr
    proc = run("context", str(tmp_path / "missing.db"), "q", check=False)
    assert proc.returncode == 2


def test_demo(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    out = json.loads(run("demo", "--path", str(db), "--concepts", "300", "--repeat", "3", "--json").stdout)
    assert out["graph"]["nodes"] > 300
    assert out["context"]["results"] and out["suggest"]["concept"] and out["path"]["found"]
    ids = {r["id"] for r in out["context_tenant_a"]["results"]}
    with KnowledgeBase.open(str(db)) as kb:
        for nid in ids:
            scopes = kb.node(nid)["scopes"] or []
            assert not scopes or "tenant-a" in scopes
    # second run reuses the file and prints readable text
    text = run("demo", "--path", str(db), "--concepts", "300", "--repeat", "3").stdout
    assert "reusing" in text and "graph_context" in text and "link_suggest" in text


def test_dataset_cwe(tmp_path: Path) -> None:
    from conceptwalk.kb import datasets

    if not datasets.available()["cwe"]:
        pytest.skip("pip install cwe2")
    db = tmp_path / "cwe.db"
    out = json.loads(run("dataset", "cwe", str(db), "--json").stdout)
    assert out["nodes"] > 1000
    path = json.loads(run("path", str(db), "CWE-89", "CWE-74", "--json").stdout)
    assert path["found"]


def test_n_hits_is_the_apis_n_hits(kb_file: Path) -> None:
    """``--n-hits`` (and its old name ``--hits``) sets graph_context's n_hits: the search seeds."""
    argv = ("context", str(kb_file), "login tokens", "--json", "--scopes", "*")
    one = json.loads(run(*argv, "--n-hits", "1").stdout)
    assert json.loads(run(*argv, "--hits", "1").stdout) == one
    with KnowledgeBase.open(str(kb_file)) as kb:
        api = graph_context(kb, "login tokens", caller=Caller.all_access(), n_hits=1).to_dict()
    assert one == json.loads(json.dumps(api))
    hits = [x for x in one["seeds"] if x["source"] == "search"]  # (the ids it names seed too)
    default = [x for x in json.loads(run(*argv).stdout)["seeds"] if x["source"] == "search"]
    assert len(hits) == 1 < len(default)


@pytest.mark.parametrize(
    "argv",
    [
        ["context", "{kb}", "login"],
        ["suggest", "{kb}", "auth"],
        ["path", "{kb}", "auth", "login"],
        ["query", "{kb}", "login"],
        ["probe", "{kb}"],
    ],
    ids=lambda a: a[0],
)
def test_every_answering_command_warns_about_an_unknown_scope(kb_file: Path, argv: list[str]) -> None:
    argv = [str(kb_file) if a == "{kb}" else a for a in argv]
    p = run(*argv, "--scopes", "team-a,team-zz")
    assert p.stderr == (
        "conceptwalk: warning: no node carries scope 'team-zz' (a typo?); it grants nothing: "
        "see `conceptwalk stats` for the scopes\n"
    )
    assert run(*argv, "--scopes", "team-a").stderr == "" == run(*argv).stderr
