"""The store's graph snapshot: built from SQLite at the speed of the core, persisted beside the
store as a memory-mapped file of named arrays, and brought forward from the store's change log
at the cost of the change.

Three pieces, used by :meth:`conceptwalk.kb.KnowledgeBase.graph`:

- :func:`read_graph` builds a :class:`~conceptwalk.graph.LinkGraph` from the store without a
  Python object per edge row: each chunk of rows comes back from SQLite as one string per column
  (``group_concat``), which is split and interned in compiled code; categorical columns are
  dictionary-encoded (codes plus sorted names) before they reach ``LinkGraph.from_arrays``.
- :func:`write_arrays` / :func:`read_arrays` store a set of **named numpy arrays** in one file
  (format :data:`FILE_FORMAT`): a fixed header, a JSON directory (names, dtypes, shapes, offsets,
  plus free metadata such as the store's uuid and version), and the arrays, each 64-byte aligned,
  memory-mapped on read. Written atomically (temporary file, fsync, rename, fsync of the
  directory); a file whose header, directory checksum or size does not match is refused. Any
  structure can add arrays under its own prefix (the graph uses ``graph.``, its self-loop side
  table ``loops.``); a reader ignores names it does not know.
- :class:`GraphSnapshot` is the graph plus what it needs to follow writes: the change-log
  sequence number it reflects and the store's self-loop edges (which the graph drops but whose
  type and annotation names it keeps). :meth:`GraphSnapshot.advance` re-reads only the nodes and
  edges named by the change log since that number and rebuilds the arrays from the previous
  ones — bit-identical to :func:`read_graph` on the same store, which the property tests check.
"""

from __future__ import annotations

import bisect
import json
import mmap
import os
import stat
import struct
import tempfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConceptwalkError, InputError
from ..graph import EDGE_ANNOTATION_KEYS, LinkGraph
from ..graph.linkgraph import (
    IdIndex,
    PackedStrings,
    codes_of,
    csr_patched,
    insert_sorted,
    untrack_strings,
    with_default_node_type,
)

try:  # ISA-L's CRC-32 (the same polynomial and values as zlib's, ~20x faster: a 1.8 GB file's check
    # took 2.2 s with zlib); zlib's where the wheel is not installed (see pyproject's marker)
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - platforms without an isal wheel
    _crc32 = zlib.crc32

__all__ = [
    "CHANGELOG_SCHEMA",
    "CHANGE_EDGE",
    "CHANGE_NODE",
    "CHANGE_RESET",
    "CHANGE_TEXT",
    "CHANGE_VECTOR",
    "CHANGE_ALIAS",
    "FILE_FORMAT",
    "GraphSnapshot",
    "SnapshotError",
    "read_arrays",
    "read_graph",
    "release_pages",
    "write_arrays",
]

#: Version of the snapshot file layout (header + JSON directory + aligned arrays).
FILE_FORMAT = 2
_MAGIC = b"CWSNAP\x00\x01"
_HEAD = struct.Struct("<8sIIQQ")  # magic, format, directory crc32, directory length, file length
_ALIGN = 64
_ROWS = 65536  # rows per chunk read from SQLite
_SEP = "\x00"
_CATEGORICAL = tuple(k for k in EDGE_ANNOTATION_KEYS if k != "extraction_confidence")
#: Change-log kinds (``changes.kind``): the whole store changed (a bulk load), one node (``a`` =
#: id), one edge (``a, b, c`` = src, dst, type), the body of node ``a`` (only text reads it: the
#: graph ignores it), the stored vector of node ``a`` under model ``b`` (schema 4; the graph and
#: the text ignore it), the aliases (schema 4; one row per write transaction that changed any,
#: naming none: only so that an alias write has a position and a nonce; the graph, the text and
#: :meth:`changed_nodes <conceptwalk.kb.store.KnowledgeBase.changed_nodes>` ignore it). A row
#: names what changed, not how: the current row is read back.
CHANGE_RESET, CHANGE_NODE, CHANGE_EDGE, CHANGE_TEXT, CHANGE_VECTOR, CHANGE_ALIAS = 0, 1, 2, 3, 4, 5


class SnapshotError(ConceptwalkError):
    """A snapshot file that cannot be used (damaged, foreign, another format)."""


# ---------------------------------------------------------------------- the file of named arrays
def _crc(buf: Any) -> int:
    """CRC-32 (zlib's) of a buffer, in slices so that a mapped file is read once at memory speed."""
    mv = memoryview(buf).cast("B")
    crc = 0
    for i in range(0, len(mv), 1 << 26):
        crc = _crc32(mv[i : i + (1 << 26)], crc)
    return crc


_SLICE = 1 << 26


