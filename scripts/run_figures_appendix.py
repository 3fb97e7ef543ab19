"""Paper-scale results for Figure 4 (Section 5.1) and the monotone counterexample of the GitHub appendix.

A thin command line over :mod:`repro.appendix` (see its docstring for what is computed and stored).

Subcommands (CPU is shared: run one at a time, niced)::

    nice -n 10 .venv/bin/python scripts/run_figures_appendix.py figure4          # ~1-3 min
    nice -n 10 .venv/bin/python scripts/run_figures_appendix.py counterexample   # ~5 min

``figure4`` writes ``results/appendix/figure4.json``, ``counterexample`` writes
``results/appendix/monotone_counterexample.json``; every file carries provenance.
"""

from __future__ import annotations

import argparse

from repro import appendix
from repro.paths import relative


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("figure4")
    cx = sub.add_parser("counterexample")
    cx.add_argument("--max-k", type=int, default=128, help="finest grid β = Δf/max_k (k = 32, 64, ... doubling)")
    cx.add_argument("--spike", type=int, nargs=2, default=(32, 8), metavar=("K", "F"),
                    help="unrestricted upper bound on cells 1/K refined next to 0 down to 1/(K*F)")
    args = ap.parse_args(argv)
    if args.cmd == "figure4":
        appendix.run_figure4()
        print("wrote", relative(appendix.FIGURE4))
    else:
        appendix.run_counterexample(args.max_k, tuple(args.spike))
        print("wrote", relative(appendix.COUNTEREXAMPLE))


if __name__ == "__main__":
    main()
