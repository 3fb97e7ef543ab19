r"""A driver for the data-dependent problem P′: refine the grid until a target gap or a time limit.

:func:`optimal_noise` is the data-dependent counterpart of :func:`dpdro.optimal_noise`. Along the
refinement path β = β₀, β₀/2, β₀/4, … (β₀ the largest power-of-two fraction of a common divisor of
Δf and |Φ| that is at most Δf/2) it solves, on the uniform partition of the support [−A, A + β) with
A the truncated Laplace half-width rounded up (the paper's support, Section 5.1),

* the randomized-rounding lower bound D′_R(L, β) (:func:`dpdro.data_dependent.lower_bound`, one
  distribution per fine piece Φ_k(β), a valid lower bound on P′ whatever the support), and
* the upper bound P′(L, β) with the problem's pieces (fine pieces of width β unless the problem
  fixes them), a point mass at 0 in every piece's noise (``atom=True``, unless the problem is
  monotone) and, for symmetric losses, the cells centred on the grid points (``centred=True``) of
  :func:`dpdro.data_dependent.upper_bound`: a certified mechanism.

Each step solves the lower bound first (it is the cheaper LP) and skips the upper bound when the
bracket is already within the target. It keeps the best certified mechanism and the best lower bound
seen, and stops as soon as (upper − lower)/lower ≤ ``rel_gap``, when the time limit is spent, or at
the end of the path. Both bounds get the time left as their own limit, so the call returns within
the limit up to the time of building one LP (measured and tested). A step cut short contributes
nothing: the result is the best bracket certified so far.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from .._budget import TimeBudget
from .._closed_forms import truncated_laplace_half_width
from .._validation import check_optional_positive, check_positive
from ..partition import Partition
from ..problem import InfeasibleError
from ..release import LowerBound, UpperBound
from .bounds import lower_bound, upper_bound
from .problem import Problem

__all__ = ["DDOptimalNoise", "default_betas", "optimal_noise"]


@dataclass
class DDOptimalNoise:
    """The result of :func:`optimal_noise`: the best certified mechanism and the best valid lower
    bound."""

    upper: UpperBound | None
    lower: LowerBound | None
    seconds: float
    # one dict per step: beta, K, upper, lower, seconds_lower, seconds_upper, cumulative (seconds
    # since the call), gap (of the best bracket after the step), gap_after_lower and
    # cumulative_after_lower (the same once the step's lower bound is in, before its upper bound)
    history: list = field(default_factory=list)
    stopped: str = ""  # "gap", "time limit", "end of path"

    @property
    def mechanism(self):
        return None if self.upper is None else self.upper.mechanism

    @property
    def gap(self) -> float:
        """(upper − lower)/lower of the best bracket (inf while either side is missing or lower ≤
        0)."""
        if self.upper is None or self.lower is None or not self.lower.value > 0:
            return math.inf
        return (self.upper.value - self.lower.value) / self.lower.value


def default_betas(problem: Problem, n: int = 8) -> list[float]:
    """β₀, β₀/2, …: β₀ = the largest common divisor of Δf and |Φ| (as fractions with denominators
    up to 10⁶), halved until it is at most Δf/2."""
    d = Fraction(problem.sensitivity).limit_denominator(10**6)
    w = Fraction(problem.phi_hi - problem.phi_lo).limit_denominator(10**6)
    g = Fraction(
        math.gcd(d.numerator * w.denominator, w.numerator * d.denominator),
        d.denominator * w.denominator,
    )
    while g > d / 2:
        g /= 2
    return [float(g / 2**i) for i in range(n)]


def optimal_noise(
    problem: Problem,
    *,
    rel_gap: float = 0.05,
    time_limit: float | None = 60.0,
    betas=None,
    support_half_width: float | None = None,
    progress=None,
) -> DDOptimalNoise:
    """Refine until the certified bracket of P′ has relative gap ≤ ``rel_gap`` or ``time_limit``
    seconds are spent (module docstring).

    Parameters
    ----------
    problem : a :class:`dpdro.data_dependent.Problem`.
    rel_gap : target (upper − lower)/lower, > 0.
    time_limit : seconds for the whole call (``None``: no limit).
    betas : the refinement path (each β must divide Δf and the piece edges); default
        :func:`default_betas`.
    support_half_width : A of the support [−A, A + β) (default: the truncated Laplace half-width
        rounded up); the upper bound's support is enlarged by half when it is infeasible.
    progress : optional callable receiving each step's dict as it is done.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Theorem 2 (the bounds of P′ converge as β → 0 and the
       support grows) and Section 5.1 (the support [−A, A + β)).
    """
    if not isinstance(problem, Problem):
        raise TypeError(
            f"problem must be a dpdro.data_dependent.Problem, got {type(problem).__name__}"
        )
    rel_gap = check_positive("rel_gap", rel_gap)
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    if support_half_width is not None:
        support_half_width = check_positive("support_half_width", support_half_width)
    betas = default_betas(problem) if betas is None else [check_positive("betas", b) for b in betas]
    if not betas:
        raise ValueError("betas must contain at least one β")
    A = support_half_width
    if A is None:
        A = float(
            math.ceil(
                truncated_laplace_half_width(
                    epsilon=problem.epsilon, delta=problem.delta, sensitivity=problem.sensitivity
                )
                - 1e-9
            )
        )
    best = DDOptimalNoise(None, None, 0.0)
    stopped = "end of path"
    for beta in betas:
        row = _step(problem, beta, A, rel_gap, best, budget)
        best.history.append(row)
        if progress is not None:
            progress(dict(row))
        if row["gap"] <= rel_gap:
            stopped = "gap"
            break
        if budget.expired():
            stopped = "time limit"
            break
    return DDOptimalNoise(best.upper, best.lower, budget.elapsed(), best.history, stopped)


def _step(
    problem: Problem,
    beta: float,
    A: float,
    rel_gap: float,
    best: DDOptimalNoise,
    budget: TimeBudget,
) -> dict:
    """One step of the path: the lower bound, then (unless the bracket already meets ``rel_gap``)
    the upper bound on supports enlarged by half while infeasible; ``best`` keeps the better
    bounds. The step's history entry (module docstring)."""
    row = dict(beta=beta, K=problem.grouping(beta).K, upper=None, lower=None)
    L = int(math.ceil(A / beta - 1e-9))
    t1 = time.perf_counter()
    try:
        lb = lower_bound(problem, Partition.uniform(L=L, beta=beta), time_limit=budget.left())
        row["lower"] = lb.value
        if best.lower is None or lb.value > best.lower.value:
            best.lower = lb
    except TimeoutError:
        pass
    row["seconds_lower"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    # the lower bound is the cheaper side: with it the bracket may already be within the target
    row["gap_after_lower"] = best.gap
    row["cumulative_after_lower"] = budget.elapsed()
    if row["gap_after_lower"] > rel_gap and not budget.expired():
        centred = bool(problem.loss is not None and problem.loss.symmetric and not problem.monotone)
        for grow in (1.0, 1.5, 2.25):
            try:
                part = Partition.uniform(L=int(math.ceil(grow * A / beta - 1e-9)), beta=beta)
                ub = upper_bound(
                    problem,
                    part,
                    centred=centred,
                    atom=not problem.monotone,
                    time_limit=budget.left(),
                )
                row["upper"] = ub.value
                if best.upper is None or ub.value < best.upper.value:
                    best.upper = ub
                break
            except InfeasibleError:
                continue
            except (TimeoutError, RuntimeError):
                break
    row["seconds_upper"] = time.perf_counter() - t2
    row["cumulative"] = budget.elapsed()
    row["best_upper"] = None if best.upper is None else best.upper.value
    row["best_lower"] = None if best.lower is None else best.lower.value
    row["gap"] = best.gap
    return row
