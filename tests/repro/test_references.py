"""The bibliography as the book's style renders it (``book/_ext/dpdro_pages.py``): every label
reads as an author and a year, or as an entry's shorthand; none is undated or a user name."""

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


def test_labels_are_dated_or_a_shorthand_and_sorted_as_they_read():
    entries = _rendered()
    labels = [label for label, _ in entries]
    assert not [x for x in labels if "n.d." in x]
    assert "Kaggle salary data set" in labels
    assert not [x for x in labels if x[:1].islower()]
    # the shorthand entry is sorted under its label's first letter, among the authors
    k = labels.index("Kaggle salary data set")
    assert all(x[0].upper() <= "K" for x in labels[:k])
    assert all(x[0].upper() >= "K" for x in labels[k + 1:])
    # one address per work: an arXiv entry gives no URL besides its eprint
    selvi = next(text for label, text in entries if label == "Selvi et al., 2024")
    assert selvi.count("2304.12681") == 1
