"""What dpdro's noise is compared against: the literature mechanisms at one (ε, δ, Δf) and the
'near optimal lower bound' on every (ε, δ)-DP additive noise."""

from __future__ import annotations

from .._closed_forms import near_optimal_bound
from .._validation import check_open_unit, check_positive
from ..losses import make_loss
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
    return near_optimal_bound(epsilon, delta, sensitivity, make_loss(loss))


