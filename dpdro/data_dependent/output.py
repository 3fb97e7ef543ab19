r"""The output-space LP: the output family (an upper bound on P′) and the clamped D′_R (a lower
bound), which share their privacy rows.

Output family (a restriction of P′)
    Every mechanism ϕ ↦ M(ϕ) of P′ is ϕ + X with X ~ law(M(ϕ) − ϕ), so P′ may be restricted to
    mechanisms whose *output law* is constant on each piece Λ_l of Φ: for ϕ ∈ Λ_l, release ϕ itself
    with probability a_l and otherwise Y ~ q_l, a piecewise-uniform law on the output cells J_j of
    :mod:`~dpdro.data_dependent.costs` (the two end cells released clamped, as φ_lo and φ_hi). For
    two query values ϕ ≠ ϕ′ in pieces l and l′ the smallest δ is exactly

        δ_{l,l′} = a_l + Σ_j (q_l(j) − e^ε q_l′(j))₊ :

    the point mass at ϕ lies in every worst event (the law of ϕ′ has no mass at ϕ ≠ ϕ′), and on
    each cell both densities are constant, so the worst event takes the cells with q_l(j) > e^ε
    q_l′(j) whole (and clamping, post-processing, only lowers this). It does not depend on where ϕ
    and ϕ′ lie in their pieces, so the privacy constraints are one whole-event constraint per
    ordered pair of pieces containing neighbouring query values (gap between the pieces < Δf,
    l = l′ included): no shifts at all. The loss is computed exactly (:func:`costs.output_costs`).

Grid-point family (a second upper mode, "points", on the same model)
    The same restriction with the laws on the grid points φ_lo + iβ, i = 0 … K, instead of the
    cells (the points 0 and K released as the clamped end cells; :func:`costs.point_columns` maps
    the K + 2 columns to the points so that the mirror symmetry is kept). Its δ_{l,l′} is the same
    sum over the points, so the rows of every mode serve it: only the costs and the bounds
    change. At large ε the optimal laws put most of their mass on a few outputs shared by the
    query values around them; a point there costs the mean distance to those values, a cell of
    width β more. On Figure 3's (5, 0.25) the grid points give 0.1020 at K = 24 and 0.0982 at K =
    32 (0.8 s), where the cells gave 0.1128 and 0.1079 (0.0997 at K = 64); cells and points
    together give nothing more (brute force, K = 24 and 32), and K = 64 gives the K = 32 value
    again. The released mechanism carries the points as its ``grid_masses``.

Clamped D′_R (a relaxation of P′)
    For losses and cap losses that are unimodal (:func:`costs.unimodal`), P′ keeps its value when
    outputs are restricted to [φ_lo, φ_hi] (clamping, :mod:`~dpdro.data_dependent.costs`), and the
    randomized-rounding bound D′_R of :mod:`dpdro.data_dependent` applied to the restricted problem
    has rounded laws r_k on the K + 2 points φ_lo + θ + jβ, j = −1 … K. In these output
    coordinates the shift sβ of D′_R between fine pieces k and k + s disappears (the noise iβ of
    ϕ_k(θ) is the output point j = k + i), so its constraints are

        Σ_j (r_k(j) − e^ε r_k′(j))₊ ≤ δ    for 1 ≤ |k − k′| ≤ Δf/β,

    the rows of the output family on fine pieces with a_l = 0, points read as cells. With the
    objective of :func:`costs.rounding_costs` (minus Σ_k β w̲_k e_β) every dual-feasible point gives
    a valid lower bound (:meth:`dual_bound`). On fine pieces the two LPs differ in their costs
    only: :meth:`use` switches one model between them, and rows found for one serve the other.

Solving
    Algorithm 1 re-solves the model warm by the dual simplex method after each round of cuts. A
    round that adds thousands of rows to a large model needs at least as many simplex iterations
    as the model has rows, so the lower mode re-solves a model of :data:`INTERIOR_ROWS` rows or
    more by the interior-point method without crossover: its duals give the certified bound
    (:meth:`dual_bound`, valid for any duals) and its point the oracle's next cuts. Measured on
    Figure 3's (5, 0.25), the clamped D′_R to convergence: K = 64 in 21 s (warm dual simplex:
    22 s), K = 72 in 48 s (242 s), K = 96 in 405 s, its fifth round's 0.09646 after 119 s (the
    warm dual simplex did not end that round within 320 s); below some 8 000 rows (K ≤ 48) the
    warm dual simplex is as fast. The upper modes keep the dual simplex (their release needs a
    vertex, and the interior point with crossover was slower, 145 s against 83 s for the grid
    points at K = 64); they then start from no basis.

Mirror symmetry
    When the loss, the weight and the pieces are symmetric about the centre of Φ, the reflection
    (piece l, cell j) ↦ (M − 1 − l, K − 1 − j) maps the LP onto itself (up to the rounding of the
    costs, which are symmetrised: the larger of a cost and its mirror image for the upper bound, the
    smaller for the lower bound, so each stays an upper or a lower bound). The LP is then solved
    over mirror-symmetric points only: by convexity the mirror average of an optimal point is
    optimal, so nothing is lost, and the LP has half the columns and groups.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from .._rounding import UNIT_ROUNDOFF as _U
from .._rounding import round_up as _round_up
from ..lp import PrivacyLP
from ..release import RELEASE_MARGIN
from ..solvers import INF
from .costs import (
    convex,
    output_costs,
    output_point_costs,
    point_columns,
    query_atom_costs,
    rounding_costs,
    unimodal,
)
from .problem import Problem

__all__ = ["OutputLP", "output_obstacle", "UPPER_MODES"]

# the two upper bounds of the model: the output family on cells, and on the grid points
UPPER_MODES = ("upper", "points")

# the lower mode's re-solves by the interior-point method without crossover from this many rows on
# (module docstring, "Solving")
INTERIOR_ROWS = 8_000


def output_obstacle(problem: Problem, mode: str = "upper") -> str:
    """Why the output-space LP does not apply to ``problem`` ('' if it does)."""
    if problem.monotone:
        return "monotone problems restrict the noise, not the output"
    losses = problem.all_losses()
    if not all(unimodal(c) for c in losses):
        return "the losses must be non-increasing on (−∞, 0] and non-decreasing on [0, ∞)"
    if problem._weight[0] == "callable":
        return "the output-space LPs need a uniform or piecewise-constant weight"
    if mode == "lower":
        if problem.rounding_excess(1.0) is None:
            return "the losses need a finite grid interpolation excess (randomized rounding)"
        return ""
    if mode == "points" and problem.cap is not None:
        return "the grid-point family takes no caps"
    if problem.cap is not None and not convex(problem.cap_loss or problem.loss or losses[0]):
        return "caps need a convex cap loss (checked at the two ends of each piece)"
    if problem.cap is not None and problem.losses is not None and problem.cap_loss is None:
        if not all(convex(c) for c in problem.losses):
            return "caps need convex losses (checked at the two ends of each piece)"
    return ""


class OutputLP(PrivacyLP):
    """The output-space LP of the module docstring on the grid β, for ``mode`` "upper" (output
    family on the problem's pieces, or the fine pieces) or "lower" (clamped D′_R, fine pieces).

    Columns: for every piece, q(−1) … q(K) and the atom a (``n_c = K + 3``), or one column per
    mirror orbit (``symmetric``). A constraint group is an ordered pair of pieces (l, l′) whose
    segments are the K + 2 points j with linear forms q_l(j) − e^ε q_l′(j) and whose free part is
    a_l. With fine pieces and no caps one model serves both modes (:meth:`use`).
    """

    def __init__(self, problem: Problem, beta: float, mode: str = "lower", *, symmetric=None):
        why = output_obstacle(problem, mode)
        if why:
            raise ValueError(f"the output-space LP does not apply: {why}")
        if mode not in ("lower",) + UPPER_MODES:
            raise ValueError(f"mode must be 'lower', 'upper' or 'points', got {mode!r}")
        self.problem, self.beta = problem, float(beta)
        g = problem.grouping(beta)
        self.K, self.grouping = g.K, g
        self.n = problem.base_problem.shifts(beta)
        self.exp_eps = problem.exp_epsilon
        fine = mode == "lower" or problem.piece_spec is None
        self.lam = np.arange(g.K + 1) if fine else g.lam
        self.M = int(self.lam.size - 1)
        self.n_c = self.K + 3
        # n float steps β short of Δf (β = float(Δf/3) < Δf/3): pieces n apart hold query
        # values closer than Δf, pairs of the upper modes (as in the certificate) but not shifts of
        # the lower mode's D′_R (|s|β ≤ Δf), so the lower mode no longer shares their rows
        self.near = self.n * Fraction(self.beta) < Fraction(problem.sensitivity)
        if problem.cap is not None:
            self.modes = (mode,)
        elif fine and not self.near:
            self.modes = ("lower",) + UPPER_MODES
        else:
            self.modes = UPPER_MODES if mode in UPPER_MODES else (mode,)
        if mode not in self.modes:  # pragma: no cover - guarded above
            raise ValueError(f"mode {mode!r} needs fine pieces")
        self.symmetric = self._symmetric() if symmetric is None else bool(symmetric)
        self._set_orbits()
        # the columns without a grid point in points mode (odd K)
        spare = np.nonzero(point_columns(self.K) < 0)[0]
        self._spare_cols = np.unique(self._orbit[(np.arange(self.M)[:, None] * self.n_c
                                                  + spare).ravel()])
        self._spare_upper = INF  # their bound now
        edges = problem.phi_lo + beta * self.lam
        edges[-1] = problem.phi_hi
        self.weights = problem.weight_masses(edges)  # ω_l, the mass of each piece
        self._full_costs: dict = {}
        self._costs = {mode: self._cost_vector(mode)}  # the other modes' when first used
        self.mode = mode
        super().__init__(self._costs[mode][0], delta=self._delta(mode))
        self._set_groups()
        self._add_fixed_rows(mode)
        self.use(mode)

    # ------------------------------------------------------------------ set-up
    def _symmetric(self) -> bool:
        """Whether the instance is mirror-symmetric (module docstring)."""
        p = self.problem
        if p.losses is not None or not p.loss.symmetric or p.cap is not None:
            return False
        if not np.array_equal(self.lam, self.K - self.lam[::-1]):
            return False
        fine = p.phi_lo + self.beta * np.arange(self.K + 1)
        fine[-1] = p.phi_hi
        m = p.weight_masses(fine)
        inf = p.weight_infima(fine)
        return bool(np.allclose(m, m[::-1], rtol=1e-12, atol=0) and
                    np.allclose(inf, inf[::-1], rtol=1e-12, atol=0))

    def _mirror(self) -> np.ndarray:
        """The mirror image of every full column (an involution)."""
        f = np.arange(self.M * self.n_c)
        piece, j = f // self.n_c, f % self.n_c
        # columns 0 … K+1 are the points −1 … K; the atom (column K+2) stays
        j_mir = np.where(j < self.K + 2, self.K + 1 - j, j)
        return (self.M - 1 - piece) * self.n_c + j_mir

    def _set_orbits(self) -> None:
        """``_expand`` maps the LP's columns to the full ones, ``_orbit`` the other way."""
        n_full = self.M * self.n_c
        if self.symmetric:
            f = np.arange(n_full)
            reps, red = np.unique(np.minimum(f, self._mirror()), return_inverse=True)
            self._expand = sp.csr_matrix((np.ones(n_full), (f, red)), shape=(n_full, reps.size))
        else:
            self._expand = sp.identity(n_full, format="csr")
        self._orbit = self._expand.indices

    def _loss_of_fine(self) -> list:
        piece_of_fine = np.searchsorted(self.grouping.lam, np.arange(self.K), side="right") - 1
        return [self.problem.piece_loss(int(piece_of_fine[k])) for k in range(self.K)]

    def _cost_vector(self, mode: str) -> tuple[np.ndarray, float]:
        """The LP's costs in ``mode`` (on the LP's columns) and the excess Σ_k β w̲_k e_β to
        subtract (lower mode)."""
        p, K, beta = self.problem, self.K, self.beta
        losses = self._loss_of_fine()
        full = np.zeros((self.M, self.n_c))
        excess = 0.0
        if mode in UPPER_MODES:
            if mode == "upper":
                C = output_costs(p, beta, K, losses)
            else:  # the columns' grid points (point_columns), 0 for a column without one
                pc = point_columns(K)
                C = np.where(pc >= 0, output_point_costs(p, beta, K, losses)[:, pc], 0.0)
            atom = query_atom_costs(p, beta, K, losses)
            for piece in range(self.M):
                a, b = self.lam[piece], self.lam[piece + 1]
                full[piece, : K + 2] = C[a:b].sum(axis=0)
                full[piece, K + 2] = atom[a:b].sum()
        else:
            C, wts = rounding_costs(p, beta, K, losses)
            full[:, : K + 2] = C
            e = np.array([c.grid_interpolation_excess(beta) for c in losses])
            excess = float(np.sum(wts * e))
        self._full_costs[mode] = full
        flat = full.ravel()
        if self.symmetric:  # exact symmetry: the larger (upper) or smaller (lower) of the two
            pick = np.maximum if mode in UPPER_MODES else np.minimum
            flat = pick(flat, flat[self._mirror()])
        if not np.all(np.isfinite(flat)) or np.any(flat < 0):
            raise ValueError("the loss gave negative or non-finite output-space coefficients")
        return self._expand.T @ flat, excess

    def full_costs(self, mode: str) -> np.ndarray:
        """The exact (not symmetrised) costs of every piece in ``mode``, shape (M, K + 3)."""
        return self._full_costs[mode]

    def cap_matrix(self) -> np.ndarray:
        """The caps' coefficients at the two ends of every piece (upper mode), shape
        (M, 2, K + 3)."""
        return self._cap_matrix

    def _delta(self, mode: str) -> float:
        delta = self.problem.delta
        return delta * (1.0 - RELEASE_MARGIN) if mode in UPPER_MODES else delta

    def _set_groups(self) -> None:
        """Every ordered pair of pieces with a gap < Δf (one of each mirror pair if symmetric): a
        gap of fewer than n steps, or of n steps when n steps fall short of Δf (``near``)."""
        lam, n = self.lam, self.n
        L1, L2 = np.meshgrid(np.arange(self.M), np.arange(self.M), indexing="ij")
        L1, L2 = L1.ravel(), L2.ravel()
        gap = np.maximum(lam[L2] - lam[L1 + 1], lam[L1] - lam[L2 + 1])
        keep = gap <= n if self.near and "lower" not in self.modes else gap < n
        if self.symmetric:
            keep &= L1 * self.M + L2 <= (self.M - 1 - L1) * self.M + (self.M - 1 - L2)
        self.t_l, self.t_m = L1[keep], L2[keep]
        self.n_groups = int(self.t_l.size)
        self._segments: dict[int, tuple] = {}

    def _add_fixed_rows(self, mode: str) -> None:
        """Σ_j q_l(j) + a_l = 1 per piece (one per orbit), and the caps."""
        n_blocks = (self.M + 1) // 2 if self.symmetric else self.M
        blocks = sp.kron(sp.identity(self.M, format="csr"), sp.csr_matrix(np.ones((1, self.n_c))))
        self.add_simplex_rows((blocks.tocsr()[:n_blocks] @ self._expand).tocsr())
        if self.problem.cap is not None:
            self._add_cap_rows(mode, n_blocks)

    def _add_cap_rows(self, mode: str, n_blocks: int) -> None:
        """Caps: E c_cap(M(ϕ) − ϕ) ≤ cap for every ϕ. Upper: at the two ends of each piece (the
        expectation is convex in ϕ for a convex cap loss), with a margin of 1e-8 for the solver's
        tolerance. Lower: per fine piece on the rounded laws, cap + e_β(c_cap) (module
        docstring of :mod:`dpdro.data_dependent`)."""
        p, K, beta = self.problem, self.K, self.beta
        rows, rhs = [], []
        j = np.arange(-1, K + 1)
        for piece in range(self.M):
            c = p.cap_loss or p.piece_loss(int(np.searchsorted(self.grouping.lam, self.lam[piece],
                                                               side="right") - 1))
            if mode == "lower":
                row = np.append(np.asarray(c((j - piece) * beta), dtype=float), 0.0)
                e = c.grid_interpolation_excess(beta)
                rows.append(row)
                rhs.append(float(np.nextafter(p.cap + _round_up(e), np.inf)))
                continue
            for phi in (self.lam[piece] * beta, self.lam[piece + 1] * beta):
                cells = c.cell_average(j[1:-1] * beta - phi, (j[1:-1] + 1) * beta - phi)
                ends = np.asarray(c(np.array([-phi, K * beta - phi])), dtype=float)
                zero = float(np.asarray(c(np.array([0.0])), dtype=float)[0])
                rows.append(np.concatenate(([ends[0]], cells, [ends[1]], [zero])))
                rhs.append(p.cap - 1e-8 * max(1.0, p.cap))
        per = 1 if mode == "lower" else 2
        self._cap_matrix = np.array(rows).reshape(self.M, per, self.n_c)
        mat = sp.lil_matrix((len(rows), self.M * self.n_c))
        for r, row in enumerate(rows):
            piece = r // per
            mat[r, piece * self.n_c:(piece + 1) * self.n_c] = row
        mat = (mat.tocsr() @ self._expand).tocsr()[: n_blocks * per]
        self.add_fixed_rows(mat, -INF, np.asarray(rhs[: n_blocks * per]))

    # ------------------------------------------------------------------ modes
    def use(self, mode: str) -> None:
        """Switch the model to the costs, δ and bounds of ``mode`` (the query atoms are 0 in lower
        mode; in points mode so is a column without a grid point, :func:`costs.point_columns`);
        the rows stay."""
        if mode not in self.modes:
            raise ValueError(f"this LP has the mode(s) {self.modes}, not {mode!r}")
        if mode not in self._costs:
            self._costs[mode] = self._cost_vector(mode)
        cost, self.excess = self._costs[mode]
        self.mode = mode
        self.set_costs(np.arange(cost.size), cost)
        atoms = np.unique(self._orbit[np.arange(self.M) * self.n_c + self.K + 2])
        self._atom_upper = 1.0 if mode in UPPER_MODES else 0.0
        self.model.set_col_bounds(atoms, 0.0, self._atom_upper)
        self._atom_cols = atoms
        upper = 0.0 if mode == "points" else INF
        if upper != self._spare_upper and self._spare_cols.size:
            self.model.set_col_bounds(self._spare_cols, 0.0, upper)
        self._spare_upper = upper
        self.set_delta(self._delta(mode))
        self.interior_rows = INTERIOR_ROWS if mode == "lower" else None

    def column_upper_bounds(self) -> np.ndarray:
        out = super().column_upper_bounds()
        out[self._atom_cols] = self._atom_upper
        out[self._spare_cols] = np.minimum(out[self._spare_cols], self._spare_upper)
        return out

    def dual_bound(self, row_duals: np.ndarray) -> float:
        """The certified bound of :mod:`dpdro.lp` minus the rounding excess (lower mode)."""
        bound = super().dual_bound(row_duals)
        if self.excess:
            bound = float(np.nextafter(bound - _round_up(self.excess * (1.0 + 4 * self.K * _U)),
                                       -np.inf))
        return bound

    # ------------------------------------------------------------------ solutions and oracle
    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """(q_l(−1) … q_l(K), a_l) for every piece, shape (M, K + 3)."""
        return (self._expand @ np.asarray(x[: self.n_p], dtype=float)).reshape(self.M, self.n_c)

    def worst_values(self, x: np.ndarray) -> np.ndarray:
        """δ_{l,l′} of every group at x (module docstring)."""
        P = self.probabilities(x)
        Q = P[:, : self.K + 2]
        out = np.empty(self.n_groups)
        step = max(1, 4_000_000 // (self.K + 2))
        for a in range(0, self.n_groups, step):
            sl = slice(a, a + step)
            d = Q[self.t_l[sl]] - self.exp_eps * Q[self.t_m[sl]]
            out[sl] = np.maximum(d, 0.0).sum(axis=1)
        return out + np.clip(P[self.t_l, self.K + 2], 0.0, None)

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        return self.worst_values(x) - self._rhs

    def group_segments(self, r: int):
        """Segments q_l(j) − e^ε q_l′(j) of group r = (l, l′) (none for l = l′) and its free part
        a_l."""
        if r not in self._segments:
            piece, other, n = int(self.t_l[r]), int(self.t_m[r]), self.K + 2
            j = np.arange(n)
            if piece == other:
                seg = sp.csr_matrix((0, self._expand.shape[1]))
            else:
                seg = sp.csr_matrix(
                    (np.concatenate((np.ones(n), np.full(n, -self.exp_eps))),
                     (np.concatenate((j, j)),
                      np.concatenate((piece * self.n_c + j, other * self.n_c + j)))),
                    shape=(n, self._expand.shape[0]),
                )
                seg = (seg @ self._expand).tocsr()
            atom = self._orbit[np.array([piece * self.n_c + self.K + 2])]
            self._segments[r] = (seg, atom, np.ones(1))
        return self._segments[r]

    def add_every_group(self) -> None:
        """The whole LP: every segment of every group (budget rows, t-columns and segment rows in
        three model calls)."""
        new = [r for r in range(self.n_groups) if r not in self._budget]
        x = np.ones(self.n_p)  # every segment of a pair (l ≠ l′) has a positive coefficient
        self._all_segments = True
        try:
            self.add_lazy_cuts(new, x)
        finally:
            self._all_segments = False
        self._full.update(new)

    def segment_values(self, r: int, x: np.ndarray) -> np.ndarray:
        seg, _, _ = self.group_segments(r)
        if getattr(self, "_all_segments", False):
            return np.ones(seg.shape[0])
        return seg @ np.asarray(x[: self.n_p], dtype=float)

    def infeasibility_message(self) -> str:
        """Without caps the constant law is feasible; with them, the lower mode is a relaxation of
        P′ (caps relaxed by the rounding excess), so P′ itself has no mechanism within the caps."""
        p = self.problem
        if self.mode == "lower" and p.cap is not None:
            return (
                f"P′ is infeasible: no mechanism keeps every piece's expected loss within cap = "
                f"{p.cap:g} at (ε, δ) = ({p.epsilon:g}, {p.delta:g}), Δf = {p.sensitivity:g} (its "
                f"relaxation D′_R at β = {self.beta:g} is infeasible); raise cap"
            )
        return f"the output-space LP ({self.mode} mode) is infeasible"
