r"""A catalog of precomputed certified noises with a conservative lookup.

The catalog (package data ``dpdro/data/catalog.json.gz``, rebuilt by ``scripts/build_catalog.py``)
stores, for every point (ε_i, δ_j) of a grid and each loss ("l1": c(x) = |x|, "l2": c(x) = x²), at
Δf = 1: the noise X_ij released by :func:`dpdro.optimal_noise`, its expected loss U_ij (an upper
bound on the optimum) and the certified lower bound L_ij (a dual-feasible objective).

Lookup. A request (ε, δ, Δf, loss) inside the covered range gets

* the noise: Δf·X_{i′j′} for the stored point (ε_{i′}, δ_{j′}) with ε_{i′} ≤ ε, δ_{j′} ≤ δ of
  smallest expected loss, **re-certified** at the request: ``certify_delta(Δf·X, ε, Δf) <= δ`` is
  checked (the next candidate is tried otherwise), so nothing stored is trusted; where the rounding
  of the scaled edges pushes that certificate over a tight δ (measured: 1.00004e-10 for the noise
  stored at (0.05, 1e-10) scaled to Δf = 0.1, the only candidate there), the noise is scaled onto
  the exactly scaled lattice instead (:func:`dpdro._scaling.scaled_noise` with ``exact``: every edge
  on it, scaled by k·h ∈ [Δf, Δf·(1 + 2⁻³⁶)]), as :func:`dpdro.optimal_noise` does;
* the bracket [L, U] on the optimal expected loss OPT(ε, δ, Δf): U = E c(Δf·X), and
  L = Δf^k·max{L_{i″j″} : ε_{i″} ≥ ε, δ_{j″} ≥ δ} (k = 1 for ℓ1, 2 for ℓ2), rounded down.

Proposition (why the bracket is certified). Let OPT(ε, δ, Δf) be the infimum of E c(X) over all
additive noises X that are (ε, δ)-DP for queries of sensitivity Δf, and c(x) = |x|^k.

(a) OPT is non-increasing in ε and in δ. (b) OPT(ε, δ, Δf) = Δf^k·OPT(ε, δ, 1), and X is
(ε, δ)-DP at sensitivity 1 if and only if Δf·X is (ε, δ)-DP at sensitivity Δf.

Proof. (a) If ε ≤ ε″ and δ ≤ δ″, every constraint γ(A) ≤ e^ε γ(A − φ) + δ implies γ(A) ≤ e^{ε″} γ(A
− φ) + δ″, so every noise feasible at (ε, δ) is feasible at (ε″, δ″); the infimum over the larger
set is not larger. (b) For a law γ of X let γ_Δ be the law of Δf·X. The map (A, φ) ↦ (Δf·A, Δf·φ) is
a bijection between events and shifts |φ| ≤ 1 and those with |φ| ≤ Δf, and γ_Δ(Δf·A) = γ(A),
γ_Δ(Δf·A − Δf·φ) = γ(A − φ): the constraints correspond one to one. The cost is E|Δf·X|^k =
Δf^k·E|X|^k, and X ↦ Δf·X is a bijection of the feasible sets. □

Hence, with ε_{i′} ≤ ε ≤ ε_{i″} and δ_{j′} ≤ δ ≤ δ_{j″}: the stored noise X_{i′j′} is (ε_{i′},
δ_{j′})-DP, so (by (a)'s argument) (ε, δ)-DP, and Δf·X_{i′j′} is (ε, δ)-DP at Δf by (b); so OPT(ε,
δ, Δf) ≤ U. And L_{i″j″} ≤ OPT(ε_{i″}, δ_{j″}, 1) ≤ OPT(ε, δ, 1) by (a), so Δf^k·L_{i″j″} ≤ OPT(ε,
δ, Δf) by (b). □

Bracket width. With U*_ij the smallest U over the grid points at or below (ε_i, δ_j) and L*_ij the
largest L at or above it (what a lookup pairs), a request at a grid point gets U*_ij/L*_ij − 1
(:meth:`Catalog.point_gap`: at most the point's own U_ij/L_ij − 1, smaller where a neighbour's
noise or bound is better). The gap is largest for a request just above a grid point in both
coordinates (U from that point, L from the next point up in both): it is at most
max_ij U*_ij / L*_{i+1,j+1} − 1 over the grid cells (and U*_ij/L*_ij − 1 on the top and right
edges), which :meth:`Catalog.worst_gap` computes and the tests check against random requests.

The shipped grid (:mod:`repro.catalog_build`) is made of round values, the ones practitioners type:
28 values of ε from 0.05 to 10 and 19 of δ from 1e-10 to 0.1 (1 and 5 per decade), each point
designed at a 0.1% target; a request at a grid point gets a certified bracket within 1%. A request
between grid points gets a conservative one that can be much wider where the optimum changes fast
(small ε, ℓ2: :meth:`Catalog.summary` prints the worst), and a design for exactly those settings
(``dpdro.optimal_noise``, ``dpdro design``) is then the better answer.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ._scaling import check_scale, scaled_noise
from ._validation import check_choice, check_open_unit, check_positive
from .losses import make_loss
from .noise import PiecewiseUniform
from .privacy import certify_delta

__all__ = ["Catalog", "CatalogNoise", "FORMAT", "VERSION", "load", "lookup"]

FORMAT = "dpdro-catalog"
VERSION = 1
_POWER = {"l1": 1, "l2": 2}


@dataclass(frozen=True)
class CatalogNoise:
    """The result of a lookup: a certified noise and a certified bracket on the optimum.

    Attributes
    ----------
    noise : PiecewiseUniform
        The stored noise scaled to Δf, re-certified at the request; its ``metadata`` records the
        request (ε, δ, Δf, loss) and the grid point, so :meth:`dpdro.SecureSampler.from_noise`
        takes it.
    epsilon, delta, sensitivity, loss
        The request.
    certified_delta : float
        ``certify_delta(noise, epsilon, sensitivity)`` (≤ ``delta``).
    upper, lower : float
        U = E c(noise) and the certified lower bound L on the optimal expected loss.
    source, bound_source : tuple of float
        The grid points (ε′, δ′) of the noise and (ε″, δ″) of the lower bound.
    """

    noise: PiecewiseUniform
    epsilon: float
    delta: float
    sensitivity: float
    loss: str
    certified_delta: float
    upper: float
    lower: float
    source: tuple
    bound_source: tuple

    @property
    def gap(self) -> float:
        """U/L − 1, a certified upper bound on the noise's relative suboptimality."""
        return self.upper / self.lower - 1.0


