"""Certified optimal (ε, δ) noise on a log grid of δ for chapter 41 (Figure 1 of Lin et al., extended).

For ε = 1, Δf = 1 and the ℓ1 and ℓ2 losses, :func:`point` runs ``dpdro.optimal_noise`` on a log grid
of δ; the sweep family :data:`FAMILY` (``scripts/sweep.py optimal-vs-delta``, or
``scripts/related_optimal_noise.py``; about 10 minutes on one core) stores each (loss, δ) with its
released noise under ``results/sweep/optimal-vs-delta/`` and the certified upper and lower bounds with
provenance in ``results/41_optimal_noise_vs_delta.json``. The chapter loads the file and recomputes
one point live.
"""

from __future__ import annotations

import time
from pathlib import Path

import dpdro

from .paths import RESULTS
from .provenance import provenance, write_json_atomic
from .sweep import Family, Option, load_result, task_dir

__all__ = ["EPSILON", "DELTAS", "REL_GAP", "TIME_LIMIT", "OUT", "FAMILY", "point", "compute", "merge"]

OUT = RESULTS / "41_optimal_noise_vs_delta.json"
EPSILON = 1.0
DELTAS = [0.5, 0.2, 0.1, 0.05, 0.02, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10]
REL_GAP = 0.02
TIME_LIMIT = 90.0


def point(loss: str, delta: float, *, rel_gap: float = REL_GAP, time_limit: float | None = TIME_LIMIT,
          keep_noise: bool = False) -> dict:
    """The certified bounds at one (loss, δ) (status "failed: ..." if the solve fails, e.g. for a δ below
    the LP solver's feasibility tolerance). ``keep_noise``: also the released noise (``noise``)."""
    t0 = time.perf_counter()
    row = dict(loss=loss, epsilon=EPSILON, delta=delta, sensitivity=1.0)
    try:
        res = dpdro.optimal_noise(dpdro.Problem(epsilon=EPSILON, delta=delta, loss=loss),
                                  rel_gap=rel_gap, time_limit=time_limit)
        row.update(upper=res.upper.value, lower=res.lower.value, gap=res.gap,
                   certified_delta=res.upper.certified_delta, status="ok")
        if keep_noise:
            row["noise"] = res.noise.to_dict()
    except Exception as exc:  # e.g. δ below the LP solver's feasibility tolerance
        row.update(upper=None, lower=None, gap=None, certified_delta=None,
                   status=f"failed: {type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


CI_DELTAS = [0.2, 0.05]
CI_REL_GAP = 0.05


def _tasks(root: Path, scale: str, opts: dict) -> list:
    """One task per (loss, δ)."""
    rel_gap = opts["rel_gap"] or (REL_GAP if scale == "paper" else CI_REL_GAP)
    time_limit = opts["time_limit"] or TIME_LIMIT
    deltas = DELTAS if scale == "paper" else CI_DELTAS
    return [FAMILY.task(f"{loss}_delta={d:g}", dict(loss=loss, delta=d, rel_gap=rel_gap, time_limit=time_limit),
                        task_dir(root, "optimal-vs-delta") / f"{loss}_delta={d:g}.json")
            for loss in ("l1", "l2") for d in deltas]


def compute(params: dict) -> dict:
    """One (loss, δ): :func:`point` with the released noise."""
    return point(params["loss"], params["delta"], rel_gap=params["rel_gap"], time_limit=params["time_limit"],
                 keep_noise=True)


def merge(root: Path, tasks: list, scale: str, opts: dict) -> list:
    """``41_optimal_noise_vs_delta.json``: the rows (without the noises, which stay in the per-task files)."""
    rows, seconds = [], 0.0
    for t in tasks:
        r = load_result(t)
        seconds += r["provenance"].get("seconds", 0.0)
        rows.append({k: v for k, v in r.items() if k not in ("noise", "provenance", "task")})
    meta = provenance(seconds, rel_gap=tasks[0].params["rel_gap"], time_limit=tasks[0].params["time_limit"],
                      script="scripts/sweep.py optimal-vs-delta")
    out = root / OUT.relative_to(RESULTS)
    write_json_atomic(out, dict(meta=meta, rows=rows))
    return [out]


FAMILY = Family(name="optimal-vs-delta", title="Chapter 41: certified optimal noise on a log grid of δ, one task "
                "per (loss, δ)", list_tasks=_tasks, compute=compute, merge=merge,
                options=(Option("rel_gap", "target relative gap", float),
                         Option("time_limit", "seconds per solve", float)))
