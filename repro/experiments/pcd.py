r"""DP proximal coordinate descent (Section 5.3, Table 3) for ℓ1-regularised logistic regression.

Every coordinate update perturbs the gradient sum Σ_i σ(−y_i h^⊤x_i)(−y_i x_il) ∈ (−n, n),
sensitivity 2, with (ε, δ) = (1, 0.1) per update as in the paper (no composition across updates).
Unit step, random initial point in [−1, 1]^d, K coordinates drawn without replacement per
iteration, h^t the average of the K inner iterates, error of the last iterate h^T (as the authors'
``PCD_train`` / ``summarize_last_iterate``); features from :func:`repro.datasets.one_hot` (the
authors' centring and scaling on the full dataset).

:func:`pcd_train` runs S simulations at once. Three backends, chosen at run time
(:func:`pcd_backend`): the CUDA kernel of :mod:`repro.experiments.pcd_cuda` (CuPy) on an NVIDIA GPU
when one is present, the numba kernels of :mod:`repro.experiments.pcd_kernels` on the CPU (on
the exponentials of the margins, sparse coordinate updates), and numpy when neither is
available.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..datasets import Dataset, one_hot
from .mechanisms import NonPrivate, call_mechanism
from .stats import split_indices, split_seeds

__all__ = [
    "PCD_BACKENDS",
    "PCDSettings",
    "pcd_backend",
    "pcd_device",
    "pcd_errors",
    "pcd_step_array",
    "pcd_train",
    "run_pcd",
]

PCD_BACKENDS = ("numba", "numpy", "cupy")
_ROW_BLOCK = 1 << 18  # margins per block of the numpy step (1 MiB in float32: passes stay in cache)


@dataclass(frozen=True)
class PCDSettings:
    """Section 5.3: T = 100 iterations, K = ⌈d/4⌉ updates each, λ = 1e-8, sensitivity 2,
    (ε, δ) = (1, 0.1)."""

    epsilon: float = 1.0
    delta: float = 0.1
    T: int = 100
    K: int | None = None  # None: ceil(d / 4)
    lam: float = 1e-8
    sensitivity: float = 2.0
    step: float = 1.0


# ---------------------------------------------------------------------------------------- backends
_UNSET = object()
_KERNELS = _UNSET  # repro.experiments.pcd_kernels, None without numba (imported on first use)
_CUPY = _UNSET  # the cupy module when it and a CUDA device are present, else None


def _kernels():
    global _KERNELS
    if _KERNELS is _UNSET:
        try:
            from . import pcd_kernels
        except ImportError:  # pragma: no cover - installs without numba
            _KERNELS = None
        else:
            _KERNELS = pcd_kernels
    return _KERNELS


def _cupy():
    global _CUPY
    if _CUPY is _UNSET:
        try:
            import cupy

            _CUPY = cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
        except Exception:  # not installed, no driver or no device: no GPU backend
            _CUPY = None
    return _CUPY


def pcd_backend() -> str:
    """The default backend of :func:`pcd_train`: ``"cupy"`` when CuPy and a CUDA device are
    present, else ``"numba"`` when numba is importable, else ``"numpy"``."""
    if _cupy() is not None:
        return "cupy"
    return "numba" if _kernels() is not None else "numpy"


def pcd_device() -> dict:
    """The default backend and, on a GPU, the device's name (recorded with Table 3's results)."""
    backend = pcd_backend()
    if backend != "cupy":
        return {"backend": backend}
    cp = _cupy()
    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    return {"backend": backend, "device": name.decode() if isinstance(name, bytes) else str(name)}


def _resolve_backend(backend: str | None) -> str:
    backend = pcd_backend() if backend is None else backend
    if backend not in PCD_BACKENDS:
        raise ValueError(f"backend must be one of {PCD_BACKENDS} or None, got {backend!r}")
    if backend == "numba" and _kernels() is None:
        raise ImportError("backend='numba' needs numba (pip install numba), or use backend='numpy'")
    if backend == "cupy" and _cupy() is None:
        raise ImportError("backend='cupy' needs CuPy and a CUDA device, or use backend='numba'")
    return backend


# -------------------------------------------------------------------------------------- the method
def pcd_train(
    X: np.ndarray,
    y: np.ndarray,
    mech: Callable,
    n_sims: int,
    rng_init: np.random.Generator,
    rng_noise: np.random.Generator,
    settings: PCDSettings = PCDSettings(),
    record_queries: bool = False,
    *,
    dtype=np.float32,
    backend: str | None = None,
    parallel: bool = False,
):
    r"""Run ``n_sims`` DP proximal coordinate descents at once; returns the last iterates H (S, d)
    (and, if ``record_queries``, the true query values (T·K, S) before noise).

    Per iteration t: each simulation draws its own K coordinates without replacement; update k of
    simulation s perturbs q = Σ_i σ(−y_i m_i)(−y_i x_{i,l}) (m the margins y_i h^⊤x_i) with
    ``mech(q, sensitivity, rng_noise)`` (a mechanism with ``needs_range`` also gets Φ = [−n, n],
    the GitHub appendix's range of the query) and sets h_l ← prox_{ηλ|·|}(h_l − η·q̃/n); h^t is the
    average of the K inner iterates. ``rng_init`` draws the initial points (uniform on [−1, 1]^d)
    and the coordinate orders, so identically seeded generators give every mechanism the same ones.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Design matrix, |x_il| ≤ 1.
    y : ndarray, shape (n,)
        Labels in {−1, +1}.
    mech : callable
        The mechanism, called as :func:`~repro.experiments.call_mechanism` does, once per inner
        step with the S queries; or, when it has a ``noise_table`` method
        (:class:`~repro.experiments.NoiseTable`), asked once per iteration for the noise of its K
        steps (the same uniforms, the same noise).
    n_sims : int
        Number S of simulations run together.
    rng_init, rng_noise : numpy.random.Generator
        Initial points and coordinate orders; the mechanism's uniforms.
    settings : PCDSettings
        T, K, step η, λ, sensitivity.
    record_queries : bool
        Also return the true queries, shape (T·K, S).
    dtype : {numpy.float32, numpy.float64}, keyword-only
        Precision of the margins, of y_i x_il and of σ (below). ``numpy.float64`` reproduces the
        straightforward implementation (:func:`repro.brute.pcd_train_reference`) to rounding error.
    backend : {"numba", "numpy", "cupy"} or None, keyword-only
        None: :func:`pcd_backend` (CuPy on a GPU, else numba, else numpy). "numba": with a
        mechanism that has noise tables, one kernel call per iteration runs the K steps of each
        simulation in turn while its row stays in cache
        (:func:`~repro.experiments.pcd_kernels.pcd_iteration`); with any other callable, one
        kernel call per step (:func:`~repro.experiments.pcd_kernels.sparse_step`) and one
        mechanism call. "numpy": one array pass per step over all simulations
        (:func:`pcd_step_array`). "cupy": every array on the GPU, one kernel launch per
        iteration (:func:`~repro.experiments.pcd_cuda.launch_iteration`, one thread block per
        simulation); needs noise tables.
    parallel : bool, keyword-only
        numba backend only: spread the simulations over numba's threads. Off by default:
        paper-scale runs are parallel over splits (one single-threaded process per core), and on
        a busy machine a thread that waits for a core stalls every step.

    Returns
    -------
    H : ndarray, shape (S, d)
        Last iterates (float64).
    queries : ndarray, shape (T·K, S)
        Only with ``record_queries``.

    Notes
    -----
    **Random numbers.** The same draws as the straightforward implementation, in the same order:
    ``rng_init.random((S, d))`` for the initial points, then per iteration
    ``rng_init.random((S, d))`` for the coordinate orders (argsort), and the mechanism's uniforms:
    one call per inner step with the vector of the S queries, or one noise table of shape (K, S)
    per iteration, which draws the same uniforms in the same order. Every mechanism's noise is
    therefore unchanged; only the rounding of q differs.

    **Kernels (numba).** Each column of X is its most frequent value plus a sparse rest
    (:class:`~repro.experiments.pcd_kernels.SparseDesign`), and the kernels keep the exponentials
    of the margins: a coordinate update rescales the exponentials of the samples where the rest of
    its column is non-zero and shifts a scalar, and the query of the next step is one vectorised
    pass of a multiply, an add and a division over the samples, with no exponential per sample and
    step (:mod:`repro.experiments.pcd_kernels` states the algebra). The last update of an
    iteration is never applied: the margins are recomputed from the averaged iterate at the start
    of the next iteration (one BLAS product in ``dtype``, samples ordered by label) and turned into
    exponentials once. With noise tables the kernel also applies the noise and the proximal step
    itself, so a simulation's K steps run back to back on its row (cache-resident) and the only
    Python work per iteration is the margin product and the draws. Both numba paths do the same
    floating-point operations in the same order and give the same iterates, bit for bit. The numpy
    and CuPy backends keep the margins themselves (one fused pass per step: update, σ, query).

    **Precision of the float32 default.** Only the margins (their product with the iterate
    rounded to float32 included) or their exponentials, y_i x_il and σ are float32; the iterates,
    the updates, the scalar shift of the numba kernels and the sum across blocks of 256 samples
    stay float64. The product errs by ≤ (d + 2)·2⁻²⁴·Σ_l|h_l x_il| per margin; over the at most
    K = ⌈d/4⌉ updates of an iteration a margin's float32 error grows by ≤ (2K + 3)·2⁻²⁴ (numba:
    relative error of its exponential) or (K + 1)·2⁻²⁴·(max|m| + 3 max|δ|) (numpy, CuPy); σ has
    slope ≤ ¼; a float32 block sum of 256 terms in [−1, 1] errs by ≲ 8e-7 of Σ|terms| in the
    vectorised order. Hence |Δq| is at most n times these per-term errors in the worst case and of
    order √n times them in practice (measured on adult, 20 simulations, 10 iterations, numba:
    |Δq| ≤ 1.5e-3 against float64, |ΔH| ≤ 6e-8). The mechanisms add noise of standard deviation 1.8
    (OPT) to 4.5 (GN) to q, and the step divides q by n. What float32 can change is the
    rounding-level trajectory (|ΔH| ≈ 1e-7), hence, rarely, the sign of h^⊤x of a sample on the
    decision boundary or, for the data-dependent (OPT), the piece of a query within ~1e-3 of a
    piece edge: far below the Monte Carlo error of the tables (``tests/repro/test_pcd.py`` states
    the check). As in float64, the *computed* query has sensitivity 2 + O(rounding error) rather
    than exactly 2 (about 1e-3 here against 1e-12): a floating-point caveat of any
    implementation, irrelevant to this reproduction, which releases nothing.
    """
    backend = _resolve_backend(backend)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    tabled = callable(getattr(mech, "noise_table", None))
    if backend == "cupy" and not tabled:
        raise ValueError("backend 'cupy' needs a mechanism with a noise_table method")
    xp = _cupy() if backend == "cupy" else np
    n, d = X.shape
    S = int(n_sims)
    K = settings.K if settings.K is not None else int(math.ceil(d / 4))
    H = (rng_init.random((S, d)) - 0.5) * 2.0
    design = _kernels().sparse_design(X, y, dtype) if backend == "numba" else None
    if design is not None:
        YX = design.YX  # samples ordered by label
    else:
        YX = np.ascontiguousarray(X.T * y.astype(float)[None, :]).astype(dtype)  # row l: y_i x_il
    H, YX = xp.asarray(H), xp.asarray(YX)
    M = xp.empty((S, n), dtype=dtype)
    run = _Run(
        n=n,
        eta=settings.step,
        thr=settings.step * settings.lam,
        sensitivity=settings.sensitivity,
        parallel=bool(parallel),
    )
    queries = [] if record_queries else None
    for _t in range(settings.T):
        order = np.argsort(rng_init.random((S, d)), axis=1)[:, :K]  # K distinct coordinates per sim
        _margins(H, YX, M, xp)
        table = (
            mech.noise_table(rng_noise, (K, S), settings.sensitivity, -float(n), float(n))
            if tabled
            else None
        )
        if backend == "cupy":
            Hsum, q = _iteration_device(run, xp, M, YX, order, H, table)
        elif backend == "numba" and tabled:
            Hsum, q = _iteration_kernel(run, M, design, order, H, table)
        elif backend == "numba":
            Hsum, q = _iteration_sparse_steps(run, M, design, order, H, table, mech, rng_noise)
        else:
            Hsum, q = _iteration_steps(run, M, YX, order, H, table, mech, rng_noise)
        if record_queries:
            queries.append(q)
        H = Hsum / K
    H = H.get() if xp is not np else H
    if record_queries:
        return H, np.concatenate(queries)
    return H


@dataclass(frozen=True)
class _Run:
    """The constants of one :func:`pcd_train` call: n, step η, ηλ, sensitivity, numba threads."""

    n: int
    eta: float
    thr: float
    sensitivity: float
    parallel: bool


def _margins(H, YX, out, xp):
    """``out = H @ YX``, the margins, in the precision of ``YX`` (one BLAS product; H rounded)."""
    xp.matmul(H.astype(YX.dtype, copy=False), YX, out=out)


def _row_blocks(S: int, n: int, elements: int) -> list[slice]:
    rows = max(1, elements // max(n, 1))
    return [slice(lo, min(lo + rows, S)) for lo in range(0, S, rows)]


def _kernel_design(design):
    """The fields of a :class:`~repro.experiments.pcd_kernels.SparseDesign` the kernels take."""
    d = design
    return (
        d.n_pos, d.c, d.col_runs, d.run_starts, d.run_w, d.rows, d.YX, d.dense_update, d.WD
    )  # fmt: skip


def _iteration_kernel(run: _Run, M, design, order, H, table):
    """One iteration on the numba kernel: every simulation's K steps, noise and proximal steps."""
    kernels = _kernels()
    S, K = order.shape
    Hsum = np.zeros_like(H)
    q = np.empty((K, S))
    scaled = np.ascontiguousarray(table.scaled, dtype=np.float64)
    edges = np.zeros(2) if table.edges is None else np.asarray(table.edges, dtype=np.float64)
    iteration = kernels.pcd_iteration_parallel if run.parallel else kernels.pcd_iteration
    bad = iteration(
        M,
        _kernel_design(design),
        np.ascontiguousarray(order),
        H,
        Hsum,
        q,
        scaled,
        float(table.lo),
        float(table.scale),
        float(table.top),
        edges,
        float(table.check_lo),
        float(table.check_hi),
        float(run.n),
        float(run.eta),
        float(run.thr),
    )
    if bad:
        raise ValueError("a query value lies outside its range [phi_lo, phi_hi]")
    return Hsum, q


