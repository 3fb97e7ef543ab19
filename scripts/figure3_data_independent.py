#!/usr/bin/env python3
"""Figure 3 of Selvi, Liu and Wiesemann (Section 5.1), data-independent half, at the paper's scale.

Equivalent to ``scripts/sweep.py figure3-di [options]`` (the sweep family
:data:`repro.figure3.FAMILY_DI`): Δf = 2, ℓ1 loss, (ε, δ) ∈ {(5, 0.25), (1, 0.2), (0.2, 0.05)}, support
[−S, S] with S the truncated Laplace half-width rounded up, β ∈ {1, 1/2, …, 1/32}; one task per
(regime, β) computes the certified upper bound P(π, β) (with its released noise), the valid lower
bound D(π, β) and the wall-clock seconds of each solve (median over ``--repeats`` runs). Writes
``results/figure3_data_independent.json``. Timings are ours: run it with ``--jobs 1`` on a quiet
machine when the seconds matter.

    nice -n 10 .venv/bin/python scripts/figure3_data_independent.py --jobs 1        # paper scale
    .venv/bin/python scripts/figure3_data_independent.py --max-k 4 --root /tmp/f3   # quick check
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="figure3_data_independent.py", families=["figure3-di"], description=__doc__))
