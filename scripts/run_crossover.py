"""k releases at a fixed total (ε, δ): the optimal single-shot noise against the analytic Gaussian.

A thin command line over :mod:`repro.crossover` (the method is in its docstring): for every k and
loss, a certified design at the basic-composition budget (ε/k, δ/(2k)), narrowed as far as the
dominating-pair PLD composed k times in dp_accounting allows, and the analytic Gaussian at
sensitivity √k; one JSON file per (loss, k) in results/composition/crossover/,
skipped when present. Chapter "Using dpdro" loads them.

    nice -n 10 .venv/bin/python scripts/run_crossover.py --loss l2 --time-limit 60   # one worker per loss
"""

from __future__ import annotations

import argparse

from repro.crossover import compute_crossover


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", nargs="+", type=int, default=[1, 2, 3, 5, 7, 10, 20, 50, 100])
    ap.add_argument("--loss", nargs="+", default=["l1", "l2"], choices=["l1", "l2"])
    ap.add_argument("--epsilon", type=float, default=4.0, help="total epsilon of the k releases")
    ap.add_argument("--delta", type=float, default=1e-3, help="total delta of the k releases")
    ap.add_argument("--gap", type=float, default=0.02, help="rel_gap of each design")
    ap.add_argument("--time-limit", type=float, default=60.0, help="time_limit of each design (seconds)")
    args = ap.parse_args(argv)
    compute_crossover(args.k, args.loss, epsilon=args.epsilon, delta=args.delta, rel_gap=args.gap,
                      time_limit=args.time_limit)


if __name__ == "__main__":
    main()
