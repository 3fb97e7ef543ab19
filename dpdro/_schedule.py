"""The grids of :func:`dpdro.optimal_noise`'s refinement (:mod:`dpdro.optimal`): the first one,
the next one predicted from the gaps, their alignment with the optimal staircase's plateau, the
predicted cost of a round (the segment rows of its LPs), and what a round does when its time runs
out (the reserve kept back, an upper bound abandoned, a coarse lower bound in its place)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from ._budget import TimeBudget
from ._closed_forms import (
    half_width,
    monotone_one_sided_bound,
    near_optimal_bound,
    near_optimal_terms,
    power_exponent,
    staircase_noise,
    staircase_optimal_gamma,
)
from ._monotone_one_sided import monotone_side
from .problem import InfeasibleError, Problem, RelaxationInfeasibleError
from .reference import best_shift, shifted_staircase_gamma, shifts_matter
from .release import LowerBound, UpperBound
from .solvers import SolverError


@dataclass(frozen=True)
class _Grids:
    """One round's grids and windows: the target resolution k, the upper bound's grid and window of
    cells, and the lower bound's grid, window of events and its width in units of Δf."""

    k: Fraction
    k_up: int | None
    L_up: int | None
    k_low: Fraction
    L_low: int
    w_low: float = 0.0
    L_full: int | None = None  # the lower bound's window before a one-sided narrowing (_lower_rows)


def relative_gap(upper: float, lower: float) -> float:
    """(P − D)/D as in the paper (Section 5.1); infinite when D ≤ 0."""
    return (upper - lower) / lower if lower > 0 else math.inf


def _round_record(
    n: int,
    grids: _Grids,
    ub: UpperBound | None,
    lb: LowerBound,
    best_ub: UpperBound,
    best_lb: LowerBound,
    seconds: float,
) -> dict:
    """One entry of ``OptimalNoise.history``: the round's grids and windows, its bounds ``ub``
    (``None`` when no upper-bound LP ran) and ``lb``, the best bounds so far and their gap, and the
    times."""
    return dict(
        round=n,
        k=float(grids.k),
        k_upper=grids.k_up if ub else None,
        k_lower=None if grids.k_low is None else float(grids.k_low),
        upper_window=grids.L_up if ub else None,
        lower_window=grids.L_low,
        upper=best_ub.value,
        lower=best_lb.value,
        round_upper=ub.value if ub else None,
        round_lower=lb.value,
        gap=relative_gap(best_ub.value, best_lb.value),
        upper_seconds=ub.seconds if ub else 0.0,
        lower_seconds=lb.seconds,
        seconds=seconds,
    )


def _first_steps(problem: Problem, half_width: float) -> Fraction:
    """The first grid, in steps per Δf: β about half the smaller of the truncated-Laplace
    half-width and the ℓ1 staircase's plateau width 2Δf/(1 + e^{ε/2}), the finest feature of the
    optimal noise (a power of two, below 1 for small ε: a coarse grid, see :mod:`dpdro.grid`)."""
    plateau = 2.0 / (1.0 + math.exp(min(problem.epsilon, 700.0) / 2))
    # below ε = 1 the steps of the staircase differ by e^{−ε} ≈ 1 − ε: only the width A matters
    scale = min(half_width / problem.sensitivity, plateau / min(problem.epsilon, 1.0))
    return Fraction(2) ** max(-20, min(6, math.ceil(math.log2(2.0 / scale))))


