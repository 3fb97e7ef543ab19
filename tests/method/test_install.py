"""``pip install .`` (not editable) gives a working dpdro anywhere: the wheel holds only ``dpdro``.

The wheel is built from a copy of the package sources with the current interpreter's setuptools
(no network, no build isolation) and installed with ``--no-deps --no-index`` into a fresh virtual
environment that reaches numpy, scipy and highspy through a path file; the check then runs from a
temporary directory, far from the repository, and computes a certified noise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import sys, dpdro
assert dpdro.__file__.startswith(sys.prefix), dpdro.__file__
try:
    import repro
except ImportError:
    pass
else:
    raise AssertionError("repro is importable from an installed dpdro: " + repro.__file__)
res = dpdro.optimal_noise(dpdro.Problem(epsilon=1, delta=0.2), rel_gap=0.05)
assert res.gap <= 0.05 and dpdro.certify_delta(res.noise, 1.0, 1.0) <= 0.2
found = dpdro.catalog.lookup(epsilon=1.0, delta=1e-4, sensitivity=3.0, loss="l2")  # package data
assert found.certified_delta <= 1e-4 and found.lower <= found.upper
print("ok", dpdro.__version__, round(res.upper.value, 4))
"""


def _venv(path: Path) -> Path:
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=120
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        pytest.skip(f"cannot create a virtual environment here: {exc}")
    py = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not py.exists():  # pragma: no cover
        pytest.skip("the virtual environment has no interpreter")
    return py


def test_wheel_holds_only_dpdro_and_works_from_another_directory(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "dpdro", src / "dpdro", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(dist),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("dpdro-*.whl")
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"dpdro", next(t for t in tops if t.endswith(".dist-info"))}, tops
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("dpdro/data_dependent/") for n in names)
    assert "dpdro/data/catalog.json.gz" in names  # the catalog is package data
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "dpdro = dpdro.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()

    py = _venv(tmp_path / "venv")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    # the dependencies (numpy, scipy, highspy) come from this interpreter's site-packages; a path
    # added by a .pth file does not run the .pth files there, so this repository's editable installs
    # stay out
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run(
        [str(py), "-c", CHECK], cwd=elsewhere, capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0 and run.stdout.startswith("ok"), run.stdout + run.stderr
    # the console script of the wheel
    exe = py.parent / ("dpdro.exe" if os.name == "nt" else "dpdro")
    run = subprocess.run(
        [str(exe), "catalog", "list"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.startswith("catalog: epsilon in ["), (
        run.stdout + run.stderr
    )
