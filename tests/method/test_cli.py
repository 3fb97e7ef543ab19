"""The installed ``dpdro`` command line (and ``python -m dpdro``), run in subprocesses."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dpdro
from dpdro import cli
from dpdro.mechanisms import BASELINES
from dpdro.optimal import SOURCE_NAMES

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
    out = run(
        "design",
        "--epsilon",
        "1",
        "--delta",
        "0.2",
        "--sensitivity",
        "1",
        "--loss",
        "l1",
        "--gap",
        "0.05",
        "--time-limit",
        "60",
        "-o",
        str(path),
    )
    assert out.stdout.startswith(
        f"wrote {path}: l1 noise for (epsilon, delta) = (1, 0.2), sensitivity 1\n"
    )
    assert "designing l1 noise" in out.stderr and "done in" in out.stderr
    # every gap in percent, as the certificate line prints it (no fraction beside a percent)
    assert "target gap 5%," in out.stderr
    done = next(x for x in out.stderr.splitlines() if x.startswith("dpdro: done in"))
    assert re.search(r", gap \d+\.\d\d%$", done), done
    released = [x for x in out.stderr.splitlines() if x.startswith("dpdro: released: ")]
    assert len(released) == 1, out.stderr
    return path


def test_gaps_print_in_percent():
    """One unit for gaps: percent with two decimals, a significant digit below 0.01%."""
    assert cli._percent(0.004792) == "0.48%"
    assert cli._percent(0.05) == "5.00%"
    assert cli._percent(2.4e-6) == "0.0002%"
    assert cli._percent(0.0) == "0.00%"


def test_design_names_what_it_released():
    """The ``released:`` line names OptimalNoise.source in words and the lattice step."""

    class Res:
        source = "tulap"
        noise = type("N", (), {"grid": 2.0**-23})()

    assert cli._released(Res) == "released: Tulap, piecewise uniform on a lattice of step 2^-23"
    Res.source, Res.noise.grid = "lp", 0.3
    assert cli._released(Res) == ("released: the noise of the upper-bounding LP P(pi, beta), "
                                  "piecewise uniform on a lattice of step 0.3")
    Res.source = "shifted_staircase"
    assert cli._released(Res).startswith("released: the staircase mechanism, shifted, piecewise")
    assert set(SOURCE_NAMES) >= {"lp", "tulap", "staircase", "truncated_laplace"}


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
    out = run(
        "design", "--epsilon", "2", "--delta", "0.1", "--loss", "l2", "--gap", "0.05", "-o", "-"
    )
    doc = json.loads(out.stdout)
    assert doc["format"] == "dpdro-noise" and doc["certificate"]["certified_delta"] <= 0.1
    assert "HiGHS" not in out.stdout + out.stderr


def test_certify_and_profile_through_python_m(noise_file):
    out = json.loads(
        run("certify", str(noise_file), "--profile", "--points", "5", "--json", module=True).stdout
    )
    assert out["certified_delta"] <= 0.2 and out["epsilon"] == 1.0
    deltas = [p["delta"] for p in out["profile"]]
    assert [p["epsilon"] for p in out["profile"]] == pytest.approx([0.25, 0.5, 1.0, 2.0, 4.0])
    assert (
        all(a >= b for a, b in zip(deltas, deltas[1:], strict=False))
        and deltas[2] == out["certified_delta"]
    )
    text = run("certify", str(noise_file), "--epsilon", "0.5", "--sensitivity", "2").stdout
    noise = dpdro.PiecewiseUniform.from_dict(json.loads(noise_file.read_text())["noise"])
    line = next(
        x
        for x in text.splitlines()
        if x.startswith("certified delta at epsilon=0.5, sensitivity=2: ")
    )
    assert line.endswith(f"{dpdro.certify_delta(noise, 0.5, 2.0):.12g}")
    assert "its optimum bound is as the file records it" in text  # (a design's: not re-derived)


def test_sample_secure_by_default_and_seeded_on_request(noise_file):
    seeded = [run("sample", str(noise_file), "-n", "200", "--seed", "3") for _ in range(2)]
    assert seeded[0].stdout == seeded[1].stdout
    assert "NOT for deployment" in seeded[0].stderr
    draws = [float(x) for x in seeded[0].stdout.split()]
    assert len(draws) == 200
    lo, hi = dpdro.PiecewiseUniform.from_dict(json.loads(noise_file.read_text())["noise"]).support
    assert lo - 1e-6 <= min(draws) and max(draws) <= hi + 1e-6
    secure = json.loads(
        run("sample", str(noise_file), "-n", "5", "--value", "100", "--json").stdout
    )
    assert not secure["seeded"] and secure["certified_delta"] <= 0.2 and len(secure["draws"]) == 5
    assert all(98 < x < 102 for x in secure["draws"])
    assert "NOT for deployment" not in run("sample", str(noise_file), "-n", "1").stderr


def test_compare_against_every_baseline(noise_file):
    out = json.loads(
        run(
            "compare",
            "--epsilon",
            "1",
            "--delta",
            "0.2",
            "--sensitivity",
            "1",
            "--loss",
            "l1",
            "--noise",
            str(noise_file),
            "--json",
        ).stdout
    )
    rows = {r["mechanism"]: r for r in out["rows"]}
    assert list(rows) == ["dpdro", *BASELINES]
    assert rows["dpdro"]["ratio"] == 1.0
    for name in BASELINES:  # the optimum is below every mechanism: certified gaps are positive
        assert rows[name]["gap_bound"] > 0 and rows[name]["ratio"] > 0.95
    assert (
        rows["tulap"]["ratio"]
        < rows["truncated_laplace"]["ratio"]
        < rows["analytic_gaussian"]["ratio"]
    )
    text = run(
        "compare", "--epsilon", "1", "--delta", "0.2", "--loss", "l1", "--noise", str(noise_file)
    ).stdout
    assert text.splitlines()[1].split() == [
        "mechanism",
        "E|X|",
        "ratio",
        "to",
        "dpdro",
        "gap",
        "to",
        "optimum",
        "<=",
    ]


def test_catalog_lookup_writes_a_noise_file_that_certify_accepts(tmp_path):
    """At a grid point the bracket is the point's (at most 1%); the file it writes certifies, and
    the sampler takes the looked-up noise's guarantee from its metadata."""
    cat = dpdro.catalog.load()
    eps, delta = float(cat.epsilons[1]), float(cat.deltas[1])
    path = tmp_path / "cat.json"
    out = json.loads(
        run(
            "catalog",
            "lookup",
            "--epsilon",
            repr(eps),
            "--delta",
            repr(delta),
            "--sensitivity",
            "3",
            "--loss",
            "L2",  # (any case, as the API takes it)
            "-o",
            str(path),
            "--json",
        ).stdout
    )
    assert out["certificate"]["loss"] == "l2"
    cert = out["certificate"]
    assert cert["certified_delta"] <= delta and cert["sensitivity"] == 3.0
    assert cert["lower_bound"] <= cert["upper_bound"] and cert["gap"] <= 0.01
    assert out["noise_from"] == out["lower_bound_from"] == [eps, delta]
    assert run("certify", str(path)).returncode == 0
    assert dpdro.SecureSampler.from_file(path).certified_delta == cert["certified_delta"]
    between = run(
        "catalog", "lookup", "--epsilon", repr(eps * 1.001), "--delta", repr(delta), "--loss", "l1"
    )
    assert "not a grid point of the catalog" in between.stdout
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


