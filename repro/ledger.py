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
    the number cannot be recomputed offline (e.g. a dataset that no registry ships); ``ours`` is empty.
"""

from __future__ import annotations

import contextlib
import csv
import math
from dataclasses import dataclass
from pathlib import Path

from .paths import LEDGER as LEDGER_PATH

__all__ = ["COLUMNS", "STATUSES", "LEDGER_PATH", "Row", "compare", "record", "load", "status_counts"]

COLUMNS = ("id", "chapter", "location", "quantity", "paper", "ours", "deviation", "status", "scale", "explanation")
STATUSES = ("matches", "differs", "not reproducible here")
SCALES = ("ci", "paper", "exact")


@dataclass(frozen=True)
class Row:
    """One reproduced number.

    id : unique key, e.g. ``"table4/l1/eps=1/delta=0.2"``.
    chapter : the notebook that computes it (file stem, e.g. ``"22_tables"``).
    location : where it is in the paper, e.g. ``"Table 4, row ε=1, column δ=0.2"``.
    quantity : what it is, e.g. ``"suboptimality of truncated Laplace (%)"``.
    paper, ours : the paper's value and ours (``ours`` is ``None`` when not reproducible here).
    status : one of :data:`STATUSES`.
    scale : ``"ci"`` (the notebook's quick default), ``"paper"`` (full scale, possibly loaded from
        ``results/``) or ``"exact"`` (no scale involved, e.g. a closed form).
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
        if self.status not in STATUSES:
            raise ValueError(f"ledger status must be one of {STATUSES}, got {self.status!r} (id {self.id!r})")
        if self.scale not in SCALES:
            raise ValueError(f"ledger scale must be one of {SCALES}, got {self.scale!r} (id {self.id!r})")
        if self.status != "matches" and not self.explanation.strip():
            raise ValueError(f"ledger row {self.id!r} has status {self.status!r} but no explanation")
        if self.status == "not reproducible here" and self.ours is not None:
            raise ValueError(f"ledger row {self.id!r} is 'not reproducible here' but has a value ours={self.ours!r}")

    def as_dict(self) -> dict[str, str]:
        dev = self.deviation
        if dev is None and _is_number(self.paper) and _is_number(self.ours):
            dev = float(self.ours) - float(self.paper)
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
    """Number of ledger rows per status (every status listed, zeros included)."""
    rows = load() if rows is None else rows
    counts = {s: 0 for s in STATUSES}
    for r in rows:
        counts[r["status"]] += 1
    return counts
