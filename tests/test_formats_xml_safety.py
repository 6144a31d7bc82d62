"""XML safety of the importers (issue 35, a hostile review's finding): every XML-based import
(RDF/XML and OWL, TriX, GraphML, GEXF) refuses a file that declares a DTD -- so no entity
expansion ("billion laughs"), no external entity (``file:///etc/passwd`` is never opened) and no
undefined entity slipping through as an empty title -- with an ``InputError`` naming the file and
the line (E428), promptly and in bounded memory, and nothing written; a plain file still imports.
And JSON-LD, whose reader fetches a remote ``@context`` while parsing, refuses one (E429)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import pytest

from conceptwalk.errors import InputError
from conceptwalk.kb.formats import import_file
from conceptwalk.kb.store import KnowledgeBase

pytest.importorskip("rdflib")
pytest.importorskip("networkx")
pytest.importorskip("defusedxml")

REFUSED = r":2: refused: the file declares a DTD \('<!DOCTYPE "

#: Nine levels of ten: 10^9 'a's (a gigabyte) if the parser expands the entities.
LAUGHS = "".join(f' <!ENTITY l{i} "{(f"&l{i - 1};" * 10) if i else "a" * 10}">\n' for i in range(10))

_RDF_NS = (
    'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" xmlns:owl="http://www.w3.org/2002/07/owl#"'
)


def _rdfxml(dtd: str, label: str) -> str:
    return (
        f'<?xml version="1.0"?>\n{dtd}<rdf:RDF {_RDF_NS}>\n'
        f' <owl:Class rdf:about="http://ex.org/A"><rdfs:label>{label}</rdfs:label></owl:Class>\n'
        f' <owl:Class rdf:about="http://ex.org/B"><rdfs:subClassOf rdf:resource="http://ex.org/A"/></owl:Class>\n'
        "</rdf:RDF>\n"
    )


def _trix(dtd: str, label: str) -> str:
    return (
        f'<?xml version="1.0"?>\n{dtd}<TriX xmlns="http://www.w3.org/2004/03/trix/trix-1/"><graph>\n'
        "<triple><uri>http://ex.org/A</uri><uri>http://www.w3.org/2000/01/rdf-schema#label</uri>"
        f"<plainLiteral>{label}</plainLiteral></triple>\n"
        "<triple><uri>http://ex.org/B</uri><uri>http://www.w3.org/2000/01/rdf-schema#subClassOf</uri>"
        "<uri>http://ex.org/A</uri></triple>\n</graph></TriX>\n"
    )


def _graphml(dtd: str, label: str) -> str:
    return (
        f'<?xml version="1.0"?>\n{dtd}<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
        '<key id="t" for="node" attr.name="title" attr.type="string"/>\n'
        f'<graph edgedefault="directed"><node id="A"><data key="t">{label}</data></node><node id="B"/>'
        '<edge source="B" target="A"/></graph>\n</graphml>\n'
    )


def _gexf(dtd: str, label: str) -> str:
    return (
        f'<?xml version="1.0"?>\n{dtd}<gexf xmlns="http://www.gexf.net/1.2draft" version="1.2">\n'
        '<graph defaultedgetype="directed"><nodes>'
        f'<node id="A" label="{label}"/><node id="B" label="B"/></nodes>'
        '<edges><edge id="0" source="B" target="A"/></edges></graph>\n</gexf>\n'
    )


#: (file name, format passed, how a document is written, the root element, A's id)
FORMATS = [
    ("x.owl", None, _rdfxml, "rdf:RDF", "http://ex.org/A"),
    ("x.rdf", None, _rdfxml, "rdf:RDF", "http://ex.org/A"),
    ("x.xml", "rdf", _rdfxml, "rdf:RDF", "http://ex.org/A"),
    ("x.trix", "rdf", _trix, "TriX", "http://ex.org/A"),
    ("x.graphml", None, _graphml, "graphml", "A"),
    ("x.gexf", None, _gexf, "gexf", "A"),
]
IDS = [f[0] + ("" if f[1] is None else f"-{f[1]}") for f in FORMATS]


def _import(path: Path, fmt: str | None, kb: KnowledgeBase | None = None):
    kb = KnowledgeBase.open(":memory:") if kb is None else kb
    options: dict = {}
    if ".graph" not in path.name and ".gexf" not in path.name:
        options["ids"] = "iri"  # RDF: the IRIs as ids
    if ".trix" in path.name:
        options["syntax"] = "trix"  # TriX has no extension of its own: rdflib's parser is named
    return kb, import_file(kb, path, fmt, **options)


@pytest.mark.parametrize("name, fmt, doc, root, a", FORMATS, ids=IDS)
def test_a_plain_file_still_imports(tmp_path, name, fmt, doc, root, a):
    # character references, the five predefined entities, a comment and a CDATA section that
    # mention a DOCTYPE: none of them is a DTD
    text = doc("<!-- <!DOCTYPE x [ <!ENTITY e 'no'> ]> -->\n", "caf&#233; &amp; &lt;b&gt; <![CDATA[<!ENTITY e>]]>")
    if doc is _gexf:  # an attribute value: no CDATA
        text = doc("<!-- <!DOCTYPE x> -->\n", "caf&#233; &amp; &lt;b&gt;")
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    kb, s = _import(p, fmt)
    assert s.nodes == 2 and s.edges == 1
    title = kb.node(a)["title"]
    assert title.startswith("café & <b>")
    if doc is not _gexf:
        assert title.endswith("<!ENTITY e>")


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name, fmt, doc, root, a", FORMATS, ids=IDS)
def test_billion_laughs_is_refused_at_once_in_bounded_memory(tmp_path, name, fmt, doc, root, a, gz):
    text = doc(f"<!DOCTYPE {root} [\n{LAUGHS}]>\n", "&l9;").encode()
    p = tmp_path / (name + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(text) if gz else text)
    db = tmp_path / "kb.sqlite"
    with KnowledgeBase.open(db, create=True) as kb:
        version = kb.version
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            with pytest.raises(InputError, match=rf"^{p}{REFUSED}{root}'\)") as err:
                _import(p, fmt, kb)
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        elapsed = time.perf_counter() - t0
        assert elapsed < 5, elapsed
        assert peak < 32 * 2**20, peak  # the expansion would be 10^9 characters
        assert "entity declaration or external entity" in str(err.value)
        assert kb.version == version and kb.conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0


def test_billion_laughs_rdfxml_returns_in_a_fresh_process(tmp_path):
    """The reviewed defect itself: rdflib's RDF/XML reader ran out of time on this file (the
    import never returned); in a fresh process, with a time limit, the import now fails fast."""
    p = tmp_path / "laughs.owl"
    p.write_text(_rdfxml(f"<!DOCTYPE rdf:RDF [\n{LAUGHS}]>\n", "&l9;"))
    code = textwrap.dedent(
        f"""
        from conceptwalk.errors import InputError
        from conceptwalk.kb.formats import import_file
        from conceptwalk.kb.store import KnowledgeBase
        try:
            import_file(KnowledgeBase.open(":memory:"), {str(p)!r})
        except InputError as exc:
            print("refused", exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"refused {p}:2: refused: the file declares a DTD"), out.stdout


