"""The one-sided noise of the private-LP paper (chapter 42): a paper-only variant of the truncated
Laplace mechanism.

"Private linear programs without constraint violations" (Theorem 3.2) releases b(D) − s + η with η
truncated Laplace on [−s, s], so that the released value never exceeds b(D). dpdro's own answer to
the same question is ``dpdro.Problem(support=(lo, hi))``; this class reproduces the paper's noise to
compare with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpdro._validation import check_int, check_open_unit, check_positive
from dpdro.mechanisms import truncated_laplace_half_width

__all__ = ["ShiftedTruncatedLaplace", "violation_free_lower_bound"]


@dataclass(frozen=True)
class ShiftedTruncatedLaplace:
    r"""Z = η − s with η ~ Laplace(Δ/ε) truncated to [−s, s]: Theorem 3.2 of the private-LP paper.

    Parameters
    ----------
    epsilon, delta : the privacy parameters the paper calibrates s to.
    sensitivity : Δ, the (ℓ1) sensitivity of b(D).
    m : number of private constraints; the paper's shift s = (Δ/ε)·log(m(e^ε − 1)/δ + 1).

    Notes
    -----
    Z is supported on [−2s, 0], so b(D) + Z ≤ b(D): the private constraint is only ever tightened,
    by E[−Z] = s on average (η is symmetric). For one constraint (m = 1) the noise is the truncated
    Laplace mechanism of Geng et al. with half-width s, whose exact privacy level is
    δ(Δ) = P(η > s − Δ) = (e^ε − 1)/(2(e^{εs/Δ} − 1)) = δ/(2m) (:meth:`exact_delta`): Claim B.2's
    union bound counts both ends of the support although a given neighbour shifts the support to
    one side only. The shift that makes m = 1 exactly (ε, δ)-DP is the truncated-Laplace
    half-width A = (Δ/ε)·log(1 + (e^ε − 1)/(2δ)) (:meth:`tight_shift`).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    m: int = 1

    def __init__(self, *, epsilon, delta, sensitivity=1.0, m=1):
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        object.__setattr__(self, "m", check_int("m", m, minimum=1))

    @property
    def scale(self) -> float:
        """λ = Δ/ε."""
        return self.sensitivity / self.epsilon

    @property
    def shift(self) -> float:
        """The paper's s = (Δ/ε)·log(m(e^ε − 1)/δ + 1)."""
        return self.scale * math.log1p(self.m * math.expm1(self.epsilon) / self.delta)

    def tight_shift(self) -> float:
        """A = (Δ/ε)·log(1 + (e^ε − 1)/(2δ)): the smallest shift of this form that is (ε, δ)-DP for
        m = 1 (the truncated-Laplace half-width, :func:`truncated_laplace_half_width`)."""
        return truncated_laplace_half_width(
            epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity
        )

    @property
    def support(self) -> tuple[float, float]:
        return (-2.0 * self.shift, 0.0)

    def pdf(self, z):
        z = np.asarray(z, dtype=float)
        s, lam = self.shift, self.scale
        norm = 2.0 * lam * -math.expm1(-s / lam)
        inside = (z >= -2.0 * s) & (z <= 0.0)
        return np.where(inside, np.exp(-np.abs(z + s) / lam) / norm, 0.0)

    def cdf(self, z):
        z = np.asarray(z, dtype=float)
        s, lam = self.shift, self.scale
        e = np.clip(z + s, -s, s)  # position of η
        denom = -math.expm1(-s / lam)
        # P(η ≤ e) for e ≤ 0
        lower = (np.exp(-np.abs(e) / lam) - math.exp(-s / lam)) / (2.0 * denom)
        return np.where(
            e <= 0, lower, 1.0 - (np.exp(-np.abs(e) / lam) - math.exp(-s / lam)) / (2.0 * denom)
        )

    def sample(self, size=None, rng=None):
        """Inverse-transform samples of Z (see the module notes on security)."""
        u = np.random.default_rng(rng).random(size)
        s, lam = self.shift, self.scale
        v = np.minimum(u, 1.0 - u)
        denom = -math.expm1(-s / lam)
        # P(η ≤ −t) = (e^{−t/λ} − e^{−s/λ})/(2·denom) = v  ⇒  t = −λ log(2v·denom + e^{−s/λ})
        t = -lam * np.log(2.0 * v * denom + math.exp(-s / lam))
        eta = np.where(u < 0.5, -t, t)
        return np.clip(eta, -s, s) - s

    def expected_tightening(self) -> float:
        """E[−Z] = s."""
        return self.shift

    def exact_delta(self, phi=None) -> float:
        """The exact smallest δ for one constraint (m = 1 view): P(η > s − |φ|), worst |φ| = Δ."""
        w = self.sensitivity if phi is None else abs(float(phi))
        s, lam = self.shift, self.scale
        if w > 2 * s:
            return 1.0
        # P(η > s − w) = (e^{w/λ} − 1)e^{−s/λ}/(2(1 − e^{−s/λ}))
        return math.expm1(w / lam) / (2.0 * math.expm1(s / lam))

    def numeric_delta(self, n_shifts: int = 41, n_grid: int = 200_001) -> float:
        """Independent check of :meth:`exact_delta`: max over φ ∈ [−Δ, Δ] of ∫ (p(z) − e^ε p(z −
        φ))₊ dz on a fine trapezoidal grid (accurate to about 1e-9 relative for the default
        sizes)."""
        lo, hi = -2.0 * self.shift - self.sensitivity, self.sensitivity
        z = np.linspace(lo, hi, n_grid)
        p = self.pdf(z)
        best = 0.0
        for phi in np.linspace(-self.sensitivity, self.sensitivity, n_shifts):
            g = np.maximum(p - math.exp(self.epsilon) * self.pdf(z - phi), 0.0)
            best = max(best, float(np.trapezoid(g, z)))
        return best


def violation_free_lower_bound(*, epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    r"""The paper's lower bound on the expected tightening of any violation-free mechanism.

    For one constraint (m = 1, A = 1, g(x) = x) Theorem 3.7 of the private-LP paper shows that
    every (ε, δ)-DP mechanism whose released right-hand side never exceeds b(D) tightens it, on
    some data set, by at least (Δ/(4ε))·ln((e^ε − 1)/(2δ) + 1) in expectation (δ ≤ 1/2). For
    additive one-sided noise the tightening E[−Z] is the same on every data set, so this is a
    lower bound on E[−Z]; it equals a quarter of the truncated-Laplace half-width A
    (:meth:`ShiftedTruncatedLaplace.tight_shift`).

    References
    ----------
    Muñoz Medina et al., "Private linear programs without constraint violations", Theorem 3.7
    and its proof (supplement, Claims B.6–B.7).
    """
    check_positive("epsilon", epsilon)
    check_positive("sensitivity", sensitivity)
    if not 0.0 < delta <= 0.5:
        raise ValueError(f"Theorem 3.7 needs 0 < delta <= 1/2, got {delta!r}")
    return sensitivity / (4.0 * epsilon) * math.log1p(math.expm1(epsilon) / (2.0 * delta))
