#!/usr/bin/env python3
"""Execute notebooks in place with the repository's .venv kernel, so they are committed with outputs.

    .venv/bin/python scripts/nbrun.py notebooks/11_reductions.ipynb [more.ipynb ...]

Runs from the notebook's directory (as nbval and the book build do), with a 1800 s cell timeout,
and prints the wall time per notebook. Stops at the first failing cell.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def run(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    os.environ.setdefault("JUPYTER_DATA_DIR", str(ROOT / ".venv" / "share" / "jupyter"))
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # the kernelspec runs "python": make it the venv's, as tasks.py does
    venv_bin = str(ROOT / ".venv" / "bin")
    if not os.environ.get("PATH", "").startswith(venv_bin):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)
    return time.perf_counter() - t0


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(f"{arg}: executed in {run(Path(arg)):.1f} s", flush=True)
