"""The solver wrapper (dpdro.solvers): the incremental HiGHS model and the cvxpy cross-check."""

import math

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

import dpdro
from dpdro.bounds import BoundingLP
from dpdro.grid import grid_lower_bound
from dpdro.solvers import INF, HighsModel, Interrupt, LPSolution, solve_with_cvxpy


def small_model():
    """min x0 + 2 x1 + 3 x2  s.t.  x0 + x1 + x2 = 1,  x0 ≤ 0.25,  x ≥ 0: optimum (0.25, 0.75, 0),
    value 1.75."""
    m = HighsModel([1.0, 2.0, 3.0])
    m.add_rows(sp.csr_matrix([[1.0, 1.0, 1.0]]), 1.0, 1.0)
    m.add_rows(sp.csr_matrix([[1.0, 0.0, 0.0]]), -INF, 0.25)
    return m


def test_add_cols_and_rows_return_their_indices():
    m = HighsModel([1.0, 2.0])
    assert m.n_cols == 2 and m.n_rows == 0
    assert m.add_cols([3.0, 4.0]).tolist() == [2, 3]
    assert m.add_cols(np.zeros(0)).size == 0 and m.n_cols == 4
    assert m.add_rows(sp.csr_matrix(np.ones((2, 4))), 0.0, 1.0).tolist() == [0, 1]
    assert m.add_rows(sp.csr_matrix((0, 4)), 0.0, 1.0).size == 0 and m.n_rows == 2
    # a matrix with fewer columns than the model covers the first ones
    assert m.add_rows(sp.csr_matrix([[1.0]]), -INF, 0.5).tolist() == [2]
    assert m.h.getNumRow() == 3 and m.h.getNumCol() == 4


def test_solve_returns_primal_duals_objective_and_work():
    sol = small_model().solve()
    assert isinstance(sol, LPSolution) and sol.status == "optimal"
    assert np.allclose(sol.x, [0.25, 0.75, 0.0])
    assert sol.objective == pytest.approx(1.75)
    assert sol.row_duals.shape == (2,)
    # HiGHS's convention: duals are ∂ objective / ∂ right-hand side
    assert sol.row_duals[0] == pytest.approx(2.0) and sol.row_duals[1] == pytest.approx(-1.0)
    # (presolve may need no simplex step)
    assert isinstance(sol.iterations, int) and sol.iterations >= 0


