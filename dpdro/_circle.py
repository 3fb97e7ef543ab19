r"""The least mean fractional part of a private noise, seen on a circle of n cells: a certified
lower bound for :meth:`dpdro.Problem.floor_rounding_gain`, which adds back what the floor rounding
drops.

For a noise X and a step β let W = X/β − ⌊X/β⌋ ∈ [0, 1), V = ⌊nW⌋ ∈ ℤ_n its cell on a circle of n
cells and F = nW − V, so that E W = E V/n + E F/n.

* Shifting X by jβ/n (j = 1, …, n − 1; at most β ≤ Δf) moves V by j modulo n, so the law p of V
  satisfies, for every such j, Σ_i (p_i − e^ε·p_{i−j})_+ ≤ δ (indices modulo n; the event
  {V ∈ T} of X + jβ/n is {V ∈ T − j} of X). Hence E V/n ≥ V_n, the least Σ_i p_i·i/n over such
  laws (a small LP, :func:`discrete_bound`).
* Shifting X by tβ/n moves F by t modulo 1, so F's law satisfies the circle argument of
  :meth:`dpdro.Problem.floor_rounding_gain`: E F ≥ w(ε, δ)
  (:func:`dpdro.problem.fractional_part_bound`).

So E W ≥ V_n + w/n. Against w alone: w bounds P(W < u) level by level, which allows an atom δ at 0
and all the other mass just above it; the LP also sees that the density can vary by at most e^ε
around the circle. Its optimum is close to the mass δ at 0 and a density e^ε times higher on
[0, a) than on [a, 1), a = 1/(1 + e^{ε/2}), whose mean is (1 − δ)·a (measured, n = 64: 0.245 at
ε = 0.558, δ = 0.42, where w = 0.148; 0.061 at ε = 0.198, δ = 0.87, w = 0.008; 0.099 at ε = 4.24,
δ = 1e-5, w = 0.048).

Certificate (weak duality, valid for any duals): for y_{j,i} ≥ 0 and every such law p,
Σ_i p_i·i/n ≥ min_i (i/n + Σ_j y_{j,i} − e^ε·Σ_j y_{j,i+j}) − δ·Σ_j max_i y_{j,i}: add
Σ_{j,i} y_{j,i}·(p_i − e^ε p_{i−j}) ≤ Σ_j max_i y_{j,i}·Σ_i (p_i − e^ε p_{i−j})_+
≤ δ·Σ_j max_i y_{j,i} and use Σ_i p_i = 1. The duals are the LP's; the bound is evaluated in
floating point less a bound on its rounding errors, with e^ε and δ as given (upper bounds: larger
ones only relax).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ._rounding import UNIT_ROUNDOFF as _U

__all__ = ["CELLS", "discrete_bound"]

CELLS = 32  # n: its LP (1,023 rows) takes about 15 ms; n = 64 up to 0.25 s for about 0.005 more


@functools.lru_cache(maxsize=1024)
def discrete_bound(exp_epsilon: float, delta: float, n: int = CELLS) -> float:
    """A certified lower bound on V_n (module docstring), ≤ 0 where the LP fails (e^ε beyond
    HiGHS's range, say): the caller keeps the larger of it and its other bounds."""
    m = n - 1
    rows = np.arange(m * n)
    shift = np.repeat(np.arange(1, n), n)
    cell = np.tile(np.arange(n), m)
    # columns: p (n), then a slack z_{j,i} per row p_i − e^ε p_{i−j} − z_{j,i} ≤ 0; Σ_i z_{j,i} ≤ δ
    segments = sp.csr_matrix(
        (
            np.concatenate((np.ones(rows.size), np.full(rows.size, -exp_epsilon),
                            -np.ones(rows.size))),
            (np.tile(rows, 3), np.concatenate((cell, (cell - shift) % n, n + rows))),
        ),
        shape=(rows.size, n + rows.size),
    )
    budgets = sp.csr_matrix(
        (np.ones(rows.size), (shift - 1, n + rows)), shape=(m, n + rows.size)
    )
    cost = np.concatenate((np.arange(n) / n, np.zeros(rows.size)))
    simplex = np.concatenate((np.ones(n), np.zeros(rows.size)))[None, :]
    try:
        res = linprog(cost, A_ub=sp.vstack((segments, budgets)).tocsr(),
                      b_ub=np.concatenate((np.zeros(rows.size), np.full(m, delta))),
                      A_eq=simplex, b_eq=[1.0], bounds=(0, None), method="highs")
    except ValueError:  # (coefficients HiGHS refuses)
        return 0.0
    if res.status != 0:
        return 0.0
    y = np.maximum(-np.asarray(res.ineqlin.marginals[: rows.size]), 0.0).reshape(m, n)
    return _certified(y, exp_epsilon, delta, n)


def _certified(y: np.ndarray, exp_epsilon: float, delta: float, n: int) -> float:
    """The weak-duality bound of the module docstring for the duals ``y`` (row j − 1: shift j),
    less a bound on its floating-point errors."""
    own = y.sum(axis=0)
    ahead = sum(np.roll(y[j - 1], -j) for j in range(1, n))  # Σ_j y_{j,i+j}
    terms = np.arange(n) / n + own - exp_epsilon * ahead
    budget = delta * float(y.max(axis=1).sum())
    scale = 1.0 + float(np.max(own + exp_epsilon * ahead)) + budget
    value = float(terms.min()) - budget - 4 * (n + 2) * _U * scale
    return value if np.isfinite(value) else 0.0
