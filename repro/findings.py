"""Computations behind the "Findings and errata" chapter (``notebooks/91_findings.ipynb``).

Each function recomputes one piece of evidence with dpdro, small enough to run in seconds, except
:func:`eps5_cell_infimum_bound`, whose finest grid is stored by ``scripts/findings_eps5.py`` in
``results/findings/eps5_cell_infimum.json`` (with provenance) and loaded by the chapter.

1. :func:`eprime_km_lower_bound` – the paper's D′(π, β) of Appendix C.3 with the shift set E′_km
   (shifts (m − k ± 1)β between fine pieces k and m), against dpdro's valid D′ (exact shifts only)
   and a constant mechanism, which is 0-DP (:func:`constant_mechanism_loss`).
2. :func:`nonuniform_counterexample` – Corollary 1: on the stored 643-cell partition the cell
   masses of a certified private noise violate the paper's D(π, β) constraints; the paper's
   D(π, β) itself (about three minutes) is stored by ``scripts/findings_corollary1.py`` in
   ``results/findings/corollary1.json`` (:func:`corollary1_paper_bound`, with provenance).
3. :func:`eps5_cell_infimum_bound` – the paper's own uniform D(L, β) (cell infima, no rounding) at
   ε = 5 against the optimum O implied by the paper's Table 4.
4. :func:`monotone_lower_bound` and :func:`recertify` – the GitHub appendix's monotone
   counterexample: the decisive monotone lower bound recomputed live, and the two released noises
   stored by ``scripts/run_figures_appendix.py`` re-certified from their probabilities.
"""

from __future__ import annotations

import time

import numpy as np

import dpdro
from dpdro import data_dependent as dd
from dpdro.cutting_plane import run_cutting_plane
from dpdro.data_dependent.lp import DDBoundingLP
from dpdro.oracle import segment_table

from . import tables
from .counterexamples import NONUNIFORM, paper_lower_bound
from .exact import exact_lagrangian_bound
from .paths import RESULTS
from .provenance import read_json

__all__ = [
    "EPS5",
    "COROLLARY1",
    "corollary1_paper_bound",
    "recertify",
    "monotone_lower_bound",
    "constant_mechanism_loss",
    "eprime_km_lower_bound",
    "eps5_cell_infimum_bound",
    "eps5_paper_optimum",
    "nonuniform_counterexample",
    "constant_mechanism_violation",
]

EPS5 = RESULTS / "findings" / "eps5_cell_infimum.json"
COROLLARY1 = RESULTS / "findings" / "corollary1.json"


# ------------------------------------------------------------------------- E′_km (Appendix C.3)
def _with_shift_sets(lp: DDBoundingLP, shifts) -> DDBoundingLP:
    """Replace the constraint groups (k, m, s) of a D′ LP by those with s in ``shifts(k, m)``."""
    tl, tm, ts = [], [], []
    for k in range(lp.M):
        for m in range(lp.M):
            for s in shifts(k, m):
                if abs(s) <= lp.k and not (k == m and s == 0):
                    tl.append(k), tm.append(m), ts.append(s)
    tl, tm, ts = (np.asarray(a, dtype=np.int64) for a in (tl, tm, ts))
    pos = np.searchsorted(lp.table.shifts, ts)
    if not np.array_equal(lp.table.shifts[pos], ts):  # pragma: no cover - a shift outside the table
        raise RuntimeError("a shift of the requested set is missing from the segment table")
    order = np.lexsort((tm, tl, pos))
    lp.t_l, lp.t_m, lp.t_si = tl[order], tm[order], pos[order]
    lp.n_groups = int(tl.size)
    b = np.searchsorted(lp.t_si, np.arange(lp.table.shifts.size + 1))
    lp._by_shift = [
        (si, b[si], b[si + 1]) for si in range(lp.table.shifts.size) if b[si + 1] > b[si]
    ]
    return lp


def eprime_km_lower_bound(
    problem: dd.Problem, partition: dpdro.Partition, shift_set: str = "paper"
) -> float:
    """The optimal value of D′(π, β) (one distribution per fine piece, cell infima, weights inf w)
    with the paper's shift set E′_km = {(m − k − 1)β, (m − k)β, (m − k + 1)β} (``"paper"``) or with
    the exact shifts (m − k)β only (``"exact"``, what dpdro's valid D′ uses). Returned as a
    dual-feasible objective (a lower bound on that LP)."""
    sets = {"paper": lambda k, m: (m - k - 1, m - k, m - k + 1), "exact": lambda k, m: (m - k,)}
    lp = _with_shift_sets(DDBoundingLP(problem, partition, "lower"), sets[shift_set])
    return float(lp.dual_bound(run_cutting_plane(lp, tol=1e-9).row_duals))


