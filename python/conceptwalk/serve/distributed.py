"""Batches past one machine: run many queries on a Dask cluster.

The graph is shipped to every worker **once**, as numpy arrays (``client.scatter(...,
broadcast=True)``); each worker rebuilds its :class:`~conceptwalk.graph.LinkGraph` from them the
first time a task needs it and caches it for the following tasks. The queries are split into
partitions, one task per partition, and the results are gathered **in input order**. Every
result equals the in-process result for the same inputs (``elapsed_ms`` aside): the workers run
the same deterministic code on the same graph.

When the queries need the knowledge base itself -- free-text questions (full-text search picks
the seeds) and the concept-anchored wrap (aliases, search, embeddings) -- the store's SQLite file
is shipped the same way, once, as bytes (a consistent snapshot taken with SQLite's online
backup), and each worker opens its own read-only copy. Nothing needs a shared file system.

A shipment is **reused**: the client keeps the last :data:`KEEP_SHIPMENTS` shipments per client,
keyed by the source's identity and state (a knowledge base's uuid, version counters and
history; a graph's content), so a batch on an unchanged store ships nothing; its token is the
digest of what was shipped, so a worker that already holds the same content (shipped by another
client) rebuilds nothing. Each worker keeps the last :data:`KEEP_SHIPMENTS` shipments it used
(the oldest is closed and its temporary copy of the store removed once no task uses it) and
removes them all when it closes (:class:`ShipmentCleanup`, a worker plugin registered by
:func:`ship`).

Needs ``dask[distributed]`` (``pip install "conceptwalk[distributed]"``).

Examples
--------
On a real cluster, connect to its scheduler::

    from dask.distributed import Client
    from conceptwalk import Caller
    from conceptwalk.kb import KnowledgeBase
    from conceptwalk.serve import distributed as cwd

    client = Client("tcp://scheduler.example.org:8786")
    kb = KnowledgeBase.open("kb.db")
    contexts = cwd.graph_context_batch(client, kb, ["how is the cache invalidated?", ...],
                                       caller=Caller.with_scopes("team-a"), k=20)
    suggestions = cwd.link_suggest_batch(client, kb, caller=Caller.all_access(), k=10)
    paths = cwd.graph_path_batch(client, kb, [("concept/a", "concept/b"), ...],
                                 caller=Caller.all_access())
    wrapped = cwd.query_batch(client, kb, ["cache invalidation", ...], k=10,
                              caller=Caller.all_access(), concept_walk=True)

Ship once, query many times (the handle keeps the scattered data alive)::

    shipped = cwd.ship(client, kb)
    a = cwd.graph_context_batch(client, shipped, questions_a, caller=caller)
    b = cwd.graph_context_batch(client, shipped, questions_b, caller=caller)

The batch vocabulary is that of :mod:`conceptwalk.tools` (``graph_context_batch``,
``link_suggest_batch``, ``graph_path_batch``): the same names, the same query forms
(:func:`conceptwalk.tools.parse_context_query`), the same argument checks
(:mod:`conceptwalk.graph.checks`) and the same results as one-by-one calls; each worker runs the
in-process batch function on its partition. ``query_batch`` is the wrap's ``query`` per text.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import os
import shutil
import sqlite3
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import Caller, LinkGraph
from ..graph.checks import check_count, check_ppr_params, query_list
from ..tools.common import check_caller, default_concepts
from ..tools.context import check_rank, parse_context_query
from ..tools.suggest import check_method

try:  # the worker plugin's base (the module imports without distributed; the batches need it)
    from distributed.diagnostics.plugin import WorkerPlugin as _PluginBase
except ImportError:  # pragma: no cover - distributed not installed
    _PluginBase = object  # type: ignore[assignment,misc]

__all__ = [
    "Shipped",
    "ship",
    "graph_to_arrays",
    "graph_from_arrays",
    "graph_context_batch",
    "link_suggest_batch",
    "graph_path_batch",
    "query_batch",
    "worker_cache_info",
    "ShipmentCleanup",
    "KEEP_SHIPMENTS",
]

#: Shipments kept per client (reused while the store is unchanged) and per worker (the graphs
#: rebuilt and the store copies opened there); the oldest beyond the bound is released.
KEEP_SHIPMENTS = 2


# --------------------------------------------------------------------------- graph <-> arrays
def _encode(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Strings/None -> (int32 codes with -1 for None, names as a numpy str array)."""
    names: dict[str, int] = {}
    codes = np.empty(len(values), dtype=np.int32)
    for i, v in enumerate(values):
        if v is None:
            codes[i] = -1
        else:
            codes[i] = names.setdefault(v, len(names))
    return codes, np.array(list(names), dtype=str)


