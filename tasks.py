#!/usr/bin/env python3
"""Task runner for dpdro (standard library only).

    python3 tasks.py book            build the Jupyter Book strictly (executes every notebook)
    python3 tasks.py test            lint the method (ruff), then run the unit tests in tests/ and
                                     every notebook under nbval
    python3 tasks.py test --latest   the same lint and unit tests against the newest releases of
                                     every dependency, in a separate environment ./.venv-latest
    python3 tasks.py lock            refresh requirements/lock.txt from requirements/lock.in

``book`` and ``test`` create ./.venv when it is missing and make it exactly the locked environment:
every package at the version pinned in requirements/lock.txt (the versions that produced the stored
results and notebook outputs), then dpdro and the book's reproduction layer repro (the distribution
dpdro-repro) editable from the checkout, without dependencies. A stamp file in .venv records a hash
of the lock and of both pyproject.toml files, so nothing is reinstalled until one of them changes.

``test --latest`` resolves ``.[test]`` and ``./repro[fast]`` afresh (pip's newest releases, the lock
ignored) into ./.venv-latest and runs tests/ (not nbval: stored notebook outputs belong to the
lock), so that drift is found before a lock refresh. ``lock`` re-resolves the lock's inputs to the
newest releases; re-execute the notebooks and stored results it changes, and commit them with the
lock. ``test`` runs pytest on every core (pytest-xdist, one worker per core; each test file and each
notebook runs whole in one worker). Runs non-interactively (e.g. with CI=true). Exits non-zero on
failure.
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
LOCK_IN = Path("requirements") / "lock.in"
LOCK = Path("requirements") / "lock.txt"
SANITIZE = Path("notebooks") / "sanitize.cfg"
LINTED = ["dpdro", "tests/method"]  # ruff's settings (line length, rules) are in pyproject.toml
PYPROJECTS = (ROOT / "pyproject.toml", ROOT / "repro" / "pyproject.toml")  # dpdro, the book's repro
LOCAL = ["-e", ".", "-e", "./repro"]  # the two distributions of this checkout
# pytest-xdist: one worker per core; --dist loadfile keeps each file in one worker, in order (a
# notebook's cells share one kernel under nbval, a test file's module fixtures are built once)
PARALLEL = ["-n", "auto", "--dist", "loadfile"]


def say(msg: str) -> None:
    print(f"[tasks] {msg}", flush=True)


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def python(venv: Path) -> Path:
    return bin_dir(venv) / ("python.exe" if os.name == "nt" else "python")


def env(venv: Path) -> dict[str, str]:
    """Environment for every child process: the venv first on PATH, nothing interactive."""
    e = dict(os.environ)
    e["VIRTUAL_ENV"] = str(venv)
    e["PATH"] = str(bin_dir(venv)) + os.pathsep + e.get("PATH", "")
    e.pop("PYTHONHOME", None)
    e.setdefault("PIP_NO_INPUT", "1")
    e.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    e.setdefault("PYTHONHASHSEED", "0")
    # Kernels resolve to the venv's own ipykernel, not a user-wide "python3" kernelspec.
    e["JUPYTER_DATA_DIR"] = str(venv / "share" / "jupyter")
    e.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    e.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    return e


def run(cmd: list, venv: Path) -> int:
    shown = " ".join(str(c) for c in cmd)
    say(f"$ {shown}")
    t0 = time.monotonic()
    rc = subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env(venv))
    outcome = "ok" if rc == 0 else f"FAILED (exit {rc})"
    say(f"{outcome} after {time.monotonic() - t0:.1f} s: {shown}")
    return rc


def check(cmd: list, venv: Path) -> None:
    rc = run(cmd, venv)
    if rc != 0:
        sys.exit(rc)


def create_venv(venv: Path) -> None:
    """Create ``venv`` if it has no interpreter, with uv (the installer) at the locked version."""
    if python(venv).exists():
        return
    if venv.exists():
        say(f"{venv.name} exists but has no interpreter; recreating it")
        shutil.rmtree(venv)
    say(f"creating virtual environment {venv.name} with {sys.executable}")
    rc = run([sys.executable, "-m", "venv", venv], venv)
    if rc != 0:
        say("could not create the virtual environment; on Debian/Ubuntu install python3-venv")
        sys.exit(rc)
    check([python(venv), "-m", "pip", "install", "--upgrade", "pip", locked("uv")], venv)


def locked(name: str) -> str:
    """The lock's pin of one package (``name==version``)."""
    for line in (ROOT / LOCK).read_text().splitlines():
        if line.split("==")[0].strip().lower() == name:
            return line.strip()
    sys.exit(f"[tasks] {LOCK} pins no {name}")


