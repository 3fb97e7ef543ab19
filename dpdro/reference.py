r"""Certified candidates without an LP: literature mechanisms released on a grid.

:func:`dpdro.optimal_noise` starts from the better of two noises that need no LP and keeps it while
the LPs cannot beat it (small ε, where the noise spans thousands of Δf, and large ε). Each candidate
is a noise certified ≤ δ by :func:`dpdro.certify_delta` and reported through
:func:`dpdro.release.certified_release`, exactly as an LP's release is: a new candidate (another
literature mechanism) is one more function returning ``(noise, certified δ)`` or ``None``.

* :func:`truncated_laplace_candidate`: the truncated Laplace mechanism (Geng et al. 2020) on cells
  of width h (a divisor of Δf), near optimal for small ε. Spreading its mass over cells can raise
  its δ slightly, so it is taken at δ′ ≤ δ, lowered until the certificate is at most δ.
* :func:`tulap_candidate`: the Tulap cells (Awan and Vadhan 2023) on a lattice, certified, when
  they are at most a thousand (small ε: its certificate takes
  seconds, and the truncated Laplace mechanism is as good there).
* :func:`staircase_candidate`: the staircase mechanism (Geng and Viswanath 2016), optimal for δ = 0,
  with its plateau γ rounded to a lattice Δf/N that costs below 1e-8 of the loss,
  truncated after P periods (which costs δ_P) and mixed with an atom at 0 of mass
  a = (δ − δ_P)/(1 − δ_P): its δ is at most a + (1 − a)·δ_P = δ
  (convexity of the hockey-stick divergence in the noise; the atom alone has δ = 1). Near optimal
  for large ε, where the optimal noise is a staircase with an atom of mass about δ; P is the
  cheapest number of periods. Without an atom (and for monotone problems) the truncated staircase
  alone, with the fewest periods P whose δ_P is at most δ.

:func:`literature_losses` gives the expected loss of every literature mechanism dpdro implements
that the engine compares with (the staircase, Tulap, the truncated Laplace mechanism), as published:
the value :func:`dpdro.optimal_noise` must not exceed.
"""

from __future__ import annotations

import math

import numpy as np

from ._budget import TimeBudget
from ._closed_forms import (
    staircase_expected_loss,
    staircase_noise,
    staircase_optimal_gamma,
    truncated_laplace_half_width,
    truncated_laplace_noise,
    tulap_cells,
)
from .noise import PiecewiseUniform
from .privacy import certify_delta
from .problem import Problem
from .release import RELEASE_MARGIN, UpperBound, certified_release

__all__ = [
    "literature_losses",
    "reference_upper_bound",
    "staircase_candidate",
    "truncated_laplace_candidate",
    "tulap_candidate",
]

_TULAP_CELLS = 1000  # the Tulap candidate only up to this many cells (its certificate is O(n²))


def literature_losses(problem: Problem) -> dict[str, float]:
    """E c(X) of the literature mechanisms the engine compares its release with, at the
    problem's (ε, δ, Δf), as published (centred at 0), from :mod:`dpdro._closed_forms`: the
    staircase (γ optimised for the loss; ε-DP), Tulap (its cells at δ) and the truncated Laplace
    mechanism (its cells of width max(Δf/4096, A/16384), within about 1e-6 of its loss). Laplace
    is left out: the truncated Laplace mechanism is Laplace conditioned on |X| ≤ A, cheaper for
    every loss non-increasing then non-decreasing about 0. The Gaussian mechanisms are compared
    by ``dpdro compare`` (:mod:`dpdro.mechanisms.comparison`), not here. All are monotone; with a
    ``Problem.support`` only those whose support lies in it count.

    Parameters
    ----------
    problem : the instance of P.

    Returns
    -------
    dict: mechanism name ↦ E c(X).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Example 1 and Section 5.1 (the mechanisms compared with).
    """
    p = problem
    eps, delta, sens = p.epsilon, p.delta, p.sensitivity
    half = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=sens)
    width = max(sens / 4096, half / 16384)
    cells = {
        "truncated_laplace": truncated_laplace_noise(eps, delta, sens, width),
        "tulap": tulap_cells(eps, delta, sens),
    }
    out = {}
    lo, hi = p.support if p.support is not None else (-math.inf, math.inf)
    for name, noise in cells.items():
        if lo <= noise.edges[0] and noise.edges[-1] <= hi:
            out[name] = float(noise.expected_loss(p.loss))
    if p.support is None:
        gamma = staircase_optimal_gamma(eps, p.loss)
        out["staircase"] = float(staircase_expected_loss(eps, sens, gamma, p.loss))
    return out


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
            ("truncated_laplace", truncated_laplace_candidate(problem, cell_width)),
            ("staircase", staircase_candidate(problem, atom=atom)),
            ("tulap", tulap_candidate(problem)),
        )
        if c[1] is not None
    ]
    if not candidates:
        return None  # pragma: no cover - the truncated Laplace mechanism always certifies
    source, (noise, d) = min(candidates, key=lambda c: c[1][0].expected_loss(problem.loss))
    meta = dict(
        noise.metadata,
        mechanism=source,
        epsilon=problem.epsilon,
        delta=problem.delta,
        sensitivity=problem.sensitivity,
        loss=problem.loss.name,
    )  # what every released noise records (SecureSampler.from_file reads it)
    noise = PiecewiseUniform(
        noise.edges, noise.probs, grid=noise.grid, metadata=meta, atom=noise.atom
    )
    return certified_release(
        noise.expected_loss(problem.loss),
        d,
        budget.elapsed(),
        noise=noise,
        k=0,
        L=0,
        boundary_mass=0.0,
        source=source,
    )


