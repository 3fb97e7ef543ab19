"""The upper-bound families of the data-dependent problem P′ and the driver that keeps the best.

Every released mechanism is checked against brute force: the exact release law of a query value ϕ
(point masses and piecewise-constant densities, clamped where the mechanism clamps) is built here
from the mechanism's definition alone, and the hockey-stick divergence between the laws of many
pairs of neighbouring query values (within one piece and across pieces, at the ends of the pieces
and at distance exactly Δf) is integrated exactly; it must never exceed the δ the family
certifies, and (without clamping, which only lowers it) its supremum must reach that δ. Losses are
compared with numerical integration (scipy's quad) of ∫ w(ϕ) E c(M(ϕ) − ϕ) dϕ; LP values with
brute-force LPs over every event; lower bounds with every certified upper bound.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize
from scipy import integrate

import dpdro
from dpdro import data_dependent as dd
from dpdro._budget import TimeBudget
from dpdro.data_dependent.anchors import clamped_independent_noise, constant_mechanism
from dpdro.data_dependent.bounds import output_bounds
from dpdro.data_dependent.costs import output_costs, query_atom_costs, rounding_costs
from dpdro.data_dependent.output import OutputLP

INSTANCES = {
    "l1": dict(epsilon=1.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=2.0),
    "l2-shifted": dict(epsilon=0.7, delta=0.1, sensitivity=0.5, loss="l2", phi_lo=-0.75,
                       phi_hi=0.75),
    "l1-far": dict(epsilon=2.0, delta=0.15, sensitivity=1.0, phi_lo=1000.0, phi_hi=1002.0),
}


def problem(name, **kw):
    return dd.Problem(**{**INSTANCES[name], **kw})


# ---------------------------------------------------------------------------- brute force
def release_law(mech: dd.Mechanism, phi: float, clamp: bool | None = None):
    """The exact law of the release at query value ``phi``, from the mechanism's definition:
    ``(segments, atoms)`` with segments (lo, hi, mass) of uniform mass and atoms {point: mass}."""
    clamp = mech.clamp if clamp is None else clamp
    piece = mech.piece(phi)
    nz = mech.noises[piece]
    atoms: dict = {}
    if mech.kind == "noise":
        base, scale = phi, 1.0
    else:
        a = float(mech.query_atoms[piece])
        g = np.zeros(0) if mech.grid_masses is None else mech.grid_masses[piece]
        base, scale = mech.origin, 1.0 - a - float(g.sum())
        atoms[phi] = a
        for i, m in enumerate(g, start=1):  # the grid points e_0 + i·step
            y = mech.origin + i * mech.edge_step
            atoms[y] = atoms.get(y, 0.0) + float(m)
    if nz.atom > 0:
        atoms[base] = atoms.get(base, 0.0) + scale * nz.atom
    segments = [(base + lo, base + hi, scale * p)
                for lo, hi, p in zip(nz.edges[:-1], nz.edges[1:], nz.probs, strict=True) if p > 0]
    if not clamp:
        return segments, atoms
    e0, e1 = float(mech.piece_edges[0]), float(mech.piece_edges[-1])
    out_seg, out_atoms = [], {}
    for y, m in atoms.items():
        y = min(max(y, e0), e1)
        out_atoms[y] = out_atoms.get(y, 0.0) + m
    for lo, hi, m in segments:
        dens = m / (hi - lo)
        below = max(0.0, min(hi, e0) - lo) * dens
        above = max(0.0, hi - max(lo, e1)) * dens
        if below:
            out_atoms[e0] = out_atoms.get(e0, 0.0) + below
        if above:
            out_atoms[e1] = out_atoms.get(e1, 0.0) + above
        a, b = max(lo, e0), min(hi, e1)
        if b > a:
            out_seg.append((a, b, dens * (b - a)))
    return out_seg, out_atoms


def hockey_stick(first, second, epsilon: float) -> float:
    """sup_A P(A) − e^ε Q(A) for two laws of :func:`release_law`, exactly: the point masses
    compared point by point, the densities integrated between the merged breakpoints."""
    (sp, ap), (sq, aq) = first, second
    e = math.exp(epsilon)
    total = sum(max(0.0, m - e * aq.get(y, 0.0)) for y, m in ap.items())
    bps = np.unique([v for s in sp + sq for v in s[:2]])
    if bps.size < 2:
        return total
    mid = 0.5 * (bps[1:] + bps[:-1])

    def density(segs):
        d = np.zeros(mid.size)
        for lo, hi, m in segs:
            d += np.where((mid >= lo) & (mid < hi), m / (hi - lo), 0.0)
        return d

    return total + float(np.sum(np.diff(bps) * np.maximum(density(sp) - e * density(sq), 0.0)))


def neighbour_pairs(mech: dd.Mechanism, step: float, rng, n_random: int = 60):
    """Pairs (ϕ, ϕ′), ϕ ≠ ϕ′ in Φ, |ϕ − ϕ′| ≤ Δf: every point of a grid of ``step`` and the points
    just below them (the open right ends of the pieces), every admissible pair of those, and
    random pairs."""
    lo, hi, df = float(mech.piece_edges[0]), float(mech.piece_edges[-1]), mech.sensitivity
    grid = lo + step * np.arange(round((hi - lo) / step) + 1)
    tiny = 1e-9 * max(1.0, abs(lo), abs(hi))
    pts = np.unique(np.concatenate((grid[:-1], grid[1:] - tiny)))
    pairs = [(a, b) for a in pts for b in pts if a != b and abs(a - b) <= df]
    for _ in range(n_random):
        a = rng.uniform(lo, hi)
        b = a + rng.uniform(-df, df)
        if lo <= b < hi and a != b:
            pairs.append((a, b))
    return pairs


def brute_delta(mech: dd.Mechanism, step: float, *, clamp=None, seed=0):
    """(largest δ over the pairs, pairs within one piece seen, pairs across pieces seen)."""
    rng = np.random.default_rng(seed)
    worst, same, across = 0.0, 0, 0
    laws: dict = {}
    for a, b in neighbour_pairs(mech, step, rng):
        for v in (a, b):
            if v not in laws:
                laws[v] = release_law(mech, v, clamp)
        worst = max(worst, hockey_stick(laws[a], laws[b], mech.epsilon))
        same += mech.piece(a) == mech.piece(b)
        across += mech.piece(a) != mech.piece(b)
    return worst, same, across


def check_certificate(mech: dd.Mechanism, step: float, delta: float) -> float:
    """The certified δ is ≤ δ, never below the brute-force one (clamped or not), and reached by
    the unclamped brute force up to 1e-6 (the certificate is the exact supremum)."""
    certified = mech.certify()
    assert certified <= delta
    worst, same, across = brute_delta(mech, step)
    assert same > 0 and (across > 0 or mech.n_pieces == 1)
    assert worst <= certified + 1e-9
    if mech.clamp:
        worst, _, _ = brute_delta(mech, step, clamp=False)
        assert worst <= certified + 1e-9
    assert worst >= certified - 1e-6
    return certified


def integrated_loss(mech: dd.Mechanism, loss: dpdro.Loss, step: float) -> float:
    """(1/|Φ|)∫_Φ E c(M(ϕ) − ϕ) dϕ (uniform weight) by nested quadrature, piece of ``step`` by
    piece of ``step`` (the integrand is smooth inside each)."""
    lo, hi = float(mech.piece_edges[0]), float(mech.piece_edges[-1])

    def c(x):
        return float(np.asarray(loss(np.array([x])), dtype=float)[0])

    def expected(phi):
        segs, atoms = release_law(mech, phi)
        out = sum(m * c(y - phi) for y, m in atoms.items())
        for a, b, m in segs:
            pts = [phi] if a < phi < b else None
            out += m / (b - a) * integrate.quad(lambda y: c(y - phi), a, b, points=pts,
                                                epsabs=1e-13, epsrel=1e-12)[0]
        return out

    edges = lo + step * np.arange(round((hi - lo) / step) + 1)
    total = sum(integrate.quad(expected, a, b, epsabs=1e-12, epsrel=1e-10)[0]
                for a, b in itertools.pairwise(edges))
    return total / (hi - lo)


# ------------------------------------------------------------------ each family's certificate
@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("pieces", [None, 2])
@pytest.mark.parametrize("family", ["upper", "points"])
def test_output_family_certificate_vs_brute_force(name, pieces, family):
    prob = problem(name, pieces=pieces)
    _, ub = output_bounds(prob, 0.25, lower=False, families=(family,))
    mech = ub.mechanism
    assert mech.kind == "output" and mech.clamp
    assert (mech.grid_masses is not None) == (family == "points")
    assert mech.n_pieces == (prob.grouping(0.25).K if pieces is None else pieces)
    check_certificate(mech, 0.125, prob.delta)


@pytest.mark.parametrize("step, expected", [(1 / 12, 1.0), (float(np.nextafter(1 / 12, 1)), 0.5)])
def test_output_certificate_counts_pieces_a_float_tick_short_of_delta_f(step, expected):
    """Pieces [0, s), [s, 7s), [7s, 8s) with Δf = 1/2: the first and last hold query values at
    distance below Δf exactly when six float ticks s fall short of 1/2 (s = float(1/12) = 1/12 −
    2⁻⁵⁷·…), and then their laws (disjoint: δ = 1) must be compared; one float up they are 1/2
    or more apart and the worst pair is the middle law against a neighbour (δ = 1/2 at ε = 1)."""
    near = 6 * Fraction(step) < Fraction(1, 2)
    assert near == (expected == 1.0)
    edges = np.arange(-1, 10) * step
    a, b = np.eye(10)[1], np.eye(10)[2]
    laws = [dpdro.PiecewiseUniform(edges, p, grid=step) for p in (a, (a + b) / 2, b)]
    mech = dd.Mechanism(tuple(laws), np.array([0.0]), 1.0, 0.5, 0.5, kind="output",
                        query_atoms=np.zeros(3), clamp=True, edge_ticks=np.array([0, 1, 7, 8]),
                        edge_step=step)
    assert mech.certify() == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.parametrize("centred, atom", [(False, False), (True, True)])
def test_noise_family_certificate_vs_brute_force(name, centred, atom):
    prob = problem(name)
    A = math.ceil(dpdro.mechanisms.truncated_laplace_half_width(
        epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity))
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=int(A / 0.25), beta=0.25),
                        centred=centred, atom=atom)
    assert ub.mechanism.kind == "noise" and not ub.mechanism.clamp
    check_certificate(ub.mechanism, 0.125, prob.delta)


def test_families_on_a_float_rounded_up_grid_vs_brute_force():
    """β = the smallest float ≥ Δf/6 (1/6 is not a float; the driver's path has such steps): both
    families' released mechanisms are certified, and no pair of query values beats the certificate
    (the driver's test below covers β = 1/12 on the ℓ2 instance)."""
    from dpdro._rounding import float_up as _float_up

    prob = problem("l1")
    beta = _float_up(Fraction(prob.sensitivity).limit_denominator(100) / 6)
    assert Fraction(beta) != Fraction(prob.sensitivity) / 6
    _, ub = output_bounds(prob, beta, lower=False)
    check_certificate(ub.mechanism, beta / 2, prob.delta)
    A = math.ceil(dpdro.mechanisms.truncated_laplace_half_width(
        epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity))
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=math.ceil(A / beta), beta=beta),
                        centred=True, atom=True)
    check_certificate(ub.mechanism, beta / 2, prob.delta)