def _iteration_device(run: _Run, cp, M, YX, order, H, table):
    """One iteration on the GPU: one launch of :func:`repro.experiments.pcd_cuda.launch_iteration`
    (``cp`` the cupy module; the noise table and the coordinates are copied to the device)."""
    from . import pcd_cuda

    S, K = order.shape
    Hsum = cp.zeros_like(H)
    q = cp.empty((K, S))
    scaled = cp.asarray(np.ascontiguousarray(table.scaled, dtype=np.float64))
    columns = cp.asarray(np.ascontiguousarray(order, dtype=np.int64))
    bad = pcd_cuda.launch_iteration(
        cp, M, YX, columns, H, Hsum, q, scaled, table, run.n, run.eta, run.thr
    )
    if bad:
        raise ValueError("a query value lies outside its range [phi_lo, phi_hi]")
    return Hsum, q.get()


def _noisy(run: _Run, q, k, rows, table, mech, rng_noise):
    """The noisy queries of step k: from ``table``, or a call of ``mech``."""
    if table is None:
        return call_mechanism(mech, q, run.sensitivity, rng_noise, -float(run.n), float(run.n))
    return q + table.scaled[table.pieces(q), k, rows]


def _iteration_sparse_steps(run: _Run, M, design, order, H, table, mech, rng_noise):
    """One iteration step by step on the numba kernels: the margins turned into exponentials
    (:func:`~repro.experiments.pcd_kernels.to_exp`), then per step one
    :func:`~repro.experiments.pcd_kernels.sparse_step` over all simulations, the noise and the
    proximal steps (the operations of :func:`_iteration_kernel`, in the same order)."""
    kernels = _kernels()
    step = kernels.sparse_step_parallel if run.parallel else kernels.sparse_step
    S, K = order.shape
    kernels.to_exp(M)
    columns = np.ascontiguousarray(order.T)  # (K, S): row k holds every sim's k-th coordinate
    rows = np.arange(S)
    Hsum = np.zeros_like(H)
    queries = np.empty((K, S))
    a, jprev, delta = np.zeros(S), columns[0], np.zeros(S)
    for k in range(K):
        j = columns[k]
        step(M, a, _kernel_design(design), jprev, delta, j, queries[k])
        delta = _prox(H, rows, j, _noisy(run, queries[k], k, rows, table, mech, rng_noise), run)
        jprev = j
        Hsum += H
    return Hsum, queries


