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

#: The source checkout, when the tests run from one (a wheel's tests run from a copy of tests/).
_ROOT = os.path.dirname(_HERE)
_IN_CHECKOUT = os.path.isfile(os.path.join(_ROOT, "README.md")) and os.path.isdir(
    os.path.join(_ROOT, "python", "conceptwalk")
)


def pytest_collection_modifyitems(config, items):
    """Skip ``@pytest.mark.repository`` tests outside a source checkout (cibuildwheel and the
    wheel stage of .ci/extra copy only tests/, pyproject.toml and docs/errors.md)."""
    if _IN_CHECKOUT:
        return
    skip = pytest.mark.skip(reason="needs the source checkout (README, workflows, python/), not the installed wheel")
    for item in items:
        if item.get_closest_marker("repository") is not None:
            item.add_marker(skip)


#: The fixed list of graph seeds the differential tests run over (7 shapes x ~35 each).
GRAPH_SEEDS = list(range(245))


@pytest.fixture(scope="session")
def small_graph():
    """A hand-made graph with a cycle, a tail, a duplicate, a reciprocal pair, a self-loop and an
    isolated node."""
    from conceptwalk import LinkGraph

    edges = [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("c", "d"),
        ("d", "e"),
        ("a", "b"),
        ("b", "a"),
        ("e", "e"),
        ("b", "f"),
        ("f", "d"),
    ]
    return LinkGraph.from_edges(edges, nodes=["a", "b", "c", "d", "e", "f", "zz-isolated"])


@pytest.fixture
def compact_at_4():
    """The live store's compaction thread starts past 4 written nodes (``StateKeeper.LIVE_COMPACT_NODES``;
    a monkeypatch of its own, so a test's ``monkeypatch.undo()`` keeps it)."""
    from conceptwalk.kb.state import StateKeeper

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(StateKeeper, "LIVE_COMPACT_NODES", 4)
        yield
