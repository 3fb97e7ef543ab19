"""The composition study: the Gaussian calibration, the noise calibration, and the stored results."""

import math

import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

import dpdro
from dpdro.composition import epsilon_for_composition
from repro.crossover import calibrated_sensitivity, crossover_point, gaussian_for_composition, load_crossover


@pytest.fixture(scope="module")
def noise():
    prob = dpdro.Problem(epsilon=1.0, delta=0.05, loss="l2")
    return dpdro.upper_bound(prob, dpdro.Partition.uniform(L=32, beta=1 / 8)).noise


def test_gaussian_composition_is_the_gaussian_at_sensitivity_sqrt_k():
    """k Gaussian releases compose to one at sensitivity √k: dp_accounting's composed PLD agrees."""
    for k in (1, 4, 25):
        sigma = gaussian_for_composition(k, 2.0, 1e-4).sigma
        pld = pld_lib.from_gaussian_mechanism(sigma, sensitivity=1.0, value_discretization_interval=1e-4)
        composed = (pld.self_compose(k) if k > 1 else pld).get_epsilon_for_delta(1e-4)
        assert composed == pytest.approx(2.0, abs=2e-3)


def test_calibrated_sensitivity_is_the_largest_that_composes(noise):
    m = calibrated_sensitivity(noise, 3, 4.0, 0.3, start=8, max_m=32)
    assert 8 <= m < 32
    assert epsilon_for_composition(noise, m / 8, 3, 0.3) <= 4.0 < epsilon_for_composition(noise, (m + 1) / 8, 3, 0.3)
    assert calibrated_sensitivity(noise, 3, 4.0, 1e-12, start=8, max_m=32) == 0  # infinite loss mass > δ


def test_one_point_end_to_end():
    row = crossover_point(2, "l1", 2.0, 0.2, rel_gap=0.2, time_limit=20)
    stored = dpdro.PiecewiseUniform.from_dict(row["noise"])
    assert (row["epsilon0"], row["delta0"]) == (1.0, 0.05) and row["composed_epsilon"] <= 2.0
    assert row["sensitivity_scale"] >= 1.0  # basic composition always fits; the PLD may allow narrower noise
    assert epsilon_for_composition(stored, row["sensitivity_scale"], 2, 0.2) == row["composed_epsilon"]
    assert row["loss_optimal_noise"] == pytest.approx(stored.expected_loss("l1") / row["sensitivity_scale"])
    assert row["ratio"] == pytest.approx(row["loss_optimal_noise"] / row["loss_gaussian"])


def test_stored_results_are_consistent():
    rows = load_crossover()
    assert {r["loss"] for r in rows} == {"l1", "l2"}
    for r in rows:
        stored = dpdro.PiecewiseUniform.from_dict(r["noise"])
        p = 1 if r["loss"] == "l1" else 2
        assert dpdro.certify_delta(stored, r["epsilon0"], 1.0) <= r["delta0"]
        assert r["epsilon0"] == r["epsilon_total"] / r["k"] and r["sensitivity_scale"] >= 1.0
        assert r["composed_epsilon"] <= r["epsilon_total"]
        assert r["loss_optimal_noise"] == pytest.approx(stored.expected_loss(r["loss"]) / r["sensitivity_scale"] ** p)
        gauss = gaussian_for_composition(r["k"], r["epsilon_total"], r["delta_total"])
        assert r["loss_gaussian"] == pytest.approx(gauss.expected_loss(r["loss"]), rel=1e-12)
    small = [r for r in rows if r["k"] <= 3]
    for r in small:  # the composition recomputed (fast for few releases)
        stored = dpdro.PiecewiseUniform.from_dict(r["noise"])
        again = epsilon_for_composition(stored, r["sensitivity_scale"], r["k"], r["delta_total"])
        assert again == r["composed_epsilon"] and not math.isinf(again)