def _decode(codes: np.ndarray, names: np.ndarray) -> list[Any]:
    lut = names.tolist()
    return [None if c < 0 else lut[c] for c in codes.tolist()]


def graph_to_arrays(g: LinkGraph) -> dict[str, np.ndarray]:
    """Everything needed to rebuild ``g`` exactly, as a flat dict of numpy arrays (no Python
    objects, so it pickles compactly and ships fast).

    Parameters
    ----------
    g : LinkGraph
        The graph to encode.

    Returns
    -------
    dict of str to numpy.ndarray
        Ids, canonical edges, type/scope/lifecycle codes and names, title codes and the
        annotation columns; :func:`graph_from_arrays` turns it back into the graph.
    """
    if not isinstance(g, LinkGraph):
        raise InputError(f"expected a LinkGraph, got {type(g).__name__}")
    out: dict[str, np.ndarray] = {
        "ids": np.array(g.ids, dtype=str),
        "edge_src": np.asarray(g.edge_src, dtype=np.int32),
        "edge_dst": np.asarray(g.edge_dst, dtype=np.int32),
        "edge_type_codes": np.asarray(g.edge_type_codes, dtype=np.int32),
        "edge_type_names": np.array(list(g.edge_type_names), dtype=str),
        "node_type_codes": np.asarray(g.node_type_codes, dtype=np.int32),
        "node_type_names": np.array(list(g.node_type_names), dtype=str),
        "scope_ptr": np.asarray(g.scope_ptr, dtype=np.int64),
        "scope_codes": np.asarray(g.scope_codes, dtype=np.int32),
        "scope_names": np.array(list(g.scope_names), dtype=str),
        "lifecycle_codes": np.asarray(g.node_lifecycle_codes, dtype=np.int32),
        "lifecycle_names": np.array(list(g.node_lifecycle_names), dtype=str),
    }
    out["title_codes"], out["title_names"] = _encode(g.titles)
    for key, (values, names) in g.edge_annotations.items():
        out[f"ann:{key}:values"] = np.asarray(values)
        out[f"ann:{key}:names"] = np.array(list(names), dtype=str)
    return out


def graph_from_arrays(a: Mapping[str, np.ndarray]) -> LinkGraph:
    """Rebuild the graph :func:`graph_to_arrays` encoded (same ids, edges, attributes,
    annotations; hence the same answers).

    Parameters
    ----------
    a : mapping of str to numpy.ndarray
        What :func:`graph_to_arrays` returned.

    Returns
    -------
    LinkGraph
        A graph equal to the encoded one.

    Examples
    --------
    >>> from conceptwalk import LinkGraph
    >>> g = LinkGraph.from_edges([("a", "b", "RELATED_TO"), ("b", "c")])
    >>> h = graph_from_arrays(graph_to_arrays(g))
    >>> (h.ids, h.num_edges, h.shortest_path("a", "c"))
    (['a', 'b', 'c'], 2, ['a', 'b', 'c'])
    """
    ids = a["ids"].tolist()
    ptr = a["scope_ptr"].tolist()
    scope_names = a["scope_names"].tolist()
    sc = a["scope_codes"].tolist()
    scopes = [[scope_names[c] for c in sc[ptr[i] : ptr[i + 1]]] or None for i in range(len(ids))]
    etn = a["edge_type_names"]
    edge_types = etn[a["edge_type_codes"]].tolist() if a["edge_src"].shape[0] else None
    ann: dict[str, list[Any]] = {}
    for k in a:
        if k.startswith("ann:") and k.endswith(":values"):
            key = k[4:-7]
            vals = a[k]
            if key == "extraction_confidence":
                ann[key] = [None if math.isnan(v) else v for v in vals.tolist()]
            else:
                ann[key] = _decode(vals, a[f"ann:{key}:names"])
    return LinkGraph.from_arrays(
        ids,
        a["edge_src"],
        a["edge_dst"],
        edge_types,
        node_types=_decode(a["node_type_codes"], a["node_type_names"]),
        titles=_decode(a["title_codes"], a["title_names"]),
        scopes=scopes,
        lifecycle=_decode(a["lifecycle_codes"], a["lifecycle_names"]),
        edge_annotations=ann,
    )


