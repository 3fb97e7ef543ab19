"""Timing runs of the solvers (the "benchmarks" of ``scripts/benchmark_*.py``): bounds, gaps, times
and speed-up ratios measured in one run. Timings depend on the machine and its load: compare ratios
and trends, not seconds.

* :func:`engine_report`: ``optimal_noise`` with nothing but a gap target on every cell of Tables 1/6,
  per instance and summarised against the engine's targets, plus :func:`monolithic_comparison`.
* :func:`time_cutting_plane`: Algorithm 1 with single-event cuts (the paper's algorithm) against the
  whole-shift cuts on one partition (chapter 15).
* :func:`data_dependent_benchmark`: the default data-dependent call
  (:func:`dpdro.data_dependent.optimal_noise` with a 5% target and a time limit) on the three Figure 3
  instances, with the time at which its certified bracket first reached a 10% and a 5% gap.
* :func:`data_dependent_path`: the data-dependent bounds P′(π, β) and D′(π, β) on the Figure 3
  instances (:func:`repro.figure3.problem_for`) along the refinement path β = 1, 1/2, …; the time to a
  gap g is the cumulative wall-clock time at the first step whose relative gap is ≤ g (the paper:
  "across all instances, it took up to 5.82 secs (980.44 secs) to reduce the gap between our upper and
  lower bounds to 10% (5%)", C++/Gurobi, median over 10 repetitions).

The coordinate-descent benchmark (``scripts/benchmark_pcd.py``) is
:mod:`repro.experiments.pcd_benchmark`.
"""

from __future__ import annotations

import math
import os
import platform
import time

import dpdro
from dpdro import data_dependent as dd
from dpdro.bounds import BoundingLP
from dpdro.cutting_plane import run_cutting_plane
from dpdro.mechanisms import truncated_laplace_half_width

from .figure3 import PAPER, problem_for
from .provenance import provenance, write_json_atomic

__all__ = ["REGIMES", "time_cutting_plane", "engine_report", "monolithic_comparison", "data_dependent_path",
           "data_dependent_report", "data_dependent_benchmark"]

REGIMES = [(5.0, 0.25), (1.0, 0.2), (0.2, 0.05)]
LOSSES_DEFAULT = ("l1", "l2")


def time_cutting_plane(problem, partition, cuts, time_limit):
    """Seconds and result of Algorithm 1 on P(π, β) with ``cuts="shift"`` or ``"event"``."""
    lp = BoundingLP(problem, partition, "upper")
    t0 = time.perf_counter()
    res = run_cutting_plane(lp, cuts=cuts, time_limit=time_limit)
    return time.perf_counter() - t0, res


