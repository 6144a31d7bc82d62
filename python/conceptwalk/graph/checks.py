"""One check per argument, shared by the single, batch and distributed entry points.

Every public call that takes one of these arguments validates it here, so the rules and the
messages cannot drift apart (``k=True`` is refused everywhere, ``min_shared`` has one range).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from ..errors import InputError

__all__ = [
    "INDEX_MAX",
    "check_count",
    "check_min_shared",
    "check_optional_count",
    "check_ppr_params",
    "check_threads",
    "default_threads",
    "query_list",
]

#: The largest count the core takes (its node indices and budgets are 32-bit).
INDEX_MAX = 2**31 - 1


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_count(value: Any, name: str = "k") -> int:
    """A positive integer (``k``, ``n_hits``, ...), clamped to :data:`INDEX_MAX`.

    Examples
    --------
    >>> check_count(5)
    5
    >>> check_count(True)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: k must be a positive integer, got True
    """
    if not _is_int(value) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_optional_count(value: Any, name: str = "k") -> int:
    """Like :func:`check_count`, with ``None`` allowed (returned as 0: no limit)."""
    if value is None:
        return 0
    if not _is_int(value) or value < 1:
        raise InputError(f"{name} must be a positive integer or None, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_min_shared(value: Any) -> int:
    """``min_shared`` of resource allocation: an integer >= 1 (clamped to :data:`INDEX_MAX`)."""
    if not _is_int(value) or value < 1:
        raise InputError(f"min_shared must be an integer >= 1, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_ppr_params(restart: Any, eps: Any) -> tuple[float, float]:
    """``restart`` in (0, 1) and ``eps`` positive and finite, as floats."""
    if isinstance(restart, bool) or not isinstance(restart, (int, float)) or not 0.0 < float(restart) < 1.0:
        raise InputError(f"restart must be in (0, 1), got {restart!r}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or not eps > 0:
        raise InputError(f"eps must be positive and finite, got {eps!r}")
    return float(restart), float(eps)


def default_threads() -> int:
    """The default thread count of batch calls: ``os.cpu_count()`` (1 when unknown)."""
    return os.cpu_count() or 1


def check_threads(threads: Any) -> int:
    """``threads`` of a batch call: a positive integer, or None for :func:`default_threads`."""
    if threads is None:
        return default_threads()
    if not _is_int(threads) or threads < 1:
        raise InputError(f"threads must be a positive integer or None, got {threads!r}")
    return min(int(threads), 1024)


def query_list(queries: Any, name: str) -> list[Any]:
    """The queries of a batch call as a list (a single string or mapping is refused)."""
    if isinstance(queries, (str, bytes, Mapping)):
        raise InputError(f"{name} must be a list of queries, not a single query")
    try:
        return list(queries)
    except TypeError:
        raise InputError(f"{name} must be an iterable of queries, got {type(queries).__name__}") from None
