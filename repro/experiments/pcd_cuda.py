"""CUDA kernel of :func:`repro.experiments.pcd_train` on an NVIDIA GPU (CuPy): one launch per
iteration of DP proximal coordinate descent (Section 5.3, Table 3), the GPU counterpart of
:func:`repro.experiments.pcd_kernels.pcd_iteration`.

One thread block per simulation s runs its K steps in turn. In step k the block's threads sweep
the margin row ``M[s]`` together, applying the previous update and summing the query,

    m_i ← m_i + δ_{k−1}·y_i x_{i,j_{k−1}},    q_k = −Σ_i σ(−m_i)·y_i x_{i,j_k},

(each thread's partial sum in float64, then a tree reduction in shared memory); thread 0 then looks
up the piece of q_k (:class:`repro.experiments.NoiseTable`), adds that piece's pre-drawn noise,
takes the proximal step h_j ← sign(z)·max(|z| − ηλ, 0), z = h_j − η·q̃/n, and broadcasts the
change δ_k; finally the block adds the iterate to the running sum. All S blocks run at once, so
one launch reads and writes every margin once per step: the iteration is bound by the GPU's
memory bandwidth, and the only host work per iteration is drawing the noise table.

Same operations as the CPU kernels up to the order of the summation (float64 per thread here,
float32 within blocks of 256 samples there) and the device's ``exp``: iterates agree to rounding
(``tests/repro/test_pcd.py`` checks it wherever CuPy and a GPU are present).

Importing this module does not need CuPy; :func:`iteration_kernel` compiles the kernel (NVRTC,
cached by CuPy) on first use.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["THREADS", "SOURCE", "iteration_kernel", "launch_iteration"]

THREADS = 256  # threads per block (one block per simulation); a power of two (tree reduction)

SOURCE = r"""
extern "C" __global__ void pcd_iteration_{real}(
    {real}* M, const {real}* YX, const long long* order, double* H, double* Hsum, double* q,
    const double* scaled, const int n_pieces, const double lo, const double scale,
    const double top, const double* edges, const int n_edges, const double check_lo,
    const double check_hi, int* bad, const int S, const int n, const int d, const int K,
    const double nf, const double eta, const double thr)
{{
    const int s = blockIdx.x;
    if (s >= S) return;
    const int tid = threadIdx.x;
    {real}* m = M + (size_t)s * n;
    double* h = H + (size_t)s * d;
    double* hs = Hsum + (size_t)s * d;
    const long long* js = order + (size_t)s * K;
    __shared__ double red[{threads}];
    __shared__ double change;
    {real} dl = 0;
    long long jprev = js[0];
    for (int k = 0; k < K; ++k) {{
        const long long j = js[k];
        const {real}* a = YX + jprev * n;
        const {real}* b = YX + j * n;
        double acc = 0.0;
        for (int i = tid; i < n; i += {threads}) {{
            const {real} mi = m[i] + dl * a[i];
            m[i] = mi;
            acc += (double)(b[i] / (({real})1 + {exp}(mi)));
        }}
        red[tid] = acc;
        __syncthreads();
        for (int w = {threads} / 2; w > 0; w >>= 1) {{
            if (tid < w) red[tid] += red[tid + w];
            __syncthreads();
        }}
        if (tid == 0) {{
            const double qk = -red[0];
            q[(size_t)k * S + s] = qk;
            int p = 0;
            if (n_pieces > 1) {{
                if (!(check_lo <= qk && qk <= check_hi)) atomicAdd(bad, 1);
                const double t = fmin(fmax((qk - lo) / scale, 0.0), top);
                int l = 0, r = n_edges;  /* searchsorted(edges, t, side="right") - 1 */
                while (l < r) {{
                    const int mid = (l + r) / 2;
                    if (edges[mid] <= t) l = mid + 1; else r = mid;
                }}
                p = l - 1;  /* in [0, n_pieces) for queries in range (top < the last edge) */
                if (p < 0) p = 0;
                if (p >= n_pieces) p = n_pieces - 1;
            }}
            const double old = h[j];
            const double z = old - eta * (qk + scaled[((size_t)p * K + k) * S + s]) / nf;
            const double sgn = (z > 0.0) ? 1.0 : ((z < 0.0) ? -1.0 : 0.0);
            const double nw = sgn * fmax(fabs(z) - thr, 0.0);
            h[j] = nw;
            change = nw - old;
        }}
        __syncthreads();
        dl = ({real})change;
        for (int l = tid; l < d; l += {threads}) hs[l] += h[l];
        __syncthreads();
        jprev = j;
    }}
}}
"""


@functools.cache
def iteration_kernel(dtype: str):
    """The compiled kernel for margins of ``dtype`` ("float32" or "float64")."""
    import cupy

    real, exp = {"float32": ("float", "expf"), "float64": ("double", "exp")}[dtype]
    source = SOURCE.format(real=real, exp=exp, threads=THREADS)
    return cupy.RawKernel(source, f"pcd_iteration_{real}")


def launch_iteration(
    cp, M, YX, order, H, Hsum, q, scaled, table, n: int, eta: float, thr: float
) -> int:
    """Run one iteration on the device (``cp`` the cupy module); returns the number of queries
    outside the table's range. Arguments: the margins M (S, n) and YX (d, n) (row l: y_i x_il),
    then those of :func:`repro.experiments.pcd_kernels.pcd_iteration` (device arrays,
    C-contiguous; ``order`` int64, ``scaled`` float64 of shape (P, K, S))."""
    S, K = order.shape
    d = H.shape[1]
    edges = cp.asarray(np.zeros(1) if table.edges is None else np.asarray(table.edges, float))
    bad = cp.zeros(1, dtype=np.int32)
    kernel = iteration_kernel(str(M.dtype))
    kernel(
        (S,),
        (THREADS,),
        (
            M,
            YX,
            order,
            H,
            Hsum,
            q,
            scaled,
            np.int32(scaled.shape[0]),
            np.float64(table.lo),
            np.float64(table.scale),
            np.float64(table.top),
            edges,
            np.int32(edges.size),
            np.float64(table.check_lo),
            np.float64(table.check_hi),
            bad,
            np.int32(S),
            np.int32(M.shape[1]),
            np.int32(d),
            np.int32(K),
            np.float64(n),
            np.float64(eta),
            np.float64(thr),
        ),
    )
    return int(bad.get()[0])
