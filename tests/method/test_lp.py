"""The certified lower bound every reported lower bound rests on: dpdro.lp.safe_lower_bound.

Small random LPs are solved exactly in rational arithmetic (dpdro.testing.exact_lp_minimum, vertex
enumeration), and the bound must never exceed the exact optimum, whatever duals it is given: the
solver's, perturbed ones, ones of the wrong sign, random ones, NaN or infinite ones, too few of
them. With the solver's duals it must also be tight.
"""

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from dpdro.lp import safe_lower_bound
from dpdro.solvers import INF, HighsModel
from dpdro.testing import exact_lp_minimum


def _random_lp(rng, n, m, *, simplex=False):
    """A feasible LP in n ≤ 4 columns and m rows: random coefficients (some zero), row bounds of
    every kind (≤, ≥, =, ranged) around A·x0 for a random feasible x0, finite column bounds (some
    fixed at 0). With ``simplex`` row 0 is Σ_j x_j = 1 (a normalisation row) and the columns lie in
    [0, 1]."""
    u = rng.choice([0.0, 0.5, 1.0, 2.0], size=n, p=[0.1, 0.2, 0.4, 0.3])
    if simplex:
        u = np.where(u > 0, 1.0, 0.0)
        u[0] = 1.0
    x0 = rng.uniform(0.0, 1.0, n) * u
    if simplex:
        x0 /= x0.sum()
    A = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.8)
    c = rng.normal(size=n)
    ax = A @ x0
    lo, hi = np.full(m, -INF), np.full(m, INF)
    for i in range(m):
        kind = rng.integers(4)
        slack = rng.uniform(0.0, 0.5, 2)
        if kind == 0:
            hi[i] = ax[i] + slack[0]
        elif kind == 1:
            lo[i] = ax[i] - slack[0]
        elif kind == 2:
            lo[i] = hi[i] = ax[i]
        else:
            lo[i], hi[i] = ax[i] - slack[0], ax[i] + slack[1]
    if simplex:
        A[0], lo[0], hi[0] = 1.0, 1.0, 1.0
    return c, A, lo, hi, u


def _solver_duals(c, A, lo, hi, u):
    model = HighsModel(c)
    model.set_col_bounds(np.arange(c.size), 0.0, u)
    model.add_rows(sp.csr_matrix(A), lo, hi)
    sol = model.solve()
    assert sol.status == "optimal"
    return sol.row_duals, sol.objective


def _bound(c, A, lo, hi, u, y, simplex=False):
    return safe_lower_bound(c, sp.csr_matrix(A), lo, hi, u, y, simplex_rows=[0] if simplex else ())


