"""The full-reproduction page's cost tables (repro.costs) come from the stored provenance."""

from __future__ import annotations

import functools
import json
import re

import pytest

from repro import costs, sweep
from repro.paths import RESULTS, ROOT
from repro.provenance import read_json


@functools.cache
def stored_costs() -> str:
    """The cost page of this repository (costs.costs_markdown()), built once per process: a string
    read from the stored results, which no test changes."""
    return costs.costs_markdown()


@functools.cache
def stored_gpu_costs() -> tuple:
    """costs.gpu_costs_markdown() of this repository (its lines), built once per process like
    stored_costs."""
    return tuple(costs.gpu_costs_markdown())


def test_recorded_seconds_prefers_the_provenance_total():
    assert costs.recorded_seconds({"provenance": {"total_seconds": 7.5, "seconds": 1.0}}) == 7.5
    assert costs.recorded_seconds({"meta": {"seconds": 2.0}, "rows": [{"seconds": 9.0}]}) == 2.0


def test_recorded_seconds_adds_the_solves_but_not_settings_or_the_paper():
    data = {
        "cap_seconds": 800.0,
        "time_limit_seconds": 60.0,
        "paper": {"max seconds": 5.8, "seconds": 3.0},
        "panels": [
            {"seconds": 1.5, "lower_seconds": 0.5, "main": {"seconds": 2.0}},
            {"seconds": 1.0},
        ],
    }
    assert costs.recorded_seconds(data) == pytest.approx(5.0)


def test_family_costs_add_up_the_per_task_provenance():
    rows = {r["family"]: r for r in costs.family_costs()}
    assert list(rows) == list(sweep.FAMILIES)
    fam = sweep.family("table3")
    stored = [r for t in fam.tasks(RESULTS, "paper", {}) if (r := sweep.load_result(t))]
    assert rows["table3"]["stored"] == len(stored)
    assert rows["table3"]["seconds"] == pytest.approx(
        sum(r["provenance"]["seconds"] for r in stored)
    )
    assert rows["table3"]["largest"][0] == max(r["provenance"]["seconds"] for r in stored)


def _task_files(table: int, name: str) -> list[dict]:
    folder = RESULTS / "sweep" / f"table{table}" / "paper_100x1000" / name
    return [read_json(p) for p in sorted(folder.glob("*.json"))]


def test_ml_costs_sum_the_per_task_files_else_the_stored_seconds():
    for table in (2, 3):
        data = read_json(RESULTS / "ml" / f"table{table}_paper_100x1000.json")["datasets"]
        rows = costs.ml_costs(table)
        assert {r["dataset"] for r in rows} == set(data)
        for r in rows:
            row, files = data[r["dataset"]], _task_files(table, r["dataset"])
            task = sum(f["provenance"]["seconds"] for f in files) if files else row["seconds"]
            assert r["chunks"] == len(files)
            assert r["seconds"] == pytest.approx(task + (row.get("seconds_dd") or 0.0))


def test_the_per_dataset_costs_add_up_to_the_family_row():
    """The family table sums the per-task files; the per-dataset table adds the datasets computed
    as one task (no per-task file) and leaves out the splits of a run not at the paper's scale."""
    fams = {r["family"]: r for r in costs.family_costs()}
    for table in (2, 3):
        data = read_json(RESULTS / "ml" / f"table{table}_paper_100x1000.json")["datasets"]
        rows = costs.ml_costs(table)
        in_files = sum(
            r["seconds"] - (data[r["dataset"]].get("seconds_dd") or 0.0)
            for r in rows
            if r["chunks"]
        )
        running = sum(
            f["provenance"]["seconds"]
            for name in costs.ml_progress(table)
            if name not in data
            for f in _task_files(table, name)
        )
        assert fams[f"table{table}"]["seconds"] == pytest.approx(in_files + running)


def test_the_page_includes_the_generated_tables_and_types_no_costs():
    page = (ROOT / "book" / "full_reproduction.md").read_text(encoding="utf-8")
    section = page[page.index("## What a run costs") : page.index("## What a sweep does")]
    for name in ("costs_timed", "costs_gpu", "costs_computers", "costs", "costs_slower"):
        assert f"_generated/{name}.md" in section
    # the per-computer costs are folded; the reference times lead
    folded = section[section.index("{dropdown}"):]
    assert "_generated/costs.md" in folded and "_generated/costs_timed.md" not in folded
    assert not re.search(r"\d\s*(h|min|s|MB|CPU-hours?)\b", section), "a typed cost"
    md = stored_costs()
    assert md.count("\n| `") == len(sweep.FAMILIES)


def test_ml_progress_adds_up_the_chunks_of_a_run_in_progress(tmp_path):
    folder = tmp_path / "sweep" / "table3" / "paper_100x1000"
    for name, chunks in {
        "adult": [(1, 40.0), (1, 44.0)],
        "ecoli": [(10, 5.0)],
    }.items():
        (folder / name).mkdir(parents=True)
        for k, (n_splits, seconds) in enumerate(chunks):
            (folder / name / f"splits={k:03d}.json").write_text(
                json.dumps(
                    dict(
                        n_splits=n_splits,
                        seconds=seconds,
                    )
                ),
                encoding="utf-8",
            )
    (folder / "empty").mkdir()
    assert costs.ml_progress(3, tmp_path) == {
        "adult": dict(splits=2, seconds=84.0),
        "ecoli": dict(splits=10, seconds=5.0),
    }
    assert costs.ml_progress(2, tmp_path) == {}