def _kb_bytes(kb: Any) -> bytes:
    """A consistent snapshot of the store's SQLite file, as bytes (online backup API)."""
    with tempfile.TemporaryDirectory(prefix="cw-ship-") as d:
        path = os.path.join(d, "kb.db")
        dst = sqlite3.connect(path)
        try:
            kb.backup(dst)
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            dst.close()
        with open(path, "rb") as fh:
            return fh.read()


# --------------------------------------------------------------------------- shipping
@dataclass
class Shipped:
    """What :func:`ship` scattered: futures of the graph arrays (and of the store's bytes when
    it was shipped), replicated on every worker, and the token the workers cache under.

    Pass it as the ``source`` of the ``run_*`` functions to reuse one shipment.

    Attributes
    ----------
    token : str
        A unique id of this shipment (the key of the workers' caches).
    graph : distributed.Future
        The :func:`graph_to_arrays` dict, on every worker.
    kb : distributed.Future or None
        The store's SQLite snapshot as bytes, when it was shipped.
    num_nodes : int
        Nodes of the shipped graph.
    ids : list of str
        Its node ids, ascending.
    source_graph : LinkGraph or None
        The shipped graph itself, in this process.
    """

    token: str
    graph: Any
    kb: Any = None
    num_nodes: int = 0
    ids: list[str] = field(default_factory=list, repr=False)
    #: The graph that was shipped (this process's object), for what the client computes
    #: before sending tasks (the default ``concepts`` of :func:`link_suggest_batch`).
    source_graph: LinkGraph | None = field(default=None, repr=False, compare=False)


def ship(client: Any, source: Any, *, with_kb: bool | None = None) -> Shipped:
    """Send ``source`` (a LinkGraph or a KnowledgeBase) to every worker of ``client`` once.

    The client keeps the last :data:`KEEP_SHIPMENTS` shipments: shipping the same graph object,
    or a store in the same state (its uuid, version counters and history), again returns the
    kept :class:`Shipped` and sends nothing; after a write the new state is shipped and the
    oldest shipment released. The first call on a client registers :class:`ShipmentCleanup`.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    source : LinkGraph, KnowledgeBase or Shipped
        What to ship (a Shipped is returned as it is).
    with_kb : bool, optional
        Also ship the store's SQLite snapshot, which free-text questions and
        :func:`query_batch` need (default: True for a knowledge base; a LinkGraph has none).

    Returns
    -------
    Shipped
        The handle to pass as ``source`` to the ``*_batch`` functions.

    Raises
    ------
    InputError
        ``source`` is none of the three, or ``with_kb=True`` with a LinkGraph.
    """
    if isinstance(source, Shipped):
        return source
    if isinstance(source, LinkGraph):
        g, kb = source, None
        if with_kb:
            raise InputError("with_kb=True needs a knowledge base, got a LinkGraph")
    elif hasattr(source, "graph") and callable(source.graph) and hasattr(source, "conn"):
        kb = source
        g = kb.graph()
        if with_kb is None:
            with_kb = True
    else:
        raise InputError(f"source must be a LinkGraph, a KnowledgeBase or a Shipped, got {type(source).__name__}")
    want_kb = bool(with_kb and kb is not None)
    key = _source_key(kb, g)
    kept = _client_shipments(client)
    with _CLIENT_LOCK:
        for k in ((key, True), (key, False)) if not want_kb else ((key, True),):
            hit = kept.get(k) if key is not None else None
            if hit is None or (kb is None and hit.source_graph is not g):
                continue
            if _alive(hit):
                kept.move_to_end(k)
                return hit
            del kept[k]  # its data is lost (every worker holding it died): ship again
    _register_cleanup(client)
    arrays = graph_to_arrays(g)
    digest = hashlib.blake2b(digest_size=16)
    _digest_arrays(digest, arrays)
    sqlite_bytes = _kb_bytes(kb) if want_kb else None
    if sqlite_bytes is not None:
        digest.update(b"sqlite")
        digest.update(sqlite_bytes)
        if kb is not None and _source_key(kb, kb.graph()) != key:  # written meanwhile: this copy is not the keyed state
            key = None
    # The digest of what is shipped: the same content has the same token on every worker,
    # whichever client shipped it, so a worker holding it already rebuilds nothing.
    token = digest.hexdigest()
    arrays["token"] = np.array(token)
    # A list of one item, so the dict travels as one object (scattering a dict would scatter
    # each value separately).
    fut_g = client.scatter([arrays], broadcast=True, hash=False)[0]
    fut_kb = None
    if sqlite_bytes is not None:
        fut_kb = client.scatter([{"token": token, "sqlite": sqlite_bytes}], broadcast=True, hash=False)[0]
    shipped = Shipped(token, fut_g, fut_kb, g.num_nodes, list(g.ids), source_graph=g)
    if key is not None:
        with _CLIENT_LOCK:
            kept[(key, want_kb)] = shipped
            while len(kept) > KEEP_SHIPMENTS:  # releasing the futures frees the workers' memory
                kept.popitem(last=False)
    return shipped