@pytest.mark.parametrize("K", range(1, 10))
def test_point_columns_mirror_the_grid_points(K):
    """Column c ↦ K + 1 − c is point i ↦ K − i; every point 0 … K has a column; odd K leaves the
    middle column without one."""
    from dpdro.data_dependent.costs import point_columns

    pc = point_columns(K)
    assert pc.size == K + 2 and set(pc[pc >= 0]) == set(range(K + 1))
    for c in range(K + 2):
        assert (pc[c] < 0) == (pc[K + 1 - c] < 0)
        if pc[c] >= 0:
            assert pc[K + 1 - c] == K - pc[c]
    assert np.sum(pc < 0) == K % 2


def test_grid_point_mechanism_serialises_moves_and_samples_its_law():
    """The grid-point family's mechanism: the same certificate after to_dict/from_dict and moved(),
    and releases at the grid points with their probabilities (20 000 draws, within 5σ)."""
    prob = problem("l1", epsilon=5.0, delta=0.25)
    _, ub = output_bounds(prob, 0.25, lower=False, families=("points",))
    mech = ub.mechanism
    assert mech.grid_masses is not None and mech.grid_masses.sum() > 0
    for other in (dd.Mechanism.from_dict(mech.to_dict()), mech.moved(1e6)):
        assert other.certify() == mech.certify()
        np.testing.assert_array_equal(other.grid_masses, mech.grid_masses)
    phi, n = 0.6, 20_000
    piece = mech.piece(phi)
    out = mech.release(np.full(n, phi), rng=7)
    for i, p in enumerate(mech.grid_masses[piece], start=1):
        hits = np.mean(out == mech.origin + i * mech.edge_step)
        assert abs(hits - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12
    assert abs(np.mean(out == phi) - mech.query_atoms[piece]) < 0.02


def test_invalid_grid_masses_are_refused():
    law = dpdro.PiecewiseUniform(np.arange(-1, 4) * 0.5, np.full(4, 0.25), grid=0.5)
    kw = dict(kind="output", query_atoms=np.array([0.5, 0.0]), clamp=True,
              edge_ticks=np.array([0, 1, 2]), edge_step=0.5)
    args = ((law, law), np.array([0.0]), 1.0, 0.1, 1.0)
    assert dd.Mechanism(*args, **kw, grid_masses=np.array([[0.5], [1.0]])).certify() >= 0.5
    for bad in ([[0.6], [0.0]], [[-0.1], [0.0]], [[0.1, 0.1], [0.0, 0.0]], [[np.nan], [0.0]]):
        with pytest.raises(ValueError, match="grid_masses"):
            dd.Mechanism(*args, **kw, grid_masses=np.array(bad))
    with pytest.raises(ValueError, match="grid_masses"):
        dd.Mechanism((law, law), np.array([0.0, 0.5, 1.0]), 1.0, 0.1, 1.0, kind="noise",
                     grid_masses=np.zeros((2, 1)))


def test_grid_points_only_on_grids_that_refine_the_best_one():
    from dpdro.data_dependent.optimal import _PathState

    state = _PathState()
    assert state.families(24) == ("upper", "points")
    state.points, state.points_K = 0.1, 32
    assert state.families(48) == ("upper",)
    assert state.families(64) == ("upper", "points")


def test_output_family_on_a_float_rounded_down_grid_counts_the_near_pairs():
    """β = float(Δf/3), a float just *below* Δf/3: pieces three steps apart hold query values
    closer than Δf, so the LP must compare their laws as the certificate does. It had not: its
    optimum violated the certificate and the released mechanism was mixed with the constant one
    (repair weight 0.74, released loss 0.41; on Figure 3's (5, 0.25) at β = 1/12: weight 0.74,
    loss 0.765 against 0.0998 one float up). The driver rounds such a β up, as its default path."""
    prob = problem("l1", epsilon=5.0, delta=0.25)
    beta, up = 1 / 3, float(np.nextafter(1 / 3, 1))
    assert 3 * Fraction(beta) < Fraction(prob.sensitivity) <= 3 * Fraction(up)
    _, ub = output_bounds(prob, beta, lower=False)
    assert ub.repair_weight == 0.0 and ub.value < 0.1
    check_certificate(ub.mechanism, beta / 2, prob.delta)
    rows = [dd.optimal_noise(prob, betas=[b]).history[0] for b in (beta, up)]
    assert rows[0]["beta"] == up
    assert rows[0]["output"] == rows[1]["output"] < ub.value


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_anchor_certificates_vs_brute_force(name):
    prob = problem(name)
    const = constant_mechanism(prob, 0.25)
    assert const.mechanism.kind == "output" and const.mechanism.certify() <= 1e-12
    assert brute_delta(const.mechanism, 0.25)[0] <= 1e-12
    clamped = clamped_independent_noise(prob, 0.05, TimeBudget(60.0))
    assert clamped.mechanism.kind == "noise" and clamped.mechanism.clamp
    check_certificate(clamped.mechanism, 0.25, prob.delta)


@pytest.mark.parametrize("hi", [3.7, 0.3, 0.5])
def test_one_noise_certifies_on_a_range_off_its_lattice(hi):
    """One noise for every query value (the clamped anchor) on Φ = [0, hi): its certificate is the
    noise's own at min(|Φ|, Δf), also when hi is not on the noise's lattice (3.7, 0.3: the family
    certificate had refused it, so the released anchor's ``certify`` raised), agrees with the
    family certificate on the lattice (0.5) and with the brute force over pairs of query values."""
    probs = np.array([1, 2, 4, 8, 8, 4, 2, 1]) / 37.5
    noise = dpdro.PiecewiseUniform(np.arange(-4, 5) * 0.25, probs, grid=0.25, atom=0.2)
    mech = dd.Mechanism((noise,), np.array([0.0, hi]), 1.0, 0.9, 1.0, kind="noise")
    expected = dpdro.certify_delta(noise, 1.0, min(hi, 1.0))
    assert mech.certify() == expected
    assert dd.Mechanism.from_dict(mech.to_dict()).certify() == expected
    if hi == 0.5:
        family = dd.privacy_profile([noise], [0.0, hi], 1.0, 1.0).delta
        assert family == pytest.approx(expected, abs=1e-12)
    if hi < 1.0:  # (every pair of query values then has a shift |φ| < hi)
        worst, _, _ = brute_delta(mech, 0.05)
        assert worst <= expected + 1e-12 and worst >= expected - 1e-9


def test_clamped_anchor_on_a_spent_budget_is_skipped():
    """No time left: the anchor is skipped (the data-independent solve had been handed a negative
    time limit, a ValueError out of dd.optimal_noise at time_limit = 0.01 under load)."""
    budget = TimeBudget(1e-9)
    time.sleep(1e-3)
    assert clamped_independent_noise(problem("l1"), 0.05, budget) is None
    # and below optimal_noise's δ range (its ValueError had ended dd.optimal_noise at δ = 1e-15)
    tiny_delta = dd.Problem(**{**INSTANCES["l1"], "delta": 1e-15})
    assert clamped_independent_noise(tiny_delta, 0.05, TimeBudget(10.0)) is None


def test_output_certificate_detects_a_violation():
    """Moving mass of one piece's law onto cells the neighbouring piece does not use breaks the
    certificate, and the brute force sees the same δ."""
    prob = problem("l1")
    _, ub = output_bounds(prob, 0.5, lower=False, families=("upper",))
    mech = ub.mechanism
    laws = list(mech.noises)
    probs = np.zeros_like(laws[0].probs)
    probs[0] = 1.0
    laws[0] = dpdro.PiecewiseUniform(laws[0].edges, probs, grid=0.5)
    bad = dd.Mechanism(tuple(laws), mech.piece_edges, mech.epsilon, mech.delta, mech.sensitivity,
                       kind="output", query_atoms=mech.query_atoms)
    certified = bad.certify()
    assert certified > prob.delta
    assert brute_delta(bad, 0.25)[0] == pytest.approx(certified, abs=1e-9)


# ---------------------------------------------------------------------------- losses
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_output_family_loss_vs_numerical_integration(name):
    prob = problem(name)
    _, ub = output_bounds(prob, 0.5, lower=False)
    assert ub.value == pytest.approx(integrated_loss(ub.mechanism, prob.loss, 0.5), rel=1e-8)
    const = constant_mechanism(prob, 0.5)
    assert const.value == pytest.approx(integrated_loss(const.mechanism, prob.loss, 0.5),
                                        rel=1e-8)


@pytest.mark.parametrize("name", ["l1", "l2-shifted"])
def test_clamped_anchor_loss_vs_numerical_integration(name):
    prob = problem(name)
    clamped = clamped_independent_noise(prob, 0.05, TimeBudget(60.0))
    width = prob.phi_hi - prob.phi_lo
    # the integrand has kinks where the clamping starts: integrate on a fine grid of pieces
    approx = integrated_loss(clamped.mechanism, prob.loss, width / 24)
    assert clamped.value == pytest.approx(approx, rel=1e-6)


def test_piecewise_constant_weight_output_costs():
    """A weight 3:1 on the two halves of Φ: the costs are the weighted sums of the uniform ones."""
    uni = problem("l1")
    wtd = problem("l1", weight=([0.0, 1.0, 2.0], [3.0, 1.0]))
    K = uni.grouping(0.5).K
    cu = output_costs(uni, 0.5, K, [uni.loss] * K)
    cw = output_costs(wtd, 0.5, K, [wtd.loss] * K)
    scale = np.repeat([1.5, 0.5], K // 2)[:, None]
    np.testing.assert_allclose(cw, scale * cu, rtol=1e-12)
    np.testing.assert_allclose(query_atom_costs(wtd, 0.5, K, [wtd.loss] * K), 0.0)


# ---------------------------------------------------------------------------- LPs vs brute force
def _brute_output_lp(prob, beta, mode):
    """The output-space LP with every event of every pair of (fine) pieces, by scipy's HiGHS: laws
    on the output cells ("upper"; the two end cells released clamped), on the K + 1 grid points
    ("points"; costs by quadrature) or the rounded laws of D′_R ("lower")."""
    K, n = prob.grouping(beta).K, round(prob.sensitivity / beta)
    losses = [prob.loss] * K
    n_s = K + 1 if mode == "points" else K + 2  # the parts of an event
    n_c = n_s + 1
    excess = 0.0
    if mode == "upper":
        cost = np.hstack([output_costs(prob, beta, K, losses),
                          query_atom_costs(prob, beta, K, losses)[:, None]])
    elif mode == "points":
        def point(k, i):
            return integrate.quad(lambda f: float(prob.loss(np.array([i * beta - f]))[0]),
                                  k * beta, (k + 1) * beta, points=[i * beta])[0]

        points = np.array([[point(k, i) for i in range(K + 1)] for k in range(K)])
        cost = np.hstack([points / (K * beta), query_atom_costs(prob, beta, K, losses)[:, None]])
    else:
        C, wts = rounding_costs(prob, beta, K, losses)
        cost = np.hstack([C, np.zeros((K, 1))])
        excess = float(np.sum(wts)) * prob.loss.grid_interpolation_excess(beta)
    e = math.exp(prob.epsilon)
    rows = []
    for k, m in itertools.product(range(K), repeat=2):
        if k == m and mode == "lower" or abs(k - m) > n:
            continue
        for A in itertools.product([0, 1], repeat=n_s):
            if k == m and not any(A):
                continue
            row = np.zeros(K * n_c)
            row[k * n_c: k * n_c + n_s] += A
            row[m * n_c: m * n_c + n_s] -= e * np.array(A)
            row[k * n_c + n_s] += 1.0
            rows.append(row)
    eq = np.kron(np.eye(K), np.ones((1, n_c)))
    bounds = [(0, None)] * (K * n_c)
    if mode == "lower":
        for k in range(K):
            bounds[k * n_c + n_s] = (0, 0)
    res = scipy.optimize.linprog(cost.ravel(), A_ub=np.array(rows),
                                 b_ub=np.full(len(rows), prob.delta), A_eq=eq, b_eq=np.ones(K),
                                 bounds=bounds, method="highs")
    assert res.status == 0
    return res.fun - excess


@pytest.mark.parametrize("name", ["l1", "l2-shifted"])
def test_output_lps_vs_brute_force(name):
    """Both modes of the output-space LP (cutting planes, mirror symmetry, safe dual bound) agree
    with the LP over every event; the lower bound is never above it."""
    prob = problem(name)
    lb, ub = output_bounds(prob, 0.5)
    brute_lower = _brute_output_lp(prob, 0.5, "lower")
    assert lb.value <= brute_lower + 1e-12
    assert lb.value == pytest.approx(brute_lower, rel=1e-6)
    # the upper LPs run at δ(1 − margin); the released value is within the margin's effect
    brute = {f: _brute_output_lp(prob, 0.5, f) for f in ("upper", "points")}
    assert ub.value == pytest.approx(min(brute.values()), rel=1e-5)
    for f in brute:
        _, ub = output_bounds(prob, 0.5, lower=False, families=(f,))
        assert ub.value == pytest.approx(brute[f], rel=1e-5)
    assert OutputLP(prob, 0.5, "lower").symmetric


# ---------------------------------------------------------------------------- lower ≤ upper
@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_lower_bounds_below_every_certified_upper_bound(name):
    """D′_R (clamped, output coordinates; and in noise coordinates) on three grids is below every
    certified mechanism of every family on every grid, and below the brute-force optima of the
    output family (restrictions of P′, so at least its optimum)."""
    prob = problem(name)
    lowers, uppers = [], []
    for beta in (0.5, 0.25, 0.125):
        lb, ub = output_bounds(prob, beta)
        lowers.append(lb.value)
        uppers.append(ub.value)
        part = dpdro.Partition.uniform(L=round(4 * prob.sensitivity / beta), beta=beta)
        lowers.append(dd.lower_bound(prob, part).value)
        uppers.append(dd.upper_bound(prob, part, centred=True, atom=True).value)
    uppers.append(constant_mechanism(prob, 0.25).value)
    uppers.append(clamped_independent_noise(prob, 0.05, TimeBudget(60.0)).value)
    uppers += [_brute_output_lp(prob, 0.5, f) for f in ("upper", "points")]
    assert max(lowers) <= min(uppers)
    assert max(lowers) > 0


# ---------------------------------------------------------------------------- the driver
def test_driver_keeps_the_best_of_every_step():
    """Along a path that ends on a coarser grid (whose bounds are weaker), the result is the best
    of all steps; the running best never gets worse; the mechanism's kind matches its family."""
    prob = problem("l1")
    res = dd.optimal_noise(prob, rel_gap=1e-6, betas=[0.125, 0.5, 1.0], time_limit=120)
    h = res.history
    assert len(h) == 3
    best_up = [r["best_upper"] for r in h]
    best_lo = [r["best_lower"] for r in h]
    assert best_up == sorted(best_up, reverse=True) and best_lo == sorted(best_lo)
    assert h[2]["lower"] < h[0]["lower"]  # the coarse grid is weaker, and not kept
    assert res.lower.value == max(r["lower"] for r in h if r["lower"] is not None)
    solved = [r[k] for r in h for k in ("output", "noise") if r[k] is not None]
    assert res.upper.value <= min(solved)
    assert res.mechanism.certify() <= prob.delta
    kind = {"output": "output", "output points": "output", "constant": "output", "noise": "noise",
            "clamped noise": "noise"}
    assert res.mechanism.kind == kind[res.family]
    assert res.lower.value <= res.upper.value


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_driver_result_is_certified_by_brute_force(name):
    prob = problem(name)
    res = dd.optimal_noise(prob, rel_gap=0.05, time_limit=60)
    assert res.gap <= 0.05 and res.stopped == "gap"
    step = min(res.history[-1]["beta"], prob.sensitivity / 4) / 2
    check_certificate(res.mechanism, step, prob.delta)


@pytest.mark.parametrize("limit", [0.5, 2.0])
def test_driver_and_output_bounds_honour_the_time_limit(limit):
    """Within 10% (plus the few tenths of a second of building one LP on a shared machine; the
    benchmark script measures the overshoot precisely)."""
    prob = dd.Problem(epsilon=5.0, delta=0.25, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    t = time.perf_counter()
    res = dd.optimal_noise(prob, rel_gap=1e-3, time_limit=limit)
    assert time.perf_counter() - t <= 1.1 * limit + 0.5
    assert res.stopped == "time limit"
    if res.upper is not None:
        assert res.mechanism.certify() <= prob.delta
    t = time.perf_counter()
    try:
        lb, _ = output_bounds(prob, 1 / 16, time_limit=limit)
    except TimeoutError:
        lb = None
    assert time.perf_counter() - t <= 1.1 * limit + 0.5
    if lb is not None:
        assert lb.value <= output_bounds(prob, 0.25, lower=False)[1].value


def test_driver_trace_is_the_running_best():
    prob = problem("l2-shifted")
    res = dd.optimal_noise(prob, rel_gap=0.02, time_limit=120)
    seconds = [t for t, _, _ in res.trace]
    ups = [u for _, u, _ in res.trace if u is not None]
    los = [lo for _, _, lo in res.trace if lo is not None]
    assert seconds == sorted(seconds) and seconds[-1] <= res.seconds
    assert ups == sorted(ups, reverse=True) and los == sorted(los)
    assert res.trace[-1][1:] == (res.upper.value, res.lower.value)


def test_paused_lower_rounds_resume_to_the_same_bound():
    """Pausing the lower bound's rounds for the upper bound and resuming them from the shared rows
    gives the bound of the rounds run without a pause; the upper bound is the same too."""
    from dpdro.data_dependent.bounds import output_rounds

    prob = dd.Problem(epsilon=5.0, delta=0.25, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    seen = []
    lb, ub = output_rounds(prob, 0.25, budget=TimeBudget(120.0), pause=lambda obj, pred: True,
                           on_lower=lambda b: seen.append(("lower", b.value)),
                           on_upper=lambda b: seen.append(("upper", b.value)))
    plain_lb, plain_ub = output_bounds(prob, 0.25)
    kinds = [k for k, _ in seen]
    # every round's bound reported, the upper bounds between the paused and the resumed rounds
    assert kinds[0] == "lower" and "upper" in kinds and kinds[-1] == "lower"
    lows = [v for k, v in seen if k == "lower"]
    assert lows == sorted(lows) and lows[-1] == lb.value
    assert lb.value == pytest.approx(plain_lb.value, rel=1e-7)
    assert ub.value == pytest.approx(plain_ub.value, rel=1e-7)
    assert ub.mechanism.certify() <= prob.delta


def test_lower_rounds_stop_once_the_bound_is_good_enough():
    """The rounds report every relaxation's bound and stop as soon as ``resume()`` says no more is
    wanted: here after the first round whose bound reaches a threshold, well before they
    converge."""
    from dpdro.data_dependent.bounds import output_rounds

    prob = dd.Problem(epsilon=5.0, delta=0.25, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    every = []
    output_rounds(prob, 0.125, budget=TimeBudget(120.0), upper=lambda: False,
                  on_lower=lambda b: every.append(b.value))
    threshold = every[2]
    assert threshold < every[-1]  # (more rounds follow without the stop)
    seen = []
    lb, _ = output_rounds(prob, 0.125, budget=TimeBudget(120.0), upper=lambda: False,
                          on_lower=lambda b: seen.append(b.value),
                          resume=lambda: not seen or seen[-1] < threshold)
    assert seen == every[:3] and lb.value == threshold


def test_interior_point_lower_rounds_give_the_same_bound():
    """The lower mode re-solves large models by the interior-point method without crossover
    (output module, "Solving"): from the first round on (``INTERIOR_ROWS`` patched to 0) the
    clamped D′_R bound is the one of the warm dual simplex rounds, within the interior point's
    tolerance, and it is a certified bound of the same LP."""
    from dpdro.data_dependent import output

    prob = dd.Problem(epsilon=5.0, delta=0.25, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)
    simplex, _ = output_bounds(prob, 0.125, upper=False)
    original = output.INTERIOR_ROWS
    try:
        output.INTERIOR_ROWS = 0
        interior, _ = output_bounds(prob, 0.125, upper=False)
    finally:
        output.INTERIOR_ROWS = original
    assert original > 0
    assert interior.value == pytest.approx(simplex.value, rel=1e-6)
    assert interior.value <= simplex.lp_value + 1e-9


# ---------------------------------------------------------------- scale-free certificates
def exact_release_law(mech: dd.Mechanism, phi: float):
    """:func:`release_law` in exact rational arithmetic and absolute coordinates: the pieces and
    the clamp from the exact edges e_0 + t_l·step, the laws placed at the float ϕ or e_0 exactly."""
    o, step = Fraction(mech.origin), Fraction(mech.edge_step)
    edges = [o + int(t) * step for t in mech.edge_ticks]
    x = Fraction(phi)
    piece = max(i for i in range(mech.n_pieces) if edges[i] <= x)
    assert x < edges[-1]
    nz = mech.noises[piece]
    atoms: dict = {}
    if mech.kind == "noise":
        base, scale = x, Fraction(1)
    else:
        a = Fraction(float(mech.query_atoms[piece]))
        base, scale = o, 1 - a
        atoms[x] = a
    if nz.atom > 0:
        atoms[base] = atoms.get(base, 0) + scale * Fraction(nz.atom)
    segs = [(base + Fraction(lo), base + Fraction(hi), scale * Fraction(p))
            for lo, hi, p in zip(nz.edges[:-1], nz.edges[1:], nz.probs, strict=True) if p > 0]
    if not mech.clamp:
        return segs, atoms
    e0, e1 = edges[0], edges[-1]
    out_seg, out_atoms = [], {}
    for y, m in atoms.items():
        y = min(max(y, e0), e1)
        out_atoms[y] = out_atoms.get(y, 0) + m
    for lo, hi, m in segs:
        dens = m / (hi - lo)
        for end, mass in ((e0, max(0, min(hi, e0) - lo) * dens),
                          (e1, max(0, hi - max(lo, e1)) * dens)):
            if mass:
                out_atoms[end] = out_atoms.get(end, 0) + mass
        a, b = max(lo, e0), min(hi, e1)
        if b > a:
            out_seg.append((a, b, dens * (b - a)))
    return out_seg, out_atoms


def exact_hockey_stick(first, second, epsilon: float) -> Fraction:
    """sup_A P(A) − e^ε Q(A) of two laws of :func:`exact_release_law`, in rationals (e^ε the
    float's value)."""
    (sp, ap), (sq, aq) = first, second
    e = Fraction(math.exp(epsilon))
    total = sum((max(Fraction(0), m - e * aq.get(y, 0)) for y, m in ap.items()), Fraction(0))
    bps = sorted({v for s in sp + sq for v in s[:2]})
    for a, b in itertools.pairwise(bps):
        dp = sum((m / (hi - lo) for lo, hi, m in sp if lo <= a and b <= hi), Fraction(0))
        dq = sum((m / (hi - lo) for lo, hi, m in sq if lo <= a and b <= hi), Fraction(0))
        total += max(Fraction(0), (b - a) * (dp - e * dq))
    return total


def exact_brute_delta(mech: dd.Mechanism, rel_points) -> float:
    """The largest exact hockey-stick divergence over pairs of float query values e_0 + r (r in
    ``rel_points``, the sum rounded to a float, and the float just below each) at distance ≤ Δf."""
    o = mech.origin
    pts = sorted({v for r in rel_points for v in (o + r, np.nextafter(o + r, -np.inf))
                  if mech.piece_edges[0] <= v < mech.piece_edges[-1]})
    df = Fraction(mech.sensitivity)
    laws = {v: exact_release_law(mech, v) for v in pts}
    worst = Fraction(0)
    for a in pts:
        for b in pts:
            if a != b and abs(Fraction(a) - Fraction(b)) <= df:
                worst = max(worst, exact_hockey_stick(laws[a], laws[b], mech.epsilon))
    return float(worst)


FIG3_MEDIUM = dict(epsilon=1.0, delta=0.2, sensitivity=2.0, loss="l1")


def _released(prob: dd.Problem) -> dict:
    """One released mechanism per family on the grid β = 1/2."""
    A = math.ceil(dpdro.mechanisms.truncated_laplace_half_width(
        epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity))
    part = dpdro.Partition.uniform(L=2 * A, beta=0.5)
    return {"output": output_bounds(prob, 0.5, lower=False)[1],
            "noise": dd.upper_bound(prob, part),
            "noise, centred with atoms": dd.upper_bound(prob, part, centred=True, atom=True),
            "constant": constant_mechanism(prob, 0.5)}


def test_released_families_certify_at_delta_itself_far_from_zero():
    """On [10⁶, 10⁶ + 4) the released families are the same as on [0, 4) (Figure 3's medium
    instance): the same laws, the same certificate (every pair's δ and the error bound, bit for
    bit: it uses the edges relative to the first, in ticks), the same loss, and no repair by
    mixing: each certifies at δ itself (the LP is solved at δ(1 − 1e-9), no δ − slack)."""
    from dpdro.data_dependent.privacy import privacy_profile

    near = _released(dd.Problem(**FIG3_MEDIUM, phi_lo=0.0, phi_hi=4.0))
    far = _released(dd.Problem(**FIG3_MEDIUM, phi_lo=1e6, phi_hi=1e6 + 4.0))
    for name, ub in far.items():
        m0, m1 = near[name].mechanism, ub.mechanism
        assert m1.origin == 1e6 and m1.edge_ticks is not None, name
        for a, b in zip(m0.noises, m1.noises, strict=True):
            assert np.array_equal(a.edges, b.edges) and np.array_equal(a.probs, b.probs), name
            assert a.atom == b.atom, name
        p0, p1 = (privacy_profile(m.noises, m.piece_edges, m.epsilon, m.sensitivity,
                                  **m._certificate_options()) for m in (m0, m1))
        assert np.array_equal(p0.deltas, p1.deltas) and p0.error_bound == p1.error_bound, name
        assert m1.certify() == m0.certify() == ub.certified_delta <= 0.2, name
        assert ub.repair_weight == 0.0 and ub.value == near[name].value, name


@pytest.mark.parametrize("origin", [1e6 + 0.1, 1234567.891, 1e12 + 0.3, -3e15])
def test_moved_mechanisms_certify_exactly_as_at_zero(origin):
    """Moving a released mechanism anywhere (edges rounding to floats with errors up to 0.25, or to
    equal floats at −3·10¹⁵) leaves its certificate unchanged, and the pieces of query values
    next to the float edges are decided exactly."""
    prob = dd.Problem(epsilon=2.0, delta=0.15, sensitivity=1.0, phi_lo=0.0, phi_hi=1.5,
                      pieces=[0.0, 0.25, 1.0, 1.5])
    for ub in (dd.upper_bound(prob, dpdro.Partition.uniform(L=8, beta=0.25)),
               output_bounds(prob, 0.25, lower=False)[1]):
        mech = ub.mechanism
        moved = mech.moved(origin)
        assert moved.certify() == mech.certify() <= prob.delta
        e = Fraction(moved.origin) + Fraction(0.25)  # the exact edge e_0 + 0.25
        below, above = (float(e - Fraction(1, 2**70)), float(e + Fraction(1, 2**70)))
        for v in (below, above, moved.origin):
            exact_piece = 0 if Fraction(v) < e else 1
            assert moved.piece(v) == exact_piece
            assert moved.piece(np.array([v]))[0] == exact_piece


@pytest.mark.parametrize("kind", ["noise", "output"])
def test_certificate_vs_exact_brute_force_at_a_large_offset(kind):
    """A tiny mechanism moved to [10⁶ + 0.1, 10⁶ + 2.1): the hockey-stick divergence of the release
    laws of every pair of float query values at the grid points, just below them and at distance
    exactly Δf, computed in exact rationals in absolute coordinates, never exceeds the certified
    δ (which is that at 0) and reaches it."""
    prob = dd.Problem(epsilon=2.0, delta=0.15, sensitivity=1.0, phi_lo=0.0, phi_hi=2.0, pieces=2)
    if kind == "noise":
        ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=8, beta=0.5))
    else:
        ub = output_bounds(prob, 0.5, lower=False)[1]
    mech = ub.mechanism.moved(1e6 + 0.1)
    certified = mech.certify()
    assert certified == ub.mechanism.certify() <= prob.delta
    worst = exact_brute_delta(mech, np.arange(0, 9) * 0.25)
    assert worst <= certified + 1e-12
    assert worst >= certified - 1e-6


# ------------------------------------------------------- the driver at any scale and position
SCALED = dict(epsilon=1.0, delta=0.2)


@functools.cache
def _unit_result(loss: str):
    return dd.optimal_noise(dd.Problem(**SCALED, loss=loss, phi_lo=0.0, phi_hi=2.0), rel_gap=0.1,
                            time_limit=120)


@pytest.mark.parametrize(
    "sensitivity, phi_lo, loss",
    [(1e-3, 0.0, "l1"), (1e6, 0.0, "l1"), (1.0, 1e6, "l1"), (0.75, -2.5, "l2"),
     (2.0**-10, 1e6, "l2")],
)
def test_driver_result_is_the_unit_result_scaled(sensitivity, phi_lo, loss):
    """P′ at (Δf, [φ_lo, φ_lo + 2Δf)) is solved at (1, [0, 2)) and mapped back: the bounds are
    Δf^d times the unit ones, the path is β·Δf, the mechanism's edges φ_lo + Δf·(unit edges) and its
    laws scaled by Δf, certified at δ at Δf."""
    unit = _unit_result(loss)
    prob = dd.Problem(**SCALED, sensitivity=sensitivity, loss=loss, phi_lo=phi_lo,
                      phi_hi=phi_lo + 2.0 * sensitivity)
    res = dd.optimal_noise(prob, rel_gap=0.1, time_limit=120)
    power = sensitivity ** prob.loss.degree
    assert res.upper.value / power == pytest.approx(unit.upper.value, rel=1e-9)
    assert res.lower.value / power == pytest.approx(unit.lower.value, rel=1e-9)
    assert res.lower.value <= res.upper.value and res.family == unit.family
    assert [r["beta"] for r in res.history] == pytest.approx(
        [r["beta"] * sensitivity for r in unit.history], rel=1e-15)
    assert len(res.trace) == len(unit.trace)
    assert res.trace[-1][1:] == (res.upper.value, res.lower.value)
    # the history names the released value recomputed at Δf, as the result does
    assert res.history[-1]["best_upper"] == res.upper.value
    assert res.history[-1]["best_lower"] == res.lower.value
    for (_, u1, l1), (_, u0, l0) in zip(res.trace, unit.trace, strict=True):
        assert (u1 is None, l1 is None) == (u0 is None, l0 is None)
        assert u1 is None or u1 / power == pytest.approx(u0, rel=1e-9)
        assert l1 is None or l1 / power == pytest.approx(l0, rel=1e-9)
    m, m1 = unit.mechanism, res.mechanism
    assert m1.kind == m.kind and m1.sensitivity == sensitivity and m1.origin == phi_lo
    assert np.array_equal(m1.edge_ticks, m.edge_ticks)
    assert m1.edge_step / sensitivity == pytest.approx(m.edge_step, rel=1e-12)
    ulp = 2 * np.spacing(abs(phi_lo) + 2 * sensitivity) / sensitivity
    np.testing.assert_allclose((m1.piece_edges - phi_lo) / sensitivity, m.piece_edges,
                               rtol=0, atol=ulp + 1e-12)
    for a, b in zip(m.noises, m1.noises, strict=True):
        np.testing.assert_allclose(b.edges / sensitivity, a.edges, rtol=1e-12, atol=0)
        assert np.array_equal(a.probs, b.probs) and a.atom == b.atom
    assert m1.certify() == res.upper.certified_delta <= prob.delta
    assert res.upper.certified_delta == pytest.approx(m.certify(), rel=1e-9)


def test_scaled_driver_result_vs_brute_force():
    """At Δf = 10⁻³ the mapped mechanism's certificate is reached by brute force over pairs of
    query values and its loss is the numerical integral of its definition."""
    prob = dd.Problem(**SCALED, sensitivity=1e-3, phi_lo=0.0, phi_hi=2e-3)
    res = dd.optimal_noise(prob, rel_gap=0.1, time_limit=120)
    step = min(res.history[-1]["beta"], prob.sensitivity / 4) / 2
    check_certificate(res.mechanism, step, prob.delta)
    loss = integrated_loss(res.mechanism, prob.loss, step)
    assert res.upper.value == pytest.approx(loss, rel=1e-7) and res.upper.value >= loss * (1 - 1e-9)


def test_progress_reports_are_shown_at_the_real_scale():
    prob = dd.Problem(**SCALED, sensitivity=1e-3, phi_lo=5.0, phi_hi=5.002)
    rows = []
    res = dd.optimal_noise(prob, rel_gap=0.1, time_limit=120, progress=rows.append)
    # the same rows, but for the released value: Δf^d times the unit one while the path runs, the
    # value recomputed at Δf in the history (equal up to its last digits)
    assert len(rows) == len(res.history)
    for row, final in zip(rows, res.history, strict=True):
        assert row.keys() == final.keys()
        for key, value in row.items():
            if final[key] == res.upper.value and key in ("output", "noise", "best_upper"):
                assert value == pytest.approx(final[key], rel=1e-12)
            else:
                assert value == final[key]
    assert rows[-1]["best_upper"] == pytest.approx(res.upper.value, rel=1e-12)
    assert rows[-1]["best_lower"] == res.lower.value


def _unit(prob, betas=None):
    from dpdro.data_dependent._scaling import unit_problem

    return unit_problem(prob, betas)


def test_which_problems_are_solved_at_unit_scale():
    """The map ϕ ↦ (ϕ − φ_lo)/Δf is used only where it is exact; every other problem is solved at
    its own scale (as before)."""
    base = dict(**SCALED, sensitivity=1e-3, phi_lo=0.0, phi_hi=0.003)
    unit, betas = _unit(dd.Problem(**base), [5e-4, 2.5e-4])
    assert (unit.sensitivity, unit.phi_lo, unit.phi_hi, unit.piece_spec) == (1.0, 0.0, 3.0, None)
    assert betas == [0.5, 0.25]
    assert _unit(dd.Problem(**base), [1e-4]) is None  # 10⁻⁴/10⁻³ is not a float exactly
    unit, _ = _unit(dd.Problem(**base, pieces=3))
    assert np.array_equal(unit.piece_spec, [0.0, 1.0, 2.0, 3.0])
    w = dd.Problem(**{**base, "sensitivity": 0.5, "phi_lo": 1.0, "phi_hi": 2.5},
                   weight=(np.array([1.0, 2.0, 2.5]), np.array([1.0, 3.0])))
    unit, _ = _unit(w)
    assert unit._weight[0] == "piecewise" and np.array_equal(unit._weight[1][0], [0.0, 2.0, 3.0])
    np.testing.assert_allclose(unit.weight_masses([0.0, 2.0, 3.0]), [0.4, 0.6], rtol=1e-15)
    fallback = [
        dd.Problem(**base, weight=lambda x: 1.0 + x),  # callable weight
        dd.Problem(**base, weight=(np.array([0.0, 0.0011, 0.003]), np.array([1.0, 2.0]))),
        dd.Problem(**base, cap=0.01),  # caps
        dd.Problem(**base, pieces=[0.0, 0.0011, 0.003]),  # edges not mapped exactly
        dd.Problem(**base, pieces=2, loss=["l1", "l2"]),  # a loss per piece
        dd.Problem(**{**base, "phi_lo": 1.0, "phi_hi": 1.003}),  # R = 3 only up to rounding
        dd.Problem(**SCALED, sensitivity=1.0, phi_lo=0.0, phi_hi=3.0),  # already at unit scale
        dd.Problem(**{**base, "loss": dpdro.PiecewiseLinear(
            [-1.0, 0.0, 1.0], [2.0, 0.0, 1.0], left_slope=-2.0, right_slope=1.0)}),
    ]
    for prob in fallback:
        assert _unit(prob) is None, prob


@pytest.mark.parametrize("kw", [dict(weight=lambda x: 1.0 + x), dict(cap=0.01),
                                dict(weight=(np.array([1.0, 1.0011, 1.003]), np.array([1., 2.])))])
def test_fallback_problems_solve_at_their_own_scale(monkeypatch, kw):
    from dpdro.data_dependent import optimal as module

    seen = []
    monkeypatch.setattr(module, "_refine", lambda prob, *args: seen.append(prob) or "result")
    prob = dd.Problem(**SCALED, sensitivity=1e-3, phi_lo=1.0, phi_hi=1.003, **kw)
    assert dd.optimal_noise(prob, rel_gap=0.1) == "result" and seen == [prob]


def test_mapped_mechanism_over_delta_falls_back_to_the_real_scale(monkeypatch):
    """When the mapped mechanism's certificate at Δf exceeds δ (on both lattices), the driver
    solves at Δf itself: its own path, a mechanism certified there."""
    from dpdro.data_dependent import _scaling
    from dpdro.data_dependent.optimal import default_betas

    calls = []
    monkeypatch.setattr(_scaling, "_certify", lambda mech, prob: calls.append(mech) or 1.0)
    prob = dd.Problem(**SCALED, sensitivity=0.25, phi_lo=0.0, phi_hi=0.5)
    res = dd.optimal_noise(prob, rel_gap=0.1, time_limit=120)
    assert len(calls) == 2  # the rounded and the exactly scaled lattice
    assert [r["beta"] for r in res.history] == default_betas(prob)[: len(res.history)]
    assert res.mechanism.sensitivity == 0.25 and res.mechanism.certify() <= prob.delta
    assert 0 < res.lower.value <= res.upper.value


def test_default_support_half_width_in_units_of_delta_f():
    """A = the truncated Laplace half-width rounded up to whole Δf (was: to whole units, 300 times
    too wide at Δf = 10⁻³)."""
    from dpdro._closed_forms import truncated_laplace_half_width
    from dpdro.data_dependent.optimal import _default_half_width

    for sensitivity in (1e-3, 1.0, 7.5):
        prob = dd.Problem(epsilon=2.0, delta=0.1, sensitivity=sensitivity, phi_lo=0.0,
                          phi_hi=3 * sensitivity)
        half = truncated_laplace_half_width(epsilon=2.0, delta=0.1, sensitivity=sensitivity)
        A = _default_half_width(prob)
        assert half <= A * (1 + 1e-12) and A / sensitivity == pytest.approx(2.0, rel=1e-12)
