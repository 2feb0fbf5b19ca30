"""Several ROUGE settings (profiles) in one run: Lin (2004)'s CASE / STEM / STOP on
the official sample, each profile's report against the official script's output
for its flags, a profile of several flag strings against runs of each alone, and
the config's refusals."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from pipeline.config import InputConfig, OutputConfig, RunConfig, load_config
from pipeline.beam.run import run
from tests.conftest import GOLDEN, read_jsonl
from tests.pipeline.runs import IN_MEMORY, read_errors, run_pipeline, write_jsonl
from rouge_core import RougeConfigError

CASES = read_jsonl(GOLDEN / "cases.jsonl")
FLAGS = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a"
LIN = {"case": FLAGS, "stem": FLAGS + " -m", "stop": FLAGS + " -m -s"}  # Lin (2004) Table 1's columns
OFFICIAL = {name: f"ROUGE-test-{flags[1:].replace(' -', '-').replace(' ', '')}.out" for name, flags in LIN.items()}


def toml_value(value) -> str:
    """A string, list or table (inline) as TOML."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def run_profiles(tmp_path, profiles: dict, rows=CASES, **config):
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    source = tmp_path / "run.toml"
    lines = ["[input]", f'candidates = ["{data}"]', "[output]", f'folder = "{tmp_path / "out"}"', "[profiles]"]
    lines += [f"{name} = {toml_value(value)}" for name, value in profiles.items()]
    for section, values in config.items():
        lines += [f"[{section}]"] + [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    source.write_text("\n".join(lines) + "\n")
    return run(load_config(str(source)).validate(), IN_MEMORY)


def test_case_stem_stop_in_one_run_each_equal_the_official_script(tmp_path):
    assert OFFICIAL["stop"] == "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m-s.out"
    record = run_profiles(tmp_path, LIN)
    out = tmp_path / "out"
    for name in LIN:  # every profile's report, byte for byte
        expected = (GOLDEN / "sample-output" / OFFICIAL[name]).read_text()
        assert (out / f"rouge155-{name}.txt").read_text() == expected, name
    assert not (out / "rouge155.txt").exists()
    # Every candidate was read and counted once, and scored under each profile.
    assert record["counts"]["rows_read"] == record["counts"]["scored"] == 200
    assert record["counts"]["documents_by_system"] == {s: 25 for s in ("11", "12", "13", "14", "21", "22", "23", "24")}
    assert [p["name"] for p in record["profiles"]] == ["case", "stem", "stop"]
    table = pq.read_table(out / "system_scores.parquet").to_pylist()
    assert len(table) == 3 * 8 * 8  # profiles x systems x metrics
    assert [r["profile"] for r in table[:: 8 * 8]] == ["case", "stem", "stop"]
    for r in table:
        assert r["signature"] == record["profiles"][["case", "stem", "stop"].index(r["profile"])]["signatures"][0]
    # "11 ROUGE-1 Average_R: 0.19191", "0.22651" and "0.20327" in the three official outputs
    printed = {r["profile"]: r["rouge155_recall"] for r in table if r["system"] == "11" and r["metric"] == "ROUGE-1"}
    assert printed == {"case": 0.19191, "stem": 0.22651, "stop": 0.20327}
    per_document = pq.read_table(out / "per_document").to_pylist()
    assert len(per_document) == 3 * 200 * 8
    assert {r["profile"] for r in per_document} == set(LIN)
    significance = pq.read_table(out / "significance.parquet").to_pylist()
    assert len(significance) == 3 * 8 * 3 * 28  # profiles x metrics x R/P/F x pairs of 8 systems
    markdown = (out / "system_scores.md").read_text()
    assert all(f"## Profile {name}" in markdown for name in LIN)
    assert "stem ROUGE-SU*" in (out / "report.html").read_text()


def test_a_profile_of_several_flag_strings_equals_each_alone(tmp_path):
    parts = ["-n 2 -m", "-2 4 -U -x -m"]
    run_profiles(tmp_path / "both", {"lin": parts})
    table = pq.read_table(tmp_path / "both" / "out" / "system_scores.parquet").to_pylist()
    assert [r["metric"] for r in table if r["system"] == "11"] == ["ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-S4", "ROUGE-SU4"]
    alone = []
    for i, flags in enumerate(parts):
        run_pipeline(tmp_path / f"alone{i}", [write_jsonl(tmp_path / f"in{i}.jsonl", CASES)], flags=flags)
        alone += pq.read_table(tmp_path / f"alone{i}" / "system_scores.parquet").to_pylist()
    strip = lambda r: {k: v for k, v in r.items() if k != "profile"}  # noqa: E731
    assert sorted(map(strip, table), key=str) == sorted(map(strip, alone), key=str)
    assert {r["profile"] for r in alone} == {"default"}
    report = (tmp_path / "both" / "out" / "rouge155.txt").read_text()  # one profile: one report
    assert report.count("11 ROUGE-SU4 Average_F") == 1 and report.count("11 ROUGE-1 Average_F") == 1


def test_a_row_that_fails_under_one_profile_is_one_error_and_scored_under_none(tmp_path):
    rows = CASES[:8] + [dict(CASES[0], doc_id="long", candidate="the " * 3300)]
    record = run_profiles(tmp_path, {"n1": "-n 1 -r 10", "skip": "-2 -1 -U -r 10"}, rows=rows)
    counts = record["counts"]
    assert counts["rows_read"] == 9 and counts["scored"] == 8 and counts["errors_by_reason"] == {"too_costly": 1}
    (error,) = read_errors(tmp_path / "out")
    assert error["doc_id"] == "long" and "(profile skip)" in error["message"]
    per_document = pq.read_table(tmp_path / "out" / "per_document").to_pylist()
    assert "long" not in {r["doc_id"] for r in per_document}
    assert {r["profile"] for r in per_document} == {"n1", "skip"}


@pytest.mark.parametrize(
    "profiles, message",
    [
        ('"../x" = "-n 1"', "profile name '../x'"),
        ('a = ["-n 2", "-n 1 -x"]', "each of ['ROUGE-1'] is scored twice"),
        ("a = []", "profiles.a"),
        ('a = { preset = "rouge155", args = "-n 1", colour = "red" }', "unknown key(s) ['colour'] in profiles.a"),
        ('a = "-n 101"', "profiles.a: "),
        ("a = 3", "must be a flag string, a table"),
    ],
)
def test_bad_profiles_are_refused_with_the_reason(tmp_path, profiles, message):
    source = tmp_path / "run.toml"
    source.write_text(f'[input]\ncandidates = ["x.jsonl"]\n[profiles]\n{profiles}\n')
    with pytest.raises(RougeConfigError) as err:
        load_config(str(source)).validate()
    assert message in str(err.value)


def test_rouge_options_on_the_command_line_do_not_silently_override_profiles(tmp_path):
    source = tmp_path / "run.toml"
    source.write_text('[input]\ncandidates = ["x.jsonl"]\n[profiles]\ncase = "-n 1"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "run", "--config", str(source), "--rouge-args", "-n 2", "--dry-run"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2
    assert "--rouge-args set [rouge], but" in proc.stderr and "[profiles]" in proc.stderr


def test_without_profiles_the_run_is_the_default_profile():
    config = RunConfig(input=InputConfig(candidates=("x",)), output=OutputConfig()).validate()
    (profile,) = config.profile_list()
    assert profile.name == "default" and profile.settings == (config.settings(),)


def test_compare_tells_the_profiles_apart(tmp_path, capsys):
    from pipeline import cli

    rows = [r for r in CASES if r["system"] in ("11", "24")]
    for name, drop in (("old", False), ("new", True)):
        # the new run's system 24 has empty candidates on half the documents
        data = [dict(r, candidate="") if drop and r["system"] == "24" and int(r["doc_id"][-2:]) % 2 else r for r in rows]
        run_profiles(tmp_path / name, {"case": "-n 1 -r 20", "stem": "-n 1 -m -r 20"}, rows=data)
    assert cli.main(["compare", str(tmp_path / "old" / "out"), str(tmp_path / "old" / "out")]) == 0
    capsys.readouterr()
    code = cli.main(["compare", str(tmp_path / "old" / "out"), str(tmp_path / "new" / "out"),
                     "--output", str(tmp_path / "cmp")])  # fmt: skip
    table = {(r["system"], r["metric"]): r for r in pq.read_table(tmp_path / "cmp" / "comparison.parquet").to_pylist()}
    assert sorted(table) == [(s, f"{p} {m}") for s in ("11", "24") for p in ("case", "stem") for m in ("ROUGE-1", "ROUGE-L")]
    assert table["11", "stem ROUGE-1"]["delta_points"] == 0
    assert table["24", "stem ROUGE-1"]["delta_points"] < 0 and table["24", "case ROUGE-1"]["delta_points"] < 0
    assert code == 1  # a significant drop: exit 1, naming the profile of each metric
    assert "24 case ROUGE-1" in capsys.readouterr().out


def test_the_human_pseudo_system_is_scored_under_every_profile_and_counted_once(tmp_path):
    profiles = {"case": "-n 1 -r 20", "stem": "-n 1 -m -r 20"}
    record = run_profiles(tmp_path / "both", profiles, rouge={"multi_reference": "jackknife"}, human={"enabled": True})
    assert record["counts"]["human_documents"] == 25 and record["counts"]["scored"] == 200
    table = pq.read_table(tmp_path / "both" / "out" / "system_scores.parquet").to_pylist()
    human = {(r["profile"], r["metric"]): r["f_measure"] for r in table if r["system"] == "human"}
    assert sorted(human) == [(p, m) for p in ("case", "stem") for m in ("ROUGE-1", "ROUGE-L")]
    for name, flags in profiles.items():  # each profile's human row equals a run of that profile alone
        run_profiles(tmp_path / name, {name: flags}, rouge={"multi_reference": "jackknife"}, human={"enabled": True})
        alone = pq.read_table(tmp_path / name / "out" / "system_scores.parquet").to_pylist()
        assert {(r["profile"], r["metric"]): r["f_measure"] for r in alone if r["system"] == "human"} == {
            key: value for key, value in human.items() if key[0] == name
        }


def test_only_rouge155_profiles_have_a_rouge155_report(tmp_path):
    # rouge-score's convention has no ROUGE-1.5.5 report: its number is the mean with a
    # seeded interval (system_scores); a bootstrap-average report beside it would be a
    # second, different number for the same scores.
    record = run_profiles(tmp_path / "mixed", {"perl": LIN["case"], "google": {"preset": "rouge_score", "rouge_types": ["rouge1"]}})
    out = tmp_path / "mixed" / "out"
    assert sorted(p.name for p in out.glob("rouge155*")) == ["rouge155-perl.txt"]
    assert (out / "rouge155-perl.txt").read_text() == (GOLDEN / "sample-output" / OFFICIAL["case"]).read_text()
    table = pq.read_table(out / "system_scores.parquet").to_pylist()
    google = [r for r in table if r["profile"] == "google"]
    assert google and all(r["rouge155_recall"] is None for r in google)
    assert record["counts"]["scored"] == 200
    run_profiles(tmp_path / "alone", {"google": {"preset": "rouge_score", "rouge_types": ["rouge1"]}})
    assert not list((tmp_path / "alone" / "out").glob("rouge155*"))
