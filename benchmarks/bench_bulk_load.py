"""Bulk-load rates into a fresh store file (issue 31 item 5, issue 35 item 4). Measurements, not
tests: nothing is asserted on time.

    python benchmarks/bench_bulk_load.py [--edges 1000000] [--nodes 1000000] [--cases ...] [--json OUT]

Cases (each into a new store file, one run each, wall and CPU seconds; the machine may be shared,
so compare rows of one run and read the CPU seconds beside the wall seconds):

- ``sqlite-floor``: the rows of ``store-bulk`` as ready tuples, ``executemany`` of a plain
  ``INSERT`` into a bare copy of the ``nodes`` and ``edges`` tables (their keys and UNIQUE
  indexes, no trigger, no FTS, no upsert, no ``edges(dst)`` index) in one transaction, the same
  page size, cache and journal as a bulk load: what SQLite itself costs for these rows, with no
  Python mapping -- binding every column (NULLs as None), only the non-NULL ones, and those a
  hundred rows per statement.
- ``store-bulk``: ``--edges`` typed edges (``--edges / 5`` nodes, five parents each, a title
  per node; ``bench_formats.py``'s graph) as ready tuples in key order through
  ``KnowledgeBase.bulk`` + ``put_nodes``/``put_edges``: the store's bulk path.
- ``store-bulk-sentinel``: the same with a NULL as the sentinel ``node_tuple`` / ``edge_tuple``
  return (``NULL_TEXT`` 0, ``NULL_CONFIDENCE`` -1), which binds faster than None (not stored
  right by the code before that change: run it on the new code only).
- ``api-bulk``: ``--nodes`` nodes with a title and a body and ``2 * --nodes`` annotated edges as
  dicts in memory, through ``kb.bulk()`` + ``add_nodes`` / ``add_edges`` (row checks included).
- ``jsonl``: the same rows as a JSONL file (nodes first, then edges), ``import_file`` into a new
  store (which keeps no FTS5 index: ``enable_fts``), then into one that keeps it (what every
  store did before 2026-12-07); beside them ``jsonl-parse``: the same file read, scanned and
  checked (``node_tuple`` / ``edge_tuple``) without a store -- the parser and mapping's share,
  so ``write = jsonl - jsonl-parse``. Each import row gives ``target_s``, the time issue 31's
  rates allow for its rows (``nodes / 100k + edges / 300k`` s), and whether the load was
  within it.
- ``obo``: ``bench_formats.py``'s synthetic OBO of ``--edges`` is_a links, ``import_file``
  (fastobo's parse seconds reported apart by the importer).
- ``synth``: ``conceptwalk synth --concepts N`` in a subprocess (``--synth-concepts``, default
  1,000,000; 0 skips it): its wall time, as a user runs it. With ``--writes-after W``: then W
  one-row writes into that store, each in its own transaction (an agent's memory node with a
  title): their median and largest time, and the full-text index's segments after the load (a
  load that left several large ones had one such write merge them all, for seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conceptwalk.kb import KnowledgeBase
from conceptwalk.kb.formats import import_file
from conceptwalk.kb.store import edge_tuple, node_tuple

sys.path.insert(0, str(Path(__file__).parent))
from bench_formats import synthetic_files, synthetic_parents  # noqa: E402

_WORDS = None


def _words() -> list[str]:
    global _WORDS
    if _WORDS is None:
        rng = random.Random(5)
        letters = "abcdefghijklmnopqrstuvwxyz"
        _WORDS = sorted({"".join(rng.choice(letters) for _ in range(rng.randrange(3, 10))) for _ in range(20000)})
    return _WORDS


def text_rows(n_nodes: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n_nodes`` nodes with a type, a title (2-6 words) and a body (10-40 words) from a skewed
    vocabulary of 20,000 words, scopes on a tenth, lifecycle on a third; two edges per node of
    four types, annotated (authority, extraction method and confidence) on about half."""
    rng = random.Random(31)
    words = _words()
    nw = len(words)

    def pick() -> str:
        return words[min(int(rng.paretovariate(1.1)) - 1, nw - 1) if rng.random() < 0.5 else rng.randrange(nw)]

    nodes = []
    for i in range(n_nodes):
        r: dict[str, Any] = {
            "id": f"N:{i:07d}",
            "type": ("CONCEPT", "FILE", "PERSON")[i % 3],
            "title": " ".join(pick() for _ in range(rng.randrange(2, 7))),
            "body": " ".join(pick() for _ in range(rng.randrange(10, 41))),
        }
        if i % 10 == 0:
            r["scopes"] = ["team-a"] if i % 20 else ["team-a", "team-b"]
        if i % 3 == 0:
            r["lifecycle"] = "active"
        nodes.append(r)
    edges = []
    types = ("LINK", "CITES", "IS_A", "PART_OF")
    for i in range(n_nodes):
        for j in {rng.randrange(n_nodes), rng.randrange(n_nodes)}:
            e: dict[str, Any] = {"src": f"N:{i:07d}", "dst": f"N:{j:07d}", "type": types[(i + j) % 4]}
            if (i + j) % 2:
                e["authority"] = "CURATED"
                e["extraction_method"] = "TAGGED_CONCEPT"
                e["extraction_confidence"] = 0.8
            edges.append(e)
    return nodes, edges


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(t: tuple[float, float]) -> tuple[float, float]:
    return time.perf_counter() - t[0], time.process_time() - t[1]


