"""The Laplace mechanism (pure ε-DP) and the truncated Laplace mechanism of Geng et al. (2020)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from .._closed_forms import (
    half_width,
    power_exponent,
    truncated_laplace_cdf,
    truncated_laplace_half_width,
    truncated_laplace_noise,
    truncated_laplace_normalizer,
    truncated_laplace_q,
)
from .._validation import check_open_unit, check_positive, check_real
from ..losses import make_loss
from ..noise import PiecewiseUniform
from ..privacy import check_epsilon
from ._common import (
    finite_expected_loss,
    integrate_loss,
    unbounded_expected_loss,
    unit_interval,
)

__all__ = ["Laplace", "TruncatedLaplace", "truncated_laplace_half_width"]


@dataclass(frozen=True)
class Laplace:
    r"""The Laplace mechanism: X ~ Laplace(0, Δf/ε), pure ε-DP.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    sensitivity : float
        Sensitivity Δf > 0 of the query.

    Notes
    -----
    Density p(x) = exp(−|x|/λ)/(2λ) with scale λ = Δf/ε; E|X| = λ, E X² = 2λ². In Example 1 of
    Selvi et al. (Δf = 70/194 thousand INR, ε = 1) the noise has standard deviation √2·λ = 510.28
    INR. Sampling uses a :class:`numpy.random.Generator`; production use needs a secure source, e.g.
    ``sample(size, rng=secrets.randbits(128))``.

    References
    ----------
    .. [1] C. Dwork, F. McSherry, K. Nissim and A. Smith, "Calibrating noise to sensitivity in
    private
       data analysis", TCC 2006.
    .. [2] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 1 (Example 1).
    """

    epsilon: float
    sensitivity: float = 1.0

    def __init__(self, *, epsilon, sensitivity=1.0):
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))

    @property
    def scale(self) -> float:
        """λ = Δf/ε."""
        return self.sensitivity / self.epsilon

    def pdf(self, x):
        x = np.asarray(x, dtype=float)
        return np.exp(-np.abs(x) / self.scale) / (2.0 * self.scale)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        half_tail = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x < 0, half_tail, 1.0 - half_tail)

    def ppf(self, u):
        """Inverse CDF: −sign(u − ½)·λ·log(1 − 2|u − ½|)."""
        u = unit_interval(u)
        tail = np.minimum(u, 1.0 - u)
        with np.errstate(divide="ignore"):
            return np.sign(u - 0.5) * -self.scale * np.log(2.0 * tail)

    def sample(self, size=None, rng=None):
        """Draw noise with ``numpy.random.default_rng(rng).laplace`` (see the class notes on
        security)."""
        return np.random.default_rng(rng).laplace(0.0, self.scale, size)

    def expected_loss(self, loss="l1") -> float:
        """E c(X): λ for ℓ1, 2λ² for ℓ2, adaptive quadrature for any other dpdro loss."""
        lam = self.scale
        return unbounded_expected_loss(self, loss, lambda: lam, lambda: 2.0 * lam**2, self.pdf, lam)

    @property
    def std(self) -> float:
        """√2·Δf/ε."""
        return math.sqrt(2.0) * self.scale

    def exact_delta(self, epsilon=None) -> float:
        r"""The smallest δ for which the mechanism is (ε', δ)-DP: max(0, 1 − e^{(ε' − ε)/2}).

        For ε' = ε (the default) this is 0. The worst shift is φ = ±Δf and the worst event the set
        where the privacy loss exceeds ε'.
        """
        e = self.epsilon if epsilon is None else check_positive("epsilon", epsilon)
        return float(max(0.0, -math.expm1(0.5 * (e - self.epsilon))))


def _log1p_defect(q: float) -> float:
    """(q − log(1 + q))/q, with a series for small q where the difference cancels."""
    if q > 0.05:
        return (q - math.log1p(q)) / q
    return math.fsum(-((-q) ** (j - 1)) / j for j in range(2, 30))  # Σ_{j≥2} (−1)^j q^{j−1}/j


def _log1p_defect2(q: float) -> float:
    """(2(q − L) − L²)/q with L = log(1 + q), by the series Σ_{j≥3} (−1)^j (2/j)(1 − H_{j−1})
    q^{j−1} (H the harmonic numbers) for small q."""
    if q > 0.05:
        L = math.log1p(q)
        return (2.0 * (q - L) - L * L) / q
    terms, harmonic = [], 1.0  # H_1
    for j in range(2, 30):
        terms.append((-1) ** j * (2.0 / j) * (1.0 - harmonic) * q ** (j - 1))
        harmonic += 1.0 / j
    return math.fsum(terms)


def _check_q_delta(epsilon: float, delta) -> float:
    """δ in (0, 1) with q = (e^ε − 1)/(2δ) a finite float (every formula of
    :class:`TruncatedLaplace` uses q: at ε = 50, δ = 1e-300 its losses came out NaN)."""
    delta = check_open_unit("delta", delta)
    if not math.isfinite(truncated_laplace_q(epsilon, delta)):
        smallest = math.expm1(epsilon) / 2.0 / sys.float_info.max
        raise ValueError(
            f"delta must be at least (e^epsilon - 1)/(2*1.8e308) = {smallest:.3g} for the "
            f"truncated Laplace mechanism at epsilon = {epsilon!r} (q = (e^epsilon - 1)/(2*delta) "
            f"must be a finite float), got {delta!r}"
        )
    return delta


@dataclass(frozen=True)
class TruncatedLaplace:
    r"""The truncated Laplace mechanism of Geng, Ding, Guo and Kumar (2020).

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    delta : float
        Privacy parameter δ in (0, 1); see the notes for δ ≥ 1/2.
    sensitivity : float
        Sensitivity Δf > 0 of the query.

    Notes
    -----
    Density p(x) = B·e^{−|x|/λ} on [−A, A] with (GitHub appendix, "Truncated Laplace distribution")

        λ = Δf/ε,  A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)),  B = 1/(2λ(1 − e^{−A/λ})).

    Writing q = (e^ε − 1)/(2δ), so that A = λ·log(1 + q) and B·λ = (1 + q)/(2q), the appendix's CDF
    is F(x) = ((1 + q)e^{x/λ} − 1)/(2q) for −A ≤ x ≤ 0 and 1 − F(−x) for x ≥ 0; its inverse
    F⁻¹(u) = −sign(u − ½)·λ·log(min{u, 1 − u}/(Bλ) + e^{−A/λ}) = sign(u − ½)·λ·(log(1 + q) −
    log(1 + 2q·min{u, 1 − u})) is the sampler (inverse transform), and

        E|X| = λ·(1 − log(1 + q)/q),   E X² = 2λ²·(1 − (log(1 + q) + ½ log²(1 + q))/q)

    (evaluated with series where the differences cancel, i.e. for small q).

    Privacy. For |φ| ≤ Δf the likelihood ratio p(y)/p(y − φ) ≤ e^{|φ|/λ} ≤ e^ε wherever both are
    positive, so δ(φ) = P(X < −A + |φ|): the mass the shifted density does not cover. For δ ≤ 1/2
    (then A ≥ Δf) the worst shift φ = ±Δf gives exactly the nominal δ: the mechanism is tight.
    Geng et al. (2020), and diffprivlib's ``LaplaceTruncated``, state the mechanism for δ < 1/2.
    Selvi et al. use it for δ up to 0.75 (Tables 1 and 4–6), so we allow 0 < δ < 1: for δ > 1/2
    the same formulas give A < Δf and a density that is still (ε, δ)-DP but not tight; its exact δ,
    P(X < −A + Δf) < δ, is reported by :meth:`exact_delta`. Sampling uses a
    :class:`numpy.random.Generator`; production use needs a secure source (e.g. ``secrets``).

    In Example 1 (Δf ≈ 0.36 thousand INR, ε = 1, δ = 0.2) the standard deviation is 273.48 INR.

    References
    ----------
    .. [1] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020 (arXiv:1810.00877).
    .. [2] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 1 (Example 1), Section 5.1, and the GitHub appendix "Sampling noise
       from various distributions: truncated Laplace distribution".
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0

    def __init__(self, *, epsilon, delta, sensitivity=1.0):
        object.__setattr__(self, "epsilon", check_epsilon(epsilon))
        object.__setattr__(self, "delta", _check_q_delta(self.epsilon, delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))

    @property
    def scale(self) -> float:
        """λ = Δf/ε."""
        return self.sensitivity / self.epsilon

    @property
    def _q(self) -> float:
        return truncated_laplace_q(self.epsilon, self.delta)

    @property
    def half_width(self) -> float:
        """A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)), the support is [−A, A]."""
        return half_width(self.epsilon, self.delta, self.sensitivity)

    @property
    def normalizer(self) -> float:
        """B = 1/(2λ(1 − e^{−A/λ})) = (1 + q)/(2qλ), the density at 0."""
        return truncated_laplace_normalizer(self.epsilon, self.delta, self.sensitivity)

    def pdf(self, x):
        x = np.asarray(x, dtype=float)
        inside = np.abs(x) <= self.half_width
        return np.where(inside, self.normalizer * np.exp(-np.abs(x) / self.scale), 0.0)

    def cdf(self, x):
        return truncated_laplace_cdf(x, self.epsilon, self.delta, self.sensitivity)

    def ppf(self, u):
        """Inverse CDF from the GitHub appendix: sign(u − ½)·λ·(log(1 + q) − log(1 + 2q·min{u, 1 −
        u}))."""
        u = unit_interval(u)
        q = self._q
        magnitude = self.scale * (math.log1p(q) - np.log1p(2.0 * q * np.minimum(u, 1.0 - u)))
        return np.sign(u - 0.5) * magnitude

    def sample(self, size=None, rng=None):
        """Inverse-transform sampling with :meth:`ppf` (see the class notes on security)."""
        return self.ppf(np.random.default_rng(rng).random(size))

    def to_piecewise_uniform(self, cell_width: float) -> PiecewiseUniform:
        r"""The mechanism's masses on the cells [jh, (j + 1)h), h = ``cell_width``, that meet [−A,
        A], each spread uniformly over its cell (``grid = h``): a piecewise-uniform noise whose δ
        :func:`dpdro.certify_delta` computes exactly (spreading mass across a cell can raise δ a
        little above the mechanism's)."""
        return truncated_laplace_noise(self.epsilon, self.delta, self.sensitivity, cell_width)

    def expected_loss(self, loss="l1") -> float:
        """E c(X): closed forms for ℓ1 and ℓ2 (see the class notes), adaptive quadrature
        otherwise."""
        loss = make_loss(loss)
        k = power_exponent(loss)
        if k == 1.0:
            return finite_expected_loss(self, loss, lambda: self.scale * _log1p_defect(self._q))
        if k == 2.0:
            return finite_expected_loss(self, loss, lambda: self.scale**2 * _log1p_defect2(self._q))
        A = self.half_width
        return finite_expected_loss(
            self, loss, lambda: integrate_loss(loss, self.pdf, -A, A, min(self.scale, A))
        )

    @property
    def std(self) -> float:
        return math.sqrt(self.expected_loss("l2"))

    def exact_delta(self, phi=None) -> float:
        r"""δ(φ) = sup_A P(X ∈ A) − e^ε P(X + φ ∈ A) = P(X < −A + |φ|), or its sup over |φ| ≤ Δf.

        With ``phi=None`` the worst shift φ = Δf is used: the exact smallest δ of the mechanism. For
        w = |φ| ≤ A the mass is (e^{w/λ} − 1)/(2q) = δ·expm1(w/λ)/expm1(ε), which equals δ at w = Δf
        to the last bit; for w > A (possible only when δ > 1/2) it is 1 − P(X < A − w).
        """
        if phi is None:
            w = self.sensitivity
        else:
            w = abs(check_real("phi", phi))
            if w > self.sensitivity:
                raise ValueError(
                    f"phi must satisfy |phi| <= sensitivity = {self.sensitivity!r}, got {phi!r}"
                )
        A, lam = self.half_width, self.scale
        if w <= A:
            return self.delta * math.expm1(w / lam) / math.expm1(self.epsilon)
        return 1.0 - math.expm1((2.0 * A - w) / lam) / (2.0 * self._q)
