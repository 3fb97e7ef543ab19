"""The book builds strictly (``-W -n --keep-going``) from the stored notebook outputs, and every
page reads within the column as a reader sees it (:mod:`repro.bookcheck`, with no list of known
offenders; ``scripts/check_pages.py`` measures the same pages in headless Chromium).

Notebook execution is turned off for the build: nbval re-executes the notebooks already, so the
build here only catches what Sphinx sees (broken cross-references, unknown citations, toc errors,
missing captions or labels) and renders the stored outputs for the checks. It writes into a
temporary directory and leaves the repository's ``_build`` alone.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from repro.bookcheck import (
    EM_PX,
    EQUATION_MARGIN,
    check_html_page,
    check_html_tree,
    check_notebook,
    content_pages,
    displayed_pt,
    png_info,
    table_min_width_px,
    tex_width_em,
    text_width_px,
    toc_notebooks,
)
from repro.bookpages import wrap_command
from repro.paths import ROOT


def _jupyter_book() -> str | None:
    exe = Path(sys.executable).with_name("jupyter-book")
    return str(exe) if exe.exists() else shutil.which("jupyter-book")


@pytest.fixture(scope="module")
def built_book(tmp_path_factory):
    """(exit status, warnings, log, html folder) of a strict build without execution."""
    pytest.importorskip(
        "jupyter_book", reason="jupyter-book is not installed (pip install -e .[book])"
    )
    yaml = pytest.importorskip(
        "yaml", reason="PyYAML is not installed (it comes with jupyter-book)"
    )
    exe = _jupyter_book()
    if exe is None:
        pytest.skip("the jupyter-book command is not on PATH (pip install -e .[book])")
    tmp = tmp_path_factory.mktemp("book")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    # local extensions are found relative to the config file, which moves to tmp
    ext = config.get("sphinx", {}).get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {k: str(ROOT / v) for k, v in ext.items()}
    config_path = tmp / "_config.yml"
    config_path.write_text(
        yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8"
    )
    env = dict(os.environ, NO_COLOR="1")
    cmd = [
        exe,
        "build",
        str(ROOT),
        "--config",
        str(config_path),
        "--path-output",
        str(tmp / "out"),
        "-W",
        "-n",
        "--keep-going",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    return proc.returncode, warnings, log, tmp / "out" / "_build" / "html"


@pytest.mark.slow
def test_book_builds_strictly_without_execution(built_book):
    code, warnings, log, html = built_book
    assert code == 0, (
        f"strict book build failed (exit {code}):\n"
        + "\n".join(warnings)
        + "\n\n--- full log tail ---\n"
        + log[-6000:]
    )
    assert (html / "index.html").exists()
    # MathJax is served by the book itself: formulas render without a network
    page = (html / "notebooks" / "01_quickstart.html").read_text(encoding="utf-8")
    src = re.search(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page, re.I)
    assert src and not src.group(1).startswith(("http:", "https:", "//")), src
    assert (html / "notebooks" / src.group(1)).resolve().exists()


@pytest.mark.slow
def test_every_page_reads_within_the_column(built_book):
    """Every notebook of the table of contents and every built page: no shown code or output line
    over 80 characters, no equation, table or image wider than the column, figures captioned with
    text of at least 9 pt as displayed, no plumbing on show, no raw TeX, no empty table cell."""
    code, _, _, html = built_book
    assert code == 0
    found = [str(v) for nb in toc_notebooks(ROOT) for v in check_notebook(nb)]
    found += [str(v) for v in check_html_tree(html)]
    assert not found, f"{len(found)} violations (scripts/check_book.py):\n" + "\n".join(found)


@pytest.mark.slow
def test_pages_in_chromium(built_book, tmp_path):
    """The same pages measured in headless Chromium (scripts/check_pages.py): nothing overflows or
    scrolls, no image is shrunk, every formula rendered with the network blocked."""
    pytest.importorskip(
        "websocket", reason="websocket-client is not installed (pip install -e .[test])"
    )
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_pages
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    code, _, _, html = built_book
    assert code == 0
    found = [str(v) for v in check_pages.check_pages(html, None, [], exe)]
    assert not found, f"{len(found)} violations in Chromium:\n" + "\n".join(found)


# ------------------------------------------------------------------ the checker itself (fast)
def _png(width: int, dpi: float = 100.0) -> bytes:
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))

    ppm = round(dpi / 0.0254)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, 1, 8, 0, 0, 0, 0))
        + chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))
        + chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1)))
        + chunk(b"IEND", b"")
    )


def _cell(src, outputs=(), tags=(), caption=None):
    meta = {"tags": list(tags)}
    if caption:
        meta["mystnb"] = {"figure": {"caption": caption, "name": "f"}}
    return {
        "cell_type": "code",
        "source": src,
        "metadata": meta,
        "outputs": list(outputs),
        "execution_count": 1,
    }


def test_notebook_checks_detect_what_they_claim(tmp_path):
    """Long code and output lines at 81 characters (not 80), uncaptioned, wide and small-font
    figures, plumbing on show; hidden input and hidden cells are left alone."""
    long, ok = "x" * 81, "x" * 80

    def image(width, dpi=100.0):
        return [
            {
                "output_type": "display_data",
                "data": {"image/png": base64.b64encode(_png(width, dpi)).decode()},
            }
        ]

    def stream(text):
        return [{"output_type": "stream", "name": "stdout", "text": text}]

    nb = {
        "cells": [
            _cell(long),
            _cell(ok, stream(ok)),
            _cell(long + "\nassert x", tags=["remove-input"]),
            _cell("print()", stream(long)),
            _cell("print()", stream(long), tags=["remove-output"]),
            _cell("plot()", image(1200)),
            _cell("plot(fontsize=8)", image(600), caption="ok"),
            _cell("plot()", image(600, dpi=72), caption="ok"),
            _cell("assert x == 1\nrecord(rows)"),
            _cell("assert x == 1", tags=["remove-cell"]),
            _cell("plot()", image(672), caption="ok"),
            _cell("d = json.loads(path.read_text())", tags=["hide-input"]),
            _cell("d = json.loads(path.read_text())", tags=["remove-input"]),
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    p = tmp_path / "t.ipynb"
    p.write_text(json.dumps(nb))
    kinds = sorted((v.kind, v.detail.split(":")[0]) for v in check_notebook(p))
    assert kinds == [
        ("long-code", "cell 0 line 1"),
        ("long-output", "cell 3 line 1"),
        ("plumbing", "cell 11"),
        ("plumbing", "cell 8"),
        ("small-font", "cell 5"),
        ("small-font", "cell 6"),
        ("small-font", "cell 7"),
        ("uncaptioned-figure", "cell 5"),
        ("wide-figure", "cell 5"),
    ]


def test_png_resolution_and_displayed_font_size():
    assert png_info(_png(700, 100.0))[::2] == (700, pytest.approx(100.0, abs=0.01))
    assert displayed_pt(9, 672, 96) == pytest.approx(9)
    assert displayed_pt(10, 1344, 100) == pytest.approx(10 * 100 / 96 / 2)  # shrunk to the column
    assert displayed_pt(9, 600, 72) < 9


def test_tex_width_estimate():
    """Longer formulas are wider, a split line counts once, a tag is added to its line."""
    short = tex_width_em(r"\gamma(A) \le e^{\eps}\gamma(A - \varphi) + \delta")
    assert 8 < short < 20
    long = r"\sum_i p(i)\big(c_i(\beta) - \underline c_i(\beta)\big) + " * 4
    assert tex_width_em(long) > 40
    assert tex_width_em(long.replace(" + ", r" \\ + ")) < tex_width_em(long) / 2
    assert tex_width_em(r"x = 1 \tag{P}") > tex_width_em("x = 1") + 2
    assert tex_width_em(r"\frac{a + b + c + d}{2}") == pytest.approx(
        tex_width_em("a + b + c + d") + 0.3
    )


# Display equations of the book and their widths in CSS px as Chromium 142 set them with MathJax
# 3 at a 1280 px window (tagged ones: the min-width MathJax gives the table of equation and tag).
MEASURED_EQUATIONS = [
    (r"\Prob(X \in A) \le e^{\eps}\, \Prob(X + \varphi \in A) + \delta .", 296),
    (
        r"\gamma(A) \;\le\; e^{\eps}\,\gamma(A - \varphi) + \delta \qquad \forall "
        r"(\varphi, A) \in \mathcal E, \tag{P}",
        456,
    ),
    (
        r"\begin{split} c(x) = \begin{cases} 0 & \text{if } x = 0,\\ 1 & \text{if } x\ne 0 "
        r"\text{ and } |x|\le 2\lceil 1/(2\delta)\rceil\Delta f,\\ 1+|x| & \text{otherwise.}"
        r"\end{cases} \end{split}",
        438,
    ),
    (
        r"\text{Table 4: } 100\%\cdot\frac{B_{UB} - O}{\max\{O, 1\}}, \qquad "
        r"\text{Table 5: } 100\%\cdot\frac{O - B_{LB}}{\max\{O, 1\}}, \qquad "
        r"\text{Tables 1, 6: } 100\%\cdot\frac{B_{UB} - B_{LB}}{\max\{O, 1\}}.",
        862,
    ),
    (
        r"V(\varphi, A) = \sum_{j} p(j)\,\frac{|A \cap \Pi_j|}{|\Pi_j|} - e^{\eps} \sum_j "
        r"p(j)\,\frac{|A \cap (\Pi_j + \varphi)|}{|\Pi_j|} - \delta \le 0 \qquad "
        r"\text{(equation (9))}.",
        736,
    ),
]


@pytest.mark.parametrize("tex,px", MEASURED_EQUATIONS)
def test_equation_width_matches_chromium(tex, px):
    """The static estimate is within the stated margin of the browser's width, both ways."""
    est = tex_width_em(tex) * EM_PX
    assert px / EQUATION_MARGIN <= est <= px * EQUATION_MARGIN, (est, px)


