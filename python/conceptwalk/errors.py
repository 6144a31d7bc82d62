"""Exceptions raised by conceptwalk."""

from __future__ import annotations

__all__ = ["ConceptwalkError", "NotFoundError", "InputError"]


class ConceptwalkError(Exception):
    """Base class of every error conceptwalk raises on purpose."""


class NotFoundError(ConceptwalkError, LookupError):
    """An id that is unknown **or hidden from the caller**.

    Both cases give the same type and the same text (``"node not found: '<id>'"``), so an error
    never reveals whether a hidden id exists.
    """

    def __init__(self, node_id: object, argument: str = "node") -> None:
        self.node_id = node_id
        self.argument = argument
        super().__init__(f"{argument} not found: {node_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class InputError(ConceptwalkError, ValueError):
    """Malformed input: a bad file line, a bad row, an argument out of range."""
