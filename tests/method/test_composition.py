"""The dominating pair and its dp_accounting PLD: dominance over every shift, tightness,
composition."""

import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st

import dpdro
from dpdro.composition import (
    aligned_interval,
    design_for_releases,
    dominating_pair,
    epsilon_for_composition,
    privacy_loss_distribution,
)
from dpdro.mechanisms import AnalyticGaussian, Tulap

EPSILONS = [-0.5, 0.0, 0.1, 0.5, 1.0, 2.0, 4.0]


def lattice_masses(noise):
    """Exact lattice-cell masses g (Fractions) and the lattice step, independent of the module."""
    h = noise.grid
    ticks = [round(e / h) for e in noise.edges]
    probs = [Fraction(float(p)) for p in noise.probs]
    total = sum(probs)
    atom = Fraction(noise.atom)
    g = []
    for j, p in enumerate(probs):
        w = ticks[j + 1] - ticks[j]
        g += [(1 - atom) * p / total / w] * w
    return g, atom, round(1.0 / h)


def shift_pair(g, atom, s):
    """Lemma 1's discrete pair for X + s·h against X: {outcome: (P-mass, Q-mass)}."""
    n = len(g)
    pair = {
        i: (g[i - s] if 0 <= i - s < n else 0, g[i] if 0 <= i < n else 0)
        for i in range(min(0, s), max(n, n + s))
    }
    if atom:
        pair["atom of X + sh"], pair["atom of X"] = (atom, 0), (0, atom)
    return pair


def exact_hockey_stick(pair, epsilon):
    gamma = Fraction(math.exp(epsilon))
    return sum(p - gamma * q for p, q in pair.values() if p > gamma * q)


def shift_pld(pair, pessimistic):
    """dp_accounting's own PLD of one shift pair (upper = P = X + sh, lower = Q = X)."""
    upper = {o: math.log(p) for o, (p, q) in pair.items() if p}
    lower = {o: math.log(q) for o, (p, q) in pair.items() if q}
    return pld_lib.from_two_probability_mass_functions(
        lower, upper, pessimistic_estimate=pessimistic
    )


@pytest.fixture(scope="module")
def comb():
    """Masses 3, 1, 3, 1, … on cells of width h = ½ and Δf = 1: the worst shift is h, not Δf."""
    g = np.array([3, 1, 3, 1, 3, 1, 3, 1, 3], float)
    return dpdro.PiecewiseUniform(np.arange(-4, 6) / 2, g / g.sum(), grid=0.5)


# ------------------------------------------------------------------------------------------ k = 1
@pytest.mark.parametrize(
    "fixture", ["noise_l2", "noise_small_delta", "noise_atom", "noise_decimal_grid"]
)
def test_single_release_dominates_and_matches_the_certificate(request, fixture):
    noise = request.getfixturevalue(fixture)
    pair = dominating_pair(noise, 1.0)
    pld = pair.to_pld()
    for eps in EPSILONS:
        h_pair = pair.hockey_stick(eps)
        if eps > 0:
            profile = dpdro.privacy_profile(noise, eps, 1.0)
            lower = float(
                np.max(profile.deltas - profile.error_bound)
            )  # the true δ(ε) is at least this
            assert h_pair >= lower - 1e-16
            assert h_pair <= dpdro.certify_delta(noise, eps, 1.0) + 1e-12  # tight, not just valid
        d_pld = pld.get_delta_for_epsilon(eps)
        assert d_pld >= h_pair * (1 - 1e-12)  # pessimistic rounding of the library's PLD
        assert (
            d_pld <= pair.hockey_stick(eps - 1e-4) + 1e-12
        )  # losses move up by at most one grid step


@pytest.mark.parametrize("fixture", ["noise_l2", "noise_atom"])
def test_dominates_every_lattice_shift_pld(request, fixture):
    """Against dp_accounting's own PLD of each lattice shift, both signs (optimistic, i.e. a lower
    estimate of that shift), at several ε: the dominating PLD is never below."""
    noise = request.getfixturevalue(fixture)
    ours = privacy_loss_distribution(noise, 1.0)
    g, atom, k = lattice_masses(noise)
    eps = np.array([0.0, 0.2, 0.5, 1.0, 2.0, 5.0])
    ours_delta = np.asarray(ours.get_delta_for_epsilon(eps))
    worst = np.zeros_like(eps)
    for s in range(-k, k + 1):
        if s == 0 and not atom:
            continue
        theirs = np.asarray(
            shift_pld(shift_pair(g, atom, s), pessimistic=False).get_delta_for_epsilon(eps)
        )
        assert np.all(ours_delta >= theirs - 1e-15), s
        worst = np.maximum(worst, theirs)
    assert np.allclose(ours_delta, worst, rtol=2e-3, atol=1e-12)  # and the envelope is attained


