r"""Objective coefficients of the output-space LP: the output family (upper) and the clamped D′_R
(lower), in coordinates relative to φ_lo.

Clamping (why outputs in [φ_lo, φ_hi] suffice)
    For a loss that is non-increasing on (−∞, 0] and non-decreasing on [0, ∞) (:func:`unimodal`),
    releasing clamp(Y) = min(max(Y, φ_lo), φ_hi) instead of Y is post-processing (so every (ε, δ)
    guarantee of Y carries over to clamp(Y)) and never costs more: for ϕ ∈ [φ_lo, φ_hi],
    clamp(y) − ϕ lies between 0 and y − ϕ, so c(clamp(y) − ϕ) ≤ c(y − ϕ). Hence P′ has the same
    optimal value when every γ(·|ϕ) is restricted to [φ_lo, φ_hi], and the same holds with the caps
    when the cap loss is unimodal too.

Output cells
    The output grid of step β is the cells J_j = [φ_lo + jβ, φ_lo + (j + 1)β) for j = −1 … K, K =
    |Φ|/β; the two end cells J_{−1} and J_K lie outside Φ and are released clamped, as the atoms
    φ_lo and φ_hi. A piece Λ_l of Φ whose law is q_l on these cells (and that releases the query
    value itself with probability a_l, the interior grid point φ_lo + iβ with probability p_l(i))
    costs

        ∫_{Λ_l} w(ϕ) [a_l c(0) + Σ_i p_l(i) c(iβ − ϕ)
                       + Σ_j q_l(j) E_{Y ~ U(J_j)} c(clamp(Y) − ϕ)] dϕ,

    computed here per fine piece Φ_k (sub-interval by sub-interval of constant weight) as an
    average over ϕ of :meth:`dpdro.Loss.cell_average` (or of c at the clamped end), by
    Gauss–Legendre quadrature between the kinks of the integrand: exact for the ℓ1 and ℓ2 losses
    and every piecewise-linear loss (their integrands are piecewise polynomials of degree ≤ 3), and
    a high-order quadrature otherwise.

Lower-bound coefficients (clamped D′_R)
    On the restricted problem the rounded outputs T(Y) ∈ ϕ + βℤ of the randomized rounding of
    :mod:`dpdro.data_dependent` lie in [φ_lo − β, φ_hi + β]: for ϕ = φ_lo + kβ + θ the grid points
    φ_lo + θ + jβ with j = −1 … K. The rounded law of fine piece k on these points costs
    β·w̲_k·c((j − k)β) per unit of mass (minus the excess e_β once, as in D′_R).
"""

from __future__ import annotations

import numpy as np

from ..losses import CallableLoss, Loss, PiecewiseLinear, PowerLoss

__all__ = ["unimodal", "convex", "output_costs", "output_point_costs", "point_columns",
           "rounding_costs", "query_atom_costs"]

# Gauss–Legendre nodes and weights on [0, 1] (exact for polynomials of degree ≤ 9)
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(5)
_NODES, _WEIGHTS = 0.5 * (_NODES + 1.0), 0.5 * _WEIGHTS


def unimodal(loss: Loss) -> bool:
    """Whether c is non-increasing on (−∞, 0] and non-decreasing on [0, ∞) (then clamping the output
    to [φ_lo, φ_hi] never costs more; module docstring). ``False`` when this is not known."""
    if isinstance(loss, PowerLoss):
        return True
    if isinstance(loss, PiecewiseLinear):
        pts = np.union1d(loss.knots, [0.0])
        vals = np.asarray(loss(pts), dtype=float)
        left, right = vals[pts <= 0], vals[pts >= 0]
        return bool(np.all(np.diff(left) <= 0) and np.all(np.diff(right) >= 0))
    if isinstance(loss, CallableLoss):
        # checked on a wide grid by its constructor unless the user declared a tail infimum
        return loss._tail is None
    return False


def convex(loss: Loss) -> bool:
    """Whether c is known to be convex (then E c(Y − ϕ) is convex in ϕ, and a cap holds on a piece
    when it holds at the piece's two ends)."""
    if isinstance(loss, PowerLoss):
        return loss.k >= 1
    if isinstance(loss, PiecewiseLinear):
        x = np.concatenate(([loss.knots[0] - 1.0], loss.knots, [loss.knots[-1] + 1.0]))
        slopes = np.diff(np.asarray(loss(x), dtype=float)) / np.diff(x)
        return bool(np.all(np.diff(slopes) >= -1e-15 * np.maximum(1.0, np.abs(slopes[1:]))))
    return False


