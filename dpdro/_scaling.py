"""Solving at Δf = 1 and rescaling (:func:`dpdro.optimal_noise` for losses homogeneous of a degree
d): the optimal values at Δf and at 1 differ by exactly Δf^d (:meth:`dpdro.Problem.at_sensitivity`),
and the noise scales with Δf. The helpers here scale a noise, a round's record and a progress
report; :func:`dpdro.optimal._rescaled` assembles the result and certifies it again at Δf
(:mod:`dpdro.data_dependent._scaling` does the same for the data-dependent problem P′).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

import numpy as np

from ._rounding import round_down, round_up
from .noise import PiecewiseUniform, fits_support
from .problem import Problem

__all__ = [
    "check_scale", "scaled_noise", "scaled_record", "scaled_report", "unit_scale", "within_support"
]


def unit_scale(problem: Problem) -> float | None:
    """Δf when ``problem`` is solved at Δf = 1 and rescaled (a loss homogeneous of some degree d,
    :attr:`dpdro.Loss.degree`, and Δf ≠ 1), else ``None``."""
    if problem.loss.degree is None or problem.sensitivity == 1.0:
        return None
    return problem.sensitivity


# Δf^(d+1) beyond these, the expected losses (unit values times Δf^d, each cell's average a
# difference of (d+1)-th powers of its edges) leave the normal floating-point range (measured: ℓ2 at
# Δf = 1e-200 released a loss of 4.9e-324 with a lower bound of −4.9e-324, at 1e200 it overflowed;
# a catalog ℓ1 noise at Δf = 1e-300 reported a loss 0.03% below the optimum's lower bound)
SCALE_RANGE = (1e-250, 1e250)


def check_scale(sensitivity: float, degree: float | None) -> None:
    """Refuse Δf for a loss homogeneous of degree d (:attr:`dpdro.Loss.degree`) when Δf^(d+1) lies
    outside :data:`SCALE_RANGE` (ℓ1: Δf within 1e±125, ℓ2: 1e±83), with a clear message, rather than
    return losses that under- or overflow. Losses of no degree are not checked."""
    if degree is None:
        return
    lo, hi = SCALE_RANGE
    try:
        power = math.pow(sensitivity, degree + 1)
    except OverflowError:
        power = math.inf
    if not lo <= power <= hi:
        raise ValueError(
            f"sensitivity**{degree + 1:g} must lie in [{lo:g}, {hi:g}] (the expected loss would "
            f"leave the floating-point range), got sensitivity={sensitivity!r}; express the query "
            "in other units"
        )


def scaled_noise(
    noise: PiecewiseUniform, factor: float, exact: bool = False, support=None
) -> PiecewiseUniform:
    """The law of factor·X for X ~ ``noise`` (designed for Δf = 1, released for Δf = ``factor``):
    edges and lattice multiplied by ``factor``, the edges recomputed as integers times the new
    lattice step h = fl(step·factor).

    Those products are rounded, so the edges lie up to an ulp off the lattice, and the certificate
    at Δf pays that drift (:func:`dpdro.privacy.lattice_error_bound`: 1e-14 of δ = 1.6e-12 at Δf =
    0.001). With ``exact``, h is instead Δf/k (k steps per unit) rounded *up* to a float short
    enough that every edge ticks·h is exact (:func:`_exact_step`): the edges lie exactly on the
    lattice and k·h ≥ Δf, so the certificate has no drift at all
    (:func:`dpdro.privacy.sensitivity_shortfall`), and the noise is scaled by k·h ∈ [Δf, Δf·(1 +
    2⁻³⁶)] rather than Δf (its expected loss is computed from the released noise). Without such a
    step (no lattice, k not whole, too many ticks) ``exact`` changes nothing. With ``support`` (the
    scaled problem's), an outer edge the rounding left a hair outside it is moved onto its end
    (:func:`within_support`)."""
    meta = dict(noise.metadata)
    if "sensitivity" in meta:
        meta["sensitivity"] = meta["sensitivity"] * factor
    if noise.grid is None:
        out = PiecewiseUniform(noise.edges * factor, noise.probs, metadata=meta, atom=noise.atom)
    else:
        ticks = np.round(noise.edges / noise.grid)
        h = (_exact_step(noise.grid, ticks, factor) if exact else None) or noise.grid * factor
        out = PiecewiseUniform(ticks * h, noise.probs, grid=h, metadata=meta, atom=noise.atom)
    return within_support(out, support)


_STEP_BITS = 36  # significant bits the new step keeps at least (a relative rounding ≤ 2⁻³⁶)


def _exact_step(grid: float, ticks: np.ndarray, factor: float) -> float | None:
    """Δf/k rounded up to a float whose product with every tick is exact (Δf = ``factor``, k =
    1/``grid`` steps per unit), or ``None`` when k is not a whole number or the ticks leave fewer
    than 36 significant bits for the step."""
    k = round(1.0 / grid)
    if k < 1 or abs(k * grid - 1.0) > 1e-12:
        return None
    bits = 53 - int(np.max(np.abs(ticks))).bit_length()
    target = Fraction(factor) / k
    if bits < _STEP_BITS or target < Fraction(2) ** -1000:
        return None
    top = target.numerator.bit_length() - target.denominator.bit_length()  # 2^(top ± 1) bracket it
    if Fraction(2) ** top > target:  # now 2^top ≤ target < 2^(top + 1) exactly
        top -= 1
    unit = Fraction(2) ** (top - bits + 1)
    return float(math.ceil(target / unit) * unit)  # ≤ bits + 1 significant bits: exact


def scaled_record(
    info: dict,
    power: float,
    upper: tuple = ("upper", "round_upper"),
    lower: tuple = ("lower", "round_lower"),
) -> dict:
    """A round's history entry of the problem at Δf = 1, its bounds multiplied by ``power`` = Δf^d
    (rounded in the safe direction): the entries named in ``upper`` rounded up, those in ``lower``
    rounded down (defaults: the keys of :func:`dpdro.optimal_noise`'s rounds)."""
    out = dict(info)
    for key in upper:
        if out.get(key) is not None:
            out[key] = round_up(out[key] * power)
    for key in lower:
        if out.get(key) is not None:
            out[key] = round_down(out[key] * power)
    return out


def scaled_report(report: Callable[[dict], None], power: float) -> Callable[[dict], None]:
    """``report`` for rounds solved at Δf = 1 (their bounds shown at Δf, :func:`scaled_record`)."""

    def scaled(info: dict) -> None:
        report(scaled_record(info, power))

    return scaled


def within_support(noise: PiecewiseUniform, support) -> PiecewiseUniform:
    """``noise`` with an outer edge that the scaling left within 1e-12 (relative) outside a
    support end moved onto that end (support (1.5e9, ∞) at Δf = 1e9: the edge 1.5·Δf had come out
    1499999999.9999998); certified again by the caller."""
    if support is None or fits_support(noise, support):
        return noise
    edges = noise.edges.copy()
    for i, end, outside in ((0, support[0], edges[0] < support[0]),
                            (-1, support[1], edges[-1] > support[1])):
        if outside and abs(edges[i] - end) <= 1e-12 * abs(end):
            edges[i] = end
    return replace(noise, edges=edges)
