#!/usr/bin/env python3
"""Record a finished paper-scale sweep run of one dataset of Table 2 or 3 as a benchmark: its
wall-clock time (from the run's log), each task's seconds and load, the computer, and its
agreement with the stored run the chapters read (``repro.costs.timed_run_record``).

Run the sweep into a scratch folder first, e.g.
``scripts/sweep.py table3 --datasets adult --jobs 2 --root DIR``; then
``scripts/record_timed_run.py DIR --table 3 --dataset adult``.

Stored run: results/benchmarks/timed_table3_adult.json (read by the full-reproduction page).
"""

import argparse

from repro.costs import timed_run_path, timed_run_record
from repro.provenance import write_json_atomic


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_root", help="the --root folder of the finished sweep run")
    ap.add_argument("--table", type=int, choices=(2, 3), default=3)
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--out", help="JSON file to write (default "
                    "results/benchmarks/timed_tableT_DATASET.json)")
    args = ap.parse_args(argv)
    out = args.out or timed_run_path(args.table, args.dataset)
    write_json_atomic(out, timed_run_record(args.run_root, args.table, args.dataset))


if __name__ == "__main__":
    main()
