"""Interning string ids of a large Python edge list: the Cython loop (conceptwalk._intern, used by
LinkGraph.from_edges) against a pure-Python dict-based equivalent doing the same work.

    python scripts/bench_intern.py [--edges 1000000] [--ids 200000] [--repeat 3]

Prints the median of ``--repeat`` runs for each, their ratio, and the whole LinkGraph.from_edges
time on the same input. Both implementations are checked to give identical codes first.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from typing import Any

import numpy as np

from conceptwalk import LinkGraph
from conceptwalk.graph._intern import intern_edges

DEFAULT_TYPE = "LINK"


def python_intern_edges(
    edges: Any,
    table: dict[str, int],
    names: list[str],
    type_table: dict[str, int],
    type_names: list[str],
    default_type: str,
) -> tuple[Any, Any, Any, dict[str, Any]]:
    """Pure-Python equivalent of ``_intern.intern_edges`` for tuple rows: one pass, a dict lookup
    per id, first-seen codes, the same outputs (int64 arrays)."""
    src: list[int] = []
    dst: list[int] = []
    typ: list[int] = []

    def code(tab: dict[str, int], nm: list[str], key: Any) -> int:
        found = tab.get(key)
        if found is not None:
            return found
        if type(key) is not str:
            if key is None:
                raise TypeError("id must be a string, got None")
            key = str(key)
            found = tab.get(key)
            if found is not None:
                return found
        c = len(nm)
        tab[key] = c
        nm.append(key)
        return c

    for row, e in enumerate(edges):
        n = len(e)
        if n < 2 or n > 3:
            raise ValueError(f"edges[{row}]: expected 2 or 3 items, got {n}")
        src.append(code(table, names, e[0]))
        dst.append(code(table, names, e[1]))
        t = e[2] if n == 3 else None
        typ.append(code(type_table, type_names, default_type if t is None else t))
    return (np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), np.asarray(typ, dtype=np.int64), {})


def make_edges(m: int, n_ids: int, seed: int = 0, shared: bool = False) -> list[tuple[str, str, str]]:
    """``m`` typed edges over ``n_ids`` ids. By default every id is a fresh string object (as
    parsed input gives), so both implementations pay for hashing; ``shared`` reuses one object
    per id (hash cached: only the loop and the dict lookups remain)."""
    rng = random.Random(seed)
    types = ["LINK", "RELATED", "PART_OF", "MENTIONS"]
    if shared:
        ids = [f"concept:{i:07d}" for i in range(n_ids)]
        return [(ids[rng.randrange(n_ids)], ids[rng.randrange(n_ids)], rng.choice(types)) for _ in range(m)]
    return [
        (f"concept:{rng.randrange(n_ids):07d}", f"concept:{rng.randrange(n_ids):07d}", rng.choice(types))
        for _ in range(m)
    ]


def timed(fn: Any, repeat: int) -> tuple[float, Any]:
    times = []
    out = None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--ids", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shared-ids", action="store_true", help="reuse one str object per id")
    args = ap.parse_args()
    edges = make_edges(args.edges, args.ids, shared=args.shared_ids)

    def cy() -> Any:
        return intern_edges(edges, {}, [], {}, [], DEFAULT_TYPE)

    def py() -> Any:
        return python_intern_edges(edges, {}, [], {}, [], DEFAULT_TYPE)

    a, b = cy(), py()
    assert all(np.array_equal(x, y) for x, y in zip(a[:3], b[:3])), "implementations disagree"
    t_cy, _ = timed(cy, args.repeat)
    t_py, _ = timed(py, args.repeat)
    t_build, g = timed(lambda: LinkGraph.from_edges(edges), args.repeat)
    kind = "shared str objects" if args.shared_ids else "fresh str objects"
    print(f"edges={args.edges:,} distinct ids={g.num_nodes:,} ({kind}; median of {args.repeat})")
    print(f"cython  _intern.intern_edges : {t_cy * 1e3:9.1f} ms")
    print(f"python  dict-based equivalent: {t_py * 1e3:9.1f} ms")
    print(f"ratio python / cython        : {t_py / t_cy:9.2f} x")
    print(f"LinkGraph.from_edges (total) : {t_build * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
