r"""Checks of the book as a reader sees it, at the real size of the text column.

The rendered column of sphinx-book-theme at a 1280 px wide window is :data:`COLUMN_PX` = 690 CSS
pixels, about :data:`LIMIT` = 80 characters of code. Figures must be drawn at the size they are
shown, with text of at least :data:`MIN_FONT_PT` = 9 pt as displayed. There is no list of known
offenders: every page is held to the same limits.

Notebook checks (:func:`check_notebook`, no build needed), on what a reader sees of each code cell
(input unless tagged ``remove-input``/``remove-cell``, outputs unless ``remove-output``):

``long-code`` / ``long-output``
    a code line, or a line of text output, longer than :data:`LIMIT` characters;
``uncaptioned-figure``
    an image output without a myst-nb caption (``metadata.mystnb.figure.caption``);
``wide-figure``
    a PNG wider than :data:`IMAGE_PX` (the column less the figure's inset): the theme shrinks it,
    and its text with it;
``small-font``
    text of a shown figure smaller than :data:`MIN_FONT_PT` as displayed: an explicit font size
    below it in the cell's code (``fontsize=8``, ``"small"``, ...), or a PNG whose resolution and
    width make text drawn at :data:`MIN_FONT_PT` appear smaller (:func:`displayed_pt`);
``plumbing``
    shown code that records the ledger, reads provenance or a stored file (``read_json``,
    ``json.loads``, ``read_text``), times itself or asserts: it belongs in a
    hidden cell (``remove-cell``) or in library code.

HTML checks (:func:`check_html_tree`, on a built ``_build/html``), on the article of every page:

``long-line``
    a line of a ``<pre>`` block (code or output) longer than :data:`LIMIT` characters;
``wide-equation``
    a display equation whose widest line, estimated from its TeX (:func:`tex_width_em`), does
    not fit the column, with the estimate's margin (:data:`EQUATION_MARGIN`);
``wide-table``
    a table whose columns cannot shrink into the column (:func:`table_min_width_px`, with
    :data:`TABLE_MARGIN`);
``wide-image`` / ``small-font``
    an image file wider than the column, or one on which 9 pt text appears smaller;
``uncaptioned-figure``
    an image outside a captioned figure;
``raw-tex``
    a ``$`` or a TeX command in the rendered text (LaTeX that did not render);
``tex-error``
    a ``\tag`` inside the ``split`` environment Sphinx wraps around a multi-line ``$$`` display
    (MathJax refuses it; write such a display as ``\begin{equation*}...\end{equation*}``);
``empty-cell``
    a table cell with nothing in it, or whose text is set in the theme's icon font.

What needs a browser (overflow of any element, images shown below their natural size, MathJax's
actual output) is measured by ``scripts/check_pages.py`` with :data:`PAGE_PROBE`.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LIMIT",
    "COLUMN_PX",
    "IMAGE_PX",
    "MIN_FONT_PT",
    "EM_PX",
    "EQUATION_MARGIN",
    "TABLE_MARGIN",
    "PAGE_PROBE",
    "Violation",
    "check_notebook",
    "check_html_page",
    "check_html_tree",
    "content_pages",
    "png_info",
    "displayed_pt",
    "tex_width_em",
    "text_width_px",
    "table_min_width_px",
    "toc_notebooks",
]

LIMIT = 80  # monospace characters in the column
COLUMN_PX = 690  # CSS pixels of the article column at a 1280 px window
IMAGE_PX = 672  # widest image the theme shows at natural size (figures are inset; Chromium)
MIN_FONT_PT = 9.0  # smallest text size in a figure, as displayed
EM_PX = 20.37  # CSS pixels of MathJax's em: 16 px text at its 1.273 scale (Chromium)
# A display equation fails when its estimated width (tex_width_em) times this margin exceeds the
# column: over the book's equations the estimate is within 7% of Chromium's measurement.
EQUATION_MARGIN = 1.07
TABLE_MARGIN = 1.03  # the same for tables (table_min_width_px): within 3% of Chromium's
TEXT_PX = 16.0  # CSS pixels of the theme's text (DejaVu Sans in Debian's Chromium)
CELL_PAD_PX = 16.0  # horizontal padding of a table cell (8 px a side)
# advance widths of DejaVu Sans in em (measured in Chromium), in groups; others 0.62 em
_SANS_EM = {
    ch: em
    for chars, em in (
        ("'ijlIJ°±", 0.28),
        (" ,.·’/:;\\|f-", 0.33),
        ("()[]tr!", 0.39),
        ('"*_`–', 0.5),
        ("szc?εLFkvxyT", 0.56),
        ("VXZBRCAUNHDG&", 0.72),
        ("OQw#+<=>^~×≤≥→M∈", 0.84),
        ("%mW@—…", 0.97),
    )
    for ch in chars
}
PAGE_PROBE = (Path(__file__).with_name("page_probe.js")).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Violation:
    where: str  # notebook or HTML page
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}: {self.detail}"


# ------------------------------------------------------------------------------------------ figures
def png_info(data: bytes) -> tuple[int, int, float] | None:
    """(width, height, dots per inch) of a PNG, from its IHDR and pHYs chunks (96 dpi, the CSS
    pixel, when it records none); None if ``data`` is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    width, height = struct.unpack(">II", data[16:24])
    dpi, i = 96.0, 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I", data[i : i + 4])[0], data[i + 4 : i + 8]
        if kind == b"pHYs" and data[i + 16] == 1:  # unit: metre
            dpi = struct.unpack(">I", data[i + 8 : i + 12])[0] * 0.0254
        if kind == b"IDAT":
            break
        i += 12 + n
    return width, height, dpi


