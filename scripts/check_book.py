#!/usr/bin/env python3
"""Check the book as a reader sees it; builds nothing.

    .venv/bin/python scripts/check_book.py [--html _build/html] [--notebooks-only] [--quiet]

Checks every notebook of ``_toc.yml`` (code and text output lines within 88 characters, every image
captioned, no image wider than the column) and, when a built book exists, its HTML (no LaTeX left
raw in the rendered text, no ``<pre>`` line over 88 characters, every image in a captioned figure,
no image file wider than the column): see :mod:`repro.bookcheck`. Build first with
``python3 tasks.py book``; look at pages with headless Chromium, e.g.
``chromium --headless --no-sandbox --screenshot=/tmp/p.png --window-size=1280,2400 file://$PWD/_build/html/index.html``.
Prints a count per page and kind, then every violation; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from repro.bookcheck import check_html_tree, check_notebook, toc_notebooks
from repro.paths import ROOT


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
            print(f"no built book at {html}: HTML checks skipped (python3 tasks.py book)", file=sys.stderr)
    counts = collections.Counter((v.where, v.kind) for v in found)
    for (where, kind), n in sorted(counts.items()):
        print(f"{n:5d}  {kind:20s} {where}")
    if not args.quiet:
        print()
        for v in found:
            print(v)
    print(f"{len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
