r"""Data-dependent noise (Section 3, Appendix C.3 and the GitHub appendices of the paper).

The noise may depend on the query output ϕ ∈ Φ = [phi_lo, phi_hi). Problem P′ (Observation 2) is

    minimise ∫_Φ w(ϕ)·E_{γ(·|ϕ)} c(X) dϕ   s.t.   γ(A | ϕ) ≤ e^ε γ(A − φ | ϕ + φ) + δ
    for all ϕ ∈ Φ, |φ| ≤ Δf with ϕ + φ ∈ Φ, and all events A.

Here w is normalised to a probability density on Φ, so every objective is the w-average of the
per-piece expected losses and is directly comparable with the data-independent P.

Pieces of Φ
    Φ is cut into K = |Φ|/β *fine pieces* Φ_k(β) of width β (Section 3.2). The released mechanism
    uses one noise per *piece* Λ_l, a union of consecutive fine pieces given by the index vector λ of
    Algorithm G.1 (``pieces=None``: every fine piece is a piece, the paper's uniform Φ_k(β);
    ``pieces=M``: M equal pieces; ``pieces=[e_0, …, e_M]``: arbitrary piece edges on the β-grid).

Upper bound P′(π, β) (Appendix C.3 with the grouping of Algorithm G.1)
    One distribution p_l on the cells Π_j(β) per piece, objective Σ_l ω_l Σ_j c_j p_l(j) with
    ω_l = ∫_{Λ_l} w, and for every ordered pair of pieces (l, l′) the privacy constraints of
    equation (9) between p_l and p_l′ for every shift φ = sβ with
    s ∈ {λ_{l′} − λ_{l+1}, …, λ_{l′+1} − λ_l} ∩ [−Δf/β, Δf/β] (Algorithm G.1; for single fine pieces
    this is {m − k − 1, m − k, m − k + 1}, Algorithm 3). Since δ(φ) is continuous and piecewise affine
    in φ with breakpoints on the β-grid, these closure points cover every admissible φ.

Lower bound D′(π, β) (Proposition 7, in primal form)
    ``grouped=False`` (default, a lower bound on P′ itself): one distribution per *fine* piece on the
    padded cells of D(π, β), objective coefficients w̲_k·β·c̲_j with w̲_k = inf_{Φ_k} w and c̲_j the
    cell infima, and privacy constraints between p_k and p_{k+s} for the *exact* shift sβ only. Why:
    for any γ feasible in P′, the averages p_k = β⁻¹∫_{Φ_k} γ(·|ϕ) dϕ satisfy exactly these
    constraints (average the constraint over ϕ ∈ Φ_k with ϕ + sβ ∈ Φ_{k+s}) and cost at most the
    objective of γ. This is the shift set E′_k(L, β) = B(β) ∩ (Φ − inf Φ_k) of Proposition 7; the
    statement of D′(π, β) in Appendix C.3 lists the larger set E′_km (shifts m − k ± 1), which the
    averaging argument does not justify, so dpdro uses the smaller, certainly valid set.
    The noise partition must be uniform (cells of width β): on wider cells these segment
    constraints are not a relaxation (see :func:`dpdro.lower_bound`), and a ValueError says so.
    ``grouped=True``: a lower bound on the best mechanism that is constant on the given pieces (the
    problem that P′(π, β) with the grouping λ restricts): one distribution per piece, weights ω_l, and
    the shifts strictly inside (λ_{l′} − λ_{l+1}, λ_{l′+1} − λ_l). With one piece of width ≥ Δf + β
    this is exactly the data-independent D(π, β).

Everything else is shared with the data-independent code: the segment tables of
:mod:`dpdro.oracle` (one per shift, reused by every pair of pieces), whole-shift cuts with auxiliary
t-columns and a budget row per (pair, shift), the incremental HiGHS model, Algorithm 1
(:func:`dpdro.cutting_plane.run_cutting_plane`), a dual-feasible safe lower bound, and an exact
certificate of the released family (:func:`certify_family`) with repair by mixing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy import integrate, optimize

from ._validation import check_open_unit, check_positive, check_real, integer_ratio
from .cutting_plane import run_cutting_plane
from .dd_monotone import monotone_matrix, monotone_noise
from .losses import Loss, PiecewiseLinear, make_loss
from .noise import PiecewiseUniform
from .oracle import SegmentTable, event_intervals, geometry
from .partition import Partition
from .privacy import _U, _exp_down, _lattice
from .problem import InfeasibleError, Problem
from .solvers import INF, HighsModel, PrivacyLP

__all__ = [
    "DataDependentProblem",
    "DataDependentMechanism",
    "DDBoundingLP",
    "DDUpperBound",
    "DDLowerBound",
    "DDShortfall",
    "FamilyProfile",
    "dd_upper_bound",
    "dd_lower_bound",
    "dd_max_privacy_shortfall",
    "certify_family",
    "family_privacy_profile",
    "coordinate_descent_loss",
    "coordinate_descent_losses",
]

_COEFF_SAFETY = 1e-12


# ============================================================================ losses
def coordinate_descent_loss(sign: float, *, knee: float = 1.0, slope: float = 1000.0) -> PiecewiseLinear:
    """The handcrafted loss of the proximal coordinate descent experiment (Section 5.3, GitHub appendix).

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
    return PiecewiseLinear([-knee, 0.0, knee], [knee, 0.0, knee], left_slope=left, right_slope=right,
                           name=f"coordinate descent (sign {tag}, knee {knee:g}, slope {slope:g})")


def coordinate_descent_losses(piece_edges, *, knee: float = 1.0, slope: float = 1000.0) -> list[PiecewiseLinear]:
    """One :func:`coordinate_descent_loss` per piece [e_l, e_{l+1}): the sign is that of the piece
    (0 for a piece containing 0 in its interior)."""
    e = np.asarray(piece_edges, dtype=float)
    out = []
    for a, b in zip(e[:-1], e[1:]):
        s = 1.0 if a >= 0 else -1.0 if b <= 0 else 0.0
        out.append(coordinate_descent_loss(s, knee=knee, slope=slope))
    return out


# ============================================================================ the problem
@dataclass(frozen=True)
class _Grouping:
    """The pieces of Φ for a given β: K fine pieces, piece l = fine pieces lam[l] … lam[l+1] − 1."""

    beta: float
    K: int
    lam: np.ndarray  # M + 1 integers, lam[0] = 0, lam[M] = K
    edges: np.ndarray  # M + 1 piece edges (floats)
    fine_edges: np.ndarray  # K + 1 fine-piece edges

    @property
    def M(self) -> int:
        return int(self.lam.size - 1)