@pytest.mark.parametrize("simplex", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_never_above_the_exact_optimum(seed, simplex):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    c, A, lo, hi, u = _random_lp(rng, n, m, simplex=simplex)
    opt = exact_lp_minimum(c, A, lo, hi, u)
    assert opt is not None  # x0 is feasible
    y, obj = _solver_duals(c, A, lo, hi, u)
    assert abs(obj - float(opt)) <= 1e-7 * (1.0 + abs(float(opt)))
    trials = {
        "solver": y,
        "perturbed": y * (1.0 + 1e-3 * rng.normal(size=y.size)) + 1e-6 * rng.normal(size=y.size),
        "wrong signs": -y,
        "random": rng.normal(scale=3.0, size=y.size),
        "zero": np.zeros(y.size),
        "nan and inf": np.where(rng.random(y.size) < 0.5, np.nan, np.inf)
        * np.sign(rng.normal(size=y.size)),
        "too few (rows added after the solve)": y[:-1],
        "huge": y * 1e12,
    }
    for name, duals in trials.items():
        bound = _bound(c, A, lo, hi, u, duals, simplex)
        assert bound == -np.inf or Fraction(bound) <= opt, (name, bound, float(opt))
    # with the solver's duals the bound is tight up to the solver's tolerance
    assert _bound(c, A, lo, hi, u, y, simplex) >= float(opt) - 1e-7 * (1.0 + abs(float(opt)))


def test_normalisation_row_repairs_dual_infeasible_reduced_costs():
    """min x1 + 2 x2 s.t. x1 + x2 = 1 (a simplex row), x ≤ 1: optimum 1. With θ = y_0 too large
    every reduced cost is negative; the simplex step lowers θ to the largest feasible value."""
    c, A = np.array([1.0, 2.0]), np.array([[1.0, 1.0]])
    lo = hi = np.array([1.0])
    u = np.ones(2)
    assert exact_lp_minimum(c, A, lo, hi, u) == 1
    for theta in (5.0, 1.0, 0.3, -2.0):
        with_rows = _bound(c, A, lo, hi, u, np.array([theta]), simplex=True)
        without = _bound(c, A, lo, hi, u, np.array([theta]))
        assert with_rows <= 1.0 and without <= 1.0
        assert with_rows >= without - 1e-12
    assert _bound(c, A, lo, hi, u, np.array([5.0]), simplex=True) == pytest.approx(1.0, abs=1e-12)


def test_unbounded_column_with_negative_reduced_cost_gives_minus_infinity():
    c, A = np.array([-1.0, 1.0]), np.array([[1.0, 1.0]])
    bound = safe_lower_bound(
        c,
        sp.csr_matrix(A),
        np.array([-INF]),
        np.array([1.0]),
        np.array([np.inf, 1.0]),
        np.array([0.0]),
    )
    assert bound == -np.inf
    # a dual that prices the column (reduced cost −1 + 1.5 > 0) gives a finite bound again
    bound = safe_lower_bound(
        c,
        sp.csr_matrix(A),
        np.array([-INF]),
        np.array([1.0]),
        np.array([np.inf, 1.0]),
        np.array([-1.5]),
    )
    assert np.isfinite(bound) and Fraction(bound) <= exact_lp_minimum(
        c, A, [-INF], [1.0], [10.0, 1.0]
    )


def test_rounding_makes_an_exact_dual_bound_slightly_conservative():
    """At the exact optimal dual the Lagrangian equals the optimum; the certified bound is below it
    by the floating-point allowance only (relative 1e-13 or so), never above."""
    c = np.array([0.1, 0.7, 0.3])
    A = np.array([[1.0, 1.0, 1.0], [0.3, -0.2, 0.1]])
    lo, hi = np.array([1.0, -INF]), np.array([1.0, 0.05])
    u = np.ones(3)
    opt = exact_lp_minimum(c, A, lo, hi, u)
    y, _ = _solver_duals(c, A, lo, hi, u)
    bound = _bound(c, A, lo, hi, u, y, simplex=True)
    assert Fraction(bound) <= opt and float(opt) - bound < 1e-12


def test_exact_lp_minimum_reference():
    # min −x − y, x + y ≤ 1.5, 0 ≤ x, y ≤ 1: −3/2; infeasible: x ≥ 2 with x ≤ 1
    assert exact_lp_minimum([-1, -1], [[1, 1]], [-INF], [1.5], [1, 1]) == Fraction(-3, 2)
    assert exact_lp_minimum([1.0], [[1.0]], [2.0], [INF], [1.0]) is None
    assert exact_lp_minimum([0.1], [[1.0]], [0.5], [0.5], [1.0]) == Fraction(0.1) * Fraction(0.5)


def test_delta_rows_at_once_are_the_rows_one_by_one():
    """PrivacyLP.add_delta_rows (one model call) adds the rows add_delta_row adds one at a time:
    the same matrix, bounds and privacy rows, the atom column in every row (summed where a row
    has it already), an empty row included."""
    from dpdro.lp import PrivacyLP

    rng = np.random.default_rng(3)
    dense = rng.uniform(0, 1, size=(6, 5)) * (rng.uniform(size=(6, 5)) < 0.5)
    dense[2] = 0.0  # a row with no entry: the atom only
    dense[4, 4] = 0.25  # the atom column itself
    models = []
    for batch in (True, False):
        lp = PrivacyLP(np.ones(5), delta=0.1, budget_extra=([4], [1.0]))
        lp.model.add_cols(np.zeros(2))  # columns beyond the first n_p
        idx = (lp.add_delta_rows(sp.csr_matrix(dense)) if batch
               else [lp.add_delta_row(sp.csr_matrix(row[None, :])) for row in dense])
        m = lp.model.h.getLp()
        a = m.a_matrix_
        models.append((list(idx), list(lp._delta_rows), np.array(a.start_), np.array(a.index_),
                       np.array(a.value_), np.array(m.row_lower_), np.array(m.row_upper_)))
    for x, y in zip(*models, strict=True):
        assert np.array_equal(np.asarray(x), np.asarray(y))
    assert models[0][0] == list(range(6))
    _, mat, _, hi = lp.model.matrix()
    expected = dense.copy()
    expected[:, 4] += 1.0  # the atom in every row, 1.25 where the row had 0.25
    assert np.array_equal(mat.toarray()[:, :5], expected) and np.all(hi == 0.1)
