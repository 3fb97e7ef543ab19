"""The uniform-grid LPs of dpdro.grid: the upper bound against Algorithm 1 and brute force, the
grid-shift reduction of the privacy profile, the randomized-rounding lower bound with tail blocks
against exactly rounded private noises, symmetric against general formulations, small δ."""

import math
from fractions import Fraction

import numpy as np
import pytest

import dpdro
from dpdro._cells import cell_offset
from dpdro._rounding import lowered, step_down
from dpdro.grid import (
    GridLP,
    LowerBoundTimeout,
    grid_lower_bound,
    grid_upper_bound,
)
from dpdro.mechanisms import Staircase, truncated_laplace_half_width
from dpdro.problem import fractional_part_bound
from dpdro.testing import brute_lp


def _window(prob, k, factor):
    a = truncated_laplace_half_width(
        epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity
    )
    return max(k, math.ceil(factor * a * k / prob.sensitivity))


def _solve(lp):
    sol = lp.solve()
    assert sol.status == "optimal"
    return sol


def _centred_partition(k, L, sensitivity=1.0):
    """The centred cells C_i = [(i − ½)β, (i + ½)β), |i| ≤ L, as a dpdro.Partition on the lattice
    β/2."""
    return dpdro.Partition(2 * np.arange(-L, L + 2) - 1, sensitivity / (2 * k))


@pytest.mark.parametrize(
    "eps,delta,loss,atom",
    [(1.0, 0.2, "l1", False), (2.0, 0.3, "l2", True), (0.5, 0.1, dpdro.asymmetric_loss(), True)],
)
def test_upper_lp_equals_algorithm_1_on_centred_cells(eps, delta, loss, atom):
    """U(k) is P(π, β) on the centred partition (with the atom column): the grid-shift constraints
    (G) are exactly Algorithm 1's whole-shift cuts, whose candidate shifts are the multiples of
    β."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss)
    k = 4
    L = _window(prob, k, 1.2)
    grid = _solve(GridLP(prob, k, L, "upper", atom=atom))
    alg1 = dpdro.bounds.BoundingLP(prob, _centred_partition(k, L), "upper", atom=atom)
    alg1.add_all_shift_cuts()
    ref = _solve(alg1)
    assert grid.objective == pytest.approx(ref.objective, rel=1e-8)


def test_upper_lp_equals_brute_force_on_a_tiny_grid():
    prob = dpdro.Problem(epsilon=1.0, delta=0.6, loss="l1")
    k, L = 2, 2
    grid = _solve(GridLP(prob, k, L, "upper", atom=True))
    assert grid.objective == pytest.approx(
        brute_lp(prob, _centred_partition(k, L), lower=False, atom=True), rel=1e-8
    )


def test_privacy_profile_is_affine_between_grid_shifts():
    """The lemma behind (G): for a noise on centred cells of width β, δ(φ) at φ = (m + ½)β (a
    lattice point of the certificate's lattice β/2) is the average of its neighbours δ(mβ) and δ((m
    + 1)β)."""
    rng = np.random.default_rng(0)
    k = 4
    p = rng.random(21)
    noise = dpdro.PiecewiseUniform(np.arange(-10.5, 11) / k, p / p.sum(), grid=1 / (2 * k))
    prof = dpdro.privacy_profile(noise, 0.7, 1.0)
    d = prof.deltas  # at φ = j/(2k), j = −2k … 2k
    assert np.allclose(d[1:-1:2], 0.5 * (d[:-2:2] + d[2::2]), atol=1e-14)


@pytest.mark.parametrize(
    "eps,delta,loss",
    [(1.0, 0.2, "l1"), (2.0, 0.1, "l2"), (0.5, 0.3, dpdro.Pinball(0.3)), (3.0, 0.4, "l1")],
)
def test_symmetric_and_general_lps_agree(eps, delta, loss):
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss)
    k = 4
    for kind, L in (("upper", _window(prob, k, 1.5)), ("lower", _window(prob, k, 1.0))):
        general = _solve(GridLP(prob, k, L, kind, symmetric=False)).objective
        if prob.loss.symmetric:
            assert _solve(GridLP(prob, k, L, kind)).objective == pytest.approx(general, rel=1e-7)
        else:
            with pytest.raises(ValueError, match="symmetric=True needs a symmetric loss"):
                GridLP(prob, k, L, kind, symmetric=True)


def _rounded_law(noise, beta):
    """The law of Y = β⌊X/β + U⌋ for a piecewise-uniform X, exactly: the mass at iβ is ∫ hat(x/β −
    i) dγ."""

    def T(u):  # ∫_{−∞}^u hat
        u = np.clip(u, -1.0, 1.0)
        return np.where(u <= 0, 0.5 * (u + 1) ** 2, 1 - 0.5 * (1 - u) ** 2)

    lo = math.floor(noise.edges[0] / beta) - 1
    hi = math.ceil(noise.edges[-1] / beta) + 1
    pts = np.arange(lo, hi + 1)
    a, b, rho = noise.edges[:-1] / beta, noise.edges[1:] / beta, noise.densities * beta
    q = (rho[None, :] * (T(b[None, :] - pts[:, None]) - T(a[None, :] - pts[:, None]))).sum(axis=1)
    if noise.atom:
        q[pts == 0] += noise.atom
    return pts, q


def _windowed_shortfall(pts, q, eps, k, window):
    """Independent check of (G) with tail blocks: max over events B ⊂ window ∪ tails and |m| ≤ k."""
    e = math.exp(eps)
    full = dict(zip(pts.tolist(), q.tolist(), strict=False))

    def below(v):
        return sum(m for i, m in full.items() if i < v)

    def above(v):
        return sum(m for i, m in full.items() if i > v)

    worst = 0.0
    for m in list(range(-k, 0)) + list(range(1, k + 1)):
        total = sum(
            max(full.get(i, 0.0) - e * full.get(i - m, 0.0), 0.0)
            for i in range(-window, window + 1)
        )
        total += max(below(-window) - e * below(-window - m), 0.0) + max(
            above(window) - e * above(window - m), 0.0
        )
        worst = max(worst, total)
    return worst


@pytest.mark.parametrize("eps,delta,k", [(1.0, 0.2, 4), (2.0, 0.1, 8), (0.5, 0.3, 2)])
def test_rounded_private_noises_are_feasible_for_the_lower_bound(eps, delta, k):
    """The randomized-rounding argument on concrete private noises that are not on the grid: their
    rounded laws satisfy (G) on every window with its tail blocks, and the lower bound stays below
    their expected loss."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss="l1")
    noises = [
        Staircase(epsilon=eps).to_piecewise_uniform(periods=12),
        dpdro.upper_bound(prob, dpdro.Partition.uniform(_window(prob, 3, 1.5), 1 / 3)).noise,
    ]
    for noise in noises:
        assert dpdro.certify_delta(noise, eps, 1.0) <= delta
        pts, q = _rounded_law(noise, 1 / k)
        for window in (k, 2 * k, 4 * k):
            assert _windowed_shortfall(pts, q, eps, k, window) <= delta + 1e-12
            lb = grid_lower_bound(prob, k, window)
            assert lb.value <= noise.expected_loss("l1")