def test_warm_resolve_after_adding_rows_matches_a_cold_solve():
    m = small_model()
    first = m.solve()
    m.add_rows(sp.csr_matrix([[0.0, 1.0, 0.0]]), -INF, 0.5)  # cuts off the optimum
    warm = m.solve()
    cold = HighsModel([1.0, 2.0, 3.0])
    cold.add_rows(
        sp.csr_matrix([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        [1.0, -INF, -INF],
        [1.0, 0.25, 0.5],
    )
    ref = cold.solve()
    assert warm.objective == pytest.approx(ref.objective) == pytest.approx(0.25 + 1.0 + 0.75)
    assert np.allclose(warm.x, ref.x)
    # the simplex iteration count is cumulative over re-solves (the machine-independent work
    # measure)
    assert warm.iterations >= first.iterations


def test_interior_point_without_crossover_then_a_cold_simplex_resolve():
    """An interior-point solve without crossover gives the optimum (no basis is kept); a row
    added after it is then solved by the simplex method from scratch, with the same answer as a
    cold model; an imprecise interior point (HiGHS's status not optimal) is solved again with
    crossover."""
    m = small_model()
    sol = m.solve(interior=True, crossover=False)
    assert sol.status == "optimal" and sol.objective == pytest.approx(1.75, abs=1e-7)
    assert np.allclose(sol.x, [0.25, 0.75, 0.0], atol=1e-7)
    assert sol.row_duals[0] == pytest.approx(2.0, abs=1e-6)
    assert m.h.getOptionValue("solver")[1] == "choose"
    assert m.h.getOptionValue("run_crossover")[1] == "on"
    m.add_rows(sp.csr_matrix([[0.0, 1.0, 0.0]]), -INF, 0.5)
    again = m.solve()
    assert again.status == "optimal" and again.objective == pytest.approx(2.0)

    class Imprecise:  # HiGHS as if its interior point without crossover were imprecise
        def __init__(self, h):
            self.h, self.crossovers = h, []

        def __getattr__(self, name):
            return getattr(self.h, name)

        def run(self):
            self.crossovers.append(self.h.getOptionValue("run_crossover")[1])
            return self.h.run()

        def getModelStatus(self):
            if self.crossovers[-1] == "off":
                return highspy.HighsModelStatus.kUnknown
            return self.h.getModelStatus()

    m = small_model()
    m.h = Imprecise(m.h)
    sol = m.solve(interior=True, crossover=False)
    assert m.h.crossovers == ["off", "on"] and sol.status == "optimal"
    assert sol.objective == pytest.approx(1.75)


def test_set_row_upper_changes_the_right_hand_side():
    m = small_model()
    m.set_row_upper(np.array([1]), 0.5)
    sol = m.solve()
    assert np.allclose(sol.x, [0.5, 0.5, 0.0]) and sol.objective == pytest.approx(1.5)


def test_infeasible_status():
    m = HighsModel([1.0, 1.0])
    m.add_rows(sp.csr_matrix([[1.0, 1.0]]), 1.0, 1.0)
    m.add_rows(sp.csr_matrix([[1.0, 1.0]]), -INF, 0.5)
    sol = m.solve()
    assert sol.status == "infeasible" and sol.x is None and sol.objective == np.inf


def test_time_limit_status_returns_no_solution():
    """A privacy LP with every constraint cannot be solved within HiGHS's minimum time limit of 1
    ms."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.2)
    lp = BoundingLP(prob, dpdro.Partition.uniform(96, 1 / 32), "upper")
    lp.add_all_shift_cuts()
    sol = lp.model.solve(time_limit=1e-9)
    assert sol.status == "time_limit" and sol.x is None and np.isnan(sol.objective)
    done = lp.model.solve()  # without a limit the same model solves to optimality
    assert done.status == "optimal"


class _FailingThenTimedOut:
    """A HiGHS stand-in whose first run ends in a numerical failure and whose retry (the primal
    simplex method) runs out of time; everything else goes to the real HiGHS object."""

    def __init__(self, h):
        self._h, self._runs = h, 0

    def run(self):
        self._runs += 1
        return self._h.run()

    def getModelStatus(self):
        import highspy

        return (highspy.HighsModelStatus.kSolveError if self._runs == 1
                else highspy.HighsModelStatus.kTimeLimit)

    def __getattr__(self, name):
        return getattr(self._h, name)


def test_a_retry_that_runs_out_of_time_returns_the_time_limit_status():
    """After a numerical failure the solve is retried with the primal simplex method; when that
    retry runs out of time the status is "time_limit" (as for the first run), not a SolverError,
    so that the callers keep their last relaxation."""
    m = small_model()
    m.h = _FailingThenTimedOut(m.h)
    sol = m.solve(time_limit=1.0)
    assert m.h._runs == 2
    assert sol.status == "time_limit" and sol.x is None and np.isnan(sol.objective)


def test_an_interrupt_stops_only_the_solves_called_through_it():
    """Fired, it ends the solves of calls made through it as if out of time, and only those; the
    callbacks it installs are gone after each solve."""
    interrupt = Interrupt()
    assert interrupt.call(small_model().solve).status == "optimal"  # not fired yet
    interrupt.fire()
    model = small_model()
    assert model.solve().status == "optimal"  # not called through it
    assert interrupt.call(model.solve).status == "time_limit"
    assert not model.h.cbSimplexInterrupt.callbacks and not model.h.cbIpmInterrupt.callbacks
    assert model.solve().status == "optimal"


def test_matrix_returns_the_lp_as_added():
    cost, mat, lo, hi = small_model().matrix()
    assert cost.tolist() == [1.0, 2.0, 3.0]
    assert mat.toarray().tolist() == [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    assert lo[0] == hi[0] == 1.0 and lo[1] <= -INF and hi[1] == 0.25


def test_cvxpy_agrees_with_highs_on_values_and_duals():
    pytest.importorskip("cvxpy")
    m = small_model()
    ref = m.solve()
    cost, mat, lo, hi = m.matrix()
    alt = solve_with_cvxpy(
        cost, mat, np.where(lo <= -INF, -np.inf, lo), np.where(hi >= INF, np.inf, hi)
    )
    assert alt.status == "optimal"
    assert alt.objective == pytest.approx(ref.objective, abs=1e-7)
    assert np.allclose(alt.x, ref.x, atol=1e-6)
    assert np.allclose(alt.row_duals, ref.row_duals, atol=1e-6)
    via = m.solve_with("ECOS")  # the same through the model
    assert via.objective == pytest.approx(ref.objective, abs=1e-7)


def test_cvxpy_reports_infeasibility_and_lower_bounded_rows():
    pytest.importorskip("cvxpy")
    bad = solve_with_cvxpy(
        [1.0, 1.0], sp.csr_matrix([[1.0, 1.0], [1.0, 1.0]]), [1.0, -np.inf], [1.0, 0.5]
    )
    assert bad.status == "infeasible"
    # a ≥ row: min x0 + x1 s.t. x0 + 2 x1 ≥ 2 → x = (0, 1), value 1, dual 0.5
    sol = solve_with_cvxpy([1.0, 1.0], sp.csr_matrix([[1.0, 2.0]]), [2.0], [np.inf])
    assert sol.objective == pytest.approx(1.0, abs=1e-7) and sol.row_duals[0] == pytest.approx(
        0.5, abs=1e-6
    )


def test_privacy_lp_cross_check_with_ecos():
    """The assembled bounding LP (with its cuts) solves to the same value with ECOS as with
    HiGHS."""
    pytest.importorskip("cvxpy")
    prob = dpdro.Problem(epsilon=1.0, delta=0.3)
    lp = BoundingLP(prob, dpdro.Partition.uniform(3, 0.5), "upper")
    lp.add_all_shift_cuts()
    ref = lp.solve()
    alt = lp.solve_with("ECOS")
    assert alt.objective == pytest.approx(ref.objective, abs=1e-6)


def test_costs_beyond_highs_infinity_are_solved_as_finite():
    """Costs from 1e20 on are HiGHS's infinity by default (it stopped with status "Not Set", a
    SolverError): a loss that large is finite and is solved as such, values and duals unscaled."""
    m = HighsModel([1e25, 3e25, 2e30])
    m.add_rows(sp.csr_matrix([[1.0, 1.0, 1.0]]), 1.0, 1.0)
    m.add_rows(sp.csr_matrix([[1.0, 0.0, 0.0]]), -INF, 0.25)
    sol = m.solve()
    assert sol.status == "optimal" and np.allclose(sol.x, [0.25, 0.75, 0.0])
    assert sol.objective == pytest.approx(2.5e25, rel=1e-12)
    assert sol.row_duals == pytest.approx([3e25, -2e25], rel=1e-9)


def test_solve_keeps_the_presolve_option_of_its_owner():
    """Regression: the grid LPs switch presolve off (faster, exact with tiny right-hand sides); the
    one-row rule of HighsModel.solve had set it back to HiGHS's default on every other solve, and
    pinball on [0, ∞) at ε = 3.43, δ = 3.9e-12 ended its 20 s at 4.27% instead of 0.35%."""
    m = HighsModel([1.0, 2.0, 3.0])
    m.set_option("presolve", "off")
    m.add_rows(sp.csr_matrix([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]), [1.0, -INF], [1.0, 0.5])
    assert m.solve().status == "optimal"
    assert m.h.getOptionValue("presolve")[1] == "off"
    wide = HighsModel(np.ones(5000))  # one row, many columns: without presolve, then the default
    wide.add_rows(sp.csr_matrix(np.ones((1, 5000))), 1.0, 1.0)
    assert wide.solve().status == "optimal"
    assert wide.h.getOptionValue("presolve")[1] == "off"
    wide.add_rows(sp.csr_matrix(np.eye(1, 5000)), -INF, 0.5)
    assert wide.solve().status == "optimal"
    assert wide.h.getOptionValue("presolve")[1] == "choose"


def test_tiny_costs_are_solved_at_a_usable_scale():
    """Costs all below HiGHS's tolerances (a callable loss at Δf = 3e-8, not rescaled to Δf = 1)
    left the lower bound at 0 (gap ∞); the objective is scaled up, values and duals unscaled, and
    the bound is that of Δf = 1 times Δf."""
    m = HighsModel([1e-12, 3e-12, 2e-12])
    m.add_rows(sp.csr_matrix([[1.0, 1.0, 1.0]]), 1.0, 1.0)
    m.add_rows(sp.csr_matrix([[1.0, 0.0, 0.0]]), -INF, 0.25)
    sol = m.solve()
    assert sol.status == "optimal" and np.allclose(sol.x, [0.25, 0.0, 0.75])
    assert sol.objective == pytest.approx(1.75e-12, rel=1e-12)
    assert sol.row_duals == pytest.approx([2e-12, -1e-12], rel=1e-9)
    bounds = []
    for sens in (3e-8, 1.0):
        prob = dpdro.Problem(epsilon=6.0, delta=1e-3, sensitivity=sens,
                             loss=lambda x: np.abs(x), support=(0.0, math.inf))
        bounds.append(grid_lower_bound(prob, 4, 32).value / sens)
    assert bounds[0] == pytest.approx(bounds[1], rel=1e-6)


def test_a_steep_power_loss_releases_a_certified_noise():
    """|x|^60 on cells out to ±3 costs up to 4e28 (issue 28: PowerLoss(k ≥ 50) raised SolverError):
    the upper bound releases a noise certified at δ, the lower bound stays below it."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.1, loss=dpdro.PowerLoss(60))
    part = dpdro.Partition.uniform(L=60, beta=0.05)
    ub = dpdro.upper_bound(prob, part)
    assert dpdro.certify_delta(ub.noise, epsilon=1.0, sensitivity=1.0) <= 0.1
    loss = ub.noise.expected_loss(prob.loss)
    assert loss <= ub.value <= loss * (1 + 1e-9)
    assert dpdro.lower_bound(prob, part).value <= ub.value


def test_time_limit_is_per_solve_not_cumulative():
    """HiGHS accumulates its run time over re-solves; a time limit passed to one solve must still
    give that solve its own budget (regression: later solves of a long cutting plane used to stop
    at once)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    m = HighsModel(rng.random(300))
    m.add_rows(sp.random(500, 300, density=0.3, random_state=1, format="csr"), 1.0, np.inf)
    assert m.solve().status == "optimal"
    m.add_rows(sp.random(500, 300, density=0.3, random_state=2, format="csr"), 2.0, np.inf)
    used = m.h.getRunTime()
    assert used > 0
    assert m.solve(time_limit=0.5).status == "optimal"
    limit = m.h.getOptionValue("time_limit")
    limit = limit[-1] if isinstance(limit, tuple) else limit
    assert limit >= used + 0.5  # the budget of this solve on top of the run time so far


SILENT_CALL = """
import dpdro
res = dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=0.2), rel_gap=0.05)
lp = dpdro.solvers.HighsModel([1.0])
lp.solve()
"""


def test_a_fresh_process_writes_nothing_to_stdout_or_stderr():
    """HiGHS 1.16 prints a licence banner on stdout when a process creates its first solver object;
    dpdro's solvers must print nothing at all (a pipe, so C-level buffering is exercised too)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", SILENT_CALL], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""


def test_silencing_keeps_the_callers_own_output(capfd):
    print("before", flush=True)
    dpdro.solvers.new_highs()
    print("after", flush=True)
    assert capfd.readouterr().out == "before\nafter\n"
