"""Numba kernels of :func:`repro.experiments.pcd_train`: one fused pass over the margins per
coordinate update of DP proximal coordinate descent (Section 5.3, Table 3).

* :func:`pcd_iteration` (the default, for mechanisms with noise tables): one call per iteration;
  each simulation runs its K updates back to back on its cache-resident margin row, applying the
  pre-drawn noise and the proximal step itself;
* :func:`fused_step`: one call per update for every simulation (with any callable mechanism,
  called between the steps).

Both do the same floating-point operations in the same order (bit-identical iterates). Where the
time goes (``scripts/benchmark_pcd.py``): the logistic function of every training row, simulation
and update; at a few floating-point operations per cycle the kernels are close to the machine's
arithmetic throughput, so batching removes the Python work between updates but cannot remove
that.

Importing this module requires numba (the ``fast`` extra of the ``dpdro-repro`` distribution);
:mod:`repro.experiments` imports it lazily and falls back to numpy when it is missing.

The kernels are generic over the floating type of the margins (``float32`` or ``float64``): the
logistic function is an ``overload`` that evaluates ``1 / (1 + exp(m))`` with an exponential written
out as Cody–Waite range reduction, a Taylor polynomial and an exponent built from integer bits, so
that LLVM vectorises the loop (numba's ``math.exp`` is a scalar libm call: about 4× slower here).

Accuracy on the clamped range, measured over a fine grid (``tests/repro/test_pcd.py`` checks σ to 4
ulp):

* ``float32``: |x| ≤ 80, degree-7 polynomial: eˣ within 1 ulp, σ within 1.3 ulp;
* ``float64``: |x| ≤ 708, degree-13 polynomial: σ within 1.4 ulp.

Clamping is harmless for the logistic: σ(−m) = 1/(1 + eᵐ) < 2e-35 (float32) or 4e-308 (float64)
beyond the clamp, and the rounded value is exactly 1 below −80 (float32) / −708 (float64).

The kernels are compiled on first use and cached on disk (``cache=True``, in ``__pycache__`` next to
this file): a fresh environment spends a few seconds per dtype on the first call.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.core.extending import intrinsic, overload

__all__ = [
    "BLOCK",
    "fused_step",
    "fused_step_parallel",
    "logistic_neg",
    "pcd_iteration",
    "pcd_iteration_parallel",
]

BLOCK = 256  # samples per partial sum of the query (float32 within a block, float64 across blocks)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2 (float64)
_LN2_LO = 1.90821492927058770002e-10
_LN2_HI32 = 0.693145751953125  # float32 split: 11 significant bits in the high part
_LN2_LO32 = 1.428606820309417e-06

# Keyword arguments of the kernels: reassociation (and contraction to FMA) lets LLVM vectorise the
# sums of the query; the numpy error model drops the zero-division check that would otherwise keep
# the loop scalar. No ``ninf``/``nnan``: eᵐ may overflow to inf, and 1/(1 + inf) = 0 is wanted.
_KERNEL_OPTIONS = dict(fastmath={"reassoc", "contract"}, error_model="numpy", cache=True)


@intrinsic
def _bits_as_float(typingctx, bits):
    """Reinterpret the bits of an int32 (int64) as a float32 (float64), as C's type punning does."""
    to = {types.int32: types.float32, types.int64: types.float64}.get(bits)
    if to is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(signature.return_type))

    return to(bits), codegen


def logistic_neg(m):
    """σ(−m) = 1/(1 + eᵐ) in the precision of ``m`` (a numba overload; no Python implementation)."""
    raise NotImplementedError("logistic_neg is only callable from numba-compiled code")


def _logistic_neg32(m):
    x = min(max(m, np.float32(-80.0)), np.float32(80.0))
    kf = np.floor(x * np.float32(_LOG2E) + np.float32(0.5))
    r = (x - kf * np.float32(_LN2_HI32)) - kf * np.float32(_LN2_LO32)
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    e = p * _bits_as_float(np.int32((np.int32(kf) + 127) << 23))  # numba widens int arithmetic
    return np.float32(1.0) / (np.float32(1.0) + e)


