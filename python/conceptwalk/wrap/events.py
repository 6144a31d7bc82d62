"""Retrieval events: one JSON object per concept walk, sent to a sink (JSONL file, Python logging
or a callback), with the JSON Schema shipped in the package and a summariser for JSONL files."""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Iterable
from importlib import resources
from typing import Any, Protocol, runtime_checkable

from ..errors import InputError

try:  # POSIX: an advisory lock around each append, on top of O_APPEND
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

__all__ = [
    "EventSink",
    "JsonlSink",
    "LoggingSink",
    "CallbackSink",
    "make_sink",
    "load_event_schema",
    "read_events",
    "summarize_events",
    "EVENT_SCHEMA_VERSION",
]

EVENT_SCHEMA_VERSION = 2
_log = logging.getLogger("conceptwalk.wrap")


@runtime_checkable
class EventSink(Protocol):
    """Anything with ``emit(event: dict) -> None`` (checked at run time: ``isinstance``)."""

    def emit(self, event: dict[str, Any]) -> None:
        """Record one retrieval event.

        Parameters
        ----------
        event : dict
            The event (JSON-ready; see :func:`load_event_schema`). A sink that raises is logged
            and ignored: a failing sink never fails a query.
        """


class JsonlSink:
    """Append each event as one line of JSON to ``path``.

    Each line is written with a single ``os.write`` on a descriptor opened with ``O_APPEND``
    (the kernel positions every write at the end of the file), under an exclusive ``flock``
    where the platform has one, so writers in several threads or processes never interleave
    or tear lines.

    Parameters
    ----------
    path : str or path-like
        The JSONL file (created when absent; never truncated).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "events.jsonl")
    >>> sink = JsonlSink(path)
    >>> sink.emit({"a": 1}); sink.emit({"a": 2})
    >>> open(path).read()
    '{"a":1}\\n{"a":2}\\n'
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if not self.path:
            raise InputError("event sink path must not be empty")

    def emit(self, event: dict[str, Any]) -> None:
        """Append ``event`` as one line (compact JSON, UTF-8, no NaN).

        Parameters
        ----------
        event : dict
            The event to write.
        """
        line = (json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n").encode()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        try:
            if _fcntl is not None:
                _fcntl.flock(fd, _fcntl.LOCK_EX)
                _drop_torn_tail(fd)
            view = memoryview(line)
            while view:  # a regular file takes it in one write; loop only on a short write
                n = os.write(fd, view)
                view = view[n:]
        finally:
            os.close(fd)  # closing releases the lock

    def __repr__(self) -> str:
        return f"JsonlSink({self.path!r})"


def _drop_torn_tail(fd: int) -> None:
    """Under the sink's lock: if the file does not end with a newline, a writer was killed in the
    middle of its ``write`` (Linux may stop a large write between pages on SIGKILL). That event was
    never completely written; cut it off so the next line starts clean and no line in the middle
    of the file is ever torn."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while end > 0:
        start = max(0, end - 65536)
        chunk = os.pread(fd, end - start, start)
        nl = chunk.rfind(b"\n")
        if nl >= 0:
            os.ftruncate(fd, start + nl + 1)
            return
        end = start
    os.ftruncate(fd, 0)


class LoggingSink:
    """Log each event as compact JSON at ``level`` on ``logger`` (default ``conceptwalk.events``);
    the dict itself rides along as ``record.conceptwalk_event``.

    Parameters
    ----------
    logger : str or logging.Logger
        The logger or its name.
    level : int
        The logging level of each record.
    """

    def __init__(self, logger: str | logging.Logger = "conceptwalk.events", level: int = logging.INFO) -> None:
        self.logger = logger if isinstance(logger, logging.Logger) else logging.getLogger(logger)
        self.level = level

    def emit(self, event: dict[str, Any]) -> None:
        """Log ``event`` (only when the logger is enabled for the level).

        Parameters
        ----------
        event : dict
            The event to log.
        """
        if self.logger.isEnabledFor(self.level):
            self.logger.log(
                self.level,
                "%s",
                json.dumps(event, ensure_ascii=False, separators=(",", ":")),
                extra={"conceptwalk_event": event},
            )


