"""Which fields an input file's rows hold, and the field mapping that would read
them: for the one line that replaces a "missing field" error repeated for every
row of a file whose columns are named otherwise (`model`, `id`, `prediction`,
`reference`): what was expected, what the file has, and the `--fields` (and
`--integer-ids`) that read it."""

from __future__ import annotations

import gzip
import json
from typing import Optional

from pipeline.config import InputConfig
from pipeline.io import files
from pipeline.io.rows import read_lines

# The keys of --fields (input.<key>_field), in the order a row is read.
FIELD_KEYS = ("system", "doc_id", "candidate", "references", "reference")

# Column names other tools and datasets use for each key (compared in lower case).
_USUAL_NAMES = {
    "system": ("model", "system_name", "model_name", "system_id", "sys", "method", "name"),
    "doc_id": ("id", "document_id", "docid", "example_id", "article_id", "idx", "uid", "index"),
    "candidate": ("prediction", "predictions", "pred", "summary", "hypothesis", "hyp", "output", "generated",
                  "generation", "decoded", "system_summary", "candidate_summary"),
    "references": ("refs", "targets", "gold_summaries", "reference_summaries", "summaries"),
    "reference": ("ref", "target", "gold", "label", "highlights", "abstract", "reference_summary",
                  "gold_summary", "references"),
}
_MAX_SHOWN = 20  # fields listed at most


def first_row(path: str, config: InputConfig) -> Optional[dict]:
    """The first row of a JSON Lines file (an object), or a Parquet file's first
    row's columns (as None values); None when there is none or it cannot be read."""
    try:
        with files.open_read(path) as raw:
            if path.lower().endswith(".parquet"):
                import pyarrow.parquet as pq  # noqa: PLC0415  (not loaded for JSON Lines)

                return dict.fromkeys(pq.ParquetFile(raw).schema_arrow.names)
            head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
            fh = gzip.GzipFile(fileobj=raw) if path.lower().endswith(".gz") or head == b"\x1f\x8b" else raw
            for line in read_lines(fh, config.max_line_bytes):
                if line and not line.isspace():
                    row = json.loads(line)
                    return row if isinstance(row, dict) else None
    except Exception:  # noqa: BLE001  (a hint is best effort: the errors table says what is wrong)
        return None
    return None


def mapping_hint(path: str, config: InputConfig) -> Optional[str]:
    """One line: the fields `path`'s rows hold, those expected, and the options that
    map them (None when the file's first row cannot be read)."""
    row = first_row(path, config)
    if row is None:
        return None
    names = list(row)
    shown = ", ".join(names[:_MAX_SHOWN]) + (f" and {len(names) - _MAX_SHOWN} more" if len(names) > _MAX_SHOWN else "")
    expected = (f"{config.system_field}, {config.doc_id_field}, {config.candidate_field} and "
                f"{config.references_field} (a list) or {config.reference_field} (one text)")
    mapping, integers = guess_mapping(row, config)
    if mapping:
        fix = "read it with --fields " + ",".join(f"{k}={v}" for k, v in mapping.items())
        fix += f" --integer-ids {','.join(integers)}" if integers else ""
    else:
        fix = "name its columns with --fields system=COLUMN,doc_id=COLUMN,candidate=COLUMN,references=COLUMN"
    return (f"{path}: its rows hold {shown or 'no field'}; expected {expected}: {fix} "
            "(input.<key>_field in a config)")


def guess_mapping(row: dict, config: InputConfig) -> tuple[dict, list]:
    """{key: column} for the keys whose configured column the row lacks, where one of
    the row's columns has a usual name for it (`references` or `reference` as the
    column holds a list or one text), and the id keys whose column holds integers."""
    lower = {name.lower(): name for name in row}
    mapping: dict = {}
    for key in FIELD_KEYS[:3]:
        if getattr(config, f"{key}_field") not in row:
            found = next((lower[n] for n in _USUAL_NAMES[key] if n in lower), None)
            if found is not None:
                mapping[key] = found
    if config.references_field not in row and config.reference_field not in row:
        found = next((lower[n] for n in _USUAL_NAMES["references"] + _USUAL_NAMES["reference"] if n in lower), None)
        if found is not None:
            mapping["references" if isinstance(row[found], list) else "reference"] = found
    integers = [key for key in ("system", "doc_id")
                if type(row.get(mapping.get(key, getattr(config, f"{key}_field")))) is int]
    return mapping, integers
