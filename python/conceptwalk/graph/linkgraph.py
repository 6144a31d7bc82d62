"""The immutable link-graph snapshot and its id-level algorithm faces (PPR, resource allocation,
shortest path, hops); resource allocation and the shortest path are implemented once, in
:mod:`conceptwalk.graph.suggest` and :mod:`conceptwalk.graph.path`, for these methods and the tools."""

from __future__ import annotations

import codecs
import json
import math
import operator
import threading
from numbers import Integral, Real
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Optional, Union, overload

import numpy as np
import numpy.typing as npt

from .. import _core
from ._intern import (
    ANNOTATION_KEYS,
    IdIndex,
    all_str_or_none,
    codes_of,
    factorize,
    factorize_lists,
    intern_edges,
    intern_strings,
    pack_strings,
    strictly_sorted,
    to_float_array,
    unpack_strings,
    untrack_strings,
)
from ..errors import InputError, NotFoundError, shown
from .view import View
from .path import shortest_path as _path_of
from .result import Result
from .suggest import Suggestion, suggest, suggestions
from .visibility import Caller
from .checks import (
    check_count,
    check_min_shared,
    check_optional_count,
    check_optional_hops,
    check_optional_positive,
    check_ppr_params,
    check_real,
    id_list,
)

__all__ = [
    "LinkGraph",
    "Ranking",
    "Visible",
    "DEFAULT_EDGE_TYPE",
    "DEFAULT_NODE_TYPE",
    "EDGE_ANNOTATION_KEYS",
    "SAVED_ARRAYS_FORMAT",
    "IdIndex",
    "PackedStrings",
    "codes_of",
    "csr_patched",
    "with_default_node_type",
    "pack_strings",
    "unpack_strings",
    "untrack_strings",
]

#: Version of the layout written by :meth:`LinkGraph.to_arrays` (bump on any change).
SAVED_ARRAYS_FORMAT = 1

DEFAULT_EDGE_TYPE = "LINK"
DEFAULT_NODE_TYPE = "NODE"
EDGE_ANNOTATION_KEYS: tuple[str, ...] = tuple(ANNOTATION_KEYS)
_ppr_ids = _core.personalized_pagerank_ids

_CATEGORICAL_ANNOTATIONS = ("authority", "fidelity", "extraction_method", "lifecycle")


def insert_sorted(
    col: npt.NDArray[Any], at: npt.NDArray[np.integer[Any]], values: npt.NDArray[Any]
) -> npt.NDArray[Any]:
    """``np.insert(col, at, values)`` for non-decreasing ``at`` (positions in ``col``; equal
    ones insert their values in order), as slice copies: a few inserts into a long column cost
    a memcpy, not numpy's general mask-and-scatter (the snapshot's advance, a live graph's walk
    edges)."""
    k = int(at.shape[0])
    if k > 256:
        return np.insert(col, at, values)
    out = np.empty(col.shape[0] + k, dtype=col.dtype)
    prev = 0
    for j, a in enumerate(at.tolist()):
        out[prev + j : a + j] = col[prev:a]
        out[a + j] = values[j]
        prev = a
    out[prev + k :] = col[prev:]
    return out


def csr_patched(
    core: _core.CSRGraph,
    num_nodes: int,
    remap: npt.NDArray[np.int32],
    type_lut: npt.NDArray[np.int32],
    drop: npt.NDArray[np.int64],
    add_src: npt.NDArray[np.int32],
    add_dst: npt.NDArray[np.int32],
    add_type: npt.NDArray[np.int32],
    min_num_types: int = 0,
) -> tuple[
    _core.CSRGraph,
    npt.NDArray[np.int64],
    npt.NDArray[np.int32],
    npt.NDArray[np.int32],
    npt.NDArray[np.int32],
    npt.NDArray[np.int32],
]:
    """The compiled graph a fresh build gives after a change, from the previous one in one
    pass over its pairs (what a knowledge base's snapshot uses to follow a write).

    Parameters
    ----------
    core : conceptwalk._core.CSRGraph
        The previous compiled graph.
    num_nodes : int
        The node count after the change.
    remap : numpy.ndarray of int32
        Per old node its new index, or -1 when deleted; strictly increasing over kept nodes
        (ids stay sorted).
    type_lut : numpy.ndarray of int32
        Per old edge type code its new code, or -1 for a type no kept edge has; strictly
        increasing otherwise.
    drop : numpy.ndarray of int64
        Old canonical edge ids to remove, ascending.
    add_src, add_dst, add_type : numpy.ndarray of int32
        The edges to add, in the new numbering and codes (none equal to a kept edge).
    min_num_types : int
        At least this many edge type codes (the self-loops' types, which the core drops).

    Returns
    -------
    core : conceptwalk._core.CSRGraph
        Equal, array for array, to ``CSRGraph.from_edges`` over the kept and added edges.
    added : numpy.ndarray of int64
        Per added edge its canonical id (-1 for a self-loop).
    src, dst, types : numpy.ndarray of int32
        Per new canonical edge the source, target and type code it was given as (what
        :attr:`LinkGraph.edge_src`, ``edge_dst`` and ``edge_type_codes`` hold).
    new_to_old : numpy.ndarray of int32
        Per new canonical edge the old one it is, -1 for an added edge.

    Raises
    ------
    InputError
        Inconsistent arrays (what the core refuses: out of range, unordered, a duplicate edge).

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
    >>> core, added, src, dst, types, new_to_old = csr_patched(
    ...     g.core, 4, np.array([0, 1, 2], dtype=np.int32), np.array([0], dtype=np.int32), np.array([0]),
    ...     np.array([3], dtype=np.int32), np.array([0], dtype=np.int32), np.array([0], dtype=np.int32))
    >>> core.num_edges, added.tolist(), src.tolist(), dst.tolist(), new_to_old.tolist()
    (2, [0], [3, 1], [0, 2], [-1, 1])
    """
    try:
        return _core.CSRGraph.patched(core, num_nodes, remap, type_lut, drop, add_src, add_dst, add_type, min_num_types)
    except ValueError as exc:
        raise InputError(f"graph patch: {exc}") from None


#: A dictionary-encoded column: (integer codes, names); -1 = absent.
Encoded = tuple[np.ndarray[Any, Any], Sequence[str]]
#: A dictionary-encoded ragged column (scopes): (ptr, codes, names).
EncodedLists = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], Sequence[str]]

#: What ``visible=`` accepts: None (everything), ids, a boolean mask over the node order, or a
#: prepared :class:`conceptwalk._core.VisibilityMask` (what a cached caller holds).
Visible = Union[None, Iterable[str], npt.NDArray[np.bool_], "_core.VisibilityMask"]


def _encode(values: Any, n: int, name: str) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """Per-item strings (None = absent) as codes into *sorted* names; -1 = absent.

    ``values`` is a sequence (list, numpy array) or an already-encoded ``(codes, names)`` pair
    (codes into ``names``, -1 = absent), which skips the per-item Python work on large inputs."""
    if values is None:
        return np.full(n, -1, dtype=np.int32), ()
    if isinstance(values, tuple) and len(values) == 2 and isinstance(values[0], np.ndarray):
        codes_in = np.asarray(values[0])
        first = [str(x) for x in values[1]]
        if codes_in.shape != (n,) or not np.issubdtype(codes_in.dtype, np.integer):
            raise InputError(f"{name}: encoded codes must be an integer array of length {n}")
        if codes_in.size and (codes_in.min() < -1 or codes_in.max() >= len(first)):
            raise InputError(f"{name}: encoded codes must be in [-1, {len(first)})")
        if len(set(first)) != len(first):
            raise InputError(f"{name}: encoded names must be unique")
    else:
        if isinstance(values, np.ndarray):
            values = values.tolist()
        codes_in, first = factorize(values)
        if codes_in.shape[0] != n:
            raise InputError(f"{name} must have {n} entries, got {codes_in.shape[0]}")
    names, rank = _sorted_codes(first)
    lut = np.append(rank, -1).astype(np.int32)  # index -1 -> -1
    return lut[codes_in], names


def with_default_node_type(
    codes: npt.NDArray[np.int32], names: tuple[str, ...]
) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """Node type codes (into sorted ``names``, -1 = untyped) with every untyped node given
    :data:`DEFAULT_NODE_TYPE`, added among the sorted names when missing.

    Parameters
    ----------
    codes : numpy.ndarray of int32
    names : tuple of str
        Sorted.

    Returns
    -------
    codes : numpy.ndarray of int32
        Without -1.
    names : tuple of str
        Sorted.

    Examples
    --------
    >>> c, n = with_default_node_type(np.array([1, -1], dtype=np.int32), ("DOC", "TOPIC"))
    >>> c.tolist(), n
    ([2, 1], ('DOC', 'NODE', 'TOPIC'))
    """
    if not (codes < 0).any():
        return codes, names
    merged = tuple(sorted(set(names) | {DEFAULT_NODE_TYPE}))
    pos = {x: i for i, x in enumerate(merged)}
    lut = np.array([pos[x] for x in names] + [pos[DEFAULT_NODE_TYPE]], dtype=np.int32)
    return lut[codes], merged


#: A categorical edge annotation that is a JSON number or boolean (not a string) is held among its
#: column's names as this mark followed by the value's JSON text; :meth:`LinkGraph.edge_annotation`
#: decodes it, so values come back with the type they were given.
JSON_VALUE_MARK = "\x00"


