r"""The released data-dependent mechanism: one piecewise-uniform law per piece of Φ."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import check_open_unit, check_positive
from ..noise import PiecewiseUniform
from .privacy import certify_delta, check_grid_masses

__all__ = ["KINDS", "Mechanism"]

KINDS = ("noise", "output")


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A data-dependent mechanism: the law of its release depends on the piece [piece_edges[l],
    piece_edges[l+1]) that contains the *true* query value ϕ.

    ``kind="noise"`` (the paper's P′(π, β)): release ϕ + X_l, X_l ~ ``noises[l]``.
    ``kind="output"`` (:mod:`dpdro.data_dependent.output`): release ϕ itself with probability
    ``query_atoms[l]``, the grid point e_0 + i·``edge_step`` with probability
    ``grid_masses[l, i − 1]`` (i = 1 … K − 1, K = ``edge_ticks[-1]``), and otherwise e_0 + Z_l,
    Z_l ~ ``noises[l]`` in coordinates relative to the first edge e_0 (the output law does not
    follow ϕ inside its piece).
    With ``clamp=True`` the release is clamped to [e_0, e_M] (post-processing: the certificate is
    unchanged, and for losses non-increasing on (−∞, 0] and non-decreasing on [0, ∞) the loss only
    falls).

    Sampling follows the GitHub appendix: select the piece containing the true query value, then
    sample its law. Use a cryptographically secure generator in production.

    Parameters
    ----------
    noises : one :class:`dpdro.PiecewiseUniform` per piece.
    piece_edges : the M + 1 edges of the pieces of Φ.
    epsilon, delta, sensitivity : the privacy parameters the mechanism was built for.
    kind : ``"noise"`` or ``"output"``.
    query_atoms : per piece, the probability of releasing the query value itself (output kind).
    grid_masses : per piece, the probabilities of the interior grid points (output kind with
        ``edge_ticks``; shape (M, K − 1); ``None``: none).
    clamp : clamp the release to [piece_edges[0], piece_edges[-1]].
    edge_ticks, edge_step : the piece edges relative to the first, exactly, as integers times
        ``edge_step`` (then ``piece_edges`` is computed from them and the certificate does not
        depend on where the range lies; see :meth:`moved`).

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 2 (a conditional noise distribution γ(·|ϕ)) and
       the GitHub appendix (sampling the data-dependent noise).
    """

    noises: tuple
    piece_edges: np.ndarray
    epsilon: float
    delta: float
    sensitivity: float
    kind: str = "noise"
    query_atoms: np.ndarray | None = None
    clamp: bool = False
    edge_ticks: np.ndarray | None = None
    edge_step: float | None = None
    grid_masses: np.ndarray | None = None

    def __post_init__(self):
        object.__setattr__(self, "noises", tuple(self.noises))
        if not self.noises or not all(isinstance(n, PiecewiseUniform) for n in self.noises):
            raise TypeError(
                "noises must be a non-empty sequence of dpdro.PiecewiseUniform (one per piece)"
            )
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        e = np.asarray(self.piece_edges, dtype=float)
        if self.edge_ticks is not None:
            t = np.asarray(self.edge_ticks, dtype=np.int64)
            step = check_positive("edge_step", self.edge_step)
            if t.shape != (len(self.noises) + 1,) or np.any(np.diff(t) <= 0):
                raise ValueError(f"edge_ticks must be {len(self.noises) + 1} increasing integers")
            e = float(e.ravel()[0]) + (t - t[0]) * step
            t.setflags(write=False)
            object.__setattr__(self, "edge_ticks", t - t[0])
            object.__setattr__(self, "edge_step", step)
        # exact edges may round to equal floats far from 0 (spacing above β): non-decreasing then
        exact = self.edge_ticks is not None
        if (
            e.ndim != 1
            or e.size != len(self.noises) + 1
            or np.any(np.diff(e) < 0 if exact else np.diff(e) <= 0)
            or not np.all(np.isfinite(e))
        ):
            raise ValueError(
                f"piece_edges must be {len(self.noises) + 1} finite strictly increasing values, "
                f"got {e.tolist()}"
            )
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        e.setflags(write=False)
        object.__setattr__(self, "piece_edges", e)
        object.__setattr__(self, "clamp", bool(self.clamp))
        if self.kind == "output":
            a = np.zeros(len(self.noises)) if self.query_atoms is None else self.query_atoms
            a = np.asarray(a, dtype=float)
            if a.shape != (len(self.noises),) or np.any(a < 0) or np.any(a > 1):
                raise ValueError(f"query_atoms must be {len(self.noises)} values in [0, 1]")
            a.setflags(write=False)
            object.__setattr__(self, "query_atoms", a)
            if self.grid_masses is not None:
                g = check_grid_masses(self.grid_masses, a, self.edge_ticks)
                g.setflags(write=False)
                object.__setattr__(self, "grid_masses", g)
        elif self.query_atoms is not None or self.grid_masses is not None:
            raise ValueError(
                "query_atoms and grid_masses belong to output mechanisms (a noise has its own atom)"
            )

    @property
    def n_pieces(self) -> int:
        return len(self.noises)

    @property
    def origin(self) -> float:
        """e_0, the point the output laws are relative to."""
        return float(self.piece_edges[0])

    def piece(self, value):
        """Index of the piece containing each query value (ValueError outside Φ)."""
        v = np.asarray(value, dtype=float)
        if (
            np.any(~np.isfinite(v))
            or np.any(v < self.piece_edges[0])
            or np.any(v >= self.piece_edges[-1])
        ):
            raise ValueError(
                f"query value must lie in Φ = [{self.piece_edges[0]:g}, {self.piece_edges[-1]:g}), "
                f"got {value!r}"
            )
        out = np.searchsorted(self.piece_edges, v, side="right") - 1
        if self.edge_ticks is not None:
            out = self._exact_pieces(v, out)
        return int(out) if out.ndim == 0 else out

    def _exact_pieces(self, v: np.ndarray, out: np.ndarray) -> np.ndarray:
        """With exact edges e_0 + t_l·step (``edge_ticks``), the pieces of the values the rounded
        ``piece_edges`` may misplace (those within a few units in the last place of an edge),
        decided in exact rational arithmetic: the certificate is that of the exact edges."""
        e = self.piece_edges
        flat, out = np.ravel(v), np.array(out, copy=True).reshape(-1)
        # the edges around each value (the nearest on either side: e_out ≤ v < e_out+1)
        tol = 4 * np.spacing(np.max(np.abs(e)))
        below, above = e[np.clip(out, 0, e.size - 1)], e[np.clip(out + 1, 0, e.size - 1)]
        near = (np.abs(flat - below) <= tol) | (np.abs(above - flat) <= tol)
        if np.any(near):
            o, step = Fraction(float(e[0])), Fraction(self.edge_step)
            bounds = [o + int(t) * step for t in self.edge_ticks]
            for i in np.nonzero(near)[0]:
                r = Fraction(float(flat[i]))
                if not bounds[0] <= r < bounds[-1]:
                    raise ValueError(f"query value {float(flat[i])!r} lies outside Φ (exact edges)")
                out[i] = bisect.bisect_right(bounds, r) - 1
        return out.reshape(np.shape(v))

    def noise_for(self, value) -> PiecewiseUniform:
        return self.noises[self.piece(value)]

    def _draw(self, value, rng, add: bool):
        """One draw per query value: the release (``add``) or, for noise mechanisms without
        clamping, the noise X itself."""
        rng = np.random.default_rng(rng)
        v = np.asarray(value, dtype=float)
        k = np.atleast_1d(self.piece(v))
        flat = np.atleast_1d(v).ravel()
        out = np.empty(k.size)
        for piece_index in np.unique(k):
            sel = k == piece_index
            draw = self.noises[piece_index].sample(int(sel.sum()), rng=rng)
            if self.kind == "noise":
                out[sel] = flat[sel] + draw if add else draw
            elif self.grid_masses is None:
                at_query = rng.random(draw.size) < self.query_atoms[piece_index]
                out[sel] = np.where(at_query, flat[sel], self.origin + draw)
            else:
                out[sel] = self._output_draw(piece_index, flat[sel], draw, rng)
        if self.clamp:
            out = np.clip(out, self.piece_edges[0], self.piece_edges[-1])
        return float(out[0]) if v.ndim == 0 else out.reshape(v.shape)

    def _output_draw(self, piece: int, values, draw, rng) -> np.ndarray:
        """The query value, a grid point or the law's draw, by their probabilities."""
        g = self.grid_masses[piece]
        a = float(self.query_atoms[piece])
        choice = np.searchsorted(np.cumsum(np.concatenate(([a], g))), rng.random(draw.size),
                                 side="right")
        points = self.origin + np.arange(g.size + 1) * self.edge_step  # index 0 unused
        return np.where(choice == 0, values,
                        np.where(choice <= g.size, points[np.minimum(choice, g.size)],
                                 self.origin + draw))

    def release(self, value, rng=None):
        """The private answer for each query value (array or scalar)."""
        return self._draw(value, rng, True)

    def sample_noise(self, value, rng=None):
        """The added noise (release − value), one draw per query value (array or scalar)."""
        if self.kind == "noise" and not self.clamp:
            return self._draw(value, rng, False)
        return self.release(value, rng) - np.asarray(value, dtype=float)

    def expected_losses(self, loss="l1") -> np.ndarray:
        """E c(X_l) of every piece's noise (noise mechanisms without clamping; the loss of an
        output law depends on where ϕ lies in its piece)."""
        if self.kind != "noise":
            raise ValueError("expected_losses is defined for noise mechanisms (kind='noise')")
        if isinstance(loss, (list, tuple)):
            return np.array([n.expected_loss(c) for n, c in zip(self.noises, loss, strict=False)])
        return np.array([n.expected_loss(loss) for n in self.noises])

    def _certificate_options(self) -> dict:
        out = dict(kind=self.kind, query_atoms=self.query_atoms)
        if self.grid_masses is not None:
            out["grid_masses"] = self.grid_masses
        if self.edge_ticks is not None:
            out.update(edge_ticks=self.edge_ticks, edge_step=self.edge_step)
        return out

    def certify(self) -> float:
        """Exact smallest δ of the family (≤ ``delta`` for released mechanisms)."""
        return certify_delta(
            self.noises, self.piece_edges, self.epsilon, self.sensitivity,
            **self._certificate_options(),
        )

    def moved(self, origin: float) -> Mechanism:
        """The same mechanism on the range translated to start at ``origin`` (piece edges given
        exactly in ticks, so the certificate is exactly that of this mechanism)."""
        ticks, step = self.edge_ticks, self.edge_step
        if ticks is None:
            raise ValueError("moved() needs a mechanism whose piece edges are given in edge_ticks")
        return Mechanism(
            self.noises, np.array([float(origin)]), self.epsilon, self.delta, self.sensitivity,
            kind=self.kind, query_atoms=self.query_atoms, clamp=self.clamp, edge_ticks=ticks,
            edge_step=step, grid_masses=self.grid_masses,
        )

    def to_dict(self) -> dict:
        out = dict(
            noises=[n.to_dict() for n in self.noises],
            piece_edges=self.piece_edges.tolist(),
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
            kind=self.kind,
            clamp=self.clamp,
        )
        if self.query_atoms is not None:
            out["query_atoms"] = self.query_atoms.tolist()
        if self.edge_ticks is not None:
            out.update(edge_ticks=self.edge_ticks.tolist(), edge_step=self.edge_step)
        if self.grid_masses is not None:
            out["grid_masses"] = self.grid_masses.tolist()
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Mechanism:
        return cls(
            tuple(PiecewiseUniform.from_dict(n) for n in data["noises"]),
            np.asarray(data["piece_edges"]) if "edge_ticks" not in data
            else np.asarray(data["piece_edges"][:1]),
            data["epsilon"],
            data["delta"],
            data["sensitivity"],
            kind=data.get("kind", "noise"),
            query_atoms=data.get("query_atoms"),
            clamp=data.get("clamp", False),
            edge_ticks=data.get("edge_ticks"),
            edge_step=data.get("edge_step"),
            grid_masses=data.get("grid_masses"),
        )
