"""Counterexample: the paper's D(π, β) on a non-uniform partition is not a valid lower bound.

At ε = 5, δ = 0.01, Δf = 1, ℓ1, ``optimal_noise``'s lower-bound track (adaptively refined, non-uniform
π, shifts restricted to multiples of Δf/32) reports D(π, β) = 0.08221 after 18 rounds, while the
uniform upper bound at β = 1/64 releases a noise with expected loss 0.08190 whose δ is certified
exactly (certify_delta ≤ 0.01). Aggregating that private noise's masses into the cells of π violates
D(π, β)'s constraint at the shift φ = Δf by about 0.06, so D(π, β) is not a relaxation of the problem.

Why: the dual constraint of the infinite problem must hold at every point x; D(π, β) imposes it only
on average over each cell Π_j (its coefficients are |A ∩ Π_j|/|Π_j|). On uniform cells of width β
with shifts on the β-grid the indicator terms are constant on each cell and nothing is lost; on wider
cells the averaged constraint is weaker than the pointwise one, so the bound can exceed the optimum
(this contradicts the inequality P = D ≥ D(π, β) of Corollary 1 for non-uniform π). A valid variant,
not implemented yet: charge the shifted side with the full mass of every cell that meets Π_j − φ.

Run: ``python scripts/check_nonuniform_lower_bound.py`` (about two to four minutes).
"""

from __future__ import annotations

import numpy as np

import dpdro
import dpdro.optimal as opt
from dpdro.bounds import BoundingLP


def main() -> None:
    prob = dpdro.Problem(epsilon=5.0, delta=0.01, loss="l1")
    calls = []

    def spy(problem, partition, **kwargs):
        res = dpdro.lower_bound(problem, partition, **kwargs)
        calls.append((partition, kwargs, res))
        return res

    opt.lower_bound = spy  # record the partitions the lower-bound track uses
    opt.optimal_noise(prob, rel_gap=0.01, max_rounds=18)
    part, kwargs, lb = calls[-1]
    ub = dpdro.upper_bound(prob, opt._upper_partition(prob, 64, 1.5))
    d = dpdro.certify_delta(ub.noise, epsilon=prob.epsilon, sensitivity=prob.sensitivity)
    print(f"D(π, β) on {part.n_cells} non-uniform cells (β = {part.beta:g}, {kwargs}): {lb.value:.6f}")
    print(f"certified upper bound (uniform β = 1/64): {ub.value:.6f}, exact δ of its noise {d:.12g} <= {prob.delta}")
    lp = BoundingLP(prob, part, "lower", **kwargs)
    x = np.diff(ub.noise.cdf(lp.columns.edges))
    x = np.concatenate([x, [max(0.0, 1.0 - x.sum())]])[: lp.n_p]
    worst = lp.shortfalls(x)
    print(f"largest violation of D(π, β)'s constraints by the aggregated private noise: {worst.max():.4f}")
    print("INVALID lower bound" if lb.value > ub.value else "no contradiction at this setting")


if __name__ == "__main__":
    main()
