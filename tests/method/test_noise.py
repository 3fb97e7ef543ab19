"""PiecewiseUniform: pdf, cdf, ppf, sampling, expected loss, scipy conversion, JSON round trip."""

import numpy as np
import pytest
from scipy import integrate, stats

import dpdro


@pytest.fixture
def noise():
    return dpdro.PiecewiseUniform(
        [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0],
        [0.1, 0.3, 0.0, 0.4, 0.2],
        grid=0.25,
        metadata={"note": "test"},
    )


def test_pdf_cdf_ppf(noise):
    x = np.linspace(-3, 4, 71)
    cdf_num = [
        integrate.quad(
            noise.pdf, -3, t, points=[p for p in noise.edges if -3 < p < t] or None, limit=100
        )[0]
        if t > -3
        else 0.0
        for t in x
    ]
    assert np.allclose(noise.cdf(x), cdf_num, atol=1e-10)
    u = np.linspace(0.0, 1.0, 101)
    assert np.allclose(noise.cdf(noise.ppf(u)), u, atol=1e-12)
    assert noise.ppf(0.0) == -2.0 and noise.ppf(1.0) == 3.0
    assert noise.pdf(0.1) == 0.0  # the empty cell
    assert noise.support == (-2.0, 3.0)


def test_sampling_matches_cdf(noise):
    draws = noise.sample(20000, rng=np.random.default_rng(1))
    assert stats.kstest(draws, noise.cdf).pvalue > 0.01
    assert noise.sample(rng=5) == noise.sample(rng=5)  # reproducible with a seed


def test_expected_loss_and_moments(noise):
    for loss in ("l1", "l2"):
        c = dpdro.make_loss(loss)
        ref = integrate.quad(
            lambda x, c=c: noise.pdf(x) * float(c(x)), -2, 3, points=[-0.5, 0, 0.25, 1], limit=200
        )[0]
        assert noise.expected_loss(loss) == pytest.approx(ref, rel=1e-9)
    m = integrate.quad(lambda x: x * noise.pdf(x), -2, 3, points=[-0.5, 0, 0.25, 1])[0]
    assert noise.mean == pytest.approx(m, rel=1e-9)
    assert noise.var == pytest.approx(noise.expected_loss("l2") - m**2, rel=1e-9)


def test_to_scipy(noise):
    rv = noise.to_scipy()
    x = np.linspace(-2.5, 3.5, 50)
    assert np.allclose(rv.cdf(x), noise.cdf(x), atol=1e-12)
    assert rv.mean() == pytest.approx(noise.mean)
    assert rv.std() == pytest.approx(noise.std)


def test_json_round_trip(noise):
    back = dpdro.PiecewiseUniform.from_json(noise.to_json())
    assert np.array_equal(back.edges, noise.edges) and np.array_equal(back.probs, noise.probs)
    assert back.grid == noise.grid and back.metadata == noise.metadata
    assert dpdro.certify_delta(back, 1.0, 0.5) == dpdro.certify_delta(noise, 1.0, 0.5)


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [('{"edges": [0, 1]}', ValueError, "missing \\['probs'\\]"), ("[1]", TypeError, "list"),
     ('{"probs": [1]}', ValueError, "missing \\['edges'\\]"),
     ("{", ValueError, "a noise must be JSON"), ("", ValueError, "a noise must be JSON")],
)
def test_from_json_names_what_is_missing(text, error, match):
    """Not a KeyError, 'list indices must be integers' or a bare JSONDecodeError from inside."""
    with pytest.raises(error, match=match):
        dpdro.PiecewiseUniform.from_json(text)


def test_solver_noise_round_trip():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2)
    ub = dpdro.upper_bound(prob, dpdro.Partition.uniform(8, 0.25))
    back = dpdro.PiecewiseUniform.from_json(ub.noise.to_json())
    assert np.array_equal(back.probs, ub.noise.probs)
    assert dpdro.certify_delta(back, 1.0, 1.0) <= 0.2
    assert back.metadata["epsilon"] == 1.0


@pytest.fixture
def with_atom():
    """0.3 at the point 0 and 0.7 spread over cells, one of which contains 0 in its interior."""
    return dpdro.PiecewiseUniform(
        [-1.0, -0.25, 0.5, 2.0], [0.2, 0.3, 0.2], atom=0.3, metadata={"a": 1}
    )


def test_atom_cdf_ppf_and_sampling(with_atom):
    n = with_atom
    assert n.cdf(-1e-12) == pytest.approx(0.2 + 0.3 * 0.25 / 0.75)
    assert n.cdf(0.0) - n.cdf(-1e-12) == pytest.approx(0.3)  # the jump of the atom
    assert n.cdf(5.0) == 1.0 and n.cdf(-5.0) == 0.0
    lo = float(n.cdf(-1e-15))
    u = np.array(
        [0.0, 0.1, lo - 1e-9, lo + 1e-9, lo + 0.15, lo + 0.3 - 1e-9, lo + 0.3 + 1e-6, 0.99, 1.0]
    )
    x = n.ppf(u)
    assert x[3] == 0.0 and x[4] == 0.0 and x[5] == 0.0 and x[2] < 0 < x[6]
    assert np.allclose(n.cdf(x[[1, 2, 6, 7]]), u[[1, 2, 6, 7]], atol=1e-9)
    assert x[0] == -1.0 and x[-1] == 2.0 and n.support == (-1.0, 2.0)
    draws = n.sample(40000, rng=np.random.default_rng(3))
    assert abs(np.mean(draws == 0.0) - 0.3) < 0.015
    cont = draws[draws != 0.0]
    # the cells' conditional cdf
    cond = lambda t: (n.cdf(t) - 0.3 * (np.asarray(t) >= 0)) / 0.7  # noqa: E731
    assert stats.kstest(cont, cond).pvalue > 0.01