def displayed_pt(font_pt: float, width_px: int, dpi: float, column_px: int = IMAGE_PX) -> float:
    """Size in CSS points at which text drawn at ``font_pt`` in a figure of ``width_px`` pixels
    at ``dpi`` appears in the column: one image pixel is one CSS pixel (96 per inch) until the
    theme shrinks the image to the column."""
    return font_pt * dpi / 96.0 * min(1.0, column_px / width_px)


_FONT_ARG = re.compile(
    r"\b(?:fontsize|labelsize|size|titlesize)\s*=\s*(?:([0-9.]+)|[\"'](xx-small|x-small|small)[\"'])"
)
_NAMED_PT = {"xx-small": 5.8, "x-small": 6.9, "small": 8.3}  # matplotlib's scale at 10 pt


def _font_sizes(source: str) -> list[float]:
    return [float(num) if num else _NAMED_PT[name] for num, name in _FONT_ARG.findall(source)]


# ---------------------------------------------------------------------------------------- notebooks
def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _text(x) -> str:
    return "".join(x) if isinstance(x, list) else (x or "")


_PLUMBING = re.compile(
    r"\b(?:record|Row|read_json|read_text|json\.loads|perf_counter|monotonic|git_commit|provenance)\b"
)


def _plumbing(source: str) -> list[str]:
    """What in shown code is plumbing: asserts, ledger rows, provenance, file loading, timing."""
    found = []
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics
        tree = None
    if tree is not None and any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
        found.append("assert")
    found += sorted(set(_PLUMBING.findall(re.sub(r"#.*", "", source))))
    return found


