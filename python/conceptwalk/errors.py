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

__all__ = ["ConceptwalkError", "NotFoundError", "InputError"]


class ConceptwalkError(Exception):
    """Base class of every error conceptwalk raises on purpose."""


class NotFoundError(ConceptwalkError, LookupError):
    """An id that is unknown **or hidden from the caller**.

    Both cases give the same type and the same text (``"node not found: '<id>'"``), so an error
    never reveals whether a hidden id exists.

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
        super().__init__(f"{argument} not found: {node_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class InputError(ConceptwalkError, ValueError):
    """Malformed input: a bad file line, a bad row, an argument out of range.

    The message names the argument (or ``file:line``) and the bad value; nothing has changed
    when it is raised (a store write or an import is rolled back).
    """
