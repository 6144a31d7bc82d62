"""The formats people's graphs are in, into the store and out again: OBO (fastobo), OWL, RDF and
SKOS (rdflib), GraphML, GEXF and GML (networkx), Neo4j's CSV export; and exports to JSONL,
GraphML and GEXF for a caller.

Each import is one transaction (a file that fails leaves the store as it was, and the error
names the line or element), reports its counts by kind, and the time in the parser apart from
the time mapping and writing the rows (:class:`~conceptwalk.kb.importers.ImportSummary`). The
parsers are optional dependencies: ``pip install "conceptwalk[formats]"``. The mapping of each
format is in ``docs/formats/`` (one page per format).

Examples
--------
>>> import os, tempfile
>>> from conceptwalk.kb import KnowledgeBase
>>> p = os.path.join(tempfile.mkdtemp(), "tiny.obo")
>>> with open(p, "w") as f:
...     _ = f.write('[Term]\\nid: X:1\\nname: cell\\nsynonym: "cellula" EXACT []\\n\\n'
...                 '[Term]\\nid: X:2\\nname: neuron\\nis_a: X:1 ! cell\\n')
>>> kb = KnowledgeBase.open(":memory:")
>>> s = import_file(kb, p)
>>> s.nodes, s.edges, s.aliases, s.edge_types
(2, 1, 1, {'is_a': 1})
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, shown
from ..graph import Caller
from ..graph.linkgraph import annotation_value
from .attributes import edge_attributes, has_tables, node_attributes
from .importers import (
    ENDPOINT_EXAMPLES,
    ImportSummary,
    Progress,
    ProgressBar,
    RowWriter,
    file_scopes,
    import_edge_list,
    import_jsonl,
    import_networkx,
)
from .state import parse_scopes
from .store import ANNOTATION_AXES, NULL_CONFIDENCE, KnowledgeBase, RowError, check_text, edge_tuple, node_tuple
from .store import NULL_TEXT as Z  # edge tuples with no annotation: NULLs as the store's sentinels

__all__ = [
    "ENDPOINT_EXAMPLES",
    "IMPORT_FORMATS",
    "EXPORT_FORMATS",
    "ExportSummary",
    "format_of",
    "import_file",
    "import_obo",
    "import_rdf",
    "import_graph_file",
    "import_neo4j_csv",
    "export_file",
]

#: What ``conceptwalk import --format`` takes.
IMPORT_FORMATS = ("jsonl", "edges", "obo", "owl", "rdf", "ttl", "skos", "graphml", "gexf", "gml", "neo4j-csv")
#: What ``conceptwalk export --format`` takes.
EXPORT_FORMATS = ("jsonl", "graphml", "gexf")

_EXTENSIONS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "edges",
    ".tsv": "edges",
    ".tab": "edges",
    ".obo": "obo",
    ".owl": "owl",
    ".rdf": "rdf",
    ".xml": "rdf",
    ".nt": "rdf",
    ".n3": "rdf",
    ".nq": "rdf",
    ".trig": "rdf",
    ".jsonld": "rdf",
    ".ttl": "ttl",
    ".graphml": "graphml",
    ".gexf": "gexf",
    ".gml": "gml",
}
#: rdflib's parser per extension (``.owl`` files are RDF/XML unless they say otherwise).
_RDF_SYNTAX = {
    ".owl": "xml",
    ".rdf": "xml",
    ".xml": "xml",
    ".ttl": "turtle",
    ".nt": "nt",
    ".n3": "n3",
    ".nq": "nquads",
    ".trig": "trig",
    ".jsonld": "json-ld",
}
_QUADS = ("nquads", "trig", "trix")
_OBSOLETE = ("skip", "keep")
#: The lifecycle an obsolete term kept with ``obsolete="keep"`` gets.
OBSOLETE_LIFECYCLE = "obsolete"
_SYNONYM_SCOPES = ("EXACT", "RELATED", "NARROW", "BROAD")


def _base_ext(path: str | os.PathLike[str]) -> tuple[str, bool]:
    name = os.path.basename(os.fspath(path)).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    return os.path.splitext(name)[1], gz


def format_of(path: str | os.PathLike[str]) -> str:
    """The import format a file's extension says (``.gz`` looked through).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    str
        One of :data:`IMPORT_FORMATS`.

    Raises
    ------
    InputError
        An extension no format claims (pass the format).

    Examples
    --------
    >>> format_of("go.obo.gz"), format_of("thesaurus.ttl"), format_of("g.graphml")
    ('obo', 'ttl', 'graphml')
    """
    ext, _ = _base_ext(path)
    fmt = _EXTENSIONS.get(ext)
    if fmt is None:
        raise InputError(
            f"{os.fspath(path)}: cannot tell the format from the extension {ext or '(none)'!r}; "
            f"pass the format ({', '.join(IMPORT_FORMATS)})"
        )
    return fmt


def _needs(module: str, fmt: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(
            f'importing {fmt} needs the {module.split(".")[0]} package: pip install "conceptwalk[formats]"'
        ) from None


def _check_file(path: str | os.PathLike[str]) -> str:
    name = os.fspath(path)
    if os.path.isdir(name):
        raise InputError(f"{name}: cannot read the file: is a directory, not a file")
    if not os.path.exists(name):
        raise InputError(f"{name}: cannot read the file: no such file")
    return name


def _open_binary(name: str) -> Any:
    """The file as bytes (a ``.gz`` file decompressed)."""
    _, gz = _base_ext(name)
    return gzip.open(name, "rb") if gz else open(name, "rb")


#: The XML a file may not hold: any DTD (``<!DOCTYPE ...>``), so no entity declaration, no
#: external entity and no external DTD subset (defusedxml's three refusals, all on).
_XML_REFUSALS = {"forbid_dtd": True, "forbid_entities": True, "forbid_external": True}


class _RootReached(Exception):
    """The scan of :func:`_read_xml` met the root element: the prolog, where a DTD can be, is over."""


def _read_xml(name: str, label: str) -> io.BytesIO:
    """The file's bytes (a ``.gz`` file decompressed), read once, its prolog through
    defusedxml's expat reader first: a file that declares a DTD is refused at its ``<!DOCTYPE``
    before any entity is expanded (billion laughs), read (external entities,
    ``file:///etc/passwd``) or skipped (an undefined entity after an external DTD subset, which
    expat would otherwise let pass). The parser (rdflib's RDF/XML and TriX readers, networkx's
    GraphML and GEXF readers) then reads these same bytes, never the file again.

    A DTD can only stand in the prolog, before the root element; entities can only be declared
    in a DTD. So the scan stops at the root element's start tag and costs next to nothing: the
    parser, expat too, refuses a DOCTYPE after it as malformed XML, and reports an undefined
    entity (the only kind left: no DTD) as malformed with its line.

    Raises
    ------
    InputError
        ``"<path>:<line>: refused: ... DTD ..."`` (E428), or ``"<path>:<line>: malformed <label>
        (...)"`` for a prolog expat cannot read.
    """
    expatreader = _needs("defusedxml.expatreader", label)
    from xml.sax import SAXParseException
    from xml.sax.handler import ContentHandler

    from defusedxml import DefusedXmlException, DTDForbidden

    class Prolog(ContentHandler):
        def startElement(self, name: str, attrs: Any) -> None:  # noqa: N802 (SAX's name)
            raise _RootReached

    parser = expatreader.create_parser(**_XML_REFUSALS)
    parser.setContentHandler(Prolog())
    buf = io.BytesIO()
    scanning = True
    with _open_binary(name) as fh:
        try:
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                buf.write(chunk)
                if scanning:
                    try:
                        parser.feed(chunk)
                    except _RootReached:
                        scanning = False
            if scanning:
                parser.close()  # a file that ends before any element: expat says what is wrong
        except DefusedXmlException as exc:
            what = getattr(exc, "name", None) if isinstance(exc, DTDForbidden) else None
            decl = f" ({shown('<!DOCTYPE ' + what)})" if isinstance(what, str) else ""
            raise InputError(
                f"{name}:{parser.getLineNumber()}: refused: the file declares a DTD{decl}; "
                "conceptwalk reads no XML DTD, entity declaration or external entity (entity expansion "
                "and external files); remove the DOCTYPE, replacing each entity by its text"
            ) from None
        except SAXParseException as exc:
            raise InputError(f"{name}:{exc.getLineNumber()}: malformed {label} ({exc.getMessage()})") from None
    buf.seek(0)
    return buf


def _bump(d: dict[str, int], key: str, n: int = 1) -> None:
    d[key] = d.get(key, 0) + n


# ---------------------------------------------------------------------------------------- files


def import_file(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    scopes: Any = None,
    progress: Progress = None,
    missing_endpoints: str = "create",
    **options: Any,
) -> ImportSummary:
    """Import one file in the format its extension says (or ``format``), in one transaction.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        The file (``.gz`` compressed too).
    format : str, optional
        One of :data:`IMPORT_FORMATS`; default :func:`format_of` the path.
    scopes : str or list of str, optional
        A whole file to scopes: added to every node the file writes.
    progress : None, bool or callable
        As the importers' argument.
    missing_endpoints : {"create", "refuse"}
        As the importers' argument.
    **options
        The format's own options (:func:`import_obo`, :func:`import_rdf`,
        :func:`import_graph_file`, :func:`import_neo4j_csv`,
        :func:`~conceptwalk.kb.importers.import_edge_list`).

    Returns
    -------
    ImportSummary

    Raises
    ------
    InputError
        An unknown format or option, or what the format's importer raises; nothing is written.

    Examples
    --------
    See the module's example.
    """
    fmt = format_of(path) if format is None else format
    for key, value in options.items():
        check_text(value, key)  # (a str option, e.g. node_type: named, not met at the write)
    common = {"progress": progress, "missing_endpoints": missing_endpoints, "scopes": scopes}
    fn: Callable[..., ImportSummary]
    if fmt == "jsonl":
        fn = import_jsonl
    elif fmt == "edges":
        fn = import_edge_list
    elif fmt == "obo":
        fn = import_obo
    elif fmt in ("owl", "rdf", "ttl", "skos"):
        fn = import_rdf
        if fmt == "ttl" and "syntax" not in options:
            options["syntax"] = "turtle"
    elif fmt in ("graphml", "gexf", "gml"):
        fn = import_graph_file
        options["format"] = fmt
    elif fmt == "neo4j-csv":
        return import_neo4j_csv(kb, [path], **common, **options)
    else:
        raise InputError(f"format must be one of {', '.join(IMPORT_FORMATS)}, got {shown(fmt)}")
    try:
        return fn(kb, path, **common, **options)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            bad = str(exc).split("argument")[-1].strip()
            raise InputError(f"format {fmt!r} takes no option {bad}") from None
        raise


# ------------------------------------------------------------------------------------------ OBO


def import_obo(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    *,
    obsolete: str = "skip",
    synonym_scopes: Iterable[str] = _SYNONYM_SCOPES,
    node_type: str = "CONCEPT",
    scopes: Any = None,
    progress: Progress = None,
    missing_endpoints: str = "create",
) -> ImportSummary:
    """Import an OBO ontology (``.obo``, ``.obo.gz``) through fastobo, streaming its frames.

    Mapping: each ``[Term]`` -> a node of ``node_type`` (``name`` -> title, ``def`` -> body);
    each ``synonym`` whose scope is in ``synonym_scopes`` -> an alias of the term, and all of
    them, with their scopes (EXACT first), -> the attribute ``synonyms``; ``is_a`` -> an edge of
    type ``is_a`` to the parent; each ``relationship: R T`` -> an edge of type ``R``; every other
    clause (``xref``, ``alt_id``, ``namespace``, ``subset``, ``comment``, ``property_value``,
    ``intersection_of``, ...) -> an attribute named by its tag holding its values as written
    (a list). ``[Typedef]`` and ``[Instance]`` frames are counted in ``skipped``.
    Obsolete terms (``is_obsolete: true``) are skipped, or kept with lifecycle ``"obsolete"``
    (``obsolete="keep"``).

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        The OBO file.
    obsolete : {"skip", "keep"}
        What to do with obsolete terms.
    synonym_scopes : iterable of str
        The synonym scopes that become aliases (default all four).
    node_type : str
        The type of the term nodes.
    scopes : str or list of str, optional
        A whole file to scopes.
    progress, missing_endpoints
        As the other importers' arguments (progress counts frames).

    Returns
    -------
    ImportSummary
        With ``parse_seconds`` (fastobo) apart from ``write_seconds``.

    Raises
    ------
    InputError
        ``"<path>:<line>: malformed OBO (...)"`` and the like; nothing is written.

    Examples
    --------
    See :mod:`conceptwalk.kb.formats`.
    """
    fastobo = _needs("fastobo", "OBO")
    name = _check_file(path)
    if obsolete not in _OBSOLETE:
        raise InputError(f"obsolete must be 'skip' or 'keep', got {shown(obsolete)}")
    wanted = set(synonym_scopes)
    bad = wanted - set(_SYNONYM_SCOPES)
    if bad:
        raise InputError(f"synonym_scopes must be among {', '.join(_SYNONYM_SCOPES)}, got {shown(sorted(bad)[0])}")
    if not isinstance(node_type, str) or not node_type:
        raise InputError(f"node_type must be a non-empty string, got {node_type!r}")
    scope_list = file_scopes(scopes)
    rank = {s: i for i, s in enumerate(_SYNONYM_SCOPES)}
    summary = ImportSummary()
    bar = ProgressBar(progress, os.path.basename(name))
    parse = 0.0
    t_start = time.perf_counter()
    frames = 0
    last = "the header"
    try:
        with _open_binary(name) as fh, kb.bulk():
            w = RowWriter(kb, summary, missing_endpoints, scope_list, ordered=True)
            try:
                t0 = time.perf_counter()
                doc = fastobo.iter(fh)
                it = iter(doc)
                parse += time.perf_counter() - t0
                TermFrame = fastobo.term.TermFrame
                while True:
                    t0 = time.perf_counter()
                    try:
                        frame = next(it)
                    except StopIteration:
                        parse += time.perf_counter() - t0
                        break
                    parse += time.perf_counter() - t0
                    frames += 1
                    if frames % 4096 == 0:
                        bar.update(frames)
                    if not isinstance(frame, TermFrame):
                        _bump(summary.skipped, type(frame).__name__.replace("Frame", "").lower())
                        continue
                    tid = str(frame.id)
                    last = f"term {tid}"
                    _obo_term(w, frame, tid, node_type, obsolete, wanted, rank, f"{name}: {last}", summary)
            except SyntaxError as exc:
                line = exc.lineno if exc.lineno is not None else "?"
                raise InputError(f"{name}:{line}: malformed OBO ({exc.msg})") from None
            except (ValueError, RuntimeError) as exc:
                raise InputError(f"{name}: malformed OBO after {last} ({exc})") from None
            except OSError as exc:  # fastobo's reader: "stream did not contain valid UTF-8", ...
                if isinstance(exc, gzip.BadGzipFile):
                    raise
                raise InputError(f"{name}: cannot read the OBO file after {last} ({exc})") from None
            except TypeError as exc:
                # fastobo.iter reads the header at once and reports a failed read (bytes that
                # are not UTF-8, a corrupt .gz) as "expected path or binary file handle"
                if exc.__cause__ is None:
                    raise
                raise InputError(f"{name}: cannot read the OBO file ({exc.__cause__})") from None
            except BaseException as exc:
                # a panic in fastobo's Rust parser (pyo3's PanicException, a BaseException) on a
                # clause it failed to reject: fastobo-py 0.14's (Rust fastobo 0.15) `unreachable!()` on some
                # term clauses (a fuzz finding); the file's fault, not a crash of the import
                if type(exc).__name__ != "PanicException":
                    raise
                raise InputError(f"{name}: malformed OBO after {last} (fastobo failed: {exc})") from None
            w.finish()
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not valid UTF-8 ({exc.reason})") from None
    finally:
        bar.close()
    summary.lines = frames
    summary.parse_seconds = parse
    summary.write_seconds = time.perf_counter() - t_start - parse
    return summary


#: The clauses :func:`_obo_term` maps, by kind (the others become attributes).
_IS_A, _NAME, _SYNONYM, _DEF, _RELATIONSHIP, _OBSOLETE_CLAUSE = range(1, 7)
_OBO_KINDS: dict[type, int] = {}


def _obo_kinds() -> dict[type, int]:
    """fastobo's clause class of each tag :func:`_obo_term` maps (the others become attributes)."""
    if not _OBO_KINDS:
        import fastobo

        t = fastobo.term
        _OBO_KINDS.update(
            {
                t.IsAClause: _IS_A,
                t.NameClause: _NAME,
                t.SynonymClause: _SYNONYM,
                t.DefClause: _DEF,
                t.RelationshipClause: _RELATIONSHIP,
                t.IsObsoleteClause: _OBSOLETE_CLAUSE,
            }
        )
    return _OBO_KINDS


