"""Figure 5 of the paper (Section 5.1): data-dependent noise for Φ = [0, 18) cut into 9 pieces of
length 2, Δf = 10, β = 0.5, ℓ1 loss, over the (ε, δ) panels of notebooks/24_figures4_5.ipynb
(ε ∈ {0.5, 1, 2, 5} × δ ∈ {0.05, 0.2, 0.5}, Table 1's grid; the paper's own panels are not in our text).

For every panel: P′(π, β) with the grouping of Algorithm G.1 (`dpdro.dd_upper_bound`, uniform weight on Φ)
on the noise support [−A′, A′ + β), A′ = ⌈A⌉ (A the truncated Laplace half-width), its released certified
mechanism (stored via `DataDependentMechanism.to_dict()`), the per-piece expected losses, and the
data-independent P(π, β) on the same partition.

Writes results/data_dependent/figure5.json after every panel (so an interrupted run keeps what it has),
with provenance. Usage:
    nice -n 10 .venv/bin/python scripts/run_data_dependent_figures.py [--panels 1:0.2,...]   # upper bounds (~6 min)
    nice -n 10 .venv/bin/python scripts/run_data_dependent_figures.py --lower                # then grouped D' (~2 min)
The second call adds `lower_grouped` (dd_lower_bound(..., grouped=True): a lower bound on the best family constant
on the 9 pieces with the same support) to the stored panels.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path


import dpdro
from _provenance import provenance  # noqa: E402  (scripts/_provenance.py)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "data_dependent"
EPSILONS = [0.5, 1.0, 2.0, 5.0]
DELTAS = [0.05, 0.2, 0.5]
DF, BETA, PHI, PIECES = 10.0, 0.5, (0.0, 18.0), 9
# the most informative panels first, so that a run cut short keeps them
ORDER = [(1.0, 0.2), (0.5, 0.05), (2.0, 0.5), (5.0, 0.2), (1.0, 0.05), (1.0, 0.5), (0.5, 0.2), (0.5, 0.5),
         (2.0, 0.05), (2.0, 0.2), (5.0, 0.05), (5.0, 0.5)]


def panel(eps: float, delta: float) -> dict:
    prob = dpdro.DataDependentProblem(epsilon=eps, delta=delta, sensitivity=DF, phi_lo=PHI[0], phi_hi=PHI[1],
                                      pieces=PIECES, loss="l1")
    A = prob.base_problem.truncated_laplace_half_width()
    L = int(math.ceil(A) / BETA)
    part = dpdro.Partition.uniform(L=L, beta=BETA)
    t0 = time.perf_counter()
    ub = dpdro.dd_upper_bound(prob, part)
    t_dd = time.perf_counter() - t0
    t1 = time.perf_counter()
    di = dpdro.upper_bound(prob.base_problem, part)
    t_di = time.perf_counter() - t1
    assert ub.certified_delta <= delta and di.certified_delta <= delta
    return dict(epsilon=eps, delta=delta, A=A, L=L, upper=ub.value, lp_value=ub.lp_value,
                piece_losses=ub.piece_losses.tolist(), weights=ub.weights.tolist(),
                certified_delta=ub.certified_delta, repair_weight=ub.repair_weight, iterations=ub.iterations,
                seconds=round(t_dd, 1), di_upper=di.value, di_certified_delta=di.certified_delta,
                di_probs=di.noise.probs.tolist(), di_seconds=round(t_di, 1), mechanism=ub.mechanism.to_dict())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--panels", default="", help="comma-separated eps:delta (default: all twelve)")
    ap.add_argument("--lower", action="store_true",
                    help="add the grouped lower bound D'(pi, beta) (best mechanism constant on the 9 pieces) "
                         "to the panels already stored")
    args = ap.parse_args()
    todo = [tuple(float(v) for v in s.split(":")) for s in args.panels.split(",") if s] or ORDER
    path = OUT / "figure5.json"
    data = json.loads(path.read_text()) if path.exists() else None
    if data is None:
        data = dict(sensitivity=DF, beta=BETA, phi=list(PHI), pieces=PIECES, loss="l1", weight="uniform",
                    support="[-ceil(A), ceil(A) + beta), A = truncated Laplace half-width",
                    epsilons=EPSILONS, deltas=DELTAS, panels=[])
    t_start = time.perf_counter()
    if args.lower:
        for eps, delta in todo:
            pnl = next(p for p in data["panels"] if (p["epsilon"], p["delta"]) == (eps, delta))
            prob = dpdro.DataDependentProblem(epsilon=eps, delta=delta, sensitivity=DF, phi_lo=PHI[0],
                                              phi_hi=PHI[1], pieces=PIECES, loss="l1")
            part = dpdro.Partition.uniform(L=pnl["L"], beta=BETA)
            t0 = time.perf_counter()
            lb = dpdro.dd_lower_bound(prob, part, grouped=True)
            pnl["lower_grouped"], pnl["lower_seconds"] = lb.value, round(time.perf_counter() - t0, 1)
            data["provenance_lower"] = provenance(time.perf_counter() - t_start, "run_data_dependent_figures.py --lower")
            path.write_text(json.dumps(data, indent=1))
            print(f"eps={eps:g} delta={delta:g}: grouped D'={lb.value:.4f} <= P'={pnl['upper']:.4f}, "
                  f"{pnl['lower_seconds']:.0f} s", flush=True)
        return
    for eps, delta in todo:
        data["panels"] = [p for p in data["panels"] if (p["epsilon"], p["delta"]) != (eps, delta)]
        res = panel(eps, delta)
        data["panels"].append(res)
        data["panels"].sort(key=lambda p: (p["epsilon"], p["delta"]))
        data["provenance"] = provenance(time.perf_counter() - t_start,
                                        "run_data_dependent_figures.py" + (f" --panels {args.panels}" if args.panels else ""))
        OUT.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1))
        print(f"eps={eps:g} delta={delta:g}: P'={res['upper']:.4f} (P={res['di_upper']:.4f}) "
              f"certified delta={res['certified_delta']:.4g}, {res['seconds']:.0f} s", flush=True)


if __name__ == "__main__":
    main()
