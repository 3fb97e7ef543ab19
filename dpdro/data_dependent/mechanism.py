r"""The released data-dependent mechanism: one piecewise-uniform noise per piece of Φ."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_open_unit, check_positive
from ..noise import PiecewiseUniform
from .privacy import certify_delta

__all__ = ["Mechanism"]


@dataclass(frozen=True, eq=False)
class Mechanism:
    """Adds ``noises[l]`` to a query value ϕ in piece [piece_edges[l], piece_edges[l+1]).

    Sampling follows the GitHub appendix: select the piece containing the *true* query value, then
    sample its piecewise-uniform noise. Use a cryptographically secure generator in production.

    Parameters
    ----------
    noises : one :class:`dpdro.PiecewiseUniform` per piece.
    piece_edges : the M + 1 edges of the pieces of Φ.
    epsilon, delta, sensitivity : the privacy parameters the mechanism was built for.

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

    def __post_init__(self):
        object.__setattr__(self, "noises", tuple(self.noises))
        if not self.noises or not all(isinstance(n, PiecewiseUniform) for n in self.noises):
            raise TypeError(
                "noises must be a non-empty sequence of dpdro.PiecewiseUniform (one per piece)"
            )
        e = np.asarray(self.piece_edges, dtype=float)
        if (
            e.ndim != 1
            or e.size != len(self.noises) + 1
            or np.any(np.diff(e) <= 0)
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

    @property
    def n_pieces(self) -> int:
        return len(self.noises)

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
        return int(out) if out.ndim == 0 else out

    def noise_for(self, value) -> PiecewiseUniform:
        return self.noises[self.piece(value)]

    def sample_noise(self, value, rng=None):
        """One noise draw per query value (array or scalar), each from its own piece's
        distribution."""
        rng = np.random.default_rng(rng)
        v = np.asarray(value, dtype=float)
        k = np.atleast_1d(self.piece(v))
        out = np.empty(k.size)
        for piece_index in np.unique(k):
            sel = k == piece_index
            out[sel] = self.noises[piece_index].sample(int(sel.sum()), rng=rng)
        return float(out[0]) if v.ndim == 0 else out.reshape(v.shape)

    def release(self, value, rng=None):
        """The private answer ϕ + X̃(ϕ)."""
        return np.asarray(value, dtype=float) + self.sample_noise(value, rng)

    def expected_losses(self, loss="l1") -> np.ndarray:
        if isinstance(loss, (list, tuple)):
            return np.array([n.expected_loss(c) for n, c in zip(self.noises, loss, strict=False)])
        return np.array([n.expected_loss(loss) for n in self.noises])

    def certify(self) -> float:
        """Exact smallest δ of the family (≤ ``delta`` for released mechanisms)."""
        return certify_delta(self.noises, self.piece_edges, self.epsilon, self.sensitivity)

    def to_dict(self) -> dict:
        return dict(
            noises=[n.to_dict() for n in self.noises],
            piece_edges=self.piece_edges.tolist(),
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
        )

    @classmethod
    def from_dict(cls, data: dict) -> Mechanism:
        return cls(
            tuple(PiecewiseUniform.from_dict(n) for n in data["noises"]),
            np.asarray(data["piece_edges"]),
            data["epsilon"],
            data["delta"],
            data["sensitivity"],
        )
