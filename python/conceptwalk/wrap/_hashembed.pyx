# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, autotestdict=False
"""Hot loop of the hashing embedder (``conceptwalk.wrap.embed.HashingEmbedder``).

For each text: normalise (ASCII texts in C here; any other text through the Python normaliser
passed in, whose output this loop then only tokenises), then hash every word token and every
character n-gram of the padded text ``" " + text + " "`` with FNV-1a 64 over its UTF-8 bytes and
a murmur3 ``fmix64`` finaliser, add ``±weight`` (sign from the top bit of the hash) to bucket
``hash % dim`` of a float64 accumulator, and write the L2-normalised row as float32.

Feature hashes, all over UTF-8 bytes, never over Python's salted ``hash``::

    word  "index"          -> fmix64(fnv1a64(b"w" + b"index"))
    n-gram " in" (n = 3)   -> fmix64(fnv1a64(b"c" + b" in"))

N-grams count Unicode code points, not bytes. Every operation is on unsigned 64-bit integers or
exactly representable float64 sums, so the output is the same on every run and platform.
"""

import unicodedata

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeASCII
from libc.math cimport sqrt
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)

cdef uint64_t FNV_OFFSET = 0xcbf29ce484222325ULL
cdef uint64_t FNV_PRIME = 0x100000001b3ULL
cdef uint8_t TAG_WORD = 0x77   # b"w"
cdef uint8_t TAG_CHAR = 0x63   # b"c"

# ASCII normalisation tables: _SEP[b] is 1 for bytes that become a word separator (ASCII
# whitespace, control characters and Unicode punctuation, category P*), _LOWER maps A-Z to a-z.
# Derived from unicodedata with the rule conceptwalk.wrap.embed.normalize_text applies.
cdef uint8_t _SEP[256]
cdef uint8_t _LOWER[256]


def _init_tables():
    cdef int i
    for i in range(256):
        _SEP[i] = 0
        _LOWER[i] = <uint8_t>i
    for i in range(128):
        c = chr(i)
        if c.isspace() or unicodedata.category(c)[0] in "PC":
            _SEP[i] = 1
        _LOWER[i] = <uint8_t>ord(c.lower())


_init_tables()


cdef inline uint64_t _fmix64(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef inline void _add(double* acc, uint64_t dim, uint64_t h, double w) noexcept nogil:
    cdef uint64_t k = _fmix64(h)
    cdef uint64_t b
    if dim & (dim - 1) == 0:
        b = k & (dim - 1)   # same as k % dim for a power of two, without the division
    else:
        b = k % dim
    # branch-free sign (the top bit is a coin flip, a branch on it mispredicts half the time);
    # adding -w equals subtracting w exactly
    acc[b] += w * (1.0 - 2.0 * <double>(k >> 63))


cdef Py_ssize_t _normalize_into(const uint8_t* src, Py_ssize_t n, uint8_t* buf) noexcept nogil:
    """Write ``" " + normalised + " "`` into ``buf`` (room for n + 2 bytes); return its length,
    or 0 when the normalised text is empty."""
    cdef Py_ssize_t i, m = 1
    cdef bint pending = False
    cdef uint8_t b
    buf[0] = 32
    for i in range(n):
        b = src[i]
        if _SEP[b]:
            pending = True
        else:
            if pending and m > 1:
                buf[m] = 32
                m += 1
            pending = False
            buf[m] = _LOWER[b]
            m += 1
    if m == 1:
        return 0
    buf[m] = 32
    return m + 1


cdef void _embed_one(const uint8_t* buf, Py_ssize_t m, Py_ssize_t* cps, double* acc,
                     uint64_t dim, Py_ssize_t lo, Py_ssize_t hi,
                     double word_weight, double char_weight) noexcept nogil:
    """Accumulate the features of the padded normalised text ``buf[:m]`` into ``acc``."""
    cdef Py_ssize_t i, j, k, start, ncp, stop
    cdef uint64_t h
    if word_weight != 0.0:
        start = 1
        for i in range(1, m):
            if buf[i] == 32:
                if i > start:
                    h = (FNV_OFFSET ^ TAG_WORD) * FNV_PRIME
                    for j in range(start, i):
                        h = (h ^ buf[j]) * FNV_PRIME
                    _add(acc, dim, h, word_weight)
                start = i + 1
    if char_weight == 0.0:
        return
    # code point start offsets (UTF-8 continuation bytes are 10xxxxxx)
    ncp = 0
    for i in range(m):
        if (buf[i] & 0xC0) != 0x80:
            cps[ncp] = i
            ncp += 1
    cps[ncp] = m
    for i in range(ncp - lo + 1):
        h = (FNV_OFFSET ^ TAG_CHAR) * FNV_PRIME
        stop = hi if i + hi <= ncp else ncp - i
        for j in range(stop):
            for k in range(cps[i + j], cps[i + j + 1]):
                h = (h ^ buf[k]) * FNV_PRIME
            if j + 1 >= lo:
                _add(acc, dim, h, char_weight)


cdef Py_ssize_t _utf8_views(list texts, object normalize, const char** ptrs, Py_ssize_t* lens,
                            list owners) except -1:
    """Point ``ptrs[i]``/``lens[i]`` at the UTF-8 bytes of ``texts[i]`` (ASCII text as it is,
    other text through ``normalize`` first; the objects that own the bytes go to ``owners``) and
    return the longest length."""
    cdef Py_ssize_t i, size, maxlen = 0
    cdef const char* p
    for i in range(len(texts)):
        t = texts[i]
        if type(t) is not str:
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(t).__name__}")
            t = str(t)
            owners.append(t)
        if PyUnicode_IS_ASCII(t):
            p = PyUnicode_AsUTF8AndSize(t, &size)
        else:
            b = normalize(t).encode("utf-8")
            owners.append(b)
            p = PyBytes_AS_STRING(b)
            size = PyBytes_GET_SIZE(b)
        ptrs[i] = p
        lens[i] = size
        if size > maxlen:
            maxlen = size
    return maxlen


