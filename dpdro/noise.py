"""The released noise: a mixture of uniform distributions on consecutive cells (a histogram
density), optionally with a point mass at 0.

This is the form (2) of the paper's restriction γ(A) = Σ_j p(j)·|A ∩ Π_j| / |Π_j|, and the sampler
of the GitHub appendix ("Sampling noise from the optimized distribution"): pick cell j with
probability p(j), then draw uniformly on Π_j. The optional atom γ({0}) = a is the one extension
used by ``upper_bound(..., atom=True)``: for large ε and δ the optimal noise puts mass close to δ
at 0, which a density constant on cells of width β can only approximate at an ℓ1 cost of about
a·β/2.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._rounding import UNIT_ROUNDOFF as _U
from ._validation import check_size
from .losses import make_loss

__all__ = ["PiecewiseUniform", "cell_averages", "check_noise", "fits_support"]


#: the cells whose loss averages :func:`cell_averages` computes first between two looks at the
#: clock (a callable loss evaluated point by point takes about 30 ms for them; a built-in one tens
#: of microseconds, mostly numpy's per-call overhead)
AVERAGES_PER_CHECK = 1024

#: a block of cell averages that took less than this many seconds is followed by one twice as large
#: (so a look at the clock comes at least every 2 ms of work, and a built-in loss's 10⁵ cells take a
#: few blocks: with 1024-cell blocks throughout, the staircase's pinball loss at ε = 0.0016, 62,000
#: cells, cost 0.67 s over the 70 evaluations of its γ search, 0.07 s with growing blocks)
_FAST_BLOCK = 1e-3


def cell_averages(loss, lo: np.ndarray, hi: np.ndarray, budget=None) -> np.ndarray:
    """The loss's averages over the cells [lo_j, hi_j] (``loss.cell_average``), computed
    :data:`AVERAGES_PER_CHECK` cells at a time at first, twice as many after a block that took less
    than :data:`_FAST_BLOCK` seconds, while ``budget`` (a :class:`dpdro._budget.TimeBudget`, or
    ``None``: in one go) lasts: ``TimeoutError`` once it has expired. Each average is computed on
    its own, so the values do not depend on the blocks."""
    if budget is None:
        return loss.cell_average(lo, hi)
    out = np.empty(np.shape(lo))
    c0, step = 0, AVERAGES_PER_CHECK
    while c0 < out.size:
        if budget.expired():
            raise TimeoutError("the loss's cell averages ran out of their time budget")
        t0 = time.perf_counter()
        block = slice(c0, c0 + step)
        out[block] = loss.cell_average(lo[block], hi[block])
        c0 += step
        if time.perf_counter() - t0 < _FAST_BLOCK:
            step *= 2
    return out


@dataclass(frozen=True, eq=False)
class PiecewiseUniform:
    """Piecewise-constant noise density with cells [edges[j], edges[j+1]) of probability
    ``probs[j]``.

    Parameters
    ----------
    edges : array of N + 1 strictly increasing finite floats.
    probs : array of N non-negative floats summing to 1 − ``atom`` (a sum within 1e-6 of it is
        renormalised).
    grid : optional lattice step h with every edge an integer multiple of h;
        :func:`dpdro.certify_delta` then certifies exactly on that lattice. Noises returned by the
        solvers carry their β here.
    atom : probability a ∈ [0, 1) of the point 0 (default 0: a density). With a > 0 the cells carry
        the remaining mass, ``probs`` sums to 1 − a, and :meth:`pdf` is the density of that
        absolutely continuous part.

    Notes
    -----
    :meth:`sample` draws from a :class:`numpy.random.Generator`. That is fine for experiments; a
    production release needs a cryptographically secure source and care with floating-point
    attacks: :class:`dpdro.SecureSampler` releases this law exactly from ``secrets`` randomness.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", restriction (2) and Section 4.1 (a measure uniform on each
       cell Π_j(β)); the GitHub appendix, "Sampling noise from the optimized distribution".
    .. [2] I. Mironov, "On significance of the least significant bits for differential privacy",
       CCS 2012 (why deployment needs an exact sampler).
    """

    edges: np.ndarray
    probs: np.ndarray
    grid: float | None = None
    metadata: dict = field(default_factory=dict)
    atom: float = 0.0

    def __post_init__(self):
        edges = np.asarray(self.edges, dtype=float)
        probs = np.asarray(self.probs, dtype=float)
        if edges.ndim != 1 or edges.size < 2:
            raise ValueError(
                "edges must be a one-dimensional array with at least 2 entries, got shape "
                f"{edges.shape}"
            )
        if probs.shape != (edges.size - 1,):
            raise ValueError(
                f"probs must have len(edges) - 1 = {edges.size - 1} entries, got shape "
                f"{probs.shape}"
            )
        if not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
            raise ValueError("edges must be finite and strictly increasing")
        if not np.all(np.isfinite(probs)) or np.any(probs < -1e-9):
            raise ValueError(f"probs must be finite and >= 0, got minimum {float(probs.min())!r}")
        atom = float(self.atom)
        if not (0.0 <= atom < 1.0):
            raise ValueError(f"atom must lie in [0, 1), got {self.atom!r}")
        probs = np.clip(probs, 0.0, None)
        total = probs.sum()
        if abs(total + atom - 1.0) > 1e-6:
            raise ValueError(f"probs must sum to 1 - atom = {1.0 - atom!r}, got {float(total)!r}")
        # renormalise solver output; leave normalised input bit-identical
        if abs(total + atom - 1.0) > 1e-12:
            probs = probs / (total / (1.0 - atom))  # (bit-identical to probs / total without atom)
        if self.grid is not None:
            h = float(self.grid)
            ticks = edges / h if math.isfinite(h) and h > 0 else None  # (no division by 0)
            # (an edge ticks·h computed in floating point lies up to an ulp off: 1e-5 ticks off at
            # 1e11 ticks, the uniform noise of δ = 1e-11 scaled to Δf = 0.1; the certificate pays
            # that drift, :func:`dpdro.privacy.lattice_error_bound`)
            if ticks is None or np.any(
                np.abs(ticks - np.round(ticks)) > np.maximum(1e-6, 16 * _U * np.abs(ticks))
            ):
                raise ValueError(
                    f"grid = {self.grid!r} must be > 0 with every edge an integer multiple of it"
                )
            object.__setattr__(self, "grid", h)
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "atom", atom)
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
        # the cells carry 1 − a > 0
        lo, hi = float(self.edges[nz[0]]), float(self.edges[nz[-1] + 1])
        return (min(lo, 0.0), max(hi, 0.0)) if self.atom > 0 else (lo, hi)

    def pdf(self, x):
        """Density of the cells (the absolutely continuous part; the atom at 0 is not included)."""
        x = np.asarray(x, dtype=float)
        j = np.searchsorted(self.edges, x, side="right") - 1
        inside = (j >= 0) & (j < self.probs.size)
        return np.where(inside, self.densities[np.clip(j, 0, self.probs.size - 1)], 0.0)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        cum = np.concatenate(([0.0], np.cumsum(self.probs)))
        cont = np.interp(x, self.edges, cum, left=0.0, right=1.0 - self.atom)
        return cont + self.atom * (x >= 0) if self.atom > 0 else cont

    def _pieces(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Left ends, widths and masses of the pieces in increasing order: the cells (the one
        containing 0 split at 0) and the atom as a piece of width 0 at 0."""
        if self.atom == 0:
            return self.edges[:-1], self.widths, self.probs
        edges = np.union1d(self.edges, [0.0])
        left = np.concatenate((edges[:-1], [0.0]))
        width = np.concatenate((np.diff(edges), [0.0]))
        order = np.lexsort((width > 0, left))  # the atom comes before the cell starting at 0
        left, width = left[order], width[order]
        mid = left + 0.5 * width
        j = np.clip(np.searchsorted(self.edges, mid, side="right") - 1, 0, self.probs.size - 1)
        inside = (mid >= self.edges[0]) & (mid < self.edges[-1])
        mass = np.where(width > 0, np.where(inside, self.densities[j] * width, 0.0), self.atom)
        return left, width, mass

    def ppf(self, u):
        """Inverse CDF (the left-continuous quantile), linear within each cell, 0 on the atom."""
        u = np.asarray(u, dtype=float)
        if np.any((u < 0) | (u > 1)):
            raise ValueError("ppf arguments must lie in [0, 1]")
        left, width, mass = self._pieces()
        cum = np.concatenate(([0.0], np.cumsum(mass)))
        cum[-1] = 1.0
        j = np.clip(np.searchsorted(cum, u, side="left") - 1, 0, mass.size - 1)
        # skip empty pieces: move to the first piece with positive mass at or after j
        nz = np.nonzero(mass > 0)[0]
        j = nz[np.clip(np.searchsorted(nz, j), 0, nz.size - 1)]
        frac = np.clip((u - cum[j]) / mass[j], 0.0, 1.0)
        return np.where(u >= 1.0, self.support[1], left[j] + frac * width[j])

    def sample(self, size=None, rng=None):
        """Draw noise: a cell with probability p(j), then a uniform point in it (GitHub appendix);
        the atom, if any, is drawn as 0 with probability a."""
        size = check_size("size", size)
        rng = np.random.default_rng(rng)
        if self.atom == 0:
            j = rng.choice(self.probs.size, size=size, p=self.probs)
            return self.edges[j] + rng.random(size) * self.widths[j]
        n = self.probs.size
        j = rng.choice(n + 1, size=size, p=np.append(self.probs, self.atom))  # j = n: the atom
        jc = np.minimum(j, n - 1)
        return np.where(j < n, self.edges[jc] + rng.random(size) * self.widths[jc], 0.0)

    def expected_loss(self, loss="l1", *, budget=None) -> float:
        """E c(X) = Σ_j p(j)·c_j + a·c(0) with c_j the cell averages (exact for the built-in
        losses). ``budget``: a :class:`dpdro._budget.TimeBudget` checked between blocks of cells
        (:func:`cell_averages`; ``TimeoutError`` once it has expired), the same value otherwise."""
        loss = make_loss(loss)
        nz = self.probs > 0
        averages = cell_averages(loss, self.edges[:-1][nz], self.edges[1:][nz], budget)
        cells = float(np.sum(self.probs[nz] * averages))
        return cells + self.atom * float(loss(np.array([0.0]))[0]) if self.atom > 0 else cells

    @property
    def mean(self) -> float:  # (the atom at 0 adds nothing to the first and second moments)
        return float(np.sum(self.probs * 0.5 * (self.edges[:-1] + self.edges[1:])))

    @property
    def var(self) -> float:
        a, b = self.edges[:-1], self.edges[1:]
        second = np.sum(self.probs * (a * a + a * b + b * b) / 3.0)
        return float(second - self.mean**2)

    @property
    def std(self) -> float:
        return float(np.sqrt(self.var))

    def to_scipy(self):
        """The same distribution as a ``scipy.stats.rv_histogram`` (a density: no atom allowed)."""
        from scipy import stats  # imported here: scipy.stats takes about a second to import

        if self.atom > 0:
            raise ValueError(
                f"this noise has an atom of mass {self.atom:g} at 0, which "
                "scipy.stats.rv_histogram "
                "cannot represent; use the noise's own cdf, ppf and sample"
            )
        return stats.rv_histogram((self.probs, self.edges), density=False)

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        out = {
            "edges": self.edges.tolist(),
            "probs": self.probs.tolist(),
            "grid": self.grid,
            "metadata": self.metadata,
        }
        if self.atom > 0:
            out["atom"] = self.atom
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> PiecewiseUniform:
        """The noise of :meth:`to_dict` (a mapping with ``edges`` and ``probs``; ``grid``,
        ``metadata`` and ``atom`` optional); a ``TypeError`` or ``ValueError`` names what is
        missing."""
        if not isinstance(data, dict):
            raise TypeError(
                "a noise must be a dict with 'edges' and 'probs' (PiecewiseUniform.to_dict), got "
                f"{type(data).__name__}"
            )
        missing = [key for key in ("edges", "probs") if key not in data]
        if missing:
            raise ValueError(
                f"a noise needs 'edges' and 'probs' (PiecewiseUniform.to_dict), missing {missing}"
            )
        return cls(
            np.asarray(data["edges"], dtype=float),
            np.asarray(data["probs"], dtype=float),
            grid=data.get("grid"),
            metadata=dict(data.get("metadata") or {}),
            atom=float(data.get("atom", 0.0)),
        )

    @classmethod
    def from_json(cls, text: str) -> PiecewiseUniform:
        """The noise of :meth:`to_json`; a ``ValueError`` for text that is not JSON."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a noise must be JSON (PiecewiseUniform.to_json): {exc}") from None
        return cls.from_dict(data)

    def __repr__(self) -> str:
        lo, hi = self.support
        atom = f", atom {self.atom:.4g} at 0" if self.atom > 0 else ""
        cells = f"{self.probs.size} cells on [{lo:.4g}, {hi:.4g}){atom}"
        return f"PiecewiseUniform({cells}, std={self.std:.4g})"


def check_noise(name: str, value) -> PiecewiseUniform:
    """``value`` if it is a :class:`PiecewiseUniform`, else a ``TypeError`` naming ``name``."""
    if not isinstance(value, PiecewiseUniform):
        raise TypeError(f"{name} must be a dpdro.PiecewiseUniform, got {type(value).__name__}")
    return value


def fits_support(noise: PiecewiseUniform, support) -> bool:
    """Whether the noise's support, its atom at 0 included, lies in ``support`` (``None``: the real
    line)."""
    lo, hi = support if support is not None else (-math.inf, math.inf)
    inside = lo <= noise.edges[0] and noise.edges[-1] <= hi
    return bool(inside and (noise.atom == 0 or lo <= 0 <= hi))
