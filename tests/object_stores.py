"""Object stores for the tests, on loopback: a GCS API emulator (gcp-storage-emulator)
and an S3 server (moto[server]), each started in a process of its own on a free port
and stopped after, even when a test fails (the fixtures in tests/conftest.py).

gcp-storage-emulator 2026.7 ignores GCS preconditions (`ifGenerationMatch` on an
upload or a delete: measured, a second create-only write succeeds).  Real GCS
honours them (https://cloud.google.com/storage/docs/request-preconditions), and
the lock of pipeline.io.publish_url relies on them, so the emulator runs here
with them added as GCS documents them: 412 Precondition Failed when the object's
generation is not the one asked for (0: the object must not exist).  Its HTTP
server handles one request at a time, so the check and the write are one step.
moto's server honours S3's If-None-Match and If-Match (checked by
tests/pipeline/io/test_object_stores.py).

    python -m tests.object_stores gcs PORT     the emulator (in memory)
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from http import HTTPStatus
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Every process of a test that talks to the stores: no Google credentials are looked
# up (pipeline.io.stores), no AWS configuration file is read.
ANONYMOUS = {"ROUGE_PIPELINE_GCS_ANONYMOUS": "1", "GOOGLE_CLOUD_PROJECT": "test-project",
             "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
             "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(process: subprocess.Popen, port: int, what: str, log) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"{what} exited with status {process.returncode}: {log.read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within 60 s")


@contextlib.contextmanager
def _server(command: list[str], port: int, what: str):
    # Its log goes to a file: a pipe nobody reads fills up and stops the server (moto
    # logs every request).
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, stdout=log, stderr=log, text=True, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            _wait_listening(process, port, what, log)
            yield
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.contextmanager
def gcs_emulator():
    """A GCS API emulator with preconditions; yields the environment that points the
    clients at it (STORAGE_EMULATOR_HOST, anonymous)."""
    port = _free_port()
    with _server([sys.executable, "-m", "tests.object_stores", "gcs", str(port)], port, "the GCS emulator"):
        yield {**ANONYMOUS, "STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{port}"}


@contextlib.contextmanager
def s3_server():
    """moto's S3 server; yields the environment that points boto3 at it (endpoint and
    credentials, nothing else: what a user sets)."""
    port = _free_port()
    with _server([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], port, "moto's server"):
        yield {**ANONYMOUS, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}


def _with_preconditions() -> None:
    """GCS's ifGenerationMatch on uploads and deletes, added to the emulator's
    handlers (before its server module captures them)."""
    from gcp_storage_emulator.exceptions import NotFound
    from gcp_storage_emulator.handlers import objects

    def generation(storage, bucket: str, name: str) -> int:
        try:
            return int(storage.get_file_obj(bucket, name)["generation"])
        except NotFound:
            return 0

    def checked(handler, name_of):
        def handle(request, response, storage, *args, **kwargs):
            wanted = request.query.get("ifGenerationMatch")
            name = name_of(request)
            if wanted and name and generation(storage, request.params["bucket_name"], name) != int(wanted[0]):
                response.status = HTTPStatus.PRECONDITION_FAILED
                response.json({"error": {"code": 412, "message": "At least one of the pre-conditions you "
                                          "specified did not hold.", "errors": [{"reason": "conditionNotMet"}]}})
                return None
            return handler(request, response, storage, *args, **kwargs)

        return handle

    def upload_name(request):
        if "name" in request.query:
            return request.query["name"][0]
        data = request.data
        return data.get("meta", {}).get("name") if isinstance(data, dict) else None

    objects.insert = checked(objects.insert, upload_name)
    objects.delete = checked(objects.delete, lambda request: request.params["object_id"])


if __name__ == "__main__":
    if sys.argv[1:2] == ["gcs"]:
        _with_preconditions()
        from gcp_storage_emulator.server import create_server

        host = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"  # (the multi-host test: the store host's address)
        create_server(host, int(sys.argv[2]), in_memory=True).run()


class Bucket:
    """A bucket of one of the stores, read and written by the store's own client (not
    through the code under test): what a person or another tool sees."""

    def __init__(self, kind: str, env: dict, name: str):
        self.kind, self.env, self.name = kind, env, name
        self.scheme = {"gcs": "gs", "s3": "s3"}[kind]
        if kind == "gcs":
            from google.auth.credentials import AnonymousCredentials
            from google.cloud import storage

            self.client = storage.Client(project="test-project", credentials=AnonymousCredentials(),
                                         client_options={"api_endpoint": env["STORAGE_EMULATOR_HOST"]})
            self.client.create_bucket(name)
        else:
            import boto3

            self.client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                                       aws_access_key_id="testing", aws_secret_access_key="testing")
            self.client.create_bucket(Bucket=name)

    def url(self, key: str = "") -> str:
        return f"{self.scheme}://{self.name}/{key}"

    def list(self, prefix: str = "") -> dict[str, int]:
        """{key: size} of every object whose key starts with `prefix`."""
        if self.kind == "gcs":
            return {b.name: b.size for b in self.client.list_blobs(self.name, prefix=prefix)}
        found = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=prefix):
            found.update({o["Key"]: o["Size"] for o in page.get("Contents", [])})
        return found

    def get(self, key: str):
        """The object's bytes, or None when there is none."""
        if self.kind == "gcs":
            from google.api_core.exceptions import NotFound

            try:
                return self.client.bucket(self.name).blob(key).download_as_bytes()
            except NotFound:
                return None
        try:
            return self.client.get_object(Bucket=self.name, Key=key)["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None

    def put(self, key: str, data: bytes) -> None:
        if self.kind == "gcs":
            self.client.bucket(self.name).blob(key).upload_from_string(data)
        else:
            self.client.put_object(Bucket=self.name, Key=key, Body=data)

    def folder(self, prefix: str) -> dict[str, bytes]:
        """{path relative to `prefix`/: bytes} of every object under it."""
        return {key[len(prefix) + 1:]: self.get(key) for key in self.list(prefix + "/")}
