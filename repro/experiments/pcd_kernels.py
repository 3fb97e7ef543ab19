r"""Numba kernels of :func:`repro.experiments.pcd_train`: DP proximal coordinate descent (Section
5.3, Table 3) on the exponentials of the margins, with sparse coordinate updates.

**The representation.** Write every column of the design as its most frequent value plus a sparse
rest, x_il = c_l + z_il (:class:`SparseDesign`; one-hot columns, centred or not, have one or two
values, so z has few non-zeros per row). With a = h^⊤c the margin of sample i is
m_i = y_i h^⊤x_i = y_i h^⊤z_i + y_i a, and the kernels keep, per simulation, the scalar a
(accumulated since the start of the iteration, float64) and e_i = exp(m_i − y_i a) (in the
precision of the margins). Then, with the samples ordered by label (y = +1 first),

* σ(−m_i) = 1/(1 + e_i·A_{y_i}), A_± = e^{±a}: no exponential per sample and step;
* the query q_j = −Σ_i σ(−m_i)·y_i x_ij = −Σ_{i: z_ij ≠ 0} σ(−m_i)·w_ij − c_j·Σ_i y_i σ(−m_i),
  w_ij = y_i z_ij: one pass of a multiply, an add and a division over the samples (the label sum,
  vectorised) and a gather over the non-zeros of column j;
* the update h_j ← h_j + δ: a ← a + δ·c_j, and e_i ← e_i·exp(δ·w_ij) on the non-zeros of column j
  only.

Per coordinate update, the cost is n divisions (instead of n exponentials and divisions) plus a
multiply per non-zero of the updated column and an exponential per distinct value (or, for
columns with many non-zeros or values, one vectorised pass of exponentials:
``SparseDesign.dense_update``). The margins of the averaged iterate are recomputed at the start
of each iteration (one BLAS product, in the caller) and turned into exponentials here, once per
iteration (:func:`_to_exp`).

* :func:`pcd_iteration` (the default, for mechanisms with noise tables): one call per iteration;
  each simulation runs its K updates back to back on its cache-resident row, applying the
  pre-drawn noise and the proximal step itself;
* :func:`to_exp` and :func:`sparse_step`: the same steps one coordinate update at a time for every
  simulation (with any callable mechanism, called between the steps).

Both do the same floating-point operations in the same order (bit-identical iterates).

**Range.** The margins are clamped to ±64 (float32) or ±600 (float64) before the exponential, and
A_± to e^{±80} (e^{±700}); σ(−m) < 2e-28 beyond the float32 clamp (1e-260 in float64), so the
clamp changes σ by less than that. e_i·A may overflow to inf (σ = 0, as wanted) but never meets
0·inf: A is finite and positive, the factors exp(δ·w) too.

**Accuracy.** e_i is exact to 1 ulp of the exponential at the start of the iteration, and each of
at most K sparse updates multiplies it by a factor exact to 1 ulp (2 roundings): a relative error
≤ (2K + 3)·2⁻²⁴ of e_i·A in float32, i.e. an absolute error of the margin of that size,
independent of |m|; σ has slope ≤ ¼. Partial sums over blocks of ``BLOCK`` samples are in the
precision of the margins, their total and the sparse gathers in float64.

The exponential is written out (Cody–Waite range reduction, a Taylor polynomial and an exponent
built from integer bits) so that LLVM vectorises the loops (numba's ``math.exp`` is a scalar libm
call), generic over ``float32``/``float64`` (:func:`exp_clamped`; ``tests/repro/test_pcd.py``
checks it to 2 ulp).

Importing this module requires numba (the ``fast`` extra of the ``dpdro-repro`` distribution);
:mod:`repro.experiments` imports it lazily and falls back to numpy when it is missing. The kernels
are compiled on first use and cached on disk (``cache=True``, in ``__pycache__`` next to this
file).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange, types
from numba.core.extending import intrinsic, overload

__all__ = [
    "BLOCK",
    "SparseDesign",
    "exp_clamped",
    "pcd_iteration",
    "pcd_iteration_parallel",
    "sparse_design",
    "sparse_step",
    "sparse_step_parallel",
    "to_exp",
]

BLOCK = 256  # samples per partial sum (in the margins' precision within a block, float64 across)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # fdlibm's split of ln 2 (float64)
_LN2_LO = 1.90821492927058770002e-10
_LN2_HI32 = 0.693145751953125  # float32 split: 11 significant bits in the high part
_LN2_LO32 = 1.428606820309417e-06
_CLAMP32, _CLAMP64 = 64.0, 600.0  # margins before the exponential
_ACLAMP32, _ACLAMP64 = 80.0, 700.0  # a before A = e^{±a}
# Cost of a column update by runs, in units of one sample of the vectorised dense update: about 2.5
# per non-zero (a scattered multiply) and 16 per run (a scalar exponential); measured on adult.
_SCATTER_COST, _RUN_COST = 2.5, 6.4

# Keyword arguments of the vectorised kernels: reassociation (and contraction to FMA) lets LLVM
# vectorise the sums; the numpy error model drops the zero-division check that would otherwise keep
# the loop scalar. No ``ninf``/``nnan``: e·A may overflow to inf, and 1/(1 + inf) = 0 is wanted.
_KERNEL_OPTIONS = dict(fastmath={"reassoc", "contract"}, error_model="numpy", cache=True)


# -------------------------------------------------------------------------------------- the design
@dataclass(frozen=True)
class SparseDesign:
    """The design of :func:`sparse_design`: rows ordered by label, x_il = c_l + z_il.

    Attributes
    ----------
    perm : ndarray of int64, shape (n,)
        The sample order (labels +1 first, then −1; stable).
    n_pos : int
        Number of samples with y = +1.
    YX : ndarray, shape (d, n)
        y_i x_il in the sample order, in the margins' precision (for the margin product).
    c : ndarray of float64, shape (d,)
        Most frequent value of each column.
    col_runs, run_starts, run_w, rows : ndarray
        The non-zeros of z by column and by value: column l's runs are
        ``col_runs[l]:col_runs[l + 1]``; run r holds the samples
        ``rows[run_starts[r]:run_starts[r + 1]]`` (in the sample order), all with the same
        w = y_i z_il = ``run_w[r]`` (margins' precision). One-hot columns have two runs (one per
        label).
    """

    perm: np.ndarray
    n_pos: int
    YX: np.ndarray
    c: np.ndarray
    col_runs: np.ndarray
    run_starts: np.ndarray
    run_w: np.ndarray
    rows: np.ndarray
    dense_update: np.ndarray
    WD: np.ndarray


def _modes(X: np.ndarray) -> np.ndarray:
    """The most frequent value of every column (the smallest of equally frequent ones)."""
    out = np.empty(X.shape[1])
    for col in range(X.shape[1]):
        v, counts = np.unique(X[:, col], return_counts=True)
        out[col] = v[np.argmax(counts)]
    return out


def sparse_design(X: np.ndarray, y: np.ndarray, dtype) -> SparseDesign:
    """The design of the kernels (:class:`SparseDesign`) for samples X (n, d), labels y in ±1."""
    perm = np.argsort(-np.asarray(y), kind="stable")
    Xp, yp = np.asarray(X, dtype=float)[perm], np.asarray(y, dtype=float)[perm]
    c = _modes(Xp)
    Z = Xp - c[None, :]
    cols, rows = np.nonzero(Z.T)  # column by column, samples ascending
    w = (yp[rows] * Z[rows, cols]).astype(dtype)  # w_il = y_i z_il, rounded as the kernels use it
    order = np.lexsort((rows, w, cols))  # by column, value, sample
    cols, rows, w = cols[order], rows[order], w[order]
    new_run = np.ones(rows.size, dtype=bool)
    new_run[1:] = (cols[1:] != cols[:-1]) | (w[1:] != w[:-1])
    starts = np.flatnonzero(new_run)
    run_cols = cols[starts]
    col_runs = np.searchsorted(run_cols, np.arange(X.shape[1] + 1)).astype(np.int64)
    col_nnz = np.bincount(cols, minlength=X.shape[1])
    WD = np.zeros((X.shape[1], Xp.shape[0]), dtype=dtype)
    WD[cols, rows] = w
    return SparseDesign(
        perm=perm,
        n_pos=int(np.sum(yp > 0)),
        YX=np.ascontiguousarray(Xp.T * yp[None, :]).astype(dtype),
        c=c,
        col_runs=col_runs,
        run_starts=np.append(starts, rows.size).astype(np.int64),
        run_w=w[starts],
        rows=rows.astype(np.int64),
        dense_update=(np.diff(col_runs) * _RUN_COST + col_nnz) * _SCATTER_COST > Xp.shape[0],
        WD=WD,
    )


# ------------------------------------------------------------------------------- the exponential
@intrinsic
def _bits_as_float(typingctx, bits):
    """Reinterpret the bits of an int32 (int64) as a float32 (float64), as C's type punning does."""
    to = {types.int32: types.float32, types.int64: types.float64}.get(bits)
    if to is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(signature.return_type))

    return to(bits), codegen


