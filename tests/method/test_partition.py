"""Partitions of the noise support (dpdro.partition): uniform, graded, padded, refined,
validation."""

import tracemalloc

import numpy as np
import pytest

import dpdro
from dpdro.oracle import candidate_shifts


def test_uniform():
    part = dpdro.Partition.uniform(3, 0.5)
    assert part.pi.tolist() == list(range(-3, 5))
    assert part.n_cells == 7 and part.L == 3 and part.is_uniform
    assert part.widths.tolist() == [1] * 7
    assert np.allclose(part.edges, np.arange(-3, 5) * 0.5)
    assert dpdro.Partition.uniform(3.0, 0.5) == part  # integer-valued floats are accepted
    assert dpdro.Partition.uniform(0, 1.0).n_cells == 1
    assert "uniform, N=7" in repr(part)


def test_partitions_too_large_to_hold_are_refused_before_any_allocation():
    """Regression: Partition.uniform(L=10**9) asked for 16 GB of edges (the process was killed),
    and the candidate shifts of L = 10**4 formed all 4·10⁸ edge pairs (6.8 GB)."""
    with pytest.raises(ValueError, match="L must be at most 10,000,000 .* got 1000000000"):
        dpdro.Partition.uniform(L=10**9, beta=0.05)
    with pytest.raises(ValueError, match="fine_half_width/beta must be at most"):
        dpdro.Partition.graded(1e-9, half_width=1e3, fine_half_width=1e3)
    big = dpdro.Partition.uniform(L=10**4, beta=0.05)
    tracemalloc.start()
    try:
        assert candidate_shifts(big.pi, big.pi, 20).tolist() == list(range(-20, 21))
        assert tracemalloc.get_traced_memory()[1] < 50e6  # pairs within k only (20,001 × 41)
    finally:
        tracemalloc.stop()


def test_graded():
    part = dpdro.Partition.graded(
        0.25, half_width=5.0, fine_half_width=1.0, growth=1.5, max_width=1.0
    )
    pi, w = part.pi, part.widths
    assert not part.is_uniform and part.beta == 0.25
    assert np.array_equal(pi, 1 - pi[::-1])  # symmetric about β/2, like the uniform partition
    assert part.edges[0] <= -5.0 and part.edges[-1] >= 5.0  # covers the half-width
    assert w.max() <= 4  # max_width 1.0 = 4 cells of width β
    fine = (pi[:-1] >= -4) & (pi[1:] <= 5)  # [−fine_half_width, fine_half_width + β) has unit cells
    assert np.all(w[fine] == 1)
    # widths grow outward (the last cell is cut at the end)
    assert np.all(np.diff(w[pi[:-1] >= 5][:-1]) >= 0)
    assert dpdro.Partition.graded(0.25, half_width=5.0, fine_half_width=1.0, growth=1.0).is_uniform


def test_padded():
    part = dpdro.Partition([-4, -2, -1, 0, 1, 3], 0.5)
    pad = part.padded(2)
    assert pad.pi.tolist() == [-6, -5, -4, -2, -1, 0, 1, 3, 4, 5]
    # the original cells at positions k, …
    assert np.array_equal(pad.pi[2 : 2 + part.n_cells + 1], part.pi)
    assert part.padded(0) == part and pad.beta == part.beta


def test_refined():
    part = dpdro.Partition([-2, 0, 1, 3], 0.5)
    fine = part.refined(2)  # every cell split into 2 equal cells
    assert fine.beta == 0.25
    assert fine.pi.tolist() == [-4, -2, 0, 1, 2, 4, 6]
    assert dpdro.Partition.uniform(2, 0.5).refined(3).pi.tolist() == list(range(-6, 10))
    assert set(part.edges).issubset(set(fine.edges)) and not fine.is_uniform
    assert part.refined(1) == part


def test_equality_hash_and_immutability():
    a, b = dpdro.Partition([0, 1, 3], 0.5), dpdro.Partition(np.array([0, 1, 3]), 0.5)
    assert a == b and hash(a) == hash(b) and a != dpdro.Partition([0, 1, 3], 0.25)
    assert a != [0, 1, 3]
    with pytest.raises(ValueError):
        a.pi[0] = 5


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: dpdro.Partition([0, 0, 1], 0.5), ValueError, "strictly increasing"),
        (lambda: dpdro.Partition([0], 0.5), ValueError, "at least 2 entries"),
        (lambda: dpdro.Partition([0, 1.5], 0.5), ValueError, "must contain integers"),
        (lambda: dpdro.Partition([0, 1], -0.5), ValueError, "beta must be finite and > 0"),
        (lambda: dpdro.Partition.uniform(-1, 0.5), ValueError, "L must be an integer >= 0, got -1"),
        (
            lambda: dpdro.Partition.uniform(2.5, 0.5),
            TypeError,
            "L must be an integer >= 0, got 2.5 of type float",
        ),
        (lambda: dpdro.Partition.uniform(True, 0.5), TypeError, "L must be an integer"),
        (lambda: dpdro.Partition([0, 1], 0.5).padded(-1), ValueError, "k must be an integer >= 0"),
        (
            lambda: dpdro.Partition([0, 1], 0.5).refined(0),
            ValueError,
            r"factor must be a positive integer \(>= 1\), got 0",
        ),
        (
            lambda: dpdro.Partition.graded(0.25, half_width=0.0, fine_half_width=1.0),
            ValueError,
            "half_width",
        ),
        (
            lambda: dpdro.Partition.graded(0.25, half_width=2.0, fine_half_width=-1.0),
            ValueError,
            "fine_half_width",
        ),
        (
            lambda: dpdro.Partition.graded(0.25, half_width=2.0, fine_half_width=1.0, growth=0.5),
            ValueError,
            "growth must be finite and >= 1",
        ),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
