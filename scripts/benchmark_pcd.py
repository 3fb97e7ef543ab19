"""Benchmark DP proximal coordinate descent (Section 5.3, Table 3): where the time goes, and the
default implementation against the one before it, measured in one run.

Prints:

1. one iteration on the first dataset's split 0 with the dense kernel before (loaded from the
   repository's history, :data:`repro.experiments.pcd_benchmark.BEFORE_COMMIT`) and with the
   default sparse kernel (``repro.experiments.pcd_train``), split into the margin product, the
   noise table and the kernel, per mechanism;
2. the time per simulation-step (one coordinate update of one simulation: run time / (T·K·S)) of
   the reference (``repro.brute.pcd_train_reference``), the dense kernel (before), the sparse
   kernel (after) and its float64, numpy and (on a GPU) CuPy variants, on split 0, Gaussian
   mechanism, S = 1,000, with the ratios to the dense kernel; CPU time (robust on a shared
   machine) and wall time, median of interleaved rounds;
3. the estimated single-core CPU-hours of Table 3's coordinate descents at the paper's scale
   (100 splits × 1,000 simulations, T = 100, six runs per split) per offline dataset, the wall
   hours on this machine's cores (one process per core, idle), and the first dataset's with the
   dense kernel.

BLAS is pinned to one thread (before numpy is imported), as in the sweep's one-process-per-core
layout. A thin command line over :func:`repro.experiments.pcd_benchmark.pcd_report`; about 10
minutes on an idle 2-core machine. ``--quick`` is a smoke run (S = 50, one round, short runs, two
datasets in part 3).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="adult,breast-cancer",
                    help="parts 1 (the first) and 2 (comma-separated)")
    ap.add_argument("--sims", type=int, default=1000, help="simulations S per run (default 1000)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="interleaved rounds of part 2 (default 3)")
    ap.add_argument("--min-seconds", type=float, default=2.0,
                    help="least duration of a timed run in part 2")
    ap.add_argument("--estimate-T", type=int, default=10, help="iterations of the runs of part 3")
    ap.add_argument("--hour-datasets", default=None,
                    help="part 3 datasets (default: every offline dataset)")
    ap.add_argument("--quick", action="store_true", help="smoke run: S = 50, one round, short runs")
    ap.add_argument("--out", default=None,
                    help="write the results as JSON (with provenance) to this file")
    args = ap.parse_args(argv)
    hour_datasets = args.hour_datasets.split(",") if args.hour_datasets else None
    if args.quick:
        args.sims, args.repeats, args.min_seconds, args.estimate_T = 50, 1, 0.05, 2
        hour_datasets = hour_datasets or ["post-operative", "ecoli"]

    from repro.experiments import pcd_benchmark

    pcd_benchmark.pcd_report([d for d in args.datasets.split(",") if d], sims=args.sims,
                             repeats=args.repeats, min_seconds=args.min_seconds,
                             estimate_T=args.estimate_T, hour_datasets=hour_datasets,
                             fallback=not args.quick, out=args.out)


if __name__ == "__main__":
    main()
