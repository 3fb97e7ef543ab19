r"""Certified candidates without an LP: literature mechanisms released on a grid.

:func:`dpdro.optimal_noise` starts from the better of two noises that need no LP and keeps it while
the LPs cannot beat it (small ε, where the noise spans thousands of Δf, and large ε). Each candidate
is a noise certified ≤ δ by :func:`dpdro.certify_delta` and reported through
:func:`dpdro.release.certified_release`, exactly as an LP's release is: a new candidate (another
literature mechanism) is one more function returning ``(noise, certified δ)`` or ``None``.

* :func:`truncated_laplace_candidate`: the truncated Laplace mechanism (Geng et al. 2020) on cells
  of width h (a divisor of Δf), near optimal for small ε. Spreading its mass over cells can raise
  its δ slightly, so it is taken at δ′ ≤ δ, lowered until the certificate is at most δ.
* :func:`tulap_candidate`: the Tulap cells (Awan and Vadhan 2023) on the coarsest lattice Δf/N
  (N = 256 … 2^22) that costs at most 1e-7 more than Tulap itself, certified, when they are at most
  a thousand (beyond, at small ε and δ, the truncated Laplace mechanism is as good).
* :func:`staircase_candidate`: the staircase mechanism (Geng and Viswanath 2016), optimal for δ = 0,
  with its plateau γ rounded to a lattice Δf/N that costs below 1e-8 of the loss,
  truncated after P periods (which costs δ_P) and mixed with an atom at 0 of mass
  a = (δ − δ_P)/(1 − δ_P): its δ is at most a + (1 − a)·δ_P = δ
  (convexity of the hockey-stick divergence in the noise; the atom alone has δ = 1). Near optimal
  for large ε, where the optimal noise is a staircase with an atom of mass about δ; P is the
  cheapest number of periods. Without an atom (and for monotone problems) the truncated staircase
  alone, with the fewest periods P whose δ_P is at most δ.

Shifted candidates
    A translate X + s of an (ε, δ)-DP noise is (ε, δ)-DP (privacy is translation invariant), and
    for a loss that is not symmetric (pinball, the asymmetric loss) or a ``Problem.support`` that
    excludes 0 (one-sided noise) the best noise is not centred at 0. Each candidate is therefore
    also released with its cells shifted by their best shift (:func:`best_shift`; within the
    support, where there is one), on a lattice fine enough that rounding the shift costs at most
    1e-8 of the loss, and certified again exactly (``shifted_<name>``). The staircase keeps its atom
    at 0 where the support holds 0 (the mixture of a translate and an atom is private by the same
    convexity); the other candidates have none.

:func:`literature_losses` gives the expected loss of every literature mechanism dpdro implements
that the engine compares with (the staircase, Tulap, the truncated Laplace mechanism, and their best
shifts where they matter), as published: the value :func:`dpdro.optimal_noise` must not exceed.
"""

from __future__ import annotations

import math
import time
from functools import partial

import numpy as np
from scipy import optimize

from ._budget import TimeBudget
from ._closed_forms import (
    analytic_gaussian_sigma,
    gaussian_expected_loss,
    power_exponent,
    remember,
    staircase_expected_loss,
    staircase_noise,
    staircase_optimal_gamma,
    truncated_laplace_half_width,
    truncated_laplace_noise,
    tulap_cell_count,
    tulap_cells,
    tulap_outer_edge,
)
from ._monotone_one_sided import monotone_side, uniform_candidate
from .losses import PiecewiseLinear, make_loss
from .noise import PiecewiseUniform, fits_support
from .privacy import certify_delta, lattice_shifts, lattice_work
from .problem import Problem
from .release import RELEASE_MARGIN, UpperBound, certified_release

__all__ = [
    "best_shift",
    "literature_losses",
    "shifted_staircase_gamma",
    "shifts_matter",
    "reference_upper_bound",
    "staircase_candidate",
    "truncated_laplace_candidate",
    "tulap_candidate",
]

# the Tulap candidate only up to this many cells: its certificate on a lattice with few run points
# takes ~0.3 s at 40,000 cells (ε = 0.001, δ = 1e-12); at 1000 cells, the cap until then, Tulap was
# skipped at ε = 0.0369, δ = 1.73e-10 (1,005 cells) and the release cost 1.7e-4 more than it
_TULAP_CELLS = 100_000
_TULAP_LATTICES = tuple(4**j for j in range(4, 12))  # Δf/N, N = 256 … 2^22, for its outer edges


