"""What the commands share: the ROUGE options, settings from them, the signature line."""

from __future__ import annotations

import argparse
import sys

from pipeline.config import make_settings
from rouge_core import RougeConfigError, RougeSettings

PYROUGE_DEFAULTS = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"

def add_rouge_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ROUGE options")
    group.add_argument(
        "--rouge-args",
        default=PYROUGE_DEFAULTS,
        metavar="FLAGS",
        help=f'ROUGE-1.5.5 flags, as a paper reports them (default: the config\'s [rouge] args for run, '
        f'"{PYROUGE_DEFAULTS}" for score)',
    )
    group.add_argument(
        "--preset",
        choices=["rouge155", "rouge_score", "unicode"],
        help="the convention: rouge155 (ROUGE-1.5.5, the default), rouge_score (Google's rouge-score 0.1.2, "
        "as HF evaluate), unicode (any script: NFKC, casefold, Snowball stemmers); see the README",
    )
    group.add_argument(
        "--rouge-types",
        metavar="TYPES",
        help="rouge_score preset: comma-separated, e.g. rouge1,rouge2,rougeL,rougeLsum (its default)",
    )
    group.add_argument(
        "--stem", action="store_const", const=True, help="stem (rouge_score: NLTK Porter; others: as -m)"
    )
    group.add_argument(
        "--language",
        help="unicode preset: the Snowball stemmer's language, e.g. russian; needed with stemming (-m, --stem)",
    )
    group.add_argument(
        "--multi-ref",
        choices=["average", "best", "jackknife"],
        help="how several references combine: average (-f A, ROUGE's default), best (-f B), or "
        "jackknife (Lin 2004 section 2.1: best of each set of M-1 references, averaged); "
        "overrides -f in --rouge-args",
    )
    group.add_argument(
        "--sentence-split",
        metavar="RULE",
        help='how texts are cut into sentences, which summary-level ROUGE-L/W and rougeLsum depend on: '
        '"newline" (as given, one per line; the default), "sep:STR" (also at every STR; several joined by |, e.g. "sep: . | ? | ! " '
        'for PTB-tokenized text) '
        'or "sentencex" (a sentence segmenter)',
    )
    group.add_argument(
        "--eval-ids",
        choices=["doc_id", "index"],
        default="doc_id",
        help="ROUGE evaluation ids: the doc_ids (default) or 1..N in sorted doc_id order, as pyrouge numbers them",
    )


def add_conflicting_references(group) -> None:
    """The one option of run and score for input.conflicting_references."""
    group.add_argument(
        "--conflicting-references", choices=["reject", "keep"],
        help="joined form, rows of one doc_id with different references: reject them all (the default, "
        'input.conflicting_references = "error") or keep each row\'s own references (a system released '
        "with its own copy of the references, e.g. SimCLS on CNN/DM)",
    )


def conflicting_references_policy(args: argparse.Namespace) -> str | None:
    """--conflicting-references as input.conflicting_references (None: not given)."""
    return {"reject": "error", "keep": "keep", None: None}[args.conflicting_references]


def settings_from_args(args: argparse.Namespace) -> RougeSettings:
    return make_settings(args.preset or "rouge155", args.rouge_args, args.rouge_types, args.stem, args.language,
                         args.multi_ref, args.sentence_split)


def print_signature(settings: RougeSettings, file=sys.stderr, facts: dict | None = None) -> None:
    """The signature (with what the run adds, `facts`: `RunConfig.facts`) and the
    equivalent ROUGE-1.5.5 command, once per run."""
    print(f"signature: {settings.signature(**(facts or {}))}", file=file)
    try:
        print(f"ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA {settings.rouge155_flags()} -a CONFIG.xml", file=file)
    except RougeConfigError as err:
        print(f"ROUGE-1.5.5 equivalent: none ({err})", file=file)


def rouge_overrides(args: argparse.Namespace) -> dict:
    """The ROUGE options given on the command line, as `config.with_overrides` keys
    (None for an option not given: the config's value stands)."""
    return dict(
        rouge_args=args.rouge_args,
        rouge_preset=args.preset,
        rouge_rouge_types=tuple(t for t in args.rouge_types.split(",") if t) if args.rouge_types else None,
        rouge_stem=args.stem,
        rouge_language=args.language,
        rouge_multi_reference=args.multi_ref,
        rouge_sentence_split=args.sentence_split,
        rouge_eval_ids=args.eval_ids,
    )
