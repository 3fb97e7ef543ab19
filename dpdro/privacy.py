r"""Exact (ε, δ) certification of piecewise-constant noise, independent of any LP.

For additive noise with density p and sensitivity Δf, the smallest δ for which the mechanism is
(ε, δ)-DP is (Observation 1, with the worst event A = {p(y) > e^ε p(y − φ)})

    δ(ε) = max_{|φ| ≤ Δf} δ(φ),    δ(φ) = ∫ (p(y) − e^ε·p(y − φ))_+ dy.

For a piecewise-constant p, δ(φ) is piecewise affine in φ with breakpoints at differences of cell
edges (Lemma A.3 for the uniform grid, Lemma C.16 in general), so the maximum is attained at such a
difference or at ±Δf. When every edge is a multiple of a lattice step h with Δf ≈ k·h, the
breakpoints are multiples of h and δ(s·h) = Σ_i (g_i − e^ε g_{i−s})_+ with g the mass per
lattice cell, at every |s| ≤ k or, when they are fewer, at the differences of edges and ±k (when
k·h ≥ Δf exactly, these cover every shift |φ| ≤ Δf; otherwise the shortfall is paid for in the
error bound); otherwise every pairwise edge difference in [−Δf, Δf] is tried (found run by run
in the sorted edges, so memory grows with the differences kept, not with the square of the number
of edges).

A noise with an atom γ({0}) = a (``PiecewiseUniform.atom``) and cell density p has, for φ ≠ 0,

    δ(φ) = sup_A γ(A) − e^ε γ(A − φ) = a + ∫ (p(y) − e^ε·p(y − φ))_+ dy,

because the worst event contains the point 0 (gaining a) and not the point φ (whose image A − φ
would contain the atom), and changing A at two points does not change the integrals of p. So a is
added to δ(φ) at every shift φ ≠ 0 (δ(0) = 0).

All sums are done in floating point and the result is rounded **up** by a rigorous bound on the
rounding error (e^ε is rounded down; see the comments in the code for the bound, which does not grow
with e^ε), so the returned δ is never below the true value and exceeds it by ~1e-15·(number of
cells) at most.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._rounding import UNIT_ROUNDOFF as _U
from ._rounding import exp_down
from ._validation import check_positive
from .noise import PiecewiseUniform

__all__ = ["certify_delta", "privacy_profile", "PrivacyProfile", "find_lattice", "lattice_masses",
           "lattice_shifts",
           "hockey_stick_sums", "lattice_error_bound", "sensitivity_shortfall"]


@dataclass(frozen=True)
class PrivacyProfile:
    """δ(φ) at the candidate shifts φ (the breakpoints of the piecewise-affine function φ ↦
    δ(φ))."""

    phis: np.ndarray
    deltas: np.ndarray
    error_bound: np.ndarray  # per shift: bound on |computed − exact| δ(φ)
    method: str  # "lattice", "breakpoints" or "disjoint" (Δf beyond the cells' span: δ = 1)

    @property
    def delta(self) -> float:
        """The certified smallest δ: the maximum over shifts of δ(φ) plus its rounding-error
        bound, at most 1 (δ(φ) is a difference of probabilities)."""
        return min(1.0, float(np.nextafter(float(np.max(self.deltas + self.error_bound)), np.inf)))

    @property
    def worst_phi(self) -> float:
        return float(self.phis[int(np.argmax(self.deltas))])


# ---------------------------------------------------------------------------- the lattice sum
# (shared with dpdro.data_dependent.privacy, which certifies families of noises with the same
# arithmetic)
# A lattice searched for (no ``grid`` given) is accepted with at most this many cells per edge, and
# at least _MIN_LATTICE_CELLS: a generic float edge lies within the tolerance below of some fraction
# with a denominator ≤ 2^20, and the spurious lattice it implies can have 10^8 or more cells, which
# the lattice sum would never finish; the breakpoint method needs no lattice and is fast for few
# edges.
_LATTICE_CELLS_PER_EDGE = 64
_MIN_LATTICE_CELLS = 4096


def find_lattice(
    noise: PiecewiseUniform, sensitivity: float
) -> tuple[np.ndarray, int, float] | None:
    """Integer ticks, k = Δf/h and h for a lattice containing every edge and Δf, if one is found.

    With ``noise.grid`` the lattice is that grid. Otherwise one is searched for, and rejected (None:
    :func:`privacy_profile` then uses the breakpoint method) when it has more than
    max(4096, 64 × number of edges) cells.
    """
    if noise.grid is not None:
        h, ticks = noise.grid, np.round(noise.edges / noise.grid).astype(np.int64)
    else:
        # look for h = Δf / K with every edge a multiple of h
        scaled = [Fraction(float(e) / sensitivity).limit_denominator(1 << 20) for e in noise.edges]
        K = 1
        for f in scaled:
            K = K * f.denominator // math.gcd(K, f.denominator)
            if K > 1 << 20:
                return None
        h = sensitivity / K
        ticks = np.round(noise.edges / h).astype(np.int64)
    for refine in range(1, 65):  # Δf must be a multiple of the lattice step too
        k = sensitivity / (h / refine)
        # (k = 0 is no multiple: with Δf far below the grid only the shift 0 was checked, and a
        # staircase on its grid with an atom of 2.2e-4 was certified at δ = 3e-12 for Δf = 1e-12)
        if round(k) >= 1 and abs(k - round(k)) <= 1e-9 * max(1.0, k):
            h, ticks, k = h / refine, ticks * refine, int(round(k))
            break
    else:
        return None
    if noise.grid is None and ticks[-1] - ticks[0] > max(
        _MIN_LATTICE_CELLS, _LATTICE_CELLS_PER_EDGE * ticks.size
    ):
        return None
    if np.max(np.abs(noise.edges - ticks * h)) > 8 * _U * max(
        1.0, float(np.max(np.abs(noise.edges)))
    ):
        return None
    return ticks, k, h


def lattice_masses(noise: PiecewiseUniform, ticks: np.ndarray) -> np.ndarray:
    """g: the mass of the cells (normalised to 1 − atom) per lattice cell, over ticks[0] …
    ticks[-1]."""
    # (bit-identical to p / Σp without atom)
    probs = noise.probs / (noise.probs.sum() / (1.0 - noise.atom))
    widths = np.diff(ticks)
    return np.repeat(probs / widths, widths)


def hockey_stick_sums(
    g: np.ndarray, shifted: np.ndarray, exp_epsilon_down: float, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Σ_i (g_i − e^ε·g′_i)₊ along the last axis: δ(φ) of the lattice masses g against masses g′ on
    the same lattice shifted by φ (``shifted[..., i]`` = g′_{i−s}), with e^ε rounded down
    (``dpdro._rounding.exp_down``), and a bound on the floating-point error of those sums' terms.

    One term's computed value differs from the exact one by at most 8.2u·max(g_i, e^ε g′_i) (the
    normalisation of g, the product and the difference). A term contributes to the error only if its
    exact value can be positive, i.e. if the computed difference exceeds minus that amount:
    near-ties g_i ≈ e^ε g′_i count, clearly negative terms do not. So the error of a sum is at most
    the sum of 8.2u·max(g_i, e^ε g′_i) over those terms, which is tiny for noises whose worst
    events are few cells with small mass (e.g. the tails of noise for δ = 1e-12).

    ``weights`` (integers, as floats) count each term that many times: runs of equal terms. The
    product with an integer below 2^53 adds one rounding, covered by the sum's own allowance
    (:func:`lattice_error_bound` counts every lattice cell as a term)."""
    other = exp_epsilon_down * shifted
    terms = g - other
    tol = 8.2 * _U * np.maximum(g, other)
    pos, near = np.maximum(terms, 0.0), np.where(terms > -tol, tol, 0.0)
    if weights is not None:
        pos, near = weights * pos, weights * near
    return pos.sum(axis=-1), near.sum(axis=-1)