def _logistic_neg64(m):
    x = min(max(m, -708.0), 708.0)
    kf = np.floor(x * _LOG2E + 0.5)
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = 1.0 / 6227020800.0
    for c in (
        1.0 / 479001600.0,
        1.0 / 39916800.0,
        1.0 / 3628800.0,
        1.0 / 362880.0,
        1.0 / 40320.0,
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ):
        p = p * r + c
    e = p * _bits_as_float(np.int64((np.int64(kf) + 1023) << 52))
    return 1.0 / (1.0 + e)


@overload(logistic_neg, inline="always")
def _logistic_neg_overload(m):
    if m == types.float32:
        return _logistic_neg32
    if m == types.float64:
        return _logistic_neg64
    return None


@njit(inline="always")
def _fused_block(m, a, b, dl):
    """Apply ``m += dl·a`` and return Σ_i b_i·σ(−m_i), summed in the precision of ``m``."""
    part = m.dtype.type(0)
    for i in range(m.size):
        mi = m[i] + dl * a[i]
        m[i] = mi
        part += b[i] * logistic_neg(mi)
    return part


@njit(inline="always")
def _fused_row(m, a, b, dl):
    """Apply ``m += dl·a`` and return −Σ_i b_i·σ(−m_i) in one pass: blocks of ``BLOCK`` samples are
    summed in the precision of ``m`` (vectorised), the block sums in float64."""
    acc = 0.0
    for lo in range(0, m.size, BLOCK):
        hi = min(lo + BLOCK, m.size)
        acc += _fused_block(m[lo:hi], a[lo:hi], b[lo:hi], dl)
    return -acc


@njit(**_KERNEL_OPTIONS)
def fused_step(M, YX, jprev, delta, j, q):
    """One coordinate update of every simulation, fused into a single pass over its margin row.

    For each simulation s and each sample i: apply the previous update, ``M[s, i] += delta[s] ·
    YX[jprev[s], i]``, then accumulate ``q[s] = −Σ_i σ(−M[s, i]) · YX[j[s], i]`` (partial sums over
    blocks of ``BLOCK`` samples in the dtype of ``M``, their total in float64).

    Parameters
    ----------
    M : ndarray, shape (S, n), float32 or float64
        Margins y_i h_s^⊤x_i, updated in place.
    YX : ndarray, shape (d, n), same dtype as ``M``
        Row l holds y_i x_il.
    jprev, j : ndarray of int64, shape (S,)
        The previous and the current coordinate of each simulation.
    delta : ndarray, shape (S,), same dtype as ``M``
        Change of coordinate ``jprev[s]`` in the previous update (zero for the first update).
    q : ndarray of float64, shape (S,)
        Output: the query (gradient sum) of the current update.
    """
    for s in range(M.shape[0]):
        q[s] = _fused_row(M[s], YX[jprev[s]], YX[j[s]], delta[s])


@njit(parallel=True, **_KERNEL_OPTIONS)
def fused_step_parallel(M, YX, jprev, delta, j, q):
    """:func:`fused_step` with the simulations spread over numba's threads (``prange``)."""
    for s in prange(M.shape[0]):
        q[s] = _fused_row(M[s], YX[jprev[s]], YX[j[s]], delta[s])


# ---------------------------------------------------------------------- one iteration per kernel
# call The scalar part of a step (piece, noise, proximal step, running sum of the iterates) is
# compiled without fast-math flags, as separate functions: the same IEEE operations in the same
# order as the numpy code of ``repro.experiments.pcd`` (no contraction to FMA), so both paths agree
# bit for bit.


@njit(error_model="numpy", cache=True)
def _piece(q, lo, scale, top, edges):
    """The piece of query ``q`` (:class:`repro.experiments.NoiseTable`)."""
    t = min(max((q - lo) / scale, 0.0), top)
    return np.searchsorted(edges, t, side="right") - 1


