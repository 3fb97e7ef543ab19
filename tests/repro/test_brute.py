"""The brute-force references (repro.brute) against closed forms and dpdro's certificate."""

import numpy as np
import pytest

import dpdro
from repro.brute import brute_lp, hockey_stick


def test_hockey_stick_is_the_privacy_profile():
    rng = np.random.default_rng(2)
    p = rng.random(8) + 0.1
    noise = dpdro.PiecewiseUniform(np.arange(-4, 5) * 0.25, p / p.sum(), grid=0.25)
    prof = dpdro.privacy_profile(noise, 0.7, 0.5)
    for phi, d in zip(prof.phis, prof.deltas):
        assert hockey_stick(noise, noise, 0.7, b=phi) == pytest.approx(d, abs=1e-12)
        # only the difference of the two query values matters (Observation 1)
        assert hockey_stick(noise, noise, 0.7, 0.3, 0.3 + phi) == pytest.approx(d, abs=1e-12)


def test_hockey_stick_of_two_noises():
    a = dpdro.PiecewiseUniform([0.0, 1.0], [1.0])
    b = dpdro.PiecewiseUniform([0.0, 2.0], [1.0])
    # ∫ (1[0,1) − e^0·½·1[0,2))₊ = ½ (no shift), and 1 when the supports are disjoint
    assert hockey_stick(a, b, 1e-300) == pytest.approx(0.5)
    assert hockey_stick(a, b, 1.0, b=5.0) == pytest.approx(1.0)


def test_brute_lp_matches_the_cutting_planes():
    prob = dpdro.Problem(epsilon=1.0, delta=0.3, loss="l1")
    part = dpdro.Partition.uniform(2, 0.5)
    assert brute_lp(prob, part, lower=False) == pytest.approx(dpdro.upper_bound(prob, part).lp_value, abs=1e-7)
    assert brute_lp(prob, part, lower=True) == pytest.approx(dpdro.lower_bound(prob, part).lp_value, abs=1e-7)
