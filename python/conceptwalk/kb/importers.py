"""Importers into a :class:`~conceptwalk.kb.store.KnowledgeBase`: JSONL, CSV/TSV edge lists and
networkx graphs (the ontology, RDF and graph-file formats are in :mod:`conceptwalk.kb.formats`).

Each import is **one transaction**: a malformed line raises :class:`~conceptwalk.errors.InputError`
naming the file and the 1-based line number, and nothing from the file is kept. Rows are
streamed in chunks (``executemany``), so files larger than memory are fine.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import json.scanner
import os
import re
import zlib
from collections import Counter
from operator import itemgetter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Union

from ..errors import InputError, shown
from ..graph import DEFAULT_EDGE_TYPE
from .attributes import attribute_value, ensure_tables
from .store import ANNOTATION_AXES, EDGE_KEYS, NULL_CONFIDENCE, KnowledgeBase, RowError, alias_pair, edge_tuple
from .store import check_text, first_not_text, lone_surrogate, node_tuple
from .store import NULL_TEXT as Z  # edge tuples with no annotation: NULLs as the store's sentinels

__all__ = ["ImportSummary", "RowWriter", "ProgressBar", "import_jsonl", "import_edge_list", "import_networkx"]

_CHUNK = 4096
#: How many endpoint-only node ids an import summary or refusal names.
ENDPOINT_EXAMPLES = 5
_MISSING_ENDPOINTS = ("create", "refuse")
#: ``progress=``: None/False (no progress), True (a tqdm bar when tqdm is installed), or a
#: callable receiving the number of lines (or networkx items) done so far.
Progress = Union[None, bool, Callable[[int], Any]]


@dataclass
class ImportSummary:
    """What an import wrote: rows read per kind and how many nodes/edges are new.

    Attributes
    ----------
    nodes, edges, aliases : int
        Rows of each kind read (an updated row counts too).
    lines : int
        Physical lines read (networkx: nodes + edges).
    new_nodes, new_edges : int
        Nodes and edges the store did not hold before (bare endpoint nodes included).
    ignored_attributes : list of str
        networkx attributes that map to no key (``unknown="ignore"``), sorted.
    endpoint_only_nodes : int
        New nodes created only as edge endpoints (no node row anywhere in the import): often a
        typo'd id (``svc:autth``). ``missing_endpoints="refuse"`` refuses them instead.
    endpoint_only_examples : list of str
        The first few of them (at most :data:`ENDPOINT_EXAMPLES`), sorted.
    attributes : int
        Node and edge attributes written (values no store column holds, kept beside the node or
        edge: :mod:`conceptwalk.kb.attributes`).
    kept_attributes : list of str
        The attribute names kept that way (networkx, graph files, Neo4j), sorted.
    node_types, edge_types : dict of str to int
        Node and edge rows read, by type (a node row without a type counts under ``""``).
    skipped : dict of str to int
        What the file held that was not imported, by kind (``obsolete`` terms, ``typedef``
        frames, ``blank node`` subjects, ...).
    parse_seconds, write_seconds : float
        Time in the file's parser and time mapping and writing the rows (the formats of
        :mod:`conceptwalk.kb.formats`; 0 for the others).
    """

    nodes: int = 0
    edges: int = 0
    aliases: int = 0
    lines: int = 0
    new_nodes: int = 0
    new_edges: int = 0
    ignored_attributes: list[str] = field(default_factory=list)
    endpoint_only_nodes: int = 0
    endpoint_only_examples: list[str] = field(default_factory=list)
    attributes: int = 0
    kept_attributes: list[str] = field(default_factory=list)
    node_types: dict[str, int] = field(default_factory=dict)
    edge_types: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    parse_seconds: float = 0.0
    write_seconds: float = 0.0

    def __str__(self) -> str:
        """A readable summary (what ``conceptwalk import`` prints)."""

        def n(count: int, word: str, plural: str = "s") -> str:
            return f"{count:,} {word}{'' if count == 1 else plural}"

        text = (
            f"{n(self.nodes, 'node')}, {n(self.edges, 'edge')} and {n(self.aliases, 'alias', 'es')} "
            f"read from {n(self.lines, 'line')}; new: {n(self.new_nodes, 'node')}, "
            f"{n(self.new_edges, 'edge')}"
        )
        if self.endpoint_only_nodes:
            more = ", ..." if self.endpoint_only_nodes > len(self.endpoint_only_examples) else ""
            text += (
                f"\n  warning: {n(self.endpoint_only_nodes, 'node')} created only as edge endpoints "
                f"(no node row; a typo'd id?): {', '.join(self.endpoint_only_examples)}{more}"
            )
        if self.attributes:
            text += f"; {n(self.attributes, 'attribute')} kept"
        if self.node_types:
            text += "\n  nodes by type: " + _counts(self.node_types)
        if self.edge_types:
            text += "\n  edges by type: " + _counts(self.edge_types)
        if self.skipped:
            text += "\n  skipped: " + _counts(self.skipped)
        if self.parse_seconds or self.write_seconds:
            rate = self.edges / self.write_seconds if self.write_seconds > 0 else 0.0
            text += (
                f"\n  parse {self.parse_seconds:.2f} s, map and write {self.write_seconds:.2f} s ({rate:,.0f} edges/s)"
            )
        if self.kept_attributes:
            text += f"\n  kept as attributes: {', '.join(self.kept_attributes)}"
        if self.ignored_attributes:
            text += f"\n  ignored attributes: {', '.join(self.ignored_attributes)}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The counts as a JSON-ready dict.

        Returns
        -------
        dict
            One key per attribute.
        """
        return asdict(self)


def _counts(d: dict[str, int], most: int = 8) -> str:
    items = sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k or '(none)'} {v:,}" for k, v in items[:most])
    return text + (f", ... ({len(items) - most} more)" if len(items) > most else "")


