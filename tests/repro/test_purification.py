"""Purification of approximate DP (repro.purification, chapter 41): Algorithm 1 of Lin et al., d = 1."""

import math

import numpy as np
import pytest

import dpdro
from dpdro.mechanisms import Staircase, TruncatedLaplace
from repro.purification import gaussian_grid_noise, piecewise_uniform_grid_noise, purify_1d


def test_purification_pure_dp_and_error():
    eps, eps_p, delta, Q = 0.5, 0.5, 1e-6, 4
    A = TruncatedLaplace(epsilon=eps, delta=delta).half_width
    M = math.ceil(1.5 * A)
    prob = dpdro.Problem(epsilon=eps, delta=delta)
    ub = dpdro.upper_bound(prob, dpdro.Partition.uniform(math.ceil(1.5 * A * 4), 0.25))
    base = piecewise_uniform_grid_noise(ub.noise, 0.25)
    assert base.masses.sum() == pytest.approx(1.0)
    P = purify_1d(base, epsilon=eps, delta=delta, eps_prime=eps_p, omega=1e-3, Q=Q, margin=M)
    e_pre, (q, q2, i) = P.pre_laplace_epsilon()
    assert np.isfinite(e_pre) and e_pre <= P.theorem_epsilon
    x = P.theta[0] + (i + np.linspace(0, 1, 11)) * P.h
    e_att = P.attained_epsilon(q, q2, x)
    assert e_att <= e_pre + 1e-9
    # the pure-DP level of the final output, checked on a grid of x, never exceeds the certificate
    xs = np.linspace(P.theta[0] - 1, P.theta[1] + 1, 4001)
    for qa in range(Q):
        r = np.log(P.density(qa, xs)) - np.log(P.density(qa + 1, xs))
        assert np.max(np.abs(r)) <= e_pre + 1e-9
    err = P.expected_error()
    # worst-case error at least that of the staircase at the certified ε (Geng–Viswanath bound for the
    # interior queries is not a theorem here, so only a sanity margin), and the theorem's utility bound
    assert err.max() >= 0.9 * Staircase(epsilon=e_pre).expected_loss("l1")
    theorem_bound = P.omega * P.R + 4 * P.R / eps_p * delta / (2 * P.omega)
    assert err.max() - ub.noise.expected_loss("l1") <= theorem_bound + 1e-9


def test_gaussian_grid_noise_masses():
    g = gaussian_grid_noise(2.0, 0.25, 10.0)
    assert g.masses.sum() + g.below + g.above == pytest.approx(1.0, abs=1e-12)
    assert g.masses.size == 80
