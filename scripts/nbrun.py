#!/usr/bin/env python3
"""Execute notebooks in place with the repository's .venv kernel, so they are committed with outputs.

    .venv/bin/python scripts/nbrun.py notebooks/11_reductions.ipynb [more.ipynb ...]

A thin command line over :func:`repro.notebooks.execute`: runs from the notebook's directory (as nbval
and the book build do), with a 1800 s cell timeout, and prints the wall time per notebook. Stops at the
first failing cell.
"""

from __future__ import annotations

import argparse

from repro.notebooks import execute


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="+")
    for path in ap.parse_args(argv).notebooks:
        print(f"{path}: executed in {execute(path):.1f} s", flush=True)


if __name__ == "__main__":
    main()
