"""The packaged certified catalog: round values over the practical plane, a certified bracket
within 1% at every grid point, conservative lookups between them, exact scaling."""

import copy
import gzip
import json
import math
import time
from importlib import resources

import numpy as np
import pytest

import dpdro
from dpdro.catalog import Catalog, load, lookup

LOSSES = ("l1", "l2")


@pytest.fixture(scope="module")
def cat():
    return load()


def _doc():
    return json.loads(
        gzip.decompress(resources.files("dpdro").joinpath("data", "catalog.json.gz").read_bytes())
    )


ROUND_EPSILONS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0)
ROUND_DELTAS = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1)


def test_packaged_file_is_small_and_covers_the_practical_plane(cat):
    """Issue 28: round values over at least ε in [0.05, 10] and δ in [1e-10, 0.1], ℓ1 and ℓ2."""
    size = len(resources.files("dpdro").joinpath("data", "catalog.json.gz").read_bytes())
    assert size <= 5_000_000
    assert cat.losses == LOSSES
    assert cat.epsilon_range == (0.05, 10.0) and cat.delta_range == (1e-10, 0.1)
    assert set(ROUND_EPSILONS) <= set(cat.epsilons) and set(ROUND_DELTAS) <= set(cat.deltas)
    # round values only: multiples of 0.05 (0.05, 0.1, ..., 1.25, 1.75, ...), one or two per step
    assert all(float(f"{e:.3g}") == e for e in cat.epsilons)
    assert all(math.isclose(e / 0.05, round(e / 0.05), abs_tol=1e-9) for e in cat.epsilons)
    assert all(float(f"{d:.1g}") == d for d in cat.deltas)
    assert np.all(np.diff(cat.epsilons) > 0) and np.all(np.diff(cat.deltas) > 0)
    assert {"rel_gap", "time_limit", "sensitivity"} <= set(cat.grid)
    assert cat.grid["sensitivity"] == 1.0
    assert cat.provenance["dpdro_version"]
    for loss in LOSSES:
        assert np.all(np.isfinite(cat.upper[loss])) and np.all(cat.lower[loss] > 0)
        assert np.all(cat.lower[loss] <= cat.upper[loss])
        # the proposition of dpdro.catalog: L at a larger (ε, δ) never exceeds U at a smaller one
        for i, j in np.ndindex(cat.upper[loss].shape):
            assert np.all(cat.lower[loss][i:, j:] <= cat.upper[loss][i, j])


@pytest.mark.parametrize("loss", LOSSES)
def test_every_grid_point_has_a_bracket_within_one_percent(cat, loss):
    """The bracket a lookup returns at a grid point (the best stored noise at or below it against
    the best stored lower bound at or above it) is within 1% everywhere."""
    assert cat.point_gap(loss) <= 0.01
    best_u = np.minimum.accumulate(np.minimum.accumulate(cat.upper[loss], axis=0), axis=1)
    rev = cat.lower[loss][::-1, ::-1]
    best_l = np.maximum.accumulate(np.maximum.accumulate(rev, axis=0), axis=1)[::-1, ::-1]
    assert np.all(best_u / best_l - 1.0 <= 0.01)
    assert cat.point_gap(loss) == pytest.approx(float(np.max(best_u / best_l)) - 1.0, rel=1e-9)
    for eps in ROUND_EPSILONS:  # a request at a grid point gets that bracket
        for delta in (1e-10, 1e-6, 0.1):
            found = lookup(epsilon=eps, delta=delta, sensitivity=7.0, loss=loss)
            assert found.source[0] <= eps <= found.bound_source[0]
            assert found.source[1] <= delta <= found.bound_source[1]
            assert found.gap <= 0.01 + 1e-12, (eps, delta, found.gap)


def test_every_stored_noise_is_certified_at_its_grid_point(cat):
    for loss in LOSSES:
        for i, j in np.ndindex(cat.upper[loss].shape):
            noise = cat.noise(loss, i, j)
            assert dpdro.certify_delta(noise, cat.epsilons[i], 1.0) <= cat.deltas[j]
            # the stored U was computed by another numpy build: equal up to summation order
            assert math.isclose(noise.expected_loss(loss), cat.upper[loss][i, j], rel_tol=1e-12)


