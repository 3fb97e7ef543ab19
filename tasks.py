#!/usr/bin/env python3
"""Task runner for dpdro (standard library only).

    python3 tasks.py book   build the Jupyter Book strictly (executes every notebook)
    python3 tasks.py test   run the unit tests in tests/ and every notebook under nbval

Each command creates a virtual environment in ./.venv when it is missing and installs the
package with the extra it needs (``pip install -e .[book]`` or ``.[test]``) together with the
book's reproduction layer (``-e ./repro[fast]``, the distribution dpdro-repro with numba for its
coordinate-descent kernels: ``import repro`` then works from notebooks/ and scripts/). A stamp file in .venv records a hash of both pyproject.toml files
per extra, so nothing is reinstalled until one of them changes. Runs non-interactively (e.g. with
CI=true). Exits non-zero on failure.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
SANITIZE = Path("notebooks") / "sanitize.cfg"
PYPROJECTS = (ROOT / "pyproject.toml", ROOT / "repro" / "pyproject.toml")  # dpdro, and the book's repro


def say(msg: str) -> None:
    print(f"[tasks] {msg}", flush=True)


def env() -> dict[str, str]:
    """Environment for every child process: the venv first on PATH, nothing interactive."""
    e = dict(os.environ)
    e["VIRTUAL_ENV"] = str(VENV)
    e["PATH"] = str(BIN) + os.pathsep + e.get("PATH", "")
    e.pop("PYTHONHOME", None)
    e.setdefault("PIP_NO_INPUT", "1")
    e.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    e.setdefault("PYTHONHASHSEED", "0")
    # Kernels resolve to the venv's own ipykernel, not a user-wide "python3" kernelspec.
    e["JUPYTER_DATA_DIR"] = str(VENV / "share" / "jupyter")
    e.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    e.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return e


def run(cmd: list[str]) -> int:
    shown = " ".join(str(c) for c in cmd)
    say(f"$ {shown}")
    t0 = time.monotonic()
    rc = subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env())
    say(f"{'ok' if rc == 0 else f'FAILED (exit {rc})'} after {time.monotonic() - t0:.1f} s: {shown}")
    return rc


def check(cmd: list[str]) -> None:
    rc = run(cmd)
    if rc != 0:
        sys.exit(rc)


def ensure_env(extra: str) -> None:
    """Create .venv if missing; install ``-e .[extra]`` and ``-e ./repro[fast]`` unless the stamp says they
    are current."""
    if not PY.exists():
        if VENV.exists():
            say(f"{VENV} exists but has no interpreter; recreating it")
            shutil.rmtree(VENV)
        say(f"creating virtual environment {VENV.relative_to(ROOT)} with {sys.executable}")
        rc = run([sys.executable, "-m", "venv", VENV])
        if rc != 0:
            say("could not create the virtual environment; on Debian/Ubuntu install python3-venv")
            sys.exit(rc)
        check([PY, "-m", "pip", "install", "--upgrade", "pip"])
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in PYPROJECTS)).hexdigest()
    key = f"{digest} python{sys.version_info.major}.{sys.version_info.minor}\n"
    stamp = VENV / f".dpdro-installed-{extra}"
    if stamp.exists() and stamp.read_text() == key:
        say(f".venv already has .[{extra}] and ./repro for these pyproject.toml files (stamp {stamp.name}); "
            "skipping install")
        return
    check([PY, "-m", "pip", "install", "-e", f".[{extra}]", "-e", "./repro[fast]"])
    stamp.write_text(key)


def cmd_book() -> None:
    ensure_env("book")
    check([BIN / "jupyter-book", "build", ".", "-W", "-n", "--keep-going"])
    say(f"book written to {ROOT / '_build' / 'html' / 'index.html'}")


def cmd_test() -> None:
    ensure_env("test")
    check([PY, "-m", "pytest", "tests", "notebooks",
           "--nbval", "--nbval-current-env", "--nbval-sanitize-with", SANITIZE])


COMMANDS = {"book": cmd_book, "test": cmd_test}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in COMMANDS:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    t0 = time.monotonic()
    say(f"{argv[0]}: repository {ROOT}, CI={os.environ.get('CI', '')!r}")
    COMMANDS[argv[0]]()
    say(f"{argv[0]} succeeded in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
