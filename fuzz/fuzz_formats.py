"""Fuzz the format importers (issue 35): arbitrary bytes written to a temporary file of one of
the formats ``import_file`` reads through a parser library -- OBO (fastobo), RDF/XML and OWL,
TriX, Turtle, N-Triples, N3, N-Quads, TriG, JSON-LD (rdflib), GraphML, GEXF, GML (networkx) and Neo4j's
CSV export -- optionally gzip-compressed (or a corrupt ``.gz``), with one of the formats' options,
into one store.

The first byte picks the format (its low nibble), an option (bits 4-6) and gzip (bit 7); the rest
is the file. Only :class:`conceptwalk.ConceptwalkError` may escape (``InputError`` is one), and it
must name the file (``"<path>:<line>: ..."``); on an error the store must be unchanged (same
version, same node/edge/alias counts: an import is one transaction); after a successful import
the store's graph must build. A hang (``-timeout``) or a memory blow-up (``-rss_limit_mb``) is a
finding too: an XML file that declares a DTD must be refused before any entity is expanded.

JSON-LD is in: rdflib's JSON-LD reader would fetch a ``@context`` that names a document (a URL, a
local file) while it parses, and the import refuses such a file first (E429), so a fuzzed
context never makes a request.

Run: ``python fuzz/fuzz_formats.py fuzz/corpus/fuzz_formats -max_total_time=60``
Replay: ``python fuzz/fuzz_formats.py --replay fuzz/corpus/fuzz_formats``
"""

from __future__ import annotations

import gzip
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import StoreCycle, check_accepted_import, check_failed_import, instrumented, run, store_counts  # noqa: E402

with instrumented():
    from conceptwalk.errors import ConceptwalkError
    from conceptwalk.kb.formats import import_file

store = StoreCycle("cw-fuzz-formats-")
_TMP = store.tmp
counts = store_counts

#: (suffix, format passed to import_file, options): the low nibble of the first byte picks one.
FORMATS: list[tuple[str, str | None, dict[str, object]]] = [
    (".obo", None, {}),
    (".owl", None, {}),
    (".rdf", None, {}),
    (".ttl", None, {}),
    (".nt", None, {}),
    (".n3", None, {}),
    (".nq", None, {}),
    (".trig", None, {}),
    (".xml", "rdf", {"syntax": "trix"}),
    (".graphml", None, {}),
    (".gexf", None, {}),
    (".gml", None, {}),
    (".csv", "neo4j-csv", {}),
    (".jsonld", None, {}),
]

#: One option per format family, picked by bits 4-6 of the first byte (0: none).
OPTIONS: dict[str, list[dict[str, object]]] = {
    "obo": [{}, {"obsolete": "keep"}, {"synonym_scopes": ["EXACT"]}, {"missing_endpoints": "refuse"}],
    "rdf": [
        {},
        {"obsolete": "keep"},
        {"languages": ["en"]},
        {"ids": "iri"},
        {"graph_scopes": "name"},
        {"missing_endpoints": "refuse"},
    ],
    "graph": [{}, {"unknown": "error"}, {"title_attr": "name"}, {"missing_endpoints": "refuse"}],
    "gml": [{}, {"gml_label": "id"}, {"unknown": "ignore"}],
    "neo4j-csv": [{}, {"unknown": "error"}, {"title_attr": "name"}, {"missing_endpoints": "refuse"}],
}


def _family(suffix: str, fmt: str | None) -> str:
    if suffix == ".obo":
        return "obo"
    if suffix == ".gml":
        return "gml"
    if suffix in (".graphml", ".gexf"):
        return "graph"
    if fmt == "neo4j-csv":
        return "neo4j-csv"
    return "rdf"


def target(data: bytes) -> None:
    if not data:
        return
    head, body = data[0], data[1:]
    suffix, fmt, fixed = FORMATS[(head & 0x0F) % len(FORMATS)]
    options = OPTIONS[_family(suffix, fmt)]
    option = options[((head >> 4) & 0x07) % len(options)]
    gz = bool(head & 0x80)
    path = os.path.join(_TMP, "input" + suffix + (".gz" if gz else ""))
    # a gzip file: valid gzip of the bytes when they do not already start like gzip, else the
    # raw bytes (a corrupt or truncated .gz)
    payload = gzip.compress(body, mtime=0) if gz and not body.startswith(b"\x1f\x8b") else body
    with open(path, "wb") as fh:
        fh.write(payload)
    kb = store()
    before = counts(kb)
    try:
        import_file(kb, path, fmt, **fixed, **option)
    except ConceptwalkError as exc:
        # A bad file gives an error naming the file, and changes nothing in the store.
        check_failed_import(kb, path, exc, before)
        return
    check_accepted_import(kb)


if __name__ == "__main__":
    run(target)
