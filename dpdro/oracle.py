r"""The worst-case event oracle of Algorithm 2 (maximum privacy shortfall) and its geometry.

For a fixed shift φ = s·β the privacy shortfall of an event A ∈ F(L, β) is (equation (9))

    V(φ, A) = Σ_j p(j)·|A ∩ Π_j| / |Π_j| − e^ε·Σ_j p(j)·|A ∩ (Π_j + φ)| / |Π_j| − δ.

The event region [π_1β, π_{N+1}β) splits into *segments*: the non-empty intersections
A_jj′ = Π_j ∩ (Π_j′ + φ) and the parts A_j = Π_j \ (support + φ) that no shifted cell covers
(Algorithm 2's two inner loops). On a segment the integrand of V is constant, so the worst event
for φ is the union of the segments with positive contribution (Lemma C.15) and

    max_A V(φ, A) = Σ_{A_j} |A_j|·p(j)/|Π_j| + Σ_{A_jj′} |A_jj′|·[p(j)/|Π_j| − e^ε p(j′)/|Π_j′|]_+ − δ.

It is piecewise affine in φ with breakpoints in B(β, π) = {(π_j − π_j′)β} ∩ [−Δf, Δf] ∪ {±Δf}
(Lemma C.16), the candidate shifts of Algorithm 2's outer loop. One merge of two sorted edge lists
per shift gives all segments (Lemma C.17); here the merge is vectorised over all candidate shifts,
and the resulting :class:`SegmentTable` is reused by the whole-shift cuts of the bounding LPs.

For the lower bound D(π, β) the same construction applies with the decision vector extended to the
padded index set N (the shifted cells may lie in the padding; events stay inside the core).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .partition import Partition
from .problem import Problem

__all__ = ["SegmentTable", "Shortfall", "candidate_shifts", "geometry", "max_privacy_shortfall", "padding_blocks"]


def candidate_shifts(core_pi: np.ndarray, column_pi: np.ndarray, k: int) -> np.ndarray:
    """B(β, π) in units of β: edge differences within [−k, k], plus ±k (Algorithm 2, outer loop)."""
    diffs = (core_pi[:, None] - column_pi[None, :]).ravel()
    diffs = diffs[np.abs(diffs) <= k]
    return np.unique(np.concatenate((diffs, [-k, k])))


@dataclass(frozen=True)
class SegmentTable:
    """All segments A_j and A_jj′ for a set of shifts, in integer ticks (units of β).

    Segment ``q`` belongs to shift ``shifts[shift_index[q]]``, lies in core cell with column index
    ``cell[q]`` and in the shifted column cell ``shifted[q]`` (−1 when no shifted cell covers it, an
    A_j segment), and has length ``length[q]`` ticks starting at tick ``start[q]``.
    """

    shifts: np.ndarray
    offsets: np.ndarray
    shift_index: np.ndarray
    start: np.ndarray
    length: np.ndarray
    cell: np.ndarray
    shifted: np.ndarray
    column_pi: np.ndarray  # edges of the decision cells (ticks)
    core_offset: int  # core cell j is decision cell j + core_offset

    @property
    def column_widths(self) -> np.ndarray:
        return np.diff(self.column_pi)

    @classmethod
    def build(cls, core_pi: np.ndarray, column_pi: np.ndarray, core_offset: int, shifts: np.ndarray,
              chunk_elements: int = 4_000_000) -> "SegmentTable":
        """Segments of the event region [core_pi[0], core_pi[-1]) for every shift in ``shifts``.

        ``column_pi`` are the edges of the decision cells (the core itself for P(π, β), the padded
        cells for D(π, β)); core cell j is column ``j + core_offset``.
        """
        core_pi = np.asarray(core_pi, dtype=np.int64)
        column_pi = np.asarray(column_pi, dtype=np.int64)
        shifts = np.asarray(shifts, dtype=np.int64)
        lo_core, hi_core = core_pi[0], core_pi[-1]
        width = core_pi.size + column_pi.size
        per_chunk = max(1, chunk_elements // width)
        parts = []
        for c0 in range(0, shifts.size, per_chunk):
            sh = shifts[c0:c0 + per_chunk]
            bps = np.concatenate((np.broadcast_to(core_pi, (sh.size, core_pi.size)), column_pi[None, :] + sh[:, None]), axis=1)
            bps = np.sort(np.clip(bps, lo_core, hi_core), axis=1)
            lo, hi = bps[:, :-1], bps[:, 1:]
            keep = hi > lo
            rows = np.broadcast_to(np.arange(c0, c0 + sh.size)[:, None], lo.shape)[keep]
            lo, hi = lo[keep], hi[keep]
            s = shifts[rows]
            cell = np.searchsorted(core_pi, lo, side="right") - 1 + core_offset
            rel = lo - s  # position of the segment before shifting
            m = np.searchsorted(column_pi, rel, side="right") - 1
            covered = (rel >= column_pi[0]) & (rel < column_pi[-1])
            parts.append((rows, lo, hi - lo, cell, np.where(covered, m, -1)))
        rows, start, length, cell, shifted = (np.concatenate(x) for x in zip(*parts))
        offsets = np.searchsorted(rows, np.arange(shifts.size + 1))
        return cls(shifts, offsets, rows, start, length, cell, shifted, column_pi, int(core_offset))

    def contributions(self, p: np.ndarray, exp_eps: float) -> np.ndarray:
        """Signed contribution |segment|·(p(j)/|Π_j| − e^ε p(j′)/|Π_j′|) of every segment."""
        q = np.asarray(p, dtype=float)[: self.column_widths.size] / self.column_widths
        q_shift = np.where(self.shifted >= 0, q[np.maximum(self.shifted, 0)], 0.0)
        return self.length * (q[self.cell] - exp_eps * q_shift)

    def worst_values(self, p: np.ndarray, exp_eps: float) -> np.ndarray:
        """max_A Σ (shortfall before subtracting δ) for every shift: a sum of positive parts."""
        pos = np.maximum(self.contributions(p, exp_eps), 0.0)
        return np.bincount(self.shift_index, weights=pos, minlength=self.shifts.size)


@dataclass(frozen=True)
class Shortfall:
    """Output of Algorithm 2: the shift φ*, the worst event A* and its shortfall V* = V(φ*, A*)."""

    phi: float
    event: np.ndarray  # intervals [a, b) of A*, shape (n, 2), in noise units
    value: float  # V(φ*, A*) of equation (9), δ included (the paper's "V* − δ"); > 0 means violated
    by_shift: np.ndarray  # max_A V(φ, A) for every candidate shift, δ included
    shifts: np.ndarray  # the candidate shifts φ of the outer loop


def event_intervals(table: SegmentTable, mask: np.ndarray, beta: float) -> np.ndarray:
    """Merge the selected segments of one shift into disjoint intervals [a, b) in noise units."""
    lo = table.start[mask]
    hi = lo + table.length[mask]
    order = np.argsort(lo)
    lo, hi = lo[order], hi[order]
    if lo.size == 0:
        return np.zeros((0, 2))
    breaks = np.nonzero(lo[1:] != hi[:-1])[0]
    starts = np.concatenate(([lo[0]], lo[breaks + 1]))
    ends = np.concatenate((hi[breaks], [hi[-1]]))
    return np.column_stack((starts, ends)) * beta


def padding_blocks(core_pi: np.ndarray, shifts: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Decision cells of D(π, β) for the given shifts: the core cells plus padding blocks.

    Section 4.1 pads π with k = Δf/β unit cells at each end. A padding cell only enters the privacy
    constraints through the preimages (segment − φ) of core segments, so unit cells that no preimage
    boundary separates can be merged into one block with cost the infimum over the block: averaging
    the densities inside such a block keeps every constraint satisfied (each term is a convex
    function (q_j − e^ε q)_+ of the block density, Jensen) and does not raise the cost, so the merged
    problem's value is at most D(π, β) and remains a valid lower bound. With every shift of B(β) the
    blocks are exactly the unit cells of the paper. Returns the decision-cell edges and the index
    of the first core cell.
    """
    lo, hi = int(core_pi[0]), int(core_pi[-1])
    pre = (core_pi[None, :] - shifts[:, None]).ravel()
    left = np.unique(np.concatenate(([lo - k], pre[(pre > lo - k) & (pre < lo)])))
    right = np.unique(np.concatenate((pre[(pre > hi) & (pre < hi + k)], [hi + k])))
    return np.concatenate((left, core_pi, right)), int(left.size)


