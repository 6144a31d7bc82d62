"""Every public function and class of the installed package has a numpydoc docstring: a summary
line, a ``Parameters`` section naming every parameter it takes (and nothing it does not take), and
a ``Returns`` (or ``Yields``) section when it returns something other than None.

"Public" means: every function and class named in a public module's ``__all__`` (checked once,
under the most specific public module that exports it), and the public methods of those classes
(names without a leading underscore, plus ``__call__``; properties need a summary only). A class
documents its constructor's parameters in its own docstring (numpydoc's convention; the
``__init__`` docstring is accepted too); a dataclass or named tuple may document its fields
under ``Attributes`` instead.

One test per module, so a module that is not done yet is seen failing on its own. The parser is
deliberately small (numpydoc section headers: a title line underlined with dashes), so the test
needs nothing beyond the test extra.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from typing import Any

import pytest

import conceptwalk

_HEADER = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n(?P<rule>-{3,})$", re.M)
_PARAM_LINE = re.compile(r"^(?P<names>\*{0,2}[A-Za-z_][\w]*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?$")


def _public_modules() -> list[str]:
    names = ["conceptwalk"] + [
        m.name for m in pkgutil.walk_packages(conceptwalk.__path__, "conceptwalk.", onerror=lambda name: None)
    ]
    out = []
    for name in sorted(set(names)):
        if any(part.startswith("_") for part in name.split(".")):
            continue  # private modules (and __main__, which runs the CLI on import)
        out.append(name)
    return out


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # an optional dependency (the module names it)
        missing = getattr(exc, "name", None) or ""
        if missing and not missing.startswith("conceptwalk"):
            pytest.skip(f"optional dependency {missing!r} not installed")
        raise


def _owner_map() -> dict[int, str]:
    """id(object) -> the module whose test checks it: the module that defines it when that module
    is public, else the most specific (longest-named) public module that exports it."""
    modules = {}
    for name in _public_modules():
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            continue
    exported: dict[str, set[int]] = {}
    for name, mod in modules.items():
        exported[name] = {id(getattr(mod, a, None)) for a in getattr(mod, "__all__", ())}
    owner: dict[int, str] = {}
    for name in sorted(modules, key=lambda n: (-n.count("."), n)):
        for attr in getattr(modules[name], "__all__", ()):
            obj = getattr(modules[name], attr, None)
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                continue
            home = getattr(obj, "__module__", None)
            if home in modules and id(obj) in exported[home]:
                owner.setdefault(id(obj), home)
            else:
                owner.setdefault(id(obj), name)
    return owner


def sections(doc: str) -> dict[str, list[str]]:
    """The numpydoc sections of a cleaned docstring: title -> its lines (``""`` = the text
    before the first section)."""
    out: dict[str, list[str]] = {}
    pos, title = 0, ""
    for m in _HEADER.finditer(doc):
        if len(m.group("rule")) < len(m.group("title").strip()) - 1:
            continue  # not underlined: an ordinary line followed by dashes
        out[title] = doc[pos : m.start()].splitlines()
        title, pos = m.group("title").strip(), m.end()
    out[title] = doc[pos:].splitlines()
    return out


def documented_names(lines: list[str]) -> set[str]:
    """Names declared by a Parameters-like section: the unindented ``name : type`` lines."""
    names: set[str] = set()
    for line in lines:
        if not line.strip() or line[0].isspace():
            continue
        m = _PARAM_LINE.match(line.strip())
        if m:
            for n in m.group("names").split(","):
                names.add(n.strip().lstrip("*"))
    return names


def _signature_params(func: Any, *, bound: bool) -> list[str] | None:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return _pybind_params(func, bound=bound)
    params = list(sig.parameters.values())
    if bound and params and params[0].name in ("self", "cls"):
        params = params[1:]
    # a leading underscore marks a parameter as private (not for callers): not documented
    return [p.name for p in params if not p.name.startswith("_")]


def _pybind_params(func: Any, *, bound: bool) -> list[str] | None:
    """A compiled function's parameters, read from its first docstring line
    (``name(a: int, b: str = ...) -> T``, pybind11's form), or None when there is none."""
    first = (getattr(func, "__doc__", None) or "").lstrip().split("\n", 1)[0]
    m = re.match(r"^\w+\((?P<args>.*)\)(?:\s*->.*)?$", first)
    if not m:
        return None
    args = [a.split(":")[0].split("=")[0].strip() for a in _split_args(m.group("args"))]
    args = [a for a in args if a and a not in ("*", "/") and not a.startswith("_")]
    if bound and args and args[0] == "self":
        args = args[1:]
    return args


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _returns_value(func: Any) -> bool:
    """Whether ``func`` returns something other than None, from its return annotation (every
    public function is annotated: mypy --strict), or its pybind11 signature line."""
    try:
        ann = inspect.signature(func).return_annotation
    except (TypeError, ValueError):
        first = (getattr(func, "__doc__", None) or "").lstrip().split("\n", 1)[0]
        m = re.search(r"\)\s*->\s*(.+)$", first)
        return bool(m) and m.group(1).strip() != "None"
    if ann is inspect.Signature.empty:
        return True  # unannotated: assume it returns something (then say what)
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", repr(ann))
    text = text.replace("typing.", "").replace("collections.abc.", "").strip()
    if text in ("None", "NoReturn", "Never", "NoneType"):
        return False
    # a generator / context manager over nothing (``@contextmanager`` yielding None)
    return not re.fullmatch(r"(Iterator|Generator|AbstractContextManager|ContextManager)\[None(, .*)?\]", text)


def check_routine(qualname: str, func: Any, *, bound: bool) -> list[str]:
    doc = inspect.cleandoc(getattr(func, "__doc__", None) or "")
    if getattr(func, "__text_signature__", None) is None and doc and re.match(r"^\w+\(.*\)", doc):
        doc = doc.split("\n", 1)[1].strip() if "\n" in doc else ""  # pybind11's signature line
    problems: list[str] = []
    if not doc or not doc.splitlines()[0].strip():
        return [f"{qualname}: no docstring summary"]
    secs = sections(doc)
    params = _signature_params(func, bound=bound)
    documented = documented_names(secs.get("Parameters", []) + secs.get("Other Parameters", []))
    if params is None:
        problems.append(f"{qualname}: cannot read its signature")
    else:
        missing = [p for p in params if p not in documented]
        if missing:
            problems.append(f"{qualname}: parameters not in a Parameters section: {', '.join(missing)}")
        extra = sorted(documented - set(params))
        if extra:
            problems.append(f"{qualname}: Parameters names what the signature does not take: {', '.join(extra)}")
    if _returns_value(func) and not (secs.get("Returns") or secs.get("Yields")):
        problems.append(f"{qualname}: returns a value but has no Returns section")
    return problems


def _field_names(cls: type) -> list[str] | None:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")]
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return list(cls._fields)
    return None


def check_class(qualname: str, cls: type) -> list[str]:
    doc = inspect.cleandoc(cls.__doc__ or "")
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "(")):
        return [f"{qualname}: no docstring"]  # a dataclass without one gets its signature as __doc__
    problems: list[str] = []
    secs = sections(doc)
    declared = documented_names(secs.get("Parameters", []) + secs.get("Other Parameters", []))
    fields = _field_names(cls)
    init = cls.__dict__.get("__init__")
    if fields is not None and (init is None or dataclasses.is_dataclass(cls)):
        declared |= documented_names(secs.get("Attributes", []))
        missing = [f for f in fields if f not in declared]
        if missing:
            problems.append(f"{qualname}: fields not in a Parameters or Attributes section: {', '.join(missing)}")
    elif inspect.isfunction(init) and init.__module__.startswith("conceptwalk"):
        init_doc = inspect.cleandoc(init.__doc__ or "")
        declared |= documented_names(sections(init_doc).get("Parameters", [])) if init_doc else set()
        params = _signature_params(init, bound=True) or []
        missing = [p for p in params if p not in declared]
        if missing:
            problems.append(f"{qualname}: constructor parameters not in a Parameters section: {', '.join(missing)}")
        extra = sorted(documented_names(secs.get("Parameters", [])) - set(params))
        if extra:
            problems.append(f"{qualname}: Parameters names what the constructor does not take: {', '.join(extra)}")
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") and name != "__call__":
            continue
        if getattr(member, "__module__", "conceptwalk").startswith("pydantic"):
            continue  # put there by pydantic (its model_post_init for private attributes): not ours
        where = f"{qualname}.{name}"
        if isinstance(member, property):
            if not (member.__doc__ or "").strip():
                problems.append(f"{where}: property without a docstring")
        elif isinstance(member, staticmethod):
            problems += check_routine(where, member.__func__, bound=False)
        elif isinstance(member, classmethod):
            problems += check_routine(where, member.__func__, bound=True)
        elif inspect.isfunction(member) or inspect.isroutine(member):
            problems += check_routine(where, member, bound=True)
    return problems


