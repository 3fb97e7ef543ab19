r"""A driver for the data-dependent problem P′: refine the grid until a target gap or a time limit.

:func:`optimal_noise` is the data-dependent counterpart of :func:`dpdro.optimal_noise`. Along the
refinement path β = β₀, β₀/2, β₀/3, β₀/4, β₀/6, β₀/8, β₀/12, … (β₀ the largest power-of-two
fraction of a common divisor of Δf and |Φ| that is at most Δf/2; :func:`default_betas`) it keeps
the best certified mechanism of every valid restriction it solves and the best valid lower bound:

Lower bound
    The randomized-rounding bound D′_R on the fine pieces of width β: in output coordinates on the
    clamped problem (:mod:`dpdro.data_dependent.output`) when the losses are non-increasing on
    (−∞, 0] and non-decreasing on [0, ∞), in noise coordinates otherwise
    (:func:`dpdro.data_dependent.lower_bound`). Every relaxation Algorithm 1 solves is itself a
    valid bound, so each round's bound is offered to the bracket as soon as it is known, and the
    rounds stop once the bracket is within the target, once an extra round raises the bound by less
    than a twentieth of the target gap, or when the time is spent: the bound is then that of the
    last relaxation. They pause, for the output family to be solved first, once the next round is
    predicted (the last raise times the ratio of the last two) to raise the bound by less than a
    quarter of the bracket's width, and resume after it while the gap is above the target.

    What the rounds cost (Figure 3's (5, 0.25), measured): re-solving the model takes over 95% of
    the time (the oracle and the cuts a few percent). By the warm dual simplex method a heavy
    round needs at least as many simplex iterations as the LP has rows (K = 72: 28–31k at 27–31k
    rows, about 3 ms each), so a converged D′_R took 25 CPU-s at K = 64 and 240 at K = 72, and
    K = 96's fifth round did not end within 320 CPU-s; the lower mode therefore re-solves models
    of 8 000 rows or more by the interior-point method without crossover
    (:mod:`~dpdro.data_dependent.output`, "Solving"): K = 72 in 48 s, K = 96's fifth round
    (0.09646, within 2% of the grid-point family's 0.09817) after 119 s. The bound is not
    monotone in K (K = 36 gives 0.09441, K = 48 0.09331); the best one solved is kept.

Upper bounds (each a restriction of P′, each released certified; neither dominates)
    * the output family (:mod:`~dpdro.data_dependent.output`): one output law per piece plus the
      query value itself, on the output cells, then (while the bracket is still open) on the grid
      points ("output points"), both on the model of the lower bound with other costs. At large ε
      the optimal laws sit on a few shared points, which cells of width β blur: on Figure 3's (5,
      0.25) the grid points give 0.1020 at K = 24 and 0.0982 at K = 32 in about a second each,
      where the cells gave 0.1128 and 0.1079 (0.0997 at K = 64);
    * the paper's noise family P′(π, β) (:func:`~dpdro.data_dependent.upper_bound`) on the
      support [−A, A + β), A the truncated Laplace half-width rounded up to whole Δf, an atom at 0
      and, for symmetric losses, cells centred on the grid points; solved while it pays: at the
      first step, after every step at which it improved the best bound of the two refined families
      (output and noise, of all steps so far; the anchors below are not refined), and at every
      step where the output family is not available. Its LP is the costlier of the two and its
      grids are not nested (centred cells of width β/2 do not refine those of width β, so a finer
      grid can give a worse bound): on Figure 3's (5, 0.25) it improves that bound up to K = 16
      (0.1037), not at K = 24 (0.1101), and is not solved after (while within the target of the
      output family, it took 4.7 s at K = 32 for 0.1089 and 33 s at K = 48 for 0.1010, where the
      output family took 0.7 s for 0.1079 and 2 s for 0.0998);
    * two anchors without a refinement: the constant mechanism (0-DP, the output family's law on one
      cell) and the data-independent optimal noise (:func:`dpdro.optimal_noise`, within a tenth of
      the time) added to every query value and clamped to Φ.

Scale and position
    For one loss homogeneous of degree d with nothing that breaks the symmetry (no caps, a uniform
    weight or one whose edges map exactly; :mod:`dpdro.data_dependent._scaling`), P′ at (Δf,
    [φ_lo, φ_hi)) is P′ at (1, [0, R)), R = (φ_hi − φ_lo)/Δf, with every loss times Δf^d. The
    path is then run on the latter (its bounds, path and time do not depend on the units or on
    where Φ lies) and the result mapped back: the mechanism certified again exactly at Δf and its
    loss recomputed there, the lower bound Δf^d times the unit one rounded down, the history and
    the progress reports at Δf. A mechanism whose certificate exceeds δ there is not released: the
    path is run again at Δf itself in the time left (a tenth of the limit, at most 2 s, is kept for
    this). On ℓ1, ε = 2, δ = 0.1, Φ = [0, 3Δf): Δf = 10⁶ had stopped at the 30 s limit with a gap of
    5.3% and Δf = 10⁻³ at 4.7% in 5 s, where Δf = 1 reaches 3.5% in 2 s (now every Δf does).

Each step stops as soon as (upper − lower)/lower ≤ ``rel_gap``; ``trace`` records every
improvement of the bracket with its time. Every solve gets the time left, so the call returns
within the limit up to the time of building one LP; a bound cut short contributes nothing except
the lower bound of a relaxation, which is valid. The bounds kept are the best of all
steps: a finer grid never makes them worse.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from .._budget import TimeBudget
from .._closed_forms import truncated_laplace_half_width
from .._rounding import float_up
from .._validation import check_optional_positive, check_positive
from ..optimal import _reserve
from ..partition import Partition
from ..problem import InfeasibleError
from ..release import LowerBound, ReleaseError, UpperBound
from ._scaling import mapped_result, mapped_row, unit_problem
from .anchors import anchor_bounds
from .bounds import lower_bound, output_rounds, upper_bound
from .output import UPPER_MODES, output_obstacle
from .problem import Problem

__all__ = ["DDOptimalNoise", "default_betas", "optimal_noise"]


@dataclass
class DDOptimalNoise:
    """The result of :func:`optimal_noise`: the best certified mechanism and the best valid lower
    bound."""

    upper: UpperBound | None
    lower: LowerBound | None
    seconds: float
    # one dict per step: beta, K, lower, output, noise (each bound of the step, None if not
    # solved; output the better of output_cells and output_points, present when solved),
    # seconds_lower and seconds_output (seconds into the step at which the step's last
    # lower bound and its output-family bound were known), seconds_noise (the noise family's
    # solve), cumulative (seconds since the call), best_upper, best_lower, family (of the best
    # upper bound) and gap (of the best bracket after the step); gap_after_lower and
    # cumulative_after_lower once the step's lower bound is in
    history: list = field(default_factory=list)
    stopped: str = ""  # "gap", "time limit", "end of path"
    # of the best upper bound: "output", "output points", "noise", "constant", "clamped noise"
    family: str = ""
    # (seconds since the call, best upper, best lower) each time either improves
    trace: list = field(default_factory=list)
    clock: TimeBudget | None = field(default=None, repr=False)

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

    def offer_upper(self, bound: UpperBound | None, family: str) -> None:
        """Keep ``bound`` if it is better than the best so far."""
        if bound is not None and (self.upper is None or bound.value < self.upper.value):
            self.upper, self.family = bound, family
            self._record()

    def offer_lower(self, bound: LowerBound | None) -> None:
        """Keep ``bound`` if it is better than the best so far."""
        if bound is not None and (self.lower is None or bound.value > self.lower.value):
            self.lower = bound
            self._record()

    def _record(self) -> None:
        if self.clock is not None:
            self.trace.append((
                self.clock.elapsed(),
                None if self.upper is None else self.upper.value,
                None if self.lower is None else self.lower.value,
            ))


def default_betas(problem: Problem, n: int = 14) -> list[float]:
    """β₀/m for the n smallest m among 1, 2, 3, 4, 6, 8, 12, 16, 24, … (the powers of two and three
    times them), each rounded up to a float: β₀ = the largest common divisor of Δf and |Φ| (and of
    the offsets of explicit piece edges from phi_lo; as fractions with denominators up to 10⁶),
    halved until it is at most Δf/2.

    The steps ×3/2 and ×4/3 between the halvings give the path a stop between K and 2K pieces
    (the cost of a step grows about as K³): on Figure 3's (5, 0.25) the output family on K = 48
    (0.0998 in 2 s) is as good as on K = 64 (0.0997 in 22 s). Rounding up keeps every piece
    edge at least as far apart as in exact arithmetic: Δf/β steps of the float β (e.g. of
    float(1/12), 2⁻⁵⁷ short of 1/12) never fall short of Δf, so pieces the LPs treat as too far
    apart to be neighbours are so for the released mechanism too (its edges are
    φ_lo + k·β exactly; :func:`dpdro.data_dependent.privacy_profile`). A power of two times a
    float is exact, so the halving path is unchanged: it is the subsequence m = 2^i, and the
    default n = 14 ends at β₀/128 as its 8 steps did."""
    d = Fraction(problem.sensitivity).limit_denominator(10**6)
    spec = problem.piece_spec  # explicit pieces: every piece edge must lie on the grid too
    widths = [problem.phi_hi - problem.phi_lo] if spec is None else list(spec[1:] - spec[0])
    g = d
    for width in widths:
        w = Fraction(float(width)).limit_denominator(10**6)
        g = Fraction(
            math.gcd(g.numerator * w.denominator, w.numerator * g.denominator),
            g.denominator * w.denominator,
        )
    while g > d / 2:
        g /= 2
    return [float_up(g / m) for m in _path_divisors(n)]


def _path_divisors(n: int) -> list[int]:
    """The n smallest numbers 2^i and 3·2^i, in increasing order."""
    return sorted({2**i for i in range(n)} | {3 * 2**i for i in range(n)})[:n]


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
    support_half_width : A of the noise family's support [−A, A + β) (default: the truncated
        Laplace half-width rounded up to a whole number of Δf); enlarged by half when it is
        infeasible.
    progress : optional callable receiving each step's dict as it is done.

    Returns
    -------
    DDOptimalNoise: the best certified mechanism (``mechanism``, whose ``kind`` says which family
    it is; ``family``), the best lower bound, the gap, one history entry per step.

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
    time_limit = check_optional_positive("time_limit", time_limit)
    A = support_half_width
    if A is not None:
        A = check_positive("support_half_width", A)
    if betas is not None:
        betas = [check_positive("betas", b) for b in betas]
        if not betas:
            raise ValueError("betas must contain at least one β")
    budget = TimeBudget(time_limit)
    unit = unit_problem(problem, betas)
    if unit is None:
        return _refine(problem, rel_gap, budget, betas, A, progress)
    scale, power = problem.sensitivity, problem.sensitivity**problem.loss.degree
    res = _refine(
        unit[0],
        rel_gap,
        # the rest is kept for mapping back, certifying at Δf and the rare solve at Δf itself
        TimeBudget(
            None if time_limit is None else time_limit - _reserve(time_limit), start=budget.start
        ),
        unit[1],
        None if A is None else A / scale,
        None if progress is None else lambda row: progress(mapped_row(row, scale, power)),
    )
    mapped = mapped_result(res, problem, budget)
    if mapped is not None:
        return mapped
    # the mapped mechanism's certificate exceeds δ: solve at Δf itself in the time left
    return _refine(problem, rel_gap, budget, betas, A, progress)


def _refine(problem, rel_gap, budget, betas, A, progress) -> DDOptimalNoise:
    """The refinement of the module docstring on ``problem`` itself (arguments checked)."""
    betas = default_betas(problem) if betas is None else [_step_up(problem, b) for b in betas]
    A = _default_half_width(problem) if A is None else A
    best = DDOptimalNoise(None, None, 0.0, clock=budget)
    for bound, family in anchor_bounds(problem, betas[0], rel_gap, budget):
        best.offer_upper(bound, family)
    stopped, state = "end of path", _PathState()
    for beta in betas:
        if budget.expired():
            stopped = "time limit"
            break
        row = _step(problem, beta, A, rel_gap, best, budget, state)
        best.history.append(row)
        if progress is not None:
            progress(dict(row))
        if row["gap"] <= rel_gap:
            stopped = "gap"
            break
        if budget.expired():
            stopped = "time limit"
            break
    best.seconds, best.stopped = budget.elapsed(), stopped
    return best


def _step_up(problem: Problem, beta: float) -> float:
    """β itself, or the smallest float ≥ Δf/n when n = Δf/β float steps β fall short of Δf (β =
    float(Δf/3)): on such a grid pieces n steps apart hold query values closer than Δf, which the
    output family must then keep apart too (4% worse on the test's instance); the default path is
    rounded up in the same way (:func:`default_betas`)."""
    n = problem.base_problem.shifts(beta)
    exact = Fraction(problem.sensitivity) / n
    return float_up(exact) if n * Fraction(beta) < Fraction(problem.sensitivity) else beta


def _default_half_width(problem: Problem) -> float:
    """The truncated Laplace half-width rounded up to a whole number of Δf: the noise family's
    default A, and the reach of the lower bound's cells in noise coordinates."""
    scale = problem.sensitivity
    half = truncated_laplace_half_width(
        epsilon=problem.epsilon, delta=problem.delta, sensitivity=scale
    )
    return scale * math.ceil(half / scale - 1e-9)


@dataclass
class _PathState:
    """What the path remembers between steps: the best bound of the refined families (output and
    noise), whether the noise family is still solved, and the best grid-point family's bound and
    its K (module docstring)."""

    refined: float = math.inf
    noise_pays: bool = True
    points: float = math.inf
    points_K: int = 0

    def families(self, K: int) -> tuple:
        """The output families of a step of K pieces: the grid points only on grids that refine
        the best one's so far (so that they contain its mechanism: the grids K = 32 and 48 hold
        different points, and on Figure 3's (5, 0.25) K = 48 took 10 s for 0.1003 after 0.0982
        at K = 32)."""
        if self.points_K and K % self.points_K:
            return ("upper",)
        return UPPER_MODES


def _step(problem, beta, A, rel_gap, best, budget, state) -> dict:
    """One step of the path (module docstring); ``best`` keeps the better bounds. The step's history
    entry (see :class:`DDOptimalNoise`)."""
    row = dict(beta=beta, K=problem.grouping(beta).K, lower=None, output=None, noise=None)
    t0 = time.perf_counter()
    solve_noise = state.noise_pays

    def on_lower(lb):
        best.offer_lower(lb)
        row["lower"] = None if lb is None else lb.value
        row["seconds_lower"] = time.perf_counter() - t0
        row["gap_after_lower"] = best.gap
        row["cumulative_after_lower"] = budget.elapsed()

    def on_upper(ub):
        points = ub.mechanism.grid_masses is not None
        best.offer_upper(ub, "output points" if points else "output")
        row["output_points" if points else "output_cells"] = ub.value
        row["seconds_output"] = time.perf_counter() - t0
        if points and ub.value < state.points:
            state.points, state.points_K = ub.value, row["K"]

    ub_out = _lower_and_output(problem, beta, rel_gap, best, budget, on_lower, on_upper,
                               state.families(row["K"]))
    row["output"] = None if ub_out is None else ub_out.value
    if ub_out is not None:
        state.refined = min(state.refined, ub_out.value)
    t1 = time.perf_counter()
    if best.gap > rel_gap and not budget.expired() and solve_noise:
        ub = _noise_upper(problem, beta, A, budget)
        row["noise"] = None if ub is None else ub.value
        best.offer_upper(ub, "noise")
        state.noise_pays = ub_out is None or (ub is not None and ub.value < state.refined)
        if ub is not None:
            state.refined = min(state.refined, ub.value)
    elif not solve_noise:
        state.noise_pays = ub_out is None
    row["seconds_noise"] = time.perf_counter() - t1
    row["cumulative"] = budget.elapsed()
    row["best_upper"] = None if best.upper is None else best.upper.value
    row["best_lower"] = None if best.lower is None else best.lower.value
    row["family"] = best.family
    row["gap"] = best.gap
    return row


def _lower_and_output(problem, beta, rel_gap, best, budget, on_lower, on_upper, families):
    """The step's lower bound (handed to ``on_lower`` as soon as it is known) and, from the same
    model, the output family's mechanism when the bracket is not yet within the target."""
    if output_obstacle(problem, "lower"):
        try:
            lb = lower_bound(problem, _fine_partition(problem, beta), time_limit=budget.left())
        except TimeoutError:
            lb = None
        on_lower(lb)
        return None

    def pause(objective, predicted):
        # the lower side is no longer what keeps the bracket open: the upper bound first
        return best.upper is not None and predicted <= (best.upper.value - objective) / 4

    try:
        _, ub = output_rounds(
            problem, beta, stall=rel_gap / 20, budget=budget, on_lower=on_lower,
            upper=lambda: best.gap > rel_gap and not output_obstacle(problem, "upper"),
            on_upper=on_upper, pause=pause,
            resume=lambda: best.gap > rel_gap, families=families,
        )
    except TimeoutError:
        on_lower(None)
        return None
    return ub


def _fine_partition(problem: Problem, beta: float) -> Partition:
    """Cells of width β around the noise's support (the lower bound in noise coordinates)."""
    return Partition.uniform(L=int(math.ceil(_default_half_width(problem) / beta - 1e-9)),
                             beta=beta)


def _noise_upper(problem, beta, A, budget) -> UpperBound | None:
    """The noise family P′(π, β) on supports enlarged by half while infeasible; ``None`` when it
    cannot be released in time."""
    centred = bool(problem.loss is not None and problem.loss.symmetric and not problem.monotone)
    for grow in (1.0, 1.5, 2.25):
        try:
            part = Partition.uniform(L=int(math.ceil(grow * A / beta - 1e-9)), beta=beta)
            return upper_bound(
                problem, part, centred=centred, atom=not problem.monotone,
                time_limit=budget.left(),
            )
        except InfeasibleError:
            continue
        except (TimeoutError, RuntimeError, ReleaseError):
            return None
    return None
