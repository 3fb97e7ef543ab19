r"""``optimal_noise``: refine until the certified relative gap (P − D)/D is small.

Corollary 1 of the paper guarantees convergence for partitions that eventually refine a uniform grid
{I_i(Δf/k)}_{i ∈ [±Λk]} with Λ and k large, but the two bounds converge for different reasons:

* the upper bound P(π, β) needs a grid fine enough to represent the shape of the optimal density and
  *every* shift on that grid (it is released, so it must be private for all φ ∈ [−Δf, Δf]);
* the lower bound D(π, β) is limited mostly by its objective coefficients, the cell infima c̲_j,
  which differ from the averages c_j by about the cell width times the slope of c (Lemma A.11), so it
  needs small cells wherever it puts mass. Any subset of its privacy constraints still gives a valid
  lower bound, so its shifts can stay on the coarser grid of the upper bound while its cells shrink.

``optimal_noise`` therefore runs two tracks, both on uniform grids. The upper bound uses
β_U = Δf/k_U on ±1.5 times the truncated-Laplace support, k_U = 8, 16, 32, …. The lower bound uses the
paper's D(L, β) with β_L = Δf/k_L, k_L = 2k_U, 4k_U, …, on twice that support (grown when its solution
leaks mass outside), with its shifts restricted to the multiples of Δf/min(k_U, 32): any subset of the
privacy constraints still gives a valid lower bound, and few shifts cost it little (at
(ε, δ) = (1, 0.2), ℓ1, the multiples of Δf/16 at β_L = Δf/128 give 0.5543, 0.85% below the upper
bound 0.5591 of the grid k_U = 16).
When the coefficient penalty Σ_j p_j (c_j − c̲_j) of the lower bound's solution explains less than a
third of the gap, or when the upper track has had less than a quarter of the work of the lower one
(counted in simplex iterations, so that runs are reproducible) and its last refinement still closed a
tenth of the gap, the upper grid is refined (k_U doubles); otherwise the lower grid is (k_L doubles).
The only time-dependent decision is the optional ``time_limit``.

``lower_coefficients="rounding"`` replaces the cell infima by the randomized-rounding coefficients of
:mod:`dpdro.bounds` (grid values c(jβ), minus the loss's grid interpolation excess e_β once): a valid
lower bound whose coefficient penalty is at most e_β (0 for ℓ1), so the upper grid and the lower
bound's shifts are refined first. At (ε, δ) = (5, 0.1), ℓ1, it reaches a 0.37% gap at k_U = 64 in a few
seconds, where the cell infima stalled above 4% after minutes. The default stays ``"infimum"``, the
paper's D(L, β).

Why not the adaptively refined non-uniform partitions of Section 4.1 for the lower bound: the
paper's D(π, β) is not a valid lower bound on non-uniform cells (scripts/check_nonuniform_lower_bound.py),
and its valid cell-union version (:func:`dpdro.lower_bound`) is weaker on wide cells and much slower to
solve; on the benchmark instances the uniform track reaches a 1% gap several times faster.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._validation import (check_bool, check_choice, check_int, check_nonnegative, check_optional_positive,
                          check_positive)
from .bounds import LowerBound, UpperBound, check_rounding_coefficients, lower_bound, upper_bound
from .mechanisms import truncated_laplace_half_width
from .noise import PiecewiseUniform
from .partition import Partition
from .problem import Problem

__all__ = ["OptimalNoise", "optimal_noise", "relative_gap", "uniform_grid"]


@dataclass
class OptimalNoise:
    """Result of :func:`optimal_noise`."""

    noise: PiecewiseUniform  # the certified upper-bound noise of the final partition
    upper: UpperBound
    lower: LowerBound
    partition: Partition
    seconds: float
    history: list = field(default_factory=list)  # per round: dict(round, k_upper, upper, lower_cells, lower_beta, lower, gap, seconds)

    @property
    def gap(self) -> float:
        """Certified relative gap (P − D)/D of the final partition."""
        return relative_gap(self.upper.value, self.lower.value)

    @property
    def value(self) -> float:
        """The expected loss of the released noise (an upper bound on the optimum)."""
        return self.upper.value


def relative_gap(upper: float, lower: float) -> float:
    """(P − D)/D as in the paper (Section 5.1); infinite when D ≤ 0."""
    return (upper - lower) / lower if lower > 0 else math.inf


def uniform_grid(problem: Problem, k: int, support_factor: float) -> Partition:
    """The uniform grid of both refinement tracks: cells of width β = Δf/k, 2L + 1 of them with
    L = max(k, ⌈support_factor·A/β⌉) and A the truncated-Laplace half-width, i.e. the window
    [−Lβ, (L + 1)β); with a ``Problem.support`` the same number of cells placed inside the support."""
    beta = problem.sensitivity / k
    half_width = truncated_laplace_half_width(epsilon=problem.epsilon, delta=problem.delta,
                                              sensitivity=problem.sensitivity)
    L = max(k, math.ceil(support_factor * half_width / beta))
    support = problem.support
    if support is None or not (math.isfinite(support[0]) or math.isfinite(support[1])):
        return Partition.uniform(L, beta)
    # Problem.support: the same number of cells (2L + 1), placed inside the support interval
    n = 2 * L + 1
    lo = math.floor(support[0] / beta) if math.isfinite(support[0]) else -math.inf
    # the cell [hi, hi + β) stays in the core: the closed support admits mass at hi, which the lower
    # bound must see through its events (padding cells are invisible to them)
    hi = math.floor(support[1] / beta) + 1 if math.isfinite(support[1]) else math.inf
    if hi - lo > n:
        start = int(min(max(-L, lo), hi - n))  # the usual window [−L, L + 1), moved inside the support
        lo, hi = start, start + n
    return Partition(np.arange(int(lo), int(hi) + 1), beta)


def _coefficient_penalty(problem: Problem, partition: Partition, lb: LowerBound, coefficients: str) -> float:
    """What the lower bound's objective coefficients cost it: Σ_j p_j (c_j − c̲_j) over its core cells
    for the cell infima; at most e_β for the randomized-rounding coefficients (E c(Y) ≤ E c(X) + e_β)."""
    if coefficients == "rounding":
        return float(problem.loss.grid_interpolation_excess(partition.beta))
    a, b = partition.edges[:-1], partition.edges[1:]
    core = lb.p[lb.core_offset:lb.core_offset + partition.n_cells]
    return float(np.sum(core * (problem.loss.cell_average(a, b) - problem.loss.cell_infimum(a, b))))


def optimal_noise(problem: Problem, rel_gap: float = 0.01, *, k_start: int = 8, support_factor: float = 1.5,
                  max_rounds: int = 40, max_k: int = 256, max_lower_shifts: int = 32, upper_share: float = 0.25,
                  max_cells: int = 40000, time_limit: float | None = None, atom: bool = False,
                  lower_support_factor: float | None = None, lower_coefficients: str = "infimum",
                  verbose: bool = False) -> OptimalNoise:
    """Certified near-optimal noise: refine until (P − D)/D ≤ ``rel_gap`` (see the module docstring).

    Parameters
    ----------
    rel_gap : target relative gap between the certified upper and lower bounds.
    k_start : first upper-bound grid β_U = Δf/k_start.
    support_factor : upper-bound support as a multiple of the truncated-Laplace half-width.
    lower_support_factor : the lower bound's first support, in the same unit (default twice
        ``support_factor``); it grows by half whenever the lower bound's solution leaks enough mass
        outside, so a small value is always safe, and much faster at large ε, where the optimal
        noise is concentrated well inside the truncated-Laplace support.
    max_lower_shifts : the lower bound keeps the shifts on the grid Δf/min(k_U, max_lower_shifts).
    upper_share : refine the upper grid whenever its solves have taken less than this fraction of the
        simplex iterations spent on lower bounds (and its last refinement paid off).
    atom : let the upper bound put a point mass at 0 (``upper_bound(..., atom=True)``); worth it for
        large ε and δ, where the optimal noise has mass close to δ at 0.
    lower_coefficients : the lower bound's objective coefficients, ``"infimum"`` (the paper's cell
        infima c̲_j) or ``"rounding"`` (the grid values c(jβ) minus the loss's grid interpolation excess,
        a tighter valid bound by randomized rounding, see :mod:`dpdro.bounds`). With ``"rounding"`` the
        coefficient penalty is at most e_β (0 for ℓ1), so the upper grid and the lower bound's shifts
        are refined first, up to ``max_k`` and ``max_lower_shifts``.
    max_rounds, max_k, max_cells, time_limit : stop refining when one is exceeded (``max_k`` bounds
        k_U, ``max_cells`` the lower bound's cells); the result then reports the gap it reached
        (``result.gap``). ``time_limit`` (wall-clock seconds) is checked between rounds and also cuts
        short a lower bound's cutting planes (whose last relaxation still gives a valid bound); an
        upper bound is always solved to the end, so a round can overrun the limit by its upper bound.

    Returns
    -------
    OptimalNoise with the released noise (``certify_delta(noise, ε, Δf) <= δ``), the best upper and
    lower bounds found (every round's bounds are valid for P) and the refinement history.

    Raises
    ------
    TypeError, ValueError for an argument of the wrong type or outside its range (the message names the
    parameter, the allowed range and the value), all checked before the first LP is solved:
    ``rel_gap``, ``support_factor`` > 0; ``k_start``, ``max_rounds``, ``max_lower_shifts``, ``max_cells``
    integers ≥ 1, ``max_k`` an integer ≥ ``k_start``; ``upper_share`` ≥ 0; ``time_limit``,
    ``lower_support_factor`` None or > 0; ``atom``, ``verbose`` booleans (``atom`` only without
    monotonicity); ``lower_coefficients`` "infimum" or "rounding" (the latter only where it applies).
    """
    # every argument is checked before the first solve
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpdro.Problem, got {type(problem).__name__}")
    rel_gap = check_positive("rel_gap", rel_gap)
    k_start = check_int("k_start", k_start, minimum=1)
    support_factor = check_positive("support_factor", support_factor)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    max_k = check_int("max_k", max_k, minimum=k_start)
    max_lower_shifts = check_int("max_lower_shifts", max_lower_shifts, minimum=1)
    upper_share = check_nonnegative("upper_share", upper_share)
    max_cells = check_int("max_cells", max_cells, minimum=1)
    time_limit = check_optional_positive("time_limit", time_limit)
    atom = check_bool("atom", atom)
    lower_support_factor = check_optional_positive("lower_support_factor", lower_support_factor)
    lower_coefficients = check_choice("lower_coefficients", lower_coefficients, ("infimum", "rounding"))
    verbose = check_bool("verbose", verbose)
    if atom and problem.monotone:
        raise ValueError("atom must be False for a monotone problem: the atom column applies to problems without "
                         "monotonicity rows only (got atom=True, monotone=True)")
    if lower_coefficients == "rounding":
        check_rounding_coefficients(problem, problem.sensitivity / (2 * k_start))
    t0 = time.perf_counter()
    k_up = k_start
    ub = upper_bound(problem, uniform_grid(problem, k_up, support_factor), atom=atom)
    # work spent on each track, kept balanced; measured in simplex iterations (not seconds) so that
    # the sequence of refinements, and hence the result, is the same on every run
    w_up, w_low = ub.simplex_iterations, 0
    k_low = 2 * k_up
    low_factor = 2 * support_factor if lower_support_factor is None else lower_support_factor
    best_ub, best_lb, history = ub, None, []
    last_gain = math.inf  # improvement of the upper bound at its last refinement
    for rnd in range(1, max_rounds + 1):
        k_low = max(k_low, k_up)  # the lower bound's grid must contain the shifts
        low_part = uniform_grid(problem, k_low, low_factor)
        stride = k_low // math.gcd(k_low, min(k_up, max_lower_shifts))
        # the lower bound's cutting planes stop at the time limit: any relaxation's bound is valid
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1.0)
        try:
            lb = lower_bound(problem, low_part, shift_stride=stride, time_limit=left, coefficients=lower_coefficients)
        except TimeoutError:  # not even its first relaxation solved in time: keep the bounds so far
            if best_lb is None:
                raise
            break
        w_low += lb.simplex_iterations
        if best_lb is None or lb.value > best_lb.value:
            best_lb = lb
        gap = relative_gap(best_ub.value, best_lb.value)
        elapsed = time.perf_counter() - t0
        history.append(dict(round=rnd, k_upper=k_up, upper=best_ub.value, lower_cells=low_part.n_cells,
                            lower_beta=low_part.beta, lower=lb.value, gap=gap, seconds=elapsed))
        if verbose:  # pragma: no cover
            print(f"round {rnd:2d}: k_U={k_up:4d} UB={best_ub.value:.7g} | LB N={low_part.n_cells:5d} "
                  f"beta={low_part.beta:.4g} stride={stride} LB={lb.value:.7g} | gap={100 * gap:.3f}% ({elapsed:.2f}s)")
        if gap <= rel_gap or (time_limit is not None and elapsed > time_limit):
            break
        tail = problem.loss.tail_infimum(low_part.edges[0], low_part.edges[-1])
        if lb.outside_mass * tail > 0.1 * (best_ub.value - lb.value):
            low_factor *= 1.5
            continue
        pen = _coefficient_penalty(problem, low_part, lb, lower_coefficients)
        # refine the upper grid (and the lower bound's shifts with it) when the lower bound's
        # coefficients no longer explain the gap, or when the upper track has had less work
        slack = best_ub.value - lb.value
        worth_work = w_up < upper_share * w_low and last_gain >= 0.1 * slack
        if 2 * k_up <= max_k and (pen < slack / 3 or worth_work):
            k_up *= 2
            ub = upper_bound(problem, uniform_grid(problem, k_up, support_factor), atom=atom)
            w_up += ub.simplex_iterations
            last_gain = best_ub.value - ub.value
            if ub.value < best_ub.value:
                best_ub = ub
            continue
        if uniform_grid(problem, 2 * k_low, low_factor).n_cells > max_cells:
            break
        k_low *= 2
    return OptimalNoise(best_ub.noise, best_ub, best_lb, best_ub.partition, time.perf_counter() - t0, history)
