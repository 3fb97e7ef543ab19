"""The rows (G) of the grid LPs generated lazily (dpdro.grid_rows): the same optimum as the LP with
every row, a relaxation at every stage (bounds below the full LP's and below known private noises),
solutions private for every row, released noise certified."""

import math
from fractions import Fraction

import numpy as np
import pytest

import dpdro
from dpdro import grid_rows
from dpdro.grid import GridLP, grid_lower_bound, grid_upper_bound
from dpdro.mechanisms import Staircase, truncated_laplace_half_width

CASES = [
    (1.0, 0.2, "l1", 4),
    (3.0, 0.05, "l2", 8),
    (5.0, 0.005, "l2", 12),
    (2.0, 0.1, dpdro.Pinball(0.3), 6),
    (4.0, 0.3, dpdro.asymmetric_loss(), 8),
]


def _window(prob, k, factor):
    a = truncated_laplace_half_width(
        epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity
    )
    return max(k, math.ceil(factor * a * k / prob.sensitivity))


def _staircase(eps):
    return Staircase(epsilon=eps).to_piecewise_uniform(periods=12)


def _optimal(lp):
    sol = lp.solve()
    assert sol.status == "optimal"
    return sol


@pytest.mark.parametrize("eps,delta,loss,k", CASES)
@pytest.mark.parametrize("kind", ["lower", "upper"])
def test_lazy_rows_reach_the_optimum_of_all_rows(eps, delta, loss, k, kind):
    """Without seeds, seeded by the staircase, or restarting after every round: the lazy LP's
    optimum is the full LP's, with far fewer segment rows, and its solution violates none of the
    rows left out."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss)
    L = _window(prob, k, 1.5 if kind == "upper" else 1.0)
    atom = kind == "upper"
    full = GridLP(prob, k, L, kind, atom=atom, lazy=False)
    assert full.rows.count == full.rows.added.size
    ref = _optimal(full)
    for guess in (None, _staircase(eps)):
        lazy = GridLP(prob, k, L, kind, atom=atom, lazy=True, guess=guess)
        sol = _optimal(lazy)
        assert sol.objective == pytest.approx(ref.objective, rel=1e-8, abs=1e-12)
        assert lazy.dual_bound(sol.row_duals) == pytest.approx(
            full.dual_bound(ref.row_duals), rel=1e-7
        )
        assert lazy.rows.count < lazy.rows.added.size
        assert not lazy.rows.violated(sol.x).any()
        # the oracle (Algorithm 2) on the lazy solution: private for every shift and event, up
        # to HiGHS's primal feasibility tolerance (1e-9 per row) for the lower bound's LP, whose
        # primal is never released (its bound is that of the duals, above): with the excess split
        # of dpdro._excess_split, at ε = 5, δ = 0.005, k = 12 without seeds, 8.5e-10
        slack = 1e-9 if kind == "lower" else 1e-12
        assert lazy.shortfalls(sol.x).max() <= 1e-8 * prob.delta + slack


def test_restarting_rounds_reach_the_same_optimum(monkeypatch):
    prob = dpdro.Problem(epsilon=4.0, delta=0.3, loss="l1")
    k, L = 16, _window(prob, 16, 1.0)
    ref = _optimal(GridLP(prob, k, L, "lower", lazy=False)).objective
    monkeypatch.setattr("dpdro.grid_rows.RESTART", 0.0)  # every round from scratch
    assert _optimal(GridLP(prob, k, L, "lower", lazy=True)).objective == pytest.approx(
        ref, rel=1e-9
    )


@pytest.mark.parametrize("eps,delta,loss,k", CASES[:3])
def test_every_relaxation_is_a_valid_lower_bound(eps, delta, loss, k):
    """The first relaxation (seeded rows only) and every later one: certified bounds that rise to
    the full LP's optimum, below the staircase's expected loss (a private noise: ≥ the optimum of
    P)."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss)
    L = _window(prob, k, 1.0)
    full_lp = GridLP(prob, k, L, "lower", lazy=False)
    full = full_lp.dual_bound(_optimal(full_lp).row_duals)
    lp = GridLP(prob, k, L, "lower", lazy=True, guess=_staircase(eps))
    stair = _staircase(eps).expected_loss(loss)
    bounds = []
    while True:
        sol = GridLP.__mro__[1].solve(lp)  # one solve of the relaxation as it stands
        bounds.append(lp.dual_bound(sol.row_duals))
        new = lp.rows.violated(sol.x)
        if not new.any():
            break
        lp.rows.add(new)
    assert all(b <= full * (1 + 1e-9) for b in bounds)
    assert all(b1 >= b0 - 1e-12 for b0, b1 in zip(bounds, bounds[1:], strict=False))
    assert bounds[-1] == pytest.approx(full, rel=1e-7)
    assert max(bounds) <= stair


