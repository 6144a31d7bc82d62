"""The ``explore`` command: the local read-only explorer page (:mod:`conceptwalk.serve.explore`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..errors import ConceptwalkError
from ..graph import Caller
from ._common import int_in, warn_unknown_scopes, warn_unknown_token_scopes

__all__ = ["register", "explorer_callers"]


def explorer_callers(scopes: list[str] | None, token_file: str | None) -> list[tuple[str, Caller]]:
    """The callers the page may switch among: one per ``--scopes`` value, or one per entry of a
    token file (labelled by position, never by token); public only when neither is given.

    Parameters
    ----------
    scopes : list of str or None
        The ``--scopes`` values (``''`` public, ``'a,b'``, ``'*'`` all access).
    token_file : str or None
        An MCP token file (``{token: [scopes] or "*"}``).

    Returns
    -------
    list of (str, Caller)

    Examples
    --------
    >>> [label for label, _ in explorer_callers(["", "team-a", "*"], None)]
    ['public', 'scopes team-a', 'all access']
    >>> explorer_callers(None, None)[0][1] == Caller.public()
    True
    """
    if scopes and token_file is not None:
        raise ConceptwalkError("give --scopes or --token-file, not both")
    if token_file is not None:
        from ..serve.mcp import TokenFile

        tokens = TokenFile(token_file)
        return [(f"token-file entry {i}", c) for i, c in enumerate(tokens.entries(), 1)]
    out: list[tuple[str, Caller]] = []
    for spec in scopes or [""]:
        c = Caller.from_spec(spec)
        lab = (
            "all access" if c.sees_everything else "public" if not c.scopes else "scopes " + ",".join(sorted(c.scopes))
        )
        if all(c != have for _, have in out):
            out.append((lab, c))
    return out


def cmd_explore(args: argparse.Namespace) -> int:
    """``conceptwalk explore KB``: serve the explorer page until interrupted."""
    from ..kb import KnowledgeBase
    from ..serve.explore import Explorer, loopback, require_explore, serve_explorer

    require_explore()  # before touching the KB: say what to install first
    if not os.path.exists(args.kb):
        raise ConceptwalkError(f"knowledge base file not found: {args.kb}")
    callers = explorer_callers(args.scopes, args.token_file)
    with KnowledgeBase.open(args.kb, read_only=True) as kb:
        kb.graph()  # build (or map) the snapshot before the first request
        if args.token_file is not None:  # each entry's unknown scopes, named by its position
            from ..serve.mcp import TokenFile

            warn_unknown_token_scopes(kb, TokenFile(args.token_file))
        else:
            for _, c in callers:
                warn_unknown_scopes(kb, c)
        explorer = Explorer(kb, callers)
        host = args.host
        if not loopback(host):
            print(
                f"conceptwalk explore: warning: serving on {host}, not loopback: anyone who reaches "
                "it can read the store as any configured caller",
                file=sys.stderr,
            )
        where = f"http://{'[' + host + ']' if ':' in host else host}:{args.port}/"
        print(
            f"conceptwalk explore: {args.kb} (read-only) at {where}; callers: "
            + "; ".join(f"{i}: {label}" for i, (label, _) in enumerate(callers)),
            file=sys.stderr,
        )
        serve_explorer(explorer, host=host, port=args.port)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``explore`` sub-command to the ``conceptwalk`` CLI.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
    """
    p = subparsers.add_parser(
        "explore",
        help="a local read-only web page that draws the answers (needs the explore extra)",
        description="Serve a read-only page on loopback: search, a node's page, graph_context drawn "
        "as a graph, graph_path as a chain, link_suggest with its shared neighbours, and the "
        "wrapped query with its paths and provenance, for each configured caller. Without "
        "--scopes or --token-file the page answers for PUBLIC NODES ONLY.",
    )
    p.add_argument("kb", help="the knowledge base (SQLite file; opened read-only)")
    p.add_argument(
        "--scopes",
        action="append",
        default=None,
        metavar="SCOPES",
        help="a caller the page may switch to, repeatable: '' public nodes only (the default), 'a,b' "
        "public nodes plus scopes a and b, '*' all access (give it explicitly); the first is shown first",
    )
    p.add_argument(
        "--token-file",
        default=None,
        help='an MCP token file (JSON {token: [scopes] or "*"}): one caller per entry, named by its '
        "position (the page never sees a token)",
    )
    p.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1, loopback)")
    p.add_argument("--port", type=int_in(1, 65535), default=8765, help="the port (default 8765)")
    p.set_defaults(func=cmd_explore)
