"""No silent wrong numbers (issue 19), as a user meets them on the command line:
rejected rows, text the preset cannot read, sentence boundaries, different
document sets, and the one number each preset shows, for `score` and `run`."""

import csv
import io
import json

import pytest
from rouge_score import rouge_scorer, scoring

from pipeline.coverage import EXIT_REJECTED
from tests.pipeline.runs import write_jsonl
from tests.conftest import markdown_cells
from tests.test_cli import cli

REFS = {
    "d1": ["the cat sat on the mat ."],
    "d2": ["a dog barked at the mailman ."],
    "d3": ["rain fell all day in the city ."],
}
CANDIDATES = {
    "lead": {"d1": "the cat sat on a mat .", "d2": "the dog barked loudly .", "d3": "it rained in the city ."},
    "abs": {"d1": "a cat was on the mat .", "d2": "the mailman was barked at .", "d3": "rain fell today ."},
}
FLAGS = ["--rouge-args", "-n 2 -r 10"]


def rows(conflict_on=(), skip=()):
    """Joined-form rows; system "abs" brings its own reference for the doc_ids in `conflict_on`."""
    out = []
    for system, docs in CANDIDATES.items():
        for doc_id, text in docs.items():
            if (system, doc_id) in skip:
                continue
            refs = ["its own copy of the reference ."] if system == "abs" and doc_id in conflict_on else REFS[doc_id]
            out.append({"system": system, "doc_id": doc_id, "candidate": text, "references": refs})
    return out


def table_lines(result):
    return result.stdout.splitlines()


# ------------------------------------------------------------- rejected rows
def test_score_past_the_threshold_writes_the_table_headed_by_the_warning_and_exits_3(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(conflict_on=["d3"]))
    result = cli("score", data, "--format", "table", *FLAGS)
    assert result.returncode == EXIT_REJECTED == 3, result.stderr
    first = table_lines(result)[0]
    assert first.startswith("WARNING: these numbers rest on part of the input: 2 of 6 input rows (33.3%) were rejected")
    assert "abs was scored on 2 of its 3 documents" in first and "lead was scored on 2 of its 3 documents" in first
    assert "--conflicting-references keep" in first and "Exit status 3." in first
    body = "\n".join(table_lines(result)[1:])
    assert " 2/3 " in body and "docs: documents scored / documents the system had" in body  # the table says it
    assert "conflicting_references: 2" in result.stderr


def test_score_keeps_each_rows_own_references_when_asked(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(conflict_on=["d3"]))
    keep = cli("score", data, "--format", "table", "--conflicting-references", "keep", *FLAGS)
    assert keep.returncode == 0, keep.stderr
    assert not keep.stdout.startswith("WARNING") and " 3/3 " in keep.stdout
    config = tmp_path / "keep.toml"
    config.write_text('[input]\nconflicting_references = "keep"\n[rouge]\nargs = "-n 2 -r 10"\n')
    from_config = cli("score", data, "--format", "table", "--config", config)
    assert from_config.returncode == 0, from_config.stderr
    assert from_config.stdout == keep.stdout
    reject = cli("score", data, "--format", "table", "--config", config, "--conflicting-references", "reject")
    assert reject.returncode == 3  # the option overrides the config


def test_the_threshold_is_an_option_and_a_config_key(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(conflict_on=["d3"]))
    assert cli("score", data, "--format", "csv", "--max-rejected", "0.5", *FLAGS).returncode == 0
    config = tmp_path / "lenient.toml"
    config.write_text("[run]\nmax_rejected = 0.4\n")
    assert cli("score", data, "--format", "csv", "--config", config, *FLAGS).returncode == 0
    bad = cli("score", data, "--max-rejected", "2", *FLAGS)
    assert bad.returncode == 2 and "run.max_rejected must be between 0 and 1" in bad.stderr


def test_machine_formats_keep_stdout_clean_and_say_scored_of_had(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(conflict_on=["d3"]))
    result = cli("score", data, "--format", "csv", *FLAGS)
    assert result.returncode == 3
    assert "WARNING: these numbers rest on part of the input" in result.stderr
    table = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {(r["system"], r["documents"], r["documents_had"]) for r in table} == {("abs", "2", "3"), ("lead", "2", "3")}
    objects = json.loads(cli("score", data, "--format", "json", *FLAGS).stdout)
    assert {(o["system"], o["documents"], o["documents_had"]) for o in objects} == {("abs", 2, 3), ("lead", 2, 3)}
    report = cli("score", data, "--format", "report", *FLAGS)
    assert report.returncode == 3 and report.stdout.startswith("---------------------------------------------")


