r"""The worst-case event oracle of Algorithm 2 (maximum privacy shortfall) and its geometry.

For a fixed shift φ = s·β the privacy shortfall of an event A ∈ F(L, β) is (equation (9))

    V(φ, A) = Σ_j p(j)·|A ∩ Π_j| / |Π_j| − e^ε·Σ_j p(j)·|A ∩ (Π_j + φ)| / |Π_j| − δ.

The event region [π_1β, π_{N+1}β) splits into *segments*: the non-empty intersections
A_jj′ = Π_j ∩ (Π_j′ + φ) and the parts A_j = Π_j \ (support + φ) that no shifted cell covers
(Algorithm 2's two inner loops). On a segment the integrand of V is constant, so the worst event
for φ is the union of the segments with positive contribution (Lemma C.15) and

    max_A V(φ, A) = Σ_{A_j} |A_j|·p(j)/|Π_j| + Σ_{A_jj′} |A_jj′|·[p(j)/|Π_j| − e^ε p(j′)/|Π_j′|]_+
    − δ.

It is piecewise affine in φ with breakpoints in B(β, π) = {(π_j − π_j′)β} ∩ [−Δf, Δf] ∪ {±Δf}
(Lemma C.16), the candidate shifts of Algorithm 2's outer loop. One merge of two sorted edge lists
per shift gives all segments (Lemma C.17); here the merge is vectorised over all candidate shifts,
and the resulting :class:`SegmentTable` is reused by the whole-shift cuts of the bounding LPs.

For the lower bound D(π, β) on *uniform* cells (width β, the paper's D(L, β)) the same construction
applies with the decision vector extended to the padded index set N (the shifted cells may lie in
the padding; events stay inside the core).

On *non-uniform* cells the paper's D(π, β) (Section 4.1) is not a relaxation of P: its events cut
cells into segments and spread each cell's mass uniformly, i.e. it imposes the dual constraint only
on average over a wide cell (scripts/check_nonuniform_lower_bound.py has a counterexample). dpdro's
D(π, β) there keeps only what the cell masses p_j = γ(Π_j) of *any* feasible γ must satisfy: for
every union A = ∪_{j∈S} Π_j of core cells,

    p(S) − e^ε p(N_φ(S)) ≤ δ,   N_φ(S) = {decision cells meeting A − φ},

since γ(A − φ) ≤ p(N_φ(S)). On unit cells N_φ({j}) is the single cell Π_j − φ and this is D(L, β).
For a fixed φ the sets N_φ({j}) are intervals of decision cells whose ends increase with j
(:func:`neighbour_intervals`), so max_S p(S) − e^ε p(N_φ(S)) is Σ_j p_j minus a maximum flow in
which cell j may send its mass to the cells of N_φ({j}), each of capacity e^ε p_m; the flow is
computed by a greedy pass (:func:`cell_union_shortfalls`) and the maximising S by a chain recursion
(:func:`cell_union_worst_event`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_int
from .partition import Partition
from .problem import Problem

__all__ = [
    "SegmentTable",
    "Shortfall",
    "candidate_shifts",
    "cell_union_shortfalls",
    "cell_union_worst_event",
    "event_intervals",
    "max_privacy_shortfall",
    "neighbour_intervals",
    "padding_blocks",
    "segment_table",
]


def candidate_shifts(core_pi: np.ndarray, column_pi: np.ndarray, k: int) -> np.ndarray:
    """B(β, π) in units of β: edge differences within [−k, k], plus ±k (Algorithm 2, outer loop).

    Only the pairs within k of each other are formed (both edge arrays are sorted): all n² pairs
    had taken 6.8 GB for the uniform partition L = 10⁴ and were refused memory beyond."""
    lo = np.searchsorted(column_pi, core_pi - k, side="left")
    hi = np.searchsorted(column_pi, core_pi + k, side="right")
    counts = hi - lo
    core = np.repeat(np.arange(core_pi.size), counts)
    # the column index of each pair: lo of its core edge plus its rank among that edge's pairs
    rank = np.arange(core.size) - np.repeat(np.cumsum(counts) - counts, counts)
    diffs = core_pi[core] - column_pi[lo[core] + rank]
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
    def build(
        cls,
        core_pi: np.ndarray,
        column_pi: np.ndarray,
        core_offset: int,
        shifts: np.ndarray,
        chunk_elements: int = 4_000_000,
    ) -> SegmentTable:
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
            sh = shifts[c0 : c0 + per_chunk]
            bps = np.concatenate(
                (
                    np.broadcast_to(core_pi, (sh.size, core_pi.size)),
                    column_pi[None, :] + sh[:, None],
                ),
                axis=1,
            )
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
        rows, start, length, cell, shifted = (np.concatenate(x) for x in zip(*parts, strict=False))
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
    return _merge_intervals(np.column_stack((lo, lo + table.length[mask]))) * beta


def _merge_intervals(ticks: np.ndarray) -> np.ndarray:
    """Disjoint, sorted union of half-open integer intervals [a, b) (rows of ``ticks``)."""
    if ticks.shape[0] == 0:
        return np.zeros((0, 2))
    ticks = ticks[np.argsort(ticks[:, 0])]
    lo, hi = ticks[:, 0], ticks[:, 1]
    breaks = np.nonzero(lo[1:] != hi[:-1])[0]
    starts = np.concatenate(([lo[0]], lo[breaks + 1]))
    ends = np.concatenate((hi[breaks], [hi[-1]]))
    return np.column_stack((starts, ends)).astype(float)


def padding_blocks(core_pi: np.ndarray, shifts: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Decision cells of D(π, β) for the given shifts: the core cells plus padding blocks.

    Section 4.1 pads π with k = Δf/β unit cells at each end. A padding cell only enters the privacy
    constraints through the preimages (core − φ) of core cells, so unit cells that no preimage
    boundary separates are merged into one block with cost the infimum over the block. This keeps
    the bound valid: on unit core cells a block of width > 1 is invisible to every kept shift (its
    image would contain a core edge), and the cell-union constraints used on non-uniform cells hold
    for the masses of any column partition (a coarser one only enlarges N_φ(S)). With every shift of
    B(β) the blocks are exactly the unit cells of the paper. Returns the decision-cell edges and the
    index of the first core cell.
    """
    lo, hi = int(core_pi[0]), int(core_pi[-1])
    pre = (core_pi[None, :] - shifts[:, None]).ravel()
    left = np.unique(np.concatenate(([lo - k], pre[(pre > lo - k) & (pre < lo)])))
    right = np.unique(np.concatenate((pre[(pre > hi) & (pre < hi + k)], [hi + k])))
    return np.concatenate((left, core_pi, right)), int(left.size)


