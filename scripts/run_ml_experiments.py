"""Tables 2 and 3 of Selvi, Liu and Wiesemann (Sections 5.2 and 5.3): DP naïve Bayes and DP proximal
coordinate descent on the UCI datasets in data/, at a chosen scale, stored with provenance in
``results/ml/table{2,3}_{variant}_{splits}x{sims}.json``.

Equivalent to ``scripts/sweep.py table2 table3 [options]`` (the sweep families of
:mod:`repro.ml_tables`: one task per dataset × chunk of ``--chunk`` splits); ``--table 2`` or ``--table 3``
selects one. Without ``--splits``/``--sims`` the scale is 4 × 40, or the paper's 100 × 1000 with
``DPDRO_FULL=1``. Usage (CPU is shared: niced)::

    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2 --splits 20 --sims 200
    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 3 --splits 10 --sims 20 --skip adult,spambase
    DPDRO_FULL=1 nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2   # paper: 100 x 1000
"""

import os
import sys

from repro.sweep import main


def translate(argv: list[str], full: bool) -> tuple[list[str], list[str]]:
    """``--table {2,3,all}`` to family names; the 4 × 40 default scale unless ``DPDRO_FULL=1``."""
    argv = list(argv)
    table = "all"
    for i, a in enumerate(argv):
        if a == "--table" and i + 1 < len(argv):
            table = argv[i + 1]
            del argv[i:i + 2]
            break
        if a.startswith("--table="):
            table = a.split("=", 1)[1]
            del argv[i]
            break
    if table not in ("2", "3", "all"):
        print(f"run_ml_experiments.py: error: --table must be 2, 3 or all, got {table!r}", file=sys.stderr)
        sys.exit(2)
    if not full:
        if not any(a.startswith("--splits") for a in argv):
            argv += ["--splits", "4"]
        if not any(a.startswith("--sims") for a in argv):
            argv += ["--sims", "40"]
    return ["table2", "table3"] if table == "all" else [f"table{table}"], argv


if __name__ == "__main__":
    families, argv = translate(sys.argv[1:], os.environ.get("DPDRO_FULL") == "1")
    sys.exit(main(argv, prog="run_ml_experiments.py [--table {2,3,all}]", families=families, description=__doc__))