def literature_losses(problem: Problem, *, time_limit: float | None = None) -> dict[str, float]:
    """E c(X) of the literature mechanisms the engine compares its release with, at the
    problem's (ε, δ, Δf), as published (centred at 0), from :mod:`dpdro._closed_forms`: the
    staircase (γ optimised for the loss; ε-DP), Tulap (its cells at δ), the truncated Laplace
    mechanism (its cells of width max(Δf/4096, A/16384), within about 1e-6 of its loss) and the
    analytic Gaussian mechanism (at large δ the best of them: at (1, 0.9), ℓ2, 0.0719 against
    Tulap's 0.0945, which had been reported as the best known while ``dpdro compare`` named the
    Gaussian). Laplace is left out: the truncated Laplace mechanism is Laplace conditioned on
    |X| ≤ A, cheaper for every loss non-increasing then non-decreasing about 0; so is the
    classical Gaussian mechanism (where it is (ε, δ)-DP at all, its σ is not below the analytic
    one's). All are monotone; with a ``Problem.support`` only those whose support lies in it count
    (never the Gaussian), and only the piecewise-uniform ones are also translated by their best
    shifts.

    Parameters
    ----------
    problem : the instance of P.
    time_limit : seconds after which the expected losses and the best-shift searches stop, even
        midway (``None``: no limit): a search costs hundreds of expected losses, slow for a
        callable loss evaluated point by point or a staircase of 10⁵ cells at small ε
        (:func:`best_shift`), and for such a loss even one expected loss can take seconds (10⁶
        staircase cells at ε = 1e-4); a value or search cut short reports nothing. For the
        built-in losses the mechanisms as published take milliseconds and are always included.

    Returns
    -------
    dict: mechanism name ↦ E c(X).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Example 1 and Section 5.1 (the mechanisms compared with).
    """
    p = problem
    budget = TimeBudget(time_limit)
    eps, delta, sens = p.epsilon, p.delta, p.sensitivity
    half = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=sens)
    width = max(sens / 4096, half / 16384)
    cells = {
        "truncated_laplace": truncated_laplace_noise(eps, delta, sens, width),
        "tulap": tulap_cells(eps, delta, sens),
    }
    out = {}
    for name, noise in cells.items():
        if fits_support(noise, p.support):
            try:
                out[name] = float(noise.expected_loss(p.loss, budget=budget))
            except TimeoutError:
                pass
    if p.support is None:
        try:
            gamma = staircase_optimal_gamma(eps, p.loss, budget)
            out["staircase"] = float(staircase_expected_loss(eps, sens, gamma, p.loss, budget))
        except TimeoutError:
            pass
        if not budget.expired():
            sigma = analytic_gaussian_sigma(eps, delta, sens)
            value = gaussian_expected_loss(sigma, p.loss)
            if math.isfinite(value):  # (else beyond the floating-point range)
                out["analytic_gaussian"] = float(value)
        if shifts_matter(p) and not budget.expired():
            # the ε-DP staircase with γ optimised for its best shift, over ⌈50/ε⌉ + 1 periods (the
            # neglected mass is below e^{−50})
            gamma = shifted_staircase_gamma(eps, p.loss, budget)
            cells["staircase"] = staircase_noise(eps, sens, gamma, math.ceil(50.0 / eps) + 1)
    if shifts_matter(p):
        for name, noise in cells.items():
            try:
                found = best_shift(noise, p.loss, p.support, budget=budget)
            except TimeoutError:
                break
            if found is not None:
                out[f"shifted_{name}"] = found[1]
    return out


# γ of completed searches (the engine asks three times per call: candidates, values, grids)
_GAMMAS: dict = {}


def shifted_staircase_gamma(epsilon: float, loss, budget: TimeBudget | None = None) -> float:
    """γ minimising the staircase's expected loss at its best shift (:func:`best_shift`):
    min over γ ∈ [0, 1] of min over s of E c(X_γ + s), by bounded scalar minimisation (ε-DP
    staircase at Δf = 1 over ⌈50/ε⌉ + 1 periods; γ does not depend on Δf). For a symmetric loss
    the best shift is 0 and this is :func:`dpdro._closed_forms.staircase_optimal_gamma`.

    Each evaluation sums over 2(⌈50/ε⌉ + 1) cells at ~30 shifts: at ε = 0.0018 the whole search
    took 39 s. When ``budget`` expires the search stops and returns the best γ evaluated so far
    (every γ gives an ε-DP staircase; the centred optimum when none was, or the ℓ1 one,
    1/(1 + e^{ε/2}) in closed form, when the budget expired before even that search ended:
    :func:`dpdro._closed_forms.staircase_optimal_gamma`); only completed searches are
    remembered."""
    key = (epsilon, loss)
    if key in _GAMMAS:
        return _GAMMAS[key]
    loss = make_loss(loss)
    periods = math.ceil(50.0 / epsilon) + 1
    seen: dict[float, float] = {}

    def cost(gamma):
        g = min(max(float(gamma), 1e-6), 1 - 1e-6)
        if g not in seen:
            noise = staircase_noise(epsilon, 1.0, g, periods)
            seen[g] = best_shift(noise, loss, budget=budget)[1]
        return seen[g]

    try:
        start = staircase_optimal_gamma(epsilon, loss, budget)
    except TimeoutError:
        return staircase_optimal_gamma(epsilon, "l1")
    try:
        res = optimize.minimize_scalar(
            cost, bounds=(1e-6, 1 - 1e-6), method="bounded", options={"xatol": 1e-8}
        )
        gamma = min((float(res.x), start), key=cost)
    except TimeoutError:
        return min(seen, key=seen.get) if seen else start
    return remember(_GAMMAS, key, gamma)


