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
from pathlib import Path

from .costs import hms
from .landing import write as write_glance
from .paths import NOTEBOOKS, RESULTS, ROOT

__all__ = [
    "HEADLINE",
    "GENERATED",
    "RESULT_CHAPTERS",
    "notebook_runs",
    "result_families",
    "status_markdown",
    "wrap_command",
    "extract_figure",
    "write_generated",
]

GENERATED = ROOT / "book" / "_generated"
# each stored result (a group of :func:`result_families`): what it is, in words, and the chapters
# that show it
RESULT_CHAPTERS = {
    "appendix": (
        "Figure 4 and the GitHub appendix's monotone counterexample",
        ("24_figures4_5", "25_github_appendix", "91_findings"),
    ),
    "benchmarks": ("Benchmarks: time to a certified gap", ("23_figure3",)),
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
        "Tables 2 and 3: the paper's values, smaller-scale runs and where the time goes",
        ("31_naive_bayes", "32_coordinate_descent"),
    ),
    "sweep/figure3-dd": ("Figure 3, data-dependent half", ("23_figure3",)),
    "sweep/figure3-di": (
        "Figure 3, data-independent half",
        ("17_nonuniform_bounds", "23_figure3"),
    ),
    "sweep/figure5": ("Figure 5, one file per panel", ("24_figures4_5",)),
    "sweep/optimal-vs-delta": ("Certified optimal noise against δ", ("41_purification",)),
    "sweep/table2": ("Table 2: naïve Bayes, all runs", ("31_naive_bayes",)),
    "sweep/table3": ("Table 3: coordinate descent, all runs", ("32_coordinate_descent",)),
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
    them (the family the file's name names, when the command names several); any other top-level
    file is one on its own, the per-task files of a sweep family one per family, any other file
    its folder."""
    parts = rel.parts
    if parts[0] != "sweep":
        families = [f for f in _sweep_families(command) if (Path(folder) / "sweep" / f).is_dir()]
        if families:
            named = [f for f in families if f in rel.stem]
            return f"sweep/{(named or families)[0]}"
    if len(parts) == 1:
        return parts[0]
    if parts[0] == "sweep":
        return "/".join(parts[:2])
    return "/".join(parts[:-1])


def result_families(folder: Path = RESULTS) -> list[dict]:
    """Stored results (:func:`_group`): files, files with provenance, date range, total seconds,
    commands, commits, scale settings found in the provenance, and whether any was computed with
    local changes to dpdro or repro. A file merged from tasks (outside ``sweep/`` in a sweep
    family's group, or written by a ``--merge-only`` command) adds no seconds: its tasks' time is
    counted where the tasks are stored."""
    groups: dict[str, list[tuple[Path, dict | None]]] = {}
    merged: set[Path] = set()
    for p in sorted(Path(folder).rglob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            d = None
        prov = d.get("provenance") if isinstance(d, dict) else None
        if prov is None and isinstance(d, dict) and isinstance(d.get("meta"), dict):
            prov = d["meta"].get("provenance", d["meta"])
        rel = p.relative_to(folder)
        command = str(prov.get("command") or "") if isinstance(prov, dict) else ""
        group = _group(rel, command, folder)
        if "--merge-only" in command or (group.startswith("sweep/") and rel.parts[0] != "sweep"):
            merged.add(p)
        groups.setdefault(group, []).append((p, prov))
    out = []
    for group, items in sorted(groups.items()):
        provs = [pv for _, pv in items if isinstance(pv, dict)]
        dates = sorted(
            str(pv.get("date_utc") or pv.get("date") or "")[:10]
            for pv in provs
            if pv.get("date_utc") or pv.get("date")
        )
        secs = [
            float(pv.get("seconds") or pv.get("total_seconds") or 0)
            for p, pv in items
            if isinstance(pv, dict) and p not in merged
        ]
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
                with_provenance=len(provs),
                dates=(
                    dates[0]
                    if dates and dates[0] == dates[-1]
                    else f"{dates[0]} to {dates[-1]}"
                    if dates
                    else ""
                ),
                seconds=round(sum(secs), 1) if any(secs) else None,
                commands=commands,
                commits=commits,
                scale=scale,
                local_changes=dirty,
            )
        )
    return out


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


def _breakable(path: str) -> str:
    """A path that may wrap after every ``/`` and ``_`` (zero-width spaces): a table column stays
    narrow."""
    return path.replace("/", "/\u200b").replace("_", "_\u200b")


def status_markdown(notebooks: Path = NOTEBOOKS, results: Path = RESULTS) -> str:
    """The status tables (MyST markdown), from :func:`notebook_runs` and :func:`result_families`:
    one row per chapter (its time to run) and one per stored result (described by
    :data:`RESULT_CHAPTERS`, in the order of the chapters that show it, with its computing time)."""
    runs = notebook_runs(notebooks)
    order = {r["chapter"]: i for i, r in enumerate(runs)}
    lines = [
        "## Chapters",
        "",
        "When the outputs stored with each chapter were computed (UTC) and the chapter's time to "
        "run: how long executing it took, loading the stored results of the second table and "
        "recomputing a small part of them.",
        "",
        "| chapter | computed | time to run | errors |",
        "|---|---|---:|---:|",
    ]
    for r in runs:
        doc = f"{{doc}}`/notebooks/{r['chapter']}`"
        missing = f" ({r['unexecuted_cells']} cells not run)" if r["unexecuted_cells"] else ""
        lines.append(
            f"| {doc} | {_nowrap(r['executed']) or 'not recorded'} | "
            f"{_nowrap(hms(r['seconds'])) if r['seconds'] is not None else '–'} | "
            f"{r['errors']}{missing} |"
        )
    total = sum(r["seconds"] or 0 for r in runs)
    lines += [
        "",
        f"Together: {total / 60:.1f} minutes for {len(runs)} chapters.",
        "",
        "## Stored results",
        "",
        "The computations at the paper's scale, computed once and stored with their provenance; "
        "the chapters load them. One row per stored result: the chapters that show it, its files "
        "(and how many record their provenance), the date of the latest, and its computing time: "
        "what computing it took, as its files record it ('–' where they record none). A chapter "
        "that shows a result takes only its own time to run (first table), not the result's "
        "computing time. A table merged from many tasks records no computing time of its own: "
        "the tasks' time is in their row, so no computation is counted twice. "
        "{doc}`full_reproduction` shows how to recompute each of them.",
        "",
        "| result | chapters | files | latest | computing time |",
        "|---|---|---:|---|---:|",
    ]
    rows = []
    for r in result_families(results):
        title, chapters = RESULT_CHAPTERS.get(r["folder"], (r["folder"], ()))
        rank = min((order.get(c, len(order)) for c in chapters), default=len(order))
        rows.append((rank, title, chapters, r))
    for _, title, chapters, r in sorted(rows, key=lambda row: row[:2]):
        shown = ", ".join(f"{{doc}}`/notebooks/{c}`" for c in chapters)
        files = f"{r['files']}" + (
            f" ({r['with_provenance']})" if r["with_provenance"] != r["files"] else ""
        )
        latest = r["dates"].split(" to ")[-1]
        lines.append(
            f"| {_cell(title)} | {shown or '–'} | {files} | {_nowrap(latest) or '–'} | "
            f"{_nowrap(hms(r['seconds'])) if r['seconds'] else '–'} |"
        )
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
