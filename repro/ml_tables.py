"""Tables 2 and 3 of Selvi, Liu, Wiesemann (Sections 5.2 and 5.3) at a chosen scale: the runner.


For each dataset, ``n_splits`` random 80/20 splits × ``n_sims`` noise simulations of the mechanisms
GN (Gaussian), AG (analytic Gaussian), TLN (truncated Laplace), OPT (data-independent ℓ1-optimised
noise from ``dpdro.optimal_noise``, cached in ``results/ml/opt_noise_eps=1_delta=0.1.json``) and the
non-private method, and the data-dependent "(OPT)" (``repro.experiments.make_data_dependent``: one
``dpdro.data_dependent.upper_bound`` solve per distinct sensitivity-scaled problem, cached with provenance in
``results/ml/dd_mechanisms.json`` and re-certified on load). The output file
``results/ml/table{2,3}_{variant}_{splits}x{sims}.json`` holds, per dataset, the per-split errors
(averaged over simulations) of every mechanism, the table row (mean errors, Imp, t-test) and the
seconds it took, plus provenance (dpdro version, git commit, date, machine, parameters). The file is
rewritten after every dataset, so an interrupted run keeps what it finished; datasets already stored
are skipped unless ``--force``; a stored dataset without the "(OPT)" column gets that column added
(``--no-add-dd`` to skip; ``--redo-dd`` recomputes it): only (OPT) is run, with the same seeds, and merged into the stored per-split
errors (every mechanism's errors are independent of the others run with it; common random numbers).

Usage (CPU is shared: one instance, niced, in the background)::

    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2 --splits 20 --sims 200
    nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 3 --splits 10 --sims 20 --skip adult,spambase
    DPDRO_FULL=1 nice -n 10 .venv/bin/python scripts/run_ml_experiments.py --table 2   # paper: 100 x 1000

``--variant authors`` uses the authors' code settings (``NBSettings.authors()``, Table 2 only).

:func:`run_tables` does the work of ``scripts/run_ml_experiments.py`` (its command line).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import time
from pathlib import Path

import numpy as np

from .datasets import available_datasets, load_dataset, one_hot
from .experiments import (RESULTS_DIR, NBSettings, make_data_dependent, make_mechanisms, optimized_unit_noise,
                          run_naive_bayes, run_pcd, summarize)
from .paths import relative
from .provenance import provenance, read_json, write_json_atomic

__all__ = ["OUT", "OPT_CACHE", "DD_CACHE", "EPSILON", "DELTA", "result_path", "run_one", "run_tables"]

OUT = RESULTS_DIR
OPT_CACHE = OUT / "opt_noise_eps=1_delta=0.1.json"
DD_CACHE = OUT / "dd_mechanisms.json"
EPSILON, DELTA = 1.0, 0.1


def result_path(table: int, variant: str, splits: int, sims: int) -> Path:
    return OUT / f"table{table}_{variant}_{splits}x{sims}.json"


def run_provenance(args, opt_info, dd) -> dict:
    """Provenance of a table run: the common record plus the run's parameters and the noises used."""
    return provenance(epsilon=EPSILON, delta=DELTA, seed=args.seed, n_splits=args.splits, n_sims=args.sims,
                      variant=args.variant, opt_noise=opt_info,
                      data_dependent=dict(mechanism="(OPT): repro.experiments.make_data_dependent (see its module "
                                                    "section for the design)", solves=dd.family.solved))


def run_one(table: int, name: str, mechs, args, *, baseline_run: bool = True):
    ds = load_dataset(name)
    t0 = time.perf_counter()
    if table == 2:
        settings = NBSettings.authors() if args.variant == "authors" else NBSettings()
        res = run_naive_bayes(ds, mechs, n_splits=args.splits, n_sims=args.sims, seed=args.seed, settings=settings,
                              baseline=baseline_run)
        baseline, extra = "NB", dict(n=ds.n, n_num=ds.n_num, n_cat=ds.n_cat, n_classes=ds.n_classes)
    else:
        res = run_pcd(ds, mechs, n_splits=args.splits, n_sims=args.sims, seed=args.seed, baseline=baseline_run)
        baseline, extra = "PCD", dict(n=ds.n, d=one_hot(ds).X.shape[1])
    secs = time.perf_counter() - t0
    if not baseline_run:
        return res, secs
    summary = summarize(res, baseline=baseline)
    per_split = {side: {m: v.tolist() for m, v in res[side].items()} for side in res}
    return dict(dataset=name, **extra, seconds=secs, per_split=per_split, summary=summary)



def run_tables(args: argparse.Namespace) -> None:
    """Compute and store the tables selected by ``args`` (the command line of scripts/run_ml_experiments.py)."""
    names = [d for d in (args.datasets.split(",") if args.datasets else available_datasets()) if d]
    names = [d for d in names if d not in set(args.skip.split(","))]
    noise, opt_info = optimized_unit_noise(EPSILON, DELTA, cache=OPT_CACHE)
    base_mechs = make_mechanisms(EPSILON, DELTA, opt_noise=noise)
    tables = [2, 3] if args.table == "all" else [int(args.table)]
    for table in tables:
        if table == 3 and args.variant == "authors":
            print("table 3 has a single variant (the paper's and the authors' settings agree); using 'paper'")
        variant = "paper" if table == 3 else args.variant
        dd = make_data_dependent(table, EPSILON, DELTA, cache=DD_CACHE)
        mechs = {**base_mechs, "(OPT)": dd}
        vargs = argparse.Namespace(**{**vars(args), "variant": variant})
        path = result_path(table, variant, args.splits, args.sims)
        store = read_json(path) if path.is_file() else {"datasets": {}}
        old_prov = store.get("provenance")
        for name in names:
            if name in store["datasets"] and not args.force:
                row = store["datasets"][name]
                if args.redo_dd:
                    for side in ("in", "out"):
                        row["per_split"][side].pop("(OPT)", None)
                if "(OPT)" in row["per_split"]["in"] or args.no_add_dd:
                    print(f"table {table} {name}: stored, skipped")
                    continue
                res, secs = run_one(table, name, {"(OPT)": dd}, vargs, baseline_run=False)
                for side in ("in", "out"):
                    row["per_split"][side]["(OPT)"] = res[side]["(OPT)"].tolist()
                full = {side: {m: np.asarray(v) for m, v in row["per_split"][side].items()} for side in ("in", "out")}
                row["summary"] = summarize(full, baseline="NB" if table == 2 else "PCD")
                row["seconds_dd"] = secs
                row["dd_added"] = dict(date=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                                       note="(OPT) column added to a stored run (same seeds; other columns unchanged)")
            else:
                row = run_one(table, name, mechs, vargs)
            store["datasets"][name] = row
            store["provenance"] = run_provenance(vargs, opt_info, dd)
            if old_prov is not None and "original_run" in old_prov:
                store["provenance"]["original_run"] = old_prov["original_run"]
            write_json_atomic(path, store)
            e = row["summary"]
            took = f"(OPT) added in {row['seconds_dd']:.1f} s" if "seconds_dd" in row else f"{row['seconds']:.1f} s"
            print(f"table {table} {name}: {took} | in "
                  + " ".join(f"{m}={v:.2f}" for m, v in e["in"]["errors"].items())
                  + f" imp={e['in'].get('imp', float('nan')):.1f} p={e['in'].get('p', float('nan')):.2g}", flush=True)
        print(f"wrote {relative(path)}")