def _next_steps(history: list[dict], rel_gap: float, order: int = 2) -> Fraction:
    """The next grid: from the rate at which the last two rounds' gaps fell with the resolution
    (between k⁻¹ and k⁻³), the resolution that should reach ``rel_gap`` with 10% to spare, at least
    1.25 and at most 2 times the current one (4 times for lower bounds that converge like k⁻¹,
    ``order`` 1, :func:`_convergence_order`: one-sided ℓ1 at ε = 3.68, δ = 9.7e-6 went from k = 36
    (0.34%) to k = 80 and 102, 0.116% after 20 s; to k = 124 at once, 0.096% in 16 s); k a multiple
    of 4 beyond 8 and a power of two below 1. :func:`_fitting` keeps the round within the time
    left."""
    k, gap = history[-1]["k"], history[-1]["gap"]
    factor = 2.0
    if len(history) >= 2 and history[-2]["k"] < k and math.isfinite(gap) and gap > 0:
        k0, g0 = history[-2]["k"], history[-2]["gap"]
        rate = min(3.0, max(1.0, math.log(g0 / gap) / math.log(k / k0))) if g0 > gap else 1.0
        factor = min(4.0 if order == 1 else 2.0, max(1.25, 1.1 * (gap / rel_gap) ** (1.0 / rate)))
    if k < 1:
        return Fraction(k) * 2
    nxt = math.ceil(k * factor)
    return Fraction(nxt if nxt <= 8 else 4 * math.ceil(nxt / 4))


def _aligned(
    k, plateau: tuple[float, float] | None, offset: float, weights=(1.0, 1.0), ends=(),
    end_step: float = 1.0,
) -> Fraction:
    """An integer grid k′ ∈ [k, 1.25k] ([0.8k, 1.25k] for unequal ``weights``) whose plateau edges
    e·k′ lie closest to offset + ℤ and whose support ends a·k′ (``ends``, in units of Δf) lie on
    end_step·ℤ (the smallest such k′; distances summed over the edges, each times its ``weights``,
    plus :data:`_END_WEIGHT` for each end off end_step·ℤ).

    At large ε the optimal noise is close to a staircase whose central plateau has half-width γΔf
    (:meth:`dpdro.mechanisms.Staircase.optimal_gamma`), centred at 0 for a symmetric loss and at
    the staircase's best shift otherwise (:func:`dpdro.reference.best_shift`). A lower-bound grid
    (points iβ) represents it best when its edges are multiples of β (offset 0), an upper-bound grid
    (cells of width β centred on the points) when they are half-integers (offset ½): at
    (ε, δ) = (5, 0.25), ℓ1, the lower bound of the grid k = 66 (γk = 5.01) exceeds that of k = 64
    (γk = 4.85) by 0.2%. An edge counts by the loss's slope there (:func:`_edge_weights`): for an
    asymmetric loss the edge on the steep side matters most. A finite end a of ``Problem.support``
    other than 0 should be a grid point of the lower bound (``end_step`` 1: its rounded noise
    otherwise reaches the point past a, a relaxation by up to a grid step) and a cell edge of the
    upper bound (``end_step`` ½, :func:`dpdro._cells.cell_offset`): pinball τ = 0.3 on
    (−∞, −1.5], ε = 1, δ = 0.01 gave 4.0826 at k = 16 and 4.0773 at k = 37. Only exact
    alignment counts: an end nearer the grid need not give a better bound (pinball τ = 0.3 on
    (−0.81, ∞), ε = 0.0134, δ = 0.021: 5.9143 at k = 8, 5.9108 at k = 10). Any grid gives valid
    bounds; alignment only makes them tighter."""
    edges = [] if plateau is None or k < 4 else list(zip(plateau, weights, strict=True))
    if not edges and not ends:
        return Fraction(max(1, math.ceil(k)))
    # edges of unequal weight: the steep one alone nearly decides, and it may lie so close to 0
    # that no k′ in [k, 1.25k] puts it on the grid (e·k′ moves by less than 1 there): coarser grids
    # down to 0.8k are candidates too
    start = math.ceil(0.8 * k) if edges and weights[0] != weights[1] else math.ceil(k)
    candidates = range(max(1, start), math.ceil(1.25 * k) + 1)

    def misalignment(c):
        plateau_part = sum(w * abs((e * c - offset) - round(e * c - offset)) for e, w in edges)
        end_part = sum(abs(a * c / end_step - round(a * c / end_step)) > 1e-9 for a in ends)
        return plateau_part + _END_WEIGHT * end_part

    return Fraction(min(candidates, key=lambda c: (misalignment(c), c)))


# what a support end off the grid counts in _aligned, against at most 1 for a plateau edge
_END_WEIGHT = 4.0


