"""The one home of repository paths: every file the book reads or writes is located from here.

``repro`` only works from a checkout of the repository (it is installed editable, see
``repro/pyproject.toml``), so the repository root is the parent of this package.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT", "DATA", "RESULTS", "LEDGER", "NOTEBOOKS", "SCRIPTS", "CATALOG", "relative"]

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"  # cleaned offline datasets (rebuilt by scripts/build_datasets.py)
RESULTS = ROOT / "results"  # paper-scale results with provenance
LEDGER = RESULTS / "ledger.csv"  # the reproduction ledger
NOTEBOOKS = ROOT / "notebooks"
SCRIPTS = ROOT / "scripts"
CATALOG = ROOT / "dpdro" / "data" / "catalog.json.gz"  # dpdro's package data, rebuilt by scripts/build_catalog.py


def relative(path: str | Path) -> str:
    """``path`` relative to the repository root when it lies inside it (for messages and provenance:
    no machine paths), else unchanged."""
    p = Path(path).resolve()
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)