_CLIENT_LOCK = threading.Lock()
_CLEANUP_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()


def _client_shipments(client: Any) -> OrderedDict[Any, Shipped]:
    """The client's kept shipments, (source key, with the store) -> Shipped, oldest first: an
    attribute of the client, so they go with it (a module-level map keyed by the client would
    keep it alive through its own futures)."""
    with _CLIENT_LOCK:
        kept: OrderedDict[Any, Shipped] | None = getattr(client, "conceptwalk_shipments", None)
        if kept is None:
            kept = OrderedDict()
            client.conceptwalk_shipments = kept
        return kept


def _alive(s: Shipped) -> bool:
    """The shipment's data still held by the cluster (its futures not lost or released)."""
    return all(getattr(f, "status", "finished") == "finished" for f in (s.graph, s.kb) if f is not None)


def _source_key(kb: Any, g: LinkGraph) -> Any:
    """What identifies the shipped content in this process: a store's uuid, version counters and
    history (one committed state of one store), or the graph object itself (immutable)."""
    if kb is None:
        return ("graph", id(g))  # the kept Shipped holds g, so the id is not reused meanwhile
    try:
        st = kb.state()
        row = kb.conn.execute("SELECT value FROM meta WHERE key = 'uuid'").fetchone()
    except Exception:  # noqa: BLE001 - a store that cannot say: ship afresh every time
        return None
    return (
        "kb",
        os.path.abspath(str(kb.path)),
        None if row is None else str(row[0]),
        st.version,
        st.graph_version,
        st.history,
    )


def _digest_arrays(h: Any, arrays: Mapping[str, np.ndarray]) -> None:
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())


def _register_cleanup(client: Any) -> None:
    """Register :class:`ShipmentCleanup` on the client's cluster once (idempotent by name)."""
    with _CLIENT_LOCK:
        if client in _CLEANUP_REGISTERED:
            return
    if _PluginBase is not object:
        client.register_plugin(ShipmentCleanup(), name="conceptwalk-shipments")
    with _CLIENT_LOCK:
        _CLEANUP_REGISTERED.add(client)


# --------------------------------------------------------------------------- worker side
_LOCAL = threading.Lock()
_BUILDS = {"graph": 0, "kb": 0}


