"""certify_delta on closed-form cases, against exact rational arithmetic and a fine search over
φ."""

import math
import time
from fractions import Fraction

import numpy as np
import pytest

import dpdro
from dpdro.privacy import _breakpoint_profile, _edge_differences, privacy_profile


def exact_delta_fraction(edges, probs, eps_exp_lo, phis):
    """max over the given φ of ∫(p(y) − e^ε p(y − φ))_+ dy in exact rational arithmetic."""
    e = [Fraction(x) for x in edges]
    pr = [Fraction(x) for x in probs]
    total = sum(pr)
    dens = [q / total / (e[j + 1] - e[j]) for j, q in enumerate(pr)]

    def density(y):
        for j in range(len(dens)):
            if e[j] <= y < e[j + 1]:
                return dens[j]
        return Fraction(0)

    best = Fraction(0)
    ee = Fraction(eps_exp_lo)
    for phi in phis:
        phi = Fraction(phi)
        bps = sorted(set(e) | {x + phi for x in e})
        val = Fraction(0)
        for lo, hi in zip(bps[:-1], bps[1:], strict=False):
            mid = (lo + hi) / 2
            d = density(mid) - ee * density(mid - phi)
            if d > 0:
                val += d * (hi - lo)
        best = max(best, val)
    return best


def test_uniform_noise_closed_form():
    """Uniform noise on an interval of length W: δ(ε) = Δf/W for every ε > 0."""
    for W, sens in [(4.0, 1.0), (10.0, 2.5), (3.0, 0.75)]:
        noise = dpdro.PiecewiseUniform(np.linspace(-W / 2, W / 2, 9), np.full(8, 1 / 8))
        for eps in (0.1, 1.0, 5.0):
            d = dpdro.certify_delta(noise, eps, sens)
            assert sens / W <= d <= sens / W + 1e-13


def test_two_level_closed_form():
    """Density 0.8 on [0, 1) and 0.2 on [1, 2), Δf = 1. With δ(φ) = ∫(p(y) − e^ε p(y − φ))_+ dy:
    φ = +1 gives 0.8 (on [0, 1) nothing is shifted in) + (0.2 − 0.8e^ε)_+ = 0.8, and φ = −1 gives
    0.2 (on [1, 2)) + (0.8 − 0.2e^ε)_+; δ(φ) is affine in between, so δ = the larger one."""
    probs = [0.8, 0.2]
    noise = dpdro.PiecewiseUniform([0.0, 1.0, 2.0], probs)
    for eps in (0.5, 1.0, 2.0):
        ee = np.exp(eps)
        expected = max(0.8, 0.2 + max(0.8 - ee * 0.2, 0.0))
        d = dpdro.certify_delta(noise, eps, 1.0)
        assert expected <= d <= expected + 1e-13


@pytest.mark.parametrize("seed", range(4))
def test_lattice_certificate_matches_exact_rationals_and_fine_search(seed):
    rng = np.random.default_rng(seed)
    ticks = np.unique(np.concatenate(([-8, 9], rng.integers(-8, 10, size=6))))
    h = 0.125
    probs = rng.random(ticks.size - 1) ** 2
    probs /= probs.sum()
    noise = dpdro.PiecewiseUniform(ticks * h, probs, grid=h)
    eps, sens = 0.7, 0.5
    prof = privacy_profile(noise, eps, sens)
    assert prof.method == "lattice"
    exact = exact_delta_fraction(
        noise.edges, noise.probs, float(np.exp(eps)), [Fraction(int(s), 8) for s in range(-4, 5)]
    )
    d = prof.delta
    assert float(exact) <= d <= float(exact) + 1e-12
    # no shift off the lattice does better (Lemma A.3): a fine search over φ ∈ [−Δf, Δf]
    fine = exact_delta_fraction(
        noise.edges, noise.probs, float(np.exp(eps)), [Fraction(int(s), 56) for s in range(-28, 29)]
    )
    assert fine <= exact


