"""A live store's answers equal a fresh build's, bit for bit, after any mix of writes (issue 31,
item 3).

Random write/read sequences (hypothesis): node adds (new concepts among them), deletes, retitles and rescopes, edge adds and
deletes with annotations, alias adds, and concept vector writes under a stand-in model, in batches
of one to three per transaction, written either through the long-lived store that reads or through
a second connection to the same file (another writer, followed through the change log). After
every batch, every tool is asked the same questions for four callers (public, one scope, all
access, and a scope only written nodes carry named with one no node carries) through the long-lived store — whatever mix of carried-forward and rebuilt structures it
holds — and through a fresh store made from a byte copy of the file without its snapshot file
(nothing carried, nothing mapped: a fresh process's build). The answers are compared serialised
(floats by ``repr``: bit for bit): ``graph_context`` from concepts and from a question,
``link_suggest``, ``graph_path``, ``KnowledgeBase.search`` and the wrapped query.

The module keeps a count of sequences, reads compared and mismatches (``LIVE_COUNTS``), which
``test_the_counts_are_reported`` prints, so a run states what it compared.
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conceptwalk import Caller
from conceptwalk.errors import ConceptwalkError, UnknownScopeWarning
from conceptwalk.kb.state import _CATCH_UP, StateKeeper
from conceptwalk.kb.store import KnowledgeBase
from conceptwalk.tools import graph_context, graph_path, link_suggest
import conceptwalk.wrap.retriever as retriever_module
from conceptwalk.wrap import ConceptAnchoredRetriever, WalkConfig, builtin_flat_search
from conceptwalk.wrap._live import LiveRead

WORDS = ["graph", "walk", "push", "rank", "memory", "vector", "index", "token", "alpha", "omega", "river", "stone"]
SCOPES = [[], [], ["a"], ["b"], ["a", "b"]]
#: what the writes give a node: also scope "c", which no node of the first store carries (a new
#: tenant: the base does not know it, the delta does)
WRITE_SCOPES = SCOPES + [["c"]]
EDGE_TYPES = ["RELATED_TO", "ABOUT", "BROADER"]
#: ... and a caller of that tenant naming also a scope no node ever carries (a typo, warned about)
CALLERS = [Caller.public(), Caller.with_scopes("a"), Caller.all_access(), Caller.with_scopes("c", "zz")]
DIM = 8
MODEL = "live-model"
LIVE_COUNTS = {
    "sequences": 0,
    "reads": 0,
    "mismatches": 0,
    "compaction sequences": 0,
    "compacted bases taken": 0,
    "live wrapped queries": 0,
    "catch-up sequences": 0,
    "graphs the catch-up thread grew": 0,
}


class _Model:
    """A stand-in dense embedder (rows seeded by the text's CRC-32), the same for both stores."""

    name, dim = MODEL, DIM

    def embed(self, texts: Any) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for r, t in enumerate(texts):
            v = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM)
            out[r] = v / np.linalg.norm(v)
        return out


def _title(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]} {WORDS[(5 * i + 3) % len(WORDS)]}"


def _fill(kb: KnowledgeBase, n: int) -> None:
    kb.add_nodes(
        [
            {
                "id": f"n{i:03d}",
                "type": "CONCEPT" if i % 3 else "MEMORY",
                "title": _title(i),
                "scopes": SCOPES[i % len(SCOPES)],
            }
            for i in range(n)
        ]
    )
    kb.add_edges(
        [
            {
                "src": f"n{i:03d}",
                "dst": f"n{(i * 7 + 1) % n:03d}",
                "type": EDGE_TYPES[i % 3],
                "authority": "a" if i % 2 else None,
            }
            for i in range(n)
        ]
        + [{"src": f"n{i:03d}", "dst": f"n{(i + 2) % n:03d}", "type": "RELATED_TO"} for i in range(0, n, 2)]
    )
    kb.add_aliases([(WORDS[i % len(WORDS)] + " alias", f"n{i:03d}") for i in range(0, n, 4)])
    concepts = [f"n{i:03d}" for i in range(n) if i % 3]
    kb.set_embeddings(MODEL, concepts, _Model().embed([_title(int(c[1:])) for c in concepts]))