@pytest.mark.parametrize(
    "args, parameter",
    [
        (
            ["design", "--epsilon", "1", "--delta", "0.2", "--loss", "l3", "-o", "x.json"],
            "loss must be 'l1' or 'l2', got 'l3'",
        ),
        (
            ["design", "--epsilon", "1", "--delta", "0", "--loss", "l1", "-o", "x.json"],
            "delta must be in the open interval (0, 1), got '0'",
        ),
        (
            ["design", "--epsilon", "1", "--delta", "1.5", "--loss", "l1", "-o", "x.json"],
            "delta must be in the open interval (0, 1), got '1.5'",
        ),
        (
            ["compare", "--epsilon", "0", "--delta", "0.1", "--loss", "l2"],
            "epsilon must be a finite number > 0, got '0'",
        ),
        (
            ["compare", "--epsilon", "1", "--delta", "0.1", "--sensitivity", "-2", "--loss", "l2"],
            "sensitivity must be a finite number > 0, got '-2'",
        ),
        (
            ["certify", "{noise}", "--epsilon", "1e6"],
            "epsilon must be at most 700 (e^epsilon must be a finite float), got '1e6'",
        ),
        (
            ["compare", "--noise", "{noise}", "--epsilon", "1e6"],
            "epsilon must be at most 700 (e^epsilon must be a finite float), got '1e6'",
        ),
        (["sample", "{noise}", "-n", "0"], "n must be an integer in [1, 10000000], got '0'"),
        (
            ["certify", "does-not-exist.json"],
            "noise file must be a readable UTF-8 file, got 'does-not-exist.json'",
        ),
        (["certify", "{garbage}"], "noise file must contain JSON"),
        (
            ["certify", "{private_but_edited}"],
            "must equal the value recomputed from the stored noise",
        ),
        (
            ["sample", "{not_private}", "-n", "3"],
            "must be (1.0, 0.2)-DP at sensitivity 1.0: certify_delta gives",
        ),
        (["certify", "{squeezed}"], "certify_delta gives"),
        (
            ["catalog", "lookup", "--epsilon", "50", "--delta", "0.1", "--loss", "l1"],
            "epsilon must lie in the catalog's range",
        ),
    ],
)
def test_bad_input_one_line_exit_2(noise_file, tmp_path, capsys, args, parameter):
    """Each names the offending parameter in its one line. Run in-process (``cli.main``, what the
    console script calls): the same status and stderr through the installed script in a fresh
    process are checked by test_issue_28_inputs_through_the_console_script."""
    files = {
        "noise": str(noise_file),
        "garbage": str(tmp_path / "garbage.json"),
        # tampered: edges stretched by 1%, still private (at sensitivity 1.01 ≥ 1) but another noise
        "private_but_edited": _tamper(
            noise_file,
            tmp_path / "stretched.json",
            lambda d: d["noise"].update(
                edges=[1.01 * e for e in d["noise"]["edges"]], grid=d["noise"]["grid"] * 1.01
            ),
        ),
        # tampered: the edit breaks the privacy claim itself
        "not_private": _tamper(noise_file, tmp_path / "moved.json", lambda d: _move_mass(d, 0.05)),
        # tampered edges: the noise squeezed towards 0
        "squeezed": _tamper(
            noise_file,
            tmp_path / "squeezed.json",
            lambda d: d["noise"].update(edges=[0.9 * e for e in d["noise"]["edges"]], grid=None),
        ),
    }
    (tmp_path / "garbage.json").write_text("{not json")
    args = [a.format(**files) for a in args]
    status = cli.main(args)
    out = capsys.readouterr()
    assert status == 2, out.err
    assert out.err.count("\n") == 1 and out.err.startswith("dpdro: error: "), out.err
    assert parameter in out.err and "Traceback" not in out.err and not out.out


