"""The explorer's JSON endpoints (issue 34): every answer equals, for its caller, the answer on
the store with the caller's hidden nodes deleted (tests/deletion_oracle.py); bad input is a
clear 4xx; nothing is written to the store; the page's files are served from the package."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from conceptwalk import Caller, InputError, NotFoundError
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.serve.explore import ENDPOINTS, Explorer, static_files
from deletion_oracle import deleted_store, open_store
from explore_fixture import TEAM_A_ONLY, TEAM_B_ONLY, build, rows

CALLERS = [
    ("public", Caller.public()),
    ("team-a", Caller.with_scopes("team-a")),
    ("team-b", Caller.with_scopes("team-b")),
    ("both", Caller.with_scopes("team-a", "team-b")),
    ("all", Caller.all_access()),
]
#: What varies between two runs of the same wrapped query (the event's clock and timings).
VOLATILE = ("timestamp", "flatMs", "resolveMs", "walkMs")


def _stable(out: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(out))  # what the HTTP layer sends
    out.pop("caller", None)
    for key in VOLATILE:
        (out.get("event") or {}).pop(key, None)
    return out


def _ask(ex: Explorer, endpoint: str, params: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", _stable(ex.answer(endpoint, params))
    except NotFoundError as exc:
        return "not found", str(exc)


def _requests(nodes: list[dict[str, Any]], words: list[str]) -> list[tuple[str, dict[str, Any]]]:
    ids = [n["id"] for n in nodes]
    reqs: list[tuple[str, dict[str, Any]]] = [("overview", {})]
    for w in words:
        reqs.append(("search", {"q": [w]}))
        reqs.append(("context", {"question": [w], "k": ["8"]}))
        reqs.append(("context", {"question": [w], "rank": ["coverage"], "max_hops": ["2"]}))
        reqs.append(("query", {"text": [w], "k": ["3"]}))
    for i, a in enumerate(ids):
        reqs.append(("node", {"id": [a]}))
        reqs.append(("suggest", {"concept": [a], "min_shared": ["1"]}))
        reqs.append(("context", {"concept": [a], "k": ["6"]}))
        b = ids[(i * 7 + 3) % len(ids)]
        reqs.append(("path", {"source": [a], "target": [b]}))
    return reqs


def _check_oracle(nodes, edges, aliases, words, tmp_path: Path | None = None) -> int:
    full = open_store(nodes, edges, aliases)
    ex = Explorer(full, CALLERS)
    checked = 0
    for index, (label, caller) in enumerate(CALLERS):
        small = deleted_store(nodes, edges, aliases, caller)
        if small is None:
            continue
        oracle = Explorer(small, [(label, caller)])
        for endpoint, params in _requests(nodes, words):
            got = _ask(ex, endpoint, {**params, "caller": [str(index)]})
            want = _ask(oracle, endpoint, params)
            assert got == want, (label, endpoint, params)
            checked += 1
    return checked


def test_fixture_every_endpoint_equals_the_deletion_oracle():
    nodes, edges, aliases = rows()
    n = _check_oracle(nodes, edges, aliases, ["tokens", "login flow", "signing keys", "billing", "session expiry"])
    assert n > 300


@pytest.mark.parametrize("seed", range(12))
def test_random_stores_every_endpoint_equals_the_deletion_oracle(seed):
    rng = random.Random(seed)
    words = ["graph", "walk", "token", "auth", "cache", "index", "plan"]
    nodes = []
    for i in range(rng.randint(4, 12)):
        nodes.append(
            {
                "id": f"n{i:02d}",
                "type": rng.choice(["CONCEPT", "CONCEPT", "DOC", "FILE"]),
                "title": " ".join(rng.sample(words, rng.randint(1, 3))),
                "body": " ".join(rng.choices(words, k=rng.randint(0, 4))) or None,
                "scopes": rng.choice([None, None, ["team-a"], ["team-b"], ["team-a", "team-b"]]),
            }
        )
    edges = []
    for _ in range(rng.randint(3, 3 * len(nodes))):
        a, b = rng.sample(range(len(nodes)), 2)
        e = {"src": nodes[a]["id"], "dst": nodes[b]["id"], "type": rng.choice(["IMPLEMENTED_BY", "RELATED_TO"])}
        if rng.random() < 0.5:
            e["authority"] = rng.choice(["canonical", "code"])
        if rng.random() < 0.3:
            e.update(extraction_method="TAGGED_CONCEPT", extraction_confidence=0.8)
        edges.append(e)
    aliases = [(words[i], nodes[i % len(nodes)]["id"]) for i in range(3)]
    assert _check_oracle(nodes, edges, aliases, words[:4]) > 0


def test_a_scoped_node_never_reaches_a_caller_without_the_scope():
    """The fixture's answers, read as text: no id of a team-a node in anything the public or
    team-b caller is answered, and the counts differ from team-a's where they should."""
    nodes, edges, aliases = rows()
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS)
    seen_by = {}
    for index in (0, 1, 2):
        blob = []
        for endpoint, params in _requests(nodes, ["tokens", "signing keys"]):
            kind, out = _ask(ex, endpoint, {**params, "caller": [str(index)]})
            if kind == "ok":
                blob.append(json.dumps(out))
        seen_by[index] = "\n".join(blob)
    for hidden in TEAM_A_ONLY:
        assert hidden not in seen_by[0] and hidden not in seen_by[2]
        assert hidden in seen_by[1]
    for hidden in TEAM_B_ONLY:
        assert hidden not in seen_by[0] and hidden not in seen_by[1]
        assert hidden in seen_by[2]
    tokens = {i: ex.answer("node", {"id": ["concept/tokens"], "caller": [str(i)]}) for i in (0, 1)}
    assert tokens[1]["degree"] == tokens[0]["degree"] + 1  # jwt_secret.py, for team-a only


