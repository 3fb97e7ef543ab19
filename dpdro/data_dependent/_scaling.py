r"""Solving P′ at Δf = 1 on Φ = [0, R) and mapping the result back
(:func:`dpdro.data_dependent.optimal_noise`; the data-dependent counterpart of
:mod:`dpdro._scaling`).

For a single loss homogeneous of degree d (:attr:`dpdro.Loss.degree`) the map ϕ ↦ (ϕ − φ_lo)/Δf
takes P′ at (Δf, Φ = [φ_lo, φ_hi)) onto P′ at (1, [0, R)), R = (φ_hi − φ_lo)/Δf, when the weight
and the pieces map with it: a mechanism of the one is a mechanism of the other (noises and output
laws scaled by Δf, piece edges φ_lo + Δf·e) with the same δ, and its expected loss is Δf^d times
the other's. So the optimal values differ by exactly Δf^d, and the driver solves the unit problem:
its bounds, its refinement path and its time do not depend on the units nor on where Φ lies.

The map is used when it is exact (:func:`unit_problem`): one loss with a degree, no caps, R a float
exactly (checked in rational arithmetic), a uniform weight or a piecewise-constant one whose edges
map to floats exactly, fine pieces, M equal pieces or piece edges that map exactly, a refinement
path ``betas`` that maps exactly, and Δf^(d+1) within :data:`dpdro._scaling.SCALE_RANGE`.

Back at Δf (:func:`mapped_result`) the mechanism is rebuilt with its noises scaled by
:func:`dpdro._scaling.scaled_noise` (on the exactly scaled lattice when the rounded one's
certificate exceeds δ) and its piece edges φ_lo + ticks·(Δf β) given exactly in ticks; it is
certified again exactly at Δf, and its expected loss is recomputed on the real problem and rounded
up. The lower bound is Δf^d times the unit one, rounded down, and the history, the trace and the
progress reports are shown at Δf (the bounds' own records of Algorithm 1's rounds stay those of the
unit problem). When the mapped mechanism's certificate exceeds δ the result is ``None`` and the
driver solves at Δf itself.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from .._rounding import round_down, round_up
from .._scaling import check_scale, scaled_noise, scaled_record
from ..noise import PiecewiseUniform
from ..privacy import certify_delta as certify_single
from ..release import LowerBound, UpperBound
from .costs import clamped_noise_cost, output_costs, output_point_costs, query_atom_costs
from .mechanism import Mechanism
from .problem import Problem

__all__ = ["mapped_result", "mapped_row", "unit_problem"]

# the keys of a step's history entry (:class:`DDOptimalNoise`) holding upper and lower bounds
_UPPER_KEYS = ("output", "noise", "best_upper")
_LOWER_KEYS = ("lower", "best_lower")


class _Inexact(Exception):
    """The map ϕ ↦ (ϕ − φ_lo)/Δf is not exact on some part of the problem."""


def _unit_values(values, origin: float, scale: float) -> list[float]:
    """(v − origin)/scale for every v, each a float exactly (else :class:`_Inexact`)."""
    o, s = Fraction(origin), Fraction(scale)
    out = []
    for v in values:
        x = (Fraction(float(v)) - o) / s
        f = float(x)
        if Fraction(f) != x:
            raise _Inexact
        out.append(f)
    return out


def _unit_weight(problem: Problem):
    """The weight argument of the unit problem."""
    kind = problem._weight[0]
    if kind == "uniform":
        return None
    if kind == "callable":  # its shape is not known exactly
        raise _Inexact
    edges, values = problem._weight[1]
    return np.array(_unit_values(edges, problem.phi_lo, problem.sensitivity)), values


def _unit_pieces(problem: Problem):
    """The pieces argument of the unit problem: ``None``, M equal pieces, or the edges mapped."""
    spec = problem.piece_spec
    if spec is None:
        return None
    M = spec.size - 1
    if np.array_equal(spec, np.linspace(problem.phi_lo, problem.phi_hi, M + 1)):
        return M
    return np.array(_unit_values(spec, problem.phi_lo, problem.sensitivity))


def unit_problem(problem: Problem, betas) -> tuple[Problem, list[float] | None] | None:
    """P′ at Δf = 1 on [0, R) with the path ``betas`` divided by Δf (``None``: the default path),
    when the map of the module docstring is exact and changes something; else ``None``."""
    if problem.losses is not None or problem.loss.degree is None or problem.cap is not None:
        return None
    scale, origin = problem.sensitivity, problem.phi_lo
    if scale == 1.0 and origin == 0.0:
        return None
    try:
        check_scale(scale, problem.loss.degree)
        (R,) = _unit_values([problem.phi_hi], origin, scale)
        unit_betas = None if betas is None else _unit_values(betas, 0.0, scale)
        unit = Problem(
            epsilon=problem.epsilon, delta=problem.delta, sensitivity=1.0, loss=problem.loss,
            phi_lo=0.0, phi_hi=R, weight=_unit_weight(problem), pieces=_unit_pieces(problem),
            monotone=problem.monotone,
        )
    except (_Inexact, ValueError):
        return None
    return unit, unit_betas


def mapped_row(row: dict, scale: float, power: float) -> dict:
    """A step's history entry of the unit problem shown at Δf: its bounds times ``power`` = Δf^d
    (rounded in the safe direction), β times Δf."""
    out = scaled_record(row, power, upper=_UPPER_KEYS, lower=_LOWER_KEYS)
    out["beta"] = row["beta"] * scale
    return out


def mapped_result(res, problem: Problem, budget):
    """The driver's result ``res`` on the unit problem, mapped to ``problem`` (module docstring), or
    ``None`` when its mechanism is not certified at δ there."""
    scale, power = problem.sensitivity, problem.sensitivity**problem.loss.degree
    upper = None
    if res.upper is not None:
        upper = _mapped_upper(res.upper, problem, power)
        if upper is None:
            return None
    return replace(
        res,
        upper=upper,
        lower=None if res.lower is None else _mapped_lower(res.lower, power),
        seconds=budget.elapsed(),
        history=[_mapped_history_row(row, res, upper, scale, power) for row in res.history],
        trace=_mapped_trace(res, upper, power),
        clock=budget,
    )


def _upper_at(value: float, res, upper: UpperBound | None, power: float) -> float:
    """An upper bound of the unit result shown at Δf: the released mechanism's value recomputed
    there (``upper``, as in the result), any other Δf^d times it, rounded up (the two can differ in
    the last digits)."""
    if upper is not None and value == res.upper.value:
        return upper.value
    return round_up(value * power)


def _mapped_history_row(row: dict, res, upper: UpperBound | None, scale: float, power: float):
    """A step's history entry at Δf (:func:`mapped_row`) with its upper bounds by
    :func:`_upper_at`, as in the result and the trace."""
    out = mapped_row(row, scale, power)
    for key in _UPPER_KEYS:
        if row.get(key) is not None:
            out[key] = _upper_at(row[key], res, upper, power)
    return out


def _mapped_trace(res, upper: UpperBound | None, power: float) -> list:
    """The trace at Δf: the lower bounds times Δf^d rounded down, the upper bounds by
    :func:`_upper_at`, kept non-increasing."""
    out, least = [], None
    for t, u, lo in reversed(res.trace):
        if u is not None:
            u = _upper_at(u, res, upper, power)
            least = u = u if least is None else max(u, least)
        out.append((t, u, None if lo is None else round_down(lo * power)))
    return out[::-1]


def _mapped_lower(lower: LowerBound, power: float) -> LowerBound:
    """Δf^d times the unit bound, rounded down (the optimal values differ by exactly Δf^d); the
    solution and the partition of the unit problem are dropped."""
    return replace(
        lower,
        value=round_down(lower.value * power),
        lp_value=None if lower.lp_value is None else lower.lp_value * power,
        candidates={k: round_down(v * power) for k, v in lower.candidates.items()},
        p=None,
        columns=None,
        partition=None,
    )


def _mapped_upper(upper: UpperBound, problem: Problem, power: float) -> UpperBound | None:
    """The unit bound's mechanism at Δf, certified there exactly and its expected loss recomputed
    (rounded up); ``None`` when neither scaling of its lattice certifies at δ."""
    for exact in (False, True):
        try:
            mech = _mapped_mechanism(upper.mechanism, problem, exact)
            certified = _certify(mech, problem)
        except ValueError:  # the mapped laws are not on a common lattice
            continue
        if certified <= problem.delta:
            break
    else:
        return None
    losses, weights, value = _objective(mech, problem)
    return replace(
        upper,
        mechanism=mech,
        certified_delta=certified,
        value=round_up(value),
        lp_value=None if upper.lp_value is None else upper.lp_value * power,
        piece_losses=losses,
        weights=weights,
        partition=None,
    )


def _mapped_mechanism(mech: Mechanism, problem: Problem, exact: bool) -> Mechanism:
    """``mech`` (of the unit problem) at Δf: its laws scaled by Δf (``exact``: on the exactly scaled
    lattice, :func:`dpdro._scaling.scaled_noise`), its edges φ_lo + ticks·step."""
    scale = problem.sensitivity
    laws = tuple(_moved_law(scaled_noise(n, scale, exact=exact), problem) for n in mech.noises)
    options = dict(kind=mech.kind, query_atoms=mech.query_atoms, clamp=mech.clamp,
                   grid_masses=mech.grid_masses)
    args = (problem.epsilon, problem.delta, scale)
    if mech.edge_ticks is None:  # one piece, Φ itself (the clamped data-independent noise)
        if mech.n_pieces != 1:
            raise ValueError("a mechanism of several pieces needs its edges in ticks")
        return Mechanism(laws, np.array([problem.phi_lo, problem.phi_hi]), *args, **options)
    grid = mech.noises[0].grid
    if grid is None or laws[0].grid is None:
        step = mech.edge_step * scale
    else:  # the same whole number of lattice steps as at Δf = 1
        step = laws[0].grid * round(mech.edge_step / grid)
    return Mechanism(laws, np.array([problem.phi_lo]), *args, edge_ticks=mech.edge_ticks,
                     edge_step=step, **options)


def _moved_law(law: PiecewiseUniform, problem: Problem) -> PiecewiseUniform:
    """``law`` with the piece its metadata names mapped to Φ (scaled_noise scales the rest)."""
    if "piece" not in law.metadata:
        return law
    meta = dict(law.metadata)
    meta["piece"] = [problem.phi_lo + problem.sensitivity * e for e in meta["piece"]]
    return replace(law, metadata=meta)


def _certify(mech: Mechanism, problem: Problem) -> float:
    """The exact δ of ``mech`` at Δf: a single noise on Φ as in
    :func:`dpdro.data_dependent.anchors.clamped_independent_noise`, every other mechanism by
    :meth:`Mechanism.certify`."""
    if mech.edge_ticks is None:
        return certify_single(mech.noises[0], problem.epsilon, problem.sensitivity)
    return mech.certify()


def _objective(mech: Mechanism, problem: Problem) -> tuple[np.ndarray, np.ndarray, float]:
    """The per-piece expected losses, the piece weights and the expected loss of ``mech`` on
    ``problem``, computed as the families that release them do (:mod:`~.bounds`, :mod:`~.anchors`).
    """
    loss = problem.loss
    if mech.edge_ticks is None:
        noise = mech.noises[0]
        width = problem.phi_hi - problem.phi_lo
        value = (clamped_noise_cost(problem, noise, loss, 0.0, width) if mech.clamp
                 else noise.expected_loss(loss))
        return np.array([value]), np.ones(1), float(value)
    edges = np.minimum(mech.piece_edges, problem.phi_hi)  # the weight is 0 beyond Φ
    edges[-1] = problem.phi_hi
    weights = problem.weight_masses(edges)
    if mech.kind == "noise":
        if mech.clamp:
            raise ValueError("a clamped noise mechanism of several pieces is not released")
        losses = mech.expected_losses(loss)
        return losses, weights, float(np.sum(weights * losses))
    # output laws: the costs of the output family (:meth:`OutputLP._cost_vector`) summed per piece
    K, lam, beta = int(mech.edge_ticks[-1]), mech.edge_ticks, mech.edge_step
    fine_losses = [loss] * K
    cells = np.add.reduceat(output_costs(problem, beta, K, fine_losses), lam[:-1], axis=0)
    at_query = np.add.reduceat(query_atom_costs(problem, beta, K, fine_losses), lam[:-1])
    a = mech.query_atoms
    laws = np.array([law.probs for law in mech.noises])
    g = np.zeros((a.size, 0)) if mech.grid_masses is None else mech.grid_masses
    rest = 1.0 - a if g.size == 0 else np.clip(1.0 - a - g.sum(axis=1), 0.0, None)
    cost = np.sum(cells * laws, axis=1) * rest + a * at_query
    if g.size:
        points = output_point_costs(problem, beta, K, fine_losses)[:, 1:K]
        cost = cost + np.sum(np.add.reduceat(points, lam[:-1], axis=0) * g, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        losses = np.where(weights > 0, cost / weights, 0.0)
    return losses, weights, float(np.sum(cost))
