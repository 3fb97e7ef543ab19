r"""Helpers for the chapters that connect related papers to optimal noise.

* :class:`ShiftedTruncatedLaplace` — the one-sided noise of Theorem 3.2 of the private-LP paper
  ("private linear programs without constraint violations"): the right-hand side b(D) of a private
  constraint is released as b(D) − s + η with η a Laplace(Δ/ε) variable truncated to [−s, s] and
  s = (Δ/ε)·log(m(e^ε − 1)/δ + 1), so the released value never exceeds b(D).
* :func:`purify_1d` and :func:`purification_epsilon` — Algorithm 1 of Lin, Wang, Ma and Wang
  ("Purifying approximate differential privacy with randomized post-processing") in dimension
  d = 1, applied to a clipped additive mechanism on an integer-valued query: mix with the uniform
  distribution on Θ (length R) with probability ω, then add Laplace(2Δ_W/ε′) noise,
  Δ_W = 2R·δ/(2ω). Everything is computed exactly on a grid of cells of width h (the base noise is
  given by its cell masses), so the purified output's pure-DP ε is certified by a finite maximum.

Sampling uses :class:`numpy.random.Generator`; production use needs a secure source (e.g. seeding
from ``secrets``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ._validation import check_open_unit, check_positive

__all__ = ["ShiftedTruncatedLaplace", "GridNoise", "gaussian_grid_noise", "piecewise_uniform_grid_noise",
           "Purified1D", "purify_1d", "staircase_l1"]


# ------------------------------------------------------------------------------ private LP (002)
@dataclass(frozen=True)
class ShiftedTruncatedLaplace:
    r"""Z = η − s with η ~ Laplace(Δ/ε) truncated to [−s, s]: Theorem 3.2 of the private-LP paper.

    Parameters
    ----------
    epsilon, delta : the privacy parameters the paper calibrates s to.
    sensitivity : Δ, the (ℓ1) sensitivity of b(D).
    m : number of private constraints; the paper's shift s = (Δ/ε)·log(m(e^ε − 1)/δ + 1).

    Notes
    -----
    Z is supported on [−2s, 0], so b(D) + Z ≤ b(D): the private constraint is only ever tightened,
    by E[−Z] = s on average (η is symmetric). For one constraint (m = 1) the noise is the truncated
    Laplace mechanism of Geng et al. with half-width s, whose exact privacy level is
    δ(Δ) = P(η > s − Δ) = (e^ε − 1)/(2(e^{εs/Δ} − 1)) = δ/(2m) (:meth:`exact_delta`): Claim B.2's
    union bound counts both ends of the support although a given neighbour shifts the support to
    one side only. The shift that makes m = 1 exactly (ε, δ)-DP is the truncated-Laplace
    half-width A = (Δ/ε)·log(1 + (e^ε − 1)/(2δ)) (:meth:`tight_shift`).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    m: int = 1

    def __init__(self, *, epsilon, delta, sensitivity=1.0, m=1):
        object.__setattr__(self, "epsilon", check_positive("epsilon", epsilon))
        object.__setattr__(self, "delta", check_open_unit("delta", delta))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", sensitivity))
        if isinstance(m, bool) or int(m) != m or int(m) < 1:
            raise ValueError(f"m must be an integer >= 1, got {m!r}")
        object.__setattr__(self, "m", int(m))

    @property
    def scale(self) -> float:
        """λ = Δ/ε."""
        return self.sensitivity / self.epsilon

    @property
    def shift(self) -> float:
        """The paper's s = (Δ/ε)·log(m(e^ε − 1)/δ + 1)."""
        return self.scale * math.log1p(self.m * math.expm1(self.epsilon) / self.delta)

    def tight_shift(self) -> float:
        """A = (Δ/ε)·log(1 + (e^ε − 1)/(2δ)): the smallest shift of this form that is (ε, δ)-DP for m = 1."""
        return self.scale * math.log1p(math.expm1(self.epsilon) / (2.0 * self.delta))

    @property
    def support(self) -> tuple[float, float]:
        return (-2.0 * self.shift, 0.0)

    def pdf(self, z):
        z = np.asarray(z, dtype=float)
        s, lam = self.shift, self.scale
        norm = 2.0 * lam * -math.expm1(-s / lam)
        inside = (z >= -2.0 * s) & (z <= 0.0)
        return np.where(inside, np.exp(-np.abs(z + s) / lam) / norm, 0.0)

    def cdf(self, z):
        z = np.asarray(z, dtype=float)
        s, lam = self.shift, self.scale
        e = np.clip(z + s, -s, s)  # position of η
        denom = -math.expm1(-s / lam)
        lower = (np.exp(-np.abs(e) / lam) - math.exp(-s / lam)) / (2.0 * denom)  # P(η ≤ e) for e ≤ 0
        return np.where(e <= 0, lower, 1.0 - (np.exp(-np.abs(e) / lam) - math.exp(-s / lam)) / (2.0 * denom))

    def sample(self, size=None, rng=None):
        """Inverse-transform samples of Z (see the module notes on security)."""
        u = np.random.default_rng(rng).random(size)
        s, lam = self.shift, self.scale
        v = np.minimum(u, 1.0 - u)
        denom = -math.expm1(-s / lam)
        # P(η ≤ −t) = (e^{−t/λ} − e^{−s/λ})/(2·denom) = v  ⇒  t = −λ log(2v·denom + e^{−s/λ})
        t = -lam * np.log(2.0 * v * denom + math.exp(-s / lam))
        eta = np.where(u < 0.5, -t, t)
        return np.clip(eta, -s, s) - s

    def expected_tightening(self) -> float:
        """E[−Z] = s."""
        return self.shift

    def exact_delta(self, phi=None) -> float:
        """The exact smallest δ for one constraint (m = 1 view): P(η > s − |φ|), worst |φ| = Δ."""
        w = self.sensitivity if phi is None else abs(float(phi))
        s, lam = self.shift, self.scale
        if w > 2 * s:
            return 1.0
        # P(η > s − w) = (e^{w/λ} − 1)e^{−s/λ}/(2(1 − e^{−s/λ}))
        return math.expm1(w / lam) / (2.0 * math.expm1(s / lam))

    def numeric_delta(self, n_shifts: int = 41, n_grid: int = 200_001) -> float:
        """Independent check of :meth:`exact_delta`: max over φ ∈ [−Δ, Δ] of ∫ (p(z) − e^ε p(z − φ))₊ dz
        on a fine trapezoidal grid (accurate to about 1e-9 relative for the default sizes)."""
        lo, hi = -2.0 * self.shift - self.sensitivity, self.sensitivity
        z = np.linspace(lo, hi, n_grid)
        p = self.pdf(z)
        best = 0.0
        for phi in np.linspace(-self.sensitivity, self.sensitivity, n_shifts):
            g = np.maximum(p - math.exp(self.epsilon) * self.pdf(z - phi), 0.0)
            best = max(best, float(np.trapezoid(g, z)))
        return best


