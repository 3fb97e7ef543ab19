r"""The life cycle of a bound, written once for every LP family: solve → certify → repair → round
up.

Three families of bounding LPs share it: the paper's P(π, β) and D(π, β) (:mod:`dpdro.bounds`),
the uniform-grid LPs behind :func:`dpdro.optimal_noise` (:mod:`dpdro.grid`) and the data-dependent
P′(π, β) and D′(π, β) (:mod:`dpdro.data_dependent.bounds`). Each supplies a :class:`ReleaseFamily`:
how an LP point becomes the released object (a noise, or one noise per piece), how the LP is solved
again, and, where they differ from one noise's, how two released objects are mixed and certified and
what they cost. Everything else is here:

Release (:func:`release`)
    An upper-bound LP is solved for δ·(1 − :data:`RELEASE_MARGIN`). Its solution is released and
    certified exactly, independently of the LP (:func:`dpdro.certify_delta`). If the solver's
    tolerance left it above δ, it is mixed with an *anchor* certified strictly below δ: the DP
    constraints are linear in the probabilities and δ(φ) is convex in them, so the mixture
    (1 − w)·candidate + w·anchor has δ at most (1 − w)·δ_candidate + w·δ_anchor
    (:func:`repair_by_mixing`). The anchors, cheapest first: the family's fallback (e.g. the uniform
    noise on the support, which needs no solve), then the same LP re-solved at δ·f for the fractions
    f of :data:`ANCHOR_FRACTIONS`. One exception policy: an anchor that cannot be built (the LP
    infeasible at the smaller δ, out of time, or the solver failing) is skipped, and no anchor is
    tried once the time budget is spent; when none certifies, :class:`ReleaseError` is raised
    (``TimeoutError`` when the budget ran out). The reported value is the released object's exact
    expected loss, rounded up (:func:`certified_release`).

Candidates without an LP
    :func:`certified_release` also turns a noise certified by its maker (a literature mechanism on a
    grid, :mod:`dpdro.reference`) into the same result type.

Results
    One :class:`UpperBound` (a released, certified noise and its loss) and one :class:`LowerBound`
    (a certified lower bound on the optimum, never below 0, the infimum of every loss) for every
    family; fields that only one family fills are ``None`` elsewhere. :func:`best_lower_bound`
    keeps the best of several valid lower bounds (e.g. randomized-rounding and cell-infimum
    coefficients) within one time budget.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ._budget import TimeBudget
from ._rounding import round_up
from .noise import PiecewiseUniform
from .partition import Partition
from .privacy import privacy_profile
from .problem import InfeasibleError
from .solvers import SolverError

__all__ = [
    "ANCHOR_FRACTIONS",
    "RELEASE_MARGIN",
    "LowerBound",
    "ReleaseError",
    "ReleaseFamily",
    "UpperBound",
    "best_lower_bound",
    "certified_release",
    "mix_noises",
    "release",
    "repair_by_mixing",
]

# Upper-bound LPs are solved for δ·(1 − RELEASE_MARGIN): the released noise then keeps a little room
# below δ, so that a transformed copy (translated off its lattice, rescaled) is still certified ≤ δ
# by certificates whose rounding allowance is larger (the breakpoint method of dpdro.privacy). The
# cost in expected loss is of relative order 1e-9.
RELEASE_MARGIN = 1e-9
# The repair's re-solves, at δ times these fractions, closest first: the closer, the smaller the
# anchor's weight; a re-solve still above δ (solver tolerance against a tiny δ) passes to the next.
ANCHOR_FRACTIONS = (1 - 1e-4, 1 - 1e-2, 0.9, 0.5)
# an anchor whose re-solve fails in one of these ways is skipped
NO_ANCHOR = (InfeasibleError, TimeoutError, SolverError)


class ReleaseError(RuntimeError):
    """No certified noise could be released (no anchor could be certified below δ)."""


# ---------------------------------------------------------------------------- results
@dataclass
class UpperBound:
    """A certified upper bound on the optimal value: the exact expected loss, rounded up, of a
    released noise (or family of noises) whose δ is certified independently of the LP.

    Every family fills ``value``, ``certified_delta``, ``seconds`` and ``repair_weight``, and
    ``noise`` (data-independent) or ``mechanism`` (data-dependent); the other fields are the
    family's details, ``None`` where they do not apply.
    """

    value: float  # E c(X) of the released noise (the w-weighted sum over pieces), rounded up
    certified_delta: float  # certify_delta(...) <= δ
    seconds: float
    noise: PiecewiseUniform | None = None  # the released noise (data-independent families)
    # the released dd.Mechanism, one noise per piece (data-dependent)
    mechanism: object | None = None
    repair_weight: float = 0.0  # weight of the anchor mixed in to remove solver overshoot
    # what was released: "lp", or the literature mechanism of a candidate without an LP
    source: str = "lp"
    lp_value: float | None = None  # the LP's optimal value before the release (None: no LP)
    iterations: int = 0  # rounds of Algorithm 1
    simplex_iterations: int = 0
    history: list = field(default_factory=list)
    partition: Partition | None = None  # P(π, β), P′(π, β): the cells of the LP
    k: object = None  # uniform grid: steps per Δf (0 for a reference noise without an LP)
    L: int | None = None  # uniform grid: the window [−L, L]
    boundary_mass: float | None = None  # uniform grid: mass in the outermost Δf of the window
    piece_losses: np.ndarray | None = None  # data-dependent: E c_l(X_l) per piece
    weights: np.ndarray | None = None  # data-dependent: the piece weights ω_l

    @property
    def noises(self):
        """The released noises of a data-dependent mechanism, one per piece."""
        return self.mechanism.noises


@dataclass
class LowerBound:
    """A certified lower bound on the optimal value: the objective of a dual-feasible point of a
    relaxation, rounded down, and never below 0. Fields other than ``value``, ``lp_value`` and
    ``seconds`` are the family's details (``None`` where they do not apply).

    Every loss is non-negative (Assumption 1: c maps into ℝ₊; :class:`dpdro.Loss`), so every
    optimal value is at least 0, and max(0, D) is as valid as D: ``value`` is raised to 0 where the
    dual point's objective is negative (a grid allowance larger than the optimum, e.g. D_R for ℓ2
    at δ = 0.999 on β = 0.5: −0.062); ``lp_value`` keeps the relaxation's own value."""

    value: float  # rounded down, at least 0
    lp_value: float  # the relaxation's optimal value as reported by the solver
    seconds: float
    # the LP whose bound is ``value``: "rounding" (D_R, D′_R) or "infimum"; "near_optimal" for the
    # closed form of a call out of time and "monotone_one_sided" for monotone noise on one side of
    # 0 (no LP, no grid: dpdro._schedule._closed_form_bound)
    coefficients: str = "infimum"
    candidates: dict = field(default_factory=dict)  # the bound of every LP solved, by coefficients
    iterations: int = 0
    simplex_iterations: int = 0
    history: list = field(default_factory=list)
    # primal mass outside the core (window): large means it is too small
    outside_mass: float | None = None
    # uniform grid: the part of it in the tail blocks beyond the LP's points (dpdro.grid)
    tail_mass: float | None = None
    # primal solution on the decision cells ``columns`` (P, P′ families)
    p: np.ndarray | None = None
    # decision cells: the core cells from core_offset on, padding around
    columns: Partition | None = None
    core_offset: int | None = None
    partition: Partition | None = None
    grouped: bool = False  # data-dependent: a bound on mechanisms constant on the problem's pieces
    k: object = None  # uniform grid: steps per Δf
    L: int | None = None  # uniform grid: the window of events

    def __post_init__(self):
        if self.value < 0.0:  # (NaN is left as it is)
            self.value = 0.0


