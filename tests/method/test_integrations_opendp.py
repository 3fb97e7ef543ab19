"""make_certified_noise inside real OpenDP chains (no mocks)."""

import opendp.prelude as dp
import pytest

import dpdro
from dpdro.integrations.opendp import make_certified_noise, then_certified_noise
from dpdro.sampling import SecureSampler


@pytest.fixture(autouse=True)
def features():
    dp.enable_features("contrib", "honest-but-curious")
    yield
    dp.enable_features("contrib", "honest-but-curious")


def count_chain(upper=1):
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    return dp.t.make_clamp(*space, bounds=(0, upper)) >> dp.t.then_sum()


def test_requires_the_documented_feature_flags(noise_l2):
    pre = count_chain()
    dp.disable_features("honest-but-curious")
    with pytest.raises(Exception, match="honest-but-curious"):
        make_certified_noise(
            pre.output_domain, pre.output_metric, noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0
        )


def test_integer_count_chain_privacy_map_is_the_certificate(noise_l2):
    pre = count_chain()
    meas = pre >> make_certified_noise(
        pre.output_domain,
        pre.output_metric,
        noise_l2,
        epsilon=1.0,
        delta=0.05,
        sensitivity=1.0,
        rng=1,
    )
    certified = dpdro.certify_delta(noise_l2, 1.0, 1.0)
    assert meas.map(1) == (1.0, certified)
    assert meas.check(1, (1.0, 0.05))
    assert meas.map(2) == (
        1.0,
        dpdro.certify_delta(noise_l2, 1.0, 2.0),
    )  # two records: certified at Δf = 2
    assert not meas.check(2, (1.0, 0.05))
    release = meas([0, 1, 1, 1, 0, 5, -3])  # clamped to {0, 1}: the sum is 4
    assert isinstance(release, float) and abs(release - 4) < 3.0
    assert release / 2.0**-24 == round(release / 2.0**-24)