def test_worst_shift_not_delta_f_is_handled(comb):
    """For the comb the pair (X + Δf, X) alone understates δ; the dominating PLD does not."""
    profile = dpdro.privacy_profile(comb, 0.5, 1.0)
    assert abs(profile.worst_phi) == 0.5
    g, atom, k = lattice_masses(comb)
    only_delta_f = shift_pld(shift_pair(g, atom, k), pessimistic=True)
    ours = privacy_loss_distribution(comb, 1.0)
    for eps in (0.25, 0.5, 1.0):
        certified = dpdro.certify_delta(comb, eps, 1.0)
        assert only_delta_f.get_delta_for_epsilon(eps) < 0.99 * certified
        assert ours.get_delta_for_epsilon(eps) >= certified - 1e-12
    two = ours.self_compose(2).get_delta_for_epsilon(1.0)
    assert two > only_delta_f.self_compose(2).get_delta_for_epsilon(1.0) + 0.05


def test_float_lattice_falling_short_of_the_sensitivity():
    """Grid 0.3 and Δf = 0.9: as binary fractions 3 × 0.3 < 0.9, so Lemma 3's shift slack ζ > 0 is
    used; the pair still dominates the certified profile and stays within 1e-12 of it."""
    weights = np.exp(-np.abs(np.arange(-20, 20) + 0.5) / 4.0)
    noise = dpdro.PiecewiseUniform(np.arange(-20, 21) * 0.3, weights / weights.sum(), grid=0.3)
    assert 3 * Fraction(0.3) < Fraction(0.9)
    pair = dominating_pair(noise, 0.9)
    for eps in (0.2, 0.5, 1.0):
        profile = dpdro.privacy_profile(noise, eps, 0.9)
        assert pair.hockey_stick(eps) >= float(np.max(profile.deltas - profile.error_bound))
        assert pair.hockey_stick(eps) == pytest.approx(
            dpdro.certify_delta(noise, eps, 0.9), abs=1e-12
        )


# -------------------------------------------------------------------------------------- composition
def test_laplace_like_noise_composes_like_laplace():
    """Laplace(1) discretised on (1/8)ℤ and truncated at ±40 composes within 0.5% of dp_accounting's
    Laplace PLD (the flat central cells make it marginally more private at large k)."""
    h, half = 1 / 8, 40.0
    left = np.arange(0.0, half, h)
    right = 0.5 * (np.exp(-left) - np.exp(-(left + h)))
    noise = dpdro.PiecewiseUniform(
        np.arange(-half, half + h / 2, h),
        np.concatenate((right[::-1], right)) / (2 * right.sum()),
        grid=h,
    )
    laplace = pld_lib.from_laplace_mechanism(1.0, sensitivity=1.0)
    for k in (1, 10, 100):
        ours = epsilon_for_composition(noise, 1.0, k, 1e-6)
        reference = (laplace.self_compose(k) if k > 1 else laplace).get_epsilon_for_delta(1e-6)
        assert ours == pytest.approx(reference, rel=5e-3)
    assert (
        epsilon_for_composition(noise, 1.0, 1, 1e-6) <= 1.0 + 2e-4
    )  # pure ε = 1 up to the truncation


def test_composition_of_optimised_noise(noise_small_delta):
    """k = 1 recovers the design ε (up to one grid step of the PLD); ε grows with k and, once δ
    covers the infinite-loss mass (about 8.5e-7 per release), falls below k·ε."""
    one = epsilon_for_composition(noise_small_delta, 1.0, 1, 1.5e-6)
    assert 0.99 < one <= 1.0 + 2e-4
    eps = [epsilon_for_composition(noise_small_delta, 1.0, k, 1e-4) for k in (2, 5, 20)]
    assert eps[0] < eps[1] < eps[2] < 20.0
    assert math.isinf(
        epsilon_for_composition(noise_small_delta, 1.0, 20, 1e-5)
    )  # 20 × 8.5e-7 > 1e-5