class _Entry:
    """One shipment on one worker: its rebuilt graph, its opened store copy (and the directory
    holding it), the wrap retrievers made on it, and how many tasks use it now."""

    __slots__ = ("token", "graph", "kb", "dir", "wraps", "refs", "evicted")

    def __init__(self, token: str) -> None:
        self.token = token
        self.graph: LinkGraph | None = None
        self.kb: Any = None
        self.dir: str | None = None
        self.wraps: dict[str, Any] = {}
        self.refs = 0
        self.evicted = False

    def close(self) -> None:
        """Close the store copy and remove its temporary directory (idempotent)."""
        kb, d = self.kb, self.dir
        self.kb = self.dir = None
        self.graph = None
        self.wraps.clear()
        if kb is not None:
            try:
                kb.close()
            except Exception:  # noqa: BLE001 - removing the copy matters more than closing it
                pass
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)


class _Shipments:
    """A worker's shipments, most recently used last, at most :data:`KEEP_SHIPMENTS`."""

    def __init__(self) -> None:
        self.entries: OrderedDict[str, _Entry] = OrderedDict()

    def acquire(self, token: str) -> _Entry:
        with _LOCAL:
            e = self.entries.get(token)
            if e is None:
                e = self.entries[token] = _Entry(token)
            self.entries.move_to_end(token)
            e.refs += 1
            while len(self.entries) > KEEP_SHIPMENTS:
                _, old = self.entries.popitem(last=False)
                old.evicted = True
                if old.refs == 0:
                    old.close()
            return e

    def release(self, e: _Entry) -> None:
        with _LOCAL:
            e.refs -= 1
            if e.evicted and e.refs == 0:
                e.close()

    def close(self) -> None:
        """Close every shipment (the worker is closing: no task runs any more)."""
        with _LOCAL:
            entries = list(self.entries.values())
            self.entries.clear()
        for e in entries:
            e.close()

    def tokens(self) -> list[str]:
        with _LOCAL:
            return sorted(t for t, e in self.entries.items() if e.graph is not None)


_LOCAL_CACHE = _Shipments()  # used when not running inside a Dask worker
atexit.register(_LOCAL_CACHE.close)


def _cache() -> _Shipments:
    try:
        from distributed import get_worker

        w = get_worker()
    except (ImportError, ValueError):
        return _LOCAL_CACHE
    return _worker_shipments(w)


def _worker_shipments(w: Any) -> _Shipments:
    with _LOCAL:
        c: _Shipments | None = getattr(w, "conceptwalk_shipments", None)
        if c is None:
            c = _Shipments()
            w.conceptwalk_shipments = c
        return c


class ShipmentCleanup(_PluginBase):
    """The Dask worker plugin :func:`ship` registers (once per client, as
    ``"conceptwalk-shipments"``): when a worker closes, its shipments are closed and their
    temporary store copies (``cw-worker-kb-*`` in the temporary directory) removed.

    Examples
    --------
    >>> p = ShipmentCleanup()
    >>> p.idempotent
    True
    """

    #: Registered once per cluster, whichever client asks again.
    idempotent = True

    def teardown(self, worker: Any) -> None:
        """Close the worker's shipments and remove their files.

        Parameters
        ----------
        worker : distributed.Worker
            The closing worker.
        """
        c: _Shipments | None = getattr(worker, "conceptwalk_shipments", None)
        if c is not None:
            c.close()


@contextmanager
def _shipment(
    arrays: Mapping[str, np.ndarray], kbp: Mapping[str, Any] | None = None
) -> Iterator[tuple[_Entry, LinkGraph]]:
    """This task's shipment, its graph rebuilt (and its store opened when ``kbp`` is given) the
    first time, kept from eviction while the task runs."""
    from ..kb import KnowledgeBase

    cache = _cache()
    e = cache.acquire(str(arrays["token"]))
    try:
        with _LOCAL:
            if e.graph is None:
                e.graph = graph_from_arrays(arrays)
                _BUILDS["graph"] += 1
            if kbp is not None and e.kb is None:
                d = tempfile.mkdtemp(prefix="cw-worker-kb-")
                e.dir = d
                path = os.path.join(d, "kb.db")
                with open(path, "wb") as fh:
                    fh.write(kbp["sqlite"])
                e.kb = KnowledgeBase.open(path, create=False)
                _BUILDS["kb"] += 1
            g = e.graph
        yield e, g
    finally:
        cache.release(e)


