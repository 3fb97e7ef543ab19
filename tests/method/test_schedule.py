"""The grids of optimal_noise's refinement (dpdro._schedule): alignment with the optimal
staircase's plateau."""

from __future__ import annotations

from fractions import Fraction

import pytest

import dpdro
from dpdro._schedule import _aligned, _edge_weights, _plateau


def test_a_symmetric_loss_weighs_both_edges_alike():
    for loss in ("l1", "l2"):
        problem = dpdro.Problem(epsilon=5.0, delta=0.25, loss=loss)
        assert _edge_weights(problem, _plateau(problem)) == (1.0, 1.0)
    # ε < 1: no plateau to align with
    assert _edge_weights(dpdro.Problem(epsilon=0.5, delta=1e-6), None) == (1.0, 1.0)


def test_equal_weights_keep_the_grid_within_a_quarter_finer():
    # the rule before edges were weighted: the smallest k′ in [k, 1.25k] closest to alignment
    plateau = (-0.0625, 0.0625)
    for k in (40, 64, 100, 130):
        chosen = _aligned(k, plateau, 0.0)
        assert k <= chosen <= 1.25 * k
        assert chosen == _aligned(k, plateau, 0.0, (1.0, 1.0))
    assert _aligned(60, plateau, 0.0) == 64  # γk′ = 4


def test_the_steep_edge_of_an_asymmetric_loss_decides_the_grid():
    # pinball τ = 0.896 at ε = 7.08, δ = 1.8e-5 (issue 28, point 16 of seed 28): plateau
    # (−0.084, 0.009), the right edge on the side of slope 0.896; the lower bound's gap is 0.13% at
    # k = 111 (right edge 1.00 on the grid) against 0.48% at k = 130 and 0.32% at k = 120
    problem = dpdro.Problem(epsilon=7.082, delta=1.76e-5, loss=dpdro.Pinball(tau=0.896))
    plateau = _plateau(problem)
    weights = _edge_weights(problem, plateau)
    assert weights[1] == 1.0
    assert weights[0] == pytest.approx(0.104 / 0.896, rel=1e-6)
    k = _aligned(Fraction(128), plateau, 0.0, weights)
    assert 0.8 * 128 <= k < 128  # below the predicted grid: no k′ ≥ 128 aligns the right edge
    assert abs(plateau[1] * k - round(plateau[1] * k)) < 0.05
    assert abs(plateau[1] * 128 - round(plateau[1] * 128)) > 0.15


def test_lower_bounds_extrapolate_as_k_to_the_minus_one_on_a_support_on_one_side_of_0():
    """One-sided ℓ1 at ε = 3.68, δ = 9.7e-6: D(16) = 3.7092, D(36) = 3.7239, and the optimum
    3.7360 (U(40)); the gap times k is constant, so k⁻¹ predicts the limit (3.7357) where k⁻²
    (3.7275) sent the call to an upper-bound LP of 14 s that gained 0.02%."""
    from dpdro._schedule import _convergence_order, _lower_limit
    from dpdro.release import LowerBound

    previous = LowerBound(value=3.7092, lp_value=3.7092, seconds=0.0, k=16)
    last = LowerBound(value=3.7239, lp_value=3.7239, seconds=0.0, k=36)
    assert _lower_limit(previous, last, 4.0, 1) == pytest.approx(3.7239 + 0.0147 * 16 / 20)
    assert _lower_limit(previous, last, 4.0) == pytest.approx(3.7239 + 0.0147 * 256 / 1040)
    inf = float("inf")
    sides = {(0.0, inf): 1, (-inf, 0.0): 1, (2.0, inf): 1, (-3.0, inf): 2, None: 2}
    for support, order in sides.items():
        problem = dpdro.Problem(epsilon=1.0, delta=1e-6, support=support)
        assert _convergence_order(problem) == order


def test_next_grid_jumps_up_to_four_times_where_the_lower_bound_converges_like_1_over_k():
    """One-sided ℓ1 at ε = 3.68, δ = 9.7e-6: from D(16), 0.738%, and D(36), 0.342%, the gap falls
    like k⁻¹ and 0.1% needs k ≈ 36·3.4·1.1 = 136. Doubling had spent a round at k = 80 and ended at
    0.116% after 20 s; going there at once (fitted to the time left), 0.096% in 16 s. A k⁻² lower
    bound keeps the factor 2."""
    from dpdro._schedule import _next_steps

    history = [dict(k=16, gap=0.00738), dict(k=36, gap=0.00342)]
    assert _next_steps(history, 1e-3, order=1) == 136
    assert _next_steps(history, 1e-3) == 72 == _next_steps(history, 1e-3, order=2)
    # the factor stays capped at 4
    assert _next_steps([dict(k=16, gap=0.02), dict(k=32, gap=0.01)], 1e-3, order=1) == 128


