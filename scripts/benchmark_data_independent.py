"""Benchmark the data-independent engine: ``dpdro.optimal_noise(problem, rel_gap=target)`` and nothing
else, on every cell of Tables 1/6 (10 ε × 10 δ, ℓ1 and ℓ2, Δf = 1), at the targets 1% and 0.1%.

Prints a per-instance table (bounds, gap reached, seconds, the grids used), a summary per target
(cells that reached it, median and maximum seconds, the whole table's wall time on ``--jobs``
processes, peak memory per process) and the time ratio against a monolithic lifted LP on
(ε, δ) = (1, 0.2), ℓ1, β = 0.02, all measured in this one run. A thin command line over
:func:`repro.timing.engine_report`. Timings depend on the machine and its load: run it on an
otherwise idle machine. ``--quick`` runs one δ column per ε (20 cells per target).
"""

from __future__ import annotations

import argparse

from repro import timing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default="0.01,0.001", help="comma-separated gap targets (default 0.01,0.001)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per optimal_noise call (default 120)")
    ap.add_argument("--losses", default="l1,l2")
    ap.add_argument("--quick", action="store_true", help="only δ = 0.1 (20 cells per target)")
    ap.add_argument("--out", help="also write the results (JSON with provenance) here")
    args = ap.parse_args(argv)
    timing.engine_report(targets=[float(t) for t in args.targets.split(",")], losses=args.losses.split(","),
                         deltas=[0.1] if args.quick else None, jobs=args.jobs, time_limit=args.time_limit,
                         out=args.out)


if __name__ == "__main__":
    main()
