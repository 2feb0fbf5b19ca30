"""`run --reuse PREVIOUS` (issue 34): a run that reuses a previous run's rows and systems
writes every table byte for byte as a full run on the same inputs does, whatever
changed; what it reused is proven by digests and the previous folder's manifest,
never by name or path, and recorded in run.json.

Each test builds "tonight's" inputs from "last night's" (module fixture), runs once
with --reuse and once without, and compares every table's bytes."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import random
import shutil
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pipeline.beam.reuse
from pipeline.io.tables import document_file_stem
from tests.pipeline.runs import document_rows, run_pipeline, seal, table_bytes, write_jsonl

WORDS = [f"w{i}" for i in range(40)] + ["the", "a", "of", "and", "to"]
FLAGS = "-n 2 -r 20 -d"  # -d: the report's per-document lines, copied with a carried system's block
SYSTEMS = ("alpha", "beta", "gamma", "delta")
DOCUMENTS = 24


def reference(i: int) -> list[str]:
    rng = random.Random(f"ref-{i}")
    return [" ".join(rng.choice(WORDS) for _ in range(12)) + "\n" + " ".join(rng.choice(WORDS) for _ in range(8))
            for _ in range(2)]


KEEP = {"alpha": 0.8, "beta": 0.6, "gamma": 0.5, "delta": 0.4}  # of the reference's words


def candidate(system: str, i: int, version: int = 0) -> str:
    rng = random.Random(f"{system}-{i}-{version}")
    kept = [w if rng.random() < KEEP.get(system, 0.55) else rng.choice(WORDS) for w in reference(i)[0].split()]
    return " ".join(kept)


def rows_of(system: str, documents=range(DOCUMENTS), version=lambda i: 0, refs=reference) -> list[dict]:
    return [{"system": system, "doc_id": f"d{i:03d}", "candidate": candidate(system, i, version(i)),
             "references": refs(i)} for i in documents]


def night(folder, files: dict) -> list:
    """One file per name, its rows; returns the paths."""
    return [write_jsonl(folder / f"{name}.jsonl", rows) for name, rows in files.items()]


@pytest.fixture(scope="module")
def last_night(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reuse")
    inputs = night(tmp / "in-1", {s: rows_of(s) for s in SYSTEMS})
    record = run_pipeline(tmp / "night-1", inputs, flags=FLAGS)
    return tmp, record


def tonight(tmp_path, last_night, files: dict, flags=FLAGS, previous=None, **options):
    """Tonight's inputs run twice, reusing last night and not: (reuse record, full record, reuse folder, full folder)."""
    base, _ = last_night
    inputs = night(tmp_path / "in-2", files)
    full = run_pipeline(tmp_path / "full", inputs, flags=flags, **options)
    reused = run_pipeline(tmp_path / "reused", inputs, flags=flags, reuse=str(previous or base / "night-1"), **options)
    assert table_bytes(tmp_path / "reused") == table_bytes(tmp_path / "full")
    assert reused["counts"] == full["counts"]
    assert reused["signature"] == full["signature"]
    return reused, full


def test_a_changed_and_an_added_system_beside_unchanged_ones(tmp_path, last_night, caplog):
    # alpha and beta: the same files (bytes) in another folder; gamma: 5 candidates
    # changed; delta: gone; epsilon: new.
    caplog.set_level(logging.WARNING)
    changed = {3, 7, 11, 12, 20}
    files = {
        "alpha": rows_of("alpha"),
        "beta": rows_of("beta"),
        "gamma": rows_of("gamma", version=lambda i: int(i in changed)),
        "epsilon": rows_of("alpha", version=lambda i: 9),
    }
    files["epsilon"] = [dict(r, system="epsilon") for r in files["epsilon"]]
    reused, full = tonight(tmp_path, last_night, files)
    record = reused["reuse"]
    assert record["refused"] is None and record["run_id"] == last_night[1]["run_id"]
    assert record["systems_carried"] == ["alpha", "beta"]
    assert sorted(record["files_not_read"]) == sorted(str(tmp_path / "in-2" / f"{s}.jsonl") for s in ("alpha", "beta"))
    assert record["rows_carried"] == 2 * DOCUMENTS
    assert record["rows_reused"] == DOCUMENTS - len(changed)  # gamma's unchanged rows
    assert record["rows_scored"] == len(changed) + DOCUMENTS  # gamma's changed rows, epsilon
    assert record["systems_recomputed"] == ["epsilon", "gamma"]
    assert "delta" not in full["counts"]["documents_by_system"]
    # the unread files are listed among the inputs with the sizes and digests of their bytes
    listed = {f["path"]: f for f in reused["inputs"]["candidates"]}
    for name in ("alpha", "beta"):
        data = (tmp_path / "in-2" / f"{name}.jsonl").read_bytes()
        assert listed[str(tmp_path / "in-2" / f"{name}.jsonl")]["sha256"] == hashlib.sha256(data).hexdigest()
    said = [r.getMessage() for r in caplog.records if "reusing" in r.getMessage()]
    assert len(said) == 1 and "2 system(s) carried whole, 2 unchanged input file(s) not read" in said[0]
    # the manifest lists every file with the size and SHA-256 of its bytes (the copies' taken as they were copied)
    listed = json.loads((tmp_path / "reused" / "_SUCCESS").read_text())["files"]
    on_disk = {p.relative_to(tmp_path / "reused").as_posix(): p.read_bytes()
               for p in (tmp_path / "reused").rglob("*") if p.is_file() and p.name != "_SUCCESS"}
    assert listed == {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                      for name, data in on_disk.items()}


