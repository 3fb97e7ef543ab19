r"""The floor rounding's gain weighted by the loss's slope: a lower bound of the grid LP
(:mod:`dpdro.grid`) for a support [lo, ∞), lo ≥ 0, or its mirror image (−∞, hi], hi ≤ 0, on which
the loss's slope grows (ℓ2, |x|^p with p > 1).

On such a support the grid LP admits the floor Y = β⌊X/β⌋ of every feasible noise X: its law
satisfies the rows (G) of the grid, and E c(Y) lies below E c(X) by the fractional parts
W = X/β − ⌊X/β⌋ ∈ [0, 1) times the loss's slope, to first order in β. For a least slope s on the
whole support, :meth:`dpdro.Problem.floor_rounding_gain` adds back s·β·w(ε, δ) ≤ s·β·E W, with
w ≈ ½ − ε/6 (one-sided ℓ1, ε = 0.31, δ = 1.6e-12: the LP's 82.10 → 82.54 at k = 1, 82.56 at k = 2,
against the upper bound 82.60); for ℓ2 on [0, ∞), s = 0 and nothing is added back, so the lower
bound stays about β·E c′(X)/2 below P.

Here each point j is weighted by G_j, a least slope of c on [jβ, ∞) (the running minimum from the
right of the least slopes g_i of c on the cells [iβ, (i + 1)β], i ≥ j, and on the tail beyond the
LP's last point; so 0 ≤ s ≤ G_j ≤ g_j, G is non-decreasing in j with steps at most Δ, and constant,
M, from the last point on). Then c(X) ≥ c(Y) + β·W·G(Y) and

    E[G(Y)·W] ≥ a(m)·E G(Y) − Δ·e^ε·b(m) − δ·M·l(m),   m = 1 − δ, c = e^ε − 1,

    a(m) = ∫₀^m (1 − u)/(1 + cu) du,  b(m) = ∫₀^m u/(1 + cu) du,  l(m) = ∫₀^m du/(1 + cu).

Proof (the weighted form of :meth:`dpdro.Problem.floor_rounding_gain`'s circle argument). For
0 < u < 1 let A = {x: W(x) < u}, B = {x: W(x) ≥ u} and, for a shift t ∈ [0, β), h(x) =
G(x)·1[x ∈ A, x − t ∈ B] ≥ 0, at most M. The noise's privacy for the shift t gives, level set by
level set, E h(X) ≤ e^ε·E h(X + t) + δ·M. In h(X + t) the point X ∈ B moves into A, which lies in
the next cell, where G is at most G(X) + Δ. Integrated over t: every x ∈ A has x − t ∈ B for a
set of t of measure (1 − u)β, every x ∈ B has x + t ∈ A for one of measure uβ, so with
ν(S) = E[G(X); X ∈ S] and N = E G(X) = ν(A) + ν(B),

    (1 − u)·(N − ν(B)) ≤ e^ε·u·(ν(B) + Δ) + δ·M,  i.e.  ν(B) ≥ ((1 − u)N − e^ε uΔ − δM)/(1 + cu),

and E[G·W] = ∫₀¹ ν(B) du ≥ ∫₀^m ν(B) du (ν ≥ 0) gives the bound.

The bound holds for every cap M_r: G⁽ʳ⁾ = min(G, M_r) is such a weight too, with steps Δ_r ≤ Δ,
and a cap near the slope where the noise's tail of mass δ·l/a begins is best (a larger one pays
δ·M_r·l for little). So the LP gets one column τ ≥ 0, its cost β, and the rows
τ ≥ a(m)·Σ_j q_j G⁽ʳ⁾_j − Δ_r·e^ε·b(m) − δ·M_r·l(m) for the caps M_r = s + (M − s)·2^{−r},
r < :data:`CAPS`, and M_r = s (whose row is the constant s·w(ε, δ) of
:meth:`dpdro.Problem.floor_rounding_gain`, w = a − δl): at the floor's law q the LP's value is at
most E c(Y) + β·E[G·W] ≤ E c(X), so its certified bound is one on P. (τ is stored shifted by the
largest penalty K, so that τ + K ≥ 0, and −βK is the LP's ``floor_gain``.) For ℓ1 and pinball
(G constant) nothing changes.

The law of the randomized rounding of D_R(k) does not enter: these rows hold for the floor alone,
so the LP drops D_R's allowances (and the split of :mod:`dpdro._excess_split`, which serves
them); its row M_r = s alone already gives D_R's LP value with no allowance, at least D_R. The
weights cut the first-order gap β·E[c′(X)]/2 by the factor 1 − 2a(m) (about ε/3 for small ε; 0.17
at ε = 0.52, 0.59 at ε = 2, 0.86 at ε = 4). Measured (certified gap to U(k) on the same grid, D_R
→ these rows, Δf = 1): ℓ2 on [0, ∞), ε = 1, δ = 1e-6, k = 16: 0.459% → 0.151%; ε = 0.521,
δ = 0.025, k = 16: 1.073% → 0.277%; ε = 1, δ = 0.3, k = 16: 4.32% → 3.46%; on (2, ∞), ε = 2,
δ = 1e-4, k = 16: 0.783% → 0.532%; on (−∞, 0], ε = 0.5, δ = 1e-3, k = 8: 1.041% → 0.192%;
|x|^1.5 on (−∞, 0], ε = 0.509, δ = 1e-3, k = 8: 0.825% → 0.248%; |x|³ on [0, ∞), ε = 1,
δ = 1e-3, k = 8: 2.68% → 1.07%. The LPs take about the same time.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from . import _rounding
from .problem import fractional_part_bound

__all__ = ["add_floor_rounding"]


def add_floor_rounding(lp) -> None:
    """Set ``lp.floor`` and ``lp.floor_gain`` of the lower-bound :class:`dpdro.grid.GridLP`
    ``lp`` (coefficients "rounding", its simplex row added): the floor rounding's constant gain
    (:meth:`dpdro.Problem.floor_rounding_gain`) and, where the loss's slope grows on the support,
    the column τ and its rows (module docstring), with D_R's allowances dropped."""
    problem, beta = lp.problem, lp.beta
    e, delta = lp.exp_rows, lp.delta_rows
    lp.floor_gain = problem.floor_rounding_gain(beta, e, delta)
    lp.floor = bool(lp.floor_gain)
    weights = _weights(problem, beta, lp.points, e, delta)
    if weights is None:
        return
    points, tail, constants = weights  # rows r: τ ≥ Σ_j q_j·points[r, j] + tail[r]·q_tail − p_r
    shift = float(np.max(constants))  # τ + K ≥ 0 for the largest penalty K
    # stored as τ″ = (τ + K)/S ∈ [0, 1], S = K + the largest coefficient (Σ_j q_j = 1), with rows
    # divided by S: coefficients of the order of the masses' (|x|³ on (−∞, 0] at ε = 0.17,
    # δ = 2e-10 has coefficients up to 8,000, and HiGHS failed on it, or found it infeasible)
    scale = _rounding.round_up(max(float(np.max(points)), float(np.max(tail))) + shift)
    down = 1.0 - _rounding.COEFF_SAFETY  # a division and the rounding of its operands
    tau = lp.add_aux_cols(np.array([_rounding.round_down(beta * scale)]), 1.0)
    coef = np.zeros((constants.size, lp.model.n_cols))
    coef[:, : lp.n_cells] = -points / scale * down
    far = lp.tail_cols[1 if problem.support[0] >= 0.0 else 0]
    if far is not None:
        coef[:, far] = -tail / scale * down
    coef[:, tau[0]] = 1.0
    rhs = _rounding.lowered((shift - constants) / scale * down)
    lp.add_fixed_rows(sp.csr_matrix(coef), rhs, np.inf)
    lp.floor_gain = float(np.nextafter(-_rounding.round_up(beta * shift), -np.inf))
    lp.floor, lp.allowances = True, []


