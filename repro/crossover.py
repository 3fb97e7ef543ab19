r"""k releases at a fixed total (ε, δ): when does the optimal single-shot noise stop beating the Gaussian?

A query of sensitivity Δf = 1 is answered k times (k independent releases, composed adaptively), and
the k answers together must be (ε_T, δ_T)-DP. Two strategies:

* **Analytic Gaussian.** k releases of N(0, σ²) compose exactly to one Gaussian release of a query
  with (ℓ2) sensitivity √k (the privacy loss of the k-fold product at the worst shift (1, …, 1) is
  that of N(0, σ²) at shift √k, and no adaptive sequence is worse: Dong, Roth and Su 2022,
  Corollary 3.3). So the smallest σ is the analytic Gaussian σ at (ε_T, δ_T) and sensitivity √k
  (:class:`dpdro.mechanisms.AnalyticGaussian`), exactly; dp_accounting's Gaussian PLD composed k times
  agrees (checked in the tests).
* **Optimal single-shot noise.** Split the budget by basic composition: each release gets
  (ε₀, δ₀) = (ε_T/k, δ_T/(2k)); k releases of an (ε₀, δ₀)-DP noise are (ε_T, δ_T/2)-DP, and the
  other half of δ_T is slack. X is the optimal (ε₀, δ₀) noise (:func:`dpdro.optimal_noise`, within
  its certified gap). The exact accounting may allow a narrower noise: the released noise is X/Δ with
  Δ = m·β ≤ 4 the largest multiple of X's grid step β for which k releases of X at sensitivity Δ
  (equivalently, of X/Δ at sensitivity 1), composed with the dominating-pair privacy loss
  distribution of :mod:`dpdro.composition` (valid for every shift |φ| ≤ Δf) in dp_accounting, are
  (ε_T, δ_T)-DP. Every number is certified: the noise's δ by :func:`dpdro.certify_delta`, the
  composition by the pessimistic PLD, the loss exactly.

The per-release losses E c(X₂/Δ₂) = E c(X₂)/Δ₂^p (p = 1 for ℓ1, 2 for ℓ2) and E c(N(0, σ²)) are
compared; ``ratio`` > 1 means the Gaussian is better.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import dpdro
from dpdro.composition import epsilon_for_composition
from dpdro.mechanisms import AnalyticGaussian

from .paths import RESULTS
from .provenance import provenance, read_json, write_json_atomic

__all__ = ["CROSSOVER", "gaussian_for_composition", "calibrated_sensitivity", "crossover_point", "compute_crossover",
           "load_crossover"]

CROSSOVER = RESULTS / "composition" / "crossover"
_POWER = {"l1": 1, "l2": 2}


def gaussian_for_composition(k: int, epsilon: float, delta: float) -> AnalyticGaussian:
    """The smallest Gaussian whose k-fold composition (sensitivity 1 each) is (ε, δ)-DP: the analytic
    Gaussian at sensitivity √k (module docstring)."""
    return AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=math.sqrt(k))


def calibrated_sensitivity(noise, k: int, epsilon: float, delta: float, *, start: int, max_m: int) -> int:
    """The largest m ≤ ``max_m`` such that k releases of ``noise`` at sensitivity m·β (β = noise.grid)
    compose to (ε, δ)-DP (0 if none does): doubling from m = ``start``, then bisection; composition is
    monotone in the sensitivity (a larger one allows more shifts)."""
    ok = lambda m: epsilon_for_composition(noise, m * noise.grid, k, delta) <= epsilon  # noqa: E731
    lo, hi = 0, start  # ok(lo) or lo = 0; hi untested
    while hi <= max_m and ok(hi):
        lo, hi = hi, min(2 * hi, max_m + 1) if hi < max_m else max_m + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def _design(epsilon: float, delta: float, loss: str, rel_gap: float, time_limit: float):
    return dpdro.optimal_noise(dpdro.Problem(epsilon=epsilon, delta=delta, loss=loss), rel_gap=rel_gap,
                               time_limit=time_limit)


def crossover_point(k: int, loss: str, epsilon: float, delta: float, *, rel_gap: float = 0.02,
                    time_limit: float = 60.0) -> dict:
    """One k: the two strategies of the module docstring, with every certified number and the noise."""
    t0 = time.perf_counter()
    eps0, delta0 = epsilon / k, delta / (2 * k)
    res = dpdro.optimal_noise(dpdro.Problem(epsilon=eps0, delta=delta0, loss=loss), rel_gap=rel_gap,
                              time_limit=time_limit)
    noise = res.noise
    steps = round(1 / noise.grid)
    m = calibrated_sensitivity(noise, k, epsilon, delta, start=steps, max_m=4 * steps)
    if m < steps:  # pragma: no cover - basic composition guarantees m = steps works
        raise RuntimeError(f"k = {k} releases of the ({eps0}, {delta0}) noise do not compose to ({epsilon}, {delta})")
    scale = m * noise.grid  # the release X/Δ at Δf = 1
    composed = epsilon_for_composition(noise, scale, k, delta)
    ours = noise.expected_loss(loss) / scale ** _POWER[loss]
    gauss = gaussian_for_composition(k, epsilon, delta)
    return {"k": k, "loss": loss, "epsilon_total": epsilon, "delta_total": delta, "epsilon0": eps0, "delta0": delta0,
            "design_upper": res.upper.value, "design_lower": res.lower.value, "design_gap": res.gap,
            "sensitivity_scale": scale, "composed_epsilon": composed, "loss_optimal_noise": ours,
            "gaussian_sigma": gauss.sigma, "loss_gaussian": gauss.expected_loss(loss),
            "ratio": ours / gauss.expected_loss(loss), "noise": noise.to_dict(),
            "provenance": provenance(seconds=time.perf_counter() - t0)}


def _path(out: Path, loss: str, k: int) -> Path:
    return out / f"{loss}_k={k}.json"


def compute_crossover(ks, losses=("l1", "l2"), *, epsilon: float = 4.0, delta: float = 1e-3, rel_gap: float = 0.02,
                      time_limit: float = 60.0, out: Path = CROSSOVER, verbose: bool = True) -> None:
    """:func:`crossover_point` for every k and loss, one JSON file each (atomic), skipping stored ones."""
    for loss in losses:
        for k in ks:
            path = _path(out, loss, k)
            if path.exists():
                continue
            row = crossover_point(k, loss, epsilon, delta, rel_gap=rel_gap, time_limit=time_limit)
            write_json_atomic(path, row)
            if verbose:
                print(f"{loss} k={k}: eps0={row['epsilon0']:.4g} ours={row['loss_optimal_noise']:.4g} "
                      f"gauss={row['loss_gaussian']:.4g} ratio={row['ratio']:.3f}", flush=True)


def load_crossover(out: Path = CROSSOVER) -> list[dict]:
    """The stored points, sorted by loss and k."""
    rows = [read_json(p) for p in sorted(out.glob("*.json"))]
    return sorted(rows, key=lambda r: (r["loss"], r["k"]))