@pytest.fixture
def opened():
    """The paths opened and URLs requested by this process while the test runs (audit hooks)."""
    seen: list[str] = []
    active = [True]

    def hook(event, args):
        if not active[0]:
            return
        if event == "open" and args and isinstance(args[0], (str, bytes)):
            seen.append(args[0] if isinstance(args[0], str) else args[0].decode(errors="replace"))
        elif event == "urllib.Request" and args:
            seen.append(str(args[0]))

    sys.addaudithook(hook)  # hooks cannot be removed: this one goes quiet after the test
    yield seen
    active[0] = False


@pytest.mark.parametrize("name, fmt, doc, root, a", FORMATS, ids=IDS)
def test_an_external_entity_is_never_read(tmp_path, opened, name, fmt, doc, root, a):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    for target in ("file:///etc/passwd", secret.as_uri()):
        p = tmp_path / name
        p.write_text(doc(f'<!DOCTYPE {root} [ <!ENTITY x SYSTEM "{target}"> ]>\n', "&x;"))
        opened.clear()
        with pytest.raises(InputError, match=rf"^{p}{REFUSED}{root}'\)") as err:
            _import(p, fmt)
        assert "TOP-SECRET" not in str(err.value) and "root:" not in str(err.value)
        assert not [o for o in opened if "passwd" in o or "secret" in o], opened
    # an external DTD subset (a parameter entity's file) is refused the same way, unread
    p.write_text(doc(f'<!DOCTYPE {root} SYSTEM "{secret.as_uri()}">\n', "A"))
    opened.clear()
    with pytest.raises(InputError, match=REFUSED):
        _import(p, fmt)
    assert not [o for o in opened if "secret" in o], opened


