"""The MCP server over Streamable HTTP (``conceptwalk serve KB --http``), end to end: the real
server in a subprocess, the official MCP Python client's Streamable HTTP transport for the tool
calls (every tool for three tokens of different scopes, each answer equal to the deletion
oracle's), and raw HTTP requests for the attacks (no token, a wrong one, one in another case or
with whitespace, one in the query string or a tool argument, a forged Origin, oversized and
malformed bodies, another client's session id, thousands of sessions opened and dropped), the
token file's revocation and permissions, a live writer in another process, and SIGTERM."""

from __future__ import annotations

import http.client
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conceptwalk import Caller
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.serve.mcp import ToolServer

pytest.importorskip("mcp", reason='the MCP SDK is not installed (pip install "conceptwalk[mcp]")')

from deletion_oracle import deleted_store  # noqa: E402

N_CONCEPTS = 120
SEED = 11
TOKENS = {"tok-a": ["tenant-a"], "tok-bc": ["tenant-b", "tenant-c"], "tok-public": [], "tok-root": "*"}
CALLERS = {
    "tok-a": Caller.with_scopes("tenant-a"),
    "tok-bc": Caller.with_scopes("tenant-b", "tenant-c"),
    "tok-public": Caller.public(),
    None: Caller.public(),
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
ALLOWED_ORIGIN = "https://app.example.com"


# --------------------------------------------------------------------------- the servers
class Server:
    """``conceptwalk serve KB --http 127.0.0.1:0 ...`` in a subprocess."""

    def __init__(self, kb_path: str, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conceptwalk", "serve", kb_path, "--http", "127.0.0.1:0", *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={k: v for k, v in os.environ.items() if k != "CONCEPTWALK_TOKEN"},
        )
        self.lines: list[str] = []
        assert self.proc.stderr is not None
        while True:
            line = self.proc.stderr.readline()
            if not line:
                raise AssertionError("the server did not start:\n" + "".join(self.lines))
            self.lines.append(line)
            if "over Streamable HTTP at " in line:
                break
        self.startup = line
        self.url = line.split(" at ", 1)[1].split(",", 1)[0]
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _read_rest(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._drain.join(timeout=10)
        return rc

    def wait_log(self, text: str, timeout: float = 30.0) -> bool:
        """Whether ``text`` shows up on the server's stderr (read by a thread) within ``timeout``."""
        end = time.monotonic() + timeout
        while text not in self.log and time.monotonic() < end:
            time.sleep(0.05)
        return text in self.log

    @property
    def log(self) -> str:
        return "".join(self.lines)

    # raw HTTP
    def request(
        self,
        method: str,
        body: bytes | str | None = None,
        headers: dict[str, str] | None = None,
        path: str = "/mcp",
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            h.update(headers or {})
            h = {k: v for k, v in h.items() if v is not None}
            conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=h)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def open_session(self, token: str | None) -> str:
        st, h, _ = self.request("POST", json.dumps(INIT), _auth(token))
        assert st == 200, st
        sid = h["mcp-session-id"]
        st, _, _ = self.request(
            "POST",
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            {**_auth(token), "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
        )
        assert st in (200, 202), st
        return sid

    def call(self, sid: str, token: str | None, name: str, args: dict[str, Any], **extra: Any) -> Any:
        params: dict[str, Any] = {"name": name, "arguments": args, **extra}
        st, h, body = self.request(
            "POST",
            json.dumps({"jsonrpc": "2.0", "id": next(_IDS), "method": "tools/call", "params": params}),
            {**_auth(token), "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
        )
        assert st == 200, (st, body)
        return json.loads(body)["result"]


_IDS = itertools.count(100)  # a JSON-RPC id is unique among a session's requests in flight


def _auth(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def syn() -> Any:
    from conceptwalk.kb import synthetic

    return synthetic.generate(N_CONCEPTS, seed=SEED)


def _write_kb(syn: Any, path: Path) -> str:
    with KnowledgeBase.open(str(path)) as kb:
        kb.add_nodes(syn.node_rows())
        kb.add_edges(syn.edge_rows())
        kb.add_aliases(syn.alias_rows())
    return str(path)


def _token_file(path: Path, tokens: dict[str, Any] = TOKENS) -> str:
    path.write_text(json.dumps(tokens))
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def served(syn: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Tokens optional (no token: public), one extra allowed Origin, a 64 KiB body limit."""
    d = tmp_path_factory.mktemp("http-a")
    kb_path = _write_kb(syn, d / "kb.db")
    s = Server(
        kb_path,
        "--token-file",
        _token_file(d / "tokens.json"),
        "--allow-origin",
        ALLOWED_ORIGIN,
        "--max-body",
        "65536",
    )
    yield s
    assert s.stop() == 0, s.log  # SIGTERM: a clean exit
    assert "Traceback" not in s.log


@pytest.fixture(scope="module")
def strict(syn: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path, str]]:
    """--require-token, on its own copy of the store (the live-store test writes to it)."""
    d = tmp_path_factory.mktemp("http-b")
    kb_path = _write_kb(syn, d / "kb.db")
    tf = d / "tokens.json"
    s = Server(kb_path, "--token-file", _token_file(tf), "--require-token")
    yield s, tf, kb_path
    assert s.stop() == 0, s.log
    assert "Traceback" not in s.log


@pytest.fixture(scope="module")
def oracle(syn: Any) -> Iterator[dict[str | None, ToolServer]]:
    """Per token: the tools over the store with that caller's hidden nodes deleted."""
    nodes, edges = list(syn.node_rows()), list(syn.edge_rows())
    stores = {tok: deleted_store(nodes, edges, list(syn.aliases), c) for tok, c in CALLERS.items()}
    yield {tok: ToolServer(kb, caller=Caller.all_access()) for tok, kb in stores.items()}
    for kb in stores.values():
        kb.close()


def _scoped(syn: Any, scope: str) -> str:
    return next(i for i, s in zip(syn.ids, syn.scopes) if s == [scope])


def _calls(syn: Any, oracle_tools: ToolServer, caller: Caller) -> list[tuple[str, dict[str, Any]]]:
    """Calls of every tool whose ids the caller sees (picked on its oracle's store)."""
    seen = set(oracle_tools.source.graph().ids)
    concepts = [i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT" and i in seen]
    question = syn.queries(3, seed=SEED)[0]["text"]
    a, b = concepts[0], concepts[-1]
    return [
        ("graph_context", {"question": question, "k": 10}),
        ("graph_context", {"concepts": [a], "k": 15, "rank": "coverage", "snippets": True}),
        ("link_suggest", {"concept": a, "k": 5}),
        ("graph_path", {"source": a, "target": b}),
        ("read_node", {"id": a, "maxNeighbours": 10}),
        ("query", {"text": question, "k": 5}),
        ("query", {"text": question, "k": 5, "conceptWalk": True}),
    ]


# --------------------------------------------------------------------------- the official client
async def _client_calls(url: str, token: str | None, calls: list[tuple[str, dict[str, Any]]], meta: Any = None) -> Any:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=_auth(token)) as http_client:
        async with streamable_http_client(url, http_client=http_client) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                listed = [t.name for t in (await s.list_tools()).tools]
                out = [await s.call_tool(n, a, meta=meta) for n, a in calls]
                return listed, out


def test_every_tool_for_three_tokens_equals_the_deletion_oracle(served: Server, syn: Any, oracle: Any) -> None:
    import anyio

    assert "requests without a token: public nodes only" in served.startup
    for token in ("tok-a", "tok-bc", "tok-public", None):
        calls = _calls(syn, oracle[token], CALLERS[token])
        listed, results = anyio.run(_client_calls, served.url, token, calls)
        assert listed == ["graph_context", "link_suggest", "graph_path", "query", "read_node"]
        for (name, args), res in zip(calls, results):
            want = oracle[token].call(name, args)
            assert not want.is_error, (name, want.text)
            assert not res.is_error, (token, name, res.content[0].text)
            assert res.structured_content == json.loads(json.dumps(want.structured)), (token, name)
            assert res.content[0].text == want.text, (token, name)


def test_a_token_in_meta_or_the_query_string_is_ignored(served: Server, syn: Any, oracle: Any) -> None:
    import anyio

    secret = _scoped(syn, "tenant-a")
    args = {"id": secret}
    # _meta: the stdio server's per-call token means nothing over HTTP (the header decides)
    _, (res,) = anyio.run(_client_calls, served.url, None, [("read_node", args)], {"conceptwalk/token": "tok-root"})
    assert res.is_error and res.content[0].text == f"read_node: node not found: {secret!r}"
    # a tool argument is refused by the schema, and grants nothing
    sid = served.open_session(None)
    r = served.call(sid, None, "read_node", {"id": secret, "token": "tok-root"})
    assert r["isError"] and "token" in r["content"][0]["text"] and "tok-root" not in json.dumps(r)
    # the query string
    for q in ("?token=tok-root", "?access_token=tok-root", "?authorization=Bearer%20tok-root"):
        st, h, body = served.request(
            "POST",
            json.dumps(
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_node", "arguments": args}}
            ),
            {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
            path="/mcp" + q,
        )
        assert st == 200 and json.loads(body)["result"]["isError"], q
    # the same node with the header: visible
    assert not served.call(served.open_session("tok-root"), "tok-root", "read_node", args)["isError"]


@pytest.mark.parametrize(
    "header",
    [
        "Bearer tok-nope",  # unknown
        "Bearer TOK-A",  # another case
        "Bearer Tok-a",
        "Bearer  tok-a",  # inner whitespace
        "Bearer tok -a",
        "Bearer\ttok-a",
        "Bearer tok-a\u00a0".encode().decode("latin-1"),
        "Basic dG9rLWE6",  # another scheme
        "Bearer",
        "tok-a",
    ],
)
def test_a_wrong_token_is_401_never_a_public_answer(served: Server, strict: Any, header: str) -> None:
    for server in (served, strict[0]):
        for body in (json.dumps(INIT), "{}"):
            st, h, out = server.request("POST", body, {"Authorization": header})
            assert st == 401, (header, st, out)
            assert h["www-authenticate"].startswith("Bearer"), h
            assert b"tok-" not in out and b"result" not in out
    assert "tok-" not in served.log + strict[0].log  # never logged


def test_scheme_is_case_insensitive_and_trailing_space_is_not_part_of_the_header(served: Server) -> None:
    for header in ("bearer tok-a", "BEARER tok-a", "Bearer tok-a "):  # RFC 9110: OWS around a value
        st, _, _ = served.request("POST", json.dumps(INIT), {"Authorization": header})
        assert st == 200, header


def test_no_token_under_require_token_is_401(strict: Any) -> None:
    server = strict[0]
    assert "requests without a token: refused (401, --require-token)" in server.startup
    for method, body in (("POST", json.dumps(INIT)), ("GET", None), ("DELETE", None)):
        st, h, out = server.request(method, body)
        assert st == 401 and h["www-authenticate"].startswith("Bearer") and b"result" not in out
    st, _, _ = server.request("POST", json.dumps(INIT), {"Authorization": "Bearer tok-public"})
    assert st == 200


def test_two_authorization_headers_are_refused(served: Server) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    conn.putrequest("POST", "/mcp")
    for k, v in (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")):
        conn.putheader(k, v)
    conn.putheader("Authorization", "Bearer tok-public")
    conn.putheader("Authorization", "Bearer tok-root")
    body = json.dumps(INIT).encode()
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    r = conn.getresponse()
    assert r.status == 401 and r.getheader("WWW-Authenticate").startswith("Bearer")
    conn.close()


def test_forged_origin_is_403(served: Server) -> None:
    own = f"http://127.0.0.1:{served.port}"
    for origin in (
        "http://evil.example",
        "null",
        f"http://127.0.0.1:{served.port + 1}",
        "https://app.example.com.evil",
    ):
        for token in (None, "tok-root"):
            st, _, out = served.request("POST", json.dumps(INIT), {**_auth(token), "Origin": origin})
            assert st == 403 and b"result" not in out, (origin, token)
    for origin in (own, f"http://localhost:{served.port}", ALLOWED_ORIGIN):
        st, _, _ = served.request("POST", json.dumps(INIT), {"Origin": origin})
        assert st == 200, origin


def test_oversized_body_is_413(served: Server) -> None:
    big = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * 70_000}})
    st, _, out = served.request("POST", big, {"Authorization": "Bearer tok-a"})
    assert st == 413 and b"result" not in out
    sid = served.open_session("tok-a")
    st, _, _ = served.request(
        "POST",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "graph_context", "arguments": {"question": "q" * 70_000}},
            }
        ),
        {"Authorization": "Bearer tok-a", "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"},
    )
    assert st == 413
    # within the body limit, the tool's own argument bounds answer with a clear tool error
    r = served.call(sid, "tok-a", "graph_context", {"question": "q" * 5000, "k": 500})
    assert r["isError"] and "is too long" in r["content"][0]["text"] and "maximum of 200" in r["content"][0]["text"]
    r = served.call(sid, "tok-a", "graph_context", {"question": "q", "maxHops": 4, "rank": "coverage"})
    assert r["isError"] and "maximum of 3" in r["content"][0]["text"]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"{",
        b"[]",
        b"{}",
        b"null",
        b'"initialize"',
        b'{"jsonrpc": "2.0"}',
        b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}',
        b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/list"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": 5}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_node"}}',
        b"[" * 5000 + b"]" * 5000,
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": "x"}',
        "\ud800".encode("utf-8", "surrogatepass"),
        b"\xff\xfe\x00",
    ],
)
def test_malformed_json_rpc_is_a_4xx_and_the_server_keeps_serving(served: Server, body: bytes) -> None:
    for extra in ({}, {"mcp-session-id": served.open_session("tok-a"), "mcp-protocol-version": "2025-06-18"}):
        st, _, out = served.request("POST", body, {"Authorization": "Bearer tok-a", **extra})
        assert 200 <= st < 500, (st, out)
        if st == 200:  # a JSON-RPC error object or a tool error, never an answer
            reply = json.loads(out)
            assert "error" in reply or reply["result"]["isError"], out
    sid = served.open_session("tok-a")
    assert not served.call(sid, "tok-a", "graph_path", {"source": "x", "target": "x"})["content"] == []


