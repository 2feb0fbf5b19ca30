"""Run configuration: a TOML file (data only, read with tomllib) plus CLI overrides.

Every key is declared once, below, by `key(default, doc, ...)` in its section's
dataclass: its type (the default's), default, allowed range or choices and what it
does.  Reading (`_section`: unknown keys and types), checking (`RunConfig.validate`:
ranges and choices) and the reference in docs/config.md (`reference_markdown`,
written by `python -m pipeline.render.config_docs docs/config.md` and tested to match) all come
from those declarations.  [profiles] has no fixed keys: each entry is a flag string,
a table of [rouge]'s keys, or a list of those:

    [profiles]                      # several ROUGE settings in one run (Lin 2004 Table 1);
                                    # none: [rouge] alone, as the profile "default"
    case = "-n 4 -w 1.2 -2 4 -U"    # a name = flags in [rouge]'s preset and multi_reference
    stem = ["-n 9 -m", "-2 4 -U -x -m"]   # several flag strings: their metrics side by side
    rs = { preset = "rouge_score", rouge_types = ["rouge1", "rougeL"], stem = true }
"""

from __future__ import annotations

import dataclasses
import glob
import logging
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pipeline.io import files
from pipeline.io.names import id_problem
from pipeline.io.patterns import SystemFromPath
from rouge_core import RougeConfigError, RougeSettings, names
from rouge_core.signature import Signature, nrefs_range

log = logging.getLogger("rouge-pipeline")
MAX_CONFIG_BYTES = 4 << 20  # a run configuration is a few KB; a larger file is not read


def key(default, doc: str, *, low=None, high=None, choices=None, zero=False, old=None, tables=True):
    """A config key's declaration: its default (whose type is the key's type), what it
    does, and the values allowed: `low` to `high` (numbers; `zero`: 0 too, for "off")
    or `choices` (text; for a list, of each item).  `old`: {old spelling: choice}
    of values an earlier version took, still read (with a note, `canonical`); the
    command line's options take the same choices and old spellings.  `tables=False`:
    the key changes no byte of any table (where they go, how the run locks them), so a
    previous run whose value differs, or that had no such key, still has its systems
    carried whole by `run --reuse`."""
    if isinstance(default, list):
        default = tuple(default)
    return field(default=default, metadata={"doc": doc, "low": low, "high": high, "choices": choices, "zero": zero,
                                            "old": old or {}, "tables": tables})


def canonical(section: str, name: str, value, where: str = "", option: str = ""):
    """`value` of key section.name in its one spelling: an old spelling becomes the
    choice it meant, with a one-line note naming the key (or the command line's
    `option`) and `where` it was given."""
    old = declared_key(section, name).metadata["old"]
    if isinstance(value, str) and value in old:
        given = f"{option} {value}" if option else f'{section}.{name} = "{value}"' + (f" in {where}" if where else "")
        log.warning('note: %s is read as "%s", its spelling now', given, old[value])
        return old[value]
    return value


@dataclass(frozen=True)
class InputConfig:
    candidates: tuple[str, ...] = key((), "globs of input files: .jsonl, .json, .jsonl.gz, .parquet (at least one)")
    references: tuple[str, ...] = key((), "split form: globs of reference files, joined to the candidates by doc_id")
    system_field: str = key("system", "the column of the system name")
    doc_id_field: str = key("doc_id", "the column of the document ID")
    candidate_field: str = key("candidate", "the column of the candidate summary")
    references_field: str = key("references", "the column of a row's references (a list of texts)")
    reference_field: str = key("reference", "or a row's one reference (a text), when it has no references field")
    integer_ids: tuple[str, ...] = key(
        (), 'id fields whose values are integers, read as their decimal digits: "system", "doc_id" (a text or '
        "1.0 there is an error row: never coerced, so 1 and \"1\" never merge)", choices=("system", "doc_id"),
    )
    system_from_path: str = key(
        "", "a regex with a (?P<system>...) group, applied to the file path: the system's name"
    )
    max_text_bytes: int = key(1_000_000, "longer texts go to the errors table", low=1, high=256 << 20)
    conflicting_references: str = key(
        "reject", 'joined form: documents whose rows give different references: "reject" their rows (error '
        'rows), or each row scores against its own ("keep")', choices=("reject", "keep"), old={"error": "reject"},
    )
    invalid_utf8: str = key(
        "reject", 'a line that is not UTF-8: "reject" it (an error row), or "replace" the bad bytes',
        choices=("reject", "replace"),
    )
    max_line_bytes: int = key(
        64 << 20, "longer JSONL lines are skipped as errors, never held in memory", low=1, high=1 << 30
    )


