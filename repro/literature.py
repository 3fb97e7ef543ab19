"""The literature values the tables and figures compare with, in one place.

For one (ε, δ, Δf, loss): the expected loss of the truncated Laplace mechanism and its support
half-width, the expected loss and σ of the analytic Gaussian mechanism, and the 'near optimal lower
bound' with each of its roundings (``dpdro.mechanisms.near_optimal_lower_bound``). All are closed
forms, recomputed wherever they are used.
"""

from __future__ import annotations

from dpdro.mechanisms import AnalyticGaussian, TruncatedLaplace, near_optimal_lower_bound

__all__ = ["literature_values"]


def literature_values(epsilon: float, delta: float, sensitivity: float = 1.0, loss: str = "l1") -> dict:
    """Benchmark values of Section 5.1 (Figure 3, Tables 1 and 4–6) for one instance."""
    tl = TruncatedLaplace(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    ag = AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=sensitivity)

    def nolb(rounding):
        return near_optimal_lower_bound(epsilon=epsilon, delta=delta, sensitivity=sensitivity, loss=loss,
                                        rounding=rounding)

    return {
        "truncated_laplace": tl.expected_loss(loss),
        "truncated_laplace_half_width": tl.half_width,
        "analytic_gaussian": ag.expected_loss(loss),
        "analytic_gaussian_sigma": ag.std,
        "near_optimal_lb": nolb(None),
        "near_optimal_lb_up": nolb("up"),
        "near_optimal_lb_down": nolb("down"),
    }