def worker_cache_info(dask_worker: Any = None) -> dict[str, Any]:
    """What a worker holds: ``client.run(worker_cache_info)`` gives, per worker, the tokens of
    the shipments whose graph it holds (at most :data:`KEEP_SHIPMENTS`), its temporary store
    copies and the process-wide rebuild counters.

    Parameters
    ----------
    dask_worker : distributed.Worker, optional
        Filled in by ``client.run``; None reads this process's cache.

    Returns
    -------
    dict
        ``{"graph_builds": int, "kb_builds": int, "tokens": sorted shipment tokens,
        "kb_dirs": sorted temporary directories of the opened store copies}``.
    """
    cache = _cache() if dask_worker is None else _worker_shipments(dask_worker)
    with _LOCAL:
        dirs = sorted(e.dir for e in cache.entries.values() if e.dir is not None)
    return {
        "graph_builds": _BUILDS["graph"],
        "kb_builds": _BUILDS["kb"],
        "tokens": cache.tokens(),
        "kb_dirs": dirs,
    }


def _context_chunk(
    arrays: Mapping[str, np.ndarray],
    kbp: Mapping[str, Any] | None,
    items: list[tuple[str | None, list[str]]],
    kw: dict[str, Any],
) -> list[Any]:
    from ..tools import graph_context_batch

    with _shipment(arrays, kbp) as (e, g):
        if kbp is not None:
            # the store copy is the source: its own search over what the caller sees (exact, not
            # filtered), the ids and aliases a question names and its stopwords, as in-process
            return graph_context_batch(e.kb, items, threads=1, **kw)
        return graph_context_batch(g, items, threads=1, **kw)


def _suggest_chunk(arrays: Mapping[str, np.ndarray], concepts: list[str], kw: dict[str, Any]) -> list[Any]:
    from ..tools import link_suggest_batch

    with _shipment(arrays) as (_, g):
        return link_suggest_batch(g, concepts, threads=1, **kw)


def _path_chunk(arrays: Mapping[str, np.ndarray], pairs: list[tuple[str, str]], kw: dict[str, Any]) -> list[Any]:
    from ..tools import graph_path_batch

    with _shipment(arrays) as (_, g):
        return graph_path_batch(g, pairs, threads=1, **kw)


def _wrap_chunk(
    arrays: Mapping[str, np.ndarray],
    kbp: Mapping[str, Any],
    texts: list[str],
    k: int,
    kw: dict[str, Any],
    retriever_kw: dict[str, Any],
) -> list[Any]:
    from ..wrap import ConceptAnchoredRetriever, builtin_flat_search

    with _shipment(arrays, kbp) as (e, _):
        key = repr(sorted(retriever_kw.items()))
        with _LOCAL:
            r = e.wraps.get(key)
            if r is None:
                r = e.wraps[key] = ConceptAnchoredRetriever(builtin_flat_search(e.kb), e.kb, **retriever_kw)
        return [r.query(t, k, **kw) for t in texts]


# --------------------------------------------------------------------------- client side
def _partitions(n: int, client: Any, partitions: int | None) -> list[tuple[int, int]]:
    if partitions is None:
        try:
            workers = max(1, len(client.scheduler_info().get("workers", {})))
        except Exception:  # noqa: BLE001 - any scheduler without the info: one per worker guess
            workers = 1
        partitions = 4 * workers
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise InputError(f"partitions must be a positive integer or None, got {partitions!r}")
    parts = min(partitions, max(n, 1))
    bounds = np.linspace(0, n, parts + 1).astype(int).tolist()
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _run(
    client: Any, fn: Any, items: list[Any], partitions: int | None, head: tuple[Any, ...], *tail: Any
) -> list[Any]:
    """One task per partition: ``fn(*head, items[a:b], *tail)``; results flattened in order."""
    futs = [
        client.submit(fn, *head, items[a:b], *tail, pure=False) for a, b in _partitions(len(items), client, partitions)
    ]
    out: list[Any] = []
    for chunk in client.gather(futs):
        out.extend(chunk)
    return out


