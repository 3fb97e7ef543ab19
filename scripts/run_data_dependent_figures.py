"""Figure 5 of the paper (Section 5.1): data-dependent noise for Φ = [0, 18) cut into 9 pieces of
length 2, Δf = 10, β = 0.5, ℓ1 loss, over the (ε, δ) panels of notebooks/24_figures4_5.ipynb
(ε ∈ {0.5, 1, 2, 5} × δ ∈ {0.05, 0.2, 0.5}, Table 1's grid; the paper's own panels are not in our text).

A thin command line over :mod:`repro.figure5`. For every panel: P′(π, β) with the grouping of
Algorithm G.1 (`dpdro.data_dependent.upper_bound`, uniform weight on Φ) on the noise support
[−A′, A′ + β), A′ = ⌈A⌉ (A the truncated Laplace half-width), its released certified mechanism (stored
via `dpdro.data_dependent.Mechanism.to_dict()`), the per-piece expected losses, and the data-independent
P(π, β) on the same partition.

Writes results/data_dependent/figure5.json after every panel (so an interrupted run keeps what it has),
with provenance. Usage:
    nice -n 10 .venv/bin/python scripts/run_data_dependent_figures.py [--panels 1:0.2,...]   # upper bounds (~6 min)
    nice -n 10 .venv/bin/python scripts/run_data_dependent_figures.py --lower                # then grouped D' (~2 min)
The second call adds `lower_grouped` (dpdro.data_dependent.lower_bound(..., grouped=True): a lower bound on the
best family constant on the 9 pieces with the same support) to the stored panels.
"""

from __future__ import annotations

import argparse

from repro import figure5


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--panels", default="", help="comma-separated eps:delta (default: all twelve)")
    ap.add_argument("--lower", action="store_true",
                    help="add the grouped lower bound D'(pi, beta) (best mechanism constant on the 9 pieces) "
                         "to the panels already stored")
    args = ap.parse_args(argv)
    todo = [tuple(float(v) for v in s.split(":")) for s in args.panels.split(",") if s] or figure5.ORDER
    if args.lower:
        figure5.add_grouped_lower_bounds(todo, "run_data_dependent_figures.py --lower")
    else:
        figure5.run_panels(todo, "run_data_dependent_figures.py" + (f" --panels {args.panels}" if args.panels else ""))


if __name__ == "__main__":
    main()
