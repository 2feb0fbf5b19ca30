"""Every reader of a result folder goes through pipeline.io.result_folder (issue 31):
it sees one complete folder, as its manifest lists it, or refuses with a sentence;
a folder replaced while it is read is never read half old, half new."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.compare import ComparedRun
from pipeline.io import files
from pipeline.io.result_folder import NUMBER, TEXT, FolderChanged, ResultFolder, ResultFolderError
from tests.pipeline.runs import run_pipeline, seal, write_jsonl
from tests.pipeline.test_compare import corpus

SCORES = {"system": TEXT, "doc_id": TEXT, "metric": TEXT, "f_measure": NUMBER}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of different data, both with 4 per-document shards, and a third with 2."""
    base = tmp_path_factory.mktemp("folders")
    old = write_jsonl(base / "old.jsonl", corpus(False))
    new = write_jsonl(base / "new.jsonl", corpus(True))
    run_pipeline(base / "a", [old], flags="-n 1 -r 10", per_document_shards=4)
    run_pipeline(base / "b", [new], flags="-n 1 -r 10", per_document_shards=4)
    run_pipeline(base / "c", [new], flags="-n 1 -r 10", per_document_shards=2)
    return base


def shards(folder) -> list[str]:
    """The per-document files' names, sorted (a file set per system: part-<system's
    hash>-NNNNN-of-MMMMM; two runs of the same systems name them alike)."""
    return sorted(p.name for p in (folder / "per_document").glob("*.parquet"))


def truth(folder):
    """{(system, metric): {doc_id: f_measure}} read with pyarrow, file by file."""
    out = {}
    for shard in sorted((folder / "per_document").glob("*.parquet")):
        for row in pq.read_table(shard).to_pylist():
            out.setdefault((row["system"], row["metric"]), {})[row["doc_id"]] = row["f_measure"]
    return out


def test_a_folder_reads_as_its_manifest_lists_it(runs):
    folder = ResultFolder.open(str(runs / "a"))
    manifest = json.loads((runs / "a" / "_SUCCESS").read_text())
    assert folder.run_id == manifest["run_id"] == json.loads((runs / "a" / "run.json").read_text())["run_id"]
    names = shards(runs / "a")
    assert len(names) == 2 * 4 and all(n.endswith("-of-00004.parquet") for n in names)  # 4 files a system
    assert folder.names("per_document/*.parquet") == [f"per_document/{n}" for n in names]
    assert folder.read_bytes("system_scores.md") == (runs / "a" / "system_scores.md").read_bytes()
    rows = [row for name in folder.names("per_document/*.parquet") for _, row in folder.rows(name, SCORES)]
    expected = [{k: r[k] for k in SCORES} for shard in sorted((runs / "a" / "per_document").glob("*.parquet"))
                for r in pq.read_table(shard).to_pylist()]
    assert rows == expected and len(rows) == 30 * 2 * 2  # documents x systems x (ROUGE-1, ROUGE-L)


def test_a_stale_shard_beside_the_listed_ones_is_never_read(runs, tmp_path):
    """The object-store case of issue 30: part-0000{0..3}-of-00004 left beside a run of
    two shards; a reader of the manifest reads the two."""
    mixed = tmp_path / "c"
    shutil.copytree(runs / "c", mixed)
    for shard in (runs / "a" / "per_document").glob("*.parquet"):
        shutil.copy(shard, mixed / "per_document" / shard.name)
    run = ComparedRun(str(mixed), "f_measure")
    assert run.scores == truth(runs / "c")


def test_a_folder_replaced_after_it_was_opened_is_refused_not_mixed(runs, tmp_path):
    live = tmp_path / "live"
    shutil.copytree(runs / "a", live)
    folder = ResultFolder.open(str(live))
    shard = folder.names("per_document/*.parquet")[1]
    os.rename(live, tmp_path / "old")  # what run --overwrite does, in one step (renameat2)
    shutil.copytree(runs / "b", live)
    with pytest.raises(FolderChanged, match="replaced or edited while it was read"):
        list(folder.rows(shard, SCORES))


