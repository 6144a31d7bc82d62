"""``conceptwalk bench --report DIR`` (issue 34): the HTML report, its plots and its figures."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from conceptwalk.cli import main

pytest.importorskip("matplotlib")


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_report_has_the_plots_the_table_and_the_samples(tmp_path):
    d = tmp_path / "report"
    code, out, err = _run(
        "bench", "--concepts", "60", "--queries", "3", "--rounds", "1", "--no-threads",
        "--report", str(d), "--sizes", "30,60",
    )  # fmt: skip
    assert code == 0, err
    assert f"report written to {d / 'index.html'}" in err
    for png in ("latency.png", "scaling.png"):
        assert (d / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (d / "index.html").read_text(encoding="utf-8")
    figures = json.loads((d / "figures.json").read_text(encoding="utf-8"))
    assert set(figures["samples_s"]) == {"graph_context", "personalized_pagerank", "link_suggest", "graph_path"}
    for tool, sides in figures["samples_s"].items():
        assert "conceptwalk" in sides and len(sides) == 2, tool  # ours beside the suite's reference
        assert all(len(s) >= 20 and all(x > 0 for x in s) for s in sides.values())
        assert f"<td>{tool}</td>" in page
    assert [c["concepts"] for c in figures["scaling"]] == [30, 60]
    assert figures["scaling"][0]["nodes"] < figures["scaling"][1]["nodes"]
    # the figures' table is the one the command prints
    for row in figures["rows"]:
        assert f"<td>{row['measurement']}</td>" in page and row["measurement"] in out
    assert 'src="latency.png"' in page and 'src="scaling.png"' in page


def test_sizes_needs_report(tmp_path):
    code, _, err = _run("bench", "--concepts", "60", "--sizes", "30")
    assert code == 2 and "--sizes draws the report's scaling curve: give --report DIR too" in err
