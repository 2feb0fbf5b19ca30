"""Object stores (gs://, s3://, any Beam filesystem URL): their configuration,
applied before any file call, and the few conditional writes a lock needs.

Configuration.  Beam's FileSystems open a URL with the options last given to
`FileSystems.set_options`; a driver that lists or opens a URL before its Pipeline
exists (inputs are listed before Beam starts; `compare` has no pipeline at all)
must set them itself, or S3 fails with "Must provide one of client or options".
`configure(args)` does it from Beam's own filesystem options (`--s3_*`, `--no_auth`,
`--project`, `--hdfs_*`; every command accepts them) and from the standard
environment variables:

* S3: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (read by boto3
  in every process, never copied into the pipeline's options), AWS_ENDPOINT_URL_S3
  or AWS_ENDPOINT_URL (-> --s3_endpoint_url), AWS_REGION or AWS_DEFAULT_REGION
  (-> --s3_region_name);
* GCS: with `--no_auth` or ROUGE_PIPELINE_GCS_ANONYMOUS=1 no Google credentials
  are looked up: Beam retries a failing look-up for about 28 s per process before it
  connects anonymously, which an emulator (STORAGE_EMULATOR_HOST) or a public bucket
  needs.  Beam 2.77's `--no_auth` alone affects only Dataflow's API client.

Worker processes: `pipeline.io.files` calls `configure_here()` before its first URL.
A worker of a remote runner has the pipeline's options from Beam (so
`--s3_endpoint_url` travels with the job); the local runner's worker processes get
none (Beam 2.77's FnApiRunner starts them without PIPELINE_OPTIONS), so `configure`
also exports the filesystem options to the processes this one starts
(ROUGE_PIPELINE_STORE_OPTIONS, with ROUGE_PIPELINE_GCS_ANONYMOUS), and
`configure_here` fills in from there what Beam's options leave unset.

Conditional writes (`object_store(url)`): create an object only if absent, replace
or delete it only if unchanged since read: GCS preconditions (ifGenerationMatch,
0 for "absent"), S3 conditional requests (If-None-Match: *, If-Match: ETag).  Any
other filesystem gets a check-then-write fallback (`atomic` False) that two writers
can race.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import threading
from typing import Optional, Sequence

log = logging.getLogger("rouge-pipeline")

ANONYMOUS_ENV = "ROUGE_PIPELINE_GCS_ANONYMOUS"
INHERITED_ENV = "ROUGE_PIPELINE_STORE_OPTIONS"  # the driver's filesystem options, for its worker processes
_TRUE = ("1", "true", "yes", "on")
# Environment variables -> Beam's S3 option, first found wins (never credentials:
# those stay in the environment, read by boto3 in each process).
_S3_FROM_ENV = {
    "--s3_endpoint_url": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "--s3_region_name": ("AWS_REGION", "AWS_DEFAULT_REGION"),
}

_lock = threading.Lock()
_options = None  # the PipelineOptions this process configured (None: not yet)


def _option_classes():
    from apache_beam.options import pipeline_options as po  # noqa: PLC0415 (Beam only for URLs)

    return [po.S3Options, po.GoogleCloudOptions, po.HadoopFileSystemOptions]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    for cls in _option_classes():
        cls._add_argparse_args(parser)  # noqa: SLF001 (how Beam's options classes declare their flags)
    return parser


def filesystem_option_names() -> frozenset[str]:
    """Every flag of Beam's filesystem options (S3, Google Cloud, HDFS)."""
    return frozenset(o for action in _parser()._actions for o in action.option_strings)  # noqa: SLF001


