"""The wrapped query over a live store (issue 31): the flat search, the resolution and the walk
read the store's live graph (its base plus the delta written since,
:class:`~conceptwalk.graph.live.LiveGraph`) instead of a full snapshot brought to the last write,
so the query after a write costs the change, not the store.

What the resolution reads of the concepts (their names, vectors and visibility) is the base's
(its :class:`~conceptwalk.wrap._reader.ReadCache`), with the concepts written since the base
(:meth:`LiveRead.written_concepts`: added or renamed, made from their texts now and merged
with the base's top-k, whose rows of them are skipped; their names with the base's): a live read
is made only while the semantic evidence comes from the concepts' texts (the built-in hashing
embedder or a model, no vector stored under its name then or now; a concept written is made
from its title, or its title and body, and scored under every similarity the fusion reads). Everything else a write can change is read
over base plus delta: the flat search and the lexical evidence (BM25 statistics over every
visible document), the flat hits added since, the aliases as the store holds them now, the walk
(rows, edges, their types, weights and annotations), the candidates' rows and the types the
caller sees. Any other case -- stored vectors, a rerank, a delta the
live graph does not express -- takes the full snapshot, as before. Either way the answer is a
fresh build's, bit for bit (``tests/test_live_differential.py``, ``tests/test_live_wrap.py``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..graph import Caller
from ..graph.linkgraph import EDGE_ANNOTATION_KEYS
from ..graph.live import LiveGraph, LiveView, WalkEdges
from ..errors import ConceptwalkError
from ..graph.vectors import DenseDelta, DenseVectors, SparseVectors, vector_topk_arrays
from ._reader import ReadCache, name_phrases, phrase_index
from .config import WalkConfig
from .embed import HashingEmbedder
from .probe import present_types, types_missing
from .walk import LiveProvenance, LiveWalk, Provenance

__all__ = ["LiveRead", "live_read"]


class _MergedIndex:
    """A phrase index (phrase -> concept ids ascending) read as the base's less the ids in
    ``drop`` (the concepts written since: their base names) plus ``b`` (their names now),
    without copying the base's (what :func:`phrases_in` reads: ``get`` and truth)."""

    __slots__ = ("_a", "_b", "_drop")

    def __init__(self, a: dict[str, list[str]], b: dict[str, list[str]], drop: frozenset[str]) -> None:
        self._a, self._b, self._drop = a, b, drop

    def __bool__(self) -> bool:
        return bool(self._a) or bool(self._b)

    def get(self, key: str, default: Any = None) -> Any:
        x, y = self._a.get(key), self._b.get(key)
        if x is not None and not self._drop.isdisjoint(x):
            x = [v for v in x if v not in self._drop] or None
        if y is None:
            return default if x is None else x
        return y if x is None else sorted(set(x).union(y))


_ANNOTATED = frozenset(EDGE_ANNOTATION_KEYS)
#: The base's compiled concept indexes whose top-k the written concepts' rows are merged with:
#: each scores a row as the dense scan does, bit for bit, as :meth:`LiveRead.semantic_written`'s
#: sparse rows do (the hashing vectors of titles and bodies are often too dense for a sparse one).
_EXACT_INDEXES = (SparseVectors, DenseVectors, DenseDelta)