def test_node_page_lists_the_scopes_the_caller_may_know():
    nodes, edges, aliases = rows()
    nodes = nodes + [{"id": "shared", "title": "Shared", "scopes": ["team-a", "team-b"]}]
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS)
    got = {i: ex.answer("node", {"id": ["shared"], "caller": [str(i)]})["scopes"] for i in (1, 2, 3, 4)}
    assert got == {1: ["team-a"], 2: ["team-b"], 3: ["team-a", "team-b"], 4: ["team-a", "team-b"]}
    page = ex.answer("node", {"id": ["concept/tokens"], "caller": ["4"]})
    groups = {(g["type"], g["direction"]): g["ids"] for g in page["byEdgeType"]}
    assert groups[("IMPLEMENTED_BY", "out")] == ["file/jwt_secret.py", "file/session.py"]
    assert groups[("RELATED_TO", "out")] == ["concept/crypto", "file/billing.py"]
    assert groups[("RELATED_TO", "in")] == ["concept/auth", "concept/billing", "concept/sessions"]
    assert page["public"] is True and page["body"] == "Signed JWT tokens with expiry."


def test_answers_come_from_the_api_functions():
    """The explorer adds drawing data around the API's own answers; it never recomputes them."""
    from conceptwalk.tools import graph_context, graph_path, link_suggest
    from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search

    nodes, edges, aliases = rows()
    kb = open_store(nodes, edges, aliases)
    ex = Explorer(kb, CALLERS)
    team_a = CALLERS[1][1]
    c = ex.answer("context", {"question": ["tokens"], "caller": ["1"], "k": ["7"]})
    assert c["result"] == graph_context(kb, "tokens", k=7, caller=team_a).to_dict()
    drawn = {s["id"] for s in c["result"]["seeds"]} | {r["id"] for r in c["result"]["results"]}
    assert c["edges"] and all(e["source"] in drawn and e["target"] in drawn for e in c["edges"])
    s = ex.answer("suggest", {"concept": ["concept/auth"], "caller": ["1"], "min_shared": ["1"]})
    assert s["result"] == link_suggest(kb, "concept/auth", caller=team_a, min_shared=1).to_dict()
    p = ex.answer("path", {"source": ["file/login.py"], "target": ["doc/key-rotation"], "caller": ["1"]})
    assert p["result"] == graph_path(kb, "file/login.py", "doc/key-rotation", caller=team_a).to_dict()
    q = ex.answer("query", {"text": ["signing tokens"], "caller": ["1"]})
    r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=WalkConfig()).run(
        "signing tokens", 10, concept_walk=True, caller=team_a
    )
    assert q["flat"] + q["added"] == json.loads(json.dumps(r.results))
    assert q["added"] and all(a["via"] == "concept-walk" for a in q["added"])
    assert [{k: v for k, v in c.items() if k != "title"} for c in q["concepts"]] == [c.to_dict() for c in r.concepts]
    assert [c["title"] for c in q["concepts"]] == [kb.graph().title(c.id) for c in r.concepts]
    assert q["event"]["candidatesAdded"] == len(q["added"])
    hits = ex.answer("search", {"q": ["tokens"], "caller": ["1"]})["hits"]
    assert [(h["id"], h["score"]) for h in hits] == kb.search("tokens", 20, caller=team_a)


