r"""Partitions of the noise support: the paper's index vector π and granularity β (Section 4.1).

The cells are Π_j(β) = [π_j·β, π_{j+1}·β), j = 1, …, N. The uniform partition of Section 2.2 is
π = (−L, −L+1, …, L+1), whose cells are the intervals I_i(β) = [iβ, (i+1)β), i ∈ [±L]. All
arithmetic inside dpdro is done on the integer ticks π, so cell widths, overlaps and shifts are
exact.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import check_int, check_int_array, check_positive, check_real

__all__ = ["MAX_L", "Partition"]

# the largest L of Partition.uniform: L = 10⁹ had asked for 16 GB of edges alone, and the bounding
# LPs of L = 10⁴ (20,001 cells) already take seconds to set up and longer to solve
MAX_L = 10**7


class Partition:
    """Cells Π_j(β) = [π_j β, π_{j+1} β) for a strictly increasing integer vector π.

    Parameters
    ----------
    pi : strictly increasing integers π_1 < … < π_{N+1}. The paper uses π_1 = −L and
        π_{N+1} = L + 1.
    beta : the granularity β > 0; every cell width is a multiple of β.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Section 4.1 (non-uniform partitions {Π_j(β)}) and
       restriction (2) (the uniform cells I_i(β)).
    """

    def __init__(self, pi, beta: float):
        self.pi = check_int_array("pi", pi, strictly_increasing=True, min_len=2)
        self.pi.setflags(write=False)
        self.beta = check_positive("beta", beta)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def uniform(cls, L: int, beta: float) -> Partition:
        """The uniform partition {I_i(β)}_{i ∈ [±L]} of P(L, β) and D(L, β), L ≤ :data:`MAX_L`."""
        L = check_int("L", L, minimum=0)
        if L > MAX_L:
            raise ValueError(
                f"L must be at most {MAX_L:,} (2L + 1 cells, each a column of the bounding LPs), "
                f"got {L!r}; for a noise spread over many cells use dpdro.optimal_noise, whose "
                "grids and windows adapt to the problem"
            )
        return cls(np.arange(-L, L + 2), beta)

    @classmethod
    def graded(cls, beta: float, *, half_width: float, fine_half_width: float, growth: float = 1.25,
               max_width: float | None = None) -> Partition:
        """A non-uniform partition: cells of width β on [−fine_half_width, fine_half_width + β),
        then widths growing by the factor ``growth`` (rounded to multiples of β, at most
        ``max_width``) out to ``half_width`` on both sides. The partition is symmetric about β/2
        like the uniform one.

        A density that is constant on a cell wider than Δf cannot decay by the factor e^ε per Δf
        that small δ requires in the tails; keep ``max_width`` ≤ Δf (or smaller) when δ is small.
        """
        beta = check_positive("beta", beta)
        half_width = check_positive("half_width", half_width)
        fine = check_real("fine_half_width", fine_half_width)
        if not (0 <= fine):
            raise ValueError(f"fine_half_width must be >= 0, got {fine_half_width!r}")
        growth = check_real("growth", growth)
        if not (growth >= 1.0 and math.isfinite(growth)):
            raise ValueError(f"growth must be finite and >= 1, got {growth!r}")
        L = max(1, math.ceil(half_width / beta - 1e-9))
        n_fine = min(L, math.ceil(fine / beta - 1e-9))
        if n_fine > MAX_L:
            raise ValueError(
                f"fine_half_width/beta must be at most {MAX_L:,} cells of width beta, got "
                f"{fine_half_width!r}/{beta!r}"
            )
        w_max = (
            L
            if max_width is None
            else max(1, math.floor(check_positive("max_width", max_width) / beta + 1e-9))
        )
        right = list(range(1, n_fine + 2))  # ticks 1, …, n_fine + 1
        width = 1.0
        while right[-1] < L + 1:
            width = min(width * growth, w_max)
            step = max(1, min(int(round(width)), L + 1 - right[-1]))
            right.append(right[-1] + step)
        right = np.asarray(right)
        return cls(np.concatenate((1 - right[::-1], right)), beta)

    # ------------------------------------------------------------------ basic quantities
    @property
    def n_cells(self) -> int:
        """N, the number of cells."""
        return int(self.pi.size - 1)

    @property
    def widths(self) -> np.ndarray:
        """Cell widths |Π_j(β)| / β as integers."""
        return np.diff(self.pi)

    @property
    def edges(self) -> np.ndarray:
        """Cell edges π·β."""
        return self.pi * self.beta

    @property
    def is_uniform(self) -> bool:
        return bool(np.all(self.widths == 1))

    @property
    def L(self) -> int:
        """L with π_1 = −L (the support is [−Lβ, π_{N+1}β))."""
        return int(-self.pi[0])

    def padded(self, k: int) -> Partition:
        """The partition of D(π, β): π padded with k = Δf/β unit cells at both ends.

        Section 4.1 extends the index set [N] to N = {−Δf/β + 1, …, N + Δf/β} with
        π_{1−t} = π_1 − t and π_{N+1+t} = π_{N+1} + t, t = 1, …, Δf/β. The original cells keep
        their order and sit at positions k, …, k + N − 1 of the padded partition.
        """
        k = check_int("k", k, minimum=0)
        lo = self.pi[0] - np.arange(k, 0, -1)
        hi = self.pi[-1] + np.arange(1, k + 1)
        return Partition(np.concatenate((lo, self.pi, hi)), self.beta)

    def refined(self, factor: int = 2) -> Partition:
        """The same cells on the finer grid β/factor (every cell split into ``factor`` equal
        cells)."""
        factor = check_int("factor", factor, minimum=1)
        # cell [π_j, π_{j+1}) becomes the ticks π_j·factor + i·(π_{j+1} − π_j), i = 0, …, factor − 1
        fine = (
            self.pi[:-1, None] * factor + np.arange(factor)[None, :] * self.widths[:, None]
        ).ravel()
        return Partition(np.concatenate((fine, [self.pi[-1] * factor])), self.beta / factor)

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Partition)
            and self.beta == other.beta
            and np.array_equal(self.pi, other.pi)
        )

    def __hash__(self):
        return hash((self.beta, self.pi.tobytes()))

    def __repr__(self) -> str:
        kind = "uniform" if self.is_uniform else "non-uniform"
        return (
            f"Partition({kind}, N={self.n_cells}, beta={self.beta:.6g}, "
            f"support=[{self.edges[0]:.6g}, {self.edges[-1]:.6g}))"
        )
