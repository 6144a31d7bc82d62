"""Adapters for retrieval frameworks (optional extras; an interface layer: nothing imports it).

- :mod:`conceptwalk.integrations.langchain` (``pip install "conceptwalk[langchain]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkWrapRetriever`` (the wrap over any retriever).
- :mod:`conceptwalk.integrations.llama_index` (``pip install "conceptwalk[llamaindex]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkPostprocessor`` (the wrap as a node postprocessor).

Both share :func:`bodies`, :func:`result_text` and :func:`result_metadata` below, so a
LangChain ``Document`` and a LlamaIndex node carry the same text and metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PROVENANCE_KEYS", "result_text", "result_metadata", "bodies"]

#: The provenance axes a hop may carry (see docs/wrap.md), plus ``absent``.
PROVENANCE_KEYS = ("authority", "fidelity", "extractionProvenance", "lifecycle", "absent")


def bodies(kb: Any, ids: Sequence[str]) -> dict[str, str | None]:
    """The bodies of nodes the caller was already given, from the store.

    Parameters
    ----------
    kb : KnowledgeBase or LinkGraph
        The source (a bare graph holds no bodies).
    ids : sequence of str
        Node ids from results the caller received.

    Returns
    -------
    dict of str to (str or None)
        id -> body; empty for a source without bodies.

    Examples
    --------
    >>> bodies(object(), ["a"])
    {}
    """
    nodes = getattr(kb, "nodes", None)
    if not callable(nodes) or not ids:
        return {}
    return {n["id"]: n.get("body") for n in nodes(list(ids))}


def result_text(result: Mapping[str, Any], body: str | None) -> str:
    """A result's text: its title, a blank line, its body (either may be missing; the id when both are).

    Parameters
    ----------
    result : mapping
        One wrap result (``id``, ``title``, ...).
    body : str or None
        The node's body.

    Returns
    -------
    str

    Examples
    --------
    >>> result_text({"id": "a", "title": "Alpha"}, "All about a.")
    'Alpha\\n\\nAll about a.'
    >>> result_text({"id": "a", "title": None}, None)
    'a'
    """
    parts = [p for p in (result.get("title"), body) if p]
    return "\n\n".join(parts) if parts else str(result["id"])


def result_metadata(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result's metadata: ``id``, ``type``, ``score`` (the flat search's ``score``, or the
    ``walkScore`` of an appended item: two scales, never to be compared - ``via`` says which),
    ``via`` (``"flat"`` or ``"concept-walk"``), ``paths`` (the walk's paths, [] for a flat hit)
    and ``provenance`` (per path, per hop, the provenance axes it carries).

    Parameters
    ----------
    result : mapping
        One wrap result.

    Returns
    -------
    dict

    Examples
    --------
    >>> m = result_metadata({"id": "f", "type": "FILE", "via": "concept-walk", "walkScore": 0.5,
    ...     "paths": [{"hops": [{"from": "c", "to": "f", "type": "IMPLEMENTED_BY", "authority": "reviewed"}]}]})
    >>> m["score"], m["via"], m["provenance"]
    (0.5, 'concept-walk', [[{'from': 'c', 'to': 'f', 'type': 'IMPLEMENTED_BY', 'authority': 'reviewed'}]])
    """
    walk = result.get("via") == "concept-walk"
    paths = list(result.get("paths") or [])
    prov = [
        [{k: h[k] for k in ("from", "to", "type", *PROVENANCE_KEYS) if k in h} for h in p.get("hops", [])]
        for p in paths
    ]
    return {
        "id": result["id"],
        "type": result.get("type"),
        "score": result.get("walkScore") if walk else result.get("score"),
        "via": "concept-walk" if walk else "flat",
        "paths": paths,
        "provenance": prov,
    }