def test_the_epsilon_check_is_the_packages(noise_file, capsys):
    """One home for the certificate's ε limit: the command line's line is
    dpdro.privacy.check_epsilon's message, naming the value as typed; the design limit has its own
    name (dpdro._range.MAX_DESIGN_EPSILON, 10), distinct from MAX_CERTIFIED_EPSILON (700)."""
    from dpdro import _range, privacy

    assert (_range.MAX_DESIGN_EPSILON, privacy.MAX_CERTIFIED_EPSILON) == (10.0, 700.0)
    assert cli.EPSILON_RANGE[1] == _range.MAX_DESIGN_EPSILON
    with pytest.raises(ValueError) as exc:
        privacy.check_epsilon(2e3, given="'2e3'")
    assert cli.main(["certify", str(noise_file), "--epsilon", "2e3"]) == 2
    assert capsys.readouterr().err == f"dpdro: error: argument --epsilon: {exc.value}\n"


# ------------------------------------------------------------------------------------------ polish
def test_version():
    out = run("--version")
    assert out.stdout.strip() == f"dpdro {dpdro.__version__}" and not out.stderr


def test_design_has_a_default_time_limit(tmp_path):
    out = run(
        "design",
        "--epsilon",
        "2",
        "--delta",
        "0.1",
        "--loss",
        "l1",
        "--gap",
        "0.05",
        "-o",
        str(tmp_path / "n.json"),
    )
    assert f"time limit {cli.DEFAULT_TIME_LIMIT:g} s" in out.stderr


def test_compare_defaults_to_the_files_settings_and_warns_on_a_mismatch(noise_file):
    same = json.loads(run("compare", "--noise", str(noise_file), "--json").stdout)
    assert (same["epsilon"], same["delta"], same["sensitivity"], same["loss"]) == (
        1.0,
        0.2,
        1.0,
        "l1",
    )
    assert same["lower_bound"] is not None  # the file's own settings: its lower bound applies
    other = run("compare", "--noise", str(noise_file), "--delta", "0.3", "--loss", "l2", "--json")
    assert other.stderr.count("\n") == 1
    assert other.stderr.startswith(
        "dpdro: warning: the noise file was designed for delta=0.2, loss='l1'; "
        "comparing at delta=0.3, loss='l2'"
    )
    assert json.loads(other.stdout)["lower_bound"] is None
    quiet = run("compare", "--noise", str(noise_file), "--epsilon", "1", "--loss", "l1")
    assert "warning" not in quiet.stderr


