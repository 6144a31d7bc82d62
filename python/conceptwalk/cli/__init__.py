"""The ``conceptwalk`` command line.

Every command that answers a question takes ``--json`` for machine-readable output and
``--scopes`` for the caller (``*`` = all access, the default for the KB's operator; ``""`` =
public nodes only; ``a,b`` = public nodes plus scopes a and b).

One module per command group, registered statically in :func:`build_parser`: :mod:`.demo`,
:mod:`.kb` (import, stats, synth, dataset), :mod:`.graph` (context, suggest, path), :mod:`.wrap`
(query, probe, events), :mod:`.bench` and :mod:`.serve`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..errors import ConceptwalkError
from . import bench, demo, graph, kb, serve, wrap

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The ``conceptwalk`` argument parser with every command group registered.

    Returns
    -------
    argparse.ArgumentParser
        The parser :func:`main` uses (``prog="conceptwalk"``).

    Examples
    --------
    >>> args = build_parser().parse_args(["path", "kb.db", "a", "b"])
    >>> args.command, args.kb
    ('path', 'kb.db')
    """
    parser = argparse.ArgumentParser(
        prog="conceptwalk",
        description="Graph retrieval over a knowledge base's link graph.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (demo, kb, graph, wrap, bench, serve):
        group.register(sub)
    return parser


def _version() -> str:
    from .. import __version__

    return f"conceptwalk {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user error (printed on one line to stderr as
        ``conceptwalk: error: ...``).

    Examples
    --------
    >>> main(["path", ":memory:", "a", "b"])
    2
    """
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
