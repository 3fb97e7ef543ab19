"""Exact rational re-checks of certificates (repro.exact)."""

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

import dpdro
from dpdro.mechanisms import TruncatedLaplace
from repro import exact


def test_decimal_and_exp_bounds():
    assert exact.decimal(0.005) == Fraction(1, 200) and exact.decimal(5.0) == 5
    assert exact.exp_bounds(Fraction(0)) == (1, 1)
    for x in (Fraction(1, 200), Fraction(1), Fraction(5), Fraction(10)):
        lo, hi = exact.exp_bounds(x)
        assert lo <= hi and float(hi - lo) <= 4 * math.ulp(math.exp(float(x)))
        # a partial Taylor sum is a lower bound: e^x exceeds it, so lo cannot be above e^x by more
        s, t = Fraction(0), Fraction(1)
        for n in range(120):
            s, t = s + t, t * x / (n + 1)
        assert lo <= s + t and hi >= s
    with pytest.raises(ValueError, match="x must be"):
        exact.exp_bounds(Fraction(-1))


def test_exact_lagrangian_bound_is_weak_duality_in_rationals():
    """min x1 + 2 x2 s.t. x1 + x2 = 1, x1 - x2 <= 0.5, 0 <= x <= 1 has optimum 1.25 at
    x = (0.75, 0.25);
    the exact bound equals it at the optimal duals and stays below it at any others."""
    A = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, -1.0]]))
    args = ([1.0, 2.0], A, [1.0, -np.inf], [1.0, 0.5], [1.0, 1.0])
    assert exact.exact_lagrangian_bound(*args, [1.5, -0.5]) == Fraction(5, 4)
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.normal(size=2) * 3
        assert exact.exact_lagrangian_bound(*args, y, simplex_rows=[0]) <= Fraction(5, 4)


def test_grid_relaxation_is_a_lower_bound_below_private_noises():
    """The exact bound of the relaxation lies below the loss of certified private noises (the
    optimum's certified bracket, truncated Laplace) and approaches the engine's lower bound."""
    for eps, delta, k, M in ((1.0, 0.2, 4, 12), (0.5, 0.05, 2, 16), (5.0, 0.005, 16, 32)):
        res = exact.exact_grid_lower_bound(eps, delta, k, M)
        b = res["exact"]
        assert isinstance(b, Fraction) and b > 0
        assert abs(float(b) - res["lp_value"]) <= 1e-9  # the duals are (nearly) optimal
        assert b <= TruncatedLaplace(epsilon=eps, delta=delta).expected_loss("l1")
        opt = dpdro.optimal_noise(dpdro.Problem(epsilon=eps, delta=delta, loss="l1"), rel_gap=0.02)
        assert b <= opt.upper.value
        if eps == 5.0:  # the chapter's cell: within 5% of the certified optimum already at β = 1/16
            assert float(b) >= 0.95 * opt.lower.value
    lp = exact.grid_relaxation_lp(1.0, 0.2, 4, 8)
    assert lp["exp_epsilon"] >= exact.exp_bounds(Fraction(1))[1] and Fraction(
        lp["rhs"]
    ) >= Fraction(1, 5)
    with pytest.raises(ValueError, match="M an integer >= k"):
        exact.grid_relaxation_lp(1.0, 0.2, 4, 2)


def test_exact_noise_certificate_on_closed_forms():
    # uniform on [-1, 1) with an atom a at 0, Δf = 1/2: δ(φ) = a + (1 − a)|φ|/2 at |φ| ≤ 1/2
    a = 0.25
    noise = dpdro.PiecewiseUniform(np.array([-1.0, 1.0]), np.array([1 - a]), atom=a)
    c = exact.exact_noise_certificate(noise, 1.0, 0.5, "l1")
    assert c["delta"] == Fraction(1, 4) + Fraction(3, 4) * Fraction(1, 4)
    assert c["loss"] == Fraction(3, 4) * Fraction(1, 2) and c["mass"] == 1
    assert exact.exact_noise_certificate(noise, 1.0, 0.5, "l2")["loss"] == Fraction(
        3, 4
    ) * Fraction(1, 3)
    assert float(c["delta"]) == pytest.approx(dpdro.certify_delta(noise, 1.0, 0.5), abs=1e-12)


def test_exact_noise_certificate_agrees_with_certify_delta():
    opt = dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=0.3, loss="l1"), rel_gap=0.05)
    noise = opt.noise
    if len(noise.edges) > 60:  # keep the test quick: a coarse staircase-like noise suffices
        pytest.skip("released noise too large for the quick exact check")
    c = exact.exact_noise_certificate(noise, 1.0, 1.0, "l1")
    assert float(c["delta"]) == pytest.approx(dpdro.certify_delta(noise, 1.0, 1.0), abs=1e-9)
    assert c["delta"] <= exact.decimal(0.3) + Fraction(1, 10**9)
    assert float(c["loss"]) == pytest.approx(noise.expected_loss("l1"), rel=1e-12)
    with pytest.raises(ValueError, match="max_edges"):
        exact.exact_noise_certificate(noise, 1.0, 1.0, max_edges=2)