def exp_clamped(m):
    """e^m, m clamped to ±64 (float32) or ±600 (float64), in the precision of ``m`` (a numba
    overload; no Python implementation)."""
    raise NotImplementedError("exp_clamped is only callable from numba-compiled code")


def _exp32(m):
    x = min(max(m, np.float32(-_CLAMP32)), np.float32(_CLAMP32))
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
    return p * _bits_as_float(np.int32((np.int32(kf) + 127) << 23))  # numba widens int arithmetic


def _exp64(m):
    x = min(max(m, -_CLAMP64), _CLAMP64)
    kf = np.floor(x * _LOG2E + 0.5)
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * _bits_as_float(np.int64((np.int64(kf) + 1023) << 52))


@overload(exp_clamped, inline="always")
def _exp_clamped_overload(m):
    if m == types.float32:
        return _exp32
    if m == types.float64:
        return _exp64
    return None


# ------------------------------------------------------------------------------------ one update
@njit(inline="always")
def _to_exp_row(e):
    """e_i ← exp(e_i) in place (the margins of a simulation become their exponentials)."""
    for i in range(e.size):
        e[i] = exp_clamped(e[i])


@njit(inline="always")
def _weighted_sum(e, b, lo, hi, A):
    """Σ_{lo ≤ i < hi} b_i/(1 + e_i·A): blocks of ``BLOCK`` in e's precision, their total in
    float64."""
    acc = 0.0
    for start in range(lo, hi, BLOCK):
        stop = min(start + BLOCK, hi)
        acc += _block_sum(e[start:stop], b[start:stop], A)
    return acc


