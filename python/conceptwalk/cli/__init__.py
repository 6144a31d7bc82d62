"""The ``conceptwalk`` command line.

Every command that answers a question takes ``--json`` for machine-readable output and
``--scopes`` for the caller (``""`` = public nodes only, the default: fail closed, as ``serve``;
``a,b`` = public nodes plus scopes a and b; ``*`` = all access, the KB operator's view, given
explicitly).

One module per command group, registered statically in :func:`build_parser`: :mod:`.demo`,
:mod:`.kb` (import, stats, synth, dataset), :mod:`.graph` (context, suggest, path), :mod:`.wrap`
(query, probe, events), :mod:`.bench`, :mod:`.serve` and :mod:`.explore`.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..errors import ConceptwalkError
from . import bench, demo, explore, graph, kb, serve, wrap

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, with its error message on one line (an argument holding a newline would break
    it); the sub-command parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


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
    parser = _Parser(prog="conceptwalk", description="Graph retrieval over a knowledge base's link graph.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (demo, kb, graph, wrap, bench, serve, explore):
        group.register(sub)
    return parser


def _version() -> str:
    from .. import __version__

    return f"conceptwalk {__version__}"


def _fail(message: object) -> int:
    text = " ".join(str(message).split()) or "unknown error"
    print(f"conceptwalk: error: {text}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 for a user error. A bad argument exits through
        argparse (status 2, its usage line and one error line); a user error (a
        :class:`ConceptwalkError`, a documented ``ValueError``/``IndexError`` of the compiled
        core, a file that cannot be read or written) prints one line ``conceptwalk: error:
        ...`` to stderr -- never a traceback.

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
        return _fail(exc)
    except (ValueError, IndexError) as exc:  # the core's documented errors (docs/errors.md)
        return _fail(exc)
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except OSError as exc:  # a file that cannot be read or written, a full disk
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except sqlite3.Error as exc:  # pragma: no cover - the store turns these into ConceptwalkError
        return _fail(f"SQLite: {exc}")
    except MemoryError:
        return _fail("out of memory")
    except KeyboardInterrupt:
        print("conceptwalk: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