def test_provenance_axes_are_shown_or_marked_absent():
    nodes, edges, aliases = rows()
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS)
    q = ex.answer("query", {"text": ["signing tokens"], "caller": ["4"]})
    hops = [h for a in q["added"] for p in a["paths"] for h in p["hops"]]
    assert hops
    for h in hops:
        for axis in ("authority", "fidelity", "lifecycle"):
            assert (axis in h) != (axis in h.get("absent", {})), h  # present, or absent with a reason
        assert h.get(axis) is not None if axis in h else True


BAD = [
    ("search", {"q": ["x"], "k": ["zero"]}, InputError, r"search: k must be an integer in \[1, 200\], got 'zero'"),
    ("search", {"q": ["x"], "k": ["0"]}, InputError, r"k must be an integer in \[1, 200\], got '0'"),
    ("search", {"q": ["x"], "k": ["1", "2"]}, InputError, r"search: k must be given once, got 2 values"),
    (
        "search",
        {"q": ["x"], "kk": ["1"]},
        InputError,
        r"search: unknown parameter 'kk' \(it takes: q, k, type, caller\)",
    ),
    ("search", {}, InputError, r"search: missing parameter 'q'"),
    ("node", {"id": ["  "]}, InputError, r"node: id must not be empty"),
    ("node", {"id": ["nope"]}, NotFoundError, r"^id not found: 'nope'$"),
    ("node", {"id": ["file/jwt_secret.py"]}, NotFoundError, r"^id not found: 'file/jwt_secret.py'$"),
    ("context", {}, InputError, r"context: give a question, at least one concept, or both"),
    ("context", {"question": ["x"], "rank": ["bm25"]}, InputError, r"context: rank must be one of ppr, coverage"),
    ("context", {"concept": ["file/billing.py"]}, NotFoundError, r"not found: 'file/billing.py'"),
    ("path", {"source": ["concept/auth"], "target": ["x"], "caller": ["5"]}, InputError, r"caller must be an"),
    ("suggest", {"concept": ["concept/auth"], "min_shared": ["-1"]}, InputError, r"min_shared must be an integer"),
    ("query", {"text": [""]}, InputError, r"query: text must not be empty"),
    ("nope", {}, InputError, r"explore: unknown endpoint 'nope'"),
]


@pytest.mark.parametrize("endpoint,params,exc,pattern", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_is_refused_with_a_clear_message(endpoint, params, exc, pattern):
    nodes, edges, aliases = rows()
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS[:2])
    with pytest.raises(exc, match=pattern):
        ex.answer(endpoint, params)


def test_hidden_and_missing_ids_answer_alike():
    nodes, edges, aliases = rows()
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS)
    for endpoint, arg in (("node", "id"), ("suggest", "concept"), ("context", "concept")):
        texts = []
        for node in ("file/jwt_secret.py", "file/zzz_missing.py"):
            with pytest.raises(NotFoundError) as info:
                ex.answer(endpoint, {arg: [node], "caller": ["2"]})
            texts.append(str(info.value).replace(node, "<id>"))
        assert texts[0] == texts[1], endpoint


