"""The sweep runner (repro.sweep) on the real engines: joblib (loky processes) and a Dask LocalCluster of
processes give identical result files; a run killed partway (SIGKILL) and resumed gives the same files
as an uninterrupted one; failures are reported per task; the families list stable tasks.

The sweeps are small instances of real families: eight Table 1 cells (ε ∈ {0.5, 1}, δ ∈ {0.2, 0.3}, ℓ1
and ℓ2) at a 5% target gap and chapter 41's ℓ1/ℓ2 curves at two δ and a 10% gap (a fraction of a second
per task), and Table 2 on the smallest dataset. Results are written to temporary folders, never results/.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from repro import ml_tables, optimal_vs_delta, sweep, tables
from repro.datasets import load_dataset
from repro.experiments import run_naive_bayes
from repro.paths import RESULTS, SCRIPTS
from repro.provenance import read_json

CELL_OPTIONS = {"eps": "0.5,1", "deltas": "0.2,0.3", "rel_gap": 0.05, "no_example1": True}
N_TASKS = 8 + 4
OVD_OPTIONS = {"rel_gap": 0.1}


def cell_tasks(root: Path) -> list:
    return tables.FAMILY.tasks(root, "paper", CELL_OPTIONS)


def ovd_tasks(root: Path) -> list:
    return optimal_vs_delta.FAMILY.tasks(root, "ci", OVD_OPTIONS)


def contents(root: Path) -> dict:
    """Every JSON file under ``root`` (logs aside), without provenance and timings."""
    return {p.relative_to(root).as_posix(): sweep.strip_volatile(read_json(p))
            for p in sorted(root.rglob("*.json"))}


def run_small(root: Path, **engine) -> sweep.Report:
    report = sweep.run(cell_tasks(root) + ovd_tasks(root), progress=False, log=root / "run.log", **engine)
    sweep.merge(optimal_vs_delta.FAMILY, root, ovd_tasks(root), "ci", OVD_OPTIONS, say=lambda m: None)
    return report


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The small sweep on joblib with two loky processes."""
    root = tmp_path_factory.mktemp("joblib")
    report = run_small(root, jobs=2)
    assert report.ok and len(report.computed) == N_TASKS and not report.skipped
    return root


def test_joblib_results_are_complete_certified_and_carry_the_task(reference):
    for task in cell_tasks(reference):
        cell = sweep.load_result(task)
        assert cell is not None and cell["task"]["params"] == task.params
        assert cell["reached_target"] and cell["certified_delta"] <= cell["delta"]
        noise = tables.dpdro.PiecewiseUniform.from_dict(cell["noise"])  # the released noise, re-certified
        assert tables.dpdro.certify_delta(noise, cell["epsilon"], 1.0) <= cell["delta"]
        assert cell["provenance"]["seconds"] > 0 and cell["provenance"]["max_rss_mb"] > 0
    merged = read_json(reference / optimal_vs_delta.OUT.relative_to(RESULTS))
    assert [(r["loss"], r["delta"]) for r in merged["rows"]] == [(t.params["loss"], t.params["delta"])
                                                                   for t in ovd_tasks(reference)]
    assert all(r["status"] == "ok" and "noise" not in r for r in merged["rows"])
    assert "ok     tables/l1_eps=1_delta=0.2" in (reference / "run.log").read_text()


def test_dask_local_cluster_gives_identical_files_and_reports_failures(reference, tmp_path):
    from dask.distributed import LocalCluster

    good = cell_tasks(tmp_path)
    bad = tables.FAMILY.task("bad", dict(good[0].params, delta=1.5), tmp_path / "bad.json")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        report = sweep.run(good + [bad] + ovd_tasks(tmp_path), scheduler=cluster.scheduler_address, progress=False)
    sweep.merge(optimal_vs_delta.FAMILY, tmp_path, ovd_tasks(tmp_path), "ci", OVD_OPTIONS, say=lambda m: None)
    # the failing task is reported with a one-line error; the others are all written
    (task, err), = report.failed
    assert task.id == "bad" and err.startswith("ValueError") and "delta" in err and "\n" not in err
    assert len(report.computed) == N_TASKS and not report.not_run and not bad.path.exists()
    ours, theirs = contents(tmp_path), contents(reference)
    assert sorted(ours) == sorted(theirs) and len(ours) == N_TASKS + 1
    assert ours == theirs
    # the workers were Dask's, not this process
    pids = {read_json(t.path)["provenance"]["worker_pid"] for t in good}
    assert os.getpid() not in pids