def test_the_cost_page_names_every_run_not_at_the_paper_scale():
    done = {(t, r["dataset"]) for t in (2, 3) for r in costs.ml_costs(t)}
    md = stored_costs()
    for table in (2, 3):
        for name, p in costs.ml_progress(table).items():
            if (table, name) not in done:
                assert f"{name}, {p['splits']} of 100 splits stored" in md


def test_hours_are_stated_to_one_decimal():
    assert costs.hms(None) == "—" and costs.hms(12.34) == "12.3 s" and costs.hms(270) == "4.5 min"
    assert costs.hms_cell(270) == "4.5\u00a0min" and costs.hms_cell(None) == "—"
    assert [costs.hms(h * 3600) for h in (1, 2.26, 9.96, 71.42, 283.4)] == [
        "1.0 h", "2.3 h", "10.0 h", "71.4 h", "283.4 h"]
    assert costs.hms(11.8 * 3600) == "11.8 h"  # not "12 h" beside "8.7 h"


def _write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _split_file(backend, device, n_splits, seconds):
    impl = {"backend": backend} if device is None else {"backend": backend, "device": device}
    return dict(n_splits=n_splits, coordinate_descent=impl, provenance=dict(seconds=seconds))


def test_ml_split_costs_group_the_tasks_by_implementation(tmp_path):
    folder = tmp_path / "sweep" / "table3" / "paper_100x1000"
    files = {
        "adult": [("cupy", "GPU X", 1, 30.0), ("numba", None, 1, 2000.0)]
        + [("cupy", "GPU X", 1, s) for s in (20.0, 25.0)],
        "ecoli": [("numba", None, 2, 4.0), ("numba", None, 1, 3.0)],
    }
    for name, rows in files.items():
        for k, row in enumerate(rows):
            _write(folder / name / f"splits={k:03d}.json", _split_file(*row))
    assert costs.ml_split_costs(3, tmp_path) == {
        "adult": [
            dict(backend="cupy", device="GPU X", splits=3, seconds=75.0, per_split=25.0),
            dict(backend="numba", device=None, splits=1, seconds=2000.0, per_split=2000.0),
        ],
        "ecoli": [dict(backend="numba", device=None, splits=3, seconds=7.0, per_split=2.5)],
    }
    assert costs.gpu_split_costs(tmp_path) is None
    assert costs.gpu_costs_markdown(tmp_path) == []


def test_the_gpu_table_comes_from_the_benchmark_alone():
    """Every number of the page's GPU section: the benchmark's seconds per split, by number of
    rows, and the kernel ratio of one call on one computer; no CPU time of another computer is
    set beside the GPU's (the table has the GPU column only)."""
    bench = read_json(RESULTS / "benchmarks" / "pcd_gpu.json")
    g = costs.gpu_split_costs()
    assert g["device"] == bench["device"]["device"]
    assert {r["dataset"]: r["gpu"] for r in g["rows"]} == bench["per_split_seconds"]
    md = "\n".join(stored_gpu_costs())
    # the GPU named by its short label, the computer of the hardware sentence that holds it
    assert bench["device"]["device"] in g["computer"]
    assert f"one process alone on the GPU of the {costs.short_computer(g['computer'])}," in md
    assert "| dataset | *n* | *d* | GPU |" in md and "CPU kernel |" not in md
    assert "faster per split" not in md and "slower than" not in md
    assert not md.lstrip().startswith("Table 3 on a GPU")  # the section's heading says it
    assert costs.short_computer(g["computer"]) in costs.computers_defined()
    # n and d are the stored Table 3's, each row as the benchmark and the table record it
    table = read_json(RESULTS / "ml" / "table3_paper_100x1000.json")["datasets"]
    for r in g["rows"]:
        n, d = table[r["dataset"]]["n"], table[r["dataset"]]["d"]
        assert (r["n"], r["d"]) == (n, d)
        assert f"| {r['dataset']} | {n:,} | {d:,} | {costs.hms_cell(r['gpu'])} |" in md
    shown = [line.split(" | ")[0][2:] for line in md.splitlines() if line.startswith("| ")][2:]
    assert shown == [r["dataset"] for r in sorted(g["rows"], key=lambda r: r["d"])]
    assert "(by *d*, smallest first)" in md
    assert costs.gpu_order_sentence(g["rows"]) in md
    kernel = bench["adult_gn_T5_seconds"]
    gpu, cpu = f"{kernel['cupy']:.3g}", f"{kernel['numba']:.3g}"
    # the ratio is the one the printed digits give
    assert (f"its GPU took {gpu} s and one CPU thread {cpu} s, "
            f"{float(cpu) / float(gpu):.0f} times faster; that ratio is one call") in md