# One write: (kind, a, b, c) with small integers the writer maps to ids, titles, scopes and types.
WRITE = st.tuples(
    st.sampled_from(
        ["add_node", "new_concept", "retitle", "rescope", "delete_node", "add_edge", "delete_edge", "alias", "vector"]
    ),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 11),
)


def _apply(kb: KnowledgeBase, write: tuple[str, int, int, int]) -> None:
    kind, a, b, c = write
    x, y = f"n{a:03d}", f"n{b:03d}"
    present = {r["id"] for r in kb.nodes([x, y]) if r is not None}
    if kind == "add_node":
        kb.add_nodes(
            [{"id": x, "type": "CONCEPT" if c % 3 else "MEMORY", "title": _title(c), "scopes": WRITE_SCOPES[c % 6]}]
        )
    elif kind == "new_concept":  # a concept added (its id sorts among the base's), with an edge
        z = f"{x}-{c}"
        kb.add_nodes([{"id": z, "type": "CONCEPT", "title": _title(c + b), "scopes": WRITE_SCOPES[c % 6]}])
        kb.add_edges([{"src": z, "dst": y, "type": EDGE_TYPES[c % 3]}] if y in present else [])
    elif kind == "retitle" and x in present:
        kb.add_nodes([{"id": x, "title": f"{WORDS[c]} {WORDS[(c + 4) % len(WORDS)]} retitled"}])
    elif kind == "rescope" and x in present:
        kb.add_nodes([{"id": x, "scopes": WRITE_SCOPES[c % 6]}])
    elif kind == "delete_node":
        kb.delete_nodes([x])
    elif kind == "add_edge" and {x, y} <= present:
        kb.add_edges([{"src": x, "dst": y, "type": EDGE_TYPES[c % 3], "fidelity": "high" if c % 2 else None}])
    elif kind == "delete_edge":
        kb.delete_edges([{"src": x, "dst": y, "type": EDGE_TYPES[c % 3]}])
    elif kind == "alias" and x in present:
        kb.add_aliases([(f"{WORDS[c]} nick", x)])
    elif kind == "vector" and x in present:
        kb.set_embeddings(MODEL, [x], _Model().embed([f"{WORDS[c]} vector {a}"]))


def _dump(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=repr)


def _retrievers(kb: KnowledgeBase) -> list[ConceptAnchoredRetriever]:
    """The wrap under a stand-in model (the full snapshot answers) and under the built-in hashing
    embedder (the live graph answers once it has a delta without a concept written)."""
    own_types = WalkConfig(expand_edge_types=("RELATED_TO", "BROADER"), admit_edge_types=("ABOUT", "RELATED_TO"))
    return [
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, config=own_types),
        ConceptAnchoredRetriever(builtin_flat_search(kb), kb, embedder=_Model()),
    ]


def _answers(
    kb: KnowledgeBase,
    probes: list[str],
    rets: list[ConceptAnchoredRetriever] | None = None,
    pick: Any = None,
) -> dict[str, str]:
    """Every tool's answer for every caller, serialised (an error's type and text stand for it);
    ``rets``: long-lived retrievers over ``kb`` (a new one reads the full state on construction);
    ``pick``: asks only the answers whose name it accepts (default: all)."""
    with warnings.catch_warnings():  # (the typo'd scope: warned once per store, not compared)
        warnings.simplefilter("ignore", UnknownScopeWarning)
        return _answers_of(kb, probes, rets, pick or (lambda name: True))