def test_score_warns_when_systems_were_scored_over_different_document_sets(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(skip=[("abs", "d3")]))
    result = cli("score", data, "--format", "table", *FLAGS)
    assert result.returncode == 0  # nothing was rejected: abs simply has no d3
    assert "warning: abs has no score for 1 of the 3 documents" in result.stderr


def test_score_config_with_profiles_is_refused(tmp_path):
    config = tmp_path / "profiles.toml"
    config.write_text('[profiles]\na = "-n 1"\n')
    result = cli("score", write_jsonl(tmp_path / "in.jsonl", rows()), "--config", config)
    assert result.returncode == 2 and "score takes one setting" in result.stderr


# ------------------------------------------------------ text the preset cannot read
def test_text_the_preset_cannot_read_is_reported_with_an_example_and_the_fix(tmp_path):
    russian = [
        {"system": "ru", "doc_id": f"r{i}", "candidate": "Кошка сидела на ковре.", "references": ["Кошка на ковре."]}
        for i in (2, 1)
    ]
    data = write_jsonl(tmp_path / "ru.jsonl", russian)
    result = cli("score", data, "--format", "table", *FLAGS)
    assert result.returncode == 0
    assert (
        "warning: 4 texts (2 reference texts; ru 2) have letters the preset's tokenizer drops (no tokens, or most "
        "letters lost): they score near 0 (e.g. doc_id r1, a reference); use --preset unicode" in result.stderr
    )
    fixed = cli("score", data, "--format", "table", "--preset", "unicode", "--rouge-args", "-n 2 -r 10")
    assert "letters the preset's tokenizer drops" not in fixed.stderr
    # By hand: 3 of the reference's 3 words among the candidate's 4 (R 1, P 3/4, F 6/7);
    # 1 of 2 reference bigrams among 3 (F 0.4).  ROUGE-1.5.5's reading finds no token at all.
    assert "85.71 (85.71-85.71)  40.00 (40.00-40.00)" in fixed.stdout
    assert "0.00 (0.00-0.00)" in result.stdout
    # With score's default flags (-m: stemming) the fix needs the stemmer's language, and says so.
    assert "with stemming also --language, e.g. russian" in result.stderr
    stemming = ("--rouge-args", "-n 2 -r 10 -m")
    unnamed = cli("score", data, "--format", "table", "--preset", "unicode", *stemming)
    assert unnamed.returncode == 2 and "needs a language" in unnamed.stderr and "--language" in unnamed.stderr
    named = cli("score", data, "--format", "table", "--preset", "unicode", "--language", "russian", *stemming)
    assert named.returncode == 0, named.stderr
    # Snowball's Russian stems (кошк сидел на ковр | кошк на ковр) leave the same matches.
    assert "85.71 (85.71-85.71)  40.00 (40.00-40.00)" in named.stdout


# ------------------------------------------------------------- sentence boundaries
def test_one_sentence_texts_are_reported_and_the_split_option_changes_rouge_l_only(tmp_path):
    docs = [
        {"system": "s", "doc_id": "d1", "candidate": "the cat sat . the dog ran . it was late",
         "references": ["a dog ran from the cat . the mat was red . late it was"]},
    ]
    data = write_jsonl(tmp_path / "ptb.jsonl", docs)
    given = cli("score", data, "--format", "csv", *FLAGS)
    assert "warning: 2 texts (1 reference text; s 1) were scored as one sentence but hold several sentences" in given.stderr
    assert '--sentence-split sentencex (or "sep: . | ? | ! " for PTB-tokenized text)' in given.stderr
    split = cli("score", data, "--format", "csv", *FLAGS, "--sentence-split", "sep: . ")
    assert "scored as one sentence" not in split.stderr
    assert 'sent:sep:" . "' in split.stderr  # the signature
    as_given = {r["metric"]: r for r in csv.DictReader(io.StringIO(given.stdout))}
    at_sep = {r["metric"]: r for r in csv.DictReader(io.StringIO(split.stdout))}
    assert as_given["ROUGE-2"]["f_measure"] == at_sep["ROUGE-2"]["f_measure"]
    assert as_given["ROUGE-L"]["f_measure"] != at_sep["ROUGE-L"]["f_measure"]
    table = cli("score", data, "--format", "table", *FLAGS, "--sentence-split", "sep: . ")
    assert 'Sentences: each line also split at " . " (--sentence-split \'sep: . \').' in table.stdout