class DataDependentProblem:
    """An instance of the data-dependent problem P′ (Observation 2).

    Parameters (keyword-only)
    ----------
    epsilon, delta, sensitivity : ε > 0, δ ∈ (0, 1), Δf > 0.
    loss : one loss (``"l1"``, ``"l2"``, a :class:`dpdro.Loss`, a callable) for every ϕ, or a sequence
        with one loss per piece (requires explicit ``pieces``), e.g. :func:`coordinate_descent_losses`.
    phi_lo, phi_hi : the bounded range Φ = [phi_lo, phi_hi) of the query.
    weight : the density w on Φ: ``None`` (uniform), a callable w(ϕ) (integrated numerically; its
        infimum on a fine piece is taken over a grid plus a bounded minimisation, so pass piecewise-
        constant weights for a rigorous lower bound), or ``(edges, values)`` piecewise-constant with
        edges covering Φ. Must be non-negative with positive mass; it is normalised to total mass 1.
    pieces : ``None`` (the fine pieces Φ_k(β) of width β, the paper's uniform partition), an int M
        (M equal pieces), or the piece edges [phi_lo = e_0 < … < e_M = phi_hi] (non-uniform, as in
        Algorithm G.1). Edges must lie on the β-grid of the noise partition used.
    monotone : restrict every noise to densities non-increasing in |x| (see :mod:`dpdro.dd_monotone`).
    cap, cap_loss : instance-optimality caps (GitHub appendix): every piece's expected loss under
        ``cap_loss`` (default: the objective loss of that piece) must be ≤ ``cap``.
    """

    def __init__(self, *, epsilon, delta, sensitivity=1.0, loss="l1", phi_lo, phi_hi, weight=None, pieces=None,
                 monotone: bool = False, cap=None, cap_loss=None):
        if not isinstance(monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be True or False, got {monotone!r}")
        # the data-independent problem with the same (ε, δ, Δf, loss, monotone); with one loss per piece
        # its loss is ℓ1 (a placeholder: compare per piece instead)
        self.base_problem = Problem(epsilon=epsilon, delta=delta, sensitivity=sensitivity,
                                    loss=loss if not isinstance(loss, (list, tuple)) else "l1", monotone=bool(monotone))
        self.epsilon = self.base_problem.epsilon
        self.delta = self.base_problem.delta
        self.sensitivity = self.base_problem.sensitivity
        self.exp_epsilon = self.base_problem.exp_epsilon
        lo, hi = check_real("phi_lo", phi_lo), check_real("phi_hi", phi_hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"phi_lo and phi_hi must be finite (Φ is bounded), got phi_lo={phi_lo!r}, phi_hi={phi_hi!r}")
        if not hi > lo:
            raise ValueError(f"phi_hi must be > phi_lo (Φ = [phi_lo, phi_hi) non-empty), got phi_lo={phi_lo!r}, phi_hi={phi_hi!r}")
        self.phi_lo, self.phi_hi = lo, hi
        self.monotone = bool(monotone)
        # pieces
        if pieces is None:
            self.piece_spec = None
        elif isinstance(pieces, (int, np.integer)) and not isinstance(pieces, bool):
            if pieces < 1:
                raise ValueError(f"pieces must be an integer >= 1, an array of piece edges or None, got {pieces!r}")
            self.piece_spec = np.linspace(lo, hi, int(pieces) + 1)
        else:
            if isinstance(pieces, bool):
                raise TypeError(f"pieces must be None, an integer >= 1 or an array of piece edges, got {pieces!r}")
            e = np.asarray(pieces, dtype=float)
            if e.ndim != 1 or e.size < 2 or not np.all(np.isfinite(e)):
                raise ValueError(f"pieces must be a one-dimensional array of >= 2 finite piece edges, got {pieces!r}")
            if np.any(np.diff(e) <= 0):
                raise ValueError(f"pieces must be strictly increasing piece edges, got {e.tolist()}")
            if not (abs(e[0] - lo) <= 1e-12 * max(1.0, abs(lo)) and abs(e[-1] - hi) <= 1e-12 * max(1.0, abs(hi))):
                raise ValueError(f"pieces must start at phi_lo = {lo!r} and end at phi_hi = {hi!r}, got "
                                 f"[{e[0]!r}, …, {e[-1]!r}]")
            e = e.copy()
            e[0], e[-1] = lo, hi
            self.piece_spec = e
        # losses
        if isinstance(loss, (list, tuple)):
            if self.piece_spec is None:
                raise ValueError("a list of losses (one per piece) needs explicit pieces (an int or piece edges)")
            if len(loss) != self.piece_spec.size - 1:
                raise ValueError(f"loss must have one entry per piece ({self.piece_spec.size - 1}), got {len(loss)}")
            self.losses = tuple(make_loss(x) for x in loss)
        else:
            self.losses = None
        self.loss = self.base_problem.loss if self.losses is None else None
        # weight
        self._weight = self._make_weight(weight)
        # caps
        if cap is None:
            if cap_loss is not None:
                raise ValueError("cap_loss given without cap")
            self.cap, self.cap_loss = None, None
        else:
            self.cap = check_positive("cap", cap)
            self.cap_loss = None if cap_loss is None else make_loss(cap_loss)

    # ------------------------------------------------------------------ weight
    def _make_weight(self, weight):
        lo, hi = self.phi_lo, self.phi_hi
        if weight is None:
            return ("uniform", None)
        if callable(weight):
            xs = np.linspace(lo, hi, 1001)[:-1]
            try:
                vals = np.asarray([float(weight(x)) for x in xs])
            except Exception as exc:  # pragma: no cover - depends on the user's callable
                raise ValueError(f"weight(ϕ) failed on Φ = [{lo:g}, {hi:g}): {exc}") from exc
            if not np.all(np.isfinite(vals)) or np.any(vals < 0):
                bad = xs[~np.isfinite(vals) | (vals < 0)][0]
                raise ValueError(f"weight must be finite and >= 0 on Φ = [{lo:g}, {hi:g}), got weight({bad:g}) = "
                                 f"{float(weight(bad))!r}")
            total = integrate.quad(lambda x: float(weight(x)), lo, hi, limit=200)[0]
            if not (math.isfinite(total) and total > 0):
                raise ValueError(f"weight must be integrable with positive mass on Φ, got ∫w = {total!r}")
            return ("callable", weight, total)
        if isinstance(weight, tuple) and len(weight) == 2:
            e = np.asarray(weight[0], dtype=float)
            v = np.asarray(weight[1], dtype=float)
            if e.ndim != 1 or v.shape != (e.size - 1,) or e.size < 2:
                raise ValueError(f"a piecewise-constant weight is (edges, values) with len(values) = len(edges) − 1, "
                                 f"got shapes {e.shape} and {v.shape}")
            if not (np.all(np.isfinite(e)) and np.all(np.diff(e) > 0)):
                raise ValueError("weight edges must be finite and strictly increasing")
            if e[0] > self.phi_lo or e[-1] < self.phi_hi:
                raise ValueError(f"weight edges must cover Φ = [{self.phi_lo:g}, {self.phi_hi:g}), got "
                                 f"[{e[0]:g}, {e[-1]:g}]")
            if not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f"weight values must be finite and >= 0, got {v.tolist()}")
            total = float(self._pc_integral(e, v, np.array([lo]), np.array([hi]))[0])
            if not total > 0:
                raise ValueError("weight must have positive mass on Φ (all values on Φ are 0)")
            return ("piecewise", (e, v), total)
        raise TypeError("weight must be None, a callable w(ϕ) or a tuple (edges, values), got "
                        f"{type(weight).__name__}")

    @staticmethod
    def _pc_integral(e, v, a, b):
        lo = np.maximum(e[None, :-1], a[:, None])
        hi = np.minimum(e[None, 1:], b[:, None])
        return np.sum(np.clip(hi - lo, 0, None) * v[None, :], axis=1)

    def weight_masses(self, edges) -> np.ndarray:
        """∫ w over each interval [edges[i], edges[i+1]) divided by ∫_Φ w (so they sum to 1 over Φ)."""
        e = np.asarray(edges, dtype=float)
        a, b = e[:-1], e[1:]
        kind = self._weight[0]
        if kind == "uniform":
            return (b - a) / (self.phi_hi - self.phi_lo)
        if kind == "piecewise":
            (we, wv), total = self._weight[1], self._weight[2]
            return self._pc_integral(we, wv, a, b) / total
        f, total = self._weight[1], self._weight[2]
        return np.array([integrate.quad(lambda x: float(f(x)), lo, hi, limit=100)[0] for lo, hi in zip(a, b)]) / total

    def weight_infima(self, edges) -> np.ndarray:
        """inf of the normalised w over each interval (for the lower bound's coefficients w̲_k)."""
        e = np.asarray(edges, dtype=float)
        a, b = e[:-1], e[1:]
        kind = self._weight[0]
        if kind == "uniform":
            return np.full(a.size, 1.0 / (self.phi_hi - self.phi_lo))
        if kind == "piecewise":
            (we, wv), total = self._weight[1], self._weight[2]
            out = np.empty(a.size)
            for i, (lo, hi) in enumerate(zip(a, b)):
                overlap = (we[:-1] < hi) & (we[1:] > lo)
                out[i] = wv[overlap].min()
            return out / total
        f, total = self._weight[1], self._weight[2]
        out = np.empty(a.size)
        for i, (lo, hi) in enumerate(zip(a, b)):
            xs = np.linspace(lo, hi, 65)[:-1]
            vals = np.array([float(f(x)) for x in xs])
            x0 = xs[int(np.argmin(vals))]
            h = (hi - lo) / 64
            r = optimize.minimize_scalar(lambda x: float(f(x)), bounds=(max(lo, x0 - h), min(hi, x0 + h)),
                                         method="bounded")
            out[i] = max(0.0, min(vals.min(), float(r.fun)))
        return out / total

    # ------------------------------------------------------------------ pieces for a grid β
    def grouping(self, beta: float) -> _Grouping:
        """The fine pieces Φ_k(β) and the grouping λ of the pieces for the granularity β."""
        beta = check_positive("beta", beta)
        width = self.phi_hi - self.phi_lo
        K = integer_ratio("beta", width, beta, what="the width of Φ, phi_hi − phi_lo")
        fine = self.phi_lo + np.arange(K + 1) * beta
        fine[-1] = self.phi_hi
        if self.piece_spec is None:
            lam = np.arange(K + 1)
        else:
            rel = (self.piece_spec - self.phi_lo) / beta
            lam = np.round(rel).astype(np.int64)
            if np.max(np.abs(rel - lam)) > 1e-9 * max(1.0, K):
                i = int(np.argmax(np.abs(rel - lam)))
                raise ValueError(f"pieces: edge {self.piece_spec[i]!r} is not on the β-grid phi_lo + k·β with "
                                 f"beta = {beta!r}; choose β dividing every piece width")
        edges = fine[lam]
        return _Grouping(beta, K, lam, edges, fine)

    def piece_loss(self, l: int) -> Loss:
        return self.base_problem.loss if self.losses is None else self.losses[l]

    def __repr__(self) -> str:
        pieces = "fine" if self.piece_spec is None else f"{self.piece_spec.size - 1}"
        return (f"DataDependentProblem(epsilon={self.epsilon:g}, delta={self.delta:g}, sensitivity={self.sensitivity:g}, "
                f"Phi=[{self.phi_lo:g}, {self.phi_hi:g}), pieces={pieces}, monotone={self.monotone}, cap={self.cap})")