def test_compose_reports_both_plans_and_writes_the_noise(tmp_path):
    path = tmp_path / "k.json"
    out = run(
        "compose",
        "--releases",
        "10",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--loss",
        "l2",
        "-o",
        str(path),
        "--json",
    )
    got = json.loads(out.stdout)
    assert got["winner"] == "analytic_gaussian"
    assert (
        got["gaussian"]["composed_delta"] <= 1e-5 and got["optimal_noise"]["composed_delta"] <= 1e-5
    )
    assert got["gaussian"]["expected_loss"] < got["optimal_noise"]["expected_loss"]
    doc = json.loads(path.read_text())
    assert doc["certificate"]["epsilon"] == got["optimal_noise"]["epsilon"] >= 0.1
    assert dpdro.SecureSampler.from_file(path).certified_delta <= got["optimal_noise"]["delta"]


def test_compose_without_a_noise_plan_says_so_and_writes_nothing(tmp_path, capsys):
    """δ/k just above 1e-12: every split's per-release δ₀ is below optimal_noise's range, so the
    Gaussian is the only plan; the report had said it wins "100.0% below the optimal noise" and
    ``-o`` silently wrote nothing."""
    path = tmp_path / "k.json"
    args = ["compose", "--releases", "10", "--epsilon", "0.1", "--delta", "1.05e-11"]
    assert cli.main([*args, "--loss", "l1", "-o", str(path)]) == 0
    out, err = capsys.readouterr()
    assert not path.exists() and "100.0%" not in out
    assert "the analytic Gaussian is the only plan (no optimal-noise design composes" in out
    assert "dpdro: warning: no noise file written (no optimal-noise design composes" in err


def test_negative_numbers_in_any_notation_are_values_not_options(noise_file, capsys):
    """argparse takes -5 and -.5 for numbers but took -1e3 and -inf for options ("expected one
    argument")."""
    assert cli.main(["sample", str(noise_file), "-n", "2", "--value", "-1e3", "--seed", "1"]) == 0
    assert all(-1010 < float(x) < -990 for x in capsys.readouterr().out.split())
    assert cli.main(["sample", str(noise_file), "-n", "2", "--value", "-inf"]) == 2
    assert "value must be a number in [-1e300, 1e300], got '-inf'" in capsys.readouterr().err


def test_a_reader_closing_the_pipe_early_ends_quietly(noise_file, monkeypatch, capsys):
    """`dpdro sample ... | head -1`: status 141 as for SIGPIPE, nothing on stderr (it had reported
    an internal error, BrokenPipeError, asking for a bug report). Standard output here is a pipe
    whose reader is gone (Python ignores SIGPIPE, so writing raises BrokenPipeError)."""
    read, write = os.pipe()
    os.close(read)
    with open(write, "w") as stdout:
        monkeypatch.setattr(sys, "stdout", stdout)
        status = cli.main(["sample", str(noise_file), "-n", "3"])
    assert status == 141 and capsys.readouterr().err == ""


def test_an_internal_failure_is_one_line_with_status_1(monkeypatch, capsys, tmp_path):
    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded\nsecond line")

    monkeypatch.setattr(cli, "optimal_noise", broken)
    status = cli.main(
        ["design", "--epsilon", "1", "--delta", "0.1", "--loss", "l1", "-o", str(tmp_path / "x")]
    )
    err = capsys.readouterr().err.splitlines()
    assert status == 1 and err[-1] == (
        "dpdro: internal error: RuntimeError: solver exploded second line "
        "(please report it with the command line)"
    )


