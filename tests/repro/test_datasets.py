"""Offline datasets: bundled files match their provenance; path= route validates and cleans."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import shutil

import numpy as np
import pytest

from repro import datasets as dsm
from repro.datasets import (
    NOT_OFFLINE,
    OFFLINE,
    PAPER_DATASETS,
    Dataset,
    DatasetUnavailableError,
    available_datasets,
    binary_labels,
    data_dir,
    dataset_summary,
    load_dataset,
    one_hot,
)

META = json.loads((data_dir() / "datasets.json").read_text(encoding="utf-8"))["datasets"]
BUNDLED = [n for n, s in PAPER_DATASETS.items() if s == OFFLINE]
NOT_BUNDLED = [n for n, s in PAPER_DATASETS.items() if s == NOT_OFFLINE]

# Our counts (n, |V_num|, |V_cat|, |C|, d) — a regression guard on the cleaning; see data/README.md
# for why some differ from the paper's Tables 2 and 3.
EXPECTED = {
    "post-operative": (87, 1, 7, 2, 14),
    "adult": (45222, 5, 8, 2, 57),
    "breast-cancer": (683, 0, 9, 2, 81),
    "contraceptive": (1473, 2, 7, 3, 18),
    "dermatology": (358, 2, 32, 6, 98),
    "annealing": (898, 6, 18, 5, 42),
    "spect": (267, 0, 22, 2, 23),
    "abalone": (4177, 7, 1, 2, 10),
    "spambase": (4601, 57, 0, 2, 58),
    "ecoli": (336, 5, 2, 2, 8),
}


@pytest.fixture(scope="module")
def loaded() -> dict[str, Dataset]:
    return {n: load_dataset(n) for n in BUNDLED}


# ------------------------------------------------------------------------------------------------
# Catalogue
# ------------------------------------------------------------------------------------------------


def test_paper_datasets_catalogue():
    assert len(PAPER_DATASETS) == 14
    assert set(PAPER_DATASETS.values()) == {OFFLINE, NOT_OFFLINE}
    assert sorted(NOT_BUNDLED) == ["absent", "bank", "colon-cancer", "cylinder-bands"]
    assert available_datasets() == tuple(BUNDLED)
    assert set(EXPECTED) == set(BUNDLED)
    assert set(META) == set(PAPER_DATASETS)
    rows = dataset_summary()
    assert [r["name"] for r in rows] == list(PAPER_DATASETS)
    assert all(r["paper_n"] for r in rows)


def test_data_folder_is_small():
    total = sum(p.stat().st_size for p in data_dir().iterdir() if p.is_file())
    assert total < 5_000_000


@pytest.mark.parametrize("name", BUNDLED)
def test_provenance_complete(name):
    e = META[name]
    assert e["status"] == OFFLINE
    assert e["uci"]["url"].startswith("https://archive.ics.uci.edu/dataset/")
    assert "Dua" in e["uci"]["repository_citation"] and "CC BY 4.0" in e["licence"]
    for s in e["source"]:
        assert s["package"] and s["version"] and s["member"]
        assert len(s["archive_sha256"]) == 64 and len(s["member_sha256"]) == 64
    assert e["cleaning"] and e["bounds_rule"]
    assert set(e["paper"]["table2"]) == {"n", "n_num", "n_cat", "n_classes"}
    assert set(e["paper"]["table3"]) == {"n", "d"}
    ours = e["counts"]
    t2, t3 = e["paper"]["table2"], e["paper"]["table3"]
    same = (ours["n"], ours["n_num"], ours["n_cat"], ours["n_classes"], ours["d_one_hot"]) == (
        t2["n"], t2["n_num"], t2["n_cat"], t2["n_classes"], t3["d"])  # fmt: skip
    # Every difference from the paper's counts is explained in the metadata.
    assert same or e["differences"]


# ------------------------------------------------------------------------------------------------
# Bundled datasets
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_checksum_and_counts(name, loaded):
    e = META[name]
    raw = (data_dir() / e["file"]["name"]).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == e["file"]["sha256"]
    text = gzip.decompress(raw) if e["file"]["name"].endswith(".gz") else raw
    assert hashlib.sha256(text).hexdigest() == e["file"]["sha256_uncompressed"]
    ds = loaded[name]
    c = e["counts"]
    assert (ds.n, ds.n_num, ds.n_cat, ds.n_classes, ds.d_one_hot) == (c["n"], c["n_num"], c["n_cat"], c["n_classes"], c["d_one_hot"])
    assert (ds.n, ds.n_num, ds.n_cat, ds.n_classes, ds.d_one_hot) == EXPECTED[name]
    assert ds.class_counts() == e["label"]["class_counts"]
    assert ds.provenance["file"]["sha256"] == e["file"]["sha256"]


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_values_valid(name, loaded):
    ds = loaded[name]
    assert ds.X_num.shape == (ds.n, ds.n_num) and ds.X_num.dtype == float
    assert ds.X_cat.shape == (ds.n, ds.n_cat) and ds.X_cat.dtype.kind == "i"
    assert np.isfinite(ds.X_num).all()
    lo, hi = ds.num_bounds[:, 0], ds.num_bounds[:, 1]
    assert (lo < hi).all()
    assert ((ds.X_num >= lo) & (ds.X_num <= hi)).all()
    # Bounds are the observed extremes (the authors' rule), so they are attained.
    if ds.n_num:
        assert np.array_equal(ds.X_num.min(axis=0), lo) and np.array_equal(ds.X_num.max(axis=0), hi)
    for j, levels in enumerate(ds.cat_levels):
        assert len(levels) >= 2
        assert ds.X_cat[:, j].min() >= 0 and ds.X_cat[:, j].max() < len(levels)
        assert len(np.unique(ds.X_cat[:, j])) == len(levels)  # every level occurs
    assert ds.y.min() >= 0 and ds.y.max() < ds.n_classes
    assert len(np.unique(ds.y)) == ds.n_classes
    assert len(set(ds.feature_names)) == ds.n_num + ds.n_cat


@pytest.mark.parametrize("name", BUNDLED)
def test_one_hot_design(name, loaded):
    ds = loaded[name]
    for center in (True, False):
        d = one_hot(ds, center=center)
        assert d.X.shape == (ds.n, ds.d_one_hot) == (ds.n, len(d.columns))
        assert np.isfinite(d.X).all() and np.abs(d.X).max() <= 1.0
        assert (d.X[:, 0] == 1.0).all() and d.columns[0] == "intercept"
        assert set(np.unique(d.y)) == {-1, 1}
    full = one_hot(ds, intercept=False, drop_first=False)
    assert full.X.shape[1] == ds.n_num + sum(len(lv) for lv in ds.cat_levels)
    y = binary_labels(ds)
    counts = ds.class_counts()
    assert (y == 1).sum() == counts[ds.positive_class] == max(counts.values())
    assert ds.positive_class == META[name]["binary"]["positive_class"]


def test_one_hot_matches_authors_scaling(loaded):
    """Centred and divided by the largest absolute value, column by column (PCD_functions.jl)."""
    ds = loaded["ecoli"]
    d = one_hot(ds)
    col = ds.X_num[:, 0] - ds.X_num[:, 0].mean()
    assert np.allclose(d.X[:, 1], col / np.abs(col).max())
    lip = d.columns.index("lip=1.00")
    raw = (ds.X_cat[:, ds.cat_names.index("lip")] == 1).astype(float)
    raw -= raw.mean()
    assert np.allclose(d.X[:, lip], raw / np.abs(raw).max())


def test_one_hot_validation(loaded):
    with pytest.raises(TypeError, match="dataset must be"):
        one_hot("ecoli")
    with pytest.raises(TypeError, match="center must be True or False, got 1"):
        one_hot(loaded["ecoli"], center=1)


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------


def test_unknown_name():
    with pytest.raises(ValueError, match=r"name must be one of \[.*'adult'.*\], got 'iris'"):
        load_dataset("iris")


@pytest.mark.parametrize("name", NOT_BUNDLED)
def test_not_bundled_raise_clear_error(name):
    with pytest.raises(DatasetUnavailableError, match=rf"dataset '{name}' is not bundled.*path="):
        load_dataset(name)


def test_path_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="path must name an existing file"):
        load_dataset("bank", path=tmp_path / "nope.csv")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got 3"):
        load_dataset("bank", path=3)


def test_tampered_bundled_file_detected(tmp_path, monkeypatch):
    for p in data_dir().iterdir():
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "ecoli.csv").write_text((tmp_path / "ecoli.csv").read_text().replace("0.49", "0.48", 1))
    monkeypatch.setenv(dsm.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(ValueError, match="sha256"):
        load_dataset("ecoli")
    assert load_dataset("spect").n == 267  # the others still load from the relocated folder


# ------------------------------------------------------------------------------------------------
# path= with the bundled format
# ------------------------------------------------------------------------------------------------


def test_path_bundled_format(tmp_path, loaded):
    src = (data_dir() / "ecoli.csv").read_text()
    p = tmp_path / "ecoli.csv"
    p.write_text(src)
    ds = load_dataset("ecoli", path=p)
    ref = loaded["ecoli"]
    assert np.array_equal(ds.X_num, ref.X_num) and np.array_equal(ds.X_cat, ref.X_cat) and np.array_equal(ds.y, ref.y)
    assert ds.provenance["loaded_from"] == str(p)
    gz = tmp_path / "ecoli.csv.gz"
    gz.write_bytes(gzip.compress(src.encode()))
    assert load_dataset("ecoli", path=gz).n == 336
    lines = src.splitlines()
    bad_header = tmp_path / "h.csv"
    bad_header.write_text("\n".join([lines[0].replace("mcg", "MCG")] + lines[1:]))
    with pytest.raises(ValueError, match=r"missing \['mcg'\], unexpected \['MCG'\]"):
        load_dataset("ecoli", path=bad_header)
    bad_level = tmp_path / "l.csv"
    row = lines[1].split(",")
    row[5] = "0.7"  # 'lip' is categorical with levels 0.48 / 1.00
    bad_level.write_text("\n".join([lines[0], ",".join(row)]))
    with pytest.raises(ValueError, match=r"categorical column 'lip' must take one of \['0.48', '1.00'\], got '0.7'"):
        load_dataset("ecoli", path=bad_level)
    out_of_bounds = tmp_path / "b.csv"
    row = lines[1].split(",")
    row[0] = "1.5"
    out_of_bounds.write_text("\n".join([lines[0], ",".join(row)]))
    with pytest.raises(ValueError, match=r"column 'mcg' must lie in \[0.0, 0.89\].*got 1.5"):
        load_dataset("ecoli", path=out_of_bounds)
    short = tmp_path / "s.csv"
    short.write_text("\n".join([lines[0], ",".join(lines[1].split(",")[:-1])]))
    with pytest.raises(ValueError, match="line 2 has 7 fields, expected 8"):
        load_dataset("ecoli", path=short)
    bad_label = tmp_path / "y.csv"
    bad_label.write_text("\n".join([lines[0], lines[1].rsplit(",", 1)[0] + ",xx"]))
    with pytest.raises(ValueError, match="label column 'class' must take one of"):
        load_dataset("ecoli", path=bad_label)


# ------------------------------------------------------------------------------------------------
# path= with the original files of the datasets that are not bundled (small synthetic copies)
# ------------------------------------------------------------------------------------------------

BANK_HEADER = ["age", "job", "marital", "education", "default", "balance", "housing", "loan", "contact",
               "day", "month", "duration", "campaign", "pdays", "previous", "poutcome", "y"]  # fmt: skip


def _bank_rows(n, rng):
    rows = []
    for i in range(n):
        rows.append([
            str(rng.integers(18, 90)), ["admin.", "technician", "unknown"][i % 3], ["married", "single"][i % 2],
            ["primary", "secondary", "tertiary", "unknown"][i % 4], ["no", "yes"][i % 5 == 0],
            str(rng.integers(-500, 5000)), ["no", "yes"][i % 2], ["no", "yes"][i % 3 == 0],
            ["cellular", "unknown"][i % 2], str(rng.integers(1, 31)), ["may", "jun", "jul"][i % 3],
            str(rng.integers(0, 1000)), str(rng.integers(1, 10)), str(-1 if i % 4 else rng.integers(1, 400)),
            str(rng.integers(0, 3)), ["unknown", "failure", "success"][i % 3], ["no", "yes"][i % 4 == 0],
        ])  # fmt: skip
    return rows


def _write_semicolon(path, header, rows):
    lines = [";".join(f'"{h}"' for h in header)]
    lines += [";".join(f'"{v}"' if not v.lstrip("-").isdigit() else v for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def test_path_bank(tmp_path):
    rng = np.random.default_rng(0)
    p = tmp_path / "bank-full.csv"
    _write_semicolon(p, BANK_HEADER, _bank_rows(40, rng))
    ds = load_dataset("bank", path=p)
    assert (ds.n, ds.n_num, ds.n_cat, ds.n_classes) == (40, 7, 9, 2)
    assert ds.classes == ("no", "yes") and ds.positive_class == "no"
    assert "unknown" in ds.cat_levels[ds.cat_names.index("job")]
    assert ds.provenance["paper"]["table3"]["d"] == 44 and ds.provenance["loaded_sha256"]
    d = one_hot(ds)
    assert np.abs(d.X).max() <= 1 and d.X.shape == (40, ds.d_one_hot)
    # Malformed copies.
    bad = tmp_path / "bad.csv"
    _write_semicolon(bad, [h for h in BANK_HEADER if h != "balance"], [r[:5] + r[6:] for r in _bank_rows(5, rng)])
    with pytest.raises(ValueError, match=r"expected a ';'-separated header .* missing \['balance'\]"):
        load_dataset("bank", path=bad)
    rows = _bank_rows(5, rng)
    rows[2][0] = "old"
    _write_semicolon(bad, BANK_HEADER, rows)
    with pytest.raises(ValueError, match=r"numerical column 'age' must hold numbers or '\?', got 'old'"):
        load_dataset("bank", path=bad)
    comma = tmp_path / "comma.csv"
    comma.write_text(",".join(BANK_HEADER) + "\n" + ",".join(_bank_rows(1, rng)[0]) + "\n")
    with pytest.raises(ValueError, match="does not look like the UCI file of dataset 'bank'"):
        load_dataset("bank", path=comma)


def test_path_absent(tmp_path):
    rng = np.random.default_rng(1)
    header = ["ID", *dsm._ABSENT_CAT[:4], *dsm._ABSENT_NUM[:4], "Work load Average/day ", *dsm._ABSENT_NUM[5:],
              *dsm._ABSENT_CAT[4:], dsm._ABSENT_LABEL]  # fmt: skip
    rows = []
    for i in range(30):
        row = [str(i % 7)]
        row += [str(i % 28), str(1 + i % 12), str(2 + i % 5), str(1 + i % 4)]
        row += [str(rng.integers(100, 400)) for _ in range(4)] + [f"{rng.uniform(200, 380):.3f}"]
        row += [str(rng.integers(60, 100)) for _ in range(6)]
        row += [str(i % 2), str(1 + i % 4), str(i % 2), str((i // 2) % 2)]
        row += [str([0, 2, 3, 8, 16][i % 5])]
        rows.append(row)
    rows[3][5] = "?"  # one missing numerical value: 1/30 < 5%, the row is dropped
    p = tmp_path / "Absenteeism_at_work.csv"
    p.write_text("\n".join([";".join(header)] + [";".join(r) for r in rows]) + "\n")
    ds = load_dataset("absent", path=p)
    assert (ds.n, ds.n_num, ds.n_cat, ds.n_classes) == (29, 11, 8, 2)
    assert "ID" not in ds.feature_names
    assert any("dropped 1 rows with missing values" in s for s in ds.provenance["cleaning"])
    assert np.abs(one_hot(ds).X).max() <= 1


def _bands_line(i, rng, missing=False):
    cats = [["yes", "no"][i % 2], "key", "yes", "benton", "gallatin", ["uncoated", "coated"][i % 2], "uncoated", ["no", "yes"][i % 2],
            ["line", "xylol"][i % 2], "yes", ["motter70", "woodhoe70"][i % 2], ["815", "816"][i % 2],
            str(1 + i % 3), ["tabloid", "catalog"][i % 2], "northus", "1910"]  # fmt: skip
    if i % 3 == 0:
        cats[0] = cats[0].upper()  # inconsistent case, as in the UCI file
    nums = [f"{rng.uniform(0, 100):.1f}" for _ in range(19)]
    if missing:
        nums[2] = "?"
        cats[7] = "?"
    return ",".join([f"1991{i:04d}", f"X{i}", "CUST", str(1000 + i), *cats, *nums, ["band", "noband"][i % 2]])


def test_path_cylinder_bands(tmp_path):
    rng = np.random.default_rng(2)
    p = tmp_path / "bands.data"
    p.write_text("a,b,c\n1,2,3\n" + _bands_line(0, rng) + "\n")
    with pytest.raises(ValueError, match="does not look like the UCI file bands.data.*2 of 3 lines"):
        load_dataset("cylinder-bands", path=p)
    lines = [_bands_line(i, rng, missing=(i % 4 == 0)) for i in range(40)]
    lines.insert(10, "1991,broken,record")
    p.write_text("\n".join(lines) + "\n")
    ds = load_dataset("cylinder-bands", path=p)
    assert ds.n == 40 and ds.n_num == 19 and ds.classes == ("band", "noband")
    # 'ink color' (key) and 'cylinder division' (gallatin) are single-valued and dropped, like the authors do.
    assert "ink color" not in ds.cat_names and "cylinder division" not in ds.cat_names
    assert "timestamp" not in ds.feature_names and "customer" not in ds.feature_names
    assert ds.cat_levels[ds.cat_names.index("grain screened")] == ("no", "yes")  # 'YES' lower-cased
    assert "?" in ds.cat_levels[ds.cat_names.index("direct steam")]  # > 5% of rows have gaps: '?' is a level
    assert np.isfinite(ds.X_num).all()  # numerical gaps mean-imputed
    assert any("mean-imputed" in s for s in ds.provenance["cleaning"])
    assert np.abs(one_hot(ds).X).max() <= 1


def test_path_colon_cancer(tmp_path):
    rng = np.random.default_rng(3)
    lines = []
    for i in range(8):
        feats = " ".join(f"{j}:{rng.normal():.4f}" for j in sorted(rng.choice(2000, 5, replace=False) + 1))
        lines.append(f"{'+1' if i % 3 else '-1'} {feats}")
    p = tmp_path / "colon-cancer.bz2"
    p.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    ds = load_dataset("colon-cancer", path=p)
    assert (ds.n, ds.n_cat, ds.n_classes) == (8, 0, 2)
    assert ds.n_num <= 2000 and ds.classes == ("-1", "+1")
    assert np.abs(one_hot(ds).X).max() <= 1
    bad = tmp_path / "bad"
    bad.write_text("2 1:0.5\n")
    with pytest.raises(ValueError, match=r"must start with a label in \{-1, \+1\}"):
        load_dataset("colon-cancer", path=bad)
    bad.write_text("1 2001:0.5\n-1 1:0.2\n")
    with pytest.raises(ValueError, match=r"1 <= index <= 2000"):
        load_dataset("colon-cancer", path=bad)
