"""Lemma 1's machinery (e-companion A.2) against brute force over every event, off the β-grid too.

For shifts φ on a finer lattice h = β/m, the integrand g(x) − e^ε g(x − φ) is constant on lattice
cells, so enumerating every union of lattice cells of the support finds the maximum over all Borel
events. We check Definition 1 / Observation A.2 / Lemma A.2 (the unique maximiser is a union of the
pieces I¹_i, I²_i and its value is the closed form), Algorithm 2 on the refined partition, and
Lemmas A.3 / 1 (the maximum over all shifts is attained on the β-grid; the shortfall is affine in
between).
"""

import itertools
import math

import numpy as np
import pytest

import dpdro
from dpdro.testing import brute_max_shortfall

CASES = [  # (L, beta, m, epsilon): Δf = 1
    (1, 0.5, 4, 1.0),
    (2, 0.5, 3, 0.5),
    (1, 1.0 / 3.0, 3, 2.0),
    (2, 1.0, 2, 1.0),
]


def _p_of(p, L, i):
    return p[i + L] if -L <= i <= L else 0.0


def _def1_worst(p, L, beta, phi, exp_eps):
    """Observation A.2 / Lemma A.2 on the probability scale: max_A γ(A) − e^ε γ(A − φ)."""
    total = 0.0
    for i in range(-L, L + 1):
        j = math.ceil(i - phi / beta)
        cut = phi + j * beta
        total += (cut - i * beta) * max(_p_of(p, L, i) - exp_eps * _p_of(p, L, j - 1), 0.0)
        total += ((i + 1) * beta - cut) * max(_p_of(p, L, i) - exp_eps * _p_of(p, L, j), 0.0)
    return total / beta


def _exact_worst(noise, phi, exp_eps):
    """max_A γ(A) − e^ε γ(A − φ) by splitting the line at the cell edges and the shifted cell
    edges."""
    bps = np.unique(np.concatenate((noise.edges, noise.edges + phi)))
    mid = 0.5 * (bps[:-1] + bps[1:])
    h = noise.pdf(mid) - exp_eps * noise.pdf(mid - phi)
    return float(np.sum(np.diff(bps) * np.maximum(h, 0.0)))


@pytest.mark.parametrize("L,beta,m,eps", CASES)
def test_worst_events_are_unions_of_definition1_pieces(L, beta, m, eps):
    problem = dpdro.Problem(epsilon=eps, delta=0.1, sensitivity=1.0)
    k = problem.shifts(beta)
    rng = np.random.default_rng(4)
    ticks = np.arange(-L * m, (L + 1) * m)
    masks = np.array(list(itertools.product((0, 1), repeat=ticks.size)), dtype=np.int8)
    part = dpdro.Partition.uniform(L, beta)
    fine = part.refined(m)
    for _ in range(3):
        p = rng.random(2 * L + 1) ** 2
        p /= p.sum()
        oracle = dpdro.max_privacy_shortfall(problem, fine, np.repeat(p, m) / m)
        by_shift = dict(
            zip(
                np.round(oracle.shifts / fine.beta).astype(int),
                oracle.by_shift + problem.delta,
                strict=False,
            )
        )
        best_all = -np.inf
        for s in range(-k * m, k * m + 1):
            own = np.array([_p_of(p, L, t // m) for t in ticks]) / m
            shifted = np.array([_p_of(p, L, (t - s) // m) for t in ticks]) / m
            values = masks @ (own - problem.exp_epsilon * shifted)
            best = values.max()
            best_all = max(best_all, best)
            phi = s * beta / m
            assert best == pytest.approx(
                _def1_worst(p, L, beta, phi, problem.exp_epsilon), abs=1e-12
            )
            assert best == pytest.approx(by_shift[s], abs=1e-12)
            winners = np.nonzero(values >= best - 1e-12)[0]
            assert winners.size == 1
            winner = masks[winners[0]]
            # every piece I¹_i (lattice cells t < s + j m) and I²_i lies entirely in or out of the
            # maximiser
            for i in range(-L, L + 1):
                j = -((s - i * m) // m)
                for piece in (range(i * m, s + j * m), range(s + j * m, (i + 1) * m)):
                    members = {int(winner[t + L * m]) for t in piece}
                    assert len(members) <= 1
        # Lemma A.3 + Lemma 1: the maximum over all events and lattice shifts is attained on E(L, β)
        grid = brute_max_shortfall(problem, part.pi, part.pi, p, range(-k, k + 1)) + problem.delta
        assert best_all == pytest.approx(grid, abs=1e-12)


@pytest.mark.parametrize("L,beta,m,eps", CASES)
def test_worst_shortfall_is_affine_between_grid_shifts(L, beta, m, eps):
    problem = dpdro.Problem(epsilon=eps, delta=0.1, sensitivity=1.0)
    k = problem.shifts(beta)
    part = dpdro.Partition.uniform(L, beta)
    rng = np.random.default_rng(5)
    grid_phis = np.arange(-k, k + 1) * beta
    for _ in range(3):
        p = rng.random(2 * L + 1) ** 2
        p /= p.sum()
        noise = dpdro.PiecewiseUniform(part.edges, p, grid=beta)
        at_grid = np.array([_exact_worst(noise, phi, problem.exp_epsilon) for phi in grid_phis])
        phis = rng.uniform(-1.0, 1.0, 200)
        exact = np.array([_exact_worst(noise, phi, problem.exp_epsilon) for phi in phis])
        closed = np.array([_def1_worst(p, L, beta, phi, problem.exp_epsilon) for phi in phis])
        np.testing.assert_allclose(exact, closed, atol=1e-12)
        np.testing.assert_allclose(exact, np.interp(phis, grid_phis, at_grid), atol=1e-12)
        assert exact.max() <= dpdro.certify_delta(noise, epsilon=eps, sensitivity=1.0)
