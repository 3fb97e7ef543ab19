"""Certified optimal (ε, δ) noise on a log grid of δ for chapter 41 (Figure 1 of Lin et al., extended).

For ε = 1, Δf = 1 and the ℓ1 and ℓ2 losses, :func:`compute` runs ``dpdro.optimal_noise`` on a log grid
of δ and stores the certified upper and lower bounds with provenance in
``results/41_optimal_noise_vs_delta.json`` (``scripts/related_optimal_noise.py``, about 10 minutes on
one core). The chapter loads the file and recomputes one point live.
"""

from __future__ import annotations

import time

import dpdro

from .paths import RESULTS
from .provenance import provenance, write_json_atomic

__all__ = ["EPSILON", "DELTAS", "REL_GAP", "TIME_LIMIT", "OUT", "point", "compute"]

OUT = RESULTS / "41_optimal_noise_vs_delta.json"
EPSILON = 1.0
DELTAS = [0.5, 0.2, 0.1, 0.05, 0.02, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10]
REL_GAP = 0.02
TIME_LIMIT = 90.0


def point(loss: str, delta: float, *, rel_gap: float = REL_GAP, time_limit: float | None = TIME_LIMIT) -> dict:
    """The certified bounds at one (loss, δ) (status "failed: ..." if the solve fails, e.g. for a δ below
    the LP solver's feasibility tolerance)."""
    t0 = time.perf_counter()
    row = dict(loss=loss, epsilon=EPSILON, delta=delta, sensitivity=1.0)
    try:
        res = dpdro.optimal_noise(dpdro.Problem(epsilon=EPSILON, delta=delta, loss=loss),
                                  rel_gap=rel_gap, time_limit=time_limit)
        row.update(upper=res.upper.value, lower=res.lower.value, gap=res.gap,
                   certified_delta=res.upper.certified_delta, status="ok")
    except Exception as exc:  # e.g. δ below the LP solver's feasibility tolerance
        row.update(upper=None, lower=None, gap=None, certified_delta=None,
                   status=f"failed: {type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def compute(out=OUT) -> dict:
    """Every (loss, δ) of the grid, written to ``out`` with provenance."""
    rows = []
    t_all = time.perf_counter()
    for loss in ("l1", "l2"):
        for delta in DELTAS:
            rows.append(point(loss, delta))
            print(rows[-1], flush=True)
    meta = provenance(time.perf_counter() - t_all, rel_gap=REL_GAP, time_limit=TIME_LIMIT,
                      script="scripts/related_optimal_noise.py")
    data = dict(meta=meta, rows=rows)
    write_json_atomic(out, data)
    return data
