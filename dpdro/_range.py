"""The range of (ε, δ) :func:`dpdro.optimal_noise` accepts: beyond it a one-line ``ValueError``
names the parameter, the bound and the value, and points to the mechanism that works there."""

from __future__ import annotations

from .problem import Problem

__all__ = [
    "MAX_DELTA",
    "MAX_DESIGN_EPSILON",
    "MAX_EPSILON",
    "MIN_DELTA",
    "MIN_DESIGN_EPSILON",
    "check_design_range",
]

#: the largest ε optimal_noise *designs* a noise for (measured: at ε = 12, ℓ1, δ = 1e-6 the
#: certified gap after 20 s is 530%; at ε = 10, 0.3%). Not to be confused with
#: :data:`dpdro.privacy.MAX_CERTIFIED_EPSILON` (700), the largest ε a given noise is *certified* at.
MAX_DESIGN_EPSILON = 10.0
#: the name :mod:`dpdro.optimal` re-exports for :data:`MAX_DESIGN_EPSILON`
MAX_EPSILON = MAX_DESIGN_EPSILON
#: the smallest ε optimal_noise designs for (the README's range starts at 1e-3; below 1e-4 the
#: literature references alone, e.g. Tulap's 2·log(1/δ)/ε cells, outgrow any time limit: at δ =
#: 1e-12 and time_limit = 3 s, ε = 1e-5 took 42 s and ε = 1e-6 over 120 s)
MIN_DESIGN_EPSILON = 1e-4
#: the smallest δ optimal_noise accepts (the README's range; at δ = 1e-15 the upper-bound LP's
#: solution, within HiGHS's tolerances of δ, put all its mass on the atom, a ValueError from inside)
MIN_DELTA = 1e-12
#: the largest δ optimal_noise accepts: 1 − δ ≥ 1e-12 (at δ = 1 − 1.1e-16, the largest float below
#: 1, the upper-bound LP put all its mass on the atom: "atom must lie in [0, 1), got 1.0" from
#: inside; up to 1 − 1e-15 it worked, with a lower bound of 0)
MAX_DELTA = 1.0 - 1e-12


def check_design_range(problem: Problem) -> None:
    """A ``ValueError`` unless :data:`MIN_DESIGN_EPSILON` ≤ ε ≤ :data:`MAX_DESIGN_EPSILON` and
    :data:`MIN_DELTA` ≤ δ ≤ :data:`MAX_DELTA`."""
    if problem.epsilon < MIN_DESIGN_EPSILON:
        raise ValueError(
            f"epsilon must be at least {MIN_DESIGN_EPSILON:g} for optimal_noise (below, the "
            "literature mechanisms it compares with, of about 2*log(1/delta)/epsilon cells, "
            f"outgrow any time limit), got {problem.epsilon!r}; the truncated Laplace mechanism "
            "(dpdro.mechanisms.TruncatedLaplace) is near optimal there"
        )
    if problem.epsilon > MAX_DESIGN_EPSILON:
        raise ValueError(
            f"epsilon must be at most {MAX_DESIGN_EPSILON:g} for optimal_noise (beyond, the "
            "optimal noise's central plateau, of width about 2*sensitivity*exp(-epsilon/2), "
            f"outgrows the grids the LPs can solve), got {problem.epsilon!r}; the staircase "
            "mechanism (dpdro.mechanisms.Staircase) is near optimal there"
        )
    if problem.delta < MIN_DELTA:
        raise ValueError(
            f"delta must be at least {MIN_DELTA:g} for optimal_noise (below, delta is within the "
            f"LP solver's tolerances), got {problem.delta!r}; the staircase mechanism "
            "(dpdro.mechanisms.Staircase), optimal for pure DP, meets every delta"
        )
    if problem.delta > MAX_DELTA:
        raise ValueError(
            f"delta must be at most 1 - 1e-12 for optimal_noise (above, 1 - delta is within the "
            f"LP solver's tolerances), got {problem.delta!r}"
        )
