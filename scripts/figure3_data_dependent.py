"""Figure 3 (data-dependent half): P′(π, β) and D′(π, β) on the paper's instances, stored with provenance.

A thin command line over :func:`repro.figure3.run_data_dependent`.

Instances (Section 5.1, Figure 3): Δf = 2, Φ = [0, 4), ℓ1-loss, uniform weight, (ε, δ) ∈ {(5, 0.25),
(1, 0.2), (0.2, 0.05)}, noise support [−A, A + β) with A the truncated Laplace half-width rounded to the
nearest integer (as in ``scripts/benchmark_data_dependent.py``), fine pieces Φ_k(β) of width β, so
K = 4/β, on the path β = 1, 1/2, …, 1/32.

Unlike ``benchmark_data_dependent.py`` (which walks each regime's path to the end before the next), this
script solves the instances *cheapest first*: all regimes at β = 1, 1/2, 1/4, then β = 1/8, … . Each
(regime, β) instance gets its own wall-clock cap ``--cap`` (shared by P′ and D′: the upper bound gets the
whole cap as cutting-plane time limit, the lower bound what is left, at least 1 s). A regime stops at
its first capped instance (finer grids are only more expensive). The JSON is rewritten after every
instance, so a run cut short still leaves valid partial results. The data-independent P(π, β), D(π, β)
on the same grids are stored alongside (not timed into the totals).

"Time to a gap g" for a regime is the cumulative time of all its steps along the path up to the first
step with (P′ − D′)/D′ ≤ g (the paper's protocol, Section 5.1: "it took up to 5.82 secs (980.44 secs)
to reduce the gap between our upper and lower bounds to 10% (5%)"; C++/Gurobi, median of 10 runs).

Usage: ``nice -n 10 python scripts/figure3_data_dependent.py --cap 560 --out results/figure3_data_dependent.json``
"""

from __future__ import annotations

import argparse

from repro import figure3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", type=float, default=560.0, help="wall-clock seconds per (regime, β) instance")
    ap.add_argument("--max-k", type=int, default=32, help="finest β = 1/max_k")
    ap.add_argument("--deadline", default=None, help="UTC wall-clock time HH:MM after which no instance runs; "
                    "each instance's cap is shortened to end by then")
    ap.add_argument("--out", default=str(figure3.DATA_DEPENDENT))
    args = ap.parse_args(argv)
    figure3.run_data_dependent(cap=args.cap, max_k=args.max_k, deadline=args.deadline, out=args.out)


if __name__ == "__main__":
    main()