@pytest.mark.parametrize("seed", range(3))
def test_a_lattice_reaching_beyond_the_sensitivity_needs_no_drift(seed):
    """k·h ≥ Δf (a step rounded up, as for a noise rescaled onto an exact lattice): the lattice
    shifts |s·h| ≤ k·h cover every |φ| ≤ Δf, so no drift is paid, and the certificate still bounds
    the exact δ over every breakpoint in [−Δf, Δf] (exact rationals); with Δf beyond k·h the
    shortfall is paid, exactly."""
    from dpdro.privacy import sensitivity_shortfall

    rng = np.random.default_rng(seed)
    ticks = np.unique(np.concatenate(([-8, 9], rng.integers(-8, 10, size=6))))
    h = 0.125 + 2.0**-43  # ticks·h exact, 4·h = 0.5 + 2^-41
    probs = rng.random(ticks.size - 1) ** 2
    noise = dpdro.PiecewiseUniform(ticks * h, probs / probs.sum(), grid=h)
    eps, sens = 0.7, 0.5
    assert sensitivity_shortfall(sens, 4, h) == 0.0
    assert 2.0**-41 <= sensitivity_shortfall(0.5 + 2.0**-40, 4, h) <= 2.0**-41 * (1 + 1e-15)
    prof = privacy_profile(noise, eps, sens)
    assert prof.method == "lattice"
    e = [Fraction(float(x)) for x in noise.edges]
    phis = {d for a in e for d in (a - b for b in e) if abs(d) <= Fraction(sens)} | {
        Fraction(sens), -Fraction(sens)}
    exact = exact_delta_fraction(noise.edges, noise.probs, float(np.exp(eps)), sorted(phis))
    assert float(exact) <= prof.delta <= float(exact) + 1e-12


