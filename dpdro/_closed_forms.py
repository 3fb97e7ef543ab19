r"""Closed forms of the literature mechanisms that the engine itself needs.

:func:`dpdro.optimal_noise` sizes its windows with the truncated Laplace half-width A, aligns its
grids with the plateau γ of the optimal staircase, releases either mechanism on a grid, certified,
when it is near optimal, and compares its release with them, Tulap and the analytic Gaussian
mechanism (:mod:`dpdro.reference`). Those formulas live here, in a leaf module that imports neither
the LP layer nor the literature classes; :mod:`dpdro.mechanisms` builds its
:class:`~dpdro.mechanisms.TruncatedLaplace`, :class:`~dpdro.mechanisms.Staircase` and
:class:`~dpdro.mechanisms.AnalyticGaussian` on them (and on :func:`integrate_loss`, the quadrature
of a loss against a density). The 'near optimal lower bound'
(:func:`dpdro.mechanisms.near_optimal_lower_bound`, its derivation) is computed here too: a call of
the engine out of time returns it when no LP bound is left to find.

Analytic Gaussian (Balle and Wang 2018, Theorem 8)
    N(0, σ²) is (ε, δ)-DP iff Φ(Δf/(2σ) − εσ/Δf) − e^ε Φ(−Δf/(2σ) − εσ/Δf) ≤ δ; σ is the smallest
    such, rounded up.

Truncated Laplace (Geng, Ding, Guo and Kumar 2020; the paper's GitHub appendix)
    density B·e^{−|x|/λ} on [−A, A], λ = Δf/ε, q = (e^ε − 1)/(2δ), A = λ·log(1 + q),
    Bλ = (1 + q)/(2q), and P(X ≤ x) = ((1 + q)e^{x/λ} − 1)/(2q) for −A ≤ x ≤ 0.

Staircase (Geng and Viswanath 2016)
    with b = e^{−ε}, density a(γ) on [0, γΔf), b·a(γ) on [γΔf, Δf), p(x + Δf) = b·p(x) for x ≥ 0,
    a(γ) = (1 − b)/(2Δf(γ + (1 − γ)b)); the γ* that minimises the expected ℓ1 loss is
    1/(1 + e^{ε/2}), the ℓ2 one (c − b)/(1 − b) with c = (b(1 + b)/2)^{1/3}.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
from scipy import integrate, optimize, special

from ._budget import TimeBudget
from ._rounding import UNIT_ROUNDOFF as _U
from ._validation import check_int, check_open_unit, check_positive
from .losses import CallableLoss, Loss, PiecewiseLinear, PowerLoss, make_loss
from .noise import PiecewiseUniform, cell_averages

__all__ = [
    "analytic_gaussian_sigma",
    "gaussian_expected_loss",
    "gaussian_log_delta",
    "integrate_loss",
    "monotone_one_sided_bound",
    "power_exponent",
    "remember",
    "staircase_expected_loss",
    "staircase_noise",
    "staircase_optimal_gamma",
    "near_optimal_bound",
    "near_optimal_sum",
    "near_optimal_terms",
    "truncated_laplace_centre",
    "truncated_laplace_cdf",
    "truncated_laplace_half_width",
    "truncated_laplace_noise",
    "tulap_cell_count",
    "tulap_cells",
    "tulap_outer_edge",
    "uniform_noise",
]


def power_exponent(loss: Loss) -> float | None:
    """The exponent k if ``loss`` is c(x) = |x|^k, else None."""
    return loss.k if isinstance(loss, PowerLoss) else None


# ---------------------------------------------------------------------------- quadrature
def integrate_loss(loss: Loss, pdf, lo: float, hi: float, scale: float) -> float:
    """∫ c(x) p(x) dx over (lo, hi) by adaptive quadrature, in the variable t = x/scale.

    The range is split at 0, at the knots of a piecewise-linear loss and at t = ±4^j so that every
    piece is smooth and of moderate length; infinite end pieces are left to ``quad``'s mapping,
    which expects decay on the scale of 1 (in x at a scale of 1e8, ℓ1's Laplace tail was "probably
    divergent" to ``quad``). An integral beyond the floats comes back as ∞ or NaN without the
    warnings of its overflow; a finite one passes ``quad``'s warnings on.
    """
    cuts = {0.0, *(float(t) / scale for t in getattr(loss, "knots", ()))}
    cuts |= {s * 4.0**j for s in (-1.0, 1.0) for j in range(5)}
    a, b = lo / scale, hi / scale
    pts = [a, *sorted(c for c in cuts if a < c < b), b]

    def f(t):
        x = scale * t
        return float(loss(x)) * float(pdf(x)) * scale

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="ignore", invalid="ignore"):
            pieces = [
                integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
                for a, b in zip(pts[:-1], pts[1:], strict=False)
            ]
        try:
            total = math.fsum(pieces)
        except (ValueError, OverflowError):  # ∞ − ∞, or beyond the floats
            total = math.nan
    if math.isfinite(total):  # else an overflow, refused by finite_expected_loss
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return total


# ---------------------------------------------------------------------------- Gaussian
def _gaussian_piecewise_linear(sigma: float, loss: PiecewiseLinear) -> float:
    """E c(X), X ~ N(0, σ²), for a piecewise-linear c (:func:`gaussian_expected_loss`)."""
    t = np.asarray(loss.knots, dtype=float)
    ends = np.concatenate(([-math.inf], t, [math.inf]))
    inner = np.diff(loss.values) / np.diff(t)
    slopes = np.concatenate(([loss.left_slope], inner, [loss.right_slope]))
    # each piece α + βx through (t_j, c(t_j)): the left tail through the first knot, the others
    # through their left knot
    anchor = np.concatenate(([t[0]], t))
    alpha = np.asarray(loss(anchor), dtype=float) - slopes * anchor
    lo, hi = ends[:-1] / sigma, ends[1:] / sigma
    phi = lambda z: np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)  # noqa: E731 (0 at ±∞)
    mass = special.ndtr(hi) - special.ndtr(lo)
    terms = alpha * mass + slopes * sigma * (phi(lo) - phi(hi))
    return math.fsum(terms)


def gaussian_log_delta(sigma: float, epsilon: float, sensitivity: float) -> float:
    """log δ of N(0, σ²) noise at ε for shift Δf (see :func:`gaussian_delta`)."""
    r = sensitivity / (2.0 * sigma)
    s = epsilon * sigma / sensitivity
    lu, lv = special.log_ndtr(r - s), special.log_ndtr(-r - s)
    with np.errstate(divide="ignore"):  # log 0 = −∞: δ = 0 (the two terms equal in floats)
        return float(lu + np.log(-np.expm1(epsilon + lv - lu)))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest σ with Gaussian δ(σ) ≤ δ (the analytic Gaussian mechanism of Balle and Wang 2018),
    found by bracketing in log σ and rounded up (:class:`dpdro.mechanisms.AnalyticGaussian`)."""

    def f(s):
        return gaussian_log_delta(math.exp(s), epsilon, sensitivity) - math.log(delta)

    lo = hi = math.log(sensitivity / epsilon)
    while f(lo) <= 0.0:  # δ(σ) → 1 as σ → 0, so this stops
        lo -= 1.0
    while f(hi) > 0.0:  # δ(σ) → 0 as σ → ∞
        hi += 1.0
    root = optimize.brentq(f, lo, hi, xtol=1e-15, rtol=8 * _U, maxiter=500)
    sigma = math.exp(root)
    # as exact_delta computes it
    while math.exp(gaussian_log_delta(sigma, epsilon, sensitivity)) > delta:
        sigma = float(np.nextafter(sigma, math.inf))  # a few ulps at most: brentq is ulp-accurate
    return sigma


def gaussian_expected_loss(sigma: float, loss) -> float:
    """E c(X) for X ~ N(0, σ²): σ·√(2/π) for ℓ1, σ² for ℓ2, σ^k·2^{k/2}·Γ((k + 1)/2)/√π for |x|^k,
    the sum of α(Φ(u/σ) − Φ(l/σ)) + βσ(φ(l/σ) − φ(u/σ)) over the pieces α + βx on (l, u) of a
    piecewise-linear loss (pinball, the asymmetric loss: quadrature had taken 20 ms of every call's
    literature values), adaptive quadrature of the density (:func:`integrate_loss`) for any other
    dpdro loss; ∞ or NaN beyond the floating-point range (:class:`dpdro.mechanisms.AnalyticGaussian`
    turns those into a ``ValueError``)."""
    loss = make_loss(loss)
    k = power_exponent(loss)
    if k == 1.0:
        return sigma * math.sqrt(2.0 / math.pi)
    if k == 2.0:
        return sigma**2
    with np.errstate(over="ignore"):
        if k is not None:
            log = k * math.log(sigma) + 0.5 * k * math.log(2.0) + math.lgamma(0.5 * (k + 1.0))
            return float(np.exp(log - 0.5 * math.log(math.pi)))
        if isinstance(loss, PiecewiseLinear):
            return _gaussian_piecewise_linear(sigma, loss)

    def pdf(x):
        z = np.asarray(x, dtype=float) / sigma
        return np.exp(-0.5 * z * z) / (math.sqrt(2.0 * math.pi) * sigma)

    return integrate_loss(loss, pdf, -math.inf, math.inf, sigma)


# ---------------------------------------------------------------------------- truncated Laplace
def truncated_laplace_half_width(*, epsilon, delta, sensitivity=1.0) -> float:
    """A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)), the support half-width of the truncated Laplace
    mechanism.

    A natural reference size for the support of optimal noise.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    delta : float
        Privacy parameter δ in (0, 1).
    sensitivity : float
        Sensitivity Δf > 0 of the query.

    References
    ----------
    .. [1] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020.
    .. [2] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 5.1 (the support [−A, A] of the experiments).
    """
    return half_width(
        check_positive("epsilon", epsilon),
        check_open_unit("delta", delta),
        check_positive("sensitivity", sensitivity),
    )


def half_width(epsilon: float, delta: float, sensitivity: float) -> float:
    """A of :func:`truncated_laplace_half_width` for validated arguments."""
    return (sensitivity / epsilon) * math.log1p(math.expm1(epsilon) / (2.0 * delta))


def truncated_laplace_q(epsilon: float, delta: float) -> float:
    """q = (e^ε − 1)/(2δ)."""
    return math.expm1(epsilon) / (2.0 * delta)


def truncated_laplace_normalizer(epsilon: float, delta: float, sensitivity: float) -> float:
    """B = 1/(2λ(1 − e^{−A/λ})) = (1 + q)/(2qλ), the density at 0."""
    q = truncated_laplace_q(epsilon, delta)
    return (1.0 + q) / (2.0 * q * (sensitivity / epsilon))


def truncated_laplace_lower_tail(x, epsilon: float, delta: float, sensitivity: float):
    """P(X ≤ x) for x ≤ 0: ((1 + q)e^{x/λ} − 1)/(2q), clipped to [0, ½]."""
    q = truncated_laplace_q(epsilon, delta)
    return np.clip(np.expm1(np.log1p(q) + x / (sensitivity / epsilon)) / (2.0 * q), 0.0, 0.5)


def truncated_laplace_cdf(x, epsilon: float, delta: float, sensitivity: float):
    """P(X ≤ x) of the truncated Laplace mechanism."""
    x = np.asarray(x, dtype=float)
    tail = truncated_laplace_lower_tail(-np.abs(x), epsilon, delta, sensitivity)
    return np.where(x <= 0, tail, 1.0 - tail)


def truncated_laplace_noise(
    epsilon: float, delta: float, sensitivity: float, cell_width: float
) -> PiecewiseUniform:
    r"""The mechanism's masses on the cells [jh, (j + 1)h), h = ``cell_width``, that meet [−A, A],
    each spread uniformly over its cell (``grid = h``): a piecewise-uniform noise whose δ
    :func:`dpdro.certify_delta` computes exactly. Spreading mass across a cell can raise δ a little
    above the mechanism's; :func:`dpdro.reference.truncated_laplace_candidate` corrects for that."""
    h = check_positive("cell_width", cell_width)
    A, lam = half_width(epsilon, delta, sensitivity), sensitivity / epsilon
    j = np.arange(math.floor(-A / h), math.ceil(A / h) + 1)
    edges = j * h
    # ∫_a^b B e^{−|x|/λ} dx = Bλ·e^{−a/λ}·(1 − e^{−(b − a)/λ}) on 0 ≤ a < b ≤ A, evaluated per cell
    # (differences of the CDF would lose the relative accuracy of the small masses near ±A)
    a = np.minimum(np.abs(edges[:-1]), np.abs(edges[1:]))
    b = np.minimum(np.maximum(np.abs(edges[:-1]), np.abs(edges[1:])), A)
    probs = (
        truncated_laplace_normalizer(epsilon, delta, sensitivity)
        * lam
        * np.exp(-a / lam)
        * -np.expm1(-np.maximum(b - a, 0.0) / lam)
    )
    meta = {
        "mechanism": "truncated Laplace",
        "epsilon": epsilon,
        "delta": delta,
        "sensitivity": sensitivity,
    }
    return PiecewiseUniform(edges, probs / probs.sum(), grid=h, metadata=meta)


# ---------------------------------------------------------------------------- staircase
def _staircase_l1(epsilon: float, sensitivity: float, gamma: float) -> float:
    """E|X| = Δf·(b/(1 − b) + (γ² + b(1 − γ²))/(2(γ + b(1 − γ)))), b = e^{−ε}."""
    b = math.exp(-epsilon)
    s = gamma + b * (1.0 - gamma)
    return sensitivity * (1.0 / math.expm1(epsilon) + (gamma**2 + b * (1.0 - gamma**2)) / (2.0 * s))


def _staircase_l2(epsilon: float, sensitivity: float, gamma: float) -> float:
    """E X² = Δf²·(b(1 + b)/(1 − b)² + (b/(1 − b))·s₂/s + s₃/(3s)), s_j = γ^j + b(1 − γ^j)."""
    b = math.exp(-epsilon)
    r = 1.0 / math.expm1(epsilon)  # b/(1 − b)
    s, s2, s3 = (gamma**j + b * (1.0 - gamma**j) for j in (1, 2, 3))
    return sensitivity**2 * (r * (1.0 + b) / (-math.expm1(-epsilon)) + r * s2 / s + s3 / (3.0 * s))


def staircase_cells(epsilon: float, sensitivity: float, gamma: float, periods: int):
    """One side of the staircase: cell edges on [0, periods·Δf] and their probabilities (sum <
    ½)."""
    b, d = math.exp(-epsilon), sensitivity
    a = -math.expm1(-epsilon) / (2.0 * d * (gamma + (1.0 - gamma) * b))  # density on [0, γΔf)
    k = np.arange(periods, dtype=float)
    decay = np.exp(-epsilon * k)
    edges = np.column_stack((k * d, (k + gamma) * d)).ravel()
    probs = np.column_stack((a * decay * gamma * d, a * decay * b * (1.0 - gamma) * d)).ravel()
    return np.append(edges, periods * d), probs


def staircase_expected_loss(
    epsilon: float, sensitivity: float, gamma: float, loss, budget: TimeBudget | None = None
) -> float:
    r"""E c(X) of the staircase: closed forms for ℓ1 and ℓ2; for other losses the exact sum over
    its cells.

    The general case sums p(cell)·(average of c(x) + c(−x) over the cell) with the loss's exact
    cell averages over ⌈50/ε⌉ + 1 periods (the neglected mass is below e^{−50}), at most
    :data:`STAIRCASE_MAX_PERIODS` of them (a ``ValueError`` below ε ≈ 1e-5): 10⁶ cells at
    ε = 1e-4, seconds for a callable loss evaluated point by point, so a ``budget`` (a
    :class:`dpdro._budget.TimeBudget`) is checked between blocks of cells
    (:func:`dpdro.noise.cell_averages`; ``TimeoutError`` once it has expired). A cell narrower than
    a float step at its position (γ*Δf = e^{−150}Δf at ε = 300, next to kΔf) is charged c at its
    left end, within its width times the loss's slope of the average.
    """
    loss = make_loss(loss)
    k = power_exponent(loss)
    if k == 1.0:
        return _staircase_l1(epsilon, sensitivity, gamma)
    if k == 2.0:
        return _staircase_l2(epsilon, sensitivity, gamma)
    periods = math.ceil(50.0 / epsilon) + 1
    if periods > STAIRCASE_MAX_PERIODS:
        raise ValueError(
            f"epsilon must be at least {50.0 / STAIRCASE_MAX_PERIODS:g} for the staircase's "
            f"expected {loss.name} loss (a sum over ceil(50/epsilon) + 1 periods, at most "
            f"{STAIRCASE_MAX_PERIODS:g}; closed forms exist for l1 and l2 only), got {epsilon!r}"
        )
    edges, probs = staircase_cells(epsilon, sensitivity, gamma, periods)
    keep = probs > 0
    lo, hi = edges[:-1][keep], edges[1:][keep]
    flat = ~(hi > lo)
    with np.errstate(over="ignore", invalid="ignore"):  # ∞ beyond the floats, refused by callers
        both = np.empty(lo.size)
        if flat.any():
            both[flat] = np.asarray(loss(lo[flat]) + loss(-lo[flat]), dtype=float)
        wide = ~flat
        both[wide] = cell_averages(loss, lo[wide], hi[wide], budget) + cell_averages(
            loss, -hi[wide], -lo[wide], budget
        )
        terms = probs[keep] * both
    return math.fsum(terms) if np.all(np.isfinite(terms)) else math.inf


#: the most periods :func:`staircase_expected_loss` sums for a loss without a closed form (10⁷
#: cells, about a second)
STAIRCASE_MAX_PERIODS = 5_000_000


def staircase_optimal_gamma(epsilon, loss="l1", budget: TimeBudget | None = None) -> float:
    """γ* minimising the staircase's expected ``loss``: closed forms for ℓ1, γ* = 1/(1 + e^{ε/2}),
    and ℓ2, γ* = (c − b)/(1 − b) with b = e^{−ε} and c = (b(1 + b)/2)^{1/3} (evaluated as
    b(1 + 2b)/(2(c² + bc + b²)), free of cancellation); bounded scalar minimisation of the exact
    expected loss over [0, 1] for any other loss (γ* does not depend on Δf: the staircase scales
    with it), each evaluation within ``budget`` (``TimeoutError`` once it has expired: at
    ε = 0.0025 a callable loss had taken 10 s for this search, :func:`staircase_expected_loss`).

    The staircase is symmetric, so it costs under c what it costs under (c(x) + c(−x))/2, which
    for a loss positively homogeneous of degree 1 or 2 (``Loss.degree``: the pinball and the
    asymmetric loss) is a multiple of ℓ1 or ℓ2: theirs is γ* (the search had found it to 1e-8
    at ε = 0.7, 3 and 8 for pinball τ = 0.3 and 0.8 and the asymmetric loss, in 5 ms of a call
    limited to 0.01 s)."""
    epsilon = check_positive("epsilon", epsilon)
    loss = make_loss(loss)
    k = loss.degree
    if k == 1.0:
        return 1.0 / (1.0 + math.exp(0.5 * epsilon))
    b = math.exp(-epsilon)
    if k == 2.0:
        c = (0.5 * b * (1.0 + b)) ** (1.0 / 3.0)
        return b * (1.0 + 2.0 * b) / (2.0 * (c * c + b * c + b * b))
    key = (epsilon, loss)
    if key in _GAMMAS:
        return _GAMMAS[key]
    cost = lambda g: staircase_expected_loss(epsilon, 1.0, float(g), loss, budget)  # noqa: E731
    res = optimize.minimize_scalar(
        cost, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-10}
    )
    return remember(_GAMMAS, key, min((float(res.x), 0.0, 1.0), key=cost))


