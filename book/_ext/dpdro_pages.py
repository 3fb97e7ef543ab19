"""Sphinx extension of the dpdro book: writes the generated pages when a build starts.

Registered in ``_config.yml`` (``sphinx: local_extensions``). See :mod:`repro.bookpages`: the
status tables come from the notebooks' stored execution metadata and the results' provenance, so
the status page is complete in every build, with or without the execution cache.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)


def _generate(app) -> None:
    from repro.bookpages import write_generated

    for path in write_generated(Path(app.srcdir)):
        logger.info("dpdro_pages: wrote %s", path)


def setup(app):
    app.connect("builder-inited", _generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
