#!/usr/bin/env python3
"""Check the book as a reader sees it, at the real column (80 characters, 690 px); builds nothing.

    .venv/bin/python scripts/check_book.py [--html _build/html] [--notebooks-only] [--quiet]

Checks every notebook of ``_toc.yml`` (shown code and output lines, captions, figure widths and
font sizes as displayed, plumbing left on show) and, when a built book exists, its HTML (``<pre>``
lines, display equations and tables wider than the column, images wider than it or with text
below 9 pt as displayed, LaTeX left raw, empty table cells): see :mod:`repro.bookcheck`. Build
first with ``python3 tasks.py book``; ``scripts/check_pages.py`` then renders every page in
headless Chromium and measures what only a browser can. Prints every violation, then a count per
page and kind; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from repro.bookcheck import check_html_tree, check_notebook, toc_notebooks
from repro.paths import ROOT


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--html", default=str(ROOT / "_build" / "html"))
    ap.add_argument("--notebooks-only", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="counts only")
    args = ap.parse_args(argv)
    found = []
    for nb in toc_notebooks(ROOT):
        found += check_notebook(nb)
    html = Path(args.html)
    if not args.notebooks_only:
        if (html / "index.html").exists():
            found += check_html_tree(html)
        else:
            print(
                f"no built book at {html}: HTML checks skipped (python3 tasks.py book)",
                file=sys.stderr,
            )
    if not args.quiet:
        for v in found:
            print(v)
        print()
    counts = collections.Counter((v.where, v.kind) for v in found)
    for (where, kind), n in sorted(counts.items()):
        print(f"{n:5d}  {kind:20s} {where}")
    print(f"{len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
