"""`score` with the peer tools' habits: positional text files (files2rouge,
sacreBLEU), '-' for text on stdin, --format json with the signature and a
score-only output (sacreBLEU), metric names as the field writes them, options
checked before any work, and pyrouge's folder layout.

The numbers come from the peer package itself (rouge-score 0.1.2) or from the
official report for the same inputs in the JSONL form, never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CANDIDATES = ["the cat sat on the mat", "a dog ran in the park today"]
REFERENCES = [["the cat was on the mat", "the dog ran away in a park"], ["a cat on a mat", "dogs ran in parks"]]


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, input=stdin)


@pytest.fixture
def texts(tmp_path):
    cand = tmp_path / "cand.txt"
    cand.write_text("\n".join(CANDIDATES) + "\n")
    refs = []
    for k, references in enumerate(REFERENCES, 1):  # file k: the k-th reference of every document
        (tmp_path / f"ref{k}.txt").write_text("\n".join(references) + "\n")
        refs.append(tmp_path / f"ref{k}.txt")
    return cand, refs


def _rouge_score(types):
    """rouge-score 0.1.2's own mean F x 100 over the documents, against the first reference file."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(types, use_stemmer=False)
    out = {}
    for t in types:
        values = [scorer.score(REFERENCES[0][i], CANDIDATES[i])[t].fmeasure for i in range(2)]
        out[t] = 100 * sum(values) / len(values)
    return out


def test_positional_text_files_are_line_aligned_like_files2rouge(texts):
    cand, (ref1, _) = texts
    done = cli("score", cand, ref1, "--preset", "rouge_score", "--rouge-types", "rouge1,rouge2,rougeLsum",
               "--format", "json", "--quiet")
    assert done.returncode == 0, done.stderr
    objects = json.loads(done.stdout)
    expected = _rouge_score(["rouge1", "rouge2", "rougeLsum"])
    assert [o["name"] for o in objects] == ["rouge1", "rouge2", "rougeLsum"]
    for o in objects:
        assert o["score"] == pytest.approx(expected[o["name"]], abs=0.006)
        assert o["system"] == "system" and o["documents"] == 2 and o["measure"] == "f_measure"
        assert o["signature"].startswith("rouge_score|") and o["signature"] == objects[0]["signature"]
    assert "signature: rouge_score|" in done.stderr  # the line sacreBLEU users look for


def test_text_on_stdin_and_score_only(texts):
    cand, (ref1, _) = texts
    done = cli("score", "-", ref1, "--preset", "rouge_score", "--rouge-types", "rouge2", "--score-only",
               stdin=cand.read_text())
    assert done.returncode == 0, done.stderr
    assert done.stdout == "%.2f\n" % _rouge_score(["rouge2"])["rouge2"]
    also = cli("score", "--candidates", "-", "--references", ref1, "--preset", "rouge_score", "--rouge-types",
               "rouge2", "-b", stdin=cand.read_text())
    assert also.stdout == done.stdout


def test_several_reference_files_are_several_references(texts):
    cand, refs = texts
    text = cli("score", cand, *refs, "--rouge-args", "-n 2 -a", "--format", "report", "--quiet")
    lines = [json.dumps({"system": "system", "doc_id": str(i + 1), "candidate": CANDIDATES[i],
                         "references": [REFERENCES[0][i], REFERENCES[1][i]]}) for i in range(2)]  # fmt: skip
    jsonl = cli("score", "-", "--rouge-args", "-n 2 -a", "--format", "report", "--quiet", stdin="\n".join(lines) + "\n")
    assert text.returncode == 0 and jsonl.returncode == 0, text.stderr + jsonl.stderr
    assert text.stdout == jsonl.stdout and "ROUGE-2 Average_F" in text.stdout


@pytest.mark.parametrize(
    ("sort", "preset", "column"),
    [("rouge2", [], "ROUGE-2"), ("rougeLsum", [], "ROUGE-L"), ("ROUGE-su4", [], "ROUGE-SU4"),
     ("ROUGE-L", ["--preset", "rouge_score", "--rouge-types", "rouge1,rougeLsum"], "rougeLsum")],
)
def test_sort_takes_metric_names_as_the_field_writes_them(texts, sort, preset, column):
    cand, (ref1, _) = texts
    args = preset or ["--rouge-args", "-n 2 -2 4 -U -r 10"]
    done = cli("score", cand, ref1, *args, "--sort", sort, "--measure", "F", "--format", "table", "--quiet")
    assert done.returncode == 0, done.stderr
    assert f"ranked by {column}, best first" in " ".join(done.stdout.split())


