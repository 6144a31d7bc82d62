"""Shared fixtures for the test suite: seeded graphs and a deterministic hypothesis profile."""

from __future__ import annotations

import os
import sys

import pytest

# tests/ on sys.path so `import reference` works under any pytest import mode.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - hypothesis is in the test extra
    pass
else:
    # Derandomized: the same examples on every run and machine; no example database on disk.
    settings.register_profile(
        "conceptwalk",
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=60,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "conceptwalk"))

#: The fixed list of graph seeds the differential tests run over (7 shapes x ~35 each).
GRAPH_SEEDS = list(range(245))


@pytest.fixture(scope="session")
def small_graph():
    """A hand-made graph with a cycle, a tail, a duplicate, a reciprocal pair, a self-loop and an
    isolated node."""
    from conceptwalk import LinkGraph

    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("a", "b"), ("b", "a"),
             ("e", "e"), ("b", "f"), ("f", "d")]
    return LinkGraph.from_edges(edges, nodes=["a", "b", "c", "d", "e", "f", "zz-isolated"])

