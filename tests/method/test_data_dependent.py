"""Data-dependent noise (Section 3, Appendix C.3, GitHub appendix): oracle, bounds, mechanism,
options.

The brute-force references (dpdro.testing) enumerate every event (union of unit cells I_i(β)) and
every (pair of fine pieces, shift) explicitly from the paper's definitions; they share no code with
dpdro.data_dependent beyond Partition and the loss objects.
"""

from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest

import dpdro
from dpdro import data_dependent as dd
from dpdro.data_dependent.lp import DDBoundingLP
from dpdro.mechanisms import truncated_laplace_half_width
from dpdro.monotone import is_monotone
from dpdro.testing import dd_brute_lp, dd_brute_shortfall, fine_triples, hockey_stick


# ---------------------------------------------------------------------------- fixtures
def tiny(**kw):
    args = dict(epsilon=1.0, delta=0.2, sensitivity=0.5, phi_lo=0.0, phi_hi=1.5)
    args.update(kw)
    return dd.Problem(**args)


RNG = np.random.default_rng(7)


# ---------------------------------------------------------------------------- oracle vs brute force
@pytest.mark.parametrize("pi", [np.arange(-2, 4), np.array([-3, -1, 0, 1, 3])])
@pytest.mark.parametrize("lower", [False, True])
def test_oracle_uniform_pieces_vs_brute(pi, lower):
    prob = tiny()
    part = dpdro.Partition(pi, 0.5)
    # the paper's segment constraints are not a relaxation on wide cells
    if lower and not part.is_uniform:
        with pytest.raises(ValueError, match="uniform noise partitions"):
            DDBoundingLP(prob, part, "lower")
        return
    lp = DDBoundingLP(prob, part, "lower" if lower else "upper")
    g = prob.grouping(0.5)
    assert g.K == 3
    kd = 1
    for _ in range(4):
        P = RNG.random((lp.M, lp.n_c)) ** 3
        P /= P.sum(axis=1, keepdims=True)
        sf = dd.max_privacy_shortfall(prob, part, P, lower=lower)
        cols = lp.columns.pi
        ref = dd_brute_shortfall(
            prob,
            cols,
            part.pi,
            P[:, : cols.size - 1] if not lower else P[:, : cols.size - 1],
            fine_triples(g.K, kd, np.arange(g.K + 1), lower),
        )
        assert sf.value == pytest.approx(ref, abs=1e-12)
        # the reported worst event achieves the reported shortfall
        assert len(sf.pair) == 2 and sf.event.shape[1] == 2


@pytest.mark.parametrize("pi", [np.arange(-2, 4), np.array([-3, -1, 0, 1, 3])])
def test_oracle_nonuniform_pieces_vs_brute(pi):
    """Algorithm G.1: pieces [0, .5), [.5, 1.5), [1.5, 2) on the β = 0.5 grid (λ = 0, 1, 3, 4)."""
    prob = tiny(phi_hi=2.0, pieces=[0.0, 0.5, 1.5, 2.0])
    part = dpdro.Partition(pi, 0.5)
    g = prob.grouping(0.5)
    assert g.K == 4 and g.lam.tolist() == [0, 1, 3, 4]
    lp = DDBoundingLP(prob, part, "upper")
    assert lp.M == 3
    for _ in range(4):
        P = RNG.random((3, lp.n_c)) ** 3
        P /= P.sum(axis=1, keepdims=True)
        sf = dd.max_privacy_shortfall(prob, part, P)
        ref = dd_brute_shortfall(prob, part.pi, part.pi, P, fine_triples(4, 1, g.lam, False))
        assert sf.value == pytest.approx(ref, abs=1e-12)


def test_shift_ranges_of_algorithm_g1():
    """The G.1 range {λ_l′ − λ_{l+1}, …, λ_{l′+1} − λ_l} equals the union of Algorithm 3's
    shifts."""
    prob = tiny(phi_hi=3.0, sensitivity=1.0, pieces=[0.0, 0.5, 2.0, 2.5, 3.0])
    part = dpdro.Partition.uniform(L=3, beta=0.5)
    lp = DDBoundingLP(prob, part, "upper")
    got = set(
        zip(lp.t_l.tolist(), lp.t_m.tolist(), lp.table.shifts[lp.t_si].tolist(), strict=False)
    )
    ref = {
        t
        for t in fine_triples(6, 2, prob.grouping(0.5).lam, False)
        if not (t[0] == t[1] and t[2] == 0)
    }
    assert got == ref


# ---------------------------------------------------------------------------- LP vs brute force
@pytest.mark.parametrize("pieces", [None, [0.0, 0.5, 1.5]])
def test_upper_lp_vs_brute(pieces):
    prob = tiny(pieces=pieces)
    part = dpdro.Partition.uniform(L=2, beta=0.5)
    ub = dd.upper_bound(prob, part)
    g = prob.grouping(0.5)
    ref = dd_brute_lp(
        prob, part, lower=False, lam=g.lam, cell_cost_weights=prob.weight_masses(g.edges)
    )
    assert ub.lp_value == pytest.approx(ref, abs=1e-8)
    assert ub.value >= ref - 1e-9
    assert ub.value == pytest.approx(ref, abs=1e-6)


