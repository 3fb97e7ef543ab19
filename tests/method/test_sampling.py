"""SecureSampler: the law it draws is the certified one (exhaustively and statistically), and it is
fast."""

import json
import math
import random
import time
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpdro
from dpdro.sampling import SecureSampler


# ------------------------------------------------------------------------------------------ helpers
class _Branch(Exception):
    def __init__(self, n):
        self.n = n


class PathSource:
    """A randomness source that replays a fixed list of choices and raises _Branch(n) when it runs
    out.

    Walking all choice lists depth first enumerates every run of the sampler with its exact
    probability.
    """

    def __init__(self):
        self.choices, self.i = [], 0

    def reset(self, choices):
        self.choices, self.i = choices, 0

    def _next(self, n):
        if self.i == len(self.choices):
            raise _Branch(n)
        self.i += 1
        return self.choices[self.i - 1]

    def getrandbits(self, k):
        return self._next(1 << k)

    def randrange(self, n):
        return self._next(n)


class OneBitSampler(SecureSampler):
    _chunk_bits = 1  # one bit of V and one of U per round: a small enumeration tree, same law


def enumerate_law(sampler, source, value, max_choices):
    """(lower bounds on P(release = x), mass of the runs not finished within max_choices
    choices)."""
    law, unresolved = defaultdict(Fraction), Fraction(0)
    stack = [((), Fraction(1))]
    while stack:
        choices, prob = stack.pop()
        source.reset(list(choices))
        try:
            law[sampler.release(value)] += prob
        except _Branch as branch:
            if len(choices) >= max_choices:
                unresolved += prob
            else:
                stack.extend((choices + (c,), prob / branch.n) for c in range(branch.n))
    return law, unresolved


def hockey_stick(p: dict, q: dict, epsilon: float) -> Fraction:
    """Σ_x (p(x) − e^ε q(x))_+ with a rational e^ε rounded down (so the result is an upper
    bound)."""
    gamma = Fraction(math.nextafter(math.exp(epsilon), 0.0))
    return sum((px - gamma * q.get(x, 0)) for x, px in p.items() if px > gamma * q.get(x, 0))


@pytest.fixture(scope="module")
def tiny_noise():
    """Dyadic cells and an atom: small enough to enumerate the sampler's randomness exhaustively."""
    return dpdro.PiecewiseUniform([-1.0, -0.5, 0.5, 1.0], [0.125, 0.25, 0.125], grid=0.5, atom=0.5)


# --------------------------------------------------------------------------------------- validation
def test_rejects_bad_input(noise_l2):
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0)
    with pytest.raises(TypeError, match="noise must be a dpdro.PiecewiseUniform"):
        SecureSampler([0.0, 1.0], **kw)
    with pytest.raises(ValueError, match=r"epsilon must be finite and > 0, got -1"):
        SecureSampler(noise_l2, epsilon=-1, delta=0.05, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"delta must lie in the open interval \(0, 1\), got 1.5"):
        SecureSampler(noise_l2, epsilon=1.0, delta=1.5, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"certify_delta gives 0.04999.* > delta = 0.01"):
        SecureSampler(noise_l2, epsilon=1.0, delta=0.01, sensitivity=1.0)
    with pytest.raises(
        ValueError,
        match=r"resolution must be a power of two .* got 0.1; the nearest smaller valid "
        r"value is 0.0625",
    ):
        SecureSampler(noise_l2, resolution=0.1, **kw)
    with pytest.raises(TypeError, match="rng must be None"):
        SecureSampler(noise_l2, rng=np.random.default_rng(0), **kw)
    sampler = SecureSampler(noise_l2, **kw)
    with pytest.raises(ValueError, match="value must be a finite real number, got nan"):
        sampler.release(float("nan"))
    with pytest.raises(TypeError, match="value must be a real number"):
        sampler.release("3")


# ------------------------------------------------------------------------------------------ the law
@pytest.mark.parametrize("value", [0.25, -0.3, 7])
def test_sampler_law_equals_release_pmf_by_exhaustive_enumeration(tiny_noise, value):
    """Every run of the sampler, with its exact probability: the law it draws is R_h(f + X), X
    certified."""
    source = PathSource()
    sampler = OneBitSampler(
        tiny_noise, epsilon=1.0, delta=0.99, sensitivity=0.5, resolution=1.0, rng=source
    )
    law, unresolved = enumerate_law(sampler, source, value, max_choices=2 + 11)
    exact = sampler.release_pmf(value)
    assert unresolved < Fraction(1, 500)
    assert set(law) <= set(exact)
    for x, p in exact.items():
        assert law[x] <= p <= law[x] + unresolved, (x, float(law[x]), float(p), float(unresolved))


