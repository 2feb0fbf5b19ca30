"""The layout's rules (docs/architecture.md), read from the code's own imports:
no import circle, no private names across modules, Beam only in pipeline/beam,
and the light commands (`--help`, `score` on JSONL and text) load neither Beam nor
pyarrow."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("rouge_core", "pipeline")
# Optional heavy dependencies that may be imported inside a function (only the
# code path that needs them pays for them).
RUNNER_SUPPORT = "pipeline.beam.runners"
# (regex: user patterns only, pipeline.io.patterns; `score` starts without it)
# (google: the GCS client's errors, for gs:// URLs only, pipeline.io.stores)
OPTIONAL = ("pyarrow", "apache_beam", "matplotlib", "markupsafe", "jinja2", "tqdm", "nltk", "scipy", "dask", "distributed",
            "regex", "google")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not MODULES[module].name == "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str):
    """(imported module, names, at module level?) for every import statement."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], id(node) in top
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            names = [a.name for a in node.names]
            # `from package import module` imports that module
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            yield target, [n for n in names if f"{target}.{n}" not in MODULES], id(node) in top
            for sub in subs:
                yield sub, [], id(node) in top


def _project(name: str) -> str | None:
    """The project module an import names (its nearest enclosing module)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _graph() -> dict[str, set[str]]:
    graph = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _, _ in _imports(module):
            dep = _project(target)
            if dep and dep != module and not module.startswith(dep + "."):  # a package's own __init__
                graph[module].add(dep)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle():
    assert _cycles(_graph()) == []


def test_no_module_imports_another_modules_private_name():
    bad = []
    for module in MODULES:
        for target, names, _ in _imports(module):
            if _project(target) and _project(target) != module:
                bad += [f"{module}: {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    # a compiled extension (rouge_core/_kernel.c) is private to its wrapper module
    bad = [b for b in bad if not (ROOT / b.split(": ")[1].replace(".", "/")).with_suffix(".c").exists()]
    assert bad == []


def test_function_level_imports_are_only_optional_dependencies():
    bad = []
    for module in MODULES:
        if not module.startswith("pipeline"):
            continue
        for target, _, top in _imports(module):
            if not top and (_project(target) or not target.startswith(OPTIONAL)):
                bad.append(f"{module}: {target}")
    assert bad == []


def test_beam_is_imported_at_module_level_only_by_the_beam_package():
    bad = []
    for module in MODULES:
        for target, _, top in _imports(module):
            if target.split(".")[0] == "apache_beam" and top and not module.startswith("pipeline.beam"):
                bad.append(module)
            if target.split(".")[0] in ("apache_beam", "pyarrow", "pipeline") and module.startswith("rouge_core"):
                bad.append(module)
    assert bad == []


def test_beams_private_names_are_imported_only_by_the_runner_support():
    """Beam's internals are used only in pipeline/beam/runners/, where each use is
    declared and checked against the installed Beam (pipeline/beam/runners/patches.py)."""
    bad = []
    for module in MODULES:
        for target, names, _ in _imports(module):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if target.split(".")[0] == "apache_beam" and private and not module.startswith(RUNNER_SUPPORT):
                bad.append(f"{module}: {target}.{private[0]}")
    assert bad == []


LOADED = """
import contextlib, io, json, sys
from pipeline import cli
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = cli.main(sys.argv[1:])
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code, "beam": "apache_beam" in sys.modules, "pyarrow": "pyarrow" in sys.modules}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["score", "--help"],
        ["score", "{jsonl}", "--format", "csv"],
        ["score", "--candidates", "{cand}", "--references", "{ref}", "--format", "report"],
    ],
    ids=["help", "score-help", "score-jsonl", "score-text"],
)
def test_light_commands_load_neither_beam_nor_pyarrow(tmp_path, argv):
    (tmp_path / "one.jsonl").write_text(
        json.dumps({"system": "s", "doc_id": "d", "candidate": "A cat sat.", "references": ["The cat sat."]}) + "\n"
    )
    (tmp_path / "c.txt").write_text("A cat sat.\n")
    (tmp_path / "r.txt").write_text("The cat sat.\n")
    args = [a.format(jsonl=tmp_path / "one.jsonl", cand=tmp_path / "c.txt", ref=tmp_path / "r.txt") for a in argv]
    done = subprocess.run([sys.executable, "-c", LOADED, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "beam": False, "pyarrow": False}
