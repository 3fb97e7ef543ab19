r"""Purification of approximate DP (chapter 41): Algorithm 1 of Lin, Wang, Ma and Wang, d = 1.

* :func:`purify_1d` — Algorithm 1 of Lin, Wang, Ma and Wang
  ("Purifying approximate differential privacy with randomized post-processing") in dimension
  d = 1, applied to a clipped additive mechanism on an integer-valued query: mix with the uniform
  distribution on Θ (length R) with probability ω, then add Laplace(2Δ_W/ε′) noise,
  Δ_W = 2R·δ/(2ω). Everything is computed exactly on a grid of cells of width h (the base noise is
  given by its cell masses), so the purified output's pure-DP ε is certified by a finite maximum.
* :func:`base_noises` — the two base noises the chapter purifies (the certified optimal-noise upper
  bound and the analytic Gaussian, both on cells of width h); :func:`purify_best` — the purified
  mechanism with the mixture weight ω of smallest worst-case error; :func:`purification_rows` — the
  chapter's table: for every (ε, ε′, δ) and base noise, the errors and pure-DP levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

__all__ = [
    "GridNoise",
    "gaussian_grid_noise",
    "piecewise_uniform_grid_noise",
    "Purified1D",
    "purify_1d",
    "base_noises",
    "purify_best",
    "staircase_l1",
    "purification_rows",
]


@dataclass(frozen=True)
class GridNoise:
    """Additive noise described by its masses on the cells [i·h, (i+1)·h), i = lo, …, lo + n − 1,
    plus the masses below and above that range (for the clipping atoms). Uniform density within a
    cell."""

    h: float
    lo: int
    masses: np.ndarray
    below: float = 0.0
    above: float = 0.0


def gaussian_grid_noise(sigma: float, h: float, half_width: float) -> GridNoise:
    """N(0, σ²) discretised to cells of width h on [−W, W] (W a multiple of h): each cell keeps its
    exact Gaussian mass and spreads it uniformly (the piecewise-uniform discretisation used to
    certify the purified output; it is itself a slightly different mechanism)."""
    n_half = int(math.ceil(half_width / h))
    edges = np.arange(-n_half, n_half + 1) * h
    cdf = special.ndtr(edges / sigma)
    masses = np.diff(cdf)
    return GridNoise(
        h,
        -n_half,
        masses,
        below=float(special.ndtr(-n_half * h / sigma)),
        above=float(special.ndtr(-n_half * h / sigma)),
    )


def piecewise_uniform_grid_noise(noise, h: float) -> GridNoise:
    """A :class:`dpdro.PiecewiseUniform` whose edges are multiples of h, split into cells of width
    h."""
    edges = np.asarray(noise.edges, dtype=float)
    ticks = np.rint(edges / h).astype(np.int64)
    if not np.allclose(ticks * h, edges, rtol=0, atol=1e-9 * max(1.0, np.abs(edges).max())):
        raise ValueError("the noise's cell edges must be multiples of h")
    widths = np.diff(ticks)
    masses = np.repeat(np.asarray(noise.probs, dtype=float) / widths, widths)
    return GridNoise(h, int(ticks[0]), masses)


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
        neighbouring queries |q − q′| ≤ Δf and over cells and atoms of log(mass_q / mass_q′).
        Laplace post-processing cannot increase it, so it is a certified upper bound on the final ε.
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

        def F(t):
            return 0.5 + 0.5 * np.sign(t) * -np.expm1(-np.abs(t) / self.b)

        dens = (self.cells[q] * (F(x - a) - F(x - a - self.h)) / self.h).sum(axis=-1)

        def lap(t):
            return np.exp(-np.abs(t) / self.b) / (2 * self.b)

        dens += self.atoms[q, 0] * lap(x[..., 0] - self.theta[0]) + self.atoms[q, 1] * lap(
            x[..., 0] - self.theta[1]
        )
        return dens

    def attained_epsilon(self, q: int, q2: int, x) -> float:
        """max over the points x of log p_q(x)/p_q′(x): a lower bound on the final ε."""
        return float(np.max(np.log(self.density(q, x)) - np.log(self.density(q2, x))))

    def final_epsilon_bounds(self, hx: float, sensitivity: int = 1) -> tuple[float, float]:
        """Bounds on the pure-DP level of the final (post-Laplace) output.

        Evaluates log p_q(x) − log p_q′(x) on the grid of spacing ``hx`` over Θ for every pair of
        neighbouring queries. Outside Θ every density is p(θ1)·e^{−(x − θ1)/b} (resp. at θ0), so the
        ratio is constant there and Θ suffices. The grid maximum is attained (a lower bound); since
        each log p_q is (1/b)-Lipschitz (a mixture of Laplace densities), the supremum exceeds it by
        at most hx/b, and it never exceeds :meth:`pre_laplace_epsilon`. Returns (lower, upper).
        """
        n = int(math.ceil((self.theta[1] - self.theta[0]) / hx))
        x = np.linspace(self.theta[0], self.theta[1], n + 1)
        step = (self.theta[1] - self.theta[0]) / n
        logs = []
        for q in range(self.Q + 1):
            dens = np.concatenate([self.density(q, x[i : i + 512]) for i in range(0, x.size, 512)])
            logs.append(np.log(dens))
        grid = -math.inf
        for q in range(self.Q + 1):
            for q2 in range(max(0, q - sensitivity), min(self.Q, q + sensitivity) + 1):
                if q2 != q:
                    grid = max(grid, float(np.max(logs[q] - logs[q2])))
        return grid, min(self.pre_laplace_epsilon(sensitivity)[0], grid + step / self.b)

    def expected_error(self) -> np.ndarray:
        """E|x_pure − q| for every q: E over the pre-Laplace output Y of
        |Y − q| + b·e^{−|Y − q|/b}."""
        b, h = self.b, self.h

        def G(u):
            return np.sign(u) * (0.5 * u * u + b * b * -np.expm1(-np.abs(u) / b))

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


def purify_1d(
    base: GridNoise,
    *,
    epsilon: float,
    delta: float,
    eps_prime: float,
    omega: float,
    Q: int,
    margin: float,
) -> Purified1D:
    """Algorithm 1 with d = 1 for the clipped mechanism M(q) = clip(q + Z, Θ),
    Θ = [−margin, Q + margin].

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


