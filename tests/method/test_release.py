"""The one release path (dpdro.release): repair by mixing, its anchors and exception policy, and a
real overshooting LP solution of every family repaired to a certified noise.

The edge cases of the repair use scalar stand-ins: an "object" is its δ, certified exactly, and the
mixture of two objects is linear in the weight (as δ is convex and the bound linear, module
docstring).
"""

import math

import numpy as np
import pytest

import dpdro
from dpdro import data_dependent as dd
from dpdro._budget import TimeBudget
from dpdro.bounds import BoundingLP, _PartitionRelease
from dpdro.cutting_plane import run_cutting_plane
from dpdro.data_dependent.bounds import _FamilyRelease
from dpdro.data_dependent.lp import DDBoundingLP
from dpdro.grid import GridLP, _GridRelease
from dpdro.release import (
    ANCHOR_FRACTIONS,
    RELEASE_MARGIN,
    LowerBound,
    ReleaseError,
    ReleaseFamily,
    best_lower_bound,
    release,
    repair_by_mixing,
)
from dpdro.solvers import SolverError

DELTA = 0.1


def _certify(x):
    return float(x), 0.0


def _mix(a, b, w):
    return (1.0 - w) * a + w * b


def _never():
    raise AssertionError("an anchor was built although none was needed")


# ---------------------------------------------------------------------------- repair_by_mixing
def test_a_certified_candidate_is_released_unchanged():
    out, d, w = repair_by_mixing(0.09, _certify, _mix, [_never], DELTA)
    assert (out, d, w) == (0.09, 0.09, 0.0)
    # δ exactly
    assert repair_by_mixing(DELTA, _certify, _mix, [_never], DELTA) == (DELTA, DELTA, 0.0)


def test_the_first_anchor_below_delta_is_mixed_in_with_the_smallest_weight():
    calls = []

    def anchor(value):
        def make():
            calls.append(value)
            return value
        return make

    anchors = [lambda: None, anchor(0.1000001), anchor(DELTA), anchor(0.08), anchor(0.0)]
    out, d, w = repair_by_mixing(0.1001, _certify, _mix, anchors, DELTA)
    # None, above δ and δ itself are skipped; 0.0 never built
    assert calls == [0.1000001, DELTA, 0.08]
    assert d <= DELTA and out == d
    # doubled once if rounding leaves the mixture an ulp above δ
    w0 = (0.1001 - DELTA) / (0.1001 - 0.08)
    assert w == pytest.approx(w0, rel=1e-12) or w == pytest.approx(2 * w0, rel=1e-12)


def test_the_certificates_rounding_error_is_kept_free():
    err = 1e-6
    out, d, w = repair_by_mixing(0.11, lambda x: (float(x), err), _mix, [lambda: 0.05], DELTA)
    assert d <= DELTA - 4 * err + 1e-15 and w == pytest.approx(
        (0.11 - (DELTA - 4 * err)) / (0.11 - 0.05)
    )


def test_the_weight_doubles_until_the_mixture_certifies():
    """A mixture whose δ is above the linear interpolation (here: only half of the anchor's weight
    takes effect) needs a larger weight: it doubles until the certificate is at most δ."""
    half = lambda a, b, w: (1.0 - w / 2) * a + (w / 2) * b  # noqa: E731
    out, d, w = repair_by_mixing(0.12, _certify, half, [lambda: 0.0], DELTA)
    w0 = (0.12 - DELTA) / 0.12
    assert d <= DELTA and w == pytest.approx(min(1.0, 2 * w0))


def test_no_anchor_below_delta_is_a_release_error():
    with pytest.raises(ReleaseError, match="no anchor could be certified below it"):
        repair_by_mixing(0.2, _certify, _mix, [lambda: None, lambda: 0.15, lambda: DELTA], DELTA)
    assert issubclass(ReleaseError, RuntimeError)


# ---------------------------------------------------------------------------- release, policy
class _FakeLP:
    def __init__(self):
        self.deltas = []

    def set_delta(self, delta):
        self.deltas.append(delta)


class _ScalarFamily(ReleaseFamily):
    """An LP whose point is its δ; ``outcomes`` script the re-solves (a value, or an exception)."""

    def __init__(self, outcomes, fallback=None):
        self.problem = dpdro.Problem(epsilon=1.0, delta=DELTA)
        self.lp = _FakeLP()
        self.outcomes = list(outcomes)
        self.fallback = fallback

    def noise(self, x):
        return float(x)

    def solve(self, budget):
        out = self.outcomes.pop(0)
        if isinstance(out, BaseException):
            raise out
        return out

    def certify(self, released):
        return float(released), 0.0

    def mix(self, a, b, weight):
        return _mix(a, b, weight)

    def expected_loss(self, released):
        return 1.0 + released

    def fallback_anchor(self):
        return self.fallback

    def result(self, released):
        return {"noise": None}