@pytest.mark.parametrize(
    "eps,delta,loss",
    [(1.0, 0.2, "l1"), (0.3, 0.05, "l2"), (2.0, 0.25, "l1"), (1.0, 0.2, dpdro.asymmetric_loss())],
)
def test_grid_bounds_sandwich_and_tighten(eps, delta, loss):
    prob = dpdro.Problem(epsilon=eps, delta=delta, loss=loss)
    gaps = []
    for k in (2, 4, 8):
        ub = grid_upper_bound(prob, k, _window(prob, k, 2.0))
        lb = grid_lower_bound(prob, k, _window(prob, k, 1.5))
        assert lb.value <= ub.value
        assert dpdro.certify_delta(ub.noise, eps, 1.0) <= delta == ub.noise.metadata["delta"]
        assert ub.noise.expected_loss(loss) <= ub.value
        gaps.append(ub.value - lb.value)
    assert gaps[-1] < gaps[0]


def test_rounding_allowances_are_remembered_and_work_for_an_unhashable_loss():
    """The allowances are computed once per loss and grid (dpdro.problem._allowances), and a loss
    that cannot be hashed (a subclass defining __eq__ only) gets the same pairs, uncached."""
    from dpdro.problem import _allowances

    power = dpdro.PowerLoss(3.0)
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss=power)
    first = prob.rounding_allowances(0.25)
    hits = _allowances.cache_info().hits
    assert prob.rounding_allowances(0.25) == first and _allowances.cache_info().hits == hits + 1
    assert first and all(eta > 0 for eta, _ in first)  # |x|³: no finite e_β at η = 0

    class Unhashable(dpdro.PowerLoss):
        def __eq__(self, other):
            return isinstance(other, dpdro.PowerLoss) and other.k == self.k

    loss = Unhashable(3.0)
    with pytest.raises(TypeError):
        hash(loss)
    assert dpdro.Problem(epsilon=1.0, delta=0.2, loss=loss).rounding_allowances(0.25) == first