def test_the_gpu_section_names_where_every_stored_split_ran():
    """The GPU section says, from the task files, on which computer and on its GPU or CPU
    (``coordinate_descent.backend``) every stored split of Table 3 ran, and calls none of them
    CPU times; only those of the benchmark's computer are said to be comparable."""
    folder = RESULTS / "sweep" / "table3" / "paper_100x1000"
    where = costs.stored_devices(3)
    for column, pattern in (("other columns", "*/*.json"), ("(OPT)", "*/dd_only/*.json")):
        files = [read_json(f) for f in sorted(folder.glob(pattern))]
        # every split counted once, on the GPU exactly where the file's kernel is CuPy's
        assert sum(g["splits"] for g in where[column]) == sum(f["n_splits"] for f in files)
        assert sum(g["splits"] for g in where[column] if g["gpu"]) == sum(
            f["n_splits"] for f in files
            if (f.get("coordinate_descent") or {}).get("backend") == "cupy")
    g = costs.gpu_split_costs()
    md = "\n".join(stored_gpu_costs())
    assert "CPU times" not in md and costs.stored_devices_sentence(g["computer"]) in md
    for groups in where.values():
        for r in groups:
            host = costs.short_computer(r["computer"])
            assert (f"on the GPU of the {host}" if r["gpu"] else f"on the {host} (no GPU)") in md
            same, apart = (md.split("Of these, ")[1].split(" cannot be set against")[0]
                           .split(";"))
            assert (f"the {host}" in apart) == (r["computer"] != g["computer"])
            assert (f"the {host}" in same) == (r["computer"] == g["computer"])


def test_computer_names_cores_and_the_gpu_of_the_same_platform():
    gpu = {"provenance": {"cpu_count": 16, "platform": "p-gpu"},
           "coordinate_descent": {"device": "GPU X"}}
    assert costs.computer(gpu) == "16-core CPU with one GPU X GPU"
    # a naive Bayes task on the same computer records no GPU itself
    nb = {"provenance": {"cpu_count": 16, "platform": "p-gpu"}}
    assert costs.computer(nb, {"p-gpu": "GPU X"}) == "16-core CPU with one GPU X GPU"
    assert costs.computer({"provenance": {"cpu_count": 2, "platform": "q"}}, {"p-gpu": "GPU X"}) \
        == "2-core CPU"
    assert costs.computer({"coordinate_descent": {"device": "GPU X"}}) == "GPU X GPU"
    assert costs.computer({"provenance": {"cpu_count": None}}) == costs.NOT_RECORDED
    assert costs.computer({}) == costs.NOT_RECORDED
    # the older record names its cores in words
    older = {"provenance": {"machine": "vm (x86_64, 2 cpus, shared)"}}
    assert costs.computer(older) == "2-core CPU"
    assert costs.computer({"provenance": {"machine": "x86_64"}}) == costs.NOT_RECORDED


def test_a_benchmark_is_timed_by_the_runs_it_lists():
    """A benchmark records the runs it times, not its own time: the top-level lists' runs and
    the ``*_seconds`` dicts count, nested timings (a run's history) and settings do not."""
    data = {
        "provenance": {"seconds_note": 1.0},
        "time_limit": 300.0,
        "results": [{"seconds": 2.0, "reached": {"0.1": {"seconds": 1.0}}}, {"seconds": 3.0}],
        "per_split_seconds": {"a": 0.5, "b": 1.5},
        "targets": [0.1, 0.05],
    }
    assert costs.measured_seconds(data) == 7.0
    assert costs.result_seconds(data) == 7.0
    assert costs.measured_seconds({"time_limit": 1.0, "rows": [{"gap": 0.1}]}) is None
    assert costs.result_seconds({"provenance": {"seconds": 4.0}, "runs": [{"seconds": 9.0}]}) == 4.0


def test_a_dataset_on_two_computers_gets_one_line_per_computer():
    """No cell joins two computers' times: a dataset of Tables 2 and 3 whose other columns ran on
    two computers has a line per computer in its time and computer cells, in the same order,
    each with its time and its splits."""
    md = stored_costs()
    assert " + " not in md
    for table in (2, 3):
        for d in costs.ml_costs_by_computer(table):
            if len(d["where"]) > 1:
                where = sorted(d["where"].items(), key=lambda kv: -kv[1])
                times = "<br>".join(costs.hms_cell(d["main"][c]) for c, _ in where)
                labels = "<br>".join(
                    costs.short_computer(c).replace(" ", "\u00a0").replace("-", "\u2011")
                    for c, _ in where
                )
                assert f"| {d['dataset']} | " in md and f"| {times} | {labels} |" in md
                splits = [f"{n:,} splits on the {costs.short_computer(c)}" for c, n in where]
                assert f"he other columns of {d['dataset']} ran {splits[0]}" in md


def test_long_commands_are_given_in_full_below_the_table():
    """A command with options is cut before its first option in the table and given in full
    below it, each line within the column and no option parted from its value."""
    md = costs.other_markdown()
    block = md[md.index("```bash"):md.index("```", md.index("```bash") + 3)]
    for r in costs.other_costs():
        short = costs.short_command(r["command"])
        if short != r["command"]:
            assert "--" not in short and short in md
            words = r["command"].strip("`").split()
            assert " ".join(words) in " ".join(block.replace("\\\n", " ").split())
    assert all(len(line) <= 80 for line in block.splitlines())
    assert not any(line.rstrip(" \\").split()[-1].startswith("--")
                   for line in block.splitlines()[1:] if line.endswith("\\"))


