"""The layer rule (docs/architecture.md): import-linter checks the layers; an AST pass checks
what import-linter cannot see — the compiled core (an extension module) is imported only by the
graph layer, and no module reads another module's private names."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import subprocess
import sys

import pytest

PKG = pathlib.Path(importlib.util.find_spec("conceptwalk").submodule_search_locations[-1])
SOURCES = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(mod: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _violations() -> tuple[list[str], list[str]]:
    core, private = [], []
    for path in SOURCES:
        mod = _module_name(path)
        is_pkg = path.name == "__init__.py"
        own_layer = mod.split(".")[:2]
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(PKG.parent)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.ImportFrom):
                target = _resolve(mod, node, is_pkg)
                if target.split(".")[0] != "conceptwalk":
                    continue  # another package (its private names are its own business)
                names = [a.name for a in node.names]
                imported = [f"{target}.{n}" for n in names] + [target]
                if any(t == "conceptwalk._core" for t in imported) and own_layer != ["conceptwalk", "graph"]:
                    core.append(f"{where}: {mod} imports the compiled core")
                for n in names:
                    full = f"{target}.{n}"
                    if full == "conceptwalk._core":
                        continue  # the core rule above
                    # a private name of another module (a private submodule of one's own package is fine)
                    if _private(n) and not (
                        importlib.util.find_spec(full) is not None and target.split(".")[:2] == own_layer
                    ):
                        private.append(f"{where}: {mod} imports private {full}")
                if (
                    target.split(".")[-1].startswith("_")
                    and target != "conceptwalk._core"
                    and target.split(".")[:2] != own_layer
                ):
                    private.append(f"{where}: {mod} imports from another layer's private module {target}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "conceptwalk._core" and own_layer != ["conceptwalk", "graph"]:
                        core.append(f"{where}: {mod} imports the compiled core")
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                v = node.value
                if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                    continue
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                    continue
                private.append(f"{where}: {mod} reads private attribute .{node.attr}")
    return core, private


CORE, PRIVATE = _violations()


def test_import_linter_contracts_hold() -> None:
    # In a subprocess: import-linter reconfigures logging, which would leak into other tests.
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(_pyproject())], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout and "KEPT" in proc.stdout


def _pyproject() -> pathlib.Path:
    here = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
    if not here.exists():  # pragma: no cover - wheel tests copy pyproject.toml beside tests/
        pytest.skip("pyproject.toml (the import-linter contracts) is not beside the tests")
    return here


def test_only_the_graph_layer_imports_the_core() -> None:
    assert not CORE, "\n".join(CORE)


def test_no_module_reads_another_modules_private_names() -> None:
    assert not PRIVATE, "\n".join(PRIVATE)


def test_the_checks_see_the_whole_package() -> None:
    names = {_module_name(p) for p in SOURCES}
    assert {
        "conceptwalk.graph.linkgraph",
        "conceptwalk.tools.context",
        "conceptwalk.kb.store",
        "conceptwalk.wrap.retriever",
        "conceptwalk.serve.mcp",
        "conceptwalk.cli",
    } <= names
