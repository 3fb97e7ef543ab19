"""LP back-ends: an incremental HiGHS model (rows and columns added between warm re-solves) and a
one-shot cvxpy statement of the same LP for cross-checks (ECOS, Clarabel, …).

Both solve   minimise cᵀx  subject to  row_lower ≤ A x ≤ row_upper,  x ≥ 0,
and report the row duals in HiGHS's sign convention (∂ objective / ∂ right-hand side).
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import math
import os
import sys
import threading
from dataclasses import dataclass

import highspy
import numpy as np
import scipy.sparse as sp

__all__ = [
    "INF", "Interrupt", "LPSolution", "HighsModel", "SolverError", "new_highs", "solve_with_cvxpy",
]

INF = highspy.kHighsInf
# the statuses an interior point without crossover is taken with (others: again with crossover)
_ANSWERED = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible,
             highspy.HighsModelStatus.kTimeLimit)


class SolverError(RuntimeError):
    """The LP solver stopped without an answer (neither optimal, infeasible nor out of time)."""


class Interrupt:
    """Stops, once :meth:`fire` is called, the HiGHS solves of the calls made through :meth:`call`
    (those running and those to come): each ends as if out of time (status "time_limit", with the
    duals where it stopped), so a bound abandoned this way is handled like one that ran out of its
    time limit (under a time limit :func:`dpdro.optimal_noise` stops the upper-bound LP of a round
    whose lower bound has closed the gap: ℓ2, ε = 5, δ = 0.75 waited 24 s of a 60 s limit for a LP
    it no longer needed). Without :meth:`call` nothing is interrupted and no callback is
    installed."""

    def __init__(self):
        self.fired = False

    def fire(self) -> None:
        self.fired = True

    def call(self, fn, /, *args, **kwargs):
        """``fn(*args, **kwargs)``, its solves stopped once this interrupt fires."""
        context = contextvars.copy_context()
        context.run(_INTERRUPT.set, self)
        return context.run(fn, *args, **kwargs)

    def stop_if_fired(self, event) -> None:
        """HiGHS's interrupt callback (checked by the simplex and interior-point methods)."""
        if self.fired:
            event.interrupt()


#: the interrupt of the calls under :meth:`Interrupt.call` (none elsewhere)
_INTERRUPT: contextvars.ContextVar[Interrupt | None] = contextvars.ContextVar(
    "dpdro_interrupt", default=None
)
_STOPPED = (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kInterrupt)
# the retries, in turn, of a solve that ended neither optimal, infeasible nor stopped: the primal
# simplex method (dual simplex on badly scaled rows, e.g. one-sided noise at δ = 1e-10, where it
# ends with primal infeasibilities of 0.1), then the dual without HiGHS's scaling (|x|² on
# [2Δf, ∞), ε = 3.12, δ = 1.2e-12, k = 1 with dpdro._floor_weights' rows: "Unknown" with the
# scaling and with the primal method, optimal without the scaling)
_RETRIES = (("simplex_strategy", 4), ("simplex_scale_strategy", 0))