def uv(venv: Path) -> list:
    return [python(venv), "-m", "uv"]


def ensure_locked_env() -> Path:
    """./.venv as the lock says: ``uv pip sync`` (exactly the pinned set), then the two local
    distributions editable without dependencies; skipped while the stamp is current."""
    venv = ROOT / ".venv"
    create_venv(venv)
    inputs = b"".join(p.read_bytes() for p in (ROOT / LOCK, *PYPROJECTS))
    digest = hashlib.sha256(inputs).hexdigest()
    key = f"{digest} python{sys.version_info.major}.{sys.version_info.minor}\n"
    stamp = venv / ".dpdro-installed-lock"
    if stamp.exists() and stamp.read_text() == key:
        say(f".venv already matches {LOCK} (stamp {stamp.name}); skipping install")
        return venv
    check([*uv(venv), "pip", "sync", "--python", python(venv), LOCK], venv)
    check([*uv(venv), "pip", "install", "--python", python(venv), "--no-deps", *LOCAL], venv)
    stamp.write_text(key)
    return venv


def cmd_book(args: list[str]) -> None:
    venv = ensure_locked_env()
    check([bin_dir(venv) / "jupyter-book", "build", ".", "-W", "-n", "--keep-going"], venv)
    say(f"book written to {ROOT / '_build' / 'html' / 'index.html'}")


def cmd_test(args: list[str]) -> None:
    if args == ["--latest"]:
        venv = ROOT / ".venv-latest"
        create_venv(venv)
        check([*uv(venv), "pip", "install", "--python", python(venv), "--upgrade",
               "-e", ".[test]", "-e", "./repro[fast]"], venv)
        run([*uv(venv), "pip", "list", "--python", python(venv)], venv)
        lint(venv)
        check([python(venv), "-m", "pytest", *PARALLEL, "tests"], venv)
        return
    if args:
        usage()
    venv = ensure_locked_env()
    lint(venv)
    check([python(venv), "-m", "pytest", *PARALLEL, "tests", "notebooks",
           "--nbval", "--nbval-current-env", "--nbval-sanitize-with", SANITIZE], venv)


def lint(venv: Path) -> None:
    """``ruff check`` on the method and its tests (fails the command on any finding)."""
    check([python(venv), "-m", "ruff", "check", *LINTED], venv)


def cmd_lock(args: list[str]) -> None:
    """Re-resolve requirements/lock.in to the newest releases (for Python 3.11, which CI uses)."""
    venv = ensure_locked_env()
    check([*uv(venv), "pip", "compile", LOCK_IN, "--upgrade", "--python-version", "3.11",
           "--no-emit-package", "dpdro", "--no-emit-package", "dpdro-repro", "-o", LOCK], venv)
    say(f"{LOCK} refreshed: re-execute the notebooks and stored results it changes "
        "(python3 tasks.py test shows which), and commit them together")


COMMANDS = {"book": cmd_book, "test": cmd_test, "lock": cmd_lock}


def usage() -> None:
    print(__doc__.strip(), file=sys.stderr)
    sys.exit(2)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        usage()
    t0 = time.monotonic()
    say(f"{' '.join(argv)}: repository {ROOT}, CI={os.environ.get('CI', '')!r}")
    COMMANDS[argv[0]](argv[1:])
    say(f"{' '.join(argv)} succeeded in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
