"""Helpers shared by the command groups: output, opening a KB, the caller, timing."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from ..errors import ConceptwalkError

__all__ = ["emit", "open_kb", "caller_from_spec", "median_ms", "add_common"]


def emit(obj: Any, as_json: bool) -> None:
    if as_json:
        payload = obj.to_dict() if hasattr(obj, "to_dict") else obj
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        sys.stdout.write(str(obj) + "\n")


def open_kb(path: str, *, must_exist: bool = True, read_only: bool = False) -> Any:
    from ..kb import KnowledgeBase

    if must_exist and not os.path.exists(path):
        raise ConceptwalkError(f"knowledge base file not found: {path}")
    return KnowledgeBase.open(path, read_only=True) if read_only else KnowledgeBase.open(path)


def caller_from_spec(spec: str | None) -> Any:
    from ..graph import Caller

    return Caller.from_spec(spec)


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
        p.add_argument("--scopes", default="*",
                       help="caller scopes: '*' all access (default), '' public only, 'a,b' public + a, b")
