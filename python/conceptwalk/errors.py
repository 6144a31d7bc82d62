"""Exceptions raised by conceptwalk (the catalogue of messages: ``docs/errors.md``).

Every error conceptwalk raises on purpose is a :class:`ConceptwalkError`; bad input is an
:class:`InputError` (also a ``ValueError``), an unknown or hidden id a :class:`NotFoundError`
(also a ``LookupError``).

Examples
--------
>>> import conceptwalk as cw
>>> g = cw.LinkGraph.from_edges([("a", "b")])
>>> try:
...     cw.graph_path(g, "a", "nope", caller=cw.Caller.all_access())
... except cw.NotFoundError as exc:
...     print(type(exc).__name__, exc)
NotFoundError target not found: 'nope'
"""

from __future__ import annotations

__all__ = [
    "ConceptwalkError",
    "NotFoundError",
    "InputError",
    "StoreNotFoundError",
    "UnknownScopeWarning",
    "shown",
    "bounded",
    "MAX_SHOWN",
    "MAX_MESSAGE",
]

#: The longest rendering of one value inside an error message (characters, before the ellipsis).
MAX_SHOWN = 200
#: The longest error message (characters); a longer one keeps its head and tail around an ellipsis.
MAX_MESSAGE = 2000


def shown(value: object, limit: int = MAX_SHOWN) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters with an ellipsis.

    A 5 MB id must not come back whole in an error text (an MCP client echoes it, a log keeps
    it); the head of the value is enough to recognise it.

    Parameters
    ----------
    value : object
        The value to show.
    limit : int
        The most characters of its ``repr`` kept.

    Returns
    -------
    str
        The ``repr``, or its head followed by ``… (N chars)``.

    Examples
    --------
    >>> shown("abc")
    "'abc'"
    >>> s = shown("x" * 10_000)
    >>> len(s), s[-18:]
    (215, 'xxx… (10002 chars)')
    """
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - e.g. RecursionError for a deeply nested list
        text = f"<{type(value).__name__} that cannot be shown>"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} chars)"


def bounded(message: str) -> str:
    """``message`` cut in the middle to at most about :data:`MAX_MESSAGE` characters (the head,
    which says what is wrong, and the tail are kept).

    Parameters
    ----------
    message : str
        An error message.

    Returns
    -------
    str
        ``message`` itself, or its head and tail around ``…[N chars]…``.

    Examples
    --------
    >>> bounded("short")
    'short'
    >>> len(bounded("x" * 10**6)) < MAX_MESSAGE + 40
    True
    """
    if len(message) <= MAX_MESSAGE:
        return message
    head = MAX_MESSAGE * 3 // 4
    tail = MAX_MESSAGE - head
    return f"{message[:head]} …[{len(message) - head - tail} chars]… {message[-tail:]}"


class ConceptwalkError(Exception):
    """Base class of every error conceptwalk raises on purpose.

    A message longer than :data:`MAX_MESSAGE` characters is cut in the middle (its head, which
    says what is wrong, and its tail are kept).

    Parameters
    ----------
    *args : object
        As for :class:`Exception`; a single string argument is the message.
    """

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (bounded(args[0]),)
        super().__init__(*args)


class NotFoundError(ConceptwalkError, LookupError):
    """An id that is unknown **or hidden from the caller**.

    Both cases give the same type and the same text (``"node not found: '<id>'"``), so an error
    never reveals whether a hidden id exists. A long id is shown cut (:func:`shown`).

    Parameters
    ----------
    node_id : object
        The id that was asked for (kept as :attr:`node_id`).
    argument : str
        The argument that named it (``"seed"``, ``"target"``, ...; kept as :attr:`argument`);
        it starts the message.

    Examples
    --------
    >>> str(NotFoundError("zzz", "seed"))
    "seed not found: 'zzz'"
    """

    def __init__(self, node_id: object, argument: str = "node") -> None:
        self.node_id = node_id
        self.argument = argument
        super().__init__(f"{argument} not found: {shown(node_id)}")

    def __str__(self) -> str:
        return str(self.args[0])


class InputError(ConceptwalkError, ValueError):
    """Malformed input: a bad file line, a bad row, an argument out of range.

    The message names the argument (or ``file:line``) and the bad value; nothing has changed
    when it is raised (a store write or an import is rolled back).
    """


class StoreNotFoundError(ConceptwalkError, FileNotFoundError):
    """``KnowledgeBase.open(path)`` on a path that does not exist (opening never creates a file:
    ``KnowledgeBase.create(path)`` does).

    Examples
    --------
    >>> issubclass(StoreNotFoundError, FileNotFoundError)
    True
    """


class UnknownScopeWarning(UserWarning):
    """A caller names a scope that no node of the store carries (probably a typo: it grants
    nothing). Warned once per (store, scope), when the caller is first used on the store.

    Examples
    --------
    >>> issubclass(UnknownScopeWarning, UserWarning)
    True
    """
