"""Counterexample: the paper's D(π, β) on a non-uniform partition is not a valid lower bound, and
dpdro's cell-union relaxation, which replaces it, is.

A thin command line over :func:`repro.counterexamples.check` (its module docstring has the instance,
the three steps and why the paper's version fails). Run:
``python scripts/check_nonuniform_lower_bound.py`` (a few minutes).
"""

from __future__ import annotations

import argparse

from repro import counterexamples


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    counterexamples.check()


if __name__ == "__main__":
    main()
