"""Counterexample: the paper's D(π, β) on a non-uniform partition is not a valid lower bound, and
dpdro's cell-union relaxation, which replaces it, is.

Instance: ε = 5, δ = 0.01, Δf = 1, ℓ1, on the adaptive 643-cell partition stored in
``results/counterexamples/nonuniform_partition.json`` (the partition on which this was found, produced
by dpdro's old non-uniform lower-bound track; shifts restricted to multiples of 64β as there). This
thin command line over :func:`repro.counterexamples.check`

1. solves the paper's D(π, β) (segment events, each wide cell's mass spread uniformly over the cell)
   and a certified upper bound (uniform β = 1/64): D(π, β) exceeds the loss of a private noise;
2. aggregates that private noise into the cells of π and shows that it violates the paper's
   constraints at φ = Δf but satisfies dpdro's cell-union constraints (every decision cell met by the
   shifted union is charged in full);
3. solves dpdro's valid lower bound on the same partition: it lies below the certified upper bound.

Why the paper's version fails: the dual constraint of the infinite problem must hold at every point
x; D(π, β) imposes it only on average over each cell Π_j (its coefficients are |A ∩ Π_j|/|Π_j|). On
uniform cells of width β with shifts on the β-grid nothing is lost (the paper's D(L, β), which dpdro
keeps); on wider cells the averaged constraint is weaker than the pointwise one.

Run: ``python scripts/check_nonuniform_lower_bound.py`` (a few minutes).
"""

from __future__ import annotations

import argparse

from repro import counterexamples


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    counterexamples.check()


if __name__ == "__main__":
    main()