def lattice_offset(values, ticks: np.ndarray, h: float, origin: float = 0.0) -> float:
    """η = max_j |values_j − (origin + ticks_j·h)|, computed exactly from the floats (0 when every
    value lies exactly on the lattice) and rounded up.

    A float filter first: the computed residual r_j = values_j − (origin + ticks_j·h) is within
    e_j = 4.5u·(|ticks_j·h| + |origin + ticks_j·h| + |r_j|) + 3·2^−1074 of the exact one (three
    roundings, subnormals included), so only the j with |r_j| + e_j ≥ max_i (|r_i| − e_i) can
    attain the maximum. Those are evaluated exactly in integers: every float is an integer times a
    power of two (:func:`_dyadic`), so at the smallest exponent E among them the residual is an
    integer times 2^E. (Exact rationals on every edge took seconds per call on noises with 10⁴
    edges whose floats have long binary expansions, e.g. at Δf = 1e-9.)"""
    v = np.ravel(np.asarray(values, dtype=float))
    t = np.ravel(np.asarray(ticks))
    if v.size == 0:
        return 0.0
    on = float(origin) + t.astype(float) * float(h)
    r = np.abs(v - on)
    e = 4.5 * _U * (np.abs(t.astype(float) * float(h)) + np.abs(on) + r) + 3 * 5e-324
    candidates = np.nonzero(r + e >= np.max(r - e))[0]
    candidates = candidates[~_exactly_on(v[candidates], t[candidates], float(h), float(origin))]
    if candidates.size == 0:
        return 0.0
    parts = [_dyadic(float(x)) for x in (origin, h)] + [_dyadic(float(v[j])) for j in candidates]
    low = min(ex for _, ex in parts)
    (mo, eo), (mh, eh) = parts[:2]
    o_int, h_int = mo << (eo - low), mh << (eh - low)
    worst = max(
        abs((m << (ex - low)) - o_int - int(t[j]) * h_int)
        for (m, ex), j in zip(parts[2:], candidates, strict=True)
    )
    if worst == 0:
        return 0.0
    return float(np.nextafter(float(Fraction(worst) * Fraction(2) ** low), np.inf))