def _edge_weights(problem: Problem, plateau: tuple[float, float] | None) -> tuple[float, float]:
    """How much each plateau edge's alignment counts in :func:`_aligned`: the loss's slope |c′| at
    the edge (Δf = 1 units; equal for a symmetric loss, so the edges count alike). Measured at
    pinball τ = 0.896, ε = 7.08, δ = 1.8e-5 (plateau (−0.084, 0.009)·Δf, slopes 0.104 and 0.896):
    the lower bound's gap is 0.32% at k = 120 and 0.13% at k = 111, whose right edge 1.00 lies on
    the grid (its left edge −9.36 does not), 0.05% at k = 220 (right edge 1.99)."""
    if plateau is None or problem.loss.symmetric:
        return 1.0, 1.0
    loss, sens = problem.loss, problem.sensitivity
    slopes = []
    for e in plateau:
        x, h = e * sens, 1e-6 * sens * max(abs(e), 1e-3)
        slopes.append(abs(float(loss(x + h)) - float(loss(x - h))) / (2.0 * h))
    if not all(math.isfinite(s) for s in slopes) or max(slopes) <= 0:
        return 1.0, 1.0
    return slopes[0] / max(slopes), slopes[1] / max(slopes)


def _plateau(problem: Problem, budget: TimeBudget | None = None) -> tuple[float, float] | None:
    """The edges, in units of Δf, of the central plateau of the best staircase for the problem's
    loss when ε ≥ 1 (where the plateau is narrow enough to matter), else ``None``: (−γ, γ), or
    (s − γ, s + γ) for the staircase shifted by its best shift s where shifts matter
    (:func:`dpdro.reference.shifted_staircase_gamma`). Its searches stop when ``budget`` expires
    (``None`` then, as for a loss without a finite staircase cost: no alignment; a callable loss
    evaluated point by point had taken 1.6 s of a 1 s limit here)."""
    if problem.epsilon < 1.0:
        return None
    eps, loss = problem.epsilon, problem.loss
    try:
        if not (shifts_matter(problem) and problem.support is None):
            gamma = staircase_optimal_gamma(eps, loss, budget)
            return -gamma, gamma
        gamma = shifted_staircase_gamma(eps, loss, budget)
        noise = staircase_noise(eps, 1.0, gamma, math.ceil(50.0 / eps) + 1)
        shift = best_shift(noise, loss, budget=budget)[0]
        return shift - gamma, shift + gamma
    except Exception:  # (TimeoutError included)
        return None


def _lower_rows(g: _Grids, full: bool = False) -> int:
    """The segment rows of a round's lower-bound LP, up to a factor that does not depend on the
    grid: a shift per step of Δf, times the window's event points (:mod:`dpdro.grid`); ``full``:
    those of its window before the narrowing of :func:`_one_sided_width`."""
    L = g.L_full if full and g.L_full is not None else g.L_low
    return max(1, g.k_low.numerator) * (2 * L + 1)


def _one_sided_width(a: float, factor: float, epsilon: float, sensitivity: float) -> float:
    """The lower bound's window from the end of a support bounded on one side: ``factor``·A below
    ε = 1, from there ``factor``/2 times min(2A, A + 9.2Δf/ε), A the truncated-Laplace half-width
    ``a``. The noise rises from that end over about A and falls over about A again, by
    e^−ε per Δf: beyond A + 9.2Δf/ε lies a mass of about 3e-5 (U(16) of ℓ1 on [0, ∞): 2.9e-5 at
    ε = 3.68, δ = 9.7e-6; 3.1e-5 at ε = 5.96, δ = 2.4e-6; 4.4e-5 at ε = 1.17, δ = 3.5e-8), which the
    LP's tail column carries at the window's edge, and any window gives a valid bound. At ε = 3.68
    its LP at k = 102 took 7.3 s instead of 9.8 s, for a bound 6e-8 lower (3.7378889 against
    3.7378891). Not below ε = 1 (at ε = 0.2, δ = 1e-10 HiGHS failed on the narrower LP). The rows
    ratio of the first upper-bound LP (:data:`dpdro.optimal._ROWS_RATIO`) is that of the window
    before: with the narrower one, the asymmetric loss on [0, ∞) at ε = 6.36 never solved an
    upper-bound LP and ended at 4.25% instead of 0.39%."""
    reach = 2.0 * a if epsilon < 1.0 else min(2.0 * a, a + 9.2 * sensitivity / epsilon)
    return 0.5 * factor * reach