def test_explorer_needs_a_caller():
    with pytest.raises(InputError, match="explore: give at least one caller"):
        Explorer(open_store(*rows()), [])
    with pytest.raises(InputError, match=r"callers\[0\] must be a \(label, Caller\) pair"):
        Explorer(open_store(*rows()), [("all", None)])


# --------------------------------------------------------------------------- over HTTP
@pytest.fixture
def served(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from conceptwalk.serve.explore import build_app

    path = tmp_path / "kb.db"
    build(path)
    kb = KnowledgeBase.open(path, read_only=True)
    app = build_app(Explorer(kb, CALLERS))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client, path, kb
    kb.close()


def _digest(path: Path) -> dict[str, str]:
    """The bytes of the store and the files beside it (its snapshot), by hash. SQLite's
    shared-memory index (``-shm``) a reader may create is not the store; a write-ahead log a
    reader may create must stay empty (a non-empty one would hold a write)."""
    out = {}
    for p in sorted(path.parent.iterdir()):
        if not (p.is_file() and p.name.startswith(path.name)) or p.name.endswith("-shm"):
            continue
        if p.name.endswith("-wal"):
            assert p.stat().st_size == 0, "the explorer wrote to the store's write-ahead log"
            continue
        out[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_http_answers_and_errors(served):
    client, _, _ = served
    r = client.get("/api/search", params={"q": "tokens", "caller": "1"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert "file/jwt_secret.py" in {h["id"] for h in r.json()["hits"]}
    r0 = client.get("/api/search", params={"q": "tokens", "caller": "0"})
    assert "file/jwt_secret.py" not in r0.text
    for url, params, status, text in [
        ("/api/search", {"q": "x", "k": "abc"}, 400, "search: k must be an integer in [1, 200], got 'abc'"),
        ("/api/search", {"q": "x", "what": "1"}, 400, "search: unknown parameter 'what'"),
        ("/api/node", {"id": "file/jwt_secret.py"}, 404, "id not found: 'file/jwt_secret.py'"),
        ("/api/node", {"id": "nope"}, 404, "id not found: 'nope'"),
        ("/api/path", {"source": "concept/auth"}, 400, "path: missing parameter 'target'"),
        ("/api/context", {"caller": "99", "question": "x"}, 400, "context: caller must be an integer in [0, 4]"),
        ("/api/frobnicate", {}, 404, "unknown endpoint 'frobnicate'"),
    ]:
        r = client.get(url, params=params)
        assert r.status_code == status, (url, r.text)
        assert text in r.json()["error"]
    assert client.post("/api/search", data={"q": "x"}).status_code == 405
    assert client.delete("/api/node?id=concept/auth").status_code == 405
    assert client.get("/static/../explore.py").status_code == 404
    evil = client.get("/api/search", params={"q": "x"}, headers={"Host": "evil.example:8765"})
    assert evil.status_code == 400  # DNS rebinding: a foreign Host never gets an answer
    for host in ("localhost:8765", "[::1]:8765", "127.0.0.1"):
        assert client.get("/api/callers", headers={"Host": host}).status_code == 200, host


def test_http_page_is_served_from_the_package_and_fetches_nothing_outside(served):
    client, _, _ = served
    page = client.get("/")
    assert page.status_code == 200 and "conceptwalk explorer" in page.text
    files = static_files()
    for name in ("explore.js", "explore.css"):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and r.content == files[name][0]
    for name, (body, _) in files.items():
        text = body.decode()
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in text and "//cdn" not in text, name
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_http_session_writes_nothing(served):
    client, path, kb = served
    before, version = _digest(path), kb.version
    changes = kb.conn.execute("SELECT count(*) FROM changes").fetchone()[0]
    for endpoint, params in _requests(rows()[0], ["tokens", "signing keys"]):
        for caller in ("0", "1", "4"):
            q = [(k, v) for k, vs in params.items() for v in vs] + [("caller", caller)]
            assert client.get(f"/api/{endpoint}", params=q).status_code in (200, 404)
    assert _digest(path) == before
    assert kb.version == version
    assert kb.conn.execute("SELECT count(*) FROM changes").fetchone()[0] == changes


def test_every_endpoint_is_listed():
    assert set(ENDPOINTS) == {"callers", "overview", "search", "node", "context", "path", "suggest", "query"}


def test_overview_counts_what_the_caller_sees():
    nodes, edges, aliases = rows()
    ex = Explorer(open_store(nodes, edges, aliases), CALLERS)
    everything = ex.answer("overview", {"caller": ["4"]})
    public = ex.answer("overview", {"caller": ["0"]})
    assert everything["nodes"] == len(nodes) and everything["edges"] == len(edges)
    assert public["nodes"] == len(nodes) - len(TEAM_A_ONLY | TEAM_B_ONLY)
    assert public["types"]["FILE"] == everything["types"]["FILE"] - 2
    assert public["start"][0]["id"] == "concept/tokens"  # the best-linked visible node


# --------------------------------------------------------------------------- the command
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_explore_serves_the_configured_callers_read_only(tmp_path):
    pytest.importorskip("uvicorn")
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    path = tmp_path / "kb.db"
    build(path)
    before = _digest(path)
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "conceptwalk",
            "explore",
            str(path),
            "--scopes",
            "",
            "--scopes",
            "team-a",
            "--port",
            str(port),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base + "/api/callers", timeout=5) as r:
                    callers = json.load(r)["callers"]
                break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None, proc.stderr.read()
                assert time.monotonic() < deadline, "conceptwalk explore did not start"
                time.sleep(0.2)
        assert [c["label"] for c in callers] == ["public", "scopes team-a"]
        with urllib.request.urlopen(base + "/api/node?id=file/jwt_secret.py&caller=1", timeout=5) as r:
            assert json.load(r)["scopes"] == ["team-a"]
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(base + "/api/node?id=file/jwt_secret.py&caller=0", timeout=5)
        assert info.value.code == 404
        with urllib.request.urlopen(base + "/", timeout=5) as r:
            assert b"conceptwalk explorer" in r.read()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert f"conceptwalk explore: {path} (read-only) at http://127.0.0.1:{port}/" in err
    assert _digest(path) == before


def test_cli_explore_token_file_callers_are_named_by_position(tmp_path):
    from conceptwalk.cli.explore import explorer_callers

    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"s3cret-a": ["team-a"], "root-token": "*"}))
    got = explorer_callers(None, str(tokens))
    assert got == [("token-file entry 1", Caller.with_scopes("team-a")), ("token-file entry 2", Caller.all_access())]
    assert "s3cret" not in json.dumps([label for label, _ in got])