def _kinks(loss: Loss) -> np.ndarray:
    """Points where c is not smooth (the quadrature splits there)."""
    if isinstance(loss, PiecewiseLinear):
        return np.union1d(loss.knots, [0.0])
    return np.array([0.0])


def _average(func, a: float, b: float, breaks) -> float:
    """(1/(b − a))∫_a^b func(ϕ) dϕ by 5-point Gauss–Legendre on each piece between ``breaks``."""
    pts = np.unique(np.concatenate(([a, b], [t for t in breaks if a < t < b])))
    lo, width = pts[:-1], np.diff(pts)
    x = lo[:, None] + width[:, None] * _NODES[None, :]
    vals = np.asarray(func(x.ravel()), dtype=float).reshape(x.shape)
    return float(np.sum(width[:, None] * _WEIGHTS[None, :] * vals) / (b - a))


def _cell_cost(loss: Loss, u: float, v: float, a: float, b: float) -> float:
    """E c(Y − ϕ) for Y ~ U[u, v) and ϕ ~ U[a, b), independent."""
    kinks = _kinks(loss)
    # the integrand ϕ ↦ cell_average(c, u − ϕ, v − ϕ) has kinks where u − ϕ or v − ϕ is a kink of c
    breaks = np.concatenate((u - kinks, v - kinks))

    def f(phi):
        return loss.cell_average(u - phi, v - phi)

    return _average(f, a, b, breaks)


def _point_cost(loss: Loss, y: float, a: float, b: float) -> float:
    """E c(y − ϕ) for ϕ ~ U[a, b)."""
    return _average(lambda phi: loss(y - phi), a, b, y - _kinks(loss))


def output_costs(problem, beta: float, K: int, loss_of_fine) -> np.ndarray:
    """C[k, j] = ∫_{Φ_k} w(ϕ) E c_k(clamp(Y) − ϕ) dϕ (w normalised) for Y ~ U(J_j), fine piece k
    and output cell j = −1 … K (columns 0 … K+1), in coordinates relative to φ_lo (module
    docstring). ``loss_of_fine[k]`` is the loss of fine piece k; the weight must be uniform or
    piecewise constant (:meth:`Problem.weight_segments`)."""
    out = np.zeros((K, K + 2))
    cache: dict = {}
    for k in range(K):
        loss, left = loss_of_fine[k], k * beta
        for s0, s1, dens in problem.weight_segments(left, left + beta):
            for j in range(-1, K + 1):
                # translation: only the positions relative to the piece's left edge matter
                key = (id(loss), j - k, j == -1, j == K, round((s0 - left) / beta, 12),
                       round((s1 - left) / beta, 12))
                if key not in cache:
                    cache[key] = _segment_cost(loss, j, K, beta, s0, s1)
                out[k, j + 1] += dens * (s1 - s0) * cache[key]
    return out


def _segment_cost(loss: Loss, j: int, K: int, beta: float, a: float, b: float) -> float:
    """E c(clamp(Y) − ϕ) for Y ~ U(J_j), ϕ ~ U[a, b) (relative coordinates)."""
    if j == -1:
        return _point_cost(loss, 0.0, a, b)
    if j == K:
        return _point_cost(loss, K * beta, a, b)
    return _cell_cost(loss, j * beta, (j + 1) * beta, a, b)


def output_point_costs(problem, beta: float, K: int, loss_of_fine) -> np.ndarray:
    """C[k, i] = ∫_{Φ_k} w(ϕ) c_k(iβ − ϕ) dϕ (w normalised): the cost of releasing the grid point
    φ_lo + iβ, i = 0 … K (relative to φ_lo), for fine piece k; weights as in
    :func:`output_costs`."""
    out = np.zeros((K, K + 1))
    cache: dict = {}
    for k in range(K):
        loss, left = loss_of_fine[k], k * beta
        for s0, s1, dens in problem.weight_segments(left, left + beta):
            for i in range(K + 1):
                key = (id(loss), i - k, round((s0 - left) / beta, 12),
                       round((s1 - left) / beta, 12))
                if key not in cache:
                    cache[key] = _point_cost(loss, i * beta, s0, s1)
                out[k, i] += dens * (s1 - s0) * cache[key]
    return out


