"""The MCP server over Streamable HTTP under load, with a writer (issue 33). A measurement, not a
test: nothing is asserted on wall time.

    python benchmarks/bench_mcp_http.py [--clients 32] [--calls 500] [--duration 60]
        [--write-rate 100] [--checkpoints 4] [--concepts 1000] [--json OUT.json]

One ``conceptwalk serve KB --http 127.0.0.1:0 --token-file ...`` server; ``--clients`` client
processes, each with one of three tokens of different scopes (``tenant-a``, ``tenant-b`` +
``tenant-c``, public only), each making ``--calls`` calls of mixed tools (graph_context,
link_suggest, graph_path, read_node, query) through the official MCP client's Streamable HTTP
transport, until its calls are done or ``--duration`` seconds have passed; meanwhile one writer
process commits ``--write-rate`` changes a second (a node in one of the scopes and its edge, one
transaction each). ``--checkpoints`` times during the run the writer pauses; the same calls are
then made for each token and compared with the deletion oracle's answers (the tools over the
store with the token's hidden nodes deleted, built from the rows written so far).

Reported: calls/s (over the load phase: from the start signal, given once every client has
connected, to the last client's end), p50/p99 latency, errors, answers that differ from the
oracle at the checkpoints, the server's CPU seconds over the load phase (per call: what the
server itself costs, apart from the clients' processes on the same machine), its RSS at start
and end and that of a fresh server on the store as the writer left it (the data's own share of
the growth), the writer's achieved rate and errors (``--write-rate 0``: no writer); then, in
the same run, the p50 of the same calls made one at a time by one client, over HTTP and over
stdio (``conceptwalk serve KB`` with the official stdio client), for the transport's own cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TOKENS = {"bench-tok-a": ["tenant-a"], "bench-tok-bc": ["tenant-b", "tenant-c"], "bench-tok-public": []}
SEED = 5


# --------------------------------------------------------------------------- the data
def _synthetic(n: int) -> Any:
    from conceptwalk.kb import synthetic

    return synthetic.generate(n, seed=SEED)


def writer_rows(i: int, anchors: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The writer's i-th change: a node in one of the scopes (or public) and its edge."""
    scope = [["tenant-a"], ["tenant-b"], []][i % 3]
    node = {
        "id": f"live/{i:06d}",
        "type": "DOC",
        "title": f"live note {i}",
        "body": f"written live {i}",
        "scopes": scope,
    }
    edge = {"src": node["id"], "dst": anchors[i % len(anchors)], "type": "MENTIONS"}
    return node, edge


def _anchors(syn: Any) -> list[str]:
    return [i for i, t, s in zip(syn.ids, syn.node_types, syn.scopes) if t == "CONCEPT" and not s][:50]