#: γ* of completed searches of :func:`staircase_optimal_gamma` by (ε, loss object): one call of
#: :func:`dpdro.optimal_noise` needs it for the literature values, the best shift's search, the
#: plateau and the candidate (pinball τ = 0.861, ε = 0.0016: two searches of 0.43 s each in a call
#: of 1.42 s)
_GAMMAS: dict[tuple[float, Loss], float] = {}


def remember(cache: dict, key, value):
    """``value``, kept in ``cache`` under ``key`` (the oldest of 64 entries dropped)."""
    if len(cache) >= 64:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def staircase_noise(epsilon: float, sensitivity: float, gamma: float, periods) -> PiecewiseUniform:
    r"""The staircase truncated to [−periods·Δf, periods·Δf] and renormalised.

    Truncation breaks pure DP: a shift by Δf uncovers the outermost period, so the truncated
    noise is (ε, δ_P)-DP with δ_P = (1 − b)·b^{P−1}/(2(1 − b^P)), b = e^{−ε}, P = ``periods``
    (stored in ``metadata["delta"]``; :func:`dpdro.certify_delta` confirms it up to its rounding
    allowance, which :meth:`dpdro.mechanisms.Staircase.to_piecewise_uniform` records instead where
    larger). Empty cells (γ ∈ {0, 1}) are dropped.
    """
    periods = check_int("periods", periods, minimum=1)
    edges, probs = staircase_cells(epsilon, sensitivity, gamma, periods)
    keep = np.diff(edges) > 0
    left = np.append(edges[:-1][keep], edges[-1])
    right_probs = probs[keep]
    all_edges = np.concatenate((-left[::-1], left[1:]))
    all_probs = np.concatenate((right_probs[::-1], right_probs))
    norm = -math.expm1(-epsilon * periods)  # 1 − b^P, the mass kept
    delta = -math.expm1(-epsilon) * math.exp(-epsilon * (periods - 1)) / (2.0 * norm)
    meta = {
        "mechanism": "staircase",
        "epsilon": epsilon,
        "sensitivity": sensitivity,
        "gamma": gamma,
        "periods": periods,
        "delta": delta,
    }
    return PiecewiseUniform(all_edges, all_probs / norm, metadata=meta)


