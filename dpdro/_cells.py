"""Where the cells of the upper bound U(k) of :mod:`dpdro.grid` sit on a support: the offset that
puts a finite end of ``Problem.support`` on a cell edge, and the truncated Laplace mechanism's
masses on those cells (the magnitude profile of the scaled LP for small δ)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import _rounding
from ._closed_forms import truncated_laplace_cdf, truncated_laplace_centre
from .problem import Problem

__all__ = ["cell_offset", "laplace_profile"]


def cell_offset(problem: Problem, beta: float) -> float:
    """o ∈ {0, ½}: the upper bound's cells are C_i + oβ, with o = ½ when a finite end of
    ``Problem.support`` (the lower one if both are finite) is a multiple of β, so that it is a cell
    edge (:mod:`dpdro.grid`, "Supports")."""
    if problem.support is None:
        return 0.0
    ends = [e for e in problem.support if math.isfinite(e)]
    return 0.5 if ends and float(ends[0] / beta).is_integer() else 0.0


def laplace_profile(problem: Problem, k: int, L: int) -> np.ndarray:
    """Cell masses of the truncated Laplace mechanism at (ε, δ) on the columns of U(k) (a magnitude
    profile for the scaled LP; 0 beyond its support), centred at the point of the support closest
    to 0 at which its support [c − A, c + A] fits (``truncated_laplace_centre``): a profile
    centred at 0 leaves the columns of a one-sided noise's far half at the floor, and HiGHS then
    fails."""
    beta = problem.sensitivity / float(Fraction(k))
    sym = problem.loss.symmetric and problem.support is None
    lo, hi = problem.support if problem.support is not None else (-math.inf, math.inf)
    o = 0.0 if problem.monotone else cell_offset(problem, beta)
    i_lo = 0 if sym else max(-L, _rounding.ceil_finite(lo / beta - o + 0.5))
    i_hi = min(L, _rounding.floor_finite(hi / beta - o - 0.5))
    pts = np.arange(i_lo, i_hi + 1) + o
    centre = truncated_laplace_centre(problem.epsilon, problem.delta, problem.sensitivity,
                                      problem.support)
    cdf = lambda x: truncated_laplace_cdf(  # noqa: E731
        x - centre, problem.epsilon, problem.delta, problem.sensitivity
    )
    return cdf((pts + 0.5) * beta) - cdf((pts - 0.5) * beta)