def test_corrected_references_rescore_every_systems_rows_of_those_documents(tmp_path, last_night):
    corrected = {2, 9, 17}

    def refs(i):
        return [r.replace("w1 ", "w2 ") + " corrected" for r in reference(i)] if i in corrected else reference(i)

    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s, refs=refs) for s in SYSTEMS})
    record = reused["reuse"]
    assert record["systems_carried"] == []  # every file holds the references: every file changed
    assert record["rows_reused"] == len(SYSTEMS) * (DOCUMENTS - len(corrected))
    assert record["rows_scored"] == len(SYSTEMS) * len(corrected)


def test_split_form_with_a_corrected_reference_file(tmp_path):
    def split(folder, refs):
        candidates = [write_jsonl(folder / f"{s}.jsonl", [{k: v for k, v in r.items() if k != "references"}
                                                          for r in rows_of(s)]) for s in SYSTEMS[:3]]
        references = write_jsonl(folder / "refs.jsonl", [{"doc_id": f"d{i:03d}", "references": refs(i)} for i in range(DOCUMENTS)])
        return candidates, [references]

    candidates, references = split(tmp_path / "in-1", reference)
    run_pipeline(tmp_path / "night-1", candidates, references=references, flags=FLAGS)
    candidates, references = split(tmp_path / "in-2", lambda i: reference(i) if i != 5 else ["fixed " + reference(i)[0]])
    full = run_pipeline(tmp_path / "full", candidates, references=references, flags=FLAGS)
    reused = run_pipeline(tmp_path / "reused", candidates, references=references, flags=FLAGS,
                          reuse=str(tmp_path / "night-1"))
    assert table_bytes(tmp_path / "reused") == table_bytes(tmp_path / "full")
    assert reused["counts"] == full["counts"]
    record = reused["reuse"]
    assert record["systems_carried"] == [] and record["not_carried"] == "the reference files changed"
    assert record["rows_reused"] == 3 * (DOCUMENTS - 1) and record["rows_scored"] == 3


def test_other_settings_reuse_nothing_and_say_so(tmp_path, last_night, caplog):
    caplog.set_level(logging.WARNING)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, flags="-n 1 -r 20 -d")
    record = reused["reuse"]
    assert record["refused"] == "other settings: n: 2 -> 1"
    assert "rows_reused" not in record
    said = [r.getMessage() for r in caplog.records if "reusing" in r.getMessage()]
    assert said == [f"reusing nothing from {last_night[0] / 'night-1'}: other settings: n: 2 -> 1"]


@pytest.mark.parametrize("recoded", [False, True])
def test_carried_files_line_up_by_their_doc_id_bytes_or_their_decoded_ids(tmp_path, last_night, monkeypatch, recoded):
    # The significance tests of a run with carried systems read every system's
    # per-document files side by side. A file whose doc_id column has the bytes of one
    # this run wrote is not decoded (its ids are those); a carried file written
    # otherwise (here: sealed again after another codec rewrote it, its values kept)
    # has its ids decoded and compared. Either way the tests are the full run's.
    import pipeline.beam.significance as significance

    lined_up = []
    aligned = significance._aligned
    monkeypatch.setattr(significance, "_aligned", lambda *args: lined_up.append(args[-1]) or aligned(*args))

    def recode(folder):
        part = _system_file(folder, "alpha")
        pq.write_table(pq.read_table(part), part, compression="zstd", row_group_size=7)
        seal(folder)

    previous = tampered_copy(tmp_path, last_night, recode) if recoded else last_night[0] / "night-1"
    files = {s: rows_of(s) for s in SYSTEMS[:2]} | {"gamma": rows_of("gamma", version=lambda i: int(i % 5 == 0))}
    inputs = night(tmp_path / "in-2", files)
    run_pipeline(tmp_path / "full", inputs, flags=FLAGS)
    reused = run_pipeline(tmp_path / "reused", inputs, flags=FLAGS, reuse=str(previous))
    assert reused["reuse"]["systems_carried"] == ["alpha", "beta"]
    assert lined_up == [not recoded]
    for name in ("significance.parquet", "significance.csv", "system_scores.parquet"):
        assert (tmp_path / "reused" / name).read_bytes() == (tmp_path / "full" / name).read_bytes(), name


