r"""Solve P′(π, β) and D′(π, β) by Algorithm 1: a released, certified mechanism and a valid lower bound."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._rounding import round_up as _round_up
from .._validation import check_bool, check_choice, check_positive
from ..cutting_plane import run_cutting_plane
from ..lp import RELEASE_MARGIN, repair_by_mixing
from ..monotone import monotone_noise
from ..noise import PiecewiseUniform
from ..partition import Partition
from ..problem import InfeasibleError
from .lp import DDBoundingLP, rounding_applies
from .mechanism import Mechanism
from .privacy import privacy_profile
from .problem import Problem

__all__ = ["UpperBound", "LowerBound", "upper_bound", "lower_bound"]


@dataclass
class UpperBound:
    """A certified upper bound on P′: the objective of a released, certified mechanism."""

    value: float  # Σ_l ω_l E c_l(X_l), rounded up
    mechanism: Mechanism
    certified_delta: float
    lp_value: float
    piece_losses: np.ndarray  # E c_l(X_l) per piece
    weights: np.ndarray  # ω_l
    partition: Partition
    iterations: int
    seconds: float
    repair_weight: float = 0.0
    simplex_iterations: int = 0
    history: list = field(default_factory=list)

    @property
    def noises(self):
        return self.mechanism.noises


@dataclass
class LowerBound:
    """A valid lower bound on P′ (``grouped=False``) or on the piece-constant problem (``grouped=True``)."""

    value: float
    lp_value: float
    p: np.ndarray  # (number of distributions, decision cells + tail)
    columns: Partition
    core_offset: int
    partition: Partition
    iterations: int
    seconds: float
    grouped: bool = False
    simplex_iterations: int = 0
    history: list = field(default_factory=list)
    coefficients: str = "infimum"  # the LP whose bound is ``value``: "rounding" (D′_R) or "infimum" (D′)
    candidates: dict = field(default_factory=dict)  # the bound of every LP solved, by coefficients


def _cp_defaults(lp: DDBoundingLP) -> dict:
    """Cut-round sizes (measured heuristic): with thousands of constraint groups (uniform pieces, e.g.
    Figure 3 with K ≥ 32) lazy cuts on *every* violated group per round were 2–3× faster than 4 full
    + 256 lazy; with few groups of long segments (Figure 5's 9 pieces) the latter was 2× faster."""
    if lp.n_groups > 1500:
        return dict(full_per_round=1, lazy_per_round=10**9)
    return dict(full_per_round=4, lazy_per_round=256)


def _family(lp: DDBoundingLP, x: np.ndarray) -> list[PiecewiseUniform]:
    part, prob = lp.partition, lp.problem
    P = np.clip(lp.probabilities(x), 0.0, None)
    out = []
    for l in range(lp.M):
        meta = dict(epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity,
                    piece=[float(lp.grouping.edges[l]), float(lp.grouping.edges[l + 1])])
        total = P[l].sum()
        atom = float(P[l, lp.n_cells] / total) if lp.atom else 0.0
        nz = PiecewiseUniform(part.edges + lp.offset, P[l, : lp.n_cells] / total, grid=_grid(lp), metadata=meta,
                              atom=atom)
        out.append(monotone_noise(nz) if prob.monotone else nz)
    return out


def _grid(lp: DDBoundingLP) -> float:
    """Lattice of the released noises: β, or β/2 for noises translated by half a cell."""
    beta = lp.partition.beta
    return beta if lp.offset == 0.0 else beta / 2


def _mix(a, b, w):
    out = []
    for x, y in zip(a, b):
        probs = (1.0 - w) * x.probs + w * y.probs
        atom = (1.0 - w) * x.atom + w * y.atom
        total = probs.sum() + atom
        nz = PiecewiseUniform(x.edges, probs / total, grid=x.grid, metadata=dict(x.metadata), atom=atom / total)
        out.append(nz)
    return out


def upper_bound(problem: Problem, partition: Partition, *, centred: bool = False, atom: bool = False,
                cuts: str = "shift", tol: float = 1e-9, time_limit: float | None = None, **kwargs) -> UpperBound:
    """Solve P′(π, β) by Algorithm 1 with the oracle of Algorithm 3 / G.1 and release its noises.

    Returns a :class:`UpperBound` whose ``mechanism`` (one PiecewiseUniform per piece) satisfies
    ``mechanism.certify() <= δ`` exactly (repaired by mixing if the solver overshot), meets the caps and
    monotonicity exactly, and whose ``value`` (rounded up) is a valid upper bound on P′.
    ``centred``: translate every noise by −β/2 (cells [(i − ½)β, (i + ½)β) of the uniform partition,
    centred on 0). The privacy constraints of P′ only involve differences of noise positions, so
    translating the whole family keeps it feasible; only the cell-average losses change (for ℓ1 the
    cell around 0 costs β/4 instead of β/2). Not for monotone problems (monotone in |x| about 0).
    When the instance is mirror-symmetric (symmetric loss, pieces and weight symmetric about the
    centre of Φ, ``Partition.uniform``), the centred LP is solved over families with
    p_{M−1−l}(x) = p_l(−x) only: a restriction, so still an upper bound, and by convexity and the
    symmetry of P′ no loss at all (the mirror average of an optimal family is optimal); the LP has
    half the columns and half the constraint groups.
    ``atom``: every piece's noise may also have a point mass a_l at 0 (cost c(0)). For φ ≠ 0 the
    atom of p_l lies in every worst event (nothing of p_l′ moved by φ sits on it), so
    δ_{l,l′}(φ) = a_l + ∫ (p_l − e^ε p_l′(· − φ))₊; every admissible shift range is an open interval,
    on which φ ≠ 0 comes arbitrarily close to any point, so the constraint is a_l plus the
    continuous part at the grid shifts of the closed range ≤ δ: the atom enters every budget row of
    the groups (l, ·, ·). Not for monotone problems.
    ``time_limit`` bounds the whole call (LP construction, Algorithm 1 and the repair's re-solves): when
    Algorithm 1 has not converged by then there is no certified mechanism and RuntimeError is raised
    (TimeoutError if not even the first relaxation was solved); a repair re-solve cut short is skipped.
    ``**kwargs`` go to :func:`dpdro.cutting_plane.run_cutting_plane` (``max_iter``, …).
    """
    t0 = time.perf_counter()
    centred = check_bool("centred", centred)
    atom = check_bool("atom", atom)
    if atom and problem.monotone:
        raise ValueError("atom=True is not available for monotone problems")
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    if centred and problem.monotone:
        raise ValueError("centred=True is not available for monotone problems (monotone in |x| about 0)")

    def left():
        return None if time_limit is None else time_limit - (time.perf_counter() - t0)

    # with centred cells a mirror-symmetric instance is solved over mirror-symmetric families (half the LP)
    symmetric = centred and not DDBoundingLP._symmetry_obstacle(problem, partition, "upper")
    lp = DDBoundingLP(problem, partition, "upper", offset=-partition.beta / 2 if centred else 0.0,
                      symmetric=symmetric, atom=atom)
    opts = {**_cp_defaults(lp), **kwargs}
    if left() is not None and left() <= 0:
        raise TimeoutError(f"the upper bound ran out of the time limit of {time_limit:g} s while building the LP")
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=left(), **opts)
    if not res.converged:
        raise RuntimeError(f"Algorithm 1 stopped after {res.iterations} iterations ({res.seconds:.1f} s) with a "
                           f"privacy shortfall of {res.max_shortfall:.3e}; no certified mechanism to release")
    edges = lp.grouping.edges

    def certify(family):
        prof = privacy_profile(family, edges, problem.epsilon, problem.sensitivity)
        return prof.delta, prof.error_bound

    def uniform():  # (ε, Δf/W)-DP on a support of length W; it would break the caps
        if problem.cap is not None:
            return None
        k = partition.widths
        return [PiecewiseUniform(partition.edges + lp.offset, k / k.sum(), grid=_grid(lp))] * lp.M

    def resolve(frac):
        def make():
            if left() is not None and left() <= 0:
                return None
            lp.set_delta(frac * problem.delta)
            try:
                return _family(lp, run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=left(), **opts).x)
            except (InfeasibleError, TimeoutError):
                return None
            finally:
                lp.set_delta(problem.delta * (1.0 - RELEASE_MARGIN))
        return make

    anchors = [uniform] + [resolve(f) for f in (1 - 1e-4, 1 - 1e-2, 0.9, 0.5)]
    fam, d, weight = repair_by_mixing(_family(lp, res.x), certify, _mix, anchors, problem.delta)
    mech = Mechanism(tuple(fam), edges, problem.epsilon, problem.delta, problem.sensitivity)
    losses = np.array([fam[l].expected_loss(problem.piece_loss(l)) for l in range(lp.M)])
    if problem.cap is not None:
        capped = np.array([fam[l].expected_loss(problem.cap_loss or problem.piece_loss(l)) for l in range(lp.M)])
        if np.any(capped > problem.cap):
            raise RuntimeError(f"released noise exceeds the cap {problem.cap:g} (max {capped.max():.12g}); "
                               "solver tolerance too large")
    value = _round_up(float(np.sum(lp.weights * losses)))
    return UpperBound(value, mech, d, res.objective, losses, lp.weights, partition, res.iterations,
                      time.perf_counter() - t0, weight, res.simplex_iterations, res.history)


