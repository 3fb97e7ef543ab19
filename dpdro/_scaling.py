"""Solving at Δf = 1 and rescaling (:func:`dpdro.optimal_noise` for losses homogeneous of a degree
d): the optimal values at Δf and at 1 differ by exactly Δf^d (:meth:`dpdro.Problem.at_sensitivity`),
and the noise scales with Δf. The helpers here scale a noise, a round's record and a progress
report; :func:`dpdro.optimal._rescaled` assembles the result and certifies it again at Δf.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._rounding import round_down, round_up
from .noise import PiecewiseUniform
from .problem import Problem

__all__ = ["scaled_noise", "scaled_record", "scaled_report", "unit_scale"]


def unit_scale(problem: Problem) -> float | None:
    """Δf when ``problem`` is solved at Δf = 1 and rescaled (a loss homogeneous of some degree d,
    :attr:`dpdro.Loss.degree`, and Δf ≠ 1), else ``None``."""
    if problem.loss.degree is None or problem.sensitivity == 1.0:
        return None
    return problem.sensitivity


def scaled_noise(noise: PiecewiseUniform, factor: float) -> PiecewiseUniform:
    """The law of factor·X for X ~ ``noise``: edges and lattice multiplied by ``factor`` (edges
    recomputed as integers times the new lattice step, so they stay on it exactly)."""
    meta = dict(noise.metadata)
    if "sensitivity" in meta:
        meta["sensitivity"] = meta["sensitivity"] * factor
    if noise.grid is None:
        return PiecewiseUniform(noise.edges * factor, noise.probs, metadata=meta, atom=noise.atom)
    h = noise.grid * factor
    return PiecewiseUniform(
        np.round(noise.edges / noise.grid) * h, noise.probs, grid=h, metadata=meta, atom=noise.atom
    )


def scaled_record(info: dict, power: float) -> dict:
    """A round's history entry of the problem at Δf = 1, its bounds multiplied by ``power`` = Δf^d
    (rounded in the safe direction)."""
    out = dict(info)
    for key in ("upper", "round_upper"):
        if out.get(key) is not None:
            out[key] = round_up(out[key] * power)
    for key in ("lower", "round_lower"):
        if out.get(key) is not None:
            out[key] = round_down(out[key] * power)
    return out


def scaled_report(report: Callable[[dict], None], power: float) -> Callable[[dict], None]:
    """``report`` for rounds solved at Δf = 1 (their bounds shown at Δf, :func:`scaled_record`)."""

    def scaled(info: dict) -> None:
        report(scaled_record(info, power))

    return scaled
