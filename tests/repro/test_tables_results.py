"""Sanity checks of the stored paper-scale results of Table 1 / Tables 4-6 (scripts/sweep.py tables).

These tests only read ``results/tables/``; they do not solve anything, so they run in about a second.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpdro
from dpdro import mechanisms as bm
from repro.paths import RESULTS

TABLES = RESULTS / "tables"
CELL_FILES = sorted((TABLES / "cells").glob("*.json"))
EPS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
DELTAS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75]


def _cells():
    return [json.loads(p.read_text()) for p in CELL_FILES]


def test_paper_tables_file():
    paper = json.loads((TABLES / "paper_tables.json").read_text())
    assert "PAPER DATA" in paper["_comment"]
    assert paper["epsilons"] == EPS and paper["deltas"] == DELTAS
    t = {k: np.array(v["values_percent"]) for k, v in paper["tables"].items()}
    assert set(t) == {"table1", "table4", "table5", "table6"}
    for k, v in paper["tables"].items():
        assert t[k].shape == (10, 10) and v["source"] and v["loss"] in ("l1", "l2")
    # the paper's Table 1 is the sum of Tables 4 and 5 up to the printed rounding
    assert np.abs(t["table1"] - t["table4"] - t["table5"]).max() <= 0.01 + 1e-9


def _cell_params():
    return [pytest.param(c, id=p.stem) for p, c in zip(CELL_FILES, _cells())]


@pytest.mark.skipif(not CELL_FILES, reason="no stored cells (run scripts/run_tables.py)")
@pytest.mark.parametrize("cell", _cell_params())
def test_stored_cell(cell):
    eps, delta, loss = cell["epsilon"], cell["delta"], cell["loss"]
    assert eps in EPS and delta in DELTAS and loss in ("l1", "l2") and cell["sensitivity"] == 1.0
    assert 0 < cell["lower"] <= cell["upper"]
    assert math.isclose(cell["gap"], (cell["upper"] - cell["lower"]) / cell["lower"], rel_tol=1e-9)
    assert cell["reached_target"] == (cell["gap"] <= cell["rel_gap_target"])
    # the released noise is private: its exact delta (computed independently of the LP) is at most delta
    assert cell["certified_delta"] <= delta and cell["certified_ok"]
    # an atom a at 0 adds a to δ(φ) at every shift φ ≠ 0, so a private noise has a ≤ δ (the engine
    # decides whether the released noise has one)
    assert 0.0 <= cell.get("atom_mass", 0.0) <= delta
    # consistency with the closed-form benchmarks: a private mechanism cannot beat the lower bound D,
    # and the valid near-optimal lower bound cannot exceed the certified upper bound P
    tl = bm.TruncatedLaplace(epsilon=eps, delta=delta).expected_loss(loss)
    ag = bm.AnalyticGaussian(epsilon=eps, delta=delta).expected_loss(loss)
    nolb = bm.near_optimal_lower_bound(epsilon=eps, delta=delta, loss=loss)
    assert cell["lower"] <= tl * (1 + 1e-9) and cell["lower"] <= ag * (1 + 1e-9)
    assert nolb <= cell["upper"] * (1 + 1e-9)
    assert math.isclose(cell["benchmarks"]["truncated_laplace"], tl, rel_tol=1e-9)
    prov = cell["provenance"]
    for key in ("dpdro_version", "git_commit", "date_utc", "machine", "python", "highspy"):
        assert prov[key]
    assert cell["seconds"] > 0


def test_every_cell_stored_with_the_engines_default_call():
    """All 200 cells (10 ε × 10 δ × ℓ1, ℓ2) are stored, each from the engine's default call at the
    tables' 0.1% target and 120 s (repro.tables). Every cell reaches 0.1% since the six ℓ2 cells at
    ε = 5, δ ≥ 0.1 were regenerated with the capped upper-bound grid (dpdro._schedule._upper_grid;
    before, 197 did and the widest stopped at 0.25%); a regeneration that does worse fails here."""
    from repro import tables

    cells = {(c["loss"], c["epsilon"], c["delta"]): c for c in _cells()}
    assert set(cells) == {(l, e, d) for l in ("l1", "l2") for e in EPS for d in DELTAS}
    assert all(c["rel_gap_target"] == tables.REL_GAP and c["time_limit"] == tables.TIME_LIMIT for c in cells.values())
    gaps = np.array([c["gap"] for c in cells.values()])
    assert all(c["reached_target"] for c in cells.values())
    assert gaps.max() <= tables.REL_GAP


def test_lower_bounds_below_atom_plus_staircase():
    """An atom of mass δ at 0 plus (1 − δ) times the staircase (optimal ε-DP noise) is (ε, δ)-DP with
    E|X| = (1 − δ)·Δ e^{ε/2}/(e^ε − 1): no valid lower bound may exceed it (tight at ε = 5, δ ≥ 0.5)."""
    for c in _cells():
        if c["loss"] == "l1":
            assert c["lower"] <= (1 - c["delta"]) * bm.Staircase(epsilon=c["epsilon"]).expected_loss("l1")


def test_example1_stored():
    path = TABLES / "example1_optimal.json"
    if not path.exists():
        pytest.skip("example 1 result not stored (run scripts/run_tables.py)")
    ex = json.loads(path.read_text())
    noise = dpdro.PiecewiseUniform.from_json(json.dumps(ex["noise"]))
    assert ex["lower"] <= ex["upper"] and ex["gap"] <= ex["rel_gap_target"]
    assert dpdro.certify_delta(noise, ex["epsilon"], ex["sensitivity"]) <= ex["delta"]
    assert math.isclose(noise.expected_loss("l2"), ex["upper"], rel_tol=1e-6)
    # the optimum cannot beat the truncated Laplace mechanism's loss by construction of D
    tl = bm.TruncatedLaplace(epsilon=ex["epsilon"], delta=ex["delta"]).expected_loss("l2")
    assert ex["lower"] <= tl
