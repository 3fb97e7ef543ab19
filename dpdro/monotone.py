r"""Monotone noise: densities non-increasing in |x| away from 0 (the ``monotone=True`` option).

A distribution is *monotone* if its density is non-decreasing on (−∞, 0) and non-increasing on
(0, ∞) (an atom at 0 is allowed in the limit). This is the shape of every classical mechanism
(Laplace, Gaussian, truncated Laplace, staircase); the GitHub appendix shows it is not without loss
of generality. Both bounding problems get linear constraints on the cell densities q_j = p_j/|Π_j|.

Upper bound P(π, β) (a restriction: every feasible p is a monotone density)
    for consecutive cells j, j+1 with common edge e:  q_{j+1} ≤ q_j if e > 0,  q_j ≤ q_{j+1} if e <
    0, and nothing if e = 0. A cell straddling 0 is therefore the peak.

Lower bound D(π, β) (must stay a *relaxation* of the monotone problem)
    D's primal variables are the masses p_j = γ(Π_j) of the (padded) cells. For a monotone γ and two
    consecutive cells [a, b), [b, c) with a ≥ 0, the average of a non-increasing function over
    [a, b) is at least its value just left of b, which is at least its average over [b, c) (an atom
    at 0 only raises the first cell). Hence q_{j+1} ≤ q_j holds for cells lying entirely in [0, ∞),
    and symmetrically q_j ≤ q_{j+1} for cells entirely in (−∞, 0]. A cell *straddling* 0 need not
    carry the largest average (e.g. density 1 on [−1, 0) and 0 on [0, 1) gives the cell [−½, ½) the
    average ½ < 1 of its left neighbour), so D imposes no constraint involving a straddling cell,
    and none involving the tail column (mass outside the padded support). With these constraints
    every monotone γ maps to a feasible point of D with no larger cost, so D stays a valid lower
    bound of the monotone problem; the dual-feasible point of
    :meth:`dpdro.bounds.BoundingLP.dual_bound` accounts for the extra rows (their right-hand side
    is 0, so they add no δ-penalty).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .noise import PiecewiseUniform

__all__ = ["monotone_matrix", "monotone_noise", "is_monotone"]


def monotone_matrix(
    ticks, *, lower: bool, n_cols: int | None = None, col_offset: int = 0
) -> sp.csr_matrix:
    """Rows ``M @ p ≤ 0`` expressing monotonicity of the densities on cells with integer edges
    ``ticks``.

    ``lower=True`` gives the weaker constraint set that keeps the lower bound valid (see the module
    docstring). Columns ``col_offset … col_offset + len(ticks) − 2`` hold the cell masses;
    ``n_cols`` is the total number of columns of the matrix.
    """
    t = np.asarray(ticks, dtype=np.int64)
    w = np.diff(t).astype(float)
    n = w.size
    n_cols = n + col_offset if n_cols is None else int(n_cols)
    j = np.arange(n - 1)
    e = t[1:-1]  # edge between cells j and j+1
    right = e > 0  # q_{j+1} - q_j <= 0
    left = e < 0  # q_j - q_{j+1} <= 0
    if lower:
        right &= t[j] >= 0
        left &= t[j + 2] <= 0
    jr, jl = j[right], j[left]
    n_r = jr.size + jl.size
    rows = np.arange(n_r)
    outer = np.concatenate((jr + 1, jl))  # cell farther from 0: coefficient +1/w
    inner = np.concatenate((jr, jl + 1))  # cell nearer to 0: coefficient −1/w
    data = np.concatenate((1.0 / w[outer], -1.0 / w[inner]))
    return sp.csr_matrix(
        (data, (np.concatenate((rows, rows)), np.concatenate((outer, inner)) + col_offset)),
        shape=(n_r, n_cols),
    )


def monotone_noise(noise: PiecewiseUniform) -> PiecewiseUniform:
    """The monotone noise closest in shape to ``noise``: running minima of the densities outward
    from 0 (removing solver-tolerance violations of the monotonicity rows), renormalised. Densities
    are scaled by a common factor, so the result is exactly monotone up to the rounding of one
    division."""
    e = noise.edges
    q = noise.densities.copy()
    # cells with right edge > 0: the right chain starts at the first
    right = np.nonzero(e[1:] > 0)[0]
    if right.size:
        r0 = right[0]
        q[r0:] = np.minimum.accumulate(q[r0:])
    left = np.nonzero(e[:-1] < 0)[0]  # cells with left edge < 0
    if left.size:
        l0 = left[-1]
        q[: l0 + 1] = np.minimum.accumulate(q[: l0 + 1][::-1])[::-1]
    probs = q * noise.widths
    return PiecewiseUniform(
        noise.edges, probs / probs.sum(), grid=noise.grid, metadata=dict(noise.metadata)
    )


def is_monotone(noise: PiecewiseUniform, rtol: float = 1e-12) -> bool:
    """Whether the density is non-increasing in |x| away from 0 (up to a relative ``rtol``)."""
    e, q = noise.edges, noise.densities
    tol = rtol * float(q.max())
    inner_edges = e[1:-1]
    d = np.diff(q)  # q_{j+1} − q_j
    ok_right = np.all(d[inner_edges > 0] <= tol)
    ok_left = np.all(d[inner_edges < 0] >= -tol)
    return bool(ok_right and ok_left)
