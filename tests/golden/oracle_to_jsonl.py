"""Turn ../shared/tools/perl_oracle.py's JSON into a per-summary score table.

    python tests/golden/oracle_to_jsonl.py ORACLE.json OUT.jsonl.gz [--system-colon-to-slash]

One JSON line per (system, doc_id, metric): {"system", "doc_id", "metric",
"recall", "precision", "f_measure"}, the script's `-d` per-summary values,
sorted, gzip without a timestamp so that the bytes are reproducible.
"""

import argparse
import gzip
import json


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("oracle_json")
    parser.add_argument("output")
    parser.add_argument(
        "--system-colon-to-slash",
        action="store_true",
        help="the harness refuses '/' in system ids; names were given with ':' instead",
    )
    args = parser.parse_args()
    with open(args.oracle_json, encoding="utf-8") as fh:
        per_doc = json.load(fh)["per_doc"]
    rows = []
    for system, documents in per_doc.items():
        name = system.replace(":", "/") if args.system_colon_to_slash else system
        for doc_id, metrics in documents.items():
            for metric, s in metrics.items():
                rows.append(
                    {
                        "system": name,
                        "doc_id": doc_id,
                        "metric": metric,
                        "recall": s["R"],
                        "precision": s["P"],
                        "f_measure": s["F"],
                    }
                )
    rows.sort(key=lambda r: (r["system"], r["doc_id"], r["metric"]))
    with open(args.output, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
        for row in rows:
            fh.write((json.dumps(row) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