# ------------------------------------------------------------------------------------------ fuzz
def _bad_files(noise_file, folder):
    """Noise files that must each be refused: {name: path}."""
    folder.mkdir(exist_ok=True)
    good = json.loads(noise_file.read_text())

    def write(name, text=None, data=None, edit=None):
        path = folder / name
        if edit is not None:
            data = json.loads(json.dumps(good))
            edit(data)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text if text is not None else json.dumps(data))
        return str(path)

    return {
        "missing": str(folder / "missing.json"),
        "directory": str(folder),
        "empty": write("empty.json", ""),
        "garbage": write("garbage.json", "{not json"),
        "binary": write("binary.json", b"\xff\xfe\x00\x81"),
        "list": write("list.json", "[1, 2]"),
        "string": write("string.json", '"dpdro-noise"'),
        "format": write("format.json", edit=lambda d: d.update(format="other")),
        "version": write("version.json", edit=lambda d: d.update(version=99)),
        "no noise": write("nonoise.json", edit=lambda d: d.pop("noise")),
        "noise list": write("noiselist.json", edit=lambda d: d.update(noise=[1, 2])),
        "negative prob": write("neg.json", edit=lambda d: d["noise"]["probs"].__setitem__(0, -0.1)),
        "nan edge": write(
            "nan.json", text=noise_file.read_text().replace('"edges": [', '"edges": [NaN, ', 1)
        ),
        "no certificate": write("nocert.json", edit=lambda d: d.pop("certificate")),
        "epsilon string": write("epsstr.json", edit=lambda d: d["certificate"].update(epsilon="1")),
        "delta zero": write("delta0.json", edit=lambda d: d["certificate"].update(delta=0)),
        "loss": write("loss.json", edit=lambda d: d["certificate"].update(loss="l3")),
        "moved mass": write("moved.json", edit=lambda d: _move_mass(d, 0.05)),
        "stretched": write(
            "stretched.json",
            edit=lambda d: d["noise"].update(
                edges=[1.01 * e for e in d["noise"]["edges"]], grid=d["noise"]["grid"] * 1.01
            ),
        ),
    }


BAD_NUMBERS = ["abc", "", "nan", "NaN", "inf", "-inf", "1e400", "0x10", "1,5", "1e", "∞", "--"]
BAD_RANGES = {
    "--epsilon": ["0", "-1", "50", "10.5", "1e-5"],
    "--delta": ["0", "1", "1.5", "-0.1", "1e-15", "0.95"],
    "--sensitivity": ["0", "-2", "1e300", "1e-300"],  # ℓ1's losses leave the float range
    "--loss": ["l3", "ℓ1", "pinball", "", "l1 "],  # (any case of l1 and l2 is accepted)
    "--gap": ["0", "-1"],
    "--time-limit": ["0", "-5"],
    "--releases": ["0", "-3", "10001", "1.5", "1e3"],
    "-n": ["0", "-1", "10^12", "1e3", "1000000000000", "2.5"],
    "--points": ["0", "1001", "1e2"],
    "--seed": ["-1", "1.5", "abc"],
    "--value": ["1e301", "-1e301"],
}


def _cases(noise_file, tmp_path):
    files = _bad_files(noise_file, tmp_path / "bad")
    out = str(tmp_path / "out.json")
    design = ["design", "--epsilon", "1", "--delta", "1e-3", "--loss", "l1", "-o", out]
    compare = ["compare", "--epsilon", "1", "--delta", "1e-3", "--loss", "l1"]
    compose = ["compose", "--releases", "3", "--epsilon", "1", "--delta", "1e-3", "--loss", "l1"]
    lookup = ["catalog", "lookup", "--epsilon", "1", "--delta", "1e-3", "--loss", "l1"]
    cases = []

    def mutate(base, option, values):
        i = base.index(option)
        cases.extend(base[: i + 1] + [v] + base[i + 2 :] for v in values)

    for base in (design, compare, compose, lookup):
        for option in ("--epsilon", "--delta", "--loss") + (
            ("--gap", "--time-limit") if base is not lookup else ()
        ):
            if option in base:
                mutate(base, option, BAD_NUMBERS + BAD_RANGES[option])
            else:
                cases.extend(base + [option, v] for v in BAD_NUMBERS + BAD_RANGES[option])
        cases.extend(base + ["--sensitivity", v] for v in BAD_NUMBERS + BAD_RANGES["--sensitivity"])
        cases.extend(base + extra for extra in (["--bogus"], ["--epsilon"], ["extra"]))
    mutate(compose, "--releases", BAD_NUMBERS + BAD_RANGES["--releases"])
    cases.append(
        compose[:3] + ["--epsilon", "0.5"] + compose[5:] + ["--releases", "1000"]
    )  # ε/k too small
    for output in (str(tmp_path), str(tmp_path / "no-such-dir" / "x.json")):
        cases += [design[:-1] + [output], compose + ["-o", output], lookup + ["-o", output]]
    sample = ["sample", str(noise_file), "-n", "3"]
    for option in ("-n", "--seed", "--value"):
        values = BAD_NUMBERS + BAD_RANGES[option]
        mutate(sample, option, values) if option in sample else cases.extend(
            sample + [option, v] for v in values
        )
    certify = ["certify", str(noise_file), "--profile"]
    cases.extend(certify + ["--points", v] for v in BAD_NUMBERS + BAD_RANGES["--points"])
    cases.extend(["certify", str(noise_file), "--epsilon", v] for v in BAD_NUMBERS + ["0", "-1"])
    for path in files.values():
        cases += [["certify", path], ["sample", path, "-n", "2"], ["compare", "--noise", path]]
    cases += [
        [],
        ["nope"],
        ["design"],
        ["certify"],
        ["sample", "-n", "3"],
        ["catalog"],
        ["catalog", "nope"],
        ["catalog", "lookup"],
        ["compare"],
        ["compose"],
        ["certify", str(noise_file), str(noise_file)],
        ["compare", "--noise", str(noise_file), "--delta", "0.01"],  # not (1, 0.01)-DP
        # options that would be ignored: refused, not dropped without a word
        ["certify", str(noise_file), "--points", "5"],  # (no --profile)
        ["compare", "--noise", str(noise_file), "--gap", "0.01"],
        ["compare", "--noise", str(noise_file), "--time-limit", "5"],
        compose + ["--json", "-o", "-"],  # both to stdout
        lookup + ["--json", "-o", "-"],
        ["--versio"],
        ["-x"],
    ]
    return cases