def constant_mechanism_loss(phi_lo: float, phi_hi: float, n: int = 200_001) -> tuple[float, float]:
    """The ℓ1 loss, averaged uniformly over Φ = [phi_lo, phi_hi), of the mechanism that always
    releases the midpoint c of Φ (noise X = c − ϕ given ϕ): closed form |Φ|/4 and a midpoint-rule
    check. The release does not depend on the data, so the mechanism is (0, 0)-DP."""
    c = (phi_lo + phi_hi) / 2
    phi = phi_lo + (np.arange(n) + 0.5) * (phi_hi - phi_lo) / n
    return (phi_hi - phi_lo) / 4, float(np.mean(np.abs(c - phi)))


def constant_mechanism_violation(
    phi_lo: float, phi_hi: float, beta: float, epsilon: float, delta: float
) -> float:
    """Shortfall of the constant mechanism, averaged over the first fine piece
    Φ_0 = [phi_lo, phi_lo + β), in the E′_km constraint (k, m) = (0, 0), φ = β: with
    A = (c − phi_lo − β, c − phi_lo] the averaged noise p_0 (uniform on A) has p_0(A) = 1 and
    p_0(A − β) = 0, so the constraint reads 1 ≤ δ.
    Computed from the uniform law directly (no dpdro)."""
    c = (phi_lo + phi_hi) / 2
    lo, hi = c - phi_lo - beta, c - phi_lo  # support of p_0

    def mass(a, b):
        return max(0.0, min(b, hi) - max(a, lo)) / (hi - lo)

    return mass(lo, hi) - np.exp(epsilon) * mass(lo - beta, hi - beta) - delta


# ------------------------------------------------------------------------- Corollary 1
def corollary1_paper_bound() -> dict:
    """The paper's D(π, β) of Section 4.1 on the stored 643-cell partition (ε = 5, δ = 0.01, ℓ1;
    :func:`repro.counterexamples.paper_lower_bound`), as a dual-feasible value: what
    ``scripts/findings_corollary1.py`` stores in :data:`COROLLARY1`."""
    data = read_json(NONUNIFORM)
    prob = dpdro.Problem(**data["problem"])
    part = dpdro.Partition(np.asarray(data["pi"]), data["beta"])
    t = time.perf_counter()
    value = paper_lower_bound(prob, part, int(data["shift_stride"]))
    return dict(
        problem=data["problem"],
        cells=part.n_cells,
        shift_stride=int(data["shift_stride"]),
        paper_D=float(value),
        seconds=time.perf_counter() - t,
    )


def nonuniform_counterexample(k_upper: int = 64) -> dict:
    """Corollary 1's D(π, β) on the stored 643-cell partition (ε = 5, δ = 0.01, ℓ1): a certified
    private noise (the upper bound on the uniform grid β = 1/k_upper) and the largest violation of
    the paper's constraints by its cell masses, against dpdro's cell-union constraints, both at the
    stored shift stride (returned with the grid β); the paper's D(π, β) and the commit it was
    computed at are read from :data:`COROLLARY1`."""
    data = read_json(NONUNIFORM)
    stored = read_json(COROLLARY1)
    prob = dpdro.Problem(**data["problem"])
    part = dpdro.Partition(np.asarray(data["pi"]), data["beta"])
    stride = int(data["shift_stride"])
    t = time.perf_counter()
    ub = dpdro.upper_bound(prob, dpdro.Partition.uniform(int(np.ceil(2.67 * k_upper)), 1 / k_upper))
    d = dpdro.certify_delta(ub.noise, epsilon=prob.epsilon, sensitivity=prob.sensitivity)
    table = segment_table(prob, part, lower=True, shift_stride=stride)
    masses = np.diff(ub.noise.cdf(table.column_pi * part.beta))
    paper = table.worst_values(masses, prob.exp_epsilon) - prob.delta
    ours = dpdro.max_privacy_shortfall(prob, part, masses, lower=True, table=table)
    prov = stored["provenance"]
    return dict(
        problem=data["problem"],
        cells=part.n_cells,
        beta=float(part.beta),
        shift_stride=stride,
        paper_D=float(stored["paper_D"]),
        paper_D_commit=prov["git_commit"][:7],
        paper_D_clean=not prov["git_dirty"],
        upper=float(ub.value),
        certified_delta=float(d),
        paper_violation=float(paper.max()),
        violation_phi=float(table.shifts[int(np.argmax(paper))] * part.beta),
        cell_union_shortfall=float(ours.value),
        seconds=time.perf_counter() - t,
    )