def shifts_matter(problem: Problem) -> bool:
    """Whether a shifted candidate can beat the centred one (module docstring): a loss that is not
    symmetric or a support, and no monotonicity (a shift breaks it)."""
    return not problem.monotone and (not problem.loss.symmetric or problem.support is not None)


def best_shift(
    distribution, loss, support=None, *, budget: TimeBudget | None = None
) -> tuple[float, float] | None:
    r"""The shift s minimising E c(X + s), and that value: (s, E c(X + s)).

    A translate of an (ε, δ)-DP noise is (ε, δ)-DP, so for a loss that is not symmetric (or a
    support that excludes 0) the best translate of a literature mechanism is a literature mechanism
    too. E c(X + s) is convex in s for a convex loss; it is minimised by bounded scalar
    minimisation, and for a loss with one kink x₀ and slopes l < 0 < r (pinball, the asymmetric
    loss) the minimiser is given exactly by the first-order condition P(X < x₀ − s) = r/(r − l),
    i.e. s = x₀ − F⁻¹(r/(r − l)) (for the asymmetric loss c(x) = |x| + 1[x > 0]·|x|, minus the
    2/3-quantile), which is used instead.

    Parameters
    ----------
    distribution : a :class:`~dpdro.PiecewiseUniform` without atom (E c(X + s) from the loss's
        exact cell averages, any loss), or a literature mechanism of :mod:`dpdro.mechanisms` (its
        ``expected_loss`` and ``ppf``; a :class:`~dpdro.losses.PiecewiseLinear` loss only, whose
        knots are moved).
    loss : the loss c (through :func:`dpdro.make_loss`).
    support : ``None`` or (lo, hi): only shifts that keep a bounded noise's support inside it.
    budget : a :class:`dpdro._budget.TimeBudget`; once it has expired, the next evaluation of
        E c(X + s) raises ``TimeoutError`` (``None``: no limit).

    Returns
    -------
    (s, E c(X + s)), or ``None`` when no shift fits the noise into ``support``.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (the constraints of P are invariant under translation) and the
       GitHub appendix (the asymmetric loss).
    """
    loss = make_loss(loss)
    cost = _shifted_cost(distribution, loss)
    if budget is not None:
        cost = _within(cost, budget)
    lo, hi = support if support is not None else (-math.inf, math.inf)
    if isinstance(distribution, PiecewiseUniform):
        e0, e1 = float(distribution.edges[0]), float(distribution.edges[-1])
        width = e1 - e0
        a, b = max(lo - e0, -e1 - width), min(hi - e1, -e0 + width)
    else:
        if support is not None:
            raise ValueError("a support applies to a PiecewiseUniform noise only")
        a, b = -float(distribution.ppf(1.0 - 1e-9)), -float(distribution.ppf(1e-9))
    if a > b:
        return None
    if isinstance(loss, PiecewiseLinear) and loss.knots.size == 1:
        r, left = loss.right_slope, loss.left_slope
        s = min(max(float(loss.knots[0]) - float(distribution.ppf(r / (r - left))), a), b)
        return s, float(cost(s))  # convex, minimised at the quantile (clipped to [a, b])
    end = _end_minimiser(cost, a, b) if a < b and (power_exponent(loss) or 0.0) >= 1.0 else None
    if end is not None:
        return end, float(cost(end))
    candidates = [a, b]
    if a < b:
        res = optimize.minimize_scalar(
            cost, bounds=(a, b), method="bounded", options={"xatol": 1e-13 * (b - a)}
        )
        candidates.append(float(res.x))
    s = min(candidates, key=cost)
    return s, float(cost(s))


def _end_minimiser(cost, a: float, b: float) -> float | None:
    """``a`` (or ``b``) where the convex ``cost`` does not fall from it over 1e-9 of [a, b]: for
    x ≥ a + d convexity gives cost(x) ≥ cost(a + d) ≥ cost(a), so the minimiser lies within d of
    ``a`` (measured: the shift of a centred noise into a support [0, ∞) took 60 evaluations of
    bounded minimisation, 0.05 s of a 0.1 s limit at ε = 0.0014); ``None`` otherwise."""
    d = 1e-9 * (b - a)
    if cost(a + d) >= cost(a):
        return a
    if cost(b - d) >= cost(b):
        return b
    return None


def _within(cost, budget: TimeBudget):
    """``cost`` that raises ``TimeoutError`` instead of evaluating once ``budget`` has expired."""

    def timed(s):
        if budget.expired():
            raise TimeoutError("the best-shift search ran out of its time budget")
        return cost(s)

    return timed