def mixed_calls(syn: Any, n: int, offset: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """``n`` calls of mixed tools over public concepts (every token may see them)."""
    anchors = _anchors(syn)
    questions = [q["text"] for q in syn.queries(20, seed=SEED)]
    out: list[tuple[str, dict[str, Any]]] = []
    for j in range(offset, offset + n):
        a, b = anchors[j % len(anchors)], anchors[(j * 7 + 3) % len(anchors)]
        kind = j % 5
        if kind == 0:
            out.append(("graph_context", {"question": questions[j % len(questions)], "k": 10}))
        elif kind == 1:
            out.append(("link_suggest", {"concept": a, "k": 5}))
        elif kind == 2:
            out.append(("graph_path", {"source": a, "target": b}))
        elif kind == 3:
            out.append(("read_node", {"id": a, "maxNeighbours": 20}))
        else:
            out.append(("query", {"text": questions[(j * 3) % len(questions)], "k": 5}))
    return out


# --------------------------------------------------------------------------- roles (subprocesses)
def run_client(url: str, token: str, calls: list[tuple[str, dict[str, Any]]], out: str) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    lat: list[float] = []
    errors: list[str] = []

    async def main() -> None:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http_client:
            async with streamable_http_client(url, http_client=http_client) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    Path(out + ".ready").write_text("")
                    go = Path(out).parent / "go"
                    while not go.exists():  # every client connected before the clock starts
                        await anyio.sleep(0.02)
                    end = float(go.read_text() or "nan")
                    for name, args in calls:
                        if time.time() > end:
                            break
                        t0 = time.perf_counter()
                        try:
                            r = await s.call_tool(name, args)
                            if r.is_error:
                                errors.append(f"{name}: {r.content[0].text}"[:200])
                        except Exception as exc:  # counted, never hidden
                            errors.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
                        lat.append(time.perf_counter() - t0)

    try:
        anyio.run(main)
    except Exception as exc:
        errors.append(f"session: {type(exc).__name__}: {exc}"[:200])
    Path(out).write_text(json.dumps({"lat": lat, "errors": errors, "end": time.time()}))


def run_writer(
    kb_path: str, n_concepts: int, rate: float, deadline: float, control: str, every: float, n_checkpoints: int
) -> None:
    from conceptwalk.kb.store import KnowledgeBase

    anchors = _anchors(_synthetic(n_concepts))
    ctl = Path(control)
    kb = KnowledgeBase.open(kb_path, create=False)
    i, errors, checkpoint, paused = 0, 0, 0, 0.0
    start = time.time()
    next_checkpoint = start + every
    while time.time() < deadline + paused:  # the pauses do not count: every checkpoint is reached
        node, edge = writer_rows(i, anchors)
        try:
            with kb.transaction():
                kb.add_nodes([node])
                kb.add_edges([edge])
            i += 1
        except Exception:
            errors += 1
        if time.time() >= next_checkpoint and checkpoint < n_checkpoints:
            checkpoint += 1
            (ctl / f"pause-{checkpoint}").write_text(str(i))
            t0 = time.time()
            while not (ctl / f"resume-{checkpoint}").exists() and time.time() < deadline + 600:
                time.sleep(0.01)
            paused += time.time() - t0
            next_checkpoint = time.time() + every
        # the next change is due at start + (i + errors) / rate, pauses excluded
        due = start + paused + (i + errors) / rate
        time.sleep(max(0.0, due - time.time()))
    kb.close()
    active = time.time() - start - paused
    (ctl / "writer.json").write_text(json.dumps({"writes": i, "errors": errors, "active_s": active}))


# --------------------------------------------------------------------------- the run
def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def _start_http(kb_path: str, tokens_path: str, max_sessions: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "conceptwalk", "serve", kb_path, "--http", "127.0.0.1:0",
         "--token-file", tokens_path, "--max-sessions", str(max_sessions)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    while True:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit("the HTTP server did not start")
        if "over Streamable HTTP at " in line:
            url = line.split(" at ", 1)[1].split(",", 1)[0]
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
            return proc, url


async def _sequential_http(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    out = []
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http_client:
        async with streamable_http_client(url, http_client=http_client) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                for name, args in calls:
                    t0 = time.perf_counter()
                    r = await s.call_tool(name, args)
                    out.append((time.perf_counter() - t0, r))
    return out


async def _sequential_stdio(
    kb_path: str, tokens_path: str, token: str, calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    import mcp

    env = dict(os.environ, CONCEPTWALK_TOKEN=token)
    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "conceptwalk", "serve", kb_path, "--token-file", tokens_path], env=env
    )
    out = []
    with open(os.devnull, "w") as errlog:
        async with mcp.stdio_client(params, errlog=errlog) as (read, write):
            async with mcp.ClientSession(read, write) as s:
                await s.initialize()
                for name, args in calls:
                    t0 = time.perf_counter()
                    r = await s.call_tool(name, args)
                    out.append((time.perf_counter() - t0, r))
    return out


def _oracle_check(syn: Any, url: str, written: int, calls: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    """(answers compared, answers different from the deletion oracle) for every token."""
    import anyio

    sys.path.insert(0, str(HERE.parent / "tests"))
    from deletion_oracle import deleted_store

    from conceptwalk import Caller
    from conceptwalk.serve.mcp import ToolServer

    anchors = _anchors(syn)
    nodes, edges = list(syn.node_rows()), list(syn.edge_rows())
    for i in range(written):
        nd, ed = writer_rows(i, anchors)
        nodes.append(dict(nd, lifecycle=None))
        edges.append(ed)
    compared = differ = 0
    for token, scopes in TOKENS.items():
        caller = Caller.with_scopes(*scopes)
        oracle_kb = deleted_store(nodes, edges, list(syn.aliases), caller)
        try:
            oracle = ToolServer(oracle_kb, caller=Caller.all_access())
            got = anyio.run(_sequential_http, url, token, calls)
            for (name, args), (_, r) in zip(calls, got):
                want = oracle.call(name, args)
                compared += 1
                same = bool(r.is_error) == want.is_error and (
                    r.content[0].text == want.text
                    if want.is_error
                    else r.structured_content == json.loads(json.dumps(want.structured))
                )
                differ += not same
        finally:
            oracle_kb.close()
    return compared, differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32, help="client processes (default 32)")
    ap.add_argument("--calls", type=int, default=500, help="calls per client (default 500)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds at most (default 60)")
    ap.add_argument("--write-rate", type=float, default=100.0, help="writer changes per second (default 100)")
    ap.add_argument("--checkpoints", type=int, default=4, help="writer pauses with an oracle check (default 4)")
    ap.add_argument("--concepts", type=int, default=1000, help="synthetic KB size (default 1000)")
    ap.add_argument("--sequential", type=int, default=100, help="calls for the one-client p50s (default 100)")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    ap.add_argument("--role", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--role-args", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.role == "client":
        r = json.loads(Path(a.role_args[1:]).read_text())
        run_client(r["url"], r["token"], [tuple(c) for c in r["calls"]], r["out"])  # type: ignore[misc]
        return 0
    if a.role == "writer":
        r = json.loads(a.role_args)
        run_writer(r["kb"], r["concepts"], r["rate"], r["deadline"], r["control"], r["every"], r["checkpoints"])
        return 0

    from conceptwalk.kb.store import KnowledgeBase

    work = Path(tempfile.mkdtemp(prefix="cw-bench-http-"))
    syn = _synthetic(a.concepts)
    kb_path = str(work / "kb.db")
    with KnowledgeBase.open(kb_path) as kb:
        kb.add_nodes(syn.node_rows())
        kb.add_edges(syn.edge_rows())
        kb.add_aliases(syn.alias_rows())
        kb.graph()
    tokens_path = work / "tokens.json"
    tokens_path.write_text(json.dumps(TOKENS))
    tokens_path.chmod(0o600)
    check_calls = mixed_calls(syn, 10, offset=1000)

    server, url = _start_http(kb_path, str(tokens_path), max_sessions=max(64, 2 * a.clients))
    try:
        import anyio

        anyio.run(_sequential_http, url, "bench-tok-a", mixed_calls(syn, 20))  # warm up
        rss_start = _rss_kb(server.pid)
        control = work / "control"
        control.mkdir()
        role = [sys.executable, str(Path(__file__).resolve())]
        toks = list(TOKENS)
        clients = []
        for c in range(a.clients):
            out = str(work / f"client-{c}.json")
            args = {"url": url, "token": toks[c % 3], "calls": mixed_calls(syn, a.calls, offset=c * 17), "out": out}
            Path(out + ".args").write_text(json.dumps(args))  # a file: the calls can pass ARG_MAX
            clients.append((subprocess.Popen(role + ["--role", "client", "--role-args", "@" + out + ".args"]), out))
        wait_until = time.time() + 600
        while not all(Path(out + ".ready").exists() or p.poll() is not None for p, out in clients):
            if time.time() > wait_until:
                raise SystemExit("the clients did not connect within 600 s")
            time.sleep(0.05)
        t0 = time.time()
        deadline = t0 + a.duration
        every = a.duration / (a.checkpoints + 1)
        if a.write_rate > 0:
            writer = subprocess.Popen(role + ["--role", "writer", "--role-args", json.dumps(
                {"kb": kb_path, "concepts": a.concepts, "rate": a.write_rate, "deadline": deadline,
                 "control": str(control), "every": every, "checkpoints": a.checkpoints})])  # fmt: skip
        else:  # no writer: a process that ends at once
            writer = subprocess.Popen([sys.executable, "-c", ""])
            (control / "writer.json").write_text(json.dumps({"writes": 0, "errors": 0, "active_s": 0}))
        cpu_start = _cpu_s(server.pid)
        (work / "go").write_text(repr(deadline))
        compared = differ = 0
        checkpoints_done = 0
        while writer.poll() is None or any(p.poll() is None for p, _ in clients):
            nxt = control / f"pause-{checkpoints_done + 1}"
            if nxt.exists():
                written = int(nxt.read_text())
                c_, d_ = _oracle_check(syn, url, written, check_calls)
                compared, differ = compared + c_, differ + d_
                checkpoints_done += 1
                (control / f"resume-{checkpoints_done}").write_text("")
            time.sleep(0.02)
        rss_end = _rss_kb(server.pid)
        lat: list[float] = []
        errors: list[str] = []
        ends = []
        for p, out in clients:
            d = json.loads(Path(out).read_text())
            lat += d["lat"]
            errors += d["errors"]
            ends.append(d.get("end", time.time()))
        elapsed = max(ends) - t0  # the load phase: from the start signal to the last client's end
        cpu_load = _cpu_s(server.pid) - cpu_start  # the oracle checks' calls included
        w = json.loads((control / "writer.json").read_text())
        seq = mixed_calls(syn, a.sequential, offset=5000)
        http_seq = [t for t, _ in anyio.run(_sequential_http, url, "bench-tok-a", seq)]
    finally:
        server.terminate()
        server.wait(timeout=60)
    # A fresh server on the store as the writer left it, after the same warm-up and the one-client
    # calls: the RSS the data itself needs (the end RSS above minus this is what the run kept).
    fresh, fresh_url = _start_http(kb_path, str(tokens_path), max_sessions=64)
    try:
        anyio.run(_sequential_http, fresh_url, "bench-tok-a", mixed_calls(syn, 20))
        anyio.run(_sequential_http, fresh_url, "bench-tok-a", seq)
        rss_fresh = _rss_kb(fresh.pid)
    finally:
        fresh.terminate()
        fresh.wait(timeout=60)
    stdio_seq = [t for t, _ in anyio.run(_sequential_stdio, kb_path, str(tokens_path), "bench-tok-a", seq)]
    fig = {
        "clients": a.clients,
        "calls_per_client": a.calls,
        "duration_s": a.duration,
        "concepts": a.concepts,
        "elapsed_s": round(elapsed, 1),
        "calls": len(lat),
        "calls_per_s": round(len(lat) / elapsed, 1),
        "p50_ms": round(_pct(lat, 0.5) * 1e3, 2),
        "p99_ms": round(_pct(lat, 0.99) * 1e3, 2),
        "errors": len(errors),
        "error_samples": errors[:5],
        "oracle_checkpoints": checkpoints_done,
        "oracle_compared": compared,
        "oracle_differ": differ,
        "server_cpu_s": round(cpu_load, 1),
        "server_cpu_ms_per_call": round(cpu_load * 1e3 / max(len(lat) + compared, 1), 2),
        "server_rss_start_mb": round(rss_start / 1024, 1),
        "server_rss_end_mb": round(rss_end / 1024, 1),
        "fresh_server_rss_same_store_mb": round(rss_fresh / 1024, 1),
        "writer_writes": w["writes"],
        "writer_errors": w["errors"],
        "writer_rate_per_s": round(w["writes"] / max(w["active_s"], 1e-9), 1),
        "one_client_http_p50_ms": round(statistics.median(http_seq) * 1e3, 2),
        "one_client_stdio_p50_ms": round(statistics.median(stdio_seq) * 1e3, 2),
        "server_exit": server.returncode,
    }
    fig["loaded_http_p50_over_stdio_p50"] = round(fig["p50_ms"] / fig["one_client_stdio_p50_ms"], 2)
    fig["http_p50_over_stdio_p50"] = round(fig["one_client_http_p50_ms"] / fig["one_client_stdio_p50_ms"], 2)
    for k, v in fig.items():
        print(f"{k:34s} {v}")
    if a.json:
        Path(a.json).write_text(json.dumps(fig, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
