"""Shared helpers for the atheris targets in this directory.

Every target decodes the fuzzer's bytes with :class:`atheris.FuzzedDataProvider` and calls
conceptwalk. The contract checked everywhere: only the documented exceptions escape
(``ValueError`` -- which includes :class:`conceptwalk.InputError` --, ``IndexError`` and
:class:`conceptwalk.NotFoundError`). Anything else propagates, and atheris reports it as a
crash; a segfault, an abort, a sanitizer report or a timeout (``-timeout=``) is a finding too.

Each target is also runnable without atheris on a list of files (``--replay FILE...``), which is
what the regression test over the committed corpus uses.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

import contextlib


def documented() -> tuple[type[BaseException], ...]:
    """The exceptions a caller may legitimately see from the core and the Python layer."""
    from conceptwalk.errors import InputError, NotFoundError

    return (ValueError, IndexError, InputError, NotFoundError)


def replaying(argv: list[str] | None = None) -> bool:
    argv = sys.argv if argv is None else argv
    return len(argv) > 1 and argv[1] == "--replay"


@contextlib.contextmanager
def instrumented():
    """Import conceptwalk inside this block; on exit, atheris instruments the bytecode of the
    conceptwalk modules for coverage (a no-op when replaying or without atheris).

    ``atheris.instrument_imports`` does not see modules loaded through the editable install's
    redirecting loader, so the loaded functions are instrumented in place instead.
    """
    yield
    if replaying():
        return
    try:
        import atheris
    except ImportError:
        return
    import types

    count = 0
    for mod_name, mod in list(sys.modules.items()):
        if not (mod_name == "conceptwalk" or mod_name.startswith("conceptwalk.")):
            continue
        for obj in list(vars(mod).values()):
            targets = []
            if isinstance(obj, types.FunctionType) and obj.__module__ == mod_name:
                targets.append((mod, obj))
            elif isinstance(obj, type) and obj.__module__ == mod_name:
                for attr, val in list(vars(obj).items()):
                    fn = val.__func__ if isinstance(val, (classmethod, staticmethod)) else val
                    if isinstance(fn, property):
                        fn = fn.fget
                    if isinstance(fn, types.FunctionType):
                        targets.append((obj, fn))
            for _, fn in targets:
                atheris.instrument_func(fn)
                count += 1
    print(f"INFO: instrumented {count} conceptwalk functions", file=sys.stderr)


def run(target: Callable[[bytes], None], argv: list[str] | None = None) -> None:
    """Run ``target`` under atheris (libFuzzer flags in ``argv``), or replay files with
    ``--replay FILE_OR_DIR...`` (no atheris needed)."""
    argv = list(sys.argv if argv is None else argv)
    if replaying(argv):
        n = 0
        for p in argv[2:]:
            files = [os.path.join(p, f) for f in sorted(os.listdir(p))] if os.path.isdir(p) else [p]
            for f in files:
                with open(f, "rb") as fh:
                    target(fh.read())
                n += 1
        print(f"replayed {n} inputs without a finding")
        return
    import atheris

    atheris.Setup(argv, target)
    atheris.Fuzz()


class StoreCycle:
    """One store per fuzzing process for the import targets, made afresh every ``every`` runs
    (so it stays small and fast) in a temporary directory of its own (``tmp``, where a target
    may write its input files too). conceptwalk is imported at the first call, inside the
    target's instrumented import."""

    def __init__(self, prefix: str, every: int = 500) -> None:
        import tempfile

        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.every = every
        self._kb: object = None
        self._runs = 0

    def __call__(self) -> object:
        from conceptwalk.kb.store import KnowledgeBase

        self._runs += 1
        if self._kb is None or self._runs % self.every == 0:
            if self._kb is not None:
                self._kb.close()  # type: ignore[attr-defined]
            path = os.path.join(self.tmp, "kb.db")
            for ext in ("", "-wal", "-shm"):
                if os.path.exists(path + ext):
                    os.unlink(path + ext)
            self._kb = KnowledgeBase.create(path)
        return self._kb


def store_counts(kb: object) -> tuple[int, ...]:
    """The store's write counter and its node, edge and alias counts (an import is one
    transaction: a failed one leaves them as they were)."""
    c = kb.conn  # type: ignore[attr-defined]
    return (kb.version,) + tuple(  # type: ignore[attr-defined]
        c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("nodes", "edges", "aliases")
    )


def check_failed_import(kb: object, path: str, exc: BaseException, before: tuple[int, ...]) -> None:
    """A failed import names its file in its error and leaves the store as it was."""
    assert str(exc).startswith(path), (type(exc), exc)
    after = store_counts(kb)
    assert after == before, ("a failed import changed the store", before, after)


def check_accepted_import(kb: object) -> None:
    """The snapshot must build from whatever an import accepted."""
    if store_counts(kb)[1]:
        kb.graph()  # type: ignore[attr-defined]
