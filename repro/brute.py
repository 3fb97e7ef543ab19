"""Brute-force references shared by the tests and the chapters.

The references the method's own tests need live with the method, in :mod:`dpdro.testing` (every
event enumerated, tiny LPs solved exactly), so that ``tests/method`` runs with only the wheel
installed; they are re-exported here for the chapters (e.g. ``11_reductions``). This module adds the
machine-learning reference :func:`pcd_train_reference`, the straightforward numpy implementation of
DP proximal coordinate descent that :func:`repro.experiments.pcd_train` (fused kernels, float32 by
default) replaced; the tests compare against it and ``scripts/benchmark_pcd.py`` times it.
"""

from __future__ import annotations

import math

import numpy as np

from dpdro.testing import (
    all_events,
    brute_lp,
    brute_max_shortfall,
    cell_union_coefficients,
    dd_brute_lp,
    dd_brute_shortfall,
    dd_event_rows,
    exact_lp_minimum,
    fine_triples,
    hockey_stick,
    lower_rows,
    unit_cell_coefficients,
    unit_densities,
)

__all__ = [
    "all_events",
    "brute_lp",
    "brute_max_shortfall",
    "cell_union_coefficients",
    "dd_brute_lp",
    "dd_brute_shortfall",
    "dd_event_rows",
    "exact_lp_minimum",
    "fine_triples",
    "hockey_stick",
    "lower_rows",
    "pcd_train_reference",
    "unit_cell_coefficients",
    "unit_densities",
]


# ---------------------------------------------------------------------------- machine learning
def pcd_train_reference(
    X, y, mech, n_sims, rng_init, rng_noise, settings=None, record_queries=False
):
    """DP proximal coordinate descent as first written (float64, one numpy pass per operation): the
    reference of :func:`repro.experiments.pcd_train`, with the same signature (without its
    keyword-only options), semantics and random-number consumption; see that function for the
    method.

    Per inner step it makes about eight passes over (S, n) arrays: the gather ``YX[j]``, σ(−m)
    through tanh in four in-place passes, the product with ``YX[j]``, the scaled update and its
    addition to the margins M, which are updated incrementally within an iteration and recomputed
    from the averaged iterate at its start.
    """
    from .experiments import PCDSettings, call_mechanism

    settings = PCDSettings() if settings is None else settings
    n, d = X.shape
    S = int(n_sims)
    K = settings.K if settings.K is not None else int(math.ceil(d / 4))
    eta, lam = settings.step, settings.lam
    H = (rng_init.random((S, d)) - 0.5) * 2.0
    YX = np.ascontiguousarray(X.T * y.astype(float)[None, :])  # (d, n): row l holds y_i x_il
    rows = np.arange(S)
    queries = [] if record_queries else None
    w = np.empty((S, n))
    for _t in range(settings.T):
        order = np.argsort(rng_init.random((S, d)), axis=1)[:, :K]  # K distinct coordinates per sim
        M = H @ YX  # margins y_i h^T x_i, (S, n)
        Hsum = np.zeros_like(H)
        for k in range(K):
            j = order[:, k]
            YXj = YX[j]  # (S, n)
            np.multiply(M, 0.5, out=w)
            np.tanh(w, out=w)
            w -= 1.0
            w *= -0.5  # sigmoid(-M) = (1 - tanh(M/2))/2, overflow free
            q = -np.einsum("sn,sn->s", w, YXj)
            if record_queries:
                queries.append(q.copy())
            qn = call_mechanism(mech, q, settings.sensitivity, rng_noise, -float(n), float(n))
            old = H[rows, j]
            z = old - eta * qn / n
            new = np.sign(z) * np.maximum(np.abs(z) - eta * lam, 0.0)
            H[rows, j] = new
            YXj *= (new - old)[:, None]
            M += YXj
            Hsum += H
        H = Hsum / K
    if record_queries:
        return H, np.asarray(queries)
    return H
