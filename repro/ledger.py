"""The reproduction ledger: one row per paper number we recompute, kept in ``results/ledger.csv``.

Notebooks call :func:`record` with the rows they compute; a row is keyed by its ``id`` (unique
across the book, e.g. ``"table4/l1/eps=1/delta=0.2"``), so re-running a notebook replaces its rows
instead of appending duplicates. The file is sorted by ``id`` so that it only changes when a value
changes. :func:`compare` turns a paper value and ours into a deviation and a status.

Statuses
--------
``matches``
    our value agrees with the paper's within the stated tolerance;
``differs``
    it does not; the row's ``explanation`` must say why as far as we know;
``not reproducible here``
    the number cannot be recomputed from what the book includes (e.g. a public dataset that the
    book does not bundle, having no redistributable copy); ``ours`` is empty.

A chapter may also record one of the finer categories below directly, with the evidence in the
explanation (chapters ``21_example1`` and ``22_tables`` do so for every row: their categories follow
from computed evidence, not from phrases). The rendered ledger (``notebooks/90_ledger.ipynb``) shows
every row in one of the :data:`CATEGORIES`, assigned by :func:`classify` from the recorded status and,
for a ``differs`` row, the chapter's explanation:

``matches``; ``paper error (proven)``
    the paper's number is wrong, shown by a certificate: a certified noise that beats a claimed
    optimum, a valid lower bound above a claimed value, an exact computation, an algebraic slip.
    The explanation says how sure: "certified by computation" (floating-point certificates rounded
    in the safe direction, or exact arithmetic) or a proof a reader can check by hand;
``ambiguous in the paper``
    the paper leaves a choice open (a benchmark, a rounding, the settings of an experiment) and our
    reconstruction of that choice reproduces the number; the explanation says in how many of the
    comparable numbers ("reconstruction matches k of n") or which setting brings the number within
    the chapter's tolerance;
``consistent with the paper's bound``
    the paper states a bound, ours is the exact value and lies within it;
``consistent with our bracket``
    a value that lies within our certified bracket for the optimum it reports: a synthetic-table
    entry (Tables 1, 4, 5, 6) that differs from ours by more than the printed precision but by no
    more than the paper's own 1% optimality gap allows, or an optimised value (Example 1) inside
    the bracket (the tolerance is in the explanation, :data:`BRACKET`); counted apart from
    ``matches``;
``consistent (qualitative)``
    the paper makes a qualitative statement (no number printed) and ours, a number, agrees with
    it in the sense the explanation states; counted apart from the numeric ``matches``;
``contradicted (qualitative)``
    the paper makes a qualitative statement that rests on a judgement word ("negligible",
    "substantial") and a certificate of ours contradicts it in the sense the explanation states
    (e.g. a certified difference of several percent called negligible, where the paper calls a
    comparable one substantial); the paper's entry is the statement, quoted briefly;
``reduced scale``
    a stochastic or iterative experiment run with less effort than the paper's, or stopped at a
    time limit per solve where the paper states none;
``data differs``
    the public dataset we use differs from the paper's (rows, columns);
``unexplained``
    none of the above explains the difference; in particular a stochastic experiment run at the
    paper's scale whose number differs, with no setting found that reproduces it;
``not reproducible here``
    the paper's number cannot be recomputed from what the paper, its appendices and the authors'
    code specify (e.g. an unstated benchmark that no candidate reproduces), or it depends on a
    commercial solver, or on data that the paper does not publish or that the book does not include
    (a public dataset with no redistributable copy); ``ours`` is empty.

One more recordable status is not a category: ``derived (not counted)`` (:data:`DERIVED`) marks a
row whose paper value the paper does not print but that follows from other rows (e.g. the
difference of two printed numbers). It is listed with its explanation but left out of every tally
(:func:`counted`, :func:`category_counts`), so that one error of the paper is not counted twice.

The file keeps each row's text as the chapter recorded it; the book shows it through
:func:`in_words` and :func:`prose_html` (the paper's notation, no file paths or code names).
"""

from __future__ import annotations

import contextlib
import csv
import html
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .paths import LEDGER as LEDGER_PATH