def test_cli_explore_refuses_a_missing_kb(tmp_path, capsys):
    from conceptwalk.cli import main

    assert main(["explore", str(tmp_path / "nope.db")]) == 2
    assert "knowledge base file not found" in capsys.readouterr().err


def test_cli_explore_warns_beyond_loopback_and_about_unknown_scopes(tmp_path, monkeypatch, capsys):
    """The start-up lines, with the server itself replaced (nothing listens)."""
    import conceptwalk.serve.explore as explore_mod
    from conceptwalk.cli import main

    served = []
    monkeypatch.setattr(explore_mod, "serve_explorer", lambda ex, host, port: served.append((ex, host, port)))
    path = tmp_path / "kb.db"
    build(path)
    assert main(["explore", str(path), "--host", "0.0.0.0", "--scopes", "team-zz", "--port", "9999"]) == 0
    err = capsys.readouterr().err
    assert "conceptwalk explore: warning: serving on 0.0.0.0, not loopback" in err
    assert "no node carries scope 'team-zz'" in err
    assert served[0][1:] == ("0.0.0.0", 9999) and served[0][0].callers == [
        ("scopes team-zz", Caller.with_scopes("team-zz"))
    ]
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"t1": ["team-a"], "t2": ["team-qq"]}))
    assert main(["explore", str(path), "--token-file", str(tokens)]) == 0
    err = capsys.readouterr().err
    assert "entry 2: no node carries scope 'team-qq'" in err and "not loopback" not in err
    assert "t2" not in err.replace(str(tokens), "")