def tulap_candidate(problem: Problem) -> tuple[PiecewiseUniform, float] | None:
    """Tulap designed at the largest δ′ ≤ δ whose outer edges lie on a lattice Δf/N (its inner
    edges (k + ½)Δf do already), so that the noise has a lattice as every released noise does: N
    256, or 1024 (the certificate's time grows with N) when that costs more than 1e-7 more than
    Tulap at δ. (noise, certified δ), or ``None`` (more than a thousand cells,
    or a certificate above δ)."""
    p = problem
    if 2.0 * math.log(1.0 / p.delta) / min(p.epsilon, 700.0) > _TULAP_CELLS:
        return None
    published = tulap_cells(p.epsilon, p.delta, p.sensitivity).expected_loss(p.loss)
    found = None
    for lattice in (256, 1024):
        noise = _tulap_on_lattice(p, lattice)
        if noise is None:
            continue
        d = certify_delta(noise, p.epsilon, p.sensitivity)
        if d <= p.delta:
            found = (noise, d)
            if noise.expected_loss(p.loss) <= published * (1.0 + 1e-7):
                break
    return found


def _tulap_on_lattice(p: Problem, lattice: int) -> PiecewiseUniform | None:
    """Tulap at the largest δ′ ≤ δ whose support's half-width t(δ′) is a multiple of Δf/lattice:
    t grows continuously as δ′ falls, so δ′ is found by bisection."""
    eps, sens = p.epsilon, p.sensitivity
    h = sens / lattice
    target = math.ceil(tulap_cells(eps, p.delta, sens).edges[-1] / h) * h
    lo, hi = 0.5 * p.delta, p.delta  # t(lo) ≥ target ≥ t(hi)
    if tulap_cells(eps, lo, sens).edges[-1] < target:
        return None  # pragma: no cover - halving δ lengthens the support by more than h
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if tulap_cells(eps, mid, sens).edges[-1] >= target else (lo, mid)
    cells = tulap_cells(eps, lo, sens)
    ticks = np.round(cells.edges / h)
    if np.any(np.abs(cells.edges / h - ticks) > 1e-6):
        return None  # pragma: no cover - the bisection converges to the lattice point
    meta = {"mechanism": "tulap", "epsilon": eps, "delta": p.delta, "design_delta": lo}
    return PiecewiseUniform(ticks * h, cells.probs, grid=h, metadata=meta)


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
    problem: Problem, *, atom: bool = True, max_periods: int = 250
) -> tuple[PiecewiseUniform, float] | None:
    """The truncated staircase with an atom at 0 (module docstring): (noise, certified δ), or
    ``None`` for ε < ½ (its steps barely decay there; Tulap and the truncated Laplace mechanism
    are as good), when more than ``max_periods`` periods are needed (its certificate grows
    quadratically in the cells) or when δ leaves no room for the certificate's rounding
    allowance."""
    p = problem
    if p.epsilon < 0.5:
        return None
    gamma = staircase_optimal_gamma(p.epsilon, p.loss)
    lattice = _staircase_lattice(gamma)
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


def _staircase_lattice(gamma: float, smallest: int = 64, largest: int = 4096) -> int:
    """The smallest N ≥ ``smallest`` (at most ``largest``) for which rounding γ to a multiple of
    1/N costs at most 1e-8 of the staircase's loss, 0.34·(Δγ/γ)² (measured at ε = 8; γ is
    optimal, so the loss is flat in it). The certificate's time grows with N."""
    for n in range(smallest, largest):
        if 0.34 * ((round(gamma * n) / n - gamma) / gamma) ** 2 <= 1e-8:
            return n
    return largest