def tampered_copy(tmp_path, last_night, change):
    folder = tmp_path / "previous"
    shutil.copytree(last_night[0] / "night-1", folder)
    change(folder)
    return folder


@pytest.mark.parametrize("size", ["another size", "the same size"])
def test_a_tampered_per_document_table_reuses_nothing(tmp_path, last_night, caplog, size):
    # Another size is seen when the previous folder is opened (ResultFolder.open checks
    # every listed file's size); the same size only when the file is read, while the
    # run works (its SHA-256): then the run starts again, reusing nothing.
    caplog.set_level(logging.WARNING)

    def change(folder):  # one score of alpha's per-document file
        part = sorted((folder / "per_document").glob("*.parquet"))[0]
        if size == "another size":  # rewritten as a valid table
            table = pq.read_table(part)
            values = table.column("f_measure").to_pylist()
            values[0] = 0.99
            pq.write_table(table.set_column(table.column_names.index("f_measure"), "f_measure", pa.array(values)), part)
        else:  # one byte of its data changed
            data = bytearray(part.read_bytes())
            data[len(data) // 2] ^= 0x01
            part.write_bytes(bytes(data))

    previous = tampered_copy(tmp_path, last_night, change)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, previous=previous)
    record = reused["reuse"]
    expected = {"another size": "where its _SUCCESS says", "the same size": "its bytes differ from the _SUCCESS"}[size]
    assert expected in record["refused"] and "per_document/part-" in record["refused"], record["refused"]
    assert "rows_reused" not in record
    said = [r.getMessage() for r in caplog.records if r.getMessage().endswith("; running again")]
    assert len(said) == (size == "the same size") and all(expected in line for line in said)


@pytest.mark.parametrize("damage", ["no _SUCCESS", "a per-document file removed", "run.json edited", "no manifest",
                                    "_SUCCESS nested too deeply", "run.json nested too deeply, sealed"])
def test_an_incomplete_or_changed_previous_folder_reuses_nothing(tmp_path, last_night, damage, caplog):
    caplog.set_level(logging.WARNING)
    deep = ("[" * 200_000 + "]" * 200_000).encode()  # (Python's JSON parser: a RecursionError, no ValueError)

    def change(folder):
        if damage == "no _SUCCESS":
            (folder / "_SUCCESS").unlink()
        elif damage == "_SUCCESS nested too deeply":
            (folder / "_SUCCESS").write_bytes(deep)
        elif damage == "run.json nested too deeply, sealed":  # its manifest entry made to match
            (folder / "run.json").write_bytes(deep)
            manifest = json.loads((folder / "_SUCCESS").read_text())
            manifest["files"]["run.json"] = {"bytes": len(deep), "sha256": hashlib.sha256(deep).hexdigest()}
            (folder / "_SUCCESS").write_text(json.dumps(manifest))
        elif damage == "a per-document file removed":
            sorted((folder / "per_document").glob("*.parquet"))[-1].unlink()
        elif damage == "run.json edited":
            (folder / "run.json").write_text((folder / "run.json").read_text().replace('"run_id"', '"run_id" ', 1))
        else:
            (folder / "_SUCCESS").write_text("")

    previous = tampered_copy(tmp_path, last_night, change)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS[:2]}, previous=previous)
    refused = reused["reuse"]["refused"]
    expected = {"no _SUCCESS": "not a complete result folder (no _SUCCESS", "a per-document file removed": "is missing",
                "run.json edited": "run.json has", "no manifest": "_SUCCESS is empty",
                "_SUCCESS nested too deeply": "nested too deeply",
                "run.json nested too deeply, sealed": "run.json: not valid JSON (nested too deeply"}[damage]
    assert refused is not None and expected in refused, refused
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reusing nothing from")]
    assert len(said) == 1 and said[0].count(str(previous)) == 1, said  # the folder named once, then why