def test_lower_lp_vs_brute():
    prob = tiny()
    part = dpdro.Partition.uniform(L=2, beta=0.5)
    lb = dd.lower_bound(prob, part, coefficients="infimum")
    g = prob.grouping(0.5)
    w = prob.weight_infima(g.fine_edges) * 0.5
    ref = dd_brute_lp(prob, part, lower=True, lam=np.arange(g.K + 1), cell_cost_weights=w)
    assert lb.lp_value == pytest.approx(ref, abs=1e-8)
    assert lb.value <= ref + 1e-12
    assert lb.value == pytest.approx(ref, abs=1e-7)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_rounding_lower_lp_vs_brute(loss):
    """D′_R: the LP of dpdro against the same LP written out event by event."""
    prob = tiny(loss=loss)
    part = dpdro.Partition.uniform(L=2, beta=0.5)
    lb = dd.lower_bound(prob, part, coefficients="rounding")
    g = prob.grouping(0.5)
    w = prob.weight_infima(g.fine_edges) * 0.5
    ref = dd_brute_lp(
        prob, part, lower=True, lam=np.arange(g.K + 1), cell_cost_weights=w, rounding=True
    )
    assert lb.coefficients == "rounding"
    assert lb.value <= ref + 1e-12
    assert lb.value == pytest.approx(ref, abs=1e-7)


def test_rounding_lower_bound_default_and_dominance():
    """ℓ1: D′_R dominates D′ column by column, so the default solves D′_R alone and is at least D′;
    ℓ2: both are solved and the larger is returned."""
    part = dpdro.Partition.uniform(L=4, beta=0.5)
    lb1 = dd.lower_bound(tiny(), part)
    old = dd.lower_bound(tiny(), part, coefficients="infimum")
    assert lb1.coefficients == "rounding" and set(lb1.candidates) == {"rounding"}
    assert lb1.value >= old.value - 1e-12
    lb2 = dd.lower_bound(tiny(loss="l2"), part)
    assert set(lb2.candidates) == {"rounding", "infimum"}
    assert lb2.value == max(lb2.candidates.values())
    mono = dd.lower_bound(tiny(monotone=True), part)  # monotone: D′ with its rows is also solved
    assert set(mono.candidates) == {"rounding", "infimum"}
    with pytest.raises(ValueError, match="coefficients"):
        dd.lower_bound(tiny(), part, coefficients="average")


def test_rounding_lower_bound_on_the_shift_set_counterexample():
    """The instance on which D′ over the paper's E′_km (Appendix C.3) gives 1.506 > P′: a constant
    mechanism (output 1/4 whatever ϕ, 0-DP) has expected ℓ1 loss E|1/4 − ϕ| = 1/8 for ϕ ~ U[0,
    1/2)."""
    prob = dd.Problem(epsilon=0.1, delta=0.01, sensitivity=1.0, phi_lo=0.0, phi_hi=0.5)
    for L in (2, 8, 40):
        lb = dd.lower_bound(prob, dpdro.Partition.uniform(L=L, beta=0.25))
        assert lb.coefficients == "rounding"
        assert 0.0 < lb.value <= 0.125


@pytest.mark.parametrize("seed", range(4))
def test_rounding_lower_bound_below_certified_upper_bounds(seed):
    """Random small instances: D′_R(β) ≤ P′(β) and ≤ P′(β/2) (certified mechanisms, any grid)."""
    rng = np.random.default_rng(100 + seed)
    eps = float(rng.choice([0.3, 1.0, 3.0]))
    delta = float(rng.choice([0.05, 0.2, 0.4]))
    loss = str(rng.choice(["l1", "l2"]))
    sens = float(rng.choice([0.5, 1.0]))
    width = float(rng.choice([0.5, 1.0, 1.5]))
    prob = dd.Problem(
        epsilon=eps, delta=delta, sensitivity=sens, phi_lo=-0.5, phi_hi=width - 0.5, loss=loss
    )
    A = math.ceil(truncated_laplace_half_width(epsilon=eps, delta=delta, sensitivity=sens)) + 1
    beta = 0.25
    lb = dd.lower_bound(prob, dpdro.Partition.uniform(L=int(A / beta), beta=beta))
    for b in (beta, beta / 2):
        part = dpdro.Partition.uniform(L=int(A / b), beta=b)
        for centred in (False, True):
            ub = dd.upper_bound(prob, part, centred=centred)
            assert ub.mechanism.certify() <= prob.delta
            assert lb.value <= ub.value


def test_rounding_lower_bound_tightens_on_nested_grids():
    prob = dd.Problem(**FIG3)
    vals = [dd.lower_bound(prob, fig3_part(prob, b)).value for b in (1.0, 0.5, 0.25)]
    assert vals[0] <= vals[1] + 1e-9 <= vals[2] + 2e-9


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_mirror_symmetric_lps_equal_the_full_ones(loss):
    """On a mirror-symmetric instance the LPs over mirror-symmetric families (half the columns and
    groups) have the optimum of the full LPs: the centred P′ and D′_R (whose bound stays valid)."""
    prob = tiny(loss=loss)  # Φ = [0, 1.5): 3 fine pieces (a middle piece mapped onto itself)
    part = dpdro.Partition.uniform(L=4, beta=0.5)
    vals = {}
    for sym in (False, True):
        up = DDBoundingLP(prob, part, "upper", offset=-0.25, symmetric=sym)
        lo = DDBoundingLP(prob, part, "lower", coefficients="rounding", symmetric=sym)
        for lp in (up, lo):
            lp.add_all_shift_cuts()
        a, b = up.solve(), lo.solve()
        vals[sym] = (a.objective, b.objective, lo.dual_bound(b.row_duals))
        if sym:
            P = up.probabilities(a.x)
            assert np.allclose(P[::-1, ::-1], P)
            assert up.n_p < up.M * up.n_c and lo.n_groups < 2 * prob.grouping(0.5).K * 1
    assert vals[True] == pytest.approx(vals[False], abs=1e-9)
    ub = dd.upper_bound(prob, part, centred=True)
    assert (
        ub.lp_value == pytest.approx(vals[False][0], abs=1e-8)
        and ub.mechanism.certify() <= prob.delta
    )
    with pytest.raises(ValueError, match="symmetric"):
        DDBoundingLP(prob, part, "lower", coefficients="infimum", symmetric=True)
    with pytest.raises(ValueError, match="symmetric"):
        DDBoundingLP(
            tiny(weight=([0.0, 1.0, 1.5], [1.0, 2.0])), part, "upper", offset=-0.25, symmetric=True
        )