@dataclass(frozen=True)
class RougeConfig:
    preset: str = key(
        "rouge155", "rouge155 (ROUGE-1.5.5), rouge_score (rouge-score 0.1.2) or unicode (any script)",
        choices=("rouge155", "rouge_score", "unicode"),
    )
    args: str = key("-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m", "ROUGE-1.5.5 flags (rouge155, unicode)")
    rouge_types: tuple[str, ...] = key((), 'rouge_score: e.g. ["rouge1", "rouge2", "rougeL", "rougeLsum"]')
    stem: bool = key(False, "rouge_score: NLTK's Porter stemmer; other presets: as -m")
    language: str = key("", "unicode: the Snowball stemmer's language, e.g. russian (needed with stemming)")
    multi_reference: str = key(
        "", 'how several references combine: "average" (-f A), "best" (-f B) or "jackknife"; empty: as -f says',
        choices=("", "average", "best", "jackknife"),
    )
    eval_ids: str = key(
        "doc_id", 'evaluation ids: "doc_id", or "index" (1..N in sorted doc_id order, as pyrouge)',
        choices=("doc_id", "index"),
    )
    sentence_split: str = key(
        "newline", 'sentences: "newline" (as given), "sep:STR" (also at STR) or "sentencex"'
    )


class Profile(NamedTuple):
    """A named ROUGE setting of a run: one or more RougeSettings whose metrics are
    reported side by side (their metric tags are distinct)."""

    name: str
    settings: tuple[RougeSettings, ...]

    @property
    def tags(self) -> list[str]:
        """The metrics in the order of their values (each setting's, in turn)."""
        return [tag for s in self.settings for tag in s.metric_tags()]

    @property
    def metric_order(self) -> list[str]:
        """The metrics in the order every table shows them (`rouge_core.names.ordered`)."""
        return names.ordered(self.tags)

    def signature(self, **facts) -> str:
        """The profile's settings' signatures, with the run's `facts` (`RunConfig.facts`)."""
        return " + ".join(s.signature(**facts) for s in self.settings)

    @property
    def reports_rouge155(self) -> bool:
        """Whether the profile has a ROUGE-1.5.5 report (rouge155.txt) and printed
        averages: only the rouge155 preset's settings do (another preset's numbers
        are its mean and seeded interval, not the script's bootstrap averages)."""
        return any(s.preset == "rouge155" for s in self.settings)


def profiles_signature(profiles, **facts) -> str:
    """One profile: its signature; several: "name: signature | name: signature"; with
    the run's `facts` (`RunConfig.facts`)."""
    if len(profiles) == 1:
        return profiles[0].signature(**facts)
    return " | ".join(f"{p.name}: {p.signature(**facts)}" for p in profiles)


def parse_profiles_signature(text: str) -> list[tuple[str, list[Signature]]]:
    """The inverse of `profiles_signature`: [(profile name, its settings' signatures)];
    one profile has the name "" (its signature does not name it).  Fields this version
    does not know (a later version's) are kept (`Signature.parse(strict=False)`).

    Example:
        >>> [(name, [s.as_dict()["n"] for s in sigs])
        ...  for name, sigs in parse_profiles_signature("a: rouge155|n:2 + rouge155|n:4 | b: rouge155|n:1")]
        [('a', ['2', '4']), ('b', ['1'])]

    Raises:
        RougeConfigError: a part is not a signature.
    """
    parts = text.split(" | ")
    named = len(parts) > 1 and all(_PROFILE_NAME.fullmatch(p.partition(": ")[0]) and ": " in p for p in parts)
    profiles = [p.partition(": ")[::2] for p in parts] if named else [("", text)]
    return [(name, [Signature.parse(s, strict=False) for s in sig.split(" + ")]) for name, sig in profiles]