def _weights(problem, beta: float, points: tuple[int, int], e: float, delta: float):
    """The rows of τ (module docstring): (coefficients a·G⁽ʳ⁾_j of the points in the LP's column
    order, rounded down; those of the far tail; the penalties p_r rounded up), one row per cap
    M_r; ``None`` where the weights do not apply: no support on one side of 0 unbounded away from
    it, a slope not known or negative, or G constant (ℓ1, whose gain is a constant)."""
    if problem.support is None or not delta < 1.0:  # δ_r of group privacy on a coarse grid
        return None
    lo, hi = problem.support
    if lo >= 0.0 and hi == math.inf:
        sign = 1.0
    elif hi <= 0.0 and lo == -math.inf:
        sign = -1.0
    else:
        return None
    loss = problem.loss

    def least_slope(a: float, b: float) -> float:  # of x ↦ c(sign·x) on [a, b], 0 ≤ a < b
        if sign > 0:
            return loss.slope_bounds(a, b)[0]
        return -loss.slope_bounds(-b, -a)[1]

    v_lo, v_hi = points
    first, last = (v_lo, v_hi) if sign > 0 else (-v_hi, -v_lo)  # in the mirrored coordinates
    s = problem.floor_slope(beta)  # that of floor_rounding_gain, whose constant part this keeps
    if not (s >= 0.0 and math.isfinite(s)):
        return None
    g = [least_slope(j * beta, (j + 1) * beta) for j in range(first, last + 1)]
    g.append(least_slope((last + 1) * beta, math.inf))  # the tail's
    if not np.all(np.isfinite(g)):
        return None
    G = np.minimum.accumulate(np.asarray(g)[::-1])[::-1]  # running min from the right, ≥ s
    if not G[-1] > s:
        return None
    caps = np.append(s + (G[-1] - s) * 2.0 ** -np.arange(CAPS), s)
    c, m = e - 1.0, 1.0 - delta
    a, l_up, b_up = _a_lower(e, delta), _l_upper(c, m), _b_upper(c, m)
    Gr = np.minimum(G[None, :], caps[:, None])  # G⁽ʳ⁾ = min(G, M_r)
    steps = np.max(np.diff(Gr, axis=1), axis=1, initial=0.0)
    coef = np.clip(a * Gr * (1.0 - _rounding.COEFF_SAFETY), 0.0, None)  # rounded down
    penalty = (delta * caps * l_up + steps * e * b_up) * (1.0 + _rounding.COEFF_SAFETY)
    pts = coef[:, :-1] if sign > 0 else coef[:, -2::-1]
    return pts, coef[:, -1], penalty


