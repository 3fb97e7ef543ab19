"""Figure 4 and the monotone counterexample (repro.appendix): the strengthened monotone lower bound."""

import numpy as np
import pytest

import dpdro
from dpdro.bounds import BoundingLP
from repro import appendix


def test_strengthened_bound_lies_between_the_monotone_bounds():
    prob = dpdro.Problem(epsilon=3.0, delta=0.3, loss="l1", monotone=True)
    part = dpdro.Partition.uniform(12, 1 / 8)
    plain = dpdro.lower_bound(prob, part).value
    strong = appendix.strengthened_monotone_lower_bound(prob, part)
    upper = dpdro.upper_bound(prob, part).value
    assert plain <= strong + 1e-12 and strong <= upper


def test_strengthened_coefficients():
    prob = dpdro.Problem(epsilon=1.0, delta=0.2, loss="l1", monotone=True)
    lp = BoundingLP(prob, dpdro.Partition.uniform(3, 0.5), "lower")
    base = lp.cost.copy()
    extra = appendix.strengthen_l1_monotone(lp)
    assert np.all(extra >= 0) and np.allclose(lp.cost, base + extra)
    # on unit cells [a, b) ⊂ [0, ∞) away from 0 the strengthened coefficient is the midpoint, i.e. a + β/2
    e = lp.columns.edges
    right = np.nonzero(e[:-1] >= 0.5)[0]
    assert np.allclose(lp.cost[right], e[right] + 0.25)
    for bad in (dpdro.Problem(epsilon=1.0, delta=0.2, loss="l1"), dpdro.Problem(epsilon=1.0, delta=0.2, loss="l2",
                                                                                monotone=True)):
        with pytest.raises(ValueError, match="monotone l1 problem"):
            appendix.strengthen_l1_monotone(BoundingLP(bad, dpdro.Partition.uniform(3, 0.5), "lower"))


def test_spiked_partition():
    part = appendix.spiked_partition(4, 8, A=1.0)
    assert part.beta == 1 / 32 and 0.0 in part.edges
    w = part.widths
    assert w.min() == 1 and w.max() == 8 and np.all(w[(part.edges[:-1] >= 0.25) | (part.edges[1:] <= -0.25)] == 8)


def test_stored_results_are_read_back_for_the_chapters():
    from repro import figure5, tables

    cx = appendix.stored_counterexample()
    assert cx["problem"] == appendix.CX
    assert cx["best_monotone_lower"] > cx["best_unrestricted_upper"]
    p = figure5.stored_panel(5.0, 0.2)
    assert (p["epsilon"], p["delta"]) == (5.0, 0.2) and len(p["piece_losses"]) == figure5.PIECES
    ex1 = tables.stored_example1()
    assert ex1["loss"] == "l2" and ex1["lower"] <= ex1["upper"]
    with pytest.raises(StopIteration):
        figure5.stored_panel(5.0, 0.123)
