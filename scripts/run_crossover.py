"""k releases under a total (ε, δ): optimal noise or analytic Gaussian, whichever wins.

A thin command line over :mod:`repro.crossover` (the method is in its docstring and in
``dpdro.composition.design_for_releases``), run by the sweep runner: one task per (loss, total ε,
k), each written to its own file under results/composition/crossover/ and skipped when present, so a
killed run resumes. Chapter "Composing many releases" loads them. About ten minutes on one core:

    nice -n 19 .venv/bin/python scripts/run_crossover.py --jobs 1
"""

from __future__ import annotations

import argparse

from repro import sweep
from repro.crossover import FAMILY
from repro.paths import RESULTS


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--losses", default=None, help="comma-separated losses (default l1,l2)")
    ap.add_argument("--jobs", type=int, default=1, help="points computed in parallel (default 1)")
    ap.add_argument(
        "--scale", choices=sweep.SCALES, default="paper", help="'ci': a few points under _build/"
    )
    args = ap.parse_args(argv)
    root = RESULTS if args.scale == "paper" else sweep.CI_ROOT
    tasks = FAMILY.tasks(root, args.scale, {"losses": args.losses})
    report = sweep.run(tasks, jobs=args.jobs, registry={FAMILY.name: FAMILY})
    if report.failed or report.not_run:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