def check_module(name: str) -> tuple[int, list[str]]:
    """(number of objects checked, problems) for one public module."""
    mod = _import(name)
    owner = _owner_map()
    checked, problems = 0, []
    for attr in getattr(mod, "__all__", ()):
        obj = getattr(mod, attr, None)
        if owner.get(id(obj)) != name:
            continue
        if inspect.isbuiltin(obj) or (inspect.isclass(obj) and obj.__module__ == "conceptwalk._core"):
            continue  # a compiled function or class re-exported for speed: documented in _core.pyi
        checked += 1
        if inspect.isclass(obj):
            problems += check_class(f"{name}.{attr}", obj)
        else:
            problems += check_routine(f"{name}.{attr}", obj, bound=False)
    return checked, problems


MODULES = _public_modules()


@pytest.mark.parametrize("name", MODULES)
def test_numpydoc_sections(name: str) -> None:
    _, problems = check_module(name)
    assert not problems, f"{len(problems)} docstring problem(s) in {name}:\n  " + "\n  ".join(problems)


def test_every_layer_is_checked() -> None:
    for layer in ("graph", "tools", "kb", "wrap", "serve", "cli", "bench"):
        assert f"conceptwalk.{layer}" in MODULES
    assert "conceptwalk.errors" in MODULES
    total = sum(check_module(n)[0] for n in MODULES if n in {"conceptwalk.errors", "conceptwalk.kb.store"})
    assert total >= 4  # the three exceptions and KnowledgeBase at least: the owner map finds them