def _row(case: str, nodes: int, edges: int, wall: float, cpu: float, **extra: Any) -> dict[str, Any]:
    return {
        "case": case,
        "nodes": nodes,
        "edges": edges,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "edges_per_s": round(edges / wall) if wall > 0 and edges else None,
        "nodes_per_s": round(nodes / wall) if wall > 0 and nodes else None,
        **extra,
    }


def _store_bulk_rows(n_edges: int, null: str = "none") -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of ``store-bulk``; a NULL as None (``null="none"``) or as the sentinels
    ``node_tuple`` / ``edge_tuple`` return (``"sentinel"``: 0, and -1 for the confidence)."""
    parents = synthetic_parents(n_edges)
    z, zc = (None, None) if null == "none" else (0, -1)
    nodes = [(f"S:{i:07d}", z, f"term {i}", z, z, z, 4) for i in range(len(parents))]
    edges = sorted(
        (f"S:{i:07d}", f"S:{j:07d}", "is_a", z, z, z, zc, z, 0) for i, ps in enumerate(parents) for j in set(ps)
    )
    return nodes, edges


def sqlite_floor(d: str, n_edges: int, variant: str = "all") -> dict[str, Any]:
    """SQLite's own cost for the rows of ``store-bulk``: ``executemany`` of a plain INSERT into
    a bare copy of the two tables (keys and UNIQUE indexes; no trigger, FTS, upsert or index on
    ``dst``). ``variant``: ``"all"`` binds every column (a NULL as None), ``"non-null"`` only
    the columns that hold a value (node id and title; edge src, dst, type), ``"multi"`` those
    a hundred rows per statement."""
    nodes, edges = _store_bulk_rows(n_edges)
    if variant == "all":
        node_rows: list[Any] = [r[:6] for r in nodes]
        edge_rows: list[Any] = [r[:8] for r in edges]
        node_sql = "INSERT INTO nodes(id, type, title, body, scopes, lifecycle) VALUES (?, ?, ?, ?, ?, ?)"
        edge_sql = "INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    else:
        k = 100 if variant == "multi" else 1
        node_rows = [(r[0], r[2]) for r in nodes]
        edge_rows = [r[:3] for r in edges]
        if k > 1:
            node_rows = [sum(node_rows[i : i + k], ()) for i in range(0, len(node_rows) // k * k, k)]
            edge_rows = [sum(edge_rows[i : i + k], ()) for i in range(0, len(edge_rows) // k * k, k)]
        node_sql = "INSERT INTO nodes(id, title) VALUES " + ", ".join(["(?, ?)"] * k)
        edge_sql = "INSERT INTO edges(src, dst, type) VALUES " + ", ".join(["(?, ?, ?)"] * k)
    p = os.path.join(d, f"floor-{variant}.sqlite")
    conn = sqlite3.connect(p, isolation_level=None)
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA cache_size = -262144")
    conn.executescript(
        "CREATE TABLE nodes(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT, title TEXT, body TEXT, "
        "scopes TEXT, lifecycle TEXT);"
        "CREATE TABLE edges(src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL, authority TEXT, fidelity TEXT, "
        "extraction_method TEXT, extraction_confidence REAL, lifecycle TEXT, UNIQUE(src, dst, type));"
    )
    t = _clock()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(node_sql, node_rows)
    tn = _since(t)
    conn.executemany(edge_sql, edge_rows)
    conn.execute("COMMIT")
    wall, cpu = _since(t)
    n_nodes, n_edges_in = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodes", "edges"))
    conn.close()
    return _row(
        f"sqlite-floor ({variant}: plain INSERT, no upsert/trigger/FTS/dst index)",
        n_nodes,
        n_edges_in,
        wall,
        cpu,
        nodes_s=round(tn[0], 3),
        nodes_cpu_s=round(tn[1], 3),
        edges_per_s_edge_phase=round(n_edges_in / (wall - tn[0])),
        edges_per_cpu_s_edge_phase=round(n_edges_in / (cpu - tn[1])),
    )


def store_bulk(d: str, n_edges: int, null: str = "none") -> dict[str, Any]:
    nodes, edges = _store_bulk_rows(n_edges, null)
    kb = KnowledgeBase.create(os.path.join(d, f"store-bulk-{null}.sqlite"))
    t = _clock()
    with kb.bulk():
        for i in range(0, len(nodes), 4096):
            kb.put_nodes(nodes[i : i + 4096])
        tn = _since(t)
        for i in range(0, len(edges), 4096):
            kb.put_edges(edges[i : i + 4096], endpoints_exist=True)
    wall, cpu = _since(t)
    kb.close()
    return _row(
        f"store-bulk (ready tuples, key order, NULL as {null})",
        len(nodes),
        len(edges),
        wall,
        cpu,
        nodes_s=round(tn[0], 3),
    )


def api_bulk(d: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    kb = KnowledgeBase.create(os.path.join(d, "api-bulk.sqlite"))
    t = _clock()
    with kb.bulk():
        kb.add_nodes(nodes)
        tn = _since(t)
        kb.add_edges(edges)
    wall, cpu = _since(t)
    n_edges = kb.stats()["edges"]
    kb.close()
    return _row(
        "api-bulk (kb.bulk + add_nodes/add_edges, dicts)", len(nodes), n_edges, wall, cpu, nodes_s=round(tn[0], 3)
    )


def write_jsonl(path: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> None:
    dumps = json.dumps
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(dumps(r) + "\n" for r in nodes)
        fh.writelines(dumps(r) + "\n" for r in edges)


def jsonl_parse(path: str, n_nodes: int, n_edges: int) -> dict[str, Any]:
    """The JSONL importer's per-line work without a store: read, scan, check."""
    from json import scanner

    scan = scanner.make_scanner(json.JSONDecoder())
    t = _clock()
    out_n = out_e = 0
    with open(path, encoding="utf-8", newline="") as fh:
        for line in fh:
            obj, _ = scan(line, 0)
            if "id" in obj:
                node_tuple(obj)
                out_n += 1
            else:
                edge_tuple(obj)
                out_e += 1
    wall, cpu = _since(t)
    return _row("jsonl-parse (scan + row checks, no store)", out_n, out_e, wall, cpu)


