"""A generated CNN/DM-like corpus for the pipeline's scale benchmark, in the joined
input form (one row per (system, document): system, doc_id, candidate, references).

    python benchmarks/make_scale_corpus.py --out /tmp/scale                       # 4 x 250,000 = 1M pairs
    python benchmarks/make_scale_corpus.py --out /tmp/scale-8k --documents 2000   # 4 x 2,000 pairs
    python benchmarks/bench_pipeline.py --input '/tmp/scale/*.jsonl.gz' --workers 1 2

Writes OUT/<system>-<shard>-of-<shards>.jsonl.gz: every system has the same
documents, document block k in shard k of each system.  Deterministic: the
files (bytes included) are a function of --systems, --documents, --shards and
--seed, not of --jobs.  Memory is bounded: documents are made and written in
chunks of at most 10,000.

Lengths close to CNN/DM's test set (there: references of 58 words in 3.9
sentences, candidates of 49-56 words in 2.8): one reference of about 56 words in
about 4 sentences (one per line, lower-case tokens as PTB writes them, " ." ends
each), candidates of about 56 words in about 3 sentences.  Words come from a
fixed vocabulary (frequent English words and punctuation tokens first, then
pseudo-words with English endings, so that -m stems) with Zipfian frequencies.  A candidate is its
reference perturbed: runs of words kept or replaced by random words, some words
dropped or inserted, some sentence breaks removed; each system keeps a different
share, so ROUGE-1 F is about 0.3-0.5 and the systems differ.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import json
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from make_long_corpus import vocabulary  # pseudo-words with English endings

# The most frequent words: common English words and punctuation, tokenized as in CNN/DM.
FUNCTION_WORDS = [
    "the", ",", "a", "to", "of", "and", "in", "'s", "''", "``", "was", "for", "on", "is", "that", "with",
    "he", "it", "said", "at", "his", "by", "as", "from", "has", "have", "be", "are", "an", "--", "who",
    "will", "but", "they", "been", "after", "their", "had", "her", "were", "up", "would", "not", "this",
    "one", "i", "more", "two", "when", "than", "can", "out", "about", "year", "we", "also", "she", "its",
    "new", ":", "people",
]  # fmt: skip
VOCABULARY_SIZE = 50_000
CHUNK = 10_000
# The share of its reference's words a system's candidates keep (in runs of ~4 words).
KEEP = (0.30, 0.25, 0.20, 0.35, 0.28, 0.23, 0.33, 0.15)  # ROUGE-1 F about 0.42, 0.39, 0.35, 0.45, ...


@functools.lru_cache(maxsize=1)
def words_and_weights(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The vocabulary, "." (id 0, ends a reference sentence) first, and the
    cumulative Zipfian weights of the other words (ids 1...)."""
    pseudo = [w for w in vocabulary(random.Random(seed), VOCABULARY_SIZE) if w not in FUNCTION_WORDS]
    random.Random(seed + 1).shuffle(pseudo)
    words = np.array(["."] + FUNCTION_WORDS + pseudo, dtype=object)
    cumulative = np.cumsum(1.0 / np.arange(1, len(words)) ** 1.07)
    return words, cumulative / cumulative[-1]


def zipf(rng: np.random.Generator, cumulative: np.ndarray, n: int) -> np.ndarray:
    return 1 + np.searchsorted(cumulative, rng.random(n), side="right")


def joined(words: np.ndarray, ids: np.ndarray, sentence: np.ndarray, doc: np.ndarray, docs: int) -> list[str]:
    """Token ids with their sentence and document numbers -> one text per document."""
    tokens = words[ids].tolist()
    cuts = np.flatnonzero(np.diff(sentence)) + 1
    starts, ends = np.r_[0, cuts], np.r_[cuts, len(ids)]
    texts: list[list[str]] = [[] for _ in range(docs)]
    for d, s, e in zip(doc[starts].tolist(), starts.tolist(), ends.tolist()):
        texts[d].append(" ".join(tokens[s:e]))
    return ["\n".join(t) for t in texts]


