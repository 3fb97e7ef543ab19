"""Helpers shared by the mechanism classes: expected losses by quadrature and argument checks."""

from __future__ import annotations

import math

import numpy as np

from .._closed_forms import integrate_loss, power_exponent
from ..losses import make_loss

__all__ = ["finite_expected_loss", "integrate_loss", "unbounded_expected_loss", "unit_interval"]


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