def test_rejects_bad_input(noise_l2):
    tulap = Tulap(epsilon=1.0, delta=1e-3).to_piecewise_uniform()
    with pytest.raises(
        ValueError,
        match="noise must have its edges on a lattice hℤ with h dividing the sensitivity",
    ):
        dominating_pair(tulap, 1.0)
    with pytest.raises(TypeError, match="noise must be a dpdro.PiecewiseUniform"):
        dominating_pair([1.0], 1.0)
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0, got 0"):
        dominating_pair(noise_l2, 0)
    with pytest.raises(ValueError, match=r"k must be a positive integer \(>= 1\), got 0"):
        epsilon_for_composition(noise_l2, 1.0, 0, 1e-6)
    with pytest.raises(
        TypeError, match=r"k must be a positive integer \(>= 1\), got 2.5 of type float"
    ):
        epsilon_for_composition(noise_l2, 1.0, 2.5, 1e-6)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 0"):
        epsilon_for_composition(noise_l2, 1.0, 2, 0)
    with pytest.raises(ValueError, match="value_discretization_interval must be finite and > 0"):
        privacy_loss_distribution(noise_l2, 1.0, value_discretization_interval=-1e-4)


@settings(max_examples=30, deadline=None)
@given(
    masses=st.lists(st.integers(0, 20), min_size=2, max_size=9).filter(lambda m: sum(m) > 0),
    k=st.integers(1, 3),
    atom=st.sampled_from([0.0, 0.25]),
    eps=st.floats(-1.0, 3.0),
)
def test_property_pair_is_the_exact_envelope_of_all_shifts(masses, k, atom, eps):
    """Random lattice noises: H(P*‖Q*) equals the maximum over all lattice shifts, in exact
    rationals."""
    m = np.array(masses, float)
    noise = dpdro.PiecewiseUniform(
        np.arange(len(m) + 1) - len(m) // 2, (1 - atom) * m / m.sum(), grid=1.0, atom=atom
    )
    pair = dominating_pair(noise, float(k))
    g, a, _ = lattice_masses(noise)
    envelope = max(exact_hockey_stick(shift_pair(g, a, s), eps) for s in range(-k, k + 1) if s or a)
    assert pair.hockey_stick(eps) == pytest.approx(float(envelope), rel=1e-13, abs=1e-15)
    assert pair.infinity_mass + sum(pair.p) == 1
    assert sum(pair.q) <= 1


@settings(max_examples=20, deadline=None)
@given(
    widths=st.lists(st.integers(1, 24), min_size=1, max_size=4),
    masses=st.lists(st.integers(1, 20), min_size=4, max_size=4),
    atom=st.sampled_from([0.0, 0.25]),
    eps=st.floats(-1.0, 3.0),
)
def test_property_few_edges_on_a_fine_lattice_need_only_their_differences(
    widths, masses, atom, eps
):
    """Few cells on the lattice Δf/8: the pair is built from the shifts at differences of edges
    (fewer than the 17 lattice shifts) and still equals the envelope of all of them, exactly."""
    m = np.array(masses[: len(widths)], float)
    ticks = np.concatenate(([0], np.cumsum(widths))) - sum(widths) // 2
    noise = dpdro.PiecewiseUniform(ticks / 8, (1 - atom) * m / m.sum(), grid=0.125, atom=atom)
    pair = dominating_pair(noise, 1.0)
    g, a, _ = lattice_masses(noise)
    envelope = max(exact_hockey_stick(shift_pair(g, a, s), eps) for s in range(-8, 9) if s or a)
    assert pair.hockey_stick(eps) == pytest.approx(float(envelope), rel=1e-13, abs=1e-15)


