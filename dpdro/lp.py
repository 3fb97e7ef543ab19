r"""The one cutting-plane LP layer shared by every bounding problem: P(π, β), D(π, β), P′(π, β),
D′(π, β) and the uniform-grid LPs of :mod:`dpdro.grid`.

Every privacy constraint of these LPs has the form (equation (9), Lemma C.15)

    Σ_{q ∈ A} s_q(p) + f_r(p) + a ≤ δ        for every event A,

where the *constraint group* r is a shift (or a pair of pieces and a shift), the s_q are linear
forms in the cell probabilities p, one per *segment* q of the group (the signed contribution
|q|·(p(j)/|Π_j| − e^ε p(j′)/|Π_j′|) of a piece of an event), f_r collects the segments that belong
to every worst event (those that no shifted cell covers, with non-negative coefficients) and a is
the atom at 0 when there is one. The worst event takes exactly the segments with s_q(p) > 0, so the
whole group is equivalent to the *whole-shift cut*

    t_q ≥ s_q(p),  t_q ≥ 0,   Σ_q t_q + f_r(p) + a ≤ δ,

and any subset of its segments still gives a valid relaxation (a *lazy* cut). :class:`PrivacyLP`
owns the HiGHS model (through :class:`dpdro.solvers.HighsModel`, the only code that touches
highspy), the budget rows, segment rows and t-columns, single-event cuts (Algorithm 1 as written),
the change of δ used by the repair step (:mod:`dpdro.release`), the choice of method (warm dual
simplex; the interior-point method with crossover for a first solve of many cuts at once,
:attr:`PrivacyLP.interior_first`), and the certified lower bound; a
subclass only says what the segments of a group are (:meth:`PrivacyLP.group_segments`) and
evaluates the oracle (:meth:`PrivacyLP.shortfalls`).

Certified lower bound
    :meth:`PrivacyLP.dual_bound` evaluates the Lagrangian at the solver's row duals made
    sign-feasible (Neumaier and Shcherbina 2004): for every x with row_lower ≤ A x ≤ row_upper and
    0 ≤ x ≤ u,

        cᵀx ≥ yᵀb + Σ_j min(0, r_j)·u_j,     r = c − Aᵀy,

    for any y whose entries have the sign of the bound they multiply. The normalisation rows
    Σ_{j ∈ B} p_j = 1 are used first to raise every reduced cost of their block to 0 (the "θ" of the
    paper's dual), which costs their right-hand side times the largest deficit once instead of the
    sum of the deficits. The bound is valid for any y whatsoever (a time-limited relaxation, a
    perturbed dual) and is rounded down by a rigorous bound on the floating-point error and on a
    relative error :data:`COEFF_REL` in every coefficient of c and A (the coefficients e^ε, 1/|Π_j|
    and cell costs are computed in floating point). An LP whose matrix as stored is already that of
    a relaxation (every inexact coefficient rounded in the safe direction, as :mod:`dpdro.grid`
    builds its lower-bound LPs: ``matrix_rel = 0``) needs no such allowance on A. There the duals of
    the privacy rows are of order 1/(εδ), and the allowance alone cost 0.56% of the bound at
    δ = 1.6e-12 (ε = 0.31, one-sided ℓ1 noise, k = 1: 81.673 against 82.131). Valid upper bounds u:
    1 for probabilities, the current δ for t-columns (they sit in a budget row with right-hand side
    δ and non-negative companions), and what a subclass declares for its own auxiliary columns.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ._rounding import UNIT_ROUNDOFF as _U
from .solvers import INF, HighsModel, LPSolution

__all__ = ["COEFF_REL", "PrivacyLP", "safe_lower_bound"]

# relative error allowed in every coefficient of c and A by the certified lower bound
COEFF_REL = 1e-13


def _gamma(n) -> np.ndarray:
    """γ_n = n·u/(1 − n·u): the relative error bound of a floating-point sum of n terms."""
    n = np.asarray(n, dtype=float)
    return n * _U / (1.0 - n * _U)


def _slack(abs_cost, abs_ay, nnz, matrix_rel: float) -> np.ndarray:
    """The error bound on computed reduced costs c − Aᵀy: floating-point error of the sums (γ of
    their length) on |c| + |A|ᵀ|y|, :data:`COEFF_REL` on |c| and ``matrix_rel`` on |A|ᵀ|y|."""
    g = _gamma(nnz + 2)
    return (g + COEFF_REL) * abs_cost + (g + matrix_rel) * abs_ay


def safe_lower_bound(cost, matrix, row_lower, row_upper, col_upper, row_duals, *,
                     simplex_rows=(), matrix_rel: float = COEFF_REL) -> float:
    """A rigorous lower bound on min cᵀx s.t. row_lower ≤ A x ≤ row_upper, 0 ≤ x ≤ col_upper (module
    docstring), from any row duals in HiGHS's convention (∂ objective / ∂ right-hand side).

    Parameters
    ----------
    cost, matrix, row_lower, row_upper : the LP (±inf for absent row bounds).
    col_upper : valid upper bounds u on the columns over the feasible set (inf where none is known).
    row_duals : any row multipliers (those of rows beyond their length are 0; NaN and ±inf are read
        as 0; entries of the wrong sign are set to 0).
    simplex_rows : indices of equality rows Σ_{j ∈ B} a_j x_j = b with positive coefficients a_j
        (normalisations): their multiplier is lowered until every reduced cost in B is non-negative,
        except those of columns whose bound u_j is at most 1e-9 times the smaller of 1 and the
        block's largest bound, which pay their term u_j·r_j instead.
    matrix_rel : the relative error allowed in every coefficient of A (:data:`COEFF_REL`; 0 when A
        as given is exactly the matrix of a relaxation, module docstring). The costs always get
        :data:`COEFF_REL`.

    Returns
    -------
    float: yᵀb + Σ_j min(0, r_j)·u_j rounded down by a bound on its floating-point error and on a
    relative error :data:`COEFF_REL` in every cost and ``matrix_rel`` in every coefficient of A;
    −inf when a column without a finite upper bound keeps a negative reduced cost.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Proposition 2 (weak duality) and problem D(π, β).
    .. [2] A. Neumaier and O. Shcherbina, "Safe bounds in linear and mixed-integer linear
       programming", Mathematical Programming 99, 2004.
    """
    c = np.asarray(cost, dtype=float)
    A = sp.csr_matrix(matrix)
    lo = np.asarray(row_lower, dtype=float)
    hi = np.asarray(row_upper, dtype=float)
    u = np.asarray(col_upper, dtype=float)
    y = np.zeros(A.shape[0])
    d = np.asarray(row_duals, dtype=float)[: A.shape[0]]
    # rows added since: multiplier 0
    y[: d.size] = np.nan_to_num(d, nan=0.0, posinf=0.0, neginf=0.0)
    lo_fin, hi_fin = lo > -INF, hi < INF
    y = np.where(lo_fin, y, np.minimum(y, 0.0))  # only an upper bound: y ≤ 0
    y = np.where(hi_fin, y, np.maximum(y, 0.0))  # only a lower bound: y ≥ 0
    AT = A.T.tocsr()
    absAT = abs(AT)
    nnz_col = np.diff(A.tocsc().indptr)
    for r in simplex_rows:
        cols = A.indices[A.indptr[r]:A.indptr[r + 1]]
        a = A.data[A.indptr[r]:A.indptr[r + 1]]
        # columns fixed at 0 cost nothing whatever their reduced cost, and one whose upper bound is
        # tiny against the block's costs little (its term below) where lowering y_r for it would
        # cost much (a support end's outermost point, :meth:`dpdro.grid.GridLP._cap_end_points`)
        free = u[cols] > 1e-9 * min(float(np.max(u[cols], initial=0.0)), 1.0)
        cols, a = cols[free], a[free]
        if cols.size == 0:
            continue
        red = c[cols] - AT[cols] @ y
        slack = _slack(np.abs(c[cols]), absAT[cols] @ np.abs(y), nnz_col[cols], matrix_rel)
        deficit = np.max(-(red - slack) / a)
        # lower y_r by the deficit (plus its own rounding): every reduced cost in B ≥ 0
        if deficit > 0:
            y[r] -= deficit * (1.0 + 4 * _U) + _U * abs(y[r])
    b = np.where(y < 0, hi, lo)
    b = np.where(y == 0, 0.0, b)
    yb = y * b
    red = c - AT @ y
    red_lo = red - _slack(np.abs(c), absAT @ np.abs(y), nnz_col, matrix_rel)
    neg = np.minimum(red_lo, 0.0)
    if np.any((neg < 0) & ~np.isfinite(u)):
        return -np.inf
    pen = neg * np.where(neg < 0, u, 0.0)
    total = float(np.sum(yb)) + float(np.sum(pen))
    err = (_gamma(yb.size + pen.size + 2) + COEFF_REL) * (
        float(np.sum(np.abs(yb))) + float(np.sum(np.abs(pen)))
    )
    return float(np.nextafter(total - err, -np.inf))


class PrivacyLP:
    """A bounding LP whose privacy constraints come in groups (module docstring).

    Parameters
    ----------
    cost : costs of the first columns (probabilities, tails, atom), all with upper bound 1 unless
        ``col_upper`` says otherwise.
    delta : the right-hand side δ of every privacy row.
    budget_extra : ``(columns, values)`` added to every budget and event row (the atom column).

    Subclasses set ``n_groups``, add their normalisation rows with :meth:`add_simplex_rows` and
    implement :meth:`group_segments` and :meth:`shortfalls`.
    """

    n_groups: int
    #: relative error allowed in every coefficient of the matrix by :meth:`dual_bound` (0 for a
    #: subclass that stores its rows rounded in the safe direction, :func:`safe_lower_bound`)
    matrix_rel: float = COEFF_REL

    def __init__(self, cost, *, delta: float, col_upper=None, budget_extra=((), ())):
        cost = np.asarray(cost, dtype=float)
        self.model = HighsModel(cost)
        self.n_p = cost.size
        first = np.ones(cost.size) if col_upper is None else np.asarray(col_upper, dtype=float)
        self._upper: list[tuple[np.ndarray, np.ndarray]] = [(np.arange(cost.size), first)]
        # t-columns and their budget coefficients
        self._t_cols: list[tuple[np.ndarray, np.ndarray]] = []
        self._rhs = float(delta)
        self._delta_rows: list[int] = []
        self._simplex_rows: list[int] = []
        self._budget: dict[int, int] = {}
        self._seg_added: dict[int, np.ndarray] = {}
        self._full: set[int] = set()
        self._events: set[bytes] = set()
        self._extra_cols = np.asarray(budget_extra[0], dtype=np.int64)
        self._extra_vals = np.asarray(budget_extra[1], dtype=float)
        self.event_cuts_added = 0
        # solve the first relaxation by the interior-point method (set when it holds many cuts)
        self.interior_first = False
        self._solved = False
        #: re-solve by the interior-point method without crossover once the LP has this many rows
        #: (``None``: never; for lower bounds only, whose duals need only be near-optimal)
        self.interior_rows: int | None = None

    # ------------------------------------------------------------------ subclass interface
    def group_segments(self, r: int) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """The segments of group r: a CSR matrix whose rows are the linear forms s_q on the first
        ``n_p`` columns, and the free part f_r as ``(columns, non-negative values)``."""
        raise NotImplementedError  # pragma: no cover

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        """max_A of the privacy shortfall (δ subtracted) of every group at the LP point x."""
        raise NotImplementedError  # pragma: no cover

    def segment_values(self, r: int, x: np.ndarray) -> np.ndarray:
        """s_q(p) for every segment of group r at x."""
        seg, _, _ = self.group_segments(r)
        return seg @ np.asarray(x[: self.n_p], dtype=float)

    # ------------------------------------------------------------------ columns and fixed rows
    def add_simplex_rows(self, matrix) -> None:
        """Normalisation rows Σ_{j ∈ B} p_j = 1 (disjoint blocks B): used by :meth:`dual_bound`."""
        idx = self.model.add_rows(matrix, 1.0, 1.0)
        self._simplex_rows.extend(int(i) for i in idx)

    def add_fixed_rows(self, matrix, lower, upper) -> np.ndarray:
        """Rows whose bounds do not depend on δ (monotonicity, caps)."""
        return self.model.add_rows(matrix, lower, upper)

    def add_aux_cols(self, cost, upper) -> np.ndarray:
        """Auxiliary columns with valid upper bounds ``upper`` (for the certified lower bound)."""
        idx = self.model.add_cols(cost)
        self._upper.append((idx, np.broadcast_to(np.asarray(upper, dtype=float), idx.shape).copy()))
        return idx

    def add_t_cols(self, n: int, *, budget=None, weights=None) -> np.ndarray:
        """n columns of cost 0 with the positive coefficients ``weights`` (default 1) in budget rows
        (``budget``: one row, or one per column; or rows the caller adds later with
        :meth:`add_delta_row`). A budget row has right-hand side δ and non-negative entries, so the
        valid upper bound of such a column is the current δ over its weight."""
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        rows = None if budget is None else np.broadcast_to(np.asarray(budget), (n,))
        t = self.model.add_cols(np.zeros(n), rows=rows, values=None if rows is None else w)
        self._t_cols.append((t, w))
        return t

    def fix_columns(self, cols, upper=0.0) -> None:
        """Bound the given columns by ``upper`` (default: fix them at 0, e.g. cells outside
        ``Problem.support``): valid upper bounds, used by :meth:`dual_bound`."""
        cols = np.asarray(cols, dtype=np.int64)
        if cols.size:
            upper = np.broadcast_to(np.asarray(upper, dtype=float), cols.shape).copy()
            self.model.set_col_bounds(cols, 0.0, upper)
            self._upper.append((cols, upper))

    def set_costs(self, cols, costs) -> None:
        self.model.set_col_costs(cols, costs)

    # ------------------------------------------------------------------ cuts
    def has_full_cut(self, r: int) -> bool:
        """Whether every segment of group r is already in the LP."""
        return r in self._full

    @property
    def shift_cuts_added(self) -> int:
        """Number of groups with a budget row (a whole-shift cut, possibly with lazily added
        segments)."""
        return len(self._budget)

    def add_delta_row(self, row) -> int:
        """A privacy row ``row @ x + a ≤ δ`` (``row``: one sparse row; the atom is added here)."""
        return int(self.add_delta_rows(row)[0])

    def add_delta_rows(self, rows) -> np.ndarray:
        """Privacy rows ``rows @ x + a ≤ δ``, one per row of the sparse ``rows`` (the atom added
        to each), in one call of the model; their indices."""
        rows = sp.csr_matrix(rows)
        n, extra = rows.shape[0], self._extra_cols.size
        coo = rows.tocoo()
        r = np.concatenate((coo.row.astype(np.int64), np.repeat(np.arange(n), extra)))
        c = np.concatenate((coo.col.astype(np.int64), np.tile(self._extra_cols, n)))
        v = np.concatenate((coo.data, np.tile(self._extra_vals, n)))
        full = sp.csr_matrix((v, (r, c)), shape=(n, self.model.n_cols))
        idx = self.model.add_rows(full, -INF, self._rhs)
        self._delta_rows.extend(int(b) for b in idx)
        return idx

    def ensure_budget(self, r: int) -> int:
        """The budget row Σ_q t_q + f_r(p) + a ≤ δ of group r (created on first use)."""
        if r not in self._budget:
            _, free_cols, free_vals = self.group_segments(r)
            free = sp.csr_matrix(
                (
                    np.asarray(free_vals, dtype=float),
                    (
                        np.zeros(len(free_cols), dtype=np.int64),
                        np.asarray(free_cols, dtype=np.int64),
                    ),
                ),
                shape=(1, self.n_p),
            )
            self._budget[r] = self.add_delta_row(free)
        return self._budget[r]

    def add_segments(self, r: int, select: np.ndarray) -> int:
        """Add t_q ≥ s_q(p) for the selected segments of group r (those not added before). Returns
        the number of rows added: segment rows, plus the budget row when this call created it."""
        seg, _, _ = self.group_segments(r)
        created = int(r not in self._budget)
        b = self.ensure_budget(r)
        added = self._seg_added.setdefault(r, np.zeros(seg.shape[0], dtype=bool))
        idx = np.nonzero(np.asarray(select, dtype=bool) & ~added & (np.diff(seg.indptr) > 0))[0]
        n = idx.size
        if n == 0:
            return created
        t = self.add_t_cols(n, budget=b)
        part = seg[idx]
        block = sp.hstack(
            [
                part,
                sp.csr_matrix(
                    (np.full(n, -1.0), (np.arange(n), t - self.n_p)),
                    shape=(n, self.model.n_cols - self.n_p),
                ),
            ]
        ).tocsr()
        self.model.add_rows(block, -INF, 0.0)
        added[idx] = True
        return n + created

    def add_lazy_cuts(self, groups, x: np.ndarray, deadline: float | None = None) -> int:
        """The lazy whole-shift cuts of Algorithm 1's round: :meth:`add_worst_segments` for every
        group in ``groups``, all at once (the new budget rows, t-columns and segment rows of all of
        them in three model calls: the same rows as one call per group, much faster when a round
        adds thousands of groups). With ``deadline`` (a ``time.perf_counter()`` value) the groups
        not reached by then are left out (fewer cuts: still a relaxation). Returns the number of
        rows added. A subclass whose cuts are not segments overrides this (and
        :meth:`add_worst_segments`)."""
        xp = np.asarray(x[: self.n_p], dtype=float)
        return self._add_group_cuts(groups, lambda r: self.segment_values(r, xp) > 0, deadline)

    def _add_group_cuts(self, groups, select, deadline: float | None = None) -> int:
        """The segments ``select(r)`` (a mask) of every group r in ``groups`` not added before, and
        the budget rows of the groups that have none, in three model calls (:meth:`add_lazy_cuts`).
        Returns the number of rows added."""
        done, parts = [], []
        for r in (int(r) for r in groups):
            if done and deadline is not None and time.perf_counter() > deadline:
                break
            seg, _, _ = self.group_segments(r)
            added = self._seg_added.setdefault(r, np.zeros(seg.shape[0], dtype=bool))
            idx = np.nonzero(select(r) & ~added & (np.diff(seg.indptr) > 0))[0]
            added[idx] = True
            done.append(r)
            parts.append(seg[idx] if idx.size else None)
        new = [r for r in done if r not in self._budget]
        if new:  # budget rows Σ_q t_q + f_r(p) + a ≤ δ of the groups that have none yet
            rows, cols, vals = [], [], []
            for i, r in enumerate(new):
                _, free_cols, free_vals = self.group_segments(r)
                fc = np.concatenate((np.asarray(free_cols, dtype=np.int64), self._extra_cols))
                rows.append(np.full(fc.size, i)), cols.append(fc)
                vals.append(np.concatenate((np.asarray(free_vals, dtype=float), self._extra_vals)))
            mat = sp.csr_matrix(
                (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                shape=(len(new), self.model.n_cols),
            )
            idx = self.model.add_rows(mat, -INF, self._rhs)
            for r, b in zip(new, idx, strict=False):
                self._budget[r] = int(b)
                self._delta_rows.append(int(b))
        budgets = [
            np.full(p.shape[0], self._budget[r])
            for r, p in zip(done, parts, strict=False)
            if p is not None
        ]
        parts = [p for p in parts if p is not None]
        n = int(sum(p.shape[0] for p in parts))
        if n == 0:
            return len(new)
        t = self.add_t_cols(n, budget=np.concatenate(budgets))
        block = sp.hstack(
            [
                sp.vstack(parts),
                sp.csr_matrix(
                    (np.full(n, -1.0), (np.arange(n), t - self.n_p)),
                    shape=(n, self.model.n_cols - self.n_p),
                ),
            ]
        ).tocsr()
        self.model.add_rows(block, -INF, 0.0)
        return n + len(new)

    def binding_groups(self, row_duals: np.ndarray) -> np.ndarray:
        """The groups whose budget row has a non-zero dual in ``row_duals`` (those that bind at a
        basic optimal solution), sorted."""
        d = np.asarray(row_duals, dtype=float)
        return np.array(
            sorted(r for r, b in self._budget.items() if b < d.size and d[b] != 0.0),
            dtype=np.int64,
        )

    def add_shift_cut(self, r: int) -> int:
        """Every constraint of group r at once (the whole-shift cut)."""
        self._full.add(r)
        seg, _, _ = self.group_segments(r)
        return self.add_segments(r, np.ones(seg.shape[0], dtype=bool))

    def add_worst_segments(self, r: int, x: np.ndarray) -> int:
        """Lazy whole-shift cut: the segments of the worst event of group r at x (Lemma C.15)."""
        return self.add_segments(r, self.segment_values(r, x) > 0)

    def add_event_cut(self, r: int, x: np.ndarray) -> bool:
        """The single constraint of group r for the worst event at x (Algorithm 1). Returns False if
        that exact constraint is already in the LP."""
        seg, free_cols, free_vals = self.group_segments(r)
        sel = self.segment_values(r, x) > 0
        key = np.int64(r).tobytes() + np.packbits(sel).tobytes()
        if key in self._events:
            return False
        self._events.add(key)
        coef = np.asarray(seg[np.nonzero(sel)[0]].sum(axis=0)).ravel()
        np.add.at(coef, np.asarray(free_cols, dtype=np.int64), np.asarray(free_vals, dtype=float))
        self.add_delta_row(sp.csr_matrix(coef[None, :]))
        self.event_cuts_added += 1
        return True

    def add_all_shift_cuts(self) -> None:
        """Every privacy constraint at once: the full LP."""
        for r in range(self.n_groups):
            self.add_shift_cut(r)

    # ------------------------------------------------------------------ solving
    def solve(self, time_limit: float | None = None) -> LPSolution:
        """Re-solve warm from the last basis; the first solve by the interior-point method with
        crossover when :attr:`interior_first` is set, and every solve of an LP with at least
        :attr:`interior_rows` rows by the interior-point method without crossover
        (:meth:`dpdro.solvers.HighsModel.solve`)."""
        if self.interior_rows is not None and self.model.n_rows >= self.interior_rows:
            sol = self.model.solve(time_limit, interior=True, crossover=False)
        else:
            sol = self.model.solve(time_limit, interior=self.interior_first and not self._solved)
        self._solved = self._solved or sol.status == "optimal"
        return sol

    def restart(self, interior: bool = False) -> None:
        """Forget the basis: the next solve starts from scratch, by the interior-point method with
        crossover if ``interior`` (and :attr:`interior_first`), else by the dual simplex method."""
        self.model.clear_basis()
        self._solved = self._solved and not (interior and self.interior_first)

    def set_delta(self, delta: float) -> None:
        """Change the right-hand side δ of every privacy row (used by the repair step)."""
        self._rhs = float(delta)
        if self._delta_rows:
            self.model.set_row_upper(np.asarray(self._delta_rows), self._rhs)

    def column_upper_bounds(self) -> np.ndarray:
        """Valid upper bounds on every column over the feasible set (module docstring)."""
        out = np.full(self.model.n_cols, np.inf)
        for idx, val in self._upper:  # in order: fixing a column at 0 comes after its first bound
            out[idx] = val
        for t, w in self._t_cols:
            out[t] = self._rhs / w
        return out

    def dual_bound(self, row_duals: np.ndarray) -> float:
        """A certified lower bound on this LP's optimal value from any row duals (module
        docstring)."""
        cost, mat, lo, hi = self.model.matrix()
        return safe_lower_bound(
            cost,
            mat,
            lo,
            hi,
            self.column_upper_bounds(),
            row_duals,
            simplex_rows=self._simplex_rows,
            matrix_rel=self.matrix_rel,
        )

    def matrix(self) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray, np.ndarray]:
        """The current LP as (cost, A, row_lower, row_upper), for other solvers."""
        return self.model.matrix()

    def solve_with(self, solver: str = "ECOS", **options) -> LPSolution:
        """Solve the current LP (with the cuts added so far) through cvxpy, e.g. with ECOS: a
        cross-check."""
        return self.model.solve_with(solver, **options)
