"""The landing page's generated parts (repro.landing): statuses agree with the ledger, counts come
from the ledger and the chapters' glued values, every template is filled."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from repro import landing, ledger


def _row(item_id, status, explanation="x"):
    return {"id": item_id, "chapter": item_id.split("/")[0], "status": status,
            "explanation": "" if status == "matches" else explanation}


def test_status_problems_catch_a_status_its_rows_contradict():
    items = (landing.Item("Table 4", "reproduced", "r", "22_tables", "Table 4"),
             landing.Item("Table 6", "not reproducible here", "r", "22_tables", "Table 6"),
             landing.Item("Table 5", "partial", "r", "22_tables", "Table 5"),
             landing.Item("Figure 9", "done", "r", "22_tables"))
    rows = [_row("22_tables/table4/l1/a", "matches"),
            _row("22_tables/table4/l1/b", "paper error (proven)"),
            _row("22_tables/table6/l2/a", "paper error (proven)"),
            _row("22_tables/table6/l2/b", "paper error (proven)"),
            _row("22_tables/table6/l2/c", "not reproducible here")]
    problems = landing.status_problems(items, rows)
    assert any("Table 4" in p and "paper error" in p for p in problems)
    assert any("Table 6" in p and "most rows" in p for p in problems)
    assert any("Table 5" in p and "no ledger rows" in p for p in problems)
    assert any("Figure 9" in p and "unknown status" in p for p in problems)


def test_stored_glue_reads_numbers_and_text(tmp_path):
    import json

    def out(name, text):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name}},
                "data": {"application/papermill.record/text/plain": text}}

    nb = {"cells": [{"cell_type": "code", "outputs": [out("n", "60"), out("s", "'0.07%'")]}]}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    assert landing.stored_glue(tmp_path / "a.ipynb") == {"n": 60, "s": "0.07%"}


def test_landing_page_agrees_with_the_ledger():
    """The statuses agree with the stored ledger; the generated page states the ledger's category
    counts and the chapters' glued values, and leaves no template field unfilled."""
    rows = ledger.load()
    if not rows:
        pytest.skip("no ledger stored")
    assert landing.status_problems(rows=rows) == []
    md = landing.glance_markdown(rows=rows)
    assert not re.search(r"\{(c|g\d\d)\[", md)
    for category, n in ledger.category_counts(rows).items():
        assert (f"| *{category}* | {n} |" in md) == (n > 0), category
    counts = landing.item_counts(rows)
    for it in landing.ITEMS:  # the items holding unexplained numbers are named, with their count
        n = counts.get(it.ledger_item, {}).get("unexplained", 0) if it.ledger_item else 0
        assert (f"{n} in {{doc}}`{it.name} </notebooks/{it.chapter}>`" in md) == (n > 0)
    for item, d in landing.item_datasets(rows).items():
        if item in ("Table 2", "Table 3"):
            assert f"{d['run']} of {d['all']} datasets available to us" in md
    for table in ("Table 2", "Table 3"):  # the denominator the chapters use: values we compute
        t = counts[table]
        computed = t["total"] - t["not reproducible here"]
        assert f"{t['matches']} of the {computed} values of {table} that we can compute" in md
    t4 = counts["Table 4"]
    bracket = (f" and {t4['consistent with our bracket']} more are consistent with our certified "
               "bracket" if t4["consistent with our bracket"] else "")
    assert (f"{t4['matches']} of {t4['total']} entries match ours{bracket}; "
            f"in {t4['paper error (proven)']},") in md
    assert not re.search(r"\b0 more\b|\[\[|\]\]", md)
    g22 = landing.stored_glue(landing.NOTEBOOKS / "22_tables.ipynb")
    assert f"in {g22['t4_error']} of the 100 cells of Table 4" in md
    assert f"within 1% in {g22['n_below_1']} of the 200 cells" in md
    statuses = Counter(it.status for it in landing.ITEMS)
    related = sum(it.name.startswith("{cite:t}") for it in landing.ITEMS)
    assert f"Of the {len(landing.ITEMS)} items below ({len(landing.ITEMS) - related} of the " \
           f"paper, {related} of related papers), {statuses['reproduced']} are reproduced" in md


def test_as_math_writes_a_cell_label_in_math():
    assert landing.as_math("ℓ2, ε = 5, δ = 0.75") == "$\\ell_2$, $\\eps = 5$, $\\delta = 0.75$"
    assert landing.as_math("ℓ1, ε = 0.1, δ = 1e-10; x") == (
        "$\\ell_1$, $\\eps = 0.1$, $\\delta = 1e-10$; x")


def test_item_datasets_counts_the_datasets_named_and_those_run():
    rows = [dict(_row("31_naive_bayes/t/a/x", "matches"), location="Table 2, a, in", ours="1"),
            dict(_row("31_naive_bayes/t/a/y", "matches"), location="Table 2, a, out", ours=""),
            dict(_row("31_naive_bayes/t/b/x", "not reproducible here"),
                 location="Table 2, b, in", ours=""),
            dict(_row("22_tables/table4/l1/a", "matches"), location="Table 4", ours="1")]
    assert landing.item_datasets(rows) == {"Table 2": {"all": 2, "run": 1}}


def test_every_item_is_counted_once():
    """No item of the tally only points to others (it would count their status twice), and no
    two items summarise the same ledger item."""
    assert not [it.name for it in landing.ITEMS if it.reason.lower().startswith("see ")]
    named = [it.ledger_item for it in landing.ITEMS if it.ledger_item]
    assert len(named) == len(set(named))