def _obo_term(
    w: RowWriter,
    frame: Any,
    tid: str,
    node_type: str,
    obsolete: str,
    wanted: set[str],
    rank: dict[str, int],
    where: str,
    summary: ImportSummary,
) -> None:
    title = body = None
    is_obsolete = False
    synonyms: list[tuple[str, str]] = []
    parents: list[tuple[str, str]] = []
    extra: dict[str, list[str]] = {}
    kinds = _obo_kinds()
    for clause in frame:
        # dispatch on the clause's class (one per tag): no raw_tag() call and string compares
        # for the common clauses, which the ontologies' millions of is_a lines make count
        kind = kinds.get(type(clause), 0)
        if kind == _IS_A:
            parents.append(("is_a", str(clause.term)))
        elif kind == _NAME:
            title = clause.name
        elif kind == _SYNONYM:
            syn = clause.synonym
            synonyms.append((str(syn.desc), str(syn.scope)))
        elif kind == _DEF:
            body = str(clause.definition)
        elif kind == _RELATIONSHIP:
            parents.append((str(clause.typedef), str(clause.term)))
        elif kind == _OBSOLETE_CLAUSE:
            is_obsolete = bool(clause.obsolete)
        else:
            extra.setdefault(clause.raw_tag(), []).append(str(clause.raw_value()))
    if is_obsolete and obsolete == "skip":
        _bump(summary.skipped, "obsolete")
        return
    row: dict[str, Any] = {"id": tid, "type": node_type}
    if title is not None:
        row["title"] = title
    if body is not None:
        row["body"] = body
    if is_obsolete:
        row["lifecycle"] = OBSOLETE_LIFECYCLE
    try:
        w.node(node_tuple(row))
    except RowError as exc:
        raise InputError(f"{where}: {exc}") from None
    if parents:  # ids and types fastobo parsed: non-empty strings; edge_tuple's row, no annotation given
        w.extend_edges([(tid, target, typ, Z, Z, Z, NULL_CONFIDENCE, Z, 0) for typ, target in parents])
    if synonyms:
        synonyms.sort(key=lambda st: rank.get(st[1], len(rank)))  # EXACT first; stable otherwise
        w.node_attribute(tid, "synonyms", [{"text": t, "scope": s} for t, s in synonyms], where)
        seen = {title}
        for text, scope in synonyms:
            if scope in wanted and text not in seen and text:
                seen.add(text)
                w.alias((text, tid), where)
    for tag, values in extra.items():
        w.node_attribute(tid, tag, values, where)


