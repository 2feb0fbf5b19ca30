"""ROUGE-S and ROUGE-SU: skip-bigram co-occurrence (Lin 2004, section 5;
ROUGE-1.5.5 `createSkipBigram` l.2662).

A skip-bigram is an ordered pair of tokens (i < j) at most `max_gap` tokens apart
(`j - i <= max_gap + 1`; no limit when `max_gap` is None, ROUGE-S*).  ROUGE-SU
also counts unigrams, but the script's loop stops before the last token
(`for($i=0;$i<$#tokens;$i++)`), so a one-token text counts nothing and the last
token is never counted as a unigram.  Clipping and scoring are as in ROUGE-N.

A text of n tokens has up to n(n-1)/2 skip-bigrams, so they are counted as
integer codes with numpy rather than as Python tuples: token ids `a`, `b` make
the code `(a + 1) * 2**31 + b`, and a unigram's code is its id, so the two kinds
share one table without colliding, as `"w"` and `"w1 w2"` do in the script.
`skip_bigram_counts` is the plain-Python definition the fast path must equal.

numpy is imported when the first table is counted, not with the module: the
compiled kernel counts skip-bigrams itself, and `import rouge_core` stays light.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple, Optional

if TYPE_CHECKING:
    import numpy as np

_BIGRAM_BASE = 1 << 31


class CodeTable(NamedTuple):
    """Distinct skip-bigram (and unigram) codes, sorted, with their counts."""

    codes: np.ndarray
    counts: np.ndarray

    def total(self) -> int:
        return int(self.counts.sum())


def skip_bigram_counts(tokens: list[str], max_gap: Optional[int], with_unigrams: bool) -> Counter:
    """Count the skip-bigrams (and with `with_unigrams`, the unigrams but the last).

    Example:
        >>> dict(skip_bigram_counts(["a", "b", "c"], 0, True))
        {'a': 1, 'b': 1, ('a', 'b'): 1, ('b', 'c'): 1}
    """
    counts: Counter = Counter()
    last = len(tokens) - 1
    if with_unigrams:
        counts.update(tokens[:last])
    for i in range(last):
        stop = last if max_gap is None else min(last, i + max_gap + 1)
        counts.update(zip(repeat(tokens[i]), tokens[i + 1 : stop + 1]))
    return counts


def skip_bigram_table(ids: Sequence[int], max_gap: Optional[int], with_unigrams: bool) -> CodeTable:
    """`skip_bigram_counts` over token ids, as a table of codes.

    Example:
        >>> t = skip_bigram_table([0, 1, 0], None, False)   # a b a: (a,b) (a,a) (b,a)
        >>> t.total(), len(t.codes)
        (3, 3)
    """
    import numpy as np  # heavy: on first use (module docstring)

    ids = np.asarray(ids, dtype=np.int64)
    n = len(ids)
    parts = [ids[: n - 1]] if with_unigrams and n > 1 else []
    if max_gap is None or max_gap + 1 >= n - 1:  # every pair i < j
        first, second = _pairs(n) if n <= 200 else np.triu_indices(n, 1)
        parts.append((ids[first] + 1) * _BIGRAM_BASE + ids[second])
    else:
        for distance in range(1, max_gap + 2):  # pairs (i, i + distance)
            parts.append((ids[: n - distance] + 1) * _BIGRAM_BASE + ids[distance:])
    if not parts:
        return CodeTable(np.empty(0, np.int64), np.empty(0, np.int64))
    codes, counts = np.unique(np.concatenate(parts), return_counts=True)
    return CodeTable(codes, counts)


@lru_cache(maxsize=200)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs i < j of short texts, memoised (at most about 60 MB in all)."""
    import numpy as np  # heavy: on first use (module docstring)

    return np.triu_indices(n, 1)


def clipped_code_hits(reference: CodeTable, candidate: CodeTable) -> int:
    """Sum over shared codes of min(reference count, candidate count)."""
    import numpy as np  # heavy: on first use (module docstring)

    _, in_reference, in_candidate = np.intersect1d(
        reference.codes, candidate.codes, assume_unique=True, return_indices=True
    )
    return int(np.minimum(reference.counts[in_reference], candidate.counts[in_candidate]).sum())
