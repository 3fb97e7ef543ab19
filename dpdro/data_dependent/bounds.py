r"""Solve P′(π, β) and D′(π, β) by Algorithm 1: a released, certified mechanism and a valid lower bound."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._rounding import round_up as _round_up
from ..cutting_plane import run_cutting_plane
from ..lp import RELEASE_MARGIN, repair_by_mixing
from ..monotone import monotone_noise
from ..noise import PiecewiseUniform
from ..partition import Partition
from ..problem import InfeasibleError
from .lp import DDBoundingLP
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


def _cp_defaults(lp: DDBoundingLP) -> dict:
    """Cut-round sizes (measured heuristic): with thousands of constraint groups (uniform pieces, e.g.
    Figure 3 with K ≥ 32) lazy cuts on *every* violated group per round were 2–3× faster than 4 full
    + 256 lazy; with few groups of long segments (Figure 5's 9 pieces) the latter was 2× faster."""
    if lp.n_groups > 1500:
        return dict(full_per_round=1, lazy_per_round=10**9)
    return dict(full_per_round=4, lazy_per_round=256)


def _family(lp: DDBoundingLP, x: np.ndarray) -> list[PiecewiseUniform]:
    part, prob = lp.partition, lp.problem
    P = np.clip(np.asarray(x[: lp.n_p]).reshape(lp.M, lp.n_c), 0.0, None)
    out = []
    for l in range(lp.M):
        meta = dict(epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity,
                    piece=[float(lp.grouping.edges[l]), float(lp.grouping.edges[l + 1])])
        nz = PiecewiseUniform(part.edges, P[l] / P[l].sum(), grid=part.beta, metadata=meta)
        out.append(monotone_noise(nz) if prob.monotone else nz)
    return out


def _mix(a, b, w):
    out = []
    for x, y in zip(a, b):
        probs = (1.0 - w) * x.probs + w * y.probs
        nz = PiecewiseUniform(x.edges, probs / probs.sum(), grid=x.grid, metadata=dict(x.metadata))
        out.append(nz)
    return out


def upper_bound(problem: Problem, partition: Partition, *, cuts: str = "shift", tol: float = 1e-9,
                **kwargs) -> UpperBound:
    """Solve P′(π, β) by Algorithm 1 with the oracle of Algorithm 3 / G.1 and release its noises.

    Returns a :class:`UpperBound` whose ``mechanism`` (one PiecewiseUniform per piece) satisfies
    ``mechanism.certify() <= δ`` exactly (repaired by mixing if the solver overshot), meets the caps and
    monotonicity exactly, and whose ``value`` (rounded up) is a valid upper bound on P′.
    ``**kwargs`` go to :func:`dpdro.cutting_plane.run_cutting_plane` (``time_limit``, ``max_iter``, …).
    """
    lp = DDBoundingLP(problem, partition, "upper")
    opts = {**_cp_defaults(lp), **kwargs}
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, **opts)
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
        return [PiecewiseUniform(partition.edges, k / k.sum(), grid=partition.beta)] * lp.M

    def resolve(frac):
        def make():
            lp.set_delta(frac * problem.delta)
            try:
                return _family(lp, run_cutting_plane(lp, cuts=cuts, tol=tol, **opts).x)
            except InfeasibleError:
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
    return UpperBound(value, mech, d, res.objective, losses, lp.weights, partition, res.iterations, res.seconds,
                        weight, res.simplex_iterations, res.history)


def lower_bound(problem: Problem, partition: Partition, *, grouped: bool = False,
                cuts: str = "shift", tol: float = 1e-9, **kwargs) -> LowerBound:
    """Solve D′(π, β) by Algorithm 1 and return a valid lower bound (a dual-feasible objective).

    ``grouped=False``: a lower bound on P′ (one distribution per fine piece Φ_k(β), exact shifts,
    weights inf w; see the module docstring). ``grouped=True``: a lower bound on the best mechanism
    constant on the problem's pieces.
    """
    lp = DDBoundingLP(problem, partition, "lower", grouped=grouped)
    opts = {**_cp_defaults(lp), **kwargs}
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, **opts)
    value = lp.dual_bound(res.row_duals)
    P = np.clip(res.x[: lp.n_p], 0.0, None).reshape(lp.M, lp.n_c)
    return LowerBound(value, res.objective, P, lp.columns, lp.table.core_offset, partition, res.iterations,
                        res.seconds, grouped, res.simplex_iterations, res.history)

