r"""Exact, secure sampling of a certified piecewise-uniform noise.

Why. Adding ``noise.sample()`` (numpy floating point) to a query answer does not release the law
that was certified: the floating-point result is a deterministic function of the true sum whose
pattern of attainable values depends on the query answer, and Mironov (2012) shows how such
artefacts of textbook Laplace sampling reveal the answer. The sampler below releases a value whose
law is known exactly and is a post-processing of the certified one.

The release. For a query answer f, the certified noise X ~ γ and a resolution h = 2^{-r}, the
sampler outputs

    M(f) = R_h(f + X),    R_h(t) = h·⌊t/h + U⌋,    U ~ Uniform[0, 1) independent,

i.e. f + X *randomly rounded* to the lattice hℤ: to h⌊t/h⌋ with probability 1 − θ and to
h⌊t/h⌋ + h with probability θ = t/h − ⌊t/h⌋. Here γ is the law that :func:`dpdro.certify_delta`
certifies: the atom at 0 with probability a and cell j = [e_j, e_{j+1}) with probability
(1 − a)·p_j / Σ_i p_i, uniform within the cell (``edges``, ``probs``, ``atom`` read as the exact
binary rationals they are).

Theorem 1 (privacy, no enlargement of the sensitivity). If adding X is (ε, δ)-DP for queries of
sensitivity Δf, so is M. Proof: R_h is a Markov kernel K(t, ·) on hℤ that does not depend on the
data. For neighbouring answers |f − f′| ≤ Δf and any S ⊆ hℤ, t ↦ K(t, S) is measurable with values
in [0, 1], so P(M(f) ∈ S) − e^ε P(M(f′) ∈ S) = E[K(f + X, S)] − e^ε E[K(f′ + X, S)] ≤
sup_{0 ≤ g ≤ 1} ∫ g d(γ_f − e^ε γ_{f′}) = sup_A γ_f(A) − e^ε γ_{f′}(A) ≤ δ, where γ_f is the law of
f + X (the supremum over test functions g is attained at the indicator of {dγ_f > e^ε dγ_{f′}}).
So the certificate of the noise at Δf is the certificate of the release; this is the
post-processing property of (ε, δ)-DP (Dwork and Roth 2014, Proposition 2.1). □

Moments. E[R_h(t)] = t and Var[R_h(t)] = h²θ(1 − θ) ≤ h²/4, so E M(f) = f + E X and Var M(f) = Var
X + h²·E[θ(1 − θ)] with θ = frac((f + X)/h) (see :meth:`SecureSampler.release_variance`). Law.
P(M(f) = nh) = E Λ((f + X)/h − n) with the hat function Λ(s) = (1 − |s|)_+ (see
:meth:`SecureSampler.release_pmf`).

Theorem 2 (the sampler draws exactly that law). Every float is a binary rational, so
a = A/2^e, p_j = P_j/2^E and the cell ends are binary rationals, and so is f (a float or an int).

1. The atom: B = [randrange(2^e) < A] is Bernoulli(a) exactly.
2. The cell: with integer weights P_j and S = Σ P_j, J = min{j : P_1 + … + P_j > randrange(S)}
   has P(J = j) = P_j / S = p_j / Σ p_i exactly.
3. Given the cell [a_J, b_J), X = a_J + (b_J − a_J)V with V ~ Uniform[0, 1), so
   ⌊(f + X)/h + U⌋ = ⌊c + wV + U⌋ with the binary rationals c = (f + a_J)/h and w = (b_J − a_J)/h
   (c = f/h, w = 0 for the atom). The sampler reads V and U bit by bit, 64 bits of each per round:
   after m bits, V ∈ [v/2^m, (v + 1)/2^m) and U ∈ [u/2^m, (u + 1)/2^m) with v, u the integers read,
   so c + wV + U lies in [ℓ, ℓ + (w + 1)/2^m) with ℓ = c + (wv + u)/2^m. If no integer lies in the
   open interval (ℓ, ℓ + (w + 1)/2^m), every continuation of the bits gives ⌊c + wV + U⌋ = ⌊ℓ⌋,
   which is returned; otherwise another round is read. All comparisons are exact integer
   arithmetic.

The bits read are independent and uniform, and (V, U) = ((v + V′)/2^m, (u + U′)/2^m) with the
unread parts V′, U′ uniform and independent of v, u; the algorithm returns the function
⌊c + wV + U⌋ of (V, U), evaluated exactly, as soon as it no longer depends on the unread part.
It fails to stop only if an integer lies in every interval, i.e. if c + wV + U is an integer, an
event of probability 0; the probability of needing another round after m bits is at most
2(w + 2)/2^m (for each v at most 2((w + 1) + 1) of the 2^m values of u put an integer inside).
Hence the output has exactly the law of R_h(f + X) with X ~ γ. □

The output n·h is an exact float while |n| < 2^53 (|f + X| < 2^53·h); beyond that the returned
float is n·h rounded to nearest, a deterministic function of n (again post-processing). The
query answer f itself must be computed so that its sensitivity really is Δf (floating-point sums
can exceed their nominal sensitivity; Casacuberta et al. 2022): that is the caller's part.

Randomness. ``rng=None`` draws from :class:`secrets.SystemRandom` (the operating system's
cryptographically secure generator): use this in deployment. An integer seed gives a
:class:`random.Random` (Mersenne Twister) for reproducible draws, **not for deployment** (its
state can be recovered from its outputs). Any object with ``getrandbits(k)`` and ``randrange(n)``
(the :class:`random.Random` interface) is accepted too.

Alternative considered. OpenDP (and the first suggestion of issue 17) rounds f to a grid and adds
exact lattice noise, certified at the enlarged sensitivity Δf + h. For a piecewise-uniform noise on
a lattice of step β this costs privacy: the lattice noise h·⌊X/h⌋ has, at lattice shifts, exactly
the δ(φ) of X, so its certificate is ``certify_delta(noise, ε, Δf + h)``, which exceeds the target δ
for an optimised (tight) noise unless the noise is redesigned for Δf + h. Randomized rounding of f +
X keeps the certificate at Δf, at the price of a variance increase of at most h²/4 (h = 2^-20 of the
smallest cell by default) and 128 random bits per round instead of a lattice draw.

References
----------
.. [1] I. Mironov, "On significance of the least significant bits for differential privacy",
   ACM CCS 2012.
.. [2] C. Dwork and A. Roth, "The algorithmic foundations of differential privacy", 2014,
   Proposition 2.1 (post-processing).
.. [3] S. Casacuberta, M. Shoemate, S. Vadhan and C. Wagaman, "Widespread underestimation of
   sensitivity in differentially private libraries and how to fix it", ACM CCS 2022.
.. [4] C. Canonne, G. Kamath and T. Steinke, "The discrete Gaussian for differential privacy",
   NeurIPS 2020 (exact sampling from integer randomness).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import secrets
from collections import defaultdict
from fractions import Fraction

import numpy as np

from ._validation import check_finite, check_open_unit, check_positive, check_size
from .certificate import read_file
from .noise import check_noise
from .privacy import certify_delta

__all__ = ["SecureSampler"]

_MAX_PMF_POINTS = 1_000_000


def _binary(x) -> tuple[int, int]:
    """(n, k) with x = n / 2^k exactly, for a finite float (k >= 0 since float denominators are
    powers of two)."""
    num, den = float(x).as_integer_ratio()
    return num, den.bit_length() - 1


#: the largest |f| released: f + noise must stay a float (f = 1.79e308 had overflowed inside)
MAX_VALUE = 1e300


def _value(value) -> tuple[int, int]:
    """The query answer as (n, k) with f = n / 2^k exactly: ints are taken exactly, floats must be
    finite; |f| at most :data:`MAX_VALUE`."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        out = int(value), 0
    else:
        out = _binary(check_finite("value", value))
    if abs(out[0]) > int(MAX_VALUE) << out[1]:
        raise ValueError(
            f"value must lie in [-1e300, 1e300] (value + noise must stay a float), got {value!r}"
        )
    return out


