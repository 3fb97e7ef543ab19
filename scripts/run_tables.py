"""Paper-scale results for Tables 1, 4, 5 and 6 of Selvi, Liu and Wiesemann (Section 5.1, Appendix D).

Equivalent to ``scripts/sweep.py tables [options]`` (the sweep family :data:`repro.tables.FAMILY`): for
every cell of the paper's 10 × 10 grid of ε and δ (Δf = 1) and the ℓ1 and ℓ2 losses, one task runs
``dpdro.optimal_noise(problem, rel_gap=0.001, time_limit=120)`` (no other option) and stores ``results/tables/cells/<loss>_eps=<ε>_delta=<δ>.json`` with
the certified upper bound P, the valid lower bound D, the gap reached (cells that run out of time are
kept with the gap they reached), the exact δ of the released noise (``dpdro.certify_delta``), the noise
itself, the literature values the tables compare with, and provenance; Example 1's optimal ℓ2 noise
goes to ``results/tables/example1_optimal.json`` (``--no-example1`` skips it). A cell already stored
with the same settings is skipped; tasks run on joblib (all cores; ``--jobs N``) or Dask (``--dask``,
``--scheduler ADDRESS``). Usage::

    nice -n 10 .venv/bin/python scripts/run_tables.py --dry-run
    nice -n 10 .venv/bin/python scripts/run_tables.py --jobs 2
    nice -n 10 .venv/bin/python scripts/run_tables.py --eps 5 --losses l1 --time-limit 300
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="run_tables.py", families=["tables"], description=__doc__))