#: the caps M_r = s + (M − s)·2^{−r}, r < CAPS, and s (the constant gain). 6 give the same bounds
#: to 1e-10 in the cases of the module docstring, and |x|³ on [0, ∞) at ε = 3.68, δ = 9.7e-6,
#: k = 50 takes 9.8 s instead of 14.5 s (D_R: 10.5 s); but on |x|³ on (−∞, 0] at ε = 0.173,
#: δ = 2e-10 HiGHS then returned a point 10% below D_R's LP value as optimal (tests)
CAPS = 12


def _a_lower(e: float, delta: float) -> float:
    """a(m) = w(ε, δ) + δ·l(m), m = 1 − δ, rounded down."""
    c, m = e - 1.0, 1.0 - delta
    return fractional_part_bound(e, delta) + _rounding.round_down(delta * math.log1p(c * m) / c)


def _l_upper(c: float, m: float) -> float:
    """l(m) = log(1 + cm)/c ≤ m, rounded up."""
    return min(m, _rounding.round_up(math.log1p(c * m) / c))


def _b_upper(c: float, m: float) -> float:
    """b(m) = (cm − log(1 + cm))/c² ≤ m²/2 − cm³/3 + c²m⁴/4 (an alternating series whose terms
    decrease for cm < 1), rounded up."""
    x = c * m
    if x < 1.0:
        return _rounding.round_up(m * m * (0.5 - x / 3.0 + x * x / 4.0))
    return _rounding.round_up((x - math.log1p(x) + 8 * _rounding.UNIT_ROUNDOFF * x) / (c * c))
