"""Run the docstring examples of every installed conceptwalk module (imported by name, so the
installed package is tested, never the source tree)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import conceptwalk

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _discover() -> tuple[list[str], dict[str, str]]:
    """Module names with docstring examples, and modules skipped (name -> missing dependency)."""
    found, skipped = [], {}
    names = ["conceptwalk"] + [
        m.name for m in pkgutil.walk_packages(conceptwalk.__path__, "conceptwalk.", onerror=lambda name: None)
    ]
    for name in sorted(set(names)):
        if name.rsplit(".", 1)[-1] == "__main__":  # importing it runs the CLI
            continue
        try:
            mod = importlib.import_module(name)
        except ImportError as exc:
            missing = getattr(exc, "name", None) or ""
            if missing and not missing.startswith("conceptwalk"):
                skipped[name] = missing  # an optional dependency is not installed
                continue
            raise
        tests = doctest.DocTestFinder(exclude_empty=True).find(mod, name)
        if any(t.examples for t in tests):
            found.append(name)
    return found, skipped


MODULES, SKIPPED = _discover()


@pytest.mark.parametrize(
    "name",
    MODULES
    + [
        pytest.param(name, marks=pytest.mark.skip(reason=f"optional dependency {dep!r} not installed"))
        for name, dep in sorted(SKIPPED.items())
    ],
)
def test_module_doctests(name):
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=FLAGS, verbose=False, report=True)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_discovery_is_not_vacuous():
    assert "conceptwalk.graph" in MODULES