def _shifted_cost(distribution, loss):
    """s ↦ E c(X + s) (:func:`best_shift`)."""
    if isinstance(distribution, PiecewiseUniform):
        if distribution.atom != 0:
            raise ValueError("best_shift needs a noise without an atom (an atom stays at 0)")
        nz = distribution.probs > 0
        edges, probs = distribution.edges, distribution.probs[nz]
        lo, hi = edges[:-1][nz], edges[1:][nz]
        # non-negative terms (c ≥ 0): numpy's pairwise sum is within log₂(n)·u of the exact sum,
        # as accurate as math.fsum is needed here and 60× faster (measured at 50,000 cells: the
        # truncated Laplace noise of ε = 0.0014, δ = 7.8e-12, shifted into [0, ∞), whose search
        # took 0.23 s of a 0.1 s limit)
        return lambda s: float(np.sum(probs * loss.cell_average(lo + s, hi + s)))
    if not isinstance(loss, PiecewiseLinear):
        raise TypeError(
            "best_shift of a literature mechanism needs a PiecewiseLinear loss (its knots are "
            f"moved); got {loss.name!r}: pass the mechanism's PiecewiseUniform cells instead"
        )

    def cost(s):
        moved = PiecewiseLinear(
            loss.knots - s, loss.values, left_slope=loss.left_slope, right_slope=loss.right_slope
        )
        return float(distribution.expected_loss(moved))

    return cost


# a shift is rounded to the candidate's lattice refined at most this many times
_SHIFT_REFINEMENT = 256


def _refinement_within(
    budget: TimeBudget | None, seconds: float, noise: PiecewiseUniform, sensitivity: float
) -> int:
    """The largest power of two m ≤ :data:`_SHIFT_REFINEMENT` whose shifted ``noise``'s certificate
    should end within what is left of ``budget``, predicted from ``seconds``, what the noise took on
    its own lattice (its making and certificate), times the growth of the lattice shifts the
    certificate evaluates (:func:`dpdro.privacy.lattice_shifts`, a pass over the cells each): every
    one of the m times as many, or the differences of edges within Δf where they are fewer, as
    many for every m (the staircase's few edges: any m). Measured: before the latter, the shifted
    staircase at pinball τ = 0.8, ε = 8, m = 256, took 1.2 s of a 1 s limit. 0 when not even m = 1
    fits; no limit, no cap."""
    left = None if budget is None else budget.left()
    if left is None:
        return _SHIFT_REFINEMENT
    if seconds > left:
        return 0
    k, ticks = round(sensitivity / noise.grid), noise.ticks
    base = lattice_shifts(ticks, k).size
    m = 1
    while (
        2 * m <= _SHIFT_REFINEMENT
        and seconds * lattice_shifts(ticks * 2 * m, k * 2 * m).size <= left * base
    ):
        m *= 2
    return m


def _shifted_noise(
    problem: Problem,
    noise: PiecewiseUniform,
    budget: TimeBudget | None = None,
    seconds: float = 0.0,
    forced: bool = False,
) -> PiecewiseUniform | None:
    """``noise`` (a candidate on its lattice) with its cells translated by their best shift
    (:func:`best_shift`, within the problem's support) rounded to its lattice Δf/N refined by the
    smallest power of two m ≤ :data:`_SHIFT_REFINEMENT` for which the rounding costs at most 1e-8
    of the loss (at most the m whose certificate fits in ``budget``, :func:`_refinement_within`,
    from the ``seconds`` the candidate took), and its atom, if any, left at 0 (not certified yet:
    the translate of an (ε, δ_P)-DP noise mixed with an atom of mass a is (ε, a + (1 − a)δ_P)-DP by
    the convexity of the hockey-stick divergence, as for the centred staircase, and the certificate
    is computed again exactly where it is released); ``None`` when no shift fits the support or
    no certificate fits the budget (``TimeoutError`` when it expires during the search). ``forced``
    (the release needs it): the search ignores the budget and m = 1 is always allowed."""
    p = problem
    most = max(_refinement_within(budget, seconds, noise, p.sensitivity), int(forced))
    if most == 0:
        return None
    if forced:
        budget = None
    cells = noise
    if noise.atom > 0:  # the shift of the cells alone: the atom's cost c(0) does not depend on it
        cells = PiecewiseUniform(noise.edges, noise.probs / (1.0 - noise.atom), grid=noise.grid)
    found = best_shift(cells, p.loss, p.support, budget=budget)
    if found is None:
        return None
    s, value = found
    cost = _shifted_cost(cells, p.loss)
    lo, hi = p.support if p.support is not None else (-math.inf, math.inf)
    ticks, m, chosen = noise.ticks, 1, None
    while m <= most:
        h = noise.grid / m
        near = {math.floor(s / h), math.ceil(s / h)}
        fitting = [
            j for j in near if lo <= (ticks[0] * m + j) * h and (ticks[-1] * m + j) * h <= hi
        ]
        if fitting:
            j = min(fitting, key=lambda j: cost(j * h))
            chosen = (m, j)
            if cost(j * h) <= value * (1.0 + 1e-8):
                break
        m *= 2
    if chosen is None:
        return None
    m, j = chosen
    h = noise.grid / m
    meta = dict(noise.metadata, shift=j * h)
    return PiecewiseUniform(
        (ticks * m + j) * h, noise.probs, grid=h, metadata=meta, atom=noise.atom
    )


