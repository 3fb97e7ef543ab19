"""The findings chapter's computations (repro.findings) and the generated book pages (repro.bookpages)."""

import functools
import json
import re

import pytest

import dpdro
from dpdro import data_dependent as dd
from repro import bookpages, costs, findings


@functools.cache
def stored_status() -> str:
    """The status page of this repository (bookpages.status_markdown()), built once per process:
    a string read from the stored notebooks and results, which no test changes."""
    return bookpages.status_markdown()


def test_eprime_km_exceeds_a_private_mechanism_and_exact_shifts_do_not():
    prob = dd.Problem(epsilon=0.1, delta=0.01, sensitivity=1.0, loss="l1", phi_lo=0.0, phi_hi=0.5)
    part = dpdro.Partition.uniform(8, 0.25)
    const, check = findings.constant_mechanism_loss(0.0, 0.5)
    assert const == pytest.approx(0.125) and check == pytest.approx(0.125, abs=1e-6)
    paper = findings.eprime_km_lower_bound(prob, part, "paper")
    exact = findings.eprime_km_lower_bound(prob, part, "exact")
    assert paper > 0.8 > const >= exact  # the paper's set cuts off a 0-DP mechanism; the exact set does not
    assert dd.lower_bound(prob, part).value <= const  # dpdro's valid D′
    assert findings.constant_mechanism_violation(0.0, 0.5, 0.25, epsilon=0.1, delta=0.01) == pytest.approx(0.99)


def test_eps5_paper_optimum_is_below_the_stored_cell_infimum_bounds():
    o = findings.eps5_paper_optimum()
    assert set(o) == {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75}
    stored = json.loads(findings.EPS5.read_text())
    for r in stored["rows"]:
        assert r["paper_O"] == pytest.approx(o[r["delta"]])
        assert r["lower"] > 1.005 * r["paper_O"]  # above the paper's whole bracket (relative gap < 1%)


def test_status_pages_are_generated_from_stored_notebooks(tmp_path):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    cell = {"cell_type": "code", "source": "1", "outputs": [], "execution_count": 1,
            "metadata": {"execution": {"iopub.execute_input": "2026-01-01T10:00:00.000Z",
                                       "shell.execute_reply": "2026-01-01T10:00:12.500Z"}}}
    nb = {"cells": [{"cell_type": "markdown", "source": "# A title", "metadata": {}}, cell],
          "metadata": {"language_info": {"version": "3.11.7"}}, "nbformat": 4, "nbformat_minor": 5}
    (nbs / "01_a.ipynb").write_text(json.dumps(nb))
    runs = bookpages.notebook_runs(nbs)
    assert runs == [dict(chapter="01_a", title="A title", executed="2026-01-01 10:00", seconds=12.5,
                         code_cells=1, timed_cells=1, unexecuted_cells=0, errors=0, python="3.11.7")]
    res = tmp_path / "results" / "x"
    res.mkdir(parents=True)
    (res / "r.json").write_text(json.dumps({"provenance": {"date_utc": "2026-01-02T00:00:00", "seconds": 3,
                                                           "command": "run.py", "git_commit": "abcdef123"}}))
    # a table merged from a sweep's tasks adds no time: its tasks count in the sweep's row
    merged = {"provenance": {"seconds": 7200, "command": "sweep.py t2 --merge-only"}}
    (res / "merged.json").write_text(json.dumps(merged))
    md = bookpages.status_markdown(nbs, tmp_path / "results")
    # dates and times stay on one line (no-break hyphens and spaces)
    assert "| {doc}`/notebooks/01_a` | 2026\u201101\u201101\u00a010:00 | 12.5\u00a0s |" in md
    assert "No stored output contains an error." in md
    # no code-history column and no commit hash; the time stays on one line
    assert "abcdef" not in md
    # a time whose computer is not recorded says so: the time is recorded
    row = ("| x | no chapter | full | 2026\u201101\u201102 | computer not recorded: "
           "3.0\u00a0s |")
    assert row in md
    assert "| code |" not in md


def test_a_table_merged_from_sweep_tasks_is_counted_with_them_once(tmp_path):
    """One computation, one row: the tables merged from two sweep families' tasks go each to the
    family its name names, and add no seconds to the tasks' own."""
    res = tmp_path / "results"
    for fam in ("t2", "t3"):
        (res / "sweep" / fam).mkdir(parents=True)
        (res / "sweep" / fam / "task.json").write_text(json.dumps({"provenance": {"seconds": 60}}))
    (res / "ml").mkdir()
    for fam in ("t2", "t3"):
        prov = {"seconds": 60, "command": "sweep.py t2 t3 --splits 100"}
        (res / "ml" / f"{fam}_100.json").write_text(json.dumps({"provenance": prov}))
    (res / "ml" / "other.json").write_text(json.dumps({"provenance": {"seconds": 5}}))
    rows = {r["folder"]: (r["files"], r["seconds"]) for r in bookpages.result_families(res)}
    assert rows == {"sweep/t2": (2, 60.0), "sweep/t3": (2, 60.0), "ml": (1, 5.0)}