def _answers_of(
    kb: KnowledgeBase, probes: list[str], rets: list[ConceptAnchoredRetriever] | None, pick: Any
) -> dict[str, str]:
    out: dict[str, str] = {}

    def ask(name: str, fn: Any) -> None:
        if pick(name):
            out[name] = _call(fn)

    rets = rets or _retrievers(kb)
    questions = ("graph walk", "memory vector rank", "alias stone")
    # the hashing embedder's wrap first, for every caller: the other one reads the full state
    # (brought to the last write), which every read after it then finds current
    for ci, who in enumerate(CALLERS):
        for q in questions:
            ask(f"{ci}:wrap0:{q}", lambda q=q: rets[0].query(q, 5, concept_walk=True, caller=who))
    for ci, who in enumerate(CALLERS):
        for q in questions:
            calls = {
                f"context-q:{q}": lambda q=q: graph_context(kb, q, k=8, caller=who).to_dict(),
                f"search:{q}": lambda q=q: kb.search(q, 8, caller=who),
                f"wrap1:{q}": lambda q=q: rets[1].query(q, 5, concept_walk=True, caller=who),
            }
            for name, fn in calls.items():
                ask(f"{ci}:{name}", fn)
        for x, y in zip(probes, probes[1:] + probes[:1]):
            ask(f"{ci}:context-c:{x}", lambda x=x: graph_context(kb, concepts=[x], k=8, caller=who).to_dict())
            ask(f"{ci}:suggest:{x}", lambda x=x: link_suggest(kb, x, k=5, caller=who, min_shared=1).to_dict())
            ask(f"{ci}:path:{x}:{y}", lambda x=x, y=y: graph_path(kb, x, y, caller=who).to_dict())
    return out


def _call(fn: Any) -> str:
    try:
        return _dump(fn())
    except ConceptwalkError as e:
        return f"{type(e).__name__}: {e}"


def _fresh(path: str, tmp: str) -> KnowledgeBase:
    """A fresh store holding the same bytes (the file copied through SQLite's backup, no snapshot
    file beside it): what a new process builds."""
    target = os.path.join(tmp, f"fresh-{LIVE_COUNTS['reads']}.db")
    src = sqlite3.connect(path)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    assert not os.path.exists(target + ".snapshot")
    return KnowledgeBase.open(target, create=True)


@settings(max_examples=18, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.tuples(st.booleans(), st.lists(WRITE, min_size=1, max_size=3)),
        min_size=1,
        max_size=5,
    )
)
def test_every_answer_after_writes_equals_a_fresh_build(tmp_path_factory, batches):
    _sequence(str(tmp_path_factory.mktemp("live")), [(by_other, writes, False) for by_other, writes in batches])


TOOLS = ("context-q", "search", "wrap0", "wrap1", "context-c", "suggest", "path")


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.tuples(
            st.booleans(),
            st.lists(WRITE, min_size=1, max_size=3),
            st.tuples(st.sampled_from(TOOLS), st.integers(0, len(CALLERS) - 1)),
        ),
        min_size=2,
        max_size=8,
    )
)
def test_one_tool_after_each_batch_equals_a_fresh_build(tmp_path_factory, batches):
    """After each batch one tool reads for one caller (an agent whose turns use different
    tools): a live graph brings forward what the nearest earlier graph made (its text, walk
    edges, views, node types, written types), not only what the one it grew from made, by the
    batches written since; every answer equals a fresh build's."""
    _sequence(
        str(tmp_path_factory.mktemp("one")), [(by_other, writes, False, only) for by_other, writes, only in batches]
    )


#: batches of (by the other store, writes, a flag the test gives its meaning)
FLAGGED_BATCHES = st.lists(
    st.tuples(st.booleans(), st.lists(WRITE, min_size=1, max_size=3), st.booleans()),
    min_size=2,
    max_size=6,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=FLAGGED_BATCHES)