class CallbackSink:
    """Call ``fn(event)`` for each event.

    Parameters
    ----------
    fn : callable
        Called with each event dict; its return value is ignored.

    Examples
    --------
    >>> got = []
    >>> CallbackSink(got.append).emit({"event": "conceptwalk.retrieval"})
    >>> got
    [{'event': 'conceptwalk.retrieval'}]
    """

    def __init__(self, fn: Callable[[dict[str, Any]], Any]) -> None:
        if not callable(fn):
            raise InputError(f"callback sink needs a callable, got {type(fn).__name__}")
        self.fn = fn

    def emit(self, event: dict[str, Any]) -> None:
        """Call the callback with ``event``.

        Parameters
        ----------
        event : dict
            The event passed on.
        """
        self.fn(event)


def make_sink(spec: Any) -> EventSink | None:
    """A sink from a spec: None (no events), an object with ``emit``, a callable (callback),
    a path-like (JSONL file), or a string ``"jsonl:PATH"``, ``"logging"``, ``"logging:LOGGER"``.

    Parameters
    ----------
    spec : None, EventSink, callable, path-like or str
        What to build the sink from (the ``event_sink=`` argument of the retriever).

    Returns
    -------
    EventSink or None
        The sink (``spec`` itself when it already is one), or None for no events.

    Raises
    ------
    InputError
        A string that is not one of the forms above, or another type.

    Examples
    --------
    >>> make_sink(None) is None, type(make_sink("logging")).__name__, type(make_sink(print)).__name__
    (True, 'LoggingSink', 'CallbackSink')
    >>> make_sink("jsonl:/tmp/events.jsonl")
    JsonlSink('/tmp/events.jsonl')
    """
    if spec is None:
        return None
    if isinstance(spec, EventSink):
        return spec
    if isinstance(spec, str):
        kind, sep, arg = spec.partition(":")
        if kind == "jsonl" and sep and arg:
            return JsonlSink(arg)
        if kind == "logging":
            return LoggingSink(arg or "conceptwalk.events")
        raise InputError(f"event_sink: unknown spec {spec!r}; expected 'jsonl:PATH', 'logging' or 'logging:LOGGER'")
    if isinstance(spec, os.PathLike):
        return JsonlSink(spec)
    if callable(spec):
        return CallbackSink(spec)
    raise InputError(
        f"event_sink must be a spec string, a path, a callable or an object with emit(), got {type(spec).__name__}"
    )


def emit_safely(sink: EventSink | None, event: dict[str, Any]) -> None:
    """Send ``event``; a failing sink is logged (``conceptwalk.wrap`` warning), never raised:
    a full disk must not fail a query."""
    if sink is None:
        return
    try:
        sink.emit(event)
    except Exception as exc:  # noqa: BLE001 - the query's answer matters more than its log
        _log.warning("retrieval event sink %r failed: %s", sink, exc)


