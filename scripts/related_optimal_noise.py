"""Precompute certified optimal (ε, δ) noise for the purification chapter (Lin et al.'s Figure 1,
extended).

Equivalent to ``scripts/sweep.py optimal-vs-delta [options]`` (the sweep family
:data:`repro.optimal_vs_delta.FAMILY`): for ε = 1, Δf = 1 and the ℓ1 and ℓ2 losses, one task per δ of a
log grid runs ``dpdro.optimal_noise``; the certified upper and lower bounds go with provenance to
``results/41_optimal_noise_vs_delta.json``. Usage:  python scripts/related_optimal_noise.py  (about 10
minutes on one core).
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main(prog="related_optimal_noise.py", families=["optimal-vs-delta"], description=__doc__))