def cat_worst(loss):
    return load().worst_gap(loss)


def _check(found, eps, delta, sens, loss):
    assert found.certified_delta == dpdro.certify_delta(found.noise, eps, sens) <= delta
    assert found.upper == found.noise.expected_loss(loss)
    assert found.source[0] <= eps and found.source[1] <= delta
    assert found.bound_source[0] >= eps and found.bound_source[1] >= delta
    assert 0 < found.lower <= found.upper
    assert found.gap <= cat_worst(loss) * (1 + 1e-9), (eps, delta, loss, found.gap)
    assert found.noise.metadata["sensitivity"] == sens  # what SecureSampler.from_noise reads


@pytest.mark.parametrize("loss", LOSSES)
def test_random_requests_get_certified_noise_and_a_bracket_within_the_worst_gap(cat, loss):
    rng = np.random.default_rng(17)
    (e0, e1), (d0, d1) = cat.epsilon_range, cat.delta_range
    for _ in range(100):
        eps = float(np.exp(rng.uniform(math.log(e0), math.log(e1))))
        delta = float(np.exp(rng.uniform(math.log(d0), math.log(d1))))
        sens = float(np.exp(rng.uniform(math.log(0.1), math.log(10.0))))
        _check(
            lookup(epsilon=eps, delta=delta, sensitivity=sens, loss=loss), eps, delta, sens, loss
        )


@pytest.mark.parametrize("loss", LOSSES)
def test_worst_case_requests_just_below_grid_points(cat, loss):
    """U from (ε_i, δ_j) against L from (ε_{i+1}, δ_{j+1}): the requests just below the upper corner
    of each grid cell, and the corners themselves; the measured worst gap is the one worst_gap
    reports."""
    worst = 0.0
    for i in range(cat.epsilons.size - 1):
        for j in range(cat.deltas.size - 1):
            eps, delta = cat.epsilons[i + 1] * (1 - 1e-12), cat.deltas[j + 1] * (1 - 1e-12)
            found = lookup(epsilon=eps, delta=delta, loss=loss)
            _check(found, eps, delta, 1.0, loss)
            # the best stored noise at or below (ε_i, δ_j): a neighbour's where it beats the point's
            src = (
                list(cat.epsilons).index(found.source[0]),
                list(cat.deltas).index(found.source[1]),
            )
            assert src[0] <= i and src[1] <= j
            assert cat.upper[loss][src] == cat.upper[loss][: i + 1, : j + 1].min()
            # found.upper is the noise's expected loss recomputed: its last bit depends on the
            # CPU's summation (1 ulp between the machine that built the catalog and an AMD EPYC)
            assert found.upper == pytest.approx(cat.upper[loss][src], rel=4 * 2.0**-52)
            worst = max(worst, found.gap)
    corner = lookup(epsilon=cat.epsilons[-1], delta=cat.deltas[-1], loss=loss)
    assert corner.source == corner.bound_source == (cat.epsilons[-1], cat.deltas[-1])
    # up to the last bits of the recomputed expected losses (above)
    assert worst <= cat.worst_gap(loss) * (1 + 1e-12)
    assert worst == pytest.approx(cat.worst_gap(loss), rel=1e-6)


def test_scaling_by_the_sensitivity_is_exact(cat):
    eps, delta = float(np.mean(cat.epsilon_range)), float(np.mean(cat.delta_range))
    for loss, k in (("l1", 1), ("l2", 2)):
        one = lookup(epsilon=eps, delta=delta, loss=loss)
        three = lookup(epsilon=eps, delta=delta, sensitivity=3.0, loss=loss)
        assert np.allclose(three.noise.edges, 3.0 * one.noise.edges, rtol=1e-15)
        assert three.upper == pytest.approx(3.0**k * one.upper, rel=1e-12)
        assert three.lower <= 3.0**k * one.lower and three.lower == pytest.approx(
            3.0**k * one.lower, rel=1e-15
        )


