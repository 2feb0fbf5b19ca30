"""Run configuration: a TOML file (data only, read with tomllib) plus CLI overrides.

Every section and key, with its default:

    [input]
    candidates = ["data/*.jsonl"]   # globs: .jsonl, .json, .jsonl.gz, .parquet
    references = []                 # split form: globs of reference files, joined by doc_id
    system_field = "system"
    doc_id_field = "doc_id"
    candidate_field = "candidate"
    references_field = "references" # a list of texts per row
    reference_field = "reference"   # or one reference per row (split form only)
    system_from_path = ""           # regex with a (?P<system>...) group, applied to the file path
    max_text_bytes = 1000000        # longer texts go to the errors table (at most 256 MiB)
    conflicting_references = "error"  # joined form: "error", or "keep" each row's own references
    invalid_utf8 = "reject"         # a line that is not UTF-8: "reject" it, or "replace" bad bytes
    max_line_bytes = 67108864       # longer JSONL lines are skipped as errors, never held in memory (<= 1 GiB)

    [rouge]
    preset = "rouge155"             # or "rouge_score" (rouge-score 0.1.2) or "unicode" (any script)
    args = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"   # ROUGE-1.5.5 flags (rouge155, unicode)
    rouge_types = []                # rouge_score: e.g. ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    stem = false                    # rouge_score: NLTK Porter; others: as -m
    language = ""                   # unicode: the Snowball stemmer's language (default english)
    multi_reference = ""            # "", "average", "best" or "jackknife" ("" keeps -f)
    eval_ids = "doc_id"             # or "index": 1..N in sorted doc_id order, as pyrouge
    sentence_split = "newline"      # sentences: "newline" (as given), "sep:STR" (also at STR) or "sentencex"

    [profiles]                      # several ROUGE settings in one run (Lin 2004 Table 1);
                                    # none: [rouge] alone, as the profile "default"
    case = "-n 4 -w 1.2 -2 4 -U"    # a name = flags in [rouge]'s preset and multi_reference
    stem = ["-n 9 -m", "-2 4 -U -x -m"]   # several flag strings: their metrics side by side
    rs = { preset = "rouge_score", rouge_types = ["rouge1", "rougeL"], stem = true }

    [statistics]
    bootstrap_replicates = 1000     # hash-seeded Poisson bootstrap of the mean (2 to 100,000)
    bootstrap_seed = 0              # 0 to 2**63-1
    jackknife_buckets = 20          # delete-a-group jackknife over documents (2 to 10,000)

    [significance]                  # paired tests between systems (runs with two or more)
    enabled = true
    baseline = ""                   # "": every pair of systems; else each system against this one
    adjust = "holm"                 # "holm" (family-wise error) or "bh" (Benjamini-Hochberg)

    [human]                         # Lin (2004) 2.1: how good is a human summary by this metric
    enabled = false                 # needs rouge.multi_reference = "jackknife" and 2+ references
    name = "human"                  # the pseudo-system's name in every table

    [output]
    folder = "out/run"
    overwrite = false               # true: replace an existing result folder atomically
    per_document_shards = 0         # 0: one shard per 100,000 scored documents; else 1 to 10,000
    per_document_formats = ["parquet"]  # also "csv" and/or "jsonl"

    [run]
    strict = false                  # any bad row fails the run
    max_rejected = 0.01             # more rejected rows than this share (of all rows, or of one
                                    # system's documents): results written, warning, exit status 3
    progress_seconds = 10.0         # off a terminal, a progress line per stage this often (0.1 to 86,400;
                                    # on Dataflow/Spark/Flink, each worker's log line)
    worker_stall_seconds = 300.0    # a local Beam worker stopped (SIGSTOP, a debugger) this long, or no
                                    # counter moving and no process of the run using 5% of a core this
                                    # long: the run is stopped (1 to 86,400; 0: never)
    beam_args = []                  # Beam pipeline options, e.g. ["--runner", "DataflowRunner"]
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from rouge_core import RougeConfigError, RougeSettings


@dataclass(frozen=True)
class InputConfig:
    candidates: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    system_field: str = "system"
    doc_id_field: str = "doc_id"
    candidate_field: str = "candidate"
    references_field: str = "references"
    reference_field: str = "reference"
    system_from_path: str = ""
    max_text_bytes: int = 1_000_000
    conflicting_references: str = "error"
    invalid_utf8: str = "reject"
    max_line_bytes: int = 64 << 20


@dataclass(frozen=True)
class RougeConfig:
    preset: str = "rouge155"
    args: str = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"
    rouge_types: tuple[str, ...] = ()
    stem: bool = False
    language: str = ""
    multi_reference: str = ""
    eval_ids: str = "doc_id"
    sentence_split: str = "newline"


class Profile(NamedTuple):
    """A named ROUGE setting of a run: one or more RougeSettings whose metrics are
    reported side by side (their metric tags are distinct)."""

    name: str
    settings: tuple[RougeSettings, ...]

    @property
    def tags(self) -> list[str]:
        return [tag for s in self.settings for tag in s.metric_tags()]

    def signature(self) -> str:
        return " + ".join(s.signature() for s in self.settings)


def profiles_signature(profiles) -> str:
    """One profile: its signature; several: "name: signature | name: signature"."""
    if len(profiles) == 1:
        return profiles[0].signature()
    return " | ".join(f"{p.name}: {p.signature()}" for p in profiles)


DEFAULT_PROFILE = "default"
_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PROFILE_KEYS = ("preset", "args", "rouge_types", "stem", "language", "multi_reference", "sentence_split")


@dataclass(frozen=True)
class StatisticsConfig:
    bootstrap_replicates: int = 1000
    bootstrap_seed: int = 0
    jackknife_buckets: int = 20


# rouge_core.significance.SIGNIFICANCE_METHOD, written out so that reading a config
# loads no numpy (tests/pipeline/test_significance.py keeps the two equal).
SIGNIFICANCE_METHOD = "signflip:exact<=20+t"


@dataclass(frozen=True)
class SignificanceConfig:
    enabled: bool = True
    baseline: str = ""
    adjust: str = "holm"

    def signature(self) -> str:
        """What changes the significance table's numbers, for run.json and the tables."""
        pairs = f"baseline={self.baseline}" if self.baseline else "all"
        return f"{SIGNIFICANCE_METHOD}|pairs:{pairs}|adjust:{self.adjust}"