def test_automatic_lazy_rows_by_size():
    prob = dpdro.Problem(epsilon=5.0, delta=0.005, loss="l2")
    small = GridLP(prob, 4, 8, "lower")
    assert small.rows.added.size < grid_rows.LAZY_FROM and not small.lazy
    large = GridLP(prob, 40, 80, "lower")
    assert large.rows.added.size >= grid_rows.LAZY_FROM and large.lazy


def test_lazy_lower_bound_lies_below_the_staircase_and_the_released_noise():
    """ℓ1 and ℓ2 at ε = 6 on a grid whose LPs are lazy by default: the certified lower bound is
    below the staircase's expected loss and below the released (certified) noise of U(k)."""
    for loss in ("l1", "l2"):
        prob = dpdro.Problem(epsilon=6.0, delta=1e-4, loss=loss)
        k = 48
        guess = _staircase(6.0)
        lb = grid_lower_bound(prob, k, _window(prob, k, 1.0), guess=guess)
        ub = grid_upper_bound(prob, k, _window(prob, k, 1.5), guess=guess)
        assert dpdro.certify_delta(ub.noise, 6.0, 1.0) <= prob.delta
        assert lb.value <= ub.noise.expected_loss(loss) <= ub.value
        assert lb.value <= guess.expected_loss(loss)


def test_time_limit_between_rounds_keeps_the_relaxation_duals():
    """A lazy solve out of time reports "time_limit" with duals whose certified bound is below
    the full LP's optimum."""
    prob = dpdro.Problem(epsilon=4.0, delta=0.3, loss="l1")
    k, L = 40, _window(prob, 40, 1.0)
    full = _optimal(GridLP(prob, k, L, "lower", lazy=False)).objective
    lp = GridLP(prob, k, L, "lower", lazy=True)
    sol = lp.solve(time_limit=1e-9)
    assert sol.status == "time_limit"
    if sol.row_duals is not None:
        assert lp.dual_bound(sol.row_duals) <= full


def test_guess_masses_sum_to_the_noise_on_the_columns():
    prob = dpdro.Problem(epsilon=2.0, delta=0.1, loss="l1")
    noise = _staircase(2.0)
    sym = GridLP(prob, 8, 40, "lower", lazy=True)
    gen = GridLP(prob, 8, 40, "lower", lazy=True, symmetric=False)
    p_sym, p_gen = grid_rows.guess_masses(sym, noise), grid_rows.guess_masses(gen, noise)
    edge = (sym.points[1] + 0.5) * sym.beta  # the points' cells cover [−edge, edge)
    inside = float(noise.cdf(edge) - noise.cdf(-edge))
    assert p_sym[0] + 2 * p_sym[1 : sym.n_cells].sum() == pytest.approx(inside, abs=1e-12)
    assert p_gen[: gen.n_cells].sum() == pytest.approx(inside, abs=1e-12)
    assert np.all(p_sym >= 0) and np.all(p_gen >= 0)


def test_seed_factor_widens_the_seeds_with_epsilon():
    """Seeds q_i ≥ f·e^ε q_{i−m}: f = 1 − SEED_SLACK at small ε, e^{−ε/2} in between, SEED_FLOOR at
    large ε, never larger as ε grows; a segment a guess holds at a tenth of e^ε (a step of the
    optimal noise split by a cell of the finer grid) is a seed at ε = 5.57, not at ε = 0.5."""
    f = grid_rows.seed_factor
    assert f(math.exp(0.1)) == 1.0 - grid_rows.SEED_SLACK
    assert f(math.exp(2.0)) == pytest.approx(math.exp(-1.0))
    assert f(math.exp(7.31)) == grid_rows.SEED_FLOOR
    values = [f(math.exp(e)) for e in np.linspace(0.01, 10.0, 200)]
    assert all(b <= a for a, b in zip(values, values[1:], strict=False))
    for eps, seeded in ((5.57, True), (0.5, False)):
        lp = GridLP(dpdro.Problem(epsilon=eps, delta=0.02, loss="l1"), 4, 4, "lower", lazy=True)
        p = np.zeros(lp.n_p)
        i, j = lp.rows.ci[0], lp.rows.cj[0]
        p[i], p[j] = 0.1 * lp.exp_rows, 1.0
        assert bool(lp.rows.seeds(p)[0]) == seeded



