"""ROUGE-L and ROUGE-W: summary-level union LCS and weighted LCS (Lin 2004,
sections 3.2 and 4; ROUGE-1.5.5 `lcs` l.2279, `wlcs` l.2387, `markLCS` l.2523).

For every reference sentence, the script computes one LCS table against each
candidate sentence, walks back from the bottom-right corner (diagonal when the
tokens are equal; otherwise up when `c[i-1][j] >= c[i][j-1]`, else left) and
marks the reference positions it passes diagonally.  The union of the marks is
the union LCS.  A marked token counts as a hit only while its count is left in
both unigram tables, which are shared by all sentences of one reference: so the
union LCS never scores above ROUGE-1.

ROUGE-L's table is computed bit-parallel (Hyyrö 2004): one machine-word-parallel
update per reference token keeps each row as a bit vector, and a table cell is
`c[i][j] = j - popcount(row_i & (2**j - 1))`, so the walk back follows the
script's path exactly in O(m + n) steps instead of an O(m * n) table of Python
objects.  ROUGE-W's table holds floating-point weights that the walk compares,
so it stays a plain dynamic programme, computed exactly as the script does.
"""

from __future__ import annotations

from collections import Counter

from rouge_core.perl_numbers import perl_add


def bit_masks(sentence: list[str]) -> dict[str, int]:
    """For each token, the bit set of its positions in the sentence."""
    masks: dict[str, int] = {}
    for position, token in enumerate(sentence):
        masks[token] = masks.get(token, 0) | (1 << position)
    return masks


def lcs_marks(reference: list[str], candidate: list[str], masks: dict[str, int], marks: list[bool]) -> None:
    """Mark the reference positions on the script's LCS path against one candidate sentence."""
    n = len(candidate)
    full = (1 << n) - 1
    row = full
    rows = [row]
    for token in reference:
        match = row & masks.get(token, 0)
        if match:
            row = ((row + match) | (row - match)) & full
        rows.append(row)
    if row == full:  # no common token: the walk takes no diagonal step
        return
    i, j = len(reference), n
    length = n - row.bit_count()  # c[i][j] as the walk goes
    while i and j:
        if reference[i - 1] == candidate[j - 1]:
            i -= 1
            j -= 1
            marks[i] = True
            length -= 1
        # The tokens differ, so c[i][j] = max(up, left): "up >= left" holds
        # exactly when the cell above holds the same length.
        elif j - (rows[i - 1] & ((1 << j) - 1)).bit_count() == length:
            i -= 1
        else:
            j -= 1


def wlcs_marks(reference: list[str], candidate: list[str], weights: list[float], marks: list[bool]) -> None:
    """Mark the reference positions on the script's weighted-LCS path (`wlcs_inner`).

    `weights[k]` is k**w, for k up to at least min(len(reference), len(candidate)) + 1.
    A diagonal step adds f(k+1) - f(k) for a run of k consecutive matches so far,
    in the script's order of operations, because the path depends on
    floating-point comparisons of these sums.

    A row whose token is not in the candidate has no diagonal cell: each cell
    takes the larger of the cell above and the cell to its left, preferring the
    one above on ties.  When the row above never decreases, that is the row
    above itself with every step going up, so such rows cost nothing.
    """
    n = len(candidate)
    present = set(candidate)
    if present.isdisjoint(reference):
        return
    all_up = bytearray(n + 1)  # 0 up, 1 diagonal, 2 left
    no_runs = [0] * (n + 1)
    up_scores, up_runs, nondecreasing = [0.0] * (n + 1), no_runs, True
    steps = []
    for token in reference:
        if nondecreasing and token not in present:
            steps.append(all_up)
            up_runs = no_runs
            continue
        scores = [0.0] * (n + 1)
        runs = [0] * (n + 1)
        step = bytearray(n + 1)
        for j in range(1, n + 1):
            if token == candidate[j - 1]:
                k = up_runs[j - 1]
                scores[j] = up_scores[j - 1] + weights[k + 1] - weights[k]
                runs[j] = k + 1
                step[j] = 1
            elif up_scores[j] >= scores[j - 1]:
                scores[j] = up_scores[j]
            else:
                scores[j] = scores[j - 1]
                step[j] = 2
        steps.append(step)
        up_scores, up_runs = scores, runs
        nondecreasing = all(a <= b for a, b in zip(scores, scores[1:]))
    i, j = len(reference), n
    while i and j:
        move = steps[i - 1][j]
        if move == 1:
            i -= 1
            j -= 1
            marks[i] = True
        elif move == 0:
            i -= 1
        else:
            j -= 1


def union_lcs_hits(
    reference: list[list[str]],
    candidate: list[tuple[list[str], dict[str, int]]],
    reference_unigrams: Counter,
    candidate_unigrams: Counter,
) -> int:
    """ROUGE-L hits of one reference: clipped union-LCS matches over its sentences.

    Args:
        reference: the reference's sentences as token lists.
        candidate: the candidate's sentences with their `bit_masks`.
        reference_unigrams, candidate_unigrams: the clipping tables; fresh copies
            for every reference, since hits use them up.

    Example:
        >>> ref = [["w1", "w2", "w3", "w4", "w5"]]
        >>> cand = [["w1", "w2", "w6", "w7", "w8"], ["w1", "w3", "w8", "w9", "w5"]]
        >>> union_lcs_hits(ref, [(s, bit_masks(s)) for s in cand],
        ...                Counter(ref[0]), Counter(cand[0] + cand[1]))
        4
    """
    hits = 0
    for sentence in reference:
        marks = [False] * len(sentence)
        if sentence:
            for tokens, masks in candidate:
                if tokens:
                    lcs_marks(sentence, tokens, masks, marks)
        for position, token in enumerate(sentence):
            if marks[position] and reference_unigrams[token] > 0 and candidate_unigrams[token] > 0:
                hits += 1
                reference_unigrams[token] -= 1
                candidate_unigrams[token] -= 1
    return hits


def union_wlcs_hits(
    reference: list[list[str]],
    candidate: list[list[str]],
    weights: list,
    reference_unigrams: Counter,
    candidate_unigrams: Counter,
):
    """ROUGE-W hits of one reference: the sum of f(run length) over the runs of
    clipped union-WLCS matches, as `wlcs` (l.2387) adds them.

    A run is added when its last valid hit is followed by an unmarked position
    or ends the sentence; a marked position that fails the clipping check adds
    nothing and does not end the run, so a run followed by such a position is
    added only if a later valid hit continues it (the script's behaviour).
    """
    hits = 0
    for sentence in reference:
        size = len(sentence)
        marks = [False] * size
        if sentence:
            for tokens in candidate:
                if tokens:
                    wlcs_marks(sentence, tokens, weights, marks)
        run = 0
        for position, token in enumerate(sentence):
            if marks[position] and reference_unigrams[token] > 0 and candidate_unigrams[token] > 0:
                run += 1
                if position + 1 == size or not marks[position + 1]:
                    hits = perl_add(hits, weights[run])
                    run = 0
                reference_unigrams[token] -= 1
                candidate_unigrams[token] -= 1
    return hits
