"""optimal_noise: refinement until the certified relative gap is reached."""

import numpy as np
import pytest

import dpdro
from dpdro.optimal import refine_partition, relative_gap


@pytest.mark.parametrize("eps,delta,loss,target", [(1.0, 0.2, "l1", 0.03), (0.2, 0.05, "l2", 0.02),
                                                   (2.0, 0.1, dpdro.Pinball(0.7), 0.05)])
def test_optimal_noise_reaches_gap_and_is_certified(eps, delta, loss, target):
    prob = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss=loss)
    res = dpdro.optimal_noise(prob, rel_gap=target)
    assert res.gap <= target
    assert res.lower.value <= res.upper.value
    assert res.gap == pytest.approx(relative_gap(res.upper.value, res.lower.value))
    assert dpdro.certify_delta(res.noise, eps, 1.0) <= delta
    assert res.noise.expected_loss(loss) <= res.upper.value
    # the history records valid bounds only: the reported ones are the best of them
    assert res.lower.value == max(h["lower"] for h in res.history)
    assert all(h["upper"] >= res.upper.value for h in res.history)


def test_refine_partition_splits_and_halves_beta():
    part = dpdro.Partition([-4, -1, 0, 1, 3], 0.5)
    same = refine_partition(part, [True, False, False, True])
    assert same.beta == 0.5 and same.pi.tolist() == [-4, -3, -1, 0, 1, 2, 3]
    finer = refine_partition(part, [False, True, False, False])
    assert finer.beta == 0.25 and finer.pi.tolist() == [-8, -2, -1, 0, 2, 6]
    assert np.allclose(finer.edges[[0, -1]], part.edges[[0, -1]])
