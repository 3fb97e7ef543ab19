r"""Two certified mechanisms that need no data-dependent LP: the anchors of
:func:`dpdro.data_dependent.optimal_noise`.

Constant mechanism
    Release the same output law whatever the query value: every pair's δ is 0. Here the law of the
    output family (:mod:`dpdro.data_dependent.output`) on the one output cell of width β with the
    smallest weighted loss.

Clamped data-independent noise
    The certified near-optimal data-independent noise X of :func:`dpdro.optimal_noise` (for the
    same ε, δ, Δf and loss), added to every query value: one piece, so every pair of query values
    is the pair (ϕ, ϕ + φ) with |φ| ≤ Δf of the data-independent problem, and its certificate is
    that of X (:func:`dpdro.certify_delta`, exact when |Φ| ≥ Δf and an upper bound otherwise: the
    pairs are then a subset; much faster than the family certificate on the fine lattice of a
    data-independent noise). For losses non-increasing on (−∞, 0] and non-decreasing on [0, ∞) the
    release is clamped to Φ (post-processing, a lower loss: :mod:`~dpdro.data_dependent.costs`),
    and its exact expected loss is :func:`~dpdro.data_dependent.costs.clamped_noise_cost`.
"""

from __future__ import annotations

import numpy as np

from .._budget import TimeBudget
from .._range import MIN_DELTA
from ..noise import PiecewiseUniform
from ..optimal import optimal_noise as independent_optimal_noise
from ..privacy import certify_delta
from ..release import UpperBound, certified_release
from .costs import clamped_noise_cost, output_costs, unimodal
from .mechanism import Mechanism
from .output import output_obstacle
from .problem import Problem

__all__ = ["anchor_bounds", "constant_mechanism", "clamped_independent_noise"]

# share of the time budget the data-independent noise may take
INDEPENDENT_SHARE = 0.1


def constant_mechanism(problem: Problem, beta: float) -> UpperBound | None:
    """The constant mechanism on the cheapest output cell of width β (module docstring); ``None``
    when the output family does not apply or caps are set."""
    if output_obstacle(problem, "upper") or problem.cap is not None:
        return None
    K = problem.grouping(beta).K
    piece_of_fine = np.searchsorted(problem.grouping(beta).lam, np.arange(K), side="right") - 1
    losses = [problem.piece_loss(int(piece_of_fine[k])) for k in range(K)]
    costs = output_costs(problem, beta, K, losses).sum(axis=0)
    j = int(np.argmin(costs))
    probs = np.zeros(K + 2)
    probs[j] = 1.0
    law = PiecewiseUniform(np.arange(-1, K + 2) * beta, probs, grid=beta)
    mech = Mechanism((law,), np.array([problem.phi_lo]), problem.epsilon, problem.delta,
                     problem.sensitivity, kind="output", query_atoms=np.zeros(1), clamp=True,
                     edge_ticks=np.array([0, K]), edge_step=beta)
    d = mech.certify()
    return certified_release(float(costs[j]), d, 0.0, mechanism=mech,
                             piece_losses=np.array([costs[j]]), weights=np.ones(1))


def clamped_independent_noise(
    problem: Problem, rel_gap: float, budget: TimeBudget
) -> UpperBound | None:
    """The clamped data-independent optimal noise (module docstring) within a tenth of the time
    left; ``None`` for per-piece losses, caps it breaks, δ below :data:`dpdro._range.MIN_DELTA`,
    or when it is not found in time."""
    if problem.losses is not None:
        return None
    # the data-independent solve needs a positive time limit and δ in its range
    if budget.expired() or problem.delta < MIN_DELTA:
        return None
    left = budget.left()
    limit = None if left is None else INDEPENDENT_SHARE * left
    t = TimeBudget(limit)
    try:
        res = independent_optimal_noise(problem.base_problem, rel_gap, time_limit=limit)
    except (TimeoutError, RuntimeError):
        return None
    clamp = unimodal(problem.loss) and not problem.monotone and problem._weight[0] != "callable"
    mech = Mechanism((res.noise,), np.array([problem.phi_lo, problem.phi_hi]), problem.epsilon,
                     problem.delta, problem.sensitivity, kind="noise", clamp=clamp)
    width = problem.phi_hi - problem.phi_lo
    if clamp:
        loss = clamped_noise_cost(problem, res.noise, problem.loss, 0.0, width)
    else:
        loss = res.noise.expected_loss(problem.loss)
    if problem.cap is not None and res.noise.expected_loss(problem.cap_loss or problem.loss) > (
        problem.cap
    ):
        return None
    d = certify_delta(res.noise, problem.epsilon, problem.sensitivity)
    if not d <= problem.delta:  # pragma: no cover - the data-independent release is certified
        return None
    return certified_release(loss, d, t.elapsed(), mechanism=mech, piece_losses=np.array([loss]),
                             weights=np.ones(1))


def anchor_bounds(problem: Problem, beta: float, rel_gap: float, budget: TimeBudget):
    """The anchors of the driver as ``(UpperBound, family)`` pairs."""
    out = []
    bound = constant_mechanism(problem, beta)
    if bound is not None:
        out.append((bound, "constant"))
    bound = clamped_independent_noise(problem, rel_gap, budget)
    if bound is not None:
        out.append((bound, "clamped noise"))
    return out