def _tulap_centre_and_count(epsilon: float, delta: float) -> tuple[float, int]:
    """(c₁, K) of :func:`tulap_cells`: the mass of the central unit cell and K = min{k ≥ 1 :
    c₁e^{−εk} ≤ δ}, so that the cells number 2K − 1 or 2K + 1 (without building them)."""
    b, one_minus_b = math.exp(-epsilon), -math.expm1(-epsilon)
    c1 = (one_minus_b + 2.0 * delta * b) / (1.0 + b)
    big_k = max(1, math.ceil(math.log(c1 / delta) / epsilon))  # guarded below
    while big_k > 1 and c1 * math.exp(-epsilon * (big_k - 1)) <= delta:
        big_k -= 1
    while c1 * math.exp(-epsilon * big_k) > delta:
        big_k += 1
    return c1, big_k


def tulap_cell_count(epsilon: float, delta: float) -> int:
    """How many cells :func:`tulap_cells` has at most (2K + 1), without building them."""
    return 2 * _tulap_centre_and_count(epsilon, delta)[1] + 1


def tulap_cells(epsilon: float, delta: float, sensitivity: float) -> PiecewiseUniform:
    """Tulap(0, e^{−ε}, q) scaled by Δf as cells (see :class:`Tulap`). A partial cell narrower than
    a float step at its position is dropped: its mass, below 1e-16 of its neighbour's, is
    renormalised away."""
    c1, big_k, partial_len = _tulap_partial(epsilon, delta)
    k = np.arange(1, big_k)
    full = c1 * np.exp(-epsilon * k)  # cells [k − ½, k + ½), k = 1 … K − 1
    partial = c1 * math.exp(-epsilon * big_k) * partial_len  # of [K − ½, t)
    inner = np.concatenate(([0.5], k + 0.5))  # ½, 3/2, …, K − ½
    t = big_k - 0.5 + partial_len
    if _tulap_keeps_partial(t, big_k, sensitivity):
        right_edges, right_probs = np.append(inner, t), np.append(full, partial)
    else:
        right_edges, right_probs = inner, full
    edges = np.concatenate((-right_edges[::-1], right_edges)) * sensitivity
    probs = np.concatenate((right_probs[::-1], [c1], right_probs))
    return PiecewiseUniform(edges, probs / math.fsum(probs))


