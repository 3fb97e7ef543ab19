"""The coordinate-descent benchmark (``scripts/benchmark_pcd.py``): where the time of Table 3 goes,
and the default implementation of :func:`~repro.experiments.pcd_train` against the one before it,
measured in one run.

Implementations, on the training set of split 0 of a dataset (seed 0), Gaussian mechanism:

* ``reference``: :func:`repro.brute.pcd_train_reference`, the first implementation (float64, one
  numpy pass per operation);
* ``dense kernel (before)``: the numba kernel before the sparse one, one fused pass over the
  float32 margins per coordinate update (an exponential and a division per sample and update),
  one kernel call per iteration with the mechanism's noise table; loaded from the repository's
  history (commit :data:`BEFORE_COMMIT`), so that both run in the same process;
* ``sparse kernel (after)``: the default, :func:`~repro.experiments.pcd_kernels.pcd_iteration` on
  the exponentials of the margins with sparse updates; also its float64 path, the numpy backend
  and, where a GPU is present, the CuPy backend.

CPU time (robust on a shared machine) and wall time per simulation-step (run time / (T·K·S)),
median of interleaved rounds; ratios to ``dense kernel (before)``. The profile splits one
iteration of the default into the margin product, the noise table and the kernel.
"""

from __future__ import annotations

import importlib.util
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import numpy as np

from ..provenance import provenance, write_json_atomic
from . import pcd as _pcd
from .mechanisms import NonPrivate, call_mechanism
from .pcd import PCDSettings, pcd_backend, pcd_train
from .stats import split_indices, split_seeds

__all__ = [
    "BEFORE",
    "BEFORE_COMMIT",
    "StepwiseOnly",
    "implementations",
    "iteration_profile",
    "pcd_report",
    "split0",
    "step_times",
    "table3_cpu_hours",
]

BEFORE = "dense kernel (before)"
BEFORE_COMMIT = "24ba2c4"  # the last commit with the dense float32 iteration kernel
PAPER_SPLITS, PAPER_SIMS = 100, 1000


class StepwiseOnly:
    """A mechanism without its noise table (a plain callable): :func:`pcd_train` then calls it once
    per coordinate update and uses the per-step kernel."""

    def __init__(self, mech):
        self.mech = mech
        self.needs_range = getattr(mech, "needs_range", False)

    def __call__(self, values, sensitivity, rng, **kw):
        return call_mechanism(
            self.mech, values, sensitivity, rng, kw.get("phi_lo"), kw.get("phi_hi")
        )


@contextmanager
def _patched_margins(module, fn):
    saved = module._margins
    module._margins = fn
    try:
        yield
    finally:
        module._margins = saved


