"""What dpdro's noise is compared against: the literature mechanisms at one (ε, δ, Δf) and the
'near optimal lower bound' on every (ε, δ)-DP additive noise."""

from __future__ import annotations

import math

import numpy as np

from .._closed_forms import power_exponent
from .._rounding import UNIT_ROUNDOFF as _U
from .._validation import check_open_unit, check_positive
from ..losses import Loss, make_loss
from .gaussian import AnalyticGaussian, Gaussian
from .laplace import Laplace, TruncatedLaplace
from .staircase import Staircase
from .tulap import Tulap

__all__ = ["BASELINES", "baselines", "meets_delta", "near_optimal_lower_bound"]


BASELINES = ("laplace", "gaussian", "analytic_gaussian", "truncated_laplace", "staircase", "tulap")


def baselines(*, epsilon, delta, sensitivity=1.0, loss="l1", names=BASELINES) -> dict:
    r"""The literature mechanisms at the same (ε, δ, Δf), keyed by the names in ``BASELINES``.

    Laplace and the staircase (γ optimised for ``loss``) are ε-DP, hence (ε, δ)-DP for every δ; the
    Gaussian, analytic Gaussian, truncated Laplace and Tulap are calibrated to (ε, δ). The classical
    Gaussian calibration is proven only for ε < 1; its exact δ (``exact_delta()``) may exceed δ
    beyond. A mechanism that cannot be built at these parameters (Tulap at a δ below its
    certificate's rounding allowance) is left out. ``names``: the mechanisms to build (a subset of
    ``BASELINES``; Tulap's certificate takes time about quadratic in its number of cells).
    """
    makers = {
        "laplace": lambda: Laplace(epsilon=epsilon, sensitivity=sensitivity),
        "gaussian": lambda: Gaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity),
        "analytic_gaussian": lambda: AnalyticGaussian(
            epsilon=epsilon, delta=delta, sensitivity=sensitivity
        ),
        "truncated_laplace": lambda: TruncatedLaplace(
            epsilon=epsilon, delta=delta, sensitivity=sensitivity
        ),
        "staircase": lambda: Staircase(epsilon=epsilon, sensitivity=sensitivity, loss=loss),
        "tulap": lambda: Tulap(epsilon=epsilon, delta=delta, sensitivity=sensitivity),
    }
    out = {}
    for name in names:
        try:
            out[name] = makers[name]()
        except ValueError:
            if name != "tulap":
                raise
    return out


def meets_delta(mechanism, delta: float) -> bool:
    """Whether ``mechanism`` is (ε, δ)-DP at its own ε: its ``exact_delta()`` (pure-DP mechanisms
    have none, i.e. 0) is at most δ, up to a relative 1e-9 for the floating-point evaluation of
    closed forms that equal δ exactly (the truncated Laplace's). The classical Gaussian fails it
    for large ε."""
    exact = getattr(mechanism, "exact_delta", None)
    return exact is None or exact() <= delta * (1.0 + 1e-9)


# ---------------------------------------------------------------------------------- lower bound
def _envelope(loss: Loss, t: np.ndarray) -> np.ndarray:
    """ĉ(t) = inf{c(x) : |x| ≥ t}: the largest symmetric minorant of c that is non-decreasing in
    |x|."""
    k = power_exponent(loss)
    if k is not None:
        return t**k
    return np.array([loss.tail_infimum(-s, s) for s in t.tolist()])


def _increments(loss: Loss, k: np.ndarray, sensitivity: float) -> np.ndarray:
    """w_k = ĉ(kΔf) − ĉ((k − 1)Δf) for an integer array k ≥ 1 (exact in integers for |x| and x²)."""
    k = k.astype(float)
    p = power_exponent(loss)
    if p is not None:
        return sensitivity**p * (k**p - (k - 1.0) ** p)
    return _envelope(loss, k * sensitivity) - _envelope(loss, (k - 1.0) * sensitivity)


