"""Benchmark how closely ``time_limit`` is honoured: wall time over the limit, case by case.

Cases: every loss kind (ℓ1, ℓ2, pinball τ = 0.8, the asymmetric loss |x| + 1[x > 0]·|x|, powers
|x|^1.5 and |x|^3, a bounded callable min(|x|, 3) evaluated point by point, one-sided ℓ1 noise
``support=(0, inf)`` and monotone ℓ1 noise), each at the limits 0.1, 1 and 5 s with ε log-uniform in
[1e-4, 10], δ log-uniform in [1e-12, 0.9] and Δf in {1, 7.5, 1e-3} drawn from ``--seed``; the
corners where overruns were found (ε = 1e-4 with δ = 1e-12 and 1e-6, pinball and the asymmetric
loss at ε = 8, the callable at ε = 1, limits of 0.01 s); and data-dependent calls
(:func:`dpdro.data_dependent.optimal_noise`) at 5 s. Every call asks for ``rel_gap=1e-4`` (which
none reaches quickly, so the limit, not the gap, ends it).

Each case runs in a fresh interpreter (no cache of an earlier case helps it: the staircase's best
plateau for a loss is remembered within a process), after one small call that loads the lazily
imported modules; the time is that of the call alone. With ``--against DIR`` every case is run a
second time, right after, with the ``dpdro`` of the source tree DIR (e.g. the main branch's
checkout): both columns are then measured under the same load. Printed per case: the limit, the
wall time and its ratio to the limit (and the same for DIR), the certified gap reached, the load
average; then the largest ratio of each column.

Usage::

    nice -n 5 python scripts/benchmark_time_limits.py [--seed 14] [--against /work/main]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SEED = 14
LIMITS = (0.1, 1.0, 5.0)
KINDS = ("l1", "l2", "pinball", "asymmetric", "power1.5", "power3", "callable", "one-sided",
         "monotone")
SENSITIVITIES = (1.0, 7.5, 1e-3)


def capped_abs(x):
    """The callable loss of the benchmark: min(|x|, 3), a user's Python function."""
    return min(abs(x), 3.0)


def cases(seed: int = SEED) -> list[dict]:
    """The cases of the module docstring, in order."""
    rng = np.random.default_rng(seed)
    out = []
    for kind in KINDS:
        for limit in LIMITS:
            out.append(dict(
                kind=kind,
                epsilon=float(math.exp(rng.uniform(math.log(1e-4), math.log(10.0)))),
                delta=float(math.exp(rng.uniform(math.log(1e-12), math.log(0.9)))),
                sensitivity=float(SENSITIVITIES[rng.integers(len(SENSITIVITIES))]),
                limit=limit,
            ))
    corners = [
        ("l1", 1e-4, 1e-12, 1.0, 2.0), ("l1", 1e-4, 1e-6, 1.0, 2.0), ("l2", 1e-4, 1e-9, 1.0, 1.0),
        ("pinball", 8.0, 1e-3, 1.0, 1.0), ("asymmetric", 8.0, 1e-6, 1.0, 1.0),
        ("asymmetric", 10.0, 0.9, 1.0, 0.1), ("callable", 1.0, 1e-3, 1.0, 1.0),
        ("callable", 5.0, 1e-6, 7.5, 5.0), ("l1", 1.0, 1e-3, 1.0, 0.01),
        ("l2", 8.0, 1e-9, 1.0, 0.01), ("pinball", 3.0, 1e-12, 1e-3, 0.01),
    ]
    for kind, eps, delta, sens, limit in corners:
        out.append(dict(kind=kind, epsilon=eps, delta=delta, sensitivity=sens, limit=limit))
    for eps, delta, phi_hi in ((1.0, 0.1, 3.0), (5.0, 0.25, 2.0), (0.5, 1e-6, 4.0)):
        out.append(dict(kind="data-dependent l1", epsilon=eps, delta=delta, sensitivity=1.0,
                        phi_hi=phi_hi, limit=5.0))
    return out