# ------------------------------------------------------------------------------------------ RDF

_SKOS = "http://www.w3.org/2004/02/skos/core#"
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_RDFS = "http://www.w3.org/2000/01/rdf-schema#"
_OWL = "http://www.w3.org/2002/07/owl#"
_OBO = "http://purl.obolibrary.org/obo/"
_OIO = "http://www.geneontology.org/formats/oboInOwl#"
_DCT = "http://purl.org/dc/terms/"
_TYPE = _RDF + "type"
#: Labels: the title is the first of these (in this order) in the preferred language.
_TITLE_PREDICATES = (_SKOS + "prefLabel", _RDFS + "label")
#: Alternative labels and synonyms -> aliases (and the attribute ``synonyms`` with the scope).
_ALIAS_PREDICATES = {
    _SKOS + "altLabel": "ALT",
    _SKOS + "hiddenLabel": "HIDDEN",
    _OIO + "hasExactSynonym": "EXACT",
    _OIO + "hasRelatedSynonym": "RELATED",
    _OIO + "hasNarrowSynonym": "NARROW",
    _OIO + "hasBroadSynonym": "BROAD",
}
#: The body: the first of these present.
_BODY_PREDICATES = (_SKOS + "definition", _OBO + "IAO_0000115", _DCT + "description", _RDFS + "comment")
_CLASS_TYPES = {_SKOS + "Concept", _OWL + "Class", _RDFS + "Class"}
_PROPERTY_TYPES = {_OWL + "ObjectProperty", _OWL + "DatatypeProperty", _OWL + "AnnotationProperty", _RDF + "Property"}
_VOCAB = (_RDF, _RDFS, _OWL, _SKOS)
#: Stored in the other direction, as the first: one direction kept (the graph is undirected).
_INVERSE = {_SKOS + "narrower": _SKOS + "broader", _SKOS + "narrowerTransitive": _SKOS + "broaderTransitive"}
#: Symmetric: stored once, from the smaller id.
_SYMMETRIC = {
    _SKOS + "related",
    _SKOS + "exactMatch",
    _SKOS + "closeMatch",
    _SKOS + "relatedMatch",
    _OWL + "equivalentClass",
    _OWL + "sameAs",
}
_OBO_ID = re.compile(r"([A-Za-z][A-Za-z0-9]*)_([A-Za-z0-9]+)")


class _Ids:
    """IRIs as ids: an OBO PURL as its CURIE (``HP:0000118``), an IRI under a prefix the file
    binds as ``prefix:local``, any other IRI as it is."""

    def __init__(self, graph: Any, mode: str) -> None:
        self.mode = mode
        self.cache: dict[str, str] = {}
        prefixes = []
        for prefix, ns in graph.namespaces():
            if prefix and str(ns) != _OBO:
                prefixes.append((str(ns), str(prefix)))
        prefixes.sort(key=lambda p: -len(p[0]))  # the longest namespace first
        self.prefixes = prefixes

    def __call__(self, iri: Any) -> str:
        s = str(iri)
        got = self.cache.get(s)
        if got is not None:
            return got
        out = s
        if self.mode == "curie":
            if s.startswith(_OBO):
                m = _OBO_ID.fullmatch(s[len(_OBO) :])
                if m:
                    out = f"{m.group(1)}:{m.group(2)}"
            if out == s:
                for ns, prefix in self.prefixes:
                    if s.startswith(ns) and len(s) > len(ns):
                        local = s[len(ns) :]
                        if "/" not in local and "#" not in local:
                            out = f"{prefix}:{local}"
                            break
        self.cache[s] = out
        return out


def _pick(literals: list[Any], languages: list[str] | None) -> Any:
    """The literal in the first preferred language, else one without a language, else the first."""
    if not literals:
        return None
    if languages:
        for lang in languages:
            for lit in literals:
                if (lit.language or "").lower() == lang:
                    return lit
    for lit in literals:
        if not lit.language:
            return lit
    return sorted(literals, key=lambda lt: (lt.language or "", str(lt)))[0]


