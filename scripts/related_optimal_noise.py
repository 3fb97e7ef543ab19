"""Precompute certified optimal (ε, δ) noise for chapter 41 (Figure 1 of Lin et al., extended).

A thin command line over :func:`repro.optimal_vs_delta.compute`: for ε = 1, Δf = 1 and the ℓ1 and ℓ2
losses, runs ``dpdro.optimal_noise`` on a log grid of δ and stores the certified upper and lower bounds
with provenance in ``results/41_optimal_noise_vs_delta.json``. The notebook loads the file and
recomputes one point live. Usage:  python scripts/related_optimal_noise.py  (about 10 minutes on one core).
"""

from __future__ import annotations

import argparse

from repro import optimal_vs_delta
from repro.paths import relative


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    optimal_vs_delta.compute()
    print("wrote", relative(optimal_vs_delta.OUT))


if __name__ == "__main__":
    main()