def load_event_schema() -> dict[str, Any]:
    """The retrieval event's JSON Schema (draft 2020-12), read from the installed package.

    Returns
    -------
    dict
        The parsed schema (``schemas/retrieval_event.schema.json``).

    Examples
    --------
    >>> load_event_schema()["title"]
    'conceptwalk retrieval event'
    """
    text = resources.files("conceptwalk.wrap").joinpath("schemas/retrieval_event.schema.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def read_events(path: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], int]:
    """The events of a JSONL file and the number of lines that were not a JSON object (blank
    lines are skipped). A last line without its newline is a write still in progress, or one cut
    short by a killed writer (the next :class:`JsonlSink` write removes it): it is ignored, not
    counted as bad.

    Parameters
    ----------
    path : str or path-like
        A JSONL file written by :class:`JsonlSink`.

    Returns
    -------
    events : list of dict
        The JSON objects, in file order.
    malformed : int
        Lines that were not a JSON object.
    """
    events: list[dict[str, Any]] = []
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # the unfinished tail
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(obj, dict):
                events.append(obj)
            else:
                bad += 1
    return events, bad


def _percentile(sorted_vals: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default ``linear`` method)."""
    if not sorted_vals:
        return math.nan
    pos = (len(sorted_vals) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def summarize_events(events: Iterable[dict[str, Any]], *, malformed: int = 0) -> dict[str, Any]:
    """Contribution rate, candidates added (mean, total) and walk-time percentiles.

    Parameters
    ----------
    events : iterable of dict
        Retrieval events (entries that are not ``conceptwalk.retrieval`` events are skipped and
        counted in ``skipped``).
    malformed : int
        Lines already found unreadable; retrieval events with a count (``candidatesAdded``,
        ``cut``, ``cutBy``) that is not a number are added to it (and not summarised).

    Returns
    -------
    dict
        ``events``, ``contributed``, ``contributionRate`` (contributed / events, null without
        events), ``candidatesAdded`` ``{total, mean}``, ``truncated`` (count), ``walkMs``
        ``{p50, p90, p99, max}`` (linear interpolation between ranks; null without events),
        ``cut`` ``{total, mean, byScore, byHops}`` (candidates the stop rule did not append;
        events of schema version 1 count 0), ``skipped``, ``malformed``.

    Examples
    --------
    >>> evs = [{"event": "conceptwalk.retrieval", "walkContributed": c, "candidatesAdded": n,
    ...         "walkMs": t, "truncated": False} for c, n, t in [(True, 3, 1.0), (False, 0, 3.0)]]
    >>> s = summarize_events(evs)
    >>> s["contributionRate"], s["candidatesAdded"], s["walkMs"]["p50"]
    (0.5, {'total': 3, 'mean': 1.5}, 2.0)
    """
    n = contributed = added = truncated = skipped = cut = by_score = by_hops = 0
    times: list[float] = []
    for ev in events:
        if not isinstance(ev, dict) or ev.get("event") != "conceptwalk.retrieval":
            skipped += 1
            continue
        why = ev.get("cutBy")
        why = why if isinstance(why, dict) else {}
        try:
            counts = [
                int(v or 0) for v in (ev.get("candidatesAdded"), ev.get("cut"), why.get("score"), why.get("hops"))
            ]
        except (TypeError, ValueError, OverflowError):  # a count that is not a number: a malformed event
            malformed += 1
            continue
        n += 1
        contributed += bool(ev.get("walkContributed"))
        truncated += bool(ev.get("truncated"))
        added, cut, by_score, by_hops = (a + b for a, b in zip((added, cut, by_score, by_hops), counts))
        t = ev.get("walkMs")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            times.append(float(t))
    times.sort()

    def pct(q: float) -> float | None:
        return round(_percentile(times, q), 4) if times else None

    return {
        "events": n,
        "contributed": contributed,
        "contributionRate": (contributed / n) if n else None,
        "candidatesAdded": {"total": added, "mean": (added / n) if n else None},
        "truncated": truncated,
        "walkMs": {"p50": pct(50), "p90": pct(90), "p99": pct(99), "max": times[-1] if times else None},
        "cut": {"total": cut, "mean": (cut / n) if n else None, "byScore": by_score, "byHops": by_hops},
        "skipped": skipped,
        "malformed": malformed,
    }


def summarize_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """:func:`summarize_events` over a JSONL file (with its path and malformed-line count).

    Parameters
    ----------
    path : str or path-like
        A JSONL file written by :class:`JsonlSink`.

    Returns
    -------
    dict
        ``{"file": path}`` followed by the keys of :func:`summarize_events`.
    """
    events, bad = read_events(path)
    out = {"file": os.fspath(path)}
    out.update(summarize_events(events, malformed=bad))
    return out
