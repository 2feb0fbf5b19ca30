"""How good is a human summary by ROUGE: Lin (2004) section 2.1's jackknife.

For a document with M references r_1 .. r_M, fold k holds reference r_k out:

* the human pseudo-system's candidate is r_k, scored against the other M-1
  references;
* a system's candidate is scored against the same M-1 references;

and both are the average of the M fold scores (each fold's score is the best
over its M-1 references, Perl's `-f B`).  Humans and systems are then scored
against equally many references, so their scores can be compared; a system
whose score reaches the human average performs "like a human" by this metric.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from rouge_core.errors import RougeInputError
from rouge_core.text import Text
from rouge_core.types import average_folds


class JackknifeFold(NamedTuple):
    """Fold k: reference k as the human candidate, the other references to score against."""

    held_out: int
    human_candidate: Text
    references: list


def jackknife_folds(references: Sequence[Text]) -> list[JackknifeFold]:
    """The M folds of a document's M >= 2 references, in reference order.

    Fold k's `references` keep their original order (it decides ties under -f B).

    Example:
        >>> [(f.held_out, f.human_candidate, f.references) for f in jackknife_folds(["a", "b", "c"])]
        [(0, 'a', ['b', 'c']), (1, 'b', ['a', 'c']), (2, 'c', ['a', 'b'])]
    """
    if isinstance(references, str) or len(references) < 2:
        raise RougeInputError(
            "the human jackknife needs at least two references per document (one to score, one to score "
            f"it against); got {1 if isinstance(references, str) else len(references)}"
        )
    return [
        JackknifeFold(k, references[k], list(references[:k]) + list(references[k + 1 :]))
        for k in range(len(references))
    ]


def human_scores(best_scorer, references: Sequence[Text]) -> dict:
    """The human pseudo-system's scores for one document: each reference scored as a
    candidate against the others with `best_scorer` (settings with multi_reference
    "best", as `-f B`), then, like the jackknife of systems, the counts and R, P, F
    averaged over the M folds (R, P, F rounded to five decimals again).

    Compare it with systems scored in the "jackknife" multi-reference mode: each of
    their folds uses the same M-1 references.

    Example (ROUGE-1 recall, as in the module's docstring: (2/3 + 2/3 + 1/3) / 3):
        >>> from rouge_core import RougeScorer, RougeSettings
        >>> scorer = RougeScorer(RougeSettings.from_flags("-n 1 -x -f B"))
        >>> human_scores(scorer, ["the cat sat", "the cat ran", "a dog sat"])["ROUGE-1"].recall
        0.55556
    """
    folds = [best_scorer.score(candidate=f.human_candidate, references=f.references) for f in jackknife_folds(references)]
    return {tag: average_folds([fold[tag] for fold in folds]) for tag in folds[0]}
