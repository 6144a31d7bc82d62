"""Probe: how much could a concept walk add on this knowledge base, before anyone turns it on?"""

from __future__ import annotations

import shlex
import statistics
from dataclasses import replace
from typing import Any

import numpy as np

from ..graph.walk import typed_walk
from ..graph import Caller
from ._reader import StoreReader
from .config import WalkConfig
from .walk import AXES, type_flags

__all__ = ["probe", "format_probe", "suggest_settings", "SUGGEST_MAX_ADDED"]

#: The cap on additions the suggested ``conceptwalk query`` line sets (``--max-added``).
SUGGEST_MAX_ADDED = 10


def _stats(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "median": None, "max": None}
    return {"mean": round(statistics.fmean(values), 4), "median": statistics.median(values), "max": max(values)}


def probe(kb: Any, config: WalkConfig | None = None, *, caller: Caller | None = None) -> dict[str, Any]:
    """Measure whether a walk can add value on ``kb`` with ``config``'s gates and budgets.

    For every concept node the caller may see, one unbudgeted walk (the config's gates and node
    filters, 2 hops) and one walk with the config's own hops and budgets.

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
    config : WalkConfig, optional
    caller : Caller, optional
        Whose view to measure (default: :meth:`Caller.public`, never all access; pass
        :meth:`Caller.all_access` for the operator's view). Every figure is over
        what the caller sees: the report equals the report on the store with the caller's
        hidden nodes (and their edges and aliases) deleted.

    Returns
    -------
    dict
        JSON-ready: ``nodes``, ``edges``, ``concepts``; ``gates`` (edges per configured expansion
        and admission type, and the configured types the graph lacks); ``reach``
        (``within1Hop``/``within2Hops``: share of concepts with at least one admissible
        candidate within 1 and 2 hops); ``candidatesPerConcept`` (mean/median/max within
        ``max_hops``, unbudgeted); ``budget`` (``truncatedShare``: share of concepts whose walk
        the config's budgets would cut); ``fragmentation`` (alias groups: a canonical id with
        the aliases that are themselves node ids; ids per group mean/max, groups with more
        than one id, aliases per canonical, aliases with several canonicals); ``provenance``
        (per axis and column: edges with a value in storage, its share, whether the projection
        loaded the column and how many values it holds).

    Examples
    --------
    >>> from conceptwalk import LinkGraph
    >>> g = LinkGraph.from_edges(
    ...     [("c1", "f1", "IMPLEMENTED_BY"), ("c1", "c2", "RELATED_TO"), ("c2", "d1", "EXPLAINED_BY")],
    ...     nodes=[{"id": "c1", "type": "CONCEPT"}, {"id": "c2", "type": "CONCEPT"}, {"id": "c3", "type": "CONCEPT"}])
    >>> rep = probe(g)
    >>> rep["concepts"], rep["reach"]
    (3, {'within1Hop': 0.6667, 'within2Hops': 0.6667, 'concepts1Hop': 2, 'concepts2Hops': 2})
    >>> rep["candidatesPerConcept"]
    {'mean': 1.3333, 'median': 2, 'max': 2, 'hops': 2}
    """
    cfg = config if config is not None else WalkConfig()
    who = caller if caller is not None else Caller.public()  # fail closed
    source = StoreReader(kb, annotations=cfg.annotations)
    snap = source.read_cache()
    g = snap.graph
    view = g.view(who)
    vm = view.mask
    visible = None if vm is None else vm.mask
    concepts = snap.concept_indices(cfg)
    if visible is not None:
        concepts = concepts[visible[concepts]]
    expand = type_flags(cfg.expand_edge_types, g.edge_type_names)
    admit = type_flags(cfg.admit_edge_types, g.edge_type_names)
    node_types = exp_nodes = adm_nodes = None
    if cfg.expand_node_types is not None or cfg.admit_node_types is not None:
        node_types = np.ascontiguousarray(g.node_type_codes, dtype=np.int32)
        ones = np.ones(len(g.node_type_names), dtype=bool)
        exp_nodes = ones if cfg.expand_node_types is None else type_flags(cfg.expand_node_types, g.node_type_names)
        adm_nodes = ones if cfg.admit_node_types is None else type_flags(cfg.admit_node_types, g.node_type_names)
    big_edges = int(g.core.num_entries) + 1
    big_cands = g.num_nodes + 1
    reach1 = reach2 = truncated = 0
    per_concept: list[int] = []
    for c in concepts.tolist():
        start = np.array([c], dtype=np.int32)
        walked = typed_walk(
            g,
            start,
            2,
            expand,
            admit,
            node_types,
            exp_nodes,
            adm_nodes,
            max_edges=big_edges,
            max_candidates=big_cands,
            visible=vm,
            max_paths=1,
        )
        within1 = set(walked.candidates[walked.min_hops == 1].tolist())
        within2 = set(walked.candidates.tolist())
        reach1 += bool(within1)
        reach2 += bool(within2)
        per_concept.append(len(within1 if cfg.max_hops == 1 else within2))
        truncated += bool(
            typed_walk(
                g,
                start,
                cfg.max_hops,
                expand,
                admit,
                node_types,
                exp_nodes,
                adm_nodes,
                max_edges=cfg.max_edges,
                max_candidates=cfg.max_candidates,
                visible=vm,
                max_paths=1,
            ).truncated
        )
    n = len(per_concept)

    def share(x: int) -> float | None:
        return round(x / n, 4) if n else None

    # Every count below is over what the caller sees: the canonical edges between visible nodes
    # (and, for the store's columns, the stored edges between visible nodes), so the report
    # equals the report on the store with the caller's hidden nodes deleted.
    seen_edges = np.ones(g.num_edges, dtype=bool) if visible is None else (visible[g.edge_src] & visible[g.edge_dst])
    type_counts = (
        np.bincount(g.edge_type_codes[seen_edges], minlength=len(g.edge_type_names))
        if g.num_edges
        else np.zeros(len(g.edge_type_names), dtype=np.int64)
    )
    counts = {name: int(type_counts[i]) for i, name in enumerate(g.edge_type_names) if type_counts[i]}
    gates = {
        "expand": {t: counts.get(t, 0) for t in cfg.expand_edge_types},
        "admit": {t: counts.get(t, 0) for t in cfg.admit_edge_types},
        "missing": [t for t in dict.fromkeys(cfg.expand_edge_types + cfg.admit_edge_types) if t not in counts],
    }
    # fragmentation
    aliases = snap.aliases()

    def seen(nid: str) -> bool:
        i = g.id_index.get(nid)
        return i is not None and (visible is None or bool(visible[i]))

    groups: dict[str, set[str]] = {}
    per_canonical: dict[str, int] = {}
    ambiguous = 0
    for alias, canon in aliases.items():
        vis = [c for c in canon if seen(c)]
        ambiguous += len(vis) > 1
        for c in vis:
            grp = groups.setdefault(c, {c})
            per_canonical[c] = per_canonical.get(c, 0) + 1
            if alias != c and seen(alias):
                grp.add(alias)
    sizes = [len(s) for s in groups.values()]
    fragmentation = {
        "aliases": sum(1 for a, cs in aliases.items() if any(seen(c) for c in cs)),
        "canonicals": len(groups),
        "idsPerGroup": _stats(sizes),
        "fragmentedGroups": sum(1 for s in sizes if s > 1),
        "aliasesPerCanonical": _stats(list(per_canonical.values())),
        "ambiguousAliases": ambiguous,
    }
    # provenance
    stored = snap.visible_counts(view) if source.is_store else None
    provenance: dict[str, Any] = {}
    for axis, cols in AXES.items():
        per_col = {}
        for col in cols:
            loaded = col in g.edge_annotations
            in_proj = 0
            if loaded:
                values, _ = g.edge_annotations[col]
                present = ~np.isnan(values) if values.dtype.kind == "f" else values >= 0
                in_proj = int(np.count_nonzero(present & seen_edges))
                # A bare graph has a column when any of its input edges had the key -- perhaps
                # only hidden ones: it shows as loaded when the caller sees a value in it.
                loaded = source.is_store or in_proj > 0
            if stored is not None:
                n_stored, total = stored.get(col, 0), stored["edges"]
            else:  # a bare LinkGraph is its own storage
                n_stored, total = in_proj, int(seen_edges.sum())
            per_col[col] = {
                "storage": n_stored,
                "storageShare": round(n_stored / total, 4) if total else None,
                "projection": "loaded" if loaded else "not-loaded",
                "projectionCount": in_proj,
            }
        provenance[axis] = (
            per_col[cols[0]]
            if len(cols) == 1
            else {"method" if c == "extraction_method" else "confidence": v for c, v in per_col.items()}
        )
    return {
        "nodes": g.num_nodes if visible is None else int(vm.visible_count),  # type: ignore[union-attr]
        "edges": int(seen_edges.sum()),
        "concepts": n,
        "config": {
            "maxHops": cfg.max_hops,
            "expandEdgeTypes": list(cfg.expand_edge_types),
            "admitEdgeTypes": list(cfg.admit_edge_types),
            "conceptNodeTypes": None if cfg.concept_node_types is None else list(cfg.concept_node_types),
            "maxEdges": cfg.max_edges,
            "maxCandidates": cfg.max_candidates,
        },
        "gates": gates,
        "reach": {
            "within1Hop": share(reach1),
            "within2Hops": share(reach2),
            "concepts1Hop": reach1,
            "concepts2Hops": reach2,
        },
        "candidatesPerConcept": dict(_stats(per_concept), hops=cfg.max_hops),
        "budget": {"truncatedShare": share(truncated), "truncatedConcepts": truncated},
        "fragmentation": fragmentation,
        "provenance": provenance,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: Any) -> str:
    """A figure as text: ``n/a`` where there is nothing to measure (never ``None``)."""
    return "n/a" if x is None else f"{x}"


