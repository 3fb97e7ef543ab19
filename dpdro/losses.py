r"""Loss functions c(x) and the per-cell coefficients of the bounding problems.

The upper bound P(π, β) uses the **cell average** c_j(π, β) = |Π_j|⁻¹ ∫_{Π_j} c(x) dx (Lemma 1,
Section 4.1) and the lower bound D(π, β) uses the **cell infimum** c̲_j(π, β) = inf{c(x) : x ∈ Π_j}
(Lemma 2). Both are computed in closed form for the built-in losses. The lower bound also needs the
infimum of c outside the padded support (constraints (15a) in the proof of Proposition 3), which the
paper drops because its losses are monotone on each side of the origin; :meth:`Loss.tail_infimum`
keeps the bound valid for every loss.

The randomized-rounding lower bound (``lower_bound(..., coefficients="rounding")``, see
:mod:`dpdro.bounds`) instead charges each grid point jβ the loss c(jβ) and subtracts once the
largest excess of the linear interpolation of c on the grid βℤ over c,
:meth:`Loss.grid_interpolation_excess`.

Every loss must satisfy Assumption 1 of the paper: c ≥ 0, continuous, and c(x) → ∞ as |x| → ∞.
The built-in losses do by construction; a callable is checked on a grid where a
:class:`dpdro.Problem` is made (:meth:`Loss.check_assumption_1`), and every reported lower bound
is at least 0 (:class:`dpdro.release.LowerBound`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import integrate, optimize

from ._rounding import UNIT_ROUNDOFF
from ._validation import check_positive, check_real

__all__ = [
    "Loss",
    "PowerLoss",
    "PiecewiseLinear",
    "Pinball",
    "CallableLoss",
    "asymmetric_loss",
    "make_loss",
]


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if np.any(~(b > a)):
        raise ValueError("cell endpoints must satisfy a < b")
    return a, b


class Loss:
    """Base class of loss functions c: ℝ → ℝ₊ satisfying Assumption 1.

    Subclasses implement :meth:`__call__`, :meth:`cell_average`, :meth:`cell_infimum` and
    :meth:`tail_infimum`. All methods are vectorised over arrays of cell endpoints ``a < b``.
    """

    name = "loss"
    symmetric = False  # c(x) = c(−x) for all x (known exactly; False when unknown)
    # d with c(λx) = λ^d·c(x) for every λ > 0 (known exactly; None when unknown): problem P then
    # scales exactly with Δf (X optimal for Δf = 1 gives Δf·X for Δf, at Δf^d times the loss)
    degree: float | None = None

    def __call__(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def cell_average(self, a, b) -> np.ndarray:
        """Average of c over each cell [a, b): the upper-bound coefficient c_j(π, β)."""
        raise NotImplementedError  # pragma: no cover

    def cell_infimum(self, a, b) -> np.ndarray:
        """Infimum of c over each cell [a, b): the lower-bound coefficient c̲_j(π, β)."""
        raise NotImplementedError  # pragma: no cover

    def tail_infimum(self, a: float, b: float) -> float:
        """Infimum of c over (−∞, a] ∪ [b, ∞), the region outside the padded support of D(π, β)."""
        raise NotImplementedError  # pragma: no cover

    def grid_interpolation_excess(self, beta: float, eta: float = 0.0) -> float | None:
        """An upper bound e_β(η) ≥ 0 on sup_x (Îc(x) − (1 + η)·c(x)), where Îc interpolates c
        linearly between the grid points of βℤ: with η = 0 the excess itself, with η > 0 the
        excess beyond a fraction η of the loss, finite for losses whose excess grows without bound
        but slower than c (|x|^k, k > 2). Since c ≥ 0, e_β(0) bounds e_β(η) for every η.

        ``None`` when no finite bound is known (the randomized-rounding lower bound then refuses
        the loss at that η).
        """
        return None

    def grid_excess_credit(self, beta: float, points) -> np.ndarray | None:
        """Per grid point i (an integer array ``points``), a credit 0 ≤ κ_i ≤ e_β − ê_i rounded
        down, where e_β = :meth:`grid_interpolation_excess` (η = 0) and ê_i ≥ the largest excess
        Îc − c on the two cells [(i − 1)β, iβ] and [iβ, (i + 1)β] next to i; ``None`` where no
        bound below e_β is known (the default).

        Why: the excess at x lies below ê_i and ê_{i+1} for x ∈ [iβ, (i + 1)β], so below
        Σ_j h_j(x)·ê_j with h_j(x) = P(Y = jβ | X = x) of the randomized rounding Y (two hats
        summing to 1 there), and E c(X) = E Îc(X) − E(Îc − c)(X) ≥ Σ_j q_j (c(jβ) − ê_j) for
        the law q of Y: D_R may charge a point c(jβ) + κ_j and subtract e_β as before
        (:mod:`dpdro.grid`), a tighter bound where the excess is largest near a kink of c and mass
        lies away from it."""
        return None

    def rounding_excess_curvature(self, beta: float) -> float | None:
        """κ with (Îc − c)((j + w)β) ≤ κ·w(1 − w) for every j ∈ ℤ and w ∈ [0, 1] (Îc as in
        :meth:`grid_interpolation_excess`): D_R then credits mass that the rounding moves little
        (:mod:`dpdro._excess_split`). ``None`` where no such κ is known (the default)."""
        return None

    def slope_bounds(self, a: float, b: float) -> tuple[float, float]:
        """Slopes (s, S) with s·(x − y) ≤ c(x) − c(y) ≤ S·(x − y) for all a ≤ y ≤ x ≤ b
        (−∞ ≤ a < b ≤ ∞): the infimum and supremum of c′ on [a, b] where they are known,
        (−∞, ∞) otherwise."""
        return -math.inf, math.inf

    def check_assumption_1(self, scale: float = 1.0) -> None:
        """A ``ValueError`` where c is seen to break what dpdro relies on at the length scale
        ``scale`` (the sensitivity Δf: :class:`dpdro.Problem` calls it); nothing for the built-in
        losses, which hold it by construction (:class:`CallableLoss` checks a grid)."""

    def __repr__(self) -> str:
        return f"<dpdro loss {self.name}>"


class _MonotoneSides(Loss):
    """A loss that is non-increasing on (−∞, 0] and non-decreasing on [0, ∞)."""

    def cell_infimum(self, a, b):
        a, b = _pair(a, b)
        return np.asarray(self(np.clip(0.0, a, b)), dtype=float)

    def tail_infimum(self, a, b):
        return float(min(self(min(float(a), 0.0)), self(max(float(b), 0.0))))


class PowerLoss(_MonotoneSides):
    r"""c(x) = |x|^k for k > 0; k = 1 is the ℓ1 loss (noise amplitude), k = 2 the ℓ2 loss (noise
    power).

    Every k > 0 is solved and certified; an expected loss beyond the floats (|x|^100 at ε = 1e-3)
    is refused by name. For k > 2 the lower bound charges the grid's interpolation excess, which
    grows like |x|^{k−2}: at k ≥ 40 it is loose (ε = 1, δ = 0.1, 5 s: k = 40 gap 6%, k = 60 no
    positive lower bound), while the released noise is as certified as for any loss.

    Parameters
    ----------
    k : the exponent, finite and > 0.
    name : the loss's name in messages and metadata (default ``|x|^k``).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Assumption 1 and Section 5.1.
    """

    symmetric = True

    def __init__(self, k: float = 1.0, *, name: str | None = None):
        self.k = check_positive("k", k)
        self.degree = self.k
        self.name = name or f"|x|^{self.k:g}"

    def __call__(self, x):
        with np.errstate(over="ignore"):  # ∞ beyond the floats, refused by name where used
            return np.abs(np.asarray(x, dtype=float)) ** self.k

    def cell_average(self, a, b):
        with np.errstate(over="ignore"):  # ∞ beyond the floats, refused by name where used
            return self._cell_average(*_pair(a, b))

    def _cell_average(self, a, b):
        k = self.k
        out = np.empty(np.broadcast(a, b).shape)
        a, b = np.broadcast_arrays(a, b)
        straddle = (a < 0) & (b > 0)
        # cells containing the origin: (|a|^{k+1} + b^{k+1}) / ((k+1)(b-a)), no cancellation
        out[straddle] = (np.abs(a[straddle]) ** (k + 1) + b[straddle] ** (k + 1)) / (
            (k + 1) * (b[straddle] - a[straddle])
        )
        # one-sided cells: hi^k (1 - r^{k+1}) / ((k+1)(1-r)) with r = lo/hi, evaluated via
        # expm1/log1p
        one = ~straddle
        lo = np.where(a[one] >= 0, a[one], -b[one])
        hi = np.where(a[one] >= 0, b[one], -a[one])
        d = (hi - lo) / hi  # = 1 - r in (0, 1]
        with np.errstate(divide="ignore"):
            ratio = np.where(d < 1.0, np.expm1((k + 1) * np.log1p(-d)) / (-d), 1.0)
        out[one] = hi**k * ratio / (k + 1)
        return out

    def slope_bounds(self, a, b):
        """From c′(x) = sign(x)·k|x|^{k−1}, monotone in |x| on each side of 0 (increasing for
        k ≥ 1, decreasing for k < 1, where c′ is unbounded at 0); (−∞, ∞) across 0 for k < 1."""
        k = self.k

        def slope(x):  # c′ on [0, ∞] as x → |x|, with 0^0 = 1 and ∞^(negative) = 0
            return k * x ** (k - 1) if x > 0 or k >= 1 else math.inf

        if a >= 0 or b <= 0:
            near, far = (a, b) if a >= 0 else (-b, -a)
            lo, hi = sorted((slope(near), slope(far)))
            return (lo, hi) if a >= 0 else (-hi, -lo)
        return (-slope(-a), slope(b)) if k >= 1 else (-math.inf, math.inf)

    def grid_interpolation_excess(self, beta, eta=0.0):
        """0 for k ≤ 1 (|x|^k is concave on each side of the grid point 0). For 1 < k ≤ 2, c''
        decreases in |x|, so the excess is largest on [0, β]: max_x β^{k−1}x − x^k at x =
        β·k^{−1/(k−1)}, which is β²/4 for k = 2 (the same bound for every η). For k > 2 the excess
        grows like |x|^{k−2} without bound: ``None`` for η = 0, and for η > 0 the bound of
        :func:`_power_excess_beyond` (``None`` where it is not finite)."""
        beta = check_positive("beta", beta)
        k = self.k
        if k <= 1:
            return 0.0
        if k > 2:
            eta = check_real("eta", eta)
            excess = math.inf if eta <= 0 else _power_excess_beyond(k, beta, eta)
            return excess if math.isfinite(excess) else None
        x = beta * k ** (-1.0 / (k - 1.0))
        return float(beta ** (k - 1) * x - x**k)

    def rounding_excess_curvature(self, beta):
        """β² for k = 2, whose excess on [jβ, (j + 1)β] is exactly β²·w(1 − w); ``None`` otherwise
        (unbounded c″ near 0 for k < 2, growing with |x| for k > 2)."""
        return check_positive("beta", beta) ** 2 if self.k == 2 else None

    def grid_excess_credit(self, beta, points):
        """For 1 < k < 2 (:meth:`Loss.grid_excess_credit`): c″(x) = k(k − 1)|x|^{k−2} decreases in
        |x|, so on a cell [jβ, (j + 1)β] with j ≥ 1 the excess of the chord is at most β²/8 times
        c″(jβ) = k(k − 1)/8·β^k·j^{k−2} (the interpolation error of a C² function), and by symmetry
        for j ≤ −2; the cells touching 0 have e_β. So ê_i = min(e_β, k(k − 1)/8·β^k·(|i| − 1)^{k−2})
        for |i| ≥ 2 and e_β otherwise (|x|^1.5: e_β = 0.148β^1.5, ê_i ≈ 0.094β^1.5/√(|i| − 1)).
        ``None`` otherwise (the excess is constant for k = 2 and 0 for k ≤ 1; k > 2 uses the
        allowances with η > 0)."""
        k = self.k
        if not 1.0 < k < 2.0:
            return None
        e = self.grid_interpolation_excess(beta)
        far = np.maximum(np.abs(np.asarray(points, dtype=float)) - 1.0, 0.0)
        with np.errstate(divide="ignore"):
            cell = k * (k - 1.0) / 8.0 * beta**k * far ** (k - 2.0) * (1.0 + 1e-12)
        credit = np.where(far >= 1.0, np.maximum(e * (1.0 - 1e-12) - cell, 0.0), 0.0)
        return credit * (1.0 - 1e-12)


def _power_excess_beyond(k: float, beta: float, eta: float) -> float:
    r"""An upper bound on sup_x (Îc(x) − (1 + η)|x|^k) for k > 2, η > 0 (:meth:`Loss.
    grid_interpolation_excess`), by symmetry over x ≥ 0; in units of β^k, so on the grid ℤ.

    On [j, j + 1] the chord minus (1 + η)x^k is concave, so its supremum is at the x where the
    slope of x^k times 1 + η equals the chord's: computed so for j ≤ 1024, with an allowance for
    the cancellation of the two terms. Beyond, the interpolation error of a C² convex function on
    the interval is at most 1/8 of the largest c'' there, k(k − 1)(j + 1)^{k−2}, and ηc(x) ≥ ηj^k,
    so the supremum there is at most f(j) = C(j + 1)^{k−2} − ηj^k, C = k(k − 1)/8, and over a run
    of integers [a, b] at most C(b + 1)^{k−2} − ηa^k: runs growing by 1/128 up to J. The ratio
    j^k/(j + 1)^{k−2} increases with j, so once f(j) ≤ 0 it stays so, and f(j) ≤ 0 for j ≥ J =
    √(C·2^{k−2}/η) (there (j + 1)^{k−2} ≤ (2j)^{k−2}). The bound is at least 0 (x = 0). Where a
    term that may be the supremum overflows the floats (large k) the bound is ∞, which
    :meth:`PowerLoss.grid_interpolation_excess` reports as ``None`` (no finite bound): an
    overflow never drops a term (inf − inf once came out as NaN and was skipped)."""
    c = k * (k - 1.0) / 8.0
    with np.errstate(over="ignore", invalid="ignore"):
        top = math.ceil(math.sqrt(c * 2.0 ** (k - 2.0) / eta)) + 1
        j = np.arange(0.0, min(top, 1024) + 1.0)
        slope = (j + 1.0) ** k - j**k
        x = np.clip((slope / ((1.0 + eta) * k)) ** (1.0 / (k - 1.0)), j, j + 1.0)
        chord = j**k + slope * (x - j)
        peak = chord - (1.0 + eta) * x**k + 8 * UNIT_ROUNDOFF * (chord + (1.0 + eta) * x**k)
        best = max(0.0, float(np.max(np.where(np.isnan(peak), np.inf, peak))))
        if top > 1024:
            ratio = 1.0 + 1.0 / 128.0
            n = math.ceil(math.log(top / 1024.0) / math.log(ratio)) + 1
            ends = np.unique(np.ceil(1024.0 * ratio ** np.arange(0, n + 1)))
            # the runs [a, b] of integers between consecutive ends, and the last end alone
            a, b = ends, np.append(ends[1:] - 1.0, ends[-1])
            f = c * (b + 1.0) ** (k - 2.0) - eta * a**k
            # both terms beyond the floats (inf − inf): the sign from their logarithms, with room
            logs = math.log(c) + (k - 2.0) * np.log(b + 1.0) - math.log(eta) - k * np.log(a)
            f = np.where(np.isnan(f), np.where(logs > -1e-6, np.inf, -np.inf), f)
            best = max(best, float(np.max(f)))
        return float(beta**k * best)


class PiecewiseLinear(Loss):
    """Continuous piecewise-linear loss through ``(knots, values)`` with linear tails.

    ``left_slope`` must be negative and ``right_slope`` positive (Assumption 1(b)), and the values
    non-negative, so that c ≥ 0 everywhere.

    Parameters
    ----------
    knots : increasing breakpoints x_1 < … < x_n.
    values : c(x_i) ≥ 0 at the knots.
    left_slope, right_slope : the slopes of the tails left of x_1 (< 0) and right of x_n (> 0).
    name : the loss's name in messages and metadata.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Assumption 1; the GitHub appendix (the asymmetric loss).
    """

    def __init__(
        self,
        knots,
        values,
        *,
        left_slope: float,
        right_slope: float,
        name: str = "piecewise linear",
    ):
        knots = np.asarray(knots, dtype=float)
        values = np.asarray(values, dtype=float)
        if knots.ndim != 1 or knots.size < 1 or knots.shape != values.shape:
            raise ValueError(
                "knots and values must be one-dimensional of equal length >= 1, got shapes "
                f"{knots.shape} and {values.shape}"
            )
        if not (np.all(np.isfinite(knots)) and np.all(np.isfinite(values))):
            raise ValueError("knots and values must be finite")
        if np.any(np.diff(knots) <= 0):
            raise ValueError(f"knots must be strictly increasing, got {knots.tolist()}")
        if np.any(values < 0):
            raise ValueError(f"values must be >= 0 (a loss is non-negative), got {values.tolist()}")
        ls = check_real("left_slope", left_slope)
        rs = check_real("right_slope", right_slope)
        if not (math.isfinite(ls) and ls < 0):
            raise ValueError(
                "left_slope must be finite and < 0 (Assumption 1(b): c → ∞ as x → −∞), got "
                f"{left_slope!r}"
            )
        if not (math.isfinite(rs) and rs > 0):
            raise ValueError(
                "right_slope must be finite and > 0 (Assumption 1(b): c → ∞ as x → ∞), got "
                f"{right_slope!r}"
            )
        self.knots, self.values = knots, values
        self.left_slope, self.right_slope = ls, rs
        self.name = name
        pts = np.union1d(knots, -knots)  # c is linear between these points and beyond them
        self.symmetric = bool(ls == -rs and np.array_equal(self(pts), self(-pts)))
        # positively homogeneous of degree 1 exactly when its only knot is (0, 0)
        self.degree = 1.0 if np.all(knots == 0.0) and np.all(values == 0.0) else None

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        inner = np.interp(x, self.knots, self.values)
        left = self.values[0] + self.left_slope * (x - self.knots[0])
        right = self.values[-1] + self.right_slope * (x - self.knots[-1])
        return np.where(x < self.knots[0], left, np.where(x > self.knots[-1], right, inner))

    def cell_average(self, a, b):
        a, b = _pair(a, b)
        a, b = np.broadcast_arrays(a, b)
        # exact on cells without interior knots
        out = np.asarray(self(0.5 * (a + b)), dtype=float).copy()
        has_knot = np.zeros(a.shape, dtype=bool)
        for t in self.knots:
            has_knot |= (a < t) & (t < b)
        for idx in zip(*np.nonzero(has_knot), strict=False):
            lo, hi = float(a[idx]), float(b[idx])
            pts = np.concatenate(([lo], self.knots[(self.knots > lo) & (self.knots < hi)], [hi]))
            vals = self(pts)
            out[idx] = float(np.sum(0.5 * (vals[1:] + vals[:-1]) * np.diff(pts)) / (hi - lo))
        return out

    def cell_infimum(self, a, b):
        a, b = _pair(a, b)
        out = np.minimum(self(a), self(b))
        for t, v in zip(self.knots, self.values, strict=False):
            out = np.where((a <= t) & (t <= b), np.minimum(out, v), out)
        return out

    def grid_interpolation_excess(self, beta, eta=0.0):
        """Exact for η = 0 (and a bound for every η): Îc − c is piecewise linear, 0 at the grid
        points and linear beyond the outer knots, so its supremum is attained at a knot."""
        beta = check_positive("beta", beta)
        lo = np.floor(self.knots / beta) * beta
        hi = lo + beta
        interp = self(lo) + (self(hi) - self(lo)) * (self.knots - lo) / beta
        return float(max(0.0, np.max(interp - self.values)))

    def slope_bounds(self, a, b):
        """The least and the greatest slope of the pieces that meet [a, b] (c is their
        concatenation)."""
        ends = np.concatenate(([-math.inf], self.knots, [math.inf]))
        slopes = np.concatenate(
            ([self.left_slope], np.diff(self.values) / np.diff(self.knots), [self.right_slope])
        )
        meet = slopes[(ends[1:] > a) & (ends[:-1] < b)]
        return float(np.min(meet)), float(np.max(meet))

    def tail_infimum(self, a, b):
        left = min(
            [float(self(a))]
            + [float(v) for t, v in zip(self.knots, self.values, strict=False) if t <= a]
        )
        right = min(
            [float(self(b))]
            + [float(v) for t, v in zip(self.knots, self.values, strict=False) if t >= b]
        )
        return min(left, right)


class Pinball(PiecewiseLinear):
    r"""Pinball (quantile) loss ρ_τ(x) = τ·x for x ≥ 0 and (τ − 1)·x for x < 0, with 0 < τ < 1.

    Parameters
    ----------
    tau : the quantile level τ in (0, 1).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Assumption 1 (a loss it admits beyond ℓ1 and ℓ2).
    .. [2] R. Koenker and G. Bassett, "Regression quantiles", Econometrica 46(1), 1978.
    """

    def __init__(self, tau: float):
        tau = check_real("tau", tau)
        if not (0.0 < tau < 1.0):
            raise ValueError(f"tau must lie in the open interval (0, 1), got {tau!r}")
        self.tau = tau
        super().__init__(
            [0.0], [0.0], left_slope=tau - 1.0, right_slope=tau, name=f"pinball(τ={tau:g})"
        )


def asymmetric_loss() -> PiecewiseLinear:
    """The GitHub appendix's asymmetric loss c(x) = |x| + 1[x > 0]·|x| (slopes −1 and 2)."""
    return PiecewiseLinear(
        [0.0], [0.0], left_slope=-1.0, right_slope=2.0, name="asymmetric |x| + 1[x>0]|x|"
    )