def _shifted_pool(
    problem: Problem,
    base: dict,
    cell_width: float,
    budget: TimeBudget,
    atom: bool = True,
    forced: bool = False,
) -> list[tuple]:
    """The shifted candidates of :func:`reference_upper_bound`'s pool, not yet certified: (expected
    loss, ``shifted_<name>``, noise, ``None``, its maker at a level δ′), those built before the
    budget expires. ``base`` holds the centred candidates built at δ, each with the seconds it took
    (the staircase's is rebuilt with γ for its shift, and with its atom at 0 where ``atom`` and the
    support allow one: its cells are shifted, the atom is not, :func:`_shifted_noise`; measured at
    the asymmetric loss, ε = 8.53, δ = 0.0197, where the staircase without atom left δ − δ_P unused:
    2% lower). ``forced`` (no centred candidate fits the support): they are the first release, and
    are built until one is, on the coarsest lattice the time left allows (:func:`_shifted_noise`;
    measured at ε = 0.0014, δ = 7.8e-12, support [0, ∞): the shifted truncated Laplace candidate's
    certificate on the lattice refined 256 times took 0.3 s of a 0.1 s limit)."""
    loss = problem.loss
    lo, hi = problem.support if problem.support is not None else (-math.inf, math.inf)
    with_atom = atom and lo <= 0.0 <= hi
    makers = {
        "truncated_laplace": lambda q: truncated_laplace_candidate(q, cell_width),
        "staircase": lambda q: staircase_candidate(
            q, atom=with_atom, gamma=shifted_staircase_gamma(q.epsilon, loss, budget)
        ),
        # with a certified candidate in hand (a centred one, or a shifted one when ``forced``),
        # Tulap only if its certificate fits in the time left (measured: asymmetric loss,
        # ε = 0.0128, Δf = 7.5: 0.42 s of a 0.1 s limit)
        "tulap": lambda q: tulap_candidate(q, affordable=lambda noise: (forced and not out) or (
            _certificate_fits(noise, problem.sensitivity, budget))),
    }
    out = []
    for name, make in makers.items():
        if budget.expired() and (out or not forced):
            break
        if name == "staircase" and problem.epsilon < 0.5:
            continue
        remake = partial(_remade_shifted, problem, make, budget, forced)
        made, seconds = base.get(name, (None, 0.0)) if name != "staircase" else (None, 0.0)
        try:  # (the centred candidate built at δ already, or made again)
            shifted = (
                _shifted_noise(problem, made[0], budget, seconds, forced)
                if made
                else remake(problem.delta)
            )
        except TimeoutError:
            break
        if shifted is not None:
            out.append((shifted.expected_loss(loss), f"shifted_{name}", shifted, None, remake))
    return out


def _remade_shifted(
    problem: Problem, make, budget: TimeBudget, forced: bool, level: float
) -> PiecewiseUniform | None:
    """The candidate of ``make`` designed at δ′ = ``level``, translated by its best shift
    (:func:`_shifted_noise`, within ``budget`` unless ``forced``), or ``None``."""
    t0 = time.perf_counter()
    c = make(problem.with_delta(level))
    if c is None:
        return None
    return _shifted_noise(problem, c[0], budget, time.perf_counter() - t0, forced)


def _certified_shifted(
    problem: Problem, noise: PiecewiseUniform, remake, budget: TimeBudget
) -> tuple:
    """(noise, certified δ) of a shifted candidate: translation leaves δ unchanged, but the
    certificate's rounding allowance grows with the edges' magnitude, so a candidate certified
    within that allowance of δ can exceed δ once moved (measured at δ = 1.6e-12, one-sided:
    1.59998e-12 centred, 1.60432e-12 moved); it is then designed again at a δ′ lowered by twice
    the excess (three tries, while ``budget`` lasts)."""
    d = certify_delta(noise, problem.epsilon, problem.sensitivity)
    level = problem.delta
    for _ in range(3):
        if d <= problem.delta or budget.expired():
            break
        level -= 2.0 * (d - problem.delta)
        try:
            moved = remake(level) if level > 0 else None
        except TimeoutError:
            break
        if moved is None:
            break
        noise, d = moved, certify_delta(moved, problem.epsilon, problem.sensitivity)
    return noise, d