# ---------------------------------------------------------------------- the checker itself
def _f_good(a: int, *, b: str = "") -> int:
    """Add.

    Parameters
    ----------
    a : int
        One.
    b : str
        Two.

    Returns
    -------
    int
        Three.
    """
    return a


def _f_bad(a: int, c: int) -> int:
    """Add.

    Parameters
    ----------
    a : int
        One.
    b : int
        Not a parameter.
    """
    return a


def _f_none(a: int, *rest: int) -> None:
    """Nothing to return.

    Parameters
    ----------
    a, *rest
        Both.
    """


def test_checker_accepts_and_refuses() -> None:
    assert check_routine("good", _f_good, bound=False) == []
    bad = check_routine("bad", _f_bad, bound=False)
    assert any("not in a Parameters section: c" in p for p in bad)
    assert any("does not take: b" in p for p in bad)
    assert any("no Returns section" in p for p in bad)
    assert check_routine("none", _f_none, bound=False) == []
    assert check_routine("nodoc", lambda: 1, bound=False) == ["nodoc: no docstring summary"]

    @dataclasses.dataclass
    class Point:
        """A point.

        Attributes
        ----------
        x : float
            Across.
        """

        x: float
        y: float

    assert check_class("Point", Point) == ["Point: fields not in a Parameters or Attributes section: y"]
