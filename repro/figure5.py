"""Figure 5 of the paper (Section 5.1): data-dependent noise on Φ = [0, 18) cut into 9 pieces of length 2.

Δf = 10, β = 0.5, ℓ1 loss, over the (ε, δ) panels of chapter 24_figures4_5 (ε ∈ {0.5, 1, 2, 5} ×
δ ∈ {0.05, 0.2, 0.5}, Table 1's grid; the paper's own panels are not in our text). For every panel
(:func:`panel`): P′(π, β) with the grouping of Algorithm G.1 (``dpdro.data_dependent.upper_bound``,
uniform weight on Φ) on the noise support [−A′, A′ + β), A′ = ⌈A⌉ (A the truncated Laplace
half-width), its released certified mechanism (``Mechanism.to_dict()``), the per-piece expected
losses, and the data-independent P(π, β) on the same partition; :func:`compute` adds D′(π, β) with
``grouped=True`` (a lower bound on the best family constant on the 9 pieces; the larger of D′_R
and D′, ``dd.lower_bound``'s default). The sweep family
:data:`FAMILY` (``scripts/sweep.py figure5``, or ``scripts/run_data_dependent_figures.py``) stores one
file per panel under ``results/sweep/figure5/`` and assembles ``results/data_dependent/figure5.json``
with provenance.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import dpdro
from dpdro import data_dependent as dd
from dpdro.mechanisms import truncated_laplace_half_width

from .paths import RESULTS
from .provenance import provenance, write_json_atomic
from .sweep import Family, Option, load_result, parse_panels, task_dir

__all__ = ["EPSILONS", "DELTAS", "DF", "BETA", "PHI", "PIECES", "ORDER", "FIGURE5", "FAMILY", "problem", "partition",
           "panel", "compute", "merge"]

EPSILONS = [0.5, 1.0, 2.0, 5.0]
DELTAS = [0.05, 0.2, 0.5]
DF, BETA, PHI, PIECES = 10.0, 0.5, (0.0, 18.0), 9
# the most informative panels first, so that a run cut short keeps them
ORDER = [(1.0, 0.2), (0.5, 0.05), (2.0, 0.5), (5.0, 0.2), (1.0, 0.05), (1.0, 0.5), (0.5, 0.2), (0.5, 0.5),
         (2.0, 0.05), (2.0, 0.2), (5.0, 0.05), (5.0, 0.5)]
FIGURE5 = RESULTS / "data_dependent" / "figure5.json"


def problem(eps: float, delta: float) -> dd.Problem:
    """P′ of a panel: Δf = 10, Φ = [0, 18) in 9 pieces, ℓ1 loss, uniform weight."""
    return dd.Problem(epsilon=eps, delta=delta, sensitivity=DF, phi_lo=PHI[0], phi_hi=PHI[1], pieces=PIECES, loss="l1")


def partition(eps: float, delta: float) -> dpdro.Partition:
    """Cells of width β on [−⌈A⌉, ⌈A⌉ + β), A the truncated Laplace half-width."""
    A = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=DF)
    return dpdro.Partition.uniform(L=int(math.ceil(A) / BETA), beta=BETA)


def panel(eps: float, delta: float) -> dict:
    """P′(π, β) and its certified mechanism, and the data-independent P(π, β), for one panel."""
    prob = problem(eps, delta)
    A = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=DF)
    part = partition(eps, delta)
    t0 = time.perf_counter()
    ub = dd.upper_bound(prob, part)
    t_dd = time.perf_counter() - t0
    t1 = time.perf_counter()
    di = dpdro.upper_bound(prob.base_problem, part)
    t_di = time.perf_counter() - t1
    if not (ub.certified_delta <= delta and di.certified_delta <= delta):  # pragma: no cover - certified releases
        raise RuntimeError("a released noise is not private")
    return dict(epsilon=eps, delta=delta, A=A, L=part.L, upper=ub.value, lp_value=ub.lp_value,
                piece_losses=ub.piece_losses.tolist(), weights=ub.weights.tolist(),
                certified_delta=ub.certified_delta, repair_weight=ub.repair_weight, iterations=ub.iterations,
                seconds=round(t_dd, 1), di_upper=di.value, di_certified_delta=di.certified_delta,
                di_probs=di.noise.probs.tolist(), di_seconds=round(t_di, 1), mechanism=ub.mechanism.to_dict())


CI_PANELS = [(1.0, 0.2), (2.0, 0.5)]


def _tasks(root: Path, scale: str, opts: dict) -> list:
    """One task per panel, the most informative first (:data:`ORDER`)."""
    panels = parse_panels(opts["panels"], ORDER if scale == "paper" else CI_PANELS)
    return [FAMILY.task(f"eps={e:g}_delta={d:g}", {"epsilon": e, "delta": d},
                        task_dir(root, "figure5") / f"eps={e:g}_delta={d:g}.json") for e, d in panels]


def compute(params: dict) -> dict:
    """One panel: :func:`panel` (P′ with its released mechanism, the data-independent P with its noise)
    and the grouped lower bound D′(π, β) (``lower_grouped``, ``lower_seconds``)."""
    eps, delta = params["epsilon"], params["delta"]
    out = panel(eps, delta)
    t0 = time.perf_counter()
    # dd.lower_bound's default: the larger of the randomized-rounding bound D′_R and D′ of
    # Proposition 7 (cell infima), both grouped
    lb = dd.lower_bound(problem(eps, delta), partition(eps, delta), grouped=True)
    out["lower_grouped"], out["lower_seconds"] = lb.value, round(time.perf_counter() - t0, 1)
    out["lower_coefficients"] = lb.coefficients
    return out


def merge(root: Path, tasks: list, scale: str, opts: dict) -> list:
    """``data_dependent/figure5.json`` from the per-panel files (panels sorted by (ε, δ))."""
    panels, up, low = [], 0.0, 0.0
    for t in tasks:
        r = load_result(t)
        panels.append({k: v for k, v in r.items() if k not in ("provenance", "task")})
        up += r["provenance"].get("seconds", 0.0) - r["lower_seconds"]
        low += r["lower_seconds"]
    panels.sort(key=lambda p: (p["epsilon"], p["delta"]))
    data = dict(sensitivity=DF, beta=BETA, phi=list(PHI), pieces=PIECES, loss="l1", weight="uniform",
                support="[-ceil(A), ceil(A) + beta), A = truncated Laplace half-width",
                epsilons=EPSILONS, deltas=DELTAS, panels=panels, provenance=provenance(up),
                provenance_lower=provenance(low))
    out = root / FIGURE5.relative_to(RESULTS)
    write_json_atomic(out, data)
    return [out]


FAMILY = Family(name="figure5", title="Figure 5: data-dependent noise, one task per panel (P′ and grouped D′)",
                list_tasks=_tasks, compute=compute, merge=merge, options=(Option("panels", "only these panels"),))