def import_rdf(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    *,
    syntax: str | None = None,
    languages: Iterable[str] | None = None,
    graph_scopes: str | Mapping[str, Iterable[str]] | None = None,
    obsolete: str = "skip",
    node_type: str = "CONCEPT",
    ids: str = "curie",
    scopes: Any = None,
    progress: Progress = None,
    missing_endpoints: str = "create",
) -> ImportSummary:
    """Import RDF -- an OWL ontology, a SKOS thesaurus, any RDF graph -- through rdflib.

    Mapping: every IRI that is the subject of a triple -> a node (blank-node subjects are
    counted in ``skipped``; the ``owl:Ontology`` header too). Its type: ``node_type`` for an
    ``skos:Concept``, ``owl:Class`` or ``rdfs:Class``, ``PROPERTY`` for a property,
    ``CONCEPT_SCHEME`` for a ``skos:ConceptScheme``, ``INSTANCE`` for anything else typed (with
    an ``rdf:type`` edge to its class), none when untyped. Title: ``skos:prefLabel``, else
    ``rdfs:label``, in the first of ``languages`` present (else one without a language); the
    other labels, ``skos:altLabel``, ``skos:hiddenLabel`` and oboInOwl's synonyms -> aliases
    (with their predicate kept in the attribute ``synonyms``). Body: ``skos:definition``, else
    IAO's definition, ``dcterms:description``, ``rdfs:comment``. Each triple whose object is an
    IRI -> an edge typed by the predicate's CURIE (``skos:broader``, ``rdfs:subClassOf``, ...):
    ``skos:narrower`` is stored as ``skos:broader`` from the other end and symmetric predicates
    (``skos:related``, the ``skos:*Match``, ``owl:equivalentClass``, ``owl:sameAs``) once, from
    the smaller id; an ``rdfs:subClassOf`` an OWL restriction (``owl:onProperty P;
    owl:someValuesFrom C``) -> an edge of type P to C. Other literals -> attributes named by the
    predicate's CURIE. ``owl:deprecated true`` -> skipped, or kept with lifecycle ``obsolete``.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        The file: RDF/XML (``.owl``, ``.rdf``), Turtle, N-Triples, N3, N-Quads, TriG, JSON-LD.
    syntax : str, optional
        rdflib's parser name; default from the extension.
    languages : iterable of str, optional
        Preferred label languages, in order (``["en", "fr"]``); when given, literals in other
        languages are not imported (literals without a language always are).
    graph_scopes : "name" or mapping, optional
        Scopes from the named graphs of N-Quads/TriG: ``"name"`` gives a node described in graph
        G the scope G (as an id); a mapping gives it ``graph_scopes[G]`` (graphs not in it: none).
    obsolete : {"skip", "keep"}
        What to do with ``owl:deprecated`` resources.
    node_type : str
        The type of class and concept nodes.
    ids : {"curie", "iri"}
        Node ids as CURIEs (the default) or full IRIs.
    scopes, progress, missing_endpoints
        As the other importers' arguments.

    Returns
    -------
    ImportSummary
        With ``parse_seconds`` (rdflib) apart from ``write_seconds``.

    Raises
    ------
    InputError
        ``"<path>:<line>: malformed RDF (...)"``; an RDF/XML or TriX file that declares a DTD,
        ``"<path>:<line>: refused: the file declares a DTD ..."`` (no entity is expanded and no
        external file read); a JSON-LD file whose ``@context`` names another document,
        ``"<path>: refused: a JSON-LD @context names another document ..."`` (nothing fetched);
        nothing is written.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "t.ttl")
    >>> with open(p, "w") as f:
    ...     _ = f.write('@prefix skos: <http://www.w3.org/2004/02/skos/core#> . @prefix ex: <http://ex.org/> .\\n'
    ...                 'ex:tls a skos:Concept ; skos:prefLabel "TLS"@en ; skos:altLabel "SSL"@en ;'
    ...                 ' skos:broader ex:crypto .\\n')
    >>> kb = KnowledgeBase.open(":memory:")
    >>> s = import_rdf(kb, p)
    >>> kb.node("ex:tls")["title"], kb.aliases(), s.edge_types
    ('TLS', {'SSL': ['ex:tls']}, {'skos:broader': 1})
    """
    rdflib = _needs("rdflib", "RDF")
    name = _check_file(path)
    ext, _ = _base_ext(name)
    fmt = syntax or _RDF_SYNTAX.get(ext) or "xml"
    if obsolete not in _OBSOLETE:
        raise InputError(f"obsolete must be 'skip' or 'keep', got {shown(obsolete)}")
    if ids not in ("curie", "iri"):
        raise InputError(f"ids must be 'curie' or 'iri', got {shown(ids)}")
    if not isinstance(node_type, str) or not node_type:
        raise InputError(f"node_type must be a non-empty string, got {node_type!r}")
    langs = (
        None
        if languages is None
        else [str(x).lower() for x in ([languages] if isinstance(languages, str) else languages)]
    )
    if graph_scopes is not None and graph_scopes != "name" and not isinstance(graph_scopes, Mapping):
        raise InputError(f"graph_scopes must be 'name' or a mapping of graph to scopes, got {shown(graph_scopes)}")
    scope_list = file_scopes(scopes)
    t0 = time.perf_counter()
    quads = fmt in _QUADS
    store = rdflib.Dataset() if quads else rdflib.Graph()
    try:
        kind = _rdf_kind(rdflib, fmt)
        if kind == "xml":
            source = _read_xml(name, "RDF")
        elif kind == "json-ld":
            source = _read_jsonld(name)
        else:
            source = _open_binary(name)
        with source as fh:
            store.parse(source=fh, format=fmt, publicID=Path(name).resolve().as_uri())
    except InputError:
        raise
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    except Exception as exc:  # the parsers raise many kinds; each is the file's fault
        raise InputError(f"{name}:{_rdf_line(exc)}: malformed RDF ({_rdf_why(exc)})") from None
    parse = time.perf_counter() - t0
    t1 = time.perf_counter()
    summary = ImportSummary()
    idf = _Ids(store, ids)
    Literal, URIRef = rdflib.Literal, rdflib.URIRef
    # subject -> what it says
    subjects: dict[Any, dict[str, Any]] = {}
    in_graphs: dict[Any, set[str]] = {}
    bnode_subjects = set()
    restriction: dict[Any, dict[str, Any]] = {}
    triples: Iterator[Any]
    if quads:
        triples = ((s, p, o, g) for s, p, o, g in store.quads((None, None, None, None)))
    else:
        triples = ((s, p, o, None) for s, p, o in store)
    n_triples = 0
    for s, p, o, g in triples:
        n_triples += 1
        if not isinstance(s, URIRef):
            bnode_subjects.add(s)
            if str(p) in (_OWL + "onProperty", _OWL + "someValuesFrom", _OWL + "allValuesFrom", _OWL + "hasValue"):
                restriction.setdefault(s, {})[str(p)] = o
            continue
        d = subjects.get(s)
        if d is None:
            d = subjects[s] = {"types": [], "lits": {}, "objs": []}
        if (
            g is not None
            and graph_scopes is not None
            and not (isinstance(g, URIRef) and str(g) == "urn:x-rdflib:default")
        ):
            in_graphs.setdefault(s, set()).add(str(g.identifier if hasattr(g, "identifier") else g))
        ps = str(p)
        if isinstance(o, Literal):
            if langs is not None and o.language and o.language.lower() not in langs:
                continue
            d["lits"].setdefault(ps, []).append(o)
        elif ps == _TYPE:
            d["types"].append(str(o))
        else:
            d["objs"].append((ps, o))
    bar = ProgressBar(progress, os.path.basename(name), total=len(subjects))
    try:
        with kb.bulk():
            w = RowWriter(kb, summary, missing_endpoints, scope_list, ordered=True)
            done = 0
            for s, d in subjects.items():
                done += 1
                if done % 4096 == 0:
                    bar.update(done)
                types = d["types"]
                if _OWL + "Ontology" in types:
                    _bump(summary.skipped, "ontology header")
                    continue
                lits: dict[str, list[Any]] = d["lits"]
                dep = lits.get(_OWL + "deprecated")
                deprecated = any(str(x).lower() in ("true", "1") for x in dep or ())
                if deprecated and obsolete == "skip":
                    _bump(summary.skipped, "obsolete")
                    continue
                nid = idf(s)
                where = f"{name}: <{s}>"
                row: dict[str, Any] = {"id": nid}
                if any(t in _CLASS_TYPES for t in types):
                    row["type"] = node_type
                elif any(t in _PROPERTY_TYPES for t in types):
                    row["type"] = "PROPERTY"
                elif _SKOS + "ConceptScheme" in types:
                    row["type"] = "CONCEPT_SCHEME"
                elif types:
                    row["type"] = "INSTANCE"
                title = None
                for pred in _TITLE_PREDICATES:
                    title = _pick(lits.get(pred, []), langs)
                    if title is not None:
                        break
                if title is not None:
                    row["title"] = str(title)
                for pred in _BODY_PREDICATES:
                    body = _pick(lits.get(pred, []), langs)
                    if body is not None:
                        row["body"] = str(body)
                        break
                if deprecated:
                    row["lifecycle"] = OBSOLETE_LIFECYCLE
                g_scopes = _graph_scopes(in_graphs.get(s), graph_scopes, idf)
                if g_scopes:
                    row["scopes"] = g_scopes
                try:
                    w.node(node_tuple(row))
                except RowError as exc:
                    raise InputError(f"{where}: {exc}") from None
                # aliases: the other labels, then alternative labels and synonyms
                seen = {row.get("title")}
                synonyms = []
                for pred in _TITLE_PREDICATES:
                    for lit in lits.get(pred, []):
                        if str(lit) not in seen:
                            seen.add(str(lit))
                            w.alias((str(lit), nid), where)
                for pred, scope in _ALIAS_PREDICATES.items():
                    for lit in lits.get(pred, []):
                        text = str(lit)
                        synonyms.append({"text": text, "scope": scope})
                        if text and text not in seen:
                            seen.add(text)
                            w.alias((text, nid), where)
                if synonyms:
                    w.node_attribute(nid, "synonyms", synonyms, where)
                used = set(_TITLE_PREDICATES) | set(_ALIAS_PREDICATES) | {_OWL + "deprecated"}
                body_pred = next((p for p in _BODY_PREDICATES if p in lits), None)
                if body_pred is not None and "body" in row:
                    used.add(body_pred)
                for pred, values in lits.items():
                    if pred in used:
                        continue
                    vals = sorted(str(v) for v in values)
                    w.node_attribute(nid, idf(pred), vals, where)
                for t in types:
                    if not t.startswith(_VOCAB):
                        w.edge(edge_tuple({"src": nid, "dst": idf(t), "type": "rdf:type"}))
                for pred, o in d["objs"]:
                    if isinstance(o, URIRef):
                        _rdf_edge(w, nid, pred, idf(o), idf, where)
                    elif o in restriction:
                        r = restriction[o]
                        prop = r.get(_OWL + "onProperty")
                        target = next(
                            (
                                r[k]
                                for k in (_OWL + "someValuesFrom", _OWL + "allValuesFrom", _OWL + "hasValue")
                                if k in r
                            ),
                            None,
                        )
                        if isinstance(prop, URIRef) and isinstance(target, URIRef):
                            _rdf_edge(w, nid, str(prop), idf(target), idf, where)
                        else:
                            _bump(summary.skipped, "blank-node object")
                    else:
                        _bump(summary.skipped, "blank-node object")
            w.finish()
    finally:
        bar.close()
    if bnode_subjects:
        summary.skipped["blank node"] = len(bnode_subjects)
    summary.lines = n_triples
    summary.parse_seconds = parse
    summary.write_seconds = time.perf_counter() - t1
    return summary


