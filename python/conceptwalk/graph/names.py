"""What a question names, and what is left of it once its stopwords are dropped.

A user types ids and aliases (``tls``, ``ssl``) as often as words of a title. Two rules, shared by
:meth:`KnowledgeBase.search <conceptwalk.kb.store.KnowledgeBase.search>` and the question path of
:func:`conceptwalk.graph_context` (and so by the retrievers and the MCP tools built on them):

**Names.** A question *names* a node when a run of consecutive words of the question, normalised
as the wrap's resolver normalises aliases (:func:`normalize_text`: NFKC, lowercase, punctuation to
spaces), equals the normalised id of the node or the normalised form of one of its aliases (an
alias names each of its canonical ids). A phrase inside a longer question counts ("how does tls
work" names ``tls``), as whole words only ("tlsv1" does not); a run made of stopwords only never
names anything (a node ``a`` is not named by "what is a graph"). Every run that matches counts,
none hides another. Only nodes the caller sees are named: a hidden node's id or alias names
nothing, and an alias whose canonical ids are all hidden names nothing.

**Stopwords.** The text analyzer (Snowball English stemming, :mod:`conceptwalk.graph.text`) has the
Snowball project's English stop list (:data:`STOPWORDS`, from the ``stopwords`` package): the
question's words on it are dropped before the text search, so ``"the of and"`` searches nothing
(and the answer says so) instead of seeding from every title with "and" in it.

Examples
--------
>>> from conceptwalk.graph import LinkGraph
>>> g = LinkGraph.from_edges([("tls", "x509")], nodes=[{"id": "tls", "title": "Transport Layer Security"}])
>>> ix = NameIndex.of_graph(g)
>>> [(g.ids[i], phrase) for i, phrase in named_nodes("How does TLS use X.509?", g, None, [ix])]
[('tls', 'tls')]
>>> content_text("the of and"), content_text("the TLS handshake")
('', 'tls handshake')
"""

from __future__ import annotations

import re
import threading
import unicodedata
import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .text import eligible_nodes, text_search, type_set, words

__all__ = [
    "ANALYZER",
    "MAX_NAME_WORDS",
    "STOPWORDS",
    "NameIndex",
    "content_text",
    "LiveSearch",
    "live_name_indexes",
    "named_nodes",
    "named_search",
    "normalize_text",
    "source_name_indexes",
]

#: The text analyzer's name: its stemmer and its stop list.
ANALYZER = "snowball-english"

#: Longest name (in words) a question is searched for (longer names are never matched).
MAX_NAME_WORDS = 12


def _stop_list() -> frozenset[str]:
    """The Snowball English stop list (the ``stopwords`` package's ``english`` list, the one
    the Snowball project publishes for its English stemmer), split into the analyzer's words
    (``"aren't"`` gives ``aren`` and ``t``)."""
    try:
        from stopwords import get_stopwords
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ImportError("conceptwalk's text search needs the stopwords package (pip install stopwords)") from exc
    return frozenset(w for entry in get_stopwords("english") for w in words(entry))


#: The analyzer's stopwords (folded words, as :func:`conceptwalk.graph.text.words` gives them).
STOPWORDS: frozenset[str] = _stop_list()


# --------------------------------------------------------------------------- normalisation
class _CharMap(dict):  # type: ignore[type-arg]
    """``str.translate`` table built lazily: punctuation, control characters and lone surrogates
    become a space, format characters (soft hyphen, zero-width joiner, BOM, ...) are removed,
    everything else is kept."""

    def __missing__(self, code: int) -> int | str | None:
        cat = unicodedata.category(chr(code))
        value: int | str | None
        if cat[0] == "P" or cat in ("Cc", "Cs"):
            value = " "
        elif cat == "Cf":
            value = None
        else:
            value = code
        self[code] = value
        return value


_CHAR_MAP = _CharMap()
for _code in range(128):
    _CHAR_MAP[_code]  # pre-fill the ASCII range
del _code