def staircase_l1(epsilon: float) -> float:
    """E|X| of the staircase mechanism at pure ε (Δf = 1), the optimal pure-DP noise."""
    from dpdro.mechanisms import Staircase

    return Staircase(epsilon=epsilon).expected_loss("l1")


def base_noises(epsilon: float, delta: float, *, Q: int, h: float) -> tuple[int, dict]:
    """The chapter's two (ε, δ)-DP base noises on cells of width ``h``, and the clipping margin m.

    The margin is ⌈1.5 A⌉, A the truncated Laplace half-width at (ε, δ). ``"optimized"``: the
    certified upper bound P(π, β) of dpdro for E|X| on the uniform partition of cell width h and
    half-width about 1.5 A; ``"Gaussian"``: the analytic Gaussian with each cell's exact mass over
    m + Q. Each value is (grid noise, E|X| of the base noise, certified δ of the base noise at ε).
    """
    import dpdro
    from dpdro.mechanisms import AnalyticGaussian, TruncatedLaplace

    half = TruncatedLaplace(epsilon=epsilon, delta=delta).half_width
    margin = math.ceil(1.5 * half)
    prob = dpdro.Problem(epsilon=epsilon, delta=delta, loss="l1")
    part = dpdro.Partition.uniform(math.ceil(1.5 * half / h), h)
    ub = dpdro.upper_bound(prob, part)
    g = AnalyticGaussian(epsilon=epsilon, delta=delta)
    gg = gaussian_grid_noise(g.sigma, h, margin + Q)
    pu = dpdro.PiecewiseUniform(
        np.arange(gg.lo, gg.lo + gg.masses.size + 1) * h, gg.masses / gg.masses.sum(), grid=h
    )
    return margin, {
        "optimized": (
            piecewise_uniform_grid_noise(ub.noise, h),
            ub.value,
            dpdro.certify_delta(ub.noise, epsilon, 1.0),
        ),
        "Gaussian": (gg, g.expected_loss("l1"), dpdro.certify_delta(pu, epsilon, 1.0)),
    }


def purify_best(
    base: GridNoise,
    *,
    epsilon: float,
    eps_prime: float,
    delta: float,
    Q: int,
    margin: float,
    omegas,
    hx: float = 0.02,
) -> tuple:
    """The purified mechanism (:func:`purify_1d`) with the ω in ``omegas`` of smallest worst-case
    error max_q E|x − q|: (mechanism, that error, pre-Laplace ε, attained ε on the grid ``hx``,
    certified ε)."""

    def at(omega):
        return purify_1d(
            base, epsilon=epsilon, delta=delta, eps_prime=eps_prime, omega=omega, Q=Q, margin=margin
        )

    err, omega = min((at(om).expected_error().max(), om) for om in omegas)
    best = at(omega)
    e_pre, _ = best.pre_laplace_epsilon()
    e_att, e_up = best.final_epsilon_bounds(hx=hx)
    return best, err, e_pre, e_att, e_up


def purification_rows(cases, deltas, *, Q: int, h: float, omegas) -> list[dict]:
    """One row per (ε, ε′) in ``cases``, δ in ``deltas`` and base noise (:func:`base_noises`):
    base, eps, eps_p, delta, base_delta (certified), omega, base_err and err (worst-case E|x − q|
    before and after purification), eps_thm (Theorem 1 of Lin et al.: ε + ε′), eps_pre, eps_cert,
    eps_att (:meth:`Purified1D.final_epsilon_bounds`), st_thm and st_cert (the staircase's E|X| at
    the theorem's and at the certified level)."""
    rows = []
    for eps, eps_p in cases:
        for delta in deltas:
            margin, bases = base_noises(eps, delta, Q=Q, h=h)
            for name, (base, base_err, base_delta) in bases.items():
                best, err, e_pre, e_att, e_up = purify_best(
                    base,
                    epsilon=eps,
                    eps_prime=eps_p,
                    delta=delta,
                    Q=Q,
                    margin=margin,
                    omegas=omegas,
                )
                rows.append(
                    dict(
                        base=name,
                        eps=eps,
                        eps_p=eps_p,
                        delta=delta,
                        base_delta=base_delta,
                        omega=best.omega,
                        base_err=base_err,
                        err=err,
                        eps_thm=eps + eps_p,
                        eps_pre=e_pre,
                        eps_cert=e_up,
                        eps_att=e_att,
                        st_thm=staircase_l1(eps + eps_p),
                        st_cert=staircase_l1(e_up),
                    )
                )
    return rows
