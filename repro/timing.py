"""Timing runs of the solvers (the "benchmarks" of ``scripts/benchmark_*.py``): bounds, gaps, times
and speed-up ratios measured in one run. Timings depend on the machine and its load: compare ratios
and trends, not seconds.

* :func:`data_independent_report`: for the paper's three privacy regimes (Section 5.1), Δf = 1 and the
  ℓ1 and ℓ2 losses, ``optimal_noise`` with a gap target and its wall-clock time; on the upper-bound
  partition it ended with, Algorithm 1 with single-event cuts (the paper's algorithm) against dpdro's
  default whole-shift cuts.
* :func:`data_dependent_path`: the data-dependent bounds P′(π, β) and D′(π, β) on the Figure 3
  instances (:func:`repro.figure3.problem_for`) along the refinement path β = 1, 1/2, …; the time to a
  gap g is the cumulative wall-clock time at the first step whose relative gap is ≤ g (the paper:
  "across all instances, it took up to 5.82 secs (980.44 secs) to reduce the gap between our upper and
  lower bounds to 10% (5%)", C++/Gurobi, median over 10 repetitions).
"""

from __future__ import annotations

import math
import platform
import time

import dpdro
from dpdro import data_dependent as dd
from dpdro.bounds import BoundingLP
from dpdro.cutting_plane import run_cutting_plane
from dpdro.mechanisms import truncated_laplace_half_width

from .figure3 import PAPER, problem_for
from .provenance import provenance, write_json_atomic

__all__ = ["REGIMES", "time_cutting_plane", "data_independent_report", "data_dependent_path", "data_dependent_report"]

REGIMES = [(5.0, 0.25), (1.0, 0.2), (0.2, 0.05)]


def time_cutting_plane(problem, partition, cuts, time_limit):
    """Seconds and result of Algorithm 1 on P(π, β) with ``cuts="shift"`` or ``"event"``."""
    lp = BoundingLP(problem, partition, "upper")
    t0 = time.perf_counter()
    res = run_cutting_plane(lp, cuts=cuts, time_limit=time_limit)
    return time.perf_counter() - t0, res


def data_independent_report(*, rel_gap: float = 0.01, time_limit: float = 180.0, event_time_limit: float = 300.0,
                            losses=("l1", "l2")) -> None:
    """Print the data-independent timing table (module docstring)."""
    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"target gap {100 * rel_gap:g}%")
    head = (f"{'eps':>5} {'delta':>5} {'loss':>4} | {'upper':>10} {'lower':>10} {'gap %':>7} {'time s':>7} | "
            f"{'k_U':>4} {'N_U':>5} | {'event cuts s':>12} {'iters':>6} {'shift cuts s':>12} {'ratio':>8}")
    print(head)
    print("-" * len(head))
    for eps, delta in REGIMES:
        for loss in losses:
            prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
            t0 = time.perf_counter()
            res = dpdro.optimal_noise(prob, rel_gap, time_limit=time_limit)
            elapsed = time.perf_counter() - t0
            if not dpdro.certify_delta(res.noise, eps, 1.0) <= delta:  # pragma: no cover - certified release
                raise RuntimeError("released noise is not private")
            part = res.partition
            t_shift, r_shift = time_cutting_plane(prob, part, "shift", None)
            t_event, r_event = time_cutting_plane(prob, part, "event", event_time_limit)
            if r_event.converged:
                if abs(r_event.objective - r_shift.objective) > 1e-7 * max(1.0, abs(r_shift.objective)):
                    raise RuntimeError("event and shift cuts reach different optima")  # pragma: no cover
                ratio = f"{t_event / t_shift:8.1f}"
            else:
                ratio = f"{'>=' + format(t_event / t_shift, '.0f'):>8}"
            k_u = round(1.0 / part.beta)
            print(f"{eps:5g} {delta:5g} {loss:>4} | {res.upper.value:10.6f} {res.lower.value:10.6f} "
                  f"{100 * res.gap:7.3f} {elapsed:7.2f} | {k_u:4d} {part.n_cells:5d} | "
                  f"{t_event:12.2f} {r_event.iterations:6d} {t_shift:12.3f} {ratio}", flush=True)


def data_dependent_path(eps, delta, betas, cap, targets, verbose=True) -> dict:
    """P′ and D′ of one Figure 3 regime along ``betas`` until every target gap is reached or the
    cumulative time exceeds ``cap`` (a step still running is cut by the cutting-plane time limit)."""
    prob = problem_for(eps, delta)
    A = round(truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=prob.sensitivity))
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
            ub = dd.upper_bound(prob, part, time_limit=remaining)
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
        lb = dd.lower_bound(prob, part, time_limit=max(1.0, cap - total - t_up))
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


def data_dependent_report(betas, cap: float, regimes=REGIMES, targets=(0.10, 0.05), out=None) -> list:
    """:func:`data_dependent_path` for every regime, then the time to each target gap against the paper's;
    with ``out`` the results are also written there (JSON with provenance)."""
    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"cap {cap:g} s per instance, β ∈ {{1, …, 1/{round(1 / betas[-1])}}}", flush=True)
    results = []
    for eps, delta in regimes:
        print(f"(ε, δ) = ({eps:g}, {delta:g}), Δf = 2, Φ = [0, 4), ℓ1", flush=True)
        results.append(data_dependent_path(eps, delta, betas, cap, targets))
    print()
    head = (f"{'eps':>5} {'delta':>5} | {'time to 10% (s)':>16} {'at (K, β)':>12} | {'time to 5% (s)':>15} "
            f"{'at (K, β)':>12} | {'final gap %':>11}")
    print(head)
    print("-" * len(head))
    for r in results:
        cells = []
        for t in ("0.1", "0.05"):
            v = r["reached"][t]
            cells.append(("not reached", "") if v is None
                         else (f"{v['seconds']:.2f}", f"({v['K']}, 1/{round(1 / v['beta'])})"))
        last = [x for x in r["rows"] if x.get("gap") is not None]
        fg = f"{100 * last[-1]['gap']:.2f}" if last else "-"
        print(f"{r['epsilon']:5g} {r['delta']:5g} | {cells[0][0]:>16} {cells[0][1]:>12} | {cells[1][0]:>15} "
              f"{cells[1][1]:>12} | {fg:>11}")
    print(f"paper (max over the three instances, C++/Gurobi): 10% in ≤ {PAPER['max seconds to 10% gap']} s, "
          f"5% in ≤ {PAPER['max seconds to 5% gap']} s")
    if out:
        write_json_atomic(out, dict(provenance=provenance(), cap=cap, betas=betas, results=results, paper=PAPER))
    return results
