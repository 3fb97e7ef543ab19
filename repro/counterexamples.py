"""Counterexample: the paper's D(π, β) on a non-uniform partition is not a valid lower bound, and
dpdro's cell-union relaxation, which replaces it, is.

Instance: ε = 5, δ = 0.01, Δf = 1, ℓ1, on the adaptive 643-cell partition stored in
``results/counterexamples/nonuniform_partition.json`` (the partition on which this was found, produced
by dpdro's old non-uniform lower-bound track; shifts restricted to multiples of 64β as there).
:func:`check` (``scripts/check_nonuniform_lower_bound.py``)

1. solves the paper's D(π, β) (segment events, each wide cell's mass spread uniformly over the cell)
   and a certified upper bound (uniform β = 1/64): D(π, β) exceeds the loss of a private noise;
2. aggregates that private noise into the cells of π and shows that it violates the paper's
   constraints at φ = Δf but satisfies dpdro's cell-union constraints (every decision cell met by the
   shifted union is charged in full);
3. solves dpdro's valid lower bound on the same partition: it lies below the certified upper bound.

Why the paper's version fails: the dual constraint of the infinite problem must hold at every point
x; D(π, β) imposes it only on average over each cell Π_j (its coefficients are |A ∩ Π_j|/|Π_j|). On
uniform cells of width β with shifts on the β-grid nothing is lost (the paper's D(L, β), which dpdro
keeps); on wider cells the averaged constraint is weaker than the pointwise one.

Run: ``python scripts/check_nonuniform_lower_bound.py`` (a few minutes).
"""

from __future__ import annotations

import time

import numpy as np

import dpdro
from dpdro.bounds import BoundingLP
from dpdro.cutting_plane import run_cutting_plane
from dpdro.oracle import segment_table

from .paths import RESULTS
from .provenance import read_json

__all__ = ["NONUNIFORM", "paper_lower_bound", "check"]

NONUNIFORM = RESULTS / "counterexamples" / "nonuniform_partition.json"


def paper_lower_bound(prob: dpdro.Problem, part: dpdro.Partition, stride: int) -> float:
    """The paper's D(π, β) as stated in Section 4.1: the segment formulation that dpdro uses on uniform
    cells, applied to the wide cells as well (not a valid bound; for this demonstration only)."""
    lp = BoundingLP(prob, part, "lower", shift_stride=stride)
    lp.cell_unions = False  # the paper's constraints instead of dpdro's cell unions
    return lp.dual_bound(run_cutting_plane(lp).row_duals)


def check(path=NONUNIFORM) -> dict:
    """Steps 1 to 3 of the module docstring, printed; returns the numbers."""
    data = read_json(path)
    prob = dpdro.Problem(**data["problem"])
    part = dpdro.Partition(np.asarray(data["pi"]), data["beta"])
    stride = int(data["shift_stride"])
    print(f"partition: {part} (shift stride {stride})")

    t = time.perf_counter()
    paper = paper_lower_bound(prob, part, stride)
    print(f"paper's D(π, β):                 {paper:.6f}  ({time.perf_counter() - t:.1f} s)")
    ub = dpdro.upper_bound(prob, dpdro.Partition.uniform(171, 1 / 64))  # optimal_noise's upper grid at k_U = 64
    d = dpdro.certify_delta(ub.noise, epsilon=prob.epsilon, sensitivity=prob.sensitivity)
    print(f"certified upper bound (β = 1/64): {ub.value:.6f}, exact δ of its noise {d:.12g} <= {prob.delta}")

    table = segment_table(prob, part, lower=True, shift_stride=stride)
    masses = np.diff(ub.noise.cdf(table.column_pi * part.beta))
    paper_violation = table.worst_values(masses, prob.exp_epsilon) - prob.delta
    ours = dpdro.max_privacy_shortfall(prob, part, masses, lower=True, table=table)
    print(f"the private noise's cell masses violate the paper's constraints by {paper_violation.max():.4f} "
          f"(at φ = {table.shifts[np.argmax(paper_violation)] * part.beta:g})")
    print(f"largest shortfall of dpdro's cell-union constraints at the same masses: {ours.value:.3e}")

    t = time.perf_counter()
    valid = dpdro.lower_bound(prob, part, shift_stride=stride)
    print(f"dpdro's valid D(π, β):           {valid.value:.6f}  ({time.perf_counter() - t:.1f} s)")
    print("paper's D(π, β) exceeds a certified upper bound: INVALID" if paper > ub.value else
          "no contradiction for the paper's version at this setting")
    if not (valid.value <= ub.value and ours.value <= 1e-12):  # pragma: no cover - would be a bug in dpdro
        raise AssertionError("dpdro's lower bound exceeds a certified upper bound")
    return dict(paper=paper, upper=ub.value, valid=valid.value, paper_violation=float(paper_violation.max()),
                cell_union_shortfall=ours.value)