def test_where_computed_counts_the_splits_of_every_task_file(tmp_path):
    folder = tmp_path / "sweep" / "table3" / "paper_100x1000"
    rows = {
        "adult": [("cupy", "GPU X", 1, 30.0)] * 3 + [("numba", None, 2, 9.0)],
        "ecoli": [("numba", None, 50, 4.0)] * 2,
        "spect": [("numba", None, 100, 4.0)],
    }
    for name, files in rows.items():
        for k, row in enumerate(files):
            data = _split_file(*row)
            if row[1] is None:
                data["provenance"]["cpu_count"] = 2
            _write(folder / name / f"splits={k:03d}.json", data)
    (fam,) = costs.where_computed(tmp_path)
    assert fam["family"] == "table3" and fam["unit"] == "splits"
    assert dict(fam["groups"]) == {
        "adult": {"GPU X GPU": 3, "2-core CPU": 2},
        "ecoli": {"2-core CPU": 100},
        "spect": {"2-core CPU": 100},
    }
    assert costs.computers(tmp_path) == ["GPU X GPU", "2-core CPU"]
    assert costs.computers_defined(tmp_path) == (
        "The stored results name two computers: *GPU X host*, a computer with one GPU X GPU; "
        "*2-core CPU*, a computer with 2 processor cores and no GPU."
    )
    assert costs.hardware_sentence(tmp_path).startswith(
        "The *computer* column of the tables below names the computer that ran the tasks."
    )
    # the adult row names both computers, most splits first, and never adds their times
    adult = costs.computer_label(dict(fam["groups"])["adult"])
    assert adult == "GPU X host 3 + 2-core CPU 2 splits"
    # a computer with a GPU is named as a host, whichever of its records names it
    assert costs.short_computer("16-core CPU with one NVIDIA H100 80GB HBM3 GPU") == "H100 host"
    assert costs.short_computer("NVIDIA H100 80GB HBM3 GPU") == "H100 host"


def test_the_hardware_sentence_names_every_recorded_computer():
    """Every computer a stored result file records, and only those, is in the page's one
    statement of the hardware; every stored per-task file is counted once."""
    sentence = costs.computers_defined()
    found = set()
    for fam in costs.where_computed():
        for _, counts in fam["groups"]:
            found |= set(counts)
        if fam["unit"] == "tasks":
            stored = {r["family"]: r["stored"] for r in costs.family_costs()}[fam["family"]]
            assert sum(fam["groups"][0][1].values()) == stored
        if fam["unit"] == "splits":
            for ds, counts in fam["groups"]:
                files = _task_files(int(fam["family"][-1]), ds)
                if files:
                    assert sum(counts.values()) == sum(f["n_splits"] for f in files)
    found.discard(costs.NOT_RECORDED)
    assert found and found <= set(costs.computers())
    for c in costs.computers():
        assert f"*{costs.short_computer(c)}*, a " in sentence
        assert c.split(" with one ")[-1].split("-core")[-1] in sentence
    # on the page: the computers defined before the first section, the rest of what the
    # stored results took, as recorded (its total included), in the folded block
    page = (ROOT / "book" / "full_reproduction.md").read_text(encoding="utf-8")
    assert "_generated/costs_defined.md" in page[:page.index("\n## ")]
    fold = page[page.index("````{dropdown} What the stored results took, as recorded"):]
    fold = fold[:fold.index("\n````\n")]
    for name in ("costs_computers", "costs_total", "costs", "costs_slower"):
        assert f"_generated/{name}.md" in fold
        assert page.count(f"_generated/{name}.md") == 1
    for name in ("costs_timed", "costs_gpu"):  # the reference measurements, not folded
        assert f"_generated/{name}.md" in page and f"_generated/{name}.md" not in fold


def test_the_opt_recomputation_is_counted_where_costs_are_stated():
    """Every dataset whose (OPT) column was computed separately: its seconds are the row's
    seconds_dd, its splits are those of its dd_only task files, each counted once, and its
    computer is among those the page names."""
    from repro.ml_tables import result_path

    for table in (2, 3):
        path = result_path(table, "paper", 100, 1000)
        if not path.is_file():
            continue
        rows = read_json(path)["datasets"]
        recomputed = {r["dataset"]: r for r in costs.dd_recomputed(table)}
        assert set(recomputed) == {n for n, r in rows.items() if r.get("seconds_dd") is not None}
        for name, r in recomputed.items():
            assert r["seconds"] == rows[name]["seconds_dd"]
            files = sorted((RESULTS / "sweep" / f"table{table}" / "paper_100x1000" / name
                            / "dd_only").glob("*.json"))
            if files:
                assert sum(r["where"].values()) == sum(read_json(f)["n_splits"] for f in files)
                assert set(r["where"]) <= set(costs.computers())
        per_dataset = {r["dataset"]: r for r in costs.ml_costs(table)}
        for name, r in recomputed.items():
            assert per_dataset[name]["seconds_dd"] == r["seconds"]


