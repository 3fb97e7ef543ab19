"""The CUDA kernel of the GPU backend (:mod:`repro.experiments.pcd_cuda`), checked on the CPU.

Its source is compiled as C++ with a few lines standing in for CUDA (``threadIdx``, ``blockIdx``,
``__shared__``, ``__syncthreads`` as a barrier of real threads, ``atomicAdd``) and run block by
block, one OS thread per CUDA thread: the kernel's own code, reductions and barriers included. Run
through ``pcd_train(backend="cupy")`` with numpy standing in for CuPy, it must give the numba
kernel's iterates to rounding and, in float64, the straightforward reference's. (On a real GPU,
``test_pcd.py::test_cupy_backend_agrees_with_numba`` checks the compiled kernel itself.) Skipped
where no C++20 compiler is installed.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
import test_pcd as base  # the shared fixtures and helpers of the coordinate-descent tests

from repro import brute
from repro.experiments import pcd as pcd_module
from repro.experiments import pcd_cuda

_DeviceArray, _StandInCupy, _split, _run, ex = (
    base._DeviceArray,
    base._StandInCupy,
    base._split,
    base._run,
    base.ex,
)
dd_cache, mechanisms = base.dd_cache, base.mechanisms  # fixtures
CXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler to emulate the CUDA kernel")

_SHIM = r"""
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <math.h>
#include <thread>
#include <vector>
struct Index { int x; };
static thread_local Index threadIdx, blockIdx;
static std::barrier<>* block_barrier;
#define __global__
#define __shared__ static
static void __syncthreads() { block_barrier->arrive_and_wait(); }
static int atomicAdd(int* p, int v) { return std::atomic_ref<int>(*p).fetch_add(v); }
"""

_ARGS = (
    "{real}* M, const {real}* YX, const long long* order, double* H, double* Hsum, double* q, "
    "const double* scaled, int n_pieces, double lo, double scale, double top, const double* edges, "
    "int n_edges, double check_lo, double check_hi, int* bad, int S, int n, int d, int K, "
    "double nf, double eta, double thr"
)
_NAMES = (
    "M, YX, order, H, Hsum, q, scaled, n_pieces, lo, scale, top, edges, n_edges, check_lo, "
    "check_hi, bad, S, n, d, K, nf, eta, thr"
)
_RUNNER = r"""
extern "C" void emulate_{real}(int blocks, {args}) {{
    for (int b = 0; b < blocks; ++b) {{
        std::barrier<> bar({threads});
        block_barrier = &bar;
        std::vector<std::thread> threads;
        for (int t = 0; t < {threads}; ++t)
            threads.emplace_back([&, t, b] {{
                threadIdx.x = t;
                blockIdx.x = b;
                pcd_iteration_{real}({names});
            }});
        for (auto& th : threads) th.join();
    }}
}}
"""


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    """The kernel source compiled for the CPU (both precisions) as a shared library."""
    folder = tmp_path_factory.mktemp("cuda")
    parts = [_SHIM]
    for real, exp in (("float", "expf"), ("double", "exp")):
        parts.append(pcd_cuda.SOURCE.format(real=real, exp=exp, threads=pcd_cuda.THREADS))
        parts.append(
            _RUNNER.format(
                real=real, args=_ARGS.format(real=real), names=_NAMES, threads=pcd_cuda.THREADS
            )
        )
    src, lib = folder / "kernel.cpp", folder / "kernel.so"
    src.write_text("\n".join(parts))
    cmd = [CXX, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", str(src), "-o", str(lib)]
    subprocess.run(cmd, check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


class _EmulatedKernel:
    """Called as a ``cupy.RawKernel``: ``kernel(grid, block, args)``, numpy arrays as pointers."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, grid, block, args):
        assert block == (pcd_cuda.THREADS,)
        conv = []
        for a in args:
            if isinstance(a, np.ndarray):
                assert a.flags.c_contiguous
                conv.append(ctypes.c_void_p(a.ctypes.data))
            elif isinstance(a, np.int32):
                conv.append(ctypes.c_int(int(a)))
            else:
                assert isinstance(a, np.float64), type(a)
                conv.append(ctypes.c_double(float(a)))
        self.fn(ctypes.c_int(grid[0]), *conv)


@pytest.fixture
def emulated_gpu(emulator, monkeypatch):
    """``pcd_train(backend="cupy")`` runs the kernel source on the CPU (numpy stands in for
    CuPy)."""
    kernels = {
        "float32": _EmulatedKernel(emulator.emulate_float),
        "float64": _EmulatedKernel(emulator.emulate_double),
    }
    monkeypatch.setattr(pcd_module, "_CUPY", _StandInCupy())
    monkeypatch.setattr(pcd_cuda, "iteration_kernel", kernels.__getitem__)


@base.needs_numba
@pytest.mark.parametrize("m", ["GN", "(OPT)", "PCD"])
def test_kernel_source_agrees_with_the_numba_kernel(mechanisms, emulated_gpu, m):
    X, y, _, _ = _split("breast-cancer", 3)
    H1, q1, ri1, rn1 = _run(ex.pcd_train, X, y, mechanisms[m], 5, 3, 8, backend="cupy")
    H0, q0, ri0, rn0 = _run(ex.pcd_train, X, y, mechanisms[m], 5, 3, 8, backend="numba")
    assert type(H1) is np.ndarray and not isinstance(H1, _DeviceArray)
    np.testing.assert_allclose(H1, H0, rtol=0, atol=1e-5)
    np.testing.assert_allclose(q1, q0, rtol=0, atol=1e-5 * X.shape[0])
    assert ri1.bit_generator.state == ri0.bit_generator.state
    assert rn1.bit_generator.state == rn0.bit_generator.state


@pytest.mark.parametrize("m", ["GN", "(OPT)"])
def test_kernel_source_in_float64_equals_the_reference(mechanisms, emulated_gpu, m):
    X, y, _, _ = _split("ecoli", 5)
    H, q, *_ = _run(ex.pcd_train, X, y, mechanisms[m], 4, 2, 9, backend="cupy", dtype=np.float64)
    H_ref, q_ref, *_ = _run(brute.pcd_train_reference, X, y, mechanisms[m], 4, 2, 9)
    np.testing.assert_allclose(H, H_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(q, q_ref, rtol=0, atol=1e-9)


def test_kernel_source_reports_queries_out_of_range(mechanisms, emulated_gpu):
    X, y, _, _ = _split("ecoli", 2)
    with pytest.raises(ValueError, match="outside its range"):
        _run(ex.pcd_train, X, y, base._NarrowRange(mechanisms["(OPT)"]), 4, 1, 2, backend="cupy")
