"""Tests of conceptwalk.wrap.embed: the hashing embedder (Cython) against a pure-Python reference,
the text normaliser, the spec parser and the optional model-backed embedders."""

from __future__ import annotations

import doctest
import importlib.util
import math
import os
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import conceptwalk.wrap.embed as embed
from conceptwalk.wrap import _hashembed
from conceptwalk.wrap.embed import (
    Embedder,
    HashingEmbedder,
    Model2VecEmbedder,
    SentenceTransformerEmbedder,
    get_embedder,
    normalize_text,
)
from conceptwalk.errors import InputError

# --------------------------------------------------------------------------- pure-Python reference
# The same algorithm as conceptwalk/_hashembed.pyx, written for clarity. Also used by
# scripts/bench_hashembed.py as the pure-Python baseline.

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a64(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k


def reference_embed(
    texts: Sequence[str],
    dim: int = 256,
    ngram_range: tuple[int, int] = (3, 5),
    word_weight: float = 1.0,
    char_weight: float = 0.5,
) -> np.ndarray:
    lo, hi = ngram_range
    top = max(word_weight, char_weight)  # only the ratio matters: the larger weight becomes 1
    word_weight, char_weight = word_weight / top, char_weight / top
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        norm = normalize_text(text)
        if not norm:
            continue
        acc = [0.0] * dim

        def add(feature: bytes, weight: float) -> None:
            k = fmix64(fnv1a64(feature))
            if k >> 63:
                acc[k % dim] -= weight
            else:
                acc[k % dim] += weight

        if word_weight != 0.0:
            for word in norm.split(" "):
                add(b"w" + word.encode("utf-8"), word_weight)
        if char_weight != 0.0:
            padded = " " + norm + " "
            for i in range(len(padded) - lo + 1):
                for n in range(lo, hi + 1):
                    if i + n <= len(padded):
                        add(b"c" + padded[i : i + n].encode("utf-8"), char_weight)
        s = 0.0
        for a in acc:
            s += a * a
        if s > 0.0:
            inv = 1.0 / math.sqrt(s)
            out[row] = [a * inv for a in acc]
    return out


CORPUS = [
    "Vector index",
    "vector-index",
    "VECTOR_INDEX lookup!",
    "vectr index",
    "  leading and   trailing  ",
    "",
    "   ",
    "--- ... !!!",
    "a",
    "ab",
    "x y z",
    "Personalized PageRank (forward push), alpha=0.25",
    "C++ templates & $money$ + 100%",
    "tab\tnew\nline\rcarriage\x0bvt\x0cff\x1cfs\x7fdel\x00nul",
    "Café au lait",
    "CAFE\u0301 AU LAIT",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ",
    "soft\u00adware zero\u200bwidth",
    "Straße Σίσυφος ΣΊΣΥΦΟΣ",
    "知识图谱 检索",
    "граф знаний",
    "emoji 👍🏽 and 🧠 brain",
    "mixed ascii, ünïcödé — dashes – and “quotes”",
    "lone \ud800 surrogate",
    "x" * 300,
    "supercalifragilisticexpialidocious " * 5,
]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# --------------------------------------------------------------------------- reference checks


def test_reference_fnv_matches_published_vectors() -> None:
    # FNV-1a 64 test vectors (Fowler/Noll/Vo reference code).
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"dim": 1},
        {"dim": 7},
        {"dim": 1000},
        {"dim": 64, "ngram_range": (1, 1)},
        {"dim": 64, "ngram_range": (2, 4), "word_weight": 0.3, "char_weight": 0.7},
        {"dim": 32, "ngram_range": (6, 9)},
        {"dim": 128, "word_weight": 0.0},
        {"dim": 128, "char_weight": 0.0},
    ],
)
def test_cython_equals_reference(kwargs: dict) -> None:
    got = HashingEmbedder(**kwargs).embed(CORPUS)
    want = reference_embed(CORPUS, **kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # texts that normalise to nothing give zero rows (with dim=1 signed features may also
    # cancel out exactly, so the converse is checked only for larger dims)
    empty = [not normalize_text(t) for t in CORPUS]
    zero = [bool(np.all(r == 0)) for r in got]
    assert all(z for z, e in zip(zero, empty) if e)
    if got.shape[1] >= 64:
        assert zero == empty


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=6))
def test_cython_equals_reference_random_unicode(texts: list[str]) -> None:
    np.testing.assert_allclose(
        HashingEmbedder(dim=64).embed(texts), reference_embed(texts, dim=64), rtol=1e-6, atol=1e-7
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(st.characters(max_codepoint=127), max_size=40), max_size=6))
def test_cython_equals_reference_random_ascii(texts: list[str]) -> None:
    np.testing.assert_allclose(
        HashingEmbedder(dim=32, ngram_range=(2, 3)).embed(texts),
        reference_embed(texts, dim=32, ngram_range=(2, 3)),
        rtol=1e-6,
        atol=1e-7,
    )


