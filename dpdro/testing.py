"""Brute-force references for tiny instances, with which dpdro's tests (and the book's chapters)
check the method: every event A ∈ F(L, β) is enumerated explicitly, and small LPs are solved
exactly.

They implement the paper's formulations literally (unions of unit cells I_i(β), shifts φ ∈ B(β)),
except that the lower bound on a non-uniform partition uses unions of whole core cells with every
decision cell met by the shifted union charged in full (dpdro's valid D(π, β); the paper's version
is not a relaxation there). They share no code with dpdro's oracle or LP assembly beyond the
Partition and loss objects.

* data-independent: :func:`brute_max_shortfall`, :func:`brute_lp` (P(π, β), D(π, β));
* data-dependent: :func:`dd_brute_shortfall`, :func:`dd_brute_lp` (P′(π, β), D′(π, β)), with every
  (pair of fine pieces, shift) from :func:`fine_triples`;
* exact integrals: :func:`hockey_stick` (the privacy violation of a pair of noises or query values);
* exact LPs: :func:`exact_lp_minimum`, the optimum of a tiny LP in rational arithmetic by vertex
  enumeration (the reference for the certified lower bound :func:`dpdro.lp.safe_lower_bound`).

Exponential in the instance size: for tests and illustrations only.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

__all__ = [
    "all_events",
    "brute_lp",
    "brute_max_shortfall",
    "cell_union_coefficients",
    "dd_brute_lp",
    "dd_brute_shortfall",
    "dd_event_rows",
    "exact_lp_minimum",
    "fine_triples",
    "hockey_stick",
    "lower_rows",
    "unit_cell_coefficients",
    "unit_densities",
]


def unit_cell_coefficients(columns_pi, core_pi, s, mask, exp_eps):
    """Coefficients on the column masses of V(φ, A) + δ for A = selected unit cells of the core.

    V(φ, A) = Σ_j p(j)|A ∩ Π_j|/|Π_j| − e^ε Σ_j p(j)|A ∩ (Π_j + φ)|/|Π_j| (equation (9)), φ = s·β.
    """
    columns_pi = np.asarray(columns_pi)
    widths = np.diff(columns_pi)
    row = np.zeros(widths.size)
    ticks = np.arange(core_pi[0], core_pi[-1])[np.asarray(mask, dtype=bool)]
    for t in ticks:
        j = np.searchsorted(columns_pi, t, side="right") - 1
        row[j] += 1.0 / widths[j]
        u = t - s  # unit cell I_t lies in Π_m + φ iff I_{t-s} lies in Π_m
        if columns_pi[0] <= u < columns_pi[-1]:
            m = np.searchsorted(columns_pi, u, side="right") - 1
            row[m] -= exp_eps / widths[m]
    return row


def cell_union_coefficients(columns_pi, core_pi, s, subset, exp_eps):
    """Coefficients of p(S) − e^ε p(N_φ(S)) for the union S of the selected core cells, φ = s·β: the
    constraints of the valid lower bound on non-uniform cells (every decision cell that meets
    A − φ, A = ∪_{j∈S} Π_j, is charged in full)."""
    columns_pi, core_pi = np.asarray(columns_pi), np.asarray(core_pi)
    row = np.zeros(columns_pi.size - 1)
    met = set()
    for j in np.nonzero(np.asarray(subset, dtype=bool))[0]:
        a, b = core_pi[j], core_pi[j + 1]
        # core cell j is this column
        row[int(np.searchsorted(columns_pi, a, side="right")) - 1] += 1.0
        for m in range(columns_pi.size - 1):
            if columns_pi[m] < b - s and columns_pi[m + 1] > a - s:
                met.add(m)
    for m in met:
        row[m] -= exp_eps
    return row


def lower_rows(problem, columns_pi, core_pi, shifts):
    """Every constraint row of D(π, β): unit-cell events on a uniform core (the paper's D(L, β)),
    unions of core cells otherwise."""
    uniform = bool(np.all(np.diff(core_pi) == 1))
    f = unit_cell_coefficients if uniform else cell_union_coefficients
    events = list(
        all_events(core_pi) if uniform else itertools.product((0, 1), repeat=len(core_pi) - 1)
    )
    return [f(columns_pi, core_pi, s, mask, problem.exp_epsilon) for s in shifts for mask in events]


def all_events(core_pi):
    n = int(core_pi[-1] - core_pi[0])
    return itertools.product((0, 1), repeat=n)


def brute_max_shortfall(problem, columns_pi, core_pi, p, shifts, *, lower=False):
    """max over φ ∈ shifts and all events A of V(φ, A) (δ included), by enumeration (``lower``: the
    constraints of D(π, β), see :func:`lower_rows`)."""
    if lower:
        return (
            max(float(row @ p) for row in lower_rows(problem, columns_pi, core_pi, shifts))
            - problem.delta
        )
    best = -np.inf
    for s in shifts:
        for mask in all_events(core_pi):
            row = unit_cell_coefficients(columns_pi, core_pi, s, mask, problem.exp_epsilon)
            best = max(best, float(row @ p) - problem.delta)
    return best


def brute_lp(problem, partition, *, lower, shifts=None, atom=False, rounding=False):
    """P(π, β) (lower=False) or D(π, β) (lower=True) with every event of E(L, β) as an explicit row
    (optionally only for the given shifts, in units of β). ``atom``: P(π, β) with a point mass a at
    0, which adds a to V(φ, A ∪ {0}) for every φ ≠ 0 (the worst event takes the point 0, never the
    point φ). ``rounding``: D(π, β) with the randomized-rounding coefficients, i.e. the point
    masses q_j at the grid points jβ (the left edges) charged c(jβ), with the loss's grid
    interpolation excess subtracted."""
    k = problem.shifts(partition.beta)
    shifts = range(-k, k + 1) if shifts is None else shifts
    cols = partition.padded(k) if lower else partition
    a, b = cols.edges[:-1], cols.edges[1:]
    cost = problem.loss.cell_infimum(a, b) if lower else problem.loss.cell_average(a, b)
    if rounding:
        cost = problem.loss(a)
    rows = (
        lower_rows(problem, cols.pi, partition.pi, shifts)
        if lower
        else [
            np.append(
                unit_cell_coefficients(cols.pi, partition.pi, s, mask, problem.exp_epsilon),
                float(s != 0),
            )
            if atom
            else unit_cell_coefficients(cols.pi, partition.pi, s, mask, problem.exp_epsilon)
            for s in shifts
            for mask in all_events(partition.pi)
        ]
    )
    if atom:
        cost = np.append(cost, float(problem.loss(np.array([0.0]))[0]))
    rows = np.unique(np.round(np.array(rows), 14), axis=0)
    res = linprog(
        cost,
        A_ub=rows,
        b_ub=np.full(len(rows), problem.delta),
        A_eq=np.ones((1, cost.size)),
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        return None
    return res.fun - (problem.loss.grid_interpolation_excess(partition.beta) if rounding else 0.0)


# ---------------------------------------------------------------------------- data-dependent
def unit_densities(columns_pi, probs):
    """Mass per unit cell on [columns_pi[0], columns_pi[-1]) for every distribution (rows of
    probs)."""
    w = np.diff(columns_pi)
    return np.stack([np.repeat(np.asarray(p)[: w.size] / w, w) for p in probs])


def fine_triples(K, kd, lam, lower):
    """(group of k, group of m, s) for every pair of fine pieces (k, m), from the paper's
    definitions: upper bound s ∈ {m−k−1, m−k, m−k+1} ∩ [−kd, kd] (Algorithm 3 / Proposition 5);
    lower bound s = m−k."""
    grp = np.searchsorted(lam, np.arange(K), side="right") - 1
    out = set()
    for k in range(K):
        for m in range(K):
            cands = [m - k] if lower else [m - k - 1, m - k, m - k + 1]
            for s in cands:
                if abs(s) <= kd:
                    out.add((int(grp[k]), int(grp[m]), s))
    return sorted(out)


def dd_event_rows(columns_pi, core_pi, piece, m, s, exp_eps, n_c, M):
    """Coefficient rows (over the stacked p_l blocks) of V(φ, A) + δ for every event A of the
    core."""
    w = np.diff(columns_pi)
    core_ticks = np.arange(core_pi[0], core_pi[-1])
    rows = []
    for mask in itertools.product((0, 1), repeat=core_ticks.size):
        row = np.zeros(M * n_c)
        for t in core_ticks[np.asarray(mask, dtype=bool)]:
            j = np.searchsorted(columns_pi, t, side="right") - 1
            row[piece * n_c + j] += 1.0 / w[j]
            u = t - s
            if columns_pi[0] <= u < columns_pi[-1]:
                jm = np.searchsorted(columns_pi, u, side="right") - 1
                row[m * n_c + jm] -= exp_eps / w[jm]
        rows.append(row)
    return rows


def dd_brute_shortfall(prob, columns_pi, core_pi, P, triples):
    """max over the constraint groups (l, l′, s) in ``triples`` and all events of V(φ, A) (δ
    included), for the distributions P (rows) on the decision cells ``columns_pi``."""
    n_c = P.shape[1]
    M = P.shape[0]
    x = P.ravel()
    best = -np.inf
    for piece, m, s in triples:
        for row in dd_event_rows(columns_pi, core_pi, piece, m, s, prob.exp_epsilon, n_c, M):
            best = max(best, float(row @ x) - prob.delta)
    return best


def dd_brute_lp(prob, part, *, lower, lam, cell_cost_weights, rounding=False):
    """P′(π, β) or D′(π, β) with every event row explicit (HiGHS via scipy). ``rounding``: the
    randomized-rounding bound D′_R (lower only): decision cell [iβ, (i+1)β) read as the grid point
    iβ at cost c(iβ), and Σ_l w_l·e_β subtracted from the optimum."""
    kd = prob.base_problem.shifts(part.beta)
    g = prob.grouping(part.beta)
    cols = part.padded(kd) if lower else part
    M = lam.size - 1
    a, b = cols.edges[:-1], cols.edges[1:]
    loss = prob.base_problem.loss
    c = loss.cell_infimum(a, b) if lower else loss.cell_average(a, b)
    if rounding:
        c = np.abs(a) ** loss.k if hasattr(loss, "k") else np.asarray(loss(a), dtype=float)
    n_c = c.size + (1 if lower else 0)
    if lower:
        c = np.append(c, loss.tail_infimum(cols.edges[0], cols.edges[-1]))
    cost = np.concatenate([w * c for w in cell_cost_weights])
    rows = []
    for piece, m, s in fine_triples(g.K, kd, lam, lower):
        rows += dd_event_rows(cols.pi, part.pi, piece, m, s, prob.exp_epsilon, n_c, M)
    rows = np.unique(np.round(np.array(rows), 14), axis=0)
    A_eq = np.kron(np.eye(M), np.ones((1, n_c)))
    res = linprog(
        cost,
        A_ub=rows,
        b_ub=np.full(len(rows), prob.delta),
        A_eq=A_eq,
        b_eq=np.ones(M),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        raise RuntimeError(f"the brute-force LP did not solve: {res.message}")
    if rounding:
        return res.fun - float(np.sum(cell_cost_weights)) * loss.grid_interpolation_excess(
            part.beta
        )
    return res.fun


def hockey_stick(first, second, epsilon, a=0.0, b=0.0):
    """∫ (p₁(y − a) − e^ε p₂(y − b))₊ dy for two piecewise-uniform noises, by exact integration
    between the merged breakpoints (the integrand is constant between consecutive points of (edges₁
    + a) and (edges₂ + b)). With ``first = second``: the largest violation max_A P(a + X ∈ A) − e^ε
    P(b + X ∈ A) of a pair of query values (Observation 1); with a = 0 and b = φ: δ_{1,2}(φ) of a
    pair of noises."""
    bps = np.unique(np.concatenate((first.edges + a, second.edges + b)))
    mid = 0.5 * (bps[1:] + bps[:-1])
    d = first.pdf(mid - a) - math.exp(epsilon) * second.pdf(mid - b)
    return float(np.sum(np.diff(bps) * np.maximum(d, 0.0)))


# ---------------------------------------------------------------------------- exact LPs
def exact_lp_minimum(cost, matrix, row_lower, row_upper, col_upper) -> Fraction | None:
    """min cᵀx s.t. row_lower ≤ A x ≤ row_upper, 0 ≤ x ≤ col_upper, computed exactly.

    Every float is read as the rational number it represents (``Fraction(float)``), and the optimum
    is the smallest objective over the vertices of the feasible box-bounded polytope: every choice
    of n linearly independent active bounds (rows at one of their finite bounds, columns at 0 or at
    their upper bound) solved by Gaussian elimination in rational arithmetic. ``col_upper`` must be
    finite (the polytope is then bounded); ±inf row bounds are absent. Returns ``None`` when
    infeasible. Cost: C(#bounds, n) eliminations of an n × n system, so only for n ≲ 5.
    """
    c = [Fraction(float(v)) for v in np.asarray(cost, dtype=float)]
    A = [[Fraction(float(v)) for v in row] for row in np.asarray(matrix, dtype=float)]
    n = len(c)
    u = [Fraction(float(v)) for v in np.asarray(col_upper, dtype=float)]
    bounds = []  # (coefficients, value): a hyperplane a·x = value
    for a, lo, hi in zip(
        A, np.asarray(row_lower, dtype=float), np.asarray(row_upper, dtype=float), strict=False
    ):
        bounds += [(a, Fraction(float(v))) for v in {lo, hi} if math.isfinite(v)]
    for j in range(n):
        e = [Fraction(int(i == j)) for i in range(n)]
        bounds += [(e, Fraction(0)), (e, u[j])]
    best = None
    for chosen in itertools.combinations(bounds, n):
        x = _solve_exact([list(a) for a, _ in chosen], [v for _, v in chosen])
        if x is None or not _feasible(x, A, row_lower, row_upper, u):
            continue
        value = sum(ci * xi for ci, xi in zip(c, x, strict=False))
        best = value if best is None else min(best, value)
    return best


def _solve_exact(M: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """The solution of M x = b by Gauss–Jordan elimination in rationals (``None`` if M is
    singular)."""
    n = len(b)
    M = [row + [bi] for row, bi in zip(M, b, strict=False)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if M[r][col] != 0), None)
        if pivot is None:
            return None
        M[col], M[pivot] = M[pivot], M[col]
        for r in range(n):
            if r != col and M[r][col] != 0:
                f = M[r][col] / M[col][col]
                M[r] = [x - f * y for x, y in zip(M[r], M[col], strict=False)]
    return [M[i][n] / M[i][i] for i in range(n)]


def _feasible(x, A, row_lower, row_upper, u) -> bool:
    if any(xi < 0 or xi > ui for xi, ui in zip(x, u, strict=False)):
        return False
    for a, lo, hi in zip(A, row_lower, row_upper, strict=False):
        ax = sum(ai * xi for ai, xi in zip(a, x, strict=False))
        if (math.isfinite(lo) and ax < Fraction(float(lo))) or (
            math.isfinite(hi) and ax > Fraction(float(hi))
        ):
            return False
    return True
