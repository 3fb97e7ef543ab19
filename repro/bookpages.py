"""Pages of the book generated at build time from what the repository stores (no execution cache).

:func:`write_generated` is called by the book's Sphinx extension (``book/_ext/dpdro_pages.py``,
registered in ``_config.yml``) when a build starts. It writes into ``book/_generated/`` (not tracked
by git):

``status_tables.md``
    included by ``book/status.md``: one row per chapter with the run stored in the notebook (cell
    timestamps written by nbclient: when it ran, for how long, errors), and one row per stored
    result with the chapters that show it (:data:`RESULT_CHAPTERS`), its files, date and recorded
    seconds (what the book's *status* page shows);
``headline.png``
    the landing page's figure, copied from the stored output of a chapter's named figure
    (:data:`HEADLINE`), so the landing page computes nothing;
``glance.md``
    included by ``book/intro.md``: the landing page's headline, tally, reproduction table and
    findings, generated from the ledger and the chapters' glued values (:mod:`repro.landing`).
"""

from __future__ import annotations

import base64
import datetime as _dt
import itertools
import json
import re
from pathlib import Path

from . import costs
from .costs import hms
from .datasets import available_datasets
from .landing import write as write_glance
from .paths import NOTEBOOKS, RESULTS, ROOT

__all__ = [
    "HEADLINE",
    "GENERATED",
    "RESULT_CHAPTERS",
    "notebook_runs",
    "result_families",
    "status_markdown",
    "SHORT_TITLES",
    "wrap_command",
    "extract_figure",
    "write_generated",
]

GENERATED = ROOT / "book" / "_generated"
# files stored outside the folder of the stored result they belong to (their result's group)
STORED_ELSEWHERE = {"ml/benchmark_pcd.json": "benchmarks"}
# each stored result (a group of :func:`result_families`): what it is, in words, and the chapters
# (notebook stems) or book pages that show it; a file of a folder named here on its own is a stored
# result of its own, the folder's other files one together
RESULT_CHAPTERS = {
    "appendix": (
        "Figure 4 and the GitHub appendix's monotone counterexample",
        ("24_figures4_5", "25_github_appendix", "91_findings"),
    ),
    "benchmarks": ("Benchmarks that no chapter reads", ()),
    "benchmarks/data_dependent.json": (
        "Figure 3's benchmark: time to a certified gap",
        ("23_figure3",),
    ),
    "benchmarks/pcd_gpu.json": ("Table 3 on a GPU, a benchmark", ("full_reproduction",)),
    "benchmarks/timed_table3_adult.json": (
        "Table 3 for adult in one timed run", ("full_reproduction",)
    ),
    "composition/crossover": (
        "Optimal noise against the analytic Gaussian for k releases",
        ("06_composition",),
    ),
    "counterexamples": (
        "The paper's lower bound on a non-uniform partition, refuted",
        ("17_nonuniform_bounds", "91_findings"),
    ),
    "data_dependent": (
        "Figure 5, its panels merged into one file",
        ("24_figures4_5", "25_github_appendix"),
    ),
    "findings": ("The paper's own lower bounds, for the findings", ("91_findings",)),
    "ml": (
        "Tables 2 and 3: runs stored one file each, and the paper's printed values",
        ("31_naive_bayes", "32_coordinate_descent"),
    ),
    "sweep/figure3-dd": ("Figure 3, data-dependent half", ("23_figure3",)),
    "sweep/figure3-di": (
        "Figure 3, data-independent half",
        ("17_nonuniform_bounds", "23_figure3"),
    ),
    "sweep/figure5": ("Figure 5, one file per panel", ("24_figures4_5",)),
    "sweep/optimal-vs-delta": ("Certified optimal noise against δ", ("41_purification",)),
    "sweep/table2": ("Table 2: naïve Bayes, the sweep's runs", ("31_naive_bayes",)),
    "sweep/table3": ("Table 3: coordinate descent, the sweep's runs", ("32_coordinate_descent",)),
    "tables": (
        "Example 1's optimal noise and the paper's printed tables",
        ("21_example1", "22_tables"),
    ),
    "tables/cells": (
        "Tables 1, 4, 5 and 6: one certified noise per cell",
        ("22_tables", "91_findings"),
    ),
    "where_it_pays.json": (
        "Best closed form against the certified optimum over (ε, δ)",
        ("07_where_it_pays",),
    ),
}
HEADLINE = ("21_example1.ipynb", "fig-21_example1-densities")
# the short title of each chapter and book page, as the status page names them in a table column
SHORT_TITLES = {
    "01_quickstart": "Quick start",
    "05_using_dpdro": "Using dpdro",
    "06_composition": "Composition",
    "07_where_it_pays": "Where it pays",
    "11_reductions": "Reductions",
    "12_duality": "Duality",
    "13_convergence": "Convergence",
    "14_counterexamples": "Counterexamples",
    "15_cutting_planes": "Cutting planes",
    "16_data_dependent": "Data-dependent noise",
    "17_nonuniform_bounds": "Non-uniform bounds",
    "21_example1": "Example 1",
    "22_tables": "Tables 1, 4–6",
    "23_figure3": "Figure 3",
    "24_figures4_5": "Figures 4 and 5",
    "25_github_appendix": "GitHub appendix",
    "31_naive_bayes": "Table 2",
    "32_coordinate_descent": "Table 3",
    "41_purification": "Is δ worth it?",
    "42_private_lp": "Private LP",
    "43_multiple_selections": "Multiple selections",
    "90_ledger": "Ledger",
    "91_findings": "Findings",
    "full_reproduction": "Full reproduction",
}