def test_c_ascii_normaliser_matches_normalize_text_on_every_ascii_char() -> None:
    for code in range(128):
        text = f"Ab{chr(code)}cD {chr(code)}"
        assert _hashembed.normalize_ascii(text) == normalize_text(text), repr(chr(code))


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=60))
def test_c_ascii_normaliser_matches_normalize_text_random(text: str) -> None:
    assert _hashembed.normalize_ascii(text) == normalize_text(text)


class _Str(str):
    pass


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(st.characters(max_codepoint=127), max_size=40), st.text(max_size=40)), max_size=30))
def test_normalize_texts_is_normalize_text_of_each(texts: list[str]) -> None:
    """The batch normaliser (ASCII compiled, the rest through normalize_text) gives what
    normalize_text gives, item by item, for ASCII and any other text and str subclasses."""
    from conceptwalk.wrap.embed import normalize_texts

    items = texts + [_Str(t) for t in texts[:3]]
    assert normalize_texts(items) == [normalize_text(t) for t in items]
    with pytest.raises(TypeError, match="must be a str"):
        normalize_texts([*texts, 3])  # type: ignore[list-item]


def test_format_pin_v1() -> None:
    # Pins the v1 feature hashing (bucket and sign of the two word features of "vector index"),
    # independently of the Cython code: stored vectors are cached under "hashing-v1-...", so a
    # change here must come with a new version in the name.
    def bucket_sign(word: str, dim: int) -> tuple[int, float]:
        k = fmix64(fnv1a64(b"w" + word.encode()))
        return k % dim, (-1.0 if k >> 63 else 1.0)

    emb = HashingEmbedder(dim=1024, char_weight=0.0)
    row = emb.embed(["vector index"])[0]
    want = np.zeros(1024)
    for word in ("vector", "index"):
        b, s = bucket_sign(word, 1024)
        want[b] += s
    want /= np.linalg.norm(want)
    np.testing.assert_allclose(row, want, atol=1e-7)
    assert emb.name == "hashing-v1-d1024-c0.0"


# --------------------------------------------------------------------------- contract


def test_shape_dtype_layout_and_norms() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim) == ("hashing-v1-d256", 256)
    x = emb.embed(CORPUS)
    assert x.shape == (len(CORPUS), 256)
    assert x.dtype == np.float32
    assert x.flags.c_contiguous
    norms = np.linalg.norm(x, axis=1)
    for text, n in zip(CORPUS, norms):
        if normalize_text(text):
            assert abs(n - 1.0) < 1e-5, text
        else:
            assert n == 0.0, text
    assert emb.embed([]).shape == (0, 256)
    assert emb.embed(()).dtype == np.float32


def test_empty_and_punctuation_only_text_give_zero_rows() -> None:
    x = HashingEmbedder(dim=16).embed(["", " \t\n", "-_-.,;!?", "\u00ad\u200d", "ok"])
    assert np.all(x[:4] == 0.0)
    assert np.linalg.norm(x[4]) == pytest.approx(1.0, abs=1e-6)


def test_accepts_any_sequence_and_str_subclasses() -> None:
    emb = HashingEmbedder(dim=32)
    base = emb.embed(["alpha", "beta"])
    np.testing.assert_array_equal(emb.embed(("alpha", "beta")), base)
    np.testing.assert_array_equal(emb.embed(np.array(["alpha", "beta"])), base)
    np.testing.assert_array_equal(emb.embed(t for t in ["alpha", "beta"]), base)


