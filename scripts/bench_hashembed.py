"""Time the Cython hashing embedder against the pure-Python reference of the same algorithm.

The reference is ``reference_embed`` in tests/test_embed.py (the one the tests compare the
Cython module with). Texts are short synthetic titles (2-6 words, mixed case, hyphens,
underscores, punctuation, some non-ASCII), generated from a fixed seed.

Usage::

    python scripts/bench_hashembed.py [--n 20000] [--dim 256] [--repeats 3]

Prints the median of ``--repeats`` timings of each and their ratio, after checking that both
give the same matrix to float32 tolerance.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_embed import reference_embed  # noqa: E402

from conceptwalk.wrap.embed import HashingEmbedder  # noqa: E402

WORDS = (
    "vector index graph concept retrieval walk page rank personalized shortest path link "
    "suggestion knowledge base memory service decision record embedding cache store alias "
    "resolver provenance authority fidelity lifecycle tenant scope token query event sink "
    "schema probe budget hop admission expansion candidate merge flat search ranking"
).split()
EXTRA = ["café", "naïve", "Straße", "知识图谱", "граф", "ＦＵＬＬ", "über", "résumé"]
SEPS = [" ", " ", " ", "-", "_", ", ", ": ", " / "]


def make_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        k = rng.randint(2, 6)
        words = [rng.choice(WORDS) for _ in range(k)]
        if rng.random() < 0.1:
            words[rng.randrange(k)] = rng.choice(EXTRA)
        words = [w.title() if rng.random() < 0.3 else w for w in words]
        text = words[0]
        for w in words[1:]:
            text += rng.choice(SEPS) + w
        texts.append(text)
    return texts


def median_time(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000, help="number of texts")
    parser.add_argument("--dim", type=int, default=256, help="embedding dimension")
    parser.add_argument("--repeats", type=int, default=3, help="timings per implementation")
    args = parser.parse_args()

    texts = make_texts(args.n)
    emb = HashingEmbedder(dim=args.dim)
    ascii_share = sum(t.isascii() for t in texts) / len(texts)
    mean_len = sum(len(t) for t in texts) / len(texts)

    got = emb.embed(texts)
    want = reference_embed(texts, dim=args.dim)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)

    t_cy = median_time(lambda: emb.embed(texts), args.repeats)
    t_py = median_time(lambda: reference_embed(texts, dim=args.dim), args.repeats)
    print(
        f"{args.n} texts (mean {mean_len:.1f} chars, {ascii_share:.0%} ASCII), dim {args.dim}, median of {args.repeats}"
    )
    print(f"  cython      {t_cy * 1e3:9.1f} ms   ({t_cy / args.n * 1e6:7.2f} us/text)")
    print(f"  pure python {t_py * 1e3:9.1f} ms   ({t_py / args.n * 1e6:7.2f} us/text)")
    print(f"  speed-up    {t_py / t_cy:9.1f}x   (outputs equal to float32 tolerance)")


if __name__ == "__main__":
    main()
