"""What the commands share: the ROUGE options, settings from them, the signature line."""

from __future__ import annotations

import argparse
import sys
import textwrap

from pipeline.config import canonical, declared_key, make_settings
from pipeline.io import stores
from pipeline.io.fields import FIELD_KEYS
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
    config_option(
        group, "--preset", "rouge", "preset",
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
    config_option(
        group, "--multi-ref", "rouge", "multi_reference",
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
    config_option(
        group, "--eval-ids", "rouge", "eval_ids",
        default="doc_id",
        help="ROUGE evaluation ids: the doc_ids (default) or 1..N in sorted doc_id order, as pyrouge numbers them",
    )


# option -> (section, key) of the config key it sets, for every option with choices
# that sets one: the same choices and spellings on the command line as in a config.
CONFIG_OPTIONS: dict[str, tuple[str, str]] = {}


def config_option(group, flag: str, section: str, name: str, **options) -> None:
    """An option that sets config key section.name, taking the values its declaration
    allows (pipeline.config.key: choices, old spellings read with a note)."""
    CONFIG_OPTIONS[flag] = (section, name)
    group.add_argument(flag, choices=[c for c in declared_key(section, name).metadata["choices"] if c],
                       type=lambda value: canonical(section, name, value, option=flag), **options)


FIELDS_EXAMPLE = "system=model,doc_id=id,candidate=prediction,reference=reference"


def add_field_options(group) -> None:
    """run's and score's options for the input's columns (input.*_field, input.integer_ids)."""
    group.add_argument(
        "--fields", type=field_mapping, metavar="KEY=COLUMN,...",
        help=f"the input's column names, e.g. {FIELDS_EXAMPLE}; keys: {', '.join(FIELD_KEYS)} "
        "(references: a list of texts; reference: a row's one text); a config's input.<key>_field",
    )
    group.add_argument(
        "--integer-ids", type=integer_ids, metavar="KEY[,KEY]",
        help="doc_id, system or both: their columns hold integers, read as their decimal digits (a text there "
        "is an error row: 1 and \"1\" never merge); input.integer_ids",
    )


def field_mapping(text: str) -> dict[str, str]:
    """--fields: "key=column,..." as {key: column}, each key of FIELD_KEYS at most
    once, each column for one key."""
    mapping: dict[str, str] = {}
    for part in text.split(","):
        key, sep, column = (p.strip() for p in part.partition("="))
        if not sep or not column:
            raise argparse.ArgumentTypeError(f"{part.strip()!r} is not KEY=COLUMN (e.g. {FIELDS_EXAMPLE})")
        if key not in FIELD_KEYS:
            raise argparse.ArgumentTypeError(f"{key!r} is not one of the keys {', '.join(FIELD_KEYS)}")
        if key in mapping:
            raise argparse.ArgumentTypeError(f"{key} is mapped twice")
        mapping[key] = column
    shared = sorted({c for c in mapping.values() if list(mapping.values()).count(c) > 1})
    if shared:
        raise argparse.ArgumentTypeError(f"column {shared[0]!r} is mapped to two keys")
    return mapping


def integer_ids(text: str) -> tuple[str, ...]:
    """--integer-ids: "doc_id", "system" or both, comma-separated."""
    allowed = declared_key("input", "integer_ids").metadata["choices"]
    keys = tuple(dict.fromkeys(k.strip() for k in text.split(",")))
    for key in keys:
        if key not in allowed:
            raise argparse.ArgumentTypeError(f"{key!r} is not one of {', '.join(allowed)}")
    return keys


def input_overrides(args: argparse.Namespace) -> dict:
    """--fields, --integer-ids and --conflicting-references as `config.with_overrides`
    keys (None: not given)."""
    fields = args.fields or {}
    return dict(
        {f"input_{key}_field": column for key, column in fields.items()},
        input_integer_ids=args.integer_ids,
        input_conflicting_references=args.conflicting_references,
    )


def add_conflicting_references(group) -> None:
    """The one option of run and score for input.conflicting_references."""
    config_option(
        group, "--conflicting-references", "input", "conflicting_references",
        help="joined form, rows of one doc_id with different references: reject them all (the default) or "
        "keep each row's own references (a system released with its own copy of the references, e.g. "
        'SimCLS on CNN/DM); input.conflicting_references = "reject" or "keep" in a config',
    )


def settings_from_args(args: argparse.Namespace) -> RougeSettings:
    return make_settings(args.preset or "rouge155", args.rouge_args, args.rouge_types, args.stem, args.language,
                         args.multi_ref, args.sentence_split)


def print_signature(settings: RougeSettings, file=None, facts: dict | None = None) -> None:
    """The signature (with what the run adds, `facts`: `RunConfig.facts`) and the
    equivalent ROUGE-1.5.5 command, once per run, to `file` (default: stderr as it is
    now, not as it was when this module was imported)."""
    file = file or sys.stderr
    print(f"signature: {settings.signature(**(facts or {}))}", file=file)
    try:
        print(f"ROUGE-1.5.5 equivalent: ROUGE-1.5.5.pl -e DATA {settings.rouge155_flags()} -a CONFIG.xml", file=file)
    except RougeConfigError as err:
        print(f"ROUGE-1.5.5 equivalent: none ({err})", file=file)


def measure_name(text: str) -> str:
    """--measure of score and compare, in any case: F, R, P or the column names
    f_measure, recall, precision (and the words)."""
    key = text.strip().lower()
    if key not in MEASURE_WORDS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a measure: F (F-measure), R (recall) or P (precision)")
    return MEASURE_WORDS[key]


MEASURE_WORDS = {"f": "f_measure", "r": "recall", "p": "precision", "f_measure": "f_measure",
                 "f-measure": "f_measure", "fmeasure": "f_measure", "recall": "recall", "precision": "precision"}


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


STORE_OPTIONS_HELP = textwrap.fill(
    "folders may be local or URLs of any Beam filesystem (gs://, s3://, hdfs://).  Beam's filesystem "
    "options are accepted (--s3_endpoint_url, --s3_region_name, --no_auth (GCS without credentials), "
    "--project, --hdfs_host, ...), and S3 also reads AWS_ENDPOINT_URL, AWS_REGION and the AWS_* "
    "credentials from the environment: docs/object-stores.md.", 88
)


def takes_store_options(parser: argparse.ArgumentParser) -> None:
    """The command accepts Beam's filesystem options (pipeline.cli.main hands them to
    its handler as its extra arguments; `apply_store_options` applies them)."""
    parser.set_defaults(store_options=True)


def apply_store_options(store_args: list[str]) -> None:
    """Apply the filesystem options given (before the command lists or opens a
    file); without any, the environment's are applied at the first URL."""
    if store_args:
        stores.configure(store_args)
