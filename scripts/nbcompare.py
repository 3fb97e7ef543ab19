#!/usr/bin/env python3
"""Compare the outputs of notebooks with those committed at a git revision (default HEAD).

    .venv/bin/python scripts/nbcompare.py [--rev REV] [notebooks/*.ipynb ...]

A thin command line over :func:`repro.notebooks.output_differences`: text outputs must be equal
(execution counts, cells tagged ``nbval-ignore-output`` and the regexes of notebooks/sanitize.cfg are
ignored, as under nbval); cells whose images differ are counted. Exit status 1 if any text differs.
"""

from __future__ import annotations

import argparse
import sys

from repro.notebooks import output_differences
from repro.paths import NOTEBOOKS, relative


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="HEAD", help="git revision to compare with (default HEAD)")
    ap.add_argument("notebooks", nargs="*")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted(str(p) for p in NOTEBOOKS.glob("*.ipynb"))
    bad = 0
    for path in paths:
        diffs, images = output_differences(path, args.rev)
        for d in diffs:
            print(d)
        print(f"{relative(path)}: {len(diffs)} cells with different text outputs, {images} with different images")
        bad += len(diffs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
