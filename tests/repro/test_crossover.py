"""The composition study: one point end to end, and the stored results re-checked."""

import math

import pytest

import dpdro
from dpdro.composition import privacy_loss_distribution
from dpdro.mechanisms import AnalyticGaussian
from repro.crossover import DELTA, EPSILONS, KS, crossover_point, load_crossover


def _check(row):
    """Every certified number of a stored or fresh point, recomputed where it is cheap."""
    g = AnalyticGaussian(
        epsilon=row["epsilon"], delta=row["delta"], sensitivity=math.sqrt(row["k"])
    )
    assert row["gaussian"]["sigma"] == g.sigma and row["gaussian"]["composed_delta"] <= row["delta"]
    assert row["gaussian"]["expected_loss"] == pytest.approx(
        g.expected_loss(row["loss"]), rel=1e-12
    )
    plan = row["optimal_noise"]
    noise = dpdro.PiecewiseUniform.from_dict(plan["noise"])
    assert dpdro.certify_delta(noise, plan["epsilon0"], 1.0) <= plan["delta0"]
    assert plan["epsilon0"] >= row["epsilon"] / row["k"] * (
        1 - 1e-12
    )  # never below basic composition
    assert plan["composed_delta"] <= row["delta"]
    assert plan["expected_loss"] == pytest.approx(noise.expected_loss(row["loss"]), rel=1e-12)
    assert row["ratio"] == pytest.approx(plan["expected_loss"] / row["gaussian"]["expected_loss"])
    assert row["winner"] == ("optimal_noise" if row["ratio"] <= 1 else "analytic_gaussian")
    return noise


def test_one_point_end_to_end():
    row = crossover_point(3, 2.0, 1e-3, "l1")
    noise = _check(row)
    composed = privacy_loss_distribution(noise, 1.0).self_compose(3).get_delta_for_epsilon(2.0)
    assert composed <= 1e-3 * (1 + 1e-9)


def test_stored_results_cover_the_grid_and_are_consistent():
    rows = load_crossover()
    assert {(r["loss"], r["epsilon"], r["k"]) for r in rows} == {
        (loss, e, k) for loss in ("l1", "l2") for e in EPSILONS for k in KS
    }
    for r in rows:
        assert r["delta"] == DELTA
        noise = _check(r)
        if r["k"] <= 2:  # the composition recomputed where it is fast
            pld = privacy_loss_distribution(noise, 1.0, value_discretization_interval=1e-4)
            composed = (pld.self_compose(r["k"]) if r["k"] > 1 else pld).get_delta_for_epsilon(
                r["epsilon"]
            )
            assert composed <= r["delta"] * (1 + 1e-6)
    one = [r for r in rows if r["k"] == 1]
    assert all(r["winner"] == "optimal_noise" for r in one)  # a single release: the optimum wins