# A field of a resealed run.json (its manifest entry made to match) that --reuse reads,
# given a value this tool never writes there, and the phrase that names it.  Each
# failed the run before (ValueError, AttributeError, OverflowError, TypeError, OSError
# from a report block placed past its file's end) or was taken as it stood (no config:
# the defaults' settings compared).
RECORD_DAMAGES = {
    "counts.documents_by_system a list": (("counts", "documents_by_system"), ["alpha"], "counts.documents_by_system"),
    "a system's documents a word": (("counts", "documents_by_system", "alpha"), "many", "counts.documents_by_system"),
    "a system's documents 10**30": (("counts", "documents_by_system", "alpha"), 10**30, "counts.documents_by_system"),
    "counts.documents negative": (("counts", "documents"), -1, "counts.documents is not a count"),
    "counts null": (("counts",), None, "its counts are not an object"),
    "text checks of a number": (("counts", "text_checks"), {"alpha": 5}, "counts.text_checks"),
    "references per document a word": (("counts", "references_per_document"), "x", "references_per_document"),
    "an input file's rows a word": (("inputs", "candidates", 0, "rows"), "50", "its inputs"),
    "an input file null": (("inputs", "candidates", 0), None, "its inputs"),
    "a report block's offset a word": (("rouge155_parts", "rouge155.txt", 0, 1), "a", "rouge155_parts"),
    "a report block past the end": (("rouge155_parts", "rouge155.txt", 0, 2), 10**12, "past its end"),
    "config null": (("config",), None, "its config is not an object"),
}


@pytest.mark.parametrize("damage", sorted(RECORD_DAMAGES))
def test_a_sealed_run_record_holding_what_this_tool_never_writes_reuses_nothing(tmp_path, last_night, damage, caplog):
    caplog.set_level(logging.WARNING)
    where, value, expected = RECORD_DAMAGES[damage]

    def change(folder):
        record = json.loads((folder / "run.json").read_text())
        holder = record
        for key in where[:-1]:
            holder = holder[key]
        holder[where[-1]] = value
        data = json.dumps(record).encode()
        (folder / "run.json").write_bytes(data)
        manifest = json.loads((folder / "_SUCCESS").read_text())
        manifest["files"]["run.json"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        (folder / "_SUCCESS").write_text(json.dumps(manifest))

    previous = tampered_copy(tmp_path, last_night, change)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, previous=previous)
    refused = reused["reuse"]["refused"]
    assert refused is not None and expected in refused, refused
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reusing nothing from")]
    assert len(said) == 1 and expected in said[0], said


def test_a_run_record_without_its_inputs_still_offers_its_rows(tmp_path, last_night):
    """No input file recorded (as a run of an older version): nothing is carried whole,
    but every unchanged row is reused (the rows prove themselves by their digests)."""
    def change(folder):
        record = json.loads((folder / "run.json").read_text())
        del record["inputs"]
        (folder / "run.json").write_text(json.dumps(record))
        seal(folder)

    previous = tampered_copy(tmp_path, last_night, change)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, previous=previous)
    record = reused["reuse"]
    assert record["refused"] is None and record["systems_carried"] == [], record
    assert "did not record which systems" in record["not_carried"] and record["rows_reused"] == len(SYSTEMS) * DOCUMENTS


def _without_column(name):
    return lambda t: t.drop([name])


def _as_text(name):
    return lambda t: t.set_column(t.column_names.index(name), pa.field(name, pa.string()),
                                  pa.array([str(v) for v in t.column(name).to_pylist()], pa.string()))


# A table of a resealed previous folder edited into what this tool never writes, the
# file, the edit and the phrase that says so.  Before, a carried system's rows of
# system_scores went missing from tonight's table or came out twice or without a
# column, the copied significance pairs were summed from nothing (every carried pair
# p = 1) or taken twice, a carried per-document file was published without a column,
# and "documents" as text failed the run: each published tables that were not the
# full run's, or failed.
ALPHA = f"per_document/{document_file_stem('default', 'alpha')}-00000-of-00001.parquet"
TABLE_DAMAGES = {
    "system_scores without f_measure": ("system_scores.parquet", _without_column("f_measure"), "its columns are"),
    "system_scores' documents as text": ("system_scores.parquet", _as_text("documents"), "'documents' holds string"),
    "system_scores without alpha's rows": ("system_scores.parquet", lambda t: t.filter(pc.not_equal(t["system"], "alpha")),
                                           "no row of system 'alpha'"),
    "system_scores' rows twice": ("system_scores.parquet", lambda t: pa.concat_tables([t, t]), "more than once"),
    "significance without p_adjusted": ("significance.parquet", _without_column("p_adjusted"), "its columns are"),
    "significance empty": ("significance.parquet", lambda t: t.slice(0, 0), "no row of the pair"),
    "significance rows twice": ("significance.parquet", lambda t: pa.concat_tables([t, t]), "more than once"),
    "alpha's per-document file without hits": (ALPHA, _without_column("hits"), "its columns are"),
    "alpha's per-document file a document short": (ALPHA, lambda t: t.slice(3),
                                                    "carried system 'alpha' (profile default) hold 69 rows where its run recorded 72"),
}