def test_release_pmf_is_a_law_with_the_stated_moments(noise_atom):
    sampler = SecureSampler(noise_atom, epsilon=5.0, delta=0.75, sensitivity=1.0, resolution=1 / 32)
    for value in (0.0, 1 / 3, -2.5):
        pmf = sampler.release_pmf(value)
        assert sum(pmf.values()) == 1
        mean = sum(Fraction(x) * p for x, p in pmf.items())
        var = sum(Fraction(x) ** 2 * p for x, p in pmf.items()) - mean**2
        assert math.isclose(float(mean), sampler.release_mean(value), rel_tol=0, abs_tol=1e-15)
        assert math.isclose(float(var), sampler.release_variance(value), rel_tol=1e-12)
        assert (
            noise_atom.var
            <= sampler.release_variance(value)
            <= noise_atom.var + (1 / 32) ** 2 / 4 + 1e-15
        )
        # the atom's mass sits on the two lattice points around the value
        lo = math.floor(value * 32) / 32
        assert pmf[lo] + pmf.get(lo + 1 / 32, 0) >= Fraction(noise_atom.atom)


@pytest.mark.parametrize("fixture", ["noise_l2", "noise_atom"])
def test_neighbouring_release_laws_satisfy_the_certificate(request, fixture):
    """Exact output laws of f and f + φ obey (ε, δ) with δ <= certify_delta, for every shift tried,
    including the noise's worst shift (which need not be Δf)."""
    noise = request.getfixturevalue(fixture)
    eps, delta = (1.0, 0.05) if fixture == "noise_l2" else (5.0, 0.75)
    sampler = SecureSampler(noise, epsilon=eps, delta=delta, sensitivity=1.0, resolution=1 / 8)
    worst = dpdro.privacy_profile(noise, eps, 1.0).worst_phi
    base = sampler.release_pmf(0.1)
    deltas = []
    for phi in (1.0, -1.0, worst, -worst, 0.3, 1 / 16):
        other = sampler.release_pmf(0.1 + phi)
        d = max(hockey_stick(base, other, eps), hockey_stick(other, base, eps))
        assert d <= sampler.certified_delta
        deltas.append(float(d))
    assert (
        max(deltas) > 0.5 * sampler.certified_delta
    )  # post-processing loses little at this resolution


def test_chi_square_seeded_against_exact_law(noise_atom, chi_square_pvalue):
    sampler = SecureSampler(
        noise_atom, epsilon=5.0, delta=0.75, sensitivity=1.0, resolution=1 / 16, rng=12345
    )
    draws = sampler.release(0.3, 20_000)
    assert chi_square_pvalue(draws, sampler.release_pmf(0.3)) > 1e-3


def test_chi_square_secure_against_exact_law(noise_l2, chi_square_pvalue):
    """Secure randomness is not reproducible: the threshold 1e-6 is the false-alarm probability."""
    sampler = SecureSampler(noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0, resolution=1 / 4)
    draws = sampler.release(-12.7, 20_000)
    assert chi_square_pvalue(draws, sampler.release_pmf(-12.7)) > 1e-6


def test_tiny_noise_chi_square_and_noise_only_sample(tiny_noise, chi_square_pvalue):
    sampler = SecureSampler(
        tiny_noise, epsilon=1.0, delta=0.99, sensitivity=0.5, resolution=0.25, rng=7
    )
    assert chi_square_pvalue(sampler.sample(20_000), sampler.release_pmf(0)) > 1e-3


class ScriptedSource:
    """randrange(n) records n and returns a scripted value; getrandbits returns 0 (V = U = 0)."""

    def __init__(self, picks):
        self.picks, self.ranges = list(picks), []

    def randrange(self, n):
        self.ranges.append(n)
        return self.picks.pop(0)

    def getrandbits(self, k):
        return 0


def test_cell_choice_uses_exact_integer_weights():
    """Probabilities far apart in scale (1e-30 next to 0.5) need > 64-bit integer weights: the cell
    boundaries must be exact, not rounded."""
    p0 = 1e-30
    noise = dpdro.PiecewiseUniform([0.0, 1.0, 2.0, 3.0], [p0, 0.5 - p0, 0.5], grid=1.0)
    e = max(Fraction(float(p)).denominator for p in noise.probs).bit_length() - 1
    weights = [int(Fraction(float(p)) * 2**e) for p in noise.probs]
    assert weights[0] < 2**64 < sum(weights)
    boundaries = (
        (0, 0),
        (weights[0] - 1, 0),
        (weights[0], 1),
        (weights[0] + weights[1], 2),
        (sum(weights) - 1, 2),
    )
    for pick, cell in boundaries:
        source = ScriptedSource([pick])
        sampler = SecureSampler(
            noise, epsilon=1.0, delta=0.99, sensitivity=1.0, resolution=1.0, rng=source
        )
        assert sampler.sample() == float(cell)  # V = U = 0: the left end of the chosen cell
        assert source.ranges == [sum(weights)] and isinstance(source.ranges[0], int)


