r"""DP naïve Bayes (Section 5.2, Table 2).

The class counts n_{y=c}, the class-conditional level counts n_{x_v=χ ∧ y=c} (sensitivity 1) and
the class-conditional means μ_{x_v|y=c} and standard deviations σ_{x_v|y=c} of the numerical
features (sensitivities (u_v − l_v)/n_{y=c} and (u_v − l_v)/√n_{y=c}) are perturbed one by one,
and the perturbed statistics classify (post-processing). Every statistic gets (ε, δ) = (1, 0.1) on
its own, as in the paper and the authors' code: the classifier as a whole is *not* (1, 0.1)-DP.

The paper is followed where it is explicit; the authors' public Julia code (selvi-aras/DP-via-DRO,
``ML Algorithms Julia/``) differs in places, available through :meth:`NBSettings.authors`:

* sensitivities: the paper's (u_v − l_v)/n_{y=c} and (u_v − l_v)/√n_{y=c} with the training set's
  class counts; the authors round them **up to the next integer** (``ceil``) and use the full
  dataset's class counts (their comment: "we actually need widths(df_cont_train, prior_counts)");
* noisy standard deviations must be positive: the paper does not say how; the authors floor them
  (and the non-private ones) at **1** in the feature's units; by default we floor at 1% of the
  feature range;
* every level count is perturbed, zeros included (the set of levels is public); the authors
  perturb only the levels seen in the training set (skipping zeros reveals them), and score unseen
  levels as probability 0. Noisy counts are floored at 1e-6 as in the authors' code;
* bounds l_v, u_v: the smallest and largest value of the column in the full dataset (the
  appendix).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..datasets import Dataset
from .mechanisms import NonPrivate, call_mechanism
from .stats import split_indices, split_seeds

__all__ = [
    "NBSettings",
    "NBStats",
    "nb_errors",
    "nb_noisy_stats",
    "nb_sensitivities",
    "nb_statistics",
    "run_naive_bayes",
]


@dataclass(frozen=True)
class NBSettings:
    """Choices of the DP naïve Bayes experiment (module docstring). Default: our reading of the
    paper."""

    epsilon: float = 1.0
    delta: float = 0.1
    round_up_sensitivities: bool = False  # authors: ceil
    class_counts: str = "train"  # "train" (paper) or "full" (authors) for the sensitivities
    sd_floor: float = 0.01  # floor of noisy (and non-private) standard deviations ...
    sd_floor_relative: bool = (
        True  # ... as a fraction of (u_v - l_v) (True) or in feature units (False)
    )
    count_floor: float = 1e-6  # floor of noisy counts (authors: 1e-6)
    perturb_zero_counts: bool = True  # authors: False (only levels seen in training are perturbed)

    @classmethod
    def authors(cls, **kw) -> NBSettings:
        """The settings of the authors' Julia code (``sensitivities.jl``, ``NB.jl``)."""
        base = dict(
            round_up_sensitivities=True,
            class_counts="full",
            sd_floor=1.0,
            sd_floor_relative=False,
            perturb_zero_counts=False,
        )
        base.update(kw)
        return cls(**base)


@dataclass(frozen=True)
class NBStats:
    """Naïve Bayes sufficient statistics of a training set.

    prior (C,), counts (L, C) over all levels of all categorical features stacked (``offsets[v]`` is
    the first row of feature v), means and sds (V, C) (population standard deviation, as the
    authors' ``std(..., corrected=false)``).
    """

    prior: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    sds: np.ndarray
    offsets: np.ndarray


def nb_statistics(ds: Dataset, rows: np.ndarray) -> NBStats:
    """The statistics of Section 5.2 on ``rows`` of ``ds``."""
    y = ds.y[rows]
    C = ds.n_classes
    prior = np.bincount(y, minlength=C).astype(float)
    sizes = np.array([len(lv) for lv in ds.cat_levels], dtype=int)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    L = int(offsets[-1])
    counts = np.zeros((L, C))
    if ds.n_cat:
        flat = ds.X_cat[rows] + offsets[:-1]  # (n, V_cat) global level index
        np.add.at(counts, (flat.ravel(), np.repeat(y, ds.n_cat)), 1.0)
    V = ds.n_num
    means = np.zeros((V, C))
    sds = np.zeros((V, C))
    Xn = ds.X_num[rows]
    for c in range(C):
        sel = Xn[y == c]
        if sel.shape[0]:
            means[:, c] = sel.mean(axis=0)
            sds[:, c] = sel.std(axis=0)
    return NBStats(prior, counts, means, sds, offsets)


