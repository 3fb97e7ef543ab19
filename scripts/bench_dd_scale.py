"""Benchmark: ``dd.optimal_noise`` across the scale Δf and the position of Φ, against a baseline
source tree (e.g. ``git archive main``), both in the same run, instance by instance, alternating.

Every instance is P′ with a uniform weight (``--fallback``: a cap Δf^d, or a piecewise-constant
weight with an edge at φ_lo + 1.1Δf: problems solved at their own scale), δ = 0.1, Φ = [φ_lo,
φ_lo + 3Δf), solved with ``rel_gap=0.05, time_limit=30``; each variant runs in its own process
(``PYTHONPATH`` = its tree).
Prints per instance and variant the load, the wall and CPU seconds, why it stopped, the gap and the
bounds divided by Δf^d (the unit problem's values when the map is exact), and the ratio of the wall
times. Writes nothing.

    .venv/bin/python scripts/bench_dd_scale.py BASELINE_TREE [--quick | --fallback]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _worker(spec: dict) -> dict:
    from dpdro import data_dependent as dd

    s, lo = spec["sensitivity"], spec["phi_lo"]
    extra = {}
    if spec.get("fallback") == "cap":
        extra = dict(cap=s ** (1 if spec["loss"] == "l1" else 2))
    elif spec.get("fallback") == "weight":  # an edge at 1.1Δf: not a float exactly over Δf
        extra = dict(weight=([lo, lo + 1.1 * s, lo + 3 * s], [1.0, 2.0]))
    prob = dd.Problem(epsilon=spec["epsilon"], delta=0.1, sensitivity=s, loss=spec["loss"],
                      phi_lo=lo, phi_hi=lo + 3 * s, **extra)
    power = s ** prob.loss.degree
    w, c = time.perf_counter(), time.process_time()
    try:
        res = dd.optimal_noise(prob, rel_gap=0.05, time_limit=30)
    except Exception as exc:  # noqa: BLE001 - reported, not hidden
        return dict(error=f"{type(exc).__name__}: {str(exc)[:80]}",
                    wall=time.perf_counter() - w)
    return dict(
        wall=time.perf_counter() - w, cpu=time.process_time() - c, stopped=res.stopped,
        gap=res.gap, upper=None if res.upper is None else res.upper.value / power,
        lower=None if res.lower is None else res.lower.value / power, steps=len(res.history),
        certified=None if res.upper is None else res.mechanism.certify(), source=dd.__file__,
    )


def _run(tree: str, spec: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)], env=env, capture_output=True,
        text=True, check=False, cwd="/tmp",
    )
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return dict(error=(out.stderr or out.stdout)[-200:])


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"ERROR {r['error']} ({r.get('wall', 0):.1f} s)"
    up = "-" if r["upper"] is None else f"{r['upper']:.6f}"
    lo = "-" if r["lower"] is None else f"{r['lower']:.6f}"
    return (f"{r['wall']:5.1f} s (cpu {r['cpu']:5.1f}) {r['stopped']:<10} "
            f"gap {100 * r['gap']:6.2f}% {up} / {lo}  steps {r['steps']}  δ {r['certified']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--quick", action="store_true", help="only the instances of issue 26's table")
    ap.add_argument("--fallback", action="store_true",
                    help="only problems solved at their own scale (a cap, a callable weight)")
    ap.add_argument("--worker")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(_worker(json.loads(args.worker))))
        return
    table = [(2.0, "l1", 1.0, 0.0), (2.0, "l1", 1e6, 0.0), (2.0, "l1", 1e-3, 0.0),
             (0.5, "l1", 1.0, 0.0), (0.5, "l1", 1e-3, 0.0)]
    grid = [(eps, loss, s, lo) for eps, loss, s, lo in itertools.product(
        (0.5, 2.0), ("l1", "l2"), (1e-3, 1.0, 7.5, 1e6), (0.0, 1e6)) if (eps, loss, s, lo)
        not in table]
    variants = {"baseline": args.baseline, "branch": str(HERE)}
    specs = [dict(epsilon=eps, loss=loss, sensitivity=s, phi_lo=lo)
             for eps, loss, s, lo in table + ([] if args.quick else grid)]
    if args.fallback:
        specs = [dict(epsilon=2.0, loss="l1", sensitivity=s, phi_lo=0.0, fallback=f)
                 for f in ("cap", "weight") for s in (1.0, 1e-3)]
    for spec in specs:
        eps, loss, s, lo = (spec[k] for k in ("epsilon", "loss", "sensitivity", "phi_lo"))
        print(f"ε={eps} {loss} Δf={s:g} Φ=[{lo:g}, {lo:g}+3Δf) {spec.get('fallback', '')} "
              f"load {os.getloadavg()}", flush=True)
        walls = {}
        for name, tree in variants.items():
            r = _run(tree, spec)
            assert "source" not in r or r["source"].startswith(tree), (r["source"], tree)
            walls[name] = r.get("wall")
            print(f"    {name:<8} {_fmt(r)}", flush=True)
        if all(walls.values()):
            print(f"    wall branch/baseline {walls['branch'] / walls['baseline']:.2f}", flush=True)


if __name__ == "__main__":
    main()
