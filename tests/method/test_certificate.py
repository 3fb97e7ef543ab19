"""Noise files: a certificate is recomputed on reading, and every edit of the noise is detected."""

import copy
import json
import re

import pytest

import dpdro
from dpdro.certificate import certificate, document, read_document, read_file


@pytest.fixture(scope="module")
def doc():
    res = dpdro.upper_bound(
        dpdro.Problem(epsilon=1.0, delta=0.2), dpdro.Partition.uniform(L=40, beta=1 / 8)
    )
    cert = certificate(
        res.noise,
        epsilon=1.0,
        delta=0.2,
        sensitivity=1.0,
        loss="l1",
        upper_bound=res.value,
        lower_bound=0.55,
    )
    return json.loads(
        json.dumps(document(res.noise, cert))
    )  # through JSON text, as a file would be


def test_round_trip_recomputes_the_certificate(doc):
    noise, cert = read_document(copy.deepcopy(doc))
    assert cert == doc["certificate"]
    assert cert["certified_delta"] == dpdro.certify_delta(noise, 1.0, 1.0) <= 0.2
    assert cert["gap"] == pytest.approx(cert["upper_bound"] / 0.55 - 1)
    assert set(doc["software"]) == {"dpdro", "numpy", "scipy", "highspy"}


def _edited(doc, edit):
    d = copy.deepcopy(doc)
    edit(d)
    return d


def _move(d, amount):
    p = d["noise"]["probs"]
    p[len(p) // 2] -= amount
    p[-2] += amount


def _stretch(d):
    """Edges × 1.01: still (ε, δ)-DP (a wider noise is private at sensitivity 1.01 ≥ 1), another
    loss."""
    d["noise"]["edges"] = [1.01 * e for e in d["noise"]["edges"]]
    d["noise"]["grid"] *= 1.01


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda d: _move(d, 1e-3),
            r"noise must be \(1.0, 0.2\)-DP at sensitivity 1.0: "
            r"certify_delta gives .* > delta = 0.2",
        ),
        (
            _stretch,
            "certificate.expected_loss must equal the value recomputed from the stored noise",
        ),
        (
            lambda d: d["certificate"].update(certified_delta=0.1),
            "certificate.certified_delta must equal the value",
        ),
        (lambda d: d["certificate"].update(delta=0.1), r"certify_delta gives .* > delta = 0.1"),
        (
            lambda d: d["certificate"].update(upper_bound=0.5),
            "certificate bounds must satisfy lower_bound <= expected_loss",
        ),
        (
            lambda d: d["certificate"].update(lower_bound=0.6),
            "certificate bounds must satisfy lower_bound <= expected_loss",
        ),
        (lambda d: d["certificate"].update(loss="l3"), "loss must be 'l1' or 'l2', got 'l3'"),
        (
            lambda d: d["certificate"].update(epsilon="1"),
            "certificate.epsilon must be a number, got '1'",
        ),
        (
            lambda d: d["noise"].update(probs=[1.0]),
            "noise must be a valid PiecewiseUniform: probs must have",
        ),
        (lambda d: d.pop("noise"), "noise must be a JSON object, got None"),
        (lambda d: d.update(version=2), "version must be 1 .* got 2"),
        (lambda d: d.update(format="other"), "format must be 'dpdro-noise' .* got 'other'"),
    ],
)
def test_edits_are_detected(doc, edit, message):
    with pytest.raises(ValueError, match=message):
        read_document(_edited(doc, edit))


def test_not_a_document():
    with pytest.raises(ValueError, match="format must be 'dpdro-noise' .* got 'list'"):
        read_document([1, 2])


def test_read_file_names_the_file_and_what_is_wrong(doc, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    noise, cert = read_file(good)
    assert cert == doc["certificate"] and cert["certified_delta"] == dpdro.certify_delta(
        noise, 1.0, 1.0
    )
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe")
    (tmp_path / "bad.json").write_text("{")
    edited = copy.deepcopy(doc)
    edited["certificate"]["delta"] = 0.1
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    for name, message in (
        ("missing.json", "must be a readable UTF-8 file"),
        ("bad.txt", "must be a readable UTF-8"),
        ("bad.json", "must contain JSON"),
        ("edited.json", "is refused: noise must be (1.0, 0.1)-DP"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)) as info:
            read_file(tmp_path / name)
        assert str(tmp_path / name) in str(info.value)


def test_a_path_that_is_no_path_is_refused_by_name():
    """Regression: SecureSampler.from_file(None) raised a bare TypeError naming no parameter."""
    for bad in (None, 3, ["noise.json"]):
        with pytest.raises(TypeError, match=r"path must be a str or os.PathLike .* got"):
            read_file(bad)
        with pytest.raises(TypeError, match=r"path must be a str or os.PathLike"):
            dpdro.SecureSampler.from_file(bad)
