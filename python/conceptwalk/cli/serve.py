"""The ``serve`` command: the MCP tool server over stdio (:mod:`conceptwalk.serve.mcp`) or over
Streamable HTTP (:mod:`conceptwalk.serve.mcp_http`)."""

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


def describe_caller(caller: Caller) -> str:
    """A caller in the start-up line's words ("public nodes only", "all access", ...)."""
    if caller.scopes is None:
        return "all access"
    if not caller.scopes:
        return "public nodes only"
    return "public nodes and scopes " + ", ".join(sorted(caller.scopes))


def without_token_line(tools: ToolServer, *, http: bool) -> str:
    """What the start-up line says about calls that present no token: exactly what the server
    will do with them."""
    if http:
        if tools.require_token:
            return "requests without a token: refused (401, --require-token)"
        return "requests without a token: public nodes only"
    if tools.require_token:
        return "calls without a token: refused (--require-token)"
    if tools.session_token is not None:
        caller = tools.resolve_caller(None)
        return f"calls without a per-call token: the {TOKEN_ENV} token's caller ({describe_caller(caller)})"
    return f"calls without a token: {describe_caller(tools.caller)}"


def cmd_serve(args: argparse.Namespace) -> int:
    """``conceptwalk serve KB``: the MCP server over stdio, or over Streamable HTTP with ``--http``."""
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
    settings = None
    if args.http is not None:
        settings = _http_settings(args)
    elif args.allow_origin or args.allow_remote or args.max_sessions is not None or args.max_body is not None:
        raise ConceptwalkError("--allow-origin, --allow-remote, --max-sessions and --max-body need --http")
    tokens = TokenFile(args.token_file, private=settings is not None) if args.token_file is not None else None
    session_token = (os.environ.get(TOKEN_ENV) or None) if tokens is not None and settings is None else None
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
        names = ", ".join(t["name"] for t in tools.list_tools())
        if settings is None:
            print(
                f"conceptwalk serve: {args.kb} over stdio, tools: {names}; {without_token_line(tools, http=False)}"
                + (f"; tokens from {args.token_file}" if tokens else ""),
                file=sys.stderr,
            )
            serve_stdio(tools)
            return 0
        from ..serve.mcp_http import is_loopback, serve_http

        if os.environ.get(TOKEN_ENV):
            print(
                f"conceptwalk serve: warning: {TOKEN_ENV} is ignored over HTTP (each request presents its "
                "own Authorization: Bearer token)",
                file=sys.stderr,
            )

        def listening(url: str) -> None:
            tok = (
                f"bearer tokens from {args.token_file}"
                if tokens
                else "no --token-file: a request presenting a token gets 401"
            )
            print(
                f"conceptwalk serve: {args.kb} over Streamable HTTP at {url}, tools: {names}; "
                f"{without_token_line(tools, http=True)}; {tok}",
                file=sys.stderr,
                flush=True,
            )
            if not is_loopback(settings.host):
                print(
                    f"conceptwalk serve: warning: listening on {settings.host}, reachable from other machines, "
                    "over plain HTTP: terminate TLS in front of it (a reverse proxy such as nginx or caddy; "
                    "see docs/mcp_server.md)",
                    file=sys.stderr,
                    flush=True,
                )

        serve_http(tools, settings, tokens=tokens, require_token=args.require_token, on_listening=listening)
    return 0


def _http_settings(args: argparse.Namespace) -> Any:
    """The HttpSettings of ``--http`` and its flags (refusing what would expose the server
    without being asked to)."""
    from ..serve.mcp_http import HttpSettings, is_loopback, parse_bind

    host, port = parse_bind(args.http)
    if args.scopes is not None:
        raise ConceptwalkError(
            "--scopes is for stdio; over HTTP who sees what comes from each request's bearer token "
            "(--token-file), and requests without one see public nodes only"
        )
    if not is_loopback(host) and not args.allow_remote:
        raise ConceptwalkError(
            f"--http {args.http}: {host} is not a loopback address; to listen where other machines can "
            "reach the server, add --allow-remote (and put TLS in front of it: a reverse proxy)"
        )
    for origin in args.allow_origin:
        if origin in ("*", "null") or "://" not in origin:
            raise ConceptwalkError(
                f"--allow-origin: expected an origin such as https://app.example.com, got {origin!r}"
            )
    given: dict[str, Any] = {}
    if args.max_sessions is not None:
        given["max_sessions"] = args.max_sessions
    if args.max_body is not None:
        given["max_body_bytes"] = args.max_body
    return HttpSettings(host=host, port=port, allow_origins=tuple(args.allow_origin), **given)


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
        help="MCP tool server over stdio or Streamable HTTP (needs the mcp extra)",
        description="Serve graph_context, link_suggest, graph_path, read_node (and query when the wrap "
        "is installed) to an MCP client over stdin/stdout, or over Streamable HTTP with --http. "
        "Without --scopes or a token the server answers for PUBLIC NODES ONLY. "
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
        help='JSON {token: [scopes] or "*"}, each token once; over stdio clients present a token in '
        f"_meta[{TOKEN_META_KEY!r}] or via {TOKEN_ENV}, over HTTP in Authorization: Bearer (the "
        "file must then be private: chmod 600); calls without a token see public nodes only",
    )
    p.add_argument("--require-token", action="store_true", help="with --token-file: reject calls that present no token")
    p.add_argument(
        "--http",
        default=None,
        metavar="HOST:PORT",
        help="serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to "
        "127.0.0.1, PORT to 8765; 0 picks a free port); tokens come from Authorization: Bearer",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --http: allow a HOST other than loopback (reachable from other machines; put TLS "
        "in front of it with a reverse proxy)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="with --http: also accept requests from this browser Origin (e.g. https://app.example.com; "
        "repeatable); default: none but the server's own (others get 403)",
    )
    p.add_argument(
        "--max-sessions",
        type=int_in(1, 100_000),
        default=None,
        metavar="N",
        help="with --http: open MCP sessions at most (one more gets 503; idle ones close after 5 min; default 1000)",
    )
    p.add_argument(
        "--max-body",
        type=int_in(1024, 64 * 1024 * 1024),
        default=None,
        metavar="BYTES",
        help="with --http: largest request body (larger gets 413; default 262144)",
    )
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