# |x| within which Veltkamp's splitting and the error-free sum and product below are exact
_EFT_RANGE = (2.0**-900, 2.0**900)


def _exactly_on(v: np.ndarray, t: np.ndarray, h: float, origin: float) -> np.ndarray:
    """Where v_j = origin + t_j·h exactly, proven in floats (False: not proven, either way).

    Error-free transformations (Dekker's product with Veltkamp's splitting, Knuth's sum) give
    t_j·h = p + e_p and origin + p = s + e_s exactly while no intermediate leaves
    :data:`_EFT_RANGE` and t_j is an exact float: then e_p = e_s = 0 and v_j = s prove it. This
    settles in vectorised arithmetic the common case of edges exactly on their lattice (the
    truncated Laplace candidate at ε = 1e-4, δ = 1e-9 has 354k of them, which took 0.5 s one by one
    in integers)."""
    tf = t.astype(float)
    p = tf * h
    lo, hi = _EFT_RANGE
    ok = tf.astype(t.dtype) == t
    for x in (tf, np.full_like(tf, h), p, np.full_like(tf, origin), v):
        a = np.abs(x)
        ok &= (a < hi) & ((a > lo) | (a == 0.0))
    with np.errstate(all="ignore"):
        c = 134217729.0  # 2^27 + 1
        t_hi = c * tf - (c * tf - tf)
        h_hi = c * h - (c * h - h)
        t_lo, h_lo = tf - t_hi, h - h_hi
        e_p = ((t_hi * h_hi - p) + t_hi * h_lo + t_lo * h_hi) + t_lo * h_lo
        s = origin + p
        bb = s - origin
        e_s = (origin - (s - bb)) + (p - bb)
    return ok & (e_p == 0.0) & (e_s == 0.0) & (v == s)


def _dyadic(x: float) -> tuple[int, int]:
    """(m, e) with x = m·2^e exactly, m an integer (0 for x = 0)."""
    mantissa, exponent = math.frexp(x)
    return int(mantissa * (1 << 53)), exponent - 53


