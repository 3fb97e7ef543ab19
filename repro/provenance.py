"""Provenance of stored results and atomic JSON writes: one helper each.

Every paper-scale result under ``results/`` carries a ``provenance`` record (:func:`provenance`) and
is written with :func:`write_json_atomic` (a temporary file renamed over the target), so an
interrupted run never leaves a truncated file behind.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .paths import ROOT

__all__ = ["provenance", "write_json_atomic", "read_json"]


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):  # pragma: no cover - git missing
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # pragma: no cover - not installed
        return "unknown"


def provenance(seconds: float | None = None, command: str | None = None, **extra: Any) -> dict:
    """Where and how a result was computed.

    dpdro version, git commit and whether tracked files of ``dpdro/`` or ``repro/`` had local
    changes, UTC date, host, machine, platform and CPU count, Python, numpy and HiGHS versions, the
    command line (default: this process's, script name without its directory) and, when given, the
    wall-clock ``seconds`` of the run. ``extra`` entries (run settings, load averages, notes) are
    added last.
    """
    import dpdro
    import numpy as np

    status = _git("status", "--porcelain", "--untracked-files=no", "--", "dpdro", "repro")
    if command is None:
        command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
    out = {
        "dpdro_version": dpdro.__version__,
        "git_commit": _git("rev-parse", "HEAD") or "unknown",
        "git_dirty": None if status is None else bool(status),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "highspy": _version("highspy"),
        "command": command,
    }
    if seconds is not None:
        out["seconds"] = round(float(seconds), 2)
    out.update(extra)
    return out


def write_json_atomic(path: str | Path, data: Any, *, indent: int | None = 1, sort_keys: bool = False,
                      ensure_ascii: bool = True) -> Path:
    """Write ``data`` as JSON (UTF-8, a trailing newline) to ``path`` through a temporary file in the
    same folder (a unique name per call: concurrent writers of one folder never collide) and an atomic
    rename; creates the folder. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii) + "\n"
    # a temporary name of its own per call, so that concurrent writers never share one
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_json(path: str | Path) -> Any:
    """The JSON document stored at ``path`` (UTF-8)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