@pytest.mark.parametrize("damage", sorted(TABLE_DAMAGES))
def test_a_sealed_table_that_this_tool_never_writes_reuses_nothing(tmp_path, last_night, damage):
    name, edit, expected = TABLE_DAMAGES[damage]

    def change(folder):
        pq.write_table(edit(pq.read_table(folder / name)), folder / name)
        seal(folder)

    previous = tampered_copy(tmp_path, last_night, change)
    files = {s: rows_of(s) for s in SYSTEMS} | {"gamma": rows_of("gamma", version=lambda i: int(i % 3 == 0))}
    reused, _ = tonight(tmp_path, last_night, files, previous=previous)  # (its tables: the full run's)
    refused = reused["reuse"]["refused"]
    assert refused is not None and expected in refused and (name in refused or "carried system" in refused), refused


def test_a_previous_report_replaced_while_the_run_works_gives_none_of_its_blocks(tmp_path, last_night, monkeypatch,
                                                                                  caplog):
    """The previous folder's rouge155.txt replaced (renamed over by a file of the same
    size, as a rerun of that night with --overwrite does) after the plan checked it:
    the carried systems' blocks are copied from the checked file or not at all.  The
    blocks were copied by path when the report was joined, and the published report
    held the replacement's blocks, exit 0."""
    caplog.set_level(logging.WARNING)
    previous = tampered_copy(tmp_path, last_night, lambda folder: None)
    copy_blocks = pipeline.beam.reuse.copy_report_blocks

    def replaced_first(task, plan, staging):
        report = previous / task[0]
        data = report.read_bytes()
        assert b"alpha" in data
        (previous / "replacement").write_bytes(data.replace(b"alpha", b"ALPHA"))
        (previous / "replacement").rename(report)
        yield from copy_blocks(task, plan, staging)

    monkeypatch.setattr(pipeline.beam.reuse, "copy_report_blocks", replaced_first)
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, previous=previous)  # (the full run's tables)
    refused = reused["reuse"]["refused"]
    assert refused is not None and "rouge155.txt: its bytes differ from the _SUCCESS" in refused, refused
    assert b"ALPHA" not in (tmp_path / "reused" / "rouge155.txt").read_bytes()
    assert any(r.getMessage().endswith("; running again") for r in caplog.records)


def test_a_carried_systems_rows_in_a_file_read_again_are_duplicates_as_in_a_full_run(tmp_path, last_night, caplog):
    caplog.set_level(logging.WARNING)
    extra = rows_of("alpha", documents=[0])  # alpha's file is unchanged, but a new file repeats a row of it
    files = {s: rows_of(s) for s in SYSTEMS} | {"late": rows_of("gamma", documents=[DOCUMENTS], version=lambda i: 1) + extra}
    reused, full = tonight(tmp_path, last_night, files)
    assert full["counts"]["errors_by_reason"] == {"duplicate_key": 2}
    record = reused["reuse"]
    assert record["systems_carried"] == [] and "in files read again" in record["not_carried"]
    assert any("running again" in r.getMessage() for r in caplog.records)


def test_references_that_now_conflict_with_a_carried_systems_are_conflicts_as_in_a_full_run(tmp_path, last_night):
    files = {s: rows_of(s) for s in SYSTEMS}
    files["delta"] = rows_of("delta", refs=lambda i: reference(i) if i != 4 else ["other"])
    reused, full = tonight(tmp_path, last_night, files)
    assert full["counts"]["errors_by_reason"] == {"conflicting_references": len(SYSTEMS)}
    assert reused["reuse"]["systems_carried"] == []


