r"""Composition: a dominating pair and a dp_accounting privacy loss distribution for a certified noise.

Releasing f(D) + X, with X a piecewise-uniform noise and |f(D) − f(D′)| ≤ Δf, compares the pairs
(X + φ, X), |φ| ≤ Δf (translate by f(D′)); both orders of D, D′ give both signs of φ. The
privacy profile is the maximum over **all** these shifts (DESIGN §4): for an optimised noise the
worst shift need not be φ = Δf, so the pair (X + Δf, X) alone does not dominate. This module builds
one pair (P, Q) of discrete laws that dominates every shift for every ε at once, and hands it to
Google's ``dp_accounting`` as a :class:`~dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`,
so that k releases (of this or other mechanisms) can be composed.

Definitions. H_γ(P‖Q) = sup_A P(A) − γQ(A) = ∫(dP − γ dQ)_+ for γ ≥ 0 (the δ at ε = log γ; γ < 1
covers ε < 0). A pair (P, Q) *dominates* a family of pairs if H_γ(P‖Q) ≥ H_γ(P′‖Q′) for every γ ≥ 0
and every member (P′, Q′); then the k-fold composition of (P, Q) dominates every adaptive k-fold
composition of the members (Zhu, Dong and Wang 2022, Theorem 10), so composing its PLD is valid. The
ROC curve R(x) = sup{P(A) : Q(A) ≤ x} (randomised tests allowed) is concave and
H_γ(P‖Q) = sup_x R(x) − γx, R(x) = inf_γ H_γ(P‖Q) + γx (convex conjugacy; R is the mirror image
of the trade-off function T(Q, P)).

Lemma 1 (lattice shifts suffice). Let every edge of X lie on hℤ, Δf = kh, g_i the mass of the
lattice cell C_i = [ih, (i + 1)h) and a the atom at 0. For φ = (s + t)h, s ∈ ℤ, t ∈ [0, 1] and
every γ ≥ 0, H_γ(X + φ‖X) = (1 − t)·H_γ(X + sh‖X) + t·H_γ(X + (s + 1)h‖X) whenever the atoms do not
meet (φ ∉ {0}; at s = 0 read the left end as the limit φ → 0+, where the atoms are still apart).
Proof: on C_i the density of X is g_i/h; that of X + φ at y = (i + u)h is g_{i−s}/h for u ≥ t and
g_{i−s−1}/h for u < t. Hence ∫_{C_i}(p_{X+φ} − γp_X)_+ = (1 − t)(g_{i−s} − γg_i)_+ + t(g_{i−s−1} − γg_i)_+.
The atom of X + φ at φ carries a where X has no mass (and the atom of X at 0 is where X + φ has
no mass), adding a for every φ ≠ 0. Summing over i gives the claim. □
So sup_{|φ|≤Δf} H_γ(X + φ‖X) is the maximum over the finitely many pairs s ∈ {−k, …, k} \ {0}
(plus, if a > 0, the limit pair at 0+: equal cells, separate atoms), each a pair of *discrete*
laws: masses (g_{i−s}, g_i) on the lattice cells, (a, 0) on the atom of X + sh, (0, a) on that of X.

Lemma 2 (the dominating pair). Let R* be the least concave majorant (upper concave hull) of the
ROC curves R_s of these pairs. Then R* is the ROC curve of a discrete pair (P*, Q*) and
H_γ(P*‖Q*) = max_s H_γ(s) = sup_{|φ|≤Δf} H_γ(X + φ‖X) for every γ ≥ 0: P* dominates every shift,
tightly. Proof: sup_x R*(x) − γx = sup_x max_s R_s(x) − γx (a linear function attains its maximum
over the hull at a vertex of the hull, a point of some R_s) = max_s H_γ(s). The hull is a concave
polygon from (0, y_0) to (1, 1); give P* the mass y_0 on an outcome where Q* = 0, and for each hull
edge a separate outcome with (P*, Q*) masses (Δy, Δx): its ROC curve is the hull (its outcomes sorted
by decreasing ratio are the edges in order). This is the convex lower envelope of the trade-off
functions of the shifts, i.e. the upper envelope of their privacy profiles (convex in γ already). □
Infinite privacy loss (cells where one law vanishes, the atoms) becomes y_0 and the edges of
infinite slope; zero-ratio mass closes the curve at (1, 1) and carries no P*-mass.

Lemma 3 (floating-point edges). Solver noises carry a grid β that is not always a binary fraction
(β = 0.05): the float edges e_j then differ from t_j·h by η_j ≠ 0, and k·h may fall short of Δf. We
build R* for the ideal lattice noise X_i (same masses, edges t_j·h exactly) and enlarge it to
R′(x) = min{1, R*(x + τ_Q) + τ_P}, τ_Q = τ ≥ TV(X, X_i) (continuous parts) and
τ_P = τ + ζ·Σ_j d_j, ζ = max(0, Δf − kh), d_j the densities of X. Proof: for (X + φ, X) take the
ideal pair (X_i + ψ, X_i), ψ = φ clipped to [−kh, kh] (ψ ≠ 0 when φ ≠ 0, so the atoms stay apart);
the continuous parts differ in total variation by at most τ + |φ − ψ|Σ_j d_j on the P side
(shifting a piecewise-constant density by ζ costs at most ζ·TV(p)/2 ≤ ζΣ_j d_j) and by at most τ on
the Q side; hence P(A) ≤ P_i(A) + τ_P and Q_i(A) ≤ Q(A) + τ_Q for every A, so R(x) ≤ R*(x + τ_Q) + τ_P.
R′ is concave, so it is again realised by a discrete pair. τ ≤ Σ_j m_j·2(η_j + η_{j+1})/min(w_j, w_j′)
(two uniforms whose ends move by η, η′ differ by at most 2(η + η′)/min(w, w′) in TV). τ = 0 when
the edges are exact lattice points (e.g. β a power of two), which is the common case.

Exactness. The ideal masses are the binary rationals of the noise's floats, normalised as
:func:`dpdro.certify_delta` does (cells (1 − a)p_j/Σp, atom a); all ROC points and the hull are
computed in exact integer arithmetic, so (P*, Q*) is exact. The conversion to dp_accounting rounds
every privacy loss up to the discretisation grid and every mass up to a float (pessimistic, as the
library's ``pessimistic_estimate=True``); the PLD's δ(ε) is then ≥ H_{e^ε}(P*‖Q*) up to the
library's own floating-point evaluation.

Cost. O(k·n log n) for n lattice cells and k = Δf/h, in Python integers; refused above 2·10^6 ROC
points (coarsen the grid).

References
----------
.. [1] Y. Zhu, J. Dong and Y.-X. Wang, "Optimal accounting of differential privacy via
   characteristic function", AISTATS 2022 (dominating pairs, Definition 7 and Theorem 10).
.. [2] J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS-B 2022 (trade-off
   functions, Proposition 2.2 and the convex-conjugate link with (ε, δ) profiles).
.. [3] S. Meiser and E. Mohammadi, "Tight on budget? Tight bounds for r-fold approximate
   differential privacy", ACM CCS 2018; A. Koskela, J. Jälkö and A. Honkela, "Computing tight
   differential privacy guarantees using FFT", AISTATS 2020 (privacy loss distributions).
.. [4] Google, ``dp_accounting`` (github.com/google/differential-privacy/python/dp_accounting),
   ``pld.privacy_loss_distribution``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._validation import check_finite, check_int, check_open_unit, check_positive
from .noise import check_noise
from .privacy import find_lattice

__all__ = ["DominatingPair", "dominating_pair", "privacy_loss_distribution", "epsilon_for_composition"]

_MAX_POINTS = 2_000_000


def _float_up(x: Fraction) -> float:
    """The smallest float >= x."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


