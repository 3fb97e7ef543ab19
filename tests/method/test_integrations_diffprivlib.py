"""CertifiedNoise inside real diffprivlib workflows (no mocks)."""

import math

import numpy as np
import pytest
from diffprivlib import BudgetAccountant
from diffprivlib.mechanisms import Laplace
from diffprivlib.mechanisms.base import DPMechanism
from diffprivlib.utils import BudgetError
from diffprivlib.validation import clip_to_bounds

import dpdro
from dpdro.integrations.diffprivlib import CertifiedNoise


@pytest.fixture(scope="module")
def mech(noise_l2):
    return CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=1.0, noise=noise_l2)


def test_is_a_diffprivlib_mechanism(mech, noise_l2):
    assert isinstance(mech, DPMechanism)
    assert mech.certified_delta == dpdro.certify_delta(noise_l2, 1.0, 1.0) <= mech.delta
    text = repr(mech)
    assert text.startswith(
        "dpdro.integrations.diffprivlib.CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=1.0"
    )
    twin = mech.copy()
    assert isinstance(twin, CertifiedNoise) and twin.certified_delta == mech.certified_delta
    assert isinstance(mech.randomise(3), float)


def test_rejects_bad_input(noise_l2):
    with pytest.raises(ValueError, match=r"certify_delta gives 0.0499.* > delta = 0.01"):
        CertifiedNoise(epsilon=1.0, delta=0.01, sensitivity=1.0, noise=noise_l2)
    with pytest.raises(ValueError, match=r"certify_delta gives .* > delta = 0.05"):
        CertifiedNoise(
            epsilon=1.0, delta=0.05, sensitivity=2.0, noise=noise_l2
        )  # noise too small for Δf = 2
    with pytest.raises(ValueError, match="epsilon must be finite and > 0, got 0"):
        CertifiedNoise(epsilon=0, delta=0.05, sensitivity=1.0, noise=noise_l2)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 0"):
        CertifiedNoise(epsilon=1.0, delta=0, sensitivity=1.0, noise=noise_l2)
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0, got -1"):
        CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=-1, noise=noise_l2)
    with pytest.raises(TypeError, match="noise must be a dpdro.PiecewiseUniform"):
        CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=1.0, noise="laplace")
    mech = CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=1.0, noise=noise_l2)
    with pytest.raises(TypeError, match="value must be a real number"):
        mech.randomise("1")
    with pytest.raises(ValueError, match="value must be a finite real number, got inf"):
        mech.randomise(math.inf)


def test_random_state_convention(noise_l2):
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0, noise=noise_l2)
    seeded = [CertifiedNoise(random_state=7, **kw).randomise(2.0) for _ in range(2)]
    assert seeded[0] == seeded[1]
    state = np.random.RandomState(7)
    a = CertifiedNoise(random_state=state, **kw)
    assert a.randomise(2.0) != a.randomise(2.0)  # a RandomState is consumed, as in diffprivlib
    secure = CertifiedNoise(**kw)
    assert len({secure.randomise(2.0) for _ in range(5)}) == 5


def test_bias_variance_mse_match_empirical_moments(noise_l2):
    mech = CertifiedNoise(
        epsilon=1.0, delta=0.05, sensitivity=1.0, noise=noise_l2, random_state=3, resolution=0.25
    )
    value = 10.1
    draws = np.array([mech.randomise(value) for _ in range(40_000)])
    se_mean = math.sqrt(mech.variance(value) / draws.size)
    assert abs(draws.mean() - value - mech.bias(value)) < 4 * se_mean
    assert draws.var() == pytest.approx(mech.variance(value), rel=0.03)
    assert mech.variance(value) > noise_l2.var  # coarse resolution: the rounding variance shows
    assert mech.mse(value) == pytest.approx(mech.variance(value) + mech.bias(value) ** 2)


def test_workflow_side_by_side_with_laplace_under_a_budget_accountant(noise_l2):
    """A diffprivlib-style loop: clip, sum, randomise, spend from one BudgetAccountant. At (ε, δ) =
    (1, 0.05) the certified optimised noise has about half the MSE of diffprivlib's Laplace at ε =
    1."""
    rng = np.random.default_rng(0)
    accountant = BudgetAccountant(epsilon=30.0, delta=0.41)
    ours = CertifiedNoise(epsilon=1.0, delta=0.05, sensitivity=1.0, noise=noise_l2, random_state=1)
    laplace = Laplace(epsilon=1.0, sensitivity=1.0, random_state=1)
    err_ours, err_laplace = [], []
    for _ in range(10):
        data = clip_to_bounds(rng.uniform(-0.5, 1.5, size=(50, 1)), (0.0, 1.0)).ravel()
        true = float(data.sum())  # sensitivity 1 under adding/removing one record
        for mech, errors in ((ours, err_ours), (laplace, err_laplace)):
            accountant.check(mech.epsilon, mech.delta)
            errors.append(mech.randomise(true) - true)
            accountant.spend(mech.epsilon, mech.delta)
    assert len(accountant) == 20 and accountant.spent_budget.count((1.0, 0.05)) == 10
    assert accountant.total()[1] == pytest.approx(1 - 0.95**10)  # diffprivlib's δ composition
    with pytest.raises(BudgetError):  # an 11th release would need 1 − 0.95^11 ≈ 0.431 > 0.41
        accountant.check(ours.epsilon, ours.delta)
    assert ours.mse(0.0) < 0.6 * laplace.mse(0.0)
    # empirical check of the same ordering with many draws (seeded, deterministic)
    many_ours = np.array([ours.randomise(0.0) for _ in range(20_000)])
    many_laplace = np.array([laplace.randomise(0.0) for _ in range(20_000)])
    assert np.mean(many_ours**2) < 0.6 * np.mean(many_laplace**2)


def test_from_noise_takes_the_recorded_guarantee():
    res = dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=1e-3, sensitivity=2.0, loss="l2"))
    mech = CertifiedNoise.from_noise(res.noise, random_state=3)
    assert (mech.epsilon, mech.delta, mech.sensitivity) == (1.0, 1e-3, 2.0)
    assert mech.certified_delta == dpdro.certify_delta(res.noise, 1.0, 2.0)
    assert isinstance(mech.randomise(10.0), float)