def check_notebook(
    path: str | Path, limit: int = LIMIT, column_px: int = IMAGE_PX
) -> list[Violation]:
    """The notebook-level violations of one notebook (see the module docstring)."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    out: list[Violation] = []
    name = path.name
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        tags = _tags(cell)
        if "remove-cell" in tags:
            continue
        source = _text(cell.get("source"))
        if "remove-input" not in tags:
            for k, line in enumerate(source.splitlines(), 1):
                if len(line) > limit:
                    out.append(
                        Violation(name, "long-code", f"cell {i} line {k}: {len(line)} chars")
                    )
            what = _plumbing(source)
            if what:
                out.append(Violation(name, "plumbing", f"cell {i}: {', '.join(what)}"))
        if "remove-output" in tags:
            continue
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            texts = []
            if o.get("output_type") == "stream":
                texts.append(_text(o.get("text")))
            elif "text/plain" in data and not (
                {"text/html", "image/png", "image/svg+xml"} & set(data)
            ):
                texts.append(_text(data["text/plain"]))
            for t in texts:
                for k, line in enumerate(t.splitlines(), 1):
                    if len(line) > limit:
                        out.append(
                            Violation(name, "long-output", f"cell {i} line {k}: {len(line)} chars")
                        )
            png = data.get("image/png")
            if not (png or "image/svg+xml" in data):
                continue
            if not caption:
                out.append(Violation(name, "uncaptioned-figure", f"cell {i}"))
            small = [s for s in _font_sizes(source) if s < MIN_FONT_PT]
            if small:
                out.append(
                    Violation(
                        name, "small-font", f"cell {i}: font size {min(small):g} pt in the code"
                    )
                )
            info = png_info(base64.b64decode(_text(png))) if png else None
            if info:
                w, _, dpi = info
                if w > column_px:
                    out.append(Violation(name, "wide-figure", f"cell {i}: {w} px > {column_px} px"))
                shown = displayed_pt(MIN_FONT_PT, w, dpi, column_px)
                if shown < MIN_FONT_PT - 0.05:
                    out.append(
                        Violation(
                            name,
                            "small-font",
                            f"cell {i}: {MIN_FONT_PT:g} pt text appears "
                            f"at {shown:.1f} pt ({w} px, {dpi:.0f} dpi)",
                        )
                    )
    return out


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks listed in ``_toc.yml`` (in order)."""
    files = re.findall(r"file:\s*(\S+)", (Path(root) / "_toc.yml").read_text(encoding="utf-8"))
    return [Path(root) / f"{f}.ipynb" for f in files if (Path(root) / f"{f}.ipynb").exists()]


# ------------------------------------------------------------------------------- equation widths
_SPACES = {
    ",": 0.17,
    ":": 0.22,
    ";": 0.28,
    "!": -0.17,
    " ": 0.25,
    "quad": 1.0,
    "qquad": 2.0,
    "enspace": 0.5,
    "thinspace": 0.17,
    "medspace": 0.22,
    "thickspace": 0.28,
}
_INVISIBLE = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "displaystyle",
    "textstyle",
    "limits",
    "nolimits",
    "nonumber",
    "notag",
    "middle",
    "strut",
    "phantom",
    "label",
    "begin",
    "end",
    "allowbreak",
    "hfill",
}
_TEXT = {
    "text",
    "mathrm",
    "textrm",
    "operatorname",
    "textbf",
    "textit",
    "texttt",
    "mathsf",
    "textsf",
    "mbox",
    "emph",
}
_ACCENT = {
    "mathcal",
    "mathbb",
    "mathbf",
    "boldsymbol",
    "mathit",
    "bm",
    "hat",
    "widehat",
    "tilde",
    "widetilde",
    "bar",
    "overline",
    "underline",
    "vec",
    "dot",
    "ddot",
    "check",
    "mathfrak",
    "mathscr",
    "operatorname*",
    "pmb",
    "mathring",
}
_BIG = {"sum", "prod", "int", "oint", "bigcup", "bigcap", "coprod", "bigoplus", "bigotimes"}
_NAMED = {
    "max",
    "min",
    "log",
    "ln",
    "exp",
    "sup",
    "inf",
    "lim",
    "arg",
    "argmin",
    "argmax",
    "det",
    "Pr",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "sign",
    "liminf",
    "limsup",
    "dim",
    "ker",
}
_REL = {
    "le",
    "leq",
    "ge",
    "geq",
    "ne",
    "neq",
    "in",
    "notin",
    "ni",
    "subset",
    "subseteq",
    "supset",
    "supseteq",
    "approx",
    "sim",
    "simeq",
    "equiv",
    "to",
    "mapsto",
    "rightarrow",
    "leftarrow",
    "Rightarrow",
    "Leftarrow",
    "iff",
    "implies",
    "dashrightarrow",
    "coloneqq",
    "gets",
    "leftrightarrow",
    "Leftrightarrow",
    "propto",
    "ll",
    "gg",
    "lesssim",
    "gtrsim",
    "mid",
    "longrightarrow",
    "perp",
    "cong",
}
_BIN = {
    "cdot",
    "times",
    "pm",
    "mp",
    "cup",
    "cap",
    "setminus",
    "circ",
    "wedge",
    "vee",
    "ast",
    "otimes",
    "oplus",
    "div",
    "star",
    "bullet",
}
_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|[{}^_&~]|[^\s\\{}^_&~]")


