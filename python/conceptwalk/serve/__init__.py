"""Serving interfaces: the MCP tool server (:mod:`conceptwalk.serve.mcp`) and batches on a Dask
cluster (:mod:`conceptwalk.serve.distributed`). Both import their optional dependency lazily."""

from __future__ import annotations

__all__ = ["distributed", "mcp"]
