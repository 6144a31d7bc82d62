"""Probe: how much could a concept walk add on this knowledge base, before anyone turns it on?"""

from __future__ import annotations

import shlex
import statistics
from collections.abc import Set
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph.walk import typed_walk
from ..graph import Caller, LinkGraph
from ._reader import StoreReader
from .config import WalkConfig
from .walk import AXES, type_flags

__all__ = ["probe", "format_probe", "suggest_settings", "walk_types", "missing_types", "SUGGEST_MAX_ADDED"]

#: The cap on additions the suggested ``conceptwalk query`` line sets (``--max-added``).
SUGGEST_MAX_ADDED = 10


def _seen(g: LinkGraph, visible: Any) -> tuple[np.ndarray, np.ndarray]:
    """The caller's visible nodes (bool per node) and the edges it sees: both ends visible, not a
    self-loop (the walk's projection has none)."""
    vis = np.ones(g.num_nodes, dtype=bool) if visible is None else np.asarray(visible, dtype=bool)
    if not g.num_edges:
        return vis, np.zeros(0, dtype=bool)
    return vis, vis[g.edge_src] & vis[g.edge_dst] & (g.edge_src != g.edge_dst)


def _by_count(names: list[str], count: Any, pick: Any) -> tuple[str, ...]:
    return tuple(
        sorted((names[i] for i in range(len(names)) if pick(i)), key=lambda n: (-int(count[names.index(n)]), n))
    )


def missing_types(g: LinkGraph, visible: Any, config: WalkConfig) -> tuple[dict[str, list[str]], list[str]]:
    """The configured walk types the caller's view lacks, and the gates left with none.

    Counted over what the caller sees only (visible nodes, and edges whose two ends are
    visible), so the answer equals the answer on the store with the hidden nodes deleted.

    Parameters
    ----------
    g : LinkGraph
        The snapshot.
    visible : bool array or None
        The caller's mask (None: everything visible).
    config : WalkConfig
        The walk's gates.

    Returns
    -------
    missing : dict of str to list of str
        Per gate with an absent type (``expandEdgeTypes``, ``admitEdgeTypes``,
        ``conceptNodeTypes``, ``admitNodeTypes``, ``expandNodeTypes``), the absent types in
        configured order; empty when every type is present.
    empty : list of str
        The gates none of whose types is present and without which the walk adds nothing
        (``admitEdgeTypes``, ``conceptNodeTypes``, ``admitNodeTypes``). An absent expansion
        gate only makes the walk 1 hop: it is named in ``missing``, not here.

    Examples
    --------
    >>> from conceptwalk import LinkGraph
    >>> g = LinkGraph.from_edges([("c", "f", "IMPLEMENTED_BY")], nodes=[{"id": "c", "type": "CONCEPT"}])
    >>> missing, empty = missing_types(g, None, WalkConfig())
    >>> missing["admitEdgeTypes"], missing["expandEdgeTypes"], empty
    (['EXPLAINED_BY', 'ATTACHED_TO', 'TAGGED_CONCEPT'], ['PARENT_CONCEPT', 'RELATED_TO'], [])
    >>> missing_types(g, None, WalkConfig(admit_edge_types=["mitigates"]))[1]
    ['admitEdgeTypes']
    """
    return types_missing(*present_types(g, visible), config)


