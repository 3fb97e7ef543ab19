"""Figure 3 (repro.figure3): the instances, the literature lines, and a live point against the stored one."""

import math

import pytest

from repro import figure3
from repro.provenance import read_json


@pytest.fixture(scope="module")
def stored():
    return read_json(figure3.DATA_INDEPENDENT)


def test_support_rounded_up_and_partition():
    for label, eps, delta in figure3.REGIMES:
        s = figure3.support_half_width(eps, delta)
        a = figure3.benchmark_values(eps, delta)["truncated_laplace_half_width"]
        assert s - 1 < a <= s
        part = figure3.figure3_partition(eps, delta, 4)
        assert part.beta == 0.25 and part.edges[0] == -s and part.edges[-1] == s


def test_benchmark_values_are_the_stored_ones(stored):
    for reg in stored["regimes"]:
        live = figure3.benchmark_values(reg["epsilon"], reg["delta"])
        assert live.keys() == reg["benchmarks"].keys()
        assert all(math.isclose(live[k], reg["benchmarks"][k], rel_tol=1e-12) for k in live)


def test_untruncated_geometric_is_the_papers_low_privacy_line():
    assert figure3.untruncated_geometric(5.0, 0.25) == pytest.approx(figure3.PAPER_FIG3["low"]["near_optimal_lb"],
                                                                     rel=5e-6)


def test_live_point_matches_the_stored_one(stored):
    live = figure3.solve_point(1.0, 0.2, 2)
    st = next(pt for pt in stored["regimes"][1]["points"] if pt["k"] == 2)
    for key in ("upper", "lower", "n_cells", "upper_rounds", "lower_rounds"):
        assert live[key] == pytest.approx(st[key], rel=1e-12), key
    assert live["certified_delta"] <= 0.2 and live["lower"] <= live["upper_solution_infimum_cost"] <= live["upper"]


def test_data_dependent_instance_and_summary():
    row = figure3.solve_instance(1.0, 0.2, 1.0, cap=60.0)
    assert row["status"] == "ok" and row["K"] == 4 and row["support_half_width"] == 3
    assert row["lower"] <= row["best_upper"] <= row["upper"] and row["certified_delta"] <= 0.2
    assert row["best_certified_delta"] <= 0.2 and row["lower_infimum"] <= row["lower"]
    assert row["paper_lower"] == row["upper"] - 0.5 and row["paper_gap"] == 0.5 / row["paper_lower"]
    reg = {"points": [dict(row, seconds=2.0, seconds_upper=1.0, best_upper=1.0, lower=0.9),
                      dict(row, beta=0.5, K=8, seconds=3.0, seconds_upper=1.0, best_upper=0.95,
                           lower=0.91, paper_gap=0.08),
                      dict(status="cap", seconds=7.0, seconds_upper=0.0, paper_gap=None)]}
    figure3.summarise(reg)
    assert [p["cumulative_seconds"] for p in reg["points"]] == [2.0, 5.0, 12.0]
    assert reg["reached"]["0.05"] == dict(beta=0.5, K=8, seconds=5.0)
    assert reg["reached_paper_style"]["0.1"] == dict(beta=0.5, K=8, seconds=2.0)
    assert reg["final_gap"] == (0.95 - 0.91) / 0.91
