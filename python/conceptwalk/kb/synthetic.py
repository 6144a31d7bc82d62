"""A deterministic synthetic knowledge base for demos, tests and benchmarks.

:func:`generate` builds, from a seed, a KB of ``n_concepts`` CONCEPT nodes with attached MEMORY,
DECISION and FILE nodes (about 1.5 per concept), typed directed edges, tenant scopes, partial
provenance annotations and fragmented aliases. Everything is drawn from one
``numpy.random.Generator(PCG64(seed))`` in a fixed order and vectorised with numpy, so the same
``(n_concepts, seed)`` gives bit-identical columns on every run, and a million concepts take about
a minute on one core.

Shape of the graph
------------------
* **Communities.** About ``n_concepts / 50`` communities with log-normal sizes. Each has a unique
  topic built from the vocabulary (``"vector index"``, ``"incremental billing ledger"``); its
  concepts are the topic itself (the community root and hub) and the topic plus one or two facets
  (``"vector index compaction"``). Concept ids are slugs: ``"concept/vector_index_compaction"``.
* **Edges** (``src -> dst``): ``PARENT_CONCEPT`` child -> parent (a forest per community, biased
  towards the root); ``RELATED_TO`` concept -> concept (85% inside the community, endpoints
  Zipf-weighted so hubs emerge; 15% across communities to globally popular concepts);
  ``IMPLEMENTED_BY`` concept -> FILE; ``EXPLAINED_BY`` concept -> DECISION; ``ATTACHED_TO``
  MEMORY -> its concept; ``TAGGED_CONCEPT`` MEMORY/DECISION -> concepts; ``MENTIONS``
  MEMORY/DECISION -> a file of its concept. No self-loops and no duplicate ``(src, dst, type)``.
  Mean undirected degree is about 7 with a heavy tail (hubs with hundreds to thousands of
  neighbours at scale).
* **Text.** Titles and bodies reuse the concept title, so full-text search for
  ``"vector index compaction"`` hits the concept, its memories and decisions, and its files
  (``"src/vector_index/compaction.py"``).
* **Scopes.** Four tenants ``"tenant-a"`` .. ``"tenant-d"``; about 60% of nodes are public
  (``None``), the rest carry one (rarely two) tenants; attached items mostly share their
  concept's scopes.
* **Annotations.** ``authority`` (70% of edges), ``fidelity`` (40%), ``extraction_method`` with
  ``extraction_confidence`` (60%) and ``lifecycle`` (50%), present independently, so every
  combination of present/absent axes occurs. Nodes have a lifecycle on about 70%.
* **Aliases.** About 5% of concepts get 1-3 unique alias strings (``"Vector-Index Compaction"``,
  ``"VI compaction"``, ``"VectorIndexCompaction"``, ``"vector_index_compaction"``,
  ``"concept/vector_index_compaction_v1"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .store import NULL_CONFIDENCE, NULL_TEXT

#: None as a 0-d object array: ``np.equal(column, _NONE)`` finds the Nones of an object column.
_NONE = np.array(None, dtype=object)

__all__ = [
    "SyntheticKB",
    "generate",
    "NODE_TYPES",
    "EDGE_TYPES",
    "TENANTS",
    "AUTHORITY_VALUES",
    "FIDELITY_VALUES",
    "EXTRACTION_METHODS",
    "LIFECYCLE_VALUES",
]

# --------------------------------------------------------------------------- vocabulary
# Four disjoint word lists make every concept title unique and parseable:
# [qualifier] domain object [facet [facet]].
QUALIFIERS: tuple[str, ...] = (
    "distributed",
    "incremental",
    "legacy",
    "async",
    "batch",
    "streaming",
    "cached",
    "sharded",
    "replicated",
    "federated",
    "encrypted",
    "versioned",
    "tiered",
    "adaptive",
    "hybrid",
    "realtime",
    "offline",
    "multitenant",
    "serverless",
    "embedded",
    "columnar",
    "elastic",
    "durable",
    "ephemeral",
    "lazy",
    "parallel",
    "secure",
    "regional",
    "global",
    "internal",
    "external",
    "primary",
    "secondary",
    "experimental",
    "managed",
    "portable",
    "compressed",
    "hierarchical",
    "probabilistic",
    "approximate",
)
DOMAINS: tuple[str, ...] = (
    "vector",
    "graph",
    "query",
    "cache",
    "auth",
    "billing",
    "search",
    "storage",
    "network",
    "memory",
    "schema",
    "event",
    "stream",
    "token",
    "session",
    "user",
    "model",
    "embedding",
    "payment",
    "notification",
    "config",
    "deploy",
    "build",
    "release",
    "metrics",
    "logging",
    "tracing",
    "alert",
    "audit",
    "permission",
    "tenant",
    "document",
    "media",
    "image",
    "text",
    "chat",
    "agent",
    "prompt",
    "workflow",
    "job",
    "task",
    "queue",
    "message",
    "api",
    "webhook",
    "plugin",
    "feature",
    "experiment",
    "ranking",
    "recommendation",
    "inventory",
    "order",
    "catalog",
    "profile",
    "identity",
    "secret",
    "backup",
    "snapshot",
    "ingest",
    "export",
)
OBJECTS: tuple[str, ...] = (
    "index",
    "planner",
    "store",
    "pipeline",
    "router",
    "scheduler",
    "parser",
    "compiler",
    "gateway",
    "registry",
    "resolver",
    "broker",
    "worker",
    "controller",
    "manager",
    "service",
    "client",
    "server",
    "adapter",
    "bridge",
    "loader",
    "writer",
    "reader",
    "encoder",
    "decoder",
    "tokenizer",
    "allocator",
    "executor",
    "optimizer",
    "validator",
    "serializer",
    "dispatcher",
    "monitor",
    "tracker",
    "collector",
    "aggregator",
    "buffer",
    "pool",
    "ledger",
    "journal",
    "directory",
    "table",
    "cluster",
    "engine",
    "runtime",
    "kernel",
    "daemon",
    "proxy",
    "balancer",
    "limiter",
    "watcher",
    "emitter",
    "listener",
    "handler",
    "builder",
    "renderer",
    "sampler",
    "classifier",
    "mapper",
    "ranker",
)
FACETS: tuple[str, ...] = (
    "compaction",
    "sharding",
    "replication",
    "eviction",
    "rebalancing",
    "validation",
    "migration",
    "retries",
    "backpressure",
    "throttling",
    "batching",
    "prefetching",
    "caching",
    "invalidation",
    "checkpointing",
    "recovery",
    "failover",
    "consistency",
    "durability",
    "latency",
    "throughput",
    "partitioning",
    "deduplication",
    "normalization",
    "serialization",
    "compression",
    "encryption",
    "rotation",
    "expiration",
    "quotas",
    "pagination",
    "sorting",
    "filtering",
    "scoring",
    "tuning",
    "warmup",
    "bootstrapping",
    "shutdown",
    "startup",
    "healthchecks",
    "heartbeats",
    "leases",
    "locking",
    "fencing",
    "versioning",
    "rollback",
    "rollout",
    "canary",
    "sampling",
    "aggregation",
    "indexing",
    "tokenization",
    "chunking",
    "hashing",
    "routing",
    "discovery",
    "registration",
    "authorization",
    "provisioning",
    "teardown",
    "cleanup",
    "scaling",
    "autoscaling",
    "monitoring",
    "alerting",
    "profiling",
    "benchmarking",
    "testing",
    "fuzzing",
    "linting",
    "packaging",
    "bundling",
    "signing",
    "verification",
    "auditing",
    "redaction",
    "masking",
    "anonymization",
    "retention",
    "archival",
    "restore",
    "mirroring",
    "syncing",
    "merging",
    "splitting",
    "ordering",
    "scheduling",
    "prioritization",
    "fairness",
    "isolation",
    "sandboxing",
    "limits",
    "budgets",
    "accounting",
    "metering",
    "pricing",
    "invoicing",
    "refunds",
    "reconciliation",
    "settlement",
    "onboarding",
    "offboarding",
    "permissions",
    "roles",
    "policies",
    "secrets",
    "certificates",
    "handshake",
    "negotiation",
    "keepalive",
    "multiplexing",
    "pipelining",
    "readahead",
    "buffering",
    "flushing",
    "spilling",
    "pruning",
    "quantization",
    "distillation",
    "finetuning",
    "evaluation",
    "calibration",
    "drift",
    "feedback",
    "labeling",
    "annotation",
    "curation",
    "enrichment",
    "linking",
    "resolution",
    "disambiguation",
    "summarization",
    "translation",
    "rendering",
    "layout",
    "theming",
    "localization",
    "accessibility",
    "typeahead",
    "autocomplete",
    "highlighting",
    "snippets",
    "facets",
    "suggestions",
    "signals",
    "freshness",
    "recall",
    "precision",
)
SYMPTOMS: tuple[str, ...] = (
    "high tail latency",
    "steady memory growth",
    "stale reads",
    "duplicate writes",
    "timeouts under load",
    "lock contention",
    "slow startup",
    "dropped messages",
    "inconsistent results",
    "cpu spikes",
    "disk pressure",
    "connection leaks",
    "flaky tests",
    "out of order events",
    "cold cache misses",
    "quota errors",
    "permission denials",
    "schema drift",
    "retry storms",
    "partial failures",
)
APPROACHES: tuple[str, ...] = (
    "adopt a write-ahead log",
    "move to bounded queues",
    "add a circuit breaker",
    "switch to copy-on-write snapshots",
    "use consistent hashing",
    "introduce idempotency keys",
    "batch small writes",
    "precompute summaries",
    "split the hot partition",
    "add a read-through cache",
    "pin dependency versions",
    "use exponential backoff",
    "add structured logging",
    "enforce schema validation",
    "run compaction off-peak",
    "shard by tenant",
    "keep a tombstone list",
    "stream results incrementally",
    "gate it behind a feature flag",
    "deprecate the old endpoint",
)
REASONS: tuple[str, ...] = (
    "it bounds worst-case latency",
    "it keeps tenants isolated",
    "it is simpler to operate",
    "it survives node restarts",
    "it halves storage cost",
    "it removes a single point of failure",
    "it makes retries safe",
    "it keeps results reproducible",
    "the old path could not scale",
    "audits require a full trail",
    "it reduces cross-region traffic",
    "on-call load was too high",
    "it matches the upstream contract",
    "benchmarks showed a clear win",
    "it unblocks the migration",
)
MEMORY_TEMPLATES: tuple[str, ...] = (
    "Note on {t}",
    "Incident: {t} with {s}",
    "Debugging {t}",
    "Question about {t}",
    "Meeting notes: {t}",
    "How {t} works",
    "Runbook for {t}",
    "Lessons from {t}",
)
FUNCTION_VERBS: tuple[str, ...] = (
    "get",
    "build",
    "apply",
    "merge",
    "split",
    "flush",
    "load",
    "save",
    "check",
    "compute",
    "update",
    "render",
    "parse",
    "emit",
    "schedule",
    "open",
    "close",
    "reset",
    "plan",
    "run",
)
FILE_SUFFIXES: tuple[str, ...] = (
    "",
    "_test",
    "_utils",
    "_config",
    "_types",
    "_cli",
    "_metrics",
    "_errors",
    "_io",
    "_bench",
)
FILE_EXTENSIONS: tuple[str, ...] = ("py", "py", "py", "ts", "go", "rs", "md")

NODE_TYPES: tuple[str, ...] = ("CONCEPT", "MEMORY", "DECISION", "FILE")
EDGE_TYPES: tuple[str, ...] = (
    "RELATED_TO",
    "PARENT_CONCEPT",
    "IMPLEMENTED_BY",
    "EXPLAINED_BY",
    "ATTACHED_TO",
    "TAGGED_CONCEPT",
    "MENTIONS",
)
TENANTS: tuple[str, ...] = ("tenant-a", "tenant-b", "tenant-c", "tenant-d")
AUTHORITY_VALUES: tuple[str, ...] = ("canonical", "reviewed", "community")
FIDELITY_VALUES: tuple[str, ...] = ("verbatim", "summary", "inferred")
EXTRACTION_METHODS: tuple[str, ...] = ("TAGGED_CONCEPT", "LLM_EXTRACTED", "MANUAL")
LIFECYCLE_VALUES: tuple[str, ...] = ("active", "deprecated", "draft")

_REL, _PAR, _IMP, _EXP, _ATT, _TAG, _MEN = range(7)

# Per edge type (rows in EDGE_TYPES order), the probability of each value when the axis is present.
_AUTHORITY_P = np.array(
    [
        [0.20, 0.40, 0.40],
        [0.60, 0.30, 0.10],
        [0.50, 0.40, 0.10],
        [0.50, 0.40, 0.10],
        [0.10, 0.30, 0.60],
        [0.10, 0.40, 0.50],
        [0.05, 0.25, 0.70],
    ]
)
_FIDELITY_P = np.array(
    [
        [0.10, 0.30, 0.60],
        [0.30, 0.50, 0.20],
        [0.70, 0.20, 0.10],
        [0.40, 0.50, 0.10],
        [0.60, 0.30, 0.10],
        [0.50, 0.30, 0.20],
        [0.80, 0.15, 0.05],
    ]
)
_METHOD_P = np.array(
    [
        [0.00, 0.80, 0.20],
        [0.00, 0.30, 0.70],
        [0.00, 0.60, 0.40],
        [0.00, 0.50, 0.50],
        [0.30, 0.30, 0.40],
        [0.90, 0.10, 0.00],
        [0.00, 0.90, 0.10],
    ]
)
_LIFECYCLE_P = np.array([0.82, 0.10, 0.08])
#: Fraction of edges on which each annotation axis is present (independently).
ANNOTATION_PRESENCE: dict[str, float] = {
    "authority": 0.70,
    "fidelity": 0.40,
    "extraction_method": 0.60,
    "lifecycle": 0.50,
}

# Size of the generator's knobs (per concept unless said otherwise).
_COMMUNITY_SIZE = 50  # mean concepts per community
_MEMORIES = 0.8
_DECISIONS = 0.3
_FILES = 0.4
_RELATED = 4.8  # RELATED_TO edges drawn per concept (before self-loop removal)
_RELATED_LOCAL = 0.85  # fraction of RELATED_TO inside the community
_LOCAL_ZIPF = 1.1  # within-community popularity exponent over local rank
_ROOT_P = 0.08  # chance a non-root concept starts its own tree
_PUBLIC_P = 0.60
_HOME_TENANT_P = 0.85
_TWO_TENANTS_P = 0.06
_INHERIT_SCOPE_P = 0.75
_ALIAS_P = 0.05


# --------------------------------------------------------------------------- result type
@dataclass(repr=False, eq=False)
class SyntheticKB:
    """A generated knowledge base as columns.

    Node columns are aligned with ``ids`` (concepts first, then memories, decisions, files);
    edge columns are aligned with ``src``/``dst`` (integer positions into ``ids``).

    Attributes
    ----------
    ids, node_types, titles, bodies : list of str
        One entry per node.
    scopes : list of (list of str or None)
        Tenant scopes per node; ``None`` = public.
    lifecycle : list of (str or None)
        Node lifecycle (``"active"``, ``"deprecated"``, ``"draft"``) or ``None``.
    src, dst : numpy.ndarray of int64
        Edge endpoints as positions into ``ids``.
    edge_types : numpy.ndarray of object (str)
        One of :data:`EDGE_TYPES` per edge.
    edge_annotations : dict of str to list
        ``authority``, ``fidelity``, ``extraction_method``, ``extraction_confidence`` and
        ``lifecycle``, one value per edge, ``None`` where the axis is absent.
    aliases : list of (alias, canonical concept id)
        Unique alias strings; each canonical id is a CONCEPT.
    seed, n_concepts : int
        The generator's inputs.
    """

    ids: list[str]
    node_types: list[str]
    titles: list[str]
    bodies: list[str]
    scopes: list[list[str] | None]
    lifecycle: list[str | None]
    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]
    edge_types: npt.NDArray[Any]
    edge_annotations: dict[str, list[Any]]
    aliases: list[tuple[str, str]]
    seed: int
    n_concepts: int
    _type_codes: npt.NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, np.int8))

    # ------------------------------------------------------------------ summary
    @property
    def num_nodes(self) -> int:
        """Number of nodes (all types)."""
        return len(self.ids)

    @property
    def num_edges(self) -> int:
        """Number of typed directed edges."""
        return int(self.src.shape[0])

    def counts(self) -> dict[str, dict[str, int]]:
        """Node counts per node type and edge counts per edge type.

        Returns
        -------
        dict
            ``{"nodes": {node type: count}, "edges": {edge type: count}}`` over
            :data:`NODE_TYPES` and :data:`EDGE_TYPES` (zeros included).

        Examples
        --------
        >>> kb = generate(100, seed=1)
        >>> kb.counts()["nodes"]["CONCEPT"]
        100
        """
        nodes = {t: 0 for t in NODE_TYPES}
        for t in NODE_TYPES:
            nodes[t] = self.node_types.count(t)
        codes = np.bincount(self._type_codes, minlength=len(EDGE_TYPES))
        return {"nodes": nodes, "edges": {t: int(c) for t, c in zip(EDGE_TYPES, codes.tolist())}}

    def __repr__(self) -> str:
        return (
            f"SyntheticKB(n_concepts={self.n_concepts}, seed={self.seed}, "
            f"nodes={self.num_nodes}, edges={self.num_edges}, aliases={len(self.aliases)})"
        )

    # ------------------------------------------------------------------ conversions
    def to_linkgraph(self) -> Any:
        """The KB as a :class:`conceptwalk.LinkGraph` (via ``LinkGraph.from_arrays``).

        Returns
        -------
        LinkGraph
            Nodes with types, titles, scopes and lifecycle; edges with types and every
            annotation column.

        Examples
        --------
        >>> g = generate(200, seed=3).to_linkgraph()
        >>> 6 <= 2 * g.num_neighbour_pairs / g.num_nodes <= 9
        True
        """
        from ..graph import LinkGraph

        return LinkGraph.from_arrays(
            self.ids,
            self.src,
            self.dst,
            self.edge_types,
            node_types=self.node_types,
            titles=self.titles,
            scopes=self.scopes,
            lifecycle=self.lifecycle,
            edge_annotations=self.edge_annotations,
        )

    def write_to(self, kb: Any, *, chunk: int = 50_000) -> None:
        """Write the KB into a :class:`~conceptwalk.kb.KnowledgeBase` in one bulk transaction
        (:meth:`KnowledgeBase.bulk <conceptwalk.kb.KnowledgeBase.bulk>`): the same nodes,
        edges and aliases as ``add_nodes(node_rows())``, ``add_edges(edge_rows())`` and
        ``add_aliases(alias_rows())``, as parameter tuples straight from the columns, in key
        order (so the store's indexes grow at their end). A column of at most 64 distinct
        strings (node type, scopes, lifecycle, edge type and the categorical annotations) goes
        as integer codes of its values (``put_nodes``/``put_edges`` ``codes=``), which the
        store turns back into the same strings.

        Parameters
        ----------
        kb : KnowledgeBase
            The store to write into; into an empty store :meth:`bulk
            <conceptwalk.kb.KnowledgeBase.bulk>` defers its indexes and triggers to the end.
            Rows already in it with the same keys are overwritten (upserts).
        chunk : int
            Rows handed to the store per call (``put_nodes`` / ``put_edges``); it bounds the
            size of each call, not the transaction, which is one for the whole write.

        Examples
        --------
        >>> from conceptwalk.kb import KnowledgeBase
        >>> syn = generate(100, seed=2)
        >>> with KnowledgeBase.open(":memory:") as kb:
        ...     syn.write_to(kb)
        ...     (kb.stats()["nodes"], kb.stats()["edges"]) == (syn.num_nodes, syn.num_edges)
        True
        """
        import itertools
        import json

        ids = self.ids
        n = len(ids)
        every = (1 << 5) - 1  # every optional key given
        ids_o = np.empty(n, dtype=object)
        ids_o[:] = ids
        order = np.argsort(ids_o, kind="stable")
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n)
        # Low-cardinality columns go to the store as integer codes of their distinct values
        # (put_nodes/put_edges ``codes=``): the same stored strings, one integer bound per row.
        scope_text: dict[tuple[str, ...] | None, str | None] = {}
        scope_keys: list[tuple[str, ...] | None] = []
        for sc in self.scopes:
            skey = None if sc is None else tuple(sc)
            if skey not in scope_text:
                scope_text[skey] = None if sc is None else json.dumps(list(sc), ensure_ascii=False)
            scope_keys.append(skey)
        ncodes: dict[str, list[Any]] = {}
        ncols: dict[str, npt.NDArray[np.int64]] = {}
        ncol: Sequence[Any]
        for name, ncol in (("type", self.node_types), ("lifecycle", self.lifecycle)):
            ncols[name], ncodes[name] = _encode(ncol)
        sc_codes, sc_keys = _encode(scope_keys)
        ncols["scopes"], ncodes["scopes"] = sc_codes, [scope_text[k] for k in sc_keys]
        node_codes = {
            k: v for k, v in ncodes.items() if len(v) <= _MAX_CODES and all(x is None or isinstance(x, str) for x in v)
        }
        o = order.tolist()

        # A NULL goes as the store's sentinel (NULL_TEXT, NULL_CONFIDENCE), which binds faster
        # than None (see put_nodes / put_edges).
        z = NULL_TEXT

        def node_col(name: str, col: Sequence[Any]) -> list[Any]:
            if name in node_codes:
                out: list[Any] = ncols[name][order].tolist()
                return out
            if name == "scopes":
                return [z if (t := scope_text[scope_keys[i]]) is None else t for i in o]
            return [z if (v := col[i]) is None else v for i in o]

        nodes = list(
            zip(
                ids_o[order].tolist(),
                node_col("type", self.node_types),
                node_col("title", self.titles),
                node_col("body", self.bodies),
                node_col("scopes", []),
                node_col("lifecycle", self.lifecycle),
                itertools.repeat(every, n),
            )
        )
        del o
        # Edges in key order (src, dst, type by the store's text order): every index grows at
        # its end. The type's rank among the type names breaks ties; stable, so repeats of one
        # key keep their order (the last one wins, as with add_edges).
        t_codes, t_names = _encode(list(self.edge_types))
        t_rank = np.argsort(np.argsort(np.array(t_names, dtype=object), kind="stable"), kind="stable")
        nt = max(len(t_names), 1)
        if n * n * nt < 1 << 62:  # one int64 key
            eorder = np.argsort((rank[self.src] * n + rank[self.dst]) * nt + t_rank[t_codes], kind="stable")
        else:
            eorder = np.lexsort((t_rank[t_codes], rank[self.dst], rank[self.src]))
        a = self.edge_annotations
        ecodes: dict[str, list[Any]] = {"type": t_names}
        ecols: dict[str, Any] = {"type": t_codes}
        for k in ("authority", "fidelity", "extraction_method", "lifecycle"):
            codes_k, names_k = _encode(a[k])
            if len(names_k) <= _MAX_CODES and all(v is None or isinstance(v, str) for v in names_k):
                ecols[k], ecodes[k] = codes_k, names_k
            else:
                col = np.empty(len(a[k]), dtype=object)
                col[:] = a[k]
                col[np.equal(col, _NONE)] = NULL_TEXT
                ecols[k] = col
        if len(t_names) > _MAX_CODES:
            col = np.empty(len(t_names), dtype=object)
            col[:] = t_names
            ecols["type"] = col[t_codes]
            del ecodes["type"]
        conf = np.empty(len(a["extraction_confidence"]), dtype=object)
        conf[:] = a["extraction_confidence"]
        conf[np.equal(conf, _NONE)] = NULL_CONFIDENCE
        with kb.bulk():
            for i in range(0, len(nodes), chunk):
                kb.put_nodes(nodes[i : i + chunk], codes=node_codes)
            del nodes
            for i in range(0, len(eorder), chunk):
                sel = eorder[i : i + chunk]
                cols = [ids_o[self.src[sel]].tolist(), ids_o[self.dst[sel]].tolist(), ecols["type"][sel].tolist()]
                cols += [ecols[k][sel].tolist() for k in ("authority", "fidelity", "extraction_method")]
                cols += [conf[sel].tolist(), ecols["lifecycle"][sel].tolist()]
                kb.put_edges(list(zip(*cols, itertools.repeat(every, len(sel)))), endpoints_exist=True, codes=ecodes)
            kb.add_aliases(self.alias_rows())

    def node_rows(self) -> Iterator[dict[str, Any]]:
        """Yield one dict per node with exactly the keys ``id, type, title, body, scopes,
        lifecycle`` (the store's ``add_nodes`` and the JSONL import format).

        Yields
        ------
        dict
            One node row, in ``ids`` order.

        Examples
        --------
        >>> row = next(generate(50).node_rows())
        >>> sorted(row)
        ['body', 'id', 'lifecycle', 'scopes', 'title', 'type']
        """
        for i, t, ti, b, s, lc in zip(self.ids, self.node_types, self.titles, self.bodies, self.scopes, self.lifecycle):
            yield {
                "id": i,
                "type": t,
                "title": ti,
                "body": b,
                "scopes": None if s is None else list(s),
                "lifecycle": lc,
            }

    def edge_rows(self) -> Iterator[dict[str, Any]]:
        """Yield one dict per edge with exactly the keys ``src, dst, type, authority, fidelity,
        extraction_method, extraction_confidence, lifecycle`` (endpoints as ids).

        Yields
        ------
        dict
            One edge row, in edge order.

        Examples
        --------
        >>> row = next(generate(50).edge_rows())
        >>> list(row)[:3]
        ['src', 'dst', 'type']
        """
        ids = self.ids
        a = self.edge_annotations
        for s, d, t, au, fi, em, ec, lc in zip(
            self.src.tolist(),
            self.dst.tolist(),
            self.edge_types.tolist(),
            a["authority"],
            a["fidelity"],
            a["extraction_method"],
            a["extraction_confidence"],
            a["lifecycle"],
        ):
            yield {
                "src": ids[s],
                "dst": ids[d],
                "type": t,
                "authority": au,
                "fidelity": fi,
                "extraction_method": em,
                "extraction_confidence": ec,
                "lifecycle": lc,
            }

    def alias_rows(self) -> Iterator[dict[str, str]]:
        """Yield ``{"alias": ..., "canonical": ...}`` per alias (canonical = a concept id).

        Yields
        ------
        dict of str to str
            One alias row (the store's ``add_aliases`` format).

        Examples
        --------
        >>> kb = generate(1000)
        >>> all(r["canonical"].startswith("concept/") for r in kb.alias_rows())
        True
        """
        for alias, canonical in self.aliases:
            yield {"alias": alias, "canonical": canonical}

    # ------------------------------------------------------------------ evaluation queries
    def queries(self, n: int = 50, *, seed: int = 0) -> list[dict[str, Any]]:
        """Evaluation queries for concept-anchored retrieval.

        Each query is phrased from one concept's title: the title itself, a paraphrase, a
        typo'd variant, or an alias of the concept (when it has one). Only concepts with at
        least one attached FILE, DECISION or MEMORY are chosen; distinct concepts, drawn with
        ``numpy.random.Generator(PCG64([kb.seed, seed]))``, so the list is deterministic.

        Parameters
        ----------
        n : int
            Number of queries (fewer if fewer concepts qualify).
        seed : int
            Seed of the query draw (independent of the KB's seed).

        Returns
        -------
        list of dict
            ``{"text": str, "concept": canonical concept id, "variant": "title" | "paraphrase"
            | "typo" | "alias", "relevant": sorted ids of the FILE/DECISION/MEMORY nodes joined
            to the concept by an edge in either direction}``.

        Examples
        --------
        >>> kb = generate(300, seed=2)
        >>> q = kb.queries(3)
        >>> len(q), sorted(q[0])
        (3, ['concept', 'relevant', 'text', 'variant'])
        >>> q == kb.queries(3)
        True
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"n must be a non-negative integer, got {n!r}")
        rng = np.random.Generator(np.random.PCG64([int(self.seed), int(seed)]))
        N = self.n_concepts
        src, dst = self.src, self.dst
        # Concept <-> item edges, as (concept, item) pairs.
        s_is_c = src < N
        d_is_c = dst < N
        ci = np.concatenate([src[s_is_c & ~d_is_c], dst[d_is_c & ~s_is_c]])
        it = np.concatenate([dst[s_is_c & ~d_is_c], src[d_is_c & ~s_is_c]])
        eligible = np.flatnonzero(np.bincount(ci, minlength=N) > 0)
        k = min(n, int(eligible.shape[0]))
        chosen = rng.choice(eligible, size=k, replace=False) if k else np.zeros(0, np.int64)
        variants = rng.integers(0, 4, size=k)
        order = np.argsort(ci, kind="stable")
        ci_sorted, it_sorted = ci[order], it[order]
        alias_of: dict[str, list[str]] = {}
        for alias, canonical in self.aliases:
            if not alias.startswith("concept/"):
                alias_of.setdefault(canonical, []).append(alias)
        out: list[dict[str, Any]] = []
        for c, v in zip(chosen.tolist(), variants.tolist()):
            lo, hi = np.searchsorted(ci_sorted, [c, c + 1])
            relevant = sorted({self.ids[j] for j in it_sorted[lo:hi].tolist()})
            cid = self.ids[c]
            title = self.titles[c]
            names = alias_of.get(cid, [])
            if v == 3 and names:
                text, variant = names[int(rng.integers(len(names)))], "alias"
            elif v == 2 or (v == 3 and not names):
                text, variant = _typo(title, rng), "typo"
            elif v == 1:
                tpl = _PARAPHRASES[int(rng.integers(len(_PARAPHRASES)))]
                text, variant = tpl.format(t=title), "paraphrase"
            else:
                text, variant = title, "title"
            out.append({"text": text, "concept": cid, "variant": variant, "relevant": relevant})
        return out


_PARAPHRASES: tuple[str, ...] = (
    "how does {t} work",
    "what did we decide about {t}",
    "problems with {t}",
    "where is {t} implemented",
    "explain {t}",
    "{t} design notes",
    "why {t}",
)


def _typo(title: str, rng: np.random.Generator) -> str:
    """Swap two adjacent letters (or drop one) in the longest word of ``title``."""
    words = title.split(" ")
    w = max(range(len(words)), key=lambda i: (len(words[i]), -i))
    word = words[w]
    if len(word) < 4:
        return title + "s"
    p = int(rng.integers(1, len(word) - 2))
    if rng.random() < 0.5 and word[p] != word[p + 1]:
        word = word[:p] + word[p + 1] + word[p] + word[p + 2 :]
    else:
        word = word[:p] + word[p + 1 :]
    words[w] = word
    return " ".join(words)


# --------------------------------------------------------------------------- progress
class _Progress:
    def __init__(self, enabled: bool, total: int, desc: str) -> None:
        self._bar: Any = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm is optional at run time
                return
            self._bar = tqdm(total=total, desc=desc, unit="step", leave=False)

    def step(self, what: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(what, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# --------------------------------------------------------------------------- generator
def _pick_codes(rng: np.random.Generator, probs: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.int64]:
    """``k`` categorical draws with probabilities ``probs``."""
    cdf = np.cumsum(probs)
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(k), side="right"), len(probs) - 1)


def _codes_by_type(
    rng: np.random.Generator, types: npt.NDArray[np.int8], table: npt.NDArray[np.float64]
) -> npt.NDArray[np.int8]:
    """Per edge a value code drawn from its type's row of ``table``."""
    u = rng.random(int(types.shape[0]))
    out = np.zeros(types.shape[0], dtype=np.int8)
    for t in range(table.shape[0]):
        sel = types == t
        cdf = np.cumsum(table[t])
        cdf /= cdf[-1]
        out[sel] = np.minimum(np.searchsorted(cdf, u[sel], side="right"), table.shape[1] - 1)
    return out


def _column(names: tuple[str, ...], codes: npt.NDArray[Any]) -> list[Any]:
    """Codes -> list of names, code -1 -> None (vectorised through an object array)."""
    lut = np.array(list(names) + [None], dtype=object)
    out: list[Any] = lut[codes].tolist()
    return out


#: The most distinct values a column is handed to the store as codes for (``put_edges codes=``).
_MAX_CODES = 64


def _encode(col: Sequence[Any]) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """A column as codes into its distinct values (in order of first appearance)."""
    first = dict.fromkeys(col)
    names = list(first)
    lookup = {v: i for i, v in enumerate(names)}
    codes = np.fromiter(map(lookup.__getitem__, col), dtype=np.int64, count=len(col))
    return codes, names


class _Sampler:
    """Vectorised endpoint choice: Zipf-like popularity by local rank inside a community, and a
    global popularity that also prefers low-numbered communities."""

    def __init__(
        self,
        rng: np.random.Generator,
        comm: npt.NDArray[np.int64],
        local: npt.NDArray[np.int64],
        starts: npt.NDArray[np.int64],
        sizes: npt.NDArray[np.int64],
    ) -> None:
        self.rng = rng
        self.comm = comm
        self.starts = starts
        self.sizes = sizes
        n_comm = sizes.shape[0]
        lw = (local + 1.0) ** -_LOCAL_ZIPF
        self.Z = np.bincount(comm, weights=lw, minlength=n_comm)
        self.G = np.cumsum(lw)
        safe = np.minimum(starts, max(comm.shape[0] - 1, 0))
        self.base = np.where(sizes > 0, self.G[safe] - lw[safe], 0.0)
        pc = (np.arange(n_comm) + 1.0) ** -1.0 * (sizes > 0)
        pc /= pc.sum()
        w = pc[comm] * lw / self.Z[comm]
        self.global_p = w / w.sum()

    def local(self, communities: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """One concept per entry, inside the given community, popular local ranks preferred."""
        u = self.rng.random(communities.shape[0])
        t = self.base[communities] + u * self.Z[communities]
        idx = np.searchsorted(self.G, t, side="right")
        lo = self.starts[communities]
        out: npt.NDArray[np.int64] = np.clip(idx, lo, lo + self.sizes[communities] - 1)
        return out

    def global_(self, k: int) -> npt.NDArray[np.int64]:
        """``k`` concepts by global popularity (heavy-tailed)."""
        return self.rng.choice(self.G.shape[0], size=k, p=self.global_p).astype(np.int64)

    def mixed(self, communities: npt.NDArray[np.int64], local_p: float) -> npt.NDArray[np.int64]:
        """Local with probability ``local_p``, else global."""
        k = communities.shape[0]
        inside = self.rng.random(k) < local_p
        return np.where(inside, self.local(communities), self.global_(k))


def _scope_codes(rng: np.random.Generator, home: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
    """Scope code per entry: 0 public, 1..4 one tenant, 5..10 a pair of tenants."""
    k = home.shape[0]
    scoped = rng.random(k) >= _PUBLIC_P
    other = rng.integers(0, len(TENANTS), size=k)
    t = np.where(rng.random(k) < _HOME_TENANT_P, home, other)
    two = rng.random(k) < _TWO_TENANTS_P
    second = (t + rng.integers(1, len(TENANTS), size=k)) % len(TENANTS)
    code = np.where(scoped, 1 + t, 0)
    pair = _PAIR_CODE[np.minimum(t, second), np.maximum(t, second)]
    return np.where(scoped & two, pair, code).astype(np.int8)


_PAIR_CODE = np.zeros((4, 4), dtype=np.int64)
_SCOPE_SETS: list[tuple[str, ...] | None] = [None] + [(t,) for t in TENANTS]
for _a in range(4):
    for _b in range(_a + 1, 4):
        _PAIR_CODE[_a, _b] = len(_SCOPE_SETS)
        _SCOPE_SETS.append((TENANTS[_a], TENANTS[_b]))


def _lifecycle_codes(rng: np.random.Generator, k: int, present_p: float) -> npt.NDArray[np.int8]:
    present = rng.random(k) < present_p
    vals = _pick_codes(rng, _LIFECYCLE_P, k)
    return np.where(present, vals, -1).astype(np.int8)


def _group_rank(sorted_keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Rank of each entry inside its run of equal keys (keys sorted)."""
    first = np.searchsorted(sorted_keys, sorted_keys, side="left")
    return np.arange(sorted_keys.shape[0]) - first


def generate(n_concepts: int = 1000, *, seed: int = 0, progress: bool = False) -> SyntheticKB:
    """Generate a deterministic synthetic knowledge base.

    Parameters
    ----------
    n_concepts : int
        Number of CONCEPT nodes (>= 1). About 1.5 MEMORY/DECISION/FILE nodes per concept are
        added, and about 9 typed edges per concept.
    seed : int
        Seed of the ``numpy.random.Generator(PCG64(seed))`` that drives every draw.
    progress : bool
        Show a tqdm progress bar (when tqdm is installed; silently none otherwise).

    Returns
    -------
    SyntheticKB
        Columns for nodes, edges, annotations and aliases.

    Notes
    -----
    Bit-identical output for the same ``(n_concepts, seed)``: only PCG64 draws in a fixed order,
    no Python ``random``, no set or hash ordering. Vectorised; about 1 s per 20k concepts
    (a million concepts within a minute or so on one core). See the module docstring for the
    shape of the graph.

    Examples
    --------
    >>> kb = generate(1000, seed=0)
    >>> kb.num_nodes, kb.num_edges > 8000
    (2500, True)
    >>> kb.ids[0].startswith("concept/") and kb.node_types[0] == "CONCEPT"
    True
    >>> generate(1000, seed=0).titles == kb.titles
    True
    """
    if isinstance(n_concepts, bool) or not isinstance(n_concepts, (int, np.integer)) or n_concepts < 1:
        raise InputError(f"n_concepts must be an integer >= 1, got {n_concepts!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    N = int(n_concepts)
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    bar = _Progress(bool(progress), 8, f"synthetic KB ({N:,} concepts)")
    try:
        return _generate(N, int(seed), rng, bar)
    finally:
        bar.close()


def _generate(N: int, seed: int, rng: np.random.Generator, bar: _Progress) -> SyntheticKB:
    Q, D, O, F = len(QUALIFIERS), len(DOMAINS), len(OBJECTS), len(FACETS)
    # ---- communities and topics
    n_do = D * O
    C = max(1, min(round(N / _COMMUNITY_SIZE), n_do * (Q + 1)))
    w = rng.lognormal(0.0, 1.0, size=C)
    sizes = rng.multinomial(N, w / w.sum()).astype(np.int64)
    cap = 1 + F * F
    if sizes.max() > cap:  # only for absurd N / C ratios; deterministic redistribution
        excess = int((sizes - cap).clip(0).sum())
        sizes = np.minimum(sizes, cap)
        room = np.cumsum(cap - sizes)
        add = np.diff(np.concatenate([[0], np.minimum(room, excess)]))
        sizes += add
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    comm = np.repeat(np.arange(C, dtype=np.int64), sizes)
    local = np.arange(N, dtype=np.int64) - starts[comm]
    if C <= n_do:
        tq = np.full(C, -1, dtype=np.int64)
        tdo = rng.choice(n_do, size=C, replace=False)
    else:
        extra = rng.choice(Q * n_do, size=C - n_do, replace=False)
        tq = np.concatenate([np.full(n_do, -1, dtype=np.int64), extra // n_do])
        tdo = np.concatenate([rng.permutation(n_do), extra % n_do])
    td, to = tdo // O, tdo % O
    qw = [w + " " for w in QUALIFIERS] + [""]
    qs = [w + "_" for w in QUALIFIERS] + [""]
    topic_title = [qw[q] + DOMAINS[d] + " " + OBJECTS[o] for q, d, o in zip(tq.tolist(), td.tolist(), to.tolist())]
    topic_slug = [qs[q] + DOMAINS[d] + "_" + OBJECTS[o] for q, d, o in zip(tq.tolist(), td.tolist(), to.tolist())]
    home = rng.integers(0, len(TENANTS), size=C)
    coprime = np.array([s for s in range(1, F) if math.gcd(s, F) == 1], dtype=np.int64)
    stride = coprime[rng.integers(0, coprime.shape[0], size=C)]
    offset = rng.integers(0, F, size=C)
    bar.step("communities")

    # ---- concepts: root = topic, others = topic + 1 or 2 facets (unique per community)
    k = local - 1
    f1 = np.full(N, -1, dtype=np.int64)
    f2 = np.full(N, -1, dtype=np.int64)
    one = (local >= 1) & (k < F)
    f1[one] = (offset[comm[one]] + k[one] * stride[comm[one]]) % F
    two = k >= F
    k2 = k[two] - F
    f1[two] = (offset[comm[two]] + (k2 // (F - 1)) * stride[comm[two]]) % F
    f2[two] = (f1[two] + 1 + k2 % (F - 1)) % F
    fw = [" " + w.replace("_", " ") for w in FACETS] + [""]
    fs = ["_" + w for w in FACETS] + [""]
    cl, f1l, f2l = comm.tolist(), f1.tolist(), f2.tolist()
    c_titles = [topic_title[c] + fw[a] + fw[b] for c, a, b in zip(cl, f1l, f2l)]
    c_slugs = [topic_slug[c] + fs[a] + fs[b] for c, a, b in zip(cl, f1l, f2l)]
    c_ids = ["concept/" + s for s in c_slugs]
    sampler = _Sampler(rng, comm, local, starts, sizes)
    bar.step("concepts")

    # ---- attached items and their owners
    n_mem, n_dec, n_file = round(_MEMORIES * N), round(_DECISIONS * N), round(_FILES * N)

    def owners(count: int) -> npt.NDArray[np.int64]:
        # Half uniform (most concepts get something), half popular inside a uniform community
        # member's community (community roots collect more), never the global hubs.
        uniform = rng.integers(0, N, size=count)
        return np.where(rng.random(count) < 0.5, uniform, sampler.local(comm[uniform]))

    mem_owner = owners(n_mem)
    dec_owner = owners(n_dec)
    file_owner = np.sort(owners(n_file))
    file_rank = _group_rank(file_owner)
    file_count = np.bincount(file_owner, minlength=N)
    file_start = np.searchsorted(file_owner, np.arange(N))
    M0, D0, F0 = N, N + n_mem, N + n_mem + n_dec
    bar.step("attachments")

    # ---- edges
    blocks: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int]] = []
    # PARENT_CONCEPT: child -> parent, parent among earlier concepts of the community, root-biased.
    child = np.flatnonzero((local >= 1) & (rng.random(N) >= _ROOT_P))
    parent_local = np.floor(rng.random(child.shape[0]) ** 2 * local[child]).astype(np.int64)
    blocks.append((child, starts[comm[child]] + parent_local, _PAR))
    # RELATED_TO
    n_rel = round(_RELATED * N)
    rsrc = rng.integers(0, N, size=n_rel)
    rdst = sampler.mixed(comm[rsrc], _RELATED_LOCAL)
    blocks.append((rsrc, rdst, _REL))
    # IMPLEMENTED_BY: owner -> file, plus a second concept of the community for 30% of files.
    files = np.arange(n_file, dtype=np.int64)
    blocks.append((file_owner, F0 + files, _IMP))
    second = files[rng.random(n_file) < 0.30]
    blocks.append((sampler.local(comm[file_owner[second]]), F0 + second, _IMP))
    # EXPLAINED_BY: owner -> decision, plus a second concept for 40% of decisions.
    decs = np.arange(n_dec, dtype=np.int64)
    blocks.append((dec_owner, D0 + decs, _EXP))
    second = decs[rng.random(n_dec) < 0.40]
    blocks.append((sampler.local(comm[dec_owner[second]]), D0 + second, _EXP))
    # ATTACHED_TO: memory -> owner.
    mems = np.arange(n_mem, dtype=np.int64)
    blocks.append((M0 + mems, mem_owner, _ATT))
    # TAGGED_CONCEPT: memory -> 1 + Poisson(1.5) concepts (70% in the owner's community),
    # decision -> 1 + Poisson(0.3) concepts of its community.
    mem_tags = 1 + rng.poisson(1.5, size=n_mem)
    tag_mem = np.repeat(mems, mem_tags)
    tag_mem_dst = sampler.mixed(comm[mem_owner[tag_mem]], 0.70)
    blocks.append((M0 + tag_mem, tag_mem_dst, _TAG))
    dec_tags = 1 + rng.poisson(0.3, size=n_dec)
    tag_dec = np.repeat(decs, dec_tags)
    blocks.append((D0 + tag_dec, sampler.local(comm[dec_owner[tag_dec]]), _TAG))
    # MENTIONS: memory/decision -> one file of its owner (when the owner has files).
    mem_file = np.full(n_mem, -1, dtype=np.int64)
    has = (file_count[mem_owner] > 0) & (rng.random(n_mem) < 0.60)
    pick = np.floor(rng.random(n_mem) * file_count[mem_owner]).astype(np.int64)
    mem_file[has] = file_start[mem_owner[has]] + pick[has]
    blocks.append((M0 + mems[has], F0 + mem_file[has], _MEN))
    dec_file = np.full(n_dec, -1, dtype=np.int64)
    has = (file_count[dec_owner] > 0) & (rng.random(n_dec) < 0.50)
    pick = np.floor(rng.random(n_dec) * file_count[dec_owner]).astype(np.int64)
    dec_file[has] = file_start[dec_owner[has]] + pick[has]
    blocks.append((D0 + decs[has], F0 + dec_file[has], _MEN))

    src = np.concatenate([b[0] for b in blocks]).astype(np.int64)
    dst = np.concatenate([b[1] for b in blocks]).astype(np.int64)
    etype = np.concatenate([np.full(b[0].shape[0], b[2], dtype=np.int8) for b in blocks])
    n_nodes = F0 + n_file
    keep = src != dst
    key = (src * n_nodes + dst) * len(EDGE_TYPES) + etype
    _, first = np.unique(np.where(keep, key, -1), return_index=True)
    first = np.sort(first)
    first = first[keep[first]]
    src, dst, etype = src[first], dst[first], etype[first]
    m = src.shape[0]
    bar.step("edges")

    # ---- node scopes and lifecycle
    c_scope = _scope_codes(rng, home[comm])

    def item_scopes(owner: npt.NDArray[np.int64]) -> npt.NDArray[np.int8]:
        fresh = _scope_codes(rng, home[comm[owner]])
        return np.where(rng.random(owner.shape[0]) < _INHERIT_SCOPE_P, c_scope[owner], fresh)

    scope_code = np.concatenate([c_scope, item_scopes(mem_owner), item_scopes(dec_owner), item_scopes(file_owner)])
    node_life = np.concatenate([_lifecycle_codes(rng, N, 0.9), _lifecycle_codes(rng, n_nodes - N, 0.6)])
    bar.step("scopes")

    # ---- edge annotations
    p = ANNOTATION_PRESENCE
    auth = np.where(rng.random(m) < p["authority"], _codes_by_type(rng, etype, _AUTHORITY_P), -1)
    fid = np.where(rng.random(m) < p["fidelity"], _codes_by_type(rng, etype, _FIDELITY_P), -1)
    meth = np.where(rng.random(m) < p["extraction_method"], _codes_by_type(rng, etype, _METHOD_P), -1)
    conf_llm = np.round(0.5 + 0.45 * rng.random(m), 2)
    conf = np.where(meth == 1, conf_llm, 1.0)
    elife = np.where(rng.random(m) < p["lifecycle"], _pick_codes(rng, _LIFECYCLE_P, m), -1)
    deprecated_end = (node_life[src] == 1) | (node_life[dst] == 1)
    elife = np.where((elife >= 0) & deprecated_end, 1, elife)
    conf_col = np.empty(m, dtype=object)
    present = meth >= 0
    conf_col[present] = conf[present]
    annotations = {
        "authority": _column(AUTHORITY_VALUES, auth),
        "fidelity": _column(FIDELITY_VALUES, fid),
        "extraction_method": _column(EXTRACTION_METHODS, meth),
        "extraction_confidence": conf_col.tolist(),
        "lifecycle": _column(LIFECYCLE_VALUES, elife),
    }
    bar.step("annotations")

    # ---- aliases (before the text, which sometimes uses them)
    alias_concepts = np.flatnonzero(rng.random(N) < _ALIAS_P)
    n_alias = rng.integers(1, 4, size=alias_concepts.shape[0])
    kinds = np.argsort(rng.random((alias_concepts.shape[0], 5)), axis=1)
    candidates: list[tuple[str, int, int]] = []
    for c, na, kk in zip(alias_concepts.tolist(), n_alias.tolist(), kinds.tolist()):
        for kind in kk[:na]:
            candidates.append((_alias(c_titles[c], c_slugs[c], kind), c, kind))
    seen: dict[str, int] = {}
    for a, _c, _k in candidates:
        seen[a] = seen.get(a, 0) + 1
    unique = [(a, c, kind) for a, c, kind in candidates if seen[a] == 1]
    aliases = [(a, c_ids[c]) for a, c, _k in unique]
    hyphen_alias = {c: a for a, c, kind in unique if kind == 0}
    bar.step("aliases")

    # ---- text
    sym_m = rng.integers(0, len(SYMPTOMS), size=n_mem).tolist()
    app_m = rng.integers(0, len(APPROACHES), size=n_mem).tolist()
    tpl_m = rng.integers(0, len(MEMORY_TEMPLATES), size=n_mem).tolist()
    use_alias = (rng.random(n_mem) < 0.3).tolist()
    # The memory's first tag, named in the body when it is not the owner (tag_mem is sorted).
    tag_first = tag_mem_dst[np.searchsorted(tag_mem, mems, side="left")].tolist()
    ext = np.array(FILE_EXTENSIONS, dtype=object)[rng.integers(0, len(FILE_EXTENSIONS), size=n_file)].tolist()
    fn_a = rng.integers(0, len(FUNCTION_VERBS), size=n_file).tolist()
    fn_b = rng.integers(0, len(FUNCTION_VERBS), size=n_file).tolist()
    app_d = rng.integers(0, len(APPROACHES), size=(n_dec, 2)).tolist()
    rea_d = rng.integers(0, len(REASONS), size=n_dec).tolist()
    c_w1 = rng.integers(0, len(FACETS), size=N).tolist()
    c_w2 = rng.integers(0, len(SYMPTOMS), size=N).tolist()

    # Files: src/<topic>/<facets or core><suffix>.<ext>
    f_paths: list[str] = []
    for o, r, e in zip(file_owner.tolist(), file_rank.tolist(), ext):
        stem = fs[f1l[o]][1:] + fs[f2l[o]] if f1l[o] >= 0 else "core"
        suffix = FILE_SUFFIXES[r] if r < len(FILE_SUFFIXES) else f"_{r}"
        f_paths.append(f"src/{topic_slug[cl[o]]}/{stem}{suffix}.{e}")
    f_ids = ["file/" + pth for pth in f_paths]
    f_bodies = [
        f"Implements {c_titles[o]}. Functions: {FUNCTION_VERBS[a]}{fs[f1l[o]]}, "
        f"{FUNCTION_VERBS[b]}_{OBJECTS[to[cl[o]]]}."
        for o, a, b in zip(file_owner.tolist(), fn_a, fn_b)
    ]

    # Concepts
    parent_of = np.full(N, -1, dtype=np.int64)
    parent_of[child] = starts[comm[child]] + parent_local
    c_bodies = [
        (f"{t} is part of the {topic_title[c]} area" if f >= 0 else f"{t} is an area of its own")
        + (f", under {c_titles[pa]}" if pa >= 0 else "")
        + f". It covers {FACETS[w1].replace('_', ' ')} and how to avoid {SYMPTOMS[w2]}."
        for t, c, f, pa, w1, w2 in zip(c_titles, cl, f1l, parent_of.tolist(), c_w1, c_w2)
    ]

    # Memories
    m_owner = mem_owner.tolist()
    m_title_of = [hyphen_alias.get(o, c_titles[o]) if ua else c_titles[o] for o, ua in zip(m_owner, use_alias)]
    m_titles = [MEMORY_TEMPLATES[tp].format(t=t, s=SYMPTOMS[s]) for tp, t, s in zip(tpl_m, m_title_of, sym_m)]
    mf = mem_file.tolist()
    m_bodies = [
        f"While working on {t} we saw {SYMPTOMS[s]}. We tried to {APPROACHES[a]}."
        + (f" See {f_paths[f]}." if f >= 0 else "")
        + (f" Related: {c_titles[g]}." if g >= 0 and g != o else "")
        for t, s, a, f, g, o in zip(m_title_of, sym_m, app_m, mf, tag_first, m_owner)
    ]
    m_ids = [f"memory/m{i:07d}" for i in range(n_mem)]

    # Decisions
    d_owner = dec_owner.tolist()
    df = dec_file.tolist()
    d_ids = [f"decision/adr-{i:06d}" for i in range(n_dec)]
    d_titles = [f"ADR-{i:06d}: {APPROACHES[a[0]]} for {c_titles[o]}" for i, (a, o) in enumerate(zip(app_d, d_owner))]
    d_bodies = [
        f"We decided to {APPROACHES[a[0]]} for {c_titles[o]} because {REASONS[r]}. "
        f"Alternative considered: {APPROACHES[a[1]]}." + (f" Affects {f_paths[f]}." if f >= 0 else "")
        for a, o, r, f in zip(app_d, d_owner, rea_d, df)
    ]
    bar.step("text")

    ids = c_ids + m_ids + d_ids + f_ids
    node_types = ["CONCEPT"] * N + ["MEMORY"] * n_mem + ["DECISION"] * n_dec + ["FILE"] * n_file
    scopes = [None if s is None else list(s) for s in (_SCOPE_SETS[c] for c in scope_code.tolist())]
    return SyntheticKB(
        ids=ids,
        node_types=node_types,
        titles=c_titles + m_titles + d_titles + f_paths,
        bodies=c_bodies + m_bodies + d_bodies + f_bodies,
        scopes=scopes,
        lifecycle=_column(LIFECYCLE_VALUES, node_life),
        src=src,
        dst=dst,
        edge_types=np.array(EDGE_TYPES, dtype=object)[etype],
        edge_annotations=annotations,
        aliases=aliases,
        seed=seed,
        n_concepts=N,
        _type_codes=etype,
    )


def _alias(title: str, slug: str, kind: int) -> str:
    """Alias variant ``kind`` of a concept: 0 hyphen/case, 1 abbreviation, 2 camel case,
    3 snake case, 4 legacy id."""
    words = title.split(" ")
    if kind == 0:
        cap = [w.capitalize() for w in words]
        return "-".join(cap[:2]) + ("" if len(cap) <= 2 else " " + " ".join(cap[2:]))
    if kind == 1:
        head = max(2, len(words) - 1)
        return "".join(w[0].upper() for w in words[:head]) + (
            "" if head >= len(words) else " " + " ".join(words[head:])
        )
    if kind == 2:
        return "".join(w.capitalize() for w in words)
    if kind == 3:
        return "_".join(words)
    return f"concept/{slug}_v1"