# the least time a lattice certificate takes per run point (privacy.lattice_work), for skipping
# a candidate whose certificate cannot end within the time limit: a third of what was measured
# here (0.4 s for 2.7M points: Tulap at ε = 0.0128, δ = 9.7e-5 on Δf/1024, 660 edges, 2,049
# shifts), so that a faster machine skips no candidate it could certify in time
_SECONDS_PER_RUN_POINT = 5e-8
# and per cell (the Tulap candidate's designs on every lattice and the certificate of the one with
# the fewest run points, 26,000–40,000 cells: 5e-6 s per cell measured here, at ε = 0.0014 0.13 s,
# which had taken a 0.1 s limit to 0.2 s)
_SECONDS_PER_CELL = 4e-6


def reference_upper_bound(
    problem: Problem, cell_width: float, *, atom: bool = True, time_limit: float | None = None
) -> UpperBound | None:
    """The best of the certified candidates of the module docstring, shifted ones included where
    they matter (``None`` when none fits a ``Problem.support``).

    Parameters
    ----------
    problem : the instance of P.
    cell_width : the cells of the truncated Laplace candidate (a divisor of Δf).
    atom : let the staircase candidate carry a point mass at 0 (ignored for monotone problems).
    time_limit : seconds after which no further candidate is built or certified (``None``: no
        limit). The first candidate that fits the support is always built and certified, so that
        there is a certified release (the centred ones in the order staircase, truncated Laplace,
        Tulap, then the shifted ones); a limit shorter than that one takes is exceeded by it
        (measured: the truncated Laplace candidate at ε = 1e-4, δ = 1e-12, Δf/1 cells, 354,552 of
        them: 1.4 s, its certificate nearly all of it). Tulap, when not the first, is certified
        only if its certificate's predicted time fits in the time left. A shifted candidate's
        certificate is predicted from what its centred candidate took and its lattice refined only
        as far as the time left allows (:func:`_refinement_within`).

    Returns
    -------
    UpperBound with ``noise`` certified ≤ δ, ``k = L = 0`` and ``boundary_mass = 0`` (no LP, no
    window).

    References
    ----------
    .. [1] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020 (the truncated Laplace mechanism).
    .. [2] Q. Geng and P. Viswanath, "The optimal noise-adding mechanism in differential privacy",
       IEEE Trans. Inf. Theory 62(2), 2016 (the staircase mechanism).
    """
    budget = TimeBudget(time_limit)
    atom = atom and not problem.monotone
    loss = problem.loss
    # (expected loss, name, noise, certified δ or None, the noise's maker at a level δ′ or None):
    # a shifted noise is certified only if it is the best
    pool, base = [], {}
    makers = {"uniform": partial(uniform_candidate, problem)} if monotone_side(problem) else {
        "staircase": partial(staircase_candidate, problem, atom=atom),
        "truncated_laplace": partial(truncated_laplace_candidate, problem, cell_width),
        # with a certified candidate in hand (one that fits, or one to shift into the support),
        # Tulap only if its certificate fits in the time left
        "tulap": partial(tulap_candidate, problem, affordable=lambda noise: not any(
            c for c, _ in base.values()) or _certificate_fits(noise, problem.sensitivity, budget)),
    }  # (no centred candidate fits monotone noise on one side of 0; the uniform one does)
    for name, make in makers.items():
        if pool and budget.expired():
            break
        t0 = time.perf_counter()
        c = make()
        base[name] = (c, time.perf_counter() - t0)
        if c is not None and fits_support(c[0], problem.support):
            pool.append((c[0].expected_loss(loss), name, c[0], c[1], None))
    if shifts_matter(problem):
        # no centred candidate fits the support: the shifted ones are the first release
        pool += _shifted_pool(problem, base, cell_width, budget, atom, forced=not pool)
    pool.sort(key=lambda c: c[0])
    while pool:
        value, source, noise, d, remake = pool.pop(0)
        if d is None:
            # while a certified candidate remains, a shifted one is certified only in time
            spare = any(c[3] is not None for c in pool)
            if spare and budget.expired():
                continue
            noise, d = _certified_shifted(
                problem, noise, remake, budget if spare else TimeBudget(None)
            )
            value = noise.expected_loss(loss)
        if d <= problem.delta:
            break
    else:
        return None  # a support no candidate fits
    # what every released noise records (SecureSampler.from_file reads it)
    meta = dict(noise.metadata, mechanism=source, epsilon=problem.epsilon, delta=problem.delta,
                sensitivity=problem.sensitivity, loss=problem.loss.name)
    noise = PiecewiseUniform(
        noise.edges, noise.probs, grid=noise.grid, metadata=meta, atom=noise.atom
    )
    return certified_release(value, d, budget.elapsed(), noise=noise, k=0, L=0,
                             boundary_mass=0.0, source=source)


