"""The Tulap mechanism: the canonical noise distribution of (ε, δ)-DP (Awan and Vadhan 2023)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._closed_forms import tulap_cells as _tulap_cells
from .._validation import check_open_unit, check_positive
from ..noise import PiecewiseUniform
from ..privacy import certify_delta
from ._common import finite_expected_loss

__all__ = ["Tulap"]


#: the most cells a :class:`Tulap` is built and certified with (about 15 µs each: 30 s)
MAX_CELLS = 2_000_000


def _certified_tulap(
    epsilon: float, delta: float, sensitivity: float
) -> tuple[PiecewiseUniform, float, float]:
    """(cells, design δ′, certificate) of Tulap at the largest design δ′ ≤ δ tried whose float cells
    certify at ≤ δ: δ′ = δ first, then δ′ ← δ − 2(certificate − δ′) (a few steps at most).

    Tulap has 2K + 1 unit cells, K ≈ log(c₁/δ)/ε with c₁ = (1 − b + 2δb)/(1 + b) the central
    cell's mass (class notes); beyond :data:`MAX_CELLS` a ``ValueError`` (at ε = 1e-8, δ = 1e-300
    it had asked for 500 GiB, at ε = 1e-30, δ = 1e-15 it looped for ever; at ε = 1e-8, δ = 0.5
    c₁ ≈ δ and K = 1)."""
    b, one_minus_b = math.exp(-epsilon), -math.expm1(-epsilon)
    c1 = (one_minus_b + 2.0 * delta * b) / (1.0 + b)
    cells = 2.0 * max(1.0, math.log(c1 / delta) / epsilon) + 1.0
    if cells > MAX_CELLS:
        raise ValueError(
            f"Tulap at epsilon = {epsilon!r}, delta = {delta!r} needs about "
            f"2*log(c1/delta)/epsilon = {cells:.3g} cells (c1 = {c1:.3g}, the central cell's "
            f"mass), more than the {MAX_CELLS:g} dpdro builds and certifies; use a larger epsilon "
            "or delta"
        )
    design = delta
    for _ in range(30):
        noise = _tulap_cells(epsilon, design, sensitivity)
        certified = certify_delta(noise, epsilon, sensitivity)
        if certified <= delta:
            return noise, design, certified
        design = delta - 2.0 * (certified - design)
        if design <= 0.0:
            break
    raise ValueError(
        f"delta must be large enough for certify_delta to certify Tulap at epsilon = {epsilon!r} "
        "in "
        f"floating point (its rounding allowance reaches delta), got {delta!r}; use a larger delta"
    )


@dataclass(frozen=True)
class Tulap:
    r"""The Tulap mechanism: X = Δf·N with N ~ Tulap(0, b, q), b = e^{−ε}, q = 2δb/(1 − b + 2δb).

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    delta : float
        Privacy parameter δ in (0, 1). (δ = 0 gives the untruncated Tulap, whose support is
        unbounded; the staircase is the pure-DP choice.)
    sensitivity : float
        Sensitivity Δf > 0 of the query.

    Notes
    -----
    **Definition** (Awan and Slavković 2018, Definition 4.1). N = G + U with G discrete Laplace,
    P(G = k) = (1 − b)/(1 + b)·b^{|k|}, and U ~ Uniform(−½, ½) independent, conditioned on
    F₀(N) ∈ [q/2, 1 − q/2] (F₀ the cdf of G + U): tails of mass q/2 are cut off on each side.
    The density is c₁b^{|k|} on the unit cell [k − ½, k + ½), with
    c₁ = (1 − b)/((1 + b)(1 − q)) = (1 − b + 2δb)/(1 + b), up to the truncation point t in the K-th
    cell, K = min{k ≥ 1 : c₁b^k ≤ δ}; the partial cell [K − ½, t) has mass (c₁b^K − δb)/(1 − b).
    So for δ > 0 it is a :class:`dpdro.PiecewiseUniform` with 2K + 1 cells
    (:meth:`to_piecewise_uniform`).

    **Canonical noise.** Awan and Vadhan (2023, Definition 3.7 and Theorem 3.9) build the canonical
    noise distribution (CND) of a symmetric trade-off function f with fixed point c = f(c) as
    F(x) = c(½ − x) + (1 − c)(x + ½) on [−½, ½] and F(x) = f(1 − F(x + 1)) for x < −½. For
    (ε, δ)-DP, f(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}, with its kink at the fixed point
    c = (1 − δ)/(1 + e^ε); so F(x) = b(F(x + 1) − δ)_+ for x < −½, and the density on [−½, ½] is
    1 − 2c = c₁. The Tulap cdf satisfies the same recursion: with F₀(x) = bF₀(x + 1) for x < −½,
    F(x) = (F₀(x) − q/2)/(1 − q) = bF(x + 1) − q(1 − b)/(2(1 − q)), and q(1 − b)/(2(1 − q)) = δb
    exactly for q = 2δb/(1 − b + 2δb). Hence Tulap(0, e^{−ε}, q) is the CND of (ε, δ)-DP, the noise
    of OpenDP's ``make_canonical_noise`` (whose source builds the same f, fixed point and
    recursion). A CND is (ε, δ)-DP for every shift |φ| ≤ Δf and its trade-off at φ = Δf is exactly
    f: the privacy is tight, and ``certify_delta`` returns δ up to rounding.

    **Certified floats.** The floating-point cells are re-certified; if rounding makes
    ``certify_delta`` exceed δ (the true δ is tight, and the certificate rounds up by ~1e-13 or
    less), the cells are rebuilt at a slightly smaller ``design_delta`` until the certificate is
    ≤ δ. Every method describes that certified distribution. A δ so small that the certificate's
    rounding allowance reaches it raises a ``ValueError``.

    Sampling uses a :class:`numpy.random.Generator`; for a secure release use
    ``dpdro.SecureSampler(tulap.to_piecewise_uniform(), ...)``.

    References
    ----------
    .. [1] J. Awan and S. Vadhan, "Canonical noise distributions and private hypothesis tests",
       Annals of Statistics 51(2), 2023, Definitions 3.1 and 3.7, Theorem 3.9, Section 4.
    .. [2] J. Awan and A. Slavković, "Differentially private uniformly most powerful tests for
       binomial data", NeurIPS 2018, Definition 4.1 (the Tulap distribution).
    .. [3] OpenDP, ``opendp.measurements.make_canonical_noise``.
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    design_delta: float = field(init=False)
    _noise: PiecewiseUniform = field(init=False, repr=False)

    def __init__(self, *, epsilon, delta, sensitivity=1.0):
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        noise, design, certified = _certified_tulap(self.epsilon, self.delta, self.sensitivity)
        meta = {
            "mechanism": "tulap",
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sensitivity": self.sensitivity,
            "design_delta": design,
            "certified_delta": certified,
        }
        object.__setattr__(self, "design_delta", design)
        object.__setattr__(
            self, "_noise", PiecewiseUniform(noise.edges, noise.probs, metadata=meta)
        )

    @property
    def b(self) -> float:
        """b = e^{−ε}, the discrete Laplace ratio."""
        return math.exp(-self.epsilon)

    @property
    def q(self) -> float:
        """q = 2δb/(1 − b + 2δb), the total truncated mass (at ``design_delta``)."""
        b = self.b
        return (
            2.0 * self.design_delta * b / (-math.expm1(-self.epsilon) + 2.0 * self.design_delta * b)
        )

    def pdf(self, x):
        return self._noise.pdf(x)

    def cdf(self, x):
        return self._noise.cdf(x)

    def ppf(self, u):
        """Inverse CDF (linear within each cell)."""
        return self._noise.ppf(u)

    def sample(self, size=None, rng=None):
        """Draw noise with a :class:`numpy.random.Generator` (see the class notes on security)."""
        return self._noise.sample(size, rng)

    def expected_loss(self, loss="l1") -> float:
        """E c(X) by exact summation over the 2K + 1 cells (cell averages of the loss)."""
        return finite_expected_loss(self, loss, lambda: self._noise.expected_loss(loss))

    @property
    def std(self) -> float:
        return self._noise.std

    def exact_delta(self, epsilon=None) -> float:
        """The certified smallest δ at ε′ (default: the mechanism's ε), by
        :func:`dpdro.certify_delta`."""
        e = self.epsilon if epsilon is None else check_positive("epsilon", epsilon)
        return certify_delta(self._noise, e, self.sensitivity)

    def to_piecewise_uniform(self) -> PiecewiseUniform:
        """The noise as a certified :class:`dpdro.PiecewiseUniform` (``metadata`` records the
        certificate)."""
        return self._noise