def test_killed_run_resumes_to_the_same_files(reference, tmp_path):
    cmd = [sys.executable, str(SCRIPTS / "sweep.py"), "tables", "--eps", "0.5,1", "--deltas", "0.2,0.3",
           "--rel-gap", "0.05", "--no-example1", "--root", str(tmp_path), "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    cells = tmp_path / "tables" / "cells"
    deadline = time.monotonic() + 120
    try:
        while not list(cells.glob("*.json")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run, its loky workers with it
        proc.wait()
    tasks = cell_tasks(tmp_path)
    done = [t for t in tasks if sweep.is_done(t)]
    assert 1 <= len(done) < len(tasks), "the kill should land after the first task and before the last"
    assert all(json.loads(p.read_text()) for p in cells.glob("*.json"))  # no truncated file
    report = sweep.run(tasks, jobs=2, progress=False)
    assert report.ok and {t.id for t in report.skipped} == {t.id for t in done}
    assert len(report.computed) == len(tasks) - len(done)
    ref = contents(reference)
    assert contents(tmp_path) == {k: v for k, v in ref.items() if k.startswith("tables/")}


def flaky(params: dict) -> dict:
    """A task that fails on its first attempt (when ``params['marker']`` does not exist yet)."""
    marker = Path(params["marker"])
    if params["x"] == 2 and not marker.exists():
        marker.write_text("tried")
        raise RuntimeError("first attempt\nfails")
    return {"square": params["x"] ** 2}


def test_failed_task_is_reported_and_retried_on_resume(tmp_path):
    fam = sweep.Family(name="flaky", title="test", list_tasks=None, compute=flaky)
    tasks = [fam.task(f"x={x}", {"x": x, "marker": str(tmp_path / "marker")}, tmp_path / f"x={x}.json")
             for x in range(4)]
    first = sweep.run(tasks, jobs=1, progress=False, log=tmp_path / "log", registry={"flaky": fam})
    assert [t.id for t, _ in first.failed] == ["x=2"] and len(first.computed) == 3 and not first.ok
    assert first.failed[0][1] == "RuntimeError: first attempt fails"  # one line
    log = (tmp_path / "log").read_text()
    assert "FAILED flaky/x=2: RuntimeError" in log and "Traceback" in log and 'raise RuntimeError' in log
    second = sweep.run(tasks, jobs=1, progress=False, registry={"flaky": fam})
    assert second.ok and [t.id for t in second.computed] == ["x=2"] and len(second.skipped) == 3
    assert [read_json(t.path)["square"] for t in tasks] == [0, 1, 4, 9]


def test_command_line_dry_run_failures_and_exit_status(tmp_path, capsys):
    args = ["tables", "--scale", "ci", "--root", str(tmp_path), "--losses", "l1", "--no-example1"]
    assert sweep.main([*args, "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.count("would run  tables/l1_eps=") == 2 and "2 tasks: 0 done, 2 to run" in err
    assert not tmp_path.exists() or not list(tmp_path.rglob("*.json"))
    assert sweep.main([*args, "--time-limit", "-1", "--jobs", "1", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "2 failed" in err and "failed: tables/l1_eps=1_delta=0.2: ValueError: time_limit" in err
    with pytest.raises(SystemExit):
        sweep.main(["tables", "--splits", "3"])  # an option of another family
    assert "--splits applies to table2, table3" in capsys.readouterr().err


def test_table2_chunks_concatenate_to_one_run_and_merge_only_complete_datasets(tmp_path):
    opts = {"datasets": "post-operative", "splits": 2, "sims": 3, "chunk": 1}
    tasks = ml_tables.FAMILY_TABLE2.tasks(tmp_path, "paper", opts)
    assert [t.id for t in tasks] == ["paper_2x3/post-operative/splits=000-000", "paper_2x3/post-operative/splits=001-001"]
    report = sweep.run_families(["table2"], root=tmp_path, options=opts, only=["table2/*splits=000-000"], jobs=1,
                                progress=False)
    assert len(report.computed) == 1 and not report.merged  # one chunk of two: nothing to merge yet
    report = sweep.run_families(["table2"], root=tmp_path, options=opts, jobs=1, progress=False)
    assert len(report.skipped) == 1 and len(report.computed) == 1
    path = ml_tables.result_path(2, "paper", 2, 3, tmp_path)
    assert report.merged == [path]
    row = read_json(path)["datasets"]["post-operative"]
    mechs, _, _ = ml_tables.mechanisms(2)
    whole = run_naive_bayes(load_dataset("post-operative"), mechs, n_splits=2, n_sims=3, seed=0)
    for side in ("in", "out"):
        assert set(row["per_split"][side]) == set(whole[side])
        for m, v in whole[side].items():
            np.testing.assert_array_equal(row["per_split"][side][m], v)
    assert row["chunks"] == 2 and row["summary"]["in"]["errors"].keys() == whole["in"].keys()


@pytest.mark.parametrize("scale", sweep.SCALES)
def test_every_family_lists_stable_unique_tasks(scale, tmp_path):
    for name in sweep.FAMILIES:
        fam = sweep.family(name)
        tasks = fam.tasks(tmp_path, scale)
        assert tasks and tasks == fam.tasks(tmp_path, scale), name
        assert len({t.id for t in tasks}) == len(tasks) and len({t.path for t in tasks}) == len(tasks), name
        assert all(t.family == name and tmp_path in t.path.parents for t in tasks), name
        assert all(json.loads(json.dumps(t.params)) == t.params for t in tasks), name
    assert len(tables.FAMILY.tasks(tmp_path, "paper")) == 201  # Example 1 and 200 cells


def test_a_stored_result_for_other_parameters_is_not_done(reference):
    task = cell_tasks(reference)[0]
    assert sweep.is_done(task)
    other = tables.FAMILY.task(task.id, dict(task.params, rel_gap=0.01), task.path)
    assert not sweep.is_done(other)
    assert not sweep.is_done(sweep.Task(task.family, task.id, task.params, task.path, version=task.version + 1))


def test_table_tasks_call_the_engine_with_its_defaults():
    """Every cell is the default call of the engine: a gap target and a time limit, nothing else."""
    tasks = tables.FAMILY.list_tasks(RESULTS, "paper", dict(losses=None, eps=None, deltas=None, rel_gap=None,
                                                             time_limit=None, no_example1=True))
    assert len(tasks) == 200
    assert all(set(t.params) == {"kind", "loss", "epsilon", "delta", "rel_gap", "time_limit"} for t in tasks)
    assert {(t.params["rel_gap"], t.params["time_limit"]) for t in tasks} == {(tables.REL_GAP, tables.TIME_LIMIT)}


def keys(data, path=""):
    """The key paths of a JSON document (lists through their first element), provenance aside."""
    if isinstance(data, dict):
        return {k for key, v in data.items() if key not in ("provenance", "provenance_lower", "meta")
                for k in {f"{path}/{key}"} | keys(v, f"{path}/{key}")}
    if isinstance(data, list) and data:
        return keys(data[0], path + "[]")
    return set()


def test_merged_files_have_the_stored_format(reference, tmp_path):
    """The chapters read the merged files as they read the stored ones: the same keys."""
    stored = read_json(optimal_vs_delta.OUT)
    assert keys(read_json(reference / optimal_vs_delta.OUT.relative_to(RESULTS))) == keys(stored)
    from repro import appendix

    report = sweep.run_families(["figure4"], root=tmp_path, scale="ci", options={"panels": "5:0.5"}, jobs=1,
                                progress=False)
    assert report.ok and report.merged == [tmp_path / appendix.FIGURE4.relative_to(RESULTS)]
    assert keys(read_json(report.merged[0])) == keys(read_json(appendix.FIGURE4))
