r"""The grid LPs behind :func:`dpdro.optimal_noise`: one grid, one feasible set, two objectives.

Grid
    Step β = Δf/k, grid points iβ and *centred* cells C_i = [(i − ½)β, (i + ½)β) (privacy is
    translation invariant, so centring the cells of the paper's uniform partition changes nothing
    but the objective).

Upper bound U(k) (a restriction of P, released and certified)
    Noise with mass p_i spread uniformly on C_i, plus an atom a at 0. For such a noise
    δ(φ) = a + ∫ (p(y) − e^ε p(y − φ))_+ dy is affine in φ between consecutive multiples of β: for
    φ = (m + θ)β, θ ∈ [0, 1), every y ∈ C_i has y − φ ∈ C_{i−m} on a part of C_i of length (1 − θ)β
    and y − φ ∈ C_{i−m−1} on the rest, so δ(φ) = (1 − θ)·δ(mβ) + θ·δ((m + 1)β). Hence the noise is
    (ε, δ)-DP for |φ| ≤ Δf iff, for the grid shifts m = ±1, …, ±k,

        a + Σ_i (p_i − e^ε p_{i−m})_+ ≤ δ,                                                (G)

    with objective Σ_i p_i c̄_i + a·c(0), c̄_i the average of c over C_i.

Lower bound D_R(k) (randomized rounding, a relaxation of P)
    For any (ε, δ)-DP noise X and U ~ U[0, 1) independent of X, Y = β⌊X/β + U⌋ has E[Y | X] = X, so
    E c(Y) ≤ E c(X) + e_β (:meth:`Loss.grid_interpolation_excess`), the rounding commutes with grid
    shifts, so q = law(Y) satisfies (G) without atom (:mod:`dpdro.bounds`), and D_R(k) minimises
    Σ_i q_i c(iβ) − e_β over such q (for ℓ2 with a credit, :mod:`dpdro._excess_split`). Where the
    excess grows without bound but slower than c (|x|^k, k > 2: ≈ (k(k − 1)/8)β²|x|^{k−2}), E c(Y)
    ≤ (1 + η)E c(X) + e_β(η), and the bound is (min Σ_i q_i c(iβ) − e_β(η))/(1 + η) at the best η
    tried (:meth:`dpdro.Problem.rounding_allowances`): second order in β where the cell infima lose
    k·β/(2|x|) of the loss (measured for |x|³ at ε = 0.0016, δ = 5.3e-10: 24% at the first grid,
    halving per refinement). For |x|^k, 1 < k < 2, whose excess is e_β only on the cells touching
    0 and about β²/8·c″ elsewhere, each point is charged c(iβ) plus a credit e_β − ê_i
    (:meth:`Loss.grid_excess_credit`) before e_β is subtracted: the excess is then charged by
    where the mass lies (|x|^1.5 at ε = 3.76: the gap at k = 69 from 0.20% to 0.04%). It only keeps
    the constraints of events inside a window W = [−L, L] of grid points plus two *tail blocks*:
    for every shift the event B ∪ (−∞, −L) ∪ (L, ∞) with B ⊂ W has q(B ∪ …) − e^ε q(B ∪ … − m)
    equal to the sum over its parts because the shifted parts stay disjoint, so the worst such
    event adds
    (q((−∞, −L)) − e^ε q((−∞, −L − m)))_+ and (q((L, ∞)) − e^ε q((L − m, ∞)))_+ to the left side of
    (G). The variables are q_i for |i| ≤ L + k (enough for every shifted point of W) and the masses
    beyond, at cost the infimum of c there. Dropping constraints only relaxes, so the value is a
    lower bound on P whatever L is; a window that holds the optimal noise loses nothing. Losses
    without a finite e_β(η), and monotone problems (the rounded noise need not be monotone), use the
    paper's aggregation instead: masses p_i = γ(C_i) of centred cells at cost inf_{C_i} c satisfy
    (G) too (grid shifts map cells onto cells), and for a monotone γ also the rows of
    :mod:`dpdro.monotone`. With ``Problem.support`` = [lo, hi], a rounded noise lives on the grid
    points in [β⌊lo/β⌋, β⌈hi/β⌉] and an aggregated one on the cells meeting [lo, hi]; the others
    are absent. The outermost point is fed only by noise within w of the end (w the support's
    width beyond the next point in), with probability at most w/β, and an (ε, δ)-DP noise puts
    at most e^ε·w/Δf + δ within w: where w is a floating-point sliver (−1 lies 1e-16 below −11β
    for β = Δf/11 rounded down), that bound on the point's mass saves a grid step of the support
    (ℓ2 on (−1, ∞) at ε = 3, δ = 0.05, k = 11: 0.249 → 0.313; :meth:`GridLP._cap_end_points`).

Lazy rows
    (G) has about k·(2L + 1) segment rows. LPs with at least :data:`dpdro.grid_rows.LAZY_FROM` of
    them hold a segment row only once it is violated, seeded by the rows a guess of the optimal
    noise makes tight, and re-solve until none is missing: the same optimum with a third of the
    rows at large ε, and a relaxation at every stage (:mod:`dpdro.grid_rows`). From k = 24 a
    lower bound with the floor rounding keeps only some of the shifts, another relaxation
    (:func:`dpdro.grid_rows.lower_shifts`).

One feasible set
    (G) constrains U(k) and D_R(k) alike: on the same grid the two LPs differ in the objective (cell
    averages against grid values minus e_β, and the atom), in the window and in the tails. For ℓ1
    the average of |x| over C_i is |i|β for i ≠ 0 and β/4 for i = 0, so the gap is at most a
    quarter of β times the mass the lower bound puts at 0, plus the window's effect; for ℓ2 it is
    at most β²/3.

Supports
    With ``Problem.support`` the upper bound's cells are those inside it. A centred cell cannot
    reach a support end on the lattice βℤ (0 for one-sided noise): the first cell would start β/2
    inside, which costs a loss linear there (ℓ1 on [0, ∞)) β/2 on every unit of mass. There the
    cells are C_i + β/2 = [iβ, (i + 1)β) instead (:func:`dpdro._cells.cell_offset`): (G) is
    unchanged (privacy is translation invariant), the edges stay on the lattice β/2, and U(k)
    costs at most β/2 more than D_R(k) instead of β (measured: one-sided ℓ1, ε = 0.31,
    δ = 1.6e-12, k = 1: 83.13 → 82.63, the lower bound's LP 82.10). The upper bound's window grows
    only at its edges that cut the support (``boundary_mass``), not at the support's own end, where
    one-sided noise keeps about δ. On a support on one side of 0 the grid LP also admits the floor
    of the noise, about β/2 times the loss's slope below P; what the fractional parts must cost is
    added back (:mod:`dpdro._floor_weights`).

Symmetric losses
    (G) is invariant under the reflection i ↦ −i, m ↦ −m, so averaging a solution with its mirror
    image keeps it feasible and, for c(x) = c(−x), its cost: both LPs may restrict to symmetric p
    and q (half the variables) and to the shifts m = 1, …, k (half the constraint groups).

Coarse grids (small ε)
    For small ε the noise spreads over thousands of Δf, and cells wider than Δf suffice: β = r·Δf
    (``k = Fraction(1, r)``). The upper bound's δ(φ) is still affine between 0 and β (where it is
    a), so for |φ| ≤ Δf = β/r it is largest at Δf and (G) becomes a + (1/r)·Σ_i (p_i − e^ε
    p_{i−1})_+ ≤ δ for the shifts ±β. The lower bound cannot use shifts shorter than a grid step,
    but by group privacy an (ε, δ)-DP noise for |φ| ≤ Δf is (rε, δ_r)-DP for |φ| ≤ rΔf with
    δ_r = δ(1 + e^ε + … + e^{(r−1)ε}) = δ(e^{rε} − 1)/(e^ε − 1), so the rounded law satisfies (G)
    with rε, δ_r and the shifts ±β. The truncated Laplace mechanism's half-width is invariant under
    this change, so little is lost while rε is small.

Interrupted solves
    The certified bound of :meth:`dpdro.lp.PrivacyLP.dual_bound` is valid for any row duals, so a
    lower-bound LP cut short by its time limit still gives a lower bound on P: that of the duals of
    the basis where HiGHS stopped (:class:`LowerBoundTimeout`). Its dual simplex method runs
    without cost perturbation, so these duals are those of the true costs and the bound climbs
    with the solve towards the LP's optimum (measured: ℓ2 at ε = 7.31, δ = 6.2e-5, k = 160, 85,000
    rows, stopped every 2 s: 0.004017, 0.005483, 0.005488, …, 0.005498 after 20 s, where the LP on
    the grid k = 73 gives 0.005480; with the default perturbation, bounds of −3 to −13 from the
    same solve; the interior-point start of :func:`dpdro.grid_rows.interior_first` gives less).

Small δ
    HiGHS's tolerances are absolute (about 1e-9), far above δ = 1e-12. Every budget row is divided
    by δ, and ``scale`` (upper bound only) solves the LP in the variables r_i = p_i / s_i for a
    magnitude profile s (a previous solution) with each segment row divided by s_i, so that
    tolerances become relative; ``margin`` multiplies e^ε by 1 − margin in the rows (a
    restriction). The released noise then needs at most a tiny repair. The certified lower bound is
    valid for any scaling and duals. The lower bound's rows are stored as an exact relaxation
    (e^{rε} and δ_r rounded up, β = Δf/k down, every other inexact coefficient an ulp lower,
    :func:`dpdro._rounding.lowered`), so its certificate needs no allowance for coefficient errors
    (:func:`dpdro.lp.safe_lower_bound`): with one-sided supports the duals of its rows grow like
    1/(εδ), and that allowance had cost 0.56% of the bound at δ = 1.6e-12.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from functools import partial

import numpy as np
import scipy.sparse as sp

from . import _rounding
from ._budget import TimeBudget
from ._cells import cell_offset, laplace_profile
from ._excess_split import add_excess_split
from ._floor_weights import add_floor_rounding
from ._validation import check_choice
from .grid_rows import LAZY_FROM, SegmentRows, guess_masses, interior_first, lower_shifts
from .lp import PrivacyLP
from .monotone import monotone_matrix, monotone_noise
from .noise import PiecewiseUniform
from .problem import InfeasibleError, Problem, RelaxationInfeasibleError
from .release import (
    RELEASE_MARGIN,
    LowerBound,
    ReleaseFamily,
    UpperBound,
    best_lower_bound,
    release,
)
from .solvers import INF, LPSolution, SolverError

__all__ = ["GridLP", "LowerBoundTimeout", "grid_lower_bound", "grid_upper_bound"]

_SMALL_DELTA = 1e-6  # below: the upper bound starts from the scaled LP
_FAR = 1e100  # beyond every window: the one-sided tail infima use [edge, _FAR]
# windows of a lower-bound LP, in units of the requested one, tried in turn while HiGHS fails on it
# numerically (measured: one-sided noise at ε = 0.1 and 0.2, δ = 1e-10, where its dual simplex
# fails on some windows and solves their neighbours; budget rows divided by δ span ten decades)
_RETRY_WINDOWS = (1.0, 1.5, 2.25)
# the largest mass bound GridLP._cap_end_points sets on a support end's outermost point: slivers of
# floating-point width only (a larger bound met a negative reduced cost that the certificate then
# covered by lowering the normalisation's multiplier: pinball on (−0.81, ∞) at k = 1/8, a bound
# of 0.085 took the certified bound from 4.0 to −0.18)
_SLIVER_CAP = 1e-12


class GridLP(PrivacyLP):
    """U(k) (``kind="upper"``) or the lower bound (``kind="lower"``) on the grid Δf/k (module
    docstring).

    Parameters
    ----------
    k : grid steps per sensitivity, β = Δf/k: a positive integer, or ``Fraction(1, r)`` for the
        coarse grid β = r·Δf (module docstring, "Coarse grids").
    L : the window [−L, L] of grid points (cells for the upper bound; events for the lower bound).
    coefficients : lower bound only, ``"rounding"`` (D_R) or ``"infimum"`` (aggregated cells).
    atom : upper bound only, optimise a point mass at 0.
    scale, margin : upper bound only, the scaled formulation for small δ (module docstring);
        ``scale`` is a magnitude per probability column, ``margin`` ≥ 0.
    symmetric : restrict to symmetric masses (``None``: exactly when the loss is symmetric and
        there is no support; ``False`` forces the general LP, e.g. for cross-checks).
    """

    def __init__(
        self,
        problem: Problem,
        k: int,
        L: int,
        kind: str,
        *,
        coefficients: str = "rounding",
        atom: bool = False,
        scale=None,
        margin: float = 0.0,
        symmetric: bool | None = None,
        lazy: bool | None = None,
        guess=None,
    ):
        # Long because the upper and lower LPs share one constructor and differ row by row
        check_choice("kind", kind, ("upper", "lower"))
        check_choice("coefficients", coefficients, ("rounding", "infimum"))
        self.problem, self.L, self.kind = problem, int(L), kind
        self.k = _steps(k)
        self.r = self.k.denominator  # β = r·Δf on a coarse grid (k = 1/r), else r = 1
        lower = kind == "lower"
        step = problem.sensitivity / float(self.k)
        self.beta = beta = _rounding.step_down(problem.sensitivity, self.k) if lower else step
        self.max_shift = max(self.k.numerator, 1)  # grid steps per Δf (at least one)
        self.coefficients = "average" if not lower else coefficients
        # the pairs (η, e_β(η)) of the rounding bound (D − e_β(η))/(1 + η), module docstring
        self.allowances = (
            problem.rounding_allowances(beta) if self.coefficients == "rounding" else []
        )
        self._check_options(atom, scale, margin, symmetric)
        lo, hi = problem.support if problem.support is not None else (-math.inf, math.inf)
        can_mirror = problem.loss.symmetric and problem.support is None
        self.symmetric = can_mirror if symmetric is None else bool(symmetric)
        # upper bound: cells C_i + oβ, o = ½ where that puts a finite end of the support on a cell
        # edge (module docstring, "Supports")
        self.offset = 0.0 if lower or problem.monotone else cell_offset(problem, beta)
        self._set_ranges(lo, hi)
        cost, norm = self._columns(lo, hi, atom)
        if self.allowances and self._credit(np.zeros(1)) is not None:
            self.allowances = self.allowances[:1]  # (0, e_β): the credit is relative to it
        self.floor, self.floor_gain = False, 0.0  # the floor rounding (set below with the rows)
        # scaled formulation (upper bound, small δ): columns r = p / s, segment rows / s_i,
        # budgets / δ
        n_scaled = self.n_cells + len([c for c in self.tail_cols if c is not None])
        self.scale = np.ones(cost.size)
        if scale is not None:
            self.scale[:n_scaled] = np.asarray(scale, dtype=float)
        # the constraints (G) of a coarse grid (module docstring): upper bound, δ(Δf) = a + Σ(…)₊/r;
        # lower bound, group privacy at (rε, δ_r) between points one step apart
        self.delta_rows = (
            _rounding.group_delta(problem.delta, problem.epsilon, self.r) if lower
            else problem.delta * (1.0 - RELEASE_MARGIN)
        )
        self.exp_rows = (
            problem.exp_epsilon * (1.0 - float(margin))
            if not lower
            else _rounding.exp_up(float(np.nextafter(self.r * problem.epsilon, np.inf)))
        )
        # lower bound: rows stored as a relaxation (lowered), so the certified bound needs no
        # allowance for errors in them (dpdro.lp.safe_lower_bound)
        self._relax = _rounding.lowered if lower and not problem.monotone else None
        if self._relax is not None:
            self.matrix_rel = 0.0
        self.shift_weight = 1.0 / self.r if not lower else 1.0
        self._unit = self.delta_rows  # budget rows read Σ …/δ ≤ 1: their tolerance is relative to δ
        extra = ([self.atom_col], [1.0 / self._unit]) if self.atom_col is not None else ((), ())
        super().__init__(
            cost * self.scale,
            delta=self.delta_rows / self._unit,
            col_upper=1.0 / self.scale,
            budget_extra=extra,
        )
        # faster on these LPs, and exact with tiny right-hand sides
        self.model.set_option("presolve", "off")
        if lower:
            # the dual simplex method without cost perturbation keeps its iterates dual feasible,
            # so a solve cut short by its time limit still gives a near-valid dual point whose
            # certified bound rises towards the optimum (module docstring, "Interrupted solves");
            # measured at ε = 4 (ℓ1, k = 67) and 7.3 (ℓ2, k = 73): the same iterations either way
            self.model.set_option("dual_simplex_cost_perturbation_multiplier", 0.0)
        self.add_simplex_rows(sp.csr_matrix((norm * self.scale)[None, :]))
        if lower and self.coefficients == "rounding":
            add_floor_rounding(self)  # the floor's gain (dpdro._floor_weights)
            self._cap_end_points(lo, hi)
            kappa = problem.loss.rounding_excess_curvature(beta)  # where the mass came from
            no_credit = self._credit(np.zeros(1)) is None and not self.floor
            if kappa and no_credit and add_excess_split(self, kappa):
                self.allowances = [(0.0, max(self.allowances[0][1], kappa / 4))]
        # the upper bound needs every shift; a floor LP keeps a subset (dpdro.grid_rows)
        m = self.max_shift
        m = lower_shifts(m, problem.epsilon, problem.delta) if self.floor else np.arange(1, m + 1)
        self.shifts = m if self.symmetric else np.concatenate((-m[::-1], m))
        self.n_groups = int(self.shifts.size)
        if problem.monotone:
            self._add_monotone_rows()
        # the rows (G): budget and tail rows now, segment rows all or lazily (dpdro.grid_rows)
        self.rows = SegmentRows(self)
        self.lazy = self.rows.added.size >= LAZY_FROM if lazy is None else bool(lazy)
        if not self.lazy:
            self.rows.add(np.ones(self.rows.added.size, dtype=bool))
        elif guess is not None:
            self.rows.add(self.rows.seeds(guess_masses(self, guess)))

    # ------------------------------------------------------------------ set-up
    def _check_options(self, atom: bool, scale, margin: float, symmetric: bool | None) -> None:
        """The options that only one kind of LP, or only some problems, admit."""
        problem, lower = self.problem, self.kind == "lower"
        if (
            lower
            and self.coefficients == "rounding"
            and (problem.monotone or not self.allowances)
        ):
            raise ValueError(
                "coefficients='rounding' needs a loss with a finite grid interpolation excess and "
                "a problem without monotonicity"
            )
        if atom and (lower or problem.monotone):
            raise ValueError(
                "atom=True applies to the upper bound of a problem without monotonicity only"
            )
        if (scale is not None or margin) and lower:
            raise ValueError("scale and margin apply to the upper bound only")
        if symmetric and not (problem.loss.symmetric and problem.support is None):
            raise ValueError("symmetric=True needs a symmetric loss and no Problem.support")

    def _cap_end_points(self, lo: float, hi: float) -> None:
        """Bound the rounded noise's mass on the outermost point at each finite end of the support:
        it is fed only by noise within w of the end, with probability at most w/β, where w is the
        width of the support beyond the next point in, and an (ε, δ)-DP noise puts at most
        e^ε·w/Δf + δ on an interval of width w (its rows for the shifts [0, Δf], averaged).
        Only where that is below :data:`_SLIVER_CAP`: an end a hair past a grid point (module
        docstring, "Supports"). Not at the end nearest 0 while the floor's gain counts: the floor
        may put all of that interval's mass there."""
        p, beta = self.problem, self.beta
        v_lo, v_hi = self.points
        cols, caps = [], []
        for end, point, inner, near in (
            (lo, self.ends[0], self.ends[0] + 1, lo >= 0.0),
            (hi, self.ends[1], self.ends[1] - 1, hi <= 0.0),
        ):
            if not (math.isfinite(end) and v_lo <= point <= v_hi) or (near and self.floor):
                continue
            # the width w, rounded up by more than the error of its two floating-point operations
            w = abs(end - inner * beta) + 4.0 * math.ulp(max(abs(end), abs(inner * beta)))
            cap = (w / beta) * (_rounding.exp_up(p.epsilon) * w / p.sensitivity + p.delta)
            if cap <= _SLIVER_CAP:
                cols.append(int(self.col(np.array([point]))[0]))
                caps.append(_rounding.round_up(cap))
        self.fix_columns(cols, caps)

    def _set_ranges(self, lo: float, hi: float) -> None:
        """The window of event points, the points that carry variables and the tails beyond them."""
        beta, lower = self.beta, self.kind == "lower"
        fl, ce = _rounding.floor_finite, _rounding.ceil_finite
        # grid points (lower) or cells (upper) that may carry mass: the range R = [r_lo, r_hi]
        if not lower:
            r_lo, r_hi = ce(lo / beta - self.offset + 0.5), fl(hi / beta - self.offset - 0.5)
        elif self.coefficients == "rounding":
            r_lo, r_hi = fl(lo / beta), ce(hi / beta)
        else:  # the cells C_i that meet [lo, hi]
            r_lo, r_hi = fl(lo / beta - 0.5) + 1, fl(hi / beta + 0.5)
        w_lo, w_hi = max(-self.L, r_lo), min(self.L, r_hi)
        if w_lo > w_hi:
            raise InfeasibleError(
                f"no grid cell of width {beta:g} within [−{self.L * beta:g}, {self.L * beta:g}] "
                f"lies inside the support [{lo:g}, {hi:g}]"
            )
        pad = self.max_shift if lower else 0
        self.ends = (r_lo, r_hi)  # the outermost points (cells) the support admits
        self.window = (int(w_lo), int(w_hi))  # event points
        self.window_cuts = (bool(r_lo < -self.L), bool(r_hi > self.L))  # edges inside the support
        self.points = (int(max(w_lo - pad, r_lo)), int(min(w_hi + pad, r_hi)))  # variables
        v_lo, v_hi = self.points
        self.tails = (lower and v_lo > r_lo, lower and v_hi < r_hi)  # mass beyond the variables

    def _columns(self, lo: float, hi: float, atom: bool) -> tuple[np.ndarray, np.ndarray]:
        """Costs and normalisation coefficients of the columns: symmetric p_|i| (i = 0 … v_hi), or
        p_i (i = v_lo … v_hi); then the tails, then the atom (sets ``n_cells``, ``tail_cols``,
        ``atom_col``)."""
        loss, beta = self.problem.loss, self.beta
        v_lo, v_hi = self.points
        if self.symmetric:
            self.n_cells = v_hi + 1
            mult = np.where(np.arange(self.n_cells) == 0, 1.0, 2.0)
            pts = np.arange(self.n_cells)
        else:
            self.n_cells = v_hi - v_lo + 1
            mult = np.ones(self.n_cells)
            pts = np.arange(v_lo, v_hi + 1)
        cost = list(self._point_costs(pts, lo, hi) * mult)
        norm = list(mult)
        self.tail_cols = []
        if self.symmetric and any(self.tails):
            self.tail_cols = [len(cost)]
            cost.append(loss.tail_infimum(-(v_hi + 0.5) * beta, (v_hi + 0.5) * beta))
            norm.append(1.0)
        elif not self.symmetric:
            for side, present in zip((-1, 1), self.tails, strict=False):
                if present:
                    self.tail_cols.append(len(cost))
                    edge = (v_lo - 0.5) * beta if side < 0 else (v_hi + 0.5) * beta
                    cost.append(
                        loss.tail_infimum(edge, _FAR)
                        if side < 0
                        else loss.tail_infimum(-_FAR, edge)
                    )
                    norm.append(1.0)
                else:
                    self.tail_cols.append(None)
        self.atom_col = None
        if atom and lo <= 0.0 <= hi:
            self.atom_col = len(cost)
            cost.append(float(loss(np.array([0.0]))[0]))
            norm.append(1.0)
        cost, norm = np.asarray(cost, dtype=float), np.asarray(norm)
        if not np.all(np.isfinite(cost)) or np.any(cost < 0):
            raise ValueError(f"loss {loss.name!r} gave negative or non-finite coefficients")
        return cost, norm

    def _point_costs(self, pts, lo, hi) -> np.ndarray:
        loss, beta = self.problem.loss, self.beta
        if self.coefficients == "average":
            o = self.offset
            return loss.cell_average((pts - 0.5 + o) * beta, (pts + 0.5 + o) * beta)
        if self.coefficients == "rounding":
            costs = np.asarray(loss(pts * beta), dtype=float)
            credit = self._credit(pts)
            return costs if credit is None else np.where(
                credit > 0, np.nextafter(costs + credit, 0.0), costs
            )
        a, b = np.maximum((pts - 0.5) * beta, lo), np.minimum((pts + 0.5) * beta, hi)
        # a cell meeting [lo, hi] only at its left end
        out = np.asarray(loss(a), dtype=float).copy()
        wide = b > a
        out[wide] = loss.cell_infimum(a[wide], b[wide])
        return out

    def _credit(self, pts) -> np.ndarray | None:
        """The loss's credit κ_i ≥ 0 of D_R's points (:meth:`dpdro.Loss.grid_excess_credit`), used
        without a support (whose floor-rounding gain needs the costs c(iβ) themselves)."""
        if self.problem.support is not None:
            return None
        return self.problem.loss.grid_excess_credit(self.beta, pts)

    def col(self, i: np.ndarray) -> np.ndarray:
        """Column of the point or cell i."""
        return np.abs(i) if self.symmetric else i - self.points[0]

    def _add_monotone_rows(self) -> None:
        v_lo, v_hi = (-self.points[1], self.points[1]) if self.symmetric else self.points
        pts = np.arange(v_lo, v_hi + 1)
        mono = monotone_matrix(np.append(2 * pts - 1, 2 * v_hi + 1), lower=self.kind == "lower")
        if mono.shape[0]:
            to_cols = sp.csr_matrix(
                (np.ones(pts.size), (np.arange(pts.size), self.col(pts))),
                shape=(pts.size, self.n_p),
            )
            self.add_fixed_rows(mono @ to_cols, -INF, 0.0)

    # ------------------------------------------------------------------ oracle and solution
    def point_masses(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(grid points, masses q on them, atom) of an LP point; the tails are not included."""
        r = (
            np.clip(np.asarray(x[: self.n_cells], dtype=float), 0.0, None)
            * self.scale[: self.n_cells]
        )
        if self.symmetric:
            q = np.concatenate((r[:0:-1], r))
            pts = np.arange(-self.points[1], self.points[1] + 1)
        else:
            q, pts = r, np.arange(self.points[0], self.points[1] + 1)
        atom = max(float(x[self.atom_col]), 0.0) if self.atom_col is not None else 0.0
        return pts, q, atom

    def tail_masses(self, x: np.ndarray) -> tuple[float, float]:
        vals = [0.0 if c is None else max(float(x[c]) * self.scale[c], 0.0) for c in self.tail_cols]
        if self.symmetric:
            return (vals[0] / 2, vals[0] / 2) if vals else (0.0, 0.0)
        return vals[0], vals[1]

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        """max over events of (G)'s left side minus δ, per shift, at x (with the true e^ε)."""
        pts, q, atom = self.point_masses(x)
        e = self.problem.exp_epsilon if self.kind == "upper" else self.exp_rows
        w_lo, w_hi = self.window
        lo = pts[0]
        ev = np.arange(w_lo, w_hi + 1)
        qe = q[ev - lo]
        out = np.empty(self.n_groups)
        step = max(1, 4_000_000 // max(1, ev.size))
        for c0 in range(0, self.n_groups, step):
            m = self.shifts[c0 : c0 + step]
            j = ev[None, :] - m[:, None] - lo
            qj = np.where((j >= 0) & (j < q.size), q[np.clip(j, 0, q.size - 1)], 0.0)
            out[c0 : c0 + step] = np.maximum(qe[None, :] - e * qj, 0.0).sum(axis=1)
        if self.kind == "lower":
            t_left, t_right = self.tail_masses(x)
            cum = np.concatenate(([0.0], np.cumsum(q)))  # cum[n] = mass of the first n points

            def below(v):
                return cum[np.clip(v - lo, 0, q.size)] + t_left  # q((−∞, v))

            def above(v):
                return cum[-1] - cum[np.clip(v - lo + 1, 0, q.size)] + t_right  # q((v, ∞))

            out += np.maximum(below(w_lo) - e * below(w_lo - self.shifts), 0.0)
            out += np.maximum(above(w_hi) - e * above(w_hi - self.shifts), 0.0)
        return self.shift_weight * out + atom - self.delta_rows

    def noise(self, x: np.ndarray) -> PiecewiseUniform:
        """The released noise of an upper-bound LP point: mass q_i uniform on C_i + oβ, the atom at
        0."""
        pts, q, atom = self.point_masses(x)
        total = q.sum() + atom
        h = self.beta / 2
        shift = round(2 * self.offset)  # oβ in units of h
        edges = (np.append(2 * pts - 1, 2 * pts[-1] + 1) + shift) * h
        p = self.problem
        meta = dict(
            epsilon=p.epsilon,
            delta=p.delta,
            sensitivity=p.sensitivity,
            loss=p.loss.name,
            k=str(self.k),
        )
        noise = PiecewiseUniform(edges, q / total, grid=h, metadata=meta, atom=atom / total)
        return monotone_noise(noise) if p.monotone else noise

    def solve(self, time_limit: float | None = None) -> LPSolution:
        """Solve within ``time_limit`` seconds; a lazy LP adds the violated segments and re-solves
        until none is left, warm unless they are many, and all of them where HiGHS fails on it
        (:mod:`dpdro.grid_rows`). When the time runs out between two of its solves, the status is
        "time_limit" with the duals of the last relaxation solved (iterations: all its solves)."""
        budget, iterations = TimeBudget(time_limit), 0
        while True:
            try:
                sol = super().solve(budget.left(floor=1e-3))
            except SolverError:
                if not self.rows.add_all():
                    raise
                continue
            iterations += sol.iterations
            new = self.rows.violated(sol.x) if sol.status == "optimal" else None
            if new is None or not new.any():
                return replace(sol, iterations=iterations)
            if budget.expired():
                return LPSolution("time_limit", None, sol.row_duals, math.nan, iterations)
            self.rows.add_round(new)

    def set_delta(self, delta: float) -> None:
        """Change δ of the upper bound's rows (the repair step)."""
        super().set_delta(delta / self._unit)

    def dual_bound(self, row_duals: np.ndarray) -> float:
        """The certified Lagrangian bound D of :mod:`dpdro.lp`; for D_R the best of
        (D − e_β(η))/(1 + η) over the allowances (e_β rounded up, the quotient down) and of the
        floor rounding's D + g (:mod:`dpdro._floor_weights`, supports on one side of 0)."""
        bound = super().dual_bound(row_duals)
        floor = [float(np.nextafter(bound + self.floor_gain, -np.inf))] if self.floor else []
        rounded = [_rounding.rounding_bound(bound, *a) for a in self.allowances]
        return max(floor + rounded, default=bound)


def _steps(k) -> Fraction:
    """Grid steps per Δf: a positive integer k or 1/r."""
    f = Fraction(k)
    if f <= 0 or (f.numerator != 1 and f.denominator != 1):
        raise ValueError(f"k must be a positive integer or 1/r for an integer r, got {k!r}")
    return f


# ---------------------------------------------------------------------------- solving
def grid_lower_bound(
    problem: Problem, k, L: int, *, time_limit: float | None = None, guess=None
) -> LowerBound:
    """A certified lower bound on P from the grid Δf/k with window [−L, L] (module docstring).

    Parameters
    ----------
    problem : the instance of P.
    k : grid steps per Δf (an integer, or ``Fraction(1, r)`` for the coarse grid β = r·Δf).
    L : the window [−L, L] of event points.
    time_limit : seconds for the call (``None``: no limit).
    guess : a noise close to the optimal one (anything with a ``cdf``), whose tight rows seed a
        lazy LP (:mod:`dpdro.grid_rows`); only the time depends on it.

    Returns
    -------
    LowerBound: the randomized-rounding bound D_R(k) where it applies
    (:meth:`dpdro.Problem.rounding_excess`), the aggregated cells otherwise; for a monotone problem
    also D_R(k) of the same problem without monotonicity (a lower bound on a smaller optimum), the
    larger of the two (its ``candidates`` record both).

    Raises
    ------
    LowerBoundTimeout (a TimeoutError) when the first LP runs out of ``time_limit``; its ``bound``
    is the certified bound where the solve stopped, when there is one.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 4.1 (D(L, β)) and Proposition 3.
    """
    beta = problem.sensitivity / float(_steps(k))
    attempts = (
        partial(_lower_attempt, prob, coefficients, k, L, guess=guess)
        for prob, coefficients in _lower_candidates(problem, beta)
    )
    return best_lower_bound(attempts, TimeBudget(time_limit))


def _lower_candidates(problem: Problem, beta: float) -> list[tuple[Problem, str]]:
    """(problem, coefficients) of every lower-bound LP worth solving (:func:`grid_lower_bound`)."""
    if not problem.rounding_allowances(beta):
        return [(problem, "infimum")]
    if problem.monotone:
        return [(problem, "infimum"), (problem.without_monotonicity(), "rounding")]
    return [(problem, "rounding")]


def _lower_attempt(
    problem: Problem, coefficients: str, k, L: int, budget: TimeBudget, *, guess=None
) -> LowerBound:
    """The lower-bound LP with window ``L``; when HiGHS fails on it numerically, with the windows
    :data:`_RETRY_WINDOWS` times wider (every window gives a valid bound)."""
    solve = partial(_lower_solve, problem, coefficients, k, budget=budget, guess=guess)
    for factor in _RETRY_WINDOWS[:-1]:
        try:
            return solve(math.ceil(factor * L))
        except SolverError:
            continue
    return solve(math.ceil(_RETRY_WINDOWS[-1] * L))


class LowerBoundTimeout(TimeoutError):
    """A lower-bound LP ran out of its time limit; ``bound`` is the certified bound of the duals
    where its solve stopped (a valid lower bound on P, usually below the LP's optimum; ``None``
    when the solver had no duals)."""

    def __init__(self, message: str, bound: LowerBound | None = None):
        super().__init__(message)
        self.bound = bound


def _lower_solve(
    problem: Problem, coefficients: str, k, L: int, budget: TimeBudget, guess=None
) -> LowerBound:
    lp = GridLP(problem, k, L, "lower", coefficients=coefficients, guess=guess)
    lp.interior_first = interior_first(problem, k, L)
    sol = lp.solve(budget.left(floor=1e-3))

    def certified(lp_value: float, **masses) -> LowerBound:
        # the certified bound of the row duals, whether the LP finished or not
        return LowerBound(
            value=lp.dual_bound(sol.row_duals),
            lp_value=lp_value,
            seconds=budget.elapsed(),
            coefficients=coefficients,
            simplex_iterations=sol.iterations,
            k=k,
            L=L,
            **masses,
        )

    if sol.status == "time_limit":
        bound = None if sol.row_duals is None else certified(math.nan)
        raise LowerBoundTimeout(
            f"the lower-bound LP on the grid k = {k} ran out of the time limit", bound
        )
    if sol.status == "infeasible":  # P is, unless open on a side: then HiGHS failed (retried)
        if problem.support is None or math.inf in map(abs, problem.support):
            raise SolverError(f"HiGHS found the lower-bound LP on the grid k = {k} infeasible")
        raise RelaxationInfeasibleError.of(problem, f"the lower-bound LP on the grid k = {k}")
    pts, q, _ = lp.point_masses(sol.x)
    w_lo, w_hi = lp.window
    tails = float(sum(lp.tail_masses(sol.x)))
    outside = float(q[(pts < w_lo) | (pts > w_hi)].sum()) + tails
    return certified(sol.objective, outside_mass=outside, tail_mass=tails)


class _GridRelease(ReleaseFamily):
    """U(k) as a :class:`dpdro.release.ReleaseFamily` (no anchor without a solve: the window may be
    too narrow for the uniform density)."""

    def __init__(self, lp: GridLP):
        self.lp, self.problem = lp, lp.problem

    def noise(self, x: np.ndarray) -> PiecewiseUniform:
        return self.lp.noise(x)

    def solve(self, budget: TimeBudget) -> np.ndarray:
        return _solve(self.lp, budget).x

    def result(self, noise: PiecewiseUniform) -> dict:
        """The noise and its mass in the outermost Δf of the window (large: the window is too
        small)."""
        lp = self.lp
        w_lo, w_hi = lp.window
        mid = 0.5 * (noise.edges[:-1] + noise.edges[1:]) / lp.beta - lp.offset
        pts = np.round(mid).astype(np.int64)
        # only an edge of the window that cuts the support counts (not the support's own end)
        cut_lo, cut_hi = lp.window_cuts
        boundary = float(
            noise.probs[
                (cut_lo & (pts < w_lo + lp.max_shift)) | (cut_hi & (pts > w_hi - lp.max_shift))
            ].sum()
        )
        return dict(noise=noise, boundary_mass=boundary)


def _solve(lp: GridLP, budget: TimeBudget):
    """Solve an upper-bound LP within the budget: its solution, or TimeoutError /
    InfeasibleError."""
    sol = lp.solve(budget.left(floor=1e-3))
    if sol.status == "time_limit":
        raise TimeoutError(f"the upper-bound LP on the grid k = {lp.k} ran out of the time limit")
    if sol.status == "infeasible":
        k, L, p = lp.k, lp.L, lp.problem
        raise InfeasibleError(
            f"the upper-bound LP on the grid Δf/{k} with window ±{L} cells (±{L / float(k):g}·Δf) "
            f"is infeasible for (ε, δ) = ({p.epsilon:g}, {p.delta:g}): the window is too small"
        )
    return sol


def _first_solution(makers, budget: TimeBudget):
    """Solve the first LP of ``makers`` (callables) that HiGHS solves; a numerical failure of a
    scaled LP falls back to a milder scaling (a larger floor on the profile), then to no scaling."""
    for i, make in enumerate(makers):
        lp = make()
        try:
            return lp, _solve(lp, budget)
        except SolverError:
            if i == len(makers) - 1:
                raise


def grid_upper_bound(
    problem: Problem,
    k: int,
    L: int,
    *,
    atom: bool = True,
    time_limit: float | None = None,
    guess=None,
) -> UpperBound:
    """Solve U(k) with window [−L, L] and release its noise, certified exactly (module docstring).

    For δ < 1e-6 the LP is solved in the scaled formulation with the truncated Laplace mechanism's
    cell masses as magnitude profile, otherwise as stated; if the noise still overshoots δ by more
    than a mixture can repair cheaply (the solver's absolute tolerance against a small δ), it is
    solved again scaled by that solution. The release (certificate, repair, rounding up) is
    :func:`dpdro.release.release`.

    Parameters
    ----------
    problem : the instance of P.
    k : grid steps per Δf (a positive integer: cells no wider than Δf).
    L : the window [−L, L] of cells.
    atom : let the noise put a point mass at 0 (ignored for monotone problems).
    time_limit : seconds for the call (``None``: no limit).
    guess : a noise close to the optimal one whose tight rows seed a lazy LP (as for
        :func:`grid_lower_bound`); a re-solve is seeded with the first solution's noise.

    Returns
    -------
    UpperBound with the released ``noise`` (``certify_delta ≤ δ``), ``k``, ``L`` and
    ``boundary_mass``.

    Raises
    ------
    TimeoutError when a solve runs out of ``time_limit``; InfeasibleError when the window is too
    small for (ε, δ).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 4.1 (P(L, β), a restriction of P) and Proposition 2.
    """
    budget = TimeBudget(time_limit)
    atom = atom and not problem.monotone
    plain = partial(GridLP, problem, k, L, "upper", atom=atom, guess=guess)

    def scaled(profile, floor=1e-6, guess=guess):
        return partial(
            GridLP,
            problem,
            k,
            L,
            "upper",
            atom=atom,
            scale=np.maximum(profile, floor * problem.delta),
            margin=1e-7,
            guess=guess,
        )

    makers = [plain]
    # start from the scaled LP with the truncated Laplace mechanism's cell masses
    if problem.delta < _SMALL_DELTA:
        profile = laplace_profile(problem, k, L)
        makers = [scaled(profile), scaled(profile, 1e-2), plain]
    lp, sol = _first_solution(makers, budget)
    iters = sol.iterations
    if _GridRelease(lp).certify(lp.noise(sol.x))[0] > problem.delta * (1.0 + 1e-6):
        # a tolerance-level overshoot: solve again, scaled by this solution
        pts, q, _ = lp.point_masses(sol.x)
        profile = q[pts >= 0] if lp.symmetric else q  # one magnitude per column
        seed = lp.noise(sol.x)
        try:
            lp, sol = _first_solution(
                [scaled(profile, guess=seed), scaled(profile, 1e-2, seed)], budget
            )
            iters += sol.iterations
        except SolverError:  # keep the first solution: the release mixes it down to δ
            pass
    return release(
        _GridRelease(lp), sol.x, budget, lp_value=sol.objective, k=k, L=L, simplex_iterations=iters
    )

