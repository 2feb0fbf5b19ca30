"""The real pipeline, end to end, on the DirectRunner (FnApiRunner)."""

import random

import pyarrow.parquet as pq
import pytest

from rouge_core import __version__
from tests.conftest import GOLDEN, read_jsonl
from tests.oracle import run_rouge155
from tests.test_differential import rouge155_home  # noqa: F401 (a fixture)
from tests.pipeline.runs import IN_MEMORY, TWO_PROCESSES, TWO_THREADS, read_errors, run_pipeline, table_bytes, write_jsonl

CASES = read_jsonl(GOLDEN / "cases.jsonl")
PYROUGE = "-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m"


def shards(rows, n, folder, seed=None):
    rows = list(rows)
    if seed is not None:
        random.Random(seed).shuffle(rows)
    return [write_jsonl(folder / f"part-{i:02d}.jsonl", rows[i::n]) for i in range(n)]


def test_rouge155_report_is_the_official_sample_output(tmp_path):
    record = run_pipeline(tmp_path / "out", shards(CASES, 4, tmp_path / "in"), flags=PYROUGE)
    expected = (GOLDEN / "sample-output" / "ROUGE-test-c95-2-1-U-r1000-n4-w1.2-a-m.out").read_text()
    assert (tmp_path / "out" / "rouge155.txt").read_text() == expected
    assert record["counts"] == {
        "rows_read": 200,
        "scored": 200,
        "errors": 0,
        "errors_by_reason": {},
        "reference_rows": 0,
        "reference_rows_unused": 0,
        "human_documents": 0,
        "balanced": True,
        "documents": 25,
        "documents_by_system": {s: 25 for s in ("11", "12", "13", "14", "21", "22", "23", "24")},
        "systems_missing_documents": {},
        "errors_by_system": {},
        # Read off cases.jsonl: a reference of documents 1 and 3 is two sentences in one item
        # ("Developed countries should be pressurized. Business exemptions ..."), and so is
        # system 11's summary of document 21 ("Crime. murder Bhel of general manager/ ...").
        "text_checks": {
            "(references)": {"one_sentence": {"texts": 2, "example": "1"}},
            "11": {"one_sentence": {"texts": 1, "example": "21"}},
        },
        "references_per_document": [4, 4],  # DUC 2003: four references to every document
    }
    assert "|nrefs:4|" in record["signature"]
    assert (tmp_path / "out" / "_SUCCESS").exists()
    table = pq.read_table(tmp_path / "out" / "system_scores.parquet").to_pylist()
    assert len(table) == 8 * 8  # systems x metrics
    row = next(r for r in table if r["system"] == "11" and r["metric"] == "ROUGE-1")
    # the official sample output prints "11 ROUGE-1 Average_R: 0.22651" with -m
    assert row["rouge155_recall"] == 0.22651
    assert row["documents"] == 25


def test_tables_are_byte_identical_across_runners_shards_orders_and_input_forms(tmp_path):
    reference = run_pipeline(tmp_path / "one", shards(CASES, 1, tmp_path / "in1"), flags=PYROUGE)
    assert reference["counts"]["scored"] == 200
    expected = table_bytes(tmp_path / "one")

    run_pipeline(
        tmp_path / "many",
        shards(CASES, 16, tmp_path / "in16", seed=5),
        flags=PYROUGE,
        beam_args=TWO_PROCESSES,
    )
    assert table_bytes(tmp_path / "many") == expected

    candidates = [{k: c[k] for k in ("system", "doc_id", "candidate")} for c in CASES]
    references = {c["doc_id"]: {"doc_id": c["doc_id"], "references": c["references"]} for c in CASES}
    split = run_pipeline(
        tmp_path / "split",
        shards(candidates, 3, tmp_path / "cands", seed=9),
        references=shards(references.values(), 2, tmp_path / "refs", seed=3),
        flags=PYROUGE,
        beam_args=TWO_THREADS,
    )
    assert split["counts"]["reference_rows"] == 25
    assert table_bytes(tmp_path / "split") == expected