def lattice_error_bound(term_errors, deltas, n_cells: int, drift: float, drift_weight: float):
    """A bound on |computed − exact| δ(φ) for :func:`hockey_stick_sums` on ``n_cells`` lattice
    cells of width h.

    ``term_errors`` bounds the terms' floating-point errors (:func:`hockey_stick_sums`); the
    normalisation Σ p and the sum of n non-negative terms add 2.02·n·u·δ(φ). ``drift`` bounds how
    far the float edges lie from ticks·h (η, :func:`lattice_offset`, 0 on an exact lattice) plus how
    far the shifts to cover lie beyond the lattice's (:func:`sensitivity_shortfall` for additive
    noise); moving the edges and the shift by at most that drift changes δ(φ) by at most the drift
    times ``drift_weight`` (:func:`edge_drift_weight`).
    """
    err = term_errors + 2.02 * n_cells * _U * np.asarray(deltas)
    if drift > 0:
        err = err + drift * drift_weight
    return err


def sensitivity_shortfall(sensitivity: float, k: int, h: float) -> float:
    """max(0, Δf − k·h), computed exactly and rounded up: how far shifts |φ| ≤ Δf reach beyond the
    lattice shifts |s·h| ≤ k·h. When k·h ≥ Δf it is 0: every breakpoint of φ ↦ δ(φ) in [−k·h, k·h]
    is a lattice shift, so the lattice profile's maximum bounds δ(φ) over |φ| ≤ Δf too (a mechanism
    private for shifts up to k·h is private for the smaller Δf)."""
    if Fraction(k) * Fraction(h) >= Fraction(sensitivity):
        return 0.0
    return lattice_offset([sensitivity], [k], h)


def edge_drift_weight(noise: PiecewiseUniform, exp_epsilon: float) -> float:
    """How fast δ(φ) can move when every edge (and the shift) moves by at most η: a factor w with
    |Δδ(φ)| ≤ η·w.

    Moving an edge whose density jump is J by η changes the integrand (p(y) − e^ε p(y − φ))₊ only on
    an interval of length η next to that edge, by at most |J|, and on one next to its image y + φ,
    by at most min(e^ε|J|, max density) (the integrand never exceeds p(y)). Summed over the edges:
    w = Σ_j |J_j| + min(e^ε|J_j|, max p), rounded up; this is at most the cruder bounds
    2·(number of edges)·max p and (1 + e^ε)·(total variation).
    """
    d = noise.densities / (noise.probs.sum() / (1.0 - noise.atom))
    jumps = np.abs(np.diff(np.concatenate(([0.0], d, [0.0]))))
    top = float(np.max(d)) if d.size else 0.0
    w = float(jumps.sum() + np.minimum(exp_epsilon * jumps, top).sum())
    return w * (1.0 + 4 * jumps.size * _U)


def total_variation(noise: PiecewiseUniform) -> float:
    """Σ |density jumps| of the cells, the two ends included."""
    d = noise.densities / (noise.probs.sum() / (1.0 - noise.atom))
    return float(np.abs(np.diff(np.concatenate(([0.0], d, [0.0])))).sum())


def _lattice_profile(
    noise: PiecewiseUniform, epsilon: float, sensitivity: float, ticks: np.ndarray, k: int, h: float
) -> PrivacyProfile:
    """δ(s·h) for every lattice shift |s| ≤ k, from runs: between consecutive points of ticks ∪
    (ticks + s) both g_i and g_{i−s} are constant, so the sum of :func:`hockey_stick_sums` over the
    lattice cells is that over the runs, each term weighted by its (integer) length — O(edges) per
    shift rather than O(lattice cells), with the same terms and so the same error analysis."""
    # g on each cell's run
    values = noise.probs / (noise.probs.sum() / (1.0 - noise.atom)) / np.diff(ticks)
    n = int(ticks[-1] - ticks[0])
    shifts = lattice_shifts(ticks, k)
    deltas, term_err = _run_sums(values, np.asarray(ticks), exp_down(epsilon), shifts)
    err = lattice_error_bound(
        term_err,
        deltas,
        n,
        lattice_offset(noise.edges, ticks, h) + sensitivity_shortfall(sensitivity, k, h),
        edge_drift_weight(noise, math.exp(epsilon)),
    )
    return _with_atom(PrivacyProfile(shifts * h, deltas, err, "lattice"), noise.atom)


