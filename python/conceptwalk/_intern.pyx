# cython: language_level=3, boundscheck=False, wraparound=False
"""Interning string ids from large Python iterables (the loop walks Python objects).

``intern_strings`` maps each string to the code of its first occurrence, building the table as
it goes; ``intern_edges`` walks an iterable of edge tuples or dicts in one pass.
"""

import numpy as np
cimport numpy as cnp

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


def intern_strings(object values, dict table, list names):
    """Codes (int64 array) of ``values`` in ``table``, extending ``table``/``names`` with new ones."""
    cdef list seq = values if type(values) is list else list(values)
    cdef Py_ssize_t n = len(seq), i
    cdef cnp.ndarray[cnp.int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = _code(table, names, seq[i])
    return out


def intern_edges(object edges, dict table, list names, dict type_table, list type_names,
                 str default_type):
    """Walk ``edges`` (tuples ``(src, dst[, type])`` or dicts with ``src``, ``dst``, optional
    ``type`` and annotation keys) once.

    Returns ``(src_codes, dst_codes, type_codes, annotations)`` where ``annotations`` maps each
    annotation key present in any dict row to a list aligned with the edges (``None`` when absent).
    Raises ``ValueError`` naming the row number (0-based) of a malformed row.
    """
    cdef list src = [], dst = [], typ = []
    cdef dict ann = {}
    cdef Py_ssize_t row = 0, n
    cdef object e, t, key, val
    for e in edges:
        if type(e) is dict:
            try:
                src.append(_code(table, names, (<dict>e)["src"]))
                dst.append(_code(table, names, (<dict>e)["dst"]))
            except KeyError as exc:
                raise ValueError(f"edges[{row}]: missing key {exc.args[0]!r}") from None
            except TypeError as exc:
                raise ValueError(f"edges[{row}]: {exc}") from None
            t = (<dict>e).get("type")
            try:
                typ.append(_code(type_table, type_names, default_type if t is None else t))
            except TypeError as exc:
                raise ValueError(f"edges[{row}]: type: {exc}") from None
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
            try:
                src.append(_code(table, names, e[0]))
                dst.append(_code(table, names, e[1]))
            except TypeError as exc:
                raise ValueError(f"edges[{row}]: {exc}") from None
            t = e[2] if n == 3 else None
            try:
                typ.append(_code(type_table, type_names, default_type if t is None else t))
            except TypeError as exc:
                raise ValueError(f"edges[{row}]: type: {exc}") from None
            for key in ann:
                (<list>ann[key]).append(None)
        row += 1
    return (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
            np.asarray(typ, dtype=np.int64), ann)


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
