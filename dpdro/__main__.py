"""``python -m dpdro``: the command line of :mod:`dpdro.cli`."""

import sys

from .cli import main

sys.exit(main())
