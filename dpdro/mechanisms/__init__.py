r"""Noise mechanisms from the literature that dpdro compares against, and the 'near optimal lower
bound'.

Selvi, Liu and Wiesemann compare their optimised noise with these mechanisms: Example 1 (Section 1)
quotes the noise standard deviations of the Laplace, Gaussian, analytic Gaussian and truncated
Laplace mechanisms; Section 5.1, Figure 3 and Tables 1 and 4–6 (Appendix D) use the analytic
Gaussian and truncated Laplace mechanisms as benchmark upper bounds and the 'near optimal lower
bound' (:func:`near_optimal_lower_bound`) as benchmark lower bound; Section 1 discusses the
staircase mechanism, the optimal pure-DP noise. :class:`Tulap` is the canonical noise distribution
of (ε, δ)-DP (Awan and Vadhan 2023; OpenDP's ``make_canonical_noise``), a baseline beyond the paper.

One module per family: :mod:`~dpdro.mechanisms.laplace` (Laplace, truncated Laplace),
:mod:`~dpdro.mechanisms.gaussian` (Gaussian, analytic Gaussian), :mod:`~dpdro.mechanisms.staircase`,
:mod:`~dpdro.mechanisms.tulap`, and :mod:`~dpdro.mechanisms.comparison` (every baseline at one
(ε, δ, Δf), and the near-optimal lower bound). The closed forms the optimisation engine itself needs
(the truncated Laplace half-width and cell masses, the staircase's optimal γ and cells) live in the
leaf module :mod:`dpdro._closed_forms`, which these classes build on.

Every mechanism adds zero-mean noise X to a query of sensitivity Δf. Each class is a frozen
dataclass with a keyword-only constructor that validates its parameters and offers ``pdf``,
``cdf``, ``ppf``, ``sample``, ``expected_loss`` (closed forms for the ℓ1 loss |x| and the ℓ2 loss
x², accurate quadrature for any other dpdro loss) and ``std``; the approximate-DP mechanisms also
report their exact privacy parameter (``exact_delta``). An expected loss beyond the floating-point
range (ℓ2 at ε = 1e-300) is a ``ValueError`` naming the mechanism, never ∞ or NaN
(:func:`~dpdro.mechanisms._common.finite_expected_loss`); so are parameters a mechanism cannot be
built at (the truncated Laplace where q = (e^ε − 1)/(2δ) overflows, Tulap beyond 2·10⁶ cells).

Sampling uses :class:`numpy.random.Generator`, which is fine for experiments; a production release
needs a cryptographically secure source and care with floating-point attacks on the released value:
:class:`dpdro.SecureSampler` releases any piecewise-uniform noise (``Tulap.to_piecewise_uniform()``,
``Staircase.to_piecewise_uniform(periods)``, a solver noise) exactly from ``secrets`` randomness.
"""

from .comparison import BASELINES, baselines, meets_delta, near_optimal_lower_bound
from .gaussian import AnalyticGaussian, Gaussian, gaussian_delta
from .laplace import Laplace, TruncatedLaplace, truncated_laplace_half_width
from .staircase import Staircase
from .tulap import Tulap

__all__ = [
    "AnalyticGaussian",
    "BASELINES",
    "Gaussian",
    "Laplace",
    "Staircase",
    "TruncatedLaplace",
    "Tulap",
    "baselines",
    "gaussian_delta",
    "meets_delta",
    "near_optimal_lower_bound",
    "truncated_laplace_half_width",
]