# ------------------------------------------------------------------ the monotone counterexample
def recertify(entry: dict, epsilon: float = 3.0, sensitivity: float = 1.0) -> dict:
    """Re-certify a released noise stored by ``scripts/run_figures_appendix.py counterexample``
    from its probabilities alone: exact δ (:func:`dpdro.certify_delta`), E|X| cell by cell, and
    whether its density is monotone (non-decreasing up to its peak, non-increasing after)."""
    edges = (
        np.asarray(entry["pi"])
        if "pi" in entry
        else np.arange(entry["pi_range"][0], entry["pi_range"][1] + 1)
    ) * entry["beta"]
    probs = np.asarray(entry["probs"])
    noise = dpdro.PiecewiseUniform(edges, probs)
    mid, w = (edges[1:] + edges[:-1]) / 2, np.diff(edges)
    at0 = (np.abs(mid) < w / 2) * w / 4  # a cell around 0: |x| averages w/4 more than |mid|
    dens = probs / w
    peak = int(np.argmax(dens))
    monotone = bool(
        np.all(np.diff(dens[: peak + 1]) >= -1e-12) and np.all(np.diff(dens[peak:]) <= 1e-12)
    )
    return dict(
        delta=dpdro.certify_delta(noise, epsilon=epsilon, sensitivity=sensitivity),
        loss=float(np.sum(probs * (np.abs(mid) + at0))),
        monotone=monotone,
    )


def monotone_lower_bound(entry: dict, epsilon: float = 3.0, delta: float = 0.3) -> float:
    """The strengthened monotone lower bound
    (:func:`repro.appendix.strengthened_monotone_lower_bound`)
    recomputed on the uniform grid and shift stride of a stored lower-bound ``entry`` (a few
    seconds at β = 1/128)."""
    from .appendix import strengthened_monotone_lower_bound

    prob = dpdro.Problem(epsilon=epsilon, delta=delta, sensitivity=1.0, loss="l1", monotone=True)
    part = dpdro.Partition.uniform(-int(entry["pi_range"][0]), entry["beta"])
    if [int(part.pi[0]), int(part.pi[-1])] != list(entry["pi_range"]):  # pragma: no cover
        raise ValueError(f"entry must be on a symmetric uniform grid, got {entry['pi_range']}")
    return strengthened_monotone_lower_bound(prob, part, int(entry.get("shift_stride", 1)))


# ------------------------------------------------------------------------- ε = 5 brackets
def eps5_paper_optimum() -> dict:
    """The paper's implied optimum O at ε = 5 (ℓ1, Δf = 1) for every δ of the grid, from its
    Table 4 and the truncated Laplace loss (:func:`repro.tables.paper_optimum`)."""
    pt = tables.paper_tables()
    bench = tables.benchmark_grids("l1")
    o = tables.paper_optimum(
        bench["TL"], np.asarray(pt["tables"]["table4"]["values_percent"], dtype=float)
    )
    i = list(tables.EPSILONS).index(5.0)
    return {float(d): float(o[i, j]) for j, d in enumerate(tables.DELTAS)}


def eps5_cell_infimum_bound(delta: float, k: int, support: float = 2.0) -> dict:
    """The paper's D(L, β) (uniform cells, cell-infimum coefficients, no rounding) at ε = 5,
    Δf = 1, ℓ1, β = 1/k on [−support, support]: a dual-feasible, hence valid, lower bound on the
    optimum."""
    prob = dpdro.Problem(epsilon=5.0, delta=delta, sensitivity=1.0, loss="l1")
    t = time.perf_counter()
    lb = dpdro.lower_bound(prob, dpdro.Partition.uniform(int(round(support * k)), 1 / k))
    return dict(
        epsilon=5.0,
        delta=delta,
        beta=1 / k,
        support=support,
        lower=float(lb.value),
        coefficients="infimum",
        seconds=time.perf_counter() - t,
    )


def eps5_exact_certificate(delta: float, k: int, support: float = 2.0) -> dict:
    """Solve the paper's D(L, β) at ε = 5 (cell infima, β = 1/k on [−support, support]) as
    :func:`dpdro.lower_bound` does, and evaluate its dual certificate twice: dpdro's floating-point
    bound with rounding-error terms and :func:`exact_lagrangian_bound` in rational arithmetic."""
    from dpdro.bounds import BoundingLP

    prob = dpdro.Problem(epsilon=5.0, delta=delta, sensitivity=1.0, loss="l1")
    part = dpdro.Partition.uniform(int(round(support * k)), 1 / k)
    t = time.perf_counter()
    lp = BoundingLP(prob, part, "lower")
    res = run_cutting_plane(lp, tol=1e-9)
    solve = time.perf_counter() - t
    cost, mat, lo, hi = lp.matrix()
    t = time.perf_counter()
    exact = exact_lagrangian_bound(
        cost, mat, lo, hi, lp.column_upper_bounds(), res.row_duals, simplex_rows=lp._simplex_rows
    )
    return dict(
        epsilon=5.0,
        delta=delta,
        beta=1 / k,
        support=support,
        rows=int(mat.shape[0]),
        columns=int(mat.shape[1]),
        nonzeros=int(mat.nnz),
        float_bound=float(lp.dual_bound(res.row_duals)),
        exact_bound=str(exact),
        exact_bound_float=float(exact),
        solve_seconds=solve,
        exact_seconds=time.perf_counter() - t,
    )