__all__ = ["BRACKET", "CATEGORIES", "CATEGORY_COLOURS", "COLUMNS", "DERIVED", "ITEMS", "STATUSES",
           "LEDGER_PATH", "Row", "category_counts", "classify", "compare", "counted", "in_words",
           "paper_item", "prose_html", "shared_opening", "after_opening",
           "record", "load", "status_counts", "shown_number", "shown_values", "UPPER_LIMIT"]

COLUMNS = ("id", "chapter", "location", "quantity", "paper", "ours", "deviation", "status", "scale", "explanation")
STATUSES = ("matches", "differs", "not reproducible here")
CATEGORIES = ("matches", "paper error (proven)", "ambiguous in the paper",
              "consistent with the paper's bound", "consistent with our bracket",
              "consistent (qualitative)", "contradicted (qualitative)", "reduced scale",
              "data differs", "unexplained", "not reproducible here")
DERIVED = "derived (not counted)"
# how the explanation of a ``matches`` row of the synthetic tables begins when the entries agree only
# within the tolerance the paper's 1% optimality gap allows (repro.table_verdicts)
BRACKET = "Consistent with our certified bracket"
# one colour per category, for every page that colours rows or cells by category (light, so that
# black text stays readable on them)
CATEGORY_COLOURS = {"matches": "#c7e9c0", "paper error (proven)": "#fcbba1",
                    "ambiguous in the paper": "#c6dbef", "consistent with the paper's bound": "#deebf7",
                    "consistent with our bracket": "#fff7bc",
                    "consistent (qualitative)": "#e5f5e0",
                    "contradicted (qualitative)": "#fde0ef", DERIVED: "#f5f5f5",
                    "reduced scale": "#fdd0a2", "data differs": "#dadaeb", "unexplained": "#fb6a4a",
                    "not reproducible here": "#e0e0e0"}
_RECORDABLE = tuple(dict.fromkeys(STATUSES + CATEGORIES + (DERIVED,)))
SCALES = ("ci", "reduced", "paper", "exact")


@dataclass(frozen=True)
class Row:
    """One reproduced number.

    id : unique key, e.g. ``"table4/l1/eps=1/delta=0.2"``.
    chapter : the notebook that computes it (file stem, e.g. ``"22_tables"``).
    location : where it is in the paper, e.g. ``"Table 4, row ε=1, column δ=0.2"``.
    quantity : what it is, e.g. ``"suboptimality of truncated Laplace (%)"``.
    paper, ours : the paper's value and ours (``ours`` is ``None`` when not reproducible here).
    status : one of :data:`STATUSES`.
    scale : ``"ci"`` (the notebook's quick default), ``"reduced"`` (a stored run below the paper's
        scale, e.g. fewer splits × simulations, stated in the explanation), ``"paper"`` (full scale,
        possibly loaded from ``results/``) or ``"exact"`` (no scale involved, e.g. a closed form).
    explanation : required for every status other than ``matches``.
    deviation : ours − paper (absolute), computed by :func:`compare` unless given.
    """

    id: str
    chapter: str
    location: str
    quantity: str
    paper: float | str
    ours: float | str | None
    status: str
    scale: str
    explanation: str = ""
    deviation: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip() or "\n" in self.id:
            raise ValueError(f"ledger id must be a non-empty one-line string, got {self.id!r}")
        if self.status not in _RECORDABLE:
            raise ValueError(f"ledger status must be one of {_RECORDABLE}, got {self.status!r} (id {self.id!r})")
        if self.scale not in SCALES:
            raise ValueError(f"ledger scale must be one of {SCALES}, got {self.scale!r} (id {self.id!r})")
        if self.status != "matches" and not self.explanation.strip():
            raise ValueError(f"ledger row {self.id!r} has status {self.status!r} but no explanation")
        if self.status == "contradicted (qualitative)" and not _is_statement(self.paper):
            raise ValueError(f"ledger row {self.id!r} is 'contradicted (qualitative)' but the paper's "
                             f"entry {self.paper!r} is not a statement in words")
        if self.status == "not reproducible here" and self.ours is not None:
            raise ValueError(f"ledger row {self.id!r} is 'not reproducible here' but has a value ours={self.ours!r}")

    def as_dict(self) -> dict[str, str]:
        dev = self.deviation
        if dev is None and _is_number(self.paper) and _is_number(self.ours):
            # the difference of the stored (6-digit) values: floating-point noise in the last bits of
            # ``ours`` (another BLAS, another optimiser path) does not rewrite the file
            dev = float(_fmt(self.ours)) - float(_fmt(self.paper))
        return {"id": self.id, "chapter": self.chapter, "location": self.location, "quantity": self.quantity,
                "paper": _fmt(self.paper), "ours": _fmt(self.ours), "deviation": _fmt(dev),
                "status": self.status, "scale": self.scale, "explanation": self.explanation.strip()}


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(float(x))


