r"""``optimal_noise``: certified near-optimal noise, refined until (P − D)/D is small, no knobs.

Each round solves, on one uniform grid β = Δf/k, the upper-bound LP U(k) and the lower-bound LP
D_R(k) of :mod:`dpdro.grid` (randomized-rounding coefficients wherever they are valid, the paper's
cell infima otherwise), and doubles k until the certified relative gap between the best upper and
the best lower bound found so far is at most ``rel_gap``. Every round's bounds are valid, so the
result is the best bracket of all rounds:

* the upper bound is the exact expected loss of a released noise with ``certify_delta ≤ δ``
  (piecewise uniform on centred cells, with an atom at 0 when it helps: large ε and δ);
* the lower bound is the Lagrangian of D_R(k) at sign-feasible duals, rounded down.

Why one grid: U(k) and D_R(k) share their privacy constraints (:mod:`dpdro.grid`), so their gap is
an objective difference — at most β/4 times the lower bound's mass at 0 for ℓ1, β²/3 for ℓ2 — plus
the effect of the windows. It shrinks like k⁻² once the grid resolves the optimal noise's central
plateau (width about 2Δf/(1 + e^{ε/2}) for ℓ1), which is why large ε needs large k.

Everything else is decided from the problem: the windows start at 1.5 (upper) and 1 (lower) times
the truncated-Laplace half-width A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)) (Geng et al. 2020) and grow by
half whenever the upper bound's noise puts mass in its outermost Δf or the lower bound's solution
leaves mass worth more than a tenth of the gap in its tail blocks, beyond every point with a
variable, or, once its last refinement gained less than a quarter of the gap, outside its window
(the points just outside carry their own costs: while refining the grid pays, their mass is no sign
of a window too small; at ε = 4, ℓ1, k = 67 it grew the window from 1.1 to 2.5·Δf, making the LP
six times slower for a bound higher by 4e-5 relative, while for the asymmetric loss at ε = 0.5,
δ = 0.9 the lower bound stalls without it; before that, it grows if the wider window's LP on the
same grid gains a tenth of the gap: ℓ1 at ε = 0.5, δ = 0.75, k = 32: 0.29% with A, 0.076% with
1.5·A) (the upper bound's window triples when it is too small to be feasible at all, which a support
bounded on one side makes more likely; an infeasible lower-bound LP, a relaxation of P, ends the
call: no noise in that support is private); the first grid resolves the finest feature of the
optimal noise (k = 2 for small ε, 4 at ε = 1, 16 at ε = 5; at most 16 for a support bounded on one
side, whose LPs have twice the shifts and twice the window, and whose lower-bound window is not cut
to the plateau's reach: that noise lies on [0, 2A]); symmetric losses use the symmetric LPs (half
the variables and half the shifts); small δ uses the scaled upper-bound LP.

The grids (the first, the next, their alignment and predicted cost) are chosen in
:mod:`dpdro._schedule`. Each round's two grids are moved up to a quarter finer to align with the
plateau of the optimal staircase (:func:`_aligned`), which makes both bounds much tighter at large
ε; for an asymmetric loss the edge on the steeper side counts most, and the grid may also move up
to a fifth coarser to put it on the grid. After two rounds the next k is predicted from how fast
the gap fell (:func:`_next_steps`) instead of doubled. For small ε the lower bound's grid may be
coarser than Δf (group privacy, :mod:`dpdro.grid`), and the truncated Laplace mechanism on a grid
(:func:`dpdro.reference.reference_upper_bound`, no LP) is an upper bound within a fraction of a
percent: each round solves the lower bound first and the upper-bound LP only once the reference is
seen to fall short (in the first round: over :data:`_FAR` above its lower bound) and its rows are
within :data:`_ROWS_RATIO` of the lower bound's; from then on the two LPs of a round are solved
side by side in two threads (under a time limit the upper bound's is stopped once the lower bound
closes the gap without it (:class:`dpdro.solvers.Interrupt`) and dropped had it finished first:
the race never decides), except while the upper bound has settled (its last refinement gained less
than a quarter of the gap left) and the lower bound is closing in (its last round gained at least
half of it, unless their k⁻² limit lies more than the gap below the upper bound), or while the best
upper bound lies within a quarter of the gap of the lower bounds' limit extrapolated as k⁻² from
their last two grids (:meth:`_Search.upper_suffices`; the next grid is then predicted from the
lower-bound LP's time alone): at large ε the lower bound converges more slowly, and its LP is the
cheaper one. The first upper-bound LP after a round without one is on a grid at most 1.5 times its
last where the round's grid would take more than half the time left
(:func:`dpdro._schedule._upper_grid`; ℓ2, ε = 5, δ = 0.5: U(38) and U(66) agree to 0.015%, the LP
on the round's grid, k ≈ 198, ran out of a 120 s limit; U(99) is 0.087% lower, in 8.5 s, and closes
the gap to 0.09% within 60 s; where the round's grid fits, as for ℓ1 at ε = 2, δ = 0.2, U(17) →
U(80), a cap had cost the call 19 → 90 s). Lower bounds of order k⁻¹ (a loss of constant slope on
one side of 0) get their first upper-bound LP on a grid of at most 16 steps per Δf, and none that
is predicted to take over 3/4 of the time left (:func:`dpdro._schedule._upper_too_slow`).

Scale: for a loss homogeneous of degree d (:attr:`dpdro.Loss.degree`: ℓ1, ℓ2, |x|^p, pinball, the
asymmetric loss) the problem at Δf is the problem at Δf = 1 scaled
(:meth:`dpdro.Problem.at_sensitivity`): it is solved there, the released noise is scaled by Δf and
certified again exactly at Δf, the upper bound is its exact expected loss and the lower bound Δf^d
times the unit one, rounded down. Every Δf then takes the same time. ε above :data:`MAX_EPSILON` is
refused, and so is δ below 1e-12 (:mod:`dpdro._range`); δ = 0 is refused by :class:`dpdro.Problem`
with a pointer to the staircase mechanism, optimal for pure DP.

Never worse than the literature: the release is the best of the LPs' noises and the certified cells
of the truncated Laplace, staircase (with an atom at 0) and Tulap mechanisms
(:func:`dpdro.reference.reference_upper_bound`), and the refinement goes on below ``rel_gap`` (down
to a tenth of it) while the release costs more than the best literature mechanism valid for the
problem (:func:`dpdro.reference.literature_losses`), and while it equals Tulap or truncated Laplace
for 4% of the time limit (2 s without one), in case the LP's noise beats them. The result says what
was released (``source``), the best literature mechanism (``best_known``) and by how much the
release beats it (``advantage``). Where shifts matter (an asymmetric loss or a support) the
mechanisms are also translated by their best shifts. Under a ``time_limit`` the literature values,
best shifts, the plateau's search (:func:`dpdro._schedule._plateau`) and the certified candidates
get a fifth of it each (quick for the built-in losses; for a callable loss evaluated point by point
they can take seconds, and a value cut short is left out of the comparison): the first candidate
that fits is always built and certified, the others and the shifted ones only in time, a shifted
one's lattice refined only as far as its certificate fits
(:func:`dpdro.reference.reference_upper_bound`).

``time_limit`` (seconds) bounds every LP solve and the whole call: a round is started while the time
left exceeds half the last round's time (a round costs at least as much as the one before, but an
interrupted lower-bound LP still gives a bound, below: at pinball τ = 0.896, ε = 7.08, 11 s of the
LP at k = 107 took the gap from 2.8% to 0.16%, where the LP at k = 71 had taken 6 s; predicting
more, e.g. eightfold per doubling of k, stopped calls at a fifth of their limit with the gap open:
the refinement often grows only one of the two grids); the next grid is the finest up to the
predicted one whose round should finish in the time left (:func:`_fitting`: the lower-bound LP's
seconds grow like its rows to a power 1.5 to 1.8, and its rows like k² at a fixed window in units of
Δf). A lower-bound LP that runs out of time keeps the certified bound of the duals where it stopped
(:class:`dpdro.grid.LowerBoundTimeout`), an upper-bound LP that does is abandoned without losing its
round's lower bound, and the call returns the best bracket so far with ``reached`` telling whether
``rel_gap`` was met. The first round runs unless less than 20 ms are left. Nothing runs on a time of
its own after the limit: the first lower-bound LP leaves a tenth of the limit (at most 2 s,
:func:`_reserve`) for the coarser one that replaces it should it run out, and a problem solved at
Δf = 1 leaves as much for scaling back and certifying at Δf (measured at ε = 0.0016, δ = 5.3e-10,
|x|³, Δf = 0.001: 0.5 s, several times that under load, which had overrun a 20 s limit by 17%).

The floor: a call always returns a certified noise and a valid lower bound, so a limit shorter than
the first certified candidate is exceeded by it, and by a coarse LP (:func:`_fallback_lower_bound`)
where no closed-form bound is cheap: 0.01–0.02 s at limits of 0.01 s (measured), more where an LP
must be built at large ε, and seconds where the candidate alone needs them: the truncated Laplace
mechanism at ε = 1e-4, δ = 1e-12 has 354,552 cells of width Δf whose certificate takes 1.2–2.6 s,
and for a callable loss at small ε the exact expected loss of the release can take as long.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial

from ._budget import TimeBudget
from ._closed_forms import truncated_laplace_half_width
from ._monotone_one_sided import monotone_side
from ._range import MAX_EPSILON, check_design_range
from ._rounding import round_down, round_up
from ._scaling import check_scale, scaled_noise, scaled_record, scaled_report, unit_scale
from ._schedule import (  # relative_gap: also dpdro.relative_gap
    _FLOOR_SOLVE,
    _after_infeasible,
    _aligned,
    _check_centred,
    _closed_form_bound,
    _convergence_order,
    _edge_weights,
    _fallback_lower_bound,
    _first_steps,
    _fitting,
    _Grids,
    _lower_limit,
    _lower_rows,
    _narrow_support_note,
    _next_steps,
    _one_sided_width,
    _plateau,
    _reference_falls_short,
    _reserve,
    _round_record,
    _unless_timed_out,
    _upper_grid,
    _upper_rows,
    _upper_steps,
    _upper_too_slow,
    relative_gap,
)
from ._validation import check_bool, check_int, check_optional_positive, check_positive
from .grid import grid_lower_bound, grid_upper_bound
from .noise import PiecewiseUniform, fits_support
from .partition import Partition
from .privacy import certify_delta
from .problem import InfeasibleError, Problem, RelaxationInfeasibleError
from .reference import literature_losses, reference_upper_bound
from .release import LowerBound, UpperBound
from .solvers import Interrupt, SolverError

__all__ = ["MAX_EPSILON", "SOURCE_NAMES", "OptimalNoise", "optimal_noise", "relative_gap"]


#: :attr:`OptimalNoise.source` in words (the literature mechanisms are placed on a lattice; a source
#: ``"shifted_<name>"`` is that mechanism translated, dpdro.reference.reference_upper_bound)
SOURCE_NAMES = {"lp": "the noise of the upper-bounding LP P(pi, beta)", "tulap": "Tulap",
                "staircase": "the staircase mechanism", "truncated_laplace": "truncated Laplace",
                "uniform": "the uniform noise on [0, sensitivity/delta]"}

_UPPER_WINDOW, _LOWER_WINDOW = 1.5, 1.0  # initial windows in truncated-Laplace half-widths
_GROWTH = 1.5  # window growth when a bound's solution reaches its window's edge
# the lower window at large ε in reaches of the plateau from 0 (Search.grids): 16, and 4 for an
# asymmetric loss from ε = 3 (e^−ε < 5% of the mass beyond the first period). Measured over 9
# asymmetric points (pinball, asymmetric loss; ε 3.5–10; 20 s): 16 left 3 above 0.1% (pinball
# τ = 0.896 at ε = 7.08: 0.157%, its LP at k = 111 in 4.7 s with L = 150, 0.124%, and in 0.37 s with
# L = 37, 0.143%), 8 one, 4 none, 2 two; but 4 at ε = 1.1 (pinball τ = 0.409): 0.24 → 1.36 s
_REACHES, _NARROW_REACHES, _NARROW_FROM = 16, 4, 3.0
_SHARE = 0.2  # of a time limit, for each of the literature values, the plateau and the candidates
# the first upper-bound LP waits while its rows exceed the round's lower-bound LP's by more than
# this (a coarse lower-bound grid, small ε: the next lower-bound round costs a fraction of it; at
# pinball τ = 0.58, ε = 0.0026, δ = 1.8e-11 the upper LP at k = 1, 10,500 cells, ran out of a 20 s
# limit beside lower-bound LPs at k = 1/64 of 0.1 s, where k = 1/32 reached 0.094%)
_ROWS_RATIO = 4
# (module docstring) ℓ2 on (−∞, 0], ε = 5.44, δ = 1.9e-6: 23.8% above D(16); U(36) from it: 17 s
_FAR = 0.1
# the release counts as no worse than a literature mechanism within this relative excess: the values
# of dpdro.reference.literature_losses are the mechanisms as published, and their certified cells
# (γ on a lattice, Tulap designed at a δ′ a hair below δ) cost up to about 1e-9 more
LITERATURE_TOLERANCE = 1e-6


@dataclass
class OptimalNoise:
    """Result of :func:`optimal_noise`."""

    noise: PiecewiseUniform  # the released noise of the best upper bound, certify_delta(...) <= δ
    upper: UpperBound
    lower: LowerBound
    seconds: float
    rel_gap: float  # the target
    history: list = field(default_factory=list)  # a dict per round (k, windows, bounds, gap, times)
    literature: dict = field(default_factory=dict)  # dpdro.reference.literature_losses

    @property
    def source(self) -> str:
        """What was released: ``"lp"`` (a bounding LP's noise) or the literature mechanism
        (``"staircase"``, ``"tulap"``, ``"truncated_laplace"``) whose certified cells won."""
        return self.upper.source

    @property
    def best_known(self) -> tuple[str, float] | None:
        """(name, expected loss) of the best literature mechanism valid for the problem."""
        if not self.literature:
            return None
        name = min(self.literature, key=self.literature.get)
        return name, self.literature[name]

    @property
    def advantage(self) -> float | None:
        """How much better the release is than the best literature mechanism, relative to the
        release: best_known / value − 1 (≥ 0 unless the time limit cut the search short)."""
        best = self.best_known
        return None if best is None else best[1] / self.value - 1.0

    @property
    def gap(self) -> float:
        """Certified relative gap (P − D)/D of the best bounds."""
        return relative_gap(self.upper.value, self.lower.value)

    @property
    def reached(self) -> bool:
        """Whether the certified gap meets the requested ``rel_gap``."""
        return self.gap <= self.rel_gap

    @property
    def value(self) -> float:
        """The expected loss of the released noise (an upper bound on the optimum)."""
        return self.upper.value

    @property
    def partition(self) -> Partition:
        """The cells of the released noise (centred cells of width β, edges on the lattice β/2)."""
        return Partition(self.noise.ticks, self.noise.grid)


def _print_round(info: dict) -> None:
    print(
        f"dpdro: round {info['round']}: k = {info['k']}, upper {info['upper']:.7g}, lower "
        f"{info['lower']:.7g}, gap {100 * info['gap']:.3f}% ({info['seconds']:.1f} s)",
        file=sys.stderr, flush=True,
    )


def _reference_cells(problem: Problem, k) -> float:
    """The cells of the truncated Laplace candidate of the reference upper bound for the first grid
    Δf/k: Δf/k, but no finer than Δf/64. Its certificate costs about k² times its width in Δf
    (ε = 10, δ = 1e-12: 1.3 s at Δf/256, beyond a 2 s limit under load), and where the first grid
    is that fine (ε ≳ 4) the staircase beats the truncated Laplace mechanism many times over."""
    return problem.sensitivity / min(64, max(1, math.ceil(k)))


class _Search:
    """The state of :func:`optimal_noise`'s refinement: the next grid, the window factors, the best
    bounds so far and what the last rounds gained (module docstring)."""

    def __init__(
        self, problem: Problem, rel_gap: float, atom: bool, k_start: int | None, max_k: int,
        budget: TimeBudget | None = None, share: float | None = None,
    ):
        self.problem, self.rel_gap, self.atom, self.share = problem, rel_gap, atom, share
        self.goal = rel_gap  # the requested gap; rel_gap is the round's target (:meth:`target`)
        # the literature mechanisms' losses and the plateau's search, each a ``share`` of ``budget``
        budget = self.budget = TimeBudget(None) if budget is None else budget
        self.literature = literature_losses(problem, time_limit=budget.part(share).left())
        self.beat = min(self.literature.values(), default=math.inf)
        best = min(self.literature, key=self.literature.get, default="")  # (:meth:`target`)
        self.chase = best.endswith(("tulap", "laplace"))
        sens = problem.sensitivity
        self.a = truncated_laplace_half_width(
            epsilon=problem.epsilon, delta=problem.delta, sensitivity=sens
        )
        self.k = min(_first_steps(problem, self.a), max_k) if k_start is None else Fraction(k_start)
        self.order = _convergence_order(problem)  # the lower bounds' k^−order (dpdro._schedule)
        # a support bounded on one side halves the window [−L, L]: the noise needs about 2A on the
        # other
        sup = problem.support
        one_sided = sup is not None and math.isfinite(sup[0]) != math.isfinite(sup[1])
        self.one_sided = one_sided  # (the lower window, _one_sided_width)
        self.f_up, self.f_low = (
            (2 * _UPPER_WINDOW, 2 * _LOWER_WINDOW) if one_sided else (_UPPER_WINDOW, _LOWER_WINDOW)
        )
        # windows reach as far again as the support lies from 0 (test_support: [10, ∞) had hung)
        self.away = 0.0 if sup is None else max(0.0, sup[0], -sup[1])
        # the support's finite ends other than 0, in units of Δf: on the grids (_aligned)
        self.ends = tuple(e / sens for e in (sup or ()) if math.isfinite(e) and e != 0.0)
        if one_sided and k_start is None:
            # twice the shifts and twice the window: the first grid at most Δf/16 (measured at
            # ε = 5.96, δ = 2.4e-6, ℓ1 on [0, ∞): both LPs at k = 16 in 1.6 s; the lower bound's
            # alone at k = 40, the plateau's grid, beyond 14 s)
            self.k = min(self.k, Fraction(16))
        self.plateau = _plateau(problem, budget.part(share))
        self.edge_weights = _edge_weights(problem, self.plateau)
        self.best_ub: UpperBound | None = None
        self.best_lb: LowerBound | None = None
        self.history: list[dict] = []
        # upper-bound LPs solved, and what the last one gained
        self.upper_rounds, self.upper_gain = 0, math.inf
        self.lower_gain = math.inf  # what the last round gained on the lower bound
        self.lowers: list[LowerBound] = []  # the lower bounds of the last two rounds
        # the lower windows whose widening was tried, and on which grid (wider_window_pays)
        self.probed: dict[float, Fraction] = {}

    def grids(self) -> _Grids:
        """This round's grids: the upper bound needs cells no wider than Δf; both grids are aligned
        with the plateau and the support's ends (:func:`_aligned`)."""
        k, plateau, sens, a = self.k, self.plateau, self.problem.sensitivity, self.a
        weights, ends = self.edge_weights, self.ends
        k_up = _aligned(max(1, _upper_steps(self.history, k, self.order)), plateau, 0.5, weights,
                        ends, 0.5)  # (_upper_steps: coarser for a k⁻¹ lower bound's first)
        k_up = _upper_grid(self.history, int(k_up), self.budget.left())
        k_low = _aligned(k, plateau, 0.0, weights, ends) if k >= 1 else k
        L_up = max(k_up, math.ceil((self.f_up * a + self.away) * k_up / sens))
        # at large ε the noise lies within a few plateaus of 0: a smaller window holds it (tail
        # blocks and padding carry the rest), which keeps the lower-bound LP small at the fine grids
        # it needs; not with a support, which keeps the noise away from 0 (one-sided noise at
        # ε = 5.96, δ = 2.4e-6 lies on [0, 2A], A = 3.1Δf: the window ±1.6Δf had halved the bound;
        # _one_sided_width). 16 reaches of the plateau, fewer for an asymmetric loss at large ε
        near_zero = plateau is not None and self.problem.support is None
        reach = max(abs(plateau[0]), abs(plateau[1])) if near_zero else None
        narrow = not self.problem.loss.symmetric and self.problem.epsilon >= _NARROW_FROM
        reach = None if reach is None else (_NARROW_REACHES if narrow else _REACHES) * reach * sens
        w_low = self.f_low * (a if reach is None else min(a, reach)) + self.away
        L_full = max(1, math.ceil(w_low * k_low / sens))
        if self.one_sided:
            w_low = _one_sided_width(a, self.f_low, self.problem.epsilon, sens) + self.away
        return _Grids(k, k_up, L_up, k_low, max(1, math.ceil(w_low * k_low / sens)), w_low, L_full)

    def solve_round(self, g: _Grids, budget: TimeBudget) -> tuple[UpperBound | None, LowerBound]:
        """This round's bounds (``None`` for an upper bound not worth its LP, module docstring)."""
        problem, best_ub, best_lb = self.problem, self.best_ub, self.best_lb
        lower_budget = budget
        if best_lb is None and budget.seconds is not None:
            # the first lower-bound LP leaves time for a coarser one should it run out
            lower_budget = TimeBudget(budget.seconds - _reserve(budget.seconds), budget.start)
        guess = None if best_ub is None else best_ub.noise  # seeds lazy rows (dpdro.grid_rows)
        lower = partial(grid_lower_bound, problem, g.k_low, g.L_low, guess=guess)
        upper = partial(grid_upper_bound, problem, g.k_up, g.L_up, atom=self.atom, guess=guess)
        if best_ub is not None and (self.upper_rounds == 0 or self.upper_gain <= 0):
            # the lower bound first while no upper-bound LP has beaten the best upper bound (none
            # solved, or the last one gained nothing): it may already suffice; the upper-bound LP
            # only once it falls short and costs about as much as the lower bound's (measured:
            # |x|^1.5, ε = 3.76, after an upper LP at k = 32 that gained nothing, the next round
            # waited 15.7 s for one of 104k segments beside a lower bound done in 2 s: 0.20%
            # instead of 0.10%)
            lb, ub = lower(time_limit=lower_budget.left(floor=1e-3)), None
            short = (
                relative_gap(best_ub.value, lb.value) > _FAR if best_lb is None
                else _reference_falls_short(best_ub.value, best_lb, lb, self.rel_gap, self.order)
            )
            fits = _upper_rows(g.k_up, g.L_up) <= _ROWS_RATIO * _lower_rows(g, full=True)
            if short and fits and not _upper_too_slow(self.history, g, budget.left(), self.order):
                ub = _unless_timed_out(upper, budget)
            return ub, lb
        if (
            best_ub is None
            or self.upper_rounds < 2
            or self.upper_gain >= 0.25 * (best_ub.value - best_lb.value)
            or self.lower_gain < 0.5 * (best_ub.value - best_lb.value)
            or self.lower_limit_falls_short()
        ) and not (self.upper_suffices() or _upper_too_slow(self.history, g, budget.left(),
                                                                self.order)):
            # the two LPs are independent: solve them side by side (HiGHS releases the GIL); under a
            # time limit the upper bound's is stopped once the lower bound closes the gap without it
            # and dropped had it won the race: speed must not pick the release (U(8) or U(13) did)
            interrupt = Interrupt()
            with ThreadPoolExecutor(max_workers=2) as pool:
                up = pool.submit(interrupt.call, _unless_timed_out, upper, budget)
                low = pool.submit(lower, time_limit=lower_budget.left(floor=1e-3))
                if isinstance(low.exception(), RelaxationInfeasibleError):  # P is infeasible
                    interrupt.fire()
                    raise low.exception()
                done = low.exception() is None
                if closed := budget.seconds is not None and done and self.closed_by(low.result()):
                    interrupt.fire()
                ub = up.result()  # (its error raised, needed or not)
                ub = None if closed else ub
                try:
                    lb = low.result()
                except TimeoutError:
                    self.keep_upper(ub)  # the upper bound of the round finished: keep it
                    raise
            if ub is None and best_ub is None:  # no upper bound at all: the round ran out of time
                raise TimeoutError("the first upper-bound LP ran out of the time limit")
            return ub, lb
        # the upper bound has settled and the lower bound is catching up: refine it alone
        return None, lower(time_limit=lower_budget.left(floor=1e-3))

    def closed_by(self, lb: LowerBound) -> bool:
        """Whether ``lb`` meets the round's target with the best upper bound so far."""
        best = lb.value if self.best_lb is None else max(lb.value, self.best_lb.value)
        return self.best_ub is not None and relative_gap(self.best_ub.value, best) <= self.rel_gap

    def upper_suffices(self) -> bool:
        """Whether the best upper bound already lies within a quarter of ``rel_gap`` of the limit
        of the lower bounds of the last two rounds extrapolated as k^−order while they close in
        (:func:`_reference_falls_short` at a quarter of the gap): the round then refines the lower
        bound alone instead of solving both LPs side by side (measured, loaded machine: pinball
        τ = 0.435, ε = 5.57, δ = 0.022, U(68) 0.0075% above that limit; the next round ran both LPs,
        and both ran out of the 20 s limit at 0.25%; the lower bound's LP alone at k = 119 gives
        0.049%). A quarter, not half: ℓ2 at ε = 5, δ = 0.2 has U(66) 0.029% above the limit, but
        its lower bound converges more slowly than k⁻² there, and without the next upper-bound
        LP the call ended at 0.157% instead of 0.129%."""
        if self.best_ub is None or self.upper_rounds == 0 or len(self.lowers) < 2:
            return False
        previous, last = self.lowers
        gap = 0.25 * self.rel_gap
        return not _reference_falls_short(self.best_ub.value, previous, last, gap, self.order)

    def lower_limit_falls_short(self) -> bool:
        """Whether the lower bounds' limit (k^−order, last two rounds) lies over ``rel_gap`` below
        the best upper bound, however settled that looks (ℓ2, ε = 2, δ = 0.75: U(19) gained 0.14%
        on U(10), U(40) 0.47% on U(19); refining the lower bound alone ended at 0.58% in 120 s)."""
        if self.best_ub is None or len(self.lowers) < 2:
            return False
        limit = _lower_limit(*self.lowers, self.best_ub.value, self.order)
        return relative_gap(self.best_ub.value, limit) > self.rel_gap

    def target(self, seconds: float) -> float:
        """The requested gap once the release beats the best literature mechanism, or equals the
        staircase, or Tulap or truncated Laplace after 4% of the limit (2 s without one; chasing
        cost 18 of 20 s at ε = 2.03; with 10%, the tables' 39 Tulap cells were done in 4.1 s of
        120, and 5 random points took 1.5 s, one of which beat Tulap by < 0.03% after 7 s);
        until then (the LP beat Tulap by 0.9% at ε = 1, δ = 0.02, 2% gap) one small enough that
        the upper bound falls below it (10% spare), but not below a tenth of it."""
        upper, lower, tol = self.best_ub.value, self.best_lb.value, LITERATURE_TOLERANCE
        spare = seconds <= (2.0 if self.share is None else 0.2 * self.share)  # a share: a fifth
        equal = upper <= self.beat * (1 + tol) and not (self.chase and spare)
        if upper < self.beat * (1 - tol) or equal or lower <= 0:
            return self.goal
        return max(self.goal / 10, min(self.goal, 0.9 * (self.beat - lower) / lower))

    def keep_upper(self, ub: UpperBound | None) -> None:
        """Keep ``ub`` if it is better than the best upper bound so far."""
        if ub is not None and (self.best_ub is None or ub.value < self.best_ub.value):
            self.best_ub = ub

    def record(self, g: _Grids, ub: UpperBound | None, lb: LowerBound, seconds: float) -> dict:
        """Keep the better bounds and what they gained; the round's history entry."""
        if ub is not None:
            self.upper_rounds += 1
            self.upper_gain = (
                math.inf if self.best_ub is None else max(self.best_ub.value - ub.value, 0.0)
            )
            self.keep_upper(ub)
        self.lower_gain = (
            math.inf if self.best_lb is None else max(lb.value - self.best_lb.value, 0.0)
        )
        if self.best_lb is None or lb.value > self.best_lb.value:
            self.best_lb = lb
        self.lowers = (self.lowers + [lb])[-2:]
        info = _round_record(len(self.history) + 1, g, ub, lb, self.best_ub, self.best_lb, seconds)
        self.history.append(info)
        self.rel_gap = self.target(seconds)
        return info

    def timed_out(
        self,
        g: _Grids,
        time_limit: float,
        budget: TimeBudget,
        partial: LowerBound | None = None,
        coarser: int = 8,
    ) -> None:
        """A round ran out of time: keep what there is, the certified bound of its interrupted
        lower-bound LP (``partial``) if it is better (a coarse lower bound if there is none
        yet, on a grid ``coarser`` times coarser, :func:`dpdro._schedule._fallback_lower_bound`)."""
        if self.best_lb is None and self.best_ub is not None:
            # (≈ 1/200 of the time)
            self.best_lb = _fallback_lower_bound(
                self.problem, g.k_low, g.w_low, budget, coarser, grid_lower_bound
            )
        if partial is not None and (self.best_lb is None or partial.value > self.best_lb.value):
            self.best_lb = partial
        if self.best_ub is None or self.best_lb is None:
            raise TimeoutError(
                f"time_limit = {time_limit:g} s expired before the first bounds (grid "
                f"{float(g.k):g} steps per Δf) were found" + _narrow_support_note(self.problem)
            ) from None
        self.close(g, budget)

    def close(self, g: _Grids, budget: TimeBudget) -> None:
        """The history's last entry: the best bracket without a round of its own."""
        lb = self.best_lb
        self.history.append(
            _round_record(
                len(self.history) + 1,
                _Grids(g.k if lb.k is None else lb.k, None, None, lb.k, lb.L),  # (k: closed form)
                None,
                lb,
                self.best_ub,
                lb,
                budget.elapsed(),
            )
        )

    def refine(
        self,
        g: _Grids,
        ub: UpperBound | None,
        lb: LowerBound,
        max_k: int,
        last: float = 0.0,
        left: float | None = None,
    ) -> bool:
        """Widen a window whose bound reached its edge and choose the next grid, the finest up to
        the predicted one whose round should finish in the time ``left`` (:func:`_fitting`, from the
        ``last`` round's seconds); False when there is nothing left to refine."""
        grew = False
        # the released noise reaches the window's edge: widen it
        if ub is not None and ub.boundary_mass > 1e-4:
            self.f_up *= _GROWTH
            grew = True
        beta = self.problem.sensitivity / float(g.k_low)
        edge_cost = float(self.problem.loss.tail_infimum(-g.L_low * beta, g.L_low * beta))
        gap = self.best_ub.value - self.best_lb.value
        # mass just outside the window counts once refining the grid stops paying (module docstring)
        stalled = self.lower_gain < 0.25 * gap
        near = lb.outside_mass or 0.0  # (None for a bound kept from an LP cut short: no sign)
        outside = near if stalled else (lb.tail_mass or 0.0)
        if outside * edge_cost > 0.1 * gap or (
            near * edge_cost > 0.1 * gap and self.wider_window_pays(g, lb, gap, left)
        ):
            self.f_low *= _GROWTH
            grew = True
        nxt = _next_steps(self.history, self.rel_gap, self.order)
        if nxt <= max_k:
            if left is None or g.k < 8:
                self.k = nxt
                return True
            # a round of the lower bound alone next: its prediction starts from that LP's time
            base = min(last, lb.seconds) if self.upper_suffices() else last
            self.k = _fitting(nxt, g, base, left, self.grids_at, self.order)
            return True
        return grew

    def wider_window_pays(
        self, g: _Grids, lb: LowerBound, gap: float, left: float | None
    ) -> bool:
        """Whether the lower-bound LP of this round's grid on the window widened by half gains a
        tenth of the gap (module docstring; tried again once the grid is 4 times finer, while it
        costs at most a tenth of the time ``left``; its bound kept if best). ℓ1, ε = 0.5,
        δ = 0.75: D_R(16) gains 44% of the gap."""
        tried = self.probed.get(self.f_low)
        if (tried is not None and g.k < 4 * tried) or (
            left is not None and 2.5 * lb.seconds > 0.1 * left
        ):
            return False
        self.probed[self.f_low] = g.k
        wide = max(1, math.ceil(_GROWTH * g.w_low * g.k_low / self.problem.sensitivity))
        guess = None if self.best_ub is None else self.best_ub.noise
        try:
            probe = grid_lower_bound(self.problem, g.k_low, wide, guess=guess,
                                     time_limit=None if left is None else 0.1 * left)
        except TimeoutError as exc:  # an interrupted LP keeps the bound where it stopped
            probe = getattr(exc, "bound", None)
        if probe is None:
            return False
        if probe.value > self.best_lb.value:
            self.best_lb = probe
        return probe.value - lb.value > 0.1 * gap

    def grids_at(self, k: Fraction) -> _Grids:
        """The grids of a round at the resolution ``k`` (with the current windows)."""
        current, self.k = self.k, k
        try:
            return self.grids()
        finally:
            self.k = current


def _rescaled(
    res: OptimalNoise, problem: Problem, sensitivity: float, budget: TimeBudget, atom: bool
) -> OptimalNoise | None:
    """The result for ``problem`` from ``res``, solved for the same problem at Δf = 1: the noise
    scaled by Δf and certified again exactly at Δf (if the rounding of its edges pushes that
    certificate over a tight δ, scaled onto an exact lattice instead: ``scaled_noise(exact=True)``),
    the upper bound its exact expected loss rounded up, the lower bound Δf^d times the unit one
    rounded down (the optimal values differ by exactly that factor,
    :meth:`dpdro.Problem.at_sensitivity`). When the scaled noise's certificate exceeds δ, the
    literature candidates certified at Δf are released instead (``None`` if none certifies)."""
    power = sensitivity**problem.loss.degree
    noise = scaled_noise(res.noise, sensitivity, support=problem.support)
    certified = certify_delta(noise, problem.epsilon, problem.sensitivity)
    if certified > problem.delta:  # the edges' rounding drift (tiny δ): the exactly scaled lattice
        noise = scaled_noise(res.noise, sensitivity, exact=True, support=problem.support)
        certified = certify_delta(noise, problem.epsilon, problem.sensitivity)
    if certified <= problem.delta and fits_support(noise, problem.support):
        upper = replace(
            res.upper,
            noise=noise,
            certified_delta=certified,
            value=round_up(noise.expected_loss(problem.loss)),
            lp_value=None if res.upper.lp_value is None else res.upper.lp_value * power,
            partition=None,
        )
    else:
        # a literature candidate certified within its rounding allowance of δ (tiny δ: measured
        # 1.59999e-12 at Δf = 1, 1.6087e-12 scaled to Δf = 0.001, δ = 1.6e-12): the candidates
        # certified at Δf itself instead
        k = res.history[0]["k"] if res.history else 1
        left = None if budget.seconds is None else max(budget.left(), 0.0)  # (the first one only)
        upper = reference_upper_bound(
            problem, _reference_cells(problem, k), atom=atom, time_limit=left
        )
        if upper is None:
            return None
        noise = upper.noise
    lower = replace(
        res.lower,
        value=round_down(res.lower.value * power),
        lp_value=res.lower.lp_value * power,
        candidates={k: round_down(v * power) for k, v in res.lower.candidates.items()},
        p=None,
        columns=None,
        partition=None,
    )
    history = [scaled_record(info, power) for info in res.history]
    literature = {name: value * power for name, value in res.literature.items()}
    return OptimalNoise(noise, upper, lower, budget.elapsed(), res.rel_gap, history, literature)


def optimal_noise(
    problem: Problem,
    rel_gap: float = 0.01,
    *,
    time_limit: float | None = None,
    progress: bool | Callable[[dict], None] = False,
    atom: bool = True,
    k_start: int | None = None,
    max_k: int = 4096,
) -> OptimalNoise:
    """Certified near-optimal noise for ``problem``: refine until (P − D)/D ≤ ``rel_gap`` (module
    docstring).

    Parameters
    ----------
    rel_gap : target relative gap between the certified upper and lower bounds, > 0.
    time_limit : wall-clock seconds for the whole call (``None``: no limit). The call then returns
        the best certified bracket found in time; ``result.reached`` says whether the target was
        met.
    progress : ``True`` prints one line per round to standard error; a callable receives each
        round's dict (the entries of ``result.history``). Off by default.
    atom : let the upper bound put a point mass at 0 (default; ignored for monotone problems).
    k_start, max_k : expert options: the first grid Δf/k and the finest one (``k_start`` default:
        chosen from ε and δ). Nothing else needs tuning.

    Returns
    -------
    OptimalNoise with the released noise (``certify_delta(noise, ε, Δf) <= δ``), the best upper and
    lower bounds (both valid for P), the gap, ``reached`` and the per-round history.

    Raises
    ------
    TypeError, ValueError : an argument of the wrong type or out of range (checked before any
        solve).
    TimeoutError : ``time_limit`` expired before the first round's bounds were found.
    InfeasibleError : a ``support`` too narrow for (ε, δ) at Δf (or for any grid up to ``max_k``).
    SolverError : HiGHS failed before any certified noise or lower bound was found (seen for
        monotone noise on a support [0, Δf/δ] exactly, which only the uncertifiable U[0, Δf/δ]
        fits; on [0, ∞) the uniform noise is released, :mod:`dpdro._monotone_one_sided`).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (problem P), Propositions 1–3 and
       Theorem 1 (the converging bounds P(L, β) ≥ P ≥ D(L, β)), Section 5.1 (the relative gap).
    .. [2] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020 (the truncated Laplace half-width that sizes
       the windows).
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a dpdro.Problem, got {type(problem).__name__}")
    rel_gap = check_positive("rel_gap", rel_gap)
    time_limit = check_optional_positive("time_limit", time_limit)
    if not (isinstance(progress, bool) or callable(progress)):
        raise TypeError(
            f"progress must be True, False or a callable taking a dict, got {progress!r}"
        )
    atom = check_bool("atom", atom)
    max_k = check_int("max_k", max_k, minimum=1)
    if k_start is not None and check_int("k_start", k_start, minimum=1) > max_k:
        raise ValueError(f"k_start must be at most max_k = {max_k}, got {k_start}")
    check_design_range(problem)
    check_scale(problem.sensitivity, problem.loss.degree)
    report = _print_round if progress is True else (progress or None)
    unit = unit_scale(problem)
    if unit is None:
        return _refine(problem, rel_gap, time_limit, report, atom, k_start, max_k)
    budget = TimeBudget(time_limit)
    try:
        res = _refine(
            problem.at_sensitivity(1.0),
            rel_gap,
            # the rest is kept for scaling back, certifying at Δf and the rare solve at Δf itself
            None if time_limit is None else time_limit - _reserve(time_limit),
            None if report is None else scaled_report(report, unit**problem.loss.degree),
            atom, k_start, max_k, time_limit,
        )
        scaled = _rescaled(res, problem, unit, budget, atom)
    except SolverError:  # HiGHS failed at Δf = 1 before any bracket: try Δf itself
        scaled = None
    except RelaxationInfeasibleError:  # (found at Δf = 1: say it of the problem as given)
        raise RelaxationInfeasibleError.of(problem) from None
    if scaled is not None:
        return scaled
    # the rescaled noise's certificate exceeds δ (floating-point edges), or the solver failed
    left = None if time_limit is None else max(budget.left(), 1e-3)
    return _refine(problem, rel_gap, left, report, atom, k_start, max_k, time_limit)


def _refine(
    problem: Problem,
    rel_gap: float,
    time_limit: float | None,
    report: Callable[[dict], None] | None,
    atom: bool,
    k_start: int | None,
    max_k: int,
    quoted: float | None = None,
) -> OptimalNoise:
    """The refinement of the module docstring on ``problem``; timeouts quote ``quoted`` if given."""
    # Long because the loop handles each way a round ends (infeasible, out of time, solver failure)
    budget = TimeBudget(time_limit)
    # literature values and shifts, the plateau's search and the candidates may take a fifth of the
    # time each (a callable point by point had taken 45 s of a 10 s limit; a plateau given what was
    # left, none under load, misaligned the grid: pinball τ = 0.8, ε = 8, 304% against 5.4%)
    share = None if time_limit is None else _SHARE * time_limit
    _check_centred(problem, budget, grid_lower_bound)
    search = _Search(problem, rel_gap, atom, k_start, max_k, budget, share)
    # the literature mechanisms on the first fine grid: an upper bound without an LP
    cells = _reference_cells(problem, search.k)
    search.best_ub = reference_upper_bound(
        problem, cells, atom=atom, time_limit=budget.part(share).left()
    )
    if monotone_side(problem):  # its closed-form bound, within δ² of the uniform noise for ℓ1
        search.best_lb = _closed_form_bound(problem)
    last = 0.0
    while True:
        if search.history and time_limit is not None and 0.5 * last > budget.left():
            # the next round, at least as costly as the last, would end before half of it
            break
        g = search.grids()
        if not search.history and search.best_lb is not None and search.best_ub is not None and (
            relative_gap(search.best_ub.value, search.best_lb.value) <= rel_gap
        ):
            search.close(g, budget)  # (no LP needed)
            break
        if not search.history and search.best_ub is not None and budget.expired(_FLOOR_SOLVE):
            # below the floor (module docstring; or too little left to build the first LP: 45 ms
            # at ℓ2, ε = 8): the candidate and a coarse lower bound, that of the first grid itself
            # where coarser than Δf (as cheap as 8 times coarser, 4 times higher at ε = 1e-4)
            search.timed_out(g, quoted or time_limit, budget, coarser=1 if g.k_low < 1 else 8)
            break
        r0 = time.perf_counter()
        try:
            ub, lb = search.solve_round(g, budget)
        except InfeasibleError as exc:  # the upper bound's window (or grid) too small, or P itself
            search.k, widen = _after_infeasible(problem, g, search.k, max_k, exc)
            search.f_up *= 2 * _GROWTH if widen else 1.0
            continue
        except TimeoutError as exc:
            # a lower-bound LP cut short keeps the certified bound where it stopped (grid module)
            search.timed_out(g, quoted or time_limit, budget, getattr(exc, "bound", None))
            break
        except SolverError as exc:  # HiGHS failed: the best bracket so far, or the fallback's
            try:
                search.timed_out(g, quoted or time_limit or math.inf, budget)
            except TimeoutError:  # (no certified noise, or no lower bound at all)
                raise exc from None
            break
        last = time.perf_counter() - r0
        info = search.record(g, ub, lb, budget.elapsed())
        if report is not None:
            report(info)
        if (
            info["gap"] <= search.rel_gap
            or budget.expired()
            or not search.refine(g, ub, lb, max_k, last, budget.left())
        ):
            break
    best = search.best_ub
    return OptimalNoise(best.noise, best, search.best_lb, budget.elapsed(), rel_gap,
                        search.history, search.literature)
