"""Pages of the book generated at build time from what the repository stores (no execution cache).

:func:`write_generated` is called by the book's Sphinx extension (``book/_ext/dpdro_pages.py``,
registered in ``_config.yml``) when a build starts. It writes into ``book/_generated/`` (not tracked
by git):

``status_tables.md``
    included by ``book/status.md``: one row per chapter with the run stored in the notebook (cell
    timestamps written by nbclient: when it ran, for how long, errors, Python), and one row per
    family of stored results with their provenance (command, date, seconds, commits, scale
    settings, uncommitted changes);
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
import json
import re
from pathlib import Path

from .landing import write as write_glance
from .paths import NOTEBOOKS, RESULTS, ROOT

__all__ = [
    "HEADLINE",
    "GENERATED",
    "notebook_runs",
    "result_families",
    "scripts_table",
    "status_markdown",
    "wrap_command",
    "extract_figure",
    "write_generated",
]

GENERATED = ROOT / "book" / "_generated"
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


def result_families(folder: Path = RESULTS) -> list[dict]:
    """Stored results grouped by folder: files, files with provenance, date range, total seconds,
    commands, commits, scale settings found in the provenance, and whether any was computed with
    local changes to dpdro or repro."""
    groups: dict[str, list[tuple[Path, dict | None]]] = {}
    for p in sorted(Path(folder).rglob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            d = None
        prov = d.get("provenance") if isinstance(d, dict) else None
        if prov is None and isinstance(d, dict) and isinstance(d.get("meta"), dict):
            prov = d["meta"].get("provenance", d["meta"])
        groups.setdefault(str(p.parent.relative_to(folder.parent)), []).append((p, prov))
    out = []
    for group, items in sorted(groups.items()):
        provs = [pv for _, pv in items if isinstance(pv, dict)]
        dates = sorted(
            str(pv.get("date_utc") or pv.get("date") or "")[:10]
            for pv in provs
            if pv.get("date_utc") or pv.get("date")
        )
        secs = [float(pv.get("seconds") or pv.get("total_seconds") or 0) for pv in provs]
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


def scripts_table(folder: Path | None = None) -> list[tuple[str, str]]:
    """(file name, first paragraph of its module docstring) for every script in ``scripts/``."""
    import ast

    folder = Path(folder) if folder is not None else ROOT / "scripts"
    out = []
    for p in sorted(folder.glob("*.py")):
        try:
            doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) or ""
        except SyntaxError:
            doc = ""
        first = " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph, on one line
        first = re.sub(r"``([^`]*)``", r"\1", first)  # plain text: code spans do not wrap
        # long tokens (paths) may break after / and _ (zero-width spaces)
        first = re.sub(r"\S{30,}", lambda m: re.sub(r"([/_])", "\\1\u200b", m.group(0)), first)
        out.append((p.name, first))
    return out


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


def _breakable(path: str) -> str:
    """A path that may wrap after every ``/`` (zero-width spaces): a table column stays narrow."""
    return path.replace("/", "/\u200b")


def status_markdown(notebooks: Path = NOTEBOOKS, results: Path = RESULTS) -> str:
    """The status tables (MyST markdown), from :func:`notebook_runs` and :func:`result_families`."""
    runs = notebook_runs(notebooks)
    lines = [
        "## Stored runs of the chapters",
        "",
        "The outputs committed with each notebook, which `pytest --nbval` compares with a "
        "fresh execution, come from the run below (from the execution metadata stored in "
        "the notebook). *seconds*: from the first cell's start to the last cell's end.",
        "",
        "| chapter | executed (UTC) | seconds | code cells | errors |",
        "|---|---|---:|---:|---:|",
    ]
    for r in runs:
        doc = f"{{doc}}`/notebooks/{r['chapter']}`"
        missing = f" ({r['unexecuted_cells']} not run)" if r["unexecuted_cells"] else ""
        lines.append(
            f"| {doc} | {r['executed'] or 'no timing stored'} | "
            f"{_cell(r['seconds'])} | {r['code_cells']}{missing} | {r['errors']} |"
        )
    total = sum(r["seconds"] or 0 for r in runs)
    pythons = sorted({r["python"] for r in runs} - {""})
    lines += [
        "",
        f"Total stored execution time: {total / 60:.1f} minutes over {len(runs)} notebooks "
        f"(Python {', '.join(pythons) or 'unknown'}).",
        "",
        "## Stored results",
        "",
        "Heavy computations are stored under `results/` with their provenance and loaded by the "
        "chapters. One row per folder: the files (and how many carry provenance), the date of "
        "the latest, the computing time recorded in their provenance, the commits they were "
        "computed at, and *dirty*: whether some file was computed with uncommitted changes to "
        "`dpdro/` or `repro/`, so that its commit alone does not pin its code. The commands, "
        "with the scale they ran at, are listed below the table.",
        "",
        "| folder of `results/` | files | latest (UTC) | seconds | commits | dirty |",
        "|---|---:|---|---:|---|---|",
    ]
    fams = result_families(results)
    for r in fams:
        commits = ", ".join(r["commits"][:1]) + (
            f" +{len(r['commits']) - 1}" if len(r["commits"]) > 1 else ""
        )
        short = r["folder"].partition("/")[2] or "(top level)"
        files = f"{r['files']}" + (
            f" ({r['with_provenance']})" if r["with_provenance"] != r["files"] else ""
        )
        latest = r["dates"].split(" to ")[-1]
        lines.append(
            f"| {_breakable(short)} | {files} | {latest or '–'} | {_cell(r['seconds']) or '–'} | "
            f"{_cell(commits) or '–'} | {'yes' if r['local_changes'] else 'no'} |"
        )
    lines += [
        "",
        "Commands and settings recorded in the provenance, by folder of `results/` (folders "
        "written by the same commands share an entry):",
        "",
        "```text",
    ]
    groups: dict[tuple, list[str]] = {}
    for r in fams:
        if r["commands"] or r["scale"]:
            groups.setdefault((tuple(r["commands"]), tuple(r["scale"])), []).append(r["folder"])
    for (commands, scale), folders in groups.items():
        lines += [f"{f}/" for f in folders]
        for c in commands:
            lines += wrap_command(c, indent="  ")
        if scale:
            lines += wrap_command("settings: " + " ".join(scale), indent="  ")
        lines.append("")
    lines[-1] = "```"
    lines += [
        "",
        "## Scripts",
        "",
        "The command lines in `scripts/` that produce the stored results and check the book (run "
        "them from the repository root with `.venv/bin/python scripts/NAME --help`).",
        "",
        "| script | what it does |",
        "|---|---|",
    ]
    for name, doc in scripts_table(Path(notebooks).parent / "scripts"):
        lines.append(f"| `{name}` | {_cell(doc)} |")
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