_banner_lock = threading.Lock()
# set once the first HiGHS object of this process exists (its banner went nowhere)
_banner_shown = False


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (where HiGHS's C++ log writes before they reach the
    fd)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def _fds_to_devnull():
    """Point file descriptors 1 and 2 at the null device for the duration of the block.

    A Python-level ``redirect_stdout`` is not enough: HiGHS writes from C++ straight to the
    process's standard output (ipykernel forwards that descriptor into notebook outputs).
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.flush()
    saved = [os.dup(fd) for fd in (1, 2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
        yield
    finally:
        _flush_c_stdio()
        for fd, copy in zip((1, 2), saved, strict=False):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)


def new_highs() -> highspy.Highs:
    """A silent ``highspy.Highs`` object.

    From HiGHS 1.16 on, the first solver object a process creates prints a licence banner on
    standard output before any option can be set; JSON written to stdout and notebook outputs must
    not carry it. The first construction therefore runs with descriptors 1 and 2 on the null
    device; every object then has ``output_flag`` off, so solves print nothing either.
    """
    global _banner_shown
    if _banner_shown:
        h = highspy.Highs()
    else:
        with _banner_lock:
            if _banner_shown:
                h = highspy.Highs()
            else:
                with _fds_to_devnull():
                    h = highspy.Highs()
                    h.silent()
                _banner_shown = True
    h.silent()
    return h


@dataclass
class LPSolution:
    status: str  # "optimal", "infeasible" or "time_limit" (anything else raises)
    x: np.ndarray | None
    row_duals: np.ndarray | None
    objective: float
    iterations: int = 0  # simplex iterations of this solve: a deterministic measure of work


#: from this many columns an LP of one row is solved without presolve (HighsModel.solve)
_BARE_COLUMNS = 4000


class HighsModel:
    """A HiGHS LP that grows by columns and rows and is re-solved from the previous basis.

    The default tolerances are tightened from HiGHS's 1e-7 to 1e-9 so that released noise needs only
    a tiny repair (see :func:`dpdro.upper_bound`).
    """

    def __init__(self, cost, *, tolerance: float = 1e-9, threads: int = 1):
        self.h = new_highs()
        self.h.setOptionValue("primal_feasibility_tolerance", tolerance)
        self.h.setOptionValue("dual_feasibility_tolerance", tolerance)
        self.h.setOptionValue("threads", threads)
        # HiGHS takes costs from 1e20 on for infinite (a model it will not solve: status "Not
        # Set"); dpdro's costs are finite losses, however large (|x|^60 over [−3, 3], or |x|^5 over
        # the window of ε = 1e-3, δ = 1e-12), and the objective scaling of solve brings them into
        # range
        self.h.setOptionValue("infinite_cost", 1e300)
        self.n_cols = 0
        self.n_rows = 0
        self._max_cost = 0.0  # the largest |cost| ever set (for the objective scaling in solve)
        self._presolve = "choose"  # as set by set_option
        self.add_cols(np.asarray(cost, dtype=float))

    def add_cols(self, cost, *, rows=None, values=None) -> np.ndarray:
        """Append non-negative columns with the given costs; returns their indices. With ``rows``
        and ``values`` (one each per column) column i gets the entry values[i] in row rows[i]."""
        cost = np.asarray(cost, dtype=float)
        n = cost.size
        idx = np.arange(self.n_cols, self.n_cols + n)
        if n:
            self._max_cost = max(self._max_cost, float(np.max(np.abs(cost))))
            if rows is None:
                start, index, vals = (
                    np.zeros(n, dtype=np.int32),
                    np.zeros(0, dtype=np.int32),
                    np.zeros(0),
                )
            else:
                start = np.arange(n, dtype=np.int32)
                index = np.asarray(rows, dtype=np.int32)
                vals = np.asarray(values, dtype=float)
            self.h.addCols(n, cost, np.zeros(n), np.full(n, INF), vals.size, start, index, vals)
            self.n_cols += n
        return idx

    def add_rows(self, matrix: sp.csr_matrix, lower, upper) -> np.ndarray:
        """Append rows ``lower ≤ matrix @ x ≤ upper`` (``matrix`` has ``n_cols`` columns or
        fewer)."""
        m = sp.csr_matrix(matrix)
        n = m.shape[0]
        idx = np.arange(self.n_rows, self.n_rows + n)
        if n:
            self.h.addRows(
                n,
                np.broadcast_to(np.asarray(lower, float), (n,)).copy(),
                np.broadcast_to(np.asarray(upper, float), (n,)).copy(),
                m.nnz,
                m.indptr[:-1].astype(np.int32),
                m.indices.astype(np.int32),
                m.data.astype(float),
            )
            self.n_rows += n
        return idx

    def set_row_upper(self, rows: np.ndarray, upper) -> None:
        rows = np.asarray(rows, dtype=np.int32)
        self.h.changeRowsBounds(
            rows.size,
            rows,
            np.full(rows.size, -INF),
            np.broadcast_to(np.asarray(upper, float), (rows.size,)).copy(),
        )

    def clear_basis(self) -> None:
        """Forget the basis: the next solve starts from scratch."""
        self.h.clearSolver()

    def set_option(self, name: str, value) -> None:
        """Set a HiGHS option (e.g. ``presolve``, which :meth:`solve` keeps but for one case)."""
        self.h.setOptionValue(name, value)
        if name == "presolve":
            self._presolve = value

    def set_col_bounds(self, cols, lower, upper) -> None:
        cols = np.asarray(cols, dtype=np.int32)
        n = cols.size
        self.h.changeColsBounds(
            n,
            cols,
            np.broadcast_to(np.asarray(lower, float), (n,)).copy(),
            np.broadcast_to(np.asarray(upper, float), (n,)).copy(),
        )

    def set_col_costs(self, cols, costs) -> None:
        cols = np.asarray(cols, dtype=np.int32)
        if cols.size:
            self._max_cost = max(self._max_cost, float(np.max(np.abs(costs))))
        self.h.changeColsCost(
            cols.size, cols, np.broadcast_to(np.asarray(costs, float), (cols.size,)).copy()
        )

    def solve(self, time_limit: float | None = None, *, interior: bool = False,
              crossover: bool = True) -> LPSolution:
        """Re-solve from the current basis; with ``time_limit`` (seconds) a solve that runs out of
        time returns status "time_limit", no primal solution and the row duals where it stopped
        (``None`` if HiGHS has none).

        ``interior=True`` solves from scratch by HiGHS's interior-point method followed by
        crossover: the solution is basic (a vertex, as from the simplex method) and its basis is
        kept, so later re-solves are warm dual simplex again. On a large LP solved at once (every
        cut of Algorithm 1 present) this is several times faster than the simplex method. With
        ``crossover=False`` the solution is the interior point's (no basis is left: the next
        simplex solve starts cold), for a lower bound whose duals need only be near-optimal
        (:func:`dpdro.lp.safe_lower_bound` makes any duals a valid bound); an interior point
        HiGHS does not call optimal (imprecise) is solved again with crossover."""
        self._set_options(time_limit)
        interrupt = _INTERRUPT.get()
        if interrupt is not None and interrupt.fired:
            return LPSolution("time_limit", None, None, np.nan, self.simplex_iterations)
        with self._interruptible(interrupt):
            if interior:
                self._run_interior(crossover)
                if not crossover and self.h.getModelStatus() not in _ANSWERED:
                    self._run_interior(True)
            else:
                self.h.run()
        status = self.h.getModelStatus()
        if status in _STOPPED:
            # the row duals of the basis where the solve stopped, where HiGHS has them: any duals
            # give a valid bound through dpdro.lp.safe_lower_bound (an interrupted dual simplex's
            # rise towards the optimum)
            sol = self.h.getSolution()
            duals = np.asarray(sol.row_dual) if sol.dual_valid else None
            return LPSolution("time_limit", None, duals, np.nan, self.simplex_iterations)
        if status == highspy.HighsModelStatus.kInfeasible:
            return LPSolution("infeasible", None, None, np.inf, self.simplex_iterations)
        for option, value in _RETRIES if status != highspy.HighsModelStatus.kOptimal else ():
            # a rare numerical failure: retry from scratch with one option changed (_RETRIES)
            _, saved = self.h.getOptionValue(option)
            self.h.clearSolver()
            self.h.setOptionValue(option, value)
            try:
                with self._interruptible(interrupt):
                    self.h.run()
            finally:
                self.h.setOptionValue(option, saved)
            status = self.h.getModelStatus()
            if status in _STOPPED:  # the retry ran out of time
                return LPSolution("time_limit", None, None, np.nan, self.simplex_iterations)
            if status == highspy.HighsModelStatus.kInfeasible:
                return LPSolution("infeasible", None, None, np.inf)
            if status == highspy.HighsModelStatus.kOptimal:
                break
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolverError(f"HiGHS stopped with status {self.h.modelStatusToString(status)}")
        sol = self.h.getSolution()
        return LPSolution(
            "optimal",
            np.asarray(sol.col_value),
            np.asarray(sol.row_dual),
            float(self.h.getInfo().objective_function_value),
            self.simplex_iterations,
        )

    def _set_options(self, time_limit: float | None) -> None:
        """The options of a solve: its time limit, the objective's scale, presolve."""
        # HiGHS compares its time_limit with the run time accumulated over every run() of this
        # object (getRunTime), not with the time of this solve: offset the limit by the time already
        # used
        limit = INF if time_limit is None else self.h.getRunTime() + max(float(time_limit), 1e-3)
        self.h.setOptionValue("time_limit", limit)
        # HiGHS refuses costs beyond about 1e10 at tight tolerances (e.g. ℓ2 losses over a window of
        # 1e5·Δf), and costs all below its tolerances leave duals no bound can use (a callable |x|
        # at Δf = 3e-8, not solved at Δf = 1: lower bound 0): scale the objective by a power of two
        # (exact and transparent: values and duals come back unscaled)
        exponent = math.ceil(math.log2(self._max_cost / 1e3)) if self._max_cost > 1e6 else 0
        if 0.0 < self._max_cost < 1e-3:
            exponent = math.floor(math.log2(self._max_cost))
        self.h.setOptionValue("user_objective_scale", -exponent)
        # an LP of one row and many columns (the simplex row of Algorithm 1's first relaxation on a
        # fine partition) without presolve: HiGHS's presolve takes time quadratic in the columns
        # there (ℓ1, pairs of parallel columns of equal cost: 0.44 s at 5,001 cells, 7.8 s at
        # 20,001, past its time limit); the simplex method solves it at once
        bare = self.n_rows <= 1 and self.n_cols >= _BARE_COLUMNS
        self.h.setOptionValue("presolve", "off" if bare else self._presolve)

    @contextlib.contextmanager
    def _interruptible(self, interrupt: Interrupt | None):
        """HiGHS's interrupt callbacks answer to ``interrupt`` for the block (none without one)."""
        if interrupt is None:
            yield
            return
        hooks = (self.h.cbSimplexInterrupt, self.h.cbIpmInterrupt)
        for hook in hooks:
            hook.subscribe(interrupt.stop_if_fired)
        try:
            yield
        finally:
            for hook in hooks:
                hook.unsubscribe(interrupt.stop_if_fired)

    def _run_interior(self, crossover: bool) -> None:
        self.h.setOptionValue("solver", "ipm")
        self.h.setOptionValue("run_crossover", "on" if crossover else "off")
        try:
            self.h.run()
        finally:
            self.h.setOptionValue("solver", "choose")
            self.h.setOptionValue("run_crossover", "on")

    def matrix(self) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray, np.ndarray]:
        """The current LP as (cost, A, row_lower, row_upper), for other solvers."""
        lp = self.h.getLp()
        a = lp.a_matrix_
        parts = (np.asarray(a.value_), np.asarray(a.index_), np.asarray(a.start_))
        # (HiGHS keeps added rows row-wise until a solve)
        if a.format_ == highspy.MatrixFormat.kRowwise:
            mat = sp.csr_matrix(parts, shape=(lp.num_row_, lp.num_col_))
        else:
            mat = sp.csc_matrix(parts, shape=(lp.num_row_, lp.num_col_)).tocsr()
        return np.asarray(lp.col_cost_), mat, np.asarray(lp.row_lower_), np.asarray(lp.row_upper_)

    def solve_with(self, solver: str = "ECOS", **options) -> LPSolution:
        """Solve the current LP through cvxpy (e.g. with ECOS) instead of HiGHS: a cross-check."""
        cost, mat, lo, hi = self.matrix()
        lo = np.where(lo <= -INF, -np.inf, lo)
        hi = np.where(hi >= INF, np.inf, hi)
        return solve_with_cvxpy(cost, mat, lo, hi, solver=solver, **options)

    @property
    def simplex_iterations(self) -> int:
        return int(self.h.getInfo().simplex_iteration_count)


