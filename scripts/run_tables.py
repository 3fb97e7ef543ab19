"""Paper-scale results for Table 1 and Appendix D Tables 4, 5, 6 (Selvi, Liu, Wiesemann, Section 5.1).

A thin command line over :mod:`repro.tables`. For every cell of the paper's 10 × 10 grid of ε and δ
(Δf = 1) and for the ℓ1 and ℓ2 losses, run ``dpdro.optimal_noise(problem, rel_gap=0.01, time_limit=...)``
and store one JSON file per cell in ``results/tables/cells/`` with

* the certified upper bound P (expected loss of the released noise), the valid lower bound D, the
  relative gap (P − D)/D reached and whether it met the target (cells that run out of time are kept
  with the gap they reached, never dropped or relabelled);
* the exact privacy parameter δ of the released noise, recomputed by ``dpdro.certify_delta``
  independently of the LP (it must be ≤ δ);
* the literature values the tables compare with (truncated Laplace and analytic Gaussian expected
  losses, the near-optimal lower bound with each ``rounding`` variant; ``repro.literature``) — these
  are closed forms, also recomputed live by the notebook;
* provenance (``repro.provenance``): dpdro version, git commit (and whether the tree had local
  changes), date, machine, Python and HiGHS versions.

Cells are processed roughly cheapest first (see ``repro.tables.compute_cells``) and written as soon as they finish, so an
interrupted run keeps everything it computed; a re-run skips cells already stored unless they missed
the target and ``--retry`` is given (then they are recomputed with the new ``--time-limit``, and the
better of the two results is kept).

Usage (CPU is shared: run one instance, niced, in the background)::

    nice -n 10 .venv/bin/python scripts/run_tables.py --time-limit 150
    nice -n 10 .venv/bin/python scripts/run_tables.py --retry --time-limit 600   # second pass
    nice -n 10 .venv/bin/python scripts/run_tables.py --reverse --time-limit 150  # a second worker
    nice -n 10 .venv/bin/python scripts/run_tables.py --retry --atom --min-eps 2 --min-delta 0.2 --time-limit 240

``--atom`` lets the upper bound put a point mass at 0 (``optimal_noise(..., atom=True)``), which the
optimal noise has for large ε and δ; the cell records it (``atom`` and the released ``atom_mass``).
``--lower-support``, ``--lower-shifts`` and ``--lower-coefficients`` pass ``lower_support_factor``,
``max_lower_shifts`` and ``lower_coefficients`` to ``optimal_noise`` (recorded under ``options``); at
ε = 5 a small lower-bound support (the optimal noise lives well inside the truncated-Laplace support),
more shifts and the randomized-rounding coefficients tighten the lower bound per second::

    nice -n 10 .venv/bin/python scripts/run_tables.py --retry --atom --min-eps 2 --lower-support 1.0 \
        --lower-shifts 128 --lower-coefficients rounding --max-k 128 --time-limit 600

``--support`` passes ``support_factor`` (the upper bound's support in units of the truncated-Laplace
half-width A). For large δ the optimal noise is close to an atom of mass δ at 0 plus (1 − δ) times a
pure ε-DP staircase, whose geometric tail reaches beyond 1.5·A; cutting it there costs δ-budget that the
atom then lacks. At (ε, δ) = (5, 0.5), ℓ1, k_U = 64: 0.041741 on ±1.5·A, 0.041334 on ±2.5·A::

    nice -n 10 .venv/bin/python scripts/run_tables.py --retry --atom --min-eps 2 --min-delta 0.5 --support 2.5 \
        --lower-support 1.0 --lower-shifts 128 --lower-coefficients rounding --max-k 128 --time-limit 600

``time_limit`` is wall-clock time (that of ``optimal_noise``), checked between refinement rounds, so
a cell can overrun it by one round. On a loaded machine a cell gets less CPU in the same wall time;
the stored ``seconds`` are wall-clock.

``--summary`` prints the stored cells without computing anything.

Example 1 (Section 1, Figure 1): before the grid, the script also stores the optimal ℓ2 noise for
(ε, δ) = (1, 0.2) and Δf = 1 at a 0.5% relative gap in ``results/tables/example1_optimal.json`` (noise
and bounds); the salary example's Δf = 70/194 (or 0.36) follows by scaling x ↦ Δf·x, which maps an
(ε, δ)-DP noise for Δf = 1 to one for Δf and multiplies the ℓ2 loss by Δf². ``--no-example1`` skips it.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from repro import tables


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-limit", type=float, default=60.0, help="optimal_noise time_limit per cell (s)")
    ap.add_argument("--losses", default="l1,l2")
    ap.add_argument("--max-eps", type=float, default=math.inf, help="only cells with ε ≤ this")
    ap.add_argument("--min-eps", type=float, default=0.0, help="only cells with ε ≥ this")
    ap.add_argument("--min-delta", type=float, default=0.0, help="only cells with δ ≥ this")
    ap.add_argument("--atom", action="store_true", help="let the upper bound put a point mass at 0")
    ap.add_argument("--support", type=float, default=None,
                    help="optimal_noise's support_factor (upper-bound support, default 1.5)")
    ap.add_argument("--lower-support", type=float, default=None,
                    help="optimal_noise's lower_support_factor (default: twice the upper bound's)")
    ap.add_argument("--lower-shifts", type=int, default=None, help="optimal_noise's max_lower_shifts (default 32)")
    ap.add_argument("--lower-coefficients", choices=["infimum", "rounding"], default=None,
                    help="optimal_noise's lower_coefficients (default 'infimum', the paper's cell infima)")
    ap.add_argument("--max-k", type=int, default=None,
                    help="optimal_noise's max_k (default 256); the upper bound ignores the time limit, so a cap on "
                         "its grid bounds the overrun")
    ap.add_argument("--retry", action="store_true", help="recompute stored cells that missed the 1%% target")
    ap.add_argument("--out", type=Path, default=tables.CELLS)
    ap.add_argument("--summary", action="store_true", help="print the stored cells and exit")
    ap.add_argument("--verbose", action="store_true", help="print optimal_noise's rounds")
    ap.add_argument("--no-example1", action="store_true", help="do not compute Example 1's noise first")
    ap.add_argument("--reverse", action="store_true",
                    help="most expensive cells first (a second process with this flag shares the work)")
    args = ap.parse_args(argv)
    if args.summary:
        tables.summary(args.out)
        return
    if not args.no_example1 and not tables.EXAMPLE1.exists():
        tables.example1()
    options = {k: v for k, v in (("support_factor", args.support), ("lower_support_factor", args.lower_support),
                                 ("max_lower_shifts", args.lower_shifts), ("max_k", args.max_k),
                                 ("lower_coefficients", args.lower_coefficients)) if v is not None}
    tables.compute_cells(time_limit=args.time_limit, losses=args.losses.split(","), min_eps=args.min_eps,
                         max_eps=args.max_eps, min_delta=args.min_delta, atom=args.atom, options=options,
                         retry=args.retry, reverse=args.reverse, out=args.out, verbose=args.verbose)


if __name__ == "__main__":
    main()
