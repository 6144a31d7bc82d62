# cython: language_level=3, boundscheck=False, wraparound=False
"""Interning string ids from large Python iterables (the loop walks Python objects).

``intern_strings`` maps each string to the code of its first occurrence, building the table as
it goes; ``intern_edges`` walks an iterable of edge tuples or dicts in one pass.
"""

import numpy as np
cimport numpy as cnp
from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_SIZE, PyList_GET_ITEM
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_GET_ITEM
from libc.stdint cimport int64_t

cnp.import_array()

ANNOTATION_KEYS = ("authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle")


cdef inline Py_ssize_t _code(dict table, list names, object key) except -1:
    cdef object found
    if type(key) is not str:
        if key is None:
            raise TypeError("id must be a string, got None")
        # Check the type before any dict lookup: an unhashable value (a list, a dict) must give
        # this message, not a bare "unhashable type" TypeError from table.get().
        if not isinstance(key, (str, int, float)) or isinstance(key, bool):
            raise TypeError(f"expected a string, got {type(key).__name__} {key!r}")
        key = str(key)
    found = table.get(key)
    if found is not None:
        return <Py_ssize_t>found
    cdef Py_ssize_t c = len(names)
    table[key] = c
    names.append(key)
    return c


cdef inline Py_ssize_t _code_fast(dict table, list names, object key) except -1:
    """_code with a borrowed-reference dict probe for the common case of a known str key."""
    cdef PyObject* found
    if type(key) is str:
        found = PyDict_GetItem(table, key)
        if found != NULL:
            return <Py_ssize_t>(<object>found)
    return _code(table, names, key)