def _tulap_partial(epsilon: float, delta: float) -> tuple[float, int, float]:
    """(c₁, K, ℓ) of :func:`tulap_cells`: ℓ the length of its partial outer cell [K − ½, t)."""
    c1, big_k = _tulap_centre_and_count(epsilon, delta)
    one_minus_b = -math.expm1(-epsilon)
    return c1, big_k, -math.expm1(math.log(delta / c1) + epsilon * (big_k - 1)) / one_minus_b


def _tulap_keeps_partial(t: float, big_k: int, sensitivity: float) -> bool:
    """Whether :func:`tulap_cells` keeps its partial cell: wider than a float step at Δf·t."""
    return t * sensitivity > (big_k - 0.5) * sensitivity


def tulap_outer_edge(epsilon: float, delta: float, sensitivity: float) -> float:
    """The last edge of :func:`tulap_cells` (the support's half-width, Δf·t), the same float,
    without building the cells (a bisection over δ evaluates it some 60 times)."""
    _, big_k, partial_len = _tulap_partial(epsilon, delta)
    t = big_k - 0.5 + partial_len
    return (t if _tulap_keeps_partial(t, big_k, sensitivity) else big_k - 0.5) * sensitivity


def truncated_laplace_centre(epsilon: float, delta: float, sensitivity: float, support) -> float:
    """The centre c closest to 0 with [c − A, c + A] inside ``support`` (``None``: the real line; A
    the truncated Laplace half-width; the support's midpoint when it is narrower than 2A): the
    centre of the truncated Laplace profile of :mod:`dpdro.grid`'s scaled LP."""
    if support is None:
        return 0.0
    lo, hi = support
    a = truncated_laplace_half_width(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    if hi - lo <= 2.0 * a:
        return 0.5 * (lo + hi)
    return min(max(0.0, lo + a), hi - a)


# --------------------------------------------------- monotone noise on a support on one side of 0
def uniform_noise(delta: float, sensitivity: float, side: int = 1) -> PiecewiseUniform:
    """The uniform noise on [0, W] (``side`` −1: [−W, 0]) on the lattice h = Δf/2^j, W the least
    multiple of h with W ≥ Δf/(δ(1 − m)). It is (ε, δ)-DP for every ε: shifting it by |φ| ≤ Δf
    moves mass |φ|/W ≤ δ (the total variation between U[0, W] and U[φ, φ + W]). The lattice
    certificate (:func:`dpdro.certify_delta`) allows 2.02·n·u·δ for its n = W/h lattice cells, so
    j ≤ 16 is the largest with n ≤ 2^32 (j = 0 below δ = 2^−32: n = 1/δ) and m = 5nu + 1e-9; W then
    exceeds Δf/δ by at most 2^−j·δ + m relative (2.2e-4 at δ = 1e-12). For a density
    non-increasing away from 0 on a support on one side of 0 it is within δ² of optimal
    (:func:`monotone_one_sided_bound`)."""
    j = max(0, min(16, math.floor(math.log2(delta * 2.0**32))))
    margin = 5 * _U * 2**j / delta + 1e-9
    target = 1 / (Fraction(delta) * (1 - Fraction(margin)))  # W/Δf, exact
    h = sensitivity / 2**j
    ticks = math.ceil(2**j * target)
    edges = np.array([0.0, ticks * h]) if side > 0 else np.array([-ticks * h, 0.0])
    return PiecewiseUniform(edges, np.ones(1), grid=h, metadata={"mechanism": "uniform"})


def monotone_one_sided_bound(delta: float, sensitivity: float, loss: Loss, side: int = 1) -> float:
    """E c(X̄), X̄ = δ·(point mass at 0) + (1 − δ)·U[Δf, Δf/δ] (``side`` −1: mirrored), rounded
    down: a lower bound on E c(X) for every (ε, δ)-DP noise X (shifts |φ| ≤ Δf) with a density
    non-increasing away from 0 on a support in [0, ∞), for a loss non-decreasing there
    (Assumption 1). Proof: the shift φ ≤ Δf maps [0, φ) onto [−φ, 0), where X has no mass, so
    F(x) = P(X < x) ≤ δ for x ≤ Δf; the density f is non-increasing, so for y ≥ Δf,
    f(y) ≤ F(Δf)/Δf and F(x) ≤ F(Δf)·x/Δf ≤ δx/Δf. These bounds are the CDF of X̄, so X̄ is
    stochastically smaller than X. The uniform noise on [0, Δf/δ] costs at most 1/(1 − δ²) times
    as much for ℓ1, so within 0.1% for δ ≤ 0.03."""
    a, b = (sensitivity, sensitivity / delta) if side > 0 else (-sensitivity / delta, -sensitivity)
    average = _average_below(loss, a, b)
    return float(np.nextafter((delta * float(loss(0.0)) + (1.0 - delta) * average)
                              * (1.0 - 1e-12), 0.0))


def _average_below(loss: Loss, a: float, b: float) -> float:
    """The average of c over [a, b], on one side of 0, or less: the exact cell average of a built-in
    loss; for a :class:`~dpdro.losses.CallableLoss` (whose cell averages err upwards), c growing
    away from 0 (Assumption 1, as its check requires unless ``tail_infimum`` is given), the
    Riemann sum of :data:`_RIEMANN` pieces at each piece's end nearest 0, rounded down (it lies
    below the integral by at most |c(b) − c(a)|/_RIEMANN)."""
    if not isinstance(loss, CallableLoss):
        return float(loss.cell_average(np.array([a]), np.array([b]))[0])
    t = np.linspace(a, b, _RIEMANN + 1)
    ends = t[:-1] if a >= 0.0 else t[1:]
    return float(np.sum(loss(ends) * np.diff(t)) / (b - a) * (1.0 - 1e-9))


_RIEMANN = 2**14  # pieces of _average_below's sum (ℓ1 on [1, 1000] by a callable: 0.006% low)


# ------------------------------------------------------------------ the near optimal lower bound
# (its derivation: dpdro.mechanisms.near_optimal_lower_bound; here because the engine's calls out of
# time use it, dpdro._schedule, and the engine imports no literature class)
def _envelope(loss: Loss, t: np.ndarray) -> np.ndarray:
    """ĉ(t) = inf{c(x) : |x| ≥ t}: the largest symmetric minorant of c that is non-decreasing in
    |x|."""
    k = power_exponent(loss)
    if k is not None:
        return t**k
    return np.array([loss.tail_infimum(-s, s) for s in t.tolist()])


def _increments(loss: Loss, k: np.ndarray, sensitivity: float) -> np.ndarray:
    """w_k = ĉ(kΔf) − ĉ((k − 1)Δf) for an array of consecutive integers k ≥ 1 (exact in integers for
    |x| and x²; one tail infimum per k for other losses)."""
    k = k.astype(float)
    p = power_exponent(loss)
    if p is not None:
        return sensitivity**p * (k**p - (k - 1.0) ** p)
    return np.diff(_envelope(loss, np.append(k[0] - 1.0, k) * sensitivity))  # (k consecutive)


def near_optimal_bound(epsilon: float, delta: float, sensitivity: float, loss: Loss) -> float:
    """:func:`dpdro.mechanisms.near_optimal_lower_bound` for validated arguments: the sum of
    :func:`near_optimal_sum` rounded down by its error bound (at least ĉ(0))."""
    value, err, base = near_optimal_sum(epsilon, delta, sensitivity, loss)
    return float(max(base, np.nextafter(value - err, -math.inf)))


def near_optimal_terms(epsilon: float, delta: float) -> int:
    """n = ⌊A/Δf⌋ of :func:`dpdro.mechanisms.near_optimal_lower_bound`: the terms of its sum (its
    cost: a loss other than |x|^k evaluates ``tail_infimum`` n + 1 times)."""
    return _near_optimal_tails(epsilon, delta)[3]


def _near_optimal_tails(epsilon: float, delta: float):
    """(q, log(1 + q), k ↦ L_k, n = max{k : L_k ≥ 0}) of
    :func:`dpdro.mechanisms.near_optimal_lower_bound`."""
    q = math.expm1(epsilon) / (2.0 * delta)
    log_top = math.log1p(q)  # = ε·A/Δf
    tail = lambda k: np.expm1(log_top - epsilon * np.asarray(k, dtype=float)) / (2.0 * q)  # noqa: E731  L_k
    n = max(0, math.floor(log_top / epsilon))
    while n > 0 and tail(n) < 0:  # guard the floor: n = max{k : L_k ≥ 0}
        n -= 1
    while tail(n + 1) >= 0:
        n += 1
    return q, log_top, tail, n


def near_optimal_sum(
    epsilon: float, delta: float, sensitivity: float, loss: Loss, *, subtract: int | None = None
) -> tuple[float, float, float]:
    """(value, error bound, ĉ(0)) of ĉ(0) + 2·Σ_{k=1}^{n} (ĉ(kΔf) − ĉ((k − 1)Δf))·(L_k − s) for
    validated arguments (:func:`dpdro.mechanisms.near_optimal_lower_bound`), with s = 0
    (``subtract=None``) or s = L_{n + subtract}. ``subtract=0`` drops the leftover mass L_n (still
    a lower bound, a weaker one); ``subtract=1`` (s = L_{n+1} < 0) is not a lower bound. The error
    bound covers the floating-point evaluation for s = 0 and s = L_n.
    """
    q, log_top, tail, n = _near_optimal_tails(epsilon, delta)
    base = float(_envelope(loss, np.zeros(1))[0])
    if n == 0:
        return base, 0.0, base
    shift = 0.0 if subtract is None else float(tail(n + subtract))
    terms, weight_sum = [], 0.0
    for start in range(1, n + 1, 1 << 20):  # chunks keep the memory bounded when δ is tiny
        k = np.arange(start, min(n, start + (1 << 20) - 1) + 1)
        w = _increments(loss, k, sensitivity)
        terms.append(math.fsum(w * (tail(k) - shift)))
        weight_sum += math.fsum(w)
    value = base + 2.0 * math.fsum(terms)
    # Error bound. The exponent log(1 + q) − kε of each L_k (and of the shift) is off by at most
    # 4u·log(1 + q) (k ≤ n means kε ≤ log(1 + q)), q by 2u relative, and e^z ≤ 1 + q, so each L_k −
    # shift is off by at most (1 + q)/(2q)·16u·log(1 + q) + 4u·L_k; fsum adds a relative error of
    # 2u.
    err = 2.0 * weight_sum * (1.0 + q) / (2.0 * q) * 16.0 * _U * log_top + 8.0 * _U * abs(value)
    return value, err, base