def test_the_issue_31_mix_is_refused(runs, tmp_path):
    """Shard 0 of the old folder, shards 1-3 of the new, under the old manifest: what
    `compare OLD R` read during `run --overwrite R` (a drop that is in neither)."""
    mixed = tmp_path / "mixed"
    shutil.copytree(runs / "a", mixed)
    assert shards(runs / "a") == shards(runs / "b")
    for name in shards(runs / "a")[1:]:
        shutil.copy(runs / "b" / "per_document" / name, mixed / "per_document" / name)
    with pytest.raises(FolderChanged):
        ComparedRun(str(mixed), "f_measure")
    done = subprocess.run([sys.executable, "-m", "pipeline", "compare", str(runs / "a"), str(mixed)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 2 and "per_document/part-" in done.stderr and "changed" in done.stderr, done.stderr


def test_a_reader_racing_replacements_sees_one_whole_folder_or_refuses(runs, tmp_path):
    """A thread swaps the folder between two runs (as `run --overwrite` publishes)
    while the reader reads it again and again: every read is run a's scores, run b's,
    or a refusal; never a mix."""
    live, spare = tmp_path / "live", tmp_path / "spare"
    shutil.copytree(runs / "a", live)
    shutil.copytree(runs / "b", spare)
    expected = [truth(runs / "a"), truth(runs / "b")]
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            os.rename(live, tmp_path / "moving")
            os.rename(spare, live)
            os.rename(tmp_path / "moving", spare)

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = []
    try:
        for _ in range(40):
            try:
                outcomes.append(expected.index(ComparedRun(str(live), "f_measure").scores))
            except ResultFolderError as err:
                outcomes.append(type(err).__name__)
    finally:
        stop.set()
        swapper.join()
    assert len(outcomes) == 40  # each one whole folder (0: a, 1: b) or a refusal


@pytest.mark.parametrize("damage, message", [
    (lambda f: (f / "_SUCCESS").unlink(), "not a complete result folder (no _SUCCESS"),
    (lambda f: [(f / "_SUCCESS").write_bytes(b""), (f / "_ROUGE_PIPELINE").write_text('{"run_id": "0123456789ab"}')],
     "its _SUCCESS is empty and nothing lists its files"),
    (lambda f: (f / "_SUCCESS").write_text("{not json"), "not a manifest of rouge-pipeline"),
    (lambda f: (f / "per_document" / shards(f)[2]).unlink(), "is missing: the folder is incomplete"),
    (lambda f: (f / "run.json").write_text("{}"), "has 2 bytes where its _SUCCESS says"),
])
def test_an_incomplete_or_damaged_folder_is_refused(runs, tmp_path, damage, message):
    folder = tmp_path / "f"
    shutil.copytree(runs / "a", folder)
    damage(folder)
    with pytest.raises(ResultFolderError, match=message.replace("(", r"\(")):
        ResultFolder.open(str(folder))


def test_a_hostile_manifest_cannot_reach_outside_the_folder_nor_mix_runs(runs, tmp_path):
    folder = tmp_path / "f"
    shutil.copytree(runs / "a", folder)
    manifest = json.loads((folder / "_SUCCESS").read_text())
    for bad in ("../b/run.json", "/etc/passwd", "per_document/../../x", "a\\b", "x\x1b"):
        (folder / "_SUCCESS").write_text(json.dumps(dict(manifest, files={bad: {"bytes": 1, "sha256": "0" * 64}})))
        with pytest.raises(ResultFolderError, match="not a file inside the folder"):
            ResultFolder.open(str(folder))
    record = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps(dict(record, run_id="fedcba987654")))
    seal(folder, run_id=manifest["run_id"])
    manifest = json.loads((folder / "_SUCCESS").read_text())
    (folder / "_SUCCESS").write_text(json.dumps(dict(manifest, run_id="0123456789ab")))
    with pytest.raises(ResultFolderError, match="the folder mixes two runs"):
        ResultFolder.open(str(folder))


def test_a_folder_of_the_previous_version_is_read_by_its_marker_list(runs, tmp_path):
    """Before the manifest, a local folder recorded {path: sha256} in _ROUGE_PIPELINE
    and an empty _SUCCESS: still read, still checked."""
    folder = tmp_path / "older"
    shutil.copytree(runs / "a", folder)
    run_id = json.loads((folder / "run.json").read_text())["run_id"]
    listed = {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
              for p in folder.rglob("*") if p.is_file() and p.name not in ("_ROUGE_PIPELINE",)}
    listed["_SUCCESS"] = hashlib.sha256(b"").hexdigest()
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / "_ROUGE_PIPELINE").write_text(json.dumps({"tool": "rouge-pipeline", "run_id": run_id, "files": listed}))
    assert ComparedRun(str(folder), "f_measure").scores == truth(runs / "a")
    first = shards(folder)[0]
    (folder / "per_document" / first).write_bytes((runs / "b" / "per_document" / first).read_bytes())
    with pytest.raises(FolderChanged):
        ComparedRun(str(folder), "f_measure")