def test_with_compaction_every_answer_equals_a_fresh_build(tmp_path_factory, batches):
    """As above with the compaction thread making a new base after every written node
    (``LIVE_COMPACT_NODES`` = 1): the reads take its base whenever it is ready, and after a
    batch whose third element is True they wait for it first, so both the old base plus the
    delta and the compacted base plus the writes since answer."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(StateKeeper, "LIVE_COMPACT_NODES", 1)
        LIVE_COUNTS["compaction sequences"] += 1
        _sequence(str(tmp_path_factory.mktemp("compact")), batches)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=FLAGGED_BATCHES)
def test_after_the_catch_up_thread_every_answer_equals_a_fresh_build(tmp_path_factory, batches):
    """As above, with the reads made after the catch-up thread is idle when the batch's third
    element is True (an agent's next turn, a moment after the write): the live graph the thread
    grew from the change log answers; other batches' reads come at once (the read grows it)."""
    LIVE_COUNTS["catch-up sequences"] += 1
    _sequence(
        str(tmp_path_factory.mktemp("catch")),
        [(by_other, writes, "catch-up" if pause else False) for by_other, writes, pause in batches],
    )


def _sequence(tmp: str, batches: list[Any]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        orig = retriever_module.live_read

        def counted(*a: Any, **kw: Any) -> Any:
            got = orig(*a, **kw)
            if isinstance(got, LiveRead):
                live_wraps[0] += 1
            return got

        mp.setattr(retriever_module, "live_read", counted)
        _sequence_of(tmp, batches)


live_wraps = [0]  # wrapped queries the live path answered (the fresh stores' never do)


def _sequence_of(tmp: str, batches: list[Any]) -> None:
    """``batches``: per batch (written by the other store, its writes, wait for the compaction
    thread[, (tool, caller index): the only answers asked after it])."""
    path = os.path.join(tmp, "kb.db")
    kb = KnowledgeBase.open(path, create=True)
    other = None
    try:
        _fill(kb, 30)
        probes = ["n001", "n004", "n011", "n020"]
        rets = _retrievers(kb)
        _answers(kb, probes, rets)  # the reader holds a state before the writes: they are followed from it
        other = KnowledgeBase.open(path, create=True)
        LIVE_COUNTS["sequences"] += 1
        for by_other, writes, settle, *only in batches:
            writer = other if by_other else kb
            with writer.transaction():
                for w in writes:
                    _apply(writer, w)
            if settle == "catch-up":
                assert _CATCH_UP.wait_idle(10)
                kept = kb._keeper._live
                if kept is not None and not by_other and kept.version == kb._keeper.graph_version(other.conn):
                    LIVE_COUNTS["graphs the catch-up thread grew"] += 1
            elif settle:
                kb.live_graph()  # the read that starts the thread (past the mark)
                kb._keeper._wait_compaction()
            before = live_wraps[0]
            pick = None
            if only:
                prefix = f"{only[0][1]}:{only[0][0]}:"
                pick = lambda name, prefix=prefix: name.startswith(prefix)  # noqa: E731
            got = _answers(kb, probes, rets, pick)
            LIVE_COUNTS["live wrapped queries"] += live_wraps[0] - before
            fresh = _fresh(path, tmp)
            try:
                want = _answers(fresh, probes, pick=pick)
            finally:
                fresh.close()
            LIVE_COUNTS["reads"] += len(want)
            bad = [k for k in want if got.get(k) != want[k]]
            LIVE_COUNTS["mismatches"] += len(bad)
            assert not bad, (bad[:3], [(got.get(k), want[k]) for k in bad[:1]])
    finally:
        LIVE_COUNTS["compacted bases taken"] += kb._keeper.compactions[1]
        kb.close()
        if other is not None:
            other.close()


def test_the_counts_are_reported(capsys):
    """Prints what the differential test compared (run after it in file order)."""
    if LIVE_COUNTS["sequences"] == 0:
        pytest.skip("the differential test did not run in this session")
    with capsys.disabled():
        print(
            f"\nlive differential: {LIVE_COUNTS['sequences']} sequences, {LIVE_COUNTS['reads']} reads compared, "
            f"{LIVE_COUNTS['mismatches']} mismatches; {LIVE_COUNTS['compacted bases taken']} bases made by the "
            f"compaction thread taken by a read; {LIVE_COUNTS['live wrapped queries']} wrapped queries read live; "
            f"{LIVE_COUNTS['graphs the catch-up thread grew']} graphs grown by the catch-up thread before the read"
        )
    assert LIVE_COUNTS["mismatches"] == 0
    # the wrap's live path answered some of the compared reads (not the full snapshot alone)
    assert LIVE_COUNTS["live wrapped queries"] > 0
    # the compaction variant compared reads over bases the thread made, not only over deltas
    assert LIVE_COUNTS["compaction sequences"] == 0 or LIVE_COUNTS["compacted bases taken"] > 0
    # the catch-up variant compared reads of graphs the thread grew, not only ones a read grew
    assert LIVE_COUNTS["catch-up sequences"] == 0 or LIVE_COUNTS["graphs the catch-up thread grew"] > 0
