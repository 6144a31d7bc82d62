"""Fuzz the command line: random argument lists through ``conceptwalk.cli.main``.

Each input becomes an argv: a command (or a bare option), then tokens drawn from that command's
options, values (integers and floats of any size and sign, ``nan``, ``inf``, free text) and
paths (a small real store, another program's SQLite file, a damaged store, a directory, a missing
file, small import files). The commands that only read or import run for real, inside a sandbox
directory; ``demo``, ``synth``, ``dataset``, ``bench`` and ``serve`` (slow, or reading stdin) are
only parsed.

What counts as a finding: any exception out of ``main`` other than ``SystemExit`` with status 0
or 2 (argparse: ``--help``, ``--version``, a bad argument); a return status other than 0 or 2; a
status 2 whose stderr is not one ``conceptwalk: error: ...`` line (or argparse's usage + error
line); a traceback on stderr; a crash or a hang.

Run: ``python fuzz/fuzz_cli.py fuzz/corpus/fuzz_cli -max_total_time=60``
Replay: ``python fuzz/fuzz_cli.py --replay fuzz/corpus/fuzz_cli``
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fuzzlib import instrumented, run  # noqa: E402

with instrumented():
    from conceptwalk.cli import build_parser, main
    from conceptwalk.kb.store import KnowledgeBase

_SANDBOX = tempfile.mkdtemp(prefix="cw-fuzz-cli-")
_FIXTURE = os.path.join(_SANDBOX, "fixture.db")

COMMANDS = [
    "stats",
    "context",
    "suggest",
    "path",
    "query",
    "probe",
    "import",
    "events",
    "demo",
    "synth",
    "dataset",
    "bench",
    "serve",
    "--version",
    "--help",
    "-h",
    "nope",
    "",
]
RUN = {"stats", "context", "suggest", "path", "query", "probe", "import", "events"}
OPTIONS = [
    "-k",
    "--concept",
    "--node-type",
    "--restart",
    "--eps",
    "--hits",
    "--json",
    "--scopes",
    "--min-shared",
    "--mode",
    "--embedder",
    "--max-hops",
    "--concept-walk",
    "--events",
    "--format",
    "--default-type",
    "--quiet",
    "--concepts",
    "--seed",
    "--force",
    "--queries",
    "--rounds",
    "--no-threads",
    "--token-file",
    "--require-token",
    "--path",
    "--repeat",
    "--rebuild",
    "summarize",
    "-h",
    "--",
    "-",
]
WORDS = [
    "c1",
    "c2",
    "c3",
    "ghost",
    "concept one",
    "",
    "*",
    "t1",
    "a,b",
    "fts",
    "embedding",
    "hashing",
    "hashing:8",
    "hashing:99999999999",
    "hashing:0",
    "model2vec:",
    "st:nope",
    "jsonl:events.jsonl",
    "logging",
    "auto",
    "jsonl",
    "edges",
    "LINK",
    "umls",
    "1",
    "2",
    "0",
    "-1",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "0.25",
    "1.5",
    "0_5",
    "CONCEPT",
    "é",
    "\x00",
    "🙂",
]
PATHS = ["@kb", "@foreign", "@damaged", "@dir", "@missing", "@jsonl", "@csv", "@events"]


def _setup() -> None:
    """The files the paths stand for (rebuilt by :func:`_reset` when a run changed them)."""
    with KnowledgeBase.create(_FIXTURE) as kb:
        kb.add_nodes(
            [
                {
                    "id": f"c{i}",
                    "type": "CONCEPT" if i < 4 else "FILE",
                    "title": f"concept {i}",
                    "scopes": ["t1"] if i == 3 else None,
                }
                for i in range(6)
            ]
        )
        kb.add_edges(
            [
                {"src": "c1", "dst": "c2", "type": "RELATED_TO", "authority": "CANONICAL"},
                {"src": "c2", "dst": "c4", "type": "IMPLEMENTED_BY", "fidelity": 0.5},
                {"src": "c1", "dst": "c3", "type": "RELATED_TO"},
                ("c3", "c5", "IMPLEMENTED_BY"),
                ("c2", "c3"),
                ("c4", "c5"),
            ]
        )
        kb.add_aliases([("one", "c1")])
    c = sqlite3.connect(os.path.join(_SANDBOX, "foreign.db"))
    c.execute("CREATE TABLE IF NOT EXISTS nodes(id TEXT)")
    c.commit()
    c.close()
    with open(_FIXTURE, "rb") as fh:
        data = bytearray(fh.read())
    data[len(data) // 2 : len(data) // 2 + 512] = bytes(range(256)) * 2
    with open(os.path.join(_SANDBOX, "damaged.db"), "wb") as fh:
        fh.write(bytes(data))
    os.makedirs(os.path.join(_SANDBOX, "adir"), exist_ok=True)


def _reset() -> None:
    work = os.path.join(_SANDBOX, "work")
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    for name in ("fixture.db", "foreign.db", "damaged.db"):
        shutil.copyfile(os.path.join(_SANDBOX, name), os.path.join(work, name))
    os.makedirs(os.path.join(work, "adir"))
    os.chdir(work)


def _path(tok: str, fdp) -> str:
    if tok == "@kb":
        return "fixture.db"
    if tok == "@foreign":
        return "foreign.db"
    if tok == "@damaged":
        return "damaged.db"
    if tok == "@dir":
        return "adir"
    if tok == "@missing":
        return "missing.db"
    if tok in ("@jsonl", "@csv", "@events"):
        name = {"@jsonl": "in.jsonl", "@csv": "in.csv", "@events": "events.jsonl"}[tok]
        with open(name, "wb") as fh:
            fh.write(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 200)))
        return name
    return tok


def _token(fdp) -> str:
    kind = fdp.ConsumeIntInRange(0, 9)
    if kind <= 2:
        return OPTIONS[fdp.ConsumeIntInRange(0, len(OPTIONS) - 1)]
    if kind <= 4:
        return WORDS[fdp.ConsumeIntInRange(0, len(WORDS) - 1)]
    if kind == 5:
        return str(fdp.ConsumeIntInRange(-(2**70), 2**70))
    if kind == 6:
        return repr(fdp.ConsumeFloat())
    if kind == 7:
        return _path(PATHS[fdp.ConsumeIntInRange(0, len(PATHS) - 1)], fdp)
    # free text, kept inside the sandbox (no directory separators)
    return fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 16)).replace("/", "_").replace("\\", "_")


def _argv(fdp) -> list[str]:
    cmd = COMMANDS[fdp.ConsumeIntInRange(0, len(COMMANDS) - 1)]
    argv = [cmd] if cmd else []
    if cmd in RUN or fdp.ConsumeBool():
        argv.append(_path(PATHS[fdp.ConsumeIntInRange(0, len(PATHS) - 1)], fdp))
    for _ in range(fdp.ConsumeIntInRange(0, 8)):
        argv.append(_token(fdp))
    return argv


def _check_stderr(err: str, argparse_exit: bool) -> None:
    assert "Traceback" not in err, err
    lines = [x for x in err.replace("\r", "\n").split("\n") if x.strip()]
    if argparse_exit:
        assert lines and "error:" in lines[-1] and lines[-1].startswith("conceptwalk"), err
    else:
        errors = [x for x in lines if x.startswith("conceptwalk: error: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], err


def target(data: bytes) -> None:
    import atheris  # noqa: F401  (only for FuzzedDataProvider; replay imports it too)

    fdp = atheris.FuzzedDataProvider(data)
    _reset()
    argv = _argv(fdp)
    out, err = io.StringIO(), io.StringIO()
    parse_only = not argv or argv[0] not in RUN
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if parse_only:
                build_parser().parse_args(argv)
                return
            rc = main(argv)
        except SystemExit as exc:
            assert exc.code in (0, 2), (argv, exc.code)
            if exc.code == 2:
                _check_stderr(err.getvalue(), True)
            return
    assert rc in (0, 2), (argv, rc)
    if rc == 2:
        _check_stderr(err.getvalue(), False)


_setup()

if __name__ == "__main__":
    # The target runs inside the sandbox (it changes directory): make the corpus and replay
    # paths absolute first (libFuzzer's own -flags are passed through).
    argv = [sys.argv[0]] + [a if a.startswith("-") else os.path.abspath(a) for a in sys.argv[1:]]
    try:
        run(target, argv)
    finally:
        os.chdir(tempfile.gettempdir())
        shutil.rmtree(_SANDBOX, ignore_errors=True)