def live_read(retriever: Any, caller: Caller, builtin: Any) -> LiveRead | ReadCache | None:
    """The live read of one wrapped query; or the caches of the store's current state when this
    object holds it (nothing written since it was made); or None: the full snapshot, brought to
    the last write, answers (see the module).

    Parameters
    ----------
    retriever : ConceptAnchoredRetriever
    caller : Caller
    builtin : BuiltinFlatSearch or None
        The built-in search over this store the retriever calls (None: its own flat search).

    Returns
    -------
    LiveRead, ReadCache or None
    """
    source = retriever.source
    kb = source.kb
    cfg: WalkConfig = retriever.config
    if kb is None or not source.annotations or cfg.rank_by != "path" or not callable(getattr(kb, "live_search", None)):
        return None
    if builtin is not None and builtin.mode != "fts":
        return None
    kept = getattr(kb, "kept_state", None)
    if callable(kept):
        st = kept(annotations=source.annotations)
        if st is not None:  # nothing written since the state was made: it answers (read once)
            cache: ReadCache = source.read_cache_of(st)
            return cache
    search = kb.live_search(caller, changed_only=True)
    if search is None:
        return None
    live: LiveGraph = search.live
    written = live.written_types()
    if written is None:
        return None  # a base node's type changed
    concept_types = cfg.concept_node_types
    concepts_written = bool(written) if concept_types is None else not written.isdisjoint(concept_types)
    walk = live.walk_edges()
    if walk is None or not _ANNOTATED <= set(live.base.edge_annotations):
        return None
    base = source.read_cache_of(search.base_state)
    resolver = retriever.resolver
    if resolver.embedder is not None and cfg.semantic_k > 0:
        for emb, part in resolver.semantic_parts():
            # made from the concepts' texts (by the hashing embedder or a model), and no vector
            # stored under its name since (a fresh build would read it): else the full
            # snapshot's columns follow the writes
            if not base.columns_from_text(emb, part) or source.stores_embeddings(emb):
                return None
            if concepts_written and not isinstance(base.concept_columns(emb, part), _EXACT_INDEXES):
                return None  # (the new concepts' rows are merged with a compiled index's top-k)
    read = LiveRead(live, search, base, walk, caller)
    if concepts_written and any(
        read.written_texts(part) is None for part in [cfg] + [p for _, p in resolver.semantic_parts()]
    ):
        return None  # (their bodies not known to the live graph)
    return read


