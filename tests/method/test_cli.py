"""The installed ``dpdro`` command line (and ``python -m dpdro``), run in subprocesses."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpdro
from dpdro.mechanisms import BASELINES

BIN = Path(sys.executable).parent
EXE = str(BIN / ("dpdro.exe" if os.name == "nt" else "dpdro"))


def run(*args, module=False, check=True):
    cmd = [sys.executable, "-m", "dpdro", *args] if module else [EXE, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    if check:
        assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def noise_file(tmp_path_factory):
    """A design at (1, 0.2), ℓ1, gap 5% (a few seconds)."""
    path = tmp_path_factory.mktemp("cli") / "noise.json"
    out = run("design", "--epsilon", "1", "--delta", "0.2", "--sensitivity", "1", "--loss", "l1", "--gap", "0.05",
              "--time-limit", "60", "-o", str(path))
    assert out.stdout.startswith(f"wrote {path}: l1 noise for (epsilon, delta) = (1, 0.2), sensitivity 1\n")
    assert "designing l1 noise" in out.stderr and "done in" in out.stderr
    return path


def test_design_writes_a_versioned_certified_document(noise_file):
    doc = json.loads(noise_file.read_text())
    assert doc["format"] == "dpdro-noise" and doc["version"] == 1
    cert = doc["certificate"]
    assert set(doc["software"]) == {"dpdro", "numpy", "scipy", "highspy"} and doc["created"]
    noise = dpdro.PiecewiseUniform.from_dict(doc["noise"])
    assert cert["certified_delta"] == dpdro.certify_delta(noise, 1.0, 1.0) <= cert["delta"] == 0.2
    assert cert["lower_bound"] <= cert["expected_loss"] <= cert["upper_bound"] * (1 + 1e-9)
    assert cert["gap"] <= 0.05 and cert["loss"] == "l1" and cert["sensitivity"] == 1.0


def test_design_to_stdout_is_json_and_nothing_else():
    """``-o -`` writes the document alone on stdout (no solver banner: a fresh process creates its
    first HiGHS object here); progress goes to stderr."""
    out = run("design", "--epsilon", "2", "--delta", "0.1", "--loss", "l2", "--gap", "0.05", "-o", "-")
    doc = json.loads(out.stdout)
    assert doc["format"] == "dpdro-noise" and doc["certificate"]["certified_delta"] <= 0.1
    assert "HiGHS" not in out.stdout + out.stderr


def test_certify_and_profile_through_python_m(noise_file):
    out = json.loads(run("certify", str(noise_file), "--profile", "--points", "5", "--json", module=True).stdout)
    assert out["certified_delta"] <= 0.2 and out["epsilon"] == 1.0
    deltas = [p["delta"] for p in out["profile"]]
    assert [p["epsilon"] for p in out["profile"]] == pytest.approx([0.25, 0.5, 1.0, 2.0, 4.0])
    assert all(a >= b for a, b in zip(deltas, deltas[1:])) and deltas[2] == out["certified_delta"]
    text = run("certify", str(noise_file), "--epsilon", "0.5", "--sensitivity", "2").stdout
    noise = dpdro.PiecewiseUniform.from_dict(json.loads(noise_file.read_text())["noise"])
    line = next(x for x in text.splitlines() if x.startswith("certified delta at epsilon=0.5, sensitivity=2: "))
    assert line.endswith(f"{dpdro.certify_delta(noise, 0.5, 2.0):.12g}")


def test_sample_secure_by_default_and_seeded_on_request(noise_file):
    seeded = [run("sample", str(noise_file), "-n", "200", "--seed", "3") for _ in range(2)]
    assert seeded[0].stdout == seeded[1].stdout
    assert "NOT for deployment" in seeded[0].stderr
    draws = [float(x) for x in seeded[0].stdout.split()]
    assert len(draws) == 200
    lo, hi = dpdro.PiecewiseUniform.from_dict(json.loads(noise_file.read_text())["noise"]).support
    assert lo - 1e-6 <= min(draws) and max(draws) <= hi + 1e-6
    secure = json.loads(run("sample", str(noise_file), "-n", "5", "--value", "100", "--json").stdout)
    assert not secure["seeded"] and secure["certified_delta"] <= 0.2 and len(secure["draws"]) == 5
    assert all(98 < x < 102 for x in secure["draws"])
    assert "NOT for deployment" not in run("sample", str(noise_file), "-n", "1").stderr


def test_compare_against_every_baseline(noise_file):
    out = json.loads(run("compare", "--epsilon", "1", "--delta", "0.2", "--sensitivity", "1", "--loss", "l1",
                         "--noise", str(noise_file), "--json").stdout)
    rows = {r["mechanism"]: r for r in out["rows"]}
    assert list(rows) == ["dpdro", *BASELINES]
    assert rows["dpdro"]["ratio"] == 1.0
    for name in BASELINES:  # the optimum is below every mechanism: certified gaps are positive
        assert rows[name]["gap_bound"] > 0 and rows[name]["ratio"] > 0.95
    assert rows["tulap"]["ratio"] < rows["truncated_laplace"]["ratio"] < rows["analytic_gaussian"]["ratio"]
    text = run("compare", "--epsilon", "1", "--delta", "0.2", "--loss", "l1", "--noise", str(noise_file)).stdout
    assert text.splitlines()[1].split() == ["mechanism", "E|X|", "ratio", "to", "dpdro", "gap", "to", "optimum", "<="]


def test_catalog_lookup_writes_a_noise_file_that_certify_accepts(tmp_path):
    cat = dpdro.catalog.load()
    eps, delta = float(cat.epsilons[1]) * 1.001, float(cat.deltas[1]) * 1.001
    path = tmp_path / "cat.json"
    out = json.loads(run("catalog", "lookup", "--epsilon", repr(eps), "--delta", repr(delta), "--sensitivity", "3",
                         "--loss", "l2", "-o", str(path), "--json").stdout)
    cert = out["certificate"]
    assert cert["certified_delta"] <= delta and cert["sensitivity"] == 3.0
    assert cert["lower_bound"] <= cert["upper_bound"] and cert["gap"] <= 0.05
    assert out["noise_from"] == [pytest.approx(cat.epsilons[1]), pytest.approx(cat.deltas[1])]
    assert run("certify", str(path)).returncode == 0
    assert run("catalog", "list").stdout.startswith("catalog: epsilon in [")


def _tamper(noise_file, path, edit):
    doc = json.loads(noise_file.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    return str(path)


def _move_mass(doc, amount):
    """Move probability mass from the central cell to the outermost one (sums stay 1)."""
    probs = doc["noise"]["probs"]
    probs[len(probs) // 2] -= amount
    probs[-1] += amount


@pytest.mark.parametrize("args, parameter", [
    (["design", "--epsilon", "1", "--delta", "0.2", "--loss", "l3", "-o", "x.json"], "loss must be 'l1' or 'l2', got 'l3'"),
    (["design", "--epsilon", "1", "--delta", "0", "--loss", "l1", "-o", "x.json"], "delta must be in the open interval (0, 1), got '0'"),
    (["design", "--epsilon", "1", "--delta", "1.5", "--loss", "l1", "-o", "x.json"], "delta must be in the open interval (0, 1), got '1.5'"),
    (["compare", "--epsilon", "0", "--delta", "0.1", "--loss", "l2"], "epsilon must be a finite number > 0, got '0'"),
    (["compare", "--epsilon", "1", "--delta", "0.1", "--sensitivity", "-2", "--loss", "l2"],
     "sensitivity must be a finite number > 0, got '-2'"),
    (["sample", "{noise}", "-n", "0"], "n must be an integer >= 1, got '0'"),
    (["certify", "does-not-exist.json"], "noise file must be a readable UTF-8 file, got 'does-not-exist.json'"),
    (["certify", "{garbage}"], "noise file must contain JSON"),
    (["certify", "{private_but_edited}"], "certificate.expected_loss must equal the value recomputed from the stored noise"),
    (["sample", "{not_private}", "-n", "3"], "must be (1.0, 0.2)-DP at sensitivity 1.0: certify_delta gives"),
    (["certify", "{squeezed}"], "certify_delta gives"),
    (["catalog", "lookup", "--epsilon", "50", "--delta", "0.1", "--loss", "l1"], "epsilon must lie in the catalog's range"),
])
def test_bad_input_one_line_exit_2(noise_file, tmp_path, args, parameter):
    files = {
        "noise": str(noise_file),
        "garbage": str(tmp_path / "garbage.json"),
        # tampered: edges stretched by 1%, still private (at sensitivity 1.01 ≥ 1) but another noise
        "private_but_edited": _tamper(noise_file, tmp_path / "stretched.json", lambda d: d["noise"].update(
            edges=[1.01 * e for e in d["noise"]["edges"]], grid=d["noise"]["grid"] * 1.01)),
        # tampered: the edit breaks the privacy claim itself
        "not_private": _tamper(noise_file, tmp_path / "moved.json", lambda d: _move_mass(d, 0.05)),
        # tampered edges: the noise squeezed towards 0
        "squeezed": _tamper(noise_file, tmp_path / "squeezed.json", lambda d: d["noise"].update(
            edges=[0.9 * e for e in d["noise"]["edges"]], grid=None)),
    }
    (tmp_path / "garbage.json").write_text("{not json")
    args = [a.format(**files) for a in args]
    out = run(*args, check=False)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("dpdro: error: "), out.stderr
    assert parameter in out.stderr and "Traceback" not in out.stderr