def test_highs_vs_ecos():
    prob = tiny()
    part = dpdro.Partition.uniform(L=2, beta=0.5)
    for kind in ("upper", "lower"):
        lp = DDBoundingLP(prob, part, kind)
        lp.add_all_shift_cuts()
        a, b = lp.solve(), lp.solve_with("ECOS")
        assert a.objective == pytest.approx(b.objective, abs=1e-6)


# ---------------------------------------------------------------------------- bounds
FIG3 = dict(epsilon=1.0, delta=0.2, sensitivity=2.0, phi_lo=0.0, phi_hi=4.0)


def fig3_part(prob, beta):
    A = math.ceil(
        truncated_laplace_half_width(
            epsilon=prob.epsilon, delta=prob.delta, sensitivity=prob.sensitivity
        )
    )
    return dpdro.Partition.uniform(L=int(round(A / beta)), beta=beta)


def test_bounds_sandwich_and_refine():
    prob = dd.Problem(**FIG3)
    vals = []
    for beta in (1.0, 0.5):
        part = fig3_part(prob, beta)
        ub, lb = dd.upper_bound(prob, part), dd.lower_bound(prob, part)
        assert ub.value >= lb.value
        assert ub.mechanism.certify() <= prob.delta
        # P′ ≤ P on the same grid: the data-independent optimum is feasible for P′
        P = dpdro.upper_bound(prob.base_problem, part)
        assert ub.lp_value <= P.lp_value + 1e-9
        vals.append((ub.value, lb.value))
    (u1, l1), (u2, l2) = vals
    assert u2 <= u1 + 1e-9  # refining β (and the pieces of Φ) can only help the upper bound
    assert l2 >= l1 - 1e-9
    assert (u2 - l2) < (u1 - l1)


def test_single_piece_reduces_to_data_independent():
    """One piece over Φ with |Φ| ≥ Δf + β: P′(π, β) = P(π, β) and the grouped D′ = D(π, β)."""
    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=2.0, pieces=1)
    part = dpdro.Partition.uniform(L=6, beta=0.25)
    ub, P = dd.upper_bound(prob, part), dpdro.upper_bound(prob.base_problem, part)
    assert ub.lp_value == pytest.approx(P.lp_value, abs=1e-8)
    assert ub.value == pytest.approx(P.value, abs=1e-7)
    lb, D = (
        dd.lower_bound(prob, part, grouped=True, coefficients="infimum"),
        dpdro.lower_bound(prob.base_problem, part),
    )
    assert lb.lp_value == pytest.approx(D.lp_value, abs=1e-8)
    assert lb.value == pytest.approx(D.value, abs=1e-7)
    # the rounding bound of the grouped problem: at least D (ℓ1) and below the certified P
    lr = dd.lower_bound(prob, part, grouped=True)
    assert lr.coefficients == "rounding"
    assert D.value - 1e-9 <= lr.value <= P.value


@pytest.mark.parametrize("delta", [0.2, 1e-3])
def test_certified_family(delta):
    prob = dd.Problem(epsilon=1.0, delta=delta, sensitivity=1.0, phi_lo=0.0, phi_hi=1.0)
    part = fig3_part(prob, 0.5)
    ub = dd.upper_bound(prob, part)
    mech = ub.mechanism
    assert mech.n_pieces == 2
    d = mech.certify()
    assert d <= delta and d == ub.certified_delta
    # independent check of the certificate: δ_{l,l′}(φ) at many (also off-lattice) admissible φ
    e = mech.piece_edges
    worst = 0.0
    for piece, m in itertools.product(range(2), repeat=2):
        lo, hi = max(e[m] - e[piece + 1], -1.0), min(e[m + 1] - e[piece], 1.0)
        for phi in np.linspace(lo, hi, 41):
            worst = max(worst, hockey_stick(mech.noises[piece], mech.noises[m], 1.0, b=phi))
    assert worst <= d + 1e-12
    assert worst >= d - 1e-9  # the certificate is tight