# the last few results of _run_sums (a noise certified at Δf = 1 and again once rescaled to Δf
# has the same ticks and lattice values: the same sums)
_RUN_SUMS: dict = {}
_RUN_SUMS_KEPT = 8
_RUN_SUMS_LOCK = threading.Lock()


def _run_sums(values: np.ndarray, ticks: np.ndarray, e_lo: float, shifts: np.ndarray):
    """:func:`hockey_stick_sums` over the runs of every shift (:func:`_lattice_profile`): the
    deltas and their term errors. They depend on the lattice values, the integer ticks, e^ε
    rounded down and the shifts only, not on the lattice's step, so the last few are kept: the
    certificate of a rescaled noise repeats them (measured: Tulap on a lattice of Δf/1024, 660
    edges, 2,049 shifts: 0.2 s at Δf = 7.5 after 0.4 s at Δf = 1)."""
    key = (values.tobytes(), ticks.tobytes(), str(ticks.dtype), e_lo, shifts.tobytes())
    with _RUN_SUMS_LOCK:
        kept = _RUN_SUMS.get(key)
    if kept is not None:
        return kept[0].copy(), kept[1].copy()
    deltas = np.empty(shifts.size)
    term_err = np.empty(shifts.size)

    def mass_at(x):  # g at lattice cell x (0 outside the noise)
        j = np.searchsorted(ticks, x, side="right") - 1
        inside = (j >= 0) & (j < values.size)
        return np.where(inside, values[np.clip(j, 0, values.size - 1)], 0.0)

    per_chunk = max(1, 2_000_000 // (2 * ticks.size))
    for c0 in range(0, shifts.size, per_chunk):
        s = shifts[c0 : c0 + per_chunk, None]
        points = np.sort(
            np.concatenate((np.broadcast_to(ticks, (s.size, ticks.size)), ticks + s), axis=1),
            axis=1,
        )
        start, length = points[:, :-1], np.diff(points, axis=1).astype(float)
        a, b = mass_at(start), mass_at(start - s)
        sums, errs = hockey_stick_sums(a, b, e_lo, weights=length)
        deltas[c0 : c0 + per_chunk], term_err[c0 : c0 + per_chunk] = sums, errs
    with _RUN_SUMS_LOCK:  # (the bounds of a round are solved and released in two threads)
        while len(_RUN_SUMS) >= _RUN_SUMS_KEPT:
            del _RUN_SUMS[next(iter(_RUN_SUMS))]
        _RUN_SUMS[key] = (deltas.copy(), term_err.copy())
    return deltas, term_err


#: the most candidate shifts (differences of edges within Δf) the breakpoint method takes on
MAX_BREAKPOINT_SHIFTS = 20_000_000


def lattice_shifts(ticks: np.ndarray, k: int) -> np.ndarray:
    """The lattice shifts s (|s| ≤ k) at which :func:`_lattice_profile` evaluates δ(s·h): every one,
    or, when fewer, only the breakpoints of φ ↦ δ(φ) on [−k·h, k·h], the differences of ticks within
    k and ±k (module docstring: δ(φ) is affine between them, so its maximum is at one of them). A
    noise with few edges on a fine lattice (Tulap at ε = 0.005, δ = 0.005 on the lattice Δf/65536:
    164 edges, about 500 of the 131,073 shifts) is then certified with the same arithmetic per
    shift in milliseconds instead of seconds."""
    first, stop = _difference_runs(ticks, k)
    if int((stop - first).sum()) >= 2 * k + 1:
        return np.arange(-k, k + 1)
    return np.unique(np.concatenate((_edge_differences(ticks, k), [-k, k])))


def _difference_runs(e: np.ndarray, sensitivity) -> tuple[np.ndarray, np.ndarray]:
    """For each i, the run first[i] ≤ j < stop[i] of the sorted edges holding every j with
    |e_i − e_j| ≤ Δf, found by bisection and widened by one on either side so that rounding cannot
    drop one."""
    first = np.maximum(np.searchsorted(e, e - sensitivity, side="left") - 1, 0)
    stop = np.minimum(np.searchsorted(e, e + sensitivity, side="right") + 1, e.size)
    return first, stop


def _edge_differences(e: np.ndarray, sensitivity: float) -> np.ndarray:
    """Every difference e_i − e_j with |e_i − e_j| ≤ Δf, as ``e[i] - e[j]`` in floating point (the
    candidate shifts of :func:`_breakpoint_profile`), without the n × n table of all of them (which
    had asked for 12 GiB for the 40,064 edges of Tulap at ε = 0.001, δ = 1e-12): for each i the
    j with |e_i − e_j| ≤ Δf form a run of the sorted edges (:func:`_difference_runs`), filtered
    exactly as before. A ``ValueError`` when there are more than :data:`MAX_BREAKPOINT_SHIFTS` of
    them."""
    first, stop = _difference_runs(e, sensitivity)
    counts = stop - first
    total = int(counts.sum())
    if total > MAX_BREAKPOINT_SHIFTS:
        raise ValueError(
            f"noise has {e.size - 1} cells whose edges lie on no common lattice with the "
            f"sensitivity, too many to certify exactly ({total} candidate shifts, at most "
            f"{MAX_BREAKPOINT_SHIFTS}); give it edges on a lattice that divides the sensitivity"
        )
    rows = np.repeat(np.arange(e.size), counts)
    cols = np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)
    diffs = e[rows] - e[cols]
    return diffs[np.abs(diffs) <= sensitivity]


