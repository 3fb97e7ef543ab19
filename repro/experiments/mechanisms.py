"""The mechanisms of Tables 2 and 3 as pluggable samplers, and their noise tables.

A mechanism is any callable ``mech(values, sensitivity, rng) -> noisy values`` (arrays broadcast;
``rng`` a :class:`numpy.random.Generator`). :class:`AdditiveNoise` wraps a unit-sensitivity noise
with a ``ppf`` (``dpdro.mechanisms.Gaussian/AnalyticGaussian/TruncatedLaplace`` or the
``PiecewiseUniform`` returned by :func:`dpdro.optimal_noise`) and adds ``sensitivity · ppf(U)``.
Scaling a unit noise by Δf is exact for all four: the Gaussian and truncated Laplace calibrations
are linear in Δf, and for the positively homogeneous ℓ1 loss, X is optimal for Δf = 1 iff Δf·X is
optimal for Δf (a change of variables in the DRO problem). A mechanism with ``needs_range = True``
(the data-dependent "(OPT)", :mod:`repro.experiments.data_dependent`) also receives the range Φ of
each statistic (``phi_lo``, ``phi_hi``).

A mechanism may also offer ``noise_table(rng, shape, sensitivity, phi_lo, phi_hi)``: the noise of
``shape[0]`` successive calls on ``shape[1:]`` values each, drawn at once from ``rng`` with the
same uniforms, as a :class:`NoiseTable` (the noise of every piece of the query's range). The
coordinate-descent kernels use it to run a whole iteration without calling back into Python.

Sampling uses :class:`numpy.random.Generator`; a real release needs a secure source (e.g.
:class:`dpdro.SecureSampler`) and care with floating-point attacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from dpdro import PiecewiseUniform, Problem, certify_delta, optimal_noise
from dpdro.mechanisms import AnalyticGaussian, Gaussian, TruncatedLaplace

from ..provenance import read_json, write_json_atomic

__all__ = [
    "AdditiveNoise",
    "NoiseMechanism",
    "NoiseTable",
    "NonPrivate",
    "call_mechanism",
    "make_mechanisms",
    "optimized_unit_noise",
]

TINY = 1e-16  # uniforms are clipped to [TINY, 1 - TINY] so that Gaussian quantiles stay finite


class NoiseMechanism(Protocol):
    """A DP mechanism for a batch of scalar queries: ``mech(values, sensitivity, rng)``.

    ``values`` are the true query outputs (any shape), ``sensitivity`` broadcasts against them and
    ``rng`` is a :class:`numpy.random.Generator`. A data-independent mechanism ignores ``values``
    except to add to them; a data-dependent one may pick its noise distribution from ``values /
    sensitivity`` (the query in units of its sensitivity).
    """

    def __call__(self, values: np.ndarray, sensitivity, rng: np.random.Generator) -> np.ndarray: ...


@dataclass(frozen=True)
class NoiseTable:
    """Pre-drawn noise of successive calls of a mechanism on scalar queries of one range.

    The noisy value of a query ``v`` in draw ``i`` (an index into ``shape``) is
    ``v + scaled[piece(v)][i]``, where ``piece(v)`` is 0 when there is one piece and otherwise
    ``searchsorted(edges, min(max((v − lo)/scale, 0), top), side="right") − 1``: the query in
    units of the sensitivity from the left end ``lo`` of the designed range, assigned to a piece
    as :meth:`dpdro.data_dependent.Mechanism.piece` does. A query outside
    ``[check_lo, check_hi]`` is an error (the range Φ, with the tolerance of
    :class:`~repro.experiments.data_dependent.DataDependentNoise`).

    Attributes
    ----------
    scaled : ndarray, shape (P, *shape)
        Sensitivity × unit noise of each piece for each draw (the same floating-point product as
        the mechanism's call, so that ``v + scaled`` is its noisy value bit for bit).
    lo, scale, top : float
        Left end of the designed range, the sensitivity, the largest position (in units of
        ``scale``) kept in the last piece.
    edges : ndarray, shape (P + 1,), or None
        Piece edges in units of ``scale`` (None when P = 1).
    check_lo, check_hi : float
        The accepted query range.
    """

    scaled: np.ndarray
    lo: float = 0.0
    scale: float = 1.0
    top: float = np.inf
    edges: np.ndarray | None = None
    check_lo: float = -np.inf
    check_hi: float = np.inf

    @property
    def n_pieces(self) -> int:
        return int(self.scaled.shape[0])

    def pieces(self, values):
        """The piece of every query value (on the GPU the CUDA kernel looks pieces up itself)."""
        v = np.asarray(values)
        if self.n_pieces == 1:
            return np.zeros(v.shape, dtype=np.intp)
        if np.any(v < self.check_lo) or np.any(v > self.check_hi):
            raise ValueError("a query value lies outside its range [phi_lo, phi_hi]")
        t = np.clip((v - self.lo) / self.scale, 0.0, self.top)
        return np.searchsorted(self.edges, t, side="right") - 1


def _additive_table(scaled: np.ndarray) -> NoiseTable:
    return NoiseTable(scaled=scaled[None])


@dataclass(frozen=True)
class AdditiveNoise:
    """values + sensitivity · X with X a unit-sensitivity noise drawn by inverse transform
    (``ppf``).

    Parameters
    ----------
    name : str
        Short label ("GN", "AG", "TLN", "OPT").
    unit_noise : object
        Has a vectorised ``ppf(u)``, calibrated for Δf = 1.
    """

    name: str
    unit_noise: object

    def unit_samples(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(self.unit_noise.ppf(np.clip(u, TINY, 1.0 - TINY)), dtype=float)

    def __call__(self, values, sensitivity, rng):
        values = np.asarray(values, dtype=float)
        noise = np.asarray(sensitivity, dtype=float) * self.unit_samples(rng.random(values.shape))
        return values + noise

    def noise_table(self, rng, shape, sensitivity, phi_lo, phi_hi) -> NoiseTable:
        """One piece: the calls' noise, drawn at once (the same uniforms as ``shape[0]`` calls)."""
        u = rng.random(shape)
        return _additive_table(np.asarray(sensitivity, dtype=float) * self.unit_samples(u))


@dataclass(frozen=True)
class NonPrivate:
    """No noise (the NB / PCD columns)."""

    name: str = "NB"

    def __call__(self, values, sensitivity, rng):
        return np.asarray(values, dtype=float)

    def noise_table(self, rng, shape, sensitivity, phi_lo, phi_hi) -> NoiseTable:
        """Zero noise; draws nothing from ``rng``."""
        return _additive_table(np.zeros(shape))


def call_mechanism(mech, values, sensitivity, rng, phi_lo, phi_hi):
    """``mech(values, sensitivity, rng)``, passing the range Φ to mechanisms with
    ``needs_range``."""
    if getattr(mech, "needs_range", False):
        return mech(values, sensitivity, rng, phi_lo=phi_lo, phi_hi=phi_hi)
    return mech(values, sensitivity, rng)


def optimized_unit_noise(
    epsilon: float = 1.0,
    delta: float = 0.1,
    *,
    rel_gap: float = 0.01,
    cache: str | Path | None = None,
):
    """The data-independent ℓ1-optimal noise for Δf = 1 (:func:`dpdro.optimal_noise`), optionally
    cached as JSON.

    Returns ``(noise, info)`` with ``info`` the certified bounds, gap and δ of the released noise.
    The cache file (``results/ml/opt_noise_eps=1_delta=0.1.json``) holds the noise and ``info``; it
    is re-certified with :func:`dpdro.certify_delta` on load.
    """
    if cache is not None and Path(cache).is_file():
        data = read_json(cache)
        noise = PiecewiseUniform.from_dict(data["noise"])
        info = data["info"]
        stored = (info.get("epsilon"), info.get("delta"), info.get("sensitivity"))
        if stored != (epsilon, delta, 1.0):
            raise ValueError(
                f"cache {cache} holds the noise for (epsilon, delta, sensitivity) = "
                f"{stored}, not ({epsilon}, {delta}, 1.0)"
            )
    else:
        res = optimal_noise(
            Problem(epsilon=epsilon, delta=delta, sensitivity=1.0, loss="l1"), rel_gap=rel_gap
        )
        noise = res.noise
        info = dict(
            epsilon=epsilon,
            delta=delta,
            sensitivity=1.0,
            loss="l1",
            rel_gap_target=rel_gap,
            upper=res.upper.value,
            lower=res.lower.value,
            gap=res.gap,
            seconds=res.seconds,
            n_cells=int(noise.probs.size),
        )
        if cache is not None:
            write_json_atomic(cache, {"noise": noise.to_dict(), "info": info})
    certified = certify_delta(noise, epsilon=epsilon, sensitivity=1.0)
    if certified > delta:
        raise ValueError(
            f"optimised noise is only ({epsilon}, {certified})-DP, above delta = {delta}"
        )
    info = dict(info, certified_delta=float(certified))
    return noise, info


def make_mechanisms(
    epsilon: float = 1.0, delta: float = 0.1, *, opt_noise=None
) -> dict[str, AdditiveNoise]:
    """GN (classical Gaussian), AG (analytic Gaussian), TLN (truncated Laplace) and, if given,
    OPT."""
    mechs = {
        "GN": AdditiveNoise("GN", Gaussian(epsilon=epsilon, delta=delta, sensitivity=1.0)),
        "AG": AdditiveNoise("AG", AnalyticGaussian(epsilon=epsilon, delta=delta, sensitivity=1.0)),
        "TLN": AdditiveNoise(
            "TLN", TruncatedLaplace(epsilon=epsilon, delta=delta, sensitivity=1.0)
        ),
    }
    if opt_noise is not None:
        mechs["OPT"] = AdditiveNoise("OPT", opt_noise)
    return mechs
