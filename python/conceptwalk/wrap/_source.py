"""A knowledge base (or bare LinkGraph) seen through one graph snapshot, with the per-snapshot
caches the resolver, the walk and the probe share (alias index, concept index, title index,
annotation presence, concept embeddings)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from .embed import normalize_text
from ..errors import ConceptwalkError, InputError
from ..graph import EDGE_ANNOTATION_KEYS, LinkGraph
from ..tools.common import source_kind
from .config import WalkConfig

_log = logging.getLogger("conceptwalk.wrap")

#: Longest phrase (in words) looked up in the alias and title indexes.
MAX_PHRASE_WORDS = 12


def _phrase_index(pairs: list[tuple[str, Any]]) -> tuple[dict[str, list[Any]], int]:
    """normalised phrase -> values (first-seen order, no repeats), and the longest phrase's words."""
    index: dict[str, list[Any]] = {}
    longest = 0
    for phrase, value in pairs:
        norm = normalize_text(phrase)
        if not norm:
            continue
        words = norm.count(" ") + 1
        if words > MAX_PHRASE_WORDS:
            continue
        lst = index.setdefault(norm, [])
        if value not in lst:
            lst.append(value)
        longest = max(longest, words)
    return index, longest


def phrases_in(text: str, index: dict[str, list[Any]], longest: int) -> list[tuple[str, list[Any]]]:
    """The indexed phrases occurring in ``text`` as whole words (after normalisation), in order of
    first occurrence, each once."""
    if not index:
        return []
    words = normalize_text(text).split()
    found: dict[str, list[Any]] = {}
    for i in range(len(words)):
        for n in range(1, min(longest, len(words) - i) + 1):
            key = " ".join(words[i:i + n])
            hit = index.get(key)
            if hit is not None and key not in found:
                found[key] = hit
    return list(found.items())


class Snapshot:
    """Caches over one immutable graph snapshot; built lazily, thread-safe."""

    def __init__(self, source: Source, graph: LinkGraph) -> None:
        self.source = source
        self.graph = graph
        self._lock = threading.RLock()  # builders nest (alias_index -> aliases)
        self._cache: dict[Any, Any] = {}

    def _get(self, key: Any, build: Any) -> Any:
        got = self._cache.get(key)
        if got is None:
            with self._lock:
                got = self._cache.get(key)
                if got is None:
                    got = build()
                    self._cache[key] = got
        return got

    # -------------------------------------------------------------- aliases
    def aliases(self) -> dict[str, list[str]]:
        """alias -> canonical ids (the store's alias map; {} for a bare graph)."""
        return self._get("aliases", self.source.read_aliases)  # type: ignore[no-any-return]

    def alias_index(self) -> tuple[dict[str, list[str]], int]:
        def build() -> tuple[dict[str, list[str]], int]:
            pairs = [(a, c) for a, cs in self.aliases().items() for c in cs]
            return _phrase_index(pairs)
        return self._get("alias_index", build)  # type: ignore[no-any-return]

    def canonical(self, node_id: str) -> list[str]:
        """The canonical ids of ``node_id`` when it is an alias (a fragmented id), else itself."""
        return self.aliases().get(node_id) or [node_id]

    # -------------------------------------------------------------- node types
    def type_mask(self, names: tuple[str, ...] | None) -> npt.NDArray[np.bool_] | None:
        """Boolean mask over the node types' codes (None = any type)."""
        if names is None:
            return None
        g = self.graph
        return np.array([t in names for t in g.node_type_names], dtype=bool)

    def concept_indices(self, config: WalkConfig) -> npt.NDArray[np.int64]:
        def build() -> npt.NDArray[np.int64]:
            flags = self.type_mask(config.concept_node_types)
            if flags is None:
                return np.arange(self.graph.num_nodes, dtype=np.int64)
            if flags.size == 0:
                return np.zeros(0, dtype=np.int64)
            return np.flatnonzero(flags[self.graph.node_type_codes]).astype(np.int64)
        return self._get(("concepts", config.concept_node_types), build)  # type: ignore[no-any-return]

    def is_concept(self, idx: int, config: WalkConfig) -> bool:
        names = config.concept_node_types
        if names is None:
            return True
        g = self.graph
        return g.node_type_names[int(g.node_type_codes[idx])] in names

    def name_index(self, config: WalkConfig) -> tuple[dict[str, list[int]], int]:
        """normalised concept title / id / id tail -> concept indices (the fallback's index)."""
        def build() -> tuple[dict[str, list[int]], int]:
            g = self.graph
            pairs: list[tuple[str, Any]] = []
            for i in self.concept_indices(config).tolist():
                nid = g.ids[i]
                title = g.titles[i]
                if title:
                    pairs.append((title, i))
                pairs.append((nid, i))
                for sep in (":", "/", "#"):
                    if sep in nid:
                        pairs.append((nid.rsplit(sep, 1)[1], i))
            return _phrase_index(pairs)
        return self._get(("names", config.concept_node_types), build)  # type: ignore[no-any-return]

    # -------------------------------------------------------------- provenance presence
    def presence(self) -> dict[str, int] | None:
        """Per annotation column, stored edges with a value (None for a bare graph)."""
        return self._get("presence", self.source.read_presence)  # type: ignore[no-any-return]

    # -------------------------------------------------------------- embeddings
    def concept_embeddings(self, embedder: Any, config: WalkConfig) -> npt.NDArray[np.float32]:
        """Rows aligned with :meth:`concept_indices`: the stored vectors under ``embedder.name``;
        concepts without one are embedded (title + body) once and written back to the store."""
        def build() -> npt.NDArray[np.float32]:
            idx = self.concept_indices(config).tolist()
            ids = [self.graph.ids[i] for i in idx]
            return self.source.embeddings_for(embedder, ids, self.graph)
        return self._get(("emb", embedder.name, config.concept_node_types), build)  # type: ignore[no-any-return]