def _certificate_fits(noise: PiecewiseUniform, sensitivity: float, budget: TimeBudget) -> bool:
    """Whether the lattice certificate of ``noise`` is predicted to end within ``budget``: its run
    points (:func:`dpdro.privacy.lattice_work`, none without a grid) times
    :data:`_SECONDS_PER_RUN_POINT` plus its cells times :data:`_SECONDS_PER_CELL` (always without
    a limit)."""
    if budget.seconds is None:
        return True
    work = (lattice_work(noise, sensitivity) or 0) if noise.grid is not None else 0
    predicted = work * _SECONDS_PER_RUN_POINT + noise.probs.size * _SECONDS_PER_CELL
    return predicted <= budget.left()


def tulap_candidate(problem: Problem, affordable=None) -> tuple[PiecewiseUniform, float] | None:
    """Tulap designed at the largest δ′ ≤ δ whose outer edges lie on a lattice Δf/N (its inner
    edges (k + ½)Δf do already), so that the noise has a lattice as every released noise does: of
    the N in :data:`_TULAP_LATTICES` whose design costs at most 1e-7 more than Tulap at δ, the one
    whose certificate has the fewest run points (:func:`dpdro.privacy.lattice_work`; the coarser
    on ties), else the cheapest design. Measured: ℓ2 at ε = 0.1, δ = 0.01 costs 7.2e-5 more at
    N = 1024 and 1.2e-7 at N = 65536 (with N = 1024 at most, 31 of the 200 cells of the paper's
    tables released noise up to 0.007% costlier than Tulap); at ε = 0.0369, δ = 1.73e-10 (1,005
    cells) the coarsest design within 1e-7, N = 256, has 1.0M run points (0.58 s to certify),
    N = 4096 has 10,060 (3 ms), and at ε = 0.001, δ = 1e-12 (40,063 cells) only N ≥ 262144 has
    few (0.4M, against 41M–10^10). Only the chosen design is certified (then the next ones if it
    fails); few edges make that cheap (δ(φ) at their differences only,
    :func:`dpdro.privacy.privacy_profile`). A design that ``affordable(noise)`` (if given) rejects
    is not certified. (noise, certified δ), or ``None`` (more than :data:`_TULAP_CELLS` cells, or
    none ≤ δ)."""
    p = problem
    if tulap_cell_count(p.epsilon, p.delta) > _TULAP_CELLS:
        return None
    tulap = tulap_cells(p.epsilon, p.delta, p.sensitivity)
    if affordable is not None and not affordable(tulap):  # (its cells: before any design)
        return None
    target = tulap.expected_loss(p.loss) * (1.0 + 1e-7)
    designs = []  # (cost, certificate run points, lattice) of the designs at δ
    for lattice in _TULAP_LATTICES:
        noise = _tulap_on_lattice(p, lattice, p.delta)
        if noise is not None:
            work = lattice_work(noise, p.sensitivity)
            designs.append((noise.expected_loss(p.loss), math.inf if work is None else work,
                            lattice))
    # certified in turn: the designs within the target, fewest run points first, then the others,
    # cheapest first
    met = sorted((d for d in designs if d[0] <= target), key=lambda d: d[1:])
    for _, _, lattice in met + sorted(d for d in designs if d[0] > target):
        found = _certified_tulap(p, lattice, affordable)
        if found is not None:
            return found
    return None


def _certified_tulap(p: Problem, lattice: int, affordable=None):
    """(Tulap on the lattice Δf/``lattice``, certified δ ≤ δ), or ``None``: designed at δ, and
    again at a δ′ lowered by twice the excess while the certificate exceeds δ (three tries;
    measured at ε = 0.05, δ = 1e-10: 1.0000002e-10 at the first); ``None`` as well when
    ``affordable`` rejects the first design."""
    level = p.delta
    for attempt in range(4):
        noise = _tulap_on_lattice(p, lattice, level)
        if noise is None or attempt == 0 and affordable is not None and not affordable(noise):
            return None
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            return noise, d
        level -= 2.0 * (d - p.delta)
        if level <= 0:
            return None
    return None


def _tulap_on_lattice(p: Problem, lattice: int, level: float) -> PiecewiseUniform | None:
    """Tulap at the largest δ′ ≤ ``level`` whose support's half-width t(δ′) is a multiple of
    Δf/lattice: t grows continuously as δ′ falls, so δ′ is found by bisection."""
    eps, sens = p.epsilon, p.sensitivity
    h = sens / lattice
    target = math.ceil(tulap_outer_edge(eps, level, sens) / h) * h
    lo, hi = 0.5 * level, level  # t(lo) ≥ target ≥ t(hi)
    if tulap_outer_edge(eps, lo, sens) < target:
        return None  # pragma: no cover - halving δ lengthens the support by more than h
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tulap_outer_edge(eps, mid, sens) >= target else (lo, mid)
    cells = tulap_cells(eps, lo, sens)
    ticks = np.round(cells.edges / h)
    if np.any(np.abs(cells.edges / h - ticks) > 1e-6):
        return None  # pragma: no cover - the bisection converges to the lattice point
    meta = {"mechanism": "tulap", "epsilon": eps, "delta": p.delta, "design_delta": lo}
    return PiecewiseUniform(ticks * h, cells.probs, grid=h, metadata=meta)