def intern_strings(object values, dict table, list names):
    """Codes of ``values`` in ``table``, extending ``table``/``names`` with the new ones.

    Parameters
    ----------
    values : iterable of str
        The strings to code.
    table : dict of str to int
        String -> code so far (extended in place).
    names : list of str
        Code -> string so far (extended in place).

    Returns
    -------
    numpy.ndarray of int64
        One code per value.

    Examples
    --------
    >>> table, names = {}, []
    >>> intern_strings(["b", "a", "b"], table, names).tolist(), names
    ([0, 1, 0], ['b', 'a'])
    """
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i
    cdef cnp.ndarray[cnp.int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = _code(table, names, seq[i])
    return out


cdef inline int _put_edge(int64_t[::1] src, int64_t[::1] dst, int64_t[::1] typ, Py_ssize_t row,
                          dict table, list names, dict type_table, list type_names, str default_type,
                          object s, object d, object t) except -1:
    """Codes of one edge row's endpoints and type (the default type when ``t`` is None), with the
    row number in the error of a bad id or type."""
    try:
        src[row] = _code_fast(table, names, s)
        dst[row] = _code_fast(table, names, d)
    except TypeError as exc:
        raise ValueError(f"edges[{row}]: {exc}") from None
    try:
        typ[row] = _code_fast(type_table, type_names, default_type if t is None else t)
    except TypeError as exc:
        raise ValueError(f"edges[{row}]: type: {exc}") from None
    return 0


def intern_edges(object edges, dict table, list names, dict type_table, list type_names,
                 str default_type):
    """Walk ``edges`` (tuples ``(src, dst[, type])`` or dicts with ``src``, ``dst``, optional
    ``type`` and annotation keys) once.

    Returns ``(src_codes, dst_codes, type_codes, annotations)`` where ``annotations`` maps each
    annotation key present in any dict row to a list aligned with the edges (``None`` when absent).
    Raises ``ValueError`` naming the row number (0-based) of a malformed row.

    A list of tuples takes a fast path: codes go straight into preallocated int64 arrays and known
    string ids are found with a borrowed-reference dict probe.
    """
    cdef list seq = edges if type(edges) is list else list(edges)
    cdef Py_ssize_t m = PyList_GET_SIZE(seq), row, n
    cdef cnp.ndarray[cnp.int64_t, ndim=1] src_a = np.empty(m, dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1] dst_a = np.empty(m, dtype=np.int64)
    cdef cnp.ndarray[cnp.int64_t, ndim=1] typ_a = np.empty(m, dtype=np.int64)
    cdef int64_t[::1] src = src_a
    cdef int64_t[::1] dst = dst_a
    cdef int64_t[::1] typ = typ_a
    cdef dict ann = {}
    cdef object e, s, d, key, val
    for row in range(m):
        e = <object>PyList_GET_ITEM(seq, row)
        if type(e) is tuple:
            n = PyTuple_GET_SIZE(e)
            if n < 2 or n > 3:
                raise ValueError(f"edges[{row}]: expected 2 or 3 items, got {n}")
            _put_edge(src, dst, typ, row, table, names, type_table, type_names, default_type,
                      <object>PyTuple_GET_ITEM(e, 0), <object>PyTuple_GET_ITEM(e, 1),
                      <object>PyTuple_GET_ITEM(e, 2) if n == 3 else None)
            for key in ann:
                (<list>ann[key]).append(None)
        elif type(e) is dict:
            try:
                s, d = (<dict>e)["src"], (<dict>e)["dst"]
            except KeyError as exc:
                raise ValueError(f"edges[{row}]: missing key {exc.args[0]!r}") from None
            _put_edge(src, dst, typ, row, table, names, type_table, type_names, default_type,
                      s, d, (<dict>e).get("type"))
            for key in ANNOTATION_KEYS:
                val = (<dict>e).get(key)
                if val is not None:
                    if key not in ann:
                        ann[key] = [None] * row
                    (<list>ann[key]).append(val)
                elif key in ann:
                    (<list>ann[key]).append(None)
        else:
            try:
                n = len(e)
            except TypeError:
                raise ValueError(f"edges[{row}]: expected a (src, dst[, type]) tuple or a dict, got {type(e).__name__}") from None
            if n < 2 or n > 3:
                raise ValueError(f"edges[{row}]: expected 2 or 3 items, got {n}")
            _put_edge(src, dst, typ, row, table, names, type_table, type_names, default_type,
                      e[0], e[1], e[2] if n == 3 else None)
            for key in ann:
                (<list>ann[key]).append(None)
    return src_a, dst_a, typ_a, ann


def factorize(object values):
    """Codes of ``values`` in first-seen order: ``(codes int32 with -1 for None, names)``.

    Non-string values are converted with ``str()`` (so ``1`` and ``"1"`` share a code)."""
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i
    cdef cnp.ndarray[cnp.int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef dict table = {}
    cdef list names = []
    cdef object v, f
    for i in range(n):
        v = seq[i]
        if v is None:
            out[i] = -1
            continue
        if type(v) is not str:
            v = str(v)
        f = table.get(v)
        if f is None:
            f = len(names)
            table[v] = f
            names.append(v)
        out[i] = <cnp.int32_t>f
    return out, names


def to_float_array(object values, str name):
    """``values`` as float64 with NaN for None; ValueError naming ``name[i]`` for a non-number."""
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i
    cdef cnp.ndarray[cnp.float64_t, ndim=1] out = np.empty(n, dtype=np.float64)
    cdef object v
    for i in range(n):
        v = seq[i]
        if v is None:
            out[i] = np.nan
            continue
        try:
            out[i] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number in [0, 1] or None, got {v!r}") from None
    return out


def factorize_lists(object values, str name):
    """Ragged lists of strings (None = empty) as ``(ptr int64, codes int32, names)``."""
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i
    cdef cnp.ndarray[cnp.int64_t, ndim=1] ptr = np.zeros(n + 1, dtype=np.int64)
    cdef list codes = []
    cdef dict table = {}
    cdef list names = []
    cdef object v, s, f
    for i in range(n):
        v = seq[i]
        if v is not None:
            if isinstance(v, (str, bytes)):
                raise ValueError(f"{name}[{i}] must be a list of strings, got the string {v!r}")
            try:
                it = iter(v)
            except TypeError:
                raise ValueError(f"{name}[{i}] must be a list of strings, got {type(v).__name__} {v!r}") from None
            for s in it:
                if type(s) is not str:
                    s = str(s)
                f = table.get(s)
                if f is None:
                    f = len(names)
                    table[s] = f
                    names.append(s)
                codes.append(f)
        ptr[i + 1] = len(codes)
    return ptr, np.asarray(codes, dtype=np.int32), names


# ---------------------------------------------------------------- snapshot columns
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.string cimport memcpy


def pack_strings(object values):
    """Strings (None allowed) as one UTF-8 buffer: ``(data uint8, offsets int64 of length
    n + 1, present bool)``; string i is ``data[offsets[i]:offsets[i + 1]]``, a None has an
    empty range and ``present[i] = False``. ValueError for a value that is not a string.

    The layout :meth:`LinkGraph.to_arrays <conceptwalk.graph.LinkGraph.to_arrays>` stores its
    string columns in; :func:`unpack_strings` reads it back.

    Parameters
    ----------
    values : iterable of (str or None)
        The strings, in order (a list is read as it is, anything else is listed first).

    Returns
    -------
    data : numpy.ndarray of uint8
        The UTF-8 bytes of every present string, concatenated.
    offsets : numpy.ndarray of int64
        ``n + 1`` non-decreasing offsets into ``data``, from 0 to ``len(data)``.
    present : numpy.ndarray of bool
        Per value, False where it was None.

    Raises
    ------
    ValueError
        A value that is neither a str nor None (the message starts with its position ``[i]``).

    Examples
    --------
    >>> data, offsets, present = pack_strings(["ab", None, "é"])
    >>> bytes(data), offsets.tolist(), present.tolist()
    (b'ab\\xc3\\xa9', [0, 2, 2, 4], [True, False, True])
    """
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i, total = 0, size
    cdef cnp.ndarray[cnp.int64_t, ndim=1] off = np.empty(n + 1, dtype=np.int64)
    cdef cnp.ndarray[cnp.uint8_t, ndim=1] present = np.ones(n, dtype=np.uint8)
    cdef object v
    cdef const char* p
    off[0] = 0
    for i in range(n):
        v = seq[i]
        if v is None:
            present[i] = 0
        elif type(v) is str:
            PyUnicode_AsUTF8AndSize(v, &size)
            total += size
        else:
            raise ValueError(f"[{i}] must be a string or None, got {type(v).__name__} {v!r}")
        off[i + 1] = total
    cdef cnp.ndarray[cnp.uint8_t, ndim=1] data = np.empty(total, dtype=np.uint8)
    cdef char* out = <char*>data.data if total else NULL
    for i in range(n):
        v = seq[i]
        if v is not None:
            p = PyUnicode_AsUTF8AndSize(v, &size)
            if size:
                memcpy(out + off[i], p, size)
    return data, off, present.view(np.bool_)


def unpack_strings(object data, object offsets, object present=None):
    """The inverse of :func:`pack_strings`: a list of str (None where ``present`` is False).
    ValueError for offsets outside the buffer or bytes that are not UTF-8.

    Parameters
    ----------
    data : array-like of uint8
        The concatenated UTF-8 bytes.
    offsets : array-like of int64
        ``n + 1`` non-decreasing offsets, from 0 to ``len(data)``; string i is
        ``data[offsets[i]:offsets[i + 1]]``.
    present : array-like of bool, optional
        ``n`` flags; a False entry comes back as None. None (the default): every string is
        present.

    Returns
    -------
    list of (str or None)
        The ``n`` strings.

    Raises
    ------
    ValueError
        Empty ``offsets``, ``present`` of another length, offsets that do not run from 0 to
        ``len(data)`` or decrease, or a range that is not valid UTF-8 (``UnicodeDecodeError``,
        a ValueError).

    Examples
    --------
    >>> unpack_strings(*pack_strings(["ab", None, "é"]))
    ['ab', None, 'é']
    >>> unpack_strings(np.frombuffer(b"abc", dtype=np.uint8), [0, 1, 3])
    ['a', 'bc']
    """
    cdef const unsigned char[::1] buf = np.ascontiguousarray(data, dtype=np.uint8)
    cdef const cnp.int64_t[::1] off = np.ascontiguousarray(offsets, dtype=np.int64)
    cdef Py_ssize_t n = off.shape[0] - 1, i, total = buf.shape[0]
    cdef const unsigned char[::1] pres
    cdef bint has_pres = present is not None
    if n < 0:
        raise ValueError("offsets must not be empty")
    if has_pres:
        pres = np.ascontiguousarray(present, dtype=np.uint8)
        if pres.shape[0] != n:
            raise ValueError(f"present must have length {n}, got {pres.shape[0]}")
    if off[0] != 0 or off[n] != total:
        raise ValueError("offsets must run from 0 to the buffer's length")
    cdef list out = [None] * n
    cdef const char* base = <const char*>&buf[0] if total else <const char*>""
    for i in range(n):
        if off[i + 1] < off[i] or off[i + 1] > total:  # checked before the range is read
            raise ValueError(f"offsets are not non-decreasing within the buffer at {i}")
        if has_pres and not pres[i]:
            continue
        out[i] = PyUnicode_DecodeUTF8(base + off[i], off[i + 1] - off[i], NULL)
    return out


def codes_of(list values, dict table):
    """Codes (int32) of the strings ``values`` in ``table``; -1 for a value not in it.

    Parameters
    ----------
    values : list
        The keys to look up (a list, not any iterable).
    table : dict
        Key -> code; the codes must be integers that fit in int32.

    Returns
    -------
    numpy.ndarray of int32
        Per value, ``table[value]``, or -1 where the value is not a key of ``table``.

    Examples
    --------
    >>> codes_of(["b", "x", "a"], {"a": 0, "b": 1}).tolist()
    [1, -1, 0]
    """
    cdef Py_ssize_t n = PyList_GET_SIZE(values), i
    cdef cnp.ndarray[cnp.int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef PyObject* found
    cdef object v
    for i in range(n):
        v = <object>PyList_GET_ITEM(values, i)
        found = PyDict_GetItem(table, v)
        out[i] = -1 if found == NULL else <cnp.int32_t>(<object>found)
    return out


def strictly_sorted(list values):
    """True when ``values`` are all str and strictly ascending (so unique)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(values), i
    cdef object prev, cur
    if n == 0:
        return True
    prev = <object>PyList_GET_ITEM(values, 0)
    if type(prev) is not str:
        return False
    for i in range(1, n):
        cur = <object>PyList_GET_ITEM(values, i)
        if type(cur) is not str or not (prev < cur):
            return False
        prev = cur
    return True


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)


def untrack_strings(list values):
    """Take ``values`` out of the cycle collector's view and return it: a list that holds only
    str and None (neither can be part of a reference cycle) is never garbage of a cycle, yet a
    collection visits every item of every tracked list it scans. A graph's id and title lists
    hold one string per node, so each collection that scans a new graph (the first ones after
    every write) would touch every string of it, a cache miss each: at 500k nodes, hundreds of
    milliseconds per collection. The caller guarantees the items are str or None and that the
    list is not changed afterwards (a snapshot's lists are read-only by contract).

    Parameters
    ----------
    values : list of str or None
        Only str and None items, never changed afterwards.

    Returns
    -------
    list
        ``values`` itself, untracked.

    Examples
    --------
    >>> import gc
    >>> ids = untrack_strings(["a", "b"])
    >>> gc.is_tracked(ids), ids
    (False, ['a', 'b'])
    """
    PyObject_GC_UnTrack(<void*>values)
    return values


def all_str_or_none(list values):
    """True when every item is a str or None."""
    cdef Py_ssize_t n = PyList_GET_SIZE(values), i
    cdef object v
    for i in range(n):
        v = <object>PyList_GET_ITEM(values, i)
        if v is not None and type(v) is not str:
            return False
    return True


from collections.abc import Mapping as _Mapping
from cpython.object cimport PyObject as _PyObject

cdef class IdIndex:
    """id -> node index of one graph snapshot (the rank of the id in sorted order): a read-only
    mapping whose lookup is a dict lookup and an array read, and which a snapshot derived from
    another one gets in O(n) numpy work instead of O(n) dict updates (a write that inserts an id
    shifts every later index).

    Ids map to stable *keys* in a dict shared by the snapshots derived from one another (a key is
    never reassigned); each snapshot holds its own array key -> node index (-1 = not in it).
    Lookups of non-string or unhashable values find nothing. A new index builds no dict at
    first: its first lookups binary-search the sorted ids (so a process that opens a large
    snapshot to answer one question never pays for the dict), and the dict is built on the 257th
    lookup, or when the index is advanced or listed.

    Parameters
    ----------
    ids : list of str
        The graph's ids in node order (unique).

    Examples
    --------
    >>> ix = IdIndex(["a", "c"])
    >>> ix["c"], ix.get("b"), "a" in ix, len(ix), dict(ix.items())
    (1, None, True, 2, {'a': 0, 'c': 1})
    >>> import numpy as np
    >>> after = ix.advanced(np.array([0, 2], dtype=np.int32), ["a", "b", "c"], [("b", 1)])
    >>> after["b"], after["c"], ix.get("b"), ix["c"]
    (1, 2, None, 1)
    """

    cdef dict _keys
    cdef object _pos_obj
    cdef const int[::1] _pos
    cdef Py_ssize_t _n
    cdef list _ids        # the sorted ids while no dict is built (then None)
    cdef Py_ssize_t _searches

    def __init__(self, list ids):
        if not strictly_sorted(ids):
            raise ValueError("ids must be strictly ascending strings")
        self._keys = None
        self._ids = ids
        self._searches = 0
        self._n = len(ids)

    cdef _init(self, dict keys, object pos, Py_ssize_t n):
        self._keys = keys
        self._pos_obj = pos
        self._pos = pos
        self._n = n
        self._ids = None

    cdef _build(self):
        ids = self._ids
        self._init(dict(zip(ids, range(len(ids)))), np.arange(len(ids), dtype=np.int32), len(ids))

    cdef inline Py_ssize_t _search(self, str x):
        cdef list ids = self._ids
        cdef Py_ssize_t lo = 0, hi = len(ids), mid
        while lo < hi:
            mid = (lo + hi) >> 1
            if <str>ids[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(ids) and <str>ids[lo] == x:
            return lo
        return -1

    cdef inline Py_ssize_t _find(self, object x):
        cdef _PyObject* k
        if type(x) is not str:
            return -1
        if self._keys is None:
            # Binary search until the searches have cost about what building the dict costs
            # (a search ~20 string compares, a build ~one dict insert per id): a store read a few
            # ids per turn never pays the build (231 ms at 500k ids, on whichever read passed
            # the old fixed threshold of 256), and a caller looking many ids up pays at most
            # about twice the cheaper way.
            self._searches += 1
            if self._searches <= 256 or self._searches <= (self._n >> 1):
                return self._search(<str>x)
            self._build()
        k = PyDict_GetItem(self._keys, x)
        if k == NULL:
            return -1
        cdef Py_ssize_t kk = <Py_ssize_t><object>k
        if kk >= self._pos.shape[0]:
            return -1
        return self._pos[kk]

    def __getitem__(self, x):
        cdef Py_ssize_t i = self._find(x)
        if i < 0:
            raise KeyError(x)
        return i

    def get(self, x, default=None):
        """The node index of ``x``, or ``default``.

        Parameters
        ----------
        x : str
            A node id.
        default : object, optional
            What an id not in the graph gives.

        Returns
        -------
        int or object
        """
        cdef Py_ssize_t i = self._find(x)
        return default if i < 0 else i

    def __contains__(self, x):
        return self._find(x) >= 0

    def __len__(self):
        return self._n

    def items(self):
        """The (id, node index) pairs of this graph.

        Returns
        -------
        list of (str, int)
            In no particular order.
        """
        cdef list out = []
        cdef Py_ssize_t kk
        if self._keys is None:
            return list(zip(self._ids, range(self._n)))
        for x, k in self._keys.items():
            kk = <Py_ssize_t>k
            if kk < self._pos.shape[0] and self._pos[kk] >= 0:
                out.append((x, self._pos[kk]))
        return out

    def keys(self):
        """The ids of this graph.

        Returns
        -------
        list of str
            In no particular order.
        """
        return [x for x, _ in self.items()]

    def values(self):
        """The node indices.

        Returns
        -------
        list of int
            In the order of :meth:`keys`.
        """
        return [i for _, i in self.items()]

    def __iter__(self):
        return iter(self.keys())

    def __eq__(self, other):
        if not isinstance(other, _Mapping):
            return NotImplemented
        if len(other) != self._n:
            return False
        for x, i in self.items():
            if other.get(x) != i:
                return False
        return True

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None

    def __reduce__(self):
        return (_id_index_from_items, (self.items(),))

    def __repr__(self):
        return f"IdIndex({self._n} ids)"

    def advanced(self, object remap, list ids, list inserted):
        """The index of a graph derived from this one: ``remap`` (int32, per old node index
        its new one or -1 when deleted), ``ids`` (the new graph's ids in node order, used when
        the shared key table is compacted) and ``inserted`` ((id, new node index) pairs of the
        ids the old graph does not hold). O(keys) numpy work plus O(inserted) dict inserts.

        Parameters
        ----------
        remap : numpy.ndarray of int32
            Old node index -> new one, -1 = deleted.
        ids : list of str
            The new graph's ids in node order.
        inserted : list of (str, int)
            The ids new to this graph, with their node index.

        Returns
        -------
        IdIndex
        """
        cdef Py_ssize_t n = len(ids)
        cdef IdIndex fresh
        if self._keys is None:  # no dict built: the new one searches the new ids (O(1) here)
            fresh = IdIndex.__new__(IdIndex)
            fresh._keys = None
            fresh._ids = ids
            fresh._searches = 0
            fresh._n = n
            return fresh
        cdef dict keys = self._keys
        if len(keys) > 2 * n + 1024:  # mostly ids of other or older snapshots: start afresh
            return IdIndex(ids)
        rm = np.asarray(remap, dtype=np.int32)
        ext = np.append(rm, np.int32(-1))
        old = np.asarray(self._pos_obj)
        # -1 (an id this graph lacks) stays -1: index it with the appended slot
        idx = np.where(old < 0, rm.shape[0], old)
        new_keys = []
        for x, p in inserted:
            k = keys.get(x)
            if k is None:
                k = len(keys)
                keys[x] = k
            new_keys.append((k, p))
        pos = np.full(len(keys), -1, dtype=np.int32)
        pos[:old.shape[0]] = ext[idx]
        for k, p in new_keys:
            pos[k] = p
        cdef IdIndex out = IdIndex.__new__(IdIndex)
        out._init(keys, pos, n)
        return out


def _id_index_from_items(list items):
    cdef IdIndex out = IdIndex.__new__(IdIndex)
    keys = {}
    pos = np.empty(len(items), dtype=np.int32)
    for j, (x, i) in enumerate(items):
        keys[x] = j
        pos[j] = i
    out._init(keys, pos, len(items))
    return out


_Mapping.register(IdIndex)