def nb_sensitivities(
    ds: Dataset, train_prior: np.ndarray, settings: NBSettings
) -> tuple[np.ndarray, np.ndarray]:
    """Sensitivities (V, C) of the class-conditional means (u−l)/n_c and standard deviations
    (u−l)/√n_c."""
    width = ds.num_bounds[:, 1] - ds.num_bounds[:, 0]
    if settings.class_counts == "train":
        nc = np.asarray(train_prior, dtype=float)
    elif settings.class_counts == "full":
        nc = np.bincount(ds.y, minlength=ds.n_classes).astype(float)
    else:
        raise ValueError(f"class_counts must be 'train' or 'full', got {settings.class_counts!r}")
    nc = np.maximum(nc, 1.0)
    s_mean = width[:, None] / nc[None, :]
    s_sd = width[:, None] / np.sqrt(nc)[None, :]
    if settings.round_up_sensitivities:
        s_mean, s_sd = np.ceil(s_mean), np.ceil(s_sd)
    return s_mean, s_sd


def _sd_floor(ds: Dataset, settings: NBSettings) -> np.ndarray:
    width = ds.num_bounds[:, 1] - ds.num_bounds[:, 0]
    if settings.sd_floor_relative:
        return np.maximum(settings.sd_floor * width, 1e-12)[:, None]
    return np.full((ds.n_num, 1), float(settings.sd_floor))


def nb_noisy_stats(
    ds: Dataset,
    st: NBStats,
    mech: Callable,
    n_sims: int,
    rng: np.random.Generator,
    settings: NBSettings,
) -> dict[str, np.ndarray]:
    """``n_sims`` perturbed copies of the statistics: prior (S, C), counts (S, L, C), means/sds (S,
    V, C).

    One uniform stream per statistic type, drawn in a fixed order (prior, counts, means, sds), so
    that identically seeded ``rng`` give every mechanism the same uniforms (common random numbers).
    Noisy counts are floored at ``count_floor`` and noisy standard deviations at the sd floor
    (post-processing). Zero counts are perturbed unless ``settings.perturb_zero_counts`` is False,
    in which case they stay 0. Mechanisms with ``needs_range`` (the data-dependent (OPT)) also get
    the range Φ of each statistic: [0, n] for counts (n the training-set size), [l_v, u_v] for
    means, [0, (u_v − l_v)/2] for the population standard deviations.
    """
    S = int(n_sims)
    s_mean, s_sd = nb_sensitivities(ds, st.prior, settings)
    n = float(st.prior.sum())  # public training-set size: counts lie in [0, n]
    lo, hi = (
        ds.num_bounds[:, :1],
        ds.num_bounds[:, 1:],
    )  # (V, 1): means in [l_v, u_v], sds in [0, (u_v - l_v)/2]
    prior = call_mechanism(mech, np.broadcast_to(st.prior, (S,) + st.prior.shape), 1.0, rng, 0.0, n)
    counts = call_mechanism(
        mech, np.broadcast_to(st.counts, (S,) + st.counts.shape), 1.0, rng, 0.0, n
    )
    means = call_mechanism(
        mech, np.broadcast_to(st.means, (S,) + st.means.shape), s_mean, rng, lo, hi
    )
    sds = call_mechanism(
        mech, np.broadcast_to(st.sds, (S,) + st.sds.shape), s_sd, rng, 0.0, (hi - lo) / 2.0
    )
    floor = settings.count_floor
    prior = np.maximum(prior, floor)
    counts = np.maximum(counts, floor)
    if not settings.perturb_zero_counts:
        counts = np.where(st.counts[None] > 0, counts, 0.0)
    sds = np.maximum(sds, _sd_floor(ds, settings)[None])
    return dict(prior=prior, counts=counts, means=means, sds=sds)


def _nb_onehot(ds: Dataset, rows: np.ndarray, offsets: np.ndarray):
    n = rows.size
    if not ds.n_cat:
        return None
    flat = (ds.X_cat[rows] + offsets[:-1]).ravel()
    r = np.repeat(np.arange(n), ds.n_cat)
    return sparse.csr_matrix((np.ones(flat.size), (r, flat)), shape=(n, int(offsets[-1])))


