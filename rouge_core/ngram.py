"""ROUGE-N: clipped n-gram co-occurrence (Lin 2004, section 2; ROUGE-1.5.5
`createNGram` l.2598 and `ngramScore` l.2219).

N-grams run over the whole text as one token stream, so they cross sentence
boundaries, as in ROUGE-1.5.5.
"""

from __future__ import annotations

from collections import Counter


def ngram_counts(tokens: list[str], n: int) -> Counter:
    """Count the n-grams of a token stream; there are max(0, len - n + 1) of them.

    Example:
        >>> sorted(ngram_counts(["the", "cat", "the", "cat"], 2).items())
        [(('cat', 'the'), 1), (('the', 'cat'), 2)]
    """
    if n == 1:
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n))))


def clipped_hits(reference: Counter, candidate: Counter) -> int:
    """Sum over reference n-grams of min(reference count, candidate count).

    Example:
        >>> clipped_hits(Counter(["the", "cat"]), Counter(["the", "the", "the"]))
        1
    """
    # Only shared n-grams can hit; the key intersection runs in C.
    return sum(min(reference[gram], candidate[gram]) for gram in reference.keys() & candidate.keys())