def test_atom_loss_moments_and_round_trip(with_atom):
    n = with_atom
    for loss in ("l1", "l2"):
        c = dpdro.make_loss(loss)
        cells = integrate.quad(
            lambda x, c=c: n.pdf(x) * float(c(x)), -1, 2, points=[-0.25, 0, 0.5], limit=200
        )[0]
        assert n.expected_loss(loss) == pytest.approx(
            cells + 0.3 * float(c(np.array([0.0]))[0]), rel=1e-9
        )
    assert n.mean == pytest.approx(
        integrate.quad(lambda x: x * n.pdf(x), -1, 2, points=[-0.25, 0.5])[0], rel=1e-9
    )
    assert n.var == pytest.approx(n.expected_loss("l2") - n.mean**2, rel=1e-9)
    back = dpdro.PiecewiseUniform.from_json(n.to_json())
    assert (
        back.atom == n.atom and np.array_equal(back.probs, n.probs) and back.metadata == n.metadata
    )
    # old files stay unchanged
    assert "atom" not in dpdro.PiecewiseUniform([0.0, 1.0], [1.0]).to_dict()
    with pytest.raises(ValueError, match="atom of mass 0.3"):
        n.to_scipy()
    assert "atom 0.3 at 0" in repr(n)


def test_atom_validation():
    with pytest.raises(ValueError, match=r"atom must lie in \[0, 1\)"):
        dpdro.PiecewiseUniform([0.0, 1.0], [0.0], atom=1.0)
    with pytest.raises(ValueError, match="atom must lie"):
        dpdro.PiecewiseUniform([0.0, 1.0], [1.0], atom=-0.1)
    with pytest.raises(ValueError, match="probs must sum to 1 - atom"):
        dpdro.PiecewiseUniform([0.0, 1.0], [1.0], atom=0.2)


def test_cell_averages_in_growing_blocks_equal_one_call_and_stop_at_the_budget():
    """dpdro.noise.cell_averages with a budget: blocks of 1024 cells, doubled after a fast one,
    give the values of one vectorised call exactly (every average is computed on its own), for a
    fast built-in loss and a slow point-by-point callable; an expired budget raises TimeoutError
    before any block."""
    from dpdro._budget import TimeBudget
    from dpdro.noise import cell_averages

    edges = np.linspace(-50.0, 50.0, 100_001)
    lo, hi = edges[:-1], edges[1:]
    for loss in (dpdro.Pinball(tau=0.8), dpdro.make_loss(lambda x: min(abs(x), 3.0))):
        n = 100_000 if isinstance(loss, dpdro.Pinball) else 5_000
        whole = loss.cell_average(lo[:n], hi[:n])
        assert np.array_equal(cell_averages(loss, lo[:n], hi[:n], TimeBudget(60.0)), whole)
    with pytest.raises(TimeoutError):
        cell_averages(dpdro.Pinball(tau=0.8), lo, hi, TimeBudget(1e-9))


@pytest.mark.parametrize("grid", [0.0, -0.5, float("inf"), float("nan")])
def test_a_grid_that_is_not_positive_is_one_clear_error_without_warnings(grid):
    """grid = 0 had divided the edges by zero first: a numpy RuntimeWarning on stderr (two more
    lines after `dpdro certify`'s one-line error)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"grid = .* must be > 0 with every edge an integer"):
            dpdro.PiecewiseUniform([0.0, 1.0], [1.0], grid=grid)


def test_messages_show_plain_numbers_not_numpy_reprs():
    with pytest.raises(ValueError, match=r"got 1\.5$"):
        dpdro.PiecewiseUniform([0.0, 1.0, 2.0], [1.0, 0.5])
    with pytest.raises(ValueError, match=r"got minimum -0\.5$"):
        dpdro.PiecewiseUniform([0.0, 1.0, 2.0], [1.5, -0.5])


@pytest.mark.parametrize(
    ("size", "error", "match"),
    [(-1, ValueError, r"size must be an integer >= 0, got -1"),
     (2.5, TypeError, r"size must be an integer >= 0, got 2\.5"),
     ((2, -1), ValueError, r"size\[1\] must be an integer >= 0, got -1")],
)
def test_a_bad_sample_size_names_the_parameter(noise, size, error, match):
    """numpy's own message had been 'negative dimensions are not allowed'; the secure sampler
    checks its ``size`` the same way."""
    with pytest.raises(error, match=match):
        noise.sample(size)
    meta = dict(epsilon=5.0, delta=0.9, sensitivity=0.01)
    sampler = dpdro.SecureSampler.from_noise(dpdro.PiecewiseUniform(
        noise.edges, noise.probs, grid=noise.grid, metadata=meta))
    with pytest.raises(error, match=match):
        sampler.release(1.0, size)
    assert noise.sample((2, 3), rng=0).shape == sampler.release(1.0, (2, 3)).shape == (2, 3)
