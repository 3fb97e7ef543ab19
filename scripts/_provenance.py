"""Provenance record stored with every paper-scale result under results/ (shared by the scripts)."""

from __future__ import annotations

import datetime as _dt
import platform
import socket
import subprocess
import sys
from pathlib import Path

import dpdro

ROOT = Path(__file__).resolve().parents[1]


def provenance(seconds: float, command: str | None = None) -> dict:
    """dpdro version, git commit (and whether tracked files had local changes), date, machine, versions,
    wall time of the run and the command line (default: this process's)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                    capture_output=True, text=True).stdout.strip())
    except OSError:  # pragma: no cover - git missing
        commit, dirty = "unknown", None
    try:
        from importlib.metadata import version
        highs = version("highspy")
    except Exception:  # pragma: no cover
        highs = "unknown"
    if command is None:
        command = " ".join([Path(sys.argv[0]).name] + sys.argv[1:])
    return {"dpdro_version": dpdro.__version__, "git_commit": commit, "git_dirty": dirty,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "host": socket.gethostname(), "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
            "python": platform.python_version(), "highspy": highs, "seconds": round(seconds, 1),
            "command": command}