def _upper_rows(k_up: int | None, L_up: int | None) -> int:
    """The segment rows of the upper-bound LP on the grid ``k_up`` with window ``L_up`` (a round's
    or, from its history, a past one's), in the units of :func:`_lower_rows`."""
    return max(1, k_up or 1) * (2 * (L_up or 0) + 1)


def _fitting(
    nxt: Fraction, g: _Grids, last: float, left: float, grids_at, order: int = 2
) -> Fraction:
    """The finest grid from ``nxt`` down to 1.25 times the round ``g`` just solved (in steps of 4, k
    a multiple of 4 beyond 8, as :func:`_next_steps` chooses it) whose round is predicted to finish
    in the time ``left``; the coarsest of them if none is (the refinement then stops when even that
    round costs more than the time left, :func:`optimal_noise`).

    Prediction: the last round's seconds times the growth of the lower-bound LP's rows
    (:func:`_lower_rows`; ``grids_at`` gives the grids of a resolution) to a power, 1.5 as a rule.
    Measured from one round to the next (ℓ1 at ε = 4, pinball at ε = 5.6, |x|^1.5 at ε = 3.8):
    seconds grew like rows to the powers 1.5, 1.6 and 1.8. With the subset of the shifts that floor
    LPs keep from k = 24 (:func:`dpdro.grid_rows.lower_shifts`) the rows counted are still all of
    them: the LP is smaller, but its time grows alike (one-sided ℓ1 at ε = 3.68, windows of 6Δf and
    7.9Δf: k = 72 → 108 → 144, 3.0 → 8.1 → 18 s, powers 1.22 and 1.29; 73 → 124 beyond 4.0). Lower
    bounds of ``order`` 1 (:func:`_convergence_order`) take the power 2: one-sided ℓ1 at ε = 1,
    δ = 0.5 (window 2Δf, LPs alone) took 0.41 s at k = 37 and 7.0 s at k = 76, rows to the power
    2.0, and with 1.5 its call went from k = 37 to 135, which ran out of the 20 s limit: 1.43%
    (0.52% with 2). Over one-sided ℓ1 at ε in {1, 2, 3, 4, 5} and δ in {1e-6, 1e-3, 0.1, 0.5} the
    power 2 ended better at ε ≤ 3 (ε = 3, δ = 1e-3: 0.31% → 0.096%) but for ε = 3, δ = 0.1 (0.35% →
    0.42%), and 0.01–0.09 points of gap worse at ε = 4 and 5.
    A round that runs out of time still keeps the bound where its lower-bound LP stopped
    (:class:`dpdro.grid.LowerBoundTimeout`), so erring on the fine side costs little: at ℓ2,
    ε = 7.31, the interrupted grid k = 160 (0.09%) beats the finished k = 116 (0.12%), while at
    ℓ1, ε = 4, the interrupted k = 134 is below the finished k = 67 and
    the finished k = 92 above it."""
    rows, low = _lower_rows(g), Fraction(math.ceil(1.25 * g.k))
    power = 2.0 if order == 1 else 1.5
    k = nxt
    while k > low:
        if last * (_lower_rows(grids_at(k)) / rows) ** power <= left:
            return k
        k = max(low, Fraction(4 * math.ceil(k / 4) - 4) if k > 8 else k - 1)
    return max(low, min(k, nxt))


