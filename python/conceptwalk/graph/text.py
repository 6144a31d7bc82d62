"""Text search over what a caller sees: one tokeniser, an inverted index in the core, and BM25
whose statistics are taken over the caller's visible documents only.

The tokeniser (:func:`tokenize`) is used for documents and queries alike: Unicode compatibility
decomposition (NFKD), case folding, diacritics dropped (combining marks removed), word tokens
(letters and digits; ``_`` and punctuation separate words), each stemmed by the Snowball English
stemmer (PyStemmer). No stop words are removed.

The index (:class:`TextIndex`) maps each term to its postings: (document, weighted term frequency),
documents ascending; a document is a node index of the graph snapshot it was built with. A title
token counts :data:`TITLE_WEIGHT` times, a body token once; a document's length is the sum of its
weighted term frequencies.

Scores are BM25 (``k1 = 1.2``, ``b = 0.75``, Lucene's idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``)
with ``N``, every ``df`` and the average length counted over the *visible* documents, and each
document's score summed over the query's distinct terms in ascending term (string) order. So a
score equals, bit for bit, the score on an index built from the store with the hidden nodes
deleted; ranking is by score descending, then node index (= id) ascending.

Common words: none are dropped (dropping them would change what a one-word query finds). A
common word has a low idf, hence a low upper bound; the core's MaxScore pruning makes the lists
whose bounds together cannot lift a document into the current top k "non-essential": they never
generate candidates and are only probed (by galloping search) for documents that the rare words
brought up, and only while the document can still reach the top k. A natural-language question
full of common words therefore costs about what its rare words cost.

Examples
--------
>>> ix = TextIndex.build(["Graph walks", "Vector search", "Secret graph"], [None, "ann", "walks"])
>>> tokenize("Walking GRAPHS, déjà vu")
['walk', 'graph', 'deja', 'vu']
>>> ix.search("graph walks", 3)
([0, 2], [1.3466..., 1.0901...])
>>> deleted = TextIndex.build(["Graph walks", "Vector search"], [None, "ann"])  # doc 2 deleted
>>> ix.search("graph walks", 3, visible=np.array([True, True, False])) == deleted.search("graph walks", 3)
True
"""

from __future__ import annotations

import bisect
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from ..errors import ConceptwalkError, InputError
from ._intern import intern_strings
from .view import View

__all__ = ["TITLE_WEIGHT", "TOKENIZER_VERSION", "TextIndex", "text_search", "tokenize", "words"]

#: A title token counts this many times in its document's term frequency and length.
TITLE_WEIGHT = 2
#: How many texts' query terms a :class:`TextIndex` keeps (:meth:`TextIndex.query_terms`).
QUERY_TERMS_MEMO = 64

#: Bumped whenever :func:`tokenize` can give different tokens; a persisted index records it.
TOKENIZER_VERSION = 1
#: Most distinct query terms used (the first ones, in query order; independent of the store).
MAX_QUERY_TERMS = 1024
#: BM25 parameters.
K1 = 1.2
B = 0.75

_WORD = re.compile(r"[^\W_]+")
_FORMAT = 1
_local = threading.local()