# ------------------------------------------------------------------------------ purification (001)
@dataclass(frozen=True)
class GridNoise:
    """Additive noise described by its masses on the cells [i·h, (i+1)·h), i = lo, …, lo + n − 1, plus
    the masses below and above that range (for the clipping atoms). Uniform density within a cell."""

    h: float
    lo: int
    masses: np.ndarray
    below: float = 0.0
    above: float = 0.0


def gaussian_grid_noise(sigma: float, h: float, half_width: float) -> GridNoise:
    """N(0, σ²) discretised to cells of width h on [−W, W] (W a multiple of h): each cell keeps its
    exact Gaussian mass and spreads it uniformly (the piecewise-uniform discretisation used to certify
    the purified output; it is itself a slightly different mechanism)."""
    n_half = int(math.ceil(half_width / h))
    edges = np.arange(-n_half, n_half + 1) * h
    cdf = special.ndtr(edges / sigma)
    masses = np.diff(cdf)
    return GridNoise(h, -n_half, masses, below=float(special.ndtr(-n_half * h / sigma)),
                     above=float(special.ndtr(-n_half * h / sigma)))


def piecewise_uniform_grid_noise(noise, h: float) -> GridNoise:
    """A :class:`dpdro.PiecewiseUniform` whose edges are multiples of h, split into cells of width h."""
    edges = np.asarray(noise.edges, dtype=float)
    ticks = np.rint(edges / h).astype(np.int64)
    if not np.allclose(ticks * h, edges, rtol=0, atol=1e-9 * max(1.0, np.abs(edges).max())):
        raise ValueError("the noise's cell edges must be multiples of h")
    widths = np.diff(ticks)
    masses = np.repeat(np.asarray(noise.probs, dtype=float) / widths, widths)
    return GridNoise(h, int(ticks[0]), masses)


