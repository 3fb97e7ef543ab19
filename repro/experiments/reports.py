"""Stored results of Tables 2 and 3, the paper's values, the ledger rows and the HTML tables that
put ours next to the paper's."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..ledger import NO_MEANING
from ..paths import RESULTS
from ..provenance import read_json
from .stats import paired_difference_ci

__all__ = [
    "CSS_PREFIX",
    "ML_TOLERANCE",
    "imp_meaningful",
    "ml_tolerance",
    "RESULTS_DIR",
    "ml_comparison_html",
    "ml_comparison_text",
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


# |ours − paper| within which a Table 2/3 value matches: errors within 0.5 percentage points; Imp
# (a ratio of error gaps, large and noisy where the gaps are small) within 10% of the paper's value,
# and never tighter than the errors' 0.5 points (ml_tolerance)
ML_TOLERANCE = dict(error=0.5, Imp=0.1)


def ml_tolerance(column: str, paper_value: float) -> float:
    """|ours − paper| within which a Table 2/3 value of ``column`` matches (:data:`ML_TOLERANCE`):
    0.5 points for an error, max(10% of |paper|, 0.5) points for Imp."""
    if column != "Imp":
        return ML_TOLERANCE["error"]
    return max(ML_TOLERANCE["Imp"] * abs(float(paper_value)), ML_TOLERANCE["error"])


def imp_meaningful(summary: Mapping, baseline: str, per_split: Mapping | None) -> bool:
    """Whether Imp of a Table 2/3 cell has a meaning: the non-private ``baseline`` is measurably
    better than the best literature mechanism, i.e. the 95% confidence interval of their paired
    difference over the splits (:func:`paired_difference_ci`, ``per_split[m]`` the per-split errors
    of mechanism ``m``) lies above 0. Imp divides by that gap; where it is a near-tie (the interval
    contains 0), or negative, Imp is a ratio of unresolved differences. Without per-split errors
    (fewer than two splits) the gap is not measured and Imp has no meaning."""
    best = summary["best_literature"]
    if per_split is None or best not in per_split or baseline not in per_split:
        return False
    _, lo, _ = paired_difference_ci(per_split[best], per_split[baseline])
    return bool(lo > 0)


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
    alternative: Callable | None = None,
) -> list:
    """One ledger row per (dataset, side, column) of Table 2 or 3: the DP columns, "(OPT)" and
    "Imp".

    ``paper[name][side][column]`` are the paper's values, ``stored[name]["summary"][side]`` ours
    (:func:`summarize`), ``scale[name]`` the (splits, simulations) they were computed with,
    ``settings(name, side, column, k, m)`` the sentence describing our settings, ``opt_design`` how
    our "(OPT)" is built and ``notes[name]`` how a dataset differs from the paper's. A value within
    :func:`ml_tolerance` of the paper's (0.5 points; Imp: max(10% of |paper|, 0.5)) matches; Imp
    never matches where it has no meaning (:func:`imp_meaningful`: the non-private ``baseline`` not
    measurably better than the best literature mechanism). ``alternative(name, side, column)``, if
    given, is ``(label, value)``, our value of the cell under another reading of the paper with
    the scale it ran at, stated in the row as "authors' settings (20 × 200): 42.25", or None where
    that reading was not run; a differing row whose alternative lies within the tolerance is
    recorded as "ambiguous in the paper" (that reading reproduces the paper's number), any other
    differing row keeps "differs" and is filed by
    :func:`repro.ledger.classify` (at the paper's scale: "unexplained"). Datasets the book does not
    include (``name`` not in ``offline``) get "not reproducible here" rows.
    """
    from ..ledger import Row, compare

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
                            explanation=(
                                f"dataset {name} is not included with the book: no "
                                "redistributable copy exists (data/README.md)"
                            ),
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
                    paper_v, round(ours, 4), abs_tol=ml_tolerance(c, paper_v)
                )
                expl = ""
                per_split = stored[name].get("per_split", {}).get(side)
                if c == "Imp" and not imp_meaningful(s, baseline, per_split):
                    # Imp divides by an unresolved or negative gap: no meaning, never a match
                    status = "differs"
                    expl = (f"{baseline} is not measurably better than the best literature "
                            "mechanism here (95% CI of the gap not above 0), so Imp "
                            f"{NO_MEANING}; ")
                expl += settings(name, side, c, k, m)
                alt = None if alternative is None else alternative(name, side, c)
                if alt is not None and alt[1] is not None and np.isfinite(alt[1]):
                    label, value = alt
                    expl += f"; {label}: {value:.2f}"
                    if status == "differs" and abs(value - paper_v) <= ml_tolerance(c, paper_v):
                        status = "ambiguous in the paper"
                        expl += " (within the tolerance: this setting reproduces the paper's value)"
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


# Class names of the HTML tables: one prefix that no stylesheet or script of the book's theme uses
# (Font Awesome's script replaces elements of class "far", "fas", ... by icons: a cell of class
# "far" rendered empty). tests/repro/test_ml_html.py checks the prefix against the theme.
CSS_PREFIX = "mlcmp"
_STYLE = """<style>
table.mlcmp {border-collapse: collapse; font-size: 0.8em; margin-bottom: 0.3em}
table.mlcmp th, table.mlcmp td {padding: 1px 3px; text-align: right; white-space: nowrap}
table.mlcmp th {text-align: center}
table.mlcmp td.mlcmp-name {text-align: left; border-top: 1px solid #bbb}
table.mlcmp tr.mlcmp-ours td {border-top: 1px solid #bbb}
table.mlcmp td.mlcmp-label {text-align: left; color: #666}
table.mlcmp tr.mlcmp-paper td, table.mlcmp .mlcmp-na, table.mlcmp .mlcmp-scale {color: #666}
.mlcmp-ok {background: #d8f0d8}
.mlcmp-near {background: #fbefc4}
.mlcmp-far {background: #f6d2d2}
.mlcmp-nm {background: #e4e4e4; font-style: italic}
</style>"""


def _num(x: float, digits: int) -> str:
    """``x`` to ``digits`` decimals, without the minus sign of a value that rounds to zero."""
    s = f"{x:.{digits}f}"
    return s.lstrip("-") if float(s) == 0 else s


def _fmt(x, digits: int) -> str:
    return "—" if x is None or not np.isfinite(x) else _num(x, digits)


def _p_cell(row: dict, per_split: Mapping | None, ours: str, key: str) -> str:
    """The p-value cell of ``ours`` against the best literature mechanism, with the paired mean
    difference and its 95% confidence interval (over the splits) in the tooltip."""
    p = row.get(key)
    if p is None or not np.isfinite(p):
        return '<td rowspan=2 class="mlcmp-na">—</td>'
    best = row["best_literature"]
    title = ""
    if per_split is not None and ours in per_split and best in per_split:
        m, lo, hi = _paired(per_split, ours, best, 2)
        title = f' title="{html.escape(ours)} − {best}: {m} points, 95% CI [{lo}, {hi}]"'
    return f"<td rowspan=2{title}>{p:.1e}</td>"


def _paired(per_split: Mapping, ours: str, best: str, digits: int) -> tuple[str, str, str]:
    """Mean paired difference ``ours − best`` over the splits and its 95% confidence interval, in
    points, signed, to ``digits`` decimals."""
    return tuple(_signed(100 * v, digits) for v in paired_difference_ci(per_split[ours],
                                                                         per_split[best]))


def _signed(x: float, digits: int) -> str:
    """``x`` with its sign to ``digits`` decimals; a value that rounds to zero as 0."""
    s = _num(x, digits)
    return s if s.startswith("-") or float(s) == 0 else "+" + s


def _table_columns(columns):
    """The shown columns in Table 2's and Table 3's order: "(OPT)" right after OPT (last if there
    is no OPT), then "Imp"."""
    cols = list(columns)
    cols.insert(cols.index("OPT") + 1 if "OPT" in cols else len(cols), "(OPT)")
    return [*cols, "Imp"]


def ml_comparison_text(side: str, datasets: Sequence[str], columns: Sequence[str],
                       paper: Mapping, stored: Mapping, *, digits: int = 3) -> str:
    """What :func:`ml_comparison_html` shows only on hover, as plain text of at most 80 columns:
    per dataset the deviation ours − paper of every cell (points; Imp as printed), and the mean
    paired difference of OPT and of (OPT) against the best literature mechanism over the splits
    with its 95% confidence interval (points), behind the table's p-values.

    Arguments as in :func:`ml_comparison_html`; datasets absent from ``stored`` are skipped;
    ``digits``: decimals of the paired differences.
    """
    cols = _table_columns(columns)
    names = [n for n in datasets if n in stored]
    w = max(len(n) for n in names)
    where = "in-sample" if side == "in" else "out-of-sample"
    lines = [f"{where}: ours − paper (points)",
             f"{'dataset':{w}s}" + "".join(f"{c:>9s}" for c in cols)]
    for name in names:
        s, P = stored[name]["summary"][side], paper[name][side]
        devs = []
        for c in cols:
            ours = s.get("imp") if c == "Imp" else s["errors"].get(c)
            ok = ours is not None and np.isfinite(ours) and P[c] is not None
            devs.append(f"{_signed(ours - P[c], 2) if ok else '—':>9s}")
        lines.append(f"{name:{w}s}" + "".join(devs))
    cw = 3 * digits + 14  # "+0.005 [-0.008, -0.002]" and a space
    lines += ["", f"{where}: minus the best literature mechanism (points),",
              "mean over the splits [95% CI]",
              f"{'dataset':{w}s} {'best':4s} {'OPT':^{cw}s} {'(OPT)':^{cw}s}".rstrip()]
    for name in names:
        s, per = stored[name]["summary"][side], stored[name]["per_split"][side]
        best = s["best_literature"]
        cells = []
        for m in ("OPT", "(OPT)"):
            if m in per:
                mean, lo, hi = _paired(per, m, best, digits)
                cells.append(f"{mean} [{lo}, {hi}]")
            else:
                cells.append("—")
        lines.append(f"{name:{w}s} {best:4s} {cells[0]:{cw}s} {cells[1]:{cw}s}".rstrip())
    return "\n".join(lines)


def ml_comparison_html(side: str, datasets: Sequence[str], columns: Sequence[str], paper: Mapping,
                       stored: Mapping, scale: Mapping, *, caption: str = "",
                       unavailable: str = "not offline") -> str:
    """Table 2 or 3 as an HTML table that fits the book's column: per dataset a row of ours above
    a row of the paper's (as printed, 2 decimals), our cells coloured by the deviation
    |ours − paper| (green within :func:`ml_tolerance`, amber within four times it, red beyond;
    the signed deviation in the cell's tooltip; an Imp without meaning, :func:`imp_meaningful`,
    grey), then the one-sided paired t-test p of OPT and of (OPT) against the best literature
    mechanism (the mean paired difference and its 95% confidence interval in the tooltip; both
    tooltips as text: :func:`ml_comparison_text`).

    ``columns`` are the error columns (the DP mechanisms and the non-private baseline); "(OPT)" is
    shown after OPT and "Imp" last, in the paper's order. ``paper[name][side]``, ``stored[name]``
    (``summary`` and ``per_split``) and ``scale[name]`` (splits, simulations) as in
    :func:`ml_ledger_rows`; a dataset absent from ``stored`` shows the paper's values only, labelled
    ``unavailable``. Every cell holds text; every class name starts with :data:`CSS_PREFIX`.
    """
    cols = _table_columns(columns)
    head = ["<th colspan=2>dataset</th>", *(f"<th>{html.escape(c)}</th>" for c in cols),
            "<th>p OPT</th>", "<th>p (OPT)</th>"]
    lines = [_STYLE, '<table class="mlcmp">']
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines += ["<thead>", "<tr>", *head, "</tr>", "</thead>", "<tbody>"]
    for name in datasets:
        P = paper[name][side]
        digits = {c: 1 if c == "Imp" else 2 for c in cols}
        entry = stored.get(name)
        if entry is None:
            where = f'<span class="mlcmp-scale">{html.escape(unavailable)}</span>'
            ours_cells = ['<td class="mlcmp-na">—</td>' for _ in cols]
            p_cells = ['<td rowspan=2 class="mlcmp-na">—</td>'] * 2
        else:
            s = entry["summary"][side]
            k, m = scale[name]
            where = f'<span class="mlcmp-scale">{k}×{m}</span>'
            per_split = entry.get("per_split", {}).get(side)
            ours_cells = []
            for c in cols:
                ours = s.get("imp") if c == "Imp" else s["errors"].get(c)
                if ours is None or not np.isfinite(ours):
                    ours_cells.append('<td class="mlcmp-na">—</td>')
                    continue
                tol = ml_tolerance(c, P[c])
                dev = ours - P[c]
                kind = "ok" if abs(dev) <= tol else "near" if abs(dev) <= 4 * tol else "far"
                if c == "Imp" and not imp_meaningful(s, columns[-1], per_split):
                    kind = "nm"
                ours_cells.append(f'<td class="mlcmp-{kind}" title="ours − paper: '
                                  f'{dev:+.{digits[c]}f}">{_num(ours, digits[c])}</td>')
            p_cells = [_p_cell(s, per_split, "OPT", "p"), _p_cell(s, per_split, "(OPT)", "p_dd")]
        lines += ['<tr class="mlcmp-ours">',
                  f'<td rowspan=2 class="mlcmp-name">{html.escape(name)}<br>{where}</td>',
                  '<td class="mlcmp-label">ours</td>', *ours_cells, *p_cells, "</tr>",
                  '<tr class="mlcmp-paper">', '<td class="mlcmp-label">paper</td>',
                  *(f"<td>{_fmt(P[c], 2)}</td>" for c in cols), "</tr>"]
    tol, base = ML_TOLERANCE, html.escape(columns[-1])
    lines += ["</tbody>", "</table>",
              '<p style="font-size:0.8em">Our cell coloured by |ours − paper|: '
              '<span class="mlcmp-ok">≤ t</span>, <span class="mlcmp-near">≤ 4t</span>, '
              f'<span class="mlcmp-far">more</span>, with t = {tol["error"]:g} points for an '
              f'error and t = max({tol["Imp"]:g}·|paper|, {tol["error"]:g}) for Imp; '
              f'<span class="mlcmp-nm">Imp</span> grey where {base} is not measurably better '
              f"than the best literature mechanism (95% CI of the gap over the splits not above 0):"
              " Imp has no meaning there and counts as differing."
              " p: one-sided paired t-test over the splits of OPT and of "
              "(OPT) against the best literature mechanism (hover: the mean difference and its "
              "95% confidence interval).</p>"]
    return "\n".join(lines)