def test_intro_caption_states_the_certified_bracket_of_chapter_21():
    """The landing page's figure caption cannot glue: its bracket must be chapter 21's output."""
    g21 = landing.stored_glue(landing.NOTEBOOKS / "21_example1.ipynb")
    intro = (landing.NOTEBOOKS.parent / "book" / "intro.md").read_text()
    assert f"certified to lie in {g21['ex1_exact']} INR" in " ".join(intro.split())


def _stored_glue():
    return {f"g{name[:2]}": landing.stored_glue(landing.NOTEBOOKS / f"{name}.ipynb")
            for name in ("21_example1", "22_tables", "32_coordinate_descent", "91_findings")}


def test_a_clause_whose_count_is_zero_is_dropped():
    """An optional clause ``[[…]]`` is kept only when every count it states is positive."""
    rows = [_row("22_tables/table1/l1/a", "matches"), _row("22_tables/table1/l1/b", "matches")]
    item = landing.Item("Table 1", "reproduced",
                        "{c[matches]} of {c[total]} match[[ and {c[consistent with our bracket]} "
                        "more are consistent]]", "22_tables", "Table 1")
    md = landing.glance_markdown(items=(item,), rows=rows, glue=_stored_glue())
    assert "| 2 of 2 match |" in md
    assert "| *matches* | 2 |" in md and "*unexplained*" not in md
    rows.append(dict(_row("22_tables/table1/l1/c", "matches"),
                     explanation=f"{ledger.BRACKET}: within 1%"))
    md = landing.glance_markdown(items=(item,), rows=rows, glue=_stored_glue())
    assert "| 2 of 3 match and 1 more are consistent |" in md


def test_an_item_counts_only_the_rows_it_selects():
    """Example 1 counts its values at the rounded sensitivity: one in our bracket is not a match."""
    rows = [_row("21_example1/std/Gaussian", "differs"),
            _row("21_example1/std/Gaussian/df=0.36", "matches"),
            dict(_row("21_example1/std/optimised/df=0.36", "matches"),
                 explanation=f"{ledger.BRACKET}: [257.666, 257.680]"),
            _row("21_example1/adversary/L_min", "matches")]
    item = next(it for it in landing.ITEMS if it.name == "Example 1")
    md = landing.glance_markdown(items=(item,), rows=rows, glue=_stored_glue())
    assert ("of the 2 values, our reconstruction at $0.36$ matches 1 and places 1 in our "
            "certified bracket for the optimum;") in md


def test_chapter_numbers_follow_the_rendered_numbering():
    """The numbered parts' chapters count on from part to part; every link written as
    "chapter N" in a chapter, a page or the landing page's templates names its chapter's number."""
    numbers = landing.chapter_numbers()
    assert numbers["01_quickstart"] == 1 and numbers["22_tables"] == 13
    assert "91_findings" not in numbers and "90_ledger" not in numbers
    texts = [Path(landing.__file__).read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in (landing.ROOT / "book").glob("*.md")]
    for p in landing.NOTEBOOKS.glob("*.ipynb"):
        nb = json.loads(p.read_text(encoding="utf-8"))
        texts += ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    links = [m for t in texts for m in re.findall(r"\{doc\}`chapter (\d+) <([^>]+)>`", t)]
    assert links  # chapter 05 cites chapter 13 this way
    for n, target in links:
        assert int(n) == numbers[Path(target).name], (n, target)
    # the landing page names chapters by their titles
    glance = landing.glance_markdown()
    assert "{doc}`Tables 1, 4–6 </notebooks/22_tables>`, {ref}`finding 3" in glance


def test_intro_states_the_synthetic_parts_statuses_as_the_table_files_them():
    """The "How to read this book" bullet of the synthetic part names the items that the table
    files as not reproducible, partial or corrected, exactly as :func:`part_statuses` reads them."""
    chapters = ("21_example1", "22_tables", "23_figure3", "24_figures4_5", "25_github_appendix")
    phrase = landing.part_statuses(chapters)
    assert phrase.startswith("Table 6 cannot be reproduced; ")
    intro = " ".join((landing.ROOT / "book" / "intro.md").read_text(encoding="utf-8").split())
    assert f"As the table above files them, {phrase}." in intro


def test_part_statuses_group_figures_and_tables():
    items = (landing.Item("Figure 3", "partial", "r", "a"),
             landing.Item("Figure 4", "partial", "r", "a"),
             landing.Item("Table 1", "partial", "r", "a"),
             landing.Item("Table 6", "not reproducible here", "r", "a"),
             landing.Item("Example 1", "reproduced after a correction", "r", "a"),
             landing.Item("Figure 2", "reproduced", "r", "a"),
             landing.Item("Figure 9", "partial", "r", "b"))
    assert landing.part_statuses(("a",), items) == (
        "Table 6 cannot be reproduced; Figures 3 and 4 and Table 1 only in part; "
        "Example 1 after a correction")


def test_finding_2_names_its_stored_partition():
    """Finding 2 names the partition by the stored file's cells and problem, not "stored"."""
    import json as _json

    stored = _json.loads((landing.RESULTS / "findings" / "corollary1.json").read_text())
    p = stored["problem"]
    text = landing.finding2_partition()
    assert f"{stored['cells']:,} cells" in text
    assert f"$\\eps = {p['epsilon']:g}$, $\\delta = {p['delta']:g}$" in text
    md = landing.glance_markdown()
    assert f"On {text}, the cell masses" in md and "stored partition" not in md
