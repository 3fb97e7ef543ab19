r"""The bounding LPs P′(π, β) and D′(π, β) of the data-dependent problem, grown by Algorithm 1.

See :mod:`dpdro.data_dependent` for the formulation (pieces, shift sets, the valid lower bound).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._rounding import UNIT_ROUNDOFF as _U
from .._rounding import round_up as _round_up
from .._validation import check_choice
from ..lp import PrivacyLP
from ..monotone import monotone_matrix
from ..oracle import SegmentTable, segment_table
from ..partition import Partition
from ..release import RELEASE_MARGIN
from ..solvers import INF
from .problem import Problem

__all__ = ["DDBoundingLP"]


def _check_arguments(
    problem, partition, kind: str, coefficients: str, offset: float, atom: bool
) -> None:
    """The argument checks of :class:`DDBoundingLP` (types, and options only one kind of LP
    admits)."""
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem must be a dpdro.data_dependent.Problem, got {type(problem).__name__}"
        )
    if not isinstance(partition, Partition):
        raise TypeError(f"partition must be a dpdro.Partition, got {type(partition).__name__}")
    check_choice("kind", kind, ("upper", "lower"))
    check_choice("coefficients", coefficients, ("infimum", "rounding"))
    if coefficients == "rounding" and kind != "lower":
        raise ValueError("coefficients='rounding' applies to the lower bound (kind='lower') only")
    if kind == "lower" and not partition.is_uniform:
        raise ValueError(
            "D′(π, β) is implemented for uniform noise partitions (cells of width β) only: on "
            "wider "
            "cells the segment constraints of the paper are not a relaxation (see "
            "dpdro.lower_bound)"
        )
    if offset and kind != "upper":
        raise ValueError("offset (a translation of every noise) applies to the upper bound only")
    if atom and (kind != "upper" or problem.monotone):
        raise ValueError(
            "atom=True (a point mass at 0 per piece) applies to the upper bound of a problem "
            "without monotonicity only"
        )
    if coefficients == "rounding" and problem.rounding_excess(partition.beta) is None:
        raise ValueError(
            "coefficients='rounding' needs losses (and a cap loss) with a finite grid "
            "interpolation excess (dpdro.Loss.grid_interpolation_excess)"
        )


class DDBoundingLP(PrivacyLP):
    """P′(π, β) (``kind="upper"``) or D′(π, β) (``kind="lower"``) on the shared LP layer of
    :mod:`dpdro.lp`.

    Columns: p_l on the decision cells for l = 0 … M−1 (blocks of ``n_c`` columns; the lower bound's
    last column in each block is the mass outside the padding), then auxiliary t-columns. Rows 0 …
    M−1 are Σ_j p_l(j) = 1. A *constraint group* r is a triple (l, l′, s): the privacy constraints
    p_l(A) ≤ e^ε p_l′(A − sβ) + δ for all events A, added as whole-shift cuts (budget row plus
    t-columns) or single-event cuts. It has the interface :func:`run_cutting_plane` expects.

    ``coefficients`` (lower bound): ``"infimum"`` (D′, cell infima of c) or ``"rounding"`` (D′_R of
    :mod:`dpdro.data_dependent`: the decision cell [iβ, (i+1)β) is read as the grid point iβ at cost
    c(iβ), no monotonicity rows, caps relaxed by the cap loss's excess, and :meth:`dual_bound`
    subtracts Σ_k w_k·e_β). ``offset`` (upper bound): every noise translated by ``offset`` (the cell
    costs are the averages over the translated cells; the rows do not change).
    """

    def __init__(
        self,
        problem: Problem,
        partition: Partition,
        kind: str = "upper",
        *,
        grouped: bool = False,
        coefficients: str = "infimum",
        offset: float = 0.0,
        symmetric: bool = False,
        atom: bool = False,
    ):
        _check_arguments(problem, partition, kind, coefficients, offset, atom)
        self.problem, self.partition, self.kind = problem, partition, kind
        self.coefficients = coefficients if kind == "lower" else "average"
        self.offset = float(offset)
        self.atom = bool(atom)
        rounding, lower = coefficients == "rounding", kind == "lower"
        base = problem.base_problem
        self.k = base.shifts(partition.beta)
        self.exp_eps = base.exp_epsilon
        self.grouping = problem.grouping(partition.beta)
        tl, tm, ts = self._groups(grouped)
        self.M = int(self.lam.size - 1)
        self.symmetric = bool(symmetric)
        if self.symmetric:
            why = self._symmetry_obstacle(problem, partition, kind, coefficients, grouped)
            if why:
                raise ValueError(f"symmetric=True needs a mirror-symmetric instance: {why}")
            tl, tm, ts = self._one_of_each_mirror_pair(tl, tm, ts)
        self._set_table(tl, tm, ts)
        self.columns = Partition(self.table.column_pi, partition.beta)
        self.n_cells = self.columns.n_cells
        # tail (lower) or atom (upper) column last
        self.n_c = self.n_cells + (1 if lower or self.atom else 0)
        costs, cap_rows, cap_rhs, excess = self._objective(grouped)
        self._set_orbits()
        self.cost = self._expand.T @ np.concatenate(costs)
        # normalisation / cap rows of one of each pair
        n_blocks = (self.M + 1) // 2 if self.symmetric else self.M
        # randomized rounding: the LP's objective exceeds the bound by Σ_k w_k·e_k (subtracted by
        # dual_bound)
        self.excess = float(np.sum(self.weights * np.asarray(excess))) if rounding else 0.0
        super().__init__(
            self.cost, delta=problem.delta if lower else problem.delta * (1.0 - RELEASE_MARGIN)
        )
        blocks = sp.kron(
            sp.identity(self.M, format="csr"), sp.csr_matrix(np.ones((1, self.n_c)))
        ).tocsr()
        self.add_simplex_rows((blocks[:n_blocks] @ self._expand).tocsr())
        # a rounded monotone noise need not be monotone: rows dropped
        if problem.monotone and not rounding:
            mono = monotone_matrix(self.table.column_pi, lower=lower, n_cols=self.n_c)
            mat = sp.kron(sp.identity(self.M, format="csr"), mono).tocsr() @ self._expand
            if mat.shape[0]:
                self.add_fixed_rows(mat, -INF, 0.0)
        if problem.cap is not None:
            self._add_cap_rows(cap_rows, cap_rhs, n_blocks)
        self._segments: dict[int, tuple] = {}

    # ------------------------------------------------------------------ set-up
    def _groups(self, grouped: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The constraint groups (l, l′, s) as three arrays (sets ``lam``, the pieces' fine-piece
        edges)."""
        g, kd, lower = self.grouping, self.k, self.kind == "lower"
        tl, tm, ts = [], [], []
        if lower and not grouped:
            self.lam = np.arange(g.K + 1)  # one distribution per fine piece
            for s in range(-kd, kd + 1):
                if s == 0:
                    continue
                ks = np.arange(max(0, -s), min(g.K, g.K - s))
                tl.append(ks), tm.append(ks + s), ts.append(np.full(ks.size, s))
        else:
            self.lam = lam = g.lam
            # the lower bound may only use shifts strictly inside the range
            strict = 1 if lower else 0
            for piece in range(lam.size - 1):
                for l2 in range(lam.size - 1):
                    s_lo = max(lam[l2] - lam[piece + 1] + strict, -kd)
                    s_hi = min(lam[l2 + 1] - lam[piece] - strict, kd)
                    s = np.arange(s_lo, s_hi + 1)
                    if piece == l2:
                        s = s[s != 0]
                    tl.append(np.full(s.size, piece)), tm.append(np.full(s.size, l2)), ts.append(s)
        return tuple(
            np.concatenate(t).astype(np.int64) if t else np.zeros(0, np.int64) for t in (tl, tm, ts)
        )

    def _one_of_each_mirror_pair(self, tl, tm, ts):
        """One group of each mirror pair (l, l′, s) ~ (M−1−l, M−1−l′, −s): equal shortfalls for a
        symmetric family."""
        M, kd = self.M, self.k
        span = 2 * kd + 3
        key = (tl * M + tm) * span + (ts + kd + 1)
        mirror = ((M - 1 - tl) * M + (M - 1 - tm)) * span + (-ts + kd + 1)
        keep = key <= mirror
        return tl[keep], tm[keep], ts[keep]

    def _set_table(self, tl, tm, ts) -> None:
        """The segment table and the groups ordered by shift (``t_l``, ``t_m``, ``t_si``,
        ``_by_shift``)."""
        partition = self.partition
        if self.kind == "lower":
            self.table = segment_table(self.problem.base_problem, partition, lower=True)
        else:
            self.table = SegmentTable.build(
                partition.pi, partition.pi, 0, np.unique(np.concatenate((ts, [0])))
            )
        pos = np.searchsorted(self.table.shifts, ts)
        if ts.size and not np.array_equal(
            self.table.shifts[np.minimum(pos, self.table.shifts.size - 1)], ts
        ):
            raise RuntimeError(
                "internal error: a shift of a constraint group is missing from the segment table"
            )
        order = np.lexsort((tm, tl, pos))
        self.t_l, self.t_m, self.t_si = tl[order], tm[order], pos[order]
        self.n_groups = int(self.t_l.size)
        bounds = np.searchsorted(self.t_si, np.arange(self.table.shifts.size + 1))
        self._by_shift = [
            (si, bounds[si], bounds[si + 1])
            for si in range(self.table.shifts.size)
            if bounds[si + 1] > bounds[si]
        ]

    def _objective(self, grouped: bool):
        """Piece weights times per-cell loss coefficients (sets ``weights``): the cost blocks, the
        cap rows and their excesses, and each block's rounding excess."""
        problem, g, lower = self.problem, self.grouping, self.kind == "lower"
        if lower and not grouped:
            wts = problem.weight_infima(g.fine_edges) * g.fine_widths
            piece_of_fine = np.searchsorted(g.lam, np.arange(g.K), side="right") - 1
            loss_of = [problem.piece_loss(int(piece_of_fine[k])) for k in range(g.K)]
        else:
            wts = problem.weight_masses(g.edges)
            loss_of = [problem.piece_loss(piece) for piece in range(self.M)]
        self.weights = np.asarray(wts, dtype=float)
        costs, cap_rows, cap_rhs, excess = [], [], [], []
        cache = {}
        for piece in range(self.M):
            key = id(loss_of[piece])
            if key not in cache:
                loss = loss_of[piece]
                c, e = self._coefficients(loss)
                if not np.all(np.isfinite(c)) or np.any(c < 0):
                    raise ValueError(
                        f"loss {loss.name!r} gave negative or non-finite cell coefficients"
                    )
                cc, ce = (
                    self._coefficients(problem.cap_loss or loss)
                    if problem.cap is not None
                    else (None, 0.0)
                )
                cache[key] = (c, e, cc, ce)
            c, e, cc, ce = cache[key]
            costs.append(self.weights[piece] * c)
            excess.append(e)
            cap_rows.append(cc)
            cap_rhs.append(ce)
        return costs, cap_rows, cap_rhs, excess

    def _coefficients(self, loss) -> tuple[np.ndarray, float]:
        """Per-column coefficients of ``loss`` and its grid interpolation excess (0 unless
        rounding)."""
        edges, lower = self.columns.edges, self.kind == "lower"
        a, b = edges[:-1], edges[1:]
        # the grid point iβ of column i (its left edge), then the tail
        if self.coefficients == "rounding":
            c = np.append(np.asarray(loss(a), dtype=float), loss.tail_infimum(edges[0], edges[-1]))
            return c, float(loss.grid_interpolation_excess(self.partition.beta))
        c = (
            loss.cell_infimum(a, b)
            if lower
            else loss.cell_average(a + self.offset, b + self.offset)
        )
        if lower:
            c = np.append(c, loss.tail_infimum(edges[0], edges[-1]))
        elif self.atom:
            c = np.append(c, float(np.asarray(loss(np.array([0.0])), dtype=float)[0]))
        return c, 0.0

    def _set_orbits(self) -> None:
        """Columns: p_l(j) for every piece and cell, or (symmetric) one column per mirror orbit
        (``_expand`` maps the reduced columns to the full ones, ``_orbit`` the other way)."""
        n_full = self.M * self.n_c
        if self.symmetric:
            f = np.arange(n_full)
            j = f % self.n_c
            # cell i ↦ −i; the tail column stays
            j_mir = np.where(j < self.n_cells, self.n_cells - 1 - j, j)
            mir = (self.M - 1 - f // self.n_c) * self.n_c + j_mir
            reps, red = np.unique(np.minimum(f, mir), return_inverse=True)
            self._expand = sp.csr_matrix((np.ones(n_full), (f, red)), shape=(n_full, reps.size))
        else:
            self._expand = sp.identity(n_full, format="csr")
        self._orbit = self._expand.indices  # reduced column of every full column

    def _add_cap_rows(self, cap_rows, cap_rhs, n_blocks: int) -> None:
        """E c_cap(X_l) ≤ cap per piece. A small margin absorbs the solver tolerance so that the
        released noise meets the cap exactly; rounding raises E c_cap by at most the cap loss's
        excess e, so the rounded laws of D′_R meet cap + e."""
        cap = self.problem.cap
        if self.coefficients == "rounding":
            rhs = np.nextafter(np.array([cap + _round_up(e) for e in cap_rhs]), np.inf)
        else:
            rhs = cap if self.kind == "lower" else cap - 1e-8 * max(1.0, cap)
        mat = (
            sp.block_diag([sp.csr_matrix(r[None, :]) for r in cap_rows]).tocsr() @ self._expand
        ).tocsr()
        rhs = np.broadcast_to(rhs, (self.M,))[:n_blocks]
        self.add_fixed_rows(mat[:n_blocks], -INF, rhs)

    def dual_bound(self, row_duals: np.ndarray) -> float:
        """The certified Lagrangian bound of :mod:`dpdro.lp`, minus the rounding excess Σ_k w_k·e_k
        (rounded up) for ``coefficients="rounding"``."""
        bound = super().dual_bound(row_duals)
        if self.excess:
            bound = float(
                np.nextafter(
                    bound - _round_up(self.excess * (1.0 + 4 * self.weights.size * _U)), -np.inf
                )
            )
        return bound

    @staticmethod
    def _symmetry_obstacle(
        problem: Problem,
        partition: Partition,
        kind: str,
        coefficients: str = "rounding",
        grouped: bool = False,
    ) -> str:
        """Why the reflection (piece l, cell or point i) ↦ (M−1−l, −i) is not a symmetry of the LP
        ('' if it is): the centred cells of the upper bound, or the grid points iβ of D′_R (whose
        core −L … L, padding and tail column are symmetric; exact symmetry is required there, since
        restricting the lower bound's LP to mirror-symmetric points is only harmless when the LP is
        invariant)."""
        if kind == "lower" and coefficients != "rounding":
            return "D′'s cells [iβ, (i+1)β) are not symmetric about 0 (only D′_R's grid points are)"
        if not (partition.is_uniform and partition.pi[0] == -(partition.pi[-1] - 1)):
            return "the noise partition must be Partition.uniform(L, β)"
        if problem.losses is not None or not problem.loss.symmetric or problem.monotone:
            return "one symmetric loss, without monotonicity"
        if (
            problem.cap is not None
            and problem.cap_loss is not None
            and not problem.cap_loss.symmetric
        ):
            return "a symmetric cap loss"
        g = problem.grouping(partition.beta)
        if kind == "lower" and not grouped:
            w = problem.weight_infima(g.fine_edges) * g.fine_widths
            if not np.array_equal(w, w[::-1]):
                return "weight infima exactly symmetric about the centre of Φ"
            return ""
        if not np.array_equal(g.lam, g.K - g.lam[::-1]):
            return "pieces symmetric about the centre of Φ"
        w = problem.weight_masses(g.edges)
        if kind == "lower" and not np.array_equal(w, w[::-1]):
            return "piece weights exactly symmetric about the centre of Φ"
        if not np.allclose(w, w[::-1], rtol=1e-12, atol=0.0):
            return "a weight symmetric about the centre of Φ"
        return ""

    def add_all_shift_cuts(self) -> None:
        """Every privacy constraint at once: the complete P′(π, β) or D′(π, β) (the whole-shift cut
        of every group, added in three model calls instead of one per group)."""
        self.add_full_cuts(range(self.n_groups))

    def add_full_cuts(self, groups) -> None:
        """The whole-shift cuts of the constraint groups ``groups`` (indices), in three model
        calls."""
        groups = [int(r) for r in groups]
        self._add_group_cuts(
            groups, lambda r: np.ones(self.group_segments(r)[0].shape[0], dtype=bool)
        )
        self._full.update(groups)

    def group_keys(self) -> np.ndarray:
        """The triple (l, l′, s) of every constraint group (shift s in grid steps β), shape
        (n_groups, 3)."""
        return np.column_stack((self.t_l, self.t_m, self.table.shifts[self.t_si]))

    def groups_of(self, keys: np.ndarray) -> np.ndarray:
        """The indices of the constraint groups among the triples ``keys`` (those that are groups of
        this LP; the others are ignored)."""
        own = {tuple(k): r for r, k in enumerate(self.group_keys().tolist())}
        return np.array(sorted({own[k] for k in map(tuple, np.asarray(keys).tolist()) if k in own}),
                        dtype=np.int64)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """p_l(j) for every piece and decision cell (expanded from the mirror orbits), shape (M,
        n_c)."""
        return (self._expand @ np.asarray(x[: self.n_p], dtype=float)).reshape(self.M, self.n_c)

    # ------------------------------------------------------------------ oracle (Algorithms 3 / G.1)
    def densities(self, x: np.ndarray) -> np.ndarray:
        """q_l(j) = p_l(j)/|Π_j| on the decision cells, shape (M, n_cells)."""
        P = self.probabilities(x)[:, : self.n_cells]
        return P / self.table.column_widths[None, :]

    def contributions(self, q: np.ndarray, si: int, rows: np.ndarray) -> np.ndarray:
        """Signed contribution of every segment of shift ``si`` to the constraint groups ``rows``
        at the densities ``q`` (:meth:`densities`): |segment|·(q_l(j) − e^ε q_l′(j′))."""
        t = self.table
        sl = slice(t.offsets[si], t.offsets[si + 1])
        j, m, ln = t.cell[sl], t.shifted[sl], t.length[sl].astype(float)
        qm = np.where(m[None, :] >= 0, q[self.t_m[rows]][:, np.maximum(m, 0)], 0.0)
        return ln[None, :] * (q[self.t_l[rows]][:, j] - self.exp_eps * qm)

    def worst_values(self, x: np.ndarray) -> np.ndarray:
        """max_A of the privacy shortfall plus δ for every constraint group (Algorithm 3 / G.1)."""
        q = self.densities(x)
        out = np.zeros(self.n_groups)
        for si, a, b in self._by_shift:
            n_seg = self.table.offsets[si + 1] - self.table.offsets[si]
            step = max(1, 2_000_000 // max(1, n_seg))
            for c in range(a, b, step):
                rows = np.arange(c, min(b, c + step))
                out[rows] = np.maximum(self.contributions(q, si, rows), 0.0).sum(axis=1)
        if self.atom:
            out += np.clip(self.probabilities(x)[self.t_l, self.n_cells], 0.0, None)
        return out

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        return self.worst_values(x) - self._rhs

    def group_segments(self, r: int):
        """Segments of group r = (l, l′, s): |q|·(p_l(j)/|Π_j| − e^ε p_l′(j′)/|Π_j′|) for the
        segments A_jj′ of shift sβ (a cell mapped onto itself by the same distribution is never
        positive and left out) and the free segments A_j of p_l."""
        if r not in self._segments:
            t = self.table
            si = int(self.t_si[r])
            sl = slice(t.offsets[si], t.offsets[si + 1])
            j, m, ln = t.cell[sl], t.shifted[sl], t.length[sl].astype(float)
            w = t.column_widths
            piece, l2 = int(self.t_l[r]), int(self.t_m[r])
            free = m < 0
            pair = ~free & ((j != m) if piece == l2 else True)
            jj, mm, ll = j[pair], m[pair], ln[pair]
            n = jj.size
            rows = np.arange(n)
            seg = sp.csr_matrix(
                (
                    np.concatenate((ll / w[jj], -self.exp_eps * ll / w[mm])),
                    (
                        np.concatenate((rows, rows)),
                        np.concatenate((piece * self.n_c + jj, l2 * self.n_c + mm)),
                    ),
                ),
                shape=(n, self._expand.shape[0]),
            )
            if self.symmetric:
                seg = (seg @ self._expand).tocsr()
            free_cols, free_vals = piece * self.n_c + j[free], ln[free] / w[j[free]]
            # the atom of p_l at 0 is in every worst event: for φ ≠ 0 nothing of p_l′ covers it
            if self.atom:
                free_cols = np.append(free_cols, piece * self.n_c + self.n_cells)
                free_vals = np.append(free_vals, 1.0)
            self._segments[r] = (seg, self._orbit[free_cols], free_vals)
        return self._segments[r]

    def infeasibility_message(self) -> str:
        p = self.problem
        lo, hi = self.partition.edges[0], self.partition.edges[-1]
        extra = (
            " or the caps/monotonicity constraints are too strict"
            if (p.cap is not None or p.monotone)
            else ""
        )
        return (
            f"P′(π, β) is infeasible: the support [{lo:.6g}, {hi:.6g}) is too small for (ε, δ) = "
            f"({p.epsilon:g}, {p.delta:g}) with Δf = {p.sensitivity:g}{extra}; enlarge the support "
            "(more noise cells at the same β)."
        )
