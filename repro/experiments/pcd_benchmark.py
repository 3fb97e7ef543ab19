"""The coordinate-descent benchmark (``scripts/benchmark_pcd.py``): where the time of Table 3 goes,
and each implementation of :func:`~repro.experiments.pcd_train` against the one before it,
measured in one run.

Implementations, on the training set of split 0 of a dataset (seed 0), Gaussian mechanism:

* ``reference``: :func:`repro.brute.pcd_train_reference`, the first implementation (float64, one
  numpy pass per operation);
* ``stepwise (before)``: the implementation before the iteration kernel: one call of the fused
  numba step (:func:`~repro.experiments.pcd_kernels.fused_step`) and one mechanism call per
  coordinate update, margins recomputed in float64 and rounded to float32;
* ``iteration kernel (after)``: the default, one call of
  :func:`~repro.experiments.pcd_kernels.pcd_iteration` per iteration with the mechanism's noise
  table, margins as a float32 product; also its float64 path, the numpy backend and, where a GPU
  is present, the CuPy backend.

CPU time (robust on a shared machine) and wall time per simulation-step (run time / (T·K·S)),
median of interleaved rounds; ratios to ``stepwise (before)``. The profile splits one iteration of
the default into the margin product, the noise table and the kernel.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from contextlib import contextmanager
from functools import partial

import numpy as np

from ..provenance import provenance, write_json_atomic
from . import pcd as _pcd
from .mechanisms import NonPrivate, call_mechanism
from .pcd import PCDSettings, pcd_backend, pcd_train
from .stats import split_indices, split_seeds

__all__ = [
    "BEFORE",
    "StepwiseOnly",
    "implementations",
    "iteration_profile",
    "pcd_report",
    "split0",
    "step_times",
    "table3_cpu_hours",
]

BEFORE = "stepwise (before)"
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


def _margins_rounded(H, YX, out, xp):
    """The margin product before the iteration kernel: float64 BLAS, rounded to float32 by blocks
    of 2²² margins."""
    YX64 = YX.astype(np.float64)
    rows = max(1, (1 << 22) // out.shape[1])
    for lo in range(0, out.shape[0], rows):
        out[lo : lo + rows] = H[lo : lo + rows] @ YX64


@contextmanager
def _patched_margins(fn):
    saved = _pcd._margins
    _pcd._margins = fn
    try:
        yield
    finally:
        _pcd._margins = saved


def _before(X, y, mech, S, rng_init, rng_noise, settings):
    with _patched_margins(_margins_rounded):
        return pcd_train(X, y, StepwiseOnly(mech), S, rng_init, rng_noise, settings)


def implementations(fallback: bool = True) -> dict:
    """name -> ``pcd_train``-like callable: the reference, the implementation before, the default
    and its variants (the numpy backend with ``fallback``, CuPy when a GPU is present)."""
    from .. import brute

    impls = {
        "reference": brute.pcd_train_reference,
        BEFORE: _before,
        "iteration kernel (after)": pcd_train,
        "iteration kernel, float64": partial(pcd_train, dtype=np.float64),
    }
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
    ``min_seconds``. Ratios: the median of ``stepwise (before)`` over the implementation's."""
    from .mechanisms import make_mechanisms

    mech = make_mechanisms()["GN"]
    impls = implementations(fallback)
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
                    cpu_ratio=statistics.median(cpu[BEFORE]) / c,
                    wall_ratio=statistics.median(wall[BEFORE]) / w,
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
    """Where one iteration of the default goes, per mechanism: CPU milliseconds of the margin
    product, of the noise table and of the rest (the kernel, the draws of the coordinate orders),
    and the margin product before (float64, rounded) for comparison."""
    X, y, s_init, s_noise = split0(name)
    _timed(pcd_train, X, y, mechs["GN"], 2, 1, s_init, s_noise)  # warm-up: loads the kernels
    out = {}
    for m, mech in mechs.items():
        clock, timed_mech = _Clock(_pcd._margins), _TableClock(mech)
        with _patched_margins(clock):
            total, _ = _timed(pcd_train, X, y, timed_mech, sims, T, s_init, s_noise)
        out[m] = dict(
            margins=1e3 * clock.seconds / T,
            noise_table=1e3 * timed_mech.noise_table.seconds / T,
            rest=1e3 * (total - clock.seconds - timed_mech.noise_table.seconds) / T,
        )
    H = np.random.default_rng(0).uniform(-1, 1, (sims, X.shape[1]))
    YX = np.ascontiguousarray(X.T * y[None, :]).astype(np.float32)
    M = np.empty((sims, X.shape[0]), dtype=np.float32)
    for fn in (_margins_rounded, _pcd._margins):  # first touch of M outside the timing
        fn(H, YX, M, np)
    before, after = _Clock(_margins_rounded), _Clock(_pcd._margins)
    for _ in range(T):
        before(H, YX, M, np)
        after(H, YX, M, np)
    out["margin product before (float64, rounded)"] = 1e3 * before.seconds / T
    out["margin product after (float32)"] = 1e3 * after.seconds / T
    return out


def table3_cpu_hours(names, *, sims: int = 1000, T: int = 10) -> list:
    """Estimated single-core CPU-hours of Table 3 at the paper's 100 splits × 1,000 simulations and
    T = 100 per dataset, with the default: split 0 run with each of the six mechanisms of a split
    (GN, AG, TLN, OPT, (OPT) and the non-private PCD) at S = ``sims`` and T iterations, CPU-hours
    = 100 × (1000/S) × (100/T) × Σ_mechanisms seconds / 3600."""
    from ..ml_tables import mechanisms

    mechs = {**mechanisms(3)[0], "PCD": NonPrivate("PCD")}
    X, y, s_init, s_noise = split0("ecoli")
    _timed(pcd_train, X, y, mechs["GN"], 2, 1, s_init, s_noise)  # warm-up: loads the kernels
    rows = []
    for name in names:
        X, y, s_init, s_noise = split0(name)
        seconds = {
            m: _timed(pcd_train, X, y, mech, sims, T, s_init, s_noise)[0]
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
    say(f"\nOne iteration of the default on {first}, S = {sims}: CPU ms")
    say(f"{'mechanism':10s} {'margins':>8s} {'noise table':>11s} {'kernel, rest':>12s}")
    for m in mechs:
        r = prof[m]
        say(f"{m:10s} {r['margins']:8.1f} {r['noise_table']:11.1f} {r['rest']:12.1f}")
    b, a = (
        prof["margin product before (float64, rounded)"],
        prof["margin product after (float32)"],
    )
    say(
        f"margin product: before (float64, rounded) {b:.1f} ms, after (float32) {a:.1f} ms "
        f"({b / a:.1f}x)"
    )
    rows = report["per_step"] = step_times(
        step_datasets, sims=sims, repeats=repeats, min_seconds=min_seconds, fallback=fallback
    )
    say(
        f"\nTime per simulation-step, GN, split 0, S = {sims} (median of {repeats} interleaved "
        f"rounds; ratio = {BEFORE} / implementation)"
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
    say(
        f"\nTable 3 at {PAPER_SPLITS} splits x {PAPER_SIMS} simulations, T = 100, six runs per "
        f"split: estimated single-core CPU-hours with the default (split 0, S = {sims}, "
        f"T = {estimate_T})"
    )
    for r in hrs:
        say(f"{r['dataset']:14s} {r['n']:6d} {r['d']:3d} {r['hours']:7.2f}")
    say(f"total {sum(r['hours'] for r in hrs):.2f} CPU-hours")
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
