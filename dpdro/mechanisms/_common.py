"""Helpers shared by the mechanism classes: expected losses by quadrature and argument checks."""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate

from .._closed_forms import power_exponent
from ..losses import Loss, make_loss

__all__ = ["integrate_loss", "unbounded_expected_loss", "unit_interval"]


def integrate_loss(loss: Loss, pdf, lo: float, hi: float, scale: float) -> float:
    """∫ c(x) p(x) dx over (lo, hi) by adaptive quadrature.

    The range is split at 0, at the knots of a piecewise-linear loss and at ±scale·4^j so that every
    piece is smooth and of moderate length; infinite end pieces are left to ``quad``'s mapping.
    """
    cuts = {0.0, *map(float, getattr(loss, "knots", ()))}
    cuts |= {s * scale * 4.0**j for s in (-1.0, 1.0) for j in range(5)}
    pts = [lo, *sorted(c for c in cuts if lo < c < hi), hi]
    def f(x):
        return float(loss(x)) * float(pdf(x))
    pieces = [
        integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
        for a, b in zip(pts[:-1], pts[1:], strict=False)
    ]
    return math.fsum(pieces)


def unbounded_expected_loss(loss, l1: float, l2: float, pdf, scale: float) -> float:
    """E c(X) of a noise on the whole line: the closed forms ``l1`` (E|X|) and ``l2`` (E X²) for
    the ℓ1 and ℓ2 losses, adaptive quadrature of ``pdf`` for any other dpdro loss."""
    loss = make_loss(loss)
    k = power_exponent(loss)
    if k == 1.0:
        return l1
    if k == 2.0:
        return l2
    return integrate_loss(loss, pdf, -math.inf, math.inf, scale)


def unit_interval(u) -> np.ndarray:
    """``u`` as a float array, or a ``ValueError`` unless every entry lies in [0, 1]."""
    u = np.asarray(u, dtype=float)
    if not np.all((u >= 0.0) & (u <= 1.0)):
        raise ValueError("ppf arguments must lie in [0, 1]")
    return u
