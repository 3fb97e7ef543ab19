r"""The bounding LPs P′(π, β) and D′(π, β) of the data-dependent problem, grown by Algorithm 1.

See :mod:`dpdro.data_dependent` for the formulation (pieces, shift sets, the valid lower bound).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._rounding import COEFF_SAFETY as _COEFF_SAFETY
from .._rounding import UNIT_ROUNDOFF as _U
from .._validation import check_choice
from ..monotone import monotone_matrix
from ..oracle import SegmentTable, segment_table
from ..partition import Partition
from ..solvers import INF, HighsModel, PrivacyLP
from .problem import Problem

__all__ = ["DDBoundingLP"]


class DDBoundingLP(PrivacyLP):
    """P′(π, β) (``kind="upper"``) or D′(π, β) (``kind="lower"``) as an incrementally grown HiGHS LP.

    Columns: p_l on the decision cells for l = 0 … M−1 (blocks of ``n_c`` columns; the lower bound's
    last column in each block is the mass outside the padding), then auxiliary t-columns. Rows 0 … M−1
    are Σ_j p_l(j) = 1. A *constraint group* r is a triple (l, l′, s): the privacy constraints
    p_l(A) ≤ e^ε p_l′(A − sβ) + δ for all events A, added as whole-shift cuts (budget row plus
    t-columns) or single-event cuts. It has the interface :func:`run_cutting_plane` expects.
    """

    def __init__(self, problem: Problem, partition: Partition, kind: str = "upper", *,
                 grouped: bool = False):
        if not isinstance(problem, Problem):
            raise TypeError(f"problem must be a dpdro.data_dependent.Problem, got {type(problem).__name__}")
        if not isinstance(partition, Partition):
            raise TypeError(f"partition must be a dpdro.Partition, got {type(partition).__name__}")
        check_choice("kind", kind, ("upper", "lower"))
        if kind == "lower" and not partition.is_uniform:
            raise ValueError("D′(π, β) is implemented for uniform noise partitions (cells of width β) only: on wider "
                             "cells the segment constraints of the paper are not a relaxation (see dpdro.lower_bound)")
        self.problem, self.partition, self.kind = problem, partition, kind
        base = problem.base_problem
        self.k = base.shifts(partition.beta)
        self.exp_eps = base.exp_epsilon
        lower = kind == "lower"
        g = problem.grouping(partition.beta)
        self.grouping = g
        kd = self.k
        tl, tm, ts = [], [], []
        if lower and not grouped:
            self.lam = np.arange(g.K + 1)  # one distribution per fine piece
            for s in range(-kd, kd + 1):
                if s == 0:
                    continue
                ks = np.arange(max(0, -s), min(g.K, g.K - s))
                tl.append(ks), tm.append(ks + s), ts.append(np.full(ks.size, s))
        else:
            self.lam = g.lam
            lam = g.lam
            M = lam.size - 1
            strict = 1 if lower else 0  # the lower bound may only use shifts strictly inside the range
            for l in range(M):
                for l2 in range(M):
                    s_lo = max(lam[l2] - lam[l + 1] + strict, -kd)
                    s_hi = min(lam[l2 + 1] - lam[l] - strict, kd)
                    s = np.arange(s_lo, s_hi + 1)
                    if l == l2:
                        s = s[s != 0]
                    tl.append(np.full(s.size, l)), tm.append(np.full(s.size, l2)), ts.append(s)
        tl = np.concatenate(tl).astype(np.int64) if tl else np.zeros(0, np.int64)
        tm = np.concatenate(tm).astype(np.int64) if tm else np.zeros(0, np.int64)
        ts = np.concatenate(ts).astype(np.int64) if ts else np.zeros(0, np.int64)
        self.M = int(self.lam.size - 1)
        if lower:
            self.table = segment_table(base, partition, lower=True)
        else:
            self.table = SegmentTable.build(partition.pi, partition.pi, 0, np.unique(np.concatenate((ts, [0]))))
        pos = np.searchsorted(self.table.shifts, ts)
        if ts.size and not np.array_equal(self.table.shifts[np.minimum(pos, self.table.shifts.size - 1)], ts):
            raise RuntimeError("internal error: a shift of a constraint group is missing from the segment table")
        order = np.lexsort((tm, tl, pos))
        self.t_l, self.t_m, self.t_si = tl[order], tm[order], pos[order]
        self.n_groups = int(self.t_l.size)
        bounds = np.searchsorted(self.t_si, np.arange(self.table.shifts.size + 1))
        self._by_shift = [(si, bounds[si], bounds[si + 1]) for si in range(self.table.shifts.size)
                          if bounds[si + 1] > bounds[si]]
        self.columns = Partition(self.table.column_pi, partition.beta)
        self.n_cells = self.columns.n_cells
        self.n_c = self.n_cells + (1 if lower else 0)
        a, b = self.columns.edges[:-1], self.columns.edges[1:]
        # objective: piece weights times per-cell loss coefficients
        if lower and not grouped:
            wts = problem.weight_infima(g.fine_edges) * np.diff(g.fine_edges)
            piece_of_fine = np.searchsorted(g.lam, np.arange(g.K), side="right") - 1
            loss_of = [problem.piece_loss(int(piece_of_fine[k])) for k in range(g.K)]
        else:
            wts = problem.weight_masses(g.edges)
            loss_of = [problem.piece_loss(l) for l in range(self.M)]
        self.weights = np.asarray(wts, dtype=float)
        costs, cap_rows = [], []
        cache = {}
        for l in range(self.M):
            key = id(loss_of[l])
            if key not in cache:
                loss = loss_of[l]
                c = loss.cell_infimum(a, b) if lower else loss.cell_average(a, b)
                if lower:
                    c = np.append(c, loss.tail_infimum(self.columns.edges[0], self.columns.edges[-1]))
                if not np.all(np.isfinite(c)) or np.any(c < 0):
                    raise ValueError(f"loss {loss.name!r} gave negative or non-finite cell coefficients")
                cl = problem.cap_loss or loss
                if problem.cap is not None:
                    cc = cl.cell_infimum(a, b) if lower else cl.cell_average(a, b)
                    if lower:
                        cc = np.append(cc, cl.tail_infimum(self.columns.edges[0], self.columns.edges[-1]))
                else:
                    cc = None
                cache[key] = (c, cc)
            c, cc = cache[key]
            costs.append(self.weights[l] * c)
            cap_rows.append(cc)
        self.cost = np.concatenate(costs)
        self.n_p = self.cost.size
        self.model = HighsModel(self.cost)
        blocks = sp.kron(sp.identity(self.M, format="csr"), sp.csr_matrix(np.ones((1, self.n_c)))).tocsr()
        self.model.add_rows(blocks, 1.0, 1.0)
        # rows after the M simplex rows: their p-parts (model order), rhs kind, and segment/budget links
        self._trip_r: list[np.ndarray] = []  # p-parts of all rows after the simplex rows, as triplets
        self._trip_c: list[np.ndarray] = []
        self._trip_v: list[np.ndarray] = []
        self._delta_rows: list[int] = []
        self._fixed_rows: list[np.ndarray] = []
        self._fixed_rhs: list[np.ndarray] = []
        self._seg_rows: list[np.ndarray] = []
        self._seg_budget: list[np.ndarray] = []
        if problem.monotone:
            mono = monotone_matrix(self.table.column_pi, lower=lower, n_cols=self.n_c)
            mat = sp.kron(sp.identity(self.M, format="csr"), mono).tocsr()
            self._add_fixed(mat, np.zeros(mat.shape[0]))
        if problem.cap is not None:
            # a small margin absorbs the solver tolerance so released noise meets the cap exactly
            rhs = problem.cap if lower else problem.cap - 1e-8 * max(1.0, problem.cap)
            mat = sp.block_diag([sp.csr_matrix(r[None, :]) for r in cap_rows]).tocsr()
            self._add_fixed(mat, np.full(self.M, rhs))
        self._budget = np.full(self.n_groups, -1, dtype=np.int64)
        self._seg_added: dict[int, np.ndarray] = {}
        self._full = np.zeros(self.n_groups, dtype=bool)
        self._events: set[bytes] = set()
        self._rhs = problem.delta

    def _add_fixed(self, mat, rhs):
        """Rows ``mat @ p ≤ rhs`` whose right-hand side is not δ (monotonicity, caps)."""
        m = sp.csr_matrix(mat)
        if m.shape[0] == 0:
            return
        idx = self.model.add_rows(m, -INF, np.asarray(rhs, dtype=float))
        coo = m.tocoo()
        self._record(idx[coo.row], coo.col, coo.data)
        self._fixed_rows.append(idx)
        self._fixed_rhs.append(np.asarray(rhs, dtype=float))

    # ------------------------------------------------------------------ oracle (Algorithms 3 / G.1)
    def densities(self, x: np.ndarray) -> np.ndarray:
        """q_l(j) = p_l(j)/|Π_j| on the decision cells, shape (M, n_cells)."""
        P = np.asarray(x[: self.n_p], dtype=float).reshape(self.M, self.n_c)[:, : self.n_cells]
        return P / self.table.column_widths[None, :]

    def contributions(self, q: np.ndarray, si: int, rows: np.ndarray) -> np.ndarray:
        """Signed contribution of every segment of shift ``si`` to the constraint groups ``rows`` at the
        densities ``q`` (:meth:`densities`): |segment|·(q_l(j) − e^ε q_l′(j′))."""
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
        return out

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        return self.worst_values(x) - self._rhs

    def has_full_cut(self, r: int) -> bool:
        return bool(self._full[r])

    @property
    def shift_cuts_added(self) -> int:
        return int(np.sum(self._budget >= 0))

    def _segments(self, r: int):
        t = self.table
        si = int(self.t_si[r])
        sl = slice(t.offsets[si], t.offsets[si + 1])
        return si, sl, t.cell[sl], t.shifted[sl], t.length[sl].astype(float)

    def _record(self, rows, cols, vals) -> None:
        """Remember the p-part (model row, p column, value) of new rows for :meth:`dual_bound`."""
        self._trip_r.append(np.asarray(rows, dtype=np.int64))
        self._trip_c.append(np.asarray(cols, dtype=np.int64))
        self._trip_v.append(np.asarray(vals, dtype=float))

    def _ensure_budget(self, r: int) -> int:
        """Budget row Σ_q t_q + Σ_{A_j} |A_j| p_l(j)/|Π_j| ≤ δ of constraint group r (on first use)."""
        if self._budget[r] < 0:
            si, sl, j, m, ln = self._segments(r)
            free = m < 0
            cols = int(self.t_l[r]) * self.n_c + j[free]
            vals = ln[free] / self.table.column_widths[j[free]]
            b = self.model.n_rows
            self.model.h.addRow(-INF, self._rhs, cols.size, cols.astype(np.int32), vals)
            self.model.n_rows += 1
            self._record(np.full(cols.size, b), cols, vals)
            self._delta_rows.append(b)
            self._budget[r] = b
        return int(self._budget[r])

    def add_segments(self, r: int, select: np.ndarray) -> int:
        """t_q ≥ |q|·(p_l(j)/|Π_j| − e^ε p_l′(j′)/|Π_j′|) for the selected segments q of group r."""
        si, sl, j, m, ln = self._segments(r)
        new_budget = int(self._budget[r] < 0)  # a new budget row is a cut too (its free segments)
        b = self._ensure_budget(r)
        added = self._seg_added.setdefault(r, np.zeros(j.size, dtype=bool))
        l, l2 = int(self.t_l[r]), int(self.t_m[r])
        keep = select & (m >= 0) & ~added
        if l == l2:
            keep &= j != m  # a cell mapped onto itself by the same distribution is never positive
        idx = np.nonzero(keep)[0]
        n = idx.size
        if n == 0:
            return new_budget
        jj, mm, ll = j[idx], m[idx], ln[idx]
        w = self.table.column_widths
        h = self.model.h
        first = self.model.n_cols
        h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, INF), n, np.arange(n, dtype=np.int32),
                  np.full(n, b, dtype=np.int32), np.ones(n))
        self.model.n_cols += n
        r0 = self.model.n_rows
        c1, c2 = l * self.n_c + jj, l2 * self.n_c + mm
        v1, v2 = ll / w[jj], -self.exp_eps * ll / w[mm]
        idx_cols = np.column_stack((c1, c2, first + np.arange(n))).ravel().astype(np.int32)
        vals = np.column_stack((v1, v2, np.full(n, -1.0))).ravel()
        h.addRows(n, np.full(n, -INF), np.zeros(n), 3 * n, (3 * np.arange(n)).astype(np.int32), idx_cols, vals)
        self.model.n_rows += n
        seg_rows = np.arange(r0, r0 + n)
        self._record(np.concatenate((seg_rows, seg_rows)), np.concatenate((c1, c2)), np.concatenate((v1, v2)))
        self._seg_rows.append(seg_rows)
        self._seg_budget.append(np.full(n, b))
        added[idx] = True
        return n + new_budget

    def add_shift_cut(self, r: int) -> int:
        self._full[r] = True
        si, sl, j, m, ln = self._segments(r)
        return self.add_segments(r, np.ones(j.size, dtype=bool))

    def add_worst_segments(self, r: int, x: np.ndarray) -> int:
        contrib = self.contributions(self.densities(x), int(self.t_si[r]), np.array([r]))[0]
        return self.add_segments(r, contrib > 0)

    def add_event_cut(self, r: int, x: np.ndarray) -> bool:
        si, sl, j, m, ln = self._segments(r)
        contrib = self.contributions(self.densities(x), si, np.array([r]))[0]
        sel = contrib > 0
        key = np.int64(r).tobytes() + np.packbits(sel).tobytes()
        if key in self._events:
            return False
        self._events.add(key)
        w = self.table.column_widths
        l, l2 = int(self.t_l[r]), int(self.t_m[r])
        coef = np.zeros(self.n_p)
        np.add.at(coef, l * self.n_c + j[sel], ln[sel] / w[j[sel]])
        cov = sel & (m >= 0)
        np.add.at(coef, l2 * self.n_c + m[cov], -self.exp_eps * ln[cov] / w[m[cov]])
        nzc = np.nonzero(coef)[0]
        idx = self.model.n_rows
        self.model.h.addRow(-INF, self._rhs, nzc.size, nzc.astype(np.int32), coef[nzc])
        self.model.n_rows += 1
        self._record(np.full(nzc.size, idx), nzc, coef[nzc])
        self._delta_rows.append(idx)
        return True

    def add_all_shift_cuts(self) -> None:
        for r in range(self.n_groups):
            self.add_shift_cut(r)

    def infeasibility_message(self) -> str:
        p = self.problem
        lo, hi = self.partition.edges[0], self.partition.edges[-1]
        extra = " or the caps/monotonicity constraints are too strict" if (p.cap is not None or p.monotone) else ""
        return (f"P′(π, β) is infeasible: the support [{lo:.6g}, {hi:.6g}) is too small for (ε, δ) = "
                f"({p.epsilon:g}, {p.delta:g}) with Δf = {p.sensitivity:g}{extra}; enlarge the support or refine β.")

    # ------------------------------------------------------------------ certified lower bound
    def dual_bound(self, row_duals: np.ndarray) -> float:
        """Σ_l θ_l − δ Σ ψ − Σ rhs·y at a dual-feasible point built from ``row_duals`` (HiGHS signs).

        As :meth:`dpdro.bounds.BoundingLP.dual_bound`, with one θ_l per distribution: θ_l is the minimum
        reduced cost over the columns of block l. Valid whatever the solver's accuracy."""
        y = np.maximum(-np.asarray(row_duals, dtype=float), 0.0)
        if self._seg_rows:
            seg = np.concatenate(self._seg_rows)
            y[seg] = np.minimum(y[seg], y[np.concatenate(self._seg_budget)])
        n_rows = self.model.n_rows - self.M
        if self._trip_r:
            p_rows = sp.csr_matrix((np.concatenate(self._trip_v), (np.concatenate(self._trip_r) - self.M,
                                                                   np.concatenate(self._trip_c))), shape=(n_rows, self.n_p))
        else:
            p_rows = sp.csr_matrix((n_rows, self.n_p))
        yr = y[self.M:]
        reduced = self.cost + p_rows.T @ yr
        magnitude = np.abs(self.cost) + abs(p_rows).T @ yr
        nnz = np.diff(p_rows.tocsc().indptr) if p_rows.shape[0] else np.zeros(self.n_p, dtype=int)
        safe = (reduced - (nnz + 4) * 1.01 * _U * magnitude).reshape(self.M, self.n_c)
        thetas = safe.min(axis=1)
        theta = float(np.sum(thetas))
        theta_err = (self.M + 2) * _U * float(np.sum(np.abs(thetas)))
        penalty = self._rhs * float(y[np.asarray(self._delta_rows, dtype=int)].sum()) if self._delta_rows else 0.0
        if self._fixed_rows:
            fr, fh = np.concatenate(self._fixed_rows), np.concatenate(self._fixed_rhs)
            penalty += float(np.sum(fh * y[fr]))
        n_pen = len(self._delta_rows) + sum(r.size for r in self._fixed_rows)
        penalty *= 1.0 + (n_pen + 4) * _U
        bound = theta - theta_err - penalty
        bound -= _COEFF_SAFETY * abs(bound) + 4 * _U * (abs(theta) + penalty)
        return float(np.nextafter(bound, -np.inf))