def test_lower_bound_with_cell_infima_for_losses_without_rounding():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss=lambda x: np.abs(x) ** 3)
    assert prob.rounding_excess(0.25) is None and prob.rounding_allowances(0.25) == []
    with pytest.raises(ValueError, match="coefficients='rounding' needs"):
        GridLP(prob, 4, 8, "lower", coefficients="rounding")
    lb = grid_lower_bound(prob, 4, 8)
    ub = grid_upper_bound(prob, 4, 12)
    assert 0 < lb.value <= ub.value and lb.coefficients == "infimum"


@pytest.mark.parametrize(
    "eps, delta, sens, k", [(1.0, 0.2, 1.0, 2), (0.2, 1e-4, 1.0, 2), (2.0, 0.01, 7.5, 8)]
)
def test_rounding_lower_bound_for_a_power_above_two(eps, delta, sens, k):
    """|x|³ has no finite interpolation excess, but (D − e_β(η))/(1 + η) is a lower bound: valid
    (below a released noise's exact loss, and below the same bound on a finer grid's upper bound)
    and second order in β where the cell infima are first order, so at a coarse grid it closes
    most of the infima's gap."""
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=sens, loss=dpdro.PowerLoss(3))
    a = truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=sens)
    L = math.ceil(1.5 * a * k / sens)
    assert prob.rounding_excess(sens / k) is None and all(
        eta > 0 for eta, _ in prob.rounding_allowances(sens / k)
    )
    rounding = grid_lower_bound(prob, k, L)
    infimum = GridLP(prob, k, L, "lower", coefficients="infimum")
    infimum = infimum.dual_bound(infimum.solve().row_duals)
    ub = grid_upper_bound(prob, 2 * k, math.ceil(2.0 * a * 2 * k / sens))
    assert rounding.coefficients == "rounding"
    assert infimum < rounding.value <= ub.value
    assert ub.noise.expected_loss(prob.loss) <= ub.value
    assert (ub.value - rounding.value) < 0.5 * (ub.value - infimum)


@pytest.mark.parametrize("delta", [1e-9, 1e-12])
def test_small_delta_is_certified_exactly(delta):
    """HiGHS's absolute tolerance (1e-9) exceeds δ: the scaled formulation releases a noise
    certified at most δ, and the bracket stays tight."""
    prob = dpdro.Problem(epsilon=1.0, delta=delta, loss="l1")
    ub = grid_upper_bound(prob, 4, _window(prob, 4, 1.5))
    lb = grid_lower_bound(prob, 4, _window(prob, 4, 1.0))
    assert dpdro.certify_delta(ub.noise, 1.0, 1.0) <= delta
    assert lb.value <= ub.value <= 1.01 * lb.value


def test_one_sided_support():
    prob = dpdro.Problem(epsilon=1.0, delta=0.05, loss="l1", support=(-np.inf, 0.0))
    ub = grid_upper_bound(prob, 4, 40)
    lb = grid_lower_bound(prob, 4, 30)
    assert ub.noise.support[1] <= 0.0
    assert dpdro.certify_delta(ub.noise, 1.0, 1.0) <= 0.05
    assert 0 < lb.value <= ub.value