class ProgressBar:
    """Calls the user's callback or drives a tqdm bar; silent when neither is available.

    Parameters
    ----------
    progress : None, bool or callable
        What ``progress=`` of an importer says (see :data:`Progress`).
    desc : str
        The bar's label.
    total : int, optional
        The count the bar runs to, when known.
    """

    def __init__(self, progress: Progress, desc: str, total: int | None = None) -> None:
        self._cb: Callable[[int], Any] | None = None
        self._bar: Any = None
        self._shown = 0
        if progress is True:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm is optional: no bar
                pass
            else:
                self._bar = tqdm(total=total, desc=desc, unit=" rows", leave=False)
        elif callable(progress):
            self._cb = progress
        elif progress not in (None, False):
            raise InputError(f"progress must be None, True/False or a callable, got {progress!r}")

    def update(self, done: int) -> None:
        """Report ``done`` items so far.

        Parameters
        ----------
        done : int
            Items done since the start.
        """
        if self._cb is not None:
            self._cb(done)
        if self._bar is not None:
            self._bar.update(done - self._shown)
        self._shown = done

    def close(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()


def file_scopes(scopes: Any) -> list[str] | None:
    """Check an importer's ``scopes=`` (a whole file to scopes): None or a list of non-empty strings."""
    if scopes is None:
        return None
    if isinstance(scopes, str):
        scopes = [scopes]
    try:
        out = list(scopes)
    except TypeError:
        out = [scopes]
    if not out or any(not isinstance(s, str) or not s for s in out):
        raise InputError(f"scopes must be a non-empty list of non-empty strings, got {shown(scopes)}")
    for i, s in enumerate(out):
        check_text(s, f"scopes[{i}]")
    return out


class RowWriter:
    """Buffers validated rows and flushes them in chunks inside the caller's transaction (the
    write path every importer shares).

    It remembers the ids of the nodes it wrote (node rows and bare endpoints), so an edge's
    endpoint is only inserted as a bare node the first time it is met (each later one would be
    an ``INSERT OR IGNORE`` that finds the node).

    Parameters
    ----------
    kb : KnowledgeBase
        The store, inside a transaction (:meth:`~KnowledgeBase.bulk`).
    summary : ImportSummary
        Counted into.
    missing_endpoints : {"create", "refuse"}
        As the importers' argument.
    scopes : list of str, optional
        Added to every node written (node rows and bare endpoints): a whole file to scopes.
    ordered : bool
        Hold every row until :meth:`finish` and write the nodes in id order and the edges in key
        order ``(src, dst, type)`` (stable: of two rows with one key the later still wins), so
        each index of the store grows at its end -- what the synthetic generator's bulk load
        does, several times faster than rows in file order. For the formats whose parser holds
        the file in memory anyway (and OBO, whose rows are few per line); the JSONL and CSV
        importers stream their rows.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        summary: ImportSummary,
        missing_endpoints: str = "create",
        scopes: list[str] | None = None,
        ordered: bool = False,
    ) -> None:
        if missing_endpoints not in _MISSING_ENDPOINTS:
            raise InputError(f"missing_endpoints must be 'create' or 'refuse', got {missing_endpoints!r}")
        self.kb = kb
        self.summary = summary
        self.refuse = missing_endpoints == "refuse"
        self.bare: set[str] = set()  # new nodes made as endpoints, not (yet) given a node row
        self.nodes: list[tuple[Any, ...]] = []
        self.edges: list[tuple[Any, ...]] = []
        self.aliases: list[tuple[str, str]] = []
        self.alias_where: list[str] = []
        self.known: set[str] = set()
        self.node_attrs: list[tuple[str, str, str]] = []
        self.edge_attrs: list[tuple[str, str, str, str, str]] = []
        self.scopes = scopes
        self.ordered = ordered
        self._scopes_text = json.dumps(scopes, ensure_ascii=False) if scopes else None
        self._merged: dict[Any, str] = {}
        c = kb.conn
        self._n0 = c.execute("SELECT count(*) FROM nodes").fetchone()[0]
        self._e0 = c.execute("SELECT count(*) FROM edges").fetchone()[0]

    def node(self, params: tuple[Any, ...]) -> None:
        """One node row.

        Parameters
        ----------
        params : tuple
            What :func:`~conceptwalk.kb.store.node_tuple` returns.
        """
        if self.scopes is not None:
            params = self._with_file_scopes(params)
        self.nodes.append(params)
        if len(self.nodes) >= _CHUNK and not self.ordered:
            self.flush_nodes()

    def _with_file_scopes(self, params: tuple[Any, ...]) -> tuple[Any, ...]:
        own = params[4]
        text = self._merged.get(own)
        if text is None:
            merged = sorted(set(json.loads(own) if own else []) | set(self.scopes or ()))
            text = self._merged[own] = json.dumps(merged, ensure_ascii=False)
        return params[:4] + (text,) + params[5:6] + (params[6] | 8,)  # bit 3: scopes given

    def edge(self, params: tuple[Any, ...]) -> None:
        """One edge row.

        Parameters
        ----------
        params : tuple
            What :func:`~conceptwalk.kb.store.edge_tuple` returns.
        """
        self.edges.append(params)
        if len(self.edges) >= _CHUNK and not self.ordered:
            self.flush_edges()

    def extend_edges(self, params: list[tuple[Any, ...]]) -> None:
        """Several edge rows at once (as :meth:`edge` each, without a call per row).

        Parameters
        ----------
        params : list of tuple
            What :func:`~conceptwalk.kb.store.edge_tuple` returns, one per edge.
        """
        self.edges.extend(params)
        if len(self.edges) >= _CHUNK and not self.ordered:
            self.flush_edges()

    def node_attribute(self, node_id: str, key: str, value: Any, where: str) -> None:
        """An attribute of a node (kept beside it, read by no algorithm).

        Parameters
        ----------
        node_id, key : str
            The node and the attribute's name.
        value : any
            A string, number, boolean, or a list or dict of them.
        where : str
            Locates it in an error message.
        """
        self.node_attrs.append((node_id, key, attribute_value(value, where, key)))

    def edge_attribute(self, src: str, dst: str, typ: str, key: str, value: Any, where: str) -> None:
        """An attribute of an edge (kept beside it, read by no algorithm).

        Parameters
        ----------
        src, dst, typ, key : str
            The edge's key and the attribute's name.
        value : any
            A string, number, boolean, or a list or dict of them.
        where : str
            Locates it in an error message.
        """
        self.edge_attrs.append((src, dst, typ, key, attribute_value(value, where, key)))

    def flush_nodes(self) -> None:
        """Write the buffered node rows (and count them by type)."""
        s = self.summary
        s.nodes += len(self.nodes)
        for t, n in Counter(map(itemgetter(1), self.nodes)).items():
            t = t or ""  # no type: None or NULL_TEXT
            s.node_types[t] = s.node_types.get(t, 0) + n
        try:
            self.kb.put_nodes(self.nodes)
        except UnicodeEncodeError:
            raise _rows_not_text(self.nodes) from None
        self.known.update(map(itemgetter(0), self.nodes))
        if self.bare:
            self.bare.difference_update(map(itemgetter(0), self.nodes))
        self.nodes.clear()  # in place: an importer may hold the list (import_jsonl appends to it)

    def flush_edges(self) -> None:
        """Write the buffered edge rows (and their endpoints that are not nodes yet; and count
        them by type)."""
        s = self.summary
        s.edges += len(self.edges)
        for t, n in Counter(map(itemgetter(2), self.edges)).items():
            s.edge_types[t] = s.edge_types.get(t, 0) + n
        try:
            self._write_edges()
        except UnicodeEncodeError:
            raise _rows_not_text(self.edges) from None
        self.edges.clear()  # in place, as flush_nodes

    def _write_edges(self) -> None:
        known = self.known
        # the endpoints not written yet, by set operations in C (no Python per edge)
        ends = set(map(itemgetter(0), self.edges))
        ends.update(map(itemgetter(1), self.edges))
        ends -= known
        if ends:
            conn = self.kb.conn
            wanted = sorted(ends)
            for i in range(0, len(wanted), 500):  # which endpoints the store does not hold yet
                part = wanted[i : i + 500]
                have = {
                    r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN ({','.join('?' * len(part))})", part)
                }
                self.bare.update(e for e in part if e not in have)
            if self._scopes_text is None:
                conn.executemany("INSERT OR IGNORE INTO nodes(id) VALUES (?)", ((e,) for e in wanted))
            else:
                conn.executemany(
                    "INSERT OR IGNORE INTO nodes(id, scopes) VALUES (?, ?)", ((e, self._scopes_text) for e in wanted)
                )
            known |= ends
        self.kb.put_edges(self.edges, endpoints_exist=True)

    def alias(self, pair: tuple[str, str], where: str) -> None:
        """One alias pair.

        Parameters
        ----------
        pair : (str, str)
            ``(alias, canonical)``, as :func:`~conceptwalk.kb.store.alias_pair` returns it.
        where : str
            Locates it in an error message (the canonical node is checked at the end).
        """
        # Aliases are checked and written last, so a canonical node may come later in the file.
        self.aliases.append(pair)
        self.alias_where.append(where)
        self.summary.aliases += 1

    def finish(self) -> None:
        """Write what is buffered, check the endpoints, write the aliases and attributes, and
        count what is new."""
        if self.ordered:
            nodes, edges = self.nodes, self.edges
            nodes.sort(key=itemgetter(0))  # stable: a later row of one id still comes later
            edges.sort(key=itemgetter(0, 1, 2))
            for i in range(0, len(nodes), _CHUNK):
                self.nodes = nodes[i : i + _CHUNK]
                self.flush_nodes()
            for i in range(0, len(edges), _CHUNK):
                self.edges = edges[i : i + _CHUNK]
                self.flush_edges()
            self.nodes, self.edges = [], []
        if self.nodes:
            self.flush_nodes()
        if self.edges:
            self.flush_edges()
        bare = sorted(self.bare)
        if bare and self.refuse:
            raise InputError(
                f"{len(bare):,} edge endpoint{'' if len(bare) == 1 else 's'} not defined as a node "
                f"(missing_endpoints='refuse'): {', '.join(bare[:ENDPOINT_EXAMPLES])}"
                f"{', ...' if len(bare) > ENDPOINT_EXAMPLES else ''}; add node rows for them, fix "
                f"the ids, or import with missing_endpoints='create'"
            )
        self.summary.endpoint_only_nodes = len(bare)
        self.summary.endpoint_only_examples = bare[:ENDPOINT_EXAMPLES]
        try:
            self._write_aliases_and_attributes()
        except UnicodeEncodeError:
            raise _rows_not_text([*self.aliases, *self.node_attrs, *self.edge_attrs]) from None
        c = self.kb.conn
        self.summary.new_nodes = c.execute("SELECT count(*) FROM nodes").fetchone()[0] - self._n0
        self.summary.new_edges = c.execute("SELECT count(*) FROM edges").fetchone()[0] - self._e0

    def _write_aliases_and_attributes(self) -> None:
        for i in range(0, len(self.aliases), _CHUNK):
            self.kb.put_aliases(self.aliases[i : i + _CHUNK], self.alias_where[i : i + _CHUNK])
        c = self.kb.conn
        if self.node_attrs or self.edge_attrs:
            ensure_tables(c)
            c.executemany("INSERT OR REPLACE INTO node_attributes(id, key, value) VALUES (?, ?, ?)", self.node_attrs)
            c.executemany(
                "INSERT OR REPLACE INTO edge_attributes(src, dst, type, key, value) VALUES (?, ?, ?, ?, ?)",
                self.edge_attrs,
            )
            self.summary.attributes += len(self.node_attrs) + len(self.edge_attrs)


def _rows_not_text(rows: Sequence[tuple[Any, ...]]) -> InputError:
    """The error for rows SQLite could not encode: the first row holding a lone surrogate (a str
    that is not text; a file's escape such as Turtle's ``\\uD800`` or GML's ``&#55296;``)."""
    got = first_not_text(rows)
    if got is None:
        return InputError("a string holds a lone surrogate, which is not text and cannot be stored")
    j, _, bad = got
    return InputError(
        f"the row of {rows[j][0]!r} holds a lone surrogate ({ascii(bad)[1:-1]}), which is not text and "
        "cannot be stored; escape the whole character (a surrogate pair) or drop it"
    )


#: What reading a truncated or corrupt ``.gz`` file raises (BadGzipFile is an OSError).
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _not_utf8(path: Path, name: str, exc: UnicodeDecodeError, near: int) -> InputError:
    """The error for a file that is not UTF-8, naming the line that holds the first bad byte.

    A text file is decoded a buffer at a time, so the line being read when decoding failed
    (``near``) may be before it: the file is read again as bytes, line by line (split as the
    text reader splits: ``\\r\\n``, ``\\r``, ``\\n``; none of those bytes is part of a UTF-8
    sequence), up to the first line that does not decode."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rb") as fh:
            lineno = 0
            for raw in fh:
                raw = raw[:-1] if raw.endswith(b"\n") else raw
                raw = raw[:-1] if raw.endswith(b"\r") else raw
                for piece in raw.split(b"\r"):
                    lineno += 1
                    try:
                        piece.decode("utf-8")
                    except UnicodeDecodeError as bad:
                        return InputError(f"{name}:{lineno}: not valid UTF-8 ({bad.reason})")
    except (OSError, *_GZIP_ERRORS):
        pass
    return InputError(f"{name}:{near}: not valid UTF-8 ({exc.reason})")


#: A JSON escape of a UTF-16 surrogate (``\\ud800``-``\\udfff``): alone, json.loads makes it a
#: str that is not text (SQLite cannot store it); paired, the character it encodes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_line_not_text(obj: Any, name: str, lineno: int) -> None:
    """Refuse a line whose JSON holds a lone surrogate escape, naming the line (the write of
    its row, later, would raise a UnicodeEncodeError naming nothing)."""
    bad = lone_surrogate(obj)
    if bad is not None:
        raise InputError(
            f"{name}:{lineno}: a string holds a lone surrogate ({ascii(bad)[1:-1]}), which is not "
            f"text and cannot be stored; escape the whole character (a surrogate pair) or drop it"
        )


def _from_reading(exc: BaseException) -> bool:
    """Whether ``exc``, caught around a loop over a text file, was raised by the file's own
    reading (below the loop's frame, at most the text reader's incremental decoder, whose
    ``decode`` is the codecs module's), not by code the loop called (a caller's progress
    callback), whose error is left as it is."""
    tb = exc.__traceback__
    if tb is None:
        return False
    below = tb.tb_next
    return below is None or (below.tb_next is None and below.tb_frame.f_code.co_filename in _CODECS_FILES)


#: Where the codecs module's incremental decoders run (frozen in the interpreter, or the file).
_CODECS_FILES = frozenset({"<frozen codecs>", codecs.__file__ or ""})


def import_jsonl(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    *,
    progress: Progress = None,
    missing_endpoints: str = "create",
    scopes: Any = None,
) -> ImportSummary:
    """Import a JSON Lines file (``.jsonl`` or ``.jsonl.gz``) in one transaction.

    Each non-blank line is one JSON object:

    - a **node**: has ``id`` (keys ``id, type, title, body, scopes, lifecycle``);
    - an **edge**: has ``src`` and ``dst`` (keys ``src, dst, type, authority, fidelity,
      extraction_method, extraction_confidence, lifecycle``);
    - an **alias**: ``{"alias": ..., "canonical": ...}`` (the canonical id may be defined
      anywhere in the file or already be stored).

    A node or edge line may also have ``"attributes": {...}``: values no store column holds,
    kept beside the node or edge (:mod:`conceptwalk.kb.attributes`; what ``conceptwalk export
    --format jsonl`` writes for them).

    These are the rows of :meth:`KnowledgeBase.add_nodes`/``add_edges``/``add_aliases``, with
    the same rules (unknown keys are errors; edge endpoints that are not nodes become bare
    nodes; re-adding updates the given keys).

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        The ``.jsonl`` or ``.jsonl.gz`` file (UTF-8).
    missing_endpoints : {"create", "refuse"}
        An edge endpoint that no node row defines (and the store does not hold): ``"create"``
        (the default) makes it a bare node and counts it in ``endpoint_only_nodes``;
        ``"refuse"`` raises and writes nothing.
    progress : None, bool or callable
        ``callable(done_lines)`` is called after every chunk and at the end; ``True`` shows a
        tqdm bar when tqdm is installed (otherwise nothing).
    scopes : str or list of str, optional
        A whole file to scopes: added to the scopes of every node the file writes (bare
        endpoints included), so a tenant's file is loaded as that tenant's.

    Returns
    -------
    ImportSummary
        Rows read per kind and how many nodes and edges are new.

    Raises
    ------
    InputError
        ``"<path>:<line>: <what is wrong>"``; the store is left exactly as before.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "kb.jsonl")
    >>> with open(p, "w") as f:
    ...     _ = f.write('{"id": "ppr", "type": "CONCEPT", "title": "PageRank"}\\n'
    ...                 '{"src": "push", "dst": "ppr", "type": "IMPLEMENTS"}\\n'
    ...                 '{"alias": "pagerank", "canonical": "ppr"}\\n')
    >>> kb = KnowledgeBase.open(":memory:")
    >>> s = import_jsonl(kb, p)
    >>> (s.nodes, s.edges, s.aliases, s.new_nodes)
    (1, 1, 1, 2)
    >>> with open(p, "a") as f:
    ...     _ = f.write('{"src": "a", "dst": "b", "extraction_confidence": "high"}\\n')
    >>> import_jsonl(kb, p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: ...kb.jsonl:4: 'extraction_confidence' must be a number in [0, 1] or null, got str 'high'
    """
    p = Path(path)
    name = str(path)
    scope_list = file_scopes(scopes)
    _check_readable(p, name)
    summary = ImportSummary()
    bar = ProgressBar(progress, p.name)
    try:
        with _open_text(p) as fh, kb.bulk():
            w = RowWriter(kb, summary, missing_endpoints, scope_list)
            lineno = 0
            scan = _SCAN
            node_row, edge_row = w.node, w.edge
            # Rows go straight onto the writer's buffers (flushed at _CHUNK rows) unless a file
            # scope must be merged into each node row (w.node does that).
            nodes, edges = w.nodes, w.edges
            direct = w.scopes is None and not w.ordered
            lines = enumerate(fh, 1)
            try:
                for lineno, line in lines:
                    if lineno % _CHUNK == 0:
                        bar.update(lineno)
                    # The C scanner straight on a line that starts an object (what json.loads
                    # does after its checks); anything else, or any doubt, goes through
                    # json.loads, whose result or error message is then the one reported.
                    obj = None
                    if line[:1] == "{":
                        try:
                            obj, end = scan(line, 0)
                        except (StopIteration, ValueError, RecursionError):
                            obj = None
                        else:
                            rest = len(line) - end
                            if rest and (rest != 1 or line[-1] != "\n") and line[end:].strip(_JSON_SPACE):
                                obj = None
                    if obj is None:
                        if not line.strip():
                            continue
                        obj = _loads(line, name, lineno)
                    if "\\u" in line and _SURROGATE_ESCAPE.search(line):
                        _refuse_line_not_text(obj, name, lineno)  # a lone surrogate would fail the write, lineless
                    try:
                        if type(obj) is not dict:
                            raise RowError(f"expected a JSON object, got {type(obj).__name__}")
                        attrs = obj.pop("attributes", None) if "attributes" in obj else None
                        if "id" in obj:
                            if "src" in obj or "dst" in obj or "alias" in obj:
                                raise RowError("ambiguous line: has 'id' (a node) and 'src'/'dst'/'alias'")
                            t = node_tuple(obj)
                            if direct:
                                nodes.append(t)
                                if len(nodes) >= _CHUNK:
                                    w.flush_nodes()
                            else:
                                node_row(t)
                            if attrs is not None:
                                for key, value in _attributes(attrs).items():
                                    w.node_attribute(t[0], key, value, f"{name}:{lineno}")
                        elif "src" in obj or "dst" in obj:
                            t = edge_tuple(obj)
                            if direct:
                                edges.append(t)
                                if len(edges) >= _CHUNK:
                                    w.flush_edges()
                            else:
                                edge_row(t)
                            if attrs is not None:
                                for key, value in _attributes(attrs).items():
                                    w.edge_attribute(t[0], t[1], t[2], key, value, f"{name}:{lineno}")
                        elif attrs is not None:
                            raise RowError("'attributes' belongs to a node or an edge line")
                        elif "alias" in obj or "canonical" in obj:
                            w.alias(alias_pair(obj), f"{name}:{lineno}")
                        else:
                            raise RowError(
                                "expected a node (with 'id'), an edge (with 'src' and 'dst') "
                                "or an alias (with 'alias' and 'canonical')"
                            )
                    except RowError as exc:
                        raise InputError(f"{name}:{lineno}: {exc}") from None
            except UnicodeDecodeError as exc:
                if not _from_reading(exc):
                    raise
                raise _not_utf8(p, name, exc, lineno + 1) from None
            summary.lines = lineno
            w.finish()
        bar.update(summary.lines)
    except _GZIP_ERRORS as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    except OSError as exc:
        raise _unreadable(name, exc) from None
    finally:
        bar.close()
    return summary


def _attributes(attrs: Any) -> dict[str, Any]:
    if type(attrs) is not dict:
        raise RowError(f"'attributes' must be a JSON object, got {type(attrs).__name__} {shown(attrs)}")
    for key in attrs:
        if not key:
            raise RowError("'attributes' has an empty key")
    return attrs


#: The standard library's C JSON scanner (what :func:`json.loads` calls), and the whitespace
#: json.loads allows after a value.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # typeshed names the scanner class as its argument
_JSON_SPACE = " \t\n\r"


def _loads(line: str, name: str, lineno: int) -> Any:
    """One line through :func:`json.loads`, its errors as ``file:line`` InputErrors."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputError(f"{name}:{lineno}: invalid JSON (nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise InputError(f"{name}:{lineno}: invalid JSON ({exc})") from None


def _unreadable(name: str, exc: OSError) -> InputError:
    """A file that cannot be read (missing, a directory, no permission, an I/O error)."""
    if isinstance(exc, FileNotFoundError):
        why = "no such file"
    elif isinstance(exc, IsADirectoryError):
        why = "is a directory, not a file"
    else:
        why = exc.strerror or str(exc)
    return InputError(f"{name}: cannot read the file: {why}")


def _check_readable(p: Path, name: str) -> None:
    """Refuse a missing path or a directory before any work (and before a progress bar shows)."""
    if p.is_dir():
        raise _unreadable(name, IsADirectoryError(name))
    if not p.exists():
        raise _unreadable(name, FileNotFoundError(name))


#: A decimal number as a CSV cell may write it (no underscores, no 'inf'/'nan', no hex).
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")

_HEADER_SYNONYMS = {"source": "src", "target": "dst", "from": "src", "to": "dst", "confidence": "extraction_confidence"}


def _header_name(cell: str) -> str:
    c = cell.strip().lstrip("\ufeff").strip().lower()
    return _HEADER_SYNONYMS.get(c, c)


def import_edge_list(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    *,
    delimiter: str | None = None,
    has_header: bool | str = "auto",
    default_type: str = DEFAULT_EDGE_TYPE,
    progress: Progress = None,
    missing_endpoints: str = "create",
    scopes: Any = None,
) -> ImportSummary:
    """Import a CSV/TSV edge list in one transaction.

    Columns are ``src, dst[, type]``; with a header row, columns are matched by name, and may
    also include the annotation axes (``authority``, ``fidelity``, ``extraction_method``,
    ``extraction_confidence``, ``lifecycle``; ``source``/``target``/``from``/``to`` and
    ``confidence`` are accepted as synonyms). Empty cells are absent values (an empty type is
    ``default_type``). Blank lines and lines starting with ``#`` are skipped. Endpoints that are
    not nodes yet become bare nodes.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        ``.csv``, ``.tsv`` or ``.tab``, optionally ``.gz``-compressed.
    delimiter : str, optional
        Default: tab for ``.tsv``/``.tab``, comma for ``.csv``; otherwise tab when the first
        line has one, else comma.
    has_header : bool or "auto"
        ``"auto"``: the first row is a header when its first two cells name the source and
        destination columns (``src``/``source``/``from`` and ``dst``/``target``/``to``).
    default_type : str
        The edge type when the file gives none.
    missing_endpoints : {"create", "refuse"}
        An edge endpoint that no node row defines (and the store does not hold): ``"create"``
        (the default) makes it a bare node and counts it in ``endpoint_only_nodes``;
        ``"refuse"`` raises and writes nothing.
    progress : None, bool or callable
        As in :func:`import_jsonl`.
    scopes : str or list of str, optional
        As in :func:`import_jsonl` (the endpoints are the file's nodes).

    Returns
    -------
    ImportSummary
        Rows read per kind and how many nodes and edges are new.

    Raises
    ------
    InputError
        ``"<path>:<line>: <what is wrong>"`` (wrong number of fields, unknown header column,
        a confidence that is not a number in [0, 1], ...); the store is left as before.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "links.tsv")
    >>> with open(p, "w") as f:
    ...     _ = f.write("src\\tdst\\ttype\\tconfidence\\na\\tb\\tRELATED_TO\\t0.5\\nb\\tc\\t\\t\\n")
    >>> kb = KnowledgeBase.open(":memory:")
    >>> import_edge_list(kb, p).edges
    2
    >>> kb.stats()["edges_by_type"], kb.annotation_presence()["extraction_confidence"]
    ({'LINK': 1, 'RELATED_TO': 1}, 1)
    """
    p = Path(path)
    name = str(path)
    if not isinstance(default_type, str) or not default_type:
        raise InputError(f"default_type must be a non-empty string, got {default_type!r}")
    check_text(default_type, "default_type")
    if has_header not in (True, False, "auto"):
        raise InputError(f"has_header must be True, False or 'auto', got {has_header!r}")
    scope_list = file_scopes(scopes)
    _check_readable(p, name)
    base = p.name[:-3] if p.name.endswith(".gz") else p.name
    ext = os.path.splitext(base)[1].lower()
    summary = ImportSummary()
    bar = ProgressBar(progress, p.name)
    try:
        with _open_text(p) as fh, kb.bulk():
            if delimiter is None:
                if ext in (".tsv", ".tab"):
                    delim = "\t"
                elif ext == ".csv":
                    delim = ","
                else:
                    first = fh.readline()
                    fh.seek(0)
                    delim = "\t" if "\t" in first else ","
            else:
                if not isinstance(delimiter, str) or len(delimiter) != 1:
                    raise InputError(f"delimiter must be one character, got {delimiter!r}")
                delim = delimiter
            w = RowWriter(kb, summary, missing_endpoints, scope_list)
            reader = csv.reader(_skip_comments(fh), delimiter=delim, strict=True)
            columns: list[str] | None = None
            header_seen = False
            try:
                for cells in reader:
                    lineno = reader.line_num
                    if lineno % _CHUNK == 0:
                        bar.update(lineno)
                    if not cells or all(not c.strip() for c in cells):
                        continue
                    if not header_seen:
                        header_seen = True
                        names = [_header_name(c) for c in cells]
                        is_header = has_header is True or (
                            has_header == "auto" and len(names) >= 2 and names[0] == "src" and names[1] == "dst"
                        )
                        if is_header:
                            columns = _check_header(names, cells, f"{name}:{lineno}")
                            continue
                    try:
                        w.edge(_edge_from_cells(cells, columns, default_type))
                    except RowError as exc:
                        raise InputError(f"{name}:{lineno}: {exc}") from None
                summary.lines = reader.line_num
            except csv.Error as exc:
                raise InputError(f"{name}:{reader.line_num}: malformed CSV ({exc})") from None
            except UnicodeDecodeError as exc:
                if not _from_reading(exc):
                    raise
                raise _not_utf8(p, name, exc, reader.line_num + 1) from None
            w.finish()
        bar.update(summary.lines)
    except _GZIP_ERRORS as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    except UnicodeDecodeError as exc:  # the delimiter sniffing reads the first line
        raise _not_utf8(p, name, exc, 1) from None
    except OSError as exc:
        raise _unreadable(name, exc) from None
    finally:
        bar.close()
    return summary


def _skip_comments(fh: io.TextIOBase) -> Iterator[str]:
    # Comment lines become empty lines so csv's line_num keeps counting physical lines.
    for line in fh:
        yield "\n" if line.startswith("#") else line


def _check_header(names: list[str], cells: list[str], where: str) -> list[str]:
    allowed = set(EDGE_KEYS)
    for raw, n in zip(cells, names):
        if n not in allowed:
            raise InputError(
                f"{where}: unknown column {shown(raw.strip())} in the header (expected {', '.join(EDGE_KEYS)})"
            )
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"{where}: column {shown(sorted(dup)[0])} appears twice in the header")
    for req in ("src", "dst"):
        if req not in names:
            raise InputError(f"{where}: the header has no {req!r} column")
    return names


def _edge_from_cells(cells: list[str], columns: list[str] | None, default_type: str) -> tuple[Any, ...]:
    if columns is None:
        if len(cells) not in (2, 3):
            raise RowError(f"expected 2 or 3 fields (src, dst[, type]) without a header, got {len(cells)}")
        cols: list[str] = ["src", "dst", "type"][: len(cells)]
    else:
        if len(cells) != len(columns):
            raise RowError(f"expected {len(columns)} fields ({', '.join(columns)}), got {len(cells)}")
        cols = columns
    row: dict[str, Any] = {}
    for key, raw in zip(cols, cells):
        v = raw.strip()
        if not v:
            if key in ("src", "dst"):
                raise RowError(f"empty {key!r}")
            if key == "type":
                continue
            row[key] = None
        elif key == "extraction_confidence":
            # Strictly a decimal number: Python's float() would also take '0_5' (as 5.0), 'inf'
            # and 'nan'.
            if _DECIMAL.fullmatch(v) is None:
                raise RowError(f"'extraction_confidence' must be a number in [0, 1], got {shown(v)}")
            row[key] = float(v)
        else:
            row[key] = v
    return edge_tuple(row, default_type)


def import_networkx(
    kb: KnowledgeBase,
    G: Any,
    *,
    type_attr: str = "type",
    unknown: str = "keep",
    progress: Progress = None,
    missing_endpoints: str = "create",
    title_attr: str | None = None,
    scopes_attr: str = "scopes",
    aliases_attr: str = "aliases",
    scopes: Any = None,
    where: str = "",
    structural: Sequence[str] = (),
    edge_type_fallback: str | None = None,
    lists_as_text: bool = False,
) -> ImportSummary:
    """Import a networkx graph (any of Graph, DiGraph, MultiGraph, MultiDiGraph) in one
    transaction.

    Node ids become ``str(node)``. Node attributes map to node keys (``type_attr`` -> ``type``,
    ``title_attr`` -> ``title``, ``body``, ``scopes_attr`` -> ``scopes``, ``lifecycle``;
    ``aliases_attr`` -> aliases of the node); edge attributes map to edge keys (``type_attr`` ->
    ``type``, default ``"LINK"``, and the annotation axes). An undirected edge is stored once,
    in the direction networkx lists it (the algorithms use the undirected projection). Parallel
    edges of one type collapse (the last one's annotations win).

    Every other attribute -- an edge's ``weight`` included -- is kept as an **attribute** of its
    node or edge (``unknown="keep"``, :mod:`conceptwalk.kb.attributes`): exported again, never
    read by an algorithm. conceptwalk's algorithms are unweighted as published (PPR's walk, the
    resource allocation's degrees and the shortest chain count edges, not weights), so a weight
    changes no answer; ``unknown="error"`` refuses such a graph instead, ``"ignore"`` drops the
    attributes (listed in ``ImportSummary.ignored_attributes``).

    A scopes or aliases value is a list of strings; from a graph file (``lists_as_text=True``)
    also a JSON list text (``'["t1", "t2"]'``) or a comma-separated string (scopes) / one alias
    (aliases). An attribute
    whose name ends in ``@json`` holds JSON text (how a list-valued attribute is written to
    GraphML and GEXF) and is kept decoded under the name without the suffix.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    G : networkx graph
        The graph to import (it is only read).
    type_attr : str
        The attribute holding node and edge types.
    unknown : {"keep", "ignore", "error"}
        What to do with other attributes: keep them as attributes (the default), ignore them
        (listed in ``ImportSummary.ignored_attributes``) or raise.
    missing_endpoints : {"create", "refuse"}
        An edge endpoint that no node row defines (and the store does not hold): ``"create"``
        (the default) makes it a bare node and counts it in ``endpoint_only_nodes``;
        ``"refuse"`` raises and writes nothing.
    progress : None, bool or callable
        Called with the number of nodes + edges done.
    title_attr : str, optional
        The attribute holding a node's title; default the first of ``title``, ``label``,
        ``name`` that a node has.
    scopes_attr, aliases_attr : str
        The attributes holding a node's scopes and aliases.
    scopes : str or list of str, optional
        Added to every node's scopes (a whole graph to scopes).
    where : str
        Prefixed to error messages (the graph file's name).
    structural : sequence of str
        Edge attributes that are the file's structure, not data (GraphML/GEXF edge ``id``s):
        never kept.
    edge_type_fallback : str, optional
        An edge attribute that gives the type when ``type_attr`` is absent (GEXF's ``label``).
    lists_as_text : bool
        Read scopes and aliases given as strings (graph files cannot hold lists).

    Returns
    -------
    ImportSummary
        Rows read per kind and how many nodes and edges are new.

    Raises
    ------
    InputError
        A bad attribute value (``node 'x': ...`` / ``edge ('a', 'b'): ...``), two nodes with the
        same ``str`` id, or an unknown attribute with ``unknown="error"``; nothing is written.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_node(1, type="CONCEPT", title="one", colour="red", aliases=["uno"])
    >>> G.add_edge(1, 2, type="RELATED_TO", authority="CURATED", weight=3)
    >>> kb = KnowledgeBase.open(":memory:")
    >>> s = import_networkx(kb, G)
    >>> s.nodes, s.edges, s.aliases, s.kept_attributes
    (2, 1, 1, ['colour', 'weight'])
    >>> kb.node("1")["title"], kb.aliases()
    ('one', {'uno': ['1']})
    """
    if unknown not in ("keep", "ignore", "error"):
        raise InputError(f"unknown must be 'keep', 'ignore' or 'error', got {unknown!r}")
    for arg, val in (("type_attr", type_attr), ("scopes_attr", scopes_attr), ("aliases_attr", aliases_attr)):
        if not isinstance(val, str) or not val:
            raise InputError(f"{arg} must be a non-empty string, got {val!r}")
    if title_attr is not None and (not isinstance(title_attr, str) or not title_attr):
        raise InputError(f"title_attr must be a non-empty string or None, got {title_attr!r}")
    if not (hasattr(G, "nodes") and hasattr(G, "edges") and hasattr(G, "is_multigraph")):
        raise InputError(f"G must be a networkx graph, got {type(G).__name__}")
    scope_list = file_scopes(scopes)
    pre = f"{where}: " if where else ""
    node_keys: dict[str, str] = {"body": "body", "lifecycle": "lifecycle", type_attr: "type", scopes_attr: "scopes"}
    titles = (title_attr,) if title_attr is not None else ("title", "label", "name")
    edge_keys = {k: k for k in ANNOTATION_AXES}
    edge_keys[type_attr] = "type"
    skip_edge = set(structural)
    ignored: set[str] = set()
    kept: set[str] = set()
    summary = ImportSummary()
    bar = ProgressBar(progress, "networkx", total=G.number_of_nodes() + G.number_of_edges())
    done = 0

    def other(k: Any, v: Any, at: str, out: dict[str, Any], known: Any) -> None:
        if not isinstance(k, str) or unknown != "keep":
            if unknown == "error":
                raise InputError(
                    f"{pre}{at}: unknown attribute {shown(k)} "
                    f"(known: {', '.join(sorted(known))}; pass unknown='keep' to keep it as an attribute, "
                    f"or unknown='ignore')"
                )
            ignored.add(str(k))
            return
        if k.endswith("@json") and isinstance(v, str):
            try:
                v = json.loads(v)
            except ValueError:
                raise InputError(f"{pre}{at}: attribute {shown(k)} is not JSON text: {shown(v)}") from None
            k = k[: -len("@json")]
        kept.add(k)
        out[k] = v

    try:
        with kb.bulk():
            w = RowWriter(kb, summary, missing_endpoints, scope_list, ordered=True)
            ids: dict[str, Any] = {}
            for n, attrs in G.nodes(data=True):
                sid = str(n)
                at = f"node {shown(n)}"
                if sid in ids:
                    raise InputError(f"{pre}nodes {shown(ids[sid])} and {shown(n)} both become id {shown(sid)}")
                ids[sid] = n
                row: dict[str, Any] = {"id": sid}
                extra: dict[str, Any] = {}
                aliases: Any = None
                title_from = next((t for t in titles if t in attrs), None)
                for k, v in attrs.items():
                    if k == title_from:
                        row["title"] = v
                    elif k == aliases_attr:
                        aliases = v
                    elif isinstance(k, str) and k in node_keys:
                        key = node_keys[k]
                        row[key] = _list_value(v, f"{pre}{at}", k) if key == "scopes" and lists_as_text else v
                    else:
                        other(k, v, at, extra, [*node_keys, aliases_attr, *titles])
                try:
                    w.node(node_tuple(row))
                except RowError as exc:
                    raise InputError(f"{pre}{at}: {exc}") from None
                for k, v in extra.items():
                    w.node_attribute(sid, k, v, f"{pre}{at}")
                if aliases is not None:
                    if not lists_as_text and not isinstance(aliases, (list, tuple)):
                        raise InputError(f"{pre}{at}: {aliases_attr!r} must be a list of strings, got {shown(aliases)}")
                    for a in _list_value(aliases, f"{pre}{at}", aliases_attr, one=True) or []:
                        try:
                            w.alias(alias_pair((a, sid)), f"{pre}{at}")
                        except RowError as exc:
                            raise InputError(f"{pre}{at}: {aliases_attr}: {exc}") from None
                done += 1
                if done % _CHUNK == 0:
                    bar.update(done)
            batch: list[tuple[Any, ...]] = []  # the common rows (a type at most), written in batches
            default_type = DEFAULT_EDGE_TYPE
            for u, v, attrs in G.edges(data=True):
                su, sv = str(u), str(v)
                if su and sv and (not attrs or (len(attrs) == 1 and type(attrs.get(type_attr)) is str)):
                    batch.append((su, sv, attrs.get(type_attr) or default_type, Z, Z, Z, NULL_CONFIDENCE, Z, 0))
                    if len(batch) >= _CHUNK:
                        w.extend_edges(batch)
                        done += len(batch)
                        batch = []
                        bar.update(done)
                    continue
                if batch:  # the rows keep the graph's order (of two with one key, the later wins)
                    w.extend_edges(batch)
                    done += len(batch)
                    batch = []
                at = f"edge ({shown(u)}, {shown(v)})"
                row = {"src": su, "dst": sv}
                extra = {}
                for k, val in attrs.items():
                    if isinstance(k, str) and k in edge_keys:
                        row[edge_keys[k]] = val
                    elif k in skip_edge:
                        continue
                    elif k == edge_type_fallback and type_attr not in attrs:
                        row["type"] = val
                    else:
                        other(k, val, at, extra, list(edge_keys))
                try:
                    t = edge_tuple(row)
                except RowError as exc:
                    raise InputError(f"{pre}{at}: {exc}") from None
                w.edge(t)
                for k, val in extra.items():
                    w.edge_attribute(t[0], t[1], t[2], k, val, f"{pre}{at}")
                done += 1
                if done % _CHUNK == 0:
                    bar.update(done)
            if batch:
                w.extend_edges(batch)
                done += len(batch)
            w.finish()
        summary.lines = done
        summary.ignored_attributes = sorted(ignored)
        summary.kept_attributes = sorted(kept)
        bar.update(done)
    finally:
        bar.close()
    return summary


def _list_value(v: Any, at: str, key: str, one: bool = False) -> list[str] | None:
    """A list-valued attribute (scopes, aliases) as a graph file may hold it: a list, a JSON list
    text, or a comma-separated string (scopes) / one string (aliases)."""
    if v is None:
        return None
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                v = json.loads(s)
            except ValueError:
                raise InputError(f"{at}: {key!r} starts with '[' but is not a JSON list: {shown(v)}") from None
        elif one:
            return [s] if s else []
        else:
            return [p.strip() for p in s.split(",") if p.strip()]
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return list(v)
    raise InputError(f"{at}: {key!r} must be a list of strings (or its JSON text), got {shown(v)}")
