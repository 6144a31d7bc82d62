"""The ``demo`` command: a synthetic KB and every tool answering on it."""

from __future__ import annotations

import argparse
import os
import shlex
import time
from typing import Any

from ._common import MAX_COUNT, emit, int_in, median_ms, open_kb
from .kb import load_synthetic

__all__ = ["register"]


def cmd_demo(args: argparse.Namespace) -> int:
    from ..kb import synthetic
    from ..tools import graph_context, graph_path, link_suggest
    from ..graph import Caller

    path = args.path
    fresh = args.rebuild or not os.path.exists(path)
    if fresh and os.path.exists(path):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    out: dict[str, Any] = {"kb": path}
    say = (lambda *a: None) if args.json else print
    say(f"conceptwalk demo: synthetic knowledge base of {args.concepts:,} concepts (seed {args.seed})")
    with open_kb(path, must_exist=False) as kb:
        if fresh:
            syn = load_synthetic(kb, args.concepts, args.seed, args.json)
        else:
            say(f"reusing {path} (pass --rebuild to regenerate)")
            syn = synthetic.generate(args.concepts, seed=args.seed)
        t0 = time.perf_counter()
        g = kb.graph()
        build_ms = (time.perf_counter() - t0) * 1e3
        say(
            f"graph snapshot: {g.num_nodes:,} nodes, {g.num_edges:,} typed edges, "
            f"mean degree {2 * g.num_neighbour_pairs / g.num_nodes:.2f}, built in {build_ms:.0f} ms"
        )
        out["graph"] = {"nodes": g.num_nodes, "edges": g.num_edges, "build_ms": round(build_ms, 2)}
        # The operator's own view, asked for explicitly (every entry point defaults to public).
        everyone = Caller.all_access()
        q = syn.queries(1, seed=args.seed)[0]
        concept = q["concept"]
        question = q["text"]
        # A far concept for the path: the last concept id in sorted order that is reachable.
        concepts = [i for i, t in zip(syn.ids, syn.node_types) if t == "CONCEPT"]
        target = next(
            (c for c in reversed(sorted(concepts)) if c != concept and g.shortest_path(concept, c) is not None), concept
        )
        repeat = args.repeat
        ctx = graph_context(kb, question, k=10, caller=everyone)
        ctx_ms = median_ms(lambda: graph_context(kb, question, k=10, caller=everyone), repeat)
        sug = link_suggest(kb, concept, k=5, caller=everyone)
        sug_ms = median_ms(lambda: link_suggest(kb, concept, k=5, caller=everyone), repeat)
        pth = graph_path(kb, concept, target, caller=everyone)
        pth_ms = median_ms(lambda: graph_path(kb, concept, target, caller=everyone), repeat)
        say("")
        say(
            f"$ graph_context({question!r}, k=10, caller={everyone})   median {ctx_ms * 1e3:.0f} µs over {repeat} warm calls"
        )
        say(str(ctx))
        say("")
        say(f"$ link_suggest({concept!r}, k=5, caller={everyone})   median {sug_ms * 1e3:.0f} µs")
        say(str(sug))
        say("")
        say(f"$ graph_path({concept!r}, {target!r}, caller={everyone})   median {pth_ms * 1e3:.0f} µs")
        say(str(pth))
        # The same question for a tenant that sees public nodes plus tenant-a only.
        tenant = Caller.with_scopes("tenant-a")
        ctx_t = graph_context(kb, question, k=10, caller=tenant)
        ctx_t_ms = median_ms(lambda: graph_context(kb, question, k=10, caller=tenant), repeat)
        vm = tenant.visibility(g)
        visible = int(vm.visible_count) if vm is not None else g.num_nodes
        say("")
        say(
            f"$ graph_context({question!r}, k=10, caller={tenant})   median {ctx_t_ms * 1e3:.0f} µs; "
            f"this caller sees {visible:,} of {g.num_nodes:,} nodes"
        )
        say(str(ctx_t))
        # The concept-anchored walk around the flat search (opt-in; the flat results stay first).
        from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

        retriever = ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
        flat = retriever.query(question, 5, caller=everyone)
        wrapped = retriever.query(question, 5, concept_walk=True, caller=everyone)
        wrap_ms = median_ms(
            lambda: retriever.query(question, 5, concept_walk=True, caller=everyone), max(3, repeat // 10)
        )
        walk_items = [r for r in wrapped if r.get("via") == "concept-walk"]
        say("")
        say(
            f"$ query({question!r}, k=5, concept_walk=True, caller={everyone})   median {wrap_ms * 1e3:.0f} µs; "
            f"{len(flat)} flat results kept first, {len(walk_items)} added by the walk"
        )
        for r in wrapped[:5]:
            say(f"  flat  {r['id']}")
        for r in walk_items[:6]:
            hop = r["paths"][0]["hops"][-1]
            say(
                f"  walk  {r['id']} [{r['type']}]  walkScore {r['walkScore']:.3f}  "
                f"{' -> '.join(r['paths'][0]['nodes'])}  ({hop['type']})"
            )
        if len(walk_items) > 6:
            say(f"  ... and {len(walk_items) - 6} more")
        cmd = f"conceptwalk context {shlex.quote(path)} {shlex.quote(question)} -k 10"
        say("")
        say("On the command line every command answers for public nodes only unless --scopes says otherwise:")
        say(f"  {cmd}                    # public nodes only")
        say(f"  {cmd} --scopes tenant-a  # public + tenant-a, as above")
        say(f"  {cmd} --scopes '*'       # all access (the operator's view), as above")
        out.update(
            {
                "query": {"flat": flat, "wrapped": wrapped, "median_us": round(wrap_ms * 1e3, 1)},
                "question": question,
                "context": ctx.to_dict(),
                "context_median_us": round(ctx_ms * 1e3, 1),
                "suggest": sug.to_dict(),
                "suggest_median_us": round(sug_ms * 1e3, 1),
                "path": pth.to_dict(),
                "path_median_us": round(pth_ms * 1e3, 1),
                "context_tenant_a": ctx_t.to_dict(),
                "context_tenant_a_median_us": round(ctx_t_ms * 1e3, 1),
            }
        )
    if args.json:
        emit(out, True)
    return 0


def register(sub: Any) -> None:
    """Add this group's sub-commands to the ``conceptwalk`` parser.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``conceptwalk`` parser's sub-command set (from :func:`conceptwalk.cli.build_parser`).
    """
    p = sub.add_parser("demo", help="build a synthetic KB into a SQLite file and show the tools answering")
    p.add_argument("--path", default="conceptwalk-demo.db", help="SQLite file (default: %(default)s)")
    p.add_argument(
        "--concepts", type=int_in(1, MAX_COUNT), default=1000, help="number of concepts (default: %(default)s)"
    )
    p.add_argument("--seed", type=int_in(0, 2**63 - 1), default=0, help="the generator's seed (default 0)")
    p.add_argument(
        "--repeat", type=int_in(1, 1_000_000), default=200, help="warm calls per timing (default: %(default)s)"
    )
    p.add_argument("--rebuild", action="store_true", help="regenerate the file even if it exists")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=cmd_demo)