@njit(error_model="numpy", cache=True)
def _noisy_prox(q, noise, old, n, eta, thr):
    """h_j after the proximal step with the noisy query q + noise: sign(z)·max(|z| − ηλ, 0),
    z = h_j − η·(q + noise)/n."""
    z = old - eta * (q + noise) / n
    return np.sign(z) * max(abs(z) - thr, 0.0)


@njit(error_model="numpy", cache=True)
def _accumulate(hsum, h):
    for i in range(h.size):
        hsum[i] += h[i]


@njit(inline="always")
def _simulation(
    m, YX, js, h, hsum, q, s, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """The K steps of simulation ``s`` of one iteration, in turn, on its margin row ``m``; returns
    the number of queries outside ``[check_lo, check_hi]``."""
    bad = 0
    dl = m.dtype.type(0)
    jprev = js[0]
    for k in range(js.size):
        j = js[k]
        qk = _fused_row(m, YX[jprev], YX[j], dl)
        q[k, s] = qk
        p = 0
        if scaled.shape[0] > 1:
            if not (check_lo <= qk <= check_hi):
                bad += 1
            p = _piece(qk, lo, scale, top, edges)
        old = h[j]
        new = _noisy_prox(qk, scaled[p, k, s], old, n, eta, thr)
        h[j] = new
        dl = m.dtype.type(new - old)
        jprev = j
        _accumulate(hsum, h)
    return bad


@njit(**_KERNEL_OPTIONS)
def pcd_iteration(
    M, YX, order, H, Hsum, q, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """One iteration of DP proximal coordinate descent for every simulation, noise included.

    Simulation s runs its K steps back to back: the fused pass of :func:`fused_step` on its
    margin row ``M[s]`` (which stays in cache), then the noisy query
    ``q + scaled[piece(q), k, s]`` (:class:`repro.experiments.NoiseTable`) and the proximal step
    h_j ← sign(z)·max(|z| − ηλ, 0), z = h_j − η·q̃/n; after each step ``Hsum[s] += H[s]``.

    Parameters
    ----------
    M : ndarray, shape (S, n), float32 or float64
        Margins y_i h_s^⊤x_i at the start of the iteration; updated in place (the last update is
        not applied, as in :func:`fused_step`'s use).
    YX : ndarray, shape (d, n), same dtype as ``M``
        Row l holds y_i x_il.
    order : ndarray of int64, shape (S, K)
        The coordinates of each simulation's steps.
    H, Hsum : ndarray of float64, shape (S, d)
        The iterates (updated in place) and the running sum of the inner iterates (added to).
    q : ndarray of float64, shape (K, S)
        Output: the true queries.
    scaled : ndarray of float64, shape (P, K, S)
        The noise of each piece for each step and simulation.
    lo, scale, top, edges, check_lo, check_hi : float, float, float, ndarray, float, float
        Piece lookup and accepted range of the queries (used when P > 1).
    n, eta, thr : float
        Samples, step η and ηλ.

    Returns
    -------
    int
        The number of queries outside ``[check_lo, check_hi]`` (an error for the caller).
    """
    bad = 0
    for s in range(M.shape[0]):
        bad += _simulation(
            M[s],
            YX,
            order[s],
            H[s],
            Hsum[s],
            q,
            s,
            scaled,
            lo,
            scale,
            top,
            edges,
            check_lo,
            check_hi,
            n,
            eta,
            thr,
        )
    return bad


@njit(parallel=True, **_KERNEL_OPTIONS)
def pcd_iteration_parallel(
    M, YX, order, H, Hsum, q, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """:func:`pcd_iteration` with the simulations spread over numba's threads (``prange``)."""
    bad = 0
    for s in prange(M.shape[0]):
        bad += _simulation(
            M[s],
            YX,
            order[s],
            H[s],
            Hsum[s],
            q,
            s,
            scaled,
            lo,
            scale,
            top,
            edges,
            check_lo,
            check_hi,
            n,
            eta,
            thr,
        )
    return bad
