"""Real knowledge graphs that ship inside PyPI packages (nothing is downloaded).

- :func:`load_umls`: the UMLS semantic network bundled with pykeen (``pykeen/datasets/umls``;
  135 semantic types, 46 typed relations, 6,529 triples). Install the data with
  ``pip install --no-deps pykeen`` (no torch needed: pykeen is never imported, only its files read).
- :func:`load_cwe`: MITRE's CWE catalogue bundled with cwe2 (``cwe2/database_v49/cwec_v4.14.xml``):
  weaknesses, categories and views with their ``ChildOf``/``CanPrecede``/``PeerOf``/... relations and
  category memberships, titles, descriptions and statuses.

Each loader returns a :class:`Dataset` of node rows and edge rows in the import format
(the keys of one JSONL line), usable with :meth:`LinkGraph.from_edges` or a knowledge base's
``add_nodes``/``add_edges``.
"""

from __future__ import annotations

import importlib.util
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConceptwalkError
from ..graph import LinkGraph

__all__ = ["Dataset", "load_umls", "load_cwe", "available", "DATASETS"]


@dataclass
class Dataset:
    """A real knowledge graph as rows in the import format, with where it was read from.

    Attributes
    ----------
    name : str
        ``"umls"`` or ``"cwe"``.
    nodes : list of dict
        Node rows (keys of :data:`~conceptwalk.kb.NODE_KEYS`).
    edges : list of dict
        Edge rows (keys of :data:`~conceptwalk.kb.EDGE_KEYS`).
    source : str
        The file or directory the rows were read from.
    notes : dict
        Counts worth reporting (``triples``, ``weaknesses``, ...).

    Examples
    --------
    >>> from conceptwalk.kb.datasets import available, load_umls
    >>> if available()["umls"]:
    ...     ds = load_umls()
    ...     assert ds.to_linkgraph().num_nodes == len(ds.nodes) == 135
    """

    name: str
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    source: str
    notes: dict[str, Any] = field(default_factory=dict)

    def to_linkgraph(self) -> LinkGraph:
        """Build the graph directly from the rows (no store).

        Returns
        -------
        LinkGraph
            The snapshot of :attr:`nodes` and :attr:`edges`.
        """
        return LinkGraph.from_edges(self.edges, nodes=self.nodes)

    def load_into(self, kb: Any) -> dict[str, int]:
        """Write the rows into a knowledge base (two transactions).

        Parameters
        ----------
        kb : KnowledgeBase
            The store to write into (nodes first, then edges).

        Returns
        -------
        dict
            ``{"nodes": rows written, "edges": rows written}``.
        """
        kb.add_nodes(self.nodes)
        kb.add_edges(self.edges)
        return {"nodes": len(self.nodes), "edges": len(self.edges)}


def _package_dir(package: str, install_hint: str) -> str:
    spec = importlib.util.find_spec(package)  # locates without importing (pykeen imports torch)
    if spec is None or not spec.submodule_search_locations:
        raise ConceptwalkError(f"the {package!r} package is not installed; {install_hint}")
    return list(spec.submodule_search_locations)[0]


def load_umls() -> Dataset:
    """The UMLS semantic network from pykeen's bundled TSV files (train+valid+test triples).

    Nodes are semantic types (type ``SEMANTIC_TYPE``, title with spaces); edges are the typed
    relations (``isa``, ``location_of``, ...), each annotated ``authority="UMLS"``,
    ``extraction_method="CURATED"``, ``extraction_confidence=1.0``.

    Returns
    -------
    Dataset
        135 nodes and 6,529 edges (46 relation types).

    Raises
    ------
    ConceptwalkError
        pykeen is not installed (``pip install --no-deps pykeen``) or a file is malformed.
    """
    base = os.path.join(
        _package_dir("pykeen", "install its data with `pip install --no-deps pykeen`"), "datasets", "umls"
    )
    edges: list[dict[str, Any]] = []
    names: set[str] = set()
    for split in ("train.txt", "valid.txt", "test.txt"):
        path = os.path.join(base, split)
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line:
                    continue
                parts = line.split("\t")
                if len(parts) != 3:
                    raise ConceptwalkError(f"{path}:{lineno}: expected 3 tab-separated fields")
                h, r, t = parts
                names.update((h, t))
                edges.append(
                    {
                        "src": h,
                        "dst": t,
                        "type": r,
                        "authority": "UMLS",
                        "extraction_method": "CURATED",
                        "extraction_confidence": 1.0,
                    }
                )
    nodes = [{"id": n, "type": "SEMANTIC_TYPE", "title": n.replace("_", " ")} for n in sorted(names)]
    return Dataset("umls", nodes, edges, base, {"triples": len(edges)})