def test_float_chain_reports_the_rounding_slack_of_float_sums(noise_l2):
    """OpenDP's float sum has sensitivity 1 + ~9e-9 (its rounding allowance); the map certifies the
    noise there, so a noise designed tight at Δf = 1 does not pass check(1, (1, 0.05)): a true
    statement."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    pre = dp.t.make_clamp(*space, bounds=(0.0, 1.0)) >> dp.t.then_sum()
    meas = pre >> make_certified_noise(
        pre.output_domain, pre.output_metric, noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0
    )
    slack = pre.map(1)
    assert slack > 1.0
    eps, delta = meas.map(1)
    assert eps == 1.0 and delta == dpdro.certify_delta(noise_l2, 1.0, slack) > 0.05
    assert not meas.check(1, (1.0, 0.05))
    assert meas.check(1, (1.0, 0.0501))
    assert isinstance(meas([0.2, 0.7, 1.5]), float)


def test_composition_in_opendp(noise_l2):
    pre = count_chain()
    meas = pre >> make_certified_noise(
        pre.output_domain, pre.output_metric, noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0
    )
    both = dp.c.make_composition([meas, meas])
    eps, delta = both.map(1)
    assert eps == pytest.approx(2.0) and delta == pytest.approx(2 * meas.map(1)[1])
    assert len(both([1, 0, 1])) == 2


def test_release_law_through_the_chain_matches_the_exact_law(noise_l2, chi_square_pvalue):
    pre = count_chain(upper=3)
    noise3 = dpdro.PiecewiseUniform(
        noise_l2.edges * 4, noise_l2.probs, grid=0.25
    )  # scaled to Δf = 4 ≥ 3
    meas = pre >> make_certified_noise(
        pre.output_domain,
        pre.output_metric,
        noise3,
        epsilon=1.0,
        delta=0.05,
        sensitivity=4.0,
        resolution=1.0,
        rng=9,
    )
    draws = [meas([3, 3, 1]) for _ in range(5_000)]
    pmf = SecureSampler(
        noise3, epsilon=1.0, delta=0.05, sensitivity=4.0, resolution=1.0
    ).release_pmf(7)
    assert chi_square_pvalue(draws, pmf) > 1e-3


def test_rejects_bad_spaces(noise_l2):
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0)
    with pytest.raises(ValueError, match="input_domain must be a scalar opendp atom_domain"):
        make_certified_noise(
            dp.vector_domain(dp.atom_domain(T=float)), dp.symmetric_distance(), noise_l2, **kw
        )
    with pytest.raises(ValueError, match="input_domain must exclude NaN"):
        make_certified_noise(dp.atom_domain(T=float), dp.absolute_distance(T=float), noise_l2, **kw)
    with pytest.raises(ValueError, match="input_metric must be an opendp absolute_distance"):
        make_certified_noise(dp.atom_domain(T=int), dp.discrete_distance(), noise_l2, **kw)
    with pytest.raises(ValueError, match=r"certify_delta gives .* > delta = 0.001"):
        make_certified_noise(
            dp.atom_domain(T=int),
            dp.absolute_distance(T=int),
            noise_l2,
            epsilon=1.0,
            delta=1e-3,
            sensitivity=1.0,
        )
    meas = make_certified_noise(dp.atom_domain(T=int), dp.absolute_distance(T=int), noise_l2, **kw)
    with pytest.raises(Exception, match="d_in must be finite and >= 0, got -1"):
        meas.map(-1)


def test_then_route_takes_the_space_from_the_chain(noise_l2):
    """``pre >> then_certified_noise(noise)``: OpenDP's partial-constructor convention; the same
    measurement as the make_ route (same map, same seeded releases)."""
    pre = count_chain()
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0)
    then = pre >> then_certified_noise(noise_l2, rng=4, **kw)
    make = pre >> make_certified_noise(pre.output_domain, pre.output_metric, noise_l2, rng=4, **kw)
    assert then.map(1) == make.map(1) == (1.0, dpdro.certify_delta(noise_l2, 1.0, 1.0))
    assert [then([1, 1, 0]) for _ in range(5)] == [make([1, 1, 0]) for _ in range(5)]


def test_guarantee_defaults_to_what_the_design_records():
    res = dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=1e-3, loss="l2"))
    meas = count_chain() >> then_certified_noise(res.noise)
    assert meas.map(1) == (1.0, dpdro.certify_delta(res.noise, 1.0, 1.0))
    bare = dpdro.PiecewiseUniform(
        res.noise.edges, res.noise.probs, grid=res.noise.grid, atom=res.noise.atom
    )
    with pytest.raises(
        ValueError, match="noise.metadata must record epsilon, delta and sensitivity"
    ):
        count_chain() >> then_certified_noise(bare)


def test_context_api_route_charges_the_compositor(noise_l2):
    """``dp.register(make_certified_noise)`` puts ``.certified_noise(...)`` in OpenDP's Context API:
    the compositor admits a release whose certified δ fits the per-query budget, and refuses one
    that does not (its δ is above the share left)."""
    try:
        dp.register(make_certified_noise)
    except ValueError:  # registered earlier in this process (OpenDP's registry is global)
        pass
    context = dp.Context.compositor(
        data=[1, 0, 1, 1, 7],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=2.0, delta=0.1),
        split_evenly_over=2,
    )
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0, rng=2)
    release = context.query().clamp((0, 1)).sum().certified_noise(noise_l2, **kw).release()
    assert isinstance(release, float) and abs(release - 4) < 3
    assert isinstance(
        context.query().clamp((0, 1)).sum().certified_noise(noise_l2, **kw).release(), float
    )
    with pytest.raises(ValueError, match="exhausted"):
        context.query().clamp((0, 1)).sum().certified_noise(noise_l2, **kw).release()
    tight = dp.Context.compositor(
        data=[1, 0],
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=dp.loss_of(epsilon=2.0, delta=0.05),
        split_evenly_over=2,
    )
    with pytest.raises(dp.OpenDPException, match=r"insufficient budget for query: \(1.0, 0.04999"):
        tight.query().clamp((0, 1)).sum().certified_noise(noise_l2, **kw).release()
