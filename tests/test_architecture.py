"""docs/architecture.md cannot rot: every file its capability map names exists, every folder of
its tree exists, and every folder of the package is in the tree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCH = ROOT / "docs" / "architecture.md"
if not ARCH.is_file():
    pytest.skip("docs/architecture.md is not here (tests run outside the source tree)", allow_module_level=True)

TEXT = ARCH.read_text("utf-8")


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", TEXT, flags=re.M | re.S)
    assert m, f"architecture.md has no '## {title}' section"
    return m.group(1)


def table_rows() -> list[list[str]]:
    rows = [line for line in _section("The capability map").splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
    assert cells[0] == ["capability", "C++ core", "binding", "Python", "tests", "docs"]
    return [r for r in cells[2:]]  # past the header and the --- row


def named_paths() -> list[str]:
    """Every backticked file path and every linked page of the map's table."""
    out = []
    for row in table_rows():
        for cell in row[1:]:
            out += [p for p in re.findall(r"`([^`\s]+)`", cell) if "/" in p]
            out += ["docs/" + p for p in re.findall(r"\]\(([^)#]+\.md)\)", cell)]
    return out


def test_every_file_in_the_map_exists() -> None:
    paths = named_paths()
    assert len(paths) > 60  # the map is read, not skipped
    missing = [p for p in paths if not (ROOT / p).is_file()]
    assert not missing, f"architecture.md names files that do not exist: {missing}"


def test_every_row_fills_every_column() -> None:
    for row in table_rows():
        assert len(row) == 6 and all(row), f"incomplete row: {row}"


def test_every_python_module_is_on_the_map() -> None:
    named = set(named_paths())
    pkg = ROOT / "python" / "conceptwalk"
    modules = sorted(
        p.relative_to(ROOT).as_posix()
        for p in pkg.rglob("*")
        if p.suffix in (".py", ".pyx") and p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts
    )
    unmapped = [m for m in modules if m not in named]
    assert not unmapped, f"modules no capability row names: {unmapped}"


def test_every_core_file_is_on_the_map() -> None:
    named = set(named_paths())
    core = sorted(
        p.relative_to(ROOT).as_posix()
        for d in ("csrc/src", "csrc/include/conceptwalk", "csrc/bindings")
        for p in (ROOT / d).iterdir()
        if p.suffix in (".cpp", ".hpp")
    )
    unmapped = [c for c in core if c not in named]
    assert not unmapped, f"C++ files no capability row names: {unmapped}"


def test_the_tree_lists_existing_folders_and_every_package_folder() -> None:
    block = re.search(r"```text\n(.*?)```", _section("The tree"), flags=re.S)
    assert block
    folders = [line.split()[0] for line in block.group(1).splitlines() if line.strip()]
    assert all(f.endswith("/") for f in folders)
    missing = [f for f in folders if not (ROOT / f).is_dir()]
    assert not missing, f"the tree lists folders that do not exist: {missing}"
    pkg_dirs = sorted(
        p.relative_to(ROOT).as_posix() + "/"
        for p in (ROOT / "python" / "conceptwalk").rglob("*")
        if p.is_dir()
        and "__pycache__" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
    )
    unlisted = [d for d in pkg_dirs if d not in folders]
    assert not unlisted, f"package folders missing from the tree: {unlisted}"
