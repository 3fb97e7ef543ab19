"""Building dpdro's certified catalog (``dpdro/data/catalog.json.gz``, read by
:mod:`dpdro.catalog`).

The catalog holds, at Δf = 1 and for the ℓ1 and ℓ2 losses, the noise of :func:`dpdro.optimal_noise`
at every point of a grid of **round values** of ε (:data:`EPSILONS`, 0.05 to 10) and δ
(:data:`DELTAS`, 1e-10 to 0.1: 1 and 5 per decade), the values a practitioner types. Each point is
designed at a tight gap (:data:`REL_GAP`, 0.1%, within :data:`TIME_LIMIT` seconds) and redesigned
with :data:`RETRY_TIME_LIMIT` if its certified bracket is still above :data:`MAX_POINT_GAP` (1%):
every grid point's bracket U/L − 1 is at most 1%.

Between grid points the lookup is conservative (:mod:`dpdro.catalog`): the noise of the grid point
below, the lower bound of the one above. Its bracket there is about (1 + g)²·r − 1, with r the ratio
of the optima of neighbouring grid points; at small ε the ℓ2 optimum scales like ε⁻², so round
values 0.05 → 0.1 give r ≈ 4. :meth:`dpdro.catalog.Catalog.worst_gap` reports it, and ``dpdro
catalog lookup`` says when a request is not a grid point (a design is then the better answer: it
takes about a second).

The build is the sweep family :data:`FAMILY`: one task per (loss, ε, δ), each written to its own
file under ``_build/catalog/`` (not tracked) and skipped when present, so a killed build resumes;
the merge writes the package data. ``scripts/build_catalog.py`` is the command line.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import dpdro
from dpdro.catalog import FORMAT, VERSION

from .paths import CATALOG, ROOT
from .provenance import provenance
from .sweep import Family, Option, load_result

__all__ = [
    "EPSILONS",
    "DELTAS",
    "LOSSES",
    "REL_GAP",
    "TIME_LIMIT",
    "RETRY_TIME_LIMIT",
    "MAX_POINT_GAP",
    "TASKS",
    "FAMILY",
    "catalog_entry",
    "catalog_document",
    "write_catalog",
]

EPSILONS = (
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5.0,
    6.0,
    7.0,
    8.0,
    9.0,
    10.0,
)
DELTAS = tuple(float(f"{m}e{e}") for e in range(-10, -1) for m in (1, 5)) + (0.1,)
LOSSES = ("l1", "l2")
REL_GAP = 1e-3
TIME_LIMIT = 30.0
RETRY_TIME_LIMIT = 300.0
MAX_POINT_GAP = 0.01
TASKS = ROOT / "_build" / "catalog"  # per-point files of the build (the catalog is their merge)
_CI = {"epsilons": (0.5, 1.0), "deltas": (1e-6, 1e-3)}


def catalog_entry(
    loss: str,
    epsilon: float,
    delta: float,
    *,
    rel_gap: float = REL_GAP,
    time_limit: float = TIME_LIMIT,
    retry_time_limit: float = RETRY_TIME_LIMIT,
) -> dict:
    """One grid point: the certified noise of ``optimal_noise`` (metadata dropped), U = its expected
    loss, L = the certified lower bound, the gap U/L − 1 and the time it took; redesigned with
    ``retry_time_limit`` if the gap is above :data:`MAX_POINT_GAP`."""
    t0 = time.perf_counter()
    problem = dpdro.Problem(epsilon=epsilon, delta=delta, loss=loss)
    res = dpdro.optimal_noise(problem, rel_gap=rel_gap, time_limit=time_limit)
    if res.gap > MAX_POINT_GAP:
        res = dpdro.optimal_noise(problem, rel_gap=rel_gap, time_limit=retry_time_limit)
    noise = dpdro.PiecewiseUniform(
        res.noise.edges, res.noise.probs, grid=res.noise.grid, atom=res.noise.atom
    )
    if (
        dpdro.certify_delta(noise, epsilon, 1.0) > delta
    ):  # pragma: no cover - optimal_noise certifies
        raise RuntimeError(
            f"the noise at epsilon = {epsilon}, delta = {delta}, {loss} does not certify"
        )
    upper = noise.expected_loss(loss)
    return {
        "loss": loss,
        "epsilon": epsilon,
        "delta": delta,
        "upper": upper,
        "lower": res.lower.value,
        "gap": upper / res.lower.value - 1.0,
        "seconds": round(time.perf_counter() - t0, 3),
        "noise": noise.to_dict(),
    }


def catalog_document(entries: list[dict], epsilons, deltas, losses, **settings) -> dict:
    """The catalog document of :mod:`dpdro.catalog` from one entry per (loss, ε, δ) of the grid."""
    epsilons, deltas = [float(e) for e in epsilons], [float(d) for d in deltas]
    if any(b <= a for a, b in zip(epsilons, epsilons[1:], strict=False)) or any(
        b <= a for a, b in zip(deltas, deltas[1:], strict=False)
    ):
        raise ValueError(
            f"epsilons and deltas must be strictly increasing, got {epsilons!r} and {deltas!r}"
        )
    index = {(e["loss"], e["epsilon"], e["delta"]): e for e in entries}
    out = []
    for loss in losses:
        for i, eps in enumerate(epsilons):
            for j, delta in enumerate(deltas):
                entry = {
                    k: v
                    for k, v in index[loss, eps, delta].items()
                    if k not in ("task", "provenance")
                }
                out.append({"i": i, "j": j, **entry})
    grid = {
        "epsilons": epsilons,
        "deltas": deltas,
        "losses": list(losses),
        "sensitivity": 1.0,
        **settings,
    }
    seconds = sum(e["seconds"] for e in out)
    return {
        "format": FORMAT,
        "version": VERSION,
        "grid": grid,
        "entries": out,
        "provenance": provenance(seconds=round(seconds, 1), script="scripts/build_catalog.py"),
    }


def write_catalog(doc: dict, path: str | Path = CATALOG) -> Path:
    """Store ``doc`` as gzip-compressed JSON through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0))
    os.replace(tmp, path)
    return path