def _after_infeasible(
    problem: Problem, g: _Grids, k: Fraction, max_k: int, exc: InfeasibleError
) -> tuple[Fraction, bool]:
    """After an infeasible bounding LP: (k, True) to widen the upper bound's window, or, once it
    holds a support bounded on both sides (a wider one adds no cell), (2k, False), up to ``max_k``
    (measured: support [−0.2, 3.8] at ε = 1, δ = 0.1 had widened the window until the time limit,
    or without end). Raises ``exc`` when P itself is infeasible (a relaxation's LP), and an
    InfeasibleError at ``max_k``."""
    if isinstance(exc, RelaxationInfeasibleError):
        raise exc
    sup = problem.support
    bounded = sup is not None and math.isfinite(sup[0]) and math.isfinite(sup[1])
    if not bounded or g.L_up * problem.sensitivity / g.k_up < max(-sup[0], sup[1]):
        return k, True
    if k < max_k:
        return min(2 * k, Fraction(max_k)), False
    raise InfeasibleError(
        f"no noise piecewise uniform on the grid sensitivity/{max_k} within the support {sup} is "
        f"({problem.epsilon:g}, {problem.delta:g})-DP (the upper-bound LP is infeasible, the lower "
        "bound's relaxation is not); widen the support"
    ) from exc


# the least time the coarse lower-bound LP of a call out of time gets (_fallback_lower_bound): with
# 0.5 ms, what 5% of a 0.01 s limit leaves, that LP at ℓ2, ε = 8, δ = 1e-9 (k = 8) ran out and the
# call raised TimeoutError with a certified noise in hand
_FLOOR_SOLVE = 0.02
# what the coarse LP of a call out of time takes at least, built and solved, even on the grid Δf
# (most of it assembling the sparse rows, outside the solver's limit): with a closed-form bound in
# hand it runs only if this much is left (measured: ℓ1 at ε = 1, δ = 1e-3 and the pinball loss at
# ε = 3, δ = 1e-12, k = 1: 4.9 and 5.9 ms, started with 1.8 and 3.6 ms of a 0.01 s limit left)
_FALLBACK_LP = 0.005


def _unless_timed_out(upper: Callable[..., UpperBound], budget: TimeBudget) -> UpperBound | None:
    """The round's upper bound within what is left of ``budget``, or ``None`` if its LP ran out of
    time: the round's lower bound, solved beside it or before it, is kept all the same (measured:
    ℓ2 at ε = 7.31, δ = 6.2e-5, the upper-bound LP of the second round ran out of a 20 s limit and
    took that round's lower bound with it)."""
    try:
        return upper(time_limit=budget.left())
    except TimeoutError:
        return None


def _reserve(seconds: float | None, share: float = 0.1) -> float:
    """The part of a time limit kept back for what must still run once a solve is abandoned: a
    ``share`` of it, at most 2 s (0 without a limit)."""
    return 0.0 if seconds is None else min(2.0, share * seconds)


def _reference_falls_short(
    upper: float, previous: LowerBound, lower: LowerBound, rel_gap: float, order: int = 2
) -> bool:
    """Whether the upper bound so far needs the upper-bound LP: the gap is open and the lower bound
    gained less than half of what remains (it converges like k⁻², gaining three times what remains,
    as long as the upper bound is close to the optimum), or its limit extrapolated from the last
    grids (Δf/k, k ≥ 1) as k^−order (:func:`_lower_limit`) is more than ``rel_gap`` below the
    upper bound (measured: ℓ2 at ε = 5, δ = 0.005, the staircase is 0.33% above U(66); the first
    rule alone ended at 0.39%)."""
    best, gain = max(lower.value, previous.value), lower.value - previous.value
    limit = _lower_limit(previous, lower, upper, order)
    return relative_gap(upper, best) > rel_gap and (
        gain < 0.5 * (upper - best) or relative_gap(upper, limit) > rel_gap
    )


def _lower_limit(previous: LowerBound, lower: LowerBound, upper: float, order: int = 2) -> float:
    """Two grids' (Δf/k, k ≥ 1) lower bounds extrapolated as k^−order (else ``upper``): order 2
    as a rule, 1 for a loss of constant slope on a support on one side of 0, whose gap is first
    order in β (:func:`_convergence_order`)."""
    k0, k1 = float(previous.k or 0), float(lower.k or 0)
    if not k1 > k0 >= 1:
        return upper
    gain = max(lower.value - previous.value, 0.0)
    return lower.value + gain * k0**order / (k1**order - k0**order)