def make_chunk(
    seed: int, shard: int, first: int, docs: int, systems: int, words, cumulative
) -> list[list[str]]:
    """The JSON lines of documents first..first+docs-1, one list per system."""
    rng = np.random.default_rng([seed, shard, first])
    # References: 2-6 sentences (mean 4) of 5-23 tokens (mean 14), the last one " .".
    n_sent = rng.choice([2, 3, 4, 5, 6], size=docs, p=[0.1, 0.25, 0.3, 0.25, 0.1])
    sent_doc = np.repeat(np.arange(docs), n_sent)
    sent_len = rng.integers(5, 24, size=len(sent_doc))
    ref_ids = zipf(rng, cumulative, int(sent_len.sum()))
    ends = np.cumsum(sent_len) - 1
    ref_ids[ends] = 0  # "."
    tok_sent = np.repeat(np.arange(len(sent_doc)), sent_len)
    tok_doc = sent_doc[tok_sent]
    references = joined(words, ref_ids, tok_sent, tok_doc, docs)
    doc_ids = [f"doc-{first + i:07d}" for i in range(docs)]
    out = []
    for system in range(systems):
        # Each reference word is dropped (8%), kept once or followed by an inserted word (8%).
        u = rng.random(len(ref_ids))
        idx = np.repeat(np.arange(len(ref_ids)), 1 + (u < 0.08) - (u > 0.92))
        inserted = np.r_[False, idx[1:] == idx[:-1]]
        # Runs of ~4 output words are copied from the reference or replaced.
        run = np.cumsum(rng.random(len(idx)) < 0.25)
        keep = (rng.random(run[-1] + 1) < KEEP[system % len(KEEP)])[run] & ~inserted
        ids = np.where(keep, ref_ids[idx], zipf(rng, cumulative, len(idx)))
        # 35% of the sentence breaks inside a document are removed (about 3 sentences).
        sent = tok_sent[idx]
        merged = (
            np.r_[False, rng.random(len(sent_doc) - 1) < 0.35] & np.r_[False, sent_doc[1:] == sent_doc[:-1]]
        )
        sent = (np.cumsum(~merged) - 1)[sent]
        candidates = joined(words, ids, sent, tok_doc[idx], docs)
        name = f"sys{system:02d}"
        out.append(
            [
                json.dumps({"system": name, "doc_id": d, "candidate": c, "references": [r]}) + "\n"
                for d, c, r in zip(doc_ids, candidates, references)
            ]
        )
    return out


def write_shard(spec: tuple) -> int:
    seed, shard, shards, first, last, systems, out = spec
    words, cumulative = words_and_weights(seed)
    with contextlib.ExitStack() as stack:
        files = []
        for system in range(systems):
            raw = stack.enter_context(
                open(Path(out) / f"sys{system:02d}-{shard:05d}-of-{shards:05d}.jsonl.gz", "wb")
            )
            # mtime=0 and no file name in the header: the same arguments give the same bytes.
            files.append(stack.enter_context(gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0)))
        for start in range(first, last, CHUNK):
            chunk = make_chunk(seed, shard, start, min(CHUNK, last - start), systems, words, cumulative)
            for fh, lines in zip(files, chunk):
                fh.write("".join(lines).encode())
    return last - first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the shards (created)")
    ap.add_argument("--systems", type=int, default=4)
    ap.add_argument("--documents", type=int, default=250_000)
    ap.add_argument("--shards", type=int, default=16, help="shards per system")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes (does not change the output)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bounds = [args.documents * k // args.shards for k in range(args.shards + 1)]
    specs = [
        (args.seed, k, args.shards, bounds[k], bounds[k + 1], args.systems, str(out))
        for k in range(args.shards)
    ]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = sum(pool.map(write_shard, specs))
    size = sum(p.stat().st_size for p in out.glob("sys*-of-*.jsonl.gz"))
    seconds = time.perf_counter() - started
    print(
        f"{done * args.systems:,} pairs ({args.systems} systems x {done:,} documents) in "
        f"{args.systems * args.shards} files, {size / 1e6:.1f} MB, {seconds:.1f} s: {out}"
    )


if __name__ == "__main__":
    main()
