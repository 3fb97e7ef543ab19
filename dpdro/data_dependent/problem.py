r"""The data-dependent problem P′ (Observation 2) and its pieces Λ_l of Φ (Algorithm G.1).

See :mod:`dpdro.data_dependent` for the problem, its pieces and the bounds built on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize

from .._validation import check_bool, check_positive, check_real, integer_ratio
from ..losses import Loss, make_loss
from ..problem import Problem as IndependentProblem

__all__ = ["Problem"]


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

    @property
    def fine_widths(self) -> np.ndarray:
        """The widths of the fine pieces for the lower bounds' weights β·w̲_k: β itself (the float
        edges far from 0 carry rounding), never more than the float width of the last piece."""
        return np.minimum(np.diff(self.fine_edges), self.beta)


class Problem:
    """An instance of the data-dependent problem P′ (Observation 2).

    Parameters
    ----------
    epsilon, delta, sensitivity : ε > 0, δ ∈ (0, 1), Δf > 0.
    loss : one loss (``"l1"``, ``"l2"``, a :class:`dpdro.Loss`, a callable) for every ϕ, or a
        sequence with one loss per piece (requires explicit ``pieces``), e.g. one
        :class:`dpdro.PiecewiseLinear` per piece.
    phi_lo, phi_hi : the bounded range Φ = [phi_lo, phi_hi) of the query.
    weight : the density w on Φ: ``None`` (uniform), a callable w(ϕ) (integrated numerically; its
        infimum on a fine piece is taken over a grid plus a bounded minimisation, so pass piecewise-
        constant weights for a rigorous lower bound), or ``(edges, values)`` piecewise-constant with
        edges covering Φ. Must be non-negative with positive mass; it is normalised to total mass 1.
    pieces : ``None`` (the fine pieces Φ_k(β) of width β, the paper's uniform partition), an int M
        (M equal pieces), or the piece edges [phi_lo = e_0 < … < e_M = phi_hi] (non-uniform, as in
        Algorithm G.1). Edges must lie on the β-grid of the noise partition used.
    monotone : restrict every noise to densities non-increasing in |x| (see :mod:`dpdro.monotone`).
    cap, cap_loss : instance-optimality caps (GitHub appendix): every piece's expected loss under
        ``cap_loss`` (default: the objective loss of that piece) must be ≤ ``cap``.

    All parameters are keyword-only.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 2 (problem P′), Assumption 3, Section 3.2 (the
       fine pieces Φ_k(β)) and Algorithm G.1 (the grouping λ of the GitHub appendix).
    """

    def __init__(
        self,
        *,
        epsilon,
        delta,
        sensitivity=1.0,
        loss="l1",
        phi_lo,
        phi_hi,
        weight=None,
        pieces=None,
        monotone: bool = False,
        cap=None,
        cap_loss=None,
    ):
        monotone = check_bool("monotone", monotone)
        # the data-independent problem with the same (ε, δ, Δf, loss, monotone); with one loss per
        # piece its loss is ℓ1 (a placeholder: compare per piece instead)
        self.base_problem = IndependentProblem(
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            loss=loss if not isinstance(loss, (list, tuple)) else "l1",
            monotone=bool(monotone),
        )
        self.epsilon = self.base_problem.epsilon
        self.delta = self.base_problem.delta
        self.sensitivity = self.base_problem.sensitivity
        self.exp_epsilon = self.base_problem.exp_epsilon
        lo, hi = check_real("phi_lo", phi_lo), check_real("phi_hi", phi_hi)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(
                f"phi_lo and phi_hi must be finite (Φ is bounded), got phi_lo={phi_lo!r}, "
                f"phi_hi={phi_hi!r}"
            )
        if not hi > lo:
            raise ValueError(
                f"phi_hi must be > phi_lo (Φ = [phi_lo, phi_hi) non-empty), got phi_lo={phi_lo!r}, "
                f"phi_hi={phi_hi!r}"
            )
        self.phi_lo, self.phi_hi = lo, hi
        self.monotone = bool(monotone)
        self.piece_spec = _piece_edges(pieces, lo, hi)
        self.losses = _piece_losses(loss, self.piece_spec)
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
                raise ValueError(
                    f"weight must be finite and >= 0 on Φ = [{lo:g}, {hi:g}), got weight({bad:g}) "
                    "= "
                    f"{float(weight(bad))!r}"
                )
            total = integrate.quad(lambda x: float(weight(x)), lo, hi, limit=200)[0]
            if not (math.isfinite(total) and total > 0):
                raise ValueError(
                    f"weight must be integrable with positive mass on Φ, got ∫w = {total!r}"
                )
            return ("callable", weight, total)
        if isinstance(weight, tuple) and len(weight) == 2:
            e = np.asarray(weight[0], dtype=float)
            v = np.asarray(weight[1], dtype=float)
            if e.ndim != 1 or v.shape != (e.size - 1,) or e.size < 2:
                raise ValueError(
                    "a piecewise-constant weight is (edges, values) with len(values) = len(edges) "
                    "− 1, "
                    f"got shapes {e.shape} and {v.shape}"
                )
            if not (np.all(np.isfinite(e)) and np.all(np.diff(e) > 0)):
                raise ValueError("weight edges must be finite and strictly increasing")
            if e[0] > self.phi_lo or e[-1] < self.phi_hi:
                raise ValueError(
                    f"weight edges must cover Φ = [{self.phi_lo:g}, {self.phi_hi:g}), got "
                    f"[{e[0]:g}, {e[-1]:g}]"
                )
            if not np.all(np.isfinite(v)) or np.any(v < 0):
                raise ValueError(f"weight values must be finite and >= 0, got {v.tolist()}")
            total = float(self._pc_integral(e, v, np.array([lo]), np.array([hi]))[0])
            if not total > 0:
                raise ValueError("weight must have positive mass on Φ (all values on Φ are 0)")
            return ("piecewise", (e, v), total)
        raise TypeError(
            "weight must be None, a callable w(ϕ) or a tuple (edges, values), got "
            f"{type(weight).__name__}"
        )

    @staticmethod
    def _pc_integral(e, v, a, b):
        lo = np.maximum(e[None, :-1], a[:, None])
        hi = np.minimum(e[None, 1:], b[:, None])
        return np.sum(np.clip(hi - lo, 0, None) * v[None, :], axis=1)

    def weight_masses(self, edges) -> np.ndarray:
        """∫ w over each interval [edges[i], edges[i+1]) divided by ∫_Φ w (so they sum to 1 over
        Φ)."""
        e = np.asarray(edges, dtype=float)
        a, b = e[:-1], e[1:]
        kind = self._weight[0]
        if kind == "uniform":
            return (b - a) / (self.phi_hi - self.phi_lo)
        if kind == "piecewise":
            (we, wv), total = self._weight[1], self._weight[2]
            return self._pc_integral(we, wv, a, b) / total
        f, total = self._weight[1], self._weight[2]
        return (
            np.array(
                [
                    integrate.quad(lambda x: float(f(x)), lo, hi, limit=100)[0]
                    for lo, hi in zip(a, b, strict=False)
                ]
            )
            / total
        )

    def weight_segments(self, a: float, b: float) -> list[tuple[float, float, float]]:
        """The normalised weight on [φ_lo + a, φ_lo + b) (coordinates relative to φ_lo) as
        sub-intervals of constant density, ``[(s0, s1, density), …]``. ValueError for a callable
        weight (its shape inside an interval is not known exactly)."""
        kind = self._weight[0]
        if kind == "uniform":
            return [(float(a), float(b), 1.0 / (self.phi_hi - self.phi_lo))]
        if kind == "callable":
            raise ValueError(
                "the output family needs a uniform or piecewise-constant weight (edges, values); "
                "a callable weight's shape inside a piece is not known exactly"
            )
        (we, wv), total = self._weight[1], self._weight[2]
        rel = we - self.phi_lo
        cuts = np.unique(np.concatenate(([a, b], rel[(rel > a) & (rel < b)])))
        mids = 0.5 * (cuts[:-1] + cuts[1:])
        idx = np.clip(np.searchsorted(rel, mids, side="right") - 1, 0, wv.size - 1)
        return [
            (float(s0), float(s1), float(wv[i] / total))
            for s0, s1, i in zip(cuts[:-1], cuts[1:], idx, strict=True)
        ]

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
            for i, (lo, hi) in enumerate(zip(a, b, strict=False)):
                overlap = (we[:-1] < hi) & (we[1:] > lo)
                out[i] = wv[overlap].min()
            return out / total
        f, total = self._weight[1], self._weight[2]
        out = np.empty(a.size)
        for i, (lo, hi) in enumerate(zip(a, b, strict=False)):
            xs = np.linspace(lo, hi, 65)[:-1]
            vals = np.array([float(f(x)) for x in xs])
            x0 = xs[int(np.argmin(vals))]
            h = (hi - lo) / 64
            r = optimize.minimize_scalar(
                lambda x: float(f(x)), bounds=(max(lo, x0 - h), min(hi, x0 + h)), method="bounded"
            )
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
                raise ValueError(
                    f"pieces: edge {self.piece_spec[i]!r} is not on the β-grid phi_lo + k·β with "
                    f"beta = {beta!r}; choose β dividing every piece width"
                )
        edges = fine[lam]
        return _Grouping(beta, K, lam, edges, fine)

    def piece_loss(self, piece: int) -> Loss:
        return self.base_problem.loss if self.losses is None else self.losses[piece]

    def all_losses(self) -> list[Loss]:
        """Every loss of the problem: the objective's (one, or one per piece) and the cap's."""
        losses = list(self.losses) if self.losses is not None else [self.loss]
        if self.cap is not None and self.cap_loss is not None:
            losses.append(self.cap_loss)
        return losses

    def rounding_excess(self, beta: float) -> float | None:
        """The largest e_β of the problem's losses (:meth:`dpdro.Problem.rounding_excess`), or
        ``None`` when one of them has no finite bound: then the randomized-rounding bound D′_R does
        not apply. D′_R subtracts each piece's own e_β (:mod:`dpdro.data_dependent`)."""
        excess = [loss.grid_interpolation_excess(beta) for loss in self.all_losses()]
        return None if any(e is None for e in excess) else max(excess)

    def __repr__(self) -> str:
        pieces = "fine" if self.piece_spec is None else f"{self.piece_spec.size - 1}"
        return (
            f"data_dependent.Problem(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"sensitivity={self.sensitivity:g}, "
            f"Phi=[{self.phi_lo:g}, {self.phi_hi:g}), pieces={pieces}, monotone={self.monotone}, "
            f"cap={self.cap})"
        )


#: the most pieces ``Problem(pieces=n)`` splits Φ into (each carries its own noise in the LPs;
#: pieces=10**9 had spent minutes allocating 8 GB of edges)
MAX_PIECES = 100_000


def _piece_edges(pieces, lo: float, hi: float) -> np.ndarray | None:
    """``Problem(pieces=...)`` validated: ``None`` (fine pieces), or the piece edges on [lo, hi]."""
    if pieces is None:
        return None
    if isinstance(pieces, (int, np.integer)) and not isinstance(pieces, bool):
        if not 1 <= pieces <= MAX_PIECES:
            raise ValueError(
                f"pieces must be an integer in [1, {MAX_PIECES}], an array of piece edges or None, "
                f"got {pieces!r}"
            )
        return np.linspace(lo, hi, int(pieces) + 1)
    if isinstance(pieces, bool):
        raise TypeError(
            f"pieces must be None, an integer >= 1 or an array of piece edges, got {pieces!r}"
        )
    e = np.asarray(pieces, dtype=float)
    if e.ndim != 1 or e.size < 2 or not np.all(np.isfinite(e)):
        raise ValueError(
            f"pieces must be a one-dimensional array of >= 2 finite piece edges, got {pieces!r}"
        )
    if np.any(np.diff(e) <= 0):
        raise ValueError(f"pieces must be strictly increasing piece edges, got {e.tolist()}")
    tol_lo, tol_hi = 1e-12 * max(1.0, abs(lo)), 1e-12 * max(1.0, abs(hi))
    if not (abs(e[0] - lo) <= tol_lo and abs(e[-1] - hi) <= tol_hi):
        raise ValueError(
            f"pieces must start at phi_lo = {lo!r} and end at phi_hi = {hi!r}, got "
            f"[{e[0]!r}, …, {e[-1]!r}]"
        )
    e = e.copy()
    e[0], e[-1] = lo, hi
    return e


def _piece_losses(loss, piece_spec: np.ndarray | None) -> tuple | None:
    """``Problem(loss=...)`` validated: one loss per piece (a list), or ``None`` for one loss."""
    if isinstance(loss, (list, tuple)):
        if piece_spec is None:
            raise ValueError(
                "a list of losses (one per piece) needs explicit pieces (an int or piece edges)"
            )
        if len(loss) != piece_spec.size - 1:
            raise ValueError(
                f"loss must have one entry per piece ({piece_spec.size - 1}), got "
                f"{len(loss)}"
            )
        return tuple(make_loss(x) for x in loss)
    return None