def _fraction(value) -> Fraction:
    """The query answer as an exact Fraction (see :func:`_value`)."""
    num, bits = _value(value)
    return Fraction(num, 1 << bits)


def _rng(rng):
    """The integer randomness source (see the module docstring)."""
    if rng is None:
        return secrets.SystemRandom()
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return random.Random(int(rng))
    if callable(getattr(rng, "getrandbits", None)) and callable(getattr(rng, "randrange", None)):
        return rng
    raise TypeError(
        "rng must be None (secure: secrets.SystemRandom), an int seed (reproducible, not for "
        f"deployment) or an object with getrandbits(k) and randrange(n), got {type(rng).__name__}"
    )


def _check_resolution(resolution) -> tuple[float, int]:
    """h = 2^-r as (h, r)."""
    h = check_positive("resolution", resolution)
    mant, exp = math.frexp(h)
    if mant != 0.5:
        below = math.ldexp(1.0, exp - 1)
        raise ValueError(
            f"resolution must be a power of two 2^k (k an integer) so that releases are exact "
            f"floats, got {resolution!r}; the nearest smaller valid value is {below!r}"
        )
    return h, 1 - exp


def _hat_integral(s: Fraction) -> Fraction:
    """L(s) = ∫_{-∞}^s Λ, Λ(x) = (1 − |x|)_+ the randomized-rounding kernel."""
    if s <= -1:
        return Fraction(0)
    if s <= 0:
        return (s + 1) ** 2 / 2
    if s <= 1:
        return 1 - (1 - s) ** 2 / 2
    return Fraction(1)