def staircase_l1(epsilon: float, sensitivity: float = 1.0) -> float:
    """Minimal E|X| among ε-DP additive noises (staircase, Geng and Viswanath): Δ e^{ε/2}/(e^ε − 1)."""
    return sensitivity * math.exp(epsilon / 2) / math.expm1(epsilon)


@dataclass
class Purified1D:
    """Algorithm 1 (d = 1) applied to M(q) = clip(q + Z, Θ) for integer queries q ∈ {0, …, Q}.

    Attributes: the parameters, the Laplace scale ``b`` = 2Δ_W/ε′ with Δ_W = 2R·δ/(2ω), and for each
    q the pre-Laplace masses on the cells of Θ and the two clipping atoms.
    """

    epsilon: float
    eps_prime: float
    delta: float
    omega: float
    Q: int
    theta: tuple[float, float]
    h: float
    b: float
    cells: np.ndarray  # (Q + 1, n_cells) masses of the pre-Laplace output on the cells of Θ
    atoms: np.ndarray  # (Q + 1, 2) masses at θ0 and θ1

    @property
    def R(self) -> float:
        return self.theta[1] - self.theta[0]

    @property
    def theorem_epsilon(self) -> float:
        """ε + ε′ of Theorem 1."""
        return self.epsilon + self.eps_prime

    def pre_laplace_epsilon(self, sensitivity: int = 1) -> tuple[float, tuple]:
        """Exact pure-DP level of the uniform mixture alone (before the Laplace step): the max over
        neighbouring queries |q − q′| ≤ Δf and over cells and atoms of log(mass_q / mass_q′). Laplace
        post-processing cannot increase it, so it is a certified upper bound on the final ε.
        Returns (ε, (q, q′, location)) with location a cell index or 'atom0'/'atom1'."""
        best, arg = -math.inf, None
        for q in range(self.Q + 1):
            for q2 in range(max(0, q - sensitivity), min(self.Q, q + sensitivity) + 1):
                if q2 == q:
                    continue
                with np.errstate(divide="ignore"):
                    r = np.log(self.cells[q]) - np.log(self.cells[q2])
                i = int(np.argmax(r))
                if r[i] > best:
                    best, arg = float(r[i]), (q, q2, i)
                for k in range(2):
                    a, a2 = self.atoms[q, k], self.atoms[q2, k]
                    if a > 0:
                        v = math.inf if a2 == 0 else math.log(a / a2)
                        if v > best:
                            best, arg = v, (q, q2, f"atom{k}")
        return best, arg

    def density(self, q: int, x) -> np.ndarray:
        """Exact density of the purified output for query q at the points x (Laplace convolution of
        the uniform cells and the atoms, in closed form)."""
        x = np.asarray(x, dtype=float)[..., None]
        a = self.theta[0] + np.arange(self.cells.shape[1]) * self.h
        F = lambda t: 0.5 + 0.5 * np.sign(t) * -np.expm1(-np.abs(t) / self.b)
        dens = (self.cells[q] * (F(x - a) - F(x - a - self.h)) / self.h).sum(axis=-1)
        lap = lambda t: np.exp(-np.abs(t) / self.b) / (2 * self.b)
        dens += self.atoms[q, 0] * lap(x[..., 0] - self.theta[0]) + self.atoms[q, 1] * lap(x[..., 0] - self.theta[1])
        return dens

    def attained_epsilon(self, q: int, q2: int, x) -> float:
        """max over the points x of log p_q(x)/p_q′(x): a lower bound on the final ε."""
        return float(np.max(np.log(self.density(q, x)) - np.log(self.density(q2, x))))

    def final_epsilon_bounds(self, hx: float, sensitivity: int = 1) -> tuple[float, float]:
        """Bounds on the pure-DP level of the final (post-Laplace) output.

        Evaluates log p_q(x) − log p_q′(x) on the grid of spacing ``hx`` over Θ for every pair of
        neighbouring queries. Outside Θ every density is p(θ1)·e^{−(x − θ1)/b} (resp. at θ0), so the
        ratio is constant there and Θ suffices. The grid maximum is attained (a lower bound); since each
        log p_q is (1/b)-Lipschitz (a mixture of Laplace densities), the supremum exceeds it by at most
        hx/b, and it never exceeds :meth:`pre_laplace_epsilon`. Returns (lower, upper).
        """
        n = int(math.ceil((self.theta[1] - self.theta[0]) / hx))
        x = np.linspace(self.theta[0], self.theta[1], n + 1)
        step = (self.theta[1] - self.theta[0]) / n
        logs = []
        for q in range(self.Q + 1):
            dens = np.concatenate([self.density(q, x[i:i + 512]) for i in range(0, x.size, 512)])
            logs.append(np.log(dens))
        grid = -math.inf
        for q in range(self.Q + 1):
            for q2 in range(max(0, q - sensitivity), min(self.Q, q + sensitivity) + 1):
                if q2 != q:
                    grid = max(grid, float(np.max(logs[q] - logs[q2])))
        return grid, min(self.pre_laplace_epsilon(sensitivity)[0], grid + step / self.b)

    def expected_error(self) -> np.ndarray:
        """E|x_pure − q| for every q: E over the pre-Laplace output Y of |Y − q| + b·e^{−|Y − q|/b}."""
        b, h = self.b, self.h
        G = lambda u: np.sign(u) * (0.5 * u * u + b * b * -np.expm1(-np.abs(u) / b))
        a = self.theta[0] + np.arange(self.cells.shape[1]) * h
        out = np.empty(self.Q + 1)
        for q in range(self.Q + 1):
            cell = (G(a + h - q) - G(a - q)) / h
            err = float(self.cells[q] @ cell)
            for k, t in enumerate(self.theta):
                u = abs(t - q)
                err += self.atoms[q, k] * (u + b * math.exp(-u / b))
            out[q] = err
        return out


