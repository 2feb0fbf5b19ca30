"""pyrouge's folder layout: one file per document, system summaries in one folder
and model (reference) summaries in another, matched by filename patterns.

As pyrouge's `Rouge155` (system_dir, model_dir, system_filename_pattern,
model_filename_pattern) reads them:

* the system pattern is a regular expression with one group, the document ID,
  matched from the start of each file name in the system folder (`re.match`),
  e.g. `text.(\\d+).txt`; files that do not match are not summaries;
* the model pattern is a regular expression in which `#ID#` stands for that ID,
  e.g. `text.[A-Z].#ID#.txt`; every model file it matches (from the start of the
  name) is a reference of that document, in sorted file-name order (pyrouge's
  model IDs A, B, C ...);
* each line of a file is one sentence (pyrouge's SEE format has one sentence per
  line); blank lines are left out.

The documents come out as joined-form rows (`SourceRow`), in sorted system
file-name order, as pyrouge numbers its evaluations; a document without a model
file is an error row that names the pattern.
"""

from __future__ import annotations

import os

from pipeline.config import InputConfig
from pipeline.io.patterns import bounded, compile_pattern
from pipeline.io.rows import row_error
from pipeline.records import SourceRow
from rouge_core import RougeInputError

ID = "#ID#"


def check_patterns(system_pattern: str, model_pattern: str) -> tuple:
    """The compiled system pattern and the model pattern, or a usage error saying what
    is wrong.  Both run with a time bound (pipeline.io.patterns)."""
    system = compile_pattern(system_pattern, "--system-pattern")
    if system.groups != 1:
        raise RougeInputError(
            f"--system-pattern {system_pattern!r} must have exactly one group, the document ID, "
            r"e.g. 'text.(\d+).txt'"
        )
    if ID not in model_pattern:
        raise RougeInputError(f"--model-pattern {model_pattern!r} must contain {ID}, e.g. 'text.[A-Z].#ID#.txt'")
    compile_pattern(model_pattern.replace(ID, "x"), "--model-pattern")
    return system, model_pattern


def _sentences(path: str) -> list[str]:
    with open(path, encoding="utf-8", errors="strict") as fh:
        return [line.rstrip("\r\n") for line in fh if line.strip()]


def pyrouge_rows(system_dir: str, model_dir: str, system_pattern: str, model_pattern: str, system: str,
                 config: InputConfig):
    """Joined-form rows, one per system file that matches `system_pattern`."""
    pattern, model_pattern = check_patterns(system_pattern, model_pattern)
    for folder, option in ((system_dir, "--system-dir"), (model_dir, "--model-dir")):
        if not os.path.isdir(folder):
            raise RougeInputError(f"{option} {folder}: no such folder")
    models = sorted(os.listdir(model_dir))
    matched = [(name, bounded("match", pattern, name, "--system-pattern")) for name in sorted(os.listdir(system_dir))]
    matched = [(name, m.group(1)) for name, m in matched if m]
    if not matched:
        raise RougeInputError(f"no file in {system_dir} matches --system-pattern {pattern.pattern!r}")
    for position, (name, doc_id) in enumerate(matched, 1):
        source = os.path.join(system_dir, name)
        model = compile_pattern(model_pattern.replace(ID, doc_id), "--model-pattern")
        references = [m for m in models if bounded("match", model, m, "--model-pattern")]
        if not references:
            yield row_error(source, position, "no_references",
                            f"no file in {model_dir} matches --model-pattern {model_pattern!r} for ID {doc_id!r}",
                            system=system, doc_id=doc_id)
            continue
        try:
            candidate = _sentences(source)
            texts = [_sentences(os.path.join(model_dir, m)) for m in references]
        except UnicodeDecodeError as err:
            yield row_error(source, position, "undecodable", f"not valid UTF-8: {err}", system=system, doc_id=doc_id)
            continue
        except OSError as err:
            yield row_error(source, position, "unreadable_file", f"cannot read: {err}", system=system, doc_id=doc_id)
            continue
        yield SourceRow(source, position, {
            config.system_field: system,
            config.doc_id_field: doc_id,
            config.candidate_field: candidate,
            config.references_field: texts,
        })
