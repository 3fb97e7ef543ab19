"""The data-dependent mechanism "(OPT)" of Tables 2 and 3 (Sections 5.2-5.3, GitHub appendix).

How (OPT) is built (choices, each documented here and in the chapters):

* A data-dependent mechanism needs the bounded range Φ = [φ_lo, φ_hi] of each perturbed statistic
  (Observation 2). Naïve Bayes: counts n_{y=c} and n_{x_v=χ ∧ y=c} lie in [0, n] (n the public
  training-set size), means μ_{x_v|y=c} in [l_v, u_v], population standard deviations σ_{x_v|y=c} in
  [0, (u_v − l_v)/2]. Coordinate descent: the gradient sum lies in (−n, n) (GitHub appendix).
* All noises are computed for Δf = 1 on the query in units of its sensitivity, t = (ϕ − φ_lo)/Δf ∈
  [0, R), R = (φ_hi − φ_lo)/Δf; the added noise is Δf·X(t). For naïve Bayes (ℓ1 loss, positively
  homogeneous) this is exact, as for OPT. A mechanism designed for a range [0, R′) ⊇ [0, R] is also
  DP on [0, R] (restriction), so R is rounded *up* to a small set of keys and one problem is solved
  per key (``DDFamily.key``).
* Pieces (Algorithm G.1) and weights: the appendix optimises "7 noise distributions" on a
  partition of Φ "designed non-uniformly", with "50 equally sized intervals" of the noise support.
  For naïve Bayes we use 7 pieces, fine near the two *ends* of Φ, [0, .5, 1, 2, R−2, R−1, R−.5, R]
  (Δf units) when R ≥ 5.2, and 7 (or R/β, if fewer) equal pieces for smaller R: with the ℓ1 loss a
  data-dependent noise can only gain where the range ends (inside a piece wider than Δf + β the
  constraints are those of the data-independent problem), and near 0 is where small counts and
  standard deviations are. The appendix describes its 7 pieces as finer at the *centre* of the
  range (no edges given); that layout is kept as the design "centre" of :data:`NB_DD_DESIGNS`
  (cached under its own keys) and compared with ours in 31_naive_bayes at a reduced scale
  (repro.ml_tables.nb_layout_comparison). For coordinate descent we follow the appendix: fine
  pieces at the centre of Φ (query values accumulate around 0), coarse tails, one handcrafted loss
  per piece (coordinate_descent_losses below: ℓ1 up to the knee, slope 1000 on the sign-flipping
  side), knee 1 (the paper's knee is not given). Default design: the appendix's 42 pieces for
  cylinder-bands (width 0.5 on [−10, 10), 0 an edge). The alternative "seven" design (−n, −3, −1,
  −0.2, 0.2, 1, 3, n, the appendix's "7 intervals") has a piece around 0 penalised on both sides,
  and its 7 optimal noises coincide in one symmetric noise (no gain; see 32_coordinate_descent).
  Weights w: the paper's w is uniform on Φ; with Φ = [0, n] and n up to 45,000 that would give the
  small pieces a weight of order 1e-5 (the LP would then barely care about them), so every piece
  gets the same mass 1/M (the appendix allows a non-uniform w "so that more importance is given to
  the intervals" of interest).
* Noise partition: Partition.uniform(L, β) with 2L = 50 cells covering the truncated Laplace support
  rounded up (naïve Bayes, Δf = 1: [−2.5, 2.5), β = 0.1; coordinate descent, Δf = 2: [−5, 5),
  β = 0.2 for "seven", β = 0.25 (40 cells) for the 42 pieces, whose edges must lie on the grid),
  as in the appendix ("50 equally sized intervals", support "rounding up the support needed by
  the Truncated Laplace mechanism").
* When a range is wide (R ≥ 5.2 for naïve Bayes, n ≥ the design's n0 for coordinate descent) the LP
  does not depend on R any more (pieces further apart than Δf share no constraint, equal piece
  masses), so one solve serves every R: its noises are reused with the piece edges moved to the
  actual range, and the moved mechanism is certified again (exactly,
  dpdro.data_dependent.certify_delta) before use. The moved piece edges are given exactly, in
  integer ticks of the noise cell width from the first edge (:func:`exact_edges`), so the
  certificate is scale-free: it is bit for bit that of the solve, however wide the range, and
  every (OPT) is solved and certified at δ itself.
* Solved mechanisms are cached in results/ml/dd_mechanisms.json
  (dpdro.data_dependent.Mechanism.to_dict() plus provenance) and re-certified
  (mechanism.certify() <= δ) on load.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dpdro import Partition, PiecewiseLinear, PiecewiseUniform
from dpdro import data_dependent as dd
from dpdro._validation import check_positive, check_real

from ..provenance import provenance, read_json, write_json_atomic
from .mechanisms import TINY, NoiseTable
from .reports import RESULTS_DIR

__all__ = [
    "DD_CACHE",
    "DDFamily",
    "DataDependentNoise",
    "NB_DD_DESIGNS",
    "NB_DD_WIDE",
    "NBDDFamily",
    "PCDDDFamily",
    "PieceQuantiles",
    "coordinate_descent_loss",
    "coordinate_descent_losses",
    "dilate_noise",
    "equal_mass_weight",
    "exact_edges",
    "make_data_dependent",
    "nb_dd_edges",
    "pcd_dd_edges",
    "solve_dd_cached",
]

DD_CACHE = RESULTS_DIR / "dd_mechanisms.json"
NB_DD_BETA, NB_DD_L = 0.1, 25  # Δf = 1: cells [-2.5, 2.5), 50 cells
NB_DD_STEP = 0.5  # small ranges are rounded up to a multiple of this (Δf units)
NB_DD_WIDE = 5.2  # from this R on, the end-refined 7-piece design (R-independent LP)
# Naïve Bayes piece designs for wide ranges (edges in ticks of NB_DD_BETA on [0, k), k = R/β; the
# outer pieces at least 1.2 = Δf + 2β wide from ``wide`` on, so the LP no longer depends on R):
# "ends": ours, fine at both ends of Φ, widths 0.5, 0.5, 1, R − 4, 1, 0.5, 0.5;
# "centre": the GitHub appendix's description ("designed non-uniformly so that the center of the
# range is partitioned with finer granularity"; its exact edges are not given), widths
# c − 1.8, 1, 0.5, 0.6, 0.5, 1, R − c − 1.8 around the centre c (a whole tick, ⌊k/2⌋β).
# Both use 7 equal pieces (or R/β, if fewer) below ``wide``.
NB_DD_DESIGNS = {
    "ends": dict(wide=NB_DD_WIDE, ticks=lambda k: [0, 5, 10, 20, k - 20, k - 10, k - 5, k]),
    "centre": dict(
        wide=6.0,
        ticks=lambda k: [0, *(k // 2 + d for d in (-18, -8, -3, 3, 8, 18)), k],
    ),
}
NB_DD_DESIGN = "ends"
# Coordinate descent designs (query units, Δf = 2; tails from the outermost inner edge to ±n):
# "appendix42": the GitHub appendix's partition for cylinder-bands, [−n, −10), pieces of width 0.5
# on [−10, 10), [10, n) (42 pieces, 0 is an edge); noise cells of width β = 0.25 on [−5, 5) (40
# cells: 50 cells of width 0.2 would not put the piece edges on the grid); solved on Φ = [−16, 16).
# "seven": 7 pieces −n, −3, −1, −0.2, 0.2, 1, 3, n (the appendix's "7 intervals", finer at the
# centre), 50 cells of width 0.2 on [−5, 5); solved on Φ = [−6, 6).
# "complete": solve P′(π, β) complete by interior point (dd.upper_bound(complete=True)) instead of
# by cutting-plane rounds: the same optimum; for "appendix42" 71–100 s against 465 s by rounds in
# one run under load 3–6 (the stored solve took 629 s), for "seven" 6.2 s against 5.2 s. Since
# complete=True starts "appendix42" from the groups binding on the grid 2β = 0.5: 50 s (23 CPU-s)
# against 224 s (89 CPU-s) from every group, in one run under load 8–10 (bench_dd_complete.py).
PCD_DD_DESIGNS = {
    "appendix42": dict(
        inner=tuple(float(x) for x in np.arange(-20, 21) / 2.0), beta=0.25, L=20, n0=16.0,
        complete=True,
    ),
    "seven": dict(inner=(-3.0, -1.0, -0.2, 0.2, 1.0, 3.0), beta=0.2, L=25, n0=6.0,
                  complete=False),
}
PCD_DD_DESIGN = "appendix42"


def equal_mass_weight(edges: np.ndarray):
    """The piecewise-constant density ``(edges, values)`` giving every piece [e_l, e_{l+1}) the same
    mass."""
    e = np.asarray(edges, dtype=float)
    return e, 1.0 / np.diff(e)


def nb_dd_edges(R: float, design: str = NB_DD_DESIGN) -> np.ndarray:
    """Piece edges (Δf units) of the naïve Bayes (OPT) on [0, R) (R a key of
    :class:`NBDDFamily`) in the design ``design`` of :data:`NB_DD_DESIGNS` ("ends", ours, or
    "centre", the GitHub appendix's "center of the range is partitioned with finer granularity")."""
    b = NB_DD_BETA
    k = int(round(R / b))
    spec = NB_DD_DESIGNS[design]
    if R >= spec["wide"] - 1e-9:
        ticks = np.array(spec["ticks"](k))
    else:
        ticks = np.unique(np.round(np.linspace(0, k, min(7, k) + 1)).astype(int))
    return ticks * b


def exact_edges(edges: np.ndarray, step: float) -> dict:
    """The piece edges ``edges`` as :class:`dpdro.data_dependent.Mechanism` arguments given exactly:
    ``piece_edges`` (the first edge) with integer ``edge_ticks`` of ``step`` from it (the scale-free
    certificate, dpdro.data_dependent.privacy; ValueError if an edge is off the grid)."""
    e = np.asarray(edges, dtype=float)
    r = (e - e[0]) / step
    ticks = np.round(r).astype(np.int64)
    if np.any(np.abs(r - ticks) > 1e-9 * np.maximum(1.0, np.abs(r))):
        raise ValueError(f"piece edges {e.tolist()} are not on a grid of step {step:g}")
    return dict(piece_edges=e[:1], edge_ticks=ticks, edge_step=float(step))


def _dd_provenance(problem_desc: dict, ub, seconds: float) -> dict:
    return dict(
        problem=problem_desc,
        value=float(ub.value),
        piece_losses=np.asarray(ub.piece_losses).tolist(),
        weights=np.asarray(ub.weights).tolist(),
        certified_delta=float(ub.certified_delta),
        iterations=int(ub.iterations),
        repair_weight=float(ub.repair_weight),
        **provenance(seconds),
    )


def solve_dd_cached(
    key: str,
    build: Callable[[], tuple],
    *,
    cache: str | Path | None = DD_CACHE,
    solve: bool = True,
    complete: bool = False,
):
    """The data-dependent mechanism ``key`` from the JSON cache, or solved and stored.

    ``build()`` returns ``(problem, partition, description)``; the description (a JSON dict of the
    problem parameters) must equal the cached one, else the entry is recomputed (by
    ``dd.upper_bound(problem, partition, complete=complete)``: the same optimum either way). The loaded
    mechanism is re-certified: ``mechanism.certify() <= delta`` (ValueError otherwise). Returns
    ``(mechanism, info)``.
    """
    problem, partition, desc = build()
    store = {}
    if cache is not None and Path(cache).is_file():
        store = read_json(cache)
    entry = store.get(key)
    if entry is not None and entry["provenance"]["problem"] == desc:
        mech = dd.Mechanism.from_dict(entry["mechanism"])
        info = entry["provenance"]
    else:
        if not solve:
            raise KeyError(f"data-dependent mechanism {key!r} is not in the cache {cache}")
        t0 = time.perf_counter()
        ub = dd.upper_bound(problem, partition, complete=complete)
        mech = ub.mechanism
        info = _dd_provenance(desc, ub, time.perf_counter() - t0)
        if cache is not None:
            store = read_json(cache) if Path(cache).is_file() else {}
            store[key] = dict(mechanism=mech.to_dict(), provenance=info)
            write_json_atomic(cache, dict(sorted(store.items())))
    certified = mech.certify()
    if not certified <= mech.delta:
        raise ValueError(
            f"cached data-dependent mechanism {key!r} is only ({mech.epsilon}, {certified})-DP, "
            f"above delta = {mech.delta}"
        )
    return mech, dict(info, recertified_delta=float(certified))


def dilate_noise(noise, factor: float):
    """The noise of ``factor · X`` for a PiecewiseUniform X (edges and grid scaled, probabilities
    kept)."""
    grid = None if noise.grid is None else noise.grid * factor
    return PiecewiseUniform(
        noise.edges * factor, noise.probs, grid=grid, metadata=dict(noise.metadata)
    )


class DDFamily:
    """Unit-sensitivity data-dependent mechanisms for query ranges of any width (base class).

    ``embed(lo, hi, s)`` gives, elementwise, the designed range [lo′, lo′ + key·s] ⊇ [lo, hi]
    (``key`` in units of the sensitivity s); ``mechanism(key)`` the certified unit mechanism on [0,
    key). A value at the right end (t = key, e.g. a count equal to n) is assigned to the last piece:
    closing Φ on the right changes no privacy constraint's supremum (δ_{l,l′}(φ) is continuous and
    the certificate already maximises over the closed shift ranges).
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 0.1,
        *,
        cache: str | Path | None = DD_CACHE,
        solve: bool = True,
    ):
        self.epsilon, self.delta, self.cache, self.solve = (
            float(epsilon),
            float(delta),
            cache,
            solve,
        )
        self._mechs: dict[float, object] = {}
        self._solves: dict[str, object] = {}
        self.solved: dict[str, dict] = {}  # key -> provenance of the solves used

    def mechanism(self, key: float):
        key = float(key)
        if key not in self._mechs:
            self._mechs[key] = self._build(key)
        return self._mechs[key]


class NBDDFamily(DDFamily):
    """(OPT) of naïve Bayes: ℓ1 loss, Δf = 1, Φ = [0, R) with the pieces of :func:`nb_dd_edges` in
    the design ``design`` (:data:`NB_DD_DESIGNS`; "ends" by default, the one Table 2 uses)."""

    def __init__(self, *args, design: str = NB_DD_DESIGN, **kw):
        super().__init__(*args, **kw)
        if design not in NB_DD_DESIGNS:
            raise ValueError(f"design must be one of {sorted(NB_DD_DESIGNS)}, got {design!r}")
        self.design, self.wide = design, NB_DD_DESIGNS[design]["wide"]

    def embed(self, lo, hi, s):
        R = (np.asarray(hi, float) - np.asarray(lo, float)) / np.asarray(s, float)
        small = np.ceil((R + 1e-9) / NB_DD_STEP) * NB_DD_STEP
        wide = np.maximum(np.ceil(np.round((R + 1e-9) / NB_DD_BETA, 6)) * NB_DD_BETA, self.wide)
        key = np.where(R + 1e-9 >= self.wide - 0.1 - 1e-9, wide, small)
        return np.asarray(lo, float), np.round(key, 6)

    def build_problem(self, R: float):
        """``(problem, partition, description)`` of the solve for the key R (Δf = 1, Φ = [0, R))."""
        e = nb_dd_edges(R, self.design)
        prob = dd.Problem(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=1.0,
            loss="l1",
            phi_lo=0.0,
            phi_hi=float(e[-1]),
            pieces=e,
            weight=equal_mass_weight(e),
        )
        desc = dict(
            kind="naive Bayes (OPT)",
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=1.0,
            loss="l1",
            phi=[0.0, float(e[-1])],
            piece_edges=e.tolist(),
            weight="equal mass per piece",
            partition=dict(L=NB_DD_L, beta=NB_DD_BETA),
        )
        return prob, Partition.uniform(L=NB_DD_L, beta=NB_DD_BETA), desc

    def _solve(self, R: float):
        name = f"nb_l1_eps={self.epsilon:g}_delta={self.delta:g}_R={R:g}"
        if R >= self.wide - 1e-9 and self.design != NB_DD_DESIGN:  # below, the designs coincide
            name += f"_{self.design}"
        if name not in self._solves:
            mech, info = solve_dd_cached(
                name, lambda: self.build_problem(R), cache=self.cache, solve=self.solve
            )
            self._solves[name], self.solved[name] = mech, info
        return self._solves[name]

    def _build(self, key: float):
        if key < self.wide - 1e-9:
            return self._solve(key)
        base = self._solve(self.wide)
        if abs(key - self.wide) < 1e-9:
            return base
        mech = dd.Mechanism(
            noises=base.noises,
            epsilon=base.epsilon,
            delta=self.delta,
            sensitivity=base.sensitivity,
            **exact_edges(nb_dd_edges(key, self.design), NB_DD_BETA),
        )
        d = mech.certify()
        if not d <= mech.delta:  # pragma: no cover - the LP is R-independent from NB_DD_WIDE on
            raise ValueError(f"moved mechanism for R = {key} is only ({mech.epsilon}, {d})-DP")
        return mech


def coordinate_descent_loss(
    sign: float, *, knee: float = 1.0, slope: float = 1000.0
) -> PiecewiseLinear:
    """The handcrafted loss of the proximal coordinate descent experiment (Section 5.3, GitHub
    appendix).

    c(x) = |x| for |x| ≤ ``knee``; beyond the knee the side *opposite to the query's sign* (the side
    where the noise would flip the sign of a gradient coordinate) rises with slope ``slope`` and the
    other side keeps slope 1. ``sign > 0``: steep for x < −knee; ``sign < 0``: steep for x > knee;
    ``sign == 0`` (a piece containing 0): steep on both sides, the symmetric reading of the paper's
    "slopes of −1,000 and 1,000 for large negative and positive values".
    """
    sign = check_real("sign", sign)
    knee = check_positive("knee", knee)
    slope = check_positive("slope", slope)
    left = -slope if sign >= 0 else -1.0
    right = slope if sign <= 0 else 1.0
    tag = "+" if sign > 0 else "-" if sign < 0 else "0"
    return PiecewiseLinear(
        [-knee, 0.0, knee],
        [knee, 0.0, knee],
        left_slope=left,
        right_slope=right,
        name=f"coordinate descent (sign {tag}, knee {knee:g}, slope {slope:g})",
    )


def coordinate_descent_losses(
    piece_edges, *, knee: float = 1.0, slope: float = 1000.0
) -> list[PiecewiseLinear]:
    """One :func:`coordinate_descent_loss` per piece [e_l, e_{l+1}): the sign is that of the piece
    (0 for a piece containing 0 in its interior)."""
    e = np.asarray(piece_edges, dtype=float)
    out = []
    for a, b in zip(e[:-1], e[1:], strict=True):
        s = 1.0 if a >= 0 else -1.0 if b <= 0 else 0.0
        out.append(coordinate_descent_loss(s, knee=knee, slope=slope))
    return out


def pcd_dd_edges(n: float, design: str = PCD_DD_DESIGN) -> np.ndarray:
    """Piece edges (query units) of the coordinate-descent (OPT) on Φ = [−n, n)
    (``PCD_DD_DESIGNS``)."""
    return np.array([-float(n), *PCD_DD_DESIGNS[design]["inner"], float(n)])


class PCDDDFamily(DDFamily):
    """(OPT) of proximal coordinate descent: handcrafted loss per piece, Δf = 2, Φ = [−n, n), pieces
    :func:`pcd_dd_edges`; solved in query units and rescaled to Δf = 1 (position t = (ϕ + n)/2)."""

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float = 0.1,
        *,
        knee: float = 1.0,
        slope: float = 1000.0,
        sensitivity: float = 2.0,
        design: str = PCD_DD_DESIGN,
        **kw,
    ):
        super().__init__(epsilon, delta, **kw)
        self.knee, self.slope, self.sensitivity = float(knee), float(slope), float(sensitivity)
        if design not in PCD_DD_DESIGNS:
            raise ValueError(f"design must be one of {sorted(PCD_DD_DESIGNS)}, got {design!r}")
        self.design = design
        self.n0 = PCD_DD_DESIGNS[design]["n0"]

    def embed(self, lo, hi, s):
        lo, hi, s = (np.asarray(a, float) for a in (lo, hi, s))
        if np.any(np.abs(s - self.sensitivity) > 1e-12):
            raise ValueError(f"PCDDDFamily is built for sensitivity {self.sensitivity}")
        half = np.maximum(np.ceil(np.maximum(-lo, hi) + 1e-9), self.n0)  # Φ ⊆ [−n′, n′), n′ integer
        return -half, np.round(2.0 * half / s, 6)

    def query_mechanism(self):
        """The solved mechanism in query units on [−n0, n0) (n0 of the design)."""
        spec = PCD_DD_DESIGNS[self.design]

        def build():
            e = pcd_dd_edges(self.n0, self.design)
            prob = dd.Problem(
                epsilon=self.epsilon,
                delta=self.delta,
                sensitivity=self.sensitivity,
                loss=coordinate_descent_losses(e, knee=self.knee, slope=self.slope),
                phi_lo=float(e[0]),
                phi_hi=float(e[-1]),
                pieces=e,
                weight=equal_mass_weight(e),
            )
            desc = dict(
                kind="coordinate descent (OPT)",
                epsilon=self.epsilon,
                delta=self.delta,
                sensitivity=self.sensitivity,
                loss=f"coordinate_descent_losses(knee={self.knee:g}, slope={self.slope:g})",
                phi=[float(e[0]), float(e[-1])],
                piece_edges=e.tolist(),
                weight="equal mass per piece",
                partition=dict(L=spec["L"], beta=spec["beta"]),
            )
            return prob, Partition.uniform(L=spec["L"], beta=spec["beta"]), desc

        name = (f"pcd_knee={self.knee:g}_slope={self.slope:g}_eps={self.epsilon:g}"
                f"_delta={self.delta:g}_n0={self.n0:g}")
        if self.design != "seven":
            name += f"_design={self.design}"
        if name not in self._solves:
            mech, info = solve_dd_cached(
                name, build, cache=self.cache, solve=self.solve, complete=spec["complete"]
            )
            self._solves[name], self.solved[name] = mech, info
        return self._solves[name]

    def _build(self, key: float):
        q = self.query_mechanism()
        half = key * self.sensitivity / 2.0
        e = pcd_dd_edges(half, self.design)
        beta = PCD_DD_DESIGNS[self.design]["beta"] / self.sensitivity
        unit = dd.Mechanism(
            noises=tuple(dilate_noise(nz, 1.0 / self.sensitivity) for nz in q.noises),
            epsilon=q.epsilon,
            delta=self.delta,
            sensitivity=1.0,
            **exact_edges((e + half) / self.sensitivity, beta),
        )
        d = unit.certify()
        if not d <= unit.delta:  # pragma: no cover
            raise ValueError(f"rescaled mechanism for n = {half} is only ({unit.epsilon}, {d})-DP")
        return unit


class PieceQuantiles:
    """The quantile functions of several piecewise-uniform noises as padded tables: ``ppf(piece,
    u)`` is ``noises[piece[i]].ppf(u[i])`` for every i at once, bit for bit.

    :meth:`dpdro.PiecewiseUniform.ppf` rebuilds its cumulative table on every call; a data-dependent
    mechanism with 42 pieces called once per coordinate update then spends milliseconds per call in
    that bookkeeping. Here the tables are built once (from each noise's own ``_pieces``) and one
    call maps every uniform with array operations: the search ``searchsorted(cum, u, "left") − 1``
    becomes the count of table entries below u (the same index: the cumulative masses are
    non-decreasing and the last one is 1 > u), the skip of empty cells a precomputed "next cell with
    mass" table, and the interpolation the same floating-point operations in the same order.
    """

    def __init__(self, noises: Sequence[PiecewiseUniform]):
        tables = [nz._pieces() for nz in noises]  # (left ends, widths, masses) of each noise
        P, J = len(tables), max(t[2].size for t in tables)
        self.cum = np.full((P, J + 1), np.inf)  # padding is never below u
        self.left, self.width, self.mass = np.zeros((P, J)), np.zeros((P, J)), np.ones((P, J))
        self.next_mass = np.zeros((P, J), dtype=np.intp)
        self.last = np.empty(P, dtype=np.intp)
        self.top = np.array([float(nz.support[1]) for nz in noises])
        for p, (left, width, mass) in enumerate(tables):
            J_l = mass.size
            cum = np.concatenate(([0.0], np.cumsum(mass)))
            cum[-1] = 1.0
            nz = np.nonzero(mass > 0)[0]
            self.cum[p, : J_l + 1] = cum
            self.left[p, :J_l], self.width[p, :J_l], self.mass[p, :J_l] = left, width, mass
            self.next_mass[p, :J_l] = nz[
                np.clip(np.searchsorted(nz, np.arange(J_l)), 0, nz.size - 1)
            ]
            self.last[p] = J_l - 1

    def ppf(self, piece: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``noises[piece[i]].ppf(u[i])`` for 1-d integer ``piece`` and ``u`` in [0, 1] of one
        length."""
        piece, u = np.asarray(piece, dtype=np.intp), np.asarray(u, dtype=float)
        j = np.empty(u.size, dtype=np.intp)
        step = max(1, (1 << 20) // self.cum.shape[1])  # bounded temporary (N, J + 1) comparisons
        for a in range(0, u.size, step):
            b = slice(a, a + step)
            j[b] = np.count_nonzero(self.cum[piece[b]] < u[b, None], axis=1) - 1
        return self._interpolate(piece, j, u)

    def ppf_all(self, u: np.ndarray) -> np.ndarray:
        """Every noise's ``ppf(u)``: an array of shape ``(P, *u.shape)`` (P noises), bit for bit
        (the index of u in each table by ``searchsorted``, the same index as in :meth:`ppf`)."""
        u = np.asarray(u, dtype=float)
        flat = u.ravel()
        P = self.cum.shape[0]
        piece = np.repeat(np.arange(P), flat.size)
        j = np.concatenate([np.searchsorted(self.cum[p], flat, side="left") - 1 for p in range(P)])
        return self._interpolate(piece, j, np.tile(flat, P)).reshape((P, *u.shape))

    def _interpolate(self, piece, j, u):
        """The quantile at ``u`` given the index ``j`` of the table entry below it."""
        j = self.next_mass[piece, np.clip(j, 0, self.last[piece])]
        frac = np.clip((u - self.cum[piece, j]) / self.mass[piece, j], 0.0, 1.0)
        return np.where(
            u >= 1.0, self.top[piece], self.left[piece, j] + frac * self.width[piece, j]
        )


class DataDependentNoise:
    """The "(OPT)" column: values + Δf·X(t), X(t) the noise of the piece containing t = (ϕ −
    φ_lo′)/Δf.

    A mechanism ``mech(values, sensitivity, rng, *, phi_lo, phi_hi)`` (``needs_range = True``: the
    experiment passes the range Φ of each statistic). Vectorised: one uniform per value, drawn in
    one call (common random numbers with the additive mechanisms), then the values are grouped by
    range key and each group's uniforms are mapped through the ``ppf`` of their pieces' noises at
    once (:class:`PieceQuantiles`, built once per key). ``tables=False`` maps them piece by piece
    through ``noises[l].ppf`` instead (the definition; the same numbers, slower).
    """

    needs_range = True

    def __init__(self, family: DDFamily, name: str = "(OPT)", *, tables: bool = True):
        self.family, self.name, self.tables = family, name, bool(tables)
        self._quantiles: dict[float, tuple] = {}  # key -> (mechanism, PieceQuantiles of its noises)

    def _piece_quantiles(self, key: float, mech) -> PieceQuantiles:
        cached = self._quantiles.get(key)
        if cached is None or cached[0] is not mech:
            cached = self._quantiles[key] = (mech, PieceQuantiles(mech.noises))
        return cached[1]

    def unit_noise(self, values, sensitivity, u, *, phi_lo, phi_hi) -> np.ndarray:
        """The unit-sensitivity noise of each value for the uniforms ``u`` (same shape)."""
        v = np.asarray(values, dtype=float)
        shape = v.shape
        s = np.broadcast_to(np.asarray(sensitivity, dtype=float), shape)
        lo = np.broadcast_to(np.asarray(phi_lo, dtype=float), shape)
        hi = np.broadcast_to(np.asarray(phi_hi, dtype=float), shape)
        if np.any(v < _range_check(lo, -1)) or np.any(v > _range_check(hi, 1)):
            raise ValueError("a query value lies outside its range [phi_lo, phi_hi]")
        lo2, key = self.family.embed(lo, hi, s)
        key = np.broadcast_to(key, shape)
        t = (v - lo2) / s
        u = np.clip(np.asarray(u, dtype=float), TINY, 1.0 - TINY)
        out = np.empty(shape)
        flat_k, flat_t, flat_u, flat_o = key.ravel(), t.ravel(), u.ravel(), out.reshape(-1)
        keys = np.unique(flat_k)
        for k in keys:
            idx = np.nonzero(flat_k == k)[0] if keys.size > 1 else np.arange(flat_k.size)
            mech = self.family.mechanism(k)
            tt = np.clip(flat_t[idx], 0.0, np.nextafter(float(mech.piece_edges[-1]), -np.inf))
            pc = np.atleast_1d(mech.piece(tt))
            if self.tables:
                flat_o[idx] = self._piece_quantiles(float(k), mech).ppf(pc, flat_u[idx])
                continue
            for p in np.unique(pc):
                sel = idx[pc == p]
                flat_o[sel] = mech.noises[p].ppf(flat_u[sel])
        return out

    def __call__(self, values, sensitivity, rng, *, phi_lo, phi_hi):
        v = np.asarray(values, dtype=float)
        u = rng.random(v.shape)
        noise = self.unit_noise(v, sensitivity, u, phi_lo=phi_lo, phi_hi=phi_hi)
        return v + np.asarray(sensitivity, dtype=float) * noise

    def noise_table(
        self, rng, shape, sensitivity: float, phi_lo: float, phi_hi: float
    ) -> NoiseTable:
        """The noise of ``shape[0]`` calls on ``shape[1:]`` values of one range Φ = [φ_lo, φ_hi]
        and sensitivity, for every piece (:class:`~repro.experiments.NoiseTable`): the same
        uniforms, pieces and noise as the calls, bit for bit."""
        u = np.clip(rng.random(shape), TINY, 1.0 - TINY)
        s, lo, hi = (np.asarray(x, dtype=float) for x in (sensitivity, phi_lo, phi_hi))
        if s.ndim or lo.ndim or hi.ndim:
            raise ValueError("noise_table needs a scalar sensitivity and range")
        lo2, key = self.family.embed(lo, hi, s)
        mech = self.family.mechanism(float(key))
        unit = self._piece_quantiles(float(key), mech).ppf_all(u)
        return NoiseTable(
            scaled=s * unit,
            lo=float(lo2),
            scale=float(s),
            top=float(np.nextafter(float(mech.piece_edges[-1]), -np.inf)),
            edges=np.asarray(mech.piece_edges, dtype=float),
            check_lo=float(_range_check(lo, -1)),
            check_hi=float(_range_check(hi, 1)),
        )


def _range_check(end, side: int):
    """The accepted end of a query range: ``end`` moved outwards by 1e-9·max(1, |end|)."""
    return end + side * 1e-9 * np.maximum(1.0, np.abs(end))


def make_data_dependent(
    table: int,
    epsilon: float = 1.0,
    delta: float = 0.1,
    *,
    cache: str | Path | None = DD_CACHE,
    solve: bool = True,
    **kw,
) -> DataDependentNoise:
    """The (OPT) mechanism of Table 2 (naïve Bayes) or Table 3 (coordinate descent); ``kw`` go to
    the family (Table 2: ``design``, a key of :data:`NB_DD_DESIGNS`; Table 3: ``design``, a key of
    ``PCD_DD_DESIGNS``)."""
    if table == 2:
        return DataDependentNoise(NBDDFamily(epsilon, delta, cache=cache, solve=solve, **kw))
    if table == 3:
        return DataDependentNoise(PCDDDFamily(epsilon, delta, cache=cache, solve=solve, **kw))
    raise ValueError(f"table must be 2 or 3, got {table!r}")
