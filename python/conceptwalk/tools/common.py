"""What the three tools share: the graph source (a :class:`~conceptwalk.graph.LinkGraph` or a
knowledge base), the caller check and node attributes for results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..errors import InputError
from ..graph import Caller, LinkGraph
from ..graph.ppr import offsets

__all__ = ["GraphSource", "SearchFn", "check_caller", "node_info", "offsets", "source_graph"]

#: A flat search: ``fn(text, k)`` returns hits (ids, ``(id, score)`` pairs or dicts with ``id``).
SearchFn = Callable[[str, int], Sequence[Any]]


class GraphSource(Protocol):
    """Anything the tools can read a graph from: a knowledge base with ``graph()`` and
    ``search(text, k)``, such as :class:`conceptwalk.kb.KnowledgeBase`."""

    def graph(self) -> LinkGraph: ...

    def search(self, text: str, k: int = 10) -> Sequence[Any]: ...


def source_graph(source: Any) -> tuple[LinkGraph, Any]:
    """``(graph, knowledge base or None)`` of a tool's ``source``.

    A :class:`LinkGraph` is used as is; anything else must have ``graph()`` (checked by
    attribute, not by a runtime protocol check, which costs more than the core call)."""
    if isinstance(source, LinkGraph):
        return source, None
    graph = getattr(source, "graph", None)
    if callable(graph):
        return graph(), source
    raise InputError(f"source must be a LinkGraph or a knowledge base, got {type(source).__name__}")


def check_caller(caller: Any) -> Caller:
    """``caller`` must be a :class:`~conceptwalk.graph.Caller` (there is no implicit all-access)."""
    if not isinstance(caller, Caller):
        raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
    return caller


def node_info(g: LinkGraph, idx: int) -> tuple[str, str, str | None]:
    """``(id, type, title)`` of node ``idx``."""
    return g.ids[idx], g.node_type_names[int(g.node_type_codes[idx])], g.titles[idx]
