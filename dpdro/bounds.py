r"""The bounding problems P(π, β) and D(π, β) of Section 4.1, assembled once and solved by
Algorithm 1.

Upper bound P(π, β): probabilities p(j) on the cells Π_j(β), j ∈ [N], objective coefficients the
cell averages c_j(π, β), and every privacy constraint (φ, A) ∈ E(L, β).

Lower bound D(π, β) (primal form, the strong dual of the dual problem, cf. problem (22)): p lives
on the padded index set N (Δf/β extra cells of width β at each end, which may carry mass that no
event in F(L, β) sees), and the objective coefficients are the cell infima c̲_j(π, β). On uniform
cells (the paper's D(L, β)) the constraints are those of P. On non-uniform cells they are the
cell-union constraints p(S) − e^ε p(N_φ(S)) ≤ δ of :mod:`dpdro.oracle`, because the paper's D(π, β)
is not a valid lower bound there (it spreads each wide cell's mass uniformly inside the cell; see
scripts/check_nonuniform_lower_bound.py). For a shift φ all of them are equivalent to the flow
system

    p_j ≤ Σ_{m ∈ N_φ(j)} f_jm + u_j,   Σ_{j: m ∈ N_φ(j)} f_jm ≤ e^ε p_m,   Σ_j u_j ≤ δ,   f, u ≥ 0

(LP duality for the max-closure problem max_S p(S) − e^ε p(N_φ(S))), which is the whole-shift cut
of the non-uniform lower bound.

With ``atom=True``, P(π, β) gets one extra column: an atom γ({0}) = a at cost c(0). For a shift φ ≠
0 the worst event contains 0 and not φ, so every privacy constraint gains exactly +a (see
:mod:`dpdro.privacy`); the atom column therefore enters each row whose right-hand side is δ with
coefficient 1. D(π, β) needs no such column: its cells [−β, 0) and [0, β) already let mass sit at 0
for at most c(0).

Randomized-rounding coefficients (``coefficients="rounding"``, uniform cells only). The cell infima
make D(L, β) lose about β/2 per unit mass for ℓ1 (both cells [−β, 0) and [0, β) cost nothing, as if
the noise could be compressed by β). A tighter valid bound comes from rounding instead of
aggregating: for X ~ γ feasible and U ~ U[0, 1) independent, Y = β⌊X/β + U⌋ lies on the grid βℤ and

* E[Y | X] = X, so E[c(Y) | X] = Îc(X), the linear interpolation of c on βℤ, and
  E c(Y) ≤ E c(X) + e_β with e_β = sup_x (Îc(x) − c(x)) (:meth:`Loss.grid_interpolation_excess`:
  0 for ℓ1 and any loss linear between grid points, β²/4 for ℓ2);
* the rounding kernel K commutes with grid shifts, K(x + mβ, B + mβ) = K(x, B), so for every set B
  of grid points and every grid shift φ = mβ, |φ| ≤ Δf, the (ε, δ) inequality of γ applied to the
  [0, 1]-valued function K(·, B) gives q(B) ≤ e^ε q(B + φ) + δ for the law q of Y.

Identifying the cell [jβ, (j + 1)β) with the grid point jβ, q is therefore feasible for the
constraints of D(L, β) (which only ever involve unions of cells and grid shifts) with objective Σ_j
q_j c(jβ), and the optimal value minus e_β is a lower bound on P. For ℓ1 its objective is exact
(e_β = 0): all it relaxes is that events and shifts live on the grid. At (ε, δ) = (5, 0.1), β =
Δf/256, shifts on Δf/32 it gives 0.07304 against 0.07161 with the cell infima. Not available for
monotone problems or a ``Problem.support`` (the rounded noise need not keep either property) or for
losses without a finite e_β (e.g. |x|^k with k > 2).

One extra column of D(π, β) carries mass outside the padded support at cost inf{c(x)} over that
region; it is redundant for losses that are monotone on each side of 0 (the paper's setting, proof
of Proposition 3) and keeps the bound valid for every other loss.

Numbers you can trust
---------------------
* A released upper-bound noise is certified with :func:`dpdro.certify_delta`, independently of the
  LP. If the solver's tolerance left it slightly above δ, it is mixed with the solution of the same
  problem at a smaller δ (the DP constraints are linear in p, so the mixture's δ is at most the
  mixture of the two δ's) and certified again. The reported upper bound is the mixture's exact
  expected loss, rounded up.
* The reported lower bound is the Lagrangian of D(π, β) at the solver's duals made sign-feasible,
  with θ lowered until every reduced cost of a probability is non-negative (:mod:`dpdro.lp`), i.e. a
  valid lower bound whatever the solver's accuracy, rounded down by a bound on the floating-point
  error; the rounding coefficients' e_β is then subtracted, rounded up.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._budget import TimeBudget
from ._closed_forms import truncated_laplace_half_width
from ._rounding import round_up as _round_up
from ._validation import check_choice, check_optional_positive
from .cutting_plane import run_cutting_plane
from .lp import PrivacyLP
from .monotone import monotone_matrix, monotone_noise
from .noise import PiecewiseUniform
from .oracle import (
    cell_union_shortfalls,
    cell_union_worst_event,
    neighbour_intervals,
    segment_table,
)
from .partition import Partition
from .problem import InfeasibleError, Problem
from .release import RELEASE_MARGIN, LowerBound, ReleaseFamily, UpperBound, release
from .solvers import INF

__all__ = ["BoundingLP", "UpperBound", "LowerBound", "upper_bound", "lower_bound"]


class BoundingLP(PrivacyLP):
    """P(π, β) (``kind="upper"``) or D(π, β) (``kind="lower"``) on the shared LP layer of
    :mod:`dpdro.lp`.

    Columns: p on the decision cells (the partition, or its padding for the lower bound), the tail
    column (lower bound only) or the atom column (upper bound with ``atom=True``), then the
    auxiliary columns of the cuts. Row 0 is Σ p = 1. Constraint group r is the candidate shift
    ``table.shifts[r]``; its segments are those of the segment table (:mod:`dpdro.oracle`).
    """

    def __init__(
        self,
        problem: Problem,
        partition: Partition,
        kind: str = "upper",
        *,
        shift_stride: int | None = None,
        atom: bool = False,
        coefficients: str = "infimum",
    ):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a dpdro.Problem, got {type(problem).__name__}")
        if not isinstance(partition, Partition):
            raise TypeError(f"partition must be a dpdro.Partition, got {type(partition).__name__}")
        check_choice("kind", kind, ("upper", "lower"))
        if atom and (kind == "lower" or problem.monotone):
            raise ValueError(
                "atom=True applies to the upper bound of a problem without monotonicity rows only "
                f"(got kind={kind!r}, monotone={problem.monotone}); D(π, β) already "
                "admits mass at 0 through its cells [−β, 0) and [0, β)"
            )
        check_choice("coefficients", coefficients, ("infimum", "rounding"))
        # e_β, subtracted from the dual bound (randomized-rounding coefficients only)
        self.excess = 0.0
        if coefficients == "rounding":
            if kind != "lower":
                raise ValueError("coefficients='rounding' applies to the lower bound D(π, β) only")
            if not partition.is_uniform:
                raise ValueError(
                    "coefficients='rounding' needs a uniform partition (cells of width β)"
                )
            self.excess = _rounding_excess(problem, partition.beta)
        self.problem, self.partition, self.kind = problem, partition, kind
        self.k = problem.shifts(partition.beta)
        lower = kind == "lower"
        self.table = segment_table(problem, partition, lower=lower, shift_stride=shift_stride)
        # decision cells (padded for D)
        self.columns = Partition(self.table.column_pi, partition.beta)
        self.atom_col = self.columns.n_cells if atom else None  # the atom γ({0}) of P(π, β)
        self.cost = self._costs(coefficients)
        extra = ([self.atom_col], [1.0]) if atom else ((), ())
        rhs = problem.delta if lower else problem.delta * (1.0 - RELEASE_MARGIN)
        super().__init__(self.cost, delta=rhs, budget_extra=extra)
        self.n_groups = int(self.table.shifts.size)
        self.add_simplex_rows(sp.csr_matrix(np.ones((1, self.n_p))))
        self._segments: dict[int, tuple] = {}
        # non-uniform D(π, β): cell-union constraints (module docstring), one flow block per shift
        self.cell_unions = lower and not partition.is_uniform
        if self.cell_unions:
            self._lo, self._hi = neighbour_intervals(self.table, partition.n_cells)
        if problem.monotone:
            # densities non-increasing in |x|; D(π, β) gets only the rows implied for every monotone
            # measure (no straddling cell, no tail column), see dpdro.monotone
            mono = monotone_matrix(self.table.column_pi, lower=lower, n_cols=self.n_p)
            if mono.shape[0]:
                self.add_fixed_rows(mono, -INF, 0.0)
        # columns that may carry mass (Problem.support)
        self.allowed = np.ones(self.n_p, dtype=bool)
        if problem.support is not None:
            self._apply_support(*problem.support)

    def _costs(self, coefficients: str) -> np.ndarray:
        """The objective: cell averages (P), cell infima or grid values (D) of the loss, then the
        tail column (D) or the atom (P with ``atom=True``)."""
        loss, edges = self.problem.loss, self.columns.edges
        a, b = edges[:-1], edges[1:]
        if self.kind == "upper":
            cost = loss.cell_average(a, b)
        elif coefficients == "rounding":
            cost = np.asarray(loss(a), dtype=float)  # the grid point jβ of cell [jβ, (j + 1)β)
        else:
            cost = loss.cell_infimum(a, b)
        if self.kind == "lower":
            cost = np.append(cost, loss.tail_infimum(edges[0], edges[-1]))
        if self.atom_col is not None:
            cost = np.append(cost, float(loss(np.array([0.0]))[0]))
        if not np.all(np.isfinite(cost)) or np.any(cost < 0):
            raise ValueError(f"loss {loss.name!r} gave negative or non-finite cell coefficients")
        return np.asarray(cost, dtype=float)

    def _apply_support(self, lo: float, hi: float) -> None:
        """Confine the noise to [lo, hi] (``Problem.support``) by fixing columns at 0.

        Upper bound: a cell's uniform density must lie inside [lo, hi], so every cell [a, b) not
        contained in it is fixed at 0 (the released noise is then supported in [lo, hi]).

        Lower bound: for any feasible γ of the restricted problem (γ([lo, hi]) = 1), the aggregated
        masses p_j = γ(Π_j) are feasible for D(π, β) (the paper's argument, unchanged) and in
        addition vanish on every decision cell [a, b) disjoint from [lo, hi] (b ≤ lo or a > hi),
        padding blocks included, and on the tail column when [lo, hi] lies inside the decision
        cells; the mass of a partially covered cell lies in [a, b) ∩ [lo, hi], so charging it the
        infimum of c over [max(a, lo), min(b, hi)] still under-estimates its cost. Fixing those
        columns at 0 and raising those coefficients therefore keeps D(π, β) a relaxation of the
        restricted problem (the certified lower bound gives fixed columns the upper bound 0).
        The lower bound is informative only when the core cells cover [lo, hi], the point hi
        included (e.g. end the partition at hi + β): mass in padding cells is invisible to the
        events.
        """
        edges = self.columns.edges
        a, b = edges[:-1], edges[1:]
        n = a.size
        if self.kind == "upper":
            forbid = (a < lo) | (b > hi)
        else:
            forbid = (b <= lo) | (a > hi)
            partial = ~forbid & ((a < lo) | (b > hi))
            if partial.any():
                ca, cb = np.maximum(a[partial], lo), np.minimum(b[partial], hi)
                point = ca >= cb  # a cell [a, b) that meets [lo, hi] in the single point a = hi
                cost = np.asarray(self.problem.loss(ca), dtype=float).copy()
                if (~point).any():
                    cost[~point] = self.problem.loss.cell_infimum(ca[~point], cb[~point])
                cost = np.maximum(cost, self.cost[:n][partial])
                idx = np.nonzero(partial)[0]
                self.cost[idx] = cost
                self.set_costs(idx, cost)
            # which tails of the support lie outside the cells
            left, right = lo < edges[0], hi >= edges[-1]
            # only one tail can carry mass: charge the infimum over that side only
            if left != right:
                # min with c on [far, ∞) can only lower it: valid
                far = 1e12 * (1.0 + abs(edges[0]) + abs(edges[-1]))
                t = (
                    self.problem.loss.tail_infimum(edges[0], far)
                    if left
                    else self.problem.loss.tail_infimum(-far, edges[-1])
                )
                self.cost[n] = max(self.cost[n], float(t))
                self.set_costs([n], [self.cost[n]])
            forbid = np.append(forbid, not (left or right))
        forbid = np.append(forbid, np.zeros(self.n_p - forbid.size, dtype=bool))
        if self.atom_col is not None:
            forbid[self.atom_col] = not (lo <= 0.0 <= hi)
        if forbid.all():
            raise InfeasibleError(
                f"no cell of the partition lies inside the support [{lo:g}, {hi:g}]"
            )
        self.fix_columns(np.nonzero(forbid)[0])
        self.allowed = ~forbid

    # ------------------------------------------------------------------ oracle
    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        """max_A V(φ, A) for every candidate shift at the LP point x (δ subtracted)."""
        p = x[: self.columns.n_cells]
        if self.cell_unions:
            off = self.table.core_offset
            core = p[off : off + self.partition.n_cells]
            return (
                cell_union_shortfalls(self._lo, self._hi, core, p, self.problem.exp_epsilon)
                - self._rhs
            )
        atom = x[self.atom_col] if self.atom_col is not None else 0.0
        return self.table.worst_values(p, self.problem.exp_epsilon) + atom - self._rhs

    def group_segments(self, r: int):
        """Segments of shift r: |q|·(p(j)/|Π_j| − e^ε p(j′)/|Π_j′|) for the segments A_jj′ (those
        that map a cell onto itself are never positive and left out) and the free segments A_j."""
        if r not in self._segments:
            t = self.table
            sl = slice(t.offsets[r], t.offsets[r + 1])
            j, m, ln = t.cell[sl], t.shifted[sl], t.length[sl].astype(float)
            w = t.column_widths
            free = m < 0  # A_j segments always belong to the worst event: no t-column needed
            pair = ~free & (j != m)
            jj, mm, ll = j[pair], m[pair], ln[pair]
            n = jj.size
            rows = np.arange(n)
            seg = sp.csr_matrix(
                (
                    np.concatenate((ll / w[jj], -self.problem.exp_epsilon * ll / w[mm])),
                    (np.concatenate((rows, rows)), np.concatenate((jj, mm))),
                ),
                shape=(n, self.n_p),
            )
            self._segments[r] = (seg, j[free], ln[free] / w[j[free]])
        return self._segments[r]

    # ---------------------------------------------------------- cuts (cell unions: flow blocks)
    def add_shift_cut(self, r: int) -> int:
        """All constraints (φ_r, A), A ∈ F(L, β), at once: every segment of shift r (on non-uniform
        cells of the lower bound: the flow block of every cell union, see the module docstring)."""
        if self.cell_unions:
            return self._add_flow_block(r)
        return super().add_shift_cut(r)

    def _add_flow_block(self, r: int) -> int:
        """p_j ≤ Σ f_jm + u_j, Σ_j f_jm ≤ e^ε p_m, Σ u_j ≤ δ for shift r; returns the rows added.
        Valid column bounds: f_jm ≤ e^ε (its capacity row), u_j ≤ δ (the budget row)."""
        if r in self._full:
            return 0
        self._full.add(r)
        t, n, off = self.table, self.partition.n_cells, self.table.core_offset
        sl = slice(t.offsets[r], t.offsets[r + 1])
        # one segment per pair (core cell, decision cell)
        cell, col = t.cell[sl] - off, t.shifted[sl]
        caps, cap_of = np.unique(col, return_inverse=True)
        n_f, n_cap = cell.size, caps.size
        f = self.add_aux_cols(np.zeros(n_f), self.problem.exp_epsilon)
        u = self.add_t_cols(n)
        cells, budget = np.arange(n), n + n_cap
        rows = np.concatenate(
            (cells, n + np.arange(n_cap), cell, n + cap_of, cells, np.full(n, budget))
        )
        cols = np.concatenate((off + cells, caps, f, f, u, u))
        vals = np.concatenate(
            (
                np.ones(n),
                np.full(n_cap, -self.problem.exp_epsilon),
                -np.ones(n_f),
                np.ones(n_f),
                -np.ones(n),
                np.ones(n),
            )
        )
        mat = sp.csr_matrix((vals, (rows, cols)), shape=(n + n_cap + 1, self.model.n_cols))
        self.add_fixed_rows(mat[:-1], -INF, 0.0)
        self._budget[r] = self.add_delta_row(mat[-1])
        return n + n_cap + 1

    def add_worst_segments(self, r: int, x: np.ndarray) -> int:
        """Lazy whole-shift cut: the segments of the worst event of shift r at x (Lemma C.15); on
        non-uniform cells of the lower bound the whole flow block (there is no lazy variant)."""
        if self.cell_unions:
            return self._add_flow_block(r)
        return super().add_worst_segments(r, x)

    def add_lazy_cuts(self, groups, x: np.ndarray, deadline: float | None = None) -> int:
        """:meth:`add_worst_segments` one group at a time (flow blocks have no batched form; on
        uniform cells the rows are added in the order P(π, β) and D(π, β) have always used, which
        fixes HiGHS's pivoting and hence the digits of the stored results)."""
        return sum(self.add_worst_segments(int(r), x) for r in groups)

    def add_event_cut(self, r: int, x: np.ndarray) -> bool:
        """The single constraint (φ_r, A*) with A* the worst event at x (Algorithm 1). Returns
        False if that exact constraint is already in the LP."""
        if not self.cell_unions:
            return super().add_event_cut(r, x)
        # the worst union S of core cells: p(S) − e^ε p(N_φ(S)) ≤ δ
        t, e = self.table, self.problem.exp_epsilon
        p = x[: self.columns.n_cells]
        off, n = t.core_offset, self.partition.n_cells
        _, sel = cell_union_worst_event(self._lo[:, r], self._hi[:, r], p[off : off + n], p, e)
        key = np.int64(r).tobytes() + np.packbits(sel).tobytes()
        if key in self._events:
            return False
        self._events.add(key)
        met = np.zeros(self.n_p, dtype=np.int64)
        np.add.at(met, self._lo[sel, r], 1)
        np.add.at(met, self._hi[sel, r] + 1, -1)
        coef = np.zeros(self.n_p)
        coef[off : off + n][sel] = 1.0
        coef -= e * (np.cumsum(met) > 0)
        self.add_delta_row(sp.csr_matrix(coef[None, :]))
        self.event_cuts_added += 1
        return True

    def infeasibility_message(self) -> str:
        p = self.problem
        lo, hi = self.partition.edges[0], self.partition.edges[-1]
        a = truncated_laplace_half_width(
            epsilon=p.epsilon, delta=p.delta, sensitivity=p.sensitivity
        )
        widest = float(np.max(self.partition.widths)) * self.partition.beta
        if hi - lo >= 2 * a and widest > p.sensitivity:
            # (the support holds the truncated Laplace mechanism: the cells are what fails)
            return (
                f"P(π, β) is infeasible: its support [{lo:.6g}, {hi:.6g}) holds the truncated "
                f"Laplace mechanism's [-{a:.6g}, {a:.6g}]: its cells are the likely cause, up to "
                f"{widest:.6g} wide, wider than Δf = {p.sensitivity:g} (a density constant on "
                f"such a cell cannot fall by e^ε per Δf, as (ε, δ) = ({p.epsilon:g}, "
                f"{p.delta:g}) may require); use cells no wider than Δf (Partition.graded's "
                "max_width)."
            )
        return (
            f"P(π, β) is infeasible: the support [{lo:.6g}, {hi:.6g}) (length {hi - lo:.6g}) is "
            "too small "
            f"for (ε, δ) = ({p.epsilon:g}, {p.delta:g}) with Δf = {p.sensitivity:g}, or its cells "
            f"too coarse. The truncated Laplace mechanism fits within [-{a:.6g}, {a:.6g}], a "
            "support known to suffice; enlarge the support (more cells L at the same β) or refine "
            "the cells."
        )

    # ------------------------------------------------------------------ certified lower bound
    def dual_bound(self, row_duals: np.ndarray) -> float:
        """A lower bound on P from any row duals: the certified Lagrangian bound of :mod:`dpdro.lp`
        minus the rounding coefficients' e_β (rounded up)."""
        bound = super().dual_bound(row_duals)
        if self.excess:
            bound = float(np.nextafter(bound - _round_up(self.excess), -np.inf))
        return bound


def _rounding_excess(problem: Problem, beta: float) -> float:
    """e_β of the randomized-rounding coefficients on the grid βℤ (module docstring), after checking
    that P(π, β)'s cells allow them (no monotonicity, no support, a loss with a known e_β)."""
    if problem.monotone or problem.support is not None:
        raise ValueError(
            "coefficients='rounding' does not apply to monotone problems or a Problem.support: "
            "the rounded noise need not be monotone or stay inside the support"
        )
    excess = problem.rounding_excess(beta)
    if excess is None:
        raise ValueError(
            f"coefficients='rounding' needs a bound on the grid interpolation excess of the loss "
            f"{problem.loss.name!r} (Loss.grid_interpolation_excess), which it does not provide"
        )
    return float(excess)


# ---------------------------------------------------------------------------- solving
class _PartitionRelease(ReleaseFamily):
    """P(π, β) as a :class:`dpdro.release.ReleaseFamily`: its noise is uniform on the partition's
    cells (plus the atom), and the uniform density on the support, ((ε, Δf/W)-DP for a support of
    length W), is the anchor that needs no solve."""

    def __init__(self, lp: BoundingLP, *, cuts: str, tol: float):
        self.lp, self.problem, self.cuts, self.tol = lp, lp.problem, cuts, tol
        prob = lp.problem
        self.meta = dict(
            epsilon=prob.epsilon,
            delta=prob.delta,
            sensitivity=prob.sensitivity,
            loss=prob.loss.name,
        )

    def noise(self, x: np.ndarray) -> PiecewiseUniform:
        part, lp = self.lp.partition, self.lp
        p = np.clip(x[: part.n_cells], 0.0, None)
        atom = max(float(x[lp.atom_col]), 0.0) if lp.atom_col is not None else 0.0
        total = p.sum() + atom
        noise = PiecewiseUniform(
            part.edges, p / total, grid=part.beta, metadata=dict(self.meta), atom=atom / total
        )
        return monotone_noise(noise) if self.problem.monotone else noise  # exact monotonicity

    def solve(self, budget: TimeBudget) -> np.ndarray:
        return run_cutting_plane(self.lp, cuts=self.cuts, tol=self.tol, time_limit=budget.left()).x

    def fallback_anchor(self) -> PiecewiseUniform:
        part = self.lp.partition
        inside = part.widths * self.lp.allowed[: part.n_cells]  # only cells inside Problem.support
        return PiecewiseUniform(part.edges, inside / inside.sum(), grid=part.beta)


def upper_bound(
    problem: Problem,
    partition: Partition,
    *,
    cuts: str = "shift",
    tol: float = 1e-9,
    atom: bool = False,
    time_limit: float | None = None,
) -> UpperBound:
    """Solve P(π, β) by Algorithm 1 and release its optimal noise, certified.

    Parameters
    ----------
    problem : the instance (ε, δ, Δf, c) of P.
    partition : the cells Π_j(β) of the noise (:class:`dpdro.Partition`).
    cuts : ``"shift"`` (whole-shift cuts, fast) or ``"event"`` (Algorithm 1 with single events).
    tol : stop when no privacy constraint is violated by more than ``tol``.
    atom : also optimise a point mass at 0 (module docstring). The released noise is then a
        ``PiecewiseUniform`` with ``atom`` > 0 possible; this pays off for large ε and δ, where the
        optimal noise concentrates mass close to δ at 0 (ℓ1, ε = 5, δ = 0.75, k = 128: 0.02094
        against 0.02382 without it).
    time_limit : seconds for the whole call, the repair's re-solves included (``None``: no limit).

    Returns
    -------
    UpperBound whose ``noise`` satisfies ``certify_delta(noise, ε, Δf) <= δ`` exactly and whose
    ``value`` (its expected loss, rounded up) is a valid upper bound on the optimal value of P.

    Raises
    ------
    InfeasibleError if the partition's support is too small for (ε, δ); RuntimeError if Algorithm 1
    did not converge within ``time_limit`` (no certified noise to release).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 4.1 (problem P(π, β), equation (9)) and Algorithm 1.
    """
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    lp = BoundingLP(problem, partition, "upper", atom=atom)
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=budget.left())
    if not res.converged:
        raise RuntimeError(
            f"Algorithm 1 stopped after {res.iterations} iterations ({res.seconds:.1f} s) with a "
            f"privacy shortfall of {res.max_shortfall:.3e}; no certified noise to release"
        )
    return release(
        _PartitionRelease(lp, cuts=cuts, tol=tol),
        res.x,
        budget,
        lp_value=res.objective,
        partition=partition,
        iterations=res.iterations,
        simplex_iterations=res.simplex_iterations,
        history=res.history,
    )


def lower_bound(
    problem: Problem,
    partition: Partition,
    *,
    cuts: str = "shift",
    tol: float = 1e-9,
    shift_stride: int | None = None,
    coefficients: str = "infimum",
    time_limit: float | None = None,
) -> LowerBound:
    """Solve D(π, β) by Algorithm 1 and return a lower bound on P (see module docstring).

    On uniform partitions this is the paper's D(L, β). On non-uniform partitions it is *not* the
    D(π, β) of Section 4.1, which can exceed the optimum (scripts/check_nonuniform_lower_bound.py:
    0.08221 against a certified noise with loss 0.08190 at ε = 5, δ = 0.01, ℓ1), but its valid
    cell-union version (module docstring).

    Parameters
    ----------
    problem, partition : as for :func:`upper_bound`.
    cuts, tol : as for :func:`upper_bound`.
    shift_stride : restrict the privacy constraints to shifts that are multiples of
        ``shift_stride``·β (and ±Δf): a relaxation of D(π, β), hence still a valid lower bound, that
        is much cheaper on fine grids.
    coefficients : ``"infimum"`` (the cell infima c̲_j of the paper) or ``"rounding"`` (the grid
        values c(jβ) minus the loss's grid interpolation excess e_β, randomized rounding, module
        docstring): valid on uniform partitions, and much tighter for ℓ1 and ℓ2.
    time_limit : seconds for the whole call; an unconverged relaxation still gives a valid bound.

    Returns
    -------
    LowerBound whose ``value`` is the Lagrangian of D(π, β) at sign-feasible duals, rounded down.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 4.1 (problem D(π, β), Proposition 3) and Algorithm 1.
    """
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    lp = BoundingLP(
        problem, partition, "lower", shift_stride=shift_stride, coefficients=coefficients
    )
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=budget.left())
    p = np.clip(res.x[: lp.n_p], 0.0, None)
    off = lp.table.core_offset
    outside = float(p[:off].sum() + p[off + partition.n_cells :].sum())
    return LowerBound(
        value=lp.dual_bound(res.row_duals),
        lp_value=res.objective,
        seconds=budget.elapsed(),
        coefficients=coefficients,
        iterations=res.iterations,
        simplex_iterations=res.simplex_iterations,
        history=res.history,
        outside_mass=outside,
        p=p,
        columns=lp.columns,
        core_offset=off,
        partition=partition,
    )
