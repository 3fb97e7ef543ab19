r"""Certified candidates without an LP: literature mechanisms released on a grid.

:func:`dpdro.optimal_noise` starts from the better of two noises that need no LP and keeps it while
the LPs cannot beat it (small ε, where the noise spans thousands of Δf, and large ε). Each candidate
is a noise certified ≤ δ by :func:`dpdro.certify_delta` and reported through
:func:`dpdro.release.certified_release`, exactly as an LP's release is: a new candidate (another
literature mechanism) is one more function returning ``(noise, certified δ)`` or ``None``.

* :func:`truncated_laplace_candidate`: the truncated Laplace mechanism (Geng et al. 2020) on cells
  of width h (a divisor of Δf), near optimal for small ε. Spreading its mass over cells can raise
  its δ slightly, so it is taken at δ′ ≤ δ, lowered until the certificate is at most δ.
* :func:`staircase_candidate`: the staircase mechanism (Geng and Viswanath 2016), optimal for δ = 0,
  with its plateau γ rounded to the lattice Δf/1024, truncated after P periods (which costs δ_P) and
  mixed with an atom at 0 of mass a = (δ − δ_P)/(1 − δ_P): its δ is at most a + (1 − a)·δ_P = δ
  (convexity of the hockey-stick divergence in the noise; the atom alone has δ = 1). Near optimal
  for large ε, where the optimal noise is a staircase with an atom of mass about δ; P is the
  cheapest number of periods. Without an atom (and for monotone problems) the truncated staircase
  alone, with the fewest periods P whose δ_P is at most δ.
"""

from __future__ import annotations

from ._budget import TimeBudget
from ._closed_forms import staircase_noise, staircase_optimal_gamma, truncated_laplace_noise
from .noise import PiecewiseUniform
from .privacy import certify_delta
from .problem import Problem
from .release import RELEASE_MARGIN, UpperBound, certified_release

__all__ = ["reference_upper_bound", "staircase_candidate", "truncated_laplace_candidate"]


def reference_upper_bound(
    problem: Problem, cell_width: float, *, atom: bool = True
) -> UpperBound | None:
    """The better of the certified candidates of the module docstring (``None`` for a
    ``Problem.support``).

    Parameters
    ----------
    problem : the instance of P.
    cell_width : the cells of the truncated Laplace candidate (a divisor of Δf).
    atom : let the staircase candidate carry a point mass at 0 (ignored for monotone problems).

    Returns
    -------
    UpperBound with ``noise`` certified ≤ δ, ``k = L = 0`` and ``boundary_mass = 0`` (no LP, no
    window).

    References
    ----------
    .. [1] Q. Geng, W. Ding, R. Guo and S. Kumar, "Tight analysis of privacy and utility tradeoff in
       approximate differential privacy", AISTATS 2020 (the truncated Laplace mechanism).
    .. [2] Q. Geng and P. Viswanath, "The optimal noise-adding mechanism in differential privacy",
       IEEE Trans. Inf. Theory 62(2), 2016 (the staircase mechanism).
    """
    if problem.support is not None:
        return None
    budget = TimeBudget(None)
    atom = atom and not problem.monotone
    candidates = [
        c
        for c in (
            truncated_laplace_candidate(problem, cell_width),
            staircase_candidate(problem, atom=atom),
        )
        if c is not None
    ]
    if not candidates:
        return None  # pragma: no cover - the truncated Laplace mechanism always certifies
    noise, d = min(candidates, key=lambda c: c[0].expected_loss(problem.loss))
    return certified_release(
        noise.expected_loss(problem.loss),
        d,
        budget.elapsed(),
        noise=noise,
        k=0,
        L=0,
        boundary_mass=0.0,
    )


def truncated_laplace_candidate(
    problem: Problem, cell_width: float
) -> tuple[PiecewiseUniform, float] | None:
    """The truncated Laplace mechanism on cells of width ``cell_width``, at the largest δ′ ≤ δ tried
    whose cells certify at most δ: (noise, certified δ)."""
    p, target = problem, problem.delta
    for _ in range(8):
        noise = truncated_laplace_noise(p.epsilon, target, p.sensitivity, cell_width)
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            return noise, d
        target *= (p.delta / d) * (1.0 - 1e-9)
    return None  # pragma: no cover - δ′ converges in one or two steps


def staircase_candidate(
    problem: Problem, *, atom: bool = True, lattice: int = 1024, max_periods: int = 64
) -> tuple[PiecewiseUniform, float] | None:
    """The truncated staircase with an atom at 0 (module docstring): (noise, certified δ), or
    ``None`` for ε < 1 (its steps barely decay there; the truncated Laplace mechanism is better) or
    when δ leaves no room for the certificate's rounding allowance."""
    p = problem
    if p.epsilon < 1.0:
        return None
    gamma = staircase_optimal_gamma(p.epsilon, p.loss)
    gamma = min(max(round(gamma * lattice), 1), lattice - 1) / lattice
    # the cheapest number of periods, from the exact δ_P and expected losses (no certificate yet)
    best = None
    for periods in range(1, max_periods + 1):  # more periods: less δ lost to truncation, more atom
        base = staircase_noise(p.epsilon, p.sensitivity, gamma, periods)
        d_p = base.metadata["delta"]
        if d_p >= p.delta:
            continue
        mass = (p.delta - d_p) / (1.0 - d_p) * (1.0 - RELEASE_MARGIN) if atom else 0.0
        cost = (1.0 - mass) * base.expected_loss(p.loss)
        if best is not None and cost >= best[2]:
            break  # the cost rises again: the truncation no longer pays
        best = (base, mass, cost)
        if not atom:
            break  # without an atom, the fewest periods are the cheapest
    if best is None:
        return None
    base, mass, _ = best
    for _ in range(3):  # certify, making room for the certificate's rounding allowance if needed
        noise = PiecewiseUniform(
            base.edges,
            base.probs * (1.0 - mass),
            atom=mass,
            grid=p.sensitivity / lattice,
            metadata=dict(base.metadata, atom=mass, delta=p.delta),
        )
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            return noise, d
        mass -= 2.0 * (d - p.delta)
        # the rounding allowance exceeds the room δ − δ_P leaves (tiny δ)
        if not atom or mass < 0.0:
            return None
    return None  # pragma: no cover