def _ts(s: str | None) -> _dt.datetime | None:
    if not s:
        return None
    try:
        return _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None


def _title(nb: dict) -> str:
    for c in nb.get("cells", []):
        if c.get("cell_type") == "markdown":
            for line in "".join(c.get("source", "")).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def notebook_runs(folder: Path = NOTEBOOKS) -> list[dict]:
    """One dict per notebook: chapter (file stem), title, executed (UTC start of the stored run),
    seconds (first cell's start to last cell's reply), code cells, cells with recorded timing,
    errors (outputs of type ``error``) and the kernel's Python version."""
    out = []
    for p in sorted(Path(folder).glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
        starts, ends = [], []
        for c in code:
            ex = c.get("metadata", {}).get("execution", {})
            a = _ts(ex.get("iopub.execute_input") or ex.get("iopub.status.busy"))
            b = _ts(ex.get("shell.execute_reply") or ex.get("iopub.status.idle"))
            if a:
                starts.append(a)
            if b:
                ends.append(b)
        errors = sum(o.get("output_type") == "error" for c in code for o in c.get("outputs", []))
        unexecuted = sum(c.get("execution_count") is None for c in code)
        out.append(
            dict(
                chapter=p.stem,
                title=_title(nb),
                executed=min(starts).strftime("%Y-%m-%d %H:%M") if starts else "",
                seconds=round((max(ends) - min(starts)).total_seconds(), 1)
                if starts and ends
                else None,
                code_cells=len(code),
                timed_cells=len(starts),
                unexecuted_cells=unexecuted,
                errors=errors,
                python=nb.get("metadata", {}).get("language_info", {}).get("version", ""),
            )
        )
    return out


_DATE = re.compile(r"(?<!\d)20\d\d-\d\d-\d\d(?!\d)")
_SCALE_KEYS = (
    "n_splits",
    "n_sims",
    "variant",
    "betas",
    "repeats",
    "scale",
    "complete",
    "original_run",
)


def _sweep_families(command: str) -> list[str]:
    """The task families a ``sweep.py`` command line names (its words before the first option)."""
    words = command.split()
    if not words or Path(words[0]).name != "sweep.py":
        return []
    return list(itertools.takewhile(lambda w: not w.startswith("-"), words[1:]))


def _group(rel: Path, command: str = "", folder: Path = RESULTS) -> str:
    """The stored result a file of ``results/`` belongs to: a file merged from the tasks of a sweep
    family (its command ``sweep.py FAMILY ...``, the tasks under ``sweep/FAMILY``) is one with
    them (the family the file's name names, when the command names several), and so is the
    family's aggregate file (:data:`repro.costs.AGGREGATES`) when its tasks are stored; any other
    top-level
    file is one on its own, the per-task files of a sweep family one per family, a file that
    :data:`RESULT_CHAPTERS` names one on its own, any other file its folder."""
    parts = rel.parts
    if rel.as_posix() in STORED_ELSEWHERE:
        return STORED_ELSEWHERE[rel.as_posix()]
    if len(parts) > 1 and parts[0] != "sweep" and rel.as_posix() in RESULT_CHAPTERS:
        return rel.as_posix()
    if parts[0] != "sweep":
        families = [f for f in _sweep_families(command) if (Path(folder) / "sweep" / f).is_dir()]
        # the aggregate file of a family that one of its own scripts assembled from the tasks
        families += [
            f for f, path in costs.AGGREGATES.items()
            if path == rel.as_posix() and (Path(folder) / "sweep" / f).is_dir()
        ]
        if families:
            named = [f for f in families if f in rel.stem]
            return f"sweep/{(named or families)[0]}"
    if len(parts) == 1:
        return parts[0]
    if parts[0] == "sweep":
        return "/".join(parts[:2])
    return "/".join(parts[:-1])


def result_families(folder: Path = RESULTS) -> list[dict]:
    """Stored results (:func:`_group`): files, their names, files with provenance, date range,
    total seconds, commands, commits, scale settings found in the provenance, and whether any was
    computed with local changes to dpdro or repro. A file merged from tasks (outside ``sweep/``
    in a sweep family's group, or written by a ``--merge-only`` command) adds no seconds: its
    tasks' time is counted where the tasks are stored."""
    groups: dict[str, list[tuple[Path, dict | None]]] = {}
    merged: set[Path] = set()
    datas: dict[Path, dict] = {}
    for p in sorted(Path(folder).rglob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            d = None
        prov = d.get("provenance") if isinstance(d, dict) else None
        if prov is None and isinstance(d, dict) and isinstance(d.get("meta"), dict):
            prov = d["meta"].get("provenance", d["meta"])
        datas[p] = d if isinstance(d, dict) else {}
        rel = p.relative_to(folder)
        command = str(prov.get("command") or "") if isinstance(prov, dict) else ""
        group = _group(rel, command, folder)
        if "--merge-only" in command or (group.startswith("sweep/") and rel.parts[0] != "sweep"):
            merged.add(p)
        groups.setdefault(group, []).append((p, prov))
    # a stored run of Table 2 or 3 (results/ml/tableT_RUN.json with its datasets) is counted by
    # costs.ml_file_seconds, which covers its tasks' files too
    runs = {
        p
        for p in datas
        if p.parent == Path(folder) / "ml" and isinstance(datas[p].get("datasets"), dict)
        and "_" in p.stem
    }
    covered = {
        t
        for p in runs
        for t in (Path(folder) / "sweep" / Path(*p.stem.split("_", 1))).rglob("*.json")
    }
    gpus = costs._gpus_by_platform(folder)
    out = []
    for group, items in sorted(groups.items()):
        provs = [pv for _, pv in items if isinstance(pv, dict)]
        dates = sorted(
            str(pv.get("date_utc") or pv.get("date") or "")[:10]
            for pv in provs
            if pv.get("date_utc") or pv.get("date")
        )
        # a file with no provenance of its own: the latest date its logged runs give
        logged = not dates and max(
            (m for p, _ in items for m in _DATE.findall(json.dumps(datas[p]))), default=""
        )
        by_scale: dict[str, dict[str, float]] = {}
        scale_dates: dict[str, str] = {}
        for p, pv in items:
            if p in runs or (p.parent == Path(folder) / "ml" and p.stem.startswith("table")):
                day = str((pv or {}).get("date_utc") or (pv or {}).get("date") or "")[:10]
                label = _run_label(p, pv)
                scale_dates[label] = max(scale_dates.get(label, ""), day)
            if p in runs:  # a stored run of Tables 2 and 3: costs.ml_file_seconds counts it
                into = by_scale.setdefault(_run_label(p, pv), {})
                for c, v in costs.ml_file_seconds(p, folder).items():
                    into[c] = into.get(c, 0.0) + v
            elif p not in merged and p not in covered:
                pv = pv if isinstance(pv, dict) else {}
                v = pv.get("seconds") or pv.get("total_seconds")
                v = float(v) if v else costs.measured_seconds(datas[p]) or 0.0
                if v:
                    c = costs.computer(datas[p], gpus)
                    run = p.parent == Path(folder) / "ml" and p.stem.startswith("table")
                    into = by_scale.setdefault(_run_label(p, pv) if run else "", {})
                    into[c] = into.get(c, 0.0) + v
        by_computer: dict[str, float] = {}
        for part in by_scale.values():
            for c, v in part.items():
                by_computer[c] = by_computer.get(c, 0.0) + v
        secs = list(by_computer.values())
        commands = sorted(
            {
                str(pv.get("command") or pv.get("script") or pv.get("generated_by") or "")
                for pv in provs
            }
            - {""}
        )
        commits = sorted(
            {str(pv.get("git_commit") or pv.get("commit") or "")[:7] for pv in provs} - {""}
        )
        scale = sorted(
            {
                f"{k}={pv[k]}"
                for pv in provs
                for k in _SCALE_KEYS
                if k in pv and not isinstance(pv[k], (dict, list))
            }
        )
        dirty = any(
            pv.get("git_dirty")
            or pv.get("dpdro_package_modified_since_commit")
            or pv.get("dpdro_modified")
            for pv in provs
        )
        out.append(
            dict(
                folder=group,
                files=len(items),
                names=sorted(p.name for p, _ in items),
                with_provenance=len(provs),
                logged_date=logged or "",
                dates=(
                    dates[0]
                    if dates and dates[0] == dates[-1]
                    else f"{dates[0]} to {dates[-1]}"
                    if dates
                    else ""
                ),
                seconds=round(sum(secs), 1) if any(secs) else None,
                by_computer={c: round(v, 1) for c, v in by_computer.items() if v},
                by_scale=[
                    (label, {c: round(v, 1) for c, v in part.items() if v})
                    for label, part in sorted(by_scale.items(), key=_scale_order)
                ],
                scale_dates=scale_dates,
                pairs=sorted(
                    {
                        (int(pv["n_splits"]), int(pv["n_sims"]))
                        for pv in provs
                        if isinstance(pv.get("n_splits"), int) and isinstance(pv.get("n_sims"), int)
                    },
                    reverse=True,
                ),
                commands=commands,
                commits=commits,
                scale=scale,
                local_changes=dirty,
            )
        )
    return out


# the variants of the stored runs of Tables 2 and 3 (results/ml/tableT_VARIANT_SxN.json), in words
VARIANTS = {
    "authors": "authors' code settings",
    "layouts": "two noise layouts",
    "eps": "privacy budget (ε/d, δ/d) per coordinate update",  # table3_eps_over_d_*
}


def _run_label(path: Path, prov: dict | None) -> str:
    """A stored run of Table 2 or 3 as a status row's scale: its table, splits × simulations and,
    other than the paper reading, its variant ("Table 2, 100 × 1,000, authors' code settings")."""
    table, variant = path.stem.split("_")[:2]
    prov = prov if isinstance(prov, dict) else {}
    size = (
        f"{prov['n_splits']:,}\u00a0×\u00a0{prov['n_sims']:,}"
        if isinstance(prov.get("n_splits"), int) and isinstance(prov.get("n_sims"), int)
        else path.stem.rsplit("_", 1)[-1]
    )
    words = f", {VARIANTS.get(variant, variant)}" if variant != "paper" else ""
    return f"Table\u00a0{table.removeprefix('table')}, {size}{words}{_datasets_words(path)}"


def _datasets_words(path: Path) -> str:
    """The datasets a stored run of Table 2 or 3 holds, in words, when not every dataset: the
    shorter of "only A and B" and "without C and D" ("" for every dataset or no list)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    held = data.get("datasets") if isinstance(data.get("datasets"), dict) else None
    if held is None:
        results = data.get("results") if isinstance(data.get("results"), dict) else {}
        held = next(iter(results.values()), None) if results else None
    if not isinstance(held, dict):
        return ""
    every = available_datasets()
    left_out = [d for d in every if d not in held]
    if not left_out:
        return ""
    only = ", " + _names([d for d in every if d in held]) + " only"
    without = ", without " + _names(left_out)
    return min(only, without, key=len)


def _scale_order(item: tuple[str, dict]) -> tuple:
    """Scales of one stored result: the whole computation first, then by table, largest run
    first, the paper reading before a variant."""
    label = item[0]
    if not label:
        return (0,)
    nums = [int(x.replace(",", "")) for x in label.replace("\u00a0", " ").split()
            if x.replace(",", "").isdigit()]
    return (1, nums[0], -nums[1], -nums[2], label)


def _cell(x) -> str:
    s = "" if x is None else str(x)
    return s.replace("|", "\\|").replace("\n", " ")


def _code(items, limit: int = 3) -> str:
    shown = [f"`{i}`" for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"and {len(items) - limit} more")
    return ", ".join(shown)


def wrap_command(command: str, width: int = 80, indent: str = "") -> list[str]:
    """A command line as lines of at most ``width`` characters: words filled greedily after
    ``indent``, continuation lines indented four more spaces; a word longer than a line (a
    comma-separated list) is cut after its commas."""
    words = []
    room = width - len(indent) - 4
    for w in command.split():
        while len(w) > room and "," in w[:room]:
            cut = w.rindex(",", 0, room) + 1
            words.append(w[:cut])
            w = w[cut:]
        words.append(w)
    lines, line = [], indent
    for w in words:
        glue = "" if line.endswith(",") or line.strip() == "" else " "
        if line.strip() and len(line) + len(glue) + len(w) > width:
            lines.append(line)
            line, glue = indent + "    ", ""
        line += glue + w
    return lines + [line]


def _nowrap(text: str) -> str:
    """Text that stays on one line (no-break spaces and hyphens): a number keeps its unit, a date
    its year, month and day."""
    return text.replace(" ", "\u00a0").replace("-", "\u2011")


def toc_order(toc: Path = ROOT / "_toc.yml") -> list[str]:
    """The chapters (notebook stems) in the order of the book's table of contents."""
    if not toc.is_file():
        return []
    return re.findall(r"file:\s*notebooks/(\S+)", toc.read_text(encoding="utf-8"))


def _scale(pairs: list[tuple[int, int]]) -> str:
    """A stored result's scale cell: its runs' splits × simulations, largest first, else "full"
    (the whole computation its chapters show)."""
    return "; ".join(f"{a:,}\u00a0×\u00a0{b:,}" for a, b in pairs) if pairs else "full"


def _time_on_computers(by_computer: dict[str, float]) -> str:
    """A status row's computing time, one "computer: time" line per computer, longest first
    ("2-core CPU: 9.3 h<br>H200 host: 14.8 min"; "computer not recorded" for the time of files
    that record no computer; "not recorded" when no time is): times of different computers are
    never added."""
    parts = sorted(((v, c) for c, v in by_computer.items() if v), reverse=True)
    return "<br>".join(
        ("computer not recorded" if c == costs.NOT_RECORDED
         else _nowrap(costs.short_computer(c)))
        + f": {_nowrap(hms(v))}"
        for v, c in parts
    ) or "not recorded"


def _not_recorded_note(old: list[tuple[str, bool]], merged: list[tuple[int, list[str]]]) -> str:
    """The status page's one note on what no file records: the results whose files (``old``:
    title, whether a time is recorded) carry no computer field, and the datasets of Tables 2 and 3
    (``merged``, table and datasets) kept only as rows of the table's file
    (:func:`repro.costs.kept_in_table_file`), whose seconds are recorded and computer is not."""
    parts = []
    untimed = [f"“{t}”" for t, timed in old if not timed]
    timed = [f"“{t}”" for t, timed in old if timed]
    if untimed:
        parts.append(f"the files of {_names(untimed)} record neither a computer nor a computing "
                     "time")
    if timed:
        parts.append(f"the files of {_names(timed)} record a computing time but no computer")
    for table, names in merged:
        parts.append(
            costs.kept_in_table_file(table, names) + ": their seconds are recorded, their "
            "computer is not"
        )
    if not parts:
        return ""
    return (
        "*Not recorded*: " + "; ".join(parts) + "."
    )


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# the folded block of the status page that says where the files of the stored results are and
# what they do not record
FILES_TITLE = "Where these results are stored, and what their files do not record"


def status_markdown(notebooks: Path = NOTEBOOKS, results: Path = RESULTS) -> str:
    """The status tables (MyST markdown), from :func:`notebook_runs` and :func:`result_families`:
    one row per chapter in the order of the table of contents (:func:`toc_order`; its time to
    run) and one per stored result (described by :data:`RESULT_CHAPTERS`, in the order of its
    main chapter, the first it lists, the chapters by their :data:`SHORT_TITLES`), then a key to
    its columns; one line per scale (a stored run of Tables 2 and 3, :func:`_run_label`) marked
    with the letter of the stored result it is part of, each with its computing time per
    computer; then, folded (:data:`FILES_TITLE`), where the runs' files are and one note on
    what no file records. The computers are defined first (:func:`repro.costs.computers_defined`).
    """
    toc = {c: i for i, c in enumerate(toc_order())}
    runs = sorted(notebook_runs(notebooks), key=lambda r: (toc.get(r["chapter"], len(toc)),
                                                           r["chapter"]))
    order = {r["chapter"]: i for i, r in enumerate(runs)}
    lines = [
        costs.computers_defined(results),
        "",
        "## Chapters",
        "",
        "When the outputs stored with each chapter were computed (UTC) and the chapter's "
        "time to run then (how long executing it took, loading the stored results of the second "
        "table and recomputing a small part of them). A chapter's stored outputs record when "
        "and how long it ran, not on which computer; the computers are named for the stored "
        "results only.",
        "",
        "| chapter | computed | time to run |",
        "|---|---|---:|",
    ]
    for r in runs:
        doc = f"{{doc}}`/notebooks/{r['chapter']}`"
        missing = f" ({r['unexecuted_cells']} cells not run)" if r["unexecuted_cells"] else ""
        lines.append(
            f"| {doc} | {_nowrap(r['executed']) or 'not recorded'} | "
            f"{_nowrap(hms(r['seconds'])) if r['seconds'] is not None else 'not recorded'}"
            f"{missing} |"
        )
    total = sum(r["seconds"] or 0 for r in runs)
    with_errors = [r["chapter"] for r in runs if r["errors"]]
    lines += [
        "",
        f"Together: {total / 60:.1f} min for {len(runs)} chapters. "
        + (f"Outputs with errors: {', '.join(with_errors)}." if with_errors
           else "No stored output contains an error."),
        "",
        "## Stored results",
        "",
        "The computations the chapters load, computed once and stored with their provenance, "
        "one row per stored result, in book order of the first chapter of its *chapters* "
        "column, those that no chapter shows last; in that column, Findings, which draws on "
        "several results, comes last. "
        "{doc}`full_reproduction` gives "
        "the command that recomputes each, or, for a stored input that no command recomputes, "
        "where it came from.",
        "",
        "| result | chapters | scale | latest | computing time |",
        "|---|---|---|---|---|",
    ]
    rows = []
    for r in result_families(results):
        title, chapters = RESULT_CHAPTERS.get(r["folder"], (r["folder"], ()))
        # its main chapter's place in the book (a page after the chapters); no chapter: last
        rank = order.get(chapters[0], len(order)) if chapters else len(order) + 1
        rows.append((rank, title, chapters, r))
    old, merged, run_lines, parts, unread = [], [], [], [], []

    def doc(c: str) -> str:
        page = f"/notebooks/{c}" if (Path(notebooks) / f"{c}.ipynb").is_file() else f"/book/{c}"
        return f"{{doc}}`{_nowrap(SHORT_TITLES.get(c, c))} <{page}>`"

    marks = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for _, title, chapters, r in sorted(rows, key=lambda row: row[:2]):
        shown = ", ".join(doc(c) for c in chapters)
        if r["folder"] in RESULT_CHAPTERS and not chapters:  # named file by file, below
            unread.append(f"{title}: {_names([f'`{n}`' for n in r['names']])}")
        latest = (_nowrap(r["dates"].split(" to ")[-1])
                  or (f"{_nowrap(r['logged_date'])}\u00a0(log)" if r["logged_date"] else "")
                  or "not recorded")
        named = [(label, part) for label, part in r["by_scale"] if label]
        mark = next(marks) if named else ""
        if mark:
            parts.append(f"*{mark}*, “{title}”")
        scale = (f"{len(named)}\u00a0run{'s' * (len(named) > 1)} ({mark})" if named
                 else _scale(r["pairs"]))
        lines.append(
            f"| {_cell(title)} | {shown or 'no chapter'} | {scale} | {latest} "
            f"| {_time_on_computers(r['by_computer'])} |"
        )
        for label, part in named:
            table = label.split(",", 1)[0].split("\u00a0")[-1]  # "Table 2, ..." -> "2"
            main = RESULT_CHAPTERS.get(f"sweep/table{table}", ("", ()))[1][:1]
            run_lines.append(
                f"| {label} | {mark} | {doc(main[0]) if main else shown} "
                f"| {_nowrap(r['scale_dates'].get(label, '')) or 'not recorded'} "
                f"| {_time_on_computers(part)} |"
            )
        if r["folder"] in ("sweep/table2", "sweep/table3"):
            table = int(r["folder"][-1])
            names = [d["dataset"] for d in costs.ml_costs_by_computer(table, results)
                     if costs.NOT_RECORDED in d["main"]]
            if names:
                merged.append((table, names))
        elif not r["by_computer"] or costs.NOT_RECORDED in r["by_computer"]:
            old.append((title, bool(r["by_computer"])))
    lines += [
        *(["", f"{'; '.join(unread)}. They are stored as the record of what they measured "
           "({doc}`full_reproduction` gives their commands); no page shows their results."]
          if unread else []),
        "",
        "Key to the columns:",
        "",
        "* *chapters*: the chapters that show the result. A chapter takes only its own time to "
        "run (first table), not the result's computing time.",
        "* *scale*: *full*, the whole computation its chapters show, at the settings they "
        "state; or, for Tables 2 and 3, *N runs (X)*: N stored runs, listed in the next table "
        "with X in its *part of* column.",
        "* *latest*: the date of the result's latest file; *(log)*: a file that records no "
        "date of its own, dated by the latest run it logs.",
        "* *computing time*: what computing it took as its files record it, one line per "
        "computer, *computer: time*; *computer not recorded: time*, the time of files that "
        "record no computer. A table merged from many tasks "
        "is counted once, with its tasks; a benchmark, which records the times it measures but "
        "not its own, shows the sum of the runs it times.",
    ]
    if run_lines:
        lines += [
            "",
            "The stored runs of Tables 2 and 3, one line per run: the table, its splits × "
            "simulations and, other than the chapter's paper reading, its settings; the stored "
            "result it is part of; the chapter that shows it; the date of its latest file; and "
            "its computing time per computer.",
            "",
            "| run | part of | chapter | latest | computing time |",
            "|---|---|---|---|---|",
            *sorted(run_lines, key=lambda line: _scale_order((line.split(" | ")[0][2:], {}))),
            "",
            f"````{{dropdown}} {FILES_TITLE}",
            "The letters of *part of* name the rows of the stored-results table: "
            + "; ".join(parts) + ". A sweep's run has per-task files under `results/sweep/` "
            "(for some runs those of the (OPT) column only), merged into one file under "
            "`results/ml/`. Each other run is one file under `results/ml/` with no per-task "
            "files, computed in one process by the command its file records; where "
            "{doc}`full_reproduction` gives a `sweep.py` command for such a run, that command "
            "recomputes the same splits and simulations, writing per-task files under "
            "`results/sweep/` and merging them into a file of the same name. "
            "The paper's printed values are stored beside them and took no computing.",
        ]
    note = _not_recorded_note(old, merged)
    if run_lines:
        lines += [*(["", note] if note else []), "````"]
    elif note:
        lines += ["", f"````{{dropdown}} {FILES_TITLE}", note, "````"]
    return "\n".join(lines) + "\n"


def extract_figure(notebook: Path, name: str, out: Path) -> bool:
    """Copy the PNG output of the code cell whose myst-nb figure is called ``name`` to ``out``;
    False when the notebook has no such stored figure."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for c in nb.get("cells", []):
        fig = c.get("metadata", {}).get("mystnb", {}).get("figure", {})
        if fig.get("name") != name:
            continue
        for o in c.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png:
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(base64.b64decode("".join(png) if isinstance(png, list) else png))
                return True
    return False


def write_generated(root: Path = ROOT) -> list[Path]:
    """Write ``book/_generated/status_tables.md``, ``headline.png`` and ``glance.md``; return the
    paths written."""
    gen = Path(root) / "book" / "_generated"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / ".gitignore").write_text(
        "# written by repro.bookpages at every book build\n*\n", encoding="utf-8"
    )
    status = gen / "status_tables.md"
    status.write_text(
        status_markdown(Path(root) / "notebooks", Path(root) / "results"), encoding="utf-8"
    )
    written = [status]
    png = gen / "headline.png"
    if extract_figure(Path(root) / "notebooks" / HEADLINE[0], HEADLINE[1], png):
        written.append(png)
    written.append(write_glance(gen))
    return written
