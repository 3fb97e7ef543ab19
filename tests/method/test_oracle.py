"""Algorithm 2 against brute-force enumeration of every event on tiny grids."""

import numpy as np
import pytest

import dpdro
from dpdro.oracle import candidate_shifts, segment_table
from dpdro.testing import brute_max_shortfall, cell_union_coefficients, unit_cell_coefficients

PARTITIONS = [
    dpdro.Partition.uniform(3, 0.5),  # 7 unit cells, Δf/β = 2
    dpdro.Partition([-3, -1, 0, 1, 2, 4], 0.5),  # non-uniform
    dpdro.Partition([-4, -2, 0, 1, 3, 5], 0.25),  # non-uniform, Δf/β = 4
    dpdro.Partition.uniform(2, 1.0 / 3.0),  # Δf/β = 3
]
SETTINGS = [(0.5, 0.1), (1.0, 0.3), (2.0, 0.05), (0.1, 0.6)]


def random_p(n, rng):
    p = rng.random(n) ** 3  # uneven masses, some nearly zero
    return p / p.sum()


@pytest.mark.parametrize(
    "partition", PARTITIONS, ids=lambda p: f"pi={p.pi.tolist()},beta={p.beta:.3g}"
)
@pytest.mark.parametrize("eps,delta", SETTINGS)
@pytest.mark.parametrize("lower", [False, True], ids=["P", "D"])
def test_oracle_matches_brute_force(partition, eps, delta, lower):
    problem = dpdro.Problem(epsilon=eps, delta=delta, sensitivity=1.0, loss="l1")
    k = problem.shifts(partition.beta)
    columns = partition.padded(k) if lower else partition
    rng = np.random.default_rng(7)
    for _ in range(3):
        p = random_p(columns.n_cells, rng)
        out = dpdro.max_privacy_shortfall(problem, partition, p, lower=lower)
        brute = brute_max_shortfall(
            problem, columns.pi, partition.pi, p, range(-k, k + 1), lower=lower
        )
        assert out.value == pytest.approx(brute, abs=1e-12)
        assert out.by_shift.max() == pytest.approx(out.value, abs=1e-12)
        # the returned event attains the returned value
        mask = np.zeros(int(partition.pi[-1] - partition.pi[0]), dtype=int)
        for a, b in np.round(out.event / partition.beta).astype(int):
            mask[a - partition.pi[0] : b - partition.pi[0]] = 1
        s = int(round(out.phi / partition.beta))
        # D(π, β) on non-uniform cells: A* is a union of core cells
        if lower and not partition.is_uniform:
            cells = mask[partition.pi[:-1] - partition.pi[0]].astype(bool)
            assert np.array_equal(np.repeat(cells, partition.widths), mask.astype(bool))
            row = cell_union_coefficients(columns.pi, partition.pi, s, cells, problem.exp_epsilon)
        else:
            row = unit_cell_coefficients(columns.pi, partition.pi, s, mask, problem.exp_epsilon)
        assert float(row @ p) - delta == pytest.approx(out.value, abs=1e-12)


@pytest.mark.parametrize("partition", PARTITIONS[:3], ids=lambda p: f"pi={p.pi.tolist()}")
def test_candidate_shifts_suffice(partition):
    """Lemma C.16: the maximum over all φ ∈ B(β) is attained on B(β, π) ∪ {±Δf}."""
    problem = dpdro.Problem(epsilon=1.0, delta=0.2, sensitivity=1.0, loss="l2")
    k = problem.shifts(partition.beta)
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = random_p(partition.n_cells, rng)
        full = brute_max_shortfall(problem, partition.pi, partition.pi, p, range(-k, k + 1))
        cand = candidate_shifts(partition.pi, partition.pi, k)
        assert set(cand.tolist()) <= set(range(-k, k + 1))
        assert dpdro.max_privacy_shortfall(problem, partition, p).value == pytest.approx(
            full, abs=1e-12
        )


def test_worst_event_is_union_of_segments_and_sorted():
    problem = dpdro.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0)
    part = dpdro.Partition.uniform(6, 0.25)
    p = np.exp(-np.abs(np.arange(-6, 7)))
    p /= p.sum()
    out = dpdro.max_privacy_shortfall(problem, part, p)
    ev = out.event
    assert ev.ndim == 2 and ev.shape[1] == 2
    assert np.all(ev[:, 1] > ev[:, 0])
    assert np.all(ev[1:, 0] > ev[:-1, 1])  # disjoint, merged, sorted
    assert out.by_shift.max() == out.value
    assert abs(out.phi) <= problem.sensitivity


def test_segment_table_partitions_event_region():
    """For every shift the segments tile the core exactly once."""
    problem = dpdro.Problem(epsilon=1.0, delta=0.1, sensitivity=1.0)
    part = dpdro.Partition([-5, -3, -1, 0, 2, 3, 6], 0.25)
    for lower in (False, True):
        t = segment_table(problem, part, lower=lower)
        for r in range(t.shifts.size):
            sl = slice(t.offsets[r], t.offsets[r + 1])
            order = np.argsort(t.start[sl])
            starts, lens = t.start[sl][order], t.length[sl][order]
            assert starts[0] == part.pi[0]
            assert np.array_equal(starts[1:], (starts + lens)[:-1])
            assert starts[-1] + lens[-1] == part.pi[-1]
