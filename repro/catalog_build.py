"""Building dpdro's certified catalog (``dpdro/data/catalog.json.gz``, read by :mod:`dpdro.catalog`).

:func:`build_catalog` runs :func:`dpdro.optimal_noise` at every point of a grid (ε_i, δ_j) × losses at
Δf = 1 and returns the catalog document with the grid definition and provenance; :func:`write_catalog`
stores it (gzip-compressed JSON, atomically). ``scripts/build_catalog.py`` is the command line.

The lookup's bracket U/L − 1 is at most max_ij U_ij / L_{i+1,j+1} − 1 (:meth:`dpdro.catalog.Catalog.worst_gap`):
with a per-point gap g and neighbouring optima in the ratio r, it is about (1 + g)²·r − 1, so the
grid must be dense where the optimum changes fast (small ε, the ℓ2 loss: the optimum scales like
ε^{-2} there).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import numpy as np

import dpdro
from dpdro.catalog import FORMAT, VERSION

from .paths import CATALOG
from .provenance import provenance

__all__ = ["build_catalog", "catalog_entry", "write_catalog"]


def catalog_entry(loss: str, i: int, j: int, epsilon: float, delta: float, rel_gap: float,
                  time_limit: float | None) -> dict:
    """One grid point: the certified noise of ``optimal_noise`` (metadata dropped), U = its expected
    loss, L = the certified lower bound, and the time it took."""
    t0 = time.perf_counter()
    res = dpdro.optimal_noise(dpdro.Problem(epsilon=epsilon, delta=delta, loss=loss), rel_gap=rel_gap,
                              time_limit=time_limit)
    noise = dpdro.PiecewiseUniform(res.noise.edges, res.noise.probs, grid=res.noise.grid, atom=res.noise.atom)
    if dpdro.certify_delta(noise, epsilon, 1.0) > delta:  # pragma: no cover - optimal_noise certifies
        raise RuntimeError(f"the noise at epsilon = {epsilon}, delta = {delta}, {loss} does not certify")
    upper = noise.expected_loss(loss)
    return {"loss": loss, "i": i, "j": j, "epsilon": epsilon, "delta": delta, "upper": upper,
            "lower": res.lower.value, "gap": upper / res.lower.value - 1.0,
            "seconds": round(time.perf_counter() - t0, 3), "noise": noise.to_dict()}


def build_catalog(epsilons, deltas, losses=("l1", "l2"), *, rel_gap: float = 0.005, time_limit: float | None = None,
                  n_jobs: int = 1, verbose: bool = False) -> dict:
    """The catalog document for the grid ``epsilons`` × ``deltas`` × ``losses`` (increasing grids).

    ``rel_gap`` and ``time_limit`` are passed to :func:`dpdro.optimal_noise` at every point;
    ``n_jobs`` > 1 runs points in parallel (joblib, loky). The grid and these settings are stored
    in the document (``grid``), with provenance.
    """
    epsilons, deltas = [float(e) for e in epsilons], [float(d) for d in deltas]
    if np.any(np.diff(epsilons) <= 0) or np.any(np.diff(deltas) <= 0):
        raise ValueError(f"epsilons and deltas must be strictly increasing, got {epsilons!r} and {deltas!r}")
    jobs = [(loss, i, j, e, d, rel_gap, time_limit) for loss in losses for i, e in enumerate(epsilons)
            for j, d in enumerate(deltas)]
    t0 = time.perf_counter()
    if n_jobs == 1:
        entries = []
        for job in jobs:
            entries.append(catalog_entry(*job))
            if verbose:
                e = entries[-1]
                print(f"{e['loss']} eps={e['epsilon']:.6g} delta={e['delta']:.6g}: U={e['upper']:.6g} "
                      f"L={e['lower']:.6g} gap={100 * e['gap']:.2f}% ({e['seconds']:.1f} s)", flush=True)
    else:
        from joblib import Parallel, delayed

        entries = Parallel(n_jobs=n_jobs, verbose=10 if verbose else 0)(delayed(catalog_entry)(*job) for job in jobs)
    grid = {"epsilons": epsilons, "deltas": deltas, "losses": list(losses), "sensitivity": 1.0,
            "rel_gap": rel_gap, "time_limit": time_limit}
    return {"format": FORMAT, "version": VERSION, "grid": grid, "entries": entries,
            "provenance": provenance(seconds=time.perf_counter() - t0)}


def write_catalog(doc: dict, path: str | Path = CATALOG) -> Path:
    """Store ``doc`` as gzip-compressed JSON through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0))
    os.replace(tmp, path)
    return path