def test_bad_texts_raise_type_error() -> None:
    emb = HashingEmbedder(dim=8)
    with pytest.raises(TypeError, match="single str"):
        emb.embed("hello")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, got int"):
        emb.embed(["ok", 3])
    with pytest.raises(TypeError, match=r"texts\[0\] must be a str, got NoneType"):
        emb.embed([None])
    with pytest.raises(TypeError, match="sequence of strings"):
        emb.embed(5)  # type: ignore[arg-type]


def test_deterministic_across_calls_and_instances() -> None:
    a = HashingEmbedder(dim=200).embed(CORPUS)
    b = HashingEmbedder(dim=200).embed(CORPUS)
    c = HashingEmbedder(dim=200).embed(list(reversed(CORPUS)))[::-1]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)  # a row depends on its text only


def test_threads_give_the_serial_result() -> None:
    # embed_into releases the GIL around its loop; concurrent calls must not interfere
    from concurrent.futures import ThreadPoolExecutor

    emb = HashingEmbedder(dim=64)
    texts = CORPUS * 20
    serial = emb.embed(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: emb.embed(texts), range(8)))
    for r in results:
        np.testing.assert_array_equal(r, serial)


def test_deterministic_across_processes_and_hash_seeds() -> None:
    texts = ["Vector index", "知识图谱", "emoji 👍", "C++ templates"]
    here = HashingEmbedder(dim=96).embed(texts).tobytes().hex()
    code = (
        "import sys; from conceptwalk.wrap.embed import HashingEmbedder; "
        f"sys.stdout.write(HashingEmbedder(dim=96).embed({texts!r}).tobytes().hex())"
    )
    for seed in ("0", "12345", "random"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        assert out == here, seed


# --------------------------------------------------------------------------- similarity


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Vector Index", "vector index"),
        ("vector-index", "vector index"),
        ("vector_index", "VECTOR INDEX"),
        ("shortest path", "shortest-path"),
        ("Café", "CAFE\u0301"),
    ],
)
def test_case_and_hyphenation_are_invisible(a: str, b: str) -> None:
    x = HashingEmbedder().embed([a, b])
    np.testing.assert_allclose(x[0], x[1], atol=1e-7)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("vector index", "vectr index"),
        ("vector index lookup", "vectr index lookup"),
        ("knowledge graph", "knowlege graph"),
        ("Personalized PageRank", "personalised pagerank"),
        ("concept resolver", "concept resolvers"),
        ("link suggestion", "link sugestion"),
    ],
)
def test_small_typos_stay_similar(a: str, b: str) -> None:
    x = HashingEmbedder().embed([a, b])
    assert cos(x[0], x[1]) > 0.6


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("vector index", "pancake recipe"),
        ("shortest path", "retrieval event"),
        ("link suggestion", "database migration"),
        ("knowledge graph", "weather forecast"),
    ],
)
def test_unrelated_texts_are_dissimilar(a: str, b: str) -> None:
    x = HashingEmbedder().embed([a, b])
    assert abs(cos(x[0], x[1])) < 0.3


def test_unicode_texts() -> None:
    emb = HashingEmbedder()
    x = emb.embed(["知识图谱", "知识图谱 检索", "ＦＵＬＬ ｗｉｄｔｈ", "full width", "soft\u00adware", "software"])
    assert np.linalg.norm(x[0]) == pytest.approx(1.0, abs=1e-6)
    assert cos(x[0], x[1]) > 0.5
    np.testing.assert_allclose(x[2], x[3], atol=1e-7)  # NFKC folds full-width forms
    np.testing.assert_allclose(x[4], x[5], atol=1e-7)  # soft hyphen removed


def test_only_the_weight_ratio_matters_and_huge_weights_stay_finite() -> None:
    base = HashingEmbedder(word_weight=1.0, char_weight=0.5).embed(CORPUS)
    for ww, cw in ((2.0, 1.0), (1e300, 5e299), (1e-300, 5e-301)):
        x = HashingEmbedder(word_weight=ww, char_weight=cw).embed(CORPUS)
        assert np.all(np.isfinite(x))
        np.testing.assert_allclose(x, base, rtol=1e-6, atol=1e-7)


