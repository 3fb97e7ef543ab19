"""The stored "where it pays" map (results/where_it_pays.json, scripts/where_it_pays.py) against
recomputation: closed forms exactly, optimum brackets that overlap a fresh solve, every released
noise re-certified, and no closed form below the certified lower bound of the optimum."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

import dpdro
from dpdro.losses import PiecewiseLinear
from dpdro.mechanisms import Laplace, Tulap, truncated_laplace_half_width
from dpdro.reference import best_shift
from repro import where_it_pays as wip

STORED = json.loads(wip.OUT.read_text(encoding="utf-8"))
CELLS = STORED["cells"]
SOLVED = [c for c in CELLS.values() if c["lower"] is not None]
# one fast cell per setting to re-solve (a few seconds at most here)
RESOLVE = [
    ("l1", 1.0, 1e-6),
    ("l2", 0.05, 1e-10),
    ("asymmetric", 0.05, 0.1),
    ("one_sided", 0.5, 0.1),
]


def test_grid_complete_with_provenance():
    keys = {
        wip.cell_key(s, e, d)
        for s, e, d in itertools.product(wip.SETTINGS, wip.EPSILONS, wip.DELTAS)
    }
    assert keys <= set(CELLS)
    assert STORED["settings"]["rel_gap"] == wip.REL_GAP == 1e-3
    assert STORED["settings"]["time_limit"] == wip.TIME_LIMIT == 20
    prov = STORED["provenance"]
    assert prov["git_commit"] != "unknown" and prov["seconds"] > 0
    for c in CELLS.values():
        assert (c["lower"] is None) == ("error" in c)


@pytest.mark.parametrize(
    "setting,epsilon,delta",
    [(s, e, d) for s in wip.SETTINGS for e, d in ((0.05, 1e-10), (1.0, 1e-4), (8.0, 0.1))],
)
def test_closed_forms_recomputed_exactly(setting, epsilon, delta):
    c = CELLS[wip.cell_key(setting, epsilon, delta)]
    closed = wip.closed_forms(setting, epsilon, delta)
    assert set(closed) == set(c["closed"])
    for name, value in closed.items():  # closed forms, exact sums or quadrature to ~1e-12
        assert math.isclose(value, c["closed"][name], rel_tol=1e-10), name
    assert c["best"] == min(closed, key=closed.get) and c["best_value"] == c["closed"][c["best"]]


def test_ratio_is_the_bracketed_quotient_and_never_below_the_lower_bound():
    assert len(SOLVED) >= 0.9 * len(CELLS)
    for c in SOLVED:
        lo, up = c["lower"], c["upper"]
        assert 0 < lo <= up
        assert c["ratio"] == list(wip.ratio_interval(c["best_value"], lo, up))
        assert math.isclose(c["gap"], (up - lo) / lo, rel_tol=1e-12)
        # a closed form is (ε, δ)-DP, so it cannot beat the certified lower bound of the optimum
        assert c["best_value"] >= lo * (1 - 1e-12), c
        assert c["ratio"][1] >= 1 - 1e-12
        assert c["ratio"][0] >= 1 - c["gap"]
        assert c["reached"] == (c["gap"] <= wip.REL_GAP)


@pytest.mark.parametrize("setting,epsilon,delta", RESOLVE)
def test_bracket_overlaps_a_fresh_solve(setting, epsilon, delta):
    c = CELLS[wip.cell_key(setting, epsilon, delta)]
    fresh = wip.map_cell(setting, epsilon, delta, keep_noise=False)
    # both are certified brackets of the same optimum: they must intersect
    assert max(c["lower"], fresh["lower"]) <= min(c["upper"], fresh["upper"]) * (1 + 1e-12)
    # the closed forms' losses recomputed: equal up to the CPU's summation order (4e-14 relative
    # between the machine that stored them and an AMD EPYC)
    assert fresh["closed"].keys() == c["closed"].keys()
    for name, value in c["closed"].items():
        assert fresh["closed"][name] == pytest.approx(value, rel=1e-12), name


def test_every_stored_noise_recertified():
    for c in SOLVED:
        noise = dpdro.PiecewiseUniform.from_dict(c["noise"])
        assert dpdro.certify_delta(noise, c["epsilon"], 1.0) <= c["delta"]
        loss = wip.problem(c["setting"], c["epsilon"], c["delta"]).loss
        assert math.isclose(noise.expected_loss(loss), c["upper"], rel_tol=1e-9)
        if c["setting"] == "one_sided":
            assert noise.support[0] >= 0.0


@pytest.mark.parametrize("epsilon,delta", [(0.2, 1e-8), (4.0, 1e-2)])
def test_asymmetric_closed_forms_are_one_and_a_half_l1(epsilon, delta):
    # every closed form is symmetric, so E[|X| + 1[X > 0]|X|] = 1.5 E|X| (checks the quadrature)
    l1 = wip.closed_forms("l1", epsilon, delta)
    asym = wip.closed_forms("asymmetric", epsilon, delta)
    assert set(asym) == set(l1) | {f"shifted_{name}" for name in l1}
    for name in l1:
        assert math.isclose(asym[name], 1.5 * l1[name], rel_tol=1e-7), name
        # the best shift helps (the loss is asymmetric, the noise symmetric)
        assert asym[f"shifted_{name}"] < asym[name]


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_best_shift_of_laplace_in_closed_form(epsilon):
    # X ~ Laplace(b): the 2/3-quantile is b log 1.5 and E c(X − q) = b (1 + log 1.5)
    b = 1.0 / epsilon
    s, value = best_shift(Laplace(epsilon=epsilon), dpdro.asymmetric_loss())
    q = -s
    assert math.isclose(q, b * math.log(1.5), rel_tol=1e-12)
    assert math.isclose(value, b * (1.0 + math.log(1.5)), rel_tol=1e-8)
    # and no other shift does better
    asym = dpdro.asymmetric_loss()
    for dq in (-0.05 * b, 0.05 * b):
        shifted = PiecewiseLinear([q + dq], [0.0], left_slope=-1.0, right_slope=2.0)
        assert Laplace(epsilon=epsilon).expected_loss(shifted) > value
    assert value < Laplace(epsilon=epsilon).expected_loss(asym)


@pytest.mark.parametrize("epsilon,delta", [(0.05, 0.1), (2.0, 1e-6)])
def test_one_sided_closed_forms_are_shifted_half_widths(epsilon, delta):
    closed = wip.closed_forms("one_sided", epsilon, delta)
    a = truncated_laplace_half_width(epsilon=epsilon, delta=delta, sensitivity=1.0)
    assert math.isclose(closed["shifted_truncated_laplace"], a, rel_tol=1e-12)
    tulap = Tulap(epsilon=epsilon, delta=delta).to_piecewise_uniform()
    lo, hi = tulap.support
    assert math.isclose(-lo, hi, rel_tol=1e-12)  # symmetric: shifted by hi onto [0, 2hi]
    assert math.isclose(tulap.mean, 0.0, abs_tol=1e-9 * hi)  # so E(X + hi) = hi
    assert closed["shifted_tulap"] == hi
    assert dpdro.certify_delta(tulap, epsilon, 1.0) <= delta  # shifting keeps the certificate


def test_ratio_interval():
    assert wip.ratio_interval(2.0, 1.0, 4.0) == (0.5, 2.0)
    assert wip.ratio_interval(1.0, 0.0, 1.0) == (1.0, math.inf)


def test_a_range_is_what_the_map_draws_as_a_range():
    """The lower end is raised to 1 before the width is measured, so the counts of ranges agree
    with the labels of the maps."""
    assert wip.map_label(0.95, 1.005) == "1.00" and not wip.shown_as_range(0.95, 1.005)
    assert wip.map_label(1.02, 1.05) == "1.02–1.05" and wip.shown_as_range(1.02, 1.05)
    assert wip.shown_width(0.9, 1.2) == pytest.approx(0.2)
    grid = np.array([[[0.95, 1.005], [1.02, 1.05]], [[np.nan, np.nan], [1.1, 1.105]]])
    assert wip.n_ranges(grid) == 1 and type(wip.n_ranges(grid)) is int  # glued as text
    line = wip.summary_line("x", grid)
    assert line == ("x: 3 of 4 bracketed, 2 labelled 1.01 or more, 1 range\n"
                    "  largest ratio certified in [1.100, 1.105]")


def test_largest_upper_bounds_every_ratio_and_cells_read_as_math():
    """The largest upper end is rounded up (no cell's ratio exceeds it), unlike the largest
    lower end, which is rounded down; cell lists read as inline math."""
    grid = np.array([[[1.119, 1.121], [np.nan, np.nan]], [[1.04, 1.115], [1.0, 1.001]]])
    assert wip.largest(grid) == "1.11" and wip.largest_upper(grid) == "1.13"
    assert wip.largest(grid, 3) == "1.119" and wip.largest_upper(grid, 3) == "1.121"
    assert wip.tex_value(1e-10) == "10^{-10}" and wip.tex_value(0.01) == "0.01"
    small = [d for d in wip.DELTAS if d <= 1e-4]
    assert wip.cell_tex(8.0, [*small, 0.01]) == (
        r"{math}`\eps = 8` at {math}`\delta \le 10^{-4}` and {math}`\delta = 0.01`"
    )
    assert wip.cell_tex(4.0, [0.1, 1e-6]) == (
        r"{math}`\eps = 4` at {math}`\delta = 10^{-6}` and {math}`\delta = 0.1`"
    )