def test_release_repairs_with_a_resolve_and_restores_delta_after_each():
    fam = _ScalarFamily([dpdro.InfeasibleError("window"), SolverError("numerical"), 0.095])
    ub = release(fam, 0.1001, TimeBudget(None), lp_value=1.0)
    margin = DELTA * (1.0 - RELEASE_MARGIN)
    f = ANCHOR_FRACTIONS
    assert fam.lp.deltas == [f[0] * DELTA, margin, f[1] * DELTA, margin, f[2] * DELTA, margin]
    assert ub.certified_delta <= DELTA and ub.repair_weight > 0 and ub.lp_value == 1.0
    assert ub.value >= 1.0 + ub.certified_delta  # the expected loss, rounded up


def test_release_uses_the_fallback_anchor_first():
    fam = _ScalarFamily([], fallback=0.0)
    ub = release(fam, 0.1001, TimeBudget(None))
    assert fam.lp.deltas == [] and ub.certified_delta <= DELTA
    assert ub.repair_weight == pytest.approx(0.0001 / 0.1001, rel=1e-9)


def test_release_skips_failing_resolves_and_reports_when_none_is_left():
    fam = _ScalarFamily([TimeoutError(), dpdro.InfeasibleError(), SolverError(), 0.2])
    with pytest.raises(ReleaseError):
        release(fam, 0.1001, TimeBudget(None))
    assert fam.lp.deltas[-1] == DELTA * (1.0 - RELEASE_MARGIN)


def test_an_unexpected_error_propagates_and_delta_is_restored():
    fam = _ScalarFamily([ValueError("a bug")])
    with pytest.raises(ValueError, match="a bug"):
        release(fam, 0.1001, TimeBudget(None))
    assert fam.lp.deltas == [ANCHOR_FRACTIONS[0] * DELTA, DELTA * (1.0 - RELEASE_MARGIN)]


def test_a_spent_budget_tries_no_resolve_and_is_a_timeout():
    fam = _ScalarFamily([0.05])
    with pytest.raises(TimeoutError, match="time limit ran out"):
        release(fam, 0.1001, TimeBudget(1e-9))
    assert fam.lp.deltas == []
    # no repair needed
    assert release(_ScalarFamily([]), 0.05, TimeBudget(1e-9)).certified_delta == 0.05


# ---------------------------------------------------------------------------- real families
def _overshooting(lp, factor=1.0 + 1e-5):
    """Solve ``lp`` at δ·factor, as if the solver had overshot δ, then put δ back."""
    delta = lp.problem.delta
    lp.set_delta(delta * factor)
    x = run_cutting_plane(lp).x
    lp.set_delta(delta * (1.0 - RELEASE_MARGIN))
    return x


@pytest.mark.parametrize("L, delta, fallback", [(24, 0.1, True), (24, 0.01, False)])
def test_partition_family_repairs_a_real_overshoot(L, delta, fallback):
    """P(π, β): the uniform noise on [−6, 6.25) is (ε, 1/12.25)-DP, an anchor for δ = 0.1 but not
    0.01."""
    prob = dpdro.Problem(epsilon=1.0, delta=delta)
    lp = BoundingLP(prob, dpdro.Partition.uniform(L, 0.25), "upper")
    fam = _PartitionRelease(lp, cuts="shift", tol=1e-9)
    x = _overshooting(lp)
    assert fam.certify(fam.noise(x))[0] > delta
    assert (fam.certify(fam.fallback_anchor())[0] < delta) == fallback
    ub = release(fam, x, TimeBudget(None))
    assert 0 < ub.repair_weight < 1
    assert dpdro.certify_delta(ub.noise, 1.0, 1.0) == ub.certified_delta <= delta
    assert ub.value >= ub.noise.expected_loss("l1")


