from collections.abc import Callable

import numpy as np
import numpy.typing as npt

def embed_into(
    texts: list[str],
    out: npt.NDArray[np.float32],
    normalize: Callable[[str], str],
    ngram_lo: int,
    ngram_hi: int,
    word_weight: float,
    char_weight: float,
) -> None: ...
def normalize_all(texts: list[str], normalize: Callable[[str], str]) -> list[str]: ...
def normalize_ascii(text: str) -> str: ...
def embed_csr(
    texts: list[str],
    dim: int,
    normalize: Callable[[str], str],
    ngram_lo: int,
    ngram_hi: int,
    word_weight: float,
    char_weight: float,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.float32]]: ...