@dataclass(frozen=True)
class DominatingPair:
    r"""A discrete pair (P, Q) that dominates every shift |φ| ≤ Δf of a noise (Lemmas 1–3).

    Attributes
    ----------
    infinity_mass : Fraction
        P-mass of the outcome where Q = 0 (infinite privacy loss).
    p, q : tuple of Fraction
        P- and Q-masses of the outcomes with finite positive likelihood ratio, ratio decreasing.
        (Q-mass with P = 0 is implicit: 1 − Σq.)
    """

    infinity_mass: Fraction
    p: tuple
    q: tuple

    def hockey_stick(self, epsilon: float) -> float:
        """H_{e^ε}(P‖Q) = P_∞ + Σ_j (p_j − e^ε q_j)_+, in rationals with e^ε = 2^m·e^{ε − m·ln 2} (floats)."""
        m = math.floor(check_finite("epsilon", epsilon) / math.log(2))
        gamma = Fraction(math.exp(epsilon - m * math.log(2))) * Fraction(2) ** m
        return float(self.infinity_mass + sum(p - gamma * q for p, q in zip(self.p, self.q) if p > gamma * q))

    def to_pld(self, value_discretization_interval: float = 1e-4):
        """The pessimistic PLD of (P, Q): losses rounded up to the grid, masses rounded up to floats.

        Returns a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`` (dp_accounting
        is an optional dependency: ``pip install dpdro[integrations]``).
        """
        step = check_positive("value_discretization_interval", value_discretization_interval)
        from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
        grid = Fraction(step)
        pmf = defaultdict(Fraction)
        for p, q in zip(self.p, self.q):
            top, bottom = p.numerator * q.denominator, p.denominator * q.numerator
            lt, lb = math.log(top), math.log(bottom)
            loss = lt - lb + 8 * (math.ulp(lt) + math.ulp(lb)) + math.ulp(abs(lt - lb))  # ≥ log(p/q)
            pmf[math.ceil(Fraction(loss) / grid)] += p
        rounded = {i: _float_up(m) for i, m in pmf.items()}
        return PrivacyLossDistribution.create_from_rounded_probability(
            rounded, _float_up(self.infinity_mass), step, pessimistic_estimate=True)


