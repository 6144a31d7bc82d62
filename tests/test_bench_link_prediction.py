"""Smoke test of benchmarks/bench_link_prediction.py: its quick mode on the generated toy graph
writes the report, the held-out split keeps its stated rule, and every figure is a measured number
of the right kind (no wall-time asserts).

Needs the source tree (benchmarks/ beside tests/): skipped when the tests run from a copy."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_link_prediction.py"
if not BENCH.is_file():
    pytest.skip("benchmarks/ is not here (tests run outside the source tree)", allow_module_level=True)


def _load():
    sys.path.insert(0, str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_link_prediction", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_split_keeps_endpoint_degrees_above_two_and_is_seeded() -> None:
    b = _load()
    pairs = b.toy_graph()
    train, queries = b.split(pairs, 60, 0)
    assert (train, queries) == b.split(pairs, 60, 0) and queries != b.split(pairs, 60, 1)[1]
    deg: dict[str, int] = {}
    for a, c in train:
        deg[a] = deg.get(a, 0) + 1
        deg[c] = deg.get(c, 0) + 1
    held = {(min(u, v), max(u, v)) for u, v in queries}
    assert len(held) == len(queries) == 60 and not held & set(train)
    assert held | set(train) == set(pairs)
    assert all(deg[u] > 2 and deg[v] > 2 for u, v in queries)


def test_quick_mode_writes_a_report_of_measured_numbers(tmp_path: Path) -> None:
    b = _load()
    assert b.main(["--quick", "--out", str(tmp_path)]) == 0
    res = json.loads((tmp_path / "link_prediction.json").read_text())
    text = (tmp_path / "link_prediction.txt").read_text()
    (run,) = res["runs"]
    n = run["held_out"]
    assert n == 60 and set(run["methods"]) == set(b.METHODS)
    for m in run["methods"].values():
        assert abs(m["hit@10"] * n - round(m["hit@10"] * n)) < 1e-9 and 0 <= m["mrr"] <= m["hit@10"] + 1
    # the package's RA with one shared neighbour ranks what networkx's RA ranks
    assert run["methods"]["ra, >= 1 shared"] == run["methods"]["nx RA"]
    c = res["costs"]["toy"]
    assert all(v > 0 for v in c["median_us"].values()) and c["ratio_tool"] > 0
    assert "| ppr (link_suggest) |" in text and "## Targets (issue 36)" in text
