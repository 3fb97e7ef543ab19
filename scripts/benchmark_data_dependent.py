"""Benchmark the data-dependent bounds P′(π, β) and D′(π, β) on the paper's Figure 3 instances.

Instances (Section 5.1, Figure 3): Δf = 2, Φ = [0, 4), ℓ1-loss, (ε, δ) ∈ {(5, 0.25), (1, 0.2),
(0.2, 0.05)}, noise support [−A, A + β) with A the truncated Laplace half-width rounded to the nearest
integer (the paper: "we match the support of the truncated Laplace distribution, with the support
bounds rounded to nearest integer values"), and the refinement path β = 1, 1/2, …, 1/32 with
K = |Φ|/β = 4, 8, …, 128 pieces Φ_k(β) (one noise distribution per piece).

Along the path each step solves P′(π, β) (certified released mechanism) and D′(π, β) (dual-feasible
lower bound). **Time to a gap** g is the cumulative wall-clock time (all steps so far, upper and lower
bound) at the first step whose relative gap (P′ − D′)/D′ is ≤ g. The data-independent bounds P(π, β),
D(π, β) on the same grid are printed for comparison (not timed into the totals). Each instance stops
when its cumulative time exceeds ``--time-cap`` seconds (a step still running is cut by the cutting-
plane time limit; an unfinished upper bound is reported as "cap").

Paper values (Section 5.1, text below Figure 3; C++/Gurobi, median over 10 repetitions): "across all
instances, it took up to 5.82 secs (980.44 secs) to reduce the gap between our upper and lower bounds
to 10% (5%)" — maxima over the three instances. Timings depend on the machine and its load.

A thin command line over :func:`repro.timing.data_dependent_path`. Run
``python scripts/benchmark_data_dependent.py --quick`` (β down to 1/8, 120 s cap) or without
``--quick`` for the whole path.
"""

from __future__ import annotations

import argparse

from repro import timing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="β down to 1/8 and a 120 s cap per instance")
    ap.add_argument("--time-cap", type=float, default=None, help="seconds per instance (default 1200, quick 120)")
    ap.add_argument("--regimes", default=None, help="e.g. '5:0.25,1:0.2' (default: the paper's three)")
    ap.add_argument("--out", default=None, help="write the results as JSON to this file")
    args = ap.parse_args(argv)
    betas = [1.0 / 2 ** i for i in range(4 if args.quick else 6)]
    cap = args.time_cap if args.time_cap is not None else (120.0 if args.quick else 1200.0)
    regimes = (timing.REGIMES if args.regimes is None
               else [tuple(float(x) for x in r.split(":")) for r in args.regimes.split(",")])
    timing.data_dependent_report(betas, cap, regimes, out=args.out)


if __name__ == "__main__":
    main()