def geometry(problem: Problem, partition: Partition, *, lower: bool = False,
             shift_stride: int | None = None) -> SegmentTable:
    """The segment table of P(π, β) (``lower=False``) or of D(π, β) (``lower=True``).

    ``shift_stride`` keeps only the candidate shifts that are multiples of ``shift_stride``·β (and
    ±Δf). Dropping privacy constraints relaxes the problem, so this is allowed for the lower bound
    only, where it trades a little tightness for speed (and lets the padding merge into blocks, see
    :func:`padding_blocks`).
    """
    k = problem.shifts(partition.beta)
    if shift_stride is not None:
        if not lower:
            raise ValueError("shift_stride is only valid for the lower bound: the upper bound needs every shift")
        if isinstance(shift_stride, bool) or int(shift_stride) != shift_stride or int(shift_stride) < 1:
            raise ValueError(f"shift_stride must be an integer >= 1, got {shift_stride!r}")
    if not lower:
        return SegmentTable.build(partition.pi, partition.pi, 0, candidate_shifts(partition.pi, partition.pi, k))
    shifts = np.arange(-k, k + 1)  # with unit padding cells every shift is a candidate
    if shift_stride is not None:
        shifts = shifts[(shifts % int(shift_stride) == 0) | (np.abs(shifts) == k)]
    columns, offset = padding_blocks(partition.pi, shifts, k)
    return SegmentTable.build(partition.pi, columns, offset, shifts)


def max_privacy_shortfall(problem: Problem, partition: Partition, p, *, lower: bool = False,
                          table: SegmentTable | None = None) -> Shortfall:
    """Algorithm 2: a constraint (φ*, A*) of P(π, β) with maximum privacy shortfall.

    Parameters
    ----------
    p : cell probabilities p(j), j ∈ [N] (or, with ``lower=True``, on the decision cells of D(π, β):
        the padded index set N, see :func:`padding_blocks`).
    lower : search the constraints of D(π, β) instead (events inside the core, p on padded cells).
    table : a precomputed :func:`geometry` to reuse across calls.

    Returns
    -------
    Shortfall with ``value`` = V(φ*, A*) including the −δ; a positive value is a violated constraint.
    """
    table = geometry(problem, partition, lower=lower) if table is None else table
    p = np.asarray(p, dtype=float)
    if p.size < table.column_widths.size:
        raise ValueError(f"p must have {table.column_widths.size} entries, got {p.size}")
    values = table.worst_values(p, problem.exp_epsilon) - problem.delta
    r = int(np.argmax(values))
    sl = slice(table.offsets[r], table.offsets[r + 1])
    contrib = table.contributions(p, problem.exp_epsilon)[sl]
    mask = np.zeros(table.length.size, dtype=bool)
    mask[sl] = contrib > 0
    return Shortfall(phi=float(table.shifts[r] * partition.beta), event=event_intervals(table, mask, partition.beta),
                     value=float(values[r]), by_shift=values, shifts=table.shifts * partition.beta)