def embed_into(list texts, float[:, ::1] out, object normalize, Py_ssize_t ngram_lo,
               Py_ssize_t ngram_hi, double word_weight, double char_weight):
    """Fill ``out`` (shape ``(len(texts), dim)``, zeroed or not) with the embeddings of ``texts``.

    ASCII strings are normalised here; any other string goes through ``normalize`` first (its
    result must be a normalised ``str``). Arguments are trusted (the wrapper validates them).
    """
    cdef Py_ssize_t n = len(texts), dim = out.shape[1], i, d, size, m, maxlen = 0
    cdef list owners = []
    cdef object t, b
    cdef const char* p
    cdef const char** ptrs = NULL
    cdef Py_ssize_t* lens = NULL
    cdef uint8_t* buf = NULL
    cdef Py_ssize_t* cps = NULL
    cdef double* acc = NULL
    cdef double s, inv
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} rows for {n} texts")
    if n == 0:
        return
    try:
        ptrs = <const char**>malloc(n * sizeof(char*))
        lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        maxlen = _utf8_views(texts, normalize, ptrs, lens, owners)
        buf = <uint8_t*>malloc((maxlen + 2) * sizeof(uint8_t))
        cps = <Py_ssize_t*>malloc((maxlen + 3) * sizeof(Py_ssize_t))
        acc = <double*>malloc(dim * sizeof(double))
        if buf == NULL or cps == NULL or acc == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                memset(acc, 0, dim * sizeof(double))
                m = _normalize_into(<const uint8_t*>ptrs[i], lens[i], buf)
                if m > 0:
                    _embed_one(buf, m, cps, acc, <uint64_t>dim, ngram_lo, ngram_hi, word_weight, char_weight)
                s = 0.0
                for d in range(dim):
                    s += acc[d] * acc[d]
                if s > 0.0:
                    inv = 1.0 / sqrt(s)
                    for d in range(dim):
                        out[i, d] = <float>(acc[d] * inv)
                else:
                    for d in range(dim):
                        out[i, d] = 0.0
    finally:
        free(ptrs)
        free(lens)
        free(buf)
        free(cps)
        free(acc)



