"""The one result pattern of the package: every answer object (:class:`~conceptwalk.graph.Ranking`,
and the tools' ``ContextResult``, ``SuggestResult`` and ``PathResult``) is a :class:`Result` --
sized and iterable over its main sequence, pickled by value -- and the tools' answers are
:class:`Record` results besides: always truthy, equal when their ``to_dict()`` are equal, not
hashable, with fields that may be built on first read (:class:`lazy`, from a :class:`Later`).

A lazy field keeps the core's arrays until someone reads it: a caller that only needs a count,
or only serialises the first item, does not pay for the Python objects of the rest.

Examples
--------
>>> class Squares(Record):
...     __slots__ = ("n", "_values")
...     _fields = ("n", "values")
...     _sequence = "values"
...     values = lazy("the squares below n")
...     def __init__(self, n, values):
...         self.n, self._values = n, values
...     def to_dict(self):
...         return {"n": self.n, "values": self.values}
>>> r = Squares(3, Later(lambda: [i * i for i in range(3)]))
>>> len(r), list(r), r == Squares(3, [0, 1, 4]), bool(Squares(0, []))
(3, [0, 1, 4], True, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

__all__ = ["Later", "Record", "Result", "lazy"]


class Later:
    """A field value to compute on first read: ``fn()`` (called at most once per object, unless
    two threads race for the first read -- then both compute the same value).

    Parameters
    ----------
    fn : callable
        Takes no arguments; returns the field's value.

    Examples
    --------
    >>> Later(lambda: 1).fn()
    1
    """

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn


class lazy(property):
    """A read-only field (a property) stored in the slot ``_<name>`` (or ``slot``); a
    :class:`Later` there is replaced by its value on the first read.

    Parameters
    ----------
    doc : str
        The field's docstring.
    slot : str, optional
        The slot holding the value (default ``"_" + the field's name``).

    Examples
    --------
    >>> class A:
    ...     __slots__ = ("_x",)
    ...     x = lazy("a number")
    ...     def __init__(self): self._x = Later(lambda: 2)
    >>> A().x, A.x.__doc__
    (2, 'a number')
    """

    def __init__(self, doc: str, slot: str = "") -> None:
        super().__init__(self.read, None, None, doc)
        self.__doc__ = doc  # a property subclass's instances would show the class docstring
        self.slot = slot

    def __set_name__(self, owner: type, name: str) -> None:
        if not self.slot:
            self.slot = "_" + name

    def read(self, obj: Any) -> Any:
        """The field's value on ``obj`` (computed and kept on the first read).

        Parameters
        ----------
        obj : object

        Returns
        -------
        object
        """
        v = getattr(obj, self.slot)
        if type(v) is Later:
            v = v.fn()
            setattr(obj, self.slot, v)
        return v


class Result:
    """Base of every answer object: sized and iterable over the attribute named by
    ``_sequence``, and pickled by value as ``type(self)(*[getattr(self, f) for f in _fields])``
    (lazy fields are realised on the way: no graph or core result travels unless a field is one)
    plus the ``_state`` attributes, set after construction.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> import pickle
    >>> r = LinkGraph.from_edges([("a", "b")]).personalized_pagerank({"a": 1.0})
    >>> isinstance(r, Result), pickle.loads(pickle.dumps(r)).to_dict() == r.to_dict()
    (True, True)
    """

    __slots__ = ()

    #: Constructor arguments, in order, read back by attribute name for pickling.
    _fields: ClassVar[tuple[str, ...]] = ()
    #: Attributes set after construction (pickled as the object's state).
    _state: ClassVar[tuple[str, ...]] = ()
    #: The attribute ``len()`` and ``iter()`` use.
    _sequence: ClassVar[str] = ""

    def __len__(self) -> int:
        return len(getattr(self, self._sequence))

    def __iter__(self) -> Iterator[Any]:
        return iter(getattr(self, self._sequence))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles by value (the lazy fields are realised)."""
        args = tuple(getattr(self, f) for f in self._fields)
        if not self._state:
            return (type(self), args)
        return (type(self), args, {a: getattr(self, a) for a in self._state})

    def __setstate__(self, state: dict[str, Any]) -> None:
        for a, v in state.items():
            setattr(self, a, v)

    def to_dict(self) -> Any:
        """JSON-ready form (each result class defines it).

        Returns
        -------
        dict
        """
        raise NotImplementedError


class Record(Result):
    """A tool's answer: always truthy (an empty one is still an answer), equal to another of its
    class when the ``to_dict()`` forms are equal, and so not hashable.

    Examples
    --------
    >>> from conceptwalk import Caller, LinkGraph, graph_path
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> r = graph_path(g, "a", "b", caller=Caller.all_access())
    >>> isinstance(r, Record), r == graph_path(g, "a", "b", caller=Caller.all_access())
    (True, True)
    """

    __slots__ = ()

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return bool(self.to_dict() == other.to_dict())

    __hash__ = None  # type: ignore[assignment]
