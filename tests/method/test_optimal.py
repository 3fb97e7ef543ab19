"""optimal_noise: refinement until the certified relative gap is reached."""

import pytest

import dpdro
import dpdro.optimal
from dpdro.optimal import relative_gap


@pytest.mark.parametrize("eps,delta,loss,target", [(1.0, 0.2, "l1", 0.03), (0.2, 0.05, "l2", 0.02),
                                                   (2.0, 0.1, dpdro.Pinball(0.7), 0.05)])
def test_optimal_noise_reaches_gap_and_is_certified(eps, delta, loss, target):
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
    res = dpdro.optimal_noise(prob, rel_gap=target)
    assert res.gap <= target
    assert res.lower.value <= res.upper.value
    assert res.lower.partition.is_uniform  # the paper's D(L, β): valid (its D(π, β) on wide cells is not)
    assert res.gap == pytest.approx(relative_gap(res.upper.value, res.lower.value))
    assert dpdro.certify_delta(res.noise, eps, 1.0) <= delta
    assert res.noise.expected_loss(loss) <= res.upper.value
    # the history records valid bounds only: the reported ones are the best of them
    assert res.lower.value == max(h["lower"] for h in res.history)
    assert all(h["upper"] >= res.upper.value for h in res.history)




def test_optimal_noise_with_atom():
    """ε = 4, δ = 0.6, ℓ1: the optimal noise has mass close to δ at 0. With the atom the certified gap
    reaches 10% on a coarse grid, below the loss of the cells alone on the same grid."""
    prob = dpdro.Problem(epsilon=4.0, delta=0.6, sensitivity=1.0, loss="l1")
    res = dpdro.optimal_noise(prob, rel_gap=0.1, max_k=16, atom=True)
    assert res.gap <= 0.1 and res.lower.value <= res.upper.value
    assert 0.5 < res.noise.atom <= 0.6
    assert dpdro.certify_delta(res.noise, 4.0, 1.0) <= 0.6
    assert dpdro.upper_bound(prob, res.partition).value > 1.1 * res.upper.value


def test_optimal_noise_with_rounding_coefficients():
    """(ε, δ) = (5, 0.1), ℓ1: the cell infima stall at a gap of several percent within k_U ≤ 64; the
    randomized-rounding lower bound reaches 1% there, and stays below the certified upper bound."""
    prob = dpdro.Problem(epsilon=5.0, delta=0.1, sensitivity=1.0, loss="l1")
    opts = dict(rel_gap=0.01, max_k=64, max_lower_shifts=64, lower_support_factor=1.0, atom=True, max_cells=600)
    inf = dpdro.optimal_noise(prob, **opts)
    rnd = dpdro.optimal_noise(prob, lower_coefficients="rounding", **opts)
    assert inf.gap > 0.03
    assert rnd.gap <= 0.01 and rnd.lower.value <= rnd.upper.value
    assert inf.lower.value < rnd.lower.value <= inf.upper.value
    assert dpdro.certify_delta(rnd.noise, 5.0, 1.0) <= 0.1
    with pytest.raises(ValueError, match="lower_coefficients"):
        dpdro.optimal_noise(prob, lower_coefficients="average")


def test_lower_support_factor():
    """A smaller first lower-bound support gives a smaller first lower-bound LP; the bounds stay valid."""
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, loss="l1")
    wide = dpdro.optimal_noise(prob, rel_gap=0.05)
    small = dpdro.optimal_noise(prob, rel_gap=0.05, lower_support_factor=0.75)
    assert small.history[0]["lower_cells"] < wide.history[0]["lower_cells"]
    assert small.gap <= 0.05 and small.lower.value <= wide.upper.value and wide.lower.value <= small.upper.value
    with pytest.raises(ValueError, match="lower_support_factor"):
        dpdro.optimal_noise(prob, lower_support_factor=0.0)


def test_out_of_time_lower_bound_ends_refinement(monkeypatch):
    """A lower bound that cannot solve even its first relaxation in the time left ends the refinement;
    the bounds found so far are returned (they are valid)."""
    real, calls = dpdro.optimal.lower_bound, []

    def lower_bound(*args, **kwargs):
        calls.append(kwargs["time_limit"])
        if len(calls) == 2:
            raise TimeoutError("the first LP solve ran out of the time limit of 1 s")
        return real(*args, **kwargs)

    monkeypatch.setattr(dpdro.optimal, "lower_bound", lower_bound)
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, loss="l1")
    res = dpdro.optimal_noise(prob, rel_gap=1e-4, time_limit=600)
    assert len(calls) == 2 and all(t is not None and t <= 600 for t in calls)
    assert len(res.history) == 1 and res.lower.value <= res.upper.value
    assert dpdro.certify_delta(res.noise, 1.0, 1.0) <= 0.2
