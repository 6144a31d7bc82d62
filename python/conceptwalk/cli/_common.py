"""Helpers shared by the command groups: output, opening a KB, the caller, timing."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ..errors import ConceptwalkError
from ..graph.scopes import mark_warned, unknown_scope_message

__all__ = [
    "emit",
    "open_kb",
    "caller_from_spec",
    "warn_unknown_scopes",
    "warn_unknown_token_scopes",
    "median_ms",
    "add_common",
    "add_scopes",
    "SCOPES_HELP",
    "int_in",
    "float_in",
]

#: Upper bounds of the count arguments (far past any useful value, well inside the core's range).
MAX_K = 1_000_000
MAX_COUNT = 10_000_000


def emit(obj: Any, as_json: bool) -> None:
    if as_json:
        payload = obj.to_dict() if hasattr(obj, "to_dict") else obj
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        sys.stdout.write(str(obj) + "\n")


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse ``type=``: an integer in ``[lo, hi]``, else a one-line argument error."""

    def parse(text: str) -> int:
        try:
            v = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
        if not lo <= v <= hi:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}], got {shown}")
        return v

    parse.__name__ = "integer"
    return parse


def float_in(lo: float, hi: float, *, open_lo: bool = True, open_hi: bool = False) -> Callable[[str], float]:
    """An argparse ``type=``: a finite float in the interval, else a one-line argument error."""
    left, right = "(" if open_lo else "[", ")" if open_hi else "]"

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
        ok = math.isfinite(v) and (lo < v if open_lo else lo <= v) and (v < hi if open_hi else v <= hi)
        if not ok:
            raise argparse.ArgumentTypeError(f"must be a number in {left}{lo:g}, {hi:g}{right}, got {text[:40]}")
        return v

    parse.__name__ = "number"
    return parse


def type_names(text: str) -> tuple[str, ...]:
    """A comma-separated list of node or edge type names (an argparse ``type=``)."""
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated type names, got {text[:40]!r}")
    return names


def open_kb(path: str, *, must_exist: bool = True, read_only: bool = False) -> Any:
    from ..kb import KnowledgeBase

    if must_exist and not os.path.exists(path):
        raise ConceptwalkError(f"knowledge base file not found: {path}")
    return KnowledgeBase.open(path, read_only=True) if read_only else KnowledgeBase.open(path, create=not must_exist)


def caller_from_spec(spec: str | None) -> Any:
    """The caller of a ``--scopes`` value: ``''`` or None public nodes only (fail closed: a
    missing value never means all access), ``'a,b'`` public plus a and b, ``'*'`` all access."""
    from ..graph import Caller

    return Caller.public() if spec is None else Caller.from_spec(spec)


def warn_unknown_scopes(kb: Any, caller: Any) -> list[str]:
    """Warn on stderr about the scopes ``caller`` names that no node of ``kb`` carries (probably a
    typo: such a scope grants nothing). Returns them.

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
    caller : Caller

    Returns
    -------
    list of str
    """
    graph = kb.graph() if callable(getattr(kb, "graph", None)) else kb
    try:
        unknown: list[str] = caller.unknown_scopes(graph)
    except ConceptwalkError:  # an empty store has no graph: every named scope is unknown
        unknown = sorted(caller.scopes or ())
    _say_unknown(unknown)
    mark_warned(kb, unknown)  # said here: the library's UnknownScopeWarning would repeat it
    return unknown


def warn_unknown_token_scopes(kb: Any, tokens: Any) -> list[tuple[int, list[str]]]:
    """Warn on stderr, once per entry, about the scopes an MCP token file grants that no node of
    ``kb`` carries (as :func:`warn_unknown_scopes` does for ``--scopes``). Entries are named by
    their position in the file, never by their token. Returns ``(entry, scopes)`` pairs.

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
    tokens : conceptwalk.serve.mcp.TokenFile

    Returns
    -------
    list of (int, list of str)
    """
    graph = kb.graph() if callable(getattr(kb, "graph", None)) else kb
    found: list[tuple[int, list[str]]] = tokens.unknown_scopes(graph)
    for entry, unknown in found:
        _say_unknown(unknown, where=f"token file {tokens.path}, entry {entry}")
        mark_warned(kb, unknown)
    return found


def _say_unknown(unknown: list[str], *, where: str | None = None) -> None:
    if unknown:
        sys.stderr.write(f"conceptwalk: warning: {where + ': ' if where else ''}{unknown_scope_message(unknown)}\n")


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


#: The help of every answering command's ``--scopes``: the default is public nodes only (fail
#: closed, as ``conceptwalk serve``); all access is the operator's explicit ``--scopes '*'``.
SCOPES_HELP = (
    "the caller: '' public nodes only (the default), 'a,b' public nodes plus scopes a and b, "
    "'*' all access (the KB operator's view; give it explicitly)"
)


def add_scopes(p: argparse.ArgumentParser) -> None:
    """Add ``--scopes`` (default ``''``: public nodes only, never all access)."""
    p.add_argument("--scopes", default="", metavar="SCOPES", help=SCOPES_HELP)


def add_common(p: argparse.ArgumentParser, *, scopes: bool = True) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if scopes:
        add_scopes(p)
