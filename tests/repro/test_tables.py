"""The arithmetic of Table 1 and Tables 4-6 (repro.tables, chapter 22_tables)."""

import numpy as np
import pytest

from repro import tables
from repro.literature import literature_values


def test_entries_follow_the_paper_formulas():
    o = np.array([0.5, 2.0])
    assert tables.sub_upper(np.array([0.6, 2.2]), o) == pytest.approx([10.0, 10.0])  # max{O, 1} in the denominator
    assert tables.sub_lower(np.array([0.4, 1.8]), o) == pytest.approx([10.0, 10.0])
    assert tables.sub_total(np.array([0.6, 2.2]), np.array([0.4, 1.8]), o) == pytest.approx([20.0, 20.0])
    # Table 1 is the sum of Tables 4 and 5
    bub, blb = np.array([0.7, 3.1]), np.array([0.2, 1.1])
    assert np.allclose(tables.sub_total(bub, blb, o), tables.sub_upper(bub, o) + tables.sub_lower(blb, o))


def test_paper_optimum_inverts_table4():
    for o in (0.3, 0.999, 1.0, 2.5):
        tl = o * 1.4 + 0.01
        t4 = tables.sub_upper(np.array([tl]), np.array([o]))
        assert tables.paper_optimum(np.array([tl]), t4)[0] == pytest.approx(o, rel=1e-12)


def test_tolerance():
    upper, lower = np.array([1.01, 0.51]), np.array([0.99, 0.49])
    tol = tables.tolerance(lambda x: tables.sub_upper(np.array([1.5, 0.8]), x), upper, lower)
    # O = (1, 0.5) moves by (P − D)/2 + 0.5% O = (0.015, 0.0125); the entry moves by at most that, in percent
    assert np.all(tol >= 0.005) and tol[1] == pytest.approx(100 * 0.0125 + 0.005)
    # a constant entry only gets the printed precision
    assert np.allclose(tables.tolerance(lambda x: 0 * x + 3.0, upper, lower), 0.005)


def test_agreement():
    ours = np.array([1.0, 2.0, np.nan])
    n, ok, worst = tables.agreement(ours, np.array([1.1, 3.0, 5.0]), np.array([0.2, 0.2, 0.2]))
    assert (n, ok) == (2, 1) and worst == pytest.approx(1.0)


@pytest.fixture(scope="module")
def cells():
    c = tables.load_cells()
    if not c:
        pytest.skip("no stored table cells (run scripts/run_tables.py)")
    return c


def test_grids_and_entries_from_the_stored_cells(cells):
    up, lo = tables.cell_grid(cells, "l1", "upper"), tables.cell_grid(cells, "l1", "lower")
    assert up.shape == (10, 10) and np.all(lo[np.isfinite(lo)] <= up[np.isfinite(up)])
    e, d = 1.0, 0.2
    i, j = tables.EPSILONS.index(e), tables.DELTAS.index(d)
    assert up[i, j] == cells[("l1", e, d)]["upper"]
    bench = tables.benchmark_grids("l1")
    assert bench["TL"][i, j] == pytest.approx(cells[("l1", e, d)]["benchmarks"]["truncated_laplace"], rel=1e-12)
    ent = tables.table_entries(up, lo, bench)
    o = (up + lo) / 2
    assert ent["t4"][i, j] == tables.sub_upper(min(bench["TL"][i, j], bench["AG"][i, j]), o[i, j])
    assert np.allclose(ent["t1"], ent["t4"] + ent["t5"], equal_nan=True)
    assert np.all(ent["tol4"][np.isfinite(o)] >= 0.005)


def test_cell_benchmarks_are_the_stored_literature_values(cells):
    for key in (("l1", 1.0, 0.2), ("l2", 0.1, 0.05), ("l1", 5.0, 0.75)):
        c = cells[key]
        live = tables.cell_benchmarks(c["epsilon"], c["delta"], c["loss"])
        assert set(live) == set(c["benchmarks"])
        for k, v in live.items():
            assert v == pytest.approx(c["benchmarks"][k], rel=1e-12), (key, k)
    values = literature_values(1.0, 0.2, 1.0, "l1")
    assert tables.cell_benchmarks(1.0, 0.2, "l1")["nolb_up"] == values["near_optimal_lb_up"]
