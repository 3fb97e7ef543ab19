"""Building a catalog: every entry is certified, the grid is stored, the sweep family resumes and
merges, and dpdro.catalog reads what it writes."""

import gzip
import json

import pytest

import dpdro
from dpdro.catalog import Catalog
from repro import sweep
from repro.catalog_build import FAMILY, catalog_document, catalog_entry, write_catalog

EPSILONS, DELTAS = (1.0, 1.2), (0.2, 0.3)
SETTINGS = {"rel_gap": 0.05, "time_limit": 30}


@pytest.fixture(scope="module")
def doc():
    entries = [catalog_entry("l1", e, d, **SETTINGS) for e in EPSILONS for d in DELTAS]
    return catalog_document(entries, EPSILONS, DELTAS, ("l1",), **SETTINGS)


def test_build_stores_the_grid_and_certified_entries(doc):
    assert doc["grid"] == {
        "epsilons": list(EPSILONS),
        "deltas": list(DELTAS),
        "losses": ["l1"],
        "sensitivity": 1.0,
        **SETTINGS,
    }
    assert len(doc["entries"]) == 4 and doc["provenance"]["dpdro_version"] == dpdro.__version__
    assert sorted((e["i"], e["j"]) for e in doc["entries"]) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for e in doc["entries"]:
        assert (e["epsilon"], e["delta"]) == (EPSILONS[e["i"]], DELTAS[e["j"]])
        noise = dpdro.PiecewiseUniform.from_dict(e["noise"])
        assert dpdro.certify_delta(noise, e["epsilon"], 1.0) <= e["delta"]
        assert e["upper"] == noise.expected_loss("l1")
        assert e["lower"] <= e["upper"] <= 1.06 * e["lower"]
        assert e["gap"] == pytest.approx(e["upper"] / e["lower"] - 1.0)


def test_written_catalog_reads_back_and_looks_up(doc, tmp_path):
    path = write_catalog(doc, tmp_path / "c.json.gz")
    cat = Catalog(json.loads(gzip.decompress(path.read_bytes())))
    assert Catalog.from_file(path).grid == cat.grid
    found = cat.lookup(epsilon=1.1, delta=0.25, sensitivity=2.0, loss="l1")
    assert found.source == (1.0, 0.2) and found.bound_source == (1.2, 0.3)
    assert found.certified_delta <= 0.25 and found.lower <= found.upper
    assert cat.worst_gap("l1") >= found.gap


def test_grids_must_increase():
    with pytest.raises(ValueError, match="epsilons and deltas must be strictly increasing"):
        catalog_document([], [1.0, 0.5], [0.2], ("l1",))


def test_sweep_family_builds_resumes_and_merges(tmp_path):
    """The CI scale of the family: one task per grid point, skipped once done, merged into a
    catalog whose entries are the tasks' results."""
    options = {"rel_gap": 0.05}
    tasks = FAMILY.tasks(tmp_path, "ci", options)
    assert len(tasks) == 4 and len({t.path for t in tasks}) == 4
    registry = {FAMILY.name: FAMILY}
    report = sweep.run(tasks, jobs=1, progress=False, registry=registry)
    assert report.ok and all(sweep.is_done(t) for t in tasks)
    (path,) = sweep.merge(FAMILY, tmp_path, tasks, "ci", options, say=lambda m: None)
    cat = Catalog.from_file(path)
    assert cat.losses == ("l1",) and cat.grid["rel_gap"] == 0.05
    for t in tasks:
        result = sweep.load_result(t)
        i = list(cat.epsilons).index(result["epsilon"])
        j = list(cat.deltas).index(result["delta"])
        assert cat.upper["l1"][i, j] == result["upper"] and cat.lower["l1"][i, j] == result["lower"]
    # resumed: every task found done, nothing recomputed
    again = sweep.run(
        FAMILY.tasks(tmp_path, "ci", options), jobs=1, progress=False, registry=registry
    )
    assert again.ok and not again.computed and len(again.skipped) == 4