def _iteration_steps(run: _Run, M, YX, order, H, table, mech, rng_noise):
    """One iteration step by step on the numpy backend: a fused pass over all simulations' margins
    per step (:func:`pcd_step_array`), then the noise and the proximal steps of all
    simulations."""
    S, K = order.shape
    columns = np.ascontiguousarray(order.T)  # (K, S): row k holds every sim's k-th coordinate
    rows = np.arange(S)
    Hsum = np.zeros_like(H)
    queries = np.empty((K, S))
    jprev, delta = columns[0], np.zeros(S, dtype=M.dtype)
    for k in range(K):
        j = columns[k]
        pcd_step_array(M, YX, jprev, delta, j, queries[k])
        qn = _noisy(run, queries[k], k, rows, table, mech, rng_noise)
        delta = _prox(H, rows, j, qn, run).astype(M.dtype)
        jprev = j
        Hsum += H
    return Hsum, queries


def _prox(H, rows, j, qn, run: _Run):
    """h_j ← prox_{ηλ|·|}(h_j − η·q̃/n) for every simulation (in place); returns the change."""
    old = H[rows, j]
    z = old - run.eta * qn / run.n
    new = np.sign(z) * np.maximum(np.abs(z) - run.thr, 0.0)
    H[rows, j] = new
    return new - old


