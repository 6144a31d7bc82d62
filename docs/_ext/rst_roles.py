"""A griffe extension for the API reference: the docstrings are numpydoc with Sphinx roles
(``:class:`~conceptwalk.graph.LinkGraph```), which Markdown would show as literal text. Each role
becomes a code span of its target (the last component with ``~``, as Sphinx shows it), and a
paragraph's trailing ``::`` (RST's literal-block marker) becomes ``:``; the indented block after
it is already a Markdown code block."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const|ref|doc|term):`(?P<body>[^`]+)`")
_LITERAL = re.compile(r"(?<=\S)::$", re.M)


def _target(match: re.Match[str]) -> str:
    body = match.group("body").strip()
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<(?P<target>[^>]+)>", body)
    if explicit:
        return f"`{explicit.group('text')}`"
    if body.startswith("~"):
        body = body[1:].rsplit(".", 1)[-1]
    return f"`{body}`"


def convert(text: str) -> str:
    """The docstring text with Sphinx roles turned into code spans and ``::`` into ``:``."""
    return _LITERAL.sub(":", _ROLE.sub(_target, text))


class RstRoles(griffe.Extension):
    """Rewrite every loaded docstring with :func:`convert`."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
