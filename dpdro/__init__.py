"""dpdro: optimal additive noise for (ε, δ)-differential privacy by distributionally robust
optimisation.

A reproducible companion to Selvi, Liu and Wiesemann, *Differential Privacy via Distributionally
Robust Optimization*. The upper bound P(π, β) releases a piecewise-uniform noise whose privacy is
certified exactly; the lower bound D(π, β) certifies how far from optimal it can be.

The data-dependent problem P′ lives in its own namespace with the same names
(``from dpdro import data_dependent as dd; dd.Problem(...)``), the literature mechanisms dpdro
compares against in :mod:`dpdro.mechanisms`. Practitioner tools: the exact secure sampler
(:class:`SecureSampler`), composition through a dominating pair (:mod:`dpdro.composition`, with
dp_accounting), the certified catalog (:mod:`dpdro.catalog`), adapters for OpenDP and diffprivlib
(:mod:`dpdro.integrations`) and the ``dpdro`` command line (:mod:`dpdro.cli`).
"""

from . import catalog, certificate, composition, data_dependent, mechanisms
from .bounds import LowerBound, UpperBound, lower_bound, upper_bound
from .losses import (
    CallableLoss,
    Loss,
    PiecewiseLinear,
    Pinball,
    PowerLoss,
    asymmetric_loss,
    make_loss,
)
from .noise import PiecewiseUniform
from .optimal import OptimalNoise, optimal_noise, relative_gap
from .oracle import Shortfall, max_privacy_shortfall
from .partition import Partition
from .privacy import PrivacyProfile, certify_delta, privacy_profile
from .problem import InfeasibleError, Problem
from .sampling import SecureSampler

__version__ = "0.1.0"

__all__ = [
    "CallableLoss",
    "InfeasibleError",
    "Loss",
    "LowerBound",
    "OptimalNoise",
    "Partition",
    "PiecewiseLinear",
    "PiecewiseUniform",
    "Pinball",
    "PowerLoss",
    "PrivacyProfile",
    "Problem",
    "SecureSampler",
    "Shortfall",
    "UpperBound",
    "asymmetric_loss",
    "catalog",
    "certificate",
    "certify_delta",
    "composition",
    "data_dependent",
    "lower_bound",
    "make_loss",
    "max_privacy_shortfall",
    "mechanisms",
    "optimal_noise",
    "privacy_profile",
    "relative_gap",
    "upper_bound",
]
