"""Figure 3 (data-dependent half): P′(π, β) and D′(π, β) on the paper's instances, stored with provenance.

Equivalent to ``scripts/sweep.py figure3-dd [options]`` (the sweep family
:data:`repro.figure3.FAMILY_DD`): Δf = 2, Φ = [0, 4), ℓ1 loss, uniform weight, (ε, δ) ∈ {(5, 0.25),
(1, 0.2), (0.2, 0.05)}, noise support [−A, A + β), fine pieces of width β on the path β = 1, …, 1/32.
One task per (regime, β) within its own wall-clock cap ``--cap`` (shared by P′ and D′); the merged
``results/figure3_data_dependent.json`` ends each regime's path at its first capped instance and
reports the "time to a gap" along it (the paper's protocol, Section 5.1).

Usage: ``nice -n 10 python scripts/figure3_data_dependent.py --cap 560 --jobs 1``
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="figure3_data_dependent.py", families=["figure3-dd"], description=__doc__))