def normalize_text(text: str) -> str:
    """Normalise a text for matching: NFKC, lowercase, punctuation to spaces, one space between words.

    Steps, in order: Unicode NFKC (folds full-width and compatibility forms), ``str.lower``;
    every punctuation character (Unicode category ``P*``: hyphens, underscores, dots, quotes,
    brackets, ...), control character and lone surrogate becomes a space; format characters
    (category ``Cf``: soft hyphen, zero-width joiner, byte order mark) are removed; NFKC once
    more (for non-ASCII text) so that the result is stable; runs of whitespace collapse to one space and the ends are trimmed. Symbols (``+``, ``$``, ``=``)
    and letters of every script are kept.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    str
        The normalised text; ``""`` when nothing but punctuation and whitespace was there.

    Raises
    ------
    TypeError
        If ``text`` is not a ``str``.

    Examples
    --------
    >>> normalize_text("  Vector-Index_lookup!  ")
    'vector index lookup'
    >>> normalize_text("ＣＡＦÉ  au\\tlait")
    'café au lait'
    >>> normalize_text("--- ...")
    ''
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    folded = unicodedata.normalize("NFKC", text).lower().translate(_CHAR_MAP)
    if not folded.isascii():
        # lowercasing and removing format characters can leave sequences that compose again
        # (e.g. "E\u00ad\u0301" -> "e\u0301" -> "é"): one more NFKC makes the result stable
        folded = unicodedata.normalize("NFKC", folded)
    return " ".join(folded.split())


#: ``bytes.translate`` table of :func:`normalize_text` over ASCII (NFKC changes no ASCII text):
#: punctuation and control characters to a space, capitals to lowercase.
_ASCII_TABLE = bytes((32 if _CHAR_MAP[b] == " " else (b + 32 if 65 <= b <= 90 else b)) for b in range(128)) + bytes(
    range(128, 256)
)


#: The same over ``\x00``-joined ids: ``\x00`` (a control character, so never part of a name
#: once normalised) is kept as the separator.
_BULK_TABLE = bytes([0]) + _ASCII_TABLE[1:]
_AROUND_SEP = re.compile(" *\x00 *")
_SPACES = re.compile(" {2,}")


def _normalize_name(text: str) -> str:
    """:func:`normalize_text`, with an ASCII fast path (what the id index is built with)."""
    if text.isascii():
        return " ".join(text.encode("ascii").translate(_ASCII_TABLE).decode("ascii").split())
    return normalize_text(text)


def content_text(text: str) -> str:
    """``text``'s words (as the analyzer splits and folds them) without its stopwords, joined by
    spaces: what the text search is asked. ``""`` when nothing is left.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> content_text("How does the push WORK?"), content_text("to be or not to be")
    ('push work', '')
    """
    return " ".join(w for w in words(text) if w not in STOPWORDS)


def _stop_only(norm: str) -> bool:
    """Whether a normalised name is made of stopwords only (its words as the analyzer folds them)."""
    if norm.isascii():
        return all(w in STOPWORDS for w in norm.replace("'", " ").split())
    return all(w in STOPWORDS for w in words(norm))


# --------------------------------------------------------------------------- names
def _joined(got: str | tuple[str, ...] | None, nid: str) -> str | tuple[str, ...] | None:
    """A name's value after ``nid`` is added to ``got`` (one id, or the sorted ids sharing the
    name), or None when ``nid`` already is among them."""
    if got is None:
        return nid
    if isinstance(got, str):
        return None if got == nid else tuple(sorted((got, nid)))
    return None if nid in got else tuple(sorted((*got, nid)))


class NameIndex:
    """Normalised names -> the node ids they name (ascending), and the longest name's words (an
    upper bound).

    Parameters
    ----------
    pairs : iterable of (name, node id)
        Names (ids, aliases) and the node each names; a name that normalises to nothing is left
        out (and one of stopwords only, or longer than :data:`MAX_NAME_WORDS` words, is never
        matched: :func:`named_nodes`).

    Examples
    --------
    >>> ix = NameIndex([("SSL", "tls"), ("tls", "tls"), ("Ssl", "tls2")])
    >>> ix.names, ix.longest
    ({'ssl': ('tls', 'tls2'), 'tls': 'tls'}, 1)
    >>> NameIndex.of_ids(["CWE-89", "c:ppr", "tls"]).names
    {'cwe 89': 'CWE-89', 'c ppr': 'c:ppr', 'tls': 'tls'}
    """

    __slots__ = ("names", "longest", "size", "__weakref__")

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        #: name -> its id, or the tuple of its ids (ascending) when several share it
        self.names: dict[str, str | tuple[str, ...]] = {}
        self.longest = 0
        self.size = 0  # entries (a carried index may hold ids deleted since: never matched)
        self.add(pairs)

    @classmethod
    def of_ids(cls, ids: Sequence[str]) -> NameIndex:
        """The index of node ids (each names itself), the ASCII ones normalised in bulk (one
        ``bytes.translate`` and two regular-expression passes over all of them: no Python work
        per id but the dictionary's).

        Parameters
        ----------
        ids : sequence of str

        Returns
        -------
        NameIndex
        """
        self = cls()
        ids = list(ids)
        if not ids:
            return self
        blob = "\x00".join(ids)
        if not blob.isascii() or blob.count("\x00") != len(ids) - 1:
            ascii_ids = [i for i in ids if i.isascii() and "\x00" not in i]
            if len(ascii_ids) < len(ids):
                rest = set(ascii_ids)
                self.add((i, i) for i in ids if i not in rest)
            ids = ascii_ids
            blob = "\x00".join(ids)
            if not ids:
                return self
        folded = blob.encode("ascii").translate(_BULK_TABLE).decode("ascii")
        if " \x00" in folded or "\x00 " in folded:
            folded = _AROUND_SEP.sub("\x00", folded)
        if "  " in folded:
            folded = _SPACES.sub(" ", folded)
        folded = folded.strip(" ")
        norms = folded.split("\x00")
        names = self.names
        bulk = dict(zip(norms, ids))
        if len(bulk) == len(ids) and not names:  # no two ids share a name (the usual case)
            bulk.pop("", None)
            self.names = bulk  # type: ignore[assignment]
        else:
            for norm, nid in zip(norms, ids):
                if not norm:
                    continue
                joined = _joined(names.get(norm), nid)
                if joined is not None:
                    names[norm] = joined
        self.size = len(self.names)
        self.longest = max(self.longest, folded.count(" ") + 1 if " " in folded else 1)
        self.longest = min(self.longest, MAX_NAME_WORDS)
        return self

    def add(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Add names (each value is replaced whole, so a reader never sees one half-changed).

        Parameters
        ----------
        pairs : iterable of (name, node id)
        """
        names = self.names
        longest = self.longest
        added = 0
        for name, nid in pairs:
            if not isinstance(name, str) or not isinstance(nid, str):
                continue
            norm = _normalize_name(name)
            if not norm:
                continue
            joined = _joined(names.get(norm), nid)
            if joined is None:
                continue
            names[norm] = joined
            added += 1
            n = norm.count(" ") + 1
            if n > longest:
                longest = n
        self.longest = min(longest, MAX_NAME_WORDS)
        self.size += added

    @classmethod
    def of_graph(cls, graph: Any) -> NameIndex:
        """The index of ``graph``'s node ids, built once per graph (kept while the graph lives).

        Parameters
        ----------
        graph : LinkGraph

        Returns
        -------
        NameIndex
        """
        with _LOCK:
            got = _BY_GRAPH.get(graph)
        if got is None:
            got = cls.of_ids(graph.ids)
            with _LOCK:
                got = _BY_GRAPH.setdefault(graph, got)
        return got

    @classmethod
    def of_state(cls, store: Any, state: Any) -> NameIndex:
        """The id index of a store's state: one per store object, brought forward along the
        change log (the ids inserted since are added: O(change)); rebuilt from every id when
        the log cannot tell, for a state older than the one it was brought to, or once it holds
        twice as many entries as the graph has nodes (the ids deleted since stay in it until
        then, and never match: a name is looked up in the state's own graph).

        Parameters
        ----------
        store : KnowledgeBase
        state : StoreState

        Returns
        -------
        NameIndex
        """
        graph = state.graph
        changed_nodes = getattr(store, "changed_nodes", None)
        if not getattr(state, "committed", False) or not callable(changed_nodes):
            return cls.of_graph(graph)
        try:
            slot = _BY_STORE.setdefault(store, {})
        except TypeError:
            return cls.of_graph(graph)
        pos, history = state.graph_version, state.history
        kept = slot.get("ids")  # (index, position, history)
        if kept is not None and kept[2] == history and kept[1] == pos:
            return kept[0]  # type: ignore[no-any-return]
        n = graph.num_nodes
        if kept is not None and kept[2] == history and kept[1] < pos and kept[0].size <= 2 * n + 1024:
            ids = changed_nodes(kept[1], pos, limit=max(1024, n // 4))
            if ids is not None:
                index = kept[0]
                get = graph.id_index.get
                with _LOCK:
                    index.add((i, i) for i in ids if get(i) is not None)
                    slot["ids"] = (index, pos, history)
                return index  # type: ignore[no-any-return]
        if kept is not None and kept[2] == history and kept[1] > pos:
            return cls.of_graph(graph)  # an older state: the kept index may lack its deleted ids
        index = cls.of_ids(graph.ids)
        with _LOCK:
            slot["ids"] = (index, pos, history)
        return index


_LOCK = threading.Lock()
_BY_GRAPH: weakref.WeakKeyDictionary[Any, NameIndex] = weakref.WeakKeyDictionary()
#: Per store object: (its alias count, the alias index of that count) and the state versions at
#: which that count was read (so the count is read once per state, not once per question).
_BY_STORE: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _alias_index(store: Any, state: Any) -> NameIndex | None:
    """The index of ``store``'s aliases (None without any), cached per store object while its
    alias count (``aliases_version()``) and the state's history are unchanged; the count is read
    once per ``state`` (a live graph grown from the change log has it:
    :attr:`~conceptwalk.graph.live.LiveGraph.aliases_count`)."""
    aliases = getattr(store, "aliases", None)
    if not callable(aliases):
        return None
    try:
        slot = _BY_STORE.setdefault(store, {})
    except TypeError:  # not weakly referenceable: read every time
        slot = {}
    key = None if state is None else (id(state), getattr(state, "version", None))
    if key is not None and slot.get("state") == key and "index" in slot:
        return slot["index"]  # type: ignore[no-any-return]
    count = getattr(state, "aliases_count", None)  # a live graph's, read with its batch
    if isinstance(count, bool) or not isinstance(count, int):
        count_fn = getattr(store, "aliases_version", None)
        count = count_fn() if callable(count_fn) else None
    # (a count is a position in one history: a restored backup's may repeat it)
    stamp = None if count is None else (getattr(state, "history", None), count)
    if stamp is not None and slot.get("count") == stamp and "index" in slot:
        index = slot["index"]
    else:
        rows = aliases()
        index = NameIndex((a, c) for a, cs in rows.items() for c in cs) if rows else None
        slot["count"] = stamp
    slot["index"] = index
    slot["state"] = key if stamp is not None else None
    return index  # type: ignore[no-any-return]


def source_name_indexes(graph: Any, source: Any = None, state: Any = None) -> list[NameIndex]:
    """The name indexes a question is matched against: ``graph``'s ids, and the aliases of
    ``source`` when it is a store (anything with ``aliases()``).

    Parameters
    ----------
    graph : LinkGraph
    source : KnowledgeBase, optional
    state : StoreState, optional
        The state ``graph`` was read from (the alias count is then read once per state).

    Returns
    -------
    list of NameIndex

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> [ix.names for ix in source_name_indexes(LinkGraph.from_edges([("a", "b")]))]
    [{'a': 'a', 'b': 'b'}]
    """
    out = [NameIndex.of_graph(graph) if source is None or state is None else NameIndex.of_state(source, state)]
    if source is not None:
        ax = _alias_index(source, state)
        if ax is not None and ax.names:
            out.append(ax)
    return out


def live_name_indexes(store: Any, live: Any, base_state: Any) -> list[NameIndex]:
    """:func:`source_name_indexes` for a store's live graph: the ids of its base's state, the
    ids added since (:meth:`LiveGraph.new_id_names
    <conceptwalk.graph.live.LiveGraph.new_id_names>`) and the store's aliases (their count read
    once per live graph, as once per state on the snapshot path).

    Parameters
    ----------
    store : KnowledgeBase
    live : LiveGraph
    base_state : StoreState
        The state whose graph is ``live.base``.

    Returns
    -------
    list of NameIndex
    """
    out = [NameIndex.of_state(store, base_state), live.new_id_names()]
    ax = _alias_index(store, live)
    if ax is not None and ax.names:
        out.append(ax)
    return out


def named_nodes(
    question: str,
    graph: Any,
    visible: Any,
    indexes: Sequence[NameIndex],
) -> list[tuple[int, str]]:
    """The visible nodes ``question`` names (see the module's rule), ranked: the longer name
    first (in words), then id; each node once, with the name that matched it.

    Parameters
    ----------
    question : str
    graph : LinkGraph
    visible : bool array, optional
        The caller's per-node mask (None: all visible; anything indexed by node index).
    indexes : sequence of NameIndex
        From :func:`source_name_indexes`.

    Returns
    -------
    list of (node index, normalised name)

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> g = LinkGraph.from_edges([("tls", "tls-handshake")])
    >>> [(g.ids[i], p) for i, p in named_nodes("tls handshake", g, None, [NameIndex.of_graph(g)])]
    [('tls-handshake', 'tls handshake'), ('tls', 'tls')]
    >>> named_nodes("tls handshake", g, np.array([True, False]), [NameIndex.of_graph(g)])
    [(0, 'tls')]
    """
    longest = max((ix.longest for ix in indexes), default=0)
    if not longest:
        return []
    ws = normalize_text(question).split()
    id_index = graph.id_index
    best: dict[int, tuple[int, str]] = {}  # node -> (words, name)
    stop = [_stop_only(w) for w in ws]
    for i in range(len(ws)):
        only_stop = True
        for n in range(1, min(longest, len(ws) - i) + 1):
            only_stop = only_stop and stop[i + n - 1]
            if only_stop:  # a run of stopwords only never names anything
                continue
            phrase = " ".join(ws[i : i + n])
            for ix in indexes:
                hit = ix.names.get(phrase)
                if hit is None:
                    continue
                for nid in (hit,) if isinstance(hit, str) else hit:
                    v = id_index.get(nid)
                    if v is None or (visible is not None and not visible[v]):
                        continue
                    cur = best.get(v)
                    if cur is None or n > cur[0]:
                        best[v] = (n, phrase)
    ids = graph.ids
    return [(v, p) for v, (_n, p) in sorted(best.items(), key=lambda kv: (-kv[1][0], ids[kv[0]]))]


def named_search(
    index: Any,
    graph: Any,
    text: str,
    k: int,
    *,
    view: Any,
    node_types: Iterable[str] | None,
    names: Sequence[NameIndex],
) -> list[tuple[str, float]]:
    """The store's search: the visible nodes ``text`` names (:func:`named_nodes`, of the
    requested types) first, then the BM25 hits of ``text`` without its stopwords
    (:func:`content_text`), each node once, ``k`` in all.

    Parameters
    ----------
    index : TextIndex
    graph : LinkGraph
    text : str
    k : int
    view : View
        The caller's view of ``graph``.
    node_types : iterable of str, optional
    names : sequence of NameIndex

    Returns
    -------
    list of (id, score)
        A named node's score is its BM25 score when the text search scores it among the top
        ``k`` (plus the named nodes), else 0.0.

    Examples
    --------
    >>> from conceptwalk.graph import LinkGraph
    >>> from conceptwalk.graph.text import TextIndex
    >>> g = LinkGraph.from_edges([], nodes=[{"id": "tls", "title": "Transport Layer Security"},
    ...                                     {"id": "doc", "title": "the TLS handshake"}])
    >>> ix = TextIndex.build(g.titles)
    >>> [i for i, _ in named_search(ix, g, "tls", 5, view=None, node_types=None, names=[NameIndex.of_graph(g)])]
    ['tls', 'doc']
    """
    mask = None if view is None or view.mask is None else view.mask.mask
    named = named_nodes(text, graph, mask, names)
    if node_types is not None and named:
        wanted = type_set(node_types)
        tn, codes = graph.node_type_names, graph.node_type_codes
        named = [(v, p) for v, p in named if tn[int(codes[v])] in wanted]
    named = named[:k]
    content = content_text(text)
    hits = text_search(index, graph, content, k + len(named), visible=view, node_types=node_types) if content else []
    return _named_first([graph.ids[v] for v, _ in named], hits, k)


def _named_first(named: list[str], hits: list[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The search's answer: the named ids first (with their BM25 score among ``hits``, else 0.0),
    then the other hits, ``k`` in all."""
    score = dict(hits)
    out = [(x, score.get(x, 0.0)) for x in named]
    seen = set(named)
    out.extend(h for h in hits if h[0] not in seen)
    return out[:k]


class _LiveIds:
    """What :func:`named_nodes` reads of a graph (``id_index.get``, ``ids[v]``), over a
    :class:`~conceptwalk.graph.live.LiveGraph`'s slots."""

    __slots__ = ("_live",)

    def __init__(self, live: Any) -> None:
        self._live = live

    @property
    def id_index(self) -> _LiveIds:
        """``.get(id) -> slot`` (properties, not attributes: no reference cycle keeps a graph)."""
        return self

    @property
    def ids(self) -> _LiveIds:
        """``[slot] -> id``."""
        return self

    def get(self, node_id: str) -> int | None:
        return self._live.slot(node_id)  # type: ignore[no-any-return]

    def __getitem__(self, slot: int) -> str:
        return self._live.node_at(slot)[0]  # type: ignore[no-any-return]


class _LiveMask:
    """A :class:`~conceptwalk.graph.live.LiveView` indexed like a boolean mask."""

    __slots__ = ("_view",)

    def __init__(self, view: Any) -> None:
        self._view = view

    def __getitem__(self, slot: int) -> bool:
        return self._view.visible(slot)  # type: ignore[no-any-return]


class LiveSearch:
    """A caller's search over a live graph (its base plus the delta written since) and its text
    (:meth:`LiveGraph.text <conceptwalk.graph.live.LiveGraph.text>`): the visible nodes a text
    names and its BM25 hits, each as over a fresh snapshot of the same store, at the cost of the
    delta. Made by :meth:`KnowledgeBase.live_search
    <conceptwalk.kb.store.KnowledgeBase.live_search>`.

    Parameters
    ----------
    live : LiveGraph
    text : LiveText
        ``live``'s text.
    view : LiveView or None
        The caller's view of ``live`` (None: all access).
    stats : conceptwalk._core.TextStats
        The caller's BM25 statistics of the base's text index.
    names : sequence of NameIndex
        From :func:`live_name_indexes`.
    base_state : StoreState, optional
        The store state whose graph is ``live``'s base.
    """

    __slots__ = ("live", "text", "view", "stats", "names", "base_state", "_ids", "_mask", "_bvis", "_dvis")

    def __init__(
        self, live: Any, text: Any, view: Any, stats: Any, names: Sequence[NameIndex], base_state: Any = None
    ) -> None:
        self.live = live
        self.base_state = base_state
        self.text = text
        self.view = view
        self.stats = stats
        self.names = names
        self._ids = _LiveIds(live)
        self._mask = None if view is None else _LiveMask(view)
        self._bvis = None if view is None else view.base_mask.view(np.uint8)
        self._dvis = text.visible(view)

    def id_at(self, slot: int) -> str:
        """The id at ``slot``.

        Parameters
        ----------
        slot : int

        Returns
        -------
        str
        """
        return self._ids[slot]

    def named(self, text: str, node_types: Iterable[str] | None = None) -> list[int]:
        """The slots of the visible nodes ``text`` names (:func:`named_nodes`' rule and order),
        of ``node_types`` when given.

        Parameters
        ----------
        text : str
        node_types : iterable of str, optional

        Returns
        -------
        list of int
        """
        got = named_nodes(text, self._ids, self._mask, self.names)
        if node_types is not None:
            wanted = type_set(node_types)
            node_at = self.live.node_at
            got = [(v, p) for v, p in got if node_at(v)[1] in wanted]
        return [v for v, _ in got]

    def hits(self, text: str, k: int, node_types: Iterable[str] | None = None) -> tuple[list[int], list[float]]:
        """The top ``k`` visible slots for ``text`` by BM25 (of ``node_types`` when given; the
        statistics stay those of everything visible), by score descending, then id ascending.

        Parameters
        ----------
        text : str
        k : int
        node_types : iterable of str, optional

        Returns
        -------
        (slots, scores) : (list of int, list of float)
        """
        belig = delig = None
        if node_types is not None:
            wanted = type_set(node_types)
            if not wanted:
                return [], []
            live = self.live
            belig = eligible_nodes(live.base, wanted).view(np.uint8)  # kept per base
            slots = self.text.slots
            tf = live.type_filter(wanted)
            if tf is None:  # a base node's type changed since the base: each document's type now
                node_at = live.node_at
                delig = np.array([node_at(int(x))[1] in wanted for x in slots], dtype=np.uint8)
            else:  # a rewritten base document has its base type; a new slot its delta code's
                keep, codes = tf
                b = live.base.num_nodes
                new = slots >= b
                delig = np.empty(slots.size, dtype=np.uint8)
                delig[~new] = belig[slots[~new]]
                delig[new] = keep[codes[slots[new] - b]]
        return self.text.search(  # type: ignore[no-any-return]
            text,
            k,
            stats=self.stats,
            base_visible=self._bvis,
            base_eligible=belig,
            delta_visible=self._dvis,
            delta_eligible=delig,
        )

    def search(self, text: str, k: int, node_types: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """:func:`named_search`'s answer: the named nodes first, then the BM25 hits of ``text``
        without its stopwords, ``k`` in all.

        Parameters
        ----------
        text : str
        k : int
        node_types : iterable of str, optional

        Returns
        -------
        list of (id, score)
        """
        named = self.named(text, node_types)[:k]
        content = content_text(text)
        hits: list[tuple[str, float]] = []
        if content:
            slots, scores = self.hits(content, k + len(named), node_types)
            hits = [(self._ids[x], sc) for x, sc in zip(slots, scores)]
        return _named_first([self._ids[v] for v in named], hits, k)