#: how far below δ the truncated Laplace candidate is first designed: its adjacent cells are all
#: near-ties of the certificate (mass ratio e^ε), whose rounding allowance then adds about 8u times
#: their mass (measured: 6.4e-16 to 8.4e-16 at ε from 1e-4 to 5, δ from 1e-12 to 0.1, cells Δf and
#: Δf/64); designed at δ itself, the first certificate exceeded δ by that much every time, and the
#: candidate took two or three certificates (ε = 1e-4, δ = 1e-12: 5.0 s, now 1.5 s in the same run;
#: ε = 1e-3: 0.39 s, now 0.11 s)
_TRUNCATED_LAPLACE_ROOM = 1e-15


def truncated_laplace_candidate(
    problem: Problem, cell_width: float
) -> tuple[PiecewiseUniform, float] | None:
    """The truncated Laplace mechanism on cells of width ``cell_width``, at the largest δ′ ≤ δ tried
    whose cells certify at most δ: (noise, certified δ). The first δ′ is δ less
    :data:`_TRUNCATED_LAPLACE_ROOM` (its cost in expected loss, against the δ′ the second
    certificate used to find: at most 1.2e-10 relative, measured at ε from 1e-4 to 5 and δ from
    1e-12 to 0.1)."""
    p = problem
    target = p.delta - _TRUNCATED_LAPLACE_ROOM if p.delta > 2 * _TRUNCATED_LAPLACE_ROOM else p.delta
    for _ in range(8):
        noise = truncated_laplace_noise(p.epsilon, target, p.sensitivity, cell_width)
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            return noise, d
        target *= (p.delta / d) * (1.0 - 1e-9)
    return None  # pragma: no cover - δ′ converges in one or two steps


def staircase_candidate(
    problem: Problem, *, atom: bool = True, max_periods: int = 250, gamma: float | None = None
) -> tuple[PiecewiseUniform, float] | None:
    """The truncated staircase with an atom at 0 (module docstring): (noise, certified δ), or
    ``None`` for ε < ½ (its steps barely decay there; Tulap and the truncated Laplace mechanism
    are as good), when more than ``max_periods`` periods are needed (its certificate grows
    quadratically in the cells) or when δ leaves no room for the certificate's rounding
    allowance. ``gamma``: the plateau (default: optimal for the loss, centred)."""
    p = problem
    if p.epsilon < 0.5:
        return None
    if gamma is None:
        gamma = staircase_optimal_gamma(p.epsilon, p.loss)
    lattice = _staircase_lattice(gamma)
    gamma = min(max(round(gamma * lattice), 1), lattice - 1) / lattice
    # the cheapest number of periods, from the exact δ_P and expected losses (no certificate yet)
    best = None
    for periods in range(1, max_periods + 1):  # more periods: less δ lost to truncation, more atom
        base = staircase_noise(p.epsilon, p.sensitivity, gamma, periods)
        d_p = base.metadata["delta"]
        if d_p >= p.delta:
            continue
        mass = (p.delta - d_p) / (1.0 - d_p) * (1.0 - RELEASE_MARGIN) if atom else 0.0
        cost = (1.0 - mass) * base.expected_loss(p.loss)
        if best is not None and cost >= best[2]:
            break  # the cost rises again: the truncation no longer pays
        best = (base, mass, cost)
        if not atom:
            break  # without an atom, the fewest periods are the cheapest
    if best is None:
        return None
    base, mass, _ = best
    for _ in range(3):  # certify, making room for the certificate's rounding allowance if needed
        noise = PiecewiseUniform(
            base.edges,
            base.probs * (1.0 - mass),
            atom=mass,
            grid=p.sensitivity / lattice,
            metadata=dict(base.metadata, atom=mass, delta=p.delta),
        )
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            return noise, d
        mass -= 2.0 * (d - p.delta)
        # the rounding allowance exceeds the room δ − δ_P leaves (tiny δ)
        if not atom or mass < 0.0:
            return None
    return None  # pragma: no cover


def _staircase_lattice(gamma: float, smallest: int = 64, largest: int = 4096) -> int:
    """The smallest N ≥ ``smallest`` (at most ``largest``) for which rounding γ to a multiple of
    1/N costs at most 1e-8 of the staircase's loss, 0.34·(Δγ/γ)² (measured at ε = 8; γ is
    optimal, so the loss is flat in it). The certificate's time grows with N."""
    for n in range(smallest, largest):
        if 0.34 * ((round(gamma * n) / n - gamma) / gamma) ** 2 <= 1e-8:
            return n
    return largest
