r"""The privacy rows (G) of the grid LPs of :mod:`dpdro.grid`, all at once or generated lazily.

Rows
    For a shift m, (G) is the whole-shift cut of :mod:`dpdro.lp`: a *budget row*
    Σ_i t_{m,i} + f_m(q) + a ≤ δ (f_m: the event points whose shifted point carries no variable;
    for the lower bound also the two tail blocks, each through a t column of its own), and per
    event point i of the window a *segment row* q_i − e^ε q_{i−m} − t_{m,i} ≤ 0 with its column
    t_{m,i} ≥ 0. There are about k·(2L + 1) segment rows: at the grids large ε needs (k = 100–160
    steps per Δf, L ≈ k) tens of thousands, and the dual simplex method's time grows with them
    like rows^1.5–1.8.

Shift subsets (lower bound on a support on one side of 0)
    Every subset of the shifts gives a relaxation, so a lower-bound LP may keep only some of them.
    Where the LP admits the floor of the noise (``GridLP.floor``, :mod:`dpdro._floor_weights`), its
    gap is first order in β and only fine grids close it; from :data:`SUBSET_FROM` steps per Δf
    these LPs keep the shifts of :func:`lower_shifts`: the multiples of n ≈ √(k/3) steps, which
    bound the masses as on the grid nβ, and the n − 1 largest shifts, Δf − β, …, which tie every
    point to those about Δf away. Measured (the LP's seconds, all shifts → the subset; the
    certified bound):
    - ℓ1 on [0, ∞), ε = 3.68, δ = 9.7e-6, window 6Δf: k = 36 (n = 2, seeded by U(18)),
      0.68 → 0.32 s; k = 72 (n = 4), 11.4 → 3.0 s; both bounds equal to 7 digits. k = 144 with the
      subset (n = 6): 18 s, 0.103% from U(18).
    - ℓ1 on (−∞, 0], ε = 1.97, δ = 1.5e-6: k = 32, 4.96 → 1.03 s, equal bounds; k = 64,
      124 → 12.5 s.
    - ℓ2 on (−∞, 0], ε = 1.92, δ = 2.6e-4, k = 32: 1.66 → 0.32 s, equal to 6 digits.
    - Below k = 24 the LPs are fast anyway, and the subset loses more (ℓ1 on [0, ∞) at ε = 3.68,
      k = 16, n = 2: 0.07%).
    - Shifts shorter than the optimal noise's central plateau matter: at large ε, where it is a few
      grid steps wide, ⌊√(k/3)⌋ alone had taken the asymmetric loss on [0, ∞) at ε = 8.72,
      δ = 0.058 from 0.34% to 1.21% in 20 s (n = 8 at k = 238, a plateau of 6 steps; with n ≤ half
      of them, 0.42%), at ε = 6.36 from 0.39% to 0.51%; with n at most a quarter of them, both
      are back at 0.34% and 0.39%.
    - Large δ: the asymmetric loss on [0, ∞) at ε = 2.9, k = 48 loses 5e-6 at δ = 0.02, nothing at
      0.05 (at ε = 1.5: 5e-5), but 0.09% at 0.1, 0.37% at 0.2 and 1.4% at 0.45 (at ε = 2.89,
      δ = 0.54, 20 s: 0.84% → 1.75%); hence only δ ≤ 0.05.
    Elsewhere the gap is second order, and the subset can cost more than the grid it saves: the
    pinball loss τ = 0.896 at ε = 7.08 (window of 4 plateau reaches, k = 111) falls from 0.124% to
    3.6% below the shifted staircase (ℓ1 at ε = 4 and ℓ2 at ε = 5 lose 0.003%, 7 times faster).
    The upper bound keeps every shift: its noise must be private for all of them.

Lazy rows
    Budget rows and tail blocks are always in the LP; a segment row (with its t column) only once
    it is needed. The LP with any subset of the segment rows is a relaxation of the LP with all of
    them (a missing row lets t_{m,i} = 0 whatever q does), so its certified dual bound
    (:meth:`dpdro.lp.PrivacyLP.dual_bound`, valid for any duals) is a lower bound on P. After each
    solve the missing segments with q_i − e^ε q_{i−m} > 0 at the solution are added and the LP is
    re-solved, warm (added rows keep the dual simplex method's basis dual feasible) unless the
    round added more than a fraction :data:`RESTART` of the rows (then from scratch: measured at
    pinball τ = 0.435, ε = 5.57, δ = 0.022, k = 75, 2,800 rows added to 6,600 took 9,200 warm
    iterations, 5.2 CPU-s, where the whole LP of 24,750 rows takes 3,200); once none is
    left, the solution with t_{m,i} = 0 on the missing rows is feasible for every row, so the
    relaxation's optimum is the full LP's: the same bound, and for the upper bound a solution
    private for every shift (its noise is certified exactly all the same, :mod:`dpdro.release`).
    A segment counts as violated when its term in the budget row exceeds
    :data:`VIOLATION` (relative to δ; below, a whole window of them stays under HiGHS's own
    feasibility tolerance 1e-9).

Failures
    On a relaxation HiGHS fails on (numerically: a status such as "Unknown" or "Solve error"), the
    LP gets every missing segment and is solved again from scratch (:meth:`SegmentRows.add_all`):
    the full LP is better conditioned than relaxations whose mass drifts to points without rows
    (measured: ℓ2 on [0, ∞), ε = 1.38, δ = 3.8e-12, lower bound at k = 8 seeded by the shifted
    Tulap noise: "Solve error" after 5.4 s, then with all its 4,940 rows solved in 3.9 s; the
    next wider windows had failed as well). Only then are wider windows tried.

Seeds
    The first relaxation holds the segments that a guess of the optimal noise makes tight or
    violated: those with q_i ≥ f·e^ε q_{i−m} for its masses on the grid, f = e^{−ε/2} between
    1 − :data:`SEED_SLACK` and :data:`SEED_FLOOR` (:func:`seed_factor`)
    (:func:`guess_masses`; for :func:`dpdro.optimal_noise` the best noise released so far, the
    staircase at large ε). Without a guess the first relaxation has no segment rows, and the
    first solves add a few each. Grid LPs with fewer than :data:`LAZY_FROM` segments hold all of
    them from the start (measured: below, the two ways take about the same time).

    At large ε the guess comes from a coarser grid (or a staircase) whose steps, a factor e^ε,
    fall inside cells of the finer grid; those cells' masses lie between the steps', and a slack
    of 30% left out rows that the first solve then violated: adding a few hundred of them warm cost
    as many simplex iterations as the first solve, adding more than :data:`RESTART` restarted it
    (pinball τ = 0.435, ε = 5.57, k = 120: 14,500 + 8,900 iterations). The factor f = e^{−ε/2}
    (:func:`seed_factor`, down to a tenth) seeds them, with 3% more rows. Measured (CPU seconds,
    f = 0.7 → f(ε), same optimum, one run at load 3–5): that pinball lower bound at k = 120
    27.2 → 7.8 (k = 119: 9.1 → 7.9), its upper bound at k = 68 7.3 → 4.2; pinball τ = 0.896 at
    ε = 7.08, lower bound at k = 130: 10.0 → 7.9; ℓ1 at ε = 4, k = 109: 2.9 → 2.2 (at f = 0.1,
    not f(4) = 0.135); ℓ2 at ε = 5,
    δ = 0.5, k = 159: 25.2 → 20.8; ℓ2 at ε = 7.31, k = 116: 1.8 → 2.1 (the one slower).

    Measured (lower-bound LPs, CPU seconds, all rows → lazy rows seeded by the staircase, same
    optimum): ℓ1 at ε = 4, δ = 0.31, k = 109: 27,300 → 9,200 rows, 8.0 → 3.5 s; ℓ2 at ε = 7.31,
    δ = 6.2e-5, k = 116: 30,000 → 8,900 rows, 6.2 → 2.9 s; ℓ2 at ε = 5, δ = 0.005, k = 76:
    22,400 → 7,400 rows, 8.3 → 2.9 s; pinball τ = 0.435 at ε = 5.57, k = 75: 24,750 → 7,500
    rows, 3.2 → 1.0 s. The simplex iterations stay about the same; each costs less.

Interior-point start (lower bound, a loss of constant slope on a support on one side of 0)
    There the dual simplex method takes about three iterations a row (elsewhere about one), and from
    :data:`INTERIOR_CELLS` cells k·L and up to δ = :data:`INTERIOR_DELTA` the first solve is by the
    interior-point method with crossover (:func:`interior_first`; a vertex, whose basis the lazy
    rows' re-solves start from). Measured: ℓ1 on [0, ∞), ε = 3.68, δ = 9.7e-6: k = 102 in 3.3 s
    instead of 7.6 s, k = 124 in 6.0 s, and the call's 20 s reached 0.096% instead of 0.116%. Over
    the benchmark's grid of one-sided ℓ1 (ε 0.5–8), of the 13 points with δ in [1e-9, 1e-3] that
    missed 0.1% after 20 s in either run, 6 ended with smaller gaps (ε = 3, δ = 1e-6: 0.104% →
    0.086%; ε = 8, δ = 1e-6: 0.39% → 0.27%), 3 with larger ones and 4 the same; but 11 of the 13
    with δ ≥ 0.1 ended with larger ones (ε = 2, δ = 0.5: 0.57% → 0.66%), hence the bound on δ (one
    run each: a point's gap varies by up to a third from run to run, at ε = 2, δ = 0.5 from 0.53% to
    0.84% with the dual simplex alone). Slower elsewhere: ℓ1 on ℝ at ε = 4, δ = 0.31, k = 84: 3.0 s
    instead of 1.5 s; ℓ2 at ε = 5, δ = 0.75, k = 159: out of 18 s instead of 10.9 s. Cut short by
    its time limit, the interior-point method leaves a weaker bound than the dual simplex method's
    (:mod:`dpdro.grid`, "Interrupted solves"; ε = 3.68, k = 102: 1.28 after 0.5 s and 1.48 after
    1.5 s against the optimum's 3.73).

    A round of lazy rows that restarts the LP from scratch (:data:`RESTART`) starts it by the
    interior-point method again up to δ = :data:`INTERIOR_RESTART_DELTA` (:func:`interior_restart`):
    at tiny δ the dual simplex method crawls from scratch. Measured (ℓ1 on [0, ∞), Δf = 1, 20 s
    calls, gap at the end, dual simplex → interior-point restart): ε = 4, δ = 1e-6: the restart at
    k = 126 (11,375 → 13,559 rows) took 26,900 iterations and ran out of 13.4 s, against 6.7 s,
    0.180% → 0.091%; ε = 6, δ = 1e-6: 0.26% → 0.20%; over the benchmark's grid of one-sided ℓ1,
    12 of 42 points at 0.1% instead of 11, the others within run-to-run variation (ε = 6,
    δ = 1e-9: 0.30% → 0.32%). At δ = 1e-3 the dual simplex method restarts faster (ε = 6, k = 105:
    1.8 s) and the interior-point method had made ε = 6 worse (0.24% → 0.31%, twice).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._schedule import _convergence_order
from .solvers import INF

__all__ = [
    "INTERIOR_CELLS",
    "INTERIOR_DELTA",
    "INTERIOR_RESTART_DELTA",
    "LAZY_FROM",
    "RESTART",
    "SEED_FLOOR",
    "SEED_SLACK",
    "SUBSET_DELTA",
    "SUBSET_FROM",
    "VIOLATION",
    "SegmentRows",
    "guess_masses",
    "interior_first",
    "interior_restart",
    "lower_shifts",
    "seed_factor",
]

#: grid LPs with at least this many segments generate them lazily (module docstring)
LAZY_FROM = 2000
#: a missing segment is added when its term in the budget row (relative to δ) exceeds this
VIOLATION = 1e-12
#: seeds: the segments within this relative slack of being tight at the guess (small ε) ...
SEED_SLACK = 0.3
#: ... and within this factor of it at large ε (:func:`seed_factor`)
SEED_FLOOR = 0.1
#: a round that adds more than this fraction of the segment rows in the LP re-solves from scratch
RESTART = 0.1
#: floor LPs (lower bound) with at least this many steps per Δf and δ at most this keep a subset
#: of the shifts
SUBSET_FROM, SUBSET_DELTA = 24, 0.05
#: lower-bound LPs of a loss of constant slope on one side of 0 with at least this many cells k·L
#: and δ at most this start by the interior-point method (module docstring)
INTERIOR_CELLS, INTERIOR_DELTA = 10_000, 0.01
#: ... and up to this δ restart by it (:func:`interior_restart`)
INTERIOR_RESTART_DELTA = 1e-5


def interior_first(problem, k, L: int) -> bool:
    """Whether the lower-bound LP of ``problem`` on the grid Δf/k with window ``L`` starts by the
    interior-point method (module docstring, "Interior-point start")."""
    return (
        _convergence_order(problem) == 1
        and problem.delta <= INTERIOR_DELTA
        and float(k) * L >= INTERIOR_CELLS
    )


def interior_restart(lp) -> bool:
    """Whether a lazy LP that restarts from scratch (a round added more than :data:`RESTART` of its
    rows) solves again by the interior-point method where its first solve was by it
    (:meth:`dpdro.lp.PrivacyLP.restart`): for δ ≤ :data:`INTERIOR_RESTART_DELTA` (module
    docstring, "Interior-point start")."""
    return lp.problem.delta <= INTERIOR_RESTART_DELTA


def lower_shifts(k: int, epsilon: float, delta: float) -> np.ndarray:
    """The positive shifts (in grid steps, k per Δf) whose rows (G) a lower-bound LP with the floor
    rounding keeps: the multiples of n and the n − 1 largest, n = ⌊√(k/3)⌋ but at most a quarter
    of the steps of the staircase's central plateau at ε, 2k/(1 + e^{ε/2}) (module docstring,
    "Shift subsets"); all of 1, …, k below :data:`SUBSET_FROM` steps, above δ =
    :data:`SUBSET_DELTA`, or where n = 1."""
    shifts = np.arange(1, k + 1)
    if k < SUBSET_FROM or delta > SUBSET_DELTA:
        return shifts
    n = min(math.isqrt(k // 3), int(k / (2.0 + 2.0 * math.exp(min(epsilon, 700.0) / 2))))
    return shifts if n <= 1 else shifts[(shifts % n == 0) | (shifts > k - n)]


class SegmentRows:
    """The rows (G) of a :class:`dpdro.grid.GridLP`: its budget and tail-block rows at once, its
    segment rows when :meth:`add` selects them (module docstring).

    Parameters
    ----------
    lp : the grid LP (its columns, window, shifts, scaling and row coefficients set).
    """

    def __init__(self, lp):
        self.lp = lp
        self._segments()
        self.added = np.zeros(self.ci.size, dtype=bool)
        relax = lp._relax or (lambda v: v)
        self._relax = relax
        # budget rows: free terms (q_j = 0 beyond the range) and the atom, divided by the unit
        w = self.weight = lp.shift_weight / lp._unit
        free = sp.csr_matrix(
            (relax(lp.scale[self.f_c] * w), (self.f_g, self.f_c)), shape=(lp.n_groups, lp.n_p)
        )
        self.budgets = lp.add_delta_rows(free)
        self._add_tail_rows()

    def _segments(self) -> None:
        """(group, column of q_i, column of q_{i−m}) of every segment; (group, column) of the free
        terms."""
        lp = self.lp
        (w_lo, w_hi), (v_lo, v_hi) = lp.window, lp.points
        ev = np.arange(w_lo, w_hi + 1)
        g_of, ci, cj, f_g, f_c = [], [], [], [], []
        for g, m in enumerate(lp.shifts):
            j = ev - m
            inside = (j >= v_lo) & (j <= v_hi) if not lp.symmetric else np.abs(j) <= v_hi
            a, b = lp.col(ev[inside]), lp.col(j[inside])
            keep = a != b  # a point against itself: (1 − e^ε) q < 0, never positive
            g_of.append(np.full(keep.sum(), g)), ci.append(a[keep]), cj.append(b[keep])
            f_g.append(np.full((~inside).sum(), g)), f_c.append(lp.col(ev[~inside]))
        self.g_of, self.ci, self.cj, self.f_g, self.f_c = (
            np.concatenate(x).astype(np.int64) for x in (g_of, ci, cj, f_g, f_c)
        )

    @property
    def count(self) -> int:
        """Segment rows in the LP."""
        return int(self.added.sum())

    def add(self, select: np.ndarray) -> int:
        """Add the selected segments not in the LP yet (rows divided by s_i for the scaled
        formulation: r_i − e^ε (s_j/s_i) r_j − τ ≤ 0, τ's weight s_i/unit in the budget). Returns
        how many were added."""
        lp, s = self.lp, self.lp.scale
        idx = np.nonzero(np.asarray(select, dtype=bool) & ~self.added)[0]
        n = idx.size
        if n == 0:
            return 0
        ci, cj = self.ci[idx], self.cj[idx]
        t = lp.add_t_cols(
            n, budget=self.budgets[self.g_of[idx]], weights=self._relax(s[ci] * self.weight)
        )
        rows = np.arange(n)
        coef = np.concatenate((np.ones(n), -lp.exp_rows * s[cj] / s[ci], -np.ones(n)))
        seg = sp.csr_matrix(
            (self._relax(coef), (np.concatenate((rows, rows, rows)), np.concatenate((ci, cj, t)))),
            shape=(n, lp.model.n_cols),
        )
        lp.add_fixed_rows(seg, -INF, 0.0)
        self.added[idx] = True
        return n

    def add_round(self, select: np.ndarray) -> None:
        """Add a round's violated segments (:meth:`add`); when they are more than :data:`RESTART`
        of those in the LP, the next solve starts from scratch, by the interior-point method again
        where :func:`interior_restart` says so (module docstring)."""
        if self.add(select) > RESTART * self.count:
            self.lp.restart(interior=interior_restart(self.lp))

    def add_all(self) -> int:
        """Add every segment not in the LP yet, its basis cleared (the fallback of a relaxation
        HiGHS fails on, module docstring); returns how many were added."""
        n = self.add(~self.added)
        if n:
            self.lp.restart()
        return n

    def terms(self, p: np.ndarray) -> np.ndarray:
        """(p_i − e^ε p_{i−m})/unit of every segment for the (unscaled) column masses p: its term in
        the budget row when positive."""
        return self.weight * (p[self.ci] - self.lp.exp_rows * p[self.cj])

    def violated(self, x: np.ndarray) -> np.ndarray:
        """The segments missing from the LP whose term at the LP point x exceeds
        :data:`VIOLATION`."""
        p = np.clip(np.asarray(x[: self.lp.n_p], dtype=float), 0.0, None) * self.lp.scale
        return ~self.added & (self.terms(p) > VIOLATION)

    def seeds(self, p: np.ndarray) -> np.ndarray:
        """The segments that the column masses ``p`` of a guess make tight or violated, within
        :func:`seed_factor` (module docstring)."""
        e = self.lp.exp_rows
        return p[self.ci] >= seed_factor(e) * e * p[self.cj]

    def _add_tail_rows(self) -> None:
        """The lower bound's tail blocks, one t column each in its shift's budget row."""
        lp = self.lp
        groups, forms = self._tail_rows()
        if not groups.size:
            return
        t = lp.add_t_cols(
            groups.size,
            budget=self.budgets[groups],
            weights=self._relax(np.full(groups.size, self.weight)),
        )
        n, n_cols = groups.size, lp.model.n_cols
        rows = (sp.hstack([forms, sp.csr_matrix((n, n_cols - lp.n_p))]).tocsr()
                + sp.csr_matrix((np.full(n, -1.0), (np.arange(n), t)), shape=(n, n_cols))).tocsr()
        rows.data = self._relax(rows.data)
        lp.add_fixed_rows(rows, -INF, 0.0)

    def _tail_rows(self) -> tuple[np.ndarray, sp.csr_matrix]:
        """Lower bound: q((−∞, w_lo)) − e^ε q((−∞, w_lo − m)) and q((w_hi, ∞)) − e^ε q((w_hi − m,
        ∞)) per shift m, as linear forms in the columns (:mod:`dpdro.grid`), those with a positive
        coefficient: (their shifts' groups, the forms), shift by shift, the left block first."""
        lp = self.lp
        if lp.kind != "lower" or not (
            lp.points[0] < lp.window[0] or lp.points[1] > lp.window[1] or any(lp.tails)
        ):
            return np.zeros(0, dtype=np.int64), sp.csr_matrix((0, lp.n_p))
        e, (w_lo, w_hi), (v_lo, v_hi) = lp.exp_rows, lp.window, lp.points
        pts = np.arange(-v_hi, v_hi + 1) if lp.symmetric else np.arange(v_lo, v_hi + 1)
        m = np.asarray(lp.shifts)[:, None]
        reach = int(np.abs(m).max())
        pts = pts[(pts < w_lo + reach) | (pts > w_hi - reach)]  # (the others' coefficients are 0)
        # (shift, side, point): the left block, then the right one
        coef = np.stack(
            (
                (pts < w_lo).astype(float) - e * (pts < w_lo - m),
                (pts > w_hi).astype(float) - e * (pts > w_hi - m),
            ),
            axis=1,
        ).reshape(2 * m.size, pts.size)
        # points onto columns (a symmetric LP's i and −i share one)
        to_cols = sp.csr_matrix(
            (np.ones(pts.size), (np.arange(pts.size), lp.col(pts))), shape=(pts.size, lp.n_p)
        )
        # the mass beyond the variables lies in both sets (weight 1 − e^ε)
        rows, cols = [], []
        for first, side in ((0, -1), (1, 1)):
            tail = self._tail_col(side)
            if tail is not None:
                rows.append(np.arange(first, 2 * m.size, 2))
                cols.append(np.full(m.size, tail))
        none = [np.zeros(0, dtype=np.int64)]
        rows, cols = np.concatenate(rows + none), np.concatenate(cols + none)
        beyond = sp.csr_matrix(
            (np.full(rows.size, (1.0 - e) * (0.5 if lp.symmetric else 1.0)), (rows, cols)),
            shape=(2 * m.size, lp.n_p),
        )
        forms = sp.csr_matrix(coef) @ to_cols + beyond
        keep = np.flatnonzero(forms.max(axis=1).toarray().ravel() > 0)
        return np.repeat(np.arange(m.size), 2)[keep], forms[keep]

    def _tail_col(self, side: int):
        tail_cols = self.lp.tail_cols
        if not tail_cols:
            return None
        return tail_cols[0] if self.lp.symmetric else tail_cols[0 if side < 0 else 1]


def seed_factor(exp_epsilon: float) -> float:
    """f with the seeds q_i ≥ f·e^ε q_{i−m}: e^{−ε/2}, at most 1 − :data:`SEED_SLACK` and at least
    :data:`SEED_FLOOR`. At large ε a guess from a coarser grid resolves the steps of the optimal
    noise (a factor e^ε) only to within a cell of the finer grid, whose mass then lies between the
    steps' and misses a slack of 30%: the rows it leaves out are violated after the first solve,
    and adding them costs as many simplex iterations again (module docstring)."""
    return min(1.0 - SEED_SLACK, max(SEED_FLOOR, exp_epsilon**-0.5))


def guess_masses(lp, noise) -> np.ndarray:
    """The masses of ``noise`` (anything with a ``cdf``) on the columns of the points or cells of
    ``lp``: the mass of the cell [(i − ½)β, (i + ½)β) (shifted by the upper bound's offset) at
    point i (in a symmetric LP the mean of i and −i); 0 on tails and atom."""
    v_lo, v_hi = lp.points
    pts = np.arange(0 if lp.symmetric else v_lo, v_hi + 1)
    o, beta = lp.offset, lp.beta

    def mass(i):
        return noise.cdf((i + 0.5 + o) * beta) - noise.cdf((i - 0.5 + o) * beta)

    mass = 0.5 * (mass(pts) + mass(-pts)) if lp.symmetric else mass(pts)
    p = np.zeros(lp.n_p)
    p[: pts.size] = mass
    return p
