"""Floating-point constants and safe-direction rounding shared by the certificates and the bounds.

Every certified number in dpdro is rounded in the direction that keeps it valid: a privacy level δ
and an upper bound up, a lower bound down. The helpers here are the one home of the unit roundoff
and of the relative safety margin for errors in cell coefficients and edges.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["UNIT_ROUNDOFF", "COEFF_SAFETY", "exp_down", "exp_up", "round_down", "round_up"]

UNIT_ROUNDOFF = np.finfo(float).eps / 2  # u = 2⁻⁵³: |fl(x ∘ y) − x ∘ y| ≤ u·|x ∘ y|
COEFF_SAFETY = 1e-12  # relative rounding of bounds for errors in cell coefficients and edges


def exp_down(epsilon: float) -> float:
    """A float not above e^ε (np.exp is accurate to within an ulp; step down two to be safe)."""
    return float(np.nextafter(np.nextafter(math.exp(epsilon), 0.0), 0.0))


def exp_up(epsilon: float) -> float:
    """A float not below e^ε (the mirror of :func:`exp_down`)."""
    return float(np.nextafter(np.nextafter(math.exp(epsilon), np.inf), np.inf))


def round_up(x: float) -> float:
    """``x`` raised by the coefficient safety margin and a few roundoffs, then by one ulp: an upper
    bound reported from a value computed in floating point."""
    return float(np.nextafter(x + COEFF_SAFETY * abs(x) + 4 * UNIT_ROUNDOFF * abs(x), np.inf))


def round_down(x: float) -> float:
    """``x`` lowered by the coefficient safety margin and a few roundoffs, then by one ulp: a lower
    bound reported from a value computed in floating point (the mirror of :func:`round_up`)."""
    return float(np.nextafter(x - COEFF_SAFETY * abs(x) - 4 * UNIT_ROUNDOFF * abs(x), -np.inf))
