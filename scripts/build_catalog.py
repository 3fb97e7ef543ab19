"""Rebuild dpdro's certified catalog (package data ``dpdro/data/catalog.json.gz``).

A thin command line over :mod:`repro.catalog_build`: ``dpdro.optimal_noise`` at every point of a log-spaced
grid of ε and δ, for the ℓ1 and ℓ2 losses, at Δf = 1; the grid, the settings and provenance are stored
in the file, and the worst bracket gap of the lookup is printed at the end. The shipped (small) catalog:

    .venv/bin/python scripts/build_catalog.py --epsilon 0.5 0.52 5 --delta 0.01 0.0105 5 --gap 0.005

The grid must be dense where the optimum changes fast (see repro.catalog_build): check the printed worst gap.
"""

from __future__ import annotations

import argparse

import numpy as np

from dpdro.catalog import Catalog
from repro.catalog_build import build_catalog, write_catalog
from repro.paths import CATALOG, relative


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epsilon", nargs=3, type=float, metavar=("MIN", "MAX", "N"), required=True,
                    help="log-spaced epsilon grid")
    ap.add_argument("--delta", nargs=3, type=float, metavar=("MIN", "MAX", "N"), required=True,
                    help="log-spaced delta grid")
    ap.add_argument("--loss", nargs="+", default=["l1", "l2"], choices=["l1", "l2"])
    ap.add_argument("--gap", type=float, default=0.005, help="rel_gap of optimal_noise at every point")
    ap.add_argument("--time-limit", type=float, default=None, help="time_limit of optimal_noise (seconds)")
    ap.add_argument("--jobs", type=int, default=1, help="points solved in parallel")
    ap.add_argument("-o", "--output", default=str(CATALOG))
    args = ap.parse_args(argv)
    epsilons = np.geomspace(args.epsilon[0], args.epsilon[1], int(args.epsilon[2]))
    deltas = np.geomspace(args.delta[0], args.delta[1], int(args.delta[2]))
    doc = build_catalog(epsilons, deltas, args.loss, rel_gap=args.gap, time_limit=args.time_limit,
                        n_jobs=args.jobs, verbose=True)
    path = write_catalog(doc, args.output)
    print(f"{relative(path)}: {path.stat().st_size / 1e3:.0f} kB")
    print(Catalog(doc).summary())


if __name__ == "__main__":
    main()