@njit(inline="always")
def _block_sum(e, b, A):
    """Σ_i b_i/(1 + e_i·A) in e's precision (a loop over whole slices: LLVM vectorises it)."""
    one = e.dtype.type(1)
    part = e.dtype.type(0)
    for i in range(e.size):
        part += b[i] / (one + e[i] * A)
    return part


@njit(inline="always")
def _exp_a(a, sign, e):
    """A = e^{sign·a} in e's precision, a clamped to ±80 (float32) or ±700 (float64)."""
    lim = _ACLAMP32 if e.itemsize == 4 else _ACLAMP64
    return e.dtype.type(math.exp(sign * min(max(a, -lim), lim)))


@njit(inline="always")
def _rescale(e, wd, dl):
    """e_i ← e_i·exp(dl·wd_i) for every sample (vectorised)."""
    for i in range(e.size):
        e[i] *= exp_clamped(dl * wd[i])


@njit(inline="always")
def _step(e, a, design, jprev, dl, j):
    """Apply the update ``dl`` of coordinate ``jprev`` (if non-zero) to (e, a), then return
    (q_j, a): q_j = −Σ_i σ(−m_i)·y_i x_ij, σ(−m_i) = 1/(1 + e_i·A_{y_i})."""
    n_pos, c, col_runs, run_starts, run_w, rows, YX, dense_update, WD = design
    if dl != 0.0:
        dlr = e.dtype.type(dl)
        if dense_update[jprev]:
            _rescale(e, WD[jprev], dlr)
        else:
            for r in range(col_runs[jprev], col_runs[jprev + 1]):
                f = exp_clamped(dlr * run_w[r])
                for p in range(run_starts[r], run_starts[r + 1]):
                    e[rows[p]] *= f
        a += dl * c[jprev]
    b = YX[j]
    sums = _weighted_sum(e, b, 0, n_pos, _exp_a(a, 1.0, e))
    sums += _weighted_sum(e, b, n_pos, e.size, _exp_a(a, -1.0, e))
    return -sums, a


@njit(**_KERNEL_OPTIONS)
def to_exp(E):
    """E ← exp(E) in place, every simulation (margins clamped as in :func:`exp_clamped`)."""
    for s in range(E.shape[0]):
        _to_exp_row(E[s])