@pytest.mark.parametrize("tonight_is", ["a changed and an added system", "a conflict with a carried system"])
def test_previous_rows_and_documents_reach_their_bucket_in_any_cut(tmp_path, last_night, monkeypatch, tonight_is):
    # Many buckets (about 1 KB of input each) and blocks of at most 3 rows: every
    # previous row and carried document must join its own document's bucket, or a row
    # is scored again (counted here) or a conflict with a carried system is missed
    # (the tables would differ from the full run's).  The significance pairs with a
    # system read again are summed from the per-document files 4 documents at a time.
    import pipeline.beam.read
    import pipeline.beam.reuse
    import pipeline.beam.significance

    monkeypatch.setattr(pipeline.beam.read, "BUCKET_BYTES", 1024)
    monkeypatch.setattr(pipeline.beam.reuse, "BATCH_ROWS", 3)
    monkeypatch.setattr(pipeline.beam.reuse, "DOCUMENTS_PER_ROW_GROUP", 5)
    monkeypatch.setattr(pipeline.beam.significance, "ALIGNED_VALUES", 20)
    monkeypatch.setattr(pipeline.beam.significance, "MIN_CHUNK", 1)
    buckets = set()

    def bucket_of(doc_id, count):
        buckets.add(count)
        return pipeline.beam.read.bucket_of(doc_id, count)

    monkeypatch.setattr(pipeline.beam.reuse, "bucket_of", bucket_of)
    files = {s: rows_of(s) for s in SYSTEMS}
    if tonight_is == "a changed and an added system":
        files["gamma"] = rows_of("gamma", version=lambda i: int(i % 5 == 0))
        files["epsilon"] = [dict(r, system="epsilon") for r in rows_of("alpha", version=lambda i: 9)]
    else:
        files["delta"] = rows_of("delta", refs=lambda i: reference(i) if i != 4 else ["other"])
    reused, full = tonight(tmp_path, last_night, files)
    assert min(buckets) > 4, buckets  # (buckets per run: the one retried without carrying reads more files)
    record = reused["reuse"]
    if tonight_is == "a changed and an added system":
        assert record["systems_carried"] == ["alpha", "beta", "delta"]
        assert record["rows_reused"] == DOCUMENTS - 5 and record["rows_scored"] == 5 + DOCUMENTS
    else:
        assert full["counts"]["errors_by_reason"] == {"conflicting_references": len(SYSTEMS)}
        assert record["systems_carried"] == [] and "other references" in record["not_carried"]
        assert record["rows_reused"] == len(SYSTEMS) * (DOCUMENTS - 1)


def test_index_evaluation_ids_reuse_rows_and_carry_nothing(tmp_path):
    inputs = night(tmp_path / "in-1", {s: rows_of(s) for s in SYSTEMS[:3]})
    run_pipeline(tmp_path / "night-1", inputs, flags=FLAGS, eval_ids="index")
    files = {s: rows_of(s, documents=range(2, DOCUMENTS)) for s in SYSTEMS[:3]}  # two documents removed
    inputs = night(tmp_path / "in-2", files)
    run_pipeline(tmp_path / "full", inputs, flags=FLAGS, eval_ids="index")
    reused = run_pipeline(tmp_path / "reused", inputs, flags=FLAGS, eval_ids="index", reuse=str(tmp_path / "night-1"))
    assert table_bytes(tmp_path / "reused") == table_bytes(tmp_path / "full")
    assert reused["reuse"]["rows_reused"] == 3 * (DOCUMENTS - 2) and "eval_ids = index" in reused["reuse"]["not_carried"]


def test_the_per_document_table_stores_the_documented_digests(last_night):
    base, _ = last_night
    rows = [r for r in document_rows(base / "night-1") if r["system"] == "beta" and r["doc_id"] == "d005"]
    text = candidate("beta", 5).encode("utf-8")
    refs = b"r" + b"".join(struct.pack("<Q", 1 + len(t.encode())) + b"s" + t.encode() for t in reference(5))
    digest = {"candidate_digest": hashlib.sha256(b"s" + text).digest()[:8], "references_digest": hashlib.sha256(refs).digest()[:8]}
    assert len(rows) == 3  # ROUGE-1, ROUGE-2, ROUGE-L
    for row in rows:
        for column, want in digest.items():
            assert row[column] == int.from_bytes(want, "little", signed=True)


def test_the_signature_and_the_record_of_what_was_reused(last_night, tmp_path):
    reused, full = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS})
    assert reused["reuse"]["systems_carried"] == list(sorted(SYSTEMS))  # nothing changed: every system carried
    assert reused["reuse"]["rows_scored"] == 0 and reused["reuse"]["rows_reused"] == 0
    assert "reuse" not in full
    assert json.loads((tmp_path / "reused" / "run.json").read_text())["reuse"]["rows_carried"] == len(SYSTEMS) * DOCUMENTS


def three_references(i: int) -> list[str]:
    return reference(i) + [f"a third reference of document {i}"]