# ---------------------------------------------------------------------------- families
class ReleaseFamily(ABC):
    """What one LP family supplies to :func:`release` (module docstring).

    Attributes ``problem`` (its ``delta`` is the level to certify; ``epsilon``, ``sensitivity``,
    ``loss``) and ``lp`` (whose ``set_delta`` changes the right-hand side of every privacy row). The
    defaults suit families that release one :class:`~dpdro.PiecewiseUniform`.
    """

    problem: object
    lp: object

    @abstractmethod
    def noise(self, x: np.ndarray):
        """The released object of the LP point ``x``."""

    @abstractmethod
    def solve(self, budget: TimeBudget) -> np.ndarray:
        """Solve the LP again (at its current δ) within ``budget``; the LP point. May raise one of
        :data:`NO_ANCHOR`."""

    def certify(self, released) -> tuple[float, float]:
        """(certified δ, a bound on its rounding error)."""
        profile = privacy_profile(released, self.problem.epsilon, self.problem.sensitivity)
        return profile.delta, float(np.max(profile.error_bound))

    def mix(self, a, b, weight: float):
        """(1 − weight)·a + weight·b."""
        return mix_noises(a, b, weight)

    def expected_loss(self, released) -> float:
        """The objective of the released object (before rounding up)."""
        return released.expected_loss(self.problem.loss)

    def fallback_anchor(self):
        """An object certified below δ without a solve, or ``None``."""
        return None

    def result(self, released) -> dict:
        """The :class:`UpperBound` fields that describe the released object."""
        return {"noise": released}