def test_the_bottom_line_gives_one_subtotal_per_computer_and_adds_up():
    """The folded block's total is the families' summed seconds per computer: together they are the
    other families' summed seconds plus Tables 2 and 3 per dataset (the datasets stored as one
    file and the (OPT) column included), read from the stored files; no time of the page adds
    different computers' seconds."""
    by = costs.seconds_by_computer()
    fams = {r["family"]: r for r in costs.family_costs()}
    others = sum(r["seconds"] or 0.0 for n, r in fams.items() if n not in ("table2", "table3"))
    ml = sum(r["seconds"] for table in (2, 3) for r in costs.ml_costs(table))
    assert sum(by.values()) == pytest.approx(others + ml) and set(by) - {costs.NOT_RECORDED} <= set(
        costs.computers()
    )
    assert costs.by_computer_text(by) in costs.total_markdown()
    md = stored_costs()
    for table in (2, 3):
        assert re.search(rf"\| `table{table}` \| several, below \| below \|", md)
        per = costs.ml_costs_by_computer(table)
        for r in costs.ml_costs(table):
            d = next(x for x in per if x["dataset"] == r["dataset"])
            assert sum(d["main"].values()) + sum(d["dd"].values()) == pytest.approx(r["seconds"])
        sub: dict = {}
        for d in per:
            for part in (d["main"], d["dd"]):
                for c, v in part.items():
                    sub[c] = sub.get(c, 0.0) + v
        assert f"per computer: {costs.by_computer_text(sub)}." in md


def test_a_time_cell_of_two_computers_is_not_a_sum():
    two = costs._times_cell({"a": 60.0, "b": 7200.0}, {"a": 98, "b": 2})
    assert two == "1.0\u00a0min + 2.0\u00a0h"
    assert costs._times_cell({"a": 60.0}, {"a": 98}) == "1.0\u00a0min"
    assert costs.by_computer_text({"2-core CPU": 7200.0, costs.NOT_RECORDED: 30.0}) == (
        "2.0\u00a0h on the 2-core CPU and 30.0\u00a0s in work that records no computer"
    )


def test_work_that_records_no_computer_is_not_counted_as_a_computer():
    """The stored work records three computers and some work records none: the page counts the
    known computers, says the rest records none, and never calls it a further computer."""
    by = costs.seconds_by_computer()
    sentence = costs.hardware_sentence()
    total = costs.total_markdown()
    n = costs._word(len(costs.computers()))
    assert f"The stored results name {n} computers:" in costs.computers_defined()
    if costs.NOT_RECORDED in by:
        assert "the rest of the stored work records no computer" in sentence
        assert "in work that records no computer" in total
    assert "a computer not recorded" not in total


def test_the_stored_as_sentence_names_every_file_kept_whole():
    text = costs.stored_as_sentence()
    for r in costs.family_costs():
        if r["source"] in costs.AGGREGATES.values():
            assert f"`{r['family']}`" in text
    for table in (2, 3):
        for r in costs.ml_costs(table):
            if not r["chunks"]:
                assert re.search(rf"Table {table}'s [^;]*\b{r['dataset']}\b", text)


def test_the_other_results_are_costed_from_their_files(tmp_path):
    """Each other result's time is the seconds its files record (a Table 2 file: its rows and
    (OPT) columns), "—" where a file records none, and the page says which those are."""
    _write(tmp_path / "where_it_pays.json", {"provenance": {"seconds": 90.0, "cpu_count": 2}})
    for k, sec in enumerate((1.0, 2.5)):
        _write(tmp_path / "composition" / "crossover" / f"k={k}.json",
               {"provenance": {"seconds": sec}})
    _write(tmp_path / "ml" / "table2_authors_20x200.json",
           {"datasets": {"a": {"seconds": 10.0, "seconds_dd": 5.0}, "b": {"seconds": 1.0}},
            "provenance": {"seconds": 999.0}})
    _write(tmp_path / "benchmarks" / "pcd_gpu.json", {"per_split_seconds": {"adult": 11.0}})
    rows = {r["writes"]: r for r in costs.other_costs(tmp_path)}
    assert rows["`where_it_pays.json`"]["seconds"] == 90.0
    assert rows["`composition/crossover/`"]["seconds"] == 3.5
    assert rows["`composition/crossover/`"]["files"] == 2
    assert rows["`ml/table2_authors_20x200.json`"]["seconds"] == 16.0
    # a benchmark: the runs it times
    assert rows["`benchmarks/pcd_gpu.json`"]["seconds"] == 11.0
    md = costs.other_markdown(tmp_path)
    assert "| `where_it_pays.py`: `where_it_pays.json` | 2-core CPU | 1.5\u00a0min |" in md
    assert "| 1.5\u00a0min |" in md and "| 3.5\u00a0s |" in md and "| 16.0\u00a0s |" in md
    assert "a benchmark, which records the times it measures but not its own, shows the sum" in md


def test_every_other_result_the_chapters_read_is_on_the_page():
    """Each entry of OTHER_RESULTS with stored files is a row of the generated table, and the
    page includes the table; its time is the seconds its files record."""
    md = costs.other_markdown()
    page = (ROOT / "book" / "full_reproduction.md").read_text(encoding="utf-8")
    assert "_generated/costs_other.md" in page
    for r in costs.other_costs():
        where = costs.computer_label(r["where"], "files").replace(costs.NOT_RECORDED, "—")
        shown = costs.short_command(r["command"])
        assert re.search(
            re.escape(f"| {shown}") + r"( \([a-z]\))?"
            + re.escape(f": {r['writes']} | {where} | {costs.hms_cell(r['seconds'])} |"), md
        )
        assert "` `" not in r["writes"]  # a path is one code span
    assert len(costs.other_costs()) == len(costs.other_results())


