"""The released noise: a mixture of uniform distributions on consecutive cells (a histogram density).

This is the form (2) of the paper's restriction γ(A) = Σ_j p(j)·|A ∩ Π_j| / |Π_j|, and the sampler of
the GitHub appendix ("Sampling noise from the optimized distribution"): pick cell j with probability
p(j), then draw uniformly on Π_j.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .losses import Loss, make_loss

__all__ = ["PiecewiseUniform"]


@dataclass(frozen=True, eq=False)
class PiecewiseUniform:
    """Piecewise-constant noise density with cells [edges[j], edges[j+1]) of probability ``probs[j]``.

    Parameters
    ----------
    edges : array of N + 1 strictly increasing finite floats.
    probs : array of N non-negative floats summing to one (a sum within 1e-6 of one is renormalised).
    grid : optional lattice step h with every edge an integer multiple of h; :func:`dpdro.certify_delta`
        then certifies exactly on that lattice. Noises returned by the solvers carry their β here.

    Notes
    -----
    :meth:`sample` draws from a :class:`numpy.random.Generator`. That is fine for experiments; a
    production release needs a cryptographically secure source, e.g.
    ``numpy.random.default_rng(secrets.randbits(128))``, and care with floating-point attacks.
    """

    edges: np.ndarray
    probs: np.ndarray
    grid: float | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        edges = np.asarray(self.edges, dtype=float)
        probs = np.asarray(self.probs, dtype=float)
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(f"edges must be a one-dimensional array with at least 2 entries, got shape {edges.shape}")
        if probs.shape != (edges.size - 1,):
            raise ValueError(f"probs must have len(edges) - 1 = {edges.size - 1} entries, got shape {probs.shape}")
        if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise ValueError("edges must be finite and strictly increasing")
        if not np.all(np.isfinite(probs)) or np.any(probs < -1e-9):
            raise ValueError(f"probs must be finite and >= 0, got minimum {probs.min()!r}")
        probs = np.clip(probs, 0.0, None)
        total = probs.sum()
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"probs must sum to 1, got {total!r}")
        if abs(total - 1.0) > 1e-12:  # renormalise solver output; leave already normalised input bit-identical
            probs = probs / total
        if self.grid is not None:
            h = float(self.grid)
            ticks = edges / h
            if not (np.isfinite(h) and h > 0) or np.any(np.abs(ticks - np.round(ticks)) > 1e-6):
                raise ValueError(f"grid = {self.grid!r} must be > 0 with every edge an integer multiple of it")
            object.__setattr__(self, "grid", h)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "probs", probs)
        self.edges.setflags(write=False)
        self.probs.setflags(write=False)

    # ------------------------------------------------------------------ basic quantities
    @property
    def widths(self) -> np.ndarray:
        return np.diff(self.edges)

    @property
    def densities(self) -> np.ndarray:
        """Density value on each cell, p(j) / |Π_j|."""
        return self.probs / self.widths

    @property
    def ticks(self) -> np.ndarray:
        """Edges in units of :attr:`grid` as integers (requires ``grid``)."""
        if self.grid is None:
            raise ValueError("this noise has no grid; ticks are undefined")
        return np.round(self.edges / self.grid).astype(np.int64)

    @property
    def support(self) -> tuple[float, float]:
        nz = np.nonzero(self.probs > 0)[0]
        return float(self.edges[nz[0]]), float(self.edges[nz[-1] + 1])

    def pdf(self, x):
        x = np.asarray(x, dtype=float)
        j = np.searchsorted(self.edges, x, side="right") - 1
        inside = (j >= 0) & (j < self.probs.size)
        return np.where(inside, self.densities[np.clip(j, 0, self.probs.size - 1)], 0.0)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        cum = np.concatenate(([0.0], np.cumsum(self.probs)))
        return np.interp(x, self.edges, cum, left=0.0, right=1.0)

    def ppf(self, u):
        """Inverse CDF (the left-continuous quantile), linear within each cell."""
        u = np.asarray(u, dtype=float)
        if np.any((u < 0) | (u > 1)):
            raise ValueError("ppf arguments must lie in [0, 1]")
        cum = np.concatenate(([0.0], np.cumsum(self.probs)))
        cum[-1] = 1.0
        j = np.clip(np.searchsorted(cum, u, side="left") - 1, 0, self.probs.size - 1)
        # skip empty cells: move to the first cell with positive mass at or after j
        nz = np.nonzero(self.probs > 0)[0]
        j = nz[np.clip(np.searchsorted(nz, j), 0, nz.size - 1)]
        frac = np.clip((u - cum[j]) / self.probs[j], 0.0, 1.0)
        return np.where(u >= 1.0, self.support[1], self.edges[j] + frac * self.widths[j])

    def sample(self, size=None, rng=None):
        """Draw noise: a cell with probability p(j), then a uniform point in it (GitHub appendix)."""
        rng = np.random.default_rng(rng)
        j = rng.choice(self.probs.size, size=size, p=self.probs)
        return self.edges[j] + rng.random(size) * self.widths[j]

    def expected_loss(self, loss="l1") -> float:
        """E c(X) = Σ_j p(j)·c_j with c_j the cell averages (exact for the built-in losses)."""
        loss = make_loss(loss)
        nz = self.probs > 0
        return float(np.sum(self.probs[nz] * loss.cell_average(self.edges[:-1][nz], self.edges[1:][nz])))

    @property
    def mean(self) -> float:
        return float(np.sum(self.probs * 0.5 * (self.edges[:-1] + self.edges[1:])))

    @property
    def var(self) -> float:
        a, b = self.edges[:-1], self.edges[1:]
        second = np.sum(self.probs * (a * a + a * b + b * b) / 3.0)
        return float(second - self.mean**2)

    @property
    def std(self) -> float:
        return float(np.sqrt(self.var))

    def to_scipy(self) -> stats.rv_histogram:
        """The same distribution as a ``scipy.stats.rv_histogram``."""
        return stats.rv_histogram((self.probs, self.edges), density=False)

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        out = {"edges": self.edges.tolist(), "probs": self.probs.tolist(), "grid": self.grid, "metadata": self.metadata}
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> "PiecewiseUniform":
        return cls(np.asarray(data["edges"], dtype=float), np.asarray(data["probs"], dtype=float),
                   grid=data.get("grid"), metadata=dict(data.get("metadata") or {}))

    @classmethod
    def from_json(cls, text: str) -> "PiecewiseUniform":
        return cls.from_dict(json.loads(text))

    def __repr__(self) -> str:
        lo, hi = self.support
        return f"PiecewiseUniform({self.probs.size} cells on [{lo:.4g}, {hi:.4g}), std={self.std:.4g})"