def test_long_text() -> None:
    text = " ".join(f"word{i}" for i in range(20000))
    x = HashingEmbedder(dim=512).embed([text, text.upper()])
    np.testing.assert_array_equal(x[0], x[1])
    assert np.linalg.norm(x[0]) == pytest.approx(1.0, abs=1e-5)


# --------------------------------------------------------------------------- arguments and names


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"dim": 0}, "dim"),
        ({"dim": -3}, "dim"),
        ({"dim": 2.5}, "dim"),
        ({"dim": True}, "dim"),
        ({"dim": "8"}, "dim"),
        ({"ngram_range": (0, 3)}, "ngram_range"),
        ({"ngram_range": (5, 3)}, "ngram_range"),
        ({"ngram_range": (3, 33)}, "ngram_range"),
        ({"ngram_range": (3,)}, "ngram_range"),
        ({"ngram_range": 3}, "ngram_range"),
        ({"ngram_range": (2.0, 3)}, "ngram_range"),
        ({"word_weight": -1.0}, "word_weight"),
        ({"word_weight": float("nan")}, "word_weight"),
        ({"char_weight": float("inf")}, "char_weight"),
        ({"char_weight": "0.5"}, "char_weight"),
        ({"word_weight": 0.0, "char_weight": 0.0}, "word_weight and char_weight"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs: dict, argument: str) -> None:
    with pytest.raises(ValueError, match=argument) as info:
        HashingEmbedder(**kwargs)
    assert isinstance(info.value, InputError)


def test_names_are_distinct_per_setting() -> None:
    variants = [
        HashingEmbedder(),
        HashingEmbedder(dim=512),
        HashingEmbedder(ngram_range=(2, 4)),
        HashingEmbedder(word_weight=0.5),
        HashingEmbedder(char_weight=1.0),
        HashingEmbedder(char_weight=0.25),
        HashingEmbedder(dim=np.int64(64), ngram_range=(3, 5), word_weight=1, char_weight=0.5),
    ]
    names = [v.name for v in variants]
    assert names[0] == "hashing-v1-d256"
    assert names[-1] == "hashing-v1-d64"
    assert len(set(names)) == len(names)
    assert "ngram_range=(2, 4)" in repr(variants[2])


# --------------------------------------------------------------------------- normalize_text


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("  Vector-Index_lookup!  ", "vector index lookup"),
        ("snake_case and kebab-case", "snake case and kebab case"),
        ("Hello,World.", "hello world"),
        ("tab\tand\nnewline", "tab and newline"),
        ("ＦＵＬＬ－ｗｉｄｔｈ", "full width"),
        ("Cafe\u0301", "café"),
        ("soft\u00adware", "software"),
        ("“quoted” — dash", "quoted dash"),
        ("C++ & 100%", "c++ 100"),
        ("", ""),
        ("?!", ""),
    ],
)
def test_normalize_text_examples(text: str, want: str) -> None:
    assert normalize_text(text) == want


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=50))
def test_normalize_text_shape(text: str) -> None:
    out = normalize_text(text)
    assert out == out.strip()
    assert "  " not in out
    assert out == " ".join(out.split())
    assert normalize_text(out) == out  # idempotent


def test_normalize_text_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        normalize_text(b"bytes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- get_embedder


def test_get_embedder_specs() -> None:
    assert get_embedder(None).name == "hashing-v1-d256"
    assert get_embedder("hashing").name == "hashing-v1-d256"
    assert get_embedder("hashing:512").dim == 512
    assert get_embedder(" Hashing : 64 ").name == "hashing-v1-d64"
    emb = HashingEmbedder(dim=16)
    assert get_embedder(emb) is emb

    class Custom:
        name = "custom-d3"
        dim = 3

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return np.zeros((len(texts), 3), dtype=np.float32)

    custom = Custom()
    assert get_embedder(custom) is custom  # anything with name, dim and embed


@pytest.mark.parametrize("spec", ["hashing:abc", "hashing:0", "word2vec:/x", "", "model2vec:", "st:  ", 42])
def test_get_embedder_bad_specs(spec: object) -> None:
    with pytest.raises(InputError, match="spec|dim"):
        get_embedder(spec)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- optional extras


@pytest.mark.parametrize(
    ("cls", "module", "package"),
    [
        (Model2VecEmbedder, "model2vec", "model2vec"),
        (SentenceTransformerEmbedder, "sentence_transformers", "sentence-transformers"),
    ],
)
def test_missing_library_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, cls: type, module: str, package: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(ImportError) as info:
        cls("/some/model")
    msg = str(info.value)
    extra = "embed-st" if package == "sentence-transformers" else "embed"
    assert f"pip install conceptwalk[{extra}]" in msg
    assert f"'{package}'" in msg
    assert cls.__name__ in msg


def test_get_embedder_routes_to_the_model_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "model2vec", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match="Model2VecEmbedder"):
        get_embedder("model2vec:/m")
    with pytest.raises(ImportError, match="SentenceTransformerEmbedder"):
        get_embedder("st:/m")
    with pytest.raises(ImportError, match="SentenceTransformerEmbedder"):
        get_embedder("sentence-transformers:/m")