@pytest.mark.parametrize("support", [(0.0, np.inf), (-np.inf, 0.0)])
def test_one_sided_cells_end_at_the_support(support):
    """A support end on the lattice βℤ is a cell edge of U(k) (cells [iβ, (i + 1)β)): the noise
    reaches it, stays certified, and for ℓ1 (linear on the support) costs at most β/2 more than the
    lower bound's LP on the same grid (β with centred cells, whose first cell starts β/2 inside)."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.05, loss="l1", support=support)
    k = 4
    ub = grid_upper_bound(prob, k, _window(prob, k, 3.0))
    lb = grid_lower_bound(prob, k, _window(prob, k, 3.0))
    assert dpdro.certify_delta(ub.noise, 1.0, 1.0) <= 0.05
    end = 0.0
    assert (ub.noise.support[0] if support[0] == 0 else ub.noise.support[1]) == end
    assert lb.value <= ub.value <= lb.lp_value + 0.5 / k + 1e-6
    # the mass within Δf of the support's end is not a reason to widen the window
    near = ub.noise.probs[np.abs(ub.noise.edges[:-1]) < 1.0].sum()
    assert near > 1e-4 and ub.boundary_mass == 0.0


def test_a_support_end_a_hair_past_a_grid_point_costs_no_grid_step(monkeypatch):
    """β = Δf/11 rounded down leaves −1 a hair (about 1e-16) below the grid point −11β, so the
    rounded noise may reach −12β, but only with probability about 1e-16·(e^ε·1e-16 + δ)
    (GridLP._cap_end_points): without that bound the lower bound fell by a fifth, as if the support
    began a grid step further out. Both bounds are valid: below the certified U(22)."""
    prob = dpdro.Problem(epsilon=3.0, delta=0.05, loss="l2", support=(-1.0, np.inf))
    assert math.floor(-1.0 / step_down(1.0, Fraction(11))) == -12  # the sliver

    def bound():
        lp = GridLP(prob, 11, 44, "lower")
        sol = lp.solve()
        assert sol.status == "optimal" and lp.ends[0] == -12
        return lp.dual_bound(sol.row_duals)

    capped = bound()
    monkeypatch.setattr(dpdro.grid, "_SLIVER_CAP", -1.0)  # no bound on the sliver's point
    loose = bound()
    upper = grid_upper_bound(prob, 22, 88).value
    assert loose < 0.26 < 0.31 < capped <= upper
    # on k = 12 the support's end is a grid point: no sliver, and a bound close to k = 11's
    assert math.floor(-1.0 / step_down(1.0, Fraction(12))) == -12
    assert abs(grid_lower_bound(prob, 12, 48).value - capped) < 0.05 * capped


def test_cell_offset():
    beta = 0.25
    for support, offset in [(None, 0.0), ((0.0, np.inf), 0.5), ((-np.inf, 0.0), 0.5),
                            ((0.125, np.inf), 0.0), ((-1.0, 2.0), 0.5)]:
        prob = dpdro.Problem(epsilon=1.0, delta=0.05, loss="l1", support=support)
        assert cell_offset(prob, beta) == offset


def test_monotone_problem():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss="l1", monotone=True)
    ub = grid_upper_bound(prob, 8, _window(prob, 8, 1.5))
    lb = grid_lower_bound(prob, 8, _window(prob, 8, 1.0))
    assert dpdro.monotone.is_monotone(ub.noise) and ub.noise.atom == 0
    assert dpdro.certify_delta(ub.noise, 1.0, 1.0) <= 0.2
    assert 0 < lb.value <= ub.value
    free = dpdro.Problem(epsilon=1.0, delta=0.2, loss="l1")
    # a restriction
    assert grid_upper_bound(free, 8, _window(prob, 8, 1.5), atom=False).value <= ub.value
    # the lower bound of a monotone problem is the better of its own LP and the free rounding bound
    assert lb.value >= grid_lower_bound(free, 8, _window(prob, 8, 1.0)).value


def test_callable_loss():
    loss = dpdro.CallableLoss(lambda x: np.abs(x) ** 1.5, lipschitz=20.0)
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss=loss)
    ub = grid_upper_bound(prob, 4, _window(prob, 4, 1.5))
    lb = grid_lower_bound(prob, 4, _window(prob, 4, 1.0))
    assert 0 < lb.value <= ub.value and dpdro.certify_delta(ub.noise, 1.0, 1.0) <= 0.2


def test_lower_bound_is_valid_for_perturbed_duals():
    """The certified lower bound is the Lagrangian at any duals: perturbed duals give smaller
    values."""
    prob = dpdro.Problem(epsilon=2.0, delta=0.1, loss="l1")
    lp = GridLP(prob, 4, 8, "lower")
    sol = _solve(lp)
    exact = lp.dual_bound(sol.row_duals)
    assert exact == pytest.approx(sol.objective, rel=1e-8) and exact <= sol.objective
    rng = np.random.default_rng(1)
    for scale in (1e-6, 1e-3, 1.0):
        noisy = sol.row_duals * (1 + scale * rng.standard_normal(sol.row_duals.size))
        assert lp.dual_bound(noisy) <= sol.objective + 1e-12


def test_lower_lp_rows_are_stored_as_a_relaxation():
    """The lower-bound LP stores its rows rounded in the safe direction (e^{rε} and δ_r up, Δf/k
    down, every non-integer coefficient one ulp lower), so its certified bound needs no allowance
    on them: within a hair of the LP value even at δ = 1.6e-12, where the allowance alone had cost
    0.56% (one-sided ℓ1 noise, ε = 0.31, k = 1: 81.673 against the LP's 82.134), and still below a
    certified noise's loss."""
    prob = dpdro.Problem(epsilon=0.3079739906500248, delta=1.5874750096896684e-12, loss="l1",
                         support=(0.0, np.inf))
    lp = GridLP(prob, 1, _window(prob, 1, 3.0), "lower")
    assert lp.matrix_rel == 0.0 and lp.exp_rows >= math.exp(prob.epsilon)
    sol = _solve(lp)
    # the floor rounding's gain (dpdro.Problem.floor_rounding_gain) comes on top of the LP's bound
    gain = prob.floor_rounding_gain(lp.beta, lp.exp_rows, lp.delta_rows)
    # β = 1: W̄ of the circle of 32 cells, 0.4600, above w(ε, δ) = 0.4486
    w = fractional_part_bound(lp.exp_rows, lp.delta_rows)
    assert gain == lp.floor_gain and 0.448 < w < 0.449 < 0.4599 < gain < 0.4601
    bound = lp.dual_bound(sol.row_duals) - gain
    assert sol.objective * (1 - 1e-4) <= bound <= sol.objective
    # the default allowance on the same duals: far weaker
    from dpdro.lp import COEFF_REL, safe_lower_bound

    cost, mat, lo, hi = lp.matrix()
    loose = safe_lower_bound(cost, mat, lo, hi, lp.column_upper_bounds(), sol.row_duals,
                             simplex_rows=lp._simplex_rows, matrix_rel=COEFF_REL)
    assert loose <= bound
    # the shifted truncated Laplace mechanism is feasible: its loss A is above the bound, the gain
    # included
    a = truncated_laplace_half_width(epsilon=prob.epsilon, delta=prob.delta, sensitivity=1.0)
    assert lp.dual_bound(sol.row_duals) <= a


@pytest.mark.parametrize("sens,k", [(1.0, 3), (0.1, 3), (7.5, 7), (1e-3, 5), (0.3, Fraction(1, 3))])
def test_lower_step_stays_within_the_sensitivity(sens, k):
    """The lower bound's shifts mβ, |m| ≤ k, never exceed Δf in exact arithmetic."""
    beta = step_down(sens, Fraction(k))
    assert Fraction(beta) * Fraction(k) <= Fraction(sens)
    assert beta == pytest.approx(sens / float(Fraction(k)), rel=1e-15)


def test_lowered_coefficients_relax_rows():
    v = np.array([1.0, -1.0, 2.0, 0.0, -math.e, 1.0 / 3.0, -1.7e11 - 0.25, 1.0 / 1.59e-12])
    low = lowered(v)
    assert np.all(low[:4] == v[:4]) and np.all(low[4:] < v[4:])
    assert np.all(low[4:] >= v[4:] - 1e-15 * np.abs(v[4:]))


def test_a_support_too_narrow_for_any_private_noise_is_infeasible():
    """One-sided noise on [−8, 0] cannot be (1, 0.01)-DP (it needs about 2·A(δ/2) ≈ 10.3): the lower
    bound's relaxation is infeasible, and says so."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.01, support=(-8.0, 0.0))
    with pytest.raises(dpdro.InfeasibleError, match="no noise supported in"):
        grid_lower_bound(prob, 4, 40)


def test_an_interrupted_lower_bound_lp_keeps_a_valid_bound():
    """A lower-bound LP cut short by its time limit returns the duals where HiGHS stopped; their
    certified bound is at most the LP's optimum, and grid_lower_bound hands it on with the timeout
    (LowerBoundTimeout.bound). 1 ms is far below the 1,151 simplex iterations this LP needs."""
    prob = dpdro.Problem(epsilon=4.0, delta=0.3, loss="l1")
    full = grid_lower_bound(prob, 33, 56)
    lp = GridLP(prob, 33, 56, "lower")
    sol = lp.solve(1e-3)
    assert sol.status == "time_limit" and sol.x is None and sol.row_duals is not None
    assert lp.dual_bound(sol.row_duals) <= full.value
    with pytest.raises(LowerBoundTimeout) as info:
        grid_lower_bound(prob, 33, 56, time_limit=1e-3)
    bound = info.value.bound
    assert bound is not None and bound.value <= full.value and (bound.k, bound.L) == (33, 56)
    assert math.isnan(bound.lp_value)


def test_lower_bound_lp_runs_without_cost_perturbation():
    """The lower-bound LP's dual simplex keeps the true costs, so that an interrupted solve's duals
    are those of the LP itself (module docstring, "Interrupted solves"); the upper bound's keeps
    HiGHS's default."""
    prob = dpdro.Problem(epsilon=2.0, delta=0.1, loss="l1")
    option = "dual_simplex_cost_perturbation_multiplier"
    lower = GridLP(prob, 4, 8, "lower").model.h.getOptionValue(option)[1]
    upper = GridLP(prob, 4, 8, "upper").model.h.getOptionValue(option)[1]
    assert lower == 0.0 and upper > 0.0


def test_lower_bound_reports_the_mass_of_its_tail_blocks():
    """``tail_mass`` is the part of ``outside_mass`` beyond every point with a variable (the tail
    blocks); a window far too small for (ε, δ) leaves mass there."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.01, loss="l1")
    small = grid_lower_bound(prob, 2, 2)
    assert 0 < small.tail_mass <= small.outside_mass
    wide = grid_lower_bound(prob, 2, _window(prob, 2, 1.0))
    assert wide.tail_mass <= wide.outside_mass and wide.tail_mass < small.tail_mass


def test_a_failed_lazy_relaxation_is_solved_again_with_all_its_rows(monkeypatch):
    """Where HiGHS fails on a lazy relaxation, the LP gets all its segments and is solved from
    scratch: the optimum of the full LP; a failure with all rows in is raised."""
    import dpdro.lp as lp_module
    from dpdro.solvers import SolverError

    prob = dpdro.Problem(epsilon=1.0, delta=1e-3, loss="l2", support=(0.0, math.inf))
    full = GridLP(prob, 8, 80, "lower", coefficients="rounding", lazy=False).solve()
    solve, calls = lp_module.PrivacyLP.solve, []

    def fails_once(self, time_limit=None):
        calls.append(int(self.rows.added.sum()))
        if len(calls) == 1:
            raise SolverError("numerical failure")
        return solve(self, time_limit)

    monkeypatch.setattr(lp_module.PrivacyLP, "solve", fails_once)
    lazy = GridLP(prob, 8, 80, "lower", coefficients="rounding", lazy=True)
    sol = lazy.solve()
    assert calls == [0, lazy.rows.added.size] and lazy.rows.added.all()
    assert sol.status == "optimal" and sol.objective == pytest.approx(full.objective, rel=1e-9)

    def always(self, time_limit=None):
        raise SolverError("numerical failure")

    monkeypatch.setattr(lp_module.PrivacyLP, "solve", always)
    with pytest.raises(SolverError):
        GridLP(prob, 8, 80, "lower", coefficients="rounding", lazy=True).solve()


def test_lower_bound_retries_wider_windows_when_highs_fails(monkeypatch):
    """A lower-bound LP that HiGHS fails on is tried on wider windows; the last failure is
    raised."""
    import dpdro.grid as grid
    from dpdro.solvers import SolverError

    calls = []

    def failing(problem, coefficients, k, L, budget, guess=None):
        calls.append(L)
        raise SolverError("numerical failure")

    monkeypatch.setattr(grid, "_lower_solve", failing)
    with pytest.raises(SolverError):
        grid.grid_lower_bound(dpdro.Problem(epsilon=1.0, delta=1e-3), 4, 40)
    assert calls == [40, 60, 90]


def test_an_infeasible_lower_bound_lp_proves_infeasibility_only_on_a_bounded_support(monkeypatch):
    """A support open on one side always admits private noise (a shifted truncated Laplace), so
    HiGHS calling its lower-bound LP infeasible is a numerical failure (retried, then raised as
    a SolverError), not a proof; on a bounded support it proves P infeasible."""
    import dpdro.grid as grid
    from dpdro.problem import RelaxationInfeasibleError
    from dpdro.solvers import LPSolution, SolverError

    def infeasible(self, time_limit=None):
        return LPSolution("infeasible", None, None, math.inf, 0)

    monkeypatch.setattr(grid.GridLP, "solve", infeasible)
    open_side = dpdro.Problem(epsilon=1.0, delta=1e-3, loss="l2", support=(-math.inf, 0.0))
    with pytest.raises(SolverError, match="infeasible"):
        grid.grid_lower_bound(open_side, 2, 20)
    bounded = dpdro.Problem(epsilon=1.0, delta=1e-3, loss="l2", support=(-3.0, 3.0))
    with pytest.raises(RelaxationInfeasibleError, match="widen the support"):
        grid.grid_lower_bound(bounded, 2, 20)


@pytest.mark.parametrize(
    ("support", "loss", "delta", "k", "L", "expected"),
    [
        ((0.0, math.inf), "l1", 9.7e-6, 102, 658, True),  # constant slope on [0, ∞)
        ((-math.inf, 0.0), "l1", 1e-3, 32, 320, True),  # its mirror image
        ((0.0, math.inf), "l1", 9.7e-6, 16, 104, False),  # a small LP: the dual simplex
        ((0.0, math.inf), "l1", 0.1, 102, 658, False),  # a large δ: the dual simplex was faster
        ((0.0, math.inf), "l2", 9.7e-6, 102, 658, False),  # a growing slope
        (None, "l1", 9.7e-6, 102, 658, False),  # no support
    ],
)
def test_which_lower_bound_lps_start_by_the_interior_point_method(
    support, loss, delta, k, L, expected
):
    from dpdro.grid_rows import interior_first

    prob = dpdro.Problem(epsilon=3.68, delta=delta, loss=loss, support=support)
    assert interior_first(prob, k, L) is expected


@pytest.fixture
def interior_runs(monkeypatch):
    """The crossover flag of every interior-point run of HiGHS, in order."""
    from dpdro.solvers import HighsModel

    runs, run_interior = [], HighsModel._run_interior

    def counted(self, crossover):
        runs.append(crossover)
        run_interior(self, crossover)

    monkeypatch.setattr(HighsModel, "_run_interior", counted)
    return runs


def test_a_lower_bound_lp_started_by_the_interior_point_method_agrees_with_the_dual_simplex(
    monkeypatch, interior_runs
):
    """Cross-method: the one-sided ℓ1 lower bound whose first solve is by the interior-point method
    with crossover (a vertex, as from the simplex) is the dual simplex's LP value and certified
    bound, to the solvers' tolerance."""
    from dpdro import grid

    prob = dpdro.Problem(epsilon=3.68, delta=9.7e-6, loss="l1", support=(0.0, math.inf))
    k, L = 16, 640
    assert grid.interior_first(prob, k, L)
    runs = interior_runs
    ipm = grid_lower_bound(prob, k, L)
    assert runs and all(runs)  # with crossover (first, and at this δ every restart from scratch)
    n_runs = len(runs)
    monkeypatch.setattr(grid, "interior_first", lambda *args: False)
    simplex = grid_lower_bound(prob, k, L)
    assert len(runs) == n_runs
    assert ipm.lp_value == pytest.approx(simplex.lp_value, rel=1e-7)
    assert ipm.value == pytest.approx(simplex.value, rel=1e-7)


@pytest.mark.parametrize(("delta", "restarts_by_ipm"), [(9.7e-6, True), (1e-3, False)])
def test_a_restart_from_scratch_at_tiny_delta_is_by_the_interior_point_method(
    monkeypatch, interior_runs, delta, restarts_by_ipm
):
    """A round of lazy rows that restarts the LP from scratch restarts it by the interior-point
    method where the first solve was by it and δ is tiny (the dual simplex method had crawled: ℓ1
    on [0, ∞), ε = 4, δ = 1e-6, k = 126 out of 13 s instead of 6.7 s), by the dual simplex method
    at larger δ; the bound is the same either way."""
    from dpdro import grid, grid_rows

    prob = dpdro.Problem(epsilon=3.68, delta=delta, loss="l1", support=(0.0, math.inf))
    k, L = 16, 640
    assert grid.interior_first(prob, k, L)
    runs = interior_runs
    monkeypatch.setattr(grid_rows, "RESTART", 0.0)  # every round of added rows restarts
    restarted = grid_lower_bound(prob, k, L)
    assert (len(runs) > 1) is restarts_by_ipm and runs[0]
    monkeypatch.undo()  # no forced restarts
    unforced = grid_lower_bound(prob, k, L)
    assert restarted.value == pytest.approx(unforced.value, rel=1e-7)