def point_columns(K: int) -> np.ndarray:
    """The grid point i of each of the K + 2 columns c of a law in points mode (−1: the column is
    fixed at 0): i = c up to the middle m and c − 1 beyond, so that the mirror image c ↦ K + 1 − c
    of the columns is that of the points, i ↦ K − i. For even K the middle point K/2 has two
    columns (c = m, m + 1; counting them apart only overstates δ); for odd K the column m =
    (K + 1)/2, its own mirror image, has no point. Columns 0 and K + 1 are the points 0 and K,
    released as the clamped end cells."""
    c = np.arange(K + 2)
    m = (K + 1) // 2
    out = np.where(c <= K // 2, c, c - 1)
    if K % 2:
        out[m] = -1
    return out


def query_atom_costs(problem, beta: float, K: int, loss_of_fine) -> np.ndarray:
    """∫_{Φ_k} w(ϕ) c_k(0) dϕ: the cost of releasing the query value itself, per fine piece."""
    masses = problem.weight_masses(problem.phi_lo + beta * np.arange(K + 1))
    return masses * np.array([float(np.asarray(c(np.array([0.0])))[0]) for c in loss_of_fine])


def rounding_costs(problem, beta: float, K: int, loss_of_fine) -> tuple[np.ndarray, np.ndarray]:
    """The clamped D′_R coefficients β·w̲_k·c_k((j − k)β), j = −1 … K, and each fine piece's
    weight β·w̲_k (module docstring)."""
    fine = problem.phi_lo + beta * np.arange(K + 1)
    fine[-1] = problem.phi_hi
    wts = problem.weight_infima(fine) * problem.grouping(beta).fine_widths
    j = np.arange(-1, K + 1)
    out = np.empty((K, K + 2))
    for k in range(K):
        out[k] = wts[k] * np.asarray(loss_of_fine[k]((j - k) * beta), dtype=float)
    return out, wts


def clamped_noise_cost(problem, noise, loss: Loss, a: float, b: float) -> float:
    """∫_{[φ_lo + a, φ_lo + b)} w(ϕ) E c(clamp(ϕ + X) − ϕ) dϕ (w normalised, constant on the
    sub-intervals of :meth:`Problem.weight_segments`) for the noise X ~ ``noise`` added to every
    query value and the release clamped to Φ: relative coordinates, clamping at 0 and W = |Φ|."""
    W = problem.phi_hi - problem.phi_lo
    kinks = _kinks(loss)
    zero = float(np.asarray(loss(np.array([0.0])), dtype=float)[0])
    total = 0.0
    for s0, s1, dens in problem.weight_segments(a, b):
        part = noise.atom * zero
        for x0, x1, p in zip(noise.edges[:-1], noise.edges[1:], noise.probs, strict=True):
            if p <= 0:
                continue
            if x0 + s0 >= 0 and x1 + s1 <= W:  # never clamped: the cell average
                part += p * float(loss.cell_average(np.array([x0]), np.array([x1]))[0])
                continue
            breaks = np.concatenate(([-x0, -x1, W - x0, W - x1], -kinks, W - kinks))
            part += p * _average(lambda phi, x0=x0, x1=x1: _clamped_cell(loss, x0, x1, W, phi),
                                 s0, s1, breaks)
        total += dens * (s1 - s0) * part
    return total


def _clamped_cell(loss: Loss, x0: float, x1: float, W: float, phi: np.ndarray) -> np.ndarray:
    """E c(clamp(ϕ + X) − ϕ) for X ~ U[x0, x1), clamping at 0 and W, for every ϕ."""
    lo = np.clip(-phi, x0, x1)  # below: released at 0, noise −ϕ
    hi = np.clip(W - phi, x0, x1)  # above: released at W, noise W − ϕ
    inside = hi - lo
    mid = np.zeros_like(phi)
    ok = inside > 0
    mid[ok] = loss.cell_average(lo[ok], hi[ok]) * inside[ok]
    below = (lo - x0) * np.asarray(loss(-phi), dtype=float)
    above = (x1 - hi) * np.asarray(loss(W - phi), dtype=float)
    return (below + mid + above) / (x1 - x0)