def split_filesystem_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(Beam filesystem options with their values, everything else) of `args`."""
    parser = _parser()
    takes_value = {o: action.nargs != 0 for action in parser._actions for o in action.option_strings}  # noqa: SLF001
    ours, rest = [], []
    args = list(args)
    i = 0
    while i < len(args):
        name = args[i].split("=", 1)[0]
        if name in takes_value:
            width = 2 if takes_value[name] and "=" not in args[i] and i + 1 < len(args) else 1
            ours += args[i : i + width]
            i += width
        else:
            rest.append(args[i])
            i += 1
    return ours, rest


def environment_args(args: Sequence[str]) -> list[str]:
    """The S3 options the environment gives that `args` does not: passed to the
    pipeline, they reach every worker (endpoint and region only, never secrets)."""
    given = {a.split("=", 1)[0] for a in args}
    out = []
    for flag, names in _S3_FROM_ENV.items():
        value = next((os.environ[n] for n in names if os.environ.get(n)), None)
        if value and flag not in given:
            out.append(f"{flag}={value}")
    return out


def configure(args: Sequence[str] = ()) -> list[str]:
    """Apply Beam's filesystem options among `args` (and the environment's) to this
    process's FileSystems, before any file call; returns the options the environment
    added, for a pipeline to carry to its workers."""
    global _options
    from apache_beam.io.filesystems import FileSystems  # noqa: PLC0415
    from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions  # noqa: PLC0415

    store_args, _ = split_filesystem_args(args)
    added = environment_args(store_args)
    options = PipelineOptions(store_args + added)
    with _lock:
        _options = options
        _made.clear()  # clients made with earlier options
        FileSystems.set_options(options)
    os.environ[INHERITED_ENV] = json.dumps(store_args + added)  # (local worker processes inherit it)
    if options.view_as(GoogleCloudOptions).no_auth or _anonymous_from_env():
        os.environ[ANONYMOUS_ENV] = "1"  # local worker processes inherit it
        _skip_google_credentials()
    return added


def configure_here() -> None:
    """In a process that has not called `configure` (a Beam worker, a library
    caller): use the options Beam set (a worker's pipeline options) or, when there
    are none, the environment's; apply the anonymous GCS setting either way."""
    global _options
    if _options is not None:
        return
    from apache_beam.io.filesystems import FileSystems  # noqa: PLC0415
    from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions  # noqa: PLC0415

    try:
        inherited = [str(a) for a in json.loads(os.environ.get(INHERITED_ENV) or "[]")]
    except (ValueError, TypeError):
        inherited = []
    with _lock:
        if _options is not None:
            return
        given = getattr(FileSystems, "_pipeline_options", None)  # set by Beam in a worker
        if given is None:
            given = PipelineOptions(inherited + environment_args(inherited))
            FileSystems.set_options(given)
        else:
            _fill_unset(given, PipelineOptions(inherited + environment_args(inherited)))
        _options = given
    if given.view_as(GoogleCloudOptions).no_auth or _anonymous_from_env():
        _skip_google_credentials()


def _fill_unset(target, source) -> None:
    """Set in `target` (Beam's options in a worker) the filesystem options that
    `source` sets and `target` leaves unset."""
    for cls in _option_classes():
        mine, theirs = target.view_as(cls), source.view_as(cls)
        for name, value in theirs.get_all_options(drop_default=True).items():
            if hasattr(mine, name) and getattr(mine, name) in (None, False) and value not in (None, False):
                setattr(mine, name, value)


def options():
    """This process's filesystem options (configured on first use)."""
    configure_here()
    return _options


def _anonymous_from_env() -> bool:
    return os.environ.get(ANONYMOUS_ENV, "").strip().lower() in _TRUE


def _skip_google_credentials() -> None:
    """Beam looks Google credentials up once per process and caches the answer
    (None: anonymous); a failing look-up is retried for about 28 s.  Here the
    cache is given its anonymous answer at once.  Guarded: on a Beam whose cache is
    not where 2.77 keeps it, a warning says the look-up will run."""
    try:
        from apache_beam.internal.gcp import auth  # noqa: PLC0415
    except ImportError:
        return  # no GCP support installed: nothing to look up
    cache = getattr(auth, "_Credentials", None)
    if cache is None or not all(hasattr(cache, a) for a in ("_credentials_lock", "_credentials_init", "_credentials")):
        log.warning("this Beam version keeps Google credentials elsewhere: %s is ignored and the credential "
                    "look-up runs (about 28 s without credentials)", ANONYMOUS_ENV)
        return
    with cache._credentials_lock:  # noqa: SLF001
        if not cache._credentials_init:  # noqa: SLF001
            cache._credentials, cache._credentials_init = None, True  # noqa: SLF001


# ---------------------------------------------------------------- conditional writes


def split_url(url: str) -> tuple[str, str, str]:
    """(scheme, bucket, key) of `scheme://bucket/key`."""
    scheme, _, rest = url.partition("://")
    bucket, _, key = rest.partition("/")
    return scheme.lower(), bucket, key


class ObjectStore:
    """Small objects written with the store's own preconditions.  A token names one
    version of an object (a GCS generation, an S3 ETag); every method says by its
    result whether the condition held, and raises only on other failures."""

    atomic = True

    def read(self, url: str) -> Optional[tuple[bytes, object]]:
        """(content, token), or None when there is no such object."""
        raise NotImplementedError

    def create(self, url: str, data: bytes) -> Optional[object]:
        """Write `url` only if it does not exist: its token, or None when it exists."""
        raise NotImplementedError

    def replace(self, url: str, data: bytes, token) -> Optional[object]:
        """Write `url` only if it is still the version `token`: the new token, or None."""
        raise NotImplementedError

    def delete(self, url: str, token) -> bool:
        """Delete `url` only if it is still the version `token`."""
        raise NotImplementedError

    def list(self, prefix: str) -> dict[str, int]:
        """{url: size} of every object whose name starts with `prefix` (recursively)."""
        raise NotImplementedError


class _Gcs(ObjectStore):
    def __init__(self):
        from apache_beam.io.gcp import gcsio  # noqa: PLC0415

        self.client = gcsio.create_storage_client(options())
        from google.api_core import exceptions  # noqa: PLC0415

        self.refused = (exceptions.PreconditionFailed, exceptions.NotFound)

    def _blob(self, url: str):
        _, bucket, key = split_url(url)
        return self.client.bucket(bucket).blob(key)

    def read(self, url):
        _, bucket, key = split_url(url)
        blob = self.client.bucket(bucket).get_blob(key)
        if blob is None:
            return None
        generation = blob.generation  # (a download may reset the blob's properties)
        try:
            return blob.download_as_bytes(if_generation_match=generation), generation
        except self.refused:
            return self.read(url)  # replaced or deleted between the two calls

    def _upload(self, url, data, generation):
        blob = self._blob(url)
        try:
            blob.upload_from_string(data, content_type="application/octet-stream", if_generation_match=generation)
        except self.refused:
            return None
        return blob.generation

    def create(self, url, data):
        return self._upload(url, data, 0)

    def replace(self, url, data, token):
        return self._upload(url, data, token)

    def delete(self, url, token):
        try:
            self._blob(url).delete(if_generation_match=token)
        except self.refused:
            return False
        return True

    def list(self, prefix):
        _, bucket, key = split_url(prefix)
        return {f"gs://{bucket}/{b.name}": b.size for b in self.client.list_blobs(bucket, prefix=key)}


class _S3(ObjectStore):
    def __init__(self):
        from apache_beam.io.aws.clients.s3.boto3_client import Client  # noqa: PLC0415

        self.client = Client(options()).client  # boto3, configured as Beam's S3 filesystem is

    @staticmethod
    def _refused(err) -> bool:
        code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
        return code in ("PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "404", "412", "409")

    def read(self, url):
        _, bucket, key = split_url(url)
        try:
            got = self.client.get_object(Bucket=bucket, Key=key)
        except self.client.exceptions.ClientError as err:
            if self._refused(err):
                return None
            raise
        return got["Body"].read(), got["ETag"]

    def _put(self, url, data, **condition):
        _, bucket, key = split_url(url)
        try:
            return self.client.put_object(Bucket=bucket, Key=key, Body=data, **condition)["ETag"]
        except self.client.exceptions.ClientError as err:
            if self._refused(err):
                return None
            raise

    def create(self, url, data):
        return self._put(url, data, IfNoneMatch="*")

    def replace(self, url, data, token):
        return self._put(url, data, IfMatch=token)

    def delete(self, url, token):
        _, bucket, key = split_url(url)
        try:
            self.client.delete_object(Bucket=bucket, Key=key, IfMatch=token)
        except self.client.exceptions.ClientError as err:
            if self._refused(err):
                return False
            if getattr(err, "response", {}).get("Error", {}).get("Code") != "NotImplemented":
                raise
            current = self.read(url)  # a store without conditional deletes: check, then delete
            if current is None or current[1] != token:
                return False
            self.client.delete_object(Bucket=bucket, Key=key)
        return True

    def list(self, prefix):
        _, bucket, key = split_url(prefix)
        found = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=key):
            for item in page.get("Contents", []):
                found[f"s3://{bucket}/{item['Key']}"] = item["Size"]
        return found


class _Unconditional(ObjectStore):
    """Any other Beam filesystem: checks, then writes (two writers can race)."""

    atomic = False

    def __init__(self):
        from apache_beam.io.filesystems import FileSystems  # noqa: PLC0415

        configure_here()
        self.fs = FileSystems

    def read(self, url):
        if not self.fs.exists(url):
            return None
        with self.fs.open(url, compression_type="uncompressed") as fh:
            data = fh.read()
        return data, hashlib.sha256(data).hexdigest()

    def _write(self, url, data):
        with self.fs.create(url) as fh:
            fh.write(data)
        return hashlib.sha256(data).hexdigest()

    def create(self, url, data):
        return None if self.fs.exists(url) else self._write(url, data)

    def replace(self, url, data, token):
        current = self.read(url)
        return self._write(url, data) if current is not None and current[1] == token else None

    def delete(self, url, token):
        current = self.read(url)
        if current is None or current[1] != token:
            return False
        self.fs.delete([url])
        return True

    def list(self, prefix):
        return {m.path: m.size_in_bytes for m in self.fs.match([prefix + "**"])[0].metadata_list}


_STORES = {"gs": _Gcs, "s3": _S3}
_made: dict = {}


def object_store(url: str) -> ObjectStore:
    """The conditional writes of the store `url` lives on (one client per scheme)."""
    scheme = split_url(url)[0]
    with _lock:
        store = _made.get(scheme)
    if store is None:
        store = _STORES.get(scheme, _Unconditional)()
        with _lock:
            _made[scheme] = store
    return store
