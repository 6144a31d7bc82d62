"""CLI sub-commands of the concept-anchored walk: ``query``, ``probe`` and ``events summarize``.

Registered by :func:`conceptwalk.cli.build_parser`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import warnings
from typing import Any

from ..errors import ConceptwalkError
from ._common import MAX_K, add_scopes, caller_from_spec, emit, int_in, open_kb, type_names, warn_unknown_scopes

__all__ = ["register", "format_results"]


def format_results(results: list[dict[str, Any]]) -> str:
    """Results of a wrapped query as text: flat hits, then walk candidates with their best path.

    Parameters
    ----------
    results : list of dict
        What :meth:`~conceptwalk.wrap.ConceptAnchoredRetriever.query` returned.

    Returns
    -------
    str
        One line per result (numbered flat hits, ``+`` walk candidates).

    Examples
    --------
    >>> print(format_results([{"id": "a", "title": "A", "score": 1.5},
    ...                       {"id": "f", "title": None, "via": "concept-walk", "walkScore": 0.8,
    ...                        "paths": [{"hops": [{"from": "c", "to": "f", "type": "IMPLEMENTED_BY",
    ...                                             "direction": "forward"}]}]}]))
      1. a  A  (1.5)
      + f  (walk 0.8)  c -IMPLEMENTED_BY-> f
    """
    lines = []
    n = 0
    for r in results:
        title = r.get("title")
        if r.get("via") == "concept-walk":
            path = r["paths"][0]["hops"] if r.get("paths") else []
            chain = ""
            for j, h in enumerate(path):
                arrow = f" -{h['type']}-> " if h.get("direction") == "forward" else f" <-{h['type']}- "
                chain += (h["from"] if j == 0 else "") + arrow + h["to"]
            lines.append(f"  + {r['id']}" + (f"  {title}" if title else "") + f"  (walk {r['walkScore']:.3g})  {chain}")
        else:
            n += 1
            score = r.get("score")
            s = f"  ({score:.4g})" if isinstance(score, (int, float)) and not isinstance(score, bool) else ""
            lines.append(f"{n:>3}. {r.get('id')}" + (f"  {title}" if title else "") + s)
    return "\n".join(lines) if lines else "(no results)"


def _walk_config(args: argparse.Namespace, kb: Any = None, caller: Any = None, **fields: Any) -> Any:
    """The WalkConfig of ``query``/``probe``: the defaults, with the flags given
    (``--walk-types auto``: the KB's own types for ``caller``, then the explicit type flags)."""
    from dataclasses import replace

    from ..wrap import WalkConfig

    given = {
        "concept_node_types": args.concept_types,
        "max_candidates": args.max_added,
    }
    if getattr(args, "no_stop_rule", False):
        fields["stop_rule"] = False
    base = {k: v for k, v in given.items() if v is not None}
    if args.walk_types == "auto" and kb is not None:
        cfg = WalkConfig.for_kb(kb, caller=caller, max_hops=args.max_hops, **base, **fields)
    else:
        cfg = WalkConfig(max_hops=args.max_hops, **base, **fields)
    gates = {"expand_edge_types": args.expand_edge_types, "admit_edge_types": args.admit_edge_types}
    gates = {k: v for k, v in gates.items() if v is not None}
    return replace(cfg, **gates) if gates else cfg


def _say_types(caught: list[Any]) -> None:
    """The walk's type warnings as the CLI's warning lines (stderr; the command still runs)."""
    from ..wrap import WalkTypesWarning

    for w in caught:
        if issubclass(w.category, WalkTypesWarning):
            sys.stderr.write(f"conceptwalk: warning: {w.message}\n")
        else:  # anything else keeps its usual way out
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _add_walk_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--concept-types",
        type=type_names,
        default=None,
        metavar="T1,T2",
        help="node types the walk starts from (default: CONCEPT)",
    )
    p.add_argument(
        "--expand-edge-types",
        type=type_names,
        default=None,
        metavar="E1,E2",
        help="edge types the walk goes through (default: PARENT_CONCEPT,RELATED_TO)",
    )
    p.add_argument(
        "--admit-edge-types",
        type=type_names,
        default=None,
        metavar="E1,E2",
        help="edge types whose far end may be added (default: IMPLEMENTED_BY,EXPLAINED_BY,ATTACHED_TO,TAGGED_CONCEPT)",
    )
    p.add_argument(
        "--walk-types",
        choices=["default", "auto"],
        default="default",
        help="the walk's node and edge types: 'default' (the settings' defaults and the flags above) or "
        "'auto' (the KB's own, by the rule of WalkConfig.for_kb, for the caller; explicit type flags still win)",
    )
    p.add_argument(
        "--no-stop-rule",
        action="store_true",
        help="append every walk candidate up to --max-added (the stop rule off: weak evidence is not cut)",
    )
    p.add_argument(
        "--max-added",
        type=int_in(0, MAX_K),
        default=None,
        metavar="N",
        help="at most N items added after the flat results (the walk's candidate budget; default 20)",
    )
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)",
    )