# ----------------------------------------------------------------------------------- discretisation
@pytest.fixture(scope="module")
def designed():
    """The default designs at (ε, δ) = (1, 1e-6), ℓ1 and ℓ2: most of their mass has privacy loss
    ε."""
    return {
        loss: dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=1e-6, loss=loss)).noise
        for loss in ("l1", "l2")
    }


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_single_release_reports_its_certified_delta(designed, loss):
    """Issue 28: one release of a noise certified at (1, 1e-6) must report δ(1) within 1% of its
    certificate. The PLD (default interval 1e-4, on which ε = 1 lies) reports it to 1e-6
    relative."""
    noise = designed[loss]
    certified = dpdro.certify_delta(noise, 1.0, 1.0)
    pair = dominating_pair(noise, 1.0)
    reported = privacy_loss_distribution(noise, 1.0).get_delta_for_epsilon(1.0)
    assert pair.hockey_stick(1.0) * (1 - 1e-12) <= reported <= certified * (1 + 1e-6)
    assert epsilon_for_composition(noise, 1.0, 1, certified * (1 + 1e-9)) <= 1.0 + 1e-12


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_the_cause_rounding_losses_up_moves_the_mass_at_epsilon(designed, loss):
    """The old discretisation rounded every loss up to the grid: the mass at loss ε (71% here) moved
    to ε + s and added about s·P(loss = ε) to δ(ε): 7e-5 for a noise certified at 1e-6."""
    noise = designed[loss]
    pair = dominating_pair(noise, 1.0)
    step = 1e-4
    at_eps = sum(
        float(p) for p, q in zip(pair.p, pair.q, strict=False) if abs(math.log(p / q) - 1.0) < 1e-12
    )
    assert at_eps > 0.5
    buckets = {}
    for p, q in zip(pair.p, pair.q, strict=False):
        i = math.ceil((math.log(p / q) + 1e-15) / step)
        buckets[i] = buckets.get(i, 0.0) + float(p)
    rounded_up = pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        buckets, float(pair.infinity_mass), step
    )
    excess = rounded_up.get_delta_for_epsilon(1.0) - float(pair.infinity_mass)
    assert excess == pytest.approx(at_eps * -math.expm1(-step), rel=0.01)
    assert rounded_up.get_delta_for_epsilon(1.0) > 50 * dpdro.certify_delta(noise, 1.0, 1.0)


def test_off_grid_epsilon_is_exact_with_an_aligned_interval(noise_small_delta):
    """ε = 0.7305 is not a multiple of 1e-4 in binary; aligned_interval puts it on the grid, where
    the PLD equals the pair's hockey-stick divergence."""
    eps = 0.7305
    step = aligned_interval(eps)
    assert step <= 1e-4 and round(eps / step) * step == pytest.approx(eps, rel=1e-15)
    pair = dominating_pair(noise_small_delta, 1.0)
    exact = pair.hockey_stick(eps)
    aligned = privacy_loss_distribution(noise_small_delta, 1.0, value_discretization_interval=step)
    assert aligned.get_delta_for_epsilon(eps) == pytest.approx(exact, rel=1e-9)
    assert (
        privacy_loss_distribution(
            noise_small_delta, 1.0, value_discretization_interval=3e-3
        ).get_delta_for_epsilon(eps)
        >= exact
    )


@settings(max_examples=30, deadline=None)
@given(
    masses=st.lists(st.integers(0, 20), min_size=2, max_size=9).filter(lambda m: sum(m) > 0),
    atom=st.sampled_from([0.0, 0.25]),
    step=st.sampled_from([0.05, 0.01, 1e-3]),
    m=st.integers(-20, 60),
    t=st.floats(0.0, 1.0),
)
def test_property_connect_the_dots_exact_on_the_grid_pessimistic_between(masses, atom, step, m, t):
    """Lemma 4: the PLD's δ equals H_{e^ε}(P*‖Q*) at grid points ε = m·s and is never below it."""
    w = np.array(masses, float)
    noise = dpdro.PiecewiseUniform(
        np.arange(len(w) + 1) - len(w) // 2, (1 - atom) * w / w.sum(), grid=1.0, atom=atom
    )
    pair = dominating_pair(noise, 1.0)
    pld = pair.to_pld(step)
    on_grid = m * step
    assert pld.get_delta_for_epsilon(on_grid) == pytest.approx(
        pair.hockey_stick(on_grid), rel=1e-9, abs=1e-14
    )
    between = (m + t) * step
    assert pld.get_delta_for_epsilon(between) >= pair.hockey_stick(between) - 1e-14


# ---------------------------------------------------------------------------- design for k releases
def test_design_for_one_release_is_the_single_release_optimum():
    d = design_for_releases(1, 1.0, 1e-6, loss="l2")
    assert d.mechanism == "optimal_noise" and d.best is d.noise
    assert (d.noise.epsilon, d.noise.delta) == (1.0, 1e-6) and len(d.history) == 1
    assert dpdro.certify_delta(d.noise.noise, 1.0, 1.0) <= 1e-6
    assert d.noise.composed_delta == pytest.approx(
        dpdro.certify_delta(d.noise.noise, 1.0, 1.0), rel=1e-6
    )
    assert d.ratio < 0.2  # one release: the optimal noise's E X^2 is a fraction of the Gaussian's


