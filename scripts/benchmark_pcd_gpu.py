#!/usr/bin/env python3
"""Table 3 on a GPU, timed: the seconds of one paper-scale split per dataset, and the CUDA kernel
against the numba kernel on adult.

One split is 1,000 simulations of every mechanism; the kernels are compared on adult's split-0
training set (GN, S = 1000, T = 5), run in the order CUDA, numba, CUDA. Needs CuPy and an NVIDIA
GPU.

Stored run: results/benchmarks/pcd_gpu.json (an NVIDIA H100; the per-split times are dominated by
drawing the (OPT) mechanism's noise tables on the CPU).
"""

import argparse
import json
import time

import numpy as np

from repro.datasets import available_datasets, load_dataset, one_hot
from repro.experiments import PCDSettings, pcd_device, pcd_train, run_pcd, split_indices
from repro.ml_tables import mechanisms


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", help="JSON file for the timings")
    ap.add_argument("--sims", type=int, default=1000, help="simulations per split (default 1000)")
    args = ap.parse_args(argv)
    mechs, _, _ = mechanisms(3)
    out = {"device": pcd_device(), "sims": args.sims, "per_split_seconds": {}, "adult_gn_T5": {}}
    run_pcd(load_dataset("post-operative"), mechs, n_splits=1, n_sims=10)  # compile, warm up
    ds = load_dataset("adult")
    design = one_hot(ds)
    train, _ = split_indices(ds.n, np.random.default_rng(0))
    X, y = design.X[train], design.y[train]
    for backend in ("cupy", "numba", "cupy"):
        rngs = np.random.default_rng(1), np.random.default_rng(2)
        t = time.perf_counter()
        pcd_train(X, y, mechs["GN"], args.sims, *rngs, PCDSettings(T=5), backend=backend)
        out["adult_gn_T5"][backend] = time.perf_counter() - t
        print("adult GN T=5", backend, round(out["adult_gn_T5"][backend], 3), flush=True)
    for name in available_datasets():
        t = time.perf_counter()
        run_pcd(load_dataset(name), mechs, n_splits=1, n_sims=args.sims)
        out["per_split_seconds"][name] = time.perf_counter() - t
        print(name, round(out["per_split_seconds"][name], 2), flush=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