def _fmt(x) -> str:
    if x is None:
        return ""
    if _is_number(x):
        return f"{float(x):.6g}"
    return str(x)


def compare(paper: float, ours: float, *, rel_tol: float = 0.0, abs_tol: float = 0.0) -> str:
    """``"matches"`` when |ours − paper| ≤ max(rel_tol·|paper|, abs_tol), else ``"differs"``.

    Choose the tolerance from the precision the paper prints (e.g. ``abs_tol=0.005`` for a value
    printed with two decimals) and say so in the row's explanation when it is not obvious.
    """
    if not (_is_number(paper) and _is_number(ours)):
        raise TypeError(f"compare needs two finite numbers, got paper={paper!r}, ours={ours!r}")
    if rel_tol < 0 or abs_tol < 0:
        raise ValueError(f"tolerances must be >= 0, got rel_tol={rel_tol}, abs_tol={abs_tol}")
    return "matches" if abs(ours - paper) <= max(rel_tol * abs(paper), abs_tol) else "differs"


def load(path: str | Path = LEDGER_PATH) -> list[dict[str, str]]:
    """All rows of the ledger (empty list when the file does not exist yet), sorted by id."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path} has columns {reader.fieldnames}, expected {list(COLUMNS)}")
        return sorted(reader, key=lambda r: r["id"])


def record(rows, path: str | Path = LEDGER_PATH, *, complete: bool = False) -> list[dict[str, str]]:
    """Insert or replace ``rows`` (an iterable of :class:`Row`) by id, write the file, return the new rows.

    ``complete=True`` says that ``rows`` are *all* the rows of their chapters: rows of those chapters
    not among them (e.g. of table cells no longer computed) are removed, so stale values cannot linger.
    The write is atomic (temporary file + rename) and the file stays sorted by id.
    """
    rows = list(rows)
    ids = [r.id for r in rows]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate ledger ids in one call: {dup}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = [r.as_dict() for r in rows]
    with _locked(path):  # read-modify-write under a lock: concurrent notebooks cannot lose rows
        chapters = {r["chapter"] for r in new} if complete else set()
        table = {r["id"]: r for r in load(path) if r["chapter"] not in chapters}
        table.update({r["id"]: r for r in new})
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
            writer.writeheader()
            for key in sorted(table):
                writer.writerow(table[key])
        tmp.replace(path)
    return new


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive advisory lock on ``path.lock`` (POSIX ``flock``; no locking where unavailable)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path.with_name(path.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def status_counts(rows=None) -> dict[str, int]:
    """Number of ledger rows per recorded status (every status of :data:`STATUSES` listed, zeros
    included; a finer category recorded directly is counted under its own name)."""
    rows = load() if rows is None else rows
    counts = {s: 0 for s in STATUSES}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


# ------------------------------------------------------------------------------------ categories
# (category, phrases of a chapter's explanation that place a "differs" row in it), tried in order.
_RULES = (
    ("paper error (proven)", (
        "typo in the paper",                       # an algebraic slip, shown by the displayed set
        "so 0.1705 is not optimal",                # a certified noise beats the claimed optimum
        "cannot be a valid lower bound",           # a certified noise lies below the claimed bound
        "so it is not the optimum",                # a certified achievable cost below the claim
        "the correct calibration is",              # the drawn σ has another δ (exact profile)
    )),
    ("consistent with the paper's bound", ("is a valid but loose bound", "theorem 1 is an upper bound")),
    ("not reproducible here", ("gurobi",)),        # runtimes on the authors' machine and solver
    ("ambiguous in the paper", (
        "rounding='up'",                           # the unspecified near-optimal lower bound (Figure 3)
        "exact laplace variant and optimiser are not stated",
    )),
    ("data differs", ("rows (paper", "columns (paper")),
)
_SCALE = re.compile(r"(\d+) splits? x (\d+) sims \(paper (\d+) x (\d+)\)")


def _is_statement(value) -> bool:
    """Whether the paper's entry of a row is a statement in words (a non-empty text that is not a
    number), not a printed value."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def classify(row: dict) -> str:
    """The :data:`CATEGORIES` entry of one ledger row (a dict as returned by :func:`load`).

    A row recorded with a finer category (or :data:`DERIVED`) keeps it; ``matches`` is kept for a
    number the paper prints and is ``consistent (qualitative)`` where the paper's entry is a
    statement, not a number, and ``consistent with our bracket`` where its explanation begins with
    :data:`BRACKET`; ``not reproducible here`` is kept. A ``differs`` row is placed by the phrases
    of its explanation (``_RULES``), then ``reduced scale`` where it states fewer splits ×
    simulations than the paper's, and is ``unexplained`` otherwise: a stochastic experiment at the
    paper's scale that misses the paper's number is not explained by its scale. A chapter that has
    a reading or setting reproducing the number within its tolerance records ``ambiguous in the
    paper`` itself, with that setting in the explanation, and one whose certificate contradicts a
    statement of the paper records ``contradicted (qualitative)`` itself.
    """
    status = row["status"]
    if status == "matches" and _is_statement(row.get("paper")):
        return "consistent (qualitative)"
    if status == "matches" and row.get("explanation", "").startswith(BRACKET):
        return "consistent with our bracket"
    if status != "differs":
        return status
    text = row.get("explanation", "").lower()
    for category, phrases in _RULES:
        if any(p in text for p in phrases):
            return category
    m = _SCALE.search(text)
    if m:
        splits, sims, p_splits, p_sims = map(int, m.groups())
        if splits * sims < p_splits * p_sims:
            return "reduced scale"
    return "unexplained"