@pytest.mark.parametrize("sensitivity", [0.1, 1e-7, 0.3])
def test_the_corner_point_scaled_to_any_sensitivity_is_found_and_certified(cat, sensitivity):
    """At (ε, δ) = (0.05, 1e-10), whose only candidate is its own noise, the rounding of the edges
    scaled by Δf = 0.1 had pushed the certificate to 1.00004e-10 > δ: 'the catalog is corrupt'. The
    noise is then scaled onto the exact lattice, certified, and its bracket is the unit one's."""
    eps, delta = cat.epsilon_range[0], cat.delta_range[0]
    one = lookup(epsilon=eps, delta=delta, loss="l1")
    found = lookup(epsilon=eps, delta=delta, sensitivity=sensitivity, loss="l1")
    assert found.source == (eps, delta)
    assert dpdro.certify_delta(found.noise, eps, sensitivity) == found.certified_delta <= delta
    assert found.upper == pytest.approx(sensitivity * one.upper, rel=1e-9)
    assert found.lower <= found.upper and found.gap == pytest.approx(one.gap, rel=1e-6)


def test_lookup_takes_milliseconds(cat):
    lookup(epsilon=cat.epsilons[0], delta=cat.deltas[0])  # loads the file once
    times = []
    for loss in LOSSES:
        for eps in np.linspace(*cat.epsilon_range, 5):
            start = time.perf_counter()
            lookup(
                epsilon=float(eps),
                delta=float(np.mean(cat.delta_range)),
                sensitivity=2.5,
                loss=loss,
            )
            times.append(time.perf_counter() - start)
    assert np.median(times) < 0.1, times  # typically a few ms; generous for a loaded machine


def test_requests_outside_the_range_and_bad_input_are_refused(cat):
    (e0, e1), (d0, _) = cat.epsilon_range, cat.delta_range
    with pytest.raises(
        ValueError, match=rf"epsilon must lie in the catalog's range \[{e0!r}, {e1!r}\], got 10.5"
    ):
        lookup(epsilon=10.5, delta=d0)
    with pytest.raises(ValueError, match=r"delta must lie in the catalog's range .* got 0.2"):
        lookup(epsilon=e0, delta=0.2)
    with pytest.raises(ValueError, match=r"delta must lie in the catalog's range .* got 1e-11"):
        lookup(epsilon=e1, delta=1e-11)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 0"):
        lookup(epsilon=e0, delta=0)
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0, got -1"):
        lookup(epsilon=e0, delta=d0, sensitivity=-1)
    with pytest.raises(ValueError, match="loss must be 'l1' or 'l2', got 'pinball'"):
        lookup(epsilon=e0, delta=d0, loss="pinball")
    with pytest.raises(ValueError, match="catalog must be a 'dpdro-catalog' document of version 1"):
        Catalog({"format": "something else"})


def test_a_stored_noise_that_fails_to_certify_is_skipped_never_released(cat):
    """Corrupt the best candidate of a request: the lookup re-certifies, skips it and returns the
    next one; with every candidate corrupt it refuses."""
    doc = _doc()
    i, j = 1, 1
    eps, delta = float(cat.epsilons[i]), float(cat.deltas[j])
    bad = copy.deepcopy(doc)
    for e in bad["entries"]:
        if e["loss"] == "l1" and (e["i"], e["j"]) == (i, j):
            # squeezed tenfold: not private (a halved noise of ε/2 would be private at ε)
            e["noise"]["edges"] = [0.1 * x for x in e["noise"]["edges"]]
            e["noise"]["grid"] = e["noise"]["grid"] * 0.1
    found = Catalog(bad).lookup(epsilon=eps, delta=delta, loss="l1")
    assert found.source != (eps, delta) and found.certified_delta <= delta
    for e in bad["entries"]:
        if e["loss"] == "l1":
            e["noise"]["edges"] = [0.1 * x for x in e["noise"]["edges"]]
            e["noise"]["grid"] = e["noise"]["grid"] * 0.1
    with pytest.raises(ValueError, match="no stored noise re-certifies at epsilon"):
        Catalog(bad).lookup(epsilon=eps, delta=delta, loss="l1")


def test_summary_states_the_range_and_both_brackets(cat):
    text = cat.summary()
    assert text.startswith("catalog: epsilon in [0.05, 10] (")
    assert "delta in [1e-10, 0.1]" in text and "at a grid point: l1 " in text
    assert "between grid points: l1 " in text
    assert all(len(line) <= 80 for line in text.splitlines())