def _convergence_order(problem: Problem) -> int:
    """How the lower bounds of :func:`dpdro.grid.grid_lower_bound` approach P as the grid Δf/k
    refines: like k⁻¹ for a loss of constant slope on a support on one side of 0 (ℓ1, pinball,
    the asymmetric loss: the floor of the noise lies about β/2 times the slope below P, and the
    floor rounding's gain takes back only a part, :mod:`dpdro._floor_weights`; measured:
    one-sided ℓ1 at ε = 3.68, δ = 9.7e-6, the gap times k is 0.43 at k = 8, 16 and 36), like k⁻²
    otherwise (where the slope grows, the weighted rows take back most of it). The k⁻² rule had
    taken one-sided ℓ1 at ε = 1.87, δ = 0.0058 (U(16) and U(37) 0.02% apart) into a round that
    waited 16 s for an upper-bound LP beside a lower bound done in 1.5 s; k⁻¹ for |x|³ on
    (−∞, 0] at ε = 0.27 had kept the call from the upper-bound LP it needed (0.097% → 0.19%)."""
    sup = problem.support
    one_side = sup is not None and (sup[0] >= 0.0 or sup[1] <= 0.0)
    return 1 if one_side and problem.loss.degree == 1 else 2


def _check_centred(problem: Problem, budget: TimeBudget, lower: Callable) -> None:
    """Raise RelaxationInfeasibleError when a support bounded on both sides and not centred at 0 is
    too narrow: privacy does not depend on where the support lies, so P is infeasible if it is on
    the support moved to be centred at 0, whose lower-bound LP on the grid Δf/4 shows it at once
    (:data:`_CENTRED_SHARE` of the time limit at most). Measured: ε = 1, δ = 1e-6, support
    (0, 1.6A) had run into its time limit on lazy rows of the grid Δf/16 that never showed the LP
    infeasible, while (−0.8A, 0.8A) was refused in 0.09 s. ``lower`` is
    :func:`dpdro.grid.grid_lower_bound`."""
    lo, hi = problem.support or (-math.inf, math.inf)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo == -hi or problem.monotone:
        return  # (monotone noise falls away from 0: moving its support changes the problem)
    half = (hi - lo) / 2
    centred = replace(problem, support=(-half, half))
    window = max(1, math.ceil(half * 4 / problem.sensitivity)) + 4
    limit = None if budget.seconds is None else _CENTRED_SHARE * budget.seconds
    try:
        lower(centred, 4, window, time_limit=limit)
    except RelaxationInfeasibleError:
        raise RelaxationInfeasibleError.of(
            problem, "the lower-bound LP on its support moved to be centred at 0"
        ) from None
    except (TimeoutError, SolverError, InfeasibleError):
        return  # (no answer: the refinement decides)


_CENTRED_SHARE = 0.05


def _narrow_support_note(problem: Problem) -> str:
    """What a call out of time before its first bounds adds to its message on a support at most
    1.01 times as wide as the truncated Laplace mechanism's, [−A, A]: no literature noise certifies
    on it, and its LPs are infeasible or slow (ε = 0.503, δ = 0.0283, support [−A, A]: the
    upper-bound LP infeasible on the grid Δf/8, out of 10 s on Δf/64; at 1.001·A the Tulap noise
    gives 0.22% in 0.08 s); empty elsewhere."""
    lo, hi = problem.support or (-math.inf, math.inf)
    a = half_width(problem.epsilon, problem.delta, problem.sensitivity)
    if not hi - lo <= 2.02 * a:
        return ""
    return (
        f"; the support ({lo:g}, {hi:g}) is {(hi - lo) / (2 * a):.4g} times as wide as the "
        f"truncated Laplace mechanism's, (-{a:g}, {a:g}): noises on so narrow a support are hard "
        "to find and to certify, widen it"
    )


