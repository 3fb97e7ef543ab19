"""The two layers stay apart: dpdro is the method (no repository files, no plotting or tables, no book
code), repro is the book's layer, scripts are thin command lines over repro, and notebooks import
dpdro and repro only (no sys.path edits, no files loaded as modules)."""

import json
import re
import subprocess
import sys

import pytest

from repro.notebooks import outputs, sanitizers
from repro.paths import NOTEBOOKS, ROOT, SCRIPTS

FORBIDDEN_IN_SOURCES = re.compile(r"sys\.path\.(insert|append)|spec_from_file_location|from brute import|"
                                  r"import (tests|scripts)\b")


def test_dpdro_touches_no_repository_files_and_no_book_libraries():
    for py in sorted((ROOT / "dpdro").rglob("*.py")):
        text = py.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from) (matplotlib|pandas|repro)\b", text, re.M), py
        assert not re.search(r"Path\(__file__\)|parents\[\d\]|(?<!\.)\bopen\(", text), py  # builtin open


def test_scripts_and_notebooks_import_packages_only():
    for path in sorted(SCRIPTS.glob("*.py")) + sorted((ROOT / "repro").glob("*.py")):
        assert not FORBIDDEN_IN_SOURCES.search(path.read_text(encoding="utf-8")), path
    for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert not FORBIDDEN_IN_SOURCES.search(code), nb


@pytest.mark.parametrize("script", sorted(p.name for p in SCRIPTS.glob("*.py")))
def test_scripts_are_command_lines(script):
    out = subprocess.run([sys.executable, str(SCRIPTS / script), "--help"], capture_output=True, text=True,
                         cwd=NOTEBOOKS, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("usage:"), out.stdout + out.stderr


def test_notebook_output_comparison_follows_nbval():
    subs = sanitizers("[t]\nregex: took \\d+ s\nreplace: took T s\n")
    nb = {"cells": [{"cell_type": "markdown", "source": "x"},
                    {"cell_type": "code", "metadata": {"tags": ["nbval-ignore-output"]},
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["took 3 s\n"]},
                                 {"output_type": "stream", "name": "stdout", "text": "done\n"}]},
                    {"cell_type": "code", "metadata": {},
                     "outputs": [{"output_type": "execute_result", "data": {"text/plain": "1", "image/png": "AA"}}]}]}
    (tags, text, images), (_, text2, images2) = outputs(nb, subs)
    assert tags == ["nbval-ignore-output"] and text == [("stream", "stdout", "took T s\ndone\n")]
    assert text2 == [("execute_result", "text/plain", "1")] and images2 == [("image/png", "AA")]
