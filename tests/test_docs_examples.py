"""The python code blocks of docs/*.md run, as written, against the installed package.

Each page's ```python blocks run in order in one namespace (a page reads like a session), in a
temporary working directory. A block that cannot run here (it needs a Dask scheduler, a
populated file, an MCP client on PATH) is marked on the line before its fence with
``<!-- docs-test: skip (the reason) -->``; every other ```python block must run. Blocks in other
languages (bash, json, plain) are shown only.

Needs the source tree (docs/ beside tests/): skipped when the tests run from a copy of tests/
against an installed wheel.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
if not (ROOT / "mkdocs.yml").is_file():
    pytest.skip("docs/ and mkdocs.yml are not here (tests run outside the source tree)", allow_module_level=True)

_FENCE = re.compile(r"^```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^```\s*$", re.M | re.S)
_SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")

#: The capability pages: each must have at least one block that runs.
CAPABILITY_PAGES = (
    "index.md",
    "graph.md",
    "graph_context.md",
    "link_suggest.md",
    "graph_path.md",
    "concept_walk.md",
    "probe.md",
    "knowledge_base.md",
    "batch.md",
    "mcp_server.md",
    "cli.md",
    "reference.md",
)


def python_blocks(text: str) -> list[tuple[int, str, str | None]]:
    """``(line number, code, skip reason or None)`` of each ```python block."""
    out = []
    for m in _FENCE.finditer(text):
        if m.group("lang") != "python":
            continue
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        line = text.count("\n", 0, m.start()) + 2  # first line of code, 1-based
        out.append((line, m.group("body"), skip.group("reason").strip() if skip else None))
    return out


PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks((DOCS / p).read_text("utf-8"))])
def test_page_examples_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks((DOCS / page).read_text("utf-8"))
    ns: dict[str, object] = {"__name__": f"docs_{Path(page).stem}"}
    ran = 0
    for line, code, skip in blocks:
        if skip is not None:
            continue
        # compiled with the page's line numbers, so a traceback points into the .md file
        exec(compile("\n" * (line - 1) + code, str(DOCS / page), "exec"), ns)
        ran += 1
    if not ran:
        pytest.skip(f"every python block of {page} is marked skip")


def test_capability_pages_have_running_examples() -> None:
    for page in CAPABILITY_PAGES:
        blocks = python_blocks((DOCS / page).read_text("utf-8"))
        assert any(skip is None for _, _, skip in blocks), f"{page} has no python example that runs"


def test_every_skip_marker_has_a_reason_and_a_block() -> None:
    for page in PAGES:
        text = (DOCS / page).read_text("utf-8")
        markers = len(re.findall(r"docs-test:", text))
        skipped = sum(1 for _, _, skip in python_blocks(text) if skip is not None)
        assert markers == skipped, f"{page}: a docs-test marker without a reason or not right before a python block"


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, flags=re.M))
    assert listed == set(PAGES), (
        f"not in mkdocs.yml's nav: {sorted(set(PAGES) - listed)}; missing files: {sorted(listed - set(PAGES))}"
    )


def test_block_parser() -> None:
    text = (
        "x\n```bash\nls\n```\n\n<!-- docs-test: skip (needs a cluster) -->\n```python\n1/0\n```\n"
        "```python\nx = 1\n```\n"
    )
    assert python_blocks(text) == [(8, "1/0\n", "needs a cluster"), (11, "x = 1\n", None)]
