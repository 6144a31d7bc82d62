"""Callers and what they may see.

A :class:`Caller` holds a set of scopes (or all access). A node is visible to a caller when the
node is public (has no scopes) or shares at least one scope with the caller. The mask is computed
by vectorised numpy work over the graph's scope arrays and cached per (graph, scope set), together
with the visible degrees the core needs, so a warm masked query costs about an unmasked one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import _core
    from .linkgraph import LinkGraph

__all__ = ["Caller"]


@dataclass(frozen=True)
class Caller:
    """Who is asking. ``scopes=None`` means all access; otherwise public nodes plus nodes that
    carry at least one of ``scopes``.

    Parameters
    ----------
    scopes : collection of str, or None
        The caller's scopes (a single string is refused); None = all access.

    Examples
    --------
    >>> Caller.all_access().sees_everything
    True
    >>> Caller.with_scopes("tenant-a", "tenant-b").scopes == frozenset({"tenant-a", "tenant-b"})
    True
    >>> Caller.public().scopes
    frozenset()
    """

    scopes: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.scopes is not None:
            if isinstance(self.scopes, str):
                raise TypeError("Caller scopes must be a collection of strings, not a single string")
            object.__setattr__(self, "scopes", frozenset(str(s) for s in self.scopes))

    @classmethod
    def all_access(cls) -> Caller:
        """A caller that sees every node (an administrator or a single-tenant deployment).

        Returns
        -------
        Caller
        """
        return cls(None)

    @classmethod
    def public(cls) -> Caller:
        """A caller that sees public nodes only.

        Returns
        -------
        Caller
        """
        return cls(frozenset())

    @classmethod
    def with_scopes(cls, *scopes: str | Iterable[str]) -> Caller:
        """A caller that sees public nodes and nodes in any of ``scopes``.

        Parameters
        ----------
        *scopes : str or iterable of str
            Scope names, given one by one, as one iterable (list, set, tuple, generator), or both.

        Returns
        -------
        Caller

        Raises
        ------
        TypeError
            A scope that is not a string.

        Examples
        --------
        >>> Caller.with_scopes(["t1", "t2"]) == Caller.with_scopes("t1", "t2") == Caller.with_scopes({"t2"}, "t1")
        True
        """
        flat: list[str] = []
        for s in scopes:
            items: list[Any]
            try:
                items = [s] if isinstance(s, str) else list(s)
            except TypeError:
                items = [s]
            for item in items:
                if not isinstance(item, str):
                    raise TypeError(
                        f"Caller.with_scopes: scopes must be strings or iterables of strings, got {type(item).__name__}"
                    )
                flat.append(item)
        return cls(frozenset(flat))

    @classmethod
    def from_spec(cls, spec: str | Iterable[str] | None) -> Caller:
        """Parse a CLI/config value: None or ``"*"`` = all access, ``""`` = public only,
        ``"a,b"`` = scopes a and b.

        Parameters
        ----------
        spec : str, iterable of str or None

        Returns
        -------
        Caller

        Examples
        --------
        >>> Caller.from_spec("a, b").scopes == frozenset({"a", "b"}), Caller.from_spec("*").sees_everything
        (True, True)
        """
        if spec is None:
            return cls.all_access()
        if isinstance(spec, str):
            spec = spec.strip()
            if spec == "*":
                return cls.all_access()
            return cls(frozenset(s.strip() for s in spec.split(",") if s.strip()))
        return cls(frozenset(spec))

    def unknown_scopes(self, graph: LinkGraph) -> list[str]:
        """The scopes this caller names that no node of ``graph`` carries, sorted: probably a
        typo (such a scope grants nothing; the caller sees what its other scopes show).

        Parameters
        ----------
        graph : LinkGraph

        Returns
        -------
        list of str
            Empty for an all-access or public caller.

        Examples
        --------
        >>> from conceptwalk.graph import LinkGraph
        >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "scopes": ["tenant-a"]}])
        >>> Caller.with_scopes("tenant-a", "tenant-zzz").unknown_scopes(g)
        ['tenant-zzz']
        """
        if not self.scopes:
            return []
        known = set(graph.scope_names)
        return sorted(s for s in self.scopes if s not in known)

    @property
    def sees_everything(self) -> bool:
        """True for an all-access caller (no mask applies)."""
        return self.scopes is None

    def visibility(self, graph: LinkGraph) -> _core.VisibilityMask | None:
        """The prepared mask for ``graph`` (None when everything is visible): the mask of this
        caller's :meth:`~conceptwalk.graph.LinkGraph.view` of it, made once per graph.

        Parameters
        ----------
        graph : LinkGraph

        Returns
        -------
        VisibilityMask or None

        Examples
        --------
        >>> from conceptwalk.graph import LinkGraph
        >>> Caller.public().visibility(LinkGraph.from_edges([("a", "b")])).visible_count
        2
        """
        if self.scopes is None:
            return None
        return graph.view_for_scopes(self.scopes).mask

    def __str__(self) -> str:
        if self.scopes is None:
            return "all-access"
        return "scopes:" + (",".join(sorted(self.scopes)) or "(public only)")
