"""Rebuild dpdro's certified catalog (package data ``dpdro/data/catalog.json.gz``).

A thin command line over :mod:`repro.catalog_build` run by the sweep runner
(:func:`repro.sweep.run`): ``dpdro.optimal_noise`` at every round value of ε in [0.05, 10] and δ in
[1e-10, 0.1], for the ℓ1 and ℓ2 losses, at Δf = 1, each point at a 0.1% target gap and at most 1%
certified; one file per point under ``_build/catalog/`` (skipped when present, so a killed build
resumes), then merged into the package data with the grid, the settings and provenance; the worst
bracket gaps are printed at the end. About two hours on one core:

    nice -n 19 .venv/bin/python scripts/build_catalog.py --jobs 1
"""

from __future__ import annotations

import argparse

from dpdro.catalog import Catalog
from repro import sweep
from repro.catalog_build import FAMILY
from repro.paths import RESULTS, relative


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--losses", default=None, help="comma-separated losses (default l1,l2)")
    ap.add_argument(
        "--gap", type=float, default=None, help="target relative gap per point (default 0.001)"
    )
    ap.add_argument(
        "--time-limit", type=float, default=None, help="seconds per point before the retry"
    )
    ap.add_argument("--jobs", type=int, default=1, help="points solved in parallel (default 1)")
    ap.add_argument(
        "--scale", choices=sweep.SCALES, default="paper", help="'ci': a 2 x 2 grid under _build/"
    )
    args = ap.parse_args(argv)
    root = RESULTS if args.scale == "paper" else sweep.CI_ROOT
    options = {"losses": args.losses, "rel_gap": args.gap, "time_limit": args.time_limit}
    tasks = FAMILY.tasks(root, args.scale, options)
    report = sweep.run(tasks, jobs=args.jobs, registry={FAMILY.name: FAMILY})
    for path in sweep.merge(FAMILY, root, tasks, args.scale, options):
        print(f"{relative(path)}: {path.stat().st_size / 1e3:.0f} kB")
        if args.scale == "paper":
            print(Catalog.from_file(path).summary())
    if report.failed or report.not_run:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
