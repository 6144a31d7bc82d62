"""The unknown-scope warning: a caller naming a scope that no node of a store carries (probably a
typo: ``Caller.with_scopes("netopz")`` grants nothing) is warned about once per (store, scope),
when the caller is first used on that store -- as the CLI and the MCP server warn at start-up.

The warning is a :class:`~conceptwalk.errors.UnknownScopeWarning` (a ``UserWarning``) naming the
store's path and the scopes; it is decided on the store's current graph (a scope some node gains
later is no longer unknown, one warned about is not warned about again by that store object).

Examples
--------
>>> import warnings
>>> from conceptwalk import Caller
>>> from conceptwalk.kb import KnowledgeBase
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "a", "scopes": ["netops"]}])
>>> with warnings.catch_warnings(record=True) as got:
...     warnings.simplefilter("always")
...     _ = kb.search("a", caller=Caller.with_scopes("netopz"))
...     _ = kb.search("a", caller=Caller.with_scopes("netopz"))  # once per (store, scope)
>>> [str(w.message) for w in got]  # doctest: +NORMALIZE_WHITESPACE
["no node of ':memory:' carries scope 'netopz' (a typo?); it grants nothing:
  see `conceptwalk stats` for the scopes"]
"""

from __future__ import annotations

import os
import inspect
import threading
import warnings
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import UnknownScopeWarning

if TYPE_CHECKING:
    from .visibility import Caller

__all__ = ["mark_warned", "unknown_scope_message", "warn_unknown_scopes"]

_LOCK = threading.Lock()
#: Per store object, the scopes already warned about (or announced by the CLI / the server).
_WARNED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
#: Per graph, per scope set, the scopes of the set that no node of the graph carries.
_UNKNOWN: weakref.WeakKeyDictionary[Any, dict[frozenset[str], tuple[str, ...]]] = weakref.WeakKeyDictionary()
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def unknown_scope_message(unknown: list[str] | tuple[str, ...], where: str | None = None) -> str:
    """The warning's text (shared with the CLI's and the server's start-up warnings).

    Parameters
    ----------
    unknown : sequence of str
        The scopes, sorted.
    where : str, optional
        What carries no such scope (``"no node of 'kb.db'"``); default ``"no node"``.

    Returns
    -------
    str

    Examples
    --------
    >>> unknown_scope_message(["x", "y"])
    "no node carries scopes 'x', 'y' (a typo?); it grants nothing: see `conceptwalk stats` for the scopes"
    """
    names = ", ".join(repr(s) for s in unknown)
    many = len(unknown) > 1
    return (
        f"{where or 'no node'} carries scope{'s' if many else ''} {names} (a typo?); "
        "it grants nothing: see `conceptwalk stats` for the scopes"
    )


def mark_warned(store: Any, scopes: Any) -> None:
    """Record that ``scopes`` were announced for ``store`` (the CLI and the server print their own
    start-up warning): the library does not warn about them again.

    Parameters
    ----------
    store : KnowledgeBase
    scopes : iterable of str
    """
    try:
        with _LOCK:
            _WARNED.setdefault(store, set()).update(scopes)
    except TypeError:  # not weakly referenceable: nothing to remember it by
        pass


def _unknown(graph: Any, scopes: frozenset[str]) -> tuple[str, ...]:
    try:
        per = _UNKNOWN.get(graph)
    except TypeError:
        per = None
    if per is not None:
        got = per.get(scopes)
        if got is not None:
            return got
    known = set(graph.scope_names)
    got = tuple(sorted(s for s in scopes if s not in known))
    try:
        with _LOCK:
            _UNKNOWN.setdefault(graph, {})[scopes] = got
    except TypeError:
        pass
    return got


def _stacklevel() -> int:
    """The stack level of the first frame outside this package (the user's call)."""
    level = 1
    here = inspect.currentframe()
    try:
        f = None if here is None else here.f_back
        while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
            f = f.f_back
            level += 1
        return level
    finally:
        # a frame held in a local of itself is a reference cycle: every caller's frame up the
        # stack (their graphs and views with them) would live until the next collection
        del here, f


def warn_unknown_scopes(store: Any, graph: Any, caller: Caller) -> list[str]:
    """Warn (:class:`~conceptwalk.errors.UnknownScopeWarning`) about the scopes ``caller`` names
    that no node of ``graph`` (``store``'s current graph) carries and that were not warned about
    for ``store`` yet. Returns them.

    Parameters
    ----------
    store : KnowledgeBase or None
        The store the caller is used on (None, e.g. a bare graph: no warning).
    graph : LinkGraph or LiveGraph
        Its graph at the state being read (a live graph answers with its
        :meth:`~conceptwalk.graph.live.LiveGraph.unknown_scopes`: the base's scopes and those of
        the nodes written since).
    caller : Caller

    Returns
    -------
    list of str
        The scopes warned about now (sorted).
    """
    scopes = caller.scopes
    if not scopes or store is None:
        return []
    live = getattr(graph, "unknown_scopes", None)
    unknown = live(scopes) if callable(live) else _unknown(graph, scopes)
    if not unknown:
        return []
    try:
        with _LOCK:
            seen = _WARNED.setdefault(store, set())
            new = [s for s in unknown if s not in seen]
            seen.update(new)
    except TypeError:
        return []
    if new:
        path = getattr(store, "path", None)
        where = f"no node of {path!r}" if isinstance(path, str) else None
        warnings.warn(unknown_scope_message(new, where), UnknownScopeWarning, stacklevel=_stacklevel())
    return new
