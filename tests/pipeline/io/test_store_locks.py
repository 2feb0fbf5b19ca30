"""The stores' configuration and the lock of a URL output (pipeline.io.stores,
pipeline.io.publish_url), on the GCS emulator and moto's S3 server (no pipeline run)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from pipeline.io import stores
from pipeline.io.publish import OutputError
from pipeline.io.publish_url import UrlLock, this_process
from tests.object_stores import ROOT, Bucket


@pytest.fixture(params=["gcs", "s3"])
def bucket(request, monkeypatch):
    env = request.getfixturevalue(f"{request.param}_store")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    stores.configure([])
    return Bucket(request.param, env, f"l-{uuid.uuid4().hex[:12]}")


def forged(run_id="0123456789ab", renewed=None, lease=60.0, **who) -> bytes:
    holder = {"tool": "rouge-pipeline", "run_id": run_id, "renewed": time.time() if renewed is None else renewed,
              "lease_seconds": lease, "host": "elsewhere", "boot_id": "another-boot", "pid_namespace": "1",
              "pid": 12345, "pid_started": "1", **who}
    return json.dumps(holder).encode("utf-8")


def test_the_stores_honour_create_only_and_compare_and_swap(bucket):
    """What the lock relies on (moto's server as shipped; the GCS emulator with the
    preconditions tests/object_stores.py adds)."""
    store, url = stores.object_store(bucket.url()), bucket.url("x.lock")
    token = store.create(url, b"one")
    assert token is not None and store.create(url, b"two") is None
    assert store.read(url) == (b"one", token)
    newer = store.replace(url, b"three", token)
    assert newer is not None and store.replace(url, b"four", token) is None
    assert not store.delete(url, token) and store.delete(url, newer)
    assert store.read(url) is None


def test_two_runs_taking_one_lock_at_once_one_wins(bucket):
    results = []
    barrier = threading.Barrier(4)

    def take(i):
        barrier.wait()
        try:
            results.append(UrlLock(bucket.url("out"), f"{i:012x}", lease_seconds=30).acquire())
        except OutputError as err:
            results.append(str(err))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [r for r in results if isinstance(r, UrlLock)]
    assert len(won) == 1 and all("another run is writing" in r for r in results if isinstance(r, str))
    holder = json.loads(bucket.get("out.lock"))
    assert holder["run_id"] == won[0].run_id and holder["pid"] == os.getpid()
    won[0].release()
    assert bucket.get("out.lock") is None


def test_a_live_lock_is_refused_a_dead_one_taken_over(bucket, caplog):
    # another machine's lock, renewed now: refused, untouched
    bucket.put("a.lock", forged())
    with pytest.raises(OutputError, match=r"another run is writing .* \(run 0123456789ab, host elsewhere, pid 12345"):
        UrlLock(bucket.url("a"), "aaaaaaaaaaaa").acquire()
    assert json.loads(bucket.get("a.lock"))["run_id"] == "0123456789ab"
    # the same machine's lock whose process is gone: taken over at once
    me = this_process()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    bucket.put("b.lock", forged(**{**me, "pid": int(gone.stdout), "pid_started": "1"}))
    with caplog.at_level(logging.WARNING, "rouge-pipeline"):
        lock = UrlLock(bucket.url("b"), "bbbbbbbbbbbb").acquire()
    assert "on this machine is gone" in caplog.text
    lock.release()
    # another machine's lock not renewed for its lease: taken over
    bucket.put("c.lock", forged(renewed=time.time() - 120, lease=60))
    lock = UrlLock(bucket.url("c"), "cccccccccccc").acquire()
    assert "past its lease of 60 s" in caplog.text and json.loads(bucket.get("c.lock"))["run_id"] == "cccccccccccc"
    lock.release()
    # the same machine, a live process (this one): refused however old its time says it is
    bucket.put("d.lock", forged(renewed=0, lease=1, **me))
    with pytest.raises(OutputError, match="another run is writing"):
        UrlLock(bucket.url("d"), "dddddddddddd").acquire()
    # something else named like a lock: refused, never deleted
    bucket.put("e.lock", b"my notes")
    with pytest.raises(OutputError, match="is not a lock of rouge-pipeline"):
        UrlLock(bucket.url("e"), "eeeeeeeeeeee").acquire()
    assert bucket.get("e.lock") == b"my notes"


def test_a_lock_is_renewed_while_held_and_a_stolen_one_stops_the_publication(bucket):
    lock = UrlLock(bucket.url("r"), "ffffffffffff", lease_seconds=1).acquire()
    try:
        first = json.loads(bucket.get("r.lock"))["renewed"]
        deadline = time.monotonic() + 60
        while json.loads(bucket.get("r.lock"))["renewed"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert json.loads(bucket.get("r.lock"))["renewed"] > first  # renewed by the thread
        bucket.put("r.lock", forged(run_id="999999999999"))  # another run took it over
        with pytest.raises(OutputError, match="took the lock .* over"):
            lock.check()
    finally:
        lock.release()
    assert json.loads(bucket.get("r.lock"))["run_id"] == "999999999999"  # never deleted by the loser


class IgnoresPreconditions(stores.ObjectStore):
    """A store (an emulator) that accepts every write."""

    def __init__(self):
        self.objects = {}

    def read(self, url):
        return (self.objects[url], len(self.objects)) if url in self.objects else None

    def create(self, url, data):
        self.objects[url] = data
        return len(self.objects)

    replace = delete = None


def test_a_store_that_ignores_preconditions_is_named(caplog, monkeypatch):
    lock = UrlLock("gs://b/out", "abcdefabcdef")
    monkeypatch.setattr(lock, "store", IgnoresPreconditions())
    monkeypatch.setattr(lock, "_renew", lambda: None)
    with caplog.at_level(logging.WARNING, "rouge-pipeline"):
        lock.acquire()
    assert "accepted a second create-only write" in caplog.text and "not kept apart" in caplog.text


LOOKUP = """
import sys
import google.auth
from apache_beam.utils.retry import PermanentException
calls = []
def lookup(*args, **kwargs):
    calls.append(1)
    raise PermanentException("no credentials here")  # (not retried: a test must not wait 28 s)
