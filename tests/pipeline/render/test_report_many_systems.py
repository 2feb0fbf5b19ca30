"""report.html of a run with many systems (issue 18): each significance matrix shows
the best MATRIX_SYSTEMS systems of its metric (the whole S x S matrix was 127 MB of
HTML, 66 s and 2 GB at 300 systems, and would be gigabytes at 1,000), its heading
counts every pair of the table, and the chart shows the best CHART_SYSTEMS."""

import itertools
import random

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.tables import SIGNIFICANCE_COLUMNS, SYSTEM_COLUMNS, arrow_schema, parquet_bytes
from pipeline.render.html import CHART_SYSTEMS, MATRIX_SYSTEMS, REPORT_NAME, write_run_report
from tests.pipeline.render.test_report import Page, cells

SYSTEMS = 40


def write_folder(folder, metrics=("ROUGE-1", "ROUGE-2")):
    """system_scores.parquet and significance.parquet of SYSTEMS systems: system k's F
    is a random draw (so the best-first order is not the name order); every pair, all
    three measures, a random adjusted p."""
    rng = random.Random(3)
    f = {(m, f"sys{k:02d}"): rng.uniform(0.2, 0.5) for m in metrics for k in range(SYSTEMS)}
    system_rows = [
        {"profile": "default", "system": s, "metric": m, "documents": 40, "f_measure": v, "rouge155_f_measure": v}
        for (m, s), v in f.items()
    ]
    (folder / "system_scores.parquet").write_bytes(parquet_bytes(system_rows, SYSTEM_COLUMNS))
    pairs = []
    for m, measure in itertools.product(metrics, ("recall", "precision", "f_measure")):
        for a, b in itertools.combinations(sorted({s for _, s in f}), 2):
            pairs.append(
                {"profile": "default", "metric": m, "measure": measure, "system_a": a, "system_b": b,
                 "documents": 40, "difference": f[m, a] - f[m, b], "p_adjusted": rng.choice([1e-4, 0.02, 0.3, 1.0]),
                 "method": "t"}  # fmt: skip
            )
    pq.write_table(pa.Table.from_pylist(pairs, schema=arrow_schema(SIGNIFICANCE_COLUMNS)), folder / "significance.parquet")
    return f, pairs


def test_the_matrices_show_the_best_systems_and_count_every_pair(tmp_path):
    f, pairs = write_folder(tmp_path)
    write_run_report(str(tmp_path), {"counts": {}})
    page = Page((tmp_path / REPORT_NAME).read_text())
    assert MATRIX_SYSTEMS < SYSTEMS <= CHART_SYSTEMS
    for metric in ("ROUGE-1", "ROUGE-2"):
        best = sorted((s for m, s in f if m == metric), key=lambda s: -f[metric, s])[:MATRIX_SYSTEMS]
        family = [p for p in pairs if p["metric"] == metric and p["measure"] == "f_measure"]
        significant = sum(p["p_adjusted"] < 0.05 for p in family)
        assert len(family) == SYSTEMS * (SYSTEMS - 1) // 2
        matrix = page.table_after(f"{metric} \u00b7 F-measure ({significant} of {len(family)} pairs significant)")
        assert cells(matrix[0]) == [""] + [str(i) for i in range(1, MATRIX_SYSTEMS + 1)]
        names = [cells(row)[0].split(". ", 1)[1] for row in matrix[1:]]
        assert names == best
        by_pair = {(p["system_a"], p["system_b"]): p for p in family}
        for i, j in itertools.permutations(range(MATRIX_SYSTEMS), 2):
            a, b = names[i], names[j]
            pair = by_pair.get((a, b)) or by_pair[b, a]
            sign = 1 if (a, b) in by_pair else -1
            assert matrix[1 + i][1 + j][0].startswith("%+.2f" % (100 * sign * pair["difference"]))
    html = (tmp_path / REPORT_NAME).read_text()
    note = f"The {MATRIX_SYSTEMS} best of {SYSTEMS} systems by this metric; every pair is in significance.parquet"
    assert html.count(note) == 6  # 2 metrics x 3 measures
    assert "The chart shows the" not in html  # 40 systems: the chart has them all


def test_few_systems_show_the_whole_matrix(tmp_path, monkeypatch):
    import pipeline.render.html as report

    monkeypatch.setattr(report, "MATRIX_SYSTEMS", SYSTEMS)
    monkeypatch.setattr(report, "CHART_SYSTEMS", 10)
    write_folder(tmp_path, metrics=("ROUGE-1",))
    write_run_report(str(tmp_path), {"counts": {}})
    html = (tmp_path / REPORT_NAME).read_text()
    page = Page(html)
    matrix = next(t["rows"] for t in page.tables if t["after"].startswith("ROUGE-1 \u00b7 F-measure"))
    assert len(matrix) == 1 + SYSTEMS
    assert "best of" not in html.split("id=\"significance\"")[1].split("</table>")[0]
    assert f"The chart shows the 10 best of {SYSTEMS} systems per metric; the table lists all." in html
