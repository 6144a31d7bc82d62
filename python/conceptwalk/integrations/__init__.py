"""Adapters for retrieval frameworks (optional extras; an interface layer: nothing imports it).

- :mod:`conceptwalk.integrations.langchain` (``pip install "conceptwalk[langchain]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkWrapRetriever`` (the wrap over any retriever).
- :mod:`conceptwalk.integrations.llama_index` (``pip install "conceptwalk[llamaindex]"``):
  ``ConceptwalkRetriever`` and ``ConceptWalkPostprocessor`` (the wrap as a node postprocessor).

Both share :func:`bodies`, :func:`result_text` and :func:`result_metadata` below, so a
LangChain ``Document`` and a LlamaIndex node carry the same text and metadata, and
:func:`check_fields`, so every adapter's constructor raises the library's errors (an
:class:`~conceptwalk.errors.InputError`, never pydantic's ``ValidationError``) with one rule for
``k`` (:func:`conceptwalk.graph.checks.check_count`: a positive integer, booleans and strings
refused), as every other entry point does.

**The caller per call.** Each retriever is built with a ``caller`` (required: there is no
default access); a call may name another one -- LangChain through its run-time configuration,
``invoke(q, config={"configurable": {"caller": c}})``, LlamaIndex through ``retrieve(q,
caller=c)`` or the :func:`conceptwalk.integrations.llama_index.caller_context` block -- so one
retriever serves every tenant of a server. A call that names none answers for the retriever's
own ``caller`` (make it ``Caller.public()`` on a multi-tenant server); a named caller that is not
a :class:`~conceptwalk.Caller` (``None``, a token string) is refused, never widened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from ..graph.checks import check_count
from ..tools.common import check_caller

__all__ = ["PROVENANCE_KEYS", "result_text", "result_metadata", "bodies", "check_fields"]

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


def check_fields(owner: str, fields: Mapping[str, Any], *, k: bool = False) -> None:
    """Check an adapter's constructor arguments before its framework (pydantic) sees them.

    ``caller`` must be a :class:`~conceptwalk.Caller` (absent counts as ``None``, error E40),
    ``k`` (when the adapter has one and it is given) a positive integer (E44: ``True`` and
    ``"3"`` are refused, not coerced), and ``concept_walk`` (when given) a bool.

    Parameters
    ----------
    owner : str
        The adapter's class name, for the messages.
    fields : mapping
        The keyword arguments the constructor received.
    k : bool
        Whether the adapter takes ``k``.

    Raises
    ------
    InputError
        The first bad argument.

    Examples
    --------
    >>> from conceptwalk import Caller
    >>> check_fields("R", {"caller": Caller.public(), "k": 3}, k=True)
    >>> check_fields("R", {"caller": Caller.public(), "k": True}, k=True)
    Traceback (most recent call last):
    ...
    conceptwalk.errors.InputError: k must be a positive integer, got True
    """
    check_caller(fields.get("caller"))
    if k and "k" in fields:
        check_count(fields["k"])
    if "concept_walk" in fields and not isinstance(fields["concept_walk"], bool):
        raise InputError(f"{owner}: concept_walk must be True or False, got {type(fields['concept_walk']).__name__}")


def framework_error(owner: str, exc: Exception) -> InputError:
    """A framework's validation error (pydantic's ``ValidationError``) as the library's
    :class:`~conceptwalk.errors.InputError`: ``"<owner>: <field>: <what pydantic said>"``.

    Parameters
    ----------
    owner : str
        The adapter's class name.
    exc : Exception
        The framework's error (its ``errors()`` list is read when it has one).

    Returns
    -------
    InputError

    Examples
    --------
    >>> framework_error("R", ValueError("bad")).args[0]
    'R: bad'
    """
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
        return InputError(f"{owner}: {where}: {first.get('msg', exc)}")
    return InputError(f"{owner}: {exc}")