def format_probe(rep: dict[str, Any]) -> str:
    """The probe report as text (what ``conceptwalk probe KB`` prints).

    Parameters
    ----------
    rep : dict
        A report returned by :func:`probe`.

    Returns
    -------
    str
        Several lines, without a trailing newline.
    """
    cpc = rep["candidatesPerConcept"]
    fr = rep["fragmentation"]
    lines = [
        f"concept-walk probe: {rep['concepts']:,} concepts, {rep['nodes']:,} nodes, {rep['edges']:,} edges",
        f"  gates: expand {rep['gates']['expand']}, admit {rep['gates']['admit']}"
        + (f"; not in this graph: {', '.join(rep['gates']['missing'])}" if rep["gates"]["missing"] else ""),
        f"  concepts with admissible neighbours: within 1 hop {_pct(rep['reach']['within1Hop'])}, "
        f"within 2 hops {_pct(rep['reach']['within2Hops'])}",
        f"  candidates per concept (within {cpc['hops']} hops, unbudgeted): mean {_num(cpc['mean'])}, "
        f"median {_num(cpc['median'])}, max {_num(cpc['max'])}",
        f"  budgets (edges {rep['config']['maxEdges']}, candidates {rep['config']['maxCandidates']}) "
        f"would cut {_pct(rep['budget']['truncatedShare'])} of single-concept walks",
        f"  fragmentation: {fr['aliases']:,} aliases over {fr['canonicals']:,} canonical ids; ids per group "
        f"mean {_num(fr['idsPerGroup']['mean'])}, max {_num(fr['idsPerGroup']['max'])}; {fr['fragmentedGroups']:,} groups "
        f"with fragment ids; {fr['ambiguousAliases']:,} ambiguous aliases",
        "  provenance (edges with a value in storage / loaded in the projection):",
    ]
    for axis, info in rep["provenance"].items():
        cols = {axis: info} if "storage" in info else {f"{axis}.{k}": v for k, v in info.items()}
        for name, v in cols.items():
            lines.append(
                f"    {name:<32} storage {v['storage']:>8,} ({_pct(v['storageShare'])})   "
                f"projection {v['projection']} ({v['projectionCount']:,})"
            )
    return "\n".join(lines)