@pytest.mark.parametrize("gamma", ["every document and a new one", "only new documents"])
def test_documents_with_another_number_of_references_reuse_and_name_it_in_the_signature(tmp_path, last_night, gamma):
    # Last night every document had 2 references (nrefs:2); tonight gamma also scores
    # documents with 3 (nrefs:2-3: a fact of the data, not a setting).  alpha and beta
    # are the same files: carried whole, their rows of system_scores with tonight's
    # signature.  With gamma on new documents only, the run cannot tell from the
    # documents it scored that the carried ones lie in 2-3: it carries nothing.
    new = range(DOCUMENTS, DOCUMENTS + 2)
    gamma_rows = (rows_of("gamma") if gamma.startswith("every") else []) + rows_of("gamma", new, refs=three_references)
    files = {"alpha": rows_of("alpha"), "beta": rows_of("beta"), "gamma": gamma_rows}
    reused, full = tonight(tmp_path, last_night, files)
    record = reused["reuse"]
    assert record["refused"] is None
    assert "|nrefs:2-3|" in full["signature"] and "nrefs:2|" in last_night[1]["signature"]
    signatures = {r["signature"] for r in pq.read_table(tmp_path / "reused" / "system_scores.parquet").to_pylist()}
    assert len(signatures) == 1 and "|nrefs:2-3|" in signatures.pop()  # every system's row, carried or not
    if gamma.startswith("every"):
        assert record["systems_carried"] == ["alpha", "beta"]
        assert record["rows_reused"] == DOCUMENTS and record["rows_scored"] == len(new)
    else:
        assert record["systems_carried"] == [] and "nrefs" in record["not_carried"]
        assert record["rows_reused"] == 2 * DOCUMENTS and record["rows_scored"] == len(new)


def test_a_real_setting_difference_is_named_beside_other_run_facts(tmp_path, last_night, caplog):
    # the signatures differ in run facts too (nrefs:2 -> 3, eval_ids doc_id -> index),
    # which are not settings: only the scorer's setting that changed (-n) is named
    caplog.set_level(logging.WARNING)
    files = {s: rows_of(s, refs=three_references) for s in SYSTEMS}
    reused, full = tonight(tmp_path, last_night, files, flags="-n 1 -r 20 -d", eval_ids="index")
    assert "|eval_ids:index|nrefs:3|" in full["signature"]
    assert reused["reuse"]["refused"] == "other settings: n: 2 -> 1"
    said = [r.getMessage() for r in caplog.records if "reusing" in r.getMessage()]
    assert said == [f"reusing nothing from {last_night[0] / 'night-1'}: other settings: n: 2 -> 1"]


@pytest.mark.parametrize("setting", ["lock_lease_seconds", "per_document_shards"])
def test_only_output_settings_that_change_a_table_stop_carrying(tmp_path, last_night, setting, caplog):
    # Where tables go and how the run locks them change no byte of them: systems are
    # still carried whole (as when a newer version adds such a key).  The per-document
    # table's shards change its files: nothing is carried, that named; rows are reused.
    caplog.set_level(logging.WARNING)
    value = {"lock_lease_seconds": 600.0, "per_document_shards": 3}[setting]
    reused, _ = tonight(tmp_path, last_night, {s: rows_of(s) for s in SYSTEMS}, **{setting: value})
    record = reused["reuse"]
    assert record["refused"] is None
    if setting == "lock_lease_seconds":
        assert record["systems_carried"] == sorted(SYSTEMS) and record["not_carried"] is None
        assert record["rows_carried"] == len(SYSTEMS) * DOCUMENTS
    else:
        assert record["systems_carried"] == [] and record["not_carried"] == "[output] differs (per_document_shards)"
        assert record["rows_reused"] == len(SYSTEMS) * DOCUMENTS


def test_a_previous_config_written_by_an_earlier_version_is_read_as_this_version_reads_it():
    # An earlier version spelled conflicting_references "error" (now "reject"), had no
    # integer_ids and no lock_lease_seconds: the same settings, so systems are carried.
    # A key it lacks at another value than its default, or a key this version does not
    # know, are differences, named.
    from pipeline.config import InputConfig, OutputConfig, RunConfig
    from pipeline.reuse import carry_blockers

    config = RunConfig(input=InputConfig(candidates=("x.jsonl",)), output=OutputConfig(folder="out")).validate()
    earlier = copy.deepcopy(config.to_dict())
    earlier["input"]["conflicting_references"] = "error"
    del earlier["input"]["integer_ids"], earlier["output"]["lock_lease_seconds"]
    inputs = {"references": []}
    assert carry_blockers({"config": earlier}, config, inputs) is None
    other = RunConfig(input=InputConfig(candidates=("x.jsonl",), integer_ids=("doc_id",)),
                      output=OutputConfig(folder="out")).validate()
    assert carry_blockers({"config": earlier}, other, inputs) == "[input] differs (integer_ids)"
    earlier["output"]["retired_key"] = 1
    assert carry_blockers({"config": earlier}, config, inputs) == "[output] differs (retired_key)"
    earlier["statistics"] = ["not", "a", "table"]
    assert "[statistics] is not a table" in carry_blockers({"config": earlier}, config, inputs)


