"""ROUGE-S and ROUGE-SU: skip-bigram co-occurrence (Lin 2004, section 5;
ROUGE-1.5.5 `createSkipBigram` l.2662).

A skip-bigram is an ordered pair of tokens (i < j) at most `max_gap` tokens apart
(`j - i <= max_gap + 1`; no limit when `max_gap` is None, ROUGE-S*).  ROUGE-SU
also counts unigrams, but the script's loop stops before the last token
(`for($i=0;$i<$#tokens;$i++)`), so a one-token text counts nothing and the last
token is never counted as a unigram.  Clipping and scoring are as in ROUGE-N.
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import Optional


def skip_bigram_counts(tokens: list[str], max_gap: Optional[int], with_unigrams: bool) -> Counter:
    """Count the skip-bigrams (and with `with_unigrams`, the unigrams but the last).

    Unigram keys are strings and skip-bigram keys are pairs, so they share one
    table without colliding, as `"w"` and `"w1 w2"` do in the script.

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