def test_status_rows_follow_the_table_of_contents_and_give_scale_and_computer():
    """The chapter rows in the order of _toc.yml; a stored run of Table 2 or 3 gives its splits ×
    simulations; its time per computer is the cost page's (repro.costs.ml_file_seconds) for every
    stored run of the family, so the two pages agree."""
    from repro import costs

    md = stored_status()
    toc = bookpages.toc_order()
    shown = [c for c in toc if f"{{doc}}`/notebooks/{c}` |" in md.split("## Stored results")[0]]
    assert shown and shown == [c for c in toc if (bookpages.NOTEBOOKS / f"{c}.ipynb").is_file()]
    rows = {r["folder"]: r for r in bookpages.result_families()}
    for table in (2, 3):
        r = rows[f"sweep/table{table}"]
        assert (100, 1000) in r["pairs"] and "100\u00a0×\u00a01,000" in md
        expected: dict = {}
        for f in sorted((bookpages.RESULTS / "ml").glob(f"table{table}_*.json")):
            if f"sweep/table{table}" == bookpages._group(
                f.relative_to(bookpages.RESULTS),
                str(json.loads(f.read_text())["provenance"].get("command", "")),
            ):
                for c, v in costs.ml_file_seconds(f).items():
                    expected[c] = expected.get(c, 0.0) + v
        assert r["by_computer"] == {c: pytest.approx(v, abs=0.1) for c, v in expected.items()}
        paper = costs.ml_file_seconds(
            bookpages.RESULTS / "ml" / f"table{table}_paper_100x1000.json"
        )
        assert sum(paper.values()) == pytest.approx(
            sum(x["seconds"] for x in costs.ml_costs(table))
        )


def test_every_stored_result_names_the_chapters_that_show_it():
    chapters = {p.stem for p in bookpages.NOTEBOOKS.glob("*.ipynb")}
    groups = {r["folder"] for r in bookpages.result_families()}
    assert groups <= set(bookpages.RESULT_CHAPTERS), groups - set(bookpages.RESULT_CHAPTERS)
    pages = {p.stem for p in (bookpages.ROOT / "book").glob("*.md")}
    assert all(set(c) <= chapters | pages for _, c in bookpages.RESULT_CHAPTERS.values())


def test_corollary1_stored_from_a_clean_tree_and_above_a_certified_noise():
    stored = json.loads(findings.COROLLARY1.read_text())
    assert stored["provenance"]["git_dirty"] is False and stored["cells"] == 643
    # the stored table cell of the same problem holds a certified private noise
    from repro import tables

    cell = tables.load_cells()[("l1", 5.0, 0.01)]
    assert stored["problem"] == {"epsilon": 5.0, "delta": 0.01, "sensitivity": 1.0, "loss": "l1"}
    assert stored["paper_D"] > cell["upper"] and cell["certified_delta"] <= 0.01


def test_monotone_counterexample_recomputed():
    """The decisive monotone lower bound recomputed live equals the stored one; the stored noises
    re-certify from their probabilities alone; the separation is positive and small."""
    mono = json.loads((findings.RESULTS / "appendix" / "monotone_counterexample.json").read_text())
    entry = max([e for e in mono["lowers"] if e["monotone"] and e["strengthened"]],
                key=lambda e: e["lower"])
    lb = findings.monotone_lower_bound(entry)
    assert lb == pytest.approx(entry["lower"], rel=1e-8)
    free = min([e for e in mono["uppers"] if not e["monotone"]], key=lambda e: e["upper"])
    r = findings.recertify(free)
    assert r["delta"] <= 0.3 and r["loss"] == pytest.approx(free["upper"], abs=1e-6)
    assert not r["monotone"] and 0 < lb - r["loss"] < 0.001


def test_each_stored_run_of_tables_2_and_3_is_its_own_status_line():
    """One line per scale: every stored run of Tables 2 and 3 is a line of the status table with
    its own time per computer (repro.costs.ml_file_seconds of its file), and the lines of a
    stored result add up to its time."""
    from repro import costs

    md = stored_status()
    for r in bookpages.result_families():
        total: dict = {}
        for label, part in r["by_scale"]:
            for c, v in part.items():
                total[c] = total.get(c, 0.0) + v
            if label:
                assert f"| {label} | " in md
                line = next(x for x in md.splitlines() if f"| {label} | " in x)
                assert line.endswith(f"| {bookpages._time_on_computers(part)} |")
        assert total == pytest.approx(r["by_computer"], abs=0.2)
    scales = {label: part for r in bookpages.result_families() for label, part in r["by_scale"]}
    files = [f for f in sorted((bookpages.RESULTS / "ml").glob("table[23]_*_*.json"))
             if isinstance(json.loads(f.read_text()).get("datasets"), dict)]
    labels = [bookpages._run_label(f, json.loads(f.read_text())["provenance"]) for f in files]
    assert len(set(labels)) == len(labels)  # one line per run
    for f, label in zip(files, labels, strict=True):
        assert scales[label] == pytest.approx(costs.ml_file_seconds(f), abs=0.1)