def load_cwe() -> Dataset:
    """MITRE's CWE catalogue from cwe2's bundled XML.

    Nodes: ``CWE-<id>`` weaknesses (type ``WEAKNESS``), ``CWE-CAT-<id>`` categories (``CATEGORY``)
    and ``CWE-VIEW-<id>`` views (``VIEW``), titled by name, with the description as body and the
    status (Stable, Draft, Incomplete, Deprecated, ...) as lifecycle. Edges: each
    ``Related_Weakness`` (type = its nature: ``ChildOf``, ``CanPrecede``, ``PeerOf``,
    ``CanAlsoBe``, ``Requires``, ``StartsWith``, ``CanFollow``), category membership
    (``HasMember``: category -> member) and view membership (``HasMember``), annotated with
    ``authority="MITRE"`` and, for weakness relations, ``fidelity`` = the relation's ordinal
    (``Primary``) when given.

    Returns
    -------
    Dataset
        The weaknesses, categories and views with their relations.

    Raises
    ------
    ConceptwalkError
        cwe2 is not installed (``pip install cwe2``) or ships no XML file.
    """
    base = _package_dir("cwe2", "install it with `pip install cwe2`")
    xmls = sorted(f for f in os.listdir(os.path.join(base, "database_v49")) if f.endswith(".xml"))
    if not xmls:
        raise ConceptwalkError(f"no CWE XML file under {base}/database_v49")
    path = os.path.join(base, "database_v49", xmls[-1])
    root = ET.parse(path).getroot()
    ns = root.tag.split("}")[0] + "}" if root.tag.startswith("{") else ""

    def text(el: ET.Element | None) -> str | None:
        if el is None:
            return None
        s = " ".join("".join(el.itertext()).split())
        return s or None

    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for w in root.iter(ns + "Weakness"):
        wid = f"CWE-{w.get('ID')}"
        nodes.append(
            {
                "id": wid,
                "type": "WEAKNESS",
                "title": w.get("Name"),
                "body": text(w.find(ns + "Description")),
                "lifecycle": w.get("Status"),
            }
        )
        rel = w.find(ns + "Related_Weaknesses")
        for r in rel if rel is not None else []:
            e: dict[str, Any] = {
                "src": wid,
                "dst": f"CWE-{r.get('CWE_ID')}",
                "type": r.get("Nature"),
                "authority": "MITRE",
            }
            if r.get("Ordinal"):
                e["fidelity"] = r.get("Ordinal")
            edges.append(e)
    for tag, prefix, ntype in (("Category", "CWE-CAT-", "CATEGORY"), ("View", "CWE-VIEW-", "VIEW")):
        for c in root.iter(ns + tag):
            cid = f"{prefix}{c.get('ID')}"
            nodes.append(
                {
                    "id": cid,
                    "type": ntype,
                    "title": c.get("Name"),
                    "body": text(c.find(ns + "Summary")) or text(c.find(ns + "Objective")),
                    "lifecycle": c.get("Status"),
                }
            )
            for group in ("Relationships", "Members"):
                rel = c.find(ns + group)
                for m in rel if rel is not None else []:
                    if m.get("CWE_ID") is None:
                        continue
                    edges.append(
                        {"src": cid, "dst": f"CWE-{m.get('CWE_ID')}", "type": "HasMember", "authority": "MITRE"}
                    )
    # Members may point at categories/views by CWE_ID: map ids that are not weaknesses.
    kinds = {n["id"].split("-")[-1]: n["id"] for n in nodes if n["type"] != "WEAKNESS"}
    weak = {n["id"] for n in nodes if n["type"] == "WEAKNESS"}
    for e in edges:
        if e["dst"] not in weak:
            num = e["dst"].split("-")[-1]
            if num in kinds:
                e["dst"] = kinds[num]
    seen: set[tuple[str, str, str]] = set()
    unique = []
    for e in edges:
        key = (e["src"], e["dst"], e["type"])
        if key not in seen:
            seen.add(key)
            unique.append(e)
    return Dataset("cwe", nodes, unique, path, {"weaknesses": len(weak)})


DATASETS = {"umls": load_umls, "cwe": load_cwe}


def available() -> dict[str, bool]:
    """Which bundled datasets can be loaded here.

    Returns
    -------
    dict of str to bool
        ``{"umls": ..., "cwe": ...}``: whether the package holding each one is installed.
    """
    return {"umls": importlib.util.find_spec("pykeen") is not None, "cwe": importlib.util.find_spec("cwe2") is not None}
