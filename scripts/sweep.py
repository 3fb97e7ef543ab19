#!/usr/bin/env python3
"""The one command for every paper-scale computation: resumable task sweeps on joblib or Dask.

A thin command line over :func:`repro.sweep.main` (``book/full_reproduction.md`` explains it)::

    python scripts/sweep.py list                               # families, tasks done and to run
    python scripts/sweep.py all --dry-run                      # what would run
    python scripts/sweep.py all                                # every family, joblib on all cores
    python scripts/sweep.py tables --jobs 2                    # one family, two processes
    python scripts/sweep.py table3 --datasets adult --scheduler tcp://HOST:8786   # on a Dask cluster
    python scripts/sweep.py all --scale ci --dask              # a tiny instance of everything

Every task writes its own result file (with provenance, atomically); a rerun skips finished tasks, so a
killed run resumes where it stopped; then the aggregate files the chapters read are assembled.
"""

import sys

from repro.sweep import main

if __name__ == "__main__":
    sys.exit(main())
