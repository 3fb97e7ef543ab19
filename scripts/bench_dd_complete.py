"""Benchmark: the data-dependent mechanisms of the ML chapters (results/ml/dd_mechanisms.json)
solved by ``dd.upper_bound`` with Algorithm 1's rounds of cuts from the empty relaxation ("rounds",
the default), from the complete P′ solved by the interior-point method ("complete-full",
``complete=True`` with the seed from the grid 2β switched off) and as ``complete=True`` does it
("complete": seeded from the grid 2β where that applies), in the same run, entry by entry.

Prints for every entry and variant the wall and CPU seconds (and the load), Algorithm 1's rounds,
simplex iterations and LP rows, the value, and the relative differences of the value and of the
piece losses from the cached entry. Writes nothing (the cache is not touched).

    .venv/bin/python scripts/bench_dd_complete.py [--skip-rounds] [substring of the entry names ...]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from dpdro import Partition
from dpdro import data_dependent as dd
from dpdro.data_dependent import bounds
from repro.experiments import data_dependent as ex
from repro.provenance import read_json

CACHE = Path(__file__).resolve().parents[1] / "results" / "ml" / "dd_mechanisms.json"


def _pcd(n0: float, design: str, L: int, beta: float, kind: str):
    e = ex.pcd_dd_edges(n0, design)
    prob = dd.Problem(
        epsilon=1.0, delta=0.1, sensitivity=2.0,
        loss=ex.coordinate_descent_losses(e, knee=1.0, slope=1000.0),
        phi_lo=float(e[0]), phi_hi=float(e[-1]), pieces=e, weight=ex.equal_mass_weight(e),
    )
    desc = dict(
        kind=kind, epsilon=1.0, delta=0.1, sensitivity=2.0,
        loss="coordinate_descent_losses(knee=1, slope=1000)",
        phi=[float(e[0]), float(e[-1])], piece_edges=e.tolist(), weight="equal mass per piece",
        partition=dict(L=L, beta=beta),
    )
    return prob, Partition.uniform(L=L, beta=beta), desc


def _nb_from(desc: dict):
    """The naive Bayes problem of a cached description (ℓ1, equal mass per piece)."""
    e = np.asarray(desc["piece_edges"], dtype=float)
    prob = dd.Problem(
        epsilon=desc["epsilon"], delta=desc["delta"], sensitivity=desc["sensitivity"], loss="l1",
        phi_lo=float(e[0]), phi_hi=float(e[-1]), pieces=e, weight=ex.equal_mass_weight(e),
    )
    return prob, Partition.uniform(**desc["partition"]), desc


def build(key: str):
    """``(problem, partition, description)`` of a cache entry, as its experiment builds it."""
    if key.startswith("nb_"):
        R = float(key.split("_R=")[1].split("_")[0])
        design = "centre" if key.endswith("_centre") else ex.NB_DD_DESIGN
        return ex.NBDDFamily(1.0, 0.1, design=design, cache=None).build_problem(R)
    if key.startswith("check_pcd_wide_support"):
        return _pcd(6.0, "seven", 40, 0.2,
                    "coordinate descent (OPT), check with a wider noise support")
    design = "appendix42" if key.endswith("_design=appendix42") else "seven"
    spec = ex.PCD_DD_DESIGNS[design]
    return _pcd(spec["n0"], design, spec["L"], spec["beta"], "coordinate descent (OPT)")


VARIANTS = {"rounds": (False, True), "complete-full": (True, False), "complete": (True, True)}


def run(prob, part, variant: str):
    complete, coarse = VARIANTS[variant]
    threshold = bounds._COARSE_MIN_ROWS
    bounds._COARSE_MIN_ROWS = threshold if coarse else np.inf
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        ub = dd.upper_bound(prob, part, complete=complete)
        return ub, time.perf_counter() - t0, time.process_time() - c0
    finally:
        bounds._COARSE_MIN_ROWS = threshold


def main(patterns: list[str], skip_rounds: bool = False) -> None:
    store = read_json(CACHE)
    for key, entry in store.items():
        if patterns and not any(p in key for p in patterns):
            continue
        prob, part, desc = build(key)
        if desc != entry["provenance"]["problem"] and key.startswith("nb_"):
            # an entry of an earlier piece design (its description names the edges)
            prob, part, desc = _nb_from(entry["provenance"]["problem"])
            print(f"{key}: the cached description's edges (not the current design's)")
        if desc != entry["provenance"]["problem"]:
            print(f"{key}: rebuilt problem differs from the cached description; skipped")
            continue
        stored = entry["provenance"]
        print(f"{key} (stored {stored['seconds']:.2f} s)")
        times = {}
        for name in VARIANTS:
            if skip_rounds and name == "rounds":
                continue
            load = os.getloadavg()[0]
            ub, wall, cpu = run(prob, part, name)
            times[name] = wall
            dv = abs(ub.value - stored["value"]) / abs(stored["value"])
            dl = np.max(np.abs(ub.piece_losses - np.asarray(stored["piece_losses"]))
                        / np.abs(np.asarray(stored["piece_losses"])))
            print(f"  {name:13s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  load {load:4.2f}  rounds "
                  f"{ub.iterations:3d}  simplex {ub.simplex_iterations:7d}  value {ub.value:.12g}  "
                  f"rel. diff value {dv:.1e}, piece losses {dl:.1e}  certified δ "
                  f"{ub.mechanism.certify():.12g}", flush=True)
        base = "complete-full" if skip_rounds else "rounds"
        print(f"  ratio {base}/complete {times[base] / times['complete']:.2f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("patterns", nargs="*", help="substrings of the entry names (default: all)")
    ap.add_argument("--skip-rounds", action="store_true",
                    help="leave out the rounds from the empty relaxation (465 s on the 42 pieces)")
    args = ap.parse_args()
    main(args.patterns, args.skip_rounds)