HAVE_MODEL2VEC = importlib.util.find_spec("model2vec") is not None
HAVE_ST = importlib.util.find_spec("sentence_transformers") is not None


def _tiny_tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "[PAD]": 1, "vector": 2, "index": 3, "graph": 4, "pancake": 5, "recipe": 6}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    return tok


@pytest.mark.skipif(not HAVE_MODEL2VEC, reason="model2vec not installed")
def test_model2vec_embedder_from_local_folder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from model2vec import StaticModel

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(7, 12)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=_tiny_tokenizer(), normalize=False).save_pretrained(str(tmp_path / "m2v"))
    before = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    emb = Model2VecEmbedder(tmp_path / "m2v")
    assert {k: os.environ.get(k) for k in before} == before  # offline switch restored
    assert isinstance(emb, Embedder)
    assert emb.dim == 12
    assert emb.name == f"model2vec:{(tmp_path / 'm2v').resolve()}:d12"
    x = emb.embed(["vector index", "pancake recipe", "", "?!", "graph"])
    assert x.shape == (5, 12) and x.dtype == np.float32 and x.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(x[[0, 1, 4]], axis=1), 1.0, atol=1e-6)
    assert np.all(x[2:4] == 0.0)
    # the row is the model's own (mean of token vectors), normalised
    mean = vectors[[2, 3]].mean(axis=0)
    np.testing.assert_allclose(x[0], mean / np.linalg.norm(mean), atol=1e-5)
    assert get_embedder(f"model2vec:{tmp_path / 'm2v'}").name == emb.name
    assert emb.embed([]).shape == (0, 12)


@pytest.mark.skipif(not HAVE_MODEL2VEC, reason="model2vec not installed")
def test_model2vec_embedder_never_downloads(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import huggingface_hub

    calls: list[dict] = []
    real = huggingface_hub.snapshot_download

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", spy)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    with pytest.raises(InputError, match="never downloads models") as info:
        Model2VecEmbedder("minishlab/some-model-that-is-not-cached")
    assert "local" in str(info.value)
    assert calls and all(c.get("local_files_only") is True for c in calls)
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(InputError, match="is a file"):
        Model2VecEmbedder(tmp_path / "file.bin")


@pytest.mark.skipif(not HAVE_ST, reason="sentence-transformers not installed")
def test_sentence_transformer_embedder_from_local_folder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import StaticEmbedding

    torch.manual_seed(0)
    weights = torch.randn(7, 10)
    static = StaticEmbedding(_tiny_tokenizer(), embedding_weights=weights)
    SentenceTransformer(modules=[static], device="cpu").save(str(tmp_path / "st"))
    emb = SentenceTransformerEmbedder(tmp_path / "st", device="cpu")
    assert emb.dim == 10
    assert emb.name.startswith("st:") and emb.name.endswith(":d10")
    x = emb.embed(["vector index", "", "graph"])
    assert x.shape == (3, 10) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert np.all(x[1] == 0.0)
    with pytest.raises(InputError, match="never downloads models"):
        SentenceTransformerEmbedder(tmp_path / "missing")


# --------------------------------------------------------------------------- docs


def test_docstring_examples_run() -> None:
    result = doctest.testmod(embed, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