def test_design_for_ten_releases_at_a_small_budget_prefers_the_gaussian():
    """k = 10 at a total (1, 1e-5): the Gaussian composes like √k and wins (by about 41% for E X^2);
    both plans are certified, and the noise plan is at least as good as basic composition."""
    k, eps, delta = 10, 1.0, 1e-5
    d = design_for_releases(k, eps, delta, loss="l2", splits=(0.9,))
    assert d.mechanism == "analytic_gaussian" and d.best is d.gaussian and 1.3 < d.ratio < 1.5
    gauss = AnalyticGaussian(epsilon=eps, delta=delta, sensitivity=math.sqrt(k))
    assert d.gaussian.sigma == gauss.sigma and d.gaussian.composed_delta <= delta
    assert d.gaussian.expected_loss == pytest.approx(gauss.sigma**2)
    # dp_accounting's own Gaussian PLD composed k times agrees with the exact √k rule
    theirs = pld_lib.from_gaussian_mechanism(
        gauss.sigma, value_discretization_interval=1e-4
    ).self_compose(k)
    assert theirs.get_delta_for_epsilon(eps) == pytest.approx(delta, rel=0.01)
    plan = d.noise
    assert plan.epsilon >= eps / k and plan.delta == pytest.approx(0.9 * delta / k)
    assert dpdro.certify_delta(plan.noise, plan.epsilon, 1.0) <= plan.delta
    again = privacy_loss_distribution(plan.noise, 1.0).self_compose(k).get_delta_for_epsilon(eps)
    assert plan.composed_delta <= delta and again <= delta * (1 + 1e-9)
    assert plan.expected_loss == pytest.approx(plan.noise.expected_loss("l2"), rel=1e-12)


def test_design_for_ten_releases_at_a_large_budget_prefers_the_optimal_noise():
    d = design_for_releases(10, 10.0, 1e-5, sensitivity=2.0, loss="l1", splits=(0.9,))
    assert d.mechanism == "optimal_noise" and d.ratio < 1
    plan = d.noise
    assert dpdro.certify_delta(plan.noise, plan.epsilon, 2.0) <= plan.delta
    assert (
        privacy_loss_distribution(plan.noise, 2.0).self_compose(10).get_delta_for_epsilon(10.0)
        <= 1e-5
    )
    assert (
        d.gaussian.sigma
        == AnalyticGaussian(epsilon=10.0, delta=1e-5, sensitivity=2 * math.sqrt(10)).sigma
    )


def test_design_searches_beyond_basic_composition_when_it_pays():
    """At k = 20 and a total (4, 0.05) the composed ε of the basic-composition design is well below
    4: the search raises ε₀ above 4/20 until the composition uses the budget."""
    d = design_for_releases(20, 4.0, 0.05, loss="l2", splits=(0.3,))
    first, plan = d.history[0], d.noise
    assert first["epsilon0"] == pytest.approx(0.2) and first["composed_epsilon"] < 3.0
    assert plan.epsilon > 0.3 and plan.expected_loss < 0.5 * first["expected_loss"]
    assert plan.composed_delta <= 0.05
    assert all(h["feasible"] == (h["composed_delta"] <= 0.05) for h in d.history)


def test_splits_below_the_delta_range_leave_the_gaussian():
    """100 releases at δ = 1e-12: every per-release δ₀ = f·δ/100 is below optimal_noise's range,
    so the Gaussian is the plan (optimal_noise had been called at δ₀ = 5e-16 and failed inside)."""
    design = dpdro.composition.design_for_releases(100, 1.0, 1e-12, time_limit=1.0)
    assert design.mechanism == "analytic_gaussian" and design.noise is None
    assert all(not row["feasible"] and "below" in row["error"] for row in design.history)


def test_a_per_release_epsilon_below_the_range_leaves_the_gaussian():
    """1000 releases at ε = 0.05: basic composition's ε₀ = 5e-5 is below optimal_noise's range,
    recorded in the history (it would have taken minutes per design), and the Gaussian is the
    plan."""
    design = dpdro.composition.design_for_releases(1000, 0.05, 1e-3, time_limit=1.0)
    assert design.mechanism == "analytic_gaussian" and design.noise is None
    assert all(not row["feasible"] and "epsilon0" in row["error"] for row in design.history)
    # above the range too (2 releases at ε = 100 had raised optimal_noise's 'at most 10' for ε₀ =
    # 50, at ε = 1e6 an OverflowError from Problem)
    for epsilon in (100.0, 1e6):
        design = dpdro.composition.design_for_releases(2, epsilon, 1e-5, time_limit=1.0)
        assert design.mechanism == "analytic_gaussian"
        assert all("outside optimal_noise's range" in row["error"] for row in design.history)


