"""Figure 5 of the paper (Section 5.1): data-dependent noise for Φ = [0, 18) cut into 9 pieces of
length 2, Δf = 10, β = 0.5, ℓ1 loss, over the paper's (ε, δ) panels.

Equivalent to ``scripts/sweep.py figure5 [options]`` (the sweep family :data:`repro.figure5.FAMILY`):
one task per panel computes P′(π, β) with its released certified mechanism, the per-piece expected
losses, the data-independent P(π, β) on the same partition and the grouped lower bound D′(π, β); the
panels are assembled into ``results/data_dependent/figure5.json`` with provenance. Usage::

    nice -n 10 .venv/bin/python scripts/run_data_dependent_figures.py [--panels 1:0.2,...]   # about 8 minutes
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="run_data_dependent_figures.py", families=["figure5"], description=__doc__))
