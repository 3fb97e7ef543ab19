"""What the stored paper-scale results cost, from their own provenance: the tables of the book's
"Running the full reproduction" page (``book/full_reproduction.md`` includes
``book/_generated/costs_total.md``, ``costs.md``, ``costs_other.md`` and ``costs_gpu.md``,
written by :func:`write_costs` when the book is built).

Nothing here is typed: every number is read from the result files under ``results/``.

* :func:`family_costs`: per task family of :data:`repro.sweep.FAMILIES`, the tasks at the paper's
  scale, those stored with a per-task result file, and from their provenance the summed, median and
  largest wall-clock seconds and the peak memory of the worker process; for a family stored
  without per-task files, the seconds recorded in its aggregate file (:data:`AGGREGATES`,
  :func:`recorded_seconds`).
* :func:`ml_costs`: Tables 2 and 3 per dataset at the paper's 100 × 1,000: the wall-clock seconds
  of its tasks, summed over its per-task files (chunks of splits) where it has them (the seconds
  :func:`family_costs` sums), else the seconds stored with the dataset's row (a dataset computed
  in one process, without per-task files).
* :func:`ml_split_costs`: Tables 2 and 3 per dataset and per implementation that computed its
  splits (each per-task file's ``coordinate_descent`` record: CPU or GPU kernel): splits, summed
  and median seconds per split; :func:`gpu_split_costs`: Table 3's seconds per paper-scale split
  on a GPU (``results/benchmarks/pcd_gpu.json``, ``scripts/benchmark_pcd_gpu.py``) next to the
  CPU kernel's median from the per-task files; :func:`gpu_costs_markdown` the page's section on
  them.
* :func:`computer`, :func:`where_computed` and :func:`dd_recomputed` (the (OPT) columns of
  Tables 2 and 3 computed separately, under ``dd_only/``): which computer computed each stored
  result, in neutral words (cores, and the GPU the file or another file of the same platform
  names), from the record each result file keeps; :func:`computers` all of them,
  :func:`computers_defined` the one sentence that defines them (both pages) and
  :func:`hardware_sentence` what the folded block's *computer* column means.
* :func:`other_costs`: the other results the chapters read (:data:`OTHER_RESULTS`: one script
  each, the runs of Table 2 with the authors' code settings, the layout comparison), with the
  seconds their files record (:func:`result_seconds`); :func:`other_markdown` the page's table.
* :func:`seconds_by_computer`: the task time of all the stored results of the families, per
  computer (times of different computers are never added; :func:`by_computer_text`);
  :func:`total_markdown` their total in the folded block of recorded times.
* :func:`timed_run_record`: one dataset's paper-scale run of Table 2 or 3, timed whole from the
  sweep's log, and its agreement with the stored run (``scripts/record_timed_run.py``,
  :data:`TIMED_RUNS`); :func:`timed_run_markdown` the page's paragraph on it and
  :func:`timed_run_load_sentence` the load it ran under (folded).
* :func:`gpu_costs_markdown`: Table 3 on a GPU, per dataset with its rows and features, and
  :func:`gpu_order_sentence` what orders its seconds (:func:`rank_correlation`).
* :func:`ml_file_seconds`: one stored run of Tables 2 and 3 per computer, the single source of the
  times of this page and of the status page (:mod:`repro.bookpages`).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from .datasets import available_datasets
from .paths import RESULTS, ROOT
from .provenance import read_json

__all__ = [
    "AGGREGATES",
    "computer",
    "costs_markdown",
    "cells_sentence",
    "dd_recomputed",
    "hms",
    "hms_cell",
    "family_costs",
    "gpu_costs_markdown",
    "gpu_split_costs",
    "ml_costs",
    "ml_costs_by_computer",
    "ml_file_seconds",
    "by_computer_text",
    "computer_label",
    "seconds_by_computer",
    "short_computer",
    "ml_progress",
    "ml_split_costs",
    "recorded_seconds",
    "total_markdown",
    "where_computed",
    "computers",
    "hardware_sentence",
    "other_costs",
    "other_markdown",
    "OTHER_RESULTS",
    "STORED_INPUTS",
    "ml_run_command",
    "ml_run_results",
    "other_results",
    "result_seconds",
    "measured_seconds",
    "short_command",
    "stored_as_sentence",
    "run_sessions",
    "timed_run_markdown",
    "timed_run_path",
    "timed_run_record",
    "TIMED_RUNS",
    "write_costs",
]

# families whose stored results have no per-task files: the aggregate file the chapter reads
AGGREGATES = {
    "figure3-dd": "figure3_data_dependent.json",
    "figure4": "appendix/figure4.json",
    "counterexample": "appendix/monotone_counterexample.json",
    "figure5": "data_dependent/figure5.json",
}
_NOT_TIMES = ("cap", "limit", "repeat", "paper")  # keys holding settings or the paper's numbers


def recorded_seconds(data) -> float:
    """The seconds an aggregate file records for its computation: its provenance's
    ``total_seconds`` or ``seconds`` (or ``meta``'s) when present, else the sum of every number
    stored under a key ending in ``seconds`` (the solves it lists), skipping keys that name a
    setting or the paper's values (``cap``, ``limit``, ``repeat``, ``paper``)."""
    for head in ("provenance", "meta"):
        prov = data.get(head) if isinstance(data, dict) else None
        if isinstance(prov, dict):
            for key in ("total_seconds", "seconds"):
                if isinstance(prov.get(key), (int, float)):
                    return float(prov[key])

    def walk(o) -> float:
        if isinstance(o, dict):
            total = 0.0
            for k, v in o.items():
                if any(w in k for w in _NOT_TIMES):
                    continue
                if k.endswith("seconds") and isinstance(v, (int, float)):
                    total += float(v)
                else:
                    total += walk(v)
            return total
        if isinstance(o, list):
            return sum(walk(v) for v in o)
        return 0.0

    return walk(data)


def family_costs(root: Path | str = RESULTS) -> list[dict]:
    """One dict per task family (see the module docstring); seconds are wall-clock."""
    from . import sweep

    out = []
    for name in sweep.FAMILIES:
        fam = sweep.family(name)
        tasks = fam.tasks(root, "paper", {})
        stored = [(t, r) for t in tasks if (r := sweep.load_result(t)) is not None]
        row = dict(family=name, title=fam.title, tasks=len(tasks), stored=len(stored))
        provs = [(t.id, r.get("provenance") or {}) for t, r in stored]
        timed = [
            (p["seconds"], tid) for tid, p in provs if isinstance(p.get("seconds"), (int, float))
        ]
        if timed:
            secs = [s for s, _ in timed]
            rss = [
                p["max_rss_mb"] for _, p in provs if isinstance(p.get("max_rss_mb"), (int, float))
            ]
            row.update(
                source="per-task files",
                seconds=sum(secs),
                median=statistics.median(secs),
                largest=max(timed),
                peak_mb=max(rss) if rss else None,
            )
        elif name in AGGREGATES and (Path(root) / AGGREGATES[name]).is_file():
            data = read_json(Path(root) / AGGREGATES[name])
            row.update(
                source=AGGREGATES[name],
                seconds=recorded_seconds(data),
                median=None,
                largest=None,
                peak_mb=None,
            )
        else:
            row.update(
                source=None, seconds=None, median=None, largest=None, peak_mb=None
            )
        out.append(row)
    return out


def ml_costs(table: int, root: Path | str = RESULTS) -> list[dict]:
    """Per dataset stored at 100 × 1,000 in the paper reading: its wall-clock seconds (the sum of
    its per-task files' provenance ``seconds`` where it has such files, ``chunks`` of them; else the
    ``seconds`` stored with its row, ``chunks`` 0), plus ``seconds_dd`` when the (OPT) column was
    computed separately (included in ``seconds``, and also given alone as ``seconds_dd``, ``None``
    when not recomputed), and the chunks' peak memory where per-task files exist; by number of
    rows, smallest first (:func:`by_rows`)."""
    from .ml_tables import result_path

    path = result_path(table, "paper", 100, 1000, root)
    if not path.is_file():
        return []
    data = read_json(path)
    out = []
    for name, row in data["datasets"].items():
        chunks = sorted(
            (Path(root) / "sweep" / f"table{table}" / "paper_100x1000" / name).glob("*.json")
        )
        provs = [read_json(c).get("provenance", {}) for c in chunks]
        rss = [p["max_rss_mb"] for p in provs if isinstance(p.get("max_rss_mb"), (int, float))]
        task_secs = [p["seconds"] for p in provs if isinstance(p.get("seconds"), (int, float))]
        seconds = sum(task_secs) if chunks and len(task_secs) == len(chunks) else row["seconds"]
        out.append(
            dict(
                dataset=name,
                n=row.get("n"),
                seconds=seconds + (row.get("seconds_dd") or 0.0),
                seconds_dd=row.get("seconds_dd"),
                chunks=len(chunks),
                peak_mb=max(rss) if rss else None,
            )
        )
    return by_rows(out)


def by_rows(rows: list[dict]) -> list[dict]:
    """Per-dataset rows (each with ``n``, its number of rows, and ``dataset``) in the one order of
    every per-dataset table: by number of rows, smallest first, unknown sizes last."""
    return sorted(rows, key=lambda r: (r["n"] is None, r["n"] or 0, r["dataset"]))


def ml_progress(table: int, root: Path | str = RESULTS) -> dict[str, dict]:
    """Per dataset with stored chunk files of the paper-scale run of Table 2 or 3 (paper reading,
    100 × 1,000; a run in progress, or done): the splits computed so far (``splits``), the
    wall-clock seconds their chunks recorded (``seconds``)."""
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    out = {}
    for d in sorted(p for p in folder.glob("*") if p.is_dir()):
        chunks = [read_json(c) for c in sorted(d.glob("*.json"))]
        if chunks:
            out[d.name] = dict(
                splits=sum(c["n_splits"] for c in chunks),
                seconds=sum(c["seconds"] for c in chunks),
            )
    return out


def hms(seconds: float | None) -> str:
    """Seconds as "12.3 s", "4.5 min" or "11.8 h", one decimal in every unit ("—" for None), so
    that times in one sentence or table read alike."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def hms_cell(seconds: float | None) -> str:
    """:func:`hms` for a table cell: number and unit joined by a no-break space, so a narrow
    column never wraps a duration."""
    return hms(seconds).replace(" ", "\u00a0")


def _unbroken(text: str) -> str:
    """Text a table cell never breaks (no-break spaces and hyphens): "2‑core CPU" stays on one
    line, level with the time beside it."""
    return text.replace(" ", "\u00a0").replace("-", "\u2011")


def _word(n: int) -> str:
    """A count as a word up to ten ("three"), else in digits."""
    words = "zero one two three four five six seven eight nine ten".split()
    return words[n] if 0 <= n < len(words) else f"{n:,}"


def _num(x, fmt: str) -> str:
    return "—" if x is None else format(x, fmt)


def total_markdown(root: Path | str = RESULTS) -> str:
    """The folded block's total (Markdown): the task time of all the stored results of the
    families per computer (:func:`seconds_by_computer`), as recorded; times of different computers
    are not added."""
    from . import sweep

    n = len(sweep.FAMILIES)
    by = seconds_by_computer(root)
    why = (" Why some files record no computer is said under the family table below."
           if NOT_RECORDED in by else "")
    return (
        f"**All stored tasks.** The tasks of the {_word(n)} task families ran for "
        f"{by_computer_text(by)}, each task's own wall-clock time summed "
        "per computer. This is the work of one process at a time; a run on several processes "
        f"takes less wall-clock time.{why}\n"
    )


def kept_in_table_file(table: int, names: list[str]) -> str:
    """The one statement, on the full-reproduction and the status pages, of the datasets of the
    paper-scale run of Table 2 or 3 that have no per-task files for their columns other than
    (OPT): those columns are rows of the table's file only (:func:`ml_costs`, ``chunks`` 0)."""
    from .ml_tables import result_path

    name = result_path(table, "paper", 100, 1000).name
    return (f"the columns other than (OPT) of Table {table}'s {_names(names)} are kept only as "
            f"rows of the table's file, `ml/{name}`, with no per-task files")


def stored_as_sentence(root: Path | str = RESULTS) -> str:
    """How the families' results are stored, in words (Markdown): one file per task, except the
    families kept in one file (only their summed time is recorded) and the datasets of Tables 2
    and 3 kept in one file per dataset."""
    one_file = [
        f"`{r['family']}`" for r in family_costs(root) if r["source"] in AGGREGATES.values()
    ]
    parts = []
    if one_file:
        parts.append(f"{_names(one_file)} are stored in one file each (only their summed time "
                     "is recorded)")
    for table in (2, 3):
        whole = [r["dataset"] for r in ml_costs(table, root) if not r["chunks"]]
        if whole:
            parts.append(kept_in_table_file(table, whole))
    return (
        "Each result is stored in one file per task"
        + (f", except that {'; '.join(parts)}" if parts else "")
        + "."
    )


def _family_where(root: Path | str = RESULTS) -> dict[str, str]:
    """Per task family, its computer column (:func:`computer_label` of :func:`where_computed`):
    Tables 2 and 3 count their splits over every dataset."""
    out = {}
    for fam in where_computed(root):
        counts: dict[str, int] = {}
        for _, c in fam["groups"]:
            for k, v in c.items():
                counts[k] = counts.get(k, 0) + v
        out[fam["family"]] = computer_label(counts, fam["unit"])
    return out


def _times_cell(seconds: dict[str, float], counts: dict[str, int]) -> str:
    """A time cell that never adds times of different computers: the one computer's seconds, or
    each computer's in the order of :func:`computer_label` ("1.4 h + 45.5 min")."""
    if len(seconds) <= 1:
        return hms_cell(sum(seconds.values()) if seconds else None)
    order = sorted(counts, key=lambda c: -counts[c])
    return " + ".join(hms_cell(seconds.get(c)) for c in order)


def costs_markdown(root: Path | str = RESULTS) -> str:
    """The cost tables of the full-reproduction page (Markdown, generated): every row names its
    computer, and no sum adds times of different computers (subtotals per computer instead)."""
    fams = family_costs(root)
    where = _family_where(root)
    lines = [
        "| family | computer | summed | median | largest | memory |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for r in fams:
        largest = "—" if r["largest"] is None else hms_cell(r["largest"][0])
        ml = r["family"] in ("table2", "table3")
        summed = "below" if ml else hms_cell(r["seconds"])
        computer_cell = "several, below" if ml else where.get(r["family"], "—")
        lines.append(
            f"| `{r['family']}` | {computer_cell.replace('not recorded', '—')} | {summed} "
            f"| {hms_cell(r['median'])} | {largest} | {_num(r['peak_mb'], '.0f')} MB |".replace(
                "— MB", "—"
            )
        )
    lines += ["", stored_as_sentence(root) + " A computer shown as — is not recorded: the "
              "files of `figure4` and `counterexample` have no computer field, and the table's "
              "file has only the record of the merge that assembled it, not of the runs that "
              "computed the rows it alone keeps."]
    settings = {
        2: "with the {doc}`Table 2 chapter's </notebooks/31_naive_bayes>` default settings, "
        "its *paper reading* (the choices the paper's text leaves open, read from the text; its "
        "runs with the authors' code settings are in the table of other results below)",
        3: "with the {doc}`Table 3 chapter's </notebooks/32_coordinate_descent>` settings, "
        "its *paper reading* (the choices the paper's text leaves open, read from the text)",
    }
    for table, what in ((2, "naïve Bayes"), (3, "coordinate descent")):
        rows = ml_costs(table, root)
        if not rows:
            continue
        split = {d["dataset"]: d for d in ml_costs_by_computer(table, root)}
        lines += [
            "",
            f"Table {table} ({what}) at 100 splits × 1,000 simulations, per dataset (by number "
            f"of rows, smallest first), {settings[table]}. A column of the table is one "
            "mechanism; *(OPT)* is the column of the paper's data-dependent optimal noise, "
            "which was computed separately, and *other columns* is the time of every other "
            "column (the non-private reference and the other mechanisms):",
            "",
            "| dataset | rows | other columns | computer | (OPT) | computer | memory |",
            "| --- | ---: | ---: | --- | ---: | --- | ---: |",
        ]
        subtotal: dict[str, float] = {}
        shared: list[str] = []  # the datasets whose other columns ran on several computers
        for r in rows:
            d = split[r["dataset"]]
            _add(subtotal, d["main"])
            _add(subtotal, d["dd"])
            dd_where = computer_label(d["where_dd"]) if d["where_dd"] else "—"
            # one line per computer of the other columns, most splits first, each unbroken
            where = sorted(d["where"].items(), key=lambda kv: -kv[1])
            times = "<br>".join(hms_cell(d["main"].get(c)) for c, _ in where)
            labels = "<br>".join(
                _unbroken(short_computer(c).replace(NOT_RECORDED, "—")) for c, _ in where
            )
            if len(where) > 1:
                shared.append(
                    f"the other columns of {r['dataset']} ran "
                    + _names([f"{n:,} splits on the {short_computer(c)}" for c, n in where])
                )
            lines.append(
                f"| {r['dataset']} | {_num(r['n'], ',')} | {times} | {labels} "
                f"| {hms_cell(r['seconds_dd'])} | {_unbroken(dd_where.replace(NOT_RECORDED, '—'))} "
                f"| {_num(r['peak_mb'], '.0f')} MB |".replace("— MB", "—")
            )
        said = "; ".join(shared)
        lines += ["", (f"{said[:1].upper()}{said[1:]} (one line each). " if shared else "")
                  + f"Task time of the {len(rows)} datasets, per computer: "
                  f"{by_computer_text(subtotal)}."]
        done = {r["dataset"] for r in rows}
        running = {d: p for d, p in ml_progress(table, root).items() if d not in done}
        if running:
            lines[-1] += (
                " Not at the paper's scale (the chapter shows a smaller stored run): "
                + "; ".join(
                    f"{d}, {p['splits']} of 100 splits stored, "
                    f"{hms(p['seconds'] / p['splits'])} per split, about "
                    f"{hms(100 * p['seconds'] / p['splits'])} for all 100 at that rate"
                    for d, p in running.items()
                )
                + "."
            )
    return "\n".join(lines) + "\n"


def cells_sentence(root: Path | str = RESULTS) -> str:
    """The settings of every table cell (Markdown), from the code (:func:`repro.tables.solve_cell`
    with :data:`repro.tables.REL_GAP` and :data:`repro.tables.TIME_LIMIT`) and how many stored
    cells (``tables/cells/``) record the same ``rel_gap_target`` and ``time_limit``."""
    from . import tables

    cells = [read_json(f) for f in sorted((Path(root) / "tables" / "cells").glob("*.json"))]
    same = sum(c.get("rel_gap_target") == tables.REL_GAP
               and c.get("time_limit") == tables.TIME_LIMIT for c in cells)
    return (
        "Every table cell is one call, `repro.tables.solve_cell`: "
        f"`dpdro.optimal_noise(problem, rel_gap={tables.REL_GAP:g}, "
        f"time_limit={tables.TIME_LIMIT:g})`, a {100 * tables.REL_GAP:g}% target gap within "
        f"{tables.TIME_LIMIT:g} s of wall-clock time, and nothing else: the engine picks the "
        "grids and whether to place a point mass at 0. "
        f"{same:,} of the {len(cells):,} stored cells record these settings.\n"
    )


def write_costs(root: Path | str = ROOT) -> Path:
    """Write ``book/_generated/costs.md``, ``costs_total.md``, ``costs_defined.md``,
    ``costs_computers.md``, ``costs_slower.md``, ``costs_other.md``, ``costs_cells.md``,
    ``costs_timed.md`` and ``costs_gpu.md`` (all included by ``book/full_reproduction.md``; the
    recorded times, ``costs_computers.md``, ``costs_total.md``, ``costs.md`` and
    ``costs_slower.md``, in a folded block); returns the first."""
    folder = Path(root) / "book" / "_generated"
    folder.mkdir(parents=True, exist_ok=True)
    results = Path(root) / "results"
    (folder / "costs_total.md").write_text(total_markdown(results), encoding="utf-8")
    (folder / "costs_computers.md").write_text(hardware_sentence(results) + "\n",
                                               encoding="utf-8")
    (folder / "costs_defined.md").write_text(computers_defined(results) + "\n",
                                             encoding="utf-8")
    slower = [timed_run_load_sentence(results), *(slower_tasks_sentence(t, results)
                                                   for t in (2, 3))]
    (folder / "costs_slower.md").write_text("\n\n".join(x for x in slower if x) + "\n",
                                            encoding="utf-8")
    (folder / "costs_other.md").write_text(other_markdown(results), encoding="utf-8")
    (folder / "costs_cells.md").write_text(cells_sentence(results), encoding="utf-8")
    (folder / "costs_gpu.md").write_text(
        "\n".join(gpu_costs_markdown(results)).strip() + "\n", encoding="utf-8"
    )
    (folder / "costs_timed.md").write_text(
        "\n".join(timed_run_markdown(results)).strip() + "\n", encoding="utf-8"
    )
    path = folder / "costs.md"
    path.write_text(costs_markdown(results), encoding="utf-8")
    return path


# ----------------------------------------------------------------- per implementation, and the GPU
# under results/, written by scripts/benchmark_pcd_gpu.py
GPU_BENCHMARK = Path("benchmarks") / "pcd_gpu.json"


def ml_split_costs(table: int, root: Path | str = RESULTS) -> dict[str, list[dict]]:
    """Per dataset with per-task files of the paper-scale run of Table 2 or 3 (paper reading,
    100 × 1,000), one dict per implementation that computed its splits, most splits first:
    ``backend`` (the ``backend`` of the task file's ``coordinate_descent`` record, ``"numpy"``
    without one), ``device`` (the GPU it names, ``None`` on the CPU), ``splits``, ``seconds`` (the
    summed provenance seconds of its tasks) and ``per_split`` (the median over its tasks of their
    seconds per split). Nothing is typed: every value comes from the task files."""
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    out = {}
    for d in sorted(p for p in folder.glob("*") if p.is_dir()):
        groups: dict[tuple, list[tuple[int, float]]] = {}
        for c in sorted(d.glob("*.json")):
            data = read_json(c)
            seconds = (data.get("provenance") or {}).get("seconds")
            if not isinstance(seconds, (int, float)) or not data.get("n_splits"):
                continue
            impl = data.get("coordinate_descent") or {}
            key = (impl.get("backend", "numpy"), impl.get("device"))
            groups.setdefault(key, []).append((data["n_splits"], float(seconds)))
        if groups:
            out[d.name] = sorted(
                (
                    dict(
                        backend=backend,
                        device=device,
                        splits=sum(k for k, _ in tasks),
                        seconds=sum(s for _, s in tasks),
                        per_split=statistics.median(s / k for k, s in tasks),
                    )
                    for (backend, device), tasks in groups.items()
                ),
                key=lambda r: -r["splits"],
            )
    return out


def gpu_split_costs(root: Path | str = RESULTS) -> dict | None:
    """Table 3 on a GPU, from ``results/benchmarks/pcd_gpu.json`` (``None`` when absent):
    ``device``, ``sims``, ``rows`` (per dataset: ``gpu``, the seconds of one paper-scale split,
    1,000 simulations of all six mechanisms in one process; ``n`` and ``d``, the dataset's rows and
    features after encoding, from the stored Table 3) and
    ``kernel`` (the CUDA and one-thread numba kernels' seconds on one and the same call, measured
    in one run)."""
    from .ml_tables import result_path

    path = Path(root) / GPU_BENCHMARK
    if not path.is_file():
        return None
    bench = read_json(path)
    table = result_path(3, "paper", 100, 1000, root)
    sizes = (
        {k: {"n": r.get("n"), "d": r.get("d")} for k, r in read_json(table)["datasets"].items()}
        if table.is_file() else {}
    )

    return dict(
        device=bench["device"]["device"],
        computer=next(
            (c for c in computers(root) if bench["device"]["device"] in c),
            f"{bench['device']['device']} GPU",
        ),
        sims=bench["sims"],
        rows=[
            dict(dataset=name, gpu=float(seconds), n=sizes.get(name, {}).get("n"),
                 d=sizes.get(name, {}).get("d"))
            for name, seconds in bench["per_split_seconds"].items()
        ],
        kernel=bench.get("adult_gn_T5_seconds"),
    )


def _names(items: list[str]) -> str:
    """["a", "b", "c"] as "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def gpu_costs_markdown(root: Path | str = RESULTS) -> list[str]:
    """The full-reproduction page's section on Table 3 on a GPU (Markdown lines; none without
    the benchmark file): per dataset, the seconds of one paper-scale split on the GPU; the two
    kernels on one call, measured in one run on one computer. The CPU times per split of the
    stored tasks, measured on other computers, stay in their own tables (:func:`costs_markdown`):
    no table or ratio sets times of different computers side by side."""
    g = gpu_split_costs(root)
    if g is None:
        return []
    rows = sorted(g["rows"], key=lambda r: (r["d"] is None, r["d"] or 0, r["dataset"]))
    lines = [
        "",
        f"Seconds per paper-scale split ({g['sims']:,} simulations of the six "
        f"mechanisms) of one process alone on the GPU of the {short_computer(g['computer'])}, per "
        "dataset with its *n* rows and *d* features after encoding (by *d*, smallest first). "
        + stored_devices_sentence(g["computer"], root)
        + (" Where stored tasks took longer per split than these seconds, a paragraph in that "
           "block names them." if slower_tasks_sentence(3, root) else ""),
        "",
        "| dataset | *n* | *d* | GPU |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['dataset']} | {_num(r['n'], ',')} | {_num(r['d'], ',')} | {hms_cell(r['gpu'])} |"
        for r in rows
    ]
    text = [gpu_order_sentence(g["rows"])]
    k = g["kernel"]
    if k:
        # three digits each, and the ratio of the printed values, so a reader can check it
        gpu, cpu = f"{k['cupy']:.3g}", f"{k['numba']:.3g}"
        text.append(
            "On a single kernel call (adult, the classical Gaussian mechanism GN, "
            f"{g['sims']:,} simulations, T = 5 iterations of coordinate descent, not Section "
            "5.3's 100; see "
            "{doc}`Table 3 </notebooks/32_coordinate_descent>`), measured in one run on the "
            f"{short_computer(g['computer'])}, its GPU took {gpu} s and one CPU thread "
            f"{cpu} s, {float(cpu) / float(gpu):.0f} times faster; that ratio is one "
            "call on the largest dataset, not the speed-up of every split "
            "(`scripts/benchmark_pcd_gpu.py`)."
        )
    text = [t for t in text if t]
    if text:
        lines += ["", " ".join(text)]
    return lines


def stored_devices(table: int = 3, root: Path | str = RESULTS) -> dict[str, list[dict]]:
    """Where the per-task files of the paper-scale run of Table 2 or 3 computed their splits, per
    column group (``"other columns"``: the files of each dataset's folder; ``"(OPT)"``: those under
    its ``dd_only/``): one dict per computer (:func:`computer`) and processor, most splits first,
    with ``computer``, ``gpu`` (``True`` where the files' ``coordinate_descent.backend`` is
    ``"cupy"``: the coordinate descent ran on the GPU), ``splits`` and ``datasets``. Nothing is
    typed: every value comes from the task files."""
    gpus = _gpus_by_platform(root)
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    out: dict[str, list[dict]] = {}
    for column, pattern in (("other columns", "*/*.json"), ("(OPT)", "*/dd_only/*.json")):
        counts = _splits_by(folder.glob(pattern), lambda x: (
            computer(x, gpus), (x.get("coordinate_descent") or {}).get("backend") == "cupy",
            x["dataset"]))
        groups: dict[tuple[str, bool], dict] = {}
        for (where, gpu, dataset), n in counts.items():
            if n:
                g = groups.setdefault((where, gpu), dict(splits=0, datasets=set()))
                g["splits"] += n
                g["datasets"].add(dataset)
        if groups:
            out[column] = sorted(
                (dict(computer=c, gpu=gpu, splits=g["splits"], datasets=sorted(g["datasets"]))
                 for (c, gpu), g in groups.items()),
                key=lambda r: -r["splits"],
            )
    return out


def stored_devices_sentence(benchmark: str, root: Path | str = RESULTS) -> str:
    """Where the stored tasks of Table 3 ran (Markdown; empty without per-task files), for the GPU
    section: per column group of :func:`stored_devices`, the splits on each computer and on its
    GPU or CPU; which of them ran on ``benchmark`` (:func:`computer`), the computer of the GPU
    table, and that the times of the other computers cannot be set against that table."""
    where = stored_devices(3, root)
    if not where:
        return ""
    every = {d for groups in where.values() for g in groups for d in g["datasets"]}

    def splits(g: dict) -> str:
        of = "" if set(g["datasets"]) == every else f" of {_names(g['datasets'])}"
        return f"{g['splits']:,} splits{of}"

    def on(g: dict) -> str:
        host = short_computer(g["computer"])
        return (f"the GPU of the {host}" if g["gpu"]
                else f"the CPU of the {host}" if host != g["computer"]
                else f"the {host} (no GPU)")

    clauses = [f"{'its' if i == 0 else 'the'} {column}{' column' * (column == '(OPT)')} ran "
               + _names([f"{splits(g)} on {on(g)}" for g in groups])
               for i, (column, groups) in enumerate(where.items())]
    same = [(column, g) for column, groups in where.items() for g in groups
            if g["computer"] == benchmark]
    apart = [short_computer(c) for c in dict.fromkeys(
        g["computer"] for groups in where.values() for g in groups) if c != benchmark]
    out = ("The times of Table 3's stored tasks are in its own table in the folded block below, "
           f"each on the computer its files record: {'; '.join(clauses)}.")
    if same:
        out += (" Of these, only the " + _names([
            splits(g) + ("" if column == "(OPT)" else " (without the (OPT) column, which the "
                         "seconds above include)") for column, g in same])
            + f" ran on the same computer as the seconds above, the {short_computer(benchmark)}")
        out += ";" if apart else "."
    if apart:
        names = _names([f"the {a}" for a in apart])
        out += (f" {names[:1].upper() if not same else names[:1]}{names[1:]} "
                f"{'is another computer' if len(apart) == 1 else 'are other computers'}, whose "
                "times cannot be set against these.")
    return out


def _ranks(values: list[float]) -> list[float]:
    """Ranks 1..m of ``values`` (ties share their mean rank)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_correlation(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (Pearson's correlation of their ranks)."""
    rx, ry = _ranks(x), _ranks(y)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (sx * sy)


def gpu_order_sentence(rows: list[dict]) -> str:
    """What orders the GPU seconds per split of :func:`gpu_split_costs` (Markdown; empty without
    ``n`` and ``d`` for every dataset): Spearman's rank correlation of the seconds with the rows
    *n*, the features *d* and *n × d*, and, in order of *d*, the datasets that take longer than
    one with more features."""
    if len(rows) < 3 or any(r["n"] is None or r["d"] is None for r in rows):
        return ""
    t = [r["gpu"] for r in rows]
    rho = {k: rank_correlation([f(r) for r in rows], t) for k, f in (
        ("n", lambda r: r["n"]), ("d", lambda r: r["d"]), ("n × d", lambda r: r["n"] * r["d"]))}
    follow = ("the features *d* more than the rows *n*" if rho["d"] > rho["n"]
              else "the rows *n* more than the features *d*" if rho["n"] > rho["d"]
              else "the rows *n* and the features *d* alike")
    slower = [r for r in rows if any(o["d"] > r["d"] and o["gpu"] < r["gpu"] for o in rows)]
    return (
        f"The seconds follow {follow}: their rank correlation "
        f"(Spearman) is {rho['d']:.2f} with *d*, {rho['n × d']:.2f} with *n* × *d* and "
        f"{rho['n']:.2f} with *n*"
        + ("; in order of *d*, " + _names([
            f"{r['dataset']} ({r['n']:,} rows, *d* = {r['d']})" for r in slower])
           + f" take{'s' * (len(slower) == 1)} longer than datasets with more features"
           if slower else "; in order of *d*, every dataset takes longer than those with fewer")
        + "."
    )


# ------------------------------------------------------------- which computer computed each result
NOT_RECORDED = "not recorded"


def computer(data: dict, gpus: dict[str, str] | None = None) -> str:
    """The computer that computed one stored result file, in neutral words, from the file's own
    record: its cores and GPU ("16-core CPU with one NVIDIA H200 GPU", "2-core CPU"), the GPU
    being the one the file's ``coordinate_descent`` record (or a GPU benchmark's ``device``)
    names, else the one ``gpus``
    (:func:`_gpus_by_platform`) gives for the file's platform (a naïve Bayes task on a computer
    with a GPU records none itself); the cores are the provenance's ``cpu_count``, or the
    "N cpus" of an older record's ``machine``; without a core count the GPU alone ("NVIDIA H100
    GPU"), else :data:`NOT_RECORDED`."""
    prov = data.get("provenance") or {}
    bench = data.get("device") if isinstance(data.get("device"), dict) else {}
    device = (
        (data.get("coordinate_descent") or {}).get("device")
        or bench.get("device")  # a GPU benchmark names its device
        or (gpus or {}).get(prov.get("platform"))
    )
    cores = prov.get("cpu_count")
    if not isinstance(cores, int):  # the older record: "vm (x86_64, 2 cpus, shared)"
        found = re.search(r"(\d+) cpus", str(prov.get("machine") or ""))
        cores = int(found.group(1)) if found else None
    if isinstance(cores, int) and cores > 0:
        return f"{cores}-core CPU" + (f" with one {device} GPU" if device else "")
    return f"{device} GPU" if device else NOT_RECORDED


def short_computer(name: str) -> str:
    """A :func:`computer` name as a table's short label: "2-core CPU" stays, a computer with a GPU
    is a host named after its GPU model ("16-core CPU with one NVIDIA H100 80GB HBM3 GPU" and a
    file's "NVIDIA H100 80GB HBM3 GPU" alone -> "H100 host"), so that a label names the computer,
    not the GPU, as what did the work."""
    if " with one " in name or name.endswith(" GPU"):
        model = name.split(" with one ", 1)[-1].removesuffix(" GPU")
        return f"{model.split()[1] if model.startswith('NVIDIA ') else model} host"
    return name


def computer_label(counts: dict[str, int], unit: str = "splits") -> str:
    """``{computer: count}`` as a short cell: the one computer's label, or the counts per computer
    ("H100 host 98 + 2-core CPU 2 splits"), most first."""
    if len(counts) == 1:
        return short_computer(next(iter(counts)))
    parts = sorted(counts.items(), key=lambda kv: -kv[1])
    return " + ".join(f"{short_computer(c)} {n:,}" for c, n in parts) + f" {unit}"


def _seconds_by(files, gpus: dict[str, str]) -> dict[str, float]:
    """``{computer: summed provenance seconds}`` over result files (:func:`computer` of each)."""
    out: dict[str, float] = {}
    for f in sorted(files):
        data = read_json(f)
        seconds = (data.get("provenance") or {}).get("seconds")
        if isinstance(seconds, (int, float)):
            where = computer(data, gpus)
            out[where] = out.get(where, 0.0) + float(seconds)
    return out


def _add(into: dict[str, float], more: dict[str, float]) -> dict[str, float]:
    for k, v in more.items():
        into[k] = into.get(k, 0.0) + v
    return into


def ml_costs_by_computer(table: int, root: Path | str = RESULTS) -> list[dict]:
    """Per dataset of :func:`ml_costs` (same order): ``dataset``, ``main`` and ``dd``, each
    ``{computer: seconds}``: the columns other than (OPT) (its per-task files, else the row's
    ``seconds`` under :data:`NOT_RECORDED`) and the separately computed (OPT) column (its files
    under ``dd_only/``, else :data:`NOT_RECORDED`; empty when not recomputed); ``where`` and
    ``where_dd``, ``{computer: splits}`` of the same files."""
    from .ml_tables import result_path

    path = result_path(table, "paper", 100, 1000, root)
    if not path.is_file():
        return []
    rows = read_json(path)["datasets"]
    gpus = _gpus_by_platform(root)
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    out = []
    for r in ml_costs(table, root):
        name = r["dataset"]
        main_seconds = r["seconds"] - (r["seconds_dd"] or 0.0)
        files = sorted((folder / name).glob("*.json"))
        main = _seconds_by(files, gpus) if r["chunks"] else {NOT_RECORDED: main_seconds}
        where = _splits_by(files, lambda x: computer(x, gpus)) or {NOT_RECORDED: 100}
        dd_files = sorted((folder / name / "dd_only").glob("*.json"))
        dd: dict[str, float] = {}
        where_dd: dict[str, int] = {}
        if rows[name].get("seconds_dd") is not None:
            where_dd = _splits_by(dd_files, lambda x: computer(x, gpus)) or {NOT_RECORDED: 100}
            if len(where_dd) == 1:
                dd = {next(iter(where_dd)): float(rows[name]["seconds_dd"])}
            else:
                dd = _seconds_by(dd_files, gpus)
        out.append(dict(dataset=name, main=main, dd=dd, where=where, where_dd=where_dd))
    return out


def ml_file_seconds(path: Path | str, root: Path | str = RESULTS) -> dict[str, float]:
    """``{computer: seconds}`` of one stored run of Tables 2 and 3 (``results/ml/tableT_RUN.json``):
    the paper-scale run as :func:`ml_costs_by_computer` counts it (the page's per-dataset
    tables); any other run, its per-task files under ``results/sweep/tableT/RUN/`` (the (OPT)
    column computed separately) plus the rest of :func:`result_seconds` under the file's own
    computer. The single source of both the cost page's and the status page's times."""
    path = Path(path)
    fam, run = path.stem.split("_", 1)
    if run == "paper_100x1000":
        out: dict[str, float] = {}
        for d in ml_costs_by_computer(int(fam[-1]), root):
            _add(out, d["main"])
            _add(out, d["dd"])
        return out
    gpus = _gpus_by_platform(root)
    data = read_json(path)
    tasks = _seconds_by((Path(root) / "sweep" / fam / run).glob("**/*.json"), gpus)
    rest = (result_seconds(data) or 0.0) - sum(tasks.values())
    return _add({computer(data, gpus): rest} if rest > 0 else {}, tasks)


def seconds_by_computer(root: Path | str = RESULTS) -> dict[str, float]:
    """The task time of all the stored results of :data:`repro.sweep.FAMILIES`, per computer
    (:func:`computer`): each family's tasks, Tables 2 and 3 per dataset with their (OPT) columns
    (:func:`ml_costs_by_computer`), a family stored in one file under that file's computer."""
    from . import sweep

    gpus = _gpus_by_platform(root)
    out: dict[str, float] = {}
    for r in family_costs(root):
        name = r["family"]
        if name in ("table2", "table3"):
            for d in ml_costs_by_computer(int(name[-1]), root):
                _add(out, d["main"])
                _add(out, d["dd"])
        elif r["source"] == "per-task files":
            files = [t for t in sweep.family(name).tasks(root, "paper", {})]
            for t in files:
                res = sweep.load_result(t)
                secs = ((res or {}).get("provenance") or {}).get("seconds")
                if isinstance(secs, (int, float)):
                    _add(out, {computer(res, gpus): float(secs)})
        elif r["source"]:
            _add(out, {computer(read_json(Path(root) / r["source"]), gpus): r["seconds"] or 0.0})
    return out


def by_computer_text(seconds: dict[str, float]) -> str:
    """``{computer: seconds}`` as "8.6 h on the 2-core CPU and 24.0 min on the H200 host", most
    first (each time joined to its unit by a no-break space); work whose files record no
    computer reads "in work that records no computer" (it is not a further computer)."""
    parts = sorted(seconds.items(), key=lambda kv: -kv[1])
    return _names([
        f"{hms_cell(s)} " + ("in work that records no computer" if c == NOT_RECORDED
                        else f"on the {short_computer(c)}")
        for c, s in parts
    ])


def _splits_by(files, describe) -> dict:
    """``{describe(data): splits}`` over per-task result files of Tables 2 and 3 (each counts its
    ``n_splits``)."""
    counts: dict[str, int] = {}
    for f in sorted(files):
        data = read_json(f)
        key = describe(data)
        counts[key] = counts.get(key, 0) + int(data.get("n_splits") or 0)
    return counts


def _gpus_by_platform(root: Path | str = RESULTS) -> dict[str, str]:
    """``{platform: GPU name}`` from the per-task files of Tables 2 and 3 that record the GPU they
    ran on (``coordinate_descent.device``); a file of the same platform that records no GPU (a
    naïve Bayes task) ran on the same computer."""
    out: dict[str, str] = {}
    for f in sorted((Path(root) / "sweep").glob("table[23]/paper_100x1000/*/**/*.json")):
        data = read_json(f)
        device = (data.get("coordinate_descent") or {}).get("device")
        platform = (data.get("provenance") or {}).get("platform")
        if device and platform:
            out.setdefault(platform, device)
    return out


def where_computed(root: Path | str = RESULTS) -> list[dict]:
    """Per task family of :data:`repro.sweep.FAMILIES` with stored results: ``family``, ``unit``
    ("tasks"; "splits" for Tables 2 and 3; "runs" for a family stored in one aggregate file) and
    ``groups``, a list of (subject, {computer: count}) where subject is ``None`` for the whole
    family or a dataset of Tables 2 and 3.

    Each per-task file counts one task (Tables 2 and 3: its ``n_splits`` splits) under
    :func:`computer` of the file. A family stored only in its aggregate file (:data:`AGGREGATES`)
    counts one run under that file's :func:`computer`. A dataset of Tables 2 and 3 stored only in
    the table's file counts its 100 splits under :data:`NOT_RECORDED`: that file's provenance
    records the merge that wrote it, not the run that computed the dataset."""
    from . import sweep
    from .ml_tables import result_path

    gpus = _gpus_by_platform(root)
    out = []
    for name in sweep.FAMILIES:
        if name in ("table2", "table3"):
            folder = Path(root) / "sweep" / name / "paper_100x1000"
            groups: dict[str, dict[str, int]] = {}
            for d in sorted(p for p in folder.glob("*") if p.is_dir()):
                if counts := _splits_by(d.glob("*.json"), lambda x: computer(x, gpus)):
                    groups[d.name] = counts
            path = result_path(int(name[-1]), "paper", 100, 1000, root)
            if path.is_file():
                for ds in read_json(path)["datasets"]:
                    groups.setdefault(ds, {NOT_RECORDED: 100})
            if groups:
                out.append(dict(family=name, unit="splits", groups=sorted(groups.items())))
            continue
        counts = {}
        for t in sweep.family(name).tasks(root, "paper", {}):
            if (r := sweep.load_result(t)) is not None:
                where = computer(r, gpus)
                counts[where] = counts.get(where, 0) + 1
        if counts:
            out.append(dict(family=name, unit="tasks", groups=[(None, counts)]))
        elif name in AGGREGATES and (Path(root) / AGGREGATES[name]).is_file():
            where = computer(read_json(Path(root) / AGGREGATES[name]), gpus)
            out.append(dict(family=name, unit="runs", groups=[(None, {where: 1})]))
    return out


def dd_recomputed(table: int, root: Path | str = RESULTS) -> list[dict]:
    """Per dataset of Table 2 or 3 at 100 × 1,000 whose (OPT) column was computed separately from
    the other columns (its row stores ``seconds_dd``): ``dataset``, ``seconds`` (``seconds_dd``) and
    ``where``, ``{computer: splits}`` over its per-task files under ``dd_only/`` (:func:`computer`;
    :data:`NOT_RECORDED` for 100 splits without such files)."""
    from .ml_tables import result_path

    path = result_path(table, "paper", 100, 1000, root)
    if not path.is_file():
        return []
    gpus = _gpus_by_platform(root)
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    out = []
    for name, row in read_json(path)["datasets"].items():
        if row.get("seconds_dd") is None:
            continue
        where = _splits_by(
            (folder / name / "dd_only").glob("*.json"), lambda d: computer(d, gpus)
        )
        out.append(
            dict(dataset=name, seconds=float(row["seconds_dd"]), where=where or {NOT_RECORDED: 100})
        )
    return out


def computers(root: Path | str = RESULTS) -> list[str]:
    """Every computer (:func:`computer`) that a stored result the chapters read records: the
    families' tasks (:func:`where_computed`), the separately computed (OPT) columns
    (:func:`dd_recomputed`) and the other results (:data:`OTHER_RESULTS`); fewest cores first."""
    found = {c for fam in where_computed(root) for _, counts in fam["groups"] for c in counts}
    found |= {c for t in (2, 3) for r in dd_recomputed(t, root) for c in r["where"]}
    gpus = _gpus_by_platform(root)
    found |= {
        computer(read_json(f), gpus)
        for _, pattern, _, _ in other_results(root)
        for f in sorted(Path(root).glob(pattern))
    }
    found.discard(NOT_RECORDED)
    # a file that records only its GPU ran on the computer with cores that has that GPU
    found = {c for c in found if not any(c != o and o.endswith(f" with one {c}") for o in found)}

    def cores(name: str) -> tuple[int, str]:
        head = name.split("-core", 1)[0]
        return (int(head) if head.isdigit() else 0, name)

    return sorted(found, key=cores)


def computers_defined(root: Path | str = RESULTS) -> str:
    """The one sentence (Markdown) that defines the computers the stored results record
    (:func:`computers`), each by its short label (:func:`short_computer`, as the *computer*
    columns and the status page name it) and what it is; empty when none is recorded. Shared by
    the full-reproduction and the status pages."""
    names = computers(root)
    if not names:
        return ""
    defs = [
        f"*{short_computer(c)}*, a computer with "
        + (f"{c.split('-core')[0]} processor cores and " if "-core" in c else "")
        + (f"one {c.split(' with one ', 1)[-1]}" if c.endswith(" GPU") else "no GPU")
        for c in names
    ]
    return (f"The stored results name {_word(len(names))} computer"
            f"{'s' * (len(names) > 1)}: {'; '.join(defs)}.")


def hardware_sentence(root: Path | str = RESULTS) -> str:
    """The folded block's statement of the computers (Markdown): the tables' *computer* column
    names one of those of :func:`computers_defined`, or none; which computation uses a GPU; and
    that times of different computers are never set against each other."""
    names = computers(root)
    if not names:
        return ""
    gpu = any(short_computer(c) != c for c in names)
    known = NOT_RECORDED in seconds_by_computer(root)
    return (
        "The *computer* column of the tables below names the computer that ran the tasks"
        + ("; the rest of the stored work records no computer (— in that column), and the "
           "next paragraph gives how much." if known else ".")
        + (" Only the coordinate descent of Table 3 runs on a GPU where one is present "
           "(`repro.experiments.pcd_train`); every other computation runs on the CPU." if gpu
           else "")
        + " Times are comparable only within one computer, and no sum or ratio on this page "
        "sets times of different computers against each other."
    )


# ------------------------------------------------------ the other results the chapters read
# (command: a script under scripts/ and its options; what it writes under results/, as shown; the
# files that hold its cost; who reads it). The stored runs of Tables 2 and 3 other than the
# families' own files are added from their files by :func:`ml_run_results`.
OTHER_RESULTS = (
    ("`where_it_pays.py`", "`where_it_pays.json`", "where_it_pays.json",
     "{doc}`Where it pays </notebooks/07_where_it_pays>`"),
    ("`run_crossover.py`", "`composition/crossover/`", "composition/crossover/*.json",
     "{doc}`Composition </notebooks/06_composition>`"),
    ("`benchmark_data_dependent.py`", "`benchmarks/data_dependent.json`",
     "benchmarks/data_dependent.json", "{doc}`Figure 3 </notebooks/23_figure3>`"),
    ("`findings_corollary1.py`", "`findings/corollary1.json`",
     "findings/corollary1.json", "{doc}`Findings </notebooks/91_findings>`"),
    ("`findings_eps5.py`", "`findings/eps5_cell_infimum.json`",
     "findings/eps5_cell_infimum.json", "{doc}`Findings </notebooks/91_findings>`"),
    ("`benchmark_pcd_gpu.py`", "`benchmarks/pcd_gpu.json`", "benchmarks/pcd_gpu.json",
     "this page"),
    ("`record_timed_run.py DIR --table 3 --dataset adult`",
     "`benchmarks/timed_table3_adult.json`", "benchmarks/timed_table3_adult.json", "this page"),
    ("`benchmark_data_independent.py --targets 0.01 --out "
     "results/benchmarks/data_independent_1pct.json`",
     "`benchmarks/data_independent_1pct.json`", "benchmarks/data_independent_1pct.json",
     "no chapter"),
    ("`benchmark_random_points.py --out results/benchmarks/random_points`",
     "`benchmarks/random_points.json`", "benchmarks/random_points.json", "no chapter"),
    ("`benchmark_random_points.py --out results/benchmarks/random_points_shifted`",
     "`benchmarks/random_points_shifted.json`", "benchmarks/random_points_shifted.json",
     "no chapter"),
    ("`benchmark_random_points.py --out results/benchmarks/random_points_supports --supports`",
     "`benchmarks/random_points_supports.json`", "benchmarks/random_points_supports.json",
     "no chapter"),
    ("`benchmark_random_points.py --out results/benchmarks/one_sided_l1_grid --one-sided-grid`",
     "`benchmarks/one_sided_l1_grid.json`", "benchmarks/one_sided_l1_grid.json", "no chapter"),
    ("`benchmark_pcd.py --out results/ml/benchmark_pcd.json`", "`ml/benchmark_pcd.json`",
     "ml/benchmark_pcd.json", "no chapter"),
)
# the stored input that no command recomputes (what it is under results/; the script that checks
# it; who reads it)
STORED_INPUTS = (
    ("counterexamples/nonuniform_partition.json", "check_nonuniform_lower_bound.py",
     "{doc}`Non-uniform bounds </notebooks/17_nonuniform_bounds>` and "
     "{doc}`Findings </notebooks/91_findings>`"),
)
# the chapter that reads the stored runs of each of Tables 2 and 3
ML_READERS = {
    2: "{doc}`Table 2 </notebooks/31_naive_bayes>`",
    3: "{doc}`Table 3 </notebooks/32_coordinate_descent>`",
}


def ml_run_command(path: Path | str) -> str:
    """The command that recomputes a stored run of Table 2 or 3
    (``results/ml/tableT_VARIANT_SxN.json``), read from the file itself: the function call its
    provenance records (``call``, run as ``python -c``), else the sweep family ``tableT`` with the
    variant, splits and simulations its name gives and its datasets (none named when it holds
    every dataset, the sweep's default)."""
    data = read_json(path)
    prov = data.get("provenance") or {}
    if prov.get("call"):
        call = str(prov["call"])
        module = call.split("(", 1)[0].rsplit(".", 1)[0]
        return f'-c "import {module}; {call}"'
    table, variant, size = Path(path).stem.split("_")[:3]
    splits, sims = size.split("x")
    words = [f"sweep.py {table}"]
    if variant != "paper":
        words.append(f"--variant {variant}")
    words += [f"--splits {splits}", f"--sims {sims}"]
    held = list(data.get("datasets") or {})
    left_out = [d for d in available_datasets() if d not in held]
    if left_out:  # the shorter of the two ways to name the file's datasets
        words.append(min(f"--datasets {','.join(held)}", f"--skip {','.join(left_out)}",
                         key=len))
    return " ".join(words)


def ml_run_results(root: Path | str = RESULTS) -> tuple:
    """Entries of :data:`OTHER_RESULTS`'s form for every stored run of Tables 2 and 3 under
    ``results/ml/`` that is not the paper-scale file of the ``table2``/``table3`` sweep families
    (``tableT_paper_100x1000.json``), each with :func:`ml_run_command`; by table, largest first."""
    def size(p: Path) -> tuple:
        s, n = (int(x) for x in p.stem.rsplit("_", 1)[-1].split("x"))
        return (p.stem.split("_")[0], -s, -n, p.stem)

    files = [
        p for p in Path(root).glob("ml/table*_*_*x*.json")
        if not p.stem.endswith("_paper_100x1000")
    ]
    return tuple(
        (f"`{ml_run_command(p)}`", f"`ml/{p.name}`", f"ml/{p.name}",
         ML_READERS[int(p.stem[5])])
        for p in sorted(files, key=size)
    )


def other_results(root: Path | str = RESULTS) -> tuple:
    """:data:`OTHER_RESULTS` and the stored runs of Tables 2 and 3 (:func:`ml_run_results`)."""
    return OTHER_RESULTS + ml_run_results(root)


def result_seconds(data: dict) -> float | None:
    """The wall-clock seconds one stored result file records for computing it: for a file of
    Tables 2 and 3 (``datasets``), its rows' ``seconds`` plus ``seconds_dd`` (the (OPT) column
    computed separately), as :func:`ml_costs` counts them; else its provenance's ``seconds``;
    else, for a benchmark, which records the times it measures but not its own,
    :func:`measured_seconds`; ``None`` when it records none of these."""
    if isinstance(data.get("datasets"), dict):
        rows = data["datasets"].values()
        if all(isinstance(r.get("seconds"), (int, float)) for r in rows):
            return sum(r["seconds"] + (r.get("seconds_dd") or 0.0) for r in rows)
        return None
    seconds = (data.get("provenance") or {}).get("seconds")
    if isinstance(seconds, (int, float)):
        return float(seconds)
    return measured_seconds(data)


def measured_seconds(data: dict) -> float | None:
    """The seconds of the runs a benchmark file times (``None`` when it times none): the
    ``seconds`` of each run it lists (a dict in one of its top-level lists) and the numbers of
    its top-level dicts named ``*_seconds`` (one timing per entry). A benchmark records the
    times it measures, not its own running time: their sum is the bulk of it."""
    total, found = 0.0, False
    for key, value in data.items():
        if key == "provenance":
            continue
        if isinstance(value, list):
            for run in value:
                if isinstance(run, dict) and isinstance(run.get("seconds"), (int, float)):
                    total, found = total + float(run["seconds"]), True
        elif key.endswith("_seconds") and isinstance(value, dict):
            for v in value.values():
                if isinstance(v, (int, float)):
                    total, found = total + float(v), True
    return total if found else None


def other_costs(root: Path | str = RESULTS) -> list[dict]:
    """One dict per entry of :data:`OTHER_RESULTS` whose files are stored: ``command``,
    ``writes``, ``reader``, ``files`` (how many), ``seconds``, the sum of
    :func:`result_seconds` over its files (``None`` if any file records none), and ``datasets``,
    the datasets its files hold (Tables 2 and 3; else empty), ``where``, ``{computer: files}``
    over its files and the per-task files of its run under ``results/sweep/`` (the (OPT) column
    of Table 2's runs, computed separately), ``task_folder`` (the parts of that folder, or
    ``None``) and ``task_seconds`` (their summed seconds, included in ``seconds``)."""
    gpus = _gpus_by_platform(root)
    out = []
    for command, writes, pattern, reader in other_results(root):
        files = sorted(Path(root).glob(pattern))
        if not files:
            continue
        data = [read_json(f) for f in files]
        secs = [result_seconds(d) for d in data]
        task_files = [
            t
            for f in files
            if f.parent.name == "ml" and "_" in f.stem
            for t in sorted(
                (Path(root) / "sweep" / f.stem.split("_", 1)[0] / f.stem.split("_", 1)[1])
                .glob("**/*.json")
            )
        ]
        where: dict[str, int] = {}
        for d in [*data, *(read_json(t) for t in task_files)]:
            c = computer(d, gpus)
            where[c] = where.get(c, 0) + 1
        out.append(
            dict(
                command=command,
                writes=writes,
                reader=reader,
                files=len(files),
                seconds=None if None in secs else sum(secs),
                datasets=[n for d in data for n in d.get("datasets") or {}],
                where=where,
                task_folder=(
                    task_files[0].relative_to(root).parts[:3] if task_files else None
                ),
                task_seconds=sum(_seconds_by(task_files, gpus).values()) if task_files else None,
            )
        )
    return out


# the title of the folded block of :func:`other_markdown` that says how its times are counted
OTHER_NOTES_TITLE = "How the times of this table are counted"


def other_markdown(root: Path | str = RESULTS) -> str:
    """The page's table of the other results the chapters read (Markdown): what computes each,
    what it writes, the computer, its recorded wall-clock time (:func:`other_costs`) and who reads
    it; the long commands in full (``--datasets D`` written out as the datasets the file holds);
    then, in a folded block (:data:`OTHER_NOTES_TITLE`), how the (OPT) column's per-task files
    add up, and which results record no time of their own; then the stored inputs."""
    rows = other_costs(root)
    long = [r for r in rows if short_command(r["command"]) != r["command"]]
    mark = {r["command"]: f"({chr(ord('a') + k)})" for k, r in enumerate(long)}
    lines = [
        "| command: what it writes, under `results/` | computer | time | read by |",
        "| --- | --- | ---: | --- |",
        *(
            f"| {short_command(r['command'])}"
            + (f" {mark[r['command']]}" if r["command"] in mark else "")
            + f": {r['writes']} "
            f"| {computer_label(r['where'], 'files').replace(NOT_RECORDED, '—')} "
            f"| {hms_cell(r['seconds'])} | {r['reader']} |"
            for r in rows
        ),
    ]
    if long:
        block = []
        for r in long:
            command = r["command"].strip("`")
            command = ".venv/bin/python " + ("" if command.startswith("-c ") else "scripts/") \
                + command
            block += [f"# {mark[r['command']]} {r['writes'].replace('`', '')}",
                      *_shell_lines(command)]
        marks = _names([mark[r["command"]] for r in long])
        lines += ["", f"The command{'s' * (len(long) > 1)} marked {marks} in full:", "",
                  "```bash", *block, "```"]
    notes = ["The time column sums the wall-clock seconds each result file records; a "
             "benchmark, which records the times it measures but not its own, shows the sum of "
             "the runs it times."]
    split = [r for r in rows if r["task_seconds"] is not None and r["seconds"] is not None]
    if split:
        notes.append(
            "In "
            + _names([r["writes"] for r in split])
            + ", the (OPT) column was computed separately, one file per task under "
            + _names([f"`results/{'/'.join(r['task_folder'])}/`" for r in split])
            + " ("
            + _names([hms(r["task_seconds"]) for r in split])
            + "); the rest of each time ("
            + _names([hms(r["seconds"] - r["task_seconds"]) for r in split])
            + ") is the other columns' seconds stored in the result file."
        )
    marked = [r for r in rows if r["command"] in mark]
    timed = [r for r in marked if r["command"].startswith("`record_timed_run.py")
             and r["seconds"] is not None]
    if timed:
        notes.append(f"{mark[timed[0]['command']]} only records a finished run: its "
                     f"{hms(timed[0]['seconds'])} is the wall-clock time of the `sweep.py` run it "
                     "records ([the largest dataset in one run](#the-largest-dataset-in-one-run)).")
    single = [r for r in marked if r["command"].startswith("`sweep.py") and not r["task_folder"]]
    if single:
        scripts = sorted({str((read_json(Path(root) / r["writes"].strip("`")).get("provenance")
                               or {}).get("command") or "").split(" ", 1)[0] for r in single})
        one = len(single) == 1
        notes.append(
            f"The stored file{'s' * (not one)} {_names([mark[r['command']] for r in single])} "
            f"{'was' if one else 'were each'} computed in one process"
            + (f" by {_names([f'`{x}`' for x in scripts if x])} (the command each file records)"
               if any(scripts) else "")
            + " and "
            + ("has" if one else "have") + " no per-task files; the `sweep.py` command given "
            "recomputes the same splits and simulations, writing per-task files under "
            "`results/sweep/` and merging them into a file of the same name under `results/ml/`."
        )
    untimed = [short_command(r["command"]) for r in rows if r["seconds"] is None]
    if untimed:
        one = len(untimed) == 1
        notes.append(f"{_names(untimed)} record{'s' * one} what {'it' if one else 'they'} "
                     f"measure{'s' * one} but no running time of {'its' if one else 'their'} "
                     "own and no runs timed in seconds (—).")
    return "\n".join([*lines, "", f"````{{dropdown}} {OTHER_NOTES_TITLE}", " ".join(notes),
                      "````", *inputs_markdown(root)]) + "\n"


def inputs_markdown(root: Path | str = RESULTS) -> list[str]:
    """The paragraphs on the stored inputs (:data:`STORED_INPUTS`) that are stored: no command
    recomputes them; what each is (a partition of ``dpdro.optimal_noise`` for the problem its file
    records), that it records no computing time, the script that checks it
    (:func:`repro.counterexamples.check`) and who reads it. No code version or date: what the
    reader needs is the input and its check."""
    out = []
    for rel, script, reader in STORED_INPUTS:
        path = Path(root) / rel
        if not path.is_file():
            continue
        problem = read_json(path).get("problem") or {}
        setting = ", ".join(
            f"${sym} = {problem[key]:g}$"
            for key, sym in (("epsilon", "\\eps"), ("delta", "\\delta"),
                             ("sensitivity", "\\Delta f"))
            if key in problem
        )
        if problem.get("loss"):
            loss = problem["loss"]
            setting += ", " + (f"$\\ell_{loss[1:]}$" if re.fullmatch(r"l\d+", loss) else loss) \
                + " loss"
        out += ["", f"**Stored input.** `results/{rel}` is read by {reader}: no command "
                "recomputes it. It is a non-uniform partition produced by "
                "`dpdro.optimal_noise`"
                + (f" ({setting})" if setting else "")
                + ", and records no computing time and no computer. "
                f"`scripts/{script}` checks it: on its partition, the paper's "
                "$D(\\pi, \\beta)$ exceeds the loss of a certified private noise, and `dpdro`'s "
                "valid lower bound does not "
                f"(`nice -n 10 .venv/bin/python scripts/{script}`)."]
    return out


def _shell_lines(command: str, width: int = 78) -> list[str]:
    """A shell command as lines of at most ``width`` characters plus the continuation `` \\``,
    an option never parted from its value; continuation lines indented four spaces."""
    units: list[str] = []
    for word in command.split():
        if units and units[-1].startswith("--") and " " not in units[-1] \
                and not word.startswith("-"):
            units[-1] += f" {word}"
        else:
            units.append(word)
    lines = [units[0]]
    for unit in units[1:]:
        if len(lines[-1]) + 1 + len(unit) > width - 2:
            lines[-1] += " \\"
            lines.append("    " + unit)
        else:
            lines[-1] += " " + unit
    return lines


def short_command(command: str) -> str:
    """A command of :data:`OTHER_RESULTS` as a table cell: a command line with options is cut
    before its first option (the page gives it in full below the table), so no cell wraps a
    long option list."""
    if command.startswith("`-c "):
        return "`" + command.split(";", 1)[1].split("(", 1)[0].strip() + "`"
    if " --" not in command:
        return command
    return command.split(" --", 1)[0].rstrip("`") + "`"


# ------------------------------------------------------ one dataset's paper-scale run, timed whole
# under results/, written by scripts/record_timed_run.py from a finished sweep run
TIMED_RUNS = "benchmarks/timed_table*_*.json"
_START = re.compile(r"^(\S+) start on (\S+): (.*) \| (\d+) tasks, (\d+) done, (\d+) to run")
_END = re.compile(r"^(\S+) end: (\d+) computed, (\d+) failed, (\d+) not run, (\d+) skipped")


def run_sessions(run_root: Path | str) -> list[dict]:
    """The sessions of a sweep run kept under ``run_root`` (its log files,
    ``sweep/logs/*.log``, oldest first), one dict each: ``start`` and ``end`` (ISO times, ``end``
    ``None`` for a session that never wrote its end line), ``command``, ``to_run``, ``done``
    (tasks finished before the session), ``computed``, ``failed`` and ``seconds`` (the session's
    wall-clock time, from its two log lines)."""
    from datetime import datetime

    sessions = []
    for log in sorted((Path(run_root) / "sweep" / "logs").glob("*.log")):
        for line in log.read_text(encoding="utf-8").splitlines():
            if m := _START.match(line):
                sessions.append(dict(start=m[1], end=None, command=m[3], to_run=int(m[6]),
                                     done=int(m[5]), computed=None, failed=None, seconds=None))
            elif (m := _END.match(line)) and sessions and sessions[-1]["end"] is None:
                s = sessions[-1]
                s.update(end=m[1], computed=int(m[2]), failed=int(m[3]),
                         seconds=(datetime.fromisoformat(m[1])
                                  - datetime.fromisoformat(s["start"])).total_seconds())
    return sorted(sessions, key=lambda s: s["start"])


def timed_run_record(run_root: Path | str, table: int, dataset: str,
                     root: Path | str = RESULTS) -> dict:
    """One dataset of Table 2 or 3 at the paper's scale (paper reading, 100 × 1,000), computed by
    ``scripts/sweep.py`` into ``run_root`` and timed whole: the sessions of the run
    (:func:`run_sessions`) and their wall-clock seconds (``wall_seconds``: their sum; one
    session means one uninterrupted run), each task's seconds and the 1-minute load average when
    it started, the computer (:func:`computer`), the code's provenance and kernel record, and its
    agreement with the stored run of the same dataset (``root/ml/tableT_paper_100x1000.json``):
    the largest absolute difference of any per-split error, per mechanism and sample, over the
    splits both hold (errors are fractions)."""
    from .ml_tables import result_path

    folder = Path(run_root) / "sweep" / f"table{table}" / "paper_100x1000" / dataset
    tasks = [read_json(f) for f in sorted(folder.glob("*.json"))]
    if not tasks:
        raise FileNotFoundError(f"no task files under {folder}")
    sessions = run_sessions(run_root)
    if not sessions or any(s["end"] is None for s in sessions):
        raise ValueError(f"the run under {run_root} has not ended (its log has no end line)")
    stored = read_json(result_path(table, "paper", 100, 1000, root))["datasets"][dataset]
    diff: dict[str, dict[str, float]] = {}
    for t in tasks:
        first = t["task"]["params"]["first"]
        for sample, columns in t["per_split"].items():
            for name, values in columns.items():
                ref = stored["per_split"][sample][name][first:first + len(values)]
                worst = max(abs(a - b) for a, b in zip(values, ref, strict=True))
                row = diff.setdefault(sample, {})
                row[name] = max(row.get(name, 0.0), worst)
    prov = dict(tasks[0]["provenance"])
    for key in ("seconds", "worker_pid", "load_average_1min_start", "max_rss_mb", "date_utc"):
        prov.pop(key, None)
    return dict(
        table=table,
        dataset=dataset,
        splits=sum(t["task"]["params"]["count"] for t in tasks),
        sims=tasks[0]["task"]["params"]["sims"],
        computer=computer(tasks[0]),
        sessions=sessions,
        wall_seconds=sum(s["seconds"] for s in sessions),
        task_seconds=[t["provenance"]["seconds"] for t in tasks],
        load_average_1min_start=[t["provenance"].get("load_average_1min_start") for t in tasks],
        max_rss_mb=max(t["provenance"].get("max_rss_mb") or 0.0 for t in tasks),
        coordinate_descent=tasks[0].get("coordinate_descent"),
        provenance=prov,
        stored_coordinate_descent=stored.get("coordinate_descent"),
        max_abs_difference=diff,
    )


def stored_task_context(table: int, root: Path | str = RESULTS) -> list[dict]:
    """Per dataset and computer of the per-task files of the paper-scale run of Table 2 or 3
    (the columns other than (OPT)): ``dataset``, ``computer`` (:func:`computer`), ``splits``,
    ``per_split`` (median seconds per split), ``kernel`` (the ``kernel`` entries of the tasks'
    ``coordinate_descent`` records, ``None`` for a record without one), ``load`` (median 1-minute
    load average at task start, ``None`` when not recorded) and ``jobs`` (the ``--jobs`` values
    of the tasks' commands): what the files record that can explain their times."""
    gpus = _gpus_by_platform(root)
    folder = Path(root) / "sweep" / f"table{table}" / "paper_100x1000"
    groups: dict[tuple[str, str], list[dict]] = {}
    for d in sorted(p for p in folder.glob("*") if p.is_dir()):
        for c in sorted(d.glob("*.json")):
            data = read_json(c)
            if isinstance((data.get("provenance") or {}).get("seconds"), (int, float)) \
                    and data.get("n_splits"):
                groups.setdefault((d.name, computer(data, gpus)), []).append(data)
    out = []
    for (name, where), tasks in groups.items():
        provs = [t["provenance"] for t in tasks]
        loads = [p["load_average_1min_start"] for p in provs
                 if isinstance(p.get("load_average_1min_start"), (int, float))]
        jobs = {int(m[1]) for p in provs
                if (m := re.search(r"--jobs (\d+)", str(p.get("command") or "")))}
        out.append(dict(
            dataset=name, computer=where, splits=sum(t["n_splits"] for t in tasks),
            per_split=statistics.median(p["seconds"] / t["n_splits"]
                                        for p, t in zip(provs, tasks, strict=True)),
            kernel={(t.get("coordinate_descent") or {}).get("kernel") for t in tasks},
            load=statistics.median(loads) if loads else None,
            jobs=jobs,
        ))
    return out


def slower_tasks_sentence(table: int, root: Path | str = RESULTS, factor: float = 1.5) -> str:
    """Which stored tasks of Table 2 or 3 took longer per split than the page's references, one
    clause per dataset and computer with what their files record (:func:`stored_task_context`)
    and nothing else: on a CPU the reference is the timed run (:data:`TIMED_RUNS`) on the same
    computer, on a GPU the GPU benchmark of the same dataset (:func:`gpu_split_costs`); a group is
    named when its median per split exceeds ``factor`` times the reference. A group whose files
    show no difference from the reference (same kernel, one process per GPU) is said to record
    no other cause."""
    timed = [read_json(p) for p in sorted(Path(root).glob(TIMED_RUNS))]
    timed = [r for r in timed if r.get("table") == table]
    gpu = gpu_split_costs(root) if table == 3 else None
    clauses = []
    for g in stored_task_context(table, root):
        ref = next((r for r in timed if r.get("computer") == g["computer"]), None)
        bench = next((r for r in (gpu or {}).get("rows", [])
                      if gpu and gpu["computer"] == g["computer"]
                      and r["dataset"] == g["dataset"]), None)
        why = []
        if bench is not None:
            reference, explained = bench["gpu"], bool(g["jobs"] and max(g["jobs"]) > 1)
            if explained:
                why.append(f"{_word(max(g['jobs']))} worker processes shared the GPU, "
                           f"`--jobs {max(g['jobs'])}`")
        elif ref is not None:
            reference = statistics.median(ref["task_seconds"])
            kernel = (ref.get("coordinate_descent") or {}).get("kernel")
            explained = bool(kernel and kernel not in g["kernel"])
            why.append("an earlier, slower version of the kernel" if explained
                       else "the same kernel as the timed run")
        else:
            continue
        if g["per_split"] <= factor * reference:
            continue
        if g["load"] is not None:
            ref_loads = [x for x in (ref or {}).get("load_average_1min_start", []) if x is not None]
            why.append(f"median load average at task start {g['load']:.1f}"
                       + (f", the timed run's {statistics.median(ref_loads):.1f}"
                          if bench is None and ref_loads else ""))
        if not explained:
            why.append("the files record no other cause")
        against = hms(reference) + ("" if bench is not None or ref["dataset"] == g["dataset"]
                                    else f" for {ref['dataset']}")
        clauses.append(f"{g['dataset']} on the {short_computer(g['computer'])}, "
                       f"{hms(g['per_split'])} per split against {against} "
                       f"({'; '.join(why)})")
    if not clauses:
        return ""
    return (f"Stored tasks slower per split than the reference times (the timed run and the GPU "
            f"table above): {'; '.join(clauses)}. Their times are as recorded; "
            "the reference times give what a split costs with the current kernel.")


def timed_run_path(table: int, dataset: str, root: Path | str = RESULTS) -> Path:
    """Where :func:`timed_run_record` of one dataset of Table 2 or 3 is stored
    (:data:`TIMED_RUNS`)."""
    return Path(root) / "benchmarks" / f"timed_table{table}_{dataset}.json"


def timed_run_markdown(root: Path | str = RESULTS) -> list[str]:
    """The full-reproduction page's paragraphs on the timed runs (:data:`TIMED_RUNS`; Markdown
    lines, none without a file): each run's wall-clock time and sessions, the work of its tasks,
    its agreement with the stored run the chapter reads, and its commands. The load it ran under
    is in the folded block (:func:`timed_run_load_sentence`)."""
    lines: list[str] = []
    for path in sorted(Path(root).glob(TIMED_RUNS)):
        lines += ["", *_timed_run_lines(read_json(path), path.relative_to(root))]
    return lines[1:]


def timed_run_load_sentence(root: Path | str = RESULTS) -> str:
    """The load each timed run (:data:`TIMED_RUNS`) ran under (Markdown; empty without a file):
    the 1-minute load average when its tasks started, median and largest, against the run's own
    worker processes and the computer's cores."""
    out = []
    for path in sorted(Path(root).glob(TIMED_RUNS)):
        r = read_json(path)
        load = [x for x in r["load_average_1min_start"] if x is not None]
        if not load:
            continue
        jobs = re.search(r"--jobs (\d+)", r["sessions"][0]["command"])
        cores = (r.get("provenance") or {}).get("cpu_count")
        # a load above the run's own workers: other processes wanted the cores too
        shared = statistics.median(load) > (int(jobs[1]) if jobs else 1)
        out.append(
            f"During the timed run of Table {r['table']} for {r['dataset']}, "
            + ("other work ran on the computer, so its times are those of a shared computer: "
               if shared else "")
            + "the 1-minute load average (the processes running or waiting for a core, averaged "
            f"over a minute) when a task started was {statistics.median(load):.1f} (median), "
            f"{max(load):.1f} at most" + (f", on {cores} cores" if cores else "") + "."
        )
    return " ".join(out)


def _kernels(records) -> str:
    """The kernels of a stored run's ``coordinate_descent`` records, as a parenthesis
    (" (98 splits on a GPU with CuPy and 2 splits on the CPU, compiled with numba)"; empty
    without records)."""
    if not isinstance(records, list) or not records:
        return ""
    parts = [f"{r.get('splits')} splits {_device(r.get('backend'))}" for r in records]
    return " (" + _names(parts) + ")"


# the coordinate-descent kernels (repro.experiments.pcd_train), in a reader's words
DEVICES = {"cupy": "on a GPU with CuPy", "numba": "on the CPU, compiled with numba"}
PRECISION = {"float32": "single precision", "float64": "double precision"}


def _device(backend: str | None) -> str:
    """Where a coordinate-descent kernel runs, in words (:data:`DEVICES`)."""
    return DEVICES.get(backend or "", f"with the {backend} kernel")


def _timed_run_lines(r: dict, where: Path) -> list[str]:
    """:func:`timed_run_markdown` of one record."""
    n = len(r["sessions"])
    worst = max(v for row in r["max_abs_difference"].values() for v in row.values())
    cd = r.get("coordinate_descent") or {}
    command = r["sessions"][0]["command"]
    jobs = re.search(r"--jobs (\d+)", command)
    workers = f"{_word(int(jobs[1]))} worker process{'es' * (jobs[1] != '1')}" if jobs \
        else "a worker process per core"
    return [
        f"Table {r['table']} for {r['dataset']} at the paper's scale "
        f"({r['splits']} splits × {r['sims']:,} simulations, every column) in "
        + ("one uninterrupted run" if n == 1 else f"one run of {n} sessions")
        + f" on the {short_computer(r['computer'])}: **{hms(r['wall_seconds'])} of wall-clock "
        f"time** with {workers}, {hms(sum(r['task_seconds']))} of summed task time, "
        f"{hms(statistics.median(r['task_seconds']))} per split (median). "
        + f"It ran the coordinate descent {_device(cd.get('backend'))}"
        + (f" in {PRECISION.get(cd.get('dtype'), cd.get('dtype'))}" if cd.get("dtype") else "")
        + "; its per-split errors agree with those of the stored run the "
        f"chapter reads{_kernels(r.get('stored_coordinate_descent'))} to within {worst:.2g} "
        "(largest absolute difference of an error rate). "
        "The command (`DIR` a scratch folder), then the record of the run "
        f"(`results/{where.as_posix()}`):",
        "",
        "```bash",
        *_shell_lines(".venv/bin/python scripts/" + re.sub(
            r" --root \S+", " --root DIR", command.replace(" --no-progress", ""))),
        *_shell_lines(".venv/bin/python scripts/record_timed_run.py DIR "
                      f"--table {r['table']} --dataset {r['dataset']}"),
        "```",
    ]