def _scaled(
    noise: PiecewiseUniform, factor: float, metadata: dict, exact: bool = False
) -> PiecewiseUniform:
    """The law of factor·X (:func:`dpdro._scaling.scaled_noise`: edges and lattice scaled, masses
    unchanged; with ``exact``, onto the exactly scaled lattice), with ``metadata``."""
    scaled = scaled_noise(noise, factor, exact=exact)
    return PiecewiseUniform(
        scaled.edges, scaled.probs, grid=scaled.grid, metadata=metadata, atom=scaled.atom
    )


class Catalog:
    """A parsed catalog document (see the module docstring); :func:`load` returns the packaged one.

    Parameters
    ----------
    doc : dict
        ``{"format": "dpdro-catalog", "version": 1, "grid": {"epsilons": [...], "deltas": [...],
        "losses": [...], ...}, "entries": [{"loss", "i", "j", "upper", "lower", "noise"}, ...],
        "provenance": {...}}`` with one entry per loss and grid point, at Δf = 1.
    """

    def __init__(self, doc: dict):
        if (
            not isinstance(doc, dict)
            or doc.get("format") != FORMAT
            or doc.get("version") != VERSION
        ):
            raise ValueError(
                f"catalog must be a {FORMAT!r} document of version {VERSION}, got "
                f"{(doc.get('format'), doc.get('version')) if isinstance(doc, dict) else doc!r}"
            )
        self.grid = dict(doc["grid"])
        self.provenance = dict(doc.get("provenance") or {})
        self.epsilons = np.asarray(self.grid["epsilons"], dtype=float)
        self.deltas = np.asarray(self.grid["deltas"], dtype=float)
        self.losses = tuple(self.grid["losses"])
        shape = (self.epsilons.size, self.deltas.size)
        self.upper = {loss: np.full(shape, math.inf) for loss in self.losses}
        self.lower = {loss: np.full(shape, -math.inf) for loss in self.losses}
        self._noise = {}
        for e in doc["entries"]:
            loss, i, j = e["loss"], int(e["i"]), int(e["j"])
            self.upper[loss][i, j], self.lower[loss][i, j] = e["upper"], e["lower"]
            self._noise[loss, i, j] = e["noise"]

    @property
    def epsilon_range(self) -> tuple[float, float]:
        return float(self.epsilons[0]), float(self.epsilons[-1])

    @property
    def delta_range(self) -> tuple[float, float]:
        return float(self.deltas[0]), float(self.deltas[-1])

    @classmethod
    def from_file(cls, path) -> Catalog:
        """The catalog stored at ``path`` (gzip-compressed JSON, as ``scripts/build_catalog.py``
        writes it)."""
        return cls(json.loads(gzip.decompress(Path(path).read_bytes())))

    def noise(self, loss: str, i: int, j: int) -> PiecewiseUniform:
        """The stored noise at (ε_i, δ_j), Δf = 1."""
        return PiecewiseUniform.from_dict(self._noise[loss, i, j])

    def _check(self, epsilon, delta, sensitivity, loss) -> tuple[float, float, float, str]:
        epsilon = check_positive("epsilon", epsilon)
        delta = check_open_unit("delta", delta)
        sensitivity = check_positive("sensitivity", sensitivity)
        loss = check_choice("loss", loss, self.losses)
        check_scale(sensitivity, make_loss(loss).degree)
        for name, value, (lo, hi) in (
            ("epsilon", epsilon, self.epsilon_range),
            ("delta", delta, self.delta_range),
        ):
            if not lo <= value <= hi:
                raise ValueError(
                    f"{name} must lie in the catalog's range [{lo!r}, {hi!r}], got {value!r}; "
                    "design a noise with dpdro.optimal_noise (dpdro design) instead"
                )
        return epsilon, delta, sensitivity, loss

    def lookup(self, *, epsilon, delta, sensitivity=1.0, loss="l1") -> CatalogNoise:
        """The conservative lookup of the module docstring.

        Raises
        ------
        ValueError
            For ε, δ outside the covered range (the message states it), Δf ≤ 0, or a loss the
            catalog does not hold; also if no stored candidate re-certifies (a corrupt catalog).
        """
        epsilon, delta, sensitivity, loss = self._check(epsilon, delta, sensitivity, loss)
        E, D = np.meshgrid(self.epsilons, self.deltas, indexing="ij")
        above = (E >= epsilon) & (D >= delta)
        k = int(np.argmax(np.where(above, self.lower[loss], -math.inf)))
        i2, j2 = np.unravel_index(k, E.shape)
        lower = float(
            np.nextafter(self.lower[loss][i2, j2] * sensitivity ** _POWER[loss], -math.inf)
        )
        below = (E <= epsilon) & (D <= delta)
        for k in np.argsort(np.where(below, self.upper[loss], math.inf), axis=None):
            i, j = np.unravel_index(k, E.shape)
            if not below[i, j]:
                break
            meta = {
                "epsilon": epsilon,
                "delta": delta,
                "sensitivity": sensitivity,
                "loss": loss,
                "catalog_point": [float(E[i, j]), float(D[i, j])],
            }
            unit = self.noise(loss, i, j)
            noise = _scaled(unit, sensitivity, meta)
            certified = certify_delta(noise, epsilon, sensitivity)
            if certified > delta:  # the edges' rounding drift (tiny δ): the exactly scaled lattice
                noise = _scaled(unit, sensitivity, meta, exact=True)
                certified = certify_delta(noise, epsilon, sensitivity)
            if certified <= delta:
                return CatalogNoise(
                    noise,
                    epsilon,
                    delta,
                    sensitivity,
                    loss,
                    certified,
                    noise.expected_loss(loss),
                    lower,
                    (float(E[i, j]), float(D[i, j])),
                    (float(E[i2, j2]), float(D[i2, j2])),
                )
        raise ValueError(
            f"no stored noise re-certifies at epsilon = {epsilon!r}, delta = {delta!r}, "
            f"sensitivity = {sensitivity!r}: the catalog is corrupt; rebuild it with "
            "scripts/build_catalog.py"
        )

    def _envelopes(self, loss: str) -> tuple[np.ndarray, np.ndarray]:
        """(U*, L*): U*_ij = min U over the points ≤ (ε_i, δ_j), L*_ij = max L over the points
        ≥ (ε_i, δ_j) rounded down: what a lookup pairs (module docstring)."""
        u, low = self.upper[loss], self.lower[loss]
        best_u = np.minimum.accumulate(np.minimum.accumulate(u, axis=0), axis=1)
        rev = low[::-1, ::-1]
        best_l = np.maximum.accumulate(np.maximum.accumulate(rev, axis=0), axis=1)[::-1, ::-1]
        return best_u, np.nextafter(best_l, -math.inf)

    def worst_gap(self, loss: str) -> float:
        """max U/L − 1 over all requests in the covered range (module docstring, bracket width):
        the worst case is a request just above (ε_i, δ_j), with U*_ij against L* at
        (ε_{i+1}, δ_{j+1})."""
        best_u, best_l = self._envelopes(loss)
        # a request in the cell [ε_i, ε_{i+1}) × [δ_j, δ_{j+1}) (or on the top/right edge)
        ii = np.minimum(np.arange(best_u.shape[0]) + 1, best_u.shape[0] - 1)
        jj = np.minimum(np.arange(best_u.shape[1]) + 1, best_u.shape[1] - 1)
        return float(np.max(best_u / best_l[np.ix_(ii, jj)]) - 1.0)

    def point_gap(self, loss: str) -> float:
        """max U*_ij/L*_ij − 1 over the grid points: the worst bracket of a request at a grid point
        (at most that point's own U_ij/L_ij − 1; smaller where a neighbour's noise or bound is
        better)."""
        best_u, best_l = self._envelopes(loss)
        return float(np.max(best_u / best_l) - 1.0)

    def summary(self) -> str:
        """The covered range, the grid, and the worst bracket at and between grid points, per
        loss."""
        (e0, e1), (d0, d1) = self.epsilon_range, self.delta_range
        at = ", ".join(f"{loss} {100 * self.point_gap(loss):.2f}%" for loss in self.losses)
        between = ", ".join(f"{loss} {100 * self.worst_gap(loss):.3g}%" for loss in self.losses)
        return (
            f"catalog: epsilon in [{e0:g}, {e1:g}] ({self.epsilons.size} values), delta in "
            f"[{d0:g}, {d1:g}] ({self.deltas.size} values),\n"
            f"losses {', '.join(self.losses)}, sensitivity 1 (any other scaled exactly)\n"
            f"worst bracket U/L - 1 at a grid point: {at}\n"
            f"worst between grid points: {between} (design a noise there instead)"
        )


@functools.lru_cache(maxsize=1)
def load() -> Catalog:
    """The catalog shipped with dpdro (package data, read once per process)."""
    raw = resources.files("dpdro").joinpath("data", "catalog.json.gz").read_bytes()
    return Catalog(json.loads(gzip.decompress(raw)))


def lookup(*, epsilon, delta, sensitivity=1.0, loss="l1") -> CatalogNoise:
    """:meth:`Catalog.lookup` on the packaged catalog (:func:`load`)."""
    return load().lookup(epsilon=epsilon, delta=delta, sensitivity=sensitivity, loss=loss)
