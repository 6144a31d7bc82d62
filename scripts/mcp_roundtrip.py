"""Round-trip time of each MCP tool over stdio, measured with the SDK's own client.

Builds the synthetic KB into a temporary SQLite file (or uses ``--kb``), starts
``python -m conceptwalk serve KB`` as a subprocess, connects with ``mcp.stdio_client`` +
``ClientSession``, warms up, then times ``--repeat`` calls of each tool (client send to result
parsed) and prints the medians, next to the in-process time of the same Python call.

Usage::

    python scripts/mcp_roundtrip.py [--concepts 1000] [--repeat 50] [--scopes tenant-a] [--json]
    python scripts/mcp_roundtrip.py --write-fixture   # regenerate tests/fixtures/mcp_tools.json

``--write-fixture`` rewrites the pinned tool list from ``conceptwalk.serve.mcp.tool_specs()``;
review the diff before committing it: it is the public contract of the tools.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mcp_tools.json"


def write_fixture(path: Path = FIXTURE) -> None:
    from conceptwalk.serve.mcp import tool_specs

    payload = {
        "comment": "The MCP tool list served by conceptwalk (names, arguments, descriptions) - a "
        "public contract. Regenerate deliberately: CONCEPTWALK_UPDATE_FIXTURES=1 "
        "python -m pytest tests/test_mcp.py -k fixture, or python "
        "scripts/mcp_roundtrip.py --write-fixture.",
        "tools": tool_specs(with_query=True),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def build_kb(path: str, concepts: int, seed: int) -> Any:
    from conceptwalk.kb import synthetic
    from conceptwalk.kb.store import KnowledgeBase

    syn = synthetic.generate(concepts, seed=seed)
    with KnowledgeBase.create(path) as kb:
        kb.add_nodes(syn.node_rows())
        kb.add_edges(syn.edge_rows())
        kb.add_aliases(syn.alias_rows())
    return syn


def pick_calls(kb_path: str, syn: Any, caller: Any, seed: int) -> dict[str, dict[str, Any]]:
    from conceptwalk import graph_path, link_suggest
    from conceptwalk.kb.store import KnowledgeBase

    with KnowledgeBase.open(kb_path, create=False) as kb:
        g = kb.graph()
        vm = caller.visibility(g)
        vis = set(g.ids) if vm is None else {i for i, m in zip(g.ids, vm.mask.tolist()) if m}
        concepts = [i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT" and i in vis]
        q = next(q for q in syn.queries(50, seed=seed) if q["concept"] in vis)
        sug = next(c for c in concepts if link_suggest(kb, c, k=10, caller=caller).suggestions)
        far = next(
            c for c in reversed(concepts) if c != q["concept"] and graph_path(kb, q["concept"], c, caller=caller).found
        )
    calls = {
        "graph_context": {"question": q["text"], "k": 20},
        "link_suggest": {"concept": sug, "k": 10},
        "graph_path": {"source": q["concept"], "target": far},
        "query": {"text": q["text"], "k": 10},
        "query+walk": {"text": q["text"], "k": 10, "conceptWalk": True},
    }
    return calls


def in_process_ms(kb_path: str, calls: dict[str, dict[str, Any]], caller: Any, repeat: int) -> dict[str, float]:
    from conceptwalk.serve.mcp import ToolServer
    from conceptwalk.kb.store import KnowledgeBase

    out: dict[str, float] = {}
    with KnowledgeBase.open(kb_path, create=False) as kb:
        ts = ToolServer(kb, caller=caller)
        names = {t["name"] for t in ts.list_tools()}
        for label, args in calls.items():
            name = label.split("+")[0]
            if name not in names:
                continue
            for _ in range(5):
                ts.call(name, args)
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                res = ts.call(name, args)
                times.append((time.perf_counter() - t0) * 1e3)
            if res.is_error:
                raise SystemExit(f"{label} failed in process: {res.text}")
            out[label] = statistics.median(times)
    return out


async def stdio_ms(kb_path: str, calls: dict[str, dict[str, Any]], scopes: str, repeat: int) -> dict[str, Any]:
    import mcp

    params = mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "conceptwalk", "serve", kb_path, "--scopes", scopes]
    )
    out: dict[str, Any] = {}
    t_start = time.perf_counter()
    async with mcp.stdio_client(params) as (read, write):
        async with mcp.ClientSession(read, write) as session:
            await session.initialize()
            out["startup_ms"] = (time.perf_counter() - t_start) * 1e3
            t0 = time.perf_counter()
            listed = await session.list_tools()
            out["list_tools_ms"] = (time.perf_counter() - t0) * 1e3
            names = {t.name for t in listed.tools}
            times: dict[str, float] = {}
            for label, args in calls.items():
                name = label.split("+")[0]
                if name not in names:
                    continue
                for _ in range(5):
                    await session.call_tool(name, args)
                samples = []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    res = await session.call_tool(name, args)
                    samples.append((time.perf_counter() - t0) * 1e3)
                if res.is_error:
                    raise SystemExit(f"{label} failed over stdio: {res.content[0].text}")
                times[label] = statistics.median(samples)
            out["median_ms"] = times
            t0 = time.perf_counter()
            samples = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                await session.send_ping()
                samples.append((time.perf_counter() - t0) * 1e3)
            out["ping_median_ms"] = statistics.median(samples)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-fixture", action="store_true", help="regenerate tests/fixtures/mcp_tools.json and exit")
    ap.add_argument("--kb", help="use this KB file instead of a temporary synthetic one")
    ap.add_argument("--concepts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--scopes", default="tenant-a", help="caller of the server (default: %(default)s)")
    ap.add_argument(
        "--only",
        default=None,
        help="comma-separated labels to time (graph_context,link_suggest,graph_path,query,query+walk)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.write_fixture:
        write_fixture()
        return 0

    import anyio

    from conceptwalk.kb import synthetic
    from conceptwalk.graph.visibility import Caller

    caller = Caller.from_spec(args.scopes)
    with tempfile.TemporaryDirectory() as tmp:
        if args.kb:
            kb_path = args.kb
            syn = synthetic.generate(args.concepts, seed=args.seed)
        else:
            kb_path = os.path.join(tmp, "kb.db")
            syn = build_kb(kb_path, args.concepts, args.seed)
        calls = pick_calls(kb_path, syn, caller, args.seed)
        if args.only:
            wanted = [x.strip() for x in args.only.split(",") if x.strip()]
            unknown = sorted(set(wanted) - set(calls))
            if unknown:
                ap.error(f"--only: unknown labels {unknown}; known: {', '.join(calls)}")
            calls = {label: calls[label] for label in wanted}
        local = in_process_ms(kb_path, calls, caller, args.repeat)
        remote = anyio.run(stdio_ms, kb_path, calls, args.scopes, args.repeat)
    import mcp
    from importlib.metadata import version

    report = {
        "mcp_sdk": version("mcp"),
        "python": sys.version.split()[0],
        "concepts": args.concepts,
        "nodes": len(syn.ids),
        "edges": int(syn.src.shape[0]),
        "scopes": args.scopes,
        "repeat": args.repeat,
        "stdio": remote,
        "in_process_median_ms": local,
        "calls": calls,
    }
    del mcp
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"MCP SDK {report['mcp_sdk']}, Python {report['python']}; synthetic KB {args.concepts} concepts "
        f"({report['nodes']} nodes, {report['edges']} edges); caller --scopes {args.scopes}; "
        f"median of {args.repeat} calls after 5 warm-up calls"
    )
    print(
        f"  server start + initialize: {remote['startup_ms']:.0f} ms; tools/list: {remote['list_tools_ms']:.2f} ms; "
        f"ping: {remote['ping_median_ms']:.3f} ms"
    )
    print(f"  {'tool':<14} {'stdio round trip':>17} {'in process':>11}")
    for label, ms in remote["median_ms"].items():
        print(f"  {label:<14} {ms:>14.3f} ms {local.get(label, float('nan')):>8.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
