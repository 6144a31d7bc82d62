"""Graph-tool commands: ``context``, ``suggest``, ``path``."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ConceptwalkError
from ._common import MAX_K, add_common, caller_from_spec, emit, float_in, int_in, open_kb, warn_unknown_scopes

__all__ = ["register"]


def cmd_context(args: argparse.Namespace) -> int:
    from ..tools import graph_context

    if args.question is None and not args.concept:  # a usage error (exit 2), as the MCP tool's
        raise ConceptwalkError("context needs a question or at least one --concept")
    # an empty or blank question is graph_context's InputError (exit 2), with or without --concept
    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=args.read_only) as kb:
        warn_unknown_scopes(kb, caller)
        res = graph_context(
            kb,
            args.question,
            concepts=args.concept or (),
            k=args.k,
            caller=caller,
            restart=args.restart,
            eps=args.eps,
            node_types=args.node_type or None,
            n_hits=args.hits,
            rank=args.rank,
            max_hops=args.max_hops,
        )
        emit(res, args.json)
    return 0


def cmd_suggest(args: argparse.Namespace) -> int:
    from ..tools import link_suggest

    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=args.read_only) as kb:
        warn_unknown_scopes(kb, caller)
        res = link_suggest(kb, args.concept, k=args.k, caller=caller, min_shared=args.min_shared, method=args.method)
        emit(res, args.json)
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from ..tools import graph_path

    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=args.read_only) as kb:
        warn_unknown_scopes(kb, caller)
        res = graph_path(kb, args.source, args.target, caller=caller)
        emit(res, args.json)
    return 0 if res.found else 1  # no visible chain: status 1, as grep's for no match


def register(sub: Any) -> None:
    """Add this group's sub-commands to the ``conceptwalk`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = sub.add_parser("context", help="nodes around a question, ranked by personalized PageRank")
    p.add_argument("kb", help="the knowledge base file")
    p.add_argument("question", nargs="?", help="free text, searched for seeds (or give --concept)")
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)",
    )
    p.add_argument("--concept", action="append", help="seed concept id (repeatable)")
    p.add_argument("-k", type=int_in(1, MAX_K), default=20, help="results to return (default 20)")
    p.add_argument("--node-type", action="append", help="keep results of this type (repeatable)")
    p.add_argument(
        "--restart",
        type=float_in(0.0, 1.0, open_hi=True),
        default=0.25,
        help="PPR restart probability alpha (default 0.25)",
    )
    p.add_argument("--eps", type=float_in(0.0, 1.0), default=1e-4, help="PPR push threshold (default 1e-4)")
    p.add_argument(
        "--n-hits",
        "--hits",
        dest="hits",
        type=int_in(1, 10_000),
        default=10,
        help="full-text hits used as seeds (default 10; the API's n_hits; --hits is the old name)",
    )
    p.add_argument(
        "--rank",
        choices=["ppr", "coverage"],
        default="ppr",
        help="ppr (default), or coverage: by how many seeds reach a node within --max-hops, then PPR",
    )
    p.add_argument("--max-hops", type=int_in(1, 3), default=2, help="hops for --rank coverage (1-3)")
    add_common(p)
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("suggest", help="missing links for a concept (resource allocation or rooted PageRank)")
    p.add_argument("kb", help="the knowledge base file")
    p.add_argument("concept", help="the concept id to suggest links for")
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)",
    )
    p.add_argument("-k", type=int_in(1, MAX_K), default=10, help="suggestions to return (default 10)")
    p.add_argument(
        "--method",
        choices=["ra", "ppr"],
        default="ra",
        help="ra (default): resource allocation over shared neighbours; ppr: rooted PageRank from the "
        "concept, which also finds links past two hops (sparse, tree-like graphs)",
    )
    p.add_argument(
        "--min-shared",
        type=int_in(1, MAX_K),
        default=None,
        help="--method ra only: least number of shared neighbours a suggestion needs (default 2)",
    )
    add_common(p)
    p.set_defaults(func=cmd_suggest)

    p = sub.add_parser(
        "path", help="shortest chain between two concepts (exit status 1 when no visible chain joins them)"
    )
    p.add_argument("kb", help="the knowledge base file")
    p.add_argument("source", help="the id the chain starts at")
    p.add_argument("target", help="the id the chain ends at")
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)",
    )
    add_common(p)
    p.set_defaults(func=cmd_path)