def graph_context_batch(
    client: Any,
    source: Any,
    queries: Iterable[Any],
    *,
    caller: Caller,
    k: int = 20,
    partitions: int | None = None,
    **kwargs: Any,
) -> list[Any]:
    """:func:`conceptwalk.tools.graph_context_batch` on the cluster.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    source : LinkGraph, KnowledgeBase or Shipped
        Free-text questions need a knowledge base (its full-text search picks the seeds).
    queries : iterable
        The query forms of :func:`conceptwalk.tools.parse_context_query`: a question string, a
        mapping ``{"question": str | None, "concepts": [ids]}`` or a ``(question, concepts)``
        tuple.
    caller : Caller
        Whose visibility applies.
    k : int
        Results per question.
    partitions : int, optional
        How many tasks (default: 4 per worker).
    **kwargs
        Passed to ``graph_context_batch`` (``restart``, ``eps``, ``node_types``, ``n_hits``,
        ``rank``, ``max_hops``).

    Returns
    -------
    list of ContextResult
        In input order, each ``to_dict()`` equal to the in-process one-by-one call's.

    Examples
    --------
    With a ``distributed.Client``::

        contexts = graph_context_batch(client, kb, ["what is a?", {"concepts": ["a"]}],
                                       caller=Caller.all_access(), k=5)
    """
    check_caller(caller)
    k = check_count(k)
    if "restart" in kwargs or "eps" in kwargs:
        check_ppr_params(kwargs.get("restart", 0.25), kwargs.get("eps", 1e-4))
    if "n_hits" in kwargs:
        check_count(kwargs["n_hits"], "n_hits")
    if "rank" in kwargs or "max_hops" in kwargs:  # checked before any task is sent
        check_rank(kwargs.get("rank", "ppr"), kwargs.get("max_hops", 2))
    if "threads" in kwargs or "search" in kwargs:
        raise InputError(
            "graph_context_batch on a cluster takes no threads= or search= (workers run "
            "one thread each and search the shipped knowledge base)"
        )
    items = [parse_context_query(q, i) for i, q in enumerate(query_list(queries, "queries"))]
    shipped = ship(client, source)
    if shipped.kb is None and any(q is not None and q.strip() for q, _ in items):
        raise InputError(
            "free-text questions need a knowledge base source (its full-text search "
            "picks the seeds); pass concepts= in each question to use a bare graph"
        )
    kw = dict(kwargs, caller=caller, k=k)
    return _run(client, _context_chunk, items, partitions, (shipped.graph, shipped.kb), kw)


def link_suggest_batch(
    client: Any,
    source: Any,
    concepts: Iterable[str] | None = None,
    *,
    caller: Caller,
    node_types: Iterable[str] | None = ("CONCEPT",),
    k: int = 10,
    min_shared: int | None = None,
    partitions: int | None = None,
    method: str = "ra",
    restart: float | None = None,
    eps: float | None = None,
) -> list[Any]:
    """:func:`conceptwalk.tools.link_suggest_batch` on the cluster.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    source : LinkGraph, KnowledgeBase or Shipped
        The graph.
    concepts : iterable of str, optional
        The concepts to suggest links for; default: every node visible to ``caller`` whose type
        is in ``node_types``, ascending (as :func:`conceptwalk.tools.link_suggest_batch`).
    caller : Caller
        Whose visibility applies.
    node_types : iterable of str or None
        The node types of the default ``concepts`` (``None`` = all types).
    k : int
        Suggestions per concept.
    min_shared : int, optional
        ``method="ra"`` only: shared neighbours a candidate needs (>= 1; default 2).
    partitions : int, optional
        How many tasks (default: 4 per worker).
    method : {"ra", "ppr"}
        Resource allocation (default) or rooted PageRank, as for
        :func:`conceptwalk.link_suggest`.
    restart, eps : float, optional
        ``method="ppr"`` only: the push's parameters (defaults 0.25, 1e-4).

    Returns
    -------
    list of SuggestResult
        In the order of ``concepts``, each ``to_dict()`` equal to the in-process call's.

    Examples
    --------
    With a ``distributed.Client``::

        every_concept = link_suggest_batch(client, kb, caller=Caller.all_access(), k=10)
    """
    check_caller(caller)
    k = check_count(k)
    method, min_shared, restart, eps = check_method(method, min_shared, restart, eps)
    shipped = ship(client, source, with_kb=False) if not isinstance(source, Shipped) else source
    if concepts is None:  # the in-process batch's default (tools.common.default_concepts)
        if shipped.source_graph is None:
            raise InputError("concepts= is required with a Shipped source made elsewhere (it holds no graph here)")
        todo = default_concepts(shipped.source_graph, caller, node_types)
    else:
        todo = query_list(concepts, "concepts")
    kw: dict[str, Any] = {"caller": caller, "k": k, "method": method}
    if method == "ra":
        kw["min_shared"] = min_shared
    else:
        kw["restart"], kw["eps"] = restart, eps
    return _run(client, _suggest_chunk, todo, partitions, (shipped.graph,), kw)