def test_design_rejects_bad_input():
    with pytest.raises(ValueError, match=r"k must be a positive integer \(>= 1\), got 0"):
        design_for_releases(0, 1.0, 1e-5)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 1.5"):
        design_for_releases(2, 1.0, 1.5)
    with pytest.raises(
        ValueError,
        match=r"splits must be a non-empty sequence of numbers in \(0, 1\], got \(0.0,\)",
    ):
        design_for_releases(2, 1.0, 1e-5, splits=(0.0,))
    with pytest.raises(ValueError, match="loss must be 'l1', 'l2'"):
        design_for_releases(2, 1.0, 1e-5, loss="l3")
    with pytest.raises(ValueError, match="max_interval must be finite and > 0"):
        aligned_interval(1.0, max_interval=0)


def test_a_noise_without_a_lattice_is_recorded_not_released(monkeypatch):
    """If a design ever returned a noise without a lattice (no dominating pair), the search records
    why and releases the Gaussian plan instead of failing or releasing an unaccounted noise."""
    import dpdro.composition as comp

    tulap = Tulap(epsilon=0.5, delta=1e-6).to_piecewise_uniform()

    class Result:
        noise, gap = tulap, 0.0

    monkeypatch.setattr(comp, "optimal_noise", lambda *a, **k: Result())
    d = comp.design_for_releases(2, 1.0, 1e-5, splits=(0.5,))
    assert d.noise is None and d.mechanism == "analytic_gaussian" and d.ratio == math.inf
    assert d.history[0]["feasible"] is False and "lattice" in d.history[0]["error"]


def test_one_release_reports_its_certified_delta_at_the_default_interval():
    """The default interval is 1e-4 aligned with the ε the noise records (metadata), so one release
    reports its certified δ at that ε; at 1e-4 itself ε = 1.5771234 lies between grid points and
    the PLD had over-reported by 7.4e-4 (by 8 times at (1.7631234, 1.82e-6), ℓ2)."""
    eps, delta = 1.5771234, 0.0184
    noise = dpdro.optimal_noise(dpdro.Problem(epsilon=eps, delta=delta, loss="l1")).noise
    certified = dpdro.certify_delta(noise, eps, 1.0)
    reported = privacy_loss_distribution(noise, 1.0).get_delta_for_epsilon(eps)
    assert reported == pytest.approx(certified, rel=1e-9)
    assert epsilon_for_composition(noise, 1.0, 1, delta) <= eps
    unaligned = privacy_loss_distribution(noise, 1.0, value_discretization_interval=1e-4)
    assert unaligned.get_delta_for_epsilon(eps) > certified * (1 + 1e-4)  # what it was


def test_a_total_budget_met_at_epsilon_zero_is_designed_for():
    """δ = 0.9 over 3 releases: the composed ε of the first design is 0 (its log had raised 'math
    domain error'); the search then tries the whole ε once and stops, both plans certified."""
    k, eps, delta = 3, 0.1, 0.9
    d = design_for_releases(k, eps, delta, loss="l1", splits=(0.3,), time_limit=2.0)
    assert d.history[0]["composed_epsilon"] == 0.0 and len(d.history) == 2
    assert d.history[1]["epsilon0"] == eps  # the whole ε, exactly
    plan = d.noise
    assert dpdro.certify_delta(plan.noise, plan.epsilon, 1.0) <= plan.delta
    assert plan.composed_delta <= delta and d.gaussian.composed_delta <= delta


def test_one_release_at_the_largest_epsilon_is_designed():
    """k = 1 at ε = 10, the top of optimal_noise's range: ε₀ is ε itself (exp(log 10) exceeds 10,
    which had left only the Gaussian plan)."""
    d = design_for_releases(1, 10.0, 1e-6, loss="l1", time_limit=2.0)
    assert d.noise is not None and d.noise.epsilon == 10.0 and d.mechanism == "optimal_noise"
    assert dpdro.certify_delta(d.noise.noise, 10.0, 1.0) <= 1e-6
