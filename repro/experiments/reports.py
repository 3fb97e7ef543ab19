"""Stored results of Tables 2 and 3, the paper's values, the ledger rows and the HTML tables that
put ours next to the paper's."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..paths import RESULTS
from ..provenance import read_json

__all__ = [
    "ML_TOLERANCE",
    "RESULTS_DIR",
    "ml_comparison_html",
    "ml_ledger_rows",
    "paper_tables",
    "stored_results",
]

RESULTS_DIR = RESULTS / "ml"


def paper_tables(path: str | Path | None = None) -> dict:
    """The paper's Tables 2 and 3 as typed in ``results/ml/paper_tables.json`` (PAPER data, not
    computed)."""
    return read_json(path or RESULTS_DIR / "paper_tables.json")


def stored_results(
    table: int,
    variant: str = "paper",
    *,
    splits: int | None = None,
    sims: int | None = None,
    dataset: str | None = None,
    directory: str | Path | None = None,
) -> dict | None:
    """A stored result file ``table{table}_{variant}_{splits}x{sims}.json`` (parsed), or None.

    Without ``splits``/``sims``: the file with the most splits × simulations (among those holding
    ``dataset``, if given). The returned dict gets ``"splits"``, ``"sims"`` and ``"file"`` keys.
    """
    directory = Path(directory or RESULTS_DIR)
    best = None
    for p in sorted(directory.glob(f"table{table}_{variant}_*x*.json")):
        m = re.fullmatch(rf"table{table}_{variant}_(\d+)x(\d+)\.json", p.name)
        if not m:
            continue
        k, s = int(m.group(1)), int(m.group(2))
        if (splits is not None and k != splits) or (sims is not None and s != sims):
            continue
        data = json.loads(p.read_text())
        if dataset is not None and dataset not in data.get("datasets", {}):
            continue
        if best is None or k * s > best["splits"] * best["sims"]:
            best = dict(data, splits=k, sims=s, file=p.name)
    return best


ML_TOLERANCE = dict(
    error=0.5, Imp=5.0
)  # |ours − paper| within which a Table 2/3 value matches (points)


def ml_ledger_rows(
    chapter: str,
    table: int,
    baseline: str,
    datasets: Sequence[str],
    offline: Sequence[str],
    columns: Sequence[str],
    paper: Mapping,
    stored: Mapping,
    scale: Mapping,
    settings: Callable,
    opt_design: str,
    notes: Mapping[str, str],
) -> list:
    """One ledger row per (dataset, side, column) of Table 2 or 3: the DP columns, "(OPT)" and
    "Imp".

    ``paper[name][side][column]`` are the paper's values, ``stored[name]["summary"][side]`` ours
    (:func:`summarize`), ``scale[name]`` the (splits, simulations) they were computed with,
    ``settings(name, side, column, k, m)`` the sentence describing our settings, ``opt_design`` how
    our "(OPT)" is built and ``notes[name]`` how a dataset differs from the paper's. A value within
    :data:`ML_TOLERANCE` of the paper's (0.5 points, 5 for Imp) matches; Imp never matches when the
    non-private ``baseline`` is not better than the best literature mechanism (it then compares gaps
    of opposite sign). Datasets not available offline get "not reproducible here" rows.
    """
    from .ledger import Row, compare

    rows = []
    for name in datasets:
        for side in ("in", "out"):
            loc = f"Table {table}, {name}, {'in-sample' if side == 'in' else 'out-of-sample'}"
            for c in list(columns) + ["(OPT)", "Imp"]:
                rid = f"{chapter}/table{table}/{name}/{side}/{c}"
                qty = "Imp (%)" if c == "Imp" else f"{c} error (%)"
                paper_v = paper[name][side][c]
                if name not in offline:
                    rows.append(
                        Row(
                            id=rid,
                            chapter=chapter,
                            location=loc,
                            quantity=qty,
                            paper=paper_v,
                            ours=None,
                            status="not reproducible here",
                            scale="ci",
                            explanation=f"dataset {name} is not available offline (data/README.md)",
                        )
                    )
                    continue
                s = stored[name]["summary"][side]
                if c not in s["errors"] and c != "Imp":
                    continue
                ours = s["imp"] if c == "Imp" else s["errors"][c]
                if ours is None or not np.isfinite(ours):
                    continue
                k, m = scale[name]
                status = compare(
                    paper_v, round(ours, 4), abs_tol=ML_TOLERANCE["Imp" if c == "Imp" else "error"]
                )
                expl = ""
                if c == "Imp" and s["errors"][baseline] >= s["errors"][s["best_literature"]]:
                    status = "differs"  # Imp compares gaps of opposite sign: not meaningful, never a match
                    expl = f"{baseline} is not better than the best literature mechanism here, so Imp has no meaning; "
                expl += settings(name, side, c, k, m)
                if c == "(OPT)":
                    expl += "; " + opt_design
                if name in notes:
                    expl += f"; {notes[name]}"
                rows.append(
                    Row(
                        id=rid,
                        chapter=chapter,
                        location=loc,
                        quantity=qty,
                        paper=paper_v,
                        ours=round(ours, 4),
                        status=status,
                        scale="paper" if (k, m) == (100, 1000) else "reduced",
                        explanation=expl,
                    )
                )
    return rows


_ML_TABLE_STYLE = """<style>
table.ml-comparison {border-collapse: collapse; font-size: 0.8em; margin-bottom: 0.3em}
table.ml-comparison th, table.ml-comparison td {padding: 1px 5px; text-align: right}
table.ml-comparison th {text-align: center}
table.ml-comparison td.name {text-align: left}
table.ml-comparison td.scale {white-space: nowrap}
table.ml-comparison td.paper, table.ml-comparison td.na {color: #666}
table.ml-comparison .ok {background: #d8f0d8}
table.ml-comparison .near {background: #fbefc4}
table.ml-comparison .far {background: #f6d2d2}
</style>"""


def ml_comparison_html(
    side: str,
    datasets: Sequence[str],
    columns: Sequence[str],
    paper: Mapping,
    stored: Mapping,
    scale: Mapping,
    *,
    caption: str = "",
) -> str:
    """Table 2 or 3 as an HTML table: per column our value next to the paper's, our cell coloured by
    the deviation |ours − paper| (green within :data:`ML_TOLERANCE`, amber within four times it, red
    beyond; the exact deviation in the cell's tooltip), then the one-sided paired t-test p of OPT
    against the best literature mechanism.

    ``columns`` are the error columns (the DP mechanisms and the non-private baseline); "(OPT)" and
    "Imp" are appended. ``paper[name][side]``, ``stored[name]["summary"][side]`` and ``scale[name]``
    (splits, simulations) as in :func:`ml_ledger_rows`; a dataset absent from ``stored`` shows the
    paper's values only ("not offline").
    """

    cols = [*columns, "(OPT)", "Imp"]
    head = [
        "<th rowspan=2>dataset</th>",
        "<th rowspan=2>splits × sims</th>",
        *(f"<th colspan=2>{html.escape(c)}</th>" for c in cols),
        "<th rowspan=2>p</th>",
    ]
    lines = [_ML_TABLE_STYLE, '<table class="ml-comparison">']
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines += [
        "<thead>",
        "<tr>",
        *head,
        "</tr>",
        "<tr>",
        *("<th>ours</th><th>paper</th>" for _ in cols),
        "</tr>",
        "</thead>",
        "<tbody>",
    ]
    for name in datasets:
        P = paper[name][side]
        lines += ["<tr>", f'<td class="name">{html.escape(name)}</td>']
        if name not in stored:
            lines.append('<td class="na">not offline</td>')
            for c in cols:
                lines.append(
                    f'<td class="na">—</td><td class="paper">{P[c]:.{1 if c == "Imp" else 2}f}</td>'
                )
            lines += ["<td></td>", "</tr>"]
            continue
        s = stored[name]["summary"][side]
        k, m = scale[name]
        lines.append(f'<td class="scale">{k}×{m}</td>')
        for c in cols:
            ours = s.get("imp") if c == "Imp" else s["errors"].get(c)
            digits = 1 if c == "Imp" else 2
            if ours is None or not np.isfinite(ours):
                cell = '<td class="na">—</td>'
            else:
                tol = ML_TOLERANCE["Imp" if c == "Imp" else "error"]
                dev = abs(ours - P[c])
                kind = "ok" if dev <= tol else "near" if dev <= 4 * tol else "far"
                cell = f'<td class="{kind}" title="ours − paper: {ours - P[c]:+.{digits}f}">{ours:.{digits}f}</td>'
            lines.append(cell + f'<td class="paper">{P[c]:.{digits}f}</td>')
        lines += [f"<td>{s['p']:.1e}</td>", "</tr>"]
    tol = ML_TOLERANCE
    lines += [
        "</tbody>",
        "</table>",
        f'<p style="font-size:0.8em">Our cell coloured by |ours − paper|: <span class="ok">≤ '
        f'{tol["error"]:g}</span>, <span class="near">≤ {4 * tol["error"]:g}</span>, '
        f'<span class="far">more</span> points (Imp: ≤ {tol["Imp"]:g}, ≤ {4 * tol["Imp"]:g}); '
        "p: one-sided paired t-test of OPT against the best literature mechanism.</p>",
    ]
    return "\n".join(lines)
