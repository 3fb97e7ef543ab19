"""Helpers shared by the mechanism classes: expected losses by quadrature and argument checks."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate

from .._closed_forms import power_exponent
from ..losses import Loss, make_loss

__all__ = ["finite_expected_loss", "integrate_loss", "unbounded_expected_loss", "unit_interval"]


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


def unbounded_expected_loss(mechanism, loss, l1, l2, pdf, scale: float) -> float:
    """E c(X) of a noise on the whole line (:func:`finite_expected_loss`): the closed forms ``l1()``
    (E|X|) and ``l2()`` (E X²), zero-argument callables, for the ℓ1 and ℓ2 losses, adaptive
    quadrature of ``pdf`` for any other dpdro loss."""
    loss = make_loss(loss)
    k = power_exponent(loss)
    if k == 1.0:
        return finite_expected_loss(mechanism, loss, l1)
    if k == 2.0:
        return finite_expected_loss(mechanism, loss, l2)
    return finite_expected_loss(
        mechanism, loss, lambda: integrate_loss(loss, pdf, -math.inf, math.inf, scale)
    )


def finite_expected_loss(mechanism, loss, compute) -> float:
    """``compute()``, the expected ``loss`` of ``mechanism``, as a float, or a ``ValueError`` naming
    the mechanism and the loss where it lies beyond the floating-point range (an overflow, ∞ or
    NaN: Laplace's ℓ2 loss 2(Δf/ε)² at ε = 1e-300)."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            value = float(compute())
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise ValueError(
            f"the expected {make_loss(loss).name} loss of {mechanism!r} lies beyond the "
            "floating-point range (about 1.8e308); use a larger epsilon or express the query in "
            "other units"
        )
    return value


def unit_interval(u) -> np.ndarray:
    """``u`` as a float array, or a ``ValueError`` unless every entry lies in [0, 1]."""
    u = np.asarray(u, dtype=float)
    if not np.all((u >= 0.0) & (u <= 1.0)):
        raise ValueError("ppf arguments must lie in [0, 1]")
    return u