def test_a_file_of_error_rows_alone_is_read_again_so_its_errors_are_counted(tmp_path):
    # A file that held no system (a README a glob took, a file of broken lines) was
    # skipped as unchanged: its error rows went uncounted and every reuse run failed
    # "rows were lost", nothing published.
    junk = tmp_path / "in" / "notes.jsonl"
    inputs = night(tmp_path / "in", {s: rows_of(s) for s in SYSTEMS[:2]})
    junk.write_text("not json\n{\"broken\": \n[]\n", encoding="utf-8")
    previous = run_pipeline(tmp_path / "night-1", [*inputs, junk], flags=FLAGS, max_rejected=1.0)
    assert previous["counts"]["errors"] == 3
    full = run_pipeline(tmp_path / "full", [*inputs, junk], flags=FLAGS, max_rejected=1.0)
    reused = run_pipeline(tmp_path / "reused", [*inputs, junk], flags=FLAGS, max_rejected=1.0,
                          reuse=str(tmp_path / "night-1"))
    assert reused["reuse"]["systems_carried"] == list(SYSTEMS[:2])
    assert str(junk) not in reused["reuse"]["files_not_read"] and len(reused["reuse"]["files_not_read"]) == 2
    assert reused["counts"] == full["counts"] and reused["counts"]["errors"] == 3
    assert table_bytes(tmp_path / "reused") == table_bytes(tmp_path / "full")


def _system_file(folder, system: str):
    return next(p for p in sorted((folder / "per_document").glob("*.parquet"))
                if pq.read_table(p, columns=["system"]).column("system")[0].as_py() == system)


def _doc_ids_over_the_cell_bound(folder):  # gamma's file: as many rows, one doc_id of 5,000 bytes (a dictionary value)
    part = _system_file(folder, "gamma")
    table = pq.read_table(part)
    ids = pa.DictionaryArray.from_arrays(pa.array([0] * table.num_rows, pa.int32()), pa.array(["d" * 5000]))
    pq.write_table(table.set_column(table.column_names.index("doc_id"), "doc_id", ids), part)


def _a_billion_rows(folder):  # alpha's file: its columns, 100,000,000 run-length encoded rows (a few MB)
    part = _system_file(folder, "alpha")
    table = pq.read_table(part).slice(0, 1)
    schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type)) if f.type == pa.string() else f
                        for f in table.schema])
    n = 10_000_000
    columns = [pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), table.column(f.name).chunk(0))
               if f.type == pa.string() else pa.array(np.full(n, table.column(f.name)[0].as_py()), f.type)
               for f in table.schema]
    with pq.ParquetWriter(part, schema, compression="zstd") as writer:
        for _ in range(10):
            writer.write_table(pa.Table.from_arrays(columns, schema=schema), row_group_size=n)


def _system_scores_cell_bomb(folder):  # one 1 MB system name in every row, one dictionary value
    part = folder / "system_scores.parquet"
    table = pq.read_table(part)
    names = pa.DictionaryArray.from_arrays(pa.array([0] * table.num_rows, pa.int32()), pa.array(["s" * (1 << 20)]))
    pq.write_table(table.set_column(table.column_names.index("system"), "system", names), part)


@pytest.mark.parametrize("damage, expected", [
    (_doc_ids_over_the_cell_bound, "a cell of column 'doc_id' decodes to 5000 bytes, over this reader's bound of 4000"),
    (_a_billion_rows, "100000000 rows where its run recorded 72"),
    (_system_scores_cell_bomb, "system_scores.parquet: not read: a cell of column 'system' decodes to 1048576 bytes"),
])
def test_previous_tables_that_decode_past_their_bounds_are_refused_unread(tmp_path, last_night, damage, expected):
    # A previous folder is untrusted input, sealed or not: a few KB of Parquet can decode
    # to gigabytes (a billion run-length encoded rows; one long value in every row of a
    # dictionary). Each reader refuses it from its headers and lengths, before decoding,
    # and the run reuses nothing from that folder, and says why.
    previous = tampered_copy(tmp_path, last_night, lambda folder: (damage(folder), seal(folder)))
    files = {s: rows_of(s) for s in SYSTEMS[:3]} | {"delta": rows_of("delta", version=lambda i: 1)}
    reused, _ = tonight(tmp_path, last_night, files, previous=previous)
    assert expected in reused["reuse"]["refused"], reused["reuse"]["refused"]
    assert "rows_reused" not in reused["reuse"]