def _rdf_kind(rdflib: Any, fmt: str) -> str | None:
    """``"xml"`` when rdflib's parser for ``fmt`` reads XML (RDF/XML, TriX: those files go
    through :func:`_read_xml` first), ``"json-ld"`` for JSON-LD (:func:`_read_jsonld`), else
    None. An unknown format is rdflib's to refuse."""
    from rdflib.parser import Parser
    from rdflib.plugins.parsers.jsonld import JsonLDParser
    from rdflib.plugins.parsers.rdfxml import RDFXMLParser
    from rdflib.plugins.parsers.trix import TriXParser

    try:
        cls = rdflib.plugin.get(fmt, Parser)
    except rdflib.plugin.PluginException:
        return None
    if issubclass(cls, (RDFXMLParser, TriXParser)):
        return "xml"
    return "json-ld" if issubclass(cls, JsonLDParser) else None


def _read_jsonld(name: str) -> io.BytesIO:
    """The file's bytes, read once, refused when a JSON-LD ``@context`` names another document (a
    URL or a file, or an ``@import``): rdflib's JSON-LD reader would fetch it while parsing --
    a request to any address, or a local file read, on import. A context written in the file is
    read as usual. JSON that does not load is left to rdflib's error.

    Raises
    ------
    InputError
        ``"<path>: refused: a JSON-LD @context names another document ..."`` (E429).
    """
    with _open_binary(name) as fh:
        data = fh.read()
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return io.BytesIO(data)
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            ctx = x.get("@context")
            for c in ctx if isinstance(ctx, list) else [ctx]:
                if isinstance(c, str) or (isinstance(c, dict) and "@import" in c):
                    ref = c if isinstance(c, str) else c["@import"]
                    raise InputError(
                        f"{name}: refused: a JSON-LD @context names another document ({shown(ref)}), "
                        "which conceptwalk does not fetch on import (a request or a file read while "
                        "parsing); write the context in the file"
                    )
            stack.extend(x.values())
    return io.BytesIO(data)


def _rdf_edge(w: RowWriter, src: str, pred: str, dst: str, idf: _Ids, where: str) -> None:
    if pred in _INVERSE:
        src, dst, pred = dst, src, _INVERSE[pred]
    elif pred in _SYMMETRIC and dst < src:
        src, dst = dst, src
    try:
        w.edge(edge_tuple({"src": src, "dst": dst, "type": idf(pred)}))
    except RowError as exc:
        raise InputError(f"{where}: {exc}") from None


def _graph_scopes(graphs: set[str] | None, spec: Any, idf: _Ids) -> list[str] | None:
    if not graphs or spec is None:
        return None
    out: set[str] = set()
    for g in graphs:
        if spec == "name":
            out.add(idf(g))
        else:
            got = spec.get(g, spec.get(idf(g)))
            if got is not None:
                out.update([got] if isinstance(got, str) else got)
    return sorted(out) or None


