"""The paper-only variants moved out of dpdro: the rounded 'near optimal lower bound' of the paper's
footnote 3 (repro.literature) and the one-sided noise of the private-LP paper (repro.private_lp).

Paper numbers below are quoted only here, as test oracles: Figure 3 (values from the authors'
scripts visualize_bounds-*.jl) and Tables 4 and 5 (Appendix D).
"""

import math

import numpy as np
import pytest

from dpdro.mechanisms import AnalyticGaussian, Laplace, Staircase, TruncatedLaplace
from dpdro.mechanisms import near_optimal_lower_bound as valid_bound
from repro.literature import literature_values, near_optimal_lower_bound
from repro.private_lp import ShiftedTruncatedLaplace

GRID = [
    (e, d)
    for e in (0.005, 0.1, 0.5, 1.0, 2.0, 5.0)
    for d in (1e-6, 0.005, 0.05, 0.2, 0.3, 0.5, 0.75)
]


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_roundings_bracket_the_valid_bound(loss):
    for e, d in GRID:
        exact = near_optimal_lower_bound(epsilon=e, delta=d, sensitivity=1.3, loss=loss)
        assert exact == valid_bound(epsilon=e, delta=d, sensitivity=1.3, loss=loss)
        down = near_optimal_lower_bound(
            epsilon=e, delta=d, sensitivity=1.3, loss=loss, rounding="down"
        )
        up = near_optimal_lower_bound(epsilon=e, delta=d, sensitivity=1.3, loss=loss, rounding="up")
        assert 0 <= down <= exact <= up
        feasible = [
            TruncatedLaplace(epsilon=e, delta=d, sensitivity=1.3),
            AnalyticGaussian(epsilon=e, delta=d, sensitivity=1.3),
            Laplace(epsilon=e, sensitivity=1.3),
            Staircase(epsilon=e, sensitivity=1.3, loss=loss),
        ]
        assert down <= min(m.expected_loss(loss) for m in feasible)


def test_rounding_down_is_not_monotone():
    deltas = np.linspace(0.01, 0.6, 120)
    down = [near_optimal_lower_bound(epsilon=0.3, delta=d, rounding="down") for d in deltas]
    assert np.any(np.diff(down) > 0)  # footnote 3: "a non-monotonic parameter rounding"


def test_roundings_match_the_authors_code():
    e, d, s = 0.2, 0.05, 2.0
    a, b = (d + math.expm1(e) / 2) / math.exp(e), math.exp(-e)
    n, total = 0, 0.0  # the loop of data_independent.cpp ("TLap Lower Bound")
    while total + a * b**n <= 0.5:
        total += a * b**n
        n += 1
    cpp = 2 * a * s * ((b - b**n) / (1 - b) ** 2 - (n - 1) * b**n / (1 - b))
    down = near_optimal_lower_bound(epsilon=e, delta=d, sensitivity=s, rounding="down")
    assert down == pytest.approx(cpp, rel=1e-12)
    assert near_optimal_lower_bound(
        epsilon=e, delta=d, sensitivity=s, rounding="up"
    ) == pytest.approx(2 * a * s * sum(k * b**k for k in range(1, n + 1)), rel=1e-12)
    assert n == math.floor(TruncatedLaplace(epsilon=e, delta=d, sensitivity=s).half_width / s)


def test_roundings_reproduce_paper_values():
    # Figure 3 ('Near Optimal LB', Δf = 2) as printed by the authors' scripts: rounding up
    up = lambda e, d: near_optimal_lower_bound(epsilon=e, delta=d, sensitivity=2.0, rounding="up")  # noqa: E731
    assert up(1.0, 0.2) == pytest.approx(0.573357, abs=1e-6)
    assert up(0.2, 0.05) == pytest.approx(3.91688, abs=1e-5)
    # Table 5 (ℓ1, Δf = 1): the optimum O is recovered from Table 4, O = BUB − s4·max(O, 1) with BUB
    # the
    # truncated Laplace loss; then 100%·(O − BLB)/max(O, 1) must reproduce s5 to the printed 0.01%
    cells = [  # (ε, δ, Table 4 %, Table 5 %, rounding that reproduces it)
        (1.0, 0.2, 5.82, 26.71, "up"),
        (0.2, 0.05, 0.92, 16.37, "up"),
        (2.0, 0.005, 7.99, 25.97, "up"),
        (0.005, 0.005, 0.17, 1.71, "down"),
        (0.1, 0.1, 0.90, 32.42, "down"),
    ]
    for e, d, s4, s5, rounding in cells:
        bub = TruncatedLaplace(epsilon=e, delta=d).expected_loss("l1")
        optimum = bub - s4 / 100 if bub - s4 / 100 < 1 else bub / (1 + s4 / 100)
        blb = near_optimal_lower_bound(epsilon=e, delta=d, rounding=rounding)
        assert 100 * (optimum - blb) / max(optimum, 1) == pytest.approx(s5, abs=0.015)


def test_rounded_bound_validates_its_arguments():
    with pytest.raises(ValueError, match="rounding must be one of"):
        near_optimal_lower_bound(epsilon=1, delta=0.1, rounding="nearest")
    with pytest.raises(ValueError, match="delta must lie in the open interval"):
        near_optimal_lower_bound(epsilon=1, delta=1.5, rounding="up")
    with pytest.raises(TypeError):  # keyword-only
        near_optimal_lower_bound(1.0, 0.1)


def test_literature_values_hold_every_variant():
    vals = literature_values(1.0, 0.2, 2.0, "l1")
    assert vals["near_optimal_lb_down"] <= vals["near_optimal_lb"] <= vals["near_optimal_lb_up"]
    assert vals["near_optimal_lb_up"] == pytest.approx(0.573357, abs=1e-6)


def test_shifted_truncated_laplace():
    m = ShiftedTruncatedLaplace(epsilon=1.0, delta=1e-3)
    s = m.shift
    assert s == pytest.approx(math.log((math.e - 1) / 1e-3 + 1))
    assert m.support == (-2 * s, 0.0)
    assert m.exact_delta() == pytest.approx(0.5e-3, rel=1e-12)
    assert m.numeric_delta() == pytest.approx(m.exact_delta(), rel=1e-5)
    assert m.expected_tightening() == s
    assert m.tight_shift() == TruncatedLaplace(epsilon=1.0, delta=1e-3).half_width
    # same noise as the truncated Laplace with δ/2, shifted by −s
    tl = TruncatedLaplace(epsilon=1.0, delta=0.5e-3)
    assert tl.half_width == pytest.approx(s, rel=1e-12)
    z = np.linspace(-2 * s, 0, 7)
    assert np.allclose(m.pdf(z), tl.pdf(z + s))
    assert np.allclose(m.cdf(z), tl.cdf(z + s))
    x = m.sample(20000, rng=0)
    assert x.max() <= 0 and x.min() >= -2 * s
    assert abs(-x.mean() - s) < 0.05
    a, b = m.sample(7, np.random.default_rng(5)), m.sample(size=7, rng=np.random.default_rng(5))
    assert a.shape == (7,) and np.array_equal(a, b)  # samplers take size, then rng
    assert ShiftedTruncatedLaplace(epsilon=1.0, delta=1e-3, m=3).exact_delta() == pytest.approx(
        1e-3 / 6
    )
    with pytest.raises(ValueError):
        ShiftedTruncatedLaplace(epsilon=1.0, delta=1e-3, m=0)