def cmd_query(args: argparse.Namespace) -> int:
    from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=args.read_only) as kb:
        warn_unknown_scopes(kb, caller)
        cfg = _walk_config(args, kb, caller, embedder=args.embedder)
        flat = builtin_flat_search(
            kb, mode=args.mode, embedder=args.embedder if args.mode == "embedding" else None, caller=caller
        )
        retriever = ConceptAnchoredRetriever(flat, kb, config=cfg, event_sink=args.events)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = retriever.run(args.text, args.k, concept_walk=args.concept_walk, caller=caller)
    _say_types(caught)
    if args.json:
        emit(out.results, True)
    else:
        if out.event is not None:
            ev = out.event
            concepts = ", ".join(f"{c['id']} ({c['method']} {c['confidence']:.2f})" for c in ev["resolvedConcepts"])
            cut = f", {ev['cut']} cut by the stop rule" if ev["cut"] else ""
            sys.stdout.write(
                f"concepts: {concepts or '(none resolved)'}; walk added {ev['candidatesAdded']}{cut}"
                f"{' (truncated)' if ev['truncated'] else ''} in {ev['walkMs']:.2f} ms\n"
            )
        sys.stdout.write(format_results(out.results) + "\n")
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    from ..wrap import format_probe, probe, suggest_settings

    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=args.read_only) as kb:
        warn_unknown_scopes(kb, caller)
        cfg = _walk_config(args, kb, caller)
        rep = probe(kb, cfg, caller=caller)
        suggested = (
            suggest_settings(kb, cfg, caller=caller, kb_path=args.kb) if not rep["reach"]["concepts2Hops"] else None
        )
    if suggested is not None and args.scopes.strip():  # the line runs for the caller it was found for
        suggested["command"] += f" --scopes {shlex.quote(args.scopes.strip())}"
    if args.json:
        emit(rep if suggested is None else dict(rep, suggested=suggested), True)
    else:
        sys.stdout.write(format_probe(rep) + "\n")
        if suggested is not None:
            r = suggested["reach"]
            sys.stdout.write(
                f"  these settings find nothing; suggested for this KB (concepts of type "
                f"{', '.join(suggested['conceptNodeTypes'])}: {r['concepts2Hops']:,} reach a "
                f"candidate within 2 hops):\n    {suggested['command']}\n"
            )
    return 0


def cmd_events_summarize(args: argparse.Namespace) -> int:
    from ..wrap.events import summarize_file

    if not os.path.exists(args.file):
        raise ConceptwalkError(f"events file not found: {args.file}")
    s = summarize_file(args.file)
    if args.json:
        emit(s, True)
        return 0
    if not s["events"]:
        sys.stdout.write(f"{s['file']}: no retrieval events ({s['malformed']} malformed lines)\n")
        return 0
    w = s["walkMs"]
    sys.stdout.write(
        f"{s['file']}: {s['events']:,} walks, {s['contributed']:,} contributed "
        f"({100 * s['contributionRate']:.1f}%)\n"
        f"  candidates added: total {s['candidatesAdded']['total']:,}, mean {s['candidatesAdded']['mean']:.2f}\n"
        f"  cut by the stop rule: total {s['cut']['total']:,}, mean {s['cut']['mean']:.2f} "
        f"(score {s['cut']['byScore']:,}, hops {s['cut']['byHops']:,})\n"
        f"  walk time (ms): p50 {w['p50']:.3f}, p90 {w['p90']:.3f}, p99 {w['p99']:.3f}, max {w['max']:.3f}\n"
        f"  truncated by a budget: {s['truncated']:,}; malformed lines: {s['malformed']}; other events: {s['skipped']}\n"
    )
    return 0


def register(subparsers: Any) -> None:
    """Add ``query``, ``probe`` and ``events`` to the ``conceptwalk`` command.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = subparsers.add_parser(
        "query",
        help="flat search (BM25 over what the caller sees, or embedding), optionally wrapped by the concept walk",
    )
    p.add_argument("kb", help="the knowledge base file")
    p.add_argument("text", help="the query text")
    p.add_argument("--concept-walk", action="store_true", help="append concept-walk candidates after the flat results")
    p.add_argument("-k", type=int_in(1, MAX_K), default=10, help="flat results (default: %(default)s)")
    p.add_argument("--mode", choices=["fts", "embedding"], default="fts", help="flat search (default: %(default)s)")
    p.add_argument("--embedder", default="hashing", help="embedder spec (default: %(default)s)")
    p.add_argument("--max-hops", type=int, default=2, choices=[1, 2], help="walk hops (default: %(default)s)")
    p.add_argument("--events", default=None, help="retrieval event sink: jsonl:PATH, logging")
    add_scopes(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    _add_walk_flags(p)
    p.set_defaults(func=cmd_query)

    p = subparsers.add_parser("probe", help="how much could the concept walk add on this KB?")
    p.add_argument("kb", help="the knowledge base file")
    p.add_argument("--max-hops", type=int, default=2, choices=[1, 2], help="walk hops (default: %(default)s)")
    add_scopes(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_walk_flags(p)
    p.set_defaults(func=cmd_probe)

    p = subparsers.add_parser("events", help="retrieval events of the concept walk")
    sub = p.add_subparsers(dest="events_command", required=True, metavar="ACTION")
    s = sub.add_parser("summarize", help="contribution rate, candidates added, walk-time percentiles")
    s.add_argument("file", help="a JSONL events file (from --events jsonl:PATH)")
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(func=cmd_events_summarize)