def neighbour_intervals(table: SegmentTable, n_core: int) -> tuple[np.ndarray, np.ndarray]:
    """First and last decision cell met by Π_j − φ, for every core cell j and shift φ of ``table``.

    Returns two integer arrays of shape (n_core, n_shifts) (column indices); both are non-decreasing
    in j. Requires a table of D(π, β), where every point of core − φ lies in a decision cell.
    """
    if np.any(table.shifted < 0):
        raise ValueError(
            "neighbour_intervals needs the segment table of D(π, β) (padded decision cells)"
        )
    # non-decreasing: segments are sorted
    key = table.shift_index * n_core + (table.cell - table.core_offset)
    grid = np.arange(table.shifts.size * n_core)
    first = np.searchsorted(key, grid, side="left")
    last = np.searchsorted(key, grid, side="right") - 1
    if np.any(last < first):
        raise ValueError("internal error: a core cell has no segment for some shift")
    lo = table.shifted[first].reshape(table.shifts.size, n_core).T
    hi = table.shifted[last].reshape(table.shifts.size, n_core).T
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


def cell_union_shortfalls(
    lo: np.ndarray, hi: np.ndarray, p_core: np.ndarray, p_columns: np.ndarray, exp_eps: float
) -> np.ndarray:
    """max over unions S of core cells of p(S) − e^ε p(N_φ(S)), for every shift (δ not subtracted).

    By max-flow/min-cut duality this is Σ_j p_j minus the largest flow in which core cell j sends
    mass to the decision cells lo[j] … hi[j], each of capacity e^ε p_m. The ends of the intervals
    are non-decreasing in j, and for such "staircase" graphs the greedy pass that routes each
    cell's mass, in order, to the leftmost capacity still free is a maximum flow (an exchange
    argument: capacity left of the current position is useless to every later cell). The pass runs
    over cells and is vectorised over shifts. The value never under-states the true maximum (any
    flow is feasible), so a cutting plane that trusts it never misses a violated shift; tests check
    it against brute force.
    """
    p_core = np.clip(np.asarray(p_core, dtype=float), 0.0, None)
    cap = np.concatenate(
        ([0.0], np.cumsum(exp_eps * np.clip(np.asarray(p_columns, dtype=float), 0.0, None)))
    )
    pos = np.zeros(lo.shape[1])  # how much of the cumulative capacity is used, per shift
    unmet = np.zeros(lo.shape[1])
    for j, pj in enumerate(p_core):
        if pj == 0.0:
            continue
        start = np.maximum(pos, cap[lo[j]])
        flow = np.clip(np.minimum(pj, cap[hi[j] + 1] - start), 0.0, None)
        pos = start + flow
        unmet += pj - flow
    return unmet


