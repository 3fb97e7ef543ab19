"""The dominating pair and its dp_accounting PLD: dominance over every shift, tightness, composition."""

import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from hypothesis import given, settings
from hypothesis import strategies as st

import dpdro
from dpdro.composition import dominating_pair, epsilon_for_composition, privacy_loss_distribution
from dpdro.mechanisms import Tulap

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
    pair = {i: (g[i - s] if 0 <= i - s < n else 0, g[i] if 0 <= i < n else 0) for i in range(min(0, s), max(n, n + s))}
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
    return pld_lib.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=pessimistic)


@pytest.fixture(scope="module")
def comb():
    """Masses 3, 1, 3, 1, … on cells of width h = ½ and Δf = 1: the worst shift is h, not Δf."""
    g = np.array([3, 1, 3, 1, 3, 1, 3, 1, 3], float)
    return dpdro.PiecewiseUniform(np.arange(-4, 6) / 2, g / g.sum(), grid=0.5)


# ------------------------------------------------------------------------------------------ k = 1
@pytest.mark.parametrize("fixture", ["noise_l2", "noise_small_delta", "noise_atom", "noise_decimal_grid"])
def test_single_release_dominates_and_matches_the_certificate(request, fixture):
    noise = request.getfixturevalue(fixture)
    pair = dominating_pair(noise, 1.0)
    pld = pair.to_pld()
    for eps in EPSILONS:
        h_pair = pair.hockey_stick(eps)
        if eps > 0:
            profile = dpdro.privacy_profile(noise, eps, 1.0)
            lower = float(np.max(profile.deltas - profile.error_bound))  # the true δ(ε) is at least this
            assert h_pair >= lower - 1e-16
            assert h_pair <= dpdro.certify_delta(noise, eps, 1.0) + 1e-12  # tight, not just valid
        d_pld = pld.get_delta_for_epsilon(eps)
        assert d_pld >= h_pair * (1 - 1e-12)  # pessimistic rounding of the library's PLD
        assert d_pld <= pair.hockey_stick(eps - 1e-4) + 1e-12  # losses move up by at most one grid step


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
        theirs = np.asarray(shift_pld(shift_pair(g, atom, s), pessimistic=False).get_delta_for_epsilon(eps))
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
    """Grid 0.3 and Δf = 0.9: as binary fractions 3 × 0.3 < 0.9, so Lemma 3's shift slack ζ > 0 is used;
    the pair still dominates the certified profile and stays within 1e-12 of it."""
    weights = np.exp(-np.abs(np.arange(-20, 20) + 0.5) / 4.0)
    noise = dpdro.PiecewiseUniform(np.arange(-20, 21) * 0.3, weights / weights.sum(), grid=0.3)
    assert 3 * Fraction(0.3) < Fraction(0.9)
    pair = dominating_pair(noise, 0.9)
    for eps in (0.2, 0.5, 1.0):
        profile = dpdro.privacy_profile(noise, eps, 0.9)
        assert pair.hockey_stick(eps) >= float(np.max(profile.deltas - profile.error_bound))
        assert pair.hockey_stick(eps) == pytest.approx(dpdro.certify_delta(noise, eps, 0.9), abs=1e-12)


# ------------------------------------------------------------------------------------------ composition
def test_laplace_like_noise_composes_like_laplace():
    """Laplace(1) discretised on (1/8)ℤ and truncated at ±40 composes within 0.5% of dp_accounting's
    Laplace PLD (the flat central cells make it marginally more private at large k)."""
    h, half = 1 / 8, 40.0
    left = np.arange(0.0, half, h)
    right = 0.5 * (np.exp(-left) - np.exp(-(left + h)))
    noise = dpdro.PiecewiseUniform(np.arange(-half, half + h / 2, h),
                                   np.concatenate((right[::-1], right)) / (2 * right.sum()), grid=h)
    laplace = pld_lib.from_laplace_mechanism(1.0, sensitivity=1.0)
    for k in (1, 10, 100):
        ours = epsilon_for_composition(noise, 1.0, k, 1e-6)
        reference = (laplace.self_compose(k) if k > 1 else laplace).get_epsilon_for_delta(1e-6)
        assert ours == pytest.approx(reference, rel=5e-3)
    assert epsilon_for_composition(noise, 1.0, 1, 1e-6) <= 1.0 + 2e-4  # pure ε = 1 up to the truncation


def test_composition_of_optimised_noise(noise_small_delta):
    """k = 1 recovers the design ε (up to one grid step of the PLD); ε grows with k and, once δ
    covers the infinite-loss mass (about 8.5e-7 per release), falls below k·ε."""
    one = epsilon_for_composition(noise_small_delta, 1.0, 1, 1.5e-6)
    assert 0.99 < one <= 1.0 + 2e-4
    eps = [epsilon_for_composition(noise_small_delta, 1.0, k, 1e-4) for k in (2, 5, 20)]
    assert eps[0] < eps[1] < eps[2] < 20.0
    assert math.isinf(epsilon_for_composition(noise_small_delta, 1.0, 20, 1e-5))  # 20 × 8.5e-7 > 1e-5


def test_rejects_bad_input(noise_l2):
    tulap = Tulap(epsilon=1.0, delta=1e-3).to_piecewise_uniform()
    with pytest.raises(ValueError, match="noise must have its edges on a lattice hℤ with h dividing the sensitivity"):
        dominating_pair(tulap, 1.0)
    with pytest.raises(TypeError, match="noise must be a dpdro.PiecewiseUniform"):
        dominating_pair([1.0], 1.0)
    with pytest.raises(ValueError, match="sensitivity must be finite and > 0, got 0"):
        dominating_pair(noise_l2, 0)
    with pytest.raises(ValueError, match=r"k must be a positive integer \(>= 1\), got 0"):
        epsilon_for_composition(noise_l2, 1.0, 0, 1e-6)
    with pytest.raises(TypeError, match=r"k must be a positive integer \(>= 1\), got 2.5 of type float"):
        epsilon_for_composition(noise_l2, 1.0, 2.5, 1e-6)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 0"):
        epsilon_for_composition(noise_l2, 1.0, 2, 0)
    with pytest.raises(ValueError, match="value_discretization_interval must be finite and > 0"):
        privacy_loss_distribution(noise_l2, 1.0, value_discretization_interval=-1e-4)


@settings(max_examples=30, deadline=None)
@given(masses=st.lists(st.integers(0, 20), min_size=2, max_size=9).filter(lambda m: sum(m) > 0),
       k=st.integers(1, 3), atom=st.sampled_from([0.0, 0.25]), eps=st.floats(-1.0, 3.0))
def test_property_pair_is_the_exact_envelope_of_all_shifts(masses, k, atom, eps):
    """Random lattice noises: H(P*‖Q*) equals the maximum over all lattice shifts, in exact rationals."""
    m = np.array(masses, float)
    noise = dpdro.PiecewiseUniform(np.arange(len(m) + 1) - len(m) // 2, (1 - atom) * m / m.sum(), grid=1.0, atom=atom)
    pair = dominating_pair(noise, float(k))
    g, a, _ = lattice_masses(noise)
    envelope = max(exact_hockey_stick(shift_pair(g, a, s), eps) for s in range(-k, k + 1) if s or a)
    assert pair.hockey_stick(eps) == pytest.approx(float(envelope), rel=1e-13, abs=1e-15)
    assert pair.infinity_mass + sum(pair.p) == 1
    assert sum(pair.q) <= 1