def mix_noises(a: PiecewiseUniform, b: PiecewiseUniform, weight: float) -> PiecewiseUniform:
    """(1 − w)·a + w·b for two noises on the same cells, renormalised; ``a``'s grid and metadata."""
    probs = (1.0 - weight) * a.probs + weight * b.probs
    atom = (1.0 - weight) * a.atom + weight * b.atom
    total = probs.sum() + atom
    return PiecewiseUniform(
        a.edges, probs / total, grid=a.grid, metadata=dict(a.metadata), atom=atom / total
    )


# ---------------------------------------------------------------------------- the release path
def release(family: ReleaseFamily, x: np.ndarray, budget: TimeBudget, **fields) -> UpperBound:
    """Release the LP point ``x`` of ``family``: certify, repair by mixing if needed, round up.

    Parameters
    ----------
    family : the LP family (module docstring).
    x : an optimal point of the family's LP, solved at δ·(1 − RELEASE_MARGIN).
    budget : the call's time budget (re-solves get what is left; ``seconds`` is its elapsed time).
    **fields : further :class:`UpperBound` fields (``lp_value``, ``iterations``, …).

    Returns
    -------
    UpperBound whose released object is certified ≤ δ exactly and whose value is its expected loss,
    rounded up.

    Raises
    ------
    ReleaseError when no anchor can be certified below δ; TimeoutError instead when the budget ran
    out first.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (the feasible set of P is convex: mixtures of
       private noises are private), Algorithm 1 (the LP solution released).
    """
    delta = family.problem.delta
    anchors = [family.fallback_anchor] + [
        lambda f=f: _resolved(family, f, budget) for f in ANCHOR_FRACTIONS
    ]
    try:
        released, certified, weight = repair_by_mixing(
            family.noise(x), family.certify, family.mix, anchors, delta
        )
    except ReleaseError:
        if budget.expired():
            raise TimeoutError(
                f"the time limit ran out before the LP solution, which overshoots δ = {delta:g}, "
                "could be repaired"
            ) from None
        raise
    return certified_release(
        family.expected_loss(released),
        certified,
        budget.elapsed(),
        repair_weight=weight,
        **family.result(released),
        **fields,
    )


def _resolved(family: ReleaseFamily, fraction: float, budget: TimeBudget):
    """The family's LP re-solved at δ·``fraction`` (an anchor), or ``None`` when it cannot be."""
    if budget.expired():
        return None
    delta = family.problem.delta
    family.lp.set_delta(fraction * delta)
    try:
        return family.noise(family.solve(budget))
    except NO_ANCHOR:
        return None
    finally:
        family.lp.set_delta(delta * (1.0 - RELEASE_MARGIN))