def test_family_certificate_is_relative_to_the_first_edge():
    """The certificate depends on the piece edges only through their offsets from the first edge: a
    family moved by 2^20 (exact in binary) has the same δ and error bound; moved to edges that are
    not exact (e.g. 1234.5678 + 0.1·t), the error bound stays far below the room RELEASE_MARGIN·δ
    that every released family keeps, so a mechanism solved at δ is still certified at δ after the
    move (no δ − slack is needed for such moves). The bound still grows with |edges|·u through the
    edges' own rounding (about 1e-10 at |edges| ≈ 1e5): only exact edges would make it fully
    scale-free."""
    from dpdro.data_dependent.privacy import privacy_profile

    prob = dd.Problem(
        epsilon=1.0, delta=0.1, sensitivity=1.0, phi_lo=0.0, phi_hi=1.4, pieces=[0, 0.3, 1.1, 1.4]
    )
    ub = dd.upper_bound(prob, dpdro.Partition.uniform(L=25, beta=0.1))
    base = privacy_profile(ub.noises, ub.mechanism.piece_edges, 1.0, 1.0)
    assert base.delta <= 0.1 and base.delta <= 0.1 * (1 - 0.5e-9)
    moved = privacy_profile(ub.noises, np.array([0.0, 3.0, 11.0, 14.0]) / 10 + 2.0**20, 1.0, 1.0)
    far = [
        privacy_profile(ub.noises, lo + np.array([0, 3, 11, 14]) * 0.1, 1.0, 1.0)
        for lo in (269.1, -1234.5678)
    ]
    assert np.array_equal(moved.deltas, base.deltas)
    for prof in far:
        assert prof.error_bound <= 1e-11
        assert prof.delta <= 0.1


def test_atoms_in_the_upper_bound_and_the_certificate():
    """atom=True: every piece's noise may carry a point mass at 0; the LP equals the brute-force LP
    with the atom in every event of the pair, the family is certified (and the certificate agrees
    with a direct evaluation of a_l + ∫(p_l − e^ε p_l′(· − φ))₊ at admissible φ ≠ 0), and the value
    is at most that of the same LP without atoms."""
    prob = dd.Problem(epsilon=3.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=1.0)
    part = dpdro.Partition.uniform(L=4, beta=0.5)
    for centred in (False, True):
        ua = dd.upper_bound(prob, part, atom=True, centred=centred)
        u0 = dd.upper_bound(prob, part, centred=centred)
        assert ua.value <= u0.value + 1e-12
        m = ua.mechanism
        assert all(n.atom > 0.1 for n in m.noises)
        d = m.certify()
        assert d <= prob.delta
        e, worst = m.piece_edges, 0.0
        for piece, k in itertools.product(range(m.n_pieces), repeat=2):
            lo, hi = max(e[k] - e[piece + 1], -1.0), min(e[k + 1] - e[piece], 1.0)
            for phi in np.linspace(lo, hi, 81)[1:-1]:
                if phi != 0.0:
                    worst = max(
                        worst,
                        m.noises[piece].atom
                        + hockey_stick(m.noises[piece], m.noises[k], 3.0, b=phi),
                    )
        assert worst <= d + 1e-12 and worst >= d - 1e-4
    # the dd family certificate with atoms against the data-independent one (one piece, |Φ| ≥ Δf)
    one = dd.Problem(epsilon=3.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=2.0, pieces=1)
    ub = dd.upper_bound(one, dpdro.Partition.uniform(L=6, beta=0.25), atom=True)
    nz = ub.noises[0]
    assert nz.atom > 0
    assert ub.mechanism.certify() == pytest.approx(dpdro.certify_delta(nz, 3.0, 1.0), abs=1e-12)
    with pytest.raises(ValueError, match="monoton"):
        dd.upper_bound(tiny(monotone=True), part, atom=True)


@pytest.mark.parametrize(
    "prob, L, beta, kw",
    [
        (dd.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0, phi_lo=0.0, phi_hi=1.4,
                    pieces=[0, 0.3, 1.1, 1.4]), 25, 0.1, {}),
        (tiny(phi_hi=2.0, loss="l2", pieces=[0.0, 0.5, 1.5, 2.0]), 6, 0.25, {}),
        (tiny(phi_hi=2.0, pieces=[0.0, 0.5, 1.5, 2.0], cap=1.0), 6, 0.25, {}),
        (dd.Problem(epsilon=3.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=1.0), 4, 0.5,
         dict(atom=True)),
        (tiny(loss="l1"), 4, 0.5, dict(centred=True)),
        (tiny(monotone=True, pieces=[0.0, 0.5, 1.5]), 4, 0.25, {}),
    ],
)
def test_complete_lp_by_interior_point_equals_algorithm_1(prob, L, beta, kw):
    """complete=True (every constraint of P′ from the start, solved by the interior-point method
    with crossover) gives the optimum of Algorithm 1 from the empty relaxation, in one round whose
    oracle finds nothing violated, and a certified family; a re-solve at a smaller δ continues warm
    from the crossover's basis and equals a fresh solve of the same complete LP."""
    part = dpdro.Partition.uniform(L=L, beta=beta)
    ref = dd.upper_bound(prob, part, **kw)
    ub = dd.upper_bound(prob, part, complete=True, **kw)
    assert ub.iterations == 1 and ub.simplex_iterations == 0  # no simplex pivot: IPM + crossover
    assert ub.lp_value == pytest.approx(ref.lp_value, rel=1e-7, abs=1e-10)
    assert ub.value == pytest.approx(ref.value, rel=1e-7, abs=1e-10)
    assert ub.mechanism.certify() <= prob.delta
    offset = -part.beta / 2 if kw.get("centred") else 0.0
    lps = [DDBoundingLP(prob, part, "upper", offset=offset, atom=kw.get("atom", False))
           for _ in range(2)]
    for lp in lps:
        lp.add_all_shift_cuts()
    lps[0].interior_first = True
    first = lps[0].solve()
    assert first.status == "optimal" and lps[0].shortfalls(first.x).max() <= 1e-9
    lps[0].set_delta(0.9 * prob.delta)
    lps[1].set_delta(0.9 * prob.delta)
    warm, fresh = lps[0].solve(), lps[1].solve()
    assert warm.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", ["coarse", "empty", "one"])
