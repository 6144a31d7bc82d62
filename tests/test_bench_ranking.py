"""Smoke test of benchmarks/bench_ranking.py: its quick mode on the generated toy task writes the
report, and every figure in it is a measured number of the right kind (no wall-time asserts).

Needs the source tree (benchmarks/ beside tests/): skipped when the tests run from a copy."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_ranking.py"
if not BENCH.is_file():
    pytest.skip("benchmarks/ is not here (tests run outside the source tree)", allow_module_level=True)


def _load():
    spec = importlib.util.spec_from_file_location("bench_ranking", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fraction_of(x: float, n: int) -> bool:
    """x is h / n for an integer 0 <= h <= n (a share of n queries, as measured)."""
    return 0.0 <= x <= 1.0 and abs(x * n - round(x * n)) < 1e-9


def test_quick_run_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load()
    assert bench.main(["--quick", "--datasets", "toy", "--queries", "12", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "ranking.json").read_text())
    text = (tmp_path / "ranking.txt").read_text()
    assert capsys.readouterr().out.strip() == text.strip()
    # (a) the task table: every method once per dataset, each hit rate a share of the 12 queries
    rows = res["tasks"]["toy"]
    assert [r["method"] for r in rows] == list(bench.METHODS)
    for r in rows:
        assert r["dataset"] == "toy" and r["queries"] == 12
        assert _fraction_of(r["hit@1"], 12) and _fraction_of(r["hit@10"], 12)
        assert r["hit@1"] <= r["hit@10"]
        assert f"toy      {r['method']:11} {12:>7} {r['hit@1']:>6.3f} {r['hit@10']:>6.3f}" in text
    # the diagnosis behind the finding: counts of the same queries
    d = res["diagnosis"]["toy"]
    assert d["queries"] == 12 and 0 <= d["target_smallest"] <= d["target_tied"] <= d["tied"] <= 12
    assert 0 <= d["same"] <= 12 and d["multi"] <= d["pairs"]
    assert all(_fraction_of(d[k], 12) for k in ("count_hit1", "old_hit1", "new_hit1"))
    assert "Why count-of-direct-links beat coverage@1 (measured on toy's 12 queries)" in text
    # (b) the hub seed: more neighbours than (1 - restart) / eps, still k results
    (hub,) = res["hub"]
    assert hub["neighbours"] == 8000 and hub["ppr_results"] == hub["coverage_results"] == 10
    assert 0 < hub["eps_reached"] < hub["eps"] and hub["pushes"] > 1
    assert hub["ppr_ms"] > 0 and hub["coverage_ms"] > 0 and hub["ratio"] > 0
    # (c) the cost rows: concept- and question-seeded, 20 queries each
    assert [r["case"].rsplit(", ", 1)[1] for r in res["cost"]] == ["5 concepts", "question"]
    assert all(r["queries"] == 20 and r["ppr_ms"] > 0 and r["coverage_ms"] > 0 for r in res["cost"])


def test_unknown_dataset_is_refused() -> None:
    with pytest.raises(SystemExit):
        _load().main(["--quick", "--datasets", "nope"])
