r"""Where optimal noise pays: the certified ratio of the best closed-form noise to the optimum.

For one loss and one (ε, δ) at sensitivity Δf = 1, the *best closed form* is the literature
mechanism with the smallest exact expected loss among those that dpdro implements and certifies at
(ε, δ) (:func:`closed_forms`), and the optimum of problem P (Observation 1 of Selvi et al.) is
bracketed by ``dpdro.optimal_noise``: lower ≤ OPT ≤ upper, the lower bound D(π, β) and the upper
bound P(π, β) (Propositions 1–3, Theorem 1). The ratio best closed form / OPT then lies in the
certified interval

    [closed / upper, closed / lower],

whose width is at most the certified relative gap (upper − lower)/lower. A ratio near 1 says a
closed form is as good as optimal noise; a ratio well above 1 says optimal noise pays. Since the
closed form is itself (ε, δ)-DP, closed ≥ OPT ≥ lower: the interval's upper end is never below 1.

The map covers :data:`EPSILONS` × :data:`DELTAS` for the four settings of :data:`SETTINGS`:

``l1``, ``l2``
    E|X| and E X²; closed forms: staircase (γ optimised for the loss), Tulap, truncated Laplace,
    Laplace and analytic Gaussian, each kept only where it is (ε, δ)-DP
    (:func:`dpdro.mechanisms.meets_delta`);
``asymmetric``
    dpdro's ``asymmetric_loss()``, c(x) = |x| + 1[x > 0]·|x| (over-reporting costs twice as much);
    the same closed forms, all symmetric, hence E c(X) = 1.5·E|X|; and each of them shifted by its
    best offset (``shifted_<name>``, :func:`dpdro.reference.best_shift`): a shift keeps a noise
    (ε, δ)-DP, and for this loss the best noise is not centred at 0;
``one_sided``
    E|X| for non-negative noise (``Problem(support=(0, ∞))``: a released value never below the
    true one). Only bounded symmetric noises shifted by their half-width apply: the truncated
    Laplace shifted by its half-width A = (Δf/ε)·log(1 + (e^ε − 1)/(2δ)), loss A (the one-sided
    noise of the private-LP paper with its shift tightened to A,
    :class:`repro.private_lp.ShiftedTruncatedLaplace`), and the Tulap shifted by its half-width.
    Laplace, Gaussian and staircase have unbounded support.

:func:`map_cell` computes one cell; ``scripts/where_it_pays.py`` runs the grid, resumably, into
``results/where_it_pays.json`` (:data:`OUT`) with provenance. Nothing here is random.
:func:`ratio_grid`, :func:`draw_map` and :func:`summary_line` display the stored map (the
chapter "Where optimal noise pays"); their labels round the certified lower end *down*.
"""

from __future__ import annotations

import math
import time

import dpdro
from dpdro.mechanisms import Tulap, baselines, meets_delta
from dpdro.reference import best_shift
from dpdro.solvers import SolverError

from .paths import RESULTS
from .private_lp import ShiftedTruncatedLaplace
from .provenance import read_json

__all__ = [
    "EPSILONS",
    "DELTAS",
    "SETTINGS",
    "TWO_SIDED",
    "REL_GAP",
    "TIME_LIMIT",
    "OUT",
    "problem",
    "closed_forms",
    "compare",
    "ratio_interval",
    "map_cell",
    "refresh_closed",
    "load_map",
    "ratio_among",
    "cell_key",
    "ratio_grid",
    "map_label",
    "shown_width",
    "shown_as_range",
    "n_ranges",
    "n_pays",
    "largest",
    "largest_upper",
    "tex_value",
    "math_role",
    "cell_tex",
    "draw_map",
    "summary_line",
]

EPSILONS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0)
DELTAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-2, 0.1)
SETTINGS = ("l1", "l2", "asymmetric", "one_sided")
# the closed forms compared for two-sided noise (dpdro.mechanisms.BASELINES without the classical
# Gaussian, which the analytic Gaussian dominates and which is not (ε, δ)-DP for large ε)
TWO_SIDED = ("staircase", "tulap", "truncated_laplace", "laplace", "analytic_gaussian")
REL_GAP = 1e-3
TIME_LIMIT = 20.0
OUT = RESULTS / "where_it_pays.json"


def _loss(setting: str):
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    return (
        dpdro.asymmetric_loss() if setting == "asymmetric" else ("l2" if setting == "l2" else "l1")
    )