def _group(tokens: list[str], i: int) -> tuple[list[str], int]:
    """The tokens of the argument starting at ``tokens[i]`` (a braced group or one token) and
    the index after it."""
    if i >= len(tokens):
        return [], i
    if tokens[i] != "{":
        return [tokens[i]], i + 1
    depth, j = 0, i
    while j < len(tokens):
        depth += tokens[j] == "{"
        depth -= tokens[j] == "}"
        if depth == 0:
            return tokens[i + 1 : j], j + 1
        j += 1
    return tokens[i + 1 :], len(tokens)


def _width(tokens: list[str]) -> float:
    total, i, last_big = 0.0, 0, 0.0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if t in ("^", "_"):
            arg, i = _group(tokens, i)
            w = 0.7 * _width(arg)
            if last_big:  # limits below and above a big operator in display style
                extra = max(0.0, w - last_big)
                total += extra
                last_big = max(last_big, w)
            else:
                total += w
            continue
        last_big = 0.0
        if t == "{":
            arg, i = _group(tokens, i - 1)
            total += _width(arg)
        elif t in ("}", "&", "~"):
            total += 0.33 if t == "~" else 0.0
        elif t.startswith("\\"):
            name = t[1:]
            if name in _SPACES:
                total += _SPACES[name]
            elif name in _INVISIBLE:
                if name in ("begin", "end", "label", "phantom"):
                    arg, i = _group(tokens, i)
                    if name == "phantom":
                        total += _width(arg)
                    elif name == "begin" and "".join(arg).startswith("cases"):
                        total += 1.0
            elif name in _TEXT:
                arg, i = _group(tokens, i)
                total += 0.5 * sum(1 for a in arg if a not in "{}") + 0.1
            elif name in ("frac", "dfrac", "tfrac", "binom"):
                num, i = _group(tokens, i)
                den, i = _group(tokens, i)
                total += (0.75 if name == "tfrac" else 1.0) * max(_width(num), _width(den)) + 0.3
            elif name == "sqrt":
                arg, i = _group(tokens, i)
                total += _width(arg) + 1.0
            elif name in ("underbrace", "overbrace"):
                arg, i = _group(tokens, i)
                last_big = _width(arg)
                total += last_big
                continue
            elif name in _ACCENT:
                arg, i = _group(tokens, i)
                total += (1.15 if name in ("mathcal", "mathscr") else 1.0) * _width(arg)
            elif name == "tag":
                arg, i = _group(tokens, i)
                total += _width(arg) + 2.5
            elif name == "dpdrobox":  # an environment already measured (tex_width_em)
                arg, i = _group(tokens, i)
                total += float("".join(arg))
            elif name in ("hspace", "kern", "mkern"):
                _, i = _group(tokens, i)
                total += 1.0
            elif name in _BIG:
                last_big = 1.45
                total += last_big
                continue
            elif name in _NAMED:
                total += 0.5 * len(name) + 0.3
            elif name in _REL:
                total += 1.35
            elif name in _BIN:
                total += 1.2
            elif name in ("{", "}", "|"):
                total += 0.5
            elif name in ("ldots", "cdots", "dots", "vdots"):
                total += 1.2
            else:
                total += 0.6
        elif t in "=<>":
            total += 1.35
        elif t in "+-*":
            total += 1.2
        elif t in ",;":
            total += 0.45
        elif t in ".:'":
            total += 0.3
        elif t in "()[]|/":
            total += 0.4
        elif t.isdigit():
            total += 0.5
        else:
            total += 0.55
    return total


