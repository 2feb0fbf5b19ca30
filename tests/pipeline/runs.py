"""Running the real pipeline from tests, and reading what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.config import InputConfig, OutputConfig, RougeConfig, RunConfig, RunOptions
from pipeline.beam.run import run

IN_MEMORY = ["--runner=FnApiRunner", "--direct_running_mode=in_memory"]
TWO_PROCESSES = ["--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
TWO_THREADS = ["--runner=FnApiRunner", "--direct_running_mode=multi_threading", "--direct_num_workers=2"]
TABLES = [
    "system_scores.parquet",
    "system_scores.csv",
    "system_scores.md",
    "rouge155.txt",
    "significance.parquet",
    "significance.csv",
    "significance.md",
    "errors/part-00000-of-00001.parquet",
    "errors/part-00000-of-00001.jsonl",
]


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def run_pipeline(output: Path, candidates, *, references=(), flags="-n 2", beam_args=IN_MEMORY, **options):
    input_options = {k: v for k, v in options.items() if k in InputConfig.__dataclass_fields__}
    rouge_options = {k: v for k, v in options.items() if k in RougeConfig.__dataclass_fields__}
    run_options = {k: v for k, v in options.items() if k in RunOptions.__dataclass_fields__}
    output_options = {k: v for k, v in options.items() if k in ("per_document_shards", "per_document_formats",
                                                                            "lock_lease_seconds")}
    config = RunConfig(
        input=InputConfig(
            candidates=tuple(map(str, candidates)), references=tuple(map(str, references)), **input_options
        ),
        rouge=RougeConfig(args=flags, **rouge_options),
        output=OutputConfig(folder=str(output), overwrite=options.get("overwrite", False), **output_options),
        run=RunOptions(**run_options),
    ).validate()
    return run(config, beam_args)


def table_bytes(folder: Path) -> dict[str, bytes]:
    """Every table's bytes (None when absent: a .jsonl shard with no rows is not
    written), the per-document table's files among them (a set per (profile,
    system), named by both)."""
    documents = sorted(str(p.relative_to(folder)) for p in (folder / "per_document").iterdir())
    assert documents, f"{folder} has no per-document table"
    return {name: (folder / name).read_bytes() if (folder / name).exists() else None for name in TABLES + documents}


def document_rows(folder: Path) -> list[dict]:
    """The per-document table of a result folder, every file of it, in file name order."""
    import pyarrow.parquet as pq

    return [row for part in sorted((folder / "per_document").glob("*.parquet")) for row in pq.read_table(part).to_pylist()]


def read_errors(folder: Path) -> list[dict]:
    """Every row of the errors table: the readers' parts (file-*) and the graph's shards (part-*)."""
    return [
        json.loads(line)
        for part in sorted((folder / "errors").glob("*.jsonl"))
        for line in part.read_text(encoding="utf-8").splitlines()
    ]


def seal(folder: Path, run_id: str = "0123456789ab") -> Path:
    """Write the manifest a published result folder carries, `_SUCCESS`, computed here
    with hashlib (not by the code under test): for tests that make or edit a result
    folder by hand and want it read as complete.  The run id is run.json's when it
    has one."""
    import hashlib

    record = folder / "run.json"
    if record.is_file():
        try:
            run_id = json.loads(record.read_text(encoding="utf-8")).get("run_id", run_id)
        except ValueError:
            pass
    listed = {
        str(p.relative_to(folder)): {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.name != "_SUCCESS"
    }
    manifest = {"manifest": 1, "tool": "rouge-pipeline", "run_id": run_id, "files": listed}
    (folder / "_SUCCESS").write_text(json.dumps(manifest), encoding="utf-8")
    return folder
