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

__all__ = [
    "emit",
    "open_kb",
    "caller_from_spec",
    "warn_unknown_scopes",
    "median_ms",
    "add_common",
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
    from ..graph import Caller

    return Caller.from_spec(spec)


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
    if unknown:
        names = ", ".join(repr(s) for s in unknown)
        sys.stderr.write(
            f"conceptwalk: warning: no node carries scope{'s' if len(unknown) > 1 else ''} {names} "
            f"(a typo?); it grants nothing: see `conceptwalk stats` for the scopes\n"
        )
    return unknown


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def add_common(p: argparse.ArgumentParser, *, scopes: bool = True) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if scopes:
        p.add_argument(
            "--scopes", default="*", help="caller scopes: '*' all access (default), '' public only, 'a,b' public + a, b"
        )