#: Issue 31 item 5's rates: a load of N nodes and E edges is within them when it takes at most
#: N / 100k + E / 300k seconds (each kind at its rate; the file holds both).
TARGET_NODES_PER_S = 100_000
TARGET_EDGES_PER_S = 300_000


def run_import(d: str, case: str, path: str, fts: bool = False) -> dict[str, Any]:
    kb = KnowledgeBase.create(os.path.join(d, case.split(" ")[0] + ("-fts" if fts else "") + ".sqlite"))
    if fts:
        kb.enable_fts()  # the optional FTS5 index kept from the start (every store before 2026-12-07)
    t = _clock()
    s = import_file(kb, path)
    wall, cpu = _since(t)
    kb.close()
    parse = s.parse_seconds or 0.0
    budget = s.nodes / TARGET_NODES_PER_S + s.edges / TARGET_EDGES_PER_S
    return _row(
        case + (", with the FTS5 index" if fts else ""),
        s.nodes,
        s.edges,
        wall,
        cpu,
        parse_s=round(parse, 3),
        write_s=round(wall - parse, 3),
        edges_per_s_write=round(s.edges / (wall - parse)) if parse else None,
        target_s=round(budget, 3),
        within_target=wall <= budget,
    )


def synth(d: str, concepts: int) -> dict[str, Any]:
    p = os.path.join(d, "synth.sqlite")
    t = _clock()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "conceptwalk"), "synth", p, "--concepts", str(concepts)],
        capture_output=True,
        text=True,
    )
    wall, _ = _since(t)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)  # the subprocess's CPU seconds
    if r.returncode:
        raise SystemExit(f"conceptwalk synth failed: {r.stderr}")
    c = sqlite3.connect(p)
    nodes, edges = (c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodes", "edges"))
    c.close()
    return _row(
        f"synth --concepts {concepts:,} (subprocess, generate + write)",
        nodes,
        edges,
        wall,
        cpu,
        out=(r.stdout + r.stderr).strip()[-300:],
    )


def writes_after(path: str, writes: int) -> dict[str, Any]:
    """``writes`` one-row writes into the store at ``path`` (each its own transaction), timed."""
    from conceptwalk.kb.store import KnowledgeBase, _fts_segment_pages

    with KnowledgeBase.open(path) as kb:
        segments = _fts_segment_pages(kb.conn)
        times = []
        for t in range(writes):
            t0 = time.perf_counter()
            kb.add_nodes([{"id": f"bench-write-{t}", "type": "MEMORY", "title": f"turn {t}: the agent's memory"}])
            times.append(time.perf_counter() - t0)
    slow = [(t, round(1e3 * x, 1)) for t, x in enumerate(times) if x > 0.1]
    times.sort()
    return {
        "case": f"{writes:,} one-row writes after the load",
        "fts_segment_pages": segments,
        "median_ms": round(1e3 * times[len(times) // 2], 3),
        "max_ms": round(1e3 * times[-1], 1),
        "over_100ms": slow,  # (which write, ms)
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=1_000_000, help="edges of store-bulk and OBO (default 1,000,000)")
    ap.add_argument("--nodes", type=int, default=1_000_000, help="nodes of the JSONL and api cases (default 1,000,000)")
    ap.add_argument("--synth-concepts", type=int, default=1_000_000, help="conceptwalk synth size (0: skip)")
    ap.add_argument(
        "--cases",
        nargs="+",
        default=["sqlite-floor", "store-bulk", "store-bulk-sentinel", "api-bulk", "jsonl", "obo", "synth"],
        choices=["sqlite-floor", "store-bulk", "store-bulk-sentinel", "api-bulk", "jsonl", "obo", "synth"],
    )
    ap.add_argument("--writes-after", type=int, default=0, help="one-row writes into the synth store (0: none)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    out: list[dict[str, Any]] = []

    def show(row: dict[str, Any]) -> None:
        out.append(row)
        print(json.dumps(row), flush=True)

    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        if "sqlite-floor" in args.cases:
            for variant in ("all", "non-null", "multi"):
                show(sqlite_floor(d, args.edges, variant))
        if "store-bulk" in args.cases:
            show(store_bulk(d, args.edges))
        if "store-bulk-sentinel" in args.cases:
            show(store_bulk(d, args.edges, "sentinel"))
        if "api-bulk" in args.cases or "jsonl" in args.cases:
            nodes, edges = text_rows(args.nodes)
            if "api-bulk" in args.cases:
                show(api_bulk(d, nodes, edges))
            if "jsonl" in args.cases:
                p = os.path.join(d, "text.jsonl")
                write_jsonl(p, nodes, edges)
                n, e = len(nodes), len(edges)
                del nodes, edges
                show(jsonl_parse(p, n, e))
                show(run_import(d, "jsonl (import_file: nodes with titles and bodies + edges)", p))
                show(run_import(d, "jsonl (import_file: nodes with titles and bodies + edges)", p, fts=True))
                os.remove(p)
            else:
                del nodes, edges
        if "obo" in args.cases:
            files = synthetic_files(d, args.edges)
            for k in ("graphml", "jsonl"):
                os.remove(files[k])
            show(run_import(d, "obo (import_file, bench_formats' synthetic OBO)", files["obo"]))
        if "synth" in args.cases and args.synth_concepts:
            show(synth(d, args.synth_concepts))
            if args.writes_after:
                show(writes_after(os.path.join(d, "synth.sqlite"), args.writes_after))
    load = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps({"load_average": load, "results": out}, indent=2) + "\n")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
