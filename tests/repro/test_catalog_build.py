"""Building a catalog: the grid is stored, every entry is certified, and dpdro.catalog reads it."""

import gzip
import json

import pytest

import dpdro
from dpdro.catalog import Catalog
from repro.catalog_build import build_catalog, write_catalog


@pytest.fixture(scope="module")
def doc():
    return build_catalog([1.0, 1.2], [0.2, 0.3], ("l1",), rel_gap=0.05, time_limit=30)


def test_build_stores_the_grid_and_certified_entries(doc):
    assert doc["grid"] == {"epsilons": [1.0, 1.2], "deltas": [0.2, 0.3], "losses": ["l1"], "sensitivity": 1.0,
                           "rel_gap": 0.05, "time_limit": 30}
    assert len(doc["entries"]) == 4 and doc["provenance"]["dpdro_version"] == dpdro.__version__
    for e in doc["entries"]:
        noise = dpdro.PiecewiseUniform.from_dict(e["noise"])
        assert dpdro.certify_delta(noise, e["epsilon"], 1.0) <= e["delta"]
        assert e["upper"] == noise.expected_loss("l1") and e["lower"] <= e["upper"] <= 1.06 * e["lower"]


def test_written_catalog_reads_back_and_looks_up(doc, tmp_path):
    path = write_catalog(doc, tmp_path / "c.json.gz")
    cat = Catalog(json.loads(gzip.decompress(path.read_bytes())))
    found = cat.lookup(epsilon=1.1, delta=0.25, sensitivity=2.0, loss="l1")
    assert found.source == (1.0, 0.2) and found.bound_source == (1.2, 0.3)
    assert found.certified_delta <= 0.25 and found.lower <= found.upper
    assert cat.worst_gap("l1") >= found.gap


def test_grids_must_increase():
    with pytest.raises(ValueError, match="epsilons and deltas must be strictly increasing"):
        build_catalog([1.0, 0.5], [0.2], ("l1",))
