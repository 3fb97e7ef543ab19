"""The (OPT) mechanisms of Tables 2 and 3 are solved at δ itself and stay (ε, δ)-DP when moved.

One solve serves every wide range (naïve Bayes R ≥ NB_DD_WIDE, coordinate descent n ≥ n0): its
noises are reused with the piece edges moved to the actual range, given exactly in ticks (the
scale-free certificate of dpdro.data_dependent.privacy). The certificate of a moved mechanism must
be bit for bit that of the solve, ≤ δ, for every range the tables use, up to the largest (a range
is at most the dataset size n: counts lie in [0, n_train], gradient sums in (−n_train, n_train)).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdro import data_dependent as dd
from repro import experiments as ex
from repro.datasets import available_datasets, load_dataset
from repro.experiments.data_dependent import NB_DD_DESIGNS, exact_edges, nb_dd_edges

DELTA = 0.1


@pytest.fixture(scope="module")
def sizes():
    """n of every offline dataset (an upper bound on every range key the tables use)."""
    return sorted({float(load_dataset(name).n) for name in available_datasets()})


def _cached(cls, **kw):
    return cls(1.0, DELTA, cache=ex.DD_CACHE, solve=False, **kw)  # the committed solves only


def test_nb_opt_is_solved_at_delta_and_certifies_at_delta_on_every_range(sizes):
    fam = _cached(ex.NBDDFamily)
    base = fam.mechanism(ex.NB_DD_WIDE)
    (info,) = fam.solved.values()
    assert info["problem"]["delta"] == DELTA and base.delta == DELTA
    ref = base.certify()
    assert ref <= DELTA and ref == info["recertified_delta"]
    keys = [*np.round(np.arange(ex.NB_DD_WIDE, 15.0, 0.1), 6), *sizes, 1e6]
    assert max(sizes) >= 36178.0  # adult's largest range (its training-set size)
    for key in keys:
        mech = fam.mechanism(key)
        assert mech.delta == DELTA and mech.piece_edges[-1] == pytest.approx(key, abs=1e-6)
        assert all(a is b for a, b in zip(mech.noises, base.noises, strict=True))
        assert mech.certify() == ref, key  # bit for bit: the certificate is scale-free


def test_nb_centre_layout_is_the_appendix_description_and_certifies_on_every_range(sizes):
    """The GitHub appendix's layout ("the center of the range is partitioned with finer
    granularity"): 7 pieces, the narrow ones around the centre, symmetric up to a tick; one solve
    (cached under its own key) serves every wide range, certified bit for bit."""
    design = NB_DD_DESIGNS["centre"]
    for R in (design["wide"], 7.3, 100.0, 36178.0):
        e = nb_dd_edges(R, "centre")
        w = np.diff(e)
        assert e.size == 8 and e[0] == 0 and e[-1] == pytest.approx(R)
        assert np.all(np.abs(np.round(e / 0.1) - e / 0.1) < 1e-6)  # on the noise grid
        assert np.allclose(w[1:6], [1.0, 0.5, 0.6, 0.5, 1.0])  # fine in the middle
        assert min(w[0], w[6]) >= 1.2 - 1e-9  # ≥ Δf + 2β: the LP does not depend on R
        assert abs((e[3] + e[4]) / 2 - R / 2) <= 0.05 + 1e-9
    for R in (0.5, 1.0, 5.0):  # below both ``wide``: the same equal pieces
        assert np.array_equal(nb_dd_edges(R, "centre"), nb_dd_edges(R, "ends"))
    fam = _cached(ex.NBDDFamily, design="centre")
    base = fam.mechanism(design["wide"])
    (name,) = fam.solved
    assert name.endswith("_centre")
    ref = base.certify()
    assert ref <= DELTA
    for key in [*np.round(np.arange(design["wide"], 9.0, 0.1), 6), *sizes]:
        mech = fam.mechanism(key)
        assert all(a is b for a, b in zip(mech.noises, base.noises, strict=True))
        assert mech.certify() == ref, key
    with pytest.raises(ValueError, match="design"):
        ex.NBDDFamily(1.0, DELTA, design="middle")


def test_pcd_opt_is_solved_at_delta_and_certifies_at_delta_on_every_range(sizes):
    fam = _cached(ex.PCDDDFamily)
    q = fam.query_mechanism()
    (info,) = fam.solved.values()
    assert info["problem"]["delta"] == DELTA and q.delta == DELTA and q.certify() <= DELTA
    ref = fam.mechanism(fam.n0).certify()
    assert ref <= DELTA
    for n in [*range(int(fam.n0), 40, 3), *sizes, 1e6]:
        lo, key = fam.embed(-float(n), float(n), 2.0)
        mech = fam.mechanism(float(key))
        assert mech.delta == DELTA and mech.piece_edges[-1] == pytest.approx(key, abs=1e-6)
        assert mech.certify() == ref, n


def test_float_edges_far_from_zero_are_not_scale_free():
    """Why the edges are given in ticks: the same wide mechanism with float edges carries the
    edges' offset from the noise lattice in its error bound, so its certificate grows with R."""
    fam = _cached(ex.NBDDFamily)
    base = fam.mechanism(ex.NB_DD_WIDE)
    wide = fam.mechanism(36178.0)
    floats = dd.Mechanism(
        base.noises, ex.nb_dd_edges(36178.0), base.epsilon, DELTA, base.sensitivity
    )
    assert wide.certify() == base.certify() < floats.certify()


def test_exact_edges_rejects_edges_off_the_grid():
    out = exact_edges(np.array([0.0, 0.5, 1.0, 36178.0]), 0.1)
    assert out["edge_ticks"].tolist() == [0, 5, 10, 361780] and out["edge_step"] == 0.1
    with pytest.raises(ValueError, match="grid"):
        exact_edges(np.array([0.0, 0.55, 1.0]), 0.1)