# id prefix -> paper item, in the order of the paper (a longer prefix before a shorter one)
_ITEMS = (
    ("21_example1", "Example 1"),
    ("22_tables/table1/", "Table 1"),
    ("22_tables/table4/", "Table 4"),
    ("22_tables/table5/", "Table 5"),
    ("22_tables/table6/", "Table 6"),
    ("22_tables", "Section 5.1 (text)"),
    ("23_figure3", "Figure 3"),
    ("24_figures4_5/monotone", "Figure 4"),
    ("24_figures4_5/intervals", "Figure 5"),
    ("25_github_appendix", "GitHub appendix"),
    ("31_naive_bayes", "Table 2"),
    ("32_coordinate_descent", "Table 3"),
    ("41_purification", "Related: purification (Lin et al.)"),
    ("42_private_lp", "Related: private LP (Muñoz Medina et al.)"),
    ("43_multiple_selections", "Related: multiple selections (Goel et al.)"),
)
#: The paper items of :func:`paper_item`, in the order of the paper (the book's tables list them so).
ITEMS = tuple(dict.fromkeys(item for _, item in _ITEMS))


def paper_item(row: dict) -> str:
    """The paper item a row belongs to (e.g. ``"Table 5"``), from its id."""
    for prefix, item in _ITEMS:
        if row["id"].startswith(prefix):
            return item
    return row["chapter"]


# How a row says that the paper's value is a bound, not a value (its quantity), and that our value
# has no meaning in our run (its explanation, as written by repro.experiments.reports for an Imp
# whose gap is not measurably positive, which uses NO_MEANING).
#: The phrase a timing row's quantity ends with where the paper's time is an upper limit ("all
#: solved within 2.2 secs", "it took up to 5.82 secs"): its deviation is a dash.
UPPER_LIMIT = "the paper's time is an upper limit"
_BOUND_MARKERS = ("paper: more than", "paper: <", UPPER_LIMIT)
NO_MEANING = "has no meaning"


def _decimals(printed: str) -> int | None:
    """Digits after the point of a value as the paper prints it (``"4.70"`` → 2, ``"700"`` → 0);
    ``None`` where it is not a plain decimal number (words, an exponent)."""
    m = re.fullmatch(r"\s*[-+]?\d+(?:\.(\d*))?\s*", str(printed))
    return None if m is None else len(m.group(1) or "")