def _frac_moment(t: Fraction) -> Fraction:
    """G(t) = ∫_0^t θ(1 − θ) ds with θ = s − ⌊s⌋: ⌊t⌋/6 + r²/2 − r³/3, r = t − ⌊t⌋."""
    n = math.floor(t)
    r = t - n
    return Fraction(n, 6) + r * r / 2 - r * r * r / 3


class SecureSampler:
    r"""Release f + noise exactly and securely, as the randomized rounding R_h(f + X) (module
    docstring).

    Parameters
    ----------
    noise : dpdro.PiecewiseUniform
        The noise X.
    epsilon, delta, sensitivity : float
        The guarantee to enforce: the noise is re-certified, and a ``ValueError`` is raised unless
        ``certify_delta(noise, epsilon, sensitivity) <= delta``. Theorem 1 carries the certificate
        over to every release at the same sensitivity.
    resolution : float, optional
        The output lattice step h, a power of two. Default: 2^-20 times the smallest cell with
        positive probability (rounded down to a power of two), so the rounding adds a variance of
        at most h²/4, negligible against the noise.
    rng : None, int or random.Random-like, optional
        ``None`` (default): :class:`secrets.SystemRandom`, for deployment. An int: a seeded
        :class:`random.Random`, reproducible, **not for deployment**. Or any object with
        ``getrandbits(k)`` and ``randrange(n)``.

    Attributes
    ----------
    certified_delta : float
        ``certify_delta(noise, epsilon, sensitivity)``, the δ of every release.

    Notes
    -----
    A draw costs one ``randrange`` for the cell, one for the atom (if any) and, almost always, one
    128-bit ``getrandbits``: about 10 µs with the secure source and 5 µs seeded (CPython 3.11,
    noises of 29 to 2049 cells), against about 400 µs for OpenDP's arbitrary-precision Tulap.

    Examples
    --------
    >>> import dpdro
    >>> noise = dpdro.PiecewiseUniform([-1.0, 0.0, 1.0], [0.5, 0.5])   # uniform on [-1, 1)
    >>> sampler = SecureSampler(noise, epsilon=1.0, delta=0.3, sensitivity=0.5, resolution=0.5)
    >>> round(sampler.certified_delta, 12)      # a shift by 0.5 uncovers a quarter of the mass
    0.25
    >>> x = sampler.release(42.0)               # secure: not reproducible
    >>> 40.5 <= x <= 43.5 and x % 0.5 == 0
    True
    >>> [str(p) for p in sampler.release_pmf(0.25).values()]   # the exact law of release(0.25)
    ['1/32', '7/32', '1/4', '1/4', '7/32', '1/32']
    """

    _chunk_bits = (
        64  # bits of V and of U read per round (the law does not depend on it; tests lower it)
    )

    def __init__(self, noise, *, epsilon, delta, sensitivity, resolution=None, rng=None):
        self.noise = check_noise("noise", noise)
        self.epsilon = check_positive("epsilon", epsilon)
        self.delta = check_open_unit("delta", delta)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.certified_delta = certify_delta(noise, self.epsilon, self.sensitivity)
        if self.certified_delta > self.delta:
            raise ValueError(
                f"noise is not ({self.epsilon!r}, {self.delta!r})-DP at sensitivity "
                f"{self.sensitivity!r}: "
                f"certify_delta gives {self.certified_delta!r} > delta = {self.delta!r}"
            )
        live = noise.probs > 0
        if resolution is None:
            smallest = float(np.min(np.diff(noise.edges)[live]))
            resolution = math.ldexp(1.0, math.frexp(smallest)[1] - 21)
        self.resolution, self._r = _check_resolution(resolution)
        self._rng = _rng(rng)
        # the exact law as integers: atom A / 2^e, cell weights P_j (cumulative), edges E_j / 2^k
        self._atom_num, self._atom_bits = _binary(noise.atom)
        pairs = [_binary(p) for p in noise.probs]
        top = max(k for _, k in pairs)
        self._cum = list(
            itertools.accumulate(n << (top - k) for n, k in pairs)
        )  # Python ints, exact
        edges = [_binary(e) for e in noise.edges]
        self._edge_bits = max(k for _, k in edges)
        self._edges = [n << (self._edge_bits - k) for n, k in edges]

    # --------------------------------------------------------------------------------- constructors
    @classmethod
    def from_file(cls, path, *, resolution=None, rng=None) -> SecureSampler:
        """The sampler of a noise file (``dpdro design``, :func:`dpdro.certificate.document`): ε, δ
        and Δf are the file's certificate, which is re-checked when the file is read
        (:func:`dpdro.certificate.read_file`) and again by the constructor.

        Raises ``ValueError`` naming the file for an unreadable, malformed, edited or non-private
        file.
        """
        noise, cert = read_file(path)
        return cls(
            noise,
            epsilon=cert["epsilon"],
            delta=cert["delta"],
            sensitivity=cert["sensitivity"],
            resolution=resolution,
            rng=rng,
        )

    @classmethod
    def from_noise(cls, noise, *, resolution=None, rng=None) -> SecureSampler:
        """The sampler of a noise that records its guarantee in ``noise.metadata`` (``epsilon``,
        ``delta``, ``sensitivity``), as the noises of :func:`dpdro.optimal_noise`,
        :func:`dpdro.catalog.lookup` and :func:`dpdro.composition.design_for_releases` do. The
        recorded numbers are not trusted: the constructor certifies the noise at them.

        Raises ``ValueError`` if the metadata lacks one of them.
        """
        noise = check_noise("noise", noise)
        missing = [key for key in ("epsilon", "delta", "sensitivity") if key not in noise.metadata]
        if missing:
            raise ValueError(
                f"noise.metadata must record epsilon, delta and sensitivity (as dpdro's designs "
                f"do), got {sorted(noise.metadata)}; pass them to SecureSampler(noise, ...) instead"
            )
        meta = noise.metadata
        return cls(
            noise,
            epsilon=meta["epsilon"],
            delta=meta["delta"],
            sensitivity=meta["sensitivity"],
            resolution=resolution,
            rng=rng,
        )

    # ---------------------------------------------------------------------------------- sampling
    def _floor(self, c: int, w: int, d: int) -> int:
        """⌊c/2^d + (w/2^d)·V + U⌋ for independent V, U ~ Uniform[0, 1), exactly (Theorem 2, step
        3)."""
        rng, chunk = self._rng, self._chunk_bits
        v = u = m = 0
        unit = 1 << d
        while True:
            bits = rng.getrandbits(2 * chunk)
            v, u, m = (
                (v << chunk) | (bits >> chunk),
                (u << chunk) | (bits & ((1 << chunk) - 1)),
                m + chunk,
            )
            s = d + m
            low = (c << m) + w * v + (u << d)  # ℓ·2^s
            n = low >> s
            if (n + 1) << s >= low + w + unit:  # no integer in (ℓ, ℓ + (w + 1)/2^m)
                return n

    def _draw(self, num: int, bits: int) -> int:
        """One draw of n = R_h(f + X)/h for f = num / 2^bits (Theorem 2)."""
        rng = self._rng
        k = max(bits, self._edge_bits)
        f = num << (k - bits)
        if self._atom_num and rng.randrange(1 << self._atom_bits) < self._atom_num:
            c, w = f, 0
        else:
            j = bisect.bisect_right(self._cum, rng.randrange(self._cum[-1]))
            lo, hi = (
                self._edges[j] << (k - self._edge_bits),
                self._edges[j + 1] << (k - self._edge_bits),
            )
            c, w = f + lo, hi - lo
        d = k - self._r  # (f + X)/h = (c + wV)/2^d
        if d < 0:
            c, w, d = c << -d, w << -d, 0
        return self._floor(c, w, d)

    def release(self, value, size=None):
        """f + noise, randomly rounded to the lattice of step ``resolution``: R_h(f + X).

        Parameters
        ----------
        value : float or int
            The query answer f (finite, |f| ≤ 1e300).
        size : int or tuple of ints, optional
            Number (shape) of independent releases of the same f; ``None`` returns one float.

        Returns
        -------
        float or numpy.ndarray
            Multiples of ``resolution``; each (ε, ``certified_delta``)-DP for answers that differ by
            at most ``sensitivity`` (Theorem 1).
        """
        num, bits = _value(value)
        size = check_size("size", size)
        if size is None:
            return math.ldexp(float(self._draw(num, bits)), -self._r)
        shape = (size,) if isinstance(size, int) else size
        out = np.empty(int(np.prod(shape)))
        for i in range(out.size):
            out[i] = math.ldexp(float(self._draw(num, bits)), -self._r)
        return out.reshape(shape)

    def sample(self, size=None):
        """Noise only: R_h(X) = :meth:`release` of f = 0."""
        return self.release(0, size)

    # ---------------------------------------------------------------------------------- exact law
    def _cells(self):
        """Exact (a_j, b_j, mass_j) of the cells with positive mass, and the atom a (Fractions)."""
        atom = Fraction(self.noise.atom)
        probs = [Fraction(float(p)) for p in self.noise.probs]
        total = sum(probs)
        edges = [Fraction(float(e)) for e in self.noise.edges]
        cells = [
            (edges[j], edges[j + 1], (1 - atom) * p / total) for j, p in enumerate(probs) if p > 0
        ]
        return cells, atom

    def release_pmf(self, value) -> dict:
        r"""The exact law of :meth:`release`: {n·h: P(M(f) = n·h)} as Fractions.

        Computed in closed form, independently of the sampling code:
        P(M(f) = nh) = a·Λ(f/h − n) + Σ_j m_j·(L(c_j + w_j − n) − L(c_j − n))/w_j, with
        c_j = (f + e_j)/h, w_j = (e_{j+1} − e_j)/h, m_j the cell masses and L the integral of the
        hat Λ. Refuses laws with more than 10^6 support points (use a coarser ``resolution``).
        """
        f = _fraction(value)
        h = Fraction(self.resolution)
        cells, atom = self._cells()
        points = sum(float((b - a) / h) + 2 for a, b, _ in cells)
        if points > _MAX_PMF_POINTS:
            raise ValueError(
                f"release_pmf would list about {points:.3g} points (at most {_MAX_PMF_POINTS} "
                f"allowed); use a coarser resolution than {self.resolution!r}"
            )
        law = defaultdict(Fraction)
        if atom:
            t = f / h
            n = math.floor(t)
            law[n] += atom * (1 - (t - n))
            law[n + 1] += atom * (t - n)
        for a, b, mass in cells:
            c, w = (f + a) / h, (b - a) / h
            for n in range(math.floor(c), math.ceil(c + w) + 1):
                law[n] += mass * (_hat_integral(c + w - n) - _hat_integral(c - n)) / w
        return {float(n * h): p for n, p in sorted(law.items()) if p}

    def release_mean(self, value) -> float:
        """E M(f) = f + E X (randomized rounding is unbiased)."""
        f = _fraction(value)
        cells, _ = self._cells()
        return float(f + sum(m * (a + b) / 2 for a, b, m in cells))

    def release_variance(self, value) -> float:
        r"""Var M(f) = Var X + h²·E[θ(1 − θ)], θ = frac((f + X)/h), computed exactly.

        Given a cell, (f + X)/h is uniform on [c, c + w], and E θ(1 − θ) = (G(c + w) − G(c))/w with
        G(t) = ⌊t⌋/6 + r²/2 − r³/3, r = frac(t); the atom contributes θ₀(1 − θ₀), θ₀ = frac(f/h).
        The value lies in [Var X, Var X + h²/4].
        """
        f = _fraction(value)
        h = Fraction(self.resolution)
        cells, atom = self._cells()
        mean = sum(m * (a + b) / 2 for a, b, m in cells)
        second = sum(m * (a * a + a * b + b * b) / 3 for a, b, m in cells)
        t0 = f / h - math.floor(f / h)
        rounding = atom * t0 * (1 - t0)
        for a, b, m in cells:
            c, w = (f + a) / h, (b - a) / h
            rounding += m * (_frac_moment(c + w) - _frac_moment(c)) / w
        return float(second - mean * mean + h * h * rounding)

    def __repr__(self) -> str:
        return (
            f"SecureSampler({self.noise!r}, epsilon={self.epsilon!r}, "
            f"certified_delta={self.certified_delta!r}, "
            f"sensitivity={self.sensitivity!r}, resolution=2^{-self._r})"
        )
