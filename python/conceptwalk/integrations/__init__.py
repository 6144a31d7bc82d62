"""Adapters for retrieval frameworks (optional extras; an interface layer: nothing imports it).

- :mod:`conceptwalk.integrations.langchain` (``pip install "conceptwalk[langchain]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkWrapRetriever`` (the wrap over any retriever).
- :mod:`conceptwalk.integrations.llama_index` (``pip install "conceptwalk[llamaindex]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkPostprocessor`` (the wrap as a node postprocessor).

Both share :func:`wrap_results` and :func:`result_text`/:func:`result_metadata` below, so a
LangChain ``Document`` and a LlamaIndex node carry the same text and metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["PROVENANCE_KEYS", "result_text", "result_metadata", "wrap_results", "bodies"]

#: The provenance axes a hop may carry (see docs/wrap.md), plus ``absent``.
PROVENANCE_KEYS = ("authority", "fidelity", "extractionProvenance", "lifecycle", "absent")


def bodies(kb: Any, ids: Sequence[str]) -> dict[str, str | None]:
    """id -> body from the store (ids the caller was already given), {} for a source without bodies."""
    nodes = getattr(kb, "nodes", None)
    if not callable(nodes) or not ids:
        return {}
    return {n["id"]: n.get("body") for n in nodes(list(ids))}


def result_text(result: Mapping[str, Any], body: str | None) -> str:
    """A result's text: its title, a blank line, its body (either may be missing; the id when both are).

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
    """A result's metadata: ``id``, ``type``, ``score`` (the flat score, or the walk score of an
    appended item), ``via`` (``"flat"`` or ``"concept-walk"``), ``paths`` (the walk's paths, [] for
    a flat hit) and ``provenance`` (per path, per hop, the provenance axes it carries).

    Examples
    --------
    >>> m = result_metadata({"id": "f", "type": "FILE", "via": "concept-walk", "walkScore": 0.5,
    ...     "paths": [{"hops": [{"from": "c", "to": "f", "type": "IMPLEMENTED_BY", "authority": "reviewed"}]}]})
    >>> m["score"], m["via"], m["provenance"]
    (0.5, 'concept-walk', [[{'from': 'c', 'to': 'f', 'type': 'IMPLEMENTED_BY', 'authority': 'reviewed'}]])
    """
    walk = result.get("via") == "concept-walk"
    paths = list(result.get("paths") or [])
    prov = [[{k: h[k] for k in ("from", "to", "type", *PROVENANCE_KEYS) if k in h} for h in p.get("hops", [])]
            for p in paths]
    return {"id": result["id"], "type": result.get("type"),
            "score": result.get("walkScore") if walk else result.get("score"),
            "via": "concept-walk" if walk else "flat", "paths": paths, "provenance": prov}


def wrap_results(kb: Any, text: str, k: int, caller: Any, *, concept_walk: bool, config: Any = None,
                 flat_search: Callable[[str, int], Sequence[Mapping[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """The wrap's results for ``text`` (``ConceptAnchoredRetriever.query``) over ``flat_search``
    (default: the store's own search for ``caller``)."""
    from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

    flat = flat_search if flat_search is not None else builtin_flat_search(kb, caller=caller)
    r = ConceptAnchoredRetriever(flat, kb, config=config)
    return list(r.query(text, k, concept_walk=concept_walk, caller=caller))