def test_fuzz_every_malformed_input_is_one_line_and_status_2(
    noise_file, tmp_path, monkeypatch, capsys
):
    """Hundreds of malformed command lines (bad numbers, values out of range, missing or unknown
    arguments, unreadable, malformed or edited files, unwritable outputs): each gives exit status 2
    and exactly one line on stderr starting 'dpdro: error: ', before any design starts, no
    traceback."""

    def no_design(*args, **kwargs):
        raise AssertionError("a design started")

    monkeypatch.setattr(cli, "optimal_noise", no_design)
    monkeypatch.setattr(cli, "design_for_releases", no_design)
    cases = _cases(noise_file, tmp_path)
    assert len(cases) > 400
    for argv in cases:
        status = cli.main(argv)
        captured = capsys.readouterr()
        assert status == 2, (argv, captured.err)
        assert captured.err.count("\n") == 1 and captured.err.startswith("dpdro: error: "), (
            argv,
            captured.err,
        )
        assert "Traceback" not in captured.err and not captured.out, argv


@pytest.mark.parametrize(
    "args",
    [
        ["design", "--epsilon", "50", "--delta", "1e-3", "--loss", "l1", "-o", "x.json"],
        ["sample", "{noise}", "-n", "1000000000000"],
        ["design", "--epsilon", "1", "--delta", "1e-15", "--loss", "l1", "-o", "x.json"],
    ],
)
def test_issue_28_inputs_through_the_console_script(noise_file, args):
    out = run(*[a.format(noise=noise_file) for a in args], check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_compare_says_which_mechanism_the_release_beats():
    out = run("compare", "--epsilon", "2", "--delta", "1e-6", "--loss", "l1", "--json")
    got = json.loads(out.stdout)
    assert got["best_literature"] == "staircase"
    assert got["advantage"] >= -1e-6  # never worse than the best literature mechanism
    text = run("compare", "--epsilon", "2", "--delta", "1e-6", "--loss", "l1").stdout
    assert "best literature mechanism: staircase; dpdro's noise is" in text


def test_compare_states_dpdros_excess_over_the_best_mechanism(noise_file, capsys):
    """'X% below/above it' is dpdro's expected loss relative to the best mechanism's (the ratio
    minus 1 had printed 'dpdro's noise is 900.000% below it' at ε = 10, δ = 0.9, for a noise a
    tenth of the staircase's)."""
    assert cli.main(["compare", "--noise", str(noise_file), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    best = min((r for r in got["rows"][1:] if r["valid"] and r["expected_loss"] is not None),
               key=lambda r: r["expected_loss"])
    excess = got["rows"][0]["expected_loss"] / best["expected_loss"] - 1.0
    assert cli.main(["compare", "--noise", str(noise_file)]) == 0
    text = capsys.readouterr().out
    word = "below" if excess <= 0 else "above"
    assert f"dpdro's noise is {100 * abs(excess):.3f}% {word} it" in text
