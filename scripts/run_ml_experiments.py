"""Tables 2 and 3 of Selvi, Liu, Wiesemann (Sections 5.2 and 5.3): DP naïve Bayes and DP proximal
coordinate descent on the offline UCI datasets, at a chosen scale, stored with provenance in
``results/ml/table{2,3}_{variant}_{splits}x{sims}.json``.

A thin command line over :func:`repro.ml_tables.run_tables` (its module docstring says what is run
and stored). Usage (CPU is shared: one instance, niced, in the background)::

    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2 --splits 20 --sims 200
    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 3 --splits 10 --sims 20 --skip adult,spambase
    DPDRO_FULL=1 nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2   # paper: 100 x 1000

Datasets already stored are skipped unless ``--force``; a stored dataset without the "(OPT)" column
gets that column added (``--no-add-dd`` to skip; ``--redo-dd`` recomputes it). ``--variant authors``
uses the authors' code settings (``NBSettings.authors()``, Table 2 only).
"""

from __future__ import annotations

import argparse
import os

from repro import ml_tables


def main(argv=None) -> None:
    full = os.environ.get("DPDRO_FULL") == "1"
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--table", choices=["2", "3", "all"], default="all")
    p.add_argument("--splits", type=int, default=100 if full else 4)
    p.add_argument("--sims", type=int, default=1000 if full else 40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variant", choices=["paper", "authors"], default="paper")
    p.add_argument("--datasets", default="", help="comma-separated subset (default: all offline datasets)")
    p.add_argument("--skip", default="", help="comma-separated datasets to skip")
    p.add_argument("--force", action="store_true", help="recompute datasets already stored")
    p.add_argument("--no-add-dd", action="store_true", help="do not add the (OPT) column to stored datasets lacking it")
    p.add_argument("--redo-dd", action="store_true",
                   help="recompute the (OPT) column of stored datasets (e.g. after a design change)")
    ml_tables.run_tables(p.parse_args(argv))


if __name__ == "__main__":
    main()
