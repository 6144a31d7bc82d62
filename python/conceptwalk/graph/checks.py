"""One check per argument, shared by the single, batch and distributed entry points.

Every public call that takes one of these arguments validates it here, so the rules and the
messages cannot drift apart (``k=True`` is refused everywhere, ``min_shared`` has one range).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError

__all__ = [
    "INDEX_MAX",
    "MIN_RESTART_EPS",
    "check_count",
    "check_min_shared",
    "check_optional_count",
    "check_optional_hops",
    "check_optional_positive",
    "check_ppr_params",
    "check_real",
    "check_threads",
    "default_threads",
    "id_list",
    "query_list",
]

#: The largest count the core takes (its node indices and budgets are 32-bit).
INDEX_MAX = 2**31 - 1


def _is_int(value: Any) -> bool:
    """An integer (Python or numpy), not a boolean."""
    t = type(value)
    return t is int or (t is not bool and isinstance(value, numbers.Integral))


def _is_real(value: Any) -> bool:
    """A real number (Python or numpy scalar, e.g. ``np.float32(0.3)``), not a boolean."""
    t = type(value)
    return t is float or t is int or (t is not bool and isinstance(value, numbers.Real))


def check_count(value: Any, name: str = "k") -> int:
    """A positive integer (``k``, ``n_hits``, ...), clamped to :data:`INDEX_MAX`.

    Parameters
    ----------
    value : int
        Python or numpy integer; booleans are refused.
    name : str
        The argument name for the error message.

    Returns
    -------
    int

    Raises
    ------
    InputError
        Not an integer, a boolean, or < 1.

    Examples
    --------
    >>> check_count(5)
    5
    >>> check_count(True)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: k must be a positive integer, got True
    """
    if type(value) is int and 0 < value <= INDEX_MAX:  # the common case, without a call
        return value
    if not _is_int(value) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_optional_count(value: Any, name: str = "k") -> int:
    """Like :func:`check_count`, with ``None`` allowed (returned as 0: no limit).

    Parameters
    ----------
    value : int or None
    name : str
        The argument name for the error message.

    Returns
    -------
    int
        0 for None, else the count clamped to :data:`INDEX_MAX`.

    Examples
    --------
    >>> check_optional_count(None), check_optional_count(2**63, "max_pushes")
    (0, 2147483647)
    """
    if value is None:
        return 0
    if type(value) is int and 0 < value <= INDEX_MAX:
        return value
    if not _is_int(value) or value < 1:
        raise InputError(f"{name} must be a positive integer or None, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_optional_hops(value: Any, name: str = "max_hops") -> int:
    """A hop limit: a non-negative integer (clamped to :data:`INDEX_MAX`) or None (-1: no limit).

    Parameters
    ----------
    value : int or None
    name : str

    Returns
    -------
    int

    Examples
    --------
    >>> check_optional_hops(None), check_optional_hops(2**31)
    (-1, 2147483647)
    """
    if value is None:
        return -1
    if not _is_int(value) or value < 0:
        raise InputError(f"{name} must be a non-negative integer or None, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_min_shared(value: Any) -> int:
    """``min_shared`` of resource allocation: an integer >= 1 (clamped to :data:`INDEX_MAX`).

    Parameters
    ----------
    value : int

    Returns
    -------
    int

    Examples
    --------
    >>> check_min_shared(2**31)
    2147483647
    """
    if type(value) is int and 0 < value <= INDEX_MAX:
        return value
    if not _is_int(value) or value < 1:
        raise InputError(f"min_shared must be an integer >= 1, got {value!r}")
    return min(int(value), INDEX_MAX)


def check_real(value: Any, name: str) -> float:
    """A finite real number (Python or numpy scalar, not a boolean), as a float.

    Parameters
    ----------
    value : real number
    name : str

    Returns
    -------
    float

    Examples
    --------
    >>> check_real(4, "shrink")
    4.0
    """
    if not _is_real(value) or not math.isfinite(float(value)):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_optional_positive(value: Any, name: str) -> float:
    """A positive finite number, or None (returned as 0.0: off).

    Parameters
    ----------
    value : real number or None
    name : str

    Returns
    -------
    float

    Examples
    --------
    >>> check_optional_positive(None, "max_residual"), check_optional_positive(1e-3, "max_residual")
    (0.0, 0.001)
    """
    if value is None:
        return 0.0
    if not _is_real(value) or not math.isfinite(float(value)) or not float(value) > 0:
        raise InputError(f"{name} must be a positive number or None, got {value!r}")
    return float(value)


#: The smallest ``restart * eps`` an uncapped push accepts (it does up to 1/(restart*eps) pushes).
MIN_RESTART_EPS = 1e-12


def check_ppr_params(restart: Any, eps: Any, *, capped: bool = False) -> tuple[float, float]:
    """``restart`` in (0, 1) and ``eps`` positive and finite, as floats. Numpy scalars are
    numbers (``np.float32(0.3)`` is accepted); booleans are not. Unless the push is ``capped``
    (a ``max_pushes`` is given), ``restart * eps`` must be at least :data:`MIN_RESTART_EPS`:
    an uncapped push does up to ``1 / (restart * eps)`` pushes.

    Parameters
    ----------
    restart, eps : real numbers
    capped : bool
        A push cap applies (the product check is then left to the cap).

    Returns
    -------
    tuple of float

    Examples
    --------
    >>> import numpy as np
    >>> round(check_ppr_params(np.float32(0.3), 1e-4)[0], 6)
    0.3
    >>> check_ppr_params(0.25, 1e-300)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: restart * eps must be >= 1e-12 without a push cap (the push does up to 1/(restart*eps) pushes), got restart=0.25 eps=1e-300; raise them or set max_pushes
    """
    if (
        type(restart) is float
        and type(eps) is float
        and 0.0 < restart < 1.0
        and 0.0 < eps < math.inf
        and (capped or restart * eps >= MIN_RESTART_EPS)
    ):
        return restart, eps  # the common case, without a call
    if not _is_real(restart) or not 0.0 < float(restart) < 1.0:
        raise InputError(f"restart must be in (0, 1), got {restart!r}")
    if not _is_real(eps) or not math.isfinite(float(eps)) or not float(eps) > 0:
        raise InputError(f"eps must be positive and finite, got {eps!r}")
    r, e = float(restart), float(eps)
    if not capped and r * e < MIN_RESTART_EPS:
        raise InputError(
            f"restart * eps must be >= 1e-12 without a push cap (the push does up to "
            f"1/(restart*eps) pushes), got restart={r:g} eps={e:g}; raise them or set max_pushes"
        )
    return r, e


def default_threads() -> int:
    """The default thread count of batch calls: ``os.cpu_count()`` (1 when unknown).

    Returns
    -------
    int

    Examples
    --------
    >>> default_threads() >= 1
    True
    """
    return os.cpu_count() or 1


def check_threads(threads: Any) -> int:
    """``threads`` of a batch call: a positive integer (at most 1024), or None for
    :func:`default_threads`.

    Parameters
    ----------
    threads : int or None

    Returns
    -------
    int

    Examples
    --------
    >>> check_threads(2)
    2
    """
    if threads is None:
        return default_threads()
    if not _is_int(threads) or threads < 1:
        raise InputError(f"threads must be a positive integer or None, got {threads!r}")
    return min(int(threads), 1024)


def query_list(queries: Any, name: str) -> list[Any]:
    """The queries of a batch call as a list (a single string or mapping is refused).

    Parameters
    ----------
    queries : iterable
    name : str

    Returns
    -------
    list

    Examples
    --------
    >>> query_list(("a", "b"), "concepts")
    ['a', 'b']
    """
    if isinstance(queries, (str, bytes)):
        raise InputError(f"{name} must be a list of queries, not a single string (a single query)")
    if isinstance(queries, Mapping):
        raise InputError(f"{name} must be a list of queries, not a single query")
    try:
        return list(queries)
    except TypeError:
        raise InputError(f"{name} must be an iterable of queries, got {type(queries).__name__}") from None


def id_list(ids: Any, name: str) -> list[Any]:
    """A collection of node ids as a list; a single string is refused (never iterated into its
    characters).

    Parameters
    ----------
    ids : iterable of str
    name : str

    Returns
    -------
    list

    Examples
    --------
    >>> id_list({"a": 1}, "seeds")
    ['a']
    >>> id_list("ab", "seeds")
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: seeds must be a collection of ids, not a single string: 'ab'
    """
    if isinstance(ids, (str, bytes)):
        raise InputError(f"{name} must be a collection of ids, not a single string: {ids!r}")
    if not isinstance(ids, Iterable):
        raise InputError(f"{name} must be a collection of ids, got {type(ids).__name__}")
    return list(ids)