def test_measure_in_any_case(texts):
    cand, (ref1, _) = texts
    upper = cli("score", cand, ref1, "--rouge-args", "-n 1 -r 10", "--measure", "R", "-b")
    lower = cli("score", cand, ref1, "--rouge-args", "-n 1 -r 10", "--measure", "recall", "-b")
    assert upper.returncode == 0 and upper.stdout == lower.stdout
    bad = cli("score", cand, ref1, "--measure", "G")
    assert bad.returncode == 2 and "F (F-measure), R (recall) or P (precision)" in bad.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{cand}", "{ref}", "--sort", "rougeL"], "--sort rougeL: rougeL is rouge-score's LCS of the whole text"),
        (["{cand}", "{ref}", "--sort", "BLEU"], "--sort BLEU: unknown metric name 'BLEU'"),
        (["{cand}", "{ref}", "--sort", "ROUGE-3", "--rouge-args", "-n 2"], "--sort ROUGE-3: no metric ROUGE-3 among"),
        (["{cand}"], "needs its references: rouge-pipeline score {cand} REF.txt"),
        (["{cand}", "--references", "{ref}"], "without --references"),
        (["--candidates", "{cand}"], "--candidates needs --references"),
        (["--system-dir", "{dir}"], "missing --model-dir, --system-pattern, --model-pattern"),
        (["--system-dir", "{dir}", "--model-dir", "{dir}", "--system-pattern", "x", "--model-pattern", "y#ID#"],
         "must have exactly one group"),
        (["{cand}", "{ref}", "--score-only", "--format", "csv"], "takes no --format"),
        (["{cand}", "{ref}", "--rouge-args", "-n 9 -z"], ""),
    ],
)
def test_every_option_is_checked_before_any_work_with_exit_2(texts, tmp_path, args, message):
    cand, (ref1, _) = texts
    values = {"cand": cand, "ref": ref1, "dir": tmp_path}
    done = cli("score", *[a.format(**values) for a in args])
    assert done.returncode == 2, done.stderr
    assert message.format(**values) in done.stderr
    assert "Error:" not in done.stderr and "Traceback" not in done.stderr  # no exception names
    assert "reading:" not in done.stderr and not done.stdout


def test_pyrouge_folders_with_id_patterns(tmp_path):
    """pyrouge's layout: text.<ID>.txt against text.[A-Z].<ID>.txt, one sentence a line;
    the same numbers as the joined JSONL form of the same documents."""
    system, models = tmp_path / "system", tmp_path / "models"
    system.mkdir()
    models.mkdir()
    for i, candidate in enumerate(CANDIDATES, 1):
        (system / f"text.{i:03d}.txt").write_text(candidate.replace(" on ", " on\n") + "\n")
        for k, letter in enumerate("AB"):
            (models / f"text.{letter}.{i:03d}.txt").write_text(REFERENCES[k][i - 1] + "\n")
    (system / "notes.md").write_text("not a summary")
    done = cli("score", "--system-dir", system, "--model-dir", models, "--system-pattern", r"text.(\d+).txt",
               "--model-pattern", "text.[A-Z].#ID#.txt", "--rouge-args", "-n 2 -a -d", "--format", "report")
    assert done.returncode == 0, done.stderr
    lines = [json.dumps({"system": "system", "doc_id": f"{i:03d}",
                         "candidate": CANDIDATES[i - 1].replace(" on ", " on\n").split("\n"),
                         "references": [REFERENCES[0][i - 1], REFERENCES[1][i - 1]]}) for i in (1, 2)]
    jsonl = cli("score", "-", "--rouge-args", "-n 2 -a -d", "--format", "report", stdin="\n".join(lines) + "\n")
    assert jsonl.returncode == 0, jsonl.stderr
    assert done.stdout == jsonl.stdout and "system ROUGE-2 Eval 001" in done.stdout
    # a document without a model file is an error row naming the pattern
    (system / "text.003.txt").write_text("lonely\n")
    missing = cli("score", "--system-dir", system, "--model-dir", models, "--system-pattern", r"text.(\d+).txt",
                  "--model-pattern", "text.[A-Z].#ID#.txt", "--rouge-args", "-n 1 -r 10", "--format", "csv")
    assert missing.returncode == 3  # 1 of 3 documents rejected: more than --max-rejected allows
    assert "no_references: no file in" in missing.stderr and "for ID '003'" in missing.stderr


def test_a_quoted_glob_of_text_references_is_expanded_as_a_shell_would(texts):
    """`score c.txt 'refs/*.txt'` (the glob quoted, or from a shell that did not
    expand it) scores what `score c.txt ref1.txt ref2.txt` scores; a glob that
    matches nothing is named as such, not called JSONL."""
    cand, (ref1, ref2) = texts
    flags = ("--preset", "rouge_score", "--rouge-types", "rouge1,rouge2", "--format", "json", "--quiet")
    listed = cli("score", cand, ref1, ref2, *flags)
    globbed = cli("score", cand, str(ref1.parent / "ref*.txt"), *flags)
    assert listed.returncode == globbed.returncode == 0, globbed.stderr
    assert json.loads(globbed.stdout) == json.loads(listed.stdout)
    missing = cli("score", cand, str(ref1.parent / "nothing*.txt"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert "no file matches" in missing.stderr and "JSONL" not in missing.stderr


def test_a_folder_names_its_row_tables_and_skips_a_readme(tmp_path):
    """A folder of JSONL shards with a README.md and a _SUCCESS beside them: the shards
    are scored, the other files skipped with one warning naming them (not read as
    rows: no invalid_json errors); a folder with no table is refused, saying so."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    rows = [{"system": "s", "doc_id": str(i), "candidate": c, "references": r}
            for i, (c, r) in enumerate(zip(CANDIDATES, REFERENCES))]
    (folder / "part-0.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    alone = cli("score", folder / "part-0.jsonl", "--format", "json", "--quiet")
    (folder / "README.md").write_text("# What these outputs are\n\nNot rows.\n")
    (folder / "_SUCCESS").write_text("")
    done = cli("score", folder, "--format", "json", "--quiet")
    assert done.returncode == alone.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(alone.stdout)
    assert "skipped 2 file(s)" in done.stderr and "README.md" in done.stderr and "invalid_json" not in done.stderr
    empty = tmp_path / "docs"
    empty.mkdir()
    (empty / "README.md").write_text("# nothing here\n")
    refused = cli("score", empty)
    assert refused.returncode == 2 and "holds no JSON Lines or Parquet file" in refused.stderr, refused.stderr
