r"""The data-independent noise optimisation problem P of Observation 1.

minimise ∫ c(x) dγ(x) over probability measures γ on ℝ subject to
γ(A) ≤ e^ε·γ(A − φ) + δ for all shifts φ ∈ [−Δf, Δf] and Borel events A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from . import _circle, _rounding
from ._validation import check_bool, check_open_unit, check_positive, integer_ratio
from .losses import Loss, make_loss
from .privacy import check_epsilon

__all__ = ["Problem", "InfeasibleError", "RelaxationInfeasibleError"]


class InfeasibleError(ValueError):
    """A bounding problem has no feasible point (e.g. a support too small for the requested (ε,
    δ))."""


class RelaxationInfeasibleError(InfeasibleError):
    """P itself is infeasible: a relaxation of it (a lower-bounding LP) has no feasible point, so
    no finer grid and no wider window can help."""

    @classmethod
    def of(cls, problem: Problem, where: str = "a relaxation of P") -> RelaxationInfeasibleError:
        """The error for ``problem`` (its support, ε, δ and Δf named), found by ``where``."""
        return cls(
            f"no noise supported in {problem.support} is ({problem.epsilon:g}, "
            f"{problem.delta:g})-DP at sensitivity {problem.sensitivity:g}: {where} is infeasible; "
            "widen the support"
        )


@dataclass(frozen=True)
class Problem:
    """An instance (ε, δ, Δf, c) of problem P.

    Parameters
    ----------
    epsilon : privacy parameter ε, finite, > 0 and at most 700 (e^ε a finite float,
        :func:`dpdro.privacy.check_epsilon`; optimal_noise designs up to 10).
    delta : privacy parameter δ in (0, 1).
    sensitivity : the global sensitivity Δf > 0 of the query.
    loss : ``"l1"``, ``"l2"``, a :class:`dpdro.Loss`, or a callable c(x) satisfying Assumption 1.
        A callable (:class:`dpdro.CallableLoss`) is checked at 0 and ±Δf·10^{−6…6}: finite, ≥ 0,
        and least at 0, non-increasing left of it and non-decreasing right of it unless it came
        with ``tail_infimum`` (:meth:`dpdro.CallableLoss.check_assumption_1`); otherwise a
        ``ValueError``.
    monotone : restrict the noise to densities non-increasing in |x| away from 0 (linear constraints
        in both bounding problems; see :mod:`dpdro.monotone` for why the lower bound stays valid).
    support : ``None`` (the noise may take any real value) or a closed interval ``(lo, hi)``, lo <
        hi, either end possibly infinite, to which the noise is confined (e.g. ``(-2s, 0)`` for
        one-sided noise that never loosens a private constraint). The upper bound then only uses
        cells inside [lo, hi]; the lower bound forbids mass in cells disjoint from [lo, hi] and
        charges partially covered cells the infimum of c over their intersection with it (see
        :mod:`dpdro.bounds`).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (problem P), Assumptions 1 (the loss) and 2
       (the query).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    loss: Loss | str = "l1"
    monotone: bool = False
    support: tuple[float, float] | None = None
    exp_epsilon: float = field(init=False, repr=False)

    def __init__(self, *, epsilon, delta, sensitivity=1.0, loss="l1", monotone=False, support=None):
        object.__setattr__(self, "epsilon", check_epsilon(epsilon))
        object.__setattr__(self, "delta", _check_delta(delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        object.__setattr__(self, "loss", make_loss(loss))
        self.loss.check_assumption_1(self.sensitivity)  # a callable, at the scale of Δf
        object.__setattr__(self, "monotone", check_bool("monotone", monotone))
        object.__setattr__(self, "support", _check_support(support))
        object.__setattr__(self, "exp_epsilon", math.exp(self.epsilon))

    def shifts(self, beta: float) -> int:
        """k = Δf/β, the number of grid steps in one sensitivity; raises unless β divides Δf."""
        return integer_ratio("beta", self.sensitivity, beta, what="the sensitivity Δf")

    def rounding_excess(self, beta: float) -> float | None:
        """e_β of the randomized-rounding lower bound on the grid βℤ, or ``None`` where it does not
        apply.

        e_β = sup_x (Îc − c)(x), Îc the linear interpolant of the loss on βℤ
        (:meth:`Loss.grid_interpolation_excess`: 0 for ℓ1, β²/4 for ℓ2, ``None`` without a finite
        bound). The rounding bound D_R (:mod:`dpdro.grid`) then bounds this problem without
        monotonicity (the rounded law of a monotone noise need not be monotone), a relaxation.
        """
        return self.loss.grid_interpolation_excess(beta)

    def rounding_allowances(self, beta: float) -> list[tuple[float, float]]:
        """The pairs (η, e_β(η)) with a finite bound e_β(η) ≥ sup_x (Îc − (1 + η)c)(x)
        (:meth:`Loss.grid_interpolation_excess`) for η = 0 and η = 10^{−10}, 10^{−9.75}, …, 10^{−1};
        empty where the randomized-rounding lower bound does not apply.

        For the law q of the rounded noise Y, E c(Y) = E Îc(X) ≤ (1 + η)·E c(X) + e_β(η), so a
        lower bound D on Σ_j q_j c(jβ) gives E c(X) ≥ (D − e_β(η))/(1 + η) for every such pair
        (:mod:`dpdro.grid`); η > 0 makes the bound second order in β for losses whose excess grows
        without bound (|x|^k, k > 2), where the cell infima lose a first-order β·c′/c.
        """
        try:
            return list(_allowances(self.loss, float(beta)))
        except TypeError:  # a loss that is not hashable (e.g. a dataclass with eq=True)
            return list(_allowances.__wrapped__(self.loss, float(beta)))

    def floor_rounding_gain(self, beta: float, exp_epsilon: float, delta: float) -> float:
        """A gain g ≥ 0 with E c(X) ≥ D + g for every feasible noise X, D a lower bound on
        Σ_j q_j c(jβ) over the laws q on βℤ that satisfy the grid rows (G) of :mod:`dpdro.grid`
        at (e^ε, δ) = (``exp_epsilon``, ``delta``) for the shifts ±β (for β ≤ Δf, P's own (ε, δ);
        for β = rΔf, group privacy's (rε, δ_r)). Positive only for a support on one side of 0
        on which the loss grows away from 0 at least at a slope s > 0
        (:meth:`Loss.slope_bounds`; ℓ1: s = 1): g = s·β·W̄ rounded down, W̄ ≥ w(ε, δ) the bound
        on E W of :func:`mean_fractional_part_bound`, with (:func:`fractional_part_bound`)

            w(ε, δ) = ((m + 1/c)·log(1 + cm) − m)/c,   c = e^ε − 1,  m = 1 − δ.

        Proof (support in [0, ∞); (−∞, 0] is its mirror image, with ⌈·⌉). Y = β⌊X/β⌋ ≥ 0
        commutes with grid shifts, so its law satisfies (G) and E c(Y) ≥ D, and c(X) ≥ c(Y) + s·βW
        for W = X/β − ⌊X/β⌋ ∈ [0, 1). W + t mod 1 is the W of a shift of X by at most β, so for
        every t ∈ [0, 1) the law μ of W on the circle [0, 1) satisfies μ(S) ≤ e^ε μ(S − t) +
        ν_t(S) with ν_t ≥ 0 of mass at most δ. For A = [0, u), B = [u, 1) and S = A ∩ (B + t),
        integrated over t: ∫ μ(A ∩ (B + t)) dt = |B|·μ(A) and ∫ μ((A − t) ∩ B) dt = |A|·μ(B), so
        (1 − u)·μ(A) ≤ e^ε·u·(1 − μ(A)) + δ, i.e. P(W < u) ≤ (e^ε u + δ)/(1 + cu), and
        E W = ∫₀¹ P(W ≥ u) du ≥ ∫₀^m (m − u)/(1 + cu) du = w(ε, δ). Without δ, w = ½ − ε/6 + O(ε²)
        against the least E W, ½ − ε/8 + O(ε²) (a density e^ε times higher on [0, ½) than on
        [½, 1)); at ε = 1.17, 0.31 against 0.36. The circle of n cells of :mod:`dpdro._circle`
        comes closer (W̄, at least w): at ε = 0.558, δ = 0.42, 0.245 against w = 0.148.

        The randomized rounding of D_R keeps E c(Y) = E c(X) for such losses and gives D alone,
        but the grid LP also admits the floor, which drops the fractional part: for one-sided ℓ1
        D lies about β/2 below P, and this gain takes back all but about βε/6 of it.
        """
        slope = self.floor_slope(beta)
        if not slope > 0.0:
            return 0.0
        gain = slope * beta * mean_fractional_part_bound(exp_epsilon, delta)
        return float(np.nextafter(gain * (1.0 - 1e-12), 0.0))

    def floor_slope(self, beta: float) -> float:
        """The least slope s of the loss away from 0 where the floor rounding onto βℤ can put the
        noise (:meth:`floor_rounding_gain`): on [max(0, lo − β), hi] for a support in [0, ∞), on
        the mirror image for one in (−∞, 0] (the ceiling); −∞ without such a support (or where the
        slope is not known)."""
        if self.support is None:
            return -math.inf
        lo, hi = self.support
        if lo >= 0.0:  # the floor lies in [max(0, lo − β), hi]
            return self.loss.slope_bounds(max(0.0, lo - beta), hi)[0]
        if hi <= 0.0:  # the ceiling, in [lo, min(0, hi + β)]
            return -self.loss.slope_bounds(lo, min(0.0, hi + beta))[1]
        return -math.inf

    def without_monotonicity(self) -> Problem:
        """The same problem without ``monotone`` (a relaxation: its optimum is at most this
        one's)."""
        return Problem(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
            loss=self.loss,
            support=self.support,
        )

    def at_sensitivity(self, sensitivity: float) -> Problem:
        """The same problem for the query (Δf′/Δf)·f, Δf′ = ``sensitivity`` > 0: the support
        multiplied by Δf′/Δf, the same ε, δ, loss and monotonicity. For a loss homogeneous of
        degree d (:attr:`Loss.degree`) X is feasible for this problem iff (Δf/Δf′)·X is for the
        original (the constraints of P scale with the shifts φ ∈ [−Δf, Δf]), at (Δf′/Δf)^d times
        the loss: the two have the same optimal noises up to that scaling, and their optimal
        values differ by that factor."""
        factor = sensitivity / self.sensitivity
        support = None if self.support is None else tuple(factor * v for v in self.support)
        return Problem(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=sensitivity,
            loss=self.loss,
            monotone=self.monotone,
            support=support,
        )

    def with_delta(self, delta: float) -> Problem:
        return Problem(
            epsilon=self.epsilon,
            delta=delta,
            sensitivity=self.sensitivity,
            loss=self.loss,
            monotone=self.monotone,
            support=self.support,
        )


def mean_fractional_part_bound(exp_epsilon: float, delta: float) -> float:
    """A certified lower bound on E W, W the fractional part of X/β for an (ε, δ)-DP noise X under
    shifts up to β: the larger of w(ε, δ) (:func:`fractional_part_bound`) and the bound of the
    circle of :data:`dpdro._circle.CELLS` cells, V_n + w/n (:mod:`dpdro._circle`; one-sided ℓ1,
    ε = 0.558, δ = 0.42, Δf = 1000: the call's gap 0.44% → 0.34%; ε = 0.198, δ = 0.87: 0.76% →
    0.46%; ε = 4.24, δ = 0.32: 0.47% → 0.44%; the asymmetric loss on (−∞, 0], ε = 2.55,
    δ = 0.038: 0.14% → 0.11%; one run each, 20 s)."""
    w = fractional_part_bound(exp_epsilon, delta)
    n = _circle.CELLS
    return max(w, _rounding.round_down(_circle.discrete_bound(exp_epsilon, delta) + w / n))


def fractional_part_bound(exp_epsilon: float, delta: float) -> float:
    """w = ∫₀^m (m − u)/(1 + cu) du = ((m + 1/c)·log(1 + cm) − m)/c, c = e^ε − 1 > 0, m = 1 − δ,
    rounded down (:meth:`Problem.floor_rounding_gain`): for cm < 1/8 the alternating series
    Σ_j (−c)^j m^{j+2}/((j + 1)(j + 2)) up to j = 9 (its first omitted term is positive, so the
    partial sum is below w), else the closed form less 16 roundoffs of its largest term."""
    c, m = exp_epsilon - 1.0, 1.0 - delta
    if m <= 0.0:
        return 0.0
    if c * m < 0.125:
        value = sum((-c) ** j * m ** (j + 2) / ((j + 1) * (j + 2)) for j in range(10))
        return max(0.0, value * (1.0 - 1e-14))
    big = (m + 1.0 / c) * math.log1p(c * m)
    return max(0.0, (big - m - 16 * np.finfo(float).eps * big) / c * (1.0 - 1e-14))


def _check_delta(delta) -> float:
    """δ in (0, 1); δ = 0 (pure ε-DP) is refused with a pointer to the staircase mechanism."""
    if isinstance(delta, (int, float)) and not isinstance(delta, bool) and delta == 0:
        raise ValueError(
            "delta must lie in the open interval (0, 1), got 0: for pure epsilon-DP (delta = 0) "
            "the staircase mechanism is optimal (Geng and Viswanath 2016), use "
            "dpdro.mechanisms.Staircase(epsilon=..., sensitivity=..., loss=...)"
        )
    return check_open_unit("delta", delta)


def _check_support(support) -> tuple[float, float] | None:
    """Validate ``Problem.support``: None or (lo, hi) with lo < hi, not NaN (ends may be ±inf);
    (−∞, ∞) is no restriction and becomes ``None`` (it had taken the support's slower paths:
    ℓ1 at ε = 1, δ = 1e-6 in 0.23 s against 0.05 s)."""
    if support is None:
        return None
    try:
        lo, hi = support
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError):
        raise TypeError(
            f"support must be None or a pair (lo, hi) of real numbers, got {support!r}"
        ) from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise ValueError(f"support must be an interval (lo, hi) with lo < hi, got {support!r}")
    return None if lo == -math.inf and hi == math.inf else (lo, hi)


@lru_cache(maxsize=256)
def _allowances(loss: Loss, beta: float) -> tuple[tuple[float, float], ...]:
    """:meth:`Problem.rounding_allowances`, once per loss and grid (37 bounds each, 3–4 ms for
    |x|³ or a piecewise-linear loss, asked for several times per lower-bound LP)."""
    etas = (0.0,) + tuple(10.0 ** (-q / 4.0) for q in range(4, 41))
    pairs = [(eta, loss.grid_interpolation_excess(beta, eta)) for eta in etas]
    return tuple((eta, float(e)) for eta, e in pairs if e is not None)