def test_another_clients_session_id_is_404(served: Server, syn: Any) -> None:
    secret = _scoped(syn, "tenant-a")
    sid = served.open_session("tok-a")
    assert not served.call(sid, "tok-a", "read_node", {"id": secret})["isError"]
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "read_node", "arguments": {"id": secret}},
        }
    )
    for token in ("tok-bc", "tok-public", None):
        st, _, out = served.request(
            "POST", body, {**_auth(token), "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
        )
        assert st == 404 and secret.encode() not in out, (token, st, out)
        st, _, _ = served.request("DELETE", None, {**_auth(token), "mcp-session-id": sid})
        assert st == 404, token
    assert not served.call(sid, "tok-a", "read_node", {"id": secret})["isError"]  # still the owner's
    st, _, _ = served.request("POST", body, {"Authorization": "Bearer tok-a", "mcp-session-id": "0" * 32})
    assert st == 404


def test_get_is_405_no_stream(served: Server) -> None:
    sid = served.open_session("tok-a")
    st, h, _ = served.request("GET", None, {"Authorization": "Bearer tok-a", "mcp-session-id": sid})
    assert st == 405 and "POST" in h["allow"]


def test_slow_and_vanished_clients_do_not_block_others(served: Server) -> None:
    slow = []
    for _ in range(8):  # half-sent requests, held open
        sk = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        sk.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n{"
        )
        slow.append(sk)
    for _ in range(8):  # requests whose client is gone before the answer
        sk = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        body = json.dumps(INIT).encode()
        sk.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        sk.close()
    try:
        sid = served.open_session("tok-a")
        r = served.call(sid, "tok-a", "graph_context", {"question": "index", "k": 3})
        assert not r["isError"]
    finally:
        for sk in slow:
            sk.close()


def test_token_file_revocation_and_permissions_without_restart(strict: Any, syn: Any) -> None:
    server, tf, _ = strict
    sid = server.open_session("tok-bc")
    secret = _scoped(syn, "tenant-b")
    assert not server.call(sid, "tok-bc", "read_node", {"id": secret})["isError"]
    original = tf.read_text()
    try:
        _token_file(tf, {k: v for k, v in TOKENS.items() if k != "tok-bc"})  # revoke
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "read_node", "arguments": {"id": secret}},
            }
        )
        hdr = {"Authorization": "Bearer tok-bc", "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
        st, _, out = server.request("POST", body, hdr)
        assert st == 401 and secret.encode() not in out  # inside its open session too
        _token_file(tf, TOKENS)
        assert server.request("POST", body, hdr)[0] == 200
        tf.chmod(0o644)  # readable by others: every token refused until fixed
        assert server.request("POST", body, hdr)[0] == 401
        tf.chmod(0o600)
        assert server.request("POST", body, hdr)[0] == 200
        tf.write_text('{"tok-bc": [], "tok-bc": "*"}')  # a repeated token: the file is refused
        assert server.request("POST", body, hdr)[0] == 401
        assert server.wait_log("entry 2 repeats the token of entry 1") and "tok-bc" not in server.log
    finally:
        tf.write_text(original)
        tf.chmod(0o600)


def test_live_store_writes_of_another_process_are_seen_by_the_next_call(strict: Any, syn: Any) -> None:
    server, _, kb_path = strict
    sid = server.open_session("tok-a")
    code = (
        "import sys, time\n"
        "from conceptwalk.kb.store import KnowledgeBase\n"
        "kb = KnowledgeBase.open(sys.argv[1], create=False)\n"
        "for i in range(int(sys.argv[2])):\n"
        "    kb.add_nodes([{'id': f'live/{i}', 'type': 'DOC', 'title': f'live {i}', 'scopes': ['tenant-a']}])\n"
        "    kb.add_edges([(f'live/{i}', sys.argv[3], 'MENTIONS')])\n"
        "    time.sleep(0.01)\n"
        "kb.close()\n"
    )
    anchor = next(i for i, s in zip(syn.ids, syn.scopes) if not s)
    writer = subprocess.Popen([sys.executable, "-c", code, kb_path, "60", anchor])
    errors = 0
    try:
        while writer.poll() is None:  # calls while the writer writes: none fails
            r = server.call(sid, "tok-a", "graph_context", {"concepts": [anchor], "k": 5})
            errors += bool(r["isError"])
    finally:
        assert writer.wait(timeout=120) == 0
    assert errors == 0
    # the next call sees the last write, for the scope that may see it only
    r = server.call(sid, "tok-a", "read_node", {"id": "live/59"})
    assert not r["isError"] and r["structuredContent"]["neighbours"][0]["id"] == anchor
    sid_bc = server.open_session("tok-bc")
    r = server.call(sid_bc, "tok-bc", "read_node", {"id": "live/59"})
    assert r["isError"] and r["content"][0]["text"] == "read_node: node not found: 'live/59'"


def test_thousands_of_sessions_opened_and_dropped(syn: Any, tmp_path: Path) -> None:
    kb_path = _write_kb(syn, tmp_path / "kb.db")
    server = Server(kb_path, "--token-file", _token_file(tmp_path / "tokens.json"), "--max-sessions", "32")
    try:
        keep = server.open_session("tok-a")
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.connect()  # one keep-alive connection; headers and body go in two writes: no Nagle
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        statuses: dict[int, int] = {}
        h = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": "Bearer tok-public",
        }
        body = json.dumps(INIT)
        for _ in range(2000):  # opened and never closed
            conn.request("POST", "/mcp", body=body, headers=h)
            r = conn.getresponse()
            out = r.read()
            statuses[r.status] = statuses.get(r.status, 0) + 1
            if r.status == 503:
                assert b"Too many open sessions" in out
        assert statuses.get(200, 0) == 31 and statuses.get(503, 0) == 2000 - 31, statuses
        # the sessions already open keep working
        assert not server.call(keep, "tok-a", "graph_context", {"question": "index", "k": 3})["isError"]
        # closed sessions free their place: open and DELETE many more
        server.request("DELETE", None, {"Authorization": "Bearer tok-a", "mcp-session-id": keep})
        conn.close()
    finally:
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log