def test_table_width_follows_the_page_styles():
    """Font size, padding, min-width and nowrap of a notebook's own <style> rules and of inline
    styles; header cells bold; an inline formula as its TeX width."""
    from bs4 import BeautifulSoup

    word = "abcdefghij"
    html = f"""<article class="bd-article"><style>
    table.small {{font-size: 0.5em}} table.small td {{padding: 1px 5px}}
    .wide td.expl {{min-width: 30em}} td.one {{white-space: nowrap}}</style>
    <table id="a"><tr><td>{word}</td></tr></table>
    <table id="b" class="small"><tr><td>{word}</td></tr></table>
    <table id="c" class="wide"><tr><td class="expl">x</td></tr></table>
    <table id="d"><tr><td class="one">{word} {word}</td></tr></table>
    <table id="e"><tr><th>{word}</th></tr></table>
    <table id="f"><tr><td><span class="math">\\(x + y + z\\)</span> ab</td></tr></table>
    <table id="g" style="font-size:0.5em"><tr><td style="padding:1px 5px">{word}</td></tr></table>
    </article>"""
    art = BeautifulSoup(html, "html.parser").article
    width = {t["id"]: table_min_width_px(t, art) for t in art.find_all("table")}
    assert width["a"] == pytest.approx(text_width_px(word) + 16)
    assert width["b"] == pytest.approx(text_width_px(word, 8.0) + 10)
    assert width["c"] == pytest.approx(30 * 16 + 16)
    assert width["d"] == pytest.approx(text_width_px(f"{word} {word}") + 16)
    assert width["e"] == pytest.approx(1.1 * text_width_px(word) + 16)
    assert width["f"] == pytest.approx(0.9 * tex_width_em("x + y + z") * EM_PX + 16)
    assert width["g"] == pytest.approx(width["b"])  # inline styles count as the rules do


