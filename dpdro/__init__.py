"""dpdro: optimal additive noise for (ε, δ)-differential privacy by distributionally robust optimisation.

A reproducible companion to Selvi, Liu and Wiesemann, *Differential Privacy via Distributionally
Robust Optimization*. The upper bound P(π, β) releases a piecewise-uniform noise whose privacy is
certified exactly; the lower bound D(π, β) certifies how far from optimal it can be.
"""

from . import benchmarks, datasets, geo, ledger, related
from .bounds import BoundingLP, LowerBound, UpperBound, lower_bound, upper_bound
from .data_dependent import (DataDependentMechanism, DataDependentProblem, DDBoundingLP, DDLowerBound,
                             DDUpperBound, certify_family, coordinate_descent_loss, coordinate_descent_losses,
                             dd_lower_bound, dd_max_privacy_shortfall, dd_upper_bound, family_privacy_profile)
from .losses import CallableLoss, Loss, PiecewiseLinear, Pinball, PowerLoss, asymmetric_loss, make_loss
from .noise import PiecewiseUniform
from .optimal import OptimalNoise, optimal_noise
from .oracle import Shortfall, max_privacy_shortfall
from .partition import Partition
from .privacy import certify_delta, privacy_profile
from .problem import InfeasibleError, Problem

__version__ = "0.1.0"

__all__ = [
    "benchmarks",
    "datasets",
    "geo",
    "ledger",
    "related",
    "BoundingLP",
    "CallableLoss",
    "InfeasibleError",
    "Loss",
    "LowerBound",
    "Partition",
    "PiecewiseLinear",
    "PiecewiseUniform",
    "Pinball",
    "PowerLoss",
    "Problem",
    "Shortfall",
    "UpperBound",
    "asymmetric_loss",
    "certify_delta",
    "lower_bound",
    "make_loss",
    "max_privacy_shortfall",
    "optimal_noise",
    "OptimalNoise",
    "privacy_profile",
    "upper_bound",
    "DataDependentMechanism",
    "DataDependentProblem",
    "DDBoundingLP",
    "DDLowerBound",
    "DDUpperBound",
    "certify_family",
    "coordinate_descent_loss",
    "coordinate_descent_losses",
    "dd_lower_bound",
    "dd_max_privacy_shortfall",
    "dd_upper_bound",
    "family_privacy_profile",
]