def _crc_mapped(mm: mmap.mmap, start: int, nbytes: int) -> int:
    """CRC-32 of ``nbytes`` of the mapped file from ``start``, in 64 MiB slices, each slice's pages
    handed back to the kernel once read (``MADV_DONTNEED``): checking a file does not leave every
    page of it resident in this process. The mapping is a read-only shared one, so nothing is
    lost; an array read later faults in the pages it uses from the page cache (or the file)."""
    mv = memoryview(mm)
    crc = 0
    page = mmap.PAGESIZE
    release = getattr(mm, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") and mv.readonly else None
    end = start + nbytes
    for i in range(start, end, _SLICE):
        j = min(i + _SLICE, end)
        crc = _crc32(mv[i:j], crc)
        if release is not None:
            lo = i - i % page
            try:
                release(mmap.MADV_DONTNEED, lo, j - lo)
            except (OSError, ValueError):  # pragma: no cover - a kernel without it: pages stay
                release = None
    mv.release()
    return crc


def release_pages(arrays: Iterable[np.ndarray[Any, Any]]) -> int:
    """Hand the pages of arrays mapped by :func:`read_arrays` back to the kernel once they have
    been read through (checked, validated, copied): this process stops holding them resident,
    and a later read faults in from the page cache only what it touches. Arrays that are not
    views of a read-only mapping are skipped (a writable one, e.g. ``np.memmap(mode="c")``, may
    be private: its written pages would be lost). Nothing is lost: the mapping is read-only and
    shared, so the pages' contents are the file's.

    Parameters
    ----------
    arrays : iterable of numpy.ndarray
        Arrays as :func:`read_arrays` returned them (others are ignored).

    Returns
    -------
    int
        Bytes of mapping released (page-rounded).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.snap")
    >>> write_arrays(p, {"a": np.arange(5000, dtype=np.int64)}, {})
    >>> _, arrs = read_arrays(p)
    >>> release_pages(arrs.values()) >= 40000, int(arrs["a"].sum())  # still readable
    (True, 12497500)
    >>> release_pages([np.zeros(3)])  # not a mapped array
    0
    """
    if not hasattr(mmap, "MADV_DONTNEED"):  # pragma: no cover - not Linux/BSD
        return 0
    page = mmap.PAGESIZE
    done = 0
    for a in arrays:
        base: Any = a
        while isinstance(base, (np.ndarray, memoryview)):
            base = base.base if isinstance(base, np.ndarray) else base.obj
        if not isinstance(base, mmap.mmap) or base.closed or a.nbytes == 0:
            continue
        with memoryview(base) as view:
            if not view.readonly:  # a writable map may be private (copy-on-write, anonymous):
                continue  # dropping its pages would lose what was written to them
        start = a.__array_interface__["data"][0] - np.frombuffer(base, np.uint8, count=1).__array_interface__["data"][0]
        lo = start - start % page
        hi = min(len(base), -(-(start + a.nbytes) // page) * page)
        try:
            base.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (OSError, ValueError):  # pragma: no cover
            continue
        done += hi - lo
    return done


def write_arrays(
    path: str, arrays: Mapping[str, np.ndarray[Any, Any]], meta: Mapping[str, Any], mode: int | None = None
) -> None:
    """Write ``arrays`` (name -> array) and the JSON-serialisable ``meta`` to ``path``
    atomically: a temporary file in the same directory, fsync, rename over ``path``, fsync of
    the directory. A crash at any point leaves either the old file or the new one. Each array's
    CRC-32 is recorded in the directory (and the directory's in the header), so that
    :func:`read_arrays` verifies every byte it returns.

    Parameters
    ----------
    path : str
        The file to write (replaced when it exists); the temporary file is created in its
        directory, which must be writable.
    arrays : mapping of str to numpy.ndarray
        Name -> array, of any shape and numeric or boolean dtype (no Python objects); each is
        stored C-contiguous and little-endian, 64-byte aligned, in the mapping's order.
    meta : mapping of str to object
        Free metadata, stored as JSON in the file's directory (so JSON-serialisable values);
        :func:`read_arrays` returns it as a dict.
    mode : int, optional
        The file's permission bits (e.g. those of the store it belongs to); default 0o600.

    Raises
    ------
    InputError
        An array of Python objects (``dtype=object``); nothing is written.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> write_arrays(os.path.join(d, "x.snap"), {"a": np.arange(3)}, {"who": "doc"}, mode=0o644)
    >>> meta, arrs = read_arrays(os.path.join(d, "x.snap"))
    >>> meta["who"], arrs["a"].tolist(), oct(os.stat(os.path.join(d, "x.snap")).st_mode & 0o777)
    ('doc', [0, 1, 2], '0o644')
    """
    entries: dict[str, dict[str, Any]] = {}
    prepared: list[tuple[int, np.ndarray[Any, Any]]] = []
    offset = 0
    for name, arr in arrays.items():
        a = np.ascontiguousarray(arr)
        if a.dtype.hasobject:
            raise InputError(f"write_arrays: {name!r} holds Python objects")
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        offset = -(-offset // _ALIGN) * _ALIGN
        entries[name] = {
            "dtype": a.dtype.str,
            "shape": list(a.shape),
            "offset": offset,
            "crc": _crc(a.reshape(-1).view(np.uint8)) if a.nbytes else 0,
        }
        prepared.append((offset, a))
        offset += a.nbytes
    directory = json.dumps({"meta": dict(meta), "arrays": entries}, sort_keys=True).encode()
    data_start = -(-(_HEAD.size + len(directory)) // _ALIGN) * _ALIGN
    total = data_start + offset
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        if mode is not None:
            try:
                os.fchmod(fd, mode & 0o777)
            except (OSError, AttributeError):  # pragma: no cover - e.g. Windows
                pass
        with os.fdopen(fd, "wb") as fh:
            fh.write(_HEAD.pack(_MAGIC, FILE_FORMAT, _crc32(directory), len(directory), total))
            fh.write(directory)
            pos = _HEAD.size + len(directory)
            for off, a in prepared:
                start = data_start + off
                fh.write(b"\0" * (start - pos))
                a.reshape(-1).view(np.uint8).tofile(fh)
                pos = start + a.nbytes
            fh.write(b"\0" * (total - pos))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        dfd = os.open(d, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows cannot open directories
        return
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dfd)


def _open_regular(path: str) -> int:
    """A read-only descriptor of ``path`` when it is a regular file (not a symlink, FIFO,
    device or directory: refused without blocking); FileNotFoundError when nothing is there."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP: a symlink; ENXIO: a FIFO nobody writes; EACCES ...
        raise SnapshotError(f"{path!r} cannot be opened as a snapshot file ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SnapshotError(f"{path!r} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_arrays(path: str) -> tuple[dict[str, Any], dict[str, np.ndarray[Any, Any]]]:
    """Map the file written by :func:`write_arrays`: ``(meta, name -> read-only array view)``.
    The arrays share the file's pages (a ``mmap``) until they are dropped. Every array's bytes
    are checked against the CRC-32 its directory entry records (and the directory against the
    header's) before it is returned; only a regular file is opened (a symlink, FIFO or device
    at ``path`` is refused without blocking).

    Parameters
    ----------
    path : str
        A file written by :func:`write_arrays`.

    Returns
    -------
    meta : dict
        The ``meta`` mapping the file was written with (decoded from JSON).
    arrays : dict of str to numpy.ndarray
        Name -> read-only array with the dtype and shape it was written with, in the file's
        order: a view of the mapped file (an empty array: a fresh read-only zero-size array).

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    SnapshotError
        Not a regular file, not a snapshot file of this format, a damaged directory, an array
        whose bytes do not match its checksum, or a file whose length does not match its header
        (e.g. truncated).

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.snap")
    >>> write_arrays(p, {"ids": np.array([3, 1], dtype=np.int32), "none": np.zeros(0)}, {"v": 2})
    >>> meta, arrs = read_arrays(p)
    >>> meta, arrs["ids"].dtype.name, arrs["ids"].tolist(), arrs["ids"].flags.writeable, arrs["none"].shape
    ({'v': 2}, 'int32', [3, 1], False, (0,))
    >>> with open(p, "r+b") as fh:
    ...     _ = fh.seek(os.path.getsize(p) - 64)
    ...     _ = fh.write(b"\\x07")
    >>> read_arrays(p)
    Traceback (most recent call last):
    ...
    conceptwalk.kb.snapshot.SnapshotError: ...: array 'ids' does not match its checksum
    >>> with open(p, "r+b") as fh:
    ...     _ = fh.truncate(os.path.getsize(p) - 1)
    >>> read_arrays(p)
    Traceback (most recent call last):
    ...
    conceptwalk.kb.snapshot.SnapshotError: ... is truncated or damaged (... bytes, header says ...)
    """
    fd = _open_regular(path)
    with os.fdopen(fd, "rb") as fh:
        head = fh.read(_HEAD.size)
        if len(head) < _HEAD.size:
            raise SnapshotError(f"{path!r} is not a snapshot file (too short)")
        magic, fmt, crc, dlen, total = _HEAD.unpack(head)
        if magic != _MAGIC:
            raise SnapshotError(f"{path!r} is not a snapshot file")
        if fmt != FILE_FORMAT:
            raise SnapshotError(f"{path!r} has snapshot format {fmt}, this conceptwalk reads {FILE_FORMAT}")
        size = os.fstat(fh.fileno()).st_size
        if size != total or dlen > total:
            raise SnapshotError(f"{path!r} is truncated or damaged ({size} bytes, header says {total})")
        directory = fh.read(dlen)
        if len(directory) != dlen or _crc32(directory) != crc:
            raise SnapshotError(f"{path!r}: the directory is damaged")
        try:
            doc = json.loads(directory)
            entries = doc["arrays"]
            meta = doc["meta"]
            if not isinstance(entries, dict) or not isinstance(meta, dict):
                raise TypeError("not a mapping")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            raise SnapshotError(f"{path!r}: the directory is damaged ({exc})") from None
        data_start = -(-(_HEAD.size + dlen) // _ALIGN) * _ALIGN
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if total else None
    out: dict[str, np.ndarray[Any, Any]] = {}
    for name, e in entries.items():
        try:
            dt = np.dtype(e["dtype"])
            shape = tuple(int(x) for x in e["shape"])
            start = data_start + int(e["offset"])
            want = e["crc"]
            if dt.hasobject or dt.itemsize == 0 or any(x < 0 for x in shape) or not isinstance(want, int):
                raise ValueError("bad dtype, shape or checksum")
            count = 1
            for x in shape:
                count *= x
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise SnapshotError(f"{path!r}: bad directory entry {name!r} ({exc})") from None
        if start < data_start or start + count * dt.itemsize > total:
            raise SnapshotError(f"{path!r}: array {name!r} lies outside the file")
        if count == 0 or mm is None:
            if want != 0:
                raise SnapshotError(f"{path!r}: array {name!r} does not match its checksum")
            out[name] = np.zeros(shape, dtype=dt)
            out[name].setflags(write=False)
            continue
        nbytes = count * dt.itemsize
        if _crc_mapped(mm, start, nbytes) != want:
            raise SnapshotError(f"{path!r}: array {name!r} does not match its checksum")
        try:
            out[name] = np.frombuffer(mm, dtype=dt, count=count, offset=start).reshape(shape)
        except (ValueError, TypeError) as exc:
            raise SnapshotError(f"{path!r}: array {name!r} cannot be mapped ({exc})") from None
    return meta, out


# ---------------------------------------------------------------------- reading the store
def _float_text_exact(conn: Any) -> bool:
    """Whether this SQLite's ``printf('%!.17g')`` round-trips doubles (it does where long double
    is wider than double); otherwise confidences are read per row."""
    probes = [0.1, 1 / 3, 2 / 3, 0.7, 5e-324, 0.30000000000000004, 0.9999999999999999]
    row = conn.execute("SELECT " + ", ".join("printf('%!.17g', ?)" for _ in probes), probes).fetchone()
    try:
        return all(float(s) == p for s, p in zip(row, probes))
    except (TypeError, ValueError):  # pragma: no cover
        return False


def _split(text: str | None, count: int) -> list[str] | None:
    """One chunk's column, split; None when a value held the separator (then read per row)."""
    if count == 0:
        return []
    if text is None:
        return None
    parts = text.split(_SEP)
    return parts if len(parts) == count else None


def _dict_encode(parts: list[str], prefixed: bool) -> tuple[npt.NDArray[np.int32], list[str]]:
    """Codes into first-seen names. With ``prefixed``, '' is absent (-1) and every present value
    carries a one-character prefix, stripped from the names."""
    table: dict[str, int] = {}
    for p in dict.fromkeys(parts):
        table[p] = len(table)
    codes = codes_of(parts, table)
    names = list(table)
    if prefixed:
        if "" in table:
            empty = table[""]
            lut = np.arange(len(names), dtype=np.int32)
            lut[empty] = -1
            lut[empty + 1 :] -= 1
            codes = lut[codes]
            del names[empty]
        names = [x[1:] for x in names]
    return codes, names


def _sorted_encoding(
    codes_list: list[npt.NDArray[np.int32]], names_list: list[list[str]]
) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """Chunks of (codes, names) merged into one column of codes into sorted, used names."""
    allnames = sorted({x for names in names_list for x in names})
    index = {x: i for i, x in enumerate(allnames)}
    out = []
    for codes, names in zip(codes_list, names_list):
        lut = np.array([index[x] for x in names] + [-1], dtype=np.int32)
        out.append(lut[codes])
    col = np.concatenate(out) if out else np.zeros(0, dtype=np.int32)
    return _prune(col, tuple(allnames))


def _prune(codes: npt.NDArray[np.int32], names: Sequence[str]) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """Drop names no code uses (keeping the order), so the names are exactly the values present."""
    if not len(names):
        return codes.astype(np.int32, copy=False), ()
    used = np.bincount(codes + 1, minlength=len(names) + 1)[1:] > 0
    if used.all():
        return codes.astype(np.int32, copy=False), tuple(names)
    lut = np.append(np.cumsum(used) - 1, -1).astype(np.int32)
    return lut[codes], tuple(x for x, u in zip(names, used.tolist()) if u)


def _scopes_encode(texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], tuple[str, ...]]:
    """Per-node JSON scope lists (prefixed as in :func:`_dict_encode`) as (ptr, codes, names):
    each distinct JSON text is parsed once."""
    dcodes, dtexts = _dict_encode(texts, prefixed=True)
    lists = [json.loads(t) for t in dtexts]
    return _ragged(dcodes, lists)


def _ragged(
    dcodes: npt.NDArray[np.int32], lists: list[list[str]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], tuple[str, ...]]:
    """Nodes pointing (dcodes, -1 = none) at distinct scope lists -> (ptr, codes, sorted names)."""
    names = sorted({s for lst in lists for s in lst})
    index = {s: i for i, s in enumerate(names)}
    flat = np.array([index[s] for lst in lists for s in lst], dtype=np.int32)
    dlen = np.array([len(lst) for lst in lists] + [0], dtype=np.int64)
    dstart = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(dlen[:-1], out=dstart[1:])
    lengths = dlen[dcodes]  # -1 -> the trailing 0
    ptr = np.zeros(dcodes.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    total = int(ptr[-1])
    if total:
        gather = np.repeat(dstart[dcodes] - ptr[:-1], lengths) + np.arange(total, dtype=np.int64)
        codes = flat[gather]
    else:
        codes = np.zeros(0, dtype=np.int32)
    codes, pnames = _prune(codes, names)
    return ptr, codes, pnames


@dataclass
class Columns:
    """The store as the input columns of ``LinkGraph.from_arrays``: ids sorted, every
    categorical column dictionary-encoded into sorted names of the values present."""

    ids: list[str]
    titles: list[str | None]
    node_types: tuple[npt.NDArray[np.int32], tuple[str, ...]]
    lifecycle: tuple[npt.NDArray[np.int32], tuple[str, ...]]
    scopes: tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], tuple[str, ...]]
    src: npt.NDArray[np.int32]
    dst: npt.NDArray[np.int32]
    etype: tuple[npt.NDArray[np.int32], tuple[str, ...]]
    ann: dict[str, Any] = field(default_factory=dict)

    def build(self) -> LinkGraph:
        return LinkGraph.from_arrays(
            self.ids,
            self.src,
            self.dst,
            self.etype,
            node_types=self.node_types,
            titles=self.titles,
            scopes=self.scopes,
            lifecycle=self.lifecycle,
            edge_annotations=self.ann,
        )


def read_columns(conn: Any) -> Columns:
    """Read every node and edge of the store (inside the caller's read transaction)."""
    ids: list[str] = []
    titles: list[str | None] = []
    t_codes: list[npt.NDArray[np.int32]] = []
    t_names: list[list[str]] = []
    l_codes: list[npt.NDArray[np.int32]] = []
    l_names: list[list[str]] = []
    scope_texts: list[str] = []
    last: str | None = None
    q = (
        "SELECT group_concat(id, char(0)), group_concat(ifnull('.' || type, ''), char(0)), "
        "group_concat(ifnull('.' || title, ''), char(0)), group_concat(ifnull('.' || scopes, ''), char(0)), "
        "group_concat(ifnull('.' || lifecycle, ''), char(0)), count(*), max(id) "
        "FROM (SELECT id, type, title, scopes, lifecycle FROM nodes WHERE ?1 IS NULL OR id > ?1 "
        "ORDER BY id LIMIT ?2)"
    )
    while True:
        r = conn.execute(q, (last, _ROWS)).fetchone()
        count = int(r[5])
        if count == 0:
            break
        split = [_split(r[i], count) for i in range(5)]
        cols: list[list[str]]
        if any(c is None for c in split):  # a value holds NUL: this chunk row by row
            rows = conn.execute(
                "SELECT id, type, title, scopes, lifecycle FROM nodes WHERE ?1 IS NULL OR id > ?1 ORDER BY id LIMIT ?2",
                (last, _ROWS),
            ).fetchall()
            cols = [[r_[0] for r_ in rows]] + [
                ["" if r_[i] is None else "." + r_[i] for r_ in rows] for i in range(1, 5)
            ]
        else:
            cols = [c for c in split if c is not None]
        ids.extend(cols[0])
        titles.extend([t[1:] if t else None for t in cols[2]])
        c, nm = _dict_encode(cols[1], True)
        t_codes.append(c)
        t_names.append(nm)
        c, nm = _dict_encode(cols[4], True)
        l_codes.append(c)
        l_names.append(nm)
        scope_texts.extend(cols[3])
        last = r[6]
        if count < _ROWS:
            break
    if not ids:
        raise InputError("the knowledge base has no nodes: nothing to build a graph from")
    table = dict(zip(ids, range(len(ids))))
    exact = _float_text_exact(conn)
    conf_expr = (
        "CASE WHEN extraction_confidence IS NULL THEN '' ELSE printf('%!.17g', extraction_confidence) END"
        if exact
        else "''"
    )
    cat_expr = "||char(0)||".join(f"ifnull('.' || {k}, '')" for k in _CATEGORICAL)
    q = (
        "SELECT group_concat(src, char(0)), group_concat(dst, char(0)), group_concat(type, char(0)), "
        f"group_concat({cat_expr}, char(0)), group_concat({conf_expr}, char(0)), count(*) "
        "FROM edges WHERE rowid BETWEEN ?1 AND ?2"
    )
    slow = (
        "SELECT src, dst, type, " + ", ".join(_CATEGORICAL) + ", extraction_confidence FROM edges "
        "WHERE rowid BETWEEN ?1 AND ?2 ORDER BY rowid"
    )
    srcs: list[npt.NDArray[np.int32]] = []
    dsts: list[npt.NDArray[np.int32]] = []
    ty_c: list[npt.NDArray[np.int32]] = []
    ty_n: list[list[str]] = []
    an_c: dict[str, list[npt.NDArray[np.int32]]] = {k: [] for k in _CATEGORICAL}
    an_n: dict[str, list[list[str]]] = {k: [] for k in _CATEGORICAL}
    conf: list[npt.NDArray[np.float64]] = []
    ncat = len(_CATEGORICAL)
    lo_hi = conn.execute("SELECT min(rowid), max(rowid) FROM edges").fetchone()
    lo = 0 if lo_hi[0] is None else int(lo_hi[0])
    hi = -1 if lo_hi[1] is None else int(lo_hi[1])
    while lo <= hi:
        r = conn.execute(q, (lo, lo + _ROWS - 1)).fetchone()
        count = int(r[-1])
        if count == 0:  # a gap in the rowids (deleted edges): jump to the next row
            nxt = conn.execute("SELECT min(rowid) FROM edges WHERE rowid >= ?", (lo,)).fetchone()[0]
            if nxt is None:
                break
            lo = int(nxt)
            continue
        split = [_split(r[i], count) for i in range(3)]
        cats = _split(r[3], count * ncat) if ncat else []
        confs_t = _split(r[4], count)
        if any(c is None for c in split) or cats is None or confs_t is None or not exact:
            rows = conn.execute(slow, (lo, lo + _ROWS - 1)).fetchall()
            cols = [[x[0] for x in rows], [x[1] for x in rows], [x[2] for x in rows]]
            catcols = [["" if x[3 + i] is None else "." + x[3 + i] for x in rows] for i in range(ncat)]
            confs = np.array([np.nan if x[-1] is None else float(x[-1]) for x in rows], dtype=np.float64)
        else:
            cols = [c for c in split if c is not None]
            catcols = [cats[i::ncat] for i in range(ncat)]
            confs = np.array([float(t) if t else np.nan for t in confs_t], dtype=np.float64)
        lo += _ROWS
        if not cols[0]:
            continue
        s = codes_of(cols[0], table)
        d = codes_of(cols[1], table)
        if (s < 0).any() or (d < 0).any():  # pragma: no cover - endpoints are created as nodes
            raise ConceptwalkError("the store is inconsistent: an edge endpoint is not a node")
        srcs.append(s)
        dsts.append(d)
        c, nm = _dict_encode(cols[2], False)
        ty_c.append(c)
        ty_n.append(nm)
        for i, k in enumerate(_CATEGORICAL):
            c, nm = _dict_encode(catcols[i], True)
            an_c[k].append(c)
            an_n[k].append(nm)
        conf.append(confs)
    src = _cat(srcs, np.int32)
    ann: dict[str, Any] = {k: _sorted_encoding(an_c[k], an_n[k]) for k in _CATEGORICAL}
    ann["extraction_confidence"] = _cat(conf, np.float64)
    return Columns(
        ids=ids,
        titles=titles,
        node_types=_sorted_encoding(t_codes, t_names),
        lifecycle=_sorted_encoding(l_codes, l_names),
        scopes=_scopes_encode(scope_texts),
        src=src,
        dst=_cat(dsts, np.int32),
        etype=_sorted_encoding(ty_c, ty_n),
        ann=ann,
    )


def _cat(parts: list[np.ndarray[Any, Any]], dtype: Any) -> np.ndarray[Any, Any]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def read_graph(conn: Any, annotations: bool = True) -> LinkGraph:
    """Build the graph of the store read through ``conn`` (inside one read transaction).

    Parameters
    ----------
    conn : sqlite3.Connection
        A connection to a conceptwalk knowledge base (its ``nodes`` and ``edges`` tables), e.g.
        :attr:`KnowledgeBase.conn <conceptwalk.kb.KnowledgeBase.conn>`; only read.
    annotations : bool
        Keep the edge annotation columns (the default); False returns the lighter
        :meth:`LinkGraph.without_annotations <conceptwalk.graph.LinkGraph.without_annotations>`
        projection (they are read either way).

    Returns
    -------
    LinkGraph
        Every node and edge of the store, equal to ``LinkGraph.from_edges`` over its rows.

    Raises
    ------
    InputError
        The store holds no nodes.

    Examples
    --------
    >>> from conceptwalk.kb import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_edges([{"src": "a", "dst": "b", "type": "CITES", "authority": "primary"}])
    >>> g = read_graph(kb.conn)
    >>> g.ids, g.edge_type_names, g.edge_annotation(0, "authority")
    (['a', 'b'], ('CITES',), 'primary')
    >>> read_graph(kb.conn, annotations=False).edge_annotations
    {}
    """
    g = read_columns(conn).build()
    return g if annotations else g.without_annotations()


# ---------------------------------------------------------------------- following the change log
_NODE_COLS = "id, type, title, scopes, lifecycle"

_NODE_DIFF = " OR ".join(f"old.{k} IS NOT new.{k}" for k in ("id", "type", "title", "scopes", "lifecycle"))
_EDGE_DIFF = " OR ".join(f"old.{k} IS NOT new.{k}" for k in ("src", "dst", "type") + EDGE_ANNOTATION_KEYS)
#: The change log and the triggers that fill it in the transaction of every change to what the
#: graph holds (node id, type, title, scopes, lifecycle; every edge column), and of a body (kind
#: CHANGE_TEXT, for a text index; the graph skips it). A write that changes nothing the graph
#: reads (a body, an alias, an embedding, an upsert of equal values) leaves the graph as it is.
#: Every change-log row also gets a random 8-byte nonce (``change_nonces``, by a trigger on
#: ``changes``; schema 3 gives the rows of an older store theirs): a snapshot records the nonce of
#: the row it reflects, so a restored backup, a diverged copy or a replaced file, whose row at
#: that position was written by another history, never matches it.
CHANGELOG_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS changes(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind INTEGER NOT NULL,
    a TEXT, b TEXT, c TEXT
);
CREATE TRIGGER IF NOT EXISTS changes_nodes_ai AFTER INSERT ON nodes BEGIN
    INSERT INTO changes(kind, a) VALUES ({CHANGE_NODE}, new.id);
END;
CREATE TRIGGER IF NOT EXISTS changes_nodes_ad AFTER DELETE ON nodes BEGIN
    INSERT INTO changes(kind, a) VALUES ({CHANGE_NODE}, old.id);
END;
CREATE TRIGGER IF NOT EXISTS changes_nodes_au AFTER UPDATE ON nodes WHEN {_NODE_DIFF} BEGIN
    INSERT INTO changes(kind, a) VALUES ({CHANGE_NODE}, old.id);
    INSERT INTO changes(kind, a) SELECT {CHANGE_NODE}, new.id WHERE new.id IS NOT old.id;
END;
CREATE TRIGGER IF NOT EXISTS changes_nodes_body AFTER UPDATE OF body ON nodes
    WHEN old.body IS NOT new.body AND NOT ({_NODE_DIFF}) BEGIN
    INSERT INTO changes(kind, a) VALUES ({CHANGE_TEXT}, new.id);
END;
CREATE TRIGGER IF NOT EXISTS changes_edges_ai AFTER INSERT ON edges BEGIN
    INSERT INTO changes(kind, a, b, c) VALUES ({CHANGE_EDGE}, new.src, new.dst, new.type);
END;
CREATE TRIGGER IF NOT EXISTS changes_edges_ad AFTER DELETE ON edges BEGIN
    INSERT INTO changes(kind, a, b, c) VALUES ({CHANGE_EDGE}, old.src, old.dst, old.type);
END;
CREATE TRIGGER IF NOT EXISTS changes_edges_au AFTER UPDATE ON edges WHEN {_EDGE_DIFF} BEGIN
    INSERT INTO changes(kind, a, b, c) VALUES ({CHANGE_EDGE}, old.src, old.dst, old.type);
    INSERT INTO changes(kind, a, b, c) SELECT {CHANGE_EDGE}, new.src, new.dst, new.type
        WHERE new.src IS NOT old.src OR new.dst IS NOT old.dst OR new.type IS NOT old.type;
END;
INSERT OR IGNORE INTO sqlite_sequence(name, seq) SELECT 'changes', 0
    WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'changes');
CREATE TABLE IF NOT EXISTS change_nonces(
    seq INTEGER PRIMARY KEY,
    nonce BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS changes_nonce AFTER INSERT ON changes BEGIN
    INSERT OR REPLACE INTO change_nonces(seq, nonce) VALUES (new.seq, randomblob(8));
END;
INSERT OR IGNORE INTO change_nonces(seq, nonce) SELECT seq, randomblob(8) FROM changes;
"""
_EDGE_COLS = "src, dst, type, " + ", ".join(EDGE_ANNOTATION_KEYS)


def _recode(
    codes: npt.NDArray[np.int32],
    names: Sequence[str],
    positions: Sequence[int],
    values: Sequence[str | None],
    prune: bool = True,
) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
    """``codes`` (into ``names``, -1 absent) with ``codes[positions[j]]`` set to ``values[j]``
    (None = absent), re-encoded into the sorted names of the values present. ``prune=False``
    says no name can have become unused (nothing was removed or overwritten), which skips the
    count."""
    ext = list(names)
    index = {x: i for i, x in enumerate(ext)}
    out = codes.astype(np.int32, copy=bool(positions))
    for p, v in zip(positions, values):
        if v is None:
            out[p] = -1
            continue
        c = index.get(v)
        if c is None:
            c = index[v] = len(ext)
            ext.append(v)
        out[p] = c
    if list(ext) != sorted(ext):
        order = sorted(range(len(ext)), key=ext.__getitem__)
        rank = np.empty(len(ext) + 1, dtype=np.int32)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(ext), dtype=np.int32)
        rank[-1] = -1
        out = rank[out]
        ext = [ext[i] for i in order]
    if not prune:  # every old name is still used and every new one was just set
        return out, tuple(ext)
    return _prune(out, ext)


@dataclass
class GraphSnapshot:
    """The store's graph at change-log position ``version`` plus its self-loop edges (``loops``:
    ``src``, ``type`` and one column per annotation, codes in the graph's name spaces), which the
    graph drops but whose names it keeps, so that :meth:`advance` can rebuild exactly.

    Build one with :meth:`build` (from the store), :meth:`from_arrays` (from a saved file) or
    :meth:`advance` (from an older snapshot and the change log).

    Attributes
    ----------
    graph : LinkGraph
        The store's graph, with its edge annotation columns.
    version : int
        The change-log position (``changes.seq``) the graph reflects. The store uses
        ``-1 - store version`` for a version-1 file opened read-only, which has no change log
        (such a snapshot is rebuilt, never advanced).
    loops : dict of str to numpy.ndarray
        The self-loop edges (``src == dst``), one entry per edge row: ``src`` (int32 node
        index), ``type`` (int32 code into ``graph.edge_type_names``), one int32 column per
        categorical annotation (a code into ``graph.edge_annotations[key][1]``, -1 = absent)
        and ``extraction_confidence`` (float64, NaN = absent).

    Examples
    --------
    >>> from conceptwalk.kb import KnowledgeBase
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_edges([("a", "b"), ("c", "c", "SELF")])
    >>> snap = GraphSnapshot.build(kb.conn, 5)
    >>> snap.graph.num_edges, snap.loops["src"].tolist(), snap.graph.edge_type_names[snap.loops["type"][0]]
    (1, [2], 'SELF')
    """

    graph: LinkGraph
    version: int
    loops: dict[str, np.ndarray[Any, Any]]

    # -------------------------------------------------------------- build and persist
    @classmethod
    def build(cls, conn: Any, version: int) -> GraphSnapshot:
        """A fresh build from the store (inside the caller's read transaction).

        Parameters
        ----------
        conn : sqlite3.Connection
            A connection to a conceptwalk knowledge base (only read).
        version : int
            The change-log position the store is at in this transaction, recorded as
            :attr:`version` (not checked against the store).

        Returns
        -------
        GraphSnapshot

        Raises
        ------
        InputError
            The store holds no nodes.

        Examples
        --------
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b")])
        >>> snap = GraphSnapshot.build(kb.conn, 3)
        >>> snap.version, snap.graph.ids
        (3, ['a', 'b'])
        """
        cols = read_columns(conn)
        return cls.from_columns(cols, version)

    @classmethod
    def from_columns(cls, cols: Columns, version: int) -> GraphSnapshot:
        """The snapshot of the store's columns (as ``read_columns`` returns them, or as
        :meth:`advance` brings them forward): the graph built from them, and their self-loop
        rows kept as :attr:`loops`.

        Parameters
        ----------
        cols : Columns
            Every node and edge row of the store, with all :data:`EDGE_ANNOTATION_KEYS` in
            ``cols.ann`` (categorical keys as ``(codes, names)``, ``extraction_confidence`` as a
            float64 array).
        version : int
            The change-log position the columns reflect.

        Returns
        -------
        GraphSnapshot

        Examples
        --------
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b"), ("b", "b")])
        >>> snap = GraphSnapshot.from_columns(read_columns(kb.conn), 7)
        >>> snap.version, snap.graph.num_edges, snap.loops["src"].tolist()
        (7, 1, [1])
        """
        g = cols.build()
        sel = np.flatnonzero(cols.src == cols.dst)
        loops: dict[str, np.ndarray[Any, Any]] = {
            "src": cols.src[sel].astype(np.int32),
            "type": cols.etype[0][sel].astype(np.int32),
        }
        for k in EDGE_ANNOTATION_KEYS:
            v = cols.ann[k]
            loops[k] = (v if k == "extraction_confidence" else v[0])[sel]
        return cls(g, version, loops)

    def to_arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        """The named arrays of this snapshot (``graph.*`` and ``loops.*``).

        Returns
        -------
        dict of str to numpy.ndarray
            ``"graph." + name`` for each array of :meth:`LinkGraph.to_arrays
            <conceptwalk.graph.LinkGraph.to_arrays>` and ``"loops." + key`` for each column of
            :attr:`loops`; what :func:`write_arrays` stores and :meth:`from_arrays` reads. The
            version is not among them (the store keeps it in the file's metadata).

        Examples
        --------
        >>> g = LinkGraph.from_edges([("a", "b")])
        >>> empty = {k: np.zeros(0, dtype=np.float64 if k == "extraction_confidence" else np.int32)
        ...          for k in ("src", "type") + EDGE_ANNOTATION_KEYS}
        >>> names = sorted(GraphSnapshot(g, 0, empty).to_arrays())
        >>> names[:2], "loops.src" in names
        (['graph.core.edge_typedir', 'graph.core.indices'], True)
        """
        out = {"graph." + k: v for k, v in self.graph.to_arrays().items()}
        out.update({"loops." + k: v for k, v in self.loops.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray[Any, Any]], version: int) -> GraphSnapshot:
        """The inverse of :meth:`to_arrays` (InputError on inconsistent arrays).

        Parameters
        ----------
        arrays : mapping of str to numpy.ndarray
            The arrays :meth:`to_arrays` returned, e.g. as :func:`read_arrays` maps them from a
            file (kept as views, no copy); names outside ``graph.*`` and ``loops.*`` are ignored.
        version : int
            The change-log position the arrays were saved at (from the file's metadata).

        Returns
        -------
        GraphSnapshot

        Raises
        ------
        InputError
            A missing or inconsistent graph array (see :meth:`LinkGraph.from_saved_arrays
            <conceptwalk.graph.LinkGraph.from_saved_arrays>`), an incomplete loops table, loops
            columns of different lengths or codes outside the graph's name spaces.

        Examples
        --------
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b"), ("a", "a")])
        >>> snap = GraphSnapshot.build(kb.conn, 4)
        >>> back = GraphSnapshot.from_arrays(snap.to_arrays(), 4)
        >>> back.graph.ids, back.loops["src"].tolist()
        (['a', 'b'], [0])
        >>> GraphSnapshot.from_arrays({k: v for k, v in snap.to_arrays().items() if k != "loops.type"}, 4)
        Traceback (most recent call last):
        ...
        conceptwalk.errors.InputError: saved snapshot: the loops table is incomplete
        """
        g = LinkGraph.from_saved_arrays({k[6:]: v for k, v in arrays.items() if k.startswith("graph.")})
        loops = {k[6:]: np.asarray(v) for k, v in arrays.items() if k.startswith("loops.")}
        want = ("src", "type") + EDGE_ANNOTATION_KEYS
        if set(loops) != set(want):
            raise InputError("saved snapshot: the loops table is incomplete")
        m = loops["src"].shape[0]
        if any(loops[k].shape != (m,) for k in want):
            raise InputError("saved snapshot: loops columns differ in length")
        if m and (
            loops["src"].min() < 0
            or loops["src"].max() >= g.num_nodes
            or loops["type"].min() < 0
            or loops["type"].max() >= len(g.edge_type_names)
        ):
            raise InputError("saved snapshot: loops hold codes out of range")
        for k in _CATEGORICAL:
            names = g.edge_annotations[k][1] if k in g.edge_annotations else ()
            if m and (loops[k].min() < -1 or loops[k].max() >= len(names)):
                raise InputError(f"saved snapshot: loops {k} codes out of range")
        # everything above read the mapped arrays through (the core validated every one of them):
        # their pages need not stay resident in this process for queries that touch a few
        release_pages(v for k, v in arrays.items() if k.startswith(("graph.", "loops.")))
        return cls(g, version, loops)

    # -------------------------------------------------------------- advance
    def advance(self, conn: Any, changes: Sequence[tuple[Any, ...]], version: int) -> GraphSnapshot:
        """The snapshot at ``version``, given the change-log rows ``(kind, a, b, c)`` after
        ``self.version`` up to it, reading back only the nodes and edges they name (inside the
        caller's read transaction at ``version``). The result equals :meth:`build` at
        ``version`` array for array.

        Cost: O(changes) SQL lookups and Python work, then one pass at memory speed over the
        previous arrays: the compiled graph patched in C++ (:func:`conceptwalk.graph.linkgraph.csr_patched`:
        renumbered for the re-ranking of ids an insertion causes, the changed edges left out
        through the core's pair index, the new ones merged in; no sort) and the node and edge
        columns carried over as slice copies; no full read of the store.

        Parameters
        ----------
        conn : sqlite3.Connection
            A connection to the store, in a read transaction that sees it at ``version``.
        changes : sequence of tuple
            Every change-log row ``(kind, a, b, c)`` with ``self.version < seq <= version``
            (``SELECT kind, a, b, c FROM changes``). Rows of kind :data:`CHANGE_NODE` and
            :data:`CHANGE_EDGE` are read back; others are skipped, so a :data:`CHANGE_RESET`
            (a bulk load, which the log does not itemise) must not be among them: the store
            calls :meth:`build` then.
        version : int
            The change-log position the rows lead to (the new snapshot's :attr:`version`).

        Returns
        -------
        GraphSnapshot
            A new snapshot; this one is left as it was.

        Raises
        ------
        InputError
            The store holds no nodes at ``version``.

        Examples
        --------
        >>> from conceptwalk.kb import KnowledgeBase
        >>> kb = KnowledgeBase.open(":memory:")
        >>> _ = kb.add_edges([("a", "b"), ("c", "c")])
        >>> def position(conn):
        ...     return conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'changes'").fetchone()[0]
        >>> old = GraphSnapshot.build(kb.conn, position(kb.conn))
        >>> _ = kb.add_edges([("b", "d")])
        >>> _ = kb.delete_nodes(["a"])
        >>> v = position(kb.conn)
        >>> rows = kb.conn.execute("SELECT kind, a, b, c FROM changes WHERE seq > ? AND seq <= ?",
        ...                        (old.version, v)).fetchall()
        >>> new = old.advance(kb.conn, rows, v)
        >>> new.graph.ids, new.graph.shortest_path("b", "d"), old.graph.ids
        (['b', 'c', 'd'], ['b', 'd'], ['a', 'b', 'c'])
        >>> fresh = GraphSnapshot.build(kb.conn, v).to_arrays()
        >>> got = new.to_arrays()
        >>> sorted(got) == sorted(fresh) and all(np.array_equal(got[k], fresh[k], equal_nan=True) for k in got)
        True
        """
        node_keys = sorted({a for kind, a, _, _ in changes if kind == CHANGE_NODE})
        edge_keys = sorted({(a, b, c) for kind, a, b, c in changes if kind == CHANGE_EDGE})
        now_nodes: dict[str, tuple[Any, ...]] = {}
        for i in range(0, len(node_keys), 500):
            part = node_keys[i : i + 500]
            for r in conn.execute(f"SELECT {_NODE_COLS} FROM nodes WHERE id IN ({','.join('?' * len(part))})", part):
                now_nodes[r[0]] = r
        now_edges = []
        for key in edge_keys:
            r = conn.execute(f"SELECT {_EDGE_COLS} FROM edges WHERE src = ? AND dst = ? AND type = ?", key).fetchone()
            if r is not None:
                now_edges.append(r)
        g = self.graph
        old_ids = g.ids
        index = g.id_index
        n_old = len(old_ids)
        # ---- node set: deletions and insertions keep the ids sorted
        deleted = sorted(index[x] for x in node_keys if x not in now_nodes and x in index)
        inserted = sorted(x for x in now_nodes if x not in index)
        ids = list(old_ids)
        # packed titles (a graph mapped from a file, a compacted base) stay packed: their bytes
        # are carried by the runs below, never one Python string per node (at millions of nodes
        # a list of them holds the interpreter for most of a second, in the compaction thread
        # too, where every read waits for it)
        titles: list[Any] | None = None if isinstance(g.titles, PackedStrings) else list(g.titles)
        for p in reversed(deleted):
            del ids[p]
            if titles is not None:
                del titles[p]
        if inserted:  # one merge (O(nodes + inserted)), not a list.insert per id (O(nodes) each)
            # (where each goes among the ids left; distinct: ids holds none of them)
            bounds = [0, *(bisect.bisect_left(ids, x) for x in inserted), len(ids)]
            merged_ids: list[str] = []
            merged_titles: list[Any] = []
            for i, x in enumerate(inserted):
                merged_ids += ids[bounds[i] : bounds[i + 1]]
                merged_ids.append(x)
                if titles is not None:
                    merged_titles += titles[bounds[i] : bounds[i + 1]]
                    merged_titles.append(None)
            merged_ids += ids[bounds[-2] :]
            ids = merged_ids
            if titles is not None:
                merged_titles += titles[bounds[-2] :]
                titles = merged_titles
        n = len(ids)
        if n == 0:
            raise InputError("the knowledge base has no nodes: nothing to build a graph from")
        moved = bool(deleted or inserted)
        if moved:
            keep = np.ones(n_old, dtype=bool)
            keep[np.asarray(deleted, dtype=np.int64)] = False
            ins_at = np.asarray([bisect.bisect_left(old_ids, x) for x in inserted], dtype=np.int64)
            ar = np.arange(n_old, dtype=np.int64)
            remap = (
                ar
                - np.searchsorted(np.asarray(deleted, dtype=np.int64), ar)
                + np.searchsorted(ins_at, ar, side="right")
            )
            remap[~keep] = -1
        new_index = {x: bisect.bisect_left(ids, x) for x in now_nodes}
        # The new id -> position index from the old one (IdIndex.advanced: its key -> position
        # array renumbered by numpy, the inserted ids added; no per-id dict update).
        if moved:
            id_index: Mapping[str, int] = (
                index.advanced(remap.astype(np.int32), ids, [(x, new_index[x]) for x in inserted])
                if isinstance(index, IdIndex)
                else IdIndex(ids)
            )
        else:
            id_index = index
        changed_pos = sorted(new_index.values())
        rows_by_pos = {new_index[x]: r for x, r in now_nodes.items()}
        # a node update or deletion may leave a name unused: only then count what is used
        prune_nodes = bool(deleted) or len(changed_pos) > len(inserted)

        # Rows carried unchanged, as runs (new start, old start, length): the old order between
        # the deleted or rewritten old rows and the changed new positions (O(changes) runs).
        gone = sorted(set(deleted) | {index[x] for x in now_nodes if x in index})
        runs: list[tuple[int, int, int]] = []
        o = p = di = ci = 0
        while o < n_old and p < n:
            if di < len(gone) and gone[di] == o:
                o, di = o + 1, di + 1
                continue
            if ci < len(changed_pos) and changed_pos[ci] == p:
                p, ci = p + 1, ci + 1
                continue
            length = min(
                (gone[di] if di < len(gone) else n_old) - o, (changed_pos[ci] if ci < len(changed_pos) else n) - p
            )
            runs.append((p, o, length))
            o, p = o + length, p + length

        def carry(old: npt.NDArray[Any], dtype: Any) -> npt.NDArray[Any]:
            # a per-node column in the new order (changed rows left for the caller to set)
            if not moved and not changed_pos:
                return np.array(old, dtype=dtype)
            col = np.empty(n, dtype=dtype)
            for p0, o0, ln in runs:
                col[p0 : p0 + ln] = old[o0 : o0 + ln]
            return col

        def carry_ragged(
            ptr_old: npt.NDArray[np.int64], values_old: npt.NDArray[Any], changed: Mapping[int, npt.NDArray[Any]]
        ) -> tuple[npt.NDArray[np.int64], npt.NDArray[Any]]:
            # a ragged per-node column (offsets, values) in the new order: the carried rows' value
            # ranges copied run by run, the changed rows' values given
            lengths = carry(np.diff(ptr_old), np.int64)
            for p, v in changed.items():
                lengths[p] = v.shape[0]
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lengths, out=ptr[1:])
            values = np.empty(int(ptr[-1]), dtype=values_old.dtype)
            for p0, o0, ln in runs:
                values[ptr[p0] : ptr[p0 + ln]] = values_old[ptr_old[o0] : ptr_old[o0 + ln]]
            for p, v in changed.items():
                values[ptr[p] : ptr[p + 1]] = v
            return ptr, values

        def node_col(
            codes: npt.NDArray[np.int32], names: Sequence[str], j: int
        ) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
            col = carry(codes, np.int32)
            return _recode(col, names, changed_pos, [rows_by_pos[p][j] for p in changed_pos], prune_nodes)

        ntypes = with_default_node_type(*node_col(g.node_type_codes, g.node_type_names, 1))
        life = node_col(g.node_lifecycle_codes, g.node_lifecycle_names, 4)
        new_titles: Sequence[str | None]
        if titles is None:  # packed: the bytes carried as a ragged column, the changed titles encoded
            old_t = g.titles
            assert isinstance(old_t, PackedStrings)
            now_t = [rows_by_pos[p][2] for p in changed_pos]
            t_off, t_data = carry_ragged(
                old_t.offsets,
                old_t.data,
                {
                    p: np.frombuffer(b"" if t is None else t.encode("utf-8"), dtype=np.uint8)
                    for p, t in zip(changed_pos, now_t)
                },
            )
            t_present = carry(np.ones(n_old, dtype=np.bool_) if old_t.present is None else old_t.present, np.bool_)
            t_present[changed_pos] = [t is not None for t in now_t]
            new_titles = PackedStrings.from_checked(t_data, t_off, t_present)
        else:
            for p in changed_pos:
                titles[p] = rows_by_pos[p][2]
            new_titles = untrack_strings(titles)
        # scopes: carried rows keep their code ranges (in order), changed rows get their lists
        snames = list(g.scope_names)
        sindex = {x: i for i, x in enumerate(snames)}
        scope_codes: dict[int, npt.NDArray[np.int32]] = {}
        for p in changed_pos:
            codes = []
            for sname in [] if rows_by_pos[p][3] is None else json.loads(rows_by_pos[p][3]):
                c = sindex.get(sname)
                if c is None:
                    c = sindex[sname] = len(snames)
                    snames.append(sname)
                codes.append(c)
            scope_codes[p] = np.asarray(codes, dtype=np.int32)
        ptr, scodes = carry_ragged(g.scope_ptr, np.asarray(g.scope_codes, dtype=np.int32), scope_codes)
        scodes, snames_t = _recode(scodes, snames, [], [], prune_nodes)
        # ---- edges: the previous canonical edges and self-loops minus the changed keys (found
        # through the core's pair index, in the old numbering), plus the changed keys' rows now
        core = g.core
        E = g.num_edges
        loops = self.loops
        tindex = {x: i for i, x in enumerate(g.edge_type_names)}
        drop: list[int] = []
        loop_keep = np.ones(int(loops["src"].shape[0]), dtype=bool)
        typedir = core.edge_typedir if edge_keys else None
        for a, b, c in edge_keys:
            ia, ib, tc = index.get(a), index.get(b), tindex.get(c)
            if ia is None or ib is None or tc is None:
                continue
            if ia == ib:
                loop_keep &= ~((loops["src"] == ia) & (loops["type"] == tc))
                continue
            pair = core.pair_of(ia, ib)
            if pair < 0:
                continue
            want = (tc << 1) | (1 if ia > ib else 0)
            for e in range(int(g.pair_ptr[pair]), int(g.pair_ptr[pair + 1])):
                if typedir is not None and int(typedir[e]) == want:
                    drop.append(e)
        if deleted:  # self-loops of deleted nodes (the store deletes and logs them too)
            loop_keep &= ~np.isin(loops["src"], np.asarray(deleted, dtype=np.int64))
        add_rows = [r for r in now_edges if r[0] != r[1]]
        loop_rows = [r for r in now_edges if r[0] == r[1]]
        kept_loops = {k: v[loop_keep] for k, v in loops.items()}
        if moved:
            remap32 = remap.astype(np.int32)
            kept_loops["src"] = remap32[kept_loops["src"]]
        else:
            remap32 = np.arange(n_old, dtype=np.int32)
        drop_a = np.unique(np.asarray(drop, dtype=np.int64))
        # Which old canonical edges stay, and so which names stay in use: counted only when
        # something was removed or overwritten (else every old name is still used).
        removed = bool(drop or deleted or not loop_keep.all())
        keep_e: npt.NDArray[np.bool_] | None = None
        if removed:
            keep_e = np.ones(E, dtype=bool)
            keep_e[drop_a] = False
            if deleted:
                keep_e &= (remap32[np.asarray(g.edge_src)] >= 0) & (remap32[np.asarray(g.edge_dst)] >= 0)

        def used(codes: Any, loop_codes: npt.NDArray[np.int32], k: int) -> npt.NDArray[np.bool_] | None:
            if keep_e is None:
                return None
            c = np.asarray(codes, dtype=np.int64)[keep_e]
            return (
                np.bincount(c + 1, minlength=k + 1)[1:]
                + np.bincount(loop_codes.astype(np.int64) + 1, minlength=k + 1)[1:]
            ) > 0

        type_names, type_lut, (add_typ, loop_typ) = _names_after(
            g.edge_type_names,
            used(g.edge_type_codes, kept_loops["type"], len(g.edge_type_names)),
            [r[2] for r in add_rows],
            [r[2] for r in loop_rows],
        )
        add_src = np.array([new_index.get(r[0], _pos(ids, r[0])) for r in add_rows], dtype=np.int32)
        add_dst = np.array([new_index.get(r[1], _pos(ids, r[1])) for r in add_rows], dtype=np.int32)
        new_loops: dict[str, np.ndarray[Any, Any]] = {
            "src": np.concatenate(
                [kept_loops["src"], np.array([new_index.get(r[0], _pos(ids, r[0])) for r in loop_rows], dtype=np.int32)]
            ).astype(np.int32),
            "type": np.concatenate([_apply_lut(type_lut, kept_loops["type"]), loop_typ]).astype(np.int32),
        }
        min_types = int(new_loops["type"].max()) + 1 if new_loops["type"].size else 0
        new_core, add_canon, edge_src, edge_dst, edge_typ, new_to_old = csr_patched(
            core, n, remap32, type_lut, drop_a, add_src, add_dst, add_typ, min_types
        )
        E_new = int(new_core.num_edges)
        if not (drop or deleted):  # only additions: each old column with the new values inserted
            order = np.argsort(add_canon, kind="stable")
            at = add_canon[order] - np.arange(order.shape[0])  # positions among the old edges

            def carried(col: Any, added: npt.NDArray[Any], dtype: Any) -> npt.NDArray[Any]:
                out = insert_sorted(np.asarray(col, dtype=dtype), at, added[order])
                out.setflags(write=False)
                return out
        else:
            take = np.maximum(new_to_old, 0)
            is_add = np.flatnonzero(new_to_old < 0)
            add_at = np.empty(E_new, dtype=np.int64)
            add_at[add_canon] = np.arange(add_canon.shape[0])

            def carried(col: Any, added: npt.NDArray[Any], dtype: Any) -> npt.NDArray[Any]:
                # the old canonical column in the new edge order, the added edges' values at theirs
                out = np.asarray(col, dtype=dtype)[take] if E else np.zeros(E_new, dtype=dtype)
                if is_add.size:
                    out[is_add] = added[add_at[is_add]]
                out.setflags(write=False)
                return out

        for arr in (edge_src, edge_dst, edge_typ):
            arr.setflags(write=False)
        ann_out: dict[str, tuple[np.ndarray[Any, Any], tuple[str, ...]]] = {}
        absent = None
        for j, k in enumerate(EDGE_ANNOTATION_KEYS):
            if k == "extraction_confidence":
                va = np.array([np.nan if r[3 + j] is None else float(r[3 + j]) for r in add_rows], dtype=np.float64)
                vl = np.array([np.nan if r[3 + j] is None else float(r[3 + j]) for r in loop_rows], dtype=np.float64)
                base = g.edge_annotations[k][0] if k in g.edge_annotations else np.full(E, np.nan)
                ann_out[k] = (carried(base, va, np.float64), ())
                new_loops[k] = np.concatenate([kept_loops[k].astype(np.float64), vl])
                continue
            if k in g.edge_annotations:
                base_c, base_names = g.edge_annotations[k]
            else:
                if absent is None:
                    absent = np.full(E, -1, dtype=np.int32)
                base_c, base_names = absent, ()
            kl = np.asarray(kept_loops[k], dtype=np.int32)
            names, lut, (c_add, c_loop) = _names_after(
                base_names,
                used(base_c, kl, len(base_names)),
                [r[3 + j] for r in add_rows],
                [r[3 + j] for r in loop_rows],
            )
            ann_out[k] = (carried(_apply_lut(lut, np.asarray(base_c, dtype=np.int32)), c_add, np.int32), names)
            new_loops[k] = np.concatenate([_apply_lut(lut, kl), c_loop]).astype(np.int32)
        graph = LinkGraph(
            core=new_core,
            ids=untrack_strings(ids),  # never scanned by the cycle collector (untrack_strings)
            node_type_codes=np.ascontiguousarray(ntypes[0]),
            node_type_names=ntypes[1],
            titles=new_titles,
            scope_ptr=ptr,
            scope_codes=scodes,
            scope_names=snames_t,
            node_lifecycle_codes=np.ascontiguousarray(life[0]),
            node_lifecycle_names=life[1],
            edge_src=edge_src,
            edge_dst=edge_dst,
            edge_type_codes=edge_typ,
            edge_type_names=type_names,
            edge_annotations=ann_out,
            self_loops=int(new_loops["src"].shape[0]),
            duplicate_edges=0,
            id_index=id_index,
        )
        return GraphSnapshot(graph, version, new_loops)


def _apply_lut(lut: npt.NDArray[np.int32], codes: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """``lut`` (old code -> new code) over ``codes``, -1 (absent) kept; the codes themselves
    when ``lut`` is the identity (no copy)."""
    if lut.size == 0 or (lut[0] == 0 and lut[-1] == lut.size - 1 and (lut.size < 2 or bool(np.all(np.diff(lut) == 1)))):
        return codes
    return np.append(lut, -1).astype(np.int32)[codes]


def _names_after(
    names: Sequence[str], used: npt.NDArray[np.bool_] | None, add: Sequence[Any], add_loops: Sequence[Any]
) -> tuple[tuple[str, ...], npt.NDArray[np.int32], tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]]:
    """A categorical column's sorted names after a change: the old names still ``used`` (None =
    all of them) and the values of the added canonical edges ``add`` and self-loops
    ``add_loops``. Returns the names, the old code -> new code map (-1 for a dropped name,
    strictly increasing otherwise) and the added values' codes (-1 = None)."""
    kept = list(names) if used is None else [x for x, u in zip(names, used.tolist()) if u]
    fresh = {v for v in (*add, *add_loops) if v is not None}
    merged = tuple(sorted(set(kept) | fresh)) if fresh - set(kept) or used is not None else tuple(names)
    pos = {x: i for i, x in enumerate(merged)}
    lut = np.array([pos.get(x, -1) for x in names], dtype=np.int32)
    codes = (
        np.array([-1 if v is None else pos[v] for v in add], dtype=np.int32),
        np.array([-1 if v is None else pos[v] for v in add_loops], dtype=np.int32),
    )
    return merged, lut, codes


def _pos(ids: list[str], x: str) -> int | None:
    i = bisect.bisect_left(ids, x)
    return i if i < len(ids) and ids[i] == x else None