google.auth.default = lookup
from pipeline.cli import main
code = main(["compare", sys.argv[1], sys.argv[1], "--quiet", *sys.argv[2:]])
print("LOOKUPS", len(calls), "EXIT", code)
"""


def test_anonymous_gcs_skips_the_credential_lookup(gcs_store, tmp_path):
    """ROUGE_PIPELINE_GCS_ANONYMOUS=1 or --no_auth: Beam never looks Google credentials up
    (it retries a failing look-up for about 28 s); without either it does."""
    folder = tmp_path / "f"
    folder.mkdir()
    bucket = Bucket("gcs", gcs_store, f"a-{uuid.uuid4().hex[:12]}")
    bucket.put("run/_SUCCESS", b"{}")  # (not a manifest: compare refuses it, after reading it)
    env = {**os.environ, **gcs_store, "PYTHONPATH": str(ROOT), "NO_GCE_CHECK": "true"}
    env.pop("ROUGE_PIPELINE_GCS_ANONYMOUS")
    for extra, anonymous in (([], "1"), (["--no_auth"], None), ([], None)):
        run_env = dict(env, **({"ROUGE_PIPELINE_GCS_ANONYMOUS": anonymous} if anonymous else {}))
        done = subprocess.run([sys.executable, "-c", LOOKUP, bucket.url("run"), *extra], capture_output=True,
                              text=True, env=run_env, timeout=300)
        lookups = int(done.stdout.split("LOOKUPS ")[1].split()[0])
        assert "not a manifest of rouge-pipeline" in done.stderr, done.stderr
        assert lookups == (1 if not extra and not anonymous else 0), (extra, anonymous, done.stderr)


def test_filesystem_options_and_the_environment():
    ours, rest = stores.split_filesystem_args(
        ["--s3_endpoint_url", "http://x:9000", "--no_auth", "--fail-on-drop", "2", "--s3_region_name=eu", "--bogus"])
    assert ours == ["--s3_endpoint_url", "http://x:9000", "--no_auth", "--s3_region_name=eu"]
    assert rest == ["--fail-on-drop", "2", "--bogus"]
    env = {"AWS_ENDPOINT_URL": "http://generic:1", "AWS_ENDPOINT_URL_S3": "http://s3:2", "AWS_REGION": "eu-west-3",
           "AWS_SECRET_ACCESS_KEY": "secret"}
    saved = {k: os.environ.get(k) for k in (*env, "AWS_DEFAULT_REGION")}
    try:
        os.environ.update(env)
        os.environ.pop("AWS_DEFAULT_REGION", None)
        assert stores.environment_args([]) == ["--s3_endpoint_url=http://s3:2", "--s3_region_name=eu-west-3"]
        assert stores.environment_args(["--s3_region_name=given"]) == ["--s3_endpoint_url=http://s3:2"]
        assert not [a for a in stores.environment_args([]) if "secret" in a]  # never credentials
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_compare_and_meta_eval_take_the_filesystem_options_and_refuse_others(tmp_path, capsys):
    from pipeline.cli import main

    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--s3_region_name", "eu", "--no_auth"]) == 2
    assert "no such result folder" in capsys.readouterr().err  # the options were taken; the folders are missing
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--s3_endpoint"]) == 2
    assert "unknown option or argument '--s3_endpoint'" in capsys.readouterr().err
    assert main(["meta-eval", "--run", str(tmp_path / "a"), "--judgments", str(tmp_path / "j.jsonl"),
                 "--s3_endpoint_url=http://127.0.0.1:1"]) == 2
    assert "unknown option" not in capsys.readouterr().err