def _rdf_line(exc: BaseException) -> str:
    for attr in ("lines", "lineno", "line"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return str(v + 1 if attr == "lines" else v)
    get = getattr(exc, "getLineNumber", None)
    if callable(get):
        return str(get())
    m = re.search(r"line (\d+)", str(exc))
    return m.group(1) if m else "?"


def _rdf_why(exc: BaseException) -> str:
    get_message = getattr(exc, "getMessage", None)  # SAX: the message without "<source>:line:col: "
    why = (
        (get_message() if callable(get_message) else None)
        or getattr(exc, "_why", None)
        or getattr(exc, "msg", None)
        or str(exc)
        or type(exc).__name__
    )
    why = " ".join(str(why).split())
    return why[:200]


# ------------------------------------------------------------------------- GraphML, GEXF, GML


def import_graph_file(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    title_attr: str | None = None,
    type_attr: str = "type",
    scopes_attr: str = "scopes",
    aliases_attr: str = "aliases",
    gml_label: str = "label",
    unknown: str = "keep",
    scopes: Any = None,
    progress: Progress = None,
    missing_endpoints: str = "create",
) -> ImportSummary:
    """Import a GraphML, GEXF or GML file through networkx's readers.

    Mapping (:func:`~conceptwalk.kb.importers.import_networkx`'s): the node's id -> id;
    ``title_attr`` (default the first of ``title``, ``label``, ``name``) -> title; ``type_attr``
    -> type; ``scopes_attr`` -> scopes (a JSON list text or comma-separated); ``aliases_attr``
    -> aliases (a JSON list text or one alias); ``body`` and ``lifecycle``; on edges
    ``type_attr`` (GEXF: else the edge's ``label``) -> type and the annotation axes; every other
    attribute (``weight`` included) -> an attribute of its node or edge. The files' own edge
    ids are structure, not data, and are not kept; a GEXF label equal to the node id (GEXF's
    stand-in for no label), empty, or equal to the ``title`` attribute is neither a title nor an
    attribute, and an empty GEXF edge label is no edge type.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    path : str or path-like
        The file (``.gz`` too).
    format : str, optional
        ``"graphml"``, ``"gexf"`` or ``"gml"``; by default from the extension.
    title_attr, type_attr, scopes_attr, aliases_attr : str
        Which attributes hold those node keys.
    gml_label : {"label", "id"}
        GML only: node ids from the nodes' ``label`` (networkx's default: unique labels) or from
        their numeric ``id`` (the label is then a title).
    unknown : {"keep", "ignore", "error"}
        Other attributes: kept as attributes (the default), ignored or refused.
    scopes, progress, missing_endpoints
        As the other importers' arguments.

    Returns
    -------
    ImportSummary
        With ``parse_seconds`` (networkx's reader) apart from ``write_seconds``.

    Raises
    ------
    InputError
        ``"<path>:<line>: malformed GraphML (...)"`` (or the element: ``"<path>: node 'x': ..."``);
        a GraphML or GEXF file that declares a DTD, ``"<path>:<line>: refused: the file declares
        a DTD ..."`` (no entity is expanded and no external file read); nothing is written.

    Examples
    --------
    >>> import os, tempfile, networkx as nx
    >>> p = os.path.join(tempfile.mkdtemp(), "g.graphml")
    >>> G = nx.DiGraph(); G.add_node("tls", title="TLS", aliases='["SSL"]'); G.add_edge("tls", "x509", weight=0.5)
    >>> nx.write_graphml(G, p)
    >>> kb = KnowledgeBase.open(":memory:")
    >>> s = import_graph_file(kb, p)
    >>> kb.node("tls")["title"], kb.aliases(), s.kept_attributes
    ('TLS', {'SSL': ['tls']}, ['weight'])
    """
    nx = _needs("networkx", "graph files")
    name = _check_file(path)
    fmt = format or format_of(name)
    if fmt not in ("graphml", "gexf", "gml"):
        raise InputError(f"format must be 'graphml', 'gexf' or 'gml', got {shown(fmt)}")
    if gml_label not in ("label", "id"):
        raise InputError(f"gml_label must be 'label' or 'id', got {shown(gml_label)}")
    t0 = time.perf_counter()
    label = {"graphml": "GraphML", "gexf": "GEXF", "gml": "GML"}[fmt]
    try:
        with _open_binary(name) if fmt == "gml" else _read_xml(name, label) as fh:
            if fmt == "graphml":
                G = nx.read_graphml(fh)
            elif fmt == "gexf":
                G = nx.read_gexf(fh)
            else:
                G = nx.read_gml(fh, label="label" if gml_label == "label" else None)
    except InputError:
        raise
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{name}: not a valid gzip file ({exc})") from None
    except Exception as exc:  # ParseError, NetworkXError, ValueError, KeyError...: the file's fault
        line, why = _xml_line(exc), _rdf_why(exc)
        if fmt == "gexf" and isinstance(exc, RuntimeError) and "reraise" in why:
            line, why = _gexf_attributes_class(name)
        elif fmt == "gml" and gml_label == "label" and "has no 'label' attribute" in why:
            why += "; gml_label='id' (--gml-label id) takes the nodes' numeric ids"
        raise InputError(f"{name}:{line}: malformed {label} ({why})") from None
    parse = time.perf_counter() - t0
    if fmt == "gexf":  # GEXF's mandatory label: no title when it is the id, no attribute when it repeats one
        for n, attrs in G.nodes(data=True):
            label = attrs.get("label")
            if label is not None and (label in ("", str(n)) or label == attrs.get("title")):
                del attrs["label"]
        # an empty edge label (qvge writes label="" on every edge) is no edge type either
        for *_, attrs in G.edges(data=True):
            if attrs.get("label") == "":
                del attrs["label"]
    t1 = time.perf_counter()
    summary = import_networkx(
        kb,
        G,
        type_attr=type_attr,
        unknown=unknown,
        progress=progress,
        missing_endpoints=missing_endpoints,
        title_attr=title_attr,
        scopes_attr=scopes_attr,
        aliases_attr=aliases_attr,
        scopes=scopes,
        where=name,
        structural=("id",) if fmt in ("graphml", "gexf") else (),
        edge_type_fallback="label" if fmt == "gexf" else None,
        lists_as_text=True,
    )
    summary.parse_seconds = parse
    summary.write_seconds = time.perf_counter() - t1
    return summary


def _gexf_attributes_class(name: str) -> tuple[str, str]:
    """Where and why networkx's GEXF reader stopped on a bare ``raise`` (its RuntimeError "No
    active exception to reraise"): an ``<attributes>`` element whose ``class`` is neither
    ``node`` nor ``edge``, the only two GEXF 1.2 allows (qvge writes ``class=""`` for the
    graph's own attributes)."""
    with _open_binary(name) as fh:
        text = fh.read().decode("utf-8", "replace")
    m = re.search(r"<attributes\b[^>]*\bclass\s*=\s*([\"'])(?!(?:node|edge)\1)([^\"']*)\1", text)
    if m is None:
        return "?", "an <attributes> element networkx's reader does not take"
    line = str(text.count("\n", 0, m.start()) + 1)
    return line, f"an <attributes> element of class {m.group(2)!r}: GEXF allows 'node' and 'edge'"


def _xml_line(exc: BaseException) -> str:
    pos = getattr(exc, "position", None)  # xml.etree.ElementTree.ParseError: (line, column)
    if isinstance(pos, tuple) and pos:
        return str(pos[0])
    m = re.search(r"\((\d+), ?\d+\)|line (\d+)", str(exc))
    if m:
        return m.group(1) or m.group(2)
    return "?"


# ------------------------------------------------------------------------------------ Neo4j CSV

_NEO_NODE = ("_id", ":ID")
_NEO_REL = ("_start", ":START_ID")


@dataclass
class _NeoColumn:
    name: str  # the property (or the special role: id, labels, start, end, type)
    role: str  # "prop", "id", "labels", "start", "end", "type", "ignore"
    kind: str = "string"  # admin-import type: string, int, long, float, double, boolean, ...
    array: bool = False
    space: str | None = None  # an ID space (admin import's ``:ID(Person)``)


def _neo_header(cells: list[str]) -> list[_NeoColumn]:
    cols = []
    for raw in cells:
        c = raw.strip().lstrip("\ufeff")
        if c in ("_id", "_labels", "_start", "_end", "_type"):
            cols.append(
                _NeoColumn(c, {"_id": "id", "_labels": "labels", "_start": "start", "_end": "end", "_type": "type"}[c])
            )
            continue
        prop, sep, typ = c.partition(":")
        space = None
        m = re.fullmatch(r"(\w+)\((.*)\)", typ)
        if m:
            typ, space = m.group(1), m.group(2) or None
        role = {
            "ID": "id",
            "LABEL": "labels",
            "START_ID": "start",
            "END_ID": "end",
            "TYPE": "type",
            "IGNORE": "ignore",
        }.get(typ.upper() if sep else "")
        if role is not None:
            cols.append(_NeoColumn(prop or role, role, space=space))
        else:
            kind = typ.lower() if sep and typ else "string"
            array = kind.endswith("[]")
            cols.append(_NeoColumn(prop, "prop", kind.rstrip("[]") or "string", array))
    return cols


def _neo_value(col: _NeoColumn, raw: str, apoc: bool) -> Any:
    if col.array:
        return [_neo_scalar(col.kind, x) for x in raw.split(";")]
    if apoc and raw.startswith("[") and raw.endswith("]"):
        try:
            v = json.loads(raw)
        except ValueError:
            return raw
        return v
    return _neo_scalar(col.kind, raw)


def _neo_scalar(kind: str, raw: str) -> Any:
    if kind in ("int", "long", "short", "byte"):
        try:
            return int(raw)
        except ValueError:
            raise RowError(f"not an integer: {shown(raw)}") from None
    if kind in ("float", "double"):
        try:
            return float(raw)
        except ValueError:
            raise RowError(f"not a number: {shown(raw)}") from None
    if kind == "boolean":
        if raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        raise RowError(f"not a boolean: {shown(raw)}")
    return raw


def import_neo4j_csv(
    kb: KnowledgeBase,
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    title_attr: str | None = None,
    scopes_attr: str = "scopes",
    unknown: str = "keep",
    scopes: Any = None,
    progress: Progress = None,
    missing_endpoints: str = "create",
) -> ImportSummary:
    """Import Neo4j's CSV export -- one file of nodes and relationships (APOC's
    ``apoc.export.csv.all``: ``_id,_labels,...,_start,_end,_type``) or the separate nodes and
    relationships files of ``neo4j-admin import`` (``id:ID,name,:LABEL`` and
    ``:START_ID,:END_ID,:TYPE``) -- all the files in one transaction.

    Mapping: the node id column -> id (with an ID space, ``Space:value``); the first label ->
    type (all labels, when more than one, -> the attribute ``labels``); ``title_attr`` (default
    the first of ``title``, ``name``, ``label`` present) -> title; ``body``, ``lifecycle``;
    ``scopes_attr`` -> scopes (an array column, a JSON list or comma-separated); a
    relationship's type -> the edge type and its annotation-axis properties -> annotations;
    every other property -> an attribute (typed by the admin header's ``:int``, ``:float``,
    ``:boolean``, ``[]`` suffixes; APOC's JSON arrays decoded). Empty cells are absent values.

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into.
    paths : path or iterable of paths
        The CSV files, nodes before the relationships that use them (any order works: a
        relationship's endpoint not yet defined is created bare and filled in by its node row).
    title_attr : str, optional
        The property holding a node's title.
    scopes_attr : str
        The property holding a node's scopes.
    unknown : {"keep", "ignore", "error"}
        Other properties: kept as attributes (the default), ignored or refused.
    scopes, progress, missing_endpoints
        As the other importers' arguments.

    Returns
    -------
    ImportSummary

    Raises
    ------
    InputError
        ``"<path>:<line>: ..."``; nothing is written.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> p = os.path.join(d, "all.csv")
    >>> with open(p, "w") as f:
    ...     _ = f.write('"_id","_labels","name","_start","_end","_type","since"\\n'
    ...                 '"0",":Protocol","TLS",,,,\\n"1",":Protocol","TCP",,,,\\n,,,"0","1","RUNS_OVER","1999"\\n')
    >>> kb = KnowledgeBase.open(":memory:")
    >>> s = import_neo4j_csv(kb, p)
    >>> kb.node("0")["title"], s.edge_types, s.kept_attributes
    ('TLS', {'RUNS_OVER': 1}, ['since'])
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    names = [_check_file(p) for p in paths]
    if not names:
        raise InputError("import_neo4j_csv needs at least one file")
    if unknown not in ("keep", "ignore", "error"):
        raise InputError(f"unknown must be 'keep', 'ignore' or 'error', got {unknown!r}")
    scope_list = file_scopes(scopes)
    titles = (title_attr,) if title_attr else ("title", "name", "label")
    summary = ImportSummary()
    ignored: set[str] = set()
    kept: set[str] = set()
    bar = ProgressBar(progress, os.path.basename(names[0]))
    t0 = time.perf_counter()
    lines = 0
    try:
        with kb.bulk():
            w = RowWriter(kb, summary, missing_endpoints, scope_list, ordered=True)
            for name in names:
                with _open_binary(name) as bfh:
                    fh = io.TextIOWrapper(bfh, encoding="utf-8", newline="")
                    reader = csv.reader(fh, strict=True)
                    try:
                        header = next(reader, None)
                        if header is None:
                            continue
                        cols = _neo_header(header)
                        roles = {c.role for c in cols}
                        apoc = any(c.name.startswith("_") and c.role != "prop" for c in cols)
                        if "id" not in roles and not {"start", "end"} <= roles:
                            raise InputError(
                                f"{name}:1: not a Neo4j CSV export: the header has no node id column "
                                f"({', '.join(_NEO_NODE)}) and no relationship columns ({', '.join(_NEO_REL)} and the end)"
                            )
                        for cells in reader:
                            lineno = reader.line_num
                            lines += 1
                            if lines % 4096 == 0:
                                bar.update(lines)
                            if not cells or all(not c for c in cells):
                                continue
                            if len(cells) != len(cols):
                                raise InputError(f"{name}:{lineno}: expected {len(cols)} fields, got {len(cells)}")
                            try:
                                _neo_row(
                                    w,
                                    cols,
                                    cells,
                                    apoc,
                                    titles,
                                    scopes_attr,
                                    unknown,
                                    kept,
                                    ignored,
                                    f"{name}:{lineno}",
                                )
                            except RowError as exc:
                                raise InputError(f"{name}:{lineno}: {exc}") from None
                    except csv.Error as exc:
                        raise InputError(f"{name}:{reader.line_num}: malformed CSV ({exc})") from None
                    except UnicodeDecodeError as exc:
                        raise InputError(f"{name}:{reader.line_num + 1}: not valid UTF-8 ({exc.reason})") from None
            w.finish()
    except (EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{names[0]}: not a valid gzip file ({exc})") from None
    finally:
        bar.close()
    summary.lines = lines
    summary.kept_attributes = sorted(kept)
    summary.ignored_attributes = sorted(ignored)
    summary.write_seconds = time.perf_counter() - t0
    return summary


def _neo_id(col: _NeoColumn, raw: str) -> str:
    return f"{col.space}:{raw}" if col.space else raw


def _neo_row(
    w: RowWriter,
    cols: list[_NeoColumn],
    cells: list[str],
    apoc: bool,
    titles: tuple[str, ...],
    scopes_attr: str,
    unknown: str,
    kept: set[str],
    ignored: set[str],
    where: str,
) -> None:
    node_id = start = end = rtype = None
    labels: list[str] = []
    props: dict[str, Any] = {}
    for col, raw in zip(cols, cells):
        if raw == "":
            continue
        if col.role == "id":
            node_id = _neo_id(col, raw)
        elif col.role == "start":
            start = _neo_id(col, raw)
        elif col.role == "end":
            end = _neo_id(col, raw)
        elif col.role == "type":
            rtype = raw
        elif col.role == "labels":
            labels = [x for x in re.split(r"[:;]", raw) if x]
        elif col.role == "prop":
            props[col.name] = _neo_value(col, raw, apoc)
    if node_id is not None and start is None:
        row: dict[str, Any] = {"id": node_id}
        if labels:
            row["type"] = labels[0]
        title_key = next((t for t in titles if t in props), None)
        extra: dict[str, Any] = {}
        if len(labels) > 1:
            extra["labels"] = labels
        for k, v in props.items():
            if k == title_key:
                row["title"] = v if isinstance(v, str) else str(v)
            elif k == scopes_attr:
                row["scopes"] = v if isinstance(v, list) else [s.strip() for s in str(v).split(",") if s.strip()]
            elif k in ("body", "lifecycle"):
                row[k] = str(v)
            else:
                _neo_other(k, v, extra, unknown, kept, ignored, where)
        w.node(node_tuple(row))
        for k, v in extra.items():
            w.node_attribute(node_id, k, v, where)
    elif start is not None and end is not None:
        erow: dict[str, Any] = {"src": start, "dst": end}
        if rtype is not None:
            erow["type"] = rtype
        extra = {}
        for k, v in props.items():
            if k in ANNOTATION_AXES:
                erow[k] = float(v) if k == "extraction_confidence" and isinstance(v, str) and _is_number(v) else v
            else:
                _neo_other(k, v, extra, unknown, kept, ignored, where)
        t = edge_tuple(erow)
        w.edge(t)
        for k, v in extra.items():
            w.edge_attribute(t[0], t[1], t[2], k, v, where)
    else:
        raise RowError("neither a node (an id) nor a relationship (a start and an end)")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _neo_other(
    k: str, v: Any, extra: dict[str, Any], unknown: str, kept: set[str], ignored: set[str], where: str
) -> None:
    if unknown == "keep":
        kept.add(k)
        extra[k] = v
    elif unknown == "ignore":
        ignored.add(k)
    else:
        raise InputError(f"{where}: unknown property {shown(k)} (pass unknown='keep' to keep it as an attribute)")


# --------------------------------------------------------------------------------------- export


@dataclass
class ExportSummary:
    """What an export wrote: the nodes, edges and aliases the caller sees, and their attributes.

    Attributes
    ----------
    nodes, edges, aliases, attributes : int
        Rows written per kind.
    path, format : str
        Where and how.
    """

    nodes: int = 0
    edges: int = 0
    aliases: int = 0
    attributes: int = 0
    path: str = ""
    format: str = ""

    def __str__(self) -> str:
        return (
            f"exported {self.nodes:,} nodes, {self.edges:,} edges, {self.aliases:,} aliases and "
            f"{self.attributes:,} attributes to {self.path} ({self.format})"
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts as a JSON-ready dict.

        Returns
        -------
        dict
        """
        return asdict(self)


def _visible(scopes: list[str] | None, caller: Caller) -> bool:
    if caller.scopes is None or not scopes:
        return True
    return not caller.scopes.isdisjoint(scopes)


def _rows_for(
    kb: KnowledgeBase, caller: Caller
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, str]]]:
    """The nodes, edges and aliases the caller sees, as plain rows in a stable order."""
    conn = kb.conn
    nodes = []
    seen: set[str] = set()
    for nid, typ, title, body, sc, life in conn.execute(
        "SELECT id, type, title, body, scopes, lifecycle FROM nodes ORDER BY id"
    ):
        scopes = parse_scopes(sc, nid)
        if not _visible(scopes, caller):
            continue
        seen.add(nid)
        row: dict[str, Any] = {"id": nid}
        for k, v in (("type", typ), ("title", title), ("body", body), ("scopes", scopes), ("lifecycle", life)):
            if v is not None:
                row[k] = v
        nodes.append(row)
    edges = []
    cols = ", ".join(ANNOTATION_AXES)
    for r in conn.execute(f"SELECT src, dst, type, {cols} FROM edges ORDER BY src, dst, type"):
        if r[0] not in seen or r[1] not in seen:
            continue
        erow: dict[str, Any] = {"src": r[0], "dst": r[1], "type": r[2]}
        for k, v in zip(ANNOTATION_AXES, r[3:]):
            if v is not None:
                erow[k] = annotation_value(v) if isinstance(v, str) else v
        edges.append(erow)
    aliases = [
        (a, c) for a, c in conn.execute("SELECT alias, canonical FROM aliases ORDER BY alias, canonical") if c in seen
    ]
    return nodes, edges, aliases