def _rounding_dominates(problem: Problem, lp: DDBoundingLP) -> bool:
    """Whether the rounding LP's objective (and cap rows) dominate those of the infimum LP column by column:
    c(iβ) − e_β ≥ inf_{[iβ, (i+1)β)} c for every loss involved (then, on their common feasible set, D′_R ≥
    D′ and the latter need not be solved). Never for monotone problems (D′ keeps the monotone rows)."""
    if problem.monotone:
        return False
    edges = lp.columns.edges
    a, b = edges[:-1], edges[1:]
    losses = list(problem.losses) if problem.losses is not None else [problem.loss]
    if problem.cap is not None and problem.cap_loss is not None:
        losses.append(problem.cap_loss)
    for loss in losses:
        e = loss.grid_interpolation_excess(lp.partition.beta)
        if np.any(np.asarray(loss(a), dtype=float) - e < loss.cell_infimum(a, b)) or e > 0:
            return False  # (a positive excess also lowers the tail column below D′'s)
    return True


def lower_bound(problem: Problem, partition: Partition, *, grouped: bool = False, coefficients: str | None = None,
                cuts: str = "shift", tol: float = 1e-9, time_limit: float | None = None,
                **kwargs) -> LowerBound:
    """A valid lower bound on P′ (a dual-feasible objective of D′_R(L, β) or D′(L, β), rounded down).

    ``grouped=False``: a lower bound on P′ (one distribution per fine piece Φ_k(β), exact grid shifts,
    weights inf w; see :mod:`dpdro.data_dependent`). ``grouped=True``: a lower bound on the best
    mechanism constant on the problem's pieces.

    ``coefficients``: ``"rounding"`` (D′_R, the randomized-rounding bound of the module docstring),
    ``"infimum"`` (D′ of Proposition 7 with the valid shift set), or ``None`` (default): D′_R where it
    applies (every loss has a finite grid interpolation excess), and also D′ when D′_R does not
    dominate it column by column (e.g. ℓ2, whose excess β²/4 is subtracted, or monotone problems,
    whose monotonicity rows only D′ keeps); the larger valid bound is returned. ``time_limit`` bounds
    the whole call (LP construction included; each solve gets what is left).
    """
    if coefficients is not None:
        check_choice("coefficients", coefficients, ("rounding", "infimum"))
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    t0 = time.perf_counter()
    if coefficients is None:
        kinds = ["rounding", "infimum"] if rounding_applies(problem, partition.beta) else ["infimum"]
    else:
        kinds = [coefficients]
    best, values = None, {}
    for kind in kinds:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            if best is None:
                raise TimeoutError(f"the lower bound ran out of the time limit of {time_limit:g} s")
            break
        symmetric = not DDBoundingLP._symmetry_obstacle(problem, partition, "lower", kind, grouped)
        lp = DDBoundingLP(problem, partition, "lower", grouped=grouped, coefficients=kind, symmetric=symmetric)
        opts = {**_cp_defaults(lp), **kwargs}
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            if best is None:
                raise TimeoutError(f"the lower bound ran out of the time limit of {time_limit:g} s")
            break
        try:
            res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=left, **opts)
        except TimeoutError:
            if best is None:
                raise
            break
        value = lp.dual_bound(res.row_duals)
        values[kind] = value
        if best is None or value > best[0]:
            best = (value, lp, res, kind)
        if coefficients is None and kind == "rounding" and _rounding_dominates(problem, lp):
            break
    value, lp, res, kind = best
    P = np.clip(lp.probabilities(res.x), 0.0, None)
    return LowerBound(value, res.objective, P, lp.columns, lp.table.core_offset, partition, res.iterations,
                      time.perf_counter() - t0, grouped, res.simplex_iterations, res.history, kind, values)
