"""Concept-anchored retrieval: wrap a flat search with a bounded, typed concept walk.

A query is resolved to concepts (alias map, the flat search's own concept hits, semantic top-k,
normalize-only fallback); a small typed walk from them finds the code, decisions and memories
attached to those concepts; the finds are appended after the flat results, each with its path
and the provenance of every hop. Off by default; with it off the output is the flat output,
byte for byte. See ``docs/wrap.md``.

Examples
--------
>>> from conceptwalk import Caller
>>> from conceptwalk.kb.store import KnowledgeBase
>>> from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
>>> kb = KnowledgeBase.open(":memory:")
>>> _ = kb.add_nodes([{"id": "c:cache", "type": "CONCEPT", "title": "Cache invalidation"},
...                   {"id": "d:ttl", "type": "DECISION", "title": "Use a 5 minute TTL"}])
>>> _ = kb.add_edges([{"src": "c:cache", "dst": "d:ttl", "type": "EXPLAINED_BY", "authority": "adr"}])
>>> r = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
>>> [(h["id"], h.get("via")) for h in r.query("cache invalidation", 5, concept_walk=True,
...                                           caller=Caller.all_access())]
[('c:cache', None), ('d:ttl', 'concept-walk')]
"""

from __future__ import annotations

from .config import MAX_HOPS_CAP, WalkConfig, WalkTypesWarning
from .events import (
    CallbackSink,
    EventSink,
    JsonlSink,
    LoggingSink,
    load_event_schema,
    make_sink,
    summarize_events,
    summarize_file,
)
from .flat import BuiltinFlatSearch, builtin_flat_search
from .probe import probe, format_probe, suggest_settings
from .resolver import METHODS, ConceptResolver, ResolvedConcept, resolve
from .retriever import VIA, ConceptAnchoredRetriever, WrapResult
from .walk import ABSENT_IN_PROJECTION, ABSENT_IN_STORAGE

__all__ = [
    "ABSENT_IN_PROJECTION",
    "ABSENT_IN_STORAGE",
    "BuiltinFlatSearch",
    "CallbackSink",
    "ConceptAnchoredRetriever",
    "ConceptResolver",
    "EventSink",
    "JsonlSink",
    "LoggingSink",
    "MAX_HOPS_CAP",
    "METHODS",
    "ResolvedConcept",
    "VIA",
    "WalkConfig",
    "WalkTypesWarning",
    "WrapResult",
    "builtin_flat_search",
    "format_probe",
    "load_event_schema",
    "make_sink",
    "probe",
    "suggest_settings",
    "resolve",
    "summarize_events",
    "summarize_file",
]