def test_the_cell_settings_are_the_code_and_every_stored_cell_records_them():
    """The page states the table cells' settings from repro.tables (no settings typed), and every
    stored cell records that target gap and time limit."""
    from repro import tables

    page = (ROOT / "book" / "full_reproduction.md").read_text(encoding="utf-8")
    assert "_generated/costs_cells.md" in page
    assert not re.search(r"\d+(\.\d+)? ?%|\d+ s\b", page.replace("16 GB", "")), "a typed setting"
    text = costs.cells_sentence()
    assert f"rel_gap={tables.REL_GAP:g}, time_limit={tables.TIME_LIMIT:g}" in text
    assert f"a {100 * tables.REL_GAP:g}% target gap within {tables.TIME_LIMIT:g} s" in text
    cells = sorted((RESULTS / "tables" / "cells").glob("*.json"))
    assert all(read_json(f)["rel_gap_target"] == tables.REL_GAP for f in cells)
    assert all(read_json(f)["time_limit"] == tables.TIME_LIMIT for f in cells)
    assert f"{len(cells):,} of the {len(cells):,} stored cells record" in text


def test_every_per_dataset_table_is_in_order_of_rows():
    """The per-dataset tables of Tables 2 and 3 and the GPU table share one stated order."""
    for table in (2, 3):
        rows = costs.ml_costs(table)
        assert rows == costs.by_rows(rows)
    md = stored_costs()
    assert md.count("(by number of rows, smallest first)") == 2


def test_every_stored_file_has_a_command_or_is_a_stored_input():
    """The page gives every stored run of Tables 2 and 3 outside the families' paper-scale files,
    every benchmark and every other result a command, built from the file itself (a run's
    datasets, by name or by those left out, are the datasets its file holds), and names the
    stored input that no command recomputes with the script that checks it; the corollary's row
    claims only the file it writes."""
    from repro.datasets import available_datasets

    md = costs.other_markdown()
    runs = sorted(p for p in (RESULTS / "ml").glob("table*_*_*x*.json")
                  if not p.stem.endswith("_paper_100x1000"))
    assert runs
    for p in runs:
        command = costs.ml_run_command(p)
        assert f"`ml/{p.name}`" in md
        data = read_json(p)
        call = (data.get("provenance") or {}).get("call")
        if call:  # a function's run: the call its file records
            assert call in command
            continue
        words = command.split()
        held = set(available_datasets())
        if "--datasets" in words:
            held = set(words[words.index("--datasets") + 1].split(","))
        if "--skip" in words:
            held -= set(words[words.index("--skip") + 1].split(","))
        assert held == set(data["datasets"])
    for name in ("data_independent_1pct.json", "random_points.json",
                 "random_points_shifted.json", "random_points_supports.json",
                 "one_sided_l1_grid.json", "ml/benchmark_pcd.json"):
        assert name in md
    assert "`findings_corollary1.py`: `findings/corollary1.json` |" in md
    assert ("**Stored input.** `results/counterexamples/nonuniform_partition.json` is read by"
            in md)
    assert "`scripts/check_nonuniform_lower_bound.py` checks it" in md
    # the input is described by what it is, with no code history or date
    assert ("It is a non-uniform partition produced by `dpdro.optimal_noise` "
            "($\\eps = 5$, $\\delta = 0.01$, $\\Delta f = 1$, $\\ell_1$ loss)") in md
    assert "and `dpdro`'s valid lower bound does not" in md
    # the book's notation for the paper's lower bound
    assert "the paper's $D(\\pi, \\beta)$ exceeds" in md and "D(π, β)" not in md
    assert "version of the code" not in md and "commit" not in md
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", md)


ONE_AM = ("2026-01-01T00:00:00+00:00", "2026-01-01T01:30:00+00:00")  # a session of 1.5 h


def _timed_run(tmp_path, sessions, stored_splits=2):
    """A stored Table 3 run of one dataset (two splits) under tmp_path/results, and a sweep run of
    it under tmp_path/run whose log holds ``sessions`` (start, end) and whose split 1 differs
    from the stored one by 1e-7 in GN's in-sample error."""
    results, run = tmp_path / "results", tmp_path / "run"
    cols = {"in": {"GN": [0.25, 0.5], "PCD": [0.1, 0.2]},
            "out": {"GN": [0.3, 0.4], "PCD": [0.1, 0.2]}}
    stored = {s: {m: v[:stored_splits] for m, v in c.items()} for s, c in cols.items()}
    _write(results / "ml" / "table3_paper_100x1000.json",
           {"datasets": {"adult": {"per_split": stored,
                                   "coordinate_descent": [{"backend": "cupy", "splits": 2}]}}})
    for k in range(2):
        per = {s: {m: [v[k]] for m, v in c.items()} for s, c in cols.items()}
        if k == 1:
            per["in"]["GN"] = [0.5 + 1e-7]
        folder = run / "sweep" / "table3" / "paper_100x1000" / "adult"
        _write(folder / f"splits={k:03d}-{k:03d}.json",
               {"per_split": per, "coordinate_descent": {"backend": "numba", "dtype": "float32"},
                "task": {"params": {"first": k, "count": 1, "sims": 1000}},
                "provenance": {"seconds": 100.0 + k, "cpu_count": 2, "host": "vm",
                               "load_average_1min_start": 2.0 + k, "max_rss_mb": 600.0,
                               "git_commit": "abc"}})
    lines = []
    for start, end in sessions:
        lines.append(f"{start} start on vm: sweep.py table3 --datasets adult --root /x/y --jobs 2 "
                     "--no-progress | 2 tasks, 0 done, 2 to run, engine joblib (loky), jobs 2")
        if end:
            lines.append(f"{end} end: 2 computed, 0 failed, 0 not run, 0 skipped, 1.0 s")
    (run / "sweep" / "logs").mkdir(parents=True)
    (run / "sweep" / "logs" / "a.log").write_text("\n".join(lines) + "\n")
    return results, run