def problem(setting: str, epsilon: float, delta: float) -> dpdro.Problem:
    """Problem P (Observation 1) of one cell, at Δf = 1: the loss of ``setting`` and, for
    ``one_sided``, the support [0, ∞)."""
    support = (0.0, math.inf) if setting == "one_sided" else None
    return dpdro.Problem(epsilon=epsilon, delta=delta, loss=_loss(setting), support=support)


def closed_forms(setting: str, epsilon: float, delta: float) -> dict[str, float]:
    """The exact expected loss of every closed-form noise that is (ε, δ)-DP at Δf = 1 and fits
    ``setting`` (module docstring), keyed by mechanism name.

    Two-sided settings use each mechanism's ``expected_loss`` (closed forms for ℓ1 and ℓ2; for the
    asymmetric loss the staircase's and the Tulap's are exact and the others' an accurate
    quadrature), the asymmetric loss also the shifted mechanisms
    (:func:`dpdro.reference.best_shift`: for this loss, minus the 2/3-quantile). One-sided
    noise: ``shifted_truncated_laplace`` is A (the mean of the truncated Laplace shifted onto
    [0, 2A]) and ``shifted_tulap`` the right end T of the Tulap's support (the Tulap, bounded for
    δ > 0, shifted onto [0, 2T]); the Tulap is left out where dpdro cannot build it (δ below its
    certificate's rounding allowance).
    """
    if setting == "one_sided":
        out = {
            "shifted_truncated_laplace": ShiftedTruncatedLaplace(
                epsilon=epsilon, delta=delta
            ).tight_shift()
        }
        try:
            out["shifted_tulap"] = float(
                Tulap(epsilon=epsilon, delta=delta).to_piecewise_uniform().support[1]
            )
        except ValueError:
            pass
        return out
    loss = _loss(setting)
    mechs = baselines(epsilon=epsilon, delta=delta, loss=loss)
    names = [n for n in TWO_SIDED if n in mechs and meets_delta(mechs[n], delta)]
    out = {name: float(mechs[name].expected_loss(loss)) for name in names}
    if setting == "asymmetric":
        out.update({f"shifted_{name}": best_shift(mechs[name], loss)[1] for name in names})
    return out


def compare(setting: str, epsilon: float, delta: float) -> dict:
    """The closed-form part of a cell: ``closed`` (:func:`closed_forms`), the ``best`` of them and
    its ``best_value``."""
    closed = closed_forms(setting, epsilon, delta)
    best = min(closed, key=closed.get)
    return {"closed": closed, "best": best, "best_value": closed[best]}


def ratio_interval(closed: float, lower: float, upper: float) -> tuple[float, float]:
    """[closed/upper, closed/lower]: where closed/OPT lies when lower ≤ OPT ≤ upper."""
    return closed / upper, (closed / lower if lower > 0 else math.inf)


def cell_key(setting: str, epsilon: float, delta: float) -> str:
    """The key of a cell in the stored map."""
    return f"{setting}|{epsilon:g}|{delta:g}"


def map_cell(
    setting: str,
    epsilon: float,
    delta: float,
    *,
    rel_gap: float = REL_GAP,
    time_limit: float = TIME_LIMIT,
    keep_noise: bool = True,
) -> dict:
    """One cell of the map: the closed forms, the certified bracket of the optimum, the ratio.

    Parameters
    ----------
    setting : one of :data:`SETTINGS`.
    epsilon, delta : the privacy parameters (Δf = 1).
    rel_gap, time_limit : passed to ``dpdro.optimal_noise``.
    keep_noise : store the released noise (edges, probs, atom) so that a reader can re-certify it.

    Returns
    -------
    dict with ``closed`` (mechanism → exact expected loss), ``best`` and ``best_value``, the
    optimum's ``lower`` and ``upper`` bounds, ``gap``, ``reached``, ``ratio`` = [closed/upper,
    closed/lower], ``certified_delta`` of the released noise, ``seconds``; where the time limit
    expired before a first bracket or the LP solver failed, ``lower``/``upper``/``ratio`` are
    ``None`` and ``error`` says why.

    References
    ----------
    .. [1] A. Selvi, H. Liu and W. Wiesemann, "Differential privacy via distributionally robust
       optimization", Observation 1 (problem P), Propositions 1–3 and Theorem 1 (the bounds),
       Section 5.1 (the relative gap).
    """
    out = {"setting": setting, "epsilon": epsilon, "delta": delta}
    out.update(compare(setting, epsilon, delta))
    t0 = time.perf_counter()
    try:
        res = dpdro.optimal_noise(
            problem(setting, epsilon, delta), rel_gap=rel_gap, time_limit=time_limit
        )
    except (TimeoutError, SolverError) as e:  # no bracket: recorded, not hidden
        out.update(
            lower=None,
            upper=None,
            gap=None,
            reached=False,
            ratio=None,
            error=f"{type(e).__name__}: {e}",
        )
        out["seconds"] = round(time.perf_counter() - t0, 2)
        return out
    seconds = time.perf_counter() - t0
    lo, up = float(res.lower.value), float(res.upper.value)
    out.update(
        lower=lo,
        upper=up,
        gap=float(res.gap),
        reached=bool(res.reached),
        ratio=list(ratio_interval(out["best_value"], lo, up)),
        certified_delta=float(dpdro.certify_delta(res.noise, epsilon, 1.0)),
        seconds=round(seconds, 2),
    )
    if keep_noise:
        out["noise"] = res.noise.to_dict()
    return out