def test_complete_from_a_coarse_seed_is_the_complete_optimum(monkeypatch, seed):
    """complete=True on a P′ whose pieces, Φ and Δf lie on the grid 2β starts from the groups that
    bind on that coarser grid (forced here on a small instance; the real threshold is for large
    LPs), or from a deliberately poor seed: the oracle adds what is violated, so the value is the
    optimum of the complete LP (the same as without the seed and as Algorithm 1 from the empty
    relaxation) and the released family is certified."""
    from dpdro.data_dependent import bounds

    prob = dd.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0, phi_lo=-1.0, phi_hi=1.0,
                      pieces=[-1.0, -0.5, 0.0, 0.5, 1.0])
    part = dpdro.Partition.uniform(L=8, beta=0.25)
    plain = dd.upper_bound(prob, part, complete=True)  # below the threshold: the complete LP
    ref = dd.upper_bound(prob, part)
    monkeypatch.setattr(bounds, "_COARSE_MIN_ROWS", 0)
    coarse = bounds._coarser(prob, part)
    assert coarse == dpdro.Partition.uniform(L=4, beta=0.5)
    seeds = []
    binding_on = bounds._binding_on

    def spy(problem, partition, budget, tol):
        keys = binding_on(problem, partition, budget, tol)
        if seed == "empty":
            keys = keys[:0]
        elif seed == "one":
            keys = keys[:1]
        seeds.append((partition, keys))
        return keys

    monkeypatch.setattr(bounds, "_binding_on", spy)
    ub = dd.upper_bound(prob, part, complete=True)
    assert [p for p, _ in seeds] == [coarse] and len(seeds[0][1]) < DDBoundingLP(
        prob, coarse, "upper").n_groups
    assert ub.lp_value == pytest.approx(plain.lp_value, rel=1e-9, abs=1e-12)
    assert ub.value == pytest.approx(ref.value, rel=1e-7, abs=1e-10)
    assert np.allclose(ub.piece_losses, plain.piece_losses, rtol=1e-6)
    assert ub.mechanism.certify() <= prob.delta
    if seed == "coarse":
        assert ub.iterations >= 1
    # no coarser grid: pieces off the grid 2β, a non-uniform partition
    off = dd.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0, phi_lo=-1.0, phi_hi=1.0,
                     pieces=[-1.0, -0.25, 1.0])
    assert bounds._coarser(off, part) is None
    fine = dd.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0, phi_lo=-1.0, phi_hi=1.0)
    assert bounds._coarser(fine, part) is None  # the fine pieces Φ_k(β) change with β
    assert bounds._coarser(prob, dpdro.Partition([-4, -2, 0, 1, 3], 0.25)) is None
    assert bounds._coarser(prob, dpdro.Partition.uniform(L=8, beta=0.5)) is None  # pieces off 1.0


def test_all_shift_cuts_at_once_equal_one_group_at_a_time():
    """DDBoundingLP.add_all_shift_cuts (three model calls) builds the LP of the per-group loop of
    dpdro.lp.PrivacyLP: the same rows up to their order, the same optimum."""
    from dpdro.lp import PrivacyLP

    prob = tiny(phi_hi=2.0, pieces=[0.0, 0.5, 1.5, 2.0])
    part = dpdro.Partition.uniform(L=5, beta=0.25)
    for kind in ("upper", "lower"):
        a, b = DDBoundingLP(prob, part, kind), DDBoundingLP(prob, part, kind)
        a.add_all_shift_cuts()
        PrivacyLP.add_all_shift_cuts(b)
        assert a.model.n_rows == b.model.n_rows and a.model.n_cols == b.model.n_cols
        assert all(a.has_full_cut(r) for r in range(a.n_groups))
        ra, rb = a.model.matrix(), b.model.matrix()
        assert sorted(map(tuple, np.sort(ra[1].toarray(), axis=1).tolist())) == sorted(
            map(tuple, np.sort(rb[1].toarray(), axis=1).tolist())
        )
        assert a.solve().objective == pytest.approx(b.solve().objective, rel=1e-10, abs=1e-12)


def test_certify_delta_of_a_family_detects_violation():
    lap = dpdro.Partition.uniform(L=4, beta=0.5)
    a = dpdro.PiecewiseUniform(lap.edges, np.full(9, 1 / 9), grid=0.5)
    b = dpdro.PiecewiseUniform(lap.edges, np.eye(9)[4], grid=0.5)
    prof = dd.privacy_profile([a, b], [0.0, 0.5, 1.0], 1.0, 1.0)
    ref = max(
        hockey_stick(x, y, 1.0, b=phi)
        for x, y in [(a, b), (b, a), (a, a), (b, b)]
        for phi in np.linspace(-1, 1, 81)
    )
    assert prof.delta == pytest.approx(ref, abs=1e-12)
    assert prof.delta >= ref


# ---------------------------------------------------------------------------- options
def test_monotone_data_independent():
    base = dict(epsilon=3.0, delta=0.3, sensitivity=1.0)
    part = dpdro.Partition.uniform(L=16, beta=0.125)
    free = dpdro.upper_bound(dpdro.Problem(**base), part)
    prob = dpdro.Problem(**base, monotone=True)
    mono, mlow = dpdro.upper_bound(prob, part), dpdro.lower_bound(prob, part)
    assert mono.value >= free.value - 1e-9
    assert is_monotone(mono.noise)
    assert dpdro.certify_delta(mono.noise, 3.0, 1.0) <= 0.3
    assert mlow.value <= mono.value
    assert mlow.value >= dpdro.lower_bound(dpdro.Problem(**base), part).value - 1e-9


