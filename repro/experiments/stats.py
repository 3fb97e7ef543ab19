"""Splits, seeds and the statistics of Tables 2 and 3: Imp, the paired t-test, confidence
intervals, the table row of a run and the ranking of the mechanisms."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

__all__ = [
    "MECHANISM_ORDER",
    "dp_ranking",
    "improvement",
    "paired_difference_ci",
    "paired_one_sided_ttest",
    "split_indices",
    "split_seeds",
    "summarize",
]

MECHANISM_ORDER = ("GN", "AG", "TLN", "OPT", "(OPT)")


def split_indices(
    n: int, rng: np.random.Generator, test_fraction: float = 0.2
) -> tuple[np.ndarray, np.ndarray]:
    """A random train/test split: ``floor(test_fraction · n)`` test rows (as the authors'
    ``train_test.jl``)."""
    perm = rng.permutation(n)
    n_test = int(math.floor(test_fraction * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def split_seeds(seed: int, split: int) -> tuple[np.random.SeedSequence, ...]:
    """Per split: the split permutation, the simulation randomness (shared by all mechanisms) and
    the initial points and coordinate orders of the coordinate descent."""
    return tuple(np.random.SeedSequence([seed, split]).spawn(3))


def paired_one_sided_ttest(ours: np.ndarray, other: np.ndarray) -> tuple[float, float]:
    """One-sided paired t-test of H0: mean(ours − other) ≥ 0 against H1: ours has the smaller error.

    The GitHub appendix ("Statistical significance"): per split the errors are averaged over the
    simulations; the differences ``ours − other`` over the K splits give t = mean/(sd/√K) (sd with
    K − 1 degrees of freedom) and the p-value is the t(K − 1) cumulative probability at t.
    Returns ``(t, p)``; ``(nan, nan)`` for fewer than two splits, and t = ∓inf (p = 0 or 1) when
    all differences are equal and non-zero.
    """
    d = np.asarray(ours, dtype=float) - np.asarray(other, dtype=float)
    k = d.size
    if k < 2:
        return math.nan, math.nan
    m, s = float(d.mean()), float(d.std(ddof=1))
    if s == 0.0:
        if m == 0.0:
            return math.nan, math.nan
        return (-math.inf, 0.0) if m < 0 else (math.inf, 1.0)
    t = m / (s / math.sqrt(k))
    return t, float(stats.t.cdf(t, k - 1))


def paired_difference_ci(
    ours: np.ndarray, other: np.ndarray, level: float = 0.95
) -> tuple[float, float, float]:
    """The mean of the paired differences ``ours − other`` over the splits and its two-sided
    Student-t confidence interval at ``level``: ``(mean, low, high)`` (the same per-split
    differences as :func:`paired_one_sided_ttest`; ``low = high = mean`` when they are all equal,
    nan bounds for fewer than two splits)."""
    d = np.asarray(ours, dtype=float) - np.asarray(other, dtype=float)
    k = d.size
    m = float(d.mean()) if k else math.nan
    if k < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2.0, k - 1)) * float(d.std(ddof=1)) / math.sqrt(k)
    return m, m - half, m + half


def improvement(best_literature: float, ours: float, nonprivate: float) -> float:
    """'Imp' of Tables 2 and 3: the share (%) of the gap between the best literature mechanism and
    the non-private method that ours closes, 100·(best − ours)/(best − non-private) (nan if the gap
    is 0)."""
    gap = best_literature - nonprivate
    return 100.0 * (best_literature - ours) / gap if gap != 0 else math.nan


def summarize(
    res: Mapping,
    *,
    baseline: str,
    ours: str = "OPT",
    literature: Sequence[str] = ("GN", "AG", "TLN"),
    dd: str = "(OPT)",
) -> dict:
    """Table row from :func:`~repro.experiments.run_naive_bayes` / ``run_pcd`` output: mean errors
    (%), Imp (%), the best literature mechanism, and the one-sided paired t-test of ``ours``
    against it (per sample); if the data-dependent column ``dd`` is present, also its Imp and
    t-test (``imp_dd``, ``t_dd``, ``p_dd``)."""
    out = {}
    for side in ("in", "out"):
        errs = {m: 100.0 * float(np.mean(v)) for m, v in res[side].items()}
        row = dict(errors=errs)
        if ours in errs:
            lit = [m for m in literature if m in errs]
            best = min(lit, key=lambda m: errs[m])
            row["best_literature"] = best
            row["imp"] = improvement(errs[best], errs[ours], errs[baseline])
            t, p = paired_one_sided_ttest(res[side][ours], res[side][best])
            row["t"], row["p"] = t, p
            if dd in errs:  # Imp and t-test against the same best literature mechanism
                row["imp_dd"] = improvement(errs[best], errs[dd], errs[baseline])
                row["t_dd"], row["p_dd"] = paired_one_sided_ttest(res[side][dd], res[side][best])
        out[side] = row
    return out


def dp_ranking(
    errors: Mapping[str, float], mechanisms: Sequence[str] = MECHANISM_ORDER
) -> list[str]:
    """The DP mechanisms ordered from the smallest error to the largest (stable for ties)."""
    return sorted([m for m in mechanisms if m in errors], key=lambda m: errors[m])
