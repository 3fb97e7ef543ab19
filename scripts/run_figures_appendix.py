"""Paper-scale results for Figure 4 (Section 5.1) and the monotone counterexample of the GitHub appendix.

``run_figures_appendix.py figure4 [options]`` is ``scripts/sweep.py figure4 [options]`` and
``run_figures_appendix.py counterexample [options]`` is ``scripts/sweep.py counterexample [options]``
(the sweep families of :mod:`repro.appendix`, whose docstring says what is computed). ``figure4`` writes
``results/appendix/figure4.json`` (one task per panel), ``counterexample`` writes
``results/appendix/monotone_counterexample.json`` (one task per bound); every file carries provenance::

    nice -n 10 .venv/bin/python scripts/run_figures_appendix.py figure4          # ~1-3 min
    nice -n 10 .venv/bin/python scripts/run_figures_appendix.py counterexample   # ~5 min
"""

import sys

from repro.sweep import main

USAGE = "usage: run_figures_appendix.py {figure4,counterexample} [options]  (options: scripts/sweep.py --help)"

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] in ("figure4", "counterexample"):
        sys.exit(main(args[1:], prog=f"run_figures_appendix.py {args[0]}", families=[args[0]],
                      description=__doc__))
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE + "\n\n" + __doc__.strip())
        sys.exit(0)
    print(USAGE, file=sys.stderr)
    sys.exit(2)
