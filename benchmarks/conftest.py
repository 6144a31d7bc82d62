"""Shared fixtures for the benchmark suites.

Sizes: the synthetic KB at 1k concepts (the gate) and 10k, 100k by default; 1M is opt-in
(``CW_BENCH_1M=1``, or list the sizes: ``CW_BENCH_SIZES=1k,1M``) because generating it takes
about a minute and a few GB. Every workload (graph, query sets, the 70%-visible caller) comes
from ``conceptwalk.bench.harness`` with a fixed seed, so every run measures the same queries.

Every benchmark asserts its result against an independent reference, so a fast wrong answer
fails instead of looking good.
"""

from __future__ import annotations

import itertools
import os

import pytest

_SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "1M": 1_000_000}


def bench_sizes() -> list[str]:
    raw = os.environ.get("CW_BENCH_SIZES")
    sizes = [s.strip() for s in raw.split(",") if s.strip()] if raw else ["1k", "10k", "100k"]
    if os.environ.get("CW_BENCH_1M") == "1" and "1M" not in sizes:
        sizes.append("1M")
    bad = [s for s in sizes if s not in _SIZES]
    if bad:
        raise pytest.UsageError(f"CW_BENCH_SIZES: unknown sizes {bad}; use {list(_SIZES)}")
    return sizes


def size_params() -> list[object]:
    return [pytest.param(s, marks=pytest.mark.huge) if s == "1M" else s for s in bench_sizes()]


_CACHE: dict[str, object] = {}


def get_workload(size: str):
    from conceptwalk.bench import harness as _perf

    if size not in _CACHE:
        _CACHE.clear() if size == "1M" else None  # keep at most one huge KB in memory
        _CACHE[size] = _perf.load_workload(_SIZES[size], seed=0, n_queries=200)
    return _CACHE[size]


@pytest.fixture(params=size_params(), scope="module")
def workload(request):
    return get_workload(request.param)


@pytest.fixture(scope="session")
def workload_1k():
    return get_workload("1k")


class Rotor:
    """Cycles through query indices: each benchmark call takes the next query."""

    def __init__(self, n: int) -> None:
        self._it = itertools.cycle(range(n))
        self.last = 0

    def __call__(self) -> int:
        self.last = next(self._it)
        return self.last


@pytest.fixture
def rotor():
    return Rotor
