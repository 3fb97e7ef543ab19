#!/usr/bin/env python3
"""Store the paper's non-uniform D(π, β) on the stored 643-cell partition for the "Findings and
errata" chapter (finding 2, Corollary 1).

    .venv/bin/python scripts/findings_corollary1.py

Solves the paper's D(π, β) of Section 4.1 on the partition of
``results/counterexamples/nonuniform_partition.json`` (ε = 5, δ = 0.01, Δf = 1, ℓ1; about three
minutes on a shared 2-core machine; :func:`repro.findings.corollary1_paper_bound`) and writes
``results/findings/corollary1.json`` with provenance. Run it from a clean checkout, so the commit
in the provenance pins the code.
"""

from __future__ import annotations

import argparse
import time

from repro import findings
from repro.provenance import provenance, write_json_atomic


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    t0 = time.perf_counter()
    r = findings.corollary1_paper_bound()
    r["what"] = ("The paper's D(pi, beta) (Section 4.1) on the stored non-uniform partition: a "
                 "dual-feasible value of the LP with each wide cell's mass spread uniformly.")
    r["provenance"] = provenance(time.perf_counter() - t0)
    write_json_atomic(findings.COROLLARY1, r)
    print(f"paper's D(pi, beta) = {r['paper_D']:.6f} ({r['seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
