"""Fixtures shared by the tests of the practitioner tools: small certified solver noises (seconds at
most) and a goodness-of-fit test against an exact law."""

from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

import dpdro


def solver_noise(epsilon, delta, L, beta, loss="l2", atom=False):
    prob = dpdro.Problem(epsilon=epsilon, delta=delta, sensitivity=1.0, loss=loss)
    return dpdro.upper_bound(prob, dpdro.Partition.uniform(L=L, beta=beta), atom=atom).noise


@pytest.fixture(scope="session")
def noise_l2():
    """ε = 1, δ = 0.05, β = 1/16: an optimised noise whose worst shift is not Δf."""
    return solver_noise(1.0, 0.05, 48, 1 / 16)


@pytest.fixture(scope="session")
def noise_small_delta():
    """ε = 1, δ = 1e-6, β = 1/8 (for composition)."""
    return solver_noise(1.0, 1e-6, 128, 1 / 8)


@pytest.fixture(scope="session")
def noise_decimal_grid():
    """β = 0.05: float edges that are not exact lattice points (Lemma 3 of dpdro.composition)."""
    return solver_noise(1.0, 0.05, 60, 0.05)


@pytest.fixture(scope="session")
def noise_atom():
    """ε = 5, δ = 0.75 with a point mass at 0 (about 0.75) optimised by the solver."""
    return solver_noise(5.0, 0.75, 16, 1 / 8, atom=True)


def _chi_square_pvalue(draws, pmf):
    """Pearson goodness of fit of draws against an exact pmf {value: probability}, merging adjacent
    support points until every bin expects at least 5 draws. Draws outside the support fail
    loudly."""
    n = len(draws)
    counts = defaultdict(int)
    for x in draws:
        counts[float(x)] += 1
    assert set(counts) <= set(pmf), "a draw outside the support of the exact law"
    obs, exp, o, e = [], [], 0, 0.0
    for x in sorted(pmf):
        o, e = o + counts.get(x, 0), e + n * float(pmf[x])
        if e >= 5:
            obs.append(o), exp.append(e)
            o, e = 0, 0.0
    obs[-1] += o
    exp[-1] += e
    return stats.chisquare(obs, np.array(exp) * (n / sum(exp))).pvalue


@pytest.fixture(scope="session")
def chi_square_pvalue():
    """The function (draws, pmf) -> p-value of :func:`_chi_square_pvalue`."""
    return _chi_square_pvalue
