"""The built API reference is right (issue 21 item 5): every default a page shows for a
parameter is the default ``inspect.signature`` gives, every page has a title, and signatures are
formatted (several lines, by black or ruff). Builds the site once with ``mkdocs build --strict``;
skips without the ``docs`` extra or outside a source checkout."""

from __future__ import annotations

import ast
import html
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not (ROOT / "mkdocs.yml").exists() or not (ROOT / "docs").is_dir(),
    reason="needs the source checkout's docs/ and mkdocs.yml",
)

_HEADING = re.compile(r'<h[1-6] id="(?P<id>conceptwalk[\w.]*)" class="doc doc-heading"')
_ITEM = re.compile(r"<li>\s*<b><code>(?P<name>[\w*]+)</code></b>\s*\((?P<body>.*?)\)\s*–", re.S)
_DEFAULT = re.compile(r"default:\s*<code>(?P<value>.*?)</code>", re.S)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("site")
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return out


def _resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _text(fragment: str) -> str:
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", fragment).split()))


def _same(shown: str, default: object, namespace: dict) -> bool:
    """Whether the text a page shows is the default: a literal, or a name of the function's
    module (``DEFAULT_EDGE_TYPE``, ``logging.INFO``) bound to it. A default a docstring states in
    its own words is shown in code quotes (````("CONCEPT",)````): the quotes are dropped."""
    shown = shown.strip("`")
    if shown == repr(default) or shown == str(default):
        return True
    try:
        return bool(ast.literal_eval(shown) == default)
    except (ValueError, SyntaxError):
        pass
    obj: object = namespace
    for part in shown.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        if obj is None:
            obj = _resolve(shown)  # a full path: conceptwalk.graph.DEFAULT_EDGE_TYPE
            break
    return obj is not None and (obj == default or obj is default)


def _shown_defaults(site: Path):
    """(page, object id, parameter, shown default) for every parameter list item with a default."""
    for page in sorted(site.rglob("index.html")):
        text = page.read_text(encoding="utf-8")
        heads = list(_HEADING.finditer(text))
        for h, nxt in zip(heads, heads[1:] + [None]):
            block = text[h.end() : nxt.start() if nxt else len(text)]
            params = block.split("Parameters:</th>", 1)
            if len(params) < 2:
                continue
            body = params[1].split("</td>", 1)[0]
            for item in _ITEM.finditer(body):
                d = _DEFAULT.search(item.group("body"))
                if d:
                    title = re.search(r'title="([^"]+)"', d.group("value"))  # a name, shown by its path
                    value = title.group(1) if title else _text(d.group("value"))
                    yield page.parent.name, h.group("id"), item.group("name"), value


def test_every_default_shown_is_the_signatures(site):
    checked, wrong = 0, []
    for page, oid, name, shown in _shown_defaults(site):
        obj = _resolve(oid)
        if obj is None:
            continue
        target = obj.__init__ if inspect.isclass(obj) else obj
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            continue
        p = sig.parameters.get(name.lstrip("*"))
        if p is not None and p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue  # mkdocstrings shows `*args` as "default: ()": what a call without them gets
        if p is None or p.default is inspect.Parameter.empty:
            wrong.append(f"{page}: {oid}({name}) shows default {shown!r}, the signature has none")
            continue
        checked += 1
        namespace = {**vars(sys.modules["builtins"]), **getattr(inspect.unwrap(target), "__globals__", {})}
        if not _same(shown, p.default, namespace):
            wrong.append(f"{page}: {oid}({name}) shows default {shown!r}, the signature's is {p.default!r}")
    assert checked > 50, f"only {checked} defaults found on the built pages: is the parser still right?"
    assert not wrong, "\n".join(wrong)


def test_the_grouped_entries_of_graph_context_are_split(site):
    text = (site / "graph_context" / "index.html").read_text(encoding="utf-8")
    got = {(oid, n): v for page, oid, n, v in _shown_defaults(site) if page == "graph_context"}
    assert got[("conceptwalk.tools.graph_context", "eps")] == "0.0001"
    assert got[("conceptwalk.tools.graph_context", "restart")] == "0.25"
    assert "eps</code></b>" in text


def test_every_page_has_a_title(site):
    untitled = []
    for md in sorted((ROOT / "docs").glob("*.md")):
        first = next((ln for ln in md.read_text(encoding="utf-8").splitlines() if ln.strip()), "")
        if not first.startswith("# "):
            untitled.append(md.name)
    assert not untitled, f"pages without a '# Title' first line: {untitled}"


def test_signatures_are_formatted(site):
    text = (site / "graph_context" / "index.html").read_text(encoding="utf-8")
    sig = text[text.index('id="conceptwalk.tools.graph_context"') :]
    sig = sig[: sig.index("doc doc-contents")]
    assert _text(sig).count("(") >= 1 and sig.count("\n") > 5, "graph_context's signature is on one line"


_CHECKED = re.compile(r"<!-- checked: (?P<cmd>.+?) -->\n```[a-z]*\n(?P<out>.*?)```", re.S)


def _checked_blocks():
    for md in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        if not md.exists():  # the wheel's test run, outside a source checkout
            continue
        for m in _CHECKED.finditer(md.read_text(encoding="utf-8")):
            yield pytest.param(m.group("cmd"), m.group("out"), id=f"{md.name}:{m.group('cmd')[-40:]}")


@pytest.mark.parametrize("cmd, shown", list(_checked_blocks()))
def test_sample_outputs_in_the_docs_are_the_real_ones(cmd, shown, tmp_path):
    """A docs block marked ``<!-- checked: conceptwalk ... KB ... -->`` shows what the commands
    print today (``KB`` is a fresh file; the last command's stdout is compared)."""
    out = ""
    for part in cmd.split("&&"):
        argv = part.split()
        assert argv[0] == "conceptwalk", cmd
        argv = [str(tmp_path / "kb.db") if a == "KB" else a for a in argv[1:]]
        p = subprocess.run([sys.executable, "-m", "conceptwalk", *argv], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        out = p.stdout
    assert out == shown


def test_some_sample_outputs_are_checked():
    assert len(list(_checked_blocks())) >= 1


def test_reference_shows_no_pydantic_internals_nor_private_bases(site: Path) -> None:
    """Issue 32: the reference listed pydantic's model_post_init and ``Bases: _Base``."""
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    assert not [p for p, t in pages.items() if "model_post_init" in t]
    private = re.compile(r'Bases: <code><span title="[^"]*">_')
    assert not [p for p, t in pages.items() if private.search(t)]
    lc = pages[site / "integrations" / "index.html"]
    assert 'title="langchain_core.retrievers.BaseRetriever"' in lc  # the public base, in _Base's place


def test_theme_lets_wide_tables_use_the_window(site: Path) -> None:
    """Issue 32: at 1280 px the theme's 800 px column cut wide tables (cells never wrap) while
    40% of the window stayed empty; the extra stylesheet widens the column and wraps cells."""
    css = (site / "css" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r"\.wy-nav-content\s*\{\s*max-width:\s*1200px", css)
    assert re.search(r"td,[^{]*\{\s*white-space:\s*normal", css)
    assert 'href="../css/extra.css"' in (site / "integrations" / "index.html").read_text(encoding="utf-8")