def _lattice(noise, sensitivity: float):
    """(ticks, k, h) of the lattice :func:`dpdro.certify_delta` certifies on, or a ValueError."""
    lattice = find_lattice(noise, sensitivity)
    if lattice is None:
        raise ValueError("noise must have its edges on a lattice hℤ with h dividing the sensitivity = "
                         f"{sensitivity!r} (every solver noise has one: its grid); none was found for {noise!r}")
    return lattice


def _roc_points(edges: list, dens: list, atom: int, total: int, s: int) -> list:
    """Vertices (x, y), scaled by ``total``, of the ROC curve of (X + sh, X) (Lemma 1's discrete pair).

    X is given by its cells on the lattice: ``edges`` (lattice ticks, relative to the first) and the
    mass ``dens[j]`` of every lattice cell of cell j. Between consecutive points of edges ∪ (edges + s)
    both laws are constant per lattice cell, so such a run of m lattice cells is one ROC segment of
    direction m·(q, p): the curve is found from O(number of cells) runs, whatever the lattice."""
    cuts = sorted(set(edges) | {e + s for e in edges})
    n = len(dens)
    y0 = atom  # the atom of X + sh, where X has no mass (s ≠ 0, or the limit pair at 0+)
    finite = []
    j = js = 0  # the cells of X and of X + sh containing the current run
    for a, b in zip(cuts[:-1], cuts[1:]):
        while j < n and edges[j + 1] <= a:
            j += 1
        while js < n and edges[js + 1] + s <= a:
            js += 1
        q = dens[j] if j < n and edges[j] <= a else 0
        p = dens[js] if js < n and edges[js] + s <= a else 0
        m = b - a
        if p and not q:
            y0 += m * p
        elif p:
            finite.append((m * p, m * q))
    scale = 2 * total.bit_length() + 2  # distinct ratios p/q (q ≤ total) get distinct integer keys
    finite.sort(key=lambda pq: (pq[0] << scale) // pq[1], reverse=True)
    points, x, y = [(0, y0)], 0, y0
    for p, q in finite:
        x, y = x + q, y + p
        points.append((x, y))
    points.append((total, total))
    return points


def _upper_hull(points: list) -> list:
    """Upper concave hull (monotone chain) of integer points, from the highest point at the smallest x."""
    best = {}
    for x, y in points:
        if y > best.get(x, -1):
            best[x] = y
    hull = []
    for x, y in sorted(best.items()):
        while len(hull) >= 2:
            (ox, oy), (ax, ay) = hull[-2], hull[-1]
            if (ax - ox) * (y - oy) - (ay - oy) * (x - ox) >= 0:  # not a right turn: (ax, ay) is not a vertex
                hull.pop()
            else:
                break
        hull.append((x, y))
    return hull


def _interp(vertices: list, x: Fraction) -> Fraction:
    """The concave polygon through ``vertices`` at x (1 beyond its right end)."""
    for (x0, y0), (x1, y1) in zip(vertices[:-1], vertices[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return Fraction(1)


def _enlarge(vertices: list, tau_q: Fraction, tau_p: Fraction) -> list:
    """Vertices of R′(x) = min{1, R(x + τ_Q) + τ_P} on [0, 1] (Lemma 3)."""
    shifted = [(Fraction(0), _interp(vertices, tau_q))] + [(x - tau_q, y) for x, y in vertices if x > tau_q]
    shifted.append((Fraction(1), Fraction(1)))
    out = []
    for (x0, y0), (x1, y1) in zip(shifted[:-1], shifted[1:]):
        out.append((x0, min(Fraction(1), y0 + tau_p)))
        if y0 + tau_p < 1 < y1 + tau_p:  # the cap is reached inside this edge
            out.append((x0 + (x1 - x0) * (1 - y0 - tau_p) / (y1 - y0), Fraction(1)))
    out.append((Fraction(1), Fraction(1)))
    return out


def _float_slack(noise, ticks: np.ndarray, k: int, h: float, sensitivity: float, masses: list) -> tuple:
    """(τ_Q, τ_P) of Lemma 3, exact."""
    hh = Fraction(h)
    edges = [Fraction(float(e)) for e in noise.edges]
    ideal = [int(t) * hh for t in ticks]
    eta = [abs(e - t) for e, t in zip(edges, ideal)]
    tau = Fraction(0)
    dens = Fraction(0)
    for j, m in enumerate(masses):
        if m:
            w = min(edges[j + 1] - edges[j], ideal[j + 1] - ideal[j])
            tau += m * 2 * (eta[j] + eta[j + 1]) / w
            dens += m / (edges[j + 1] - edges[j])
    zeta = max(Fraction(0), Fraction(sensitivity) - k * hh)
    return tau, tau + zeta * dens


def dominating_pair(noise, sensitivity) -> DominatingPair:
    r"""The tight dominating pair (P*, Q*) of all shifts |φ| ≤ Δf of ``noise`` (module docstring).

    Parameters
    ----------
    noise : dpdro.PiecewiseUniform
        A noise whose edges lie on a lattice hℤ with h dividing Δf (every solver noise does: its grid).
    sensitivity : float
        Δf > 0.

    Returns
    -------
    DominatingPair
        Exact rational masses; H_{e^ε}(P*‖Q*) = max_{|φ|≤Δf} H_{e^ε}(X + φ‖X) for every ε ∈ ℝ (plus
        the Lemma 3 slack when the float edges are not exact lattice points).
    """
    noise = check_noise("noise", noise)
    sensitivity = check_positive("sensitivity", sensitivity)
    ticks, k, h = _lattice(noise, sensitivity)
    widths = np.diff(ticks).tolist()
    if (2 * k + 1) * 2 * (ticks.size + 1) > _MAX_POINTS:
        raise ValueError(f"the dominating pair would need more than {_MAX_POINTS} ROC points ({ticks.size - 1} cells, "
                         f"sensitivity/step = {k} on the lattice step {h!r}); use a coarser grid")
    # exact masses as integers over a common denominator `total` (module docstring, Exactness)
    probs = [Fraction(float(p)) for p in noise.probs]
    atom = Fraction(noise.atom)
    denominator = math.lcm(*(p.denominator for p in probs), atom.denominator)
    weights = [int(p * denominator) for p in probs]  # P_j
    S = sum(weights)
    L = math.lcm(*(w for w, p in zip(widths, weights) if p))
    total = atom.denominator * S * L
    free = atom.denominator - atom.numerator  # (1 − a)·2^e
    dens = [free * p * (L // w) for p, w in zip(weights, widths)]  # mass of each lattice cell of cell j
    edges = [int(t - ticks[0]) for t in ticks]
    A = atom.numerator * S * L
    points = []
    for s in range(-k, k + 1):
        if s or A:
            points.extend(_roc_points(edges, dens, A, total, s))
    hull = [(Fraction(x, total), Fraction(y, total)) for x, y in _upper_hull(points)]
    masses = [(1 - atom) * Fraction(p, S) for p in weights]
    tau_q, tau_p = _float_slack(noise, ticks, k, h, sensitivity, masses)
    if tau_q or tau_p:
        hull = _enlarge(hull, tau_q, tau_p)
    p, q = [], []
    for (x0, y0), (x1, y1) in zip(hull[:-1], hull[1:]):
        if y1 > y0:  # x1 > x0: the first vertex is the only one at x = 0
            p.append(y1 - y0)
            q.append(x1 - x0)
    return DominatingPair(hull[0][1], tuple(p), tuple(q))


def privacy_loss_distribution(noise, sensitivity, *, value_discretization_interval=1e-4):
    """A pessimistic dp_accounting PLD of one release of ``noise`` at sensitivity Δf, valid for every shift.

    ``pld.self_compose(k)`` then accounts for k releases; ``get_epsilon_for_delta`` and
    ``get_delta_for_epsilon`` read the composed guarantee. The same PLD serves both adjacency
    directions (the family of shifts is closed under swapping the two laws), so it is symmetric.
    """
    return dominating_pair(noise, sensitivity).to_pld(value_discretization_interval)


def epsilon_for_composition(noise, sensitivity, k, delta, *, value_discretization_interval=1e-4) -> float:
    """The ε for which k releases of ``noise`` (sensitivity Δf each) are jointly (ε, δ)-DP, by PLD composition.

    Returns ``math.inf`` when no finite ε reaches δ (the infinite-loss mass of the composition exceeds δ).
    """
    k = check_int("k", k, minimum=1)
    delta = check_open_unit("delta", delta)
    pld = privacy_loss_distribution(noise, sensitivity, value_discretization_interval=value_discretization_interval)
    return float((pld.self_compose(k) if k > 1 else pld).get_epsilon_for_delta(delta))
