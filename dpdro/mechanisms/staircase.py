"""The staircase mechanism of Geng and Viswanath: the optimal pure-DP (δ = 0) additive noise."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._closed_forms import staircase_expected_loss, staircase_noise, staircase_optimal_gamma
from .._validation import check_positive, check_real
from ..noise import PiecewiseUniform
from ..privacy import certify_delta, check_epsilon
from ._common import finite_expected_loss, unit_interval

__all__ = ["Staircase"]


def _check_gamma(gamma) -> float:
    g = check_real("gamma", gamma)
    if not 0.0 <= g <= 1.0:
        raise ValueError(f"gamma must lie in the closed interval [0, 1], got {gamma!r}")
    return g



@dataclass(frozen=True)
class Staircase:
    r"""The staircase mechanism of Geng and Viswanath: the optimal ε-DP (δ = 0) additive noise.

    Parameters
    ----------
    epsilon : float
        Privacy parameter ε, finite and > 0.
    sensitivity : float
        Sensitivity Δf > 0 of the query.
    gamma : float, optional
        Shape parameter γ ∈ [0, 1]. By default the optimal γ* for ``loss``.
    loss : str, Loss or callable
        The loss γ* is optimised for (ignored when ``gamma`` is given): closed forms for ℓ1,
        γ* = 1/(1 + e^{ε/2}), and ℓ2, γ* = (c − b)/(1 − b) with b = e^{−ε} and c = (b(1 +
        b)/2)^{1/3} (evaluated as b(1 + 2b)/(2(c² + bc + b²)), free of cancellation); bounded scalar
        minimisation of the exact expected loss over [0, 1] for any other loss.

    Notes
    -----
    With b = e^{−ε}, the density is symmetric, equal to a(γ) on [0, γΔf), to b·a(γ) on
    [γΔf, Δf), and p(x + Δf) = b·p(x) for x ≥ 0, with a(γ) = (1 − b)/(2Δf(γ + (1 − γ)b)). It is
    ε-DP for every γ and, for γ*, optimal among all ε-DP mechanisms for symmetric losses increasing
    in |x| (Geng and Viswanath's main theorem); the minimal ℓ1 loss is Δf·e^{ε/2}/(e^ε − 1).
    :meth:`sample` is the paper's exact construction X = S·((1 − B)(G + γU) + B(G + γ + (1 −
    γ)U))·Δf with S a fair sign, G ~ Geometric(1 − b) on {0, 1, …}, U ~ Uniform[0, 1) and B ~
    Bernoulli with P(B = 0) = γ/(γ + (1 − γ)b). Sampling uses a :class:`numpy.random.Generator`;
    production use needs a secure source (e.g. ``secrets``).

    References
    ----------
    .. [1] Q. Geng and P. Viswanath, "The optimal noise-adding mechanism in differential privacy",
       IEEE Trans. Inf. Theory 62(2), 2016 (arXiv:1212.1186; cited by Selvi et al. as 2014): the
       staircase family, its optimality theorem, the closed-form γ* for the ℓ1 and ℓ2 costs, and the
       geometric/Bernoulli/uniform sampler.
    .. [2] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 1.
    """

    epsilon: float
    sensitivity: float
    gamma: float

    def __init__(self, *, epsilon, sensitivity=1.0, gamma=None, loss="l1"):
        object.__setattr__(self, "epsilon", check_epsilon(epsilon))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        g = self.optimal_gamma(self.epsilon, loss) if gamma is None else _check_gamma(gamma)
        object.__setattr__(self, "gamma", g)

    @staticmethod
    def optimal_gamma(epsilon, loss="l1") -> float:
        """γ* minimising the expected ``loss`` (closed form for ℓ1 and ℓ2; see the class
        docstring)."""
        return staircase_optimal_gamma(epsilon, loss)

    @property
    def _density0(self) -> float:
        """a(γ), the density on [0, γΔf)."""
        b = math.exp(-self.epsilon)
        return -math.expm1(-self.epsilon) / (
            2.0 * self.sensitivity * (self.gamma + (1.0 - self.gamma) * b)
        )

    def pdf(self, x):
        t = np.abs(np.asarray(x, dtype=float)) / self.sensitivity
        k = np.floor(t)
        second = (t - k) >= self.gamma
        return self._density0 * np.exp(-self.epsilon * (k + second))

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        t = np.abs(x) / self.sensitivity
        k = np.floor(t)
        r = t - k
        g, a_d = self.gamma, self._density0 * self.sensitivity
        within = np.where(r < g, r, g + math.exp(-self.epsilon) * (r - g))
        one_side = 0.5 * -np.expm1(-self.epsilon * k) + a_d * np.exp(-self.epsilon * k) * within
        return np.where(x < 0, 0.5 - one_side, 0.5 + one_side)

    def ppf(self, u):
        """Inverse CDF, computed from the tail mass v = min{u, 1 − u} period by period."""
        u = unit_interval(u)
        v = np.minimum(u, 1.0 - u)  # mass beyond |x| on one side, in [0, ½]
        eps, g, d = self.epsilon, self.gamma, self.sensitivity
        a_d = self._density0 * d
        with np.errstate(divide="ignore", invalid="ignore"):
            # the period with ½b^{k+1} < v ≤ ½b^k; if rounding puts v just across a period boundary,
            # the formulas below extend continuously and the error stays at the rounding level
            k = np.floor(np.log(2.0 * v) / -eps)
            w = v - 0.5 * np.exp(-eps * (k + 1))  # mass between |x| and (k + 1)Δf
            top = a_d * np.exp(-eps * (k + 1)) * (1.0 - g)  # mass of [(k + γ)Δf, (k + 1)Δf)
            t = np.where(
                w <= top,
                (k + 1) - w / (a_d * np.exp(-eps * (k + 1))),
                (k + g) - (w - top) / (a_d * np.exp(-eps * k)),
            )
        return np.sign(u - 0.5) * np.where(v > 0, t * d, np.inf)

    def sample(self, size=None, rng=None):
        """Geng and Viswanath's exact sampler (see the class notes, including the one on
        security)."""
        rng = np.random.default_rng(rng)
        b = math.exp(-self.epsilon)
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        geo = rng.geometric(-math.expm1(-self.epsilon), size) - 1.0  # P(G = i) = (1 − b)b^i, i ≥ 0
        uni = rng.random(size)
        p0 = self.gamma / (self.gamma + (1.0 - self.gamma) * b)
        first = rng.random(size) < p0  # B = 0: the first step [G, G + γ) of the period
        offset = np.where(first, self.gamma * uni, self.gamma + (1.0 - self.gamma) * uni)
        return sign * (geo + offset) * self.sensitivity

    def expected_loss(self, loss="l1") -> float:
        r"""E c(X): closed forms for ℓ1 and ℓ2; for other losses the exact sum over the staircase's
        cells.

        The general case sums p(cell)·(average of c(x) + c(−x) over the cell) with the loss's exact
        cell averages over ⌈50/ε⌉ + 1 periods (the neglected mass is below e^{−50}).
        """
        return finite_expected_loss(
            self,
            loss,
            lambda: staircase_expected_loss(self.epsilon, self.sensitivity, self.gamma, loss),
        )

    @property
    def std(self) -> float:
        return math.sqrt(self.expected_loss("l2"))

    def to_piecewise_uniform(self, periods: int) -> PiecewiseUniform:
        r"""The staircase truncated to [−periods·Δf, periods·Δf] and renormalised.

        Truncation breaks pure DP: a shift by Δf uncovers the outermost period, so the truncated
        noise is (ε, δ_P)-DP with δ_P = (1 − b)·b^{P−1}/(2(1 − b^P)), b = e^{−ε}, P = ``periods``
        (stored in ``metadata["delta"]``, raised to what :func:`dpdro.certify_delta` can confirm
        where δ_P is below its floating-point allowance, 1.8e-13 at ε = 1, P = 50: the recorded
        guarantee is one the package certifies, so :meth:`dpdro.SecureSampler.from_noise` accepts
        it). Empty cells (γ ∈ {0, 1}) are dropped.
        """
        noise = staircase_noise(self.epsilon, self.sensitivity, self.gamma, periods)
        certified = certify_delta(noise, self.epsilon, self.sensitivity)
        if certified <= noise.metadata["delta"]:
            return noise
        return replace(noise, metadata={**noise.metadata, "delta": certified})
