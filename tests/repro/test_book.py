"""The book builds strictly (``-W -n --keep-going``) from the stored notebook outputs.

Notebook execution is turned off: nbval re-executes the notebooks already, so this test only
catches what the Sphinx build sees (broken cross-references, unknown citations, toc errors,
missing captions or labels) and does it in well under a minute. It writes into a temporary
directory and leaves the repository's ``_build`` alone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repro.paths import ROOT

pytestmark = pytest.mark.slow


def _jupyter_book() -> str | None:
    exe = Path(sys.executable).with_name("jupyter-book")
    if exe.exists():
        return str(exe)
    return shutil.which("jupyter-book")


def test_book_builds_strictly_without_execution(tmp_path):
    pytest.importorskip("jupyter_book", reason="jupyter-book is not installed (pip install -e .[book])")
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed (it comes with jupyter-book)")
    exe = _jupyter_book()
    if exe is None:
        pytest.skip("the jupyter-book command is not on PATH (pip install -e .[book])")

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    config_path = tmp_path / "_config.yml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")

    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    cmd = [exe, "build", str(ROOT), "--config", str(config_path), "--path-output", str(tmp_path / "out"),
           "-W", "-n", "--keep-going"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + proc.stderr)
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert proc.returncode == 0, (
        f"strict book build failed (exit {proc.returncode}):\n" + "\n".join(warnings) + "\n\n--- full log tail ---\n"
        + log[-6000:]
    )
    assert (tmp_path / "out" / "_build" / "html" / "index.html").exists()