_ENV = re.compile(r"\\begin\{(\w+\*?)\}(?:\{[^{}]*\})?((?:(?!\\begin\{).)*?)\\end\{\1\}", re.S)
_ROWS = re.compile(r"\\\\(?:\[[^\]]*\])?")
_MATRIX = {"matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix", "array"}


def _env_width(name: str, body: str) -> float:
    r"""Width in em of an environment whose body has no nested environment: columns (``&``) as
    wide as their widest row (``\\``), the gaps between columns, a brace or delimiters."""
    cols: list[float] = []
    for row in _ROWS.split(body):
        for k, cell in enumerate(row.split("&")):
            w = _width(_TOKEN.findall(cell))
            cols[k : k + 1] = [max(cols[k], w)] if k < len(cols) else [w]
    name = name.rstrip("*")
    if name == "cases":  # a brace, and a quad between value and condition
        return sum(cols) + 1.0 * (len(cols) - 1) + 0.9
    if name in _MATRIX:
        return sum(cols) + 1.0 * (len(cols) - 1) + (0.0 if name == "matrix" else 0.8)
    # aligned, split, align, gathered, ...: pairs of columns (right | left) with 2 em between pairs
    return sum(cols) + 2.0 * ((len(cols) - 1) // 2)


def tex_width_em(tex: str) -> float:
    r"""Estimated width in em of the widest line of a display formula as MathJax sets it: every
    token's advance (letters, operators with their spacing, big operators with limits, fractions
    as their wider part, ``\text`` as its characters, a ``\tag`` pushed to the right); an
    environment (``aligned``, ``split``, ``cases``, matrices) as wide as its columns, innermost
    first; line breaks at ``\\``. One em is :data:`EM_PX` CSS pixels; calibrated against
    Chromium's measurements of the book's equations (``tests/repro/test_book.py``)."""
    tex = re.sub(r"^\s*\\[\[(]|\\[\])]\s*$", "", tex.strip())
    tex = re.sub(r"(?<!\\)%.*", "", tex)  # a comment, not \%
    while True:
        m = _ENV.search(tex)
        if m is None:
            break
        tex = f"{tex[: m.start()]}\\dpdrobox{{{_env_width(m[1], m[2]):.3f}}}{tex[m.end() :]}"
    return max((_width(_TOKEN.findall(line)) for line in _ROWS.split(tex)), default=0.0)


# ----------------------------------------------------------------------------------- HTML checks
def text_width_px(text: str, font_px: float = TEXT_PX) -> float:
    """Width in CSS pixels of ``text`` set in the theme's font at ``font_px``."""
    return font_px * sum(_SANS_EM.get(ch, 0.62) for ch in text)


_RULE = re.compile(r"([^{}@]+)\{([^{}]*)\}")
_LENGTH = re.compile(r"(-?[0-9.]+)(px|em|rem)?")


def _declarations(body: str) -> dict[str, str]:
    """``{property: value}`` of a CSS declaration block (lower case)."""
    out = {}
    for d in body.split(";"):
        if ":" in d:
            k, v = d.split(":", 1)
            out[k.strip().lower()] = v.strip().lower()
    return out


def _css_rules(art) -> list[tuple[str, dict[str, str]]]:
    """(selector, declarations) of the ``<style>`` blocks in a page's article (the tables that
    notebooks write as HTML carry their own)."""
    rules = []
    for style in art.find_all("style"):
        for selectors, body in _RULE.findall(style.get_text()):
            decls = _declarations(body)
            rules += [(sel.strip(), decls) for sel in selectors.split(",") if sel.strip()]
    return rules


def _cell_style(cell, art, rules, cache) -> tuple[float, float, float, bool]:
    """(font size px, horizontal padding px, min-width px, nowrap) of a table cell under the
    page's own style rules and inline styles (font sizes in em compound from the table down to
    the cell)."""

    def decls(el):
        out: dict[str, str] = {}
        for sel, d in rules:
            if sel not in cache:
                try:
                    cache[sel] = {id(x) for x in art.select(sel)}
                except Exception:  # a selector soupsieve does not support
                    cache[sel] = set()
            if id(el) in cache[sel]:
                out.update(d)
        out.update(_declarations(el.get("style") or ""))  # an inline style wins
        return out

    font, chain = TEXT_PX, [cell.find_parent("table"), cell.find_parent("tr"), cell]
    for el in chain:
        m = _LENGTH.match(decls(el).get("font-size", "")) if el is not None else None
        if m:
            font = float(m[1]) * (font if m[2] == "em" else TEXT_PX if m[2] == "rem" else 1.0)

    def px(value: str) -> float:
        m = _LENGTH.match(value)
        return float(m[1]) * (font if m[2] == "em" else TEXT_PX if m[2] == "rem" else 1.0)

    d = decls(cell)
    pad = CELL_PAD_PX
    if "padding" in d:
        parts = d["padding"].split()
        right = parts[1] if len(parts) > 1 else parts[0]
        left = parts[3] if len(parts) > 3 else right
        pad = px(left) + px(right)
    min_width = px(d["min-width"]) if _LENGTH.match(d.get("min-width", "")) else 0.0
    return font, pad, min_width, d.get("white-space") == "nowrap"


def table_min_width_px(table, art=None, rules=None, cache=None) -> float:
    """Smallest width (CSS px) a table can take: per column, its longest unbreakable word (or
    inline formula) at the cell's font size, plus the cell's padding, added over the columns.
    Font size, padding, min-width and ``white-space: nowrap`` follow the ``<style>`` rules of
    the page's article (``art``) and the elements' inline ``style`` attributes; within 7% of
    Chromium's min-content width on the book's tables."""
    art = art if art is not None else table
    rules = _css_rules(art) if rules is None else rules
    cache = {} if cache is None else cache
    widths: dict[int, float] = {}
    for row in table.find_all("tr"):
        col = 0
        for cell in row.find_all(["td", "th"], recursive=False):
            font, pad, min_width, nowrap = _cell_style(cell, art, rules, cache)
            maths = cell.select(".math")
            w = max(
                [0.0] + [0.9 * tex_width_em(m.get_text()) * EM_PX * font / TEXT_PX for m in maths]
            )
            text = " ".join(
                s for s in cell.find_all(string=True) if not any(m in s.parents for m in maths)
            )
            words = [text.strip()] if nowrap else re.split(r"[\s\u200b]+", text)
            bold = 1.1 if cell.name == "th" else 1.0  # DejaVu Sans Bold is about 10% wider
            w = max([w, min_width] + [bold * text_width_px(x, font) for x in words if x]) + pad
            span = int(cell.get("colspan", 1) or 1)
            if span == 1:
                widths[col] = max(widths.get(col, 0.0), w)
            col += span
    return sum(widths.values())


_RAW_TEX = re.compile(r"\$|\\[A-Za-z]+|\\[()\[\]]")
_SKIP_TEXT = {"script", "style", "pre", "code", "math", "svg", "textarea", "kbd"}
_ICON_CLASSES = {"fa", "far", "fas", "fab", "fal", "fad", "fa-solid", "fa-regular", "fa-brands"}


def _article(soup):
    return soup.select_one("article.bd-article") or soup.select_one("main") or soup


def check_html_page(
    path: Path, html_root: Path, limit: int = LIMIT, column_px: int = COLUMN_PX
) -> list[Violation]:
    """The HTML-level violations of one built page (see the module docstring)."""
    from bs4 import BeautifulSoup  # comes with the book's theme

    soup = BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser")
    art = _article(soup)
    rel = path.relative_to(html_root).as_posix()
    out: list[Violation] = []
    for pre in art.find_all("pre"):
        for line in pre.get_text().splitlines():
            if len(line) > limit:
                out.append(
                    Violation(rel, "long-line", f"{len(line)} chars: {line[:50].strip()}...")
                )
    for div in art.select("div.math"):
        tex = div.get_text()
        em = tex_width_em(tex)
        text = " ".join(tex.split())[:60]
        if em * EM_PX * EQUATION_MARGIN > column_px:
            out.append(Violation(rel, "wide-equation", f"about {em * EM_PX:.0f} px: {text}..."))
        if re.search(r"\\begin\{split\}", tex) and "\\tag" in tex:
            out.append(Violation(rel, "tex-error", f"\\tag inside split: {text}..."))
    rules, cache = _css_rules(art), {}
    for table in art.find_all("table"):
        w = table_min_width_px(table, art, rules, cache)
        if w * TABLE_MARGIN > column_px:
            head = " ".join(table.get_text(" ").split())[:50]
            out.append(Violation(rel, "wide-table", f"at least {w:.0f} px: {head}..."))
        for td in table.find_all("td"):
            icon = _ICON_CLASSES & set(
                td.get("class", []) + [c for e in td.find_all(True) for c in e.get("class", [])]
            )
            if icon or not (td.get_text().strip() or td.find(["img", "svg"])):
                row = td.find_parent("tr")
                what = f"class {sorted(icon)[0]} (the theme's icon font)" if icon else "empty"
                out.append(
                    Violation(
                        rel,
                        "empty-cell",
                        f"{what}: row '{' '.join(row.get_text(' ').split())[:50]}'",
                    )
                )
    for img in art.find_all("img"):
        src = img.get("src", "")
        if src.startswith("data:") or "_static/" in src:
            continue  # logos and icons of the theme
        fig = img.find_parent("figure")
        if fig is None or fig.find("figcaption") is None:
            out.append(Violation(rel, "uncaptioned-figure", src))
        f = (path.parent / src).resolve()
        info = png_info(f.read_bytes()) if f.suffix.lower() == ".png" and f.exists() else None
        if info:
            w, _, dpi = info
            if w > IMAGE_PX:
                out.append(Violation(rel, "wide-image", f"{src}: {w} px > {IMAGE_PX} px"))
            shown = displayed_pt(MIN_FONT_PT, w, dpi)
            if shown < MIN_FONT_PT - 0.05:
                out.append(
                    Violation(
                        rel,
                        "small-font",
                        f"{src}: {MIN_FONT_PT:g} pt text appears at {shown:.1f} pt",
                    )
                )
    for s in art.find_all(string=True):
        if any(
            p.name in _SKIP_TEXT or "math" in (p.get("class") or [])
            for p in s.parents
            if p is not art
        ):
            continue
        for m in _RAW_TEX.finditer(str(s)):
            ctx = " ".join(str(s)[max(0, m.start() - 30) : m.end() + 30].split())
            out.append(Violation(rel, "raw-tex", f"...{ctx}..."))
    return out


_REDIRECT = re.compile(r"\s*<meta http-equiv=\"Refresh\"", re.I)


def content_pages(html_root: str | Path) -> list[Path]:
    """The content pages of a built book: every HTML page except Sphinx's own (search, index,
    sources, static files) and Jupyter Book's redirect to the root page."""
    html_root = Path(html_root)
    pages = []
    for p in sorted(html_root.rglob("*.html")):
        rel = p.relative_to(html_root)
        if rel.parts[0].startswith("_") or rel.name in ("search.html", "genindex.html"):
            continue
        if _REDIRECT.match(p.read_text(encoding="utf-8", errors="replace")[:200]):
            continue
        pages.append(p)
    return pages


def check_html_tree(
    html_root: str | Path, limit: int = LIMIT, column_px: int = COLUMN_PX
) -> list[Violation]:
    """The HTML-level violations of every content page of a built book."""
    html_root = Path(html_root)
    out: list[Violation] = []
    for p in content_pages(html_root):
        out.extend(check_html_page(p, html_root, limit, column_px))
    return out
