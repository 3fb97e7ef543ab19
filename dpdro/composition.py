r"""Composition: a dominating pair and a dp_accounting privacy loss distribution for a certified
noise.

Releasing f(D) + X, with X a piecewise-uniform noise and |f(D) − f(D′)| ≤ Δf, compares the pairs
(X + φ, X), |φ| ≤ Δf (translate by f(D′)); both orders of D, D′ give both signs of φ. The privacy
profile is the maximum over **all** these shifts (DESIGN §4): for an optimised noise the worst shift
need not be φ = Δf, so the pair (X + Δf, X) alone does not dominate. This module builds one pair (P,
Q) of discrete laws that dominates every shift for every ε at once, and hands it to Google's
``dp_accounting`` as a
:class:`~dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`, so that k releases
(of this or other mechanisms) can be composed.

Definitions. H_γ(P‖Q) = sup_A P(A) − γQ(A) = ∫(dP − γ dQ)_+ for γ ≥ 0 (the δ at ε = log γ; γ < 1
covers ε < 0). A pair (P, Q) *dominates* a family of pairs if H_γ(P‖Q) ≥ H_γ(P′‖Q′) for every γ ≥ 0
and every member (P′, Q′); then the k-fold composition of (P, Q) dominates every adaptive k-fold
composition of the members (Zhu, Dong and Wang 2022, Theorem 10), so composing its PLD is valid. The
ROC curve R(x) = sup{P(A) : Q(A) ≤ x} (randomised tests allowed) is concave and
H_γ(P‖Q) = sup_x R(x) − γx, R(x) = inf_γ H_γ(P‖Q) + γx (convex conjugacy; R is the mirror image
of the trade-off function T(Q, P)).

Lemma 1 (lattice shifts suffice). Let every edge of X lie on hℤ, Δf = kh, g_i the mass of the
lattice cell C_i = [ih, (i + 1)h) and a the atom at 0. For φ = (s + t)h, s ∈ ℤ, t ∈ [0, 1] and every
γ ≥ 0, H_γ(X + φ‖X) = (1 − t)·H_γ(X + sh‖X) + t·H_γ(X + (s + 1)h‖X) whenever the atoms do not meet
(φ ∉ {0}; at s = 0 read the left end as the limit φ → 0+, where the atoms are still apart). Proof:
on C_i the density of X is g_i/h; that of X + φ at y = (i + u)h is g_{i−s}/h for u ≥ t and
g_{i−s−1}/h for u < t. Hence ∫_{C_i}(p_{X+φ} − γp_X)_+ = (1 − t)(g_{i−s} − γg_i)_+ + t(g_{i−s−1} −
γg_i)_+. The atom of X + φ at φ carries a where X has no mass (and the atom of X at 0 is where X + φ
has no mass), adding a for every φ ≠ 0. Summing over i gives the claim. □ So sup_{|φ|≤Δf} H_γ(X +
φ‖X) is the maximum over the finitely many pairs s ∈ {−k, …, k} \ {0} (plus, if a > 0, the limit
pair at 0+: equal cells, separate atoms), each a pair of *discrete* laws: masses (g_{i−s}, g_i) on
the lattice cells, (a, 0) on the atom of X + sh, (0, a) on that of X. The same argument on the
pieces of the edges and their translates shows H_γ(X + φ‖X) affine in φ between consecutive
differences of edges, so where those differences within Δf are fewer than the 2k + 1 lattice shifts
(few cells on a fine lattice, e.g. Tulap on Δf/2^20) the pairs at them and at ±kh suffice
(:func:`dpdro.privacy.lattice_shifts`, as for the certificate).

Lemma 2 (the dominating pair). Let R* be the least concave majorant (upper concave hull) of the ROC
curves R_s of these pairs. Then R* is the ROC curve of a discrete pair (P*, Q*) and H_γ(P*‖Q*) =
max_s H_γ(s) = sup_{|φ|≤Δf} H_γ(X + φ‖X) for every γ ≥ 0: P* dominates every shift, tightly. Proof:
sup_x R*(x) − γx = sup_x max_s R_s(x) − γx (a linear function attains its maximum over the hull at a
vertex of the hull, a point of some R_s) = max_s H_γ(s). The hull is a concave polygon from (0, y_0)
to (1, 1); give P* the mass y_0 on an outcome where Q* = 0, and for each hull edge a separate
outcome with (P*, Q*) masses (Δy, Δx): its ROC curve is the hull (its outcomes sorted by decreasing
ratio are the edges in order). This is the convex lower envelope of the trade-off functions of the
shifts, i.e. the upper envelope of their privacy profiles (convex in γ already). □ Infinite privacy
loss (cells where one law vanishes, the atoms) becomes y_0 and the edges of infinite slope;
zero-ratio mass closes the curve at (1, 1) and carries no P*-mass.

Lemma 3 (floating-point edges). Solver noises carry a grid β that is not always a binary fraction
(β = 0.05): the float edges e_j then differ from t_j·h by η_j ≠ 0, and k·h may fall short of Δf. We
build R* for the ideal lattice noise X_i (same masses, edges t_j·h exactly) and enlarge it to
R′(x) = min{1, R*(x + τ_Q) + τ_P}, τ_Q = τ ≥ TV(X, X_i) (continuous parts) and
τ_P = τ + ζ·Σ_j d_j, ζ = max(0, Δf − kh), d_j the densities of X. Proof: for (X + φ, X) take the
ideal pair (X_i + ψ, X_i), ψ = φ clipped to [−kh, kh] (ψ ≠ 0 when φ ≠ 0, so the atoms stay apart);
the continuous parts differ in total variation by at most τ + |φ − ψ|Σ_j d_j on the P side
(shifting a piecewise-constant density by ζ costs at most ζ·TV(p)/2 ≤ ζΣ_j d_j) and by at most τ
on the Q side; hence P(A) ≤ P_i(A) + τ_P and Q_i(A) ≤ Q(A) + τ_Q for every A, so
R(x) ≤ R*(x + τ_Q) + τ_P. R′ is concave, so it is again realised by a discrete pair.
τ ≤ Σ_j m_j·2(η_j + η_{j+1})/min(w_j, w_j′) (two uniforms whose ends move by η, η′ differ by at
most 2(η + η′)/min(w, w′) in TV). τ = 0 when the edges are exact lattice points (e.g. β a power of
two), which is the common case.

Exactness. The ideal masses are the binary rationals of the noise's floats, normalised as
:func:`dpdro.certify_delta` does (cells (1 − a)p_j/Σp, atom a); all ROC points and the hull are
computed in exact integer arithmetic, so (P*, Q*) is exact.

Lemma 4 (discretisation: connect the dots). dp_accounting represents a privacy loss distribution
on the grid sℤ (s the ``value_discretization_interval``). An outcome with masses (p, q) and loss
ℓ = log(p/q) in (as, bs], b = a + 1, is split into two outcomes with P-masses (1 − θ)p at loss as
and θp at loss bs, θ = (1 − e^{−(ℓ − as)})/(1 − e^{−s}) ∈ (0, 1]; their Q-masses
(1 − θ)p·e^{−as} + θp·e^{−bs} = p·e^{−ℓ} = q add up to q. The split pair dominates the original one,
and the two have equal hockey-stick divergence at every grid point ε = ms. Proof: H_{e^ε} of an
outcome is p·f(e^{−ℓ}) with f(y) = (1 − e^ε y)_+, convex in y; the split replaces y = e^{−ℓ} by the
two points e^{−as}, e^{−bs} with weights (1 − θ, θ) and the same mean, so by Jensen's inequality
H_{e^ε} does not decrease; for ε ≤ as, f is affine on [e^{−bs}, e^{−as}] (equality), and for
ε ≥ bs it vanishes on both points (equality). □ This is the connect-the-dots discretisation of
Doroshenko et al. (2022), applied outcome by outcome. θ is rounded **up** (moving P-mass from as to
bs only increases every H_{e^ε}) and every mass up to a float; the losses are overestimated by a
few ulps before the grid point b is chosen. So the PLD's δ(ε) is ≥ H_{e^ε}(P*‖Q*) for every ε, and
equal to it (to ~1e-14 relative, plus the library's own floating-point evaluation) at multiples of
s; one release of a noise designed at ε reports its certified δ there.

Why not round every loss up to the grid (the "privacy buckets" of dp_accounting's
``pessimistic_estimate=True``, used before): an optimised noise puts most of its mass at privacy
loss exactly ε (its staircase steps have density ratio e^ε), and rounding ε up to ε + s moves all of
it above ε, adding about s·P(loss = ε) to δ(ε). At (ε, δ) = (1, 1e-6) that was 7.1e-5 at the
default s = 1e-4 (71% of the mass at loss ε): 71 times the certified δ. Connect-the-dots keeps
δ(ε) = 1.0e-6. Between grid points it still over-reports (by at most the loss of one step), which
is why :func:`aligned_interval` puts the ε of interest on the grid.

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
.. [4] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar and P. Manurangsi, "Connect the dots: tighter
   discrete approximations of privacy loss distributions", PETS 2022 (Algorithm 1).
.. [5] Google, ``dp_accounting`` (github.com/google/differential-privacy/python/dp_accounting),
   ``pld.privacy_loss_distribution``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._range import MAX_DESIGN_EPSILON, MIN_DELTA, MIN_DESIGN_EPSILON
from ._rounding import float_up
from ._scaling import check_scale
from ._validation import check_finite, check_int, check_open_unit, check_positive
from .losses import make_loss
from .mechanisms import AnalyticGaussian, gaussian_delta
from .noise import PiecewiseUniform, check_noise
from .optimal import optimal_noise
from .privacy import certify_delta, find_lattice, lattice_shifts
from .problem import Problem

__all__ = [
    "DominatingPair",
    "dominating_pair",
    "privacy_loss_distribution",
    "aligned_interval",
    "epsilon_for_composition",
    "ReleasePlan",
    "CompositionDesign",
    "design_for_releases",
]

_MAX_POINTS = 2_000_000


def _log_up(ratio: Fraction) -> float:
    """A float ≥ log(ratio), within a few ulps: the log of the ratio rounded up to a float (or,
    beyond the float range, the difference of the logs of its numerator and denominator with a
    margin)."""
    try:
        r = float(ratio)  # correctly rounded
        if Fraction(r) < ratio:
            r = math.nextafter(r, math.inf)
        out = math.log(r)
    except (OverflowError, ValueError):  # pragma: no cover - a likelihood ratio beyond 1e±308
        lt, lb = math.log(ratio.numerator), math.log(ratio.denominator)
        out = lt - lb + 8 * (math.ulp(lt) + math.ulp(lb))
    return out + 2 * math.ulp(out)


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
        """H_{e^ε}(P‖Q) = P_∞ + Σ_j (p_j − e^ε q_j)_+, in rationals with e^ε = 2^m·e^{ε − m·ln 2}
        (floats)."""
        m = math.floor(check_finite("epsilon", epsilon) / math.log(2))
        gamma = Fraction(math.exp(epsilon - m * math.log(2))) * Fraction(2) ** m
        return float(
            self.infinity_mass
            + sum(p - gamma * q for p, q in zip(self.p, self.q, strict=False) if p > gamma * q)
        )

    def to_pld(self, value_discretization_interval: float = 1e-4):
        """The PLD of (P, Q) on the grid sℤ by connect-the-dots (Lemma 4): pessimistic everywhere
        and tight at the grid points.

        Returns a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``
        (dp_accounting is an optional dependency: the ``accounting`` extra of dpdro).
        """
        step = check_positive("value_discretization_interval", value_discretization_interval)
        from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

        grid = Fraction(step)
        scale = -math.expm1(-step)
        pmf = defaultdict(Fraction)
        for p, q in zip(self.p, self.q, strict=False):
            loss = Fraction(_log_up(p / q))
            b = math.ceil(loss / grid)
            above = float(loss - (b - 1) * grid)  # ℓ − as ∈ (0, s], correctly rounded
            theta = min(
                1.0, -math.expm1(-above) / scale * (1 + 1e-13)
            )  # rounded up (a few ulps suffice)
            pmf[b] += p * Fraction(theta)
            pmf[b - 1] += p * (1 - Fraction(theta))
        rounded = {i: float_up(m) for i, m in pmf.items() if m}
        return PrivacyLossDistribution.create_from_rounded_probability(
            rounded, float_up(self.infinity_mass), step, pessimistic_estimate=True
        )


def _lattice(noise, sensitivity: float):
    """(ticks, k, h) of the lattice :func:`dpdro.certify_delta` certifies on, or a ValueError."""
    lattice = find_lattice(noise, sensitivity)
    if lattice is None:
        raise ValueError(
            "noise must have its edges on a lattice hℤ with h dividing the sensitivity = "
            f"{sensitivity!r} (every solver noise has one: its grid); none was found for {noise!r}"
        )
    return lattice


def _roc_points(edges: list, dens: list, atom: int, total: int, s: int) -> list:
    """Vertices (x, y), scaled by ``total``, of the ROC curve of (X + sh, X) (Lemma 1's discrete
    pair).

    X is given by its cells on the lattice: ``edges`` (lattice ticks, relative to the first) and the
    mass ``dens[j]`` of every lattice cell of cell j. Between consecutive points of edges ∪ (edges +
    s) both laws are constant per lattice cell, so such a run of m lattice cells is one ROC segment
    of direction m·(q, p): the curve is found from O(number of cells) runs, whatever the lattice."""
    cuts = sorted(set(edges) | {e + s for e in edges})
    n = len(dens)
    y0 = atom  # the atom of X + sh, where X has no mass (s ≠ 0, or the limit pair at 0+)
    finite = []
    j = js = 0  # the cells of X and of X + sh containing the current run
    for a, b in zip(cuts[:-1], cuts[1:], strict=False):
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
    """Upper concave hull (monotone chain) of integer points, from the highest point at the smallest
    x."""
    best = {}
    for x, y in points:
        if y > best.get(x, -1):
            best[x] = y
    hull = []
    for x, y in sorted(best.items()):
        while len(hull) >= 2:
            (ox, oy), (ax, ay) = hull[-2], hull[-1]
            if (ax - ox) * (y - oy) - (ay - oy) * (
                x - ox
            ) >= 0:  # not a right turn: (ax, ay) is not a vertex
                hull.pop()
            else:
                break
        hull.append((x, y))
    return hull


def _interp(vertices: list, x: Fraction) -> Fraction:
    """The concave polygon through ``vertices`` at x (1 beyond its right end)."""
    for (x0, y0), (x1, y1) in zip(vertices[:-1], vertices[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return Fraction(1)


def _enlarge(vertices: list, tau_q: Fraction, tau_p: Fraction) -> list:
    """Vertices of R′(x) = min{1, R(x + τ_Q) + τ_P} on [0, 1] (Lemma 3)."""
    shifted = [(Fraction(0), _interp(vertices, tau_q))] + [
        (x - tau_q, y) for x, y in vertices if x > tau_q
    ]
    shifted.append((Fraction(1), Fraction(1)))
    out = []
    for (x0, y0), (x1, y1) in zip(shifted[:-1], shifted[1:], strict=False):
        out.append((x0, min(Fraction(1), y0 + tau_p)))
        if y0 + tau_p < 1 < y1 + tau_p:  # the cap is reached inside this edge
            out.append((x0 + (x1 - x0) * (1 - y0 - tau_p) / (y1 - y0), Fraction(1)))
    out.append((Fraction(1), Fraction(1)))
    return out


def _float_slack(
    noise, ticks: np.ndarray, k: int, h: float, sensitivity: float, masses: list
) -> tuple:
    """(τ_Q, τ_P) of Lemma 3, exact."""
    hh = Fraction(h)
    edges = [Fraction(float(e)) for e in noise.edges]
    ideal = [int(t) * hh for t in ticks]
    eta = [abs(e - t) for e, t in zip(edges, ideal, strict=False)]
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
        A noise whose edges lie on a lattice hℤ with h dividing Δf (every solver noise does: its
        grid).
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
    shifts = lattice_shifts(ticks, k)
    if shifts.size * 2 * (ticks.size + 1) > _MAX_POINTS:
        raise ValueError(
            f"the dominating pair would need more than {_MAX_POINTS} ROC points "
            f"({ticks.size - 1} cells, "
            f"sensitivity/step = {k} on the lattice step {h!r}); use a coarser grid"
        )
    # exact masses as integers over a common denominator `total` (module docstring, Exactness)
    probs = [Fraction(float(p)) for p in noise.probs]
    atom = Fraction(noise.atom)
    denominator = math.lcm(*(p.denominator for p in probs), atom.denominator)
    weights = [int(p * denominator) for p in probs]  # P_j
    S = sum(weights)
    L = math.lcm(*(w for w, p in zip(widths, weights, strict=False) if p))
    total = atom.denominator * S * L
    free = atom.denominator - atom.numerator  # (1 − a)·2^e
    dens = [
        free * p * (L // w) for p, w in zip(weights, widths, strict=False)
    ]  # mass of each lattice cell of cell j
    edges = [int(t - ticks[0]) for t in ticks]
    A = atom.numerator * S * L
    points = []
    for s in shifts.tolist():
        if s or A:
            points.extend(_roc_points(edges, dens, A, total, s))
    hull = [(Fraction(x, total), Fraction(y, total)) for x, y in _upper_hull(points)]
    masses = [(1 - atom) * Fraction(p, S) for p in weights]
    tau_q, tau_p = _float_slack(noise, ticks, k, h, sensitivity, masses)
    if tau_q or tau_p:
        hull = _enlarge(hull, tau_q, tau_p)
    p, q = [], []
    for (x0, y0), (x1, y1) in zip(hull[:-1], hull[1:], strict=False):
        if y1 > y0:  # x1 > x0: the first vertex is the only one at x = 0
            p.append(y1 - y0)
            q.append(x1 - x0)
    return DominatingPair(hull[0][1], tuple(p), tuple(q))


def aligned_interval(epsilon, max_interval=1e-4) -> float:
    """The largest discretisation interval s ≤ ``max_interval`` with ε = m·s for an integer m (up to
    one rounding of the float division): the PLD of Lemma 4 is then exact at ε, and at every
    multiple of it."""
    epsilon = check_positive("epsilon", epsilon)
    max_interval = check_positive("max_interval", max_interval)
    return epsilon / math.ceil(epsilon / max_interval)


def _interval(noise, value_discretization_interval) -> float:
    """The PLD's interval: the one given, else 1e-4 aligned with the ε the noise records in its
    metadata (every noise dpdro releases or reads from a file does; from optimal_noise's smallest
    ε, 1e-4, on: a smaller one would be the interval itself, a grid too fine), else 1e-4."""
    if value_discretization_interval is not None:
        return value_discretization_interval
    eps = getattr(noise, "metadata", {}).get("epsilon")
    usable = isinstance(eps, (int, float)) and not isinstance(eps, bool)
    return aligned_interval(eps) if usable and MIN_DESIGN_EPSILON <= eps < math.inf else 1e-4


def privacy_loss_distribution(noise, sensitivity, *, value_discretization_interval=None):
    """A pessimistic dp_accounting PLD of one release of ``noise`` at sensitivity Δf, valid for
    every shift.

    ``pld.self_compose(k)`` then accounts for k releases; ``get_epsilon_for_delta`` and
    ``get_delta_for_epsilon`` read the composed guarantee. The same PLD serves both adjacency
    directions (the family of shifts is closed under swapping the two laws), so it is symmetric.
    The discretisation is connect-the-dots (Lemma 4): δ(ε) is exact at multiples of the interval
    and an overestimate in between; :func:`aligned_interval` puts a chosen ε on the grid. By default
    the interval is 1e-4 aligned with the ε in ``noise.metadata`` (the ε it was designed and
    certified at), so that one release reports its certified δ there: at 1e-4 itself a noise
    certified at (1.763, 1.82e-6) had reported 1.06e-5, and one at (0.1639, 3.25e-10) 1.1e-5.
    """
    interval = _interval(noise, value_discretization_interval)
    return dominating_pair(noise, sensitivity).to_pld(interval)


def epsilon_for_composition(
    noise, sensitivity, k, delta, *, value_discretization_interval=None
) -> float:
    """The ε for which k releases of ``noise`` (sensitivity Δf each) are jointly (ε, δ)-DP, by PLD
    composition (the interval as in :func:`privacy_loss_distribution`).

    Returns ``math.inf`` when no finite ε reaches δ (the infinite-loss mass of the composition
    exceeds δ).
    """
    k = check_int("k", k, minimum=1)
    delta = check_open_unit("delta", delta)
    pld = privacy_loss_distribution(
        noise, sensitivity, value_discretization_interval=value_discretization_interval
    )
    return float((pld.self_compose(k) if k > 1 else pld).get_epsilon_for_delta(delta))


# ---------------------------------------------------------------------------- design for k releases
@dataclass(frozen=True)
class ReleasePlan:
    """One way to answer a query k times under a total (ε, δ) budget (see
    :func:`design_for_releases`).

    Attributes
    ----------
    mechanism : str
        ``"optimal_noise"`` (the same certified dpdro noise added to every answer) or
        ``"analytic_gaussian"`` (N(0, σ²) added to every answer).
    expected_loss : float
        E c(X) of one release.
    composed_delta : float
        δ of the k releases at the total ε: from the dominating-pair PLD composed k times (noise),
        or exactly (Gaussian); at most the total δ.
    epsilon, delta : float or None
        Noise: the per-release budget it was designed for and is certified at
        (``certify_delta(noise, epsilon, sensitivity) <= delta``). Gaussian: None.
    noise : PiecewiseUniform or None
        The noise to release with :class:`dpdro.SecureSampler` (at ``epsilon``, ``delta``).
    sigma : float or None
        The Gaussian's standard deviation.
    """

    mechanism: str
    expected_loss: float
    composed_delta: float
    epsilon: float | None = None
    delta: float | None = None
    noise: PiecewiseUniform | None = None
    sigma: float | None = None


@dataclass(frozen=True)
class CompositionDesign:
    """The result of :func:`design_for_releases`: the better of the two plans, and both.

    Attributes
    ----------
    k, epsilon, delta, sensitivity, loss
        The request: k releases, jointly (ε, δ)-DP, of a query of sensitivity Δf, under ``loss``.
    best : ReleasePlan
        The plan with the smaller expected loss per release.
    noise, gaussian : ReleasePlan or None
        The optimal-noise plan (None if no design composed to the budget) and the Gaussian plan.
    history : tuple of dict
        Every noise design tried: per-release ε and δ, its expected loss, and the ε and δ of its
        k-fold composition.
    """

    k: int
    epsilon: float
    delta: float
    sensitivity: float
    loss: object
    best: ReleasePlan
    noise: ReleasePlan | None
    gaussian: ReleasePlan
    history: tuple

    @property
    def mechanism(self) -> str:
        """The winner: ``"optimal_noise"`` or ``"analytic_gaussian"``."""
        return self.best.mechanism

    @property
    def ratio(self) -> float:
        """Expected loss of the optimal-noise plan over the Gaussian's (> 1: the Gaussian is
        better)."""
        return (
            math.inf
            if self.noise is None
            else self.noise.expected_loss / self.gaussian.expected_loss
        )


def _gaussian_plan(k: int, epsilon: float, delta: float, sensitivity: float, loss) -> ReleasePlan:
    """k releases of N(0, σ²) compose to one release at sensitivity √k·Δf, exactly (Dong, Roth and
    Su 2022, Corollary 3.3: σ at Δf is (Δf/σ)-GDP, and μ_i-GDP mechanisms compose to √(Σμ_i²)-GDP,
    whose (ε, δ) profile is Balle and Wang's formula): σ is the analytic Gaussian's at √k·Δf."""
    g = AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=math.sqrt(k) * sensitivity)
    composed = gaussian_delta(
        sigma=g.sigma, epsilon=epsilon, sensitivity=math.sqrt(k) * sensitivity
    )
    return ReleasePlan("analytic_gaussian", float(g.expected_loss(loss)), composed, sigma=g.sigma)


def _compose(
    noise,
    sensitivity: float,
    k: int,
    epsilon0: float,
    epsilon: float,
    delta: float,
    max_interval: float,
) -> tuple[float, float]:
    """(δ at the total ε, ε at the total δ) of k releases of ``noise``, the PLD aligned with ε₀."""
    pld = privacy_loss_distribution(
        noise, sensitivity, value_discretization_interval=aligned_interval(epsilon0, max_interval)
    )
    composed = pld.self_compose(k) if k > 1 else pld
    return float(composed.get_delta_for_epsilon(epsilon)), float(
        composed.get_epsilon_for_delta(delta)
    )


def _no_design(eps0: float, delta0: float, error: str) -> dict:
    """A history row of a per-release (ε₀, δ₀) that has no design (``error`` says why)."""
    return {"epsilon0": eps0, "delta0": delta0, "feasible": False, "error": error, "noise": None}


def _noise_plans(
    k, epsilon, delta, sensitivity, loss, split, *, rel_gap, time_limit, max_interval, tol, designs
):
    """Designs at δ₀ = split·δ/k and ε₀ searched upward from basic composition's ε/k (module
    docstring)."""
    delta0 = delta if k == 1 else split * delta / k
    if delta0 < MIN_DELTA:  # below optimal_noise's range: no design for this split
        why = f"delta0 = {delta0:g} is below optimal_noise's range ({MIN_DELTA:g})"
        yield _no_design(epsilon / k, delta0, why)
        return
    # (log ε₀, log ε_k) of the best feasible and of the smallest infeasible ε₀ tried
    ok, bad = None, None
    x, eps0 = math.log(epsilon / k), epsilon / k  # (ε/k itself: exp(log(10)) exceeds 10)
    for _ in range(designs):
        if not MIN_DESIGN_EPSILON <= eps0 <= MAX_DESIGN_EPSILON:  # no design from here on
            bounds = f"[{MIN_DESIGN_EPSILON:g}, {MAX_DESIGN_EPSILON:g}]"
            why = f"epsilon0 = {eps0:g} is outside optimal_noise's range {bounds}"
            yield _no_design(eps0, delta0, why)
            return
        res = optimal_noise(
            Problem(epsilon=eps0, delta=delta0, sensitivity=sensitivity, loss=loss),
            rel_gap=rel_gap,
            time_limit=time_limit,
        )
        try:  # one release is its own composition: its certificate, exact
            d_k, e_k = (
                (certify_delta(res.noise, epsilon, sensitivity), epsilon)
                if k == 1
                else _compose(res.noise, sensitivity, k, eps0, epsilon, delta, max_interval)
            )
        except ValueError as exc:  # a noise without a lattice has no dominating pair here
            yield {
                "epsilon0": eps0,
                "delta0": delta0,
                "feasible": False,
                "error": str(exc),
                "noise": res.noise,
            }
            return
        feasible = d_k <= delta
        yield {
            "epsilon0": eps0,
            "delta0": delta0,
            "expected_loss": res.noise.expected_loss(loss),
            "gap": float(res.gap),
            "composed_delta": d_k,
            "composed_epsilon": e_k,
            "feasible": feasible,
            "noise": res.noise,
        }
        if k == 1 or (feasible and e_k >= epsilon * (1 - tol)):
            return
        # log ε_k: −∞ where even ε = 0 meets δ (a large total δ: ε_k = 0), +∞ where no ε does
        point = (x, -math.inf if e_k <= 0 else math.log(e_k) if e_k < math.inf else math.inf)
        if feasible:
            ok = point
        else:
            bad = point if bad is None or x < bad[0] else bad
        x = _next_log_epsilon(ok, bad, math.log(epsilon))
        if x is None:
            return
        eps0 = min(math.exp(x), epsilon)  # (exp(log ε) may exceed ε)


def _next_log_epsilon(ok, bad, target: float) -> float | None:
    """The next log ε₀: a secant step on log ε_k(log ε₀) = log ε through the bracket's ends (slope 1
    from the feasible end alone, bisection when an end has no finite log ε_k), kept strictly inside
    the bracket; None when the bracket is narrower than 0.1%."""
    if ok is None:  # basic composition failed (the PLD's rounding): step down
        return bad[0] - 0.01
    if bad is None:  # (None once ε₀ is the total ε: a larger one cannot compose to it)
        x = min(ok[0] + (target - ok[1]), target)
        return x if x > ok[0] else None
    if bad[0] - ok[0] < 1e-3:
        return None
    if math.isfinite(bad[1]) and math.isfinite(ok[1]) and bad[1] > ok[1]:
        x = ok[0] + (target - ok[1]) * (bad[0] - ok[0]) / (bad[1] - ok[1])
    else:
        x = 0.5 * (ok[0] + bad[0])
    margin = 0.05 * (bad[0] - ok[0])
    return min(max(x, ok[0] + margin), bad[0] - margin)


def design_for_releases(
    k,
    epsilon,
    delta,
    sensitivity=1.0,
    loss="l2",
    *,
    splits=(0.05, 0.3, 0.9),
    rel_gap=0.01,
    time_limit=30.0,
    max_interval=1e-4,
    tol=2e-3,
    designs=8,
) -> CompositionDesign:
    r"""Noise for k releases of a query under a total (ε, δ) budget: optimal noise or Gaussian,
    whichever has the smaller expected loss per release, both certified by their composed privacy.

    Two plans are built and compared:

    * **Analytic Gaussian.** k releases of N(0, σ²) are jointly (ε, δ)-DP if and only if one release
      is at sensitivity √k·Δf (Gaussian differential privacy composes exactly), so σ is the analytic
      Gaussian's there and its composed δ is exact.
    * **Optimal noise.** For each δ split f in ``splits``, the per-release δ₀ = f·δ/k and ε₀ starts
      at basic composition's ε/k (feasible: k·δ₀ < δ); each candidate is the certified optimal noise
      at (ε₀, δ₀) (:func:`dpdro.optimal_noise` at ``rel_gap``), and k releases of it are accounted
      by the dominating pair's PLD composed k times (Lemmas 1–4; the interval aligned with ε₀). ε₀
      is then raised by secant steps on the composed ε until it is within ``tol`` of the total ε (or
      ``designs`` designs), keeping the best feasible one. Basic composition is never beaten by much
      at small k and small δ (an optimised noise is truncated, nearly pure DP: its composed ε grows
      almost linearly); at larger k and δ the search finds the sublinear part. For k = 1 the plan is
      the single-release design at (ε, δ).

    Parameters
    ----------
    k : int
        Number of releases (≥ 1), each of a query of sensitivity Δf, possibly chosen adaptively.
    epsilon, delta : float
        The total budget: the k releases together must be (ε, δ)-DP (ε > 0, δ in (0, 1)).
    sensitivity : float
        Δf > 0.
    loss : "l1", "l2" or a dpdro loss
        The per-release loss E c(X) both plans are compared by.
    splits : sequence of float in (0, 1]
        Fractions f of the total δ given to the k releases' per-release δ₀ = f·δ/k (the rest is the
        slack the composition of the finite privacy losses may use); a split whose δ₀ is below
        :data:`dpdro._range.MIN_DELTA`, or a per-release ε₀ outside optimal_noise's range
        [:data:`dpdro._range.MIN_DESIGN_EPSILON`, :data:`dpdro._range.MAX_DESIGN_EPSILON`], has no
        design (recorded in the history).
    rel_gap, time_limit : float
        Passed to every :func:`dpdro.optimal_noise` call (``time_limit`` per design, seconds).
    max_interval : float
        Largest PLD discretisation interval (aligned with each ε₀, :func:`aligned_interval`).
    tol, designs : float, int
        Stop the ε₀ search within the relative ``tol`` of the total ε, or after ``designs`` designs
        per split.

    Returns
    -------
    CompositionDesign
        ``best`` (and ``mechanism``: which won), both plans, ``ratio`` (noise over Gaussian) and the
        search history. The noise plan's ``noise`` is certified at its (ε₀, δ₀) and its k-fold
        composition at (ε, ``composed_delta`` ≤ δ).

    References
    ----------
    .. [1] J. Dong, A. Roth and W. Su, "Gaussian differential privacy", JRSS-B 2022, Corollary 3.3.
    .. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy",
       ICML 2018, Theorem 8.
    .. [3] Y. Zhu, J. Dong and Y.-X. Wang, "Optimal accounting of differential privacy via
       characteristic function", AISTATS 2022 (dominating pairs compose).
    .. [4] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization" (problem P, Observation 1: the single-release optimum).
    """
    k = check_int("k", k, minimum=1)
    epsilon = check_positive("epsilon", epsilon)
    delta = check_open_unit("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    loss_fn = make_loss(loss)
    check_scale(sensitivity, loss_fn.degree)
    try:
        splits = tuple(float(f) for f in splits)
    except (TypeError, ValueError):
        raise TypeError(f"splits must be a sequence of numbers in (0, 1], got {splits!r}") from None
    if not splits or not all(0 < f <= 1 for f in splits):
        raise ValueError(
            f"splits must be a non-empty sequence of numbers in (0, 1], got {splits!r}"
        )
    rel_gap = check_positive("rel_gap", rel_gap)
    max_interval = check_positive("max_interval", max_interval)
    tol = check_positive("tol", tol)
    designs = check_int("designs", designs, minimum=1)

    gaussian = _gaussian_plan(k, epsilon, delta, sensitivity, loss_fn)
    history, best_noise = [], None
    for split in splits if k > 1 else (1.0,):
        for row in _noise_plans(
            k,
            epsilon,
            delta,
            sensitivity,
            loss_fn,
            split,
            rel_gap=rel_gap,
            time_limit=time_limit,
            max_interval=max_interval,
            tol=tol,
            designs=designs,
        ):
            noise = row.pop("noise")
            history.append(row)
            better = (
                best_noise is None or row.get("expected_loss", math.inf) < best_noise.expected_loss
            )
            if row["feasible"] and better:
                best_noise = ReleasePlan(
                    "optimal_noise",
                    row["expected_loss"],
                    row["composed_delta"],
                    epsilon=row["epsilon0"],
                    delta=row["delta0"],
                    noise=noise,
                )
    best = (
        gaussian
        if best_noise is None or gaussian.expected_loss < best_noise.expected_loss
        else best_noise
    )
    return CompositionDesign(
        k, epsilon, delta, sensitivity, loss, best, best_noise, gaussian, tuple(history)
    )