def test_monotone_lower_bound_valid_on_nonuniform_cells():
    """The lower bound's monotone rows are implied for every monotone density: a Laplace-like
    monotone histogram on a fine grid, aggregated to a graded partition, satisfies them."""
    from dpdro.monotone import monotone_matrix

    part = dpdro.Partition.graded(0.25, half_width=3.0, fine_half_width=1.0, growth=1.5)
    # a cell straddling 0 on purpose
    pi = np.array([-12, -6, -3, -1, 2, 4, 8, 13])
    for ticks in (part.pi, pi):
        fine = np.arange(ticks[0], ticks[-1] + 1)
        dens = np.exp(-np.abs(fine[:-1] + 0.5) / 3.0)
        dens[fine[:-1] < 0] *= 2.0  # asymmetric but monotone on each side
        mass = np.add.reduceat(dens, ticks[:-1] - ticks[0])
        row = monotone_matrix(ticks, lower=True) @ mass
        assert np.all(row <= 1e-12)


def test_monotone_data_dependent():
    prob = dd.Problem(**FIG3, monotone=True)
    free = dd.Problem(**FIG3)
    part = fig3_part(prob, 1.0)
    ub, ubf = dd.upper_bound(prob, part), dd.upper_bound(free, part)
    assert ub.value >= ubf.value - 1e-9
    assert all(is_monotone(n) for n in ub.noises)
    assert ub.mechanism.certify() <= prob.delta
    assert dd.lower_bound(prob, part).value <= ub.value


def test_caps():
    prob = dd.Problem(**FIG3)
    part = fig3_part(prob, 0.5)
    free = dd.upper_bound(prob, part)
    o = float(np.sort(free.piece_losses)[-2])  # binds for the worst piece
    capped = dd.Problem(**FIG3, cap=o)
    ub = dd.upper_bound(capped, part)
    assert np.all(ub.piece_losses <= o)
    assert ub.value >= free.value - 1e-9
    assert ub.mechanism.certify() <= prob.delta
    assert dd.lower_bound(capped, part).value <= ub.value
    # a cap under another loss
    c2 = dd.Problem(**FIG3, cap=10.0, cap_loss="l2")
    ub2 = dd.upper_bound(c2, part)
    assert np.all(ub2.mechanism.expected_losses("l2") <= 10.0)
    with pytest.raises(dpdro.InfeasibleError):
        dd.upper_bound(dd.Problem(**FIG3, cap=0.01), part)


def test_weights():
    w = (np.array([0.0, 1.0, 4.0]), np.array([3.0, 1.0]))
    prob = dd.Problem(**{**FIG3, "phi_hi": 4.0}, weight=w)
    m = prob.weight_masses([0.0, 0.5, 1.0, 2.0, 4.0])
    assert m.sum() == pytest.approx(1.0)
    assert m.tolist() == pytest.approx([0.25, 0.25, 1 / 6, 1 / 3])
    probc = dd.Problem(**FIG3, weight=lambda x: 1.0 + x)
    assert probc.weight_masses([0.0, 2.0, 4.0]).tolist() == pytest.approx([4 / 12, 8 / 12])
    assert probc.weight_infima([0.0, 2.0, 4.0]).tolist() == pytest.approx(
        [1 / 12, 3 / 12], abs=1e-6
    )
    part = fig3_part(prob, 1.0)
    ub = dd.upper_bound(prob, part)
    assert ub.value == pytest.approx(float(np.sum(ub.weights * ub.piece_losses)), rel=1e-9)
    assert dd.lower_bound(prob, part).value <= ub.value


def test_the_driver_handles_callable_weights_and_too_strict_caps():
    """Regression (found probing the driver): with a callable weight, optimal_noise raised the
    output family's ValueError from its lower bound; it now uses the bounds in noise coordinates.
    A cap no mechanism meets is reported as P′'s infeasibility (its relaxation D′_R is infeasible),
    saying which cap; a cap the output family alone cannot meet leaves the other families."""
    small = dict(epsilon=1.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=2.0)
    res = dd.optimal_noise(dd.Problem(**small, weight=lambda x: 1.0 + x), rel_gap=0.3,
                           time_limit=10)
    assert res.lower.value <= res.upper.value and res.mechanism.certify() <= 0.2
    with pytest.raises(dpdro.InfeasibleError, match="cap = 0.2.*raise cap"):
        dd.optimal_noise(dd.Problem(**small, cap=0.2), rel_gap=0.05, time_limit=10)
    from dpdro._budget import TimeBudget
    from dpdro.data_dependent.bounds import _output_upper_solve

    strict = dd.Problem(**small, cap=0.2)
    assert _output_upper_solve(strict, 0.5, None, TimeBudget(10), 1e-9, "upper")[0] is None


def test_mechanism_sampling():
    prob = dd.Problem(**FIG3, pieces=2)
    ub = dd.upper_bound(prob, fig3_part(prob, 1.0))
    mech = ub.mechanism
    assert mech.piece(0.0) == 0 and mech.piece(1.99) == 0 and mech.piece(2.0) == 1
    assert mech.noise_for(3.0) is mech.noises[1]
    x = mech.sample_noise(np.full(20000, 3.0), rng=1)
    assert abs(x.mean() - mech.noises[1].mean) < 0.05
    a, b = mech.release(1.0, rng=5), mech.release(1.0, rng=5)
    assert a == b
    with pytest.raises(ValueError, match="query value must lie in"):
        mech.piece(4.0)
    back = dd.Mechanism.from_dict(mech.to_dict())
    assert back.certify() == mech.certify()
    assert all(
        np.array_equal(a.probs, b.probs) for a, b in zip(back.noises, mech.noises, strict=False)
    )


