r"""Algorithms 3 and G.1: the constraint of P′(π, β) (or D′(π, β)) with maximum privacy
shortfall."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..oracle import event_intervals
from ..partition import Partition
from .lp import DDBoundingLP
from .problem import Problem

__all__ = ["Shortfall", "max_privacy_shortfall"]


@dataclass(frozen=True)
class Shortfall:
    """Output of Algorithm 3 / G.1: the pair of pieces (l, l′), shift φ*, worst event A* and V*."""

    pair: tuple[int, int]
    phi: float
    event: np.ndarray
    value: float  # V(φ*, A*) − δ: > 0 means violated
    by_group: np.ndarray  # the same for every constraint group (l, l′, s)
    groups: np.ndarray  # rows (l, l′, s) with s in units of β


def max_privacy_shortfall(
    problem: Problem, partition: Partition, probs, *, lower: bool = False, grouped: bool = False
) -> Shortfall:
    """Algorithm 3 (uniform pieces) / Algorithm G.1 (groupings λ): the constraint of P′(π, β) (or of
    D′(π, β) with ``lower=True``) with maximum privacy shortfall at the distributions ``probs``.
    Shares the segment tables with the LP.

    Parameters
    ----------
    problem : the data-dependent problem P′.
    partition : the noise cells.
    probs : one distribution per piece (per fine piece with ``lower=True``), shape
        (M, number of decision cells), with or without the last (tail or atom) column.
    lower : the constraints of D′(π, β) instead of P′(π, β).
    grouped : with ``lower=True``, those of the grouped lower bound (one distribution per piece).

    Returns
    -------
    Shortfall: the pair of pieces, the shift, the worst event and its privacy shortfall V − δ.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Algorithm 3 and Proposition 5 (fine pieces), Algorithm G.1
       (groupings) and Appendix C.3 (P′(π, β), D′(π, β)).
    """
    lp = DDBoundingLP(problem, partition, "lower" if lower else "upper", grouped=grouped)
    P = np.asarray(probs, dtype=float)
    if P.ndim != 2 or P.shape[0] != lp.M or P.shape[1] not in (lp.n_cells, lp.n_c):
        raise ValueError(f"probs must have shape ({lp.M}, {lp.n_cells}), got {P.shape}")
    if P.shape[1] != lp.n_c:
        P = np.concatenate((P, np.zeros((lp.M, lp.n_c - P.shape[1]))), axis=1)
    x = P.ravel()
    values = lp.worst_values(x) - problem.delta
    groups = np.column_stack((lp.t_l, lp.t_m, lp.table.shifts[lp.t_si]))
    if values.size == 0:
        return Shortfall((0, 0), 0.0, np.zeros((0, 2)), -problem.delta, values, groups)
    r = int(np.argmax(values))
    si = int(lp.t_si[r])
    contrib = lp.contributions(lp.densities(x), si, np.array([r]))[0]
    mask = np.zeros(lp.table.length.size, dtype=bool)
    mask[lp.table.offsets[si] : lp.table.offsets[si + 1]] = contrib > 0
    return Shortfall(
        (int(lp.t_l[r]), int(lp.t_m[r])),
        float(lp.table.shifts[si] * partition.beta),
        event_intervals(lp.table, mask, partition.beta),
        float(values[r]),
        values,
        groups,
    )
