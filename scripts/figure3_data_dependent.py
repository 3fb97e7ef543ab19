"""Figure 3 (data-dependent half): the default call's valid bracket and the paper's P′(π, β) with its
lower curve P′ − β/2, stored with provenance.

Equivalent to ``scripts/sweep.py figure3-dd [options]`` (the sweep family
:data:`repro.figure3.FAMILY_DD`): Δf = 2, Φ = [0, 4), ℓ1 loss, uniform weight, (ε, δ) ∈ {(5, 0.25),
(1, 0.2), (0.2, 0.05)}, fine pieces of width β on the path β = 1, 1/2, 1/4, 1/8 (``--max-k``). One task
per (regime, β), each solve within its own wall-clock cap ``--cap``; resumable (finished tasks are
skipped). The merged ``results/figure3_data_dependent.json`` ends each regime's path at its first
capped step and reports the "time to a gap" along it (the paper's protocol, Section 5.1).

Usage: ``nice -n 10 python scripts/figure3_data_dependent.py --cap 150 --jobs 1``
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="figure3_data_dependent.py", families=["figure3-dd"], description=__doc__))
