"""One home for repository paths (repro.paths) and one provenance helper and atomic JSON writer."""

import json

import pytest

import dpdro
from repro import paths
from repro.provenance import provenance, read_json, write_json_atomic


def test_paths_point_into_the_repository():
    root = paths.ROOT
    assert (root / "pyproject.toml").is_file() and (root / "dpdro").is_dir() and (root / "repro").is_dir()
    assert paths.RESULTS == root / "results" and paths.DATA == root / "data"
    assert paths.LEDGER == root / "results" / "ledger.csv" and paths.LEDGER.is_file()
    assert paths.relative(root / "results" / "x.json") == "results/x.json"
    assert paths.relative("/elsewhere/x.json") == "/elsewhere/x.json"


def test_provenance_fields():
    p = provenance(12.345, "run.py --x", repeats=3)
    assert p["dpdro_version"] == dpdro.__version__
    assert len(p["git_commit"]) == 40 or p["git_commit"] == "unknown"
    assert p["git_dirty"] in (True, False, None)
    for key in ("date_utc", "host", "machine", "platform", "cpu_count", "python", "numpy", "highspy"):
        assert key in p, key
    assert p["seconds"] == 12.35 and p["command"] == "run.py --x" and p["repeats"] == 3
    assert "seconds" not in provenance()
    json.dumps(p)  # serialisable


def test_write_json_atomic(tmp_path):
    target = tmp_path / "sub" / "out.json"
    data = {"b": 1, "a": [1.5, None], "text": "δ"}
    assert write_json_atomic(target, data, sort_keys=True) == target
    text = target.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.index('"a"') < text.index('"b"') and "\\u03b4" in text
    assert read_json(target) == data
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary file left behind
    write_json_atomic(target, data, ensure_ascii=False)
    assert "δ" in target.read_text(encoding="utf-8") and read_json(target) == data


def test_a_failed_write_leaves_the_old_file(tmp_path):
    target = tmp_path / "out.json"
    write_json_atomic(target, {"x": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"x": object()})
    assert read_json(target) == {"x": 1}