def cell_union_worst_event(
    lo: np.ndarray, hi: np.ndarray, p_core: np.ndarray, p_columns: np.ndarray, exp_eps: float
) -> tuple[float, np.ndarray]:
    """The maximising union S of core cells for one shift (``lo``, ``hi`` of length n_core).

    Chain recursion: with S = {j_1 < j_2 < …} the intervals satisfy N(j_a) ∩ N(j_c) ⊆ N(j_b) for
    a < b < c, so |∪ N| = Σ |N(j_b)| − Σ |N(j_b) ∩ N(j_{b+1})| and
    g(j) = v_j + max(0, max_{i<j} g(i) + e^ε p(N(i) ∩ N(j))), v_j = p_j − e^ε p(N(j)).
    Returns (max_S p(S) − e^ε p(N_φ(S)), boolean mask of S); O(n_core²).
    """
    p_core = np.asarray(p_core, dtype=float)
    w = np.concatenate(([0.0], np.cumsum(exp_eps * np.asarray(p_columns, dtype=float))))
    n = p_core.size
    g = np.empty(n)
    prev = np.full(n, -1)
    for j in range(n):
        best, arg = 0.0, -1
        if j:
            overlap = np.where(hi[:j] >= lo[j], w[np.minimum(hi[:j], hi[j]) + 1] - w[lo[j]], 0.0)
            cand = g[:j] + overlap
            i = int(np.argmax(cand))
            if cand[i] > 0.0:
                best, arg = float(cand[i]), i
        g[j] = p_core[j] - (w[hi[j] + 1] - w[lo[j]]) + best
        prev[j] = arg
    mask = np.zeros(n, dtype=bool)
    if n == 0 or g.max() <= 0.0:
        return 0.0, mask
    j = int(np.argmax(g))
    value = float(g[j])
    while j >= 0:
        mask[j] = True
        j = int(prev[j])
    return value, mask


def segment_table(
    problem: Problem, partition: Partition, *, lower: bool = False, shift_stride: int | None = None
) -> SegmentTable:
    """The segment table of P(π, β) (``lower=False``) or of D(π, β) (``lower=True``).

    ``shift_stride`` keeps only the candidate shifts that are multiples of ``shift_stride``·β (and
    ±Δf). Dropping privacy constraints relaxes the problem, so this is allowed for the lower bound
    only, where it trades a little tightness for speed (and lets the padding merge into blocks, see
    :func:`padding_blocks`).
    """
    k = problem.shifts(partition.beta)
    if shift_stride is not None:
        if not lower:
            raise ValueError(
                "shift_stride is only valid for the lower bound: the upper bound needs every shift"
            )
        shift_stride = check_int("shift_stride", shift_stride, minimum=1)
    if not lower:
        return SegmentTable.build(
            partition.pi, partition.pi, 0, candidate_shifts(partition.pi, partition.pi, k)
        )
    shifts = np.arange(-k, k + 1)  # with unit padding cells every shift is a candidate
    if shift_stride is not None:
        shifts = shifts[(shifts % shift_stride == 0) | (np.abs(shifts) == k)]
    columns, offset = padding_blocks(partition.pi, shifts, k)
    return SegmentTable.build(partition.pi, columns, offset, shifts)


def max_privacy_shortfall(
    problem: Problem,
    partition: Partition,
    p,
    *,
    lower: bool = False,
    table: SegmentTable | None = None,
) -> Shortfall:
    """Algorithm 2: a constraint (φ*, A*) of P(π, β) with maximum privacy shortfall.

    Parameters
    ----------
    p : cell probabilities p(j), j ∈ [N] (or, with ``lower=True``, on the decision cells of D(π, β):
        the padded index set N, see :func:`padding_blocks`).
    lower : search the constraints of D(π, β) instead (events inside the core, p on padded cells).
        On a non-uniform partition these are the cell-union constraints of the module docstring,
        and A* is a union of core cells.
    table : a precomputed :func:`segment_table` to reuse across calls.

    Returns
    -------
    Shortfall with ``value`` = V(φ*, A*) including the −δ; a positive value is a violated
    constraint.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Algorithm 2, Proposition 8 and equation (9).
    """
    table = segment_table(problem, partition, lower=lower) if table is None else table
    p = np.asarray(p, dtype=float)
    if p.size < table.column_widths.size:
        raise ValueError(f"p must have {table.column_widths.size} entries, got {p.size}")
    if lower and not partition.is_uniform:
        lo, hi = neighbour_intervals(table, partition.n_cells)
        p_cols = p[: table.column_widths.size]
        p_core = p_cols[table.core_offset : table.core_offset + partition.n_cells]
        values = cell_union_shortfalls(lo, hi, p_core, p_cols, problem.exp_epsilon) - problem.delta
        r = int(np.argmax(values))
        value, cells = cell_union_worst_event(
            lo[:, r], hi[:, r], p_core, p_cols, problem.exp_epsilon
        )
        pi = partition.pi
        ticks = np.column_stack((pi[:-1][cells], pi[1:][cells]))
        event = _merge_intervals(ticks) * partition.beta
        return Shortfall(
            phi=float(table.shifts[r] * partition.beta),
            event=event,
            value=value - problem.delta,
            by_shift=values,
            shifts=table.shifts * partition.beta,
        )
    values = table.worst_values(p, problem.exp_epsilon) - problem.delta
    r = int(np.argmax(values))
    sl = slice(table.offsets[r], table.offsets[r + 1])
    contrib = table.contributions(p, problem.exp_epsilon)[sl]
    mask = np.zeros(table.length.size, dtype=bool)
    mask[sl] = contrib > 0
    return Shortfall(
        phi=float(table.shifts[r] * partition.beta),
        event=event_intervals(table, mask, partition.beta),
        value=float(values[r]),
        by_shift=values,
        shifts=table.shifts * partition.beta,
    )