def test_status_commands_wrap_within_the_column():
    cmd = "sweep.py table3 --datasets " + ",".join(["post-operative"] * 9) + " --jobs 1"
    lines = wrap_command(cmd, indent="  ")
    assert all(len(line) <= 80 for line in lines) and len(lines) > 2
    assert re.sub(r",\s+", ",", " ".join(lines)).split() == cmd.split()
    assert wrap_command("short --x 1", indent="  ") == ["  short --x 1"]


def test_html_checks_detect_what_they_claim(tmp_path):
    """Long <pre> lines, a wide equation, a wide table, an empty and an icon-font cell, raw TeX and
    an uncaptioned image are found; math, code and captioned narrow images pass."""
    (tmp_path / "narrow.png").write_bytes(_png(600))
    (tmp_path / "wide.png").write_bytes(_png(1000))
    wide_tex = " + ".join([r"\frac{a_i}{b_i} \sum_{j} c_{ij}"] * 12)
    page = f"""<html><body><article class="bd-article">
    <pre>{"y" * 81}</pre><pre>{"y" * 80}</pre>
    <div class="math notranslate nohighlight">\\[{wide_tex}\\]</div>
    <div class="math notranslate nohighlight">\\[x \\le 1\\]</div>
    <div class="math notranslate nohighlight">\\[\\begin{{split}}x \\tag{{1}}\\end{{split}}\\]</div>
    <p>text with <span class="math">\\(x\\)</span> and <code>$HOME</code>
    and a raw \\frac{{1}}{{2}}</p>
    <table><tr><td>{"w" * 90}</td><td>ok</td></tr>
    <tr><td></td><td class="far">1.5</td></tr></table>
    <figure><img src="narrow.png"><figcaption>ok</figcaption></figure>
    <img src="wide.png">
    </article></body></html>"""
    p = tmp_path / "page.html"
    p.write_text(page, encoding="utf-8")
    kinds = sorted(v.kind for v in check_html_page(p, tmp_path))
    # the wide image is shrunk to the column, so its text shrinks too (small-font)
    assert kinds == [
        "empty-cell",
        "empty-cell",
        "long-line",
        "raw-tex",
        "small-font",
        "tex-error",
        "uncaptioned-figure",
        "wide-equation",
        "wide-image",
        "wide-table",
    ]