class Source:
    """What the wrap reads from: a :class:`~conceptwalk.tools.GraphSource` (a
    :class:`~conceptwalk.kb.store.KnowledgeBase`-like object with ``graph()``, and optionally ``aliases()``, ``annotation_presence()``, ``nodes()``,
    ``get_embeddings()``, ``set_embeddings()``, ``search()``) or a bare :class:`LinkGraph`."""

    def __init__(self, kb: Any, *, annotations: bool = True) -> None:
        try:  # the one graph-source protocol (conceptwalk.tools.GraphSource)
            kind = source_kind(kb)
        except InputError:
            raise InputError(f"kb must be a KnowledgeBase or a LinkGraph, got {type(kb).__name__}") from None
        self.kb = None if kind == "graph" else kb
        self._static: LinkGraph | None = kb if kind == "graph" else None
        self.annotations = annotations
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()
        self._mem_embeddings: dict[tuple[str, str], npt.NDArray[np.float32]] = {}

    @property
    def is_store(self) -> bool:
        return self.kb is not None

    def graph(self) -> LinkGraph:
        if self._static is not None:
            return self._static
        kb: Any = self.kb
        try:
            g: LinkGraph = kb.graph(annotations=self.annotations)
        except TypeError:  # a KB-like object without the annotations keyword
            g = kb.graph()
        return g

    def snapshot(self) -> Snapshot:
        g = self.graph()
        snap = self._snap
        if snap is None or snap.graph is not g:
            with self._lock:
                snap = self._snap
                if snap is None or snap.graph is not g:
                    snap = Snapshot(self, g)
                    self._snap = snap
        return snap

    # -------------------------------------------------------------- reads
    def read_aliases(self) -> dict[str, list[str]]:
        fn = getattr(self.kb, "aliases", None)
        if fn is None:
            return {}
        return {str(a): [str(c) for c in cs] for a, cs in fn().items()}

    def read_presence(self) -> dict[str, int] | None:
        fn = getattr(self.kb, "annotation_presence", None)
        if fn is None:
            return None
        got = fn()
        return {k: int(got.get(k, 0)) for k in EDGE_ANNOTATION_KEYS}

    def bodies(self, ids: list[str]) -> dict[str, str | None]:
        fn = getattr(self.kb, "nodes", None)
        if fn is None:
            return {}
        return {r["id"]: r.get("body") for r in fn(ids)}

    def node_texts(self, ids: list[str], graph: LinkGraph) -> list[str]:
        bodies = self.bodies(ids)
        out = []
        for nid in ids:
            title = graph.titles[graph.index(nid)]
            parts = [p for p in (title, bodies.get(nid)) if p]
            out.append("\n".join(parts) if parts else nid)
        return out

    def embeddings_for(self, embedder: Any, ids: list[str], graph: LinkGraph) -> npt.NDArray[np.float32]:
        """Vectors of ``ids`` under ``embedder.name``: read from the store, the missing ones
        embedded once and cached (in the store when it takes writes, else in memory)."""
        name = str(embedder.name)
        dim = int(embedder.dim)
        have: dict[str, npt.NDArray[np.float32]] = {}
        get = getattr(self.kb, "get_embeddings", None)
        if get is not None:
            stored_ids, mat = get(name)
            if len(stored_ids) and mat.shape[1] != dim:
                raise ConceptwalkError(
                    f"the store holds {name!r} vectors of dim {mat.shape[1]}, the embedder makes dim {dim}")
            have = {x: mat[i] for i, x in enumerate(stored_ids)}
        for nid in ids:
            v = self._mem_embeddings.get((name, nid))
            if v is not None and nid not in have:
                have[nid] = v
        missing = [x for x in ids if x not in have]
        if missing:
            vecs = np.ascontiguousarray(embedder.embed(self.node_texts(missing, graph)), dtype=np.float32)
            stored = False
            put = getattr(self.kb, "set_embeddings", None)
            if put is not None:
                try:
                    put(name, missing, vecs)
                    stored = True
                except (sqlite3.Error, ConceptwalkError) as exc:  # e.g. a read-only file
                    _log.warning("could not cache %d embeddings in the store: %s", len(missing), exc)
            for i, x in enumerate(missing):
                have[x] = vecs[i]
                if not stored:
                    self._mem_embeddings[(name, x)] = vecs[i]
        out = np.zeros((len(ids), dim), dtype=np.float32)
        for i, x in enumerate(ids):
            out[i] = have[x]
        return out
