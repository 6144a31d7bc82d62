"""Graph-tool commands: ``context``, ``suggest``, ``path``."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import MAX_K, add_common, caller_from_spec, emit, float_in, int_in, open_kb

__all__ = ["register"]


def cmd_context(args: argparse.Namespace) -> int:
    from ..tools import graph_context

    with open_kb(args.kb, read_only=args.read_only) as kb:
        res = graph_context(kb, args.question, concepts=args.concept or (), k=args.k,
                            caller=caller_from_spec(args.scopes), restart=args.restart, eps=args.eps,
                            node_types=args.node_type or None, n_hits=args.hits, rank=args.rank,
                            max_hops=args.max_hops)
        emit(res, args.json)
    return 0


def cmd_suggest(args: argparse.Namespace) -> int:
    from ..tools import link_suggest

    with open_kb(args.kb, read_only=args.read_only) as kb:
        emit(link_suggest(kb, args.concept, k=args.k, caller=caller_from_spec(args.scopes),
                           min_shared=args.min_shared), args.json)
    return 0


def cmd_path(args: argparse.Namespace) -> int:
    from ..tools import graph_path

    with open_kb(args.kb, read_only=args.read_only) as kb:
        emit(graph_path(kb, args.source, args.target, caller=caller_from_spec(args.scopes)), args.json)
    return 0


def register(sub: Any) -> None:
    """Add this group's sub-commands to the ``conceptwalk`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = sub.add_parser("context", help="nodes around a question, ranked by personalized PageRank")
    p.add_argument("kb")
    p.add_argument("question", nargs="?")
    p.add_argument("--read-only", action="store_true",
                   help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)")
    p.add_argument("--concept", action="append", help="seed concept id (repeatable)")
    p.add_argument("-k", type=int_in(1, MAX_K), default=20)
    p.add_argument("--node-type", action="append", help="keep results of this type (repeatable)")
    p.add_argument("--restart", type=float_in(0.0, 1.0, open_hi=True), default=0.25)
    p.add_argument("--eps", type=float_in(0.0, 1.0), default=1e-4)
    p.add_argument("--hits", type=int_in(1, 10_000), default=10, help="full-text hits used as seeds")
    p.add_argument("--rank", choices=["ppr", "coverage"], default="ppr",
                   help="ppr (default), or coverage: by how many seeds reach a node within --max-hops, then PPR")
    p.add_argument("--max-hops", type=int_in(1, 3), default=2, help="hops for --rank coverage (1-3)")
    add_common(p)
    p.set_defaults(func=cmd_context)

    p = sub.add_parser("suggest", help="missing links for a concept (resource allocation)")
    p.add_argument("kb")
    p.add_argument("concept")
    p.add_argument("--read-only", action="store_true",
                   help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)")
    p.add_argument("-k", type=int_in(1, MAX_K), default=10)
    p.add_argument("--min-shared", type=int_in(1, MAX_K), default=2)
    add_common(p)
    p.set_defaults(func=cmd_suggest)

    p = sub.add_parser("path", help="shortest chain between two concepts")
    p.add_argument("kb")
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--read-only", action="store_true",
                   help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)")
    add_common(p)
    p.set_defaults(func=cmd_path)
