r"""Exact (ε, δ) certificates of a data-dependent mechanism, independent of any LP.

Noise mechanisms (``kind="noise"``, the paper's P′(π, β))
    The mechanism adds ``noises[l]`` when the query value lies in the piece [e_l, e_{l+1}). A noise
    may have an atom a_l at 0: for φ ≠ 0 it adds a_l to δ_{l,l′}(φ), and since every admissible
    range of φ is an open interval this is its contribution to the supremum as well. For each
    ordered pair (l, l′) the admissible shifts are φ ∈ (e_l′ − e_{l+1}, e_{l′+1} − e_l) ∩ [−Δf, Δf]
    (some ϕ in piece l has ϕ + φ in piece l′), and the smallest δ of the pair is the supremum over
    them of δ_{l,l′}(φ) = ∫ (p_l(y) − e^ε p_l′(y − φ))_+ dy.

Output mechanisms (``kind="output"``, :mod:`dpdro.data_dependent.output`)
    For ϕ in piece l the mechanism releases ϕ itself with probability a_l (``query_atoms``), the
    grid point g_i = e_0 + i·step with probability p_l(i) (``grid_masses``, i = 1 … K − 1) and
    otherwise e_0 + Z_l, Z_l ~ ``noises[l]`` (coordinates relative to the first edge, no atom at
    a grid point: the laws' own atoms sit at e_0). For query values ϕ ≠ ϕ′ in pieces l and l′ (gap
    between the pieces < Δf, l = l′ included) the smallest δ is

        δ_{l,l′} = a_l + Σ_i (p_l(i) − e^ε p_l′(i))₊ + ∫ (q_l − e^ε q_l′)₊

    with no shift at all (q_l the continuous part with its mass 1 − a_l − Σ_i p_l(i)). Proof: ∫ (dμ
    − e^ε dμ′)₊ of the two release laws splits into their atoms and their continuous parts. At a
    point other than ϕ the atoms are those of the grid (at ϕ′ the law μ′ has a′ more, which only
    lowers the term); at ϕ the term is (a_l + [ϕ = g_i](p_l(i) − e^ε p_l′(i)))₊ ≤ a_l + (p_l(i) −
    e^ε p_l′(i))₊. So the sum bounds every pair, and pairs off the grid (an open set of them in
    every pair of pieces with a gap < Δf) attain it. The laws q do not depend on where ϕ lies in
    its piece.

Both are computed with the lattice sum of :mod:`dpdro.privacy`
(:func:`~dpdro.privacy.hockey_stick_sums` on the masses per lattice cell, with its rigorous
floating-point error bound), so a family and a single noise are certified by the same arithmetic.
Releasing clamp(Y) = min(max(Y, e_0), e_M) instead of Y is post-processing: the certificate of Y
holds for it.

One noise on one piece
    A noise mechanism with a single piece adds the same X to every query value (the clamped
    data-independent anchor of :mod:`~dpdro.data_dependent.anchors`): :func:`certify_delta` gives
    the data-independent certificate of X at sensitivity min(|Φ|, Δf), exact and free of the
    lattice of the piece edges, which the range of such a noise need not share.

Scale-free
    The pairs and shifts come from the piece edges *relative to the first one*, in lattice ticks.
    Given as exact ticks (``edge_ticks``, with their step), nothing in the certificate depends on
    where the range lies: a family moved to edges near 10⁶ or 10¹² certifies exactly as at 0, bit
    for bit. Every released family carries its edges so (the LPs and the laws are in coordinates
    relative to φ_lo already), so it certifies at δ itself wherever Φ lies, and
    :meth:`Mechanism.piece` decides the piece of a query value next to a rounded float edge
    exactly against e_0 + t_l·step: the pieces the certificate speaks of. Given as floats, the
    edges' offset from the lattice is computed exactly and charged to the error bound (about 1e-8
    at |edges| ≈ 10⁶ for ε = 3, more than the room of δ·1e-9 a released LP solution keeps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._rounding import UNIT_ROUNDOFF as _U
from .._rounding import exp_down, float_up
from .._validation import check_positive
from ..noise import PiecewiseUniform
from ..privacy import certify_delta as independent_certify_delta
from ..privacy import (
    check_epsilon,
    find_lattice,
    hockey_stick_sums,
    lattice_error_bound,
    lattice_masses,
    lattice_offset,
    total_variation,
)

__all__ = ["PrivacyProfile", "privacy_profile", "certify_delta", "check_grid_masses"]


@dataclass(frozen=True)
class PrivacyProfile:
    """max over admissible shifts of δ_{l,l′}(φ) = ∫ (p_l(y) − e^ε p_l′(y − φ))_+ dy for every
    pair."""

    pairs: np.ndarray  # (n, 2)
    deltas: np.ndarray  # worst δ of each pair (computed)
    worst_phi: np.ndarray
    error_bound: float  # bound on |computed − exact| for every δ_{l,l′}(φ)

    @property
    def delta(self) -> float:
        if self.deltas.size == 0:
            return 0.0
        return float(np.nextafter(float(np.max(self.deltas)) + self.error_bound, np.inf))

    @property
    def worst_pair(self) -> tuple[int, int]:
        return tuple(int(v) for v in self.pairs[int(np.argmax(self.deltas))])


def privacy_profile(
    noises: Sequence[PiecewiseUniform],
    piece_edges,
    epsilon: float,
    sensitivity: float,
    *,
    kind: str = "noise",
    query_atoms=None,
    edge_ticks=None,
    edge_step: float | None = None,
    grid_masses=None,
) -> PrivacyProfile:
    """Exact privacy profile of a data-dependent mechanism (module docstring): the largest δ of
    every ordered pair of pieces.

    For noise mechanisms δ_{l,l′}(φ) is continuous and piecewise affine with breakpoints on the
    noises' common lattice, so its supremum over the admissible shifts is its maximum over the
    lattice points of the closed range; output mechanisms need no shift. Computed from the
    densities alone (no LP), with a rigorous floating-point error bound as in :mod:`dpdro.privacy`.

    Parameters
    ----------
    noises : one :class:`dpdro.PiecewiseUniform` per piece, on commensurable lattices (output
        mechanisms: the laws Z_l relative to the first edge).
    piece_edges : the M + 1 edges of the pieces of Φ.
    epsilon, sensitivity : ε > 0 and Δf > 0.
    kind : ``"noise"`` (Y = ϕ + X_l) or ``"output"`` (Y = e_0 + Z_l, or ϕ with probability a_l).
    query_atoms : a_l per piece (output mechanisms; default 0).
    grid_masses : p_l(i) of the grid points e_0 + i·``edge_step``, i = 1 … K − 1 (output
        mechanisms with ``edge_ticks``, K their last; default none).
    edge_ticks, edge_step : the piece edges relative to the first one exactly, as integers times
        ``edge_step`` (default: inferred from the floats, their offset charged to the error bound).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 2 and Appendix C.3 (the constraints of P′).
    """
    noises = list(noises)
    if not noises or not all(isinstance(n, PiecewiseUniform) for n in noises):
        raise TypeError("noises must be a non-empty sequence of dpdro.PiecewiseUniform")
    if kind not in ("noise", "output"):
        raise ValueError(f"kind must be 'noise' or 'output', got {kind!r}")
    if kind == "noise" and (query_atoms is not None or grid_masses is not None):
        raise ValueError("query_atoms and grid_masses belong to output mechanisms")
    e = np.asarray(piece_edges, dtype=float)
    # given exactly in ticks, the edges may round to equal floats far from 0
    increasing = np.diff(e) >= 0 if edge_ticks is not None else np.diff(e) > 0
    if e.ndim != 1 or e.size != len(noises) + 1 or not np.all(increasing):
        raise ValueError(
            f"piece_edges must be {len(noises) + 1} strictly increasing values, got {e.tolist()}"
        )
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    ticks, h = _common_lattice(noises, sensitivity)
    kd = int(round(sensitivity / h))
    lo = min(int(t[0]) for t in ticks)
    n = max(int(t[-1]) for t in ticks) - lo
    G = np.zeros((len(noises), n))  # masses per lattice cell, one row per noise
    for i, (nz, t) in enumerate(zip(noises, ticks, strict=False)):
        G[i, t[0] - lo : t[-1] - lo] = lattice_masses(nz, t)
    et, eta_phi = _edge_ticks(e, h, edge_ticks, edge_step)
    atoms = np.array([nz.atom for nz in noises])
    e_lo = exp_down(epsilon)
    if kind == "noise":
        L1, L2, s_lo, s_hi = _pairs(et, len(noises), kd)
        best, best_err, best_s = _worst_shifts(G, L1, L2, s_lo, s_hi, kd, e_lo)
        # atoms at 0: for φ ≠ 0 the atom a_l is in every worst event, and every admissible range is
        # an open interval (φ ≠ 0 arbitrarily close to each of its points), so δ_{l,l′} = a_l +
        # the continuous part
        best = best + atoms[L1]
    else:
        a = np.zeros(len(noises)) if query_atoms is None else np.asarray(query_atoms, float)
        if a.shape != (len(noises),) or np.any(a < 0) or np.any(a > 1):
            raise ValueError(f"query_atoms must be {len(noises)} values in [0, 1], got {a}")
        strict = eta_phi == 0 and kd * _exact_tick(h, edge_ticks, edge_step) >= Fraction(
            sensitivity
        )
        L1, L2 = _output_pairs(et, len(noises), kd, strict=strict)
        g = check_grid_masses(grid_masses, a, edge_ticks)
        # the release law is a_l·(point ϕ) + Σ_i p_l(i)·(point g_i) + (1 − a_l − Σ_i p_l(i))·Z_l
        rest = np.clip(1.0 - a - g.sum(axis=1), 0.0, None)
        G = G * rest[:, None]
        atoms = atoms * rest
        best, best_err = _output_sums(G, g, L1, L2, e_lo)
        # the laws' own atoms sit at the same point e_0 for every piece
        best = best + np.maximum(atoms[L1] - e_lo * atoms[L2], 0.0) + a[L1]
        best_s, eta_phi = np.zeros(L1.size, dtype=np.int64), 0.0
        # the scaling by 1 − a_l − Σ p_l: a few more roundings per term, and the sum over the grid
        # points (terms of at most p + e^ε p′, p and p′ summing to at most 1), each within
        # (P + 4)·u·(1 + e^ε) in every sum
        best_err = best_err + (g.shape[1] + 4) * _U * (1.0 + math.exp(epsilon))
        atoms = np.maximum(atoms, a)
    err = _error_bound(noises, ticks, h, best, best_err, n, kd, epsilon, sensitivity, eta_phi)
    if np.any(atoms > 0):
        err += 2 * _U * (float(np.max(best)) + 1.0)  # the addition of the atoms
    return PrivacyProfile(np.column_stack((L1, L2)), best, best_s * h, float(err))


def _output_sums(G: np.ndarray, g: np.ndarray, L1, L2, e_lo: float):
    """Σ_cells (G_l − e^ε G_l′)₊ + Σ_i (p_l(i) − e^ε p_l′(i))₊ for every pair (l, l′) = (L1, L2),
    and the lattice sums' error bounds, in chunks of a few million terms."""
    best, best_err = np.zeros(L1.size), np.zeros(L1.size)
    step = max(1, 4_000_000 // max(1, G.shape[1] + g.shape[1]))
    for c in range(0, L1.size, step):
        sl = slice(c, c + step)
        best[sl], best_err[sl] = hockey_stick_sums(G[L1[sl]], G[L2[sl]], e_lo)
        best[sl] += np.maximum(g[L1[sl]] - e_lo * g[L2[sl]], 0.0).sum(axis=1)
    return best, best_err


def _edge_ticks(e: np.ndarray, h: float, edge_ticks, edge_step) -> tuple[np.ndarray, float]:
    """The piece edges relative to the first one in ticks of h, and their offset from the lattice
    (0 when given exactly)."""
    if edge_ticks is not None:
        t = np.asarray(edge_ticks)
        if edge_step is None or t.shape != e.shape or not np.issubdtype(t.dtype, np.integer):
            raise ValueError("edge_ticks must be integers, one per piece edge, with edge_step")
        r = float(edge_step) / h
        if abs(r - round(r)) > 1e-9 * max(1.0, r):
            raise ValueError("edge_step must be a multiple of the noises' lattice step")
        t = (t - t[0]) * int(round(r))
        if np.any(np.diff(t) <= 0):
            raise ValueError("edge_ticks must be strictly increasing")
        return t.astype(np.int64), 0.0
    et = np.round((e - e[0]) / h).astype(np.int64)
    # the admissible shifts come from the piece edges relative to the first one, checked exactly
    eta_phi = lattice_offset(e, et, h, origin=e[0])
    if eta_phi > 1e-6 * h:
        raise ValueError("piece_edges must lie on the noises' lattice (relative to piece_edges[0])")
    return et, eta_phi


def _exact_tick(h: float, edge_ticks, edge_step) -> Fraction:
    """The length of one tick of the piece edges in :func:`_edge_ticks` (exactly: the edges are
    e_0 + ticks·this): edge_step over its whole number of lattice steps h when the edges are given
    in ``edge_ticks``, h itself when they lie on the lattice exactly."""
    if edge_ticks is None:
        return Fraction(h)
    return Fraction(float(edge_step)) / round(float(edge_step) / h)


def _common_lattice(
    noises: list[PiecewiseUniform], sensitivity: float
) -> tuple[list[np.ndarray], float]:
    """The edges of every noise in ticks of the finest of their lattices, and that lattice step
    h."""
    lats = [find_lattice(n, sensitivity) for n in noises]
    if any(lat is None for lat in lats):
        raise ValueError(
            "every noise needs edges on a lattice whose step divides the sensitivity (give a grid)"
        )
    h = min(lat[2] for lat in lats)
    ticks = []
    for t, _, hh in lats:
        r = hh / h
        if abs(r - round(r)) > 1e-9:
            raise ValueError("the noises' lattices are incommensurable")
        ticks.append(t * int(round(r)))
    return ticks, h


def check_grid_masses(grid_masses, a: np.ndarray, edge_ticks) -> np.ndarray:
    """The grid masses p_l(i) of an output mechanism checked against its query atoms ``a`` and
    edge ticks: M × (K − 1) probabilities, K the last edge tick, at most 1 per piece with the
    query atom (``None``: M × 0)."""
    M = a.size
    if grid_masses is None:
        return np.zeros((M, 0))
    if edge_ticks is None:
        raise ValueError("grid_masses need the piece edges in edge_ticks (their grid)")
    g = np.array(grid_masses, dtype=float)  # a copy: the mechanism freezes it
    shape = (M, int(edge_ticks[-1]) - int(edge_ticks[0]) - 1)
    if g.shape != shape or np.any(~(g >= 0)) or np.any(a + g.sum(axis=1) > 1 + 1e-12):
        raise ValueError(
            f"grid_masses must be {shape} probabilities, at most 1 with the query atom per piece"
        )
    return g


def _pairs(et: np.ndarray, M: int, kd: int):
    """Every ordered pair of pieces (l, l′) with an admissible shift, and its range of lattice
    shifts s_lo … s_hi (``et``: the piece edges in ticks)."""
    L1, L2 = np.meshgrid(np.arange(M), np.arange(M), indexing="ij")
    L1, L2 = L1.ravel(), L2.ravel()
    s_lo = np.maximum(et[L2] - et[L1 + 1], -kd)
    s_hi = np.minimum(et[L2 + 1] - et[L1], kd)
    keep = s_lo <= s_hi
    return L1[keep], L2[keep], s_lo[keep], s_hi[keep]


def _output_pairs(et: np.ndarray, M: int, kd: int, *, strict: bool):
    """Every ordered pair of pieces containing query values at distance ≤ Δf: gap < Δf, i.e. a gap
    below kd ticks when kd ticks are at least Δf exactly (``strict``); a gap of at most kd ticks
    otherwise (the edges only known up to a rounding offset, or a tick a float just short of
    Δf/kd, e.g. float(1/12) with Δf = 1/2: six such ticks are shorter than Δf, so pieces six ticks
    apart hold query values at distance below Δf)."""
    L1, L2 = np.meshgrid(np.arange(M), np.arange(M), indexing="ij")
    L1, L2 = L1.ravel(), L2.ravel()
    gap = np.maximum(et[L2] - et[L1 + 1], et[L1] - et[L2 + 1])
    keep = gap < kd if strict else gap <= kd
    return L1[keep], L2[keep]


def _worst_shifts(G: np.ndarray, L1, L2, s_lo, s_hi, kd: int, e_lo: float):
    """For every pair, the largest hockey-stick sum over its lattice shifts (with its rounding-error
    term and the shift that attains it), ``G`` the lattice masses of the noises."""
    M, n = G.shape
    best = np.full(L1.size, -np.inf)
    best_err = np.zeros(L1.size)
    best_s = np.zeros(L1.size, dtype=np.int64)
    pad = np.concatenate((np.zeros((M, kd)), G, np.zeros((M, kd))), axis=1)
    idx = np.arange(n)
    for s in range(-kd, kd + 1):
        sel = np.nonzero((s_lo <= s) & (s <= s_hi))[0]
        if sel.size == 0:
            continue
        shifted = pad[:, kd + idx - s]  # g_{l′}(i − s)
        step = max(1, 4_000_000 // max(1, n))
        for c in range(0, sel.size, step):
            ss = sel[c : c + step]
            d, terr = hockey_stick_sums(G[L1[ss]], shifted[L2[ss]], e_lo)
            better = d + terr > best[ss] + best_err[ss]
            best[ss[better]] = d[better]
            best_err[ss[better]] = terr[better]
            best_s[ss[better]] = s
    return best, best_err, best_s


def _error_bound(
    noises,
    ticks,
    h: float,
    best,
    best_err,
    n: int,
    kd: int,
    epsilon: float,
    sensitivity: float,
    eta_phi: float,
) -> float:
    """That of :mod:`dpdro.privacy` for the edges of both noises of a pair (2·n_edges, twice the
    total variation), plus the Lipschitz constant of φ ↦ δ(φ) times the offset of the piece edges,
    plus the addition of the atoms."""
    max_dens = max(float(np.max(nz.densities)) for nz in noises)
    n_edges = max(t.size for t in ticks)
    eta = max(lattice_offset(nz.edges, t, h) for nz, t in zip(noises, ticks, strict=False))
    tv = max(total_variation(nz) for nz in noises)
    dmax = float(np.max(best)) if best.size else 0.0
    terr = float(np.max(best_err)) if best.size else 0.0
    err = lattice_error_bound(
        terr,
        dmax,
        n,
        eta + lattice_offset([sensitivity], [kd], h),
        min(2 * 2 * n_edges * max_dens, (1.0 + math.exp(epsilon)) * 2 * tv),
    )
    err += math.exp(epsilon) * min(2 * 2 * n_edges * max_dens, 2 * tv) * eta_phi
    return err


def certify_delta(
    noises: Sequence[PiecewiseUniform], piece_edges, epsilon: float, sensitivity: float, **kwargs
) -> float:
    """The smallest δ for which the data-dependent mechanism is (ε, δ)-DP (rounded up); see
    :func:`privacy_profile` (whose keyword arguments ``kind``, ``query_atoms``, ``edge_ticks`` and
    ``edge_step`` it accepts), and for one noise on one piece :func:`dpdro.certify_delta` at
    sensitivity min(|Φ|, Δf) (:func:`_width_up`).

    Parameters
    ----------
    noises : one :class:`dpdro.PiecewiseUniform` per piece.
    piece_edges : the M + 1 edges of the pieces of Φ.
    epsilon, sensitivity : ε > 0 and Δf > 0.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 2 (the constraints of P′ between the noises of
       query values ϕ and ϕ + φ).
    """
    noises = list(noises)
    if kwargs.get("kind", "noise") == "noise" and len(noises) == 1:
        width = _width_up(piece_edges, kwargs.get("edge_ticks"), kwargs.get("edge_step"))
        if width is not None:
            return independent_certify_delta(
                noises[0], epsilon, min(width, check_positive("sensitivity", sensitivity))
            )
    return privacy_profile(noises, piece_edges, epsilon, sensitivity, **kwargs).delta


def _width_up(piece_edges, edge_ticks, edge_step) -> float | None:
    """The width w of a one-piece range Φ = [e_0, e_1), rounded up; ``None`` unless it is two
    finite increasing edges (the family certificate then says what is wrong).

    One noise X added to every query value: the pairs of query values (ϕ, ϕ + φ) in Φ with |φ| ≤ Δf
    have the shifts |φ| < w, |φ| ≤ Δf, so the family's δ is the data-independent certificate of X at
    sensitivity min(w, Δf) (the supremum over |φ| < w equals the maximum over |φ| ≤ w: δ(φ) is
    continuous away from 0, and an atom at 0 counts for every φ ≠ 0), exact for every range at
    least Δf wide, wherever its edges lie. The lattice of the family certificate needs edges on the
    noise's lattice, which the range of a data-independent noise need not be.
    """
    e = np.asarray(piece_edges, dtype=float)
    if e.shape != (2,) or not np.all(np.isfinite(e)):
        return None
    if edge_ticks is not None:
        t = np.asarray(edge_ticks)
        if t.shape != (2,) or edge_step is None:
            return None
        exact = Fraction(float(edge_step)) * (int(t[1]) - int(t[0]))
    else:
        exact = Fraction(float(e[1])) - Fraction(float(e[0]))
    return float_up(exact) if exact > 0 else None