def annotation_name(value: Any, key: str) -> str:
    """The name under which a categorical annotation value is held: a string as it is, a JSON
    number or boolean as :data:`JSON_VALUE_MARK` + its JSON text."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return JSON_VALUE_MARK + ("true" if value else "false")
    if isinstance(value, Integral):
        if -(2**63) <= int(value) < 2**63:
            return JSON_VALUE_MARK + str(int(value))
    elif isinstance(value, Real):
        f = float(value)
        if math.isfinite(f):
            return JSON_VALUE_MARK + json.dumps(f)
    raise InputError(
        f"{key} must be a string, a finite number (integers within 64 bits), a boolean "
        f"or None, got {type(value).__name__} {shown(value)}"
    )


def annotation_value(name: str) -> Any:
    """Inverse of :func:`annotation_name`."""
    if name.startswith(JSON_VALUE_MARK):
        return json.loads(name[1:])
    return name


def _annotation_column(values: Any, n: int, key: str) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """A categorical edge annotation column encoded by :func:`_encode`, keeping JSON numbers and
    booleans apart from strings (``0.75`` and ``"0.75"``, ``True`` and ``1`` stay distinct)."""
    if not (isinstance(values, tuple) and len(values) == 2 and isinstance(values[0], np.ndarray)):
        if isinstance(values, np.ndarray):
            values = values.tolist()
        elif not isinstance(values, (list, tuple)):
            values = list(values)
        if not set(map(type, values)) <= {str, type(None)}:
            values = [None if v is None else annotation_name(v, key) for v in values]
    codes, names = _encode(values, n, key)
    for name in names:
        if name.startswith(JSON_VALUE_MARK):
            try:
                v = annotation_value(name)
            except ValueError:
                v = None
            if isinstance(v, str) or v is None or isinstance(v, (list, dict)):
                raise InputError(f"{key}: a value must not start with a NUL character, got {name[:40]!r}")
    return codes, names


def _confidences(values: Any, n: int) -> npt.NDArray[np.float64]:
    """extraction_confidence values as float64 (NaN = absent), checked to lie in [0, 1]."""
    if isinstance(values, np.ndarray) and np.issubdtype(values.dtype, np.floating):
        vals = values.astype(np.float64, copy=False)  # only read here (the build gathers from it)
    else:
        if isinstance(values, np.ndarray):
            values = values.tolist()
        try:
            vals = to_float_array(values, "extraction_confidence")
        except ValueError as exc:
            raise InputError(str(exc)) from None
        except OverflowError:  # an int past float range (10**400): name the row, not a traceback
            for i, v in enumerate(values):
                try:
                    float(v) if v is not None else None
                except OverflowError:
                    text = repr(v)
                    text = text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"
                    raise InputError(
                        f"rows[{i}]: extraction_confidence must be a number in [0, 1], got {text}"
                    ) from None
                except (TypeError, ValueError):
                    continue
            raise
    if vals.shape != (n,):
        raise InputError(f"extraction_confidence must have {n} entries, got {vals.shape[0]}")
    bad = ~np.isnan(vals) & ((vals < 0) | (vals > 1))
    if bad.any():
        raise InputError(f"extraction_confidence must be in [0, 1], got {vals[bad][0]!r}")
    return vals


def _ranked(names: list[str]) -> tuple[tuple[str, ...], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sorted names, each input position's rank in sorted order, and the inverse permutation
    (sorted position -> input position)."""
    perm = np.asarray(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
    rank = np.empty(len(names), dtype=np.int64)
    rank[perm] = np.arange(len(names), dtype=np.int64)
    return tuple(names[i] for i in perm.tolist()), rank, perm


def _sorted_codes(names: list[str]) -> tuple[tuple[str, ...], npt.NDArray[np.int64]]:
    """Sorted names and, per first-seen code, its rank in sorted order."""
    sorted_names, rank, _ = _ranked(names)
    return sorted_names, rank


class PackedStrings(Sequence[Optional[str]]):
    """Strings held as one UTF-8 buffer with offsets and presence flags (the layout of
    :func:`pack_strings`), each decoded when it is read: what a graph mapped from a snapshot file
    keeps as its titles instead of one Python string per node (the buffer stays a view of the
    file's pages).

    Parameters
    ----------
    data : numpy.ndarray of uint8
        The concatenated UTF-8 bytes.
    offsets : numpy.ndarray of int64
        ``n + 1`` non-decreasing offsets from 0 to ``len(data)``.
    present : numpy.ndarray of bool, optional
        ``n`` flags, False = None.

    Raises
    ------
    ValueError
        Offsets or flags of another shape or out of order, bytes that are not UTF-8, or a string
        that starts inside a character (checked once, here: reads never fail).

    Examples
    --------
    >>> s = PackedStrings(*pack_strings(["ab", None, "é"]))
    >>> len(s), s[0], s[1], s[-1], list(s), s == ["ab", None, "é"]
    (3, 'ab', None, 'é', ['ab', None, 'é'], True)
    """

    __slots__ = ("_data", "_off", "_present", "_n", "_bytes", "_offsets")

    def __init__(self, data: npt.ArrayLike, offsets: npt.ArrayLike, present: npt.ArrayLike | None = None) -> None:
        d = np.asarray(data)
        if d.ndim == 1 and not d.flags.c_contiguous:
            d = np.ascontiguousarray(d)  # (the UTF-8 check and the lookups read it as one buffer)
        off = np.asarray(offsets)
        if d.dtype != np.uint8 or d.ndim != 1:
            raise ValueError("data must be a 1-d uint8 array")
        if off.dtype != np.int64 or off.ndim != 1 or off.shape[0] < 1:
            raise ValueError("offsets must be a non-empty 1-d int64 array")
        n = int(off.shape[0]) - 1
        if off[0] != 0 or off[-1] != d.shape[0] or (n and bool(np.any(np.diff(off) < 0))):
            raise ValueError("offsets must run from 0 to len(data) without decreasing")
        pr = None
        if present is not None:
            pr = np.asarray(present)
            if pr.shape != (n,) or pr.dtype not in (np.bool_, np.uint8):
                raise ValueError(f"present must be {n} booleans")
        # UnicodeDecodeError (a ValueError) for bytes that are not UTF-8: decoded 1 MiB at a
        # time, so no copy of the whole buffer is made
        dec = codecs.getincrementaldecoder("utf-8")()
        mv = memoryview(d.data)
        for at in range(0, d.shape[0], 1 << 20):
            dec.decode(mv[at : at + (1 << 20)])
        dec.decode(b"", final=True)
        starts = off[:-1][off[:-1] < d.shape[0]]
        if starts.size and bool(np.any((d[starts] & 0xC0) == 0x80)):
            raise ValueError("a string starts inside a UTF-8 character")
        self._hold(d, off, pr)

    def _hold(self, data: npt.NDArray[Any], offsets: npt.NDArray[Any], present: npt.NDArray[Any] | None) -> None:
        """Keep the checked layout."""
        self._data, self._off, self._present, self._n = data, offsets, present, int(offsets.shape[0]) - 1
        # a lookup reads through buffer views (a memoryview slice decodes without the numpy
        # slice and copy, and an offset reads as a Python int; benchmarks/bench_load_costs.py)
        self._bytes: memoryview = data.data
        self._offsets: memoryview = np.ascontiguousarray(offsets).data

    @classmethod
    def from_checked(
        cls, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], present: npt.NDArray[np.bool_] | None
    ) -> PackedStrings:
        """The same strings without the checks of the constructor (a pass over every byte), for
        a layout its maker guarantees.

        Parameters
        ----------
        data : numpy.ndarray of uint8
            Contiguous bytes of whole UTF-8 strings, concatenated.
        offsets : numpy.ndarray of int64
            ``n + 1`` non-decreasing offsets from 0 to ``len(data)``.
        present : numpy.ndarray of bool, optional
            ``n`` flags (False: None), or None when every string is present.

        Returns
        -------
        PackedStrings

        Examples
        --------
        >>> PackedStrings.from_checked(*pack_strings(["ab", None])) == ["ab", None]
        True
        """
        self = cls.__new__(cls)
        self._hold(data, offsets, present)
        return self

    @property
    def data(self) -> npt.NDArray[np.uint8]:
        """The concatenated UTF-8 bytes (read-only by contract)."""
        return self._data

    @property
    def offsets(self) -> npt.NDArray[np.int64]:
        """The ``n + 1`` offsets into :attr:`data`."""
        return self._off

    @property
    def present(self) -> npt.NDArray[np.bool_] | None:
        """The ``n`` presence flags (False: None), or None when every string is present."""
        return self._present

    def __reduce__(self) -> tuple[Any, ...]:
        return (PackedStrings, (self._data, self._off, self._present))

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> list[str | None]: ...

    def __getitem__(self, i: int | slice) -> str | None | list[str | None]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        j = operator.index(i)
        if j < 0:
            j += self._n
        if not 0 <= j < self._n:
            raise IndexError("PackedStrings index out of range")
        if self._present is not None and not self._present[j]:
            return None
        off = self._offsets
        return str(self._bytes[off[j] : off[j + 1]], "utf-8")

    def __iter__(self) -> Iterator[str | None]:
        return iter(unpack_strings(self._data, self._off, self._present))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(other) == self._n and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedStrings({self._n} strings)"

    def arrays(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """The packed layout (views, no copy).

        Returns
        -------
        data : numpy.ndarray of uint8
        offsets : numpy.ndarray of int64
        present : numpy.ndarray of bool

        Examples
        --------
        >>> data, offsets, present = PackedStrings(*pack_strings(["ab", None])).arrays()
        >>> bytes(data), offsets.tolist(), present.tolist()
        (b'ab', [0, 2, 2], [True, False])
        """
        pr = np.ones(self._n, dtype=bool) if self._present is None else self._present.astype(bool, copy=False)
        return self._data, self._off, pr


def _pack_into(
    out: dict[str, np.ndarray[Any, Any]], name: str, values: Sequence[str | None], nullable: bool = False
) -> None:
    if isinstance(values, PackedStrings):  # already packed: the same arrays, no re-encoding
        data, off, present = values.arrays()
        out[name + ".data"], out[name + ".offsets"] = data, off
        if nullable:
            out[name + ".present"] = present
        return
    try:
        data, off, present = pack_strings(list(values))
    except ValueError as exc:
        raise InputError(f"{name}{exc}") from None
    out[name + ".data"] = data
    out[name + ".offsets"] = off
    if nullable:
        out[name + ".present"] = present


def _unpack_from(
    arrays: Mapping[str, np.ndarray[Any, Any]], name: str, n: int | None = None, nullable: bool = False
) -> list[Any]:
    try:
        out = unpack_strings(
            arrays[name + ".data"], arrays[name + ".offsets"], arrays[name + ".present"] if nullable else None
        )
    except KeyError as exc:
        raise InputError(f"saved graph arrays: missing {exc.args[0]!r}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"saved graph arrays: {name}: {exc}") from None
    if n is not None and len(out) != n:
        raise InputError(f"saved graph arrays: {name} must have {n} entries, got {len(out)}")
    return list(out)


def _saved_codes(
    arrays: Mapping[str, np.ndarray[Any, Any]], name: str, n: int, k: int, allow_absent: bool
) -> npt.NDArray[np.int32]:
    arr = arrays.get(name)
    if arr is None:
        raise InputError(f"saved graph arrays: missing {name!r}")
    if arr.dtype != np.int32 or arr.shape != (n,):
        raise InputError(f"saved graph arrays: {name} must be int32 of shape ({n},), got {arr.dtype} {arr.shape}")
    lo = -1 if allow_absent else 0
    if n and (int(arr.min()) < lo or int(arr.max()) >= k):
        raise InputError(f"saved graph arrays: {name} holds codes outside [{lo}, {k})")
    return np.asarray(arr)


class Ranking(Result):
    """A personalized PageRank result: nodes with a positive score, by score descending then id
    ascending.

    ``score(v)`` underestimates the exact PPR ``p*(v)`` by less than ``error_bound(v) =
    min(eps * deg(v), residual)`` (``deg`` counts visible neighbours).

    Parameters
    ----------
    graph : LinkGraph
        The graph the indices refer to.
    indices : int32 array
        Node indices in rank order.
    scores : float64 array
        Their scores.
    residual : float
        The unpushed mass (the exact L1 error).
    eps : float
        The push threshold the result satisfies: the one asked for (certified mode lowers it),
        or, when ``truncated``, the larger one the scores do satisfy (``inf`` only when a node
        without visible neighbours still holds mass: then only ``residual`` bounds the error).
    pushes, edge_visits : int
        Work done (``edge_visits`` never passes the work budget ``_core.PUSH_VISITS``).
    truncated : bool
        A budget stopped the push before the ``eps`` asked for was reached: ``max_pushes``, or
        the work budget every push has (``_core.PUSH_VISITS`` adjacency entries read).
    certified : bool
        The top-k set and order are proven exact (certified mode).
    degrees : int array
        Visible degree of every node (for :meth:`error_bounds`).

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b")])
    >>> r = g.personalized_pagerank({"a": 1.0})
    >>> r.ids, len(r), r.truncated
    (['a', 'b'], 2, False)
    """

    __slots__ = (
        "_graph",
        "indices",
        "scores",
        "residual",
        "eps",
        "pushes",
        "edge_visits",
        "truncated",
        "certified",
        "_degrees",
    )
    # Pickled with its graph (which pickles as its arrays): every slot; sized by its indices.
    _fields = __slots__
    _sequence = "indices"

    def __init__(
        self,
        graph: LinkGraph,
        indices: npt.NDArray[np.int32],
        scores: npt.NDArray[np.float64],
        residual: float,
        eps: float,
        pushes: int,
        edge_visits: int,
        truncated: bool,
        certified: bool,
        degrees: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    ) -> None:
        self._graph = graph
        self.indices = indices
        self.scores = scores
        self.residual = float(residual)
        self.eps = float(eps)
        self.pushes = int(pushes)
        self.edge_visits = int(edge_visits)
        self.truncated = bool(truncated)
        self.certified = bool(certified)
        self._degrees = degrees

    @classmethod
    def from_core(
        cls, graph: LinkGraph, r: _core.PPRResult, degrees: npt.NDArray[np.int32] | npt.NDArray[np.int64]
    ) -> Ranking:
        """The ranking of a core :class:`conceptwalk._core.PPRResult`.

        Parameters
        ----------
        graph : LinkGraph
        r : conceptwalk._core.PPRResult
        degrees : int array
            Visible degree of every node.

        Returns
        -------
        Ranking

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> import numpy as np
        >>> from conceptwalk import _core
        >>> Ranking.from_core(g, _core.personalized_pagerank(g.core, np.array([0], np.int32), np.ones(1)), g.degrees).ids
        ['a', 'b']
        """
        return cls(
            graph, r.nodes, r.scores, r.residual, r.eps, r.pushes, r.edge_visits, r.truncated, r.certified, degrees
        )

    @property
    def ids(self) -> list[str]:
        """Node ids in rank order.

        Returns
        -------
        list of str
        """
        ids = self._graph.ids
        return [ids[i] for i in self.indices.tolist()]

    def items(self) -> Iterator[tuple[str, float]]:
        """``(id, score)`` pairs by score descending, then id ascending.

        Returns
        -------
        iterator of (str, float)

        Examples
        --------
        >>> [i for i, _ in LinkGraph.from_edges([("a", "b")]).personalized_pagerank({"b": 1.0}).items()]
        ['b', 'a']
        """
        ids = self._graph.ids
        return zip((ids[i] for i in self.indices.tolist()), self.scores.tolist())

    def __iter__(self) -> Iterator[tuple[str, float]]:
        """``(id, score)`` pairs (:meth:`items`)."""
        return self.items()

    def to_dict(self) -> dict[str, float]:
        """``{id: score}`` in rank order.

        Returns
        -------
        dict

        Examples
        --------
        >>> list(LinkGraph.from_edges([("a", "b")]).personalized_pagerank({"a": 1.0}).to_dict())
        ['a', 'b']
        """
        return dict(self.items())

    def error_bounds(self) -> npt.NDArray[np.float64]:
        """Per returned node, the bound on ``p*(v) - score(v)`` (``min(eps*deg(v), residual)``).

        Returns
        -------
        float64 array

        Examples
        --------
        >>> r = LinkGraph.from_edges([("a", "b")]).personalized_pagerank({"a": 1.0})
        >>> bool((r.error_bounds() <= r.residual).all())
        True
        """
        deg = self._degrees[self.indices].astype(np.float64)
        # A returned node without visible neighbours was pushed, and nothing reaches it: exact
        # (eps * 0 would be nan for the eps = inf of a truncated push).
        bound = np.zeros_like(deg)
        np.multiply(self.eps, deg, out=bound, where=deg > 0)
        return np.minimum(bound, self.residual)

    def __repr__(self) -> str:
        head = ", ".join(f"{i!r}: {s:.4g}" for i, s in list(self.items())[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Ranking({{{head}{more}}}, eps={self.eps:g}, residual={self.residual:.3g})"


class LinkGraph:
    """An immutable snapshot of a knowledge base's link graph.

    Nodes have string ids; node index = rank of the id in sorted order, so no output depends on
    input order. Edges are typed and directed; the algorithms run on the undirected projection
    (each neighbour once, self-loops dropped). Exact duplicate ``(src, dst, type)`` edges collapse
    to one edge whose annotations are those of the duplicate with the most annotations present,
    ties broken by the smallest values — a choice that never depends on input order.

    Node accessors (``index``, ``node_type``, ``title``, ``node_scopes``) take node ids; their
    ``*_at`` forms (``node_at``, ``node_scopes_at``) take node indices. Edge-level accessors
    (``edges_between``, ``edge_annotation``, ``edge_src``/``edge_dst``) work on node indices and
    canonical edge ids, since edges have no string ids.

    Parameters
    ----------
    core : conceptwalk._core.CSRGraph
        The compiled CSR of the undirected projection.
    ids : list of str
        Node ids, sorted (node index = position).
    node_type_codes, node_type_names, titles, scope_ptr, scope_codes, scope_names, node_lifecycle_codes, node_lifecycle_names
        Node columns in index order (codes into sorted names; scopes as CSR).
    edge_src, edge_dst, edge_type_codes, edge_type_names, edge_annotations
        Canonical edge columns (annotation columns: key -> (values, names)); ``edge_src``,
        ``edge_dst`` and ``edge_type_codes`` may all be None: then they are computed from the
        core when first read.
    self_loops, duplicate_edges : int
        What the build dropped and collapsed.
    id_index : IdIndex or dict of str to int, optional
        The ready ``id -> node index`` map of ``ids`` (kept as :attr:`id_index`, not checked);
        None builds it from ``ids``.

    Notes
    -----
    Build graphs with :meth:`from_edges` or :meth:`from_arrays`, which compute these columns.

    Examples
    --------
    >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    >>> g.num_nodes, g.num_edges
    (4, 4)
    >>> g.shortest_path("a", "d")
    ['a', 'c', 'd']
    >>> [(s.id, round(s.score, 3), s.shared) for s in g.resource_allocation("d", min_shared=1)]
    [('a', 0.333, ('c',)), ('b', 0.333, ('c',))]
    >>> [(i, round(p, 3)) for i, p in g.personalized_pagerank({"a": 1.0}).items()][:2]
    [('a', 0.408), ('c', 0.293)]
    """

    def __init__(
        self,
        *,
        core: _core.CSRGraph,
        ids: list[str],
        node_type_codes: npt.NDArray[np.int32],
        node_type_names: tuple[str, ...],
        titles: Sequence[str | None],
        scope_ptr: npt.NDArray[np.int64],
        scope_codes: npt.NDArray[np.int32],
        scope_names: tuple[str, ...],
        node_lifecycle_codes: npt.NDArray[np.int32],
        node_lifecycle_names: tuple[str, ...],
        edge_src: npt.NDArray[np.int32] | None,
        edge_dst: npt.NDArray[np.int32] | None,
        edge_type_codes: npt.NDArray[np.int32] | None,
        edge_type_names: tuple[str, ...],
        edge_annotations: dict[str, tuple[np.ndarray[Any, Any], tuple[str, ...]]],
        self_loops: int,
        duplicate_edges: int,
        id_index: Mapping[str, int] | None = None,
    ) -> None:
        self._core = core
        self.ids: list[str] = ids
        #: id -> node index (the rank of the id in sorted order): an :class:`IdIndex`, a read-only
        #: mapping (``[]``, ``get``, ``in``, ``len``, ``items``; a lookup is a dict lookup and an
        #: array read), which a snapshot advanced after a write gets without rebuilding it. Its iteration order is unspecified
        #: (use :attr:`ids` for the order).
        self.id_index: Mapping[str, int] = IdIndex(ids) if id_index is None else id_index
        self.node_type_codes = node_type_codes
        self._type_list: list[int] | None = None  # node_type_codes_list, made when first read
        self.node_type_names = node_type_names
        #: Per node its title or None: a list, or (in a graph mapped from a snapshot file) a
        #: :class:`PackedStrings` that decodes a title when it is read.
        self.titles: Sequence[str | None] = titles
        self.scope_ptr = scope_ptr
        self.scope_codes = scope_codes
        self.scope_names = scope_names
        self.node_lifecycle_codes = node_lifecycle_codes
        self.node_lifecycle_names = node_lifecycle_names
        # The per-edge columns, or None: computed from the core on first use (a graph mapped
        # from a snapshot file that answers a query without them never makes them).
        self._edge_cols: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]] | None = None
        if edge_src is not None and edge_dst is not None and edge_type_codes is not None:
            self._edge_cols = (edge_src, edge_dst, edge_type_codes)
        elif not (edge_src is None and edge_dst is None and edge_type_codes is None):
            raise InputError("edge_src, edge_dst and edge_type_codes must all be given or all be None")
        self.edge_type_names = edge_type_names
        #: Loaded annotation columns: key -> (codes int32 with -1 absent, names) for categorical
        #: keys (a number or boolean value is named JSON_VALUE_MARK + its JSON text), (float64
        #: with NaN absent, ()) for extraction_confidence. A key missing here was not loaded
        #: into this projection.
        self.edge_annotations = edge_annotations
        self.self_loops = self_loops
        self.duplicate_edges = duplicate_edges
        self.degrees: npt.NDArray[np.int64] = np.diff(core.indptr)
        #: Read-only view of the core's pair structure (cached: each core property call makes a
        #: new view): pair -> its canonical edge range. The pair of an adjacency entry is
        #: ``core.pair_of(u, v)`` (see :attr:`entry_pair`).
        self.pair_ptr: npt.NDArray[np.int32] = core.pair_ptr
        for arr in (
            node_type_codes,
            scope_ptr,
            scope_codes,
            node_lifecycle_codes,
            self.degrees,
            *(self._edge_cols or ()),
        ):
            arr.setflags(write=False)
        # One View per caller (its mask and everything else that depends on the caller), in a
        # bounded LRU keyed by the scope set (None: all access).
        self._views: OrderedDict[Any, View] = OrderedDict()
        self._view_lock = threading.Lock()

    @property
    def node_type_codes_list(self) -> list[int]:
        """``node_type_codes`` as a list of ints (per-item reads of a list are faster than of an
        array), made when first read."""
        lst = self._type_list
        if lst is None:
            lst = self._type_list = self.node_type_codes.tolist()
        return lst

    def _edge_columns_now(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        cols = self._edge_cols
        if cols is None:
            cols = self._core.edge_columns()  # one compiled pass over the pairs
            for arr in cols:
                arr.setflags(write=False)
            self._edge_cols = cols
        return cols

    @property
    def edge_src(self) -> npt.NDArray[np.int32]:
        """Per canonical edge, the node index it starts at (read-only int32)."""
        return self._edge_columns_now()[0]

    @property
    def edge_dst(self) -> npt.NDArray[np.int32]:
        """Per canonical edge, the node index it ends at (read-only int32)."""
        return self._edge_columns_now()[1]

    @property
    def edge_type_codes(self) -> npt.NDArray[np.int32]:
        """Per canonical edge, its type code into :attr:`edge_type_names` (read-only int32)."""
        return self._edge_columns_now()[2]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(
        cls, edges: Iterable[Any] | np.ndarray[Any, Any], nodes: Iterable[str | Mapping[str, Any]] | None = None
    ) -> LinkGraph:
        """Build from an iterable of ``(src, dst)`` / ``(src, dst, type)`` tuples or dicts
        (``src``, ``dst``, optional ``type`` and annotation keys ``authority``, ``fidelity``,
        ``extraction_method``, ``extraction_confidence``, ``lifecycle``), or a numpy array of
        shape ``(m, 2)`` or ``(m, 3)``.

        ``nodes`` lists ids or dicts with ``id`` and optional ``type``, ``title``, ``scopes``
        (list of strings; none = public), ``lifecycle``; it adds isolated nodes and attributes.
        Interning runs in Cython (``conceptwalk.graph._intern``).

        Parameters
        ----------
        edges : iterable of tuple or dict, or numpy.ndarray
            The typed directed edges.
        nodes : iterable of str or dict, optional
            Node ids or node rows (attributes; isolated nodes).

        Returns
        -------
        LinkGraph
            The snapshot (node index = rank of the id in sorted order).

        Raises
        ------
        InputError
            A malformed row (named ``edges[i]`` / ``nodes[i]``), a duplicate node, an empty graph.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b", "USES")], nodes=[{"id": "c", "type": "CONCEPT"}])
        >>> g.ids, g.num_edges
        (['a', 'b', 'c'], 1)
        """
        table: dict[str, int] = {}
        names: list[str] = []
        node_rows: list[Mapping[str, Any]] = []
        if nodes is not None:
            for i, row in enumerate(nodes):
                if isinstance(row, Mapping):
                    if "id" not in row or row["id"] is None:
                        raise InputError(f"nodes[{i}]: missing 'id'")
                    node_rows.append(row)
                elif isinstance(row, str):
                    node_rows.append({"id": row})
                else:
                    raise InputError(f"nodes[{i}]: expected an id string or a dict, got {type(row).__name__}")
            seen: set[str] = set()
            for i, row in enumerate(node_rows):
                nid = str(row["id"])
                if nid in seen:
                    raise InputError(f"nodes[{i}]: duplicate id {nid!r}")
                seen.add(nid)
            intern_strings([str(r["id"]) for r in node_rows], table, names)
        type_table: dict[str, int] = {}
        type_names: list[str] = []
        if isinstance(edges, np.ndarray):
            if edges.ndim != 2 or edges.shape[1] not in (2, 3):
                raise InputError(f"edges array must have shape (m, 2) or (m, 3), got {edges.shape}")
            src = intern_strings(edges[:, 0].astype(str).tolist(), table, names)
            dst = intern_strings(edges[:, 1].astype(str).tolist(), table, names)
            if edges.shape[1] == 3:
                typ = intern_strings(edges[:, 2].astype(str).tolist(), type_table, type_names)
            else:
                typ = intern_strings([DEFAULT_EDGE_TYPE] * edges.shape[0], type_table, type_names)
            ann: dict[str, list[Any]] = {}
        else:
            try:
                src, dst, typ, ann = intern_edges(edges, table, names, type_table, type_names, DEFAULT_EDGE_TYPE)
            except ValueError as exc:
                raise InputError(str(exc)) from None
        n = len(names)
        attrs: dict[str, list[Any]] = {k: [None] * n for k in ("type", "title", "scopes", "lifecycle")}
        for row in node_rows:
            code = table[str(row["id"])]
            for k in attrs:
                attrs[k][code] = row.get(k)
        sorted_ids, rank, perm = _ranked(names)  # perm: sorted position -> first-seen code
        type_sorted, type_rank = _sorted_codes(type_names)
        return cls._build(
            list(sorted_ids),
            rank[src] if n else src,
            rank[dst] if n else dst,
            type_rank[typ] if len(type_names) else typ,
            type_sorted,
            perm,
            node_types=attrs["type"] if node_rows else None,
            titles=attrs["title"] if node_rows else None,
            scopes=attrs["scopes"] if node_rows else None,
            lifecycle=attrs["lifecycle"] if node_rows else None,
            edge_annotations=ann,
        )

    @classmethod
    def from_arrays(
        cls,
        ids: Sequence[str],
        src: npt.ArrayLike,
        dst: npt.ArrayLike,
        edge_types: Sequence[str] | npt.ArrayLike | Encoded | None = None,
        *,
        node_types: Sequence[str | None] | Encoded | None = None,
        titles: Sequence[str | None] | None = None,
        scopes: Sequence[Sequence[str] | None] | EncodedLists | None = None,
        lifecycle: Sequence[str | None] | Encoded | None = None,
        edge_annotations: Mapping[str, Sequence[Any] | Encoded | np.ndarray[Any, Any]] | None = None,
    ) -> LinkGraph:
        """Build from columns: ``ids`` (unique strings, any order), ``src``/``dst`` integer
        positions into ``ids``, per-edge type names (default ``"LINK"``), per-node attribute
        sequences aligned with ``ids`` and per-edge annotation columns (``None`` = absent).

        This is the fast path for large graphs (importers, the synthetic generator and the
        store use it). Categorical columns may come dictionary-encoded as ``(codes, names)``
        (an integer array into unique names, -1 = absent; edge types without -1), scopes as
        ``(ptr, codes, names)`` (node ``i`` holds ``names[codes[ptr[i]:ptr[i + 1]]]``), and
        ``extraction_confidence`` as a float array (NaN = absent), which skips every per-row
        Python step; ids given as a strictly ascending list skip the sort.

        Parameters
        ----------
        ids : sequence of str
            Unique node ids, any order.
        src, dst : array-like of int
            Per edge, positions into ``ids``.
        edge_types : sequence of str, optional
            Per edge, its type (default ``"LINK"``).
        node_types, titles, lifecycle : sequence of str or None, optional
            Per node (aligned with ``ids``), None = absent.
        scopes : sequence of (sequence of str or None), optional
            Per node its scopes (None or empty = public).
        edge_annotations : mapping of str to sequence, optional
            Per annotation key (:data:`EDGE_ANNOTATION_KEYS`), one value per edge (None = absent).

        Returns
        -------
        LinkGraph

        Examples
        --------
        >>> g = LinkGraph.from_arrays(["a", "b", "c"], [0, 1], [1, 2],
        ...                           (np.array([1, 0]), ["CITES", "USES"]),
        ...                           node_types=(np.array([0, -1, 0]), ["DOC"]))
        >>> g.edge_type_names, [g.node_type(x) for x in g.ids]
        (('CITES', 'USES'), ['DOC', 'NODE', 'DOC'])
        """
        presorted = type(ids) is list and strictly_sorted(ids)  # the store's path: no re-sort
        ids_list = list(ids) if presorted else [str(x) for x in ids]
        n = len(ids_list)
        if not presorted and len(set(ids_list)) != n:
            raise InputError("ids must be unique")
        src_a = cls._int_column(src, "src")
        dst_a = cls._int_column(dst, "dst")
        if src_a.shape != dst_a.shape:
            raise InputError(f"src and dst must have the same length, got {src_a.shape[0]} and {dst_a.shape[0]}")
        m = src_a.shape[0]
        for name, arr in (("src", src_a), ("dst", dst_a)):
            if m and (arr.min() < 0 or arr.max() >= n):
                bad = int(arr[(arr < 0) | (arr >= n)][0])
                raise InputError(f"{name} contains position {bad}, outside [0, {n})")
        if edge_types is None:
            type_names: list[str] = [DEFAULT_EDGE_TYPE] if m else []
            typ = np.zeros(m, dtype=np.int64)
        elif isinstance(edge_types, tuple) and len(edge_types) == 2 and isinstance(edge_types[0], np.ndarray):
            # Already encoded: (codes into names, names), as the store's reader produces them.
            typ = cls._int_column(edge_types[0], "edge_types")
            type_names = [str(x) for x in edge_types[1]]
            if typ.shape != (m,):
                raise InputError(f"edge_types must have length {m}, got shape {typ.shape}")
            if len(set(type_names)) != len(type_names):
                raise InputError("edge_types: encoded names must be unique")
            if m and (typ.min() < 0 or typ.max() >= len(type_names)):
                raise InputError(f"edge_types: encoded codes must be in [0, {len(type_names)})")
        else:
            et = np.asarray(edge_types)
            if et.shape != (m,):
                raise InputError(f"edge_types must have length {m}, got shape {et.shape}")
            type_names = []
            typ = intern_strings(
                et.astype(str).tolist() if et.dtype != object else [str(x) for x in et], {}, type_names
            )
        type_sorted, type_rank = _sorted_codes(type_names)
        ann: dict[str, Any] = {}
        for key, col in (edge_annotations or {}).items():
            if key not in EDGE_ANNOTATION_KEYS:
                raise InputError(f"unknown edge annotation {key!r}; expected one of {EDGE_ANNOTATION_KEYS}")
            ann[key] = col
        if presorted:
            sorted_ids: Sequence[str] = ids_list
            perm: npt.NDArray[np.int64] | None = None
            src_r, dst_r = src_a, dst_a
        else:
            sorted_ids, rank, perm = _ranked(ids_list)  # perm: sorted position -> input position
            src_r, dst_r = rank[src_a], rank[dst_a]
        return cls._build(
            list(sorted_ids),
            src_r,
            dst_r,
            type_rank[typ] if type_names else typ,
            type_sorted,
            perm,
            node_types=node_types,
            titles=titles,
            scopes=scopes,
            lifecycle=lifecycle,
            edge_annotations=ann,
        )

    @staticmethod
    def _int_column(values: npt.ArrayLike, name: str) -> npt.NDArray[np.int64]:
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise InputError(f"{name} must be 1-dimensional, got shape {arr.shape}")
        if arr.size == 0:
            return np.zeros(0, dtype=np.int64)
        if not np.issubdtype(arr.dtype, np.integer):
            raise InputError(f"{name} must hold integers, got dtype {arr.dtype}")
        if arr.dtype == np.int32:  # kept as is (the core takes int32); typed as the int64 it stands for
            return arr
        return arr.astype(np.int64, copy=False)

    def to_arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        """Everything this graph holds as named numpy arrays (strings as UTF-8 buffers with
        offsets), the inverse of :meth:`from_saved_arrays`; what a snapshot file stores.

        Returns
        -------
        dict of str to numpy.ndarray
            ``header`` (int64: :data:`SAVED_ARRAYS_FORMAT`, nodes, edge types, self-loops,
            duplicate edges), the core's CSR arrays (``core.indptr``, ``core.indices``,
            ``core.pair_base``, ``core.pair_ptr``, ``core.edge_typedir``), the node columns
            (``node_type_codes``, ``node_lifecycle_codes``, ``scope_ptr``, ``scope_codes``), each
            string column ``X`` as ``X.data`` (uint8) and ``X.offsets`` (int64; ``titles`` also
            ``titles.present``), and per loaded edge annotation ``ann.KEY.values`` (with
            ``ann.KEY.names`` for the categorical keys). Node and edge arrays are this graph's
            own (read-only) arrays, not copies.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b", "CITES"), ("b", "c")])
        >>> h = LinkGraph.from_saved_arrays(g.to_arrays())
        >>> h.ids == g.ids and h.edge_type_names == g.edge_type_names and h.num_edges == g.num_edges
        True
        """
        core = self._core
        out: dict[str, np.ndarray[Any, Any]] = {
            "header": np.array(
                [SAVED_ARRAYS_FORMAT, self.num_nodes, int(core.num_edge_types), self.self_loops, self.duplicate_edges],
                dtype=np.int64,
            ),
            "core.indptr": np.asarray(core.indptr),
            "core.indices": np.asarray(core.indices),
            "core.pair_base": np.asarray(core.pair_base),
            "core.pair_ptr": np.asarray(core.pair_ptr),
            "core.edge_typedir": np.asarray(core.edge_typedir),
            "node_type_codes": self.node_type_codes,
            "node_lifecycle_codes": self.node_lifecycle_codes,
            "scope_ptr": self.scope_ptr,
            "scope_codes": self.scope_codes,
        }
        _pack_into(out, "ids", self.ids)
        _pack_into(out, "titles", self.titles, nullable=True)
        for name, names in (
            ("node_type_names", self.node_type_names),
            ("scope_names", self.scope_names),
            ("node_lifecycle_names", self.node_lifecycle_names),
            ("edge_type_names", self.edge_type_names),
        ):
            _pack_into(out, name, names)
        for key, (vals, names) in self.edge_annotations.items():
            out[f"ann.{key}.values"] = vals
            if key != "extraction_confidence":
                _pack_into(out, f"ann.{key}.names", names)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as its arrays (:meth:`to_arrays`, by value: a graph mapped from a snapshot
        file ships its contents, not the file) and unpickles through :meth:`from_saved_arrays`
        into an equal graph that answers as this one. Caches (masks, edge columns) are not
        shipped; they are remade on use.

        Examples
        --------
        >>> import pickle
        >>> g = LinkGraph.from_edges([("a", "b", "CITES"), ("b", "c")], nodes=[{"id": "a", "title": "A"}])
        >>> h = pickle.loads(pickle.dumps(g))
        >>> h.ids, h.title("a"), h.shortest_path("a", "c"), h.edge_type_names == g.edge_type_names
        (['a', 'b', 'c'], 'A', ['a', 'b', 'c'], True)
        """
        arrays = {name: np.asarray(arr) for name, arr in self.to_arrays().items()}  # plain ndarrays
        return (LinkGraph.from_saved_arrays, (arrays,))

    @classmethod
    def from_saved_arrays(cls, arrays: Mapping[str, np.ndarray[Any, Any]]) -> LinkGraph:
        """A graph from :meth:`to_arrays`'s output (e.g. memory-mapped from a snapshot file)
        without rebuilding: the core is constructed from the saved CSR arrays, which it
        validates, and every other column is checked for shape and code range.

        Parameters
        ----------
        arrays : mapping of str to numpy.ndarray
            The arrays :meth:`to_arrays` returned (names as it gives them; names it does not
            write are ignored). The graph keeps views of them (no copy).

        Returns
        -------
        LinkGraph
            Equal to the graph that wrote the arrays, with the edge annotations it held.

        Raises
        ------
        InputError
            A missing or inconsistent array (a damaged or foreign file).

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b", "CITES"), ("b", "c")], nodes=[{"id": "a", "title": "A"}])
        >>> h = LinkGraph.from_saved_arrays(g.to_arrays())
        >>> h.ids, h.title("a"), h.shortest_path("a", "c")
        (['a', 'b', 'c'], 'A', ['a', 'b', 'c'])
        >>> LinkGraph.from_saved_arrays({"header": np.zeros(5, dtype=np.int64)})
        Traceback (most recent call last):
        ...
        conceptwalk.errors.InputError: saved graph arrays: not format 1
        """
        header = arrays.get("header")
        if header is None or header.shape != (5,) or int(header[0]) != SAVED_ARRAYS_FORMAT:
            raise InputError(f"saved graph arrays: not format {SAVED_ARRAYS_FORMAT}")
        n, ntypes, loops, dups = (int(x) for x in header[1:])
        try:
            ip, ind, pb, pp, td = (
                arrays["core.indptr"],
                arrays["core.indices"],
                arrays["core.pair_base"],
                arrays["core.pair_ptr"],
                arrays["core.edge_typedir"],
            )
            # read-only arrays of the right layout (a mapped snapshot file's) are kept, not copied
            core = _core.csr_graph_from_arrays(n, ntypes, ip, ind, pb, pp, td, borrow=(ip, ind, pb, pp, td))
        except KeyError as exc:
            raise InputError(f"saved graph arrays: missing {exc.args[0]!r}") from None
        except ValueError as exc:
            raise InputError(str(exc)) from None
        if n == 0:
            raise InputError("saved graph arrays: the graph is empty")
        ids = _unpack_from(arrays, "ids", n)
        if not strictly_sorted(ids):
            raise InputError("saved graph arrays: ids are not strictly ascending")
        untrack_strings(ids)  # str only (checked): never scanned by the cycle collector
        try:  # titles stay packed (views of the file's pages), decoded when read
            titles = PackedStrings(arrays["titles.data"], arrays["titles.offsets"], arrays["titles.present"])
        except KeyError as exc:
            raise InputError(f"saved graph arrays: missing {exc.args[0]!r}") from None
        except ValueError as exc:
            raise InputError(f"saved graph arrays: titles: {exc}") from None
        if len(titles) != n:
            raise InputError(f"saved graph arrays: titles must have {n} entries, got {len(titles)}")
        tnames = tuple(_unpack_from(arrays, "node_type_names"))
        snames = tuple(_unpack_from(arrays, "scope_names"))
        lnames = tuple(_unpack_from(arrays, "node_lifecycle_names"))
        enames = tuple(_unpack_from(arrays, "edge_type_names"))
        if len(enames) < ntypes:
            raise InputError("saved graph arrays: fewer edge type names than edge type codes")
        for what, names_ in (
            ("node_type_names", tnames),
            ("scope_names", snames),
            ("node_lifecycle_names", lnames),
            ("edge_type_names", enames),
        ):
            if not strictly_sorted(list(names_)):  # every graph keeps its names sorted and unique
                raise InputError(f"saved graph arrays: {what} are not strictly ascending")
        ntype_codes = _saved_codes(arrays, "node_type_codes", n, len(tnames), False)
        life_codes = _saved_codes(arrays, "node_lifecycle_codes", n, len(lnames), True)
        scope_ptr = np.asarray(arrays.get("scope_ptr", np.zeros(0, dtype=np.int64)))
        scope_codes = np.asarray(arrays.get("scope_codes", np.zeros(0, dtype=np.int32)))
        if (
            scope_ptr.dtype != np.int64
            or scope_ptr.shape != (n + 1,)
            or scope_ptr[0] != 0
            or scope_ptr[-1] != scope_codes.shape[0]
            or np.any(np.diff(scope_ptr) < 0)
        ):
            raise InputError("saved graph arrays: scope_ptr is inconsistent")
        _saved_codes(arrays, "scope_codes", int(scope_codes.shape[0]), len(snames), False)
        E = int(core.num_edges)
        anns: dict[str, tuple[np.ndarray[Any, Any], tuple[str, ...]]] = {}
        for key in EDGE_ANNOTATION_KEYS:
            name = f"ann.{key}.values"
            if name not in arrays:
                continue
            if key == "extraction_confidence":
                vals = np.asarray(arrays[name])
                if vals.dtype != np.float64 or vals.shape != (E,):
                    raise InputError(f"saved graph arrays: {name} must be float64 of shape ({E},)")
                anns[key] = (vals, ())
            else:
                names = tuple(_unpack_from(arrays, f"ann.{key}.names"))
                if not strictly_sorted(list(names)):
                    raise InputError(f"saved graph arrays: ann.{key}.names are not strictly ascending")
                anns[key] = (_saved_codes(arrays, name, E, len(names), True), names)
        return cls(
            core=core,
            ids=ids,
            node_type_codes=ntype_codes,
            node_type_names=tnames,
            titles=titles,
            scope_ptr=scope_ptr,
            scope_codes=scope_codes,
            scope_names=snames,
            node_lifecycle_codes=life_codes,
            node_lifecycle_names=lnames,
            edge_src=None,
            edge_dst=None,
            edge_type_codes=None,  # from the core when read
            edge_type_names=enames,
            edge_annotations=anns,
            self_loops=loops,
            duplicate_edges=dups,
        )

    @classmethod
    def from_networkx(cls, G: Any, *, type_attr: str = "type", unknown: str = "error") -> LinkGraph:
        """Build from a networkx graph: :func:`conceptwalk.graph.nxgraph.from_networkx` (an
        attribute a LinkGraph cannot hold, such as ``weight``, is refused unless
        ``unknown="ignore"``: the algorithms are unweighted, as published).

        Parameters
        ----------
        G : networkx graph
        type_attr : str
            The attribute holding node and edge types.
        unknown : {"error", "ignore"}
            Other attributes: refused (the default) or dropped.

        Returns
        -------
        LinkGraph

        Examples
        --------
        >>> import networkx as nx
        >>> LinkGraph.from_networkx(nx.path_graph(3)).ids
        ['0', '1', '2']
        """
        from .nxgraph import from_networkx

        return from_networkx(G, type_attr=type_attr, unknown=unknown)

    def to_networkx(self, *, caller: Caller | None = None) -> Any:
        """What ``caller`` sees (default: public nodes only) as a ``networkx.MultiDiGraph``:
        :func:`conceptwalk.graph.nxgraph.to_networkx`.

        Parameters
        ----------
        caller : Caller, optional
            Whose view; default :meth:`Caller.public`.

        Returns
        -------
        networkx.MultiDiGraph

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "s", "scopes": ["t1"]}])
        >>> sorted(g.to_networkx().nodes)
        ['a', 'b']
        """
        from .nxgraph import to_networkx

        return to_networkx(self, caller=caller)

    def without_annotations(self) -> LinkGraph:
        """The same graph without its edge annotation columns (the lighter projection a store
        loads with ``annotations=False``), sharing this graph's arrays and core. A new graph
        object, so it has its own (empty) cache of prepared masks.

        Returns
        -------
        LinkGraph
            The same nodes, edges and node columns, with an empty :attr:`edge_annotations`.

        Examples
        --------
        >>> g = LinkGraph.from_edges([{"src": "a", "dst": "b", "authority": "primary"}])
        >>> h = g.without_annotations()
        >>> sorted(g.edge_annotations)[:1], h.edge_annotations, h.num_edges, h.core is g.core
        (['authority'], {}, 1, True)
        """
        return type(self)(
            core=self._core,
            ids=self.ids,
            node_type_codes=self.node_type_codes,
            node_type_names=self.node_type_names,
            titles=self.titles,
            scope_ptr=self.scope_ptr,
            scope_codes=self.scope_codes,
            scope_names=self.scope_names,
            node_lifecycle_codes=self.node_lifecycle_codes,
            node_lifecycle_names=self.node_lifecycle_names,
            edge_src=None if self._edge_cols is None else self._edge_cols[0],
            edge_dst=None if self._edge_cols is None else self._edge_cols[1],
            edge_type_codes=None if self._edge_cols is None else self._edge_cols[2],
            edge_type_names=self.edge_type_names,
            edge_annotations={},
            self_loops=self.self_loops,
            duplicate_edges=self.duplicate_edges,
        )

    @classmethod
    def _build(
        cls,
        ids: list[str],
        src: npt.NDArray[np.int64],
        dst: npt.NDArray[np.int64],
        typ: npt.NDArray[np.int64],
        type_names: tuple[str, ...],
        perm: npt.NDArray[np.int64] | None,
        *,
        node_types: Any,
        titles: Any,
        scopes: Any,
        lifecycle: Any,
        edge_annotations: Mapping[str, Any],
    ) -> LinkGraph:
        """Assemble a graph. ``ids`` are sorted; ``perm[i]`` is the input position of sorted node
        ``i`` (None: the input is in sorted order); node columns are in input order, edge columns
        in input edge order."""
        n = len(ids)
        ident = perm is None
        if perm is None:
            perm = np.arange(n, dtype=np.int64)
        if n == 0:
            raise InputError("the graph is empty: no nodes and no edges")
        m = int(src.shape[0])
        core, canon = _core.CSRGraph.from_edges(
            n,
            np.ascontiguousarray(src, dtype=np.int32),
            np.ascontiguousarray(dst, dtype=np.int32),
            np.ascontiguousarray(typ, dtype=np.int32),
        )
        E = int(core.num_edges)
        kept = canon >= 0
        nkept = int(np.count_nonzero(kept))
        kept_idx = np.arange(m, dtype=np.int64) if nkept == m else np.flatnonzero(kept)
        ci = canon if nkept == m else canon[kept_idx]  # canonical edge of each kept input
        # Annotation columns in input edge order: categorical codes into sorted names, or floats.
        encoded: dict[str, tuple[np.ndarray[Any, Any], tuple[str, ...]]] = {}
        for key, col in edge_annotations.items():
            if key == "extraction_confidence":
                encoded[key] = (_confidences(col, m), ())
            else:
                encoded[key] = _annotation_column(col, m, key)
        # The input edge behind each canonical edge. Exact duplicates: the smallest annotation
        # tuple (absent first, then by sorted value) wins, so the choice never depends on order.
        chosen = np.empty(E, dtype=np.int64)
        chosen[ci] = kept_idx  # unique wherever there is no duplicate
        if nkept > E:  # duplicates
            counts = np.bincount(ci, minlength=E)
            dup_groups = np.flatnonzero(counts > 1)
        else:
            dup_groups = np.zeros(0, dtype=np.int64)
        if dup_groups.size and encoded:
            members: dict[int, list[int]] = {int(c): [] for c in dup_groups}
            for i in kept_idx[np.isin(canon[kept_idx], dup_groups)].tolist():
                members[int(canon[i])].append(i)
            cols = [encoded[k][0] for k in sorted(encoded)]

            def ann_key(i: int) -> tuple[float, ...]:
                vals = [float(c[i]) for c in cols]
                absent = [math.isnan(v) or v < 0 for v in vals]
                # Most annotations present first (a bare duplicate never hides an annotated
                # one), then the smallest values in sorted-name order.
                return (float(sum(absent)), *(-1.0 if a else v for a, v in zip(absent, vals)))

            for c, rows_ in members.items():
                chosen[c] = min(rows_, key=ann_key)
        anns: dict[str, tuple[np.ndarray[Any, Any], tuple[str, ...]]] = {}
        for key, (vals, names) in encoded.items():
            picked = vals[chosen]
            picked.setflags(write=False)
            anns[key] = (picked, names)
        # Canonical edge columns: every kept input edge lands on its canonical edge with its
        # own direction and type, so a scatter of the inputs fills them (duplicates agree).
        edge_src = np.empty(E, dtype=np.int32)
        edge_dst = np.empty(E, dtype=np.int32)
        etype = np.empty(E, dtype=np.int32)
        if nkept == m:
            edge_src[ci], edge_dst[ci], etype[ci] = src, dst, typ
        else:
            edge_src[ci], edge_dst[ci], etype[ci] = src[kept_idx], dst[kept_idx], typ[kept_idx]
        # Node columns (input order) -> sorted order.
        if isinstance(node_types, np.ndarray):
            node_types = node_types.tolist()
        if node_types is not None and not (
            isinstance(node_types, tuple) and len(node_types) == 2 and isinstance(node_types[0], np.ndarray)
        ):
            node_types = [DEFAULT_NODE_TYPE if t is None else t for t in node_types]
        ntype_codes, ntype_names = with_default_node_type(*_encode(node_types, n, "node_types"))
        if not ident:
            ntype_codes = ntype_codes[perm]
        life_codes, life_names = _encode(lifecycle, n, "lifecycle")
        if not ident:
            life_codes = life_codes[perm]
        if titles is None:
            title_list: list[str | None] = [None] * n
        else:
            tl = titles.tolist() if isinstance(titles, np.ndarray) else list(titles)
            if len(tl) != n:
                raise InputError(f"titles must have {n} entries (one per id), got {len(tl)}")
            if ident:
                title_list = tl if all_str_or_none(tl) else [None if t is None else str(t) for t in tl]
            else:
                title_list = [None if tl[i] is None else str(tl[i]) for i in perm.tolist()]
        if scopes is None:
            scope_ptr = np.zeros(n + 1, dtype=np.int64)
            scope_codes = np.zeros(0, dtype=np.int32)
            scope_names: tuple[str, ...] = ()
        elif isinstance(scopes, tuple) and len(scopes) == 3 and isinstance(scopes[0], np.ndarray):
            # Already encoded (the store's reader): (ptr int64 n + 1, codes into names, names).
            ptr_in = np.asarray(scopes[0], dtype=np.int64)
            codes_in = np.asarray(scopes[1], dtype=np.int64)
            first = [str(x) for x in scopes[2]]
            if (
                ptr_in.shape != (n + 1,)
                or ptr_in[0] != 0
                or ptr_in[-1] != codes_in.shape[0]
                or (n and np.any(np.diff(ptr_in) < 0))
            ):
                raise InputError(
                    f"scopes: encoded ptr must be non-decreasing from 0 to len(codes) with {n + 1} entries"
                )
            if codes_in.size and (codes_in.min() < 0 or codes_in.max() >= len(first)):
                raise InputError(f"scopes: encoded codes must be in [0, {len(first)})")
            if len(set(first)) != len(first):
                raise InputError("scopes: encoded names must be unique")
            scope_names, srank = _sorted_codes(first)
            if ident:
                scope_ptr = ptr_in.copy()
                scope_codes = srank[codes_in].astype(np.int32) if codes_in.size else np.zeros(0, dtype=np.int32)
            else:
                lengths = np.diff(ptr_in)[perm]
                scope_ptr = np.zeros(n + 1, dtype=np.int64)
                np.cumsum(lengths, out=scope_ptr[1:])
                gather = np.repeat(ptr_in[:-1][perm] - scope_ptr[:-1], lengths) + np.arange(int(scope_ptr[-1]))
                scope_codes = srank[codes_in[gather]].astype(np.int32) if gather.size else np.zeros(0, dtype=np.int32)
        else:
            sl = scopes.tolist() if isinstance(scopes, np.ndarray) else scopes
            try:
                ptr_in, codes_in, first = factorize_lists(sl, "scopes")
            except ValueError as exc:
                raise InputError(str(exc)) from None
            if ptr_in.shape[0] != n + 1:
                raise InputError(f"scopes must have {n} entries (one per id), got {ptr_in.shape[0] - 1}")
            scope_names, srank = _sorted_codes(first)
            lengths = np.diff(ptr_in)[perm]
            scope_ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=scope_ptr[1:])
            gather = np.repeat(ptr_in[:-1][perm] - scope_ptr[:-1], lengths) + np.arange(int(scope_ptr[-1]))
            scope_codes = srank[codes_in[gather]].astype(np.int32) if gather.size else np.zeros(0, dtype=np.int32)
        return cls(
            core=core,
            ids=untrack_strings(ids),  # a new list of str: never scanned by the cycle collector
            node_type_codes=np.ascontiguousarray(ntype_codes),
            node_type_names=ntype_names,
            titles=untrack_strings(title_list),  # str or None only (converted above)
            scope_ptr=scope_ptr,
            scope_codes=scope_codes,
            scope_names=scope_names,
            node_lifecycle_codes=np.ascontiguousarray(life_codes),
            node_lifecycle_names=life_names,
            edge_src=edge_src,
            edge_dst=edge_dst,
            edge_type_codes=etype,
            edge_type_names=type_names,
            edge_annotations=anns,
            self_loops=m - nkept,
            duplicate_edges=nkept - E,
        )

    # ------------------------------------------------------------------ basic access
    @property
    def core(self) -> _core.CSRGraph:
        """The compiled CSR graph (read-only views: ``indptr``, ``indices``, ...)."""
        return self._core

    @property
    def entry_pair(self) -> npt.NDArray[np.int32]:
        """Adjacency entry -> neighbour pair, for every entry. Not stored (it would cost 4 bytes
        per entry): each access computes it in O(entries); for one entry use
        ``core.pair_of(u, v)``."""
        arr: npt.NDArray[np.int32] = self._core.entry_pair
        return arr

    @property
    def num_nodes(self) -> int:
        """Number of nodes (visible or not)."""
        return int(self._core.num_nodes)

    @property
    def num_edges(self) -> int:
        """Canonical typed directed edges (self-loops dropped, exact duplicates collapsed)."""
        return int(self._core.num_edges)

    @property
    def num_neighbour_pairs(self) -> int:
        """Undirected neighbour pairs of the projection."""
        return int(self._core.num_pairs)

    def __len__(self) -> int:
        return self.num_nodes

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, str) and node_id in self.id_index

    def __repr__(self) -> str:
        return f"LinkGraph(nodes={self.num_nodes}, edges={self.num_edges}, edge_types={list(self.edge_type_names)})"

    # Node accessors take node ids; the ``*_at`` forms take node indices (the rank of the id).
    # ``neighbors``, ``degree`` and ``in`` take ids; ``edges_between`` takes two ids or two
    # indices; the other edge-level accessors (``edge_annotation``, ``edge_src``...) work on
    # canonical edge ids: edges have no string ids.
    def index(self, node_id: str, *, visible: Visible = None, argument: str = "node") -> int:
        """Index of ``node_id`` (the rank of the id in sorted order).

        Parameters
        ----------
        node_id : str
        visible : ids, boolean mask or VisibilityMask, optional
            A hidden id is refused exactly like a missing one.
        argument : str
            The argument name the error message uses.

        Returns
        -------
        int

        Raises
        ------
        NotFoundError
            Unknown or hidden id (the same text for both).

        Examples
        --------
        >>> LinkGraph.from_edges([("b", "a")]).index("b")
        1
        """
        idx = self.id_index.get(node_id) if isinstance(node_id, str) else None
        if idx is None:
            raise NotFoundError(node_id, argument)
        if visible is not None:
            vm = self.visibility(visible)
            if vm is not None and not vm.mask[idx]:
                raise NotFoundError(node_id, argument)
        return idx

    def node_type(self, node_id: str) -> str:
        """The node type of ``node_id`` (an id).

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str

        Examples
        --------
        >>> LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "type": "CONCEPT"}]).node_type("a")
        'CONCEPT'
        """
        return self.node_type_names[self.node_type_codes_list[self.index(node_id)]]

    def title(self, node_id: str) -> str | None:
        """The title of ``node_id`` (an id), or None.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        str or None

        Examples
        --------
        >>> LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "title": "A"}]).title("a")
        'A'
        """
        return self.titles[self.index(node_id)]

    def node_scopes(self, node_id: str) -> tuple[str, ...]:
        """The scopes of ``node_id`` (an id), sorted; ``()`` = public.

        Parameters
        ----------
        node_id : str

        Returns
        -------
        tuple of str

        Examples
        --------
        >>> LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "scopes": ["t2", "t1"]}]).node_scopes("a")
        ('t1', 't2')
        """
        return self.node_scopes_at(self.index(node_id))

    def node_at(self, idx: int) -> tuple[str, str, str | None]:
        """``(id, type, title)`` of the node at index ``idx``.

        Parameters
        ----------
        idx : int
            A node index in ``[0, num_nodes)``.

        Returns
        -------
        tuple

        Examples
        --------
        >>> LinkGraph.from_edges([("b", "a")]).node_at(0)
        ('a', 'NODE', None)
        """
        return self.ids[idx], self.node_type_names[self.node_type_codes_list[idx]], self.titles[idx]

    def node_scopes_at(self, idx: int) -> tuple[str, ...]:
        """The scopes of the node at index ``idx``, sorted; ``()`` = public.

        Parameters
        ----------
        idx : int

        Returns
        -------
        tuple of str

        Examples
        --------
        >>> LinkGraph.from_edges([("a", "b")]).node_scopes_at(0)
        ()
        """
        a, b = int(self.scope_ptr[idx]), int(self.scope_ptr[idx + 1])
        return tuple(sorted({self.scope_names[c] for c in self.scope_codes[a:b].tolist()}))

    def neighbors(self, node_id: str, *, visible: Visible = None) -> list[str]:
        """Ids of the neighbours of ``node_id`` in the undirected projection (each neighbour
        once, whatever the edges' directions, types or count; self-loops dropped), in id order.

        Parameters
        ----------
        node_id : str
        visible : ids, boolean mask or VisibilityMask, optional
            Only visible neighbours; a hidden ``node_id`` is refused like a missing one.

        Returns
        -------
        list of str

        Raises
        ------
        NotFoundError
            Unknown or hidden id (the same text for both).

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b"), ("c", "a"), ("a", "b", "X"), ("a", "a")])
        >>> g.neighbors("a"), g.neighbors("b"), g.neighbors("a", visible=["a", "c"])
        (['b', 'c'], ['a'], ['c'])
        """
        vm = self.visibility(visible)
        i = self.index(node_id, visible=vm, argument="node_id")
        ip = self._core.indptr
        nbrs = np.asarray(self._core.indices[int(ip[i]) : int(ip[i + 1])])
        if vm is not None:
            nbrs = nbrs[vm.mask[nbrs]]
        ids = self.ids
        return [ids[j] for j in nbrs.tolist()]

    def degree(self, node_id: str, *, visible: Visible = None) -> int:
        """The number of neighbours of ``node_id`` in the undirected projection (visible ones
        with ``visible``): ``len(g.neighbors(node_id, visible=visible))``. The degree of every
        node, by index, is the array :attr:`degrees`.

        Parameters
        ----------
        node_id : str
        visible : ids, boolean mask or VisibilityMask, optional

        Returns
        -------
        int

        Raises
        ------
        NotFoundError
            Unknown or hidden id (the same text for both).

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b"), ("c", "a"), ("b", "a")])
        >>> g.degree("a"), g.degree("b"), g.degree("a", visible=["a", "b"])
        (2, 1, 1)
        """
        vm = self.visibility(visible)
        i = self.index(node_id, visible=vm, argument="node_id")
        if vm is None:
            return int(self.degrees[i])
        return int(vm.visible_degrees[i])

    def edges_between(self, a: int | str, b: int | str) -> list[int]:
        """Canonical edge ids joining ``a`` and ``b`` (either direction), given as two node ids
        (like :meth:`neighbors`) or as two node indices.

        Parameters
        ----------
        a, b : str or int
            Two node ids, or two node indices (``g.index(id)``); not one of each.

        Returns
        -------
        list of int
            Canonical edge ids (for :attr:`edge_src`, :attr:`edge_dst`, :meth:`edge_annotation`),
            ascending; ``[]`` when the two are not linked.

        Raises
        ------
        NotFoundError
            An unknown id.
        InputError
            An index out of range, or an argument that is neither an id nor an index.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b", "X"), ("b", "a", "Y")])
        >>> g.edges_between("a", "b"), g.edges_between(0, 1), g.edges_between("a", "a")
        ([0, 1], [0, 1], [])
        """
        if isinstance(a, str) and isinstance(b, str):
            ia, ib = self.index(a, argument="a"), self.index(b, argument="b")
        else:
            n = self.num_nodes
            if any(isinstance(v, bool) or not isinstance(v, Integral) for v in (a, b)):
                raise InputError(
                    f"edges_between: a and b must be two node ids (str) or two node indices "
                    f"(int), got {type(a).__name__} and {type(b).__name__}"
                )
            for name, v in (("a", a), ("b", b)):
                if not 0 <= int(v) < n:
                    raise InputError(f"edges_between: {name}: node index {int(v)} outside [0, {n})")
            ia, ib = int(a), int(b)
        p = self._core.pair_of(ia, ib)
        if p < 0:
            return []
        return list(range(int(self.pair_ptr[p]), int(self.pair_ptr[p + 1])))

    def edge_annotation(self, edge: int, key: str) -> Any:
        """The value of annotation ``key`` on canonical edge ``edge``, or None when absent.

        A value is returned with the JSON type it was given (string, number or boolean).

        Parameters
        ----------
        edge : int
            A canonical edge id.
        key : str
            One of :data:`EDGE_ANNOTATION_KEYS`.

        Returns
        -------
        str, float, int, bool or None
            The value as it was given, or None when the edge has none.

        Examples
        --------
        >>> g = LinkGraph.from_edges([{"src": "a", "dst": "b", "authority": "HIGH"}])
        >>> g.edge_annotation(0, "authority"), g.edge_annotation(0, "fidelity")
        ('HIGH', None)
        """
        col = self.edge_annotations.get(key)
        if col is None:
            return None
        values, names = col
        if key == "extraction_confidence":
            v = float(values[edge])
            return None if math.isnan(v) else v
        c = int(values[edge])
        return None if c < 0 else annotation_value(names[c])

    # ------------------------------------------------------------------ visibility
    def visibility(self, visible: Visible) -> _core.VisibilityMask | None:
        """Turn ``visible`` into a prepared mask (None = everything visible).

        Parameters
        ----------
        visible : None, ids, boolean mask over the node order, or VisibilityMask

        Returns
        -------
        VisibilityMask or None

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> g.visibility(["a"]).mask.tolist()
        [True, False]
        """
        if visible is None:
            return None
        if isinstance(visible, _core.VisibilityMask):
            return visible
        if isinstance(visible, np.ndarray) and visible.dtype == np.bool_:
            if visible.shape != (self.num_nodes,):
                raise InputError(f"visible: boolean mask must have shape ({self.num_nodes},), got {visible.shape}")
            return _core.VisibilityMask(self._core, np.ascontiguousarray(visible))
        if isinstance(visible, (str, bytes)):
            raise InputError("visible: expected a collection of ids, not a single string")
        if isinstance(visible, np.ndarray):
            raise InputError(f"visible: numpy mask must be boolean, got dtype {visible.dtype}")
        mask = np.zeros(self.num_nodes, dtype=bool)
        idx = [self.id_index[v] for v in visible if isinstance(v, str) and v in self.id_index]
        mask[np.asarray(idx, dtype=np.int64)] = True
        return _core.VisibilityMask(self._core, mask)

    def scope_mask(self, scopes: Iterable[str] | None) -> npt.NDArray[np.bool_]:
        """Boolean mask of nodes visible to a caller holding ``scopes`` (None = all access):
        public nodes (no scopes) plus nodes sharing at least one scope. Vectorised.

        Parameters
        ----------
        scopes : iterable of str or None

        Returns
        -------
        bool array over the node order

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "a", "scopes": ["t"]}])
        >>> g.scope_mask([]).tolist(), g.scope_mask(["t"]).tolist()
        ([False, True], [True, True])
        """
        if scopes is None:
            return np.ones(self.num_nodes, dtype=bool)
        wanted = np.zeros(len(self.scope_names) + 1, dtype=bool)
        lookup = {s: i for i, s in enumerate(self.scope_names)}
        for s in scopes:
            if s in lookup:
                wanted[lookup[s]] = True
        hit = wanted[self.scope_codes].astype(np.int64)
        counts = np.diff(self.scope_ptr)
        csum = np.concatenate(([0], np.cumsum(hit)))
        hits = csum[self.scope_ptr[1:]] - csum[self.scope_ptr[:-1]]
        visible: npt.NDArray[np.bool_] = (counts == 0) | (hits > 0)
        return visible

    #: How many callers' views (with their prepared masks) a graph keeps (least recently used
    #: dropped first), and the bytes
    #: they may hold together. A mask holds, per node, a byte and a visible degree, and the rows
    #: of the visible subgraph (4 bytes per visible adjacency entry) that let a masked push read
    #: only visible entries — about 17 bytes per node-and-neighbour of the graph in the worst case.
    MASK_CACHE_ENTRIES = 64
    MASK_CACHE_BYTES = 1 << 30

    def view(self, caller: Caller | None) -> View:
        """The caller's :class:`~conceptwalk.graph.view.View` of this graph: its prepared mask
        and everything else a query reads that depends on the caller, made once per caller.

        Views are kept in a thread-safe LRU bounded by :attr:`MASK_CACHE_ENTRIES` views and
        :attr:`MASK_CACHE_BYTES` bytes of masks (at least the most recent view is always kept).

        Parameters
        ----------
        caller : Caller
            Who asks (None is refused: there is no implicit all-access).

        Returns
        -------
        View

        Examples
        --------
        >>> from conceptwalk import Caller
        >>> g = LinkGraph.from_edges([("a", "b")], nodes=[{"id": "b", "scopes": ["t"]}])
        >>> v = g.view(Caller.with_scopes("t"))
        >>> v is g.view(Caller.with_scopes(["t"])), v.mask.visible_count
        (True, 2)
        """
        if not isinstance(caller, Caller):
            raise InputError(f"caller must be a Caller, got {type(caller).__name__}")
        return self.view_for_scopes(caller.scopes)

    def view_for_scopes(self, scopes: Iterable[str] | None) -> View:
        """The :class:`~conceptwalk.graph.view.View` of a scope set (None: all access); see
        :meth:`view`.

        Parameters
        ----------
        scopes : iterable of str or None

        Returns
        -------
        View
        """
        key = None if scopes is None else frozenset(scopes)
        with self._view_lock:
            v = self._views.get(key)
            if v is not None:
                self._views.move_to_end(key)
                return v
        vm = None if key is None else _core.VisibilityMask(self._core, self.scope_mask(key))
        v = View(self, key, vm)
        per_mask = 13 * self.num_nodes + 4 * int(self._core.num_entries)
        limit = max(1, min(self.MASK_CACHE_ENTRIES, self.MASK_CACHE_BYTES // max(per_mask, 1)))
        with self._view_lock:
            v = self._views.setdefault(key, v)
            self._views.move_to_end(key)
            while len(self._views) > limit:
                self._views.popitem(last=False)
        return v

    def release_views(self) -> None:
        """Forget the per-caller views kept so far (:meth:`view_for_scopes` makes them again when
        asked). A view holds its graph and the graph holds its views, a reference cycle that only
        the cycle collector breaks: a store calls this on the graph a write replaced, so that the
        graph (its arrays: hundreds of megabytes at 500k nodes) is freed as soon as no reader
        holds it, not at some later collection together with every other replaced graph. A view
        a reader holds stays valid.

        Examples
        --------
        >>> from conceptwalk import Caller
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> v = g.view(Caller.public())
        >>> g.release_views()
        >>> g.view(Caller.public()) is v, v.graph is g
        (False, True)
        """
        with self._view_lock:
            self._views.clear()

    def visibility_for_scopes(self, scopes: Iterable[str] | None) -> _core.VisibilityMask | None:
        """The prepared mask of a scope set (None = all access, no mask): its view's mask
        (:meth:`view_for_scopes`).

        Parameters
        ----------
        scopes : iterable of str or None

        Returns
        -------
        VisibilityMask or None

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> g.visibility_for_scopes(["t"]) is g.visibility_for_scopes(["t"])
        True
        """
        if scopes is None:
            return None
        return self.view_for_scopes(scopes).mask

    # ------------------------------------------------------------------ algorithms
    def seed_arrays(
        self, seeds: Mapping[str, float], vm: _core.VisibilityMask | None
    ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Checked seed indices (ascending) and weights of a seed mapping.

        Parameters
        ----------
        seeds : mapping id -> weight
            Finite weights >= 0, not all zero; unknown and hidden ids raise the same NotFoundError.
        vm : VisibilityMask or None

        Returns
        -------
        tuple
            ``(int32 indices ascending, float64 weights)``.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> [a.tolist() for a in g.seed_arrays({"b": 2.0, "a": 1.0}, None)]
        [[0, 1], [1.0, 2.0]]
        """
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Mapping):
            raise InputError(f"seeds must map node ids to positive weights, got {type(seeds).__name__}")
        if len(seeds) == 0:
            raise InputError("seeds must not be empty")
        index = self.id_index
        mask = None if vm is None else vm.mask  # one view for the whole loop
        idx_l: list[int] = []
        w_l: list[float] = []
        for sid, weight in seeds.items():
            try:
                wf = float(weight)
            except (TypeError, ValueError):
                raise InputError(f"seeds[{sid!r}]: weight must be a number, got {weight!r}") from None
            if not math.isfinite(wf) or wf < 0:
                raise InputError(f"seeds[{sid!r}]: weight must be finite and >= 0, got {weight!r}")
            i = index.get(sid) if isinstance(sid, str) else None
            if i is None or (mask is not None and not mask[i]):
                raise NotFoundError(sid, "seed")  # the same text for missing and hidden ids
            idx_l.append(i)
            w_l.append(wf)
        if not sum(w_l) > 0:
            raise InputError("seeds: weights must not all be zero")
        order = sorted(range(len(idx_l)), key=idx_l.__getitem__)
        return (
            np.array([idx_l[j] for j in order], dtype=np.int32),
            np.array([w_l[j] for j in order], dtype=np.float64),
        )

    def personalized_pagerank(
        self,
        seeds: Mapping[str, float],
        *,
        restart: float = 0.25,
        eps: float = 1e-4,
        k: int | None = None,
        visible: Visible = None,
        max_pushes: int | None = None,
        max_residual: float | None = None,
    ) -> Ranking:
        """Personalized PageRank by forward push (Andersen–Chung–Lang) on the undirected
        projection of the visible subgraph.

        Parameters
        ----------
        seeds : mapping id -> weight
            Positive weights, normalised to sum 1. Hidden or unknown ids raise NotFoundError.
        restart : float
            Probability of jumping back to the seeds at each step (networkx's ``1 - alpha``).
        eps : float
            Push while ``r(u) >= eps * deg(u)``.
        k : int, optional
            Return only the top ``k`` nodes.
        visible : ids, boolean mask or VisibilityMask, optional
            Compute exactly as on the subgraph induced by these nodes. Ids and masks are
            prepared on every call (O(nodes + edges)); for repeated queries pass the prepared
            ``g.visibility(...)`` or use a :class:`~conceptwalk.Caller`, whose mask is cached.
        max_pushes : int, optional
            Work cap; the ranking says ``truncated`` when it stopped the push early.
        max_residual : float, optional
            A hard cap on the total error: after reaching ``eps``, keep halving ``eps``
            (reusing the residuals) until the unpushed mass — which *is* the exact L1 error
            ``sum_v p*(v) - p(v)`` — is at most ``max_residual``. ``ranking.eps`` reports the
            final eps; ``truncated`` is set if ``max_pushes``, the work budget (or the smallest
            eps an uncapped push may use) stopped it first.

        Returns
        -------
        Ranking

        Notes
        -----
        Error bound: ``0 <= p*(v) - score(v) < eps * deg(v)`` for every node, and the unpushed
        mass (``residual``) bounds the total error. A node without visible neighbours keeps its
        mass (as with a self-loop).

        Work: a push reads at most ``1 / (restart * eps)`` adjacency entries, and never more than
        the work budget ``_core.PUSH_VISITS`` (2^26; the defaults read at most 40,000). A push
        the budget stops (a vanishing ``restart``, a tiny ``eps``) returns ``truncated`` with
        ``ranking.eps`` raised to the eps its scores do satisfy, so :meth:`Ranking.error_bounds`
        stays true.

        Determinism: seeds are processed in index order and the push queue is FIFO over sorted
        neighbours, so the result is identical across runs, threads and input orders on one build.
        No randomness. Threading: the GIL is released; concurrent calls are safe.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
        >>> r = g.personalized_pagerank({"a": 1.0}, eps=1e-8)
        >>> [(i, round(p, 3)) for i, p in r.items()]
        [('b', 0.429), ('a', 0.411), ('c', 0.161)]
        """
        restart, eps = check_ppr_params(restart, eps, capped=max_pushes is not None)
        k_ = check_optional_count(k, "k")
        max_pushes_ = check_optional_count(max_pushes, "max_pushes")
        max_residual_ = check_optional_positive(max_residual, "max_residual")
        vm = self.visibility(visible)
        degrees = self.degrees if vm is None else vm.visible_degrees
        # One compiled call for a plain {id: number} dict (ids resolved in it); anything else, and
        # every error, takes the checked path.
        got = _ppr_ids(self._core, self.id_index, seeds, restart, eps, k_, max_pushes_, vm, max_residual_)
        if got is not None:
            return Ranking(self, *got, degrees)
        idx, w = self.seed_arrays(seeds, vm)
        r = _core.personalized_pagerank(self._core, idx, w, restart, eps, k_, max_pushes_, vm, max_residual_)
        return Ranking.from_core(self, r, degrees)

    def personalized_pagerank_certified(
        self,
        seeds: Mapping[str, float],
        k: int,
        *,
        restart: float = 0.25,
        eps: float = 1e-4,
        min_eps: float = 1e-9,
        shrink: float = 4.0,
        max_pushes: int = 10_000_000,
        visible: Visible = None,
    ) -> Ranking:
        """Top-``k`` PPR that proves itself: pushes at ``eps``, then lowers ``eps`` by ``shrink``
        (reusing the residuals) until the top-``k`` set and order are certified exact by the bound
        ``0 <= p*(v) - p(v) <= min(eps*deg(v), residual)``, or ``min_eps``/``max_pushes`` or the
        work budget (``_core.PUSH_VISITS`` edge visits) stop it. ``ranking.certified`` says which
        (a budget sets ``truncated`` and never ``certified``); ``ranking.eps`` is the final eps
        (the eps the scores satisfy).

        Parameters
        ----------
        seeds : mapping id -> weight
        k : int
            The top-k to certify.
        restart, eps : float
        min_eps : float
            The smallest eps tried.
        shrink : float
            Factor (> 1) eps is divided by per round.
        max_pushes : int
            Total push budget.
        visible : ids, boolean mask or VisibilityMask, optional

        Returns
        -------
        Ranking

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
        >>> r = g.personalized_pagerank_certified({"a": 1.0}, 2)
        >>> r.certified, r.ids[:2]
        (True, ['b', 'a'])
        """
        restart, eps = check_ppr_params(restart, eps, capped=True)  # max_pushes always caps it
        k = check_count(k, "k")
        shrink_ = check_real(shrink, "shrink")
        min_eps_ = check_real(min_eps, "min_eps")
        max_pushes_ = check_count(max_pushes, "max_pushes")
        vm = self.visibility(visible)
        idx, w = self.seed_arrays(seeds, vm)
        r = _core.personalized_pagerank_certified(
            self._core, idx, w, restart, eps, k, shrink_, min_eps_, max_pushes_, vm
        )
        return Ranking.from_core(self, r, self.degrees if vm is None else vm.visible_degrees)

    def resource_allocation(
        self, node: str, *, min_shared: int = 2, k: int | None = None, visible: Visible = None
    ) -> list[Suggestion]:
        """Missing-link suggestions for ``node`` by resource allocation:
        ``score(node, b) = sum over shared visible neighbours z of 1 / deg(z)``.

        Candidates share at least ``min_shared`` visible neighbours with ``node`` and are not
        already linked to it. Ordered by score descending, then id ascending; ``k`` keeps the top
        ``k`` (selected without sorting every candidate).

        Parameters
        ----------
        node : str
            The node id (unknown and hidden ids raise the same NotFoundError).
        min_shared : int
        k : int, optional
        visible : ids, boolean mask or VisibilityMask, optional

        Returns
        -------
        list of Suggestion

        Notes
        -----
        Determinism: contributions are summed in neighbour-index order; identical across runs and
        threads on one build. Threading: the GIL is released.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("c", "x")])
        >>> [(s.id, s.score, s.shared) for s in g.resource_allocation("a")]
        [('b', 0.8333333333333333, ('x', 'y'))]
        """
        min_shared = check_min_shared(min_shared)
        k_ = check_optional_count(k, "k")
        vm = None if visible is None else self.visibility(visible)
        return suggestions(self, suggest(self, node, min_shared, k_, vm))

    def shortest_path(self, source: str, target: str, *, visible: Visible = None) -> list[str] | None:
        """The shortest chain from ``source`` to ``target`` (ids, both inclusive) over visible
        nodes, by bidirectional BFS on the undirected projection; ``None`` when none exists.

        Among equal-length paths the lexicographically smallest sequence of ids wins.

        Parameters
        ----------
        source, target : str
            Node ids.
        visible : ids, boolean mask or VisibilityMask, optional

        Returns
        -------
        list of str or None

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "c"), ("c", "d"), ("a", "b"), ("b", "d")])
        >>> g.shortest_path("a", "d")
        ['a', 'b', 'd']
        >>> g.shortest_path("a", "d", visible=["a", "c", "d"])
        ['a', 'c', 'd']
        """
        vm = None if visible is None else self.visibility(visible)
        return _path_of(self, source, target, vm, self.ids) or None

    def hops(
        self, seeds: Iterable[str], targets: Iterable[str], *, max_hops: int | None = None, visible: Visible = None
    ) -> dict[str, tuple[int, str] | None]:
        """For each target, ``(hops, seed)``: the distance to the nearest seed and that seed
        (smallest id on ties), or None when not reached (within ``max_hops``).

        Parameters
        ----------
        seeds : iterable of str
            Seed ids (a single string is refused, not iterated).
        targets : iterable of str
            Target ids (a single string is refused).
        max_hops : int, optional
            Stop after this many BFS layers (clamped to 2**31 - 1); None = no limit.
        visible : ids, boolean mask or VisibilityMask, optional

        Returns
        -------
        dict
            target id -> ``(hops, seed id)`` or None.

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b"), ("b", "c")])
        >>> g.hops(["a"], ["c", "a"])
        {'c': (2, 'a'), 'a': (0, 'a')}
        """
        max_hops_ = check_optional_hops(max_hops)
        seed_l = id_list(seeds, "seeds")
        tl = id_list(targets, "targets")
        vm = self.visibility(visible)
        s = np.array(sorted({self.index(x, visible=vm, argument="seed") for x in seed_l}), dtype=np.int32)
        t = np.array([self.index(x, visible=vm, argument="target") for x in tl], dtype=np.int32)
        r = _core.multi_source_hops(self._core, s, t, max_hops_, vm)
        ids = self.ids
        return {x: (None if h < 0 else (h, ids[v])) for x, h, v in zip(tl, r.hops.tolist(), r.via.tolist())}