@njit(**_KERNEL_OPTIONS)
def sparse_step(E, a, design, jprev, delta, j, q):
    """One coordinate update of every simulation on the exponentials of its margins.

    For each simulation s: apply the previous update h_{jprev[s]} += delta[s] (a[s] and the
    non-zeros of column jprev[s] of E[s]; nothing when delta[s] = 0), then compute the query
    ``q[s] = −Σ_i σ(−m_i)·y_i x_{i,j[s]}``.

    Parameters
    ----------
    E : ndarray, shape (S, n), float32 or float64
        e_i = exp(m_i − y_i·a) per simulation (:func:`to_exp` of the margins at the start of the
        iteration), updated in place; samples in :class:`SparseDesign`'s order.
    a : ndarray of float64, shape (S,)
        h^⊤c accumulated since the start of the iteration (zero there), updated in place.
    design : tuple
        ``(n_pos, c, col_runs, run_starts, run_w, rows, YX, dense_update, WD)`` of
        :class:`SparseDesign` (in the precision of E).
    jprev, j : ndarray of int64, shape (S,)
        The previous and the current coordinate of each simulation.
    delta : ndarray of float64, shape (S,)
        Change of coordinate ``jprev[s]`` in the previous update (zero for the first update).
    q : ndarray of float64, shape (S,)
        Output: the query (gradient sum) of the current update.
    """
    for s in range(E.shape[0]):
        q[s], a[s] = _step(E[s], a[s], design, jprev[s], delta[s], j[s])


@njit(parallel=True, **_KERNEL_OPTIONS)
def sparse_step_parallel(E, a, design, jprev, delta, j, q):
    """:func:`sparse_step` with the simulations spread over numba's threads (``prange``)."""
    for s in prange(E.shape[0]):
        q[s], a[s] = _step(E[s], a[s], design, jprev[s], delta[s], j[s])


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
    e, design, js, h, hsum, q, s, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """The K steps of simulation ``s`` of one iteration, in turn, on its row ``e`` (the margins on
    entry, their exponentials on return); returns the number of queries outside
    ``[check_lo, check_hi]``."""
    _to_exp_row(e)
    bad = 0
    a, dl = 0.0, 0.0
    jprev = js[0]
    for k in range(js.size):
        j = js[k]
        qk, a = _step(e, a, design, jprev, dl, j)
        q[k, s] = qk
        p = 0
        if scaled.shape[0] > 1:
            if not (check_lo <= qk <= check_hi):
                bad += 1
            p = _piece(qk, lo, scale, top, edges)
        old = h[j]
        new = _noisy_prox(qk, scaled[p, k, s], old, n, eta, thr)
        h[j] = new
        dl = new - old
        jprev = j
        _accumulate(hsum, h)
    return bad


@njit(**_KERNEL_OPTIONS)
def pcd_iteration(
    M, design, order, H, Hsum, q, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """One iteration of DP proximal coordinate descent for every simulation, noise included.

    Simulation s turns its margin row ``M[s]`` into exponentials (:func:`to_exp`) and runs its K
    steps back to back (:func:`sparse_step`'s update and query on a row that stays in cache), then
    the noisy query ``q + scaled[piece(q), k, s]`` (:class:`repro.experiments.NoiseTable`) and the
    proximal step h_j ← sign(z)·max(|z| − ηλ, 0), z = h_j − η·q̃/n; after each step
    ``Hsum[s] += H[s]``.

    Parameters
    ----------
    M : ndarray, shape (S, n), float32 or float64
        Margins y_i h_s^⊤x_i at the start of the iteration, samples in :class:`SparseDesign`'s
        order; overwritten.
    design : tuple
        ``(n_pos, c, col_runs, run_starts, run_w, rows, YX, dense_update, WD)`` of
        :class:`SparseDesign` (in M's precision).
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
            M[s], design, order[s], H[s], Hsum[s], q, s, scaled, lo, scale, top, edges,
            check_lo, check_hi, n, eta, thr,
        )  # fmt: skip
    return bad


@njit(parallel=True, **_KERNEL_OPTIONS)
def pcd_iteration_parallel(
    M, design, order, H, Hsum, q, scaled, lo, scale, top, edges, check_lo, check_hi, n, eta, thr
):
    """:func:`pcd_iteration` with the simulations spread over numba's threads (``prange``)."""
    bad = 0
    for s in prange(M.shape[0]):
        bad += _simulation(
            M[s], design, order[s], H[s], Hsum[s], q, s, scaled, lo, scale, top, edges,
            check_lo, check_hi, n, eta, thr,
        )  # fmt: skip
    return bad