# ============================================================================ the LP
class DDBoundingLP(PrivacyLP):
    """P′(π, β) (``kind="upper"``) or D′(π, β) (``kind="lower"``) as an incrementally grown HiGHS LP.

    Columns: p_l on the decision cells for l = 0 … M−1 (blocks of ``n_c`` columns; the lower bound's
    last column in each block is the mass outside the padding), then auxiliary t-columns. Rows 0 … M−1
    are Σ_j p_l(j) = 1. A *constraint group* r is a triple (l, l′, s): the privacy constraints
    p_l(A) ≤ e^ε p_l′(A − sβ) + δ for all events A, added as whole-shift cuts (budget row plus
    t-columns) or single-event cuts. It has the interface :func:`run_cutting_plane` expects.
    """

    def __init__(self, problem: DataDependentProblem, partition: Partition, kind: str = "upper", *,
                 grouped: bool = False):
        if not isinstance(problem, DataDependentProblem):
            raise TypeError(f"problem must be a dpdro.DataDependentProblem, got {type(problem).__name__}")
        if not isinstance(partition, Partition):
            raise TypeError(f"partition must be a dpdro.Partition, got {type(partition).__name__}")
        if kind not in ("upper", "lower"):
            raise ValueError(f"kind must be 'upper' or 'lower', got {kind!r}")
        if kind == "lower" and not partition.is_uniform:
            raise ValueError("D′(π, β) is implemented for uniform noise partitions (cells of width β) only: on wider "
                             "cells the segment constraints of the paper are not a relaxation (see dpdro.lower_bound)")
        self.problem, self.partition, self.kind = problem, partition, kind
        base = problem.base_problem
        self.k = base.shifts(partition.beta)
        self.exp_eps = base.exp_epsilon
        lower = kind == "lower"
        g = problem.grouping(partition.beta)
        self.grouping = g
        kd = self.k
        tl, tm, ts = [], [], []
        if lower and not grouped:
            self.lam = np.arange(g.K + 1)  # one distribution per fine piece
            for s in range(-kd, kd + 1):
                if s == 0:
                    continue
                ks = np.arange(max(0, -s), min(g.K, g.K - s))
                tl.append(ks), tm.append(ks + s), ts.append(np.full(ks.size, s))
        else:
            self.lam = g.lam
            lam = g.lam
            M = lam.size - 1
            strict = 1 if lower else 0  # the lower bound may only use shifts strictly inside the range
            for l in range(M):
                for l2 in range(M):
                    s_lo = max(lam[l2] - lam[l + 1] + strict, -kd)
                    s_hi = min(lam[l2 + 1] - lam[l] - strict, kd)
                    s = np.arange(s_lo, s_hi + 1)
                    if l == l2:
                        s = s[s != 0]
                    tl.append(np.full(s.size, l)), tm.append(np.full(s.size, l2)), ts.append(s)
        tl = np.concatenate(tl).astype(np.int64) if tl else np.zeros(0, np.int64)
        tm = np.concatenate(tm).astype(np.int64) if tm else np.zeros(0, np.int64)
        ts = np.concatenate(ts).astype(np.int64) if ts else np.zeros(0, np.int64)
        self.M = int(self.lam.size - 1)
        if lower:
            self.table = geometry(base, partition, lower=True)
        else:
            self.table = SegmentTable.build(partition.pi, partition.pi, 0, np.unique(np.concatenate((ts, [0]))))
        pos = np.searchsorted(self.table.shifts, ts)
        if ts.size and not np.array_equal(self.table.shifts[np.minimum(pos, self.table.shifts.size - 1)], ts):
            raise RuntimeError("internal error: a shift of a constraint group is missing from the segment table")
        order = np.lexsort((tm, tl, pos))
        self.t_l, self.t_m, self.t_si = tl[order], tm[order], pos[order]
        self.n_groups = int(self.t_l.size)
        bounds = np.searchsorted(self.t_si, np.arange(self.table.shifts.size + 1))
        self._by_shift = [(si, bounds[si], bounds[si + 1]) for si in range(self.table.shifts.size)
                          if bounds[si + 1] > bounds[si]]
        self.columns = Partition(self.table.column_pi, partition.beta)
        self.n_cells = self.columns.n_cells
        self.n_c = self.n_cells + (1 if lower else 0)
        a, b = self.columns.edges[:-1], self.columns.edges[1:]
        # objective: piece weights times per-cell loss coefficients
        if lower and not grouped:
            wts = problem.weight_infima(g.fine_edges) * np.diff(g.fine_edges)
            piece_of_fine = np.searchsorted(g.lam, np.arange(g.K), side="right") - 1
            loss_of = [problem.piece_loss(int(piece_of_fine[k])) for k in range(g.K)]
        else:
            wts = problem.weight_masses(g.edges)
            loss_of = [problem.piece_loss(l) for l in range(self.M)]
        self.weights = np.asarray(wts, dtype=float)
        costs, cap_rows = [], []
        cache = {}
        for l in range(self.M):
            key = id(loss_of[l])
            if key not in cache:
                loss = loss_of[l]
                c = loss.cell_infimum(a, b) if lower else loss.cell_average(a, b)
                if lower:
                    c = np.append(c, loss.tail_infimum(self.columns.edges[0], self.columns.edges[-1]))
                if not np.all(np.isfinite(c)) or np.any(c < 0):
                    raise ValueError(f"loss {loss.name!r} gave negative or non-finite cell coefficients")
                cl = problem.cap_loss or loss
                if problem.cap is not None:
                    cc = cl.cell_infimum(a, b) if lower else cl.cell_average(a, b)
                    if lower:
                        cc = np.append(cc, cl.tail_infimum(self.columns.edges[0], self.columns.edges[-1]))
                else:
                    cc = None
                cache[key] = (c, cc)
            c, cc = cache[key]
            costs.append(self.weights[l] * c)
            cap_rows.append(cc)
        self.cost = np.concatenate(costs)
        self.n_p = self.cost.size
        self.model = HighsModel(self.cost)
        blocks = sp.kron(sp.identity(self.M, format="csr"), sp.csr_matrix(np.ones((1, self.n_c)))).tocsr()
        self.model.add_rows(blocks, 1.0, 1.0)
        # rows after the M simplex rows: their p-parts (model order), rhs kind, and segment/budget links
        self._trip_r: list[np.ndarray] = []  # p-parts of all rows after the simplex rows, as triplets
        self._trip_c: list[np.ndarray] = []
        self._trip_v: list[np.ndarray] = []
        self._delta_rows: list[int] = []
        self._fixed_rows: list[np.ndarray] = []
        self._fixed_rhs: list[np.ndarray] = []
        self._seg_rows: list[np.ndarray] = []
        self._seg_budget: list[np.ndarray] = []
        if problem.monotone:
            mono = monotone_matrix(self.table.column_pi, lower=lower, n_cols=self.n_c)
            mat = sp.kron(sp.identity(self.M, format="csr"), mono).tocsr()
            self._add_fixed(mat, np.zeros(mat.shape[0]))
        if problem.cap is not None:
            # a small margin absorbs the solver tolerance so released noise meets the cap exactly
            rhs = problem.cap if lower else problem.cap - 1e-8 * max(1.0, problem.cap)
            mat = sp.block_diag([sp.csr_matrix(r[None, :]) for r in cap_rows]).tocsr()
            self._add_fixed(mat, np.full(self.M, rhs))
        self._budget = np.full(self.n_groups, -1, dtype=np.int64)
        self._seg_added: dict[int, np.ndarray] = {}
        self._full = np.zeros(self.n_groups, dtype=bool)
        self._events: set[bytes] = set()
        self._rhs = problem.delta

    def _add_fixed(self, mat, rhs):
        """Rows ``mat @ p ≤ rhs`` whose right-hand side is not δ (monotonicity, caps)."""
        m = sp.csr_matrix(mat)
        if m.shape[0] == 0:
            return
        idx = self.model.add_rows(m, -INF, np.asarray(rhs, dtype=float))
        coo = m.tocoo()
        self._record(idx[coo.row], coo.col, coo.data)
        self._fixed_rows.append(idx)
        self._fixed_rhs.append(np.asarray(rhs, dtype=float))

    # ------------------------------------------------------------------ oracle (Algorithms 3 / G.1)
    def densities(self, x: np.ndarray) -> np.ndarray:
        """q_l(j) = p_l(j)/|Π_j| on the decision cells, shape (M, n_cells)."""
        P = np.asarray(x[: self.n_p], dtype=float).reshape(self.M, self.n_c)[:, : self.n_cells]
        return P / self.table.column_widths[None, :]

    def _contrib(self, q: np.ndarray, si: int, rows: np.ndarray) -> np.ndarray:
        t = self.table
        sl = slice(t.offsets[si], t.offsets[si + 1])
        j, m, ln = t.cell[sl], t.shifted[sl], t.length[sl].astype(float)
        qm = np.where(m[None, :] >= 0, q[self.t_m[rows]][:, np.maximum(m, 0)], 0.0)
        return ln[None, :] * (q[self.t_l[rows]][:, j] - self.exp_eps * qm)

    def worst_values(self, x: np.ndarray) -> np.ndarray:
        """max_A of the privacy shortfall plus δ for every constraint group (Algorithm 3 / G.1)."""
        q = self.densities(x)
        out = np.zeros(self.n_groups)
        for si, a, b in self._by_shift:
            n_seg = self.table.offsets[si + 1] - self.table.offsets[si]
            step = max(1, 2_000_000 // max(1, n_seg))
            for c in range(a, b, step):
                rows = np.arange(c, min(b, c + step))
                out[rows] = np.maximum(self._contrib(q, si, rows), 0.0).sum(axis=1)
        return out

    def shortfalls(self, x: np.ndarray) -> np.ndarray:
        return self.worst_values(x) - self._rhs

    def has_full_cut(self, r: int) -> bool:
        return bool(self._full[r])

    @property
    def shift_cuts_added(self) -> int:
        return int(np.sum(self._budget >= 0))

    def _segments(self, r: int):
        t = self.table
        si = int(self.t_si[r])
        sl = slice(t.offsets[si], t.offsets[si + 1])
        return si, sl, t.cell[sl], t.shifted[sl], t.length[sl].astype(float)

    def _record(self, rows, cols, vals) -> None:
        """Remember the p-part (model row, p column, value) of new rows for :meth:`dual_bound`."""
        self._trip_r.append(np.asarray(rows, dtype=np.int64))
        self._trip_c.append(np.asarray(cols, dtype=np.int64))
        self._trip_v.append(np.asarray(vals, dtype=float))

    def _ensure_budget(self, r: int) -> int:
        """Budget row Σ_q t_q + Σ_{A_j} |A_j| p_l(j)/|Π_j| ≤ δ of constraint group r (on first use)."""
        if self._budget[r] < 0:
            si, sl, j, m, ln = self._segments(r)
            free = m < 0
            cols = int(self.t_l[r]) * self.n_c + j[free]
            vals = ln[free] / self.table.column_widths[j[free]]
            b = self.model.n_rows
            self.model.h.addRow(-INF, self._rhs, cols.size, cols.astype(np.int32), vals)
            self.model.n_rows += 1
            self._record(np.full(cols.size, b), cols, vals)
            self._delta_rows.append(b)
            self._budget[r] = b
        return int(self._budget[r])

    def add_segments(self, r: int, select: np.ndarray) -> int:
        """t_q ≥ |q|·(p_l(j)/|Π_j| − e^ε p_l′(j′)/|Π_j′|) for the selected segments q of group r."""
        si, sl, j, m, ln = self._segments(r)
        new_budget = int(self._budget[r] < 0)  # a new budget row is a cut too (its free segments)
        b = self._ensure_budget(r)
        added = self._seg_added.setdefault(r, np.zeros(j.size, dtype=bool))
        l, l2 = int(self.t_l[r]), int(self.t_m[r])
        keep = select & (m >= 0) & ~added
        if l == l2:
            keep &= j != m  # a cell mapped onto itself by the same distribution is never positive
        idx = np.nonzero(keep)[0]
        n = idx.size
        if n == 0:
            return new_budget
        jj, mm, ll = j[idx], m[idx], ln[idx]
        w = self.table.column_widths
        h = self.model.h
        first = self.model.n_cols
        h.addCols(n, np.zeros(n), np.zeros(n), np.full(n, INF), n, np.arange(n, dtype=np.int32),
                  np.full(n, b, dtype=np.int32), np.ones(n))
        self.model.n_cols += n
        r0 = self.model.n_rows
        c1, c2 = l * self.n_c + jj, l2 * self.n_c + mm
        v1, v2 = ll / w[jj], -self.exp_eps * ll / w[mm]
        idx_cols = np.column_stack((c1, c2, first + np.arange(n))).ravel().astype(np.int32)
        vals = np.column_stack((v1, v2, np.full(n, -1.0))).ravel()
        h.addRows(n, np.full(n, -INF), np.zeros(n), 3 * n, (3 * np.arange(n)).astype(np.int32), idx_cols, vals)
        self.model.n_rows += n
        seg_rows = np.arange(r0, r0 + n)
        self._record(np.concatenate((seg_rows, seg_rows)), np.concatenate((c1, c2)), np.concatenate((v1, v2)))
        self._seg_rows.append(seg_rows)
        self._seg_budget.append(np.full(n, b))
        added[idx] = True
        return n + new_budget

    def add_shift_cut(self, r: int) -> int:
        self._full[r] = True
        si, sl, j, m, ln = self._segments(r)
        return self.add_segments(r, np.ones(j.size, dtype=bool))

    def add_worst_segments(self, r: int, x: np.ndarray) -> int:
        contrib = self._contrib(self.densities(x), int(self.t_si[r]), np.array([r]))[0]
        return self.add_segments(r, contrib > 0)

    def add_event_cut(self, r: int, x: np.ndarray) -> bool:
        si, sl, j, m, ln = self._segments(r)
        contrib = self._contrib(self.densities(x), si, np.array([r]))[0]
        sel = contrib > 0
        key = np.int64(r).tobytes() + np.packbits(sel).tobytes()
        if key in self._events:
            return False
        self._events.add(key)
        w = self.table.column_widths
        l, l2 = int(self.t_l[r]), int(self.t_m[r])
        coef = np.zeros(self.n_p)
        np.add.at(coef, l * self.n_c + j[sel], ln[sel] / w[j[sel]])
        cov = sel & (m >= 0)
        np.add.at(coef, l2 * self.n_c + m[cov], -self.exp_eps * ln[cov] / w[m[cov]])
        nzc = np.nonzero(coef)[0]
        idx = self.model.n_rows
        self.model.h.addRow(-INF, self._rhs, nzc.size, nzc.astype(np.int32), coef[nzc])
        self.model.n_rows += 1
        self._record(np.full(nzc.size, idx), nzc, coef[nzc])
        self._delta_rows.append(idx)
        return True

    def add_all_shift_cuts(self) -> None:
        for r in range(self.n_groups):
            self.add_shift_cut(r)

    def infeasibility_message(self) -> str:
        p = self.problem
        lo, hi = self.partition.edges[0], self.partition.edges[-1]
        extra = " or the caps/monotonicity constraints are too strict" if (p.cap is not None or p.monotone) else ""
        return (f"P′(π, β) is infeasible: the support [{lo:.6g}, {hi:.6g}) is too small for (ε, δ) = "
                f"({p.epsilon:g}, {p.delta:g}) with Δf = {p.sensitivity:g}{extra}; enlarge the support or refine β.")

    # ------------------------------------------------------------------ certified lower bound
    def dual_bound(self, row_duals: np.ndarray) -> float:
        """Σ_l θ_l − δ Σ ψ − Σ rhs·y at a dual-feasible point built from ``row_duals`` (HiGHS signs).

        As :meth:`dpdro.BoundingLP.dual_bound`, with one θ_l per distribution: θ_l is the minimum
        reduced cost over the columns of block l. Valid whatever the solver's accuracy."""
        y = np.maximum(-np.asarray(row_duals, dtype=float), 0.0)
        if self._seg_rows:
            seg = np.concatenate(self._seg_rows)
            y[seg] = np.minimum(y[seg], y[np.concatenate(self._seg_budget)])
        n_rows = self.model.n_rows - self.M
        if self._trip_r:
            p_rows = sp.csr_matrix((np.concatenate(self._trip_v), (np.concatenate(self._trip_r) - self.M,
                                                                   np.concatenate(self._trip_c))), shape=(n_rows, self.n_p))
        else:
            p_rows = sp.csr_matrix((n_rows, self.n_p))
        yr = y[self.M:]
        reduced = self.cost + p_rows.T @ yr
        magnitude = np.abs(self.cost) + abs(p_rows).T @ yr
        nnz = np.diff(p_rows.tocsc().indptr) if p_rows.shape[0] else np.zeros(self.n_p, dtype=int)
        safe = (reduced - (nnz + 4) * 1.01 * _U * magnitude).reshape(self.M, self.n_c)
        thetas = safe.min(axis=1)
        theta = float(np.sum(thetas))
        theta_err = (self.M + 2) * _U * float(np.sum(np.abs(thetas)))
        penalty = self._rhs * float(y[np.asarray(self._delta_rows, dtype=int)].sum()) if self._delta_rows else 0.0
        if self._fixed_rows:
            fr, fh = np.concatenate(self._fixed_rows), np.concatenate(self._fixed_rhs)
            penalty += float(np.sum(fh * y[fr]))
        n_pen = len(self._delta_rows) + sum(r.size for r in self._fixed_rows)
        penalty *= 1.0 + (n_pen + 4) * _U
        bound = theta - theta_err - penalty
        bound -= _COEFF_SAFETY * abs(bound) + 4 * _U * (abs(theta) + penalty)
        return float(np.nextafter(bound, -np.inf))


# ============================================================================ oracle as a function
@dataclass(frozen=True)
class DDShortfall:
    """Output of Algorithm 3 / G.1: the pair of pieces (l, l′), shift φ*, worst event A* and V*."""

    pair: tuple[int, int]
    phi: float
    event: np.ndarray
    value: float  # V(φ*, A*) − δ: > 0 means violated
    by_group: np.ndarray  # the same for every constraint group (l, l′, s)
    groups: np.ndarray  # rows (l, l′, s) with s in units of β


def dd_max_privacy_shortfall(problem: DataDependentProblem, partition: Partition, probs, *, lower: bool = False,
                             grouped: bool = False) -> DDShortfall:
    """Algorithm 3 (uniform pieces) / Algorithm G.1 (groupings λ): the constraint of P′(π, β) (or of
    D′(π, β) with ``lower=True``) with maximum privacy shortfall at the distributions ``probs``
    (shape (M, number of decision cells)). Shares the segment tables with the LP."""
    lp = DDBoundingLP(problem, partition, "lower" if lower else "upper", grouped=grouped)
    P = np.asarray(probs, dtype=float)
    if P.ndim != 2 or P.shape[0] != lp.M or P.shape[1] not in (lp.n_cells, lp.n_c):
        raise ValueError(f"probs must have shape ({lp.M}, {lp.n_cells}), got {P.shape}")
    if P.shape[1] != lp.n_c:
        P = np.concatenate((P, np.zeros((lp.M, lp.n_c - P.shape[1]))), axis=1)
    x = P.ravel()
    values = lp.worst_values(x) - problem.delta
    groups = np.column_stack((lp.t_l, lp.t_m, lp.table.shifts[lp.t_si]))
    if values.size == 0:
        return DDShortfall((0, 0), 0.0, np.zeros((0, 2)), -problem.delta, values, groups)
    r = int(np.argmax(values))
    si = int(lp.t_si[r])
    contrib = lp._contrib(lp.densities(x), si, np.array([r]))[0]
    mask = np.zeros(lp.table.length.size, dtype=bool)
    mask[lp.table.offsets[si]:lp.table.offsets[si + 1]] = contrib > 0
    return DDShortfall((int(lp.t_l[r]), int(lp.t_m[r])), float(lp.table.shifts[si] * partition.beta),
                       event_intervals(lp.table, mask, partition.beta), float(values[r]), values, groups)


# ============================================================================ certification of a family
@dataclass(frozen=True)
class FamilyProfile:
    """max over admissible shifts of δ_{l,l′}(φ) = ∫ (p_l(y) − e^ε p_l′(y − φ))_+ dy for every pair."""

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


def family_privacy_profile(noises: Sequence[PiecewiseUniform], piece_edges, epsilon: float,
                           sensitivity: float) -> FamilyProfile:
    """Exact privacy profile of the data-dependent mechanism that adds ``noises[l]`` when the query
    value lies in [piece_edges[l], piece_edges[l+1]).

    For each ordered pair (l, l′) the admissible shifts are φ ∈ (e_l′ − e_{l+1}, e_{l′+1} − e_l) ∩
    [−Δf, Δf] (some ϕ in piece l has ϕ + φ in piece l′); δ_{l,l′}(φ) is continuous and piecewise affine
    with breakpoints on the noises' common lattice, so its supremum is its maximum over the lattice
    points of the closed range. Computed from the densities alone (no LP), with a rigorous floating-
    point error bound as in :mod:`dpdro.privacy`.
    """
    noises = list(noises)
    if not noises or not all(isinstance(n, PiecewiseUniform) for n in noises):
        raise TypeError("noises must be a non-empty sequence of dpdro.PiecewiseUniform")
    e = np.asarray(piece_edges, dtype=float)
    if e.ndim != 1 or e.size != len(noises) + 1 or np.any(np.diff(e) <= 0):
        raise ValueError(f"piece_edges must be {len(noises) + 1} strictly increasing values, got {e.tolist()}")
    epsilon = check_positive("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    lats = [_lattice(n, sensitivity) for n in noises]
    if any(lat is None for lat in lats):
        raise ValueError("every noise needs edges on a lattice whose step divides the sensitivity (give a grid)")
    h = min(lat[2] for lat in lats)
    ticks, kd = [], None
    for n, (t, k, hh) in zip(noises, lats):
        r = hh / h
        if abs(r - round(r)) > 1e-9:
            raise ValueError("the noises' lattices are incommensurable")
        ticks.append(t * int(round(r)))
    kd = int(round(sensitivity / h))
    lo = min(int(t[0]) for t in ticks)
    hi = max(int(t[-1]) for t in ticks)
    n = hi - lo
    G = np.zeros((len(noises), n))
    max_dens = 0.0
    n_edges = 0
    eta = 0.0
    for i, (nz, t) in enumerate(zip(noises, ticks)):
        probs = nz.probs / nz.probs.sum()
        w = np.diff(t)
        G[i, t[0] - lo:t[-1] - lo] = np.repeat(probs / w, w)
        max_dens = max(max_dens, float(np.max(nz.densities)))
        n_edges = max(n_edges, t.size)
        eta = max(eta, float(np.max(np.abs(nz.edges - t * h))) + 2 * _U * max(1.0, float(np.max(np.abs(nz.edges)))))
    rel = (e - e[0]) / h
    et = np.round(rel).astype(np.int64)
    eta_phi = float(np.max(np.abs(rel - et))) * h + 4 * _U * float(np.max(np.abs(e)))
    if eta_phi > 1e-6 * h:
        raise ValueError("piece_edges must lie on the noises' lattice (relative to piece_edges[0])")
    M = len(noises)
    L1, L2 = np.meshgrid(np.arange(M), np.arange(M), indexing="ij")
    L1, L2 = L1.ravel(), L2.ravel()
    s_lo = np.maximum(et[L2] - et[L1 + 1], -kd)
    s_hi = np.minimum(et[L2 + 1] - et[L1], kd)
    keep = s_lo <= s_hi
    L1, L2, s_lo, s_hi = L1[keep], L2[keep], s_lo[keep], s_hi[keep]
    best = np.full(L1.size, -np.inf)
    best_s = np.zeros(L1.size, dtype=np.int64)
    e_lo = _exp_down(epsilon)
    pad = np.concatenate((np.zeros((M, kd)), G, np.zeros((M, kd))), axis=1)
    idx = np.arange(n)
    for s in range(-kd, kd + 1):
        sel = np.nonzero((s_lo <= s) & (s <= s_hi))[0]
        if sel.size == 0:
            continue
        shifted = pad[:, kd + idx - s]  # g_{l′}(i − s)
        step = max(1, 4_000_000 // max(1, n))
        for c in range(0, sel.size, step):
            ss = sel[c:c + step]
            d = np.maximum(G[L1[ss]] - e_lo * shifted[L2[ss]], 0.0).sum(axis=1)
            better = d > best[ss]
            best[ss[better]] = d[better]
            best_s[ss[better]] = s
    # error bound: as dpdro.privacy._lattice_profile, for both noises' edges, plus the Lipschitz
    # constant e^ε·2·(#edges)·max density of φ ↦ δ(φ) times the rounding of the piece edges
    dmax = float(np.max(best)) if best.size else 0.0
    err = 8.1 * _U + 1.01 * n * _U * dmax
    err += 2 * 2 * n_edges * max_dens * (eta + abs(sensitivity - kd * h) + 2 * _U * sensitivity)
    err += math.exp(epsilon) * 2 * 2 * n_edges * max_dens * eta_phi
    return FamilyProfile(np.column_stack((L1, L2)), best, best_s * h, float(err))


def certify_family(noises: Sequence[PiecewiseUniform], piece_edges, epsilon: float, sensitivity: float) -> float:
    """The smallest δ for which the data-dependent mechanism is (ε, δ)-DP (rounded up); see
    :func:`family_privacy_profile`."""
    return family_privacy_profile(noises, piece_edges, epsilon, sensitivity).delta


# ============================================================================ the released mechanism
@dataclass(frozen=True, eq=False)
class DataDependentMechanism:
    """Adds ``noises[l]`` to a query value ϕ in piece [piece_edges[l], piece_edges[l+1]).

    Sampling follows the GitHub appendix: select the piece containing the *true* query value, then
    sample its piecewise-uniform noise. Use a cryptographically secure generator in production.
    """

    noises: tuple
    piece_edges: np.ndarray
    epsilon: float
    delta: float
    sensitivity: float

    def __post_init__(self):
        object.__setattr__(self, "noises", tuple(self.noises))
        if not self.noises or not all(isinstance(n, PiecewiseUniform) for n in self.noises):
            raise TypeError("noises must be a non-empty sequence of dpdro.PiecewiseUniform (one per piece)")
        e = np.asarray(self.piece_edges, dtype=float)
        if e.ndim != 1 or e.size != len(self.noises) + 1 or np.any(np.diff(e) <= 0) or not np.all(np.isfinite(e)):
            raise ValueError(f"piece_edges must be {len(self.noises) + 1} finite strictly increasing values, got {e.tolist()}")
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        e.setflags(write=False)
        object.__setattr__(self, "piece_edges", e)

    @property
    def n_pieces(self) -> int:
        return len(self.noises)

    def piece(self, value):
        """Index of the piece containing each query value (ValueError outside Φ)."""
        v = np.asarray(value, dtype=float)
        if np.any(~np.isfinite(v)) or np.any(v < self.piece_edges[0]) or np.any(v >= self.piece_edges[-1]):
            raise ValueError(f"query value must lie in Φ = [{self.piece_edges[0]:g}, {self.piece_edges[-1]:g}), "
                             f"got {value!r}")
        out = np.searchsorted(self.piece_edges, v, side="right") - 1
        return int(out) if out.ndim == 0 else out

    def noise_for(self, value) -> PiecewiseUniform:
        return self.noises[self.piece(value)]

    def sample_noise(self, value, rng=None):
        """One noise draw per query value (array or scalar), each from its own piece's distribution."""
        rng = np.random.default_rng(rng)
        v = np.asarray(value, dtype=float)
        k = np.atleast_1d(self.piece(v))
        out = np.empty(k.size)
        for l in np.unique(k):
            sel = k == l
            out[sel] = self.noises[l].sample(int(sel.sum()), rng=rng)
        return float(out[0]) if v.ndim == 0 else out.reshape(v.shape)

    def release(self, value, rng=None):
        """The private answer ϕ + X̃(ϕ)."""
        return np.asarray(value, dtype=float) + self.sample_noise(value, rng)

    def expected_losses(self, loss="l1") -> np.ndarray:
        if isinstance(loss, (list, tuple)):
            return np.array([n.expected_loss(c) for n, c in zip(self.noises, loss)])
        return np.array([n.expected_loss(loss) for n in self.noises])

    def certify(self) -> float:
        """Exact smallest δ of the family (≤ ``delta`` for released mechanisms)."""
        return certify_family(self.noises, self.piece_edges, self.epsilon, self.sensitivity)

    def to_dict(self) -> dict:
        return dict(noises=[n.to_dict() for n in self.noises], piece_edges=self.piece_edges.tolist(),
                    epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity)

    @classmethod
    def from_dict(cls, data: dict) -> "DataDependentMechanism":
        return cls(tuple(PiecewiseUniform.from_dict(n) for n in data["noises"]), np.asarray(data["piece_edges"]),
                   data["epsilon"], data["delta"], data["sensitivity"])


# ============================================================================ results and drivers
@dataclass
class DDUpperBound:
    """A certified upper bound on P′: the objective of a released, certified mechanism."""

    value: float  # Σ_l ω_l E c_l(X_l), rounded up
    mechanism: DataDependentMechanism
    certified_delta: float
    lp_value: float
    piece_losses: np.ndarray  # E c_l(X_l) per piece
    weights: np.ndarray  # ω_l
    partition: Partition
    iterations: int
    seconds: float
    repair_weight: float = 0.0
    simplex_iterations: int = 0
    history: list = field(default_factory=list)

    @property
    def noises(self):
        return self.mechanism.noises


@dataclass
class DDLowerBound:
    """A valid lower bound on P′ (``grouped=False``) or on the piece-constant problem (``grouped=True``)."""

    value: float
    lp_value: float
    p: np.ndarray  # (number of distributions, decision cells + tail)
    columns: Partition
    core_offset: int
    partition: Partition
    iterations: int
    seconds: float
    grouped: bool = False
    simplex_iterations: int = 0
    history: list = field(default_factory=list)


def _round_up(x: float) -> float:
    return float(np.nextafter(x + _COEFF_SAFETY * abs(x) + 4 * _U * abs(x), np.inf))


def _cp_defaults(lp: DDBoundingLP) -> dict:
    """Cut-round sizes (measured heuristic): with thousands of constraint groups (uniform pieces, e.g.
    Figure 3 with K ≥ 32) lazy cuts on *every* violated group per round were 2–3× faster than 4 full
    + 256 lazy; with few groups of long segments (Figure 5's 9 pieces) the latter was 2× faster."""
    if lp.n_groups > 1500:
        return dict(full_per_round=1, lazy_per_round=10**9)
    return dict(full_per_round=4, lazy_per_round=256)


def _family(lp: DDBoundingLP, x: np.ndarray) -> list[PiecewiseUniform]:
    part, prob = lp.partition, lp.problem
    P = np.clip(np.asarray(x[: lp.n_p]).reshape(lp.M, lp.n_c), 0.0, None)
    out = []
    for l in range(lp.M):
        meta = dict(epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity,
                    piece=[float(lp.grouping.edges[l]), float(lp.grouping.edges[l + 1])])
        nz = PiecewiseUniform(part.edges, P[l] / P[l].sum(), grid=part.beta, metadata=meta)
        out.append(monotone_noise(nz) if prob.monotone else nz)
    return out


def _mix(a, b, w):
    out = []
    for x, y in zip(a, b):
        probs = (1.0 - w) * x.probs + w * y.probs
        nz = PiecewiseUniform(x.edges, probs / probs.sum(), grid=x.grid, metadata=dict(x.metadata))
        out.append(nz)
    return out


def dd_upper_bound(problem: DataDependentProblem, partition: Partition, *, cuts: str = "shift", tol: float = 1e-9,
                   **kwargs) -> DDUpperBound:
    """Solve P′(π, β) by Algorithm 1 with the oracle of Algorithm 3 / G.1 and release its noises.

    Returns a :class:`DDUpperBound` whose ``mechanism`` (one PiecewiseUniform per piece) satisfies
    ``mechanism.certify() <= δ`` exactly (repaired by mixing if the solver overshot), meets the caps and
    monotonicity exactly, and whose ``value`` (rounded up) is a valid upper bound on P′.
    ``**kwargs`` go to :func:`dpdro.cutting_plane.run_cutting_plane` (``time_limit``, ``max_iter``, …).
    """
    lp = DDBoundingLP(problem, partition, "upper")
    opts = {**_cp_defaults(lp), **kwargs}
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, **opts)
    if not res.converged:
        raise RuntimeError(f"Algorithm 1 stopped after {res.iterations} iterations ({res.seconds:.1f} s) with a "
                           f"privacy shortfall of {res.max_shortfall:.3e}; no certified mechanism to release")
    edges = lp.grouping.edges
    fam = _family(lp, res.x)
    prof = family_privacy_profile(fam, edges, problem.epsilon, problem.sensitivity)
    d, weight = prof.delta, 0.0
    if d > problem.delta:
        anchor = None
        if problem.cap is None:
            k = partition.widths
            uni = PiecewiseUniform(partition.edges, k / k.sum(), grid=partition.beta)
            du = certify_family([uni] * lp.M, edges, problem.epsilon, problem.sensitivity)
            if du < problem.delta:
                anchor = ([uni] * lp.M, du)
        for frac in (1 - 1e-4, 1 - 1e-2, 0.9, 0.5) if anchor is None else ():
            lp.set_delta(frac * problem.delta)
            try:
                ares = run_cutting_plane(lp, cuts=cuts, tol=tol, **opts)
            except InfeasibleError:
                continue
            cand = _family(lp, ares.x)
            da = certify_family(cand, edges, problem.epsilon, problem.sensitivity)
            if da < problem.delta:
                anchor = (cand, da)
                break
        lp.set_delta(problem.delta)
        if anchor is None:
            raise RuntimeError("repair failed: no anchor mechanism strictly below δ was found")
        fa, da = anchor
        target = problem.delta - 4.0 * prof.error_bound
        weight = min(1.0, (d - target) / (d - da))
        while True:
            mixed = _mix(fam, fa, weight)
            dm = certify_family(mixed, edges, problem.epsilon, problem.sensitivity)
            if dm <= problem.delta:
                fam, d = mixed, dm
                break
            if weight >= 1.0:  # pragma: no cover
                raise RuntimeError("repair failed")
            weight = min(1.0, 2.0 * weight)
    mech = DataDependentMechanism(tuple(fam), edges, problem.epsilon, problem.delta, problem.sensitivity)
    losses = np.array([fam[l].expected_loss(problem.piece_loss(l)) for l in range(lp.M)])
    if problem.cap is not None:
        capped = np.array([fam[l].expected_loss(problem.cap_loss or problem.piece_loss(l)) for l in range(lp.M)])
        if np.any(capped > problem.cap):
            raise RuntimeError(f"released noise exceeds the cap {problem.cap:g} (max {capped.max():.12g}); "
                               "solver tolerance too large")
    value = _round_up(float(np.sum(lp.weights * losses)))
    return DDUpperBound(value, mech, d, res.objective, losses, lp.weights, partition, res.iterations, res.seconds,
                        weight, res.simplex_iterations, res.history)


def dd_lower_bound(problem: DataDependentProblem, partition: Partition, *, grouped: bool = False,
                   cuts: str = "shift", tol: float = 1e-9, **kwargs) -> DDLowerBound:
    """Solve D′(π, β) by Algorithm 1 and return a valid lower bound (a dual-feasible objective).

    ``grouped=False``: a lower bound on P′ (one distribution per fine piece Φ_k(β), exact shifts,
    weights inf w; see the module docstring). ``grouped=True``: a lower bound on the best mechanism
    constant on the problem's pieces.
    """
    lp = DDBoundingLP(problem, partition, "lower", grouped=grouped)
    opts = {**_cp_defaults(lp), **kwargs}
    res = run_cutting_plane(lp, cuts=cuts, tol=tol, **opts)
    value = lp.dual_bound(res.row_duals)
    P = np.clip(res.x[: lp.n_p], 0.0, None).reshape(lp.M, lp.n_c)
    return DDLowerBound(value, res.objective, P, lp.columns, lp.table.core_offset, partition, res.iterations,
                        res.seconds, grouped, res.simplex_iterations, res.history)
