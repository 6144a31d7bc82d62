"""Benchmark tooling behind ``conceptwalk bench``, ``scripts/`` and ``benchmarks/``: workloads,
round-robin timing and the in-repo references (pure-Python push and bidirectional BFS, numpy
resource allocation, exact PPR). Not needed to use the library."""

from __future__ import annotations

__all__ = ["harness"]