def test_system_from_the_file_path_and_systems_with_missing_documents(tmp_path):
    folder = tmp_path / "outputs"
    for system in ("11", "12"):
        rows = [
            {k: c[k] for k in ("doc_id", "candidate", "references")} for c in CASES if c["system"] == system
        ]
        write_jsonl(folder / f"model-{system}.jsonl", rows[: 25 if system == "11" else 20])
    record = run_pipeline(
        tmp_path / "out",
        [folder / "*.jsonl"],
        flags="-n 1 -r 10",
        system_from_path=r"model-(?P<system>\w+)\.jsonl",
    )
    assert record["counts"]["documents_by_system"] == {"11": 25, "12": 20}
    assert record["counts"]["systems_missing_documents"] == {"12": 5}


def test_eval_ids_index_numbers_documents_in_sorted_doc_id_order(tmp_path):
    rows = [dict(c, doc_id=f"doc-{int(c['doc_id']):02d}") for c in CASES]
    record = run_pipeline(
        tmp_path / "out", shards(rows, 2, tmp_path / "in"), flags="-n 1 -x -r 100 -d", eval_ids="index"
    )
    report = (tmp_path / "out" / "rouge155.txt").read_text()
    assert "11 ROUGE-1 Eval 1.11 " in report and "11 ROUGE-1 Eval 25.11 " in report
    assert "doc-" not in report
    # The order changes the printed averages, so the signature names it, in every table.
    assert record["signature"].endswith(f"|eval_ids:index|nrefs:4|v:{__version__}")
    table = pq.read_table(tmp_path / "out" / "system_scores.parquet")
    assert set(table.column("signature").to_pylist()) == {record["signature"]}
    assert table.schema.metadata[b"signature"].decode() == record["signature"]


def test_bad_rows_land_in_the_errors_table_and_the_counts_reconcile(tmp_path):
    good = [dict(c) for c in CASES if c["system"] in ("11", "12")]  # 50 rows
    folder = tmp_path / "in"
    write_jsonl(folder / "good.jsonl", good)
    doc = {"doc_id": "x1", "candidate": "a b", "references": ["a c"]}
    bad_rows = [
        {"system": "s", "doc_id": "m1", "references": ["r"]},  # missing_field
        {"system": "s", "doc_id": "t1", "candidate": 5, "references": ["r"]},  # wrong_type
        {"system": "s", "doc_id": None, "candidate": "c", "references": ["r"]},  # null_value
        {"system": "s", "doc_id": "l1", "candidate": "x" * 300, "references": ["r"]},  # text_too_long
        {"system": "s", "doc_id": "e1", "candidate": "c", "references": []},  # wrong_type (no refs)
        dict(doc, system="dup"),
        dict(doc, system="dup"),  # duplicate_key x2
        {"system": "p", "doc_id": "c1", "candidate": "a", "references": ["r1"]},
        {"system": "q", "doc_id": "c1", "candidate": "a", "references": ["r2"]},  # conflicting_references x2
    ]
    path = write_jsonl(folder / "bad.jsonl", bad_rows)
    with open(path, "ab") as fh:
        fh.write(b'{"system": "s", "doc_id": "u1", "candidate": "\xff\xfe"}\n')  # undecodable
        fh.write(b'{"system": "s", "doc_id": \n')  # invalid_json
        fh.write(b"[1, 2, 3]\n")  # not_an_object
    (folder / "empty.jsonl").write_bytes(b"")
    record = run_pipeline(tmp_path / "out", [folder / "*.jsonl"], max_text_bytes=200)
    counts = record["counts"]
    assert counts["errors_by_reason"] == {
        "conflicting_references": 2,
        "duplicate_key": 2,
        "invalid_json": 1,
        "missing_field": 1,
        "not_an_object": 1,
        "null_value": 1,
        "text_too_long": 1,
        "undecodable": 1,
        "wrong_type": 2,
    }
    assert counts["rows_read"] == 50 + len(bad_rows) + 3
    assert counts["scored"] == 50
    assert counts["balanced"]
    errors = read_errors(tmp_path / "out")
    undecodable = next(e for e in errors if e["reason"] == "undecodable")
    assert undecodable["source"].endswith("bad.jsonl") and undecodable["position"] == len(bad_rows) + 1
    assert {e["doc_id"] for e in errors if e["reason"] == "duplicate_key"} == {"x1"}