@pytest.mark.parametrize(
    "kwargs,k,L",
    [
        (dict(epsilon=1.0, delta=1e-3, loss="l1"), 8, 5),
        (dict(epsilon=4.0, delta=0.3, loss=dpdro.asymmetric_loss()), 6, 9),
        (dict(epsilon=2.0, delta=1e-4, loss="l1", support=(-math.inf, 1.0)), 8, 20),
        (dict(epsilon=2.0, delta=1e-4, loss="l1", support=(0.0, math.inf)), 8, 12),
        (dict(epsilon=0.05, delta=1e-6, loss="l1"), Fraction(1, 4), 30),
    ],
)
def test_tail_rows_are_the_tail_blocks_of_every_shift(kwargs, k, L):
    """The tail rows are, point by point, q((−∞, w_lo)) − e^ε q((−∞, w_lo − m)) and its mirror on
    the right with the mass beyond the variables in both sets (weight 1 − e^ε), built here block
    by block: those with a positive coefficient, shift by shift, the left block first."""
    prob = dpdro.Problem(**kwargs)
    lp = GridLP(prob, k, L, "lower")
    e, (w_lo, w_hi), (v_lo, v_hi) = lp.exp_rows, lp.window, lp.points
    pts = np.arange(-v_hi, v_hi + 1) if lp.symmetric else np.arange(v_lo, v_hi + 1)
    groups, rows = [], []
    for g, m in enumerate(lp.shifts):
        blocks = ((0, pts < w_lo, pts < w_lo - m), (1, pts > w_hi, pts > w_hi - m))
        for side, inside, shifted in blocks:
            row = np.zeros(lp.n_p)
            np.add.at(row, lp.col(pts), inside - e * shifted)
            cols = [c for c in lp.tail_cols if c is not None]
            if cols:
                tail = cols[0] if lp.symmetric else lp.tail_cols[side]
                if tail is not None:
                    row[tail] += (1.0 - e) * (0.5 if lp.symmetric else 1.0)
            if np.any(row > 0):
                groups.append(g), rows.append(row)
    got_groups, forms = lp.rows._tail_rows()
    assert list(got_groups) == groups
    assert np.array_equal(forms.toarray(), np.array(rows).reshape(len(rows), lp.n_p))


# ------------------------------------------------------------------ shift subsets
def test_lower_shifts_keep_the_multiples_of_n_and_the_largest():
    assert np.array_equal(grid_rows.lower_shifts(23, 3.68, 1e-5), np.arange(1, 24))
    kept = grid_rows.lower_shifts(72, 3.68, 1e-5)  # n = ⌊√24⌋ = 4 (the plateau: 9.9 steps)
    assert np.array_equal(kept, np.r_[np.arange(4, 69, 4), 69, 70, 71, 72])
    assert grid_rows.lower_shifts(1, 3.68, 1e-5).tolist() == [1]
    # n at most a quarter of the plateau's steps: 2 at ε = 6.5, k = 144 (10.7 steps), none at
    # ε = 8.72, k = 238 (6 steps)
    kept = grid_rows.lower_shifts(144, 6.5, 1e-5)
    assert np.array_equal(kept, np.r_[np.arange(2, 143, 2), 143, 144])
    assert np.array_equal(grid_rows.lower_shifts(238, 8.72, 1e-5), np.arange(1, 239))
    assert np.array_equal(grid_rows.lower_shifts(72, 3.68, 0.1), np.arange(1, 73))  # large δ


def _one_sided_l1():
    return dpdro.Problem(epsilon=3.68, delta=9.7e-6, support=(0.0, math.inf))


def test_only_floor_lps_keep_a_subset_of_the_shifts():
    """The floor LP (a support on one side of 0) keeps the subset from k = 24; the upper bound,
    whose noise must be private for every shift, and lower bounds elsewhere keep all."""
    one_sided = _one_sided_l1()
    floor = GridLP(one_sided, 36, 216, "lower")
    kept = grid_rows.lower_shifts(36, 3.68, 9.7e-6)
    assert floor.floor and np.array_equal(floor.shifts, np.r_[-kept[::-1], kept])
    assert GridLP(one_sided, 36, 216, "upper").n_groups == 72
    assert GridLP(dpdro.Problem(epsilon=3.68, delta=9.7e-6), 36, 40, "lower").n_groups == 36
    assert GridLP(one_sided, 16, 96, "lower").n_groups == 32


def test_the_shift_subset_loses_nothing_that_matters_on_a_floor_lp(monkeypatch):
    """A relaxation of the LP with every shift, and as tight to 7 digits at k = 36 (n = 2); the
    n − 1 largest shifts are what makes it so: the multiples of n alone give about the bound of
    the grid nβ, 0.35% lower."""
    problem = _one_sided_l1()
    upper = grid_upper_bound(problem, 18, 142)
    subset = grid_lower_bound(problem, 36, 216, guess=upper.noise)
    monkeypatch.setattr(grid_rows, "SUBSET_FROM", 10**9)
    every = grid_lower_bound(problem, 36, 216, guess=upper.noise)
    assert subset.value <= every.value * (1 + 1e-9)  # (a relaxation, up to the duals' tolerance)
    assert subset.value == pytest.approx(every.value, rel=1e-6)
    assert subset.value <= upper.value
    monkeypatch.setattr(grid_rows, "SUBSET_FROM", 24)
    kept = grid_rows.lower_shifts(36, 3.68, 9.7e-6)
    monkeypatch.setattr("dpdro.grid.lower_shifts", lambda *_: kept[kept % 2 == 0])
    coarse = grid_lower_bound(problem, 36, 216, guess=upper.noise)
    assert coarse.value < (1 - 2e-3) * subset.value