def _fallback_lower_bound(
    problem: Problem, k, window: float, budget: TimeBudget, coarser: int, lower: Callable
) -> LowerBound | None:
    """The better of the closed-form bound (:func:`_closed_form_bound`, where it is cheap) and the
    lower bound of the grid ``coarser`` (8) times coarser than ``k`` (its LP takes a few
    hundredths of the time, the cost growing like k^2.5) within what is left of ``budget``: what
    the call returns when that LP ran out of time, or when the limit was spent before it
    (:mod:`dpdro.optimal`, the floor). With a closed-form bound in hand the LP runs only if at
    least :data:`_FALLBACK_LP` is left (building it is not part of its solver's limit); without
    one, it gets at least half the first LP's reserve again and at least :data:`_FLOOR_SOLVE`.
    The bound where its LP stopped if it runs out too (``None`` if there is none). ``lower`` is
    :func:`dpdro.grid.grid_lower_bound`."""
    closed = _closed_form_bound(problem)
    if closed is not None and budget.expired(_FALLBACK_LP):
        return closed
    k = Fraction(k)
    coarse = k / coarser if k < 1 else Fraction(max(1, math.ceil(k / coarser)))
    # what is left, and (no closed form) at least half the reserve again: at most 5% over the limit
    floor = 1e-3 if closed is not None else max(_reserve(budget.seconds, 0.05), _FLOOR_SOLVE)
    try:
        found = lower(
            problem,
            coarse,
            max(1, math.ceil(window * coarse / problem.sensitivity)),
            time_limit=budget.left(floor=floor),
        )
    except TimeoutError as exc:
        found = getattr(exc, "bound", None)
    except SolverError:  # (HiGHS gave up: measured on one-sided ℓ1 at ε = 3.08, δ = 1.7e-12, k = 1)
        if closed is None:
            raise
        found = None
    bounds = [b for b in (closed, found) if b is not None]
    return max(bounds, key=lambda b: b.value) if bounds else None


# the most terms of the closed-form bound for a loss other than |x|^k (a tail infimum each, 10–60
# microseconds measured for a callable, the pinball and the asymmetric loss: 6 ms at most)
_CLOSED_FORM_TERMS = 100


def _closed_form_bound(problem: Problem) -> LowerBound | None:
    """The 'near optimal lower bound' (:func:`dpdro.mechanisms.near_optimal_lower_bound`) as a
    :class:`~dpdro.release.LowerBound` (``coefficients="near_optimal"``, no grid): valid for every
    (ε, δ)-DP noise and every loss, so for P with any support or monotonicity (they only shrink
    its feasible set); ``None`` where it would take long (a loss other than |x|^k with more than
    :data:`_CLOSED_FORM_TERMS` terms: small ε with small δ) or is not finite or positive (0 for
    the asymmetric loss at ε = 10, δ = 0.9, which a call out of time at 0.1 s had returned as its
    lower bound: gap ∞, where the coarse LP gives 0.00036 in a few ms). Microseconds for
    |x|^k (a few milliseconds at ε = 1e-4, δ = 1e-12: 177,000 terms), so that a call whose limit
    is spent before its first lower bound runs no LP (measured at ℓ2, ε = 8, δ = 1e-9, a 0.01 s
    limit: the coarse LP had taken 18 ms of the 29). Weak for one-sided noise (it symmetrises).
    For monotone noise on one side of 0 (:mod:`dpdro._monotone_one_sided`) its own bound instead
    (:func:`dpdro._closed_forms.monotone_one_sided_bound`, ``"monotone_one_sided"``), which
    :func:`dpdro.optimal_noise` takes from the start: the uniform noise is within δ² of it."""
    p, t0 = problem, time.perf_counter()
    side = monotone_side(p)
    if side:  # (monotone noise on one side of 0: its own bound, within δ² of optimal for ℓ1)
        value = monotone_one_sided_bound(p.delta, p.sensitivity, p.loss, side)
        return LowerBound(value=value, lp_value=value, seconds=time.perf_counter() - t0,
                          coefficients="monotone_one_sided")
    if power_exponent(p.loss) is None and near_optimal_terms(p.epsilon, p.delta) > (
        _CLOSED_FORM_TERMS
    ):
        return None
    value = near_optimal_bound(p.epsilon, p.delta, p.sensitivity, p.loss)
    if not (math.isfinite(value) and value > 0):  # (0 at large δ: the coarse LP then runs)
        return None
    return LowerBound(
        value=value, lp_value=value, seconds=time.perf_counter() - t0, coefficients="near_optimal"
    )