def near_optimal_lower_bound(*, epsilon, delta, sensitivity=1.0, loss="l1") -> float:
    r"""The 'near optimal lower bound' on the expected loss of any (ε, δ)-DP additive noise.

    Section 5.1 of Selvi et al. uses "the 'near optimal lower bound' of Geng and Viswanath (2015,
    Thm 8) and Geng et al. (2020)" as benchmark lower bound (Tables 1, 4, 5, 6; Figure 3), and
    footnote 3 notes that it "involves a non-monotonic parameter rounding". We implement it as the
    following rigorous bound, valid for every dpdro loss.

    Derivation. Symmetrising a noise X (mixing X and −X) keeps (ε, δ)-DP and the loss of the
    symmetric minorant ĉ(t) = inf{c(x) : |x| ≥ t} ≤ c, so let X be symmetric; then
    T(t) = P(X ≥ t) ≥ ½ for t ≤ 0. The event [t, ∞) and the shift Δf give
    T(t − Δf) ≤ e^ε T(t) + δ, hence P(X > t) ≥ L_k for t ∈ [(k − 1)Δf, kΔf) with L_0 = ½,
    L_k = e^{−ε}(L_{k−1} − δ), i.e.

        L_k = ((1 + q)e^{−kε} − 1)/(2q),   q = (e^ε − 1)/(2δ),

    which is non-negative exactly for k ≤ A/Δf, where A = (Δf/ε)·log(1 + q) is the truncated
    Laplace half-width. With n = ⌊A/Δf⌋ and E ĉ(X) = ĉ(0) + ∫₀^∞ P(|X| > t) dĉ(t),

        E c(X) ≥ ĉ(0) + 2·Σ_{k=1}^{n} (ĉ(kΔf) − ĉ((k − 1)Δf))·L_k,

    i.e. 2Δf·Σ L_k for ℓ1 and 2Δf²·Σ (2k − 1)L_k for ℓ2. Equivalently: one-sided masses
    m_k = a·e^{−kε}, a = (δ + (e^ε − 1)/2)e^{−ε}, at the distances kΔf, k = 0, …, n − 1, plus the
    leftover r = L_n = ½ − Σ_{k<n} m_k at distance nΔf: the geometric profile behind the authors'
    formula below. It is the tightest bound of this family and decreases continuously in δ. (The
    two roundings of A/Δf that the paper's footnote 3 alludes to are reproduced in the book's
    ``repro.literature``; one of them is not a valid lower bound.)

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    delta : float
        Privacy parameter δ in (0, 1). For δ ≥ ½ the bound is the trivial ĉ(0).
    sensitivity : float
        Sensitivity Δf > 0.
    loss : str, Loss or callable
        ``"l1"``, ``"l2"``, a dpdro loss or a callable c(x) (through :func:`dpdro.make_loss`).

    Returns
    -------
    float
        A valid lower bound on min E c(X) over all (ε, δ)-DP additive noise, rounded down by a
        bound on its floating-point error.
    Notes
    -----
    The cost is O(n) with n = ⌊A/Δf⌋ ≈ min{1/(2δ), 1 + log(1/(2δ))/ε} terms (one call of
    ``loss.tail_infimum`` per term for losses other than |x|^k).

    References
    ----------
    .. [1] Q. Geng and P. Viswanath, "Optimal noise adding mechanisms for approximate differential
       privacy", IEEE Trans. Inf. Theory 62(2), 2016 (arXiv:1305.1330), Theorem 8.
    .. [2] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020.
    .. [3] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 5.1 (footnote 3), Figure 3, Appendix D (Tables 4–6).
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    value, err, base = near_optimal_sum(epsilon, delta, sensitivity, make_loss(loss))
    return float(max(base, np.nextafter(value - err, -math.inf)))


def near_optimal_sum(
    epsilon: float, delta: float, sensitivity: float, loss: Loss, *, subtract: int | None = None
) -> tuple[float, float, float]:
    """(value, error bound, ĉ(0)) of ĉ(0) + 2·Σ_{k=1}^{n} (ĉ(kΔf) − ĉ((k − 1)Δf))·(L_k − s) for
    validated arguments (:func:`near_optimal_lower_bound`), with s = 0 (``subtract=None``) or
    s = L_{n + subtract}. ``subtract=0`` drops the leftover mass L_n (still a lower bound, a weaker
    one); ``subtract=1`` (s = L_{n+1} < 0) is not a lower bound. The error bound covers the
    floating-point evaluation for s = 0 and s = L_n.
    """
    q = math.expm1(epsilon) / (2.0 * delta)
    log_top = math.log1p(q)  # = ε·A/Δf
    tail = lambda k: np.expm1(log_top - epsilon * np.asarray(k, dtype=float)) / (2.0 * q)  # noqa: E731  L_k
    n = max(0, math.floor(log_top / epsilon))
    while n > 0 and tail(n) < 0:  # guard the floor: n = max{k : L_k ≥ 0}
        n -= 1
    while tail(n + 1) >= 0:
        n += 1
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
