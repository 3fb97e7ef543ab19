"""Tables 2 and 3: the (OPT)-only recomputation of a stored run, and the match tolerance."""

from __future__ import annotations

import io

import numpy as np
import pytest

from repro import experiments as ex
from repro import ml_tables, sweep
from repro.provenance import read_json, write_json_atomic


def test_dd_only_recomputes_the_opt_column_with_the_same_seeds(tmp_path):
    opts = {"datasets": "post-operative", "splits": 2, "sims": 3, "chunk": 1}
    quiet = dict(jobs=1, progress=False, out=io.StringIO())
    sweep.run_families(["table2"], root=tmp_path, options=opts, **quiet)
    path = ml_tables.result_path(2, "paper", 2, 3, tmp_path)
    full = read_json(path)
    # a stored run whose (OPT) column came from another mechanism
    stale = read_json(path)
    row = stale["datasets"]["post-operative"]
    for side in ("in", "out"):
        row["per_split"][side]["(OPT)"] = [0.5, 0.5]
    write_json_atomic(path, stale)

    dd = {**opts, "dd_only": True}
    tasks = ml_tables.FAMILY_TABLE2.tasks(tmp_path, "paper", dd)
    assert [t.id for t in tasks] == [
        "paper_2x3/post-operative/dd_only/splits=000-000",
        "paper_2x3/post-operative/dd_only/splits=001-001",
    ]
    report = sweep.run_families(["table2"], root=tmp_path, options=dd, **quiet)
    assert len(report.computed) == 2 and report.merged == [path]
    assert set(sweep.load_result(tasks[0])["per_split"]["in"]) == {"(OPT)"}
    got = read_json(path)
    new, old = got["datasets"]["post-operative"], full["datasets"]["post-operative"]
    assert new["per_split"] == old["per_split"]  # (OPT) as in the full run, the rest untouched
    assert new["summary"] == old["summary"] and new["seconds"] == old["seconds"]
    assert new["seconds_dd"] > 0 and new["dd_added"]["delta"] == ml_tables.DELTA
    assert all(d <= ml_tables.DELTA for d in new["dd_added"]["certified_delta"].values())
    assert got["provenance"]["original_run"]["date_utc"] == full["provenance"]["date_utc"]


def test_dd_only_needs_a_stored_run(tmp_path):
    opts = {"datasets": "post-operative", "splits": 1, "sims": 2, "dd_only": True}
    with pytest.raises(ValueError, match="stored run"):
        sweep.run_families(
            ["table2"], root=tmp_path, options=opts, jobs=1, progress=False, out=io.StringIO()
        )


def test_imp_tolerance_is_relative_to_the_paper():
    assert ex.ml_tolerance("GN", 38.5) == 0.5
    assert ex.ml_tolerance("Imp", 19.28) == pytest.approx(1.928)
    assert ex.ml_tolerance("Imp", 2.0) == 0.5  # never tighter than an error's
    assert abs(15.93 - 19.28) > ex.ml_tolerance("Imp", 19.28)  # contraceptive: not a match
    assert np.isclose(ex.ml_tolerance("Imp", -40.0), 4.0)


def test_layout_comparison_reuses_table2_seeds_and_its_ends_column_is_table2s(tmp_path):
    """nb_layout_comparison's OPT and (OPT) "ends" columns are, split for split, those of the
    stored Table 2 runs at the same scale (same seeds, same mechanisms); the "centre" column is
    another mechanism (the GitHub appendix's layout) drawn from the same uniforms."""
    data = ml_tables.nb_layout_comparison(["post-operative"], splits=4, sims=40, root=tmp_path)
    results, scale = data["results"], (4, 40)
    assert ml_tables.layout_path(4, 40, tmp_path).is_file()
    for variant in ("paper", "authors"):
        stored = ex.stored_results(2, variant, splits=4, sims=40)["datasets"]["post-operative"]
        ours = results[variant]["post-operative"]
        for side in ("in", "out"):
            s, o = stored["per_split"][side], ours[side]
            assert o["OPT"] == s["OPT"] and o["(OPT) ends"] == s["(OPT)"], (variant, side)
            assert len(o["(OPT) centre"]) == scale[0]
    assert results["paper"]["post-operative"]["in"]["(OPT) centre"] != (
        results["paper"]["post-operative"]["in"]["(OPT) ends"]
    )
    solves = data["provenance"]["data_dependent_solves"]
    assert any(k.endswith("_centre") for k in solves)
    assert all(v["recertified_delta"] <= ml_tables.DELTA for v in solves.values())


def test_budget_per_coordinate_calibrates_every_noise_to_eps_over_d(tmp_path):
    """pcd_budget_per_coordinate: with d design columns every DP mechanism is calibrated to
    (1/d, 0.1/d) (OPT certified for it), the non-private PCD is that of Table 3's run with the
    same seeds, and the stored run's rows are the summaries of its per-split errors."""
    from repro.datasets import load_dataset, one_hot

    data = ml_tables.pcd_budget_per_coordinate(["ecoli"], splits=1, sims=2, root=tmp_path)
    assert ml_tables.budget_path(1, 2, tmp_path).is_file()
    row = data["datasets"]["ecoli"]
    d = one_hot(load_dataset("ecoli")).X.shape[1]
    assert row["d"] == d and np.isclose(row["epsilon"], 1 / d) and np.isclose(row["delta"], 0.1 / d)
    assert row["opt_noise"]["certified_delta"] <= 0.1 / d
    # the noise-free column does not depend on the budget: Table 3's seeds give Table 3's PCD
    ref = ex.run_pcd(load_dataset("ecoli"), {}, n_splits=1, n_sims=2)
    assert row["per_split"]["in"]["PCD"] == ref["in"]["PCD"].tolist()
    # about d times more noise than at (1, 0.1): the errors of GN grow
    assert row["summary"]["in"]["errors"]["GN"] >= row["summary"]["in"]["errors"]["PCD"]
    stored, (k, m) = ml_tables.stored_budget_per_coordinate()
    assert (k, m) == (20, 200) and "ecoli" in stored
    for b in stored.values():
        per = {s: {c: np.asarray(v) for c, v in b["per_split"][s].items()} for s in b["per_split"]}
        ref = ex.summarize(per, baseline="PCD")
        for side in ("in", "out"):
            assert b["summary"][side]["errors"] == ref[side]["errors"]
            assert b["summary"][side]["best_literature"] == ref[side]["best_literature"]
            # OPT and TLN tie split for split at (1/d, 0.1/d): their t statistic is not a number
            for key in ("imp", "t", "p"):
                got, want = b["summary"][side][key], ref[side][key]
                assert (got is None and not np.isfinite(want)) or np.isclose(
                    got, want, equal_nan=True
                )
        assert b["opt_noise"]["certified_delta"] <= b["delta"] + 1e-15