def test_one_sided_lower_window_is_narrowed_from_epsilon_1():
    """On a support bounded on one side, from ε = 1, the lower bound's window reaches A + 9.2Δf/ε
    from the support's end instead of 2A (at most 2A; its factor grows it as before), while the
    rows ratio of the first upper-bound LP is that of the window before (_lower_rows, full)."""
    import math

    from dpdro._closed_forms import truncated_laplace_half_width
    from dpdro._schedule import _lower_rows, _one_sided_width
    from dpdro.optimal import _Search

    assert _one_sided_width(4.0, 2.0, 3.0, 1.0) == pytest.approx(4.0 + 9.2 / 3.0)
    assert _one_sided_width(2.0, 2.0, 3.0, 1.0) == 4.0  # 2A is the larger bound
    assert _one_sided_width(4.0, 2.0, 0.5, 1.0) == 8.0  # below ε = 1: factor·A, not narrowed
    assert _one_sided_width(10.0, 3.0, 3.0, 2.0) == pytest.approx(1.5 * (10.0 + 18.4 / 3.0))
    for eps, sup, narrowed in ((3.68, (0.0, math.inf), True), (3.68, (-math.inf, 0.0), True),
                               (0.5, (0.0, math.inf), False), (3.68, None, False)):
        problem = dpdro.Problem(epsilon=eps, delta=9.7e-6, support=sup)
        search = _Search(problem, 1e-3, True, 16, 4096)
        g = search.grids()
        a = truncated_laplace_half_width(epsilon=eps, delta=9.7e-6, sensitivity=1.0)
        k = g.k_low
        if sup is not None:  # (without one, the window is the plateau's reaches at large ε)
            assert g.L_full == math.ceil(search.f_low * a * k)
        if narrowed:
            assert g.w_low == pytest.approx(a + 9.2 / eps)
            assert g.L_low == math.ceil((a + 9.2 / eps) * k) < g.L_full
            assert _lower_rows(g, full=True) == k * (2 * g.L_full + 1) > _lower_rows(g)
        else:
            assert g.L_low == g.L_full and _lower_rows(g, full=True) == _lower_rows(g)


def test_the_first_upper_lp_of_a_k_to_the_minus_one_lower_bound_is_on_a_coarse_grid():
    """Where the lower bounds converge like k⁻¹ the upper bound is near its limit from k ≈ 16 on:
    the first upper-bound LP's grid is aligned from at most 16 (one-sided ℓ1 at ε = 4, δ = 1e-6 had
    solved U(38) first, beyond the 20 s limit, and ended at 7.4%); later ones, and every one of a
    k⁻² lower bound, from the round's own resolution."""
    import math

    from dpdro._schedule import _upper_steps
    from dpdro.optimal import _Search

    none = [dict(k_upper=None, upper_seconds=0.0)]
    one = none + [dict(k_upper=20, upper_seconds=1.1)]
    assert _upper_steps(none, Fraction(34), 1) == 16
    assert _upper_steps(none, Fraction(8), 1) == 8
    assert _upper_steps(one, Fraction(67), 1) == 67
    assert _upper_steps(none, Fraction(34), 2) == 34
    problem = dpdro.Problem(epsilon=4.0, delta=1e-6, support=(0.0, math.inf))
    search = _Search(problem, 1e-3, True, 34, 4096)
    search.history = none
    assert search.grids().k_up <= 20 <= search.grids().k_low
    search.history = one
    assert search.grids().k_up >= 34


def test_an_upper_lp_predicted_too_slow_does_not_run_beside_a_k_to_the_minus_one_lower_bound():
    """Its seconds predicted from the last upper-bound LP's times the growth of its rows squared,
    against three quarters of the time left: measured (one-sided), ℓ1 at ε = 4, δ = 1e-6, U(20) on
    257 points 1.1 s and U(46) on 591 beyond 18 s; the asymmetric loss at ε = 2.55, δ = 0.038,
    U(16) on 96 points 0.06 s and U(39) on 232 points 1.0 s."""
    from dpdro._schedule import _Grids, _upper_too_slow

    def grids(k_up, L_up):
        return _Grids(Fraction(k_up), k_up, L_up, Fraction(k_up), L_up)

    l1 = [dict(k_upper=20, upper_window=257, upper_seconds=1.1), dict(k_upper=None)]
    assert _upper_too_slow(l1, grids(46, 591), 18.0, 1)  # 31 s predicted
    assert not _upper_too_slow(l1, grids(46, 591), 60.0, 1)  # it fits in 60 s
    assert not _upper_too_slow(l1, grids(46, 591), None, 1)  # no time limit
    assert not _upper_too_slow(l1, grids(46, 591), 18.0, 2)  # a k⁻² lower bound
    assert not _upper_too_slow(l1[1:], grids(46, 591), 18.0, 1)  # no upper-bound LP yet
    asym = [dict(k_upper=16, upper_window=96, upper_seconds=0.06)]
    assert not _upper_too_slow(asym, grids(39, 232), 10.0, 1)  # 2.1 s predicted