def embed_csr(list texts, Py_ssize_t dim, object normalize, Py_ssize_t ngram_lo,
              Py_ssize_t ngram_hi, double word_weight, double char_weight):
    """The rows :func:`embed_into` writes, as CSR ``(indptr int64, indices int32, values
    float32)``: each row's nonzero float32 entries, dimensions ascending, equal bit for bit to
    the dense row's (the same accumulation and the same float32 rounding). Never makes the
    dense matrix. Arguments are trusted (the wrapper validates them)."""
    import numpy as np
    cdef Py_ssize_t n = len(texts), i, d, size, m, maxlen = 0, nnz = 0, cap = 0
    cdef list owners = []
    cdef object t, b
    cdef const char* p
    cdef const char** ptrs = NULL
    cdef Py_ssize_t* lens = NULL
    cdef uint8_t* buf = NULL
    cdef Py_ssize_t* cps = NULL
    cdef double* acc = NULL
    cdef int* cols = NULL
    cdef float* vals = NULL
    cdef void* grown
    cdef double s, inv
    cdef float v
    cdef int[::1] iv
    cdef float[::1] fv
    indptr = np.zeros(n + 1, dtype=np.int64)
    cdef long long[::1] ip = indptr
    if n == 0:
        return indptr, np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
    try:
        ptrs = <const char**>malloc(n * sizeof(char*))
        lens = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        maxlen = _utf8_views(texts, normalize, ptrs, lens, owners)
        buf = <uint8_t*>malloc((maxlen + 2) * sizeof(uint8_t))
        cps = <Py_ssize_t*>malloc((maxlen + 3) * sizeof(Py_ssize_t))
        acc = <double*>malloc(dim * sizeof(double))
        cap = 16 * n + dim
        cols = <int*>malloc(cap * sizeof(int))
        vals = <float*>malloc(cap * sizeof(float))
        if buf == NULL or cps == NULL or acc == NULL or cols == NULL or vals == NULL:
            raise MemoryError()
        with nogil:
            for i in range(n):
                memset(acc, 0, dim * sizeof(double))
                m = _normalize_into(<const uint8_t*>ptrs[i], lens[i], buf)
                if m > 0:
                    _embed_one(buf, m, cps, acc, <uint64_t>dim, ngram_lo, ngram_hi, word_weight, char_weight)
                s = 0.0
                for d in range(dim):
                    s += acc[d] * acc[d]
                if s > 0.0:
                    if nnz + dim > cap:
                        cap = 2 * cap
                        grown = realloc(cols, cap * sizeof(int))
                        if grown == NULL:
                            with gil:
                                raise MemoryError()
                        cols = <int*>grown
                        grown = realloc(vals, cap * sizeof(float))
                        if grown == NULL:
                            with gil:
                                raise MemoryError()
                        vals = <float*>grown
                    inv = 1.0 / sqrt(s)
                    for d in range(dim):
                        v = <float>(acc[d] * inv)
                        if v != 0.0:
                            cols[nnz] = <int>d
                            vals[nnz] = v
                            nnz += 1
                ip[i + 1] = nnz
        indices = np.empty(nnz, dtype=np.int32)
        values = np.empty(nnz, dtype=np.float32)
        if nnz:
            iv = indices
            fv = values
            memcpy(&iv[0], cols, nnz * sizeof(int))
            memcpy(&fv[0], vals, nnz * sizeof(float))
        return indptr, indices, values
    finally:
        free(ptrs)
        free(lens)
        free(buf)
        free(cps)
        free(acc)
        free(cols)
        free(vals)


def normalize_all(list texts, object normalize):
    """``[normalize(t) for t in texts]`` where ``normalize`` is
    :func:`conceptwalk.wrap.embed.normalize_text`: ASCII strings are normalised here in C (the
    rule ``normalize_text`` applies to them, pinned by a test over every ASCII character), any
    other item goes through ``normalize`` (which also raises for a non-string)."""
    cdef Py_ssize_t n = len(texts), i, size, m, cap = 0
    cdef const char* p
    cdef uint8_t* buf = NULL
    cdef void* grown
    cdef list out = [None] * n
    try:
        for i in range(n):
            t = texts[i]
            if type(t) is not str or not PyUnicode_IS_ASCII(t):
                out[i] = normalize(t)
                continue
            p = PyUnicode_AsUTF8AndSize(t, &size)
            if size + 2 > cap:
                cap = 2 * (size + 2)
                grown = realloc(buf, cap * sizeof(uint8_t))
                if grown == NULL:
                    raise MemoryError()
                buf = <uint8_t*>grown
            m = _normalize_into(<const uint8_t*>p, size, buf)
            out[i] = "" if m == 0 else PyUnicode_DecodeASCII(<const char*>buf + 1, m - 2, NULL)
    finally:
        free(buf)
    return out


def normalize_ascii(str text):
    """The C normaliser applied to an ASCII ``text`` (for tests): lowercase, separators -> one
    space, trimmed. Non-ASCII text raises ``ValueError``."""
    cdef Py_ssize_t size, m
    cdef const char* p
    if not PyUnicode_IS_ASCII(text):
        raise ValueError("text is not ASCII")
    p = PyUnicode_AsUTF8AndSize(text, &size)
    cdef bytearray out = bytearray(size + 2)
    cdef uint8_t* buf = <uint8_t*><char*>out
    m = _normalize_into(<const uint8_t*>p, size, buf)
    if m == 0:
        return ""
    return bytes(out[1:m - 1]).decode("ascii")
