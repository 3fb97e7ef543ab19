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
