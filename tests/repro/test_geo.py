"""ε-geographic DP (repro.geo): closed forms of the multi-selection paper, exact integrals,
the exact Lipschitz certificate, and validity of the upper and lower bounds."""

import math

import numpy as np
import pytest
from scipy import integrate

from repro import geo

RING = 2 * math.pi


def _quad_cost(noise, loss, lo, hi, points=()):
    f = lambda x: float(loss(x)) * float(noise.pdf(x))
    return integrate.quad(f, lo, hi, points=sorted(points), limit=400, epsabs=1e-12, epsrel=1e-11)[0]


@pytest.mark.parametrize("k", range(1, 9))
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_closed_forms(k, eps):
    got = geo.laplace_optimal_cost(eps, k)
    want = 2 / (eps * (k + 1)) if k % 2 else math.log(1 + 2 / k) / eps
    assert got == pytest.approx(want, rel=1e-12)
    # the paper's point set is a local minimum: perturbing any offset increases the cost
    a = geo.laplace_offsets(eps, k)
    lap = geo.laplace_noise(eps, span=float(np.abs(a).max()) + 1)
    for j in range(k):
        for d in (-1e-3, 1e-3):
            b = a.copy()
            b[j] += d
            assert lap.expected_loss(geo.multi_selection_loss(b)) > got


def test_odd_elementwise_formula_has_a_typo():
    # Theorem B.3(1) element-wise: x_i = -2 log((k+3)/2 - i)/eps; for k = 5 it gives -2log3, -2log2, 0, ...
    eps, k = 1.0, 5
    elementwise = [-2 * math.log((k + 3) / 2 - i) / eps for i in (1, 2)]
    sets = geo.laplace_offsets(eps, k)[:2]
    assert sets[0] == pytest.approx(elementwise[0])
    assert sets[1] != pytest.approx(elementwise[1])  # -2 log(3/2) from the displayed set
    lap = geo.laplace_noise(eps, span=5)
    bad = np.array(elementwise + [0.0] + [-e for e in elementwise[::-1]])
    assert lap.expected_loss(geo.multi_selection_loss(bad)) > geo.laplace_optimal_cost(eps, k) + 1e-3


def test_expected_loss_matches_quadrature_line_and_ring():
    rng = np.random.default_rng(1)
    eps = 0.8
    x = np.linspace(-3, 3, 13)
    phi = np.cumsum(np.concatenate(([0.0], rng.uniform(-eps, eps, 12) * 0.5)))
    noise = geo.LogLinearNoise(x, phi, tail_rate=eps)
    loss = geo.multi_selection_loss([-1.0, 0.3, 2.0])
    pts = list(x) + list(loss.knots)
    assert noise.expected_loss(loss) == pytest.approx(_quad_cost(noise, loss, -60, 60, pts), rel=1e-8)
    assert integrate.quad(noise.pdf, -60, 60, points=pts, limit=400)[0] == pytest.approx(1.0, rel=1e-9)
    xr = np.linspace(-math.pi, math.pi, 9)
    phr = np.concatenate(([0.0], rng.uniform(-1, 1, 7) * 0.3, [0.0]))
    ring = geo.LogLinearNoise(xr, phr, period=RING)
    rl = geo.ring_loss([0.5, 2.5])
    assert ring.expected_loss(rl) == pytest.approx(_quad_cost(ring, rl, -math.pi, math.pi, list(xr) + list(rl.knots)), rel=1e-8)


def test_ring_loss_is_arc_distance():
    rl = geo.ring_loss([0.4, -2.9])
    x = np.linspace(-math.pi, math.pi, 1001)
    arc = lambda x, p: np.minimum(np.mod(x - p, RING), np.mod(p - x, RING))
    want = np.minimum(arc(x, -0.4), arc(x, 2.9))
    assert np.allclose(rl(x), want, atol=1e-12)


def test_certificate_is_exact():
    lap = geo.laplace_noise(0.7, span=2.0)
    assert lap.certify(0.7) and not lap.certify(0.7 * (1 - 1e-12))
    assert lap.lipschitz() == pytest.approx(0.7)
    steep = geo.LogLinearNoise([0.0, 1.0, 2.0], [0.0, -0.7000001, -1.4], tail_rate=0.7)
    assert not steep.certify(0.7)


def test_bounds_bracket_laplace_and_converge():
    eps, k = 1.0, 3
    prob = geo.GeoProblem(eps, geo.multi_selection_loss(geo.laplace_offsets(eps, k)))
    f = geo.laplace_optimal_cost(eps, k)
    gaps = []
    for beta in (0.4, 0.2):
        L = int(round(14 / beta))
        ub = geo.geo_upper_bound(prob, beta, L, shift=0.5)
        lb = geo.geo_lower_bound(prob, beta, L, shift=0.5)
        assert ub.certified and ub.noise.certify(eps)
        assert lb.value <= f + 1e-12 <= ub.value + 2e-12
        assert ub.value == pytest.approx(ub.lp_value, rel=1e-3)
        gaps.append(ub.value - lb.value)
    assert gaps[1] < 0.6 * gaps[0]


def test_lower_bound_below_every_feasible_noise():
    rng = np.random.default_rng(7)
    eps = 0.6
    a = np.array([-1.5, 0.2, 1.1])
    loss = geo.multi_selection_loss(a)
    lb = geo.geo_lower_bound(geo.GeoProblem(eps, loss), 0.25, 80)
    for _ in range(20):
        x = np.linspace(-6, 6, 25)
        phi = np.cumsum(np.concatenate(([0.0], rng.uniform(-eps, eps, 24) * 0.5)))
        noise = geo.LogLinearNoise(x, phi, tail_rate=eps * rng.uniform(0.3, 1.0))
        assert noise.certify(eps)
        assert lb.value <= noise.expected_loss(loss)
    assert lb.value <= geo.laplace_noise(eps, span=3).expected_loss(loss)


def test_ring_bounds_and_laplace_feasible():
    eps = 3 / 8
    prob = geo.GeoProblem(eps, geo.ring_loss([0.0, math.pi]), period=RING)
    ub = geo.geo_upper_bound(prob, RING / 120)
    lb = geo.geo_lower_bound(prob, RING / 120)
    lap = geo.laplace_noise(eps, period=RING)
    assert ub.certified and lap.certify(eps)
    assert lb.value <= ub.value
    assert lb.value <= lap.expected_loss(prob.loss)


def test_sampling_matches_expected_loss():
    eps = 1.0
    loss = geo.multi_selection_loss(geo.laplace_offsets(eps, 3))
    ub = geo.geo_upper_bound(geo.GeoProblem(eps, loss), 0.2, 60, shift=0.5)
    s = ub.noise.sample(200_000, np.random.default_rng(0))
    assert np.mean(loss(s)) == pytest.approx(ub.value, abs=4 * np.std(loss(s)) / math.sqrt(s.size))


def test_input_checks():
    with pytest.raises(ValueError):
        geo.GeoProblem(1.0, geo.multi_selection_loss([0.0, 3.0])).grid(0.5, 2)  # grid too small
    with pytest.raises(ValueError):
        geo.GeoProblem(1.0, geo.ring_loss([0.0]), period=RING).grid(1.0)  # beta must divide the period
    with pytest.raises(TypeError):
        geo.GeoProblem(1.0, "l1")