def _breakpoint_profile(
    noise: PiecewiseUniform, epsilon: float, sensitivity: float
) -> PrivacyProfile:
    e = noise.edges
    dens = noise.densities / (noise.probs.sum() / (1.0 - noise.atom))
    phis = np.unique(
        np.concatenate((_edge_differences(e, sensitivity), [-sensitivity, sensitivity]))
    )
    e_lo = exp_down(epsilon)
    deltas = np.empty(phis.size)
    per_chunk = max(1, 2_000_000 // (2 * e.size))
    for c0 in range(0, phis.size, per_chunk):
        ph = phis[c0 : c0 + per_chunk]
        bps = np.sort(
            np.concatenate(
                (np.broadcast_to(e, (ph.size, e.size)), e[None, :] + ph[:, None]), axis=1
            ),
            axis=1,
        )
        lo, hi = bps[:, :-1], bps[:, 1:]
        mid = 0.5 * (lo + hi)
        j = np.searchsorted(e, mid, side="right") - 1
        jm = np.searchsorted(e, mid - ph[:, None], side="right") - 1
        d = np.where((j >= 0) & (j < dens.size), dens[np.clip(j, 0, dens.size - 1)], 0.0)
        dm = np.where((jm >= 0) & (jm < dens.size), dens[np.clip(jm, 0, dens.size - 1)], 0.0)
        deltas[c0 : c0 + per_chunk] = np.sum((hi - lo) * np.maximum(d - e_lo * dm, 0.0), axis=1)
    n = 2 * e.size
    scale = float(np.max(np.abs(e))) + sensitivity
    # as for the lattice (see there), plus the absolute errors of a few ulps of the largest
    # coordinate in every breakpoint, segment length and candidate shift: moving a breakpoint by η
    # changes the integrand only next to it, by at most the density jump there or its e^ε multiple
    # (bounded by the maximum density), so in all by η times the smaller of 2n·max density and (1 +
    # e^ε)·(total variation)
    drift = 8 * _U * scale
    err = (
        8.1 * _U
        + 2.02 * n * _U * deltas
        + drift
        * min(2 * n * float(np.max(dens)), (1.0 + math.exp(epsilon)) * total_variation(noise))
    )
    return _with_atom(PrivacyProfile(phis, deltas, err, "breakpoints"), noise.atom)


def _with_atom(profile: PrivacyProfile, atom: float) -> PrivacyProfile:
    """δ(φ) + a at every shift φ ≠ 0 (module docstring), with the rounding of that addition."""
    if atom == 0:
        return profile
    add = np.where(profile.phis != 0, atom, 0.0)
    deltas = profile.deltas + add
    return PrivacyProfile(
        profile.phis, deltas, profile.error_bound + 2 * _U * deltas, profile.method
    )


#: the largest ε a given noise is *certified* at (e^ε and the error bounds' 1 + e^ε stay finite),
#: and the largest a closed form in e^ε is evaluated at. Not to be confused with
#: :data:`dpdro._range.MAX_DESIGN_EPSILON` (10), the largest ε optimal_noise *designs* for.
MAX_CERTIFIED_EPSILON = 700.0


def check_epsilon(epsilon, *, given: str | None = None) -> float:
    """ε for a certificate (or a closed form in e^ε): finite, > 0 and at most
    :data:`MAX_CERTIFIED_EPSILON` (a ``ValueError`` naming the range and the value, where e^ε had
    overflowed inside). ``given``: the value as the user wrote it, for the message (the command
    line's text; default ``repr(epsilon)``)."""
    epsilon = check_positive("epsilon", epsilon)
    if epsilon > MAX_CERTIFIED_EPSILON:
        raise ValueError(
            f"epsilon must be at most {MAX_CERTIFIED_EPSILON:g} (e^epsilon must be a finite "
            f"float), got {given if given is not None else repr(epsilon)}"
        )
    return epsilon


def privacy_profile(noise: PiecewiseUniform, epsilon: float, sensitivity: float) -> PrivacyProfile:
    """δ(φ) for every candidate shift φ ∈ [−Δf, Δf] (see the module docstring).

    Parameters
    ----------
    noise : the piecewise-uniform noise (with an optional atom at 0).
    epsilon : ε > 0.
    sensitivity : Δf > 0; the profile covers every shift |φ| ≤ Δf.

    Returns
    -------
    PrivacyProfile with δ(φ) at the candidate shifts, its maximum ``delta`` and a rigorous bound on
    the floating-point error (already added to ``delta``).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (the constraints of P) and Proposition 8 (the
       worst event of a shift).
    """
    if not isinstance(noise, PiecewiseUniform):
        raise TypeError(f"noise must be a dpdro.PiecewiseUniform, got {type(noise).__name__}")
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    if Fraction(sensitivity) >= Fraction(float(noise.edges[-1])) - Fraction(float(noise.edges[0])):
        # the shift φ = Δf moves every cell off the cells (and the atoms apart): δ(Δf) = 1, exactly
        # (measured: Δf = 1e300 had asked for a lattice of 1e305 cells)
        return PrivacyProfile(np.array([sensitivity]), np.ones(1), np.zeros(1), "disjoint")
    lat = find_lattice(noise, sensitivity)
    if lat is not None:
        return _lattice_profile(noise, epsilon, sensitivity, *lat)
    return _breakpoint_profile(noise, epsilon, sensitivity)


def lattice_work(noise: PiecewiseUniform, sensitivity: float) -> int | None:
    """The run points the lattice certificate of ``noise`` visits, 2 · edges · shifts
    (:func:`_lattice_profile`, whose time grows with them: Tulap on Δf/1024, 660 edges and 2,049
    shifts, 2.7M points in 0.4 s here); ``None`` when it has no lattice."""
    lat = find_lattice(noise, sensitivity)
    if lat is None:
        return None
    ticks, k, _ = lat
    return 2 * int(ticks.size) * int(lattice_shifts(ticks, k).size)


def certify_delta(noise: PiecewiseUniform, epsilon: float, sensitivity: float) -> float:
    """The smallest δ such that adding ``noise`` is (ε, δ)-DP for queries of sensitivity Δf.

    Computed from the density alone (no LP involved) and rounded up by a rigorous floating-point
    error bound, so ``certify_delta(noise, ε, Δf) <= δ`` proves (ε, δ)-DP of the piecewise-uniform
    density (the sampler's floating-point effects aside).

    Parameters
    ----------
    noise : the piecewise-uniform noise (with an optional atom at 0).
    epsilon : ε > 0.
    sensitivity : Δf > 0.

    Returns
    -------
    float: max over |φ| ≤ Δf of sup_A γ(A) − e^ε γ(A − φ), rounded up.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (problem P: γ(A) ≤ e^ε γ(A − φ) + δ for all
       (φ, A) ∈ E).
    """
    return privacy_profile(noise, epsilon, sensitivity).delta
