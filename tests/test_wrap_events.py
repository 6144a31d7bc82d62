"""Retrieval events: one per walk, valid against the shipped schema; sinks (JSONL under
concurrent writer processes, logging, callback); the summariser."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap

import pytest

jsonschema = pytest.importorskip("jsonschema")

from conceptwalk import Caller  # noqa: E402
from conceptwalk.wrap import (  # noqa: E402
    ConceptAnchoredRetriever,
    JsonlSink,
    WalkConfig,
    load_event_schema,
    make_sink,
    summarize_events,
    summarize_file,
)
from test_wrap_retriever import make_kb  # noqa: E402

EVERYONE = Caller.all_access()
VALIDATOR = jsonschema.Draft202012Validator(load_event_schema())


def test_schema_is_valid_and_shipped_in_the_package():
    jsonschema.Draft202012Validator.check_schema(load_event_schema())
    from importlib import resources

    assert resources.files("conceptwalk.wrap").joinpath("schemas", "retrieval_event.schema.json").is_file()


@pytest.mark.parametrize(
    "cfg",
    [WalkConfig(), WalkConfig(embedder=None, max_candidates=1), WalkConfig(max_edges=1, max_concepts=1, max_hops=1)],
)
def test_one_valid_event_per_walk_and_none_without_walk(cfg):
    kb = make_kb()
    events = []
    r = ConceptAnchoredRetriever(lambda t, k: [{"id": "f:login"}], kb, config=cfg, event_sink=events.append)
    r.query("authn and session tokens", 3, caller=EVERYONE)
    r.query("authn and session tokens", 3, concept_walk=False, caller=EVERYONE)
    assert events == []
    for text in ("authn and session tokens", "nothing at all", "", "billing ledger"):
        out = r.query(text, 3, concept_walk=True, caller=EVERYONE)
        ev = events[-1]
        VALIDATOR.validate(ev)
        assert ev["query"] == text and ev["k"] == 3 and ev["flatCount"] == 1
        assert ev["candidatesAdded"] == len(out) - 1
        assert ev["walkContributed"] == (len(out) > 1)
        assert ev["truncated"] == bool(ev["truncatedBy"])
        assert ev["schemaVersion"] == 2 and ev["cut"] == sum(ev["cutBy"].values())  # the stop rule's count
        assert isinstance(ev["missingTypes"], dict)
    assert len(events) == 4


def test_budget_cuts_are_reported():
    kb = make_kb()
    ev = []
    r = ConceptAnchoredRetriever(
        lambda t, k: [], kb, config=WalkConfig(embedder=None, max_candidates=1), event_sink=ev.append
    )
    assert len(r.query("authn", 3, concept_walk=True, caller=EVERYONE)) == 1
    assert ev[-1]["truncated"] and ev[-1]["truncatedBy"] == ["candidates"]
    r = ConceptAnchoredRetriever(
        lambda t, k: [], kb, config=WalkConfig(embedder=None, max_edges=1), event_sink=ev.append
    )
    r.query("authn", 3, concept_walk=True, caller=EVERYONE)
    assert ev[-1]["truncatedBy"] == ["edges"] and ev[-1]["edgesVisited"] == 1
    r = ConceptAnchoredRetriever(
        lambda t, k: [], kb, config=WalkConfig(embedder=None, max_concepts=1, lexical_k=0), event_sink=ev.append
    )
    r.query("authn billing", 3, concept_walk=True, caller=EVERYONE)  # alias c:auth; the name never needed
    assert not ev[-1]["truncated"]
    r.query("zzz", 3, concept_walk=True, caller=EVERYONE)
    kb.add_aliases([("zzz", "c:billing"), ("zzz", "c:tokens")])
    r2 = ConceptAnchoredRetriever(
        lambda t, k: [], kb, config=WalkConfig(embedder=None, max_concepts=1, lexical_k=0), event_sink=ev.append
    )
    r2.query("zzz", 3, concept_walk=True, caller=EVERYONE)
    assert ev[-1]["truncatedBy"] == ["concepts"] and len(ev[-1]["resolvedConcepts"]) == 1


def test_jsonl_logging_and_callback_sinks(tmp_path, caplog):
    kb = make_kb()
    path = tmp_path / "ev.jsonl"
    r = ConceptAnchoredRetriever(lambda t, k: [], kb, config=WalkConfig(event_sink=f"jsonl:{path}"))
    r.query("authn", 2, concept_walk=True, caller=EVERYONE)
    r.query("tokens", 2, concept_walk=True, caller=EVERYONE)
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    for line in lines:
        VALIDATOR.validate(json.loads(line))
    with caplog.at_level(logging.INFO, logger="conceptwalk.events"):
        ConceptAnchoredRetriever(lambda t, k: [], kb, event_sink="logging").query(
            "authn", 2, concept_walk=True, caller=EVERYONE
        )
    rec = [x for x in caplog.records if x.name == "conceptwalk.events"]
    assert len(rec) == 1 and json.loads(rec[0].getMessage()) == rec[0].conceptwalk_event
    with pytest.raises(ValueError, match="event_sink"):
        make_sink("kafka:topic")


def test_failing_sink_does_not_fail_the_query(caplog):
    kb = make_kb()

    def boom(event):
        raise OSError("disk full")

    r = ConceptAnchoredRetriever(lambda t, k: [], kb, config=WalkConfig(embedder=None), event_sink=boom)
    with caplog.at_level(logging.WARNING, logger="conceptwalk.wrap"):
        out = r.query("authn", 2, concept_walk=True, caller=EVERYONE)
    assert out and "disk full" in caplog.text


WRITER = textwrap.dedent("""
    import sys
    from conceptwalk.wrap import JsonlSink
    path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sink = JsonlSink(path)
    for i in range(n):
        sink.emit({"event": "conceptwalk.retrieval", "writer": who, "i": i, "walkContributed": i % 2 == 0,
                   "candidatesAdded": i % 3, "walkMs": float(i), "pad": who * (20000 + 37 * i)})
