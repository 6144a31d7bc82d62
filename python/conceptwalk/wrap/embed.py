"""Text embedders: texts in, a float32 matrix of L2-normalised rows out.

The resolver of the concept-anchored walk embeds queries and concept titles with an
:class:`Embedder`. One is built in and needs nothing else: :class:`HashingEmbedder`, a feature
hashing embedder over word tokens and character n-grams whose hot loop is Cython
(``conceptwalk._hashembed``). With the optional extra ``pip install conceptwalk[embed]``,
:class:`Model2VecEmbedder` and :class:`SentenceTransformerEmbedder` use a model the user already
has on disk. Nothing here ever downloads a model.

:func:`get_embedder` turns a short spec (``"hashing"``, ``"hashing:512"``,
``"model2vec:/path"``, ``"st:/path"``) into an embedder, and :func:`normalize_text` is the text
normaliser shared by the hashing embedder and the resolver's normalize-only fallback.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import operator
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from . import _hashembed
from ..errors import InputError
from ..graph.names import normalize_text

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "Model2VecEmbedder",
    "SentenceTransformerEmbedder",
    "FusionWeights",
    "fusion_weights",
    "get_embedder",
    "normalize_text",
    "normalize_texts",
    "WRAP_DEFAULT",
]

#: The concept walk's default embedder spec: on real alias -> concept data (CWE, EDAM, UMLS,
#: GeoNames; benchmarks/bench_embedder.py) 512 buckets and character 2- to 4-grams beat the
#: format's defaults (256, 3- to 5-grams) on every dataset (top-1 0.157 -> 0.213 on CWE,
#: 0.300 -> 0.327 on EDAM, 0.313 -> 0.393 on GeoNames, equal on UMLS).
WRAP_DEFAULT = "hashing:512:2-4"

EXTRA_HINT = "pip install conceptwalk[embed]"
EXTRA_HINT_ST = "pip install conceptwalk[embed-st]"
_MAX_NGRAM = 32
#: Largest hashing dimension (a row of 2**16 float32 is 256 KiB; far past any useful size).
MAX_HASH_DIM = 1 << 16


# --------------------------------------------------------------------------- normalisation


# normalize_text lives in conceptwalk.graph.names (shared with the store's search over ids and
# aliases); it is re-exported here.


def normalize_texts(texts: Sequence[str]) -> list[str]:
    """:func:`normalize_text` of every text, the ASCII ones in compiled code (the same rule, several
    times faster: what the alias and name indexes of a large store are built with).

    Parameters
    ----------
    texts : sequence of str
        Any texts.

    Returns
    -------
    list of str
        ``[normalize_text(t) for t in texts]``.

    Raises
    ------
    TypeError
        If an item is not a ``str``.

    Examples
    --------
    >>> normalize_texts(["  Vector-Index_lookup!  ", "ＣＡＦÉ  au\\tlait", "---"])
    ['vector index lookup', 'café au lait', '']
    """
    return _hashembed.normalize_all(list(texts), normalize_text)


# --------------------------------------------------------------------------- protocol


@runtime_checkable
class Embedder(Protocol):
    """What the resolver needs from an embedder.

    Attributes
    ----------
    name : str
        Stable model name, used as the cache key of stored vectors: it includes the dimension
        and every setting that changes the output (e.g. ``"hashing-v1-d256"``).
    dim : int
        Length of each embedding.

    Notes
    -----
    ``embed(texts)`` returns a C-contiguous ``float32`` array of shape ``(len(texts), dim)``
    whose rows have unit L2 norm, except that a text that is empty after
    :func:`normalize_text` gets a zero row. Cosine similarity is then a dot product.
    """

    @property
    def name(self) -> str:
        """Stable model name (the cache key of stored vectors)."""
        ...

    @property
    def dim(self) -> int:
        """Embedding length."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into a ``(len(texts), dim)`` float32 matrix.

        Parameters
        ----------
        texts : sequence of str
            The texts (not a single string).

        Returns
        -------
        numpy.ndarray of float32, shape (len(texts), dim)
            C-contiguous rows of unit L2 norm (a zero row for a text that is empty after
            :func:`normalize_text`).
        """
        ...


def _text_list(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts must be a sequence of strings, not a single {type(texts).__name__}; wrap it in a list")
    try:
        return list(texts)
    except TypeError:
        raise TypeError(f"texts must be a sequence of strings, got {type(texts).__name__}") from None


# --------------------------------------------------------------------------- hashing


def _check_weight(value: object, argument: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{argument} must be a finite number >= 0, got {value!r}")
    weight = float(value)
    if not math.isfinite(weight) or weight < 0:
        raise InputError(f"{argument} must be a finite number >= 0, got {value!r}")
    return weight


def _check_int(value: object, argument: str) -> int:
    if isinstance(value, bool):
        raise InputError(f"{argument} must be an integer, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise InputError(f"{argument} must be an integer, got {value!r}") from None


class HashingEmbedder:
    """Dependency-free embedder hashing word tokens and character n-grams (signed feature hashing).

    A text is normalised with :func:`normalize_text`. Each word token adds ``word_weight`` and
    each character n-gram (``n`` in ``ngram_range``, counted in code points) of the padded text
    ``" " + normalised + " "`` adds ``char_weight`` to one of ``dim`` buckets, with a sign; the
    row is then L2-normalised. Bucket and sign come from a stable 64-bit hash (FNV-1a over the
    feature's UTF-8 bytes, finished with murmur3's ``fmix64``; words and n-grams hashed in
    separate namespaces), so the output does not depend on ``PYTHONHASHSEED``, the run or the
    platform. N-grams span word boundaries, so they see word order and survive typos, case,
    hyphenation and spacing changes; word tokens reward whole-word matches.

    Signed features can cancel: with a tiny ``dim`` (or a text of two features that land in one
    bucket with opposite signs) a non-empty text can get a zero row, which means "no signal".
    With the default ``dim`` and both weights non-zero this needs an exact cancellation of
    unequal weights and does not happen in practice.

    Parameters
    ----------
    dim : int, default 256
        Number of hash buckets (the embedding length), from 1 to ``MAX_HASH_DIM`` (65536).
    ngram_range : tuple of (int, int), default (3, 5)
        Smallest and largest character n-gram length, ``1 <= lo <= hi <= 32``.
    word_weight : float, default 1.0
        Weight of each word token, ``>= 0``.
    char_weight : float, default 0.5
        Weight of each character n-gram, ``>= 0``. ``word_weight`` and ``char_weight`` may not
        both be 0; only their ratio matters (the larger is scaled to 1 before hashing).

    Raises
    ------
    InputError
        (a ``ValueError``) naming the bad argument and value.

    Attributes
    ----------
    name : str
        ``"hashing-v1-d{dim}"``, followed by ``-n{lo}-{hi}``, ``-w{word_weight}`` and
        ``-c{char_weight}`` for each setting that differs from its default.
    dim : int
        The embedding length.

    Examples
    --------
    >>> emb = HashingEmbedder()
    >>> emb.name
    'hashing-v1-d256'
    >>> X = emb.embed(["Vector index", "vector-index", "vectr index", "pancake recipe", ""])
    >>> X.shape, X.dtype
    ((5, 256), dtype('float32'))
    >>> round(float(X[0] @ X[1]), 3)  # case and hyphenation do not matter
    1.0
    >>> round(float(X[0] @ X[2]), 2), round(float(X[0] @ X[3]), 2)  # a typo; unrelated
    (0.63, 0.05)
    >>> float(np.abs(X[4]).sum())  # empty text: zero row
    0.0
    """

    __slots__ = ("_char_weight", "_dim", "_name", "_ngram_range", "_word_weight")

    def __init__(
        self,
        dim: int = 256,
        ngram_range: tuple[int, int] = (3, 5),
        word_weight: float = 1.0,
        char_weight: float = 0.5,
    ) -> None:
        d = _check_int(dim, "dim")
        if not 1 <= d <= MAX_HASH_DIM:
            raise InputError(f"dim must be an integer in [1, {MAX_HASH_DIM}], got {dim!r}")
        try:
            lo_raw, hi_raw = ngram_range
        except (TypeError, ValueError):
            raise InputError(f"ngram_range must be a pair (lo, hi) of integers, got {ngram_range!r}") from None
        lo = _check_int(lo_raw, "ngram_range")
        hi = _check_int(hi_raw, "ngram_range")
        if not 1 <= lo <= hi <= _MAX_NGRAM:
            raise InputError(f"ngram_range must satisfy 1 <= lo <= hi <= {_MAX_NGRAM}, got {ngram_range!r}")
        ww = _check_weight(word_weight, "word_weight")
        cw = _check_weight(char_weight, "char_weight")
        if ww == 0 and cw == 0:
            raise InputError("word_weight and char_weight are both 0: every embedding would be zero")
        self._dim = d
        self._ngram_range = (lo, hi)
        self._word_weight = ww
        self._char_weight = cw
        name = f"hashing-v1-d{d}"
        if (lo, hi) != (3, 5):
            name += f"-n{lo}-{hi}"
        if ww != 1.0:
            name += f"-w{ww!r}"
        if cw != 0.5:
            name += f"-c{cw!r}"
        self._name = name

    @property
    def name(self) -> str:
        """Stable name including every setting (the store's cache key)."""
        return self._name

    @property
    def dim(self) -> int:
        """Embedding length."""
        return self._dim

    @property
    def ngram_range(self) -> tuple[int, int]:
        """Smallest and largest character n-gram length."""
        return self._ngram_range

    @property
    def word_weight(self) -> float:
        """Weight of each word token."""
        return self._word_weight

    @property
    def char_weight(self) -> float:
        """Weight of each character n-gram."""
        return self._char_weight

    def __repr__(self) -> str:
        return (
            f"HashingEmbedder(dim={self._dim}, ngram_range={self._ngram_range}, "
            f"word_weight={self._word_weight!r}, char_weight={self._char_weight!r})"
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``.

        Parameters
        ----------
        texts : sequence of str
            The texts (a single ``str`` is rejected, wrap it in a list).

        Returns
        -------
        numpy.ndarray
            C-contiguous float32 array of shape ``(len(texts), dim)``; unit rows, zero rows for
            texts empty after :func:`normalize_text`.

        Raises
        ------
        TypeError
            If ``texts`` is a single string or holds a non-string (the message names the index).

        Examples
        --------
        >>> HashingEmbedder(dim=8).embed([]).shape
        (0, 8)
        """
        items = _text_list(texts)
        out = np.empty((len(items), self._dim), dtype=np.float32)
        lo, hi = self._ngram_range
        # only the ratio of the weights matters; scaling the larger to 1 keeps sums finite
        top = max(self._word_weight, self._char_weight)
        _hashembed.embed_into(items, out, normalize_text, lo, hi, self._word_weight / top, self._char_weight / top)
        return out

    def embed_csr(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows of :meth:`embed` in CSR form, without making the dense matrix.

        Parameters
        ----------
        texts : sequence of str
            The texts (a single ``str`` is rejected, wrap it in a list).

        Returns
        -------
        (indptr, indices, values) : (int64 array, int32 array, float32 array)
            Row ``i``'s nonzero entries are ``indices[indptr[i]:indptr[i + 1]]`` (ascending) and
            the matching ``values``: bit for bit the nonzero entries of ``embed(texts)[i]``.

        Examples
        --------
        >>> emb = HashingEmbedder(dim=64)
        >>> indptr, indices, values = emb.embed_csr(["vector index", ""])
        >>> dense = emb.embed(["vector index", ""])
        >>> bool((dense[0, indices[indptr[0]:indptr[1]]] == values[indptr[0]:indptr[1]]).all())
        True
        >>> int(indptr[2] - indptr[1]), int(np.count_nonzero(dense[0])) == int(indptr[1])
        (0, True)
        """
        items = _text_list(texts)
        lo, hi = self._ngram_range
        top = max(self._word_weight, self._char_weight)
        return _hashembed.embed_csr(
            items, self._dim, normalize_text, lo, hi, self._word_weight / top, self._char_weight / top
        )


# --------------------------------------------------------------------------- optional models


def _import_extra(module: str, package: str, user: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{user} needs the optional package '{package}', which is not installed. "
            f"Install the extra with: {EXTRA_HINT_ST if package == 'sentence-transformers' else EXTRA_HINT}"
        ) from exc


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Tell the Hugging Face libraries not to touch the network while a model loads."""
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    saved = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ[k] = "1"
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _local_model_dir(path_or_name: str | os.PathLike[str], kind: str) -> tuple[str, str]:
    """``(folder, label)`` of a local model: an existing folder, or a hub name already in the
    local Hugging Face cache. Never downloads; raises InputError explaining that otherwise."""
    if not isinstance(path_or_name, (str, os.PathLike)) or not str(path_or_name):
        raise InputError(f"path_or_name must be a non-empty path or model name, got {path_or_name!r}")
    raw = os.fspath(path_or_name)
    path = Path(raw).expanduser()
    if path.is_dir():
        folder = str(path.resolve())
        return folder, folder
    if path.exists():
        raise InputError(f"path_or_name: {raw!r} is a file; pass the folder holding the {kind} model")
    try:
        hub = importlib.import_module("huggingface_hub")
        with _offline():
            folder = hub.snapshot_download(raw, local_files_only=True)
        return str(folder), raw
    except Exception:
        pass
    raise InputError(
        f"path_or_name: no local {kind} model at {raw!r}, and no cached copy of a model of that "
        "name. conceptwalk never downloads models at run time: get the model once (for example "
        "with huggingface_hub.snapshot_download or the library's save_pretrained / save) and pass "
        "the local folder."
    )


def _finish(texts: list[str], matrix: Any, dim: int) -> np.ndarray:
    """float32, unit rows, zero rows for texts empty after normalisation."""
    out = np.array(matrix, dtype=np.float32, order="C", copy=True).reshape(len(texts), dim)
    norms = np.linalg.norm(out, axis=1)
    empty = np.fromiter((not normalize_text(t) for t in texts), dtype=bool, count=len(texts))
    ok = (norms > 0) & ~empty
    out[ok] /= norms[ok, None]
    out[~ok] = 0.0
    return out


# --------------------------------------------------------------------------- fusion weights


_NGRAMS_SPEC = re.compile(r"hashing(:[0-9]+(:[0-9]+-[0-9]+)?)?")


class FusionWeights:
    """How the resolver weighs its evidence for one kind of embedder (issue 19).

    A model's similarities are better evidence than the hashing embedder's, and the lexical and
    flat-hit ranks that help the hashing embedder outvote a model's (measured in
    ``benchmarks/bench_embedder.py --fusion``). So each embedder kind carries its own weights:
    the built-in embedder :data:`NEUTRAL` (the resolver as it was), a model embedder a
    semantic score that also reads the concept's body and its character n-grams, and smaller
    lexical and flat-hit evidence.

    The semantic score reads up to three similarities of the query to each concept: ``t`` =
    the embedder's cosine similarity to the concept's title, ``b`` = to its title and body
    (only when ``concept_text`` is ``"title"``, else the one matrix counts for both), ``n`` =
    ``max(0, .)`` of the :attr:`ngrams` embedder's over the titles (character n-grams: they
    match spellings and transliterations a sentence model does not).

    * ``temperature == 0``: the weighted mean of the similarities,
      ``((t + body * b) / (1 + body) + char * n) / (1 + char)``.
    * ``temperature > 0``: the weighted mean of their *posteriors*,
      ``(P(t) + body * P(b) + char * P(n)) / (1 + body + char)``, where ``P(x)`` is the softmax
      of ``x / temperature`` over the visible concepts: each similarity says how sure it is of
      its best concept (a list with one clear winner counts more than one with a flat top),
      and lists on different scales (a sentence model's cosines, character n-grams') become
      comparable. A concept is a semantic hit only when one of its similarities reaches
      ``WalkConfig.semantic_threshold``; its evidence is the posterior mean.

    Lexical evidence is ``lexical_confidence * lexical / r`` and flat-hit evidence
    ``flat_hit_confidence * flat_hit / r``.

    Parameters
    ----------
    body : float, default 0.0
        Weight of the ``title+body`` similarity, ``>= 0``.
    char : float, default 0.0
        Weight of the character n-gram similarity, ``>= 0``.
    lexical : float, default 1.0
        Multiplier of ``WalkConfig.lexical_confidence``, ``>= 0`` (evidence is capped at 1).
    flat_hit : float, default 1.0
        Multiplier of ``WalkConfig.flat_hit_confidence``, ``>= 0`` (evidence is capped at 1).
    temperature : float, default 0.0
        ``0``: the similarities are averaged; ``> 0``: their softmax posteriors at this
        temperature are.
    ngrams : str, default ``"hashing:512:2-4"``
        The built-in embedder spec (:func:`get_embedder`, ``"hashing:DIM:LO-HI"``) of the ``char``
        term.

    Examples
    --------
    >>> FusionWeights()
    FusionWeights(body=0.0, char=0.0, lexical=1.0, flat_hit=1.0, temperature=0.0, ngrams='hashing:512:2-4')
    >>> FusionWeights(char=-1)
    Traceback (most recent call last):
    conceptwalk.errors.InputError: char must be a finite number >= 0, got -1
    >>> FusionWeights(ngrams="st:/some/model")
    Traceback (most recent call last):
    conceptwalk.errors.InputError: ngrams must be a built-in embedder spec 'hashing[:DIM[:LO-HI]]', got 'st:/some/model'
    """

    __slots__ = ("body", "char", "flat_hit", "lexical", "ngrams", "temperature")

    def __init__(
        self,
        body: float = 0.0,
        char: float = 0.0,
        lexical: float = 1.0,
        flat_hit: float = 1.0,
        temperature: float = 0.0,
        ngrams: str = WRAP_DEFAULT,
    ) -> None:
        self.body = _check_weight(body, "body")
        self.char = _check_weight(char, "char")
        self.lexical = _check_weight(lexical, "lexical")
        self.flat_hit = _check_weight(flat_hit, "flat_hit")
        self.temperature = _check_weight(temperature, "temperature")
        if not isinstance(ngrams, str) or _NGRAMS_SPEC.fullmatch(ngrams) is None:
            raise InputError(f"ngrams must be a built-in embedder spec 'hashing[:DIM[:LO-HI]]', got {ngrams!r}")
        self.ngrams = ngrams  # (the numbers are checked by get_embedder when a resolver is built)

    @property
    def neutral(self) -> bool:
        """True for the weights of the resolver without per-embedder fusion (semantic score =
        the title similarity, lexical and flat-hit evidence as configured)."""
        return (
            self.body == 0.0
            and self.char == 0.0
            and self.lexical == 1.0
            and self.flat_hit == 1.0
            and self.temperature == 0.0
        )

    def __repr__(self) -> str:
        return (
            f"FusionWeights(body={self.body!r}, char={self.char!r}, lexical={self.lexical!r}, "
            f"flat_hit={self.flat_hit!r}, temperature={self.temperature!r}, ngrams={self.ngrams!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FusionWeights):
            return NotImplemented
        return _fusion_key(self) == _fusion_key(other)

    def __hash__(self) -> int:
        return hash(_fusion_key(self))


def _fusion_key(w: FusionWeights) -> tuple[float, float, float, float, float, str]:
    return (w.body, w.char, w.lexical, w.flat_hit, w.temperature, w.ngrams)


#: The weights of the resolver without per-embedder fusion: the built-in hashing embedder's
#: (measured: no other setting did better on CWE, EDAM and GeoNames with it).
NEUTRAL = FusionWeights()

#: all-MiniLM-L6-v2 (sentence-transformers), chosen on the tuning split of
#: benchmarks/bench_embedder.py --fusion (CWE, EDAM, GeoNames; one setting for all three, the
#: largest expected smallest-over-datasets gain over bootstrap resamples of the tuning queries):
#: the mean of three posteriors at temperature 0.05 (title, title+body, character 1-3-grams in
#: 4,096 dimensions), no lexical evidence, flat-hit evidence 0.1 at rank 1 (0.9 / 9).
SENTENCE_TRANSFORMER_FUSION = FusionWeights(
    body=1.0, char=1.0, lexical=0.0, flat_hit=1 / 9, temperature=0.05, ngrams="hashing:4096:1-3"
)

#: model2vec (a static model distilled from all-MiniLM-L6-v2), chosen on the tuning split
#: before the posterior fusion (not re-tuned): lexical evidence 0.1, flat-hit evidence 0.2 at
#: rank 1.
MODEL2VEC_FUSION = FusionWeights(body=1.0, char=0.6, lexical=1 / 6, flat_hit=2 / 9)

#: The default character n-gram embedder of :class:`FusionWeights` (its ``ngrams``).
CHAR_EMBEDDER_SPEC = WRAP_DEFAULT


def fusion_weights(embedder: Any) -> FusionWeights:
    """The resolver's :class:`FusionWeights` for ``embedder``: its ``fusion`` attribute when
    that is a :class:`FusionWeights` (the model embedders set one; set it on an embedder of
    your own to choose), else :data:`NEUTRAL` (also for None and the built-in embedder).

    Parameters
    ----------
    embedder : Embedder or None

    Returns
    -------
    FusionWeights

    Examples
    --------
    >>> fusion_weights(HashingEmbedder()).neutral, fusion_weights(None).neutral
    (True, True)
    >>> fusion_weights(SentenceTransformerEmbedder.__new__(SentenceTransformerEmbedder)).temperature
    0.05
    """
    w = getattr(embedder, "fusion", None)
    return w if isinstance(w, FusionWeights) else NEUTRAL


class _LocalModelEmbedder:
    """What the model-backed embedders share: input checks and the output contract around the
    library's own ``encode`` (subclasses set ``dim``, ``name`` and ``_encode``)."""

    dim: int
    name: str

    def _encode(self, items: list[str]) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (see :class:`Embedder` for the output contract)."""
        items = _text_list(texts)
        for i, t in enumerate(items):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] must be a str, got {type(t).__name__}")
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _finish(items, self._encode(items), self.dim)


class Model2VecEmbedder(_LocalModelEmbedder):
    """Embedder over a model2vec ``StaticModel`` that is already on this machine.

    Needs the optional extra (``pip install conceptwalk[embed]``). The model is loaded from a
    local folder (for example one written by ``StaticModel.save_pretrained``) or, given a hub
    name, from the local Hugging Face cache only; nothing is ever downloaded.

    Parameters
    ----------
    path_or_name : str or os.PathLike
        Folder of the model, or the name of a model already in the local cache.

    Raises
    ------
    ImportError
        If ``model2vec`` is not installed (the message names the extra).
    InputError
        If no local model is found (the message explains that a local model is needed).

    Attributes
    ----------
    name : str
        ``"model2vec:{folder or name}:d{dim}"``.
    dim : int
        Embedding length of the model.

    Examples
    --------
    >>> Model2VecEmbedder("/nonexistent/model")  # doctest: +SKIP
    Traceback (most recent call last):
    conceptwalk.errors.InputError: path_or_name: no local model2vec model at '/nonexistent/model', ...
    """

    def __init__(self, path_or_name: str | os.PathLike[str]) -> None:
        model2vec = _import_extra("model2vec", "model2vec", "Model2VecEmbedder")
        folder, label = _local_model_dir(path_or_name, "model2vec")
        with _offline():
            self._model = model2vec.StaticModel.from_pretrained(folder)
        probe = np.asarray(self._model.encode(["a"], show_progress_bar=False))
        self.dim: int = int(probe.shape[1])
        self.name: str = f"model2vec:{label}:d{self.dim}"

    #: The resolver's weights for this embedder (:func:`fusion_weights`).
    fusion = MODEL2VEC_FUSION

    def _encode(self, items: list[str]) -> Any:
        return self._model.encode(items, show_progress_bar=False)


class SentenceTransformerEmbedder(_LocalModelEmbedder):
    """Embedder over a sentence-transformers model that is already on this machine.

    Needs the optional extra (``pip install conceptwalk[embed-st]``, which brings
    ``sentence-transformers`` and with it PyTorch). The model is loaded from a local folder
    (for example one written by ``SentenceTransformer.save``) or, given a hub name, from the
    local Hugging Face cache only, with ``local_files_only=True`` and ``HF_HUB_OFFLINE=1``;
    nothing is ever downloaded.

    Parameters
    ----------
    path_or_name : str or os.PathLike
        Folder of the model, or the name of a model already in the local cache.
    device : str, optional
        Torch device (default: the library's choice).

    Raises
    ------
    ImportError
        If ``sentence-transformers`` is not installed (the message names the extra).
    InputError
        If no local model is found (the message explains that a local model is needed).

    Attributes
    ----------
    name : str
        ``"st:{folder or name}:d{dim}"``.
    dim : int
        Embedding length of the model.

    Examples
    --------
    >>> SentenceTransformerEmbedder("/models/all-MiniLM-L6-v2").dim  # doctest: +SKIP
    384
    """

    def __init__(self, path_or_name: str | os.PathLike[str], device: str | None = None) -> None:
        st = _import_extra("sentence_transformers", "sentence-transformers", "SentenceTransformerEmbedder")
        folder, label = _local_model_dir(path_or_name, "sentence-transformers")
        with _offline():
            self._model = st.SentenceTransformer(folder, device=device, local_files_only=True)
        probe = np.asarray(self._model.encode(["a"], convert_to_numpy=True, show_progress_bar=False))
        self.dim: int = int(probe.shape[1])
        self.name: str = f"st:{label}:d{self.dim}"

    #: The resolver's weights for this embedder (:func:`fusion_weights`).
    fusion = SENTENCE_TRANSFORMER_FUSION

    def _encode(self, items: list[str]) -> Any:
        return self._model.encode(items, convert_to_numpy=True, show_progress_bar=False)


# --------------------------------------------------------------------------- spec


def get_embedder(spec: str | Embedder | None = None) -> Embedder:
    """Embedder from a short spec.

    Parameters
    ----------
    spec : str, Embedder or None
        ``None`` or ``"hashing"``: ``HashingEmbedder()``; ``"hashing:512"``: a hashing embedder
        of dimension 512; ``"hashing:512:2-4"``: dimension 512, character n-grams of 2 to 4 (the
        concept walk's default, :data:`WRAP_DEFAULT`, measured in benchmarks/bench_embedder.py); ``"model2vec:PATH"``: :class:`Model2VecEmbedder`; ``"st:PATH"`` (or
        ``"sentence-transformers:PATH"``): :class:`SentenceTransformerEmbedder`. An object that
        already satisfies :class:`Embedder` is returned as it is.

    Returns
    -------
    Embedder

    Raises
    ------
    InputError
        For an unknown or malformed spec (the message names ``spec``).

    Examples
    --------
    >>> get_embedder(None).name
    'hashing-v1-d256'
    >>> get_embedder("hashing:512").dim
    512
    >>> get_embedder(WRAP_DEFAULT).name
    'hashing-v1-d512-n2-4'

    >>> emb = HashingEmbedder(dim=32)
    >>> get_embedder(emb) is emb
    True
    """
    if spec is None:
        return HashingEmbedder()
    if not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        raise InputError(f"spec must be a string, an Embedder or None, got {type(spec).__name__}")
    kind, sep, arg = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind == "hashing":
        if not sep:
            return HashingEmbedder()
        dim_s, sep2, rng = arg.partition(":")
        try:
            dim = int(dim_s.strip())
        except ValueError:
            raise InputError(f"spec: bad dimension in {spec!r}; expected e.g. 'hashing:512'") from None
        if not sep2:
            return HashingEmbedder(dim=dim)
        try:
            lo_s, hi_s = rng.split("-")
            lo, hi = int(lo_s), int(hi_s)
        except ValueError:
            raise InputError(f"spec: bad n-gram range in {spec!r}; expected e.g. 'hashing:512:2-4'") from None
        return HashingEmbedder(dim=dim, ngram_range=(lo, hi))
    if kind in ("model2vec", "st", "sentence-transformers"):
        if not arg.strip():
            raise InputError(f"spec: {spec!r} needs a local model path, e.g. '{kind}:/path/to/model'")
        if kind == "model2vec":
            return Model2VecEmbedder(arg.strip())
        return SentenceTransformerEmbedder(arg.strip())
    raise InputError(
        f"spec: unknown embedder {spec!r}; expected 'hashing', 'hashing:DIM', 'model2vec:PATH' or 'st:PATH'"
    )