def graph_path_batch(
    client: Any, source: Any, pairs: Iterable[Sequence[str]], *, caller: Caller, partitions: int | None = None
) -> list[Any]:
    """:func:`conceptwalk.tools.graph_path_batch` on the cluster.

    Parameters
    ----------
    client : distributed.Client
    source : LinkGraph, KnowledgeBase or Shipped
    pairs : iterable of (a, b)
    caller : Caller
    partitions : int, optional

    Returns
    -------
    list of PathResult
        In input order, each ``to_dict()`` equal to the in-process call's.

    Examples
    --------
    With a ``distributed.Client``::

        paths = graph_path_batch(client, kb, [("a", "c")], caller=Caller.all_access())
    """
    check_caller(caller)
    todo = query_list(pairs, "pairs")
    for i, p in enumerate(todo):
        if isinstance(p, str) or not isinstance(p, Sequence) or len(p) != 2:
            raise InputError(f"pairs[{i}]: expected an (a, b) pair of ids, got {p!r}")
    shipped = ship(client, source, with_kb=False) if not isinstance(source, Shipped) else source
    return _run(client, _path_chunk, [tuple(p) for p in todo], partitions, (shipped.graph,), {"caller": caller})


def query_batch(
    client: Any,
    source: Any,
    texts: Iterable[str],
    k: int,
    *,
    caller: Caller,
    concept_walk: bool = True,
    partitions: int | None = None,
    **retriever_kwargs: Any,
) -> list[list[dict[str, Any]]]:
    """The concept-anchored wrap (``ConceptAnchoredRetriever(builtin_flat_search(kb), kb)
    .query(text, k, concept_walk=..., caller=...)``) for every text, on the cluster.

    Parameters
    ----------
    client : distributed.Client
        The cluster's client.
    source : KnowledgeBase or Shipped
        A knowledge base (the wrap reads aliases, search and embeddings from it).
    texts : iterable of str
        The queries.
    k : int
        Flat results per query.
    caller : Caller
        Whose visibility applies.
    concept_walk : bool
        Run the walk (``False`` gives the flat results).
    partitions : int, optional
        How many tasks (default: 4 per worker).
    **retriever_kwargs
        Passed to the retriever (``config=WalkConfig(...)``, ``expand_edge_types``,
        ``admit_edge_types``); an event sink is not shipped (events stay with the caller's
        process), so ``event_sink=`` is refused.

    Returns
    -------
    list of result lists
        In input order, equal to the in-process ones.

    Examples
    --------
    With a ``distributed.Client``::

        wrapped = query_batch(client, kb, ["cache invalidation"], 10, caller=Caller.all_access())
    """
    todo = query_list(texts, "texts")
    for i, t in enumerate(todo):
        if not isinstance(t, str):
            raise InputError(f"texts[{i}] must be a string, got {type(t).__name__}")
    check_caller(caller)
    k = check_count(k)
    if "event_sink" in retriever_kwargs:
        raise InputError("query_batch does not ship event sinks to workers")
    shipped = ship(client, source, with_kb=True) if not isinstance(source, Shipped) else source
    if shipped.kb is None:
        raise InputError(
            "query_batch needs a knowledge base source (the wrap reads aliases, search and embeddings from it)"
        )
    kw = {"concept_walk": concept_walk, "caller": caller}
    return _run(client, _wrap_chunk, todo, partitions, (shipped.graph, shipped.kb), k, kw, retriever_kwargs)