""")


def test_jsonl_sink_concurrent_writer_processes_never_tear_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    n, writers = 60, ["a", "b", "c", "d"]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), w, str(n)]) for w in writers]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == n * len(writers)
    seen = {w: [] for w in writers}
    for line in lines:
        obj = json.loads(line)  # a torn or interleaved line would not parse
        assert obj["pad"] == obj["writer"] * (20000 + 37 * obj["i"])
        seen[obj["writer"]].append(obj["i"])
    assert all(v == list(range(n)) for v in seen.values())  # each writer's lines in its order
    s = summarize_file(path)
    assert s["events"] == n * len(writers) and s["malformed"] == 0


def test_summarize(tmp_path):
    evs = [
        {
            "event": "conceptwalk.retrieval",
            "walkContributed": i < 3,
            "candidatesAdded": 2 if i < 3 else 0,
            "walkMs": float(i + 1),
            "truncated": i == 0,
        }
        for i in range(10)
    ]
    s = summarize_events(evs + [{"event": "other"}])
    assert s["events"] == 10 and s["contributed"] == 3 and s["contributionRate"] == 0.3
    assert s["candidatesAdded"] == {"total": 6, "mean": 0.6}
    assert s["walkMs"] == {"p50": 5.5, "p90": 9.1, "p99": 9.91, "max": 10.0}
    assert s["truncated"] == 1 and s["skipped"] == 1
    assert s["cut"] == {"total": 0, "mean": 0.0, "byScore": 0, "byHops": 0}  # (version 1 events: none)
    v2 = [dict(e, cut=3, cutBy={"score": 2, "hops": 1}) for e in evs[:2]]
    assert summarize_events(v2)["cut"] == {"total": 6, "mean": 3.0, "byScore": 4, "byHops": 2}
    path = tmp_path / "e.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in evs) + "\nnot json\n[1]\n\n")
    f = summarize_file(path)
    assert f["malformed"] == 2 and f["events"] == 10
    empty = summarize_events([])
    assert empty["contributionRate"] is None and empty["walkMs"]["p50"] is None
    sink = JsonlSink(tmp_path / "x.jsonl")
    with pytest.raises(ValueError):
        sink.emit({"bad": float("nan")})


def test_jsonl_sink_cuts_a_torn_tail_before_writing(tmp_path) -> None:
    """A writer killed mid-write leaves an unfinished last line: readers skip it and the next
    write removes it, so the file never holds a torn line in the middle."""
    from conceptwalk.wrap.events import JsonlSink, read_events

    path = tmp_path / "ev.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3, "quer')  # the torn tail
    events, bad = read_events(path)
    assert [e["a"] for e in events] == [1, 2] and bad == 0
    JsonlSink(path).emit({"a": 4})
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n{"a":4}\n'
    path.write_bytes(b'{"a": 1, "no newline anywhere')
    JsonlSink(path).emit({"a": 5})
    assert path.read_bytes() == b'{"a":5}\n'