def test_timed_run_record_times_the_sessions_and_compares_with_the_stored_run(tmp_path):
    results, run = _timed_run(tmp_path, [(f"{day}T00:00:00+00:00", f"{day}T{end}:00+00:00")
                                         for day, end in (("2026-01-01", "01:30"),
                                                          ("2026-01-02", "00:10"))])
    r = costs.timed_run_record(run, 3, "adult", root=results)
    assert [s["seconds"] for s in r["sessions"]] == [5400.0, 600.0]
    assert r["wall_seconds"] == 6000.0
    assert r["task_seconds"] == [100.0, 101.0] and r["splits"] == 2 and r["sims"] == 1000
    assert r["max_abs_difference"]["in"]["GN"] == pytest.approx(1e-7)
    assert r["max_abs_difference"]["out"] == {"GN": 0.0, "PCD": 0.0}
    assert r["computer"] == "2-core CPU"
    assert "seconds" not in r["provenance"] and r["provenance"]["git_commit"] == "abc"
    # the record's own time is the run's wall-clock time, as the other-results table counts it
    assert costs.result_seconds(r) == 6000.0


def test_timed_run_record_refuses_a_run_that_has_not_ended(tmp_path):
    results, run = _timed_run(tmp_path, [("2026-01-01T00:00:00+00:00", None)])
    with pytest.raises(ValueError, match="has not ended"):
        costs.timed_run_record(run, 3, "adult", root=results)


def test_timed_run_record_refuses_a_split_the_stored_run_lacks(tmp_path):
    results, run = _timed_run(tmp_path, [(ONE_AM[0], "2026-01-01T00:01:00+00:00")],
                              stored_splits=1)
    with pytest.raises(ValueError):
        costs.timed_run_record(run, 3, "adult", root=results)


def test_timed_run_markdown_states_one_uninterrupted_run_and_its_commands(tmp_path):
    results, run = _timed_run(tmp_path, [ONE_AM])
    r = costs.timed_run_record(run, 3, "adult", root=results)
    _write(costs.timed_run_path(3, "adult", results), r)
    lines = costs.timed_run_markdown(results)
    code = lines[lines.index("```bash") + 1:-1]
    assert len(code) >= 2 and all(len(line) <= 80 for line in code)  # the column's width
    text = " ".join(lines).replace(" \\     ", " ")
    assert "one uninterrupted run" in text and "1.5 h of wall-clock time" in text
    assert "two worker processes" in text and "to within 1e-07" in text
    assert "(2 splits on a GPU with CuPy)" in text
    assert "scripts/sweep.py table3 --datasets adult --root DIR --jobs 2" in text
    assert "record_timed_run.py DIR --table 3 --dataset adult" in text
    assert "/x/y" not in text and "--no-progress" not in text
    # the load averages are given with what they mean (a median of 2.5 for two workers), in
    # the folded block, not in the reference measurement itself
    assert "load average" not in text
    assert costs.timed_run_load_sentence(results) == (
        "During the timed run of Table 3 for adult, other work ran on the computer, so its "
        "times are those of a shared computer: the 1-minute load average (the processes "
        "running or waiting for a core, averaged over a minute) when a task started was 2.5 "
        "(median), 3.0 at most, on 2 cores.")


def test_stored_tasks_slower_than_the_references_are_explained_from_their_files():
    """Every group of stored Table 3 tasks slower per split than its reference (the timed run on
    the same computer, the GPU benchmark of the same dataset) gets one clause, from its files:
    the worker processes that shared the GPU, a kernel other than the timed run's, or, where the
    files show neither, that the files record no other cause."""
    import statistics

    sentence = costs.slower_tasks_sentence(3)
    timed = {read_json(p)["computer"]: read_json(p)
             for p in sorted(RESULTS.glob(costs.TIMED_RUNS)) if read_json(p)["table"] == 3}
    gpu = costs.gpu_split_costs()
    named = 0
    for g in costs.stored_task_context(3):
        head = f"{g['dataset']} on the {costs.short_computer(g['computer'])}, "
        clause = sentence.split(head)[-1].split(")")[0] if head in sentence else ""
        bench = {r["dataset"]: r["gpu"] for r in gpu["rows"]} if gpu else {}
        if gpu and g["computer"] == gpu["computer"] and g["dataset"] in bench:
            slow = g["per_split"] > 1.5 * bench[g["dataset"]]
            if slow and max(g["jobs"]) > 1:
                assert f"worker processes shared the GPU, `--jobs {max(g['jobs'])}`" in clause
            elif slow:
                assert "the files record no other cause" in clause
        elif g["computer"] in timed:
            ref = timed[g["computer"]]
            slow = g["per_split"] > 1.5 * statistics.median(ref["task_seconds"])
            if slow and ref["coordinate_descent"]["kernel"] not in g["kernel"]:
                assert "an earlier, slower version of the kernel" in clause
            elif slow:
                assert "the same kernel as the timed run" in clause
                assert "the files record no other cause" in clause
        else:
            slow = False
        assert (head in sentence) == slow
        if slow:
            assert f"{costs.hms(g['per_split'])} per split against" in clause
        named += slow
    if named:
        assert sentence.endswith("the reference times give what a split costs with the "
                                 "current kernel.")
        assert sentence not in stored_costs()  # its own paragraph, costs_slower.md
        assert "a paragraph in that block names them." in "\n".join(
            stored_gpu_costs())