def certified_release(
    expected_loss: float, certified_delta: float, seconds: float, **fields
) -> UpperBound:
    """The :class:`UpperBound` of a released object whose δ is certified: its value is the expected
    loss rounded up (:func:`dpdro._rounding.round_up`). ``fields`` are the other fields (``noise``
    or ``mechanism``, the family's details)."""
    return UpperBound(
        value=round_up(expected_loss), certified_delta=certified_delta, seconds=seconds, **fields
    )


def repair_by_mixing(
    candidate, certify: Callable, mix: Callable, anchors: Iterable[Callable], delta: float
):
    """Remove a solver's overshoot of δ from a released noise (or family of noises) exactly.

    ``certify(obj)`` returns (certified δ, its rounding-error bound); ``mix(a, b, w)`` the mixture
    (1 − w)·a + w·b; ``anchors`` are zero-argument callables tried in order (cheapest first) until
    one returns an object certified strictly below δ (a callable may return ``None``: no anchor).
    The mixture's δ is at most (1 − w)·δ_candidate + w·δ_anchor (module docstring), so the weight
    w = (δ_candidate − δ′)/(δ_candidate − δ_anchor) with δ′ = δ − 4·(rounding error) certifies, up
    to the certificate's own rounding; w is doubled until it does.

    Parameters
    ----------
    candidate : the released object of the LP solution.
    certify : object ↦ (certified δ, its rounding-error bound).
    mix : (a, b, w) ↦ (1 − w)·a + w·b.
    anchors : zero-argument callables, each returning an object or ``None``.
    delta : the level δ to certify.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (the constraints of P are linear in γ, so a
       mixture's δ is at most the mixture of the δ's).

    Returns
    -------
    (released object, its certified δ ≤ ``delta``, the weight w of the anchor; 0 without repair).

    Raises
    ------
    ReleaseError when the candidate overshoots and no anchor is certified below ``delta``.
    """
    d, err = certify(candidate)
    if d <= delta:
        return candidate, d, 0.0
    anchor = None
    for make in anchors:
        cand = make()
        if cand is None:
            continue
        da, _ = certify(cand)
        if da < delta:
            anchor = (cand, da)
            break
    if anchor is None:
        raise ReleaseError(
            f"the LP solution overshoots δ = {delta:g} (certified {d:.3e}) and no anchor could be "
            "certified below it"
        )
    pa, da = anchor
    target = delta - 4.0 * err  # room for the certificate's own rounding-error bound
    weight = min(1.0, (d - target) / (d - da))
    while True:
        mixed = mix(candidate, pa, weight)
        dm, _ = certify(mixed)
        if dm <= delta:
            return mixed, dm, weight
        if weight >= 1.0:  # pragma: no cover - the anchor alone is certified below δ
            raise ReleaseError("repair failed: the anchor alone is not certified below δ")
        weight = min(1.0, 2.0 * weight)


# ---------------------------------------------------------------------------- lower bounds
def best_lower_bound(
    attempts: Iterable[Callable[[TimeBudget], LowerBound]], budget: TimeBudget
) -> LowerBound:
    """The largest of several valid lower bounds, each from one attempt (a callable of the budget).

    The attempts run in order; once one has given a bound, a spent budget or an attempt cut short by
    it (``TimeoutError``) ends the search with the best bound so far. ``candidates`` of the result
    records the value of every attempt that finished, by its ``coefficients``.

    Raises
    ------
    TimeoutError when the first attempt runs out of time.
    """
    best, values = None, {}
    for attempt in attempts:
        if best is not None and budget.expired():
            break
        try:
            bound = attempt(budget)
        except TimeoutError as exc:
            if best is None:
                raise
            # an attempt cut short may still carry a valid bound (dpdro.grid.LowerBoundTimeout)
            partial = getattr(exc, "bound", None)
            if partial is not None and partial.value > best.value:
                values[partial.coefficients] = partial.value
                best = partial
            break
        values[bound.coefficients] = bound.value
        if best is None or bound.value > best.value:
            best = bound
    best.candidates = values
    best.seconds = budget.elapsed()
    return best
