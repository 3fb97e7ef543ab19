"""Benchmark the data-independent solver on the paper's three privacy regimes (Section 5.1).

For (ε, δ) ∈ {(5, 0.25), (1, 0.2), (0.2, 0.05)}, Δf = 1 and the ℓ1 and ℓ2 losses it prints

* the certified upper and lower bounds and their relative gap reached by ``optimal_noise`` with a
  1% target, and the wall-clock time it took (the paper's C++/Gurobi code: "all solved within 2.2
  secs" for its Figure 3 instances, which use uniform grids with β ≥ Δf/32 and no gap target);
* on the upper-bound partition that ``optimal_noise`` ended with, the time of Algorithm 1 with
  single-event cuts (the paper's algorithm) and of dpdro's default whole-shift cuts, and their ratio
  measured in the same run.

A thin command line over :func:`repro.timing.data_independent_report`. Timings depend on the machine
and its load: compare ratios, not seconds. Run with
``python scripts/benchmark_data_independent.py`` (add ``--help`` for options).
"""

from __future__ import annotations

import argparse

from repro import timing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rel-gap", type=float, default=0.01, help="target relative gap (default 0.01)")
    ap.add_argument("--time-limit", type=float, default=180.0, help="seconds per optimal_noise run before giving up")
    ap.add_argument("--event-time-limit", type=float, default=300.0, help="seconds allowed to single-event cuts")
    ap.add_argument("--losses", default="l1,l2")
    args = ap.parse_args(argv)
    timing.data_independent_report(rel_gap=args.rel_gap, time_limit=args.time_limit,
                                   event_time_limit=args.event_time_limit, losses=args.losses.split(","))


if __name__ == "__main__":
    main()
