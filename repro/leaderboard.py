"""The leaderboard: the certified gap of every literature mechanism to the optimal noise.

For every stored table cell (``results/tables/cells``, :func:`repro.tables.load_cells`: ε and δ of
the paper's 10 × 10 grid, ℓ1 and ℓ2, Δf = 1) the cell holds a certified lower bound D on the optimal
expected loss. For a mechanism with expected loss E at the same (ε, δ, Δf),

    gap = E/D − 1 ≥ E/OPT − 1,

a certified upper bound on how far the mechanism is from optimal (and dpdro's own gap is the cell's
(P − D)/D). The column ``dpdro`` is the noise stored with each cell (its ``upper``, the loss of
the noise the table sweep released: the better of the LP noise and the truncated Laplace and
staircase mechanisms on a lattice, ``released`` in the cell; Tulap was not among its candidates),
so a literature mechanism can have a smaller loss in a cell (:func:`below_dpdro`). The mechanisms
are those of :func:`dpdro.mechanisms.baselines`: Laplace, Gaussian, analytic Gaussian, truncated
Laplace, staircase and Tulap. A mechanism that is not (ε, δ)-DP at the cell's parameters (the
classical Gaussian calibration beyond ε = 1) is kept with ``valid = False``.
"""

from __future__ import annotations

import math

import numpy as np

from dpdro.mechanisms import BASELINES, baselines, meets_delta

from .tables import load_cells

__all__ = [
    "MECHANISMS",
    "LABELS",
    "leaderboard",
    "leaderboard_grid",
    "leaderboard_summary",
    "below_dpdro",
    "leaderboard_figure",
    "SCALE_PERCENT",
]

MECHANISMS = ("dpdro", *BASELINES)
LABELS = {
    "dpdro": "dpdro (table noise)",
    "laplace": "Laplace",
    "gaussian": "classical Gaussian",
    "analytic_gaussian": "analytic Gaussian",
    "truncated_laplace": "truncated Laplace",
    "staircase": "staircase",
    "tulap": "Tulap",
}
LOSS_LABELS = {"l1": "ℓ1", "l2": "ℓ2"}
# the colour scale of :func:`leaderboard_figure`, in percent: from below the smallest certified gap
# of the stored cells (dpdro's and Tulap's, about a ten-thousandth of a percent at the least) to 10⁴%,
# a hundred times the optimal loss; larger gaps are drawn at its end
SCALE_PERCENT = (1e-4, 1e4)


def leaderboard(cells: dict | None = None) -> list[dict]:
    """One row per (cell, mechanism): loss, epsilon, delta, mechanism, expected_loss, lower, gap,
    valid."""
    cells = load_cells() if cells is None else cells
    rows = []
    for (loss, eps, delta), cell in sorted(cells.items()):
        lower = cell["lower"]
        losses = {"dpdro": (cell["upper"], True)}
        for name, m in baselines(epsilon=eps, delta=delta, loss=loss).items():
            losses[name] = (m.expected_loss(loss), meets_delta(m, delta))
        for name in MECHANISMS:
            value, valid = losses.get(name, (math.nan, False))
            rows.append(
                {
                    "loss": loss,
                    "epsilon": eps,
                    "delta": delta,
                    "mechanism": name,
                    "expected_loss": value,
                    "lower": lower,
                    "gap": value / lower - 1.0,
                    "valid": bool(valid),
                }
            )
    return rows


def leaderboard_grid(rows: list[dict], loss: str, mechanism: str):
    """(epsilons, deltas, gaps) with gaps[i, j] at (epsilons[i], deltas[j]); NaN where missing or
    not valid."""
    mine = [r for r in rows if r["loss"] == loss and r["mechanism"] == mechanism]
    eps = sorted({r["epsilon"] for r in mine})
    deltas = sorted({r["delta"] for r in mine})
    grid = np.full((len(eps), len(deltas)), np.nan)
    for r in mine:
        if r["valid"]:
            grid[eps.index(r["epsilon"]), deltas.index(r["delta"])] = r["gap"]
    return np.array(eps), np.array(deltas), grid


def leaderboard_summary(rows: list[dict]) -> list[dict]:
    """Per loss and mechanism: the median and largest certified gap over the valid cells, the number
    of valid cells, and in how many of them it is the best of the literature mechanisms."""
    out = []
    for loss in sorted({r["loss"] for r in rows}):
        best = {}
        for r in rows:
            if r["loss"] == loss and r["mechanism"] != "dpdro" and r["valid"]:
                key = (r["epsilon"], r["delta"])
                if key not in best or r["gap"] < best[key][1]:
                    best[key] = (r["mechanism"], r["gap"])
        winners = [name for name, _ in best.values()]
        for name in MECHANISMS:
            gaps = np.array(
                [
                    r["gap"]
                    for r in rows
                    if r["loss"] == loss and r["mechanism"] == name and r["valid"]
                ]
            )
            out.append(
                {
                    "loss": loss,
                    "mechanism": name,
                    "cells": int(gaps.size),
                    "median_gap": float(np.median(gaps)) if gaps.size else math.nan,
                    "max_gap": float(np.max(gaps)) if gaps.size else math.nan,
                    "best_baseline_in": winners.count(name),
                }
            )
    return out


