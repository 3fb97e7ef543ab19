"""Algorithm 1 (dpdro.cutting_plane.run_cutting_plane): convergence, cut kinds, limits, errors."""

import numpy as np
import pytest

import dpdro
from dpdro.bounds import BoundingLP
from dpdro.cutting_plane import run_cutting_plane
from dpdro.solvers import LPSolution


def _full_lp_value(prob, part, kind="upper"):
    full = BoundingLP(prob, part, kind)
    full.add_all_shift_cuts()
    return full.solve().objective


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_converges_to_the_full_lp(kind):
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss="l1")
    part = dpdro.Partition.uniform(12, 0.25)
    res = run_cutting_plane(BoundingLP(prob, part, kind))
    assert res.converged and res.max_shortfall <= 1e-9
    assert res.objective == pytest.approx(_full_lp_value(prob, part, kind), rel=1e-8)
    # the history records every relaxation: objectives non-decreasing (rows are only added)
    objs = [h[1] for h in res.history]
    assert len(objs) == res.iterations and all(
        b >= a - 1e-9 for a, b in zip(objs, objs[1:], strict=False)
    )


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_event_and_shift_cuts_agree(loss):
    prob = dpdro.Problem(epsilon=1.5, delta=0.1, loss=loss)
    part = dpdro.Partition.uniform(8, 0.25)
    event = run_cutting_plane(BoundingLP(prob, part, "upper"), cuts="event")
    shift = run_cutting_plane(BoundingLP(prob, part, "upper"), cuts="shift")
    assert event.converged and shift.converged
    assert event.objective == pytest.approx(shift.objective, rel=1e-7)
    assert shift.iterations < event.iterations  # whole-shift cuts need far fewer rounds


def test_max_iter_stops_before_convergence():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2)
    part = dpdro.Partition.uniform(12, 0.25)
    res = run_cutting_plane(BoundingLP(prob, part, "upper"), max_iter=1)
    assert res.iterations == 1 and not res.converged and res.max_shortfall > 1e-9
    # a relaxation's value is a lower bound on the LP's
    assert res.objective <= _full_lp_value(prob, part) + 1e-9


class _FakeLP:
    """A stand-in LP whose solves return scripted results (the interface run_cutting_plane
    expects)."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.cuts = 0

    def solve(self, time_limit=None):
        status = self.statuses.pop(0)
        if status == "optimal":
            return LPSolution("optimal", np.zeros(2), np.zeros(1), 1.0, 3)
        return LPSolution(status, None, None, np.nan, 3)

    def shortfalls(self, x):
        return np.array([0.5])  # always violated

    def has_full_cut(self, r):
        return False

    def add_shift_cut(self, r):
        self.cuts += 1
        return 1

    def add_lazy_cuts(self, groups, x, deadline=None):
        return 0

    def add_event_cut(self, r, x):
        self.cuts += 1
        return True

    def infeasibility_message(self):
        return "fake LP is infeasible"


def test_timeout_on_the_first_solve_raises():
    with pytest.raises(TimeoutError, match="first LP solve ran out of the time limit"):
        run_cutting_plane(_FakeLP(["time_limit"]), time_limit=1.0)


def test_timeout_later_returns_the_last_relaxation():
    lp = _FakeLP(["optimal", "time_limit"])
    res = run_cutting_plane(lp, time_limit=10.0)
    assert not res.converged and res.iterations == 2 and res.objective == 1.0
    assert res.max_shortfall == 0.5 and lp.cuts == 1 and res.simplex_iterations == 6


def test_time_limit_bounds_a_real_run():
    """With a tiny time limit a real LP stops early: either its first solve runs out of time
    (TimeoutError) or it returns an unconverged relaxation (a valid lower bound on the LP)."""
    prob = dpdro.Problem(epsilon=0.5, delta=0.05)
    part = dpdro.Partition.uniform(160, 1 / 16)
    try:
        res = run_cutting_plane(BoundingLP(prob, part, "lower"), time_limit=1e-3)
    except TimeoutError:
        return
    assert not res.converged


def test_infeasible_relaxation_raises_infeasible_error():
    with pytest.raises(dpdro.InfeasibleError, match="fake LP is infeasible"):
        run_cutting_plane(_FakeLP(["infeasible"]))
    prob = dpdro.Problem(epsilon=1.0, delta=0.25)
    with pytest.raises(dpdro.InfeasibleError, match="support .* is too small"):
        run_cutting_plane(BoundingLP(prob, dpdro.Partition.uniform(1, 0.5), "upper"))


def test_cut_kind_is_validated():
    with pytest.raises(ValueError, match="cuts must be 'shift' or 'event', got 'all'"):
        run_cutting_plane(_FakeLP(["optimal"]), cuts="all")
