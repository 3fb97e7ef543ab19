r"""Algorithm 1: the cutting-plane method for the bounding problems, over one LP assembly.

Two kinds of cuts are available:

``cuts="event"`` (Algorithm 1 as written)
    each iteration adds the single constraint (φ*, A*) with maximum privacy shortfall found by
    Algorithm 2.

``cuts="shift"`` (the default, much faster)
    for a fixed shift φ the whole exponential family of constraints {(φ, A) : A ∈ F(L, β)} is
    equivalent to the linear system  t_q ≥ |q|·(p(j)/|Π_j| − e^ε p(j′)/|Π_j′|),  t_q ≥ 0,
    Σ_q t_q + Σ_{A_j} |A_j|·p(j)/|Π_j| ≤ δ  over the segments q of that shift (see
    :mod:`dpdro.oracle`), because max_A V(φ, A) is a sum of positive parts. Keeping only some of the
    segments q in the sum still gives a valid relaxation that dominates every single event cut on
    those segments. Each round adds the complete block for the ``full_per_round`` most violated
    shifts not yet in the LP, and for up to ``lazy_per_round`` further violated shifts only the
    segments of their current worst events. Full blocks make the method converge in a few rounds
    when few shifts bind (small ε); lazy segments keep the LP small when almost every shift binds
    with a small worst event (large ε). The relaxation is exact once every worst event is covered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_choice
from .problem import InfeasibleError

__all__ = ["CuttingPlaneResult", "run_cutting_plane"]


@dataclass
class CuttingPlaneResult:
    x: np.ndarray  # all LP columns (p first)
    objective: float
    row_duals: np.ndarray
    iterations: int
    seconds: float
    max_shortfall: float  # largest V(φ, A) − δ of the final p (<= tol unless stalled by tolerances)
    # False if stopped by max_iter or time_limit (the LP value is then only a lower bound)
    converged: bool
    # total over all re-solves: a machine-independent measure of the work done
    simplex_iterations: int
    history: list = field(default_factory=list)  # (iteration, objective, max shortfall, seconds)


def run_cutting_plane(
    lp,
    *,
    cuts: str = "shift",
    tol: float = 1e-9,
    max_iter: int = 100_000,
    time_limit: float | None = None,
    full_per_round: int = 2,
    lazy_per_round: int = 64,
    verbose: bool = False,
) -> CuttingPlaneResult:
    """Solve ``lp`` (a :class:`dpdro.lp.PrivacyLP`) by Algorithm 1.

    The relaxation starts from the cuts ``lp`` holds (usually none, S = ∅; all of them for
    ``dd.upper_bound(complete=True)``, whose first solve is by the interior-point method, so that
    the oracle only confirms the solution) and is re-solved warm after every round of cuts until no
    constraint has a shortfall above ``tol``, or until ``max_iter`` rounds or ``time_limit``
    seconds (then ``converged`` is False: the relaxation's value is a lower bound on the LP's, and
    its solution may violate privacy constraints). The time limit also bounds each
    solve: a re-solve that runs out of time is abandoned and the result is the last relaxation
    solved (its ``row_duals`` then cover only the rows that relaxation had). If the very first
    solve runs out of time there is no relaxation to return: ``TimeoutError``.

    Parameters
    ----------
    lp : the LP: its oracle (``shortfalls``, Algorithm 2) and its cuts (``add_shift_cut``,
        ``add_lazy_cuts``, ``add_event_cut``).
    cuts : ``"shift"`` (whole-shift cuts, module docstring) or ``"event"`` (Algorithm 1 as written).
    tol : the largest privacy shortfall accepted at convergence.
    max_iter : the most rounds.
    time_limit : seconds for the whole run (``None``: no limit).
    full_per_round, lazy_per_round : whole-shift cuts and lazy cuts added per round.
    verbose : print one line per round to standard output.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Algorithm 1, Observation 3, Algorithm 2 and Proposition 8,
       equation (9) and Lemma C.15 (the worst event of a shift).
    """
    check_choice("cuts", cuts, ("shift", "event"))
    t0 = time.perf_counter()
    history = []
    converged = False
    work = 0
    sol = None
    for it in range(1, max_iter + 1):
        remaining = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        new = lp.solve(remaining)
        work += new.iterations
        if new.status == "time_limit":
            if sol is None:
                raise TimeoutError(
                    f"the first LP solve ran out of the time limit of {time_limit:g} s"
                )
            break
        sol = new
        if sol.status == "infeasible":
            raise InfeasibleError(lp.infeasibility_message())
        values = lp.shortfalls(sol.x)
        worst = float(values.max())
        history.append((it, sol.objective, worst, time.perf_counter() - t0))
        if verbose:  # pragma: no cover
            print(f"iter {it:5d}  objective {sol.objective:.10g}  max shortfall {worst:.3e}")
        if worst <= tol:
            converged = True
            break
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            break
        if cuts == "shift":
            violated = np.nonzero(values > tol)[0]
            violated = violated[np.argsort(-values[violated])]
            full = [int(r) for r in violated if not lp.has_full_cut(int(r))][:full_per_round]
            lazy = [int(r) for r in violated if r not in full][:lazy_per_round]
            added = 0
            for r in full:
                added += lp.add_shift_cut(r)
                if time_limit is not None and time.perf_counter() - t0 > time_limit:
                    break
            added += lp.add_lazy_cuts(lazy, sol.x, None if time_limit is None else t0 + time_limit)
            # every violated segment is already in the LP: what remains is solver tolerance
            if added == 0:
                converged = True
                break
        else:
            r = int(np.argmax(values))
            if not lp.add_event_cut(r, sol.x):  # the same event again: solver tolerance
                converged = True
                break
    return CuttingPlaneResult(
        sol.x,
        sol.objective,
        sol.row_duals,
        it,
        time.perf_counter() - t0,
        worst,
        converged,
        work,
        history,
    )
