"""A :class:`~conceptwalk.graph.LinkGraph` to and from networkx: :meth:`LinkGraph.to_networkx`
(what one caller sees) and :meth:`LinkGraph.from_networkx`. networkx is imported only when called.

A LinkGraph holds node types, titles, scopes and lifecycles and typed edges with the five
annotation axes; nothing else. Its algorithms are unweighted, as published (the push walks edges,
resource allocation counts degrees, the shortest chain counts hops), so a networkx ``weight``
would change no answer: :func:`from_networkx` refuses a graph with attributes it cannot hold
rather than drop them silently (``unknown="ignore"`` drops them on purpose), and
:func:`conceptwalk.kb.importers.import_networkx` keeps them in a store as attributes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InputError, shown
from .visibility import Caller

if TYPE_CHECKING:  # pragma: no cover
    from .linkgraph import LinkGraph

__all__ = ["to_networkx", "from_networkx"]

_NODE_KEYS = ("title", "scopes", "lifecycle")
_EDGE_AXES = ("authority", "fidelity", "extraction_method", "extraction_confidence", "lifecycle")


def to_networkx(graph: LinkGraph, *, caller: Caller | None = None) -> Any:
    """The part of ``graph`` that ``caller`` sees, as a ``networkx.MultiDiGraph``.

    Fail closed: without a caller, the public nodes only. Hidden nodes, and every edge with a
    hidden end, are absent: the result equals the conversion of the graph with the hidden nodes
    deleted. Nodes carry ``type``, ``title``, ``scopes`` (a list) and ``lifecycle`` where they
    have them; edges are keyed by their type and carry ``type`` and the annotations present.

    Parameters
    ----------
    graph : LinkGraph
    caller : Caller, optional
        Whose view; default :meth:`Caller.public`.

    Returns
    -------
    networkx.MultiDiGraph

    Examples
    --------
    >>> from conceptwalk import Caller, LinkGraph
    >>> g = LinkGraph.from_edges([("a", "b", "USES"), ("b", "s")], nodes=[{"id": "s", "scopes": ["t1"]}])
    >>> sorted(g.to_networkx().nodes), sorted(g.to_networkx(caller=Caller.with_scopes("t1")).edges(keys=True))
    (['a', 'b'], [('a', 'b', 'USES'), ('b', 's', 'LINK')])
    """
    import networkx as nx

    caller = Caller.public() if caller is None else caller
    if not isinstance(caller, Caller):
        raise InputError(f"caller must be a Caller, got {type(caller).__name__}")
    visible = graph.scope_mask(caller.scopes).tolist()
    G = nx.MultiDiGraph()
    ids = graph.ids
    types = graph.node_type_names
    codes = graph.node_type_codes_list
    life_names = graph.node_lifecycle_names
    life = graph.node_lifecycle_codes.tolist()
    for i, nid in enumerate(ids):
        if not visible[i]:
            continue
        attrs: dict[str, Any] = {"type": types[codes[i]]}
        title = graph.titles[i]
        if title is not None:
            attrs["title"] = title
        scopes = graph.node_scopes_at(i)
        if scopes:
            attrs["scopes"] = list(scopes)
        if life[i] >= 0:
            attrs["lifecycle"] = life_names[life[i]]
        G.add_node(nid, **attrs)
    src, dst, typ = graph.edge_src.tolist(), graph.edge_dst.tolist(), graph.edge_type_codes.tolist()
    etypes = graph.edge_type_names
    axes = [k for k in _EDGE_AXES if k in graph.edge_annotations]
    for e in range(len(src)):
        u, v = src[e], dst[e]
        if not (visible[u] and visible[v]):
            continue
        t = etypes[typ[e]]
        eattrs: dict[str, Any] = {"type": t}
        for k in axes:
            val = graph.edge_annotation(e, k)
            if val is not None:
                eattrs[k] = val
        G.add_edge(ids[u], ids[v], key=t, **eattrs)
    return G


def from_networkx(G: Any, *, type_attr: str = "type", unknown: str = "error") -> LinkGraph:
    """A LinkGraph from a networkx graph (Graph, DiGraph, MultiGraph or MultiDiGraph).

    Node ids become ``str(node)``; node attributes ``type_attr`` -> type, ``title``, ``scopes``
    (a list of strings), ``lifecycle``; edge attributes ``type_attr`` -> type (default
    ``"LINK"``) and the annotation axes. An undirected edge is one edge, in the direction
    networkx lists it. Any other attribute -- ``weight`` included -- is refused
    (``unknown="error"``, the default): a LinkGraph cannot hold it and its algorithms are
    unweighted, so dropping it silently would hide that it changes nothing. ``unknown="ignore"``
    drops such attributes; to keep them, import the graph into a store
    (:func:`~conceptwalk.kb.importers.import_networkx` keeps them as attributes).

    Parameters
    ----------
    G : networkx graph
    type_attr : str
        The attribute holding node and edge types.
    unknown : {"error", "ignore"}
        Other attributes: refused (the default) or dropped.

    Returns
    -------
    LinkGraph

    Raises
    ------
    InputError
        An attribute the graph cannot hold (named with its node or edge), two nodes with the
        same ``str`` id, a bad value.

    Examples
    --------
    >>> import networkx as nx
    >>> from conceptwalk import LinkGraph
    >>> G = nx.Graph(); G.add_edge("tls", "tcp", type="RUNS_OVER", weight=2.0)
    >>> LinkGraph.from_networkx(G)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: edge ('tls', 'tcp'): attribute 'weight' has no place in a LinkGraph ...
    >>> LinkGraph.from_networkx(G, unknown="ignore").shortest_path("tls", "tcp")
    ['tls', 'tcp']
    """
    from .linkgraph import LinkGraph

    if unknown not in ("error", "ignore"):
        raise InputError(f"unknown must be 'error' or 'ignore', got {unknown!r}")
    if not isinstance(type_attr, str) or not type_attr:
        raise InputError(f"type_attr must be a non-empty string, got {type_attr!r}")
    if not (hasattr(G, "nodes") and hasattr(G, "edges") and hasattr(G, "is_multigraph")):
        raise InputError(f"G must be a networkx graph, got {type(G).__name__}")

    def refuse(where: str, key: Any) -> None:
        raise InputError(
            f"{where}: attribute {shown(key)} has no place in a LinkGraph (its algorithms are "
            f"unweighted, as published: a weight would change no answer); pass unknown='ignore' to "
            f"drop it, or import the graph into a KnowledgeBase (import_networkx keeps it as an attribute)"
        )

    nodes: list[dict[str, Any]] = []
    seen: dict[str, Any] = {}
    for n, attrs in G.nodes(data=True):
        sid = str(n)
        if sid in seen:
            raise InputError(f"nodes {shown(seen[sid])} and {shown(n)} both become id {shown(sid)}")
        seen[sid] = n
        row: dict[str, Any] = {"id": sid}
        for k, v in attrs.items():
            if k == type_attr:
                row["type"] = v
            elif k in _NODE_KEYS:
                row[k] = v
            elif unknown == "error":
                refuse(f"node {shown(n)}", k)
        nodes.append(row)
    edges: list[dict[str, Any]] = []
    for u, v, attrs in G.edges(data=True):
        erow: dict[str, Any] = {"src": str(u), "dst": str(v)}
        for k, val in attrs.items():
            if k == type_attr:
                erow["type"] = val
            elif k in _EDGE_AXES:
                if k == "extraction_confidence" and isinstance(val, float) and math.isnan(val):
                    continue
                erow[k] = val
            elif unknown == "error":
                refuse(f"edge ({shown(u)}, {shown(v)})", k)
        edges.append(erow)
    return LinkGraph.from_edges(edges, nodes=nodes)