DEFAULT_PROFILE = "default"
_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PROFILE_KEYS = ("preset", "args", "rouge_types", "stem", "language", "multi_reference", "sentence_split")


@dataclass(frozen=True)
class StatisticsConfig:
    bootstrap_replicates: int = key(1000, "replicates of the hash-seeded Poisson bootstrap of the mean",
                                    low=2, high=100_000)
    bootstrap_seed: int = key(0, "the bootstrap's seed", low=0, high=(1 << 63) - 1)
    jackknife_buckets: int = key(20, "groups of the delete-a-group jackknife over documents", low=2, high=10_000)


# rouge_core.significance.SIGNIFICANCE_METHOD, written out so that reading a config
# loads no numpy (tests/pipeline/beam/test_significance.py keeps the two equal).
SIGNIFICANCE_METHOD = "signflip:exact<=20+t"


@dataclass(frozen=True)
class SignificanceConfig:
    enabled: bool = key(True, "paired tests between systems (runs with two or more)")
    baseline: str = key("", "empty: every pair of systems; else each system against this one")
    adjust: str = key("holm", '"holm" (family-wise error) or "bh" (Benjamini-Hochberg)', choices=("holm", "bh"))

    def signature(self) -> str:
        """What changes the significance table's numbers, for run.json and the tables."""
        pairs = f"baseline={self.baseline}" if self.baseline else "all"
        return f"{SIGNIFICANCE_METHOD}|pairs:{pairs}|adjust:{self.adjust}"


@dataclass(frozen=True)
class HumanConfig:
    enabled: bool = key(
        False, "Lin (2004) 2.1: score each reference against the others as the pseudo-system human.name; "
        'needs rouge.multi_reference = "jackknife" and 2+ references'
    )
    name: str = key("human", "the pseudo-system's name in every table (not empty)")


@dataclass(frozen=True)
class OutputConfig:
    folder: str = key("out/run", "the result folder", tables=False)
    overwrite: bool = key(False, "true: replace an existing result folder atomically", tables=False)
    per_document_shards: int = key(
        0, "files of the per-document table per (profile, system), of consecutive documents; 0: one per "
        "100,000 of its documents", low=0, high=10_000
    )
    per_document_formats: tuple[str, ...] = key(
        ("parquet",), "formats of the per-document table: parquet, csv, jsonl", choices=("parquet", "csv", "jsonl")
    )
    lock_lease_seconds: float = key(
        60.0, "an output on an object store (gs://, s3://): the run's lock object (OUT.lock) is renewed every "
        "quarter of this; a lock not renewed this long is a killed run's, and the next run takes it over "
        "(docs/object-stores.md)", low=1, high=86_400, tables=False,
    )


@dataclass(frozen=True)
class RunOptions:
    strict: bool = key(False, "any bad row fails the run")
    max_rejected: float = key(
        0.01, "more rejected rows than this share (of all rows, or of one system's documents): results "
        "written, a warning, exit status 3", low=0, high=1,
    )
    progress_seconds: float = key(
        10.0, "off a terminal, a progress line per stage this often (on Dataflow/Spark/Flink, each "
        "worker's log line)", low=0.1, high=86_400,
    )
    worker_stall_seconds: float = key(
        300.0, "a local Beam worker stopped (SIGSTOP, a debugger) this long, or no counter moving this long "
        "while a process is busy (once the workers count) or while none uses or waits for a CPU: the run is "
        "stopped (0: never); a slow or starved run is not", low=1, high=86_400, zero=True,
    )
    shared_filesystem: bool = key(
        False, "every worker of a cluster runner (Dask with an address, PortableRunner, Flink, Spark, Dataflow) "
        "sees this machine's local paths at the same names (a shared filesystem, or workers on this machine): "
        "without it a local input, output, temp or staging path is refused with such a runner, before any work",
    )
    cluster_wait_seconds: float = key(
        60.0, "a Dask scheduler with no worker connected this long, or a job service (--job_endpoint) that does "
        "not answer this long: the run fails, saying so (0: wait for ever)", low=1, high=86_400, zero=True,
    )
    beam_args: tuple[str, ...] = key((), 'Beam pipeline options, e.g. ["--runner", "DataflowRunner"]')
    reuse: str = key(
        "", "a previous result folder (local or URL): rows it scored with the same texts and settings are not "
        "scored again, systems whose input files are unchanged are copied whole, each proven by digests "
        "(docs/nightly.md); empty: none",
    )