def pcd_step_array(M, YX, jprev, delta, j, q):
    """The fused step of the numpy backend, one pass over the margins per update:
    ``M[s] += delta[s]·YX[jprev[s]]``, then
    ``q[s] = −Σ_i σ(−M[s, i])·YX[j[s], i]`` (σ in the precision of M, summed in float64), by blocks
    of simulations whose margins stay in cache."""
    S, n = M.shape
    with np.errstate(over="ignore"):  # e^m = inf gives σ(−m) = 0, as wanted
        for b in _row_blocks(S, n, _ROW_BLOCK):
            m = M[b]
            m += delta[b, None] * YX[jprev[b]]
            sig = 1 / (1 + np.exp(m))
            q[b] = -(sig * YX[j[b]]).sum(axis=1, dtype=np.float64)


def pcd_errors(H: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Misclassification rate (S,) of the hyperplanes H (S, d): predict +1 iff h^⊤x ≥ 0."""
    pred = np.where(X @ H.T >= 0.0, 1, -1)  # (n, S)
    return np.mean(pred != y[:, None], axis=0)


def run_pcd(
    ds: Dataset,
    mechanisms: Mapping[str, Callable],
    *,
    n_splits: int,
    n_sims: int,
    seed: int = 0,
    settings: PCDSettings = PCDSettings(),
    design=None,
    nonprivate_sims: int | None = None,
    baseline: bool = True,
    first_split: int = 0,
    pcd_options: Mapping | None = None,
) -> dict:
    """DP proximal coordinate descent on ``n_splits`` random 80/20 splits × ``n_sims`` simulations.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}`` (errors of the last iterate averaged
    over the simulations); ``"PCD"`` is the non-private method (random too: initial point and
    coordinates) run with ``nonprivate_sims`` (default ``n_sims``) simulations (skipped if
    ``baseline=False``). ``design`` defaults to ``one_hot(ds)``. ``first_split``: as in
    :func:`~repro.experiments.run_naive_bayes` (splits ``first_split, …``; chunks concatenate to
    the whole run). ``pcd_options``: keyword-only options of :func:`pcd_train` (``dtype``,
    ``backend``, ``parallel``; default: float32 on the default backend, one thread).
    """
    design = one_hot(ds) if design is None else design
    X, y = design.X, design.y
    extra = [("PCD", NonPrivate("PCD"))] if baseline else []
    names = [*mechanisms, *dict(extra)]
    res = {
        "in": {m: np.empty(n_splits) for m in names},
        "out": {m: np.empty(n_splits) for m in names},
    }
    for i in range(n_splits):
        s_split, s_noise, s_init = split_seeds(seed, first_split + i)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        for name, mech in [*mechanisms.items(), *extra]:
            sims = (nonprivate_sims or n_sims) if name == "PCD" else n_sims
            H = pcd_train(
                X[train],
                y[train],
                mech,
                sims,
                np.random.default_rng(s_init),
                np.random.default_rng(s_noise),
                settings,
                **(pcd_options or {}),
            )
            res["in"][name][i] = pcd_errors(H, X[train], y[train]).mean()
            res["out"][name][i] = pcd_errors(H, X[test], y[test]).mean()
    return res