def solve_with_cvxpy(
    cost, matrix, lower, upper, *, solver: str = "ECOS", **solver_options
) -> LPSolution:
    """Solve the same LP with cvxpy (default ECOS). Rows with lower == upper become equalities."""
    import cvxpy as cp

    cost = np.asarray(cost, dtype=float)
    m = sp.csr_matrix(matrix)
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    x = cp.Variable(cost.size, nonneg=True)
    eq = np.isfinite(lower) & (lower == upper)
    ub = ~eq & np.isfinite(upper)
    lb = ~eq & np.isfinite(lower)
    cons = []
    if eq.any():
        cons.append(m[eq] @ x == upper[eq])
    if ub.any():
        cons.append(m[ub] @ x <= upper[ub])
    if lb.any():
        cons.append(m[lb] @ x >= lower[lb])
    prob = cp.Problem(cp.Minimize(cost @ x), cons)
    prob.solve(solver=solver, **solver_options)
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        return LPSolution("infeasible", None, None, np.inf)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise SolverError(f"cvxpy/{solver} stopped with status {prob.status}")
    duals = np.zeros(m.shape[0])
    it = iter(cons)
    # cvxpy's dual of  a x <= b  is >= 0 and of  a x == b  is the multiplier of (a x - b); both map
    # to HiGHS's convention (objective sensitivity to the right-hand side) by a sign change
    if eq.any():
        duals[eq] = -np.asarray(next(it).dual_value)
    if ub.any():
        duals[ub] = -np.asarray(next(it).dual_value)
    if lb.any():
        duals[lb] = np.asarray(next(it).dual_value)
    return LPSolution("optimal", np.asarray(x.value), duals, float(prob.value))