def present_types(g: LinkGraph, visible: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The edge types and the node types the caller sees (edges whose two ends it sees, not
    self-loops; visible nodes).

    Parameters
    ----------
    g : LinkGraph
    visible : bool array or None
        The caller's mask (None: everything visible).

    Returns
    -------
    (edge types, node types) : (frozenset of str, frozenset of str)
    """
    vis, seen = _seen(g, visible)
    ecount = np.bincount(g.edge_type_codes[seen], minlength=len(g.edge_type_names)) if g.num_edges else None
    edge_present = frozenset(n for i, n in enumerate(g.edge_type_names) if ecount is not None and ecount[i])
    ncount = np.bincount(g.node_type_codes[vis], minlength=len(g.node_type_names))
    node_present = frozenset(n for i, n in enumerate(g.node_type_names) if ncount[i])
    return edge_present, node_present


def types_missing(
    edge_present: Set[str], node_present: Set[str], config: WalkConfig
) -> tuple[dict[str, list[str]], list[str]]:
    """:func:`missing_types` from the types the caller sees (:func:`present_types`)."""
    gates: list[tuple[str, tuple[str, ...] | None, Set[str], bool]] = [
        ("expandEdgeTypes", config.expand_edge_types, edge_present, False),
        ("admitEdgeTypes", config.admit_edge_types, edge_present, True),
        ("conceptNodeTypes", config.concept_node_types, node_present, True),
        ("admitNodeTypes", config.admit_node_types, node_present, True),
        ("expandNodeTypes", config.expand_node_types, node_present, False),
    ]
    missing: dict[str, list[str]] = {}
    empty: list[str] = []
    for key, names, present, matters in gates:
        if names is None:  # any type
            continue
        gone = [t for t in names if t not in present]
        if gone:
            missing[key] = gone
            if len(gone) == len(names) and matters:
                empty.append(key)
    return missing, empty


def walk_types(
    kb: Any, config: WalkConfig | None = None, *, caller: Caller
) -> tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]]:
    """The concept, expansion and admission types of the graph as ``caller`` sees it, by the rule
    of :meth:`WalkConfig.for_kb` (which documents it).

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
    config : WalkConfig, optional
        Its ``concept_node_types`` are kept when the caller sees a node of one of them.
    caller : Caller
        Whose view (required).

    Returns
    -------
    (concept_node_types, expand_edge_types, admit_edge_types)

    Examples
    --------
    >>> from conceptwalk import Caller, LinkGraph
    >>> g = LinkGraph.from_edges([("w1", "w2", "ChildOf"), ("w2", "w3", "ChildOf"), ("w1", "w3", "PeerOf")],
    ...     nodes=[{"id": i, "type": "WEAKNESS"} for i in ("w1", "w2", "w3")])
    >>> walk_types(g, caller=Caller.all_access())
    (('WEAKNESS',), ('ChildOf',), ('ChildOf', 'PeerOf'))
    """
    if not isinstance(caller, Caller):
        raise InputError(f"caller must be a conceptwalk.Caller, got {type(caller).__name__}")
    cfg = config if config is not None else WalkConfig()
    g = StoreReader(kb, annotations=False).read_cache().graph
    vm = caller.visibility(g)
    return _walk_types(g, None if vm is None else vm.mask, cfg.concept_node_types)


def _walk_types(
    g: LinkGraph, visible: Any, concept_types: tuple[str, ...] | None
) -> tuple[tuple[str, ...] | None, tuple[str, ...], tuple[str, ...]]:
    vis, seen = _seen(g, visible)
    src, dst, codes = g.edge_src[seen], g.edge_dst[seen], g.edge_type_codes[seen]
    nnames = list(g.node_type_names)
    ntypes = np.asarray(g.node_type_codes)
    present = np.bincount(ntypes[vis], minlength=len(nnames))
    concept: tuple[str, ...] | None
    if concept_types is None:
        concept = None
    else:
        concept = tuple(t for t in concept_types if t in nnames and present[nnames.index(t)])
        if not concept:
            linked = np.zeros(g.num_nodes, dtype=bool)
            linked[src] = True
            linked[dst] = True
            per = np.bincount(ntypes[linked & vis], minlength=len(nnames))
            best = _by_count(nnames, per, lambda i: per[i] > 0)
            concept = best[:1] if best else concept_types  # no visible edge: keep the configured
    if concept is None:
        is_c = np.ones(g.num_nodes, dtype=bool)
    else:
        is_c = np.isin(ntypes, [nnames.index(t) for t in concept if t in nnames])
    enames = list(g.edge_type_names)
    m = len(enames)
    cs, cd = is_c[src], is_c[dst]
    cc = np.bincount(codes[cs & cd], minlength=m)
    co = np.bincount(codes[cs ^ cd], minlength=m)
    total = cc + co
    admit = _by_count(enames, total, lambda i: co[i] > 0 and co[i] >= cc[i])
    if admit:
        expand = _by_count(enames, total, lambda i: cc[i] > co[i])
    else:  # concepts only: the related concepts are the candidates; the hierarchy is walked
        admit = _by_count(enames, total, lambda i: cc[i] > 0)
        expand = admit[:1]
    return concept, expand, admit


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
    type, with the expansion and admission types the rule of :meth:`WalkConfig.for_kb` picks
    for it (:func:`walk_types`; an empty expansion gate makes the suggestion 1 hop); the
    first under which some concept reaches a candidate is suggested, with a
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
    conceptwalk query kb.db 'weakness w1' --concept-walk --concept-types WEAKNESS --expand-edge-types ChildOf --admit-edge-types ChildOf,PeerOf --max-added 10
    """
    cfg = config if config is not None else WalkConfig()
    who = caller if caller is not None else Caller.public()
    base = probe(kb, cfg, caller=who)
    if base["concepts"] and base["reach"]["concepts2Hops"]:
        return None
    g = StoreReader(kb, annotations=False).read_cache().graph
    vm = who.visibility(g)
    visible = np.ones(g.num_nodes, dtype=bool) if vm is None else vm.mask
    _, seen_edges = _seen(g, visible)
    if not seen_edges.any():
        return None
    ncount = np.bincount(g.node_type_codes[visible], minlength=len(g.node_type_names))
    ntypes = [
        g.node_type_names[i]
        for i in sorted(range(len(ncount)), key=lambda i: (-ncount[i], g.node_type_names[i]))
        if ncount[i]
    ]
    for t in ntypes[:5]:
        _, expand, admit = _walk_types(g, visible, (t,))
        hops = cfg.max_hops if expand else 1
        trial = replace(
            cfg,
            max_hops=hops,
            concept_node_types=(t,),
            expand_edge_types=expand,
            admit_edge_types=admit,
            max_candidates=SUGGEST_MAX_ADDED,
        )
        eflags = type_flags(expand, g.edge_type_names)
        aflags = type_flags(admit, g.edge_type_names)
        rep = probe(kb, trial, caller=who)
        if not rep["reach"]["concepts2Hops"]:
            continue
        question = None
        for i in np.flatnonzero((g.node_type_codes == g.node_type_names.index(t)) & visible).tolist():
            w = typed_walk(
                g,
                np.array([i], dtype=np.int32),
                hops,
                eflags,
                aflags,
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
        cmd = ["conceptwalk", "query", kb_path, question, "--concept-walk", "--concept-types", t]
        if expand:
            cmd += ["--expand-edge-types", ",".join(expand)]
        cmd += ["--admit-edge-types", ",".join(admit), "--max-added", str(SUGGEST_MAX_ADDED)]
        if hops != 2:
            cmd += ["--max-hops", str(hops)]
        return {
            "conceptNodeTypes": [t],
            "expandEdgeTypes": list(expand),
            "admitEdgeTypes": list(admit),
            "maxAdded": SUGGEST_MAX_ADDED,
            "reach": rep["reach"],
            "question": question,
            "command": " ".join(shlex.quote(x) for x in cmd),
        }
    return None
