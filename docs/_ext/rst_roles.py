"""A griffe extension for the API reference: the docstrings are numpydoc with Sphinx roles
(``:class:`~conceptwalk.graph.LinkGraph```), which Markdown would show as literal text. Each role
becomes a code span of its target (the last component with ``~``, as Sphinx shows it), and a
paragraph's trailing ``::`` (RST's literal-block marker) becomes ``:``; the indented block after
it is already a Markdown code block.

Grouped numpydoc entries (``restart, eps : float``) are split into one entry per name, each with
the group's type and description: griffe's numpy parser gives a grouped entry the default of
its first name (``eps (float, default: 0.25)``), so split entries are what makes every default
shown the real one (``tests/test_docs_defaults.py`` compares the built pages with
``inspect.signature``)."""

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


_PARAM_SECTIONS = {"parameters", "other parameters", "attributes", "keyword arguments", "keyword args"}
_GROUPED = re.compile(r"^(?P<indent>\s*)(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)+)\s*(?P<rest>(?::.*)?)$")


def split_grouped(text: str) -> str:
    """The docstring text with every grouped entry of a parameter-like section split in one
    entry per name (same type, same description).

    >>> print(split_grouped("Parameters\\n----------\\nrestart, eps : float\\n    PPR settings.\\n"))
    Parameters
    ----------
    restart : float
        PPR settings.
    eps : float
        PPR settings.
    <BLANKLINE>
    """
    lines = text.split("\n")
    out: list[str] = []
    section = None
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and set(nxt.strip()) == {"-"} and len(nxt.strip()) >= 3:
            section = line.strip().lower()
            out += [line, nxt]
            i += 2
            continue
        m = _GROUPED.match(line) if section in _PARAM_SECTIONS else None
        if m:
            indent = len(m.group("indent"))
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():  # blank lines after the entry stay once
                j -= 1
            body = lines[i + 1:j]
            for name in (n.strip() for n in m.group("names").split(",")):
                out.append(f"{m.group('indent')}{name} {m.group('rest')}".rstrip() if m.group("rest")
                           else f"{m.group('indent')}{name}")
                out += body
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def convert(text: str) -> str:
    """The docstring text with Sphinx roles turned into code spans, ``::`` into ``:`` and
    grouped parameter entries split."""
    return split_grouped(_LITERAL.sub(":", _ROLE.sub(_target, text)))


class RstRoles(griffe.Extension):
    """Rewrite every loaded docstring with :func:`convert`."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, loader: Any, **kwargs: Any) -> None:
        """Show public bases only: a private base class (``_Base``) is replaced by its own
        bases, so ``class ConceptwalkRetriever(_Base)`` shows ``Bases: BaseRetriever``."""
        for cls in list(_classes(pkg)):
            cls.bases = _public_bases(cls, loader, set())


def _classes(obj: Any) -> Any:
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_class:
            yield member
            yield from _classes(member)
        elif member.is_module:
            yield from _classes(member)


def _public_bases(cls: Any, loader: Any, seen: set[str]) -> list[Any]:
    out: list[Any] = []
    for base in cls.bases:
        if not str(base).rsplit(".", 1)[-1].startswith("_"):
            out.append(base)
            continue
        path = getattr(base, "canonical_path", None)
        try:
            target = loader.modules_collection[path] if path and path not in seen else None
        except KeyError:
            target = None
        if target is not None and target.is_class:
            out += [b for b in _public_bases(target, loader, seen | {path}) if str(b) not in map(str, out)]
    return out