def test_sigterm_finishes_calls_in_flight(syn: Any, tmp_path: Path) -> None:
    kb_path = _write_kb(syn, tmp_path / "kb.db")
    server = Server(kb_path, "--token-file", _token_file(tmp_path / "tokens.json"))
    sid = server.open_session("tok-a")
    results: list[Any] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            try:
                results.append(server.call(sid, "tok-a", "graph_context", {"question": "index compaction", "k": 20}))
            except (ConnectionError, OSError, AssertionError) as exc:
                results.append(exc)
                return

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    rc = server.stop()
    stop.set()
    for t in threads:
        t.join(timeout=60)
    assert rc == 0, server.log
    answered = [r for r in results if isinstance(r, dict)]
    assert answered and all(not r["isError"] for r in answered)
    assert "Traceback" not in server.log


# --------------------------------------------------------------------------- the command line
def _main_err(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from conceptwalk.cli import main

    rc = main(args)
    return rc, capsys.readouterr().err


def test_serve_http_refuses_what_would_expose_it(syn: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb_path = _write_kb(syn, tmp_path / "kb.db")
    tf = _token_file(tmp_path / "tokens.json")
    cases = [
        (["--http", "0.0.0.0:0"], "is not a loopback address; to listen where other machines can reach"),
        (["--http", "127.0.0.1:99999"], "--http: expected HOST:PORT with a port in 0..65535"),
        (["--http", ":0", "--scopes", "*"], "--scopes is for stdio"),
        (["--http", ":0", "--allow-origin", "*"], "--allow-origin: expected an origin"),
        (["--allow-origin", "https://x.example"], "need --http"),
    ]
    for extra, fragment in cases:
        rc, err = _main_err(["serve", kb_path, *extra], capsys)
        assert rc == 2 and fragment in err, (extra, err)
    os.chmod(tf, 0o644)
    rc, err = _main_err(["serve", kb_path, "--http", ":0", "--token-file", tf], capsys)
    assert rc == 2 and "is readable or writable by other users (mode 644)" in err and "chmod 600" in err


def test_non_loopback_bind_warns_about_tls(syn: Any, tmp_path: Path) -> None:
    kb_path = _write_kb(syn, tmp_path / "kb.db")
    proc = subprocess.Popen(
        [sys.executable, "-m", "conceptwalk", "serve", kb_path, "--http", "0.0.0.0:0", "--allow-remote"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines = [proc.stderr.readline(), proc.stderr.readline()]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert "over Streamable HTTP at http://0.0.0.0:" in lines[0], lines
    assert "no --token-file: a request presenting a token gets 401" in lines[0]
    assert "reachable from other machines, over plain HTTP: terminate TLS in front of it" in lines[1], lines
