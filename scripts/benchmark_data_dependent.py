"""Benchmark the data-dependent bounds P′(π, β) and D′(π, β) on the paper's Figure 3 instances.

Instances (Section 5.1, Figure 3): Δf = 2, Φ = [0, 4), ℓ1-loss, (ε, δ) ∈ {(5, 0.25), (1, 0.2),
(0.2, 0.05)}, noise support [−A, A + β) with A the truncated Laplace half-width rounded to the nearest
integer (the paper: "we match the support of the truncated Laplace distribution, with the support
bounds rounded to nearest integer values"), and the refinement path β = 1, 1/2, …, 1/32 with
K = |Φ|/β = 4, 8, …, 128 pieces Φ_k(β) (one noise distribution per piece).

Along the path each step solves P′(π, β) (certified released mechanism) and D′(π, β) (dual-feasible
lower bound). **Time to a gap** g is the cumulative wall-clock time (all steps so far, upper and lower
bound) at the first step whose relative gap (P′ − D′)/D′ is ≤ g. The data-independent bounds P(π, β),
D(π, β) on the same grid are printed for comparison (not timed into the totals). Each instance stops
when its cumulative time exceeds ``--time-cap`` seconds (a step still running is cut by the cutting-
plane time limit; an unfinished upper bound is reported as "cap").

Paper values (Section 5.1, text below Figure 3; C++/Gurobi, median over 10 repetitions): "across all
instances, it took up to 5.82 secs (980.44 secs) to reduce the gap between our upper and lower bounds
to 10% (5%)" — maxima over the three instances. Timings depend on the machine and its load.

Run ``python scripts/benchmark_data_dependent.py --quick`` (β down to 1/8, 120 s cap) or without
``--quick`` for the whole path.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time

import dpdro
from dpdro.data_dependent import DataDependentProblem, dd_lower_bound, dd_upper_bound

REGIMES = [(5.0, 0.25), (1.0, 0.2), (0.2, 0.05)]
PAPER = {"max seconds to 10% gap": 5.82, "max seconds to 5% gap": 980.44}  # paper, Section 5.1 (Figure 3 text)


def run_instance(eps, delta, betas, cap, targets, verbose=True):
    prob = DataDependentProblem(epsilon=eps, delta=delta, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0, loss="l1")
    A = round(prob.base_problem.truncated_laplace_half_width())
    rows, reached = [], {t: None for t in targets}
    total = 0.0
    for beta in betas:
        remaining = cap - total
        if remaining <= 0:
            break
        part = dpdro.Partition.uniform(L=int(round(A / beta)), beta=beta)
        K = prob.grouping(beta).K
        t0 = time.perf_counter()
        try:
            ub = dd_upper_bound(prob, part, time_limit=remaining)
            upper = ub.value
        except RuntimeError:
            upper = None
        t_up = time.perf_counter() - t0
        if upper is None:
            total += t_up
            rows.append(dict(beta=beta, K=K, N=part.n_cells, upper=None, lower=None, gap=None,
                             seconds=t_up, cumulative=total))
            if verbose:
                print(f"  β=1/{round(1 / beta):<3d} K={K:<4d} N={part.n_cells:<5d} upper bound hit the time cap "
                      f"({total:.1f} s)", flush=True)
            break
        t1 = time.perf_counter()
        lb = dd_lower_bound(prob, part, time_limit=max(1.0, cap - total - t_up))
        t_lo = time.perf_counter() - t1
        total += t_up + t_lo
        gap = (upper - lb.value) / lb.value if lb.value > 0 else math.inf
        try:  # the data-independent P on the nearest-integer support can be infeasible (ε = 1, β = 1/8)
            di_up = dpdro.upper_bound(prob.base_problem, part).value
        except dpdro.InfeasibleError:
            di_up = math.nan
        di_lo = dpdro.lower_bound(prob.base_problem, part).value
        row = dict(beta=beta, K=K, N=part.n_cells, upper=upper, lower=lb.value, gap=gap, seconds_upper=t_up,
                   seconds_lower=t_lo, cumulative=total, di_upper=di_up, di_lower=di_lo,
                   certified_delta=ub.certified_delta, repair_weight=ub.repair_weight)
        rows.append(row)
        for t in targets:
            if reached[t] is None and gap <= t:
                reached[t] = dict(beta=beta, K=K, seconds=total)
        if verbose:
            print(f"  β=1/{round(1 / beta):<3d} K={K:<4d} N={part.n_cells:<5d} P′={upper:<10.5f} D′={lb.value:<10.5f} "
                  f"gap={100 * gap:8.2f}%  t(P′)={t_up:7.2f}s t(D′)={t_lo:7.2f}s cum={total:8.2f}s | "
                  f"P={di_up:.5f} D={di_lo:.5f}", flush=True)
        if all(v is not None for v in reached.values()):
            break
    return dict(epsilon=eps, delta=delta, support_half_width=A, rows=rows,
                reached={str(k): v for k, v in reached.items()})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="β down to 1/8 and a 120 s cap per instance")
    ap.add_argument("--time-cap", type=float, default=None, help="seconds per instance (default 1200, quick 120)")
    ap.add_argument("--regimes", default=None, help="e.g. '5:0.25,1:0.2' (default: the paper's three)")
    ap.add_argument("--out", default=None, help="write the results as JSON to this file")
    args = ap.parse_args()
    betas = [1.0 / 2 ** i for i in range(4 if args.quick else 6)]
    cap = args.time_cap if args.time_cap is not None else (120.0 if args.quick else 1200.0)
    regimes = REGIMES if args.regimes is None else [tuple(float(x) for x in r.split(":")) for r in args.regimes.split(",")]
    targets = (0.10, 0.05)
    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"cap {cap:g} s per instance, β ∈ {{1, …, 1/{round(1 / betas[-1])}}}", flush=True)
    results = []
    for eps, delta in regimes:
        print(f"(ε, δ) = ({eps:g}, {delta:g}), Δf = 2, Φ = [0, 4), ℓ1", flush=True)
        results.append(run_instance(eps, delta, betas, cap, targets))
    print()
    head = f"{'eps':>5} {'delta':>5} | {'time to 10% (s)':>16} {'at (K, β)':>12} | {'time to 5% (s)':>15} {'at (K, β)':>12} | {'final gap %':>11}"
    print(head)
    print("-" * len(head))
    for r in results:
        cells = []
        for t in ("0.1", "0.05"):
            v = r["reached"][t]
            cells.append(("not reached", "") if v is None else (f"{v['seconds']:.2f}", f"({v['K']}, 1/{round(1 / v['beta'])})"))
        last = [x for x in r["rows"] if x.get("gap") is not None]
        fg = f"{100 * last[-1]['gap']:.2f}" if last else "-"
        print(f"{r['epsilon']:5g} {r['delta']:5g} | {cells[0][0]:>16} {cells[0][1]:>12} | {cells[1][0]:>15} "
              f"{cells[1][1]:>12} | {fg:>11}")
    print(f"paper (max over the three instances, C++/Gurobi): 10% in ≤ {PAPER['max seconds to 10% gap']} s, "
          f"5% in ≤ {PAPER['max seconds to 5% gap']} s")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(dict(dpdro=dpdro.__version__, python=platform.python_version(), machine=platform.machine(),
                           date=time.strftime("%Y-%m-%d %H:%M:%S"), cap=cap, betas=betas, results=results,
                           paper=PAPER), fh, indent=1)


if __name__ == "__main__":
    main()