def refresh_closed(cell: dict) -> dict:
    """A stored cell with its closed forms, best closed form and ratio recomputed (no solve): the
    closed forms are cheap and exact, the optimum's bracket is kept."""
    out = {**cell, **compare(cell["setting"], cell["epsilon"], cell["delta"])}
    if cell["lower"] is not None:
        out["ratio"] = list(ratio_interval(out["best_value"], cell["lower"], cell["upper"]))
    return out


def load_map(path=OUT) -> dict:
    """The stored map: ``{"settings": ..., "cells": {key: cell}, "provenance": ...}``."""
    return read_json(path)


def ratio_among(cell: dict, names) -> tuple[str, tuple[float, float]] | None:
    """(name, [closed/upper, closed/lower]) for the best closed form of ``cell`` among ``names``
    (e.g. the unshifted ones), or ``None`` where the cell has no bracket or none of ``names``."""
    closed = {n: v for n, v in cell["closed"].items() if n in names}
    if cell["lower"] is None or not closed:
        return None
    best = min(closed, key=closed.get)
    return best, ratio_interval(closed[best], cell["lower"], cell["upper"])


# --- display of the stored map (the chapter "Where optimal noise pays") ---


def _cents(lo: float) -> int:
    """A certified lower end of the ratio in hundredths, rounded down."""
    return math.floor(100 * lo)


def shown_width(lo: float, hi: float) -> float:
    """The width of a certified ratio interval [lo, hi] as a map shows it: from max(lo, 1), since
    every closed form is private (C ≥ OPT), to hi."""
    return hi - max(lo, 1.0)


def shown_as_range(lo: float, hi: float) -> bool:
    """Whether a map labels the interval [lo, hi] with both ends: its :func:`shown_width` is over
    0.01."""
    return shown_width(lo, hi) > 0.01


def map_label(lo: float, hi: float) -> str:
    """The label of one map cell: the certified lower end rounded down to two decimals, at
    least 1 (every closed form is private, so C ≥ OPT); where the interval is wider than 0.01
    (:func:`shown_as_range`), both ends, rounded outwards."""
    if not shown_as_range(lo, hi):
        return f"{_cents(max(lo, 1.0)) / 100:.2f}"
    return f"{_cents(max(lo, 1.0)) / 100:.2f}–{math.ceil(100 * hi) / 100:.2f}"


def ratio_grid(cells, setting: str, names=None):
    """The ε × δ × 2 array of certified ratio intervals [lo, hi] of ``setting`` (NaN where a
    cell has no bracket); with ``names``, the best closed form among those names only."""
    import numpy as np

    out = np.full((len(EPSILONS), len(DELTAS), 2), np.nan)
    for c in cells:
        if c["setting"] != setting or c["lower"] is None:
            continue
        i, j = EPSILONS.index(c["epsilon"]), DELTAS.index(c["delta"])
        out[i, j] = c["ratio"] if names is None else ratio_among(c, names)[1]
    return out


def n_pays(r) -> int:
    """Cells of a :func:`ratio_grid` whose label starts at 1.01 or more (certified ratio ≥ 1.01)."""
    return sum(_cents(lo) >= 101 for lo in r[..., 0].ravel() if math.isfinite(lo))


def largest(r, digits: int = 2) -> str:
    """The largest certified lower end of a :func:`ratio_grid`, rounded down to ``digits``
    decimals (two: as in the labels)."""
    import numpy as np

    scale = 10**digits
    return f"{math.floor(scale * np.nanmax(r[..., 0])) / scale:.{digits}f}"