def shown_number(value: str, paper: str) -> str:
    """A recorded number (ours or the deviation) at the precision the paper prints its value,
    trailing zeros kept (``"301"`` against ``"300.96"`` → ``"301.00"``), with at least two
    significant digits (``0.0297`` against ``"0.28"`` → ``"0.030"``), and a minus sign; four
    significant digits where the paper's entry is not a plain decimal, two in exponent form
    (``5e-07`` against ``"1e-06"`` → ``"5.0e−07"``). A value that is not a number (words, empty)
    is returned as it is."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return value
    if not math.isfinite(x):
        return value
    places = _decimals(paper)
    if places is None:
        text = f"{x:#.4g}".rstrip(".")
        text = f"{x:.1e}" if "e" in text else text
    else:
        if x:
            places = max(places, 1 - math.floor(math.log10(abs(x))))
        text = f"{x:.{places}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def shown_values(row: dict) -> tuple[str, str]:
    """``(ours, deviation)`` of a ledger row (a dict as returned by :func:`load`) as the ledger page
    shows them, ``""`` for a dash; the file keeps the recorded numbers.

    The deviation (ours − paper) is shown only where the paper prints a value: a dash where the
    paper states a bound (``consistent with the paper's bound``, or a quantity marked as a bound,
    e.g. "paper: < 1"; the explanation says on which side ours lies). Where the explanation says
    that our value has no meaning (an Imp of Tables 2 and 3 whose gap is not measurably positive),
    both are dashes. Numbers are shown by :func:`shown_number`, at the paper's printed precision.
    """
    if NO_MEANING in row.get("explanation", ""):
        return "", ""
    bound = (classify(row) == "consistent with the paper's bound"
             or any(m in row.get("quantity", "") for m in _BOUND_MARKERS))
    paper = row.get("paper", "")
    ours = shown_number(row.get("ours", ""), paper)
    return ours, "" if bound else shown_number(row.get("deviation", ""), paper)


def counted(rows=None) -> list[dict]:
    """The ledger rows that the tallies count: all but the :data:`DERIVED` ones."""
    rows = load() if rows is None else rows
    return [r for r in rows if classify(r) != DERIVED]


def category_counts(rows=None) -> dict[str, int]:
    """Number of :func:`counted` ledger rows per :data:`CATEGORIES` entry (zeros included)."""
    counts = {c: 0 for c in CATEGORIES}
    for r in counted(rows):
        counts[classify(r)] += 1
    return counts


# --- the ledger's text as the book shows it -------------------------------------------------
# The CSV keeps each row's text as the chapter recorded it, with code names, file paths and ASCII
# notation; :func:`in_words` and :func:`prose_html` rewrite it, by pattern, into the book's prose.

# the chapters' code name for the rounding of the benchmark lower bound (footnote 3), in words
# (the synthetic tables name the readings B(n), B(n − 1) and valid themselves)
_ROUNDING_WORDS = (("rounding='up'", "rounding up"),)
# a file: directories (capitalised words may hold spaces, as in the authors' "Data Dependent
# Noise/") and a name with a source or data extension
_FILE = (r"(?:(?:[A-Z][\w.-]*(?: [A-Z][\w.-]*)*|[\w.-]+)/)*[\w.-]+"
         r"\.(?:jl|py|cpp|hpp|json|csv|txt|md|ipynb|npz|npy|pkl|jld2|mat)\b")
_MODULE = r"\b(?:dpdro|repro)(?:\.\w+)+"
_IDENT = r"\b[A-Za-z][A-Za-z0-9]+_\w+\b"          # a code name: a word with an underscore in it
_GREEK = {"eps": "ε", "epsilon": "ε", "delta": "δ", "beta": "β", "sigma": "σ", "alpha": "α",
          "gamma": "γ", "pi": "π", "Phi": "Φ", "Delta": "Δ"}
_PROSE = (
    # file paths: the authors' files are "the authors' code"; ours are left out (the CSV has them)
    (rf"\bauthors' {_FILE}", "authors' code"),
    (rf" \({_FILE}\)", ""),
    (rf",? (?:from|of|in) {_FILE}", ""),
    (_FILE, ""),
    # module and function names of our package and of the authors' code
    (rf"\bthe default {_MODULE}", "the default call of our package"),
    (_MODULE, "our package"),
    (rf"\bauthors' {_IDENT} ", "authors' "),
    (_IDENT, "our code"),
    # notation
    (r"\b(" + "|".join(_GREEK) + r")\b", lambda m: _GREEK[m.group(1)]),
    (r"(?<![^\W\d_])([^\W\d_])'(?![^\W\d_])", "\\1′"),   # P' → P′ (not "authors'", "'up'")
    (r"<=", "≤"), (r">=", "≥"), (r"!=", "≠"), (r" - ", " − "),
    (r"(?<=\w)\*(?=\w)", "·"), (r"\bsqrt\(", "√("), (r"(?<=\w) x (?=\d)", " × "),
    (r"(?<![\w.])-(?=\d)", "−"),                           # a negative number: [-2, 2]
    (r"(?<=\d)-(?=\d)", "–"),                               # a range: 0.56-0.97 is 0.56–0.97
    (r"\bl([12])\b", "ℓ\\1"), (r"\bsims\b", "simulations"),
    (r"\bB(UB|LB)\b", "B_\\1"),                         # the paper's BUB is B_UB (a subscript)
    # what the removals leave behind
    (r" {2,}", " "), (r" ([,;)])", "\\1"), (r" \.(?!\.)", "."), (r"\( ", "("),
)


def in_words(text: str) -> str:
    """A ledger text (location, quantity or explanation) as the book's prose.

    The rounding option of the benchmark lower bound becomes words (*rounding up*);
    file paths and the names of modules and functions are dropped or named in words (*the authors'
    code*, *our package*); ASCII notation becomes the paper's (``eps = 5, delta <= 0.2`` is
    ε = 5, δ ≤ 0.2; ``P' - beta/2`` is P′ − β/2; ``100 x 1000`` is 100 × 1000). The rows in
    ``results/ledger.csv`` keep their recorded text.
    """
    for code, words in _ROUNDING_WORDS:
        text = text.replace(code, words)
    for pattern, repl in _PROSE:
        text = re.sub(pattern, repl, text)
    return text


def prose_html(text: str) -> str:
    """:func:`in_words` as escaped HTML, with subscripts and superscripts set as such
    (``D'_R`` is D′<sub>R</sub>, ``r_min`` r<sub>min</sub>, ``e^−ε`` e<sup>−ε</sup>)."""
    out = html.escape(in_words(text))
    out = re.sub(r"(?<![\w′])([^\W\d_]′?)_(\w+)", r"\1<sub>\2</sub>", out)
    return re.sub(r"\^(\([^()]*\)|[−-]?\w+)", r"<sup>\1</sup>", out)


def sentence(text: str) -> str:
    """An explanation as a sentence: its first letter capitalised where it is a Latin letter; one
    that starts with a symbol (ε, ℓ, δ) keeps it, since a capital Epsilon would read as E."""
    first = text[:1]
    return first.upper() + text[1:] if first.isascii() and first.isalpha() else text


# --- an opening shared by many explanations, printed once ----------------------------------
def _lead(text: str) -> str:
    """The first clause of an explanation: up to the first ': ' or '; '."""
    return re.split(r": |; ", text, maxsplit=1)[0]


def shared_opening(texts, least: int = 5) -> str:
    """The opening that at least ``least`` of ``texts`` (explanations) share, so that a page can
    print it once above them: the common prefix of those that begin with the most frequent first
    clause, cut after a ': ', '; ', ', ' or before a ' (', at the last such place after which no
    text begins with a bare number (``""`` if no clause is shared that often)."""
    leads = [_lead(t) for t in texts if t.strip()]
    if not leads:
        return ""
    top, n = max(((x, leads.count(x)) for x in dict.fromkeys(leads)), key=lambda p: p[1])
    if n < least:
        return ""
    group = [t + "; " for t in texts if _lead(t) == top]  # "; ": a text may end there
    common = os.path.commonprefix(group)
    cuts = sorted([m.end() for m in re.finditer(r": |; |, ", common)]
                  + [m.start() for m in re.finditer(r" \(", common)], reverse=True)
    for cut in cuts:
        if cut and not any(re.match(r"[−-]?\d", t[cut:]) for t in group):
            return common[:cut]
    return ""


def after_opening(text: str, opening: str) -> str | None:
    """The rest of ``text`` after the :func:`shared_opening` ``opening``, marked '…' (``None``
    where it does not begin with it)."""
    if not opening or not (text + "; ").startswith(opening):
        return None
    return ("… " + (text + "; ")[len(opening):].removesuffix("; ").lstrip()).rstrip()
