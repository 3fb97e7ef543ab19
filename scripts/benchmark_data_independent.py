"""Benchmark the data-independent solver on the paper's three privacy regimes (Section 5.1).

For (ε, δ) ∈ {(5, 0.25), (1, 0.2), (0.2, 0.05)}, Δf = 1 and the ℓ1 and ℓ2 losses it prints

* the certified upper and lower bounds and their relative gap reached by ``optimal_noise`` with a
  1% target, and the wall-clock time it took (the paper's C++/Gurobi code: "all solved within 2.2
  secs" for its Figure 3 instances, which use uniform grids with β ≥ Δf/32 and no gap target);
* on the upper-bound partition that ``optimal_noise`` ended with, the time of Algorithm 1 with
  single-event cuts (the paper's algorithm) and of dpdro's default whole-shift cuts, and their ratio
  measured in the same run.

Timings depend on the machine and its load: compare ratios, not seconds. Run with
``python scripts/benchmark_data_independent.py`` (add ``--help`` for options).
"""

from __future__ import annotations

import argparse
import platform
import time

import dpdro
from dpdro.bounds import BoundingLP
from dpdro.cutting_plane import run_cutting_plane

REGIMES = [(5.0, 0.25), (1.0, 0.2), (0.2, 0.05)]


def time_cutting_plane(problem, partition, cuts, time_limit):
    lp = BoundingLP(problem, partition, "upper")
    t0 = time.perf_counter()
    res = run_cutting_plane(lp, cuts=cuts, time_limit=time_limit)
    return time.perf_counter() - t0, res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rel-gap", type=float, default=0.01, help="target relative gap (default 0.01)")
    ap.add_argument("--time-limit", type=float, default=180.0, help="seconds per optimal_noise run before giving up")
    ap.add_argument("--event-time-limit", type=float, default=300.0, help="seconds allowed to single-event cuts")
    ap.add_argument("--losses", default="l1,l2")
    args = ap.parse_args()

    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"target gap {100 * args.rel_gap:g}%")
    head = (f"{'eps':>5} {'delta':>5} {'loss':>4} | {'upper':>10} {'lower':>10} {'gap %':>7} {'time s':>7} | "
            f"{'k_U':>4} {'N_U':>5} | {'event cuts s':>12} {'iters':>6} {'shift cuts s':>12} {'ratio':>8}")
    print(head)
    print("-" * len(head))
    for eps, delta in REGIMES:
        for loss in args.losses.split(","):
            prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
            t0 = time.perf_counter()
            res = dpdro.optimal_noise(prob, args.rel_gap, time_limit=args.time_limit)
            elapsed = time.perf_counter() - t0
            assert dpdro.certify_delta(res.noise, eps, 1.0) <= delta
            part = res.partition
            t_shift, r_shift = time_cutting_plane(prob, part, "shift", None)
            t_event, r_event = time_cutting_plane(prob, part, "event", args.event_time_limit)
            if r_event.converged:
                assert abs(r_event.objective - r_shift.objective) <= 1e-7 * max(1.0, abs(r_shift.objective))
                ratio = f"{t_event / t_shift:8.1f}"
            else:
                ratio = f"{'>=' + format(t_event / t_shift, '.0f'):>8}"
            k_u = round(1.0 / part.beta)
            print(f"{eps:5g} {delta:5g} {loss:>4} | {res.upper.value:10.6f} {res.lower.value:10.6f} "
                  f"{100 * res.gap:7.3f} {elapsed:7.2f} | {k_u:4d} {part.n_cells:5d} | "
                  f"{t_event:12.2f} {r_event.iterations:6d} {t_shift:12.3f} {ratio}", flush=True)


if __name__ == "__main__":
    main()