class LiveRead:
    """One wrapped query's read of a live store (made by :func:`live_read`).

    Parameters
    ----------
    live : LiveGraph
    search : LiveSearch
        The caller's search over ``live``.
    base : ReadCache
        The caches of the base's state (what the resolution reads of the concepts).
    walk : WalkEdges
        ``live``'s walk edges.
    caller : Caller
    """

    def __init__(self, live: LiveGraph, search: Any, base: ReadCache, walk: WalkEdges, caller: Caller) -> None:
        self.live = live
        self.search = search
        self.base = base
        self.walk = walk
        self.caller = caller
        self.view: LiveView | None = search.view
        self._key = None if caller.scopes is None else frozenset(caller.scopes)
        #: what identifies this read's store state (the base's, and the live graph's position)
        self.identity = base.identity + (live.version,)

    # ---------------------------------------------------------------- nodes
    def slot(self, node_id: str) -> int | None:
        """The slot of ``node_id`` (None: not a node)."""
        return self.live.slot(node_id)

    def visible_slot(self, slot: int) -> bool:
        return True if self.view is None else self.view.visible(slot)

    def visible_id(self, node_id: str) -> bool:
        """Whether ``node_id`` is a node the caller sees."""
        s = self.live.slot(node_id)
        return s is not None and self.visible_slot(s)

    def node(self, slot: int) -> tuple[str, str, str | None]:
        """``(id, type, title)`` of the node at ``slot``."""
        return self.live.node_at(slot)

    def neighbor_ids(self, node_id: str) -> Iterator[str]:
        """The ids of the visible neighbours of ``node_id``, in id order."""
        s = self.live.slot(node_id)
        if s is None:
            return
        node_at = self.live.node_at
        for v in self.live.core.neighbors(s).tolist():
            if self.visible_slot(v):
                yield node_at(v)[0]

    # ---------------------------------------------------------------- search and resolution
    def flat(self, text: str, k: int) -> list[dict[str, Any]]:
        """The built-in BM25 search's hits (:meth:`BuiltinFlatSearch.search_state`'s dicts)."""
        out = []
        for nid, score in self.search.search(text, k):
            s = self.live.slot(nid)
            assert s is not None  # (a hit is a node of the live graph)
            _, ntype, title = self.live.node_at(s)
            out.append({"id": nid, "type": ntype, "title": title, "score": score})
        return out

    def lexical(self, text: str, k: int, config: WalkConfig, caller: Caller) -> list[str]:
        """:meth:`ReadCache.lexical` over base plus delta: the visible concept nodes by BM25 over
        every document the caller sees."""
        if k <= 0:
            return []
        types = config.concept_node_types
        slots, _ = self.search.hits(text, k, types)
        node_at = self.live.node_at
        return [node_at(s)[0] for s in slots]

    # ---------------------------------------------------------------- concepts written since
    def written_concepts(self, config: WalkConfig) -> tuple[list[str], list[int], list[str], Any, list[int]]:
        """The nodes of a concept type written since the base -- added, or a base concept's row or
        text rewritten -- with their ids ascending, slots and titles now, the rows of the base's
        concept index (:meth:`ReadCache.concept_indices`) that hold the rewritten ones (their
        base names and vectors no longer hold: skipped there, scored here), and those base
        slots ascending. Made once per live graph and concept types: from the lists of the
        graph it grew from and the batch's nodes when that graph made them (an agent's turn
        costs its batch, not the delta), else from every node written since the base."""
        types = config.concept_node_types
        live = self.live
        b = live.base.num_nodes

        def entry(x: str) -> tuple[int, str] | None:
            """``(slot, title)`` of ``x`` now when it is of a concept type, else None."""
            s = live.slot(x)
            if s is None:
                return None
            _, ntype, title = live.node_at(s)
            if types is not None and ntype not in types:
                return None
            return s, title or x  # (what the snapshot embeds: the title, else the id)

        def rows_of(rewritten: list[int]) -> Any:
            if not rewritten:
                return np.zeros(0, dtype=np.int64)
            return np.searchsorted(self.base.concept_indices(config), np.array(rewritten, dtype=np.int64))

        def build() -> tuple[list[str], list[int], list[str], Any, list[int]]:
            found: list[tuple[str, int, str]] = []
            for x in live.written_ids():
                got = entry(x)
                if got is not None:
                    found.append((x, got[0], got[1]))
            found.sort()
            rewritten = sorted(f[1] for f in found if f[1] < b)  # (a retype takes the full state)
            return [f[0] for f in found], [f[1] for f in found], [f[2] for f in found], rows_of(rewritten), rewritten

        def grow(
            prev: tuple[list[str], list[int], list[str], Any, list[int]], written: list[str]
        ) -> tuple[list[str], list[int], list[str], Any, list[int]]:
            pids = prev[0]

            def listed(x: str) -> bool:
                i = bisect.bisect_left(pids, x)
                return i < len(pids) and pids[i] == x

            now = {x: entry(x) for x in written}
            if all(got is None for got in now.values()) and not any(listed(x) for x in now):
                return prev  # the batch wrote no concept, nor over one (an agent's memories)
            ids, slots, titles, rewritten = list(pids), list(prev[1]), list(prev[2]), list(prev[4])
            for x, got in now.items():
                i = bisect.bisect_left(ids, x)
                if i < len(ids) and ids[i] == x:  # written before: its entry as of the parent goes
                    del ids[i], titles[i]
                    s = slots.pop(i)
                    if s < b:
                        rewritten.remove(s)
                if got is not None:
                    ids.insert(i, x)
                    slots.insert(i, got[0])
                    titles.insert(i, got[1])
                    if got[0] < b:
                        bisect.insort(rewritten, got[0])
            rows = prev[3] if rewritten == prev[4] else rows_of(rewritten)
            return ids, slots, titles, rows, rewritten

        return live.memo_grown(("wrap.written-concepts", types), build, grow)  # type: ignore[no-any-return]

    def written_texts(self, config: WalkConfig) -> list[str] | None:
        """The texts the snapshot's concept index embeds for :meth:`written_concepts` (in its
        order) under ``config.concept_text``: the title, else the id; or the title and body
        joined by a newline, else the id (what :meth:`StoreReader.node_texts
        <conceptwalk.wrap._reader.StoreReader.node_texts>` gives). None when a body is not known
        to the live graph (or is not a string): the full snapshot answers."""
        if config.concept_text == "title":
            return self.written_concepts(config)[2]

        def build() -> list[str] | None:
            out = []
            for x in self.written_concepts(config)[0]:
                got = self.live.written_text(x)
                if got is None or not all(p is None or isinstance(p, str) for p in got):
                    return None
                parts = [p for p in got if p]
                out.append("\n".join(parts) if parts else x)
            return out

        return self.live.memo(  # type: ignore[no-any-return]
            ("wrap.written-concept-texts", config.concept_node_types, config.concept_text), build
        )

    def usable_new(self, node_id: str, config: WalkConfig) -> bool:
        """Whether ``node_id`` is a concept added since the base that the caller sees."""
        if node_id not in self._written_set(config):
            return False
        s = self.live.slot(node_id)
        return s is not None and s >= self.live.base.num_nodes and self.visible_slot(s)

    def _written_set(self, config: WalkConfig) -> frozenset[str]:
        return self.live.memo(  # type: ignore[no-any-return]
            ("wrap.written-concept-set", config.concept_node_types),
            lambda: frozenset(self.written_concepts(config)[0]),
        )

    def base_visible(self, config: WalkConfig, visible: Any) -> Any:
        """The base's concept rows the semantic top-k reads: ``visible`` (the caller's, None: all)
        less the rows of the base concepts rewritten since (scored by :meth:`semantic_written`
        instead). Kept per live graph and mask."""
        rows = self.written_concepts(config)[3]
        if not rows.size:
            return visible

        def build() -> tuple[Any, Any]:
            if visible is None:
                out = np.ones(self.base.concept_indices(config).size, dtype=bool)
            else:
                out = np.array(visible, dtype=bool)
            out[rows] = False
            return visible, out

        got = self.live.memo(("wrap.base-visible", config.concept_node_types, id(visible)), build)
        if got[0] is not visible:  # (another mask at a reused address: made again, not kept)
            return build()[1]
        return got[1]

    def _written_vectors(self, embedder: Any, config: WalkConfig) -> Any:
        """The rows of :meth:`written_concepts` under ``embedder`` and ``config.concept_text``,
        made from their texts now (:meth:`written_texts`) as the snapshot's index makes them:
        hashed (:meth:`HashingEmbedder.embed_csr`: :class:`SparseVectors`) or embedded by a model
        (float32 rows, as :meth:`StoreReader.embeddings_for
        <conceptwalk.wrap._reader.StoreReader.embeddings_for>` makes a row no vector is stored
        for). Kept per live graph."""
        texts = self.written_texts(config)
        if texts is None:  # (live_read made no live read then)
            raise RuntimeError("the written concepts' texts are not known")

        def build() -> Any:
            dim = int(embedder.dim)
            if isinstance(embedder, HashingEmbedder):
                indptr, indices, values = embedder.embed_csr(texts)
                return SparseVectors(len(texts), dim, indptr, indices, values)
            # a model's row per text, kept for every graph over this base: a turn embeds only the
            # texts written since the turn before (a model is slow; its rows depend on the text)
            made: dict[str, Any] = self.live.shared(("wrap.model-rows", str(embedder.name), dim), dict)
            missing = [t for t in dict.fromkeys(texts) if t not in made]
            if missing:
                new = np.ascontiguousarray(embedder.embed(missing), dtype=np.float32)
                if new.shape != (len(missing), dim):
                    raise ConceptwalkError(
                        f"the embedder {embedder.name!r} returned shape {new.shape} for {len(missing)} texts "
                        f"of dim {dim}"
                    )
                for t, row in zip(missing, new):
                    made[t] = row
            rows = np.zeros((len(texts), dim), dtype=np.float32)
            for i, t in enumerate(texts):
                rows[i] = made[t]
            rows.setflags(write=False)
            return rows

        key = (
            "wrap.written-concept-vectors",
            str(embedder.name),
            int(embedder.dim),
            config.concept_node_types,
            config.concept_text,
        )
        return self.live.memo(key, build)

    def written_visible(self, config: WalkConfig) -> Any:
        """Per concept of :meth:`written_concepts`, whether the caller sees it (None: all
        access)."""
        if self.view is None:
            return None
        view = self.view
        slots = self.written_concepts(config)[1]
        return np.fromiter((view.visible(s) for s in slots), dtype=bool, count=len(slots))

    def _written_topk(
        self, embedder: Any, config: WalkConfig, query: Any, k: int, min_score: float | None
    ) -> tuple[Any, Any]:
        vectors = self._written_vectors(embedder, config)
        visible = self.written_visible(config)
        if isinstance(vectors, SparseVectors):
            return vectors.topk(query, k, visible=visible, min_score=min_score)
        # the dense scan, whose scores the model's compiled index gives bit for bit
        return vector_topk_arrays(vectors, query, k, visible=visible, min_score=min_score)

    def semantic_written(self, embedder: Any, config: WalkConfig, query: Any, keep: int) -> list[tuple[str, float]]:
        """The top ``keep`` of the visible concepts written since the base by similarity to the
        unit ``query`` (at least ``semantic_threshold``): each row made from its text now
        (:meth:`_written_vectors`) and scored as the full index scores a row (the same dot
        product, bit for bit), so each number equals the full index's for that row; ``(id,
        score)`` by score descending, then id."""
        ids = self.written_concepts(config)[0]
        if not ids:
            return []
        rows, sims = self._written_topk(embedder, config, query, keep, config.semantic_threshold)
        return [(ids[r], s) for r, s in zip(rows.tolist(), sims.tolist())]

    def written_similarities(self, embedder: Any, config: WalkConfig, query: Any) -> Any:
        """Per concept of :meth:`written_concepts`, its similarity to ``query`` under ``embedder``
        and ``config.concept_text`` as the resolver's row scores give a base row (float64; 0
        for one the caller does not see, or a sparse query shares no dimension with)."""
        n = len(self.written_concepts(config)[0])
        out = np.zeros(n, dtype=np.float64)
        if n:
            rows, sims = self._written_topk(embedder, config, query, n, None)
            out[rows] = sims
        return out

    def name_index(self, config: WalkConfig) -> tuple[Any, int]:
        """:meth:`ReadCache.name_index` over base plus delta: the base's less the old names of
        the concepts rewritten since, with the names of those written (each phrase's ids
        ascending, as a fresh build lists them)."""

        def build() -> tuple[Any, int]:
            index, longest = self.base.name_index(config)
            ids, _, titles, _, _ = self.written_concepts(config)
            if not ids:
                return index, longest
            came, came_longest = phrase_index([p for x, t in zip(ids, titles) for p in name_phrases(x, t)])
            return _MergedIndex(index, came, frozenset(ids)), max(longest, came_longest)

        return self.live.memo(("wrap.name-index", config.concept_node_types), build)  # type: ignore[no-any-return]

    def aliases(self) -> dict[str, list[str]]:
        return self.base.aliases(now=True)

    def alias_index(self) -> tuple[dict[str, list[str]], int]:
        return self.base.alias_index(now=True)

    # ---------------------------------------------------------------- the walk
    def base_view(self) -> Any:
        return self.base.graph.view(self.caller)

    def provenance(self) -> LiveProvenance:
        """The caller's provenance renderer of this graph's walk edges (kept with the graph)."""
        bview = self.base_view()
        base = self.base

        def make() -> LiveProvenance:
            prov = bview.memo(("wrap.provenance", base.identity), lambda: Provenance(base.graph, base.presence(bview)))
            return LiveProvenance(prov, self.walk)

        return self.live.memo(("wrap.provenance", self._key), make)  # type: ignore[no-any-return]

    def walk_target(self) -> LiveWalk:
        return LiveWalk(self.live, self.walk, self.view)

    def missing_types(self, config: WalkConfig) -> tuple[dict[str, list[str]], list[str]]:
        """:func:`~conceptwalk.wrap.probe.missing_types` over base plus delta."""
        edge_types, node_types = self.live.memo(("wrap.present-types", self._key), self._present)
        return types_missing(edge_types, node_types, config)

    def _present(self) -> tuple[frozenset[str], frozenset[str]]:
        """The types the caller sees: the base's (kept in its view) and the delta's."""
        bview = self.base_view()
        g = self.base.graph
        vm = bview.mask
        edge_types, node_types = bview.memo(
            ("wrap.present-types", self.base.identity), lambda: present_types(g, None if vm is None else vm.mask)
        )
        live = self.live
        names, codes = live.node_types()
        assert names is not None and codes is not None  # (written_types() was not None)
        b = live.base.num_nodes
        view = self.view
        if codes.size:
            seen = codes if view is None else codes[view.slot_mask]
            node_types = node_types | {names[c] for c in np.unique(seen).tolist()}
        w = self.walk
        if w.keys.size:
            lo = (w.keys >> np.uint64(32)).astype(np.int64)
            hi = (w.keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
            ok = np.ones(lo.size, dtype=bool)
            if view is not None:
                for ends in (lo, hi):
                    inside = ends < b
                    ok[inside] &= view.base_mask[ends[inside]]
                    ok[~inside] &= view.slot_mask[ends[~inside] - b]
            lens = np.diff(w.ptr)
            codes_seen = (w.typedir[np.repeat(ok, lens)] >> 1) if w.typedir.size else w.typedir
            edge_types = edge_types | {w.type_names[c] for c in np.unique(codes_seen).tolist()}
        return frozenset(edge_types), frozenset(node_types)