def suggest_settings(
    kb: Any, config: WalkConfig | None = None, *, caller: Caller | None = None, kb_path: str = "KB"
) -> dict[str, Any] | None:
    """Settings under which the walk finds something on ``kb``, when ``config``'s do not.

    Derived from the KB's node and edge types as the caller sees them and from what the walk can
    reach: each node type, the most frequent first (at most 5 tried), is tried as the concept
    type, with every edge type the caller sees (by count, descending) for both expansion and
    admission; the first under which some concept reaches a candidate is suggested, with a
    ready ``conceptwalk query`` line whose question is the title of the first such concept (in
    id order).

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
    config : WalkConfig, optional
        The settings in use (default: the defaults); their hops and budgets are kept.
    caller : Caller, optional
        Whose view (default: :meth:`Caller.public`, as :func:`probe`; never all access).
    kb_path : str, default "KB"
        The KB's path as the command line should show it.

    Returns
    -------
    dict or None
        None when ``config`` already reaches candidates (nothing to suggest) or no node type
        does; else ``conceptNodeTypes``, ``expandEdgeTypes``, ``admitEdgeTypes``, ``maxAdded``,
        ``reach`` (the probe's reach under the suggestion), ``question`` and ``command``.

    Examples
    --------
    >>> from conceptwalk import LinkGraph
    >>> g = LinkGraph.from_edges([("w1", "w2", "ChildOf"), ("w2", "w3", "PeerOf")],
    ...     nodes=[{"id": i, "type": "WEAKNESS", "title": f"weakness {i}"} for i in ("w1", "w2", "w3")])
    >>> s = suggest_settings(g, kb_path="kb.db")
    >>> s["conceptNodeTypes"], s["admitEdgeTypes"]
    (['WEAKNESS'], ['ChildOf', 'PeerOf'])
    >>> print(s["command"])
    conceptwalk query kb.db 'weakness w1' --concept-walk --concept-types WEAKNESS --expand-edge-types ChildOf,PeerOf --admit-edge-types ChildOf,PeerOf --max-added 10
    """
    cfg = config if config is not None else WalkConfig()
    who = caller if caller is not None else Caller.public()
    base = probe(kb, cfg, caller=who)
    if base["concepts"] and base["reach"]["concepts2Hops"]:
        return None
    g = StoreReader(kb, annotations=False).read_cache().graph
    vm = who.visibility(g)
    visible = np.ones(g.num_nodes, dtype=bool) if vm is None else vm.mask
    seen_edges = visible[g.edge_src] & visible[g.edge_dst]
    ecount = np.bincount(g.edge_type_codes[seen_edges], minlength=len(g.edge_type_names))
    etypes = [
        g.edge_type_names[i]
        for i in sorted(range(len(ecount)), key=lambda i: (-ecount[i], g.edge_type_names[i]))
        if ecount[i]
    ]
    if not etypes:
        return None
    ncount = np.bincount(g.node_type_codes[visible], minlength=len(g.node_type_names))
    ntypes = [
        g.node_type_names[i]
        for i in sorted(range(len(ncount)), key=lambda i: (-ncount[i], g.node_type_names[i]))
        if ncount[i]
    ]
    flags = type_flags(tuple(etypes), g.edge_type_names)
    for t in ntypes[:5]:
        trial = replace(
            cfg,
            concept_node_types=(t,),
            expand_edge_types=tuple(etypes),
            admit_edge_types=tuple(etypes),
            max_candidates=SUGGEST_MAX_ADDED,
        )
        rep = probe(kb, trial, caller=who)
        if not rep["reach"]["concepts2Hops"]:
            continue
        question = None
        for i in np.flatnonzero((g.node_type_codes == g.node_type_names.index(t)) & visible).tolist():
            w = typed_walk(
                g,
                np.array([i], dtype=np.int32),
                cfg.max_hops,
                flags,
                flags,
                None,
                None,
                None,
                max_edges=cfg.max_edges,
                max_candidates=1,
                visible=vm,
            )
            if len(w.candidates):
                text = g.titles[i] or g.ids[i]
                question = question or text
                if shlex.quote(text) == f"'{text}'" or shlex.quote(text) == text:  # a plain one reads best
                    question = text
                    break
        if question is None:
            continue
        et = ",".join(etypes)
        cmd = [
            "conceptwalk",
            "query",
            kb_path,
            question,
            "--concept-walk",
            "--concept-types",
            t,
            "--expand-edge-types",
            et,
            "--admit-edge-types",
            et,
            "--max-added",
            str(SUGGEST_MAX_ADDED),
        ]
        if cfg.max_hops != 2:
            cmd += ["--max-hops", str(cfg.max_hops)]
        return {
            "conceptNodeTypes": [t],
            "expandEdgeTypes": etypes,
            "admitEdgeTypes": etypes,
            "maxAdded": SUGGEST_MAX_ADDED,
            "reach": rep["reach"],
            "question": question,
            "command": " ".join(shlex.quote(x) for x in cmd),
        }
    return None
