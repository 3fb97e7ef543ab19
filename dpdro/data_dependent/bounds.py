r"""Solve the bounding LPs by Algorithm 1: released, certified mechanisms and valid lower bounds.

Two upper-bound families, each a restriction of P′ with its own exact certificate, released
through the one release path of :mod:`dpdro.release`:

* ``family="noise"``: the paper's P′(π, β) (one noise per piece, Appendix C.3, Algorithm G.1);
* ``family="output"``: one output law per piece plus the query value itself
  (:mod:`dpdro.data_dependent.output`), on the output cells of width β, or on the grid points
  (the driver's family "output points"; the released mechanism's ``grid_masses``).

Lower bounds: the randomized-rounding bound D′_R (in output coordinates and on the clamped problem
where the losses allow, :mod:`~dpdro.data_dependent.output`; otherwise in noise coordinates,
:mod:`~dpdro.data_dependent.lp`) and D′ of Proposition 7. :func:`output_bounds` solves the clamped
D′_R and the output family on one shared model.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .._budget import TimeBudget
from .._validation import check_bool, check_choice, check_optional_positive
from ..cutting_plane import run_cutting_plane
from ..monotone import monotone_noise
from ..noise import PiecewiseUniform
from ..partition import Partition
from ..problem import InfeasibleError
from ..release import (
    LowerBound,
    ReleaseError,
    ReleaseFamily,
    UpperBound,
    best_lower_bound,
    mix_noises,
    release,
)
from .costs import point_columns
from .lp import DDBoundingLP
from .mechanism import Mechanism
from .output import UPPER_MODES, OutputLP, output_obstacle
from .privacy import privacy_profile
from .problem import Problem

__all__ = ["UpperBound", "LowerBound", "upper_bound", "lower_bound", "output_bounds"]


def _cp_defaults(lp: DDBoundingLP) -> dict:
    """Cut-round sizes (measured heuristic): with thousands of constraint groups (uniform pieces,
    e.g. Figure 3 with K ≥ 32) lazy cuts on *every* violated group per round were 2–3× faster than
    4 full + 256 lazy; with few groups of long segments (Figure 5's 9 pieces) the latter was 2×
    faster."""
    if isinstance(lp, OutputLP):  # every violated pair, its worst cells only
        return dict(full_per_round=0, lazy_per_round=10**9)
    if lp.n_groups > 1500:
        return dict(full_per_round=1, lazy_per_round=10**9)
    return dict(full_per_round=4, lazy_per_round=256)


# complete=True: a fine P′ with at least this many segment rows (groups × cells) is seeded from the
# coarser grid 2β where it exists (measured: the 42-piece coordinate descent design, 70 000, 3.7×
# less CPU time; below some 20 000 rows the interior-point solve of the complete LP takes seconds)
_COARSE_MIN_ROWS = 20_000


def _coarser(problem: Problem, partition: Partition) -> Partition | None:
    """The uniform partition of the grid 2β over about the same support (L′ = ⌈L/2⌉), if the
    pieces, Φ and Δf lie on that grid and P′ on it has the same pieces (not so for the fine pieces
    Φ_k(β) of ``pieces=None``); else ``None``."""
    beta = 2.0 * partition.beta
    if not (partition.is_uniform and partition.pi[-1] == partition.L + 1):
        return None
    try:
        a, b = problem.grouping(beta).edges, problem.grouping(partition.beta).edges
        same = a.shape == b.shape and np.allclose(a, b, rtol=0.0, atol=1e-9 * beta)
        problem.base_problem.shifts(beta)
    except ValueError:
        return None
    if not same:
        return None
    return Partition.uniform(L=-(-partition.L // 2), beta=beta)


def _start_complete(lp: DDBoundingLP, budget: TimeBudget, tol: float) -> None:
    """The relaxation ``dd.upper_bound(complete=True)`` starts from, solved first by the
    interior-point method with crossover.

    The complete P′(π, β) (every group's whole-shift cut), or, where it is large and P′ also exists
    on the grid 2β (:func:`_coarser`), only the groups (l, l′, s) with s ∈ {2s′ − 1, 2s′, 2s′ + 1}
    for the groups (l, l′, s′) that bind at the optimum of P′ on the grid 2β (solved the same way,
    recursively). That is a heuristic for which privacy constraints bind (on the 42-piece
    coordinate descent design 422 of 1 718 groups, 278 of the 321 that bind; the oracle found 79
    more in two rounds): Algorithm 1 then adds whatever the oracle finds violated, so the answer is
    the optimum of the complete P′(π, β) either way. The coarse solve is skipped (complete start)
    when it does not converge within the time limit, and for mirror-symmetric LPs."""
    seed = None
    if not lp.symmetric and lp.n_groups * lp.n_cells >= _COARSE_MIN_ROWS:
        coarse = _coarser(lp.problem, lp.partition)
        if coarse is not None:
            seed = _binding_on(lp.problem, coarse, budget, tol)
    if seed is None:
        lp.add_all_shift_cuts()
    else:
        keys = [(a, b, 2 * s + ds) for a, b, s in seed.tolist() for ds in (-1, 0, 1)]
        lp.add_full_cuts(lp.groups_of(np.array(keys, dtype=np.int64).reshape(-1, 3)))
    lp.interior_first = True


def _binding_on(problem: Problem, partition: Partition, budget: TimeBudget, tol: float):
    """The triples (l, l′, s) of the groups that bind at the optimum of P′(π, β) on ``partition``
    (complete start, :func:`_start_complete`); ``None`` if it is infeasible or not solved within
    the budget."""
    lp = DDBoundingLP(problem, partition, "upper")
    _start_complete(lp, budget, tol)
    try:
        res = run_cutting_plane(lp, tol=tol, time_limit=budget.left(), **_cp_defaults(lp))
    except (TimeoutError, InfeasibleError):
        return None
    if not res.converged:
        return None
    return lp.group_keys()[lp.binding_groups(res.row_duals)]


def _family(lp: DDBoundingLP, x: np.ndarray) -> list[PiecewiseUniform]:
    part, prob = lp.partition, lp.problem
    P = np.clip(lp.probabilities(x), 0.0, None)
    out = []
    for i in range(lp.M):
        meta = dict(
            epsilon=prob.epsilon,
            delta=prob.delta,
            sensitivity=prob.sensitivity,
            piece=[float(lp.grouping.edges[i]), float(lp.grouping.edges[i + 1])],
        )
        total = P[i].sum()
        atom = float(P[i, lp.n_cells] / total) if lp.atom else 0.0
        nz = PiecewiseUniform(
            part.edges + lp.offset,
            P[i, : lp.n_cells] / total,
            grid=_grid(lp),
            metadata=meta,
            atom=atom,
        )
        out.append(monotone_noise(nz) if prob.monotone else nz)
    return out


def _grid(lp: DDBoundingLP) -> float:
    """Lattice of the released noises: β, or β/2 for noises translated by half a cell."""
    beta = lp.partition.beta
    return beta if lp.offset == 0.0 else beta / 2


class _FamilyRelease(ReleaseFamily):
    """P′(π, β) as a :class:`dpdro.release.ReleaseFamily`: the released object is one noise per
    piece, certified jointly (:func:`dpdro.data_dependent.certify_delta`); the uniform noise on the
    support ((ε, Δf/W)-DP for a support of length W) is the anchor without a solve, unless caps
    forbid it."""

    def __init__(self, lp: DDBoundingLP, *, cuts: str, tol: float, opts: dict):
        self.lp, self.problem, self.cuts, self.tol, self.opts = lp, lp.problem, cuts, tol, opts

    def noise(self, x: np.ndarray) -> list[PiecewiseUniform]:
        return _family(self.lp, x)

    def solve(self, budget: TimeBudget) -> np.ndarray:
        return run_cutting_plane(
            self.lp, cuts=self.cuts, tol=self.tol, time_limit=budget.left(), **self.opts
        ).x

    def certify(self, family) -> tuple[float, float]:
        g = self.lp.grouping
        prof = privacy_profile(
            family, g.edges, self.problem.epsilon, self.problem.sensitivity,
            edge_ticks=g.lam, edge_step=g.beta,
        )
        return prof.delta, prof.error_bound

    def mix(self, a, b, weight: float) -> list[PiecewiseUniform]:
        return [mix_noises(x, y, weight) for x, y in zip(a, b, strict=False)]

    def piece_losses(self, family) -> np.ndarray:
        return np.array(
            [
                family[piece].expected_loss(self.problem.piece_loss(piece))
                for piece in range(self.lp.M)
            ]
        )

    def expected_loss(self, family) -> float:
        return float(np.sum(self.lp.weights * self.piece_losses(family)))

    def fallback_anchor(self):
        if self.problem.cap is not None:  # the uniform noise would break the caps
            return None
        part, lp = self.lp.partition, self.lp
        w = part.widths
        return [PiecewiseUniform(part.edges + lp.offset, w / w.sum(), grid=_grid(lp))] * lp.M

    def result(self, family) -> dict:
        """The mechanism, its per-piece losses and weights, after checking the caps exactly."""
        problem, lp = self.problem, self.lp
        if problem.cap is not None:
            capped = np.array(
                [
                    family[piece].expected_loss(problem.cap_loss or problem.piece_loss(piece))
                    for piece in range(lp.M)
                ]
            )
            if np.any(capped > problem.cap):
                raise RuntimeError(
                    f"released noise exceeds the cap {problem.cap:g} (max {capped.max():.12g}); "
                    "solver tolerance too large"
                )
        g = lp.grouping
        mech = Mechanism(
            tuple(family), np.array([problem.phi_lo]), problem.epsilon, problem.delta,
            problem.sensitivity, edge_ticks=g.lam, edge_step=g.beta,
        )
        return dict(mechanism=mech, piece_losses=self.piece_losses(family), weights=lp.weights)


def upper_bound(
    problem: Problem,
    partition: Partition,
    *,
    centred: bool = False,
    atom: bool = False,
    cuts: str = "shift",
    tol: float = 1e-9,
    time_limit: float | None = None,
    complete: bool = False,
) -> UpperBound:
    """Solve P′(π, β) by Algorithm 1 with the oracle of Algorithm 3 / G.1 and release its noises.

    Returns an :class:`UpperBound` whose ``mechanism`` (one PiecewiseUniform per piece) satisfies
    ``mechanism.certify() <= δ`` exactly (repaired by mixing if the solver overshot,
    :func:`dpdro.release.release`), meets the caps and monotonicity exactly, and whose ``value``
    (rounded up) is a valid upper bound on P′.

    Parameters
    ----------
    problem : the data-dependent problem P′.
    partition : the cells Π_j(β) of every piece's noise.
    centred : translate every noise by −β/2 (cells [(i − ½)β, (i + ½)β) of the uniform partition,
        centred on 0). The privacy constraints of P′ only involve differences of noise positions, so
        translating the whole family keeps it feasible; only the cell-average losses change (for ℓ1
        the cell around 0 costs β/4 instead of β/2). Not for monotone problems (monotone in |x|
        about 0). When the instance is mirror-symmetric (symmetric loss, pieces and weight
        symmetric about the centre of Φ, ``Partition.uniform``), the centred LP is solved over
        families with p_{M−1−l}(x) = p_l(−x) only: a restriction, so still an upper bound, and by
        convexity and the symmetry of P′ no loss at all (the mirror average of an optimal family is
        optimal); the LP has half the columns and half the constraint groups.
    atom : every piece's noise may also have a point mass a_l at 0 (cost c(0)). For φ ≠ 0 the atom
        of p_l lies in every worst event (nothing of p_l′ moved by φ sits on it), so
        δ_{l,l′}(φ) = a_l + ∫ (p_l − e^ε p_l′(· − φ))₊; every admissible shift range is an open
        interval, on which φ ≠ 0 comes arbitrarily close to any point, so the constraint is a_l plus
        the continuous part at the grid shifts of the closed range ≤ δ: the atom enters every budget
        row of the groups (l, ·, ·). Not for monotone problems.
    cuts, tol : as for :func:`dpdro.upper_bound`.
    time_limit : bounds the whole call (LP construction, Algorithm 1 and the repair's re-solves):
        when Algorithm 1 has not converged by then there is no certified mechanism and RuntimeError
        is raised (TimeoutError if not even the first relaxation was solved); a repair re-solve cut
        short is skipped.
    complete : start Algorithm 1 from the complete P′(π, β) (every constraint group's whole-shift
        cut) instead of the empty relaxation, its first solve by the interior-point method with
        crossover (a vertex, whose basis the repair's re-solves continue from); the oracle then
        only confirms that nothing is violated. The same LP, so the same optimal value. Where the
        complete LP is large (≥ 20 000 segment rows) and P′ also exists on the grid 2β, the start
        is only the groups next to those that bind on that grid (:func:`_start_complete`), and the
        oracle adds what is violated: still the optimum of the complete LP. Faster where Algorithm
        1's rounds of cuts cost many dual simplex pivots and end with a large part of the LP anyway
        (the 42-piece coordinate descent design of the ML chapters: 64 702 rows, about 4× faster
        than the rounds from the complete LP, about 4× faster again from the grid 2β's seed); much
        slower where the rounds converge on a small part of it (Figure 3's uniform pieces: 10–25 %
        of the rows); ``scripts/bench_dd_complete.py`` measures them.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Appendix C.3 (P′(π, β)), Algorithms 3 and G.1.
    """
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    centred = check_bool("centred", centred)
    atom = check_bool("atom", atom)
    complete = check_bool("complete", complete)
    if atom and problem.monotone:
        raise ValueError("atom=True is not available for monotone problems")
    if centred and problem.monotone:
        raise ValueError(
            "centred=True is not available for monotone problems (monotone in |x| about 0)"
        )
    # with centred cells a mirror-symmetric instance is solved over mirror-symmetric families (half
    # the LP)
    symmetric = centred and not DDBoundingLP._symmetry_obstacle(problem, partition, "upper")
    lp = DDBoundingLP(
        problem,
        partition,
        "upper",
        offset=-partition.beta / 2 if centred else 0.0,
        symmetric=symmetric,
        atom=atom,
    )
    if complete:
        _start_complete(lp, budget, tol)
    opts = _cp_defaults(lp)
    if budget.expired():
        raise TimeoutError(
            f"the upper bound ran out of the time limit of {time_limit:g} s while building the LP"
        )
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=budget.left(), **opts)
    if not res.converged:
        raise RuntimeError(
            f"Algorithm 1 stopped after {res.iterations} iterations ({res.seconds:.1f} s) with a "
            f"privacy shortfall of {res.max_shortfall:.3e}; no certified mechanism to release"
        )
    return release(
        _FamilyRelease(lp, cuts=cuts, tol=tol, opts=opts),
        res.x,
        budget,
        lp_value=res.objective,
        partition=partition,
        iterations=res.iterations,
        simplex_iterations=res.simplex_iterations,
        history=res.history,
    )


def _rounding_dominates(problem: Problem, columns: Partition, beta: float) -> bool:
    """Whether the rounding LP's objective (and cap rows) dominate those of the infimum LP column
    by column: c(iβ) − e_β ≥ inf_{[iβ, (i+1)β)} c for every loss involved (then, on their common
    feasible set, D′_R ≥ D′ and the latter need not be solved). Never for monotone problems (D′
    keeps the monotone rows)."""
    if problem.monotone:
        return False
    edges = columns.edges
    a, b = edges[:-1], edges[1:]
    for loss in problem.all_losses():
        e = loss.grid_interpolation_excess(beta)
        if np.any(np.asarray(loss(a), dtype=float) - e < loss.cell_infimum(a, b)) or e > 0:
            return False  # (a positive excess also lowers the tail column below D′'s)
    return True


def lower_bound(
    problem: Problem,
    partition: Partition,
    *,
    grouped: bool = False,
    coefficients: str | None = None,
    cuts: str = "shift",
    tol: float = 1e-9,
    time_limit: float | None = None,
) -> LowerBound:
    """A valid lower bound on P′ (a dual-feasible objective of D′_R(L, β) or D′(L, β), rounded
    down).

    Parameters
    ----------
    problem : the data-dependent problem P′.
    partition : the noise cells (uniform, width β).
    grouped : ``False``: a lower bound on P′ (one distribution per fine piece Φ_k(β), exact grid
        shifts, weights inf w; see :mod:`dpdro.data_dependent`). ``True``: a lower bound on the best
        mechanism constant on the problem's pieces.
    coefficients : ``"rounding"`` (D′_R, the randomized-rounding bound of the module docstring),
        ``"infimum"`` (D′ of Proposition 7 with the valid shift set), or ``None`` (default): D′_R
        where it applies (:meth:`Problem.rounding_excess`), and also D′ when D′_R does not dominate
        it column by column (e.g. ℓ2, whose excess β²/4 is subtracted, or monotone problems, whose
        monotonicity rows only D′ keeps); the larger valid bound is returned
        (:func:`dpdro.release.best_lower_bound`).
    cuts, tol : as for :func:`dpdro.lower_bound`.
    time_limit : bounds the whole call (LP construction included; each solve gets what is left).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Proposition 7 and Appendix C.3 (D′(π, β)).
    """
    if coefficients is not None:
        check_choice("coefficients", coefficients, ("rounding", "infimum"))
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    if coefficients is not None:
        kinds = [coefficients]
    elif problem.rounding_excess(partition.beta) is None:
        kinds = ["infimum"]
    else:
        # D′'s decision cells
        columns = partition.padded(problem.base_problem.shifts(partition.beta))
        dominates = _rounding_dominates(problem, columns, partition.beta)
        kinds = ["rounding"] if dominates else ["rounding", "infimum"]
    attempts = (
        partial(_lower_attempt, problem, partition, kind, grouped, cuts, tol) for kind in kinds
    )
    return best_lower_bound(attempts, budget)


def _lower_attempt(
    problem: Problem,
    partition: Partition,
    kind: str,
    grouped: bool,
    cuts: str,
    tol: float,
    budget: TimeBudget,
) -> LowerBound:
    """D′_R or D′ (``kind``) within the budget."""
    symmetric = not DDBoundingLP._symmetry_obstacle(problem, partition, "lower", kind, grouped)
    lp = DDBoundingLP(
        problem, partition, "lower", grouped=grouped, coefficients=kind, symmetric=symmetric
    )
    if budget.expired():
        raise TimeoutError(f"the lower bound ran out of the time limit of {budget.seconds:g} s")
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, time_limit=budget.left(), **_cp_defaults(lp))
    return LowerBound(
        value=lp.dual_bound(res.row_duals),
        lp_value=res.objective,
        seconds=budget.elapsed(),
        coefficients=kind,
        iterations=res.iterations,
        simplex_iterations=res.simplex_iterations,
        history=res.history,
        p=np.clip(lp.probabilities(res.x), 0.0, None),
        columns=lp.columns,
        core_offset=lp.table.core_offset,
        partition=partition,
        grouped=grouped,
    )


# ---------------------------------------------------------------------------- the output family
class _OutputRelease(ReleaseFamily):
    """The output family (:class:`OutputLP` in the upper mode ``mode``: "upper" on cells, "points"
    on the grid points) as a :class:`dpdro.release.ReleaseFamily`:
    the released object is a :class:`Mechanism` of kind "output" (clamped; the grid points as its
    ``grid_masses``, the two ends as its end cells), certified by :func:`privacy_profile`; the
    anchor without a solve is the constant law (0-DP)."""

    def __init__(self, lp: OutputLP, *, tol: float, mode: str = "upper"):
        self.lp, self.problem, self.tol, self.mode = lp, lp.problem, tol, mode
        self.lp.use(mode)
        # the exact costs of every piece (not the symmetrised ones of the LP), for the release
        self._costs = lp.full_costs(mode)

    def _mechanism(self, P: np.ndarray) -> Mechanism:
        lp, prob = self.lp, self.problem
        K, beta = lp.K, lp.beta
        P = np.clip(P, 0.0, None)
        P = P / P.sum(axis=1, keepdims=True)
        grid = None
        if self.mode == "points":  # the columns' grid points; 0 and K as the clamped end cells
            pc = point_columns(K)
            grid = np.zeros((lp.M, K - 1))
            for c in np.nonzero((pc > 0) & (pc < K))[0]:
                grid[:, pc[c] - 1] += P[:, c]
            P = P.copy()
            P[:, 1: K + 1] = 0.0
        edges = np.arange(-1, K + 2) * beta
        cells = P[:, : K + 2]
        mass = cells.sum(axis=1, keepdims=True)
        # a piece with all its mass on the query value and the grid points: any law, weight 0
        cells = np.where(mass > 0, cells / np.where(mass > 0, mass, 1.0), np.eye(1, K + 2))
        laws = [PiecewiseUniform(edges, cells[i], grid=beta) for i in range(lp.M)]
        return Mechanism(
            tuple(laws), np.array([prob.phi_lo]), prob.epsilon, prob.delta, prob.sensitivity,
            kind="output", query_atoms=P[:, K + 2], clamp=True, edge_ticks=lp.lam,
            edge_step=beta, grid_masses=grid,
        )

    def noise(self, x: np.ndarray) -> Mechanism:
        return self._mechanism(self.lp.probabilities(x))

    def solve(self, budget: TimeBudget) -> np.ndarray:
        return run_cutting_plane(self.lp, tol=self.tol, time_limit=budget.left(),
                                 **_cp_defaults(self.lp)).x

    def certify(self, mech: Mechanism) -> tuple[float, float]:
        prof = privacy_profile(mech.noises, mech.piece_edges, mech.epsilon, mech.sensitivity,
                               **mech._certificate_options())
        return prof.delta, prof.error_bound

    def mix(self, a: Mechanism, b: Mechanism, weight: float) -> Mechanism:
        return self._mechanism((1.0 - weight) * self._table(a) + weight * self._table(b))

    def _table(self, mech: Mechanism) -> np.ndarray:
        """The LP's (q_l(−1) … q_l(K), a_l) of a released mechanism (points mode: the grid point i
        in the first column of :func:`point_columns` that has it)."""
        a = mech.query_atoms[:, None]
        g = mech.grid_masses
        rest = 1.0 - a if g is None else np.clip(1.0 - a - g.sum(axis=1, keepdims=True), 0.0, None)
        table = np.hstack([rest * np.array([nz.probs for nz in mech.noises]), a])
        if g is not None:
            pc = point_columns(self.lp.K)
            first = [int(np.argmax(pc == i)) for i in range(1, self.lp.K)]
            table[:, first] += g
        return table

    def piece_losses(self, mech: Mechanism) -> np.ndarray:
        """The w-average loss over each piece (its share of the objective over its weight)."""
        return np.sum(self._costs * self._table(mech), axis=1) / self.lp.weights

    def expected_loss(self, mech: Mechanism) -> float:
        return float(np.sum(self._costs * self._table(mech)))

    def fallback_anchor(self):
        """The constant law on the cheapest output cell: 0-DP (every pair's δ is 0)."""
        if self.problem.cap is not None:
            return None
        costs = self._costs[:, : self.lp.K + 2].sum(axis=0)
        if self.mode == "points":
            costs[point_columns(self.lp.K) < 0] = np.inf  # fixed at 0
        j = int(np.argmin(costs))
        P = np.zeros((self.lp.M, self.lp.n_c))
        P[:, j] = 1.0
        return self._mechanism(P)

    def result(self, mech: Mechanism) -> dict:
        if self.problem.cap is not None:
            self._check_caps(mech)
        return dict(mechanism=mech, piece_losses=self.piece_losses(mech), weights=self.lp.weights)

    def _check_caps(self, mech: Mechanism) -> None:
        """The caps at the two ends of every piece, exactly (:meth:`OutputLP.cap_matrix`)."""
        table = self._table(mech)
        values = np.einsum("lpj,lj->lp", self.lp.cap_matrix(), table)
        if np.any(values > self.problem.cap):
            raise RuntimeError(
                f"released mechanism exceeds the cap {self.problem.cap:g} (max "
                f"{values.max():.12g}); solver tolerance too large"
            )


def _output_upper(lp: OutputLP, res, budget: TimeBudget, tol: float, mode: str) -> UpperBound:
    """Release the output family's LP point ``res.x`` in ``mode`` (Algorithm 1 converged)."""
    return release(
        _OutputRelease(lp, tol=tol, mode=mode), res.x, budget, lp_value=res.objective,
        iterations=res.iterations, simplex_iterations=res.simplex_iterations, history=res.history,
    )


def _output_lower(lp: OutputLP, res, budget: TimeBudget) -> LowerBound:
    """The clamped D′_R bound of the last relaxation solved (valid whether or not Algorithm 1
    converged)."""
    return LowerBound(
        value=lp.dual_bound(res.row_duals), lp_value=res.objective, seconds=budget.elapsed(),
        coefficients="rounding", iterations=res.iterations,
        simplex_iterations=res.simplex_iterations, history=res.history,
        p=lp.probabilities(res.x)[:, : lp.K + 2], grouped=False,
    )


def output_bounds(
    problem: Problem,
    beta: float,
    *,
    upper: bool = True,
    lower: bool = True,
    tol: float = 1e-9,
    time_limit: float | None = None,
    families=UPPER_MODES,
) -> tuple[LowerBound | None, UpperBound | None]:
    """The clamped D′_R lower bound and the output family's best certified mechanism on the grid β
    (on the output cells, and on the grid points), from one shared model
    (:mod:`dpdro.data_dependent.output`): Algorithm 1 on the lower bound's costs, then again from
    the same rows and basis on each upper bound's.

    Parameters
    ----------
    problem : the data-dependent problem P′ (losses non-increasing on (−∞, 0] and non-decreasing
        on [0, ∞); the upper bound also needs a uniform or piecewise-constant weight).
    beta : the grid: fine pieces and output cells of width β (β divides |Φ| and Δf).
    upper, lower : which bounds to compute (both share one model only without caps and with the
        fine pieces; otherwise each has its own).
    families : the upper modes to solve, of ``("upper", "points")`` (the output family on cells,
        on the grid points; the grid points take no caps).
    tol : the largest privacy shortfall accepted by Algorithm 1.
    time_limit : seconds for the whole call. When it runs out during the lower bound, the bound of
        the last relaxation solved is returned (valid, possibly weaker) and no upper bound;
        TimeoutError if not even the first relaxation was solved.

    Returns
    -------
    (LowerBound or None, UpperBound or None: the better of the families').

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 2 (problem P′), Section 3.2 and Appendix C.3.
    """
    budget = TimeBudget(check_optional_positive("time_limit", time_limit))
    return output_rounds(problem, beta, budget=budget, lower=lower, upper=lambda: upper, tol=tol,
                         families=families)


def output_rounds(
    problem: Problem,
    beta: float,
    *,
    budget: TimeBudget,
    lower: bool = True,
    upper=lambda: True,
    stall: float = 0.0,
    tol: float = 1e-9,
    on_lower=None,
    on_upper=None,
    pause=None,
    resume=lambda: True,
    families=UPPER_MODES,
) -> tuple[LowerBound | None, UpperBound | None]:
    """:func:`output_bounds` within ``budget``, for the driver.

    The lower bound's rounds of Algorithm 1 stop early once a round raises the bound by less than
    ``stall`` (relative; every relaxation gives a valid bound). ``pause(objective, predicted)``
    may pause them earlier, given the objective and the predicted raise of the next round (the
    last raise times the ratio of the last two): the upper bound is then solved first, and the
    lower bound's rounds resume afterwards from the same rows if ``resume()`` says so (the next
    round of a slowly converging relaxation can cost more than all the others together).
    ``on_lower`` receives the bound of every round as soon as it is known, and the rounds stop
    once ``resume()`` says no more is wanted; ``on_upper`` receives each upper bound; ``upper()``
    says, once the lower bound is known and after each family, whether an upper bound is still
    wanted. The families are solved in turn on one model (the grid points where the problem allows
    them), and the better certified mechanism is returned."""
    lb = ub = low = None
    paused = False

    def report(res) -> bool:
        nonlocal lb
        lb = _output_lower(low, res, budget)
        on_lower(lb)
        return not resume()

    rounds = partial(_lower_rounds, report=None if on_lower is None else report)
    if lower:
        low = OutputLP(problem, beta, "lower")
        res, paused = rounds(low, budget, stall, tol, pause)
        if on_lower is None:
            lb = _output_lower(low, res, budget)
    model = low
    for mode in families:
        if not upper() or budget.expired() or mode == "points" and output_obstacle(problem, mode):
            continue
        new, model = _output_upper_solve(problem, beta, model, budget, tol, mode)
        if new is not None and on_upper is not None:
            on_upper(new)
        if new is not None and (ub is None or new.value < ub.value):
            ub = new
    if paused and resume() and not budget.expired():
        low.use("lower")
        res, _ = rounds(low, budget, stall, tol, None, res)
        if on_lower is None:
            lb = _output_lower(low, res, budget)
    return lb, ub


def _output_upper_solve(problem, beta, lp, budget: TimeBudget, tol: float, mode: str):
    """The output family in the upper ``mode`` on the model ``lp`` where it has that mode (its rows
    serve every mode), on a model of its own otherwise: (the certified bound, ``None`` when it is
    not released in time; the model used)."""
    if lp is None or mode not in lp.modes:
        lp = OutputLP(problem, beta, mode)
    lp.use(mode)
    try:
        res = run_cutting_plane(lp, tol=tol, time_limit=budget.left(), **_cp_defaults(lp))
    except (TimeoutError, InfeasibleError):  # (no output family within the caps: the others try)
        return None, lp
    if not res.converged:
        return None, lp
    try:
        return _output_upper(lp, res, budget, tol, mode), lp
    except (ReleaseError, TimeoutError):
        return None, lp


def _lower_rounds(lp: OutputLP, budget: TimeBudget, stall: float, tol: float, pause=None,
                  res=None, report=None):
    """Rounds of Algorithm 1 (one per call of :func:`run_cutting_plane`, continuing ``res``) until
    it converges, the time is spent, a round raises the objective by less than ``stall`` relative
    to it, ``report(res)`` (given every round's result) says the bound is good enough, or
    ``pause`` says so (:func:`output_rounds`). Returns the last result and whether it was
    paused."""
    raises: list[float] = []
    while True:
        try:
            new = run_cutting_plane(lp, tol=tol, time_limit=budget.left(), max_iter=1,
                                    **_cp_defaults(lp))
        except TimeoutError:
            if res is None:
                raise
            return res, False
        if res is not None:  # one history for all the rounds
            new.history = res.history + [(len(res.history) + 1,) + h[1:] for h in new.history]
            new.iterations = res.iterations + new.iterations
            new.simplex_iterations = max(new.simplex_iterations, res.simplex_iterations)
            raises.append(new.objective - res.objective)
        res = new
        if report is not None and report(res):
            return res, False
        if res.converged or budget.expired():
            return res, False
        if raises and raises[-1] <= stall * abs(res.objective):
            return res, False
        if pause is not None and len(raises) >= 2 and raises[-2] > 0:
            if pause(res.objective, raises[-1] * max(0.0, raises[-1]) / raises[-2]):
                return res, True