def test_the_per_dataset_tables_gloss_their_terms_and_the_page_points_to_the_stored_input():
    """The cost tables say what *paper reading*, *(OPT)* and *other columns* mean where they use
    them, and the page's pointer to the stored input names a paragraph the page has."""
    md = stored_costs()
    for table in (2, 3):
        if costs.ml_costs(table):
            assert md.count("its *paper reading* (the choices the paper's text leaves open") == 2
            assert md.count("*(OPT)* is the column of the paper's data-dependent optimal "
                            "noise") == 2
            assert "*other columns* is the time of every other column" in md
    page = (ROOT / "book" / "full_reproduction.md").read_text(encoding="utf-8")
    assert "except one\nstored input that no command recomputes (named with those commands)" \
        in page
    assert "**Stored input.**" in costs.other_markdown()
    assert "the experiments of the\npaper and of one related-paper chapter" in page


def test_runs_without_per_task_files_are_named_with_the_command_they_record():
    """A stored run of Tables 2 and 3 listed with a ``sweep.py`` command but computed before
    the sweep (no per-task files under ``results/sweep/``) is said to be so, with the script its
    file records; the timed run's row says that its time is the run it records."""
    md = costs.other_markdown()
    rows = costs.other_costs()
    long = [r for r in rows if costs.short_command(r["command"]) != r["command"]]
    mark = {r["command"]: f"({chr(ord('a') + k)})" for k, r in enumerate(long)}
    single = [r for r in long if r["command"].startswith("`sweep.py") and not r["task_folder"]]
    for r in single:
        recorded = read_json(RESULTS / r["writes"].strip("`"))["provenance"]["command"]
        assert not recorded.startswith("sweep.py")
        assert f"`{recorded.split(' ', 1)[0]}`" in md
    if single:
        said = md.split("computed in one process")[0].rsplit("The stored file", 1)[1]
        assert all(mark[r["command"]] in said for r in single)
        assert "the `sweep.py` command given recomputes the same splits and simulations" in md
    timed = [r for r in long if r["command"].startswith("`record_timed_run.py")]
    for r in timed:
        assert (f"{mark[r['command']]} only records a finished run: its "
                f"{costs.hms(r['seconds'])} is the wall-clock time") in md


def test_rank_correlation_on_exact_small_cases():
    """Spearman's rank correlation: 1 for any increasing relation, -1 for a decreasing one,
    ties sharing their mean rank (brute force: Pearson's correlation of the ranks)."""
    assert costs.rank_correlation([1, 2, 3, 4], [10, 20, 30, 1000]) == pytest.approx(1)
    assert costs.rank_correlation([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    assert costs._ranks([5, 1, 5, 2]) == [3.5, 1, 3.5, 2]
    # x ranks 1..4, y ranks 2, 1, 4, 3: 1 - 6 * 4 / (4 * 15) = 0.6
    assert costs.rank_correlation([1, 2, 3, 4], [2, 1, 4, 3]) == pytest.approx(0.6)


def test_the_gpu_order_sentence_says_what_the_seconds_follow():
    """The sentence under the GPU table names what orders the seconds (rank correlations with
    n, d and n × d, the largest named) and every dataset that takes longer than one with more
    features; it says nothing without n and d."""
    rows = [dict(dataset="a", n=10, d=1, gpu=1.0), dict(dataset="b", n=1000, d=2, gpu=5.0),
            dict(dataset="c", n=20, d=3, gpu=3.0), dict(dataset="e", n=5, d=4, gpu=6.0)]
    text = costs.gpu_order_sentence(rows)
    assert text.startswith("The seconds follow the features *d* more than the rows *n*: ")
    assert "is 0.80 with *d*, 0.40 with *n* × *d* and -0.20 with *n*" in text
    assert "b (1,000 rows, *d* = 2) takes longer than datasets with more features." in text
    assert "a (" not in text and "c (" not in text
    rows[1]["gpu"] = 2.0
    assert "every dataset takes longer than those with fewer" in costs.gpu_order_sentence(rows)
    assert costs.gpu_order_sentence([dict(r, d=None) for r in rows]) == ""
    # the rows ordering the seconds better than the features: said so
    swapped = [dict(r, n=r["d"], d=r["n"]) for r in rows]
    assert costs.gpu_order_sentence(swapped).startswith(
        "The seconds follow the rows *n* more than the features *d*: ")
