"""The HTML report of ``conceptwalk bench --report DIR``: plots and the figures' table.

What it draws (matplotlib, the ``report`` extra; imported only here):

- **latency distributions per tool**: every call timed on its own (``graph_context``,
  ``link_suggest``, ``graph_path``, ``personalized_pagerank``), each beside the suite's in-run
  reference for the same queries (a pure-Python forward push, numpy resource allocation, a
  pure-Python bidirectional BFS): box plots on a log axis, the peers side by side;
- **the scaling curve**: the median per call of each tool on synthetic KBs of several sizes;
- **the figures' table**: the rows ``conceptwalk bench`` prints (medians, ratios, targets).

The figures and the raw samples are written beside the page (``figures.json``), so a report can
be re-drawn or compared. Timing is per call with ``time.perf_counter``; on a shared machine the
absolute numbers drift, the side-by-side shapes much less (see docs/performance.md).

Not public API: the names here may change between releases.
"""

from __future__ import annotations

import html
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ConceptwalkError

__all__ = ["REPORT_INSTALL_HINT", "require_matplotlib", "tool_latencies", "scaling_curve", "write_report"]

REPORT_INSTALL_HINT = "pip install 'conceptwalk[report]'"


def require_matplotlib() -> Any:
    """matplotlib with the file-only Agg backend.

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    ConceptwalkError
        matplotlib is not installed (naming what to install).
    """
    try:
        import matplotlib
    except ImportError:
        raise ConceptwalkError(f"--report needs matplotlib: {REPORT_INSTALL_HINT}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _samples(fn: Callable[[int], Any], n: int, *, warm: int = 3) -> list[float]:
    for i in range(min(warm, n)):
        fn(i)
    out = []
    clock = time.perf_counter
    for i in range(n):
        t0 = clock()
        fn(i)
        out.append(clock() - t0)
    return out


def tool_latencies(w: Any, n_calls: int = 200) -> dict[str, dict[str, list[float]]]:
    """Per tool, the seconds of each call, ours and the suite's reference, on workload ``w``.

    Each call is timed on its own; ours and the reference alternate by tool (the same queries,
    in the same order), so a slow phase of the machine hits both.

    Parameters
    ----------
    w : conceptwalk.bench.harness.Workload
    n_calls : int
        Calls per tool and side.

    Returns
    -------
    dict
        ``{tool: {"conceptwalk": [s, ...], reference name: [s, ...]}}``.
    """
    from ..graph import Caller
    from ..tools import graph_context, graph_path, link_suggest
    from . import harness

    import numpy as np

    g = w.graph
    adj = w.adj
    everyone = Caller.all_access()
    indptr, indices = np.asarray(g.core.indptr), np.asarray(g.core.indices)
    nq = len(w.seed_sets)
    con = w.concepts
    pairs = w.pairs
    cases: dict[str, dict[str, Callable[[int], Any]]] = {
        "graph_context": {
            "conceptwalk": lambda i: graph_context(g, concepts=w.seed_sets[i % nq], k=20, caller=everyone),
            "pure-Python push": lambda i: harness.py_push(adj, w.seed_idx(i % nq)),
        },
        "personalized_pagerank": {
            "conceptwalk": lambda i: g.personalized_pagerank(w.seed_map(i % nq)),
            "pure-Python push": lambda i: harness.py_push(adj, w.seed_idx(i % nq)),
        },
        "link_suggest": {
            "conceptwalk": lambda i: link_suggest(g, con[i % len(con)], k=10, caller=everyone),
            "numpy RA": lambda i: harness.numpy_ra(indptr, indices, g.id_index[con[i % len(con)]], 10),
        },
        "graph_path": {
            "conceptwalk": lambda i: graph_path(g, *pairs[i % len(pairs)], caller=everyone),
            "pure-Python BFS": lambda i: harness.py_bibfs(
                adj, g.id_index[pairs[i % len(pairs)][0]], g.id_index[pairs[i % len(pairs)][1]]
            ),
        },
    }
    out: dict[str, dict[str, list[float]]] = {}
    for tool, sides in cases.items():
        out[tool] = {}
        half = max(n_calls // 2, 1)
        for block in range(2):  # ours, ref, ref, ours: neither side always goes first
            order = list(sides) if block == 0 else list(reversed(sides))
            for name in order:
                out[tool].setdefault(name, []).extend(_samples(sides[name], half))
    return out


def scaling_curve(sizes: Sequence[int], n_calls: int = 60) -> list[dict[str, Any]]:
    """The median per call of each tool (ours) on synthetic KBs of ``sizes`` concepts.

    Parameters
    ----------
    sizes : sequence of int
        Synthetic KB sizes in concepts (each >= 10).
    n_calls : int
        Calls per tool and size.

    Returns
    -------
    list of dict
        ``{"concepts", "nodes", "edges", "medians": {tool: seconds}}`` per size, ascending.
    """
    from . import harness

    out = []
    for n in sorted(set(int(s) for s in sizes)):
        w = harness.load_workload(n, n_queries=max(n_calls, 10))
        lat = tool_latencies(w, n_calls)
        out.append(
            {
                "concepts": n,
                "nodes": w.graph.num_nodes,
                "edges": w.graph.num_edges,
                "medians": {t: statistics.median(s["conceptwalk"]) for t, s in lat.items()},
            }
        )
    return out


def _fmt_s(s: float | None) -> str:
    if s is None or s != s:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _plot_latencies(plt: Any, lat: dict[str, dict[str, list[float]]], path: str, title: str) -> None:
    tools = list(lat)
    fig, axes = plt.subplots(1, len(tools), figsize=(3.2 * len(tools), 4.2), squeeze=False)
    for ax, tool in zip(axes[0], tools):
        names = list(lat[tool])
        data = [[s * 1e6 for s in lat[tool][n]] for n in names]
        ax.boxplot(data, showfliers=True, flierprops={"markersize": 2, "alpha": 0.4}, widths=0.6)
        ax.set_xticks(range(1, len(names) + 1), [n.replace(" ", "\n", 1) for n in names], fontsize=8)
        ax.set_yscale("log")
        ax.set_title(tool, fontsize=10)
        ax.grid(axis="y", alpha=0.3, which="both")
    axes[0][0].set_ylabel("µs per call (log)")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_scaling(plt: Any, curve: list[dict[str, Any]], path: str) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    tools = list(curve[0]["medians"]) if curve else []
    xs = [c["nodes"] for c in curve]
    for tool in tools:
        ax.plot(xs, [c["medians"][tool] * 1e6 for c in curve], marker="o", label=tool)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("graph nodes (synthetic KB)")
    ax.set_ylabel("median µs per call (log)")
    ax.set_title("per-call time against KB size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(
    directory: str,
    *,
    info: dict[str, Any],
    rows: list[Any],
    latencies: dict[str, dict[str, list[float]]],
    curve: list[dict[str, Any]],
) -> str:
    """Write ``index.html``, its plots and ``figures.json`` into ``directory``.

    Parameters
    ----------
    directory : str
        Created when missing.
    info : dict
        What was measured (source, sizes, machine).
    rows : list of conceptwalk.bench.harness.Row
        The figures' table.
    latencies : dict
        From :func:`tool_latencies`.
    curve : list of dict
        From :func:`scaling_curve` (may be empty).

    Returns
    -------
    str
        The path of ``index.html``.
    """
    plt = require_matplotlib()
    os.makedirs(directory, exist_ok=True)
    _plot_latencies(plt, latencies, os.path.join(directory, "latency.png"), f"latency per call: {info['source']}")
    if curve:
        _plot_scaling(plt, curve, os.path.join(directory, "scaling.png"))
    table = [r.to_dict() for r in rows]
    dist = {
        tool: {
            name: {
                "n": len(s),
                "p50_s": statistics.median(s),
                "p90_s": sorted(s)[int(0.9 * (len(s) - 1))],
                "p99_s": sorted(s)[int(0.99 * (len(s) - 1))],
            }
            for name, s in sides.items()
        }
        for tool, sides in latencies.items()
    }
    with open(os.path.join(directory, "figures.json"), "w", encoding="utf-8") as f:
        json.dump({"info": info, "rows": table, "latency": dist, "samples_s": latencies, "scaling": curve}, f)
    esc = html.escape
    trs = "\n".join(
        "<tr>"
        + "".join(
            f"<td>{esc(str(v))}</td>"
            for v in (
                t["measurement"],
                t["ours"],
                _fmt_s(t["ours_s"]),
                t["reference"],
                _fmt_s(t["reference_s"]),
                "-" if t["ratio"] is None else f"{t['ratio']:.1f}x",
                t["target"],
                t["met"],
                t["note"],
            )
        )
        + "</tr>"
        for t in table
    )
    dtrs = "\n".join(
        f"<tr><td>{esc(tool)}</td><td>{esc(name)}</td><td>{d['n']}</td><td>{_fmt_s(d['p50_s'])}</td>"
        f"<td>{_fmt_s(d['p90_s'])}</td><td>{_fmt_s(d['p99_s'])}</td></tr>"
        for tool, sides in dist.items()
        for name, d in sides.items()
    )
    ctrs = "\n".join(
        f"<tr><td>{c['concepts']:,}</td><td>{c['nodes']:,}</td><td>{c['edges']:,}</td>"
        + "".join(f"<td>{_fmt_s(v)}</td>" for v in c["medians"].values())
        + "</tr>"
        for c in curve
    )
    chead = "".join(f"<th>{esc(t)}</th>" for t in (curve[0]["medians"] if curve else {}))
    facts = "".join(f"<li><b>{esc(str(k))}</b>: {esc(str(v))}</li>" for k, v in info.items())
    scaling_html = (
        f"""<h2>Scaling over KB sizes</h2><img src="scaling.png" alt="median per-call time against KB size">
<table><thead><tr><th>concepts</th><th>nodes</th><th>edges</th>{chead}</tr></thead><tbody>{ctrs}</tbody></table>"""
        if curve
        else "<p>No scaling curve (give <code>--sizes</code>).</p>"
    )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>conceptwalk bench report</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 0 auto; padding: 16px; color: #1d232b; }}
img {{ max-width: 100%; height: auto; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; margin: 8px 0 20px; font-size: 14px; }}
th, td {{ border-bottom: 1px solid #e3e6ea; padding: 3px 8px; text-align: left; }}
</style></head><body>
<h1>conceptwalk bench report</h1>
<ul>{facts}</ul>
<h2>Latency per call, each tool beside the suite's reference</h2>
<img src="latency.png" alt="latency distributions per tool, ours and the reference side by side">
<table><thead><tr><th>tool</th><th>side</th><th>calls</th><th>p50</th><th>p90</th><th>p99</th></tr></thead>
<tbody>{dtrs}</tbody></table>
{scaling_html}
<h2>The figures (medians, round-robin, ratios within this run)</h2>
<table><thead><tr><th>measurement</th><th>ours</th><th>time</th><th>reference</th><th>time</th><th>ratio</th>
<th>target</th><th>met</th><th>note</th></tr></thead><tbody>{trs}</tbody></table>
<p>Raw samples: <a href="figures.json">figures.json</a>.</p>
</body></html>
"""
    out = os.path.join(directory, "index.html")
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)
    return out
