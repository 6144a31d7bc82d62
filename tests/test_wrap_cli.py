"""`conceptwalk query`, `probe` and `events summarize` as subprocesses (--json parsed), and the
probe's figures on a small hand-made KB."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conceptwalk import Caller
from conceptwalk.wrap import WalkConfig, builtin_flat_search, format_probe, probe
from test_wrap_retriever import make_kb


def run(*args, ok=True):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    p = subprocess.run(
        [sys.executable, "-m", "conceptwalk", *args], capture_output=True, text=True, timeout=120, env=env
    )
    if ok:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("cli") / "kb.db")
    make_kb(path).close()
    return path


def test_query_json_flat_is_the_builtin_search_byte_for_byte(db):
    from conceptwalk.kb.store import KnowledgeBase

    p = run("query", db, "session tokens", "-k", "3", "--json", "--scopes", "*")
    with KnowledgeBase.open(db) as kb:
        want = json.dumps(builtin_flat_search(kb, caller=Caller.all_access())("session tokens", 3), ensure_ascii=False)
        public = json.dumps(builtin_flat_search(kb, caller=Caller.public())("session tokens", 3), ensure_ascii=False)
    assert p.stdout == want + "\n"
    p = run("query", db, "session tokens", "-k", "3", "--json", "--scopes", "")
    assert all(h["id"] not in ("f:hidden", "c:secret") for h in json.loads(p.stdout))
    assert p.stdout == run("query", db, "session tokens", "-k", "3", "--json").stdout == public + "\n"


def test_query_with_concept_walk_and_events(db, tmp_path):
    ev = tmp_path / "ev.jsonl"
    p = run("query", db, "authn", "-k", "2", "--concept-walk", "--json", "--scopes", "", "--events", f"jsonl:{ev}")
    out = json.loads(p.stdout)
    walk = [o for o in out if o.get("via") == "concept-walk"]
    assert walk and walk[0]["id"] == "f:login"
    assert "f:hidden" not in p.stdout and "c:secret" not in p.stdout
    text = run("query", db, "authn", "--concept-walk", "--events", f"jsonl:{ev}").stdout
    assert "concepts: c:auth (alias 1.00)" in text and "+ f:login" in text
    s = json.loads(run("events", "summarize", str(ev), "--json").stdout)
    assert s["events"] == 2 and s["contributionRate"] == 1.0 and s["walkMs"]["p50"] > 0
    assert "contributed (100.0%)" in run("events", "summarize", str(ev)).stdout


def test_probe_cli(db):
    rep = json.loads(run("probe", db, "--json", "--scopes", "*").stdout)
    assert rep == probe(db_kb(db), caller=Caller.all_access())
    rep = json.loads(run("probe", db, "--json").stdout)
    assert rep == probe(db_kb(db), caller=Caller.public())  # the CLI's default: public nodes only
    assert "concepts with admissible neighbours" in run("probe", db).stdout


def db_kb(path):
    from conceptwalk.kb.store import KnowledgeBase

    return KnowledgeBase.open(path)


def test_cli_errors(tmp_path):
    p = run("query", str(tmp_path / "missing.db"), "x", ok=False)
    assert p.returncode == 2 and "not found" in p.stderr
    p = run("events", "summarize", str(tmp_path / "missing.jsonl"), ok=False)
    assert p.returncode == 2


def test_probe_figures():
    kb = make_kb()
    assert probe(kb) == probe(kb, caller=Caller.public())  # no caller: public, never all access
    rep = probe(kb, caller=Caller.all_access())
    # visible to everyone: 5 concepts; c:billing, c:auth, c:secret and c:tokens have an admission
    # neighbour at 1 hop; c:auth-old only has a MENTIONS edge (not admitted) and no expansion edge
    assert rep["concepts"] == 5
    assert rep["reach"] == {"within1Hop": 0.8, "within2Hops": 0.8, "concepts1Hop": 4, "concepts2Hops": 4}
    # candidates within 2 hops: auth {login, hidden, jwt, adr1, note} = 5, tokens {jwt, adr1, note, login,
    # hidden} = 5, secret {hidden, login} = 2, billing {ledger} = 1, auth-old 0
    assert rep["candidatesPerConcept"] == {"mean": 2.6, "median": 2, "max": 5, "hops": 2}
    assert rep["fragmentation"]["fragmentedGroups"] == 1  # c:auth with its fragment id c:auth-old
    assert rep["fragmentation"]["idsPerGroup"]["max"] == 2
    prov = rep["provenance"]
    assert prov["authority"] == {"storage": 2, "storageShare": 0.2, "projection": "loaded", "projectionCount": 2}
    assert prov["extractionProvenance"]["confidence"]["storage"] == 3
    assert rep["gates"]["missing"] == ["PARENT_CONCEPT", "TAGGED_CONCEPT"]
    public = probe(kb, caller=Caller.public())
    assert public["concepts"] == 4 and public["candidatesPerConcept"]["max"] == 4
    light = probe(kb, WalkConfig(annotations=False, max_hops=1), caller=Caller.all_access())
    assert light["provenance"]["authority"]["projection"] == "not-loaded"
    assert light["provenance"]["authority"]["storage"] == 2
    assert light["candidatesPerConcept"]["hops"] == 1
    assert "fragmentation" in format_probe(rep)


def test_query_flags_set_the_walk_and_cap_the_additions(db):
    base = json.loads(run("query", db, "session tokens", "-k", "2", "--concept-walk", "--json").stdout)
    added = [r for r in base if r.get("via") == "concept-walk"]
    assert added, "the fixture's walk adds something with the defaults"
    capped = json.loads(
        run(
            "query", db, "session tokens", "-k", "2", "--concept-walk", "--json", "--max-added", "1", "--read-only"
        ).stdout
    )
    assert capped[:2] == base[:2] and len([r for r in capped if r.get("via") == "concept-walk"]) == 1
    # admission over a type the graph lacks: nothing is added, the flat results stay
    none = json.loads(
        run(
            "query", db, "session tokens", "-k", "2", "--concept-walk", "--json", "--admit-edge-types", "NO_SUCH_TYPE"
        ).stdout
    )
    assert none == base[:2]
    p = run("query", db, "x", "--concept-types", ",", ok=False)
    assert p.returncode == 2 and "--concept-types" in p.stderr


def test_probe_takes_the_settings_and_read_only(db):
    rep = json.loads(run("probe", db, "--json", "--read-only", "--concept-types", "NO_SUCH_TYPE").stdout)
    assert rep["concepts"] == 0 and rep["config"]["conceptNodeTypes"] == ["NO_SUCH_TYPE"]
    rep = json.loads(run("probe", db, "--json", "--expand-edge-types", "RELATED_TO", "--max-added", "3").stdout)
    assert rep["config"]["expandEdgeTypes"] == ["RELATED_TO"] and rep["config"]["maxCandidates"] == 3
    assert "suggested" not in rep  # these settings already reach candidates: the report is probe()'s


def test_probe_suggests_a_query_line_that_works_on_cwe(tmp_path):
    import shlex

    from conceptwalk.kb import datasets

    if not datasets.available()["cwe"]:
        pytest.skip("pip install cwe2")
    db = str(tmp_path / "cwe.db")
    run("dataset", "cwe", db)
    before = run("query", db, "SQL injection", "--concept-walk", "--read-only").stdout
    assert "concepts: (none resolved)" in before
    out = run("probe", db, "--read-only").stdout
    assert "0 concepts" in out and "suggested for this KB" in out
    line = out.strip().splitlines()[-1].strip()
    argv = shlex.split(line)
    assert argv[:3] == ["conceptwalk", "query", db] and "--concept-types" in argv
    got = json.loads(run(*argv[1:], "-k", "5", "--json", "--read-only").stdout)
    walked = [r for r in got if r.get("via") == "concept-walk"]
    assert len(got) > 5 and 0 < len(walked) <= 10 and all(r["paths"] for r in walked)
    text = run(*argv[1:], "--read-only").stdout
    assert "none resolved" not in text.splitlines()[0] and "walk added 0" not in text.splitlines()[0]
    # the same settings answer another question
    again = run("query", db, "SQL injection", *argv[4:], "--read-only").stdout.splitlines()[0]
    assert "CWE-89" in again and "walk added 0" not in again
    rep = json.loads(run("probe", db, "--json").stdout)
    assert rep["suggested"]["command"] == line and rep["suggested"]["conceptNodeTypes"] == ["WEAKNESS"]