def test_split_form_candidates_without_references_are_errors(tmp_path):
    cands = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"system": "a", "doc_id": "d1", "candidate": "x y"},
            {"system": "a", "doc_id": "d2", "candidate": "x y"},
        ],
    )
    refs = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"doc_id": "d1", "reference": "x y q r", "reference_id": "B"},
            {"doc_id": "d1", "reference": "x q", "reference_id": "A"},
            {"doc_id": "d9", "reference": "unused"},
        ],
    )
    record = run_pipeline(tmp_path / "out", [cands], references=[refs], flags="-n 1 -x -f B -d -r 10")
    assert record["counts"]["errors_by_reason"] == {"no_references": 1}
    assert record["counts"]["reference_rows"] == 3 and record["counts"]["balanced"]
    # Both references give R = 1/2; ordered by reference_id, A ("x q") comes first
    # and wins the -f B tie, so P = 1/2 (B would give P = 2/2).
    assert (
        "a ROUGE-1 Eval d1.a R:0.50000 P:0.50000 F:0.50000" in (tmp_path / "out" / "rouge155.txt").read_text()
    )


def test_strict_mode_and_nothing_scored_fail_without_publishing(tmp_path):
    from pipeline.beam.run import RunFailed

    bad = write_jsonl(tmp_path / "in.jsonl", [{"system": "s", "doc_id": "d"}] + CASES[:3])
    with pytest.raises(RunFailed, match="strict mode: 1 error rows"):
        run_pipeline(tmp_path / "out", [bad], strict=True)
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.glob("out.staging-*"))
    with pytest.raises(RunFailed, match="nothing was scored"):
        run_pipeline(tmp_path / "out", [write_jsonl(tmp_path / "only_bad.jsonl", [{"x": 1}])])


def test_an_existing_result_folder_is_refused_or_replaced(tmp_path):
    from rouge_core import RougeConfigError

    data = shards(CASES[:16], 1, tmp_path / "in")
    run_pipeline(tmp_path / "out", data)
    with pytest.raises(RougeConfigError, match="already exists"):
        run_pipeline(tmp_path / "out", data)
    first = table_bytes(tmp_path / "out")
    run_pipeline(tmp_path / "out", data, overwrite=True)
    assert table_bytes(tmp_path / "out") == first


def test_the_human_pseudo_system_is_lin_2004s_jackknife(tmp_path):
    from pipeline.config import HumanConfig, InputConfig, OutputConfig, RougeConfig, RunConfig
    from pipeline.beam.run import run

    refs = ["the cat sat", "the cat ran", "a dog sat"]
    rows = [
        {"system": "s", "doc_id": "d1", "candidate": "the cat", "references": refs},
        {"system": "s", "doc_id": "d2", "candidate": "a cat", "references": ["a cat"]},  # one reference: no human
    ]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    config = RunConfig(
        input=InputConfig(candidates=(str(data),)),
        rouge=RougeConfig(args="-n 1 -x -r 10", multi_reference="jackknife"),
        human=HumanConfig(enabled=True),
        output=OutputConfig(folder=str(tmp_path / "out")),
    ).validate()
    record = run(config, IN_MEMORY)
    assert record["counts"]["scored"] == 2 and record["counts"]["human_documents"] == 1
    assert record["counts"]["balanced"]
    recall = {(r["system"], r["doc_id"]): r["recall"] for r in pq.read_table(tmp_path / "out" / "per_document").to_pylist()}
    # By hand, ROUGE-1 recall.  Human, fold k = reference k against the others (-f B):
    # "the cat sat" vs "the cat ran" 2/3; "the cat ran" vs "the cat sat" 2/3; "a dog sat"
    # vs "the cat sat" 1/3: mean 5/9.  System "the cat", best of each held-out pair: 2/3
    # in every fold: 2/3.
    assert recall == {("human", "d1"): 0.55556, ("s", "d1"): 0.66667, ("s", "d2"): 1.0}
    with pytest.raises(Exception, match='human.enabled must be used with multi_reference = "jackknife"'):
        RunConfig(input=InputConfig(candidates=("x",)), human=HumanConfig(enabled=True)).validate()


@pytest.mark.parametrize("flags", ["-a -n 2 -t 2 -d -r 10", "-a -n 2 -t 1 -d -r 10"])
def test_the_counting_modes_print_the_official_scripts_report(tmp_path, rouge155_home, flags):
    """-t 1 (pooled counts) and -t 2 (counts instead of averages), with -d."""
    run_pipeline(tmp_path / "out", shards(CASES, 2, tmp_path / "in"), flags=flags)
    returncode, expected, _ = run_rouge155(CASES, flags, rouge155_home)
    assert returncode == 0
    assert (tmp_path / "out" / "rouge155.txt").read_text() == expected
