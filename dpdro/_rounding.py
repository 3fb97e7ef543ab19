"""Floating-point constants and safe-direction rounding shared by the certificates and the bounds.

Every certified number in dpdro is rounded in the direction that keeps it valid: a privacy level δ
and an upper bound up, a lower bound down. The helpers here are the one home of the unit roundoff
and of the relative safety margin for errors in cell coefficients and edges.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

__all__ = [
    "UNIT_ROUNDOFF", "COEFF_SAFETY", "ceil_finite", "exp_down", "exp_up", "floor_finite",
    "group_delta", "lowered", "round_down", "round_up", "rounding_bound", "step_down",
]

UNIT_ROUNDOFF = np.finfo(float).eps / 2  # u = 2⁻⁵³: |fl(x ∘ y) − x ∘ y| ≤ u·|x ∘ y|
COEFF_SAFETY = 1e-12  # relative rounding of bounds for errors in cell coefficients and edges


def exp_down(epsilon: float) -> float:
    """A float not above e^ε (np.exp is accurate to within an ulp; step down two to be safe)."""
    return float(np.nextafter(np.nextafter(math.exp(epsilon), 0.0), 0.0))


def exp_up(epsilon: float) -> float:
    """A float not below e^ε (the mirror of :func:`exp_down`)."""
    return float(np.nextafter(np.nextafter(math.exp(epsilon), np.inf), np.inf))


def float_up(x: Fraction) -> float:
    """The smallest float ≥ the exact rational x."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def round_up(x: float) -> float:
    """``x`` raised by the coefficient safety margin and a few roundoffs, then by one ulp: an upper
    bound reported from a value computed in floating point."""
    return float(np.nextafter(x + COEFF_SAFETY * abs(x) + 4 * UNIT_ROUNDOFF * abs(x), np.inf))


def round_down(x: float) -> float:
    """``x`` lowered by the coefficient safety margin and a few roundoffs, then by one ulp: a lower
    bound reported from a value computed in floating point (the mirror of :func:`round_up`)."""
    return float(np.nextafter(x - COEFF_SAFETY * abs(x) - 4 * UNIT_ROUNDOFF * abs(x), -np.inf))


def rounding_bound(bound: float, eta: float, excess: float) -> float:
    """(D − e_β(η))/(1 + η) for a certified D (:meth:`dpdro.Problem.rounding_allowances`), rounded
    down: D itself when η = e_β = 0."""
    if eta == 0 and excess == 0:
        return bound
    value = float(np.nextafter(bound - round_up(excess), -np.inf))
    return value if eta == 0 else round_down(value / (1.0 + eta))


def group_delta(delta: float, epsilon: float, r: int) -> float:
    """δ_r = δ·(e^{rε} − 1)/(e^ε − 1), rounded up: group privacy turns (ε, δ) at Δf into
    (rε, δ_r) at r·Δf."""
    if r == 1:
        return delta
    return round_up(delta * math.expm1(r * epsilon) / math.expm1(epsilon))


def step_down(sensitivity: float, k: Fraction) -> float:
    """The lower bound's step β = Δf/k, lowered by ulps until β·k ≤ Δf exactly: its shifts
    m·β, |m| ≤ k·r (r·Δf for the coarse grid k = 1/r), then lie within those the noise is
    private for."""
    beta = sensitivity / float(k)
    while Fraction(beta) * k > Fraction(sensitivity):
        beta = float(np.nextafter(beta, 0.0))
    return beta


def lowered(values) -> np.ndarray:
    """Coefficients of rows Σ_j a_j x_j ≤ b over columns x ≥ 0, each one that is not an integer
    lowered by 4u of its magnitude and an ulp. Each was computed from e^{rε} and δ_r rounded up and
    Δf/k rounded down (a relaxation of the rows of P's rounded law) by at most two roundings (a
    product, or the sum of a point's term and its mirror image's), so the rows as stored are a
    relaxation: every point feasible for the exact rows is feasible for them."""
    v = np.asarray(values, dtype=float)
    low = np.nextafter(v - 4 * UNIT_ROUNDOFF * np.abs(v), -np.inf)
    return np.where(v == np.round(v), v, low)


def floor_finite(x: float) -> float:
    """⌊x⌋ for finite x, x itself for ±inf."""
    return math.floor(x) if math.isfinite(x) else x


def ceil_finite(x: float) -> float:
    """⌈x⌉ for finite x, x itself for ±inf."""
    return math.ceil(x) if math.isfinite(x) else x