# for lower bounds of order 1 (_upper_steps, _upper_too_slow): the first upper-bound LP's grid at
# most, and the share of the time left that a later one may be predicted to take
_FIRST_UPPER_STEPS, _UPPER_SHARE = 16, 0.75


def _upper_steps(history: list[dict], k, order: int):
    """The resolution that the round's upper-bound grid is aligned from: the round's own ``k``, but
    at most :data:`_FIRST_UPPER_STEPS` for the first upper-bound LP of lower bounds that converge
    like k⁻¹ (``order`` 1, :func:`_convergence_order`). There the upper bound is within 0.01–0.05%
    of the lower bounds' limit from k ≈ 16 on, and its LP costs from 2 to over 35 times the
    round's lower-bound LP: one-sided ℓ1 at ε = 4, δ = 1e-6 solved its first, U(38), in the
    second round, and it ran out of the 20 s limit beside a lower bound of 0.6 s (U(20) takes
    1.2 s); the call ended at 7.4%, the truncated Laplace mechanism's gap, instead of 0.2%."""
    solved = any(h["k_upper"] for h in history)
    return k if order != 1 or solved else min(k, Fraction(_FIRST_UPPER_STEPS))


def _upper_too_slow(history: list[dict], g: _Grids, left: float | None, order: int) -> bool:
    """Whether the round's upper-bound LP should not run beside its lower bound: for lower bounds
    of order 1, when its time predicted from the last upper-bound LP's, times the growth of the
    segment rows (:func:`_upper_rows`) squared, exceeds :data:`_UPPER_SHARE` of the time ``left``.
    Measured with the same lower bounds (one-sided): ℓ1 at ε = 4, δ = 1e-6, U(20) with 257 points
    1.1 s, U(46) with 591 (5.3 times the rows) ran out of the 18 s its call had left (on 493 points
    alone, seeded by U(20), of 40 s); the asymmetric loss at ε = 2.55, δ = 0.038, U(16) with 96
    points 0.06 s, U(39) with 232 (5.9 times) 1.0 s, and 0.05% better."""
    solved = [h for h in history if h["k_upper"]]
    if order != 1 or not solved or left is None:
        return False
    last = solved[-1]
    growth = _upper_rows(g.k_up, g.L_up) / _upper_rows(last["k_upper"], last["upper_window"])
    return last["upper_seconds"] * growth**2 > _UPPER_SHARE * left


def _upper_grid(history: list[dict], k_up: int, left: float | None) -> int:
    """The upper-bound LP's grid for a round whose own is ``k_up``: 1.5 times the last upper-bound
    LP's grid for the first such LP after a round without one (it had settled, or run out of time)
    whose time on ``k_up`` would exceed half the time ``left`` (:mod:`dpdro.optimal`), else
    ``k_up``. Its seconds are extrapolated as k^p from the last two upper-bound LPs (p from them,
    within [2, 6]; 3 after one): ℓ2 at ε = 5, δ = 0.5 gives p = 4.9 (U(38) 0.07 s, U(66) 1.06 s),
    and U(132) had not finished in 300 s."""
    solved = [(h["k_upper"], h["upper_seconds"]) for h in history if h["k_upper"]]
    if not solved or history[-1]["k_upper"] is not None or left is None:
        return k_up
    (k0, s0), (k1, s1) = ([(None, None)] + solved)[-2:]
    p = 3.0
    if k0 is not None and k1 > k0 and min(s0, s1) > 0:
        p = min(6.0, max(2.0, math.log(s1 / s0) / math.log(k1 / k0)))
    if s1 * (k_up / k1) ** p <= 0.5 * left:
        return k_up
    return min(k_up, math.ceil(1.5 * k1))