@dataclass(frozen=True)
class RunConfig:
    input: InputConfig = field(default_factory=InputConfig)
    rouge: RougeConfig = field(default_factory=RougeConfig)
    statistics: StatisticsConfig = field(default_factory=StatisticsConfig)
    significance: SignificanceConfig = field(default_factory=SignificanceConfig)
    human: HumanConfig = field(default_factory=HumanConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    run: RunOptions = field(default_factory=RunOptions)
    # (name, ({key: value} per setting, keys of _PROFILE_KEYS)) per [profiles] entry
    profiles: tuple = ()
    source: str = "<defaults>"
    # "section.key" of the values given on the command line (with_overrides): their
    # errors name the command line, not the config file
    overridden: tuple = ()

    def settings(self) -> RougeSettings:
        """The ROUGE settings of [rouge]."""
        r = self.rouge
        return make_settings(r.preset, r.args, r.rouge_types, r.stem or None, r.language, r.multi_reference,
                             r.sentence_split)

    def profile_list(self) -> list[Profile]:
        """The run's profiles, in the config's order: [profiles], or [rouge] alone as
        the profile "default".  An entry's keys not given come from [rouge]."""
        if not self.profiles:
            return [Profile(DEFAULT_PROFILE, (self.settings(),))]
        r = self.rouge
        out = []
        for name, items in self.profiles:
            settings = []
            for item in items:
                preset = item.get("preset", r.preset)
                try:
                    settings.append(
                        make_settings(
                            preset,
                            item.get("args", r.args),
                            item.get("rouge_types", r.rouge_types if preset == "rouge_score" else ()),
                            item.get("stem", r.stem) or None,
                            item.get("language", r.language),
                            item.get("multi_reference", r.multi_reference),
                            item.get("sentence_split", r.sentence_split),
                        )
                    )
                except RougeConfigError as err:
                    raise RougeConfigError(f"profiles.{name}: {err} (from {self.source})") from err
            out.append(Profile(name, tuple(settings)))
        return out

    def facts(self, references: tuple[int, int] | None = None) -> dict:
        """What the run adds to its settings' signature (`RougeSettings.signature`'s
        keywords): the evaluation ids, the references per document (from the fewest
        and the most a scored document had, when known) and the bootstrap."""
        s = self.statistics
        return {
            "eval_ids": self.rouge.eval_ids,
            "nrefs": None if references is None else nrefs_range(*references),
            "resampling": (s.bootstrap_replicates, s.bootstrap_seed, s.jackknife_buckets),
        }

    def counted_facts(self, counts: dict) -> dict:
        """`facts` with the references per document a run's counts found
        (`pipeline.io.tables.run_counts`): the tables' and run.json's signature."""
        references = counts.get("references_per_document")
        return self.facts(tuple(references) if references else None)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("source")
        data.pop("overridden")
        return data

    def validate(self) -> "RunConfig":
        def fail(key: str, value: object, allowed: str) -> None:
            where = "the command line" if key in self.overridden else self.source
            raise RougeConfigError(f"{key} must be {allowed}; got {value!r} (from {where})")

        if not self.input.candidates:
            fail("input.candidates", list(self.input.candidates), "at least one file or glob")
        if self.input.system_from_path:
            try:
                SystemFromPath(self.input.system_from_path)
            except RougeConfigError as err:
                where = "the command line" if "input.system_from_path" in self.overridden else self.source
                raise RougeConfigError(f"{err} (from {where})") from None
        for section in _SECTIONS:
            check_declared(section, getattr(self, section), fail)
        _check_names(self, fail)
        try:
            self.settings()
        except RougeConfigError as err:
            given = any(key.startswith("rouge.") for key in self.overridden)
            where = ("the command line" + ("" if self.source == "<defaults>" else f" over {self.source}")
                     if given else self.source)
            raise RougeConfigError(f"{err} (rouge settings from {where})") from err
        for profile in self.profile_list():
            tags = profile.tags
            repeated = sorted({t for t in tags if tags.count(t) > 1})
            if repeated:
                fail(f"profiles.{profile.name}", [s.signature() for s in profile.settings],
                     f"settings whose metrics differ (each of {repeated} is scored twice)")
            if self.human.enabled and any(s.multi_reference != "jackknife" for s in profile.settings):
                fail("human.enabled", True, 'used with multi_reference = "jackknife" (or --multi-ref jackknife) '
                     "in every setting, so that systems are scored against the same held-out reference sets "
                     "as the human pseudo-system")
        return self


def check_declared(section: str, values, fail) -> None:
    """Every key of a section (`values`, its dataclass) within its declared range or
    choices; `fail(key, value, allowed)` raises for the first that is not."""
    for declared in dataclasses.fields(_SECTIONS[section]):
        value = getattr(values, declared.name)
        low, high, choices, zero = (declared.metadata[k] for k in ("low", "high", "choices", "zero"))
        if low is not None and not (low <= value <= high or (zero and value == 0)):
            fail(f"{section}.{declared.name}", value, f"{'0 (never) or ' if zero else ''}between {low:,} and {high:,}")
        if choices is not None and isinstance(value, tuple) and not set(value) <= set(choices):
            fail(f"{section}.{declared.name}", list(value), f"a list of {_either(choices, ', ')}")
        elif choices is not None and not isinstance(value, tuple) and value not in choices:
            fail(f"{section}.{declared.name}", value, _either(choices, " or "))


# The columns a row is read by, each in one role: one column in two roles would be
# scored against itself (candidate_field = "references": 100%), or make every row
# its own system (system_field = "doc_id").  A candidate file's row holds the first
# four, a reference file's row doc_id, references or reference, and reference_id.
# references_field and reference_field may name one column: a list there is a
# document's references, a text one reference (--fields reference=references).
_CANDIDATE_ROLES = ("system_field", "doc_id_field", "candidate_field", "references_field")
_REFERENCE_ROLES = ("doc_id_field", "references_field", "reference_field")
_ONE_COLUMN_MAY = {"references_field", "reference_field"}


def _check_names(config: "RunConfig", fail) -> None:
    """The names a config gives (column names, human.name, significance.baseline)
    follow the id rule (pipeline.io.names.id_problem), and no column has two roles."""
    named = [(f"input.{key}", getattr(config.input, key)) for key in _CANDIDATE_ROLES + ("reference_field",)]
    named.append(("human.name", config.human.name))
    if config.significance.baseline:
        named.append(("significance.baseline", config.significance.baseline))
    for key, name in named:
        problem = id_problem(name)
        if problem:
            fail(key, name, f"a name that follows the id rule (it {problem})")
    for roles in (_CANDIDATE_ROLES, _REFERENCE_ROLES + ("reference_id",)):
        seen: dict = {}
        for role in roles:
            column = "reference_id" if role == "reference_id" else getattr(config.input, role)
            if column in seen and {seen[column], role} != _ONE_COLUMN_MAY:
                first, second = seen[column], role  # (the one the command line set is named first)
                if f"input.{second}" in config.overridden and f"input.{first}" not in config.overridden:
                    first, second = second, first
                other = "the reference rows' reference_id" if second == "reference_id" else f"input.{second}"
                fail(f"input.{first}", column,
                     f"a column of its own, not also {other} (one column cannot be read in two roles)")
            seen[column] = role


def _either(choices, last: str) -> str:
    """'"a", "b" or "c"' (`last` " or ") of the non-empty choices."""
    quoted = [f'"{c}"' for c in choices if c]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + last + quoted[-1]


def _profiles(values: dict, source: str) -> tuple:
    """[profiles] as (name, ({key: value}, ...)) pairs; a string is {"args": it}."""
    out = []
    for name, value in values.items():
        if not _PROFILE_NAME.fullmatch(name):
            raise RougeConfigError(
                f"profile name {name!r} in {source} must be 1-64 letters, digits, '_', '.' or '-' "
                "(it names files)"
            )
        items = value if isinstance(value, list) else [value]
        settings = []
        for item in items:
            item = {"args": item} if isinstance(item, str) else item
            if not isinstance(item, dict) or not item:
                raise RougeConfigError(
                    f"profiles.{name} in {source} must be a flag string, a table of {list(_PROFILE_KEYS)}, "
                    f"or a list of those; got {value!r}"
                )
            unknown = sorted(set(item) - set(_PROFILE_KEYS))
            if unknown:
                raise RougeConfigError(f"unknown key(s) {unknown} in profiles.{name} of {source}; known: {list(_PROFILE_KEYS)}")
            section = _section(RougeConfig, item, f"profiles.{name}", source)
            settings.append({key: getattr(section, key) for key in item})
        if not settings:
            raise RougeConfigError(f"profiles.{name} in {source} has no settings")
        out.append((name, tuple(settings)))
    return tuple(out)


def make_settings(
    preset, flags, rouge_types=None, stem=None, language=None, multi_reference=None, sentence_split=None
) -> RougeSettings:
    """Settings from a preset name and its options, as the CLI and configs give them.
    The rouge_score preset takes rouge_types instead of ROUGE-1.5.5 flags."""
    if preset == "rouge_score":
        flags = None
    elif rouge_types:
        raise RougeConfigError(f"--rouge-types is an option of the rouge_score preset, not of {preset}")
    if isinstance(rouge_types, str):
        rouge_types = [t for t in rouge_types.split(",") if t]
    return RougeSettings.from_preset(
        preset, flags, rouge_types=rouge_types or None, stem=stem, language=language or None,
        multi_reference=multi_reference or None, sentence_split=sentence_split or None,
    )


_SECTIONS = {
    "input": InputConfig,
    "rouge": RougeConfig,
    "statistics": StatisticsConfig,
    "significance": SignificanceConfig,
    "human": HumanConfig,
    "output": OutputConfig,
    "run": RunOptions,
}


def declarations():
    """(section, dataclasses.Field) of every config key, in the sections' order; a
    field's metadata holds its doc, low, high and choices (see `key`)."""
    return [(name, declared) for name, cls in _SECTIONS.items() for declared in dataclasses.fields(cls)]


def declared_key(section: str, name: str) -> dataclasses.Field:
    """The declaration of key section.name."""
    return next(f for f in dataclasses.fields(_SECTIONS[section]) if f.name == name)


def table_settings(section: str, values: dict) -> dict:
    """[section]'s `values` (as a run.json's config records them, perhaps by an earlier
    version) as this version reads them, keeping only what changes a table's bytes:
    old spellings read as their choice now, a key the record lacks at its default (a
    key is added with the default that keeps what runs did before), a key this
    version does not know kept as it is; the keys declared `tables=False` dropped."""
    fields = {f.name: f for f in dataclasses.fields(_SECTIONS[section])}

    def spelled(name, value):
        old = fields[name].metadata["old"]
        if isinstance(value, (list, tuple)):
            return [old.get(v, v) if isinstance(v, str) else v for v in value]
        return old.get(value, value) if isinstance(value, str) else value

    out = {name: spelled(name, values.get(name, f.default)) for name, f in fields.items() if f.metadata["tables"]}
    out.update({name: value for name, value in values.items() if name not in fields})
    return out


def _section(cls, values: dict, name: str, source: str):
    known = {f.name: f for f in dataclasses.fields(cls)}
    section = next(s for s, c in _SECTIONS.items() if c is cls)
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise RougeConfigError(
            f"unknown key(s) {unknown} in [{name}] of {source}; known keys: {sorted(known)}"
        )
    converted = {}
    for key, value in values.items():
        default = known[key].default
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(default, tuple):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise RougeConfigError(
                    f"{name}.{key} must be a list of strings; got {value!r} (from {source})"
                )
            value = tuple(value)
        elif not isinstance(value, type(default)) or (isinstance(value, bool) != isinstance(default, bool)):
            raise RougeConfigError(
                f"{name}.{key} must be a {type(default).__name__}; got {value!r} (from {source})"
            )
        converted[key] = (tuple(canonical(section, key, v, source) for v in value) if isinstance(value, tuple)
                          else canonical(section, key, value, source))
    return cls(**converted)


def input_section(values: dict, source: str) -> InputConfig:
    """[input] from `values` (a run.json's recorded config: untrusted), its known keys
    only, with their types, ranges and choices checked (a RougeConfigError if not)."""
    known = {f.name for f in dataclasses.fields(InputConfig)}
    section = _section(InputConfig, {k: v for k, v in values.items() if k in known}, "input", source)

    def fail(key: str, value: object, allowed: str) -> None:
        raise RougeConfigError(f"{key} must be {allowed}; got {value!r} (from {source})")

    check_declared("input", section, fail)
    return section


def load_config(path: str | None) -> RunConfig:
    """Read a run configuration from TOML; relative paths in it are relative to the file."""
    if path is None:
        return RunConfig()
    try:  # (a pipe is read once: --config <(make-config); a device or a folder is refused)
        with files.open_read(path, pipe_ok=True) as fh:
            text = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as err:
        raise RougeConfigError(f"config file not found: {path}") from err
    except OSError as err:
        raise RougeConfigError(f"config file {path} cannot be read ({err.strerror or err})") from err
    if len(text) > MAX_CONFIG_BYTES:
        raise RougeConfigError(f"{path}: over {MAX_CONFIG_BYTES >> 20} MB; not a run configuration")
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise RougeConfigError(f"{path} is not valid TOML: not UTF-8 ({err})") from err
    except tomllib.TOMLDecodeError as err:
        raise RougeConfigError(f"{path} is not valid TOML: {err}") from err
    except RecursionError:  # (arrays or tables nested deeper than Python's parser goes)
        raise RougeConfigError(f"{path} is not valid TOML: nested too deeply to be a run configuration") from None
    unknown = sorted(set(data) - set(_SECTIONS) - {"profiles"})
    if unknown:
        raise RougeConfigError(f"unknown section(s) {unknown} in {path}; known: {sorted(_SECTIONS) + ['profiles']}")
    sections = {name: _section(cls, data.get(name, {}), name, path) for name, cls in _SECTIONS.items()}
    # Paths in a config are relative to the config file, so a config works from any folder.
    base = Path(path).resolve().parent
    sections["input"] = dataclasses.replace(
        sections["input"],
        candidates=tuple(_relative_to(base, p, pattern=True) for p in sections["input"].candidates),
        references=tuple(_relative_to(base, p, pattern=True) for p in sections["input"].references),
    )
    sections["output"] = dataclasses.replace(sections["output"], folder=_relative_to(base, sections["output"].folder))
    if sections["run"].reuse:
        sections["run"] = dataclasses.replace(sections["run"], reuse=_relative_to(base, sections["run"].reuse))
    profiles = _profiles(data.get("profiles", {}), path)
    return RunConfig(**sections, profiles=profiles, source=str(Path(path)))


def _relative_to(base: Path, path: str, pattern: bool = False) -> str:
    """`path` relative to the config's folder `base`.  For a glob, `base` is escaped:
    a folder named `runs[1]` must not turn `*.jsonl` into a pattern that matches
    files of `runs1`.  Joined as text, without simplifying `..` (the system resolves
    it, through symlinks)."""
    if "://" in path or Path(path).is_absolute():
        return path
    return os.path.join(glob.escape(str(base)) if pattern else str(base), path)


def with_overrides(config: RunConfig, **overrides: Any) -> RunConfig:
    """Apply CLI overrides given as section_key=value (None: not given)."""
    changes: dict[str, dict[str, Any]] = {}
    for name, value in overrides.items():
        if value is None:
            continue
        section, key = name.split("_", 1)
        changes.setdefault(section, {})[key] = canonical(section, key, value)
    replaced = {
        section: dataclasses.replace(getattr(config, section), **values)
        for section, values in changes.items()
    }
    given = tuple(f"{section}.{key}" for section, values in changes.items() for key in values)
    return dataclasses.replace(config, **replaced, overridden=config.overridden + given)