@dataclass(frozen=True)
class HumanConfig:
    enabled: bool = False
    name: str = "human"


@dataclass(frozen=True)
class OutputConfig:
    folder: str = "out/run"
    overwrite: bool = False
    per_document_shards: int = 0
    per_document_formats: tuple[str, ...] = ("parquet",)


@dataclass(frozen=True)
class RunOptions:
    strict: bool = False
    max_rejected: float = 0.01
    progress_seconds: float = 10.0
    worker_stall_seconds: float = 300.0
    beam_args: tuple[str, ...] = ()


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

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("source")
        return data

    def validate(self) -> "RunConfig":
        def fail(key: str, value: object, allowed: str) -> None:
            raise RougeConfigError(f"{key} must be {allowed}; got {value!r} (from {self.source})")

        if not self.input.candidates:
            fail("input.candidates", list(self.input.candidates), "at least one file or glob")
        if self.input.system_from_path:
            try:
                pattern = re.compile(self.input.system_from_path)
            except re.error as err:
                fail("input.system_from_path", self.input.system_from_path, f"a valid regex ({err})")
            if "system" not in pattern.groupindex:
                fail(
                    "input.system_from_path",
                    self.input.system_from_path,
                    "a regex with a (?P<system>...) group",
                )
        if self.input.conflicting_references not in ("error", "keep"):
            fail("input.conflicting_references", self.input.conflicting_references, '"error" or "keep"')
        if self.input.invalid_utf8 not in ("reject", "replace"):
            fail("input.invalid_utf8", self.input.invalid_utf8, '"reject" or "replace"')
        for key, value, low, high in (
            ("input.max_line_bytes", self.input.max_line_bytes, 1, 1 << 30),
            ("input.max_text_bytes", self.input.max_text_bytes, 1, 256 << 20),
            ("statistics.bootstrap_replicates", self.statistics.bootstrap_replicates, 2, 100_000),
            ("statistics.bootstrap_seed", self.statistics.bootstrap_seed, 0, (1 << 63) - 1),
            ("statistics.jackknife_buckets", self.statistics.jackknife_buckets, 2, 10_000),
            ("output.per_document_shards", self.output.per_document_shards, 0, 10_000),
            ("run.progress_seconds", self.run.progress_seconds, 0.1, 86_400),
            ("run.max_rejected", self.run.max_rejected, 0, 1),
        ):
            if not low <= value <= high:
                fail(key, value, f"between {low:,} and {high:,}")
        if not (self.run.worker_stall_seconds == 0 or 1 <= self.run.worker_stall_seconds <= 86_400):
            fail("run.worker_stall_seconds", self.run.worker_stall_seconds, "0 (never) or between 1 and 86,400")
        if self.rouge.eval_ids not in ("doc_id", "index"):
            fail("rouge.eval_ids", self.rouge.eval_ids, '"doc_id" or "index"')
        if self.rouge.multi_reference not in ("", "average", "best", "jackknife"):
            fail("rouge.multi_reference", self.rouge.multi_reference, '"average", "best" or "jackknife"')
        if self.rouge.preset not in ("rouge155", "rouge_score", "unicode"):
            fail("rouge.preset", self.rouge.preset, '"rouge155", "rouge_score" or "unicode"')
        if self.significance.adjust not in ("holm", "bh"):
            fail("significance.adjust", self.significance.adjust, '"holm" or "bh"')
        if not set(self.output.per_document_formats) <= {"parquet", "csv", "jsonl"}:
            fail("output.per_document_formats", list(self.output.per_document_formats), 'a list of "parquet", "csv", "jsonl"')
        try:
            self.settings()
        except RougeConfigError as err:
            raise RougeConfigError(f"{err} (rouge in {self.source})") from err
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
        if self.human.enabled and not self.human.name:
            fail("human.name", self.human.name, "a non-empty name")
        return self


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


def _section(cls, values: dict, name: str, source: str):
    known = {f.name: f for f in dataclasses.fields(cls)}
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
        converted[key] = value
    return cls(**converted)


def load_config(path: str | None) -> RunConfig:
    """Read a run configuration from TOML; relative paths in it are relative to the file."""
    if path is None:
        return RunConfig()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError as err:
        raise RougeConfigError(f"config file not found: {path}") from err
    except tomllib.TOMLDecodeError as err:
        raise RougeConfigError(f"{path} is not valid TOML: {err}") from err
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
        changes.setdefault(section, {})[key] = value
    replaced = {
        section: dataclasses.replace(getattr(config, section), **values)
        for section, values in changes.items()
    }
    return dataclasses.replace(config, **replaced)