def below_dpdro(rows: list[dict], loss: str, mechanism: str) -> list[tuple[float, float, float]]:
    """(ε, δ, excess) of every cell of one loss where a valid ``mechanism`` has a smaller expected
    loss E than the stored dpdro noise's P: excess = P/E − 1 > 0, how much more the stored noise
    costs there."""
    ours = {
        (r["epsilon"], r["delta"]): r["expected_loss"]
        for r in rows
        if r["loss"] == loss and r["mechanism"] == "dpdro"
    }
    out = []
    for r in rows:
        if r["loss"] == loss and r["mechanism"] == mechanism and r["valid"]:
            key = (r["epsilon"], r["delta"])
            if r["expected_loss"] < ours[key]:
                out.append((*key, ours[key] / r["expected_loss"] - 1.0))
    return out


def _cell_ticks(axis, values, every: int = 3, first: int = 0) -> None:
    """A tick mark at every grid cell of a heat-map axis, labelled at every ``every``-th value from
    the ``first``-th, so that each cell can be counted off from a labelled one."""
    axis.set_ticks(range(len(values)), minor=True)
    labelled = range(first, len(values), every)
    axis.set_ticks(labelled, [f"{values[i]:g}" for i in labelled], fontsize=10)


def _decade_label(value: float) -> str:
    """A colour-bar label in percent: the number as written from 0.001 up to 100, a power of ten
    from 1000 on ("$10^{3}$", "$10^{4}$"), so that the large decades share one style."""
    if 1e-3 <= value <= 1e2:
        return f"{value:g}"
    return f"$10^{{{round(math.log10(value))}}}$"


def leaderboard_figure(rows: list[dict], loss: str, columns: int = 3):
    """Heat maps of the certified gap over the (ε, δ) plane for one loss, drawn at the book's column
    width (6.5 in, text at 10 pt): its mechanisms in rows of ``columns`` panels, every cell ticked
    and every third labelled (ε from its second value, so that no label reaches the next panel),
    and a shared logarithmic colour scale in percent (:data:`SCALE_PERCENT`, every decade labelled;
    values outside drawn at its ends, and an arrow at each end of the colour bar beyond which some
    value lies) across the free slots of the last row (below the panels when there are none); cells
    where a mechanism is not (ε, δ)-DP are blank."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    low, high = SCALE_PERCENT
    norm = LogNorm(vmin=low, vmax=high)
    n_rows = -(-len(MECHANISMS) // columns)
    fig, grid_axes = plt.subplots(n_rows, columns, figsize=(6.5, 2.2 * n_rows + 0.2), squeeze=False)
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.08, top=0.95, wspace=0.16, hspace=0.55)
    panels, shown = [], []
    for c, name in enumerate(MECHANISMS):
        ax = grid_axes[c // columns, c % columns]
        panels.append(ax)
        eps, deltas, grid = leaderboard_grid(rows, loss, name)
        shown.append(100 * grid[np.isfinite(grid)])
        image = ax.imshow(
            np.clip(100 * grid.T, low, high), origin="lower", norm=norm, cmap="viridis",
            aspect="auto",
        )
        _cell_ticks(ax.xaxis, eps, first=1)  # the end cells unlabelled: clear of the next panel
        _cell_ticks(ax.yaxis, deltas)
        ax.set_title(LABELS[name], fontsize=10)
        if c % columns == 0:
            ax.set_ylabel("δ", fontsize=10)
        else:
            ax.tick_params(labelleft=False)
        ax.set_xlabel("ε", fontsize=10, labelpad=1)
    values = np.concatenate(shown)
    # an arrow at each end of the colour bar beyond which some gap lies
    extend = {(True, True): "both", (True, False): "min", (False, True): "max"}.get(
        (bool((values < low).any()), bool((values > high).any())), "neither"
    )
    free = [ax for ax in grid_axes.flat if ax not in panels]
    for ax in free:
        ax.set_axis_off()
    if free:  # a horizontal colour bar across the free slots of the last row
        first, last = free[0].get_position(), free[-1].get_position()
        width = last.x1 - first.x0
        cax = fig.add_axes(
            (
                first.x0 + 0.05 * width,
                first.y0 + 0.55 * first.height,
                0.9 * width,
                0.1 * first.height,
            )
        )
        bar = fig.colorbar(image, cax=cax, orientation="horizontal", extend=extend)
    else:
        bar = fig.colorbar(
            image, ax=panels, location="bottom", shrink=0.6, aspect=40, extend=extend
        )
    decades = 10.0 ** np.arange(round(math.log10(low)), round(math.log10(high)) + 1)
    bar.set_ticks(decades, labels=[_decade_label(d) for d in decades])
    bar.set_label(f"{LOSS_LABELS.get(loss, loss)}: certified gap E/D − 1, in %", fontsize=10)
    bar.ax.tick_params(labelsize=10)
    return fig