def test_line_aligned_files_read_as_one_sentence_per_line_say_so_and_split_when_asked(tmp_path):
    """files2rouge's and rouge-score's input: one summary per line, so rougeLsum sees one
    sentence and equals rougeL (the issue's case); with the split, rougeLsum is
    rouge-score's own on the sentences put on lines."""
    cands = ["the cat sat on the mat . the dog ran off . it was late", "rain fell . the city was wet"]
    refs = ["a dog ran off . the cat sat on a mat . late it was", "the city was wet . rain fell all day"]
    (tmp_path / "cand.txt").write_text("\n".join(cands) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join(refs) + "\n")
    args = ("score", tmp_path / "cand.txt", tmp_path / "ref.txt", "--preset", "rouge_score", "--format", "csv")
    given = cli(*args)
    assert given.returncode == 0, given.stderr
    assert ("warning: 4 texts (2 reference texts; system 2) were scored as one sentence but hold several "
            "sentences") in given.stderr
    as_given = {r["metric"]: float(r["f_measure"]) for r in csv.DictReader(io.StringIO(given.stdout))}
    assert as_given["rougeL"] == as_given["rougeLsum"]
    split = cli(*args, "--sentence-split", "sep: . ")
    assert "scored as one sentence" not in split.stderr and "lsum:sep:" in split.stderr
    at_sep = {r["metric"]: float(r["f_measure"]) for r in csv.DictReader(io.StringIO(split.stdout))}
    peer = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"])
    lines = [peer.score(r.replace(" . ", " .\n"), c.replace(" . ", " .\n")) for c, r in zip(cands, refs)]
    assert at_sep["rougeLsum"] == pytest.approx(sum(s["rougeLsum"].fmeasure for s in lines) / 2, abs=1e-5)
    assert at_sep["rougeL"] == as_given["rougeL"] == pytest.approx(sum(s["rougeL"].fmeasure for s in lines) / 2, abs=1e-5)
    assert at_sep["rougeLsum"] > at_sep["rougeL"]


# ------------------------------------------------------------- one number per preset
@pytest.mark.parametrize("preset, options, metric", [
    ("rouge_score", ("--rouge-types", "rouge1"), "rouge1"),
    # ROUGE-1.5.5's semantics in any script: R and P rounded to 5 decimals, so the
    # mean F agrees with rouge-score's to 1e-5 on this lower-case ASCII text.
    ("unicode", ("--rouge-args", "-n 1"), "ROUGE-1"),
])
def test_the_preset_shows_the_mean_with_a_seeded_bootstrap_interval(tmp_path, preset, options, metric):
    data = write_jsonl(tmp_path / "in.jsonl", rows())
    args = ("score", data, "--format", "csv", "--preset", preset, *options)
    first, again = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout  # reproducible
    table = {r["system"]: r for r in csv.DictReader(io.StringIO(first.stdout)) if r["metric"] == metric}
    # The value is rouge-score's own mean F over the documents.
    peer = rouge_scorer.RougeScorer(["rouge1"])
    for system, docs in CANDIDATES.items():
        mean = sum(peer.score(REFS[d][0], text)["rouge1"].fmeasure for d, text in docs.items()) / len(docs)
        row = table[system]
        assert row["rouge155_f_measure"] == ""  # no ROUGE-1.5.5 average: the mean is the number
        assert float(row["f_measure"]) == pytest.approx(mean, abs=1e-5)  # means of 1e-5 units (order-free sums)
        low, high = float(row["bootstrap_f_measure_low"]), float(row["bootstrap_f_measure_high"])
        assert low <= mean <= high
        # Bounded as rouge-score's BootstrapAggregator's low/high are: by the per-document extremes.
        scores = [peer.score(REFS[d][0], text)["rouge1"].fmeasure for d, text in docs.items()]
        assert min(scores) - 1e-9 <= low and high <= max(scores) + 1e-9
    assert scoring  # rouge-score's aggregator is the shape these columns follow
    # Piped without --format, the table (the preset's number), not the ROUGE-1.5.5 report;
    # asked for, the report says whose averages it prints.
    piped = cli("score", data, "--preset", preset, *options)
    assert piped.stdout.splitlines()[0].split()[:3] == ["#", "system", "docs"]
    report = cli("score", data, "--preset", preset, *options, "--format", "report")
    assert "Average_F" in report.stdout and "the preset's own number is the mean F" in report.stderr