def purify_1d(base: GridNoise, *, epsilon: float, delta: float, eps_prime: float, omega: float, Q: int,
              margin: float) -> Purified1D:
    """Algorithm 1 with d = 1 for the clipped mechanism M(q) = clip(q + Z, Θ), Θ = [−margin, Q + margin].

    ``base`` is the (ε, δ)-DP noise Z on cells of width h (h must divide 1 and ``margin``); q ranges
    over the integers 0, …, Q (sensitivity 1). The uniform mixture weight is ω, the Laplace scale
    b = 2Δ_W/ε′ with Δ_W = 2R(δ/(2ω)) (Algorithm 1, lines 2–4, d = 1, R = |Θ|).
    """
    h = base.h
    k = int(round(1.0 / h))
    if abs(k * h - 1.0) > 1e-12:
        raise ValueError("h must divide the sensitivity 1")
    n_margin = int(round(margin / h))
    n = (Q * k) + 2 * n_margin  # cells of Θ
    theta = (-n_margin * h, Q + n_margin * h)
    R = theta[1] - theta[0]
    cells = np.zeros((Q + 1, n))
    atoms = np.zeros((Q + 1, 2))
    for q in range(Q + 1):
        start = base.lo + q * k + n_margin  # cell index in Θ of the first base cell
        idx = start + np.arange(base.masses.size)
        inside = (idx >= 0) & (idx < n)
        np.add.at(cells[q], idx[inside], base.masses[inside])
        atoms[q, 0] = base.below + base.masses[idx < 0].sum()
        atoms[q, 1] = base.above + base.masses[idx >= n].sum()
    cells = (1.0 - omega) * cells + omega * h / R
    atoms = (1.0 - omega) * atoms
    delta_w = 2.0 * R * delta / (2.0 * omega)
    b = 2.0 * delta_w / eps_prime
    return Purified1D(epsilon, eps_prime, delta, omega, Q, theta, h, b, cells, atoms)
