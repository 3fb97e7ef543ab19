"""Paper-scale results for Table 1 and Appendix D Tables 4, 5, 6 (Selvi, Liu, Wiesemann, Section 5.1).

For every cell of the paper's 10 × 10 grid of ε and δ (Δf = 1) and for the ℓ1 and ℓ2 losses, run
``dpdro.optimal_noise(problem, rel_gap=0.01, time_limit=...)`` and store one JSON file per cell in
``results/tables/cells/`` with

* the certified upper bound P (expected loss of the released noise), the valid lower bound D, the
  relative gap (P − D)/D reached and whether it met the target (cells that run out of time are kept
  with the gap they reached, never dropped or relabelled);
* the exact privacy parameter δ of the released noise, recomputed by ``dpdro.certify_delta``
  independently of the LP (it must be ≤ δ);
* the benchmark values the tables compare with (truncated Laplace and analytic Gaussian expected
  losses, the near-optimal lower bound with each ``rounding`` variant) — these are closed forms, also
  recomputed live by the notebook;
* provenance: dpdro version, git commit (and whether the tree had local changes), date, machine,
  Python and HiGHS versions, seconds.

Cells are processed roughly cheapest first (see ``main``) and written as soon as they finish, so an
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
import datetime as _dt
import json
import math
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dpdro  # noqa: E402
from dpdro import benchmarks as bm  # noqa: E402

# The grids of Table 1 and Tables 4-6 (rows ε, columns δ), read from the paper (Section 5.1, Appendix D).
EPSILONS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
DELTAS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75]
LOSSES = ["l1", "l2"]
REL_GAP = 0.01
OUT = ROOT / "results" / "tables" / "cells"


def cell_name(loss: str, eps: float, delta: float) -> str:
    return f"{loss}_eps={eps:g}_delta={delta:g}.json"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # pragma: no cover - git missing
        return ""


def provenance() -> dict:
    try:
        import highspy

        highs_version = getattr(highspy, "__version__", "") or ""
    except Exception:  # pragma: no cover
        highs_version = ""
    if not highs_version:
        try:
            from importlib.metadata import version

            highs_version = version("highspy")
        except Exception:  # pragma: no cover
            highs_version = "unknown"
    status = _git("status", "--porcelain", "--", "dpdro")
    return {
        "dpdro_version": dpdro.__version__,
        "git_commit": _git("rev-parse", "HEAD"),
        "dpdro_package_modified_since_commit": bool(status),
        "python": platform.python_version(),
        "highspy": highs_version,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "host": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def benchmarks(eps: float, delta: float, loss: str) -> dict:
    tl = bm.TruncatedLaplace(epsilon=eps, delta=delta, sensitivity=1.0)
    ag = bm.AnalyticGaussian(epsilon=eps, delta=delta, sensitivity=1.0)
    return {
        "truncated_laplace": tl.expected_loss(loss),
        "analytic_gaussian": ag.expected_loss(loss),
        "nolb": bm.near_optimal_lower_bound(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss),
        "nolb_down": bm.near_optimal_lower_bound(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss, rounding="down"),
        "nolb_up": bm.near_optimal_lower_bound(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss, rounding="up"),
    }


def solve_cell(eps: float, delta: float, loss: str, time_limit: float, verbose: bool = False,
               atom: bool = False, options: dict | None = None) -> dict:
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
    options = dict(options or {})
    t0 = time.perf_counter()
    res = dpdro.optimal_noise(prob, rel_gap=REL_GAP, time_limit=time_limit, atom=atom, verbose=verbose, **options)
    seconds = time.perf_counter() - t0
    cert = dpdro.certify_delta(res.noise, eps, 1.0)
    last = res.history[-1] if res.history else {}
    return {
        "epsilon": eps,
        "delta": delta,
        "sensitivity": 1.0,
        "loss": loss,
        "rel_gap_target": REL_GAP,
        "time_limit": time_limit,
        "atom": atom,
        "atom_mass": res.noise.atom,
        "options": options,
        "upper": res.upper.value,
        "lower": res.lower.value,
        "gap": res.gap,
        "reached_target": bool(res.gap <= REL_GAP),
        "certified_delta": cert,
        "certified_ok": bool(cert <= delta),
        "seconds": seconds,
        "rounds": len(res.history),
        "k_upper": last.get("k_upper"),
        "upper_cells": res.partition.n_cells,
        "upper_beta": res.partition.beta,
        "lower_cells": last.get("lower_cells"),
        "lower_beta": last.get("lower_beta"),
        "benchmarks": benchmarks(eps, delta, loss),
        "provenance": provenance(),
    }


EXAMPLE1 = ROOT / "results" / "tables" / "example1_optimal.json"
EXAMPLE1_GAP = 0.005


def example1(path: Path = EXAMPLE1) -> None:
    """Optimal ℓ2 noise of Example 1 at Δf = 1 (scaled to the salary query in the notebook)."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, loss="l2")
    t0 = time.perf_counter()
    res = dpdro.optimal_noise(prob, rel_gap=EXAMPLE1_GAP)
    seconds = time.perf_counter() - t0
    cert = dpdro.certify_delta(res.noise, 1.0, 1.0)
    out = {
        "epsilon": 1.0, "delta": 0.2, "sensitivity": 1.0, "loss": "l2", "rel_gap_target": EXAMPLE1_GAP,
        "upper": res.upper.value, "lower": res.lower.value, "gap": res.gap,
        "reached_target": bool(res.gap <= EXAMPLE1_GAP), "certified_delta": cert,
        "certified_ok": bool(cert <= 0.2), "seconds": seconds, "rounds": len(res.history),
        "noise": json.loads(res.noise.to_json()), "provenance": provenance(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    print(f"example 1: P={res.upper.value:.7g} D={res.lower.value:.7g} gap={100 * res.gap:.3f}% "
          f"in {seconds:.1f}s cert_delta={cert:.6g}", flush=True)


def load_cells(out: Path = OUT) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]


def summary(out: Path = OUT) -> None:
    cells = load_cells(out)
    print(f"{len(cells)} cells stored in {out}")
    for c in sorted(cells, key=lambda c: (c["loss"], c["epsilon"], c["delta"])):
        flag = "" if c["reached_target"] else "  (target NOT reached)"
        print(f"{c['loss']} eps={c['epsilon']:<6g} delta={c['delta']:<6g} P={c['upper']:.6g} D={c['lower']:.6g} "
              f"gap={100 * c['gap']:.3f}% {c['seconds']:.1f}s cert_delta={c['certified_delta']:.6g}{flag}")


def main() -> None:
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
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--summary", action="store_true", help="print the stored cells and exit")
    ap.add_argument("--verbose", action="store_true", help="print optimal_noise's rounds")
    ap.add_argument("--no-example1", action="store_true", help="do not compute Example 1's noise first")
    ap.add_argument("--reverse", action="store_true",
                    help="most expensive cells first (a second process with this flag shares the work)")
    args = ap.parse_args()
    if args.summary:
        summary(args.out)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.no_example1 and not EXAMPLE1.exists():
        example1()
    losses = args.losses.split(",")
    options = {k: v for k, v in (("support_factor", args.support), ("lower_support_factor", args.lower_support),
                                 ("max_lower_shifts", args.lower_shifts), ("max_k", args.max_k),
                                 ("lower_coefficients", args.lower_coefficients)) if v is not None}
    todo = [(e, d, l) for e in EPSILONS for l in losses for d in DELTAS
            if args.min_eps <= e <= args.max_eps and d >= args.min_delta]
    # cheapest first: the LP sizes grow with the truncated-Laplace half-width A (in units of Δf), from
    # 0.67 at (ε, δ) = (0.005, 0.75) to 81 at (0.005, 0.005); the largest cells need many minutes
    # ε ≥ 2 later (the optimal density is spiky and needs fine upper-bound grids), δ ≥ 1/2 last (the optimal
    # noise then has an atom at 0, which piecewise-uniform bounds resolve slowly)
    todo.sort(key=lambda t: (t[1] >= 0.5, t[0] >= 2, round(dpdro.Problem(epsilon=t[0], delta=t[1]).truncated_laplace_half_width(), 1),
                             t[0], t[2]), reverse=args.reverse)
    for eps, delta, loss in todo:
        path = args.out / cell_name(loss, eps, delta)
        old = json.loads(path.read_text()) if path.exists() else None
        if old is not None and (old["reached_target"] or not args.retry):
            continue
        if (old is not None and old.get("time_limit", 0) >= args.time_limit and old.get("atom", False) == args.atom
                and old.get("options", {}) == options):
            continue  # already tried the same way with at least this much time
        if args.verbose:
            print(f"--- {loss} eps={eps:g} delta={delta:g}", flush=True)
        cell = solve_cell(eps, delta, loss, args.time_limit, args.verbose, args.atom, options)
        if old is not None and old["gap"] <= cell["gap"]:
            old["retried_with_time_limit"] = args.time_limit
            old["retried_with_atom"] = args.atom
            old["retried_with_options"] = options
            cell = old
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(cell, indent=1, sort_keys=True) + "\n")
        tmp.replace(path)
        print(f"{loss} eps={eps:g} delta={delta:g}: P={cell['upper']:.6g} D={cell['lower']:.6g} "
              f"gap={100 * cell['gap']:.3f}% in {cell['seconds']:.1f}s cert_delta={cell['certified_delta']:.4g}",
              flush=True)


if __name__ == "__main__":
    main()
