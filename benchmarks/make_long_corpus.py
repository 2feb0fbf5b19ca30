"""A generated corpus of long documents for the benchmark: candidates of about 800
words against 4 references of about 800 words each.

    python benchmarks/make_long_corpus.py --out benchmarks/results/long_docs.jsonl --docs 200

Deterministic (seeded): a Zipfian vocabulary of pseudo-words with English
inflections (so that -m has work to do), sentences of 8-35 words with
punctuation, one sentence per line.  Each document has a "source" of sentences;
every reference keeps about 60% of them (with word edits and its own order) and
adds its own, and the candidate keeps about 50%, so the texts overlap as
summaries of one article do.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import random
from pathlib import Path

SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "tan",
    "re",
    "sor",
    "vel",
    "du",
    "pra",
    "ne",
    "gho",
    "ist",
    "ul",
    "bri",
    "cen",
    "dor",
    "fa",
    "gel",
    "hu",
    "jor",
    "mar",
    "nov",
    "pel",
    "qui",
    "ros",
    "sta",
    "tri",
    "ven",
    "wil",
    "zo",
]
ENDINGS = [""] * 12 + ["s", "ed", "ing", "ation", "ment", "ness", "al", "ly", "er", "ive", "ize", "es"]
STOP = ["the", "a", "of", "and", "to", "in", "on", "it", "was", "for", "that", "with", "is", "by", "at"]
PUNCT = [",", ".", ";", "'s", "--", "(", ")", ":"]


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words = set()
    while len(words) < size:
        stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice([1, 2, 2, 3])))
        words.add(stem + rng.choice(ENDINGS))
    return sorted(words)


class Corpus:
    def __init__(self, seed: int, vocabulary_size: int = 30_000) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng, vocabulary_size)
        self.rng.shuffle(self.words)
        weights = [1 / (rank + 1) ** 1.07 for rank in range(len(self.words))]
        self.cumulative = list(itertools.accumulate(weights))

    def word(self) -> str:
        rng = self.rng
        if rng.random() < 0.3:
            return rng.choice(STOP)
        w = self.words[bisect.bisect(self.cumulative, rng.random() * self.cumulative[-1])]
        if rng.random() < 0.05:
            w = w.capitalize()
        if rng.random() < 0.06:
            w += rng.choice(PUNCT)
        return w

    def sentence(self) -> str:
        return " ".join(self.word() for _ in range(self.rng.randint(8, 35)))

    def edit(self, sentence: str) -> str:
        words = sentence.split(" ")
        for _ in range(self.rng.randint(0, 4)):
            i = self.rng.randrange(len(words))
            if self.rng.random() < 0.5:
                words[i] = self.word()
            elif len(words) > 4:
                del words[i]
        return " ".join(words)

    def text(self, source: list[str], keep: float, words: int) -> str:
        rng = self.rng
        sents = [self.edit(s) for s in source if rng.random() < keep]
        while sum(len(s.split(" ")) for s in sents) < words:
            sents.insert(rng.randrange(len(sents) + 1), self.sentence())
        return "\n".join(sents)

    def document(self, index: int, references: int, words: int) -> dict:
        source = [self.sentence() for _ in range(words // 20)]
        return {
            "system": "long",
            "doc_id": f"long-{index:05d}",
            "candidate": self.text(source, 0.5, words),
            "references": [self.text(source, 0.6, words) for _ in range(references)],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--words", type=int, default=800)
    ap.add_argument("--references", type=int, default=4)
    ap.add_argument("--seed", type=int, default=2004)
    args = ap.parse_args()
    corpus = Corpus(args.seed)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        for i in range(args.docs):
            fh.write(json.dumps(corpus.document(i, args.references, args.words)) + "\n")


if __name__ == "__main__":
    main()