def export_file(
    kb: KnowledgeBase, path: str | os.PathLike[str], format: str | None = None, *, caller: Caller | None = None
) -> ExportSummary:
    """Write what ``caller`` sees of the store to a JSONL, GraphML or GEXF file.

    Fail closed: without a caller the export is of the public nodes only. A hidden node's edges,
    aliases and attributes are not written; what is written is what
    :func:`import_file` reads back into the same store (import -> export -> import gives the same
    nodes, edges, aliases and attributes).

    JSONL: one line per node (``id, type, title, body, scopes, lifecycle, attributes``), edge
    (``src, dst, type``, the annotation axes, ``attributes``) and alias, the rows of
    :func:`~conceptwalk.kb.importers.import_jsonl`. GraphML and GEXF: a directed multigraph with
    the node keys and annotation axes as attributes, scopes and aliases as JSON list texts
    (``scopes``, ``aliases``) and list- or dict-valued attributes as JSON text under the name
    plus ``@json`` (both formats hold only strings, numbers and booleans); GEXF's node label is
    the title and its edge label the edge type (GEXF's edge ``type`` is the direction).

    Parameters
    ----------
    kb : KnowledgeBase
        The store.
    path : str or path-like
        The file to write (replaced).
    format : str, optional
        ``"jsonl"``, ``"graphml"`` or ``"gexf"``; by default from the extension.
    caller : Caller, optional
        Whose view to export; default :meth:`Caller.public`.

    Returns
    -------
    ExportSummary

    Examples
    --------
    >>> import os, tempfile
    >>> from conceptwalk import Caller
    >>> kb = KnowledgeBase.open(":memory:")
    >>> _ = kb.add_nodes([{"id": "a", "title": "A"}, {"id": "s", "scopes": ["t1"]}])
    >>> _ = kb.add_edges([("a", "s"), ("a", "b")])
    >>> p = os.path.join(tempfile.mkdtemp(), "out.jsonl")
    >>> export_file(kb, p).to_dict()["nodes"], export_file(kb, p, caller=Caller.with_scopes("t1")).nodes
    (2, 3)
    """
    caller = Caller.public() if caller is None else caller
    if not isinstance(caller, Caller):
        raise InputError(f"caller must be a Caller, got {type(caller).__name__}")
    name = os.fspath(path)
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        raise InputError(f"{ascii(name)}: the path holds a lone surrogate, which no file name can hold") from None
    fmt = format
    if fmt is None:
        ext, _ = _base_ext(name)
        fmt = {".jsonl": "jsonl", ".ndjson": "jsonl", ".graphml": "graphml", ".gexf": "gexf"}.get(ext)
        if fmt is None:
            raise InputError(
                f"{name}: cannot tell the export format from the extension; pass one of {', '.join(EXPORT_FORMATS)}"
            )
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"format must be one of {', '.join(EXPORT_FORMATS)}, got {shown(fmt)}")
    conn = kb.conn
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")  # a read transaction: one committed state from start to end; writes nothing
    try:
        nodes, edges, aliases = _rows_for(kb, caller)
        if has_tables(conn):
            visible = {n["id"] for n in nodes}
            n_attrs = {k: v for k, v in node_attributes(conn).items() if k in visible}
            e_attrs = {k: v for k, v in edge_attributes(conn).items() if k[0] in visible and k[1] in visible}
        else:
            n_attrs, e_attrs = {}, {}
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")
    out = ExportSummary(nodes=len(nodes), edges=len(edges), aliases=len(aliases), path=name, format=fmt)
    out.attributes = sum(len(v) for v in n_attrs.values()) + sum(len(v) for v in e_attrs.values())
    opener = gzip.open if name.endswith(".gz") else open
    if fmt == "jsonl":
        with opener(name, "wt", encoding="utf-8", newline="\n") as fh:
            for n in nodes:
                a = n_attrs.get(n["id"])
                fh.write(json.dumps({**n, "attributes": a} if a else n, ensure_ascii=False, sort_keys=True) + "\n")
            for e in edges:
                a = e_attrs.get((e["src"], e["dst"], e["type"]))
                fh.write(json.dumps({**e, "attributes": a} if a else e, ensure_ascii=False, sort_keys=True) + "\n")
            for al, c in aliases:
                fh.write(json.dumps({"alias": al, "canonical": c}, ensure_ascii=False) + "\n")
        return out
    nx = _needs("networkx", "GraphML/GEXF export")
    G = nx.MultiDiGraph()
    by_node: dict[str, list[str]] = {}
    for al, c in aliases:
        by_node.setdefault(c, []).append(al)
    for n in nodes:
        attrs: dict[str, Any] = {}
        for k, v in n.items():
            if k == "id":
                continue
            attrs[k] = json.dumps(v, ensure_ascii=False) if k == "scopes" else v
        if n["id"] in by_node:
            attrs["aliases"] = json.dumps(by_node[n["id"]], ensure_ascii=False)
        for k, v in n_attrs.get(n["id"], {}).items():
            _flat(attrs, k, v)
        if fmt == "gexf":
            title = attrs.pop("title", None)
            attrs["label"] = n["id"] if title is None else title
            if title is not None and title == n["id"]:
                attrs["title"] = title
        G.add_node(n["id"], **attrs)
    for e in edges:
        attrs = {k: v for k, v in e.items() if k not in ("src", "dst")}
        for k, v in e_attrs.get((e["src"], e["dst"], e["type"]), {}).items():
            if fmt == "gexf" and k == "weight":  # GEXF's own weight is a float: another type as JSON
                attrs["weight" if type(v) is float else "weight@json"] = v if type(v) is float else json.dumps(v)
            else:
                _flat(attrs, k, v)
        if fmt == "gexf":
            attrs["label"] = attrs.pop("type")  # GEXF's edge 'type' is its direction
        G.add_edge(e["src"], e["dst"], key=e["type"], **attrs)
    if fmt == "graphml":
        nx.write_graphml(G, name)
    else:
        nx.write_gexf(G, name)
    return out


_RESERVED = frozenset(
    ("type", "title", "body", "scopes", "lifecycle", "aliases", "label", "id", "name", *ANNOTATION_AXES)
)


def _flat(attrs: dict[str, Any], key: str, value: Any) -> None:
    """An attribute as GraphML/GEXF can hold it: a scalar as it is, anything else (and a name a
    node key uses) as JSON text under ``key@json``."""
    if isinstance(value, (str, int, float, bool)) and key not in _RESERVED and not key.endswith("@json"):
        attrs[key] = value
    else:
        attrs[key + "@json"] = json.dumps(value, ensure_ascii=False, sort_keys=True)
