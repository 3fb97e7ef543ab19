"""The split of the randomized rounding's excess in D_R (dpdro._excess_split): the identity it rests
on, its validity at concrete private noises, and where it raises the bound."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpdro
from dpdro import grid
from dpdro._excess_split import NEAR
from dpdro.grid import GridLP, grid_lower_bound, grid_upper_bound


def test_l2_excess_is_exactly_kappa_w_one_minus_w():
    rng = np.random.default_rng(3)
    l2 = dpdro.PowerLoss(2)
    for beta in (1e-3, 0.37, 5.0):
        kappa = l2.rounding_excess_curvature(beta)
        assert kappa == beta**2
        j, w = rng.integers(-50, 50, 200), rng.uniform(0, 1, 200)
        x = (j + w) * beta
        chord = (1 - w) * l2(j * beta) + w * l2((j + 1) * beta)
        assert np.allclose(chord - l2(x), kappa * w * (1 - w), rtol=1e-9, atol=1e-12 * beta**2)
    for loss in (dpdro.PowerLoss(1.5), dpdro.PowerLoss(3), dpdro.Pinball(0.3),
                 dpdro.asymmetric_loss()):
        assert loss.rounding_excess_curvature(0.1) is None


def _rounding_parts(noise, beta, pts):
    """The rounding of a piecewise-uniform noise with an atom onto βℤ, cell by cell: the masses
    q_j at the points ``pts`` (the atom at 0 included), exactly."""
    q = np.zeros(pts.size)
    for lo, hi, p in zip(noise.edges[:-1], noise.edges[1:], noise.probs, strict=True):
        for j in range(math.floor(lo / beta), math.ceil(hi / beta)):
            u, v = max(lo, j * beta), min(hi, (j + 1) * beta)
            if v <= u:
                continue
            mass = p * (v - u) / (hi - lo)
            w = mass * ((u + v) / 2 / beta - j)  # E[W; X ∈ [u, v)]
            q[pts == j] += mass - w
            q[pts == j + 1] += w
    q[pts == 0] += noise.atom
    return q


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("eps,delta,k_up,k", [(1.0, 0.75, 6, 8), (3.0, 0.6, 10, 12)])
def test_credit_is_valid_at_the_rounding_of_a_noise_with_an_atom(symmetric, eps, delta, k_up, k):
    """Fix D_R's masses at the rounded law of a private noise with a large atom (cells not on the
    lower grid): the LP, minimising over the split, stays below that noise's expected loss. A
    credit counting the atom twice (a_0 = q_0 in the symmetric LP) fails this."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss="l2")
    noise = grid_upper_bound(prob, k_up, 4 * k_up).noise
    assert noise.atom > 0.3 and dpdro.certify_delta(noise, eps, 1.0) <= delta
    lp = GridLP(prob, k, 6 * k, "lower", symmetric=symmetric, lazy=False)
    assert len(lp.allowances) == 1  # the split replaced the η-allowances
    v_lo, v_hi = lp.points
    pts = np.arange(0 if symmetric else v_lo, v_hi + 1)
    q = _rounding_parts(noise, lp.beta, pts)
    assert math.isclose(q.sum() * (2 if symmetric else 1) - (q[0] if symmetric else 0), 1.0,
                        rel_tol=1e-12)
    lp.model.set_col_bounds(lp.col(pts), q, q)
    sol = lp.solve()
    assert sol.status == "optimal"
    kappa = lp.beta**2
    bound = sol.objective - kappa / 4
    loss = noise.expected_loss("l2")
    assert bound <= loss
    # the credit counts: without the split the same masses give a bound lower by a part of κ/4
    # times the atom (measured: 0.46 of it at ε = 1, 0.32 at ε = 3, where mass near 0 shares
    # the atom's point)
    plain = float(np.dot(q * np.where(pts == 0, 1, 2 if symmetric else 1), (pts * lp.beta) ** 2))
    assert bound - (plain - kappa / 4) > 0.25 * kappa / 4 * noise.atom


def _without_split(monkeypatch):
    monkeypatch.setattr(grid, "add_excess_split", lambda lp, kappa: False)


@pytest.mark.parametrize("eps,delta,k,gain", [
    (1.0, 0.75, 8, 0.004),  # measured 0.099686 → 0.100225
    (5.0, 0.75, 40, 0.004),
    (0.05, 0.75, Fraction(1), None),  # coarse grid β = Δf: no positive bound without the split
])
def test_split_raises_the_bound_where_the_noise_has_an_atom(monkeypatch, eps, delta, k, gain):
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss="l2")
    L = max(NEAR, math.ceil(3 * dpdro.mechanisms.truncated_laplace_half_width(
        epsilon=eps, delta=delta, sensitivity=1.0) * k))
    split = grid_lower_bound(prob, k, L).value
    assert split <= grid_upper_bound(prob, max(2, int(k)), L).value
    _without_split(monkeypatch)
    plain = grid_lower_bound(prob, k, L).value
    assert (split - plain > gain * split) if gain else (plain <= 0.0 < split)


@pytest.mark.parametrize("eps,delta,k", [(2.0, 1e-4, 16), (0.5, 1e-3, 4)])
def test_split_changes_nothing_without_an_atom(monkeypatch, eps, delta, k):
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss="l2")
    split = grid_lower_bound(prob, k, 12 * k).value
    _without_split(monkeypatch)
    assert split == pytest.approx(grid_lower_bound(prob, k, 12 * k).value, rel=1e-9)


@pytest.mark.parametrize("support", [None, (-1.0, math.inf), (-0.5, 2.0)])
@pytest.mark.parametrize("eps,delta", [(1.0, 0.75), (4.0, 0.5), (0.3, 0.9)])
def test_split_lower_bounds_stay_below_the_optimum(eps, delta, support):
    """D_R with the split on coarse grids against the released noise of a finer one."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss="l2", support=support)
    ub = grid_upper_bound(prob, 24, 96)
    assert dpdro.certify_delta(ub.noise, eps, 1.0) <= delta
    for k in (2, 4, 8, 16):
        assert grid_lower_bound(prob, k, 4 * k).value <= ub.value