# quad's tolerances for the cell integrals of a CallableLoss
_ABS_TOL, _REL_TOL = 1e-14, 1e-12
# the 15-point Kronrod rule on [−1, 1] (nodes ±x, weights w) and the 7-point Gauss rule on its
# nodes with odd index (QUADPACK's qk15)
_GK15_X = np.array([
    0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
    0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
    0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
    0.207784955007898467600689403773245, 0.0,
])
_GK15_W = np.array([
    0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
    0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
    0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
    0.204432940075298892414161999234649, 0.209482141084727828012999174891714,
])
_G7_W = np.array([
    0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
    0.381830050505118944950369775488975, 0.417959183673469387755102040816327,
])


def _gauss_kronrod_15(c, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∫_a^b c and |K15 − G7| on every cell [a, b] at once (c vectorised)."""
    centre, half = 0.5 * (a + b), 0.5 * (b - a)
    x = np.concatenate((-_GK15_X[:-1], _GK15_X[::-1]))  # the 15 nodes
    vals = c(centre[..., None] + half[..., None] * x)
    left, right = vals[..., :7], vals[..., 8:][..., ::-1]  # f(c − h x_i), f(c + h x_i), i = 0..6
    kronrod = (left + right) @ _GK15_W[:-1] + vals[..., 7] * _GK15_W[-1]
    gauss = (left[..., 1::2] + right[..., 1::2]) @ _G7_W[:-1] + vals[..., 7] * _G7_W[-1]
    return half * kronrod, np.abs(half * (kronrod - gauss))


class CallableLoss(Loss):
    """Any callable c(x) satisfying Assumption 1.

    Cell averages are integrals plus an error estimate, so they err upwards as an upper-bound
    coefficient should: the 15-point Gauss–Kronrod rule on all cells at once, with |K15 − G7| as the
    estimate, where that estimate meets adaptive quadrature's tolerances, and
    ``scipy.integrate.quad`` with its estimate on the other cells (kinks, jumps, steep parts). Cell
    infima are the minimum of c on a grid of ``n_samples`` points per cell, refined by a bounded
    scalar minimisation; pass ``lipschitz`` (a Lipschitz constant of c on the support) to make them
    rigorous: the grid minimum minus ``lipschitz`` × half the grid spacing. Outside the padded
    support dpdro assumes c is non-increasing on (−∞, 0] and non-decreasing on [0, ∞) (the
    monotonicity the paper's proof of Proposition 3 uses); a loss without it must pass
    ``tail_infimum(a, b)``, the infimum of c over (−∞, a] ∪ [b, ∞). :meth:`check_assumption_1`
    checks this and c ≥ 0 on a grid, at construction (around the scale 1) and again when a
    :class:`dpdro.Problem` is made (around the scale of its sensitivity Δf).

    Parameters
    ----------
    func : c(x), vectorised or not, with values ≥ 0.
    name : the loss's name in messages and metadata.
    lipschitz : a Lipschitz constant of c on the support (makes the cell infima rigorous).
    tail_infimum : ``(a, b) ↦ inf of c over (−∞, a] ∪ [b, ∞)``, for losses not monotone on each
        side of 0.
    n_samples : grid points per cell for the infima.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Assumption 1, Proposition 3 and its proof (the cell infima
       of D(L, β) and the tails beyond the padding).
    """

    def __init__(
        self,
        func: Callable,
        *,
        name: str | None = None,
        lipschitz: float | None = None,
        tail_infimum: Callable[[float, float], float] | None = None,
        n_samples: int = 33,
    ):
        if not callable(func):
            raise TypeError(f"func must be callable, got {func!r}")
        self.func = func
        self.name = name or getattr(func, "__name__", "callable")
        self.lipschitz = None if lipschitz is None else check_positive("lipschitz", lipschitz)
        self.n_samples = int(n_samples)
        self._tail = tail_infimum
        self.check_assumption_1()

    def check_assumption_1(self, scale: float = 1.0) -> None:
        """What dpdro relies on, checked at 0 and ±``scale``·10^{−6…6} (241 points a side): c finite
        and ≥ 0 there (Assumption 1: c maps into ℝ₊; finite LP coefficients, and lower bounds
        raised to 0, :class:`dpdro.release.LowerBound`), and, unless ``tail_infimum`` was given,
        non-increasing on (−∞, 0] and non-decreasing on [0, ∞), hence least at 0 (the default
        :meth:`tail_infimum` outside the bounds' window). A ``ValueError`` names the first point
        where c is negative or not finite. Not checkable on points: continuity (Assumption 1(a)),
        on which the sampled :meth:`cell_infimum` relies unless ``lipschitz`` is given."""
        side = scale * np.geomspace(1e-6, 1e6, 241)
        grid = np.concatenate((-side[::-1], [0.0], side))
        vals = self(grid)
        bad = ~(np.isfinite(vals) & (vals >= 0))
        if np.any(bad):
            i = int(np.argmax(bad))
            raise ValueError(
                f"loss {self.name!r} must be finite and >= 0 (Assumption 1), got "
                f"c({grid[i]:.6g}) = {float(vals[i])!r}"
            )
        if self._tail is not None:
            return
        tol = 1e-12 * np.maximum(1.0, np.abs(vals))
        n = side.size
        rises = np.nonzero(np.diff(vals[: n + 1]) > tol[1 : n + 1])[0]  # left of 0
        falls = np.nonzero(np.diff(vals[n:]) < -tol[n + 1 :])[0] + n  # right of 0
        if rises.size or falls.size:
            raise ValueError(
                f"loss {self.name!r} is not non-increasing on (-inf, 0] and non-decreasing on "
                "[0, inf); pass tail_infimum=lambda a, b: inf of c over (-inf, a] and [b, inf) so "
                "the lower bound stays valid"
            )

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        try:
            out = np.asarray(self.func(x), dtype=float)
            if out.shape != x.shape:
                raise ValueError
        except Exception:
            out = np.vectorize(lambda t: float(self.func(float(t))), otypes=[float])(x)
        return out

    def cell_average(self, a, b):
        a, b = _pair(a, b)
        a, b = np.broadcast_arrays(a, b)
        shape, a, b = a.shape, a.ravel(), b.ravel()
        # every cell at once by the 15-point Gauss–Kronrod rule; |K15 − G7| is its error estimate
        # (stricter than QUADPACK's, which scales it down), accepted under quad's tolerances below
        # and added; the other cells (kinks, steep parts) by adaptive quadrature as before
        integral, err = _gauss_kronrod_15(self, a, b)
        rough = ~(err <= np.maximum(_ABS_TOL, _REL_TOL * np.abs(integral)))

        def f(t):
            return float(self.func(t))

        for i in np.nonzero(rough)[0]:
            integral[i], err[i] = integrate.quad(
                f, float(a[i]), float(b[i]), epsabs=_ABS_TOL, epsrel=_REL_TOL, limit=200
            )
        return ((integral + err) / (b - a)).reshape(shape)

    def cell_infimum(self, a, b):
        a, b = _pair(a, b)
        a, b = np.broadcast_arrays(a, b)
        t = np.linspace(0.0, 1.0, self.n_samples)
        pts = a[..., None] + (b - a)[..., None] * t
        vals = self(pts)
        best = vals.min(axis=-1)
        if self.lipschitz is not None:
            # c ≥ 0
            return np.maximum(best - self.lipschitz * 0.5 * (b - a) / (self.n_samples - 1), 0.0)
        out = best.copy()
        arg = vals.argmin(axis=-1)
        for idx in np.ndindex(a.shape):
            h = (b[idx] - a[idx]) / (self.n_samples - 1)
            c = pts[idx + (arg[idx],)]
            lo, hi = max(a[idx], c - h), min(b[idx], c + h)
            if hi > lo:
                res = optimize.minimize_scalar(
                    lambda s: float(self.func(s)),
                    bounds=(lo, hi),
                    method="bounded",
                    options={"xatol": 1e-12 * max(1.0, abs(c))},
                )
                out[idx] = min(out[idx], float(res.fun))
        return out

    @property
    def custom_tail(self) -> bool:
        """Whether ``tail_infimum`` was given: c need not grow away from 0."""
        return self._tail is not None

    def tail_infimum(self, a, b):
        if self._tail is not None:
            return float(self._tail(float(a), float(b)))
        return float(min(self(min(float(a), 0.0)), self(max(float(b), 0.0))))


def make_loss(spec) -> Loss:
    """Turn ``"l1"``, ``"l2"``, a :class:`Loss` or a callable c(x) into a :class:`Loss`.

    Parameters
    ----------
    spec : ``"l1"`` (|x|, the noise amplitude), ``"l2"`` (x², the noise power), a :class:`Loss`
        (returned as is) or a callable c(x) (a :class:`CallableLoss`).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Assumption 1 (the losses the method admits) and Section 5.1
       (the ℓ1 and ℓ2 losses of the experiments).
    """
    if isinstance(spec, Loss):
        return spec
    if isinstance(spec, type):  # a class is callable, but not a loss (PowerLoss for PowerLoss(2))
        raise TypeError(
            f"loss must be 'l1', 'l2', a dpdro.Loss or a callable c(x), got the class "
            f"{spec.__name__}; pass an instance, e.g. {spec.__name__}(...)"
        )
    if isinstance(spec, str):
        key = spec.lower().replace("ℓ", "l")
        if key in ("l1", "abs", "absolute"):
            return PowerLoss(1.0, name="l1")
        if key in ("l2", "square", "squared"):
            return PowerLoss(2.0, name="l2")
        raise ValueError(
            f"loss must be 'l1', 'l2', a dpdro.Loss or a callable c(x), got the string {spec!r}"
        )
    if callable(spec):
        return CallableLoss(spec)
    raise TypeError(
        f"loss must be 'l1', 'l2', a dpdro.Loss or a callable c(x), got {spec!r} of type "
        f"{type(spec).__name__}"
    )
