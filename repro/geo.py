r"""ε-geographic (metric) differential privacy for additive noise, and the multi-selection loss.

The related paper *DP with multiple selections* (seed 003) protects a user's value u ∈ ℝ (or on a
ring) with **ε-geographic DP** in the local model: a mechanism u ↦ P_u is ε-geo-DP when
P_{u₁}(S) ≤ e^{ε|u₁−u₂|}·P_{u₂}(S) for every event S and *every* pair u₁, u₂ (no sensitivity, no δ).
For additive noise, P_u = law of u + X, this holds **exactly when X has a density ρ whose logarithm
is ε-Lipschitz** (the paper's Lemma 2.6): shifting an event by d changes its probability by at most
e^{ε|d|}. (A geo-DP noise law is absolutely continuous: if |A| = 0 then P(X ∈ A + d) = 0 for almost
every d, and P(X ∈ A) ≤ e^{ε|d|} P(X ∈ A + d).)

The problem solved here is

    minimise  E[c(X)]  over noise laws X that are ε-geo-DP,

for a loss c; the paper's multi-selection loss for server offsets a = (a₁, …, a_k) is
c_a(x) = min_j h(|x + a_j|) (the server answers s + a_j, the user's error is the distance to the
nearest answer). :func:`multi_selection_loss` builds it for h(t) = t as a :class:`dpdro.PiecewiseLinear`
loss; :func:`ring_loss` builds its analogue on a circle (Appendix A.4 of the paper).

Bounds (β = grid step, nodes x_i = iβ for |i| ≤ L on the line, or N = period/β nodes on a ring):

* :func:`geo_upper_bound` solves an LP over the density values p_i at the nodes. Between two nodes
  the density is u·e^{εt} + w·e^{−εt} with u, w ≥ 0 determined by p_i, p_{i+1} (its log-derivative
  then lies in [−ε, ε]); u, w ≥ 0 is the linear ratio constraint e^{−εβ} ≤ p_{i+1}/p_i ≤ e^{εβ}. On
  the line the tails are e^{−ε|x|}-exponential. The *released* noise is :class:`LogLinearNoise`,
  the log-linear (piecewise-exponential) interpolation of the same node values, whose log-density
  is continuous and piecewise linear, so its Lipschitz constant is its largest chord slope; this is
  checked **exactly** in rational arithmetic on the stored floats (:meth:`LogLinearNoise.certify`),
  after a tiny shrink toward a constant if the solver overshoots. The upper bound reported is the
  exact expected loss of the released noise (closed form), not the LP value.
* :func:`geo_lower_bound` relaxes to cell masses m_i = P(X ∈ [x_i, x_{i+1})). Valid constraints for
  every ε-geo-DP law: (i) adjacent cells, m_{i+1} ≤ e^{εβ} m_i and m_i ≤ e^{εβ} m_{i+1} (shift an
  event by β); (ii) the right tail T = P(X ≥ x_R) satisfies m_{last} + T ≤ e^{εβ} T (shift the
  event [x_R, ∞) by −β), likewise on the left; (iii) inside a cell the density varies by a factor of
  at most r = e^{εβ}, so ∫_cell c dP ≥ m_i·κ_i with κ_i = min over densities with ratio ≤ r of the
  weighted average of c on the cell, evaluated on M sub-cells through their infima (a threshold
  problem solved exactly); (iv) in the right tail G(x_R + s) = P(X ≥ x_R + s) ≥ e^{−εs} T, so for c
  non-decreasing beyond x_R, E[c(X); X ≥ x_R] ≥ T·E[c(x_R + Y)] with Y ~ Exp(ε). The value is
  evaluated from the LP's dual multipliers (any multipliers give a valid bound; masses lie in [0, 1])
  rather than trusted from the solver.

Scope: additive noise and a deterministic set of offsets (the server answers s + a_j). The paper's
Theorem 2.13 is over all mechanisms (arbitrary signal sets, randomised servers); the bounds here
certify the optimum within the additive class for the given offsets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from scipy import optimize, sparse

from dpdro import PiecewiseLinear
from dpdro._validation import check_positive

__all__ = [
    "GeoProblem",
    "LogLinearNoise",
    "GeoUpperBound",
    "GeoLowerBound",
    "geo_upper_bound",
    "geo_lower_bound",
    "multi_selection_loss",
    "ring_loss",
    "laplace_noise",
    "laplace_offsets",
    "laplace_optimal_cost",
]


# --------------------------------------------------------------------------- losses
def multi_selection_loss(offsets) -> PiecewiseLinear:
    """c_a(x) = min_j |x + a_j| (the paper's h(t) = t) as a piecewise-linear loss.

    Knots at the points −a_j (value 0) and at the midpoints between consecutive points (value half
    the gap); slope −1 left of the smallest point and +1 right of the largest.
    """
    pts = np.unique(-np.asarray(offsets, dtype=float))
    if pts.size < 1 or not np.all(np.isfinite(pts)):
        raise ValueError(f"offsets must be a non-empty sequence of finite numbers, got {offsets!r}")
    mids = 0.5 * (pts[1:] + pts[:-1])
    knots = np.sort(np.concatenate((pts, mids)))
    values = np.min(np.abs(knots[:, None] - pts[None, :]), axis=1)
    return PiecewiseLinear(knots, values, left_slope=-1.0, right_slope=1.0, name=f"min_j |x + a_j| (k={pts.size})")


def ring_loss(offsets, period: float = 2 * math.pi) -> PiecewiseLinear:
    """c_a(x) = min_j ⟨x + a_j⟩ on a circle of circumference ``period`` (arc distance), as a
    piecewise-linear function on [−period/2, period/2]; only that interval is meaningful."""
    period = check_positive("period", period)
    half = period / 2
    pts = np.unique(np.mod(-np.asarray(offsets, dtype=float) + half, period) - half)
    allp = np.concatenate((pts - period, pts, pts + period))
    mids = 0.5 * (allp[1:] + allp[:-1])
    knots = np.concatenate((allp, mids, [-half, half]))
    knots = np.unique(knots[(knots >= -half) & (knots <= half)])

    def arc(x):
        d = np.abs(np.asarray(x, dtype=float)[..., None] - pts)
        d = np.mod(d, period)
        return np.min(np.minimum(d, period - d), axis=-1)

    return PiecewiseLinear(knots, arc(knots), left_slope=-1.0, right_slope=1.0, name=f"ring min_j <x + a_j> (k={pts.size})")


# --------------------------------------------------------------------------- exact integrals
def _exp_moments(s, w):
    """(∫_0^w e^{st} dt, ∫_0^w t e^{st} dt), vectorised and stable for small |s w|."""
    s = np.asarray(s, dtype=float)
    w = np.asarray(w, dtype=float)
    z = s * w
    small = np.abs(z) < 1e-3
    zs = np.where(small, 1.0, z)
    ss = np.where(small, 1.0, s)
    e0_big = w * np.expm1(zs) / zs
    e1_big = (np.exp(zs) * (zs - 1.0) + 1.0) / (ss * ss)
    e0_small = w * (1 + z / 2 + z * z / 6 + z**3 / 24)
    e1_small = w * w * (0.5 + z / 3 + z * z / 8 + z**3 / 30)
    return np.where(small, e0_small, e0_big), np.where(small, e1_small, e1_big)


def _cell_integrals(loss: PiecewiseLinear, edges, slope, logval):
    """∫_{edges[j]}^{edges[j+1]} c(x)·exp(logval_j + slope_j (x − edges[j])) dx for each cell j,
    exactly for a piecewise-linear c (cells are split at its knots)."""
    edges = np.asarray(edges, dtype=float)
    n = edges.size - 1
    slope = np.broadcast_to(np.asarray(slope, dtype=float), (n,))
    logval = np.broadcast_to(np.asarray(logval, dtype=float), (n,))
    kn = loss.knots[(loss.knots > edges[0]) & (loss.knots < edges[-1])]
    pts = np.union1d(edges, kn)
    left, right = pts[:-1], pts[1:]
    cell = np.clip(np.searchsorted(edges, left, side="right") - 1, 0, n - 1)
    w = right - left
    cl, cr = loss(left), loss(right)
    G = (cr - cl) / w
    e0, e1 = _exp_moments(slope[cell], w)
    off = logval[cell] + slope[cell] * (left - edges[cell])
    vals = np.exp(off) * (cl * e0 + G * e1)
    return np.bincount(cell, weights=vals, minlength=n)


def _tail_integral(loss: PiecewiseLinear, x0: float, rate: float, side: str) -> float:
    """∫ c(x) e^{−rate·|x − x0|} dx over [x0, ∞) (side "right") or (−∞, x0] ("left"); c must be
    linear there (x0 beyond all knots)."""
    if side == "right":
        if x0 < loss.knots[-1] - 1e-12:
            raise ValueError(f"the right tail must start beyond the last knot {loss.knots[-1]:g}, got {x0:g}")
        return float(loss(x0)) / rate + loss.right_slope / rate**2
    if x0 > loss.knots[0] + 1e-12:
        raise ValueError(f"the left tail must start before the first knot {loss.knots[0]:g}, got {x0:g}")
    return float(loss(x0)) / rate - loss.left_slope / rate**2


# --------------------------------------------------------------------------- released noise
@dataclass(frozen=True, eq=False)
class LogLinearNoise:
    r"""A noise density ρ ∝ exp(φ) with φ continuous and piecewise linear through ``(nodes, logdens)``.

    On the line (``period=None``) φ continues beyond the outer nodes with slope ∓``tail_rate``
    (exponential tails). On a ring (``period`` = circumference) ``nodes[-1] − nodes[0]`` must equal the
    period and ``logdens[-1] == logdens[0]``. The log-density is Lipschitz with constant
    :meth:`lipschitz` (largest chord slope and tail rate); :meth:`certify` checks ≤ ε exactly in
    rational arithmetic on the stored floats, which is the ε-geo-DP property of adding this noise.

    :meth:`sample` uses a :class:`numpy.random.Generator`; a production release needs a secure source.
    """

    nodes: np.ndarray
    logdens: np.ndarray
    tail_rate: float | None = None
    period: float | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        x = np.asarray(self.nodes, dtype=float)
        f = np.asarray(self.logdens, dtype=float)
        if x.ndim != 1 or x.size < 2 or f.shape != x.shape or np.any(np.diff(x) <= 0):
            raise ValueError("nodes must be strictly increasing with at least 2 entries and match logdens")
        if not (np.all(np.isfinite(x)) and np.all(np.isfinite(f))):
            raise ValueError("nodes and logdens must be finite")
        if self.period is None:
            if self.tail_rate is None or not (self.tail_rate > 0):
                raise ValueError("noise on the line needs tail_rate > 0 (integrable exponential tails)")
        else:
            if not math.isclose(x[-1] - x[0], self.period, rel_tol=1e-12) or f[-1] != f[0]:
                raise ValueError("ring noise needs nodes spanning exactly one period and logdens[-1] == logdens[0]")
        f = f - f.max()
        object.__setattr__(self, "nodes", x)
        object.__setattr__(self, "logdens", f)
        x.setflags(write=False)
        f.setflags(write=False)

    # -- privacy -------------------------------------------------------------------------
    @property
    def slopes(self) -> np.ndarray:
        return np.diff(self.logdens) / np.diff(self.nodes)

    def lipschitz(self) -> float:
        """Lipschitz constant of log ρ (floating point; see :meth:`certify` for the exact check)."""
        s = float(np.max(np.abs(self.slopes)))
        return max(s, self.tail_rate) if self.period is None else s

    def certify(self, epsilon: float) -> bool:
        """True iff |φ_{i+1} − φ_i| ≤ ε·(x_{i+1} − x_i) for every cell and tail_rate ≤ ε, checked
        exactly with the stored floats as rationals: then log ρ is ε-Lipschitz and the noise ε-geo-DP."""
        eps = Fraction(float(epsilon))
        xs = [Fraction(float(v)) for v in self.nodes]
        fs = [Fraction(float(v)) for v in self.logdens]
        for i in range(len(xs) - 1):
            if abs(fs[i + 1] - fs[i]) > eps * (xs[i + 1] - xs[i]):
                return False
        if self.period is None and Fraction(float(self.tail_rate)) > eps:
            return False
        return True

    # -- density -------------------------------------------------------------------------
    def _mass_pieces(self):
        x, f = self.nodes, self.logdens
        e0, _ = _exp_moments(self.slopes, np.diff(x))
        cells = np.exp(f[:-1]) * e0
        if self.period is None:
            tails = (math.exp(f[0]) / self.tail_rate, math.exp(f[-1]) / self.tail_rate)
        else:
            tails = (0.0, 0.0)
        return cells, tails

    @property
    def normaliser(self) -> float:
        cells, tails = self._mass_pieces()
        return float(cells.sum() + sum(tails))

    def pdf(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        x, f = self.nodes, self.logdens
        if self.period is not None:
            t = np.mod(t - x[0], self.period) + x[0]
            phi = np.interp(t, x, f)
        else:
            phi = np.interp(t, x, f)
            phi = np.where(t < x[0], f[0] - self.tail_rate * (x[0] - t), phi)
            phi = np.where(t > x[-1], f[-1] - self.tail_rate * (t - x[-1]), phi)
        return np.exp(phi) / self.normaliser

    def expected_loss(self, loss: PiecewiseLinear) -> float:
        """E[c(X)] in closed form (exact up to floating point) for a piecewise-linear loss; on a
        ring only the loss on [nodes[0], nodes[-1]] is used."""
        x, f = self.nodes, self.logdens
        total = float(_cell_integrals(loss, x, self.slopes, f[:-1]).sum())
        if self.period is None:
            total += math.exp(f[-1]) * _tail_integral(loss, x[-1], self.tail_rate, "right")
            total += math.exp(f[0]) * _tail_integral(loss, x[0], self.tail_rate, "left")
        return total / self.normaliser

    def cell_masses(self) -> np.ndarray:
        """Probabilities of the cells between consecutive nodes."""
        cells, _ = self._mass_pieces()
        return cells / self.normaliser

    def sample(self, size: int, rng=None) -> np.ndarray:
        """Draw ``size`` samples (inverse CDF inside a cell chosen by its mass; exponential tails);
        ``rng`` is a seed or a :class:`numpy.random.Generator`, as for every sampler of dpdro."""
        rng = np.random.default_rng(rng)
        cells, tails = self._mass_pieces()
        probs = np.concatenate(([tails[0]], cells, [tails[1]]))
        probs = probs / probs.sum()
        idx = rng.choice(probs.size, size=size, p=probs)
        u = rng.random(size)
        out = np.empty(size)
        x = self.nodes
        lt, rt = idx == 0, idx == probs.size - 1
        if self.period is None:
            out[lt] = x[0] + np.log(u[lt]) / self.tail_rate
            out[rt] = x[-1] - np.log(u[rt]) / self.tail_rate
        mid = ~(lt | rt)
        j = idx[mid] - 1
        s, w = self.slopes[j], np.diff(x)[j]
        z = s * w
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(np.abs(z) < 1e-9, u[mid] * w, np.log1p(u[mid] * np.expm1(z)) / np.where(s == 0, 1, s))
        out[mid] = x[j] + t
        return out


def laplace_noise(epsilon: float, span: float = 1.0, period: float | None = None) -> LogLinearNoise:
    """Laplace density (ε/2)e^{−ε|x|} as a :class:`LogLinearNoise` (nodes −span, 0, span). On a ring
    (``period``) it is e^{−ε|x|} restricted to [−period/2, period/2), renormalised."""
    eps = check_positive("epsilon", epsilon)
    if period is not None:
        h = period / 2
        return LogLinearNoise([-h, 0.0, h], [-eps * h, 0.0, -eps * h], period=period, metadata={"kind": "laplace"})
    return LogLinearNoise([-span, 0.0, span], [-eps * span, 0.0, -eps * span], tail_rate=eps, metadata={"kind": "laplace"})


# --------------------------------------------------------------------------- closed forms (paper)
def laplace_offsets(epsilon: float, k: int) -> np.ndarray:
    """Theorem B.3's optimal result set A* for Laplace noise of scale 1/ε and h(t) = t, from the
    **point sets** the theorem displays (the element-wise formula for odd k has a typo: it gives
    innermost points ±2 log 2/ε instead of ±2 log((t+1)/t)/ε; see the chapter).

    odd k = 2t+1:  {0} ∪ {±2 log((t+1)/i)/ε : i = 1..t}
    even k = 2t:   {±log((t+1)/t)/ε} ∪ {±log(t(t+1)/j²)/ε : j = 1..t−1}
    """
    eps = check_positive("epsilon", epsilon)
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k % 2:
        t = (k - 1) // 2
        pos = [2 * math.log((t + 1) / i) for i in range(1, t + 1)]
        pts = [0.0] + pos + [-p for p in pos]
    else:
        t = k // 2
        pos = [math.log((t + 1) / t)] + [math.log(t * (t + 1) / j**2) for j in range(1, t)]
        pts = pos + [-p for p in pos]
    return np.sort(np.asarray(pts)) / eps


def laplace_optimal_cost(epsilon: float, k: int) -> float:
    """Expected loss of Laplace(1/ε) noise with the offsets of :func:`laplace_offsets` (exact)."""
    a = laplace_offsets(epsilon, k)
    loss = multi_selection_loss(a)
    return laplace_noise(epsilon, span=float(np.max(np.abs(a))) + 1.0).expected_loss(loss)


# --------------------------------------------------------------------------- problem and bounds
@dataclass(frozen=True)
class GeoProblem:
    """minimise E[c(X)] over additive noise X that is ε-geo-DP (log-density ε-Lipschitz).

    ``loss`` is a :class:`dpdro.PiecewiseLinear` (e.g. :func:`multi_selection_loss`). ``period``:
    ``None`` for the real line, or the circumference of a ring (then ``loss`` is read on
    [−period/2, period/2], e.g. :func:`ring_loss`).
    """

    epsilon: float
    loss: PiecewiseLinear
    period: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        if not isinstance(self.loss, PiecewiseLinear):
            raise TypeError("GeoProblem needs a dpdro.PiecewiseLinear loss (exact integrals)")
        if self.period is not None:
            object.__setattr__(self, "period", check_positive("period", self.period))

    def grid(self, beta: float, L: int | None = None, shift: float = 0.0) -> np.ndarray:
        """Nodes: (i + shift)β for |i| ≤ L on the line (must cover the loss's knots); on a ring the
        N + 1 nodes −period/2 + (i + shift)β, i = 0..N, with N = period/β an integer."""
        beta = check_positive("beta", beta)
        if self.period is None:
            if L is None:
                raise ValueError("the line needs L (nodes iβ for |i| <= L)")
            x = (np.arange(-int(L), int(L) + 1) + float(shift)) * beta
            if x[0] > self.loss.knots[0] or x[-1] < self.loss.knots[-1]:
                raise ValueError(f"grid [{x[0]:g}, {x[-1]:g}] must cover the loss knots [{self.loss.knots[0]:g}, {self.loss.knots[-1]:g}]")
            return x
        if shift:
            raise ValueError("shift is only supported on the line (the ring loss is read on [-period/2, period/2])")
        N = int(round(self.period / beta))
        if N < 3 or not math.isclose(N * beta, self.period, rel_tol=1e-9):
            raise ValueError(f"beta must divide the period {self.period:g} (got beta={beta:g})")
        return -self.period / 2 + (np.arange(N + 1) + float(shift)) * (self.period / N)


@dataclass
class GeoUpperBound:
    value: float  # exact expected loss of the released, certified noise
    lp_value: float  # LP optimum (expected loss of the cosh-interpolated density)
    noise: LogLinearNoise
    nodes: np.ndarray
    node_density: np.ndarray  # LP node values p_i (normalised density at the nodes)
    certified: bool
    shrink: float  # η of the repair φ ← mean + (1 − η)(φ − mean) (0 when none was needed)


@dataclass
class GeoLowerBound:
    value: float  # valid lower bound from the dual multipliers
    lp_value: float  # solver objective (for comparison)
    nodes: np.ndarray
    masses: np.ndarray  # optimal cell masses (line: left tail, cells, right tail)


def _linprog(c, A_ub, A_eq, b_eq):
    res = optimize.linprog(c, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=b_eq,
                           bounds=(0, None), method="highs",
                           options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"LP failed: {res.message}")
    return res


def _ratio_rows(n_vars: int, pairs_i, pairs_j, r):
    """Rows  x_i − r·x_j ≤ 0  for each pair."""
    m = len(pairs_i)
    rows = np.repeat(np.arange(m), 2)
    cols = np.column_stack((pairs_i, pairs_j)).ravel()
    vals = np.tile([1.0, -r], m)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(m, n_vars))


def geo_upper_bound(prob: GeoProblem, beta: float, L: int | None = None, *, shift: float = 0.0) -> GeoUpperBound:
    """Certified upper bound: optimal node values of the cosh-interpolated density, released as
    the log-linear interpolation of the same node values (exactly ε-geo-DP, see module docstring)."""
    eps = prob.epsilon
    x = prob.grid(beta, L, shift)
    h = np.diff(x)
    ring = prob.period is not None
    nn = x.size - 1 if ring else x.size  # number of free node values
    ncell = x.size - 1
    j0 = np.arange(ncell)
    j1 = (j0 + 1) % nn if ring else j0 + 1
    eb = np.exp(eps * h)
    sh2 = eb - 1.0 / eb  # 2 sinh(εβ)
    Ip = _cell_integrals(prob.loss, x, eps, 0.0)
    Im = _cell_integrals(prob.loss, x, -eps, 0.0)
    Jp, _ = _exp_moments(eps, h)
    Jm, _ = _exp_moments(-eps, h)
    # density on cell j: u e^{εt} + w e^{-εt}, u = (p1 − p0/eb)/sh2, w = (p0·eb − p1)/sh2
    cost = np.zeros(nn)
    mass = np.zeros(nn)
    np.add.at(cost, j1, (Ip - Im) / sh2)
    np.add.at(cost, j0, (eb * Im - Ip / eb) / sh2)
    np.add.at(mass, j1, (Jp - Jm) / sh2)
    np.add.at(mass, j0, (eb * Jm - Jp / eb) / sh2)
    if not ring:
        cost[-1] += _tail_integral(prob.loss, x[-1], eps, "right")
        cost[0] += _tail_integral(prob.loss, x[0], eps, "left")
        mass[-1] += 1.0 / eps
        mass[0] += 1.0 / eps
    # u >= 0: p0/eb − p1 <= 0 ; w >= 0: p1 − eb p0 <= 0   (eb may vary only if cells differ; uniform here)
    r = float(eb[0])
    A = sparse.vstack([_ratio_rows(nn, j0, j1, r), _ratio_rows(nn, j1, j0, r)]).tocsr()
    res = _linprog(cost, A, mass[None, :], [1.0])
    p = np.maximum(res.x, 0.0)
    p = np.maximum(p, p.max() * 1e-300)
    phi = np.log(p)
    if ring:
        phi = np.append(phi, phi[0])
    noise, eta = _release(x, phi, eps, prob.period)
    return GeoUpperBound(value=noise.expected_loss(prob.loss), lp_value=float(res.fun), noise=noise, nodes=x,
                         node_density=p, certified=noise.certify(eps), shrink=eta)


def _release(x, phi, eps, period):
    """Log-linear noise through (x, φ), shrunk toward its mean until the exact certificate passes."""
    mean = float(np.mean(phi))
    eta = 0.0
    for _ in range(60):
        f = mean + (1.0 - eta) * (phi - mean)
        if period is not None:
            f[-1] = f[0]
        noise = LogLinearNoise(x, f, tail_rate=None if period is not None else eps, period=period,
                               metadata={"epsilon": eps, "shrink": eta})
        if noise.certify(eps):
            return noise, eta
        eta = 1e-12 if eta == 0 else 4 * eta
    raise RuntimeError("could not repair the released noise to certified ε-geo-DP")


def _tilted_infimum(loss, lo, hi, r, M):
    """min over densities g on each cell [lo, hi] with max g / min g ≤ r of ∫ c g / ∫ g, bounded
    below through the infima of c on M equal sub-cells (an exact threshold problem)."""
    t = np.linspace(0.0, 1.0, M + 1)
    a = lo[:, None] + (hi - lo)[:, None] * t[:-1]
    b = lo[:, None] + (hi - lo)[:, None] * t[1:]
    inf = loss.cell_infimum(a.ravel(), b.ravel()).reshape(a.shape)
    inf = np.sort(inf, axis=1)
    # weight r on the q smallest sub-cell infima, 1 on the rest, q = 0..M
    cs = np.concatenate((np.zeros((inf.shape[0], 1)), np.cumsum(inf, axis=1)), axis=1)
    q = np.arange(M + 1)
    vals = (r * cs + (cs[:, -1:] - cs)) / (r * q + (M - q))
    return vals.min(axis=1)


def geo_lower_bound(prob: GeoProblem, beta: float, L: int | None = None, *, shift: float = 0.0, subcells: int = 16) -> GeoLowerBound:
    """Valid lower bound on min E[c(X)] over ε-geo-DP additive noise (constraints in the module
    docstring); the value is recomputed from the dual multipliers, so it is valid whatever the
    solver's accuracy (up to floating-point rounding of a few ulps)."""
    eps = prob.epsilon
    x = prob.grid(beta, L, shift)
    ring = prob.period is not None
    ncell = x.size - 1
    r = math.exp(eps * beta)
    kappa = _tilted_infimum(prob.loss, x[:-1], x[1:], r, int(subcells))
    if ring:
        n = ncell
        cells = np.arange(n)
        i, j = cells, (cells + 1) % n
        c = kappa
        A = sparse.vstack([_ratio_rows(n, i, j, r), _ratio_rows(n, j, i, r)]).tocsr()
    else:
        n = ncell + 2  # [left tail, cells..., right tail]
        cells = np.arange(1, ncell + 1)
        i, j = cells[:-1], cells[1:]
        c = np.concatenate(([float(prob.loss(x[0])) - prob.loss.left_slope / eps], kappa,
                            [float(prob.loss(x[-1])) + prob.loss.right_slope / eps]))
        tails = sparse.csr_matrix(([1.0, 1.0 - r, 1.0, 1.0 - r], ([0, 0, 1, 1], [ncell, n - 1, 1, 0])), shape=(2, n))
        A = sparse.vstack([_ratio_rows(n, i, j, r), _ratio_rows(n, j, i, r), tails]).tocsr()
    res = _linprog(c, A, np.ones((1, n)), [1.0])
    lam = np.maximum(-res.ineqlin.marginals, 0.0)
    y = float(res.eqlin.marginals[0])
    reduced = c + A.T @ lam - y
    value = y + float(np.minimum(reduced, 0.0).sum())
    return GeoLowerBound(value=value, lp_value=float(res.fun), nodes=x, masses=res.x)
