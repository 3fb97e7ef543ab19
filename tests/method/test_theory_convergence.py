"""Theorem 1, Corollary 1 and Proposition 4 of the paper on small instances (chapters 13 and 14).

These are the computed facts the two theory chapters rest on, at a scale that runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpdro
from dpdro.mechanisms import truncated_laplace_half_width

EPS, DELTA, DF = 1.0, 0.25, 1.0


def _bounds(prob, L, k):
    part = dpdro.Partition.uniform(L=L, beta=prob.sensitivity / k)
    try:
        ub = dpdro.upper_bound(prob, part).value
    except dpdro.InfeasibleError:
        ub = math.inf
    return ub, dpdro.lower_bound(prob, part).value


@pytest.fixture(scope="module")
def l1():
    return dpdro.Problem(epsilon=EPS, delta=DELTA, sensitivity=DF, loss="l1")


def test_l1_gap_is_half_beta_once_support_suffices(l1):
    # Theorem 1 for c(x) = |x|: with Λ = 3 >= A the gap is exactly β/2 (chapter 13 explains why)
    for k in (1, 2, 4, 8):
        ub, lb = _bounds(l1, 3 * k, k)
        assert lb <= ub
        assert ub - lb == pytest.approx(0.5 / k, abs=1e-6)


def test_gap_non_increasing_along_nested_path(l1):
    gaps, ubs, lbs = [], [], []
    for lam, k in ((1, 1), (2, 2), (3, 4), (4, 8)):
        ub, lb = _bounds(l1, lam * k, k)
        ubs.append(ub), lbs.append(lb), gaps.append(ub - lb)
    assert (
        np.all(np.diff(ubs) <= 1e-7)
        and np.all(np.diff(lbs) >= -1e-7)
        and np.all(np.diff(gaps) <= 1e-7)
    )


def test_fixed_small_support_does_not_close_the_gap(l1):
    # Λ = 1: the upper bound is infeasible for k >= 2 and the lower bound stays well below the
    # optimum
    with pytest.raises(dpdro.InfeasibleError):
        dpdro.upper_bound(l1, dpdro.Partition.uniform(L=2, beta=0.5))
    _, lb_fixed = _bounds(l1, 16, 16)
    ub_big, _ = _bounds(l1, 32, 16)
    assert lb_fixed < ub_big - 0.05


def test_feasibility_conditions(l1):
    # necessary: support width W > 2Δf for (ε, δ) = (1, 0.25); sufficient: Lβ >= truncated Laplace
    # half-width
    A = truncated_laplace_half_width(epsilon=l1.epsilon, delta=l1.delta, sensitivity=l1.sensitivity)
    for k in (2, 4):
        with pytest.raises(dpdro.InfeasibleError):
            dpdro.upper_bound(l1, dpdro.Partition.uniform(L=k - 1, beta=1 / k))  # W = 2 - 1/k <= 2
        L_suf = math.ceil(A * k - 1e-12)
        part = dpdro.Partition.uniform(L=L_suf, beta=1 / k)
        tl = dpdro.mechanisms.TruncatedLaplace(epsilon=EPS, delta=DELTA, sensitivity=DF)
        probs = np.diff(tl.cdf(part.edges))
        noise = dpdro.PiecewiseUniform(part.edges, probs / probs.sum(), grid=part.beta)
        assert dpdro.certify_delta(noise, epsilon=EPS, sensitivity=DF) <= DELTA * (1 + 1e-12)
        dpdro.upper_bound(l1, part)  # does not raise


def test_corollary1_refinement_sandwich(l1):
    # k = 4 grid, refined to 1/16 on [-1, 1)
    ticks = np.union1d(np.arange(-8, 10) * 4, np.arange(-16, 17))
    part = dpdro.Partition(ticks, beta=1 / 16)
    u_pi, l_pi = dpdro.upper_bound(l1, part).value, dpdro.lower_bound(l1, part).value
    u_c, l_c = _bounds(l1, 8, 4)
    assert u_pi <= u_c + 1e-7 and l_pi >= l_c - 1e-7 and l_pi <= u_pi


# ---------------------------------------------------------------- Proposition 4 (e-companion A.8)
class _Jump(dpdro.Loss):
    """Example 1: 0 at the origin, 1 on 0 < |x| <= R, 1 + |x| beyond (exact on half-open cells)."""

    name = "example 1"

    def __init__(self, R):
        self.R = float(R)

    def __call__(self, x):
        x = np.asarray(x, float)
        return np.where(x == 0, 0.0, np.where(np.abs(x) <= self.R, 1.0, 1.0 + np.abs(x)))

    def cell_average(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        R = self.R
        extra = 0.5 * (np.maximum(b, R) ** 2 - np.maximum(a, R) ** 2) + 0.5 * (
            np.minimum(a, -R) ** 2 - np.minimum(b, -R) ** 2
        )
        return 1.0 + extra / (b - a)

    def cell_infimum(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        out = np.where(a > self.R, 1.0 + a, 1.0 + np.abs(b))
        out = np.where((a <= self.R) & (b > -self.R), 1.0, out)
        return np.where((a <= 0) & (0 < b), 0.0, out)

    def tail_infimum(self, a, b):
        return min(1.0 if a >= -self.R else 1.0 - a, 1.0 if b <= self.R else 1.0 + b)


def _periodic(x):
    u = np.asarray(x, float) - np.floor(x)
    return np.select([u < 0.5, u < 0.625, u < 0.875], [1.0, 5.0 - 8.0 * u, 0.0], 8.0 * u - 7.0)


def test_example1_gap_at_least_half_delta():
    delta = 0.2
    prob = dpdro.Problem(epsilon=1.0, delta=delta, loss=_Jump(2 * math.ceil(1 / (2 * delta))))
    for lam, k in ((2, 1), (6, 2), (6, 4)):
        ub, lb = _bounds(prob, lam * k, k)
        assert ub >= 1 - 1e-9 and lb <= 1 - delta / 2 + 1e-9


def test_example2_lower_bound_is_zero():
    delta = 0.2
    loss = dpdro.CallableLoss(_periodic, name="example 2", tail_infimum=lambda a, b: 0.0)
    prob = dpdro.Problem(epsilon=1.0, delta=delta, loss=loss)
    bound = (1 - delta) / (1 + math.e)
    for lam, k in ((2, 1), (3, 4)):
        ub, lb = _bounds(prob, lam * k, k)
        assert lb <= 1e-12 and ub >= bound


def test_callable_loss_needs_tail_infimum_when_not_monotone():
    with pytest.raises(ValueError, match="tail_infimum"):
        dpdro.CallableLoss(_periodic)


def test_callable_loss_with_lipschitz_accepts_losses_that_vanish():
    loss = dpdro.CallableLoss(lambda x: np.abs(x), name="abs", lipschitz=1.0)
    prob = dpdro.Problem(epsilon=1.0, delta=0.25, loss=loss)
    assert dpdro.lower_bound(prob, dpdro.Partition.uniform(L=4, beta=0.5)).value >= 0.0


def test_one_cell_support_is_infeasible(l1):
    with pytest.raises(dpdro.InfeasibleError):
        dpdro.upper_bound(l1, dpdro.Partition.uniform(L=0, beta=1.0))
