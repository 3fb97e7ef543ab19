"""Monotone noise on a support on one side of 0 (``Problem(monotone=True, support=(0, hi))`` or
``(lo, 0)``): no centred mechanism fits it, and its optimum is nearly the uniform noise on
[0, Δf/δ] (:func:`dpdro._closed_forms.uniform_noise`), within δ² of the closed-form lower bound
(:func:`dpdro._closed_forms.monotone_one_sided_bound`) for ℓ1. The engine releases that noise
(:func:`dpdro.reference.reference_upper_bound`) and starts from that bound
(:func:`dpdro._schedule._closed_form_bound`)."""

from __future__ import annotations

from ._closed_forms import uniform_noise
from .losses import CallableLoss
from .noise import PiecewiseUniform, fits_support
from .privacy import certify_delta
from .problem import Problem, RelaxationInfeasibleError

__all__ = ["monotone_side", "uniform_candidate"]


def monotone_side(problem: Problem) -> int:
    """1 (−1) for monotone noise on a support [0, hi] ([lo, 0]) with a loss growing away from 0
    (a built-in one, or a callable without ``tail_infimum``), where the uniform noise
    (:func:`uniform_candidate`) and its lower bound
    (:func:`dpdro._closed_forms.monotone_one_sided_bound`) apply; else 0. (A callable had been
    left to the LPs: |x| on [0, ∞) at ε = 1, δ = 1e-3 ended its 20 s at a 3,300% gap.)"""
    sup, loss = problem.support, problem.loss
    if not problem.monotone or sup is None or (isinstance(loss, CallableLoss) and loss.custom_tail):
        return 0
    return 1 if sup[0] == 0.0 else -1 if sup[1] == 0.0 else 0


def uniform_candidate(problem: Problem) -> tuple[PiecewiseUniform, float] | None:
    """The uniform noise on [0, W], W ≥ Δf/δ (:func:`dpdro._closed_forms.uniform_noise`), or its
    mirror image, for monotone noise on a support on one side of 0 (:func:`monotone_side`), which no
    centred mechanism fits: (noise, certified δ), or ``None`` where [0, W] leaves the support.

    Raises
    ------
    RelaxationInfeasibleError : the support is shorter than Δf/δ: no monotone noise on it is
        (ε, δ)-DP (its mass below Δf is at most δ, so its density beyond is at most δ/Δf;
        :func:`dpdro._closed_forms.monotone_one_sided_bound`). HiGHS had failed on the LP.
    """
    side = monotone_side(problem)
    if not side:
        return None
    if max(-problem.support[0], problem.support[1]) * problem.delta < problem.sensitivity:
        raise RelaxationInfeasibleError.of(
            problem, f"a monotone density on a support shorter than Δf/δ = "
            f"{problem.sensitivity / problem.delta:g}"
        )
    delta, target = problem.delta, problem.delta
    for _ in range(_WIDENINGS):
        noise = uniform_noise(target, problem.sensitivity, side)
        if not fits_support(noise, problem.support):
            return None
        certified = certify_delta(noise, problem.epsilon, problem.sensitivity)
        if certified <= delta:
            break
        # the certificate's allowance for edges off their lattice (Δf = 0.1, 1e11 ticks: 4.4e-6 of
        # δ = 1e-11) exceeds the noise's margin: widen it by twice the excess
        target = delta * (1.0 - 2.0 * (certified - delta) / delta)
    return noise, certified


_WIDENINGS = 3  # tries of uniform_candidate (one has sufficed where one was needed)
