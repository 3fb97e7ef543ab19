"""The reproduction ledger: validation, upsert by id, sorted stable file, status counts."""

import pytest

from repro import ledger
from repro.ledger import Row


def _row(i="a/1", status="matches", ours=1.0, explanation=""):
    return Row(id=i, chapter="nb", location="Table 1", quantity="q", paper=1.0, ours=ours,
               status=status, scale="ci", explanation=explanation)


def test_record_upserts_and_sorts(tmp_path):
    path = tmp_path / "ledger.csv"
    ledger.record([_row("b/2"), _row("a/1")], path)
    ledger.record([_row("a/1", status="differs", ours=2.0, explanation="grid too coarse")], path)
    rows = ledger.load(path)
    assert [r["id"] for r in rows] == ["a/1", "b/2"]
    assert rows[0]["ours"] == "2" and rows[0]["deviation"] == "1" and rows[0]["status"] == "differs"
    assert ledger.status_counts(rows) == {"matches": 1, "differs": 1, "not reproducible here": 0}
    text = path.read_text()
    ledger.record([_row("b/2")], path)
    assert path.read_text() == text  # rewriting an unchanged row leaves the file byte-identical


def test_record_complete_drops_stale_rows_of_the_chapter(tmp_path):
    """complete=True: a chapter's rows not in the new call disappear; other chapters are untouched."""
    path = tmp_path / "ledger.csv"
    other = Row(id="z/1", chapter="other", location="Table 2", quantity="q", paper=1.0, ours=1.0,
                status="matches", scale="ci")
    ledger.record([_row("a/1"), _row("a/2"), other], path)
    ledger.record([_row("a/2", ours=1.0)], path)  # default: upsert only
    assert [r["id"] for r in ledger.load(path)] == ["a/1", "a/2", "z/1"]
    ledger.record([_row("a/2")], path, complete=True)
    assert [r["id"] for r in ledger.load(path)] == ["a/2", "z/1"]


def test_row_validation():
    with pytest.raises(ValueError, match="status"):
        _row(status="ok")
    with pytest.raises(ValueError, match="explanation"):
        _row(status="differs")
    with pytest.raises(ValueError, match="not reproducible"):
        _row(status="not reproducible here", explanation="no data offline")
    with pytest.raises(ValueError, match="id"):
        _row(i="")
    with pytest.raises(ValueError, match="duplicate"):
        ledger.record([_row(), _row()], "unused.csv")


def test_compare():
    assert ledger.compare(1.0, 1.004, abs_tol=0.005) == "matches"
    assert ledger.compare(1.0, 1.006, abs_tol=0.005) == "differs"
    assert ledger.compare(100.0, 101.0, rel_tol=0.02) == "matches"
    with pytest.raises(TypeError):
        ledger.compare(1.0, None)


def _write_many(args):
    path, prefix = args
    for i in range(30):
        ledger.record([_row(f"{prefix}/{i:02d}")], path)


def test_concurrent_writers_lose_no_rows(tmp_path):
    import multiprocessing as mp

    path = tmp_path / "ledger.csv"
    with mp.get_context("fork").Pool(2) as pool:
        pool.map(_write_many, [(path, "a"), (path, "b")])
    assert len(ledger.load(path)) == 60
