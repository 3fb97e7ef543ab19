"""The floor rounding's gain weighted by the loss's slope (dpdro._floor_weights): valid for private
noises built to make the fractional parts small, tighter than D_R, the same on mirrored supports,
and absent where the slope is constant."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpdro
import dpdro._floor_weights as floor_weights
from dpdro.grid import GridLP, grid_lower_bound, grid_upper_bound
from dpdro.noise import PiecewiseUniform


def _front_loaded(eps: float, k: int, u: float, cells: int, side: int) -> PiecewiseUniform:
    """Noise on [0, cells/k) (side 1) or its mirror image whose density is e^ε on the first u of
    every grid cell [j/k, (j + 1)/k) and 1 on the rest: its fractional parts are as small as the
    privacy of shifts below one grid step allows, paid for with a δ at its two ends."""
    beta = 1.0 / k
    left = np.arange(cells) * beta
    edges = np.append(np.column_stack((left, left + u * beta)).ravel(), cells * beta)
    probs = np.tile([math.exp(eps) * u, 1.0 - u], cells)
    probs /= probs.sum()
    if side < 0:
        edges, probs = -edges[::-1], probs[::-1]
    return PiecewiseUniform(edges, probs)


def _floor_bound(noise, loss, eps: float, delta: float, k: int, n: int, side: int):
    """(E c of the floor law of ``noise`` on the points 0 … n − 1 (mirrored for side −1),
    that plus β·max_r τ_r of the weighted rows): the bound the LP gives at this law."""
    beta = 1.0 / k
    support = (0.0, math.inf) if side > 0 else (-math.inf, 0.0)
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss, support=support)
    pts = (0, n - 1) if side > 0 else (1 - n, 0)
    rows = floor_weights._weights(prob, beta, pts, math.exp(eps), delta)
    assert rows is not None
    coef, tail_coef, penalty = rows
    cuts = side * np.arange(n + 1) * beta  # the floor (side 1) or ceiling (side −1) cells
    cdf = np.array([noise.cdf(x) for x in cuts])
    q = np.diff(cdf) if side > 0 else -np.diff(cdf)
    q, tail = (q, 1.0 - cdf[-1]) if side > 0 else (q[::-1], cdf[-1])
    grid = np.arange(pts[0], pts[1] + 1) * beta
    plain = float(q @ np.asarray(loss(grid)))
    return plain, plain + beta * float(np.max(coef @ q + tail_coef * tail - penalty))


@pytest.mark.parametrize("side", [1, -1])
@pytest.mark.parametrize("loss", [dpdro.PowerLoss(2.0), dpdro.PowerLoss(3.0), dpdro.PowerLoss(1.5)])
@pytest.mark.parametrize(
    ("eps", "k", "u"),
    [(0.1, 3, 0.05), (0.1, 1, 0.5), (0.5, 8, 0.4), (1.0, 4, 0.3), (1.0, 1, 0.1), (2.0, 3, 0.2),
     (3.0, 4, 0.15), (4.0, 1, 0.05)],
)
def test_weighted_floor_bound_is_below_the_loss_of_front_loaded_noise(eps, k, u, loss, side):
    """E c(X) ≥ E c(⌊X⌋) + β·E[G·W] ≥ the weighted bound at the floor's law, for noises whose
    fractional parts are pushed towards 0 (the least the proof allows); the gain is positive for
    ℓ2 at ε ≤ 1 (elsewhere the row of the constant gain, 0 here, may be the largest)."""
    cells = k * (int(6 / eps) + 8)
    noise = _front_loaded(eps, k, u, cells, side)
    delta = dpdro.certify_delta(noise, eps, 1.0)
    assert delta < 0.5
    plain, bound = _floor_bound(noise, loss, eps, delta, k, cells + 3, side)
    assert plain <= bound <= noise.expected_loss(loss)
    if loss.k == 2.0 and eps <= 1.0:
        assert bound > plain + 0.05 * (noise.expected_loss(loss) - plain)


@pytest.mark.parametrize(("eps", "k", "rho"), [(1.0, 4, 0.02), (0.5, 2, 0.05)])
def test_weighted_floor_bound_charges_delta_at_the_largest_slope(eps, k, rho):
    """A sliver of mass ρ at a grid point far out (W = 0 where G is largest, paid for with δ) on
    top of front-loaded noise: the bound holds only with its term δ·M·l(m) (without it, it would
    exceed E c(X) here)."""
    body = _front_loaded(eps, k, 0.3, 40, 1)
    far = 10 * body.edges[-1]
    noise = PiecewiseUniform(
        np.append(body.edges, [far, far + 1e-6 / k]), np.append(body.probs * (1 - rho), [0, rho])
    )
    delta = dpdro.certify_delta(noise, eps, 1.0)
    loss = dpdro.PowerLoss(2.0)
    plain, bound = _floor_bound(noise, loss, eps, delta, k, round(far * k) + 3, 1)
    assert plain < bound <= noise.expected_loss(loss)


def test_weighted_floor_bound_tightens_d_r_and_stays_below_the_upper_bound(monkeypatch):
    """ℓ2 on [0, ∞) at ε = 0.5, δ = 1e-3: the certified lower bounds rise with k and stay below
    the certified U(k); the weights cut the gap of D_R on the same grid by more than half."""
    prob = dpdro.Problem(epsilon=0.5, delta=1e-3, loss="l2", support=(0.0, math.inf))
    lows = []
    for k in (1, 2, 4):
        L = 26 * k
        lows.append(grid_lower_bound(prob, k, L).value)
        upper = grid_upper_bound(prob, k, L)
        assert dpdro.certify_delta(upper.noise, 0.5, 1.0) <= 1e-3
        assert lows[-1] <= upper.value
    assert lows[0] < lows[1] < lows[2]
    monkeypatch.setattr(floor_weights, "_weights", lambda *args: None)
    plain = grid_lower_bound(prob, 4, 104).value
    assert upper.value - lows[2] < 0.5 * (upper.value - plain)


@pytest.mark.parametrize("loss", ["l2", dpdro.PowerLoss(3.0)])
def test_weighted_floor_bound_is_the_same_on_the_mirrored_support(loss):
    """A symmetric loss on (−∞, 0] is the mirror image of [0, ∞): the same certified bound."""
    right = dpdro.Problem(epsilon=1.0, delta=1e-4, loss=loss, support=(0.0, math.inf))
    left = dpdro.Problem(epsilon=1.0, delta=1e-4, loss=loss, support=(-math.inf, 0.0))
    a, b = grid_lower_bound(right, 3, 40).value, grid_lower_bound(left, 3, 40).value
    assert a == pytest.approx(b, rel=1e-7)


@pytest.mark.parametrize(
    "loss, support",
    [("l1", (0.0, math.inf)), (dpdro.Pinball(0.3), (-math.inf, 0.0)), ("l2", (-2.0, math.inf)),
     ("l2", (1.0, 5.0)), ("l2", None)],
)
def test_no_weights_where_the_slope_is_constant_or_the_support_is_not_one_sided(
    loss, support, monkeypatch
):
    """ℓ1 and pinball keep the constant gain and no extra column; supports across 0 or bounded
    away from 0 keep D_R (the rows of the floor do not apply there)."""
    prob = dpdro.Problem(epsilon=1.0, delta=1e-3, loss=loss, support=support)
    lp = GridLP(prob, 2, 30, "lower", coefficients="rounding")
    assert lp.floor_gain == prob.floor_rounding_gain(lp.beta, lp.exp_rows, lp.delta_rows)
    assert lp.floor == (lp.floor_gain > 0) and lp.allowances
    monkeypatch.setattr(floor_weights, "_weights", lambda *args: None)
    plain = GridLP(prob, 2, 30, "lower", coefficients="rounding")
    assert (lp.model.n_cols, lp.model.n_rows) == (plain.model.n_cols, plain.model.n_rows)


def test_weighted_rows_drop_the_rounding_allowances(monkeypatch):
    """With the weights the LP bounds the floor alone: no allowance of D_R, one column τ and a
    row per cap (and no split of the cells near 0, which serves D_R's allowance)."""
    prob = dpdro.Problem(epsilon=1.0, delta=1e-3, loss="l2", support=(0.0, math.inf))
    lp = GridLP(prob, 2, 30, "lower", coefficients="rounding")
    assert lp.floor and lp.allowances == []
    assert lp.floor_gain < 0  # −β·K: the rows' shift
    monkeypatch.setattr(floor_weights, "_weights", lambda *args: None)
    plain = GridLP(prob, 2, 30, "lower", coefficients="rounding")
    assert not plain.floor and plain.allowances
    split = 3 * min(plain.points[1], 8)  # dpdro._excess_split's columns a, b, z
    assert lp.model.n_cols == plain.model.n_cols - split + 1


def test_weighted_rows_are_scaled_so_that_highs_solves_large_coefficients():
    """|x|³ on (−∞, 0] at ε = 0.173, δ = 2e-10, k = 2 over ±150·Δf: the rows' coefficients reach
    3·10⁴; stored unscaled, HiGHS stopped with status Unknown (and on other windows called the LP
    infeasible). Scaled, it solves, and its certified bound is above D_R's on the same LP."""
    prob = dpdro.Problem(
        epsilon=0.173289, delta=2.00944e-10, loss=dpdro.PowerLoss(3.0), support=(-math.inf, 0.0)
    )
    lp = GridLP(prob, 2, 300, "lower", coefficients="rounding")
    sol = lp.solve(60)
    assert sol.status == "optimal"
    assert lp.dual_bound(sol.row_duals) > 1.55e6  # D_R: 1.5424e6


def test_an_lp_highs_scales_badly_is_solved_without_its_scaling():
    """|x|² on [2Δf, ∞) at ε = 3.12, δ = 1.2e-12, k = 1: HiGHS's dual and primal simplex methods
    both stop with status Unknown on the LP with the weighted rows; without HiGHS's scaling it
    solves (dpdro.solvers._RETRIES), above D_R's 120.281."""
    prob = dpdro.Problem(
        epsilon=3.12, delta=1.2e-12, loss=dpdro.PowerLoss(2.0), support=(2.0000006781, math.inf)
    )
    lp = GridLP(prob, 1, 20, "lower", coefficients="rounding", lazy=False)
    sol = lp.solve(30)
    assert sol.status == "optimal"
    assert lp.dual_bound(sol.row_duals) > 120.5