def test_a_family_aggregate_is_counted_with_its_tasks(tmp_path):
    """The aggregate file a family's own script assembles from its tasks is one stored result
    with the tasks (no row of its own without a time)."""
    res = tmp_path / "results"
    (res / "sweep" / "figure5").mkdir(parents=True)
    (res / "sweep" / "figure5" / "t.json").write_text(
        json.dumps({"provenance": {"seconds": 60, "cpu_count": 2}})
    )
    (res / "data_dependent").mkdir()
    (res / "data_dependent" / "figure5.json").write_text(
        json.dumps({"provenance": {"seconds": 60, "command": "x.py --merge-only"}})
    )
    rows = {r["folder"]: r["by_computer"] for r in bookpages.result_families(res)}
    assert rows == {"sweep/figure5": {"2-core CPU": 60.0}}


def test_status_names_chapters_by_short_titles():
    """The stored-results table names every chapter and page by its short title, a link; every
    chapter of the table of contents has one; each benchmark is a row with only the chapters that
    read it, and the benchmarks no chapter reads are a row of their own."""
    assert set(bookpages.toc_order()) <= set(bookpages.SHORT_TITLES)
    md = stored_status().split("## Stored results")[1]
    assert "{doc}`Figure\u00a03 </notebooks/23_figure3>`" in md
    rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| ")}
    figure3 = rows[bookpages.RESULT_CHAPTERS["benchmarks/data_dependent.json"][0]]
    seconds = costs.measured_seconds(json.loads(
        (bookpages.RESULTS / "benchmarks" / "data_dependent.json").read_text()))
    assert "Figure\u00a03 </notebooks/23_figure3>" in figure3 and costs.hms(seconds).replace(
        " ", "\u00a0") in figure3
    gpu = rows[bookpages.RESULT_CHAPTERS["benchmarks/pcd_gpu.json"][0]]
    assert "</book/full_reproduction>" in gpu
    unread = next(line for name, line in rows.items()
                  if name.startswith(bookpages.RESULT_CHAPTERS["benchmarks"][0]))
    assert "| no chapter |" in unread
    for name in {r["folder"]: r for r in bookpages.result_families()}["benchmarks"]["names"]:
        assert f"`{name}`" in md  # a file name in code, never broken, under the table


def test_each_run_names_the_stored_result_it_is_part_of():
    """The group rows of Tables 2 and 3 carry a letter, and every run line names that letter in
    its *part of* column: as many lines per letter as the row counts."""
    md = stored_status().split("## Stored results")[1]
    lines = [line.split(" | ") for line in md.splitlines() if line.startswith("| ")]
    groups = {}
    for cells in lines:
        found = re.fullmatch(r"(\d+)\u00a0runs? \(([A-Z])\)", cells[2])
        if found:
            groups[found.group(2)] = int(found.group(1))
    parts = [cells[1] for cells in lines if cells[0].startswith("| Table\u00a0")]
    assert groups and {m: parts.count(m) for m in groups} == groups


def test_what_no_file_records_is_said_once(tmp_path):
    """A result whose files record no computer or no time is named in one note, as plain
    provenance (what its files record, no dates or history); nothing is filled in."""
    res = tmp_path / "results" / "old"
    res.mkdir(parents=True)
    (res / "a.json").write_text(json.dumps({"provenance": {"date_utc": "2026-01-02"}}))
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    md = bookpages.status_markdown(nbs, tmp_path / "results")
    assert "| old | no chapter | full | 2026\u201101\u201102 | not recorded |" in md
    assert md.count("*Not recorded*") == 1
    assert "the files of “old” record neither a computer nor a computing time" in md
    assert "2026-01-02" not in md and "before" not in md.split("*Not recorded*")[1]


def test_status_run_lines_name_their_datasets_and_a_logged_date():
    """A stored run of Tables 2 and 3 that holds only some datasets says which (the shorter of
    "only" and "without"), and a file with no provenance date is dated by the run it logs."""
    md = stored_status()
    assert "| Table\u00a03, 4\u00a0×\u00a010, adult and spambase only |" in md
    assert "| Table\u00a03, 10\u00a0×\u00a020, without adult and spambase |" in md
    gpu = next(line for line in md.splitlines() if line.startswith("| Table 3 on a GPU"))
    assert "\u00a0(log) |" in gpu


