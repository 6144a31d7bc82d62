"""The ``serve`` command: the MCP tool server over stdio (:mod:`conceptwalk.serve.mcp`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from ..errors import ConceptwalkError
from ..graph import Caller
from ._common import int_in, type_names
from ..serve.mcp import INSTALL_HINT, TOKEN_ENV, TOKEN_META_KEY, TokenFile, ToolServer, require_mcp, serve_stdio
from ._common import warn_unknown_scopes, warn_unknown_token_scopes

__all__ = ["register"]


def cmd_serve(args: argparse.Namespace) -> int:
    """``conceptwalk serve KB``: the MCP server over stdio."""
    require_mcp()  # before touching the KB: say what to install first
    from ..kb import KnowledgeBase

    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="conceptwalk serve: %(levelname)s: %(message)s"
    )
    if not os.path.exists(args.kb):
        raise ConceptwalkError(f"knowledge base file not found: {args.kb}")
    if args.token_file is not None and args.scopes is not None:
        raise ConceptwalkError("give --scopes or --token-file, not both")
    if args.require_token and args.token_file is None:
        raise ConceptwalkError("--require-token needs --token-file")
    tokens = TokenFile(args.token_file) if args.token_file is not None else None
    session_token = (os.environ.get(TOKEN_ENV) or None) if tokens is not None else None
    caller = Caller.public() if args.scopes is None else Caller.from_spec(args.scopes)
    with (
        KnowledgeBase.open(args.kb, read_only=True) if args.read_only else KnowledgeBase.open(args.kb, create=False)
    ) as kb:
        tools = ToolServer(
            kb,
            caller=caller,
            tokens=tokens,
            session_token=session_token,
            require_token=args.require_token,
            event_sink=args.events,
            walk_config=_serve_walk_config(args),
        )
        kb.graph()  # build the snapshot before the first call
        warn_unknown_scopes(kb, caller)  # an unknown --scopes name: a typo that grants nothing
        if tokens is not None:  # and the same for each entry of the token file
            warn_unknown_token_scopes(kb, tokens)
        print(
            f"conceptwalk serve: {args.kb}, tools: {', '.join(t['name'] for t in tools.list_tools())}; "
            f"caller without token: {caller}" + (f"; tokens from {args.token_file}" if tokens else ""),
            file=sys.stderr,
        )
        serve_stdio(tools)
    return 0


def _serve_walk_config(args: argparse.Namespace) -> Any:
    """The query tool's WalkConfig from the serve flags (None: the defaults)."""
    given = {
        "concept_node_types": args.concept_types,
        "expand_edge_types": args.expand_edge_types,
        "admit_edge_types": args.admit_edge_types,
        "max_candidates": args.max_added,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return None
    from ..wrap import WalkConfig

    return WalkConfig(**given)


def register(subparsers: Any) -> None:
    """Add the ``serve`` sub-command to the ``conceptwalk`` CLI.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
    """
    p = subparsers.add_parser(
        "serve",
        help="MCP tool server over stdio (needs the mcp extra)",
        description="Serve graph_context, link_suggest, graph_path (and query when the wrap is "
        "installed) to an MCP client over stdin/stdout. Without --scopes or "
        "--token-file the server answers for PUBLIC NODES ONLY. "
        f"Requires the MCP SDK: {INSTALL_HINT}.",
    )
    p.add_argument("kb", help="the knowledge base (SQLite file)")
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the KB read-only (mode=ro; immutable=1 on read-only media without -wal/-shm)",
    )
    p.add_argument(
        "--scopes",
        default=None,
        help="the caller without a token: '' public nodes only (the default), 'a,b' public nodes plus "
        "scopes a and b, '*' all access (give it explicitly)",
    )
    p.add_argument(
        "--token-file",
        default=None,
        help='JSON {token: [scopes] or "*"}; clients present a token in '
        f"_meta[{TOKEN_META_KEY!r}] or via {TOKEN_ENV}; calls without a token "
        "see public nodes only",
    )
    p.add_argument("--require-token", action="store_true", help="with --token-file: reject calls that present no token")
    p.add_argument(
        "--concept-types",
        type=type_names,
        default=None,
        metavar="T1,T2",
        help="query tool: node types the walk starts from (default: CONCEPT)",
    )
    p.add_argument(
        "--expand-edge-types",
        type=type_names,
        default=None,
        metavar="E1,E2",
        help="query tool: edge types the walk goes through",
    )
    p.add_argument(
        "--admit-edge-types",
        type=type_names,
        default=None,
        metavar="E1,E2",
        help="query tool: edge types whose far end may be appended",
    )
    p.add_argument(
        "--max-added",
        type=int_in(0, 1000),
        default=None,
        metavar="N",
        help="query tool: at most N items appended (a call's maxAdded never exceeds it; default 20)",
    )
    p.add_argument(
        "--events",
        default=None,
        help="sink for the query tool's retrieval events: 'jsonl:PATH', 'logging' (stderr); default: none",
    )
    p.set_defaults(func=cmd_serve)