def test_grid_family_repairs_a_real_overshoot():
    prob = dpdro.Problem(epsilon=2.0, delta=1e-3, loss="l2")
    lp = GridLP(prob, 4, 40, "upper", atom=True)
    lp.set_delta(prob.delta * (1.0 + 1e-5))
    x = lp.solve().x
    lp.set_delta(prob.delta * (1.0 - RELEASE_MARGIN))
    fam = _GridRelease(lp)
    assert fam.certify(fam.noise(x))[0] > prob.delta and fam.fallback_anchor() is None
    ub = release(fam, x, TimeBudget(None), k=4, L=40)
    assert 0 < ub.repair_weight < 1 and ub.k == 4 and ub.boundary_mass is not None
    assert dpdro.certify_delta(ub.noise, 2.0, 1.0) == ub.certified_delta <= prob.delta


def test_data_dependent_family_repairs_a_real_overshoot():
    prob = dd.Problem(epsilon=1.0, delta=0.05, phi_lo=0.0, phi_hi=2.0, pieces=2)
    lp = DDBoundingLP(prob, dpdro.Partition.uniform(12, 0.5), "upper")
    x = _overshooting(lp)
    fam = _FamilyRelease(lp, cuts="shift", tol=1e-9, opts={})
    assert fam.certify(fam.noise(x))[0] > prob.delta
    ub = release(fam, x, TimeBudget(None))
    assert 0 < ub.repair_weight < 1
    assert ub.mechanism.certify() == ub.certified_delta <= prob.delta
    assert ub.value >= float(np.sum(ub.weights * ub.piece_losses))


# ---------------------------------------------------------------------------- lower bounds
def _lb(value, coefficients):
    return lambda budget: LowerBound(
        value=value, lp_value=value, seconds=0.0, coefficients=coefficients
    )


def test_best_lower_bound_keeps_the_largest_and_records_every_candidate():
    best = best_lower_bound([_lb(1.0, "rounding"), _lb(2.0, "infimum")], TimeBudget(None))
    assert best.value == 2.0 and best.candidates == {"rounding": 1.0, "infimum": 2.0}


def test_best_lower_bound_and_time():
    def late(budget):
        raise TimeoutError("late")

    assert best_lower_bound([_lb(1.0, "rounding"), late], TimeBudget(None)).value == 1.0
    with pytest.raises(TimeoutError):
        best_lower_bound([late, _lb(1.0, "rounding")], TimeBudget(None))
    # a spent budget still runs the first attempt, and no other
    spent = best_lower_bound([_lb(1.0, "rounding"), _lb(2.0, "infimum")], TimeBudget(1e-9))
    assert spent.value == 1.0 and spent.candidates == {"rounding": 1.0}


def test_a_lower_bound_is_never_below_the_losses_infimum():
    """Every loss is >= 0 (Assumption 1), so max(0, D) is as valid as D: D_R for ℓ2 at δ = 0.999
    on β = 0.5 subtracts e_β = β²/4 from an optimum near 4e-4 (it reported −0.062, an infinite
    gap); the LP's own value is kept, and so are bounds above 0."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.999, loss="l2")
    part = dpdro.Partition.uniform(L=10, beta=0.5)
    lb = dpdro.lower_bound(prob, part, coefficients="rounding")
    assert lb.value == 0.0 and lb.lp_value < 0.0625
    assert lb.value <= dpdro.upper_bound(prob, part).value
    assert _lb(-1e-5, "rounding")(TimeBudget(None)).value == 0.0
    assert _lb(0.25, "rounding")(TimeBudget(None)).value == 0.25


def test_every_family_reports_the_same_result_types():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2)
    part = dpdro.Partition.uniform(8, 0.25)
    dprob = dd.Problem(epsilon=1.0, delta=0.2, phi_lo=0.0, phi_hi=1.0)
    uppers = [
        dpdro.upper_bound(prob, part),
        dpdro.grid.grid_upper_bound(prob, 4, 12),
        dpdro.optimal_noise(prob, rel_gap=0.05).upper,
        dd.upper_bound(dprob, part),
    ]
    lowers = [
        dpdro.lower_bound(prob, part),
        dpdro.grid.grid_lower_bound(prob, 4, 8),
        dd.lower_bound(dprob, part),
    ]
    assert {type(u) for u in uppers} == {dpdro.UpperBound} and dd.UpperBound is dpdro.UpperBound
    assert {type(lb) for lb in lowers} == {dpdro.LowerBound} and dd.LowerBound is dpdro.LowerBound
    for u in uppers:
        released = u.noise if u.mechanism is None else u.mechanism
        assert released is not None and u.certified_delta <= 0.2 and math.isfinite(u.value)
    assert all(lb.value <= min(u.value for u in uppers[:3]) for lb in lowers[:2])