# ---------------------------------------------------------------------------- bad inputs
@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(sensitivity=-1.0), ValueError, "sensitivity"),
        (dict(phi_hi=0.0), ValueError, "phi_hi must be > phi_lo"),
        (dict(phi_lo=float("-inf")), ValueError, "finite"),
        (dict(phi_lo="a"), TypeError, "phi_lo"),
        (dict(pieces=0), ValueError, "pieces"),
        # had spent minutes allocating 8 GB of piece edges
        (dict(pieces=10**9), ValueError, r"pieces must be an integer in \[1, 100000\]"),
        (dict(epsilon=1000.0), ValueError, "epsilon must be at most 700"),  # had: OverflowError
        (dict(pieces=[0.0, 1.0, 0.5, 1.5]), ValueError, "strictly increasing"),
        (dict(pieces=[0.0, 1.0]), ValueError, "end at phi_hi"),
        (dict(pieces=True), TypeError, "pieces"),
        (dict(loss=["l1", "l1"]), ValueError, "explicit pieces"),
        (dict(loss=["l1"], pieces=2), ValueError, "one entry per piece"),
        (dict(weight=lambda x: -1.0), ValueError, "weight must be finite and >= 0"),
        (dict(weight=lambda x: 0.0), ValueError, "positive mass"),
        (dict(weight=(np.array([0.0, 1.0]), np.array([1.0]))), ValueError, "cover"),
        (dict(weight=(np.array([0.0, 2.0]), np.array([-1.0]))), ValueError, ">= 0"),
        (dict(weight=(np.array([0.0, 2.0]), np.array([0.0]))), ValueError, "positive mass"),
        (dict(weight="uniform"), TypeError, "weight"),
        (dict(monotone=1), TypeError, "monotone"),
        (dict(cap=-1.0), ValueError, "cap"),
        (dict(cap_loss="l2"), ValueError, "cap_loss given without cap"),
    ],
)
def test_bad_problem_inputs(kw, exc, match):
    args = dict(epsilon=1.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=1.5)
    args.update(kw)
    with pytest.raises(exc, match=match):
        dd.Problem(**args)


def test_bad_grid_and_call_inputs():
    prob = tiny(pieces=[0.0, 0.7, 1.5])
    with pytest.raises(ValueError, match="beta must divide the width of Φ"):
        prob.grouping(0.4)
    with pytest.raises(ValueError, match="not on the β-grid"):
        prob.grouping(0.5)
    with pytest.raises(TypeError, match="data_dependent.Problem"):
        DDBoundingLP(prob.base_problem, dpdro.Partition.uniform(L=2, beta=0.5))
    with pytest.raises(TypeError, match="Partition"):
        DDBoundingLP(tiny(), [0, 1])
    with pytest.raises(ValueError, match="kind"):
        DDBoundingLP(tiny(), dpdro.Partition.uniform(L=2, beta=0.5), "middle")
    with pytest.raises(ValueError, match="beta must divide the sensitivity"):
        dd.upper_bound(
            tiny(sensitivity=0.4, phi_hi=1.0), dpdro.Partition.uniform(L=2, beta=0.25 * 1.2)
        )
    with pytest.raises(ValueError, match="probs must have shape"):
        dd.max_privacy_shortfall(
            tiny(), dpdro.Partition.uniform(L=2, beta=0.5), np.ones((2, 5)) / 5
        )
    with pytest.raises(dpdro.InfeasibleError, match="infeasible"):
        dd.upper_bound(tiny(delta=0.01), dpdro.Partition.uniform(L=1, beta=0.5))
    with pytest.raises(TypeError, match="monotone"):
        dpdro.Problem(epsilon=1.0, delta=0.2, monotone="yes")
    with pytest.raises(TypeError, match="noises must be a non-empty"):
        dd.Mechanism((), [0.0], 1.0, 0.1, 1.0)
    nz = dpdro.PiecewiseUniform([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="piece_edges"):
        dd.Mechanism((nz,), [0.0, 1.0, 2.0], 1.0, 0.1, 1.0)
    with pytest.raises(ValueError, match="delta"):
        dd.Mechanism((nz,), [0.0, 1.0], 1.0, 1.5, 1.0)
    with pytest.raises(TypeError, match="PiecewiseUniform"):
        dd.certify_delta([1, 2], [0, 1, 2], 1.0, 1.0)


def test_event_cuts_match_shift_cuts():
    """Algorithm 1 with single-event cuts (the paper's) and dpdro's whole-shift cuts agree."""
    prob = tiny(pieces=[0.0, 0.5, 1.5])
    part = dpdro.Partition(np.array([-3, -1, 0, 1, 3]), 0.5)
    a, b = dd.upper_bound(prob, part, cuts="event"), dd.upper_bound(prob, part)
    assert a.lp_value == pytest.approx(b.lp_value, abs=1e-8)
    part = dpdro.Partition.uniform(3, 0.5)  # D′(π, β) needs cells of width β
    c, d = dd.lower_bound(prob, part, cuts="event"), dd.lower_bound(prob, part)
    assert c.lp_value == pytest.approx(d.lp_value, abs=1e-8)
    assert c.value <= d.lp_value + 1e-12


def test_one_cell_support_is_infeasible():
    """With one noise cell every segment is free: the budget rows alone must make the LP
    infeasible."""
    with pytest.raises(dpdro.InfeasibleError):
        dd.upper_bound(tiny(), dpdro.Partition.uniform(L=0, beta=0.5))


# -------------------------------------------------------------------- driver and time limits
def test_dd_optimal_noise_reaches_gap_and_certifies():
    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, phi_lo=0.0, phi_hi=1.0)
    res = dd.optimal_noise(prob, rel_gap=0.3, time_limit=120)
    assert res.stopped == "gap" and res.gap <= 0.3
    assert res.mechanism.certify() <= prob.delta
    assert 0 < res.lower.value <= res.upper.value
    path = [0.5, 0.25, 1 / 6, 0.125, 1 / 12, 0.0625, 1 / 24, 0.03125]
    assert [r["beta"] for r in res.history] == pytest.approx(path[: len(res.history)], rel=1e-15)


