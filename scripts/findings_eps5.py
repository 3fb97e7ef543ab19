#!/usr/bin/env python3
"""Store the paper's own uniform lower bound D(L, β) at ε = 5 for the "Findings and errata" chapter.

    .venv/bin/python scripts/findings_eps5.py [--deltas 0.005,0.01] [--k 128]
    .venv/bin/python scripts/findings_eps5.py --exact 0.005 [--k 128]

For each δ, solves D(L, β) with the paper's cell-infimum coefficients (no rounding) at β = 1/k on
[−2, 2] (:func:`repro.findings.eps5_cell_infimum_bound`, about 2.5 minutes per δ at k = 128 on a
shared 2-core machine) and writes ``results/findings/eps5_cell_infimum.json`` with provenance,
next to the optimum O implied by the paper's Table 4. ``--exact DELTA`` instead re-solves one δ and
evaluates its dual certificate in exact rational arithmetic
(:func:`repro.findings.eps5_exact_certificate`, a few minutes), stored in the same file under
``exact_certificate`` (the other entries are kept).
"""

from __future__ import annotations

import argparse
import time

from repro import findings
from repro.provenance import provenance, read_json, write_json_atomic


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deltas", default="0.005,0.01,0.02")
    ap.add_argument("--k", type=int, default=128)
    ap.add_argument("--exact", type=float, default=None, help="certify this delta exactly")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    paper_o = findings.eps5_paper_optimum()
    if args.exact is not None:
        data = read_json(findings.EPS5)
        r = findings.eps5_exact_certificate(args.exact, args.k)
        r["paper_O"] = paper_o[args.exact]
        r["provenance"] = provenance(time.perf_counter() - t0)
        print(f"delta={args.exact:g}: exact bound {r['exact_bound_float']:.6f} "
              f"(float {r['float_bound']:.6f}), paper's O = {r['paper_O']:.6f}", flush=True)
        data["exact_certificate"] = r
        write_json_atomic(findings.EPS5, data)
        return
    rows = []
    for d in (float(x) for x in args.deltas.split(",")):
        r = findings.eps5_cell_infimum_bound(d, args.k)
        r["paper_O"] = paper_o[d]
        print(f"delta={d:g}: D(L, 1/{args.k}) = {r['lower']:.6f}, paper's O = {r['paper_O']:.6f} "
              f"({r['seconds']:.0f} s)", flush=True)
        rows.append(r)
    write_json_atomic(findings.EPS5, {
        "what": "The paper's uniform D(L, beta) with cell-infimum coefficients (Section 2, no rounding) at "
                "eps = 5, Delta f = 1, l1 loss, against the optimum O implied by the paper's Table 4.",
        "rows": rows, "provenance": provenance(time.perf_counter() - t0)})


if __name__ == "__main__":
    main()
