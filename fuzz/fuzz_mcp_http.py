"""Fuzz the MCP server over Streamable HTTP: request bodies and headers through the real ASGI app.

The app is :func:`conceptwalk.serve.mcp_http.build_http_app` (the gate in front of the MCP SDK's
Streamable HTTP app) over a small graph with public and scoped nodes, driven in process by
Starlette's test client (no socket). Each input is one request; its first six bytes choose the
method, the ``Authorization`` header (none, three real tokens, a wrong one, a fuzzed value), the
``Origin`` (none, the server's own, a foreign one, a fuzzed value), the session (none, a session
of each real token, a random id), the content type, and whether the rest is sent raw or as the
``params`` of a JSON-RPC request (``initialize``, ``tools/list``, ``tools/call``, ...).

What counts as a finding:

- an exception out of the app, or a 5xx answer (but ``503 Too many open sessions``, which the
  session limit may give);
- anything but ``401`` with ``WWW-Authenticate: Bearer`` for a wrong or malformed token, or
  anything but ``403`` for a foreign ``Origin`` (a public answer to an unknown token is the
  worst finding there is);
- a hidden node's id, or any token, in an answer for a caller that may not see it, when the
  request did not carry that text itself (an error may quote the request back).

Run: ``python fuzz/fuzz_mcp_http.py /tmp/corpus fuzz/corpus/fuzz_mcp_http -max_total_time=60``
Replay: ``python fuzz/fuzz_mcp_http.py --replay fuzz/corpus/fuzz_mcp_http``
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import instrumented, run  # noqa: E402

with instrumented():
    from conceptwalk import LinkGraph
    from conceptwalk.serve.mcp import TokenFile, ToolServer
    from conceptwalk.serve.mcp_http import HttpSettings, build_http_app

from starlette.testclient import TestClient  # noqa: E402

TOKENS = {"tok-a-9f2c": ["tenant-a"], "tok-public-71be": [], "tok-root-0d4e": "*"}
HIDDEN_A = ["secret/a-one", "secret/a-two"]  # scope tenant-a
HIDDEN_B = ["secret/b-one"]  # scope tenant-b: nobody but root sees it
PUBLIC = ["pub/one", "pub/two", "pub/three", "pub/four"]
AUTH = [None, "tok-a-9f2c", "tok-public-71be", "tok-root-0d4e", "tok-wrong", "TOK-A-9F2C", "tok-a-9f2c x"]
SEES = {
    None: set(PUBLIC),
    "tok-public-71be": set(PUBLIC),
    "tok-a-9f2c": set(PUBLIC) | set(HIDDEN_A),
    "tok-root-0d4e": set(PUBLIC) | set(HIDDEN_A) | set(HIDDEN_B),
}
ORIGINS = [None, "http://127.0.0.1:8765", "http://evil.example", "null"]
METHODS = ["POST", "POST", "POST", "GET", "DELETE", "PUT"]
RPC = ["initialize", "tools/list", "tools/call", "ping", "notifications/initialized", "resources/list", ""]
TOOLS = ["graph_context", "link_suggest", "graph_path", "read_node", "query", "nope"]
BASE = "http://127.0.0.1:8765"

_dir = tempfile.mkdtemp(prefix="cw-fuzz-http-")
_tokens_path = os.path.join(_dir, "tokens.json")
with open(_tokens_path, "w") as f:
    json.dump(TOKENS, f)
os.chmod(_tokens_path, 0o600)
_graph = LinkGraph.from_edges(
    [
        ("pub/one", "pub/two", "LINKS"),
        ("pub/two", "pub/three", "LINKS"),
        ("pub/one", "secret/a-one", "LINKS"),
        ("secret/a-one", "pub/three", "LINKS"),
        ("secret/a-two", "pub/four", "LINKS"),
        ("secret/b-one", "pub/one", "LINKS"),
        ("secret/b-one", "pub/four", "LINKS"),
    ],
    nodes=[{"id": i, "scopes": ["tenant-a"]} for i in HIDDEN_A] + [{"id": i, "scopes": ["tenant-b"]} for i in HIDDEN_B],
)
_app = build_http_app(
    ToolServer(_graph),
    HttpSettings(port=8765, max_body_bytes=16 * 1024, max_sessions=64),
    tokens=TokenFile(_tokens_path, private=True),
)
_client = TestClient(_app, base_url=BASE, raise_server_exceptions=True)
_client.__enter__()  # the lifespan (the SDK's session manager) runs for the whole process
_INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _open(token: str | None) -> str:
    h = dict(_HEADERS, **({"authorization": f"Bearer {token}"} if token else {}))
    r = _client.post(
        "/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": _INIT}), headers=h
    )
    assert r.status_code == 200, r.status_code
    sid = r.headers["mcp-session-id"]
    h["mcp-session-id"] = sid
    h["mcp-protocol-version"] = "2025-06-18"
    _client.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=h)
    return sid


_SESSIONS = [None, _open("tok-a-9f2c"), _open("tok-public-71be"), _open(None), "f" * 32]


def _pick(seq: list, b: int):  # type: ignore[no-untyped-def]
    return seq[b % len(seq)]


def target(data: bytes) -> None:
    head, rest = (data[:6] + bytes(6))[:6], data[6:]
    method = _pick(METHODS, head[0])
    auth_i = head[1] % (len(AUTH) + 1)
    fuzzed_text = rest.decode("latin-1")
    if auth_i == len(AUTH):  # a fuzzed header value (latin-1, as HTTP carries it)
        token = fuzzed_text[:64].replace("\r", "").replace("\n", "")
        auth = f"Bearer {token}"
    else:
        token = AUTH[auth_i]
        auth = None if token is None else f"Bearer {token}"
    origin = ORIGINS[head[2] % len(ORIGINS)]
    session = _pick(_SESSIONS, head[3])
    ctype = ["application/json", "text/plain", "application/json; charset=utf-8"][head[4] % 3]
    if head[5] % 2:  # the rest as a JSON-RPC request's params
        rpc = _pick(RPC, head[5] >> 1)
        try:
            params = json.loads(rest.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            params = {"name": _pick(TOOLS, len(rest)), "arguments": {"id": rest.decode("latin-1")[:40]}}
        msg = {"jsonrpc": "2.0", "id": len(rest), "method": rpc, "params": params}
        if head[5] & 4:
            msg.pop("id")
        body = json.dumps(msg).encode()
    else:
        body = rest
    headers = {"content-type": ctype, "accept": "application/json, text/event-stream"}
    if auth is not None:
        headers["authorization"] = auth
    if origin is not None:
        headers["origin"] = origin
    if session is not None:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = "2025-06-18"
    try:
        r = _client.request(method, "/mcp", content=body, headers=headers)
    except UnicodeEncodeError:  # a header value httpx will not send: not a request
        return
    status, text = r.status_code, r.text
    if origin in ("http://evil.example", "null"):
        assert status == 403, (status, text[:200])
        return
    known = token in SEES if auth is not None else True
    if not known:
        assert status == 401 and r.headers.get("www-authenticate", "").startswith("Bearer"), (status, text[:200])
        return
    assert status < 500 or (status == 503 and "Too many open sessions" in text), (status, text[:300])
    sent = body.decode("latin-1") + (auth or "")
    for tok in TOKENS:
        assert tok not in text or tok in sent, ("a token in the answer", text[:300])
    for node in set(HIDDEN_A) | set(HIDDEN_B):
        if node not in SEES[token if auth is not None else None]:
            assert node not in text or node in sent, ("a hidden node in the answer", node, text[:300])
    if status == 200 and method == "POST" and "mcp-session-id" in r.headers and session is None:
        # a session this input opened: close it, so a long run does not fill the session table
        h = {k: v for k, v in headers.items() if k in ("authorization", "origin")}
        _client.delete("/mcp", headers=dict(h, **{"mcp-session-id": r.headers["mcp-session-id"]}))


if __name__ == "__main__":
    run(target)