def _loss(kind: str):
    import dpdro

    return {
        "pinball": dpdro.Pinball(tau=0.8), "asymmetric": dpdro.asymmetric_loss(),
        "power1.5": dpdro.PowerLoss(1.5), "power3": dpdro.PowerLoss(3.0), "callable": capped_abs,
        "l2": "l2",
    }.get(kind, "l1")


def run_case(case: dict) -> dict:
    """One case in this interpreter: the wall time of the call and the gap reached."""
    import dpdro
    from dpdro import data_dependent as dd

    dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=0.1), time_limit=1.0)  # lazy imports
    kind = case["kind"]
    if kind.startswith("data-dependent"):
        problem = dd.Problem(epsilon=case["epsilon"], delta=case["delta"],
                             sensitivity=case["sensitivity"], phi_lo=0.0, phi_hi=case["phi_hi"])
        call = dd.optimal_noise
    else:
        problem = dpdro.Problem(
            epsilon=case["epsilon"], delta=case["delta"], sensitivity=case["sensitivity"],
            loss=_loss(kind), monotone=kind == "monotone",
            support=(0.0, math.inf) if kind == "one-sided" else None,
        )
        call = dpdro.optimal_noise
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        gap = call(problem, rel_gap=1e-4, time_limit=case["limit"]).gap
        error = None
    except Exception as exc:  # reported, not hidden: a refusal is an outcome too
        gap, error = math.nan, f"{type(exc).__name__}: {exc}"[:80]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(wall=wall, cpu=cpu, gap=gap, error=error, module=dpdro.__file__)


def in_subprocess(case: dict, source: str | None) -> dict:
    """:func:`run_case` in a fresh interpreter, importing ``dpdro`` from ``source`` if given."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, __file__, "--case", json.dumps(case)],
        env=env, capture_output=True, text=True, check=True,
        cwd=source or Path(__file__).resolve().parents[1],
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if source is not None and not res["module"].startswith(str(Path(source).resolve())):
        raise RuntimeError(f"dpdro was imported from {res['module']}, not from {source}")
    return res


def _cell(res: dict, limit: float) -> str:
    gap = "error" if res["error"] else f"{100 * res['gap']:.3g}%"
    return f"{res['wall']:7.3f} {res['wall'] / limit:6.2f} {gap:>9}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--against", help="a second source tree timed on every case right after")
    parser.add_argument("--only", type=int, nargs="*", help="run only these case numbers")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # worker mode: one case as JSON
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return 0
    todo = cases(args.seed)
    head = f"{'#':>2} {'case':<18} {'eps':>8} {'delta':>8} {'sens':>6} {'limit':>5} |"
    head += "    wall  ratio       gap"
    if args.against:
        head += " | against: wall  ratio       gap"
    print(f"seed {args.seed}; load at start {os.getloadavg()}")
    print(head + " | load")
    worst, worst_against = (0.0, None), (0.0, None)
    for i, case in enumerate(todo):
        if args.only and i not in args.only:
            continue
        res = in_subprocess(case, None)
        line = (f"{i:2d} {case['kind']:<18} {case['epsilon']:8.3g} {case['delta']:8.2g} "
                f"{case['sensitivity']:6.3g} {case['limit']:5.2g} | {_cell(res, case['limit'])}")
        worst = max(worst, (res["wall"] / case["limit"], i))
        if args.against:
            other = in_subprocess(case, args.against)
            line += f" |        {_cell(other, case['limit'])}"
            worst_against = max(worst_against, (other["wall"] / case["limit"], i))
        errors = [r["error"] for r in ([res] + ([other] if args.against else [])) if r["error"]]
        print(f"{line} | {os.getloadavg()[0]:.2f}" + "".join(f"  [{e}]" for e in errors),
              flush=True)
    print(f"largest ratio: {worst[0]:.2f} (case {worst[1]})")
    if args.against:
        print(f"largest ratio against {args.against}: {worst_against[0]:.2f} (case "
              f"{worst_against[1]})")
    print(f"load at end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