@pytest.mark.parametrize(
    "sensitivity, phi_lo, phi_hi, beta0",
    [(2.0, 0.0, 4.0, 1), (1.0, 0.0, 3.0, Fraction(1, 2)), (0.5, -1.0, 2.0, Fraction(1, 4)),
     (0.3, 0.0, 0.7, Fraction(1, 10))],
)
def test_default_betas_path(sensitivity, phi_lo, phi_hi, beta0):
    """β₀/m for m = 1, 2, 3, 4, 6, 8, 12, …, each the smallest float ≥ β₀/m: strictly decreasing,
    Δf/β and |Φ|/β whole numbers, never a float β shorter than β₀/m (so Δf/β steps of it reach
    Δf exactly), and for a dyadic β₀ the halving path of before is a subsequence, bit for bit."""
    from dpdro.data_dependent.optimal import default_betas

    prob = dd.Problem(epsilon=1.0, delta=0.2, sensitivity=sensitivity, phi_lo=phi_lo,
                      phi_hi=phi_hi)
    betas = default_betas(prob)
    m = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
    assert len(betas) == len(m)
    assert all(a > b for a, b in zip(betas, betas[1:], strict=False))
    for k, beta in zip(m, betas, strict=True):
        exact = Fraction(beta0) / k
        assert Fraction(beta) >= exact > Fraction(float(np.nextafter(beta, -np.inf)))
        K, n = prob.grouping(beta).K, prob.base_problem.shifts(beta)
        assert K == round((phi_hi - phi_lo) / exact) and n == round(sensitivity / exact)
        assert n * Fraction(beta) >= Fraction(sensitivity)
    if Fraction(beta0).denominator & (Fraction(beta0).denominator - 1) == 0:  # dyadic β₀
        assert [betas[m.index(2**i)] for i in range(8)] == [float(beta0) / 2**i for i in range(8)]


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(rel_gap=0), ValueError, "rel_gap"),
        (dict(rel_gap=-1), ValueError, "rel_gap"),
        (dict(time_limit=0), ValueError, "time_limit"),
        (dict(betas=[0.5, -1]), ValueError, "betas"),
        (dict(betas=[]), ValueError, "betas"),
        (dict(support_half_width=0), ValueError, "support_half_width"),
    ],
)
def test_dd_optimal_noise_bad_inputs(kw, exc, match):
    with pytest.raises(exc, match=match):
        dd.optimal_noise(tiny(), **kw)
    with pytest.raises(TypeError, match="problem"):
        dd.optimal_noise(dpdro.Problem(epsilon=1.0, delta=0.2))


@pytest.mark.parametrize("limit", [1.0, 3.0])
def test_time_limits_honoured(limit):
    """Both bounds and the driver return within their time limit (+10%, and the few hundredths of a
    second of building the LP); the driver's result is still a certified bracket or empty."""
    prob = dd.Problem(**FIG3)
    part = fig3_part(prob, 0.125)
    t = time.perf_counter()
    try:
        dd.upper_bound(prob, part, centred=True, time_limit=limit)
    except (RuntimeError, TimeoutError):
        pass
    assert time.perf_counter() - t <= 1.1 * limit + 0.3
    t = time.perf_counter()
    try:
        dd.lower_bound(prob, fig3_part(prob, 0.0625), time_limit=limit)
    except TimeoutError:
        pass
    assert time.perf_counter() - t <= 1.1 * limit + 0.3
    t = time.perf_counter()
    res = dd.optimal_noise(prob, rel_gap=1e-3, time_limit=limit)
    assert time.perf_counter() - t <= 1.1 * limit + 0.3
    assert res.stopped in ("time limit", "gap")
    if res.upper is not None:
        assert res.mechanism.certify() <= prob.delta
    if res.upper is not None and res.lower is not None:
        assert res.lower.value <= res.upper.value


@pytest.mark.parametrize("pieces", [3, [0.0, 0.3, 2.0]])
def test_default_betas_put_explicit_piece_edges_on_the_grid(pieces):
    """Three equal pieces of [0, 2) (edges at 2/3 and 4/3), or an edge at 0.3: every default β
    divides the piece widths (the default path had started at β = 0.5, and dd.optimal_noise
    raised 'edge 1.333… is not on the β-grid … choose β dividing every piece width')."""
    prob = dd.Problem(epsilon=1.0, delta=0.2, phi_lo=0.0, phi_hi=2.0, pieces=pieces)
    for beta in dd.optimal.default_betas(prob):
        assert prob.grouping(beta).lam[-1] == prob.grouping(beta).K