@pytest.mark.parametrize("atom", [0.0, 0.2])
def test_a_sensitivity_beyond_the_cells_span_certifies_delta_one(atom):
    """Δf ≥ the cells' span: the shift Δf separates the laws, δ = 1 exactly, without a lattice of
    Δf/h cells (Δf = 1e300 had asked for one of 1e305); just below the span the lattice's value,
    which approaches 1 by the breakpoint method too."""
    probs = np.array([0.3, 0.5, 0.2]) * (1.0 - atom)
    noise = dpdro.PiecewiseUniform(np.array([-1.0, -0.25, 0.5, 2.0]), probs, grid=0.25, atom=atom)
    for sens in (3.0, 1e300):
        prof = privacy_profile(noise, 0.7, sens)
        assert prof.method == "disjoint" and prof.delta == 1.0
    below = privacy_profile(noise, 0.7, 2.75)
    assert below.method == "lattice" and below.delta < 1.0
    assert below.delta == pytest.approx(_breakpoint_profile(noise, 0.7, 2.75).delta, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_few_edges_on_a_fine_lattice_are_certified_at_their_differences(seed):
    """Few cells on a fine lattice (as Tulap's on Δf/2^20): δ(φ) is evaluated only at the
    differences of edges within Δf and ±Δf, far fewer than the 2k + 1 lattice shifts, and the
    certificate bounds the exact maximum over every lattice shift (exact rationals) as tightly as
    before."""
    rng = np.random.default_rng(seed)
    k = 64  # h = Δf/64
    widths = rng.integers(1, 3 * k, size=5)
    ticks = np.concatenate(([0], np.cumsum(widths))) - int(widths.sum()) // 2
    probs = rng.random(widths.size) + 0.05
    noise = dpdro.PiecewiseUniform(ticks / k, probs / probs.sum(), grid=1.0 / k)
    eps = 0.9
    prof = privacy_profile(noise, eps, 1.0)
    assert prof.method == "lattice" and prof.phis.size < 2 * k + 1
    exact = exact_delta_fraction(
        noise.edges, noise.probs, float(np.exp(eps)), [Fraction(s, k) for s in range(-k, k + 1)]
    )
    assert float(exact) <= prof.delta <= float(exact) + 1e-12


def test_breakpoint_method_agrees_with_lattice():
    rng = np.random.default_rng(11)
    ticks = np.array([-12, -7, -3, -1, 0, 1, 2, 5, 9, 13])
    probs = rng.random(ticks.size - 1)
    probs /= probs.sum()
    h = 1.0 / 6.0
    noise = dpdro.PiecewiseUniform(ticks * h, probs, grid=h)
    lattice = privacy_profile(noise, 1.3, 1.0)
    general = _breakpoint_profile(noise, 1.3, 1.0)
    assert lattice.method == "lattice" and general.method == "breakpoints"
    assert general.delta == pytest.approx(lattice.delta, abs=1e-12)


def test_breakpoint_method_on_irregular_edges():
    """Edges on no lattice: every edge difference in [−Δf, Δf] is a candidate shift (Lemma C.16)."""
    edges = list(np.sqrt(2.0) * np.array([-2.1, -1.3, -0.77, 0.0, 0.41, 1.9, 2.6]))
    probs = np.array([0.05, 0.1, 0.3, 0.35, 0.15, 0.05])
    noise = dpdro.PiecewiseUniform(edges, probs)
    eps, sens = 0.8, 1.0
    prof = privacy_profile(noise, eps, sens)
    assert prof.method == "breakpoints"
    diffs = {a - b for a in edges for b in edges if abs(a - b) <= sens} | {-sens, sens}
    exact = exact_delta_fraction(noise.edges, noise.probs, float(np.exp(eps)), sorted(diffs))
    assert float(exact) <= prof.delta <= float(exact) + 1e-12
    fine = exact_delta_fraction(
        noise.edges, noise.probs, float(np.exp(eps)), [Fraction(int(s), 97) for s in range(-97, 98)]
    )
    assert fine <= exact


def test_certificate_never_below_truth_at_tiny_delta():
    """A noise whose true δ is tiny: the certificate is an upper bound within ~1e-15."""
    probs = np.array([1e-9, 0.5 - 1e-9, 0.5 - 1e-9, 1e-9]) / (1.0)
    probs = probs / probs.sum()
    noise = dpdro.PiecewiseUniform([-2.0, -1.0, 0.0, 1.0, 2.0], probs, grid=1.0)
    exact = exact_delta_fraction(noise.edges, noise.probs, float(np.exp(30.0)), range(-1, 2))
    d = dpdro.certify_delta(noise, 30.0, 1.0)
    assert float(exact) <= d <= float(exact) + 1e-14


@pytest.mark.parametrize("on_lattice", [True, False])
def test_atom_adds_its_mass_at_every_nonzero_shift(on_lattice):
    """δ of a noise with an atom a at 0 is a + max_φ ∫(p(y) − e^ε p(y − φ))_+ dy. Checked against
    the noise without atom that puts the mass a in a narrow cell [0, w) (certified by the exact
    breakpoint method, which knows nothing of atoms): its δ is at most that, and within O(w) of
    it."""
    h, a = 0.25, 0.35
    edges = np.array([-6, -3, -1, 0, 2, 3, 7]) * h
    cells = np.array([0.05, 0.15, 0.1, 0.2, 0.1, 0.05])
    cells = cells / cells.sum() * (1 - a)
    noise = dpdro.PiecewiseUniform(edges, cells, grid=h if on_lattice else None, atom=a)
    eps, sens = 1.2, 0.5
    prof = privacy_profile(noise, eps, sens)
    assert prof.method == "lattice"  # found even without a grid argument
    plain = privacy_profile(dpdro.PiecewiseUniform(edges, cells / (1 - a), grid=h), eps, sens)
    assert np.allclose(prof.deltas, (1 - a) * plain.deltas + a * (prof.phis != 0), atol=1e-15)
    w = 1e-7 * np.sqrt(2.0)
    j = int(np.searchsorted(edges, 0.0))  # the cell [0, 2h) is split at w
    narrow_edges = np.insert(edges, j + 1, w)
    dens = cells[j] / (edges[j + 1] - edges[j])
    narrow_probs = np.concatenate((cells[:j], [a + dens * w, cells[j] - dens * w], cells[j + 1 :]))
    narrow = _breakpoint_profile(
        dpdro.PiecewiseUniform(narrow_edges, narrow_probs), eps, sens
    ).delta
    d = prof.delta
    assert narrow <= d + 1e-12
    assert narrow >= d - 2 * np.exp(eps) * np.max(cells / np.diff(edges)) * w - 1e-12


@pytest.mark.parametrize("sensitivity", [1e-12, 1e-9, 1e-4])
def test_a_sensitivity_below_the_grid_is_certified_at_every_shift(sensitivity):
    """Regression: for Δf far below a noise's grid h, Δf/h rounded to 0 and the lattice method
    checked the shift 0 alone, so a noise with an atom a at 0 was certified at δ ≈ 3e-12 for
    Δf = 1e-12. Every shift 0 < φ ≤ Δf moves the atom off itself: δ ≥ a, and within the
    certificate's allowance of a + (what the cells add, O(Δf/h))."""
    a, h = 2.2e-4, 0.25
    noise = dpdro.PiecewiseUniform(
        np.array([-2, -1, 0, 1, 2]) * h, np.array([0.2, 0.3, 0.3, 0.2]) * (1 - a), grid=h, atom=a
    )
    prof = privacy_profile(noise, 1.0, sensitivity)
    assert prof.method == "breakpoints"
    assert a <= prof.delta <= a + 2.0 * 1.2 / h * sensitivity + 1e-12


def test_bad_inputs():
    noise = dpdro.PiecewiseUniform([0.0, 1.0], [1.0])
    with pytest.raises(TypeError, match="PiecewiseUniform"):
        dpdro.certify_delta([0.0, 1.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpdro.certify_delta(noise, -1.0, 1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        dpdro.certify_delta(noise, 1.0, 0.0)
    # e^ε is no finite float beyond about 709.8: refused by name, not an OverflowError
    with pytest.raises(ValueError, match=r"epsilon must be at most 700 .* got 1000000\.0"):
        dpdro.certify_delta(dpdro.PiecewiseUniform([-1.0, 0.0, 1.0], [0.5, 0.5]), 1e6, 1.0)
    assert dpdro.certify_delta(dpdro.PiecewiseUniform([-1.0, 0.0, 1.0], [0.5, 0.5]), 700, 1.0) > 0


def test_spurious_lattice_is_rejected_and_the_breakpoint_method_used():
    """Regression: edges ±690.5056707934818 lie within the lattice search's tolerance of fractions
    with denominator ≤ 2^20, and the implied lattice (step ≈ 4.3e-6, ~3e8 cells) made certify_delta
    hang. Such a lattice is now refused and the breakpoint method certifies in milliseconds. δ is
    known in closed form: the worst shift is Δf = 1, where the centre cell (density ½) meets an
    outer cell (density d) and the outer end uncovers d, so δ = ½ − (e − 1)·d."""
    far = 690.5056707934818
    noise = dpdro.PiecewiseUniform([-far, -0.5, 0.5, far], [0.25, 0.5, 0.25])
    start = time.perf_counter()
    prof = privacy_profile(noise, 1.0, 1.0)
    assert time.perf_counter() - start < 2.0
    assert prof.method == "breakpoints"
    d = 0.25 / (far - 0.5)
    # the rounding allowance
    assert prof.delta == pytest.approx(0.5 - math.expm1(1.0) * d, abs=1e-11)
    assert prof.delta >= 0.5 - math.expm1(1.0) * d


@pytest.mark.parametrize("seed", range(4))
def test_lattice_offset_equals_exact_rationals(seed):
    """lattice_offset (float filter, then integers) returns exactly the rounded-up maximum of
    |value − (origin + tick·h)| computed in rationals: values on the lattice (0), off it by 1e-9 of
    a step, by the last bits, by one ulp, at scales from 1e-300 to 1e300 and with an origin off the
    lattice."""
    from dpdro.privacy import lattice_offset

    def exact(values, ticks, h, origin):
        step, o = Fraction(float(h)), Fraction(float(origin))
        pairs = zip(values, ticks, strict=True)
        worst = max(abs(Fraction(float(v)) - o - int(t) * step) for v, t in pairs)
        return 0.0 if worst == 0 else float(np.nextafter(float(worst), np.inf))

    rng = np.random.default_rng(seed)
    for trial in range(400):
        n = int(rng.integers(1, 30))
        if trial % 3 == 0:
            scale = 10.0 ** int(rng.integers(-300, 300))
        else:
            scale = 10.0 ** rng.uniform(-12, 9)
        h = scale * rng.uniform(0.1, 1)
        t = rng.integers(-(10**6), 10**6, size=n)
        off = 1 + 1e-3 * (trial % 5 == 0)
        origin = 0.0 if trial % 2 else h * int(rng.integers(-100, 100)) * off
        on = origin + t * h
        values = [on, on + rng.normal(size=n) * h * 1e-9, on * (1 + rng.normal(size=n) * 1e-16),
                  np.nextafter(on, np.inf)][trial % 4]
        assert lattice_offset(values, t, h, origin) == exact(values, t, h, origin)
    assert lattice_offset([5e-324], [1], 1e-310) == exact([5e-324], [1], 1e-310, 0.0)
    assert lattice_offset(np.arange(5) / 1024, np.arange(5), 1 / 1024) == 0.0


def test_a_rescaled_certificate_reuses_the_run_sums_bit_for_bit():
    """The run sums depend on the lattice values and the integer ticks only: a noise certified at
    Δf = 1 and rescaled to Δf = 7.5 repeats them (kept, privacy._RUN_SUMS), and the profile is
    the one computed afresh, bit for bit; another δ-level noise does not hit the kept sums."""
    from dpdro import privacy
    from dpdro.reference import tulap_candidate

    unit = tulap_candidate(dpdro.Problem(epsilon=0.3, delta=1e-3))[0]
    scaled = dpdro.PiecewiseUniform(unit.edges * 7.5, unit.probs, grid=unit.grid * 7.5,
                                    atom=unit.atom)
    privacy._RUN_SUMS.clear()
    first = privacy.privacy_profile(unit, 0.3, 1.0)
    kept = len(privacy._RUN_SUMS)
    again = privacy.privacy_profile(scaled, 0.3, 7.5)
    assert kept >= 1 and len(privacy._RUN_SUMS) == kept  # a hit: nothing new kept
    privacy._RUN_SUMS.clear()
    fresh = privacy.privacy_profile(scaled, 0.3, 7.5)
    assert np.array_equal(again.deltas, fresh.deltas) and again.delta == fresh.delta
    assert np.array_equal(again.error_bound, fresh.error_bound)
    assert np.array_equal(first.deltas, fresh.deltas)


@pytest.mark.parametrize("seed", range(1))
def test_exactly_on_never_claims_a_value_off_its_lattice(seed):
    """The vectorised proof of v = origin + t·h (error-free product and sum) against rationals:
    never True where it is false, and True for most values that are exactly on a lattice of
    dyadic steps (the case it is there for), at scales from 1e-280 to 1e280."""
    from dpdro.privacy import _exactly_on

    rng = np.random.default_rng(seed)
    proven = on_lattice = 0
    for trial in range(300):
        if trial % 2:
            scale = 10.0 ** int(rng.integers(-280, 280))
        else:
            scale = 2.0 ** -int(rng.integers(0, 40))
        h = scale * (rng.uniform(0.1, 1) if trial % 3 else 1.0)
        t = rng.integers(-(10**9), 10**9, size=50)
        origin = [0.0, h * int(rng.integers(-100, 100)), h * rng.normal()][trial % 3]
        v = origin + t * h
        v[::7] = np.nextafter(v[::7], np.inf)
        got = _exactly_on(v, t, h, origin)
        truth = np.array([Fraction(float(x)) == Fraction(origin) + int(j) * Fraction(h)
                          for x, j in zip(v, t, strict=True)])
        assert not np.any(got & ~truth)
        proven, on_lattice = proven + int(got.sum()), on_lattice + int(truth.sum())
    assert proven >= 0.5 * on_lattice
    assert _exactly_on(np.arange(5) / 1024, np.arange(5), 1 / 1024, 0.0).all()
    assert not _exactly_on(np.array([np.inf, np.nan, 1e-310]), np.array([1, 1, 1]), 1e-310,
                           0.0).any()


@pytest.mark.parametrize(("n", "sensitivity"), [(2, 10.0), (60, 0.3), (300, 1.0), (300, 5.0),
                                                 (100, 1e-3)])
def test_edge_differences_are_those_of_the_full_table(n, sensitivity):
    """The candidate shifts of the breakpoint method, without the n × n table: the same floats."""
    e = np.unique(np.random.default_rng(n).normal(size=n))
    table = (e[:, None] - e[None, :]).ravel()
    expected = np.unique(table[np.abs(table) <= sensitivity])
    assert np.array_equal(np.unique(_edge_differences(e, sensitivity)), expected)


def test_breakpoint_certificate_of_many_cells_needs_no_square_table():
    """Tulap at ε = 0.01, δ = 1e-12 (4,485 cells, edges on no lattice with Δf): certified with
    memory linear in the cells (the n × n table of edge differences took 160 MB here, and 12 GiB
    at ε = 0.001, where `dpdro compare` failed with a MemoryError or was killed)."""
    import tracemalloc

    from dpdro.mechanisms import Tulap

    tracemalloc.start()
    try:
        tulap = Tulap(epsilon=0.01, delta=1e-12)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64e6
    assert dpdro.certify_delta(tulap.to_piecewise_uniform(), 0.01, 1.0) <= 1e-12
