"""repro: the reproduction layer of the dpdro book (not part of the installed ``dpdro`` package).

Everything here serves the chapters in ``notebooks/`` and the command-line wrappers in ``scripts/``:
the offline datasets and their loaders, the machine-learning experiments, the reproduction ledger,
provenance and atomic writes of stored results, the arithmetic of the paper's tables and figures,
geo-DP and purification helpers, and brute-force reference implementations shared by the tests and
the chapters. Repository paths have one home, :mod:`repro.paths`.

It works from a checkout of the repository (``pip install -e ./repro``, done by ``tasks.py``); the
method itself is ``dpdro``, which ``repro`` imports and never the other way round. Import the
submodules you need (``from repro import ledger``); this package imports nothing eagerly.
"""