def test_a_small_shard_whose_ids_decode_to_hundreds_of_megabytes_is_refused_in_bounded_memory(runs, tmp_path):
    """Plain pages this time (one 1 MB doc_id a page, zstd: a few KB on disk): refused
    from the row group's metadata before a value is decoded."""
    folder = tmp_path / "bomb"
    shutil.copytree(runs / "a", folder)
    shard = folder / "per_document" / shards(folder)[0]
    table = pq.read_table(shard)
    n = 300
    big = pa.table({"profile": pa.array([None] * n, pa.string()), "system": ["good"] * n,
                    "doc_id": pa.array(["z" * 1_000_000 + str(i) for i in range(n)]), "metric": ["ROUGE-1"] * n,
                    **{c: [0.5 if pa.types.is_floating(table.schema.field(c).type) else 0] * n
                       for c in table.column_names[4:]}})
    pq.write_table(big.cast(table.schema), shard, compression="zstd", use_dictionary=False,
                   write_batch_size=1, data_page_size=1 << 20)
    del big, table
    assert shard.stat().st_size < 1_000_000
    seal(folder)
    wrapper = ("import json, resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, "
               "text=True); print(json.dumps([done.returncode, done.stderr, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024]))")
    done = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "pipeline", "compare",
                           str(runs / "a"), str(folder)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    status, err, peak_mb = json.loads(done.stdout)
    assert status == 2 and str(shard) in err and "column 'doc_id'" in err, err
    assert peak_mb < 250  # decoding the column alone takes 300 MB


def test_copy_to_copies_a_listed_file_checked_and_leaves_nothing_of_a_changed_one(runs, tmp_path):
    folder = tmp_path / "f"
    shutil.copytree(runs / "a", folder)
    opened = ResultFolder.open(str(folder))
    name = f"per_document/{shards(folder)[1]}"
    assert opened.copy_to(name, str(tmp_path / "copy.parquet")) == (folder / name).stat().st_size
    assert (tmp_path / "copy.parquet").read_bytes() == (runs / "a" / name).read_bytes()
    (folder / name).write_bytes((runs / "b" / name).read_bytes())
    with pytest.raises(FolderChanged):
        opened.copy_to(name, str(tmp_path / "other.parquet"))
    assert not (tmp_path / "other.parquet").exists()


def test_copy_to_never_leaves_bytes_edited_in_place_while_it_copies(runs, tmp_path, monkeypatch):
    """A listed file edited in place to the same size once it is open (a writer that
    does not rename): the copy holds the listed bytes, or there is no copy
    (FolderChanged), never the edited bytes under the manifest's name."""
    folder = tmp_path / "f"
    shutil.copytree(runs / "a", folder)
    opened = ResultFolder.open(str(folder))
    name = f"per_document/{shards(folder)[1]}"
    path = folder / name
    original = path.read_bytes()
    edited = original[:-9] + bytes([original[-9] ^ 0xFF]) + original[-8:]  # (one byte of the footer, same size)
    real_open = files.open_read

    class EditedOnRead:  # the file, edited in place when its bytes are first read
        def __init__(self, fh):
            self.fh = fh

        def read(self, *args):
            if not self.fh.tell():
                with open(path, "r+b") as out:
                    out.write(edited)
            return self.fh.read(*args)

        def __getattr__(self, attr):
            return getattr(self.fh, attr)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(files, "open_read", lambda p, *a, **k: EditedOnRead(real_open(p, *a, **k))
                        if str(p).endswith(name) else real_open(p, *a, **k))
    copy = tmp_path / "copy.parquet"
    with pytest.raises(FolderChanged, match="its bytes differ from the _SUCCESS"):
        opened.copy_to(name, str(copy))
    assert not copy.exists() and path.read_bytes() == edited and original != edited


def test_a_manifest_takes_the_entry_of_a_known_file_of_its_size_and_hashes_the_rest(tmp_path):
    # (`run --reuse` copies a carried file checked against the previous manifest: its entry is not hashed again)
    import hashlib

    from pipeline.io.manifest import Entry, Manifest

    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_bytes(b"alpha")
    (tmp_path / "sub" / "b.txt").write_bytes(b"beta!")
    known = {"a.txt": Entry(5, "0" * 64), "sub/b.txt": Entry(4, "1" * 64), "gone.txt": Entry(1, "2" * 64)}
    listed = Manifest.of_folder(str(tmp_path), "0" * 12, known).files
    assert listed == {"a.txt": Entry(5, "0" * 64),  # taken as known (its size)
                      "sub/b.txt": Entry(5, hashlib.sha256(b"beta!").hexdigest())}  # another size: hashed