def largest_upper(r, digits: int = 2) -> str:
    """The largest certified upper end of a :func:`ratio_grid`, rounded up to ``digits`` decimals
    (two: as in the labels): no cell's ratio exceeds it."""
    import numpy as np

    scale = 10**digits
    return f"{math.ceil(scale * np.nanmax(r[..., 1])) / scale:.{digits}f}"


def tex_value(x: float) -> str:
    """A grid value in TeX: powers of ten below 0.001 as 10^{k}, the rest as printed by ``g``."""
    k = round(math.log10(x))
    return f"10^{{{k}}}" if x < 1e-3 and math.isclose(x, 10.0**k) else f"{x:g}"


def math_role(tex: str) -> str:
    """Inline math in MyST role syntax, for text glued as Markdown and pasted with
    ``{glue:md}`key:myst```."""
    return "{math}`" + tex + "`"


def cell_tex(epsilon: float, deltas) -> str:
    """The cells of one ε at the δ values ``deltas`` as inline math (:func:`math_role`) for the
    text, e.g. ε = 8 at δ ≤ 10^{-4} and δ = 0.01: the δ of :data:`DELTAS` up to 1e-4 are written
    as one bound where all of them are present."""
    ds = sorted(deltas)
    small = [d for d in DELTAS if d <= 1e-4]
    if all(d in ds for d in small):
        rest = [d for d in ds if d not in small]
        parts = [r"\delta \le 10^{-4}"] + [rf"\delta = {tex_value(d)}" for d in rest]
    else:
        parts = [rf"\delta = {tex_value(d)}" for d in ds]
    return math_role(rf"\eps = {epsilon:g}") + " at " + " and ".join(map(math_role, parts))


def draw_map(ax, r, title: str) -> None:
    """Draw a :func:`ratio_grid` on ``ax``: colour the certified lower end (log scale, pure white
    at 1 to dark red at 1.5 and above, with its key beside the map), label every cell with
    :func:`map_label`, grey and "none" where there is no bracket."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LinearSegmentedColormap, LogNorm

    shown = np.ma.masked_invalid(np.maximum(r[..., 0], 1.0))
    reds = plt.get_cmap("Reds")(np.linspace(0.1, 1.0, 10))  # "Reds" itself starts off-white
    cmap = LinearSegmentedColormap.from_list("white_reds", ["white", *reds])
    cmap.set_bad("0.85")
    mesh = ax.pcolormesh(shown, cmap=cmap, norm=LogNorm(vmin=1.0, vmax=1.5))
    key = ax.figure.colorbar(mesh, ax=ax, pad=0.02, aspect=12)
    ticks = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    key.set_ticks(ticks, labels=[f"{t:.1f}" for t in ticks[:-1]] + ["≥ 1.5"], fontsize=9)
    key.ax.minorticks_off()
    key.set_label("certified lower end", fontsize=9)
    for (i, j), lo in np.ndenumerate(r[..., 0]):
        text = "none" if np.isnan(lo) else map_label(lo, r[i, j, 1])
        dark = not np.isnan(lo) and lo > 1.25
        ax.text(j + 0.5, i + 0.5, text, ha="center", va="center",
                fontsize=9, color="white" if dark else "black")
    ax.set_xticks(np.arange(len(DELTAS)) + 0.5, [f"${tex_value(d)}$" for d in DELTAS], fontsize=9)
    ax.set_yticks(np.arange(len(EPSILONS)) + 0.5, [f"{e:g}" for e in EPSILONS], fontsize=9)
    ax.set_ylabel("ε", fontsize=10)
    ax.set_title(title, fontsize=10)


def n_ranges(r) -> int:
    """Cells of a :func:`ratio_grid` that the map labels with a range (:func:`shown_as_range`)."""
    import numpy as np

    return int(sum(shown_as_range(lo, hi) for lo, hi in r.reshape(-1, 2) if np.isfinite(lo)))


def summary_line(title: str, r) -> str:
    """Two lines on a :func:`ratio_grid`: cells bracketed, cells labelled 1.01 or more, cells
    labelled with a range; then the interval certified to hold the largest ratio of the grid, from
    the largest lower end to the largest upper end, to three decimals (rounded down and up), which
    the labels of narrow intervals do not show."""
    import numpy as np

    n = int(np.isfinite(r[..., 0]).sum())
    return (f"{title}: {n} of {r[..., 0].size} bracketed, {n_pays(r)} labelled 1.01 or more, "
            f"{n_ranges(r)} range{'' if n_ranges(r) == 1 else 's'}\n"
            f"  largest ratio certified in [{largest(r, 3)}, {largest_upper(r, 3)}]")