def nb_errors(
    ds: Dataset,
    rows: np.ndarray,
    noisy: Mapping[str, np.ndarray],
    *,
    max_block_cells: int = 4_000_000,
) -> np.ndarray:
    """Misclassification rate (S,) on ``rows`` of each of the S naïve Bayes classifiers in
    ``noisy``.

    Score of class c: log ñ_c + Σ_v log(ñ_{v,x_v,c}/ñ_c) + Σ_v log N(x_v; μ̃_{v,c}, σ̃²_{v,c}); the
    Gaussian part is expanded into matrix products (x² · (−1/2σ²) + x · μ/σ² − μ²/2σ² − log σ), the
    categorical part is a sparse one-hot product. A zero count (when zeros are not perturbed) gives
    score −inf as in the authors' code; ties go to the first class. Simulations are processed in
    blocks of at most ``max_block_cells / (n·C)`` at a time (memory).
    """
    prior, counts, means, sds = noisy["prior"], noisy["counts"], noisy["means"], noisy["sds"]
    S, C = prior.shape
    offsets = np.concatenate(([0], np.cumsum([len(lv) for lv in ds.cat_levels]))).astype(int)
    A = _nb_onehot(ds, rows, offsets)
    Xn = ds.X_num[rows]
    y = ds.y[rows]
    n = rows.size
    block = max(1, int(max_block_cells // max(1, n * C)))
    errs = np.empty(S)
    with np.errstate(divide="ignore"):
        for s0 in range(0, S, block):
            sl = slice(s0, min(S, s0 + block))
            b = sl.stop - sl.start
            logp = np.log(prior[sl])  # (b, C)
            score = np.broadcast_to((1 - ds.n_cat) * logp[:, None, :], (b, n, C)).copy()
            if A is not None:
                logc = np.log(counts[sl])  # (b, L, C)
                part = A @ logc.transpose(1, 0, 2).reshape(A.shape[1], b * C)  # (n, b*C)
                score += np.asarray(part).reshape(n, b, C).transpose(1, 0, 2)
            if ds.n_num:
                mu, sd = means[sl], sds[sl]  # (b, V, C)
                prec = 1.0 / (sd * sd)
                Q = (-0.5 * prec).transpose(1, 0, 2).reshape(ds.n_num, b * C)
                P = (mu * prec).transpose(1, 0, 2).reshape(ds.n_num, b * C)
                R = np.sum(-0.5 * mu * mu * prec - np.log(sd), axis=1)  # (b, C)
                g = (Xn * Xn) @ Q + Xn @ P  # (n, b*C)
                score += g.reshape(n, b, C).transpose(1, 0, 2) + R[:, None, :]
            score = np.where(np.isnan(score), -np.inf, score)
            pred = np.argmax(score, axis=2)  # (b, n)
            errs[sl] = np.mean(pred != y[None, :], axis=1)
    return errs


def run_naive_bayes(
    ds: Dataset,
    mechanisms: Mapping[str, Callable],
    *,
    n_splits: int,
    n_sims: int,
    seed: int = 0,
    settings: NBSettings = NBSettings(),
    baseline: bool = True,
    first_split: int = 0,
) -> dict:
    """DP naïve Bayes on ``n_splits`` random 80/20 splits × ``n_sims`` noise simulations per
    mechanism.

    Returns ``{"in": {name: (n_splits,)}, "out": {...}}``: per split, the error averaged over the
    simulations; ``"NB"`` is the non-private classifier (same floors). Seeds: the split and the
    noise of split k come from ``SeedSequence([seed, k])``; every mechanism gets the same noise
    seed, so a mechanism's errors do not depend on which other mechanisms are run with it
    (``baseline=False`` skips NB, e.g. to add one column to a stored run). ``first_split``: run the
    splits ``first_split, …, first_split + n_splits − 1`` (a chunk of a larger run: splits are
    independent, so chunks concatenate to the whole run).
    """
    extra = [("NB", NonPrivate())] if baseline else []
    res = {
        "in": {m: np.empty(n_splits) for m in [*mechanisms, *dict(extra)]},
        "out": {m: np.empty(n_splits) for m in [*mechanisms, *dict(extra)]},
    }
    for i in range(n_splits):
        k = first_split + i
        s_split, s_noise, _ = split_seeds(seed, k)
        train, test = split_indices(ds.n, np.random.default_rng(s_split))
        st = nb_statistics(ds, train)
        for name, mech in [*mechanisms.items(), *extra]:
            sims = 1 if name == "NB" else n_sims
            noisy = nb_noisy_stats(ds, st, mech, sims, np.random.default_rng(s_noise), settings)
            res["in"][name][i] = nb_errors(ds, train, noisy).mean()
            res["out"][name][i] = nb_errors(ds, test, noisy).mean()
    return res
