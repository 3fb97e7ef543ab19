"""The leaderboard: certified gaps of the literature mechanisms from the stored table cells."""

import math

import numpy as np
import pytest

from dpdro.mechanisms import AnalyticGaussian, Tulap
from repro.leaderboard import (
    LABELS,
    MECHANISMS,
    SCALE_PERCENT,
    _decade_label,
    below_dpdro,
    leaderboard,
    leaderboard_figure,
    leaderboard_grid,
    leaderboard_summary,
)
from repro.tables import load_cells

LABELS_LOSS = {"l1": "ℓ1", "l2": "ℓ2"}


@pytest.fixture(scope="module")
def rows():
    cells = load_cells()
    # a corner of the table keeps the test quick: two ε, two δ, both losses
    keep = {k: c for k, c in cells.items() if k[1] in (0.1, 1.0) and k[2] in (0.01, 0.2)}
    assert len(keep) == 8
    return leaderboard(keep)


def test_every_mechanism_in_every_cell_with_a_certified_gap(rows):
    assert len(rows) == 8 * len(MECHANISMS)
    for r in rows:
        assert r["gap"] == pytest.approx(r["expected_loss"] / r["lower"] - 1)
        assert r["gap"] > 0  # every mechanism costs more than the certified lower bound
    one = {
        r["mechanism"]: r for r in rows if (r["loss"], r["epsilon"], r["delta"]) == ("l2", 1.0, 0.2)
    }
    assert one["tulap"]["expected_loss"] == Tulap(epsilon=1.0, delta=0.2).expected_loss("l2")
    assert one["analytic_gaussian"]["expected_loss"] == AnalyticGaussian(
        epsilon=1.0, delta=0.2
    ).expected_loss("l2")
    assert one["dpdro"]["gap"] <= 0.0101  # the stored cells reach a 1% gap
    assert all(r["valid"] for r in rows)  # ε ≤ 1: even the classical Gaussian is (ε, δ)-DP


def test_grid_and_summary(rows):
    eps, deltas, grid = leaderboard_grid(rows, "l1", "tulap")
    assert (
        eps.tolist() == [0.1, 1.0] and deltas.tolist() == [0.01, 0.2] and np.all(np.isfinite(grid))
    )
    summary = {(s["loss"], s["mechanism"]): s for s in leaderboard_summary(rows)}
    for loss in ("l1", "l2"):
        assert sum(summary[loss, m]["best_baseline_in"] for m in MECHANISMS) == 4
        assert summary[loss, "dpdro"]["max_gap"] < summary[loss, "tulap"]["median_gap"]


def test_invalid_mechanisms_are_flagged_and_left_out_of_the_grid():
    """At ε = 5, δ = 0.5 the classical Gaussian calibration is only (5, 0.587)-DP: kept, flagged,
    blank in the figure."""
    cells = {k: c for k, c in load_cells().items() if k[1] == 5.0 and k[2] == 0.5}
    rows = leaderboard(cells)
    gauss = [r for r in rows if r["mechanism"] == "gaussian"]
    assert gauss and not any(r["valid"] for r in gauss)
    assert math.isnan(leaderboard_grid(rows, "l1", "gaussian")[2][0, 0])


def test_figure(rows):
    """One figure per loss: a titled panel per mechanism, and the colour bar."""
    for loss in ("l1", "l2"):
        fig = leaderboard_figure(rows, loss)
        shown = [ax for ax in fig.axes if ax.axison]
        assert [ax.get_title() for ax in shown[:-1]] == [LABELS[m] for m in MECHANISMS]
        assert shown[-1].get_xlabel().startswith(LABELS_LOSS[loss])


def test_colour_scale_reaches_below_every_stored_gap():
    """The figures' colour scale (in percent) starts below the smallest certified gap of every
    mechanism over the stored cells, so dpdro's and Tulap's small gaps are drawn, not clipped."""
    board = leaderboard()
    gaps = [100 * r["gap"] for r in board if r["valid"]]
    assert len(gaps) == 2 * 100 * len(MECHANISMS) - 2 * 3  # the classical Gaussian: 97 valid
    assert min(gaps) > SCALE_PERCENT[0]
    assert SCALE_PERCENT[1] == 1e4


def test_decade_labels():
    assert [_decade_label(10.0**k) for k in range(-3, 5)] == [
        "0.001", "0.01", "0.1", "1", "10", "100", "$10^{3}$", "$10^{4}$"
    ]


def test_below_dpdro_lists_exactly_the_cells_where_a_mechanism_costs_less(rows):
    for loss in ("l1", "l2"):
        for m in MECHANISMS[1:]:
            found = {(e, d): x for e, d, x in below_dpdro(rows, loss, m)}
            for r in rows:
                if r["loss"] != loss or r["mechanism"] != m:
                    continue
                key = (r["epsilon"], r["delta"])
                ours = next(
                    q["expected_loss"]
                    for q in rows
                    if q["mechanism"] == "dpdro"
                    and (q["loss"], q["epsilon"], q["delta"]) == (loss, *key)
                )
                if r["valid"] and r["expected_loss"] < ours:
                    assert found.pop(key) == pytest.approx(ours / r["expected_loss"] - 1)
            assert not found
    # a hand-made cell: Tulap below the stored noise by 1%
    made = [
        {"loss": "l1", "epsilon": 0.1, "delta": 0.01, "mechanism": "dpdro", "expected_loss": 1.01,
         "valid": True},
        {"loss": "l1", "epsilon": 0.1, "delta": 0.01, "mechanism": "tulap", "expected_loss": 1.0,
         "valid": True},
    ]
    assert below_dpdro(made, "l1", "tulap") == [(0.1, 0.01, pytest.approx(0.01))]
    made[1]["valid"] = False
    assert below_dpdro(made, "l1", "tulap") == []
