"""Where optimal noise pays: best closed form / certified optimum over the (ε, δ) plane.

A thin command line over :mod:`repro.where_it_pays` (the method is in its docstring): for ℓ1, ℓ2,
the asymmetric loss and one-sided ℓ1 noise, at every ε × δ of the grid, the exact expected loss of
the best certified closed-form noise and the bracket of ``dpdro.optimal_noise(problem,
rel_gap=1e-3, time_limit=20)``, written to results/where_it_pays.json with provenance after every
cell; cells already stored are skipped, so a killed run resumes. Deterministic (no random numbers),
but a cell that hits the time limit depends on the machine's load. Chapter "Where optimal noise
pays" loads the file. About twenty minutes (21 min on this shared machine):

    nice -n 15 .venv/bin/python scripts/where_it_pays.py

``--refresh-closed`` recomputes only the closed forms and ratios of the stored cells (seconds; the
stored run was solved first, then refreshed so that the asymmetric loss also has the shifted closed
forms); ``--redo`` re-solves cells already stored.
"""

from __future__ import annotations

import argparse
import os

from repro import where_it_pays as wip
from repro.provenance import provenance, read_json, write_json_atomic


def _floats(text: str | None, default: tuple) -> tuple:
    return default if text is None else tuple(float(x) for x in text.split(","))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--settings", default=None, help="comma-separated subset of " + ",".join(wip.SETTINGS)
    )
    ap.add_argument("--epsilons", default=None, help="comma-separated ε (default: the grid)")
    ap.add_argument("--deltas", default=None, help="comma-separated δ (default: the grid)")
    ap.add_argument("--redo", action="store_true", help="recompute cells already stored")
    ap.add_argument(
        "--refresh-closed",
        action="store_true",
        help="recompute only the closed forms and ratios of stored cells (no solve)",
    )
    ap.add_argument("--out", default=str(wip.OUT), help="output file")
    args = ap.parse_args(argv)
    settings = wip.SETTINGS if args.settings is None else tuple(args.settings.split(","))
    epsilons = _floats(args.epsilons, wip.EPSILONS)
    deltas = _floats(args.deltas, wip.DELTAS)

    stored = read_json(args.out) if os.path.exists(args.out) else {}
    cells = stored.get("cells", {})
    command = "where_it_pays.py" + "".join(
        f" --{k.replace('_', '-')}" + ("" if v is True else f" {v}")
        for k, v in vars(args).items()
        if v not in (None, False) and k != "out"
    )
    # a refresh keeps the record of the run that solved the cells
    extra = {"solved_by": stored.get("provenance")} if args.refresh_closed else {}

    def write() -> None:
        doc = {
            "settings": {
                "rel_gap": wip.REL_GAP,
                "time_limit": wip.TIME_LIMIT,
                "sensitivity": 1.0,
                "epsilons": list(wip.EPSILONS),
                "deltas": list(wip.DELTAS),
                "settings": list(wip.SETTINGS),
            },
            "cells": cells,
            "provenance": provenance(
                sum(c["seconds"] for c in cells.values()),
                command,
                loadavg=list(os.getloadavg()),
                **extra,
            ),
        }
        write_json_atomic(args.out, doc, indent=None)

    for setting in settings:
        for eps in epsilons:
            for delta in deltas:
                key = wip.cell_key(setting, eps, delta)
                if args.refresh_closed:
                    if key in cells:
                        cells[key] = wip.refresh_closed(cells[key])
                elif args.redo or key not in cells:
                    cells[key] = wip.map_cell(setting, eps, delta)
                    cells[key]["loadavg_1min"] = round(os.getloadavg()[0], 2)
                    write()
    if args.refresh_closed:
        write()


if __name__ == "__main__":
    main()
