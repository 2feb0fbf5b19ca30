"""The nightly benchmark as an Airflow DAG (docs/nightly.md): every night at 02:00,

    run      score tonight's outputs into results/<date>, reusing last night's folder
             (rows and systems that did not change are not scored again)
    compare  tonight against last night: exit 1 on a significant drop (the task fails)
    history  every night so far: history.csv and report.html in results/history/<date>

Copy it into Airflow's dags/ folder and set the three paths below (or the Airflow
Variables of the same names).  The commands are built by `nightly_commands`, which
needs no Airflow (tests/pipeline/test_nightly.py parses them with rouge-pipeline's
own command line).
"""

from __future__ import annotations

import shlex

RESULTS = "/results/rouge"  # one folder per night: RESULTS/2026-11-28, ...
INPUTS = "/data/nightly/{date}/*.parquet"  # tonight's outputs of every system
CONFIG = "/opt/rouge/configs/nightly.toml"
FAIL_ON_DROP = 0.5  # points


def nightly_commands(date: str, previous: str, results: str = RESULTS, inputs: str = INPUTS,
                     config: str = CONFIG) -> dict[str, str]:
    """{task: shell command} of the night `date` (YYYY-MM-DD), `previous` the night
    before (its folder reused and compared with)."""
    tonight, last = f"{results}/{date}", f"{results}/{previous}"
    return {
        "run": shlex.join(["rouge-pipeline", "run", "--config", config, "--input", inputs.format(date=date),
                           "--output", tonight, "--reuse", last]),
        "compare": shlex.join(["rouge-pipeline", "compare", last, tonight, "--fail-on-drop", str(FAIL_ON_DROP),
                               "--output", f"{results}/compare/{date}"]),
        # every night's folder, oldest first (the shell expands the glob; --by-start orders them)
        "history": shlex.join(["rouge-pipeline", "history", "--by-start", "--output", f"{results}/history/{date}"])
        + f" {shlex.quote(results)}/20??-??-??",
    }


try:
    from airflow import DAG
    from airflow.operators.bash import BashOperator
except ImportError:  # (no Airflow here: the commands above are still testable)
    DAG = None

if DAG is not None:
    import pendulum

    with DAG(
        dag_id="rouge_nightly",
        schedule="0 2 * * *",
        start_date=pendulum.datetime(2026, 11, 1, tz="UTC"),
        catchup=False,
        max_active_runs=1,  # a night reuses the one before: one at a time
        tags=["rouge"],
    ) as dag:
        tasks = {
            name: BashOperator(task_id=name, bash_command=command)
            for name, command in nightly_commands("{{ ds }}", "{{ macros.ds_add(ds, -1) }}").items()
        }
        tasks["run"] >> tasks["compare"] >> tasks["history"]