def _load_before():
    """The ``pcd`` module of :data:`BEFORE_COMMIT` (its ``pcd.py`` and ``pcd_kernels.py`` read with
    ``git show`` into a temporary folder and imported as submodules of
    :mod:`repro.experiments`); None where the history is not available (a shallow clone)."""
    root = Path(__file__).resolve().parents[2]
    files = {}
    for name in ("pcd", "pcd_kernels"):
        try:
            files[name] = subprocess.run(
                ["git", "-C", str(root), "show", f"{BEFORE_COMMIT}:repro/experiments/{name}.py"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            return None
    folder = Path(tempfile.mkdtemp(prefix="pcd_before_"))
    modules = {}
    for name, text in files.items():
        path = folder / f"{name}_before.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"{__package__}._{name}_before", path)
        modules[name] = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = modules[name]
        spec.loader.exec_module(modules[name])
    modules["pcd"]._KERNELS = modules["pcd_kernels"]
    return modules["pcd"]


def implementations(fallback: bool = True) -> dict:
    """name -> ``pcd_train``-like callable: the reference, the implementation before, the default
    and its variants (the numpy backend with ``fallback``, CuPy when a GPU is present)."""
    from .. import brute

    impls = {"reference": brute.pcd_train_reference}
    before = _load_before()
    if before is not None:
        impls[BEFORE] = before.pcd_train
    impls["sparse kernel (after)"] = pcd_train
    impls["sparse kernel, float64"] = partial(pcd_train, dtype=np.float64)
    if fallback:
        impls["numpy backend"] = partial(pcd_train, backend="numpy")
    if _pcd._cupy() is not None:
        impls["cupy backend (GPU)"] = partial(pcd_train, backend="cupy")
    return impls


def split0(name: str):
    """``(X, y, seed_init, seed_noise)``: the training set of ``run_pcd``'s split 0 (seed 0) and the
    seeds of its generators."""
    from ..datasets import load_dataset, one_hot

    ds = load_dataset(name)
    design = one_hot(ds)
    s_split, s_noise, s_init = split_seeds(0, 0)
    train, _ = split_indices(ds.n, np.random.default_rng(s_split))
    return design.X[train], design.y[train], s_init, s_noise


def _timed(train, X, y, mech, S: int, T: int, s_init, s_noise) -> tuple[float, float]:
    """CPU seconds (this process) and wall seconds of one ``train`` call of T iterations."""
    c0, w0 = time.process_time(), time.perf_counter()
    train(
        X,
        y,
        mech,
        S,
        np.random.default_rng(s_init),
        np.random.default_rng(s_noise),
        PCDSettings(T=T),
    )
    return time.process_time() - c0, time.perf_counter() - w0


def step_times(
    names, *, sims: int = 1000, repeats: int = 3, min_seconds: float = 2.0, fallback: bool = True
) -> list:
    """Median CPU and wall time per simulation-step of every implementation on split 0 of each
    dataset, GN mechanism, measured in this run: interleaved over ``repeats`` rounds, each run
    long enough (T from a one-iteration probe after a warm-up call that loads the kernels) to last
    ``min_seconds``. Ratios: the median of ``dense kernel (before)`` (else of the reference, where
    the history is not available) over the implementation's."""
    from .mechanisms import make_mechanisms

    mech = make_mechanisms()["GN"]
    impls = implementations(fallback)
    base = BEFORE if BEFORE in impls else "reference"
    rows = []
    for name in names:
        X, y, s_init, s_noise = split0(name)
        n, d = X.shape
        K = math.ceil(d / 4)
        T = {}
        for k, f in impls.items():
            _timed(f, X, y, mech, 2, 1, s_init, s_noise)  # warm-up: loads (or compiles) the kernels
            probe = _timed(f, X, y, mech, sims, 1, s_init, s_noise)[0]
            T[k] = int(min(PCDSettings().T, max(1, math.ceil(min_seconds / max(probe, 1e-9)))))
        cpu, wall = {k: [] for k in impls}, {k: [] for k in impls}
        for _ in range(repeats):
            for k, f in impls.items():
                c, w = _timed(f, X, y, mech, sims, T[k], s_init, s_noise)
                cpu[k].append(c / (T[k] * K * sims))
                wall[k].append(w / (T[k] * K * sims))
        for k in impls:
            c, w = statistics.median(cpu[k]), statistics.median(wall[k])
            rows.append(
                dict(
                    dataset=name,
                    n=n,
                    d=d,
                    K=K,
                    S=sims,
                    implementation=k,
                    T=T[k],
                    cpu_per_step=c,
                    wall_per_step=w,
                    baseline=base,
                    cpu_ratio=statistics.median(cpu[base]) / c,
                    wall_ratio=statistics.median(wall[base]) / w,
                )
            )
    return rows


class _Clock:
    """Adds up the CPU seconds of the calls of a function."""

    def __init__(self, fn):
        self.fn, self.seconds = fn, 0.0

    def __call__(self, *args, **kw):
        t0 = time.process_time()
        try:
            return self.fn(*args, **kw)
        finally:
            self.seconds += time.process_time() - t0


class _TableClock:
    """A mechanism whose ``noise_table`` calls are timed (and its plain calls, if any)."""

    def __init__(self, mech):
        self.mech, self.needs_range = mech, getattr(mech, "needs_range", False)
        self.noise_table = _Clock(mech.noise_table)

    def __call__(self, values, sensitivity, rng, **kw):  # pragma: no cover - tables are used
        return call_mechanism(
            self.mech, values, sensitivity, rng, kw.get("phi_lo"), kw.get("phi_hi")
        )


def iteration_profile(name: str, mechs: dict, *, sims: int = 1000, T: int = 3) -> dict:
    """Where one iteration goes, per implementation (the default and, where the history is
    available, the one before) and mechanism: CPU milliseconds of the margin product, of the noise
    table and of the rest (the kernel, the draws of the coordinate orders, the kernels' design),
    after a warm-up run of the same size (which loads the kernels and touches the margins)."""
    X, y, s_init, s_noise = split0(name)
    modules = {"sparse kernel (after)": _pcd}
    before = _load_before()
    if before is not None:
        modules = {BEFORE: before, **modules}
    out = {}
    for label, module in modules.items():
        _timed(module.pcd_train, X, y, mechs["GN"], sims, 1, s_init, s_noise)  # warm-up
        out[label] = {}
        for m, mech in mechs.items():
            clock, timed_mech = _Clock(module._margins), _TableClock(mech)
            with _patched_margins(module, clock):
                total, _ = _timed(module.pcd_train, X, y, timed_mech, sims, T, s_init, s_noise)
            out[label][m] = dict(
                margins=1e3 * clock.seconds / T,
                noise_table=1e3 * timed_mech.noise_table.seconds / T,
                rest=1e3 * (total - clock.seconds - timed_mech.noise_table.seconds) / T,
            )
    return out


def table3_cpu_hours(names, *, sims: int = 1000, T: int = 10, train=pcd_train) -> list:
    """Estimated single-core CPU-hours of Table 3 at the paper's 100 splits × 1,000 simulations and
    T = 100 per dataset, with ``train`` (default: the default): split 0 run with each of the six
    mechanisms of a split (GN, AG, TLN, OPT, (OPT) and the non-private PCD) at S = ``sims`` and T
    iterations, CPU-hours = 100 × (1000/S) × (100/T) × Σ_mechanisms seconds / 3600 (the
    coordinate descents only: not the per-split solve of the OPT noise nor the data-dependent
    mechanisms' cache)."""
    from ..ml_tables import mechanisms

    mechs = {**mechanisms(3)[0], "PCD": NonPrivate("PCD")}
    X, y, s_init, s_noise = split0("ecoli")
    _timed(train, X, y, mechs["GN"], 2, 1, s_init, s_noise)  # warm-up: loads the kernels
    rows = []
    for name in names:
        X, y, s_init, s_noise = split0(name)
        seconds = {
            m: _timed(train, X, y, mech, sims, T, s_init, s_noise)[0]
            for m, mech in mechs.items()
        }
        scale = PAPER_SPLITS * (PAPER_SIMS / sims) * (PCDSettings().T / T) / 3600.0
        rows.append(
            dict(
                dataset=name,
                n=X.shape[0],
                d=X.shape[1],
                S=sims,
                T=T,
                hours=scale * sum(seconds.values()),
                per_mechanism_hours={m: scale * s for m, s in seconds.items()},
            )
        )
    return rows


def pcd_report(
    step_datasets=("adult", "breast-cancer"),
    *,
    sims: int = 1000,
    repeats: int = 3,
    min_seconds: float = 2.0,
    estimate_T: int = 10,
    hour_datasets=None,
    fallback: bool = True,
    out=None,
    say=print,
) -> dict:
    """The benchmark of ``scripts/benchmark_pcd.py``: :func:`iteration_profile` on the first
    dataset, :func:`step_times` and :func:`table3_cpu_hours`, printed with ``say`` and returned
    (and written as JSON with provenance to ``out``)."""
    from ..datasets import available_datasets
    from ..ml_tables import mechanisms

    try:
        import numba

        nb = f"numba {numba.__version__}"
    except ImportError:  # pragma: no cover
        nb = "no numba"
    say(
        f"{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"numpy {np.__version__}, {nb}, default backend {pcd_backend()}, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}; load average at start "
        f"{os.getloadavg()[0]:.2f}"
    )
    report = dict(load_start=os.getloadavg()[0])
    first = step_datasets[0]
    mechs = {**mechanisms(3)[0], "PCD": NonPrivate("PCD")}
    prof = report["profile"] = iteration_profile(first, mechs, sims=sims)
    for label, rows in prof.items():
        say(f"\nOne iteration on {first}, {label}, S = {sims}: CPU ms")
        say(f"{'mechanism':10s} {'margins':>8s} {'noise table':>11s} {'kernel, rest':>12s}")
        for m, r in rows.items():
            say(f"{m:10s} {r['margins']:8.1f} {r['noise_table']:11.1f} {r['rest']:12.1f}")
    rows = report["per_step"] = step_times(
        step_datasets, sims=sims, repeats=repeats, min_seconds=min_seconds, fallback=fallback
    )
    say(
        f"\nTime per simulation-step, GN, split 0, S = {sims} (median of {repeats} interleaved "
        f"rounds; ratio = {rows[0]['baseline']} / implementation)"
    )
    say(
        f"{'dataset':14s} {'n':>6s} {'d':>3s} {'implementation':26s} {'T':>3s} {'CPU us':>8s} "
        f"{'wall us':>8s} {'ns/sample':>9s} {'CPU':>6s} {'wall':>6s}"
    )
    for r in rows:
        say(
            f"{r['dataset']:14s} {r['n']:6d} {r['d']:3d} {r['implementation']:26s} {r['T']:3d} "
            f"{1e6 * r['cpu_per_step']:8.2f} {1e6 * r['wall_per_step']:8.2f} "
            f"{1e9 * r['cpu_per_step'] / r['n']:9.3f} {r['cpu_ratio']:5.2f}x "
            f"{r['wall_ratio']:5.2f}x"
        )
    names = list(available_datasets() if hour_datasets is None else hour_datasets)
    hrs = report["table3_hours"] = table3_cpu_hours(names, sims=sims, T=estimate_T)
    cores = os.cpu_count() or 1
    say(
        f"\nTable 3 at {PAPER_SPLITS} splits x {PAPER_SIMS} simulations, T = 100, six runs per "
        f"split: estimated single-core CPU-hours of the coordinate descents with the default "
        f"(split 0, S = {sims}, T = {estimate_T}) and the wall hours on {cores} idle cores (one "
        "process per core)"
    )
    for r in hrs:
        hours = r["hours"]
        say(f"{r['dataset']:14s} {r['n']:6d} {r['d']:3d} {hours:7.2f} {hours / cores:7.2f}")
    total = sum(r["hours"] for r in hrs)
    say(f"total {total:.2f} CPU-hours, {total / cores:.2f} wall hours on {cores} cores")
    before = _load_before()
    if before is not None and first in names:
        old = report["table3_hours_before"] = table3_cpu_hours(
            [first], sims=sims, T=estimate_T, train=before.pcd_train
        )[0]
        new = next(r for r in hrs if r["dataset"] == first)
        say(
            f"{first} with the {BEFORE}: {old['hours']:.2f} CPU-hours, "
            f"{old['hours'] / cores:.2f} wall hours on {cores} cores "
            f"({old['hours'] / new['hours']:.1f}x the default's)"
        )
    report["load_end"] = os.getloadavg()[0]
    say(
        f"\nload average at end {report['load_end']:.2f} (timings on a loaded machine are "
        "inflated; compare ratios)"
    )
    if out:
        write_json_atomic(
            out,
            dict(report, provenance=provenance(sims=sims, repeats=repeats, estimate_T=estimate_T)),
        )
    return report
