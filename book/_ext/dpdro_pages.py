"""Sphinx extension of the dpdro book: writes the generated pages when a build starts, and
defines the bibliography style ``dpdro_author_year`` (labels "Selvi et al., 2024", entries sorted by
author and year) that ``_config.yml`` selects, so the list matches the author–year citations.

It also serves ``book/_static/dpdro.css``, which fits 80 characters into the code and output
boxes of the column.

Registered in ``_config.yml`` (``sphinx: local_extensions``). See :mod:`repro.bookpages`: the
status tables come from the notebooks' stored execution metadata and the results' provenance, so
the status page is complete in every build, with or without the execution cache.
"""

from __future__ import annotations

from pathlib import Path

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as _Unsrt
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle as _AuthorYearTitle
from sphinx.util import logging

logger = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent.parent / "_static"


class AuthorYearLabels(BaseLabelStyle):
    """ "Surname, year", "Surname and Other, year" or "Surname et al., year"; a, b, … on clashes."""

    def format_labels(self, sorted_entries):
        labels = []
        for e in sorted_entries:
            people = e.persons.get("author") or e.persons.get("editor") or []
            names = [
                Text.from_latex(" ".join(p.prelast_names + p.last_names)).render_as("text")
                for p in people
            ]
            who = (
                names[0]
                if len(names) == 1
                else f"{names[0]} and {names[1]}"
                if len(names) == 2
                else f"{names[0]} et al."
                if names
                else e.key
            )
            labels.append(f"{who}, {e.fields.get('year', 'n.d.')}")
        seen = {}
        for lab in labels:
            seen[lab] = seen.get(lab, 0) + 1
        count = {}
        for lab in labels:
            if seen[lab] > 1:
                count[lab] = count.get(lab, 0) + 1
                yield lab + "abcdefghijklmnopqrstuvwxyz"[count[lab] - 1]
            else:
                yield lab


class AuthorYearSorting(_AuthorYearTitle):
    """Author, year, title, with the braces of a group author ({The OpenDP Project}) ignored."""

    def person_key(self, person):
        return super().person_key(person).replace("{", "").replace("}", "")


class AuthorYearStyle(_Unsrt):
    default_label_style = "dpdro_author_year"
    default_sorting_style = "dpdro_author_year"


register_plugin("pybtex.style.labels", "dpdro_author_year", AuthorYearLabels)
register_plugin("pybtex.style.sorting", "dpdro_author_year", AuthorYearSorting)
register_plugin("pybtex.style.formatting", "dpdro_author_year", AuthorYearStyle)


def _generate(app) -> None:
    from repro.bookpages import write_generated
    from repro.costs import write_costs
    from repro.landing import status_problems

    for path in [*write_generated(Path(app.srcdir)), write_costs(Path(app.srcdir))]:
        logger.info("dpdro_pages: wrote %s", path)
    for problem in status_problems():  # a landing-page status that its ledger rows contradict
        logger.warning("dpdro_pages: landing page: %s", problem)


def _static(app, config) -> None:
    """Serve ``book/_static`` (the book's stylesheet, ``dpdro.css``) wherever the config lives."""
    config.html_static_path.append(str(STATIC))


def _number_figures_per_page(app, env):
    """Number the figures, tables and code blocks of each unnumbered page from 1 (Sphinx counts
    them across all unnumbered pages, so the ledger's only figure read "Fig. 2"); runs after
    Sphinx has assigned its numbers, returns the pages whose numbers it changed."""
    changed = []
    for docname, types in env.toc_fignumbers.items():
        if env.toc_secnumbers.get(docname):
            continue  # a numbered chapter: "Fig. 7.1", already per chapter
        for figtype, numbers in types.items():
            if any(len(n) != 1 for n in numbers.values()):
                continue
            order = sorted(numbers, key=numbers.get)
            renumbered = {fid: (k,) for k, fid in enumerate(order, start=1)}
            if renumbered != numbers:
                types[figtype] = renumbered
                changed.append(docname)
    return sorted(set(changed))


def setup(app):
    app.connect("config-inited", _static)
    app.connect("builder-inited", _generate)
    # after sphinx.environment.collectors.toctree (priority 500) has numbered the figures
    app.connect("env-get-updated", _number_figures_per_page, priority=900)
    app.add_css_file("dpdro.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