def test_content_pages_skip_sphinx_pages_and_the_redirect(tmp_path):
    for name, text in {
        "index.html": '<meta http-equiv="Refresh" content="0; url=book/intro.html" />',
        "search.html": "<html></html>",
        "_static/x.html": "<html></html>",
        "book/intro.html": '<html><article class="bd-article"></article></html>',
    }.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    pages = [p.relative_to(tmp_path).as_posix() for p in content_pages(tmp_path)]
    assert pages == ["book/intro.html"]


def test_unnumbered_pages_number_their_figures_from_one():
    """Sphinx counts the figures of all unnumbered pages together; the book's extension restarts
    the count on each such page and leaves numbered chapters alone."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("dpdro_pages", ROOT / "book/_ext/dpdro_pages.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    env = SimpleNamespace(
        toc_secnumbers={"ch": {"": (3,)}, "intro": {}},
        toc_fignumbers={
            "intro": {"figure": {"a": (1,)}},
            "ledger": {"figure": {"b": (3,), "c": (2,)}, "table": {"t": (1,)}},
            "ch": {"figure": {"d": (3, 1)}},
        },
    )
    assert ext._number_figures_per_page(None, env) == ["ledger"]
    assert env.toc_fignumbers["ledger"] == {"figure": {"c": (1,), "b": (2,)}, "table": {"t": (1,)}}
    assert env.toc_fignumbers["ch"] == {"figure": {"d": (3, 1)}}
    assert env.toc_fignumbers["intro"] == {"figure": {"a": (1,)}}