def _cell(args):
    """One engine run in a worker process: (loss, ε, δ, target, time limit) → timings and bounds."""
    import resource

    loss, eps, delta, target, time_limit = args
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
    t0 = time.perf_counter()
    res = dpdro.optimal_noise(prob, rel_gap=target, time_limit=time_limit)
    seconds = time.perf_counter() - t0
    certified = dpdro.certify_delta(res.noise, eps, 1.0)
    if not certified <= delta:  # pragma: no cover - every release is certified
        raise RuntimeError(f"released noise is not private at {(loss, eps, delta)}")
    return dict(loss=loss, epsilon=eps, delta=delta, target=target, upper=res.upper.value, lower=res.lower.value,
                gap=res.gap, reached=res.reached, seconds=seconds, grids=[h["k"] for h in res.history],
                atom=res.noise.atom, peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def monolithic_comparison(eps: float = 1.0, delta: float = 0.2, beta: float = 0.02) -> dict:
    """The monolithic lifted LP (every shift of the uniform partition at once, P(L, β) and D(L, β) with
    the paper's cell infima, solved by HiGHS) against ``optimal_noise`` asked for half its gap."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss="l1")
    a = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=1.0)
    part = dpdro.Partition.uniform(L=math.ceil(1.5 * a / beta), beta=beta)
    t0 = time.perf_counter()
    bounds = []
    for kind in ("upper", "lower"):
        lp = BoundingLP(prob, part, kind)
        lp.add_all_shift_cuts()
        sol = lp.solve()
        bounds.append(sol.objective if kind == "upper" else lp.dual_bound(sol.row_duals))
    mono_seconds = time.perf_counter() - t0
    mono_gap = (bounds[0] - bounds[1]) / bounds[1]
    t0 = time.perf_counter()
    res = dpdro.optimal_noise(prob, rel_gap=mono_gap / 2)
    ours = time.perf_counter() - t0
    return dict(epsilon=eps, delta=delta, beta=beta, cells=part.n_cells, monolithic_seconds=mono_seconds,
                monolithic_gap=mono_gap, seconds=ours, gap=res.gap, ratio=ours / mono_seconds)


def engine_report(*, targets=(0.01, 0.001), losses=LOSSES_DEFAULT, epsilons=None, deltas=None, jobs: int = 2,
                  time_limit: float = 120.0, out=None) -> dict:
    """The engine benchmark of issue 15: ``optimal_noise(problem, rel_gap=target)`` with no other option
    on every cell of Tables 1/6 (ℓ1 and ℓ2, Δf = 1), ``jobs`` cells at a time in worker processes; a
    per-instance table, a summary per target against the targets of the issue, the monolithic LP
    comparison and the peak memory per process, all measured in this run."""
    from concurrent.futures import ProcessPoolExecutor

    from .tables import DELTAS, EPSILONS

    epsilons = EPSILONS if epsilons is None else epsilons
    deltas = DELTAS if deltas is None else deltas
    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{jobs} worker process(es), time limit {time_limit:g} s per call", flush=True)
    tasks = [(loss, e, d, t, time_limit) for t in targets for loss in losses for e in epsilons for d in deltas]
    head = f"{'loss':>4} {'eps':>6} {'delta':>6} {'target':>7} | {'lower':>11} {'upper':>11} {'gap %':>8} {'s':>7} grids"
    print(head)
    print("-" * len(head))
    rows = []
    t_all = {t: 0.0 for t in targets}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        t0 = time.perf_counter()
        current = targets[0]
        for r in pool.map(_cell, tasks):
            if r["target"] != current:
                t_all[current] = time.perf_counter() - t0
                t0, current = time.perf_counter(), r["target"]
            rows.append(r)
            grids = ",".join(f"{k:g}" for k in r["grids"])
            print(f"{r['loss']:>4} {r['epsilon']:6g} {r['delta']:6g} {100 * r['target']:6.2f}% | {r['lower']:11.6g} "
                  f"{r['upper']:11.6g} {100 * r['gap']:8.4f} {r['seconds']:7.2f} {grids}", flush=True)
        t_all[current] = time.perf_counter() - t0
    goals = {0.01: (1.0, 3.0), 0.001: (10.0, 60.0)}
    print("\nsummary (issue 15 targets: 1% in ≤ 1 s median and ≤ 3 s max; 0.1% in ≤ 10 s median, ≤ 60 s max, "
          "the whole table within 15 minutes on two processes)")
    summary = {}
    for t in targets:
        sel = [r for r in rows if r["target"] == t]
        secs = sorted(r["seconds"] for r in sel)
        med = secs[len(secs) // 2] if len(secs) % 2 else 0.5 * (secs[len(secs) // 2 - 1] + secs[len(secs) // 2])
        reached = sum(r["reached"] for r in sel)
        goal = goals.get(t)
        summary[str(t)] = dict(cells=len(sel), reached=reached, median_seconds=med, max_seconds=secs[-1],
                               wall_seconds=t_all[t], median_gap=sorted(r["gap"] for r in sel)[len(sel) // 2],
                               peak_mib=max(r["peak_mib"] for r in sel))
        note = f" (goal ≤ {goal[0]:g} s / ≤ {goal[1]:g} s)" if goal else ""
        print(f"target {100 * t:g}%: {reached}/{len(sel)} cells reached; median {med:.2f} s, max {secs[-1]:.2f} s"
              f"{note}; whole table {t_all[t]:.0f} s on {jobs} processes; peak memory "
              f"{summary[str(t)]['peak_mib']:.0f} MiB per process", flush=True)
    mono = monolithic_comparison()
    print(f"\nmonolithic lifted LP on (1, 0.2), ℓ1, β = 0.02 ({mono['cells']} cells): {mono['monolithic_seconds']:.2f} s "
          f"to a {100 * mono['monolithic_gap']:.3f}% gap; optimal_noise to {100 * mono['gap']:.3f}% in "
          f"{mono['seconds']:.3f} s: time ratio {mono['ratio']:.4f} (goal ≤ 0.05)", flush=True)
    data = dict(rows=rows, summary=summary, monolithic=mono, jobs=jobs, time_limit=time_limit,
                provenance=provenance())
    if out:
        write_json_atomic(out, data)
    return data


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
        lb = dd.lower_bound(prob, part, coefficients="infimum", time_limit=max(1.0, cap - total - t_up))
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


DD_GOALS = {0.10: 10.0, 0.05: 60.0}  # issue 16: seconds to a valid 10% / 5% gap on this machine


def data_dependent_benchmark(regimes=REGIMES, targets=(0.10, 0.05), time_limit: float = 300.0, out=None) -> list:
    """The default data-dependent call on each Figure 3 instance, ``dd.optimal_noise(problem,
    rel_gap=min(targets), time_limit=time_limit)``, in one run: per refinement step the best certified
    upper bound, the best valid lower bound (D′_R) and their gap; per instance the cumulative time at
    which the bracket first reached each target (the driver's own progress record, so both targets come
    from the same run). Every released mechanism is re-certified here. With ``out`` the results are
    written as JSON with provenance."""
    print(f"dpdro {dpdro.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"load average {os.getloadavg()[0]:.2f}, time limit {time_limit:g} s per instance", flush=True)
    results = []
    for eps, delta in regimes:
        prob = problem_for(eps, delta)
        print(f"(ε, δ) = ({eps:g}, {delta:g}), Δf = 2, Φ = [0, 4), ℓ1", flush=True)
        reached = {t: None for t in targets}

        def progress(row):
            for t in targets:  # a step's lower bound may close the gap before its upper bound is solved
                if reached[t] is None and row["gap_after_lower"] <= t:
                    reached[t] = dict(seconds=row["cumulative_after_lower"], beta=row["beta"], K=row["K"])
                elif reached[t] is None and row["gap"] <= t:
                    reached[t] = dict(seconds=row["cumulative"], beta=row["beta"], K=row["K"])
            up = "—" if row["upper"] is None else f"{row['upper']:.5f}"
            lo = "—" if row["lower"] is None else f"{row['lower']:.5f}"
            print(f"  β=1/{round(1 / row['beta']):<3d} K={row['K']:<4d} upper={up:<9} lower={lo:<9} "
                  f"best gap={100 * row['gap']:7.2f}%  t(lower)={row['seconds_lower']:6.1f}s "
                  f"t(upper)={row['seconds_upper']:6.1f}s cum={row['cumulative']:7.1f}s", flush=True)

        t0 = time.perf_counter()
        res = dd.optimal_noise(prob, rel_gap=min(targets), time_limit=time_limit, progress=progress)
        seconds = time.perf_counter() - t0
        certified = None if res.mechanism is None else res.mechanism.certify()
        if certified is not None and not certified <= delta:  # pragma: no cover - every release is certified
            raise RuntimeError(f"released mechanism is not private at {(eps, delta)}")
        results.append(dict(epsilon=eps, delta=delta, seconds=seconds, stopped=res.stopped, gap=res.gap,
                            upper=None if res.upper is None else res.upper.value,
                            lower=None if res.lower is None else res.lower.value, certified_delta=certified,
                            reached={str(t): v for t, v in reached.items()}, history=res.history))
    print()
    head = (f"{'eps':>5} {'delta':>5} | {'10% (s)':>8} {'at β':>6} | {'5% (s)':>8} {'at β':>6} | "
            f"{'final gap %':>11} {'upper':>9} {'lower':>9} | stopped")
    print(head)
    print("-" * len(head))
    for r in results:
        cells = []
        for t in targets:
            v = r["reached"][str(t)]
            cells.append(("—", "") if v is None else (f"{v['seconds']:.1f}", f"1/{round(1 / v['beta'])}"))
        up = "—" if r["upper"] is None else f"{r['upper']:.5f}"
        lo = "—" if r["lower"] is None else f"{r['lower']:.5f}"
        print(f"{r['epsilon']:5g} {r['delta']:5g} | {cells[0][0]:>8} {cells[0][1]:>6} | {cells[1][0]:>8} "
              f"{cells[1][1]:>6} | {100 * r['gap']:11.2f} {up:>9} {lo:>9} | {r['stopped']}")
    print("'—': not reached within the time limit. Goals of issue 16 on this machine: a valid 10% gap within "
          f"{DD_GOALS[0.10]:g} s and 5% within {DD_GOALS[0.05]:g} s per instance. The paper (C++/Gurobi, its lower "
          f"curve P′ − β/2, not a bound): 10% in ≤ {PAPER['max seconds to 10% gap']} s, 5% in ≤ "
          f"{PAPER['max seconds to 5% gap']} s.")
    if out:
        write_json_atomic(out, dict(provenance=provenance(), time_limit=time_limit, targets=list(targets),
                                    goals={str(k): v for k, v in DD_GOALS.items()}, results=results, paper=PAPER))
    return results