# ----------------------------------------------------------------------------------- practicalities
def test_seeded_draws_reproduce_and_outputs_are_lattice_points(noise_l2):
    kw = dict(epsilon=1.0, delta=0.05, sensitivity=1.0)
    a = SecureSampler(noise_l2, rng=3, **kw).release(1e6 + 0.1, 100)
    b = SecureSampler(noise_l2, rng=3, **kw).release(1e6 + 0.1, 100)
    c = SecureSampler(noise_l2, rng=random.Random(4), **kw).release(1e6 + 0.1, 100)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    h = SecureSampler(noise_l2, **kw).resolution
    assert h == 2.0**-24  # 2^-20 of the cell width 1/16
    assert np.all(a / h == np.round(a / h))
    lo, hi = noise_l2.support
    assert np.all((a >= 1e6 + 0.1 + lo - h) & (a <= 1e6 + 0.1 + hi + h))
    assert SecureSampler(noise_l2, **kw).release(5).__class__ is float
    assert SecureSampler(noise_l2, **kw).sample((2, 3)).shape == (2, 3)


def test_speed_secure(noise_small_delta):
    """10^4 secure draws of a 257-cell optimised noise at the default resolution in well under a
    second."""
    sampler = SecureSampler(noise_small_delta, epsilon=1.0, delta=1e-6, sensitivity=1.0)
    start = time.perf_counter()
    draws = sampler.release(123.456, 10_000)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, elapsed
    assert abs(draws.mean() - 123.456) < 5 * noise_small_delta.std / 100


@settings(max_examples=25, deadline=None)
@given(value=st.floats(-1e3, 1e3, allow_nan=False), h_exp=st.integers(-4, 0))
def test_property_draws_lie_in_the_exact_support(tiny_noise, value, h_exp):
    sampler = SecureSampler(
        tiny_noise, epsilon=1.0, delta=0.99, sensitivity=0.5, resolution=2.0**h_exp, rng=0
    )
    pmf = sampler.release_pmf(value)
    assert sum(pmf.values()) == 1
    assert set(sampler.release(value, 50).tolist()) <= set(pmf)


# ------------------------------------------------------------------------------------- constructors
def test_from_file_takes_the_guarantee_from_the_certificate(tmp_path, noise_l2):
    cert = dpdro.certificate.certificate(
        noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0, loss="l2"
    )
    path = tmp_path / "noise.json"
    path.write_text(json.dumps(dpdro.certificate.document(noise_l2, cert)))
    sampler = SecureSampler.from_file(path, rng=5)
    assert (sampler.epsilon, sampler.delta, sampler.sensitivity) == (1.0, 0.05, 1.0)
    assert sampler.certified_delta == dpdro.certify_delta(noise_l2, 1.0, 1.0)
    assert np.array_equal(
        sampler.release(3.0, 20),
        SecureSampler(noise_l2, epsilon=1.0, delta=0.05, sensitivity=1.0, rng=5).release(3.0, 20),
    )
    doc = json.loads(path.read_text())
    doc["noise"]["probs"][0] += 0.01  # edited: refused, with the file named
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"noise file '{path}' is refused: "):
        SecureSampler.from_file(path)
    with pytest.raises(
        ValueError, match="noise file must be a readable UTF-8 file, got 'nope.json'"
    ):
        SecureSampler.from_file("nope.json")


def test_from_noise_takes_the_guarantee_a_design_records():
    res = dpdro.optimal_noise(dpdro.Problem(epsilon=1.0, delta=1e-3, sensitivity=2.0, loss="l2"))
    sampler = SecureSampler.from_noise(res.noise)
    assert (sampler.epsilon, sampler.delta, sampler.sensitivity) == (1.0, 1e-3, 2.0)
    assert sampler.certified_delta == dpdro.certify_delta(res.noise, 1.0, 2.0) <= 1e-3
    found = dpdro.catalog.lookup(epsilon=1.0, delta=1e-4, sensitivity=3.0, loss="l1")
    assert SecureSampler.from_noise(found.noise).sensitivity == 3.0


def test_from_noise_refuses_missing_or_false_metadata(noise_l2):
    with pytest.raises(
        ValueError, match="noise.metadata must record epsilon, delta and sensitivity"
    ):
        SecureSampler.from_noise(
            dpdro.PiecewiseUniform(noise_l2.edges, noise_l2.probs, grid=noise_l2.grid)
        )
    lying = dpdro.PiecewiseUniform(
        noise_l2.edges,
        noise_l2.probs,
        grid=noise_l2.grid,
        metadata={"epsilon": 1.0, "delta": 0.01, "sensitivity": 1.0},
    )
    with pytest.raises(ValueError, match=r"certify_delta gives 0.04999.* > delta = 0.01"):
        SecureSampler.from_noise(lying)  # the recorded numbers are checked, not trusted


@pytest.mark.parametrize("value", [1.79e308, -1.79e308, 10**400])
def test_a_value_beyond_1e300_is_refused_by_name(value):
    """f + noise must stay a float: refused before drawing (had been an OverflowError inside)."""
    noise = dpdro.PiecewiseUniform([-1.0, 0.0, 1.0], [0.5, 0.5])
    sampler = SecureSampler(noise, epsilon=1.0, delta=0.3, sensitivity=0.5, rng=1)
    with pytest.raises(ValueError, match=r"value must lie in \[-1e300, 1e300\]"):
        sampler.release(value)
    assert abs(sampler.release(1e300) - 1e300) <= 2e284
