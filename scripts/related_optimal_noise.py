"""Precompute certified optimal (ε, δ) noise for chapter 41 (Figure 1 of Lin et al., extended).

For ε = 1, Δf = 1 and the ℓ1 and ℓ2 losses, runs ``dpdro.optimal_noise`` on a log grid of δ and
stores the certified upper and lower bounds with provenance in
``results/41_optimal_noise_vs_delta.json``. The notebook loads the file and recomputes one point
live. Usage:  python scripts/related_optimal_noise.py  (about 10 minutes on one core).
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
import time
from pathlib import Path

import dpdro

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "41_optimal_noise_vs_delta.json"
EPSILON = 1.0
DELTAS = [0.5, 0.2, 0.1, 0.05, 0.02, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10]
REL_GAP = 0.02
TIME_LIMIT = 90.0


def main() -> None:
    rows = []
    t_all = time.perf_counter()
    for loss in ("l1", "l2"):
        for delta in DELTAS:
            t0 = time.perf_counter()
            row = dict(loss=loss, epsilon=EPSILON, delta=delta, sensitivity=1.0)
            try:
                res = dpdro.optimal_noise(dpdro.Problem(epsilon=EPSILON, delta=delta, loss=loss),
                                          rel_gap=REL_GAP, time_limit=TIME_LIMIT)
                row.update(upper=res.upper.value, lower=res.lower.value, gap=res.gap,
                           certified_delta=res.upper.certified_delta, status="ok")
            except Exception as exc:  # e.g. δ below the LP solver's feasibility tolerance
                row.update(upper=None, lower=None, gap=None, certified_delta=None,
                           status=f"failed: {type(exc).__name__}: {exc}")
            row["seconds"] = round(time.perf_counter() - t0, 2)
            rows.append(row)
            print(row, flush=True)
    meta = dict(dpdro_version=dpdro.__version__, python=sys.version.split()[0], machine=platform.platform(),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                rel_gap=REL_GAP, time_limit=TIME_LIMIT, seconds=round(time.perf_counter() - t_all, 1),
                script="scripts/related_optimal_noise.py")
    OUT.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
