r"""k releases under a total (ε, δ): when is the Gaussian the better choice than optimal noise?

A query of sensitivity Δf = 1 is answered k times (possibly adaptively), and the k answers together
must be (ε_T, δ_T)-DP. :func:`dpdro.composition.design_for_releases` builds both plans and says
which has the smaller expected loss per release:

* the analytic Gaussian at sensitivity √k (Gaussian noise composes exactly: k releases are one
  release of a query of sensitivity √k), its composed δ exact;
* the certified optimal noise at per-release budgets (ε₀, δ₀) searched from basic composition's
  (ε_T/k, f·δ_T/k) upward, each candidate accounted by the dominating-pair privacy loss distribution
  composed k times in dp_accounting (valid for every shift, exact at the grid points).

The study (:data:`FAMILY`, one task per loss, ε_T and k; ``scripts/run_crossover.py``) covers k in
:data:`KS`, ε_T in :data:`EPSILONS` and δ_T = :data:`DELTA`, for E|X| and E X²; each task's file
under ``results/composition/crossover/`` holds both plans, the search history and the released noise
(so a reader can re-certify it), with provenance. Chapter "Composing many releases" loads them.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from pathlib import Path

from dpdro.composition import DominatingPair, design_for_releases

from .paths import RESULTS
from .provenance import provenance, read_json
from .sweep import Family, Option

__all__ = [
    "KS",
    "EPSILONS",
    "DELTA",
    "LOSSES",
    "OUT",
    "FAMILY",
    "crossover_point",
    "load_crossover",
    "privacy_buckets_pld",
]

KS = (1, 2, 3, 5, 7, 10, 15, 20, 50, 100)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
DELTA = 1e-5
LOSSES = ("l1", "l2")
OUT = RESULTS / "composition" / "crossover"
_CI = {"ks": (1, 10), "epsilons": (1.0,)}


def crossover_point(k: int, epsilon: float, delta: float, loss: str) -> dict:
    """One (k, ε_T, δ_T, loss): :func:`dpdro.composition.design_for_releases` with its defaults, as
    JSON."""
    t0 = time.perf_counter()
    d = design_for_releases(k, epsilon, delta, loss=loss)
    n, g = d.noise, d.gaussian
    return {
        "k": k,
        "epsilon": epsilon,
        "delta": delta,
        "loss": loss,
        "winner": d.mechanism,
        "ratio": d.ratio,
        "gaussian": {
            "sigma": g.sigma,
            "expected_loss": g.expected_loss,
            "composed_delta": g.composed_delta,
        },
        "optimal_noise": None
        if n is None
        else {
            "epsilon0": n.epsilon,
            "delta0": n.delta,
            "expected_loss": n.expected_loss,
            "composed_delta": n.composed_delta,
            "noise": n.noise.to_dict(),
        },
        "history": list(d.history),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _tasks(root: Path, scale: str, opts: dict) -> list:
    """One task per (loss, ε_T, k), at δ_T = :data:`DELTA`."""
    ks, epsilons = (KS, EPSILONS) if scale == "paper" else (_CI["ks"], _CI["epsilons"])
    losses = tuple(opts["losses"].split(",")) if opts.get("losses") else LOSSES
    folder = OUT if scale == "paper" else Path(root) / "crossover"
    return [
        FAMILY.task(
            f"{loss}_eps={e:g}_k={k}",
            dict(k=k, epsilon=e, delta=DELTA, loss=loss),
            folder / f"{loss}_eps={e:g}_k={k}.json",
        )
        for loss in losses
        for e in epsilons
        for k in ks
    ]


def compute(params: dict) -> dict:
    """One task: :func:`crossover_point`, with provenance."""
    row = crossover_point(params["k"], params["epsilon"], params["delta"], params["loss"])
    return {**row, "provenance": provenance(seconds=row["seconds"])}


FAMILY = Family(
    name="crossover",
    title="Composition: optimal noise or analytic Gaussian for k releases under "
    "a total budget, one task per (loss, total ε, k)",
    list_tasks=_tasks,
    compute=compute,
    options=(Option("losses", "comma-separated losses (default l1,l2)"),),
)


def load_crossover(out: Path = OUT) -> list[dict]:
    """The stored points, sorted by loss, total ε and k."""
    rows = [read_json(p) for p in sorted(Path(out).glob("*.json"))]
    return sorted(rows, key=lambda r: (r["loss"], r["epsilon"], r["k"]))


def privacy_buckets_pld(pair: DominatingPair, step: float = 1e-4):
    """The PLD with pessimistic rounding of the losses, compared in the book with connect-the-dots:
    every privacy loss of the pair overestimated by a few ulps of the logs of its numerator and
    denominator and rounded **up** to the grid sℤ ("privacy buckets", as dp_accounting's
    ``pessimistic_estimate``), masses rounded up to floats. Valid, but a loss exactly at a grid
    point ε moves to ε + s."""
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    grid = Fraction(step)
    buckets: dict[int, Fraction] = {}
    for p, q in zip(pair.p, pair.q, strict=False):
        lt, lb = math.log(p.numerator * q.denominator), math.log(p.denominator * q.numerator)
        loss = lt - lb + 8 * (math.ulp(lt) + math.ulp(lb)) + math.ulp(abs(lt - lb))
        i = math.ceil(Fraction(loss) / grid)
        buckets[i] = buckets.get(i, Fraction(0)) + p
    rounded = {i: math.nextafter(float(m), math.inf) for i, m in buckets.items()}
    return PrivacyLossDistribution.create_from_rounded_probability(
        rounded, math.nextafter(float(pair.infinity_mass), math.inf), step
    )