# ------------------------------------------------------------- run
@pytest.mark.slow
def test_run_past_the_threshold_publishes_headed_by_the_warning_and_exits_3(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", rows(conflict_on=["d3"]) + [
        {"system": "ru", "doc_id": "d1", "candidate": "Кошка сидела на ковре.", "references": REFS["d1"]},
    ])
    out = tmp_path / "out"
    result = cli("run", "--input", data, "--output", out, "--runner", "FnApiRunner", *FLAGS)
    assert result.returncode == EXIT_REJECTED, result.stderr
    assert "WARNING: these numbers rest on part of the input: 2 of 7 input rows (28.6%) were rejected" in result.stdout
    assert result.stdout.index("WARNING") < result.stdout.index("#  system")
    assert "warning: 1 text of ru has letters the preset's tokenizer drops" in result.stdout
    assert (out / "_SUCCESS").exists()  # still published
    record = json.loads((out / "run.json").read_text())
    assert record["rejected"]["exit_status"] == 3 and record["rejected"]["max_rejected"] == 0.01
    assert record["counts"]["errors_by_system"] == {"abs": 1, "lead": 1}
    assert record["counts"]["text_checks"]["ru"]["unreadable"] == {"texts": 1, "example": "d1"}
    md = (out / "system_scores.md").read_text()
    assert md.startswith("**WARNING: these numbers rest on part of the input") and "2/3" in [row[2] for row in markdown_cells(md)]
    html = (out / "report.html").read_text()
    assert "these numbers rest on part of the input" in html and "letters the preset" in html
    # score gives the same table (docs, means, seeded interval) as run.
    score = cli("score", data, "--format", "csv", *FLAGS)
    run_rows = {(r["system"], r["metric"]): r for r in csv.DictReader(open(out / "system_scores.csv"))}
    for r in csv.DictReader(io.StringIO(score.stdout)):
        theirs = run_rows[r["system"], r["metric"]]
        for column in ("documents", "documents_had", "f_measure", "bootstrap_f_measure_low", "bootstrap_f_measure_high"):
            assert r[column] == theirs[column], (r["system"], r["metric"], column)
    lenient = cli("run", "--input", data, "--output", tmp_path / "ok", "--runner", "FnApiRunner", "--max-rejected", "0.5", *FLAGS)
    assert lenient.returncode == 0, lenient.stderr
    # The warning's fix, --conflicting-references keep, is an option of run too.
    keep = cli("run", "--input", data, "--output", tmp_path / "keep", "--runner", "FnApiRunner",
               "--conflicting-references", "keep", *FLAGS)
    assert keep.returncode == 0, keep.stderr
    assert "WARNING" not in keep.stdout and "errors 0" in keep.stdout
    assert "warning: ru has no score for 2 of the 3 documents" in keep.stdout  # ranked over fewer documents
    kept = {(r["system"], r["metric"]): r["documents"] for r in csv.DictReader(open(tmp_path / "keep" / "system_scores.csv"))}
    assert set(kept.values()) == {"3", "1"}  # abs and lead on all 3 documents, ru on its 1


# ------------------------------------------------------------- one option everywhere
def test_the_sentence_split_is_one_option_for_run_score_configs_and_profiles(tmp_path):
    from pipeline.config import load_config
    from rouge_core import RougeConfigError

    config = tmp_path / "split.toml"
    config.write_text(
        '[input]\ncandidates = ["in.jsonl"]\n[rouge]\nargs = "-n 2"\nsentence_split = "sep: . | ? | ! "\n'
        '[profiles]\ngiven = { sentence_split = "newline" }\ninherited = "-n 1"\n'
    )
    loaded = load_config(str(config)).validate()
    assert loaded.settings().sentence_split == "sep: . | ? | ! "
    by_name = {p.name: p.settings[0].sentence_split for p in loaded.profile_list()}
    assert by_name == {"given": "newline", "inherited": "sep: . | ? | ! "}
    bad = tmp_path / "bad.toml"
    bad.write_text('[input]\ncandidates = ["in.jsonl"]\n[rouge]\nsentence_split = "nltk"\n')
    with pytest.raises(RougeConfigError, match=r"sentence_split must be .* got 'nltk' \(rouge settings from .*bad.toml\)"):
        load_config(str(bad)).validate()
    data = write_jsonl(tmp_path / "in.jsonl", rows())
    dry = cli("run", "--input", data, "--output", tmp_path / "out", "--dry-run", "--sentence-split", "sentencex")
    assert dry.returncode == 0, dry.stderr
    assert "|sent:sentencex@" in dry.stdout
    score = cli("score", data, "--format", "csv", "--sentence-split", "sentencex", *FLAGS)
    assert "|sent:sentencex@" in score.stderr
    nonsense = cli("score", data, "--sentence-split", "nltk", *FLAGS)
    assert nonsense.returncode == 2 and "sentence_split must be" in nonsense.stderr


def test_a_run_from_before_the_sentence_split_key_compares_with_a_newline_run():
    from pipeline.compare import settings_differences

    old = "rouge155|n:2|limit:none|mref:average|v:0.1.0"
    assert settings_differences(old, "rouge155|n:2|limit:none|sent:newline|mref:average|v:0.1.0") == []
    assert settings_differences(old, 'rouge155|n:2|limit:none|sent:sep:" . "|mref:average|v:0.1.0') == [
        ("sent", "newline", 'sep:" . "')  # the old run's, which its signature implies
    ]
