r"""Where the rounded noise's mass came from: a credit on the randomized-rounding allowance of
D_R(k) (:mod:`dpdro.grid`) for losses whose interpolation excess is κ·w(1 − w) on every cell.

D_R(k) bounds E c(X) below by Σ_j q_j c(jβ) − e_β, q the law of the randomized rounding Y of X onto
βℤ (Y = jβ or (j + 1)β with probabilities 1 − W and W for X = (j + W)β). For ℓ2 the excess of Y over
X is exactly (Îc − c)(X) = κ·W(1 − W) with κ = β² (:meth:`dpdro.Loss.rounding_excess_curvature`),
and e_β = κ/4 charges every unit of mass the largest excess, that of W = ½. A point mass at a
grid point (W = 0: the atom at 0 of ℓ2 noise at large δ, 58% of the mass at ε = 5, δ = 0.75) has
none.

Split each grid cell C_j = [jβ, (j + 1)β)'s mass f_j = a_j + b_j into a_j = E[1 − W; X ∈ C_j] and
b_j = E[W; X ∈ C_j], the parts it sends to the points j and j + 1: q_j = a_j + b_{j−1}. By Jensen's
inequality (w(1 − w) is concave) the excess on C_j is at most κ·f_j·m(1 − m) = κ·a_j b_j / f_j for
m = b_j/f_j, so it falls short of κ f_j/4 by at least

    κ·(a_j − b_j)² / (4 f_j)  ≥  κ·( r(a_j − b_j)/2 − r²(a_j + b_j)/4 )   for every r ∈ [−1, 1]

(the right side is the tangent at (a_j − b_j)/f_j = r of the convex left side). So with
z_j ≥ 0 above the tangents for r ∈ :data:`TANGENTS`, E c(X) ≥ Σ_j q_j c(jβ) + κ·Σ_j z_j − κ/4 for
every split the rounding admits, and D_R may minimise over the split as well: a relaxation, still a
lower bound, that cannot charge a point's mass an excess unless a neighbouring point carries mass
too. Its LP value is never below D_R's (z = 0, any split). Measured for ℓ2 (certified bounds,
before → after): ε = 5, δ = 0.75, k = 99: 0.0071352 → 0.0071453, k = 159: 0.0071527 → 0.0071569
(the upper bound U(99) is 0.0071642); ε = 1, δ = 0.75, k = 8: 0.099686 → 0.100225; ε = 0.05,
δ = 0.75 on the coarse grid β = Δf: −0.0057 → 0.0594. Where the noise has no point mass nothing
changes but the rounding of the certificate (ε = 2, δ = 1e-4, k = 32: 5e-11 relative).

Only the cells near 0 (:data:`NEAR`) that lie between two points with variables are split; the
others keep κ/4. A symmetric LP (its columns q_|j|) splits the cells C_j, j ≥ 0, each standing for
itself and its mirror image, and an atom at 0 half into C_0 and half into C_{−1}, so q_0 = 2a_0.
The rows have exact coefficients (multiples of 1/64), so the LP stays an exact relaxation
(:func:`dpdro.lp.safe_lower_bound`). Not used with the floor rounding's gain, which bounds
Σ_j q_j c(jβ) itself (:meth:`dpdro.Problem.floor_rounding_gain`), nor with a per-point credit
(:meth:`dpdro.Loss.grid_excess_credit`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["NEAR", "TANGENTS", "add_excess_split"]

#: the cells split: those within this many grid steps of 0, where the atom of the noise lies (all
#: cells made the LPs 15–50% slower where the noise has no atom, for no gain there; measured at
#: ℓ2, ε = 1, δ = 0.75, k = 8, the bound of 4 steps equals that of all, and at ε = 5, δ = 0.75,
#: k = 99, 8 steps come within 2e-10 of it)
NEAR = 8
#: the slopes r of the tangent rows (r = ±1 is exact for a point mass; ±¼, ±½, ±¾ raise the bound
#: of ℓ2 at ε = 5, δ = 0.75, k = 99 from 0.0071438 to 0.0071453, 16 of them by 5e-9 more)
TANGENTS = tuple(s * i / 4 for i in (1, 2, 3, 4) for s in (1.0, -1.0))


def add_excess_split(lp, kappa: float) -> bool:
    """Add the split columns (a_j, b_j, z_j) of the cells within :data:`NEAR` grid steps of 0 and
    their rows to the lower-bound :class:`dpdro.grid.GridLP` ``lp``, the credit κ·z_j (twice that in
    a symmetric LP) in the objective; the caller subtracts κ/4 as the allowance (module docstring).
    Whether there was a cell to split (none where the support keeps the noise away from 0)."""
    v_lo, v_hi = lp.points
    first, last = (0 if lp.symmetric else max(v_lo, -NEAR)), min(v_hi, NEAR)
    n = last - first  # cells C_j, j = first … last − 1, between two points with variables
    if n <= 0:
        return False
    mult = 2.0 if lp.symmetric else 1.0
    a = lp.add_aux_cols(np.zeros(n), 1.0)
    b = lp.add_aux_cols(np.zeros(n), 1.0)
    z = lp.add_aux_cols(np.full(n, mult * kappa), 1.0)  # z ≤ (a − b)²/(4(a + b)) ≤ 1 at optimum
    cols = lp.model.n_cols
    # q_j − a_j − b_{j−1} = 0 between the first and the last point, ≥ 0 at those two (cells not
    # split feed them too); symmetric LP: q_0 − 2a_0 = 0
    pts = np.arange(first, last + 1)
    cells = pts - first  # the cell to the right of each point (index into a), n at the last point
    has_a, has_b = cells < n, cells > 0
    rows = [np.arange(pts.size), np.flatnonzero(has_a), np.flatnonzero(has_b)]
    entries = [lp.col(pts), a[cells[has_a]], b[cells[has_b] - 1]]
    a_coef = np.full(int(has_a.sum()), -1.0)
    equal = has_a & has_b
    if lp.symmetric:
        a_coef[0], equal[0] = -2.0, True
    link = sp.csr_matrix(
        (np.concatenate((np.ones(pts.size), a_coef, -np.ones(int(has_b.sum())))),
         (np.concatenate(rows), np.concatenate(entries))),
        shape=(pts.size, cols),
    )
    lp.add_fixed_rows(link, 0.0, np.where(equal, 0.0, np.inf))
    # z_j − (r/2)(a_j − b_j) + (r²/4)(a_j + b_j) ≥ 0 for every r
    r = np.repeat(np.asarray(TANGENTS), n)
    j = np.tile(np.arange(n), len(TANGENTS))
    m = r.size
    tangents = sp.csr_matrix(
        (np.concatenate((np.ones(m), -r / 2 + r * r / 4, r / 2 + r * r / 4)),
         (np.tile(np.arange(m), 3), np.concatenate((z[j], a[j], b[j])))),
        shape=(m, cols),
    )
    lp.add_fixed_rows(tangents, 0.0, np.inf)
    return True
