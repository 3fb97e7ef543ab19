r"""The data-independent noise optimisation problem P of Observation 1.

minimise ∫ c(x) dγ(x) over probability measures γ on ℝ subject to
γ(A) ≤ e^ε·γ(A − φ) + δ for all shifts φ ∈ [−Δf, Δf] and Borel events A.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ._validation import check_open_unit, check_positive, integer_ratio
from .losses import Loss, make_loss

__all__ = ["Problem", "InfeasibleError"]


class InfeasibleError(ValueError):
    """A bounding problem has no feasible point (e.g. a support too small for the requested (ε, δ))."""


@dataclass(frozen=True)
class Problem:
    """An instance (ε, δ, Δf, c) of problem P.

    Parameters
    ----------
    epsilon : privacy parameter ε, finite and > 0.
    delta : privacy parameter δ in (0, 1).
    sensitivity : the global sensitivity Δf > 0 of the query.
    loss : ``"l1"``, ``"l2"``, a :class:`dpdro.Loss`, or a callable c(x) satisfying Assumption 1.
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    loss: Loss | str = "l1"
    exp_epsilon: float = field(init=False, repr=False)

    def __init__(self, *, epsilon, delta, sensitivity=1.0, loss="l1"):
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        object.__setattr__(self, "loss", make_loss(loss))
        object.__setattr__(self, "exp_epsilon", math.exp(self.epsilon))

    def shifts(self, beta: float) -> int:
        """k = Δf/β, the number of grid steps in one sensitivity; raises unless β divides Δf."""
        return integer_ratio("beta", self.sensitivity, beta, what="the sensitivity Δf")

    def truncated_laplace_half_width(self) -> float:
        """A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)), the support half-width of the truncated Laplace
        mechanism (Geng et al. 2020); a natural reference size for the support of optimal noise."""
        from .benchmarks import TruncatedLaplace

        return TruncatedLaplace(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity).half_width

    def with_delta(self, delta: float) -> "Problem":
        return Problem(epsilon=self.epsilon, delta=delta, sensitivity=self.sensitivity, loss=self.loss)