@pytest.mark.parametrize("name, fmt, doc, root, a", FORMATS, ids=IDS)
def test_an_undefined_entity_is_an_error_not_an_empty_title(tmp_path, name, fmt, doc, root, a):
    p = tmp_path / name
    # without a DTD: expat's well-formedness error, with the line
    p.write_text(doc("", "&nope;"))
    with pytest.raises(InputError, match=rf"^{p}:\d+: malformed \w+ \(undefined entity"):
        _import(p, fmt)
    # after an external DTD subset expat would skip it (the review's empty title): refused
    p.write_text(doc(f'<!DOCTYPE {root} SYSTEM "nowhere.dtd">\n', "&nope;"))
    with pytest.raises(InputError, match=REFUSED):
        _import(p, fmt)


def test_internal_entities_for_namespaces_are_refused_too(tmp_path):
    """The convention of older OWL tools (entities as namespace abbreviations, ``&owl;Class``) is
    a DTD like any other: refused, the message saying how to fix the file."""
    p = tmp_path / "ns.owl"
    dtd = '<!DOCTYPE rdf:RDF [ <!ENTITY ex "http://ex.org/" > ]>\n'
    p.write_text(_rdfxml(dtd, "A").replace('"http://ex.org/A"', '"&ex;A"'))
    with pytest.raises(InputError, match=r"remove the DOCTYPE, replacing each entity by its text"):
        import_file(KnowledgeBase.open(":memory:"), p)
    p.write_text(_rdfxml("", "A"))
    kb = KnowledgeBase.open(":memory:")
    assert import_file(kb, p, ids="iri").nodes == 2 and kb.node("http://ex.org/A")["title"] == "A"


@pytest.mark.parametrize("name, fmt, doc, root, a", FORMATS, ids=IDS)
def test_a_dtd_after_the_root_element_is_malformed(tmp_path, name, fmt, doc, root, a):
    """The scan stops at the root element (a DTD can only stand before it): one placed later is
    malformed XML to the parser, expat as well, and nothing of it is expanded."""
    text = doc("", "&l9;")
    start = text.index(">", text.index(f"<{root}")) + 1
    p = tmp_path / name
    p.write_text(text[:start] + f"<!DOCTYPE {root} [\n{LAUGHS}]>" + text[start:])
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=rf"^{p}:\d+: malformed \w+ \("):
        _import(p, fmt)
    assert time.perf_counter() - t0 < 5


def test_a_jsonld_remote_context_is_never_fetched(tmp_path, opened):
    """rdflib's JSON-LD reader fetches a ``@context`` that names a document (a URL, a local file)
    while it parses: refused (E429), the document never opened; a context in the file imports."""
    ctx = tmp_path / "ctx.json"
    ctx.write_text('{"@context": {"label": "http://www.w3.org/2000/01/rdf-schema#label"}}')
    inline = {"label": "http://www.w3.org/2000/01/rdf-schema#label"}
    p = tmp_path / "x.jsonld"
    for context in (
        "file:///etc/passwd",
        ctx.as_uri(),
        "http://127.0.0.1:9/context.jsonld",
        [inline, ctx.as_uri()],
        {"@import": ctx.as_uri()},
    ):
        for where in ("top", "nested"):  # a term's scoped context is fetched too
            doc = {"@id": "http://ex.org/A", "label": "A"}
            if where == "top":
                doc["@context"] = context
            else:
                doc["@context"] = {**inline, "rel": {"@id": "http://ex.org/rel", "@context": context}}
            p.write_text(json.dumps(doc))
            opened.clear()
            with pytest.raises(InputError, match=rf"^{p}: refused: a JSON-LD @context names another document"):
                import_file(KnowledgeBase.open(":memory:"), p)
            assert not [o for o in opened if "passwd" in o or "ctx.json" in o or "127.0.0.1" in o], opened
    p.write_text(json.dumps({"@context": inline, "@id": "http://ex.org/A", "label": "A"}))
    kb = KnowledgeBase.open(":memory:")
    assert import_file(kb, p, ids="iri").nodes == 1 and kb.node("http://ex.org/A")["title"] == "A"
