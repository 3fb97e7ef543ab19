"""Checks of the book as a reader sees it (``scripts/check_book.py``; notebook checks also in the tests).

Notebook checks (no build needed), on the cells a reader sees:

* ``long-code``: a line of a code cell whose input is shown (not tagged ``remove-input`` or
  ``remove-cell``) is longer than :data:`LIMIT` characters;
* ``long-output``: a line of a text output (stream, ``text/plain``) that is shown is longer than
  :data:`LIMIT` characters (outputs of a cell tagged ``remove-output``/``remove-cell`` are not shown;
  ``text/plain`` of a cell that also returns HTML or an image is not shown either);
* ``uncaptioned-figure``: an image output without a myst-nb figure caption
  (``metadata.mystnb.figure.caption``);
* ``wide-figure``: an image output wider than :data:`COLUMN_PX` pixels, which the theme shrinks to
  the column, so its fonts shrink with it.

HTML checks (on a built ``_build/html``):

* ``raw-math``: a ``$``, ``\\sum``, ``\\frac``, ``\\mathcal``, ``\\eps`` or ``\\delta`` left in the rendered
  text (outside MathJax, code and scripts), i.e. LaTeX that did not render;
* ``long-line``: a line of a ``<pre>`` block longer than :data:`LIMIT` characters;
* ``uncaptioned-figure``: an ``<img>`` of a page that is not inside a ``<figure>`` with a caption;
* ``wide-image``: an image file wider than :data:`COLUMN_PX` pixels.
"""

from __future__ import annotations

import base64
import html as _html
import json
import re
import struct
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["LIMIT", "COLUMN_PX", "Violation", "check_notebook", "check_html_tree", "png_width", "toc_notebooks"]

LIMIT = 88
COLUMN_PX = 900  # sphinx-book-theme's text column is about 800-900 CSS px at a 1280 px wide window


@dataclass(frozen=True)
class Violation:
    where: str  # notebook or HTML page
    kind: str
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}: {self.detail}"


def png_width(data: bytes) -> int | None:
    """Pixel width of a PNG (from its IHDR chunk), None if ``data`` is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    return struct.unpack(">I", data[16:20])[0]


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _text(x) -> str:
    return "".join(x) if isinstance(x, list) else (x or "")


def check_notebook(path: str | Path, limit: int = LIMIT, column_px: int = COLUMN_PX) -> list[Violation]:
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
        if "remove-input" not in tags:
            for k, line in enumerate(_text(cell.get("source")).splitlines(), 1):
                if len(line) > limit:
                    out.append(Violation(name, "long-code", f"cell {i} line {k}: {len(line)} chars"))
        if "remove-output" in tags:
            continue
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            texts = []
            if o.get("output_type") == "stream":
                texts.append(_text(o.get("text")))
            elif "text/plain" in data and not ({"text/html", "image/png", "image/svg+xml"} & set(data)):
                texts.append(_text(data["text/plain"]))
            for t in texts:
                for k, line in enumerate(t.splitlines(), 1):
                    if len(line) > limit:
                        out.append(Violation(name, "long-output", f"cell {i} line {k}: {len(line)} chars"))
            png = data.get("image/png")
            if png or "image/svg+xml" in data:
                if not caption:
                    out.append(Violation(name, "uncaptioned-figure", f"cell {i}"))
                if png:
                    w = png_width(base64.b64decode(_text(png)))
                    if w and w > column_px:
                        out.append(Violation(name, "wide-figure", f"cell {i}: {w} px > {column_px} px"))
    return out


def toc_notebooks(root: Path) -> list[Path]:
    """The notebooks listed in ``_toc.yml`` (in order)."""
    files = re.findall(r"file:\s*(\S+)", (Path(root) / "_toc.yml").read_text(encoding="utf-8"))
    return [Path(root) / f"{f}.ipynb" for f in files if (Path(root) / f"{f}.ipynb").exists()]


# ------------------------------------------------------------------------------------------- HTML
_RAW_MATH = re.compile(r"\$|\\(sum|frac|mathcal|eps|varepsilon|delta|beta|le|ge|infty)\b")


class _Page(HTMLParser):
    """Collects visible text outside math/code/script, <pre> blocks and images with their figure context."""

    SKIP = {"script", "style", "pre", "code", "math", "svg", "textarea"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, skipping)
        self.text: list[str] = []
        self.pre: list[str] = []
        self.in_pre = 0
        self.images: list[tuple[str, bool]] = []  # (src, inside a captioned figure)
        self.figures: list[dict] = []

    def _skipping(self) -> bool:
        return any(s for _, s in self.stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "") or ""
        skip = tag in self.SKIP or "math" in cls.split() or "MathJax" in cls or "highlight" in cls
        if tag in ("img", "br", "hr", "meta", "link", "input", "source", "wbr", "col", "area"):
            if tag == "img":
                self.images.append((a.get("src", ""), bool(self.figures)))
                if self.figures:
                    self.figures[-1]["imgs"].append(len(self.images) - 1)
            return
        if tag == "figure":
            self.figures.append({"imgs": [], "caption": False})
        if tag == "figcaption" and self.figures:
            self.figures[-1]["caption"] = True
        if tag == "pre":
            self.in_pre += 1
            self.pre.append("")
        self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        if tag == "figure" and self.figures:
            fig = self.figures.pop()
            for k in fig["imgs"]:
                src, _ = self.images[k]
                self.images[k] = (src, fig["caption"])
        if tag == "pre" and self.in_pre:
            self.in_pre -= 1
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k][0] == tag:
                del self.stack[k:]
                break

    def handle_data(self, data):
        if self.in_pre and self.pre:
            self.pre[-1] += data
        if not self._skipping():
            self.text.append(data)


def check_html_page(path: Path, html_root: Path, limit: int = LIMIT, column_px: int = COLUMN_PX) -> list[Violation]:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    rel = str(path.relative_to(html_root))
    out: list[Violation] = []
    # only the article body: drop the navigation and footer text by taking what the theme puts in <main>
    text = _html.unescape(" ".join(page.text))
    for m in _RAW_MATH.finditer(text):
        ctx = text[max(0, m.start() - 30): m.end() + 30].replace("\n", " ")
        out.append(Violation(rel, "raw-math", f"...{ctx}..."))
    for block in page.pre:
        for k, line in enumerate(block.splitlines(), 1):
            if len(line) > limit:
                out.append(Violation(rel, "long-line", f"{len(line)} chars: {line[:60]}..."))
    for src, captioned in page.images:
        if src.startswith("data:") or "_static/" in src:
            continue  # logos and icons of the theme
        if not captioned:
            out.append(Violation(rel, "uncaptioned-figure", src))
        f = (path.parent / src).resolve()
        if f.exists() and f.suffix.lower() == ".png":
            w = png_width(f.read_bytes())
            if w and w > column_px:
                out.append(Violation(rel, "wide-image", f"{src}: {w} px > {column_px} px"))
    return out


def check_html_tree(html_root: str | Path, limit: int = LIMIT, column_px: int = COLUMN_PX) -> list[Violation]:
    """The HTML-level violations of every content page of a built book."""
    html_root = Path(html_root)
    out: list[Violation] = []
    for p in sorted(html_root.rglob("*.html")):
        rel = p.relative_to(html_root)
        if rel.parts[0].startswith("_") or rel.name in ("search.html", "genindex.html"):
            continue
        out.extend(check_html_page(p, html_root, limit, column_px))
    return out
