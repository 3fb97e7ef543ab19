"""The bibliography as the book's style renders it (``book/_ext/dpdro_pages.py``): every label
reads as an author (a person, a team or a publisher) and a year; no work gives its address twice."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rendered() -> list[tuple[str, str]]:
    pytest.importorskip("pybtex")
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import dpdro_pages  # noqa: F401  (registers the style)
    finally:
        sys.path.pop(0)
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    style = find_plugin("pybtex.style.formatting", "dpdro_author_year")()
    bib = parse_file(str(ROOT / "book" / "references.bib"))
    return [(e.label, e.text.render_as("text")) for e in style.format_bibliography(bib)]


def test_labels_read_as_authors_and_each_work_has_one_address():
    entries = _rendered()
    labels = [label for label, _ in entries]
    assert not [x for x in labels if x[:1].islower()]  # no user name as an author
    assert "Kaggle, n.d." in labels  # the data set's page gives no date
    kaggle = next(text for label, text in entries if label == "Kaggle, n.d.")
    assert "date" not in kaggle  # the label says it; the citing text says how the book uses it
    for label, cited in (("Geng and Viswanath, 2016b", "2014"),
                         ("Geng and Viswanath, 2016a", "2015")):
        text = next(text for lab, text in entries if lab == label)
        assert f"cite it as Geng and Viswanath ({cited})" in text  # the paper's citation years
    selvi = next(text for label, text in entries if label == "Selvi et al., 2024")
    assert selvi.count("2304.12681") == 1
    assert "follows the 2024 version" in selvi
    assert not [text for _, text in entries if "Version 1.0.4" in text and "2020" in text]