def test_stored_results_follow_the_stated_order_rule():
    """The rule the status page states is the one its rows follow: by the table-of-contents
    position of the first chapter named in each row (a book page after the chapters), the rows
    that no chapter shows last; Findings, when a row names it with other chapters, is named after
    them."""
    md = stored_status().split("## Stored results")[1]
    assert ("one row per stored result, in book order of the first chapter of its *chapters* "
            "column, those that no chapter shows last; in that column, Findings, which draws on "
            "several results, comes last.") in md
    toc = {c: i for i, c in enumerate(bookpages.toc_order())}
    titles = {SHORT: c for c, SHORT in bookpages.SHORT_TITLES.items()}
    table = md.split("|---|---|---|---|---|")[1].split("\n\n")[0]
    ranks = []
    for line in table.strip().splitlines():
        first = re.search(r"\{doc\}`([^<`]+?) <", line.split(" | ")[1])
        name = first.group(1).replace("\u00a0", " ").replace("\u2011", "-") if first else None
        stem = next((c for s, c in titles.items()
                     if name and s.replace("\u00a0", " ").replace("\u2011", "-") == name), None)
        ranks.append(toc.get(stem, len(toc)) if first else len(toc) + 1)
    assert ranks and ranks == sorted(ranks)
    assert ranks[-1] == len(toc) + 1  # the benchmarks that no chapter reads
    for _, chapters in bookpages.RESULT_CHAPTERS.values():
        if "91_findings" in chapters:
            assert chapters[-1] == "91_findings"


def test_every_benchmark_the_cost_page_lists_is_on_the_status_page():
    """Each benchmark the full-reproduction page marks *no chapter* is named on the status
    page's note of benchmarks that no chapter reads (ml/benchmark_pcd.json included)."""
    md = stored_status()
    note = md.split("Benchmarks that no chapter reads: ")[1].split("\n")[0]
    other = costs.other_markdown()
    for line in other.splitlines():
        if line.endswith("| no chapter |"):
            written = re.search(r"`([^`]+\.json)` \|", line).group(1)
            assert f"`{written.rsplit('/', 1)[-1]}`" in note
    assert "`benchmark_pcd.json`" in note


def test_the_eps_over_d_run_is_named_in_words():
    md = stored_status()
    assert "privacy budget (ε/d, δ/d) per coordinate update" in md
    assert ", eps," not in md


def test_both_pages_say_the_same_of_datasets_kept_only_in_the_tables_file():
    """One statement, true of the files, on both pages: the datasets whose columns other than
    (OPT) have no per-task files are rows of the table's file only."""
    for table in (2, 3):
        names = [r["dataset"] for r in costs.ml_costs(table) if not r["chunks"]]
        for name in names:
            assert not list((bookpages.RESULTS / "sweep" / f"table{table}" / "paper_100x1000"
                             / name).glob("*.json"))
        if names:
            sentence = costs.kept_in_table_file(table, names)
            assert sentence in costs.costs_markdown()
            assert sentence in stored_status()
    assert "one file per dataset" not in costs.costs_markdown()


def test_the_scale_key_reads_as_the_cells_it_explains():
    md = stored_status()
    assert ("or, for Tables 2 and 3, *N runs (X)*: N stored runs, listed in the next table with "
            "X in its *part of* column.") in md
    assert re.search(r"\| \d+\u00a0runs \([A-Z]\) \|", md)


def test_the_status_page_defines_its_computers_and_folds_its_bookkeeping():
    """The status page opens with the one sentence that defines the computers its computing
    times name (the full-reproduction page's, :func:`repro.costs.computers_defined`); the notes
    on where the runs' files are and what no file records are in one folded block; the
    benchmarks that no chapter reads are said to have no page that shows their results."""
    md = stored_status()
    defined = costs.computers_defined()
    assert defined and md.startswith(defined + "\n")
    for c in costs.computers():
        assert f"*{costs.short_computer(c)}*, a computer with" in defined
    fold = md.split(f"````{{dropdown}} {bookpages.FILES_TITLE}\n")[1]
    assert fold.rstrip().endswith("````")
    assert "The letters of *part of* name" in fold and "*Not recorded*:" in fold
    outside = md.split("````{dropdown}")[0]
    assert "The letters of *part of*" not in outside and "*Not recorded*" not in outside
    assert "no page shows their results." in outside and "no page shows them" not in md
    # a computing time without its computer reads as such
    assert "computer not recorded: " in md and "<br>not recorded:" not in md
    assert "| not recorded: " not in md