# ----------------------------------------------------------------------------- the sweep family
def _grid(scale: str, opts: dict) -> tuple:
    if scale == "ci":
        return _CI["epsilons"], _CI["deltas"], ("l1",)
    losses = tuple(opts["losses"].split(",")) if opts.get("losses") else LOSSES
    return EPSILONS, DELTAS, losses


def _tasks(root: Path, scale: str, opts: dict) -> list:
    """One task per (loss, ε, δ); files under :data:`TASKS` (``root``/catalog-tasks at the CI
    scale)."""
    epsilons, deltas, losses = _grid(scale, opts)
    folder = TASKS if scale == "paper" else Path(root) / "catalog-tasks"
    params = {
        "rel_gap": opts.get("rel_gap") or REL_GAP,
        "time_limit": opts.get("time_limit") or TIME_LIMIT,
        "retry_time_limit": RETRY_TIME_LIMIT,
    }
    return [
        FAMILY.task(
            f"{loss}_eps={e:g}_delta={d:g}",
            dict(loss=loss, epsilon=e, delta=d, **params),
            folder / f"{loss}_eps={e:g}_delta={d:g}.json",
        )
        for loss in losses
        for e in epsilons
        for d in deltas
    ]


def compute(params: dict) -> dict:
    """One grid point (:func:`catalog_entry`), with provenance."""
    t0 = time.perf_counter()
    entry = catalog_entry(
        params["loss"],
        params["epsilon"],
        params["delta"],
        rel_gap=params["rel_gap"],
        time_limit=params["time_limit"],
        retry_time_limit=params["retry_time_limit"],
    )
    return {**entry, "provenance": provenance(seconds=time.perf_counter() - t0)}


def merge(root: Path, tasks: list, scale: str, opts: dict) -> list:
    """The catalog document of the finished tasks, written as the package data (paper scale) or to
    ``root``/catalog.json.gz (CI scale)."""
    epsilons, deltas, losses = _grid(scale, opts)
    p = tasks[0].params
    doc = catalog_document(
        [load_result(t) for t in tasks],
        epsilons,
        deltas,
        losses,
        rel_gap=p["rel_gap"],
        time_limit=p["time_limit"],
        retry_time_limit=p["retry_time_limit"],
        max_point_gap=MAX_POINT_GAP,
    )
    return [write_catalog(doc, CATALOG if scale == "paper" else Path(root) / "catalog.json.gz")]


FAMILY = Family(
    name="catalog",
    title="dpdro's certified catalog: one task per (loss, ε, δ) of the round-value grid",
    list_tasks=_tasks,
    compute=compute,
    merge=merge,
    options=(
        Option("losses", "comma-separated losses (default l1,l2)"),
        Option("rel_gap", "target relative gap per point (default 0.001)", float),
        Option("time_limit", "seconds per point before the retry (default 30)", float),
    ),
)