def _stemmer() -> Any:
    st = getattr(_local, "stemmer", None)
    if st is None:  # PyStemmer objects are not thread-safe: one per thread
        try:
            import Stemmer
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise ImportError("conceptwalk's text search needs PyStemmer (pip install PyStemmer)") from exc
        st = _local.stemmer = Stemmer.Stemmer("english")
    return st


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    s = unicodedata.normalize("NFKD", text).casefold()
    s = unicodedata.normalize("NFKD", s)  # case folding can produce decomposable characters
    return "".join(c for c in s if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    return _WORD.findall(_fold(text))


def words(text: str) -> list[str]:
    """The words of ``text`` as the analyzer splits and folds them, before stemming (what a stop
    list is checked against: :mod:`conceptwalk.graph.names`).

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str

    Examples
    --------
    >>> words("The Rôle of PUSH-based walks_2")
    ['the', 'role', 'of', 'push', 'based', 'walks', '2']
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    return _words(text)


def tokenize(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept: folded (NFKD, case, diacritics), split into
    words (letters and digits) and stemmed (Snowball English).

    Parameters
    ----------
    text : str

    Returns
    -------
    list of str

    Examples
    --------
    >>> tokenize("The Rôle of PUSH-based walks_2")
    ['the', 'role', 'of', 'push', 'base', 'walk', '2']
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a string, got {type(text).__name__}")
    words = _words(text)
    return list(_stemmer().stemWords(words)) if words else []


def _mask_u8(mask: npt.NDArray[np.bool_] | None, n: int, name: str) -> npt.NDArray[np.uint8] | None:
    if mask is None:
        return None
    arr = np.asarray(mask)
    if arr.dtype != np.bool_ or arr.shape != (n,):
        raise InputError(
            f"{name}: expected a boolean mask of shape ({n},), got dtype {arr.dtype} and shape {arr.shape}"
        )
    return np.ascontiguousarray(arr).view(np.uint8)


def _positions(a: npt.ArrayLike, name: str) -> npt.NDArray[np.int32]:
    arr = np.asarray(a)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int32)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise InputError(
            f"{name} must be a 1-D array of integer positions, got dtype {arr.dtype} and shape {arr.shape}"
        )
    if int(arr.min()) < 0 or int(arr.max()) > np.iinfo(np.int32).max:
        raise InputError(f"{name}: positions must be in [0, 2**31), got {int(arr.min())}..{int(arr.max())}")
    return np.ascontiguousarray(arr, dtype=np.int32)


class TextIndex:
    """An inverted index over ``num_docs`` documents (node indices) with BM25 top-k over any
    visible subset. Build with :meth:`build`, persist with :meth:`to_arrays` /
    :meth:`from_arrays`.

    Memory: 8 bytes per posting (int32 document, int32 tf), 24 per term (offsets and two
    bounds) plus 8 per distinct tf of a term (the exact unmasked BM25 bound), 4 per document,
    plus the vocabulary (its UTF-8 bytes and an 8-byte offset per term).

    Following writes: :meth:`with_changes` gives the index of a new set of documents that differs
    in a few of them, equal to a fresh :meth:`build`, at the cost of tokenising those and one pass
    of the core over the postings.

    Parameters
    ----------
    core : conceptwalk._core.TextIndex
        The compiled postings.
    vocabulary : list of str
        The terms, sorted (term id = position).
    term_ids : dict, optional
        ``term -> id`` when already at hand (otherwise a query's terms are found by bisecting
        the sorted vocabulary).
    """

    def __init__(self, core: _core.TextIndex, vocabulary: list[str], *, term_ids: dict[str, int] | None = None) -> None:
        if len(vocabulary) != core.num_terms:
            raise InputError(f"vocabulary has {len(vocabulary)} terms, the postings {core.num_terms}")
        self._core = core
        self.vocabulary = vocabulary
        self._term_ids: dict[str, int] | None = term_ids
        # The all-documents statistics (not per caller: a caller's are kept in its View).
        self._all_stats: _core.TextStats | None = None
        self._lock = threading.Lock()
        # The term ids of the last texts asked (query_terms): a wrapped query's flat search and its
        # resolver's lexical step search one text, tokenised once (not per caller: the terms of a
        # text do not depend on who asks; bounded, oldest out).
        self._terms_memo: dict[str, npt.NDArray[np.int32]] = {}

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        titles: Sequence[str | None],
        bodies: Sequence[str | None] | None = None,
        *,
        title_weight: int = TITLE_WEIGHT,
    ) -> TextIndex:
        """Index documents ``0..n-1`` from their titles and bodies (``None`` = empty).

        Parameters
        ----------
        titles : sequence of str or None
            Per document, its title (each token counts ``title_weight`` times).
        bodies : sequence of str or None, optional
            Per document, its body (aligned with ``titles``).
        title_weight : int
            Weight of a title token (default :data:`TITLE_WEIGHT`).

        Returns
        -------
        TextIndex

        Examples
        --------
        >>> ix = TextIndex.build(["a b", None], ["b", "c c"])
        >>> ix.num_docs, ix.vocabulary, ix.doc_lengths.tolist()
        (2, ['a', 'b', 'c'], [5, 2])
        """
        n = len(titles)
        if bodies is not None and len(bodies) != n:
            raise InputError(f"bodies must have {n} entries (one per title), got {len(bodies)}")
        if isinstance(title_weight, bool) or not isinstance(title_weight, int) or not 1 <= title_weight <= 1000:
            raise InputError(f"title_weight must be an integer in [1, 1000], got {title_weight!r}")
        table: dict[str, int] = {}
        names: list[str] = []
        parts = []
        for col, what in ((titles, "titles"), (bodies, "bodies")):
            words: list[str] = []
            ptr = np.zeros(n + 1, dtype=np.int64)
            if col is not None:
                for d, text in enumerate(col):
                    if text:
                        if not isinstance(text, str):
                            raise InputError(f"{what}[{d}] must be a string or None, got {type(text).__name__}")
                        words.extend(_words(text))
                    ptr[d + 1] = len(words)
            stems = list(_stemmer().stemWords(words)) if words else []
            parts.append((ptr, intern_strings(stems, table, names)))
        vocab = sorted(names)
        rank = np.empty(len(names), dtype=np.int32)
        order = np.asarray(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
        rank[order] = np.arange(len(names), dtype=np.int32)
        (tptr, tcodes), (bptr, bcodes) = parts
        core = _core.TextIndex.build(
            n,
            len(vocab),
            tptr,
            rank[tcodes] if tcodes.size else tcodes.astype(np.int32),
            bptr,
            rank[bcodes] if bcodes.size else bcodes.astype(np.int32),
            title_weight,
        )
        return cls(core, vocab, term_ids={t: i for i, t in enumerate(vocab)})

    def with_changes(
        self,
        num_docs: int,
        dropped: npt.ArrayLike,
        changed: npt.ArrayLike,
        titles: Sequence[str | None],
        bodies: Sequence[str | None] | None = None,
    ) -> TextIndex:
        """The index of a new set of ``num_docs`` documents that differs from this one's in a few
        documents, equal to a fresh :meth:`build` of the new set array for array, at the cost of
        tokenising the changed documents and one pass of the core over the postings (following
        a write).

        The documents are node indices (the rank of a sorted id): ``dropped`` are this index's
        documents that are gone or changed, ``changed`` the new positions of the documents that
        are new or changed (``titles[i]`` / ``bodies[i]`` being the text of ``changed[i]``).
        Every other document is the same document with the same text in both sets, so the
        ``k``-th of this index's documents not in ``dropped`` is the ``k``-th new position not
        in ``changed``; it keeps its postings, renumbered. The vocabularies are merged by
        bisecting the changed documents' few terms into this index's sorted vocabulary; terms
        that no document uses any more are dropped.

        Parameters
        ----------
        num_docs : int
            Documents of the new index.
        dropped : array-like of int
            This index's documents that are deleted or changed, strictly ascending.
        changed : array-like of int
            The new positions of the new or changed documents, strictly ascending
            (``num_docs - len(changed) == self.num_docs - len(dropped)``).
        titles, bodies : sequences of str or None
            Per changed document (aligned with ``changed``), its title and body.

        Returns
        -------
        TextIndex

        Raises
        ------
        InputError
            Positions out of range, not ascending, or not fitting the two sets.

        Examples
        --------
        >>> old = TextIndex.build(["graph walks", "cuts"], [None, "min cut"])
        >>> # document 1 changes its body and a new document sorts last
        >>> new = old.with_changes(3, [1], [1, 2], ["cuts", "random walks"], ["max cut", None])
        >>> fresh = TextIndex.build(["graph walks", "cuts", "random walks"], [None, "max cut", None])
        >>> all(np.array_equal(a, b) for a, b in zip(new.to_arrays().values(), fresh.to_arrays().values()))
        True
        >>> new.vocabulary
        ['cut', 'graph', 'max', 'random', 'walk']
        """
        if (
            isinstance(num_docs, bool)
            or not isinstance(num_docs, (int, np.integer))
            or not 0 <= num_docs <= np.iinfo(np.int32).max
        ):
            raise InputError(f"num_docs must be an integer in [0, 2**31), got {num_docs!r}")
        drop = _positions(dropped, "dropped")
        chg = _positions(changed, "changed")
        if len(titles) != chg.shape[0] or (bodies is not None and len(bodies) != chg.shape[0]):
            raise InputError(
                f"titles and bodies must hold one entry per changed document ({chg.shape[0]}), "
                f"got {len(titles)} and {'None' if bodies is None else len(bodies)}"
            )
        sub = TextIndex.build(titles, bodies, title_weight=self.title_weight)
        old_v = self.vocabulary
        nv = len(old_v)
        at = [bisect.bisect_left(old_v, w) for w in sub.vocabulary]
        known = [p < nv and old_v[p] == w for p, w in zip(at, sub.vocabulary)]
        try:
            core, gone = self._core.with_changes(
                int(num_docs), drop, chg, sub.core, np.asarray(at, dtype=np.int32), np.asarray(known, dtype=np.uint8)
            )
        except ValueError as exc:
            raise InputError(f"text index with_changes: {exc}") from None
        # the new vocabulary: old terms minus the dropped ones, the new terms bisected in
        # (slices of the old list between the few edits: no per-term Python work)
        # (a new term at p sorts before old term p: inserts come before the drop of the same p)
        edits = sorted(
            [(p, 0, w) for p, w, k in zip(at, sub.vocabulary, known) if not k] + [(p, 1, "") for p in gone.tolist()]
        )
        words: list[str] = []
        start = 0
        for p, drop_it, w in edits:
            words.extend(old_v[start:p])
            if drop_it:
                start = p + 1
            else:
                start = p
                words.append(w)
        words.extend(old_v[start:])
        return TextIndex(core, words)

    def advanced(
        self, keep: npt.ArrayLike, titles: Sequence[str | None], bodies: Sequence[str | None] | None = None
    ) -> TextIndex:
        """The index of a new set of documents, reusing this index's postings for the documents
        that did not change: equal to ``TextIndex.build(titles, bodies)`` array for array, at the
        cost of tokenising only the changed documents (see :meth:`with_changes`, which takes
        only the changed positions and texts).

        Parameters
        ----------
        keep : array-like of int
            Per new document, the index in *this* index of the same document with the same title
            and body, or -1 when it is new or changed (it is then tokenised from ``titles`` /
            ``bodies``). Kept documents in their old order are merged; any other order is built
            afresh.
        titles, bodies : sequences of str or None
            Per new document its title and body (only read where ``keep`` is -1).

        Returns
        -------
        TextIndex

        Examples
        --------
        >>> old = TextIndex.build(["graph walks", "cuts"], [None, "min cut"])
        >>> new = old.advanced([0, -1, -1], ["graph walks", "cuts", "random walks"], [None, "max cut", None])
        >>> fresh = TextIndex.build(["graph walks", "cuts", "random walks"], [None, "max cut", None])
        >>> all(np.array_equal(a, b) for a, b in zip(new.to_arrays().values(), fresh.to_arrays().values()))
        True
        """
        n = len(titles)
        kp = np.asarray(keep, dtype=np.int64)
        c = self._core
        if kp.shape != (n,) or (n and (kp.min() < -1 or kp.max() >= c.num_docs)):
            raise InputError(f"keep must hold {n} positions in [-1, {c.num_docs})")
        if bodies is not None and len(bodies) != n:
            raise InputError(f"bodies must have {n} entries (one per title), got {len(bodies)}")
        sel = kp >= 0
        kept = kp[sel]
        if kept.size and np.unique(kept).shape[0] != kept.shape[0]:
            raise InputError("keep must not name one old document twice")
        if kept.size > 1 and np.any(np.diff(kept) <= 0):  # not the old order: no merge possible
            return TextIndex.build(titles, bodies, title_weight=self.title_weight)
        dropped = np.ones(c.num_docs, dtype=bool)
        dropped[kept] = False
        redo = np.flatnonzero(~sel)
        rl = redo.tolist()
        return self.with_changes(
            n,
            np.flatnonzero(dropped),
            redo,
            [titles[i] for i in rl],
            None if bodies is None else [bodies[i] for i in rl],
        )

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The index as named numpy arrays (what a snapshot persists): ``text_meta`` (int64:
        format, tokenizer version, title weight, documents), ``text_vocab_bytes`` (uint8, the
        sorted terms' UTF-8 concatenated), ``text_vocab_offsets`` (int64, terms + 1),
        ``text_offsets`` (int64, terms + 1), ``text_docs`` and ``text_tfs`` (int32 per posting),
        ``text_doc_len`` (int32 per document). Read-only views; :meth:`from_arrays` inverts it.

        Returns
        -------
        dict of str to numpy.ndarray

        Examples
        --------
        >>> ix = TextIndex.build(["a b"], ["b"])
        >>> back = TextIndex.from_arrays(ix.to_arrays())
        >>> back.vocabulary, back.search("b", 1) == ix.search("b", 1)
        (['a', 'b'], True)
        """
        enc = [t.encode("utf-8") for t in self.vocabulary]
        voff = np.zeros(len(enc) + 1, dtype=np.int64)
        if enc:
            voff[1:] = np.cumsum([len(b) for b in enc])
        c = self._core
        return {
            "text_meta": np.array([_FORMAT, TOKENIZER_VERSION, c.title_weight, c.num_docs], dtype=np.int64),
            "text_vocab_bytes": np.frombuffer(b"".join(enc), dtype=np.uint8),
            "text_vocab_offsets": voff,
            "text_offsets": c.offsets,
            "text_docs": c.docs,
            "text_tfs": c.tfs,
            "text_doc_len": c.doc_len,
        }

    @classmethod
    def from_arrays(cls, arrays: Any) -> TextIndex:
        """Rebuild from :meth:`to_arrays`'s arrays, validated: a damaged or foreign set raises
        :class:`~conceptwalk.errors.InputError`.

        Parameters
        ----------
        arrays : mapping of str to array
            The arrays :meth:`to_arrays` names (e.g. a memory-mapped snapshot's).

        Returns
        -------
        TextIndex
        """
        try:
            meta = np.asarray(arrays["text_meta"], dtype=np.int64)
            vb = np.asarray(arrays["text_vocab_bytes"], dtype=np.uint8)
            voff = np.asarray(arrays["text_vocab_offsets"], dtype=np.int64)
            parts = [np.ascontiguousarray(arrays[k]) for k in ("text_offsets", "text_docs", "text_tfs", "text_doc_len")]
        except KeyError as exc:
            raise InputError(f"text index arrays: missing {exc.args[0]!r}") from None
        if meta.shape != (4,) or int(meta[0]) != _FORMAT:
            raise InputError(f"text index arrays: unknown format {meta.tolist()!r}")
        if int(meta[1]) != TOKENIZER_VERSION:
            raise InputError(
                f"text index arrays: tokenizer version {int(meta[1])}, this conceptwalk "
                f"tokenises with version {TOKENIZER_VERSION}; rebuild the index"
            )
        nt = voff.shape[0] - 1
        if voff.ndim != 1 or nt < 0 or voff[0] != 0 or voff[-1] != vb.shape[0] or np.any(np.diff(voff) < 0):
            raise InputError("text index arrays: text_vocab_offsets do not delimit text_vocab_bytes")
        raw = vb.tobytes()
        try:
            vocab = [raw[a:b].decode("utf-8") for a, b in zip(voff[:-1].tolist(), voff[1:].tolist())]
        except UnicodeDecodeError:
            raise InputError("text index arrays: the vocabulary is not UTF-8") from None
        if any(a >= b for a, b in zip(vocab, vocab[1:])):
            raise InputError("text index arrays: the vocabulary must be sorted and unique")
        for arr, (name, dt) in zip(
            parts,
            (("text_offsets", np.int64), ("text_docs", np.int32), ("text_tfs", np.int32), ("text_doc_len", np.int32)),
        ):
            if arr.dtype != dt or arr.ndim != 1:
                raise InputError(
                    f"text index arrays: {name} must be 1-D {np.dtype(dt).name}, got {arr.dtype} {arr.shape}"
                )
        if parts[0].shape[0] != nt + 1:
            raise InputError(f"text index arrays: text_offsets must have {nt + 1} entries, got {parts[0].shape[0]}")
        try:
            # the postings are offered to be kept, not copied: the binding keeps them (and so the
            # mapping) only over memory no Python code can change (a read-only mapped snapshot
            # file's), else copies them
            offsets, docs, tfs, doc_len = parts
            core = _core.TextIndex.from_arrays(
                int(meta[3]), int(meta[2]), offsets, docs, tfs, doc_len, borrow=(docs, tfs)
            )
        except ValueError as exc:
            raise InputError(f"text index arrays: {exc}") from None
        return cls(core, vocab)

    # ------------------------------------------------------------------ properties
    @property
    def num_docs(self) -> int:
        """Documents (node indices ``0..num_docs-1``)."""
        return int(self._core.num_docs)

    @property
    def num_terms(self) -> int:
        """Distinct terms."""
        return int(self._core.num_terms)

    @property
    def num_postings(self) -> int:
        """(term, document) pairs."""
        return int(self._core.num_postings)

    @property
    def title_weight(self) -> int:
        """How many times a title token counts."""
        return int(self._core.title_weight)

    @property
    def doc_lengths(self) -> npt.NDArray[np.int32]:
        """Per document, the sum of its weighted term frequencies (read-only)."""
        return self._core.doc_len

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the postings, offsets, bounds, lengths and vocabulary."""
        return int(self._core.memory_bytes) + sum(len(t.encode("utf-8")) + 8 for t in self.vocabulary)

    @property
    def core(self) -> _core.TextIndex:
        """The compiled index."""
        return self._core

    def __repr__(self) -> str:
        return f"TextIndex(docs={self.num_docs}, terms={self.num_terms}, postings={self.num_postings})"

    # ------------------------------------------------------------------ queries
    def query_terms(self, text: str) -> npt.NDArray[np.int32]:
        """Term ids of ``text``'s distinct terms that the index holds (ascending): the first
        :data:`MAX_QUERY_TERMS` distinct terms of the query, independent of the store.

        Parameters
        ----------
        text : str
            The query.

        Returns
        -------
        numpy.ndarray of int32
            Read-only; the same array for the same text while it is among the last
            :data:`QUERY_TERMS_MEMO` texts asked of this index (tokenised once).
        """
        memo = self._terms_memo
        got = memo.get(text)
        if got is not None:
            return got
        got = self._query_terms(text)
        got.setflags(write=False)
        if len(memo) >= QUERY_TERMS_MEMO:
            try:
                del memo[next(iter(memo))]
            except (StopIteration, KeyError, RuntimeError):  # another thread emptied or changed it
                pass
        memo[text] = got
        return got

    def term_id(self, term: str) -> int:
        """The id of ``term`` (a token, as :func:`tokenize` gives it), or -1 when no document
        holds it.

        Parameters
        ----------
        term : str

        Returns
        -------
        int
        """
        ids = self._term_ids
        if ids is not None:
            return ids.get(term, -1)
        vocab = self.vocabulary  # bisected: no O(terms) map to build after a write
        p = bisect.bisect_left(vocab, term)
        return p if p < len(vocab) and vocab[p] == term else -1

    def _query_terms(self, text: str) -> npt.NDArray[np.int32]:
        distinct = list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TERMS]
        found = sorted(i for i in map(self.term_id, distinct) if i >= 0)
        return np.asarray(found, dtype=np.int32)

    def stats_for(self, visibility: Any) -> _core.TextStats:
        """BM25 statistics over the documents a caller sees: N, the total length, and per term
        its visible document frequency and its largest contribution (MaxScore's exact upper
        bound).

        Parameters
        ----------
        visibility : View, VisibilityMask or None
            A caller's :class:`~conceptwalk.graph.view.View` of this index's graph (the
            statistics are kept in the view, computed once per caller); None: all documents
            (kept in this index); a bare prepared mask: computed for this call (one pass over
            the postings; pass the view to keep them).

        Returns
        -------
        conceptwalk._core.TextStats
        """
        if visibility is None:
            st = self._all_stats
            if st is None:
                with self._lock:
                    st = self._all_stats
                    if st is None:
                        st = self._all_stats = self._core.stats(None, K1, B)
            return st
        if isinstance(visibility, View):
            return visibility.text_stats(self)
        return self.stats_over(visibility)

    def stats_over(self, mask: _core.VisibilityMask) -> _core.TextStats:
        """BM25 statistics over the documents ``mask`` admits, computed now (not kept: see
        :meth:`stats_for`).

        Parameters
        ----------
        mask : VisibilityMask
            A prepared mask over this index's documents.

        Returns
        -------
        conceptwalk._core.TextStats
        """
        return self._core.stats(_mask_u8(mask.mask, self.num_docs, "visible"), K1, B)

    def search_indices(
        self, text: str, k: int, *, visible: Any = None, eligible: npt.NDArray[np.bool_] | None = None
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]:
        """Top ``k`` documents for ``text`` as arrays, by BM25 over the visible documents.

        Parameters
        ----------
        text : str
            Any text (every word is a term).
        k : int
            The most documents.
        visible : None, View, boolean mask or VisibilityMask
            None: all documents; a caller's :class:`~conceptwalk.graph.view.View` of the graph
            (statistics kept in the view); a boolean mask over the documents or a prepared
            :class:`~conceptwalk.graph.VisibilityMask` (statistics counted for this query).
        eligible : boolean mask, optional
            The documents that may be returned (a filter such as node types; implies visible);
            the statistics stay those of ``visible``.

        Returns
        -------
        (docs, scores) : (numpy.ndarray of int32, numpy.ndarray of float64)
            By score descending, then document ascending.
        """
        if not isinstance(text, str):
            raise InputError(f"text must be a string, got {type(text).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        terms = self.query_terms(text)
        n = self.num_docs
        stats = None
        if visible is None:
            vis = None
            stats = self.stats_for(None)
        elif isinstance(visible, View):
            vm = visible.mask
            vis = None if vm is None else _mask_u8(vm.mask, n, "visible")
            stats = visible.text_stats(self)
        elif isinstance(visible, _core.VisibilityMask):
            vis = _mask_u8(visible.mask, n, "visible")  # statistics counted by the core, per query
        else:
            vis = _mask_u8(visible, n, "visible")
        # (the core returns only documents both masks admit: no O(documents) AND per query here)
        elig = _mask_u8(eligible, n, "eligible")
        if terms.size == 0:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64)
        docs, scores, _, _ = _core.bm25_topk(self._core, terms, k, vis, elig, stats, K1, B)
        return docs, scores

    def search(
        self, text: str, k: int, *, visible: Any = None, eligible: npt.NDArray[np.bool_] | None = None
    ) -> tuple[list[int], list[float]]:
        """Like :meth:`search_indices`, as lists.

        Parameters
        ----------
        text : str
            Any text.
        k : int
            The most documents.
        visible : None, View, boolean mask or VisibilityMask
            What the caller sees (see :meth:`search_indices`).
        eligible : boolean mask, optional
            The documents that may be returned.

        Returns
        -------
        (docs, scores) : (list of int, list of float)
        """
        docs, scores = self.search_indices(text, k, visible=visible, eligible=eligible)
        return docs.tolist(), scores.tolist()


#: How many node-type masks a graph keeps for searches filtered by type (distinct type sets; the
#: least recently used is dropped first): one byte per node each.
ELIGIBLE_MASKS = 8


class _EligibleMasks:
    """A graph's kept node-type masks, by type set (see :func:`eligible_nodes`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._masks: dict[frozenset[str], npt.NDArray[np.bool_]] = {}

    def get(self, graph: Any, wanted: frozenset[str]) -> npt.NDArray[np.bool_]:
        with self._lock:
            got = self._masks.pop(wanted, None)
            if got is None:
                flags = np.array([t in wanted for t in graph.node_type_names], dtype=bool)
                got = flags[graph.node_type_codes] if flags.size else np.zeros(graph.num_nodes, dtype=bool)
                got.setflags(write=False)
            self._masks[wanted] = got  # (re)inserted last: the most recently used
            while len(self._masks) > ELIGIBLE_MASKS:
                del self._masks[next(iter(self._masks))]
            return got


def type_set(node_types: str | Iterable[str]) -> frozenset[str]:
    """The node type names a search keeps: one name, or every name of an iterable (as text).

    Parameters
    ----------
    node_types : str or iterable of str

    Returns
    -------
    frozenset of str

    Examples
    --------
    >>> sorted(type_set("DOC")), sorted(type_set(["DOC", "CONCEPT"]))
    (['DOC'], ['CONCEPT', 'DOC'])
    """
    return frozenset((node_types,)) if isinstance(node_types, str) else frozenset(str(t) for t in node_types)


def eligible_nodes(graph: Any, wanted: frozenset[str]) -> npt.NDArray[np.bool_]:
    """Per node of ``graph``, whether its type is one of ``wanted``: made once per (graph, type
    set) and kept, read-only, with the graph's all-access view (at most :data:`ELIGIBLE_MASKS`
    of them), so that a search filtered by node type allocates nothing per node per query.

    Parameters
    ----------
    graph : LinkGraph
    wanted : frozenset of str
        Node type names.

    Returns
    -------
    numpy.ndarray of bool
        Read-only, one entry per node.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([], nodes=[{"id": "a", "type": "DOC"}, {"id": "b", "type": "CONCEPT"}])
    >>> m = eligible_nodes(g, frozenset({"CONCEPT"}))
    >>> m.tolist(), eligible_nodes(g, frozenset({"CONCEPT"})) is m
    ([False, True], True)
    """
    from .visibility import Caller

    masks: _EligibleMasks = graph.view(Caller.all_access()).memo(("text.eligible-masks",), _EligibleMasks)
    return masks.get(graph, wanted)


def text_search(
    index: TextIndex, graph: Any, text: str, k: int, *, visible: Any = None, node_types: Iterable[str] | None = None
) -> list[tuple[str, float]]:
    """BM25 top ``k`` over the nodes of ``graph`` that ``visible`` admits, as ``(id, score)``.

    Parameters
    ----------
    index : TextIndex
        Built from ``graph``'s nodes, in its node order.
    graph : LinkGraph
    text : str
        Any text (no query syntax: every word is a term; no word characters gives ``[]``).
    k : int
        The most hits.
    visible : None, prepared VisibilityMask, boolean mask or ids
        What the caller sees (see :meth:`LinkGraph.visibility`); statistics are over these only.
    node_types : iterable of str, optional
        Only nodes of these types are returned (the statistics stay those of everything visible).

    Returns
    -------
    list of (id, score)
        By score descending, then id ascending.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([], nodes=[{"id": "a", "title": "graph walks"},
    ...                                     {"id": "b", "title": "graph", "type": "CONCEPT"}])
    >>> ix = TextIndex.build(g.titles)
    >>> [i for i, _ in text_search(ix, g, "graph", 5)], [i for i, _ in text_search(ix, g, "graph", 5, node_types=["CONCEPT"])]
    (['b', 'a'], ['b'])
    """
    n = graph.num_nodes
    if index.num_docs != n:
        raise ConceptwalkError(f"the text index has {index.num_docs} documents, the graph {n} nodes")
    if visible is None or isinstance(visible, (View, _core.VisibilityMask)):
        vis: Any = visible  # a caller's view: its statistics are kept in it
    elif isinstance(visible, np.ndarray) and visible.dtype == np.bool_:
        vis = visible
    else:
        vm = graph.visibility(visible)  # ids: one mask for this call only
        vis = None if vm is None else vm.mask
    eligible = None
    if node_types is not None:
        wanted = type_set(node_types)
        if not wanted:
            return []
        eligible = eligible_nodes(graph, wanted)
    docs, scores = index.search(text, k, visible=vis, eligible=eligible)
    ids = graph.ids
    return [(ids[d], s) for d, s in zip(docs, scores)]
