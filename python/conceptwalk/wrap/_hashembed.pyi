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
def normalize_ascii(text: str) -> str: ...
